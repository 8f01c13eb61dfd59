#include "parse/t2fs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint64_t t2fs_branch_header_len(uint64_t count)
{
    return (4 + 4 * (count + 1) + 7) & ~7ull;
}

int t2fs_read_branch(const struct s3_src *src, uint64_t off, uint64_t space, bool be, struct t2fs_branch *b,
                     char *err, size_t errlen)
{
    memset(b, 0, sizeof *b);
    uint32_t count;
    if (space < 8 || src_u32(src, off, be, &count)) {
        snprintf(err, errlen, "branch at 0x%llx: %llu bytes, too small for a table", (unsigned long long)off,
                 (unsigned long long)space);
        return -1;
    }
    uint64_t header = t2fs_branch_header_len(count);
    if (header > space) {
        snprintf(err, errlen, "branch at 0x%llx: count %u needs a %llu-byte table, the node has %llu bytes",
                 (unsigned long long)off, count, (unsigned long long)header, (unsigned long long)space);
        return -1;
    }
    /* the count against the bytes that exist, before anything is allocated for it: a node
     * of a file cut short is given its full declared space, which may lie past the end */
    uint64_t table = 4 * ((uint64_t)count + 1);
    if (!range_ok(off + 4, table, src->size)) { /* off + 4 <= size: the count was read */
        snprintf(err, errlen, "branch at 0x%llx: count %u needs a %llu-byte table, the data has %llu bytes there",
                 (unsigned long long)off, count, (unsigned long long)(4 + table),
                 (unsigned long long)(src->size - off));
        return -1;
    }
    uint8_t *raw = malloc((size_t)table);
    b->offset = malloc((size_t)table);
    if (!raw || !b->offset || src_read(src, off + 4, raw, (size_t)table)) {
        free(raw);
        t2fs_branch_free(b);
        snprintf(err, errlen, "branch at 0x%llx: cannot read its table", (unsigned long long)off);
        return -1;
    }
    uint32_t prev = 0;
    for (uint64_t i = 0; i <= count; i++) {
        uint32_t o = ld_u32(raw + 4 * i, be);
        const char *why = NULL;
        if (i == 0 && o != header)
            why = "first offset is not the table length";
        else if (o < prev)
            why = "offsets decrease";
        else if (o & 7)
            why = "offset not a multiple of 8";
        else if (o > space)
            why = "offset past the end of the node";
        if (why) {
            snprintf(err, errlen, "branch at 0x%llx: offset[%llu] = 0x%x: %s (node size %llu)",
                     (unsigned long long)off, (unsigned long long)i, o, why, (unsigned long long)space);
            free(raw);
            t2fs_branch_free(b);
            return -1;
        }
        b->offset[i] = prev = o;
    }
    free(raw);
    b->count = count;
    b->header_len = (uint32_t)header;
    return 0;
}

void t2fs_branch_free(struct t2fs_branch *b)
{
    free(b->offset);
    b->offset = NULL;
    b->count = 0;
}

int t2fs_read_array(const struct s3_src *src, uint64_t off, uint64_t space, bool be, uint32_t *elem_size,
                    uint32_t *count, char *err, size_t errlen)
{
    if (space < 8 || src_u32(src, off, be, elem_size) || src_u32(src, off + 4, be, count)) {
        snprintf(err, errlen, "array at 0x%llx: %llu bytes, too small for its 8-byte header",
                 (unsigned long long)off, (unsigned long long)space);
        return -1;
    }
    uint64_t need = 8 + (uint64_t)*elem_size * *count;
    if (need > space) {
        snprintf(err, errlen, "array at 0x%llx: %u elements of %u bytes need %llu bytes, the node has %llu",
                 (unsigned long long)off, *count, *elem_size, (unsigned long long)need, (unsigned long long)space);
        return -1;
    }
    return 0;
}

int t2fs_array_bytes(const uint8_t *p, size_t len, bool be, uint32_t *elem_size, uint32_t *count)
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
