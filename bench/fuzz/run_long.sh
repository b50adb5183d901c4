#!/bin/sh
# Longer fuzzing runs of every reader harness (tests/fuzz), one after another, recorded as JSON.
# Usage: [RUNS=N] bench/fuzz/run_long.sh BUILD_DIR SECONDS_EACH OUT_JSON [TARGETS...]
# With RUNS, a harness stops after N executions or SECONDS_EACH, whichever comes first.
# Builds the harnesses (make -C tests/fuzz), runs each with run_fuzz.sh for SECONDS_EACH, and
# writes per target: executions, executions per second, corpus growth, peak RSS and findings
# (the reproducers stay under BUILD_DIR/fuzz/long/<target>). The model harness runs with
# HALOMD_MODEL_PROBE=0 and -fork=1 -ignore_crashes=1, so that the crashes inside HDF5 that the
# probe absorbs are counted and halomd's own faults would still be found, with FORK=N worker
# processes (default 1) and ASan's quarantine at 16 MiB instead of 256: with the default every
# model load's large buffers land on fresh pages (425 executions/s on one core, 700 with 16 MiB;
# a use after free of the last 16 MiB freed is still caught).
set -e
build=$1; seconds=$2; json=$3; shift 3
targets=${*:-gro pdb xyz lammps_data mdp checkpoint model_dp top}
here=$(cd "$(dirname "$0")/../.." && pwd)
out=$(cd "$build" && pwd)/fuzz
make -s -C "$here/tests/fuzz" OUT="$out" -j2 >/dev/null
commit=$(git -C "$here" rev-parse --short HEAD)
printf '{\n  "what": "libFuzzer runs of the reader harnesses (tests/fuzz), ASan+UBSan, clang %s",\n' \
    "$(clang --version | head -1 | sed 's/.*version //')" > "$json"
printf '  "commit": "%s",\n  "date": "%s",\n  "machine": "build machine, 2 cores, one core per run (model_dp: model_dp_workers)",\n' \
    "$commit" "$(date -u +%Y-%m-%d)" >> "$json"
printf '  "seconds_each": %s,\n  "runs_each": %s,\n  "model_dp_workers": %s,\n  "targets": {\n' \
    "$seconds" "${RUNS:-null}" "${FORK:-1}" >> "$json"
caller_asan=${ASAN_OPTIONS:-} # run_fuzz.sh's defaults when unset
first=1
for t in $targets; do
    work=$out/long/$t
    extra=${RUNS:+-runs=$RUNS}
    if [ "$t" = model_dp ]; then
        extra="$extra -fork=${FORK:-1} -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1"
        export HALOMD_MODEL_PROBE=0
        export ASAN_OPTIONS="${caller_asan:-detect_leaks=1:abort_on_error=0}:quarantine_size_mb=16"
    else
        unset HALOMD_MODEL_PROBE ASAN_OPTIONS
        [ -z "$caller_asan" ] || export ASAN_OPTIONS="$caller_asan"
    fi
    log=$out/long_$t.log
    "$here/tests/fuzz/run_fuzz.sh" "$t" "$out" "$seconds" "$work" $extra > "$log" 2>&1 || true
    execs=$(grep -a 'stat::number_of_executed_units' "$log" | tail -1 | awk '{print $2}')
    if [ -z "$execs" ]; then  # fork mode prints its own summary lines
        execs=$(grep -a -o '#[0-9]*' "$log" | tail -1 | tr -d '#')
    fi
    rate=$(grep -a 'stat::average_exec_per_sec' "$log" | tail -1 | awk '{print $2}')
    rss=$(grep -a 'stat::peak_rss_mb' "$log" | tail -1 | awk '{print $2}')
    corpus=$(ls "$work/corpus" | wc -l)
    crashes=$(ls "$work" | grep -c -E '^(crash|leak|oom|timeout|slow-unit)-' || true)
    hdf5=$(grep -a -c 'in H5[A-Z]' "$log" || true)
    [ $first -eq 1 ] || printf ',\n' >> "$json"
    first=0
    printf '    "%s": {"executions": %s, "exec_per_s": %s, "peak_rss_mb": %s, "corpus_files": %s, "findings": %s, "stack_lines_in_hdf5": %s}' \
        "$t" "${execs:-0}" "${rate:-null}" "${rss:-null}" "$corpus" "$crashes" "$hdf5" >> "$json"
done
printf '\n  }\n}\n' >> "$json"
cat "$json"
