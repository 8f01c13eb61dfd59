/* Exports in the Granny object tree: skeleton.glb, model.glb and mesh.obj beside the
 * objects they are made from, the /granny/models link, and the file's first skeleton.
 * - Reads parsed structures only; add under the tree lock, with sp pinned. */
#ifndef S3_VIEW_GR2EXPORT_H
#define S3_VIEW_GR2EXPORT_H

#include "fs/views/gr2/view_granny.h"
#include "parse/gr2/gr2obj.h"

/* skeleton.glb, model.glb or mesh.obj in the directory of a struct that is a skeleton,
 * model or mesh (by its type's members); nothing for other structs. Sized by measuring
 * in sp, the listing's space (nothing built); may settle it (gr2_space_settle). */
void gr2_exports_add(struct gr2_view *v, const struct gr2_space *sp, const struct gr2_type *ty, struct gr2_ref type,
                     struct gr2_ref obj, uint32_t dir);
/* /granny/models -> root/Models, when the root object has models (read in sp, the space
 * of the listing of /granny: gr2_view_pin). */
void gr2_exports_links(struct gr2_view *v, const struct gr2_space *sp, uint32_t granny_dir);

/* The first skeleton (root.Skeletons[0], also when names are remapped) as a model.h
 * skeleton: S3_OK, or the reason with err (FORMAT: the file holds none). */
enum s3_err gr2_view_first_skeleton(struct gr2_view *v, struct mdl_skeleton *out, char *err, size_t errlen);
/* Offers the first skeleton as the view's (view_add_skeletons_hook): what -o skeleton=
 * plays animations on and -o rig= or a package binds meshes to. S3_OK, or S3_ERR_NOMEM. */
enum s3_err gr2_add_skeletons_hook(struct gr2_view *v);

#endif
