#!/bin/bash
# precision = mixed and the trained models on a GPU node in one call: build; gpu.mixed (every
# golden, se_e2_a and DPA-1, in mixed precision against DeePMD-kit, NVE in mixed); full MD
# steps in double and mixed side by side (se_e2_a water at 1,536 and 12,288 atoms, networks and
# compressed; the 15,668-atom protein with its DPA-1 model); the water checks of docs/validation (20 ps NVT and 20 ps NVE of water_192 with
# examples/water/water_trained.dp); the other gpu-labelled tests; then NVT of the protein with
# examples/protein/protein_dpa1.dp in double until DEADLINE seconds after the start (default
# 450), stopped by SIGTERM so that its checkpoint can be continued (-cpi). QUICK=1: gpu.mixed
# and the timings only.
# Writes to $OUT: mixed.tgz (test log, mixed_errors.json, water and protein runs) and
# mixed_bench.json. Usage, from the repository root on the node (carry .gpudeps/usr):
#   bash bench/gpu_single/node_mixed.sh
set -uo pipefail
START=$SECONDS
DEADLINE=${DEADLINE:-450}
OUT=$(mkdir -p "${OUT:-out}" && cd "${OUT:-out}" && pwd)
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0
export LD_LIBRARY_PATH=$PWD/.gpudeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
nvidia-smi -L
bash bench/gpu_single/node_build.sh || exit 1
echo "built after $((SECONDS - START)) s"
R=$PWD H=$PWD/build-gpu/halomd W=$PWD/examples/water P=$PWD/examples/protein
T=/tmp/halomd_mixed L=/tmp/halomd_mixed/keep
mkdir -p $T $L
(cd build-gpu && timeout 120 ctest -R gpu.mixed --output-on-failure -V > $L/gpu_tests.log 2>&1)
grep -E "^[0-9]+: (FAIL|ok   NVE)|worst over|tests passed|Failed|\*\*\*" $L/gpu_tests.log |
  cut -c1-200
cp build-gpu/tests/gpu/mixed/mixed_errors.json $L/ 2>/dev/null
D=$PWD/tests/data
for tool in memcheck racecheck; do
  for c in "se_e2_a_water_one_side.dp" "se_e2_a_water_one_side.dp -set model-compress=yes" \
           "se_e2_a_small_gelu_excl.dp" "deeppot.dp" "dpa1_water.dp" \
           "compressed_coarse_dpa1_small_strip_l0.dp"; do
    set -- $c
    compute-sanitizer --tool $tool --error-exitcode 9 $H eval -backend cuda -set precision=mixed \
      -m $D/models/$1 -c $D/structures/water_96_small.xyz -o /dev/null "${@:2}" \
      >> $L/sanitizer.log 2>&1
    echo "compute-sanitizer $tool eval mixed $c: exit $?"
  done
done
echo "gpu.mixed done after $((SECONDS - START)) s"

# name model conf steps [-set k=v ...]: full MD steps, as run_bench.sh
run_case() {
  local name=$1 model=$2 conf=$3 steps=$4
  shift 4
  (cd $T && timeout 120 $H run -backend cuda -m $model -c $conf -nsteps $steps -deffnm $name \
     -set nstlist=10 -set verlet-buffer=2 -set dt=0.0005 -set nstenergy=0 -set nstlog=0 "$@" \
     > $name.out 2>&1) || echo "$name: $(tail -2 $T/$name.out)"
}
for p in double mixed; do
  # 100 steps: the random-weight water.dp drives these boxes apart after about 150
  run_case water_$p $W/water.dp $W/water_12288.gro 100 -set precision=$p
  run_case water_compressed_$p $W/water.dp $W/water_12288.gro 100 -set model-compress=yes \
    -set precision=$p
  run_case small_$p $W/water.dp $W/water_1536.gro 100 -set precision=$p
  run_case small_compressed_$p $W/water.dp $W/water_1536.gro 100 -set model-compress=yes \
    -set precision=$p
  run_case protein_dpa1_$p $P/protein_dpa1.dp $P/protein.gro 10 -set precision=$p
done
# se_e2_a networks in the per-centre kernels (the above go over all slots), and over all slots
# in chunks of 4,096 centres
for p in double mixed; do
  HALOMD_SE_SLOTS=0 run_case water_percentre_$p $W/water.dp $W/water_12288.gro 100 \
    -set precision=$p
  HALOMD_SE_SLOTS=0 run_case small_percentre_$p $W/water.dp $W/water_1536.gro 100 -set precision=$p
done
HALOMD_GPU_CHUNK_ROWS=4096 run_case water_chunk4096_double $W/water.dp $W/water_12288.gro 100
python3 - "$T" "$OUT/mixed_bench.json" <<'EOF'
import glob, json, os, subprocess, sys
rows = {}
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.perf.json"))):
    p = json.load(open(f))
    name = os.path.basename(f)[:-len(".perf.json")]
    s = p["system"]["nsteps"]
    rows[name] = {"natoms": p["system"]["natoms"], "nsteps": s,
                  "ms_per_step": 1e3 * p["performance"]["wall_s"] / s,
                  "atom_steps_per_s": p["performance"]["atom_steps_per_s"],
                  "device_bytes_per_atom": p.get("backend", {}).get("device_bytes_per_atom")}
# the node's copy of .git may lag the working tree: COMMIT, when given, names what was copied
commit = os.environ.get("COMMIT") or subprocess.run(["git", "rev-parse", "HEAD"],
                                                    capture_output=True, text=True).stdout.strip()
json.dump({"commit": commit, "model": "examples/water/water.dp (se_e2_a, v2 paper)",
           "command": "bash bench/gpu_single/node_mixed.sh", "cases": rows},
          open(sys.argv[2], "w"), indent=1)
print("%-28s %7s %10s %14s %12s" % ("case", "atoms", "ms/step", "atom-steps/s", "bytes/atom"))
for k, r in rows.items():
    print("%-28s %7d %10.3f %14.4g %12s" % (k, r["natoms"], r["ms_per_step"], r["atom_steps_per_s"],
                                           r["device_bytes_per_atom"]))
EOF
echo "timings done after $((SECONDS - START)) s"
V=python/halomd/water_validation.py
python3 $V halomd-mdp --nve --ps 5 > $L/nve5.mdp
for p in double mixed; do # the trained water model in NVE, 5 ps, in both precisions
  (cd $L && timeout 60 $H run -backend cuda -f nve5.mdp -c $W/water_192.gro -m $W/water_trained.dp \
     -set precision=$p -deffnm water_nve5_$p > water_nve5_$p.out 2>&1)
  echo "water NVE 5 ps $p: exit $?"
done
if [ "${QUICK:-0}" = 1 ]; then
  tar czf "$OUT/mixed.tgz" -C $T keep
  exit 0
fi

for kind in nvt nve; do
  python3 $V halomd-mdp --$kind --ps 20 > $L/water_$kind.mdp
  (cd $L && timeout 100 $H run -backend cuda -f water_$kind.mdp -c $W/water_192.gro \
     -m $W/water_trained.dp -deffnm water_$kind > water_$kind.out 2>&1)
  echo "water $kind: exit $?, $(grep -A1 'Performance:' $L/water_$kind.log | tail -1 | cut -c1-90)"
done
echo "water done after $((SECONDS - START)) s"

(cd build-gpu && timeout 200 ctest -L gpu -E gpu.mixed --output-on-failure -V >> $L/gpu_tests.log 2>&1)
grep -E "^[0-9]+: FAIL|tests passed|Failed|\*\*\*" $L/gpu_tests.log | cut -c1-200
echo "gpu tests done after $((SECONDS - START)) s"

left=$((DEADLINE - (SECONDS - START)))
if [ $left -gt 30 ]; then
  (cd $L && timeout -s TERM $left $H run -backend cuda -m $P/protein_dpa1.dp -c $P/protein.gro \
     -nsteps 200000 -deffnm protein_nvt -set dt=0.0005 -set gen-vel=yes \
     -set gen-temp=300 -set gen-seed=7 -set tcoupl=v-rescale -set ref-t=300 -set tau-t=0.1 \
     -set nstenergy=20 -set nstcalcenergy=20 -set nstlog=200 -set nstxout=1000 > protein_nvt.out 2>&1)
  echo "protein NVT exit $? after $((SECONDS - START)) s; $(tail -1 $L/protein_nvt.energy.csv)"
fi
tar czf "$OUT/mixed.tgz" -C $T keep
ls -la "$OUT"
