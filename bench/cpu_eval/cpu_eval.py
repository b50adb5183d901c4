#!/usr/bin/env python3
"""CPU baseline: Deep Potential force evaluation of halomd against DeePMD-kit's PyTorch CPU
inference, same model, same configuration, same number of threads, on this machine.

Usage (from the repository root, after `make`; needs `pip install deepmd-kit[torch] ase`):
    python bench/cpu_eval/cpu_eval.py [--threads 1 2] [--steps 20] [--repeats 5]

- halomd: `halomd run` of --steps NVE steps on examples/water (1,536 atoms); the Force (DP)
  phase of <deffnm>.perf.json gives the time of one force evaluation (descriptor, networks,
  forces and virial; the neighbour list is built at list steps only, as in MD), and the whole
  step is reported too.
- DeePMD-kit: DeepPot("water.pth").eval(coords, cell, types) (converted from the same .dp with
  `dp convert-backend`), after two warm-up calls, median of --repeats calls. This includes its
  neighbour search, as every call of the Python API does.
Writes bench/results/cpu_eval_<date>_<commit>.json and prints a table.
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
EXAMPLE = os.path.join(ROOT, "examples", "water")
MODEL = os.path.join(EXAMPLE, "water.dp")
CONF = os.path.join(EXAMPLE, "water.gro")


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout


def cpu_model():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor()


def halomd_run(exe, threads, steps, workdir):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OMP_PROC_BIND="true")
    name = f"bench_t{threads}"
    sh([exe, "run", "-c", CONF, "-m", MODEL, "-deffnm", name, "-nsteps", str(steps),
        "-set", "dt=0.0002", "-set", "gen-vel=yes", "-set", "gen-seed=1",
        "-set", "nstenergy=0", "-set", "nstlog=0"], cwd=workdir, env=env)
    with open(os.path.join(workdir, name + ".perf.json")) as f:
        perf = json.load(f)
    force = perf["phases"]["Force (DP)"]
    per_eval = force["seconds"] / force["calls"]
    natoms = perf["system"]["natoms"]
    return {
        "force_s_per_eval": per_eval,
        "force_atom_steps_per_s": natoms / per_eval,
        "md_step_s": perf["performance"]["wall_s"] / perf["system"]["nsteps"],
        "md_atom_steps_per_s": perf["performance"]["atom_steps_per_s"],
    }


def deepmd_eval(threads, repeats, workdir):
    """Runs in a child process so that torch's thread settings start fresh."""
    code = f"""
import json, statistics, time, numpy as np, torch
torch.set_num_threads({threads})
torch.set_num_interop_threads(1)
from ase.io import read
from deepmd.infer import DeepPot
atoms = read({CONF!r})
dp = DeepPot({os.path.join(workdir, "water.pth")!r})
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--halomd", default=os.path.join(ROOT, "build", "halomd"))
    args = ap.parse_args()
    import deepmd

    commit = sh(["git", "-C", ROOT, "describe", "--always", "--dirty", "--abbrev=12"]).strip()
    rows = []
    with tempfile.TemporaryDirectory() as work:
        sh(["dp", "convert-backend", MODEL, os.path.join(work, "water.pth")])
        for t in args.threads:
            h = halomd_run(args.halomd, t, args.steps, work)
            d = deepmd_eval(t, args.repeats, work)
            rows.append({"threads": t, "halomd": h, "deepmd_kit_pytorch": d,
                         "ratio_force_eval": d["s_per_eval"] / h["force_s_per_eval"]})
    record = {
        "benchmark": "cpu_eval",
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "commit": commit,
        "hardware": {"cpu": cpu_model(), "logical_cpus": os.cpu_count(),
                     "machine": platform.machine()},
        "software": {"deepmd_kit": deepmd.__version__, "torch": rows[0]["deepmd_kit_pytorch"]["torch"],
                     "python": platform.python_version()},
        "system": {"structure": "examples/water/water.gro", "natoms": 1536,
                   "model": "examples/water/water.dp (se_e2_a, sel [46, 92], neuron [25, 50, 100], "
                            "axis 16, fitting [240, 240, 240], float64)"},
        "command": "python bench/cpu_eval/cpu_eval.py " + " ".join(sys.argv[1:]),
        "results": rows,
    }
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    stamp = datetime.date.today().isoformat()
    path = os.path.join(ROOT, "bench", "results", f"cpu_eval_{stamp}_{commit}.json")
    with open(path, "w") as f:
        json.dump(record, f, indent=2)
        f.write("\n")
    print(f"{'threads':>7} {'halomd force (s)':>17} {'halomd MD step (s)':>19} "
          f"{'DeePMD-kit eval (s)':>20} {'ratio':>7}")
    for r in rows:
        print(f"{r['threads']:>7} {r['halomd']['force_s_per_eval']:>17.4f} "
              f"{r['halomd']['md_step_s']:>19.4f} {r['deepmd_kit_pytorch']['s_per_eval']:>20.4f} "
              f"{r['ratio_force_eval']:>7.2f}x")
    print("wrote", os.path.relpath(path, ROOT))


if __name__ == "__main__":
    main()
