"""python/halomd/train_timed.py: the probe's speed turns into numb_steps that fit the budget,
data paths follow the run one folder down, the data statistics are shared through stat_file.
DeePMD-kit is replaced by a fake `dp` that logs like it does."""
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(ROOT, "python", "halomd", "train_timed.py")

# a `dp --pt train input.json` that records its input and logs DeePMD-kit's interval lines
# ("Batch N: total wall time = X s") at SECONDS_PER_STEP, or nothing when FAKE_DP_SILENT is set
FAKE_DP = """#!/usr/bin/env python3
import json, os, sys
assert sys.argv[1:4] == ["--pt", "train", "input.json"], sys.argv
cfg = json.load(open("input.json"))
cfg["argv_extra"] = sys.argv[4:]
json.dump(cfg, open("seen.json", "w"))
t = cfg["training"]
if not os.environ.get("FAKE_DP_SILENT"):
    for step in range(t["disp_freq"], t["numb_steps"] + 1, t["disp_freq"]):
        print(f"[x] DEEPMD INFO    Batch {step:7d}: total wall time = {0.01 * t['disp_freq']:.2f} s")
"""


def base_input():
    return {
        "model": {},
        "learning_rate": {"type": "exp", "decay_steps": 100, "start_lr": 1e-3, "stop_lr": 1e-6},
        "training": {"training_data": {"systems": ["../data/train"], "batch_size": 1},
                     "validation_data": {"systems": "../data/valid", "batch_size": 1},
                     "numb_steps": 7, "disp_freq": 1, "save_freq": 1, "seed": 1},
    }


@pytest.fixture()
def folder(tmp_path):
    dp = tmp_path / "dp"
    dp.write_text(FAKE_DP)
    dp.chmod(0o755)
    run = tmp_path / "run"
    run.mkdir()
    (run / "input.json").write_text(json.dumps(base_input()))
    return run


def train_timed(folder, budget, env=None, extra=()):
    return subprocess.run([sys.executable, SCRIPT, "input.json", "--budget-s", str(budget),
                           "--probe-steps", "30", "--dp", str(folder.parent / "dp"), *extra],
                          cwd=folder, capture_output=True, text=True,
                          env={**os.environ, **(env or {})})


def test_steps_fill_the_budget(folder):
    res = train_timed(folder, 100)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["probe_s_per_step"] == pytest.approx(0.01)
    # 0.9 x (100 s less the time the probe and its start-up took) at 0.01 s per step
    assert 8000 <= out["numb_steps"] <= 9000
    seen = json.load(open(folder / "timed" / "seen.json"))
    t = seen["training"]
    assert t["numb_steps"] == out["numb_steps"]
    assert seen["learning_rate"]["decay_steps"] == out["numb_steps"] // 200
    assert seen["learning_rate"]["stop_lr"] == 1e-6
    assert t["training_data"]["systems"] == ["../../data/train"]
    assert t["validation_data"]["systems"] == "../../data/valid"
    probe = json.load(open(folder / "probe" / "seen.json"))
    assert probe["training"]["numb_steps"] == 30
    assert probe["training"]["stat_file"] == t["stat_file"] == str(folder / "stat.hdf5")


def test_budget_too_small(folder):
    res = train_timed(folder, 0.5)
    assert res.returncode != 0
    assert "budget too small" in res.stderr


def test_probe_without_timing_lines(folder):
    res = train_timed(folder, 100, {"FAKE_DP_SILENT": "1"})
    assert res.returncode != 0
    assert "no 'total wall time' line" in res.stderr


def test_continue_from_a_frozen_model(folder):
    (folder / "prev.pth").write_text("weights")
    res = train_timed(folder, 100, extra=["--init-frz-model", "prev.pth", "--start-lr", "2e-4"])
    assert res.returncode == 0, res.stderr
    real = json.load(open(folder / "timed" / "seen.json"))
    assert real["argv_extra"] == ["--init-frz-model", str(folder / "prev.pth")]
    assert real["learning_rate"]["start_lr"] == 2e-4
    assert real["learning_rate"]["stop_lr"] == 1e-6
    probe = json.load(open(folder / "probe" / "seen.json"))
    assert probe["argv_extra"] == [] and probe["learning_rate"]["start_lr"] == 1e-3
    assert json.loads(res.stdout)["init_frz_model"] == "prev.pth"
