/* Format detection from the first bytes of a file. */
#ifndef S3_DETECT_H
#define S3_DETECT_H

#include <stdbool.h>
#include <stdint.h>

#include "parse/reader.h"

enum s3_format { FMT_UNKNOWN, FMT_RIG_WRAPPED, FMT_RIG_CLEAR, FMT_GR2, FMT_T2FS, FMT_DBPF };

struct detect_result {
    enum s3_format format;
    bool big_endian;   /* t2fs */
    uint64_t root_off; /* t2fs: 0 or 8 */
    bool root_cut;     /* t2fs: the root's offsets run past the end of the file (cut short) */
    char why[200];     /* for FMT_UNKNOWN: the reason, one line */
};

int detect_format(const struct s3_src *src, struct detect_result *out);
const char *format_name(enum s3_format f);

/* The strong validity test of a t2fs branch (formats/t2fs.md) at off, given `space`
 * bytes for it. Reads at most the offset table, which must fit inside space. */
bool t2fs_branch_valid(const struct s3_src *src, uint64_t off, uint64_t space, bool big_endian);

#endif
