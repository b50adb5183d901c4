#!/usr/bin/env python3
"""Compare `halomd eval` JSON output with a DeePMD-kit golden file (tests/data/golden/*.json).

Usage: compare_eval.py OUT.json GOLDEN.json

For every frame and quantity (energy, atom_energy, force, virial) the error is
max|ours - golden| / max|golden| over the array, checked against the tolerance stored in the
golden file. Exits 1 and says which quantity of which frame is off when one exceeds it.
Standard library only.
"""
import json
import sys


def flatten(value):
    if isinstance(value, list):
        out = []
        for v in value:
            out.extend(flatten(v))
        return out
    return [float(value)]


def relative_error(ours, ref):
    a, b = flatten(ours), flatten(ref)
    if len(a) != len(b):
        raise ValueError(f"length {len(a)} != golden length {len(b)}")
    scale = max(abs(x) for x in b) or 1.0
    return max(abs(x - y) for x, y in zip(a, b)) / scale


def compare(out, golden):
    tol = golden["tolerance"]
    frames, refs = out["frames"], golden["frames"]
    failures, report = [], []
    if len(frames) != len(refs):
        return [f"{len(frames)} frames, golden has {len(refs)}"], report
    for k, (frame, ref) in enumerate(zip(frames, refs)):
        for key in ("energy", "atom_energy", "force", "virial"):
            err = relative_error(frame[key], ref[key])
            report.append(f"frame {k} {key:12s} rel err {err:.3e} (tol {tol[key]:.1e})")
            if not err <= tol[key]:
                failures.append(f"frame {k}: {key} relative error {err:.3e} > {tol[key]:.1e}")
    return failures, report


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        out = json.load(f)
    with open(argv[2]) as f:
        golden = json.load(f)
    failures, report = compare(out, golden)
    print("\n".join(report))
    for line in failures:
        print("FAIL:", line, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
