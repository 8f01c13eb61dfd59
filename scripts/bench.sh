#!/usr/bin/env bash
# Benchmarks mount.s3rig against squashfuse, squashfuse_ll and fuse-zip serving the same
# tree, on a generated t2fs file. Prints one table; nothing here is a pass/fail test.
#
#   scripts/bench.sh [MODELS [VERTS [LEAF_MB]]]     (defaults: 3600 45 64 ≈ 88 MB, ~220k nodes)
#
# Columns: mount time, RSS after mount, `find` and `find -ls` (best of 2, each on a fresh
# mount with the caches dropped), RSS after the walk, then the LEAF_MB leaf read through the
# mount (leaf_s: best of 5, the page cache dropped and the source file warmed before each;
# again_s: best of the reads right after those) and the same bytes read from the warm file
# (best of 5). All leaf reads are dd bs=128K (what cat uses), timed by dd itself.
# The others serve the tree s3rig shows at /root, so s3rig is walked at MNT/root (its
# other views, /models and /info, are extra content the copies do not have).
# Then codec throughput. Needs root (mounts) and installs squashfs-tools, squashfuse,
# fuse-zip and zip from Debian when they are missing.
set -eu
cd "$(dirname "$0")/.."
models=${1:-3600}
verts=${2:-45}
leaf_mb=${3:-64}

need=""
for p in squashfs-tools:mksquashfs squashfuse:squashfuse fuse-zip:fuse-zip zip:zip bc:bc; do
    command -v "${p#*:}" >/dev/null || need="$need ${p%%:*}"
done
if [ -n "$need" ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need >/dev/null
fi

[ -f build-bench/build.ninja ] || meson setup build-bench --buildtype=release >/dev/null
ninja -C build-bench >/dev/null

work=$(mktemp -d /tmp/s3rig-bench-XXXXXX)
cleanup() {
    for m in "$work"/mnt-*; do fusermount3 -uz "$m" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT
file=$work/big.t2fs
build-bench/tests/s3rig-mkfixture t2fs-big "$file" "$models" "$verts" "$leaf_mb"
size=$(stat -c %s "$file")

now() { date +%s.%N; }
elapsed() { echo "$(now) - $1" | bc -l; }
rss_of() { awk '/VmRSS/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
drop_caches() { sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null || true; }

# mount_fs NAME MOUNTPOINT COMMAND...: mounts, prints "seconds pid"
mount_fs() {
    local mnt=$2
    shift 2
    mkdir -p "$mnt"
    local t0
    t0=$(now)
    "$@" >/dev/null 2>&1
    local dt
    dt=$(elapsed "$t0")
    local pid
    pid=$(pgrep -n -f -- "$mnt" || echo 0)
    echo "$dt $pid"
}

# dd_seconds ARGS...: runs dd with bs=128K (the size cat reads with) and prints the seconds
# dd itself reports for the copy (no process start-up in the figure)
dd_seconds() {
    dd of=/dev/null bs=128K "$@" 2>&1 >/dev/null | awk '/copied/ {for (i = 1; i < NF; i++) if ($(i + 1) == "s,") print $i}'
}

# min A B: the smaller number ("" counts as none)
min() {
    if [ -z "$1" ] || [ "$(echo "$2 < $1" | bc -l)" = 1 ]; then echo "$2"; else echo "$1"; fi
}

# best_leaf_read PATH: "COLD WARM", the best of 5 cold reads of PATH (page cache dropped,
# the source file warmed again, so each read goes through the server) and of the 5 reads
# right after (served from the mount's page cache where the server lets the kernel keep it)
best_leaf_read() {
    local cold="" warm=""
    for _ in 1 2 3 4 5; do
        drop_caches
        cat "$file" >/dev/null
        cold=$(min "$cold" "$(dd_seconds if="$1")")
        warm=$(min "$warm" "$(dd_seconds if="$1")")
    done
    echo "$cold $warm"
}

# best_raw_read: the best of 5 reads of the leaf's bytes straight from the warm file
best_raw_read() {
    local best=""
    cat "$file" >/dev/null
    for _ in 1 2 3 4 5; do
        best=$(min "$best" "$(dd_seconds if="$file" iflag=skip_bytes,count_bytes skip=$((size - leaf_mb * 1048576)) \
            count=$((leaf_mb * 1048576)))")
    done
    echo "$best"
}

# best_find NAME MOUNTPOINT WALK FIND-ARGS -- MOUNT-COMMAND...: the best of 2 runs of find,
# each on a fresh mount after dropping the caches; prints "SECONDS PID" (PID of the last mount,
# still mounted)
best_find() {
    local name=$1 mnt=$2 walk=$3 best="" out pid t0 i
    shift 3
    local args=()
    while [ "$1" != "--" ]; do args+=("$1"); shift; done
    shift
    for i in 1 2; do
        [ "$i" = 1 ] || { fusermount3 -u "$mnt"; sleep 0.3; }
        drop_caches
        out=$(mount_fs "$name" "$mnt" "$@")
        pid=${out#* }
        t0=$(now)
        find "$mnt$walk" "${args[@]}" >/dev/null
        best=$(min "$best" "$(elapsed "$t0")")
    done
    echo "$best $pid"
}

declare -A row
run_one() {
    local name=$1 leafpath=$2 walk=$3
    shift 3
    local mnt=$work/mnt-$name out t pid rss0 find_s findls_s rss1 cat_s cat2_s
    drop_caches
    out=$(mount_fs "$name" "$mnt" "$@")
    t=${out% *}
    pid=${out#* }
    rss0=$(rss_of "$pid")
    fusermount3 -u "$mnt"
    sleep 0.3
    out=$(best_find "$name" "$mnt" "$walk" -- "$@")
    find_s=${out% *}
    fusermount3 -u "$mnt"
    sleep 0.3
    out=$(best_find "$name" "$mnt" "$walk" -ls -- "$@")
    findls_s=${out% *}
    pid=${out#* }
    rss1=$(rss_of "$pid")
    read -r cat_s cat2_s <<<"$(best_leaf_read "$mnt/$leafpath")"
    fusermount3 -u "$mnt"
    sleep 0.3
    row[$name]=$(printf "%-14s %8.3f %8d %8.2f %9.2f %8d %8.3f %8.3f" "$name" "$t" "$rss0" "$find_s" "$findls_s" "$rss1" \
        "$cat_s" "$cat2_s")
}

echo "file: $size bytes, $models models, $verts vertices per mesh, a ${leaf_mb} MiB leaf"
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -r)"

# the same tree as real files, for the others
build-bench/s3rig extract "$file" "$work/tree" /root 2>/dev/null
nodes=$(find "$work/tree" | wc -l)
mksquashfs "$work/tree" "$work/tree.sqfs" -noappend -quiet -no-progress >/dev/null
(cd "$work/tree" && zip -qr -0 "$work/tree.zip" .)
echo "tree: $nodes nodes below /root"
echo

run_one s3rig "root/1.bin" /root build-bench/mount.s3rig "$file" "$work/mnt-s3rig"
run_one squashfuse_ll "1.bin" "" squashfuse_ll "$work/tree.sqfs" "$work/mnt-squashfuse_ll"
run_one squashfuse "1.bin" "" squashfuse "$work/tree.sqfs" "$work/mnt-squashfuse"
run_one fuse-zip "1.bin" "" fuse-zip -r "$work/tree.zip" "$work/mnt-fuse-zip"

raw_s=$(best_raw_read)

printf "%-14s %8s %8s %8s %9s %8s %8s %8s\n" "server" "mount_s" "rss0_kB" "find_s" "findls_s" "rss1_kB" "leaf_s" \
    "again_s"
for n in s3rig squashfuse_ll squashfuse fuse-zip; do echo "${row[$n]}"; done
printf "%-14s %8s %8s %8s %9s %8s %8.3f %8s\n" "raw file" "-" "-" "-" "-" "-" "$raw_s" "-"
echo
read -r _ _ _ sf sl _ sc sw <<<"${row[s3rig]}"
read -r _ _ _ qf ql _ _ <<<"${row[squashfuse_ll]}"
echo "ratios: find s3rig/squashfuse_ll $(echo "$sf / $qf" | bc -l | cut -c1-5)," \
     "find -ls $(echo "$sl / $ql" | bc -l | cut -c1-5)," \
     "leaf read speed vs raw file $(echo "$raw_s / $sc" | bc -l | cut -c1-5) (first read)," \
     "$(echo "$raw_s / $sw" | bc -l | cut -c1-5) (read again)"
echo
echo "mount time and memory against file size (s3rig):"
for m in 1000 4000 16000 40000; do
    f=$work/scale.t2fs
    build-bench/tests/s3rig-mkfixture t2fs-big "$f" "$m" "$verts" 16
    out=$(mount_fs scale "$work/mnt-scale" build-bench/mount.s3rig "$f" "$work/mnt-scale")
    printf "  %10d bytes, %6d models: mount %.3f s, RSS %d kB\n" "$(stat -c %s "$f")" "$m" "${out% *}" \
        "$(rss_of "${out#* }")"
    fusermount3 -u "$work/mnt-scale"
    sleep 0.2
done
echo
build-bench/tests/bench_codecs ../shared/vectors 2>/dev/null || echo "codec throughput: bench_codecs not available"
