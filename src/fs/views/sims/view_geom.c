/* A GEOM (Sims 3/4 body mesh in its RCOL wrapper) as a tree: /rcol (the wrapper), /geom
 * (every field, the material's parameters, the declarations, vertices and triangles as
 * bytes and CSV, the tail's blocks as CSV), and /mesh.glb + /mesh.obj bound to a rig when
 * one is found: in a package, a rig resource of the same package whose bones cover every
 * hash of the mesh; else -o rig=FILE's; else none (layout.md, third round). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs/export/export.h"
#include "fs/views/sims/view_geom.h"
#include "parse/base/err.h"
#include "parse/sims/geom.h"
#include "parse/sims/geom_model.h"

#define GEOM_TABLES 6 /* tgis, uv_stitches, seam_stitches, slot_rays, bones, geometry_states */
#define UV_HEADER "index,vertex,pair,u,v" /* uv_stitches.csv's first line */

struct geom_view {
    struct s3fs *fs;
    struct geom g;
    const struct rig_entry *rig; /* the rig the mesh is bound to, or NULL */
    char *rig_label;             /* the /info rig: line */
    /* vertices.csv as a writable table (-o rw, vertices_table): its node, header and
     * columns, made with it (in the tree's arena); vcsv 0: none */
    uint32_t vcsv, nvcols;
    const char *vheader;
    struct table_col *vcols;
    /* the tail's CSVs of fixed-size records declared writable (-o rw): each file's node
     * and table, set when /geom is listed */
    struct geom_table {
        uint32_t ino;
        struct table_field tf;
    } tables[GEOM_TABLES];
    uint32_t ntables;
    struct table_col bone_cols[2]; /* bones.csv's: the hash, and the name the rig gives it */
};

static _Atomic uint64_t work_lookups, work_compares, work_repair_faces;

void geom_view_counts(struct geom_view_counts *out)
{
    out->lookups = work_lookups;
    out->compares = work_compares;
    out->repair_faces = work_repair_faces;
}

/* Adds a binding's work (geom_model's report) to the counters. */
static void count_work(const struct geom_report *r)
{
    work_lookups += r->lookups;
    work_compares += r->compares;
    work_repair_faces += r->repair_faces;
}

static void geom_view_free(void *p)
{
    struct geom_view *v = p;
    geom_free(&v->g);
    free(v->rig_label);
    free(v);
}

/* ---- small value files ---- */

static uint32_t add_u8(struct tree *t, uint32_t dir, const char *name, uint8_t val, uint64_t at)
{
    uint32_t ino = tree_add_textf(t, dir, name, "u8", "%u\n", val);
    tree_set_span(t, ino, at, 1);
    return ino;
}

static uint32_t add_u64_hex(struct tree *t, uint32_t dir, const char *name, uint64_t val, uint64_t at)
{
    uint32_t ino = tree_add_textf(t, dir, name, "u64", "0x%016" PRIx64 "\n", val);
    tree_set_span(t, ino, at, 8);
    return ino;
}

/* A CSV text file spanning [at, at + len). */
static uint32_t add_csv(struct tree *t, uint32_t dir, const char *name, struct sbuf *b, uint64_t at, uint64_t len)
{
    size_t n;
    char *text = sb_take(b, &n);
    uint32_t ino = tree_add_text(t, dir, name, "csv", text, n);
    tree_set_span(t, ino, at, len);
    return ino;
}

/* ---- /rcol ---- */

/* A key's three fields as files: instance, type, group stored at `at` (ITG order). */
static void add_key_itg(struct tree *t, uint32_t dir, const struct geom_key *k, uint64_t at)
{
    add_u64_hex(t, dir, "instance", k->instance, at);
    add_hex32(t, dir, "type", k->type, at + 8);
    add_hex32(t, dir, "group", k->group, at + 12);
}

static enum s3_err populate_chunk(struct tree *t, uint32_t dir, void *ctx, uint64_t i)
{
    struct geom_view *v = ctx;
    const struct geom_rcol *r = &v->g.rcol;
    add_key_itg(t, dir, &r->chunk_key[i], 0x14 + 16 * i);
    add_u32(t, dir, "position", r->chunk_pos[i], r->index_pos + 8 * i);
    add_u32(t, dir, "length", r->chunk_len[i], r->index_pos + 8 * i + 4);
    return S3_OK;
}

static enum s3_err populate_external(struct tree *t, uint32_t dir, void *ctx, uint64_t i)
{
    struct geom_view *v = ctx;
    add_key_itg(t, dir, &v->g.rcol.external_key[i], 0x14 + 16ull * v->g.rcol.nchunks + 16 * i);
    return S3_OK;
}

static void add_records(struct tree *t, uint32_t dir, uint32_t n, populate_fn fn, void *ctx, const char *xtype,
                        uint64_t at, uint64_t size)
{
    for (uint32_t i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof name, "%" PRIu32, i);
        uint32_t ino = tree_add_dir(t, dir, name, xtype, fn, ctx, i);
        if (!ino)
            return;
        tree_set_span(t, ino, at + size * i, size);
    }
}

static enum s3_err populate_rcol(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    struct geom_view *v = ctx;
    const struct geom_rcol *r = &v->g.rcol;
    tree_add_range(t, dir, "header.bin", "rcol.header", 0, r->size);
    add_u32(t, dir, "version", r->version, 0);
    add_u32(t, dir, "public_chunks", r->public_chunks, 4);
    add_u32(t, dir, "unused", r->unused, 8);
    add_u32(t, dir, "external_count", r->nexternal, 12);
    add_u32(t, dir, "chunk_count", r->nchunks, 16);
    uint32_t c = tree_add_dir(t, dir, "chunks", "rcol.chunks", NULL, NULL, 0);
    add_records(t, c, r->nchunks, populate_chunk, v, "rcol.chunk", 0x14, 16);
    uint32_t e = tree_add_dir(t, dir, "external", "rcol.external", NULL, NULL, 0);
    add_records(t, e, r->nexternal, populate_external, v, "rcol.key", 0x14 + 16ull * r->nchunks, 16);
    return S3_OK;
}

/* ---- /geom/material ---- */

/* A parameter's directory name: its known name, else its hash; "~2"... when the same hash
 * came before (nth: how many times). */
static void param_dir_name(const struct geom_mtnf *m, uint32_t i, uint32_t nth, char *out, size_t size)
{
    uint32_t h = m->param[i].name_hash;
    const char *known = geom_param_name(h);
    int n = known ? snprintf(out, size, "%s", known) : snprintf(out, size, "0x%08" PRIx32, h);
    if (nth && n > 0 && (size_t)n < size)
        snprintf(out + n, size - (size_t)n, "~%" PRIu32, nth + 1);
}

struct param_order {
    uint32_t hash, index;
};

static int by_hash_then_index(const void *a, const void *b, void *compares)
{
    ++*(uint64_t *)compares;
    const struct param_order *x = a, *y = b;
    if (x->hash != y->hash)
        return x->hash < y->hash ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* For each parameter, how many before it share its hash (sorting: no quadratic scan of a
 * hostile list). NULL when out of memory. */
static uint32_t *repeat_ordinals(const struct geom_mtnf *m)
{
    uint32_t n = m->nparams;
    struct param_order *o = alloc_array(n, sizeof *o);
    uint32_t *nth = alloc_array(n, sizeof *nth);
    if (!o || !nth) {
        free(o);
        free(nth);
        return NULL;
    }
    for (uint32_t i = 0; i < n; i++)
        o[i] = (struct param_order){m->param[i].name_hash, i};
    uint64_t compares = 0;
    qsort_r(o, n, sizeof *o, by_hash_then_index, &compares);
    work_compares += compares;
    for (uint32_t i = 1; i < n; i++)
        if (o[i].hash == o[i - 1].hash)
            nth[o[i].index] = nth[o[i - 1].index] + 1;
    free(o);
    return nth;
}

static const char *param_type_name(uint32_t type)
{
    switch (type) {
    case 1:
        return "float";
    case 2:
        return "int";
    case 4:
        return "texture";
    case 0x10004:
        return "texture (0x10004)";
    default:
        return "unknown";
    }
}

/* A texture parameter's first word as an index into the TGI list: the entry at that index,
 * no search (nothing to count). */
static void add_texture(struct geom_view *v, uint32_t dir, const struct geom_param *p)
{
    struct tree *t = v->fs->tree;
    uint32_t idx = ld_u32(v->g.buf + (p->data_pos - v->g.pos), false);
    add_u32(t, dir, "tgi_index", idx, p->data_pos);
    if (idx < v->g.tgis.count) {
        const struct geom_key *k = &v->g.tgi[idx];
        tree_add_textf(t, dir, "texture", "tgi", "%08" PRIX32 ":%08" PRIX32 ":%016" PRIX64 "\n", k->type, k->group,
                       k->instance);
    } else {
        char why[120];
        snprintf(why, sizeof why, "TGI index %" PRIu32 " is past the %" PRIu32 " entries of the TGI list", idx,
                 v->g.tgis.count);
        add_error(t, dir, "texture", why);
    }
    if (p->type == 0x10004 && p->count >= 4) { /* s4pi's reading: an inline key */
        const uint8_t *b = v->g.buf + (p->data_pos - v->g.pos);
        tree_add_textf(t, dir, "as_key", "tgi", "%08" PRIX32 ":%08" PRIX32 ":%016" PRIX64 "\n", ld_u32(b + 8, false),
                       ld_u32(b + 12, false), ld_u64(b, false));
    }
}

static enum s3_err populate_param(struct tree *t, uint32_t dir, void *ctx, uint64_t i)
{
    struct geom_view *v = ctx;
    const struct geom_mtnf *m = &v->g.mtnf;
    const struct geom_param *p = &m->param[i];
    uint64_t rec = m->pos + 16 + 16 * i;
    add_hex32(t, dir, "name_hash", p->name_hash, rec);
    const char *known = geom_param_name(p->name_hash);
    if (known)
        tree_add_textf(t, dir, "name", "string", "%s\n", known);
    add_hex32(t, dir, "type", p->type, rec + 4);
    tree_add_textf(t, dir, "type_name", "text", "%s\n", param_type_name(p->type));
    add_u32(t, dir, "count", p->count, rec + 8);
    add_u32(t, dir, "offset", p->data_off, rec + 12);
    if (!p->data_ok) {
        add_error(t, dir, "value", "its words run past the material block");
        return S3_OK;
    }
    tree_add_range(t, dir, "data.bin", "mtnf.data", p->data_pos, 4ull * p->count);
    const uint8_t *b = v->g.buf + (p->data_pos - v->g.pos);
    struct sbuf s = {0};
    for (uint32_t k = 0; k < p->count; k++) {
        uint32_t w = ld_u32(b + 4 * k, false);
        float f;
        memcpy(&f, &w, 4);
        if (p->type == 1)
            sb_float(&s, f);
        else if (p->type == 2)
            sb_printf(&s, "%" PRId32 "\n", (int32_t)w);
        else
            sb_printf(&s, "0x%08" PRIx32 "\n", w);
    }
    size_t len;
    char *text = sb_take(&s, &len);
    uint32_t ino = tree_add_text(t, dir, "value", NULL, text, len);
    tree_set_span(t, ino, p->data_pos, 4ull * p->count);
    set_typef(t, ino, "%s[%" PRIu32 "]", p->type == 1 ? "f32" : p->type == 2 ? "i32" : "u32", p->count);
    if ((p->type == 4 || p->type == 0x10004) && p->count >= 1)
        add_texture(v, dir, p);
    return S3_OK;
}

static enum s3_err populate_material(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    struct geom_view *v = ctx;
    const struct geom_mtnf *m = &v->g.mtnf;
    if (m->err[0])
        add_error(t, dir, "mtnf", m->err);
    if (m->size < 16)
        return S3_OK;
    uint32_t ino = tree_add_textf(t, dir, "mtnf_tag", "bytes", "%.4s\n", (const char *)&v->g.buf[m->pos - v->g.pos]);
    tree_set_span(t, ino, m->pos, 4);
    add_hex32(t, dir, "mtnf_unknown", m->unknown, m->pos + 4);
    add_u32(t, dir, "mtnf_data_size", m->data_size, m->pos + 8);
    add_u32(t, dir, "mtnf_parameter_count", m->nparams, m->pos + 12);
    uint32_t *nth = repeat_ordinals(m);
    if (!nth)
        return S3_ERR_NOMEM;
    for (uint32_t i = 0; i < m->nparams; i++) {
        char name[40];
        param_dir_name(m, i, nth[i], name, sizeof name);
        ino = tree_add_dir(t, dir, name, "mtnf.parameter", populate_param, v, i);
        if (!ino)
            break;
        tree_set_span(t, ino, m->pos + 16 + 16ull * i, 16);
    }
    free(nth);
    return S3_OK;
}

/* ---- /geom: declarations, vertices, triangles ---- */

static void add_vertex_format(struct geom_view *v, uint32_t dir)
{
    const struct geom *g = &v->g;
    struct sbuf b = {0};
    sb_printf(&b, "index,usage,meaning,type,size,offset,uv_set\n");
    for (uint32_t i = 0; i < g->ndecls; i++) {
        const struct geom_decl *x = &g->decl[i];
        const char *name = geom_usage_name(x->usage);
        sb_printf(&b, "%" PRIu32 ",%" PRIu32 ",%s,%" PRIu32 ",%u,%" PRIu32 ",", i, x->usage, name ? name : "?", x->type,
                  x->size, x->offset);
        if (x->uv_set >= 0)
            sb_printf(&b, "%d", x->uv_set);
        sb_put(&b, "\n", 1);
    }
    add_csv(v->fs->tree, dir, "vertex_format.csv", &b, g->decl_pos, 9ull * g->ndecls);
    struct sbuf e = {0};
    uint32_t bad = 0;
    for (uint32_t i = 0; i < g->ndecls; i++)
        if (!g->decl[i].ok && bad++ < 32)
            sb_printf(&e, "%sdeclaration %" PRIu32 ": %s", e.len ? "; " : "", i, g->decl[i].err);
    if (bad > 32)
        sb_printf(&e, "; and %" PRIu32 " more", bad - 32);
    if (e.len) {
        size_t n;
        char *text = sb_take(&e, &n);
        add_error(v->fs->tree, dir, "vertex_format", text);
        free(text);
    }
}

/* Column names of a declaration (the letters of its elements after a prefix). */
static void decl_header(struct sbuf *b, const struct geom_decl *x, uint32_t i, bool repeat)
{
    static const char xyzw[] = "xyzw";
    unsigned n = geom_elements(x);
    char suffix[16] = "";
    if (repeat)
        snprintf(suffix, sizeof suffix, "_%" PRIu32, i);
    if (!x->ok || (x->usage != GEOM_UV && x->usage != GEOM_VERTEX_ID && x->usage > GEOM_TANGENT &&
                   x->usage != GEOM_TAG && x->usage != GEOM_BINORMAL)) {
        sb_printf(b, ",raw%" PRIu32, i); /* unknown layout (or a weight map): its bytes in hex */
        return;
    }
    for (unsigned k = 0; k < n; k++) {
        switch (x->usage) {
        case GEOM_POSITION:
            sb_printf(b, ",p%c%s", xyzw[k], suffix);
            break;
        case GEOM_NORMAL:
            sb_printf(b, ",n%c%s", xyzw[k], suffix);
            break;
        case GEOM_TANGENT:
            sb_printf(b, ",t%c%s", xyzw[k], suffix);
            break;
        case GEOM_BINORMAL:
            sb_printf(b, ",bn%u%s", k, suffix);
            break;
        case GEOM_UV:
            sb_printf(b, ",%c%d", k ? 'v' : 'u', x->uv_set);
            break;
        case GEOM_BONES:
            sb_printf(b, ",bone%u%s", k, suffix);
            break;
        case GEOM_WEIGHTS:
            sb_printf(b, ",weight%u%s", k, suffix);
            break;
        case GEOM_TAG:
            sb_printf(b, ",tag%u%s", k, suffix);
            break;
        default:
            sb_printf(b, ",id%s", suffix);
        }
    }
}

/* One vertex's values of a declaration: floats %.9g, bytes and u32 in decimal, an unknown
 * layout as hex bytes. */
static void decl_values(struct sbuf *b, const struct geom *g, const struct geom_decl *x, uint32_t v)
{
    const uint8_t *p = g->vert + (size_t)v * g->stride + x->offset;
    bool named = x->ok && !(x->usage == GEOM_WEIGHT_MAP);
    if (!named) {
        sb_put(b, ",", 1);
        for (unsigned k = 0; k < x->size; k++)
            sb_printf(b, "%02x", p[k]);
        return;
    }
    for (unsigned k = 0; k < geom_elements(x); k++) {
        if (x->type == GEOM_DT_FLOAT)
            sb_printf(b, ",%.9g", (double)geom_value(g, x, v, k));
        else if (x->type == GEOM_DT_U32)
            sb_printf(b, ",%" PRIu32, ld_u32(p + 4 * k, false));
        else
            sb_printf(b, ",%u", p[k]);
    }
}

/* vertices.csv's columns as decl_values writes them, for -o rw: false when a
 * declaration does not lie inside the vertex (then the file stays read-only). */
static bool vertex_columns(struct geom_view *v, const char *header, size_t hlen)
{
    const struct geom *g = &v->g;
    struct tree *t = v->fs->tree;
    struct table_col *cols = tree_alloc(t, (size_t)g->ndecls * sizeof *cols + 1);
    char *h = tree_alloc(t, hlen + 1);
    if (!cols || !h)
        return false;
    for (uint32_t i = 0; i < g->ndecls; i++) {
        const struct geom_decl *x = &g->decl[i];
        bool named = x->ok && !(x->usage == GEOM_WEIGHT_MAP);
        bool wide = x->type == GEOM_DT_FLOAT || x->type == GEOM_DT_U32;
        cols[i] = (struct table_col){.kind = x->type == GEOM_DT_FLOAT ? FIELD_F32 : wide ? FIELD_U32 : FIELD_U8,
                                     .offset = x->offset,
                                     .count = named ? geom_elements(x) : x->size,
                                     .raw = !named};
        uint64_t bytes = named && wide ? 4ull * cols[i].count : cols[i].count;
        if ((uint64_t)x->offset + bytes > g->stride)
            return false;
    }
    memcpy(h, header, hlen);
    v->vcols = cols;
    v->nvcols = g->ndecls;
    v->vheader = h;
    return true;
}

/* -o rw: vertices.csv is a table over the vertex records (little-endian), as are the
 * tail's CSVs of fixed-size records (declare_block). */
static enum s3_err populate_geom(struct tree *t, uint32_t dir, void *ctx, uint64_t arg);

/* -o rw: the GEOM's tables (vertices.csv and the tail's fixed-size CSVs, all in geom/):
 * one hook for every GEOM of the mount, the directory says whose. */
static bool vertices_table(struct s3fs *fs, uint32_t ino, struct table_field *tf, void *ctx)
{
    (void)ctx;
    const struct geom_view *v = tree_dir_ctx(fs->tree, tree_parent(fs->tree, ino), populate_geom);
    if (!v)
        return false;
    for (uint32_t i = 0; ino && i < v->ntables; i++)
        if (v->tables[i].ino == ino) {
            *tf = v->tables[i].tf;
            return true;
        }
    if (!v->vcsv || ino != v->vcsv)
        return false;
    *tf = (struct table_field){.off = v->g.vert_pos, .nrec = v->g.nverts, .stride = v->g.stride, .numbered = true,
                               .header = v->vheader, .cols = v->vcols, .ncols = v->nvcols};
    return true;
}

static void add_vertices(struct geom_view *v, uint32_t dir)
{
    const struct geom *g = &v->g;
    struct tree *t = v->fs->tree;
    uint64_t len = (uint64_t)g->nverts * g->stride;
    if (!g->verts_ok) {
        add_error(t, dir, "vertices", g->vert_err);
        return;
    }
    tree_add_range(t, dir, "vertices.bin", "geom.vertices", g->vert_pos, len);
    if (g->decl_empty) {
        add_error(t, dir, "vertices", "a declaration of 0 bytes: the vertices are shown as bytes only");
        return;
    }
    struct sbuf b = {0};
    sb_printf(&b, "index");
    bool seen[GEOM_VERTEX_ID + 1] = {false}; /* a known usage met before: its columns get _N */
    for (uint32_t i = 0; i < g->ndecls; i++) {
        uint32_t u = g->decl[i].usage;
        bool known = u <= GEOM_VERTEX_ID;
        decl_header(&b, &g->decl[i], i, known && seen[u] && u != GEOM_UV);
        if (known)
            seen[u] = true;
    }
    bool writable = !b.oom && vertex_columns(v, b.p, b.len);
    sb_put(&b, "\n", 1);
    for (uint32_t n = 0; n < g->nverts; n++) {
        sb_printf(&b, "%" PRIu32, n);
        for (uint32_t i = 0; i < g->ndecls; i++)
            decl_values(&b, g, &g->decl[i], n);
        sb_put(&b, "\n", 1);
    }
    uint32_t ino = add_csv(t, dir, "vertices.csv", &b, g->vert_pos, len);
    if (writable)
        v->vcsv = ino;
}

static void add_indices(struct geom_view *v, uint32_t dir)
{
    const struct geom *g = &v->g;
    struct tree *t = v->fs->tree;
    add_u32(t, dir, "index_buffer_count", g->index_buffers, g->ibuf_pos);
    add_u8(t, dir, "bytes_per_index", g->index_size, g->ibuf_pos + 4);
    add_u32(t, dir, "index_count", g->index_count, g->ibuf_pos + 5);
    if (!g->indices_ok) {
        add_error(t, dir, "indices", g->index_err);
        return;
    }
    uint64_t len = (uint64_t)g->index_count * g->index_size;
    tree_add_range(t, dir, "indices.bin", "geom.indices", g->index_pos, len);
    struct sbuf b = {0};
    sb_printf(&b, "a,b,c\n");
    for (uint32_t i = 0; i + 3 <= g->index_count; i += 3)
        sb_printf(&b, "%" PRIu32 ",%" PRIu32 ",%" PRIu32 "\n", g->index[i], g->index[i + 1], g->index[i + 2]);
    add_csv(t, dir, "triangles.csv", &b, g->index_pos, len);
    if (g->tri_err[0])
        add_error(t, dir, "triangles", g->tri_err);
}

/* ---- /geom: the tail ---- */

/* A tail block's CSV (made by fill), or NAME.error when it could not be read. */
static uint32_t add_block(struct geom_view *v, uint32_t dir, const char *name, const struct geom_block *blk,
                          void (*fill)(struct geom_view *v, struct sbuf *b))
{
    if (!blk->present)
        return 0;
    if (blk->err[0]) {
        add_error(v->fs->tree, dir, name, blk->err);
        return 0;
    }
    struct sbuf b = {0};
    fill(v, &b);
    char file[64];
    snprintf(file, sizeof file, "%s.csv", name);
    return add_csv(v->fs->tree, dir, file, &b, blk->pos, blk->size);
}

/* ---- the tail's CSVs as tables (-o rw) ---- */

/* The derived cells of seam_stitches.csv, from a record's word (u16 at 4, little-endian):
 * its top 4 bits (the seam), their name, its low 12 bits (as fill_seams shows them). */
static unsigned seam_word(const uint8_t *rec)
{
    return rec[4] | (unsigned)rec[5] << 8;
}

static void seam_of(const uint8_t *rec, const void *ctx, char *out, size_t outlen)
{
    (void)ctx;
    snprintf(out, outlen, "%u", seam_word(rec) >> 12);
}

static void seam_name_of(const uint8_t *rec, const void *ctx, char *out, size_t outlen)
{
    (void)ctx;
    const char *name = geom_seam_name(seam_word(rec) >> 12);
    snprintf(out, outlen, "%s", name ? name : "?");
}

static void seam_position_of(const uint8_t *rec, const void *ctx, char *out, size_t outlen)
{
    (void)ctx;
    snprintf(out, outlen, "%u", seam_word(rec) & 0xFFFu);
}

/* bones.csv's name cell: the rig's bone of the record's hash (u32, little-endian), or
 * nothing (as fill_bones shows it). */
static void bone_name_of(const uint8_t *rec, const void *ctx, char *out, size_t outlen)
{
    const struct geom_view *v = ctx;
    uint32_t hash = rec[0] | (uint32_t)rec[1] << 8 | (uint32_t)rec[2] << 16 | (uint32_t)rec[3] << 24;
    int32_t bone = v->rig ? rig_bone_of(v->rig, hash) : -1;
    snprintf(out, outlen, "%s", bone >= 0 ? v->rig->skel.bone[bone].name : "");
}

static const struct table_col tgi_cols[] = {{.kind = FIELD_U32, .offset = 0, .count = 2},
                                            {.kind = FIELD_U64, .offset = 8, .count = 1}};
static const struct table_col seam_cols[] = {
    {.kind = FIELD_U32, .offset = 0, .count = 1},
    {.kind = FIELD_U16, .offset = 4, .count = 1},
    {.count = 1, .derive = seam_of, .name = "seam"},
    {.count = 1, .derive = seam_name_of, .name = "seam_name"},
    {.count = 1, .derive = seam_position_of, .name = "position"}};
/* slot, v0..v2, then bary (2), distance, offset (3), position (3), rotation (4): 13 f32 */
static const struct table_col ray_cols_hashes[] = {{.kind = FIELD_U32, .offset = 0, .count = 1},
                                                   {.kind = FIELD_U16, .offset = 4, .count = 3},
                                                   {.kind = FIELD_F32, .offset = 10, .count = 13},
                                                   {.kind = FIELD_U32, .offset = 62, .count = 1}};
static const struct table_col ray_cols_indices[] = {{.kind = FIELD_U32, .offset = 0, .count = 1},
                                                    {.kind = FIELD_U16, .offset = 4, .count = 3},
                                                    {.kind = FIELD_F32, .offset = 10, .count = 13},
                                                    {.kind = FIELD_U8, .offset = 62, .count = 1}};
static const struct table_col state_cols[] = {{.kind = FIELD_U32, .offset = 0, .count = 1},
                                              {.kind = FIELD_I32, .offset = 4, .count = 4}};

/* A names cell as fill_bones writes it needs no quoting: else bones.csv stays read-only
 * (its rows would not split at commas). */
static bool bone_names_plain(const struct geom_view *v)
{
    for (uint32_t i = 0; v->rig && i < v->g.bones.count; i++) {
        int32_t bone = rig_bone_of(v->rig, v->g.bone_hash[i]);
        if (bone >= 0 && strpbrk(v->rig->skel.bone[bone].name, ",\"\r\n"))
            return false;
    }
    return true;
}

/* A tail block's CSV (ino, 0: none) declared a table over its records (after the count),
 * the first line of its text being `header`. */
static void declare_block(struct geom_view *v, uint32_t ino, const struct geom_block *blk, uint32_t stride,
                          const char *header, const struct table_col *cols, uint32_t ncols)
{
    if (!ino || v->ntables >= GEOM_TABLES || blk->count == 0 || blk->size != 4 + (uint64_t)blk->count * stride)
        return;
    v->tables[v->ntables++] = (struct geom_table){
        ino, {.off = blk->pos + 4, .nrec = blk->count, .stride = stride, .numbered = true, .header = header,
              .cols = cols, .ncols = ncols}};
}

static void fill_bones(struct geom_view *v, struct sbuf *b)
{
    sb_printf(b, "index,hash,name\n");
    if (v->rig)
        work_lookups += v->g.bones.count;
    for (uint32_t i = 0; i < v->g.bones.count; i++) {
        sb_printf(b, "%" PRIu32 ",0x%08" PRIx32 ",", i, v->g.bone_hash[i]);
        int32_t bone = v->rig ? rig_bone_of(v->rig, v->g.bone_hash[i]) : -1;
        if (bone >= 0)
            sb_csv_field(b, v->rig->skel.bone[bone].name);
        sb_put(b, "\n", 1);
    }
}

static void fill_uv_stitches(struct geom_view *v, struct sbuf *b)
{
    sb_printf(b, UV_HEADER "\n");
    for (uint32_t i = 0; i < v->g.uv_stitches.count; i++) {
        const struct geom_uv_stitch *s = &v->g.uv_stitch[i];
        if (s->count == 0)
            sb_printf(b, "%" PRIu32 ",%" PRId32 ",,,\n", i, s->vertex);
        for (uint32_t k = 0; k < s->count; k++)
            sb_printf(b, "%" PRIu32 ",%" PRId32 ",%" PRIu32 ",%.9g,%.9g\n", i, s->vertex, k, (double)s->uv[2 * k],
                      (double)s->uv[2 * k + 1]);
    }
}

/* uv_stitches.csv written (-o rw): its rows are one a pair, records of several sizes
 * (geom.md: i32 vertex, u32 k, k pairs of f32 u, v), so the view encodes it itself. */

/* The next cell of a row (at most 63 characters, blanks around it dropped) into cell. */
static bool uv_cell(const char *row, size_t n, size_t *at, char cell[64])
{
    const char *comma = memchr(row + *at, ',', n - *at);
    size_t end = comma ? (size_t)(comma - row) : n, from = *at;
    *at = comma ? end + 1 : n + 1;
    while (from < end && (row[from] == ' ' || row[from] == '\t'))
        from++;
    while (end > from && (row[end - 1] == ' ' || row[end - 1] == '\t' || row[end - 1] == '\r'))
        end--;
    if (end - from >= 64)
        return false;
    memcpy(cell, row + from, end - from);
    cell[end - from] = 0;
    return true;
}

/* A decimal integer cell in [lo, hi]. */
static bool uv_int(const char *cell, long long lo, long long hi, long long *v)
{
    char *end;
    errno = 0;
    *v = strtoll(cell, &end, 10);
    return *cell && !*end && !errno && *v >= lo && *v <= hi;
}

/* An f32 cell; a NaN over a NaN keeps the old bits ("nan" does not say which). */
static bool uv_f32(const char *cell, uint8_t *at)
{
    char *end;
    errno = 0;
    float f = strtof(cell, &end);
    if (!*cell || *end || (isinf(f) && errno == ERANGE))
        return false;
    uint32_t old = (uint32_t)at[0] | (uint32_t)at[1] << 8 | (uint32_t)at[2] << 16 | (uint32_t)at[3] << 24, bits;
    float was;
    memcpy(&was, &old, 4);
    if (isnan(was) && isnan(f))
        return true;
    memcpy(&bits, &f, 4);
    for (int i = 0; i < 4; i++)
        at[i] = (uint8_t)(bits >> 8 * i);
    return true;
}

/* One row of stitch i (pair k, or none when the stitch has no pair): its cells into the
 * block's bytes (rec: the record's; *vertex: the vertex its first row gave, -1 none). */
static enum s3_err uv_row(const struct geom_uv_stitch *st, uint32_t i, uint32_t k, const char *row, size_t n,
                          uint8_t *rec, long long *vertex, char *why, size_t whylen)
{
    char cell[5][64];
    size_t at = 0;
    for (int c = 0; c < 5; c++)
        if (at > n || !uv_cell(row, n, &at, cell[c])) {
            snprintf(why, whylen, "stitch %" PRIu32 ": a row is index,vertex,pair,u,v", i);
            return S3_ERR_INVALID;
        }
    long long idx, vert, pair;
    bool none = st->count == 0;
    if (at <= n || !uv_int(cell[0], i, i, &idx) || !uv_int(cell[1], INT32_MIN, INT32_MAX, &vert) ||
        (none ? cell[2][0] || cell[3][0] || cell[4][0] : !uv_int(cell[2], k, k, &pair))) {
        snprintf(why, whylen, "stitch %" PRIu32 "%s: the index, the pair and the number of cells stay as they are "
                 "(a vertex an i32)", i, none ? "" : "'s row");
        return S3_ERR_INVALID;
    }
    if (*vertex >= INT32_MIN && *vertex != vert) {
        snprintf(why, whylen, "stitch %" PRIu32 ": its pairs share one vertex (%lld, then %lld)", i, *vertex, vert);
        return S3_ERR_INVALID;
    }
    *vertex = vert;
    for (int b = 0; b < 4; b++)
        rec[b] = (uint8_t)((uint32_t)(int32_t)vert >> 8 * b);
    if (!none && (!uv_f32(cell[3], rec + 8 + 8ull * k) || !uv_f32(cell[4], rec + 12 + 8ull * k))) {
        snprintf(why, whylen, "stitch %" PRIu32 " pair %" PRIu32 ": u and v are numbers (f32)", i, k);
        return S3_ERR_INVALID;
    }
    return S3_OK;
}

static enum s3_err uv_stitches_encode(const struct table_field *tf, const char *text, size_t len, uint8_t *bytes,
                                      char *why, size_t whylen)
{
    const struct geom_view *v = tf->encode_ctx;
    const struct geom *g = &v->g;
    size_t at = 0;
    uint32_t i = 0, k = 0;
    bool header = true;
    long long vertex = INT64_MIN;
    while (at < len) {
        const char *line = text + at, *nl = memchr(line, '\n', len - at);
        size_t n = nl ? (size_t)(nl - line) : len - at;
        at += n + (nl ? 1 : 0);
        if (n && line[n - 1] == '\r')
            n--;
        if (header) {
            if (n != strlen(UV_HEADER) || memcmp(line, UV_HEADER, n) != 0) {
                snprintf(why, whylen, "the first line must stay the header (" UV_HEADER ")");
                return S3_ERR_INVALID;
            }
            header = false;
            continue;
        }
        if (i >= g->uv_stitches.count) {
            snprintf(why, whylen, "more rows than the %" PRIu32 " stitches have", g->uv_stitches.count);
            return S3_ERR_INVALID;
        }
        const struct geom_uv_stitch *st = &g->uv_stitch[i];
        enum s3_err rc = uv_row(st, i, k, line, n, bytes + (st->pos - tf->off), &vertex, why, whylen);
        if (rc)
            return rc;
        if (st->count == 0 || ++k == st->count) /* the stitch's last row */
            i++, k = 0, vertex = INT64_MIN;
    }
    if (header || i != g->uv_stitches.count) {
        snprintf(why, whylen, "rows for %" PRIu32 " of %" PRIu32 " stitches", i, g->uv_stitches.count);
        return S3_ERR_INVALID;
    }
    return S3_OK;
}

/* uv_stitches.csv declared writable when every record lies in the block as parsed. */
static void declare_uv_stitches(struct geom_view *v, uint32_t ino)
{
    static const struct table_col cells[5] = {{.count = 1}, {.count = 1}, {.count = 1}, {.count = 1}, {.count = 1}};
    const struct geom_block *blk = &v->g.uv_stitches;
    uint64_t rows = 0;
    if (!ino || v->ntables >= GEOM_TABLES || blk->count == 0 || !v->g.uv_stitch || blk->size <= 4 ||
        blk->size - 4 > UINT32_MAX)
        return;
    for (uint32_t i = 0; i < blk->count; i++) {
        const struct geom_uv_stitch *st = &v->g.uv_stitch[i];
        if (st->pos < blk->pos + 4 || st->pos + 8 + 8ull * st->count > blk->pos + blk->size)
            return;
        rows += st->count ? st->count : 1;
    }
    if (rows > UINT32_MAX)
        return;
    v->tables[v->ntables++] = (struct geom_table){
        ino, {.off = blk->pos + 4, .nrec = 1, .stride = (uint32_t)(blk->size - 4), .header = UV_HEADER,
              .cols = cells, .ncols = 5, .encode = uv_stitches_encode, .encode_ctx = v, .text_rows = (uint32_t)rows}};
}

static void fill_seams(struct geom_view *v, struct sbuf *b)
{
    sb_printf(b, "index,vertex,word,seam,seam_name,position\n");
    for (uint32_t i = 0; i < v->g.seams.count; i++) {
        const struct geom_seam *s = &v->g.seam[i];
        const char *name = geom_seam_name(s->word >> 12);
        sb_printf(b, "%" PRIu32 ",%" PRIu32 ",0x%04x,%u,%s,%u\n", i, s->vertex, s->word, s->word >> 12,
                  name ? name : "?", s->word & 0xFFFu);
    }
}

static void fill_slot_rays(struct geom_view *v, struct sbuf *b)
{
    bool hashes = v->g.ray_size == 66;
    sb_printf(b, "index,%s,v0,v1,v2,bary0,bary1,distance,ox,oy,oz,px,py,pz,qx,qy,qz,qw,%s\n",
              hashes ? "slot_hash" : "slot_index", hashes ? "pivot_hash" : "pivot_index");
    for (uint32_t i = 0; i < v->g.slot_rays.count; i++) {
        const struct geom_slot_ray *r = &v->g.ray[i];
        sb_printf(b, hashes ? "%" PRIu32 ",0x%08" PRIx32 : "%" PRIu32 ",%" PRIu32, i, r->slot);
        sb_printf(b, ",%u,%u,%u", r->tri[0], r->tri[1], r->tri[2]);
        const float *f[] = {r->bary, &r->distance, r->offset, r->position, r->rotation};
        const int n[] = {2, 1, 3, 3, 4};
        for (int k = 0; k < 5; k++)
            for (int j = 0; j < n[k]; j++)
                sb_printf(b, ",%.9g", (double)f[k][j]);
        sb_printf(b, hashes ? ",0x%08" PRIx32 "\n" : ",%" PRIu32 "\n", r->pivot);
    }
}

static void fill_states(struct geom_view *v, struct sbuf *b)
{
    sb_printf(b, "index,state,start_index,min_vertex_index,vertex_count,primitive_count\n");
    for (uint32_t i = 0; i < v->g.states.count; i++) {
        const struct geom_state *s = &v->g.state[i];
        sb_printf(b, "%" PRIu32 ",0x%08" PRIx32 ",%" PRId32 ",%" PRId32 ",%" PRId32 ",%" PRId32 "\n", i, s->state,
                  s->start, s->min_vertex, s->vertex_count, s->primitive_count);
    }
}

static void fill_tgis(struct geom_view *v, struct sbuf *b)
{
    sb_printf(b, "index,type,group,instance\n");
    for (uint32_t i = 0; i < v->g.tgis.count; i++) {
        const struct geom_key *k = &v->g.tgi[i];
        sb_printf(b, "%" PRIu32 ",0x%08" PRIx32 ",0x%08" PRIx32 ",0x%016" PRIx64 "\n", i, k->type, k->group,
                  k->instance);
    }
}

static enum s3_err populate_geom(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    struct geom_view *v = ctx;
    const struct geom *g = &v->g;
    v->ntables = 0; /* a listing undone and made again declares its files again */
    uint32_t ino = tree_add_textf(t, dir, "tag", "bytes", "GEOM\n");
    tree_set_span(t, ino, g->pos, 4);
    add_u32(t, dir, "version", g->version, g->pos + 4);
    add_u32(t, dir, "tgi_offset", g->tgi_offset, g->pos + 8);
    add_u32(t, dir, "tgi_size", g->tgi_size, g->pos + 12);
    add_hex32(t, dir, "shader", g->shader, g->pos + 16);
    const char *shader = geom_param_name(g->shader);
    if (g->shader && shader)
        tree_add_textf(t, dir, "shader_name", "string", "%s\n", shader);
    uint32_t csv = add_block(v, dir, "tgis", &g->tgis, fill_tgis); /* found by its offset, whatever comes before */
    declare_block(v, csv, &g->tgis, 16, "index,type,group,instance", tgi_cols, 2);
    if (g->has_material) {
        add_u32(t, dir, "material_size", g->mtnf.size, g->mtnf.pos - 4);
        if (g->mtnf.size > g->size - (g->mtnf.pos - g->pos)) {
            add_error(t, dir, "material", g->mtnf.err);
            return S3_OK; /* nothing after a material that runs past the chunk can be found */
        }
        tree_add_range(t, dir, "material.bin", "mtnf", g->mtnf.pos, g->mtnf.size);
        ino = tree_add_dir(t, dir, "material", "mtnf", populate_material, v, 0);
        tree_set_span(t, ino, g->mtnf.pos, g->mtnf.size);
    }
    if (!g->fields_pos) {
        add_error(t, dir, "declarations", "the chunk ends before the vertex and declaration counts");
        return S3_OK;
    }
    add_u32(t, dir, "merge_group", g->merge_group, g->fields_pos);
    add_u32(t, dir, "sort_order", g->sort_order, g->fields_pos + 4);
    add_u32(t, dir, "vertex_count", g->nverts, g->fields_pos + 8);
    add_u32(t, dir, "declaration_count", g->ndecls, g->fields_pos + 12);
    if (!g->decl) {
        add_error(t, dir, "declarations", g->decl_err);
        return S3_OK;
    }
    add_vertex_format(v, dir);
    add_vertices(v, dir);
    if (!g->verts_ok)
        return S3_OK;
    add_indices(v, dir);
    if (!g->indices_ok)
        return S3_OK;
    if (g->skin.present) {
        if (g->skin.err[0])
            add_error(t, dir, "skin_controller_index", g->skin.err);
        else
            add_i32(t, dir, "skin_controller_index", g->skin_index, g->skin.pos);
    }
    csv = add_block(v, dir, "uv_stitches", &g->uv_stitches, fill_uv_stitches);
    declare_uv_stitches(v, csv); /* rows of several sizes: the view encodes them */
    csv = add_block(v, dir, "seam_stitches", &g->seams, fill_seams);
    declare_block(v, csv, &g->seams, 6, "index,vertex,word,seam,seam_name,position", seam_cols, 5);
    csv = add_block(v, dir, "slot_rays", &g->slot_rays, fill_slot_rays);
    bool hashes = g->ray_size == 66;
    declare_block(v, csv, &g->slot_rays, g->ray_size,
                  hashes ? "index,slot_hash,v0,v1,v2,bary0,bary1,distance,ox,oy,oz,px,py,pz,qx,qy,qz,qw,pivot_hash"
                         : "index,slot_index,v0,v1,v2,bary0,bary1,distance,ox,oy,oz,px,py,pz,qx,qy,qz,qw,pivot_index",
                  hashes ? ray_cols_hashes : ray_cols_indices, 4);
    csv = add_block(v, dir, "bones", &g->bones, fill_bones);
    v->bone_cols[0] = (struct table_col){.kind = FIELD_U32, .offset = 0, .count = 1};
    v->bone_cols[1] = (struct table_col){.count = 1, .derive = bone_name_of, .derive_ctx = v, .name = "name"};
    if (bone_names_plain(v))
        declare_block(v, csv, &g->bones, 4, "index,hash,name", v->bone_cols, 2);
    csv = add_block(v, dir, "geometry_states", &g->states, fill_states);
    declare_block(v, csv, &g->states, 20, "index,state,start_index,min_vertex_index,vertex_count,primitive_count",
                  state_cols, 2);
    return S3_OK;
}

/* ---- exports ---- */

static enum s3_err build_model(struct geom_view *v, struct mdl_model *m, char *err, size_t errlen)
{
    struct geom_report r;
    enum s3_err e = geom_model(&v->g, v->rig, m, &r, err, errlen);
    count_work(&r);
    geom_report_free(&r);
    return e;
}

static enum s3_err build_glb(void *ctx, uint8_t **out, size_t *len, char *err, size_t errlen)
{
    struct mdl_model m;
    enum s3_err e = build_model(ctx, &m, err, errlen);
    if (e)
        return e;
    e = export_model_glb(&m, out, len, err, errlen);
    mdl_model_free(&m);
    return e;
}

static enum s3_err build_obj(void *ctx, uint8_t **out, size_t *len, char *err, size_t errlen)
{
    struct mdl_model m;
    enum s3_err e = build_model(ctx, &m, err, errlen);
    if (e)
        return e;
    e = export_mesh_obj(&m.mesh[0], out, len, err, errlen);
    mdl_model_free(&m);
    return e;
}

static enum s3_err populate_root(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    struct geom_view *v = ctx;
    add_info_and_unparsed(v->fs, dir);
    uint32_t ino = tree_add_dir(t, dir, "rcol", "rcol", populate_rcol, v, 0);
    tree_set_span(t, ino, 0, v->g.rcol.size);
    ino = tree_add_dir(t, dir, "geom", "geom", populate_geom, v, 0);
    tree_set_span(t, ino, v->g.pos, v->g.size);
    export_add(v->fs, dir, "mesh.glb", "glb.mesh", build_glb, v);
    export_add(v->fs, dir, "mesh.obj", "obj.mesh", build_obj, v);
    return S3_OK;
}

/* ---- opening: the rig, /info ---- */

/* The rig to bind to: a rig of the package holding this GEOM that has every hash, else
 * -o rig='s (the one having the most), else none. rig_set_pick sorts the hashes once and
 * looks each rig's bone hashes up in them by binary search (rigset.h): O((hashes + the
 * rigs' bones) log hashes) by construction, whatever the lists hold, so it is not counted
 * here (nor is describe's rig_covers, one binary search per hash). S3_OK or NOMEM: a
 * failed allocation fails the open, never reads as "no rig". */
static enum s3_err choose_rig(struct geom_view *v)
{
    struct s3fs *fs = v->fs;
    const struct geom *g = &v->g;
    char err[200] = "";
    const struct rig_set *host = fs->host ? view_skeletons(fs->host, err, sizeof err) : NULL;
    ptrdiff_t k = -1;
    if (host && rig_set_pick(host, g->bone_hash, g->bones.count, false, &k) != S3_OK)
        return S3_ERR_NOMEM;
    if (k >= 0) {
        v->rig = &host->r[k];
        v->rig_label = strdup(v->rig->label);
        return v->rig_label ? S3_OK : S3_ERR_NOMEM;
    }
    const struct rig_set *opt = fs->rig_file ? fs->rig_file->set : NULL;
    if (opt && rig_set_pick(opt, g->bone_hash, g->bones.count, true, &k) != S3_OK)
        return S3_ERR_NOMEM;
    if (k >= 0) {
        v->rig = &opt->r[k];
        const char *sub = v->rig->label;
        if (asprintf(&v->rig_label, "%s%s%s", fs->rig_file->path, sub[0] ? "/" : "", sub) < 0) {
            v->rig_label = NULL;
            return S3_ERR_NOMEM;
        }
    }
    if (host && host->n && !v->rig)
        return diag_add(&fs->diag, "no rig of the package has every bone hash of the mesh");
    return S3_OK;
}

/* One /info warning per trap the export met (geom_model's report): S3_OK, or NOMEM
 * (the model or a warning refused memory: the open fails, never an /info without it). */
static enum s3_err report(struct geom_view *v)
{
    struct s3fs *fs = v->fs;
    struct mdl_model m;
    struct geom_report r;
    char err[240];
    enum s3_err e = geom_model(&v->g, v->rig, &m, &r, err, sizeof err);
    if (e == S3_ERR_NOMEM) {
        geom_report_free(&r);
        return e;
    }
    if (e) {
        e = diag_add(&fs->diag, "mesh.glb, mesh.obj: %s", err);
        /* with no model, the hashes the rig lacks are all there is to say */
        enum s3_err h = v->rig && e == S3_OK ? geom_missing_hashes(&v->g, v->rig, &r) : S3_ERR_FORMAT;
        count_work(&r);
        if (h == S3_ERR_NOMEM)
            e = h;
        if (e || h) {
            geom_report_free(&r);
            return e;
        }
    } else {
        count_work(&r);
        mdl_model_free(&m);
    }
    if (r.zero_normals)
        e = diag_add(&fs->diag, "%" PRIu32 " zero-length normals; the exports rebuild them from the faces around them",
                     r.zero_normals);
    if (e == S3_OK && r.unit_normals)
        e = diag_add(&fs->diag, "%" PRIu32 " normals are not unit length; the exports normalise them",
                     r.unit_normals);
    if (e == S3_OK && r.nmissing) {
        struct sbuf b = {0};
        for (uint32_t i = 0; i < r.nmissing && i < 32; i++)
            sb_printf(&b, "%s0x%08" PRIx32, i ? " " : "", r.missing[i]);
        if (r.nmissing > 32)
            sb_printf(&b, " and %" PRIu32 " more", r.nmissing - 32);
        size_t len;
        char *list = sb_take(&b, &len);
        e = list ? diag_add(&fs->diag, "%" PRIu32 " bone hashes are not in the rig (%s); their influences are "
                            "dropped and %" PRIu32 " vertices renormalised", r.nmissing, list, r.missing_vertices)
                 : S3_ERR_NOMEM;
        free(list);
    }
    if (e == S3_OK && r.renormalised)
        e = diag_add(&fs->diag, "%" PRIu32 " vertices' weights do not sum to 1; the exports divide them by their sum",
                     r.renormalised);
    if (e == S3_OK && r.past_list)
        e = diag_add(&fs->diag, "%" PRIu32 " weighted influences name a bone past the %" PRIu32 " hashes; dropped",
                     r.past_list, v->g.bones.count);
    if (e == S3_OK && r.unweighted)
        e = diag_add(&fs->diag, "%" PRIu32 " vertices have no influence left; bound wholly to bone 0", r.unweighted);
    if (e == S3_OK && r.tris_left_out)
        e = diag_add(&fs->diag, "%" PRIu32 " triangles are left out of the exports (see geom/triangles.error)",
                     r.tris_left_out);
    if (e == S3_OK && v->rig && !r.skinned)
        e = diag_add(&fs->diag, "mesh.glb is not skinned: %s", r.unskinned_why);
    geom_report_free(&r);
    return e;
}

/* The facts and the broken parts' warnings: S3_OK, or NOMEM when a warning is refused. */
static enum s3_err describe(struct geom_view *v)
{
    struct s3fs *fs = v->fs;
    const struct geom *g = &v->g;
    struct sbuf *f = &fs->facts;
    sb_printf(f, "geom_version: %" PRIu32 "\ngame: The Sims %d\n", g->version, g->sims3 ? 3 : 4);
    sb_printf(f, "vertices: %" PRIu32 "\ntriangles: %" PRIu32 "\nbones: %" PRIu32 "\n", g->nverts, geom_triangles(g),
              g->bones.count);
    sb_printf(f, "rig: %s\n", v->rig_label ? v->rig_label : "none");
    if (v->rig)
        sb_printf(f, "rig_bones: %" PRIu32 " (%zu of the %" PRIu32 " hashes found)\n", v->rig->skel.nbones,
                  rig_covers(v->rig, g->bone_hash, g->bones.count), g->bones.count);
    const char *fails[][2] = {{g->decl_err, "declarations"}, {g->vert_err, "vertices"}, {g->index_err, "indices"},
                              {g->tri_err, "triangles"},    {g->mtnf.err, "material"}, {g->skin.err, ""},
                              {g->uv_stitches.err, ""},     {g->seams.err, ""},        {g->slot_rays.err, ""},
                              {g->bones.err, ""},           {g->states.err, ""},       {g->tgis.err, ""}};
    for (size_t i = 0; i < sizeof fails / sizeof fails[0]; i++)
        if (fails[i][0][0] && diag_add(&fs->diag, "%s%s%s", fails[i][1], fails[i][1][0] ? ": " : "", fails[i][0]))
            return S3_ERR_NOMEM;
    cover_add(&fs->cover, 0, g->rcol.size);
    cover_add(&fs->cover, g->pos, g->seq_end);
    if (g->tgis.present && !g->tgis.err[0])
        cover_add(&fs->cover, g->tgis.pos, g->tgis.size);
    return S3_OK;
}

/* -o rw: every value file of the RCOL header, its chunk entries and external keys, the
 * GEOM's header and fields, its material and each parameter is a field of the file as
 * published (its span and type, little-endian: docs/formats/geom.md); files whose type
 * is no field type (names, tags, texture links) are not. */
static bool geom_declared_value(struct s3fs *fs, uint32_t ino, struct view_value *out, void *ctx)
{
    static const populate_fn dirs[] = {populate_rcol, populate_chunk, populate_external,
                                       populate_geom, populate_material, populate_param};
    (void)ctx; /* one hook for every GEOM of the mount: the directory says whose */
    struct tree *t = fs->tree;
    uint32_t dir = tree_parent(t, ino);
    bool ours = false;
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0] && !ours; i++)
        ours = tree_dir_ctx(t, dir, dirs[i]) != NULL;
    return ours && view_value_as_published(t, ino, false, out);
}

enum s3_err geom_view_open(struct s3fs *fs, char *err, size_t errlen)
{
    struct geom_view *v = calloc(1, sizeof *v);
    if (!v)
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    v->fs = fs;
    enum s3_err e = geom_parse(&fs->src.src, fs->opts.max_unpacked, &v->g, &fs->diag, err, errlen);
    if (e != S3_OK) {
        free(v);
        return e;
    }
    if (tree_on_free(fs->tree, geom_view_free, v)) {
        geom_view_free(v);
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    }
    if (choose_rig(v) != S3_OK)
        return s3_fail(S3_ERR_NOMEM, err, errlen, "choosing the rig: out of memory");
    if (describe(v) || report(v))
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    if (view_add_table_hook_shared(fs, vertices_table) || view_add_value_hook_shared(fs, geom_declared_value))
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    return view_root(fs, "geom.file", populate_root, v);
}
