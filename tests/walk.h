/* Visits every node of a tree in-process (explicit stack, no recursion) and reads every
 * file and link: what the fuzz targets and the regression test do to each input. */
#ifndef S3_WALK_H
#define S3_WALK_H

#include <stddef.h>

#include "fs/view.h"

/* Returns the number of nodes visited (at most max_nodes). */
size_t walk_all(struct s3fs *fs, size_t max_nodes);

#endif
