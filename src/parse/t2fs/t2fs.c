#include "parse/t2fs/t2fs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint64_t t2fs_branch_header_len(uint64_t count)
{
    return (4 + 4 * (count + 1) + 7) & ~7ull;
}

/* The strong validity test of one table offset (docs/formats/t2fs.md): NULL, or why it fails. */
static const char *offset_flaw(uint64_t i, uint32_t o, uint32_t prev, uint64_t header, uint64_t space)
{
    if (i == 0 && o != header)
        return "first offset is not the table length";
    if (o < prev)
        return "offsets decrease";
    if (o & 7)
        return "offset not a multiple of 8";
    if (o > space)
        return "offset past the end of the node";
    return NULL;
}

enum s3_err t2fs_read_branch(const struct s3_src *src, uint64_t off, uint64_t space, bool be, struct t2fs_branch *b,
                             char *err, size_t errlen)
{
    memset(b, 0, sizeof *b);
    uint32_t count;
    if (space < 8 || src_u32(src, off, be, &count))
        return s3_fail(space < 8 ? S3_ERR_FORMAT : S3_ERR_RANGE, err, errlen,
                       "branch at 0x%llx: %llu bytes, too small for a table", (unsigned long long)off,
                       (unsigned long long)space);
    uint64_t header = t2fs_branch_header_len(count);
    if (header > space)
        return s3_fail(S3_ERR_FORMAT, err, errlen,
                       "branch at 0x%llx: count %u needs a %llu-byte table, the node has %llu bytes",
                       (unsigned long long)off, count, (unsigned long long)header, (unsigned long long)space);
    /* the count against the bytes that exist, before anything is allocated for it: a node
     * of a file cut short is given its full declared space, which may lie past the end */
    uint64_t table = 4 * ((uint64_t)count + 1);
    if (!range_ok(off + 4, table, src->size)) /* off + 4 <= size: the count was read */
        return s3_fail(S3_ERR_RANGE, err, errlen,
                       "branch at 0x%llx: count %u needs a %llu-byte table, the data has %llu bytes there",
                       (unsigned long long)off, count, (unsigned long long)(4 + table),
                       (unsigned long long)(src->size - off));
    enum s3_err e = S3_OK;
    uint8_t *raw = malloc((size_t)table);
    b->offset = malloc((size_t)table);
    if (!raw || !b->offset || src_read(src, off + 4, raw, (size_t)table)) {
        e = s3_fail(raw && b->offset ? S3_ERR_IO : S3_ERR_NOMEM, err, errlen, "branch at 0x%llx: cannot read its table",
                    (unsigned long long)off);
        goto fail;
    }
    uint32_t prev = 0;
    for (uint64_t i = 0; i <= count; i++) {
        uint32_t o = ld_u32(raw + 4 * i, be);
        const char *why = offset_flaw(i, o, prev, header, space);
        if (why) {
            e = s3_fail(S3_ERR_FORMAT, err, errlen, "branch at 0x%llx: offset[%llu] = 0x%x: %s (node size %llu)",
                        (unsigned long long)off, (unsigned long long)i, o, why, (unsigned long long)space);
            goto fail;
        }
        b->offset[i] = prev = o;
    }
    free(raw);
    b->count = count;
    b->header_len = (uint32_t)header;
    return S3_OK;
fail:
    free(raw);
    t2fs_branch_free(b);
    return e;
}

void t2fs_branch_free(struct t2fs_branch *b)
{
    free(b->offset);
    b->offset = NULL;
    b->count = 0;
}

enum s3_err t2fs_read_array(const struct s3_src *src, uint64_t off, uint64_t space, bool be, uint32_t *elem_size,
                            uint32_t *count, char *err, size_t errlen)
{
    if (space < 8 || src_u32(src, off, be, elem_size) || src_u32(src, off + 4, be, count))
        return s3_fail(space < 8 ? S3_ERR_FORMAT : S3_ERR_RANGE, err, errlen,
                       "array at 0x%llx: %llu bytes, too small for its 8-byte header", (unsigned long long)off,
                       (unsigned long long)space);
    uint64_t need = 8 + (uint64_t)*elem_size * *count;
    if (need > space)
        return s3_fail(S3_ERR_FORMAT, err, errlen,
                       "array at 0x%llx: %u elements of %u bytes need %llu bytes, the node has %llu",
                       (unsigned long long)off, *count, *elem_size, (unsigned long long)need,
                       (unsigned long long)space);
    return S3_OK;
}

enum s3_err t2fs_array_bytes(const uint8_t *p, size_t len, bool be, uint32_t *elem_size, uint32_t *count)
{
    struct mem_src_ctx mc;
    struct s3_src src;
    char err[T2FS_ERR];
    mem_src_init(&src, &mc, p, len);
    return t2fs_read_array(&src, 0, len, be, elem_size, count, err, sizeof err);
}

int t2fs_rnc_method(const struct s3_src *src, uint64_t off, uint64_t space)
{
    uint8_t h[4];
    if (space < 18 || src_read(src, off, h, 4) || memcmp(h, "RNC", 3) != 0)
        return 0;
    return h[3] == 1 || h[3] == 2 ? h[3] : -1;
}

/* What branch_check found at an offset: not a branch table, a whole one, or one cut. */
enum table_fit { TABLE_NONE, TABLE_WHOLE, TABLE_CUT };

/* TABLE_WHOLE when a t2fs branch table starts at off and fits in space; with past_end,
 * TABLE_CUT when it is one in every rule but that its offsets run past space (*needs: the
 * end its last offset names), as a truncated file's root does. Without past_end the first
 * offset past space ends the check (no scan of a large leaf that only starts like a
 * table). A detection test: no table is an answer, not a failure. */
static enum table_fit branch_check(const struct s3_src *src, uint64_t off, uint64_t space, bool be, bool past_end,
                                   uint64_t *needs)
{
    uint32_t count;
    if (space < 8 || src_u32(src, off, be, &count))
        return TABLE_NONE;
    uint64_t header = (4 + 4 * ((uint64_t)count + 1) + 7) & ~7ull;
    if (header > space)
        return TABLE_NONE;
    uint32_t prev = 0;
    for (uint64_t i = 0; i <= count; i++) {
        uint32_t o;
        if (src_u32(src, off + 4 + 4 * i, be, &o))
            return TABLE_NONE;
        if ((i == 0 && o != header) || o < prev || (o & 7) || (o > space && !past_end))
            return TABLE_NONE;
        if (past_end && i > 0 && o == prev) /* a cut root: every child at least 8 bytes (below) */
            return TABLE_NONE;
        prev = o;
    }
    *needs = prev;
    return prev > space ? TABLE_CUT : TABLE_WHOLE;
}

bool t2fs_branch_valid(const struct s3_src *src, uint64_t off, uint64_t space, bool be)
{
    uint64_t needs;
    return branch_check(src, off, space, be, false, &needs) == TABLE_WHOLE;
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
static bool t2fs_cut_short(const struct s3_src *src, struct detect_result *r);

bool t2fs_detect(const struct s3_src *src, const uint8_t *head, size_t n, struct detect_result *r)
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
                                     branch_check(src, skip, src->size - skip, be, true, &needs) == TABLE_CUT;
                if (ok) {
                    r->big_endian = be;
                    r->root_off = skip;
                    r->root_cut = cut;
                    return true;
                }
            }
        }
    t2fs_cut_short(src, r); /* refused; says why when the root's own table is cut short */
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
                continue; /* the table fits: t2fs_detect decided */
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
