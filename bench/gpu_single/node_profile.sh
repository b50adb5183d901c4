#!/bin/bash
# Kernel time per step on a GPU node with ncu (clocks left alone), summed per kernel: a few MD
# steps of the 12,288-atom water box (network model in double and in mixed precision, the
# compressed model), one of the 15,668-atom protein with its DPA-1 model (double, mixed), and
# one of the 1.67M-parameter DPA-1 on the 1,536-atom water box (dpa1_water, dpa1_water_mixed:
# the case of the DPA-1 ratio to DeePMD-kit).
# For DPA-1 (a graph with switch nodes) ncu in this mode lists none of the graph's kernels: what
# it lists is step 0's eager evaluation with its list build and the list steps among the steps.
# Needs build-gpu (node_build.sh). Usage: bash bench/gpu_single/node_profile.sh [steps]
# CASES lists the cases to profile (default: double mixed compressed dpa1 dpa1_mixed;
# compressed_mixed and dpa1_water, dpa1_water_mixed on request).
set -uo pipefail
OUT=${OUT:-out}
mkdir -p "$OUT" /tmp/hp
export LD_LIBRARY_PATH=$PWD/.gpudeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
H=$PWD/build-gpu/halomd W=$PWD/examples/water
steps=${1:-3}
P=$PWD/examples/protein D=$PWD/tests/data/models
CASES=${CASES:-"double mixed compressed dpa1 dpa1_mixed"}
# name model conf steps [setting]...
for c in "double $W/water.dp $W/water_12288.gro $steps" \
         "mixed $W/water.dp $W/water_12288.gro $steps precision=mixed" \
         "compressed $W/water.dp $W/water_12288.gro $steps model-compress=yes" \
         "compressed_mixed $W/water.dp $W/water_12288.gro $steps model-compress=yes precision=mixed" \
         "dpa1 $P/protein_dpa1.dp $P/protein.gro 1" \
         "dpa1_mixed $P/protein_dpa1.dp $P/protein.gro 1 precision=mixed" \
         "dpa1_water $D/dpa1_1p6m_fp32.dp $W/water_1536.gro 1" \
         "dpa1_water_mixed $D/dpa1_1p6m_fp32.dp $W/water_1536.gro 1 precision=mixed"; do
  set -- $c
  grep -qw "$1" <<< "$CASES" || continue
  extra=""; for kv in "${@:5}"; do extra+=" -set $kv"; done
  (cd /tmp/hp && ncu --clock-control none --metrics gpu__time_duration.sum --csv \
    $H run -backend cuda -m $2 -c $3 -nsteps $4 -deffnm p$1 \
    -set nstlist=10 -set nstenergy=0 -set nstlog=0 $extra > "$OUT/ncu_$1.csv" 2> "$OUT/ncu_$1.err")
  python3 - "$OUT/ncu_$1.csv" "$1" <<'PY'
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
head = rows[0]; k = head.index("Kernel Name"); v = head.index("Metric Value")
tot = collections.defaultdict(float); n = collections.Counter()
for r in rows[1:]:
    name = r[k].split("(")[0][:40]; tot[name] += float(r[v].replace(",", "")) / 1e3; n[name] += 1
s = sum(tot.values())
print(f"--- {sys.argv[2]}: {s/1e3:.2f} ms of kernels in all")
for name, t in sorted(tot.items(), key=lambda x: -x[1])[:16]:
    print(f"{name:42s} {t/1e3:9.3f} ms {n[name]:5d} calls {100*t/s:5.1f}%")
PY
done
