"""bench/gpu_single/mixed_errors_table.py: one line per model, the worst error of each quantity
over the model's goldens and paths, the goldens counted once."""
import json
import os
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(ROOT, "bench", "gpu_single", "mixed_errors_table.py")


def entry(golden, path, energy, force):
    return {"golden": golden, "model": "built", "path": path,
            "errors": {"energy": energy, "atom_energy": 0.0, "force": force, "virial": 0.0}}


def test_worst_per_model(tmp_path):
    rec = {"goldens": [entry("m__a.json", "slots", 1e-12, 3e-7),
                       entry("m__a.json", "per-centre", 5e-12, 1e-7),
                       entry("m__b.json", "slots", 2e-12, 2e-7),
                       entry("other.json", "sgemm", 1e-13, 4e-8)]}
    path = tmp_path / "rec.json"
    path.write_text(json.dumps(rec))
    out = subprocess.run([sys.executable, SCRIPT, str(path)], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert out[0].startswith("| model |")
    rows = {line.split("|")[1].strip(): line for line in out[2:]}
    assert set(rows) == {"`m`", "`other`"}
    cells = [c.strip() for c in rows["`m`"].split("|")[1:-1]]
    assert cells[1:5] == ["2", "per-centre, slots", "5.0e-12", "0.0e+00"]
    assert cells[5] == "3.0e-07"


def test_usage():
    res = subprocess.run([sys.executable, SCRIPT], capture_output=True, text=True)
    assert res.returncode == 2 and "mixed_errors_table.py" in res.stderr
