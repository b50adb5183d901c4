#!/usr/bin/env python3
"""Train a DeePMD-kit model (PyTorch backend) for as many steps as fit in a wall-clock budget.

    python python/halomd/train_timed.py input.json --budget-s 480 [--probe-steps 300]
        [--init-frz-model model.pth --start-lr 2e-4]

Run in the training folder (the one holding input.json and the data paths it names). DeePMD-kit's
exponential learning rate is fixed by start_lr, stop_lr and numb_steps, so a run cut off by a
timer ends with a learning rate far above stop_lr. This script first trains --probe-steps steps
(in probe/), reads the wall time of the last display interval from DeePMD-kit's log ("Batch N:
total wall time = X s") to get seconds per step, then writes OUT/input.json (--out, default timed/) with numb_steps
set to what fits in the rest of the budget (less the start-up time measured by the probe and a
10% margin), decay_steps scaled to keep about 200 decays, and disp_freq/save_freq scaled alike,
and trains it from scratch (start_lr, stop_lr and everything else unchanged). The data statistics
of the probe are kept in stat.hdf5 (training.stat_file, unless the input sets one) and reused. Prints one JSON
line with the measured and chosen figures; the real run's log is OUT/train.log, its lcurve.out
and checkpoints are in OUT/. With --init-frz-model the real run starts from the weights of a
frozen model of the same architecture (DeePMD-kit's `dp train --init-frz-model`), so that a
training can go on over several budgets; --start-lr then sets where its learning rate restarts
(the probe still starts from scratch: it only measures the speed).
Needs `dp` (DeePMD-kit) on PATH or --dp.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import time


def train(dp, folder, config, log_path, extra=()):
    """Run `dp --pt train` (with the arguments `extra`) on `config` in `folder`; returns (wall
    seconds, log text)."""
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "input.json"), "w") as f:
        json.dump(config, f, indent=2)
    t0 = time.monotonic()
    with open(log_path, "w") as log:
        rc = subprocess.call([dp, "--pt", "train", "input.json", *extra], cwd=folder, stdout=log,
                             stderr=subprocess.STDOUT)
    wall = time.monotonic() - t0
    text = open(log_path).read()
    if rc != 0:
        sys.exit(f"{log_path}: dp train failed with exit code {rc}:\n{text[-2000:]}")
    return wall, text


def rebase_paths(config, depth):
    """Prefixes relative system paths with ../ * depth (the probe runs one folder down)."""
    up = "../" * depth
    for key in ("training_data", "validation_data"):
        data = config["training"].get(key)
        if not data:
            continue
        systems = data["systems"]
        if isinstance(systems, str):
            data["systems"] = systems if os.path.isabs(systems) else up + systems
        else:
            data["systems"] = [s if os.path.isabs(s) else up + s for s in systems]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("input", help="DeePMD-kit input.json (its numb_steps is replaced)")
    ap.add_argument("--budget-s", type=float, required=True,
                    help="wall seconds for probe and training together")
    ap.add_argument("--probe-steps", type=int, default=300)
    ap.add_argument("--out", default="timed", help="folder of the real run (default timed/)")
    ap.add_argument("--dp", default="dp")
    ap.add_argument("--init-frz-model", help="frozen model (.pth) the real run starts from")
    ap.add_argument("--start-lr", type=float, help="learning rate of the real run's first step")
    args = ap.parse_args()
    start = time.monotonic()
    base = json.load(open(args.input))
    # the probe's data statistics are saved and reused by the real run (DeePMD-kit's stat_file)
    base["training"].setdefault("stat_file", os.path.abspath("stat.hdf5"))

    probe = json.loads(json.dumps(base))
    rebase_paths(probe, 1)
    t = probe["training"]
    interval = max(args.probe_steps // 3, 1)
    t.update(numb_steps=args.probe_steps, disp_freq=interval, save_freq=args.probe_steps)
    probe_wall, text = train(args.dp, "probe", probe, "probe.log")
    times = [float(x) for x in re.findall(r"Batch\s+\d+: total wall time = ([0-9.]+) s", text)]
    if not times:
        sys.exit("probe.log: no 'total wall time' line from DeePMD-kit")
    s_per_step = times[-1] / interval
    startup = max(probe_wall - args.probe_steps * s_per_step, 0.0)

    left = args.budget_s - (time.monotonic() - start) - startup
    steps = int(0.9 * left / s_per_step)
    if steps < 100:
        sys.exit(f"budget too small: {left:.0f} s left at {s_per_step:.4f} s/step")
    real = json.loads(json.dumps(base))
    rebase_paths(real, 1)
    t = real["training"]
    t["numb_steps"] = steps
    real["learning_rate"]["decay_steps"] = max(steps // 200, 1)
    t["disp_freq"] = max(steps // 100, 1)
    t["save_freq"] = max(steps // 10, 1)
    if args.start_lr is not None:
        real["learning_rate"]["start_lr"] = args.start_lr
    extra = ["--init-frz-model", os.path.abspath(args.init_frz_model)] if args.init_frz_model else []
    wall, _ = train(args.dp, args.out, real, os.path.join(args.out, "train.log"), extra)
    print(json.dumps({"input": args.input, "probe_s_per_step": round(s_per_step, 5),
                      "startup_s": round(startup, 1), "numb_steps": steps,
                      "decay_steps": real["learning_rate"]["decay_steps"],
                      "start_lr": real["learning_rate"]["start_lr"],
                      "init_frz_model": args.init_frz_model,
                      "train_wall_s": round(wall, 1),
                      "total_wall_s": round(time.monotonic() - start, 1)}))


if __name__ == "__main__":
    main()
