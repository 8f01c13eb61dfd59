#include "fs/export.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct export_file {
    struct cached c; /* first: the cache hands this pointer back */
    struct s3fs *fs;
    export_build_fn build;
    void *ctx;
    uint64_t size;
    /* Bytes built outside the cache's lock (a build pins other cache items, such as
     * Granny sections), handed to the cache by produce. */
    uint8_t *pending;
    size_t pending_len;
    pthread_mutex_t lock; /* one build at a time per file */
};

static int take_pending(struct cached *c, uint8_t **data, size_t *size, char *err, size_t errlen)
{
    struct export_file *e = (struct export_file *)c;
    if (!e->pending) {
        snprintf(err, errlen, "not built");
        return -1;
    }
    *data = e->pending;
    *size = e->pending_len;
    e->pending = NULL;
    return 0;
}

static void export_free(void *p)
{
    struct export_file *e = p;
    free(e->pending);
    pthread_mutex_destroy(&e->lock);
    free(e);
}

/* The file's bytes pinned in the cache, built first when they are not there. Called
 * with e->lock held. */
static const uint8_t *pin(struct export_file *e, size_t *size, char *err, size_t errlen)
{
    const uint8_t *d = cache_pin(&e->fs->cache, &e->c, size, err, errlen);
    if (d)
        return d;
    if (e->build(e->ctx, &e->pending, &e->pending_len, err, errlen))
        return NULL;
    return cache_pin(&e->fs->cache, &e->c, size, err, errlen);
}

static ssize_t export_read(struct tree *t, void *ctx, uint64_t arg, uint64_t off, void *buf, size_t len)
{
    (void)t, (void)arg;
    struct export_file *e = ctx;
    char err[256];
    size_t size;
    /* the cached bytes were made from the file as it was: a changed file is EIO, like
     * every other read, even when a rebuild would have the same size */
    if (source_check(&e->fs->src))
        return -EIO;
    pthread_mutex_lock(&e->lock);
    const uint8_t *d = pin(e, &size, err, sizeof err);
    ssize_t rc = -EIO;
    if (d && size == e->size) { /* another size: the source changed since the first build */
        size_t n = off < size ? (len < size - off ? len : (size_t)(size - off)) : 0;
        memcpy(buf, d + off, n);
        rc = (ssize_t)n;
    }
    if (d)
        cache_unpin(&e->fs->cache, &e->c);
    pthread_mutex_unlock(&e->lock);
    return rc;
}

uint32_t export_add(struct s3fs *fs, uint32_t dir, const char *name, const char *xtype, export_build_fn build,
                    void *ctx)
{
    char stem[128];
    snprintf(stem, sizeof stem, "%s", name);
    char *dot = strrchr(stem, '.');
    if (dot)
        *dot = 0;
    struct export_file *e = calloc(1, sizeof *e);
    if (!e)
        return add_error(fs->tree, dir, stem, "out of memory");
    *e = (struct export_file){.c = {.produce = take_pending}, .fs = fs, .build = build, .ctx = ctx};
    pthread_mutex_init(&e->lock, NULL);
    tree_on_free(fs->tree, export_free, e);
    char err[256] = "";
    size_t size;
    pthread_mutex_lock(&e->lock);
    const uint8_t *d = pin(e, &size, err, sizeof err);
    if (d) {
        e->size = size;
        cache_unpin(&fs->cache, &e->c);
    }
    pthread_mutex_unlock(&e->lock);
    if (!d)
        return add_error(fs->tree, dir, stem, err);
    return tree_add_gen(fs->tree, dir, name, xtype, e->size, export_read, e, 0);
}
