#!/bin/bash
# One call on a GPU node: build (node_build.sh), the gpu-labelled tests, compute-sanitizer
# memcheck and racecheck (node_sanitize.sh), and a quick timing table of MD on the GPU.
# Logs go to $OUT (or ./out). Usage, from the repository root: bash bench/gpu_single/node_check.sh
set -uo pipefail
OUT=${OUT:-out}
mkdir -p "$OUT"
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0
export LD_LIBRARY_PATH=$PWD/.gpudeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
nvidia-smi -L
bash bench/gpu_single/node_build.sh || exit 1
H=$PWD/build-gpu/halomd D=$PWD/tests/data
(cd build-gpu && ctest -L gpu -j 3 --output-on-failure -V > "$OUT/gpu_tests.log" 2>&1)
grep -E "^[0-9]+: (ok|FAIL)|random seed|tests passed|Failed|Skipped" "$OUT/gpu_tests.log" | cut -c1-150
bash bench/gpu_single/node_sanitize.sh
W=$PWD/examples/water M=$PWD/examples/water/water.dp
mkdir -p /tmp/hq && cd /tmp/hq
printf "%-28s %10s %14s\n" case "s/step" "atom-steps/s"
# (100 steps at most: the random-weight water.dp drives the 1,536-atom box apart after about 150)
for c in "1536 water_1536.gro cuda 100" "1536c water_1536.gro cuda 100 model-compress=yes" \
         "12288 water_12288.gro cuda 50" "12288c water_12288.gro cuda 100 model-compress=yes" \
         "12288cpu water_12288.gro cpu 5"; do
  set -- $c
  extra=""; [ $# -ge 5 ] && extra="-set $5"
  $H run -backend $3 -m $M -c $W/$2 -nsteps $4 -deffnm q$1 -set dt=0.0005 -set nstenergy=0 \
    -set nstlog=0 -set nstlist=10 $extra > q$1.out 2>&1 || { tail -3 q$1.out; continue; }
  python3 -c "import json;p=json.load(open('q$1.perf.json'));s=p['system']['nsteps'];w=p['performance']['wall_s'];print('%-28s %10.4f %14.0f'%('$1 $3',w/s,p['performance']['atom_steps_per_s']))"
  cp q$1.log "$OUT/" 2>/dev/null
done
