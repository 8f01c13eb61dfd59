/* Builder of GR2 files with real type definitions and an object graph: root ->
 * ArtToolInfo, ExporterInfo (whose ArtTool points at the same ArtToolInfo: shared),
 * FromFileName, Skeletons (two, the second sharing the first's bones), Misc (every
 * scalar kind, Inline, EmptyReference, a variant array, names that need sanitising),
 * ExtendedData pointing back at the root (a cycle). */
#ifndef S3_FIXTURE_GR2OBJ_H
#define S3_FIXTURE_GR2OBJ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fixture.h"

#define FXG_MAX_BONES 64

struct fxg_bone {
    char name[32];
    int32_t parent;
    uint32_t flags;
    float position[3], orientation[4], scale_shear[9];
    float inverse_world[16];
    float lod_error;
};

struct fxg_opts {
    const char *sig; /* le32, le64, be32, be64, le32-old… */
    int version;
    uint32_t nbones;
    bool oodle1_section; /* put a second section marked Oodle1 (empty of objects) */
    bool oodle1_objects; /* store the object section Oodle1-compressed (the Sims 3 case) */
    /* BitKnit2 (the BG3 case): the object section and its tables compressed; with
     * bitknit2_section an empty BitKnit2 section follows it (instead of oodle1_section's) */
    bool bitknit2_objects, bitknit2_section, bitknit2_padded;
    uint32_t nmarshals; /* marshalling entries for the object section (0..4), as in twins */
};

struct fxg_result {
    struct fxg_bone bones[FXG_MAX_BONES];
    uint32_t nbones;
    struct fx_gr2_layout layout;
    uint32_t section_size;
    uint8_t *section; /* the object section's expanded bytes (malloc'd; free it) */
};

uint8_t *fxg_build(const struct fxg_opts *o, size_t *size, struct fxg_result *r);

#endif
