#!/usr/bin/env python3
"""`halomd eval -m a.dp b.dp c.dp -s traj` against a model-deviation golden
(tests/data/model_devi/*.json, made by python/halomd/make_dptest_golden.py with DeePMD-kit).

    compare_model_devi.py HALOMD GOLDEN WORKDIR

Runs halomd eval with the golden's models, trajectory and model-devi-* parameters in the
repository root, then checks every column of its JSON record against the golden (relative
tolerance per column, stored in the golden) and, when the golden has a model_devi.out written
by `dp model-devi` beside it (<name>.out), that halomd's file has the same layout: the same
header lines, the same column widths, the same numbers to the printed digits.
Standard library only.
"""

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
COLUMNS = ("max_devi_v", "min_devi_v", "avg_devi_v", "max_devi_f", "min_devi_f", "avg_devi_f",
           "devi_e")


def rel(a, b):
    scale = max((abs(y) for y in b), default=0.0)
    diff = max((abs(x - y) for x, y in zip(a, b)), default=0.0)
    return diff / scale if scale > 0 else diff


def check_table(mine, theirs, problems):
    a, b = mine.read_text().splitlines(), theirs.read_text().splitlines()
    if len(a) != len(b):
        problems.append(f"{mine}: {len(a)} lines, dp model-devi wrote {len(b)}")
        return
    for k, (x, y) in enumerate(zip(a, b)):
        if y.startswith("#"):
            if x != y:
                problems.append(f"{mine} line {k + 1}: {x!r}, dp model-devi: {y!r}")
            continue
        if len(x) != len(y):
            problems.append(f"{mine} line {k + 1}: width {len(x)}, dp model-devi {len(y)}")
            continue
        fx, fy = x.split(), y.split()
        if fx[0] != fy[0] or any(abs(float(p) - float(q)) > 2e-6 * abs(float(q))
                                 for p, q in zip(fx[1:], fy[1:])):
            problems.append(f"{mine} line {k + 1}:\n  {x}\n  {y} (dp model-devi)")


def main(exe, golden_path, workdir):
    golden_path = Path(golden_path)
    golden = json.loads(golden_path.read_text())
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    name = golden_path.stem
    record = workdir / f"{name}.json"
    table = workdir / f"{name}.model_devi.out"
    for f in (record, table):
        f.unlink(missing_ok=True)
    args = [exe, "eval", "-backend", "cpu", "-m", *golden["models"], "-s", golden["data"],
            "-deffnm", str(workdir / name), "-o", str(record),
            "-set", f"model-devi-freq={golden['freq']}"]
    if golden["relative"]:
        args += ["-set", f"model-devi-relative={golden['relative']!r}"]
    if golden["relative_v"]:
        args += ["-set", f"model-devi-relative-v={golden['relative_v']!r}"]
    if golden["atomic"]:
        args += ["-set", "model-devi-atomic=yes"]
    run = subprocess.run(args, cwd=REPO, capture_output=True, text=True)
    if run.returncode != 0:
        print(f"halomd eval failed ({run.returncode}):\n{run.stderr}", file=sys.stderr)
        return 1
    doc = json.loads(record.read_text())
    tol = golden["tolerance"]["deviation"]
    problems = []
    if len(doc["blocks"]) != len(golden["blocks"]):
        problems.append(f"{len(doc['blocks'])} blocks, golden {len(golden['blocks'])}")
    worst = 0.0
    for mine, want in zip(doc["blocks"], golden["blocks"]):
        if mine["source"] != want["source"] or mine["steps"] != want["steps"]:
            problems.append(f"block {mine['source']} steps {mine['steps']}, golden "
                            f"{want['source']} {want['steps']}")
        for col in COLUMNS:
            err = rel(mine[col], want[col])
            worst = max(worst, err)
            if err > tol:
                problems.append(f"{want['source']}: {col} differs by {err:.2e} (relative, "
                                f"tolerance {tol:g})\n  halomd {mine[col]}\n  golden {want[col]}")
        if "atm_devi_f" in want:
            got = mine.get("atm_devi_f")
            if got is None or len(got) != len(want["atm_devi_f"]):
                problems.append(f"{want['source']}: per-atom deviations missing")
            else:
                err = max(rel(g, w) for g, w in zip(got, want["atm_devi_f"]))
                worst = max(worst, err)
                if err > tol:
                    problems.append(f"{want['source']}: atm_devi_f differs by {err:.2e}")
    dp_table = golden_path.with_suffix(".out")
    if dp_table.exists():
        check_table(table, dp_table, problems)
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 1
    print(f"{golden_path.name}: {sum(len(b['steps']) for b in golden['blocks'])} frames, "
          f"largest relative difference {worst:.1e} (tolerance {tol:g})"
          + ("; model_devi.out as dp model-devi's" if dp_table.exists() else ""))
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
