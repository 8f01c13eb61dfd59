/* Granny 3D (.gr2) container: signature, magic block, file header, section headers,
 * fixup and marshalling tables. Facts: shared/formats/gr2.md. No decompression here;
 * the object tree (types, pointers) lives elsewhere. */
#ifndef S3_GR2_H
#define S3_GR2_H

#include <stdbool.h>
#include <stdint.h>

#include "parse/diag.h"
#include "parse/reader.h"

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
};

/* Parses the container starting at `base`. Returns 0 on success; a negative value when
 * the signature or header cannot be read (err says why). Warnings go to d. */
int gr2_parse(const struct s3_src *src, uint64_t base, struct gr2_file *out, struct diag *d,
              char *err, size_t errlen);
void gr2_free(struct gr2_file *g);

const char *gr2_compression_name(uint32_t code);

/* Reads a section's fixup / marshalling table. *out is malloc'd (NULL when count 0). */
int gr2_read_fixups(const struct s3_src *src, const struct gr2_file *g, uint32_t sec,
                    struct gr2_fixup **out, uint32_t *count);
int gr2_read_marshals(const struct s3_src *src, const struct gr2_file *g, uint32_t sec,
                      struct gr2_marshal **out, uint32_t *count);

/* CRC-32 (zlib) of src[off, off+len), read in chunks. */
int crc32_range(const struct s3_src *src, uint64_t off, uint64_t len, uint32_t *out);

#endif
