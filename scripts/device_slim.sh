#!/bin/bash
# Keeps what a GPU call does not need off the device tool's transfer (its limit is 64 MiB of
# tracked and untracked-not-ignored files): `scripts/device_slim.sh on PATH...` takes the paths
# out of git's index and ignores them locally (.git/info/exclude, listed in
# .git/device_slim.list), `scripts/device_slim.sh off` puts everything back. Nothing is
# deleted; a commit made in between would drop the paths, so `on` also installs a pre-commit
# hook that refuses to commit while they are out (call `off` right after the call).
set -euo pipefail
cd "$(dirname "$0")/.."
ex=.git/info/exclude list=.git/device_slim.list
case ${1:-} in
  on)
    shift
    hook=.git/hooks/pre-commit
    mkdir -p .git/hooks
    if [ ! -f "$hook" ]; then
      printf '#!/bin/sh\n[ -f .git/device_slim.list ] || exit 0\necho "device_slim is on (paths out of the index): scripts/device_slim.sh off first" >&2\nexit 1\n' > "$hook"
      chmod +x "$hook"
    fi
    for p in "$@"; do
      git rm -r -q --cached -- "$p"
      echo "/$p" >> "$ex"
      echo "/$p" >> "$list"
    done
    ;;
  off)
    git reset -q
    if [ -f "$list" ]; then
      grep -vxF -f "$list" "$ex" > "$ex.new" || true
      mv "$ex.new" "$ex"
      rm -f "$list"
    fi
    ;;
  *) echo "usage: scripts/device_slim.sh on PATH... | off" >&2; exit 64 ;;
esac
