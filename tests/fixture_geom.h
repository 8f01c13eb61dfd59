/* Builder of GEOM files (Sims 3 version 5, Sims 4 versions 12-15) in their RCOL wrapper,
 * written from the format notes (geom.md), with a layout of where every field went. The
 * mesh: 6 vertices, 4 triangles; each vertex's bone bytes index a list of bone-name hashes
 * (FNV-1 32 of the lower-cased names given, by default the clear-RIG fixture's bones in
 * another order, so a bound mesh maps every list entry to a rig bone of another index).
 * fxgeom_: "fixture, GEOM". */
#ifndef S3_FIXTURE_GEOM_H
#define S3_FIXTURE_GEOM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FXGEOM_VERTS 6
#define FXGEOM_TRIS 4
#define FXGEOM_HASHES 6
#define FXGEOM_PARAMS 5
#define FXGEOM_TGIS 3
#define FXGEOM_MAX_DECLS 12

/* The mesh, as the notes store it (the builder writes these). */
extern const float fxgeom_pos[FXGEOM_VERTS][3], fxgeom_nrm[FXGEOM_VERTS][3], fxgeom_uv[3][FXGEOM_VERTS][2];
extern const float fxgeom_tangent[3];
extern const uint32_t fxgeom_index[FXGEOM_TRIS * 3];
extern const uint8_t fxgeom_bones[FXGEOM_VERTS][4];
extern const uint8_t fxgeom_wbytes[FXGEOM_VERTS][4]; /* Sims 4: each vertex sums to 255 */
extern const float fxgeom_wfloats[FXGEOM_VERTS][4];  /* Sims 3: sums within 1e-6 of 1 */
extern const char *const fxgeom_rig_names[FXGEOM_HASHES]; /* the default list: fxc bones, reordered */
extern const char fxgeom_custom_bone[];              /* a bone no rig has */
extern const uint32_t fxgeom_unknown_param;          /* a parameter hash no name gives */

struct fxgeom_decl {
    uint32_t usage, type;
    uint8_t size;
    int uv_set;
};

struct fxgeom_opts {
    uint32_t version;               /* 5, 12, 13, 14, 15 (others: written with 15's tail) */
    const char *const *names;       /* FXGEOM_HASHES bone names (NULL: fxgeom_rig_names) */
    bool no_material;               /* shader 0, no MTNF */
    bool zero_normal;               /* vertex 3's normal written as 0, 0, 0 */
    bool missing_hash;              /* list entry 5 is fxgeom_custom_bone's hash */
    bool extra_index;               /* one index more (not whole triangles) */
    bool index_out_of_range;        /* triangle 1's first index is 6 (past the vertices) */
    bool unknown_decl;              /* a declaration of usage 11, 4 bytes, at the end */
    bool bad_weight_sum;            /* vertex 1's third weight smaller: its weights do not sum to 1 */
    uint32_t grid_cols, grid_rows;  /* instead of the 6-vertex mesh, a grid (2 or more each way;
                                       benchmarks; versions with 2- or 4-byte indices) */
    bool figure;                    /* the grid bent into a figure 1.75 m tall (pictures) */
};

struct fxgeom_block {
    uint64_t pos, size; /* absolute, count included */
};

struct fxgeom_layout {
    uint64_t rcol_size, geom_pos, geom_size;
    uint64_t material_pos, material_size; /* the MTNF tag and its size (0: none) */
    uint64_t param_pos[FXGEOM_PARAMS], param_data_pos[FXGEOM_PARAMS];
    uint64_t fields_pos, decl_pos;
    struct fxgeom_decl decl[FXGEOM_MAX_DECLS];
    uint32_t ndecls, stride, decl_offset[FXGEOM_MAX_DECLS];
    uint64_t vert_pos, ibuf_pos, index_pos;
    uint32_t index_size, index_count, nuv;
    struct fxgeom_block skin, uv_stitches, seams, slot_rays, bones, states, tgis;
    uint32_t hash[FXGEOM_HASHES];
    uint64_t size;
};

/* The tail's records the builder writes (tests compare the CSVs with them). */
struct fxgeom_uv_stitch {
    int32_t vertex;
    uint32_t count;
    float uv[2][2];
};
extern const struct fxgeom_uv_stitch fxgeom_uv_stitches[3];
extern const uint32_t fxgeom_seams[3][2]; /* vertex, seam word */
extern const uint32_t fxgeom_states[2][5];
extern const uint32_t fxgeom_tgi[FXGEOM_TGIS][2]; /* type, group */
extern const uint64_t fxgeom_tgi_instance[FXGEOM_TGIS];
extern const uint32_t fxgeom_param_type[FXGEOM_PARAMS], fxgeom_param_count[FXGEOM_PARAMS],
    fxgeom_param_words[FXGEOM_PARAMS][4];
/* The parameters' names as the notes spell them (NULL: fxgeom_unknown_param), and their
 * hashes (fxc_hash of the name). */
extern const char *const fxgeom_param_names[FXGEOM_PARAMS];
uint32_t fxgeom_param_hash(int i);

/* The declarations of a version (in the order that version's fixture stores them). */
uint32_t fxgeom_decls(const struct fxgeom_opts *o, struct fxgeom_decl *out);
/* The slot-ray record r of a version: its bytes (63 or 66) into out; returns the size. */
size_t fxgeom_slot_ray(uint32_t version, int r, const uint32_t *hashes, uint8_t *out);

uint8_t *fxgeom_build(const struct fxgeom_opts *o, size_t *size, struct fxgeom_layout *lay);

#endif
