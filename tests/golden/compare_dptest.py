#!/usr/bin/env python3
"""`halomd eval -s` against a dp test golden (tests/data/dptest/*.json, made by
python/halomd/make_dptest_golden.py with DeePMD-kit).

    compare_dptest.py HALOMD GOLDEN WORKDIR

Runs `halomd eval -backend cpu -m <model> -s <data> -o WORKDIR/<name>.json` in the repository
root and checks, per system and for the weighted average, every error DeePMD-kit reports (same
keys, same weights, values within the golden's relative tolerance), and that the text report
has dp test's lines: the same words in the same order, numbers equal to the printed digits.
Standard library only.
"""

import json
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
NUMBER = re.compile(r"[-+]?\d+\.\d+e[-+]\d+")


def close(a, b, tol):
    return abs(a - b) <= tol * max(abs(b), 1e-300)


def check_errors(where, got, want, tol, problems):
    if set(got["errors"]) != set(want["errors"]):
        problems.append(f"{where}: errors {sorted(got['errors'])}, DeePMD-kit reports "
                        f"{sorted(want['errors'])}")
        return 0.0
    worst = 0.0
    for key, value in want["errors"].items():
        err = abs(got["errors"][key] - value) / max(abs(value), 1e-300)
        worst = max(worst, err)
        if err > tol:
            problems.append(f"{where}: {key} = {got['errors'][key]!r}, DeePMD-kit {value!r} "
                            f"(relative {err:.2e} > {tol:g})")
        if got["weights"][key] != want["weights"][key]:
            problems.append(f"{where}: weight of {key} {got['weights'][key]}, DeePMD-kit "
                            f"{want['weights'][key]}")
    return worst


def check_report(text, lines, problems):
    got = [ln.rstrip() for ln in text.splitlines() if ln.strip()]
    want = [ln.rstrip() for ln in lines if ln.strip()]
    if len(got) != len(want):
        problems.append(f"report: {len(got)} lines, dp test logs {len(want)}:\n" + text)
        return
    for g, w in zip(got, want):
        if NUMBER.sub("#", g) != NUMBER.sub("#", w):
            problems.append(f"report line {g!r}, dp test: {w!r}")
            continue
        for a, b in zip(NUMBER.findall(g), NUMBER.findall(w)):
            if not close(float(a), float(b), 2e-6):  # printed with 7 significant digits
                problems.append(f"report line {g!r}, dp test: {w!r}")


def main(exe, golden_path, workdir):
    golden = json.loads(Path(golden_path).read_text())
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    out = workdir / (Path(golden_path).stem + ".json")
    out.unlink(missing_ok=True)
    run = subprocess.run([exe, "eval", "-backend", "cpu", "-m", golden["model"], "-s",
                          golden["data"], "-o", str(out)], cwd=REPO, capture_output=True,
                         text=True)
    if run.returncode != 0:
        print(f"halomd eval failed ({run.returncode}):\n{run.stderr}", file=sys.stderr)
        return 1
    doc = json.loads(out.read_text())
    tol = golden["tolerance"]["errors"]
    problems = []
    got_sys = {s["system"]: s for s in doc["systems"]}
    worst = 0.0
    for s in golden["systems"]:
        mine = got_sys.get(s["system"])
        if mine is None:
            problems.append(f"system {s['system']} not evaluated (halomd found "
                            f"{sorted(got_sys)})")
            continue
        if (mine["natoms"], mine["nframes"]) != (s["natoms"], s["nframes"]):
            problems.append(f"{s['system']}: {mine['natoms']} atoms x {mine['nframes']} frames, "
                            f"DeePMD-kit {s['natoms']} x {s['nframes']}")
        worst = max(worst, check_errors(s["system"], mine, s, tol, problems))
    if len(doc["systems"]) != len(golden["systems"]):
        problems.append(f"{len(doc['systems'])} systems, DeePMD-kit {len(golden['systems'])}")
    worst = max(worst, check_errors("weighted average", doc["weighted_average"],
                                    golden["weighted_average"], tol, problems))
    check_report(run.stdout, golden["report"], problems)
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 1
    print(f"{Path(golden_path).name}: {len(golden['systems'])} systems, largest relative "
          f"error difference {worst:.1e} (tolerance {tol:g}); report lines as dp test's")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
