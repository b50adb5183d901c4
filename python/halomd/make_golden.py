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
   O/H/C box) are made from them with a seeded numpy generator; the H/C/N/O mixture box by
   seeded random placement of small molecules. Every golden is computed on the coordinates as
   read back from the written file (XYZ: 8 decimals, Å; GRO: 3 decimals, nm x 10).
2. Models (se_e2_a, DPA-1/se_atten, se_atten_v2): built with deepmd.pt get_model() from a
   normalised config (random weights, fixed seeds, no training), descriptor statistics
   (davg/dstd) computed by DeePMD-kit from the water boxes (and the mixture box), energy bias set
   to fixed per-type values, min_nbor_dist from DeePMD-kit's neighbour statistics (newer
   models), scripted and saved as .pth, converted with `dp convert-backend x.pth x.dp` (its
   function, in this process). The .dp is checked against the .pth (energies).
3. Goldens: DeepPot(x.pth).eval(..., atomic=True) in float64 (the .dp numpy path has no forces).
   Compressed goldens: DeepPot on the .pth made by `dp --pt compress`; some compressed models
   are also written as .dp by `dp --dp compress`.
4. DeePMD-kit's own test case (deeppot.dp + deeppot-testcase.yaml) converted to structures and
   goldens.
5. Small untrained DPA-2, DPA-3 and spin models for tests/data/bad (halomd refuses them).
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
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
SCHEMA = "halomd-golden-1"
TOL_DEFINITION = "max|a-b| / max|b| over the array, per frame"
TOL_FP64 = 1e-10
QUANTITIES = ("energy", "atom_energy", "force", "virial")
GOLDEN_KEYS = ("schema", "description", "model", "structure", "provenance", "tolerance", "frames")
PROVENANCE_KEYS = ("tool", "deepmd_kit_version", "torch_version", "backend", "date", "command",
                   "notes")
# Optional keys. provenance.nparams: DeePMD-kit's parameter count of the model (int);
# provenance.nparams_detail: {"descriptor": int, "fitting_net": int}; provenance.sensitive_pairs:
# [[frame, centre i, neighbour j, r], ...], neighbour entries whose values depend on the rounding
# of the switching function (tests/data/README.md, "Sensitive goldens"). Top-level "compression"
# (between "tolerance" and "frames"): the golden is DeePMD-kit's compressed model (tabulated
# embedding net), made from `model` with these table parameters.
COMPRESSION_KEYS = ("stride0", "stride1", "extrapolate", "check_frequency", "min_nbor_dist")
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


def _json_block(obj):
    """json.dumps with indent 2, lists of numbers on one line, indented by 2 more."""
    text = json.dumps(obj, indent=2)
    text = re.sub(r"\[\s+([-+0-9.eE,\s]+?)\s+\]",
                  lambda m: "[" + re.sub(r",\s+", ", ", m.group(1)) + "]", text)
    return text.replace("\n", "\n  ")


def format_golden(doc):
    """JSON text of a golden document: keys in schema order, floats as repr (round-trip exact),
    one force row per line."""
    out = ["{"]
    for k in ("schema", "description", "model", "structure"):
        out.append(f"  {json.dumps(k)}: {json.dumps(doc[k])},")
    prov = _json_block(doc["provenance"])
    out.append(f'  "provenance": {prov},')
    out.append(f'  "tolerance": {json.dumps(doc["tolerance"])},')
    if "compression" in doc:
        out.append(f'  "compression": {_json_block(doc["compression"])},')
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
    if "sensitive" in tol:
        sens = tol["sensitive"]
        if (not isinstance(sens, dict) or set(sens) != {"atoms", "force", "virial"}
                or not all(isinstance(a, list) and len(a) == 2 for a in sens["atoms"])):
            p.append("tolerance.sensitive should be {atoms: [[frame, atom], ...], force, virial}")
    p += _check_optional(doc, data_dir)
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


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _check_optional(doc, data_dir):
    """Checks of the optional provenance.nparams(_detail) and compression keys."""
    p = []
    extra = set(doc) - set(GOLDEN_KEYS) - {"compression"}
    if extra:
        p.append(f"unknown top-level keys {sorted(extra)}")
    prov = doc["provenance"]
    if "nparams" in prov and not (_is_int(prov["nparams"]) and prov["nparams"] > 0):
        p.append("provenance.nparams should be a positive integer")
    if "nparams_detail" in prov:
        det = prov["nparams_detail"]
        if not (isinstance(det, dict) and set(det) == {"descriptor", "fitting_net"}
                and all(_is_int(v) and v > 0 for v in det.values())):
            p.append("provenance.nparams_detail should be {descriptor, fitting_net} counts")
        elif prov.get("nparams") != det["descriptor"] + det["fitting_net"]:
            p.append("provenance.nparams is not descriptor + fitting_net")
    if "sensitive_pairs" in prov:
        sp = prov["sensitive_pairs"]
        if not (isinstance(sp, list) and sp and all(
                isinstance(x, list) and len(x) == 4 and all(_is_int(v) for v in x[:3])
                and isinstance(x[3], float) for x in sp)):
            p.append("provenance.sensitive_pairs should be [[frame, i, j, r], ...]")
    comp = doc.get("compression")
    if comp is None:
        return p
    if not isinstance(comp, dict):
        return p + ["compression should be an object"]
    for k in COMPRESSION_KEYS:
        v = comp.get(k)
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v):
            p.append(f"compression.{k} missing or not a number")
    if not all(isinstance(comp.get(k), (int, float)) and comp[k] > 0
               for k in ("stride0", "stride1", "extrapolate", "min_nbor_dist")):
        p.append("compression: stride0, stride1, extrapolate, min_nbor_dist should be > 0")
    if "check_frequency" in comp and not _is_int(comp["check_frequency"]):
        p.append("compression.check_frequency should be an integer")
    diff = comp.get("deepmd_rel_diff_vs_uncompressed")
    if not (isinstance(diff, dict) and set(diff) == set(QUANTITIES)
            and all(isinstance(v, (int, float)) and v >= 0 for v in diff.values())):
        p.append("compression.deepmd_rel_diff_vs_uncompressed should give the 4 quantities")
    cm = comp.get("compressed_model")
    if cm is not None:
        if not isinstance(cm, str):
            p.append("compression.compressed_model should be a path")
        elif data_dir is not None and not (Path(data_dir) / cm).is_file():
            p.append(f"compressed model file {cm} not found")
    return p


def compare_golden(new, ref):
    """Differences of `new` against the committed `ref`, using ref's tolerance.
    Returns a list of messages (empty when within tolerance)."""
    msgs = []
    for k in ("description", "model", "structure", "tolerance"):
        if new.get(k) != ref.get(k):
            msgs.append(f"{k}: {new.get(k)!r} != {ref.get(k)!r}")
    if ("compression" in new) != ("compression" in ref):
        msgs.append("compression: present in only one of them")
    elif "compression" in new:
        for k in COMPRESSION_KEYS + ("compressed_model",):
            a, b = new["compression"].get(k), ref["compression"].get(k)
            if a != b and not (k == "min_nbor_dist" and isinstance(a, float)
                               and isinstance(b, float) and abs(a - b) <= 1e-12 * abs(b)):
                msgs.append(f"compression.{k}: {a!r} != {b!r}")
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
# minimum-norm least-squares fit DeePMD-kit makes from water-only energies. C and N are arbitrary.
BIAS = {"O": -93.57, "H": -187.15, "C": -155.0, "N": -270.0}


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
HCNO_BOX = "hcno_270_mixture.xyz"
STAT_HCNO = STAT_WATER + [HCNO_BOX]

# Mixture box (H, C, N, O): small molecules (ASE's g2 geometries) placed one after the other at
# random positions and orientations (numpy default_rng(SEED_HCNO)), largest molecules first, a
# placement kept only if every intermolecular distance (minimum image) is at least HCNO_MIN_DIST
# for that pair of atom kinds (heavy = C, N, O). Molecules are written whole, in placement order.
SEED_HCNO = 20251130
HCNO_CELL = (14.0, 14.2, 14.4)
HCNO_MOLECULES = (("CH3CN", 8), ("CH3OH", 10), ("CH4", 10), ("NH3", 10), ("H2O", 24))
HCNO_MIN_DIST = {"heavy-heavy": 2.7, "heavy-H": 2.0, "H-H": 1.8}


def _bias(type_map):
    return [BIAS[t] for t in type_map]


def _dpa1_small(type_map, seed, **desc):
    """Small DPA-1 (se_atten) energy model config: neuron [8, 16], axis 4, attn 16; `desc`
    overrides descriptor keys (every option that a variant is about is written out)."""
    d = {"type": "dpa1", "rcut": 6.0, "rcut_smth": 0.5, "sel": 120, "neuron": [8, 16],
         "axis_neuron": 4, "attn": 16, "attn_layer": 2, "tebd_dim": 8,
         "activation_function": "tanh", "resnet_dt": False, "precision": "float64",
         "seed": seed}
    d.update(desc)
    return {"type_map": list(type_map), "descriptor": d,
            "fitting_net": {"neuron": [32, 32, 32], "resnet_dt": True,
                            "activation_function": "tanh", "precision": "float64",
                            "seed": seed + 1}}


def _dpa1_water(seed, precision, neuron=(25, 50, 100), attn=128, **over):
    """DeePMD-kit's examples/water/se_atten/input_torch.json model section (dpa1, sel 120,
    rcut 6.0, rcut_smth 0.5, tebd 8, axis 16, type_one_side, attn_layer 2, attn_dotr, no mask,
    tanh, scaling_factor 1.0, normalize, temperature 1.0; fitting [240, 240, 240] resnet_dt),
    with seeds and precision added; `neuron`, `attn` and `over` (descriptor keys) changed for
    the 1.6M variant."""
    cfg = {
        "type_map": ["O", "H"],
        "descriptor": {"type": "dpa1", "sel": 120, "rcut_smth": 0.5, "rcut": 6.0,
                       "neuron": list(neuron), "tebd_dim": 8, "axis_neuron": 16,
                       "type_one_side": True, "attn": attn, "attn_layer": 2, "attn_dotr": True,
                       "attn_mask": False, "activation_function": "tanh",
                       "scaling_factor": 1.0, "normalize": True, "temperature": 1.0,
                       "precision": precision, "seed": seed},
        "fitting_net": {"neuron": [240, 240, 240], "resnet_dt": True, "precision": precision,
                        "seed": seed + 1},
    }
    cfg["descriptor"].update(over)
    return cfg

# out_bias: model-level bias (PyTorch 3.x place); bias_atom_e: fitting-level bias. DeePMD-kit adds
# both; the 3-type variant splits the per-type bias between them so that both paths are tested.
MODELS = {
    "se_e2_a_water_one_side": {
        "config": _water_config(True, "float64", 1),
        "out_bias": [BIAS["O"], BIAS["H"]], "bias_atom_e": None, "stat": STAT_WATER,
        "min_nbor_dist": True,
        "about": "se_e2_a water model (DeePMD-kit v2 water setting, type_one_side, float64)"},
    "se_e2_a_water_two_side": {
        "config": _water_config(False, "float64", 3),
        "out_bias": [BIAS["O"], BIAS["H"]], "bias_atom_e": None, "stat": STAT_WATER,
        "min_nbor_dist": True,
        "about": "se_e2_a water model (DeePMD-kit v2 water setting, two-side, float64)"},
    "se_e2_a_water_fp32": {
        "config": _water_config(True, "float32", 5),
        "out_bias": [BIAS["O"], BIAS["H"]], "bias_atom_e": None, "stat": STAT_WATER,
        "about": "se_e2_a water model (type_one_side, float32 descriptor and fitting)",
        "f64eval_about": "float32 se_e2_a water model"},
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
    # --- models added with DPA-1 and compression. Every one carries min_nbor_dist (computed by
    # DeePMD-kit's neighbour statistics from its `stat` structures, as `dp train` does).
    "se_e2_a_small_tanh": {
        "config": {
            "type_map": ["O", "H"],
            "descriptor": {"type": "se_e2_a", "rcut": 6.0, "rcut_smth": 0.5, "sel": [46, 92],
                           "neuron": [8, 16], "axis_neuron": 4, "type_one_side": False,
                           "resnet_dt": False, "activation_function": "tanh",
                           "precision": "float64", "seed": 45},
            "fitting_net": {"neuron": [32, 32, 32], "resnet_dt": True,
                            "activation_function": "tanh", "precision": "float64", "seed": 46},
        },
        "out_bias": _bias("OH"), "bias_atom_e": None, "stat": STAT_WATER, "min_nbor_dist": True,
        "about": ("small se_e2_a for compression (two-side, neuron [8,16], axis 4, "
                  "resnet_dt false, tanh)")},
    "dpa1_small_concat": {
        "config": _dpa1_small("OH", 21, tebd_input_mode="concat", attn_layer=2,
                              smooth_type_embedding=False, type_one_side=False,
                              set_davg_zero=True, attn_dotr=True, normalize=True,
                              concat_output_tebd=True),
        "out_bias": _bias("OH"), "bias_atom_e": None, "stat": STAT_WATER, "min_nbor_dist": True,
        "about": ("small DPA-1 (concat, attn_layer 2, smooth_type_embedding false, two-side, "
                  "set_davg_zero true, attn_dotr, normalize, concat_output_tebd)")},
    "dpa1_small_concat_davg": {
        "config": _dpa1_small("OH", 23, tebd_input_mode="concat", attn_layer=2,
                              smooth_type_embedding=False, type_one_side=True,
                              set_davg_zero=False, attn_dotr=False, normalize=True,
                              concat_output_tebd=False),
        "out_bias": _bias("OH"), "bias_atom_e": None, "stat": STAT_WATER, "min_nbor_dist": True,
        "about": ("small DPA-1 (concat, attn_layer 2, smooth false, type_one_side, "
                  "set_davg_zero false, attn_dotr false, concat_output_tebd false)")},
    "dpa1_small_strip_smooth_temp": {
        "config": _dpa1_small("OH", 25, rcut=5.0, rcut_smth=1.0, sel=80,
                              tebd_input_mode="strip", attn_layer=2, smooth_type_embedding=True,
                              type_one_side=False, set_davg_zero=False, attn_dotr=True,
                              normalize=False, temperature=0.7, concat_output_tebd=True),
        "out_bias": _bias("OH"), "bias_atom_e": None, "stat": STAT_WATER, "min_nbor_dist": True,
        "about": ("small DPA-1 (strip, attn_layer 2, smooth true, two-side, set_davg_zero "
                  "false, normalize false, temperature 0.7, rcut 5.0, rcut_smth 1.0, sel 80)")},
    "dpa1_small_strip_oneside": {
        "config": _dpa1_small("OH", 27, tebd_input_mode="strip", attn_layer=1,
                              smooth_type_embedding=False, type_one_side=True,
                              set_davg_zero=False, scaling_factor=2.0, use_tebd_bias=True,
                              concat_output_tebd=True),
        "out_bias": _bias("OH"), "bias_atom_e": None, "stat": STAT_WATER, "min_nbor_dist": True,
        "about": ("small DPA-1 (strip, attn_layer 1, smooth false, type_one_side, "
                  "set_davg_zero false, scaling_factor 2.0, use_tebd_bias)")},
    "dpa1_small_tebd2_excl": {
        "config": _dpa1_small("OH", 29, tebd_dim=2, tebd_input_mode="concat", attn_layer=1,
                              smooth_type_embedding=True, type_one_side=False,
                              set_davg_zero=False, exclude_types=[[0, 1]],
                              concat_output_tebd=True),
        "out_bias": _bias("OH"), "bias_atom_e": None, "stat": STAT_WATER, "min_nbor_dist": True,
        "about": ("small DPA-1 (tebd_dim 2 = ntypes: resnet skip in the type embedding; concat, "
                  "attn_layer 1, smooth true, two-side, set_davg_zero false, exclude_types "
                  "[[0,1]])")},
    "dpa1_small_strip_l0": {
        "config": _dpa1_small("OH", 31, tebd_input_mode="strip", attn_layer=0,
                              smooth_type_embedding=True, type_one_side=False,
                              set_davg_zero=False, concat_output_tebd=True),
        "out_bias": _bias("OH"), "bias_atom_e": None, "stat": STAT_WATER, "min_nbor_dist": True,
        "about": ("small DPA-1 (strip, attn_layer 0, smooth true, two-side, set_davg_zero "
                  "false): fully compressible")},
    "se_atten_v2_small": {
        "config": _dpa1_small("OH", 33, type="se_atten_v2", attn_layer=2, type_one_side=False,
                              set_davg_zero=False, concat_output_tebd=True),
        "out_bias": _bias("OH"), "bias_atom_e": None, "stat": STAT_WATER, "min_nbor_dist": True,
        "about": ("small se_atten_v2 (strip and smooth forced, attn_layer 2, two-side, "
                  "set_davg_zero false)")},
    "dpa1_small_hcno": {
        "config": _dpa1_small("HCNO", 35, tebd_input_mode="concat", attn_layer=2,
                              smooth_type_embedding=True, type_one_side=False,
                              set_davg_zero=False, concat_output_tebd=True),
        "out_bias": _bias("HCNO"), "bias_atom_e": None, "stat": STAT_HCNO,
        "min_nbor_dist": True,
        "about": ("small DPA-1, type_map [H, C, N, O] (concat, attn_layer 2, smooth true, "
                  "two-side, set_davg_zero false)")},
    "dpa1_small_hcno_strip": {
        "config": _dpa1_small("OHCN", 37, tebd_input_mode="strip", attn_layer=1,
                              smooth_type_embedding=False, type_one_side=True,
                              set_davg_zero=False, concat_output_tebd=False),
        "out_bias": _bias("OHCN"), "bias_atom_e": None, "stat": STAT_HCNO,
        "min_nbor_dist": True,
        "about": ("small DPA-1, type_map [O, H, C, N] (strip, attn_layer 1, smooth false, "
                  "type_one_side, set_davg_zero false, concat_output_tebd false)")},
    "se_atten_v2_small_hcno": {
        "config": _dpa1_small("CHON", 39, type="se_atten_v2", rcut=5.5, sel=100, attn_layer=2,
                              type_one_side=True, set_davg_zero=False,
                              concat_output_tebd=True),
        "out_bias": _bias("CHON"), "bias_atom_e": None, "stat": STAT_HCNO,
        "min_nbor_dist": True,
        "about": ("small se_atten_v2, type_map [C, H, O, N] (attn_layer 2, type_one_side, "
                  "rcut 5.5, sel 100)")},
    "dpa1_small_wide": {
        # more than 128 live neighbours and an attention width above 256: the GPU kernels keep
        # 4 slots and 8 features per lane in registers and read the rest again (each_lane_slot)
        "config": _dpa1_small("OH", 45, rcut=7.0, sel=192, attn=288, attn_layer=2,
                              tebd_input_mode="concat", smooth_type_embedding=True,
                              attn_dotr=True, normalize=True, type_one_side=False,
                              set_davg_zero=False, concat_output_tebd=True),
        "out_bias": _bias("OH"), "bias_atom_e": None, "stat": STAT_WATER, "min_nbor_dist": True,
        "about": ("small DPA-1 with many slots and a wide attention (rcut 7.0, sel 192, attn "
                  "288, attn_layer 2, concat, smooth true, two-side, set_davg_zero false)")},
    "dpa1_water": {
        "config": _dpa1_water(41, "float64"),
        "out_bias": _bias("OH"), "bias_atom_e": None, "stat": STAT_WATER, "min_nbor_dist": True,
        "about": ("DPA-1 water model (DeePMD-kit examples/water/se_atten setting: sel 120, "
                  "neuron [25,50,100], axis 16, attn 128, 2 layers, tebd 8, fitting "
                  "[240,240,240], float64)")},
    "dpa1_1p6m_fp32": {
        # smooth_type_embedding: DeePMD-kit's float32 evaluation of a non-smooth attn_dotr
        # model is wrong near rcut (README), so the float32 goldens would be meaningless
        "config": _dpa1_water(43, "float32", neuron=(64, 128, 256), attn=256,
                              smooth_type_embedding=True),
        "out_bias": _bias("OH"), "bias_atom_e": None, "stat": STAT_WATER, "min_nbor_dist": True,
        "about": ("large DPA-1 water model (neuron [64,128,256], axis 16, attn 256, 2 layers, "
                  "fitting [240,240,240], smooth_type_embedding true, otherwise the "
                  "examples/water/se_atten setting; float32)"),
        "f64eval_about": "float32 1.67M-parameter DPA-1 water model"},
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
    HCNO_BOX: ("270-atom H/C/N/O mixture (8 acetonitrile, 10 methanol, 10 methane, 10 ammonia, "
               "24 water), orthorhombic box 14.0 x 14.2 x 14.4 A, 0.82 g/cm3"),
}

DEEPPOT_CASES = [f"deeppot_case{k}.xyz" for k in (1, 2, 3)]


def generated_files():
    """Model, structure and golden files (relative to tests/data) that generate() writes."""
    models = [f"models/{m}.dp" for m in MODELS] + ["models/deeppot.dp"]
    models += [f"models/{compressed_dp_name(m, kind)}" for m, kind in COMPRESSED_DP]
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
    # --- DPA-1 / se_atten_v2
    ("dpa1_small_concat", "water_192_ortho.xyz", "pth"),
    ("dpa1_small_concat", "water_96_small.xyz", "pth"),
    ("dpa1_small_concat", "water_192_ortho_3frames.xyz", "pth"),
    ("dpa1_small_concat", "water_48_cluster.xyz", "pth"),
    ("dpa1_small_concat_davg", "water_192_triclinic.xyz", "pth"),
    ("dpa1_small_concat_davg", "water_96_small.xyz", "pth"),
    ("dpa1_small_strip_smooth_temp", "water_192_ortho.xyz", "pth"),
    ("dpa1_small_strip_smooth_temp", "water_192_triclinic.xyz", "pth"),
    ("dpa1_small_strip_oneside", "water_192_ortho.xyz", "pth"),
    ("dpa1_small_strip_oneside", "water_96_small.xyz", "pth"),
    ("dpa1_small_tebd2_excl", "water_192_ortho.xyz", "pth"),
    ("dpa1_small_tebd2_excl", "water_192_triclinic.xyz", "pth"),
    ("dpa1_small_strip_l0", "water_192_ortho.xyz", "pth"),
    ("dpa1_small_strip_l0", "water_192_triclinic.xyz", "pth"),
    ("se_atten_v2_small", "water_192_ortho.xyz", "pth"),
    ("se_atten_v2_small", "water_48_cluster.xyz", "pth"),
    ("dpa1_small_hcno", HCNO_BOX, "pth"),
    ("dpa1_small_hcno", "water_192_ortho.xyz", "pth"),
    ("dpa1_small_hcno_strip", HCNO_BOX, "pth"),
    ("dpa1_small_hcno_strip", "water_96_small.xyz", "pth"),
    ("se_atten_v2_small_hcno", HCNO_BOX, "pth"),
    ("dpa1_small_wide", "water_192_ortho.xyz", "pth"),
    ("dpa1_small_wide", "water_192_triclinic.xyz", "pth"),
    ("dpa1_water", "water_192_ortho.xyz", "pth"),
    # not on water_192_triclinic.xyz: a neighbour pair there lies 1.8e-4 A inside rcut, where
    # this model's attn_dotr gate makes the energy depend on the last bit of the wrapped and
    # image-shifted coordinates (see dotr_sensitive), which DeePMD-kit computes with its own
    # triclinic arithmetic: such a golden tests round-off, not the model
    ("dpa1_water", "water_96_small.xyz", "pth"),
    ("dpa1_water", "water_192_ortho_3frames.xyz", "pth"),
    ("dpa1_water", "water_48_cluster.xyz", "pth"),
    ("dpa1_1p6m_fp32", "water_192_ortho.xyz", "pth"),
    ("dpa1_1p6m_fp32", "water_192_triclinic.xyz", "pth"),
    ("dpa1_1p6m_fp32", "water_192_ortho.xyz", "f64eval"),
    ("se_e2_a_small_tanh", "water_192_ortho.xyz", "pth"),
    # --- compressed models (kind = a key of COMPRESSION_PARAMS): DeepPot on the .pth made by
    # `dp --pt compress` from model.pth with those table parameters
    ("se_e2_a_water_one_side", "water_192_ortho.xyz", "compressed"),
    ("se_e2_a_water_one_side", "water_192_triclinic.xyz", "compressed"),
    ("se_e2_a_water_one_side", "water_96_small.xyz", "compressed"),
    ("se_e2_a_water_one_side", "water_192_ortho_3frames.xyz", "compressed"),
    ("se_e2_a_water_two_side", "water_192_ortho.xyz", "compressed"),
    ("se_e2_a_water_two_side", "water_192_triclinic.xyz", "compressed"),
    ("dpa1_small_strip_l0", "water_192_ortho.xyz", "compressed"),
    ("dpa1_small_strip_l0", "water_192_triclinic.xyz", "compressed"),
    ("dpa1_small_strip_l0", "water_96_small.xyz", "compressed"),
    ("se_atten_v2_small", "water_192_ortho.xyz", "compressed"),
    ("se_atten_v2_small", "water_192_triclinic.xyz", "compressed"),
    ("se_e2_a_water_one_side", "water_192_ortho.xyz", "compressed_coarse"),
    ("se_e2_a_small_tanh", "water_192_ortho.xyz", "compressed_coarse"),
    ("se_e2_a_small_tanh", "water_96_small.xyz", "compressed_coarse"),
    ("dpa1_small_strip_l0", "water_192_ortho.xyz", "compressed_coarse"),
    ("dpa1_small_strip_l0", "water_96_small.xyz", "compressed_coarse"),
    ("dpa1_small_strip_l0", "water_192_ortho_3frames.xyz", "compressed_coarse"),
]

# Table parameters of `dp --pt compress -s STRIDE -e EXTRAPOLATE -f CHECK_FREQUENCY` (the second
# table's stride is 10 x STRIDE). "compressed": DeePMD-kit's defaults. "compressed_coarse": a
# coarse stride, so that the compression error (about 1e-8 in the forces) is far above the 1e-10
# tolerance and a golden test can tell tabulated from plain evaluation; also small tables.
COMPRESSION_PARAMS = {
    "compressed": {"stride": 0.01, "extrapolate": 5, "check_frequency": -1},
    "compressed_coarse": {"stride": 0.2, "extrapolate": 4, "check_frequency": 1000},
}
# Compressed models also written as .dp (`dp --dp compress`), one per descriptor kind:
# se_e2_a (tables for every type pair), dpa1 with attn_layer 0 (geometric table + type-pair
# table), se_atten_v2 with attention layers (type-pair table only).
COMPRESSED_DP = [("se_e2_a_small_tanh", "compressed_coarse"),
                 ("dpa1_small_strip_l0", "compressed_coarse"),
                 ("se_atten_v2_small", "compressed")]


def compressed_dp_name(model, kind):
    return f"{kind}_{model}.dp"


def golden_name(model, structure, kind):
    stem, suffix = structure.rsplit(".", 1)
    name = f"{model}__{stem}" + ("_gro" if suffix == "gro" else "")
    if kind in COMPRESSION_PARAMS:
        name = f"{kind}_{name}"
    return name + ("__f64eval" if kind == "f64eval" else "") + ".json"


# DeepPot(x.dp) (numpy) against DeepPot(x.pth) (PyTorch): energy and atom energies, relative.
# DP_CHECK_TOL_SENSITIVE: float64 models of dotr_sensitive() on structures with a neighbour pair
# in the eps branch (the two backends round the switching function differently there).
DP_CHECK_TOL = {"float64": 1e-10, "float32": 1e-6}
DP_CHECK_TOL_SENSITIVE = 1e-8
# the numpy check of every golden is skipped for models this large (only water_192_ortho)
NUMPY_CHECK_MAX_PARAMS = 100000


def _dp_check_tol(cfg, dp_file, frames):
    tol = DP_CHECK_TOL[cfg["descriptor"]["precision"]]
    if dotr_sensitive(cfg) and eps_branch_pairs(dp_file, frames, cfg["type_map"]):
        tol = max(tol, DP_CHECK_TOL_SENSITIVE)
    return tol


def cfg_rc(built, golden):
    return built[golden.split("__")[0]]["cfg"]["descriptor"]["rcut"]


_T0 = time.monotonic()


def log(msg):
    t = time.monotonic() - _T0
    print(f"[make_golden {t:5.0f} s] {msg}", file=sys.stderr, flush=True)


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
    got[HCNO_BOX] = write_xyz(sdir / HCNO_BOX, [make_hcno_box()])
    return got, cmds


def _quat_to_matrix(q):
    import numpy as np
    w, x, y, z = q / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def make_hcno_box():
    """Random sequential placement of HCNO_MOLECULES (ASE g2 geometries, centre of mass at a
    uniform random point, uniform random orientation from a normalised Gaussian quaternion) in
    the orthorhombic HCNO_CELL; a trial is kept when all intermolecular minimum-image distances
    respect HCNO_MIN_DIST. Deterministic (numpy default_rng(SEED_HCNO))."""
    import numpy as np
    from ase.build import molecule
    cell = np.array(HCNO_CELL)
    rng = np.random.default_rng(SEED_HCNO)
    pos_all = np.zeros((0, 3))
    heavy_all = np.zeros(0, dtype=bool)
    species = []
    for name, count in HCNO_MOLECULES:
        mol = molecule(name)
        p0 = mol.positions - mol.get_center_of_mass()
        sym = mol.get_chemical_symbols()
        heavy = np.array([t != "H" for t in sym])
        for k in range(count):
            for _trial in range(200000):
                pos = p0 @ _quat_to_matrix(rng.normal(size=4)).T + rng.uniform(0.0, 1.0, 3) * cell
                d = pos[:, None, :] - pos_all[None, :, :]
                d -= np.round(d / cell) * cell
                r = np.sqrt((d * d).sum(axis=2))
                both = heavy[:, None] & heavy_all[None, :]
                none = ~heavy[:, None] & ~heavy_all[None, :]
                thr = np.where(both, HCNO_MIN_DIST["heavy-heavy"],
                               np.where(none, HCNO_MIN_DIST["H-H"], HCNO_MIN_DIST["heavy-H"]))
                if (r >= thr).all():
                    break
            else:
                raise RuntimeError(f"could not place {name} {k} in the mixture box")
            pos_all = np.concatenate([pos_all, pos])
            heavy_all = np.concatenate([heavy_all, heavy])
            species += sym
    return {"species": species, "positions": pos_all.tolist(),
            "cell": np.diag(cell).tolist(), "pbc": [True] * 3}


# --- models -------------------------------------------------------------------------------------

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


def write_npy_system(path, frames):
    """A DeePMD-kit npy data system (type.raw, type_map.raw, set.000/{coord,box}.npy) of
    periodic frames; its type_map lists the elements in order of first appearance."""
    import numpy as np
    species = frames[0]["species"]
    tmap = list(dict.fromkeys(species))
    (path / "set.000").mkdir(parents=True, exist_ok=True)
    (path / "type.raw").write_text("".join(f"{tmap.index(t)}\n" for t in species))
    (path / "type_map.raw").write_text("".join(f"{t}\n" for t in tmap))
    np.save(path / "set.000" / "coord.npy",
            np.array([f["positions"] for f in frames], dtype=np.float64).reshape(len(frames), -1))
    np.save(path / "set.000" / "box.npy",
            np.array([f["cell"] for f in frames], dtype=np.float64).reshape(len(frames), 9))
    return str(path)


def write_npy_systems(structures, npy_dir):
    """npy data systems of every periodic structure (for DeePMD-kit's neighbour statistics and
    `dp compress -t`); returns {structure file name: system folder}."""
    out = {}
    for n, frames in structures.items():
        if n.endswith(".xyz") and frames[0]["cell"] is not None:
            out[n] = write_npy_system(npy_dir / n.rsplit(".", 1)[0], frames)
    return out


def training_script(names, type_map, npy, path):
    """A minimal DeePMD-kit input script whose training data are the structures `names`: what
    `dp compress -t` reads to compute min_nbor_dist."""
    path.write_text(json.dumps({
        "model": {"type_map": list(type_map), "descriptor": {"type": "se_e2_a"},
                  "fitting_net": {}},
        "training": {"training_data": {"systems": [npy[n] for n in names], "batch_size": 1}}},
        indent=1))
    return path


def neighbor_stat(names, type_map, rcut, mixed_type, npy):
    """DeePMD-kit's neighbour statistics (what `dp train` runs before training) over the
    structures `names`: (min_nbor_dist, max neighbours within rcut: per type or, mixed, total)."""
    from deepmd.pt.utils.neighbor_stat import NeighborStat
    from deepmd.utils.data_system import get_data
    data = get_data({"systems": [npy[n] for n in names], "batch_size": 1}, 0, list(type_map),
                    None)
    stat = NeighborStat(len(type_map), rcut, mixed_type=mixed_type)
    mnd, maxn = stat.get_stat(data)
    return float(mnd), [int(x) for x in maxn]


def build_model(name, spec, structures, work, models_dir, npy):
    """Random-initialised model with DeePMD-kit statistics and bias -> work/name.pth, and
    `dp convert-backend` -> models_dir/name.dp. With spec["min_nbor_dist"], the model carries
    DeePMD-kit's minimal neighbour distance of its statistics structures (as after `dp train`),
    which `dp compress` needs. Returns (pth, dp, normalised config, neighbour-statistics dict)."""
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
    # neighbour statistics: sel must hold every neighbour (no truncation anywhere)
    d = cfg["descriptor"]
    mixed = bool(model.mixed_types())
    mnd, maxn = neighbor_stat(spec["stat"], tm, d["rcut"], mixed, npy)
    sel = [d["sel"]] if isinstance(d["sel"], int) else list(d["sel"])
    if any(n > m for n, m in zip(maxn, sel, strict=True)):
        raise RuntimeError(f"{name}: neighbours within rcut {maxn} exceed sel {sel}")
    nstat = {"min_nbor_dist": mnd, "max_nbor": maxn, "sel": sel}
    if spec.get("min_nbor_dist"):
        model.min_nbor_dist = torch.tensor(mnd, dtype=torch.float64)
    model.model_def_script = json.dumps(cfg)
    model.eval()
    pth = work / f"{name}.pth"
    torch.jit.save(torch.jit.script(model), str(pth), {"data_modifier.pth": ""})
    dp_file = models_dir / f"{name}.dp"
    convert_backend(pth, dp_file)
    return pth, dp_file, cfg, nstat


def convert_backend(src, dst):
    """`dp convert-backend src dst`, run in this process: the function the `dp` command calls
    (deepmd.entrypoints.convert_backend.convert_backend), which saves 5 s of start-up per model."""
    from deepmd.entrypoints.convert_backend import convert_backend as dp_convert_backend
    dp_convert_backend(INPUT=str(src), OUTPUT=str(dst))


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


# --- parameter counts ---------------------------------------------------------------------------

def count_dp_params(dp_file):
    """Trainable parameters as deepmd.md 4.2 counts them: the sizes of every `w`, `b` and `idt`
    array of the Layer and LayerNorm nodes under model.descriptor and model.fitting of the .dp
    (statistics davg/dstd, biases bias_atom_e/out_bias/out_std excluded)."""
    import h5py
    with h5py.File(dp_file, "r") as f:
        meta = json.loads(f.attrs["json"])

        def walk(node):
            n = 0
            if isinstance(node, dict):
                if node.get("@class") in ("Layer", "LayerNorm"):
                    for k in ("w", "b", "idt"):
                        ref = node["@variables"].get(k)
                        if ref is not None:
                            n += int(f[ref].size)
                n += sum(walk(v) for k, v in node.items() if k != "@variables")
            elif isinstance(node, list):
                n += sum(walk(v) for v in node)
            return n

        return {"descriptor": walk(meta["model"]["descriptor"]),
                "fitting_net": walk(meta["model"]["fitting"])}


def count_params(pth, dp_file):
    """DeePMD-kit's parameter count (`dp show model.pth size`: DeepPot.get_model_size(), the
    PyTorch parameters of the descriptor and the fitting net), checked against the .dp count."""
    size = _deeppot(pth).get_model_size()
    got = {"descriptor": int(size["descriptor"]), "fitting_net": int(size["fitting-net"])}
    if got != count_dp_params(dp_file):
        raise RuntimeError(f"{pth}: dp show size {got} != w/b/idt arrays of the .dp "
                           f"{count_dp_params(dp_file)}")
    return got


# --- compression ----------------------------------------------------------------------------------

def compress_pth(name, kind, pth, work):
    """`dp --pt compress -i name.pth -o kind_name.pth -s S -e E -f F` (in this process: the
    function the command calls). Returns (compressed .pth, description of its tables)."""
    import numpy as np
    import torch
    from deepmd.pt.entrypoints.compress import enable_compression
    par = COMPRESSION_PARAMS[kind]
    out = work / f"{kind}_{name}.pth"
    enable_compression(input_file=str(pth), output=str(out), stride=par["stride"],
                       extrapolate=par["extrapolate"], check_frequency=par["check_frequency"])
    sd = torch.jit.load(str(out), map_location="cpu").state_dict()
    info = {int(m.group(1)): k for k in sd
            if (m := re.search(r"\.compress_info\.(\d+)$", k))}
    tables = []
    for i in sorted(info):
        ci = sd[info[i]].double().tolist()
        cd = sd[info[i].replace("compress_info", "compress_data")]
        if not ci:
            continue
        lower, upper, _ext_upper, s0, s1, _cf = ci
        n1 = int((upper - lower) / s0)
        if len(np.arange(lower, upper, s0)) != n1:
            raise RuntimeError(f"{name}: table {i}: np.arange knot count differs from "
                               f"int((upper-lower)/stride0)")
        tables.append({"net": i, "info": ci, "shape": list(cd.shape)})
    meta = {"stride0": par["stride"], "stride1": par["stride"] * 10,
            "extrapolate": par["extrapolate"], "check_frequency": par["check_frequency"],
            "min_nbor_dist": float(sd["min_nbor_dist"]),
            "command": (f"dp --pt compress -i {name}.pth -o {kind}_{name}.pth -s {par['stride']} "
                        f"-e {par['extrapolate']} -f {par['check_frequency']}"),
            "tables": tables}
    for t in tables:
        if t["info"][3:5] != [meta["stride0"], meta["stride1"]]:
            raise RuntimeError(f"{name}: table strides {t['info'][3:5]} differ from the options")
    te = [k for k in sd if k.endswith(".type_embd_data")]
    if te:
        meta["geo_compress"] = bool(tables)
        meta["type_embd_data_shape"] = list(sd[te[0]].shape)
    return out, meta


def compress_dp(name, kind, dp_file, cfg, spec, npy, work, models_dir):
    """`dp --dp compress -i name.dp -o kind_name.dp -s S -e E -f F -t train.json` (in this
    process). -t is needed: deepmd-kit 3.2.0's native compressor does not find the
    min_nbor_dist that the PyTorch backend stores in the .dp ("@variables"), so it recomputes
    it from the training data (the same structures and statistics code)."""
    from deepmd.dpmodel.entrypoints.compress import enable_compression
    par = COMPRESSION_PARAMS[kind]
    script = training_script(spec["stat"], cfg["type_map"], npy, work / f"train_{name}.json")
    out = models_dir / compressed_dp_name(name, kind)
    enable_compression(input_file=str(dp_file), output=str(out), stride=par["stride"],
                       extrapolate=par["extrapolate"], check_frequency=par["check_frequency"],
                       training_script=str(script))
    return out


def check_compressed_dp(out, meta, compressed_pth):
    """The compressed .dp must hold the same tables as DeePMD-kit's compressed .pth: the same
    compress_info, values/derivatives (coefficients a0, a1, a2) to 1e-12 relative; a3..a5 are
    differences of nearly equal numbers divided by stride^3..stride^5 and carry the round-off of
    the two computations. Returns the largest relative differences per coefficient."""
    import h5py
    import numpy as np
    import torch
    with h5py.File(out, "r") as f:
        meta_dp = json.loads(f.attrs["json"])
        comp = meta_dp["model"]["descriptor"]["compress"]["@variables"]
        data = [f[r][()] if r is not None else None for r in comp.get("compress_data", [])]
        info = [f[r][()] if r is not None else None for r in comp.get("compress_info", [])]
    if abs(float(meta_dp["min_nbor_dist"]) - meta["min_nbor_dist"]) > 1e-15:
        raise RuntimeError(f"{out}: min_nbor_dist {meta_dp['min_nbor_dist']} != "
                           f"{meta['min_nbor_dist']}")
    sd = torch.jit.load(str(compressed_pth), map_location="cpu").state_dict()
    worst = [0.0] * 6
    for t in meta["tables"]:
        i = t["net"]
        if info[i].tolist() != t["info"]:
            raise RuntimeError(f"{out}: table {i} info {info[i].tolist()} != {t['info']}")
        ref = [v for k, v in sd.items() if k.endswith(f".compress_data.{i}")][0].numpy()
        for c in range(6):
            a, b = data[i][:, c::6], ref[:, c::6]
            worst[c] = max(worst[c], float(np.abs(a - b).max() / np.abs(b).max()))
    if max(worst[:3]) > 1e-12:
        raise RuntimeError(f"{out}: table values differ from the .pth's: {worst}")
    if "type_embd_data_shape" in meta:
        with h5py.File(out, "r") as f:
            a = f[comp["type_embd_data"]][()]
        b = [v for k, v in sd.items() if k.endswith(".type_embd_data")][0].numpy()
        if a.shape != b.shape or np.abs(a - b).max() > 1e-14 * np.abs(b).max():
            raise RuntimeError(f"{out}: type_embd_data differs from the .pth's")
    return worst


# --- models DeePMD-kit 3.2.0 can make that halomd refuses (tests/data/bad) -----------------------

BAD_MODELS = {
    "dpa2.dp": {
        "type_map": ["O", "H"],
        "descriptor": {"type": "dpa2",
                       "repinit": {"rcut": 4.0, "rcut_smth": 0.5, "nsel": 30, "neuron": [4, 8],
                                   "axis_neuron": 2, "tebd_dim": 4},
                       "repformer": {"rcut": 3.0, "rcut_smth": 0.5, "nsel": 10, "nlayers": 1,
                                     "g1_dim": 8, "g2_dim": 4, "attn2_hidden": 4,
                                     "attn2_nhead": 1, "attn1_hidden": 4, "attn1_nhead": 1,
                                     "axis_neuron": 2},
                       "precision": "float64", "seed": 51},
        "fitting_net": {"neuron": [8, 8], "precision": "float64", "seed": 52}},
    "dpa3.dp": {
        "type_map": ["O", "H"],
        "descriptor": {"type": "dpa3",
                       "repflow": {"n_dim": 8, "e_dim": 4, "a_dim": 4, "nlayers": 1,
                                   "e_rcut": 4.0, "e_rcut_smth": 0.5, "e_sel": 30,
                                   "a_rcut": 3.0, "a_rcut_smth": 0.5, "a_sel": 10,
                                   "axis_neuron": 2},
                       "precision": "float64", "seed": 53},
        "fitting_net": {"neuron": [8, 8], "precision": "float64", "seed": 54}},
    "spin_se_e2_a.dp": {
        "type_map": ["O", "H"],
        "descriptor": {"type": "se_e2_a", "rcut": 4.0, "rcut_smth": 0.5, "sel": [10, 20],
                       "neuron": [4, 8], "axis_neuron": 2, "precision": "float64", "seed": 55},
        "fitting_net": {"neuron": [8, 8], "precision": "float64", "seed": 56},
        "spin": {"use_spin": [True, False], "virtual_scale": [0.3]}},
}


def make_bad_models(bad_dir, work):
    """Small untrained DPA-2, DPA-3 and spin models (default statistics: davg 0, dstd 1), for
    the tests that halomd refuses them and names the missing feature."""
    import torch
    from deepmd.pt.model.model import get_model
    bad_dir.mkdir(parents=True, exist_ok=True)
    for fname, config in BAD_MODELS.items():
        cfg = normalized_config(config)
        torch.manual_seed(cfg["descriptor"]["seed"])
        model = get_model(cfg).to("cpu")
        model.model_def_script = json.dumps(cfg)
        model.eval()
        pth = work / fname.replace(".dp", ".pth")
        torch.jit.save(torch.jit.script(model), str(pth), {"data_modifier.pth": ""})
        convert_backend(pth, bad_dir / fname)


# --- evaluation ---------------------------------------------------------------------------------

_DEEPPOT_CACHE = {}


def _deeppot(model_file):
    from deepmd.infer import DeepPot
    key = str(model_file)
    if key not in _DEEPPOT_CACHE:
        _DEEPPOT_CACHE[key] = DeepPot(key)
    return _DEEPPOT_CACHE[key]


_EVAL_CACHE = {}


def deepmd_eval(model_file, frames, type_map):
    """DeepPot(model_file).eval(atomic=True) on frames of equal atoms; list of golden frames.
    Results are cached per (model file, frames object)."""
    key = (str(model_file), id(frames))
    if key not in _EVAL_CACHE:
        _EVAL_CACHE[key] = (frames, _deepmd_eval(model_file, frames, type_map))
    return copy.deepcopy(_EVAL_CACHE[key][1])


def _deepmd_eval(model_file, frames, type_map):
    import numpy as np
    dp = _deeppot(model_file)
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


def dotr_sensitive(cfg):
    """DPA-1 models whose result depends on the rounding of the switching function for
    neighbours very close to rcut: attention layers with attn_dotr and without
    smooth_type_embedding (se_atten_v2 is always smooth). There the gate uses
    rhat = R[1:4] / max(|R[1:4]|, 1e-12) (torch F.normalize); for |R[1:4]| < 1e-12 (a neighbour
    within about 2e-4 A of rcut) rhat is R[1:4] * 1e12, proportional to sw(r), which carries a
    relative rounding error of 1e-16/sw from 1 + u^3 (-6u^2 + 15u - 10)."""
    d = cfg["descriptor"]
    return (d["type"] in ("se_atten", "dpa1") and d.get("attn_layer", 0) > 0
            and d.get("attn_dotr", True) and not d.get("smooth_type_embedding", False))


# Forces of the atoms of sensitive pairs and the virial of their frames: the force on i and j
# through rhat_ij = R_ij[1:4] * 1e12 carries dsw/dr, which is the difference of two O(1) terms
# cancelling to ~1e-8 (u = (r - rcut_smth) / (rcut - rcut_smth) within 1e-4 of 1), so its
# rounding (relative ~1e-8) depends on the order of the operations, and DeePMD-kit's is that of
# torch autograd. Other atoms keep the full tolerance.
TOL_SENSITIVE = {"force": 1e-6, "virial": 1e-7}


def sensitive_tolerance(pairs):
    """tolerance.sensitive of a golden: the (frame, atom) of both ends of every sensitive pair,
    with the tolerance of their forces and of their frames' virial."""
    atoms = sorted({(f, i) for f, i, j, _ in pairs} | {(f, j) for f, i, j, _ in pairs})
    return {"atoms": [list(a) for a in atoms]} | TOL_SENSITIVE


def eps_branch_pairs(dp_file, frames, type_map):
    """Neighbour pairs (i, j, r) within rcut whose |R_ij[1:4]| = sw(r) / (r dstd[t_i, 0, 1]) is
    below 1e-12, over all frames; sw computed as DeePMD-kit's PyTorch backend does."""
    import h5py
    import numpy as np
    from ase.neighborlist import neighbor_list
    with h5py.File(dp_file, "r") as f:
        d = json.loads(f.attrs["json"])["model"]["descriptor"]
        dstd = f[d["@variables"]["dstd"]][()]
    rc, rs = d["rcut"], d["rcut_smth"]
    out = []
    for k, fr in enumerate(frames):
        atoms = _atoms(fr)
        ii, jj, rr = neighbor_list("ijd", atoms, rc)
        uu = (np.clip(rr, rs, rc) - rs) / (rc - rs)
        uu2 = uu * uu
        sw = uu2 * uu * (-6 * uu2 + 15 * uu - 10) + 1
        t = np.array([type_map.index(x) for x in fr["species"]])[ii]
        x = sw / rr / dstd[t, 0, 1]
        for m in np.nonzero(x < 1e-12)[0]:
            out.append((k, int(ii[m]), int(jj[m]), float(rr[m])))
    return out


_CHECK_CACHE = {}


def min_distance(frames):
    """Smallest interatomic (minimum-image for periodic frames) distance over the frames."""
    from ase.neighborlist import neighbor_list
    return min(float(neighbor_list("d", _atoms(fr), 3.0).min()) for fr in frames)


def check_dp_matches(dp_file, frames, expected, type_map, tol):
    """DeepPot(dp_file) (numpy backend: energies only) must reproduce the energies and atom
    energies `expected` (golden frames from the .pth) on `frames`. Returns the largest relative
    differences (energy, atom energies). Cached per (file, frames, expected values)."""
    key = (str(dp_file), id(frames), json.dumps(expected))
    if key not in _CHECK_CACHE:
        _CHECK_CACHE[key] = (frames, _check_dp_matches(dp_file, frames, expected, type_map))
    err_e, err_ae = _CHECK_CACHE[key][1]
    if not (err_e <= tol and err_ae <= tol):
        raise RuntimeError(f"{dp_file} does not reproduce the .pth: energy rel. diff "
                           f"{err_e:.2e}, atom energies {err_ae:.2e} (> {tol:.0e}); the "
                           "conversion is not lossless")
    return err_e, err_ae


def _check_dp_matches(dp_file, frames, expected, type_map):
    import numpy as np
    dp = _deeppot(dp_file)
    atype = np.array([type_map.index(s) for s in frames[0]["species"]], dtype=np.int32)
    err_e = err_ae = 0.0
    for fr, ref in zip(frames, expected, strict=True):
        cell = None if fr["cell"] is None else np.array(fr["cell"]).reshape(1, 9)
        e, _f, _v, ae, _av = dp.eval(np.array(fr["positions"]).reshape(1, -1), cell, atype,
                                     atomic=True)
        err_e = max(err_e, rel_err(float(e[0].item()), ref["energy"]))
        err_ae = max(err_ae, rel_err(ae[0].reshape(-1).tolist(), ref["atom_energy"]))
    return err_e, err_ae


# --- documents ----------------------------------------------------------------------------------

def provenance(versions, command, notes, **over):
    p = {"tool": "deepmd-kit", "deepmd_kit_version": versions["deepmd"],
         "torch_version": versions["torch"], "backend": "pytorch (.pth)",
         "date": versions["date"], "command": command, "notes": notes}
    p.update(over)
    return p


def _model_notes(name, cfg, spec, built=None):
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
    if built is not None:
        ns, npar = built["nstat"], built["nparams"]
        notes += (f" Parameters (dp show x.pth size, equal to the w/b/idt arrays of the .dp): "
                  f"descriptor {npar['descriptor']}, fitting {npar['fitting_net']}.")
        notes += (f" DeePMD-kit neighbour statistics of {', '.join(spec['stat'])}: at most "
                  f"{ns['max_nbor']} neighbours within rcut (sel {ns['sel']}: never truncated)")
        if spec.get("min_nbor_dist"):
            notes += (f", min_nbor_dist {ns['min_nbor_dist']!r} stored in the model "
                      "(@variables.min_nbor_dist of the .dp), as `dp train` does")
        notes += "."
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


def _golden_source(s, gmx_cmds):
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
    if s == HCNO_BOX:
        src += (f"; molecules placed by numpy default_rng({SEED_HCNO}), minimum intermolecular "
                f"distances {HCNO_MIN_DIST} A")
    return src


def generate(root, shared, gmx, command, work):
    """Writes tests/data/{models,structures,golden}, the DPA-2/DPA-3/spin models of
    tests/data/bad and examples/water under `root`."""
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
    npy = write_npy_systems(structures, work / "npy")
    make_deeppot_case(shared, data, versions, command)

    built = {}
    for name, spec in MODELS.items():
        pth, dp_file, cfg, nstat = build_model(name, spec, structures, work, data / "models",
                                               npy)
        ortho = structures["water_192_ortho.xyz"]
        err = check_dp_matches(dp_file, ortho, deepmd_eval(pth, ortho, cfg["type_map"]),
                               cfg["type_map"], _dp_check_tol(cfg, dp_file, ortho))
        nparams = count_params(pth, dp_file)
        built[name] = {"pth": pth, "cfg": cfg, "nstat": nstat, "nparams": nparams,
                       "dp_checked": ["water_192_ortho.xyz"]}
        log(f"model {name}: {dp_file.stat().st_size / 1e6:.2f} MB, "
            f"{sum(nparams.values())} parameters, neighbours {nstat['max_nbor']} <= sel "
            f"{nstat['sel']}, min_nbor_dist {nstat['min_nbor_dist']:.6f}"
            f"{' (stored)' if spec.get('min_nbor_dist') else ''}; .dp vs .pth energy rel. "
            f"diff {err[0]:.1e}, atom energies {err[1]:.1e}")
    os.symlink("../../tests/data/models/se_e2_a_water_one_side.dp", exdir / "water.dp")

    # float32 models: DeePMD-kit computes in float32; halomd computes in double from the same
    # float32 weights (= the f64 twin). Tolerance: 10 x the largest float32-vs-float64
    # difference over that model's float32 goldens.
    twins, fp32_err, fp32_tol = {}, {}, {}
    for m, b in built.items():
        if b["cfg"]["descriptor"]["precision"] != "float32":
            continue
        twins[m] = make_f64_twin(b["pth"], work / f"{m}_f64.pth")
        fp32_err[m] = {q: 0.0 for q in QUANTITIES}
        for gm, s, kind in GOLDENS:
            if gm == m and kind == "pth":
                fa = deepmd_eval(b["pth"], structures[s], b["cfg"]["type_map"])
                fb = deepmd_eval(twins[m], structures[s], b["cfg"]["type_map"])
                for x, y in zip(fa, fb):
                    for q in QUANTITIES:
                        fp32_err[m][q] = max(fp32_err[m][q], rel_err(x[q], y[q]))
        fp32_tol[m] = {q: max(TOL_FP64, ceil_1sig(10.0 * fp32_err[m][q])) for q in QUANTITIES}
        log(f"{m}: float32 vs float64 evaluation, largest relative differences: "
            + ", ".join(f"{q} {fp32_err[m][q]:.2e}" for q in QUANTITIES))

    # compressed models: `dp --pt compress` of the .pth (goldens), `dp --dp compress` of the .dp
    # for the COMPRESSED_DP ones (committed)
    compressed = {}
    for m, s, kind in GOLDENS:
        if kind in COMPRESSION_PARAMS and (m, kind) not in compressed:
            cpth, meta = compress_pth(m, kind, built[m]["pth"], work)
            if abs(meta["min_nbor_dist"] - built[m]["nstat"]["min_nbor_dist"]) > 0.0:
                raise RuntimeError(f"{m}: compressed model's min_nbor_dist differs")
            if (m, kind) in COMPRESSED_DP:
                cdp = compress_dp(m, kind, data / "models" / f"{m}.dp", built[m]["cfg"],
                                  MODELS[m], npy, work, data / "models")
                worst = check_compressed_dp(cdp, meta, cpth)
                meta["compressed_model"] = f"models/{cdp.name}"
                meta["_dp_check"] = worst
            compressed[(m, kind)] = (cpth, meta)
            log(f"{kind} {m}: tables {[t['shape'] for t in meta['tables']]}"
                + (f", type_embd_data {meta['type_embd_data_shape']}"
                   if "type_embd_data_shape" in meta else "")
                + (f", {meta['compressed_model']} "
                   f"({(data / meta['compressed_model']).stat().st_size / 1e6:.2f} MB)"
                   if "compressed_model" in meta else ""))

    sensitive = {}
    for m, s, kind in GOLDENS:
        b = built[m]
        cfg, spec, tm = b["cfg"], MODELS[m], b["cfg"]["type_map"]
        prec = cfg["descriptor"]["precision"]
        notes = _model_notes(m, cfg, spec, b)
        tol = {q: TOL_FP64 for q in QUANTITIES}
        desc = f"{spec['about']} on {STRUCTURE_ABOUT[s]}"
        comp = None
        extra_prov = {}
        if kind == "pth":
            frames = deepmd_eval(b["pth"], structures[s], tm)
            dp_file = data / "models" / f"{m}.dp"
            if sum(b["nparams"].values()) < NUMPY_CHECK_MAX_PARAMS or s in b["dp_checked"]:
                err = check_dp_matches(dp_file, structures[s], frames, tm,
                                       _dp_check_tol(cfg, dp_file, structures[s]))
                notes += (" DeepPot on the .dp (numpy backend, no forces) reproduces these "
                          f"energies to {err[0]:.0e} and atom energies to {err[1]:.0e} "
                          "(relative).")
            else:
                err = (float("nan"), float("nan"))
                notes += (" (The .dp was checked against the .pth with DeepPot's numpy backend "
                          f"on {', '.join(b['dp_checked'])} only: its numpy DPA-1 evaluation of "
                          "this model is slow.)")
            if dotr_sensitive(cfg):
                pairs = eps_branch_pairs(dp_file, structures[s], tm)
                sensitive[golden_name(m, s, kind)] = (pairs, err)
                if pairs:
                    extra_prov["sensitive_pairs"] = [list(x) for x in pairs]
                    tol["sensitive"] = sensitive_tolerance(pairs)
                    notes += (
                        f" Sensitive: {len(pairs)} (frame, centre i, neighbour j, r) "
                        f"entries, {pairs[:4]}, lie so close to rcut that |R_ij[1:4]| < 1e-12 "
                        "(it depends on dstd of the centre type), so the "
                        "attn_dotr gate uses rhat = R_ij[1:4] * 1e12 (torch F.normalize eps), "
                        "which is proportional to sw(r) and inherits its rounding (relative "
                        "1e-16/sw, about 1e-4 here): reproducing these values to 1e-10 needs "
                        "DeePMD-kit's PyTorch switching function, uu2 = u*u; "
                        "sw = uu2*u*(-6*uu2 + 15*u - 10) + 1, in that order without FMA; "
                        "DeePMD-kit's numpy backend evaluates sw in another form"
                        + (f", and its atom energies differ from these by {err[1]:.0e}."
                           if math.isfinite(err[1]) else " (not compared here)."))
            if m in fp32_tol:
                tol = fp32_tol[m]
                notes += (" Tolerance: DeePMD-kit evaluates this model in float32; the tolerance "
                          "is 10 x (rounded up) the largest relative difference between "
                          "DeePMD-kit's float32 result and DeePMD-kit's float64 evaluation of the "
                          "same weights (cast exactly to float64) over this model's float32 "
                          "goldens: " + ", ".join(f"{q} {fp32_err[m][q]:.2e}"
                                                  for q in QUANTITIES) + ".")
        elif kind == "f64eval":
            frames = deepmd_eval(twins[m], structures[s], tm)
            desc = (f"{spec['f64eval_about']}, its float32 weights cast exactly to float64 and "
                    f"evaluated in float64 by DeePMD-kit, on {STRUCTURE_ABOUT[s]}")
            notes += (" Evaluated by DeePMD-kit in float64: the float32 model serialised "
                      "(serialize_from_file), every float32 array cast to float64 and every "
                      "precision set to float64, deserialised (deserialize_to_file) to .pth; "
                      "this is what a double-precision evaluation of the float32 .dp gives.")
        else:
            cpth, meta = compressed[(m, kind)]
            frames = deepmd_eval(cpth, structures[s], tm)
            plain = deepmd_eval(b["pth"], structures[s], tm)
            diff = {q: max(rel_err(x[q], y[q]) for x, y in zip(frames, plain))
                    for q in QUANTITIES}
            comp = {k: v for k, v in meta.items() if not k.startswith("_")}
            comp["deepmd_rel_diff_vs_uncompressed"] = diff
            desc = (f"{spec['about']}, compressed by DeePMD-kit (stride {meta['stride0']}, "
                    f"extrapolate {meta['extrapolate']}), on {STRUCTURE_ABOUT[s]}")
            notes += (f" Compressed with `{meta['command']}` (deepmd.pt.entrypoints.compress."
                      "enable_compression, the function that command runs) from the model "
                      f"whose .dp is {m}.dp (min_nbor_dist {meta['min_nbor_dist']!r} stored in "
                      "it); these values are DeepPot on the compressed .pth. The 'compression' "
                      "object gives the table parameters, DeePMD-kit's compress_info of each "
                      "tabulated embedding net (index = the net's index in the descriptor's "
                      "NetworkCollection) and the table shapes; "
                      "deepmd_rel_diff_vs_uncompressed is the largest relative difference "
                      "between these values and DeePMD-kit's uncompressed model.")
            dmin = min_distance(structures[s])
            if dmin < meta["min_nbor_dist"]:
                notes += (f" The structure has atoms closer ({dmin:.4f} A) than min_nbor_dist, "
                          "so some table inputs lie above `upper`, in the second table "
                          "(stride1).")
            else:
                notes += (f" Its closest pair ({dmin:.4f} A) is not closer than min_nbor_dist: "
                          "every table input lies in the first table (stride0).")
            if "compressed_model" in meta:
                cdp = data / meta["compressed_model"]
                err = check_dp_matches(cdp, structures[s], frames, tm, DP_CHECK_TOL[prec])
                notes += (f" {meta['compressed_model']} is the same model compressed by "
                          "`dp --dp compress` with the same options (plus -t, see README): "
                          "DeepPot on it (numpy backend) reproduces these energies to "
                          f"{err[0]:.0e} and atom energies to {err[1]:.0e}; its table "
                          "coefficients a0..a5 differ from the .pth's by at most "
                          + ", ".join(f"{x:.0e}" for x in meta["_dp_check"])
                          + " (relative to each coefficient's largest value).")
        doc = {
            "schema": SCHEMA,
            "description": desc,
            "model": f"models/{m}.dp",
            "structure": f"structures/{s}",
            "provenance": provenance(
                versions, command, notes + " " + _golden_source(s, gmx_cmds) + ".",
                nparams=sum(b["nparams"].values()), nparams_detail=b["nparams"],
                **extra_prov),
            "tolerance": tol | {"definition": TOL_DEFINITION},
            "frames": frames,
        }
        if comp is not None:
            doc = {k: doc[k] for k in GOLDEN_KEYS if k != "frames"} | {"compression": comp,
                                                                      "frames": frames}
        write_golden(data / "golden" / golden_name(m, s, kind), doc)
    log(f"{len(GOLDENS)} goldens written")
    for g, (pairs, err) in sensitive.items():
        log(f"  {g}: {len(pairs)} pair(s) with |R[1:4]| < 1e-12 (rcut - r >= "
            f"{min((cfg_rc(built, g) - p[3] for p in pairs), default=float('nan')):.1e} A); "
            f"numpy vs PyTorch atom energies {err[1]:.1e}")

    make_bad_models(data / "bad", work)
    log(f"refused-model examples written: {', '.join(BAD_MODELS)}")

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
# tests/data/bad holds files of python/halomd/make_test_inputs.py too: only these are ours
BAD_FILES = [f"tests/data/bad/{f}" for f in BAD_MODELS]


def _managed_files(root):
    files = []
    for d, suf in MANAGED:
        if (root / d).is_dir():
            files += [p.relative_to(root).as_posix() for p in sorted((root / d).iterdir())
                      if p.is_file() and p.name.endswith(suf)]
    files += [f for f in EXAMPLE_FILES + BAD_FILES
              if (root / f).is_symlink() or (root / f).exists()]
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
