#!/bin/bash
# Makes .gpudeps/gmx.tar.xz: Debian's GROMACS 2022 (`gmx`, single precision, thread-MPI, no
# CUDA) with the shared libraries it needs beyond glibc and the C/C++ runtime, and the topology
# files the benchmark cases include, for bench/classical/run.sh on the GPU node (Ubuntu 24.04,
# no network). Run on the build machine (Debian, apt reachable), from the repository root:
#   bash bench/classical/fetch_gromacs.sh
# Layout inside the tarball (unpacked by run.sh into .gpudeps/gmx/):
#   bin/gmx, lib/*.so* (LD_LIBRARY_PATH), top/amber99sb-ildn.ff/ (GMXLIB)
# No package list of the node is known, so every library that `ldd gmx` resolves is bundled
# except glibc's (libc, libm, ld-linux) and the compiler runtime every Ubuntu has (libstdc++,
# libgcc_s, libgomp); checked: nothing is "not found" with the bundle, and the tarball is
# below 15 MB.
set -euo pipefail
ROOT=$PWD
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
PKGS="gromacs gromacs-data libgromacs7 libfftw3-single3 libmuparser2v5 libhwloc15 libblas3
      liblapack3 libgfortran5 libquadmath0 libx11-6 libxcb1 libxau6 libxdmcp6 libbsd0 libmd0
      libudev1 zlib1g"
cd "$WORK"
apt-get download $PKGS > download.log 2>&1 || { cat download.log; exit 1; }
mkdir -p x stage/bin stage/lib stage/top
for d in *.deb; do dpkg-deb -x "$d" x; done
cp x/usr/bin/gmx stage/bin/
LIBDIRS="x/usr/lib/x86_64-linux-gnu x/usr/lib/x86_64-linux-gnu/blas x/usr/lib/x86_64-linux-gnu/lapack
         x/lib/x86_64-linux-gnu"
for d in $LIBDIRS; do [ -d "$d" ] && cp -a "$d"/*.so* stage/lib/ 2>/dev/null || true; done
# keep what gmx loads (the resolved names and their targets), drop the rest
LD_LIBRARY_PATH=$WORK/stage/lib ldd stage/bin/gmx > ldd.txt
if grep -q "not found" ldd.txt; then
  cat ldd.txt
  echo "fetch_gromacs: libraries missing from the bundle"
  exit 1
fi
keep=$(awk '/=>/ {print $1}' ldd.txt | grep -v -E '^(libc|libm|libstdc\+\+|libgcc_s|libgomp)\.so')
mkdir -p stage/keep
for n in $keep; do
  [ -e "stage/lib/$n" ] && cp -L "stage/lib/$n" stage/keep/
done
rm -rf stage/lib && mv stage/keep stage/lib
strip --strip-unneeded stage/bin/gmx stage/lib/*.so* 2>/dev/null || true
LD_LIBRARY_PATH=$WORK/stage/lib ldd stage/bin/gmx > ldd_final.txt
if grep -q "not found" ldd_final.txt; then
  cat ldd_final.txt
  exit 1
fi
# the topology files the cases include (amber99sb-ildn.ff), and the library's own data files
# grompp reads whatever the topology (residuetypes.dat and the other top-level .dat files)
cp -a x/usr/share/gromacs/top/amber99sb-ildn.ff stage/top/
cp -a x/usr/share/gromacs/top/*.dat stage/top/
rm -f stage/top/amber99sb-ildn.ff/*.rtp stage/top/amber99sb-ildn.ff/*.hdb \
  stage/top/amber99sb-ildn.ff/*.arn stage/top/amber99sb-ildn.ff/*.r2b \
  stage/top/amber99sb-ildn.ff/*.tdb stage/top/amber99sb-ildn.ff/*.vsd
dpkg-deb -f gromacs_*.deb Version > stage/VERSION
mkdir -p "$ROOT/.gpudeps"
tar -C stage -cJf "$ROOT/.gpudeps/gmx.tar.xz" .
size=$(stat -c %s "$ROOT/.gpudeps/gmx.tar.xz")
echo "bundled: $(ls stage/lib | tr '\n' ' ')"
echo "from the node's system: $(awk '/=>/ && $3 !~ /stage/ {print $1}' ldd_final.txt | tr '\n' ' ')"
echo ".gpudeps/gmx.tar.xz: $size bytes (GROMACS $(cat stage/VERSION))"
[ "$size" -lt 15000000 ] || { echo "fetch_gromacs: the bundle is over 15 MB"; exit 1; }
