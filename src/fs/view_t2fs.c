/* The t2fs container as a tree: /root mirrors the container (a branch is a directory
 * named by its index, a leaf is N.bin with its exact bytes), /prefix.bin and
 * /trailer.bin hold bytes outside the root node. Branch tables are read lazily: listing
 * a directory reads its table and classifies each child (the schema decides branch or
 * leaf; where it says nothing, the strong validity test does). RNC-compressed nodes are
 * expanded through the bounded cache and then treated as the node they contain. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs/view.h"
#include "parse/rnc.h"
#include "parse/t2fs.h"

#define T2_MAX_DEPTH 256 /* deeper nesting is shown as leaves: no unbounded descent */

struct t2_view;

/* A compressed node: permanent descriptor, bytes held by the cache. */
struct t2_cnode {
    struct cached c; /* first: the cache hands this pointer back */
    struct t2_view *v;
    uint64_t file_off, stored_len; /* the RNC item in the file */
    int method;
};

/* Where a node's bytes are: the file, or a compressed node's expanded data. */
struct t2_where {
    struct t2_cnode *blob;
    uint64_t off, space;
};

struct t2_dir {
    struct t2_view *v;
    struct t2_where at;
    const struct t2fs_schema *schema;
    uint32_t depth;
};

struct t2_view {
    struct s3fs *fs;
    bool be;
    uint64_t root_off, root_size;
    uint32_t root_count;
    struct t2fs_schema *schema;
    const char *schema_name;
    uint64_t compressed_seen, compressed_failed;
    /* Read-ahead over the file's bytes, kept from one directory listing to the next: a
     * walk lists a directory, then its children, whose bytes lie inside the parent's, so
     * most listings need no read at all. Used only inside populate callbacks, which the
     * tree serialises (a nested listing may refill it: readers copy out, never keep a
     * pointer into it). */
    struct source_window *window;
};

static void t2_view_free(void *p)
{
    struct t2_view *v = p;
    t2fs_schema_free(v->schema);
    free(v->window);
    free(v);
}

/* ---- compressed nodes ---- */

static int produce_rnc(struct cached *c, uint8_t **data, size_t *size, char *err, size_t errlen)
{
    struct t2_cnode *cn = (struct t2_cnode *)c;
    struct s3fs *fs = cn->v->fs;
    uint8_t *item = malloc(cn->stored_len);
    if (!item) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (source_pread_checked(&fs->src, cn->file_off, item, cn->stored_len)) {
        free(item);
        snprintf(err, errlen, "read error (the file changed?)");
        return -1;
    }
    struct rnc_options o = {fs->opts.has_rnc_key, fs->opts.rnc_key, fs->opts.max_unpacked};
    int rc = rnc_unpack(item, cn->stored_len, &o, data, size, err, errlen);
    free(item);
    return rc;
}

/* The bytes a node location reads from, with its blob pinned (when it has one). */
struct t2_bytes {
    struct s3_src src;
    struct mem_src_ctx mem;
    struct t2_cnode *pinned;
};

static int open_bytes(struct t2_view *v, struct t2_cnode *blob, struct t2_bytes *b, char *err, size_t errlen)
{
    b->pinned = NULL;
    if (!blob) {
        b->src = v->window ? v->window->view : v->fs->src.src;
        return 0;
    }
    size_t size;
    const uint8_t *d = cache_pin(&v->fs->cache, &blob->c, &size, err, errlen);
    if (!d)
        return -1;
    mem_src_init(&b->src, &b->mem, d, size);
    b->pinned = blob;
    return 0;
}

static void close_bytes(struct t2_view *v, struct t2_bytes *b)
{
    if (b->pinned)
        cache_unpin(&v->fs->cache, &b->pinned->c);
}

static ssize_t blob_read(struct tree *t, void *ctx, uint64_t arg, uint64_t off, void *buf, size_t len)
{
    (void)t;
    struct t2_cnode *cn = ctx;
    char err[256];
    size_t size;
    const uint8_t *d = cache_pin(&cn->v->fs->cache, &cn->c, &size, err, sizeof err);
    if (!d)
        return -EIO;
    ssize_t n = 0;
    if (arg + off <= size) {
        n = (ssize_t)(len < size - arg - off ? len : size - arg - off);
        memcpy(buf, d + arg + off, (size_t)n);
    }
    cache_unpin(&cn->v->fs->cache, &cn->c);
    return n;
}

/* ---- classification ---- */

/* The span xattrs of a node: its own bytes, or for nodes inside compressed data, the
 * compressed node they came from. */
static void set_span(struct tree *t, uint32_t ino, const struct t2_where *w)
{
    if (w->blob)
        tree_set_span(t, ino, w->blob->file_off, w->blob->stored_len);
    else
        tree_set_span(t, ino, w->off, w->space);
}

static uint32_t add_leaf(struct t2_view *v, uint32_t dir, const char *name, const struct t2_where *w)
{
    struct tree *t = v->fs->tree;
    char fname[32];
    snprintf(fname, sizeof fname, "%s.bin", name);
    uint32_t ino;
    if (w->blob)
        ino = tree_add_gen(t, dir, fname, NULL, w->space, blob_read, w->blob, w->off);
    else
        ino = tree_add_range(t, dir, fname, NULL, w->off, w->space);
    set_span(t, ino, w);
    return ino;
}

static int populate_branch(struct tree *t, uint32_t dir, void *ctx, uint64_t arg);

static uint32_t add_branch_dir(struct t2_view *v, uint32_t parent, const char *name, const struct t2_where *w,
                               const struct t2fs_schema *schema, uint32_t depth, const char *prefix,
                               uint32_t count)
{
    struct t2_dir *d = tree_alloc(v->fs->tree, sizeof *d);
    if (!d)
        return 0;
    *d = (struct t2_dir){v, *w, schema, depth};
    uint32_t ino = tree_add_dir(v->fs->tree, parent, name, NULL, populate_branch, d, 0);
    set_span(v->fs->tree, ino, w);
    set_typef(v->fs->tree, ino, "%st2fs.branch[%" PRIu32 "]", prefix, count);
    return ino;
}

static void warn_where(struct t2_view *v, const struct t2_where *w, const char *path_hint, const char *msg)
{
    if (w->blob)
        diag_add(&v->fs->diag, "%s (inside the RNC node at 0x%" PRIx64 "): %s", path_hint, w->blob->file_off, msg);
    else
        diag_add(&v->fs->diag, "%s at 0x%" PRIx64 ": %s", path_hint, w->off, msg);
}

/* A node the schema calls a leaf. */
static void add_data_node(struct t2_view *v, uint32_t dir, const char *name, const struct t2_where *w,
                          const struct s3_src *src, const struct t2fs_schema *s, const char *prefix)
{
    struct tree *t = v->fs->tree;
    char err[T2FS_ERR];
    if (s->data == T2D_ARRAY) {
        uint32_t esize, count;
        if (t2fs_read_array(src, w->off, w->space, v->be, &esize, &count, err, sizeof err)) {
            add_error(t, dir, name, err);
            set_typef(t, add_leaf(v, dir, name, w), "%st2fs.unknown", prefix);
            warn_where(v, w, name, err);
            return;
        }
        if (s->value_size && esize != s->value_size && count != 0) {
            char msg[160];
            snprintf(msg, sizeof msg, "%s: element size %" PRIu32 ", the schema says %" PRIu32, s->name, esize,
                     s->value_size);
            warn_where(v, w, name, msg);
        }
        set_typef(t, add_leaf(v, dir, name, w), "%st2fs.array[%" PRIu32 "]x%" PRIu32, prefix, esize, count);
        return;
    }
    if (s->fixed_size && w->space < s->fixed_size && w->space != 8) {
        char msg[160];
        snprintf(msg, sizeof msg, "%s: %" PRIu64 " bytes, the schema says %" PRIu32, s->name, w->space,
                 s->fixed_size);
        warn_where(v, w, name, msg);
    }
    set_typef(t, add_leaf(v, dir, name, w), "%st2fs.raw", prefix);
}

/* A node the schema calls a branch, or a node the schema says nothing about. */
static void add_maybe_branch(struct t2_view *v, uint32_t dir, const char *name, const struct t2_where *w,
                             const struct s3_src *src, const struct t2fs_schema *s, uint32_t depth,
                             const char *prefix)
{
    struct tree *t = v->fs->tree;
    struct t2fs_branch b;
    char err[T2FS_ERR];
    if (depth >= T2_MAX_DEPTH) {
        snprintf(err, sizeof err, "nesting deeper than %d levels: shown as bytes", T2_MAX_DEPTH);
        add_error(t, dir, name, err);
        set_typef(t, add_leaf(v, dir, name, w), "%st2fs.unknown", prefix);
        return;
    }
    if (t2fs_read_branch(src, w->off, w->space, v->be, &b, err, sizeof err)) {
        if (s) { /* the schema says branch, the bytes disagree */
            add_error(t, dir, name, err);
            warn_where(v, w, name, err);
        }
        set_typef(t, add_leaf(v, dir, name, w), "%st2fs.%s", prefix, s ? "raw" : "unknown");
        return;
    }
    if (s && s->kind == T2K_FIXED && b.count != s->nchild) {
        char msg[160];
        snprintf(msg, sizeof msg, "%s: %" PRIu32 " children, the schema expects %" PRIu32, s->name, b.count,
                 s->nchild);
        warn_where(v, w, name, msg);
    }
    if (b.offset[b.count] != w->space && !w->blob && w->space - b.offset[b.count] >= 8) {
        char msg[160];
        snprintf(msg, sizeof msg, "branch of %" PRIu32 " bytes in a %" PRIu64 "-byte slot", b.offset[b.count],
                 w->space);
        warn_where(v, w, name, msg);
    }
    add_branch_dir(v, dir, name, w, s, depth + 1, prefix, b.count);
    t2fs_branch_free(&b);
}

static void classify(struct t2_view *v, uint32_t dir, const char *name, const struct t2_where *w,
                     const struct s3_src *src, const struct t2fs_schema *s, uint32_t depth, const char *prefix)
{
    if (s && s->kind == T2K_DATA)
        add_data_node(v, dir, name, w, src, s, prefix);
    else
        add_maybe_branch(v, dir, name, w, src, s, depth, prefix);
}

/* A child that starts with "RNC": N.rnc with the stored bytes, then the node it holds. */
static void add_compressed(struct t2_view *v, uint32_t dir, const char *name, const struct t2_where *w,
                           const struct s3_src *src, int method, const struct t2fs_schema *s, uint32_t depth)
{
    struct tree *t = v->fs->tree;
    char fname[32], err[256];
    uint8_t head[RNC_HEADER_SIZE];
    struct rnc_header h;
    uint64_t stored = w->space;
    v->compressed_seen++;
    if (src_read(src, w->off, head, sizeof head) == 0 &&
        rnc_parse_header(head, w->space < SIZE_MAX ? (size_t)w->space : SIZE_MAX, &h, err, sizeof err) == 0)
        stored = RNC_HEADER_SIZE + (uint64_t)h.packed_size;
    snprintf(fname, sizeof fname, "%s.rnc", name);
    struct t2_where item = {w->blob, w->off, stored};
    uint32_t rnc = w->blob ? tree_add_gen(t, dir, fname, NULL, stored, blob_read, w->blob, w->off)
                           : tree_add_range(t, dir, fname, NULL, w->off, stored);
    set_span(t, rnc, &item);
    set_typef(t, rnc, "rnc%d", method < 0 ? 0 : method);
    if (method < 0 || w->blob) {
        snprintf(err, sizeof err, method < 0 ? "compressed node: unknown RNC method"
                                             : "compressed node inside compressed data: not decoded");
        add_error(t, dir, name, err);
        warn_where(v, w, name, err);
        v->compressed_failed++;
        return;
    }
    struct t2_cnode *cn = tree_alloc(v->fs->tree, sizeof *cn);
    if (!cn)
        return;
    cn->c.produce = produce_rnc;
    cn->v = v;
    cn->file_off = w->off;
    cn->stored_len = stored;
    cn->method = method;
    struct t2_bytes inner;
    if (open_bytes(v, cn, &inner, err, sizeof err)) {
        add_error(t, dir, name, err);
        warn_where(v, w, name, err);
        v->compressed_failed++;
        return;
    }
    const char *prefix = method == 1 ? "rnc1:" : "rnc2:";
    struct t2_where at = {cn, 0, inner.src.size};
    classify(v, dir, name, &at, &inner.src, s, depth, prefix);
    close_bytes(v, &inner);
}

static int populate_branch(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)t, (void)arg;
    struct t2_dir *d = ctx;
    struct t2_view *v = d->v;
    char err[256];
    struct t2_bytes bytes;
    if (!d->at.blob && source_check(&v->fs->src)) /* children come from the file's bytes */
        return -EIO;
    if (open_bytes(v, d->at.blob, &bytes, err, sizeof err))
        return -EIO;
    struct t2fs_branch b;
    if (t2fs_read_branch(&bytes.src, d->at.off, d->at.space, v->be, &b, err, sizeof err)) {
        close_bytes(v, &bytes);
        return -EIO; /* validated when the parent was listed: the file changed since */
    }
    for (uint32_t i = 0; i < b.count && !v->fs->tree->full; i++) {
        char name[16];
        snprintf(name, sizeof name, "%" PRIu32, i);
        struct t2_where w = {d->at.blob, d->at.off + b.offset[i], (uint64_t)b.offset[i + 1] - b.offset[i]};
        const struct t2fs_schema *s = t2fs_schema_child(d->schema, i);
        int method = t2fs_rnc_method(&bytes.src, w.off, w.space);
        if (method != 0)
            add_compressed(v, dir, name, &w, &bytes.src, method, s, d->depth);
        else
            classify(v, dir, name, &w, &bytes.src, s, d->depth, "");
    }
    if (v->fs->tree->full)
        diag_add(&v->fs->diag, "node limit reached (mount option max_nodes): some directories are incomplete");
    t2fs_branch_free(&b);
    close_bytes(v, &bytes);
    return 0;
}

static int populate_t2fs_root(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    struct t2_view *v = ctx;
    add_info_and_unparsed(v->fs, dir);
    if (v->root_off > 0)
        tree_add_range(t, dir, "prefix.bin", "bytes", 0, v->root_off);
    uint64_t end = v->root_off + v->root_size;
    if (end < v->fs->src.size)
        tree_add_range(t, dir, "trailer.bin", "bytes", end, v->fs->src.size - end);
    struct t2_where w = {NULL, v->root_off, v->root_size};
    add_branch_dir(v, dir, "root", &w, v->schema, 1, "", v->root_count);
    if (strcmp(v->schema_name, "turok2") == 0)
        t2fs_models_add(v->fs, dir, v->be);
    t2fs_named_add(v->fs, dir, v->schema, v->be);
    return 0;
}

/* Reads a whole (small) schema file. */
static char *read_text_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t cap = 0;
    *len = 0;
    for (;;) {
        if (*len + 4096 > cap) {
            if (cap > (16u << 20)) /* a schema is kilobytes; refuse absurd files */
                break;
            char *b = realloc(buf, cap = cap * 2 + 8192);
            if (!b)
                break;
            buf = b;
        }
        size_t k = fread(buf + *len, 1, cap - *len, f);
        if (k == 0)
            break;
        *len += k;
    }
    fclose(f);
    return buf;
}

/* The schema the options name, or the one whose shape the root fits: Turok 1 files have
 * 11 root children. */
static int pick_schema(struct t2_view *v, uint32_t root_count, char *err, size_t errlen)
{
    const char *want = v->fs->opts.schema;
    if (!want[0])
        want = root_count == 11 ? "turok1" : "turok2";
    v->schema = t2fs_schema_builtin(want);
    if (v->schema) {
        v->schema_name = strcmp(want, "turok1") == 0 ? "turok1" : "turok2";
        return 0;
    }
    size_t len;
    char *text = read_text_file(want, &len), jerr[300];
    if (!text) {
        snprintf(err, errlen, "schema %s: not a built-in schema (turok1, turok2) nor a readable file", want);
        return -1;
    }
    v->schema = t2fs_schema_from_json(text, len, jerr, sizeof jerr);
    free(text);
    if (!v->schema) {
        snprintf(err, errlen, "schema %s: %s", want, jerr);
        return -1;
    }
    v->schema_name = "file";
    return 0;
}

int t2fs_view_open(struct s3fs *fs, char *err, size_t errlen)
{
    struct t2_view *v = calloc(1, sizeof *v);
    if (!v) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    v->fs = fs;
    v->be = fs->det.big_endian;
    v->root_off = fs->det.root_off;
    tree_on_free(fs->tree, t2_view_free, v);
    v->window = malloc(sizeof *v->window); /* without it, listings read the file directly */
    if (v->window)
        source_window_init(v->window, &fs->src);
    struct t2fs_branch b;
    if (t2fs_read_branch(&fs->src.src, v->root_off, fs->src.size - v->root_off, v->be, &b, err, errlen))
        return -1;
    if (pick_schema(v, b.count, err, errlen)) {
        t2fs_branch_free(&b);
        return -1;
    }
    v->root_count = b.count;
    v->root_size = b.offset[b.count];
    t2fs_branch_free(&b);
    sb_printf(&fs->facts, "byte_order: %s\n", v->be ? "be" : "le");
    sb_printf(&fs->facts, "root_offset: %" PRIu64 "\n", v->root_off);
    sb_printf(&fs->facts, "root_size: %" PRIu64 "\n", v->root_size);
    sb_printf(&fs->facts, "root_children: %" PRIu32 "\n", v->root_count);
    sb_printf(&fs->facts, "schema: %s%s%s\n", v->schema_name, strcmp(v->schema_name, "file") == 0 ? " " : "",
              strcmp(v->schema_name, "file") == 0 ? fs->opts.schema : "");
    cover_add(&fs->cover, 0, fs->src.size); /* root, prefix.bin and trailer.bin name every byte */
    return view_root(fs, "t2fs.file", populate_t2fs_root, v);
}
