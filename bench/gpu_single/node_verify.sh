#!/bin/bash
# One GPU call that checks a change and times it: node_ab.sh (the working tree against the base
# prepared in ab_base/, both built at once; CASES as node_ab.sh takes them), then the gpu-labelled
# tests of the new build (ctest -L gpu, at most GPU_TESTS_S seconds, CTEST_ARGS added), a short
# table last. Logs and JSON in $OUT. Usage, from the repository root on the node, carrying
# .gpudeps and ab_base: bash bench/gpu_single/node_verify.sh
set -uo pipefail
OUT=${OUT:-out}
mkdir -p "$OUT"
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0
export LD_LIBRARY_PATH=$PWD/.gpudeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
nvidia-smi -L
t0=$(date +%s)
bash bench/gpu_single/node_ab.sh run > "$OUT/ab.txt" 2>&1
ab=$?
echo "node_ab: exit $ab after $(( $(date +%s) - t0 )) s"
cp build-gpu.log "$OUT/" 2>/dev/null
(cd build-gpu && timeout "${GPU_TESTS_S:-300}" ctest -L gpu -j 4 --output-on-failure -V ${CTEST_ARGS:-} \
   > "$OUT/gpu_tests.log" 2>&1)
echo "gpu tests: exit $? after $(( $(date +%s) - t0 )) s"
grep -E "^[0-9]+: (ok|FAIL)|tests passed|Failed|Skipped|\*\*\*|skipped" "$OUT/gpu_tests.log" | cut -c1-160
cat "$OUT/ab.txt" | tail -12
