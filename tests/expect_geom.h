/* What the tree of a GEOM written by fxgeom_build holds (paths, contents, sizes, spans,
 * types), from the builder's tables and layout: checked in-process (test_geom) and
 * through a mount (test_mount) with ex_check. */
#ifndef S3_EXPECT_GEOM_H
#define S3_EXPECT_GEOM_H

#include "expect.h"
#include "fixture_geom.h"

/* The GEOM mounted at the root. names: per entry of the bone-hash list, the name of the
 * rig bone it binds to (NULL entries: none; names NULL: the mesh is not bound). */
void ex_geom(struct expect_list *l, const uint8_t *file, size_t size, const struct fxgeom_opts *o,
             const struct fxgeom_layout *lay, const char *const *names);

#endif
