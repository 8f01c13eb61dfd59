/* One error convention for every layer: a function that can fail returns enum s3_err
 * (S3_OK or the reason) and, where it has one, writes the detail to its message buffer.
 * - Reasons are kinds, not places: the message says where.
 * - s3_err_str never returns NULL; s3_err_errno maps a reason to the errno FUSE returns.
 * - alloc_array(n, size): zeroed, overflow-checked; n == 0 is a valid empty array (a
 *   pointer to free), NULL only when the allocation fails. */
#ifndef S3_ERR_H
#define S3_ERR_H

#include <stddef.h>

enum s3_err {
    S3_OK = 0,
    S3_ERR_NOMEM,       /* an allocation failed */
    S3_ERR_IO,          /* the bytes could not be read (the source failed or changed) */
    S3_ERR_FORMAT,      /* bad bytes: a value the format does not allow */
    S3_ERR_RANGE,       /* past the end: the file is cut, or an offset points outside */
    S3_ERR_LIMIT,       /* a bound of ours was hit (a count, a size, the node limit) */
    S3_ERR_UNSUPPORTED, /* valid, but a variant this version does not read */
    S3_ERR_COUNT
};

const char *s3_err_str(enum s3_err e);
/* Writes a one-line message into err (nothing when err is NULL or errlen is 0) and
 * returns e: `return s3_fail(S3_ERR_RANGE, err, errlen, "...", ...);`. */
enum s3_err s3_fail(enum s3_err e, char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int s3_err_errno(enum s3_err e);

void *alloc_array(size_t n, size_t size);

#endif
