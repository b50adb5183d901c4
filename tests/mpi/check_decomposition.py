#!/usr/bin/env python3
"""Decomposition checks of halomd under MPI (standard library only).

Usage: check_decomposition.py TEST MPIEXEC HALOMD DATA WORKDIR
  invariance   `halomd eval` on 1, 2, 3, 4 and 8 ranks (automatic and forced grids): energies,
               atomic energies, forces and virial equal to 1 rank within 1e-12 relative, for a
               se_e2_a and a DPA-1 model, orthorhombic and triclinic cells.
  trajectory   a hot run long enough for atoms to cross subdomain boundaries many times:
               4 ranks keep every global id and follow the 1-rank trajectory within round-off
               growth.
  skin         with nstlist set, an atom that moves more than half the buffer between updates
               stops the run with a message naming the step, the atom and the distance.
  balance      a system whose atoms fill half the cell, split in two along the empty
               direction: without load balancing one rank idles (imbalance near 100%); with
               dlb = yes the boundary moves until the imbalance of the last interval is small.
  continuation a 4-rank run continued from a checkpoint at a step that is not a list step
               repeats the uninterrupted 4-rank run bit for bit (v-rescale, Langevin).
  replicated   dd-mode = replicated (all-gathered positions, 2 x cut-off halo evaluated as
               full atoms, all-reduced forces) gives the forces, energy and trajectory of halo
               mode, on 1, 2 and 4 ranks.
"""
import json
import os
import subprocess
import sys

MPI_FLAGS = ["--oversubscribe", "--allow-run-as-root"]
ENV = dict(os.environ, OMP_NUM_THREADS="1")


def check(cond, msg):
    print(("ok   " if cond else "FAIL ") + msg)
    return cond


def flat(v):
    if isinstance(v, list):
        out = []
        for x in v:
            out.extend(flat(x))
        return out
    return [v]


def rel(a, b):
    a, b = flat(a), flat(b)
    return max(abs(x - y) for x, y in zip(a, b)) / (max(abs(y) for y in b) or 1.0)


def mpirun(mpiexec, n, args, cwd, expect=0):
    cmd = [mpiexec] + MPI_FLAGS + ["-np", str(n)] + args
    res = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=ENV)
    if res.returncode != expect:
        raise SystemExit(f"{' '.join(cmd)}: exit {res.returncode}, expected {expect}\n"
                         f"{res.stdout}\n{res.stderr}")
    return res


def invariance(mpiexec, halomd, data, work):
    os.makedirs(work, exist_ok=True)
    cases = [("se_e2_a_water_one_side.dp", "water_192_triclinic.xyz"),
             ("se_e2_a_water_two_side.dp", "water_192_ortho.xyz"),
             ("se_atten_v2_small.dp", "water_96_small.xyz")]
    layouts = [(1, []), (2, []), (3, []), (4, []), (8, []), (4, ["-dd", "4", "1", "1"]),
               (4, ["-dd", "1", "2", "2"]), (8, ["-dd", "2", "2", "2"])]
    ok = True
    for model, conf in cases:
        ref = None
        for n, extra in layouts:
            out = os.path.join(work, f"eval_{n}_{'x'.join(extra[1:]) or 'auto'}.json")
            if os.path.exists(out):
                os.remove(out)
            mpirun(mpiexec, n, [halomd, "eval", "-m", f"{data}/models/{model}", "-c",
                                f"{data}/structures/{conf}", "-o", out] + extra, work)
            frame = json.load(open(out))["frames"][0]
            if ref is None:
                ref = frame
                continue
            worst = max(rel(frame[k], ref[k]) for k in ("energy", "atom_energy", "force", "virial"))
            ok &= check(worst <= 1e-12, f"{os.path.basename(model)} on {conf}, {n} ranks "
                        f"{' '.join(extra) or '(auto grid)'}: max rel diff {worst:.2e}")
    return ok


def read_xyz(path):
    frames, lines = [], open(path).read().splitlines()
    k = 0
    while k < len(lines):
        n = int(lines[k])
        frames.append([[float(v) for v in line.split()[1:4]] for line in lines[k + 2:k + 2 + n]])
        k += 2 + n
    return frames


def trajectory(mpiexec, halomd, data, work):
    """Ideal gas (no forces, so the trajectory is exact arithmetic on both sides) at a high
    temperature for many boundary crossings, then water with forces for round-off growth."""
    os.makedirs(work, exist_ok=True)
    ok = True
    common = ["run", "-set", "gen-vel=yes", "-set", "gen-seed=9", "-set", "nstenergy=50",
              "-set", "nstcalcenergy=50", "-set", "nstlog=500"]
    gas = common + ["-m", f"{data}/derived/ideal_gas.dp", "-c",
                    f"{data}/structures/water_192_ortho.xyz", "-set", "gen-temp=20000",
                    "-set", "dt=0.001", "-nsteps", "1000", "-set", "nstxout=500"]
    runs = {}
    for n in (1, 4):
        res = mpirun(mpiexec, n, [halomd] + gas + ["-deffnm", f"gas{n}"], work)
        runs[n] = read_xyz(os.path.join(work, f"gas{n}.xyz"))
        log = open(os.path.join(work, f"gas{n}.log")).read()
        ok &= check("neighbour-list builds" in res.stdout, f"ideal gas on {n} ranks ran")
    last1, last4 = runs[1][-1], runs[4][-1]
    ok &= check(len(last4) == 192 and all(len(p) == 3 for p in last4),
                "4 ranks: all 192 atoms present in the final frame")
    diff = max(abs(a - b) for p, q in zip(last1, last4) for a, b in zip(p, q))
    ok &= check(diff < 1e-9, f"ideal gas after 1 ps at 20000 K: positions equal to 1 rank "
                f"within {diff:.1e} Å")
    water = common + ["-m", f"{data}/models/se_e2_a_water_one_side.dp", "-c",
                      f"{data}/structures/water_192_ortho.xyz", "-set", "dt=0.0002",
                      "-nsteps", "100", "-set", "nstxout=50", "-set", "tcoupl=langevin",
                      "-set", "ref-t=300", "-set", "ld-seed=5"]
    for n in (1, 4):
        mpirun(mpiexec, n, [halomd] + water + ["-deffnm", f"water{n}"], work)
        runs[n] = read_xyz(os.path.join(work, f"water{n}.xyz"))
    for f in range(len(runs[1])):
        diff = max(abs(a - b) for p, q in zip(runs[1][f], runs[4][f]) for a, b in zip(p, q))
        ok &= check(diff < 1e-8, f"water, Langevin, frame {f}: 4 ranks vs 1 within {diff:.1e} Å")
    return ok


def skin(mpiexec, halomd, data, work):
    os.makedirs(work, exist_ok=True)
    res = mpirun(mpiexec, 2, [halomd, "run", "-m", f"{data}/derived/ideal_gas.dp", "-c",
                              f"{data}/structures/water_192_ortho.xyz", "-set", "gen-vel=yes",
                              "-set", "gen-temp=1000000", "-set", "dt=0.001", "-set",
                              "nstlist=100", "-nsteps", "200"], work, expect=70)
    msg = res.stderr
    return check("step" in msg and "atom" in msg and "Verlet buffer" in msg and
                 "verlet-buffer" in msg, "too fast an atom stops the run: " + msg.strip()[:200])


def read_last_forces(path):
    lines = open(path).read().splitlines()
    n = int(lines[0])
    k = 0
    while k + 2 + n < len(lines):
        k += 2 + n
    header = lines[k + 1]
    energy = float(header.split("energy=")[1].split()[0])
    return energy, [[float(v) for v in line.split()[1:7]] for line in lines[k + 2:k + 2 + n]]


def replicated(mpiexec, halomd, data, work):
    os.makedirs(work, exist_ok=True)
    ok = True
    # small models: replicated mode evaluates the 2 x cut-off halo, here ~50x the atoms
    for model, conf in (("deeppot.dp", "water_192_triclinic.xyz"),
                        ("se_atten_v2_small.dp", "water_96_small.xyz")):
        args = ["run", "-m", f"{data}/models/{model}", "-c", f"{data}/structures/{conf}",
                "-nsteps", "10", "-set", "dt=0.0002", "-set", "gen-vel=yes", "-set",
                "gen-seed=2", "-set", "nstxout=10"]
        ref = None
        for mode in ("halo", "replicated"):
            for n in (1, 2, 4):
                name = f"{mode}{n}"
                mpirun(mpiexec, n, [halomd] + args + ["-set", f"dd-mode={mode}", "-deffnm", name],
                       work)
                e, rows = read_last_forces(os.path.join(work, name + ".xyz"))
                if ref is None:
                    ref = (e, rows)
                    continue
                d = max(abs(a - b) for p, q in zip(rows, ref[1]) for a, b in zip(p, q))
                ok &= check(d < 1e-10 and abs(e - ref[0]) <= 1e-12 * abs(ref[0]),
                            f"{os.path.basename(model)}: {mode} on {n} ranks after 10 steps: "
                            f"positions and forces within {d:.1e} of halo mode on 1 rank")
    return ok


def balance(mpiexec, halomd, data, work):
    os.makedirs(work, exist_ok=True)
    # water_192_ortho with its cell doubled along c: the atoms fill the lower half
    lines = open(f"{data}/structures/water_192_ortho.xyz").read().splitlines()
    head = lines[1]
    lat = head.split('Lattice="')[1].split('"')[0].split()
    lat[8] = repr(2 * float(lat[8]))
    lines[1] = head.replace(head.split('Lattice="')[1].split('"')[0], " ".join(lat))
    conf = os.path.join(work, "half_empty.xyz")
    open(conf, "w").write("\n".join(lines[:194]) + "\n")
    ok = True
    result = {}
    for dlb in ("no", "yes"):
        mpirun(mpiexec, 2, [halomd, "run", "-m", f"{data}/models/se_e2_a_water_one_side.dp", "-c",
                            conf, "-dd", "1", "1", "2", "-nsteps", "200", "-set", "dt=0.0002",
                            "-set", "nstlist=10", "-set", f"dlb={dlb}", "-set", "nstenergy=0",
                            "-set", "nstlog=0", "-deffnm", f"dlb_{dlb}"], work)
        result[dlb] = json.load(open(os.path.join(work, f"dlb_{dlb}.perf.json")))["decomposition"]
        print(dlb, result[dlb])
    ok &= check(result["no"]["imbalance_last"] > 0.5,
                f"dlb = no: imbalance {100 * result['no']['imbalance_last']:.0f}% (one rank idles)")
    ok &= check(result["yes"]["imbalance_last"] < 0.25 and result["yes"]["dlb_moves"] > 0,
                f"dlb = yes: imbalance of the last interval "
                f"{100 * result['yes']['imbalance_last']:.0f}% after "
                f"{result['yes']['dlb_moves']} moves")
    return ok


def continuation(mpiexec, halomd, data, work):
    """4 ranks, the trained water model, the list updated when needed and the checkpoint at a
    step that is not a list step: 30 steps equal 13 + 17 (v-rescale) and 17 + 13 (Langevin)
    bit for bit (dlb = no: balancing follows the clock, so it would differ between runs)."""
    os.makedirs(work, exist_ok=True)
    base = [halomd, "run", "-backend", "cpu", "-m",
            f"{data}/../../examples/water/water_trained.dp", "-c",
            f"{data}/../../examples/water/water_192.gro"]
    for kv in ("gen-vel=yes", "gen-seed=5", "gen-temp=600", "ref-t=300", "ld-seed=3",
               "nstenergy=1", "nstcalcenergy=1", "verlet-buffer=0.2", "dt=0.001", "dlb=no"):
        base += ["-set", kv]
    ok = True
    for tc, split in (("v-rescale", 13), ("langevin", 17)):
        args = base + ["-set", f"tcoupl={tc}"]
        mpirun(mpiexec, 4, args + ["-nsteps", "30", "-deffnm", f"{tc}_whole"], work)
        mpirun(mpiexec, 4, args + ["-nsteps", str(split), "-deffnm", f"{tc}_1"], work)
        mpirun(mpiexec, 4, args + ["-nsteps", "30", "-cpi", f"{tc}_1.cpt", "-deffnm", f"{tc}_2"],
               work)
        whole = open(os.path.join(work, f"{tc}_whole.energy.csv")).read().splitlines()
        rest = open(os.path.join(work, f"{tc}_2.energy.csv")).read().splitlines()
        ok &= check(rest[1:] == whole[1 + split:], f"4 ranks, {tc}: continued at step {split} "
                    f"(not a list step), identical to the uninterrupted run")
    return ok


TESTS = {"balance": balance, "invariance": invariance, "trajectory": trajectory, "skin": skin,
         "replicated": replicated, "continuation": continuation}


def main(argv):
    if len(argv) != 6 or argv[1] not in TESTS:
        print(__doc__, file=sys.stderr)
        return 2
    return 0 if TESTS[argv[1]](*argv[2:]) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
