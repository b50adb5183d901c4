#!/bin/bash
# Strong scaling of the GPU-resident step over ranks, every halo transport side by side in one
# call: each case runs on 1 rank (self) and on the rank counts of RANKS through each transport of
# TRANSPORTS. Ranks share the node's GPUs (local rank mod GPUs); where ranks share a GPU the
# nvshmem runs go under an MPS server of their own (tests/gpu/with_mps.sh) and so do the mpi
# runs (the same split of the GPU, a fair comparison). Run on the node from the repository root
# after a build in build-gpu/ (bench/gpu_single/node_build.sh); writes $OUT/scaling.json
# (ms/step, phases of rank 0, ghosts, GPU bytes per atom, last-step energy, the device's halo
# clock: forward, reverse and wait per step) and a table; every run's log and perf JSON in
# $OUT/scaling_runs.tar.gz.
# CASES: lines "name model conf steps [setting=value ...]"; RANKS (default "2 4"), TRANSPORTS
# (default "mpi nvshmem"; "nvshmem-bulk" is nvshmem storing into mapped peers by bulk copies,
# HMD_NVSHMEM_BULK=1, the A/B variant).
set -uo pipefail
OUT=${OUT:-out}
mkdir -p "$OUT"
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 OMP_NUM_THREADS=1
export LD_LIBRARY_PATH=$PWD/.gpudeps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
H=$PWD/build-gpu/halomd MPS=$PWD/tests/gpu/with_mps.sh
W=$PWD/examples/water T=/tmp/halomd_scaling
rm -rf $T && mkdir -p $T
CASES=${CASES:-"w12288 $W/water_trained.dp $W/water_12288.gro 300"}
RANKS=${RANKS:-"2 4"} TRANSPORTS=${TRANSPORTS:-"mpi nvshmem"}
ngpu=$(nvidia-smi -L | wc -l)
one() { # one NAME NP TRANSPORT MODEL CONF STEPS SETTINGS...
  local name=$1 np=$2 tr=$3 model=$4 conf=$5 steps=$6
  shift 6
  local sets=() wrap=() bulk=0 set_tr=$tr
  for s in "$@"; do sets+=(-set "$s"); done
  [ "$tr" = nvshmem-bulk ] && bulk=1 set_tr=nvshmem
  [ "$np" -gt "$ngpu" ] && wrap=("$MPS" "$np")
  (cd $T && HMD_NVSHMEM_BULK=$bulk timeout 240 "${wrap[@]}" mpirun --oversubscribe --allow-run-as-root -np "$np" \
     -x NVSHMEM_DISABLE_NVLS -x NCCL_NVLS_ENABLE -x OMP_NUM_THREADS -x LD_LIBRARY_PATH -x HMD_NVSHMEM_BULK \
     $H run -backend cuda -m "$model" -c "$conf" -nsteps "$steps" -deffnm "${name}_${np}_${tr}" \
     -set halo-transport="$set_tr" -set nstlist=10 -set verlet-buffer=2 -set dt=0.0005 \
     -set nstenergy="$steps" -set nstcalcenergy="$steps" -set nstlog=0 "${sets[@]}" \
     < /dev/null > "${name}_${np}_${tr}.out" 2>&1) || echo "$name $np $tr: $(grep -m1 -i "error" "$T/${name}_${np}_${tr}.out" || tail -3 "$T/${name}_${np}_${tr}.out")"
}
while read -r name model conf steps settings; do
  [ -n "$name" ] || continue
  one "$name" 1 self "$model" "$conf" "$steps" $settings
  for np in $RANKS; do
    for tr in $TRANSPORTS; do
      one "$name" "$np" "$tr" "$model" "$conf" "$steps" $settings
    done
  done
done <<< "$CASES"
tar czf "$OUT/scaling_runs.tar.gz" -C $T . # (a device call returns a few files only)
python3 - "$T" "$OUT/scaling.json" "$CASES" "$(nvidia-smi -L | head -1)" <<'PY'
import csv, glob, json, os, sys, time
t, out, spec, gpu = sys.argv[1:5]
rows = []
for f in sorted(glob.glob(os.path.join(t, "*.perf.json"))):
    name, np_, tr = os.path.basename(f)[:-len(".perf.json")].rsplit("_", 2)
    p = json.load(open(f))
    with open(f[:-len(".perf.json")] + ".energy.csv") as e:
        last = list(csv.DictReader(e))[-1]
    ph = p.get("phases", {})
    rows.append({"case": name, "ranks": int(np_), "transport": tr,
                 "ms_per_step": 1e3 * p["performance"]["wall_s"] / p["system"]["nsteps"],
                 "natoms": p["system"]["natoms"], "steps": p["system"]["nsteps"],
                 "ghost_avg": p.get("decomposition", {}).get("ghost_avg"),
                 "home_max": p.get("decomposition", {}).get("home_max"),
                 "grid": p.get("decomposition", {}).get("grid"),
                 "backend": p.get("backend", {}).get("name"),
                 "device_bytes_per_atom": p.get("backend", {}).get("device_bytes_per_atom"),
                 "phases_s": {k: v.get("seconds") for k, v in ph.items()},
                 "list_steps": p["system"].get("neighbor_builds"),
                 "halo_us_per_step": p.get("halo_us_per_step"),
                 "last_pe_eV": float(last["pe_eV"]), "commit": p["build"]["commit"]})
rec = {"benchmark": "multi_gpu_scaling", "date": time.strftime("%Y-%m-%d"), "hardware": gpu,
       "command": "bash bench/multi_gpu/node_scaling.sh", "cases_spec": spec.splitlines(),
       "note": "ranks share the GPUs there are; several ranks on one GPU run under MPS with "
               "100/P percent of its threads each: this measures the halo's overheads, not "
               "NVLink (one GPU cannot show it)", "runs": rows}
json.dump(rec, open(out, "w"), indent=1)
print(f"{'case':10s} {'ranks':>5s} {'transport':>9s} {'ms/step':>9s} {'ghosts':>8s} "
      f"{'list ms':>8s} {'fwd us':>7s} {'rev us':>7s} {'wait f':>7s} {'wait r':>7s} {'dPE vs 1':>10s}")
ref = {r["case"]: r for r in rows if r["ranks"] == 1}
for r in rows:
    d = r["last_pe_eV"] - ref[r["case"]]["last_pe_eV"] if r["case"] in ref else float("nan")
    h = r["halo_us_per_step"] or {}
    us = lambda k: h[k]["avg"] if k in h else float("nan")
    nl = r["phases_s"].get("Neighbour list") or 0.0
    lists = r["list_steps"] or 0
    print(f"{r['case']:10s} {r['ranks']:5d} {r['transport']:>9s} {r['ms_per_step']:9.3f} "
          f"{(r['ghost_avg'] or 0):8.0f} {1e3 * nl / max(lists, 1):8.2f} {us('forward'):7.1f} "
          f"{us('reverse'):7.1f} {us('forward_wait'):7.1f} {us('reverse_wait'):7.1f} {d:10.2e}")
PY
