#!/bin/bash
# Trains the two example models with DeePMD-kit (PyTorch backend) on one GPU node, side by side,
# each for as many steps as fit in BUDGET seconds (python/halomd/train_timed.py), then freezes,
# tests on the held-out frames and converts each to .dp. DeePMD-kit comes from .gpudeps/py
# (bench/gpu_single/fetch_deepmd.sh; the node has torch). Results in $OUT/water.tgz and
# $OUT/protein.tgz, each with input.json (the one trained), lcurve.out, train.log, test.log, the .dp.
# Usage, from the repository root on the node:
#   [CONTINUE=1] [MODELS="water protein"] bash examples/train_on_gpu.sh [BUDGET_S]
# MODELS names the models to train (default both; one alone has the whole GPU).
# TF32=1 lets PyTorch run the fp32 models' matrix products on the TF32 tensor cores
# (TORCH_ALLOW_TF32_CUBLAS_OVERRIDE; training only: the trained weights stay fp32, and halomd
# evaluates them as usual), for more steps in the same budget.
# CONTINUE=1 starts each model from the committed one (examples/water/water_trained.dp,
# examples/protein/protein_dpa1.dp; DeePMD-kit's --init-frz-model) with its learning rate
# restarting at START_LR (default 2e-4), so that a training goes on over several calls.
# The device run's carry limit (64 MiB) holds the tracked files and .gpudeps/py only without
# the large test models: `bash bench/gpu_single/models_aside.sh out` before the call, `back`
# after (training does not read them).
set -uo pipefail
BUDGET=${1:-480}
OUT=$(mkdir -p "${OUT:-out}" && cd "${OUT:-out}" && pwd)
R=$PWD
W=${WORK:-/tmp/halomd_train}
mkdir -p "$W/bin"
export PYTHONPATH=$R/.gpudeps/py${PYTHONPATH:+:$PYTHONPATH}
export TF_CPP_MIN_LOG_LEVEL=3
[ "${TF32:-0}" = 1 ] && export TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1
printf '#!/bin/sh\nexec python3 -c "import sys; from deepmd.main import main; sys.argv[0]=\\"dp\\"; sys.exit(main())" "$@"\n' > "$W/bin/dp"
chmod +x "$W/bin/dp"
export PATH=$W/bin:$PATH
python3 python/halomd/split_deepmd_data.py examples/data/water_192 --valid 20 \
    --train-out "$W/data/water_192_train" --valid-out "$W/data/water_192_valid" > /dev/null
python3 python/halomd/split_deepmd_data.py examples/data/protein_fragments --valid 1 \
    --train-out "$W/data/protein_train" --valid-out "$W/data/protein_valid" > /dev/null
# the other training sets as they are (examples/data/README.md)
cp -r examples/data/water_192_hot examples/data/water_192_relabel examples/data/protein_fragments_hot \
    examples/data/protein_fragments_relabel \
    "$W/data/"

# train_one NAME INPUT VALID_DATA MODEL_NAME PROBE_STEPS COMMITTED_MODEL: timed training
# (hard-stopped 60 s after the budget; the last checkpoint is frozen either way), freeze, test,
# convert, and $OUT/NAME.tgz
train_one() {
  local d=$W/$1 init=()
  mkdir -p "$d" && cp "$R/$2" "$d/input.json" && cd "$d" || return 1
  if [ "${CONTINUE:-0}" = 1 ]; then
    dp convert-backend "$R/$6" init.pth > init.log 2>&1 || { tail -5 init.log; return 1; }
    init=(--init-frz-model init.pth --start-lr "${START_LR:-2e-4}")
  fi
  timeout $((BUDGET + 60)) python3 "$R/python/halomd/train_timed.py" input.json --budget-s "$BUDGET" \
    --probe-steps "$5" "${init[@]}" > timed.json 2> timed.err ||
    { echo "$1: train_timed exit $?"; tail -3 timed.err; }
  cd timed || return 1
  dp --pt freeze -o "$4.pth" > freeze.log 2>&1 || { tail -5 freeze.log; return 1; }
  dp --pt test -m "$4.pth" -s "$3" > test.log 2>&1
  dp convert-backend "$4.pth" "$4.dp" > convert.log 2>&1 || tail -5 convert.log
  echo "$1: $(cat ../timed.json)"
  grep -E "Energy RMSE/Natoms|Force  RMSE" test.log | tail -2
  cd "$W" && tar czf "$OUT/$1.tgz" --ignore-failed-read $1/timed.json $1/probe.log \
    $1/timed/{input.json,lcurve.out,train.log,test.log,$4.dp} 2> /dev/null
}
for name in ${MODELS:-water protein}; do
  case $name in
    water) train_one water examples/water/input_gpu.json "$W/data/water_192_valid" water_trained \
             300 examples/water/water_trained.dp & ;;
    protein) train_one protein examples/protein/input_gpu.json "$W/data/protein_valid" \
               protein_dpa1 100 examples/protein/protein_dpa1.dp & ;;
    *) echo "MODELS: unknown model '$name' (water, protein)" >&2; exit 64 ;;
  esac
done
wait
ls -la "$OUT"/*.tgz
