#!/bin/bash
# Makes what the GPU tests need on a GPU node beyond the build's Debian packages (run on the build
# machine, from the repository root; the folders are git-ignored and travel with .gpudeps):
#   .gpudeps/python          ASE (python.api_gpu imports ase.io), from its PyPI wheel, without
#                            its tests and GUI: PYTHONPATH=$PWD/.gpudeps/python on the node
#   .gpudeps/gromacs/top     Debian's amber99sb-ildn.ff and the top-level .dat files (gpu.ff_run,
#                            gpu.ff_hybrid read examples/water/*.top): GMXLIB=$PWD/.gpudeps/gromacs/top
# About 7 MB. Needs pip and Debian's gromacs-data (apt-get install gromacs-data) here.
set -euo pipefail
cd "$(dirname "$0")/../.."
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
pip download --quiet --no-deps -d "$D" ase
rm -rf .gpudeps/python && mkdir -p .gpudeps/python
python3 -m zipfile -e "$D"/ase-*.whl .gpudeps/python
rm -rf .gpudeps/python/ase/test .gpudeps/python/ase/gui
TOP=/usr/share/gromacs/top
[ -d $TOP/amber99sb-ildn.ff ] || { echo "no $TOP/amber99sb-ildn.ff: apt-get install gromacs-data" >&2; exit 1; }
rm -rf .gpudeps/gromacs && mkdir -p .gpudeps/gromacs/top
cp -a $TOP/amber99sb-ildn.ff $TOP/*.dat .gpudeps/gromacs/top/
du -sh .gpudeps/python .gpudeps/gromacs
