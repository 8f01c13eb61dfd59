/* Which format a file is, from its first bytes, and the format table's parse-level
 * columns (src/formats.def).
 * - detect_format: S3_OK with r->format set; else the reason (IO: the first bytes could
 *   not be read; FORMAT: no format takes the file) and the detail in r->why (one line). */
#ifndef S3_DETECT_H
#define S3_DETECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parse/base/err.h"
#include "parse/base/format.h"
#include "parse/base/reader.h"

enum s3_err detect_format(const struct s3_src *src, struct detect_result *out);
const char *format_name(enum s3_format f);

/* A row of src/formats.def (the columns are described there), less the view. */
struct s3_format_info {
    const char *name, *code, *noun;
    s3_detect_fn *detect;
    uint32_t pkg_type;
    const char *pkg_dir;
    size_t fuzz_cut;
    const char *fuzz_prefix, *seeds, *usage;
};
/* By enum s3_format; s3_formats[FMT_UNKNOWN] is all empty. */
extern const struct s3_format_info s3_formats[FMT_COUNT];

/* The formats' nouns (column: offsetof(struct s3_format_info, noun)) or usage words,
 * each said once, in table order, as "A, B, C or D". Returns the length (snprintf's). */
int format_list(char *out, size_t size, size_t column);

#endif
