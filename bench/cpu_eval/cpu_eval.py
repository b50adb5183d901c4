#!/usr/bin/env python3
"""CPU baseline: Deep Potential force evaluation of halomd against DeePMD-kit's PyTorch CPU
inference, same model, same configuration, same number of threads, on this machine.

Usage (from the repository root, after `make`; needs `pip install deepmd-kit[torch] ase`):
    python bench/cpu_eval/cpu_eval.py [--cases water water_compressed dpa1_0p6m dpa1_1p6m]
                                      [--threads 1 2] [--repeats 5]

Cases (model, structure):
- water:            examples/water (se_e2_a, 1,536 atoms).
- water_compressed: the same model tabulated: halomd with model-compress = yes, DeePMD-kit on
                    `dp --pt compress` of it (default stride 0.01, extrapolate 5).
- dpa1_0p6m:        tests/data/models/dpa1_water.dp (DPA-1, 612,995 parameters, float64) on
                    tests/data/structures/water_192_ortho.xyz.
- dpa1_1p6m:        tests/data/models/dpa1_1p6m_fp32.dp (DPA-1, 1,670,961 parameters, stored
                    in float32) on the same box. DeePMD-kit evaluates it in float32 (as the
                    file says) and, for a like-for-like line, its float64 twin; halomd always
                    computes in double.

- halomd: `halomd run` of a few NVE steps; the Force phase of <deffnm>.perf.json gives the
  time of one force evaluation (descriptor, networks, forces and virial; the neighbour list is
  built at list steps only, as in MD), and the whole step is reported too.
- DeePMD-kit: DeepPot(model.pth).eval(coords, cell, types) (converted from the same .dp with
  `dp convert-backend`), after two warm-up calls, median of --repeats calls. This includes its
  neighbour search, as every call of the Python API does.
Writes bench/results/cpu_eval_<date>_<commit>.json and prints a table.
"""
import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DATA = os.path.join(ROOT, "tests", "data")
WATER_MODEL = os.path.join(ROOT, "examples", "water", "water.dp")
WATER_CONF = os.path.join(ROOT, "examples", "water", "water.gro")
BOX_192 = os.path.join(DATA, "structures", "water_192_ortho.xyz")

CASES = {
    "water": {"model": WATER_MODEL, "conf": WATER_CONF, "steps": 20,
              "about": "se_e2_a water (sel [46, 92], neuron [25, 50, 100], axis 16, fitting "
                       "[240, 240, 240], float64), 1,536 atoms"},
    "water_compressed": {"model": WATER_MODEL, "conf": WATER_CONF, "steps": 20,
                         "halomd_set": ["model-compress=yes"], "deepmd": "compress",
                         "about": "the same model with tabulated embedding nets (stride 0.01, "
                                  "extrapolate 5), 1,536 atoms"},
    "dpa1_0p6m": {"model": os.path.join(DATA, "models", "dpa1_water.dp"), "conf": BOX_192,
                  "steps": 4,
                  "about": "DPA-1 (DeePMD-kit's examples/water/se_atten, 612,995 parameters, "
                           "float64), 192 atoms"},
    "dpa1_1p6m": {"model": os.path.join(DATA, "models", "dpa1_1p6m_fp32.dp"), "conf": BOX_192,
                  "steps": 3, "deepmd": "float32+float64",
                  "about": "DPA-1 (neuron [64, 128, 256], attn 256, 2 layers, fitting "
                           "[240, 240, 240], 1,670,961 parameters, float32 weights), 192 atoms"},
}


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout


def cpu_model():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor()


def halomd_run(exe, case, threads, workdir):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OMP_PROC_BIND="true")
    name = f"bench_t{threads}"
    sets = ["dt=0.0002", "gen-vel=yes", "gen-seed=1", "nstenergy=0", "nstlog=0"]
    sets += case.get("halomd_set", [])
    cmd = [exe, "run", "-c", case["conf"], "-m", case["model"], "-deffnm", name, "-nsteps",
           str(case["steps"])]
    for s in sets:
        cmd += ["-set", s]
    sh(cmd, cwd=workdir, env=env)
    with open(os.path.join(workdir, name + ".perf.json")) as f:
        perf = json.load(f)
    force = perf["phases"]["Force"]
    per_eval = force["seconds"] / force["calls"]
    natoms = perf["system"]["natoms"]
    return {
        "force_s_per_eval": per_eval,
        "force_atom_steps_per_s": natoms / per_eval,
        "md_step_s": perf["performance"]["wall_s"] / perf["system"]["nsteps"],
        "md_atom_steps_per_s": perf["performance"]["atom_steps_per_s"],
    }


def deepmd_eval(pth, conf, threads, repeats):
    """Runs in a child process so that torch's thread settings start fresh."""
    code = f"""
import json, statistics, time, numpy as np, torch
torch.set_num_threads({threads})
torch.set_num_interop_threads(1)
from ase.io import read
from deepmd.infer import DeepPot
atoms = read({conf!r})
dp = DeepPot({pth!r})
tmap = dp.get_type_map()
types = np.array([tmap.index(s) for s in atoms.get_chemical_symbols()])
coord = atoms.positions.reshape(1, -1)
cell = atoms.cell.array.reshape(1, -1)
for _ in range(2):
    dp.eval(coord, cell, types)
times = []
for _ in range({repeats}):
    t0 = time.perf_counter()
    dp.eval(coord, cell, types)
    times.append(time.perf_counter() - t0)
print(json.dumps({{"s_per_eval": statistics.median(times), "natoms": len(types),
                  "torch": torch.__version__}}))
"""
    out = json.loads(sh([sys.executable, "-c", code]).strip().splitlines()[-1])
    out["atom_steps_per_s"] = out["natoms"] / out["s_per_eval"]
    return out


def float64_twin(dp_file, out):
    """The float32 model with every array cast to float64 and every precision set to
    float64 (what DeePMD-kit would evaluate in double), saved as .pth."""
    code = f"""
import numpy as np
from deepmd.pt.utils.serialization import deserialize_to_file, serialize_from_file
def cast(node):
    if isinstance(node, dict):
        return {{k: ("float64" if k == "precision" else cast(v)) for k, v in node.items()}}
    if isinstance(node, list):
        return [cast(v) for v in node]
    if isinstance(node, np.ndarray) and node.dtype == np.float32:
        return node.astype(np.float64)
    return node
from deepmd.dpmodel.utils.serialization import load_dp_model
deserialize_to_file({out!r}, cast(load_dp_model({dp_file!r})))
"""
    sh([sys.executable, "-c", code])


def deepmd_models(name, case, work):
    """DeePMD-kit .pth files of a case: {label: path}."""
    pth = os.path.join(work, f"{name}.pth")
    sh(["dp", "convert-backend", case["model"], pth])
    kind = case.get("deepmd", "plain")
    if kind == "compress":
        cpth = os.path.join(work, f"{name}_compressed.pth")
        sh(["dp", "--pt", "compress", "-i", pth, "-o", cpth], cwd=work)
        return {"compressed": cpth}
    if kind == "float32+float64":
        twin = os.path.join(work, f"{name}_f64.pth")
        float64_twin(case["model"], twin)
        return {"float32": pth, "float64": twin}
    return {"float64": pth}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--halomd", default=os.path.join(ROOT, "build", "halomd"))
    args = ap.parse_args()
    import deepmd

    commit = sh(["git", "-C", ROOT, "describe", "--always", "--dirty", "--abbrev=12"]).strip()
    rows, torch_version = [], None
    with tempfile.TemporaryDirectory() as work:
        for name in args.cases:
            case = CASES[name]
            pths = deepmd_models(name, case, work)
            for t in args.threads:
                h = halomd_run(args.halomd, case, t, work)
                row = {"case": name, "threads": t, "halomd": h, "deepmd_kit_pytorch": {}}
                for label, pth in pths.items():
                    d = deepmd_eval(pth, case["conf"], t, args.repeats)
                    torch_version = d.pop("torch")
                    d["ratio_to_halomd"] = d["s_per_eval"] / h["force_s_per_eval"]
                    row["deepmd_kit_pytorch"][label] = d
                rows.append(row)
                print(f"{name} threads {t}: done", file=sys.stderr, flush=True)
    record = {
        "benchmark": "cpu_eval",
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "commit": commit,
        "hardware": {"cpu": cpu_model(), "logical_cpus": os.cpu_count(),
                     "machine": platform.machine()},
        "software": {"deepmd_kit": deepmd.__version__, "torch": torch_version,
                     "python": platform.python_version()},
        "cases": {n: {"model": os.path.relpath(CASES[n]["model"], ROOT),
                      "structure": os.path.relpath(CASES[n]["conf"], ROOT),
                      "about": CASES[n]["about"]} for n in args.cases},
        "command": "python bench/cpu_eval/cpu_eval.py " + " ".join(sys.argv[1:]),
        "results": rows,
    }
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    stamp = datetime.date.today().isoformat()
    path = os.path.join(ROOT, "bench", "results", f"cpu_eval_{stamp}_{commit}.json")
    with open(path, "w") as f:
        json.dump(record, f, indent=2)
        f.write("\n")
    print(f"{'case':>17} {'thr':>3} {'halomd force (s)':>17} {'DeePMD-kit eval (s)':>28} "
          f"{'ratio':>7}")
    for r in rows:
        for label, d in r["deepmd_kit_pytorch"].items():
            print(f"{r['case']:>17} {r['threads']:>3} {r['halomd']['force_s_per_eval']:>17.4f} "
                  f"{d['s_per_eval']:>19.4f} ({label:>7}) {d['ratio_to_halomd']:>6.2f}x")
    print("wrote", os.path.relpath(path, ROOT))


if __name__ == "__main__":
    main()
