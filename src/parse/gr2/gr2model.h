/* Skeletons, meshes and models out of the Granny object graph, into the neutral shapes of
 * model.h. Members are found by name in the file's own types (layouts drift between
 * exporters); what is missing or out of range is an error naming it. Pure: the section
 * bytes come in a gr2_space, types are decoded into the caller's registry. */
#ifndef S3_GR2MODEL_H
#define S3_GR2MODEL_H

#include <stdbool.h>
#include <stddef.h>

#include "parse/gr2/gr2obj.h"
#include "parse/base/model.h"

/* What a struct type looks like: a skeleton has Bones, a model MeshBindings, a mesh
 * PrimaryVertexData and PrimaryTopology. */
bool gr2_is_skeleton(const struct gr2_type *t);
bool gr2_is_model(const struct gr2_type *t);
bool gr2_is_mesh(const struct gr2_type *t);

/* Each returns S3_OK, or the reason with err (and out freed): FORMAT for a missing
 * member or a bad value, RANGE for bytes past their section, NOMEM. */
enum s3_err gr2_skeleton_read(struct gr2_types *reg, const struct gr2_space *sp, struct gr2_ref type,
                              struct gr2_ref obj, struct mdl_skeleton *out, char *err, size_t errlen);
/* joints hold the mesh's own bone-binding indices (rigid meshes: none); *bindings gets the
 * bindings' bone names (malloc'd array of malloc'd strings, NULL entries for unnamed). */
enum s3_err gr2_mesh_read(struct gr2_types *reg, const struct gr2_space *sp, struct gr2_ref type, struct gr2_ref obj,
                          struct mdl_mesh *out, char ***bindings, uint32_t *nbindings, char *err, size_t errlen);
/* The model's skeleton and its meshes, joints mapped to the skeleton's bones by name.
 * A mesh that cannot be exported is left out and named in out->left_out. */
enum s3_err gr2_model_read(struct gr2_types *reg, const struct gr2_space *sp, struct gr2_ref type, struct gr2_ref obj,
                           struct mdl_model *out, char *err, size_t errlen);

void gr2_names_free(char **names, uint32_t n);

#endif
