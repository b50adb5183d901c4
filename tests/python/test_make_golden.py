"""Tests of python/halomd/make_golden.py's pure-Python helpers and of the committed golden data.

Standard library and pytest only (Debian's python3 + python3-pytest); nothing here needs
deepmd-kit, torch, ASE or numpy. Reads only tests/data and examples/water.
"""

import json
import math
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"
sys.path.insert(0, str(REPO / "python"))

from halomd import make_golden as mg  # noqa: E402

GOLDENS = sorted((DATA / "golden").glob("*.json"))


def load(path):
    return json.loads(Path(path).read_text())


# --- DeePMD-kit test-case YAML ------------------------------------------------------------------

YAML = """\
# comment
key: se_e2_a
model_def_script:
  {
    "resnet_dt": False,
    "sel": [46, 92],
  }
results:
  - coord:
      [
        12.83,
        2.56,
        2.18,
        00.25,
        3.00,
        1.0e01,
      ]
    atype: [0, 1]
    box: [13.0, 0.0, 0.0, 0.0, 13.0, 0.0, 0.0, 0.0, 13.0]
    atomic_energy:
      [
        -9.275780747115504710e01,
        -1.863501786584258468e+02,
      ]
    force: [1.0, -2.0, 3.0, -1.0, 2.0, -3.0]
    atomic_virial:
      [
        1, 2, 3, 4, 5, 6, 7, 8, 9,
        0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5,
      ]
  - coord: [0.0, 0.0, 0.0]
    atype: [1]
    box: null  # no periodic box
    atomic_energy: [-1.5]
    force: [0.0, 0.0, 0.0]
    atomic_virial: [0, 0, 0, 0, 0, 0, 0, 0, 0]
trailer: [1, 2]
"""


def test_parse_testcase_yaml_reads_odd_numbers():
    cases = mg.parse_testcase_yaml(YAML)
    assert len(cases) == 2
    c = cases[0]
    assert c["coord"] == [12.83, 2.56, 2.18, 0.25, 3.0, 10.0]
    assert c["atype"] == [0, 1] and all(isinstance(t, int) for t in c["atype"])
    assert c["atomic_energy"] == [-92.75780747115504710, -186.3501786584258468]
    assert c["atomic_virial"][:3] == [1, 2, 3]
    assert cases[1]["box"] is None
    assert "trailer" not in cases[1]


def test_parse_testcase_yaml_errors():
    with pytest.raises(ValueError):
        mg.parse_testcase_yaml("key: 1\n")
    with pytest.raises(ValueError):
        mg.parse_testcase_yaml("results:\n  - coord: [1.0, abc]\n")


def test_testcase_to_golden():
    cases = mg.parse_testcase_yaml(YAML)
    s, fr = mg.testcase_to_golden(cases[0], ["O", "H"])
    assert s["species"] == ["O", "H"]
    assert s["positions"] == [[12.83, 2.56, 2.18], [0.25, 3.0, 10.0]]
    assert s["cell"] == [[13.0, 0.0, 0.0], [0.0, 13.0, 0.0], [0.0, 0.0, 13.0]]
    assert s["pbc"] == [True, True, True]
    assert fr["energy"] == math.fsum(cases[0]["atomic_energy"])
    assert fr["force"] == [[1.0, -2.0, 3.0], [-1.0, 2.0, -3.0]]
    assert fr["virial"] == [[1.5, 2.5, 3.5], [4.5, 5.5, 6.5], [7.5, 8.5, 9.5]]
    s2, fr2 = mg.testcase_to_golden(cases[1], ["O", "H"])
    assert s2["cell"] is None and s2["pbc"] == [False] * 3 and s2["species"] == ["H"]
    assert fr2["energy"] == -1.5


def test_testcase_to_golden_rejects_bad_sizes():
    case = mg.parse_testcase_yaml(YAML)[0]
    case["force"] = case["force"][:-1]
    with pytest.raises(ValueError):
        mg.testcase_to_golden(case, ["O", "H"])


# --- readers ------------------------------------------------------------------------------------

GRO = """\
water
    3
    1SOL     OW    1   0.230   0.628   0.113
    1SOL    HW1    2   0.137   0.626   0.150
    1SOL    HW2    3   0.231   0.589   0.021
   1.26000   1.20000   1.27000   0.00000   0.00000   0.40000   0.00000  -0.30000   0.35000
"""

XYZ = """\
2
Lattice="11.9 0.0 0.0 0.0 12.5 0.0 0.0 0.0 13.0" Properties=species:S:1:pos:R:3 pbc="T T T"
O        0.10000000       0.20000000       0.30000000
H       -1.00000000       0.00000000      12.00000000
2
Lattice="12.019 0.0 0.0 0.0 12.625 0.0 0.0 0.0 13.13" Properties=species:S:1:pos:R:3 pbc="T T T"
O        0.10100000       0.20200000       0.30300000
H       -1.01000000       0.00000000      12.12000000
1
Properties=species:S:1:pos:R:3 pbc="F F F"
C        1.00000000       2.00000000       3.00000000
"""


def test_read_gro_nm_to_angstrom_and_triclinic_box(tmp_path):
    p = tmp_path / "w.gro"
    p.write_text(GRO)
    (f,) = mg.read_gro(p)
    assert f["species"] == ["O", "H", "H"]
    assert f["positions"][0] == [0.230 * 10.0, 0.628 * 10.0, 0.113 * 10.0]
    assert f["cell"] == [[12.6, 0.0, 0.0], [4.0, 12.0, 0.0], [-3.0, 3.5, 12.7]]
    assert f["pbc"] == [True, True, True]


def test_read_xyz_frames(tmp_path):
    p = tmp_path / "w.xyz"
    p.write_text(XYZ)
    fr = mg.read_xyz(p)
    assert len(fr) == 3
    assert fr[0]["cell"][0] == [11.9, 0.0, 0.0] and fr[0]["pbc"] == [True] * 3
    assert fr[1]["positions"][1] == [-1.01, 0.0, 12.12]
    assert fr[2]["cell"] is None and fr[2]["pbc"] == [False] * 3
    assert fr[2]["species"] == ["C"]


# --- golden format and comparison ---------------------------------------------------------------

def _doc(n=2, nframes=1):
    tol = {q: 1e-10 for q in mg.QUANTITIES} | {"definition": mg.TOL_DEFINITION}
    frames = [{"energy": -1.0 / 3.0 - k, "atom_energy": [0.1 * (i + 1) for i in range(n)],
               "force": [[1e-17, -2.0 / 7.0, 3.0] for _ in range(n)],
               "virial": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]}
              for k in range(nframes)]
    prov = {k: "x" for k in mg.PROVENANCE_KEYS}
    return {"schema": mg.SCHEMA, "description": "d", "model": "models/m.dp",
            "structure": "structures/s.xyz", "provenance": prov, "tolerance": tol,
            "frames": frames}


def test_format_golden_round_trips_exactly():
    doc = _doc(n=7, nframes=2)
    text = mg.format_golden(doc)
    assert json.loads(text) == doc
    assert list(json.loads(text)) == list(mg.GOLDEN_KEYS)
    assert mg.check_golden(json.loads(text)) == []


def test_format_golden_rejects_nan():
    doc = _doc()
    doc["frames"][0]["energy"] = float("nan")
    with pytest.raises(ValueError):
        mg.format_golden(doc)


def test_check_golden_finds_problems():
    doc = _doc(n=3)
    doc["frames"][0]["force"] = doc["frames"][0]["force"][:2]
    del doc["tolerance"]["virial"]
    problems = mg.check_golden(doc)
    assert any("force" in p for p in problems)
    assert any("tolerance.virial" in p for p in problems)
    assert mg.check_golden({"schema": mg.SCHEMA})  # missing keys


def test_rel_err_and_compare_golden():
    assert mg.rel_err([1.0, -2.0], [1.0, -2.0]) == 0.0
    assert mg.rel_err([[1.0, 3.0]], [[1.0, -4.0]]) == pytest.approx(7.0 / 4.0)
    assert mg.rel_err(0.5, 0.0) == 0.5
    ref = _doc(n=2)
    new = json.loads(json.dumps(ref))
    assert mg.compare_golden(new, ref) == []
    new["frames"][0]["force"][1][2] += 3.0 * 1e-11  # relative 1e-11: within 1e-10
    assert mg.compare_golden(new, ref) == []
    new["frames"][0]["force"][1][2] += 3.0 * 1e-9
    msgs = mg.compare_golden(new, ref)
    assert len(msgs) == 1 and "force" in msgs[0]


def test_ceil_1sig():
    assert mg.ceil_1sig(3.2e-7) == 4e-7
    assert mg.ceil_1sig(1.61e-5) == 2e-5
    assert mg.ceil_1sig(2e-6) == 2e-6
    assert mg.ceil_1sig(9.5e-3) == 1e-2


def test_golden_name():
    assert mg.golden_name("m", "s.xyz", "pth") == "m__s.json"
    assert mg.golden_name("m", "s.gro", "pth") == "m__s_gro.json"
    assert mg.golden_name("m", "s.xyz", "f64eval") == "m__s__f64eval.json"
    assert mg.golden_name("m", "s.xyz", "compressed") == "compressed_m__s.json"
    assert mg.golden_name("m", "s.xyz", "compressed_coarse") == "compressed_coarse_m__s.json"
    assert mg.compressed_dp_name("m", "compressed_coarse") == "compressed_coarse_m.dp"


# --- optional keys: nparams, compression ---------------------------------------------------------

def _compressed_doc():
    doc = _doc(n=2)
    doc["provenance"]["nparams"] = 30
    doc["provenance"]["nparams_detail"] = {"descriptor": 10, "fitting_net": 20}
    doc["compression"] = {
        "stride0": 0.01, "stride1": 0.1, "extrapolate": 5, "check_frequency": -1,
        "min_nbor_dist": 0.9916652661054535, "command": "dp --pt compress",
        "tables": [{"net": 0, "info": [-1.0, 13.0, 65.0, 0.01, 0.1, -1.0],
                    "shape": [1920, 96]}],
        "deepmd_rel_diff_vs_uncompressed": {q: 1e-13 for q in mg.QUANTITIES}}
    return doc


def test_format_golden_with_compression_round_trips():
    doc = _compressed_doc()
    text = mg.format_golden(doc)
    back = json.loads(text)
    assert back == doc
    assert list(back) == list(mg.GOLDEN_KEYS[:-1]) + ["compression", "frames"]
    assert '"info": [-1.0, 13.0, 65.0, 0.01, 0.1, -1.0]' in text
    assert mg.check_golden(back) == []


def test_check_golden_optional_keys():
    doc = _compressed_doc()
    doc["provenance"]["nparams"] = 31
    assert any("nparams" in p for p in mg.check_golden(doc))
    doc = _compressed_doc()
    doc["provenance"]["nparams"] = 2.5
    assert any("nparams" in p for p in mg.check_golden(doc))
    doc = _compressed_doc()
    del doc["compression"]["min_nbor_dist"]
    assert any("min_nbor_dist" in p for p in mg.check_golden(doc))
    doc = _compressed_doc()
    doc["compression"]["check_frequency"] = 1.5
    assert any("check_frequency" in p for p in mg.check_golden(doc))
    doc = _compressed_doc()
    del doc["compression"]["deepmd_rel_diff_vs_uncompressed"]["force"]
    assert any("deepmd_rel_diff" in p for p in mg.check_golden(doc))
    doc = _compressed_doc()
    doc["extra"] = 1
    assert any("unknown" in p for p in mg.check_golden(doc))
    doc = _compressed_doc()
    doc["provenance"]["sensitive_pairs"] = [[0, 73, 149, 5.9998]]
    assert mg.check_golden(doc) == []
    doc["provenance"]["sensitive_pairs"] = [[0, 73, 149]]
    assert any("sensitive_pairs" in p for p in mg.check_golden(doc))


def test_compare_golden_compression_parameters():
    ref = _compressed_doc()
    new = json.loads(json.dumps(ref))
    assert mg.compare_golden(new, ref) == []
    new["compression"]["stride0"] = 0.02
    assert any("stride0" in m for m in mg.compare_golden(new, ref))
    new = json.loads(json.dumps(ref))
    del new["compression"]
    assert any("compression" in m for m in mg.compare_golden(new, ref))


# --- the committed data -------------------------------------------------------------------------

def test_generated_files_are_committed():
    for group in mg.generated_files():
        for f in group:
            assert (DATA / f).is_file(), f
    for f in mg.BAD_FILES:
        assert (REPO / f).is_file(), f


@pytest.mark.parametrize("path", GOLDENS, ids=[g.stem for g in GOLDENS])
def test_committed_golden_schema(path):
    doc = load(path)
    assert mg.check_golden(doc, DATA) == []


@pytest.mark.parametrize("path", GOLDENS, ids=[g.stem for g in GOLDENS])
def test_committed_golden_energy_is_sum_of_atom_energies(path):
    doc = load(path)
    for fr in doc["frames"]:
        s = math.fsum(fr["atom_energy"])
        assert abs(fr["energy"] - s) <= 1e-12 * abs(s)


def test_every_model_and_structure_is_covered():
    models, structures, goldens = mg.generated_files()
    docs = [load(DATA / g) for g in goldens]
    used_models = {d["model"] for d in docs}
    used_models |= {d["compression"]["compressed_model"] for d in docs
                    if "compressed_model" in d.get("compression", {})}
    used_structures = {d["structure"] for d in docs}
    assert set(models) <= used_models, sorted(set(models) - used_models)
    assert set(structures) <= used_structures, sorted(set(structures) - used_structures)


def test_committed_structures():
    s = DATA / "structures"
    ortho = mg.read_xyz(s / "water_192_ortho.xyz")[0]
    gro = mg.read_gro(s / "water_192_ortho.gro")[0]
    assert len(ortho["species"]) >= 192 and ortho["species"] == gro["species"]
    assert max(abs(a - b) for a, b in zip(mg._flatten(ortho["positions"]),
                                          mg._flatten(gro["positions"]))) < 1e-9
    tric = mg.read_xyz(s / "water_192_triclinic.xyz")[0]
    assert len(tric["species"]) >= 192
    assert any(tric["cell"][i][j] != 0.0 for i in range(3) for j in range(3) if i != j)
    small = mg.read_xyz(s / "water_96_small.xyz")[0]
    assert min(small["cell"][i][i] for i in range(3)) < 12.0
    assert len(mg.read_xyz(s / "water_192_ortho_3frames.xyz")) == 3
    cluster = mg.read_xyz(s / "water_48_cluster.xyz")[0]
    assert cluster["cell"] is None and cluster["pbc"] == [False] * 3
    assert mg.read_xyz(s / "deeppot_case2.xyz")[0]["cell"] is None


def test_example_water():
    ex = REPO / "examples" / "water"
    frames = mg.read_gro(ex / "water.gro")
    assert len(frames[0]["species"]) >= 1500
    link = ex / "water.dp"
    assert link.resolve() == (DATA / "models" / "se_e2_a_water_one_side.dp").resolve()


def test_golden_names_label_the_descriptor():
    """DPA-1 goldens start with dpa1_ or se_atten_v2_, compressed ones with compressed_, so that
    the golden tests can be labelled; compressed goldens and only they carry "compression"."""
    for g in GOLDENS:
        doc = load(g)
        model = doc["model"].split("/")[-1][:-3]
        compressed = g.name.startswith("compressed_")
        assert ("compression" in doc) == compressed, g.name
        if compressed:
            assert g.name.split("__")[0].endswith(model), g.name
        elif model != "deeppot":
            assert g.name.startswith(model + "__"), g.name
        if model.startswith(("dpa1_", "se_atten_v2_")):
            assert "nparams" in doc["provenance"], g.name


def test_compressed_goldens():
    for g in GOLDENS:
        doc = load(g)
        comp = doc.get("compression")
        if comp is None:
            continue
        assert comp["stride1"] == pytest.approx(10 * comp["stride0"])
        for t in comp["tables"]:
            lower, upper, table_max, s0, s1, cf = t["info"]
            assert (s0, s1, cf) == (comp["stride0"], comp["stride1"], comp["check_frequency"])
            assert table_max == upper * comp["extrapolate"]
            assert lower == math.floor(lower) and upper == math.ceil(upper)
            n1 = int((upper - lower) / s0)
            assert t["shape"][0] == int((upper - lower) / s0 + (table_max - upper) / s1)
            assert t["shape"][0] > n1 and t["shape"][1] % 6 == 0


def test_hcno_mixture():
    (fr,) = mg.read_xyz(DATA / "structures" / mg.HCNO_BOX)
    assert set(fr["species"]) == {"H", "C", "N", "O"}
    assert 150 <= len(fr["species"]) <= 300
    assert fr["pbc"] == [True] * 3
    first_seen = list(dict.fromkeys(fr["species"]))
    assert first_seen != ["H", "C", "N", "O"]


def test_sensitive_pairs_are_near_rcut():
    """Goldens flagged as sensitive list neighbour entries within 1e-3 A of rcut."""
    n = 0
    for g in GOLDENS:
        doc = load(g)
        for frame, i, j, r in doc["provenance"].get("sensitive_pairs", []):
            n += 1
            assert g.name.startswith("dpa1_") and 5.999 < r < 6.0, g.name
            assert frame < len(doc["frames"]) and i != j
    assert n > 0
