#include "parse/detect.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/dbpf.h"
#include "parse/gr2.h"
#include "parse/rig.h"
#include "parse/t2fs.h"

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
        if (past_end && i > 0 && o == prev) /* a cut root: every child at least 8 bytes (below) */
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

/* The most children a cut-short root may have: real roots have 11 (Turok 1) to 20 (Turok 3)
 * children, and the check reads the whole table. */
#define T2FS_CUT_MAX_CHILDREN 65536

/* A t2fs root: the strong validity test at offset 0, then 8 (a prefix), in either byte
 * order. When no complete root fits, a cut-short one (a truncated download, a partly
 * copied file) is accepted when it is unmistakably a t2fs root in every other way:
 *   - its whole offset table lies inside the file (count and all count + 1 offsets read);
 *   - offset[0] is exactly the table's length, align8(4 + 4 (count + 1)); the offsets are
 *     multiples of 8 and strictly increase (every node is at least 8 bytes: an empty branch
 *     or array is 8, a raw struct is padded to 8), so each child is a real, non-empty slot;
 *   - 1 to T2FS_CUT_MAX_CHILDREN children, and offset[count] (the root's end) past the end.
 * A complete root is always preferred (both prefixes, both byte orders are tried whole
 * first). Random bytes pass only by matching offset[0] to the count exactly and having
 * count strictly increasing multiples of 8 after it. The view shows each node lying past
 * the end as NAME.error (man/s3rig.5, "Files cut short"). */
static bool detect_t2fs(const struct s3_src *src, struct detect_result *r)
{
    for (int cut = 0; cut <= 1; cut++)
        for (int skip = 0; skip <= 8; skip += 8) {
            if (src->size <= (uint64_t)skip)
                break;
            for (int be = 0; be <= 1; be++) {
                uint64_t needs;
                uint32_t count;
                bool ok = !cut ? t2fs_branch_valid(src, skip, src->size - skip, be)
                               : src_u32(src, skip, be, &count) == 0 && count > 0 &&
                                     count <= T2FS_CUT_MAX_CHILDREN &&
                                     branch_check(src, skip, src->size - skip, be, true, &needs) == 1;
                if (ok) {
                    r->format = FMT_T2FS;
                    r->big_endian = be;
                    r->root_off = skip;
                    r->root_cut = cut;
                    return true;
                }
            }
        }
    return false;
}

/* A t2fs root whose table itself runs past the end of the file (the offsets it has are
 * right: offset[0] is the table's length, the rest increase by multiples of 8): said as
 * such, not as an unknown format. Nothing of the tree can be read, so the file is refused. */
static bool t2fs_cut_short(const struct s3_src *src, struct detect_result *r)
{
    for (int skip = 0; skip <= 8; skip += 8) {
        for (int be = 0; be <= 1 && src->size >= (uint64_t)skip + 8; be++) {
            uint32_t count, o, prev = 0;
            if (src_u32(src, skip, be, &count) || count == 0 || count > T2FS_CUT_MAX_CHILDREN)
                continue;
            uint64_t header = t2fs_branch_header_len(count), end = skip + header;
            if (end <= src->size)
                continue; /* the table fits: detect_t2fs decided */
            bool right = true;
            for (uint64_t i = 0; right && i <= count && src_u32(src, skip + 4 + 4 * i, be, &o) == 0; i++) {
                right = (i == 0 ? o == header : o > prev) && (o & 7) == 0;
                prev = o;
            }
            if (!right)
                continue;
            snprintf(r->why, sizeof r->why,
                     "a t2fs container cut short (%s, root at %d): its root table ends at byte %llu, the file "
                     "has %llu",
                     be ? "big-endian" : "little-endian", skip, (unsigned long long)end,
                     (unsigned long long)src->size);
            return true;
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
