#include "fixture_t2fs.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rncpack.h"

static struct fxt *node(enum fxt_kind k)
{
    struct fxt *n = calloc(1, sizeof *n);
    if (!n)
        abort();
    n->kind = k;
    return n;
}

struct fxt *fxt_branch_v(uint32_t n, struct fxt **children)
{
    struct fxt *b = node(FXT_BRANCH);
    b->n = n;
    b->child = calloc(n ? n : 1, sizeof *b->child);
    memcpy(b->child, children, n * sizeof *children);
    return b;
}

struct fxt *fxt_branch(uint32_t n, ...)
{
    struct fxt *c[64];
    va_list ap;
    va_start(ap, n);
    for (uint32_t i = 0; i < n; i++)
        c[i] = va_arg(ap, struct fxt *);
    va_end(ap);
    return fxt_branch_v(n, c);
}

struct fxt *fxt_array(uint32_t elem_size, uint32_t count, const void *records, bool interleave)
{
    struct fxt *a = node(FXT_ARRAY);
    a->elem_size = elem_size;
    a->count = count;
    a->interleave = interleave;
    a->len = (size_t)elem_size * count;
    a->data = malloc(a->len ? a->len : 1);
    if (a->len)
        memcpy(a->data, records, a->len);
    return a;
}

struct fxt *fxt_raw(const void *data, size_t len)
{
    struct fxt *r = node(FXT_RAW);
    r->len = len;
    r->data = malloc(len ? len : 1);
    if (len)
        memcpy(r->data, data, len);
    return r;
}

void fxt_free(struct fxt *n)
{
    if (!n)
        return;
    for (uint32_t i = 0; i < n->n; i++)
        fxt_free(n->child[i]);
    free(n->child);
    free(n->data);
    free(n->bytes);
    free(n->inner);
    free(n);
}

struct wbuf {
    uint8_t *p;
    size_t len, cap;
    bool be;
};

static void wput(struct wbuf *w, const void *d, size_t n)
{
    if (w->len + n > w->cap) {
        w->cap = (w->len + n) * 2 + 64;
        w->p = realloc(w->p, w->cap);
    }
    memcpy(w->p + w->len, d, n);
    w->len += n;
}

static void w32(struct wbuf *w, uint32_t v)
{
    uint8_t b[4];
    for (int i = 0; i < 4; i++)
        b[w->be ? 3 - i : i] = (uint8_t)(v >> (8 * i));
    wput(w, b, 4);
}

static void wpad8(struct wbuf *w, uint8_t fill)
{
    while (w->len % 8)
        wput(w, &fill, 1);
}

static size_t align8(size_t v)
{
    return (v + 7) & ~(size_t)7;
}

/* The node's own bytes before padding (children already serialised). */
static void serialise(struct fxt *n, struct wbuf *w)
{
    if (n->kind == FXT_RAW) {
        wput(w, n->data, n->len);
        return;
    }
    if (n->kind == FXT_ARRAY) {
        w32(w, n->elem_size);
        w32(w, n->count);
        if (!n->interleave) {
            wput(w, n->data, n->len);
            return;
        }
        for (uint32_t k = 0; k < n->elem_size; k++) /* byte plane k: byte k of every element */
            for (uint32_t i = 0; i < n->count; i++)
                wput(w, &n->data[(size_t)i * n->elem_size + k], 1);
        return;
    }
    size_t header = align8(4 + 4 * ((size_t)n->n + 1)), off = header;
    w32(w, n->n);
    for (uint32_t i = 0; i < n->n; i++) {
        w32(w, (uint32_t)off);
        off += n->child[i]->stored;
    }
    w32(w, (uint32_t)off);
    wpad8(w, 0);
    for (uint32_t i = 0; i < n->n; i++)
        wput(w, n->child[i]->bytes, n->child[i]->stored);
}

/* Builds n->bytes bottom-up: children first, then the node, then compression, then
 * padding to 8 (0xCD after compressed nodes, as debug builds leave it). */
static void build(struct fxt *n, bool be)
{
    for (uint32_t i = 0; i < n->n; i++)
        build(n->child[i], be);
    free(n->bytes); /* a tree may be written more than once (both byte orders) */
    free(n->inner);
    n->bytes = n->inner = NULL;
    struct wbuf w = {.be = be};
    serialise(n, &w);
    if (n->compress) {
        n->inner = w.p;
        n->inner_len = w.len;
        size_t plen;
        uint8_t *p = rncpack(n->compress, w.p, w.len, 4, &plen);
        w = (struct wbuf){.be = be};
        wput(&w, p, plen);
        free(p);
        wpad8(&w, 0xCD);
    } else {
        wpad8(&w, 0);
    }
    n->bytes = w.p;
    n->stored = w.len;
}

/* Positions: absolute in the file, or relative to the enclosing compressed node. */
static void place(struct fxt *n, uint64_t pos, const struct fxt *blob)
{
    n->pos = pos;
    n->blob = blob;
    const struct fxt *inner_blob = n->compress ? n : blob;
    uint64_t base = n->compress ? 0 : pos;
    uint64_t off = align8(4 + 4 * ((size_t)n->n + 1));
    for (uint32_t i = 0; i < n->n; i++) {
        place(n->child[i], base + off, inner_blob);
        off += n->child[i]->stored;
    }
}

uint8_t *fxt_write(struct fxt *root, bool be, size_t prefix, size_t trailer, size_t *size)
{
    build(root, be);
    place(root, prefix, NULL);
    size_t total = prefix + root->stored + trailer;
    uint8_t *f = malloc(total);
    for (size_t i = 0; i < prefix; i++)
        f[i] = (uint8_t)(0xE0 + i);
    memcpy(f + prefix, root->bytes, root->stored);
    for (size_t i = 0; i < trailer; i++)
        f[prefix + root->stored + i] = (uint8_t)(0xF0 + i);
    *size = total;
    return f;
}

/* ---- the seed's model tree ---- */

static uint8_t *pattern(unsigned seed, size_t n)
{
    uint8_t *p = malloc(n ? n : 1);
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (uint8_t)(seed >> 16);
    }
    return p;
}

static struct fxt *arr(unsigned seed, uint32_t esize, uint32_t count, bool il, const char *type)
{
    uint8_t *p = pattern(seed, (size_t)esize * count);
    struct fxt *a = fxt_array(esize, count, p, il);
    free(p);
    a->type = type;
    return a;
}

static struct fxt *raw(unsigned seed, size_t len, const char *type)
{
    uint8_t *p = pattern(seed, len);
    struct fxt *r = fxt_raw(p, len);
    free(p);
    r->type = type;
    return r;
}

static struct fxt *typed_branch(struct fxt *b, const char *type)
{
    b->type = type;
    return b;
}

/* An index stream, as u16 words in the file's byte order: load 6 at slot 0, select a
 * bone, two triangles, load 3 at slot 11 and a triangle reusing slot 0, select another
 * bone, load 2 at slot 22 and a triangle reusing slot 11 (Turok 2 bits). */
const uint16_t *fxt_index_words(unsigned seed, size_t *n)
{
    static uint16_t w[10];
    uint16_t src[10] = {0x2000 | 6,
                        (uint16_t)(0x4000 | (seed % 7)),
                        0x8000 | (0 | 1 << 5 | 2 << 10),
                        0x8000 | (3 | 4 << 5 | 5 << 10),
                        0x2000 | 11 << 5 | 3,
                        0x8000 | (11 | 12 << 5 | 0 << 10),
                        (uint16_t)(0x4000 | (seed % 7 + 10)),
                        0x2000 | 22 << 5 | 2,
                        0x8000 | (22 | 23 << 5 | 11 << 10),
                        0x8000 | (13 | 22 << 5 | 1 << 10)};
    memcpy(w, src, sizeof w);
    *n = 10;
    return w;
}

static struct fxt *index_stream(unsigned seed, bool be)
{
    size_t n;
    const uint16_t *words = fxt_index_words(seed, &n);
    uint8_t b[20];
    for (size_t i = 0; i < n; i++) {
        b[2 * i + (be ? 1 : 0)] = (uint8_t)words[i];
        b[2 * i + (be ? 0 : 1)] = (uint8_t)(words[i] >> 8);
    }
    return fxt_raw(b, 2 * n);
}

struct fxt *fxt_model(unsigned seed, uint32_t meshes, uint32_t poses, bool be)
{
    return fxt_model_ex(seed, meshes, poses, be, 0);
}

struct fxt *fxt_model_ex(unsigned seed, uint32_t meshes, uint32_t poses, bool be, uint32_t verts)
{
    struct fxt *mesh[16], *surf[16], *bones[3], *hot[16], *m15[16], *pose[8];
    for (uint32_t m = 0; m < meshes; m++) {
        mesh[m] = arr(seed + 10 + m, 20, verts ? verts : 5 + m, true, "t2fs.array[20]x%u");
        struct fxt *s[2];
        for (int k = 0; k < 2; k++) {
            struct fxt *idx = index_stream(seed + (unsigned)k, be);
            idx->type = "t2fs.raw";
            s[k] = typed_branch(fxt_branch(2, raw(seed + 20 + m * 2 + (unsigned)k, 24, "t2fs.raw"), idx),
                                "t2fs.branch[2]");
        }
        surf[m] = typed_branch(fxt_branch(2, s[0], s[1]), "t2fs.branch[2]");
        hot[m] = arr(seed + 30 + m, 20, m, false, "t2fs.array[20]x%u");
        m15[m] = typed_branch(fxt_branch(0), "t2fs.branch[0]");
    }
    for (int b = 0; b < 3; b++)
        bones[b] = typed_branch(fxt_branch(2, arr(seed + 40 + (unsigned)b, 4, 2, false, "t2fs.array[4]x%u"),
                                           raw(seed + 50 + (unsigned)b, 112, "t2fs.raw")),
                                "t2fs.branch[2]");
    for (uint32_t p = 0; p < poses; p++) {
        struct fxt *p3 = typed_branch(fxt_branch(2, raw(seed + 60 + p, 16, "t2fs.raw"),
                                                 arr(seed + 61 + p, 12, 0, false, "t2fs.array[12]x%u")),
                                      "t2fs.branch[2]");
        struct fxt *p5 = typed_branch(fxt_branch(3, raw(seed + 62 + p, 32, "t2fs.raw"),
                                                 raw(seed + 63 + p, 13 + p, "t2fs.raw"),
                                                 raw(seed + 64 + p, 7, "t2fs.raw")),
                                      "t2fs.branch[3]");
        pose[p] = typed_branch(fxt_branch(6, arr(seed + 65 + p, 2, 4, false, "t2fs.array[2]x%u"),
                                          arr(seed + 66 + p, 4, 3, false, "t2fs.array[4]x%u"),
                                          arr(seed + 67 + p, 20, 3, false, "t2fs.array[20]x%u"), p3,
                                          arr(seed + 68 + p, 28, 1, false, "t2fs.array[28]x%u"), p5),
                               "t2fs.branch[6]");
    }
    struct fxt *model_0 = typed_branch(fxt_branch(2, raw(seed + 1, 32, "t2fs.raw"),
                                                  arr(seed + 2, 4, 3, false, "t2fs.array[4]x%u")),
                                       "t2fs.branch[2]");
    struct fxt *model_1 = typed_branch(
        fxt_branch(6, typed_branch(fxt_branch_v(meshes, mesh), NULL),
                   typed_branch(fxt_branch(1, arr(seed + 3, 4, 2, false, "t2fs.array[4]x%u")), "t2fs.branch[1]"),
                   typed_branch(fxt_branch_v(meshes, surf), NULL), typed_branch(fxt_branch_v(3, bones), "t2fs.branch[3]"),
                   typed_branch(fxt_branch_v(meshes, hot), NULL), typed_branch(fxt_branch_v(meshes, m15), NULL)),
        "t2fs.branch[6]");
    struct fxt *model = fxt_branch(4, model_0, model_1, typed_branch(fxt_branch_v(poses, pose), NULL),
                                   arr(seed + 4, 28, 2, false, "t2fs.array[28]x%u"));
    model->type = "t2fs.branch[4]";
    return model;
}

struct fxt *fxt_sample(unsigned seed, uint32_t nmodels, bool with_compressed, bool be)
{
    struct fxt *models[64];
    for (uint32_t i = 0; i < nmodels; i++)
        models[i] = fxt_model(seed + 1000 * i, 1 + i % 3, 1 + i % 2, be);
    if (with_compressed && nmodels >= 2) {
        models[0]->child[1]->child[0]->child[0]->compress = 2; /* a vertex buffer (leaf) */
        models[1]->child[2]->compress = 1;                     /* the poses (a branch) */
        models[0]->child[0]->child[0]->compress = 1;           /* info (a raw leaf) */
    }
    struct fxt *unknown_branch = fxt_branch(3, raw(seed + 7, 40, "t2fs.unknown"), fxt_branch(0),
                                            raw(seed + 8, 5, "t2fs.unknown"));
    unknown_branch->type = "t2fs.branch[3]";
    unknown_branch->child[1]->type = "t2fs.branch[0]";
    struct fxt *root = fxt_branch(3, fxt_branch_v(nmodels, models), unknown_branch,
                                  raw(seed + 9, 64, "t2fs.unknown"));
    return root;
}

/* Writes a large file straight to disk: root {models[nmodels], a big raw leaf}. Models
 * are built one at a time, so memory stays near the file size. */
int fxt_write_big(const char *path, uint32_t nmodels, uint32_t verts, uint64_t big_leaf, bool be)
{
    uint8_t **mb = calloc(nmodels ? nmodels : 1, sizeof *mb);
    size_t *ms = calloc(nmodels ? nmodels : 1, sizeof *ms);
    uint64_t models_size = align8(4 + 4 * ((size_t)nmodels + 1));
    for (uint32_t i = 0; i < nmodels; i++) {
        struct fxt *m = fxt_model_ex(i * 7919u, 1 + i % 3, 1 + i % 2, be, verts);
        build(m, be);
        mb[i] = m->bytes;
        ms[i] = m->stored;
        m->bytes = NULL;
        fxt_free(m);
        models_size += ms[i];
    }
    uint64_t big = align8(big_leaf);
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    struct wbuf w = {.be = be};
    w32(&w, 2); /* root: models, big leaf */
    w32(&w, 16);
    w32(&w, (uint32_t)(16 + models_size));
    w32(&w, (uint32_t)(16 + models_size + big));
    w32(&w, nmodels);
    uint64_t off = align8(4 + 4 * ((size_t)nmodels + 1));
    for (uint32_t i = 0; i < nmodels; i++) {
        w32(&w, (uint32_t)off);
        off += ms[i];
    }
    w32(&w, (uint32_t)off);
    wpad8(&w, 0);
    int rc = fwrite(w.p, 1, w.len, f) == w.len ? 0 : -1;
    free(w.p);
    for (uint32_t i = 0; i < nmodels; i++) {
        if (fwrite(mb[i], 1, ms[i], f) != ms[i])
            rc = -1;
        free(mb[i]);
    }
    uint8_t chunk[65536];
    for (uint64_t done = 0; done < big;) {
        size_t n = big - done < sizeof chunk ? (size_t)(big - done) : sizeof chunk;
        for (size_t k = 0; k < n; k++)
            chunk[k] = (uint8_t)((done + k) * 2654435761u >> 24);
        if (done == 0 && n >= 8)
            memset(chunk, 0xAB, 8); /* not a valid branch table: the leaf stays a leaf */
        if (fwrite(chunk, 1, n, f) != n)
            rc = -1;
        done += n;
    }
    free(mb);
    free(ms);
    return fclose(f) == 0 ? rc : -1;
}

/* ---- Turok 1 ---- */

struct fxt_t1_vert fxt_t1_vertex(unsigned seed, uint32_t i)
{
    unsigned k = seed * 131u + i * 7u;
    return (struct fxt_t1_vert){(int16_t)(k * 37 % 2001) - 1000,
                                (int16_t)(-(int)(k * 53 % 3001)),
                                (int16_t)(k * 11 % 30001) - 15000,
                                (uint16_t)(k % 3),
                                (int16_t)(k * 97 % 8193) - 4096,
                                (int16_t)(k * 29 % 1025),
                                {(uint8_t)(k * 3), (uint8_t)(200 + k % 50), (uint8_t)(k * 5 + 1), 255}};
}

uint16_t fxt_t1_word(unsigned slots, unsigned a, unsigned b, unsigned c, bool last)
{
    unsigned bits = slots == 16 ? 4 : 5, flag = slots == 16 ? 12 : 15;
    return (uint16_t)(a | b << bits | c << (2 * bits) | (unsigned)last << flag);
}

static void put16(uint8_t *p, uint16_t v, bool be)
{
    p[be ? 0 : 1] = (uint8_t)(v >> 8);
    p[be ? 1 : 0] = (uint8_t)v;
}

struct fxt *fxt_t1_section(const uint16_t *words, size_t nwords, uint32_t nverts, unsigned seed, bool be)
{
    uint8_t *w = malloc(2 * nwords + 1), *rec = malloc(16 * (size_t)nverts + 1);
    for (size_t i = 0; i < nwords; i++)
        put16(w + 2 * i, words[i], be);
    for (uint32_t i = 0; i < nverts; i++) {
        struct fxt_t1_vert x = fxt_t1_vertex(seed, i);
        uint8_t *r = rec + 16 * (size_t)i;
        put16(r, (uint16_t)x.x, be);
        put16(r + 2, (uint16_t)x.y, be);
        put16(r + 4, (uint16_t)x.z, be);
        put16(r + 6, x.flag, be);
        put16(r + 8, (uint16_t)x.s, be);
        put16(r + 10, (uint16_t)x.t, be);
        memcpy(r + 12, x.c, 4);
    }
    struct fxt *s = fxt_branch(3, fxt_raw("\x01\x02\x03\x04sect", 8), fxt_array(2, (uint32_t)nwords, w, false),
                               fxt_array(16, nverts, rec, true));
    free(w);
    free(rec);
    return s;
}

#define W16(a, b, c, l) (uint16_t)((a) | (b) << 4 | (c) << 8 | (l) << 12)
#define W32(a, b, c, l) (uint16_t)((a) | (b) << 5 | (c) << 10 | (l) << 15)

/* Loads, as the notes give them: load 0 fills min(count, C) slots from 0; later loads
 * put min(rest, C/2) into slot 0 (odd loads) or C/2 (even loads). Each case's slots below
 * were turned into section vertices by hand with that table. */
static const struct fxt_t1_case t1_cases[] = {
    {"16 slots, 40 vertices: 4 loads (slots 0, 0, 8, 0), runs of one, two and three triangles", 40, 3,
     {W16(0, 1, 2, 1), W16(0, 8, 15, 0), W16(7, 1, 9, 1), W16(8, 9, 0, 0), W16(15, 14, 7, 0), W16(3, 10, 4, 1),
      W16(0, 8, 12, 0), W16(5, 6, 7, 1)},
     8, "16", "0 1 2\n16 8 15\n23 17 9\n24 25 16\n31 30 23\n19 26 20\n32 24 28\n37 38 39\n",
     "load 0..15 -> slot 0\ntri 0 1 2\nload 16..23 -> slot 0\ntri 0 8 15\ntri 7 1 9\nload 24..31 -> slot 8\n"
     "tri 8 9 0\ntri 15 14 7\ntri 3 10 4\nload 32..39 -> slot 0\ntri 0 8 12\ntri 5 6 7\n",
     NULL, NULL},
    {"32 slots, 70 vertices: 4 loads (slots 0, 0, 16, 0; the last one 6 vertices)", 70, 5,
     {W32(31, 30, 0, 1), W32(0, 16, 15, 0), W32(17, 1, 31, 1), W32(16, 31, 0, 1), W32(0, 5, 16, 0), W32(6, 15, 31, 1)},
     6, "32", "31 30 0\n32 16 47\n17 33 31\n48 63 32\n64 69 48\n38 47 63\n",
     "load 0..31 -> slot 0\ntri 31 30 0\nload 32..47 -> slot 0\ntri 0 16 15\ntri 17 1 31\nload 48..63 -> slot 16\n"
     "tri 16 31 0\nload 64..69 -> slot 0\ntri 0 5 16\ntri 6 15 31\n",
     NULL, NULL},
    {"the notes' example: 16 vertices, one load, one run of four", 16, 7, {0x0210, 0x0cba, 0x0123, 0x1ecf}, 4, "16",
     "0 1 2\n10 11 12\n3 2 1\n15 12 14\n", "load 0..15 -> slot 0\ntri 0 1 2\ntri 10 11 12\ntri 3 2 1\ntri 15 12 14\n",
     NULL, NULL},
    {"a slot used before it is loaded", 10, 9, {W16(0, 1, 12, 1)}, 1, "none", NULL, NULL,
     "word 0 (0x1c10): slot 12 used before any vertex was loaded into it",
     "word 0 (0x1c10): slot 16 used before any vertex was loaded into it"},
    {"too short: 20 vertices need a second load and run", 20, 11, {W16(0, 1, 2, 1)}, 1, "none", NULL, NULL,
     "word 1: the stream ends before load 1", "word 1: the stream ends inside a pair of triangles"},
    {"too long: a word after the last run", 5, 13, {W16(0, 1, 2, 1), W16(2, 3, 4, 1)}, 2, "none", NULL, NULL,
     "word 1: the stream goes on after the last run (1 more words",
     "word 0 (0x1210): slot 16 used before any vertex was loaded into it"},
    {"too short: a pair cut after its first word", 10, 15, {W16(0, 1, 2, 0)}, 1, "none", NULL, NULL,
     "word 1: the stream ends inside a pair of triangles",
     "word 0 (0x0210): slot 16 used before any vertex was loaded into it"},
};

const struct fxt_t1_case *fxt_t1_cases(size_t *n)
{
    *n = sizeof t1_cases / sizeof t1_cases[0];
    return t1_cases;
}

static struct fxt *t1_case_section(unsigned k, bool be)
{
    const struct fxt_t1_case *c = &t1_cases[k];
    return fxt_t1_section(c->words, c->nwords, c->nverts, c->seed, be);
}

static struct fxt *u16_array(const uint16_t *v, uint32_t n, bool be)
{
    uint8_t b[64];
    for (uint32_t i = 0; i < n; i++)
        put16(b + 2 * i, v[i], be);
    return fxt_array(2, n, b, false);
}

static struct fxt *t1_object(const void *bounds, size_t blen, struct fxt **nodes, uint32_t nnodes)
{
    struct fxt *info = fxt_branch(2, fxt_raw(bounds, blen), fxt_array(2, 0, NULL, false));
    struct fxt *geometry = fxt_branch(2, fxt_raw("geominfo", 8), fxt_branch_v(nnodes, nodes));
    return fxt_branch(4, info, geometry, fxt_branch(0), fxt_array(4, 0, NULL, false));
}

struct fxt *fxt_t1_sample(bool be)
{
    static const float bounds[6] = {-1.5f, -2.0f, -3.0f, 4.0f, 5.25f, 6.0f};
    uint8_t b[24];
    for (int k = 0; k < 6; k++) {
        uint32_t u;
        memcpy(&u, &bounds[k], 4);
        for (int j = 0; j < 4; j++)
            b[4 * k + (be ? 3 - j : j)] = (uint8_t)(u >> (8 * j));
    }
    const uint16_t one[1] = {1}, zero_one[2] = {0, 1};
    struct fxt *node0 = fxt_branch(3, u16_array(one, 1, be), u16_array(zero_one, 1, be),
                                   fxt_branch(1, fxt_branch(2, t1_case_section(0, be), t1_case_section(2, be))));
    struct fxt *node1 = fxt_branch(3, u16_array(NULL, 0, be), u16_array(zero_one, 2, be),
                                   fxt_branch(2, fxt_branch(1, t1_case_section(1, be)),
                                              fxt_branch(4, t1_case_section(3, be), t1_case_section(4, be),
                                                         t1_case_section(5, be), t1_case_section(6, be))));
    struct fxt *nodes0[2] = {node0, node1};
    struct fxt *packed = t1_case_section(2, be);
    packed->compress = 2;
    struct fxt *nodes1[1] = {
        fxt_branch(3, u16_array(NULL, 0, be), u16_array(zero_one, 1, be), fxt_branch(1, fxt_branch(1, packed)))};
    struct fxt *objects = fxt_branch(2, t1_object(b, 24, nodes0, 2), t1_object("shortbnd", 8, nodes1, 1));
    struct fxt *e[9];
    for (int k = 0; k < 9; k++)
        e[k] = fxt_array(1, 0, NULL, false);
    return fxt_branch(11, objects, fxt_array(80, 0, NULL, false), fxt_array(2, 0, NULL, false), fxt_branch(0),
                      fxt_branch(3, e[0], e[1], e[2]), fxt_branch(2, e[3], fxt_branch(0)), fxt_branch(0),
                      fxt_branch(3, e[4], e[5], fxt_raw("max", 3)), fxt_branch(2, e[6], e[7]), fxt_branch(0), e[8]);
}

const struct fxt *fxt_t1_sample_section(const struct fxt *root, unsigned object, unsigned node, unsigned part,
                                        unsigned section)
{
    return root->child[0]->child[object]->child[1]->child[1]->child[node]->child[2]->child[part]->child[section];
}
