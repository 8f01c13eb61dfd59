/* A glTF 2.0 binary (.glb) builder: nodes, meshes and primitives, skins, materials,
 * accessors and buffer views over one binary buffer; glb_finish lays out the file (a JSON
 * chunk and a BIN chunk). Knows no format and no tree.
 * - Output depends only on the calls made: the same calls give the same bytes.
 * - Calls return glTF indices; -1 is out of memory, remembered: glb_finish then fails.
 * - Names are any bytes: escaped, invalid UTF-8 replaced by U+FFFD. */
#ifndef S3_GLB_H
#define S3_GLB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parse/base/err.h"

enum glb_ctype { GLB_U8 = 5121, GLB_U16 = 5123, GLB_U32 = 5125, GLB_F32 = 5126 };
enum glb_target { GLB_NO_TARGET = 0, GLB_VERTICES = 34962, GLB_INDICES = 34963 };

struct glb;

struct glb *glb_new(void);
/* A builder that only measures: the same calls, no buffer bytes kept; glb_finish with
 * out NULL then gives the exact size of the file the same calls make with glb_new. */
struct glb *glb_new_measure(void);
void glb_free(struct glb *g);

/* A buffer view holding a copy of len bytes; it starts 4-byte aligned in the buffer. */
int glb_view(struct glb *g, const void *data, size_t len, enum glb_target target);
/* An accessor of `count` elements of `ncomp` components (1 SCALAR, 2-4 VECn, 16 MAT4)
 * at byte_off in view. min/max (ncomp values each) may be NULL. */
int glb_accessor(struct glb *g, int view, size_t byte_off, enum glb_ctype ctype, uint32_t count, int ncomp,
                 const double *min, const double *max);
/* Marks an integer accessor as normalized (U8 0..255 read as 0..1: COLOR_0). */
void glb_accessor_normalized(struct glb *g, int accessor);
/* count×ncomp floats in a view of their own, with exact per-component min/max when asked
 * (POSITION needs them). Non-finite values make glb_finish fail. */
int glb_floats(struct glb *g, const float *f, uint32_t count, int ncomp, enum glb_target target, bool minmax);

int glb_node(struct glb *g, const char *name, size_t name_len);
/* The number of nodes made so far (the next node's index). */
uint32_t glb_node_count(const struct glb *g);
/* Translation, rotation (x, y, z, w) and scale; any may be NULL (left out). */
void glb_node_trs(struct glb *g, int node, const float t[3], const float r[4], const float s[3]);
/* A column-major 4×4 instead of TRS. */
void glb_node_matrix(struct glb *g, int node, const float m[16]);
void glb_node_child(struct glb *g, int parent, int child);
void glb_node_mesh(struct glb *g, int node, int mesh, int skin);
/* Lists a node among the scene's root nodes. */
void glb_scene_root(struct glb *g, int node);

int glb_mesh(struct glb *g, const char *name, size_t name_len);
/* A triangle-list primitive; indices -1 for none, material -1 for the default. */
int glb_primitive(struct glb *g, int mesh, int indices, int material);
void glb_attribute(struct glb *g, int mesh, int prim, const char *semantic, int accessor);

int glb_material(struct glb *g, const char *name, size_t name_len);
/* joints: node indices; ibm: a MAT4 float accessor with one matrix per joint, or -1. */
int glb_skin(struct glb *g, const int *joints, uint32_t njoints, int ibm, int skeleton, const char *name,
             size_t name_len);

/* Animations: an animation holds samplers (input: an accessor of key times, strictly
 * increasing, with min/max; output: an accessor of values, for CUBICSPLINE three per key:
 * in-tangent, value, out-tangent) and channels (a sampler driving a node's translation,
 * rotation, scale or weights). Indices of samplers are within their animation. */
enum glb_interp { GLB_LINEAR, GLB_STEP, GLB_CUBICSPLINE };
enum glb_path { GLB_TRANSLATION, GLB_ROTATION, GLB_SCALE, GLB_WEIGHTS };
int glb_animation(struct glb *g, const char *name, size_t name_len);
int glb_sampler(struct glb *g, int anim, int input, int output, enum glb_interp interp);
void glb_channel(struct glb *g, int anim, int sampler, int node, enum glb_path path);

/* Lays out the file: *out is malloc'd (out NULL: only *len, the file's size). S3_OK, or
 * the reason with err (NOMEM; FORMAT: a non-finite number; LIMIT: a file over 4 GiB). */
enum s3_err glb_finish(struct glb *g, uint8_t **out, size_t *len, char *err, size_t errlen);

#endif
