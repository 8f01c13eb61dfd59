#!/usr/bin/env bash
# The ThreadSanitizer run (scripts/test.sh runs it too). Builds build-tsan with
# -Db_sanitize=thread and runs the tests in which requests run in parallel: the tree,
# the in-process parallel readers (gr2_bitknit2, gr2anim), nested views (threads listing fresh
# rig/ directories of a package while others read), a folder's scan (its pool of
# workers reading packages), and the mount tests, which mount
# with -o spin=0 (libfuse's multi-threaded loop): 16 readers at once, and a package's
# rig/ directories listed by threads while others read. Every report, from a test
# program or from a mount.s3rig daemon, goes to a log file in a temporary directory; any
# report fails the run, and the reports are printed.
#
#   scripts/tsan.sh [TEST...]     (default: tree gr2_bitknit2 gr2anim nested cache t1model folder mount pkg_mount folder_mount folder_watch rw_mount rw_fresh)
#
# Exit status: 0 no report and the tests passed; 1 a report, a failed test or a failed
# build; 77 ThreadSanitizer cannot run on this machine (it could not map its shadow
# memory: some kernels' address-space layouts), which scripts/test.sh counts as skipped.
set -u
cd "$(dirname "$0")/.."

dir=build-tsan
if [ ! -f "$dir/build.ninja" ]; then
    meson setup "$dir" -Db_sanitize=thread -Db_lundef=false >/dev/null || { echo "tsan: meson setup failed"; exit 1; }
fi
if ! ninja -C "$dir" >"$dir/s3rig-build.log" 2>&1; then
    cat "$dir/s3rig-build.log"
    echo "tsan: build failed"
    exit 1
fi

# A TSan program that cannot map its shadow memory dies at start with a FATAL line.
if ! probe=$("$dir/s3rig" --version 2>&1); then
    if grep -q "ThreadSanitizer" <<<"$probe"; then
        echo "tsan: ThreadSanitizer cannot run on this machine:"
        echo "$probe" | head -3
        exit 77
    fi
    echo "tsan: $dir/s3rig --version failed: $probe"
    exit 1
fi

logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
export TSAN_OPTIONS="log_path=$logs/tsan second_deadlock_stack=1 ${TSAN_OPTIONS:-}"
[ $# -gt 0 ] || set -- tree gr2_bitknit2 gr2anim nested cache t1model folder mount pkg_mount folder_mount folder_watch rw_mount rw_fresh
meson test -C "$dir" --print-errorlogs --no-rebuild --timeout-multiplier 5 "$@" # TSan runs 5-15 times slower
rc=$?

reports=$(find "$logs" -type f | sort)
if [ -n "$reports" ]; then
    for f in $reports; do
        echo "== ThreadSanitizer report: $f"
        cat "$f"
    done
    echo "tsan: $(echo "$reports" | wc -l) report file(s)"
    exit 1
fi
[ $rc -eq 0 ] || { echo "tsan: tests failed"; exit 1; }
echo "tsan: no report"
