#!/usr/bin/env python3
"""Checkpoints and pressure coupling on the GPU step (label gpu; standard library, h5py where
installed for a look inside the checkpoints).

Usage: check_gpu_cpt.py TEST MPIEXEC HALOMD DATA WORKDIR
  continuation  `halomd run -backend cuda` continued from a checkpoint (-cpi) repeats the
                uninterrupted run bit for bit: the energy file's rows from the checkpoint's step
                on and the final .gro are identical. The trained water model (192 atoms), the
                list updated when needed (nstlist = 0), continued at the first step from 13 on
                that is not a list step (the checkpoint's list_step, read with h5py); NVE,
                v-rescale, and Langevin with centre-of-mass removal; on 1 rank (halo self) and
                on 2 ranks
                sharing the GPU (halo mpi, under tests/gpu/with_mps.sh); and from a periodic
                checkpoint of -cpt 0 (step 20) on 1 rank.
  npt           pcoupl = c-rescale on the GPU: (a) continuation bit for bit as above, isotropic,
                at a coupling step (20) and between two (from 23 on, not a list step), 1 rank,
                and between two on 2 ranks;
                (b) the GPU run follows the CPU run of the same input for 100 steps (isotropic,
                semiisotropic, anisotropic; the demo water far above ref-p, so the cell grows by
                several percent): volume, pressure and potential energy within TWIN_TOL of
                each series' largest value (max |gpu - cpu| / max |cpu| over the rows, as
                gpu.mdtwin; round-off of the two backends' forces, ~1e-12, grown over 100
                steps; the largest difference is printed).
Exits 77 (skipped) when no GPU is usable.
"""
import csv
import os
import subprocess
import sys

MPI_FLAGS = ["--oversubscribe", "--allow-run-as-root"]
ENV = dict(os.environ, OMP_NUM_THREADS="1")
SKIP = 77
TWIN_TOL = 1e-8
HERE = os.path.dirname(os.path.abspath(__file__))
WATER = os.path.join(HERE, "..", "..", "examples", "water")


def check(cond, msg):
    print(("ok   " if cond else "FAIL ") + msg)
    return cond


def run(ctx, name, sets, nsteps, ranks=1, backend="cuda", cpi=None, extra=()):
    """`halomd run` of the trained water on `ranks` ranks; the energy file's rows as text."""
    mpiexec, halomd, work = ctx
    cmd = [halomd, "run", "-backend", backend, "-deffnm", name, "-m",
           f"{WATER}/water_trained.dp", "-c", f"{WATER}/water_192.gro", "-nsteps", str(nsteps)]
    for kv in sets:
        cmd += ["-set", kv]
    if cpi:
        cmd += ["-cpi", cpi]
    cmd += list(extra)
    if ranks > 1:
        cmd = [os.path.join(HERE, "with_mps.sh"), str(ranks), mpiexec] + MPI_FLAGS + [
            "-np", str(ranks)] + cmd + ["-set", "halo-transport=mpi"]
    env = ENV if backend == "cuda" else dict(os.environ)  # the CPU twin uses every core
    res = subprocess.run(cmd, cwd=work, capture_output=True, text=True, env=env)
    if res.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}: exit {res.returncode}\n{res.stdout}\n{res.stderr}")
    with open(os.path.join(work, name + ".energy.csv")) as f:
        return f.read().splitlines()


def gro(work, name):
    with open(os.path.join(work, name + ".gro")) as f:
        return f.read().splitlines()[1:]  # the title holds the run's name


def list_step(work, cpt):
    """(step, list_step) of a checkpoint, or None without h5py."""
    try:
        import h5py
    except ImportError:
        return None
    with h5py.File(os.path.join(work, cpt), "r") as f:
        return int(f["step"][()]), int(f["list_step"][()])


def continued(ctx, name, sets, nsteps, splits, ranks=1, via_cpt=False):
    """Whole run against first part + continuation, checked; the first part ends at the first of
    `splits` that is not a list step (with h5py; else the first of them). -cpt 0 instead: the
    periodic checkpoint of step splits[0] (the one before the last). Returns whether identical."""
    work = ctx[2]
    whole = run(ctx, name, sets, nsteps, ranks, extra=["-cpt", "0"] if via_cpt else ())
    for split in splits:
        cpt = name + "_prev.cpt" if via_cpt else name + "_1.cpt"
        if not via_cpt:
            run(ctx, name + "_1", sets, split, ranks)
        steps = list_step(work, cpt)
        if via_cpt or steps is None or steps[1] != steps[0]:
            break
    where = "" if steps is None else f" (checkpoint at step {steps[0]}, list built at {steps[1]})"
    ok = steps is None or steps[0] == split
    rest = run(ctx, name + "_2", sets, nsteps, ranks, cpi=cpt)
    same = rest[0] == whole[0] and rest[1:] == whole[1 + split:]
    same_gro = gro(work, name + "_2") == gro(work, name)
    if not same:
        bad = next((k for k, (a, b) in enumerate(zip(rest[1:], whole[1 + split:])) if a != b),
                   None)
        print(f"     first differing row: {bad} rows after the checkpoint\n"
              f"     continued: {rest[1 + (bad or 0)] if len(rest) > 1 else ''}\n"
              f"     whole:     {whole[1 + split + (bad or 0)]}")
    return check(ok and same and same_gro,
                 f"{name}: {ranks} rank(s), continued at step {split}{where}: energy rows "
                 f"{'identical' if same else 'DIFFER'}, final .gro "
                 f"{'identical' if same_gro else 'DIFFERS'} ({len(rest) - 1} rows)")


BASE = ["gen-vel=yes", "gen-seed=5", "gen-temp=600", "ref-t=300", "ld-seed=3", "nstenergy=1",
        "nstcalcenergy=1", "verlet-buffer=0.4", "dt=0.001", "nstlist=0", "nstlog=0", "dlb=no"]
THERMOSTATS = {"nve": ["tcoupl=no"], "vrescale": ["tcoupl=v-rescale", "tau-t=0.1"],
               "langevin": ["tcoupl=langevin", "tau-t=0.1", "comm-mode=linear", "nstcomm=7"]}


def continuation(ctx):
    ok = True
    for ranks in (1, 2):
        for tc, sets in THERMOSTATS.items():
            ok &= continued(ctx, f"cont_{tc}_{ranks}", BASE + sets, 30, range(13, 18), ranks)
    ok &= continued(ctx, "cont_periodic", BASE + THERMOSTATS["vrescale"], 25, [20],
                    via_cpt=True)
    return ok


NPT = ["tcoupl=v-rescale", "tau-t=0.1", "pcoupl=c-rescale", "tau-p=0.5", "nstpcouple=10"]
KINDS = {"isotropic": [],
         "semiisotropic": ["pcoupltype=semiisotropic", "ref-p=1 1",
                           "compressibility=4.5e-5 4.5e-5"],
         "anisotropic": ["pcoupltype=anisotropic", "ref-p=1 1 1 0 0 0",
                         "compressibility=4.5e-5 4.5e-5 4.5e-5 0 0 0"]}


def rows(text):
    return [{k: float(v) for k, v in r.items()} for r in csv.DictReader(text)]


def npt(ctx):
    ok = True
    sets = BASE + NPT
    for splits, ranks in (([20], 1), (range(23, 30), 1), (range(23, 30), 2)):
        ok &= continued(ctx, f"npt_cont_{splits[0]}_{ranks}", sets, 40, splits, ranks)
    for kind, extra in KINDS.items():
        gpu = rows(run(ctx, f"twin_{kind}_cuda", sets + extra, 100))
        cpu = rows(run(ctx, f"twin_{kind}_cpu", sets + extra, 100, backend="cpu"))
        worst = {}
        for key in ("vol_A3", "press_bar", "pe_eV"):
            worst[key] = max(abs(g[key] - c[key]) for g, c in zip(gpu, cpu)) / max(
                abs(c[key]) for c in cpu)
        grew = gpu[-1]["vol_A3"] / gpu[0]["vol_A3"] - 1
        ok &= check(len(gpu) == len(cpu) == 101 and max(worst.values()) <= TWIN_TOL and grew > 0,
                    f"{kind}: GPU follows CPU over 100 steps, volume {grew:+.2%}: largest relative "
                    f"difference volume {worst['vol_A3']:.1e}, pressure {worst['press_bar']:.1e}, "
                    f"pe {worst['pe_eV']:.1e} (bound {TWIN_TOL:.0e})")
    return ok


TESTS = {"continuation": continuation, "npt": npt}


def main(argv):
    if len(argv) != 6 or argv[1] not in TESTS:
        print(__doc__, file=sys.stderr)
        return 2
    mpiexec, halomd, data, work = argv[2:6]
    os.makedirs(work, exist_ok=True)
    probe = subprocess.run([halomd, "eval", "-backend", "cuda", "-m",
                            f"{data}/models/deeppot.dp", "-c",
                            f"{data}/structures/deeppot_case1.xyz", "-o", os.devnull],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        print(f"skipped: {probe.stderr.strip()}")
        return SKIP
    return 0 if TESTS[argv[1]]((mpiexec, halomd, work)) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
