#include "expect_geom.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* A growing text for the expected CSV files. */
struct text {
    char *p;
    size_t len, cap;
};

static void put(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s;
    assert_true(vasprintf(&s, fmt, ap) >= 0);
    va_end(ap);
    size_t n = strlen(s);
    if (t->len + n + 1 > t->cap) {
        t->cap = 2 * (t->len + n + 1);
        t->p = realloc(t->p, t->cap);
    }
    memcpy(t->p + t->len, s, n + 1);
    t->len += n;
    free(s);
}

/* A file holding t (taken), with its span and type. */
static void ex_text(struct expect_list *l, const char *path, struct text *t, uint64_t off, uint64_t len,
                    const char *type)
{
    struct expect *e = ex_add(l, EX_FILE, "%s", path);
    e->content = (uint8_t *)(t->p ? t->p : strdup(""));
    e->len = t->len;
    e->type = type;
    if (off || len)
        ex_span(e, off, len);
    memset(t, 0, sizeof *t);
}

/* A value file with no span (derived text: a name, a type name, a TGI). */
static void ex_plain(struct expect_list *l, const char *path, const char *type, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void ex_plain(struct expect_list *l, const char *path, const char *type, const char *fmt, ...)
{
    struct text t = {0};
    va_list ap;
    va_start(ap, fmt);
    char *s;
    assert_true(vasprintf(&s, fmt, ap) >= 0);
    va_end(ap);
    put(&t, "%s", s);
    free(s);
    ex_text(l, path, &t, 0, 0, type);
}

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static float rdf(const uint8_t *p)
{
    uint32_t u = rd32(p);
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static void ex_rcol(struct expect_list *l, const uint8_t *file, const struct fxgeom_layout *lay)
{
    ex_dir(l, "/rcol", 0, lay->rcol_size, "rcol");
    ex_bytes(l, "/rcol/header.bin", file, 0, lay->rcol_size, "rcol.header");
    ex_val(l, "/rcol/version", 0, 4, "u32", "3\n");
    ex_val(l, "/rcol/public_chunks", 4, 4, "u32", "0\n");
    ex_val(l, "/rcol/unused", 8, 4, "u32", "0\n");
    ex_val(l, "/rcol/external_count", 12, 4, "u32", "0\n");
    ex_val(l, "/rcol/chunk_count", 16, 4, "u32", "1\n");
    ex_dir(l, "/rcol/chunks", 0, 0, "rcol.chunks");
    ex_dir(l, "/rcol/chunks/0", 0x14, 16, "rcol.chunk");
    ex_val(l, "/rcol/chunks/0/instance", 0x14, 8, "u64", "0x00c0ffee0badf00d\n");
    ex_val(l, "/rcol/chunks/0/type", 0x1C, 4, "u32", "0x015a1849\n");
    ex_val(l, "/rcol/chunks/0/group", 0x20, 4, "u32", "0x00000000\n");
    ex_val(l, "/rcol/chunks/0/position", 0x24, 4, "u32", "%llu\n", (unsigned long long)lay->geom_pos);
    ex_val(l, "/rcol/chunks/0/length", 0x28, 4, "u32", "%llu\n", (unsigned long long)lay->geom_size);
    ex_dir(l, "/rcol/external", 0, 0, "rcol.external");
}

static const char *tgi_text(int i, char *out, size_t n)
{
    snprintf(out, n, "%08X:%08X:%016llX\n", fxgeom_tgi[i][0], fxgeom_tgi[i][1],
             (unsigned long long)fxgeom_tgi_instance[i]);
    return out;
}

static void ex_param(struct expect_list *l, const uint8_t *file, const struct fxgeom_layout *lay, int i)
{
    char d[64], p[128], buf[64];
    const char *name = fxgeom_param_names[i];
    if (name)
        snprintf(d, sizeof d, "/geom/material/%s", name);
    else
        snprintf(d, sizeof d, "/geom/material/0x%08x", fxgeom_unknown_param);
    uint64_t rec = lay->param_pos[i], data = lay->param_data_pos[i];
    uint32_t type = fxgeom_param_type[i], count = fxgeom_param_count[i];
    ex_dir(l, d, rec, 16, "mtnf.parameter");
    snprintf(p, sizeof p, "%s/name_hash", d);
    ex_val(l, p, rec, 4, "u32", "0x%08x\n", fxgeom_param_hash(i));
    if (name) {
        snprintf(p, sizeof p, "%s/name", d);
        ex_plain(l, p, "string", "%s\n", name);
    }
    snprintf(p, sizeof p, "%s/type", d);
    ex_val(l, p, rec + 4, 4, "u32", "0x%08x\n", type);
    snprintf(p, sizeof p, "%s/type_name", d);
    ex_plain(l, p, "text", "%s\n", type == 1 ? "float" : type == 2 ? "int" : type == 4 ? "texture"
                                                                                 : "texture (0x10004)");
    snprintf(p, sizeof p, "%s/count", d);
    ex_val(l, p, rec + 8, 4, "u32", "%u\n", count);
    snprintf(p, sizeof p, "%s/offset", d);
    ex_val(l, p, rec + 12, 4, "u32", "%llu\n", (unsigned long long)(data - lay->material_pos));
    snprintf(p, sizeof p, "%s/data.bin", d);
    ex_bytes(l, p, file, data, 4ull * count, "mtnf.data");
    struct text t = {0};
    for (uint32_t k = 0; k < count; k++) {
        uint32_t w = fxgeom_param_words[i][k];
        float f;
        memcpy(&f, &w, 4);
        if (type == 1)
            put(&t, "%.9g\n", (double)f);
        else if (type == 2)
            put(&t, "%d\n", (int32_t)w);
        else
            put(&t, "0x%08x\n", w);
    }
    char vt[32];
    snprintf(vt, sizeof vt, "%s[%u]", type == 1 ? "f32" : type == 2 ? "i32" : "u32", count);
    snprintf(p, sizeof p, "%s/value", d);
    struct expect *e = ex_add(l, EX_FILE, "%s", p);
    e->content = (uint8_t *)t.p;
    e->len = t.len;
    e->type_buf = strdup(vt);
    e->type = e->type_buf;
    ex_span(e, data, 4ull * count);
    if (type == 4 || type == 0x10004) {
        uint32_t idx = fxgeom_param_words[i][0];
        snprintf(p, sizeof p, "%s/tgi_index", d);
        ex_val(l, p, data, 4, "u32", "%u\n", idx);
        snprintf(p, sizeof p, "%s/texture", d);
        ex_plain(l, p, "tgi", "%s", tgi_text((int)idx, buf, sizeof buf));
    }
    if (type == 0x10004) { /* s4pi's reading: instance (words 0-1), type, group */
        const uint32_t *w = fxgeom_param_words[i];
        snprintf(p, sizeof p, "%s/as_key", d);
        ex_plain(l, p, "tgi", "%08X:%08X:%016llX\n", w[2], w[3],
               (unsigned long long)w[0] | (unsigned long long)w[1] << 32);
    }
}

static void ex_material(struct expect_list *l, const uint8_t *file, const struct fxgeom_layout *lay)
{
    uint64_t m = lay->material_pos;
    ex_val(l, "/geom/material_size", m - 4, 4, "u32", "%llu\n", (unsigned long long)lay->material_size);
    ex_bytes(l, "/geom/material.bin", file, m, lay->material_size, "mtnf");
    ex_dir(l, "/geom/material", m, lay->material_size, "mtnf");
    ex_val(l, "/geom/material/mtnf_tag", m, 4, "bytes", "MTNF\n");
    ex_val(l, "/geom/material/mtnf_unknown", m + 4, 4, "u32", "0x00000000\n");
    ex_val(l, "/geom/material/mtnf_data_size", m + 8, 4, "u32", "%llu\n",
           (unsigned long long)(lay->material_size - 16 - 16 * FXGEOM_PARAMS));
    ex_val(l, "/geom/material/mtnf_parameter_count", m + 12, 4, "u32", "%d\n", FXGEOM_PARAMS);
    for (int i = 0; i < FXGEOM_PARAMS; i++)
        ex_param(l, file, lay, i);
}

static const char *usage_name(uint32_t u)
{
    static const char *const n[] = {"?", "position", "normal", "uv", "bones", "weights", "tangent", "tag",
                                    "binormal", "weight_map", "vertex_id"};
    return u < sizeof n / sizeof n[0] ? n[u] : "?";
}

static bool known_layout(const struct fxgeom_decl *x)
{
    return x->usage >= 1 && x->usage <= 10 && x->usage != 8 && x->usage != 9;
}

static void ex_vertices(struct expect_list *l, const uint8_t *file, const struct fxgeom_opts *o,
                        const struct fxgeom_layout *lay)
{
    struct text t = {0};
    put(&t, "index,usage,meaning,type,size,offset,uv_set\n");
    for (uint32_t i = 0; i < lay->ndecls; i++) {
        const struct fxgeom_decl *x = &lay->decl[i];
        put(&t, "%u,%u,%s,%u,%u,%u,", i, x->usage, usage_name(x->usage), x->type, x->size, lay->decl_offset[i]);
        if (x->usage == 3)
            put(&t, "%d", x->uv_set);
        put(&t, "\n");
    }
    ex_text(l, "/geom/vertex_format.csv", &t, lay->decl_pos, 9ull * lay->ndecls, "csv");
    if (o->unknown_decl)
        ex_prefix(l, "/geom/vertex_format.error", "declaration ", 12, "error");
    uint64_t vlen = (uint64_t)FXGEOM_VERTS * lay->stride;
    ex_bytes(l, "/geom/vertices.bin", file, lay->vert_pos, vlen, "geom.vertices");
    put(&t, "index");
    static const char xyz[] = "xyz";
    for (uint32_t i = 0; i < lay->ndecls; i++) {
        const struct fxgeom_decl *x = &lay->decl[i];
        const char *pre[] = {NULL, "p", "n", NULL, "bone", "weight", "t", "tag"};
        if (!known_layout(x))
            put(&t, ",raw%u", i);
        else if (x->usage == 3)
            put(&t, ",u%d,v%d", x->uv_set, x->uv_set);
        else if (x->usage == 10)
            put(&t, ",id");
        else
            for (int k = 0; k < (x->usage == 1 || x->usage == 2 || x->usage == 6 ? 3 : 4); k++) {
                if (x->usage == 1 || x->usage == 2 || x->usage == 6)
                    put(&t, ",%s%c", pre[x->usage], xyz[k]);
                else
                    put(&t, ",%s%d", pre[x->usage], k);
            }
    }
    put(&t, "\n");
    for (int v = 0; v < FXGEOM_VERTS; v++) {
        put(&t, "%d", v);
        for (uint32_t i = 0; i < lay->ndecls; i++) {
            const struct fxgeom_decl *x = &lay->decl[i];
            const uint8_t *p = file + lay->vert_pos + (uint64_t)v * lay->stride + lay->decl_offset[i];
            if (!known_layout(x)) {
                put(&t, ",");
                for (unsigned k = 0; k < x->size; k++)
                    put(&t, "%02x", p[k]);
            } else if (x->type == 1) {
                for (unsigned k = 0; k < x->size / 4u; k++)
                    put(&t, ",%.9g", (double)rdf(p + 4 * k));
            } else if (x->type == 4) {
                put(&t, ",%u", rd32(p));
            } else {
                for (unsigned k = 0; k < x->size; k++)
                    put(&t, ",%u", p[k]);
            }
        }
        put(&t, "\n");
    }
    ex_text(l, "/geom/vertices.csv", &t, lay->vert_pos, vlen, "csv");
}

static void ex_indices(struct expect_list *l, const uint8_t *file, const struct fxgeom_opts *o,
                       const struct fxgeom_layout *lay)
{
    ex_val(l, "/geom/index_buffer_count", lay->ibuf_pos, 4, "u32", "1\n");
    ex_val(l, "/geom/bytes_per_index", lay->ibuf_pos + 4, 1, "u8", "%u\n", lay->index_size);
    ex_val(l, "/geom/index_count", lay->ibuf_pos + 5, 4, "u32", "%u\n", lay->index_count);
    uint64_t ilen = (uint64_t)lay->index_count * lay->index_size;
    ex_bytes(l, "/geom/indices.bin", file, lay->index_pos, ilen, "geom.indices");
    struct text t = {0};
    put(&t, "a,b,c\n");
    for (int i = 0; i < FXGEOM_TRIS; i++) {
        uint32_t a = fxgeom_index[3 * i], b = fxgeom_index[3 * i + 1], c = fxgeom_index[3 * i + 2];
        if (o->index_out_of_range && i == 1)
            a = FXGEOM_VERTS;
        put(&t, "%u,%u,%u\n", a, b, c);
    }
    ex_text(l, "/geom/triangles.csv", &t, lay->index_pos, ilen, "csv");
    if (o->extra_index || o->index_out_of_range)
        ex_prefix(l, "/geom/triangles.error", "", 0, "error");
}

static const char *seam_name(unsigned s)
{
    static const char *const n[] = {"ankles", "tail", "ears", "neck", "waist", "adult-female waist",
                                    "adult-male waist"};
    return s < 7 ? n[s] : "?";
}

/* A CSV name field: quoted (quotes doubled) when it holds a comma or a quote. */
static void put_csv_name(struct text *t, const char *s)
{
    if (!strpbrk(s, ",\"")) {
        put(t, "%s", s);
        return;
    }
    put(t, "\"");
    for (; *s; s++) {
        if (*s == '"')
            put(t, "\"");
        put(t, "%c", *s);
    }
    put(t, "\"");
}

static void ex_tail(struct expect_list *l, const uint8_t *file, const struct fxgeom_opts *o,
                    const struct fxgeom_layout *lay, const char *const *names)
{
    struct text t = {0};
    if (o->version < 12)
        ex_val(l, "/geom/skin_controller_index", lay->skin.pos, 4, "i32", "2\n");
    if (o->version >= 12) {
        put(&t, "index,vertex,pair,u,v\n");
        for (int i = 0; i < 3; i++) {
            const struct fxgeom_uv_stitch *s = &fxgeom_uv_stitches[i];
            if (s->count == 0)
                put(&t, "%d,%d,,,\n", i, s->vertex);
            for (uint32_t k = 0; k < s->count; k++)
                put(&t, "%d,%d,%u,%.9g,%.9g\n", i, s->vertex, k, (double)s->uv[k][0], (double)s->uv[k][1]);
        }
        ex_text(l, "/geom/uv_stitches.csv", &t, lay->uv_stitches.pos, lay->uv_stitches.size, "csv");
    }
    if (o->version >= 13) {
        put(&t, "index,vertex,word,seam,seam_name,position\n");
        for (int i = 0; i < 3; i++) {
            uint32_t w = fxgeom_seams[i][1];
            put(&t, "%d,%u,0x%04x,%u,%s,%u\n", i, fxgeom_seams[i][0], w, w >> 12, seam_name(w >> 12), w & 0xFFF);
        }
        ex_text(l, "/geom/seam_stitches.csv", &t, lay->seams.pos, lay->seams.size, "csv");
    }
    if (o->version >= 12) { /* each record read back from the bytes by the notes' layout */
        bool h = o->version >= 14;
        uint64_t rs = h ? 66 : 63;
        assert_int_equal(lay->slot_rays.size, 4 + 2 * rs);
        put(&t, "index,%s,v0,v1,v2,bary0,bary1,distance,ox,oy,oz,px,py,pz,qx,qy,qz,qw,%s\n",
            h ? "slot_hash" : "slot_index", h ? "pivot_hash" : "pivot_index");
        for (int r = 0; r < 2; r++) {
            const uint8_t *p = file + lay->slot_rays.pos + 4 + rs * (uint64_t)r;
            put(&t, h ? "%d,0x%08x" : "%d,%u", r, rd32(p));
            for (int k = 0; k < 3; k++)
                put(&t, ",%u", (unsigned)(p[4 + 2 * k] | p[5 + 2 * k] << 8));
            for (int k = 0; k < 13; k++)
                put(&t, ",%.9g", (double)rdf(p + 10 + 4 * k));
            if (h)
                put(&t, ",0x%08x\n", rd32(p + 62));
            else
                put(&t, ",%u\n", p[62]);
        }
        ex_text(l, "/geom/slot_rays.csv", &t, lay->slot_rays.pos, lay->slot_rays.size, "csv");
    }
    put(&t, "index,hash,name\n");
    for (int i = 0; i < FXGEOM_HASHES; i++) {
        put(&t, "%d,0x%08x,", i, lay->hash[i]);
        if (names && names[i])
            put_csv_name(&t, names[i]);
        put(&t, "\n");
    }
    ex_text(l, "/geom/bones.csv", &t, lay->bones.pos, lay->bones.size, "csv");
    if (o->version >= 15) {
        put(&t, "index,state,start_index,min_vertex_index,vertex_count,primitive_count\n");
        for (int i = 0; i < 2; i++)
            put(&t, "%d,0x%08x,%u,%u,%u,%u\n", i, fxgeom_states[i][0], fxgeom_states[i][1], fxgeom_states[i][2],
                fxgeom_states[i][3], fxgeom_states[i][4]);
        ex_text(l, "/geom/geometry_states.csv", &t, lay->states.pos, lay->states.size, "csv");
    }
    put(&t, "index,type,group,instance\n");
    for (int i = 0; i < FXGEOM_TGIS; i++)
        put(&t, "%d,0x%08x,0x%08x,0x%016llx\n", i, fxgeom_tgi[i][0], fxgeom_tgi[i][1],
            (unsigned long long)fxgeom_tgi_instance[i]);
    ex_text(l, "/geom/tgis.csv", &t, lay->tgis.pos, lay->tgis.size, "csv");
}

void ex_geom(struct expect_list *l, const uint8_t *file, size_t size, const struct fxgeom_opts *o,
             const struct fxgeom_layout *lay, const char *const *names)
{
    ex_dir(l, "/", 0, size, NULL);
    ex_info(l, "geom");
    ex_dir(l, "/unparsed", 0, size, "unparsed"); /* empty: every byte is in a named structure */
    ex_rcol(l, file, lay);
    uint64_t g = lay->geom_pos;
    ex_dir(l, "/geom", g, lay->geom_size, "geom");
    ex_val(l, "/geom/tag", g, 4, "bytes", "GEOM\n");
    ex_val(l, "/geom/version", g + 4, 4, "u32", "%u\n", o->version);
    ex_val(l, "/geom/tgi_offset", g + 8, 4, "u32", "%llu\n", (unsigned long long)(lay->tgis.pos - g - 12));
    ex_val(l, "/geom/tgi_size", g + 12, 4, "u32", "%d\n", 4 + 16 * FXGEOM_TGIS);
    ex_val(l, "/geom/shader", g + 16, 4, "u32", "0x%08x\n", o->no_material ? 0 : fxc_hash("simskin"));
    if (!o->no_material) {
        ex_plain(l, "/geom/shader_name", "string", "simskin\n");
        ex_material(l, file, lay);
    }
    ex_val(l, "/geom/merge_group", lay->fields_pos, 4, "u32", "0\n");
    ex_val(l, "/geom/sort_order", lay->fields_pos + 4, 4, "u32", "0\n");
    ex_val(l, "/geom/vertex_count", lay->fields_pos + 8, 4, "u32", "%d\n", FXGEOM_VERTS);
    ex_val(l, "/geom/declaration_count", lay->fields_pos + 12, 4, "u32", "%u\n", lay->ndecls);
    ex_vertices(l, file, o, lay);
    ex_indices(l, file, o, lay);
    ex_tail(l, file, o, lay, names);
    /* the exports: their container magic and OBJ header here; test_geom reads them back */
    ex_prefix(l, "/mesh.glb", EX_GLB_MAGIC, 8, "glb.mesh");
    const char *obj = "# s3rigfs: 6 vertices, ";
    ex_prefix(l, "/mesh.obj", obj, strlen(obj), "obj.mesh");
}
