#!/usr/bin/env bash
# Runs a libFuzzer target for SECONDS (clang, ASan + UBSan), seeded from the fixture
# builders and the shared codec vectors. Crashes are written to fuzz-out/ and make the
# script fail: turn each one into a regression input under tests/regress/.
#
#   scripts/fuzz.sh TARGET SECONDS      TARGET: tree rnc oodle1 gr2 rig rig_clear t2fs oodle0 dbpf refpack bitknit2 | all
#
# Longer campaigns: scripts/fuzz.sh tree 3600 (the corpus in fuzz-out/corpus/ is kept and
# grows between runs; run several targets in parallel on more cores).
set -eu
case "${S3RIG_VECTORS:-/}" in /*) ;; *) export S3RIG_VECTORS="$PWD/$S3RIG_VECTORS" ;; esac # relative to the caller
cd "$(dirname "$0")/.."
target=${1:-all}
seconds=${2:-60}
targets="tree rnc oodle1 gr2 rig rig_clear t2fs oodle0 dbpf refpack bitknit2"
[ "$target" = all ] || targets=$target

if [ ! -f build-fuzz/build.ninja ]; then
    CC=clang meson setup build-fuzz -Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false \
        -Dc_args=-fsanitize=fuzzer-no-link \
        -Dwerror=true >/dev/null
fi
ninja -C build-fuzz >"${TMPDIR:-/tmp}/s3rig-fuzz-build.log" 2>&1 || { cat "${TMPDIR:-/tmp}/s3rig-fuzz-build.log"; exit 1; }
mk=build-fuzz/tests/s3rig-mkfixture
vec=${S3RIG_VECTORS:-../shared/vectors} # the real test vectors (as scripts/test.sh)
out=fuzz-out
mkdir -p "$out"

# seed_corpus TARGET DIR: fixture files, cut to what the target prepends itself.
seed_corpus() {
    local t=$1 dir=$2 tmp
    tmp=$(mktemp -d)
    for k in rig gr2-le32-old-v6 gr2-be64-v7 gr2obj-le32-v7 gr2obj-be64-v6 gr2model-le32 gr2model-be64-alt gr2-oodle0 t2fs t2fs-be t2fs-turok1 t2fs-turok1-be \
             rig-clear-4 rig-clear-3-ts3 rig-clear-3-ts4 package-s3 package-s4 package-s4-rigs refpack \
             bk2obj-le32-old-v6 bk2obj-le64-v7; do
        $mk "$k" "$tmp/$k" 2>/dev/null || true
    done
    # Granny tables (arrays of flat elements) and remapped strings
    $mk gr2-big "$tmp/gr2-big" 2048 64 8 2>/dev/null || true
    $mk gr2-remapped "$tmp/gr2-remapped" 2>/dev/null || true
    case $t in
    tree) cp "$tmp"/* "$dir"/ && rm -f "$dir"/refpack ;;
    gr2) for f in "$tmp"/gr2* "$tmp"/bk2obj-le32-old*; do tail -c +17 "$f" > "$dir/$(basename "$f")"; done ;;
    rig) tail -c +9 "$tmp/rig" > "$dir/rig" ;;
    rig_clear) for f in "$tmp"/rig-clear*; do tail -c +9 "$f" > "$dir/$(basename "$f")"; done ;;
    t2fs) cp "$tmp"/t2fs* "$dir"/
        for f in "$tmp"/t2fs*; do # cut short at two thirds: the root table whole, nodes past the end
            head -c $(($(stat -c %s "$f") * 2 / 3)) "$f" > "$dir/$(basename "$f")-cut"
        done ;;
    dbpf) for f in "$tmp"/package*; do tail -c +9 "$f" > "$dir/$(basename "$f")"; done ;;
    refpack) cp "$tmp"/refpack "$dir"/ ;;
    bitknit2) for v in 0 1 2 3; do $mk "bitknit2-$v" "$dir/bitknit2-$v"; done ;;
    rnc) [ -d "$vec/rnc" ] && cp "$vec"/rnc/*.rnc* "$dir"/ 2>/dev/null || true ;;
    oodle1)
        # 8-byte prefix: first16bit, first8bit-first16bit, size-first8bit (u16 LE), flags, 0
        if [ -d "$vec/oodle1" ]; then
            { printf '\040\003\040\003\220\001\000\000'; cat "$vec/oodle1/alice_small.oodle1"; } > "$dir/alice_small"
            { printf '\144\000\310\000\222\002\000\000'; cat "$vec/oodle1/tiny_window.oodle1"; } > "$dir/tiny_window"
            { printf '\160\027\200\006\041\002\000\000'; cat "$vec/oodle1/struct_mixed.oodle1"; } > "$dir/struct_mixed"
        fi
        ;;
    oodle0) # no shared vectors: sections packed by the test encoder, with the 8-byte prefix
        $mk oodle0 "$dir/objects" && $mk oodle0-be "$dir/objects-be" ;;
    esac
    rm -rf "$tmp"
}

status=0
for t in $targets; do
    corpus=$out/corpus/$t
    mkdir -p "$corpus"
    [ -n "$(ls -A "$corpus")" ] || seed_corpus "$t" "$corpus"
    echo "fuzz: $t for ${seconds}s"
    if ! build-fuzz/fuzz/fuzz_$t -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=20 -max_len=262144 \
        -artifact_prefix="$out/crash-$t-" -print_final_stats=1 "$corpus" >"$out/$t.log" 2>&1; then
        echo "fuzz: $t FOUND A PROBLEM (see $out/$t.log and $out/crash-$t-*)"
        grep -E "ERROR|SUMMARY" "$out/$t.log" | head -5
        status=1
    else
        grep -E "stat::number_of_executed_units|cov:" "$out/$t.log" | tail -2 | tr '\n' ' '
        echo
    fi
done
exit $status
