#include "parse/gr2/gr2.h"

#include "parse/base/err.h"
#include "parse/codec/bitknit2.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static const struct {
    uint8_t bytes[16];
    struct gr2_signature sig;
} signatures[] = {
    {{0xb8, 0x67, 0xb0, 0xca, 0xf8, 0x6d, 0xb1, 0x0f, 0x84, 0x72, 0x8c, 0x7e, 0x5e, 0x19, 0x00, 0x1e},
     {"le32-old", false, 32, false}},
    {{0x29, 0xde, 0x6c, 0xc0, 0xba, 0xa4, 0x53, 0x2b, 0x25, 0xf5, 0xb7, 0xa5, 0xf6, 0x66, 0xe2, 0xee},
     {"le32", false, 32, false}},
    {{0xe5, 0x9b, 0x49, 0x5e, 0x6f, 0x63, 0x1f, 0x14, 0x1e, 0x13, 0xeb, 0xa9, 0x90, 0xbe, 0xed, 0xc4},
     {"le64", false, 64, false}},
    {{0xb5, 0x95, 0x11, 0x0e, 0x4b, 0xb5, 0xa5, 0x6a, 0x50, 0x28, 0x28, 0xeb, 0x04, 0xb3, 0x78, 0x25},
     {"be32", true, 32, false}},
    {{0xe3, 0xd4, 0x95, 0x31, 0x62, 0x4f, 0xdc, 0x20, 0x3a, 0xd0, 0x36, 0xcc, 0x89, 0xff, 0x82, 0xb1},
     {"be64", true, 64, false}},
    {{0xca, 0xb0, 0x67, 0xb8, 0x0f, 0xb1, 0x6d, 0xf8, 0x7e, 0x8c, 0x72, 0x84, 0x1e, 0x00, 0x19, 0x5e},
     {"be32-old", true, 32, false}},
    /* The seed's spelling of the BE signatures: the LE image of the same words. */
    {{0x0e, 0x11, 0x95, 0xb5, 0x6a, 0xa5, 0xb5, 0x4b, 0xeb, 0x28, 0x28, 0x50, 0x25, 0x78, 0xb3, 0x04},
     {"be32", true, 32, true}},
    {{0x31, 0x95, 0xd4, 0xe3, 0x20, 0xdc, 0x4f, 0x62, 0xcc, 0x36, 0xd0, 0x3a, 0xb1, 0x82, 0xff, 0x89},
     {"be64", true, 64, true}},
};

const struct gr2_signature *gr2_match_signature(const uint8_t sig[16])
{
    for (size_t i = 0; i < sizeof signatures / sizeof signatures[0]; i++)
        if (memcmp(sig, signatures[i].bytes, 16) == 0)
            return &signatures[i].sig;
    return NULL;
}

const char *gr2_compression_name(uint32_t code)
{
    static const char *names[] = {"none", "oodle0", "oodle1", "bitknit1", "bitknit2"};
    return code < 5 ? names[code] : "unknown";
}

enum s3_err crc32_range(const struct s3_src *src, uint64_t off, uint64_t len, uint32_t *out)
{
    if (!range_ok(off, len, src->size))
        return S3_ERR_RANGE;
    uint8_t buf[65536];
    uLong crc = crc32(0L, Z_NULL, 0);
    while (len > 0) {
        size_t n = len < sizeof buf ? (size_t)len : sizeof buf;
        enum s3_err rc = src_read(src, off, buf, n);
        if (rc)
            return rc;
        crc = crc32(crc, buf, (uInt)n);
        off += n;
        len -= n;
    }
    *out = (uint32_t)crc;
    return S3_OK;
}

static enum s3_err parse_magic_block(const struct s3_src *src, struct gr2_file *g, char *err, size_t errlen)
{
    uint8_t b[GR2_MAGIC_SIZE];
    if (src_read(src, g->base, b, sizeof b))
        return s3_fail(S3_ERR_RANGE, err, errlen, "GR2 magic block at 0x%llx: needs 32 bytes, only %llu exist",
                       (unsigned long long)g->base, (unsigned long long)g->avail);
    memcpy(g->magic, b, 16);
    g->sig = gr2_match_signature(b);
    if (!g->sig)
        return s3_fail(S3_ERR_FORMAT, err, errlen, "no GR2 signature at 0x%llx", (unsigned long long)g->base);
    g->be = g->sig->big_endian;
    g->pointer_bits = g->sig->pointer_bits;
    struct cursor c;
    cur_init(&c, b + 16, 16, g->be);
    g->headers_size = cur_u32(&c);
    g->header_format = cur_u32(&c);
    g->magic_reserved[0] = cur_u32(&c);
    g->magic_reserved[1] = cur_u32(&c);
    return S3_OK;
}

static enum s3_err parse_file_header(const struct s3_src *src, struct gr2_file *g, struct diag *d, char *err,
                                     size_t errlen)
{
    uint8_t b[0x48];
    if (src_read(src, g->base + 0x20, b, 4))
        return s3_fail(S3_ERR_RANGE, err, errlen, "GR2 file header at 0x%llx: truncated before the version field",
                       (unsigned long long)(g->base + 0x20));
    g->version = ld_u32(b, g->be);
    if (g->version != 6 && g->version != 7)
        return s3_fail(S3_ERR_UNSUPPORTED, err, errlen,
                       "GR2 file header at 0x%llx: unsupported version %u (known: 6, 7)",
                       (unsigned long long)(g->base + 0x20), g->version);
    g->header_length = g->version == 6 ? 0x38 : 0x48;
    if (src_read(src, g->base + 0x20, b, g->header_length))
        return s3_fail(S3_ERR_RANGE, err, errlen, "GR2 v%u file header at 0x%llx: needs %u bytes, only %llu exist",
                       g->version, (unsigned long long)(g->base + 0x20), g->header_length,
                       (unsigned long long)(g->avail > 0x20 ? g->avail - 0x20 : 0));
    struct cursor c;
    cur_init(&c, b, g->header_length, g->be);
    cur_skip(&c, 4);
    g->total_size = cur_u32(&c);
    g->crc = cur_u32(&c);
    g->section_array_offset = cur_u32(&c);
    g->section_count = cur_u32(&c);
    g->root_type.section = cur_u32(&c);
    g->root_type.offset = cur_u32(&c);
    g->root_object.section = cur_u32(&c);
    g->root_object.offset = cur_u32(&c);
    g->type_tag = cur_u32(&c);
    for (int i = 0; i < 4; i++)
        g->extra_tags[i] = cur_u32(&c);
    if (g->version == 7) {
        g->string_table_crc = cur_u32(&c);
        for (int i = 0; i < 3; i++)
            g->v7_reserved[i] = cur_u32(&c);
    }
    /* a warning refused memory fails the parse (NOMEM), never a file without it */
    enum s3_err e = S3_OK;
    if (g->sig->alt_spelling)
        e = diag_add(d, "GR2 signature is the little-endian spelling of the %s signature", g->sig->name);
    if (e == S3_OK && g->header_format != 0)
        e = diag_add(d, "GR2 header_format is %u (only 0 is known)", g->header_format);
    if (e == S3_OK &&
        g->headers_size != 0x20 + g->header_length + g->section_count * (uint64_t)GR2_SECTION_HEADER_SIZE)
        e = diag_add(d, "GR2 headers_size %u disagrees with header length and section count (%llu)",
                     g->headers_size,
                     (unsigned long long)(0x20 + g->header_length +
                                          g->section_count * (uint64_t)GR2_SECTION_HEADER_SIZE));
    return e == S3_OK ? S3_OK : s3_fail(e, err, errlen, "out of memory");
}

/* S3_OK, or NOMEM when a warning is refused memory. */
static enum s3_err check_total_size(struct gr2_file *g, struct diag *d)
{
    enum s3_err e = S3_OK;
    g->limit = g->total_size;
    if (g->total_size > g->avail) {
        e = diag_add(d, "GR2 total_size %u runs past the end of the file (%llu bytes available): truncated",
                     g->total_size, (unsigned long long)g->avail);
        g->limit = g->avail;
    }
    if (e == S3_OK && g->total_size < 0x20 + g->header_length)
        e = diag_add(d, "GR2 total_size %u is smaller than its own header", g->total_size);
    return e;
}

bool gr2_crc_span(const struct gr2_file *g, struct gr2_crc_span *out)
{
    out->field = 0x28;
    out->from = 0x20 + (uint64_t)g->header_length;
    out->to = g->total_size;
    return g->header_length != 0 && out->to >= out->from && out->to <= g->avail;
}

/* S3_OK, or NOMEM when a warning is refused memory. */
static enum s3_err check_crc(const struct s3_src *src, struct gr2_file *g, struct diag *d)
{
    struct gr2_crc_span span;
    if (!gr2_crc_span(g, &span))
        return diag_add(d, "GR2 CRC not checked: total_size %u does not fit the data", g->total_size);
    if (crc32_range(src, g->base + span.from, span.to - span.from, &g->crc_computed) != S3_OK)
        return diag_add(d, "GR2 CRC not checked: read error");
    g->crc_checked = true;
    if (g->crc_computed != g->crc)
        return diag_add(d, "GR2 CRC mismatch: stored 0x%08x, computed 0x%08x", g->crc, g->crc_computed);
    return S3_OK;
}

bool gr2_tables_compressed(uint32_t code)
{
    return code == GR2_COMP_BITKNIT2;
}

/* A table of count records of `size` bytes at offset must fit inside the container. */
static bool table_fits(const struct gr2_file *g, uint32_t offset, uint32_t count, uint32_t size, char *err,
                       const char *what, uint64_t *stored)
{
    uint64_t bytes = (uint64_t)count * size;
    *stored = 0;
    if (range_ok(offset, bytes, g->limit)) {
        *stored = bytes;
        return true;
    }
    snprintf(err, GR2_ERR, "%s at 0x%x: %u entries of %u bytes run past the end of the Granny data (%llu bytes)",
             what, offset, count, size, (unsigned long long)g->limit);
    return false;
}

/* A compressed table: a u32 byte count, then that many bytes of stream, all inside the
 * container. Count 0 has no table at all. */
static bool compressed_table_fits(const struct s3_src *src, const struct gr2_file *g, uint32_t offset,
                                  uint32_t count, char *err, const char *what, uint64_t *stored)
{
    uint32_t bytes;
    *stored = 0;
    if (count == 0)
        return true;
    if (!range_ok(offset, 4, g->limit) || src_u32(src, g->base + offset, g->be, &bytes)) {
        snprintf(err, GR2_ERR, "%s at 0x%x: its byte count lies past the end of the Granny data (%llu bytes)", what,
                 offset, (unsigned long long)g->limit);
        return false;
    }
    if (!range_ok(offset + 4ull, bytes, g->limit)) {
        snprintf(err, GR2_ERR, "%s at 0x%x: a %u-byte compressed stream runs past the end of the Granny data "
                 "(%llu bytes)", what, offset, bytes, (unsigned long long)g->limit);
        return false;
    }
    *stored = 4ull + bytes;
    return true;
}

/* S3_OK, or NOMEM when a warning is refused memory. */
static enum s3_err check_section(const struct s3_src *src, struct gr2_file *g, uint32_t i, struct diag *d)
{
    struct gr2_section *s = &g->sections[i];
    enum s3_err e = S3_OK;
    s->data_ok = range_ok(s->data_offset, s->data_size, g->limit);
    if (!s->data_ok)
        snprintf(s->data_err, GR2_ERR,
                 "section %u data at 0x%x, %u bytes, runs past the end of the Granny data (%llu bytes)", i,
                 s->data_offset, s->data_size, (unsigned long long)g->limit);
    if (s->compression == GR2_COMP_NONE && s->data_size != s->expanded_size)
        e = diag_add(d, "section %u: uncompressed but data_size %u != expanded_size %u", i, s->data_size,
                     s->expanded_size);
    if (e == S3_OK && s->compression > GR2_COMP_BITKNIT2)
        e = diag_add(d, "section %u: unknown compression code %u", i, s->compression);
    /* the stage stops belong to Oodle; BitKnit2 sections carry values the codec ignores */
    if (e == S3_OK && s->compression != GR2_COMP_BITKNIT2 &&
        (s->first16bit > s->first8bit || s->first8bit > s->expanded_size))
        e = diag_add(d, "section %u: first16bit %u / first8bit %u / expanded_size %u out of order", i,
                     s->first16bit, s->first8bit, s->expanded_size);
    if (gr2_tables_compressed(s->compression)) {
        s->fixups_ok = compressed_table_fits(src, g, s->fixup_offset, s->fixup_count, s->fixups_err,
                                             "compressed fixup table", &s->fixup_stored);
        s->marshal_ok = compressed_table_fits(src, g, s->marshal_offset, s->marshal_count, s->marshal_err,
                                              "compressed marshalling table", &s->marshal_stored);
        return e;
    }
    s->fixups_ok = table_fits(g, s->fixup_offset, s->fixup_count, GR2_FIXUP_SIZE, s->fixups_err, "fixup table",
                              &s->fixup_stored);
    s->marshal_ok = table_fits(g, s->marshal_offset, s->marshal_count, GR2_MARSHAL_SIZE, s->marshal_err,
                               "marshalling table", &s->marshal_stored);
    return e;
}

static enum s3_err parse_sections(const struct s3_src *src, struct gr2_file *g, struct diag *d)
{
    uint64_t pos = 0x20 + (uint64_t)g->section_array_offset;
    uint64_t room = pos < g->limit ? (g->limit - pos) / GR2_SECTION_HEADER_SIZE : 0;
    uint32_t n = g->section_count;
    if (n > room) {
        snprintf(g->sections_err, GR2_ERR,
                 "section_count %u at 0x%llx: only %llu section headers fit inside the Granny data", n,
                 (unsigned long long)pos, (unsigned long long)room);
        if (diag_add(d, "%s", g->sections_err) != S3_OK)
            return S3_ERR_NOMEM;
        n = (uint32_t)room;
    }
    g->sections = alloc_array(n, sizeof *g->sections);
    if (!g->sections)
        return S3_ERR_NOMEM;
    for (uint32_t i = 0; i < n; i++) {
        uint8_t b[GR2_SECTION_HEADER_SIZE];
        uint64_t at = pos + (uint64_t)i * GR2_SECTION_HEADER_SIZE;
        if (src_read(src, g->base + at, b, sizeof b))
            return S3_ERR_IO;
        struct cursor c;
        cur_init(&c, b, sizeof b, g->be);
        struct gr2_section *s = &g->sections[i];
        s->header_pos = at;
        s->compression = cur_u32(&c);
        s->data_offset = cur_u32(&c);
        s->data_size = cur_u32(&c);
        s->expanded_size = cur_u32(&c);
        s->alignment = cur_u32(&c);
        s->first16bit = cur_u32(&c);
        s->first8bit = cur_u32(&c);
        s->fixup_offset = cur_u32(&c);
        s->fixup_count = cur_u32(&c);
        s->marshal_offset = cur_u32(&c);
        s->marshal_count = cur_u32(&c);
        g->nsections = i + 1;
        enum s3_err e = check_section(src, g, i, d);
        if (e)
            return e;
    }
    return S3_OK;
}

enum s3_err gr2_parse(const struct s3_src *src, uint64_t base, struct gr2_file *g, struct diag *d, char *err,
                      size_t errlen)
{
    memset(g, 0, sizeof *g);
    g->base = base;
    g->avail = base <= src->size ? src->size - base : 0;
    enum s3_err e = parse_magic_block(src, g, err, errlen);
    if (e == S3_OK)
        e = parse_file_header(src, g, d, err, errlen);
    if (e != S3_OK)
        return e;
    e = check_total_size(g, d);
    if (e == S3_OK)
        e = check_crc(src, g, d);
    if (e == S3_OK)
        e = parse_sections(src, g, d);
    if (e != S3_OK)
        goto fail;
    return S3_OK;
fail:
    s3_fail(e, err, errlen, "GR2 section headers: %s", s3_err_str(e));
    gr2_free(g);
    return e;
}

void gr2_free(struct gr2_file *g)
{
    free(g->sections);
    g->sections = NULL;
    g->nsections = 0;
}

/* Reads count records of rec_size bytes at a container offset into one buffer. */
static enum s3_err read_table(const struct s3_src *src, const struct gr2_file *g, uint32_t offset, uint32_t count,
                              uint32_t rec_size, uint8_t **out)
{
    *out = NULL;
    if (count == 0)
        return S3_OK;
    uint64_t bytes = (uint64_t)count * rec_size;
    if (!range_ok(offset, bytes, g->limit))
        return S3_ERR_RANGE;
    uint8_t *b = malloc(bytes);
    if (!b)
        return S3_ERR_NOMEM;
    if (src_read(src, g->base + offset, b, bytes)) {
        free(b);
        return S3_ERR_IO;
    }
    *out = b;
    return S3_OK;
}

/* Where a table is, and how it is stored. */
struct table_loc {
    bool ok, compressed;
    uint32_t offset, count;
    uint64_t stored;
    const char *what;
};

/* Expands a compressed table (u32 byte count, then the stream) to count × rec_size. */
static enum s3_err expand_table(const struct s3_src *src, const struct gr2_file *g, const struct table_loc *t,
                                uint32_t rec_size, uint8_t **out, char *err, size_t errlen)
{
    *out = NULL;
    if (t->count == 0)
        return S3_OK;
    uint64_t max = g->max_expanded ? g->max_expanded : GR2_MAX_EXPANDED;
    char why[GR2_ERR];
    enum s3_err e = bitknit2_expand(src, g->base + t->offset + 4, t->stored - 4, (uint64_t)t->count * rec_size, max,
                                    out, NULL, why, sizeof why);
    if (e != S3_OK)
        return s3_fail(e, err, errlen, "%s at 0x%x (%u entries): %s", t->what, t->offset, t->count, why);
    return S3_OK;
}

/* Reads a table of `count` records of `size` bytes and decodes each into `out` (an array
 * of elements of `elem` bytes) with `decode`. */
static enum s3_err read_records(const struct s3_src *src, const struct gr2_file *g, const struct table_loc *t,
                                uint32_t size, size_t elem, void (*decode)(const uint8_t *, bool, void *),
                                void **out, uint32_t *n, char *err, size_t errlen)
{
    *out = NULL;
    *n = 0;
    if (!t->ok) /* its reason is the section's (fixups_err, marshal_err) */
        return s3_fail(S3_ERR_RANGE, err, errlen, "%s: not readable", t->what);
    uint8_t *b;
    enum s3_err e = t->compressed ? expand_table(src, g, t, size, &b, err, errlen)
                                  : read_table(src, g, t->offset, t->count, size, &b);
    if (e != S3_OK && !t->compressed)
        s3_fail(e, err, errlen, "%s at 0x%x: read error", t->what, t->offset);
    if (e != S3_OK || !b)
        return e;
    uint8_t *recs = calloc(t->count, elem);
    if (!recs) {
        free(b);
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    }
    for (uint32_t i = 0; i < t->count; i++)
        decode(b + (size_t)i * size, g->be, recs + (size_t)i * elem);
    free(b);
    *out = recs;
    *n = t->count;
    return S3_OK;
}

static void decode_fixup(const uint8_t *p, bool be, void *out)
{
    struct gr2_fixup *f = out;
    f->from_offset = ld_u32(p, be);
    f->to_section = ld_u32(p + 4, be);
    f->to_offset = ld_u32(p + 8, be);
}

static void decode_marshal(const uint8_t *p, bool be, void *out)
{
    struct gr2_marshal *m = out;
    m->count = ld_u32(p, be);
    m->offset = ld_u32(p + 4, be);
    m->type_section = ld_u32(p + 8, be);
    m->type_offset = ld_u32(p + 12, be);
}

enum s3_err gr2_read_fixups(const struct s3_src *src, const struct gr2_file *g, uint32_t sec, struct gr2_fixup **out,
                            uint32_t *count, char *err, size_t errlen)
{
    const struct gr2_section *s = &g->sections[sec];
    struct table_loc t = {s->fixups_ok, gr2_tables_compressed(s->compression), s->fixup_offset, s->fixup_count,
                          s->fixup_stored, "fixup table"};
    return read_records(src, g, &t, GR2_FIXUP_SIZE, sizeof **out, decode_fixup, (void **)out, count, err, errlen);
}

enum s3_err gr2_read_marshals(const struct s3_src *src, const struct gr2_file *g, uint32_t sec,
                              struct gr2_marshal **out, uint32_t *count, char *err, size_t errlen)
{
    const struct gr2_section *s = &g->sections[sec];
    struct table_loc t = {s->marshal_ok, gr2_tables_compressed(s->compression), s->marshal_offset,
                          s->marshal_count, s->marshal_stored, "marshalling table"};
    return read_records(src, g, &t, GR2_MARSHAL_SIZE, sizeof **out, decode_marshal, (void **)out, count, err,
                        errlen);
}

/* ---- a section written back raw ---- */

static void st_u32(uint8_t *p, uint32_t v, bool be)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> 8 * (be ? 3 - i : i));
}

/* The section's fixup and marshalling tables as raw records into out (room for both),
 * each table 4-aligned from out_at on: their offsets (relative to the Granny data). */
static enum s3_err raw_tables(const struct s3_src *src, const struct gr2_file *g, uint32_t sec, uint64_t out_at,
                              uint8_t *out, uint64_t *fix_at, uint64_t *mar_at, char *err, size_t errlen)
{
    struct gr2_fixup *f = NULL;
    struct gr2_marshal *m = NULL;
    uint32_t nf = 0, nm = 0;
    enum s3_err e = gr2_read_fixups(src, g, sec, &f, &nf, err, errlen);
    if (e == S3_OK)
        e = gr2_read_marshals(src, g, sec, &m, &nm, err, errlen);
    if (e == S3_OK) {
        *fix_at = out_at;
        for (uint32_t i = 0; i < nf; i++) {
            st_u32(out + 12 * (size_t)i, f[i].from_offset, g->be);
            st_u32(out + 12 * (size_t)i + 4, f[i].to_section, g->be);
            st_u32(out + 12 * (size_t)i + 8, f[i].to_offset, g->be);
        }
        *mar_at = out_at + 12ull * nf; /* a multiple of 4 */
        uint8_t *o = out + 12 * (size_t)nf;
        for (uint32_t i = 0; i < nm; i++) {
            st_u32(o + 16 * (size_t)i, m[i].count, g->be);
            st_u32(o + 16 * (size_t)i + 4, m[i].offset, g->be);
            st_u32(o + 16 * (size_t)i + 8, m[i].type_section, g->be);
            st_u32(o + 16 * (size_t)i + 12, m[i].type_offset, g->be);
        }
    }
    free(f);
    free(m);
    return e;
}

enum s3_err gr2_raw_section_plan(const struct s3_src *src, const struct gr2_file *g, uint32_t sec, uint64_t at,
                                 uint64_t len, struct gr2_raw_plan *p, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    if (sec >= g->nsections)
        return s3_fail(S3_ERR_RANGE, err, errlen, "section %u: no such section", sec);
    const struct gr2_section *s = &g->sections[sec];
    bool tables = gr2_tables_compressed(s->compression) && (s->fixup_count || s->marshal_count);
    uint64_t pad = (4 - len % 4) % 4;
    uint64_t tables_len = tables ? 12ull * s->fixup_count + 16ull * s->marshal_count : 0;
    p->total = at + len + pad + tables_len;
    if (at % 4 || at < g->total_size)
        return s3_fail(S3_ERR_RANGE, err, errlen, "section %u: its raw bytes must go 4-aligned past the data's end",
                       sec);
    if (p->total > UINT32_MAX)
        return s3_fail(S3_ERR_LIMIT, err, errlen, "section %u stored raw would take the Granny data past 4 GiB", sec);
    p->after_len = (size_t)(pad + tables_len);
    p->after = p->after_len ? calloc(1, p->after_len) : NULL;
    if (p->after_len && !p->after)
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    uint64_t fix_at = s->fixup_offset, mar_at = s->marshal_offset;
    if (tables) {
        enum s3_err e = raw_tables(src, g, sec, at + len + pad, p->after + pad, &fix_at, &mar_at, err, errlen);
        if (e != S3_OK) {
            free(p->after);
            p->after = NULL;
            return e;
        }
    }
    const uint32_t fields[11] = {GR2_COMP_NONE, (uint32_t)at,      (uint32_t)len,    (uint32_t)len,
                                 s->alignment,  (uint32_t)len,     (uint32_t)len,    (uint32_t)fix_at,
                                 s->fixup_count, (uint32_t)mar_at, s->marshal_count};
    for (int i = 0; i < 11; i++)
        st_u32(p->header + 4 * i, fields[i], g->be);
    p->total_field = 0x24; /* after the signature block and the version */
    st_u32(p->total_bytes, (uint32_t)p->total, g->be);
    return S3_OK;
}

/* ---- alignment padding ---- */

struct piece {
    uint64_t off, len;
    uint32_t sec;
    const char *kind; /* NULL for the headers */
};

static int by_piece_off(const void *a, const void *b)
{
    const struct piece *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* The parts of the container that hold something: the headers and every section's
 * stored data and tables (empty ones left out). p has room for 2 + 3 × nsections. */
static size_t container_pieces(const struct gr2_file *g, struct piece *p)
{
    size_t n = 0;
    p[n++] = (struct piece){0, 0x20 + (uint64_t)g->header_length, 0, NULL};
    p[n++] = (struct piece){0x20 + (uint64_t)g->section_array_offset,
                            (uint64_t)g->nsections * GR2_SECTION_HEADER_SIZE, 0, NULL};
    for (uint32_t i = 0; i < g->nsections; i++) {
        const struct gr2_section *s = &g->sections[i];
        if (s->data_ok && s->data_size)
            p[n++] = (struct piece){s->data_offset, s->data_size, i, "data"};
        if (s->fixup_stored)
            p[n++] = (struct piece){s->fixup_offset, s->fixup_stored, i, "fixups"};
        if (s->marshal_stored)
            p[n++] = (struct piece){s->marshal_offset, s->marshal_stored, i, "marshalling"};
    }
    return n;
}

static int by_padding_off(const void *a, const void *b)
{
    const struct gr2_padding *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

static bool all_zero(const struct s3_src *src, uint64_t off, uint64_t len)
{
    uint8_t b[65536];
    if (len > sizeof b || src_read(src, off, b, (size_t)len))
        return false;
    for (uint64_t i = 0; i < len; i++)
        if (b[i])
            return false;
    return true;
}

/* After the pieces are sorted: a piece's end is followed by padding when no piece covers
 * that byte, the next piece (or the container's end) starts fewer than `alignment` bytes
 * later, and the bytes between are zero. */
enum s3_err gr2_find_padding(const struct s3_src *src, const struct gr2_file *g, struct gr2_padding **out,
                             size_t *nout)
{
    *out = NULL;
    *nout = 0;
    struct piece *p = alloc_array(2 + 3 * (size_t)g->nsections, sizeof *p);
    uint64_t *maxend = alloc_array(2 + 3 * (size_t)g->nsections, sizeof *maxend);
    struct gr2_padding *r = alloc_array(3 * (size_t)g->nsections + 1, sizeof *r);
    if (!p || !maxend || !r) {
        free(p);
        free(maxend);
        free(r);
        return S3_ERR_NOMEM;
    }
    size_t n = container_pieces(g, p), nr = 0;
    qsort(p, n, sizeof *p, by_piece_off);
    for (size_t i = 0; i < n; i++) /* maxend[i]: the furthest end among pieces 0..i */
        maxend[i] = i && maxend[i - 1] > p[i].off + p[i].len ? maxend[i - 1] : p[i].off + p[i].len;
    for (size_t i = 0; i < n; i++) {
        if (!p[i].kind)
            continue;
        uint64_t end = p[i].off + p[i].len;
        size_t lo = 0, hi = n; /* the first piece starting at or after end */
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (p[mid].off < end)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo > 0 && maxend[lo - 1] > end)
            continue; /* another piece covers the byte after this one */
        uint64_t next = lo < n ? p[lo].off : g->limit;
        uint32_t align = g->sections[p[i].sec].alignment;
        if (next <= end || next - end >= align || next > g->limit)
            continue;
        r[nr++] = (struct gr2_padding){end, next - end, p[i].sec, p[i].kind};
    }
    free(p);
    free(maxend);
    /* Pieces ending at one place share one gap: it is read and named once. The gaps left
     * are disjoint (a later end inside an earlier gap would belong to a piece covering
     * that gap's start), so all the reading below is at most the file's size. */
    qsort(r, nr, sizeof *r, by_padding_off);
    size_t k = 0;
    for (size_t i = 0; i < nr; i++)
        if ((i == 0 || r[i - 1].off != r[i].off) && all_zero(src, g->base + r[i].off, r[i].len))
            r[k++] = r[i];
    *out = r;
    *nout = k;
    return S3_OK;
}

bool gr2_detect(const struct s3_src *src, const uint8_t *head, size_t n, struct detect_result *r)
{
    (void)src, (void)r;
    return n == 16 && gr2_match_signature(head);
}
