/* A GEOM as a model.h model, bound to a rig when one is given: every rig bone a joint, the
 * vertices' influences mapped through the GEOM's bone hashes to the rig's bones
 * (docs/formats/geom.md, "Binding to glTF"), the traps of real files handled and counted
 * (zero normals rebuilt, weights renormalised, missing hashes dropped, broken triangles
 * left out).
 * - Pure; its work is counted (struct geom_report) so tests can bound it. */
#ifndef S3_GEOM_MODEL_H
#define S3_GEOM_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "parse/sims/geom.h"
#include "parse/base/model.h"
#include "parse/base/rigset.h"

/* What binding and export had to change; each non-zero count is one /info warning. */
struct geom_report {
    uint32_t zero_normals;     /* zero-length (or not finite) normals rebuilt from faces */
    uint32_t unit_normals;     /* normals that were not unit length, normalised */
    uint32_t renormalised;     /* vertices whose weights did not sum to 1, divided by their sum */
    uint32_t missing_vertices; /* vertices that lost influences to hashes missing from the rig */
    uint32_t past_list;        /* weighted influences whose byte is past the hash list (dropped) */
    uint32_t unweighted;       /* vertices left with no influence: bound wholly to bone 0 */
    uint32_t tris_left_out;    /* triangles not whole or naming a vertex past the vertices */
    uint32_t *missing;         /* the hashes missing from the rig, sorted, each once (malloc'd) */
    uint32_t nmissing;
    bool skinned;              /* joints and weights were written */
    char unskinned_why[120];   /* with a rig, why the mesh is not skinned (no bone declarations) */
    /* The work done, counted so tests can prove it linear in the lists (no clocks): */
    uint64_t lookups;      /* bone hashes looked up in the rig (rig_bone_of: a binary search of
                              at most log2(bones) + 1 steps each, so steps follow lookups) */
    uint64_t compares;     /* comparisons sorting the missing hashes (n log n at most) */
    uint64_t repair_faces; /* triangles the normal repair accumulated (each once at most: the
                              faces around a vertex are never searched for) */
};
void geom_report_free(struct geom_report *r);

/* The hashes of the GEOM's bone list that no bone of rig has, sorted, each once, into
 * rep->missing (malloc'd) and rep->nmissing, the work added to rep's counters: S3_OK, or
 * NOMEM. */
enum s3_err geom_missing_hashes(const struct geom *g, const struct rig_entry *rig, struct geom_report *rep);

/* The GEOM's one mesh (named "geom") in a model, skinned to rig when rig is not NULL and
 * the GEOM has bone and weight declarations. S3_OK, or the reason with err (FORMAT: no
 * positions, a value that is not finite; RANGE: vertices or indices cut by the chunk's
 * end; NOMEM; rep then holds only the work counters). rep may be NULL. */
enum s3_err geom_model(const struct geom *g, const struct rig_entry *rig, struct mdl_model *out,
                       struct geom_report *rep, char *err, size_t errlen);

#endif
