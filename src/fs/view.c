#include "fs/view.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint32_t add_u32(struct tree *t, uint32_t dir, const char *name, uint32_t v, uint64_t abs_off)
{
    uint32_t ino = tree_add_textf(t, dir, name, "u32", "%" PRIu32 "\n", v);
    tree_set_span(t, ino, abs_off, 4);
    return ino;
}

uint32_t add_i32(struct tree *t, uint32_t dir, const char *name, int32_t v, uint64_t abs_off)
{
    uint32_t ino = tree_add_textf(t, dir, name, "i32", "%" PRId32 "\n", v);
    tree_set_span(t, ino, abs_off, 4);
    return ino;
}

uint32_t add_hex32(struct tree *t, uint32_t dir, const char *name, uint32_t v, uint64_t abs_off)
{
    uint32_t ino = tree_add_textf(t, dir, name, "u32", "0x%08" PRIx32 "\n", v);
    tree_set_span(t, ino, abs_off, 4);
    return ino;
}

void set_typef(struct tree *t, uint32_t ino, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    int rc = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (rc >= 0)
        tree_set_type(t, ino, s);
    free(s);
}

enum list_style { LIST_SIGNED, LIST_UNSIGNED, LIST_HEX };

/* One formatter for the three list kinds, so they cannot drift apart. */
static uint32_t add_list(struct tree *t, uint32_t dir, const char *name, const uint32_t *v, uint64_t n,
                         uint64_t abs_off, enum list_style style)
{
    struct sbuf b = {0};
    for (uint64_t i = 0; i < n; i++) {
        if (style == LIST_SIGNED)
            sb_printf(&b, "%" PRId32 "\n", (int32_t)v[i]);
        else if (style == LIST_UNSIGNED)
            sb_printf(&b, "%" PRIu32 "\n", v[i]);
        else
            sb_printf(&b, "0x%08" PRIx32 "\n", v[i]);
    }
    size_t len;
    char *text = sb_take(&b, &len);
    uint32_t ino = tree_add_text(t, dir, name, NULL, text, len);
    tree_set_span(t, ino, abs_off, 4 * n);
    set_typef(t, ino, "%s[%" PRIu64 "]", style == LIST_SIGNED ? "i32" : "u32", n);
    return ino;
}

uint32_t add_i32_list(struct tree *t, uint32_t dir, const char *name, const int32_t *v, uint64_t n,
                      uint64_t abs_off)
{
    return add_list(t, dir, name, (const uint32_t *)v, n, abs_off, LIST_SIGNED);
}

uint32_t add_u32_list(struct tree *t, uint32_t dir, const char *name, const uint32_t *v, uint64_t n,
                      uint64_t abs_off)
{
    return add_list(t, dir, name, v, n, abs_off, LIST_UNSIGNED);
}

uint32_t add_hex32_list(struct tree *t, uint32_t dir, const char *name, const uint32_t *v, uint64_t n,
                        uint64_t abs_off)
{
    return add_list(t, dir, name, v, n, abs_off, LIST_HEX);
}

uint32_t add_bone_names(struct tree *t, uint32_t dir, const char *field, const int32_t *idx, uint64_t n,
                        char *const *names, uint32_t nnames)
{
    struct sbuf b = {0};
    for (uint64_t i = 0; i < n; i++) {
        const char *nm = idx[i] >= 0 && (uint32_t)idx[i] < nnames ? names[idx[i]] : NULL;
        sb_printf(&b, "%s\n", nm ? nm : "?");
    }
    char name[64];
    snprintf(name, sizeof name, "%s.names", field);
    size_t len;
    char *text = sb_take(&b, &len);
    return tree_add_text(t, dir, name, "bone_names", text, len);
}

uint32_t add_error(struct tree *t, uint32_t dir, const char *name, const char *msg)
{
    char fname[256];
    snprintf(fname, sizeof fname, "%s.error", name);
    return tree_add_textf(t, dir, fname, "error", "%s\n", msg);
}

/* ---- /info and /unparsed ---- */

/* The warnings line says how much has been checked: parsing is lazy, so a fresh mount
 * has not yet seen what browsing (or `s3rig info --full`) will find. */
static void render_info(struct tree *t, void *ctx, struct sbuf *out)
{
    struct s3fs *fs = ctx;
    struct sbuf b = *out;
    sb_printf(&b, "format: %s\n", format_name(fs->det.format));
    sb_printf(&b, "file_size: %" PRIu64 "\n", fs->src.size);
    if (fs->origin[0])
        sb_printf(&b, "source: %s\n", fs->origin);
    if (fs->facts.len)
        sb_put(&b, fs->facts.p, fs->facts.len);
    if (fs->info_hook)
        fs->info_hook(fs, &b, fs->info_ctx);
    sb_printf(&b, "covered_bytes: %" PRIu64 "\n", fs->covered);
    sb_printf(&b, "unparsed_bytes: %" PRIu64 " in %zu ranges\n", fs->src.size - fs->covered, fs->ngaps);
    struct sbuf tree_lines = {0};
    size_t nwarn = fs->diag.n + fs->diag.dropped + tree_warnings(t, &tree_lines);
    uint64_t done, total;
    tree_progress(t, fs->src_id, &done, &total);
    if (done < total)
        sb_printf(&b, "warnings: %zu so far (%" PRIu64 " of %" PRIu64 " directories parsed)\n", nwarn, done,
                  total);
    else
        sb_printf(&b, "warnings: %zu\n", nwarn);
    if (tree_lines.len)
        sb_put(&b, tree_lines.p, tree_lines.len);
    sb_free(&tree_lines);
    for (size_t i = 0; i < fs->diag.n; i++)
        sb_printf(&b, "warning: %s\n", fs->diag.msg[i]);
    if (fs->diag.dropped)
        sb_printf(&b, "warning: %zu more warnings not shown\n", fs->diag.dropped);
    *out = b;
}

static int populate_unparsed(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    struct s3fs *fs = ctx;
    for (size_t i = 0; i < fs->ngaps; i++) {
        char name[64];
        snprintf(name, sizeof name, "0x%" PRIx64 "-0x%" PRIx64 ".bin", fs->gaps[i].off, fs->gaps[i].len);
        tree_add_range(t, dir, name, "unparsed", fs->gaps[i].off, fs->gaps[i].len);
    }
    return 0;
}

int view_root(struct s3fs *fs, const char *xtype, populate_fn fn, void *ctx)
{
    if (fs->nested) /* the directory keeps the host's type and span: where the bytes lie */
        return tree_graft(fs->tree, fs->root, fs->src_id, NULL, fn, ctx, 0) ? -1 : 0;
    uint32_t root = tree_add_dir(fs->tree, 0, "", xtype, fn, ctx, 0);
    tree_set_span(fs->tree, root, 0, fs->src.size);
    return root == fs->root ? 0 : -1;
}

void add_info_and_unparsed(struct s3fs *fs, uint32_t root)
{
    fs->covered = cover_merge(&fs->cover, fs->src.size);
    fs->ngaps = cover_gaps(&fs->cover, fs->src.size, &fs->gaps);
    tree_add_volatile(fs->tree, root, "info", "info", render_info, fs);
    uint32_t u = tree_add_dir(fs->tree, root, "unparsed", "unparsed", populate_unparsed, fs, 0);
    tree_set_span(fs->tree, u, 0, fs->src.size);
}

/* ---- opening ---- */

/* Detects the format of fs->src and opens its view at fs->root: the same for a file
 * mounted alone and for a view nested in another. */
static int open_view(struct s3fs *fs, const char *label, unsigned formats, char *err, size_t errlen)
{
    if (detect_format(&fs->src.src, &fs->det) != 0) {
        snprintf(err, errlen, "%s: unrecognised format: %s", label, fs->det.why);
        return S3_EXIT_FORMAT;
    }
    if (formats && !(formats & (1u << fs->det.format))) {
        snprintf(err, errlen, "%s: %s is not opened here", label, format_name(fs->det.format));
        return S3_EXIT_FORMAT;
    }
    char why[256] = "";
    int rc;
    switch (fs->det.format) {
    case FMT_RIG_WRAPPED:
        rc = rig_view_open(fs, why, sizeof why);
        break;
    case FMT_GR2:
        rc = gr2_view_open(fs, why, sizeof why);
        break;
    case FMT_T2FS:
        rc = t2fs_view_open(fs, why, sizeof why);
        break;
    case FMT_RIG_CLEAR:
        rc = rig_clear_view_open(fs, why, sizeof why);
        break;
    case FMT_DBPF:
        rc = dbpf_view_open(fs, why, sizeof why);
        break;
    default:
        snprintf(why, sizeof why, "recognised as %s, which this version does not support yet",
                 format_name(fs->det.format));
        rc = -1;
    }
    if (rc) {
        snprintf(err, errlen, "%s: %s", label, why);
        return S3_EXIT_FORMAT;
    }
    return S3_EXIT_OK;
}

static int open_format(struct s3fs *fs, const struct s3fs_opts *opts, const char *label, char *err,
                       size_t errlen)
{
    if (opts)
        fs->opts = *opts;
    if (!fs->opts.cache_bytes)
        fs->opts.cache_bytes = S3FS_DEFAULT_CACHE;
    if (!fs->opts.max_unpacked)
        fs->opts.max_unpacked = S3FS_DEFAULT_MAX_UNPACKED;
    cache_init(&fs->cache, fs->opts.cache_bytes);
    struct tree_limits lim = {fs->opts.max_nodes};
    fs->tree = tree_new(&fs->src, &lim);
    if (!fs->tree) {
        snprintf(err, errlen, "%s: out of memory", label);
        return S3_EXIT_OPEN;
    }
    fs->root = TREE_ROOT;
    return open_view(fs, label, 0, err, errlen);
}

/* A nested view's own state; the tree, the cache and the source's bytes are the host's. */
static void nested_free(void *p)
{
    struct s3fs *fs = p;
    diag_free(&fs->diag);
    cover_free(&fs->cover);
    sb_free(&fs->facts);
    free(fs->gaps);
    free(fs);
}

int s3fs_open_at(struct s3fs *host, uint32_t dir, const struct source *src, const char *origin, unsigned formats,
                 struct s3fs **out, char *err, size_t errlen)
{
    struct tree *t = host->tree;
    struct s3fs *fs = calloc(1, sizeof *fs);
    *out = NULL;
    if (!fs) {
        snprintf(err, errlen, "out of memory");
        return S3_EXIT_OPEN;
    }
    source_move(&fs->src, src);
    fs->tree = t;
    fs->opts = host->opts;
    cache_init_shared(&fs->cache, &host->cache);
    fs->root = dir;
    fs->nested = true;
    snprintf(fs->origin, sizeof fs->origin, "%s", origin ? origin : "");
    /* Registered before the view opens, so the view's own cleanups (made later) run first. */
    tree_on_free(t, nested_free, fs);
    if (tree_add_source(t, &fs->src, &fs->src_id)) {
        snprintf(err, errlen, "out of memory");
        return S3_EXIT_OPEN;
    }
    int rc = open_view(fs, "view", formats, err, errlen);
    if (rc == S3_EXIT_OK)
        *out = fs;
    return rc;
}

/* Both entry points: a source (file or memory) set up by `attach`, then the format. */
static int open_common(struct s3fs **out, const char *label, const struct s3fs_opts *opts, char *err,
                       size_t errlen, int (*attach)(struct s3fs *fs, const void *a, uint64_t b, char *err,
                                                    size_t errlen),
                       const void *a, uint64_t b)
{
    struct s3fs *fs = calloc(1, sizeof *fs);
    *out = NULL;
    if (!fs) {
        snprintf(err, errlen, "%s: out of memory", label);
        return S3_EXIT_OPEN;
    }
    if (attach(fs, a, b, err, errlen)) {
        free(fs);
        return S3_EXIT_OPEN;
    }
    int rc = open_format(fs, opts, label, err, errlen);
    if (rc) {
        s3fs_close(fs);
        return rc;
    }
    *out = fs;
    return S3_EXIT_OK;
}

static int attach_file(struct s3fs *fs, const void *path, uint64_t unused, char *err, size_t errlen)
{
    (void)unused;
    return source_open(&fs->src, path, err, errlen);
}

static int attach_mem(struct s3fs *fs, const void *data, uint64_t size, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    source_mem(&fs->src, data, size);
    return 0;
}

int s3fs_open(struct s3fs **out, const char *path, const struct s3fs_opts *opts, char *err, size_t errlen)
{
    return open_common(out, path, opts, err, errlen, attach_file, path, 0);
}

int s3fs_open_mem(struct s3fs **out, const void *data, uint64_t size, const struct s3fs_opts *opts, char *err,
                  size_t errlen)
{
    return open_common(out, "<memory>", opts, err, errlen, attach_mem, data, size);
}

void s3fs_close(struct s3fs *fs)
{
    if (!fs)
        return;
    cache_destroy(&fs->cache); /* first: cached items are owned by the views */
    tree_free(fs->tree);
    diag_free(&fs->diag);
    cover_free(&fs->cover);
    sb_free(&fs->facts);
    free(fs->gaps);
    source_close(&fs->src);
    free(fs);
}
