#!/usr/bin/env python3
"""The Python package on the GPU (CTest python.api_gpu, label gpu; exit 77 = skipped without a
usable device):

    cd build && ctest -L gpu -R api        (or: python3 tests/api/check_api_gpu.py)

1. halomd.Model(backend="cuda") against the CPU reference: energies, forces, virial and atomic
   energies within 1e-10 relative (max|gpu - cpu| / max|cpu|) for se_e2_a (networks and
   compressed tables) and DPA-1, periodic and not;
2. the ASE calculator with backend="cuda" equal to `halomd eval -backend cuda` bit for bit on
   a file of several frames;
3. one model kept across systems of different sizes in turn (the device buffers grow and are
   reused) gives, bit for bit, what a fresh model gives.
   2 and 3 are bit for bit when the GPU repeats its own evaluation bit for bit (two fresh
   models on one configuration); the force kernels sum with atomic additions, and where
   repeats differ in the last bits, 2 and 3 hold within 1e-12 relative instead (printed);
4. DeePMD-kit's DP calculator (tests/data/ase/dp_calculator.json) within its tolerance.
Needs numpy and ase; HALOMD_LIBRARY and HALOMD_EXE name this build's library and program.
"""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"
sys.path.insert(0, str(REPO / "python"))

import ase.io  # noqa: E402

import halomd  # noqa: E402
from halomd.ase import Calculator  # noqa: E402

EXE = os.environ.get("HALOMD_EXE", str(REPO / "build" / "halomd"))
TOL = 1e-10
failures = []
exact = True  # the GPU repeats its own evaluation bit for bit (set in main)


def rel(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


def check(what, ok):
    print(("ok      " if ok else "FAILED  ") + what)
    if not ok:
        failures.append(what)


def against_cpu(model, structure, pbc=True, settings=None):
    atoms = ase.io.read(DATA / "structures" / structure)
    cell = np.asarray(atoms.cell) if pbc else None
    with halomd.Model(model, backend="cpu", settings=settings) as cpu, \
            halomd.Model(model, backend="cuda", settings=settings) as gpu:
        a = cpu.eval(atoms.positions, atoms.get_chemical_symbols(), cell=cell)
        b = gpu.eval(atoms.positions, atoms.get_chemical_symbols(), cell=cell)
    worst = max(rel(b[k], a[k]) for k in ("energy", "forces", "virial", "atom_energies"))
    check(f"{Path(model).name} {settings or ''} on {structure}{'' if pbc else ' (no cell)'}: "
          f"GPU vs CPU {worst:.1e} <= {TOL:g}", worst <= TOL)


def same(a, b):
    """Bit for bit, or within 1e-12 relative where the GPU does not repeat itself exactly."""
    a, b = np.asarray(a), np.asarray(b)
    return bool(np.array_equal(a, b)) if exact else rel(a, b) <= 1e-12


def repeats_exactly(model):
    atoms = ase.io.read(DATA / "structures" / "water_192_triclinic.xyz")
    runs = []
    for _ in range(2):
        with halomd.Model(model, backend="cuda") as m:
            runs.append(m.eval(atoms.positions, atoms.get_chemical_symbols(), cell=atoms.cell))
    ok = all(np.array_equal(runs[0][k], runs[1][k]) for k in ("energy", "forces", "virial"))
    print(f"note    the GPU repeats an evaluation {'bit for bit' if ok else 'only to '}"
          + ("" if ok else f"{rel(runs[0]['forces'], runs[1]['forces']):.1e} (forces)"))
    return ok


def equals_eval(model, structure):
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "eval.json"
        subprocess.run([EXE, "eval", "-backend", "cuda", "-m", str(model), "-c", str(structure),
                        "-o", str(out)], check=True, capture_output=True)
        frames = json.loads(out.read_text())["frames"]
    calc = Calculator(model, backend="cuda")
    ok = True
    for atoms, ref in zip(ase.io.read(structure, index=":"), frames):
        atoms.calc = calc
        ok &= same(atoms.get_potential_energy(), ref["energy"])
        ok &= same(atoms.get_forces(), ref["force"])
        ok &= same(calc.results["virial"], ref["virial"])
    check(f"ASE calculator (cuda) == halomd eval -backend cuda on {structure.name}, "
          f"{len(frames)} frames, {'bit for bit' if exact else 'within 1e-12'}", ok)


def kept_between_sizes(model):
    big = ase.io.read(DATA / "structures" / "water_192_triclinic.xyz")
    small = ase.io.read(DATA / "structures" / "water_96_small.xyz")
    with halomd.Model(model, backend="cuda") as m:
        r = [m.eval(a.positions, a.get_chemical_symbols(), cell=a.cell)
             for a in (small, big, small, big)]
    with halomd.Model(model, backend="cuda") as fresh:
        ref_big = fresh.eval(big.positions, big.get_chemical_symbols(), cell=big.cell)
    ok = all(same(r[k]["forces"], ref_big["forces"]) for k in (1, 3))
    ok &= same(r[0]["forces"], r[2]["forces"])
    check("one model on 96, 192, 96, 192 atoms == a fresh model, "
          + ("bit for bit" if exact else "within 1e-12"), ok)


def against_deepmd():
    golden = json.loads((DATA / "ase" / "dp_calculator.json").read_text())
    for case in golden["cases"]:
        atoms = ase.io.read(REPO / case["structure"])
        if not case["pbc"]:
            atoms.pbc = False
        atoms.calc = Calculator(REPO / case["model"], backend="cuda")
        err = max(rel(atoms.get_forces(), case["forces"]),
                  rel(atoms.get_potential_energy(), case["energy"]))
        check(f"DP calculator golden {Path(case['structure']).name}: {err:.1e} <= "
              f"{golden['tolerance']['forces']:g}", err <= golden["tolerance"]["forces"])


def main():
    try:
        halomd.Model(DATA / "models" / "se_e2_a_small_tanh.dp", backend="cuda").close()
    except halomd.HalomdError as e:
        print(f"skipped: {e}")
        return 77
    water = DATA / "models" / "se_e2_a_water_one_side.dp"
    global exact
    exact = repeats_exactly(water)
    against_cpu(water, "water_192_triclinic.xyz")
    against_cpu(water, "water_48_cluster.xyz", pbc=False)
    against_cpu(water, "water_192_triclinic.xyz", settings={"model-compress": "yes"})
    against_cpu(DATA / "models" / "dpa1_small_hcno.dp", "hcno_270_mixture.xyz")
    equals_eval(water, DATA / "structures" / "water_192_ortho_3frames.xyz")
    kept_between_sizes(water)
    against_deepmd()
    print(f"{len(failures)} failed" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
