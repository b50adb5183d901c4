#!/usr/bin/env python3
"""End-to-end checks of `halomd run -p topol.top` (the classical force field; standard library).

Usage: check_classical.py TEST HALOMD REPO WORKDIR [MPIEXEC]
  water_nve      the flexible water box (examples/water/water_192): step 0's energy terms in the
                 energy CSV equal gmx_d's (tests/data/ff/golden/water_192_ref.json) within the
                 golden's tolerance; NVE: the conserved energy's fluctuation per atom stays within
                 a bound, and halving dt cuts it about 4x (forces consistent with the energy).
  protein_step0  the 15,668-atom protein (examples/protein): step 0's terms against its golden.
  gpu_water      backend = cuda: step 0 within 1e-12 of the CPU and the golden, NVE bound (label
                 gpu; exit 77, skipped, without a device or CUDA).
  gpu_hybrid     hybrid_water with backend = cuda (the DP on the device) against the CPU within
                 1e-10 (label gpu; skipped without a device or CUDA).
  water_dd       water_nve's first steps under mpirun -np 2: the same energies as one rank.
  hybrid_water   nnp-group = resid 1-5 with the water model: the CSV has the DP's column and the
                 classical terms, pe is their sum, the conserved energy stays bounded over 20
                 steps. (Only 20: the example water model has almost no O-H stiffness, 5 meV for
                 a bond stretched by 0.6 A, so the classical Coulomb pull of neighbouring
                 oxygens tears the group's hydrogens off within about 40 steps.)
"""
import csv
import json
import os
import statistics
import subprocess
import sys

KJ_PER_MOL_TO_EV = 1e3 / (6.02214076e23 * 1.602176634e-19)


def golden(repo, name):
    with open(os.path.join(repo, "tests/data/ff/golden", name + ".json")) as f:
        return json.load(f)


def run(halomd, workdir, name, args, mpiexec=None, nranks=1, backend="cpu"):
    os.makedirs(workdir, exist_ok=True)
    cmd = [halomd, "run", "-backend", backend, "-deffnm", name] + args
    if mpiexec:
        cmd = [mpiexec, "--oversubscribe", "--allow-run-as-root", "-np", str(nranks)] + cmd
    env = dict(os.environ, OMP_NUM_THREADS="1")
    res = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True, env=env)
    if res.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({res.returncode}):\n{res.stderr}")
    with open(os.path.join(workdir, name + ".energy.csv")) as f:
        return [{k: float(v) for k, v in row.items()} for row in csv.DictReader(f)]


def golden_args(repo, g):
    args = ["-c", os.path.join(repo, g["structure"]), "-p", os.path.join(repo, g["topology"])]
    for key, value in g["halomd_params"].items():
        args += ["-set", f"{key}={value}"]
    return args


def check_step0(row, g):
    """Every golden term (kJ/mol) against the CSV's column of the same name (eV)."""
    tol = g["tolerance"]["energy"]
    worst = 0.0
    for name, want in g["energies"].items():
        column = "pe_eV" if name == "Potential" else name + "_eV"
        if column not in row:
            raise SystemExit(f"the energy CSV has no column '{column}' (GROMACS's {name})")
        ours = row[column] / KJ_PER_MOL_TO_EV
        err = abs(ours - want) / abs(want)
        print(f"  {name:14s} halomd {ours:22.12f} gmx_d {want:22.12f} kJ/mol  rel {err:.2e}")
        if err > tol:
            raise SystemExit(f"{name}: relative error {err:.3g} > {tol:g}")
        worst = max(worst, err)
    print(f"step 0: every term within {worst:.2e} of gmx_d (tolerance {tol:g})")


def fluctuation(rows, natoms):
    return statistics.pstdev(r["conserved_eV"] for r in rows) / natoms


def water_nve(halomd, repo, workdir):
    g = golden(repo, "water_192_ref")
    base = golden_args(repo, g) + ["-set", "tcoupl=no", "-set", "gen-vel=no"]
    a = run(halomd, workdir, "dt1", base + ["-set", "dt=0.0005", "-set", "nsteps=1000",
                                            "-set", "nstenergy=10"])
    check_step0(a[0], g)
    b = run(halomd, workdir, "dt2", base + ["-set", "dt=0.00025", "-set", "nsteps=2000",
                                            "-set", "nstenergy=20"])
    fa, fb = fluctuation(a, 192), fluctuation(b, 192)
    print(f"NVE 0.5 ps: conserved-energy std {fa:.3e} eV/atom at dt 0.5 fs, {fb:.3e} at "
          f"0.25 fs (ratio {fa / fb:.2f}); max temperature {max(r['temp_K'] for r in a):.0f} K")
    if fa > 5e-5:
        raise SystemExit(f"conserved energy fluctuates {fa:.3g} eV/atom > 5e-5")
    if not 3.0 < fa / fb < 5.0:
        raise SystemExit(f"halving dt changed the fluctuation {fa / fb:.2f}x, not about 4x")


def protein_step0(halomd, repo, workdir):
    g = golden(repo, "protein_15668_ref")
    rows = run(halomd, workdir, "protein", golden_args(repo, g) + ["-set", "nsteps=0"])
    check_step0(rows[0], g)


def water_dd(halomd, repo, workdir, mpiexec):
    g = golden(repo, "water_192_ref")
    args = golden_args(repo, g) + ["-set", "tcoupl=no", "-set", "nsteps=50",
                                   "-set", "nstenergy=10", "-set", "gen-vel=yes",
                                   "-set", "gen-temp=300", "-set", "gen-seed=7"]
    one = run(halomd, workdir, "one", args)
    two = run(halomd, workdir, "two", args, mpiexec, 2)
    check_step0(two[0], g)
    for r1, r2 in zip(one, two):
        for key in r1:
            if abs(r1[key] - r2[key]) > 1e-9 * max(1.0, abs(r1[key])):
                raise SystemExit(f"step {r1['step']:.0f} {key}: one rank {r1[key]!r}, two "
                                 f"ranks {r2[key]!r}")
    print(f"two ranks equal one rank over {len(one)} energy steps")


def hybrid_water(halomd, repo, workdir):
    g = golden(repo, "water_192_ref")
    args = golden_args(repo, g) + ["-m", os.path.join(repo, "examples/water/water.dp"),
                                   "-set", "nnp-group=resid 1-5", "-set", "tcoupl=no",
                                   "-set", "dt=0.0005", "-set", "nsteps=20",
                                   "-set", "nstenergy=2"]
    rows = run(halomd, workdir, "hybrid", args)
    terms = ["Deep Potential_eV", "Bond_eV", "Angle_eV", "LJ (SR)_eV", "Coulomb (SR)_eV"]
    for r in rows:
        missing = [t for t in terms if t not in r]
        if missing:
            raise SystemExit(f"the energy CSV lacks {missing}")
        total = sum(r[t] for t in terms)
        if abs(total - r["pe_eV"]) > 1e-9 * abs(r["pe_eV"]):
            raise SystemExit(f"step {r['step']:.0f}: terms sum to {total}, pe_eV {r['pe_eV']}")
    f = fluctuation(rows, 192)
    print(f"hybrid: terms sum to pe at every step; conserved-energy std {f:.3e} eV/atom")
    if f > 1e-4:
        raise SystemExit(f"conserved energy fluctuates {f:.3g} eV/atom > 1e-4")


def skip_without_cuda(halomd):
    """Exits 77 (skipped) when this build has no CUDA backend."""
    probe = subprocess.run([halomd, "-version"], capture_output=True, text=True)
    if "cuda" not in probe.stdout.split("backends:")[-1]:
        print("skipped: this build has no CUDA backend")
        sys.exit(77)


def gpu_water(halomd, repo, workdir):
    """backend = cuda (the device provider in the device step) against the CPU: step 0's terms
    within 1e-12 of each other and of gmx_d's golden, and the NVE run within the bound."""
    skip_without_cuda(halomd)
    g = golden(repo, "water_192_ref")
    args = golden_args(repo, g) + ["-set", "tcoupl=no", "-set", "gen-vel=no", "-set",
                                   "dt=0.0005", "-set", "nsteps=1000", "-set", "nstenergy=10"]
    try:
        gpu = run(halomd, workdir, "gpu", args, backend="cuda")
    except SystemExit as e:
        if "device" in str(e) or "GPU" in str(e):
            print(f"skipped: {e}")
            sys.exit(77)
        raise
    cpu = run(halomd, workdir, "cpu", args)
    check_step0(gpu[0], g)
    for key in gpu[0]:
        if abs(gpu[0][key] - cpu[0][key]) > 1e-12 * max(1.0, abs(cpu[0][key])):
            raise SystemExit(f"step 0 {key}: GPU {gpu[0][key]!r}, CPU {cpu[0][key]!r}")
    f = fluctuation(gpu, 192)
    print(f"GPU equals CPU at step 0; NVE conserved-energy std {f:.3e} eV/atom")
    if f > 5e-5:
        raise SystemExit(f"conserved energy fluctuates {f:.3g} eV/atom > 5e-5")


def gpu_hybrid(halomd, repo, workdir):
    """Hybrid ML/MM with backend = cuda (the DP on the device, the rest on the host) against the
    CPU: every column within 1e-10 over 20 steps."""
    skip_without_cuda(halomd)
    g = golden(repo, "water_192_ref")
    args = golden_args(repo, g) + ["-m", os.path.join(repo, "examples/water/water.dp"),
                                   "-set", "nnp-group=resid 1-5", "-set", "tcoupl=no",
                                   "-set", "nsteps=20", "-set", "nstenergy=5"]
    try:
        gpu = run(halomd, workdir, "gpu", args, backend="cuda")
    except SystemExit as e:
        if "device" in str(e) or "GPU" in str(e):
            print(f"skipped: {e}")
            sys.exit(77)
        raise
    cpu = run(halomd, workdir, "cpu", args)
    for r1, r2 in zip(cpu, gpu):
        for key in r1:
            if abs(r1[key] - r2[key]) > 1e-10 * max(1.0, abs(r1[key])):
                raise SystemExit(f"step {r1['step']:.0f} {key}: CPU {r1[key]!r}, GPU {r2[key]!r}")
    print(f"hybrid on the GPU equals the CPU over {len(cpu)} energy steps")


def main():
    test, halomd, repo, workdir = sys.argv[1:5]
    if test == "water_dd":
        water_dd(halomd, repo, workdir, sys.argv[5])
    else:
        {"water_nve": water_nve, "protein_step0": protein_step0, "hybrid_water": hybrid_water,
         "gpu_water": gpu_water, "gpu_hybrid": gpu_hybrid}[test](halomd, repo, workdir)


if __name__ == "__main__":
    main()
