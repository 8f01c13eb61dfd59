#!/usr/bin/env bash
# Runs a libFuzzer target for SECONDS (clang, ASan + UBSan), seeded from the fixture
# builders and the shared codec vectors. Crashes are written to fuzz-out/ and make the
# script fail: turn each one into a regression input under tests/regress/.
#
#   scripts/fuzz.sh TARGET SECONDS      TARGET: tree, a codec (rnc oodle1 oodle0 refpack
#                                       bitknit2), a format's code (scripts/formats.sh codes),
#                                       modfolder (Resource.cfg, load order, globs) |
#                                       folder (the input as a small Mods folder, walked) | all
#
# A format's target and its seeds come from the format table (src/formats.def): the row's
# mkfixture kinds, cut by its fuzz_cut (the bytes the target puts back in front); the tree
# target gets every row's seeds whole.
#
# Longer campaigns: scripts/fuzz.sh tree 3600 (the corpus in fuzz-out/corpus/ is kept and
# grows between runs; run several targets in parallel on more cores).
set -eu
case "${S3RIG_VECTORS:-/}" in /*) ;; *) export S3RIG_VECTORS="$PWD/$S3RIG_VECTORS" ;; esac # relative to the caller
cd "$(dirname "$0")/.."
target=${1:-all}
seconds=${2:-60}
formats=$(scripts/formats.sh codes | tr '\n' ' ')
targets="tree $formats rnc oodle1 oodle0 refpack bitknit2 modfolder folder"
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

# make_seed KIND[:ARG...] DIR: the fixture as DIR/KIND (arguments after colons).
make_seed() {
    local kind=${1%%:*} args=
    [ "$kind" = "$1" ] || args=${1#*:}
    $mk "$kind" "$2/$kind" ${args//:/ } 2>/dev/null || true
}

# seed_corpus TARGET DIR: fixture files, cut to what the target prepends itself.
seed_corpus() {
    local t=$1 dir=$2 tmp k f cut
    tmp=$(mktemp -d)
    if [[ " $formats " == *" $t "* ]]; then # a format: its seeds, cut
        cut=$(scripts/formats.sh cut "$t")
        for k in $(scripts/formats.sh seeds "$t"); do make_seed "$k" "$tmp"; done
        for f in "$tmp"/*; do [ -e "$f" ] && tail -c +$((cut + 1)) "$f" > "$dir/$(basename "$f")"; done
    fi
    case $t in
    tree) for c in $formats; do for k in $(scripts/formats.sh seeds "$c"); do make_seed "$k" "$dir"; done; done ;;
    refpack) $mk refpack "$dir/refpack" ;;
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
    modfolder) # a Resource.cfg as the game ships it, then paths
        printf 'Priority 500\r\nPackedFile *.package\r\nPackedFile */*.package\r\nPriority 600\r\nPackedFile Override/*.package\r\nDirectoryFiles Override autoupdate\r\nOverride/x.package\n_x.package\nZx.package\n\303\251t\303\251/\360\237\230\200.package\n' > "$dir/cfg" ;;
    folder) # fixture folders packed as the target reads them: path line, bytes, separator
        for v in cfg nocfg; do
            $mk folder "$tmp/$v" $v 2>/dev/null || true
            (cd "$tmp/$v" && find . -type f | sed 's|^\./||' | LC_ALL=C sort | head -12 | while read -r f; do
                printf '%s\n' "$f"; cat "$f"; printf '\n--8<--\n'
            done) > "$dir/folder-$v"
        done
        for k in package-s4 package-s3; do
            make_seed "$k" "$tmp"
            { printf 'Resource.cfg\nPriority 500\r\nPackedFile *.package\r\nPackedFile */*.package\r\n\n--8<--\n'
              printf 'a.package\n'; cat "$tmp/$k"; printf '\n--8<--\n'
              printf 'sub/b.package\n'; cat "$tmp/$k"; } > "$dir/two-$k"
        done ;;
    oodle0) # no shared vectors: sections packed by the test encoder, with the 8-byte prefix
        $mk oodle0 "$dir/objects" && $mk oodle0-be "$dir/objects-be" ;;
    esac
    if [ "$t" = t2fs ]; then # cut short at two thirds: the root table whole, nodes past the end
        for f in "$dir"/t2fs*; do head -c $(($(stat -c %s "$f") * 2 / 3)) "$f" > "$f-cut"; done
    fi
    rm -rf "$tmp"
}

status=0
for t in $targets; do
    corpus=$out/corpus/$t
    mkdir -p "$corpus"
    [ -n "$(ls -A "$corpus")" ] || seed_corpus "$t" "$corpus"
    echo "fuzz: $t for ${seconds}s"
    # UBSan's reports stop the run (and keep the input) like ASan's: recovering, they
    # scrolled past in the log and the run passed
    if ! UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1} build-fuzz/fuzz/fuzz_$t -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=20 -max_len=262144 \
        -artifact_prefix="$out/crash-$t-" -print_final_stats=1 "$corpus" >"$out/$t.log" 2>&1; then
        echo "fuzz: $t FOUND A PROBLEM (see $out/$t.log and $out/crash-$t-*)"
        grep -E "ERROR|SUMMARY|runtime error" "$out/$t.log" | head -5
        status=1
    else
        grep -E "stat::number_of_executed_units|cov:" "$out/$t.log" | tail -2 | tr '\n' ' '
        echo
    fi
done
exit $status
