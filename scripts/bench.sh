#!/usr/bin/env bash
# Benchmarks mount.s3rig against squashfuse, squashfuse_ll and fuse-zip serving the same
# tree, on a generated t2fs file. Prints one table; nothing here is a pass/fail test.
#
#   scripts/bench.sh [MODELS [VERTS [LEAF_MB]]]     (defaults: 3600 45 64 ≈ 88 MB, ~220k nodes)
#
# Columns: mount time, RSS after mount, `find` and `find -ls` on a fresh mount, RSS after
# the walk, `cat` of the LEAF_MB leaf (best of 5, page cache dropped and the source file
# warmed before each) and the same bytes read from the warm file with dd bs=128K (the
# size cat reads with; best of 5).
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

# best_leaf_read PATH: the best of 5 cold reads of PATH (page cache dropped, the source
# file warmed again, so each read goes through the server)
best_leaf_read() {
    local best="" t0 dt
    for _ in 1 2 3 4 5; do
        drop_caches
        cat "$file" >/dev/null
        t0=$(now)
        cat "$1" >/dev/null
        dt=$(elapsed "$t0")
        if [ -z "$best" ] || [ "$(echo "$dt < $best" | bc -l)" = 1 ]; then best=$dt; fi
    done
    echo "$best"
}

# best_raw_read: the best of 5 reads of the leaf's bytes straight from the warm file
best_raw_read() {
    local best="" t0 dt
    cat "$file" >/dev/null
    for _ in 1 2 3 4 5; do
        t0=$(now)
        dd if="$file" of=/dev/null bs=128K iflag=skip_bytes,count_bytes skip=$((size - leaf_mb * 1048576)) \
            count=$((leaf_mb * 1048576)) 2>/dev/null
        dt=$(elapsed "$t0")
        if [ -z "$best" ] || [ "$(echo "$dt < $best" | bc -l)" = 1 ]; then best=$dt; fi
    done
    echo "$best"
}

declare -A row
run_one() {
    local name=$1 leafpath=$2 walk=$3
    shift 3
    local mnt=$work/mnt-$name out t pid rss0 find_s findls_s rss1 cat_s
    drop_caches
    out=$(mount_fs "$name" "$mnt" "$@")
    t=${out% *}
    pid=${out#* }
    rss0=$(rss_of "$pid")
    local t0
    t0=$(now)
    find "$mnt$walk" >/dev/null
    find_s=$(elapsed "$t0")
    fusermount3 -u "$mnt"
    sleep 0.3
    out=$(mount_fs "$name" "$mnt" "$@")
    pid=${out#* }
    t0=$(now)
    find "$mnt$walk" -ls >/dev/null
    findls_s=$(elapsed "$t0")
    rss1=$(rss_of "$pid")
    cat_s=$(best_leaf_read "$mnt/$leafpath")
    fusermount3 -u "$mnt"
    sleep 0.3
    row[$name]=$(printf "%-14s %8.3f %8d %8.2f %9.2f %8d %8.3f" "$name" "$t" "$rss0" "$find_s" "$findls_s" "$rss1" "$cat_s")
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

printf "%-14s %8s %8s %8s %9s %8s %8s\n" "server" "mount_s" "rss0_kB" "find_s" "findls_s" "rss1_kB" "cat_s"
for n in s3rig squashfuse_ll squashfuse fuse-zip; do echo "${row[$n]}"; done
printf "%-14s %8s %8s %8s %9s %8s %8.3f\n" "raw file" "-" "-" "-" "-" "-" "$raw_s"
echo
read -r _ _ _ sf sl _ sc <<<"${row[s3rig]}"
read -r _ _ _ qf ql _ _ <<<"${row[squashfuse_ll]}"
echo "ratios: find s3rig/squashfuse_ll $(echo "$sf / $qf" | bc -l | cut -c1-5)," \
     "find -ls $(echo "$sl / $ql" | bc -l | cut -c1-5)," \
     "leaf read speed vs raw file $(echo "$raw_s / $sc" | bc -l | cut -c1-5)"
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
