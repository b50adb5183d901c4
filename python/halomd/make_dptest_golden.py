#!/usr/bin/env python3
"""Goldens of `halomd eval -s` (dp test), `halomd eval -m a b c` (dp model-devi) and the ASE
calculator (DeePMD-kit's DP), computed by DeePMD-kit itself.

    python python/halomd/make_dptest_golden.py --update   rewrite the files below
    python python/halomd/make_dptest_golden.py            regenerate into a temporary folder
                                                          and compare (exit 1 on a difference)

Needs deepmd-kit[torch] and ase (pip install "deepmd-kit[torch]" ase; made with deepmd-kit
3.2.0, torch 2.11.0, CPU). CI needs none of it: the outputs are committed.

Writes
  tests/data/deepmd/water_pbc/      periodic DeePMD-kit system, 2 sets (3 + 1 frames of the 96
                                    water atoms of structures/water_96_small.xyz moved by seeded
                                    noise of 0.05 Å), type_map.raw in the order H O (the models
                                    say O H: the types are mapped), labels energy, force, virial
                                    from DeePMD-kit's evaluation of models/se_e2_a_water_two_side
  tests/data/deepmd/cluster_nopbc/  not periodic (nopbc), no type_map.raw, 2 frames of
                                    structures/water_48_cluster.xyz moved the same way, the same
                                    kind of labels
  tests/data/deepmd_traj/water_192/ frames 0-9 of examples/data/water_192_relabel/round1 (a
                                    halomd NVT run), no labels
  tests/data/deepmd_traj/hcno_270/  6 frames of structures/hcno_270_mixture.xyz moved by seeded
                                    noise of 0.03 Å, no labels
  tests/data/dptest/*.json          dp test's errors (DeePMD-kit's tester, the code `dp test`
                                    runs), per system and weighted, and its report lines
  tests/data/model_devi/*.json, *.out  dp model-devi's deviations (make_model_devi writes the
                                    .out; calc_model_devi's arrays at full precision)
  tests/data/ase/dp_calculator.json DeePMD-kit's ASE calculator DP on three structures
  tests/data/derived/dpa1_small_hcno_onch.dp, dpa1_small_hcno_chon_fit.dp
                                    models/dpa1_small_hcno.dp with the type map in other orders
                                    (change_type_map), the second with perturbed fitting
                                    weights: an ensemble whose type maps are in three orders

Tolerances (stored in each file) are relative, max|halomd - golden| / max|golden| per array;
tests/data/README.md says why each is what it is.
"""

import argparse
import json
import logging
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"
SCHEMA = "halomd-dptest-golden-1"
TOL_FP64 = 1e-10  # the eval goldens' float64 tolerance (docs/testing.md)


def log(msg):
    print(f"make_dptest_golden: {msg}", file=sys.stderr, flush=True)


# ------------------------------------------------------------------------------------------------
# Generation (needs deepmd-kit, torch, ase, numpy)
# ------------------------------------------------------------------------------------------------

def provenance(command):
    import deepmd
    import torch

    return {"tool": "python/halomd/make_dptest_golden.py", "deepmd_kit_version":
            deepmd.__version__, "torch_version": torch.__version__, "backend": "pytorch (CPU)",
            "command": command}


def to_pth(dp_file, work):
    """The .dp model as a PyTorch model (dp convert-backend), which DeePMD-kit evaluates with
    forces by autograd."""
    from deepmd.entrypoints.convert_backend import convert_backend

    out = work / (Path(dp_file).stem + ".pth")
    if not out.exists():
        convert_backend(INPUT=str(dp_file), OUTPUT=str(out))
    return out


def write_system(path, frames, type_raw, type_map, pbc, labels=None, sets=None):
    """A DeePMD-kit system: frames are (coord [natoms, 3], box [3, 3] or None)."""
    import numpy as np

    path.mkdir(parents=True, exist_ok=True)
    (path / "type.raw").write_text("".join(f"{t}\n" for t in type_raw))
    if type_map:
        (path / "type_map.raw").write_text("".join(f"{n}\n" for n in type_map))
    if not pbc:
        (path / "nopbc").write_text("")
    sets = sets or [len(frames)]
    start = 0
    for s, n in enumerate(sets):
        d = path / f"set.{s:03d}"
        d.mkdir(exist_ok=True)
        sl = slice(start, start + n)
        np.save(d / "coord.npy", np.array([f[0].reshape(-1) for f in frames[sl]]))
        if pbc:
            np.save(d / "box.npy", np.array([f[1].reshape(-1) for f in frames[sl]]))
        for key, arr in (labels or {}).items():
            np.save(d / f"{key}.npy", np.asarray(arr[sl]))
        start += n


def jiggle(atoms, n, sigma, seed):
    import numpy as np

    rng = np.random.default_rng(seed)
    x0 = atoms.get_positions()
    cell = np.asarray(atoms.get_cell()) if atoms.pbc.any() else None
    return [(x0 + rng.normal(0.0, sigma, x0.shape), cell) for _ in range(n)]


def dp_labels(pth, frames, atype, pbc):
    """Energy, force, virial of frames by DeePMD-kit (float64)."""
    import numpy as np
    from deepmd.infer import DeepPot

    dp = DeepPot(str(pth))
    coord = np.array([f[0].reshape(-1) for f in frames])
    box = np.array([f[1].reshape(-1) for f in frames]) if pbc else None
    e, f, v = dp.eval(coord, box, atype)[:3]
    return {"energy": e.reshape(-1), "force": f.reshape(len(frames), -1),
            "virial": v.reshape(len(frames), 9)}


def make_data(root, work):
    import ase.io
    import numpy as np

    labeller = to_pth(DATA / "models" / "se_e2_a_water_two_side.dp", work)
    # periodic water, type map H O (models: O H)
    water = ase.io.read(DATA / "structures" / "water_96_small.xyz")
    frames = jiggle(water, 4, 0.05, 30)
    model_types = np.array([0 if s == "O" else 1 for s in water.get_chemical_symbols()])
    labels = dp_labels(labeller, frames, model_types, True)
    write_system(root / "deepmd" / "water_pbc", frames, 1 - model_types, ["H", "O"], True,
                 labels, sets=[3, 1])
    # a cluster without a cell, types indexing the model directly
    cluster = ase.io.read(DATA / "structures" / "water_48_cluster.xyz")
    cluster.pbc = False
    frames = jiggle(cluster, 2, 0.05, 31)
    types = np.array([0 if s == "O" else 1 for s in cluster.get_chemical_symbols()])
    labels = dp_labels(labeller, frames, types, False)
    write_system(root / "deepmd" / "cluster_nopbc", frames, types, None, False, labels)
    # short trajectories for the model deviation
    src = REPO / "examples" / "data" / "water_192_relabel" / "round1"
    coord = np.load(src / "set.000" / "coord.npy")[:10]
    box = np.load(src / "set.000" / "box.npy")[:10]
    traj = root / "deepmd_traj" / "water_192"
    write_system(traj, [(c.reshape(-1, 3), b.reshape(3, 3)) for c, b in zip(coord, box)],
                 [int(t) for t in (src / "type.raw").read_text().split()],
                 (src / "type_map.raw").read_text().split(), True)
    hcno = ase.io.read(DATA / "structures" / "hcno_270_mixture.xyz")
    names = ["H", "C", "N", "O"]
    write_system(root / "deepmd_traj" / "hcno_270", jiggle(hcno, 6, 0.03, 32),
                 [names.index(s) for s in hcno.get_chemical_symbols()], names, True)


def rel(a, b):
    import numpy as np

    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    scale = np.max(np.abs(b)) if b.size else 0.0
    d = np.max(np.abs(a - b)) if a.size else 0.0
    return float(d / scale) if scale > 0 else float(d)


class _Lines(logging.Handler):
    def __init__(self):
        super().__init__()
        self.lines = []

    def emit(self, record):
        self.lines.append(record.getMessage())


def source(root, path):
    """A repository path; tests/data's generated files are read from root."""
    return root / path[len("tests/data/"):] if path.startswith("tests/data/") else REPO / path


def dp_test(model_dp, data_root, label, work):
    """dp test's errors, by DeePMD-kit's own tester (deepmd/entrypoints/test.py's loop)."""
    from deepmd.infer.deep_eval import DeepEval
    from deepmd.infer.model_test import build_tester
    from deepmd.utils.data import DeepmdData
    from deepmd.utils.data_system import process_systems
    from deepmd.utils.weight_avg import merge_weighted_errors

    pth = to_pth(model_dp, work)
    dp = DeepEval(str(pth))
    tester = build_tester(dp, atomic=False)
    handler = _Lines()
    logger = logging.getLogger("deepmd")  # the testers log through its children
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    systems = []
    errs = []
    for system in sorted(process_systems(str(data_root))):
        data = DeepmdData(system, set_prefix="set", shuffle_test=False,
                          type_map=dp.get_type_map(), sort_atoms=False)
        handler.lines.append("# ---------------output of dp test--------------- ")
        sub = Path(system).relative_to(data_root)
        name = label if str(sub) == "." else f"{label}/{sub}"
        handler.lines.append(f"# testing system : {name}")
        err = tester.run(data, system, float("inf"), None)
        handler.lines.append("# ----------------------------------------------- ")
        errs.append(err)
        systems.append({"system": name, "natoms": data.natoms, "nframes": None,
                        "errors": {k: v[0] for k, v in err.items()},
                        "weights": {k: v[1] for k, v in err.items()}})
    total = merge_weighted_errors(errs)
    handler.lines.append("# ----------weighted average of errors----------- ")
    handler.lines.append(f"# number of systems : {len(systems)}")
    tester.log_errors(total)
    handler.lines.append("# ----------------------------------------------- ")
    logger.removeHandler(handler)
    for s, line in zip(systems, [ln for ln in handler.lines if "number of test data" in ln]):
        s["nframes"] = int(line.split(":")[1])
    return systems, {"nsystems": len(systems), "errors": {k: v[0] for k, v in total.items()},
                     "weights": {k: v[1] for k, v in total.items()}}, handler.lines


def _perturb(obj, rng, scale):
    """Every float array of a serialized fitting net times (1 + scale * N(0, 1))."""
    import numpy as np

    if isinstance(obj, dict):
        return {k: _perturb(v, rng, scale) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_perturb(v, rng, scale) for v in obj]
    if isinstance(obj, np.ndarray) and obj.dtype.kind == "f" and obj.size > 1:
        return obj * (1.0 + scale * rng.standard_normal(obj.shape))
    return obj


def make_permuted_models(root):
    """derived/dpa1_small_hcno_onch.dp: models/dpa1_small_hcno.dp with its type map in the
    order O N C H (DeePMD-kit's change_type_map): the same model, other type indices.
    derived/dpa1_small_hcno_chon_fit.dp: the type map C H O N and the fitting net's weights
    scaled by 1 + 0.05 N(0, 1) (seed 33): another member of the ensemble."""
    import numpy as np
    from deepmd.dpmodel.model.model import BaseModel
    from deepmd.dpmodel.utils.serialization import load_dp_model, save_dp_model

    for name, order, fit in ((PERMUTED[0], ["O", "N", "C", "H"], False),
                             (PERMUTED[1], ["C", "H", "O", "N"], True)):
        data = load_dp_model(str(root / "models" / "dpa1_small_hcno.dp"))
        model = BaseModel.deserialize(data["model"])
        model.change_type_map(order)
        data["model"] = model.serialize()
        if fit:
            fitting = data["model"]["fitting"]
            fitting["nets"] = _perturb(fitting["nets"], np.random.default_rng(33), 0.05)
        out = root / name
        out.parent.mkdir(parents=True, exist_ok=True)
        save_dp_model(str(out), data)


def make_dptest(root, work, command):
    cases = [
        ("se_e2_a_water_one_side__deepmd", "tests/data/models/se_e2_a_water_one_side.dp",
         "tests/data/deepmd"),
        ("water_trained__water_192_relabel", "examples/water/water_trained.dp",
         "examples/data/water_192_relabel"),
    ]
    for name, model, data in cases:
        log(f"dp test {model} {data}")
        systems, avg, lines = dp_test(source(root, model), source(root, data), data, work)
        doc = {"schema": SCHEMA, "description": f"dp test of {model} on {data}",
               "model": model, "data": data, "provenance": provenance(command),
               "tolerance": {"definition": "|halomd - golden| / |golden| per error",
                             "errors": TOL_FP64},
               "systems": systems, "weighted_average": avg, "report": lines}
        out = root / "dptest" / f"{name}.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(doc, indent=1) + "\n")


def eval_models(models, frames, names_per_frame, pbc):
    """Energies, forces, virials of every model on every frame (each model's own type map)."""
    import numpy as np
    from deepmd.infer import DeepPot

    es, fs, vs = [], [], []
    for pth in models:
        dp = DeepPot(str(pth))
        tmap = dp.get_type_map()
        e_, f_, v_ = [], [], []
        for (x, box), names in zip(frames, names_per_frame):
            atype = [tmap.index(n) for n in names]
            e, f, v = dp.eval(x.reshape(1, -1), box.reshape(1, -1) if pbc else None, atype)[:3]
            e_.append(e.reshape(1))
            f_.append(f.reshape(-1, 3))
            v_.append(v.reshape(9))
        es.append(np.array(e_))
        fs.append(np.array(f_))
        vs.append(np.array(v_))
    return np.array(es), np.array(fs), np.array(vs)


def lammps_relative_v(vs, eps):
    """LAMMPS pair_style deepmd's relative_v (DeepPotModelDevi::compute_relative_std with
    stride 1): each component's std divided by |its mean| + eps."""
    import numpy as np

    s = np.std(vs, axis=0) / (np.abs(np.mean(vs, axis=0)) + eps)
    return np.max(s, axis=-1), np.min(s, axis=-1), np.linalg.norm(s, axis=-1) / 3


def make_model_devi(root, work, command):
    import numpy as np
    from deepmd.infer.model_devi import (calc_model_devi_e, calc_model_devi_f,
                                         calc_model_devi_v, make_model_devi)

    outdir = root / "model_devi"
    outdir.mkdir(parents=True, exist_ok=True)
    cases = [
        ("water_192", ["examples/water/water_trained.dp", "tests/data/models/se_e2_a_water_one_side.dp",
                       "tests/data/models/se_e2_a_water_two_side.dp"], "tests/data/deepmd_traj/water_192"),
        ("hcno_270", ["tests/data/models/dpa1_small_hcno.dp",
                      "tests/data/derived/dpa1_small_hcno_onch.dp",
                      "tests/data/derived/dpa1_small_hcno_chon_fit.dp"],
         "tests/data/deepmd_traj/hcno_270"),
    ]
    settings = [("absolute", None, None, False), ("relative", 1.0, 0.5, True)]
    for name, models, traj in cases:
        pths = [to_pth(source(root, m), work) for m in models]
        tdir = source(root, traj)
        tnames = (tdir / "type_map.raw").read_text().split()
        types = [int(t) for t in (tdir / "type.raw").read_text().split()]
        names = [tnames[t] for t in types]
        coord = np.load(tdir / "set.000" / "coord.npy")
        box = np.load(tdir / "set.000" / "box.npy")
        frames = [(c.reshape(-1, 3), b.reshape(3, 3)) for c, b in zip(coord, box)]
        log(f"model deviation {name}: {len(models)} models, {len(frames)} frames")
        es, fs, vs = eval_models(pths, frames, [names] * len(frames), True)
        natoms = len(types)
        for label, relative, relative_v, atomic in settings:
            fmax, fmin, favg, fatom = calc_model_devi_f(fs, relative=relative, atomic=True)
            vabs = calc_model_devi_v(vs / natoms)
            v = lammps_relative_v(vs / natoms, relative_v) if relative_v else vabs
            devi_e = calc_model_devi_e(es / natoms)
            block = {"source": traj, "natoms": natoms,
                     "steps": [10 * k for k in range(len(frames))],
                     "max_devi_v": v[0].tolist(), "min_devi_v": v[1].tolist(),
                     "avg_devi_v": v[2].tolist(), "max_devi_f": fmax.tolist(),
                     "min_devi_f": fmin.tolist(), "avg_devi_f": favg.tolist(),
                     "devi_e": devi_e.tolist()}
            if atomic:
                block["atm_devi_f"] = fatom.tolist()
            doc = {"schema": SCHEMA,
                   "description": f"model deviation of {len(models)} models on {traj} "
                                  f"({label}): calc_model_devi_f/_v/_e of DeePMD-kit on "
                                  "DeePMD-kit's evaluations (each model typed by its own type "
                                  "map)" + ("; relative_v as LAMMPS pair_style deepmd defines "
                                            "it, in numpy" if relative_v else ""),
                   "models": models, "data": traj, "freq": 10,
                   "relative": relative or 0.0, "relative_v": relative_v or 0.0,
                   "atomic": atomic, "provenance": provenance(command),
                   "tolerance": {"definition": "max|halomd - golden| / max|golden| per column",
                                 "deviation": 1e-9},
                   "blocks": [block]}
            (outdir / f"{name}_{label}.json").write_text(json.dumps(doc, indent=1) + "\n")
        # dp model-devi itself writes the table (identical type maps only: the water models)
        if name == "water_192":
            out = outdir / f"{name}_absolute.out"
            out.unlink(missing_ok=True)
            make_model_devi(models=[str(p) for p in pths], system=str(tdir), output=str(out),
                            frequency=10)
            text = out.read_text().replace(str(tdir), traj)
            out.write_text(text)


def make_ase(root, work, command):
    import ase.io
    import numpy as np
    from deepmd.calculator import DP

    cases = [
        ("tests/data/models/se_e2_a_water_one_side.dp", "structures/water_192_triclinic.xyz", True),
        ("tests/data/models/se_e2_a_water_one_side.dp", "structures/water_48_cluster.xyz", False),
        ("tests/data/models/dpa1_small_hcno.dp", "structures/hcno_270_mixture.xyz", True),
    ]
    out = []
    for model, structure, pbc in cases:
        atoms = ase.io.read(DATA / structure)
        if not pbc:
            atoms.pbc = False
        atoms.calc = DP(str(to_pth(source(root, model), work)))
        rec = {"model": model, "structure": "tests/data/" + structure, "pbc": pbc,
               "energy": float(atoms.get_potential_energy()),
               "forces": atoms.get_forces().tolist(),
               "virial": np.asarray(atoms.calc.results["virial"]).tolist()}
        if pbc:
            rec["stress"] = atoms.get_stress().tolist()
        out.append(rec)
    doc = {"schema": SCHEMA, "description": "deepmd.calculator.DP (DeePMD-kit's ASE calculator) "
           "on structures read by ase.io.read", "provenance": provenance(command),
           "tolerance": {"definition": "max|halomd - golden| / max|golden| per array",
                         "energy": TOL_FP64, "forces": TOL_FP64, "virial": TOL_FP64,
                         "stress": TOL_FP64},
           "cases": out}
    path = root / "ase" / "dp_calculator.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1) + "\n")


def differences(new, ref, where, tol=1e-12):
    """Places where two golden documents differ: numbers beyond tol relative, anything else
    not equal (provenance and the report's lines of text are not compared)."""
    if isinstance(ref, dict):
        if set(new) != set(ref):
            return [f"{where}: keys {sorted(new)} vs {sorted(ref)}"]
        return [d for k in ref if k not in ("provenance", "report")
                for d in differences(new[k], ref[k], f"{where}.{k}", tol)]
    if isinstance(ref, list):
        if not isinstance(new, list) or len(new) != len(ref):
            return [f"{where}: lengths differ"]
        return [d for k, (a, b) in enumerate(zip(new, ref))
                for d in differences(a, b, f"{where}[{k}]", tol)]
    if isinstance(ref, float) and isinstance(new, (int, float)):
        ok = abs(new - ref) <= tol * max(abs(ref), 1e-300)
        return [] if ok else [f"{where}: {new!r} vs {ref!r}"]
    return [] if new == ref else [f"{where}: {new!r} vs {ref!r}"]


MANAGED = ["deepmd", "deepmd_traj", "dptest", "model_devi", "ase"]
PERMUTED = ("derived/dpa1_small_hcno_onch.dp", "derived/dpa1_small_hcno_chon_fit.dp")


def generate(root, command):
    """Everything into root (a copy of tests/data's layout)."""
    with tempfile.TemporaryDirectory() as w:
        work = Path(w)
        make_data(root, work)
        make_permuted_models(root)
        make_dptest(root, work, command)
        make_model_devi(root, work, command)
        make_ase(root, work, command)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--update", action="store_true", help="rewrite the committed files")
    args = ap.parse_args(argv)
    command = "python python/halomd/make_dptest_golden.py" + (" --update" if args.update else "")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "data"
        shutil.copytree(DATA / "models", root / "models")
        shutil.copytree(DATA / "structures", root / "structures")
        (root / "derived").mkdir()
        generate(root, command)
        if args.update:
            for name in MANAGED:
                shutil.rmtree(DATA / name, ignore_errors=True)
                shutil.copytree(root / name, DATA / name)
            for name in PERMUTED:
                shutil.copy2(root / name, DATA / name)
            log("updated " + ", ".join(f"tests/data/{n}" for n in MANAGED))
            return 0
        bad = 0
        for name in ("dptest", "model_devi", "ase"):
            for new in sorted((root / name).glob("*.json")):
                ref = DATA / name / new.name
                if not ref.exists():
                    log(f"{ref} missing")
                    bad += 1
                    continue
                for where in differences(json.loads(new.read_text()),
                                         json.loads(ref.read_text()), ref.name):
                    log(where)
                    bad += 1
        log("the committed files are reproduced" if not bad else f"{bad} differences")
        return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
