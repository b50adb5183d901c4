#!/bin/bash
# Work in progress (branch wip/fused-embed): the fused embedding kernel of the slots path on a
# GPU node in one short call. Build; gpu.twin (GPU against CPU, all paths); full MD steps of the
# v2 water model, fused (416 and 256 threads) against layer by layer (HALOMD_SE_FUSED=0), double
# and mixed; gpu.mdtwin; compute-sanitizer memcheck; gpu.mixed (goldens in mixed within 1e-5 of
# DeePMD-kit).
# Usage, from the repository root on the node (carry .gpudeps/usr): bash bench/gpu_single/node_fused.sh
set -uo pipefail
OUT=$(mkdir -p "${OUT:-out}" && cd "${OUT:-out}" && pwd)
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0
export LD_LIBRARY_PATH=$PWD/.gpudeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
START=$SECONDS
bash bench/gpu_single/node_build.sh > /dev/null || exit 1
echo "built after $((SECONDS - START)) s"
test_one() {
  (cd build-gpu && timeout "$2" ctest -R "$1" --output-on-failure -V > "$OUT/$1.log" 2>&1)
  grep -E "FAIL|worst over|tests passed|Failed" "$OUT/$1.log" | cut -c1-200 | head -8
  echo "$1 done after $((SECONDS - START)) s"
}
test_one gpu.twin 60
H=$PWD/build-gpu/halomd W=$PWD/examples/water
mkdir -p /tmp/hf && cd /tmp/hf
printf "%-8s %6s %7s %9s %11s\n" path atoms prec ms/step bytes/atom
for c in "f 12288 double" "f256 12288 double" "l 12288 double" "f 12288 mixed" "l 12288 mixed" \
         "f 1536 double" "l 1536 double" "f 1536 mixed"; do
  set -- $c
  env=()
  [ "$1" = l ] && env=(HALOMD_SE_FUSED=0)
  [ "$1" = f256 ] && env=(HALOMD_SE_FUSED_THREADS=256)
  name=$1_$2_$3
  env "${env[@]}" $H run -backend cuda -m $W/water.dp -c $W/water_$2.gro -nsteps 100 -deffnm $name \
    -set nstlist=10 -set verlet-buffer=2 -set dt=0.0005 -set nstenergy=0 -set nstlog=0 \
    -set precision=$3 > $name.out 2>&1 || { tail -2 $name.out; continue; }
  python3 -c "import json;p=json.load(open('$name.perf.json'));print('%-8s %6s %7s %9.3f %11.0f'%('$1','$2','$3',1e3*p['performance']['wall_s']/p['system']['nsteps'],p['backend']['device_bytes_per_atom']))"
  cp $name.perf.json "$OUT/"
done
cd - > /dev/null
echo "timings done after $((SECONDS - START)) s"
test_one gpu.mdtwin 25
D=$PWD/tests/data
for p in double mixed; do
  compute-sanitizer --tool memcheck --error-exitcode 9 $H eval -backend cuda -set precision=$p \
    -m $D/models/se_e2_a_water_one_side.dp -c $D/structures/water_96_small.xyz -o /dev/null \
    > "$OUT/sanitizer_$p.log" 2>&1
  echo "compute-sanitizer memcheck eval $p (fused): exit $?"
done
test_one gpu.mixed 60
