#include "fs/tree.h"
#include "fs/sbuf.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum node_content { CONTENT_NONE, CONTENT_RANGE, CONTENT_TEXT, CONTENT_GEN, CONTENT_VOLATILE };

struct dirinfo {
    uint32_t *child; /* in creation order: the order readdir shows */
    uint32_t n, cap;
    uint32_t *sorted; /* child sorted by name, for lookup */
    populate_fn populate;
    void *ctx;
    uint64_t arg;
    uint32_t src_id; /* the source range nodes made in it read (inherited from its parent) */
    bool populated;
};

enum { NODE_HAS_SPAN = 1 };

/* A volatile file's text can grow while mounted (/info gains warnings as lazily parsed
 * parts are browsed): its size is measured at each stat, and readers get a snapshot. */

struct node {
    char *name;
    uint32_t parent;
    uint8_t type, content, flags;
    uint64_t size;
    uint64_t span_off, span_len; /* user.s3rig.offset / .length */
    const char *xtype;           /* user.s3rig.type */
    union {
        struct { /* CONTENT_RANGE */
            uint64_t src_off;
            uint32_t src_id; /* index into the tree's source table */
        };
        char *text;
        char *target;
        struct dirinfo *dir;
        struct {
            gen_read_fn fn;
            void *ctx;
            uint64_t arg;
        } gen;
        struct {
            render_fn fn;
            void *ctx;
        } vol;
    } u;
};

/* Strings that live as long as the tree: names and type strings, bump-allocated (no
 * per-string malloc overhead); type strings are interned, so 100 000 "t2fs.raw" cost
 * one copy. */
struct strarena {
    char *block;
    size_t used, cap;
    char **blocks;
    size_t nblocks;
    const char **intern; /* open addressing, power of two */
    size_t nintern, capintern;
};

struct tree {
    struct source *src; /* source 0: the mounted file */
    struct source **srcs; /* sources of nested views, by id (srcs[0] = src) */
    /* per source: directories with a populate callback, and how many are populated, so
     * each view's /info says how much of its own tree has been parsed */
    struct tree_progress {
        uint64_t dirs, done;
    } *progress;
    uint32_t nsrcs, capsrcs;
    struct strarena strings;
    struct node **chunk; /* two-level arena: node pointers stay valid as it grows */
    /* Nodes made so far: written only under the lock, read by tree_node without it (see
     * "The node count" above). */
    _Atomic uint64_t nnodes;
    struct tree_limits limits;
    pthread_mutex_t lock; /* serialises populate (lazy growth) */
    struct cleanup {
        void (*fn)(void *);
        void *ptr;
    } *cleanups;
    size_t ncleanups, capcleanups;
    bool full;         /* max_nodes reached: populate stopped early */
    uint64_t refused;  /* nodes not made because of max_nodes (reported once, in /info) */
};

static struct node *tree_node(struct tree *t, uint32_t ino);

#define CHUNK_BITS 16
#define CHUNK_SIZE (1u << CHUNK_BITS)
#define NCHUNKS (1u << 16)

struct tree *tree_new(struct source *src, const struct tree_limits *limits)
{
    struct tree *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->chunk = calloc(NCHUNKS, sizeof *t->chunk);
    if (!t->chunk) {
        free(t);
        return NULL;
    }
    t->src = src;
    uint32_t id0;
    if (tree_add_source(t, src, &id0)) {
        free(t->chunk);
        free(t);
        return NULL;
    }
    t->limits.max_nodes = limits && limits->max_nodes ? limits->max_nodes : 50000000;
    /* Recursive: a populate callback may look up other directories (links). */
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&t->lock, &attr);
    pthread_mutexattr_destroy(&attr);
    return t;
}

int tree_add_source(struct tree *t, struct source *s, uint32_t *id)
{
    if (t->nsrcs == t->capsrcs) {
        uint32_t cap = t->capsrcs ? t->capsrcs * 2 : 4;
        struct source **n = realloc(t->srcs, cap * sizeof *n);
        if (!n)
            return -ENOMEM;
        t->srcs = n;
        struct tree_progress *p = realloc(t->progress, cap * sizeof *p);
        if (!p)
            return -ENOMEM;
        t->progress = p;
        t->capsrcs = cap;
    }
    t->srcs[t->nsrcs] = s;
    t->progress[t->nsrcs] = (struct tree_progress){0, 0};
    *id = t->nsrcs++;
    return 0;
}

struct source *tree_source(struct tree *t, uint32_t id)
{
    return id < t->nsrcs ? t->srcs[id] : NULL;
}

struct source *tree_node_source(struct tree *t, uint32_t ino)
{
    struct node *n = tree_node(t, ino);
    if (!n)
        return NULL;
    if (n->type == NODE_DIR)
        return tree_source(t, n->u.dir->src_id);
    return n->content == CONTENT_RANGE ? tree_source(t, n->u.src_id) : NULL;
}

/* The source id children of `parent` inherit (0 at the root). */
static uint32_t inherited_src(struct tree *t, uint32_t parent)
{
    struct node *p = parent ? tree_node(t, parent) : NULL;
    return p && p->type == NODE_DIR ? p->u.dir->src_id : 0;
}

static struct node *tree_node(struct tree *t, uint32_t ino)
{
    /* acquire: pairs with node_alloc's release, so the chunk holding ino is visible */
    if (ino == 0 || ino > atomic_load_explicit(&t->nnodes, memory_order_acquire))
        return NULL;
    uint64_t i = ino - 1;
    return &t->chunk[i >> CHUNK_BITS][i & (CHUNK_SIZE - 1)];
}

/* ---- string arena ---- */

static char *arena_alloc(struct strarena *a, size_t n)
{
    if (a->used + n > a->cap) {
        size_t cap = n > 65536 ? n : 65536;
        char *b = malloc(cap);
        char **list = realloc(a->blocks, (a->nblocks + 1) * sizeof *list);
        if (!b || !list) {
            free(b);
            if (list)
                a->blocks = list;
            return NULL;
        }
        a->blocks = list;
        a->blocks[a->nblocks++] = b;
        a->block = b;
        a->used = 0;
        a->cap = cap;
    }
    char *p = a->block + a->used;
    a->used += n;
    return p;
}

static char *arena_strdup(struct strarena *a, const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = arena_alloc(a, n);
    if (p)
        memcpy(p, s, n);
    return p;
}

static size_t str_hash(const char *s)
{
    size_t h = 5381;
    while (*s)
        h = h * 33 ^ (unsigned char)*s++;
    return h;
}

static const char *arena_intern(struct strarena *a, const char *s)
{
    if (a->nintern * 2 >= a->capintern) {
        size_t cap = a->capintern ? a->capintern * 2 : 256;
        const char **t = calloc(cap, sizeof *t);
        if (!t)
            return NULL;
        for (size_t i = 0; i < a->capintern; i++)
            if (a->intern[i]) {
                size_t k = str_hash(a->intern[i]) & (cap - 1);
                while (t[k])
                    k = (k + 1) & (cap - 1);
                t[k] = a->intern[i];
            }
        free(a->intern);
        a->intern = t;
        a->capintern = cap;
    }
    size_t k = str_hash(s) & (a->capintern - 1);
    while (a->intern[k]) {
        if (strcmp(a->intern[k], s) == 0)
            return a->intern[k];
        k = (k + 1) & (a->capintern - 1);
    }
    char *copy = arena_strdup(a, s);
    if (copy) {
        a->intern[k] = copy;
        a->nintern++;
    }
    return copy;
}

static void arena_free(struct strarena *a)
{
    for (size_t i = 0; i < a->nblocks; i++)
        free(a->blocks[i]);
    free(a->blocks);
    free(a->intern);
    memset(a, 0, sizeof *a);
}

static void node_free(struct node *n)
{
    if (n->type == NODE_DIR && n->u.dir) {
        free(n->u.dir->child);
        free(n->u.dir->sorted);
        free(n->u.dir);
    } else if (n->type == NODE_LINK) {
        free(n->u.target);
    } else if (n->content == CONTENT_TEXT) {
        free(n->u.text);
    }
}

void tree_free(struct tree *t)
{
    if (!t)
        return;
    for (uint64_t i = 1; i <= t->nnodes; i++)
        node_free(tree_node(t, (uint32_t)i));
    for (uint32_t c = 0; c < NCHUNKS && t->chunk[c]; c++)
        free(t->chunk[c]);
    free(t->chunk);
    for (size_t i = t->ncleanups; i-- > 0;)
        t->cleanups[i].fn(t->cleanups[i].ptr);
    free(t->cleanups);
    free(t->srcs);
    free(t->progress);
    arena_free(&t->strings);
    pthread_mutex_destroy(&t->lock);
    free(t);
}

void tree_on_free(struct tree *t, void (*fn)(void *), void *ptr)
{
    if (t->ncleanups == t->capcleanups) {
        size_t cap = t->capcleanups ? t->capcleanups * 2 : 8;
        struct cleanup *c = realloc(t->cleanups, cap * sizeof *c);
        if (!c) {
            fn(ptr); /* cannot track it: free now rather than leak */
            return;
        }
        t->cleanups = c;
        t->capcleanups = cap;
    }
    t->cleanups[t->ncleanups++] = (struct cleanup){fn, ptr};
}

void *tree_alloc(struct tree *t, size_t size)
{
    void *p = calloc(1, size);
    if (p)
        tree_on_free(t, free, p);
    return p;
}

/* Allocates a node slot; NULL when the node limit is reached or memory is out. */
static struct node *node_alloc(struct tree *t, uint32_t *ino)
{
    /* relaxed: only this thread (holding the lock, or alone before serving) changes it */
    uint64_t i = atomic_load_explicit(&t->nnodes, memory_order_relaxed);
    if (i >= t->limits.max_nodes || i >= (uint64_t)NCHUNKS * CHUNK_SIZE - 1) {
        t->full = true;
        t->refused++;
        return NULL;
    }
    if (!t->chunk[i >> CHUNK_BITS]) {
        t->chunk[i >> CHUNK_BITS] = calloc(CHUNK_SIZE, sizeof(struct node));
        if (!t->chunk[i >> CHUNK_BITS])
            return NULL;
    }
    /* release: a reader that sees the new count sees the chunk (tree.h, "The node count") */
    atomic_store_explicit(&t->nnodes, i + 1, memory_order_release);
    *ino = (uint32_t)(i + 1);
    return tree_node(t, *ino);
}

static int dir_append(struct dirinfo *d, uint32_t ino)
{
    if (d->n == d->cap) {
        uint32_t cap = d->cap ? d->cap * 2 : 8;
        uint32_t *c = realloc(d->child, cap * sizeof *c);
        if (!c)
            return -ENOMEM;
        d->child = c;
        d->cap = cap;
    }
    d->child[d->n++] = ino;
    free(d->sorted); /* rebuilt on the next lookup */
    d->sorted = NULL;
    return 0;
}

/* Generated names must never be empty, "." or "..", nor contain '/'. */
static bool name_ok(const char *name)
{
    return name[0] && strcmp(name, ".") != 0 && strcmp(name, "..") != 0 && !strchr(name, '/');
}

static struct node *add_node(struct tree *t, uint32_t parent, const char *name, uint8_t type, uint32_t *ino)
{
    struct node *p = parent ? tree_node(t, parent) : NULL;
    if (parent && (!p || p->type != NODE_DIR))
        return NULL;
    if (parent && !name_ok(name))
        return NULL;
    char *copy = arena_strdup(&t->strings, name);
    if (!copy)
        return NULL;
    struct node *n = node_alloc(t, ino);
    if (!n)
        return NULL;
    n->name = copy;
    n->parent = parent ? parent : *ino;
    n->type = type;
    if (p && dir_append(p->u.dir, *ino)) {
        n->type = NODE_FILE; /* keep the slot consistent; it is simply unreachable */
        return NULL;
    }
    return n;
}

uint32_t tree_add_dir(struct tree *t, uint32_t parent, const char *name, const char *xtype, populate_fn fn,
                      void *ctx, uint64_t arg)
{
    struct dirinfo *d = calloc(1, sizeof *d);
    if (!d)
        return 0;
    d->populate = fn;
    d->ctx = ctx;
    d->arg = arg;
    d->populated = fn == NULL;
    d->src_id = inherited_src(t, parent);
    uint32_t ino;
    struct node *n = add_node(t, parent, name, NODE_DIR, &ino);
    if (!n) {
        free(d);
        return 0;
    }
    n->u.dir = d;
    n->xtype = xtype;
    t->progress[d->src_id].dirs += fn != NULL;
    return ino;
}

uint32_t tree_add_range(struct tree *t, uint32_t parent, const char *name, const char *xtype, uint64_t off,
                        uint64_t len)
{
    uint32_t ino;
    struct node *n = add_node(t, parent, name, NODE_FILE, &ino);
    if (!n)
        return 0;
    n->content = CONTENT_RANGE;
    n->u.src_off = off;
    n->u.src_id = inherited_src(t, parent);
    n->size = len;
    n->xtype = xtype;
    n->flags |= NODE_HAS_SPAN;
    n->span_off = off;
    n->span_len = len;
    return ino;
}

uint32_t tree_add_text(struct tree *t, uint32_t parent, const char *name, const char *xtype, char *text,
                       size_t len)
{
    uint32_t ino;
    struct node *n = text ? add_node(t, parent, name, NODE_FILE, &ino) : NULL;
    if (!n) {
        free(text);
        return 0;
    }
    n->content = CONTENT_TEXT;
    n->u.text = text;
    n->size = len;
    n->xtype = xtype;
    return ino;
}

uint32_t tree_add_textf(struct tree *t, uint32_t parent, const char *name, const char *xtype, const char *fmt,
                        ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    int len = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (len < 0)
        return 0;
    return tree_add_text(t, parent, name, xtype, s, (size_t)len);
}

uint32_t tree_add_gen(struct tree *t, uint32_t parent, const char *name, const char *xtype, uint64_t size,
                      gen_read_fn fn, void *ctx, uint64_t arg)
{
    uint32_t ino;
    struct node *n = add_node(t, parent, name, NODE_FILE, &ino);
    if (!n)
        return 0;
    n->content = CONTENT_GEN;
    n->u.gen.fn = fn;
    n->u.gen.ctx = ctx;
    n->u.gen.arg = arg;
    n->size = size;
    n->xtype = xtype;
    return ino;
}

uint32_t tree_add_link(struct tree *t, uint32_t parent, const char *name, const char *target)
{
    char *copy = strdup(target);
    uint32_t ino;
    struct node *n = copy ? add_node(t, parent, name, NODE_LINK, &ino) : NULL;
    if (!n) {
        free(copy);
        return 0;
    }
    n->u.target = copy;
    n->size = strlen(copy);
    n->xtype = "symlink";
    return ino;
}

uint32_t tree_add_volatile(struct tree *t, uint32_t parent, const char *name, const char *xtype, render_fn fn,
                           void *ctx)
{
    uint32_t ino;
    struct node *n = add_node(t, parent, name, NODE_FILE, &ino);
    if (!n)
        return 0;
    n->content = CONTENT_VOLATILE;
    n->u.vol.fn = fn;
    n->u.vol.ctx = ctx;
    n->xtype = xtype;
    return ino;
}

char *tree_render(struct tree *t, uint32_t ino, size_t *len)
{
    struct node *n = tree_node(t, ino);
    *len = 0;
    if (!n || n->content != CONTENT_VOLATILE)
        return NULL;
    struct sbuf b = {0};
    pthread_mutex_lock(&t->lock); /* the text reads state that populate callbacks extend */
    n->u.vol.fn(t, n->u.vol.ctx, &b);
    pthread_mutex_unlock(&t->lock);
    return sb_take(&b, len);
}

uint64_t tree_size(struct tree *t, uint32_t ino)
{
    struct node *n = tree_node(t, ino);
    if (!n)
        return 0;
    if (n->content != CONTENT_VOLATILE)
        return n->size;
    size_t len;
    free(tree_render(t, ino, &len));
    return len;
}

void tree_set_span(struct tree *t, uint32_t ino, uint64_t off, uint64_t len)
{
    struct node *n = tree_node(t, ino);
    if (!n)
        return;
    n->flags |= NODE_HAS_SPAN;
    n->span_off = off;
    n->span_len = len;
}

void tree_set_type(struct tree *t, uint32_t ino, const char *xtype)
{
    struct node *n = tree_node(t, ino);
    if (n)
        n->xtype = arena_intern(&t->strings, xtype);
}

int tree_populate(struct tree *t, uint32_t dir)
{
    struct node *n = tree_node(t, dir);
    if (!n)
        return -ENOENT;
    if (n->type != NODE_DIR)
        return -ENOTDIR;
    int rc = 0;
    pthread_mutex_lock(&t->lock);
    struct dirinfo *d = n->u.dir;
    if (!d->populated) {
        d->populated = true; /* set first: a populate callback never recurses into itself */
        uint32_t sid = d->src_id; /* before the callback: a nested view's graft changes it */
        rc = d->populate(t, dir, d->ctx, d->arg);
        if (rc)
            d->populated = false; /* e.g. the file changed: fail again next time, not empty */
        else
            t->progress[sid].done++;
    }
    pthread_mutex_unlock(&t->lock);
    return rc;
}

int tree_populate_all(struct tree *t)
{
    int first = 0;
    for (uint64_t ino = 1; ino <= t->nnodes; ino++) { /* nnodes grows as directories fill */
        struct node *n = tree_node(t, (uint32_t)ino);
        if (n->type != NODE_DIR || n->u.dir->populated)
            continue;
        int rc = tree_populate(t, (uint32_t)ino);
        if (rc && !first)
            first = rc;
    }
    return first;
}

void tree_progress(struct tree *t, uint32_t src_id, uint64_t *done, uint64_t *total)
{
    struct tree_progress p = src_id < t->nsrcs ? t->progress[src_id] : (struct tree_progress){0, 0};
    *done = p.done;
    *total = p.dirs;
}

size_t tree_warnings(struct tree *t, struct sbuf *out)
{
    if (!t->refused)
        return 0;
    sb_printf(out,
              "warning: node limit reached (max_nodes=%" PRIu64 "): %" PRIu64
              " nodes refused, so some directories are incomplete\n",
              t->limits.max_nodes, t->refused);
    return 1;
}

int tree_graft(struct tree *t, uint32_t dir, uint32_t src_id, const char *xtype, populate_fn fn, void *ctx,
               uint64_t arg)
{
    struct node *n = tree_node(t, dir);
    if (!n)
        return -ENOENT;
    if (n->type != NODE_DIR)
        return -ENOTDIR;
    if (!tree_source(t, src_id))
        return -EINVAL;
    pthread_mutex_lock(&t->lock);
    struct dirinfo *d = n->u.dir;
    d->populate = fn;
    d->ctx = ctx;
    d->arg = arg;
    d->src_id = src_id;
    d->populated = fn == NULL;
    t->progress[src_id].dirs += fn != NULL; /* now a directory of the nested view */
    if (xtype)
        n->xtype = xtype;
    pthread_mutex_unlock(&t->lock);
    return 0;
}

static int by_name(const void *a, const void *b, void *tp)
{
    struct tree *t = tp;
    return strcmp(tree_node(t, *(const uint32_t *)a)->name, tree_node(t, *(const uint32_t *)b)->name);
}

static int build_sorted(struct tree *t, struct dirinfo *d)
{
    uint32_t *s = malloc((d->n ? d->n : 1) * sizeof *s);
    if (!s)
        return -ENOMEM;
    if (d->n) /* an empty directory has no child array yet */
        memcpy(s, d->child, d->n * sizeof *s);
    qsort_r(s, d->n, sizeof *s, by_name, t);
    d->sorted = s;
    return 0;
}

int tree_lookup(struct tree *t, uint32_t dir, const char *name, uint32_t *out)
{
    int rc = tree_populate(t, dir);
    if (rc)
        return rc;
    struct dirinfo *d = tree_node(t, dir)->u.dir;
    pthread_mutex_lock(&t->lock);
    if (!d->sorted && build_sorted(t, d)) {
        pthread_mutex_unlock(&t->lock);
        return -ENOMEM;
    }
    size_t lo = 0, hi = d->n;
    rc = -ENOENT;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(name, tree_node(t, d->sorted[mid])->name);
        if (c == 0) {
            *out = d->sorted[mid];
            rc = 0;
            break;
        }
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    pthread_mutex_unlock(&t->lock);
    return rc;
}

int tree_resolve(struct tree *t, const char *path, uint32_t *out)
{
    uint32_t cur = TREE_ROOT;
    char *copy = strdup(path), *save = NULL;
    if (!copy)
        return -ENOMEM;
    int rc = 0;
    for (char *part = strtok_r(copy, "/", &save); part; part = strtok_r(NULL, "/", &save)) {
        if (strcmp(part, ".") == 0)
            continue;
        if (strcmp(part, "..") == 0) {
            cur = tree_node(t, cur)->parent;
            continue;
        }
        rc = tree_lookup(t, cur, part, &cur);
        if (rc)
            break;
    }
    free(copy);
    if (rc == 0)
        *out = cur;
    return rc;
}

ssize_t tree_read(struct tree *t, uint32_t ino, uint64_t off, void *buf, size_t len)
{
    struct node *n = tree_node(t, ino);
    if (!n)
        return -ENOENT;
    if (n->type == NODE_DIR)
        return -EISDIR;
    if (n->type != NODE_FILE)
        return -EINVAL;
    if (n->content == CONTENT_VOLATILE) {
        size_t tl;
        char *text = tree_render(t, ino, &tl);
        if (!text)
            return -ENOMEM;
        size_t k = off < tl ? (len < tl - off ? len : (size_t)(tl - off)) : 0;
        memcpy(buf, text + (off < tl ? off : 0), k);
        free(text);
        return (ssize_t)k;
    }
    if (off >= n->size)
        return 0;
    if (len > n->size - off)
        len = (size_t)(n->size - off);
    switch (n->content) {
    case CONTENT_RANGE: {
        struct source *s = tree_source(t, n->u.src_id);
        int rc = s ? source_pread_checked(s, n->u.src_off + off, buf, len) : -EIO;
        return rc ? -EIO : (ssize_t)len;
    }
    case CONTENT_TEXT:
        memcpy(buf, n->u.text + off, len);
        return (ssize_t)len;
    case CONTENT_GEN:
        return n->u.gen.fn(t, n->u.gen.ctx, n->u.gen.arg, off, buf, len);
    default:
        return 0;
    }
}

int tree_read_all(struct tree *t, uint32_t ino, uint8_t **buf, size_t *len)
{
    struct node *n = tree_node(t, ino);
    *buf = NULL;
    *len = 0;
    if (!n || n->type != NODE_FILE)
        return -EINVAL;
    uint64_t size = tree_size(t, ino);
    uint8_t *b = malloc(size ? size : 1);
    if (!b)
        return -ENOMEM;
    for (uint64_t off = 0; off < size;) {
        ssize_t k = tree_read(t, ino, off, b + off, (size_t)(size - off));
        if (k <= 0) {
            free(b);
            return k < 0 ? (int)k : -EIO;
        }
        off += (uint64_t)k;
    }
    *buf = b;
    *len = size;
    return 0;
}

static const char XA_OFFSET[] = "user.s3rig.offset";
static const char XA_LENGTH[] = "user.s3rig.length";
static const char XA_TYPE[] = "user.s3rig.type";

static ssize_t xattr_reply(const char *value, size_t vlen, char *buf, size_t size)
{
    if (size == 0)
        return (ssize_t)vlen;
    if (size < vlen)
        return -ERANGE;
    memcpy(buf, value, vlen);
    return (ssize_t)vlen;
}

ssize_t tree_getxattr(struct tree *t, uint32_t ino, const char *name, char *buf, size_t size)
{
    struct node *n = tree_node(t, ino);
    if (!n)
        return -ENOENT;
    char num[32];
    if (n->flags & NODE_HAS_SPAN) {
        if (strcmp(name, XA_OFFSET) == 0) {
            int l = snprintf(num, sizeof num, "%" PRIu64, n->span_off);
            return xattr_reply(num, (size_t)l, buf, size);
        }
        if (strcmp(name, XA_LENGTH) == 0) {
            int l = snprintf(num, sizeof num, "%" PRIu64, n->span_len);
            return xattr_reply(num, (size_t)l, buf, size);
        }
    }
    if (strcmp(name, XA_TYPE) == 0 && n->xtype)
        return xattr_reply(n->xtype, strlen(n->xtype), buf, size);
    return -ENODATA;
}

ssize_t tree_listxattr(struct tree *t, uint32_t ino, char *buf, size_t size)
{
    struct node *n = tree_node(t, ino);
    if (!n)
        return -ENOENT;
    char list[sizeof XA_OFFSET + sizeof XA_LENGTH + sizeof XA_TYPE];
    size_t len = 0;
    if (n->flags & NODE_HAS_SPAN) {
        memcpy(list + len, XA_OFFSET, sizeof XA_OFFSET);
        len += sizeof XA_OFFSET;
        memcpy(list + len, XA_LENGTH, sizeof XA_LENGTH);
        len += sizeof XA_LENGTH;
    }
    if (n->xtype) {
        memcpy(list + len, XA_TYPE, sizeof XA_TYPE);
        len += sizeof XA_TYPE;
    }
    return xattr_reply(list, len, buf, size);
}

/* Number of '/'-separated components of a path ("" has none). */
static size_t path_components(const char *p)
{
    size_t n = 0;
    for (const char *s = p; *s;) {
        size_t len = strcspn(s, "/");
        n += len > 0;
        s += len + (s[len] == '/');
    }
    return n;
}

char *tree_path_relative(const char *from_dir, const char *to)
{
    /* Skip the whole components both paths share; every component of from_dir left
     * over is one "../", then the rest of `to` follows. */
    const char *a = from_dir, *b = to;
    for (;;) {
        while (*a == '/')
            a++;
        while (*b == '/')
            b++;
        size_t la = strcspn(a, "/"), lb = strcspn(b, "/");
        if (la == 0 || la != lb || memcmp(a, b, la) != 0)
            break;
        a += la;
        b += lb;
    }
    size_t ups = path_components(a), rest = strlen(b);
    while (rest > 0 && b[rest - 1] == '/')
        rest--;
    char *s = malloc(3 * ups + rest + 2), *p = s;
    if (!s)
        return NULL;
    for (size_t i = 0; i < ups; i++)
        p += sprintf(p, "../");
    memcpy(p, b, rest);
    p[rest] = 0;
    if (rest == 0 && p > s)
        p[-1] = 0; /* "../../" -> "../.." */
    else if (rest == 0)
        strcpy(s, ".");
    return s;
}

/* The path of a node from the root ("" for the root), malloc'd. */
static char *path_of(struct tree *t, uint32_t ino)
{
    size_t len = 0;
    for (uint32_t i = ino; i != TREE_ROOT; i = tree_node(t, i)->parent)
        len += strlen(tree_node(t, i)->name) + 1;
    char *s = malloc(len + 1);
    if (!s)
        return NULL;
    s[len] = 0;
    for (uint32_t i = ino; i != TREE_ROOT; i = tree_node(t, i)->parent) {
        const char *name = tree_node(t, i)->name;
        size_t n = strlen(name);
        len -= n;
        memcpy(s + len, name, n);
        if (len > 0)
            s[--len] = '/';
    }
    return s;
}

char *tree_relpath(struct tree *t, uint32_t from_dir, uint32_t to)
{
    char *from = path_of(t, from_dir), *dest = path_of(t, to), *rel = NULL;
    if (from && dest)
        rel = tree_path_relative(from, dest);
    free(from);
    free(dest);
    return rel;
}

/* ---- accessors ---- */

int tree_kind(struct tree *t, uint32_t ino)
{
    struct node *n = tree_node(t, ino);
    return n ? n->type : -ENOENT;
}

const char *tree_name(struct tree *t, uint32_t ino)
{
    struct node *n = tree_node(t, ino);
    return n ? n->name : NULL;
}

uint32_t tree_parent(struct tree *t, uint32_t ino)
{
    struct node *n = tree_node(t, ino);
    return n ? n->parent : 0;
}

const char *tree_link_target(struct tree *t, uint32_t ino)
{
    struct node *n = tree_node(t, ino);
    return n && n->type == NODE_LINK ? n->u.target : NULL;
}

bool tree_is_volatile(struct tree *t, uint32_t ino)
{
    struct node *n = tree_node(t, ino);
    return n && n->content == CONTENT_VOLATILE;
}

uint32_t tree_child_count(struct tree *t, uint32_t dir)
{
    struct node *n = tree_node(t, dir);
    return n && n->type == NODE_DIR ? n->u.dir->n : 0;
}

uint32_t tree_child(struct tree *t, uint32_t dir, uint32_t i)
{
    struct node *n = tree_node(t, dir);
    return n && n->type == NODE_DIR && i < n->u.dir->n ? n->u.dir->child[i] : 0;
}

bool tree_is_populated(struct tree *t, uint32_t dir)
{
    struct node *n = tree_node(t, dir);
    return n && n->type == NODE_DIR && n->u.dir->populated;
}

uint32_t tree_nlink(struct tree *t, uint32_t ino)
{
    struct node *n = tree_node(t, ino);
    return n && n->type == NODE_DIR ? 2 : 1;
}

bool tree_range(struct tree *t, uint32_t ino, struct source **src, uint64_t *off)
{
    struct node *n = tree_node(t, ino);
    if (!n || n->type != NODE_FILE || n->content != CONTENT_RANGE)
        return false;
    *src = tree_source(t, n->u.src_id);
    *off = n->u.src_off;
    return *src != NULL;
}

uint64_t tree_node_count(struct tree *t)
{
    return atomic_load_explicit(&t->nnodes, memory_order_acquire);
}

bool tree_full(struct tree *t)
{
    return t->full;
}

void *tree_dir_ctx(struct tree *t, uint32_t dir, populate_fn fn)
{
    struct node *n = tree_node(t, dir);
    if (!n || n->type != NODE_DIR)
        return NULL;
    pthread_mutex_lock(&t->lock);
    void *ctx = n->u.dir->populate == fn ? n->u.dir->ctx : NULL;
    pthread_mutex_unlock(&t->lock);
    return ctx;
}

void tree_lock(struct tree *t)
{
    pthread_mutex_lock(&t->lock);
}

void tree_unlock(struct tree *t)
{
    pthread_mutex_unlock(&t->lock);
}
