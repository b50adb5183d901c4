#!/usr/bin/env python3
"""The GPU step on several ranks (label gpu; standard library only). Ranks share the GPUs there
are (all on one GPU on a one-GPU machine), each bound to GPU local-rank mod count.

Usage: check_multi.py TEST MPIEXEC HALOMD DATA WORKDIR [TRANSPORT]
  invariance   step 0 (the forces of the start) of `halomd run -backend cuda` on 1, 2, 3, 4
               and 8 ranks (automatic grids: slabs, 2-D, 3-D with two pulses): energy, virial
               and every force equal to 1 rank within 1e-12 relative, for se_e2_a (networks and
               compressed) and DPA-1, an orthorhombic and a triclinic cell, through TRANSPORT
               (halo-transport; default mpi).
  transports   the same run through every transport the decomposition allows gives the same
               energy file and trajectory byte for byte: one rank self and mpi (and nvshmem
               where built); four ranks mpi and nvshmem (where built). Two runs of the same
               input on four ranks are identical too.
  trajectory   200 steps of NVE and of v-rescale on 4 ranks follow the 1-rank run (energies
               within 1e-8 relative for the first 50 steps) while atoms cross subdomain
               boundaries, and the conserved energy of the 4-rank NVE run drifts no more than
               the 1-rank run's (the test model is rough) or 1e-5 eV/atom.
Exits 77 (skipped) when no GPU is usable.
"""
import csv
import os
import subprocess
import sys

MPI_FLAGS = ["--oversubscribe", "--allow-run-as-root"]
ENV = dict(os.environ, OMP_NUM_THREADS="1")
SKIP = 77


def check(cond, msg):
    print(("ok   " if cond else "FAIL ") + msg)
    return cond


def run(mpiexec, halomd, n, name, model, conf, sets, work, nsteps, transport, mps=False):
    """transport "nvshmem-bulk": nvshmem storing by bulk copies (HMD_NVSHMEM_BULK=1)."""
    env = dict(ENV, HMD_NVSHMEM_BULK="1") if transport == "nvshmem-bulk" else ENV
    transport = "nvshmem" if transport == "nvshmem-bulk" else transport
    flags = MPI_FLAGS + (["-x", "HMD_NVSHMEM_BULK"] if "HMD_NVSHMEM_BULK" in env else [])
    cmd = [mpiexec] + flags + ["-np", str(n), halomd, "run", "-backend", "cuda", "-deffnm",
                               name, "-m", model, "-c", conf, "-nsteps", str(nsteps),
                               "-set", f"halo-transport={transport}"]
    for kv in sets:
        cmd += ["-set", kv]
    if transport == "nvshmem" or mps:  # several PEs on one GPU: under an MPS server of its own
        cmd = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "with_mps.sh"),
               str(n)] + cmd
    res = subprocess.run(cmd, cwd=work, capture_output=True, text=True, env=env)
    if res.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}: exit {res.returncode}\n{res.stdout}\n{res.stderr}")
    return res


def energies(work, name):
    with open(os.path.join(work, name + ".energy.csv")) as f:
        return list(csv.DictReader(f))


def last_frame(work, name):
    """(positions, forces) of the last frame of <name>.xyz, by atom."""
    lines = open(os.path.join(work, name + ".xyz")).read().splitlines()
    frames, i = [], 0
    while i < len(lines):
        n = int(lines[i])
        frames.append((lines[i + 1], lines[i + 2:i + 2 + n]))
        i += 2 + n
    comment, atoms = frames[-1]
    props = comment.split("Properties=")[1].split()[0].split(":")
    cols, k = {}, 0
    for j in range(0, len(props), 3):
        cols[props[j]] = (k, int(props[j + 2]))
        k += int(props[j + 2])
    def take(key):
        c, w = cols[key]
        return [[float(v) for v in a.split()[c:c + w]] for a in atoms]
    return take("pos"), take("forces")


def rel(a, b):
    fa = [x for r in a for x in r] if isinstance(a[0], list) else a
    fb = [x for r in b for x in r] if isinstance(b[0], list) else b
    return max(abs(x - y) for x, y in zip(fa, fb)) / (max(abs(y) for y in fb) or 1.0)


COMMON = ["dlb=no", "nstenergy=1", "nstcalcenergy=1", "nstlog=0", "nstxout=1", "nstfout=1",
          "verlet-buffer=0.3"]


def invariance(mpiexec, halomd, data, work, transport):
    m = f"{data}/models"
    s = f"{data}/structures"
    cases = [("networks", f"{m}/se_e2_a_water_one_side.dp", f"{s}/water_192_triclinic.xyz", []),
             ("compressed", f"{m}/se_e2_a_water_one_side.dp", f"{s}/water_192_ortho.xyz",
              ["model-compress=yes"]),
             ("dpa1", f"{m}/se_atten_v2_small.dp", f"{s}/water_192_ortho.xyz", [])]
    ok = True
    for name, model, conf, sets in cases:
        ref = None
        for n in (1, 2, 3, 4, 8):
            tag = f"inv_{name}_{n}"
            run(mpiexec, halomd, n, tag, model, conf, COMMON + sets, work, 0,
                "self" if n == 1 else transport)
            e = energies(work, tag)[-1]
            x, f = last_frame(work, tag)
            got = (float(e["pe_eV"]), float(e["press_bar"]), f)
            if ref is None:
                ref = got
                continue
            de = abs(got[0] - ref[0]) / abs(ref[0])
            dp = abs(got[1] - ref[1]) / (abs(ref[1]) or 1.0)
            df = rel(got[2], ref[2])
            ok &= check(de <= 1e-12 and df <= 1e-12 and dp <= 1e-10,
                        f"{name}, {n} ranks ({transport}): energy {de:.1e}, forces {df:.1e}, "
                        f"pressure {dp:.1e} relative to one rank")
    return ok


def files(work, name):
    return [open(os.path.join(work, name + ext), "rb").read() for ext in (".energy.csv", ".xyz")]


def transports(mpiexec, halomd, data, work, transport):
    model = f"{data}/models/se_e2_a_water_one_side.dp"
    conf = f"{data}/structures/water_192_ortho.xyz"
    sets = [kv for kv in COMMON if not kv.startswith(("nstxout=", "nstfout="))] + [
        "dt=0.0005", "gen-vel=yes", "gen-seed=5", "gen-temp=300", "tcoupl=v-rescale",
        "ref-t=300", "tau-t=0.05", "ld-seed=4", "nstxout=10", "nstfout=10"]
    built = subprocess.run([halomd, "-version"], capture_output=True, text=True).stdout
    nvshmem = "NVSHMEM=1" in built
    ok = True
    runs = {}
    for n, tr in [(1, "self"), (1, "mpi")] + ([(1, "nvshmem")] if nvshmem else []) + \
            [(4, "mpi"), (4, "mpi")] + ([(4, "nvshmem"), (4, "nvshmem-bulk")] if nvshmem else []):
        k = sum(1 for key in runs if key[:2] == (n, tr))
        tag = f"tr_{n}_{tr}_{k}"
        # every run under MPS: the same share of the GPU for each (cuBLAS picks its kernels,
        # and so its order of additions, by the SMs a process may use)
        run(mpiexec, halomd, n, tag, model, conf, sets, work, 40, tr, mps=True)
        runs[(n, tr, k)] = files(work, tag)
    for n in (1, 4):
        keys = [key for key in runs if key[0] == n]
        for key in keys[1:]:
            same = runs[key] == runs[keys[0]]
            if not same:  # how far apart: the largest relative difference of the energies
                a = list(csv.DictReader(runs[key][0].decode().splitlines()))
                b = list(csv.DictReader(runs[keys[0]][0].decode().splitlines()))
                worst = max((rel([float(v) for v in ra.values()], [float(v) for v in rb.values()])
                             for ra, rb in zip(a, b)), default=0.0)
                print(f"     largest relative difference of an energy row: {worst:.1e}")
            ok &= check(same, f"{n} rank(s): {key[1]} run {key[2]} "
                              f"{'identical to' if same else 'differs from'} "
                              f"{keys[0][1]} run {keys[0][2]} (energy file and trajectory)")
    return ok


def trajectory(mpiexec, halomd, data, work, transport):
    model = f"{data}/models/se_e2_a_water_one_side.dp"
    conf = f"{data}/structures/water_192_ortho.xyz"
    ok = True
    for name, extra in [("nve", []), ("vrescale", ["tcoupl=v-rescale", "ref-t=400",
                                                   "tau-t=0.02", "ld-seed=7"])]:
        sets = ["nstenergy=1", "nstcalcenergy=1", "nstlog=0", "dt=0.0005", "gen-vel=yes",
                "gen-seed=9", "gen-temp=500", "verlet-buffer=0.4", "nstlist=0"] + extra
        rows = {}
        for n in (1, 4):
            tag = f"traj_{name}_{n}"
            run(mpiexec, halomd, n, tag, model, conf, sets, work, 200,
                "self" if n == 1 else transport)
            rows[n] = energies(work, tag)
        err = max(abs(float(a["pe_eV"]) - float(b["pe_eV"])) / abs(float(b["pe_eV"]))
                  for a, b in zip(rows[4][:51], rows[1][:51]))
        ok &= check(err <= 1e-8, f"{name}: 4 ranks follow 1 rank over 50 steps within "
                                 f"{err:.1e} relative (pe)")
        if name == "nve":  # the test model is rough: its 1-rank drift is the yardstick
            drift = {}
            for n in (1, 4):
                cons = [float(r["conserved_eV"]) for r in rows[n]]
                drift[n] = (max(cons) - min(cons)) / 192
            ok &= check(drift[4] <= max(1e-5, 1.1 * drift[1]),
                        f"nve on 4 ranks: conserved energy within {drift[4]:.1e} eV/atom over "
                        f"200 steps ({drift[1]:.1e} on 1 rank)")
    return ok


TESTS = {"invariance": invariance, "transports": transports, "trajectory": trajectory}


def main(argv):
    if len(argv) not in (6, 7) or argv[1] not in TESTS:
        print(__doc__, file=sys.stderr)
        return 2
    mpiexec, halomd, data, work = argv[2:6]
    transport = argv[6] if len(argv) == 7 else "mpi"
    os.makedirs(work, exist_ok=True)
    probe = subprocess.run([halomd, "eval", "-backend", "cuda", "-m",
                            f"{data}/models/deeppot.dp", "-c",
                            f"{data}/structures/deeppot_case1.xyz", "-o", os.devnull],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        print(f"skipped: {probe.stderr.strip()}")
        return SKIP
    return 0 if TESTS[argv[1]](mpiexec, halomd, data, work, transport) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
