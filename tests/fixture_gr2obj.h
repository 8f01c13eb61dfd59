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
    bool oodle0_objects; /* store the object section Oodle0-compressed (early Granny 2 exporters) */
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
/* fxg_build(o) wrapped in the sample rig (fx_sample_rig_opts: its chains and lists): the
 * rig's bytes, the Granny file's result in *r and the rig's layout in *rl. */
uint8_t *fxg_sample_rig(const struct fxg_opts *o, struct fxg_result *r, size_t *size, struct fx_rig_layout *rl);

/* A texture-like model file: a texture whose PixelBytes is one byte array, a mesh of
 * nvertices vertices (Position[3] Normal[3] UV[2] floats, BoneIndices[4] BoneWeights[4]
 * bytes) and ntris UInt16 triangles, a skeleton of nbones bones (Name, ParentIndex,
 * Transform, InverseWorldTransform[16]), a model pointing at the skeleton, and an
 * empty Animations array. With string_table_crc non-zero every object string slot holds
 * a CRC (0x5EED0000 + the string's serial number, counting from 0 in the order written:
 * texture name, mesh name, bone names, skeleton, model) instead of a pointer, as files
 * whose strings were remapped to an external table do; except the first crc_from ones,
 * which still point at their text (real files carry a string_table_crc with ordinary
 * strings: crc_from UINT32_MAX). */
struct fxg_big_opts {
    const char *sig;
    uint32_t npixels, nvertices, ntris, nbones;
    bool no_skeleton;          /* Skeletons present in the type but empty (animation-like) */
    bool oodle1;               /* the object section stored Oodle1-compressed */
    uint32_t string_table_crc; /* non-zero: remapped strings */
    uint32_t crc_from;         /* with string_table_crc: the strings before this one are text */
};

struct fxg_big_result {
    uint8_t *section; /* the object section's expanded bytes (malloc'd; free it) */
    uint32_t section_size;
    uint32_t pixels_at, vertices_at, indices_at; /* offsets in the section */
    uint32_t vertex_size;
    uint32_t texture_name_crc, bone0_name_crc; /* remapped: the CRCs written */
    struct fx_gr2_layout layout;
};

uint8_t *fxg_build_big(const struct fxg_big_opts *o, size_t *size, struct fxg_big_result *r);

/* A Granny file whose root type has n UInt32 members (at most FXG_MAX_MEMBERS, the most a
 * type may have), all named "Bone" when same, else m0, m1, ...; the root object holds
 * member k's value k. The object section (uncompressed) is the file's only one. */
#define FXG_MAX_MEMBERS 4095
uint8_t *fxg_build_members(uint32_t n, bool same, size_t *size, struct fx_gr2_layout *lay);
/* A Granny file whose root type has one member, String "Names" of `width` slots (at most
 * FXG_MAX_STRING_SLOTS: one fixup each), over one string of `len` letters
 * (fxg_repeated_letter): slot k points `step`·k bytes into it (step 0: all at its start),
 * so the value file /granny/root/Names holds row k = the string from step·k on. */
#define FXG_MAX_STRING_SLOTS 4000
uint8_t *fxg_build_repeated_string(uint32_t width, uint32_t len, uint32_t step, size_t *size);
/* Letter i of that string. */
char fxg_repeated_letter(uint32_t i);
/* A Granny file whose root type has n unnamed Inline members (at most FXG_MAX_MEMBERS),
 * member k of type k, a struct of one UInt32: n + 1 types in all. The root object holds
 * member k's value k. One object section (uncompressed). */
uint8_t *fxg_build_types(uint32_t n, size_t *size, struct fx_gr2_layout *lay);

/* A Granny file of nsections sections (2..FX_MAX_SECTIONS): section 0 (stored as is) holds
 * the types and a root of Part_1 .. Part_{n-1}, each a reference to the start of section
 * k: Magic 0x54524150, Index k, and Values, a table of FXG_SECTION_VALUES UInt32s v
 * (k·1000 + j) right after it; the rest of each section is filler. Sections 1.. are
 * section_size bytes each, BitKnit2-compressed. */
#define FXG_SECTION_VALUES 64
/* A section's size at the least (its part's head: Magic, Index, the Values reference and
 * the values) and, in MiB, at the most (a u32). fxg_build_sections refuses others (NULL). */
#define FXG_SECTION_MIN (4 * (4 + FXG_SECTION_VALUES))
#define FXG_SECTION_MAX_MB 4095
struct fxg_sections_opts {
    uint32_t nsections, section_size;
};
struct fxg_sections_result {
    uint32_t nsections;
    uint8_t *section[FX_MAX_SECTIONS]; /* each section's expanded bytes (fxg_sections_free) */
    uint32_t section_size[FX_MAX_SECTIONS];
    struct fx_gr2_layout layout;
};
uint8_t *fxg_build_sections(const struct fxg_sections_opts *o, size_t *size, struct fxg_sections_result *r);
/* A Granny file of three sections: section 0 (stored) holds the types and a root whose
 * Parts is an array of nparts references (at most 4096), part j in section 1 + j % 2 at
 * FXG_PART_STRIDE · (j / 2): Magic 0x54524150, Index j, Values empty. Sections 1 and 2 are
 * section_size bytes (more when the parts need it), BitKnit2-compressed. Walking the
 * parts in order uses sections 1 and 2 in turn. */
#define FXG_PART_STRIDE 512u
uint8_t *fxg_build_alternating(uint32_t nparts, uint32_t section_size, size_t *size, struct fxg_sections_result *r);
void fxg_sections_free(struct fxg_sections_result *r);

#endif
