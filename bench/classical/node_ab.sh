#!/bin/bash
# Before and after for the classical step in one GPU call: the working tree (and variants of it
# built with other compile-time settings) against an earlier commit, run alternately on the same
# node, with the energies compared bit for bit and the classical GPU tests of the new build.
#   on the build machine:  bash bench/classical/node_ab.sh prepare REV
#       (writes ab_base/REV and ab_base/base.patch: the difference of src/ from REV; remove
#       ab_base/ afterwards)
#   on the node (carrying .gpudeps/usr .gpudeps/gromacs):  bash bench/classical/node_ab.sh run
# Env: CASES (run.sh's, default "water_1536 water_12288 water_24576 protein"), ROUNDS (3: base,
# new and each variant in turn, ROUNDS times), VARIANTS ("name:-DMACRO=value ..." entries, each
# built from the working tree with those CUDA flags, e.g. "b8:-DHMD_FF_PAIR_BLOCKS_PER_SM=8"),
# NSTEPS (2000), DEADLINE (s from start, 540: no round starts that cannot end before it).
# Writes $OUT/ab.json (per build and round: us/step, Force and Neighbour list us/step, list
# builds; the kernel times of 20 steps at 24,576 atoms under ncu; the tests) and prints a table.
set -uo pipefail
cd "$(dirname "$0")/../.."
case ${1:-} in
  prepare)
    rev=${2:?usage: node_ab.sh prepare REV}
    rm -rf ab_base && mkdir ab_base
    git diff --no-renames "$rev" -- src > ab_base/base.patch
    git rev-parse --short "$rev" > ab_base/REV
    echo "ab_base/: $(cat ab_base/REV), $(wc -l < ab_base/base.patch) lines"
    exit 0 ;;
  run) ;;
  *) echo "usage: node_ab.sh prepare REV | run" >&2; exit 64 ;;
esac
ROOT=$PWD OUT=${OUT:-out}; mkdir -p "$OUT"
t0=$(date +%s); left() { echo $(( ${DEADLINE:-540} - ($(date +%s) - t0) )); }
R=$ROOT/.gpudeps
builds=("new:$ROOT")
JOBS=16 TARGET="halomd test_gpu_ff_twin" HALOMD_COMMIT=new bash bench/gpu_single/node_build.sh > "$OUT/build_new.txt" 2>&1 \
  || { tail -20 "$OUT/build_new.txt"; exit 1; }
copy() { rm -rf "$1" && mkdir -p "$1" && tar --exclude=./build-gpu --exclude=./ab_base -cf - . | tar -C "$1" -xf -; }
copy /tmp/ab_tree_base && (cd /tmp/ab_tree_base && patch -s -R -p1 < "$ROOT/ab_base/base.patch") \
  && (cd /tmp/ab_tree_base && JOBS=16 TARGET=halomd HALOMD_COMMIT=base bash bench/gpu_single/node_build.sh > "$OUT/build_base.txt" 2>&1) \
  && builds+=("base:/tmp/ab_tree_base") || echo "base build failed"
for v in ${VARIANTS:-}; do
  name=${v%%:*} flags=${v#*:}
  copy /tmp/ab_tree_$name && (cd /tmp/ab_tree_$name && CMAKE_EXTRA="-DCMAKE_CUDA_FLAGS=${flags//,/ }" JOBS=16 TARGET=halomd \
    HALOMD_COMMIT=$name bash bench/gpu_single/node_build.sh > "$OUT/build_$name.txt" 2>&1) && builds+=("$name:/tmp/ab_tree_$name") \
    || echo "variant $name failed to build"
done
echo "[$(( $(date +%s) - t0 )) s] built: ${builds[*]}"
export LD_LIBRARY_PATH=$R/usr/lib/x86_64-linux-gnu GMXLIB=$R/gromacs/top
(cd build-gpu && timeout 120 ctest -R "gpu\.ff_" > "$OUT/ctest.txt" 2>&1); grep -E "tests passed|Failed" "$OUT/ctest.txt"
CASES=${CASES:-"water_1536 water_12288 water_24576 protein"}
for r in $(seq 1 "${ROUNDS:-3}"); do
  for b in "${builds[@]}"; do
    name=${b%%:*} dir=${b#*:}
    [ "$(left)" -gt 40 ] || break 2
    res=$OUT/run_${name}_$r.json
    MDP_EXTRA="nstlist          = 0" NSTEPS=${NSTEPS:-2000} CASES="$CASES" HALOMD=$dir/build-gpu/halomd GMX=none \
      OUT=/tmp/ab_run_${name}_$r RESULT=$res HALOMD_COMMIT=$name timeout 90 bash bench/classical/run.sh > /dev/null 2>&1
  done
done
for b in "${builds[@]}"; do
  name=${b%%:*} dir=${b#*:}
  [ "$(left)" -gt 20 ] && [ -f /tmp/ab_run_${name}_1/water_24576.gro ] || continue
  (cd /tmp/ab_run_${name}_1 && timeout 20 ncu --clock-control none --metrics gpu__time_duration.sum --csv "$dir/build-gpu/halomd" run \
    -f halomd.mdp -c water_24576.gro -p water_24576.top -backend cuda -nsteps 20 -deffnm ncu > "$OUT/ncu_$name.csv" 2>/dev/null)
done
for c in $CASES; do
  for b in "${builds[@]}"; do
    name=${b%%:*}; [ "$name" = new ] && continue
    f0=/tmp/ab_run_new_1/halomd_$c.energy.csv f1=/tmp/ab_run_${name}_1/halomd_$c.energy.csv
    [ -f "$f0" ] && [ -f "$f1" ] && { cmp -s "$f0" "$f1" && echo "$c: $name's energies = new's, bit for bit" || echo "$c: $name's energies differ from new's"; }
  done
done | tee "$OUT/energies.txt"
NSTEPS=${NSTEPS:-2000} python3 - "$OUT" "$CASES" "${builds[@]}" <<'PY'
import json, sys, os, glob, csv, collections
out, cases, builds = sys.argv[1], sys.argv[2].split(), [b.split(":")[0] for b in sys.argv[3:]]
nsteps = int(os.environ["NSTEPS"])
rec = {"what": "classical A/B (bench/classical/node_ab.sh)", "builds": builds, "nsteps": nsteps,
       "runs": {}, "ncu_water_24576_us": {}, "energies": open(f"{out}/energies.txt").read().splitlines()}
for b in builds:
    for f in sorted(glob.glob(f"{out}/run_{b}_*.json")):
        for c in json.load(open(f))["cases"]:
            h = c["halomd"]["figures"]; ph = h.get("phases", {})
            us = lambda k: ph.get(k, {}).get("seconds", 0.0) * 1e6 / nsteps
            rec["runs"].setdefault(b, {}).setdefault(c["case"], []).append(
                {"us_per_step": h["us_per_step"], "force_us": us("Force"), "list_us": us("Neighbour list"),
                 "builds": h["neighbor_builds"]})
    p = f"{out}/ncu_{b}.csv"
    rows = [r for r in csv.reader(open(p)) if len(r) > 10] if os.path.exists(p) else []
    if rows:
        k, v = rows[0].index("Kernel Name"), rows[0].index("Metric Value"); t = collections.defaultdict(float)
        for r in rows[1:]:
            t[r[k].split("(")[0].replace("<unnamed>::", "")[:40]] += float(r[v].replace(",", "")) / 1e3
        rec["ncu_water_24576_us"][b] = dict(sorted(t.items(), key=lambda x: -x[1]))
json.dump(rec, open(f"{out}/ab.json", "w"), indent=1)
print(f"{'build':8s} " + " ".join(f"{c:>26s}" for c in cases) + "   (us/step, Force us/step: per round)")
for b in builds:
    cells = []
    for c in cases:
        rs = rec["runs"].get(b, {}).get(c, [])
        cells.append(" ".join(f"{r['us_per_step']:.0f}/{r['force_us']:.0f}" for r in rs))
    print(f"{b:8s} " + " ".join(f"{x:>26s}" for x in cells))
for b, t in rec["ncu_water_24576_us"].items():
    print(f"ncu {b}: total {sum(t.values()):.0f} us; " + " ".join(f"{n} {v:.0f}" for n, v in list(t.items())[:6]))
PY
