#!/bin/bash
# Compressed se_e2_a water on one GPU in one call: MD steps of the v2-paper model
# (examples/water/water.dp, model-compress=yes) in double and in precision = mixed at 1,536,
# 12,288 and 98,304 atoms, with run_bench.sh's settings (100 steps, nstlist 10, verlet-buffer
# 2 Å, dt 0.5 fs), then ncu's kernel times of 3 steps at 12,288 atoms. Needs build-gpu
# (node_build.sh). Writes $OUT/compressed_*.perf.json, $OUT/ncu_compressed*.csv and a table.
# Usage, from the repository root on the node: bash bench/gpu_single/node_compressed.sh
set -uo pipefail
OUT=${OUT:-out}
mkdir -p "$OUT" /tmp/hc
export LD_LIBRARY_PATH=$PWD/.gpudeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
H=$PWD/build-gpu/halomd W=$PWD/examples/water
[ -f /tmp/hc/water_98304.gro ] || python3 $W/make_water.py -n 32768 -o /tmp/hc/water_98304.gro \
  > /tmp/hc/make_water.log 2>&1 || tail -3 /tmp/hc/make_water.log
cp $W/water_1536.gro $W/water_12288.gro /tmp/hc/
cd /tmp/hc
printf "%-28s %10s %14s\n" case "ms/step" "atom-steps/s"
for n in 1536 12288 98304; do
  for prec in double mixed; do
    name=compressed_${prec}_$n
    $H run -backend cuda -m $W/water.dp -c water_$n.gro -nsteps 100 -deffnm $name \
      -set nstlist=10 -set verlet-buffer=2 -set dt=0.0005 -set nstenergy=0 -set nstlog=0 \
      -set model-compress=yes -set precision=$prec > $name.out 2>&1 || { tail -3 $name.out; continue; }
    cp $name.perf.json "$OUT/"
    python3 -c "import json;p=json.load(open('$name.perf.json'));s=p['system']['nsteps'];w=p['performance']['wall_s'];print('%-28s %10.4f %14.4g'%('$name',1e3*w/s,p['performance']['atom_steps_per_s']))"
  done
done
for prec in double mixed; do
  ncu --clock-control none --metrics gpu__time_duration.sum --csv $H run -backend cuda \
    -m $W/water.dp -c water_12288.gro -nsteps 3 -deffnm p$prec -set nstlist=10 -set nstenergy=0 \
    -set nstlog=0 -set model-compress=yes -set precision=$prec > "$OUT/ncu_compressed_$prec.csv" \
    2> /dev/null
  python3 - "$OUT/ncu_compressed_$prec.csv" "$prec" <<'PY'
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
head = rows[0]; k = head.index("Kernel Name"); v = head.index("Metric Value")
tot = collections.defaultdict(float)
for r in rows[1:]:
    tot[r[k].split("(")[0][:40]] += float(r[v].replace(",", "")) / 1e6
print(f"--- compressed {sys.argv[2]}, 3 steps (4 evaluations): {sum(tot.values()):.2f} ms of kernels")
for name, t in sorted(tot.items(), key=lambda x: -x[1])[:6]:
    print(f"{name:42s} {t:8.3f} ms")
PY
done
