/* The t2fs container as a tree: /root mirrors the container (a branch is a directory
 * named by its index, a leaf is N.bin with its exact bytes), /prefix.bin and
 * /trailer.bin hold bytes outside the root node. Branch tables are read lazily: listing
 * a directory reads its table and classifies each child (the schema decides branch or
 * leaf; where it says nothing, the strong validity test does). RNC-compressed nodes are
 * expanded through the bounded cache and then treated as the node they contain. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs/views/t2fs/view_t2fs_tree.h"
#include "parse/base/err.h"
#include "parse/codec/rnc.h"
#include "parse/t2fs/t2fs.h"

#define T2_MAX_DEPTH 256 /* deeper nesting is shown as leaves: no unbounded descent */

struct t2_view;

/* A compressed node: permanent descriptor, bytes held by the cache. */
struct t2_cnode {
    struct cached c; /* first: the cache hands this pointer back */
    struct t2_view *v;
    uint64_t file_off, stored_len; /* the RNC item in the file */
    int method;
    /* The last production ran out of memory: the reason a failed pin hands its listing
     * (NOMEM fails the listing, never a NAME.error), kept here until cache_pin says it. */
    _Atomic bool nomem;
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
    struct view_hooks root_extra; /* the derived views' directories, added after /root */
    uint64_t compressed_seen, compressed_failed;
    /* A file cut short (its root's offsets run past its end): nodes past the end are
     * NAME.error files; a branch whose table is still in the file stays a directory of
     * the children that are. The bytes from cut_from to the end of the file belong to the
     * one node cut in the middle that cannot be shown (a leaf, a compressed node, a branch
     * whose own table is cut): /unparsed holds them. */
    bool cut;
    uint64_t cut_from;
    /* The locator's lock (recursive): guards the window and the descriptor table below,
     * which /root's listings and the locator share. /root's listings take it inside their
     * populate callback (lock order: the tree's, then this one, then the cache's); the
     * locator takes it on its own, so a file read that needs the locator (an export
     * build) waits for no listing but one using the same view. Nothing under it takes
     * the tree lock: descriptors are malloc'd, not tree memory. */
    pthread_mutex_t lock;
    /* Read-ahead over the file's bytes, kept from one directory listing to the next: a
     * walk lists a directory, then its children, whose bytes lie inside the parent's, so
     * most listings need no read at all. Under the lock (a nested listing may refill it:
     * readers copy out, never keep a pointer into it). */
    struct source_window *window;
    /* Compressed-node descriptors by file offset (open addressing; owned, freed with the
     * view), filled by /root's listings and by the locator, under the lock. */
    struct t2_cnode **cmap;
    size_t ncmap, capcmap;
    /* Offsets of branch tables read (t2fs_view_table_words): the work of listings and
     * lookups, which tests bound by the file's size. Atomic: read without the lock. */
    _Atomic uint64_t table_words;
};

static void t2_view_free(void *p)
{
    struct t2_view *v = p;
    t2fs_schema_free(v->schema);
    free(v->window);
    for (size_t i = 0; i < v->capcmap; i++)
        free(v->cmap[i]);
    free(v->cmap);
    pthread_mutex_destroy(&v->lock);
    free(v);
}

/* ---- compressed nodes ---- */

static enum s3_err produce_rnc(struct cached *c, uint8_t **data, size_t *size, char *err, size_t errlen)
{
    struct t2_cnode *cn = (struct t2_cnode *)c;
    struct s3fs *fs = cn->v->fs;
    uint8_t *item = malloc(cn->stored_len);
    cn->nomem = !item;
    if (!item)
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    enum s3_err rc = source_pread_checked(&fs->src, cn->file_off, item, cn->stored_len);
    if (rc) {
        free(item);
        return s3_fail(rc, err, errlen, "read error (the file changed?)");
    }
    struct rnc_options o = {fs->opts.has_rnc_key, fs->opts.rnc_key, fs->opts.max_unpacked};
    rc = rnc_unpack(item, cn->stored_len, &o, data, size, err, errlen);
    cn->nomem = rc == S3_ERR_NOMEM;
    free(item);
    return rc;
}

/* The bytes a node location reads from, with its blob pinned (when it has one). */
struct t2_bytes {
    struct s3_src src;
    struct mem_src_ctx mem;
    struct t2_cnode *pinned;
};

/* S3_OK; NOMEM when expanding the blob ran out of memory; IO else (err says why). */
static enum s3_err open_bytes(struct t2_view *v, struct t2_cnode *blob, struct t2_bytes *b, char *err,
                              size_t errlen)
{
    b->pinned = NULL;
    if (!blob) {
        b->src = v->window ? v->window->view : v->fs->src.src;
        return S3_OK;
    }
    size_t size;
    const uint8_t *d;
    if (cache_pin(&v->fs->cache, &blob->c, &d, &size, err, errlen))
        return blob->nomem ? S3_ERR_NOMEM : S3_ERR_IO;
    mem_src_init(&b->src, &b->mem, d, size);
    b->pinned = blob;
    return S3_OK;
}

static void close_bytes(struct t2_view *v, struct t2_bytes *b)
{
    if (b->pinned)
        cache_unpin(&v->fs->cache, &b->pinned->c);
}

static enum s3_err blob_read(struct tree *t, void *ctx, uint64_t arg, uint64_t off, void *buf, size_t len, size_t *got)
{
    (void)t;
    struct t2_cnode *cn = ctx;
    /* arg: where the file starts in the expanded node; refused memory is ENOMEM to this
     * read, the next expands again */
    return cache_read(&cn->v->fs->cache, &cn->c, CACHE_ANY_SIZE, arg + off, buf, len, got);
}

/* What an open file of a compressed node's bytes holds: the expanded node (tree_hold). */
static struct cached *blob_item(void *ctx, uint64_t arg, struct cache **cache)
{
    (void)arg;
    struct t2_cnode *cn = ctx;
    *cache = &cn->v->fs->cache;
    return &cn->c;
}

/* ---- compressed-node descriptors, one per compressed node of the file ---- */

static size_t cmap_home(uint64_t file_off, size_t cap)
{
    return (size_t)(file_off * 0x9E3779B97F4A7C15ull >> 20) & (cap - 1); /* cap: a power of two */
}

/* /root and the locator share descriptors, so a node's expanded bytes are held once. */
static struct t2_cnode *cnode_get(struct t2_view *v, uint64_t file_off, uint64_t stored, uint64_t unpacked,
                                   int method)
{
    if (v->ncmap * 2 >= v->capcmap) {
        size_t cap = v->capcmap ? v->capcmap * 2 : 64;
        struct t2_cnode **m = calloc(cap, sizeof *m);
        if (!m)
            return NULL;
        for (size_t i = 0; i < v->capcmap; i++)
            if (v->cmap[i]) {
                size_t h = cmap_home(v->cmap[i]->file_off, cap);
                while (m[h])
                    h = (h + 1) & (cap - 1);
                m[h] = v->cmap[i];
            }
        free(v->cmap);
        v->cmap = m;
        v->capcmap = cap;
    }
    size_t h = cmap_home(file_off, v->capcmap);
    for (; v->cmap[h]; h = (h + 1) & (v->capcmap - 1))
        if (v->cmap[h]->file_off == file_off)
            return v->cmap[h];
    struct t2_cnode *cn = calloc(1, sizeof *cn); /* not tree_alloc: no tree lock under the view's */
    if (!cn)
        return NULL;
    cn->c.produce = produce_rnc;
    cn->c.hint = unpacked <= v->fs->opts.max_unpacked ? unpacked : 0; /* else refused */
    cn->v = v;
    cn->file_off = file_off;
    cn->stored_len = stored;
    cn->method = method;
    v->cmap[h] = cn;
    v->ncmap++;
    return cn;
}

/* ---- classification: the one reading of a node /root and the locator share ---- */

struct t2_reading {
    enum t2fs_node_kind kind;
    uint32_t count;       /* branch: children */
    uint64_t branch_size; /* branch: offset[count] */
    bool is_array;        /* a leaf whose array header fits */
    uint32_t esize, ecount;
    bool known;          /* the schema describes the leaf (t2fs.raw, not t2fs.unknown) */
    char err[T2FS_ERR];  /* non-empty: /root shows N.error beside N.bin */
    bool err_is_warning; /* the error also goes to /info */
    bool nomem;          /* out of memory: no reading (the listing fails) */
};

/* t2fs_read_branch, counted in v->table_words. */
static enum s3_err read_table(struct t2_view *v, const struct s3_src *src, uint64_t off, uint64_t space,
                              struct t2fs_branch *b, char *err, size_t errlen)
{
    enum s3_err e = t2fs_read_branch(src, off, space, v->be, b, err, errlen);
    if (e == S3_OK)
        atomic_fetch_add_explicit(&v->table_words, (uint64_t)b->count + 1, memory_order_relaxed);
    return e;
}

static void read_node(struct t2_view *v, const struct t2_where *w, const struct s3_src *src,
                      const struct t2fs_schema *s, uint32_t depth, struct t2_reading *r)
{
    r->kind = T2FS_NODE_LEAF;
    r->count = 0;
    r->is_array = r->err_is_warning = r->nomem = false;
    r->err[0] = 0;
    r->known = s != NULL;
    if (s && s->kind == T2K_DATA) {
        if (s->data == T2D_ARRAY) {
            r->is_array = t2fs_read_array(src, w->off, w->space, v->be, &r->esize, &r->ecount, r->err,
                                          sizeof r->err) == 0;
            r->known = r->is_array;
            r->err_is_warning = !r->is_array;
        }
        return;
    }
    if (depth >= T2_MAX_DEPTH) {
        snprintf(r->err, sizeof r->err, "nesting deeper than %d levels: shown as bytes", T2_MAX_DEPTH);
        r->known = false;
        return;
    }
    struct t2fs_branch b;
    char err[T2FS_ERR];
    enum s3_err e = read_table(v, src, w->off, w->space, &b, err, sizeof err);
    if (e == S3_ERR_NOMEM) {
        r->nomem = true;
        return;
    }
    if (e) {
        if (s) { /* the schema says branch, the bytes disagree */
            snprintf(r->err, sizeof r->err, "%s", err);
            r->err_is_warning = true;
        }
        return;
    }
    r->kind = T2FS_NODE_BRANCH;
    r->count = b.count;
    r->branch_size = b.offset[b.count];
    t2fs_branch_free(&b);
}

/* Child i's place in a branch read from bytes. */
static struct t2_where child_where(const struct t2_where *parent, const struct t2fs_branch *b, uint32_t i)
{
    return (struct t2_where){parent->blob, parent->off + b->offset[i], (uint64_t)b->offset[i + 1] - b->offset[i]};
}

/* ---- a file cut short ---- */

/* Whether a node in the file runs past its end (nodes in expanded data never do). */
static bool past_end(const struct t2_view *v, const struct t2_where *w)
{
    return !w->blob && w->off + w->space > v->fs->src.size;
}

/* A node running past the end that is still shown as a directory: not a leaf by the
 * schema, not compressed (a cut RNC node cannot be expanded), within the depth bound, and
 * its own table (padding included, as for the root) wholly in the file and valid for the
 * node's full size. *count: children. *nomem: its table could not be read for lack of
 * memory (false returned: the caller fails). */
static bool cut_branch_readable(struct t2_view *v, const struct t2_where *w, const struct s3_src *src,
                                const struct t2fs_schema *s, uint32_t depth, uint32_t *count, bool *nomem)
{
    *nomem = false;
    if ((s && s->kind == T2K_DATA) || depth >= T2_MAX_DEPTH || t2fs_rnc_method(src, w->off, w->space) != 0)
        return false;
    struct t2fs_branch b;
    char err[T2FS_ERR];
    enum s3_err e = read_table(v, src, w->off, w->space, &b, err, sizeof err);
    if (e) {
        *nomem = e == S3_ERR_NOMEM;
        return false;
    }
    bool whole = w->off + b.header_len <= v->fs->src.size; /* its padding too, as the root's */
    *count = b.count;
    t2fs_branch_free(&b);
    return whole;
}

/* What a NAME.error of a node running past the end says: where the node is, how long,
 * the file's size, and where its bytes that exist are. `name` is the node's entry name
 * (for "NAME/ shows..."), NULL in the locator's messages. */
static void cut_message(const struct t2_view *v, const struct t2_where *w, bool as_dir, const char *name,
                        char *buf, size_t len)
{
    uint64_t size = v->fs->src.size;
    int k = snprintf(buf, len, "cut short: the node at offset %" PRIu64 " (0x%" PRIx64 "), %" PRIu64 " bytes, ",
                     w->off, w->off, w->space);
    if (k < 0 || (size_t)k >= len)
        return;
    if (w->off >= size)
        snprintf(buf + k, len - (size_t)k, "lies past the end of the file (%" PRIu64 " bytes)", size);
    else if (as_dir)
        snprintf(buf + k, len - (size_t)k,
                 "ends at byte %" PRIu64 ", past the end of the file (%" PRIu64 " bytes); %s%sshows its children "
                 "that lie within the file",
                 w->off + w->space, size, name ? name : "its directory", name ? "/ " : " ");
    else
        snprintf(buf + k, len - (size_t)k,
                 "ends at byte %" PRIu64 ", past the end of the file (%" PRIu64 " bytes); its first %" PRIu64
                 " bytes are /unparsed/0x%" PRIx64 "-0x%" PRIx64 ".bin",
                 w->off + w->space, size, size - w->off, w->off, size - w->off);
}

/* Follows the nodes that run past the end, from the root down, the way the listings will
 * show them, to the one cut in the middle that is not a directory: its bytes are the only
 * ones no file of /root holds (cut_from), or none when the cut falls between nodes. */
static uint64_t cut_point(struct t2_view *v, const struct s3_src *src)
{
    struct t2_where at = {NULL, v->root_off, v->root_size};
    const struct t2fs_schema *schema = v->schema;
    uint64_t size = v->fs->src.size;
    for (uint32_t depth = 1;; depth++) {
        struct t2fs_branch b;
        char err[T2FS_ERR];
        if (read_table(v, src, at.off, at.space, &b, err, sizeof err))
            return at.off; /* never: the root and each directory below were read */
        uint32_t i = 0;
        while (i < b.count && at.off + b.offset[i + 1] <= size)
            i++;
        bool found = i < b.count;
        struct t2_where w = found ? child_where(&at, &b, i) : at;
        t2fs_branch_free(&b);
        uint32_t count;
        bool nomem; /* when opening: shown as a node cut in the middle, its bytes /unparsed */
        const struct t2fs_schema *s = t2fs_schema_child(schema, i);
        if (!found || w.off >= size)
            return size; /* the cut falls between nodes (or in a branch's slack) */
        if (!cut_branch_readable(v, &w, src, s, depth, &count, &nomem))
            return w.off;
        at = w;
        schema = s;
    }
}

/* ---- the /root tree ---- */

/* The span xattrs of a node: its own bytes, or for nodes inside compressed data, the
 * compressed node they came from. */
static void set_span(struct tree *t, uint32_t ino, const struct t2_where *w)
{
    if (w->blob)
        tree_set_span(t, ino, w->blob->file_off, w->blob->stored_len);
    else
        tree_set_span(t, ino, w->off, w->space);
}

#define LEAF_SUFFIX ".bin" /* /root's name for a leaf: N.bin */

static uint32_t add_leaf(struct t2_view *v, uint32_t dir, const char *name, const struct t2_where *w)
{
    struct tree *t = v->fs->tree;
    char fname[32];
    snprintf(fname, sizeof fname, "%s" LEAF_SUFFIX, name);
    uint32_t ino;
    if (w->blob)
        ino = tree_add_gen(t, dir, fname, NULL, w->space, blob_read, w->blob, w->off);
    else
        ino = tree_add_range(t, dir, fname, NULL, w->off, w->space);
    set_span(t, ino, w);
    return ino;
}

static enum s3_err populate_branch(struct tree *t, uint32_t dir, void *ctx, uint64_t arg);

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

/* A warning for /info, made while listing: refused memory fails the listing (ENOMEM),
 * never an /info without it. */
static void warn_where(struct t2_view *v, const struct t2_where *w, const char *path_hint, const char *msg)
{
    enum s3_err e;
    if (w->blob)
        e = diag_add(&v->fs->diag, "%s (inside the RNC node at 0x%" PRIx64 "): %s", path_hint, w->blob->file_off,
                     msg);
    else
        e = diag_add(&v->fs->diag, "%s at 0x%" PRIx64 ": %s", path_hint, w->off, msg);
    if (e)
        tree_note_oom(v->fs->tree);
}

/* What /info says about a node whose reading is fine but disagrees with the schema. */
static void warn_schema(struct t2_view *v, const struct t2_where *w, const char *name, const struct t2fs_schema *s,
                        const struct t2_reading *r)
{
    char msg[160];
    msg[0] = 0;
    if (!s)
        ;
    else if (r->kind == T2FS_NODE_LEAF && r->is_array && s->value_size && r->esize != s->value_size && r->ecount)
        snprintf(msg, sizeof msg, "%s: element size %" PRIu32 ", the schema says %" PRIu32, s->name, r->esize,
                 s->value_size);
    else if (r->kind == T2FS_NODE_LEAF && s->kind == T2K_DATA && s->data != T2D_ARRAY && s->fixed_size &&
             w->space < s->fixed_size && w->space != 8)
        snprintf(msg, sizeof msg, "%s: %" PRIu64 " bytes, the schema says %" PRIu32, s->name, w->space,
                 s->fixed_size);
    else if (r->kind == T2FS_NODE_BRANCH && s->kind == T2K_FIXED && r->count != s->nchild)
        snprintf(msg, sizeof msg, "%s: %" PRIu32 " children, the schema expects %" PRIu32, s->name, r->count,
                 s->nchild);
    if (msg[0])
        warn_where(v, w, name, msg);
    if (r->kind == T2FS_NODE_BRANCH && r->branch_size != w->space && !w->blob && w->space - r->branch_size >= 8) {
        snprintf(msg, sizeof msg, "branch of %" PRIu64 " bytes in a %" PRIu64 "-byte slot", r->branch_size,
                 w->space);
        warn_where(v, w, name, msg);
    }
}

static void classify(struct t2_view *v, uint32_t dir, const char *name, const struct t2_where *w,
                     const struct s3_src *src, const struct t2fs_schema *s, uint32_t depth, const char *prefix)
{
    struct tree *t = v->fs->tree;
    struct t2_reading r;
    read_node(v, w, src, s, depth, &r);
    if (r.nomem) {
        tree_note_oom(t); /* the listing fails (ENOMEM), never a leaf for a branch */
        return;
    }
    if (r.err[0])
        add_error(t, dir, name, r.err);
    warn_schema(v, w, name, s, &r);
    if (r.kind == T2FS_NODE_BRANCH)
        add_branch_dir(v, dir, name, w, s, depth + 1, prefix, r.count);
    else if (r.is_array)
        set_typef(t, add_leaf(v, dir, name, w), "%st2fs.array[%" PRIu32 "]x%" PRIu32, prefix, r.esize, r.ecount);
    else
        set_typef(t, add_leaf(v, dir, name, w), "%st2fs.%s", prefix, r.known ? "raw" : "unknown");
    if (r.err[0] && r.err_is_warning)
        warn_where(v, w, name, r.err);
}

/* The stored length of a compressed node at w (its header's packed size, or all of w),
 * and the size its header says it expands to (0 when unreadable). */
static uint64_t rnc_lengths(const struct t2_where *w, const struct s3_src *src, uint64_t *unpacked)
{
    uint8_t head[RNC_HEADER_SIZE];
    struct rnc_header h;
    char err[256];
    *unpacked = 0;
    if (src_read(src, w->off, head, sizeof head) == 0 &&
        rnc_parse_header(head, w->space < SIZE_MAX ? (size_t)w->space : SIZE_MAX, &h, err, sizeof err) == 0) {
        *unpacked = h.unpacked_size;
        return RNC_HEADER_SIZE + (uint64_t)h.packed_size;
    }
    return w->space;
}

static uint64_t rnc_stored_len(const struct t2_where *w, const struct s3_src *src)
{
    uint64_t unpacked;
    return rnc_lengths(w, src, &unpacked);
}

/* The descriptor of the compressed node at w (*cn): S3_OK, or UNSUPPORTED with err
 * (unknown method, nested in compressed data), or NOMEM. */
static enum s3_err compressed_at(struct t2_view *v, const struct t2_where *w, const struct s3_src *src, int method,
                                 struct t2_cnode **cn, char *err, size_t errlen)
{
    *cn = NULL;
    if (method < 0 || w->blob)
        return s3_fail(S3_ERR_UNSUPPORTED, err, errlen, "%s",
                       method < 0 ? "compressed node: unknown RNC method"
                                  : "compressed node inside compressed data: not decoded");
    uint64_t unpacked, stored = rnc_lengths(w, src, &unpacked);
    *cn = cnode_get(v, w->off, stored, unpacked, method);
    return *cn ? S3_OK : s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
}

/* A child that starts with "RNC": N.rnc with the stored bytes, then the node it holds. */
static void add_compressed(struct t2_view *v, uint32_t dir, const char *name, const struct t2_where *w,
                           const struct s3_src *src, int method, const struct t2fs_schema *s, uint32_t depth)
{
    struct tree *t = v->fs->tree;
    char fname[32], err[256];
    uint64_t stored = rnc_stored_len(w, src);
    v->compressed_seen++;
    snprintf(fname, sizeof fname, "%s.rnc", name);
    struct t2_where item = {w->blob, w->off, stored};
    uint32_t rnc = w->blob ? tree_add_gen(t, dir, fname, NULL, stored, blob_read, w->blob, w->off)
                           : tree_add_range(t, dir, fname, NULL, w->off, stored);
    set_span(t, rnc, &item);
    set_typef(t, rnc, "rnc%d", method < 0 ? 0 : method);
    struct t2_cnode *cn;
    struct t2_bytes inner;
    enum s3_err e = compressed_at(v, w, src, method, &cn, err, sizeof err);
    if (e == S3_OK)
        e = open_bytes(v, cn, &inner, err, sizeof err);
    if (e == S3_ERR_NOMEM) {
        tree_note_oom(t); /* the listing fails (ENOMEM), never a NAME.error */
        return;
    }
    if (e) {
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

/* A child running past the end of the file: NAME.error, beside NAME/ when its table is
 * in the file (cut_branch_readable). */
static void add_cut(struct t2_view *v, uint32_t dir, const char *name, const struct t2_where *w,
                    const struct s3_src *src, const struct t2fs_schema *s, uint32_t depth)
{
    uint32_t count;
    char msg[400];
    bool nomem = false;
    bool as_dir = w->off < v->fs->src.size && cut_branch_readable(v, w, src, s, depth, &count, &nomem);
    if (nomem) {
        tree_note_oom(v->fs->tree); /* the listing fails (ENOMEM) */
        return;
    }
    cut_message(v, w, as_dir, name, msg, sizeof msg);
    add_error(v->fs->tree, dir, name, msg);
    if (as_dir)
        add_branch_dir(v, dir, name, w, s, depth + 1, "", count);
}

static enum s3_err list_branch(struct t2_view *v, struct t2_dir *d, uint32_t dir);

/* A /root directory's children: read with the view's window and descriptors, so under its
 * lock. */
static enum s3_err populate_branch(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)t, (void)arg;
    struct t2_dir *d = ctx;
    pthread_mutex_lock(&d->v->lock);
    enum s3_err e = list_branch(d->v, d, dir);
    pthread_mutex_unlock(&d->v->lock);
    return e;
}

static enum s3_err list_branch(struct t2_view *v, struct t2_dir *d, uint32_t dir)
{
    char err[256];
    struct t2_bytes bytes;
    if (!d->at.blob && source_check(&v->fs->src)) /* children come from the file's bytes */
        return S3_ERR_IO;
    enum s3_err e = open_bytes(v, d->at.blob, &bytes, err, sizeof err);
    if (e)
        return e;
    struct t2fs_branch b;
    e = read_table(v, &bytes.src, d->at.off, d->at.space, &b, err, sizeof err);
    if (e) {
        close_bytes(v, &bytes);
        return e == S3_ERR_NOMEM ? e : S3_ERR_IO; /* validated when the parent was listed: the file changed */
    }
    for (uint32_t i = 0; i < b.count && !tree_full(v->fs->tree); i++) {
        char name[16];
        snprintf(name, sizeof name, "%" PRIu32, i);
        struct t2_where w = child_where(&d->at, &b, i);
        const struct t2fs_schema *s = t2fs_schema_child(d->schema, i);
        if (past_end(v, &w)) {
            add_cut(v, dir, name, &w, &bytes.src, s, d->depth);
            continue;
        }
        int method = t2fs_rnc_method(&bytes.src, w.off, w.space);
        if (method != 0)
            add_compressed(v, dir, name, &w, &bytes.src, method, s, d->depth);
        else
            classify(v, dir, name, &w, &bytes.src, s, d->depth, "");
    }
    t2fs_branch_free(&b);
    close_bytes(v, &bytes);
    return S3_OK;
}

/* ---- the locator ---- */

static enum s3_err populate_t2fs_root(struct tree *t, uint32_t dir, void *ctx, uint64_t arg);

struct t2_view *t2fs_view_of(struct s3fs *fs)
{
    return tree_dir_ctx(fs->tree, fs->root, populate_t2fs_root);
}

struct s3fs *t2fs_view_fs(const struct t2_view *v)
{
    return v->fs;
}

uint64_t t2fs_view_table_words(const struct t2_view *v)
{
    return atomic_load_explicit(&v->table_words, memory_order_relaxed);
}

bool t2fs_view_big_endian(const struct t2_view *v)
{
    return v->be;
}

const struct t2fs_schema *t2fs_view_schema(const struct t2_view *v)
{
    return v->schema;
}

const char *t2fs_view_schema_name(const struct t2_view *v)
{
    return v->schema_name;
}

void t2fs_node_root(struct t2_view *v, struct t2fs_node *out)
{
    memset(out, 0, sizeof *out);
    out->kind = T2FS_NODE_BRANCH;
    out->count = v->root_count;
    out->schema = v->schema;
    out->off = v->root_off;
    out->space = v->root_size;
}

void t2fs_node_name(const struct t2fs_node *n, char *buf, size_t len)
{
    size_t k = (size_t)snprintf(buf, len, "/root");
    for (uint32_t i = 0; i < n->depth && k < len; i++) {
        if (i < T2FS_PATH_KEPT)
            k += (size_t)snprintf(buf + k, len - k, "/%" PRIu32, n->path[i]);
        else if (i == T2FS_PATH_KEPT && n->depth > T2FS_PATH_KEPT + 1)
            k += (size_t)snprintf(buf + k, len - k, "/...");
    }
}

void t2fs_node_root_entry(const struct t2fs_node *n, uint32_t i, char *buf, size_t len)
{
    snprintf(buf, len, "%" PRIu32 "%s", i, n->kind == T2FS_NODE_LEAF ? LEAF_SUFFIX : "");
}

void t2fs_node_span(const struct t2fs_node *n, uint64_t *off, uint64_t *len)
{
    *off = n->blob ? n->blob->file_off : n->off;
    *len = n->blob ? n->blob->stored_len : n->space;
}

/* Bytes the locator reads from: the file through the window (after checking it is
 * unchanged), or a compressed node's expanded data. */
static enum s3_err open_node_bytes(struct t2_view *v, struct t2_cnode *blob, struct t2_bytes *b, char *err,
                                   size_t errlen)
{
    if (!blob && source_check(&v->fs->src))
        return s3_fail(S3_ERR_IO, err, errlen, "read error (the file changed?)");
    return open_bytes(v, blob, b, err, errlen);
}

static enum s3_err node_child_locked(struct t2_view *v, const struct t2fs_node *n, uint32_t i,
                                     struct t2fs_node *out, char *err, size_t errlen);

enum s3_err t2fs_node_child(struct t2_view *v, const struct t2fs_node *n, uint32_t i, struct t2fs_node *out,
                            char *err, size_t errlen)
{
    pthread_mutex_lock(&v->lock);
    enum s3_err e = node_child_locked(v, n, i, out, err, errlen);
    pthread_mutex_unlock(&v->lock);
    return e;
}

static enum s3_err node_child_locked(struct t2_view *v, const struct t2fs_node *n, uint32_t i,
                                     struct t2fs_node *out, char *err, size_t errlen)
{
    char name[160], why[256];
    t2fs_node_name(n, name, sizeof name);
    enum s3_err e = t2fs_node_expect(n, T2FS_NODE_BRANCH, err, errlen);
    if (e)
        return e;
    if (i >= n->count)
        return s3_fail(S3_ERR_FORMAT, err, errlen, "%s: %" PRIu32 " children, no child %" PRIu32, name, n->count, i);
    struct t2_bytes bytes;
    if ((e = open_node_bytes(v, n->blob, &bytes, why, sizeof why)))
        return s3_fail(e, err, errlen, "%s: %s", name, why);
    /* child i's two offsets, not the whole table: n's table was validated when n was made
     * (read_node, the root when the file was opened, a cut branch), so a lookup costs the
     * same whatever n's count; reading the table each time made every lookup through a long
     * list cost the list (a model of M meshes cost M^2 to list). The checks keep the child
     * inside n should the bytes have changed. */
    uint32_t lo, hi;
    if (src_u32(&bytes.src, n->off + 4 + 4 * (uint64_t)i, v->be, &lo) ||
        src_u32(&bytes.src, n->off + 8 + 4 * (uint64_t)i, v->be, &hi) || lo > hi || hi > n->space || (lo | hi) & 7) {
        close_bytes(v, &bytes);
        return s3_fail(S3_ERR_IO, err, errlen, "%s: no child %" PRIu32 " (the file changed?)", name, i);
    }
    atomic_fetch_add_explicit(&v->table_words, 2, memory_order_relaxed);
    struct t2_where w = {n->blob, n->off + lo, (uint64_t)hi - lo};
    *out = *n;
    if (n->depth < T2FS_PATH_KEPT)
        out->path[n->depth] = i;
    out->depth = n->depth + 1;
    out->schema = t2fs_schema_child(n->schema, i);
    t2fs_node_name(out, name, sizeof name);
    if (past_end(v, &w)) { /* a directory when /root shows one, else the .error's reason */
        uint32_t count;
        bool nomem = false;
        bool as_dir = w.off < v->fs->src.size &&
                      cut_branch_readable(v, &w, &bytes.src, out->schema, n->depth + 1, &count, &nomem);
        close_bytes(v, &bytes);
        if (nomem)
            return s3_fail(S3_ERR_NOMEM, err, errlen, "%s: out of memory", name);
        if (!as_dir) {
            cut_message(v, &w, false, NULL, why, sizeof why);
            return s3_fail(S3_ERR_RANGE, err, errlen, "%s: %s", name, why);
        }
        out->kind = T2FS_NODE_BRANCH;
        out->count = count;
        out->blob = NULL;
        out->off = w.off;
        out->space = w.space;
        return S3_OK;
    }
    int method = t2fs_rnc_method(&bytes.src, w.off, w.space);
    struct t2_bytes inner = {0};
    const struct s3_src *src = &bytes.src;
    if (method != 0) {
        struct t2_cnode *cn;
        e = compressed_at(v, &w, &bytes.src, method, &cn, why, sizeof why);
        if (e == S3_OK)
            e = open_bytes(v, cn, &inner, why, sizeof why);
        if (e) {
            close_bytes(v, &bytes);
            return s3_fail(e, err, errlen, "%s: %s", name, why);
        }
        w = (struct t2_where){cn, 0, inner.src.size};
        src = &inner.src;
    }
    struct t2_reading r;
    read_node(v, &w, src, out->schema, n->depth + 1, &r);
    if (method != 0)
        close_bytes(v, &inner);
    close_bytes(v, &bytes);
    if (r.nomem)
        return s3_fail(S3_ERR_NOMEM, err, errlen, "%s: out of memory", name);
    out->kind = r.kind;
    out->count = r.count;
    out->blob = w.blob;
    out->off = w.off;
    out->space = w.space;
    return S3_OK;
}

enum s3_err t2fs_node_at(struct t2_view *v, const struct t2fs_node *n, const unsigned *idx, size_t nidx,
                         struct t2fs_node *out, char *err, size_t errlen)
{
    struct t2fs_node cur = *n;
    for (size_t k = 0; k < nidx; k++) {
        enum s3_err e = t2fs_node_child(v, &cur, idx[k], &cur, err, errlen);
        if (e)
            return e;
    }
    *out = cur;
    return S3_OK;
}

enum s3_err t2fs_node_expect(const struct t2fs_node *n, enum t2fs_node_kind kind, char *err, size_t errlen)
{
    if (n->kind == kind)
        return S3_OK;
    char name[160];
    t2fs_node_name(n, name, sizeof name);
    if (n->kind == T2FS_NODE_BRANCH)
        return s3_fail(S3_ERR_FORMAT, err, errlen, "%s: a branch of %" PRIu32 " children, not a leaf", name,
                       n->count);
    return s3_fail(S3_ERR_FORMAT, err, errlen, "%s: a leaf, not a branch", name);
}

static enum s3_err node_bytes_locked(struct t2_view *v, const struct t2fs_node *n, uint8_t **buf, size_t *len,
                                     char *err, size_t errlen);

enum s3_err t2fs_node_bytes(struct t2_view *v, const struct t2fs_node *n, uint8_t **buf, size_t *len, char *err,
                            size_t errlen)
{
    pthread_mutex_lock(&v->lock);
    enum s3_err e = node_bytes_locked(v, n, buf, len, err, errlen);
    pthread_mutex_unlock(&v->lock);
    return e;
}

static enum s3_err node_bytes_locked(struct t2_view *v, const struct t2fs_node *n, uint8_t **buf, size_t *len,
                                     char *err, size_t errlen)
{
    char name[160], why[256];
    t2fs_node_name(n, name, sizeof name);
    *buf = NULL;
    *len = 0;
    if (n->space > SIZE_MAX - 1 || (v->fs->opts.max_unpacked && n->space > v->fs->opts.max_unpacked))
        return s3_fail(S3_ERR_LIMIT, err, errlen, "%s: %" PRIu64 " bytes, more than the limit (max_unpacked_mb)",
                       name, n->space);
    struct t2_where at = {n->blob, n->off, n->space};
    if (past_end(v, &at)) {
        cut_message(v, &at, false, NULL, why, sizeof why);
        return s3_fail(S3_ERR_RANGE, err, errlen, "%s: %s", name, why);
    }
    uint8_t *b = alloc_array(n->space, 1);
    if (!b)
        return s3_fail(S3_ERR_NOMEM, err, errlen, "%s: out of memory", name);
    enum s3_err e;
    if (n->blob) {
        struct t2_bytes bytes;
        e = open_bytes(v, n->blob, &bytes, why, sizeof why);
        if (e == S3_OK) {
            if ((e = src_read(&bytes.src, n->off, b, (size_t)n->space)))
                snprintf(why, sizeof why, "outside the expanded data");
            close_bytes(v, &bytes);
        }
    } else {
        if ((e = source_pread_checked(&v->fs->src, n->off, b, (size_t)n->space)))
            snprintf(why, sizeof why, "read error (the file changed?)");
    }
    if (e) {
        free(b);
        return s3_fail(e, err, errlen, "%s: %s", name, why);
    }
    *buf = b;
    *len = (size_t)n->space;
    return S3_OK;
}

enum s3_err t2fs_node_array(struct t2_view *v, const struct t2fs_node *n, struct t2fs_array *a, char *err,
                            size_t errlen)
{
    char name[160];
    memset(a, 0, sizeof *a);
    t2fs_node_name(n, name, sizeof name);
    enum s3_err e = t2fs_node_expect(n, T2FS_NODE_LEAF, err, errlen);
    if (e == S3_OK)
        e = t2fs_node_bytes(v, n, &a->bytes, &a->len, err, errlen);
    if (e)
        return e;
    if (t2fs_array_bytes(a->bytes, a->len, v->be, &a->esize, &a->count)) {
        free(a->bytes);
        a->bytes = NULL;
        return s3_fail(S3_ERR_FORMAT, err, errlen,
                       "%s: not an array (its element size and count do not fit its %zu bytes)", name, a->len);
    }
    a->data = a->bytes + 8;
    return S3_OK;
}

void t2fs_add_node_error(struct t2_view *v, uint32_t dir, const char *name, enum s3_err e, const char *err)
{
    if (e == S3_ERR_NOMEM)
        tree_note_oom(v->fs->tree); /* the listing fails (ENOMEM): never NAME.error */
    else
        add_error(v->fs->tree, dir, name, err);
}

uint32_t t2fs_node_add_file(struct t2_view *v, const struct t2fs_node *n, uint32_t dir, const char *name,
                            uint64_t off, uint64_t len, const char *type)
{
    struct tree *t = v->fs->tree;
    uint32_t ino;
    if (!n->blob) {
        ino = tree_add_range(t, dir, name, NULL, n->off + off, len);
    } else { /* a slice of the expanded node (the cache's), never a copy in the tree */
        ino = tree_add_gen(t, dir, name, NULL, len, blob_read, n->blob, n->off + off);
        uint64_t so, sl;
        t2fs_node_span(n, &so, &sl);
        tree_set_span(t, ino, so, sl);
    }
    if (ino && type)
        tree_set_type(t, ino, type);
    return ino;
}

static enum s3_err populate_t2fs_root(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
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
    for (const struct view_hook *h = v->root_extra.first; h; h = h->next)
        ((t2fs_root_extra_fn *)h->fn)(v, dir, h->ctx);
    return S3_OK;
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
    enum s3_err e = t2fs_schema_builtin(want, &v->schema);
    if (e == S3_OK) {
        v->schema_name = strcmp(want, "turok1") == 0 ? "turok1" : "turok2";
        return 0;
    }
    if (e != S3_ERR_UNSUPPORTED) { /* a built-in name, but no memory for it */
        snprintf(err, errlen, "schema %s: %s", want, s3_err_str(e));
        return -1;
    }
    size_t len;
    char *text = read_text_file(want, &len), jerr[300];
    if (!text) {
        snprintf(err, errlen, "schema %s: not a built-in schema (turok1, turok2) nor a readable file", want);
        return -1;
    }
    e = t2fs_schema_from_json(text, len, &v->schema, jerr, sizeof jerr);
    free(text);
    if (e) {
        snprintf(err, errlen, "schema %s: %s", want, jerr);
        return -1;
    }
    v->schema_name = "file";
    return 0;
}

enum s3_err t2fs_view_add_root_extra(struct t2_view *v, t2fs_root_extra_fn *fn, void *ctx)
{
    return view_hooks_add(v->fs->tree, &v->root_extra, (void (*)(void))fn, ctx);
}

enum s3_err t2fs_view_new(struct s3fs *fs, t2fs_root_extra_fn *root_extra, char *err, size_t errlen)
{
    struct t2_view *v = calloc(1, sizeof *v);
    if (!v)
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&v->lock, &attr);
    pthread_mutexattr_destroy(&attr);
    v->fs = fs;
    v->be = fs->det.big_endian;
    v->root_off = fs->det.root_off;
    if (tree_on_free(fs->tree, t2_view_free, v)) {
        t2_view_free(v);
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    }
    if (root_extra && t2fs_view_add_root_extra(v, root_extra, NULL))
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    v->window = malloc(sizeof *v->window); /* without it, listings read the file directly */
    if (v->window)
        source_window_init(v->window, &fs->src);
    struct t2fs_branch b;
    /* a root cut short (detection said so) is read for its full size: its table is in the file */
    uint64_t space = fs->det.root_cut ? UINT64_MAX : fs->src.size - v->root_off;
    enum s3_err e = t2fs_read_branch(&fs->src.src, v->root_off, space, v->be, &b, err, errlen);
    if (e != S3_OK)
        return e;
    if (pick_schema(v, b.count, err, errlen)) { /* -o schema= names none it can read */
        t2fs_branch_free(&b);
        return S3_ERR_FORMAT;
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
    uint64_t end = v->root_off + v->root_size;
    v->cut = end > fs->src.size;
    v->cut_from = v->cut ? cut_point(v, &fs->src.src) : fs->src.size;
    if (v->cut) {
        sb_printf(&fs->facts, "missing_bytes: %" PRIu64 "\n", end - fs->src.size);
        if (diag_add(&fs->diag,
                     "the file is cut short: its root node ends at byte %" PRIu64 ", the file has %" PRIu64
                     " bytes (%" PRIu64 " missing); nodes past the end are NAME.error files",
                     end, fs->src.size, end - fs->src.size))
            return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    }
    /* root, prefix.bin and trailer.bin name every byte; in a file cut short, all but the
     * bytes of the node cut in the middle (cut_point: /unparsed shows them) */
    cover_add(&fs->cover, 0, v->cut_from);
    if ((e = tree_gen_item(blob_read, blob_item)))
        return s3_fail(e, err, errlen, "the table of generated files' items is full");
    return view_root(fs, "t2fs.file", populate_t2fs_root, v);
}
