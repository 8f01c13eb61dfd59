#include "expect.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

struct expect *ex_add(struct expect_list *l, enum expect_kind kind, const char *fmt, ...)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        l->e = realloc(l->e, l->cap * sizeof *l->e);
        assert_non_null(l->e);
    }
    struct expect *e = &l->e[l->n++];
    memset(e, 0, sizeof *e);
    va_list ap;
    va_start(ap, fmt);
    assert_true(vasprintf(&e->path, fmt, ap) >= 0);
    va_end(ap);
    e->kind = kind;
    return e;
}

void ex_span(struct expect *e, uint64_t off, uint64_t len)
{
    e->has_span = true;
    e->off = off;
    e->span_len = len;
}

void ex_dir(struct expect_list *l, const char *path, uint64_t off, uint64_t len, const char *type)
{
    struct expect *e = ex_add(l, EX_DIR, "%s", path);
    if (len || off)
        ex_span(e, off, len);
    e->type = type;
}

static struct expect *ex_textv(struct expect_list *l, const char *path, const char *type, const char *fmt,
                               va_list ap)
{
    struct expect *e = ex_add(l, EX_FILE, "%s", path);
    char *s;
    assert_true(vasprintf(&s, fmt, ap) >= 0);
    e->content = (uint8_t *)s;
    e->len = strlen(s);
    e->type = type;
    return e;
}

void ex_val(struct expect_list *l, const char *path, uint64_t off, uint64_t len, const char *type, const char *fmt,
            ...)
{
    va_list ap;
    va_start(ap, fmt);
    struct expect *e = ex_textv(l, path, type, fmt, ap);
    va_end(ap);
    ex_span(e, off, len);
}

void ex_bytes(struct expect_list *l, const char *path, const uint8_t *file, uint64_t off, uint64_t len,
              const char *type)
{
    struct expect *e = ex_add(l, EX_FILE, "%s", path);
    e->content = malloc(len ? len : 1);
    memcpy(e->content, file + off, len);
    e->len = len;
    e->type = type;
    ex_span(e, off, len);
}

void ex_remove(struct expect_list *l, const char *path)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->e[i].path, path) == 0) {
            free(l->e[i].path);
            free(l->e[i].content);
            free(l->e[i].type_buf);
            l->e[i] = l->e[--l->n];
            return;
        }
}

struct expect *ex_add_dir_skip(struct expect_list *l, const char *path)
{
    struct expect *e = ex_add(l, EX_DIR, "%s", path);
    e->skip_children = true;
    return e;
}

void ex_free(struct expect_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->e[i].path);
        free(l->e[i].content);
        free(l->e[i].type_buf);
    }
    free(l->e);
    memset(l, 0, sizeof *l);
}

const struct expect *ex_find(const struct expect_list *l, const char *path)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->e[i].path, path) == 0)
            return &l->e[i];
    return NULL;
}

static uint32_t rd32(const uint8_t *p, bool be)
{
    return be ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]
              : (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

static void path_join(char *out, size_t n, const char *a, const char *b)
{
    snprintf(out, n, "%s/%s", strcmp(a, "/") == 0 ? "" : a, b);
}

/* Number-list text: "a\nb\n…" from u32 words of the file. */
static char *words_text(const uint8_t *p, uint32_t n, bool be, const char *fmt)
{
    size_t cap = 16 * (size_t)n + 1, len = 0;
    char *s = malloc(cap);
    s[0] = 0;
    for (uint32_t i = 0; i < n; i++)
        len += (size_t)snprintf(s + len, cap - len, fmt, rd32(p + 4 * i, be));
    return s;
}

static void ex_words(struct expect_list *l, const char *path, const uint8_t *file, uint64_t off, uint32_t n,
                     bool be, const char *fmt, const char *type)
{
    struct expect *e = ex_add(l, EX_FILE, "%s", path);
    e->content = (uint8_t *)words_text(file + off, n, be, fmt);
    e->len = strlen((char *)e->content);
    e->type = type;
    ex_span(e, off, 4ull * n);
}

/* The Granny part under `root` ("" for a raw file's root), base = its file offset. */
static void ex_granny(struct expect_list *l, const uint8_t *file, uint64_t base, const struct fx_gr2_layout *gl,
                      int version, bool objects)
{
    uint32_t nsec = gl->nsections;
    if (objects) { /* the object tree itself: see test_gr2obj */
        struct expect *r = ex_add(l, EX_DIR, "/granny/root");
        r->skip_children = true;
        struct expect *ty = ex_add(l, EX_DIR, "/granny/types");
        ty->skip_children = true;
        struct expect *sk = ex_add(l, EX_LINK, "/granny/skeletons");
        sk->content = (uint8_t *)strdup("root/Skeletons");
        sk->len = strlen("root/Skeletons");
    } else {
        struct expect *r = ex_add(l, EX_FILE, "/granny/root.error");
        r->prefix_only = true;
    }
    const uint8_t *g = file + base;
    bool be = gl->be;
    char p[256];
    ex_bytes(l, "/granny.gr2", file, base, gl->total_size, "gr2.file");
    ex_dir(l, "/granny", base, gl->total_size, "gr2");
    ex_dir(l, "/granny/header", base, 0x20 + gl->header_length, "gr2.header");
    char hex[33];
    for (int i = 0; i < 16; i++)
        snprintf(hex + 2 * i, 3, "%02x", gl->magic[i]);
    ex_val(l, "/granny/header/magic", base, 16, "gr2.signature", "%s\n", hex);
    ex_val(l, "/granny/header/byte_order", base, 16, NULL, "%s\n", be ? "be" : "le");
    bool is64 = memcmp(gl->magic, "\xe5\x9b", 2) == 0 || memcmp(gl->magic, "\xe3\xd4", 2) == 0 ||
                memcmp(gl->magic, "\x31\x95", 2) == 0;
    ex_val(l, "/granny/header/pointer_size", base, 16, NULL, "%d\n", is64 ? 64 : 32);
    struct expect *sig = ex_add(l, EX_FILE, "/granny/header/signature");
    sig->len = 0; /* name checked by test_parse; here only presence and span */
    sig->prefix_only = true;
    ex_span(sig, base, 16);
    ex_val(l, "/granny/header/headers_size", base + 16, 4, "u32", "%u\n", gl->headers_size);
    ex_val(l, "/granny/header/header_format", base + 20, 4, "u32", "0\n");
    ex_val(l, "/granny/header/version", base + 0x20, 4, "u32", "%d\n", version);
    ex_val(l, "/granny/header/total_size", base + 0x24, 4, "u32", "%u\n", gl->total_size);
    ex_val(l, "/granny/header/crc", base + 0x28, 4, "u32", "0x%08x\n", rd32(g + 0x28, be));
    ex_val(l, "/granny/header/crc_computed", base + 0x20 + gl->header_length,
           gl->total_size - 0x20 - gl->header_length, "crc32", "0x%08x\n", gl->crc);
    ex_val(l, "/granny/header/section_array_offset", base + 0x2c, 4, "u32", "%u\n", gl->section_array_offset);
    ex_val(l, "/granny/header/section_count", base + 0x30, 4, "u32", "%u\n", nsec);
    ex_val(l, "/granny/header/root_type", base + 0x34, 8, "gr2.ref", "%u %u\n", rd32(g + 0x34, be),
           rd32(g + 0x38, be));
    ex_val(l, "/granny/header/root_object", base + 0x3c, 8, "gr2.ref", "%u %u\n", rd32(g + 0x3c, be),
           rd32(g + 0x40, be));
    ex_val(l, "/granny/header/type_tag", base + 0x44, 4, "u32", "0x%08x\n", rd32(g + 0x44, be));
    ex_words(l, "/granny/header/extra_tags", file, base + 0x48, 4, be, "0x%08x\n", "u32[4]");
    if (version == 7)
        ex_val(l, "/granny/header/string_table_crc", base + 0x58, 4, "u32", "0x%08x\n", rd32(g + 0x58, be));
    uint64_t arr = base + 0x20 + gl->section_array_offset;
    ex_dir(l, "/granny/sections", arr, 44ull * nsec, "gr2.sections");
    static const char *const fields[11] = {"compression", "data_offset", "data_size", "expanded_size",
                                           "alignment", "first16bit", "first8bit", "fixup_offset",
                                           "fixup_count", "marshal_offset", "marshal_count"};
    static const char *const comp[] = {"none", "oodle0", "oodle1", "bitknit1", "bitknit2"};
    for (uint32_t i = 0; i < nsec; i++) {
        uint64_t h = arr + 44ull * i;
        uint32_t f[11];
        for (int k = 0; k < 11; k++)
            f[k] = rd32(file + h + 4 * k, be);
        char d[64];
        snprintf(d, sizeof d, "/granny/sections/%u", i);
        ex_dir(l, d, h, 44, "gr2.section");
        path_join(p, sizeof p, d, "header.bin");
        ex_bytes(l, p, file, h, 44, "gr2.section_header");
        for (int k = 0; k < 11; k++) {
            path_join(p, sizeof p, d, fields[k]);
            if (k == 0)
                ex_val(l, p, h, 4, "u32", "%s\n", comp[f[0]]);
            else
                ex_val(l, p, h + 4 * k, 4, "u32", "%u\n", f[k]);
        }
        path_join(p, sizeof p, d, "fixups");
        struct expect *fx = ex_add(l, EX_FILE, "%s", p);
        fx->content = (uint8_t *)malloc(40 * (size_t)f[8] + 1);
        fx->content[0] = 0;
        for (uint32_t k = 0; k < f[8]; k++) {
            const uint8_t *q = g + f[7] + 12 * k;
            sprintf((char *)fx->content + strlen((char *)fx->content), "%u %u %u\n", rd32(q, be), rd32(q + 4, be),
                    rd32(q + 8, be));
        }
        fx->len = strlen((char *)fx->content);
        ex_span(fx, base + f[7], 12ull * f[8]);
        path_join(p, sizeof p, d, "marshalling");
        struct expect *mx = ex_add(l, EX_FILE, "%s", p);
        mx->content = (uint8_t *)malloc(48 * (size_t)f[10] + 1);
        mx->content[0] = 0;
        for (uint32_t k = 0; k < f[10]; k++) {
            const uint8_t *q = g + f[9] + 16 * k;
            sprintf((char *)mx->content + strlen((char *)mx->content), "%u %u %u %u\n", rd32(q, be),
                    rd32(q + 4, be), rd32(q + 8, be), rd32(q + 12, be));
        }
        mx->len = strlen((char *)mx->content);
        ex_span(mx, base + f[9], 16ull * f[10]);
        path_join(p, sizeof p, d, "stored.bin");
        ex_bytes(l, p, file, base + f[1], f[2], "gr2.section_stored");
        if (f[3] == 0) {
            path_join(p, sizeof p, d, "data.bin");
            struct expect *e = ex_add(l, EX_FILE, "%s", p);
            e->type = "gr2.section_data";
        } else if (f[0] == 0) {
            path_join(p, sizeof p, d, "data.bin");
            ex_bytes(l, p, file, base + f[1], f[2], "gr2.section_data");
        } else {
            path_join(p, sizeof p, d, "data.error");
            struct expect *e = ex_add(l, EX_FILE, "%s", p);
            e->prefix_only = true;
        }
    }
}

/* /unparsed: the gaps the test knows it wrote. */
static void ex_unparsed(struct expect_list *l, const uint8_t *file, const uint64_t (*gaps)[2], size_t ngaps,
                        uint64_t size)
{
    ex_dir(l, "/unparsed", 0, size, "unparsed");
    for (size_t i = 0; i < ngaps; i++) {
        char p[96];
        snprintf(p, sizeof p, "/unparsed/0x%llx-0x%llx.bin", (unsigned long long)gaps[i][0],
                 (unsigned long long)gaps[i][1]);
        ex_bytes(l, p, file, gaps[i][0], gaps[i][1], "unparsed");
    }
}

void ex_prefix(struct expect_list *l, const char *path, const void *prefix, size_t n, const char *type)
{
    struct expect *e = ex_add(l, EX_FILE, "%s", path);
    e->content = malloc(n ? n : 1);
    memcpy(e->content, prefix, n);
    e->len = n;
    e->prefix_only = true;
    e->type = type;
}

void ex_info(struct expect_list *l, const char *format)
{
    struct expect *e = ex_add(l, EX_FILE, "/info");
    char *s;
    assert_true(asprintf(&s, "format: %s\n", format) >= 0);
    e->content = (uint8_t *)s;
    e->len = strlen(s);
    e->prefix_only = true;
    e->type = "info";
}

/* Gaps inside Granny data the builder wrote: alignment padding after each section's
 * data, and the filler bytes after its tables. */
static size_t gr2_gaps(const struct fx_gr2_layout *gl, uint64_t base, uint64_t (*gaps)[2])
{
    size_t n = 0;
    for (uint32_t i = 0; i < gl->nsections; i++) {
        uint32_t end = gl->data_offset[i] + gl->data_size[i];
        if (gl->fixup_offset[i] > end) {
            gaps[n][0] = base + end;
            gaps[n++][1] = gl->fixup_offset[i] - end;
        }
        if (gl->gap_after[i]) {
            gaps[n][0] = base + gl->marshal_offset[i] + 16ull * gl->nmarshals[i];
            gaps[n++][1] = gl->gap_after[i];
        }
    }
    return n;
}

uint64_t ex_gr2_gap_bytes(const struct fx_gr2_layout *gl)
{
    uint64_t gaps[2 * FX_MAX_SECTIONS][2], total = 0;
    size_t n = gr2_gaps(gl, 0, gaps);
    for (size_t i = 0; i < n; i++)
        total += gaps[i][1];
    return total;
}

void ex_sample_gr2(struct expect_list *l, const uint8_t *file, size_t size, const struct fx_gr2_layout *gl,
                   int version)
{
    ex_dir(l, "/", 0, size, NULL);
    ex_info(l, "gr2");
    ex_granny(l, file, 0, gl, version, false);
    uint64_t gaps[2 * FX_MAX_SECTIONS][2];
    size_t n = gr2_gaps(gl, 0, gaps);
    ex_unparsed(l, file, (const uint64_t(*)[2])gaps, n, size);
}

static void ex_chain(struct expect_list *l, const uint8_t *file, const struct fx_chain *c, uint64_t pos,
                     uint32_t i)
{
    char d[64], p[128];
    snprintf(d, sizeof d, "/ik_chains/%u", i);
    ex_dir(l, d, pos, 116 + 12ull * c->length, "rig.ik_chain");
#define VAL(name, off, type, fmt, v)                                                                               \
    do {                                                                                                           \
        path_join(p, sizeof p, d, name);                                                                           \
        ex_val(l, p, pos + (off), 4, type, fmt, v);                                                                \
    } while (0)
    path_join(p, sizeof p, d, "raw.bin");
    ex_bytes(l, p, file, pos, 116 + 12ull * c->length, "rig.ik_chain");
    VAL("unknown_0", 0, "u32", "%u\n", c->unknown_0);
    VAL("length", 4, "u32", "%u\n", c->length);
    path_join(p, sizeof p, d, "reserved.bin");
    ex_bytes(l, p, file, pos + 8, 32, "bytes");
    VAL("pole", 40, "i32", "%d\n", c->pole);
    VAL("pole_root", 44, "i32", "%d\n", c->pole_root);
    VAL("slot_info", 48, "i32", "%d\n", c->slot_info);
    VAL("slot_info_root", 52, "i32", "%d\n", c->slot_info_root);
    VAL("slot_offset", 56, "i32", "%d\n", c->slot_offset);
    VAL("slot_offset_root", 60, "i32", "%d\n", c->slot_offset_root);
    VAL("info_node_flags", 64, "u32", "0x%08x\n", c->info_node_flags);
    VAL("info_root", 108, "i32", "%d\n", c->info_root);
    VAL("root", 112 + 4 * c->length, "i32", "%d\n", c->root);
#undef VAL
    path_join(p, sizeof p, d, "info_nodes");
    ex_words(l, p, file, pos + 68, 10, false, "%d\n", "i32[10]");
    path_join(p, sizeof p, d, "link_values");
    char type[32];
    snprintf(type, sizeof type, "u32[%u]", c->length);
    ex_words(l, p, file, pos + 112, c->length, false, "%u\n", NULL);
    uint64_t links = pos + 116 + 4ull * c->length;
    path_join(p, sizeof p, d, "links");
    ex_dir(l, p, links, 8ull * c->length, "rig.ik_links");
    for (uint32_t k = 0; k < c->length; k++) {
        snprintf(p, sizeof p, "%s/links/%u", d, k);
        ex_dir(l, p, links + 8 * k, 8, "rig.ik_link");
        snprintf(p, sizeof p, "%s/links/%u/end", d, k);
        ex_val(l, p, links + 8 * k, 4, "i32", "%d\n", c->links[k].end);
        snprintf(p, sizeof p, "%s/links/%u/start", d, k);
        ex_val(l, p, links + 8 * k + 4, 4, "i32", "%d\n", c->links[k].start);
    }
}

/* NAME.bone links and NAME.names files of the sample chains, resolved against the
 * sample skeleton (all its indices are in range; -1 has no link and shows "?"). */
static void ex_bone_link(struct expect_list *l, const char *dir, const char *field, int32_t idx, const char *up)
{
    if (idx < 0 || idx >= FX_SAMPLE_BONES)
        return;
    struct expect *e = ex_add(l, EX_LINK, "%s/%s.bone", dir, field);
    assert_true(asprintf((char **)&e->content, "%sgranny/root/Skeletons/0/Bones/%d", up, idx) >= 0);
    e->len = strlen((char *)e->content);
}

static void ex_names(struct expect_list *l, const char *path, const int32_t *idx, uint32_t n, char (*names)[32])
{
    struct expect *e = ex_add(l, EX_FILE, "%s.names", path);
    char *s = malloc(40 * (size_t)n + 1), *p = s;
    *p = 0;
    for (uint32_t i = 0; i < n; i++)
        p += sprintf(p, "%s\n", idx[i] >= 0 && idx[i] < FX_SAMPLE_BONES ? names[idx[i]] : "?");
    e->content = (uint8_t *)s;
    e->len = strlen(s);
}

static void ex_chain_bones(struct expect_list *l, const struct fx_chain *c, uint32_t i, char (*names)[32])
{
    char d[64];
    snprintf(d, sizeof d, "/ik_chains/%u", i);
    static const char *const fields[] = {"pole", "pole_root", "slot_info", "slot_info_root", "slot_offset",
                                         "slot_offset_root", "info_root", "root"};
    int32_t idx[] = {c->pole, c->pole_root, c->slot_info, c->slot_info_root, c->slot_offset, c->slot_offset_root,
                     c->info_root, c->root};
    for (int k = 0; k < 8; k++)
        ex_bone_link(l, d, fields[k], idx[k], "../../");
    char p[96];
    snprintf(p, sizeof p, "%s/info_nodes", d);
    ex_names(l, p, c->info_nodes, 10, names);
    for (uint32_t k = 0; k < c->length; k++) {
        snprintf(p, sizeof p, "%s/links/%u", d, k);
        ex_bone_link(l, p, "end", c->links[k].end, "../../../../");
        ex_bone_link(l, p, "start", c->links[k].start, "../../../../");
    }
}

void ex_sample_rig(struct expect_list *l, const uint8_t *file, size_t size, const struct fx_rig_layout *rl,
                   const struct fx_gr2_layout *gl, char (*bone_names)[32])
{
    static const char *const names[13] = {"magic", "reserved", "int2_offset", "granny_offset",
                                          "ik_chains_offset", "ik_target_slots_offset", "ik_info_nodes_offset",
                                          "compress_nodes_offset", "full_bone_list_offset", "unused_0",
                                          "unused_1", "unused_2", "unused_3"};
    static const char *const lists[4] = {"ik_target_slots", "info_nodes", "compress_nodes", "full_bone_list"};
    ex_dir(l, "/", 0, size, NULL);
    ex_info(l, "wrapped-rig");
    ex_bytes(l, "/header.bin", file, 0, 52, "rig.header");
    ex_dir(l, "/header", 0, 52, "rig.header");
    for (int i = 0; i < 13; i++) {
        char p[64];
        snprintf(p, sizeof p, "/header/%s", names[i]);
        if (i == 0)
            ex_val(l, p, 0, 4, "u32", "0x%08x\n", rl->header[0]);
        else
            ex_val(l, p, 4ull * i, 4, "u32", "%u\n", rl->header[i]);
    }
    ex_granny(l, file, rl->granny_pos, gl, 6, true);
    ex_dir(l, "/ik_chains", rl->ik_pos, 4 + 4 * 2, "rig.ik_chains");
    for (uint32_t i = 0; i < 2; i++) {
        ex_chain(l, file, &fx_sample_chains[i], rl->entry_pos[i], i);
        ex_chain_bones(l, &fx_sample_chains[i], i, bone_names);
    }
    for (int k = 0; k < 4; k++) {
        char p[64], type[32];
        snprintf(p, sizeof p, "/%s", lists[k]);
        snprintf(type, sizeof type, "i32[%u]", fx_sample_list_count[k]);
        ex_words(l, p, file, rl->list_pos[k] + 4, fx_sample_list_count[k], false, "%d\n", NULL);
        l->e[l->n - 1].off = rl->list_pos[k];
        l->e[l->n - 1].span_len = 4 + 4ull * fx_sample_list_count[k];
        ex_names(l, p, fx_sample_lists[k], fx_sample_list_count[k], bone_names);
    }
    uint64_t gaps[2 * FX_MAX_SECTIONS + 1][2];
    size_t n = gr2_gaps(gl, rl->granny_pos, gaps);
    gaps[n][0] = rl->unknown_pos;
    gaps[n++][1] = 56;
    ex_unparsed(l, file, (const uint64_t(*)[2])gaps, n, size);
}

/* ---- t2fs ---- */

static size_t rnc_item_len(const uint8_t *b)
{
    return 18 + ((size_t)b[8] << 24 | (size_t)b[9] << 16 | (size_t)b[10] << 8 | b[11]);
}

static void ex_t2fs_node(struct expect_list *l, const struct fxt *n, const char *dir, uint32_t index,
                         const char *prefix)
{
    char base[512], p[560], type[96];
    snprintf(base, sizeof base, "%s/%u", dir, index);
    /* span: a node's own bytes, or the compressed node holding it */
    const struct fxt *blob = n->compress ? n : n->blob;
    uint64_t off = blob ? blob->pos : n->pos;
    uint64_t len = blob ? rnc_item_len(blob->bytes) : n->stored;
    const uint8_t *bytes = n->compress ? n->inner : n->bytes;
    size_t nbytes = n->compress ? n->inner_len : n->stored;
    if (n->compress) {
        snprintf(p, sizeof p, "%s.rnc", base);
        struct expect *e = ex_add(l, EX_FILE, "%s", p);
        e->len = rnc_item_len(n->bytes);
        e->content = malloc(e->len);
        memcpy(e->content, n->bytes, e->len);
        e->type = n->compress == 1 ? "rnc1" : "rnc2";
        ex_span(e, off, len);
        prefix = n->compress == 1 ? "rnc1:" : "rnc2:";
    }
    if (n->kind == FXT_BRANCH) {
        struct expect *e = ex_add(l, EX_DIR, "%s", base);
        ex_span(e, off, len);
        snprintf(type, sizeof type, "%st2fs.branch[%u]", prefix, n->n);
        e->type = e->type_buf = strdup(type);
        for (uint32_t i = 0; i < n->n; i++)
            ex_t2fs_node(l, n->child[i], base, i, "");
        return;
    }
    snprintf(p, sizeof p, "%s.bin", base);
    struct expect *e = ex_add(l, EX_FILE, "%s", p);
    e->content = malloc(nbytes ? nbytes : 1);
    memcpy(e->content, bytes, nbytes);
    e->len = nbytes;
    ex_span(e, off, len);
    if (n->kind == FXT_ARRAY)
        snprintf(type, sizeof type, "%st2fs.array[%u]x%u", prefix, n->elem_size, n->count);
    else
        snprintf(type, sizeof type, "%s%s", prefix, n->type ? n->type : "t2fs.raw");
    e->type = e->type_buf = strdup(type);
}

void ex_t2fs(struct expect_list *l, const uint8_t *file, size_t size, const struct fxt *root, size_t prefix,
             size_t trailer)
{
    ex_dir(l, "/", 0, size, NULL);
    ex_info(l, "t2fs");
    ex_dir(l, "/unparsed", 0, size, "unparsed");
    ex_add_dir_skip(l, "/models"); /* checked by test_models_view */
    ex_add_dir_skip(l, "/named");  /* checked by the schema tests */
    if (prefix)
        ex_bytes(l, "/prefix.bin", file, 0, prefix, "bytes");
    if (trailer)
        ex_bytes(l, "/trailer.bin", file, size - trailer, trailer, "bytes");
    struct expect *e = ex_add(l, EX_DIR, "/root");
    ex_span(e, prefix, root->stored);
    char type[64];
    snprintf(type, sizeof type, "t2fs.branch[%u]", root->n);
    e->type = e->type_buf = strdup(type);
    for (uint32_t i = 0; i < root->n; i++)
        ex_t2fs_node(l, root->child[i], "/root", i, "");
}

/* ---- clear RIG ---- */

static void ex_floats(struct expect_list *l, const char *path, const float *f, int n, uint64_t off)
{
    struct expect *e = ex_add(l, EX_FILE, "%s", path);
    char *s = malloc(24 * (size_t)n + 1), *p = s;
    *p = 0;
    for (int i = 0; i < n; i++)
        p += sprintf(p, "%.9g\n", (double)f[i]);
    e->content = (uint8_t *)s;
    e->len = strlen(s);
    ex_span(e, off, 4ull * (uint64_t)n);
}

static void ex_link(struct expect_list *l, const char *path, const char *target)
{
    struct expect *e = ex_add(l, EX_LINK, "%s", path);
    e->content = (uint8_t *)strdup(target);
    e->len = strlen(target);
}

static void ex_rig_clear_names(struct expect_list *l, const char *path, const int32_t *idx, uint32_t n)
{
    struct expect *e = ex_add(l, EX_FILE, "%s", path);
    char *s = malloc(40 * (size_t)n + 1), *p = s;
    *p = 0;
    for (uint32_t i = 0; i < n; i++)
        p += sprintf(p, "%s\n", idx[i] >= 0 && idx[i] < FXC_BONES ? fxc_bones[idx[i]].name : "?");
    e->content = (uint8_t *)s;
    e->len = strlen(s);
}

static void ex_rig_clear_bone(struct expect_list *l, const uint8_t *file, const struct fxc_layout *lay, int i)
{
    const struct fxc_bone *b = &fxc_bones[i];
    uint64_t p = lay->bone_pos[i], nl = strlen(b->name), after = p + 44 + nl;
    char d[32], path[96];
    snprintf(d, sizeof d, "/bones/%d", i);
    ex_dir(l, d, p, lay->bone_size[i], "rig.bone");
    snprintf(path, sizeof path, "%s/name", d);
    ex_val(l, path, p + 44, nl, "string", "%s\n", b->name);
    snprintf(path, sizeof path, "%s/position", d);
    ex_floats(l, path, b->pos, 3, p);
    snprintf(path, sizeof path, "%s/orientation", d);
    ex_floats(l, path, b->q, 4, p + 12);
    snprintf(path, sizeof path, "%s/scale", d);
    ex_floats(l, path, b->s, 3, p + 28);
    snprintf(path, sizeof path, "%s/opposing_bone", d);
    ex_val(l, path, after, 4, "i32", "%d\n", b->opposing);
    snprintf(path, sizeof path, "%s/parent", d);
    ex_val(l, path, after + 4, 4, "i32", "%d\n", b->parent);
    snprintf(path, sizeof path, "%s/name_hash", d);
    ex_val(l, path, after + 8, 4, "u32", "0x%08x\n", lay->hash[i]);
    snprintf(path, sizeof path, "%s/name_hash_ok", d);
    ex_val(l, path, after + 8, 4, NULL, "%s\n", b->bad_hash ? "no" : "yes");
    snprintf(path, sizeof path, "%s/flags", d);
    ex_val(l, path, after + 12, 4, "u32", "0x%08x\n", b->flags);
    snprintf(path, sizeof path, "%s/raw.bin", d);
    ex_bytes(l, path, file, p, lay->bone_size[i], "rig.bone");
    char target[32];
    if (b->parent >= 0) {
        snprintf(path, sizeof path, "%s/parent.bone", d);
        snprintf(target, sizeof target, "../%d", b->parent);
        ex_link(l, path, target);
    }
    if (b->opposing != i) { /* a self-mirroring bone has none (nothing else may be there) */
        snprintf(path, sizeof path, "%s/opposing_bone.bone", d);
        snprintf(target, sizeof target, "../%d", b->opposing);
        ex_link(l, path, target);
    }
    snprintf(path, sizeof path, "%s/children", d);
    struct expect *e = ex_add(l, EX_FILE, "%s", path);
    char kids[64] = "";
    for (int k = 0; k < FXC_BONES; k++)
        if (fxc_bones[k].parent == i)
            sprintf(kids + strlen(kids), "%d\n", k);
    e->content = (uint8_t *)strdup(kids);
    e->len = strlen(kids);
}

static void ex_rig_clear_chain(struct expect_list *l, const struct fxc_opts *o, const struct fxc_layout *lay, int i)
{
    const struct fxc_chain *c = &fxc_chains[i];
    char d[32], path[96], target[32];
    snprintf(d, sizeof d, "/ik_chains/%d", i);
    ex_dir(l, d, lay->chain_pos[i], lay->chain_size[i], "rig.ik_chain");
    uint64_t p = lay->chain_pos[i] + 4;
    snprintf(path, sizeof path, "%s/bones", d);
    struct expect *e = ex_add(l, EX_FILE, "%s", path);
    char buf[128] = "";
    for (uint32_t k = 0; k < c->n; k++)
        sprintf(buf + strlen(buf), "%d\n", c->bones[k]);
    e->content = (uint8_t *)strdup(buf);
    e->len = strlen(buf);
    ex_span(e, p, 4ull * c->n);
    snprintf(path, sizeof path, "%s/bones.names", d);
    ex_rig_clear_names(l, path, c->bones, c->n);
    p += 4ull * c->n;
    if (o->info) {
        snprintf(path, sizeof path, "%s/info_nodes", d);
        e = ex_add(l, EX_FILE, "%s", path);
        buf[0] = 0;
        for (int k = 0; k < 11; k++)
            sprintf(buf + strlen(buf), "%d\n", c->info[k]);
        e->content = (uint8_t *)strdup(buf);
        e->len = strlen(buf);
        ex_span(e, p, 44);
        snprintf(path, sizeof path, "%s/info_nodes.names", d);
        ex_rig_clear_names(l, path, c->info, 11);
        p += 44;
    }
    const char *fields[4] = {"pole", "slot_info", "slot_offset", "root"};
    int32_t vals[4] = {c->pole, c->slot_info, c->slot_offset, c->root};
    for (int k = 0; k < 4; k++) {
        if (k == 1 && !o->info)
            continue;
        snprintf(path, sizeof path, "%s/%s", d, fields[k]);
        ex_val(l, path, p, 4, "i32", "%d\n", vals[k]);
        p += 4;
        if (vals[k] >= 0) {
            snprintf(path, sizeof path, "%s/%s.bone", d, fields[k]);
            snprintf(target, sizeof target, "../../bones/%d", vals[k]);
            ex_link(l, path, target);
        }
    }
}

void ex_rig_clear(struct expect_list *l, const uint8_t *file, size_t size, const struct fxc_opts *o,
                  const struct fxc_layout *lay)
{
    ex_dir(l, "/", 0, size, NULL);
    ex_info(l, "clear-rig");
    ex_val(l, "/major", 0, 4, "u32", "%u\n", o->major);
    ex_val(l, "/minor", 4, 4, "u32", "%u\n", o->minor);
    if (o->skeleton_name)
        ex_val(l, "/skeleton_name", lay->skel_pos, strlen(fxc_skeleton), "string", "%s\n", fxc_skeleton);
    ex_dir(l, "/bones", 8, lay->bone_pos[FXC_BONES - 1] + lay->bone_size[FXC_BONES - 1] - 8, "rig.bones");
    for (int i = 0; i < FXC_BONES; i++)
        ex_rig_clear_bone(l, file, lay, i);
    struct expect *csv = ex_add(l, EX_FILE, "/bones.csv");
    char *s = malloc(4096), *p = s;
    p += sprintf(p, "index,name,parent,opposing,hash,flags,px,py,pz,qx,qy,qz,qw,sx,sy,sz\n");
    for (int i = 0; i < FXC_BONES; i++) {
        const struct fxc_bone *b = &fxc_bones[i];
        p += sprintf(p, "%d,", i);
        if (strchr(b->name, ',') || strchr(b->name, '"')) {
            *p++ = '"';
            for (const char *q = b->name; *q; q++) {
                if (*q == '"')
                    *p++ = '"';
                *p++ = *q;
            }
            *p++ = '"';
        } else {
            p += sprintf(p, "%s", b->name);
        }
        p += sprintf(p, ",%d,%d,0x%08x,0x%08x", b->parent, b->opposing, lay->hash[i], b->flags);
        for (int k = 0; k < 3; k++)
            p += sprintf(p, ",%.9g", (double)b->pos[k]);
        for (int k = 0; k < 4; k++)
            p += sprintf(p, ",%.9g", (double)b->q[k]);
        for (int k = 0; k < 3; k++)
            p += sprintf(p, ",%.9g", (double)b->s[k]);
        p += sprintf(p, "\n");
    }
    csv->content = (uint8_t *)s;
    csv->len = strlen(s);
    /* the export: its container magic here; test_glb reads it back value by value */
    ex_prefix(l, "/skeleton.glb", EX_GLB_MAGIC, 8, "glb.skeleton");
    if (o->chains) {
        ex_dir(l, "/ik_chains", lay->chains_pos, lay->end - lay->chains_pos, "rig.ik_chains");
        for (int i = 0; i < FXC_CHAINS; i++)
            ex_rig_clear_chain(l, o, lay, i);
    }
    ex_dir(l, "/unparsed", 0, size, "unparsed");
    if (lay->size > lay->end) {
        char path[64];
        snprintf(path, sizeof path, "/unparsed/0x%llx-0x%llx.bin", (unsigned long long)lay->end,
                 (unsigned long long)(lay->size - lay->end));
        ex_bytes(l, path, file, lay->end, lay->size - lay->end, "unparsed");
    }
}

/* ---- checking ---- */

static void check_one(const struct expect *e, const struct probe *p)
{
    enum expect_kind kind;
    uint64_t size;
    int rc = p->stat(p->ctx, e->path, &kind, &size);
    if (rc)
        fail_msg("%s: missing (%d)", e->path, rc);
    if (kind != e->kind)
        fail_msg("%s: kind %d, expected %d", e->path, kind, e->kind);
    if (e->kind == EX_FILE) {
        uint8_t *buf;
        size_t len;
        assert_int_equal(p->read(p->ctx, e->path, &buf, &len), 0);
        if (len != size)
            fail_msg("%s: read %zu bytes but size says %llu", e->path, len, (unsigned long long)size);
        if (e->prefix_only) {
            if (len < e->len || (e->len && memcmp(buf, e->content, e->len) != 0))
                fail_msg("%s: does not start with the expected bytes", e->path);
        } else if (len != e->len || (len && memcmp(buf, e->content, len) != 0)) {
            fail_msg("%s: content differs (got %zu bytes: '%.*s', expected %zu: '%.*s')", e->path, len,
                     (int)(len < 60 ? len : 60), (char *)buf, e->len, (int)(e->len < 60 ? e->len : 60),
                     (char *)e->content);
        }
        free(buf);
    } else if (e->kind == EX_LINK) {
        char *target;
        assert_int_equal(p->readlink(p->ctx, e->path, &target), 0);
        if (strcmp(target, (char *)e->content) != 0)
            fail_msg("%s: -> %s, expected %s", e->path, target, (char *)e->content);
        free(target);
    }
    char v[256];
    if (e->has_span) {
        if (p->getxattr(p->ctx, e->path, "user.s3rig.offset", v, sizeof v) < 0 ||
            strtoull(v, NULL, 10) != e->off)
            fail_msg("%s: offset xattr '%s', expected %llu", e->path, v, (unsigned long long)e->off);
        if (p->getxattr(p->ctx, e->path, "user.s3rig.length", v, sizeof v) < 0 ||
            strtoull(v, NULL, 10) != e->span_len)
            fail_msg("%s: length xattr '%s', expected %llu", e->path, v, (unsigned long long)e->span_len);
    }
    if (e->type) {
        long n = p->getxattr(p->ctx, e->path, "user.s3rig.type", v, sizeof v);
        if (n < 0 || strcmp(v, e->type) != 0)
            fail_msg("%s: type '%s', expected '%s'", e->path, n < 0 ? "(none)" : v, e->type);
    }
    /* Every node has a type; through the kernel a symlink cannot show user.* xattrs. */
    if (p->getxattr(p->ctx, e->path, "user.s3rig.type", v, sizeof v) < 0 && !(e->kind == EX_LINK && p->is_mount))
        fail_msg("%s: no user.s3rig.type", e->path);
}

/* Every node that exists must be expected: walk with an explicit stack of paths. */
static void check_nothing_else(const struct expect_list *l, const struct probe *p)
{
    size_t cap = 64, n = 0;
    char **stack = malloc(cap * sizeof *stack);
    stack[n++] = strdup("/");
    while (n > 0) {
        char *dir = stack[--n];
        char **names;
        int count = p->list(p->ctx, dir, &names);
        assert_true(count >= 0);
        for (int i = 0; i < count; i++) {
            char path[512];
            path_join(path, sizeof path, dir, names[i]);
            const struct expect *e = ex_find(l, path);
            if (!e)
                fail_msg("unexpected node %s", path);
            if (e->kind == EX_DIR && !e->skip_children) {
                if (n == cap)
                    stack = realloc(stack, (cap *= 2) * sizeof *stack);
                stack[n++] = strdup(path);
            }
            free(names[i]);
        }
        free(names);
        free(dir);
    }
    free(stack);
}

void ex_check(const struct expect_list *l, const struct probe *p)
{
    for (size_t i = 0; i < l->n; i++)
        check_one(&l->e[i], p);
    check_nothing_else(l, p);
}

void ex_check_sample_gr2(const struct probe *p, const uint8_t *file, size_t size, const struct fx_gr2_layout *gl,
                         int version)
{
    struct expect_list l = {0};
    ex_sample_gr2(&l, file, size, gl, version);
    ex_check(&l, p);
    ex_free(&l);
}

void ex_check_t2fs(const struct probe *p, const uint8_t *file, size_t size, const struct fxt *root, size_t prefix,
                   size_t trailer)
{
    struct expect_list l = {0};
    ex_t2fs(&l, file, size, root, prefix, trailer);
    ex_check(&l, p);
    ex_free(&l);
}
