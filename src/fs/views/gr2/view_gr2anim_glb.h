/* animation.glb in a Granny Animation's directory: the bones of the skeletons its track
 * groups play on as nodes, one glTF animation per track group, keyed so glTF plays
 * Granny's curves exactly (parse/gr2/gr2curve.h). A group plays on the file's skeleton
 * whose bones are named as its tracks (the model's named as the group first), else on
 * -o skeleton='s, else on a node per track (and /info says so).
 * - Builds read parsed structures only, each with its own type registry. */
#ifndef S3_VIEW_GR2ANIM_GLB_H
#define S3_VIEW_GR2ANIM_GLB_H

#include <stdint.h>

#include "fs/views/gr2/view_granny.h"
#include "parse/base/err.h"
#include "parse/gr2/gr2obj.h"

/* Adds animation.glb (or animation.error) for animation number `index` at (type, obj) to
 * dir, and the /info lines about groups without a skeleton. Under the tree lock. */
void gr2_anim_glb_add(struct gr2_view *v, const struct gr2_space *sp, struct gr2_ref type, struct gr2_ref obj,
                      uint32_t index, uint32_t dir);

struct glb;
struct mdl_skeleton;
/* model.glb's animations: the track groups of every animation of the file that play on the
 * model's skeleton (all their tracks name its bones), as glTF animations (named as the
 * animation, "ANIMATION/GROUP" when it has several groups) on its bone nodes 0..B-1.
 * S3_OK, or the reason with err (NOMEM fails model.glb; any other: it is made without
 * them). */
enum s3_err gr2_anim_into_model(struct glb *gl, struct gr2_types *reg, const struct gr2_space *sp,
                                const struct mdl_skeleton *skel, char *err, size_t errlen);

#endif
