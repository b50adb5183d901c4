#!/bin/bash
# Makes room for .gpudeps/py in a GPU call (the device run carries at most 64 MiB: the tracked
# files, about 61 MB, and .gpudeps/py, 15 MB, do not fit together). `out` moves the test models
# of more than 1 MB (tests/data/models/*.dp) to DIR, except those an example links to (such as
# examples/water/water.dp); `back` returns them. Run on the build machine, from the repository
# root: `out` before the call, `back` once the call has started (the tree travels at its start)
# or after it.
#   bash bench/gpu_single/models_aside.sh out|back [DIR]   (DIR default: /tmp/halomd_models_aside)
set -euo pipefail
dir=${2:-/tmp/halomd_models_aside}
case ${1:-} in
  out)
    mkdir -p "$dir"
    # the models an example links to stay: the examples need them on the node
    linked=$(find examples -type l -name '*.dp' -exec readlink -f {} \;)
    for f in $(find tests/data/models -maxdepth 1 -name '*.dp' -size +1M); do
      if ! grep -qxF "$(readlink -f "$f")" <<< "$linked"; then
        mv "$f" "$dir/"
        echo "aside: $f"
      fi
    done
    ;;
  back)
    for f in "$dir"/*.dp; do
      [ -e "$f" ] || continue
      mv "$f" tests/data/models/
      echo "back: tests/data/models/$(basename "$f")"
    done
    ;;
  *)
    echo "usage: bash bench/gpu_single/models_aside.sh out|back [DIR]" >&2
    exit 64
    ;;
esac
