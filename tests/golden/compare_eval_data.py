#!/usr/bin/env python3
"""`halomd eval -s` and `halomd eval -m a.dp b.dp ...` against DeePMD-kit's goldens (made by
python/halomd/make_dptest_golden.py):

    compare_eval_data.py HALOMD GOLDEN WORKDIR

tests/data/dptest/*.json (dp test): runs `halomd eval -backend cpu -m <model> -s <data> -o ...`
in the repository root and checks, per system and for the weighted average, every error
DeePMD-kit reports (same keys, same weights, values within the golden's relative tolerance),
and that the text report has dp test's lines: the same words in the same order, numbers equal
to the printed digits.

tests/data/model_devi/*.json (model deviation): runs halomd eval with the golden's models,
trajectory and model-devi-* parameters, checks every column of its JSON record against the
golden (relative tolerance stored in the golden) and, when `dp model-devi`'s own file is beside
the golden (<name>.out), that halomd's model_devi.out has the same header lines, column widths
and numbers to the printed digits. Standard library only.
"""

import json
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
NUMBER = re.compile(r"[-+]?\d+\.\d+e[-+]\d+")
COLUMNS = ("max_devi_v", "min_devi_v", "avg_devi_v", "max_devi_f", "min_devi_f", "avg_devi_f",
           "devi_e")


def run_halomd(exe, args, record):
    """halomd eval -backend cpu ARGS -o record in the repository root: (run, parsed record),
    the record None (and the reason printed) when it failed."""
    record.unlink(missing_ok=True)
    run = subprocess.run([exe, "eval", "-backend", "cpu", *args, "-o", str(record)], cwd=REPO,
                         capture_output=True, text=True)
    if run.returncode != 0:
        print(f"halomd eval failed ({run.returncode}):\n{run.stderr}", file=sys.stderr)
        return run, None
    return run, json.loads(record.read_text())


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


def check_dptest(exe, golden, golden_path, workdir):
    out = workdir / (golden_path.stem + ".json")
    run, doc = run_halomd(exe, ["-m", golden["model"], "-s", golden["data"]], out)
    if doc is None:
        return 1
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


def check_model_devi(exe, golden, golden_path, workdir):
    name = golden_path.stem
    table = workdir / f"{name}.model_devi.out"
    table.unlink(missing_ok=True)
    args = ["-m", *golden["models"], "-s", golden["data"], "-deffnm", str(workdir / name),
            "-set", f"model-devi-freq={golden['freq']}"]
    if golden["relative"]:
        args += ["-set", f"model-devi-relative={golden['relative']!r}"]
    if golden["relative_v"]:
        args += ["-set", f"model-devi-relative-v={golden['relative_v']!r}"]
    if golden["atomic"]:
        args += ["-set", "model-devi-atomic=yes"]
    run, doc = run_halomd(exe, args, workdir / f"{name}.json")
    if doc is None:
        return 1
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


def main(exe, golden_path, workdir):
    golden_path = Path(golden_path)
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    golden = json.loads(golden_path.read_text())
    check = check_dptest if "systems" in golden else check_model_devi
    return check(exe, golden, golden_path, workdir)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
