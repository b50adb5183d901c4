"""The Python package (python/halomd) over libhalomd: results equal `halomd eval` bit for bit,
agree with DeePMD-kit's ASE calculator (the golden tests/data/ase/dp_calculator.json, made by
python/halomd/make_dptest_golden.py) within its tolerance, an ASE MD run conserves energy,
errors are exceptions with the engine's message, and `pip install ./python` works.

Needs numpy and ase (Debian's python3-numpy, python3-ase); HALOMD_LIBRARY and HALOMD_EXE name
the library and program of the build (tests/api/api_tests.cmake sets them).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"
sys.path.insert(0, str(REPO / "python"))

import ase.io  # noqa: E402
from ase import units  # noqa: E402
from ase.md.verlet import VelocityVerlet  # noqa: E402
from ase.md.velocitydistribution import MaxwellBoltzmannDistribution  # noqa: E402

import halomd  # noqa: E402
from halomd.ase import Calculator  # noqa: E402

EXE = os.environ.get("HALOMD_EXE", str(REPO / "build" / "halomd"))
SMALL = DATA / "models" / "se_e2_a_small_tanh.dp"
WATER = DATA / "models" / "se_e2_a_water_one_side.dp"
DPA1 = DATA / "models" / "dpa1_small_hcno.dp"


def halomd_eval(model, structure, tmp):
    out = Path(tmp) / "eval.json"
    subprocess.run([EXE, "eval", "-backend", "cpu", "-m", str(model), "-c", str(structure),
                    "-o", str(out)], check=True, capture_output=True)
    return json.loads(out.read_text())["frames"]


@pytest.fixture(scope="module")
def water():
    with halomd.Model(WATER, backend="cpu") as m:
        yield m


def same_as_eval(model, structure, tmp):
    """Every frame of structure by the ASE calculator (one model kept for all) == halomd
    eval, bit for bit."""
    frames = halomd_eval(model.path, structure, tmp)
    calc = Calculator(model)
    images = ase.io.read(structure, index=":")
    assert len(images) == len(frames)
    for atoms, ref in zip(images, frames):
        atoms.calc = calc
        assert atoms.get_potential_energy() == ref["energy"]
        assert np.array_equal(atoms.get_forces(), np.array(ref["force"]))
        assert np.array_equal(calc.results["virial"], np.array(ref["virial"]))
        assert np.array_equal(calc.results["energies"], np.array(ref["atom_energy"]))


@pytest.mark.parametrize("structure", ["water_192_triclinic.xyz", "water_192_ortho_3frames.xyz",
                                       "water_48_cluster.xyz"])
def test_equals_halomd_eval_bit_for_bit(water, structure, tmp_path):
    same_as_eval(water, DATA / "structures" / structure, tmp_path)


def test_dpa1_equals_halomd_eval_bit_for_bit(tmp_path):
    with halomd.Model(DPA1, backend="cpu") as m:
        same_as_eval(m, DATA / "structures" / "hcno_270_mixture.xyz", tmp_path)


def test_model_kept_between_sizes(water, tmp_path):
    """One model on systems of different sizes in turn gives what fresh models give."""
    big = ase.io.read(DATA / "structures" / "water_192_triclinic.xyz")
    small = ase.io.read(DATA / "structures" / "water_96_small.xyz")
    first = [water.eval(a.positions, a.get_chemical_symbols(), cell=a.cell) for a in (big, small)]
    again = [water.eval(a.positions, a.get_chemical_symbols(), cell=a.cell) for a in (small, big)]
    assert first[0]["energy"] == again[1]["energy"]
    assert np.array_equal(first[1]["forces"], again[0]["forces"])
    with halomd.Model(WATER, backend="cpu") as fresh:
        ref = fresh.eval(small.positions, small.get_chemical_symbols(), cell=small.cell)
    assert np.array_equal(ref["forces"], first[1]["forces"])


def test_agrees_with_deepmd_calculator():
    golden = json.loads((DATA / "ase" / "dp_calculator.json").read_text())
    tol = golden["tolerance"]
    models = {}
    for case in golden["cases"]:
        atoms = ase.io.read(REPO / case["structure"])
        if not case["pbc"]:
            atoms.pbc = False
        path = REPO / case["model"]
        if path not in models:
            models[path] = halomd.Model(path, backend="cpu")
        atoms.calc = Calculator(models[path])
        got = {"energy": atoms.get_potential_energy(), "forces": atoms.get_forces(),
               "virial": atoms.calc.results["virial"]}
        if case["pbc"]:
            got["stress"] = atoms.get_stress()
        for key, value in got.items():
            want = np.asarray(case[key])
            err = np.max(np.abs(np.asarray(value) - want)) / np.max(np.abs(want))
            assert err <= tol[key], f"{case['structure']} {key}: {err:.2e} > {tol[key]}"
    for m in models.values():
        m.close()


def test_types_and_symbols_are_the_same(water):
    a = ase.io.read(DATA / "structures" / "water_96_small.xyz")
    by_symbol = water.eval(a.positions, a.get_chemical_symbols(), cell=a.cell)
    by_type = water.eval(a.positions, water.types_of(a.get_chemical_symbols()), cell=a.cell)
    assert by_symbol["energy"] == by_type["energy"]


def test_ase_md_conserves_energy():
    atoms = ase.io.read(DATA / "structures" / "water_96_small.xyz")
    atoms.calc = Calculator(SMALL, backend="cpu")
    MaxwellBoltzmannDistribution(atoms, temperature_K=300, rng=np.random.default_rng(7))
    e0 = atoms.get_total_energy()
    dyn = VelocityVerlet(atoms, timestep=0.1 * units.fs)
    energies = []
    dyn.attach(lambda: energies.append(atoms.get_total_energy()), interval=5)
    dyn.run(50)
    drift = max(abs(e - e0) for e in energies) / len(atoms)
    assert drift < 1e-4, f"total energy moved by {drift:.2e} eV/atom in 50 steps"
    assert atoms.calc.model.backend.startswith("cpu")


def test_errors_are_exceptions_with_the_engine_message(water, tmp_path):
    with pytest.raises(halomd.HalomdError, match="cannot open model .*nothing.dp") as e:
        halomd.Model(tmp_path / "nothing.dp")
    assert e.value.status == -66
    with pytest.raises(halomd.HalomdError, match="backend = gpu is not one of"):
        halomd.Model(WATER, backend="gpu")
    with pytest.raises(halomd.HalomdError, match="unknown parameter 'model-compres'"):
        halomd.Model(WATER, settings={"model-compres": "yes"})
    a = ase.io.read(DATA / "structures" / "water_96_small.xyz")
    with pytest.raises(halomd.HalomdError, match="atom 1: type 5, but the model has 2 types"):
        water.eval(a.positions, [5] * len(a), cell=a.cell)
    with pytest.raises(halomd.HalomdError, match="element C is not in the type map"):
        water.eval(a.positions, ["C"] * len(a), cell=a.cell)
    with pytest.raises(halomd.HalomdError, match="cell: ") as e:
        water.eval(a.positions, a.get_chemical_symbols(), cell=np.zeros((3, 3)))
    assert e.value.status == -65
    x = a.positions.copy()
    x[3, 1] = np.nan
    with pytest.raises(halomd.HalomdError, match="atom 4: position is not finite"):
        water.eval(x, a.get_chemical_symbols(), cell=a.cell)
    m = halomd.Model(SMALL, backend="cpu")
    m.close()
    with pytest.raises(halomd.HalomdError, match="closed"):
        m.eval(a.positions, a.get_chemical_symbols())


def test_pip_install_from_the_source_tree(tmp_path):
    """`pip install ./python` into a fresh virtual environment, with this build's library
    (HALOMD_LIBRARY: no second compile), then the package used from elsewhere."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
                   check=True)
    env = dict(os.environ)
    env["PIP_NO_INDEX"] = "1"
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "--no-build-isolation",
                    str(REPO / "python")], check=True, env=env, cwd=tmp_path)
    env.pop("HALOMD_LIBRARY")
    code = ("import halomd, halomd.ase, numpy as np; "
            f"m = halomd.Model({str(SMALL)!r}, backend='cpu'); "
            "print(halomd.__file__); "
            "print(m.eval(np.eye(3) * 1.1, ['O', 'H', 'H'])['energy'])")
    run = subprocess.run([str(venv / "bin" / "python"), "-c", code], check=True, env=env,
                         cwd=tmp_path, capture_output=True, text=True)
    assert str(venv) in run.stdout.splitlines()[0]
    float(run.stdout.splitlines()[1])
