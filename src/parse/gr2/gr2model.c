#include "parse/gr2/gr2model.h"
#include "parse/base/diag.h"
#include "parse/base/err.h"
#include "parse/gr2/gr2std.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Transform flags (docs/formats/gr2.md): a component whose flag is clear is identity. */
enum { HAS_POSITION = 1, HAS_ORIENTATION = 2, HAS_SCALE_SHEAR = 4 };

/* A member by name (or, in a type whose names are remapped, by its place in the standard
 * types), of the member type wanted. */
static const struct gr2_member *find_of(const struct gr2_type *t, const char *name, uint32_t type)
{
    const struct gr2_member *m = gr2_std_find(t, GR2_STD_ANY, name);
    return m && m->type == type ? m : NULL;
}

bool gr2_is_skeleton(const struct gr2_type *t)
{
    return t && t->ok && find_of(t, "Bones", GR2_REF_TO_ARRAY);
}

bool gr2_is_model(const struct gr2_type *t)
{
    return t && t->ok && find_of(t, "MeshBindings", GR2_REF_TO_ARRAY);
}

bool gr2_is_mesh(const struct gr2_type *t)
{
    return t && t->ok && find_of(t, "PrimaryVertexData", GR2_REFERENCE) && find_of(t, "PrimaryTopology", GR2_REFERENCE);
}

void gr2_names_free(char **names, uint32_t n)
{
    for (uint32_t i = 0; names && i < n; i++)
        free(names[i]);
    free(names);
}

static float f32_at(const struct gr2_space *sp, const uint8_t *p)
{
    uint32_t u = gr2_u32_at(sp, p);
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* The typed struct a Reference member points to: 1, 0 when NULL (or absent), -1 error. */
static int follow(struct gr2_types *reg, const struct gr2_space *sp, const struct gr2_type *t, struct gr2_ref obj,
                  const char *name, const struct gr2_type **to_type, struct gr2_ref *to, const char **why)
{
    const struct gr2_member *m = find_of(t, name, GR2_REFERENCE);
    if (!m)
        return 0;
    int rc = gr2_pointer(sp, obj.section, obj.offset + m->offset, to, why);
    if (rc != 1)
        return rc;
    if (!m->has_ref_type) {
        *why = "untyped reference";
        return -1;
    }
    *to_type = gr2_type_get(reg, sp, m->ref_type);
    if (!*to_type || !(*to_type)->ok) {
        *why = *to_type ? (*to_type)->err : "out of memory";
        return -1;
    }
    if (!gr2_bytes(sp, to->section, to->offset, (*to_type)->size, why))
        return -1;
    return 1;
}

struct array {
    const struct gr2_type *type;
    struct gr2_ref items;
    uint32_t count;
};

/* A ReferenceToArray member's elements (count 0 when absent or NULL): 0, or -1 (why). */
static int array_of(struct gr2_types *reg, const struct gr2_space *sp, const struct gr2_type *t, struct gr2_ref obj,
                    const char *name, struct array *a, const char **why)
{
    memset(a, 0, sizeof *a);
    const struct gr2_member *m = find_of(t, name, GR2_REF_TO_ARRAY);
    if (!m)
        return 0;
    const uint8_t *b = gr2_bytes(sp, obj.section, obj.offset + m->offset, 4, why);
    if (!b)
        return -1;
    uint32_t count = gr2_u32_at(sp, b);
    int rc = gr2_pointer(sp, obj.section, obj.offset + m->offset + 4, &a->items, why);
    if (rc < 0)
        return -1;
    if (rc == 0 || count == 0)
        return 0;
    if (!m->has_ref_type) {
        *why = "array of untyped elements";
        return -1;
    }
    a->type = gr2_type_get(reg, sp, m->ref_type);
    if (!a->type || !a->type->ok) {
        *why = a->type ? a->type->err : "out of memory";
        return -1;
    }
    if (a->type->size == 0) {
        *why = "array of zero-sized elements";
        return -1;
    }
    if (!gr2_bytes(sp, a->items.section, a->items.offset, (uint64_t)count * a->type->size, why))
        return -1;
    a->count = count;
    return 0;
}

static struct gr2_ref elem_at(const struct array *a, uint32_t i)
{
    return (struct gr2_ref){a->items.section, a->items.offset + i * a->type->size};
}

/* A String member, copied (NULL when absent or NULL): 0, or -1 (why). */
/* A String member, copied (NULL when absent or NULL); a remapped string is its CRC as the
 * tree shows it, "crc:0x%08x", so names still match each other. 0, or -1 (why). */
static int string_of(const struct gr2_space *sp, const struct gr2_type *t, struct gr2_ref obj, const char *name,
                     char **out, size_t *len, const char **why)
{
    *out = NULL;
    *len = 0;
    const struct gr2_member *m = find_of(t, name, GR2_STRING);
    if (!m)
        return 0;
    struct gr2_str str;
    gr2_string_slot(sp, obj.section, obj.offset + m->offset, &str);
    if (str.kind == GR2_STR_ERROR) {
        *why = str.why;
        return -1;
    }
    if (str.kind == GR2_STR_NULL)
        return 0;
    char crc[24];
    if (str.kind == GR2_STR_CRC) {
        snprintf(crc, sizeof crc, "crc:0x%08" PRIx32, str.crc);
        str.text = crc;
        str.len = strlen(crc);
    }
    *out = malloc(str.len + 1);
    if (!*out) {
        *why = "out of memory";
        return -1;
    }
    memcpy(*out, str.text, str.len);
    (*out)[str.len] = 0;
    *len = str.len;
    return 0;
}

static bool int32_of(const struct gr2_space *sp, const struct gr2_type *t, struct gr2_ref obj, const char *name,
                     int32_t *v)
{
    const struct gr2_member *m = gr2_std_find(t, GR2_STD_ANY, name);
    const char *why;
    const uint8_t *b;
    if (!m || (m->type != GR2_INT32 && m->type != GR2_UINT32) ||
        !(b = gr2_bytes(sp, obj.section, obj.offset + m->offset, 4, &why)))
        return false;
    *v = (int32_t)gr2_u32_at(sp, b);
    return true;
}

/* ---- transforms ---- */

struct xform {
    bool has_matrix;
    float t[3], r[4], s[3], m[16];
};

/* A 68-byte Transform: flags, position, orientation (x, y, z, w), scale/shear. A diagonal
 * scale/shear gives TRS; any other becomes a matrix T × R × SS, with SS's stored rows as
 * the matrix's columns (Granny's row-vector convention, as in its 4×4 matrices). */
static void read_transform(const struct gr2_space *sp, const uint8_t *b, struct xform *x)
{
    uint32_t flags = gr2_u32_at(sp, b);
    float f[16];
    for (int i = 0; i < 16; i++)
        f[i] = f32_at(sp, b + 4 + 4 * i);
    static const float id_r[4] = {0, 0, 0, 1}, id_ss[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    memset(x, 0, sizeof *x);
    if (flags & HAS_POSITION)
        memcpy(x->t, f, sizeof x->t);
    memcpy(x->r, flags & HAS_ORIENTATION ? f + 3 : id_r, sizeof x->r);
    const float *ss = flags & HAS_SCALE_SHEAR ? f + 7 : id_ss;
    bool diagonal = ss[1] == 0 && ss[2] == 0 && ss[3] == 0 && ss[5] == 0 && ss[6] == 0 && ss[7] == 0;
    x->s[0] = ss[0];
    x->s[1] = ss[4];
    x->s[2] = ss[8];
    if (diagonal)
        return;
    x->has_matrix = true;
    static const float zero[3] = {0, 0, 0}, one[3] = {1, 1, 1};
    float rot[16], lin[16] = {0};
    mdl_trs_matrix(zero, x->r, one, rot);
    for (int c = 0; c < 3; c++)
        for (int k = 0; k < 3; k++)
            lin[4 * c + k] = ss[3 * c + k];
    lin[15] = 1;
    mdl_mat_mul(rot, lin, x->m);
    x->m[12] = x->t[0];
    x->m[13] = x->t[1];
    x->m[14] = x->t[2];
}

static const struct gr2_member *either(const struct gr2_type *t, const char *a, const char *b, uint32_t type)
{
    const struct gr2_member *m = find_of(t, a, type);
    return m ? m : find_of(t, b, type);
}

static int read_bone(const struct gr2_space *sp, const struct gr2_type *bt, struct gr2_ref at, uint32_t i,
                     struct mdl_bone *b, char *err, size_t errlen)
{
    const char *why;
    if (string_of(sp, bt, at, "Name", &b->name, &b->name_len, &why))
        return err_set(err, errlen, "bone %" PRIu32 ": Name: %s", i, why);
    if (!int32_of(sp, bt, at, "ParentIndex", &b->parent))
        return err_set(err, errlen, "bone %" PRIu32 ": no ParentIndex member", i);
    const struct gr2_member *tm = either(bt, "Transform", "LocalTransform", GR2_TRANSFORM);
    if (!tm)
        return err_set(err, errlen, "bone %" PRIu32 ": no Transform or LocalTransform member", i);
    const struct gr2_member *im = either(bt, "InverseWorldTransform", "InverseWorld4x4", GR2_REAL32);
    if (!im || im->array_width != 16)
        return err_set(err, errlen, "bone %" PRIu32 ": no InverseWorldTransform or InverseWorld4x4 member (16 floats)",
                       i);
    const uint8_t *tb = gr2_bytes(sp, at.section, at.offset + tm->offset, GR2_TRANSFORM_SIZE, &why);
    const uint8_t *ib = tb ? gr2_bytes(sp, at.section, at.offset + im->offset, 64, &why) : NULL;
    if (!ib)
        return err_set(err, errlen, "bone %" PRIu32 ": %s", i, why);
    struct xform x;
    read_transform(sp, tb, &x);
    b->has_matrix = x.has_matrix;
    memcpy(b->t, x.t, sizeof b->t);
    memcpy(b->r, x.r, sizeof b->r);
    memcpy(b->s, x.s, sizeof b->s);
    memcpy(b->m, x.m, sizeof b->m);
    for (int k = 0; k < 16; k++) /* as stored: Granny's rows are glTF's columns */
        b->ibm[k] = f32_at(sp, ib + 4 * k);
    b->ibm[3] = b->ibm[7] = b->ibm[11] = 0; /* the last row glTF requires */
    b->ibm[15] = 1;
    return 0;
}

int gr2_skeleton_read(struct gr2_types *reg, const struct gr2_space *sp, struct gr2_ref type, struct gr2_ref obj,
                      struct mdl_skeleton *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    const struct gr2_type *t = gr2_type_get(reg, sp, type);
    const char *why;
    struct array bones;
    if (!gr2_is_skeleton(t))
        return err_set(err, errlen, "not a skeleton (no Bones array)");
    if (!gr2_bytes(sp, obj.section, obj.offset, t->size, &why) || string_of(sp, t, obj, "Name", &out->name, &out->name_len, &why) ||
        array_of(reg, sp, t, obj, "Bones", &bones, &why)) {
        mdl_skeleton_free(out);
        return err_set(err, errlen, "skeleton: %s", why);
    }
    out->bone = alloc_array(bones.count, sizeof *out->bone);
    if (!out->bone) {
        mdl_skeleton_free(out);
        return err_set(err, errlen, "out of memory");
    }
    out->nbones = bones.count;
    for (uint32_t i = 0; i < bones.count; i++)
        if (read_bone(sp, bones.type, elem_at(&bones, i), i, &out->bone[i], err, errlen)) {
            mdl_skeleton_free(out);
            return -1;
        }
    if (mdl_skeleton_check(out, err, errlen)) {
        mdl_skeleton_free(out);
        return -1;
    }
    return 0;
}

/* ---- meshes ---- */

static double half(uint16_t h)
{
    int sign = h >> 15, exp = (h >> 10) & 31, mant = h & 1023;
    double v = exp == 0 ? ldexp(mant, -24) : exp == 31 ? (mant ? NAN : INFINITY) : ldexp(mant + 1024, exp - 25);
    return sign ? -v : v;
}

/* Component k of a scalar member as a float; normalised kinds scaled to [0, 1] / [-1, 1]. */
static float component(const struct gr2_space *sp, uint32_t type, const uint8_t *p)
{
    bool be = sp->g->be;
    switch (type) {
    case GR2_REAL32:
        return f32_at(sp, p);
    case GR2_REAL16:
        return (float)half(ld_u16(p, be));
    case GR2_INT8:
        return (float)(int8_t)p[0];
    case GR2_UINT8:
        return (float)p[0];
    case GR2_NORMAL_UINT8:
        return (float)p[0] / 255.0f;
    case GR2_BINORMAL_INT8:
        return fmaxf((float)(int8_t)p[0] / 127.0f, -1.0f);
    case GR2_INT16:
        return (float)(int16_t)ld_u16(p, be);
    case GR2_UINT16:
        return (float)ld_u16(p, be);
    case GR2_NORMAL_UINT16:
        return (float)ld_u16(p, be) / 65535.0f;
    case GR2_BINORMAL_INT16:
        return fmaxf((float)(int16_t)ld_u16(p, be) / 32767.0f, -1.0f);
    case GR2_INT32:
        return (float)(int32_t)ld_u32(p, be);
    case GR2_UINT32:
        return (float)ld_u32(p, be);
    default:
        return 0;
    }
}

/* A vertex member with at least `need` components (at most `take` used): NULL when absent;
 * *bad set when present but not a usable shape. */
static const struct gr2_member *vertex_member(const struct gr2_type *vt, const char *name, int need, bool *bad)
{
    const struct gr2_member *m = gr2_find_member(vt, name);
    if (!m)
        return NULL;
    int width = m->array_width > 0 ? m->array_width : 1;
    if (!gr2_is_scalar(m->type) || width < need) {
        *bad = true;
        return NULL;
    }
    return m;
}

/* n components of member m of each vertex into out (n per vertex). */
static void gather(const struct gr2_space *sp, const uint8_t *verts, uint32_t stride, uint32_t count,
                   const struct gr2_member *m, int n, float *out)
{
    uint32_t esize = gr2_elem_size(sp, m->type);
    for (uint32_t i = 0; i < count; i++)
        for (int k = 0; k < n; k++)
            out[(size_t)i * (size_t)n + (size_t)k] = component(sp, m->type, verts + (size_t)i * stride + m->offset + (size_t)k * esize);
}

/* Unit normals for glTF; a zero or non-finite one drops them all (NORMAL is optional). */
static void normalise_normals(struct mdl_mesh *m)
{
    for (uint32_t i = 0; i < m->nverts; i++) {
        float *n = m->nrm + 3 * (size_t)i;
        double len = sqrt((double)n[0] * n[0] + (double)n[1] * n[1] + (double)n[2] * n[2]);
        if (!isfinite(len) || len < 1e-12) {
            free(m->nrm);
            m->nrm = NULL;
            return;
        }
        for (int k = 0; k < 3; k++)
            n[k] = (float)(n[k] / len);
    }
}

static int read_vertices(struct gr2_types *reg, const struct gr2_space *sp, const struct gr2_type *vdt,
                         struct gr2_ref vd, struct mdl_mesh *m, uint32_t nbindings, char *err, size_t errlen)
{
    const struct gr2_member *vm = find_of(vdt, "Vertices", GR2_REF_TO_VARIANT_ARRAY);
    if (!vm)
        return err_set(err, errlen, "the vertex data has no Vertices member");
    uint32_t p = (uint32_t)gr2_pointer_size(sp), at = vd.offset + vm->offset;
    struct gr2_ref vtype, items;
    const char *why;
    const uint8_t *b = gr2_bytes(sp, vd.section, at + p, 4, &why);
    int trc = b ? gr2_pointer(sp, vd.section, at, &vtype, &why) : -1;
    int rc = trc < 0 ? -1 : gr2_pointer(sp, vd.section, at + p + 4, &items, &why);
    if (rc < 0)
        return err_set(err, errlen, "Vertices: %s", why);
    uint32_t count = gr2_u32_at(sp, b);
    if (rc == 0 || count == 0)
        return err_set(err, errlen, "the mesh has no vertices");
    if (trc == 0)
        return err_set(err, errlen, "Vertices: no vertex type");
    const struct gr2_type *vt = gr2_type_get(reg, sp, vtype);
    if (!vt || !vt->ok)
        return err_set(err, errlen, "vertex type: %s", vt ? vt->err : "out of memory");
    const uint8_t *verts = vt->size ? gr2_bytes(sp, items.section, items.offset, (uint64_t)count * vt->size, &why) : NULL;
    if (!verts)
        return err_set(err, errlen, "Vertices: %s", vt->size ? why : "zero-sized vertices");
    bool bad = false;
    const struct gr2_member *pos = vertex_member(vt, "Position", 3, &bad);
    if (!pos)
        return err_set(err, errlen, "the vertex type has no Position member of 3 numbers");
    const struct gr2_member *nrm = vertex_member(vt, "Normal", 3, &bad);
    const struct gr2_member *uv = vertex_member(vt, "TextureCoordinates0", 2, &bad);
    const struct gr2_member *bw = vertex_member(vt, "BoneWeights", 1, &bad);
    const struct gr2_member *bi = vertex_member(vt, "BoneIndices", 1, &bad);
    if (bad)
        return err_set(err, errlen, "a vertex member (Normal, TextureCoordinates0, BoneWeights, BoneIndices) is not a list of numbers of the usual size");
    m->nverts = count;
    m->pos = malloc((size_t)count * 3 * sizeof *m->pos);
    m->nrm = nrm ? malloc((size_t)count * 3 * sizeof *m->nrm) : NULL;
    m->uv = uv ? malloc((size_t)count * 2 * sizeof *m->uv) : NULL;
    if (!m->pos || (nrm && !m->nrm) || (uv && !m->uv))
        return err_set(err, errlen, "out of memory");
    gather(sp, verts, vt->size, count, pos, 3, m->pos);
    if (nrm) {
        gather(sp, verts, vt->size, count, nrm, 3, m->nrm);
        normalise_normals(m);
    }
    if (uv)
        gather(sp, verts, vt->size, count, uv, 2, m->uv);
    if (!bi)
        return 0; /* rigid: bound as a whole to its first bone binding */
    int nb = bi->array_width > 0 ? bi->array_width : 1, nw = bw ? (bw->array_width > 0 ? bw->array_width : 1) : 0;
    nb = nb > 4 ? 4 : nb;
    nw = nw > nb ? nb : nw;
    float idx[4], w[4];
    m->joints = calloc((size_t)count * 4, sizeof *m->joints);
    m->weights = calloc((size_t)count * 4, sizeof *m->weights);
    if (!m->joints || !m->weights)
        return err_set(err, errlen, "out of memory");
    uint32_t bsize = gr2_elem_size(sp, bi->type), wsize = bw ? gr2_elem_size(sp, bw->type) : 0;
    for (uint32_t i = 0; i < count; i++) {
        const uint8_t *v = verts + (size_t)i * vt->size;
        double sum = 0;
        for (int k = 0; k < 4; k++) {
            idx[k] = k < nb ? component(sp, bi->type, v + bi->offset + (size_t)k * bsize) : 0;
            w[k] = k < nw ? component(sp, bw->type, v + bw->offset + (size_t)k * wsize) : 0;
            if (!bw)
                w[k] = k == 0; /* indices without weights: all on the first */
            if (!(w[k] >= 0) || !isfinite(w[k]))
                return err_set(err, errlen, "vertex %" PRIu32 ": a bone weight is negative or not a number", i);
            sum += w[k];
        }
        if (sum <= 0) { /* no weight at all: held by its first bone */
            w[0] = 1;
            sum = 1;
        }
        for (int k = 0; k < 4; k++) {
            if (w[k] > 0 && !(idx[k] >= 0 && idx[k] < (float)nbindings && idx[k] <= (float)UINT16_MAX))
                return err_set(err, errlen, "vertex %" PRIu32 ": bone index %.0f is past the mesh's %" PRIu32 " bone bindings",
                               i, (double)idx[k], nbindings);
            m->joints[4 * (size_t)i + (size_t)k] = w[k] > 0 ? (uint16_t)idx[k] : 0;
            m->weights[4 * (size_t)i + (size_t)k] = (float)(w[k] / sum);
        }
    }
    return 0;
}

/* A ReferenceToArray of one-member structs holding integers (Indices, Indices16). */
static int read_indices(struct gr2_types *reg, const struct gr2_space *sp, const struct gr2_type *tt, struct gr2_ref top,
                        const char *name, struct mdl_mesh *m, char *err, size_t errlen)
{
    struct array a;
    const char *why;
    if (array_of(reg, sp, tt, top, name, &a, &why))
        return err_set(err, errlen, "%s: %s", name, why);
    if (a.count == 0)
        return 0;
    if (a.type->nmembers < 1 || !(a.type->m[0].type == GR2_INT32 || a.type->m[0].type == GR2_UINT32 ||
                                  a.type->m[0].type == GR2_UINT16 || a.type->m[0].type == GR2_INT16))
        return err_set(err, errlen, "%s: elements are not integers", name);
    if (a.count % 3)
        return err_set(err, errlen, "%s: %" PRIu32 " indices, not whole triangles", name, a.count);
    m->index = malloc((size_t)a.count * sizeof *m->index);
    if (!m->index)
        return err_set(err, errlen, "out of memory");
    bool wide = a.type->m[0].type == GR2_INT32 || a.type->m[0].type == GR2_UINT32;
    for (uint32_t i = 0; i < a.count; i++) {
        const uint8_t *p = sp->data[a.items.section] + a.items.offset + (size_t)i * a.type->size;
        m->index[i] = wide ? gr2_u32_at(sp, p) : ld_u16(p, sp->g->be);
    }
    m->ntris = a.count / 3;
    m->index16 = !wide;
    return 0;
}

static int read_topology(struct gr2_types *reg, const struct gr2_space *sp, const struct gr2_type *tt,
                         struct gr2_ref top, struct mdl_mesh *m, char *err, size_t errlen)
{
    if (read_indices(reg, sp, tt, top, "Indices", m, err, errlen))
        return -1;
    if (!m->index && read_indices(reg, sp, tt, top, "Indices16", m, err, errlen))
        return -1;
    if (!m->index)
        return err_set(err, errlen, "the topology has no Indices or Indices16");
    struct array g;
    const char *why;
    if (array_of(reg, sp, tt, top, "Groups", &g, &why))
        return err_set(err, errlen, "Groups: %s", why);
    if (g.count == 0)
        return 0;
    m->group = calloc(g.count, sizeof *m->group);
    if (!m->group)
        return err_set(err, errlen, "out of memory");
    m->ngroups = g.count;
    for (uint32_t i = 0; i < g.count; i++) {
        int32_t mat = -1, first = 0, n = 0;
        struct gr2_ref at = elem_at(&g, i);
        if (!int32_of(sp, g.type, at, "TriFirst", &first) || !int32_of(sp, g.type, at, "TriCount", &n))
            return err_set(err, errlen, "group %" PRIu32 ": no TriFirst or TriCount", i);
        (void)int32_of(sp, g.type, at, "MaterialIndex", &mat);
        if (first < 0 || n < 0)
            return err_set(err, errlen, "group %" PRIu32 ": negative triangle range", i);
        m->group[i] = (struct mdl_group){mat, (uint32_t)first, (uint32_t)n};
    }
    return 0;
}

/* Names of the structs an array's elements refer to through `ref` (MaterialBindings →
 * Material → Name), or the array elements' own String `field` (BoneBindings → BoneName). */
static int read_names(struct gr2_types *reg, const struct gr2_space *sp, const struct gr2_type *t, struct gr2_ref obj,
                      const char *array, const char *ref, const char *field, char ***names, uint32_t *n,
                      char *err, size_t errlen)
{
    struct array a;
    const char *why;
    *names = NULL;
    *n = 0;
    if (array_of(reg, sp, t, obj, array, &a, &why))
        return err_set(err, errlen, "%s: %s", array, why);
    if (a.count == 0)
        return 0;
    *names = calloc(a.count, sizeof **names);
    if (!*names)
        return err_set(err, errlen, "out of memory");
    *n = a.count;
    for (uint32_t i = 0; i < a.count; i++) {
        const struct gr2_type *et = a.type, *to = NULL; /* set by follow when it returns 1 */
        struct gr2_ref at = elem_at(&a, i), target;
        size_t len;
        if (ref) {
            int rc = follow(reg, sp, a.type, at, ref, &to, &target, &why);
            if (rc < 0)
                return err_set(err, errlen, "%s %" PRIu32 ": %s", array, i, why);
            if (rc == 0)
                continue;
            et = to;
            at = target;
        }
        if (string_of(sp, et, at, field, &(*names)[i], &len, &why))
            return err_set(err, errlen, "%s %" PRIu32 ": %s", array, i, why);
    }
    return 0;
}

int gr2_mesh_read(struct gr2_types *reg, const struct gr2_space *sp, struct gr2_ref type, struct gr2_ref obj,
                  struct mdl_mesh *out, char ***bindings, uint32_t *nbindings, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    *bindings = NULL;
    *nbindings = 0;
    const struct gr2_type *t = gr2_type_get(reg, sp, type), *vdt, *tt;
    const char *why = "";
    struct gr2_ref vd, top;
    int rc = -1;
    if (!gr2_is_mesh(t)) {
        err_set(err, errlen, "not a mesh (no PrimaryVertexData and PrimaryTopology)");
        goto out;
    }
    if (!gr2_bytes(sp, obj.section, obj.offset, t->size, &why) || string_of(sp, t, obj, "Name", &out->name, &out->name_len, &why)) {
        err_set(err, errlen, "mesh: %s", why);
        goto out;
    }
    if (read_names(reg, sp, t, obj, "BoneBindings", NULL, "BoneName", bindings, nbindings, err, errlen) ||
        read_names(reg, sp, t, obj, "MaterialBindings", "Material", "Name", &out->material, &out->nmaterials, err, errlen))
        goto out;
    int vrc = follow(reg, sp, t, obj, "PrimaryVertexData", &vdt, &vd, &why);
    if (vrc <= 0) {
        err_set(err, errlen, "PrimaryVertexData: %s", vrc ? why : "none");
        goto out;
    }
    int trc = follow(reg, sp, t, obj, "PrimaryTopology", &tt, &top, &why);
    if (trc <= 0) {
        err_set(err, errlen, "PrimaryTopology: %s", trc ? why : "none");
        goto out;
    }
    if (read_vertices(reg, sp, vdt, vd, out, *nbindings, err, errlen) || read_topology(reg, sp, tt, top, out, err, errlen))
        goto out;
    rc = mdl_mesh_check(out, UINT16_MAX + 1u, err, errlen) == S3_OK ? 0 : -1;
out:
    if (rc) {
        mdl_mesh_free(out);
        gr2_names_free(*bindings, *nbindings);
        *bindings = NULL;
        *nbindings = 0;
    }
    return rc;
}

/* ---- models ---- */

struct by_name {
    const char *name;
    uint32_t index;
};

static int cmp_name_only(const void *a, const void *b)
{
    return strcmp(((const struct by_name *)a)->name, ((const struct by_name *)b)->name);
}

static int cmp_by_name(const void *a, const void *b)
{
    int c = cmp_name_only(a, b);
    uint32_t x = ((const struct by_name *)a)->index, y = ((const struct by_name *)b)->index;
    return c ? c : (x > y) - (x < y);
}

/* Bone-binding indices become skeleton bone indices (by name); a weight split over two
 * slots naming one bone is merged, and unused slots point at bone 0 with weight 0. */
static int map_joints(struct mdl_mesh *m, char **bindings, uint32_t nbindings, const struct mdl_skeleton *s,
                      char *err, size_t errlen)
{
    if (nbindings == 0 || s->nbones == 0) { /* nothing to bind to: a static mesh */
        free(m->joints);
        free(m->weights);
        m->joints = NULL;
        m->weights = NULL;
        return 0;
    }
    uint16_t *map = malloc(nbindings * sizeof *map);
    struct by_name *sorted = malloc(s->nbones * sizeof *sorted);
    if (!map || !sorted) {
        free(map);
        free(sorted);
        return err_set(err, errlen, "out of memory");
    }
    /* bone names sorted (ties by index), so each binding is one binary search: a
     * file may hold many bindings and many bones */
    for (uint32_t k = 0; k < s->nbones; k++)
        sorted[k] = (struct by_name){s->bone[k].name ? s->bone[k].name : "", k};
    qsort(sorted, s->nbones, sizeof *sorted, cmp_by_name);
    for (uint32_t b = 0; b < nbindings; b++) {
        struct by_name key = {bindings[b] ? bindings[b] : "", 0};
        const struct by_name *hit = bindings[b] ? bsearch(&key, sorted, s->nbones, sizeof *sorted, cmp_name_only) : NULL;
        while (hit && hit > sorted && strcmp(hit[-1].name, key.name) == 0)
            hit--; /* the first bone of that name */
        if (!hit || hit->index > UINT16_MAX) {
            free(map);
            free(sorted);
            return err_set(err, errlen, "bone binding %" PRIu32 " '%s' is not a bone of the skeleton", b, key.name);
        }
        map[b] = (uint16_t)hit->index;
    }
    free(sorted);
    if (!m->joints) { /* rigid: every vertex on the first binding's bone */
        m->joints = calloc((size_t)m->nverts * 4, sizeof *m->joints);
        m->weights = calloc((size_t)m->nverts * 4, sizeof *m->weights);
        if (!m->joints || !m->weights) {
            free(map);
            return err_set(err, errlen, "out of memory");
        }
        for (uint32_t i = 0; i < m->nverts; i++) {
            m->joints[4 * (size_t)i] = map[0];
            m->weights[4 * (size_t)i] = 1;
        }
        free(map);
        return 0;
    }
    for (uint32_t i = 0; i < m->nverts; i++) {
        uint16_t *j = m->joints + 4 * (size_t)i;
        float *w = m->weights + 4 * (size_t)i;
        for (int k = 0; k < 4; k++)
            j[k] = w[k] > 0 ? map[j[k]] : 0;
        for (int k = 0; k < 4; k++)
            for (int l = k + 1; l < 4; l++)
                if (w[k] > 0 && w[l] > 0 && j[k] == j[l]) {
                    w[k] += w[l];
                    w[l] = 0;
                    j[l] = 0;
                }
    }
    free(map);
    return 0;
}

static void note_left_out(struct mdl_notes *left, uint32_t i, const char *name, const char *why)
{
    mdl_notes_add(left, "mesh binding %" PRIu32 " (%s): left out: %s", i, name ? name : "", why);
}

int gr2_model_read(struct gr2_types *reg, const struct gr2_space *sp, struct gr2_ref type, struct gr2_ref obj,
                   struct mdl_model *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->r[3] = 1;
    out->s[0] = out->s[1] = out->s[2] = 1;
    const struct gr2_type *t = gr2_type_get(reg, sp, type), *st, *bt, *mt;
    const char *why = "";
    struct gr2_ref so, bo, mo;
    struct array mb;
    if (!gr2_is_model(t) || !gr2_bytes(sp, obj.section, obj.offset, t->size, &why) ||
        string_of(sp, t, obj, "Name", &out->name, &out->name_len, &why) ||
        array_of(reg, sp, t, obj, "MeshBindings", &mb, &why)) {
        mdl_model_free(out);
        return err_set(err, errlen, "model: %s", gr2_is_model(t) ? why : "not a model (no MeshBindings)");
    }
    const struct gr2_member *pm = find_of(t, "InitialPlacement", GR2_TRANSFORM);
    if (pm) {
        struct xform x;
        read_transform(sp, sp->data[obj.section] + obj.offset + pm->offset, &x);
        out->has_matrix = x.has_matrix;
        memcpy(out->t, x.t, sizeof x.t);
        memcpy(out->r, x.r, sizeof x.r);
        memcpy(out->s, x.s, sizeof x.s);
        memcpy(out->m, x.m, sizeof x.m);
    }
    int rc = follow(reg, sp, t, obj, "Skeleton", &st, &so, &why);
    if (rc < 0 || (rc == 1 && gr2_skeleton_read(reg, sp, st->at, so, &out->skel, err, errlen))) {
        if (rc < 0)
            err_set(err, errlen, "Skeleton: %s", why);
        mdl_model_free(out);
        return -1;
    }
    out->mesh = alloc_array(mb.count, sizeof *out->mesh);
    if (!out->mesh) {
        mdl_model_free(out);
        return err_set(err, errlen, "out of memory");
    }
    struct mdl_notes left = {0};
    for (uint32_t i = 0; i < mb.count; i++) {
        char why2[256];
        gr2_space_settle(sp); /* each mesh is copied out: the last one's bytes may go */
        bt = mb.type;
        bo = elem_at(&mb, i);
        rc = follow(reg, sp, bt, bo, "Mesh", &mt, &mo, &why);
        if (rc <= 0) {
            note_left_out(&left, i, NULL, rc ? why : "no Mesh");
            continue;
        }
        struct mdl_mesh *m = &out->mesh[out->nmeshes];
        char **names;
        uint32_t nnames;
        if (gr2_mesh_read(reg, sp, mt->at, mo, m, &names, &nnames, why2, sizeof why2)) {
            char *mname = NULL;
            size_t mlen;
            (void)string_of(sp, mt, mo, "Name", &mname, &mlen, &why); /* to say which mesh */
            note_left_out(&left, i, mname, why2);
            free(mname);
            continue;
        }
        if (map_joints(m, names, nnames, &out->skel, why2, sizeof why2) ||
            mdl_mesh_check(m, out->skel.nbones ? out->skel.nbones : 1, why2, sizeof why2)) {
            note_left_out(&left, i, m->name, why2);
            mdl_mesh_free(m);
        } else {
            out->nmeshes++;
        }
        gr2_names_free(names, nnames);
    }
    out->left_out = mdl_notes_take(&left);
    return 0;
}
