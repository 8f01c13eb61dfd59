#include "fs/export.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct export_file {
    struct cached c; /* first: the cache hands this pointer back */
    struct s3fs *fs;
    export_build_fn build;
    void *ctx;
    uint64_t size;
};

/* A build runs as the item's producer, outside the cache lock: it may pin other items
 * (Granny sections), and readers of other items never wait for it. */
static int produce_export(struct cached *c, uint8_t **data, size_t *size, char *err, size_t errlen)
{
    struct export_file *e = (struct export_file *)c;
    source_hold(&e->fs->src); /* a build reads the source many times: expanded once */
    int rc = e->build(e->ctx, data, size, err, errlen);
    source_release(&e->fs->src);
    return rc;
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
    const uint8_t *d = cache_pin(&e->fs->cache, &e->c, &size, err, sizeof err);
    if (!d)
        return -EIO;
    ssize_t rc = -EIO;
    if (size == e->size) { /* another size: the source changed since the size was taken */
        size_t n = off < size ? (len < size - off ? len : (size_t)(size - off)) : 0;
        memcpy(buf, d + off, n);
        rc = (ssize_t)n;
    }
    cache_unpin(&e->fs->cache, &e->c);
    return rc;
}

/* What an open export file holds: its bytes (tree_hold). */
static struct cached *export_item(void *ctx, uint64_t arg, struct cache **cache)
{
    (void)arg;
    struct export_file *e = ctx;
    *cache = &e->fs->cache;
    return &e->c;
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
    *e = (struct export_file){.c = {.produce = produce_export}, .fs = fs, .build = build, .ctx = ctx};
    tree_on_free(fs->tree, free, e);
    char err[256] = "";
    size_t size;
    const uint8_t *d = cache_pin(&fs->cache, &e->c, &size, err, sizeof err);
    if (!d)
        return add_error(fs->tree, dir, stem, err);
    e->size = size;
    e->c.hint = size;
    cache_unpin(&fs->cache, &e->c);
    tree_gen_item(export_read, export_item);
    return tree_add_gen(fs->tree, dir, name, xtype, e->size, export_read, e, 0);
}
