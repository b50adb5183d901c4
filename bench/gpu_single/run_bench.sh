#!/bin/bash
# The single-GPU benchmark (issue 5) in one call on a GPU node, halomd and DeePMD-kit (PyTorch
# backend, bench/gpu_single/deepmd_side.py) side by side on the same GPU, models and
# configurations:
#   water      se_e2_a water model (examples/water/water.dp: rcut 6, sel [46, 92], neuron
#              [25, 50, 100], axis 16, fitting [240, 240, 240]) on 12,288 atoms: double, compressed,
#              each also in precision = mixed (as the DPA-1 and 1,536-atom cases)
#   dpa1       DPA-1 of 1.67M parameters (make_bench_models.py) on the 15,668-atom protein,
#              and on the 1,536-atom water box (DeePMD-kit cannot hold the protein)
#   sweep      compressed se_e2_a water from 1,536 atoms up, in double and in mixed precision
#   small      the 1,536-atom box (whole step time near 2,000 atoms)
# halomd: full MD steps (velocity Verlet, nstlist 10, no output in the loop); DeePMD-kit:
# DeepPot.eval and the network (forward_lower) alone with a prebuilt list, medians after
# warm-up. Writes $OUT/halomd_*.json (perf records), $OUT/deepmd_*.json, and the summary
# $OUT/gpu_single.json (bench/gpu_single/summarize.py).
# Usage, from the repository root on the node (carry .gpudeps, with the large test models moved
# aside for the carry limit: bench/gpu_single/models_aside.sh): bash bench/gpu_single/run_bench.sh
# DPA1=0 leaves out the DPA-1 cases (model building included), WATER=0 the se_e2_a water cases
# (halomd's and DeePMD-kit's); SWEEP lists the sweep's sizes (SWEEP= none); DEEPMD_PROTEIN=0 leaves
# out DeePMD-kit's DPA-1 network on the protein (out of memory on one H200 so far).
set -uo pipefail
OUT=${OUT:-out}
mkdir -p "$OUT"
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0
export LD_LIBRARY_PATH=$PWD/.gpudeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
bash bench/gpu_single/node_build.sh || exit 1
H=$PWD/build-gpu/halomd W=$PWD/examples/water P=$PWD/examples/protein T=/tmp/halomd_bench
mkdir -p $T
DPA1=${DPA1:-1} WATER=${WATER:-1} DEEPMD_PROTEIN=${DEEPMD_PROTEIN:-1}
if [ "$DPA1" = 1 ]; then
  PYTHONPATH=$PWD/.gpudeps/py python3 bench/gpu_single/make_bench_models.py $T > $T/models.log 2>&1 ||
    tail -5 $T/models.log
fi
cp $W/water_1536.gro $W/water_12288.gro $T/

# name model conf steps [-set k=v ...]
run_case() {
  local name=$1 model=$2 conf=$3 steps=$4
  shift 4
  (cd $T && timeout 300 $H run -backend cuda -m $model -c $conf -nsteps $steps -deffnm $name \
     -set nstlist=10 -set verlet-buffer=2 -set dt=0.0005 -set nstenergy=0 -set nstlog=0 "$@" \
     > $name.out 2>&1) || { echo "$name: $(tail -2 $T/$name.out)"; return; }
  cp $T/$name.perf.json "$OUT/halomd_$name.json"
  cp $T/$name.log "$OUT/halomd_$name.log"
}
[ "$WATER" = 1 ] && run_case water_double $W/water.dp water_12288.gro 100
[ "$WATER" = 1 ] && run_case water_compressed $W/water.dp water_12288.gro 100 \
  -set model-compress=yes
[ "$WATER" = 1 ] && run_case small_double $W/water.dp water_1536.gro 100
[ "$WATER" = 1 ] && run_case small_compressed $W/water.dp water_1536.gro 100 \
  -set model-compress=yes
[ "$DPA1" = 1 ] && run_case dpa1_protein $T/protein_dpa1_1p6m.dp $P/protein.gro 10
[ "$WATER" = 1 ] && run_case water_mixed $W/water.dp water_12288.gro 100 -set precision=mixed
[ "$WATER" = 1 ] && run_case water_compressed_mixed $W/water.dp water_12288.gro 100 \
  -set model-compress=yes -set precision=mixed
[ "$WATER" = 1 ] && run_case small_mixed $W/water.dp water_1536.gro 100 -set precision=mixed
[ "$WATER" = 1 ] && run_case small_compressed_mixed $W/water.dp water_1536.gro 100 \
  -set model-compress=yes -set precision=mixed
[ "$DPA1" = 1 ] && run_case dpa1_protein_mixed $T/protein_dpa1_1p6m.dp $P/protein.gro 10 \
  -set precision=mixed
# the same DPA-1 on the 1,536-atom water box, which DeePMD-kit can hold
[ "$DPA1" = 1 ] && run_case dpa1_water_1536 $T/protein_dpa1_1p6m.dp water_1536.gro 30
[ "$DPA1" = 1 ] && run_case dpa1_water_1536_mixed $T/protein_dpa1_1p6m.dp water_1536.gro 30 \
  -set precision=mixed

[ "$WATER" = 1 ] && OUT=$OUT CASE_TIMEOUT=240 bash bench/gpu_single/deepmd_cases.sh \
  examples/water/water.dp:examples/water/water_12288.gro \
  examples/water/water.dp:examples/water/water_1536.gro
# DPA-1: DeepPot.eval runs out of memory on one H200 (seen 2026-11-30); the network alone
if [ "$DPA1" = 1 ] && [ "$DEEPMD_PROTEIN" = 1 ]; then
  PYTHONPATH=$PWD/.gpudeps/py timeout 90 python3 bench/gpu_single/deepmd_side.py \
    --model $T/protein_dpa1_1p6m.dp --conf $P/protein.gro --skip-eval --repeats 5 --warmup 2 \
    --json "$OUT/deepmd_protein_dpa1_1p6m_protein.json" > "$OUT/deepmd_protein_network.log" 2>&1 ||
    echo "DeePMD-kit DPA-1 network alone: $(grep -i -m1 "error" "$OUT/deepmd_protein_network.log")"
fi
if [ "$DPA1" = 1 ]; then
  PYTHONPATH=$PWD/.gpudeps/py timeout 240 python3 bench/gpu_single/deepmd_side.py \
    --model $T/protein_dpa1_1p6m.dp --conf $T/water_1536.gro \
    --json "$OUT/deepmd_protein_dpa1_1p6m_water_1536.json" > "$OUT/deepmd_dpa1_water.log" 2>&1 ||
    echo "DeePMD-kit DPA-1 on water_1536: $(grep -i -m1 "error" "$OUT/deepmd_dpa1_water.log")"
fi
# size sweep of the compressed model, last (the largest boxes take minutes to write)
SWEEP=${SWEEP-"1536 12288 98304 786432 25165824"}
for a in $SWEEP; do
  [ -f $T/water_$a.gro ] || python3 $W/make_water.py -n $((a / 3)) -o $T/water_$a.gro \
    > $T/make_water_$a.log 2>&1 || tail -3 $T/make_water_$a.log
  run_case sweep_$a $W/water.dp water_$a.gro $((a > 1000000 ? 2 : 20)) -set model-compress=yes
  run_case sweep_mixed_$a $W/water.dp water_$a.gro $((a > 1000000 ? 2 : 20)) \
    -set model-compress=yes -set precision=mixed
done
python3 bench/gpu_single/summarize.py "$OUT" "$OUT/gpu_single.json"
