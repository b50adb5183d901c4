#!/bin/bash
# Builds halomd on a GPU node (Ubuntu 24.04, CUDA 13, no jansson/cmocka/Random123 headers) with
# the Debian packages brought along in .gpudeps (docs: ../shared/docs/GPU_NODES.md recipe), into
# build-gpu/. Usage, from the repository root on the node: bash bench/gpu_single/node_build.sh
# JOBS: parallel compile jobs (all cores by default: `nproc --all`, since plain nproc obeys
# OMP_NUM_THREADS); HALOMD_MPI=OFF leaves MPI out (the node's Open MPI 4.1.6 is found by
# default, for the multi-rank tests and benchmarks).
# HALOMD_COMMIT names the build in its logs and perf records (`export HALOMD_COMMIT=$(git
# rev-parse --short HEAD)` written into the node's command on the build machine): the node's
# .git, where there is one, is a snapshot of another commit, so without it the build says
# "unknown". TARGET: the CMake targets to build, space-separated (e.g. "halomd" for benchmark
# calls, "halomd test_gpu_ff_twin" for the classical GPU tests too); all by default.
# CMAKE_EXTRA: more arguments for cmake's configure (a variant's -DCMAKE_CUDA_FLAGS=-D...).
set -euo pipefail
export HALOMD_COMMIT=${HALOMD_COMMIT:-unknown}
R=$PWD/.gpudeps
export CPATH=$R/usr/include:/usr/include/hdf5/serial
export LIBRARY_PATH=$R/usr/lib/x86_64-linux-gnu
export LD_LIBRARY_PATH=$R/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export PKG_CONFIG_PATH=$R/usr/lib/x86_64-linux-gnu/pkgconfig PKG_CONFIG_SYSROOT_DIR=$R
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DHALOMD_MPI=${HALOMD_MPI:-AUTO} -DHALOMD_NETCDF=OFF \
      -DHALOMD_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_PREFIX_PATH=$R/usr \
      -DPython3_EXECUTABLE="$(command -v python3)" ${CMAKE_EXTRA:-} > build-gpu.log
cmake --build build-gpu -j "${JOBS:-$(nproc --all)}" ${TARGET:+--target $TARGET} >> build-gpu.log 2>&1 || { tail -40 build-gpu.log; exit 1; }
echo "built: $(build-gpu/halomd -version | tr '\n' ' ')"
