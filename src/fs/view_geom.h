/* The GEOM view (view_geom.c): a Sims 3/4 body mesh in its RCOL wrapper as /rcol, /geom
 * and /mesh.glb + /mesh.obj, bound to a rig of the package holding it or to -o rig=. */
#ifndef S3_VIEW_GEOM_H
#define S3_VIEW_GEOM_H

#include "fs/view.h"

s3_view_open_fn geom_view_open;

#endif
