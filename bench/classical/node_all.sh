#!/bin/bash
# The classical force field on one GPU node, in one call (issue 28): the GPU tests of the
# classical provider (ctest -R "gpu\.ff_": twin against the CPU, device pair list against the
# host's, end-to-end run, hybrid), the latency per phase (bench/classical/node_latency.sh) and
# halomd against GROMACS side by side (bench/classical/run.sh: water_1536 water_12288 protein,
# 2,000 steps each; GROMACS from .gpudeps/gmx.tar.xz, bench/classical/fetch_gromacs.sh).
#
# From the repository root on the node, after `bash bench/gpu_single/node_build.sh`:
#   OUT=$OUT bash bench/classical/node_all.sh
# Env: OUT (where the results go; 5 files: node_all.tar.gz with every log and run record,
#      ctest.log, classical_latency.json, classical.json, summary.txt), NSTEPS (2000),
#      SKIP_TESTS=1 / SKIP_LATENCY=1 / SKIP_GMX=1 to split the call.
# Takes about 3 to 5 minutes (tests ~1 min, latency ~1 min, GROMACS and halomd ~2 min); each
# part alone fits a call.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
OUT=${OUT:-$ROOT/out/node_all}
NSTEPS=${NSTEPS:-2000}
W=$(mktemp -d /tmp/node_all.XXXXXX)
mkdir -p "$OUT"
t0=$(date +%s)
summary=()
# the bundle's force fields for halomd's -p as well (run.sh's wrapper sets them for gmx only)
if [ -z "${GMXLIB:-}" ] && [ -f .gpudeps/gmx.tar.xz ]; then
  mkdir -p .gpudeps/gmx
  [ -d .gpudeps/gmx/top ] || tar -C .gpudeps/gmx -xJf .gpudeps/gmx.tar.xz
  export GMXLIB=$ROOT/.gpudeps/gmx/top
fi
if [ "${SKIP_TESTS:-0}" != 1 ]; then
  timeout 240 ctest --test-dir build-gpu -R "gpu\.ff_" --output-on-failure > "$W/ctest.log" 2>&1
  summary+=("tests: exit $? ($(grep -E "tests passed|tests failed" "$W/ctest.log" | tail -1))")
  cp "$W/ctest.log" "$OUT/"
fi
if [ "${SKIP_LATENCY:-0}" != 1 ]; then
  OUT=$W/latency NSTEPS=$NSTEPS timeout 200 bash bench/classical/node_latency.sh \
    > "$W/latency.txt" 2>&1
  summary+=("latency: exit $?")
  cp "$W/latency/classical_latency.json" "$OUT/" 2>/dev/null
fi
if [ "${SKIP_GMX:-0}" != 1 ]; then
  OUT=$W/bench NSTEPS=$NSTEPS GMX_NSTEPS=$NSTEPS RESULT=$W/classical.json \
    CASES="water_1536 water_12288 protein" timeout 240 bash bench/classical/run.sh \
    > "$W/run.txt" 2>&1
  summary+=("run.sh: exit $?")
  cp "$W/classical.json" "$OUT/" 2>/dev/null
fi
{
  for s in "${summary[@]}"; do echo "$s"; done
  echo "seconds: $(($(date +%s) - t0))"
  [ -f "$W/latency.txt" ] && { echo; echo "== latency per phase (us/step)"; tail -20 "$W/latency.txt"; }
  [ -f "$W/run.txt" ] && { echo; echo "== halomd against GROMACS"; grep -A8 "^case " "$W/run.txt"; }
} > "$OUT/summary.txt"
tar -C "$W" --exclude='*.trr' --exclude='*.xtc' --exclude='*.tpr' --exclude='*.edr' \
  --exclude='*.cpt' -czf "$OUT/node_all.tar.gz" .
rm -rf "$W"
cat "$OUT/summary.txt"
