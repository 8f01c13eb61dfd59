/* /models/N: the Turok 2 model tree under the seed's names, decoded. It finds its nodes
 * with the t2fs view's locator (so compressed nodes, the cache and laziness are
 * /root's own) and adds de-interleaved vertex buffers, header-stripped arrays and decoded
 * index streams. A node that is missing or broken is NAME.error naming it. */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs/views/t2fs/view_t2fs_models.h"
#include "parse/base/err.h"
#include "parse/base/reader.h"
#include "parse/t2fs/t2fs.h"
#include "parse/t2fs/t2fs_mesh.h"

/* A directory of /models: the view and the model it shows (arg: the item's index), with
 * its lists as populate_model found them: an item looks itself up from its list, so it
 * costs the same whatever the list's length (from the model, each lookup validated the
 * whole list on its way). */
struct mdir {
    struct t2_view *v;
    struct t2fs_node model;
    struct t2fs_node meshes, surfaces, bones, poses; /* valid where populate_model added the list's items */
};

/* The node at child indices idx below `from`; false, with NAME.error in dir naming the
 * missing or broken node, when there is none. */
static bool find(struct t2_view *v, const struct t2fs_node *from, const unsigned *idx, size_t nidx,
                 struct t2fs_node *out, uint32_t dir, const char *name)
{
    char err[400];
    enum s3_err e = t2fs_node_at(v, from, idx, nidx, out, err, sizeof err);
    if (e == S3_OK)
        return true;
    t2fs_add_node_error(v, dir, name, e, err);
    return false;
}
#define IDX(...) (const unsigned[]){__VA_ARGS__}, sizeof((unsigned[]){__VA_ARGS__}) / sizeof(unsigned)
#define FIND(v, from, out, dir, name, ...) find(v, from, IDX(__VA_ARGS__), out, dir, name)

/* NAME.bin with an array leaf's data, header stripped; the count is in the type. */
static void add_array_data(struct t2_view *v, uint32_t dir, const char *name, const struct t2fs_node *n)
{
    struct t2fs_array a;
    char err[400], type[64], fname[64];
    enum s3_err e = t2fs_node_array(v, n, &a, err, sizeof err);
    if (e) {
        t2fs_add_node_error(v, dir, name, e, err);
        return;
    }
    snprintf(fname, sizeof fname, "%s.bin", name);
    snprintf(type, sizeof type, "t2fs.array[%" PRIu32 "]x%" PRIu32, a.esize, a.count);
    t2fs_node_add_file(v, n, dir, fname, 8, (uint64_t)a.esize * a.count, type);
    free(a.bytes);
}

/* NAME.bin with a raw leaf's bytes (at most max of them; 0: all). */
static void add_raw(struct t2_view *v, uint32_t dir, const char *name, const struct t2fs_node *n, size_t max,
                    const char *type)
{
    char err[400], fname[64];
    uint8_t *b;
    size_t len;
    enum s3_err e = t2fs_node_expect(n, T2FS_NODE_LEAF, err, sizeof err);
    if (e == S3_OK)
        e = t2fs_node_bytes(v, n, &b, &len, err, sizeof err);
    if (e) {
        t2fs_add_node_error(v, dir, name, e, err);
        return;
    }
    snprintf(fname, sizeof fname, "%s.bin", name);
    t2fs_node_add_file(v, n, dir, fname, 0, max && len > max ? max : len, type);
    free(b);
}

/* ---- meshes ----
 *
 * A mesh's vertex files are made at each read from its vertex buffer, not kept: they are
 * most of a model's bytes (issue 32's rule: a generated file whose size the input chooses
 * is a slice of bytes or rendered on read). The de-interleaved records are a cache item
 * (struct vbuf), produced once per read-through (an open handle holds it: tree_gen_item)
 * within cache_mb; vertices.bin is a slice of it, and vertices.txt, whose rows all have one
 * width, renders only the characters asked for. */
enum { VERTS_BIN, VERTS_TXT };

/* One mesh's de-interleaved vertex records. */
struct vbuf {
    struct cached c; /* first: the cache hands this pointer back */
    struct mdir *m;
    uint32_t mesh, esize, count;
};

/* Rows of vertices.txt rendered so far (each row counted where its first character is
 * written): tests check a read-through renders each row once. */
static _Atomic uint64_t vertex_rows;

uint64_t t2fs_models_vertex_rows(void)
{
    return atomic_load_explicit(&vertex_rows, memory_order_relaxed);
}

/* The vertex buffer of mesh `mesh` of m's model, as an array (free a->bytes): S3_OK, or
 * the reason with err. */
static enum s3_err mesh_vertices(struct mdir *m, uint64_t mesh, struct t2fs_node *vb, struct t2fs_array *a,
                                 char *err, size_t errlen)
{
    enum s3_err e = t2fs_node_child(m->v, &m->meshes, (uint32_t)mesh, vb, err, errlen);
    if (e == S3_OK)
        e = t2fs_node_array(m->v, vb, a, err, errlen);
    if (e)
        return e;
    if (a->esize == 0 && a->count) {
        free(a->bytes);
        return s3_fail(S3_ERR_FORMAT, err, errlen, "the vertex buffer's element size is 0");
    }
    return S3_OK;
}

/* The producer: reads the buffer through the locator, which takes only the view's own
 * lock (never the tree's: cache.h), so a read holding the tree lock may pin this item. */
static enum s3_err produce_vertices(struct cached *c, uint8_t **data, size_t *size, char *err, size_t errlen)
{
    struct vbuf *vb = (struct vbuf *)c;
    struct t2fs_node n;
    struct t2fs_array a;
    enum s3_err e = mesh_vertices(vb->m, vb->mesh, &n, &a, err, errlen);
    if (e)
        return e;
    if (a.esize != vb->esize || a.count != vb->count) {
        free(a.bytes);
        return s3_fail(S3_ERR_IO, err, errlen, "the vertex buffer changed since it was listed");
    }
    size_t bytes = (size_t)a.esize * a.count;
    uint8_t *rec = alloc_array(bytes, 1);
    if (rec)
        t2_deinterleave(a.data, a.esize, a.count, rec);
    free(a.bytes);
    if (!rec)
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory for %zu bytes", bytes);
    *data = rec;
    *size = bytes;
    return S3_OK;
}

static struct cached *vertices_item(void *ctx, uint64_t arg, struct cache **cache)
{
    (void)arg;
    struct vbuf *vb = ctx;
    *cache = &t2fs_view_fs(vb->m->v)->cache;
    return &vb->c;
}

/* vertices.txt: each record's bytes in hex, a space before every fourth byte but the
 * first, one line per record. Its rows' width: */
static uint64_t vertex_row_width(uint32_t esize)
{
    return esize ? 2ull * esize + (esize - 1) / 4 + 1 : 1;
}

/* Character p (below the width) of the row of record rec: "aabbccdd eeff...\n". */
static char vertex_char(const uint8_t *rec, uint64_t width, uint64_t p)
{
    static const char hex[] = "0123456789abcdef";
    if (p == width - 1)
        return '\n';
    uint64_t k, nib; /* the byte, and which of its digits */
    if (p < 8) {
        k = p / 2, nib = p % 2;
    } else {
        uint64_t q = (p - 8) % 9, g = (p - 8) / 9;
        if (q == 0)
            return ' ';
        k = 4 + 4 * g + (q - 1) / 2, nib = (q - 1) % 2;
    }
    return hex[nib ? rec[k] & 15 : rec[k] >> 4];
}

/* Characters [off, off+len) of vertices.txt from the records: only those rows. */
static void vertex_text(const uint8_t *recs, uint32_t esize, uint64_t off, char *out, size_t len)
{
    uint64_t width = vertex_row_width(esize), row = off / width, p = off % width, rows = 0;
    for (size_t i = 0; i < len; i++) {
        rows += p == 0;
        out[i] = vertex_char(recs + row * esize, width, p);
        if (++p == width)
            p = 0, row++;
    }
    atomic_fetch_add_explicit(&vertex_rows, rows, memory_order_relaxed);
}

static enum s3_err read_vertices(struct tree *t, void *ctx, uint64_t arg, uint64_t off, void *buf, size_t len,
                                 size_t *got)
{
    (void)t;
    struct vbuf *vb = ctx;
    struct cache *cache = &t2fs_view_fs(vb->m->v)->cache;
    char err[200];
    size_t size;
    const uint8_t *recs;
    enum s3_err pin = cache_pin(cache, &vb->c, &recs, &size, err, sizeof err);
    if (pin) /* refused memory: ENOMEM to this read; else the file changed since the listing */
        return pin == S3_ERR_NOMEM ? pin : S3_ERR_IO;
    uint64_t have = arg == VERTS_TXT ? vb->count * vertex_row_width(vb->esize) : size;
    enum s3_err e = off + len <= have ? S3_OK : S3_ERR_IO; /* tree_read asks within the size */
    *got = e ? 0 : len;
    if (*got > 0 && arg == VERTS_TXT)
        vertex_text(recs, vb->esize, off, buf, len);
    else if (*got > 0)
        memcpy(buf, recs + off, len);
    cache_unpin(cache, &vb->c);
    return e;
}

static enum s3_err populate_mesh(struct tree *t, uint32_t dir, void *ctx, uint64_t mesh)
{
    struct mdir *m = ctx;
    struct t2fs_node n;
    struct t2fs_array a;
    char err[400];
    if (!FIND(m->v, &m->meshes, &n, dir, "vertices", (unsigned)mesh))
        return S3_OK;
    enum s3_err e = mesh_vertices(m, mesh, &n, &a, err, sizeof err);
    if (e) {
        t2fs_add_node_error(m->v, dir, "vertices", e, err);
        return S3_OK;
    }
    free(a.bytes);
    struct vbuf *vb = tree_alloc(t, sizeof *vb);
    if (!vb)
        return S3_ERR_NOMEM;
    vb->m = m;
    vb->mesh = (uint32_t)mesh;
    vb->esize = a.esize;
    vb->count = a.count;
    vb->c.produce = produce_vertices;
    vb->c.hint = (uint64_t)a.esize * a.count;
    uint32_t ino = tree_add_gen(t, dir, "vertices.bin", NULL, vb->c.hint, read_vertices, vb, VERTS_BIN);
    if (!ino) /* refused (the node limit, which /info reports) */
        return S3_OK;
    uint64_t so, sl;
    t2fs_node_span(&n, &so, &sl);
    tree_set_span(t, ino, so, sl);
    set_typef(t, ino, "t2fs.vertices[%" PRIu32 "]x%" PRIu32, a.esize, a.count);
    tree_add_gen(t, dir, "vertices.txt", "text", (uint64_t)a.count * vertex_row_width(a.esize), read_vertices, vb,
                 VERTS_TXT);
    return S3_OK;
}

/* ---- surfaces: the index streams of one mesh, decoded in order ---- */

/* The files of rows a surface or a bone shows (commands.txt, triangles.txt, bones.txt,
 * indices, bone_indices): a text up to VIEW_TEXT_MAX, else rendered on read from the
 * decoded arrays or the 4-byte elements as a cache item made again from the node
 * (view_add_form_rows), never a text whose size the file chooses nor a copy in the tree. */
enum t2_rows_kind { ROWS_CMD, ROWS_TRI, ROWS_TRI_BONES, ROWS_U32, ROWS_S16X2 };

/* What a rows file is made from again: the node (an index stream, or an array of 4-byte
 * elements) and, for a stream, the mesh's vertex cache as it was before the stream. */
struct t2_rows_src {
    struct t2_view *v;
    struct t2fs_node node;
    enum t2_rows_kind kind;
    bool be;
    struct t2_vcache start;
};

static int t2_row_format(enum t2_rows_kind kind, bool be, const uint8_t *data, uint64_t k, char *s, size_t cap)
{
    if (kind == ROWS_CMD) {
        const struct t2_cmd *c = (const struct t2_cmd *)data + k;
        if (c->kind == T2_CMD_TRI)
            return snprintf(s, cap, "tri %u %u %u", c->a, c->b, c->c);
        if (c->kind == T2_CMD_BONE)
            return snprintf(s, cap, "bone %u", c->a);
        if (c->kind == T2_CMD_LOAD)
            return snprintf(s, cap, "load %u at %u", c->a, c->b);
        return snprintf(s, cap, "unknown 0x%04x", c->word);
    }
    if (kind == ROWS_TRI || kind == ROWS_TRI_BONES) {
        const struct t2_tri *x = (const struct t2_tri *)data + k;
        if (kind == ROWS_TRI)
            return snprintf(s, cap, "%" PRId64 " %" PRId64 " %" PRId64, x->v[0], x->v[1], x->v[2]);
        return snprintf(s, cap, "%" PRId32 " %" PRId32 " %" PRId32, x->bone[0], x->bone[1], x->bone[2]);
    }
    const uint8_t *p = data + 4 * k;
    if (kind == ROWS_U32)
        return snprintf(s, cap, "%" PRIu32, ld_u32(p, be));
    return snprintf(s, cap, "%d %d", (int16_t)ld_u16(p, be), (int16_t)ld_u16(p + 2, be));
}

static enum s3_err t2_row(const void *ctx, const uint8_t *form, uint64_t k, char *scratch, const char **text,
                          size_t *len)
{
    const struct t2_rows_src *r = ctx;
    *text = scratch;
    return view_row_printed(t2_row_format(r->kind, r->be, form, k, scratch, VIEW_ROW_SCRATCH), len);
}

/* The form again: the array's elements, or the stream decoded from the same cache state
 * (its commands, or its triangles). */
static enum s3_err t2_rows_derive(const void *ctx, uint8_t **form, size_t *len, char *err, size_t errlen)
{
    const struct t2_rows_src *r = ctx;
    enum s3_err e;
    if (r->kind == ROWS_U32 || r->kind == ROWS_S16X2) {
        struct t2fs_array a;
        if ((e = t2fs_node_array(r->v, &r->node, &a, err, errlen)))
            return e;
        *len = (size_t)a.count * 4;
        memmove(a.bytes, a.data, *len);
        *form = a.bytes;
        return S3_OK;
    }
    uint8_t *b;
    size_t blen;
    if ((e = t2fs_node_bytes(r->v, &r->node, &b, &blen, err, errlen)))
        return e;
    struct t2_vcache cache = r->start;
    struct t2_stream st;
    e = t2_decode_stream(b, blen, r->be, &cache, &st);
    free(b);
    if (e != S3_OK) {
        t2_stream_free(&st);
        return s3_fail(e, err, errlen, "out of memory");
    }
    if (r->kind == ROWS_CMD) {
        *form = (uint8_t *)st.cmd, *len = st.ncmd * sizeof *st.cmd;
        st.cmd = NULL;
    } else {
        *form = (uint8_t *)st.tri, *len = st.ntri * sizeof *st.tri;
        st.tri = NULL;
    }
    t2_stream_free(&st);
    return S3_OK;
}

static uint32_t add_t2_rows(uint32_t dir, const char *name, const char *xtype, const struct t2_rows_src *src,
                            const void *data, size_t esize, uint64_t n)
{
    struct view_form f = {t2_rows_derive, t2_row, src, sizeof *src};
    return view_add_form_rows(t2fs_view_fs(src->v), dir, name, xtype, &f, data, (size_t)(n * esize), n);
}

/* src: the stream's node and the cache state before it (kind set here for each file). */
static void add_stream_files(struct tree *t, uint32_t dir, const struct t2_stream *s, struct t2_rows_src *src)
{
    size_t len;
    char *text;
    src->kind = ROWS_CMD;
    add_t2_rows(dir, "commands.txt", "text", src, s->cmd, sizeof *s->cmd, s->ncmd);
    src->kind = ROWS_TRI;
    add_t2_rows(dir, "triangles.txt", "text", src, s->tri, sizeof *s->tri, s->ntri);
    src->kind = ROWS_TRI_BONES;
    add_t2_rows(dir, "bones.txt", "text", src, s->tri, sizeof *s->tri, s->ntri);
    if (s->first >= 0)
        tree_add_textf(t, dir, "vertex_range", "text", "%" PRId64 " %" PRId64 "\n", s->first, s->last);
    else
        tree_add_textf(t, dir, "vertex_range", "text", "none\n");
    if (s->nerr) {
        struct sbuf e = {0};
        for (size_t i = 0; i < s->nerr; i++)
            sb_printf(&e, "%s\n", s->err[i]);
        if (s->dropped)
            sb_printf(&e, "%zu more problems not shown\n", s->dropped);
        text = sb_take(&e, &len);
        tree_add_text(t, dir, "triangles.error", "error", text, len);
    }
}

static void add_surface(struct t2_view *v, uint32_t sdir, const struct t2fs_node *surf, struct t2_vcache *cache)
{
    struct tree *t = t2fs_view_fs(v)->tree;
    bool be = t2fs_view_big_endian(v);
    struct t2fs_node mat, idx;
    char err[400];
    enum s3_err e = t2fs_node_child(v, surf, 0, &mat, err, sizeof err);
    if (e) {
        t2fs_add_node_error(v, sdir, "material", e, err);
    } else {
        add_raw(v, sdir, "material", &mat, 24, "s_t2fsDataMaterial");
        uint8_t *b;
        size_t len;
        e = mat.kind == T2FS_NODE_LEAF ? t2fs_node_bytes(v, &mat, &b, &len, err, sizeof err) : S3_ERR_FORMAT;
        if (e == S3_ERR_NOMEM)
            tree_note_oom(t); /* the listing fails: never without texture_id */
        if (e == S3_OK) {
            if (len >= 4) {
                uint32_t ino = tree_add_textf(t, sdir, "texture_id", "u32", "%" PRIu32 "\n", ld_u32(b, be));
                uint64_t so, sl; /* the material's first field (a compressed node's: its stored bytes) */
                t2fs_node_span(&mat, &so, &sl);
                tree_set_span(t, ino, so, mat.blob ? sl : 4);
            }
            free(b);
        }
    }
    if ((e = t2fs_node_child(v, surf, 1, &idx, err, sizeof err))) {
        t2fs_add_node_error(v, sdir, "indices", e, err);
        return;
    }
    uint8_t *b;
    size_t len;
    e = t2fs_node_expect(&idx, T2FS_NODE_LEAF, err, sizeof err);
    if (e == S3_OK)
        e = t2fs_node_bytes(v, &idx, &b, &len, err, sizeof err);
    if (e) {
        t2fs_add_node_error(v, sdir, "indices", e, err);
        return;
    }
    t2fs_node_add_file(v, &idx, sdir, "indices.bin", 0, len, "u16[]");
    struct t2_stream st;
    struct t2_rows_src src = {v, idx, ROWS_CMD, be, *cache};
    if (t2_decode_stream(b, len, be, cache, &st) == S3_OK)
        add_stream_files(t, sdir, &st, &src);
    else
        tree_note_oom(t); /* its one failure: the listing fails, never without the stream's files */
    t2_stream_free(&st);
    free(b);
}

static enum s3_err populate_surfaces(struct tree *t, uint32_t dir, void *ctx, uint64_t mesh)
{
    struct mdir *m = ctx;
    struct t2_view *v = m->v;
    struct t2fs_node vb, list;
    struct t2fs_array a;
    char err[400];
    uint32_t nverts = 0;
    enum s3_err e = t2fs_node_child(v, &m->meshes, (uint32_t)mesh, &vb, err, sizeof err);
    if (e == S3_OK)
        e = t2fs_node_array(v, &vb, &a, err, sizeof err);
    if (e == S3_ERR_NOMEM) /* the vertex count decodes the streams: never guessed */
        return e;
    if (e == S3_OK) {
        nverts = a.count;
        free(a.bytes);
    }
    if (!FIND(v, &m->surfaces, &list, dir, "surfaces", (unsigned)mesh))
        return S3_OK;
    if ((e = t2fs_node_expect(&list, T2FS_NODE_BRANCH, err, sizeof err))) {
        t2fs_add_node_error(v, dir, "surfaces", e, err);
        return S3_OK;
    }
    struct t2_vcache cache; /* one per mesh: its surfaces share the vertex buffer */
    t2_vcache_init(&cache, nverts);
    for (uint32_t s = 0; s < list.count; s++) {
        char name[16];
        snprintf(name, sizeof name, "%" PRIu32, s);
        struct t2fs_node surf;
        e = t2fs_node_child(v, &list, s, &surf, err, sizeof err);
        if (e == S3_OK)
            e = t2fs_node_expect(&surf, T2FS_NODE_BRANCH, err, sizeof err);
        if (e) {
            t2fs_add_node_error(v, dir, name, e, err);
            continue;
        }
        add_surface(v, tree_add_dir(t, dir, name, "t2fs.surface", NULL, NULL, 0), &surf, &cache);
    }
    return S3_OK;
}

/* ---- bones, poses, the model ---- */

/* The array leaf n when its elements are 4 bytes each (free a->bytes after use); false,
 * with NAME.error in dir saying why, when it is not. */
static bool array_of_4(struct t2_view *v, uint32_t dir, const char *name, const struct t2fs_node *n,
                       struct t2fs_array *a)
{
    char err[400];
    enum s3_err e = t2fs_node_array(v, n, a, err, sizeof err);
    if (e == S3_OK && a->esize == 4)
        return true;
    if (a->bytes)
        snprintf(err, sizeof err, "element size %" PRIu32 ", not 4", a->esize);
    t2fs_add_node_error(v, dir, name, e, err);
    free(a->bytes);
    return false;
}

static enum s3_err populate_bone(struct tree *t, uint32_t dir, void *ctx, uint64_t bone)
{
    (void)t;
    struct mdir *m = ctx;
    struct t2_view *v = m->v;
    struct t2fs_node n;
    struct t2fs_array a;
    if (FIND(v, &m->bones, &n, dir, "bone", (unsigned)bone, 1))
        add_raw(v, dir, "bone", &n, 0, "t2fs.raw");
    if (!FIND(v, &m->bones, &n, dir, "indices", (unsigned)bone, 0) || !array_of_4(v, dir, "indices", &n, &a))
        return S3_OK;
    struct t2_rows_src src = {v, n, ROWS_U32, t2fs_view_big_endian(v), {{0}, {0}, 0, 0, 0}};
    add_t2_rows(dir, "indices", "u32[]", &src, a.data, 4, a.count);
    free(a.bytes);
    return S3_OK;
}

static void add_bone_indices(struct t2_view *v, uint32_t dir, const struct t2fs_node *n)
{
    struct t2fs_array a;
    if (!array_of_4(v, dir, "bone_indices", n, &a))
        return;
    struct t2_rows_src src = {v, *n, ROWS_S16X2, t2fs_view_big_endian(v), {{0}, {0}, 0, 0, 0}};
    add_t2_rows(dir, "bone_indices", "s16[][2]", &src, a.data, 4, a.count);
    free(a.bytes);
}

static enum s3_err populate_pose(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)t;
    struct mdir *m = ctx;
    struct t2_view *v = m->v;
    unsigned p = (unsigned)arg;
    struct t2fs_node n;
    if (FIND(v, &m->poses, &n, dir, "bone_indices", p, 1))
        add_bone_indices(v, dir, &n);
    if (FIND(v, &m->poses, &n, dir, "orientations", p, 2))
        add_array_data(v, dir, "orientations", &n);
    if (FIND(v, &m->poses, &n, dir, "header", p, 5, 0))
        add_raw(v, dir, "header", &n, 0, "t2fs.raw");
    if (FIND(v, &m->poses, &n, dir, "rotations", p, 5, 1))
        add_raw(v, dir, "rotations", &n, 0, "t2fs.raw");
    if (FIND(v, &m->poses, &n, dir, "positions", p, 5, 2))
        add_raw(v, dir, "positions", &n, 0, "t2fs.raw");
    if (FIND(v, &m->poses, &n, dir, "model_2_x_0", p, 0))
        add_array_data(v, dir, "model_2_x_0", &n);
    if (FIND(v, &m->poses, &n, dir, "model_2_x_3_0", p, 3, 0))
        add_raw(v, dir, "model_2_x_3_0", &n, 0, "t2fs.raw");
    if (FIND(v, &m->poses, &n, dir, "model_2_x_3_1", p, 3, 1))
        add_array_data(v, dir, "model_2_x_3_1", &n);
    if (FIND(v, &m->poses, &n, dir, "model_2_x_4", p, 4))
        add_array_data(v, dir, "model_2_x_4", &n);
    return S3_OK;
}

/* A list directory NAME with one item directory per child of the list node (found by
 * its child indices below the model: rc, err); NAME/NAME.error when the list node is
 * missing or not a branch. */
static uint32_t add_list(struct mdir *m, uint32_t dir, const char *name, const struct t2fs_node *list,
                         enum s3_err rc, const char *err, populate_fn fn, const char *type)
{
    struct tree *t = t2fs_view_fs(m->v)->tree;
    uint32_t d = tree_add_dir(t, dir, name, "t2fs.list", NULL, NULL, 0);
    char why[400];
    enum s3_err e = rc ? rc : t2fs_node_expect(list, T2FS_NODE_BRANCH, why, sizeof why);
    if (e) {
        t2fs_add_node_error(m->v, d, name, e, rc ? err : why);
        return d;
    }
    for (uint32_t i = 0; i < list->count && fn; i++) {
        char child[16];
        snprintf(child, sizeof child, "%" PRIu32, i);
        tree_add_dir(t, d, child, type, fn, m, i);
    }
    return d;
}

static enum s3_err populate_model(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    struct mdir *m = ctx;
    struct t2_view *v = m->v;
    struct t2fs_node n;
    char err[400], at[160], link[200];
    m->meshes = m->surfaces = m->bones = m->poses = (struct t2fs_node){.kind = T2FS_NODE_LEAF}; /* until found */
    t2fs_node_name(&m->model, at, sizeof at);
    snprintf(link, sizeof link, "../..%s", at);
    tree_add_link(t, dir, "raw", link);
    if (FIND(v, &m->model, &n, dir, "info", 0, 0)) {
        uint8_t *b;
        size_t len;
        enum s3_err e = t2fs_node_expect(&n, T2FS_NODE_LEAF, err, sizeof err);
        if (e == S3_OK)
            e = t2fs_node_bytes(v, &n, &b, &len, err, sizeof err);
        if (e) {
            t2fs_add_node_error(v, dir, "info", e, err);
        } else {
            bool unset = len == 8 && memcmp(b, "\0\0\0\0\0\0\0\0", 8) == 0;
            if (!unset)
                t2fs_node_add_file(v, &n, dir, "info.bin", 0, len < 32 ? len : 32, "s_t2fsDataModelInfo");
            free(b);
        }
    }
    if (FIND(v, &m->model, &n, dir, "model_0_1", 0, 1))
        add_array_data(v, dir, "model_0_1", &n);
    enum s3_err rc = t2fs_node_at(v, &m->model, IDX(1, 0), &m->meshes, err, sizeof err);
    add_list(m, dir, "meshes", &m->meshes, rc, err, populate_mesh, "t2fs.mesh");
    if (FIND(v, &m->model, &n, dir, "model_1_1_0", 1, 1, 0))
        add_array_data(v, dir, "model_1_1_0", &n);
    rc = t2fs_node_at(v, &m->model, IDX(1, 2), &m->surfaces, err, sizeof err);
    add_list(m, dir, "surfaces", &m->surfaces, rc, err, populate_surfaces, "t2fs.surfaces");
    rc = t2fs_node_at(v, &m->model, IDX(1, 3), &m->bones, err, sizeof err);
    add_list(m, dir, "bones", &m->bones, rc, err, populate_bone, "t2fs.bone");
    struct t2fs_node hp;
    rc = t2fs_node_at(v, &m->model, IDX(1, 4), &hp, err, sizeof err);
    uint32_t hdir = add_list(m, dir, "hotpoints", &hp, rc, err, NULL, NULL);
    for (uint32_t i = 0; rc == 0 && hp.kind == T2FS_NODE_BRANCH && i < hp.count; i++) {
        char name[16];
        snprintf(name, sizeof name, "%" PRIu32, i);
        enum s3_err e = t2fs_node_child(v, &hp, i, &n, err, sizeof err);
        if (e)
            t2fs_add_node_error(v, hdir, name, e, err);
        else
            add_array_data(v, hdir, name, &n);
    }
    rc = t2fs_node_at(v, &m->model, IDX(2), &m->poses, err, sizeof err);
    add_list(m, dir, "poses", &m->poses, rc, err, populate_pose, "t2fs.pose");
    if (FIND(v, &m->model, &n, dir, "model_3", 3))
        add_array_data(v, dir, "model_3", &n);
    return S3_OK;
}

static enum s3_err populate_models(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    struct t2_view *v = ctx;
    struct t2fs_node root, list;
    char err[400];
    t2fs_node_root(v, &root);
    enum s3_err e = t2fs_node_child(v, &root, 0, &list, err, sizeof err);
    if (e == S3_OK)
        e = t2fs_node_expect(&list, T2FS_NODE_BRANCH, err, sizeof err);
    if (e) {
        t2fs_add_node_error(v, dir, "models", e, err); /* no model list: no models */
        return S3_OK;
    }
    for (uint32_t i = 0; i < list.count; i++) {
        char name[16];
        snprintf(name, sizeof name, "%" PRIu32, i);
        struct mdir *m = tree_alloc(t, sizeof *m);
        if (!m)
            return S3_ERR_NOMEM;
        m->v = v;
        e = t2fs_node_child(v, &list, i, &m->model, err, sizeof err);
        if (e == S3_OK)
            e = t2fs_node_expect(&m->model, T2FS_NODE_BRANCH, err, sizeof err);
        if (e) {
            t2fs_add_node_error(v, dir, name, e, err); /* a broken model: /root shows it as bytes */
            continue;
        }
        tree_add_dir(t, dir, name, "t2fs.model", populate_model, m, i);
    }
    return S3_OK;
}

/* -o rw: a surface's texture_id is the first u32 of its material leaf, in the file's byte
 * order (docs/formats/t2fs.md), published with a span of 4 bytes when the material lies
 * in the file as is. In an RNC-compressed node the span is the node's stored bytes, never
 * 4 bytes long (an RNC stream's header alone is 18), and the value stays read-only
 * (fs->rw_read_only_why says so). */
static bool texture_id_value(struct s3fs *fs, uint32_t ino, struct view_value *out, void *ctx)
{
    struct t2_view *v = ctx;
    struct tree *t = fs->tree;
    uint32_t surface = tree_parent(t, ino);
    const struct mdir *m = tree_dir_ctx(t, tree_parent(t, surface), populate_surfaces);
    return m && m->v == v && strcmp(tree_name(t, ino), "texture_id") == 0 &&
           view_value_as_published(t, ino, t2fs_view_big_endian(v), out) && out->len == 4;
}

void t2fs_models_add(struct t2_view *v, uint32_t root_dir)
{
    struct tree *t = t2fs_view_fs(v)->tree;
    enum s3_err e = tree_gen_item(read_vertices, vertices_item);
    if (e == S3_OK && view_add_value_hook(t2fs_view_fs(v), texture_id_value, v))
        e = S3_ERR_NOMEM;
    if (e)
        tree_note_failure(t, e); /* the root's listing fails with it */
    tree_add_dir(t, root_dir, "models", "t2fs.models", populate_models, v, 0);
}
