/* Skeletons, models and meshes as .glb (through the glb builder) and .obj text. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs/export/export.h"
#include "fs/export/glb.h"
#include "parse/base/err.h"

/* glTF wants unit quaternions whose components lie in [-1, 1]. A stored rotation that is
 * unit within float rounding, every component in range, is written exactly as stored;
 * any other is normalised, computed in double, so the floats written are never larger
 * than 1 in magnitude (real files hold w = 1.00000012: unit within rounding, but out of
 * range for the validator). */
static int unit_rotation(const float in[4], float out[4])
{
    double len = sqrt((double)in[0] * in[0] + (double)in[1] * in[1] + (double)in[2] * in[2] + (double)in[3] * in[3]);
    if (!isfinite(len) || len < 1e-12)
        return -1;
    bool as_stored = fabs(len - 1) <= 1e-6;
    for (int i = 0; i < 4; i++)
        as_stored = as_stored && fabsf(in[i]) <= 1;
    for (int i = 0; i < 4; i++) {
        double v = as_stored ? in[i] : in[i] / len;
        out[i] = (float)(v > 1 ? 1 : v < -1 ? -1 : v);
    }
    return 0;
}

/* Sets a node's local transform: TRS, or a matrix glTF can take (a shear it cannot hold:
 * UNSUPPORTED; a rotation of zero length or not finite: FORMAT). */
static enum s3_err set_transform(struct glb *g, int node, bool has_matrix, const float m[16], const float t[3],
                                 const float r[4], const float s[3], const char *what, char *err, size_t errlen)
{
    if (has_matrix) {
        if (!mdl_is_trs(m))
            return s3_fail(S3_ERR_UNSUPPORTED, err, errlen,
                           "%s: its transform has a shear (not translation × rotation × scale), which glTF cannot hold",
                           what);
        glb_node_matrix(g, node, m);
        return S3_OK;
    }
    float q[4];
    if (unit_rotation(r, q))
        return s3_fail(S3_ERR_FORMAT, err, errlen, "%s: its orientation is not a rotation (zero or not finite)", what);
    glb_node_trs(g, node, t, q, s);
    return S3_OK;
}

static enum s3_err out_of_memory(char *err, size_t errlen)
{
    return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
}

/* The bones' inverse bind matrices as an accessor (*acc). */
static enum s3_err ibm_accessor(struct glb *g, const struct mdl_skeleton *s, int *acc, char *err, size_t errlen)
{
    float *m = alloc_array(s->nbones, 16 * sizeof *m);
    if (!m)
        return out_of_memory(err, errlen);
    for (uint32_t i = 0; i < s->nbones; i++)
        memcpy(m + 16 * i, s->bone[i].ibm, 16 * sizeof *m);
    *acc = glb_floats(g, m, s->nbones, 16, GLB_NO_TARGET, false);
    free(m);
    return *acc < 0 ? out_of_memory(err, errlen) : S3_OK;
}

/* A node per bone (bone i is node *first + i), parent links, and the inverse bind matrices
 * accessor (ibm NULL: none, the bones only place meshes or are animated). */
static enum s3_err add_bones(struct glb *g, const struct mdl_skeleton *s, int *first, int *ibm, char *err,
                             size_t errlen)
{
    enum s3_err e = mdl_skeleton_check(s, err, errlen);
    if (e)
        return e;
    int base = -1;
    for (uint32_t i = 0; i < s->nbones; i++) {
        const struct mdl_bone *b = &s->bone[i];
        int node = glb_node(g, b->name, b->name_len);
        if (node < 0)
            return out_of_memory(err, errlen);
        char what[48];
        snprintf(what, sizeof what, "bone %" PRIu32, i);
        if ((e = set_transform(g, node, b->has_matrix, b->m, b->t, b->r, b->s, what, err, errlen)))
            return e;
        if (i == 0)
            base = node;
        if (ibm && !mdl_is_trs(b->ibm))
            return s3_fail(S3_ERR_UNSUPPORTED, err, errlen,
                           "bone %" PRIu32 ": its inverse world transform is not translation × rotation × scale", i);
    }
    if (first)
        *first = base;
    for (uint32_t i = 0; i < s->nbones; i++)
        if (s->bone[i].parent >= 0)
            glb_node_child(g, base + s->bone[i].parent, base + (int)i);
    return ibm ? ibm_accessor(g, s, ibm, err, errlen) : S3_OK;
}

enum s3_err export_bone_nodes(struct glb *g, const struct mdl_skeleton *s, int *first, char *err, size_t errlen)
{
    return add_bones(g, s, first, NULL, err, errlen);
}

/* A skin of every bone (bone i is node first + i), with the inverse bind matrices ibm
 * (*skin). */
static enum s3_err make_skin(struct glb *g, const struct mdl_skeleton *s, int first, int ibm, int skeleton_root,
                             int *skin, char *err, size_t errlen)
{
    int *joints = alloc_array(s->nbones, sizeof *joints);
    if (!joints)
        return out_of_memory(err, errlen);
    for (uint32_t i = 0; i < s->nbones; i++)
        joints[i] = first + (int)i;
    *skin = glb_skin(g, joints, s->nbones, ibm, skeleton_root, s->name, s->name_len);
    free(joints);
    return *skin < 0 ? out_of_memory(err, errlen) : S3_OK;
}

/* The node a skin's joints have as their one common root (glTF requires one): the root
 * bone, or when there are several, a new node named as the skeleton holding them (-1:
 * out of memory). */
static int common_root(struct glb *g, const struct mdl_skeleton *s, int first)
{
    uint32_t nroots = 0, root = 0;
    for (uint32_t i = 0; i < s->nbones; i++)
        if (s->bone[i].parent < 0)
            nroots++, root = i;
    if (nroots <= 1)
        return first + (int)root;
    int top = glb_node(g, s->name ? s->name : "skeleton", s->name ? s->name_len : 8);
    for (uint32_t i = 0; top >= 0 && i < s->nbones; i++)
        if (s->bone[i].parent < 0)
            glb_node_child(g, top, first + (int)i);
    return top;
}

/* Lays out g's file and frees g. */
static enum s3_err finish(struct glb *g, uint8_t **out, size_t *len, char *err, size_t errlen)
{
    enum s3_err e = glb_finish(g, out, len, err, errlen);
    glb_free(g);
    return e;
}

enum s3_err export_skeleton_glb(const struct mdl_skeleton *s, uint8_t **out, size_t *len, char *err, size_t errlen)
{
    if (s->nbones == 0)
        return s3_fail(S3_ERR_FORMAT, err, errlen, "the skeleton has no bones");
    struct glb *g = out ? glb_new() : glb_new_measure();
    if (!g)
        return out_of_memory(err, errlen);
    int ibm, skin;
    enum s3_err e = add_bones(g, s, NULL, &ibm, err, errlen);
    if (e)
        goto fail;
    int top = common_root(g, s, 0);
    if (top < 0) {
        e = out_of_memory(err, errlen);
        goto fail;
    }
    glb_scene_root(g, top);
    if ((e = make_skin(g, s, 0, ibm, top, &skin, err, errlen)))
        goto fail;
    return finish(g, out, len, err, errlen);
fail:
    glb_free(g);
    return e;
}

enum s3_err export_bone_skin(struct glb *g, struct mdl_skeleton *s, int first, int *root, char *err, size_t errlen)
{
    /* the rest pose as the nodes hold it: rotations as written (unit) */
    for (uint32_t i = 0; i < s->nbones; i++)
        if (!s->bone[i].has_matrix && unit_rotation(s->bone[i].r, s->bone[i].r))
            return s3_fail(S3_ERR_FORMAT, err, errlen,
                           "bone %" PRIu32 ": its orientation is not a rotation (zero or not finite)", i);
    int ibm, skin;
    enum s3_err e = mdl_compute_ibm(s, err, errlen);
    if (e || (e = ibm_accessor(g, s, &ibm, err, errlen)))
        return e;
    int top = common_root(g, s, first);
    if (top < 0)
        return out_of_memory(err, errlen);
    if ((e = make_skin(g, s, first, ibm, top, &skin, err, errlen)))
        return e;
    *root = top;
    return S3_OK;
}

#define MESH_ATTRS 8

/* JOINTS_0 as bytes (the mesh says every index is below 256); -1: out of memory. */
static int joints_u8_view(struct glb *g, const struct mdl_mesh *m)
{
    size_t n = (size_t)m->nverts * 4;
    uint8_t *b = alloc_array(n, 1);
    if (!b)
        return -1;
    for (size_t i = 0; i < n; i++)
        b[i] = (uint8_t)m->joints[i];
    int view = glb_view(g, b, n, GLB_VERTICES);
    free(b);
    return view;
}

/* The attributes every primitive of a mesh shares (-1: the mesh has none of that one).
 * false: out of memory. */
static bool mesh_attributes(struct glb *g, const struct mdl_mesh *m, bool skinned, int acc[MESH_ATTRS])
{
    bool ok = true;
    acc[0] = glb_floats(g, m->pos, m->nverts, 3, GLB_VERTICES, true);
    ok &= acc[0] >= 0;
    acc[1] = m->nrm ? glb_floats(g, m->nrm, m->nverts, 3, GLB_VERTICES, false) : -1;
    ok &= !m->nrm || acc[1] >= 0;
    acc[2] = m->uv ? glb_floats(g, m->uv, m->nverts, 2, GLB_VERTICES, false) : -1;
    ok &= !m->uv || acc[2] >= 0;
    acc[3] = acc[4] = acc[5] = -1;
    for (int k = 0; k < 2; k++) {
        acc[6 + k] = m->uv_more[k] ? glb_floats(g, m->uv_more[k], m->nverts, 2, GLB_VERTICES, false) : -1;
        ok &= !m->uv_more[k] || acc[6 + k] >= 0;
    }
    if (m->rgba) { /* the bytes as stored, read as 0..1 */
        int view = glb_view(g, m->rgba, (size_t)m->nverts * 4, GLB_VERTICES);
        acc[5] = view < 0 ? -1 : glb_accessor(g, view, 0, GLB_U8, m->nverts, 4, NULL, NULL);
        glb_accessor_normalized(g, acc[5]);
        ok &= acc[5] >= 0;
    }
    if (skinned) {
        int view = m->joints_u8 ? joints_u8_view(g, m)
                                : glb_view(g, m->joints, (size_t)m->nverts * 4 * sizeof *m->joints, GLB_VERTICES);
        acc[3] = view < 0 ? -1
                          : glb_accessor(g, view, 0, m->joints_u8 ? GLB_U8 : GLB_U16, m->nverts, 4, NULL, NULL);
        acc[4] = glb_floats(g, m->weights, m->nverts, 4, GLB_VERTICES, false);
        ok &= acc[3] >= 0 && acc[4] >= 0;
    }
    return ok;
}

/* The index buffer: 16-bit when stored so (and every index fits), else 32-bit; -1: out of
 * memory. */
static int index_view(struct glb *g, const struct mdl_mesh *m, enum glb_ctype *ctype)
{
    size_t n = 3 * (size_t)m->ntris;
    bool small = m->index16;
    for (size_t i = 0; small && i < n; i++)
        small = m->index[i] <= 0xFFFF;
    if (!small) {
        *ctype = GLB_U32;
        return glb_view(g, m->index, n * sizeof *m->index, GLB_INDICES);
    }
    uint16_t *s = alloc_array(n, sizeof *s);
    if (!s)
        return -1;
    for (size_t i = 0; i < n; i++)
        s[i] = (uint16_t)m->index[i];
    *ctype = GLB_U16;
    int view = glb_view(g, s, n * sizeof *s, GLB_INDICES);
    free(s);
    return view;
}

/* One mesh, a primitive per non-empty group (one for all triangles when it has none).
 * A primitive without a material of its own gets *plain, one unnamed material made on
 * first need (glTF's default material is fully metallic: black in most viewers). -1: out
 * of memory. */
static int add_mesh(struct glb *g, const struct mdl_mesh *m, bool skinned, int *plain)
{
    int mesh = glb_mesh(g, m->name, m->name_len);
    int acc[MESH_ATTRS];
    enum glb_ctype ctype;
    int iview = index_view(g, m, &ctype);
    if (mesh < 0 || iview < 0 || !mesh_attributes(g, m, skinned, acc))
        return -1;
    int mat0 = -1;
    for (uint32_t i = 0; i < m->nmaterials; i++) {
        const char *name = m->material[i];
        int k = glb_material(g, name, name ? strlen(name) : 0);
        if (k < 0)
            return -1;
        if (i == 0)
            mat0 = k;
    }
    struct mdl_group all = {-1, 0, m->ntris};
    const struct mdl_group *grp = m->ngroups ? m->group : &all;
    uint32_t ngroups = m->ngroups ? m->ngroups : 1;
    size_t isize = ctype == GLB_U16 ? 2 : 4;
    for (uint32_t k = 0; k < ngroups; k++) {
        if (grp[k].count == 0)
            continue;
        int ind = glb_accessor(g, iview, (size_t)grp[k].first * 3 * isize, ctype, 3 * grp[k].count, 1, NULL, NULL);
        int32_t mi = grp[k].material;
        int mat = mat0 >= 0 && mi >= 0 && (uint32_t)mi < m->nmaterials ? mat0 + mi : -1;
        if (mat < 0 && *plain < 0 && (*plain = glb_material(g, NULL, 0)) < 0)
            return -1;
        int prim = ind < 0 ? -1 : glb_primitive(g, mesh, ind, mat >= 0 ? mat : *plain);
        if (prim < 0)
            return -1;
        const char *sem[MESH_ATTRS] = {"POSITION", "NORMAL",  "TEXCOORD_0", "JOINTS_0",
                                       "WEIGHTS_0", "COLOR_0", "TEXCOORD_1", "TEXCOORD_2"};
        for (int a = 0; a < MESH_ATTRS; a++)
            if (acc[a] >= 0)
                glb_attribute(g, mesh, prim, sem[a], acc[a]);
    }
    return mesh;
}

static bool has_triangles(const struct mdl_mesh *m)
{
    if (m->ngroups == 0)
        return m->ntris > 0;
    for (uint32_t k = 0; k < m->ngroups; k++)
        if (m->group[k].count)
            return true;
    return false;
}

/* Mesh i of md under its placement: top (the model's node), a bone, or the scene's roots
 * when skinned (skin: the model's, -1 for none). */
static enum s3_err add_mesh_node(struct glb *g, const struct mdl_model *md, uint32_t i, int top, int skin,
                                 int *plain, char *err, size_t errlen)
{
    const struct mdl_mesh *m = &md->mesh[i];
    uint32_t nbones = md->skel.nbones;
    if (m->on_bone && m->bone >= nbones)
        return s3_fail(S3_ERR_FORMAT, err, errlen,
                       "mesh %" PRIu32 ": placed under bone %" PRIu32 ", past the %" PRIu32 " bones", i, m->bone,
                       nbones);
    bool skinned = m->joints && skin >= 0;
    int mesh = add_mesh(g, m, skinned, plain);
    int node = mesh < 0 ? -1 : glb_node(g, m->name, m->name_len);
    if (node < 0)
        return out_of_memory(err, errlen);
    glb_node_mesh(g, node, mesh, skinned ? skin : -1);
    if (skinned) /* a skinned mesh is placed by its joints; glTF wants it at the top */
        glb_scene_root(g, node);
    else if (m->on_bone)
        glb_node_child(g, (int)m->bone, node);
    else
        glb_node_child(g, top, node);
    return S3_OK;
}

enum s3_err export_model_into(struct glb *g, const struct mdl_model *md, char *err, size_t errlen)
{
    int ibm = -1;
    const struct mdl_skeleton *s = &md->skel;
    enum s3_err e;
    if (s->nbones && (e = add_bones(g, s, NULL, md->no_skin ? NULL : &ibm, err, errlen)))
        return e;
    int top = glb_node(g, md->name ? md->name : "model", md->name ? md->name_len : 5);
    if (top < 0)
        return out_of_memory(err, errlen);
    if ((e = set_transform(g, top, md->has_matrix, md->m, md->t, md->r, md->s, "the model's placement", err, errlen)))
        return e;
    glb_scene_root(g, top);
    for (uint32_t i = 0; i < s->nbones; i++)
        if (s->bone[i].parent < 0)
            glb_node_child(g, top, (int)i);
    int skin = -1, plain = -1;
    if (s->nbones && !md->no_skin && (e = make_skin(g, s, 0, ibm, top, &skin, err, errlen)))
        return e;
    for (uint32_t i = 0; i < md->nmeshes; i++)
        if (has_triangles(&md->mesh[i]) && (e = add_mesh_node(g, md, i, top, skin, &plain, err, errlen)))
            return e;
    return S3_OK;
}

enum s3_err export_model_glb(const struct mdl_model *md, uint8_t **out, size_t *len, char *err, size_t errlen)
{
    struct glb *g = out ? glb_new() : glb_new_measure();
    if (!g)
        return out_of_memory(err, errlen);
    enum s3_err e = export_model_into(g, md, err, errlen);
    if (e) {
        glb_free(g);
        return e;
    }
    return finish(g, out, len, err, errlen);
}

/* A name on one OBJ line, as one word (readers such as assimp stop at a space): control
 * characters and spaces become '_'. */
static void obj_name(struct sbuf *b, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char c = (unsigned char)s[i] <= 0x20 ? '_' : s[i];
        sb_put(b, &c, 1);
    }
}

/* Next v, vt and vn numbers (OBJ counts each kind from 1, across the whole file). */
struct obj_base {
    uint64_t v, vt, vn;
};

/* One mesh's lines: o (when named), v (with r g b in 0..1 after x y z when the mesh has
 * colours, the extension Blender and assimp read), vt, vn, f. */
static void obj_mesh(struct sbuf *b, const struct mdl_mesh *m, struct obj_base *base)
{
    if (m->name) {
        sb_put(b, "o ", 2);
        obj_name(b, m->name, m->name_len);
        sb_put(b, "\n", 1);
    }
    for (uint32_t i = 0; i < m->nverts; i++) {
        sb_printf(b, "v %.9g %.9g %.9g", (double)m->pos[3 * i], (double)m->pos[3 * i + 1], (double)m->pos[3 * i + 2]);
        if (m->rgba)
            sb_printf(b, " %.9g %.9g %.9g", m->rgba[4 * i] / 255.0, m->rgba[4 * i + 1] / 255.0,
                      m->rgba[4 * i + 2] / 255.0);
        sb_put(b, "\n", 1);
    }
    for (uint32_t i = 0; m->uv && i < m->nverts; i++)
        sb_printf(b, "vt %.9g %.9g\n", (double)m->uv[2 * i], (double)m->uv[2 * i + 1]);
    for (uint32_t i = 0; m->nrm && i < m->nverts; i++)
        sb_printf(b, "vn %.9g %.9g %.9g\n", (double)m->nrm[3 * i], (double)m->nrm[3 * i + 1], (double)m->nrm[3 * i + 2]);
    for (uint32_t t = 0; t < m->ntris; t++) {
        sb_put(b, "f", 1);
        for (int k = 0; k < 3; k++) {
            uint64_t i = m->index[3 * t + (uint32_t)k];
            uint64_t v = base->v + i, vt = base->vt + i, vn = base->vn + i;
            if (m->uv && m->nrm)
                sb_printf(b, " %" PRIu64 "/%" PRIu64 "/%" PRIu64, v, vt, vn);
            else if (m->uv)
                sb_printf(b, " %" PRIu64 "/%" PRIu64, v, vt);
            else if (m->nrm)
                sb_printf(b, " %" PRIu64 "//%" PRIu64, v, vn);
            else
                sb_printf(b, " %" PRIu64, v);
        }
        sb_put(b, "\n", 1);
    }
    base->v += m->nverts;
    base->vt += m->uv ? m->nverts : 0;
    base->vn += m->nrm ? m->nverts : 0;
}

static enum s3_err obj_take(struct sbuf *b, uint8_t **out, size_t *len, char *err, size_t errlen)
{
    if (!out) { /* measured */
        *len = b->len;
        return S3_OK;
    }
    *out = (uint8_t *)sb_take(b, len);
    return *out ? S3_OK : out_of_memory(err, errlen);
}

enum s3_err export_mesh_obj(const struct mdl_mesh *m, uint8_t **out, size_t *len, char *err, size_t errlen)
{
    struct sbuf b = {.measure = !out};
    sb_printf(&b, "# s3rigfs: %" PRIu32 " vertices, %" PRIu32 " triangles; coordinates as stored\n", m->nverts,
              m->ntris);
    struct obj_base base = {1, 1, 1}; /* OBJ counts from 1 */
    obj_mesh(&b, m, &base);
    return obj_take(&b, out, len, err, errlen);
}

enum s3_err export_model_obj(const struct mdl_model *md, uint8_t **out, size_t *len, char *err, size_t errlen)
{
    uint64_t nv = 0, nt = 0;
    uint32_t nm = 0;
    for (uint32_t i = 0; i < md->nmeshes; i++)
        if (has_triangles(&md->mesh[i]))
            nm++, nv += md->mesh[i].nverts, nt += md->mesh[i].ntris;
    struct sbuf b = {.measure = !out};
    sb_printf(&b, "# s3rigfs: %" PRIu32 " meshes, %" PRIu64 " vertices, %" PRIu64 " triangles; coordinates as stored\n",
              nm, nv, nt);
    struct obj_base base = {1, 1, 1};
    for (uint32_t i = 0; i < md->nmeshes; i++)
        if (has_triangles(&md->mesh[i]))
            obj_mesh(&b, &md->mesh[i], &base);
    return obj_take(&b, out, len, err, errlen);
}
