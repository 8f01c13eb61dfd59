/* The tree (tree.h): Nodes by number and the arena they and their strings live in: making the tree, its
 * nodes and their payloads, and the accessors of a single node. */
#include "fs/core/tree_impl.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- the arena ---- */

static enum s3_err arena_keep(struct strarena *a, char *block)
{
    if (a->nblocks == a->capblocks) {
        size_t cap = a->capblocks ? a->capblocks * 2 : 64;
        char **list = meter_check(&a->meter, realloc(a->blocks, cap * sizeof *list));
        if (!list)
            return S3_ERR_NOMEM;
        a->blocks = list;
        a->capblocks = cap;
    }
    a->blocks[a->nblocks++] = block;
    return S3_OK;
}

/* n bytes aligned to align (a power of two). */
void *arena_alloc(struct strarena *a, size_t n, size_t align)
{
    if (meter_refuse(&a->meter))
        return NULL;
    if (n > ARENA_BLOCK / 4) { /* a block of its own: the current one keeps its room */
        char *b = meter_check(&a->meter, malloc(n));
        if (!b || arena_keep(a, b)) {
            free(b);
            return NULL;
        }
        return b;
    }
    size_t at = (a->used + align - 1) & ~(align - 1);
    if (!a->block || at + n > a->cap) {
        char *b = meter_check(&a->meter, malloc(ARENA_BLOCK));
        if (!b || arena_keep(a, b)) {
            free(b);
            return NULL;
        }
        a->block = b;
        a->cap = ARENA_BLOCK;
        at = 0;
    }
    a->used = at + n;
    return a->block + at;
}

static char *arena_memdup(struct strarena *a, const void *s, size_t n)
{
    char *p = arena_alloc(a, n, 1);
    if (p)
        memcpy(p, s, n);
    return p;
}

char *arena_strdup(struct strarena *a, const char *s)
{
    return arena_memdup(a, s, strlen(s) + 1);
}

/* A string's hash, seeded per tree: names and types come from files, and a crafted set
 * of strings with one unseeded hash would make every insertion probe them all. */
size_t str_hash(const struct strarena *a, const char *s)
{
    uint64_t h = a->seed ^ 0xcbf29ce484222325u;
    while (*s)
        h = (h ^ (unsigned char)*s++) * 0x100000001b3u;
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9u;
    h ^= h >> 32;
    return (size_t)h;
}

const char *arena_intern(struct strarena *a, const char *s)
{
    if (a->nintern * 2 >= a->capintern) {
        size_t cap = a->capintern ? a->capintern * 2 : 256;
        const char **t = meter_calloc(&a->meter, cap, sizeof *t);
        if (!t)
            return NULL;
        for (size_t i = 0; i < a->capintern; i++)
            if (a->intern[i]) {
                size_t k = str_hash(a, a->intern[i]) & (cap - 1);
                while (t[k])
                    k = (k + 1) & (cap - 1);
                t[k] = a->intern[i];
            }
        free(a->intern);
        a->intern = t;
        a->capintern = cap;
    }
    size_t k = str_hash(a, s) & (a->capintern - 1);
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

/* ---- type strings ---- */

const char *type_str(struct tree *t, uint32_t id)
{
    return id ? t->typechunk[id / TYPE_CHUNK][id % TYPE_CHUNK] : NULL;
}

static size_t ptr_hash(const void *p)
{
    uint64_t h = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15u;
    return (size_t)(h >> 24);
}

static void type_hash_put(struct type_slot *h, uint32_t cap, struct type_slot e)
{
    size_t k = ptr_hash(e.s) & (cap - 1);
    while (h[k].s)
        k = (k + 1) & (cap - 1);
    h[k] = e;
}

/* The index of type string s (by its address: a literal, or an interned copy), added
 * when new. 0 (no type) for NULL, or when memory or the table runs out. Under the lock. */
uint32_t type_id(struct tree *t, const char *s)
{
    if (!s)
        return 0;
    if (2 * (t->ntypes + 1) > t->captypehash) {
        uint32_t cap = t->captypehash ? t->captypehash * 2 : 64;
        struct type_slot *h = meter_calloc(&t->strings.meter, cap, sizeof *h);
        if (!h)
            return 0;
        for (uint32_t i = 0; i < t->captypehash; i++)
            if (t->typehash[i].s)
                type_hash_put(h, cap, t->typehash[i]);
        free(t->typehash);
        t->typehash = h;
        t->captypehash = cap;
    }
    for (size_t k = ptr_hash(s) & (t->captypehash - 1); t->typehash[k].s; k = (k + 1) & (t->captypehash - 1))
        if (t->typehash[k].s == s)
            return t->typehash[k].id;
    uint32_t id = t->ntypes + 1;
    if (id >= TYPE_CHUNK * TYPE_CHUNKS)
        return 0;
    if (!t->typechunk[id / TYPE_CHUNK] && !(t->typechunk[id / TYPE_CHUNK] = meter_calloc(&t->strings.meter, TYPE_CHUNK, sizeof(char *))))
        return 0;
    t->typechunk[id / TYPE_CHUNK][id % TYPE_CHUNK] = s;
    t->ntypes++;
    type_hash_put(t->typehash, t->captypehash, (struct type_slot){s, id});
    return id;
}

/* ---- the tree ---- */

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
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    t->strings.seed = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15u ^ (uint64_t)(uintptr_t)t;
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

void tree_free(struct tree *t)
{
    if (!t)
        return;
    for (uint64_t i = 1; i <= t->nnodes; i++) {
        struct node *n = slot_of(t, (uint32_t)i);
        struct dirinfo *d = n && n->name && n->type == NODE_DIR ? n->u.dir.info : NULL;
        if (d && atomic_load_explicit(&d->state, memory_order_relaxed) != DIR_PUBLISHED)
            build_free(d->c.build);
    }
    for (uint32_t c = 0; c < TYPE_CHUNKS && t->typechunk[c]; c++)
        free(t->typechunk[c]);
    free(t->typehash);
    for (uint64_t c = 0; c < NCHUNKS && c <= t->nnodes >> CHUNK_BITS; c++)
        free(t->chunk[c]); /* gaps: chunks of numbers a computed directory reserved */
    free(t->chunk);
    for (size_t i = t->ncleanups; i-- > 0;)
        t->cleanups[i].fn(t->cleanups[i].ptr);
    free(t->cleanups);
    for (uint32_t c = 0; c < SRC_CHUNKS && t->srcchunk[c]; c++)
        free(t->srcchunk[c]);
    free(t->pending);
    free(t->undo);
    arena_free(&t->strings);
    pthread_mutex_destroy(&t->lock);
    free(t);
}

enum s3_err tree_on_free(struct tree *t, void (*fn)(void *), void *ptr)
{
    pthread_mutex_lock(&t->lock);
    if (t->ncleanups == t->capcleanups) {
        size_t cap = t->capcleanups ? t->capcleanups * 2 : 8;
        struct tree_cleanup *c = meter_realloc(&t->strings.meter, t->cleanups, cap * sizeof *c);
        if (!c) {
            pthread_mutex_unlock(&t->lock);
            return S3_ERR_NOMEM; /* the caller keeps ptr (freeing it here left callers using it) */
        }
        t->cleanups = c;
        t->capcleanups = cap;
    }
    t->cleanups[t->ncleanups++] = (struct tree_cleanup){fn, ptr};
    pthread_mutex_unlock(&t->lock);
    return S3_OK;
}

enum s3_err tree_on_rollback(struct tree *t, void (*undo)(void *ctx, uint64_t amount), void *ctx, uint64_t amount)
{
    pthread_mutex_lock(&t->lock);
    enum s3_err rc = S3_OK;
    if (t->frame && t->nundo == t->capundo) {
        size_t cap = t->capundo ? t->capundo * 2 : 16;
        struct tree_undo *u = meter_realloc(&t->strings.meter, t->undo, cap * sizeof *u);
        if (u) {
            t->undo = u;
            t->capundo = cap;
        } else {
            rc = S3_ERR_NOMEM;
        }
    }
    if (t->frame && rc == S3_OK)
        t->undo[t->nundo++] = (struct tree_undo){undo, ctx, amount, t->frame};
    pthread_mutex_unlock(&t->lock);
    return rc;
}

void tree_note_oom(struct tree *t)
{
    pthread_mutex_lock(&t->lock);
    t->strings.meter.failures++;
    pthread_mutex_unlock(&t->lock);
    tree_touch(t);
}

void tree_note_failure(struct tree *t, enum s3_err e)
{
    if (e == S3_ERR_NOMEM) {
        tree_note_oom(t);
        return;
    }
    pthread_mutex_lock(&t->lock);
    if (t->noted == S3_OK)
        t->noted = e;
    pthread_mutex_unlock(&t->lock);
    tree_touch(t);
}

void *tree_calloc(struct tree *t, size_t n, size_t size)
{
    pthread_mutex_lock(&t->lock); /* the meter is counted under it (recursive) */
    void *p = meter_calloc(&t->strings.meter, n ? n : 1, size ? size : 1);
    pthread_mutex_unlock(&t->lock);
    if (!p)
        tree_touch(t); /* /info counts the failed listing */
    return p;
}

void *tree_alloc(struct tree *t, size_t size)
{
    if (size > ARENA_BLOCK / 16) {
        pthread_mutex_lock(&t->lock); /* the meter is counted under it */
        void *p = meter_calloc(&t->strings.meter, 1, size);
        if (p && tree_on_free(t, free, p)) {
            free(p);
            p = NULL;
        }
        t->alloc_bytes += p ? size : 0;
        pthread_mutex_unlock(&t->lock);
        return p;
    }
    pthread_mutex_lock(&t->lock);
    /* 8-aligned: what view contexts hold (pointers, 64-bit numbers) */
    void *p = arena_alloc(&t->strings, size ? size : 1, size >= 16 ? 16 : 8);
    t->alloc_bytes += p ? size : 0;
    pthread_mutex_unlock(&t->lock);
    if (p)
        memset(p, 0, size);
    return p;
}

char *tree_strdup(struct tree *t, const char *s)
{
    pthread_mutex_lock(&t->lock);
    char *p = arena_strdup(&t->strings, s);
    pthread_mutex_unlock(&t->lock);
    return p;
}

/* ---- making nodes ---- */

/* Allocates a node slot; NULL when the node limit is reached or memory is out. */
struct node *node_alloc(struct tree *t, uint32_t *ino)
{
    /* relaxed: only this thread (holding the lock, or alone before serving) changes it */
    uint64_t i = atomic_load_explicit(&t->nnodes, memory_order_relaxed);
    if (i >= t->limits.max_nodes || i >= (uint64_t)NCHUNKS * CHUNK_SIZE - 1) {
        t->full = true;
        t->refused++;
        return NULL;
    }
    if (!t->chunk[i >> CHUNK_BITS]) {
        t->chunk[i >> CHUNK_BITS] = meter_calloc(&t->strings.meter, CHUNK_SIZE, sizeof(struct node));
        if (!t->chunk[i >> CHUNK_BITS])
            return NULL;
    }
    /* release: a reader that sees the new count sees the chunk (tree.h, "The node count") */
    atomic_store_explicit(&t->nnodes, i + 1, memory_order_release);
    *ino = (uint32_t)(i + 1);
    return slot_of(t, *ino);
}


uint32_t tree_add_dir(struct tree *t, uint32_t parent, const char *name, const char *xtype, populate_fn fn,
                      void *ctx, uint64_t arg)
{
    pthread_mutex_lock(&t->lock);
    uint32_t ino = 0;
    /* everything that can fail first: once in its parent, the node must be whole */
    struct dirinfo *d = arena_alloc(&t->strings, sizeof *d, _Alignof(struct dirinfo));
    struct node *n = d && pending_reserve(t) == 0 ? add_node_locked(t, parent, name, NODE_DIR, &ino) : NULL;
    if (n) {
        memset(d, 0, sizeof *d);
        d->populate = fn;
        d->ctx = ctx;
        d->arg = arg;
        d->src_id = (uint16_t)inherited_src(t, parent);
        atomic_init(&d->state, fn ? DIR_UNPOPULATED : DIR_OPEN);
        n->u.dir.info = d;
        n->xtype = type_id(t, xtype);
        slot_src(t, d->src_id)->dirs += fn != NULL;
        if (!fn) /* filled by its creator, published when that populate ends */
            t->pending[t->npending++] = ino;
    }
    pthread_mutex_unlock(&t->lock);
    return n ? ino : 0;
}

uint32_t tree_add_range(struct tree *t, uint32_t parent, const char *name, const char *xtype, uint64_t off,
                        uint64_t len)
{
    if (len > NODE_SIZE_MAX || off > UINT64_MAX - len)
        return 0;
    pthread_mutex_lock(&t->lock);
    uint32_t ino = 0;
    struct node *n = add_node_locked(t, parent, name, NODE_FILE, &ino);
    if (n) {
        n->content = CONTENT_RANGE;
        n->u.range.off = off;
        n->u.range.src = tree_source(t, inherited_src(t, parent));
        n->size = len;
        n->xtype = type_id(t, xtype);
        n->flags |= NODE_HAS_SPAN;
    }
    pthread_mutex_unlock(&t->lock);
    return n ? ino : 0;
}

/* Texts up to this size are copied into the arena; bigger ones are adopted as blocks. */
#define TEXT_COPY_MAX 4096

/* A text file over bytes the arena already holds. */
static uint32_t add_text_locked(struct tree *t, uint32_t parent, const char *name, const char *xtype,
                                const char *kept, size_t len)
{
    uint32_t ino = 0;
    struct node *n = kept ? add_node_locked(t, parent, name, NODE_FILE, &ino) : NULL;
    if (!n)
        return 0;
    n->content = CONTENT_TEXT;
    n->u.text.p = kept;
    n->size = len;
    t->text_bytes += len;
    n->xtype = type_id(t, xtype);
    return ino;
}

uint32_t tree_add_text(struct tree *t, uint32_t parent, const char *name, const char *xtype, char *text,
                       size_t len)
{
    if (!text || len > NODE_SIZE_MAX) {
        free(text);
        if (!text) { /* the caller's allocation failed: its populate must fail too */
            pthread_mutex_lock(&t->lock);
            t->strings.meter.failures++;
            pthread_mutex_unlock(&t->lock);
        }
        return 0;
    }
    pthread_mutex_lock(&t->lock);
    const char *kept = NULL;
    if (len <= TEXT_COPY_MAX) {
        kept = arena_memdup(&t->strings, text, len ? len : 1);
        free(text);
    } else if (arena_keep(&t->strings, text) == 0) {
        kept = text;
    } else {
        free(text);
    }
    uint32_t ino = add_text_locked(t, parent, name, xtype, kept, len);
    pthread_mutex_unlock(&t->lock);
    return ino;
}

uint32_t tree_add_textf(struct tree *t, uint32_t parent, const char *name, const char *xtype, const char *fmt,
                        ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (len < 0)
        return 0;
    if ((size_t)len >= sizeof small) {
        char *s;
        va_start(ap, fmt);
        if (vasprintf(&s, fmt, ap) < 0)
            s = NULL;
        va_end(ap);
        return tree_add_text(t, parent, name, xtype, s, (size_t)len);
    }
    pthread_mutex_lock(&t->lock); /* a value file: straight into the arena */
    uint32_t ino = add_text_locked(t, parent, name, xtype, arena_memdup(&t->strings, small, len ? (size_t)len : 1),
                                   (size_t)len);
    pthread_mutex_unlock(&t->lock);
    return ino;
}

static uint32_t add_ext_file(struct tree *t, uint32_t parent, const char *name, const char *xtype, uint8_t content,
                             uint64_t size, const struct node_ext *ext)
{
    if (size > NODE_SIZE_MAX)
        return 0;
    pthread_mutex_lock(&t->lock);
    uint32_t ino = 0;
    struct node_ext *e = arena_alloc(&t->strings, sizeof *e, _Alignof(struct node_ext));
    struct node *n = e ? add_node_locked(t, parent, name, NODE_FILE, &ino) : NULL;
    if (n) {
        *e = *ext;
        n->content = content & 7;
        n->u.ext = e;
        n->size = size;
        n->xtype = type_id(t, xtype);
    }
    pthread_mutex_unlock(&t->lock);
    return n ? ino : 0;
}

uint32_t tree_add_gen(struct tree *t, uint32_t parent, const char *name, const char *xtype, uint64_t size,
                      gen_read_fn fn, void *ctx, uint64_t arg)
{
    struct node_ext e = {.fn.gen = fn, .ctx = ctx, .arg = arg};
    return add_ext_file(t, parent, name, xtype, CONTENT_GEN, size, &e);
}

uint32_t tree_add_volatile(struct tree *t, uint32_t parent, const char *name, const char *xtype, render_fn fn,
                           void *ctx)
{
    struct node_ext e = {.fn.vol = fn, .ctx = ctx, .arg = VOLATILE_LOCKED};
    return add_ext_file(t, parent, name, xtype, CONTENT_VOLATILE, 0, &e);
}

uint32_t tree_add_volatile_unlocked(struct tree *t, uint32_t parent, const char *name, const char *xtype,
                                    render_fn fn, void *ctx)
{
    struct node_ext e = {.fn.vol = fn, .ctx = ctx, .arg = VOLATILE_UNLOCKED};
    return add_ext_file(t, parent, name, xtype, CONTENT_VOLATILE, 0, &e);
}

uint32_t tree_add_link(struct tree *t, uint32_t parent, const char *name, const char *target)
{
    pthread_mutex_lock(&t->lock);
    uint32_t ino = 0;
    const char *copy = arena_strdup(&t->strings, target);
    struct node *n = copy ? add_node_locked(t, parent, name, NODE_LINK, &ino) : NULL;
    if (n) {
        n->u.text.p = copy;
        n->size = strlen(copy) & NODE_SIZE_MAX;
        n->xtype = type_id(t, "symlink");
    }
    pthread_mutex_unlock(&t->lock);
    return n ? ino : 0;
}

void tree_set_span(struct tree *t, uint32_t ino, uint64_t off, uint64_t len)
{
    pthread_mutex_lock(&t->lock);
    struct node *n = node_at(t, ino);
    struct tree_span s = {off, len};
    if (!n) {
        /* nothing */
    } else if (n->type == NODE_DIR) {
        if (off <= NODE_SIZE_MAX) { /* the offset in size (unused by directories) */
            n->size = off;
            n->u.dir.span_len = len;
            n->flags |= NODE_HAS_SPAN;
        }
    } else if (n->content == CONTENT_RANGE && !(n->flags & NODE_EXT)) {
        if (off != n->u.range.off || len != n->size) { /* a span of its own: an ext record */
            struct node_ext *e = arena_alloc(&t->strings, sizeof *e, _Alignof(struct node_ext));
            if (e) {
                *e = (struct node_ext){.src = n->u.range.src, .off = n->u.range.off, .span = s};
                n->u.ext = e;
                n->flags |= NODE_EXT;
            }
        }
    } else if (n->content == CONTENT_GEN || n->content == CONTENT_VOLATILE || (n->flags & NODE_EXT)) {
        n->u.ext->span = s;
        n->flags |= NODE_HAS_SPAN;
    } else { /* texts and links */
        struct tree_span *p = (struct tree_span *)n->u.text.span;
        if (!p)
            p = arena_alloc(&t->strings, sizeof *p, _Alignof(struct tree_span));
        if (p) {
            *p = s;
            n->u.text.span = p;
            n->flags |= NODE_HAS_SPAN;
        }
    }
    pthread_mutex_unlock(&t->lock);
}


void tree_set_type(struct tree *t, uint32_t ino, const char *xtype)
{
    pthread_mutex_lock(&t->lock);
    struct node *n = node_at(t, ino);
    if (n)
        n->xtype = type_id(t, arena_intern(&t->strings, xtype));
    pthread_mutex_unlock(&t->lock);
}

/* ---- accessors ---- */

enum node_type tree_kind(struct tree *t, uint32_t ino)
{
    struct node *n = node_at(t, ino);
    return n ? (enum node_type)n->type : NODE_NONE;
}

const char *tree_name(struct tree *t, uint32_t ino)
{
    struct node *n = node_at(t, ino);
    return n ? n->name : NULL;
}

uint32_t tree_parent(struct tree *t, uint32_t ino)
{
    struct node *n = node_at(t, ino);
    return n ? n->parent : 0;
}

const char *tree_link_target(struct tree *t, uint32_t ino)
{
    struct node *n = node_at(t, ino);
    return n && n->type == NODE_LINK ? n->u.text.p : NULL;
}

bool tree_is_volatile(struct tree *t, uint32_t ino)
{
    struct node *n = node_at(t, ino);
    return n && n->content == CONTENT_VOLATILE;
}


bool tree_range(struct tree *t, uint32_t ino, struct source **src, uint64_t *off)
{
    struct node *n = node_at(t, ino);
    if (!n || n->type != NODE_FILE || n->content != CONTENT_RANGE)
        return false;
    *src = n->flags & NODE_EXT ? n->u.ext->src : n->u.range.src;
    *off = n->flags & NODE_EXT ? n->u.ext->off : n->u.range.off;
    return *src != NULL;
}

void *tree_gen_ctx(struct tree *t, uint32_t ino, gen_read_fn fn)
{
    struct node *n = node_at(t, ino);
    if (!n || n->type != NODE_FILE || n->content != CONTENT_GEN)
        return NULL;
    return n->u.ext->fn.gen == fn ? n->u.ext->ctx : NULL;
}


void tree_lock(struct tree *t)
{
    pthread_mutex_lock(&t->lock);
}

void tree_unlock(struct tree *t)
{
    pthread_mutex_unlock(&t->lock);
}

void tree_test_fail_alloc(struct tree *t, uint64_t k)
{
    pthread_mutex_lock(&t->lock);
    t->strings.meter.fail_at = k ? t->strings.meter.attempts + k : 0;
    pthread_mutex_unlock(&t->lock);
}

void tree_test_alloc_counts(struct tree *t, uint64_t *attempts, uint64_t *failures)
{
    pthread_mutex_lock(&t->lock);
    *attempts = t->strings.meter.attempts;
    *failures = t->strings.meter.failures;
    pthread_mutex_unlock(&t->lock);
}
