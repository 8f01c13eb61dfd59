#!/usr/bin/env bash
# Benchmarks mount.s3rig against squashfuse, squashfuse_ll and fuse-zip serving the same
# tree, on a generated t2fs file. Prints one table; nothing here is a pass/fail test.
#
#   scripts/bench.sh [MODELS [VERTS [LEAF_MB]]]     (defaults: 3600 45 64 ≈ 88 MB, ~220k nodes)
#   scripts/bench.sh gr2 [PIXELS [VERTS [BONES]]]    Granny object trees only (defaults: 524288
#                                                    10000 200): node count, walk time and
#                                                    daemon RSS for a generated texture-like
#                                                    file, a remapped-strings file and the real
#                                                    files of $S3RIG_VECTORS/gr2
#   scripts/bench.sh package [N]                     packages only (default N = 10000 resources)
#   scripts/bench.sh commit [N]                      -o rw: one value committed in a package of N
#                                                    resources (default 75000: about 100 MB)
#                                                    against cp of it (target: at most 2x)
#   scripts/bench.sh cache                           the bounded cache (issue 25): an expanded item
#                                                    read through with a cache 4x and 8x smaller
#                                                    than it against a large cache, a 4,095-member
#                                                    type, and peak RSS over 15 sections of 12 MB
#                                                    under cache_mb=16
#   scripts/bench.sh bounds [KIND...]                bounded generated files (issue 32): peak
#                                                    daemon RSS over the crafted files (a String
#                                                    array over one string, a repeated-instance
#                                                    name map, a large mesh, 15 BitKnit2 sections
#                                                    of 12 MB) under cache_mb=16, 4 parallel
#                                                    readers, spin=0 (target: cache_mb + 64 MB);
#                                                    KIND: only those fixture kinds
#   scripts/bench.sh anim [TRACKS [SECONDS [KPS]]]   Granny animations only (defaults: 250 34 30): a
#                                                    generated animation of TRACKS degree-2 tracks,
#                                                    KPS knots a second; animation.glb,
#                                                    animation_linear.glb and one
#                                                    samples.csv made by s3rig and read through a
#                                                    mount (target: the .glb in under 1 s)
#   scripts/bench.sh geom [VERTS]                    a GEOM mesh (default 3150 vertices: about
#                                                    200 KB) bound to the clear RIG fixture and
#                                                    exported, in-process (tests/bench_geom.c);
#                                                    target: under 10 ms
#   scripts/bench.sh folder [NPKG [NRES]]            a Mods folder (issue 33; defaults 10000
#                                                    packages, 1000000 resources, a tenth shared,
#                                                    Resource.cfg, Override/): the floor (every
#                                                    header and index read by a minimal C loop,
#                                                    tests/bench_folder.c), then through a mount:
#                                                    mount time and RSS, the first listing of
#                                                    /conflicts (target <= 2x the floor; CPU
#                                                    seconds beside the wall times), stat of
#                                                    /info, one
#                                                    /keys/NAME lookup after it (target <= 1 ms),
#                                                    RSS per resource after it (target <= 100 B),
#                                                    and the time for one package added to the
#                                                    folder to show its key under /keys (watch
#                                                    on; target <= 2 s), then stat of
#                                                    conflicts.csv and of duplicates.csv and
#                                                    ls -l of the root (the daemon's CPU and
#                                                    RSS after each; target: RSS <= 100 B per
#                                                    resource + cache_mb)
#   scripts/bench.sh memory [MODELS [VERTS]]         memory per node only: the daemon's RSS
#                                                    growth over find -ls of the whole tree
#                                                    (every view), per node (target <= 100 B)
#
# Columns: mount time, RSS after mount, `find` and `find -ls` (best of 3 rounds in which the
# servers take turns, each walk on a fresh mount with the caches dropped), RSS after the
# walk, then the LEAF_MB leaf read through the
# mount (leaf_s: best of 5, the page cache dropped and the source file warmed before each;
# again_s: best of the reads right after those) and the same bytes read from the warm file
# (best of 5). All leaf reads are dd bs=128K (what cat uses), timed by dd itself.
# The others serve the tree s3rig shows at /root, so s3rig is walked at MNT/root (its
# other views, /models and /info, are extra content the copies do not have).
# Then codec throughput. Needs root (mounts) and installs squashfs-tools, squashfuse,
# fuse-zip and zip from Debian when they are missing.
set -eu
case "${S3RIG_VECTORS:-/}" in /*) ;; *) export S3RIG_VECTORS="$PWD/$S3RIG_VECTORS" ;; esac # relative to the caller
cd "$(dirname "$0")/.."
vec=${S3RIG_VECTORS:-../shared/vectors} # the real test vectors (as scripts/test.sh)

# need_bc: installs bc (the timings' arithmetic) from Debian when it is missing, for the
# benchmarks that need nothing else; the full run installs it with the other tools.
need_bc() {
    command -v bc >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bc >/dev/null; }
}

# Packages: mount time and RSS of generated N-resource packages (Sims 3: RefPack; Sims 4:
# zlib), the first listing of /resources, then the codecs. Target: under 0.1 s and a few MB.
bench_package() {
    local n=$1 work
    [ -f build-bench/build.ninja ] || meson setup build-bench --buildtype=release >/dev/null
    ninja -C build-bench >/dev/null
    work=$(mktemp -d /tmp/s3rig-bench-XXXXXX)
    mkdir -p "$work/mnt"
    for game in 3 4; do
        build-bench/tests/s3rig-mkfixture package-big "$work/p.package" "$n" "$game"
        local t0 t1 pid rss0 rss1 ls_s
        t0=$(date +%s.%N)
        build-bench/mount.s3rig "$work/p.package" "$work/mnt"
        t1=$(date +%s.%N)
        pid=$(pgrep -n -f -- "$work/mnt" || echo 0)
        rss0=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
        ls_s=$( { /usr/bin/time -f %e ls "$work/mnt/resources" >/dev/null; } 2>&1 )
        rss1=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
        printf "package (Sims %d, %d resources, %d bytes): mount %.3f s, RSS %d kB; ls /resources %s s, RSS %d kB\n" \
            "$game" "$n" "$(stat -c %s "$work/p.package")" "$(echo "$t1 - $t0" | bc -l)" "$rss0" "$ls_s" "$rss1"
        fusermount3 -u "$work/mnt"
        sleep 0.2
    done
    rm -rf "$work"
}
# Cache (issue 25), on fresh mounts with the page cache dropped, best of 3:
#  - an expanded item (a zlib package resource, a BitKnit2 Granny section) of 16 and 32 MiB
#    read with cat (lookup, listing and read: the listing expands it once to know it
#    expands, the read through an open handle once more when the cache cannot keep it),
#    with cache_mb a quarter and an eighth of it, and 4096; target: at most 3 times the
#    large cache's time, and twice the time for twice the bytes;
#  - ls of a root type of 4,095 UInt32 members all named Bone, and all named apart; target:
#    under 50 ms;
#  - a Granny file of 15 BitKnit2 sections of 12 MB (and the objects, one in each), walked
#    (find) and every file read (cat) with -o cache_mb=16: the daemon's peak RSS (VmHWM),
#    once by one reader and once by 4 readers at once under -o spin=0; target: within
#    cache_mb + 64 MB.
bench_cache() {
    [ -f build-bench/build.ninja ] || meson setup build-bench --buildtype=release >/dev/null
    ninja -C build-bench >/dev/null
    local work mnt
    work=$(mktemp -d /tmp/s3rig-bench-XXXXXX)
    mnt=$work/mnt
    mkdir -p "$mnt"
    # best_cat FILE OPTS PATH: the best of 3 times of cat MNT/PATH on a fresh mount
    best_cat() {
        local best="" t
        for _ in 1 2 3; do
            sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null || true
            build-bench/mount.s3rig -o "$2" "$1" "$mnt"
            t=$( { /usr/bin/time -f %e cat "$mnt/$3" >/dev/null; } 2>&1 )
            fusermount3 -u "$mnt"
            sleep 0.2
            if [ -z "$best" ] || [ "$(echo "$t < $best" | bc -l)" = 1 ]; then best=$t; fi
        done
        echo "$best"
    }
    echo "expanded item read through (cat on a fresh mount, best of 3; seconds):"
    printf "  %-22s %6s %10s %10s %10s %8s %8s\n" item MiB "cache/4" "cache/8" "cache=4096" "x(/4)" "x(/8)"
    local kind mb f path small smaller large
    for kind in zlib-resource bitknit2-section; do
        for mb in 16 32; do
            if [ $kind = zlib-resource ]; then
                f=$work/one.package
                build-bench/tests/s3rig-mkfixture package-one "$f" "$mb"
                path=$(build-bench/s3rig ls "$f" resources | head -1)/data.bin
                path=resources/$path
            else
                f=$work/one.gr2
                build-bench/tests/s3rig-mkfixture gr2-sections "$f" 2 "$mb"
                path=granny/sections/1/data.bin
            fi
            small=$(best_cat "$f" "cache_mb=$((mb / 4))" "$path")
            smaller=$(best_cat "$f" "cache_mb=$((mb / 8))" "$path")
            large=$(best_cat "$f" "cache_mb=4096" "$path")
            printf "  %-22s %6d %10.3f %10.3f %10.3f %8.2f %8.2f\n" "$kind" "$mb" "$small" "$smaller" "$large" \
                "$(echo "$small / $large" | bc -l)" "$(echo "$smaller / $large" | bc -l)"
        done
    done
    echo "a root type of 4,095 UInt32 members, best of 3 (seconds): ls of /granny/root on a fresh mount;" \
         "s3rig ls of it (the whole process: open, decode, list)"
    local names t best cli
    for names in same distinct; do
        f=$work/members.gr2
        build-bench/tests/s3rig-mkfixture gr2-members "$f" 4095 "$names"
        best="" cli=""
        for _ in 1 2 3; do
            build-bench/mount.s3rig "$f" "$mnt"
            t=$( { /usr/bin/time -f %e ls -f "$mnt/granny/root" >/dev/null; } 2>&1 )
            fusermount3 -u "$mnt"
            sleep 0.2
            if [ -z "$best" ] || [ "$(echo "$t < $best" | bc -l)" = 1 ]; then best=$t; fi
            t=$( { /usr/bin/time -f %e build-bench/s3rig ls "$f" granny/root >/dev/null; } 2>&1 )
            if [ -z "$cli" ] || [ "$(echo "$t < $cli" | bc -l)" = 1 ]; then cli=$t; fi
        done
        printf "  %-9s ls %6.3f   s3rig ls %6.3f\n" "$names" "$best" "$cli"
    done
    f=$work/sections.gr2
    build-bench/tests/s3rig-mkfixture gr2-sections "$f" 16 12
    sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null || true
    build-bench/mount.s3rig -o cache_mb=16 "$f" "$mnt"
    local pid nodes t0 walk_s
    pid=$(pgrep -n -f -- "$mnt" || echo 0)
    t0=$(date +%s.%N)
    nodes=$(find "$mnt" | wc -l)
    find "$mnt" -type f -exec cat {} + >/dev/null
    walk_s=$(echo "$(date +%s.%N) - $t0" | bc -l)
    printf "15 BitKnit2 sections of 12 MB (%d bytes stored, %d nodes), cache_mb=16: walked and read in %.2f s," \
        "$(stat -c %s "$f")" "$nodes" "$walk_s"
    awk '/VmHWM/ {printf " peak RSS %d kB", $2} /VmRSS/ {printf ", RSS now %d kB\n", $2}' "/proc/$pid/status"
    fusermount3 -u "$mnt"
    # the same file read by 4 readers at once under -o spin=0 (requests in parallel): the
    # bound is one for all of them, so the peak stays within cache_mb + 64 MB
    sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null || true
    build-bench/mount.s3rig -o cache_mb=16,spin=0 "$f" "$mnt"
    pid=$(pgrep -n -f -- "$mnt" || echo 0)
    t0=$(date +%s.%N)
    local r readers=()
    for r in 1 2 3 4; do
        find "$mnt" -type f -exec cat {} + >/dev/null 2>&1 &
        readers+=($!)
    done
    wait "${readers[@]}"
    walk_s=$(echo "$(date +%s.%N) - $t0" | bc -l)
    printf "the same, 4 readers at once (-o spin=0): read in %.2f s," "$walk_s"
    awk '/VmHWM/ {printf " peak RSS %d kB", $2} /VmRSS/ {printf ", RSS now %d kB\n", $2}' "/proc/$pid/status"
    fusermount3 -u "$mnt"
    rm -rf "$work"
}
# Bounded generated files (issue 32): the crafted files of tests/regress at full size,
# each mounted with -o cache_mb=16,spin=0 and walked by 4 parallel readers (find, then cat
# of every file): a String array over one string (a 65 MB value file from 80 KB), a name map
# repeating one instance, a Turok 2 mesh of 400,000 vertices (18 MB of vertices.txt), and
# the Granny file of 15 BitKnit2 sections of 12 MB. The daemon's peak RSS (VmHWM); target:
# within cache_mb + 64 MB. Arguments: only the kinds named (e.g. package-repeated-names).
bench_bounds() {
    [ -f build-bench/build.ninja ] || meson setup build-bench --buildtype=release >/dev/null
    ninja -C build-bench mount.s3rig s3rig tests/s3rig-mkfixture >/dev/null # only what it runs
    local work mnt f kind args pid t0 s
    work=$(mktemp -d /tmp/s3rig-bench-XXXXXX)
    mnt=$work/mnt
    mkdir -p "$mnt"
    local only=" $* " all
    all=("gr2-repeated-string 4000 16384" "package-repeated-names 20000 400000" "t2fs-big-mesh 400000"
         "gr2-sections 16 12")
    for kind in "${all[@]}"; do
        set -- $kind
        [ "$only" = "  " ] || [[ "$only" == *" $1 "* ]] || continue
        f=$work/crafted.$1
        build-bench/tests/s3rig-mkfixture "$1" "$f" "$2" ${3:+"$3"}
        sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null || true
        build-bench/mount.s3rig -o cache_mb=16,spin=0 "$f" "$mnt"
        pid=$(pgrep -n -f -- "$mnt" || echo 0)
        t0=$(date +%s.%N)
        for _ in 1 2 3 4; do
            ( find "$mnt" >/dev/null; find "$mnt" -type f -exec cat {} + >/dev/null ) &
        done
        wait
        s=$(echo "$(date +%s.%N) - $t0" | bc -l)
        printf "  %-38s %8d bytes: 4 readers %6.2f s," "$kind" "$(stat -c %s "$f")" "$s"
        awk '/VmHWM/ {printf " peak RSS %d kB", $2} /VmRSS/ {printf ", RSS now %d kB\n", $2}' "/proc/$pid/status"
        fusermount3 -u "$mnt"
        sleep 0.2
    done
    rm -rf "$work"
}
if [ "${1:-}" = bounds ]; then
    need_bc
    echo "crafted files, -o cache_mb=16,spin=0, 4 parallel readers (find, cat of every file):"
    shift
    bench_bounds "$@"
    exit 0
fi
if [ "${1:-}" = cache ]; then
    need_bc
    bench_cache
    exit 0
fi

# Animations: the time to make animation.glb of a long generated animation, in-process
# (s3rig cat) and through a fresh mount (cp), and to read one track's samples.csv.
bench_anim() {
    local tracks=$1 secs=$2 kps=$3 work best t0 dt
    [ -f build-bench/build.ninja ] || meson setup build-bench --buildtype=release >/dev/null
    ninja -C build-bench >/dev/null
    work=$(mktemp -d /tmp/s3rig-bench-XXXXXX)
    mkdir -p "$work/mnt"
    build-bench/tests/s3rig-mkfixture gr2anim-long "$work/long.gr2" "$tracks" "$secs" "$kps"
    local glb=/granny/root/Animations/0/animation.glb csv=/granny/root/Animations/0/TrackGroups/0/TransformTracks/0/samples.csv
    # best_s3rig_cat PATH OUT: s3rig cat of PATH in long.gr2 into OUT 3 times; the best seconds
    best_s3rig_cat() {
        local best=999 t0 dt
        for _ in 1 2 3; do
            t0=$(date +%s.%N)
            build-bench/s3rig cat "$work/long.gr2" "$1" >"$2" || return
            dt=$(echo "$(date +%s.%N) - $t0" | bc -l)
            best=$(echo "if ($dt < $best) $dt else $best" | bc -l)
        done
        echo "$best"
    }
    best=$(best_s3rig_cat "$glb" "$work/a.glb")
    printf "animation.glb (%d tracks, %s s, %d knots/s; %d-byte file): %d bytes, s3rig cat best of 3 %.3f s\n" \
        "$tracks" "$secs" "$kps" "$(stat -c %s "$work/long.gr2")" "$(stat -c %s "$work/a.glb")" "$best"
    local lin=/granny/root/Animations/0/animation_linear.glb lbest
    lbest=$(best_s3rig_cat "$lin" "$work/l.glb")
    printf "animation_linear.glb: %d bytes (%.2f x animation.glb), s3rig cat best of 3 %.3f s (the listing's measuring run included)\n" \
        "$(stat -c %s "$work/l.glb")" "$(echo "$(stat -c %s "$work/l.glb") / $(stat -c %s "$work/a.glb")" | bc -l)" "$lbest"
    build-bench/s3rig cat "$work/long.gr2" /info | grep -i "animation_linear" || true
    build-bench/mount.s3rig "$work/long.gr2" "$work/mnt"
    t0=$(date +%s.%N)
    cp "$work/mnt/granny/animations/0/animation.glb" "$work/b.glb"
    dt=$(echo "$(date +%s.%N) - $t0" | bc -l)
    printf "  through a fresh mount (cp): %.3f s, same bytes: %s\n" "$dt" "$(cmp -s "$work/a.glb" "$work/b.glb" && echo yes || echo NO)"
    t0=$(date +%s.%N)
    cp "$work/mnt$csv" "$work/s.csv"
    dt=$(echo "$(date +%s.%N) - $t0" | bc -l)
    printf "  one track's samples.csv: %d rows, %d bytes, %.3f s\n" "$(($(wc -l <"$work/s.csv") - 1))" \
        "$(stat -c %s "$work/s.csv")" "$dt"
    fusermount3 -u "$work/mnt"
    rm -rf "$work"
}
if [ "${1:-}" = anim ]; then
    need_bc
    bench_anim "${2:-250}" "${3:-34}" "${4:-30}"
    exit 0
fi
# GEOM: binding and export time of a generated mesh (best of 30, in-process, milliseconds).
bench_geom() {
    local work
    [ -f build-bench/build.ninja ] || meson setup build-bench --buildtype=release >/dev/null
    ninja -C build-bench >/dev/null
    work=$(mktemp -d /tmp/s3rig-bench-XXXXXX)
    build-bench/tests/s3rig-mkfixture geom-big "$work/body.simgeom" "$1"
    build-bench/tests/s3rig-mkfixture rig-clear-4 "$work/auRig.rig"
    build-bench/tests/bench_geom "$work/body.simgeom" "$work/auRig.rig"
    rm -rf "$work"
}
if [ "${1:-}" = geom ]; then
    bench_geom "${2:-3150}"
    exit 0
fi
# -o rw (issue 34): committing one changed value of a package of N resources (default
# 75000 zlib resources: about 100 MB) against cp of the same file. Through a mount
# (-o rw,backup=0; tests/bench_commit.c): the open (O_TRUNC), the value write itself (before
# any commit; target 1 ms) and the close, which commits (write the new file beside it,
# fsync, rename, fsync of the folder), best of 5; cp best of 5. Targets: the close at most
# 2 times cp. Then the commit split into its parts, in-process on the unmounted file,
# without and with the backup FILE~ (timed through the commit's step hook), and the new
# file's parse, which follows the close.
bench_commit() {
    local n=$1 work best_cp=999 t s e line close
    [ -f build-bench/build.ninja ] || meson setup build-bench --buildtype=release >/dev/null
    ninja -C build-bench >/dev/null
    work=$(mktemp -d /tmp/s3rig-bench-XXXXXX)
    mkdir -p "$work/mnt"
    build-bench/tests/s3rig-mkfixture package-big "$work/p.package" "$n" 4
    build-bench/mount.s3rig -o rw,backup=0 "$work/p.package" "$work/mnt"
    line=$(build-bench/tests/bench_commit mount "$work/mnt/header/created" 5)
    fusermount3 -u "$work/mnt"
    for i in 1 2 3 4 5; do
        s=$(date +%s.%N)
        cp "$work/p.package" "$work/copy"
        e=$(date +%s.%N)
        t=$(echo "$e - $s" | bc -l)
        best_cp=$(echo "if ($t < $best_cp) $t else $best_cp" | bc -l)
        rm -f "$work/copy"
    done
    echo "$line"
    close=$(echo "$line" | sed 's/.*close (the commit) \([0-9.]*\) ms.*/\1/')
    printf "commit of one value in a %d-byte package: %.3f s; cp: %.3f s (%.2fx)\n" \
        "$(stat -c %s "$work/p.package")" "$(echo "$close / 1000" | bc -l)" "$best_cp" \
        "$(echo "$close / 1000 / $best_cp" | bc -l)"
    build-bench/tests/bench_commit split "$work/p.package" 5 0
    build-bench/tests/bench_commit split "$work/p.package" 5 1
    bench_commit_section "$work" "${S3RIG_BENCH_SECTION_MB:-8}"
    rm -rf "$work"
}

# A value written again and again into a compressed Granny section of MB MiB (a GR2 of
# two sections, the second BitKnit2: s3rig-mkfixture gr2-sections 2 MB), the file moved
# away while mounted so that each close's commit is refused and the writes stay pending in
# the compressed section: the first write's close (the section expanded and stored raw)
# and the best of the next 9, with the bytes each wrote into files (/info).
bench_commit_section() {
    local work=$1 mb=$2
    build-bench/tests/s3rig-mkfixture gr2-sections "$work/s.gr2" 2 "$mb"
    build-bench/mount.s3rig -o rw,backup=0,cache_mb=$((mb * 2 + 16)) "$work/s.gr2" "$work/mnt"
    mv "$work/s.gr2" "$work/s.gr2.away"
    build-bench/tests/bench_commit section "$work/mnt/granny/root/Part_1/Index" "$work/mnt/info" 10
    mv "$work/s.gr2.away" "$work/s.gr2"
    fusermount3 -u "$work/mnt"
    echo "(section of $mb MiB)"
}

if [ "${1:-}" = commit ]; then
    bench_commit "${2:-75000}"
    exit 0
fi

if [ "${1:-}" = package ]; then
    bench_package "${2:-10000}"
    build-bench/tests/bench_codecs "$vec" 2>/dev/null | grep -E "refpack|zlib" || true
    exit 0
fi

mode=full
# A Mods folder (issue 33): see the usage above. Timings are wall clock of one run, the
# folder's pages warm (the floor runs twice first).
bench_folder() {
    local npkg=$1 nres=$2 work mnt t0 t1 pid rss0 rss1 rss2 n name rel floor
    [ -f build-bench/build.ninja ] || meson setup build-bench --buildtype=release >/dev/null
    # only what it runs: a failing build of some test elsewhere does not stop it
    ninja -C build-bench mount.s3rig s3rig tests/s3rig-mkfixture tests/bench_folder >/dev/null
    work=$(mktemp -d /tmp/s3rig-bench-XXXXXX)
    mnt=$work/mnt
    mkdir -p "$mnt"
    build-bench/tests/s3rig-mkfixture folder-big "$work/mods" "$npkg" "$nres"
    build-bench/tests/bench_folder "$work/mods" >/dev/null
    # CPU seconds (user + system) beside the wall times: steadier on a shared machine
    local TIMEFORMAT='%3U %3S' cpu tk u s
    tk=$(getconf CLK_TCK)
    cpu=$( { time build-bench/tests/bench_folder "$work/mods"; } 2>&1)
    echo "$cpu" | head -1
    floor=$(echo "$cpu" | head -1 | awk '{print $(NF-1)}')
    echo "floor CPU: $(echo "$cpu" | tail -1 | awk '{printf "%.3f s", $1 + $2}')"
    t0=$(date +%s.%N)
    build-bench/mount.s3rig "$work/mods" "$mnt"
    t1=$(date +%s.%N)
    pid=$(pgrep -n -f -- "$mnt" || echo 0)
    rss0=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
    printf "mount: %.3f s, RSS %d kB\n" "$(echo "$t1 - $t0" | bc -l)" "$rss0"
    # The first listing timed in-process (opendir, readdir to the end), as the floor is:
    # the filesystem's work, without a process start or ls's sort of 25,000 names.
    local list secs
    list=$(build-bench/tests/bench_folder --list "$mnt/conflicts")
    n=$(echo "$list" | awk '{print $2}')
    secs=$(echo "$list" | awk '{print $(NF-1)}')
    printf "first listing of /conflicts (scan included): %d conflicts, %.3f s, %.2fx the floor\n" "$n" \
        "$secs" "$(echo "$secs / $floor" | bc -l)"
    read -r u s < <(awk '{print $14, $15}' "/proc/$pid/stat" 2>/dev/null || echo "0 0")
    printf "  the daemon's CPU until then (mount, scan, listing): %.3f s\n" "$(echo "($u + $s) / $tk" | bc -l)"
    # What a user's `ls` sees on a fresh mount: the same first listing, plus ls's start
    # and sort (mounted again, so the scan is in it again)
    fusermount3 -u "$mnt"
    while pgrep -f -- "mount.s3rig $work/mods $mnt" >/dev/null; do sleep 0.05; done
    build-bench/mount.s3rig "$work/mods" "$mnt"
    pid=$(pgrep -n -f -- "$mnt" || echo 0)
    t0=$(date +%s.%N)
    n=$(ls "$mnt/conflicts" | wc -l)
    t1=$(date +%s.%N)
    printf "  the same by ls on a new mount (a process started, the names sorted): %.3f s, %.2fx the floor\n" \
        "$(echo "$t1 - $t0" | bc -l)" "$(echo "($t1 - $t0) / $floor" | bc -l)"
    t0=$(date +%s.%N)
    stat "$mnt/info" >/dev/null
    t1=$(date +%s.%N)
    printf "stat of /info: %.3f s\n" "$(echo "$t1 - $t0" | bc -l)"
    # lstat timed inside one process (bench_folder --lstat): the first lookup of /keys
    # and of one key in it, then another key
    name=$(ls "$mnt/conflicts" | head -1)
    echo "first lookup of /keys/NAME: $(build-bench/tests/bench_folder --lstat "$mnt/keys/$name")"
    name=$(ls "$mnt/conflicts" | tail -1)
    echo "another lookup of /keys/NAME: $(build-bench/tests/bench_folder --lstat "$mnt/keys/$name")"
    rss1=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
    printf "RSS after: %d kB, %.1f B per resource\n" "$rss1" "$(echo "$rss1 * 1024 / $nres" | bc -l)"
    # One package of keys the folder lacks (numbered after its last), moved in with the
    # watch on (the default): the time until its first key answers under /keys.
    build-bench/tests/s3rig-mkfixture folder-big "$work/extra" 1 $((nres / npkg)) "$npkg"
    rel=$(cd "$work/extra" && find . -name '*.package' | head -1 | sed 's|^\./||')
    name=$(build-bench/s3rig ls "$work/extra/$rel" /resources | head -1)
    mkdir -p "$(dirname "$work/mods/$rel")"
    t0=$(date +%s.%N)
    mv "$work/extra/$rel" "$work/mods/$rel"
    n=0
    until stat "$mnt/keys/$name" >/dev/null 2>&1 || [ $n -ge 3000 ]; do
        sleep 0.01
        n=$((n + 1))
    done
    t1=$(date +%s.%N)
    if [ $n -ge 3000 ]; then
        echo "an added package appearing under /keys: not seen within 30 s"
    else
        printf "an added package appearing under /keys (watch on): %.3f s\n" "$(echo "$t1 - $t0" | bc -l)"
    fi
    rss2=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
    printf "RSS after the rescan: %d kB\n" "$rss2"
    # the root's files measured, last: conflicts.csv (every conflict's providers compared
    # from their index records and stored bytes, no package tree opened), then
    # duplicates.csv (packages told apart by size, index and their ends; only those still
    # alike read whole: here none), then ls -l of the
    # root; the daemon's CPU seconds and RSS after each
    local c0 c1 what
    for what in conflicts.csv duplicates.csv; do
        read -r u s < <(awk '{print $14, $15}' "/proc/$pid/stat" 2>/dev/null || echo "0 0")
        c0=$(echo "$u + $s" | bc)
        t0=$(date +%s.%N)
        stat "$mnt/$what" >/dev/null
        t1=$(date +%s.%N)
        read -r u s < <(awk '{print $14, $15}' "/proc/$pid/stat" 2>/dev/null || echo "0 0")
        c1=$(echo "$u + $s" | bc)
        rss1=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
        printf "stat of /%s: %.3f s, the daemon's CPU %.3f s, RSS after %d kB\n" "$what" \
            "$(echo "$t1 - $t0" | bc -l)" "$(echo "($c1 - $c0) / $tk" | bc -l)" "$rss1"
    done
    t0=$(date +%s.%N)
    ls -l "$mnt" >/dev/null
    t1=$(date +%s.%N)
    rss1=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
    printf "ls -l of the root after them: %.3f s, RSS after %d kB (%.1f B per resource)\n" \
        "$(echo "$t1 - $t0" | bc -l)" "$rss1" "$(echo "$rss1 * 1024 / $nres" | bc -l)"
    fusermount3 -u "$mnt"
    sleep 0.2
    t0=$(date +%s.%N)
    cpu=$( { time build-bench/s3rig ls "$work/mods" /conflicts >&3; } 3>/dev/null 2>&1 | tail -1)
    t1=$(date +%s.%N)
    printf "s3rig ls DIR /conflicts (in-process, scan included): %.3f s, CPU %s\n" "$(echo "$t1 - $t0" | bc -l)" \
        "$(echo "$cpu" | awk '{printf "%.3f s", $1 + $2}')"
    rm -rf "$work"
}
if [ "${1:-}" = folder ]; then
    bench_folder "${2:-10000}" "${3:-1000000}"
    exit 0
fi
if [ "${1:-}" = memory ]; then
    mode=memory
    shift
fi
models=${1:-3600}
verts=${2:-45}
leaf_mb=${3:-64}

need=""
tools="squashfs-tools:mksquashfs squashfuse:squashfuse fuse-zip:fuse-zip zip:zip bc:bc"
[ "${1:-}" != gr2 ] && [ "$mode" != memory ] || tools="bc:bc"
for p in $tools; do
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
now() { date +%s.%N; }
elapsed() { echo "$(now) - $1" | bc -l; }
rss_of() { awk '/VmRSS/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
drop_caches() { sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null || true; }

# gr2_walk FILE: mounts FILE, walks it (find), then reads every file (links not
# followed); prints "nodes find_s read_s rss_after_mount_kB rss_after_walk_kB", unmounts
gr2_walk() {
    local mnt=$work/mnt-gr2 pid t0 rss0 dt nodes
    mkdir -p "$mnt"
    drop_caches
    build-bench/mount.s3rig "$1" "$mnt"
    pid=$(pgrep -n -f -- "$mnt" || echo 0)
    rss0=$(rss_of "$pid")
    t0=$(now)
    nodes=$(find "$mnt" | wc -l)
    dt=$(elapsed "$t0")
    t0=$(now)
    find "$mnt" -type f -exec cat {} + >/dev/null
    echo "$nodes $dt $(elapsed "$t0") $rss0 $(rss_of "$pid")"
    fusermount3 -u "$mnt"
    sleep 0.2
}

if [ "${1:-}" = gr2 ]; then
    pixels=${2:-524288} gverts=${3:-10000} bones=${4:-200}
    build-bench/tests/s3rig-mkfixture gr2-big "$work/texture.gr2" "$pixels" "$gverts" "$bones"
    build-bench/tests/s3rig-mkfixture gr2-remapped "$work/remapped.gr2"
    printf "%-34s %9s %7s %8s %8s %8s %8s\n" file bytes nodes find_s read_s rss0_kB rss1_kB
    for f in "$work/texture.gr2" "$work/remapped.gr2" "$vec"/gr2/*.gr2; do
        [ -f "$f" ] || continue
        read -r n t tr r0 r1 <<<"$(gr2_walk "$f")"
        printf "%-34s %9d %7d %8.3f %8.3f %8d %8d\n" "$(basename "$f")" "$(stat -c %s "$f")" "$n" "$t" "$tr" "$r0" "$r1"
    done
    echo "(texture.gr2: a ${pixels}-byte pixel array, a ${gverts}-vertex mesh, a ${bones}-bone skeleton;" \
         "find_s: find over a fresh mount; read_s: then cat of every file; RSS of the daemon after mount and after both)"
    exit 0
fi

file=$work/big.t2fs
build-bench/tests/s3rig-mkfixture t2fs-big "$file" "$models" "$verts" "$leaf_mb"
size=$(stat -c %s "$file")

# Memory per node: the whole tree (every view: /root, /models, /named, ...) walked by
# find -ls on a fresh mount; the daemon's RSS growth over the walk divided by the nodes.
# Target (issue 25): at most 100 B per node.
bench_memory() {
    local mnt=$work/mnt-pernode out pid r0 r1 n
    drop_caches
    out=$(mount_fs pernode "$mnt" build-bench/mount.s3rig "$file" "$mnt")
    pid=${out#* }
    r0=$(rss_of "$pid")
    n=$(find "$mnt" -ls | wc -l)
    r1=$(rss_of "$pid")
    echo "memory per node (s3rig, the whole tree): $n nodes, RSS $r0 kB after mount, $r1 kB after find -ls:" \
         "$(( (r1 - r0) * 1024 / n )) B per node"
    fusermount3 -u "$mnt"
    sleep 0.3
}

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

servers="s3rig squashfuse_ll squashfuse fuse-zip"

# start_server NAME MOUNTPOINT: mounts NAME's copy of the tree (s3rig serves the t2fs file)
start_server() {
    case $1 in
    s3rig) build-bench/mount.s3rig "$file" "$2" ;;
    squashfuse_ll) squashfuse_ll "$work/tree.sqfs" "$2" ;;
    squashfuse) squashfuse "$work/tree.sqfs" "$2" ;;
    fuse-zip) fuse-zip -r "$work/tree.zip" "$2" ;;
    esac
}
walk_of() { if [ "$1" = s3rig ]; then echo /root; fi; }
leaf_of() { if [ "$1" = s3rig ]; then echo root/1.bin; else echo 1.bin; fi; }
unmount() { fusermount3 -u "$1"; sleep 0.3; }

# timed_find NAME [FIND-ARGS]: find over a fresh mount of NAME after dropping the caches;
# prints "SECONDS PID" and leaves it mounted
timed_find() {
    local name=$1 mnt=$work/mnt-$1 out t0
    shift
    drop_caches
    out=$(mount_fs "$name" "$mnt" start_server "$name" "$mnt")
    t0=$(now)
    find "$mnt$(walk_of "$name")" "$@" >/dev/null
    echo "$(elapsed "$t0") ${out#* }"
}

declare -A mount_s rss0 find_s findls_s rss1 leaf_s again_s
measure_all() {
    local name mnt out round
    for name in $servers; do
        mnt=$work/mnt-$name
        drop_caches
        out=$(mount_fs "$name" "$mnt" start_server "$name" "$mnt")
        mount_s[$name]=${out% *}
        rss0[$name]=$(rss_of "${out#* }")
        unmount "$mnt"
    done
    # The walks take turns (every server once per round, best of 3 rounds), so that a slow
    # spell of the machine does not land on one server only.
    for round in 1 2 3; do
        for name in $servers; do
            mnt=$work/mnt-$name
            out=$(timed_find "$name")
            find_s[$name]=$(min "${find_s[$name]:-}" "${out% *}")
            unmount "$mnt"
            out=$(timed_find "$name" -ls)
            findls_s[$name]=$(min "${findls_s[$name]:-}" "${out% *}")
            rss1[$name]=$(rss_of "${out#* }")
            unmount "$mnt"
        done
    done
    for name in $servers; do
        mnt=$work/mnt-$name
        out=$(mount_fs "$name" "$mnt" start_server "$name" "$mnt")
        read -r leaf_s[$name] again_s[$name] <<<"$(best_leaf_read "$mnt/$(leaf_of "$name")")"
        unmount "$mnt"
    done
}

if [ "$mode" = memory ]; then
    echo "file: $size bytes, $models models, $verts vertices per mesh"
    bench_memory
    exit 0
fi

echo "file: $size bytes, $models models, $verts vertices per mesh, a ${leaf_mb} MiB leaf"
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -r)"

# the same tree as real files, for the others
build-bench/s3rig extract "$file" "$work/tree" /root 2>/dev/null
nodes=$(find "$work/tree" | wc -l)
mksquashfs "$work/tree" "$work/tree.sqfs" -noappend -quiet -no-progress >/dev/null
(cd "$work/tree" && zip -qr -0 "$work/tree.zip" .)
echo "tree: $nodes nodes below /root"
echo

measure_all

raw_s=$(best_raw_read)

printf "%-14s %8s %8s %8s %9s %8s %8s %8s\n" "server" "mount_s" "rss0_kB" "find_s" "findls_s" "rss1_kB" "leaf_s" \
    "again_s"
for n in $servers; do
    printf "%-14s %8.3f %8d %8.2f %9.2f %8d %8.3f %8.3f\n" "$n" "${mount_s[$n]}" "${rss0[$n]}" "${find_s[$n]}" \
        "${findls_s[$n]}" "${rss1[$n]}" "${leaf_s[$n]}" "${again_s[$n]}"
done
printf "%-14s %8s %8s %8s %9s %8s %8.3f %8s\n" "raw file" "-" "-" "-" "-" "-" "$raw_s" "-"
echo
sf=${find_s[s3rig]} sl=${findls_s[s3rig]} sc=${leaf_s[s3rig]} sw=${again_s[s3rig]}
qf=${find_s[squashfuse_ll]} ql=${findls_s[squashfuse_ll]}
echo "ratios: find s3rig/squashfuse_ll $(echo "$sf / $qf" | bc -l | cut -c1-5)," \
     "find -ls $(echo "$sl / $ql" | bc -l | cut -c1-5)," \
     "leaf read speed vs raw file $(echo "$raw_s / $sc" | bc -l | cut -c1-5) (first read)," \
     "$(echo "$raw_s / $sw" | bc -l | cut -c1-5) (read again)"
echo
bench_memory
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
build-bench/tests/bench_codecs "$vec" 2>/dev/null || echo "codec throughput: bench_codecs not available"
echo
bench_package 10000
echo
bench_geom 3150
