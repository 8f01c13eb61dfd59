#include "parse/base/err.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *const err_text[S3_ERR_COUNT] = {
    [S3_OK] = "no error",
    [S3_ERR_NOMEM] = "out of memory",
    [S3_ERR_IO] = "read error",
    [S3_ERR_FORMAT] = "bad bytes",
    [S3_ERR_RANGE] = "past the end of the data",
    [S3_ERR_LIMIT] = "over a limit",
    [S3_ERR_UNSUPPORTED] = "not supported",
    [S3_ERR_NOT_FOUND] = "no such file or directory",
    [S3_ERR_NOT_DIR] = "not a directory",
    [S3_ERR_IS_DIR] = "is a directory",
    [S3_ERR_STALE] = "stale file handle",
    [S3_ERR_READONLY] = "read-only",
    [S3_ERR_TOO_BIG] = "too large",
    [S3_ERR_BUSY] = "busy",
    [S3_ERR_INVALID] = "invalid request",
    [S3_ERR_DENIED] = "permission denied",
    [S3_ERR_NOSPACE] = "no space left",
    [S3_ERR_NO_ATTR] = "no such attribute",
};

/* The errno of each reason; 0 for S3_OK. FORMAT and LIMIT read as EIO: FUSE has no errno
 * for them, the message says which. */
static const int err_errno[S3_ERR_COUNT] = {
    [S3_OK] = 0,
    [S3_ERR_NOMEM] = ENOMEM,
    [S3_ERR_IO] = EIO,
    [S3_ERR_FORMAT] = EIO,
    [S3_ERR_RANGE] = ERANGE,
    [S3_ERR_LIMIT] = EIO,
    [S3_ERR_UNSUPPORTED] = ENOTSUP,
    [S3_ERR_NOT_FOUND] = ENOENT,
    [S3_ERR_NOT_DIR] = ENOTDIR,
    [S3_ERR_IS_DIR] = EISDIR,
    [S3_ERR_STALE] = ESTALE,
    [S3_ERR_READONLY] = EROFS,
    [S3_ERR_TOO_BIG] = EFBIG,
    [S3_ERR_BUSY] = EBUSY,
    [S3_ERR_INVALID] = EINVAL,
    [S3_ERR_DENIED] = EACCES,
    [S3_ERR_NOSPACE] = ENOSPC,
    [S3_ERR_NO_ATTR] = ENODATA,
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
    return (unsigned)e < S3_ERR_COUNT ? err_errno[e] : EIO;
}

enum s3_err s3_err_of_errno(int errnum)
{
    if (errnum == 0)
        return S3_OK;
    if (errnum == EPERM) /* the kernel's word for what is not ours to change, too */
        return S3_ERR_DENIED;
    for (int e = S3_ERR_NOMEM; e < S3_ERR_COUNT; e++)
        if (err_errno[e] == errnum && e != S3_ERR_FORMAT && e != S3_ERR_LIMIT)
            return (enum s3_err)e;
    return S3_ERR_IO;
}

/* calloc checks n * size itself; n == 0 (or size == 0) asks for one byte, so an empty
 * array is a real pointer and NULL always means the allocation failed. */
void *alloc_array(size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        return NULL;
    return calloc(n ? n : 1, size ? size : 1);
}

enum s3_err grow_array(void *arrp, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return S3_OK;
    size_t n = *cap > SIZE_MAX / 2 ? SIZE_MAX : 2 * *cap;
    if (n < 8)
        n = 8;
    if (n < need)
        n = need;
    if (elem && n > SIZE_MAX / elem) /* doubling past the bound: just what is needed */
        n = need;
    if (elem && n > SIZE_MAX / elem)
        return S3_ERR_NOMEM;
    /* the caller's pointer is read and written as bytes: it may be of any object type */
    void *old, *p;
    memcpy(&old, arrp, sizeof old);
    if (!(p = realloc(old, n * (elem ? elem : 1))))
        return S3_ERR_NOMEM;
    memcpy(arrp, &p, sizeof p);
    *cap = n;
    return S3_OK;
}
