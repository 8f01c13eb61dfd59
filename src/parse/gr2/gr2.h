/* Granny 3D (.gr2) container: signature, magic block, file header, section headers,
 * fixup and marshalling tables. Facts: docs/formats/gr2.md. No decompression here.
 * - gr2_parse returns enum s3_err; broken sections and tables keep their own messages.
 * - Free with gr2_free (also after a failed parse). */
#ifndef S3_GR2_H
#define S3_GR2_H

#include <stdbool.h>
#include <stdint.h>

#include "parse/base/diag.h"
#include "parse/base/err.h"
#include "parse/base/format.h"
#include "parse/base/reader.h"

#define GR2_MAGIC_SIZE 32
#define GR2_SECTION_HEADER_SIZE 44
#define GR2_FIXUP_SIZE 12
#define GR2_MARSHAL_SIZE 16
#define GR2_ERR 200

enum gr2_compression {
    GR2_COMP_NONE = 0,
    GR2_COMP_OODLE0 = 1,
    GR2_COMP_OODLE1 = 2,
    GR2_COMP_BITKNIT1 = 3,
    GR2_COMP_BITKNIT2 = 4,
};

struct gr2_signature {
    const char *name;  /* e.g. "le32-old" */
    bool big_endian;
    int pointer_bits;  /* 32 or 64 */
    bool alt_spelling; /* the little-endian image of a BE signature (seed spelling) */
};

/* Looks up 16 on-disk bytes in the signature table; NULL when unknown. */
const struct gr2_signature *gr2_match_signature(const uint8_t sig[16]);

struct gr2_ref {
    uint32_t section, offset;
};

struct gr2_fixup {
    uint32_t from_offset, to_section, to_offset;
};

struct gr2_marshal {
    uint32_t count, offset, type_section, type_offset;
};

struct gr2_section {
    uint32_t compression, data_offset, data_size, expanded_size, alignment;
    uint32_t first16bit, first8bit;
    uint32_t fixup_offset, fixup_count, marshal_offset, marshal_count;
    uint64_t header_pos; /* of the 44-byte header, relative to the Granny data */
    bool data_ok;        /* [data_offset, +data_size) lies inside the Granny data */
    char data_err[GR2_ERR];
    bool fixups_ok;
    char fixups_err[GR2_ERR];
    bool marshal_ok;
    char marshal_err[GR2_ERR];
    /* Bytes each table occupies in the file: count × 12 / × 16 as is, or, compressed
     * (gr2_tables_compressed), the u32 byte count and its stream; 0 for count 0 or when
     * the table does not fit (then *_ok is false and *_err says why). */
    uint64_t fixup_stored, marshal_stored;
};

struct gr2_file {
    uint64_t base;  /* absolute offset of the Granny data in the source */
    uint64_t avail; /* bytes of the source from base on */
    uint64_t limit; /* bytes usable for the container: min(total_size, avail) */

    uint8_t magic[16];
    const struct gr2_signature *sig;
    bool be;
    int pointer_bits;

    uint32_t headers_size, header_format, magic_reserved[2];
    uint32_t version, header_length;
    uint32_t total_size, crc, crc_computed;
    bool crc_checked; /* crc_computed is valid */
    uint32_t section_array_offset, section_count;
    struct gr2_ref root_type, root_object;
    uint32_t type_tag, extra_tags[4];
    uint32_t string_table_crc, v7_reserved[3];

    struct gr2_section *sections; /* the headers that exist */
    uint32_t nsections;
    char sections_err[GR2_ERR]; /* non-empty when section_count could not be honoured */
    uint64_t max_expanded; /* largest compressed table expansion accepted; 0: GR2_MAX_EXPANDED.
                            * The caller may set it after gr2_parse (the view's max_unpacked). */
};

#define GR2_MAX_EXPANDED (1ull << 30)

/* Parses the container starting at `base`: S3_OK, or the reason the signature, header or
 * section headers cannot be read (err says where; out is then empty). Warnings go to d. */
enum s3_err gr2_parse(const struct s3_src *src, uint64_t base, struct gr2_file *out, struct diag *d,
                      char *err, size_t errlen);
void gr2_free(struct gr2_file *g);

const char *gr2_compression_name(uint32_t code);

/* True when a section of this compression stores its fixup and marshalling tables
 * compressed too (BitKnit2: a u32 byte count, then a stream of count × 12 / × 16 bytes). */
bool gr2_tables_compressed(uint32_t code);

/* Reads a section's fixup / marshalling table, expanding it when it is compressed.
 * *out is malloc'd (NULL when count 0). S3_OK, or the reason with err (may be NULL):
 * S3_ERR_RANGE (the table lies outside), S3_ERR_IO, S3_ERR_NOMEM, or the codec's. */
enum s3_err gr2_read_fixups(const struct s3_src *src, const struct gr2_file *g, uint32_t sec,
                            struct gr2_fixup **out, uint32_t *count, char *err, size_t errlen);
enum s3_err gr2_read_marshals(const struct s3_src *src, const struct gr2_file *g, uint32_t sec,
                              struct gr2_marshal **out, uint32_t *count, char *err, size_t errlen);

/* Alignment padding: zero bytes right after a piece of a section (its stored data, fixup
 * table or marshalling table), fewer than the section's alignment (and than 64 KiB), up
 * to where the next structure (or the container's end) starts, covered by no structure. */
struct gr2_padding {
    uint64_t off, len;  /* relative to the Granny data */
    uint32_t sec;       /* the section whose piece it follows */
    const char *after;  /* "data", "fixups" or "marshalling" */
};
/* All of a container's padding, in offset order (*out malloc'd). S3_OK or S3_ERR_NOMEM. */
enum s3_err gr2_find_padding(const struct s3_src *src, const struct gr2_file *g, struct gr2_padding **out, size_t *n);

/* The CRC rule (docs/formats/gr2.md): the stored CRC-32 (zlib's), at 0x28 in the Granny
 * data's byte order, covers [0x20 + header_length, total_size) of the data. Where, relative
 * to the data's start: false when total_size does not fit the header and the data. */
struct gr2_crc_span {
    uint64_t field, from, to;
};
bool gr2_crc_span(const struct gr2_file *g, struct gr2_crc_span *out);

/* Section sec written back stored raw (compression 0, which every Granny reader accepts;
 * docs/formats/gr2.md, section header): its new expanded bytes (len) go at `at`, relative
 * to the Granny data, past everything it holds (at >= total_size, a multiple of 4); when
 * its tables were stored compressed with it (gr2_tables_compressed) they follow, raw,
 * 4-aligned. The plan: the section's new header (file byte order, all 44 bytes), the bytes
 * to write right after the new data (padding and tables; *after malloc'd, NULL when
 * none), and the new total_size (its field and bytes). S3_OK, or why not (the tables unreadable, past 4 GiB,
 * no memory). */
struct gr2_raw_plan {
    uint8_t header[GR2_SECTION_HEADER_SIZE];
    uint8_t *after;
    size_t after_len;
    uint64_t total;        /* the new total_size, */
    uint64_t total_field;  /* stored here (relative to the Granny data), */
    uint8_t total_bytes[4]; /* as these bytes */
};
enum s3_err gr2_raw_section_plan(const struct s3_src *src, const struct gr2_file *g, uint32_t sec, uint64_t at,
                                 uint64_t len, struct gr2_raw_plan *p, char *err, size_t errlen);

/* CRC-32 (zlib) of src[off, off+len), read in chunks. */
enum s3_err crc32_range(const struct s3_src *src, uint64_t off, uint64_t len, uint32_t *out);

/* s3_detect_fn: one of the Granny file signatures. */
s3_detect_fn gr2_detect;

#endif
