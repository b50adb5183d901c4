#!/bin/bash
# precision = mixed on a GPU node in one call: build, the gpu-labelled tests (gpu.mixed first:
# every golden in mixed precision against DeePMD-kit, NVE in mixed), full MD steps in double and
# mixed side by side (se_e2_a water 12,288 atoms, plain and compressed; 1,536 compressed; the
# trained DPA-1 of examples/protein on the 15,668-atom protein), then NVT of the protein in mixed
# precision with the trained model until DEADLINE seconds after the start (default 440).
# Writes to $OUT: gpu_tests.log, mixed_errors.json, mixed_bench.json, protein_nvt.{log,energy.csv}.
# Usage, from the repository root on the node (carry .gpudeps/usr):
#   bash bench/gpu_single/node_mixed.sh
set -uo pipefail
START=$SECONDS
DEADLINE=${DEADLINE:-440}
OUT=$(mkdir -p "${OUT:-out}" && cd "${OUT:-out}" && pwd)
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0
export LD_LIBRARY_PATH=$PWD/.gpudeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
nvidia-smi -L
bash bench/gpu_single/node_build.sh || exit 1
echo "built after $((SECONDS - START)) s"
H=$PWD/build-gpu/halomd W=$PWD/examples/water P=$PWD/examples/protein T=/tmp/halomd_mixed
mkdir -p $T
(cd build-gpu && timeout 120 ctest -R gpu.mixed --output-on-failure -V > "$OUT/gpu_tests.log" 2>&1
 timeout 150 ctest -L gpu -E gpu.mixed --output-on-failure -V >> "$OUT/gpu_tests.log" 2>&1)
grep -E "^[0-9]+: (FAIL|ok   NVE)|worst over|tests passed|Failed|Skipped|\*\*\*" "$OUT/gpu_tests.log" | cut -c1-160
cp build-gpu/tests/gpu/mixed/mixed_errors.json "$OUT/" 2>/dev/null
echo "tests done after $((SECONDS - START)) s"

# name model conf steps [-set k=v ...]: full MD steps, as run_bench.sh
run_case() {
  local name=$1 model=$2 conf=$3 steps=$4
  shift 4
  (cd $T && timeout 120 $H run -backend cuda -m $model -c $conf -nsteps $steps -deffnm $name \
     -set nstlist=10 -set verlet-buffer=2 -set dt=0.0005 -set nstenergy=0 -set nstlog=0 "$@" \
     > $name.out 2>&1) || echo "$name: $(tail -2 $T/$name.out)"
}
for p in double mixed; do
  run_case water_$p $W/water.dp $W/water_12288.gro 100 -set precision=$p
  run_case water_compressed_$p $W/water.dp $W/water_12288.gro 100 -set model-compress=yes \
    -set precision=$p
  run_case small_compressed_$p $W/water.dp $W/water_1536.gro 200 -set model-compress=yes \
    -set precision=$p
  run_case dpa1_protein_$p $P/protein_dpa1.dp $P/protein.gro 10 -set precision=$p
done
python3 - "$T" "$OUT/mixed_bench.json" <<'EOF'
import glob, json, os, sys
rows = {}
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.perf.json"))):
    p = json.load(open(f))
    name = os.path.basename(f)[:-len(".perf.json")]
    s = p["system"]["nsteps"]
    rows[name] = {"natoms": p["system"]["natoms"], "nsteps": s,
                  "ms_per_step": 1e3 * p["performance"]["wall_s"] / s,
                  "atom_steps_per_s": p["performance"]["atom_steps_per_s"],
                  "device_bytes_per_atom": p.get("backend", {}).get("device_bytes_per_atom")}
json.dump(rows, open(sys.argv[2], "w"), indent=1)
print("%-28s %7s %10s %14s %12s" % ("case", "atoms", "ms/step", "atom-steps/s", "bytes/atom"))
for k, r in rows.items():
    print("%-28s %7d %10.3f %14.4g %12s" % (k, r["natoms"], r["ms_per_step"], r["atom_steps_per_s"],
                                           r["device_bytes_per_atom"]))
EOF
echo "timings done after $((SECONDS - START)) s"

left=$((DEADLINE - (SECONDS - START)))
if [ $left -gt 30 ]; then
  (cd $T && timeout $left $H run -backend cuda -m $P/protein_dpa1.dp -c $P/protein.gro \
     -nsteps 20000 -deffnm protein_nvt -set precision=mixed -set dt=0.0005 -set gen-vel=yes \
     -set gen-temp=300 -set gen-seed=7 -set tcoupl=v-rescale -set ref-t=300 -set tau-t=0.1 \
     -set nstenergy=20 -set nstcalcenergy=20 -set nstlog=200 -set nstxout=0 > protein_nvt.out 2>&1)
  echo "protein NVT exit $? after $((SECONDS - START)) s; $(tail -1 $T/protein_nvt.energy.csv)"
  cp $T/protein_nvt.energy.csv $T/protein_nvt.log "$OUT/" 2>/dev/null
fi
