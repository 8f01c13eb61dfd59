#include "parse/base/err.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>

static const char *const err_text[S3_ERR_COUNT] = {
    [S3_OK] = "no error",
    [S3_ERR_NOMEM] = "out of memory",
    [S3_ERR_IO] = "read error",
    [S3_ERR_FORMAT] = "bad bytes",
    [S3_ERR_RANGE] = "past the end of the data",
    [S3_ERR_LIMIT] = "over a limit",
    [S3_ERR_UNSUPPORTED] = "not supported",
};

const char *s3_err_str(enum s3_err e)
{
    return (unsigned)e < S3_ERR_COUNT ? err_text[e] : "unknown error";
}

enum s3_err s3_fail(enum s3_err e, char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return e;
}

int s3_err_errno(enum s3_err e)
{
    switch (e) {
    case S3_OK:
        return 0;
    case S3_ERR_NOMEM:
        return ENOMEM;
    case S3_ERR_RANGE:
        return ERANGE;
    case S3_ERR_UNSUPPORTED:
        return ENOTSUP;
    default:
        return EIO;
    }
}

/* calloc checks n * size itself; n == 0 (or size == 0) asks for one byte, so an empty
 * array is a real pointer and NULL always means the allocation failed. */
void *alloc_array(size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        return NULL;
    return calloc(n ? n : 1, size ? size : 1);
}
