#!/usr/bin/env python3
"""Golden data for halomd's tabulated ("compressed") embedding nets, computed by DeePMD-kit.

    python python/halomd/make_table_golden.py --update   write tests/data/derived/table_golden.json
                                                         (when missing or changed)
    python python/halomd/make_table_golden.py            regenerate into a temporary file and
                                                         compare with the committed one (exit 1
                                                         on a difference beyond tolerance)

Needs deepmd-kit with the PyTorch backend and its custom-op library (the `dp compress` path); see
tests/data/README.md. tests/unit/test_tabulate.c reads the file.

What it does, all with DeePMD-kit's own code:
1. Loads tests/data/models/se_e2_a_water_one_side.dp (load_dp_model) and deserialises its
   descriptor into the PyTorch DescrptSeA, then calls enable_compression(min_nbor_dist) with the
   defaults of `dp --pt compress` (extrapolate 5, strides 0.01 and 0.1, check_frequency -1):
   DPTabulate builds one table per embedding net.
2. Keeps, for embedding net NET: compress_info, the per-centre-type range that
   BaseTabulate._get_env_mat_range gives (before the merge over centre types), a few coefficient
   rows (chosen intervals and output channels), whole-table sums of a_k h^k for each order k
   (h = the interval's width), and evaluations g(x), dg/dx at points covering every branch of
   the interval location (below lower, on the boundaries, both strides, beyond max):
   g through the custom op torch.ops.deepmd.tabulate_fusion_se_a (DeePMD-kit's C++ kernel, as a
   compressed model runs) with em = [1, 0, 0, 0], dg through its backward (autograd).
3. Cross-checks: the numpy DescrptSeA (deepmd.dpmodel) builds the same table, and its
   tabulate_fusion evaluates the same g, within the differences recorded in provenance.notes.
"""

import argparse
import datetime
import json
import math
import os
import shlex
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
DATA = REPO_ROOT / "tests" / "data"
OUT_REL = "derived/table_golden.json"
MODEL_REL = "models/se_e2_a_water_one_side.dp"
SCHEMA = "halomd-table-golden-1"

NET = 0                 # embedding net (type_one_side: neighbour type 0, O)
MIN_NBOR_DIST = 0.9     # Å
EXTRAPOLATE = 5.0
STRIDE0 = 0.01
STRIDE1 = 0.1
CHECK_FREQUENCY = -1
CHANNELS = [0, 1, 2, 3, 24, 25, 49, 50, 51, 74, 98, 99]

TOLERANCE = {
    "coefficients": 1e-12,
    "coefficients_definition": "max over k and channels of |a_k - a_k_ref| h^k / max(1, max "
                               "over the row's channels of |a0_ref|), per interval (h: the "
                               "interval's width); a4 and a5 alone carry the round-off of "
                               "value differences divided by h^4 and h^5",
    "sums": 1e-12,
    "sums_definition": "|s_k - s_k_ref| / scale for each order k, s_k = sum of a_k h^k over "
                       "the whole table, scale = sqrt(sum of max(1, a0_ref^2)): the size of a "
                       "sum of independent round-offs of the values",
    "evaluations": 1e-10,
    "evaluations_definition": "max|a-b| / max(1, max|b|) over each point's channels, for g and "
                              "dg separately",
    "range": 0.0,
}


# ------------------------------------------------------------------------------------------------
# Pure helpers (standard library only)
# ------------------------------------------------------------------------------------------------

def _num(x):
    x = float(x)
    if not math.isfinite(x):
        raise ValueError(f"non-finite value {x}")
    return repr(x)


def _vec(v):
    return "[" + ", ".join(_num(x) for x in v) + "]"


def format_doc(doc):
    """JSON text: top-level keys in insertion order, one coefficient/evaluation row per line,
    floats as repr (round-trip exact)."""
    out = ["{"]
    keys = list(doc)
    for i, k in enumerate(keys):
        end = "," if i + 1 < len(keys) else ""
        v = doc[k]
        if k == "coefficients":
            rows = []
            for r in v["rows"]:
                chans = ",\n        ".join(_vec(c) for c in r["a"])
                rows.append(f'      {{"interval": {r["interval"]}, "width": {_num(r["width"])}, '
                            f'"a": [\n        {chans}\n      ]}}')
            body = ",\n".join(rows)
            out.append(f'  "coefficients": {{\n    "channels": {json.dumps(v["channels"])},\n'
                       f'    "rows": [\n{body}\n    ]\n  }}{end}')
        elif k == "evaluations":
            rows = []
            for e in v["points"]:
                rows.append(f'      {{"x": {_num(e["x"])}, "branch": {json.dumps(e["branch"])},'
                            f'\n       "g": {_vec(e["g"])},\n       "dg": {_vec(e["dg"])}}}')
            body = ",\n".join(rows)
            out.append(f'  "evaluations": {{\n    "channels": {json.dumps(v["channels"])},\n'
                       f'    "points": [\n{body}\n    ]\n  }}{end}')
        else:
            text = json.dumps(v, indent=2).replace("\n", "\n  ")
            out.append(f"  {json.dumps(k)}: {text}{end}")
    out.append("}")
    return "\n".join(out) + "\n"


def _scaled_coef_err(new_row, ref_row):
    h = ref_row["width"]
    scale = max(1.0, max(abs(c[0]) for c in ref_row["a"]))
    err = 0.0
    for cn, cr in zip(new_row["a"], ref_row["a"]):
        for k in range(6):
            err = max(err, abs(cn[k] - cr[k]) * h ** k / scale)
    return err


def compare_docs(new, ref):
    """List of differences beyond the stored tolerances (empty when they agree)."""
    try:
        return _compare_docs(new, ref)
    except (KeyError, IndexError, TypeError) as exc:
        return [f"layout differs ({type(exc).__name__}: {exc})"]


def _compare_docs(new, ref):
    msgs = []
    tol = ref["tolerance"]
    for key in ("schema", "model", "net", "parameters", "nspline", "last_layer_size"):
        if new.get(key) != ref.get(key):
            msgs.append(f"{key}: {new.get(key)!r} != {ref.get(key)!r}")
    if new["table_info"] != ref["table_info"]:
        msgs.append(f"table_info {new['table_info']} != {ref['table_info']}")
    if new["range_per_centre_type"] != ref["range_per_centre_type"]:
        msgs.append("range_per_centre_type differs")
    if msgs:
        return msgs
    nc, rc = new["coefficients"], ref["coefficients"]
    if nc["channels"] != rc["channels"] or [r["interval"] for r in nc["rows"]] != \
            [r["interval"] for r in rc["rows"]]:
        return ["coefficient rows or channels differ"]
    for rn, rr in zip(nc["rows"], rc["rows"]):
        e = _scaled_coef_err(rn, rr)
        if e > tol["coefficients"]:
            msgs.append(f"coefficients of interval {rr['interval']}: {e:.3g} > "
                        f"{tol['coefficients']}")
    for k in range(6):
        d = abs(new["sums"]["sum"][k] - ref["sums"]["sum"][k]) / ref["sums"]["scale"]
        if d > tol["sums"]:
            msgs.append(f"sum of a{k} h^{k}: {d:.3g} > {tol['sums']}")
    ne, re_ = new["evaluations"], ref["evaluations"]
    if [p["x"] for p in ne["points"]] != [p["x"] for p in re_["points"]]:
        return msgs + ["evaluation points differ"]
    for pn, pr in zip(ne["points"], re_["points"]):
        for q in ("g", "dg"):
            scale = max(1.0, max(abs(v) for v in pr[q]))
            d = max(abs(a - b) for a, b in zip(pn[q], pr[q])) / scale
            if d > tol["evaluations"]:
                msgs.append(f"{q}({pr['x']!r}): {d:.3g} > {tol['evaluations']}")
    return msgs


# ------------------------------------------------------------------------------------------------
# Generation (DeePMD-kit)
# ------------------------------------------------------------------------------------------------

def _points(lower, upper, tmax):
    """Evaluation points and the locate_xx branch each one takes."""
    below = [(lower - 2.5, "below lower"), (lower - 0.25, "below lower")]
    first = [(lower, "first part (x = lower)"), (lower + 1e-5, "first part"),
             (lower + 1.0, "first part (a knot)"), (lower + 1.004999, "first part"),
             (0.37251, "first part"), (lower + 3.5, "first part (a knot)"),
             (0.5 * (lower + upper) + 0.0123, "first part"), (upper - 0.005, "first part"),
             (math.nextafter(upper, -math.inf), "first part (just below upper)")]
    second = [(upper, "second part (x = upper)"), (upper + 0.05, "second part"),
              (upper + 8.456, "second part"), (0.5 * (upper + tmax), "second part (a knot)"),
              (tmax - 0.05, "second part"),
              (math.nextafter(tmax, -math.inf), "second part (just below max)")]
    beyond = [(tmax, "beyond max (x = max)"), (tmax + 0.5, "beyond max"),
              (tmax + 25.0, "beyond max")]
    return below + first + second + beyond


def generate(command):
    os.environ.setdefault("DEVICE", "cpu")
    import numpy as np
    import torch

    import deepmd
    from deepmd.dpmodel.descriptor.se_e2_a import DescrptSeA as NpSeA
    from deepmd.dpmodel.utils.serialization import load_dp_model
    from deepmd.dpmodel.utils.tabulate import tabulate_fusion
    from deepmd.pt.model.descriptor.se_a import DescrptSeA as PtSeA

    torch.set_default_dtype(torch.float64)
    tree = load_dp_model(str(DATA / MODEL_REL))
    ddict = tree["model"]["descriptor"]
    if ddict["type"] != "se_e2_a" or not ddict["type_one_side"]:
        raise RuntimeError("expected a one-side se_e2_a model")
    desc = PtSeA.deserialize(ddict)
    desc.enable_compression(MIN_NBOR_DIST, EXTRAPOLATE, STRIDE0, STRIDE1, CHECK_FREQUENCY)
    table = desc.sea.compress_data[NET].detach().cpu().numpy()
    info = desc.sea.compress_info[NET].detach().cpu().numpy()
    M = int(desc.sea.filter_neuron[-1])
    nspline = table.shape[0]
    if table.shape[1] != 6 * M:
        raise RuntimeError(f"table shape {table.shape} for M = {M}")
    lo_t, up_t = desc.table._get_env_mat_range(MIN_NBOR_DIST)
    lo_t = np.min(lo_t, axis=tuple(range(1, lo_t.ndim)))
    up_t = np.max(up_t, axis=tuple(range(1, up_t.ndim)))
    lower, upper, tmax, s0, s1 = (float(v) for v in info[:5])
    n0 = int((upper - lower) / s0)
    width = [s0 if i < n0 else s1 for i in range(nspline)]

    # cross-check: the numpy backend builds the same table
    npdesc = NpSeA.deserialize(ddict)
    npdesc.enable_compression(MIN_NBOR_DIST, EXTRAPOLATE, STRIDE0, STRIDE1, CHECK_FREQUENCY)
    np_table = np.asarray(npdesc.compress_data[NET])
    if not np.array_equal(np.asarray(npdesc.compress_info[NET]), info):
        raise RuntimeError("numpy and PyTorch backends disagree on compress_info")
    hk = np.array(width)[:, None] ** np.arange(6)[None, :]  # [nspline][6]
    a = table.reshape(nspline, M, 6)
    a_np = np_table.reshape(nspline, M, 6)
    row_scale = np.maximum(1.0, np.abs(a[:, :, 0]).max(axis=1))
    backend_diff = float((np.abs(a - a_np) * hk[:, None, :] / row_scale[:, None, None]).max())
    if backend_diff > 1e-13:
        raise RuntimeError(f"numpy and PyTorch tables differ by {backend_diff:.3g}")

    intervals = [0, 1, 2, 537, n0 - 1, n0, n0 + 1, n0 + 300, nspline - 1]
    coef_rows = [{"interval": i, "width": width[i],
                  "a": [[float(v) for v in a[i, c, :]] for c in CHANNELS]} for i in intervals]
    scaled = a * hk[:, None, :]
    sums = {"sum": [float(math.fsum(scaled[:, :, k].ravel())) for k in range(6)],
            "scale": math.sqrt(math.fsum(np.maximum(1.0, a[:, :, 0] ** 2).ravel()))}

    pts = _points(lower, upper, tmax)
    xs = np.array([p[0] for p in pts])
    n = len(xs)
    em_x = torch.tensor(xs.reshape(n, 1), requires_grad=True)
    em = torch.zeros(n, 1, 4, dtype=torch.float64)
    em[:, :, 0] = 1.0
    out = torch.ops.deepmd.tabulate_fusion_se_a(torch.tensor(table), torch.tensor(info), em_x,
                                                em, M)[0]
    g = out[:, 0, :].detach().numpy()
    dg = np.zeros((n, len(CHANNELS)))
    for j, c in enumerate(CHANNELS):
        (grad,) = torch.autograd.grad(out[:, 0, c].sum(), em_x, retain_graph=True)
        dg[:, j] = grad.numpy().ravel()
    g_np = tabulate_fusion(table, info, xs.reshape(n, 1, 1), M)[:, 0, :]
    eval_diff = float(np.abs(g - g_np).max() / max(1.0, np.abs(g).max()))
    if eval_diff > 1e-14:
        raise RuntimeError(f"C++ op and numpy tabulate_fusion differ by {eval_diff:.3g}")
    points = [{"x": float(x), "branch": b, "g": [float(g[i, c]) for c in CHANNELS],
               "dg": [float(v) for v in dg[i]]} for i, (x, b) in enumerate(pts)]

    versions = {"deepmd": deepmd.__version__, "torch": torch.__version__,
                "numpy": np.__version__}
    notes = (f"Embedding net {NET} (neighbour type {ddict['type_map'][NET]}) of "
             f"{MODEL_REL}: {ddict['neuron']} neurons, {ddict['activation_function']}, "
             f"resnet_dt {ddict['resnet_dt']}. Table built by "
             "deepmd.pt.model.descriptor.se_a.DescrptSeA.enable_compression (DPTabulate, the "
             "`dp --pt compress` path) on CPU; the numpy DescrptSeA builds the same table "
             f"within {backend_diff:.2g} (coefficient metric). g from "
             "torch.ops.deepmd.tabulate_fusion_se_a with em = [1, 0, 0, 0] and one neighbour "
             "per atom, dg from its backward; deepmd.dpmodel.utils.tabulate.tabulate_fusion "
             f"gives g within {eval_diff:.2g}. DeePMD-kit 3.2.0 extrapolates C1 outside "
             "[lower, max): g = p(x') + p'(x') (x - edge), dg = p'(x'). The range is "
             "BaseTabulate._get_env_mat_range: min/max over the 4 columns of neighbour slot 0 "
             "of davg/dstd, per centre type, then over centre types.")
    doc = {
        "schema": SCHEMA,
        "description": "DeePMD-kit's compressed table of one se_e2_a embedding net: "
                       "compress_info, coefficient rows, whole-table sums, evaluations",
        "model": MODEL_REL,
        "net": NET,
        "provenance": {
            "tool": "deepmd-kit", "deepmd_kit_version": versions["deepmd"],
            "torch_version": versions["torch"], "numpy_version": versions["numpy"],
            "backend": "pytorch (DescrptSeA.enable_compression, CPU)",
            "date": datetime.date.today().isoformat(), "command": command, "notes": notes,
        },
        "tolerance": TOLERANCE,
        "parameters": {"min_nbor_dist": MIN_NBOR_DIST, "extrapolate": EXTRAPOLATE,
                       "stride0": STRIDE0, "stride1": STRIDE1,
                       "check_frequency": CHECK_FREQUENCY},
        "range_per_centre_type": {"lower": [float(v) for v in lo_t],
                                  "upper": [float(v) for v in up_t]},
        "table_info": [float(v) for v in info],
        "nspline": int(nspline),
        "last_layer_size": M,
        "sums": sums,
        "coefficients": {"channels": CHANNELS, "rows": coef_rows},
        "evaluations": {"channels": CHANNELS, "points": points},
    }
    return doc


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--update", action="store_true",
                    help=f"write tests/data/{OUT_REL} when it is missing or differs beyond "
                    "tolerance (an equal file keeps its provenance)")
    ap.add_argument("--force", action="store_true", help="with --update: rewrite it anyway")
    args = ap.parse_args(argv)
    command = shlex.join([Path(sys.argv[0]).name, *(sys.argv[1:] if argv is None else argv)])
    doc = generate(command)
    text = format_doc(doc)
    if json.loads(text) != json.loads(json.dumps(doc)):
        raise RuntimeError("JSON round trip failed")
    dst = DATA / OUT_REL
    with tempfile.TemporaryDirectory(prefix="halomd_table_golden_") as tmp:
        new_path = Path(tmp) / "table_golden.json"
        new_path.write_text(text)
        new = json.loads(new_path.read_text())
        ref = json.loads(dst.read_text()) if dst.exists() else None
        msgs = ["missing"] if ref is None else compare_docs(new, ref)
        for m in msgs:
            print(f"{OUT_REL}: {m}")
        if args.update:
            if msgs or args.force:
                dst.parent.mkdir(parents=True, exist_ok=True)
                dst.write_text(text)
                print(f"wrote {dst} ({len(text)} bytes)")
            else:
                print(f"{OUT_REL} matches; left as it is")
            return 0
        if msgs:
            print(f"{OUT_REL} differs from the regenerated data")
            return 1
        print(f"{OUT_REL}: regenerated data matches the committed file")
        return 0


if __name__ == "__main__":
    sys.exit(main())
