#!/bin/bash
# compute-sanitizer memcheck and racecheck on the CUDA backend, on a GPU node (issue 5,
# deliverable 4): for each model and precision, a short MD run on 96 water atoms with v-rescale
# (eager evaluations at list steps, the captured step replayed between them): memcheck 6 steps
# with a list every 3; racecheck 2 steps with one list, as a list step takes about 40 s under
# racecheck (2026-11-30). Each within SAN_TIMEOUT seconds (default 300). One line per run; the
# logs in $OUT (or ./out), the tail of any that is not clean (the program's own lines and the
# sanitizer's).
# SAN_TOOLS picks the tools (default "memcheck racecheck"); SAN_RACE_FLAGS are racecheck's extra
# options (default: none; for example a --kernel-name-exclude that leaves some kernels out).
# Usage, from the repository root after node_build.sh:
#   bash bench/gpu_single/node_sanitize.sh [MODEL:PRECISION ...]
# (default: se_e2_a water and DPA-1 water, double and mixed, and the compressed DPA-1 strip model
# in mixed). Exit status: the number of runs that were not clean.
set -uo pipefail
OUT=${OUT:-out}
mkdir -p "$OUT"
H=$PWD/build-gpu/halomd D=$PWD/tests/data
CASES=${*:-"se_e2_a_water_one_side.dp:double se_e2_a_water_one_side.dp:mixed dpa1_water.dp:double
dpa1_water.dp:mixed compressed_coarse_dpa1_small_strip_l0.dp:mixed"}
T=$(mktemp -d)
bad=0
for c in $CASES; do
  model=${c%%:*} precision=${c##*:}
  for tool in ${SAN_TOOLS:-memcheck racecheck}; do
    name=${model%.dp}_${precision}_$tool log=$OUT/sanitizer_$name.log flags=()
    steps=6 nstlist=3
    [ $tool = racecheck ] && { read -ra flags <<< "${SAN_RACE_FLAGS:-}"; steps=2 nstlist=10; }
    t0=$SECONDS
    (cd $T && timeout ${SAN_TIMEOUT:-300} compute-sanitizer --tool $tool "${flags[@]}" \
      --error-exitcode 9 $H run \
      -backend cuda -m $D/models/$model -c $D/structures/water_96_small.xyz -nsteps $steps \
      -deffnm $name -set precision=$precision -set nstlist=$nstlist -set verlet-buffer=0.3 \
      -set tcoupl=v-rescale -set ref-t=300 > "$log" 2>&1)
    r=$?
    [ $r = 124 ] && echo "========= timed out after ${SAN_TIMEOUT:-300} s" >> "$log"
    printf "%-40s exit %3d %4d s  %s\n" "$name" $r $((SECONDS - t0)) "$(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log")"
    [ $r = 0 ] || { bad=$((bad + 1)); grep -v "^=========" "$log" | grep -v "^ *$" | tail -4;
                    grep "^=========" "$log" | grep -v "^========= *$" | tail -6; }
  done
done
rm -rf "$T"
exit $bad
