#include "fixture_gr2model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "fixture_gw.h"

const struct fxm_bone fxm_bones[FXM_BONES] = {
    {"root", -1, 7, {0, 0, 0}, {0, 0, 0, 1}, {1, 0, 0, 0, 1, 0, 0, 0, 1},
     {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}},
    /* no scale/shear flag: the stored 5s are not used */
    {"hip", 0, 3, {0, 1, 0.5f}, {0, 0.6f, 0, 0.8f}, {5, 0, 0, 0, 5, 0, 0, 0, 5},
     {1, 0, 0, 0.5f, 0, 1, 0, 0, 0, 0, 1, 0, 0, -1, -0.5f, 1}},
    /* a scale/shear that is not diagonal (a quarter turn about z, scale 2): a matrix */
    {"leg", 1, 7, {0.25f, -0.5f, 0}, {0, 0, 0, 1}, {0, 2, 0, -2, 0, 0, 0, 0, 2},
     {0.5f, 0, 0, 0, 0, 0.5f, 0, 0, 0, 0, 0.5f, 0, 1, 2, 3, 1}},
    {"arm", -1, 1, {-1, 1.5f, 0}, {0, 0, 0, 1}, {1, 0, 0, 0, 1, 0, 0, 0, 1},
     {1, 0, 0, 0, 0, 1, 0, 9, 0, 0, 1, 0, 1, -1.5f, 0, 1}},
};

const float fxm_rough_orientation[2][4] = {{0, 0, 0, 1.00000012f}, {0, 1.2f, 0, 1.6f}};
const float fxm_shear[9] = {1.25f, 0, 0, 0.5f, 1, 0, 0, 0, 0.75f};

const char *const fxm_body_bindings[2] = {"leg", "root"};

const struct fxm_vertex fxm_body[FXM_BODY_VERTS] = {
    {{0, 0, 0}, {255, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 1}, {0, 0}},
    {{1, 0, 0}, {128, 127, 0, 0}, {0, 1, 0, 0}, {0, 0, 1}, {1, 0}},
    {{0, 1, 0}, {0, 255, 0, 0}, {0, 1, 0, 0}, {0, 1, 0}, {0, 1}},
    {{1, 1, -0.5f}, {100, 100, 55, 0}, {1, 0, 1, 0}, {1, 0, 0}, {1, 1}}, /* binding 1 twice */
    {{0, 2, 0.25f}, {255, 0, 0, 0}, {1, 0, 0, 0}, {0, -1, 0}, {0, 0.5f}},
    {{1.5f, 2, 0}, {51, 51, 51, 102}, {0, 1, 0, 1}, {0, 0, -1}, {0.75f, 0.25f}},
};

const uint16_t fxm_body_index[3 * FXM_BODY_TRIS] = {0, 1, 2, 1, 3, 2, 2, 3, 4, 3, 5, 4};
const int32_t fxm_body_groups[2][3] = {{0, 0, 3}, {1, 3, 1}};
const float fxm_prop[FXM_PROP_VERTS][3] = {{-1, 1, 0}, {-2, 1, 0}, {-1, 2, 1}};

/* n zero bytes at the end, 4-aligned; their offset. */
static uint32_t alloc(struct gw *w, size_t n)
{
    fx_align(&w->b, 4, 0);
    return gw_alloc(w, n);
}

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

static void transform(struct gw *w, uint32_t at, uint32_t flags, const float *pos, const float *q, const float *ss)
{
    gw_u32(w, at, flags);
    for (uint32_t k = 0; k < 3; k++)
        gw_f32(w, at + 4 + 4 * k, pos[k]);
    for (uint32_t k = 0; k < 4; k++)
        gw_f32(w, at + 16 + 4 * k, q[k]);
    for (uint32_t k = 0; k < 9; k++)
        gw_f32(w, at + 32 + 4 * k, ss[k]);
}

/* A ReferenceToArray at `at`: count and pointer. */
static void ref_array(struct gw *w, uint32_t at, uint32_t count, uint32_t items)
{
    gw_u32(w, at, count);
    gw_ptr(w, at + 4, items);
}

uint8_t *fxm_build(const struct fxm_opts *o, size_t *size)
{
    struct gw w = {.p = strstr(o->sig, "64") ? 8 : 4};
    w.b.be = o->sig[0] == 'b';
    const struct mdef bone[] = {{STRING, "Name", NO_TYPE, 0},
                                {INT32, "ParentIndex", NO_TYPE, 0},
                                {TRANSFORM, o->alt_names ? "LocalTransform" : "Transform", NO_TYPE, 0},
                                {REAL32, o->alt_names ? "InverseWorld4x4" : "InverseWorldTransform", NO_TYPE, 16},
                                {REAL32, "LODError", NO_TYPE, 0}};
    struct mdef bone_t[5];
    int nbone = 0;
    for (int i = 0; i < N(bone); i++)
        if (!(o->no_inverse_world && i == 3))
            bone_t[nbone++] = bone[i];
    uint32_t t_bone = gw_type(&w, bone_t, nbone);
    const struct mdef skel[] = {{STRING, "Name", NO_TYPE, 0}, {REF_ARRAY, "Bones", t_bone, 0},
                                {INT32, "LODType", NO_TYPE, 0}};
    uint32_t t_skel = gw_type(&w, skel, N(skel));
    const struct mdef vert[] = {{REAL32, o->no_position ? "Pos" : "Position", NO_TYPE, 3}, {NORMAL8, "BoneWeights", NO_TYPE, 4},
                                {UINT8, "BoneIndices", NO_TYPE, 4}, {REAL32, "Normal", NO_TYPE, 3},
                                {REAL32, "TextureCoordinates0", NO_TYPE, 2}};
    uint32_t t_vert = gw_type(&w, vert, N(vert));
    const struct mdef vert2[] = {{REAL32, "Position", NO_TYPE, 3}};
    uint32_t t_vert2 = gw_type(&w, vert2, N(vert2));
    const struct mdef vdata[] = {{REF_VARIANT_ARRAY, "Vertices", NO_TYPE, 0}};
    uint32_t t_vdata = gw_type(&w, vdata, N(vdata));
    const struct mdef group[] = {{INT32, "MaterialIndex", NO_TYPE, 0}, {INT32, "TriFirst", NO_TYPE, 0},
                                 {INT32, "TriCount", NO_TYPE, 0}};
    uint32_t t_group = gw_type(&w, group, N(group));
    const struct mdef i32[] = {{INT32, "Int32", NO_TYPE, 0}};
    uint32_t t_i32 = gw_type(&w, i32, N(i32));
    const struct mdef i16[] = {{UINT16, "Int16", NO_TYPE, 0}};
    uint32_t t_i16 = gw_type(&w, i16, N(i16));
    const struct mdef topo[] = {{REF_ARRAY, "Groups", t_group, 0}, {REF_ARRAY, "Indices", t_i32, 0},
                                {REF_ARRAY, "Indices16", t_i16, 0}};
    uint32_t t_topo = gw_type(&w, topo, N(topo));
    const struct mdef mat[] = {{STRING, "Name", NO_TYPE, 0}};
    uint32_t t_mat = gw_type(&w, mat, N(mat));
    const struct mdef matbind[] = {{REF, "Material", t_mat, 0}};
    uint32_t t_matbind = gw_type(&w, matbind, N(matbind));
    const struct mdef bonebind[] = {{STRING, "BoneName", NO_TYPE, 0}, {REAL32, "OBBMin", NO_TYPE, 3},
                                    {REAL32, "OBBMax", NO_TYPE, 3}};
    uint32_t t_bonebind = gw_type(&w, bonebind, N(bonebind));
    const struct mdef mesh[] = {{STRING, "Name", NO_TYPE, 0}, {REF, "PrimaryVertexData", t_vdata, 0},
                                {REF, "PrimaryTopology", t_topo, 0}, {REF_ARRAY, "MaterialBindings", t_matbind, 0},
                                {REF_ARRAY, "BoneBindings", t_bonebind, 0}};
    uint32_t t_mesh = gw_type(&w, mesh, N(mesh));
    const struct mdef meshbind[] = {{REF, "Mesh", t_mesh, 0}};
    uint32_t t_meshbind = gw_type(&w, meshbind, N(meshbind));
    const struct mdef model[] = {{STRING, "Name", NO_TYPE, 0}, {REF, "Skeleton", t_skel, 0},
                                 {TRANSFORM, "InitialPlacement", NO_TYPE, 0}, {REF_ARRAY, "MeshBindings", t_meshbind, 0}};
    uint32_t t_model = gw_type(&w, model, N(model));
    const struct mdef root[] = {{ARRAY_REFS, "Skeletons", t_skel, 0}, {ARRAY_REFS, "Meshes", t_mesh, 0},
                                {ARRAY_REFS, "Models", t_model, 0}};
    uint32_t t_root = gw_type(&w, root, N(root));

    /* the skeleton */
    uint32_t bsize = gw_struct_size(&w, bone_t, nbone);
    uint32_t o_bones = alloc(&w, (size_t)bsize * FXM_BONES);
    for (uint32_t i = 0; i < FXM_BONES; i++) {
        const struct fxm_bone *b = &fxm_bones[i];
        uint32_t at = o_bones + i * bsize;
        gw_ptr(&w, at + gw_offset(&w, bone_t, nbone, "Name"), gw_str(&w, b->name));
        gw_u32(&w, at + gw_offset(&w, bone_t, nbone, "ParentIndex"),
              (uint32_t)(o->parent_cycle && i == 0 ? 2 : b->parent));
        const float *q = o->rough_orientations && i < 2 ? fxm_rough_orientation[i] : b->orientation;
        const float *ss = o->shear_rest && i == 0 ? fxm_shear : b->scale_shear;
        transform(&w, at + gw_offset(&w, bone_t, nbone, bone_t[2].name), b->flags, b->position, q, ss);
        if (!o->no_inverse_world)
            for (uint32_t k = 0; k < 16; k++)
                gw_f32(&w, at + gw_offset(&w, bone_t, nbone, bone_t[3].name) + 4 * k, b->inverse_world[k]);
    }
    uint32_t o_skel = alloc(&w, gw_struct_size(&w, skel, N(skel)));
    gw_ptr(&w, o_skel, gw_str(&w, "fixture_skeleton"));
    ref_array(&w, o_skel + gw_offset(&w, skel, N(skel), "Bones"), FXM_BONES, o_bones);

    /* body: skinned, 16-bit indices, two groups and materials */
    uint32_t vsize = gw_struct_size(&w, vert, N(vert));
    uint32_t o_verts = alloc(&w, (size_t)vsize * FXM_BODY_VERTS);
    for (uint32_t i = 0; i < FXM_BODY_VERTS; i++) {
        const struct fxm_vertex *v = &fxm_body[i];
        uint32_t at = o_verts + i * vsize;
        for (uint32_t k = 0; k < 3; k++) {
            gw_f32(&w, at + 4 * k, v->pos[k]);
            gw_f32(&w, at + 20 + 4 * k, v->normal[k]);
        }
        for (uint32_t k = 0; k < 4; k++) {
            w.b.p[at + 12 + k] = v->weights[k];
            w.b.p[at + 16 + k] = v->indices[k];
        }
        if (o->nan_position && i == 4)
            gw_f32(&w, at + 4, NAN);
        gw_f32(&w, at + 32, v->uv[0]);
        gw_f32(&w, at + 36, v->uv[1]);
    }
    uint32_t o_vdata = alloc(&w, 2 * w.p + 4);
    gw_ptr(&w, o_vdata, t_vert);
    gw_u32(&w, o_vdata + w.p, FXM_BODY_VERTS);
    gw_ptr(&w, o_vdata + w.p + 4, o_verts);
    uint32_t o_groups = alloc(&w, 2 * 12);
    for (uint32_t g = 0; g < 2; g++)
        for (uint32_t k = 0; k < 3; k++)
            gw_u32(&w, o_groups + 12 * g + 4 * k, (uint32_t)fxm_body_groups[g][k]);
    uint32_t o_idx16 = alloc(&w, sizeof fxm_body_index);
    for (uint32_t i = 0; i < 3 * FXM_BODY_TRIS; i++)
        gw_u16(&w, o_idx16 + 2 * i, fxm_body_index[i]);
    uint32_t tsize = gw_struct_size(&w, topo, N(topo));
    uint32_t o_topo = alloc(&w, tsize);
    ref_array(&w, o_topo + gw_offset(&w, topo, N(topo), "Groups"), 2, o_groups);
    ref_array(&w, o_topo + gw_offset(&w, topo, N(topo), "Indices16"), 3 * FXM_BODY_TRIS, o_idx16);
    uint32_t o_mats = alloc(&w, 2 * (size_t)w.p);
    gw_ptr(&w, o_mats, gw_str(&w, "skin"));
    gw_ptr(&w, o_mats + w.p, gw_str(&w, "cloth"));
    uint32_t o_matbind = alloc(&w, 2 * (size_t)w.p);
    gw_ptr(&w, o_matbind, o_mats);
    gw_ptr(&w, o_matbind + w.p, o_mats + w.p);
    uint32_t bbsize = gw_struct_size(&w, bonebind, N(bonebind));
    uint32_t o_bb = alloc(&w, 3 * (size_t)bbsize);
    gw_ptr(&w, o_bb, gw_str(&w, fxm_body_bindings[0]));
    gw_ptr(&w, o_bb + bbsize, gw_str(&w, fxm_body_bindings[1]));
    gw_ptr(&w, o_bb + 2 * bbsize, gw_str(&w, "arm"));

    /* prop: rigid, 32-bit indices; broken: the prop's vertices, an index past them */
    uint32_t o_pverts = alloc(&w, sizeof fxm_prop);
    for (uint32_t i = 0; i < 3 * FXM_PROP_VERTS; i++)
        gw_f32(&w, o_pverts + 4 * i, fxm_prop[i / 3][i % 3]);
    uint32_t o_pvdata = alloc(&w, 2 * w.p + 4);
    gw_ptr(&w, o_pvdata, t_vert2);
    gw_u32(&w, o_pvdata + w.p, FXM_PROP_VERTS);
    gw_ptr(&w, o_pvdata + w.p + 4, o_pverts);
    uint32_t o_idx32 = alloc(&w, 24);
    static const uint32_t idx32[6] = {0, 1, 2, 0, 1, 7};
    for (uint32_t i = 0; i < 6; i++)
        gw_u32(&w, o_idx32 + 4 * i, idx32[i]);
    uint32_t o_ptopo = alloc(&w, 2 * (size_t)tsize);
    ref_array(&w, o_ptopo + gw_offset(&w, topo, N(topo), "Indices"), 3, o_idx32);
    ref_array(&w, o_ptopo + tsize + gw_offset(&w, topo, N(topo), "Indices"), 3, o_idx32 + 12);

    uint32_t msize = gw_struct_size(&w, mesh, N(mesh));
    uint32_t o_meshes = alloc(&w, 3 * (size_t)msize);
    static const char *const mesh_names[3] = {"body", "prop", "broken"};
    for (uint32_t m = 0; m < 3; m++) {
        uint32_t at = o_meshes + m * msize;
        gw_ptr(&w, at, gw_str(&w, mesh_names[m]));
        gw_ptr(&w, at + gw_offset(&w, mesh, N(mesh), "PrimaryVertexData"), m == 0 ? o_vdata : o_pvdata);
        gw_ptr(&w, at + gw_offset(&w, mesh, N(mesh), "PrimaryTopology"), m == 0 ? o_topo : o_ptopo + (m - 1) * tsize);
        if (m == 0)
            ref_array(&w, at + gw_offset(&w, mesh, N(mesh), "MaterialBindings"), 2, o_matbind);
        if (m < 2)
            ref_array(&w, at + gw_offset(&w, mesh, N(mesh), "BoneBindings"), m == 0 ? 2 : 1, m == 0 ? o_bb : o_bb + 2 * bbsize);
    }
    uint32_t nbind = 3 + o->more_bindings;
    uint32_t o_meshbind = alloc(&w, nbind * (size_t)w.p);
    for (uint32_t m = 0; m < 3; m++)
        gw_ptr(&w, o_meshbind + m * w.p, o_meshes + m * msize);
    for (uint32_t m = 3; o->more_bind_body && m < nbind; m++)
        gw_ptr(&w, o_meshbind + m * w.p, o_meshes);
    uint32_t o_model = alloc(&w, gw_struct_size(&w, model, N(model)));
    gw_ptr(&w, o_model, gw_str(&w, "fixture_model"));
    gw_ptr(&w, o_model + gw_offset(&w, model, N(model), "Skeleton"), o_skel);
    static const float place[3] = {1, 2, 3}, qid[4] = {0, 0, 0, 1}, ssid[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    transform(&w, o_model + gw_offset(&w, model, N(model), "InitialPlacement"), 1, place, qid, ssid);
    ref_array(&w, o_model + gw_offset(&w, model, N(model), "MeshBindings"), nbind, o_meshbind);

    uint32_t o_lists = alloc(&w, 5 * (size_t)w.p);
    gw_ptr(&w, o_lists, o_skel);
    for (uint32_t m = 0; m < 3; m++)
        gw_ptr(&w, o_lists + (1 + m) * w.p, o_meshes + m * msize);
    gw_ptr(&w, o_lists + 4 * w.p, o_model);
    uint32_t o_root = alloc(&w, 3 * (4 + (size_t)w.p));
    ref_array(&w, o_root, 1, o_lists);
    ref_array(&w, o_root + 4 + w.p, 3, o_lists + w.p);
    ref_array(&w, o_root + 2 * (4 + w.p), 1, o_lists + 4 * w.p);

    uint32_t len = (uint32_t)w.b.len;
    struct fx_section sec = {.compression = 0, .data = w.b.p, .data_size = len, .alignment = 4,
                             .first16bit = len, .first8bit = len, .fixups = w.fix, .nfixups = w.nfix};
    struct fx_gr2_opts go = {.version = 7, .sig = o->sig, .type_tag = 0x8000001c,
                             .root_type = {0, t_root}, .root_object = {0, o_root}};
    struct fx_gr2_layout lay;
    uint8_t *f = fx_build_gr2(&go, &sec, 1, size, &lay);
    free(w.b.p);
    return f;
}
