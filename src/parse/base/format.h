/* What a format's detection is given and gives: the format enum (one value per row of the
 * format table) and s3_detect_fn.
 * - A parser declares its detection as `s3_detect_fn CODE_detect;` and includes only this
 *   (detect.c, above the families, calls it through the table).
 * - A detection that refuses may say why in r->why; one that accepts sets the fields of r
 *   its view needs. */
#ifndef S3_FORMAT_H
#define S3_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parse/base/reader.h"

/* The format table every expansion includes. A test build may name a table of its own
 * (one that includes formats.def and adds rows after it) with -DS3_FORMATS_DEF=...; the
 * whole program must then be compiled with the same table. */
#ifndef S3_FORMATS_DEF
#define S3_FORMATS_DEF "formats.def"
#endif

/* FMT_UNKNOWN, then one value per row of src/formats.def, in its order. */
enum s3_format {
    FMT_UNKNOWN,
#define FORMAT(id, ...) FMT_##id,
#include S3_FORMATS_DEF
#undef FORMAT
    FMT_COUNT
};

struct detect_result {
    enum s3_format format;
    bool big_endian;   /* the byte order, for a format that has either */
    uint64_t root_off; /* where the root table starts (0 or 8), for a format that has one */
    bool root_cut;     /* the root's offsets run past the end of the file (cut short) */
    char why[200];     /* for FMT_UNKNOWN: the reason, one line */
};

/* A format's detection: head holds the file's first n bytes (n < 16 only when the file
 * is that short); true when the file is this format (r's format-specific fields set). */
typedef bool s3_detect_fn(const struct s3_src *src, const uint8_t *head, size_t n, struct detect_result *r);

#endif
