#!/bin/sh
# A run killed while the model probe waits must leave no child stuck in HDF5 behind (Linux: the
# child asks for SIGKILL when its parent dies). Usage: probe_orphan.sh HALOMD MODEL_THAT_HANGS
halomd=$1 model=$2
HALOMD_MODEL_PROBE_SECONDS=60 "$halomd" info -m "$model" &
p=$!
sleep 2
c=
for f in /proc/[0-9]*/stat; do # the child: the process whose parent is $p
    set -- $(cat "$f" 2>/dev/null)
    [ "${4:-}" = "$p" ] && c=$1 && break
done
[ -n "$c" ] || { echo "no probe child of $p"; kill -9 "$p"; exit 1; }
kill -9 "$p"
sleep 1
s=$(cut -d' ' -f3 "/proc/$c/stat" 2>/dev/null)
if [ -n "$s" ] && [ "$s" != Z ]; then
    echo "probe child $c outlived its parent (state $s)"
    kill -9 "$c"
    exit 1
fi
echo "probe child $c ended with its parent"
