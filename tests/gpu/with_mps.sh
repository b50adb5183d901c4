#!/bin/sh
# with_mps.sh P COMMAND...: runs COMMAND (an mpirun of P ranks sharing this machine's GPU) under
# an MPS server of its own (private pipe and log folders, stopped afterwards), each rank limited
# to 100/P percent of the GPU's threads: what NVSHMEM needs for several PEs on one GPU (full
# multi-process support; docs/running.md). Without nvidia-cuda-mps-control: exit 77 (skipped).
p=$1
shift
command -v nvidia-cuda-mps-control >/dev/null 2>&1 || { echo "skipped: no MPS"; exit 77; }
dir=$(mktemp -d /tmp/halomd-mps.XXXXXX)
mkdir -p "$dir/pipe" "$dir/log"
export CUDA_MPS_PIPE_DIRECTORY="$dir/pipe" CUDA_MPS_LOG_DIRECTORY="$dir/log"
export CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$((100 / p))
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0
nvidia-cuda-mps-control -d || { echo "skipped: MPS did not start"; rm -rf "$dir"; exit 77; }
"$@"
rc=$?
echo quit | nvidia-cuda-mps-control
sleep 1
rm -rf "$dir"
exit $rc
