#include "fixture.h"
#include "bitknit2enc.h"
#include "fixture_gr2obj.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static void fx_reserve(struct fxbuf *b, size_t n)
{
    if (b->len + n <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n)
        cap *= 2;
    b->p = realloc(b->p, cap);
    if (!b->p)
        abort();
    b->cap = cap;
}

void fx_put(struct fxbuf *b, const void *data, size_t n)
{
    fx_reserve(b, n);
    if (n)
        memcpy(b->p + b->len, data, n);
    b->len += n;
}

void fx_u8(struct fxbuf *b, uint8_t v)
{
    fx_put(b, &v, 1);
}

void fx_u16(struct fxbuf *b, uint16_t v)
{
    uint8_t x[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
    if (b->be) {
        x[0] = (uint8_t)(v >> 8);
        x[1] = (uint8_t)v;
    }
    fx_put(b, x, 2);
}

static void store_u32(uint8_t *x, uint32_t v, bool be)
{
    for (int i = 0; i < 4; i++)
        x[be ? 3 - i : i] = (uint8_t)(v >> (8 * i));
}

void fx_u32(struct fxbuf *b, uint32_t v)
{
    uint8_t x[4];
    store_u32(x, v, b->be);
    fx_put(b, x, 4);
}

void fx_f32(struct fxbuf *b, float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    fx_u32(b, u);
}

void fx_fill(struct fxbuf *b, uint8_t v, size_t n)
{
    fx_reserve(b, n);
    memset(b->p + b->len, v, n);
    b->len += n;
}

void fx_align(struct fxbuf *b, size_t a, uint8_t fill)
{
    while (b->len % a)
        fx_u8(b, fill);
}

void fx_patch_u32(struct fxbuf *b, size_t at, uint32_t v)
{
    store_u32(b->p + at, v, b->be);
}

int fx_write_file(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t w = fwrite(data, 1, size, f);
    return fclose(f) == 0 && w == size ? 0 : -1;
}

/* ---- Granny ---- */

static const struct {
    const char *name;
    bool be;
    uint8_t bytes[16];
} fx_sigs[] = {
    {"le32-old", false, {0xb8, 0x67, 0xb0, 0xca, 0xf8, 0x6d, 0xb1, 0x0f, 0x84, 0x72, 0x8c, 0x7e, 0x5e, 0x19, 0x00, 0x1e}},
    {"le32", false, {0x29, 0xde, 0x6c, 0xc0, 0xba, 0xa4, 0x53, 0x2b, 0x25, 0xf5, 0xb7, 0xa5, 0xf6, 0x66, 0xe2, 0xee}},
    {"le64", false, {0xe5, 0x9b, 0x49, 0x5e, 0x6f, 0x63, 0x1f, 0x14, 0x1e, 0x13, 0xeb, 0xa9, 0x90, 0xbe, 0xed, 0xc4}},
    {"be32", true, {0xb5, 0x95, 0x11, 0x0e, 0x4b, 0xb5, 0xa5, 0x6a, 0x50, 0x28, 0x28, 0xeb, 0x04, 0xb3, 0x78, 0x25}},
    {"be64", true, {0xe3, 0xd4, 0x95, 0x31, 0x62, 0x4f, 0xdc, 0x20, 0x3a, 0xd0, 0x36, 0xcc, 0x89, 0xff, 0x82, 0xb1}},
    {"be32-old", true, {0xca, 0xb0, 0x67, 0xb8, 0x0f, 0xb1, 0x6d, 0xf8, 0x7e, 0x8c, 0x72, 0x84, 0x1e, 0x00, 0x19, 0x5e}},
    {"be32-alt", true, {0x0e, 0x11, 0x95, 0xb5, 0x6a, 0xa5, 0xb5, 0x4b, 0xeb, 0x28, 0x28, 0x50, 0x25, 0x78, 0xb3, 0x04}},
    {"be64-alt", true, {0x31, 0x95, 0xd4, 0xe3, 0x20, 0xdc, 0x4f, 0x62, 0xcc, 0x36, 0xd0, 0x3a, 0xb1, 0x82, 0xff, 0x89}},
};

/* A BitKnit2 stream of data (none at all for 0 bytes: an empty section has no stream);
 * returns the stored size. */
static uint32_t fx_put_bitknit2(struct fxbuf *b, const uint8_t *data, size_t n, bool padded)
{
    if (n == 0)
        return 0;
    struct bk2enc_opts o = {0};
    size_t len;
    uint8_t *z = bk2enc_encode(data, n, &o, &len, NULL);
    fx_put(b, z, len);
    free(z);
    size_t pad = padded ? (4 - len % 4) % 4 : 0;
    fx_fill(b, 0, pad);
    return (uint32_t)(len + pad);
}

/* A table's records as they are, or (compressed) a u32 byte count and their stream;
 * nothing for an empty table. Returns the bytes written. */
static uint32_t fx_put_table(struct fxbuf *b, const struct fxbuf *t, bool compressed)
{
    if (!compressed) {
        fx_put(b, t->p, t->len);
        return (uint32_t)t->len;
    }
    if (t->len == 0)
        return 0;
    struct bk2enc_opts o = {0};
    size_t len;
    uint8_t *z = bk2enc_encode(t->p, t->len, &o, &len, NULL);
    fx_u32(b, (uint32_t)len);
    fx_put(b, z, len);
    free(z);
    return (uint32_t)(4 + len);
}

uint8_t *fx_build_gr2(const struct fx_gr2_opts *o, const struct fx_section *s, uint32_t n, size_t *size,
                      struct fx_gr2_layout *lay)
{
    struct fxbuf b = {0};
    int si = 0;
    while (strcmp(fx_sigs[si].name, o->sig) != 0)
        si++;
    b.be = fx_sigs[si].be;
    memset(lay, 0, sizeof *lay);
    lay->be = b.be;
    memcpy(lay->magic, fx_sigs[si].bytes, 16);
    lay->header_length = o->version == 6 ? 0x38 : 0x48;
    lay->section_array_offset = lay->header_length;
    lay->headers_size = 0x20 + lay->header_length + 44 * n;
    fx_put(&b, fx_sigs[si].bytes, 16);
    fx_u32(&b, lay->headers_size);
    fx_u32(&b, 0);
    fx_u32(&b, 0);
    fx_u32(&b, 0);
    /* file header; total_size and crc patched at the end */
    fx_u32(&b, (uint32_t)o->version);
    fx_u32(&b, 0);
    fx_u32(&b, 0);
    fx_u32(&b, lay->section_array_offset);
    fx_u32(&b, n);
    fx_u32(&b, o->root_type[0]);
    fx_u32(&b, o->root_type[1]);
    fx_u32(&b, o->root_object[0]);
    fx_u32(&b, o->root_object[1]);
    fx_u32(&b, o->type_tag);
    for (int i = 0; i < 4; i++)
        fx_u32(&b, o->extra_tags[i]);
    if (o->version == 7) {
        fx_u32(&b, o->string_table_crc);
        fx_fill(&b, 0, 12);
    }
    size_t sec_hdr = b.len;
    fx_fill(&b, 0, 44 * (size_t)n);
    for (uint32_t i = 0; i < n; i++) {
        fx_align(&b, 4, 0);
        lay->data_offset[i] = (uint32_t)b.len;
        lay->data_size[i] = s[i].data_size;
        lay->nmarshals[i] = s[i].nmarshals;
        lay->gap_after[i] = s[i].gap_after;
        lay->alignment[i] = s[i].alignment;
        if (s[i].bitknit2)
            lay->data_size[i] = fx_put_bitknit2(&b, s[i].data, s[i].data_size, s[i].bitknit2_padded);
        else
            fx_put(&b, s[i].data, s[i].data_size);
        fx_align(&b, 4, 0);
        lay->fixup_offset[i] = (uint32_t)b.len;
        struct fxbuf t = {.be = b.be};
        for (uint32_t k = 0; k < s[i].nfixups; k++) {
            fx_u32(&t, s[i].fixups[k].from);
            fx_u32(&t, s[i].fixups[k].to_section);
            fx_u32(&t, s[i].fixups[k].to_offset);
        }
        lay->fixup_stored[i] = fx_put_table(&b, &t, s[i].bitknit2);
        lay->marshal_offset[i] = (uint32_t)b.len;
        t.len = 0;
        for (uint32_t k = 0; k < s[i].nmarshals; k++) {
            fx_u32(&t, s[i].marshals[k].count);
            fx_u32(&t, s[i].marshals[k].offset);
            fx_u32(&t, s[i].marshals[k].type_section);
            fx_u32(&t, s[i].marshals[k].type_offset);
        }
        lay->marshal_stored[i] = fx_put_table(&b, &t, s[i].bitknit2);
        free(t.p);
        fx_fill(&b, 0xAB, s[i].gap_after);
        size_t h = sec_hdr + 44 * (size_t)i;
        uint32_t f[11] = {s[i].bitknit2 ? 4 : s[i].compression,
                          lay->data_offset[i],
                          lay->data_size[i],
                          s[i].expanded_size ? s[i].expanded_size : s[i].data_size,
                          s[i].alignment,
                          s[i].first16bit,
                          s[i].first8bit,
                          lay->fixup_offset[i],
                          s[i].nfixups,
                          lay->marshal_offset[i],
                          s[i].nmarshals};
        for (int k = 0; k < 11; k++)
            fx_patch_u32(&b, h + 4 * (size_t)k, f[k]);
    }
    lay->nsections = n;
    lay->total_size = (uint32_t)b.len;
    fx_patch_u32(&b, 0x24, lay->total_size);
    size_t start = 0x20 + lay->header_length;
    lay->crc = (uint32_t)crc32(crc32(0, Z_NULL, 0), b.p + start, (uInt)(b.len - start));
    fx_patch_u32(&b, 0x28, o->corrupt_crc ? lay->crc ^ 0x5a5a5a5a : lay->crc);
    *size = b.len;
    return b.p;
}

static const uint8_t sample_data0[40] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20,
                                         'b', 'o', 'n', 'e', 0, 'r', 'o', 'o', 't', 0, 0xff, 0xfe};
static const uint8_t sample_data2[7] = {0xde, 0xad, 0xbe, 0xef, 0x42, 0x43, 0x44};
static const struct fx_fixup sample_fixups[2] = {{0, 0, 20}, {4, 2, 3}};
static const struct fx_marshal sample_marshals[1] = {{2, 8, 0, 24}};

uint8_t *fx_sample_gr2(const char *sig, int version, size_t *size, struct fx_gr2_layout *lay)
{
    struct fx_section s[3] = {
        {.compression = 0, .data = sample_data0, .data_size = sizeof sample_data0, .alignment = 4,
         .first16bit = 20, .first8bit = 20, .fixups = sample_fixups, .nfixups = 2, .marshals = sample_marshals,
         .nmarshals = 1, .gap_after = 8},
        {.compression = 2, .data = NULL, .data_size = 0, .alignment = 4},
        {.compression = 0, .data = sample_data2, .data_size = sizeof sample_data2, .alignment = 1,
         .first16bit = 7, .first8bit = 7},
    };
    struct fx_gr2_opts o = {.version = version, .sig = sig, .type_tag = 0x8000001c,
                            .extra_tags = {1, 2, 3, 0xffffffff}, .string_table_crc = 0x11223344,
                            .root_type = {0, 0}, .root_object = {0, 20}};
    return fx_build_gr2(&o, s, 3, size, lay);
}

/* ---- wrapped RIG ---- */

static size_t chain_size(const struct fx_chain *c)
{
    return 116 + 12 * (size_t)c->length;
}

static void put_chain(struct fxbuf *b, const struct fx_chain *c)
{
    fx_u32(b, c->unknown_0);
    fx_u32(b, c->length);
    fx_fill(b, 0, 32);
    int32_t f[6] = {c->pole, c->pole_root, c->slot_info, c->slot_info_root, c->slot_offset, c->slot_offset_root};
    for (int i = 0; i < 6; i++)
        fx_u32(b, (uint32_t)f[i]);
    fx_u32(b, c->info_node_flags);
    for (int i = 0; i < 10; i++)
        fx_u32(b, (uint32_t)c->info_nodes[i]);
    fx_u32(b, (uint32_t)c->info_root);
    for (uint32_t i = 0; i < c->length; i++)
        fx_u32(b, c->link_values[i]);
    fx_u32(b, (uint32_t)c->root);
    for (uint32_t i = 0; i < c->length; i++) {
        fx_u32(b, (uint32_t)c->links[i].end);
        fx_u32(b, (uint32_t)c->links[i].start);
    }
}

uint8_t *fx_build_rig(const struct fx_rig_opts *o, size_t *size, struct fx_rig_layout *lay)
{
    struct fxbuf b = {0};
    memset(lay, 0, sizeof *lay);
    fx_fill(&b, 0, 52);
    lay->granny_pos = b.len;
    fx_put(&b, o->granny, o->granny_size);
    fx_align(&b, 4, 0);
    lay->ik_pos = b.len;
    fx_u32(&b, o->nchains);
    size_t table = b.len;
    fx_fill(&b, 0, 4 * (size_t)o->nchains);
    for (uint32_t i = 0; i < o->nchains; i++) {
        lay->entry_pos[i] = b.len;
        lay->entry_size[i] = chain_size(&o->chains[i]);
        uint64_t base = o->offsets_from_table ? table : table + 4 * i;
        fx_patch_u32(&b, table + 4 * i, (uint32_t)(b.len - base));
        put_chain(&b, &o->chains[i]);
    }
    lay->unknown_pos = b.len;
    for (int i = 0; i < 56; i++)
        fx_u8(&b, (uint8_t)(0xC0 + i));
    for (int l = 0; l < 4; l++) {
        lay->list_pos[l] = b.len;
        fx_u32(&b, o->list_count[l]);
        for (uint32_t i = 0; i < o->list_count[l]; i++)
            fx_u32(&b, (uint32_t)o->lists[l][i]);
    }
    uint32_t *h = lay->header;
    h[0] = 0x8EAF13DE;
    h[1] = 0;
    h[2] = (uint32_t)o->granny_size;
    h[3] = (uint32_t)(lay->granny_pos - 12);
    h[4] = (uint32_t)(lay->ik_pos - 16);
    for (int l = 0; l < 4; l++)
        h[5 + l] = (uint32_t)(lay->list_pos[l] - (20 + 4 * (uint64_t)l));
    for (int i = 0; i < 4; i++)
        h[9 + i] = o->unused[i];
    for (int i = 0; i < 13; i++)
        fx_patch_u32(&b, 4 * (size_t)i, h[i]);
    lay->size = b.len;
    *size = b.len;
    return b.p;
}

const struct fx_chain fx_sample_chains[2] = {
    {.unknown_0 = 7, .length = 2, .pole = 5, .pole_root = 1, .slot_info = 6, .slot_info_root = 0,
     .slot_offset = 7, .slot_offset_root = 0, .info_node_flags = 0x3,
     .info_nodes = {8, 9, -1, -1, -1, -1, -1, -1, -1, -1}, .info_root = 0, .root = 0,
     .link_values = {100, 0xfffffff0u}, .links = {{3, 2}, {2, 1}}},
    {.unknown_0 = 0, .length = 3, .pole = 12, .pole_root = 10, .slot_info = -1, .slot_info_root = 0,
     .slot_offset = 13, .slot_offset_root = 0, .info_node_flags = 0x0,
     .info_nodes = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1}, .info_root = 11, .root = 0,
     .link_values = {1, 2, 3}, .links = {{11, 10}, {10, 4}, {4, 0}}},
};
const int32_t fx_sample_lists[4][6] = {{5, 6, 7}, {8, 9}, {14}, {0, 1, 2, 3, 4, 5}};
const uint32_t fx_sample_list_count[4] = {3, 2, 1, 6};

struct fx_rig_opts fx_sample_rig_opts(const uint8_t *granny, size_t granny_size)
{
    struct fx_rig_opts o = {.granny = granny, .granny_size = granny_size, .chains = fx_sample_chains, .nchains = 2};
    for (int l = 0; l < 4; l++) {
        o.lists[l] = fx_sample_lists[l];
        o.list_count[l] = fx_sample_list_count[l];
    }
    return o;
}

uint8_t *fx_sample_rig(size_t *size, struct fx_rig_layout *lay, struct fx_gr2_layout *glay,
                       char (*bone_names)[32])
{
    size_t gsize;
    struct fxg_opts go = {.sig = "le32-old", .version = 6, .nbones = FX_SAMPLE_BONES, .oodle1_section = true};
    struct fxg_result *gr = malloc(sizeof *gr);
    uint8_t *g = fxg_build(&go, &gsize, gr);
    *glay = gr->layout;
    for (int i = 0; bone_names && i < FX_SAMPLE_BONES; i++)
        memcpy(bone_names[i], gr->bones[i].name, 32);
    free(gr->section);
    free(gr);
    struct fx_rig_opts o = fx_sample_rig_opts(g, gsize);
    o.unused[3] = 0x12345678;
    uint8_t *r = fx_build_rig(&o, size, lay);
    free(g);
    return r;
}
