#!/bin/sh
# Peak memory and time of writing and reading one checkpoint of N synthetic atoms (default 25
# million, 1.1 GiB of positions and velocities), beyond the arrays themselves, as JSON on stdout.
# Usage: bench/production/checkpoint_memory.sh BUILD_DIR [NATOMS] [SCRATCH_DIR]
# Any build with tests/cpt_tool: the CPU build here, the GPU build on a node (build-gpu, at
# 25,165,824 atoms, the largest GPU run: bench/production/node_npt.sh PARTS=mem).
set -e
build=$1; n=${2:-25000000}; dir=${3:-$build}
"$build/tests/cpt_tool" mem "$dir/checkpoint_memory.cpt" "$n"
rm -f "$dir/checkpoint_memory.cpt" "$dir/checkpoint_memory_prev.cpt"
