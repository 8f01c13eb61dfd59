#!/usr/bin/env bash
# The format table (src/formats.def) for what cannot include it: meson (fuzz/meson.build),
# scripts/test.sh and scripts/fuzz.sh. tests/test_formats.c checks that this reading of
# the table is the one the C code compiles (`rows`).
#
#   scripts/formats.sh codes          the formats' code names (their fuzz targets), in order
#   scripts/formats.sh fuzz           "CODE FMT_ID" per format (fuzz/meson.build)
#   scripts/formats.sh seeds CODE     the row's mkfixture kinds, one per line
#   scripts/formats.sh cut CODE       the row's fuzz_cut
#   scripts/formats.sh rows           every row: ID|name|code|noun|pkg_type|pkg_dir|cut|seeds|usage
#
# A row is one line FORMAT(col, col, ...) with no comma inside a column (the table says so).
set -eu
def="$(cd "$(dirname "$0")/.." && pwd)/src/formats.def"

rows() {
    awk '
        /^FORMAT\(/ {
            line = $0
            sub(/^FORMAT\(/, "", line)
            sub(/\)[ \t]*$/, "", line)
            n = split(line, f, ",")
            out = ""
            for (i = 1; i <= n; i++) {
                v = f[i]
                gsub(/^[ \t]+|[ \t]+$/, "", v)
                if (v ~ /^".*"$/) v = substr(v, 2, length(v) - 2)
                col[i] = v
            }
            # ID name code noun pkg_type pkg_dir cut seeds usage (prefix left out)
            printf "%s|%s|%s|%s|%s|%s|%s|%s|%s\n", col[1], col[2], col[3], col[4], col[5], col[6], col[7], col[9], col[10]
        }' "$def"
}

case ${1:-} in
rows) rows ;;
codes) rows | cut -d'|' -f3 ;;
fuzz) rows | awk -F'|' '{print $3 " FMT_" $1}' ;;
seeds) rows | awk -F'|' -v c="${2:?code}" '$3 == c {n = split($8, s, " "); for (i = 1; i <= n; i++) print s[i]}' ;;
cut) rows | awk -F'|' -v c="${2:?code}" '$3 == c {print $7}' ;;
*) sed -n '2,/^set -eu/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; exit 1 ;;
esac
