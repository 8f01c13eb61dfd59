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

bool t2fs_branch_valid(const struct s3_src *src, uint64_t off, uint64_t space, bool be)
{
    uint32_t count;
    if (space < 8 || src_u32(src, off, be, &count))
        return false;
    uint64_t header = (4 + 4 * ((uint64_t)count + 1) + 7) & ~7ull;
    if (header > space)
        return false;
    uint32_t prev = 0;
    for (uint64_t i = 0; i <= count; i++) {
        uint32_t o;
        if (src_u32(src, off + 4 + 4 * i, be, &o))
            return false;
        if ((i == 0 && o != header) || o < prev || (o & 7) || o > space)
            return false;
        prev = o;
    }
    return true;
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
    else { /* the bytes the file has, at most 8: never the zeros head[] starts with */
        char hex[8 * 3] = "";
        for (size_t i = 0, at = 0; i < n && i < 8; i++)
            at += (size_t)snprintf(hex + at, sizeof hex - at, "%s%02x", i ? " " : "", head[i]);
        snprintf(r->why, sizeof r->why, "not a RIG, GR2, t2fs or DBPF file (%s %s)", n < 8 ? "all its bytes:" : "first bytes",
                 hex);
    }
    return -1;
}
