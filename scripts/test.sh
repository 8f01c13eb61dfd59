#!/usr/bin/env bash
# Builds and runs every test twice: the default build (warnings are errors) and the
# same suite under AddressSanitizer + UndefinedBehaviorSanitizer (the mount tests then
# run a sanitized daemon, and fail on any report it writes). Ends with one line
# "N passed, N failed". Set S3RIG_NO_MOUNT_TESTS=1 to skip the mount tests explicitly
# (they need root and /dev/fuse). Each libFuzzer target also runs for S3RIG_FUZZ_SECONDS
# seconds (default: 30 under CI, 0 otherwise); a target counts as one test.
set -u
cd "$(dirname "$0")/.."

passed=0
failed=0

# Adds one build's cmocka results (and crashed test programs) to the totals.
count_results() {
    local log=$1/meson-logs/testlog.txt
    local ok fail crashed
    ok=$(grep -c '^\[       OK \]' "$log" || true)
    fail=$(grep -E '^\[  FAILED  \] [0-9]+ test' "$log" | awk '{s += $3} END {print s + 0}')
    # a test program that died before cmocka's summary counts as one failure
    crashed=$(grep -cE '^ *[0-9]+/[0-9]+ .*(FAIL|TIMEOUT)' "$1/meson-logs/testlog.txt" || true)
    local summarised
    summarised=$(grep -cE '^\[  (PASSED|FAILED)  \] [0-9]+ test' "$log" || true)
    passed=$((passed + ok))
    failed=$((failed + fail))
    if [ "$crashed" -gt 0 ] && [ "$fail" -eq 0 ]; then
        failed=$((failed + crashed))
    fi
    : "$summarised"
}

run_build() {
    local dir=$1
    shift
    if [ ! -f "$dir/build.ninja" ]; then
        meson setup "$dir" "$@" >/dev/null || { echo "meson setup $dir failed"; failed=$((failed + 1)); return; }
    fi
    if ! ninja -C "$dir" >"$dir/s3rig-build.log" 2>&1; then
        cat "$dir/s3rig-build.log"
        echo "build $dir failed"
        failed=$((failed + 1))
        return
    fi
    echo "== tests: $dir"
    meson test -C "$dir" --print-errorlogs --no-rebuild || true
    count_results "$dir"
}

run_build build
run_build build-san -Db_sanitize=address,undefined -Db_lundef=false \
    -Dc_args=-fno-sanitize-recover=all -Dc_link_args=-fno-sanitize-recover=all

fuzz_seconds=${S3RIG_FUZZ_SECONDS:-}
[ -n "$fuzz_seconds" ] || { [ "${CI:-}" = true ] && fuzz_seconds=30 || fuzz_seconds=0; }
if [ "$fuzz_seconds" -gt 0 ]; then
    for t in tree rnc oodle1 bitknit2 gr2 rig clear_rig t2fs; do
        if scripts/fuzz.sh "$t" "$fuzz_seconds"; then
            passed=$((passed + 1))
        else
            failed=$((failed + 1))
        fi
    done
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
