/* Visits every node of a tree in-process (explicit stack, no recursion) and reads every
 * file and link: what the fuzz targets and the regression test do to each input. */
#ifndef S3_WALK_H
#define S3_WALK_H

#include <stdbool.h>
#include <stddef.h>

#include "fs/view.h"

/* True when a symlink's target, resolved from the directory holding it, stays inside
 * the tree (relative, never climbing above the root). */
bool link_stays_inside(struct tree *t, uint32_t ino);

/* Returns the number of nodes visited (at most max_nodes). Aborts on a link that
 * leaves the tree, so fuzzing treats it as a crash. */
size_t walk_all(struct s3fs *fs, size_t max_nodes);

#endif
