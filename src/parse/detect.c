#include "parse/detect.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/dbpf.h"
#include "parse/gr2.h"
#include "parse/rig.h"
#include "parse/t2fs.h"

/* The detection functions, declared from the table (each defined by its format's
 * parser, or below). */
#define FORMAT(id, name, code, noun, detect, ...) s3_detect_fn detect;
#include "formats.def"
#undef FORMAT

const struct s3_format_info s3_formats[FMT_COUNT] = {
    [FMT_UNKNOWN] = {.name = "unknown", .code = "", .noun = "", .pkg_dir = "", .fuzz_prefix = "", .seeds = "",
                     .usage = ""},
#define FORMAT(id, name_, code_, noun_, detect_, open_, pkg_type_, pkg_dir_, cut_, prefix_, seeds_, usage_) \
    [FMT_##id] = {.name = name_, .code = #code_, .noun = noun_, .detect = detect_, .pkg_type = pkg_type_,     \
                  .pkg_dir = pkg_dir_, .fuzz_cut = cut_, .fuzz_prefix = prefix_, .seeds = seeds_, .usage = usage_},
#include "formats.def"
#undef FORMAT
};

const char *format_name(enum s3_format f)
{
    return (unsigned)f < FMT_COUNT ? s3_formats[f].name : "unknown";
}

int format_list(char *out, size_t size, size_t column)
{
    const char *said[FMT_COUNT];
    size_t nsaid = 0;
    for (int f = FMT_UNKNOWN + 1; f < FMT_COUNT; f++) {
        const char *w = *(const char *const *)((const char *)&s3_formats[f] + column);
        bool dup = !w[0];
        for (size_t k = 0; k < nsaid && !dup; k++)
            dup = strcmp(said[k], w) == 0;
        if (!dup)
            said[nsaid++] = w;
    }
    size_t len = 0;
    if (size)
        out[0] = 0;
    for (size_t k = 0; k < nsaid; k++) {
        const char *sep = k == 0 ? "" : k + 1 == nsaid ? " or " : ", ";
        len += (size_t)snprintf(len < size ? out + len : NULL, len < size ? size - len : 0, "%s%s", sep, said[k]);
    }
    return (int)len;
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
bool detect_t2fs(const struct s3_src *src, const uint8_t *head, size_t n, struct detect_result *r)
{
    (void)head, (void)n;
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

bool detect_gr2(const struct s3_src *src, const uint8_t *head, size_t n, struct detect_result *r)
{
    (void)src, (void)r;
    return n == 16 && gr2_match_signature(head);
}

bool detect_dbpf(const struct s3_src *src, const uint8_t *head, size_t n, struct detect_result *r)
{
    (void)src, (void)r; /* the version is checked (and refused in one line) by the view */
    return dbpf_sniff(head, n);
}

bool detect_rig_wrapped(const struct s3_src *src, const uint8_t *head, size_t n, struct detect_result *r)
{
    (void)src, (void)r;
    return n >= 4 && ld_u32(head, false) == RIG_MAGIC;
}

bool detect_rig_clear(const struct s3_src *src, const uint8_t *head, size_t n, struct detect_result *r)
{
    (void)src, (void)r;
    uint32_t major = n >= 8 ? ld_u32(head, false) : 0, minor = n >= 8 ? ld_u32(head + 4, false) : 0;
    return (major == 3 || major == 4) && (minor == 1 || minor == 2);
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
    for (int f = FMT_UNKNOWN + 1; f < FMT_COUNT; f++)
        if (s3_formats[f].detect(src, head, n, r)) {
            r->format = (enum s3_format)f;
            return 0;
        }
    memset(r, 0, sizeof *r); /* what a refusing detection left behind */
    if (src->size == 0)
        snprintf(r->why, sizeof r->why, "empty file");
    else if (t2fs_cut_short(src, r))
        ;
    else { /* the bytes the file has, at most 8: never the zeros head[] starts with */
        char hex[8 * 3] = "", nouns[120];
        for (size_t i = 0, at = 0; i < n && i < 8; i++)
            at += (size_t)snprintf(hex + at, sizeof hex - at, "%s%02x", i ? " " : "", head[i]);
        format_list(nouns, sizeof nouns, offsetof(struct s3_format_info, noun));
        snprintf(r->why, sizeof r->why, "not a %s file (%s %s)", nouns, n < 8 ? "all its bytes:" : "first bytes", hex);
    }
    return -1;
}
