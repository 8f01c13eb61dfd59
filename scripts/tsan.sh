#!/usr/bin/env bash
# An optional ThreadSanitizer run (not part of scripts/test.sh: slow, and it needs a
# machine where TSan can map its shadow memory). Builds build-tsan with
# -Db_sanitize=thread and runs the tests in which requests run in parallel: the tree,
# the in-process parallel readers (gr2_bitknit2, gr2anim), nested views, and the mount tests,
# which mount with -o spin=0 (libfuse's multi-threaded loop) and read from 16 threads.
# Every report, from a test program or from a mount.s3rig daemon, goes to a log file in
# a temporary directory; any report fails the run, and the reports are printed.
#
#   scripts/tsan.sh [TEST...]     (default: tree gr2_bitknit2 gr2anim nested mount pkg_mount)
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

logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
export TSAN_OPTIONS="log_path=$logs/tsan second_deadlock_stack=1 ${TSAN_OPTIONS:-}"
[ $# -gt 0 ] || set -- tree gr2_bitknit2 gr2anim nested mount pkg_mount
meson test -C "$dir" --print-errorlogs --no-rebuild "$@"
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
