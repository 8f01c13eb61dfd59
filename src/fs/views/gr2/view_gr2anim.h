/* Granny animations in the object tree (view_gr2anim.c): knots.csv and controls.csv in
 * every curve's directory, samples.csv in every transform and vector track's, entries.csv
 * in every text track's, animation.glb in every Animation's, and /granny/animations.
 * Which objects are curves, tracks and animations (and which animation a track plays in)
 * comes from an index built once from root.Animations and root.TrackGroups, so files
 * whose names are remapped get the same files. The object tree (view_gr2obj.c) calls
 * gr2_anim_add for each struct directory it fills. */
#ifndef S3_VIEW_GR2ANIM_H
#define S3_VIEW_GR2ANIM_H

#include "fs/views/gr2/view_granny.h"
#include "parse/gr2/gr2obj.h"

struct gr2_anim;

struct gr2_anim *gr2_anim_new(struct gr2_view *v);
void gr2_anim_free(struct gr2_anim *a);

/* The files an animation object gets, in its directory dir (nothing for other objects).
 * Runs under the tree lock (a populate callback). */
void gr2_anim_add(struct gr2_anim *a, const struct gr2_space *sp, struct gr2_ref type, struct gr2_ref obj,
                  uint32_t dir);

#endif
