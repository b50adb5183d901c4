#!/usr/bin/env python3
"""Golden reference data for halomd's tests, computed by DeePMD-kit itself.

    python python/halomd/make_golden.py --update   regenerate tests/data/{models,structures,golden}
                                                   and examples/water/{water.gro,water.dp}
    python python/halomd/make_golden.py            regenerate into a temporary folder and compare
                                                   with the committed files (exit 1 on a difference)

Generation needs deepmd-kit with the PyTorch backend, ASE, numpy and GROMACS (`gmx solvate`);
see tests/data/README.md. The helpers above the "Generation" line use only the standard library
(tests/python/test_make_golden.py runs them with Debian's python3).

Pipeline:
1. Structures: `gmx solvate` fills boxes with the equilibrated SPC water of spc216.gro
   (deterministic), written as extended XYZ by ASE; derived files (cluster, multi-frame, mixed
   O/H/C box) are made from them with a seeded numpy generator. Every golden is computed on the
   coordinates as read back from the written file (XYZ: 8 decimals, Å; GRO: 3 decimals, nm x 10).
2. Models: built with deepmd.pt get_model() from a normalised config (random weights, fixed
   seeds, no training), descriptor statistics (davg/dstd) computed by DeePMD-kit from the water
   boxes, energy bias set to fixed per-type values, scripted and saved as .pth, converted with
   `dp convert-backend x.pth x.dp`. The .dp is checked against the .pth (energies).
3. Goldens: DeepPot(x.pth).eval(..., atomic=True) in float64 (the .dp numpy path has no forces).
4. DeePMD-kit's own test case (deeppot.dp + deeppot-testcase.yaml) converted to structures and
   goldens.
"""

import argparse
import copy
import datetime
import hashlib
import json
import math
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
SCHEMA = "halomd-golden-1"
TOL_DEFINITION = "max|a-b| / max|b| over the array, per frame"
TOL_FP64 = 1e-10
QUANTITIES = ("energy", "atom_energy", "force", "virial")
GOLDEN_KEYS = ("schema", "description", "model", "structure", "provenance", "tolerance", "frames")
PROVENANCE_KEYS = ("tool", "deepmd_kit_version", "torch_version", "backend", "date", "command",
                   "notes")
UPSTREAM_TESTCASE = ("deepmodeling/deepmd-kit source/tests/infer/deeppot-testcase.yaml "
                     "(model source/tests/infer/deeppot.yaml as deeppot.dp), LGPL-3.0-or-later")


# ------------------------------------------------------------------------------------------------
# Pure helpers (standard library only)
# ------------------------------------------------------------------------------------------------

def _flatten(x):
    if isinstance(x, (list, tuple)):
        out = []
        for v in x:
            out.extend(_flatten(v))
        return out
    return [float(x)]


def rel_err(a, b):
    """max|a-b| / max|b| over two equally shaped (nested) arrays or scalars.

    When b is all zero the absolute difference is returned."""
    fa, fb = _flatten(a), _flatten(b)
    if len(fa) != len(fb):
        raise ValueError(f"shape mismatch: {len(fa)} vs {len(fb)} values")
    if not fa:
        return 0.0
    diff = max(abs(x - y) for x, y in zip(fa, fb))
    scale = max(abs(y) for y in fb)
    return diff / scale if scale > 0 else diff


def ceil_1sig(x):
    """Rounds x > 0 up to one significant digit (3.2e-7 -> 4e-7)."""
    e = math.floor(math.log10(x))
    m = math.ceil(x / 10.0**e - 1e-9)
    return float(f"{m}e{e}")


# --- DeePMD-kit test-case YAML -----------------------------------------------------------------

_KEY_RE = re.compile(r"^(\s*)(-\s+)?([A-Za-z_][A-Za-z0-9_]*):\s*(.*)$")
_INT_RE = re.compile(r"^[+-]?\d+$")


def _parse_flow_value(text, where):
    text = text.strip()
    if text in ("", "null", "~", "Null", "NULL"):
        return None
    if not (text.startswith("[") and text.endswith("]")):
        raise ValueError(f"{where}: expected a flow list [...] or null, got {text[:40]!r}")
    items = [t.strip() for t in text[1:-1].split(",")]
    items = [t for t in items if t]
    if items and all(_INT_RE.match(t) for t in items):
        return [int(t) for t in items]
    # float() reads YAML 1.1 numbers that yaml.safe_load gets wrong ("1.0e01") or oddly ("00.25")
    try:
        return [float(t) for t in items]
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None


def parse_testcase_yaml(text):
    """Reads the `results:` list of DeePMD-kit's source/tests/infer/*-testcase.yaml.

    Returns a list of dicts, one per result entry, key -> list of numbers (ints when every item
    is an integer) or None. Only the flow-list form those files use is supported; numbers are
    read with float(), so `00.25`, `3.00` and `1.0e01` all come out right."""
    lines = text.splitlines()
    try:
        start = next(i for i, ln in enumerate(lines) if ln.rstrip() == "results:")
    except StopIteration:
        raise ValueError("no top-level 'results:' key") from None
    cases, key, buf, case = [], None, [], None

    def flush():
        if key is not None:
            case[key] = _parse_flow_value(" ".join(buf), f"results[{len(cases) - 1}].{key}")

    for lineno, raw in enumerate(lines[start + 1:], start + 2):
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        if not line[0].isspace():  # next top-level key: the results block is over
            break
        m = _KEY_RE.match(line)
        if m:
            flush()
            if m.group(2):
                case = {}
                cases.append(case)
            elif case is None:
                raise ValueError(f"line {lineno}: key outside a '- ' entry")
            key, buf = m.group(3), [m.group(4)]
        else:
            if key is None:
                raise ValueError(f"line {lineno}: value without a key")
            buf.append(line.strip())
    flush()
    return cases


def testcase_to_golden(case, type_map):
    """One test-case entry -> (structure dict, golden frame dict).

    energy = sum of atomic energies and virial = sum of atomic virials (math.fsum: correctly
    rounded), virial reshaped 3x3 row-major."""
    atype = case["atype"]
    n = len(atype)
    need = {"coord": 3 * n, "atomic_energy": n, "force": 3 * n, "atomic_virial": 9 * n}
    for k, size in need.items():
        if case.get(k) is None or len(case[k]) != size:
            raise ValueError(f"test case: '{k}' should have {size} values")
    box = case.get("box")
    if box is not None and len(box) != 9:
        raise ValueError("test case: 'box' should have 9 values or be null")
    c, f, av = case["coord"], case["force"], case["atomic_virial"]
    structure = {
        "species": [type_map[t] for t in atype],
        "positions": [[float(c[3 * i + k]) for k in range(3)] for i in range(n)],
        "cell": None if box is None else [[float(box[3 * r + k]) for k in range(3)]
                                          for r in range(3)],
        "pbc": [box is not None] * 3,
    }
    virial = [math.fsum(av[9 * i + j] for i in range(n)) for j in range(9)]
    frame = {
        "energy": math.fsum(case["atomic_energy"]),
        "atom_energy": [float(x) for x in case["atomic_energy"]],
        "force": [[float(f[3 * i + k]) for k in range(3)] for i in range(n)],
        "virial": [virial[0:3], virial[3:6], virial[6:9]],
    }
    return structure, frame


# --- structure readers (what halomd reads, without ASE) -----------------------------------------

def read_xyz(path):
    """Extended XYZ as written by ASE: list of frames {species, positions (Å), cell (3 row
    vectors, Å, or None), pbc}. Multi-frame files give several frames."""
    lines = Path(path).read_text().splitlines()
    frames, i = [], 0
    while i < len(lines):
        if not lines[i].strip():
            i += 1
            continue
        n = int(lines[i])
        info = {}
        for tok in shlex.split(lines[i + 1]):
            k, _, v = tok.partition("=")
            info[k.lower()] = v
        props = info.get("properties", "species:S:1:pos:R:3").split(":")
        cols, col = {}, 0
        for name, _kind, width in zip(props[0::3], props[1::3], props[2::3]):
            cols[name] = col
            col += int(width)
        cell = None
        if "lattice" in info:
            v = [float(x) for x in info["lattice"].split()]
            cell = [v[0:3], v[3:6], v[6:9]]
        if "pbc" in info:
            pbc = [t in ("T", "True", "true", "1") for t in info["pbc"].split()]
        else:
            pbc = [cell is not None] * 3
        species, pos = [], []
        for ln in lines[i + 2:i + 2 + n]:
            t = ln.split()
            species.append(t[cols["species"]])
            p = cols["pos"]
            pos.append([float(t[p]), float(t[p + 1]), float(t[p + 2])])
        if len(species) != n:
            raise ValueError(f"{path}: frame {len(frames)} is truncated")
        frames.append({"species": species, "positions": pos, "cell": cell, "pbc": pbc})
        i += 2 + n
    return frames


def gro_element(atom_name):
    """Element of a water atom name (OW -> O, HW1 -> H): its first letter."""
    letters = [ch for ch in atom_name if ch.isalpha()]
    if not letters:
        raise ValueError(f"atom name {atom_name!r} has no letter")
    return letters[0].upper()


def read_gro(path):
    """GROMACS .gro (fixed columns, %8.3f positions in nm): list of frames as read_xyz, positions
    and cell converted nm -> Å by multiplying by 10."""
    lines = Path(path).read_text().splitlines()
    frames, i = [], 0
    while i < len(lines) and lines[i].strip():
        n = int(lines[i + 1])
        species, pos = [], []
        for ln in lines[i + 2:i + 2 + n]:
            species.append(gro_element(ln[10:15].strip()))
            pos.append([float(ln[20 + 8 * k:28 + 8 * k]) * 10.0 for k in range(3)])
        b = [float(x) * 10.0 for x in lines[i + 2 + n].split()]
        if len(b) == 3:
            b += [0.0] * 6
        # box line: v1(x) v2(y) v3(z) v1(y) v1(z) v2(x) v2(z) v3(x) v3(y)
        cell = [[b[0], b[3], b[4]], [b[5], b[1], b[6]], [b[7], b[8], b[2]]]
        frames.append({"species": species, "positions": pos, "cell": cell,
                       "pbc": [True, True, True]})
        i += 3 + n
    return frames


def read_structure(path):
    path = Path(path)
    if path.suffix == ".gro":
        return read_gro(path)
    if path.suffix in (".xyz", ".extxyz"):
        return read_xyz(path)
    raise ValueError(f"{path}: unknown structure format")


# --- golden files -------------------------------------------------------------------------------

def _num(x):
    x = float(x)
    if not math.isfinite(x):
        raise ValueError(f"non-finite value {x} in a golden file")
    return repr(x)


def _vec(v):
    return "[" + ", ".join(_num(x) for x in v) + "]"


def format_golden(doc):
    """JSON text of a golden document: keys in schema order, floats as repr (round-trip exact),
    one force row per line."""
    out = ["{"]
    for k in ("schema", "description", "model", "structure"):
        out.append(f"  {json.dumps(k)}: {json.dumps(doc[k])},")
    prov = json.dumps(doc["provenance"], indent=2).replace("\n", "\n  ")
    out.append(f'  "provenance": {prov},')
    out.append(f'  "tolerance": {json.dumps(doc["tolerance"])},')
    out.append('  "frames": [')
    for fi, fr in enumerate(doc["frames"]):
        ae = fr["atom_energy"]
        ae_rows = ",\n        ".join(", ".join(_num(x) for x in ae[j:j + 4])
                                      for j in range(0, len(ae), 4))
        forces = ",\n        ".join(_vec(r) for r in fr["force"])
        out.append("    {")
        out.append(f'      "energy": {_num(fr["energy"])},')
        out.append(f'      "atom_energy": [\n        {ae_rows}\n      ],')
        out.append(f'      "force": [\n        {forces}\n      ],')
        out.append(f'      "virial": [{", ".join(_vec(r) for r in fr["virial"])}]')
        out.append("    }" + ("," if fi + 1 < len(doc["frames"]) else ""))
    out.append("  ]")
    out.append("}")
    return "\n".join(out) + "\n"


def check_golden(doc, data_dir=None):
    """Schema check of a golden document. With data_dir (tests/data), also checks that the model
    and structure files exist and that the frames match the structure (count, atoms).
    Returns a list of problems (empty when fine)."""
    p = []
    for k in GOLDEN_KEYS:
        if k not in doc:
            p.append(f"missing key '{k}'")
    if p:
        return p
    if doc["schema"] != SCHEMA:
        p.append(f"schema is {doc['schema']!r}, expected {SCHEMA!r}")
    if not isinstance(doc["description"], str) or "\n" in doc["description"]:
        p.append("description should be one line of text")
    for k in PROVENANCE_KEYS:
        if not isinstance(doc["provenance"].get(k), str) or not doc["provenance"][k]:
            p.append(f"provenance.{k} missing or empty")
    tol = doc["tolerance"]
    for q in QUANTITIES:
        v = tol.get(q)
        if not isinstance(v, (int, float)) or not (0 < v < 1):
            p.append(f"tolerance.{q} missing or not in (0, 1)")
    if tol.get("definition") != TOL_DEFINITION:
        p.append("tolerance.definition differs from the schema's")
    frames = doc["frames"]
    if not isinstance(frames, list) or not frames:
        p.append("frames should be a non-empty list")
        return p
    natoms = None
    if data_dir is not None:
        data_dir = Path(data_dir)
        if not (data_dir / doc["model"]).is_file():
            p.append(f"model file {doc['model']} not found")
        spath = data_dir / doc["structure"]
        if not spath.is_file():
            p.append(f"structure file {doc['structure']} not found")
        else:
            sframes = read_structure(spath)
            if len(sframes) != len(frames):
                p.append(f"{len(frames)} frames, structure has {len(sframes)}")
            natoms = [len(s["species"]) for s in sframes]
    for i, fr in enumerate(frames):
        where = f"frames[{i}]"
        if set(fr) != set(QUANTITIES):
            p.append(f"{where}: keys {sorted(fr)}, expected {sorted(QUANTITIES)}")
            continue
        n = len(fr["atom_energy"])
        if natoms is not None and i < len(natoms) and natoms[i] != n:
            p.append(f"{where}: {n} atom energies, structure frame has {natoms[i]} atoms")
        if len(fr["force"]) != n or any(len(r) != 3 for r in fr["force"]):
            p.append(f"{where}: force should be {n} x 3")
        if len(fr["virial"]) != 3 or any(len(r) != 3 for r in fr["virial"]):
            p.append(f"{where}: virial should be 3 x 3")
        try:
            vals = _flatten([fr["energy"], fr["atom_energy"], fr["force"], fr["virial"]])
        except (TypeError, ValueError):
            p.append(f"{where}: non-numeric values")
            continue
        if not all(math.isfinite(v) for v in vals):
            p.append(f"{where}: non-finite values")
    return p


def compare_golden(new, ref):
    """Differences of `new` against the committed `ref`, using ref's tolerance.
    Returns a list of messages (empty when within tolerance)."""
    msgs = []
    for k in ("description", "model", "structure"):
        if new.get(k) != ref.get(k):
            msgs.append(f"{k}: {new.get(k)!r} != {ref.get(k)!r}")
    if len(new["frames"]) != len(ref["frames"]):
        return msgs + [f"{len(new['frames'])} frames != {len(ref['frames'])}"]
    for i, (a, b) in enumerate(zip(new["frames"], ref["frames"])):
        for q in QUANTITIES:
            try:
                err = rel_err(a[q], b[q])
            except ValueError as exc:
                msgs.append(f"frame {i} {q}: {exc}")
                continue
            if not err <= ref["tolerance"][q]:
                msgs.append(f"frame {i} {q}: relative difference {err:.3e} > tolerance "
                            f"{ref['tolerance'][q]:.1e}")
    return msgs


def compare_structures(new_path, ref_path, tol=1e-8):
    msgs = []
    a, b = read_structure(new_path), read_structure(ref_path)
    if len(a) != len(b):
        return [f"{len(a)} frames != {len(b)}"]
    for i, (fa, fb) in enumerate(zip(a, b)):
        if fa["species"] != fb["species"]:
            msgs.append(f"frame {i}: species differ")
            continue
        if fa["pbc"] != fb["pbc"] or (fa["cell"] is None) != (fb["cell"] is None):
            msgs.append(f"frame {i}: periodicity differs")
            continue
        d = max(abs(x - y) for x, y in zip(_flatten(fa["positions"]), _flatten(fb["positions"])))
        if fa["cell"] is not None:
            d = max(d, max(abs(x - y) for x, y in zip(_flatten(fa["cell"]),
                                                        _flatten(fb["cell"]))))
        if d > tol:
            msgs.append(f"frame {i}: coordinates differ by up to {d:.3e} Å")
    return msgs


# ------------------------------------------------------------------------------------------------
# Generation (needs deepmd-kit[torch], ase, numpy, gmx)
# ------------------------------------------------------------------------------------------------

# Boxes filled by `gmx solvate -cs spc216.gro` (deterministic); sizes in nm chosen so that solvate
# leaves exactly this many waters, at 0.98-1.0 g/cm3 (the count is asserted). Triclinic: the GRO
# box line v1(x) v2(y) v3(z) v1(y) v1(z) v2(x) v2(z) v3(x) v3(y), i.e. a=(1.26,0,0),
# b=(0.40,1.20,0), c=(-0.30,0.35,1.27) nm.
GMX_BOXES = {
    "water_192_ortho": {"box": (1.19, 1.25, 1.30), "nwater": 64},
    "water_192_triclinic": {"triclinic": (1.26, 1.20, 1.27, 0.0, 0.0, 0.40, 0.0, -0.30, 0.35),
                            "nwater": 64},
    "water_96_small": {"box": (0.96, 0.98, 1.02), "nwater": 32},
    "example_water_1536": {"box": (2.48, 2.52, 2.51), "nwater": 512},
}
SEED_DISPLACE = 20251129      # numpy default_rng seed of the multi-frame displacements
DISPLACE_SIGMA = 0.02         # Å, Gaussian per coordinate
FRAME3_SCALE = 1.01           # third frame: cell and positions scaled by this
CLUSTER_NWATER = 16
MIXED_C_WATERS = (0, 8, 16, 24)  # waters of the small box whose O becomes C

# Per-type energy bias (eV): the bias_atom_e of DeePMD-kit's own PyTorch water test model
# (source/tests/infer/deeppot_sea.yaml: -93.5737, -187.1474), rounded; its 1:2 ratio is the
# minimum-norm least-squares fit DeePMD-kit makes from water-only energies. C is arbitrary.
BIAS = {"O": -93.57, "H": -187.15, "C": -155.0}


def _water_config(type_one_side, precision, seed):
    return {
        "type_map": ["O", "H"],
        "descriptor": {"type": "se_e2_a", "rcut": 6.0, "rcut_smth": 0.5, "sel": [46, 92],
                       "neuron": [25, 50, 100], "axis_neuron": 16,
                       "type_one_side": type_one_side, "resnet_dt": False,
                       "activation_function": "tanh", "precision": precision, "seed": seed},
        "fitting_net": {"neuron": [240, 240, 240], "resnet_dt": True,
                        "activation_function": "tanh", "precision": precision,
                        "seed": seed + 1},
    }


STAT_WATER = ["water_192_ortho.xyz", "water_192_triclinic.xyz", "water_96_small.xyz"]

# out_bias: model-level bias (PyTorch 3.x place); bias_atom_e: fitting-level bias. DeePMD-kit adds
# both; the 3-type variant splits the per-type bias between them so that both paths are tested.
MODELS = {
    "se_e2_a_water_one_side": {
        "config": _water_config(True, "float64", 1),
        "out_bias": [BIAS["O"], BIAS["H"]], "bias_atom_e": None, "stat": STAT_WATER,
        "about": "se_e2_a water model (DeePMD-kit v2 water setting, type_one_side, float64)"},
    "se_e2_a_water_two_side": {
        "config": _water_config(False, "float64", 3),
        "out_bias": [BIAS["O"], BIAS["H"]], "bias_atom_e": None, "stat": STAT_WATER,
        "about": "se_e2_a water model (DeePMD-kit v2 water setting, two-side, float64)"},
    "se_e2_a_water_fp32": {
        "config": _water_config(True, "float32", 5),
        "out_bias": [BIAS["O"], BIAS["H"]], "bias_atom_e": None, "stat": STAT_WATER,
        "about": "se_e2_a water model (type_one_side, float32 descriptor and fitting)"},
    "se_e2_a_small_gelu_excl": {
        "config": {
            "type_map": ["O", "H"],
            "descriptor": {"type": "se_e2_a", "rcut": 6.0, "rcut_smth": 0.5, "sel": [46, 92],
                           "neuron": [8, 16, 32], "axis_neuron": 4, "type_one_side": False,
                           "resnet_dt": True, "activation_function": "gelu",
                           "exclude_types": [[0, 1]], "env_protection": 0.1,
                           "precision": "float64", "seed": 7},
            "fitting_net": {"neuron": [32, 32, 32], "resnet_dt": True,
                            "activation_function": "silu", "precision": "float64", "seed": 8},
        },
        "out_bias": [BIAS["O"], BIAS["H"]], "bias_atom_e": None, "stat": STAT_WATER,
        "about": ("small se_e2_a variant (two-side, exclude_types [[0,1]], gelu embedding with "
                  "resnet_dt, env_protection 0.1, silu fitting)")},
    "se_e2_a_small_3types": {
        "config": {
            "type_map": ["O", "H", "C"],
            "descriptor": {"type": "se_e2_a", "rcut": 5.0, "rcut_smth": 1.0,
                           "sel": [46, 92, 8], "neuron": [8, 16, 32], "axis_neuron": 4,
                           "type_one_side": True, "resnet_dt": True,
                           "activation_function": "softplus", "exclude_types": [[1, 1]],
                           "precision": "float64", "seed": 9},
            "fitting_net": {"neuron": [32, 32, 32], "resnet_dt": False,
                            "activation_function": "relu", "precision": "float64", "seed": 10},
        },
        # sums: O -93.57, H -187.15, C -155.0 (BIAS)
        "out_bias": [-3.57, -7.15, -5.0], "bias_atom_e": [-90.0, -180.0, -150.0],
        "stat": STAT_WATER + ["ohc_96_small_mixed.xyz"],
        "about": ("small se_e2_a variant (3 types O/H/C, one-side, exclude_types [[1,1]], "
                  "softplus embedding with resnet_dt, relu fitting, rcut 5.0, rcut_smth 1.0, "
                  "bias split between bias_atom_e and out_bias)")},
}

STRUCTURE_ABOUT = {
    "water_192_ortho.xyz": "64 SPC waters, orthorhombic box 11.9 x 12.5 x 13.0 A",
    "water_192_ortho.gro": "64 SPC waters, orthorhombic box 11.9 x 12.5 x 13.0 A, read from .gro",
    "water_192_triclinic.xyz": "64 SPC waters, triclinic box",
    "water_96_small.xyz": "32 SPC waters, box 9.6 x 9.8 x 10.2 A (< 2 rcut: periodic images "
                          "are neighbours)",
    "water_192_ortho_3frames.xyz": "3 frames of the orthorhombic 64-water box (as is, "
                                   "displaced, displaced and scaled by 1.01)",
    "water_48_cluster.xyz": "non-periodic cluster of 16 waters",
    "ohc_96_small_mixed.xyz": "the 32-water small box with 4 O relabelled C",
}

DEEPPOT_CASES = [f"deeppot_case{k}.xyz" for k in (1, 2, 3)]


def generated_files():
    """Model, structure and golden files (relative to tests/data) that generate() writes."""
    models = [f"models/{m}.dp" for m in MODELS] + ["models/deeppot.dp"]
    structures = [f"structures/{s}" for s in list(STRUCTURE_ABOUT) + DEEPPOT_CASES]
    goldens = [f"golden/{golden_name(*g)}" for g in GOLDENS]
    goldens += [f"golden/{s.replace('.xyz', '.json')}" for s in DEEPPOT_CASES]
    return models, structures, goldens


# (model, structure, kind): kind "pth" = DeepPot(model.pth); "f64eval" = the same weights cast to
# float64 and evaluated in float64 by DeePMD-kit (only meaningful for the float32 model).
GOLDENS = [
    ("se_e2_a_water_one_side", "water_192_ortho.xyz", "pth"),
    ("se_e2_a_water_one_side", "water_192_ortho.gro", "pth"),
    ("se_e2_a_water_one_side", "water_192_triclinic.xyz", "pth"),
    ("se_e2_a_water_one_side", "water_96_small.xyz", "pth"),
    ("se_e2_a_water_one_side", "water_192_ortho_3frames.xyz", "pth"),
    ("se_e2_a_water_one_side", "water_48_cluster.xyz", "pth"),
    ("se_e2_a_water_two_side", "water_192_ortho.xyz", "pth"),
    ("se_e2_a_water_two_side", "water_192_triclinic.xyz", "pth"),
    ("se_e2_a_water_two_side", "water_96_small.xyz", "pth"),
    ("se_e2_a_water_two_side", "water_48_cluster.xyz", "pth"),
    ("se_e2_a_water_fp32", "water_192_ortho.xyz", "pth"),
    ("se_e2_a_water_fp32", "water_192_triclinic.xyz", "pth"),
    ("se_e2_a_water_fp32", "water_96_small.xyz", "pth"),
    ("se_e2_a_water_fp32", "water_192_ortho.xyz", "f64eval"),
    ("se_e2_a_small_gelu_excl", "water_96_small.xyz", "pth"),
    ("se_e2_a_small_gelu_excl", "water_192_triclinic.xyz", "pth"),
    ("se_e2_a_small_3types", "water_192_ortho.xyz", "pth"),
    ("se_e2_a_small_3types", "ohc_96_small_mixed.xyz", "pth"),
]


def golden_name(model, structure, kind):
    stem, suffix = structure.rsplit(".", 1)
    name = f"{model}__{stem}" + ("_gro" if suffix == "gro" else "")
    return name + ("__f64eval" if kind == "f64eval" else "") + ".json"


# DeepPot(x.dp) (numpy) against DeepPot(x.pth) (PyTorch): energy and atom energies, relative
DP_CHECK_TOL = {"float64": 1e-10, "float32": 1e-6}


def log(msg):
    print(f"[make_golden] {msg}", file=sys.stderr, flush=True)


# --- structures ---------------------------------------------------------------------------------

def _atoms(frame):
    import numpy as np
    from ase import Atoms
    if frame["cell"] is None:
        return Atoms(symbols=frame["species"], positions=np.array(frame["positions"]), pbc=False)
    return Atoms(symbols=frame["species"], positions=np.array(frame["positions"]),
                 cell=np.array(frame["cell"]), pbc=frame["pbc"])


def write_xyz(path, frames):
    """Writes frames with ASE's extended XYZ writer and checks that ASE and read_xyz agree."""
    from ase.io import read, write
    # cells from nm x 10 or scaling carry round-off (11.899999999999999): write 11.9
    frames = [dict(f, cell=None if f["cell"] is None else
                   [[round(x, 10) + 0.0 for x in row] for row in f["cell"]]) for f in frames]
    atoms = [_atoms(f) for f in frames]
    write(str(path), atoms, format="extxyz")
    back_ase = read(str(path), index=":", format="extxyz")
    back = read_xyz(path)
    assert len(back) == len(back_ase) == len(frames)
    for a, b in zip(back_ase, back):
        assert a.get_chemical_symbols() == b["species"]
        assert (a.positions == b["positions"]).all(), f"{path}: ASE and read_xyz disagree"
        if b["cell"] is not None:
            assert (a.cell.array == b["cell"]).all()
    return back


def _gmx_solvate(gmx, work, name, spec):
    work.mkdir(parents=True, exist_ok=True)
    out = work / f"{name}.gro"
    # no -maxsol: with it, which molecules solvate keeps varies from run to run
    cmd = [gmx, "solvate", "-cs", "spc216.gro", "-o", out.name]
    if "triclinic" in spec:
        (work / f"{name}_box.gro").write_text(
            "empty box\n0\n" + " ".join(f"{x:.5f}" for x in spec["triclinic"]) + "\n")
        cmd += ["-cp", f"{name}_box.gro"]
    else:
        cmd += ["-box"] + [f"{x:.3f}" for x in spec["box"]]
    env = dict(os.environ, GMX_MAXBACKUP="-1")
    res = subprocess.run(cmd, cwd=work, capture_output=True, text=True, env=env)
    if res.returncode != 0:
        raise RuntimeError(f"{shlex.join(cmd)} failed:\n{res.stderr[-2000:]}")
    frames = read_gro(out)
    nat = len(frames[0]["species"])
    if nat != 3 * spec["nwater"]:
        raise RuntimeError(f"{shlex.join(cmd)} gave {nat // 3} waters, expected {spec['nwater']}")
    return out, frames[0], shlex.join(cmd)


def _retitle_gro(src, dst, title):
    lines = Path(src).read_text().splitlines()
    lines[0] = title
    Path(dst).write_text("\n".join(lines) + "\n")


def make_structures(sdir, exdir, work, gmx):
    """Writes every structure; returns {file name: frames as read back}."""
    import numpy as np
    sdir.mkdir(parents=True, exist_ok=True)
    exdir.mkdir(parents=True, exist_ok=True)
    got, cmds = {}, {}
    for name, spec in GMX_BOXES.items():
        out, frame, cmd = _gmx_solvate(gmx, work / "gmx", name, spec)
        cmds[name] = cmd
        if name == "example_water_1536":
            _retitle_gro(out, exdir / "water.gro",
                         f"512 SPC waters, {cmd} (halomd examples/water)")
            continue
        if name == "water_192_ortho":
            _retitle_gro(out, sdir / "water_192_ortho.gro",
                         f"64 SPC waters, {cmd} (halomd test data)")
            got["water_192_ortho.gro"] = read_gro(sdir / "water_192_ortho.gro")
        got[f"{name}.xyz"] = write_xyz(sdir / f"{name}.xyz", [frame])

    base = got["water_192_ortho.xyz"][0]
    pos0 = np.array(base["positions"])
    cell0 = np.array(base["cell"])
    rng = np.random.default_rng(SEED_DISPLACE)
    f1 = dict(base, positions=(pos0 + rng.normal(0, DISPLACE_SIGMA, pos0.shape)).tolist())
    p2 = (pos0 + rng.normal(0, DISPLACE_SIGMA, pos0.shape)) * FRAME3_SCALE
    f2 = dict(base, positions=p2.tolist(), cell=(cell0 * FRAME3_SCALE).tolist())
    got["water_192_ortho_3frames.xyz"] = write_xyz(sdir / "water_192_ortho_3frames.xyz",
                                                   [base, f1, f2])

    # cluster: the 16 waters whose O is nearest the box centre, H put next to their own O
    # (minimum image, orthorhombic box), centred on the origin, no cell
    L = np.diag(cell0)
    mol = pos0.reshape(-1, 3, 3)
    mol[:, 1:] -= np.round((mol[:, 1:] - mol[:, :1]) / L) * L
    pick = np.argsort(np.linalg.norm(mol[:, 0] - L / 2, axis=1), kind="stable")[:CLUSTER_NWATER]
    cl = mol[np.sort(pick)].reshape(-1, 3)
    cl -= cl.mean(axis=0)
    got["water_48_cluster.xyz"] = write_xyz(sdir / "water_48_cluster.xyz", [{
        "species": ["O", "H", "H"] * CLUSTER_NWATER, "positions": cl.tolist(), "cell": None,
        "pbc": [False] * 3}])

    small = got["water_96_small.xyz"][0]
    sp = list(small["species"])
    for w in MIXED_C_WATERS:
        assert sp[3 * w] == "O"
        sp[3 * w] = "C"
    got["ohc_96_small_mixed.xyz"] = write_xyz(sdir / "ohc_96_small_mixed.xyz",
                                              [dict(small, species=sp)])
    return got, cmds


# --- models -------------------------------------------------------------------------------------

def _dp_executable():
    cand = Path(sys.executable).parent / "dp"
    if cand.exists():
        return str(cand)
    found = shutil.which("dp")
    if not found:
        raise RuntimeError("the `dp` command of deepmd-kit was not found")
    return found


def _stat_sample(frames, type_map):
    import numpy as np
    import torch
    out = []
    for fr in frames:
        at = np.array([type_map.index(s) for s in fr["species"]], dtype=np.int64)
        counts = [int((at == t).sum()) for t in range(len(type_map))]
        out.append({
            "coord": torch.tensor(np.array(fr["positions"])[None], dtype=torch.float64),
            "atype": torch.tensor(at[None]),
            "box": torch.tensor(np.array(fr["cell"]).reshape(1, 9), dtype=torch.float64),
            "natoms": torch.tensor([[len(at), len(at)] + counts]),
        })
    return out


def normalized_config(config):
    from deepmd.utils.argcheck import model_args
    arg = model_args()
    cfg = arg.normalize_value(copy.deepcopy(config), trim_pattern="_*")
    arg.check_value(cfg, strict=True)
    return cfg


def build_model(name, spec, structures, work, models_dir):
    """Random-initialised model with DeePMD-kit statistics and bias -> work/name.pth, and
    `dp convert-backend` -> models_dir/name.dp."""
    import torch
    from deepmd.pt.model.model import get_model
    cfg = normalized_config(spec["config"])
    torch.manual_seed(cfg["descriptor"]["seed"])
    model = get_model(cfg).to("cpu")
    tm = cfg["type_map"]
    sampled = [s for f in spec["stat"] for s in _stat_sample(structures[f], tm)]
    model.atomic_model.compute_or_load_stat(lambda: sampled, None,
                                            compute_or_load_out_stat=False)
    with torch.no_grad():
        ob = model.atomic_model.out_bias
        ob[0, :, 0] = torch.tensor(spec["out_bias"], dtype=ob.dtype)
        if spec["bias_atom_e"] is not None:
            be = model.atomic_model.fitting_net.bias_atom_e
            be[:, 0] = torch.tensor(spec["bias_atom_e"], dtype=be.dtype)
    model.model_def_script = json.dumps(cfg)
    model.eval()
    pth = work / f"{name}.pth"
    torch.jit.save(torch.jit.script(model), str(pth), {"data_modifier.pth": ""})
    dp_file = models_dir / f"{name}.dp"
    cmd = [_dp_executable(), "convert-backend", str(pth), str(dp_file)]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"{shlex.join(cmd)} failed:\n{res.stderr[-2000:]}")
    return pth, dp_file, cfg


def _to_float64(obj):
    import numpy as np
    if isinstance(obj, dict):
        return {k: ("float64" if k == "precision" and v in ("float32", "single")
                    else _to_float64(v)) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_to_float64(v) for v in obj]
    if isinstance(obj, np.ndarray) and obj.dtype == np.float32:
        return obj.astype(np.float64)
    return obj


def make_f64_twin(pth, out):
    """The model of `pth` with every float32 weight cast (exactly) to float64 and every precision
    set to float64, through DeePMD-kit's own serialize/deserialize."""
    from deepmd.pt.utils.serialization import deserialize_to_file, serialize_from_file
    deserialize_to_file(str(out), _to_float64(serialize_from_file(str(pth))))
    return out


# --- evaluation ---------------------------------------------------------------------------------

_DEEPPOT_CACHE = {}


def deepmd_eval(model_file, frames, type_map):
    """DeepPot(model_file).eval(atomic=True) on frames of equal atoms; list of golden frames."""
    import numpy as np
    from deepmd.infer import DeepPot
    key = str(model_file)
    if key not in _DEEPPOT_CACHE:
        _DEEPPOT_CACHE[key] = DeepPot(key)
    dp = _DEEPPOT_CACHE[key]
    if list(dp.get_type_map()) != list(type_map):
        raise RuntimeError(f"{model_file}: type map {dp.get_type_map()} != {type_map}")
    species = frames[0]["species"]
    assert all(f["species"] == species for f in frames)
    atype = np.array([type_map.index(s) for s in species], dtype=np.int32)
    nf = len(frames)
    coords = np.array([f["positions"] for f in frames], dtype=np.float64).reshape(nf, -1)
    periodic = frames[0]["cell"] is not None
    assert all((f["cell"] is not None) == periodic and all(f["pbc"]) == periodic
               and any(f["pbc"]) == periodic for f in frames), "mixed periodicity"
    cells = (np.array([f["cell"] for f in frames], dtype=np.float64).reshape(nf, 9)
             if periodic else None)
    e, f, v, ae, _av = dp.eval(coords, cells, atype, atomic=True)
    out = []
    for i in range(nf):
        fr = {"energy": float(e[i].item()), "atom_energy": ae[i].reshape(-1).tolist(),
              "force": f[i].reshape(-1, 3).tolist(), "virial": v[i].reshape(3, 3).tolist()}
        if not all(math.isfinite(x) for x in _flatten(list(fr.values()))):
            raise RuntimeError(f"{model_file}: non-finite results")
        out.append(fr)
    return out


def check_dp_matches(dp_file, frames, expected, type_map, tol):
    """DeepPot(dp_file) (numpy backend: energies only) must reproduce the energies and atom
    energies `expected` (golden frames from the .pth) on `frames`. Returns the largest relative
    differences (energy, atom energies)."""
    import numpy as np
    from deepmd.infer import DeepPot
    key = str(dp_file)
    if key not in _DEEPPOT_CACHE:
        _DEEPPOT_CACHE[key] = DeepPot(key)
    dp = _DEEPPOT_CACHE[key]
    atype = np.array([type_map.index(s) for s in frames[0]["species"]], dtype=np.int32)
    err_e = err_ae = 0.0
    for fr, ref in zip(frames, expected, strict=True):
        cell = None if fr["cell"] is None else np.array(fr["cell"]).reshape(1, 9)
        e, _f, _v, ae, _av = dp.eval(np.array(fr["positions"]).reshape(1, -1), cell, atype,
                                     atomic=True)
        err_e = max(err_e, rel_err(float(e[0].item()), ref["energy"]))
        err_ae = max(err_ae, rel_err(ae[0].reshape(-1).tolist(), ref["atom_energy"]))
    if not (err_e <= tol and err_ae <= tol):
        raise RuntimeError(f"{dp_file} does not reproduce the .pth: energy rel. diff "
                           f"{err_e:.2e}, atom energies {err_ae:.2e} (> {tol:.0e}); the "
                           "conversion is not lossless")
    return err_e, err_ae


# --- documents ----------------------------------------------------------------------------------

def provenance(versions, command, notes, **over):
    p = {"tool": "deepmd-kit", "deepmd_kit_version": versions["deepmd"],
         "torch_version": versions["torch"], "backend": "pytorch (.pth)",
         "date": versions["date"], "command": command, "notes": notes}
    p.update(over)
    return p


def _model_notes(name, cfg, spec):
    d, f = cfg["descriptor"], cfg["fitting_net"]
    bias = f"out_bias {spec['out_bias']}"
    if spec["bias_atom_e"] is not None:
        bias += f" plus fitting bias_atom_e {spec['bias_atom_e']}"
    notes = (f"Model {name}: {spec['about']}; untrained, random weights from deepmd.pt "
             f"get_model() with descriptor seed {d['seed']} and fitting seed {f['seed']}; "
             f"davg/dstd computed by DeePMD-kit (compute_or_load_stat) from "
             f"{', '.join(spec['stat'])}; energy bias set by make_golden.py: {bias} eV per type "
             f"{cfg['type_map']}. Saved as .pth (torch.jit.script), converted with "
             f"`dp convert-backend`.")
    acts = {d["activation_function"], f["activation_function"]}
    if "softplus" in acts:
        notes += (" PyTorch's softplus returns x itself where x > 20 (F.softplus threshold), "
                  "DeePMD-kit's numpy one log(1+exp(x)).")
    if "gelu" in acts:
        notes += " gelu is the tanh approximation (F.gelu approximate='tanh')."
    return notes


def write_golden(path, doc):
    problems = check_golden(doc)
    if problems:
        raise RuntimeError(f"{path}: " + "; ".join(problems))
    text = format_golden(doc)
    if json.loads(text) != json.loads(json.dumps(doc)):
        raise RuntimeError(f"{path}: JSON round trip failed")
    Path(path).write_text(text)


# --- the whole generation -----------------------------------------------------------------------

def make_deeppot_case(shared, data, versions, command):
    """DeePMD-kit's test case: copy deeppot.dp, write structures and goldens from the YAML."""
    import numpy as np
    from deepmd.infer import DeepPot
    src_model = shared / "deeppot.dp"
    src_yaml = shared / "deeppot-testcase.yaml"
    shutil.copyfile(src_model, data / "models" / "deeppot.dp")
    text = src_yaml.read_text()
    sha = hashlib.sha256(text.encode()).hexdigest()
    cases = parse_testcase_yaml(text)
    if len(cases) != 3:
        raise RuntimeError(f"{src_yaml}: {len(cases)} results, expected 3")
    type_map = ["O", "H"]
    dp = DeepPot(str(data / "models" / "deeppot.dp"))
    for k, case in enumerate(cases, 1):
        structure, frame = testcase_to_golden(case, type_map)
        sname = f"deeppot_case{k}.xyz"
        back = write_xyz(data / "structures" / sname, [structure])[0]
        if back["positions"] != structure["positions"]:
            raise RuntimeError(f"{sname}: coordinates changed on writing")
        # consistency: the .dp (numpy path, energies) reproduces the YAML's atomic energies
        cell = None if back["cell"] is None else np.array(back["cell"]).reshape(1, 9)
        atype = np.array([type_map.index(s) for s in back["species"]], dtype=np.int32)
        _e, _f, _v, ae, _ = dp.eval(np.array(back["positions"]).reshape(1, -1), cell, atype,
                                    atomic=True)
        err = rel_err(ae.reshape(-1).tolist(), frame["atom_energy"])
        if err > 1e-10:
            raise RuntimeError(f"deeppot.dp does not reproduce case {k}: {err:.2e}")
        box = "non-periodic, no box" if cell is None else \
            "box " + " x ".join(f"{back['cell'][i][i]:g}" for i in range(3)) + " A"
        doc = {
            "schema": SCHEMA,
            "description": (f"DeePMD-kit's own test case {k} ({box}): deeppot.dp "
                            "(se_e2_a two-side, neuron [2,4,8]) expected values"),
            "model": "models/deeppot.dp",
            "structure": f"structures/{sname}",
            "provenance": provenance(
                versions, command,
                (f"Expected values copied from the upstream file {UPSTREAM_TESTCASE}; "
                 f"results[{k - 1}] of deeppot-testcase.yaml (sha256 {sha}). energy = "
                 "math.fsum of atomic_energy, virial = fsum of atomic_virial reshaped 3x3 "
                 "row-major, force as given. make_golden.py only converts them; it checked "
                 "that DeepPot('deeppot.dp') (deepmd-kit "
                 f"{versions['deepmd']}) reproduces the atomic energies to {err:.1e}."),
                deepmd_kit_version="upstream test data (computed by DeePMD-kit's developers)",
                torch_version="n/a",
                backend="upstream expected values (TensorFlow-origin model)"),
            "tolerance": {q: TOL_FP64 for q in QUANTITIES} | {"definition": TOL_DEFINITION},
            "frames": [frame],
        }
        write_golden(data / "golden" / f"deeppot_case{k}.json", doc)
    log("deeppot test case converted")


def generate(root, shared, gmx, command, work):
    """Writes tests/data/{models,structures,golden} and examples/water under `root`."""
    import deepmd
    import torch
    data = root / "tests" / "data"
    exdir = root / "examples" / "water"
    for sub in ("models", "structures", "golden"):
        (data / sub).mkdir(parents=True, exist_ok=True)
    versions = {"deepmd": deepmd.__version__, "torch": torch.__version__,
                "date": datetime.datetime.now(datetime.timezone.utc).strftime(
                    "%Y-%m-%dT%H:%M:%SZ")}

    structures, gmx_cmds = make_structures(data / "structures", exdir, work, gmx)
    log(f"structures written: {', '.join(sorted(structures))}")
    make_deeppot_case(shared, data, versions, command)

    built = {}
    for name, spec in MODELS.items():
        pth, dp_file, cfg = build_model(name, spec, structures, work, data / "models")
        tol = DP_CHECK_TOL[cfg["descriptor"]["precision"]]
        ortho = structures["water_192_ortho.xyz"]
        err = check_dp_matches(dp_file, ortho, deepmd_eval(pth, ortho, cfg["type_map"]),
                               cfg["type_map"], tol)
        built[name] = (pth, cfg)
        log(f"model {name}: {dp_file.stat().st_size / 1e6:.2f} MB, .dp vs .pth energy "
            f"rel. diff {err[0]:.1e}, atom energies {err[1]:.1e}")
    os.symlink("../../tests/data/models/se_e2_a_water_one_side.dp", exdir / "water.dp")

    # float32 model: DeePMD-kit computes in float32; halomd computes in double from the same
    # float32 weights (= the f64 twin). Tolerance: 10 x the largest float32-vs-float64 difference.
    fp32 = "se_e2_a_water_fp32"
    twin = make_f64_twin(built[fp32][0], work / f"{fp32}_f64.pth")
    tm = built[fp32][1]["type_map"]
    fp32_err = {q: 0.0 for q in QUANTITIES}
    for m, s, kind in GOLDENS:
        if m == fp32 and kind == "pth":
            a = deepmd_eval(built[fp32][0], structures[s], tm)
            b = deepmd_eval(twin, structures[s], tm)
            for fa, fb in zip(a, b):
                for q in QUANTITIES:
                    fp32_err[q] = max(fp32_err[q], rel_err(fa[q], fb[q]))
    fp32_tol = {q: max(TOL_FP64, ceil_1sig(10.0 * fp32_err[q])) for q in QUANTITIES}
    log("float32 vs float64 evaluation, largest relative differences: "
        + ", ".join(f"{q} {fp32_err[q]:.2e}" for q in QUANTITIES))

    for m, s, kind in GOLDENS:
        pth, cfg = built[m]
        spec = MODELS[m]
        frames = deepmd_eval(twin if kind == "f64eval" else pth, structures[s], cfg["type_map"])
        notes = _model_notes(m, cfg, spec)
        if kind == "pth":
            err = check_dp_matches(data / "models" / f"{m}.dp", structures[s], frames,
                                   cfg["type_map"], DP_CHECK_TOL[cfg["descriptor"]["precision"]])
            notes += (" DeepPot on the .dp (numpy backend, no forces) reproduces these energies "
                      f"to {err[0]:.0e} and atom energies to {err[1]:.0e} (relative).")
        src = f"Structure {s}: {STRUCTURE_ABOUT[s]}"
        base = s.rsplit(".", 1)[0]
        if base in GMX_BOXES:
            src += f" (from `{gmx_cmds[base]}`)"
        if s.endswith(".gro"):
            src += "; evaluated on the coordinates as read back from the .gro (nm x 10)"
        else:
            src += "; evaluated on the coordinates as read back from the file"
        if s == "water_192_ortho_3frames.xyz":
            src += (f"; frames 2 and 3 displaced by numpy default_rng({SEED_DISPLACE}) normal "
                    f"sigma {DISPLACE_SIGMA} A, frame 3 then scaled by {FRAME3_SCALE}")
        tol = {q: TOL_FP64 for q in QUANTITIES}
        desc = f"{spec['about']} on {STRUCTURE_ABOUT[s]}"
        if m == fp32 and kind == "pth":
            tol = fp32_tol
            notes += (" Tolerance: DeePMD-kit evaluates this model in float32; the tolerance is "
                      "10 x (rounded up) the largest relative difference between DeePMD-kit's "
                      "float32 result and DeePMD-kit's float64 evaluation of the same weights "
                      f"(cast exactly to float64) over the float32 goldens: "
                      + ", ".join(f"{q} {fp32_err[q]:.2e}" for q in QUANTITIES) + ".")
        if kind == "f64eval":
            desc = ("float32 se_e2_a water model, its float32 weights cast exactly to float64 "
                    f"and evaluated in float64 by DeePMD-kit, on {STRUCTURE_ABOUT[s]}")
            notes += (" Evaluated by DeePMD-kit in float64: the float32 model serialised "
                      "(serialize_from_file), every float32 array cast to float64 and every "
                      "precision set to float64, deserialised (deserialize_to_file) to .pth; "
                      "this is what a double-precision evaluation of the float32 .dp gives.")
        doc = {
            "schema": SCHEMA,
            "description": desc,
            "model": f"models/{m}.dp",
            "structure": f"structures/{s}",
            "provenance": provenance(versions, command, notes + " " + src + "."),
            "tolerance": tol | {"definition": TOL_DEFINITION},
            "frames": frames,
        }
        write_golden(data / "golden" / golden_name(m, s, kind), doc)
    log(f"{len(GOLDENS)} goldens written")

    written = sorted(p.relative_to(data).as_posix() for sub in ("models", "structures", "golden")
                     for p in (data / sub).iterdir())
    if written != sorted(sum(generated_files(), [])):
        raise RuntimeError("generated files differ from generated_files()")
    problems = []
    for g in sorted((data / "golden").glob("*.json")):
        problems += [f"{g.name}: {p}" for p in check_golden(json.loads(g.read_text()), data)]
    if problems:
        raise RuntimeError("generated goldens fail the schema check:\n" + "\n".join(problems))


# --- update and check ---------------------------------------------------------------------------

MANAGED = [("tests/data/models", ".dp"), ("tests/data/structures", (".xyz", ".gro")),
           ("tests/data/golden", ".json")]
EXAMPLE_FILES = ["examples/water/water.gro", "examples/water/water.dp"]


def _managed_files(root):
    files = []
    for d, suf in MANAGED:
        if (root / d).is_dir():
            files += [p.relative_to(root).as_posix() for p in sorted((root / d).iterdir())
                      if p.is_file() and p.name.endswith(suf)]
    files += [f for f in EXAMPLE_FILES if (root / f).is_symlink() or (root / f).exists()]
    return files


def _dp_arrays(path):
    import h5py
    with h5py.File(path, "r") as f:
        meta = json.loads(f.attrs["json"])
        arrays = {k: f[k][()] for k in f.keys()}
    return meta, arrays


def compare_models(new, ref):
    import numpy as np
    m1, a1 = _dp_arrays(new)
    m2, a2 = _dp_arrays(ref)
    msgs = []
    for k in ("model_def_script",):
        if m1.get(k) != m2.get(k):
            msgs.append(f"{k} differs")
    if set(a1) != set(a2):
        return msgs + ["different sets of arrays"]
    for k in sorted(a1):
        x, y = np.asarray(a1[k], dtype=np.float64), np.asarray(a2[k], dtype=np.float64)
        if x.shape != y.shape or a1[k].dtype != a2[k].dtype:
            msgs.append(f"{k}: shape/dtype differs")
            continue
        scale = float(np.max(np.abs(y))) if y.size else 0.0
        d = float(np.max(np.abs(x - y))) if y.size else 0.0
        if (d / scale if scale > 0 else d) > 1e-12:
            msgs.append(f"{k}: relative difference {d / scale if scale else d:.2e}")
    return msgs


def compare_trees(new_root, ref_root):
    """{file: [messages]} for every generated file that is missing from or differs in ref_root
    (goldens beyond the stored tolerance, model arrays beyond 1e-12, structures beyond 1e-8 Å).
    Other files in the same folders (tests of other parts of halomd) are not looked at."""
    new_files = _managed_files(new_root)
    ref_files = set(_managed_files(ref_root))
    out = {f: ["not committed (new)"] for f in new_files if f not in ref_files}
    for f in (f for f in new_files if f in ref_files):
        a, b = new_root / f, ref_root / f
        if a.is_symlink() or b.is_symlink():
            if not (a.is_symlink() and b.is_symlink() and os.readlink(a) == os.readlink(b)):
                out[f] = ["symlink differs"]
            continue
        try:
            if f.endswith(".json"):
                diff = compare_golden(json.loads(a.read_text()), json.loads(b.read_text()))
            elif f.endswith(".dp"):
                diff = compare_models(a, b)
            else:
                diff = compare_structures(a, b)
        except Exception as exc:  # noqa: BLE001 - report any unreadable file as a difference
            diff = [f"cannot compare: {exc}"]
        if diff:
            out[f] = diff
    return out


def update_repo(tmp_root, repo, files):
    """Copies `files` (relative paths) from the generated tree into the repository. A file no
    longer generated is left for the reviewer to remove."""
    for f in files:
        src, dst = tmp_root / f, repo / f
        dst.parent.mkdir(parents=True, exist_ok=True)
        if dst.is_symlink() or dst.exists():
            dst.unlink()
        if src.is_symlink():
            os.symlink(os.readlink(src), dst)
        else:
            shutil.copyfile(src, dst)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--update", action="store_true",
                    help="write the new and changed files into the repository (files equal "
                    "within tolerance are left as they are, with their provenance)")
    ap.add_argument("--force", action="store_true",
                    help="with --update: rewrite every generated file")
    ap.add_argument("--deepmd-data", type=Path, default=REPO_ROOT.parent / "shared" / "data" /
                    "deepmd", help="folder with deeppot.dp and deeppot-testcase.yaml "
                    "(default: ../shared/data/deepmd relative to the repository)")
    ap.add_argument("--gmx", default="gmx", help="GROMACS gmx executable (default: gmx)")
    ap.add_argument("--keep", type=Path, default=None,
                    help="generate into this folder and keep it (default: a temporary folder)")
    args = ap.parse_args(argv)
    if shutil.which(args.gmx) is None:
        ap.error(f"{args.gmx} not found: install GROMACS (apt-get install gromacs)")
    command = shlex.join([sys.executable, *sys.argv]) if argv is None else \
        shlex.join(["make_golden.py", *argv])
    os.environ.setdefault("DP_INFER_BATCH_SIZE", "4096")

    with tempfile.TemporaryDirectory(prefix="halomd_golden_") as tmp:
        root = args.keep if args.keep else Path(tmp) / "out"
        if root.exists() and any(root.iterdir()):
            ap.error(f"{root} is not empty")
        work = Path(tmp) / "work"
        generate(root, args.deepmd_data, args.gmx, command, work)
        diffs = compare_trees(root, REPO_ROOT)
        for f, msgs in diffs.items():
            for m in msgs:
                print(f"{f}: {m}")
        if args.update:
            files = _managed_files(root) if args.force else list(diffs)
            update_repo(root, REPO_ROOT, files)
            log(f"repository updated: {len(files)} files written, {len(diffs)} of them new or "
                "changed")
            return 0
        if diffs:
            log(f"{len(diffs)} files differ from the committed ones")
            return 1
        log("regenerated data matches the committed files")
        return 0


if __name__ == "__main__":
    sys.exit(main())
