#!/bin/bash
# DeePMD-kit (PyTorch backend) timings for the single-GPU benchmark, on the GPU node, with
# deepmd-kit taken from .gpudeps/py (made by bench/gpu_single/fetch_deepmd.sh; no install).
# From the repository root:
#   OUT=out bash bench/gpu_single/deepmd_cases.sh [MODEL:CONF ...]
# Default cases: examples/water/water.dp on water_1536.gro and water_12288.gro.
# Writes $OUT/deepmd_<model>_<conf>.json (see deepmd_side.py) and prints a table.
# Env: REPEATS (20), WARMUP (5), CASE_TIMEOUT (s per case, 300), PY (python3),
#      NLIST_BACKEND (auto: vesin's cell list inside DeepPot.eval, as deepmd-kit[torch] users get).
# Compressed models are NOT run: DeePMD-kit's PT backend needs its compiled custom ops
# (libdeepmd_op_pt.so, tabulate_fusion_*) both to compress (`dp --pt compress`, which also
# needs min_nbor_dist or the training data) and to run a compressed model; .gpudeps/py leaves
# those ops out (size: 27 MB + MPICH), so ENABLE_CUSTOMIZED_OP is False there.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-out}
mkdir -p "$OUT"
PY=${PY:-python3}
GPUDEPS=${GPUDEPS:-$PWD/.gpudeps/py}   # (override only to test a cp311 copy off the node)
export PYTHONPATH=$GPUDEPS${PYTHONPATH:+:$PYTHONPATH}
export TF_CPP_MIN_LOG_LEVEL=3   # (a) uses deepmd-kit defaults otherwise (DP_INFER_BATCH_SIZE etc.)
REPEATS=${REPEATS:-20} WARMUP=${WARMUP:-5} CASE_TIMEOUT=${CASE_TIMEOUT:-300}
NLIST_BACKEND=${NLIST_BACKEND:-auto}
if [ $# -eq 0 ]; then
  set -- examples/water/water.dp:examples/water/water_1536.gro \
         examples/water/water.dp:examples/water/water_12288.gro
fi
$PY -c "import deepmd, deepmd.pt, torch; print('deepmd', deepmd.__version__, 'from', deepmd.__file__, '| torch', torch.__version__, '| cuda', torch.cuda.is_available(), '| custom ops', deepmd.pt.ENABLE_CUSTOMIZED_OP)" 2>&1 | grep -v WARNING || { echo "deepmd-kit not importable from .gpudeps/py"; exit 1; }
jsons=()
for c in "$@"; do
  m=${c%%:*} g=${c#*:}
  tag=$(basename "${m%.*}")_$(basename "${g%.*}")
  j=$OUT/deepmd_$tag.json
  echo "== $tag"
  timeout "$CASE_TIMEOUT" $PY bench/gpu_single/deepmd_side.py --model "$m" --conf "$g" \
    --repeats "$REPEATS" --warmup "$WARMUP" --nlist-backend "$NLIST_BACKEND" \
    --pth "$OUT/deepmd_pth/$(basename "${m%.*}").pth" --json "$j" > "$OUT/deepmd_$tag.log" 2>&1
  rc=$?
  grep -v -e WARNING -e "DP_INFER_BATCH_SIZE" -e "environment variables OMP" "$OUT/deepmd_$tag.log" | tail -6
  [ $rc -eq 0 ] || echo "   exit $rc (124: over ${CASE_TIMEOUT}s; 2: (a)/(b) mismatch); log: $OUT/deepmd_$tag.log"
  [ -f "$j" ] && jsons+=("$j")
done
rm -rf "$OUT/deepmd_pth"   # converted TorchScript models (~8 MB each); remade in seconds
[ ${#jsons[@]} -gt 0 ] && $PY - "${jsons[@]}" <<'EOF'
import json, sys
print("\n%-28s %7s %12s %14s %12s %14s %s" % ("case", "natoms", "eval ms", "eval at-st/s", "network ms", "net at-st/s", "nlist(eval)"))
for p in sys.argv[1:]:
    d = json.load(open(p))
    name = p.rsplit("/", 1)[-1][7:-5]
    ev = d.get("eval_s_median")
    print("%-28s %7d %12s %14s %12.3f %14.4g %s" % (
        name, d["natoms"], "%.3f" % (ev * 1e3) if ev else "-",
        "%.4g" % d["eval_atom_steps_per_s"] if ev else "-",
        d["network_s_median"] * 1e3, d["network_atom_steps_per_s"], d["nlist_backend_eval"]))
print("device:", d["device"], "| deepmd", d["deepmd"], "| torch", d["torch"])
EOF
exit 0
