#!/usr/bin/env python3
"""The error of precision = mixed against DeePMD-kit on every golden, as a Markdown table: one
line per model (the worst over its goldens, configurations and GPU paths), from the record that
`ctest -R gpu.mixed` leaves (WORKDIR/mixed_errors.json, kept in bench/results/).

    python3 bench/gpu_single/mixed_errors_table.py bench/results/gpu_mixed_errors_DATE_COMMIT.json
"""
import json
import sys

QUANTITIES = ("energy", "atom_energy", "force", "virial")


def model_of(golden):
    """The model's name in a golden's file name (MODEL__CONFIGURATION.json or MODEL.json)."""
    return golden.split("__")[0].removesuffix(".json")


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        rec = json.load(f)
    worst = {}
    for g in rec["goldens"]:
        name = model_of(g["golden"])
        row = worst.setdefault(name, {"paths": set(), "goldens": set(),
                                      **{q: 0.0 for q in QUANTITIES}})
        row["paths"].add(g["path"])
        row["goldens"].add(g["golden"])
        for q in QUANTITIES:
            row[q] = max(row[q], g["errors"][q])
    print("| model | goldens | paths | energy | atomic energies | forces | virial |")
    print("|---|---|---|---|---|---|---|")
    for name in sorted(worst):
        r = worst[name]
        print(f"| `{name}` | {len(r['goldens'])} | {', '.join(sorted(r['paths']))} | "
              + " | ".join(f"{r[q]:.1e}" for q in QUANTITIES) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
