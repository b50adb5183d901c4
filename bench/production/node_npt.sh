#!/bin/bash
# Issue 29 items 1 and 3 on a GPU node: checkpoints and NPT on the GPU step. Run from the
# repository root on the node (it calls bench/gpu_single/node_build.sh, a no-op when build-gpu/
# is up to date). PARTS picks what runs, in this order:
#   tests  ctest -R 'gpu\.(cpt_|mdtwin|reproducible|multi_)': the checkpoint continuation and
#          NPT tests (tests/gpu/check_gpu_cpt.py) with the GPU step's twin, reproducibility and
#          multi-rank tests they must not break (about 5 minutes)
#   npt    bench/npt_check.py on examples/water/water_1536.gro with the trained model,
#          NPT_STEPS (default 100000) steps of C-rescale NPT on the GPU, within 290 s, --json
#   mem    bench/production/checkpoint_memory.sh with the GPU build at 25,165,824 atoms: peak
#          memory of one checkpoint write and read beyond the arrays (about 30 s)
# The three together take about 10.5 minutes, more than one 600 s call: split them as
#   call 1: PARTS="tests mem" bash bench/production/node_npt.sh     (about 6 minutes)
#   call 2: PARTS=npt bash bench/production/node_npt.sh             (about 5 minutes)
# Writes $OUT/node_npt_<parts>.tar.xz (logs, the tests' work folders' energy files), and
# $OUT/npt_check.json, $OUT/checkpoint_memory.json, $OUT/ctest_cpt.log; prints a table last.
set -uo pipefail
OUT=${OUT:-out}
PARTS=${PARTS:-"tests mem"}
NPT_STEPS=${NPT_STEPS:-100000}
mkdir -p "$OUT"
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0
export LD_LIBRARY_PATH=$PWD/.gpudeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
bash bench/gpu_single/node_build.sh || exit 1
T=/tmp/halomd_node_npt
rm -rf $T && mkdir -p $T
summary=()
has() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }

if has tests; then
  t0=$(date +%s)
  (cd build-gpu && timeout 420 ctest -R 'gpu\.(cpt_|mdtwin|reproducible|multi_)' \
     --output-on-failure > $T/ctest_cpt.log 2>&1)
  rc=$?
  cp $T/ctest_cpt.log "$OUT/ctest_cpt.log"
  mkdir -p $T/gpu && cp -r build-gpu/tests/gpu/cpt_* $T/gpu/ 2>/dev/null
  find $T/gpu -name '*.xyz' -delete 2>/dev/null
  passed=$(grep -E 'tests passed|tests failed' $T/ctest_cpt.log | tail -1)
  summary+=("tests: exit $rc, $passed ($(( $(date +%s) - t0 )) s)")
  while read -r line; do summary+=("  $line"); done < <(
    grep -E '^ *[0-9]+/[0-9]+ Test' $T/ctest_cpt.log | sed -E 's/ +Test +#[0-9]+: / /; s/\.{3,}/ /')
  while read -r line; do summary+=("  $line"); done < <(grep -hE '^(ok|FAIL) ' $T/ctest_cpt.log |
    grep -E 'continued|follows' | cut -c1-150)
fi

if has npt; then
  t0=$(date +%s)
  timeout 290 python3 bench/npt_check.py "$PWD/build-gpu/halomd" "$PWD/examples/water/water_trained.dp" \
    "$PWD/examples/water/water_1536.gro" "$NPT_STEPS" --json "$OUT/npt_check.json" -- -backend cuda \
    > $T/npt_check.out 2>&1
  rc=$?
  summary+=("npt: exit $rc (0: <P> within 3 errors of ref-p, 1: not, 124: over 290 s)"
            "  ($(( $(date +%s) - t0 )) s)")
  while read -r line; do summary+=("  $line"); done < <(grep -vE '^\s*$' $T/npt_check.out | tail -6)
  work=$(python3 -c "import json; print(json.load(open('$OUT/npt_check.json'))['workdir'])" \
    2>/dev/null)
  [ -n "$work" ] && cp "$work"/npt.log "$work"/npt.energy.csv "$work"/npt.stderr $T/ \
    2>/dev/null
fi

if has mem; then
  t0=$(date +%s)
  bash bench/production/checkpoint_memory.sh build-gpu 25165824 $T \
    > "$OUT/checkpoint_memory.json" 2> $T/checkpoint_memory.err
  rc=$?
  mem=$(tr -d '\n' < "$OUT/checkpoint_memory.json" | cut -c1-300)
  summary+=("mem: exit $rc ($(( $(date +%s) - t0 )) s): $mem")
fi

tag=$(echo "$PARTS" | tr ' ' '_')
tar -C $T -cJf "$OUT/node_npt_$tag.tar.xz" . 2>/dev/null
echo
echo "== node_npt ($PARTS) =="
printf '%s\n' "${summary[@]}"
