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

/* Why a type is not the kind asked for: NOMEM when it could not be made, its own reason
 * when it failed for now (out of memory, bytes not had), else FORMAT. */
static enum s3_err not_kind(const struct gr2_type *t)
{
    if (!t)
        return S3_ERR_NOMEM;
    return !t->ok && (t->reason == S3_ERR_NOMEM || t->reason == S3_ERR_IO) ? t->reason : S3_ERR_FORMAT;
}

/* A type decoded for use: FORMAT when its definition is bad, NOMEM when it could not be
 * made. */
static enum s3_err usable_type(struct gr2_types *reg, const struct gr2_space *sp, struct gr2_ref at,
                               const struct gr2_type **t, const char **why)
{
    *t = gr2_type_get(reg, sp, at);
    if (!*t) {
        *why = "out of memory";
        return S3_ERR_NOMEM;
    }
    if (!(*t)->ok) {
        *why = (*t)->err;
        return (*t)->reason;
    }
    return S3_OK;
}

/* The typed struct a Reference member points to: *found false when NULL (or absent). */
static enum s3_err follow(struct gr2_types *reg, const struct gr2_space *sp, const struct gr2_type *t,
                          struct gr2_ref obj, const char *name, const struct gr2_type **to_type, struct gr2_ref *to,
                          bool *found, const char **why)
{
    *found = false;
    const struct gr2_member *m = find_of(t, name, GR2_REFERENCE);
    if (!m)
        return S3_OK;
    bool points;
    enum s3_err e = gr2_pointer(sp, obj.section, obj.offset + m->offset, to, &points, why);
    if (e || !points)
        return e;
    if (!m->has_ref_type) {
        *why = "untyped reference";
        return S3_ERR_FORMAT;
    }
    const uint8_t *b;
    if ((e = usable_type(reg, sp, m->ref_type, to_type, why)) ||
        (e = gr2_bytes_at(sp, to->section, to->offset, (*to_type)->size, &b, why)))
        return e;
    *found = true;
    return S3_OK;
}

struct array {
    const struct gr2_type *type;
    struct gr2_ref items;
    uint32_t count;
};

/* A ReferenceToArray member's elements (count 0 when absent or NULL), or the reason
 * (why). */
static enum s3_err array_of(struct gr2_types *reg, const struct gr2_space *sp, const struct gr2_type *t,
                            struct gr2_ref obj, const char *name, struct array *a, const char **why)
{
    memset(a, 0, sizeof *a);
    const struct gr2_member *m = find_of(t, name, GR2_REF_TO_ARRAY);
    if (!m)
        return S3_OK;
    const uint8_t *b;
    enum s3_err e = gr2_bytes_at(sp, obj.section, obj.offset + m->offset, 4, &b, why);
    if (e)
        return e;
    uint32_t count = gr2_u32_at(sp, b);
    bool points;
    if ((e = gr2_pointer(sp, obj.section, obj.offset + m->offset + 4, &a->items, &points, why)))
        return e;
    if (!points || count == 0)
        return S3_OK;
    if (!m->has_ref_type) {
        *why = "array of untyped elements";
        return S3_ERR_FORMAT;
    }
    if ((e = usable_type(reg, sp, m->ref_type, &a->type, why)))
        return e;
    if (a->type->size == 0) {
        *why = "array of zero-sized elements";
        return S3_ERR_FORMAT;
    }
    if ((e = gr2_bytes_at(sp, a->items.section, a->items.offset, (uint64_t)count * a->type->size, &b, why)))
        return e;
    a->count = count;
    return S3_OK;
}

static struct gr2_ref elem_at(const struct array *a, uint32_t i)
{
    return (struct gr2_ref){a->items.section, a->items.offset + i * a->type->size};
}

/* A String member, copied (NULL when absent or NULL); a remapped string is its CRC as the
 * tree shows it, "crc:0x%08x", so names still match each other. A slot that cannot be
 * read is past the end of its bytes (RANGE, why). */
static enum s3_err string_of(const struct gr2_space *sp, const struct gr2_type *t, struct gr2_ref obj,
                             const char *name, char **out, size_t *len, const char **why)
{
    *out = NULL;
    *len = 0;
    const struct gr2_member *m = find_of(t, name, GR2_STRING);
    if (!m)
        return S3_OK;
    struct gr2_str str;
    gr2_string_slot(sp, obj.section, obj.offset + m->offset, &str);
    if (str.kind == GR2_STR_ERROR) {
        *why = str.why;
        return S3_ERR_RANGE;
    }
    if (str.kind == GR2_STR_NULL)
        return S3_OK;
    char crc[24];
    if (str.kind == GR2_STR_CRC) {
        snprintf(crc, sizeof crc, "crc:0x%08" PRIx32, str.crc);
        str.text = crc;
        str.len = strlen(crc);
    }
    *out = malloc(str.len + 1);
    if (!*out) {
        *why = "out of memory";
        return S3_ERR_NOMEM;
    }
    memcpy(*out, str.text, str.len);
    (*out)[str.len] = 0;
    *len = str.len;
    return S3_OK;
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
        f[i] = gr2_f32_at(sp, b + 4 + 4 * i);
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

static enum s3_err read_bone(const struct gr2_space *sp, const struct gr2_type *bt, struct gr2_ref at, uint32_t i,
                             struct mdl_bone *b, char *err, size_t errlen)
{
    const char *why;
    enum s3_err e = string_of(sp, bt, at, "Name", &b->name, &b->name_len, &why);
    if (e)
        return s3_fail(e, err, errlen, "bone %" PRIu32 ": Name: %s", i, why);
    if (!int32_of(sp, bt, at, "ParentIndex", &b->parent))
        return s3_fail(S3_ERR_FORMAT, err, errlen, "bone %" PRIu32 ": no ParentIndex member", i);
    const struct gr2_member *tm = either(bt, "Transform", "LocalTransform", GR2_TRANSFORM);
    if (!tm)
        return s3_fail(S3_ERR_FORMAT, err, errlen, "bone %" PRIu32 ": no Transform or LocalTransform member", i);
    const struct gr2_member *im = either(bt, "InverseWorldTransform", "InverseWorld4x4", GR2_REAL32);
    if (!im || im->array_width != 16)
        return s3_fail(S3_ERR_FORMAT, err, errlen,
                       "bone %" PRIu32 ": no InverseWorldTransform or InverseWorld4x4 member (16 floats)", i);
    const uint8_t *tb, *ib;
    if ((e = gr2_bytes_at(sp, at.section, at.offset + tm->offset, GR2_TRANSFORM_SIZE, &tb, &why)) ||
        (e = gr2_bytes_at(sp, at.section, at.offset + im->offset, 64, &ib, &why)))
        return s3_fail(e, err, errlen, "bone %" PRIu32 ": %s", i, why);
    struct xform x;
    read_transform(sp, tb, &x);
    b->has_matrix = x.has_matrix;
    memcpy(b->t, x.t, sizeof b->t);
    memcpy(b->r, x.r, sizeof b->r);
    memcpy(b->s, x.s, sizeof b->s);
    memcpy(b->m, x.m, sizeof b->m);
    for (int k = 0; k < 16; k++) /* as stored: Granny's rows are glTF's columns */
        b->ibm[k] = gr2_f32_at(sp, ib + 4 * k);
    b->ibm[3] = b->ibm[7] = b->ibm[11] = 0; /* the last row glTF requires */
    b->ibm[15] = 1;
    return S3_OK;
}

enum s3_err gr2_skeleton_read(struct gr2_types *reg, const struct gr2_space *sp, struct gr2_ref type,
                              struct gr2_ref obj, struct mdl_skeleton *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    const struct gr2_type *t = gr2_type_get(reg, sp, type);
    const char *why;
    const uint8_t *b;
    struct array bones;
    if (!gr2_is_skeleton(t))
        return not_kind(t) == S3_ERR_FORMAT ? s3_fail(S3_ERR_FORMAT, err, errlen, "not a skeleton (no Bones array)")
                                            : s3_fail(not_kind(t), err, errlen, "%s", t ? t->err : "out of memory");
    enum s3_err e;
    if ((e = gr2_bytes_at(sp, obj.section, obj.offset, t->size, &b, &why)) ||
        (e = string_of(sp, t, obj, "Name", &out->name, &out->name_len, &why)) ||
        (e = array_of(reg, sp, t, obj, "Bones", &bones, &why))) {
        e = s3_fail(e, err, errlen, "skeleton: %s", why);
        goto fail;
    }
    out->bone = alloc_array(bones.count, sizeof *out->bone);
    if (!out->bone) {
        e = s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
        goto fail;
    }
    out->nbones = bones.count;
    for (uint32_t i = 0; i < bones.count; i++)
        if ((e = read_bone(sp, bones.type, elem_at(&bones, i), i, &out->bone[i], err, errlen)))
            goto fail;
    if ((e = mdl_skeleton_check(out, err, errlen)))
        goto fail;
    return S3_OK;
fail:
    mdl_skeleton_free(out);
    return e;
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
        return gr2_f32_at(sp, p);
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

static enum s3_err read_vertices(struct gr2_types *reg, const struct gr2_space *sp, const struct gr2_type *vdt,
                                 struct gr2_ref vd, struct mdl_mesh *m, uint32_t nbindings, char *err, size_t errlen)
{
    const struct gr2_member *vm = find_of(vdt, "Vertices", GR2_REF_TO_VARIANT_ARRAY);
    if (!vm)
        return s3_fail(S3_ERR_FORMAT, err, errlen, "the vertex data has no Vertices member");
    uint32_t p = (uint32_t)gr2_pointer_size(sp), at = vd.offset + vm->offset;
    struct gr2_ref vtype, items;
    const char *why;
    const uint8_t *b;
    bool typed, points;
    enum s3_err e;
    if ((e = gr2_bytes_at(sp, vd.section, at + p, 4, &b, &why)) ||
        (e = gr2_pointer(sp, vd.section, at, &vtype, &typed, &why)) ||
        (e = gr2_pointer(sp, vd.section, at + p + 4, &items, &points, &why)))
        return s3_fail(e, err, errlen, "Vertices: %s", why);
    uint32_t count = gr2_u32_at(sp, b);
    if (!points || count == 0)
        return s3_fail(S3_ERR_FORMAT, err, errlen, "the mesh has no vertices");
    if (!typed)
        return s3_fail(S3_ERR_FORMAT, err, errlen, "Vertices: no vertex type");
    const struct gr2_type *vt;
    if ((e = usable_type(reg, sp, vtype, &vt, &why)))
        return s3_fail(e, err, errlen, "vertex type: %s", why);
    if (vt->size == 0)
        return s3_fail(S3_ERR_FORMAT, err, errlen, "Vertices: zero-sized vertices");
    const uint8_t *verts;
    if ((e = gr2_bytes_at(sp, items.section, items.offset, (uint64_t)count * vt->size, &verts, &why)))
        return s3_fail(e, err, errlen, "Vertices: %s", why);
    bool bad = false;
    const struct gr2_member *pos = vertex_member(vt, "Position", 3, &bad);
    if (!pos)
        return s3_fail(S3_ERR_FORMAT, err, errlen, "the vertex type has no Position member of 3 numbers");
    const struct gr2_member *nrm = vertex_member(vt, "Normal", 3, &bad);
    const struct gr2_member *uv = vertex_member(vt, "TextureCoordinates0", 2, &bad);
    const struct gr2_member *bw = vertex_member(vt, "BoneWeights", 1, &bad);
    const struct gr2_member *bi = vertex_member(vt, "BoneIndices", 1, &bad);
    if (bad)
        return s3_fail(S3_ERR_FORMAT, err, errlen,
                       "a vertex member (Normal, TextureCoordinates0, BoneWeights, BoneIndices) is not a list of "
                       "numbers of the usual size");
    m->nverts = count;
    m->pos = malloc((size_t)count * 3 * sizeof *m->pos);
    m->nrm = nrm ? malloc((size_t)count * 3 * sizeof *m->nrm) : NULL;
    m->uv = uv ? malloc((size_t)count * 2 * sizeof *m->uv) : NULL;
    if (!m->pos || (nrm && !m->nrm) || (uv && !m->uv))
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    gather(sp, verts, vt->size, count, pos, 3, m->pos);
    if (nrm) {
        gather(sp, verts, vt->size, count, nrm, 3, m->nrm);
        normalise_normals(m);
    }
    if (uv)
        gather(sp, verts, vt->size, count, uv, 2, m->uv);
    if (!bi)
        return S3_OK; /* rigid: bound as a whole to its first bone binding */
    int nb = bi->array_width > 0 ? bi->array_width : 1, nw = bw ? (bw->array_width > 0 ? bw->array_width : 1) : 0;
    nb = nb > 4 ? 4 : nb;
    nw = nw > nb ? nb : nw;
    float idx[4], w[4];
    m->joints = calloc((size_t)count * 4, sizeof *m->joints);
    m->weights = calloc((size_t)count * 4, sizeof *m->weights);
    if (!m->joints || !m->weights)
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
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
                return s3_fail(S3_ERR_FORMAT, err, errlen,
                               "vertex %" PRIu32 ": a bone weight is negative or not a number", i);
            sum += w[k];
        }
        if (sum <= 0) { /* no weight at all: held by its first bone */
            w[0] = 1;
            sum = 1;
        }
        for (int k = 0; k < 4; k++) {
            if (w[k] > 0 && !(idx[k] >= 0 && idx[k] < (float)nbindings && idx[k] <= (float)UINT16_MAX))
                return s3_fail(S3_ERR_FORMAT, err, errlen,
                               "vertex %" PRIu32 ": bone index %.0f is past the mesh's %" PRIu32 " bone bindings", i,
                               (double)idx[k], nbindings);
            m->joints[4 * (size_t)i + (size_t)k] = w[k] > 0 ? (uint16_t)idx[k] : 0;
            m->weights[4 * (size_t)i + (size_t)k] = (float)(w[k] / sum);
        }
    }
    return S3_OK;
}

/* A ReferenceToArray of one-member structs holding integers (Indices, Indices16). */
static enum s3_err read_indices(struct gr2_types *reg, const struct gr2_space *sp, const struct gr2_type *tt,
                                struct gr2_ref top, const char *name, struct mdl_mesh *m, char *err, size_t errlen)
{
    struct array a;
    const char *why;
    enum s3_err e = array_of(reg, sp, tt, top, name, &a, &why);
    if (e)
        return s3_fail(e, err, errlen, "%s: %s", name, why);
    if (a.count == 0)
        return S3_OK;
    if (a.type->nmembers < 1 || !(a.type->m[0].type == GR2_INT32 || a.type->m[0].type == GR2_UINT32 ||
                                  a.type->m[0].type == GR2_UINT16 || a.type->m[0].type == GR2_INT16))
        return s3_fail(S3_ERR_FORMAT, err, errlen, "%s: elements are not integers", name);
    if (a.count % 3)
        return s3_fail(S3_ERR_FORMAT, err, errlen, "%s: %" PRIu32 " indices, not whole triangles", name, a.count);
    m->index = malloc((size_t)a.count * sizeof *m->index);
    if (!m->index)
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    bool wide = a.type->m[0].type == GR2_INT32 || a.type->m[0].type == GR2_UINT32;
    for (uint32_t i = 0; i < a.count; i++) {
        const uint8_t *p = sp->data[a.items.section] + a.items.offset + (size_t)i * a.type->size;
        m->index[i] = wide ? gr2_u32_at(sp, p) : ld_u16(p, sp->g->be);
    }
    m->ntris = a.count / 3;
    m->index16 = !wide;
    return S3_OK;
}

static enum s3_err read_topology(struct gr2_types *reg, const struct gr2_space *sp, const struct gr2_type *tt,
                                 struct gr2_ref top, struct mdl_mesh *m, char *err, size_t errlen)
{
    enum s3_err e = read_indices(reg, sp, tt, top, "Indices", m, err, errlen);
    if (e)
        return e;
    if (!m->index && (e = read_indices(reg, sp, tt, top, "Indices16", m, err, errlen)))
        return e;
    if (!m->index)
        return s3_fail(S3_ERR_FORMAT, err, errlen, "the topology has no Indices or Indices16");
    struct array g;
    const char *why;
    if ((e = array_of(reg, sp, tt, top, "Groups", &g, &why)))
        return s3_fail(e, err, errlen, "Groups: %s", why);
    if (g.count == 0)
        return S3_OK;
    m->group = alloc_array(g.count, sizeof *m->group);
    if (!m->group)
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    m->ngroups = g.count;
    for (uint32_t i = 0; i < g.count; i++) {
        int32_t mat = -1, first = 0, n = 0;
        struct gr2_ref at = elem_at(&g, i);
        if (!int32_of(sp, g.type, at, "TriFirst", &first) || !int32_of(sp, g.type, at, "TriCount", &n))
            return s3_fail(S3_ERR_FORMAT, err, errlen, "group %" PRIu32 ": no TriFirst or TriCount", i);
        (void)int32_of(sp, g.type, at, "MaterialIndex", &mat);
        if (first < 0 || n < 0)
            return s3_fail(S3_ERR_FORMAT, err, errlen, "group %" PRIu32 ": negative triangle range", i);
        m->group[i] = (struct mdl_group){mat, (uint32_t)first, (uint32_t)n};
    }
    return S3_OK;
}

/* Names of the structs an array's elements refer to through `ref` (MaterialBindings →
 * Material → Name), or the array elements' own String `field` (BoneBindings → BoneName). */
static enum s3_err read_names(struct gr2_types *reg, const struct gr2_space *sp, const struct gr2_type *t,
                              struct gr2_ref obj, const char *array, const char *ref, const char *field, char ***names,
                              uint32_t *n, char *err, size_t errlen)
{
    struct array a;
    const char *why;
    *names = NULL;
    *n = 0;
    enum s3_err e = array_of(reg, sp, t, obj, array, &a, &why);
    if (e)
        return s3_fail(e, err, errlen, "%s: %s", array, why);
    if (a.count == 0)
        return S3_OK;
    *names = alloc_array(a.count, sizeof **names);
    if (!*names)
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    *n = a.count;
    for (uint32_t i = 0; i < a.count; i++) {
        const struct gr2_type *et = a.type, *to = NULL; /* set by follow when it finds one */
        struct gr2_ref at = elem_at(&a, i), target;
        size_t len;
        if (ref) {
            bool found;
            if ((e = follow(reg, sp, a.type, at, ref, &to, &target, &found, &why)))
                return s3_fail(e, err, errlen, "%s %" PRIu32 ": %s", array, i, why);
            if (!found)
                continue;
            et = to;
            at = target;
        }
        if ((e = string_of(sp, et, at, field, &(*names)[i], &len, &why)))
            return s3_fail(e, err, errlen, "%s %" PRIu32 ": %s", array, i, why);
    }
    return S3_OK;
}

/* A Reference member that must point somewhere: a NULL (or absent) one is bad bytes. */
static enum s3_err follow_needed(struct gr2_types *reg, const struct gr2_space *sp, const struct gr2_type *t,
                                 struct gr2_ref obj, const char *name, const struct gr2_type **to_type,
                                 struct gr2_ref *to, char *err, size_t errlen)
{
    const char *why = "none";
    bool found;
    enum s3_err e = follow(reg, sp, t, obj, name, to_type, to, &found, &why);
    if (!e && !found)
        e = S3_ERR_FORMAT;
    return e ? s3_fail(e, err, errlen, "%s: %s", name, why) : S3_OK;
}

enum s3_err gr2_mesh_read(struct gr2_types *reg, const struct gr2_space *sp, struct gr2_ref type, struct gr2_ref obj,
                          struct mdl_mesh *out, char ***bindings, uint32_t *nbindings, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    *bindings = NULL;
    *nbindings = 0;
    const struct gr2_type *t = gr2_type_get(reg, sp, type), *vdt, *tt;
    const char *why = "";
    const uint8_t *b;
    struct gr2_ref vd, top;
    enum s3_err e;
    if (!gr2_is_mesh(t)) {
        e = not_kind(t) == S3_ERR_FORMAT
                ? s3_fail(S3_ERR_FORMAT, err, errlen, "not a mesh (no PrimaryVertexData and PrimaryTopology)")
                : s3_fail(not_kind(t), err, errlen, "%s", t ? t->err : "out of memory");
        goto fail;
    }
    if ((e = gr2_bytes_at(sp, obj.section, obj.offset, t->size, &b, &why)) ||
        (e = string_of(sp, t, obj, "Name", &out->name, &out->name_len, &why))) {
        e = s3_fail(e, err, errlen, "mesh: %s", why);
        goto fail;
    }
    if ((e = read_names(reg, sp, t, obj, "BoneBindings", NULL, "BoneName", bindings, nbindings, err, errlen)) ||
        (e = read_names(reg, sp, t, obj, "MaterialBindings", "Material", "Name", &out->material, &out->nmaterials,
                        err, errlen)) ||
        (e = follow_needed(reg, sp, t, obj, "PrimaryVertexData", &vdt, &vd, err, errlen)) ||
        (e = follow_needed(reg, sp, t, obj, "PrimaryTopology", &tt, &top, err, errlen)) ||
        (e = read_vertices(reg, sp, vdt, vd, out, *nbindings, err, errlen)) ||
        (e = read_topology(reg, sp, tt, top, out, err, errlen)) ||
        (e = mdl_mesh_check(out, UINT16_MAX + 1u, err, errlen)))
        goto fail;
    return S3_OK;
fail:
    mdl_mesh_free(out);
    gr2_names_free(*bindings, *nbindings);
    *bindings = NULL;
    *nbindings = 0;
    return e;
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
static enum s3_err map_joints(struct mdl_mesh *m, char **bindings, uint32_t nbindings, const struct mdl_skeleton *s,
                              char *err, size_t errlen)
{
    if (nbindings == 0 || s->nbones == 0) { /* nothing to bind to: a static mesh */
        free(m->joints);
        free(m->weights);
        m->joints = NULL;
        m->weights = NULL;
        return S3_OK;
    }
    enum s3_err e = S3_OK;
    uint16_t *map = alloc_array(nbindings, sizeof *map);
    struct by_name *sorted = alloc_array(s->nbones, sizeof *sorted);
    if (!map || !sorted) {
        e = s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
        goto done;
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
            e = s3_fail(S3_ERR_FORMAT, err, errlen, "bone binding %" PRIu32 " '%s' is not a bone of the skeleton", b,
                        key.name);
            goto done;
        }
        map[b] = (uint16_t)hit->index;
    }
    if (!m->joints) { /* rigid: every vertex on the first binding's bone */
        m->joints = alloc_array((size_t)m->nverts * 4, sizeof *m->joints);
        m->weights = alloc_array((size_t)m->nverts * 4, sizeof *m->weights);
        if (!m->joints || !m->weights) {
            e = s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
            goto done;
        }
        for (uint32_t i = 0; i < m->nverts; i++) {
            m->joints[4 * (size_t)i] = map[0];
            m->weights[4 * (size_t)i] = 1;
        }
        goto done;
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
done:
    free(map);
    free(sorted);
    return e;
}

static void note_left_out(struct mdl_notes *left, uint32_t i, const char *name, const char *why)
{
    mdl_notes_add(left, "mesh binding %" PRIu32 " (%s): left out: %s", i, name ? name : "", why);
}

enum s3_err gr2_model_read(struct gr2_types *reg, const struct gr2_space *sp, struct gr2_ref type, struct gr2_ref obj,
                           struct mdl_model *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->r[3] = 1;
    out->s[0] = out->s[1] = out->s[2] = 1;
    const struct gr2_type *t = gr2_type_get(reg, sp, type), *st, *bt, *mt;
    const char *why = "";
    struct gr2_ref so, bo, mo;
    struct array mb;
    const uint8_t *b;
    enum s3_err e;
    if (!gr2_is_model(t)) {
        e = not_kind(t) == S3_ERR_FORMAT ? s3_fail(S3_ERR_FORMAT, err, errlen, "model: not a model (no MeshBindings)")
                                         : s3_fail(not_kind(t), err, errlen, "%s", t ? t->err : "out of memory");
        goto fail;
    }
    if ((e = gr2_bytes_at(sp, obj.section, obj.offset, t->size, &b, &why)) ||
        (e = string_of(sp, t, obj, "Name", &out->name, &out->name_len, &why)) ||
        (e = array_of(reg, sp, t, obj, "MeshBindings", &mb, &why))) {
        e = s3_fail(e, err, errlen, "model: %s", why);
        goto fail;
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
    bool found;
    if ((e = follow(reg, sp, t, obj, "Skeleton", &st, &so, &found, &why))) {
        e = s3_fail(e, err, errlen, "Skeleton: %s", why);
        goto fail;
    }
    if (found && (e = gr2_skeleton_read(reg, sp, st->at, so, &out->skel, err, errlen)))
        goto fail;
    out->mesh = alloc_array(mb.count, sizeof *out->mesh);
    if (!out->mesh) {
        e = s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
        goto fail;
    }
    struct mdl_notes left = {0};
    for (uint32_t i = 0; i < mb.count; i++) {
        char why2[256];
        gr2_space_settle(sp); /* each mesh is copied out: the last one's bytes may go */
        bt = mb.type;
        bo = elem_at(&mb, i);
        enum s3_err fe = follow(reg, sp, bt, bo, "Mesh", &mt, &mo, &found, &why);
        if (fe == S3_ERR_NOMEM) { /* a mesh refused memory is not left out: the model fails */
            e = s3_fail(fe, err, errlen, "mesh binding %" PRIu32 ": %s", i, why);
            goto fail_notes;
        }
        if (fe || !found) {
            note_left_out(&left, i, NULL, fe ? why : "no Mesh");
            continue;
        }
        struct mdl_mesh *m = &out->mesh[out->nmeshes];
        char **names;
        uint32_t nnames;
        if ((fe = gr2_mesh_read(reg, sp, mt->at, mo, m, &names, &nnames, why2, sizeof why2))) {
            char *mname = NULL;
            size_t mlen;
            if (fe != S3_ERR_NOMEM) /* to say which mesh */
                fe = string_of(sp, mt, mo, "Name", &mname, &mlen, &why) == S3_ERR_NOMEM ? S3_ERR_NOMEM : fe;
            if (fe == S3_ERR_NOMEM) {
                e = s3_fail(fe, err, errlen, "mesh binding %" PRIu32 ": out of memory", i);
                goto fail_notes;
            }
            note_left_out(&left, i, mname, why2);
            free(mname);
            continue;
        }
        if ((fe = map_joints(m, names, nnames, &out->skel, why2, sizeof why2)) ||
            (fe = mdl_mesh_check(m, out->skel.nbones ? out->skel.nbones : 1, why2, sizeof why2))) {
            if (fe != S3_ERR_NOMEM)
                note_left_out(&left, i, m->name, why2);
            mdl_mesh_free(m);
        } else {
            out->nmeshes++;
        }
        gr2_names_free(names, nnames);
        if (fe == S3_ERR_NOMEM) {
            e = s3_fail(fe, err, errlen, "mesh binding %" PRIu32 ": %s", i, why2);
            goto fail_notes;
        }
    }
    bool noted = left.lines || left.more || left.oom;
    out->left_out = mdl_notes_take(&left);
    if (noted && !out->left_out) { /* the note of what was left out is part of the result */
        e = s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
        goto fail;
    }
    return S3_OK;
fail_notes:
    mdl_notes_free(&left);
fail:
    mdl_model_free(out);
    return e;
}
