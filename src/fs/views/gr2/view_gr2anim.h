/* Granny animations in the object tree: knots.csv and controls.csv per curve, samples.csv
 * per transform and vector track, entries.csv per text track, animation.glb per
 * Animation, and /granny/animations. Which objects are curves, tracks and animations
 * comes from an index built once from root.Animations and root.TrackGroups, so files
 * whose names are remapped get the same files.
 * - gr2_anim_add: once per struct directory, under the tree lock, with sp pinned. */
#ifndef S3_VIEW_GR2ANIM_H
#define S3_VIEW_GR2ANIM_H

#include "fs/views/gr2/view_granny.h"
#include "parse/gr2/gr2obj.h"

struct gr2_anim;

struct gr2_anim *gr2_anim_new(struct gr2_view *v);
void gr2_anim_free(struct gr2_anim *a);
/* Tests: the CSV bytes counted against the file's text budget so far (a listing that
 * failed counts nothing: its retry measures again). */
uint64_t gr2_anim_text_measured(const struct gr2_anim *a);

/* The files an animation object gets, in its directory dir (nothing for other objects).
 * Runs under the tree lock (a populate callback). */
void gr2_anim_add(struct gr2_anim *a, const struct gr2_space *sp, struct gr2_ref type, struct gr2_ref obj,
                  uint32_t dir);

#endif
