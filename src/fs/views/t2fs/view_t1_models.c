/* /models for Turok 1 (the turok1 schema): one directory per graphic object
 * (/root/0/N), its node hierarchy, and each geometry section decoded as the engine draws
 * it (parse/t2fs/t1_section.h). Nodes are found with the t2fs view's locator; a node that is
 * missing or broken is NAME.error naming it. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs/views/t2fs/view_t1_export.h"
#include "fs/views/t2fs/view_t1_models.h"
#include "fs/views/t2fs/view_t1_section.h"
#include "parse/base/err.h"
#include "parse/base/reader.h"
#include "parse/t2fs/t1_section.h"

/* A directory of the Turok 1 /models: the view and the node it shows. */
struct t1dir {
    struct t2_view *v;
    struct t2fs_node n;
};

static struct t1dir *t1dir_new(struct t2_view *v, const struct t2fs_node *n)
{
    struct t1dir *d = tree_alloc(t2fs_view_fs(v)->tree, sizeof *d);
    if (d) {
        d->v = v;
        d->n = *n;
    }
    return d;
}

/* Child i of n; false with NAME.error in dir when it is missing or not of that kind. */
static bool child_as(struct t2_view *v, const struct t2fs_node *n, uint32_t i, enum t2fs_node_kind kind,
                     struct t2fs_node *out, uint32_t dir, const char *name)
{
    char err[400];
    enum s3_err e = t2fs_node_child(v, n, i, out, err, sizeof err);
    if (e == S3_OK)
        e = t2fs_node_expect(out, kind, err, sizeof err);
    if (e == S3_OK)
        return true;
    t2fs_add_node_error(v, dir, name, e, err);
    return false;
}

/* ---- one section ---- */

/* A section's vertex files are not kept: vertices.bin is a slice of the de-interleaved
 * records, a cache item (struct t1vbuf) an open handle holds, and vertices.txt a text only
 * up to VIEW_TEXT_MAX, else rendered on read from those records derived again from the
 * file (view_add_form_rows, T1_ROWS_VERT below). */
struct t1vbuf {
    struct cached c; /* first: the cache hands this pointer back */
    struct t2_view *v;
    struct t2fs_node vn; /* usVertices */
    uint32_t count;
};

static enum s3_err produce_t1_vertices(struct cached *c, uint8_t **data, size_t *size, char *err, size_t errlen)
{
    struct t1vbuf *vb = (struct t1vbuf *)c;
    struct t2fs_array a;
    enum s3_err rc = t2fs_node_array(vb->v, &vb->vn, &a, err, errlen); /* the locator's own lock only */
    if (rc)
        return rc;
    uint8_t *rec = NULL;
    if (a.esize != T1_VERTEX_SIZE || a.count != vb->count)
        rc = s3_fail(S3_ERR_IO, err, errlen, "the vertices changed since they were listed");
    else if (!(rec = alloc_array(a.count, T1_VERTEX_SIZE)))
        rc = s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory for %" PRIu32 " vertices", a.count);
    else
        t1_vertices(a.data, a.count, t2fs_view_big_endian(vb->v), rec, NULL);
    free(a.bytes);
    *data = rec;
    *size = (size_t)vb->count * T1_VERTEX_SIZE;
    return rc;
}

static struct cached *t1_vertices_item(void *ctx, uint64_t arg, struct cache **cache)
{
    (void)arg;
    struct t1vbuf *vb = ctx;
    *cache = &t2fs_view_fs(vb->v)->cache;
    return &vb->c;
}

/* vertices.bin read from the pinned records. */
static enum s3_err read_t1_bin(struct tree *t, void *ctx, uint64_t arg, uint64_t off, void *buf, size_t len,
                               size_t *got)
{
    (void)t, (void)arg;
    struct t1vbuf *vb = ctx;
    struct cache *cache = &t2fs_view_fs(vb->v)->cache;
    char err[200];
    size_t size;
    const uint8_t *rec;
    enum s3_err e = cache_pin(cache, &vb->c, &rec, &size, err, sizeof err);
    if (e) /* refused memory: ENOMEM to this read; else the file changed since the listing */
        return e == S3_ERR_NOMEM ? e : S3_ERR_IO;
    e = S3_ERR_IO;
    if (off + len <= size) { /* tree_read asks within the size */
        memcpy(buf, rec + off, len);
        *got = len;
        e = S3_OK;
    }
    cache_unpin(cache, &vb->c);
    return e;
}

/* A section's vertices.txt, commands.txt and triangles.txt and a node's index lists: a
 * text up to VIEW_TEXT_MAX, else rendered on read from the vertex records, the decoded
 * commands, the triangles or the index elements, a cache item made again from the file
 * (never a copy in the tree), never a text whose size the file chooses. */
enum t1_rows_kind { T1_ROWS_VERT, T1_ROWS_CMD, T1_ROWS_TRI, T1_ROWS_INDEX };

/* What a rows file is made from again: the vertices' node (its records de-interleaved
 * again), the section (its stream decoded again) or the index list's node. */
struct t1_rows_src {
    struct t2_view *v;
    struct t2fs_node node;
    enum t1_rows_kind kind;
    uint32_t esize; /* an index element's size: 1, 2 or 4 */
    bool be;
};

/* Row k formatted into s (VIEW_ROW_SCRATCH bytes): snprintf's result. */
static int t1_row_format(const struct t1_rows_src *r, const uint8_t *form, uint64_t k, char *s)
{
    if (r->kind == T1_ROWS_VERT) { /* "x y z flag s t c0 c1 c2 c3" */
        uint8_t one[T1_VERTEX_SIZE];
        struct t1_vertex x;
        t1_vertices(form + k * T1_VERTEX_SIZE, 1, r->be, one, &x); /* one record: its own planes */
        return snprintf(s, VIEW_ROW_SCRATCH, "%d %d %d %u %d %d %u %u %u %u", x.x, x.y, x.z, x.flag, x.s, x.t, x.c[0], x.c[1],
                        x.c[2], x.c[3]);
    }
    if (r->kind == T1_ROWS_CMD) {
        const struct t1_cmd *c = (const struct t1_cmd *)form + k;
        if (c->kind == T1_CMD_LOAD)
            return snprintf(s, VIEW_ROW_SCRATCH, "load %" PRIu32 "..%" PRIu32 " -> slot %" PRIu32, c->first,
                            c->first + c->count - 1, c->slot);
        return snprintf(s, VIEW_ROW_SCRATCH, "tri %u %u %u", c->s[0], c->s[1], c->s[2]);
    }
    if (r->kind == T1_ROWS_TRI) {
        const uint32_t *x = ((const uint32_t(*)[3])form)[k];
        return snprintf(s, VIEW_ROW_SCRATCH, "%" PRIu32 " %" PRIu32 " %" PRIu32, x[0], x[1], x[2]);
    }
    const uint8_t *p = form + k * r->esize;
    uint32_t x = r->esize == 1 ? p[0] : r->esize == 2 ? ld_u16(p, r->be) : ld_u32(p, r->be);
    return snprintf(s, VIEW_ROW_SCRATCH, "%" PRIu32, x);
}

static enum s3_err t1_row(const void *ctx, const uint8_t *form, uint64_t k, char *scratch, const char **text,
                          size_t *len)
{
    *text = scratch;
    return view_row_printed(t1_row_format(ctx, form, k, scratch), len);
}

/* The vertices' records de-interleaved again from their node (malloc'd). */
static enum s3_err t1_vertices_derive(const struct t1_rows_src *r, uint8_t **form, size_t *len, char *err,
                                      size_t errlen)
{
    struct t2fs_array a;
    enum s3_err e = t2fs_node_array(r->v, &r->node, &a, err, errlen);
    if (e)
        return e;
    uint8_t *rec = NULL;
    if (a.count && a.esize != T1_VERTEX_SIZE)
        e = s3_fail(S3_ERR_IO, err, errlen, "the vertices' element size is %" PRIu32 " since they were listed",
                    a.esize);
    else if (!(rec = alloc_array(a.count ? a.count : 1, T1_VERTEX_SIZE)))
        e = s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory for %" PRIu32 " vertices", a.count);
    else
        t1_vertices(a.data, a.count, r->be, rec, NULL);
    free(a.bytes);
    *form = rec;
    *len = (size_t)a.count * T1_VERTEX_SIZE;
    return e;
}

/* The form again: the vertex records, the index list's elements, or the section's stream
 * decoded again (its commands, or its triangles). */
static enum s3_err t1_rows_derive(const void *ctx, uint8_t **form, size_t *len, char *err, size_t errlen)
{
    const struct t1_rows_src *r = ctx;
    if (r->kind == T1_ROWS_VERT)
        return t1_vertices_derive(r, form, len, err, errlen);
    enum s3_err e;
    if (r->kind == T1_ROWS_INDEX) {
        struct t2fs_array a;
        if ((e = t2fs_node_array(r->v, &r->node, &a, err, errlen)))
            return e;
        *len = (size_t)a.count * a.esize;
        memmove(a.bytes, a.data, *len);
        *form = a.bytes;
        return S3_OK;
    }
    struct t1_section sec;
    if ((e = t1_section_read(r->v, &r->node, &sec, err, errlen)))
        return e;
    if (r->kind == T1_ROWS_CMD) {
        *form = (uint8_t *)sec.st.cmd, *len = sec.st.ncmd * sizeof *sec.st.cmd;
        sec.st.cmd = NULL;
    } else {
        *form = (uint8_t *)sec.st.tri, *len = sec.st.ntri * sizeof *sec.st.tri;
        sec.st.tri = NULL;
    }
    t1_section_free(&sec);
    return S3_OK;
}

/* The rows' file: a text up to VIEW_TEXT_MAX, else rendered on read from the form made
 * again from the file (view_add_form_rows); esize: the size of one of data's n elements. */
static uint32_t add_t1_rows(struct t2_view *v, uint32_t dir, const char *name, const char *xtype,
                            const struct t1_rows_src *src, const void *data, size_t esize, uint64_t n)
{
    struct view_form f = {t1_rows_derive, t1_row, src, sizeof *src};
    return view_add_form_rows(t2fs_view_fs(v), dir, name, xtype, &f, data, (size_t)(n * esize), n);
}

static void add_vertices_files(struct t2_view *v, uint32_t dir, const struct t1_section *s,
                               const struct t2fs_node *vn)
{
    struct tree *t = t2fs_view_fs(v)->tree;
    struct t1vbuf *vb = tree_alloc(t, sizeof *vb);
    if (!vb) {
        tree_note_oom(t); /* the listing fails (ENOMEM), never shorter */
        return;
    }
    *vb = (struct t1vbuf){.v = v, .vn = *vn, .count = s->nvert};
    vb->c.produce = produce_t1_vertices;
    vb->c.hint = (uint64_t)s->nvert * T1_VERTEX_SIZE;
    uint32_t ino = tree_add_gen(t, dir, "vertices.bin", NULL, vb->c.hint, read_t1_bin, vb, 0);
    uint64_t so, sl;
    t2fs_node_span(vn, &so, &sl);
    tree_set_span(t, ino, so, sl);
    set_typef(t, ino, "t1.vertices[16]x%" PRIu32, s->nvert);
    struct t1_rows_src src = {v, *vn, T1_ROWS_VERT, T1_VERTEX_SIZE, t2fs_view_big_endian(v)};
    add_t1_rows(v, dir, "vertices.txt", "text", &src, s->records, T1_VERTEX_SIZE, s->nvert);
}

static void add_stream_files(struct t2_view *v, uint32_t dir, const struct t2fs_node *sec, const struct t1_section *s)
{
    const struct t1_stream *st = &s->st;
    struct t1_rows_src src = {v, *sec, T1_ROWS_CMD, 0, false};
    add_t1_rows(v, dir, "commands.txt", "text", &src, st->cmd, sizeof *st->cmd, st->ncmd);
    src.kind = T1_ROWS_TRI;
    add_t1_rows(v, dir, "triangles.txt", "text", &src, st->tri, sizeof *st->tri, st->ntri);
}

/* triangles.error: where the stream is (its node, and the file offset of that node or of
 * the compressed node it lies in; word W is 8 + 2W bytes into the node), then each
 * layout's first failing word and why. */
static void add_layout_error(struct tree *t, uint32_t dir, const struct t2fs_node *stream, const char *why)
{
    char name[160];
    uint64_t off, len;
    t2fs_node_name(stream, name, sizeof name);
    t2fs_node_span(stream, &off, &len);
    tree_add_textf(t, dir, "triangles.error", "error",
                   "the stream %s (at file offset %" PRIu64 ", %" PRIu64 " bytes; word W is 8 + 2W bytes into the "
                   "node) fits neither layout:\n%s",
                   name, off, len, why);
}

void t1_section_files(struct t2_view *v, const struct t2fs_node *sec, uint32_t dir)
{
    struct tree *t = t2fs_view_fs(v)->tree;
    struct t1_arrays a;
    t1_arrays_read(v, sec, &a);
    struct t1_section s;
    if (a.nomem || t1_arrays_decode(v, &a, &s)) {
        tree_note_oom(t); /* the listing fails (ENOMEM), never a part shown broken or missing */
        free(a.ps.bytes);
        free(a.vs.bytes);
        return;
    }
    if (a.ps_ok)
        t2fs_node_add_file(v, &a.psn, dir, "pstream.bin", 8, (uint64_t)a.ps.count * 2, "u16[]");
    if (!a.vs_ok)
        add_error(t, dir, "vertices", a.vs_err);
    {
        if (a.vs_ok)
            add_vertices_files(v, dir, &s, &a.vn);
        if (!a.ps_ok)
            add_error(t, dir, "triangles", a.ps_err);
        else if (!a.vs_ok)
            add_error(t, dir, "triangles", "no vertices to draw (vertices.error says why)");
        else if (s.layout < 0)
            add_layout_error(t, dir, &a.psn, s.err);
        else
            add_stream_files(v, dir, sec, &s);
        tree_add_textf(t, dir, "layout", "text", "%s\n",
                       s.layout < 0 ? "none" : s.ambiguous ? "16 (the 32-slot layout fits too)" : t1_layouts[s.layout].name);
        t1_section_free(&s);
    }
    free(a.ps.bytes);
    free(a.vs.bytes);
}

/* The layout a section's stream uses, without building its files: -1 neither, -2 the
 * section cannot be read, -3 out of memory (the caller fails). */
static int section_layout(struct t2_view *v, const struct t2fs_node *sec)
{
    struct t1_arrays a;
    char err[400];
    memset(&a, 0, sizeof a);
    int layout = -2;
    enum s3_err e = t2fs_node_child(v, sec, 1, &a.psn, err, sizeof err);
    if (e == S3_OK)
        e = t2fs_node_array(v, &a.psn, &a.ps, err, sizeof err);
    if (e == S3_OK)
        e = t2fs_node_child(v, sec, 2, &a.vn, err, sizeof err);
    if (e == S3_OK)
        e = t2fs_node_array(v, &a.vn, &a.vs, err, sizeof err);
    if (e == S3_ERR_NOMEM)
        layout = -3;
    if (e == S3_OK && (a.ps.esize == 2 || a.ps.count == 0)) {
        layout = -1;
        for (int k = 0; k < T1_NLAYOUTS && layout == -1; k++) {
            struct t1_stream st;
            e = t1_decode_stream(a.ps.data, a.ps.count, t2fs_view_big_endian(v), a.vs.count, &t1_layouts[k], &st, err,
                                 sizeof err);
            layout = e == S3_OK ? k : e == S3_ERR_NOMEM ? -3 : -1;
            t1_stream_free(&st);
        }
    }
    free(a.ps.bytes);
    free(a.vs.bytes);
    return layout;
}

/* ---- the hierarchy ---- */

static enum s3_err populate_section(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)t, (void)arg;
    struct t1dir *d = ctx;
    struct t2fs_node n;
    if (child_as(d->v, &d->n, 0, T2FS_NODE_LEAF, &n, dir, "section")) {
        uint8_t *b;
        size_t len;
        char err[400];
        enum s3_err e = t2fs_node_bytes(d->v, &n, &b, &len, err, sizeof err);
        if (e == S3_OK) {
            t2fs_node_add_file(d->v, &n, dir, "section.bin", 0, len, "t2fs.raw");
            free(b);
        } else {
            t2fs_add_node_error(d->v, dir, "section", e, err);
        }
    }
    t1_section_files(d->v, &d->n, dir);
    return S3_OK;
}

/* One directory per child of d->n (a branch), each of `kind`, populated by fn. */
static enum s3_err populate_children(struct tree *t, uint32_t dir, struct t1dir *d, populate_fn fn, const char *type)
{
    for (uint32_t i = 0; i < d->n.count; i++) {
        char name[16];
        struct t2fs_node c;
        snprintf(name, sizeof name, "%" PRIu32, i);
        if (!child_as(d->v, &d->n, i, T2FS_NODE_BRANCH, &c, dir, name))
            continue;
        struct t1dir *cd = t1dir_new(d->v, &c);
        if (!cd)
            return S3_ERR_NOMEM;
        tree_add_dir(t, dir, name, type, fn, cd, 0);
    }
    return S3_OK;
}

static enum s3_err populate_sections(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    return populate_children(t, dir, ctx, populate_section, "t1.section");
}

static enum s3_err populate_part(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    struct t1dir *d = ctx;
    tree_add_dir(t, dir, "sections", "t1.sections", populate_sections, d, 0);
    return S3_OK;
}

static enum s3_err populate_parts(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    return populate_children(t, dir, ctx, populate_part, "t1.part");
}

/* An index list (usChildNodeIndices, usPartIndices): one unsigned value per line. */
static void add_index_list(struct t2_view *v, const struct t2fs_node *node, uint32_t i, uint32_t dir,
                           const char *name)
{
    struct tree *t = t2fs_view_fs(v)->tree;
    struct t2fs_node n;
    struct t2fs_array a;
    char err[400];
    enum s3_err e = t2fs_node_child(v, node, i, &n, err, sizeof err);
    if (e == S3_OK)
        e = t2fs_node_array(v, &n, &a, err, sizeof err);
    if (e) {
        t2fs_add_node_error(v, dir, name, e, err);
        return;
    }
    if (a.count && a.esize != 1 && a.esize != 2 && a.esize != 4) {
        snprintf(err, sizeof err, "element size %" PRIu32 ": not an index list (1, 2 or 4 bytes)", a.esize);
        add_error(t, dir, name, err);
        free(a.bytes);
        return;
    }
    bool be = t2fs_view_big_endian(v);
    struct t1_rows_src src = {v, n, T1_ROWS_INDEX, a.esize, be};
    uint32_t ino = add_t1_rows(v, dir, name, NULL, &src, a.data, a.esize, a.count);
    uint64_t so, sl;
    t2fs_node_span(&n, &so, &sl);
    tree_set_span(t, ino, so, sl);
    set_typef(t, ino, "u%" PRIu32 "[%" PRIu32 "]", a.esize * 8, a.count);
    free(a.bytes);
}

static enum s3_err populate_node(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    struct t1dir *d = ctx;
    add_index_list(d->v, &d->n, 0, dir, "children");
    add_index_list(d->v, &d->n, 1, dir, "part_indices");
    struct t2fs_node parts;
    uint32_t pdir = tree_add_dir(t, dir, "parts", "t1.parts", NULL, NULL, 0);
    if (!child_as(d->v, &d->n, 2, T2FS_NODE_BRANCH, &parts, pdir, "parts"))
        return S3_OK;
    struct t1dir *pd = t1dir_new(d->v, &parts);
    return pd ? populate_parts(t, pdir, pd, 0) : S3_ERR_NOMEM;
}

static enum s3_err populate_nodes(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    return populate_children(t, dir, ctx, populate_node, "t1.node");
}

/* bounds.bin (the object info's bounds struct as stored) and bounds: two lines "min X Y
 * Z", "max X Y Z", its first 24 bytes read as 6 f32, the reading the notes give for the
 * engine's object info (s_t2fsDataModelInfo). */
static void add_bounds(struct t2_view *v, const struct t2fs_node *obj, uint32_t dir)
{
    struct tree *t = t2fs_view_fs(v)->tree;
    struct t2fs_node n;
    uint8_t *b;
    size_t len;
    char err[400];
    enum s3_err e = t2fs_node_at(v, obj, (const unsigned[]){0, 0}, 2, &n, err, sizeof err);
    if (e == S3_OK)
        e = t2fs_node_expect(&n, T2FS_NODE_LEAF, err, sizeof err);
    if (e == S3_OK)
        e = t2fs_node_bytes(v, &n, &b, &len, err, sizeof err);
    if (e) {
        t2fs_add_node_error(v, dir, "bounds", e, err);
        return;
    }
    t2fs_node_add_file(v, &n, dir, "bounds.bin", 0, len, "t2fs.raw");
    if (len < 24) {
        snprintf(err, sizeof err, "the bounds struct has %zu bytes, fewer than 2 x 3 f32", len);
        add_error(t, dir, "bounds", err);
    } else {
        float f[6];
        bool be = t2fs_view_big_endian(v);
        for (int k = 0; k < 6; k++) {
            uint32_t u = ld_u32(b + 4 * k, be);
            memcpy(&f[k], &u, 4);
        }
        uint32_t ino = tree_add_textf(t, dir, "bounds", "f32[2][3]", "min %.9g %.9g %.9g\nmax %.9g %.9g %.9g\n", f[0],
                                      f[1], f[2], f[3], f[4], f[5]);
        uint64_t so, sl;
        t2fs_node_span(&n, &so, &sl);
        tree_set_span(t, ino, so, sl);
    }
    free(b);
}

/* layout: how many of the object's sections use each stream layout ("16 12", "32 0",
 * "none 1", "unreadable 0"). */
static void add_layout_summary(struct t2_view *v, const struct t2fs_node *nodes, uint32_t dir)
{
    uint64_t count[T1_NLAYOUTS + 2] = {0}; /* by layout, then none, then unreadable */
    struct t2fs_node node, parts, part, sec;
    char err[400];
    bool nomem = false; /* counts made without some section: the listing fails instead */
    for (uint32_t k = 0; k < nodes->count && !nomem; k++) {
        enum s3_err e = t2fs_node_child(v, nodes, k, &node, err, sizeof err);
        if (e == S3_OK)
            e = t2fs_node_at(v, &node, (const unsigned[]){2}, 1, &parts, err, sizeof err);
        nomem = e == S3_ERR_NOMEM;
        if (e || parts.kind != T2FS_NODE_BRANCH)
            continue;
        for (uint32_t p = 0; p < parts.count && !nomem; p++) {
            e = t2fs_node_child(v, &parts, p, &part, err, sizeof err);
            nomem = e == S3_ERR_NOMEM;
            if (e || part.kind != T2FS_NODE_BRANCH)
                continue;
            for (uint32_t s = 0; s < part.count && !nomem; s++) {
                e = t2fs_node_child(v, &part, s, &sec, err, sizeof err);
                nomem = e == S3_ERR_NOMEM;
                if (e || sec.kind != T2FS_NODE_BRANCH) {
                    count[T1_NLAYOUTS + 1]++;
                    continue;
                }
                int l = section_layout(v, &sec);
                nomem = l == -3;
                count[l >= 0 ? l : l == -1 ? T1_NLAYOUTS : T1_NLAYOUTS + 1]++;
            }
        }
    }
    if (nomem) {
        tree_note_oom(t2fs_view_fs(v)->tree); /* the listing fails (ENOMEM), never a wrong count */
        return;
    }
    struct sbuf b = {0};
    for (int k = 0; k < T1_NLAYOUTS; k++)
        sb_printf(&b, "%s %" PRIu64 "\n", t1_layouts[k].name, count[k]);
    sb_printf(&b, "none %" PRIu64 "\nunreadable %" PRIu64 "\n", count[T1_NLAYOUTS], count[T1_NLAYOUTS + 1]);
    size_t len;
    char *text = sb_take(&b, &len);
    tree_add_text(t2fs_view_fs(v)->tree, dir, "layout", "text", text, len);
}

static enum s3_err populate_object(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    struct t1dir *d = ctx;
    char at[160], link[200];
    t2fs_node_name(&d->n, at, sizeof at);
    snprintf(link, sizeof link, "../..%s", at);
    tree_add_link(t, dir, "raw", link);
    add_bounds(d->v, &d->n, dir);
    t1_exports_add(d->v, &d->n, dir);
    struct t2fs_node nodes;
    uint32_t ndir = tree_add_dir(t, dir, "nodes", "t1.nodes", NULL, NULL, 0);
    char err[400];
    enum s3_err e = t2fs_node_at(d->v, &d->n, (const unsigned[]){1, 1}, 2, &nodes, err, sizeof err);
    if (e == S3_OK)
        e = t2fs_node_expect(&nodes, T2FS_NODE_BRANCH, err, sizeof err);
    if (e) {
        t2fs_add_node_error(d->v, ndir, "nodes", e, err);
        return S3_OK;
    }
    add_layout_summary(d->v, &nodes, dir);
    struct t1dir *nd = t1dir_new(d->v, &nodes);
    return nd ? populate_nodes(t, ndir, nd, 0) : S3_ERR_NOMEM;
}

static enum s3_err populate_objects(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    struct t2_view *v = ctx;
    struct t2fs_node root, list;
    t2fs_node_root(v, &root);
    if (!child_as(v, &root, 0, T2FS_NODE_BRANCH, &list, dir, "models"))
        return S3_OK;
    struct t1dir d = {v, list};
    return populate_children(t, dir, &d, populate_object, "t1.object");
}

static enum s3_err populate_object(struct tree *t, uint32_t dir, void *ctx, uint64_t arg);

/* -o rw: an object's bounds is a field of 6 f32 (its bounds struct's first 24 bytes, in
 * the file's byte order), written as shown: "min X Y Z", "max X Y Z". */
static bool bounds_value(struct s3fs *fs, uint32_t ino, struct view_value *out, void *ctx)
{
    static const char *const labels[2] = {"min", "max"};
    struct tree *t = fs->tree;
    const struct t1dir *d = tree_dir_ctx(t, tree_parent(t, ino), populate_object);
    char num[32];
    if (!d || d->v != ctx || strcmp(tree_name(t, ino), "bounds") != 0 ||
        tree_getxattr_str(t, ino, "user.s3rig.offset", num, sizeof num) || !num[0])
        return false;
    uint64_t off = strtoull(num, NULL, 10);
    *out = (struct view_value){off, 24, FIELD_F32, t2fs_view_big_endian(d->v), 2, labels, 0};
    return true;
}

void t1_models_add(struct t2_view *v, uint32_t root_dir)
{
    enum s3_err e = tree_gen_item(read_t1_bin, t1_vertices_item);
    if (e)
        tree_note_failure(t2fs_view_fs(v)->tree, e); /* the root's listing fails with it */
    if (view_add_value_hook(t2fs_view_fs(v), bounds_value, v))
        tree_note_oom(t2fs_view_fs(v)->tree); /* the listing fails with ENOMEM */
    tree_add_dir(t2fs_view_fs(v)->tree, root_dir, "models", "t1.objects", populate_objects, v, 0);
}
