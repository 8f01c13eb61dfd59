#include "fs/export/glb.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs/core/sbuf.h"
#include "parse/base/err.h"

#define GLB_MAX_ATTRS 8

struct gname {
    char *s; /* NULL: no name */
    size_t len;
};

struct gnode {
    struct gname name;
    bool has_t, has_r, has_s, has_m;
    float t[3], r[4], s[3], m[16];
    int *child;
    size_t nchild, capchild;
    int mesh, skin;
};

struct gprim {
    int indices, material;
    struct {
        char semantic[16];
        int accessor;
    } attr[GLB_MAX_ATTRS];
    int nattr;
};

struct gmesh {
    struct gname name;
    struct gprim *prim;
    size_t nprim, capprim;
};

struct gaccessor {
    int view;
    size_t off;
    enum glb_ctype ctype;
    uint32_t count;
    int ncomp;
    bool minmax, normalized;
    double min[16], max[16];
};

struct gview {
    size_t off, len;
    enum glb_target target;
};

struct gskin {
    struct gname name;
    int *joints;
    uint32_t njoints;
    int ibm, skeleton;
};

struct gsampler {
    int input, output;
    enum glb_interp interp;
};

struct gchannel {
    int sampler, node;
    enum glb_path path;
};

struct ganim {
    struct gname name;
    struct gsampler *sampler;
    size_t nsampler, capsampler;
    struct gchannel *channel;
    size_t nchannel, capchannel;
};

struct glb {
    struct sbuf bin;
    struct ganim *anim;
    size_t nanim, capanim;
    struct gnode *node;
    size_t nnode, capnode;
    struct gmesh *mesh;
    size_t nmesh, capmesh;
    struct gaccessor *acc;
    size_t nacc, capacc;
    struct gview *view;
    size_t nview, capview;
    struct gskin *skin;
    size_t nskin, capskin;
    struct gname *mat;
    size_t nmat, capmat;
    int *roots;
    size_t nroots, caproots;
    bool oom, bad_number;
};

/* Makes room for one more element; false (and the builder marked) when out of memory. */
static bool grow(struct glb *g, void **arr, size_t n, size_t *cap, size_t elem)
{
    if (g->oom)
        return false;
    if (n < *cap)
        return true;
    size_t c = *cap ? *cap * 2 : 8;
    void *p = realloc(*arr, c * elem);
    if (!p) {
        g->oom = true;
        return false;
    }
    *arr = p;
    *cap = c;
    return true;
}

#define GROW(g, arr, n, cap) grow((g), (void **)&(arr), (n), &(cap), sizeof *(arr))

static struct gname name_copy(struct glb *g, const char *s, size_t len)
{
    struct gname n = {NULL, 0};
    if (!s)
        return n;
    n.s = alloc_array(len, 1);
    if (!n.s) {
        g->oom = true;
        return n;
    }
    memcpy(n.s, s, len);
    n.len = len;
    return n;
}

struct glb *glb_new(void)
{
    return calloc(1, sizeof(struct glb));
}

struct glb *glb_new_measure(void)
{
    struct glb *g = glb_new();
    if (g)
        g->bin.measure = 1;
    return g;
}

void glb_free(struct glb *g)
{
    if (!g)
        return;
    sb_free(&g->bin);
    for (size_t i = 0; i < g->nnode; i++) {
        free(g->node[i].name.s);
        free(g->node[i].child);
    }
    for (size_t i = 0; i < g->nmesh; i++) {
        free(g->mesh[i].name.s);
        free(g->mesh[i].prim);
    }
    for (size_t i = 0; i < g->nskin; i++) {
        free(g->skin[i].name.s);
        free(g->skin[i].joints);
    }
    for (size_t i = 0; i < g->nmat; i++)
        free(g->mat[i].s);
    for (size_t i = 0; i < g->nanim; i++) {
        free(g->anim[i].name.s);
        free(g->anim[i].sampler);
        free(g->anim[i].channel);
    }
    free(g->anim);
    free(g->node);
    free(g->mesh);
    free(g->acc);
    free(g->view);
    free(g->skin);
    free(g->mat);
    free(g->roots);
    free(g);
}

int glb_view(struct glb *g, const void *data, size_t len, enum glb_target target)
{
    if (!GROW(g, g->view, g->nview, g->capview))
        return -1;
    static const uint8_t zero[4];
    sb_put(&g->bin, zero, (4 - g->bin.len % 4) % 4);
    size_t off = g->bin.len;
    sb_put(&g->bin, data, len);
    if (g->bin.oom) {
        g->oom = true;
        return -1;
    }
    g->view[g->nview] = (struct gview){off, len, target};
    return (int)g->nview++;
}

int glb_accessor(struct glb *g, int view, size_t byte_off, enum glb_ctype ctype, uint32_t count, int ncomp,
                 const double *min, const double *max)
{
    if (!GROW(g, g->acc, g->nacc, g->capacc))
        return -1;
    struct gaccessor *a = &g->acc[g->nacc];
    *a = (struct gaccessor){.view = view, .off = byte_off, .ctype = ctype, .count = count, .ncomp = ncomp};
    if (min && max && ncomp <= 16) {
        a->minmax = true;
        memcpy(a->min, min, (size_t)ncomp * sizeof *min);
        memcpy(a->max, max, (size_t)ncomp * sizeof *max);
    }
    return (int)g->nacc++;
}

void glb_accessor_normalized(struct glb *g, int accessor)
{
    if (accessor >= 0 && (size_t)accessor < g->nacc)
        g->acc[accessor].normalized = true;
}

int glb_floats(struct glb *g, const float *f, uint32_t count, int ncomp, enum glb_target target, bool minmax)
{
    double min[16], max[16];
    for (int c = 0; c < ncomp && c < 16; c++) {
        min[c] = INFINITY;
        max[c] = -INFINITY;
    }
    for (uint64_t i = 0; i < (uint64_t)count * (uint64_t)ncomp; i++) {
        if (!isfinite(f[i]))
            g->bad_number = true;
        int c = (int)(i % (uint64_t)ncomp);
        if (c < 16 && f[i] < min[c])
            min[c] = f[i];
        if (c < 16 && f[i] > max[c])
            max[c] = f[i];
    }
    int view = glb_view(g, f, (size_t)count * (size_t)ncomp * sizeof *f, target);
    if (view < 0)
        return -1;
    return glb_accessor(g, view, 0, GLB_F32, count, ncomp, minmax && count ? min : NULL, max);
}

int glb_node(struct glb *g, const char *name, size_t name_len)
{
    if (!GROW(g, g->node, g->nnode, g->capnode))
        return -1;
    g->node[g->nnode] = (struct gnode){.name = name_copy(g, name, name_len), .mesh = -1, .skin = -1};
    return (int)g->nnode++;
}

uint32_t glb_node_count(const struct glb *g)
{
    return (uint32_t)g->nnode;
}

static struct gnode *node_at(struct glb *g, int node)
{
    return node >= 0 && (size_t)node < g->nnode ? &g->node[node] : NULL;
}

static void check_finite(struct glb *g, const float *f, int n)
{
    for (int i = 0; i < n; i++)
        if (!isfinite(f[i]))
            g->bad_number = true;
}

void glb_node_trs(struct glb *g, int node, const float t[3], const float r[4], const float s[3])
{
    struct gnode *n = node_at(g, node);
    if (!n)
        return;
    if ((n->has_t = t != NULL)) {
        memcpy(n->t, t, sizeof n->t);
        check_finite(g, t, 3);
    }
    if ((n->has_r = r != NULL)) {
        memcpy(n->r, r, sizeof n->r);
        check_finite(g, r, 4);
    }
    if ((n->has_s = s != NULL)) {
        memcpy(n->s, s, sizeof n->s);
        check_finite(g, s, 3);
    }
}

void glb_node_matrix(struct glb *g, int node, const float m[16])
{
    struct gnode *n = node_at(g, node);
    if (!n)
        return;
    n->has_m = true;
    n->has_t = n->has_r = n->has_s = false;
    memcpy(n->m, m, sizeof n->m);
    check_finite(g, m, 16);
}

void glb_node_child(struct glb *g, int parent, int child)
{
    struct gnode *n = node_at(g, parent);
    if (!n || !GROW(g, n->child, n->nchild, n->capchild))
        return;
    n->child[n->nchild++] = child;
}

void glb_node_mesh(struct glb *g, int node, int mesh, int skin)
{
    struct gnode *n = node_at(g, node);
    if (n) {
        n->mesh = mesh;
        n->skin = skin;
    }
}

void glb_scene_root(struct glb *g, int node)
{
    if (GROW(g, g->roots, g->nroots, g->caproots))
        g->roots[g->nroots++] = node;
}

int glb_mesh(struct glb *g, const char *name, size_t name_len)
{
    if (!GROW(g, g->mesh, g->nmesh, g->capmesh))
        return -1;
    g->mesh[g->nmesh] = (struct gmesh){.name = name_copy(g, name, name_len)};
    return (int)g->nmesh++;
}

int glb_primitive(struct glb *g, int mesh, int indices, int material)
{
    if (mesh < 0 || (size_t)mesh >= g->nmesh)
        return -1;
    struct gmesh *m = &g->mesh[mesh];
    if (!GROW(g, m->prim, m->nprim, m->capprim))
        return -1;
    m->prim[m->nprim] = (struct gprim){.indices = indices, .material = material};
    return (int)m->nprim++;
}

void glb_attribute(struct glb *g, int mesh, int prim, const char *semantic, int accessor)
{
    if (mesh < 0 || (size_t)mesh >= g->nmesh || prim < 0 || (size_t)prim >= g->mesh[mesh].nprim)
        return;
    struct gprim *p = &g->mesh[mesh].prim[prim];
    if (p->nattr == GLB_MAX_ATTRS)
        return;
    snprintf(p->attr[p->nattr].semantic, sizeof p->attr[0].semantic, "%s", semantic);
    p->attr[p->nattr++].accessor = accessor;
}

int glb_material(struct glb *g, const char *name, size_t name_len)
{
    if (!GROW(g, g->mat, g->nmat, g->capmat))
        return -1;
    g->mat[g->nmat] = name_copy(g, name, name_len);
    return (int)g->nmat++;
}

int glb_skin(struct glb *g, const int *joints, uint32_t njoints, int ibm, int skeleton, const char *name,
             size_t name_len)
{
    if (!GROW(g, g->skin, g->nskin, g->capskin))
        return -1;
    int *j = alloc_array(njoints, sizeof *j);
    if (!j) {
        g->oom = true;
        return -1;
    }
    memcpy(j, joints, njoints * sizeof *j);
    g->skin[g->nskin] = (struct gskin){name_copy(g, name, name_len), j, njoints, ibm, skeleton};
    return (int)g->nskin++;
}

int glb_animation(struct glb *g, const char *name, size_t name_len)
{
    if (!GROW(g, g->anim, g->nanim, g->capanim))
        return -1;
    g->anim[g->nanim] = (struct ganim){.name = name_copy(g, name, name_len)};
    return (int)g->nanim++;
}

static struct ganim *anim_at(struct glb *g, int anim)
{
    return anim >= 0 && (size_t)anim < g->nanim ? &g->anim[anim] : NULL;
}

int glb_sampler(struct glb *g, int anim, int input, int output, enum glb_interp interp)
{
    struct ganim *a = anim_at(g, anim);
    if (!a || !GROW(g, a->sampler, a->nsampler, a->capsampler))
        return -1;
    a->sampler[a->nsampler] = (struct gsampler){input, output, interp};
    return (int)a->nsampler++;
}

void glb_channel(struct glb *g, int anim, int sampler, int node, enum glb_path path)
{
    struct ganim *a = anim_at(g, anim);
    if (a && GROW(g, a->channel, a->nchannel, a->capchannel))
        a->channel[a->nchannel++] = (struct gchannel){sampler, node, path};
}

/* ---- JSON ---- */

/* Length of the valid UTF-8 sequence at s (at most n bytes), or 0 when invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t len;
    unsigned min;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        len = 2, min = 0x80;
    else if (c >= 0xE0 && c <= 0xEF)
        len = 3, min = 0x800;
    else if (c >= 0xF0 && c <= 0xF4)
        len = 4, min = 0x10000;
    else
        return 0;
    if (n < len)
        return 0;
    unsigned cp = c & (0x7F >> len);
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return len;
}

static void json_string(struct sbuf *b, const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    sb_put(b, "\"", 1);
    for (size_t i = 0; i < n;) {
        unsigned char c = s[i];
        if (c == '"' || c == '\\') {
            sb_put(b, "\\", 1);
            sb_put(b, &s[i++], 1);
        } else if (c < 0x20) {
            sb_printf(b, "\\u%04x", c);
            i++;
        } else {
            size_t k = utf8_len(s + i, n - i);
            if (k == 0) {
                sb_put(b, "\xEF\xBF\xBD", 3); /* U+FFFD for a byte that is not UTF-8 */
                i++;
            } else {
                sb_put(b, s + i, k);
                i += k;
            }
        }
    }
    sb_put(b, "\"", 1);
}

static void json_name(struct sbuf *b, const struct gname *n)
{
    if (!n->s)
        return;
    sb_put(b, "\"name\":", 7);
    json_string(b, n->s, n->len);
    sb_put(b, ",", 1);
}

/* %.9g gives back the same float; the JSON reader's double rounds to it. */
static void json_floats(struct sbuf *b, const char *key, const float *f, int n)
{
    sb_printf(b, "\"%s\":[", key);
    for (int i = 0; i < n; i++)
        sb_printf(b, "%s%.9g", i ? "," : "", (double)(f[i] == 0 ? 0.0f : f[i]));
    sb_put(b, "],", 2);
}

/* Bounds are compared with the data's own values: %.17g holds a float's exact double. */
static void json_doubles(struct sbuf *b, const char *key, const double *d, int n)
{
    sb_printf(b, "\"%s\":[", key);
    for (int i = 0; i < n; i++)
        sb_printf(b, "%s%.17g", i ? "," : "", d[i] == 0 ? 0.0 : d[i]);
    sb_put(b, "],", 2);
}

static void json_ints(struct sbuf *b, const char *key, const int *v, size_t n)
{
    sb_printf(b, "\"%s\":[", key);
    for (size_t i = 0; i < n; i++)
        sb_printf(b, "%s%d", i ? "," : "", v[i]);
    sb_put(b, "],", 2);
}

/* Opens object i of an array ("," before every one but the first) with its name. */
static void json_open_named(struct sbuf *b, size_t i, const struct gname *name)
{
    sb_put(b, i ? ",{" : "{", i ? 2 : 1);
    json_name(b, name);
}

/* Drops the trailing comma of an object's last member before closing it. */
static void close_obj(struct sbuf *b, char c)
{
    if (b->len && b->p[b->len - 1] == ',')
        b->len--;
    sb_put(b, &c, 1);
}

static void json_nodes(struct glb *g, struct sbuf *b)
{
    sb_put(b, "\"nodes\":[", 9);
    for (size_t i = 0; i < g->nnode; i++) {
        const struct gnode *n = &g->node[i];
        json_open_named(b, i, &n->name);
        if (n->nchild)
            json_ints(b, "children", n->child, n->nchild);
        if (n->has_m)
            json_floats(b, "matrix", n->m, 16);
        if (n->has_t)
            json_floats(b, "translation", n->t, 3);
        if (n->has_r)
            json_floats(b, "rotation", n->r, 4);
        if (n->has_s)
            json_floats(b, "scale", n->s, 3);
        if (n->mesh >= 0)
            sb_printf(b, "\"mesh\":%d,", n->mesh);
        if (n->skin >= 0)
            sb_printf(b, "\"skin\":%d,", n->skin);
        close_obj(b, '}');
    }
    sb_put(b, "],", 2);
}

static void json_meshes(struct glb *g, struct sbuf *b)
{
    sb_put(b, "\"meshes\":[", 10);
    for (size_t i = 0; i < g->nmesh; i++) {
        const struct gmesh *m = &g->mesh[i];
        json_open_named(b, i, &m->name);
        sb_put(b, "\"primitives\":[", 14);
        for (size_t k = 0; k < m->nprim; k++) {
            const struct gprim *p = &m->prim[k];
            sb_put(b, k ? ",{\"attributes\":{" : "{\"attributes\":{", k ? 16 : 15);
            for (int a = 0; a < p->nattr; a++)
                sb_printf(b, "%s\"%s\":%d", a ? "," : "", p->attr[a].semantic, p->attr[a].accessor);
            sb_put(b, "},", 2);
            if (p->indices >= 0)
                sb_printf(b, "\"indices\":%d,", p->indices);
            if (p->material >= 0)
                sb_printf(b, "\"material\":%d,", p->material);
            sb_put(b, "\"mode\":4}", 9);
        }
        sb_put(b, "]}", 2);
    }
    sb_put(b, "],", 2);
}

static const char *type_name(int ncomp)
{
    switch (ncomp) {
    case 1:
        return "SCALAR";
    case 2:
        return "VEC2";
    case 3:
        return "VEC3";
    case 4:
        return "VEC4";
    default:
        return "MAT4";
    }
}

static void json_accessors(struct glb *g, struct sbuf *b)
{
    sb_put(b, "\"accessors\":[", 13);
    for (size_t i = 0; i < g->nacc; i++) {
        const struct gaccessor *a = &g->acc[i];
        sb_printf(b, "%s{\"bufferView\":%d,", i ? "," : "", a->view);
        if (a->off)
            sb_printf(b, "\"byteOffset\":%zu,", a->off);
        sb_printf(b, "\"componentType\":%d,\"count\":%u,\"type\":\"%s\",", (int)a->ctype, a->count,
                  type_name(a->ncomp));
        if (a->normalized)
            sb_put(b, "\"normalized\":true,", 18);
        if (a->minmax) {
            for (int c = 0; c < a->ncomp; c++)
                if (!isfinite(a->min[c]) || !isfinite(a->max[c]))
                    g->bad_number = true;
            json_doubles(b, "min", a->min, a->ncomp);
            json_doubles(b, "max", a->max, a->ncomp);
        }
        close_obj(b, '}');
    }
    sb_put(b, "],", 2);
}

static void json_views(struct glb *g, struct sbuf *b)
{
    sb_put(b, "\"bufferViews\":[", 15);
    for (size_t i = 0; i < g->nview; i++) {
        const struct gview *v = &g->view[i];
        sb_printf(b, "%s{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":%zu", i ? "," : "", v->off, v->len);
        if (v->target)
            sb_printf(b, ",\"target\":%d", (int)v->target);
        sb_put(b, "}", 1);
    }
    sb_put(b, "],", 2);
}

static void json_skins(struct glb *g, struct sbuf *b)
{
    sb_put(b, "\"skins\":[", 9);
    for (size_t i = 0; i < g->nskin; i++) {
        const struct gskin *s = &g->skin[i];
        json_open_named(b, i, &s->name);
        if (s->ibm >= 0)
            sb_printf(b, "\"inverseBindMatrices\":%d,", s->ibm);
        if (s->skeleton >= 0)
            sb_printf(b, "\"skeleton\":%d,", s->skeleton);
        json_ints(b, "joints", s->joints, s->njoints);
        close_obj(b, '}');
    }
    sb_put(b, "],", 2);
}

static void json_materials(struct glb *g, struct sbuf *b)
{
    sb_put(b, "\"materials\":[", 13);
    for (size_t i = 0; i < g->nmat; i++) {
        json_open_named(b, i, &g->mat[i]);
        /* glTF's default is fully metallic, which viewers without an environment draw
         * black; the source says nothing of metalness, so a plain surface */
        sb_printf(b, "\"pbrMetallicRoughness\":{\"metallicFactor\":0}");
        close_obj(b, '}');
    }
    sb_put(b, "],", 2);
}

static void json_animations(struct glb *g, struct sbuf *b)
{
    static const char *const interp[] = {"LINEAR", "STEP", "CUBICSPLINE"};
    static const char *const path[] = {"translation", "rotation", "scale", "weights"};
    sb_put(b, "\"animations\":[", 14);
    for (size_t i = 0; i < g->nanim; i++) {
        const struct ganim *a = &g->anim[i];
        json_open_named(b, i, &a->name);
        sb_put(b, "\"channels\":[", 12);
        for (size_t k = 0; k < a->nchannel; k++)
            sb_printf(b, "%s{\"sampler\":%d,\"target\":{\"node\":%d,\"path\":\"%s\"}}", k ? "," : "",
                      a->channel[k].sampler, a->channel[k].node, path[a->channel[k].path]);
        sb_put(b, "],\"samplers\":[", 14);
        for (size_t k = 0; k < a->nsampler; k++)
            sb_printf(b, "%s{\"input\":%d,\"interpolation\":\"%s\",\"output\":%d}", k ? "," : "",
                      a->sampler[k].input, interp[a->sampler[k].interp], a->sampler[k].output);
        sb_put(b, "]}", 2);
    }
    sb_put(b, "],", 2);
}

static void json_document(struct glb *g, struct sbuf *b)
{
    sb_printf(b, "{\"asset\":{\"version\":\"2.0\",\"generator\":\"s3rigfs\"},");
    if (g->nroots) {
        sb_printf(b, "\"scene\":0,\"scenes\":[{");
        json_ints(b, "nodes", g->roots, g->nroots);
        close_obj(b, '}');
        sb_put(b, "],", 2);
    }
    if (g->nnode)
        json_nodes(g, b);
    if (g->nmesh)
        json_meshes(g, b);
    if (g->nskin)
        json_skins(g, b);
    if (g->nmat)
        json_materials(g, b);
    if (g->nanim)
        json_animations(g, b);
    if (g->nacc)
        json_accessors(g, b);
    if (g->nview)
        json_views(g, b);
    if (g->bin.len)
        sb_printf(b, "\"buffers\":[{\"byteLength\":%zu}],", g->bin.len);
    close_obj(b, '}');
}

static void put_u32le(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

enum s3_err glb_finish(struct glb *g, uint8_t **out, size_t *len, char *err, size_t errlen)
{
    if (out)
        *out = NULL;
    *len = 0;
    struct sbuf json = {0}; /* written even when measuring: small, and it reads its own tail */
    json_document(g, &json);
    if (g->oom || json.oom || g->bin.oom) {
        sb_free(&json);
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    }
    if (g->bad_number) {
        sb_free(&json);
        return s3_fail(S3_ERR_FORMAT, err, errlen,
                       "a value is not a finite number (NaN or infinity), which glTF cannot hold");
    }
    size_t jlen = (json.len + 3) & ~(size_t)3, blen = (g->bin.len + 3) & ~(size_t)3;
    uint64_t total = 12 + 8 + (uint64_t)jlen + (g->bin.len ? 8 + (uint64_t)blen : 0);
    if (total > UINT32_MAX) {
        sb_free(&json);
        return s3_fail(S3_ERR_LIMIT, err, errlen, "the file would be larger than 4 GiB, more than .glb can hold");
    }
    if (!out) { /* measured: the size alone */
        sb_free(&json);
        *len = (size_t)total;
        return S3_OK;
    }
    uint8_t *f = calloc(1, (size_t)total);
    if (!f) {
        sb_free(&json);
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    }
    memcpy(f, "glTF", 4);
    put_u32le(f + 4, 2);
    put_u32le(f + 8, (uint32_t)total);
    put_u32le(f + 12, (uint32_t)jlen);
    memcpy(f + 16, "JSON", 4);
    memcpy(f + 20, json.p, json.len);
    memset(f + 20 + json.len, ' ', jlen - json.len); /* the JSON chunk pads with spaces */
    if (g->bin.len) {
        uint8_t *c = f + 20 + jlen;
        put_u32le(c, (uint32_t)blen);
        memcpy(c + 4, "BIN\0", 4);
        memcpy(c + 8, g->bin.p, g->bin.len); /* zero padding from calloc */
    }
    sb_free(&json);
    *out = f;
    *len = (size_t)total;
    return S3_OK;
}
