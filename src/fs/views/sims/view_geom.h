/* The GEOM view: a Sims 3/4 body mesh in its RCOL wrapper as /rcol, /geom and /mesh.glb +
 * /mesh.obj, bound to a rig of the package holding it or to -o rig=.
 * - geom_view_counts: process-wide counters, for tests. */
#ifndef S3_VIEW_GEOM_H
#define S3_VIEW_GEOM_H

#include "fs/core/view.h"

s3_view_open_fn geom_view_open;

/* The work of every GEOM view in this process so far, counted so tests prove it linear
 * (never with clocks): bone hashes looked up in the rig (the binding's report, each export
 * build, bones.csv), comparisons made sorting (the material parameters for their
 * directory names, the hashes missing from the rig) and triangles the normal repair went
 * through (geom_report's counters, summed). */
struct geom_view_counts {
    uint64_t lookups, compares, repair_faces;
};
void geom_view_counts(struct geom_view_counts *out);

#endif
