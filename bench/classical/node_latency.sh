#!/bin/bash
# Where a classical step's time goes on one GPU (issue 28, deliverable 5): `halomd run -p` of
# the halomd-ref model (bench/classical/run.sh's settings) for the flexible water boxes of
# 1,536, 12,288 and 24,576 atoms and the solvated protein (15,668 atoms), with the list rebuilt
# every 10 steps (nstlist = 10) and when the atoms moved half the buffer (nstlist = 0, the
# displacement predicted on the device); us/step whole and per phase of the run record (Force:
# the device's steps; Neighbour list: the list steps' own work; Output ...).
#
# From the repository root on the GPU node, after bench/gpu_single/node_build.sh:
#   OUT=/some/folder bash bench/classical/node_latency.sh
# Env: OUT (results; out/classical_latency), NSTEPS (2000), CASES (water_1536 water_12288
#      water_24576 protein), HALOMD (as run.sh). GROMACS is not run here (run.sh does).
# Writes $OUT/classical_latency.json (per case and nstlist: atoms, us/step, list builds, us per
# step of each phase) and prints a table. About 1 minute at today's speed.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/out/classical_latency}
NSTEPS=${NSTEPS:-2000}
CASES=${CASES:-"water_1536 water_12288 water_24576 protein"}
mkdir -p "$OUT"
for nl in 10 0; do
  MDP_EXTRA="nstlist          = $nl" GMX=none RESULT="$OUT/run_nstlist$nl.json" \
    OUT="$OUT/nstlist$nl" NSTEPS=$NSTEPS CASES="$CASES" bash bench/classical/run.sh \
    > "$OUT/run_nstlist$nl.log" 2>&1 || echo "run.sh (nstlist $nl) exit $?"
done
python3 - "$OUT" "$NSTEPS" <<'EOF'
import json, os, sys

out, nsteps = sys.argv[1], int(sys.argv[2])
doc = {"schema": "halomd-bench-classical-latency-1", "nsteps": nsteps, "runs": []}
for nl in (10, 0):
    path = os.path.join(out, f"run_nstlist{nl}.json")
    if not os.path.exists(path):
        continue
    run = json.load(open(path))
    doc.setdefault("commit", run.get("commit"))
    doc.setdefault("hardware", run.get("hardware"))
    for c in run["cases"]:
        h = c["halomd"].get("figures") or {}
        phases = {k: 1e6 * v["seconds"] / nsteps for k, v in (h.get("phases") or {}).items()
                  if v.get("seconds")}
        doc["runs"].append({"case": c["case"], "nstlist": nl, "exit": c["halomd"]["exit"],
                            "natoms": h.get("natoms"), "us_per_step": h.get("us_per_step"),
                            "neighbor_builds": h.get("neighbor_builds"),
                            "us_per_step_by_phase": phases})
json.dump(doc, open(os.path.join(out, "classical_latency.json"), "w"), indent=1)
print(f"{'case':12s} {'nstlist':>7s} {'atoms':>6s} {'us/step':>8s} {'builds':>6s}  phases (us/step)")
for r in doc["runs"]:
    ph = " ".join(f"{k}={v:.1f}" for k, v in r["us_per_step_by_phase"].items() if v >= 0.5)
    us = r["us_per_step"]
    print(f"{r['case']:12s} {r['nstlist']:7d} {r['natoms'] or 0:6d} "
          f"{(us or 0):8.1f} {r['neighbor_builds'] or 0:6d}  {ph}")
EOF
