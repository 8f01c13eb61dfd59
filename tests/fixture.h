/* Fixture builders: write valid (or deliberately broken) files of every format the
 * project reads, recording where each structure went so tests can compare the mounted
 * tree with what was written. Independent of src/parse: own writers, own tables. */
#ifndef S3_FIXTURE_H
#define S3_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FX_MAX_SECTIONS 16
#define FX_MAX_CHAINS 16

struct fxbuf {
    uint8_t *p;
    size_t len, cap;
    bool be;
};

void fx_put(struct fxbuf *b, const void *data, size_t n);
void fx_u8(struct fxbuf *b, uint8_t v);
void fx_u16(struct fxbuf *b, uint16_t v);
void fx_u32(struct fxbuf *b, uint32_t v);
void fx_f32(struct fxbuf *b, float v);
void fx_fill(struct fxbuf *b, uint8_t v, size_t n);
void fx_align(struct fxbuf *b, size_t a, uint8_t fill);
void fx_patch_u32(struct fxbuf *b, size_t at, uint32_t v);

/* ---- Granny ---- */
struct fx_fixup {
    uint32_t from, to_section, to_offset;
};
struct fx_marshal {
    uint32_t count, offset, type_section, type_offset;
};
struct fx_section {
    uint32_t compression;
    const uint8_t *data;
    uint32_t data_size;
    uint32_t expanded_size; /* 0: same as data_size */
    uint32_t alignment, first16bit, first8bit;
    const struct fx_fixup *fixups;
    uint32_t nfixups;
    const struct fx_marshal *marshals;
    uint32_t nmarshals;
    uint32_t gap_after; /* bytes of 0xAB after this section's tables (for /unparsed) */
    /* BitKnit2: store data (data_size bytes, the expanded ones) as a BitKnit2 stream with
     * compression 4, and each table of count > 0 as a u32 byte count and a stream; the
     * stream's stored size padded with zeros to a multiple of 4 when bitknit2_padded
     * (as in BG3 files), else exact, followed by 0-3 zero bytes of alignment. */
    bool bitknit2, bitknit2_padded;
};
struct fx_gr2_opts {
    int version;         /* 6 or 7 */
    const char *sig;     /* le32-old le32 le64 be32 be64 be32-old be32-alt be64-alt */
    uint32_t type_tag;
    uint32_t extra_tags[4];
    uint32_t string_table_crc;
    uint32_t root_type[2], root_object[2];
    bool corrupt_crc;
};
struct fx_gr2_layout {
    uint32_t header_length, section_array_offset, headers_size, total_size, crc;
    uint32_t data_offset[FX_MAX_SECTIONS], fixup_offset[FX_MAX_SECTIONS], marshal_offset[FX_MAX_SECTIONS];
    uint32_t data_size[FX_MAX_SECTIONS], nmarshals[FX_MAX_SECTIONS], gap_after[FX_MAX_SECTIONS];
    uint32_t nsections;
    uint8_t magic[16];
    bool be;
    /* bytes each table occupies (count × 12 / 16, or 4 + the stream when compressed) */
    uint32_t fixup_stored[FX_MAX_SECTIONS], marshal_stored[FX_MAX_SECTIONS], alignment[FX_MAX_SECTIONS];
};
/* Returns a malloc'd file. */
uint8_t *fx_build_gr2(const struct fx_gr2_opts *o, const struct fx_section *s, uint32_t n, size_t *size,
                      struct fx_gr2_layout *lay);
/* A small GR2 with three sections (data + fixups, empty oodle1, stored bytes) */
uint8_t *fx_sample_gr2(const char *sig, int version, size_t *size, struct fx_gr2_layout *lay);

/* ---- wrapped RIG ---- */
struct fx_link {
    int32_t end, start;
};
struct fx_chain {
    uint32_t unknown_0, length;
    int32_t pole, pole_root, slot_info, slot_info_root, slot_offset, slot_offset_root;
    uint32_t info_node_flags;
    int32_t info_nodes[10];
    int32_t info_root, root;
    uint32_t link_values[8];
    struct fx_link links[8];
};
struct fx_rig_opts {
    const uint8_t *granny;
    size_t granny_size;
    const struct fx_chain *chains;
    uint32_t nchains;
    bool offsets_from_table; /* the writer's reading instead of the seed's */
    const int32_t *lists[4];
    uint32_t list_count[4];
    uint32_t unused[4];
};
struct fx_rig_layout {
    uint64_t granny_pos, ik_pos, entry_pos[FX_MAX_CHAINS], entry_size[FX_MAX_CHAINS], list_pos[4];
    uint64_t unknown_pos; /* the 56 unknown bytes */
    uint32_t header[13];
    size_t size;
};
uint8_t *fx_build_rig(const struct fx_rig_opts *o, size_t *size, struct fx_rig_layout *lay);
/* The demo/sample rig: 2 chains, 4 lists, a GR2 with a 16-bone skeleton inside
 * (fxg_build, le32-old v6). bone_names (optional) receives the 16 names. */
#define FX_SAMPLE_BONES 16
uint8_t *fx_sample_rig(size_t *size, struct fx_rig_layout *lay, struct fx_gr2_layout *glay,
                       char (*bone_names)[32]);
extern const struct fx_chain fx_sample_chains[2];
extern const int32_t fx_sample_lists[4][6];
extern const uint32_t fx_sample_list_count[4];
/* The sample rig's options (its 2 chains and 4 lists) around the Granny bytes given. */
struct fx_rig_opts fx_sample_rig_opts(const uint8_t *granny, size_t granny_size);

/* Writes bytes to a file; 0 or -1. */
int fx_write_file(const char *path, const void *data, size_t size);

#endif
