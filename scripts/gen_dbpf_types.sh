#!/usr/bin/env bash
# Generates src/parse/sims/dbpf_types.c, the community's DBPF resource type table, from the
# format note docs/formats/dbpf-types.md: one row per type id (| type | tag | extension |
# game | what |), sorted by id. A tag or extension cell "A / B" is s3pi's A and s4pi's B:
# the names in a Sims 3 (DBPF 2.0) and a Sims 4 (DBPF 2.1) package; any other cell is the
# same for both. The game column (TS3, TS4, both, both*) says whose lists have the id.
#
#   scripts/gen_dbpf_types.sh [MARKDOWN [OUT]]            writes OUT (default: the files above)
#   scripts/gen_dbpf_types.sh --check [MARKDOWN [C_FILE]] fails when C_FILE differs from what
#                                                         MARKDOWN gives (tests/meson.build)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
check=false
if [ "${1:-}" = --check ]; then
    check=true
    shift
fi
md=${1:-$root/docs/formats/dbpf-types.md}
out=${2:-$root/src/parse/sims/dbpf_types.c}

# The rows as C initialisers, one per line, in the note's order; fails on a malformed row.
rows() {
    awk -F'|' '
    # (no interval expressions such as {8}: mawk, the default awk, lacks them)
    function trim(s) { gsub(/^ +| +$/, "", s); return s }
    function side(s, k,   a) { return split(s, a, " / ") == 2 ? trim(a[k]) : trim(s) }
    function bad(why) { printf "%s:%d: %s\n", FILENAME, FNR, why > "/dev/stderr"; failed = 1; exit 1 }
    /^\|0x/ {
        if (NF != 7) bad("a row needs 5 cells")
        id = trim($2); game = trim($5); what = trim($6)
        if (id !~ /^0x[0-9A-F]+$/ || length(id) != 10) bad("type " id ": not 0x and 8 upper-case hex digits")
        t3 = side($3, 1); t4 = side($3, 2); e3 = side($4, 1); e4 = side($4, 2)
        if (t3 !~ /^[A-Za-z0-9_]+$/ || t4 !~ /^[A-Za-z0-9_]+$/ || length(t3) != 4 || length(t4) != 4) bad("tag " $3 ": not 4 letters, digits or _")
        if (e3 !~ /^\.[A-Za-z0-9_]+$/ || e4 !~ /^\.[A-Za-z0-9_]+$/) bad("extension " $4 ": not . and a word")
        if (game == "TS3") games = "DBPF_GAME_TS3"
        else if (game == "TS4") games = "DBPF_GAME_TS4"
        else if (game == "both" || game == "both*") games = "DBPF_GAME_TS3 | DBPF_GAME_TS4"
        else bad("game " game ": not TS3, TS4, both or both*")
        gsub(/`/, "", what)
        gsub(/\*\//, "* /", what)
        printf "    {%s, {\"%s\", \"%s\"}, {\"%s\", \"%s\"}, %s}, /* %s%s */\n", id, t3, t4, e3, e4, games,
               game == "both*" ? "(both*) " : "", what
        n++
    }
    END { if (!failed && n == 0) { print FILENAME ": no table rows" > "/dev/stderr"; exit 1 } }
    ' "$md"
}

generate() {
    local body dups
    body=$(rows) || return 1
    dups=$(cut -c6-15 <<<"$body" | LC_ALL=C sort | uniq -d)
    if [ -n "$dups" ]; then
        echo "$md: types listed twice: $dups" >&2
        return 1
    fi
    cat <<EOF
/* The community's DBPF resource types (s3pe for The Sims 3, s4pe for The Sims 4): tag and
 * extension per type id, and the games whose tools list it. Generated from
 * docs/formats/dbpf-types.md by scripts/gen_dbpf_types.sh: do not edit, regenerate. */
#include "parse/sims/dbpf_types.h"

const struct dbpf_type_row dbpf_type_rows[] = {
$(LC_ALL=C sort <<<"$body")
};

const size_t dbpf_ntype_rows = sizeof dbpf_type_rows / sizeof dbpf_type_rows[0];
EOF
}

if ! $check; then
    tmp=$(mktemp)
    generate >"$tmp" || { rm -f "$tmp"; exit 1; }
    mv "$tmp" "$out"
    echo "$out: $(grep -c '^    {0x' "$out") types"
    exit 0
fi

# --check: one test in cmocka's form, so scripts/test.sh counts it
echo "[==========] Running 1 test(s)."
if ! want=$(generate); then
    echo "[  FAILED  ] dbpf_types: $md does not parse"
    exit 1
fi
if [ "$want" != "$(cat "$out")" ]; then
    diff <(echo "$want") "$out" | head -20
    echo "[  FAILED  ] dbpf_types: $out is not what $md gives: run scripts/gen_dbpf_types.sh"
    exit 1
fi
echo "[       OK ] dbpf_types: $out is up to date ($(grep -c '^    {0x' "$out") types)"
echo "[  PASSED  ] 1 test(s)."
