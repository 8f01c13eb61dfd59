/* Generated export files (.glb, .obj) and the writers of model.h's shapes.
 * - Measured at listing, built on first read, kept in the bounded cache, rebuilt when
 *   evicted; an open file holds its item.
 * - A build writes only through glb_* / sb_* and decides nothing from the bytes written
 *   so far: called with out NULL it measures (the same calls give the same size).
 * - A build of another size than measured, or any read after the source changed, is EIO. */
#ifndef S3_EXPORT_H
#define S3_EXPORT_H

#include <stddef.h>
#include <stdint.h>

#include "fs/export/glb.h"
#include "fs/core/view.h"
#include "parse/base/model.h"

/* Makes the file's bytes (malloc'd): S3_OK, or the reason with err saying why it cannot be
 * made. With out NULL, only measures: *len is the exact size a build gives (the exporters
 * below measure when out is NULL). */
typedef enum s3_err (*export_build_fn)(void *ctx, uint8_t **out, size_t *len, char *err, size_t errlen);

/* Adds `name` (e.g. "model.glb") to dir, sized by measuring (build with out NULL), or
 * STEM.error (e.g. "model.error") saying why it cannot be made. ctx must live as long as
 * the tree; it may be read from any thread. */
uint32_t export_add(struct s3fs *fs, uint32_t dir, const char *name, const char *xtype, export_build_fn build,
                    void *ctx);
/* The same for a size the caller measured already (one decode for several files). */
uint32_t export_add_sized(struct s3fs *fs, uint32_t dir, const char *name, const char *xtype, uint64_t size,
                          export_build_fn build, void *ctx);
/* STEM.error for name (its extension dropped) saying msg. */
uint32_t export_add_error(struct s3fs *fs, uint32_t dir, const char *name, const char *msg);
/* Tests: export files built so far (their bytes made, not measured), process-wide. */
uint64_t export_builds(void);
/* Builds that made another size than the file was listed with (refused: never cached,
 * the read is EIO and the next one builds again), process-wide. */
uint64_t export_size_mismatches(void);

/* ---- the exporters (export_model.c) ----
 * Each returns S3_OK or the reason with err: NOMEM; FORMAT (a value glTF or the model does
 * not allow: not finite, a zero rotation, an index past the bones); UNSUPPORTED (a shear,
 * which glTF cannot hold); LIMIT (a .glb past 4 GiB). */

/* A skeleton alone: one node per bone (node i = bone i, named as the bone), parent links,
 * a skin of every bone with the inverse bind matrices. */
enum s3_err export_skeleton_glb(const struct mdl_skeleton *s, uint8_t **out, size_t *len, char *err, size_t errlen);


/* A model: its skeleton as in export_skeleton_glb, a root node with the placement holding
 * the bones, and each mesh (skinned to the bones when it has joints). */
enum s3_err export_model_glb(const struct mdl_model *m, uint8_t **out, size_t *len, char *err, size_t errlen);
/* The same into a builder (the skeleton's bones are its first nodes, 0..B-1), so a caller
 * can add more (animations) before glb_finish. */
enum s3_err export_model_into(struct glb *g, const struct mdl_model *m, char *err, size_t errlen);
/* The bones of s as nodes of g (bone i is node *first + i, named as the bone, with its
 * local transform), parent links; no skin. */
enum s3_err export_bone_nodes(struct glb *g, const struct mdl_skeleton *s, int *first, char *err, size_t errlen);
/* A skin over those bone nodes (bone i is node first + i), its inverse bind matrices the
 * inverses of the bones' rest world transforms as the nodes hold them (s's rotations are
 * made unit and its ibm filled in), so the rest pose is the bind pose; its skeleton root
 * the root bone, or a new node named as the skeleton holding the roots when there are
 * several. For files without meshes: a skin is what tells importers (Blender) that the
 * nodes are a skeleton's bones. *root: that root node (for the scene's roots). */
enum s3_err export_bone_skin(struct glb *g, struct mdl_skeleton *s, int first, int *root, char *err,
                             size_t errlen);
/* A mesh as Wavefront OBJ text: positions, texture coordinates, normals, faces. */
enum s3_err export_mesh_obj(const struct mdl_mesh *m, uint8_t **out, size_t *len, char *err, size_t errlen);
/* A model's meshes (those with triangles) as one OBJ text: an o line per mesh, vertices
 * with their colours when they have them, faces numbered across the file. */
enum s3_err export_model_obj(const struct mdl_model *m, uint8_t **out, size_t *len, char *err, size_t errlen);

/* ---- animations (export_anim.c) ---- */

/* Key-time accessors already written, so channels with the same times share one. */
struct export_times;
struct export_times *export_times_new(void);
void export_times_free(struct export_times *c);
/* One channel of glTF animation anim: the keys as a sampler (its input shared through
 * cache) driving node's path. S3_OK, or NOMEM (no message: the one reason). */
enum s3_err export_channel(struct glb *g, struct export_times *cache, int anim, int node, enum mdl_path path,
                           const struct mdl_keys *k);

#endif
