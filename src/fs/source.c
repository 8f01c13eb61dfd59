#include "fs/source.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int source_read_cb(void *ctx, uint64_t off, void *buf, size_t len)
{
    return source_pread(ctx, off, buf, len);
}

int source_open(struct source *s, const char *path, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    s->fd = -1;
    char *abs = realpath(path, NULL);
    if (!abs) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    int fd = open(abs, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        free(abs);
        return -1;
    }
    if (fstat(fd, &s->st) != 0 || !S_ISREG(s->st.st_mode)) {
        snprintf(err, errlen, "%s: not a regular file", path);
        close(fd);
        free(abs);
        return -1;
    }
    s->fd = fd;
    s->path = abs;
    s->size = (uint64_t)s->st.st_size;
    s->src.read = source_read_cb;
    s->src.ctx = s;
    s->src.size = s->size;
    return 0;
}

void source_mem(struct source *s, const void *data, uint64_t size)
{
    memset(s, 0, sizeof *s);
    s->fd = -1;
    s->mem = data;
    s->size = size;
    s->src.read = source_read_cb;
    s->src.ctx = s;
    s->src.size = size;
}

void source_close(struct source *s)
{
    if (s->fd >= 0)
        close(s->fd);
    free(s->path);
    s->fd = -1;
    s->path = NULL;
}

int source_check(struct source *s)
{
    if (s->fd < 0)
        return 0;
    struct stat now;
    if (fstat(s->fd, &now) != 0)
        return -EIO;
    if (now.st_size != s->st.st_size || now.st_nlink == 0 || now.st_mtim.tv_sec != s->st.st_mtim.tv_sec ||
        now.st_mtim.tv_nsec != s->st.st_mtim.tv_nsec)
        return -EIO;
    return 0;
}

int source_pread(struct source *s, uint64_t off, void *buf, size_t len)
{
    if (!range_ok(off, len, s->size))
        return -ERANGE;
    if (s->mem) {
        memcpy(buf, s->mem + off, len);
        return 0;
    }
    uint8_t *p = buf;
    while (len > 0) {
        ssize_t n = pread(s->fd, p, len, (off_t)off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -EIO;
        p += n;
        off += (uint64_t)n;
        len -= (size_t)n;
    }
    return 0;
}

int source_pread_checked(struct source *s, uint64_t off, void *buf, size_t len)
{
    int rc = source_check(s);
    return rc ? rc : source_pread(s, off, buf, len);
}

static int window_read(void *ctx, uint64_t off, void *buf, size_t len)
{
    struct source_window *w = ctx;
    if (len > SOURCE_WINDOW / 2)
        return source_pread(w->src, off, buf, len);
    if (off < w->off || off + len > w->off + w->len) {
        size_t n = SOURCE_WINDOW;
        if (off + n > w->src->size)
            n = (size_t)(w->src->size - off);
        int rc = source_pread(w->src, off, w->buf, n);
        if (rc) {
            w->len = 0;
            return rc;
        }
        w->off = off;
        w->len = n;
    }
    memcpy(buf, w->buf + (off - w->off), len);
    return 0;
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
