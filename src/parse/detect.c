#include "parse/detect.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/dbpf.h"
#include "parse/gr2.h"
#include "parse/rig.h"

const char *format_name(enum s3_format f)
{
    switch (f) {
    case FMT_RIG_WRAPPED:
        return "wrapped-rig";
    case FMT_RIG_CLEAR:
        return "clear-rig";
    case FMT_GR2:
        return "gr2";
    case FMT_T2FS:
        return "t2fs";
    case FMT_DBPF:
        return "dbpf";
    default:
        return "unknown";
    }
}

/* 0 when a t2fs branch table starts at off and fits in space; with past_end, 1 when it is
 * one in every rule but that its offsets run past space (*needs: the end its last offset
 * names), as a truncated file's root does; -1 otherwise. Without past_end the first offset
 * past space ends the check (no scan of a large leaf that only starts like a table). */
static int branch_check(const struct s3_src *src, uint64_t off, uint64_t space, bool be, bool past_end,
                        uint64_t *needs)
{
    uint32_t count;
    if (space < 8 || src_u32(src, off, be, &count))
        return -1;
    uint64_t header = (4 + 4 * ((uint64_t)count + 1) + 7) & ~7ull;
    if (header > space)
        return -1;
    uint32_t prev = 0;
    for (uint64_t i = 0; i <= count; i++) {
        uint32_t o;
        if (src_u32(src, off + 4 + 4 * i, be, &o))
            return -1;
        if ((i == 0 && o != header) || o < prev || (o & 7) || (o > space && !past_end))
            return -1;
        prev = o;
    }
    *needs = prev;
    return prev > space ? 1 : 0;
}

bool t2fs_branch_valid(const struct s3_src *src, uint64_t off, uint64_t space, bool be)
{
    uint64_t needs;
    return branch_check(src, off, space, be, false, &needs) == 0;
}

static bool detect_t2fs(const struct s3_src *src, struct detect_result *r)
{
    for (int skip = 0; skip <= 8; skip += 8) {
        if (src->size <= (uint64_t)skip)
            break;
        for (int be = 0; be <= 1; be++) {
            if (t2fs_branch_valid(src, skip, src->size - skip, be)) {
                r->format = FMT_T2FS;
                r->big_endian = be;
                r->root_off = skip;
                return true;
            }
        }
    }
    return false;
}

/* A t2fs root table whose offsets run past the end of the file: said as such, not as an
 * unknown format (a cut-short download of a Turok file). */
static bool t2fs_cut_short(const struct s3_src *src, struct detect_result *r)
{
    for (int skip = 0; skip <= 8; skip += 8) {
        for (int be = 0; be <= 1 && src->size > (uint64_t)skip; be++) {
            uint64_t needs;
            uint32_t count; /* a root has a few children: no scan of a huge table in a refusal */
            if (src_u32(src, skip, be, &count) == 0 && count > 0 && count <= 65536 &&
                branch_check(src, skip, src->size - skip, be, true, &needs) == 1) {
                snprintf(r->why, sizeof r->why,
                         "a t2fs container cut short (%s, root at %d): its root table ends at byte %llu, the file "
                         "has %llu",
                         be ? "big-endian" : "little-endian", skip, (unsigned long long)(skip + needs),
                         (unsigned long long)src->size);
                return true;
            }
        }
    }
    return false;
}

int detect_format(const struct s3_src *src, struct detect_result *r)
{
    memset(r, 0, sizeof *r);
    uint8_t head[16] = {0};
    size_t n = src->size < 16 ? (size_t)src->size : 16;
    if (src_read(src, 0, head, n) != 0) {
        snprintf(r->why, sizeof r->why, "cannot read the first bytes");
        return -1;
    }
    if (n == 16 && gr2_match_signature(head)) {
        r->format = FMT_GR2;
        return 0;
    }
    uint32_t w0 = n >= 4 ? ld_u32(head, false) : 0, w1 = n >= 8 ? ld_u32(head + 4, false) : 0;
    if (dbpf_sniff(head, n)) { /* the version is checked (and refused in one line) by the view */
        r->format = FMT_DBPF;
        return 0;
    }
    if (n >= 4 && w0 == RIG_MAGIC) {
        r->format = FMT_RIG_WRAPPED;
        return 0;
    }
    if (n >= 8 && (w0 == 3 || w0 == 4) && (w1 == 1 || w1 == 2)) {
        r->format = FMT_RIG_CLEAR;
        return 0;
    }
    if (detect_t2fs(src, r))
        return 0;
    if (src->size == 0)
        snprintf(r->why, sizeof r->why, "empty file");
    else if (t2fs_cut_short(src, r))
        ;
    else { /* the bytes the file has, at most 8: never the zeros head[] starts with */
        char hex[8 * 3] = "";
        for (size_t i = 0, at = 0; i < n && i < 8; i++)
            at += (size_t)snprintf(hex + at, sizeof hex - at, "%s%02x", i ? " " : "", head[i]);
        snprintf(r->why, sizeof r->why, "not a RIG, GR2, t2fs or DBPF file (%s %s)",
                 n < 8 ? "all its bytes:" : "first bytes", hex);
    }
    return -1;
}
