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


def split_forces(ours, ref, atoms):
    """Errors of the forces of `atoms` and of the others, both relative to max|ref| of the
    whole frame."""
    scale = max(abs(x) for x in flatten(ref)) or 1.0
    inside = outside = 0.0
    for i, (a, b) in enumerate(zip(ours, ref)):
        err = max(abs(x - y) for x, y in zip(a, b)) / scale
        if i in atoms:
            inside = max(inside, err)
        else:
            outside = max(outside, err)
    return inside, outside


def compare(out, golden):
    """Checks every frame against the golden's tolerance. tolerance.sensitive, when present,
    lists (frame, atom) pairs whose forces, and the virial of their frames, are checked with its
    own (looser) force and virial tolerances: DeePMD-kit's values there depend on the rounding
    order of its autograd (see the golden's provenance notes)."""
    tol = golden["tolerance"]
    sens = tol.get("sensitive", {"atoms": []})
    frames, refs = out["frames"], golden["frames"]
    failures, report = [], []
    if len(frames) != len(refs):
        return [f"{len(frames)} frames, golden has {len(refs)}"], report
    for k, (frame, ref) in enumerate(zip(frames, refs)):
        atoms = {a for f, a in sens["atoms"] if f == k}
        checks = []
        for key in ("energy", "atom_energy", "virial"):
            limit = sens["virial"] if key == "virial" and atoms else tol[key]
            checks.append((key, relative_error(frame[key], ref[key]), limit))
        if len(frame["force"]) != len(ref["force"]):
            raise ValueError(f"frame {k}: {len(frame['force'])} forces, golden has "
                             f"{len(ref['force'])}")
        inside, outside = split_forces(frame["force"], ref["force"], atoms)
        checks.append(("force", outside, tol["force"]))
        if atoms:
            checks.append((f"force of {len(atoms)} sensitive atoms", inside, sens["force"]))
        for key, err, limit in checks:
            report.append(f"frame {k} {key:12s} rel err {err:.3e} (tol {limit:.1e})")
            if not err <= limit:
                failures.append(f"frame {k}: {key} relative error {err:.3e} > {limit:.1e}")
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
