/* One error convention for every layer: a function that can fail returns enum s3_err
 * (S3_OK or the reason) and, where it has one, writes the detail to its message buffer.
 * - Reasons are kinds, not places: the message says where.
 * - s3_err_str never returns NULL; s3_err_errno maps a reason to the errno FUSE returns,
 *   s3_err_of_errno back (an errno of no reason of ours is IO).
 * - alloc_array(n, size): zeroed, overflow-checked; n == 0 is a valid empty array (a
 *   pointer to free), NULL only when the allocation fails.
 * - grow_array(&arr, &cap, need, sizeof *arr): room for `need` elements in a growing
 *   array (see below). */
#ifndef S3_ERR_H
#define S3_ERR_H

#include <stddef.h>

enum s3_err {
    S3_OK = 0,
    S3_ERR_NOMEM,       /* an allocation failed */
    S3_ERR_IO,          /* the bytes could not be read (the source failed or changed) */
    S3_ERR_FORMAT,      /* bad bytes: a value the format does not allow */
    S3_ERR_RANGE,       /* past the end: the file is cut, an offset points outside, or a
                         * reply is longer than the caller's buffer (ERANGE) */
    S3_ERR_LIMIT,       /* a bound of ours was hit (a count, a size, the node limit) */
    S3_ERR_UNSUPPORTED, /* valid, but a variant this version does not read */
    /* the reasons below are those FUSE must tell apart (each its own errno) */
    S3_ERR_NOT_FOUND,   /* no such node (ENOENT) */
    S3_ERR_NOT_DIR,     /* a directory was asked of something else (ENOTDIR) */
    S3_ERR_IS_DIR,      /* bytes were asked of a directory (EISDIR) */
    S3_ERR_STALE,       /* a node number of an older generation that names nothing now (ESTALE) */
    S3_ERR_READONLY,    /* the node or the mount takes no writes (EROFS) */
    S3_ERR_TOO_BIG,     /* a write past what the node may hold (EFBIG) */
    S3_ERR_BUSY,        /* in use: a published directory, a commit running (EBUSY) */
    S3_ERR_INVALID,     /* a request that makes no sense here: an offset, a value (EINVAL) */
    S3_ERR_DENIED,      /* not ours to change: owner, mode (EACCES) */
    S3_ERR_NOSPACE,     /* the disk is full: a commit's ENOSPC stays ENOSPC (ENOSPC) */
    S3_ERR_NO_ATTR,     /* no such extended attribute on the node (ENODATA) */
    S3_ERR_COUNT
};

const char *s3_err_str(enum s3_err e);
/* Writes a one-line message into err (nothing when err is NULL or errlen is 0) and
 * returns e: `return s3_fail(S3_ERR_RANGE, err, errlen, "...", ...);`. */
enum s3_err s3_fail(enum s3_err e, char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int s3_err_errno(enum s3_err e);
/* The reason an errno (positive) stands for: the inverse of s3_err_errno where that is
 * one to one (NOMEM, RANGE, UNSUPPORTED and the FUSE reasons); EIO and any errno of no
 * reason of ours is IO. For results of functions that still speak errno (the OS). */
enum s3_err s3_err_of_errno(int errnum);

void *alloc_array(size_t n, size_t size);
/* Room for at least `need` elements of `elem` bytes in the array *arrp points to (arrp is
 * the address of the array's pointer, e.g. &v->skips; the array NULL when *cap is 0),
 * which holds *cap: when need > *cap it is reallocated to twice its capacity, or more
 * (at least 8 elements), and *arrp and *cap are set. S3_OK, or S3_ERR_NOMEM (the
 * allocation failed, or the size overflows) with *arrp and *cap unchanged, so a caller
 * takes room before it changes anything and rolls nothing back. New elements are not
 * cleared. */
enum s3_err grow_array(void *arrp, size_t *cap, size_t need, size_t elem);

#endif
