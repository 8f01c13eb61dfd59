/* Format detection from the first bytes of a file, and the format table's data (one
 * row per format in src/formats.def, expanded here for the parse layer). */
#ifndef S3_DETECT_H
#define S3_DETECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parse/reader.h"

/* FMT_UNKNOWN, then one value per row of src/formats.def, in its order. */
enum s3_format {
    FMT_UNKNOWN,
#define FORMAT(id, ...) FMT_##id,
#include "formats.def"
#undef FORMAT
    FMT_COUNT
};

struct detect_result {
    enum s3_format format;
    bool big_endian;   /* t2fs */
    uint64_t root_off; /* t2fs: 0 or 8 */
    bool root_cut;     /* t2fs: the root's offsets run past the end of the file (cut short) */
    char why[200];     /* for FMT_UNKNOWN: the reason, one line */
};

int detect_format(const struct s3_src *src, struct detect_result *out);
const char *format_name(enum s3_format f);

/* A format's detection: head holds the file's first n bytes (n < 16 only when the file
 * is that short); true when the file is this format (r's format-specific fields set). */
typedef bool s3_detect_fn(const struct s3_src *src, const uint8_t *head, size_t n, struct detect_result *r);

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

/* The strong validity test of a t2fs branch (formats/t2fs.md) at off, given `space`
 * bytes for it. Reads at most the offset table, which must fit inside space. */
bool t2fs_branch_valid(const struct s3_src *src, uint64_t off, uint64_t space, bool big_endian);

#endif
