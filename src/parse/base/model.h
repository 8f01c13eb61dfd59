/* Skeletons, meshes and models in one neutral shape, filled by format parsers and read by
 * the exporters. Coordinates are kept exactly as stored.
 * - The shapes own their arrays: free with the matching mdl_*_free. */
#ifndef S3_MODEL_H
#define S3_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parse/base/err.h"

struct mdl_bone {
    char *name; /* malloc'd; NULL when the bone has none */
    size_t name_len;
    int32_t parent; /* -1: a root */
    float t[3], r[4], s[3]; /* local translation, rotation (x, y, z, w), scale */
    bool has_matrix;        /* the local transform is m (column-major), not t/r/s */
    float m[16];
    float ibm[16]; /* inverse bind (inverse world) matrix, column-major */
};

struct mdl_skeleton {
    char *name;
    size_t name_len;
    struct mdl_bone *bone;
    uint32_t nbones;
};

/* A run of triangles drawn with one material. */
struct mdl_group {
    int32_t material;     /* index into the mesh's materials, or -1 */
    uint32_t first, count; /* triangles */
};

struct mdl_mesh {
    char *name;
    size_t name_len;
    uint32_t nverts;
    float *pos;        /* 3 per vertex */
    float *nrm;        /* 3 per vertex, or NULL */
    float *uv;         /* 2 per vertex, or NULL */
    float *uv_more[2]; /* UV sets 1 and 2 (TEXCOORD_1, TEXCOORD_2): 2 per vertex, or NULL */
    uint8_t *rgba;     /* 4 per vertex (r, g, b, a as stored, 255 = full), or NULL */
    uint16_t *joints;  /* 4 per vertex, skeleton bone indices, or NULL (not skinned) */
    bool joints_u8;    /* JOINTS_0 written as unsigned bytes (every index below 256) */
    float *weights;    /* 4 per vertex, summing to 1, when joints */
    uint32_t *index;   /* 3 per triangle */
    uint32_t ntris;
    bool index16;      /* stored as 16-bit indices */
    struct mdl_group *group;
    uint32_t ngroups;
    char **material;   /* names (NULL entries allowed) */
    uint32_t nmaterials;
    /* An unskinned mesh that is a rigid part of a node hierarchy (the model's skeleton
     * with no_skin): its node is a child of bone `bone`'s node, not of the model's. */
    bool on_bone;
    uint32_t bone;
};

/* A model: placement, skeleton and the meshes bound to it. */
struct mdl_model {
    char *name;
    size_t name_len;
    float t[3], r[4], s[3]; /* the model's placement */
    bool has_matrix;
    float m[16];
    struct mdl_skeleton skel; /* nbones 0: none */
    /* The skeleton is a node hierarchy placing meshes (mdl_mesh.on_bone), not a skin:
     * no glTF skin and no inverse bind matrices (the bones' ibm are not read). */
    bool no_skin;
    struct mdl_mesh *mesh;
    uint32_t nmeshes;
    char *left_out; /* meshes that could not be exported, one line each; NULL when none */
};
void mdl_model_free(struct mdl_model *m);

/* Lines saying what was left out of a model (a mesh, a section), built in time
 * proportional to their length: the first MDL_NOTES_NAMED lines are kept, the others
 * only counted. Appending to a string by strlen and realloc cost its whole length per
 * line: the square of the number of lines, which a file can make large. */
#define MDL_NOTES_NAMED 256
struct mdl_notes {
    char *p;
    size_t len, cap;
    uint32_t lines; /* kept */
    uint64_t more;  /* past the first MDL_NOTES_NAMED: counted only */
    bool oom;
};
/* Adds one line (printf-style, without its newline). */
void mdl_notes_add(struct mdl_notes *n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The lines, each ending in a newline, then "N more not named here" when some were only
 * counted; NULL when there are none or memory ran out (n->oom). n is empty after. */
char *mdl_notes_take(struct mdl_notes *n);
void mdl_notes_free(struct mdl_notes *n);

void mdl_skeleton_free(struct mdl_skeleton *s);
void mdl_mesh_free(struct mdl_mesh *m);

/* A copy of a skeleton (names, transforms, inverse bind matrices): S3_OK, or
 * S3_ERR_NOMEM (to is then empty). */
enum s3_err mdl_skeleton_copy(const struct mdl_skeleton *from, struct mdl_skeleton *to);

/* Checks that parents are bones or -1 and that no parent chain is a cycle: S3_OK, or
 * S3_ERR_FORMAT with err naming the first bad bone (S3_ERR_NOMEM). */
enum s3_err mdl_skeleton_check(const struct mdl_skeleton *s, char *err, size_t errlen);
/* The column-major matrix of translation t, rotation r (x, y, z, w, unit) and scale s. */
void mdl_trs_matrix(const float t[3], const float r[4], const float s[3], float m[16]);
/* a × b, column-major 4×4. */
void mdl_mat_mul(const float a[16], const float b[16], float out[16]);
/* Inverse of an affine column-major 4×4: S3_OK, or FORMAT when singular (out untouched). */
enum s3_err mdl_mat_inverse(const float m[16], float out[16]);
/* Fills every bone's ibm with the inverse of its world transform (parents first; the
 * skeleton must pass mdl_skeleton_check): S3_OK, or with err S3_ERR_FORMAT (a singular
 * transform) or S3_ERR_NOMEM. */
enum s3_err mdl_compute_ibm(struct mdl_skeleton *s, char *err, size_t errlen);
/* True when m is translation × rotation × scale (what glTF requires of node matrices and
 * inverse bind matrices), within float rounding. */
bool mdl_is_trs(const float m[16]);
/* A local transform given as a matrix that is not translation × rotation × scale (a
 * shear, which glTF cannot hold) made t, r, s: t, r and s must already hold its
 * translation, rotation and the diagonal of its scale/shear (as the Granny reader fills
 * them; the matrix is T × R × SS). Returns the largest magnitude among SS's off-diagonal
 * terms (what is dropped), 0 when m is kept (no matrix, or one glTF can hold). */
double mdl_drop_shear(bool *has_matrix, const float m[16], const float r[4]);
/* Makes sure every value is finite and the mesh's indices, groups and joints are in
 * range: S3_OK, or S3_ERR_FORMAT with err. */
enum s3_err mdl_mesh_check(const struct mdl_mesh *m, uint32_t nbones, char *err, size_t errlen);

/* The keys of one glTF animation channel (made by a format's keying, written by the
 * exporter): times strictly increasing; values ncomp per key, or for CUBICSPLINE three
 * groups of ncomp per key (in-tangent, value, out-tangent, tangents per second). */
enum mdl_interp { MDL_LINEAR, MDL_STEP, MDL_CUBICSPLINE };
enum mdl_path { MDL_TRANSLATION, MDL_ROTATION, MDL_SCALE };
struct mdl_keys {
    enum mdl_interp interp;
    int ncomp;
    uint32_t n;
    float *times;
    float *values;
};
void mdl_keys_free(struct mdl_keys *k);

#endif
