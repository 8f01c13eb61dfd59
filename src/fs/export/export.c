#include "fs/export/export.h"

#include <errno.h>
#include <inttypes.h>
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
static _Atomic uint64_t builds;
static _Atomic uint64_t size_mismatches; /* builds refused for making another size */

static enum s3_err produce_export(struct cached *c, uint8_t **data, size_t *size, char *err, size_t errlen)
{
    struct export_file *e = (struct export_file *)c;
    builds++;
    source_hold(&e->fs->src); /* a build reads the source many times: expanded once */
    enum s3_err rc = e->build(e->ctx, data, size, err, errlen);
    source_release(&e->fs->src);
    if (rc == S3_OK && *size != e->size) { /* never cache a file of another size than its stat */
        free(*data);
        *data = NULL;
        size_mismatches++;
        return s3_fail(S3_ERR_IO, err, errlen, "built %zu bytes, sized %" PRIu64 " when listed", *size, e->size);
    }
    return rc;
}

static enum s3_err export_read(struct tree *t, void *ctx, uint64_t arg, uint64_t off, void *buf, size_t len,
                               size_t *got)
{
    (void)t, (void)arg;
    struct export_file *e = ctx;
    /* the cached bytes were made from the file as it was: a changed file is EIO, like
     * every other read, even when a rebuild would have the same size */
    if (source_check(&e->fs->src))
        return S3_ERR_IO;
    /* a build refused memory is ENOMEM to this read (the next builds again: a failed
     * production is not kept); anything else, cache_mb's refusal and bytes of another
     * size than the stat's included, is EIO */
    return cache_read(&e->fs->cache, &e->c, e->size, off, buf, len, got);
}

/* What an open export file holds: its bytes (tree_hold). */
static struct cached *export_item(void *ctx, uint64_t arg, struct cache **cache)
{
    (void)arg;
    struct export_file *e = ctx;
    *cache = &e->fs->cache;
    return &e->c;
}

uint64_t export_builds(void)
{
    return builds;
}

uint64_t export_size_mismatches(void)
{
    return size_mismatches;
}

uint32_t export_add_error(struct s3fs *fs, uint32_t dir, const char *name, const char *msg)
{
    char stem[128];
    snprintf(stem, sizeof stem, "%s", name);
    char *dot = strrchr(stem, '.');
    if (dot)
        *dot = 0;
    return add_error(fs->tree, dir, stem, msg);
}

uint32_t export_add_sized(struct s3fs *fs, uint32_t dir, const char *name, const char *xtype, uint64_t size,
                          export_build_fn build, void *ctx)
{
    struct export_file *e = calloc(1, sizeof *e);
    if (e && tree_on_free(fs->tree, free, e)) {
        free(e);
        e = NULL;
    }
    if (!e) { /* the listing fails (ENOMEM), never shows the file missing */
        tree_note_oom(fs->tree);
        return 0;
    }
    *e = (struct export_file){.c = {.produce = produce_export, .hint = size}, .fs = fs, .build = build,
                              .ctx = ctx, .size = size};
    enum s3_err rc = tree_gen_item(export_read, export_item);
    if (rc) { /* the listing fails with it, never shows the file missing */
        tree_note_failure(fs->tree, rc);
        return 0;
    }
    return tree_add_gen(fs->tree, dir, name, xtype, size, export_read, e, 0);
}

uint32_t export_add(struct s3fs *fs, uint32_t dir, const char *name, const char *xtype, export_build_fn build,
                    void *ctx)
{
    char err[256] = "";
    size_t size;
    source_hold(&fs->src); /* measuring reads the source as a build does */
    enum s3_err rc = build(ctx, NULL, &size, err, sizeof err);
    source_release(&fs->src);
    if (rc == S3_ERR_NOMEM) { /* the listing fails (ENOMEM), never STEM.error */
        tree_note_oom(fs->tree);
        return 0;
    }
    if (rc)
        return export_add_error(fs, dir, name, err);
    return export_add_sized(fs, dir, name, xtype, size, build, ctx);
}
