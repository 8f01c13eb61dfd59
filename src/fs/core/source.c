/* Byte sources. The mounted file is opened once before the FUSE loop starts. Reads use
 * pread (never mmap, so a truncated file cannot raise SIGBUS) and every read first checks
 * that the file is still the one that was parsed: a changed or truncated source turns
 * into -EIO instead of wrong bytes. The open file is what counts, not its path: deleted
 * or replaced by rename, its bytes are still there and still the parsed ones.
 *
 * A source is one of:
 *   - the mounted file (SOURCE_FILE),
 *   - a memory buffer (SOURCE_MEM: tests, fuzzing),
 *   - a slice of another source (SOURCE_SLICE: a stored part inside a container),
 *   - the expanded bytes of a compressed part (SOURCE_EXPANDED), held by the bounded
 *     cache: read through cache_pin, so an evicted item is simply expanded again
 *     (unless held: source_hold).
 * Derived sources check their parent for changes, so a change of the mounted file is
 * EIO at every level. */
#include "fs/core/source.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static enum s3_err source_read_cb(void *ctx, uint64_t off, void *buf, size_t len)
{
    return source_pread(ctx, off, buf, len);
}

enum s3_err source_open(struct source *s, const char *path, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    s->fd = -1;
    char *abs = realpath(path, NULL);
    if (!abs) {
        int errnum = errno;
        return s3_fail(s3_err_of_errno(errnum), err, errlen, "%s: %s", path, strerror(errnum));
    }
    enum s3_err e = S3_OK;
    int fd = open(abs, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int errnum = errno;
        e = s3_fail(s3_err_of_errno(errnum), err, errlen, "%s: %s", path, strerror(errnum));
    } else if (fstat(fd, &s->st) != 0) {
        int errnum = errno;
        e = s3_fail(s3_err_of_errno(errnum), err, errlen, "%s: %s", path, strerror(errnum));
    } else if (!S_ISREG(s->st.st_mode)) {
        e = s3_fail(S_ISDIR(s->st.st_mode) ? S3_ERR_IS_DIR : S3_ERR_INVALID, err, errlen, "%s: not a regular file",
                    path);
    }
    if (e) {
        if (fd >= 0)
            close(fd);
        free(abs);
        return e;
    }
    s->kind = SOURCE_FILE;
    s->fd = fd;
    s->path = abs;
    s->size = (uint64_t)s->st.st_size;
    s->src.read = source_read_cb;
    s->src.ctx = s;
    s->src.size = s->size;
    return S3_OK;
}

void source_mem(struct source *s, const void *data, uint64_t size)
{
    memset(s, 0, sizeof *s);
    s->kind = SOURCE_MEM;
    s->fd = -1;
    s->mem = data;
    s->size = size;
    s->src.read = source_read_cb;
    s->src.ctx = s;
    s->src.size = size;
}

void source_slice(struct source *s, struct source *parent, uint64_t off, uint64_t len)
{
    memset(s, 0, sizeof *s);
    s->kind = SOURCE_SLICE;
    s->fd = -1;
    s->parent = parent;
    if (off > parent->size)
        off = parent->size;
    if (len > parent->size - off)
        len = parent->size - off;
    s->base = off;
    s->size = len;
    s->src.read = source_read_cb;
    s->src.ctx = s;
    s->src.size = len;
}

void source_expanded(struct source *s, struct source *parent, struct cache *c, struct cached *item, uint64_t size)
{
    memset(s, 0, sizeof *s);
    s->kind = SOURCE_EXPANDED;
    s->fd = -1;
    s->parent = parent;
    s->cache = c;
    s->item = item;
    s->size = size;
    s->src.read = source_read_cb;
    s->src.ctx = s;
    s->src.size = size;
}

void source_move(struct source *dst, const struct source *src)
{
    *dst = *src;
    dst->src.ctx = dst;
}

void source_close(struct source *s)
{
    if (s->kind == SOURCE_FILE && s->fd >= 0)
        close(s->fd);
    free(s->path);
    s->fd = -1;
    s->path = NULL;
}

enum s3_err source_check(struct source *s)
{
    if (s->kind == SOURCE_SLICE || s->kind == SOURCE_EXPANDED)
        return source_check(s->parent);
    if (s->kind != SOURCE_FILE)
        return S3_OK;
    /* The descriptor's file, not the path: a file deleted or replaced by rename (editors,
     * updaters) keeps its bytes while open, and they are still the parsed ones; only a
     * change of the file itself (its size or modification time) makes them unusable. */
    struct stat now;
    if (fstat(s->fd, &now) != 0)
        return S3_ERR_IO;
    if (now.st_size != s->st.st_size || now.st_mtim.tv_sec != s->st.st_mtim.tv_sec ||
        now.st_mtim.tv_nsec != s->st.st_mtim.tv_nsec)
        return S3_ERR_IO;
    return S3_OK;
}

/* Bytes of an expanded item: pinned for the copy only, so the cache may drop them after. */
static enum s3_err expanded_read(struct source *s, uint64_t off, void *buf, size_t len)
{
    char err[200];
    size_t have;
    const uint8_t *d;
    enum s3_err rc = cache_pin(s->cache, s->item, &d, &have, err, sizeof err);
    if (rc) /* an expansion refused memory: NOMEM to this read, the next expands again */
        return rc == S3_ERR_NOMEM ? rc : S3_ERR_IO;
    rc = range_ok(off, len, have) ? S3_OK : S3_ERR_IO;
    if (rc == S3_OK)
        memcpy(buf, d + off, len);
    cache_unpin(s->cache, s->item);
    return rc;
}

enum s3_err source_pread(struct source *s, uint64_t off, void *buf, size_t len)
{
    if (!range_ok(off, len, s->size))
        return S3_ERR_RANGE;
    if (s->kind == SOURCE_MEM) {
        memcpy(buf, s->mem + off, len);
        return S3_OK;
    }
    if (s->kind == SOURCE_SLICE)
        return source_pread(s->parent, s->base + off, buf, len);
    if (s->kind == SOURCE_EXPANDED)
        return expanded_read(s, off, buf, len);
    uint8_t *p = buf;
    while (len > 0) {
        ssize_t n = pread(s->fd, p, len, (off_t)off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return S3_ERR_IO;
        p += n;
        off += (uint64_t)n;
        len -= (size_t)n;
    }
    return S3_OK;
}

enum s3_err source_pread_checked(struct source *s, uint64_t off, void *buf, size_t len)
{
    enum s3_err rc = source_check(s);
    return rc ? rc : source_pread(s, off, buf, len);
}

int source_file_pos(const struct source *s, uint64_t off, int *fd, uint64_t *pos)
{
    while (s->kind == SOURCE_SLICE) {
        off += s->base;
        s = s->parent;
    }
    if (s->kind != SOURCE_FILE)
        return -1;
    *fd = s->fd;
    *pos = off;
    return 0;
}

const struct source *source_root(const struct source *s)
{
    while (s->kind == SOURCE_SLICE || s->kind == SOURCE_EXPANDED)
        s = s->parent;
    return s->kind == SOURCE_FILE ? s : NULL;
}

void source_hold(struct source *s)
{
    for (; s; s = s->parent)
        if (s->kind == SOURCE_EXPANDED)
            cache_hold(s->cache, s->item);
}

void source_release(struct source *s)
{
    for (; s; s = s->parent)
        if (s->kind == SOURCE_EXPANDED)
            cache_release(s->cache, s->item);
}

void source_hold_handle(struct source *s)
{
    for (; s; s = s->parent)
        if (s->kind == SOURCE_EXPANDED)
            cache_hold_handle(s->cache, s->item);
}

void source_release_handle(struct source *s)
{
    for (; s; s = s->parent)
        if (s->kind == SOURCE_EXPANDED)
            cache_release_handle(s->cache, s->item);
}

bool source_expands(const struct source *s)
{
    for (; s; s = s->parent)
        if (s->kind == SOURCE_EXPANDED)
            return true;
    return false;
}

static enum s3_err window_read(void *ctx, uint64_t off, void *buf, size_t len)
{
    struct source_window *w = ctx;
    if (len > SOURCE_WINDOW / 2)
        return source_pread(w->src, off, buf, len);
    if (off < w->off || off + len > w->off + w->len) {
        size_t n = SOURCE_WINDOW;
        if (off + n > w->src->size)
            n = (size_t)(w->src->size - off);
        enum s3_err rc = source_pread(w->src, off, w->buf, n);
        if (rc) {
            w->len = 0;
            return rc;
        }
        w->off = off;
        w->len = n;
    }
    memcpy(buf, w->buf + (off - w->off), len);
    return S3_OK;
}

void source_window_init(struct source_window *w, struct source *src)
{
    w->src = src;
    w->off = 0;
    w->len = 0;
    w->view.read = window_read;
    w->view.ctx = w;
    w->view.size = src->size;
}
