/* Opening: a file (or bytes in memory, or a source nested in another view) is detected
 * and handed to its format's view. This is the only file that knows every format view
 * (from the format table, src/formats.def); the views sit below it and reach it back
 * only through fs->open_at (a package opening the files it holds). */
#include "fs/open/open.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "fs/views/sims/view_folder.h"

/* Each format's view (s3_view_open_fn, fs/core/view.h), declared from the table, defined in
 * view_CODE.c. */
#define FORMAT(id, name, code, ...) s3_view_open_fn code##_view_open;
#include S3_FORMATS_DEF
#undef FORMAT

/* The open layer's column of the table, by enum s3_format. */
static s3_view_open_fn *const view_open[FMT_COUNT] = {
#define FORMAT(id, name, code, ...) [FMT_##id] = code##_view_open,
#include S3_FORMATS_DEF
#undef FORMAT
};

/* Detects the format of fs->src and opens its view at fs->root: the same for a file
 * mounted alone and for a view nested in another. */
static enum s3_err open_view(struct s3fs *fs, const char *label, unsigned formats, char *err, size_t errlen)
{
    enum s3_err e = detect_format(&fs->src.src, &fs->det);
    if (e != S3_OK)
        return s3_fail(e, err, errlen, "%s: unrecognised format: %s", label, fs->det.why);
    if (formats && !(formats & (1u << fs->det.format)))
        return s3_fail(S3_ERR_FORMAT, err, errlen, "%s: %s is not opened here", label, format_name(fs->det.format));
    char why[256] = "";
    size_t f = fs->det.format;
    s3_view_open_fn *opener = f < FMT_COUNT ? view_open[f] : NULL;
    if (opener)
        e = opener(fs, why, sizeof why);
    else
        e = s3_fail(S3_ERR_UNSUPPORTED, why, sizeof why, "recognised as %s, which this version does not support yet",
                    format_name(fs->det.format));
    if (e == S3_OK && fs->facts.oom) /* /info's facts short of a line: never an open with success */
        e = s3_fail(S3_ERR_NOMEM, why, sizeof why, "out of memory for the facts of /info");
    if (e != S3_OK)
        return s3_fail(e, err, errlen, "%s: %s", label, why[0] ? why : s3_err_str(e));
    return S3_OK;
}

/* -o NAME=PATH (skeleton=, rig=): the file a skeleton_file holds, opened before the view
 * (the same detection and views, without either option) by its absolute path and kept
 * while fs lives; it must offer a skeleton (view_skeletons). `none` says, after "no
 * skeleton", what the option wants one for. *out is set even when this fails (s3fs_close
 * frees it). */
static enum s3_err open_skeleton_file(struct s3fs *fs, const char *name, const char *path, const char *none,
                                      struct skeleton_file **out, const char *label, char *err, size_t errlen)
{
    struct s3fs_opts o = fs->opts;
    o.skeleton[0] = o.rig[0] = 0;
    struct skeleton_file *f = calloc(1, sizeof *f);
    *out = f;
    if (!f)
        return s3_fail(S3_ERR_NOMEM, err, errlen, "%s: %s=%s: out of memory", label, name, path);
    f->path = realpath(path, NULL);
    if (!f->path) {
        int errnum = errno;
        return s3_fail(s3_err_of_errno(errnum), err, errlen, "%s: %s=%s: %s", label, name, path, strerror(errnum));
    }
    char why[512] = "";
    enum s3_err e = s3fs_open(&f->fs, f->path, &o, why, sizeof why);
    if (e)
        return s3_fail(e, err, errlen, "%s: %s=%s", label, name, why);
    f->set = view_skeletons(f->fs, why, sizeof why);
    if (f->set->n == 0) /* a file of a format that holds none: FORMAT, as a file no view takes */
        return s3_fail(S3_ERR_FORMAT, err, errlen, "%s: %s=%s: no skeleton %s%s%s", label, name, f->path, none,
                       why[0] ? ": " : "", why);
    return S3_OK;
}

static void skeleton_file_close(struct skeleton_file *f)
{
    if (!f)
        return;
    s3fs_close(f->fs);
    free(f->path);
    free(f);
}

/* folder: the path of a folder source (its view instead of a format's), else NULL */
static enum s3_err open_format(struct s3fs *fs, const struct s3fs_opts *opts, const char *label,
                               const char *folder, char *err, size_t errlen)
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
    if (!fs->tree)
        return s3_fail(S3_ERR_NOMEM, err, errlen, "%s: out of memory", label);
    tree_set_source_diag(fs->tree, 0, &fs->diag); /* source 0 exists: S3_OK */
    fs->root = TREE_ROOT;
    fs->open_at = s3fs_open_at;
    enum s3_err e = S3_OK;
    if (fs->opts.skeleton[0])
        e = open_skeleton_file(fs, "skeleton", fs->opts.skeleton, "to play the animations on", &fs->skeleton_file,
                               label, err, errlen);
    if (e == S3_OK && fs->opts.rig[0])
        e = open_skeleton_file(fs, "rig", fs->opts.rig, "to bind to", &fs->rig_file, label, err, errlen);
    if (e)
        return e;
    if (folder) {
        char why[256] = "";
        e = folder_view_open(fs, folder, why, sizeof why);
        return e ? s3_fail(e, err, errlen, "%s: %s", label, why) : S3_OK;
    }
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
    rig_set_free(&fs->skeletons);
    free(fs);
}

enum s3_err s3fs_open_at(struct s3fs *host, uint32_t dir, const struct source *src, const char *origin,
                         unsigned formats, struct s3fs **out, char *err, size_t errlen)
{
    struct tree *t = host->tree;
    struct s3fs *fs = calloc(1, sizeof *fs);
    *out = NULL;
    if (!fs)
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    source_move(&fs->src, src);
    fs->tree = t;
    fs->opts = host->opts;
    cache_init_shared(&fs->cache, &host->cache);
    fs->root = dir;
    fs->nested = true;
    fs->open_at = s3fs_open_at;
    fs->host = host;
    fs->skeleton_file = host->skeleton_file;
    fs->rig_file = host->rig_file;
    snprintf(fs->origin, sizeof fs->origin, "%s", origin ? origin : "");
    /* Registered before the view opens, so the view's own cleanups (made later) run first. */
    if (tree_on_free(t, nested_free, fs)) {
        nested_free(fs);
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    }
    /* from here fs is the tree's to free */
    enum s3_err e = tree_add_source(t, &fs->src, &fs->src_id);
    if (e == S3_ERR_LIMIT)
        return s3_fail(e, err, errlen,
                       "not opened: the mount already holds %u nested views, the most it can (TREE_MAX_SOURCES)",
                       TREE_MAX_SOURCES - 1);
    if (e)
        return s3_fail(e, err, errlen, "out of memory");
    tree_set_source_diag(t, fs->src_id, &fs->diag); /* just added: S3_OK */
    e = open_view(fs, "view", formats, err, errlen);
    if (e == S3_OK)
        *out = fs;
    return e;
}

/* Both entry points: a source (file or memory) set up by `attach`, then the format. */
static enum s3_err open_common(struct s3fs **out, const char *label, const struct s3fs_opts *opts, char *err,
                               size_t errlen,
                               enum s3_err (*attach)(struct s3fs *fs, const void *a, uint64_t b, char *err,
                                                     size_t errlen),
                               const void *a, uint64_t b, const char *folder)
{
    struct s3fs *fs = calloc(1, sizeof *fs);
    *out = NULL;
    if (!fs)
        return s3_fail(S3_ERR_NOMEM, err, errlen, "%s: out of memory", label);
    enum s3_err e = attach(fs, a, b, err, errlen);
    if (e) {
        free(fs); /* no source attached: nothing else to close */
        return e;
    }
    e = open_format(fs, opts, label, folder ? fs->src.path : NULL, err, errlen);
    if (e) {
        s3fs_close(fs);
        return e;
    }
    *out = fs;
    return S3_OK;
}

static enum s3_err attach_file(struct s3fs *fs, const void *path, uint64_t unused, char *err, size_t errlen)
{
    (void)unused;
    return source_open(&fs->src, path, err, errlen);
}

static enum s3_err attach_mem(struct s3fs *fs, const void *data, uint64_t size, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    source_mem(&fs->src, data, size);
    return S3_OK;
}

/* A folder has no bytes of its own: an empty memory source carrying the folder's absolute
 * path (the mount's name) and its stat (the times the mount shows). */
static enum s3_err attach_folder(struct s3fs *fs, const void *path, uint64_t unused, char *err, size_t errlen)
{
    (void)unused;
    struct stat st;
    char *abs = realpath(path, NULL);
    if (!abs || stat(abs, &st) != 0) {
        int errnum = errno;
        free(abs);
        return s3_fail(s3_err_of_errno(errnum), err, errlen, "%s: %s", (const char *)path, strerror(errnum));
    }
    source_mem(&fs->src, "", 0);
    fs->src.path = abs;
    fs->src.st = st;
    /* each package browsed keeps its descriptor while mounted: a folder of thousands
     * needs more than the usual soft limit of 1024, and the hard limit is the user's */
    struct rlimit lim;
    if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max) {
        lim.rlim_cur = lim.rlim_max;
        setrlimit(RLIMIT_NOFILE, &lim);
    }
    return S3_OK;
}

enum s3_err s3fs_open(struct s3fs **out, const char *path, const struct s3fs_opts *opts, char *err, size_t errlen)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) /* a folder of packages (view_folder.h) */
        return open_common(out, path, opts, err, errlen, attach_folder, path, 0, path);
    return open_common(out, path, opts, err, errlen, attach_file, path, 0, NULL);
}

enum s3_err s3fs_open_mem(struct s3fs **out, const void *data, uint64_t size, const struct s3fs_opts *opts,
                          char *err, size_t errlen)
{
    return open_common(out, "<memory>", opts, err, errlen, attach_mem, data, size, NULL);
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
    rig_set_free(&fs->skeletons);
    skeleton_file_close(fs->skeleton_file); /* opened by this s3fs (nested ones share them) */
    skeleton_file_close(fs->rig_file);
    free(fs);
}

int s3_exit_of(enum s3_err e)
{
    switch (e) {
    case S3_OK:
        return S3_EXIT_OK;
    case S3_ERR_FORMAT:      /* no format takes it, or not its bytes: a header's value */
    case S3_ERR_RANGE:       /* its header is cut */
    case S3_ERR_UNSUPPORTED: /* a variant this version does not read */
    case S3_ERR_LIMIT:       /* a header past a bound of ours */
        return S3_EXIT_FORMAT;
    default: /* the OS's reasons, IO, NOMEM: it cannot be opened or read */
        return S3_EXIT_OPEN;
    }
}

int s3_close_stdout(const char *prog)
{
    errno = 0;
    bool failed = fflush(stdout) != 0 || ferror(stdout);
    int why = errno;
    if (fclose(stdout) != 0 && !failed) {
        failed = true;
        why = errno;
    }
    if (!failed)
        return S3_EXIT_OK;
    fprintf(stderr, "%s: write error: %s\n", prog, why ? strerror(why) : "output lost");
    return S3_EXIT_WRITE;
}
