#!/usr/bin/env bash
# Builds and runs every test twice: the default build (warnings are errors) and the
# same suite under AddressSanitizer + UndefinedBehaviorSanitizer (the mount tests then
# run a sanitized daemon, and fail on any report it writes); then the tests where
# requests run in parallel under ThreadSanitizer (scripts/tsan.sh; one skipped test
# where TSan cannot run on the machine). Ends with one line
# "N passed, N failed, N skipped", counted from each test program's own cmocka summary.
# Set S3RIG_NO_MOUNT_TESTS=1 to skip the mount tests explicitly (they need root and
# /dev/fuse; each is then reported as skipped). scripts/check_includes.sh counts as one
# test. Each libFuzzer target also runs for S3RIG_FUZZ_SECONDS
# seconds (default: 30 under CI, 0 otherwise); a target counts as one test.
# The real test vectors are read from S3RIG_VECTORS (default: ../shared/vectors beside the
# project); the tests that need them report themselves skipped when it is absent.
#
#   scripts/test.sh                 everything above
#   scripts/test.sh --plain-only    the default build's tests only (no sanitizer build,
#                                   no dependency check, no fuzzing)
set -u
case "${S3RIG_VECTORS:-/}" in /*) ;; *) export S3RIG_VECTORS="$PWD/$S3RIG_VECTORS" ;; esac # relative to the caller
cd "$(dirname "$0")/.."
plain_only=false
case "${1:-}" in
"") ;;
--plain-only) plain_only=true ;;
*) echo "usage: scripts/test.sh [--plain-only]" >&2; exit 1 ;;
esac

passed=0
failed=0
skipped=0

# Adds one build's results to the totals, from each test program's own cmocka summary
# ("Running N test(s)", "[  PASSED  ] N", "[  SKIPPED ] N"): what ran and neither passed
# nor was skipped failed (cmocka's FAILED line leaves out tests whose setup erred), and a
# program that exited non-zero with no failure counted (a crash before or after cmocka's
# summary, a timeout) counts as one failure.
count_results() {
    local counts p f s
    counts=$(awk '
        function flush() {
            if (!inblock) return
            f = total - pass - skip
            if (f < 0) f = 0
            if (!ok && f == 0) f = 1
            P += pass; F += f; S += skip
        }
        /^=+ [0-9]+\/[0-9]+ =+$/ { flush(); inblock = 1; total = pass = skip = 0; ok = 0; next }
        /^result: +exit status 0$/ { ok = 1 }
        /^\[==========\] Running [0-9]+ test/ { total += $3 }
        /^\[  PASSED  \] [0-9]+ test/ { pass += $4 }
        /^\[  SKIPPED \] [0-9]+ test/ { skip += $4 }
        END { flush(); print P + 0, F + 0, S + 0 }
    ' "$1/meson-logs/testlog.txt")
    read -r p f s <<<"$counts"
    passed=$((passed + p))
    failed=$((failed + f))
    skipped=$((skipped + s))
}

# Every failed check's lines from cmocka (which test, what, where), gathered: meson shows
# only a long log's last 100 lines, where a sanitizer's leak report after a failed
# assertion can hide the assertion itself.
print_failures() {
    local lines
    lines=$(grep -E '^\[ +(ERROR|FAILED|LINE) +\]|sanitizer report from' "$1/meson-logs/testlog.txt" | head -60)
    [ -z "$lines" ] || printf '== failed checks in %s:\n%s\n' "$1" "$lines"
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
    print_failures "$dir"
    count_results "$dir"
}

run_build build
if $plain_only; then
    echo "$passed passed, $failed failed, $skipped skipped"
    [ "$failed" -eq 0 ]
    exit
fi
run_build build-san -Db_sanitize=address,undefined -Db_lundef=false \
    -Dc_args=-fno-sanitize-recover=all -Dc_link_args=-fno-sanitize-recover=all

# ThreadSanitizer over the tests where requests run in parallel (scripts/tsan.sh),
# counted from the cmocka summaries like the builds above, plus one failure when a report
# was written although every test passed; where TSan cannot map its shadow memory on
# this kernel, one skipped test.
echo "== tests: build-tsan (ThreadSanitizer)"
rm -f build-tsan/meson-logs/testlog.txt # no stale counts when the build fails
scripts/tsan.sh
rc=$?
if [ $rc -eq 77 ]; then
    skipped=$((skipped + 1))
elif [ -f build-tsan/meson-logs/testlog.txt ]; then
    before=$failed
    count_results build-tsan
    [ $rc -eq 0 ] || [ $failed -gt "$before" ] || failed=$((failed + 1))
else
    failed=$((failed + 1))
fi

# The dependency graph of src/ (scripts/check_includes.sh, which first checks itself), one
# counted test: no cycle, no upward edge.
echo "== dependency graph"
if scripts/check_includes.sh --self-test && scripts/check_includes.sh build; then
    passed=$((passed + 1))
else
    failed=$((failed + 1))
fi

fuzz_seconds=${S3RIG_FUZZ_SECONDS:-}
[ -n "$fuzz_seconds" ] || { [ "${CI:-}" = true ] && fuzz_seconds=30 || fuzz_seconds=0; }
if [ "$fuzz_seconds" -gt 0 ]; then
    for t in tree $(scripts/formats.sh codes) rnc oodle1 oodle0 refpack bitknit2 modfolder folder; do
        if scripts/fuzz.sh "$t" "$fuzz_seconds"; then
            passed=$((passed + 1))
        else
            failed=$((failed + 1))
        fi
    done
fi

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
