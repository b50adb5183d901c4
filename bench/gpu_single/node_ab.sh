#!/bin/bash
# Before and after in one GPU call: the working tree against an earlier commit, the same cases
# run by both builds on the same node, so that a change is measured without the spread between
# calls (about 2%). Two steps:
#   on the build machine:  bash bench/gpu_single/node_ab.sh prepare REV
#       writes ab_base/REV and ab_base/base.patch, the difference from REV to the working tree's
#       tracked sources (no test data, fuzz corpora, examples or docs: binary files do not patch): a few kB that travel with the working
#       tree, which is near the device's size limit (remove ab_base/ afterwards);
#   on the node (carrying .gpudeps/usr):  bash bench/gpu_single/node_ab.sh run
#       builds both (build-gpu/ and ab_base/tree/build-gpu/), runs every case with each, and writes
#       $OUT/ab.json (ms/step, GPU bytes per atom, the last step's energy) and a table.
# ab.json also holds each run's phases (s) and, for the new build, its list steps' breakdown
# (the run record's list_steps), printed under the table.
# CASES: lines "name model conf steps [setting=value ...] [env:NAME=value ...]" (default: the
# 1.67M DPA-1 on 1,536 water atoms in double and in mixed precision, 120 steps); env: items and
# AB_ENV (for every case) set the environment of the new build's run only (for example
# env:HALOMD_GPU_TF32X3=0, to time a variant that a setting turns off). AB_PROFILE=1 also runs
# one step of every case with each build under ncu (kernel times only, clocks and caches left
# alone: without --cache-control none ncu empties the L2 before each kernel) and
# prints the kernels whose time changed most: $OUT/ab_profile.json. For DPA-1 (a graph with
# switch nodes) ncu lists none of the graph's kernels, so these are the kernels of step 0's
# eager evaluation (with its list build), the graph's kernels over the exact live rows; for
# se_e2_a the one-step sum is twice the step, as if step 1's graph were listed too.
set -uo pipefail
case ${1:-} in
  prepare)
    rev=${2:?usage: node_ab.sh prepare REV}
    rm -rf ab_base && mkdir ab_base
    git diff --no-renames "$rev" -- . ':!tests/data' ':!tests/fuzz' ':!examples' ':!docs' ':!bench/results' \
      > ab_base/base.patch
    git rev-parse --short "$rev" > ab_base/REV
    echo "ab_base/: $(cat ab_base/REV)"
    exit 0
    ;;
  run) ;;
  *) echo "usage: node_ab.sh prepare REV | run" >&2; exit 64 ;;
esac
OUT=${OUT:-out}
mkdir -p "$OUT"
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0
export LD_LIBRARY_PATH=$PWD/.gpudeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
[ -d ab_base ] || { echo "no ab_base/: run 'node_ab.sh prepare REV' on the build machine" >&2; exit 66; }
# The base's sources: the working tree's, with the difference from the base taken back out.
(rm -rf ab_base/tree && mkdir -p ab_base/tree && tar -c --exclude=./ab_base --exclude=./build-gpu --exclude=./tests/data \
   --exclude=./examples --exclude=./docs --exclude=./.gpudeps --exclude=./bench/results . |
   tar -x -C ab_base/tree && cd ab_base/tree && patch -s -R -p1 < ../base.patch) ||
  { echo "could not make the base's sources from ab_base/base.patch" >&2; exit 1; }
ln -sfn ../../.gpudeps ab_base/tree/.gpudeps
# both builds at once, half the cores each (nproc --all: plain nproc obeys OMP_NUM_THREADS)
half=$(( $(nproc --all) / 2 )); [ "$half" -ge 1 ] || half=1
t0=$(date +%s)
JOBS=$half bash bench/gpu_single/node_build.sh > "$OUT/build_new.txt" 2>&1 &
new_pid=$!
(cd ab_base/tree && JOBS=$half HALOMD_COMMIT=$(cat ../REV) bash bench/gpu_single/node_build.sh) > "$OUT/build_base.txt" 2>&1 ||
  { tail -20 "$OUT/build_base.txt"; exit 1; }
wait $new_pid || { tail -20 "$OUT/build_new.txt"; exit 1; }
echo "both builds: $(( $(date +%s) - t0 )) s"
D=$PWD/tests/data/models W=$PWD/examples/water T=/tmp/halomd_ab
rm -rf $T && mkdir -p $T # a warm node keeps the last call's runs
CASES=${CASES:-"dpa1_double $D/dpa1_1p6m_fp32.dp $W/water_1536.gro 120
dpa1_mixed $D/dpa1_1p6m_fp32.dp $W/water_1536.gro 120 precision=mixed"}
# run_cases DIR NSTEPS [WRAPPER ...]: every case with both builds, in DIR, each for its own number
# of steps or NSTEPS, under WRAPPER (a profiler) when given.
run_cases() {
  local dir=$1 nsteps=$2
  shift 2
  mkdir -p "$dir"
  while read -r name model conf steps settings; do
    [ -n "$name" ] || continue
    sets=() envs=${AB_ENV:-}
    for s in $settings; do
      case $s in env:*) envs="$envs ${s#env:}" ;; *) sets+=(-set "$s") ;; esac
    done
    [ -n "$nsteps" ] && steps=$nsteps
    for tree in new base; do
      H=$PWD/build-gpu/halomd env=$envs
      [ $tree = base ] && H=$PWD/ab_base/tree/build-gpu/halomd env=
      (cd "$dir" && env $env timeout 300 "$@" $H run -backend cuda -m "$model" -c "$conf" \
         -nsteps "$steps" -deffnm ${tree}_$name -set nstlist=10 -set verlet-buffer=2 \
         -set dt=0.0005 -set nstenergy="$steps" -set nstcalcenergy="$steps" -set nstlog=0 \
         "${sets[@]}" > ${tree}_$name.out 2>&1) || echo "$tree $name: $(tail -2 "$dir/${tree}_$name.out")"
    done
  done <<< "$CASES"
}
run_cases $T ""
python3 - "$T" "$OUT/ab.json" "$(cat ab_base/REV)" "${AB_ENV:-}" "$CASES" <<'PY'
import csv, glob, json, os, sys, time
t, out, base, env, spec = sys.argv[1:6]
rows = {}
for f in sorted(glob.glob(os.path.join(t, "*.perf.json"))):
    tree, name = os.path.basename(f)[:-len(".perf.json")].split("_", 1)
    p = json.load(open(f))
    with open(f[:-len(".perf.json")] + ".energy.csv") as e:
        last = list(csv.DictReader(e))[-1]
    rows.setdefault(name, {})[tree] = {
        "ms_per_step": 1e3 * p["performance"]["wall_s"] / p["system"]["nsteps"],
        "device_bytes_per_atom": p.get("backend", {}).get("device_bytes_per_atom"),
        "steps": p["system"]["nsteps"], "last_step_pe_eV": float(last["pe_eV"]),
        "commit": p["build"]["commit"],
        "phases_s": {k: v["seconds"] for k, v in p.get("phases", {}).items()},
        "list_steps": p.get("list_steps")}
rec = {"benchmark": "node_ab", "date": time.strftime("%Y-%m-%d"), "base": base, "new_env": env,
       "cases_spec": spec.splitlines(),
       "command": "bash bench/gpu_single/node_ab.sh run", "cases": rows}
json.dump(rec, open(out, "w"), indent=1)
print(f"{'case':16s} {'base ms':>9s} {'new ms':>9s} {'new/base':>9s} {'dPE (eV)':>10s}")
for name, r in rows.items():
    if "base" in r and "new" in r:
        b, n = r["base"], r["new"]
        print(f"{name:16s} {b['ms_per_step']:9.3f} {n['ms_per_step']:9.3f} "
              f"{n['ms_per_step'] / b['ms_per_step']:9.3f} {n['last_step_pe_eV'] - b['last_step_pe_eV']:10.2e}")
        for tree in ("base", "new"):  # ms per step in each phase
            r = rows[name][tree]
            print(f"  {tree:5s} " + " ".join(f"{k} {1e3 * v / r['steps']:.3f}" for k, v in r["phases_s"].items() if v > 0))
        if n.get("list_steps"):
            print("  new list step ms: " + " ".join(f"{k} {v:.3f}" for k, v in n["list_steps"]["ms_each"].items()))
PY
[ "${AB_PROFILE:-0}" = 1 ] || exit 0
run_cases $T/prof 1 ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum --csv
python3 - "$T/prof" "$OUT/ab_profile.json" <<'PY'
import collections, csv, glob, json, os, sys
d, out = sys.argv[1:3]
def kernels(path):
    """Microseconds per kernel (name up to its arguments) summed over one step's launches."""
    rows = [r for r in csv.reader(open(path, errors="replace")) if len(r) > 10]
    if not rows or "Kernel Name" not in rows[0]:
        return {}
    k, v = rows[0].index("Kernel Name"), rows[0].index("Metric Value")
    t = collections.defaultdict(float)
    for r in rows[1:]:
        t[r[k].split("(")[0].replace("void ", "").strip()[:48]] += float(r[v].replace(",", "")) / 1e3
    return t
rec = {}
for f in sorted(glob.glob(os.path.join(d, "new_*.out"))):
    name = os.path.basename(f)[len("new_"):-len(".out")]
    new, base = kernels(f), kernels(os.path.join(d, f"base_{name}.out"))
    delta = {n: new.get(n, 0.0) - base.get(n, 0.0) for n in set(new) | set(base)}
    top = sorted(delta, key=lambda n: -abs(delta[n]))[:12]
    rec[name] = {"base_us": sum(base.values()), "new_us": sum(new.values()),
                 "kernels": {n: {"base_us": base.get(n, 0.0), "new_us": new.get(n, 0.0)} for n in top}}
    print(f"--- {name}: kernels {sum(base.values()):.0f} -> {sum(new.values()):.0f} us (one step)")
    for n in top:
        print(f"{n:48s} {base.get(n, 0.0):9.1f} {new.get(n, 0.0):9.1f} us")
json.dump(rec, open(out, "w"), indent=1)
PY
