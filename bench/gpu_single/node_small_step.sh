#!/bin/bash
# Where the time of a small compressed se_e2_a step goes (the 100 us at 2,000 atoms target): wall
# time per step of 100 MD steps of the 1,536-atom water box (compressed model, double and mixed,
# run_bench.sh's settings; water.dp's random weights heat the box past 150 steps), then ncu's
# duration of every kernel of 20 steps, listed per kernel with its calls per step. Kernel time per
# step against wall time per step says whether the step is bound by its kernels or by the gaps
# between them. Needs build-gpu (node_build.sh).
# Usage, from the repository root on the node: bash bench/gpu_single/node_small_step.sh
set -uo pipefail
OUT=${OUT:-out}
mkdir -p "$OUT" /tmp/hs
export LD_LIBRARY_PATH=$PWD/.gpudeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
H=$PWD/build-gpu/halomd W=$PWD/examples/water
cd /tmp/hs
common="-m $W/water.dp -c $W/water_1536.gro -set nstlist=10 -set verlet-buffer=2 -set dt=0.0005
        -set nstenergy=0 -set nstlog=0 -set model-compress=yes"
for prec in double mixed; do
  $H run -backend cuda $common -nsteps 100 -deffnm small_$prec -set precision=$prec \
    > small_$prec.out 2>&1 || { tail -3 small_$prec.out; continue; }
  cp small_$prec.perf.json "$OUT/"
  ncu --clock-control none --metrics gpu__time_duration.sum --csv $H run -backend cuda $common \
    -nsteps 20 -deffnm ncu_$prec -set precision=$prec > "$OUT/ncu_small_$prec.csv" 2> /dev/null
  python3 - "$OUT/ncu_small_$prec.csv" small_$prec.perf.json "$prec" <<'PY'
import csv, sys, json, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
head = rows[0]; k = head.index("Kernel Name"); v = head.index("Metric Value")
tot = collections.defaultdict(float); n = collections.Counter()
for r in rows[1:]:
    name = r[k].split("(")[0][:44]; tot[name] += float(r[v].replace(",", "")) / 1e3; n[name] += 1
p = json.load(open(sys.argv[2])); wall = 1e6 * p["performance"]["wall_s"] / p["system"]["nsteps"]
s = sum(tot.values()) / 20
print(f"--- 1,536 compressed {sys.argv[3]}: wall {wall:.1f} us/step, kernels {s:.1f} us/step, "
      f"{sum(n.values()) / 20:.1f} launches/step")
for name, t in sorted(tot.items(), key=lambda x: -x[1]):
    print(f"{name:46s} {t / 20:8.2f} us/step {n[name] / 20:6.2f} calls/step")
PY
done
