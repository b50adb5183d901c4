#!/usr/bin/env python3
"""Strong scaling of halomd's domain decomposition on this machine, halo mode against the
replicated baseline of arXiv 2604.07276, with the ghost-atom model of docs/performance.md.

Usage (from the repository root, after `make`):
    python3 bench/scaling/scaling.py [--ranks 1 2 4] [--steps 10] [--model M] [--conf C]

For each rank count and mode it runs `mpirun -np P halomd run` (one OpenMP thread per rank)
and reads <deffnm>.perf.json: time per step, force time (avg and max over ranks), home and
ghost atoms per rank. The model predicts the ghost counts and the evaluated atoms per rank from
the cell, the density and the cut-off (no fitted parameter). Results go to
bench/results/scaling_<date>_<commit>.json; a table is printed. Rank counts above the number
of cores oversubscribe them: their times are then not scaling figures (the record says so).
"""
import argparse
import datetime
import json
import math
import os
import platform
import subprocess
import sys
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout


def cell_of(conf):
    """Cell vectors (rows, Å) of a .gro or extended XYZ file."""
    lines = open(conf).read().splitlines()
    if conf.endswith(".gro"):
        v = [float(x) * 10 for x in lines[-1].split()]
        if len(v) == 3:
            return [[v[0], 0, 0], [0, v[1], 0], [0, 0, v[2]]]
        return [[v[0], v[3], v[4]], [v[5], v[1], v[6]], [v[7], v[8], v[2]]]
    lat = [float(x) for x in lines[1].split('Lattice="')[1].split('"')[0].split()]
    return [lat[0:3], lat[3:6], lat[6:9]]


def face_distances(h):
    def cross(a, b):
        return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
    vol = abs(sum(x * y for x, y in zip(h[0], cross(h[1], h[2]))))
    out = []
    for d in range(3):
        c = cross(h[(d + 1) % 3], h[(d + 2) % 3])
        out.append(vol / math.sqrt(sum(x * x for x in c)))
    return out, vol


def model_counts(face, vol, natoms, grid, rlist):
    """Ghost-atom model: a subdomain of thickness f_d / p_d along each vector gains a shell of
    width w on both sides; atoms are uniform at density natoms / vol. Halo mode: ghosts within
    w = rlist, only neighbours. Replicated: every atom within w = 2 rlist is a centre."""
    rho = natoms / vol
    home = natoms / (grid[0] * grid[1] * grid[2])
    def shell(w):
        v = 1.0
        for d in range(3):
            v *= face[d] / grid[d] + 2 * w
        return rho * v * (vol / (face[0] * face[1] * face[2]))
    return {"home": home, "halo_ghosts": shell(rlist) - home,
            "replicated_evaluated": shell(2 * rlist)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--model", default=os.path.join(ROOT, "examples", "water", "water.dp"))
    ap.add_argument("--conf", default=os.path.join(ROOT, "examples", "water", "water.gro"))
    ap.add_argument("--halomd", default=os.path.join(ROOT, "build", "halomd"))
    ap.add_argument("--modes", nargs="+", default=["halo", "replicated"])
    args = ap.parse_args()
    commit = sh(["git", "-C", ROOT, "describe", "--always", "--dirty", "--abbrev=12"]).strip()
    h = cell_of(args.conf)
    face, vol = face_distances(h)
    rows = []
    env = dict(os.environ, OMP_NUM_THREADS="1")
    with tempfile.TemporaryDirectory() as work:
        for mode in args.modes:
            for p in args.ranks:
                name = f"{mode}_{p}"
                sh(["mpirun", "--oversubscribe", "--allow-run-as-root", "-np", str(p),
                    args.halomd, "run", "-m", args.model, "-c", args.conf, "-deffnm", name,
                    "-nsteps", str(args.steps), "-set", "dt=0.0002", "-set", f"dd-mode={mode}",
                    "-set", "gen-vel=yes", "-set", "gen-seed=1", "-set", "nstenergy=0",
                    "-set", "nstlog=0", "-set", "dlb=no"], cwd=work, env=env)
                perf = json.load(open(os.path.join(work, name + ".perf.json")))
                dd = perf["decomposition"]
                rlist = float(perf["parameters"].get("rlist", "8") or 8)
                natoms = perf["system"]["natoms"]
                model = model_counts(face, vol, natoms, dd["grid"], rlist)
                force = perf["phases"]["Force"]
                rows.append({
                    "mode": mode, "ranks": p, "grid": dd["grid"], "natoms": natoms,
                    "step_s": perf["performance"]["wall_s"] / perf["system"]["nsteps"],
                    "force_s_per_step_avg": force["avg"] / perf["system"]["nsteps"],
                    "force_s_per_step_max": force["max"] / perf["system"]["nsteps"],
                    "halo_s_per_step_max": perf["phases"]["Halo"]["max"] / perf["system"]["nsteps"],
                    "home_avg": dd["home_avg"], "ghost_avg": dd["ghost_avg"],
                    "ghost_max": dd["ghost_max"], "model": model,
                    "oversubscribed": p > (os.cpu_count() or 1),
                })
    record = {
        "benchmark": "scaling",
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "commit": commit,
        "hardware": {"cpu": platform.processor() or "see /proc/cpuinfo",
                     "logical_cpus": os.cpu_count()},
        "system": {"structure": os.path.relpath(args.conf, ROOT),
                   "model": os.path.relpath(args.model, ROOT), "cell_face_distances_A": face},
        "command": "python3 bench/scaling/scaling.py " + " ".join(sys.argv[1:]),
        "results": rows,
    }
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    path = os.path.join(ROOT, "bench", "results",
                        f"scaling_{datetime.date.today().isoformat()}_{commit}.json")
    json.dump(record, open(path, "w"), indent=2)
    print(f"{'mode':>10} {'P':>3} {'grid':>9} {'step (s)':>9} {'force max':>10} "
          f"{'home':>6} {'ghosts':>7} {'model':>7} {'evaluated (model)':>18}")
    for r in rows:
        m = r["model"]
        ev = m["replicated_evaluated"] if r["mode"] == "replicated" else m["home"]
        g = "x".join(str(x) for x in r["grid"])
        print(f"{r['mode']:>10} {r['ranks']:>3} {g:>9} {r['step_s']:>9.3f} "
              f"{r['force_s_per_step_max']:>10.3f} {r['home_avg']:>6.0f} {r['ghost_avg']:>7.0f} "
              f"{m['halo_ghosts'] if r['mode'] == 'halo' else m['replicated_evaluated'] - m['home']:>7.0f} "
              f"{ev:>18.0f}" + ("  (oversubscribed)" if r["oversubscribed"] else ""))
    print("wrote", os.path.relpath(path, ROOT))


if __name__ == "__main__":
    main()
