/* Builder of GR2 files holding a skeleton, meshes and a model with real type definitions
 * (the members a Granny exporter writes), for the .glb/.obj exports. The values are in
 * fxm_* below so tests compute what the exports must hold from them. */
#ifndef S3_FIXTURE_GR2MODEL_H
#define S3_FIXTURE_GR2MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FXM_BONES 4
#define FXM_BODY_VERTS 6
#define FXM_BODY_TRIS 4
#define FXM_PROP_VERTS 3

struct fxm_bone {
    const char *name;
    int32_t parent;
    uint32_t flags;
    float position[3], orientation[4], scale_shear[9];
    float inverse_world[16]; /* as stored (its last row is not 0 0 0 1 everywhere) */
};

struct fxm_vertex {
    float pos[3];
    uint8_t weights[4], indices[4];
    float normal[3], uv[2];
};

extern const struct fxm_bone fxm_bones[FXM_BONES];
extern const char *const fxm_body_bindings[2]; /* the body's bone bindings, by name */
extern const struct fxm_vertex fxm_body[FXM_BODY_VERTS];
extern const uint16_t fxm_body_index[3 * FXM_BODY_TRIS];
extern const int32_t fxm_body_groups[2][3]; /* MaterialIndex TriFirst TriCount */
extern const float fxm_prop[FXM_PROP_VERTS][3];

struct fxm_opts {
    const char *sig;       /* le32, le64, be32, be64 */
    bool alt_names;        /* LocalTransform / InverseWorld4x4 */
    bool no_inverse_world; /* the bone type lacks its inverse world transform */
    bool parent_cycle;     /* bone 0's parent is bone 2 */
    bool no_position;      /* the body's vertex type calls Position "Pos" */
    bool nan_position;     /* the body's vertex 4 has a NaN coordinate */
    bool rough_orientations; /* root and hip store fxm_rough_orientation instead */
    bool shear_rest;         /* root's scale/shear is fxm_shear (a shear: not rotation × scale) */
    uint32_t more_bindings;  /* the model's MeshBindings go on with this many more: NULL Mesh, */
    bool more_bind_body;     /* or (set) the body mesh again */
};

/* Orientations as real files hold them: root's w one float step above 1 (unit within
 * rounding, but out of glTF's range), hip's the stored (0, 0.6, 0, 0.8) doubled. */
extern const float fxm_rough_orientation[2][4];
/* A scale/shear row by row whose one off-diagonal term (0.5, row 1, column 0) makes it a
 * shear that glTF's node matrices cannot hold (mdl_is_trs fails), its diagonal
 * (1.25, 1, 0.75). */
extern const float fxm_shear[9];

/* Root: Skeletons [skeleton], Meshes [body, prop, broken], Models [model]. body is
 * skinned (16-bit indices, two groups, two materials), prop rigid (32-bit indices, no
 * bone members), broken has an index past its vertices. */
uint8_t *fxm_build(const struct fxm_opts *o, size_t *size);

#endif
