"""The committed goldens of the classical force field (tests/data/ff/golden, written by
python/halomd/make_ff_golden.py): schema, files they name, tolerances, shapes. Standard library
only (Debian's python3 and python3-pytest)."""

import glob
import json
import math
import os
import re
import sys

import pytest

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
GOLDENS = sorted(glob.glob(os.path.join(ROOT, "tests", "data", "ff", "golden", "*.json")))
KEYS = ("schema", "name", "description", "structure", "topology", "halomd_params", "units",
        "tolerance", "counts", "energies", "virial", "forces", "force_projections", "provenance")
COUNTS = ("Bond", "Angle", "U-B", "Proper Dih.", "Improper Dih.", "Per. Imp. Dih.", "LJ-14",
          "natoms", "excluded pairs")

sys.path.insert(0, os.path.join(ROOT, "python", "halomd"))


def test_there_are_goldens():
    assert len(GOLDENS) >= 10


@pytest.mark.parametrize("path", GOLDENS, ids=lambda p: os.path.basename(p))
def test_golden(path):
    g = json.load(open(path))
    assert tuple(g) == KEYS
    assert g["schema"] == "halomd-ff-golden-1"
    assert g["name"] + ".json" == os.path.basename(path)
    for key in ("structure", "topology"):
        assert os.path.isfile(os.path.join(ROOT, g[key])), g[key]
    for key in ("energy", "force", "virial"):
        assert 0 < g["tolerance"][key] <= 1e-8
    assert set(g["counts"]) == set(COUNTS)
    n = g["counts"]["natoms"]
    natoms_gro = int(open(os.path.join(ROOT, g["structure"])).read().split("\n")[1])
    assert n == natoms_gro
    e = g["energies"]
    assert "Potential" in e and "LJ (SR)" in e and "Coulomb (SR)" in e
    assert all(isinstance(v, float) and math.isfinite(v) for v in e.values())
    assert math.isclose(sum(v for k, v in e.items() if k != "Potential"), e["Potential"],
                        rel_tol=1e-9, abs_tol=1e-6)
    assert (g["counts"]["LJ-14"] > 0) == ("LJ-14" in e) == ("Coulomb-14" in e)
    assert len(g["virial"]) == 9
    f = g["forces"]
    rows = f["values"]
    assert all(len(r) == 3 for r in rows)
    if f["atoms"] is None:
        assert len(rows) == n
    else:
        assert len(rows) == len(f["atoms"]) and all(0 <= i < n for i in f["atoms"])
        assert f["atoms"] == sorted(set(f["atoms"]))
    assert max(abs(v) for r in rows for v in r) <= f["max_abs"] * (1 + 1e-10)  # rounded
    assert len(g["force_projections"]["projections"]) == 3
    for p in g["force_projections"]["projections"]:
        assert abs(p["value"]) <= p["scale"]
    for key, val in g["halomd_params"].items():
        assert re.fullmatch(r"[a-z-]+", key) and isinstance(val, str) and ";" not in val
    prov = g["provenance"]
    assert "gmx_d" in prov["tool"] and prov["command"].endswith("--update")
    assert prov["rerun_force_deviation"] < 1e-7


def test_pdb2gmx_header_is_stripped():
    import make_ff_golden as m
    text = ";\tBy user: x (1)\n;\tOn host: h\n;\tAt date: today\n; keep\n[ atoms ]\n"
    assert m.strip_pdb2gmx_header(text) == "; keep\n[ atoms ]\n"


def test_halomd_params_are_angstrom():
    import make_ff_golden as m
    p = m.halomd_params(m.settings(rcoulomb=0.9, rvdw=0.9, rvdw_switch=0.75), "-DX")
    assert p["rcoulomb"] == "9" and p["rvdw-switch"] == "7.5" and p["define"] == "-DX"
