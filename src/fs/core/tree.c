/* The tree's structs and every operation on them (tree.h says the contracts). Nothing
 * outside this file sees a struct below: scripts/check_includes.sh enforces it. */
#include "fs/core/tree.h"
#include "fs/core/sbuf.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- the structs ---- */

enum node_content { CONTENT_NONE, CONTENT_RANGE, CONTENT_TEXT, CONTENT_GEN, CONTENT_VOLATILE };

enum {
    NODE_HAS_SPAN = 1, /* user.s3rig.offset / .length exist */
    NODE_EXT = 2,      /* a byte range whose payload is an ext record (its span differs) */
    NODE_DEAD = 4,     /* made by a populate that failed, or half made: no such node */
    NODE_RENAMED = 8,  /* its name clashed in its directory and got a ~N suffix */
};

struct tree_span {
    uint64_t off, len;
};

/* What a file needs beyond the node's 16 bytes: generators, volatile files, and ranges
 * whose span is not their own bytes. In the arena. */
struct node_ext {
    union {
        gen_read_fn gen;
        render_fn vol;
    } fn;
    void *ctx;
    uint64_t arg;       /* generators */
    struct source *src; /* ranges */
    uint64_t off;       /* ranges */
    struct tree_span span;
};

/* Sizes and offsets a node holds in 48 bits (256 TiB): the tree refuses bigger. */
#define NODE_SIZE_MAX ((1ull << 48) - 1)

/* 40 bytes: what every node has, and a payload by kind. Names, texts, link targets,
 * directory infos and ext records are in the arena (never freed before the tree). */
struct node {
    const char *name;
    union {
        struct { /* CONTENT_RANGE without NODE_EXT: the span is these bytes */
            uint64_t off;
            struct source *src; /* held by the node: no table looked up to read */
        } range;
        struct { /* CONTENT_TEXT, and NODE_LINK (p is the target) */
            const char *p;
            const struct tree_span *span;
        } text;
        struct { /* NODE_DIR; the span's offset is in size */
            struct dirinfo *info;
            uint64_t span_len;
        } dir;
        struct node_ext *ext; /* CONTENT_GEN, CONTENT_VOLATILE, CONTENT_RANGE with NODE_EXT */
    } u;
    uint64_t size : 48; /* files and links; a directory's span offset */
    uint64_t type : 2;
    uint64_t content : 3;
    uint64_t flags : 4;
    uint32_t parent;
    uint32_t xtype; /* user.s3rig.type: an index in the tree's type table, 0 for none */
};

/* A directory's life: UNPOPULATED (a callback will make its children), BUSY (the callback
 * runs, under the lock), OPEN (children complete as far as callbacks go, the index not
 * built: a directory made with no callback, being filled by its creator), PUBLISHED
 * (children, index and counts final; read without the lock). Only PUBLISHED is stored
 * with release, after everything a lock-free reader reads. */
enum { DIR_UNPOPULATED, DIR_BUSY, DIR_OPEN, DIR_PUBLISHED };

/* Children being added (while the directory is not published): creation order, a hash
 * set of them by name (names unique, lookups while populating), and per clashing name
 * the next suffix to try (so N equal names cost N probes, not N²). */
struct dirbuild {
    uint32_t *child;
    uint32_t n, cap;
    uint32_t *slot; /* child inode numbers by name hash; 0 = empty; a power of two */
    uint32_t nslot;
    struct suffix_memo {
        char *name;
        uint32_t next;
    } *memo; /* by name hash, a power of two (or NULL) */
    uint32_t nmemo, capmemo;
};

/* 56 bytes per directory, in the arena. */
struct dirinfo {
    union {
        struct dirbuild *build; /* not published: children so far (NULL: none yet) */
        const uint32_t *child;  /* published: creation order (readdir) */
        uint32_t first;         /* published with DIRF_CONTIGUOUS: first, first + 1, ... */
    } c;
    const uint32_t *sorted; /* published: by name (lookup); NULL: creation order is sorted */
    uint32_t n, nsubdirs;   /* published */
    uint16_t src_id;        /* the view its nodes belong to; range nodes read its source */
    _Atomic uint8_t state;
    uint8_t dflags;
    /* under the lock */
    populate_fn populate;
    void *ctx;
    uint64_t arg;
};

enum { DIRF_CONTIGUOUS = 1 };

_Static_assert(sizeof(struct node) == 40, "a node is 40 bytes (memory per node, HACKING.md)");
_Static_assert(sizeof(struct dirinfo) == 56, "a directory record is 56 bytes");

/* Strings and immutable records that live as long as the tree: bump-allocated in 64 KiB
 * blocks (no per-string malloc); type strings are interned, so 100 000 "t2fs.raw" cost
 * one copy. Big records get a block of their own; adopted buffers (big texts handed
 * over by their maker) are freed with the blocks. */
struct strarena {
    char *block;
    size_t used, cap;
    char **blocks;
    size_t nblocks, capblocks;
    const char **intern; /* open addressing, power of two */
    size_t nintern, capintern;
    uint64_t seed; /* of str_hash */
};

/* One registered source (a view's bytes) and what /info says about that view's part of
 * the tree. Slots live in chunks that never move: tree_source reads them without the
 * lock while a nested open adds one. */
struct src_slot {
    struct source *src;
    uint64_t dirs, done;       /* directories with a callback, and how many populated */
    uint64_t renamed;          /* names given a ~N suffix (reported once, in /info) */
    const char *renamed_first; /* the path of the first */
};

#define SRC_CHUNK 256u
#define SRC_CHUNKS 256u /* 65536 sources: a directory's src_id is 16 bits */

/* Type strings by index (a node keeps 4 bytes, not a pointer): chunks that never move,
 * read without the lock like the sources; a pointer -> index hash while adding. */
#define TYPE_CHUNK 4096u
#define TYPE_CHUNKS 4096u

struct tree_cleanup {
    void (*fn)(void *);
    void *ptr;
};

struct tree {
    struct source *src; /* source 0: the mounted file */
    struct src_slot *srcchunk[SRC_CHUNKS];
    _Atomic uint32_t nsrcs;
    struct strarena strings;
    const char **typechunk[TYPE_CHUNKS];
    uint32_t ntypes; /* index 0 is "none" */
    struct type_slot {
        const char *s;
        uint32_t id;
    } *typehash; /* open addressing by pointer, a power of two */
    uint32_t captypehash;
    struct node **chunk; /* two-level arena: node addresses never change */
    /* Nodes made so far: written only under the lock, read without it (tree.h, "The node
     * count"). */
    _Atomic uint64_t nnodes;
    struct tree_limits limits;
    pthread_mutex_t lock; /* serialises growth (populate, adding nodes, the arena) */
    struct tree_cleanup *cleanups;
    size_t ncleanups, capcleanups;
    /* directories opened (no callback, or reopened) and not yet published, in order */
    uint32_t *pending;
    size_t npending, cappending;
    uint64_t probes;  /* names looked at while adding children (tree_name_probes) */
    bool full;        /* max_nodes reached: populate stopped early */
    uint64_t refused; /* nodes not made because of max_nodes (reported once, in /info) */
};

#define CHUNK_BITS 16
#define CHUNK_SIZE (1u << CHUNK_BITS)
#define NCHUNKS (1u << 16)
#define ARENA_BLOCK 65536u
#define NAME_INTERN_MAX 24 /* names up to this long are interned */

/* ---- nodes by number ---- */

/* The slot of ino, dead or alive; NULL when ino was never made. */
static struct node *slot_of(struct tree *t, uint32_t ino)
{
    /* acquire: pairs with node_alloc's release, so the chunk holding ino is visible */
    if (ino == 0 || ino > atomic_load_explicit(&t->nnodes, memory_order_acquire))
        return NULL;
    uint64_t i = ino - 1;
    return &t->chunk[i >> CHUNK_BITS][i & (CHUNK_SIZE - 1)];
}

/* The node ino names, NULL when there is none (never made, or removed by a rollback). */
static struct node *node_at(struct tree *t, uint32_t ino)
{
    struct node *n = slot_of(t, ino);
    return n && !(n->flags & NODE_DEAD) ? n : NULL;
}

static struct dirinfo *dir_at(struct tree *t, uint32_t ino)
{
    struct node *n = node_at(t, ino);
    return n && n->type == NODE_DIR ? n->u.dir.info : NULL;
}

static bool published(struct dirinfo *d)
{
    return atomic_load_explicit(&d->state, memory_order_acquire) == DIR_PUBLISHED;
}

/* ---- the arena ---- */

static int arena_keep(struct strarena *a, char *block)
{
    if (a->nblocks == a->capblocks) {
        size_t cap = a->capblocks ? a->capblocks * 2 : 64;
        char **list = realloc(a->blocks, cap * sizeof *list);
        if (!list)
            return -ENOMEM;
        a->blocks = list;
        a->capblocks = cap;
    }
    a->blocks[a->nblocks++] = block;
    return 0;
}

/* n bytes aligned to align (a power of two). */
static void *arena_alloc(struct strarena *a, size_t n, size_t align)
{
    if (n > ARENA_BLOCK / 4) { /* a block of its own: the current one keeps its room */
        char *b = malloc(n);
        if (!b || arena_keep(a, b)) {
            free(b);
            return NULL;
        }
        return b;
    }
    size_t at = (a->used + align - 1) & ~(align - 1);
    if (!a->block || at + n > a->cap) {
        char *b = malloc(ARENA_BLOCK);
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

static char *arena_strdup(struct strarena *a, const char *s)
{
    return arena_memdup(a, s, strlen(s) + 1);
}

/* A string's hash, seeded per tree: names and types come from files, and a crafted set
 * of strings with one unseeded hash would make every insertion probe them all. */
static size_t str_hash(const struct strarena *a, const char *s)
{
    uint64_t h = a->seed ^ 0xcbf29ce484222325u;
    while (*s)
        h = (h ^ (unsigned char)*s++) * 0x100000001b3u;
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9u;
    h ^= h >> 32;
    return (size_t)h;
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

static const char *type_str(struct tree *t, uint32_t id)
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
static uint32_t type_id(struct tree *t, const char *s)
{
    if (!s)
        return 0;
    if (2 * (t->ntypes + 1) > t->captypehash) {
        uint32_t cap = t->captypehash ? t->captypehash * 2 : 64;
        struct type_slot *h = calloc(cap, sizeof *h);
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
    if (!t->typechunk[id / TYPE_CHUNK] && !(t->typechunk[id / TYPE_CHUNK] = calloc(TYPE_CHUNK, sizeof(char *))))
        return 0;
    t->typechunk[id / TYPE_CHUNK][id % TYPE_CHUNK] = s;
    t->ntypes++;
    type_hash_put(t->typehash, t->captypehash, (struct type_slot){s, id});
    return id;
}

/* ---- names ---- */

/* A name's hash (str_hash). */
static uint32_t name_hash(const struct tree *t, const char *s)
{
    return (uint32_t)str_hash(&t->strings, s);
}

/* Generated names must never be empty, "." or "..", nor contain '/'. */
static bool name_ok(const char *name)
{
    return name[0] && strcmp(name, ".") != 0 && strcmp(name, "..") != 0 && !strchr(name, '/');
}

/* ---- directories being filled ---- */

static void build_free(struct dirbuild *b)
{
    if (!b)
        return;
    for (uint32_t i = 0; b->memo && i < b->capmemo; i++)
        free(b->memo[i].name);
    free(b->memo);
    free(b->slot);
    free(b->child);
    free(b);
}

/* The child of b named name, or 0. */
static uint32_t build_find(struct tree *t, const struct dirbuild *b, const char *name)
{
    if (!b || !b->nslot)
        return 0;
    for (uint32_t k = name_hash(t, name) & (b->nslot - 1);; k = (k + 1) & (b->nslot - 1)) {
        uint32_t c = b->slot[k];
        t->probes++;
        if (!c || strcmp(slot_of(t, c)->name, name) == 0)
            return c;
    }
}

static void build_hash_put(struct tree *t, struct dirbuild *b, uint32_t ino)
{
    uint32_t k = name_hash(t, slot_of(t, ino)->name) & (b->nslot - 1);
    while (b->slot[k])
        k = (k + 1) & (b->nslot - 1);
    b->slot[k] = ino;
}

/* Rebuilds the hash set from the children (after growth or a rollback). */
static int build_rehash(struct tree *t, struct dirbuild *b, uint32_t nslot)
{
    uint32_t *s = calloc(nslot, sizeof *s);
    if (!s)
        return -ENOMEM;
    free(b->slot);
    b->slot = s;
    b->nslot = nslot;
    for (uint32_t i = 0; i < b->n; i++)
        build_hash_put(t, b, b->child[i]);
    return 0;
}

/* Makes room for one more child (the array and a load under one half). */
static int build_reserve(struct tree *t, struct dirbuild *b)
{
    if (b->n == b->cap) {
        uint32_t cap = b->cap ? b->cap * 2 : 8;
        uint32_t *c = realloc(b->child, cap * sizeof *c);
        if (!c)
            return -ENOMEM;
        b->child = c;
        b->cap = cap;
    }
    if (2 * (b->n + 1) > b->nslot)
        return build_rehash(t, b, b->nslot ? b->nslot * 2 : 16);
    return 0;
}

static struct suffix_memo *memo_find(struct tree *t, struct dirbuild *b, const char *name, bool add)
{
    if (add && 2 * (b->nmemo + 1) > b->capmemo) {
        uint32_t cap = b->capmemo ? b->capmemo * 2 : 8;
        struct suffix_memo *m = calloc(cap, sizeof *m);
        if (!m)
            return NULL;
        for (uint32_t i = 0; i < b->capmemo; i++)
            if (b->memo[i].name) {
                uint32_t k = name_hash(t, b->memo[i].name) & (cap - 1);
                while (m[k].name)
                    k = (k + 1) & (cap - 1);
                m[k] = b->memo[i];
            }
        free(b->memo);
        b->memo = m;
        b->capmemo = cap;
    }
    if (!b->capmemo)
        return NULL;
    uint32_t k = name_hash(t, name) & (b->capmemo - 1);
    while (b->memo[k].name && strcmp(b->memo[k].name, name) != 0)
        k = (k + 1) & (b->capmemo - 1);
    if (b->memo[k].name || !add)
        return b->memo[k].name ? &b->memo[k] : NULL;
    if (!(b->memo[k].name = strdup(name)))
        return NULL;
    b->memo[k].next = 2;
    b->nmemo++;
    return &b->memo[k];
}

/* The name a new child called `name` gets in b: name itself when no child has it, else
 * STEM~K.EXT (EXT from the last '.', not a leading one) with the smallest K >= 2 not in
 * use, so names stay unique whatever views make. malloc'd when renamed (*renamed).
 * The last guard, not the only one: a view whose names become paths before the nodes
 * exist makes them unique itself (parse/nameset.h: Granny member names, which the object
 * walk turns into link targets, and t2fs /named), because a rename here happens when the
 * node is added, too late for a link already computed to the name it had. What this
 * renames is what meets from different sources in one directory (a member called
 * model.glb beside the export, added after the members), where no link was computed. */
static const char *unique_name(struct tree *t, struct dirbuild *b, const char *name, char **renamed)
{
    *renamed = NULL;
    if (!build_find(t, b, name))
        return name;
    struct suffix_memo *m = memo_find(t, b, name, true);
    if (!m)
        return NULL;
    const char *dot = strrchr(name, '.');
    size_t stem = dot && dot != name ? (size_t)(dot - name) : strlen(name);
    size_t cap = strlen(name) + 16;
    char *s = malloc(cap);
    if (!s)
        return NULL;
    for (;; m->next++) {
        snprintf(s, cap, "%.*s~%" PRIu32 "%s", (int)stem, name, m->next, name + stem);
        if (!build_find(t, b, s))
            break;
    }
    m->next++;
    *renamed = s;
    return s;
}

/* ---- publishing ---- */

/* Room for one more u32 in a growing array of n (its capacity doubles, from 64). */
static int reserve_u32(uint32_t **v, size_t n, size_t *cap)
{
    if (n == *cap) {
        size_t c = *cap ? *cap * 2 : 64;
        uint32_t *p = realloc(*v, c * sizeof *p);
        if (!p)
            return -ENOMEM;
        *v = p;
        *cap = c;
    }
    return 0;
}

static int push_u32(uint32_t **v, size_t *n, size_t *cap, uint32_t x)
{
    if (reserve_u32(v, *n, cap))
        return -ENOMEM;
    (*v)[(*n)++] = x;
    return 0;
}

/* Room for one more pending directory. */
static int pending_reserve(struct tree *t)
{
    return reserve_u32(&t->pending, t->npending, &t->cappending);
}

static int push_pending(struct tree *t, uint32_t dir)
{
    return push_u32(&t->pending, &t->npending, &t->cappending, dir);
}

/* Child i of a published directory. */
static uint32_t published_child(const struct dirinfo *d, uint32_t i)
{
    return d->dflags & DIRF_CONTIGUOUS ? d->c.first + i : d->c.child[i];
}

/* A published directory gets children again (a creator adding after a lookup, a graft):
 * a builder from its children. The published arrays stay where they are (the arena), so
 * a reader still holding them reads a consistent, older list. */
static int reopen(struct tree *t, uint32_t dir, struct dirinfo *d)
{
    struct dirbuild *b = calloc(1, sizeof *b);
    if (!b)
        return -ENOMEM;
    b->cap = d->n > 8 ? d->n : 8;
    b->child = malloc(b->cap * sizeof *b->child);
    uint32_t nslot = 16;
    while (nslot < 2 * (d->n + 1))
        nslot *= 2;
    if (b->child) {
        b->n = d->n;
        for (uint32_t i = 0; i < d->n; i++)
            b->child[i] = published_child(d, i);
    }
    if (!b->child || build_rehash(t, b, nslot) || push_pending(t, dir)) {
        build_free(b);
        return -ENOMEM;
    }
    d->c.build = b;
    atomic_store_explicit(&d->state, DIR_OPEN, memory_order_relaxed);
    return 0;
}

static int by_name(const void *a, const void *b, void *tp)
{
    struct tree *t = tp;
    return strcmp(slot_of(t, *(const uint32_t *)a)->name, slot_of(t, *(const uint32_t *)b)->name);
}

/* The path of a node from the root ("" for the root), malloc'd. */
static char *path_of(struct tree *t, uint32_t ino);

/* Builds the final child list, name index and counts of a directory and publishes it:
 * from here on it is read without the lock. */
static int publish(struct tree *t, struct dirinfo *d)
{
    struct dirbuild *b = d->c.build;
    uint32_t n = b ? b->n : 0;
    const uint32_t *c = b ? b->child : NULL;
    bool contiguous = true, in_order = true;
    uint32_t nsub = 0, renamed = 0, first_renamed = 0, c0 = n ? c[0] : 0;
    for (uint32_t i = 0; i < n; i++) {
        struct node *k = slot_of(t, c[i]);
        contiguous &= c[i] == c[0] + i;
        if (i > 0 && in_order)
            in_order = strcmp(slot_of(t, c[i - 1])->name, k->name) < 0;
        nsub += k->type == NODE_DIR;
        if (k->flags & NODE_RENAMED)
            first_renamed = renamed++ ? first_renamed : c[i];
    }
    uint32_t *child = NULL, *sorted = NULL;
    if (!contiguous) {
        if (!(child = arena_alloc(&t->strings, n * sizeof *child, sizeof *child)))
            return -ENOMEM;
        memcpy(child, c, n * sizeof *child);
    }
    if (!in_order) {
        sorted = arena_alloc(&t->strings, n * sizeof *sorted, sizeof *sorted);
        if (!sorted)
            return -ENOMEM;
        memcpy(sorted, c, n * sizeof *sorted);
        qsort_r(sorted, n, sizeof *sorted, by_name, t);
    }
    d->sorted = sorted;
    d->n = n;
    d->nsubdirs = nsub;
    if (renamed) {
        struct src_slot *s = &t->srcchunk[d->src_id / SRC_CHUNK][d->src_id % SRC_CHUNK];
        if (!s->renamed_first) {
            char *p = path_of(t, first_renamed);
            s->renamed_first = p ? arena_strdup(&t->strings, p) : NULL;
            free(p);
        }
        s->renamed += renamed;
    }
    build_free(b);
    if (contiguous) {
        d->c.first = n ? c0 : 0;
        d->dflags |= DIRF_CONTIGUOUS;
    } else {
        d->c.child = child;
        d->dflags &= (uint8_t)~DIRF_CONTIGUOUS;
    }
    /* release: a reader that sees PUBLISHED sees every field above and every child */
    atomic_store_explicit(&d->state, DIR_PUBLISHED, memory_order_release);
    return 0;
}

/* Publishes the directories opened since pending mark (the ones a populate made and
 * filled, or reopened), newest first, so that each is published before its parent. */
static void publish_pending(struct tree *t, size_t mark)
{
    while (t->npending > mark) {
        uint32_t dir = t->pending[--t->npending];
        struct dirinfo *d = dir_at(t, dir);
        if (d && atomic_load_explicit(&d->state, memory_order_relaxed) == DIR_OPEN)
            publish(t, d); /* out of memory: it stays OPEN, published when first read */
    }
}

static struct src_slot *slot_src(struct tree *t, uint32_t id)
{
    return &t->srcchunk[id / SRC_CHUNK][id % SRC_CHUNK];
}

/* Marks node ino and everything below it dead: no accessor finds them, the progress
 * counts forget their directories, builders are freed. Iterative (explicit stack). */
static void discard(struct tree *t, uint32_t ino)
{
    uint32_t *stack = NULL;
    size_t top = 0, cap = 0;
    if (push_u32(&stack, &top, &cap, ino))
        return;
    while (top > 0) {
        struct node *n = slot_of(t, stack[--top]);
        if (n->flags & NODE_DEAD)
            continue;
        n->flags |= NODE_DEAD;
        if (n->type != NODE_DIR)
            continue;
        struct dirinfo *c = n->u.dir.info;
        bool pub = atomic_load_explicit(&c->state, memory_order_relaxed) == DIR_PUBLISHED;
        if (c->populate) {
            slot_src(t, c->src_id)->dirs--;
            slot_src(t, c->src_id)->done -= pub;
        }
        struct dirbuild *b = pub ? NULL : c->c.build;
        uint32_t nc = pub ? c->n : b ? b->n : 0;
        for (uint32_t i = 0; i < nc; i++)
            if (push_u32(&stack, &top, &cap, pub ? published_child(c, i) : b->child[i]))
                break; /* out of memory: the rest stays unreachable, only not marked */
        if (!pub) {
            build_free(b);
            c->c.build = NULL;
        }
    }
    free(stack);
}

/* A populate failed: the children it added to dir (from index n0 on) and everything
 * below them are removed, the suffixes it chose are forgotten, so a retry starts from
 * where this one did and names its children the same way. */
static void rollback(struct tree *t, struct dirinfo *d, uint32_t n0, size_t mark)
{
    struct dirbuild *b = d->c.build; /* d is not published (its populate failed) */
    if (b && b->n > n0) {
        for (uint32_t i = n0; i < b->n; i++)
            discard(t, b->child[i]);
        b->n = n0;
        for (uint32_t i = 0; b->memo && i < b->capmemo; i++)
            free(b->memo[i].name);
        free(b->memo);
        b->memo = NULL;
        b->nmemo = b->capmemo = 0;
        if (build_rehash(t, b, b->nslot)) {
            /* out of memory: drop the set; the next child rebuilds it */
            free(b->slot);
            b->slot = NULL;
            b->nslot = 0;
        }
    }
    /* directories opened since: dead ones are gone; others (reopened elsewhere) stay */
    size_t keep = mark;
    for (size_t i = mark; i < t->npending; i++) {
        struct dirinfo *p = dir_at(t, t->pending[i]);
        if (p && atomic_load_explicit(&p->state, memory_order_relaxed) == DIR_OPEN)
            t->pending[keep++] = t->pending[i];
    }
    t->npending = keep;
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
        struct dirinfo *d = n->type == NODE_DIR ? n->u.dir.info : NULL;
        if (d && atomic_load_explicit(&d->state, memory_order_relaxed) != DIR_PUBLISHED)
            build_free(d->c.build);
    }
    for (uint32_t c = 0; c < TYPE_CHUNKS && t->typechunk[c]; c++)
        free(t->typechunk[c]);
    free(t->typehash);
    for (uint32_t c = 0; c < NCHUNKS && t->chunk[c]; c++)
        free(t->chunk[c]);
    free(t->chunk);
    for (size_t i = t->ncleanups; i-- > 0;)
        t->cleanups[i].fn(t->cleanups[i].ptr);
    free(t->cleanups);
    for (uint32_t c = 0; c < SRC_CHUNKS && t->srcchunk[c]; c++)
        free(t->srcchunk[c]);
    free(t->pending);
    arena_free(&t->strings);
    pthread_mutex_destroy(&t->lock);
    free(t);
}

void tree_on_free(struct tree *t, void (*fn)(void *), void *ptr)
{
    pthread_mutex_lock(&t->lock);
    if (t->ncleanups == t->capcleanups) {
        size_t cap = t->capcleanups ? t->capcleanups * 2 : 8;
        struct tree_cleanup *c = realloc(t->cleanups, cap * sizeof *c);
        if (!c) {
            pthread_mutex_unlock(&t->lock);
            fn(ptr); /* cannot track it: free now rather than leak */
            return;
        }
        t->cleanups = c;
        t->capcleanups = cap;
    }
    t->cleanups[t->ncleanups++] = (struct tree_cleanup){fn, ptr};
    pthread_mutex_unlock(&t->lock);
}

void *tree_alloc(struct tree *t, size_t size)
{
    if (size > ARENA_BLOCK / 16) {
        void *p = calloc(1, size);
        if (p)
            tree_on_free(t, free, p);
        return p;
    }
    pthread_mutex_lock(&t->lock);
    /* 8-aligned: what view contexts hold (pointers, 64-bit numbers) */
    void *p = arena_alloc(&t->strings, size ? size : 1, size >= 16 ? 16 : 8);
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

/* ---- sources ---- */

int tree_add_source(struct tree *t, struct source *s, uint32_t *id)
{
    uint32_t n = atomic_load_explicit(&t->nsrcs, memory_order_relaxed);
    if (n >= SRC_CHUNK * SRC_CHUNKS)
        return -ENOMEM;
    if (!t->srcchunk[n / SRC_CHUNK] && !(t->srcchunk[n / SRC_CHUNK] = calloc(SRC_CHUNK, sizeof(struct src_slot))))
        return -ENOMEM;
    *slot_src(t, n) = (struct src_slot){.src = s};
    *id = n;
    /* release: a reader that sees the new count sees the slot (chunks never move) */
    atomic_store_explicit(&t->nsrcs, n + 1, memory_order_release);
    return 0;
}

struct source *tree_source(struct tree *t, uint32_t id)
{
    return id < atomic_load_explicit(&t->nsrcs, memory_order_acquire) ? slot_src(t, id)->src : NULL;
}

struct source *tree_node_source(struct tree *t, uint32_t ino)
{
    struct node *n = node_at(t, ino);
    if (!n)
        return NULL;
    if (n->type == NODE_DIR)
        return tree_source(t, n->u.dir.info->src_id);
    if (n->content != CONTENT_RANGE)
        return NULL;
    return n->flags & NODE_EXT ? n->u.ext->src : n->u.range.src;
}

/* ---- making nodes ---- */

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
    return slot_of(t, *ino);
}

/* The builder of a directory that gets a child now: a published one is reopened. */
static struct dirbuild *builder_of(struct tree *t, uint32_t dir, struct dirinfo *d)
{
    uint8_t st = atomic_load_explicit(&d->state, memory_order_relaxed);
    if (st == DIR_PUBLISHED && reopen(t, dir, d))
        return NULL;
    if (!d->c.build)
        d->c.build = calloc(1, sizeof *d->c.build);
    return d->c.build;
}

/* A new node named name in parent (0: the root), its name made unique there; the
 * caller fills its payload. NULL when it cannot be made. Runs under the lock. */
static struct node *add_node_locked(struct tree *t, uint32_t parent, const char *name, uint8_t type,
                                    uint32_t *ino)
{
    struct dirinfo *p = parent ? dir_at(t, parent) : NULL;
    if (parent && (!p || !name_ok(name)))
        return NULL;
    struct dirbuild *b = p ? builder_of(t, parent, p) : NULL;
    if (p && (!b || build_reserve(t, b)))
        return NULL;
    char *renamed = NULL;
    const char *final = b ? unique_name(t, b, name, &renamed) : name;
    /* short names repeat across directories (0, 1, 2.bin, info.bin, bones): one copy */
    const char *copy = !final ? NULL
                       : strlen(final) <= NAME_INTERN_MAX ? arena_intern(&t->strings, final)
                                                          : arena_strdup(&t->strings, final);
    bool was_renamed = renamed != NULL;
    free(renamed);
    if (!copy)
        return NULL;
    struct node *n = node_alloc(t, ino);
    if (!n)
        return NULL;
    n->name = copy;
    n->parent = parent ? parent : *ino;
    n->type = type;
    n->flags = was_renamed ? NODE_RENAMED : 0;
    if (b) {
        b->child[b->n++] = *ino;
        build_hash_put(t, b, *ino);
    }
    return n;
}

/* The source id children of `parent` inherit (0 at the root). */
static uint32_t inherited_src(struct tree *t, uint32_t parent)
{
    struct dirinfo *p = parent ? dir_at(t, parent) : NULL;
    return p ? p->src_id : 0;
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
    n->xtype = type_id(t, xtype);
    return ino;
}

uint32_t tree_add_text(struct tree *t, uint32_t parent, const char *name, const char *xtype, char *text,
                       size_t len)
{
    if (!text || len > NODE_SIZE_MAX) {
        free(text);
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
    struct node_ext e = {.fn.vol = fn, .ctx = ctx};
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

/* A node's span, when it has one. */
static bool node_span(const struct node *n, struct tree_span *s)
{
    if (!(n->flags & NODE_HAS_SPAN))
        return false;
    if (n->type == NODE_DIR)
        *s = (struct tree_span){n->size, n->u.dir.span_len};
    else if (n->content == CONTENT_RANGE && !(n->flags & NODE_EXT))
        *s = (struct tree_span){n->u.range.off, n->size};
    else if (n->content == CONTENT_RANGE || n->content == CONTENT_GEN || n->content == CONTENT_VOLATILE)
        *s = n->u.ext->span;
    else
        *s = *n->u.text.span;
    return true;
}

void tree_set_type(struct tree *t, uint32_t ino, const char *xtype)
{
    pthread_mutex_lock(&t->lock);
    struct node *n = node_at(t, ino);
    if (n)
        n->xtype = type_id(t, arena_intern(&t->strings, xtype));
    pthread_mutex_unlock(&t->lock);
}

int tree_graft(struct tree *t, uint32_t dir, uint32_t src_id, const char *xtype, populate_fn fn, void *ctx,
               uint64_t arg)
{
    struct node *n = node_at(t, dir);
    if (!n)
        return -ENOENT;
    if (n->type != NODE_DIR)
        return -ENOTDIR;
    if (!tree_source(t, src_id))
        return -EINVAL;
    pthread_mutex_lock(&t->lock);
    struct dirinfo *d = n->u.dir.info;
    int rc = 0;
    uint8_t st = atomic_load_explicit(&d->state, memory_order_relaxed);
    if (st == DIR_PUBLISHED) /* children made so far stay; the new callback adds to them */
        rc = reopen(t, dir, d);
    if (rc == 0) {
        d->populate = fn;
        d->ctx = ctx;
        d->arg = arg;
        d->src_id = (uint16_t)src_id;
        if (fn)
            atomic_store_explicit(&d->state, DIR_UNPOPULATED, memory_order_relaxed);
        else if (st != DIR_PUBLISHED && st != DIR_OPEN && (rc = push_pending(t, dir)) == 0)
            atomic_store_explicit(&d->state, DIR_OPEN, memory_order_relaxed); /* reopen made it OPEN */
        slot_src(t, src_id)->dirs += fn != NULL; /* now a directory of the nested view */
        if (xtype)
            n->xtype = type_id(t, xtype);
    }
    pthread_mutex_unlock(&t->lock);
    return rc;
}

/* ---- populating ---- */

static struct source *populate_hold(struct tree *t, uint32_t src_id);
static void populate_release(struct source *held);

static int populate_locked(struct tree *t, uint32_t dir, struct dirinfo *d)
{
    uint8_t st = atomic_load_explicit(&d->state, memory_order_relaxed);
    if (st == DIR_PUBLISHED || st == DIR_BUSY) /* BUSY: its own callback looks at it */
        return 0;
    if (st == DIR_OPEN)
        return publish(t, d);
    size_t mark = t->npending;
    uint32_t n0 = d->c.build ? d->c.build->n : 0;
    uint32_t sid = d->src_id; /* before the callback: a nested view's graft changes it */
    atomic_store_explicit(&d->state, DIR_BUSY, memory_order_relaxed);
    struct source *held = populate_hold(t, sid);
    int rc = d->populate(t, dir, d->ctx, d->arg);
    populate_release(held);
    st = atomic_load_explicit(&d->state, memory_order_relaxed);
    if (rc) {
        rollback(t, d, n0, mark);
        if (st == DIR_BUSY || st == DIR_OPEN) /* e.g. the file changed: fail again next time */
            atomic_store_explicit(&d->state, DIR_UNPOPULATED, memory_order_relaxed);
        return rc;
    }
    slot_src(t, sid)->done++;
    publish_pending(t, mark);
    st = atomic_load_explicit(&d->state, memory_order_relaxed);
    if (st == DIR_BUSY || st == DIR_OPEN) {
        atomic_store_explicit(&d->state, DIR_OPEN, memory_order_relaxed); /* if out of memory: next read */
        return publish(t, d);
    }
    return 0; /* published by a nested populate, or grafted to be populated next */
}

int tree_populate(struct tree *t, uint32_t dir)
{
    struct node *n = node_at(t, dir);
    if (!n)
        return -ENOENT;
    if (n->type != NODE_DIR)
        return -ENOTDIR;
    if (published(n->u.dir.info)) /* the common case: no lock */
        return 0;
    pthread_mutex_lock(&t->lock);
    int rc = populate_locked(t, dir, n->u.dir.info);
    pthread_mutex_unlock(&t->lock);
    return rc;
}

int tree_populate_all(struct tree *t)
{
    int first = 0;
    for (uint64_t ino = 1; ino <= tree_node_count(t); ino++) { /* the count grows as directories fill */
        struct dirinfo *d = dir_at(t, (uint32_t)ino);
        if (!d || published(d))
            continue;
        int rc = tree_populate(t, (uint32_t)ino);
        if (rc && !first)
            first = rc;
    }
    return first;
}

void tree_progress(struct tree *t, uint32_t src_id, uint64_t *done, uint64_t *total)
{
    struct src_slot *s = tree_source(t, src_id) ? slot_src(t, src_id) : NULL;
    *done = s ? s->done : 0;
    *total = s ? s->dirs : 0;
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

size_t tree_view_warnings(struct tree *t, uint32_t src_id, struct sbuf *out)
{
    size_t n = tree_warnings(t, out);
    struct src_slot *s = tree_source(t, src_id) ? slot_src(t, src_id) : NULL;
    if (s && s->renamed) {
        sb_printf(out,
                  "warning: %" PRIu64 " %s a name already used in %s directory, so %s NAME~N "
                  "(the first: %s)\n",
                  s->renamed, s->renamed == 1 ? "node had" : "nodes had", s->renamed == 1 ? "its" : "their",
                  s->renamed == 1 ? "it is shown as" : "they are shown as",
                  s->renamed_first ? s->renamed_first : "?");
        n++;
    }
    return n;
}

/* ---- reading directories ---- */

/* Binary search of a published directory. */
static int lookup_published(struct tree *t, const struct dirinfo *d, const char *name, uint32_t *out)
{
    size_t lo = 0, hi = d->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        uint32_t c = d->sorted ? d->sorted[mid] : published_child(d, (uint32_t)mid);
        int cmp = strcmp(name, slot_of(t, c)->name);
        if (cmp == 0) {
            *out = c;
            return 0;
        }
        if (cmp < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return -ENOENT;
}

int tree_lookup(struct tree *t, uint32_t dir, const char *name, uint32_t *out)
{
    struct node *n = node_at(t, dir);
    if (!n)
        return -ENOENT;
    if (n->type != NODE_DIR)
        return -ENOTDIR;
    struct dirinfo *d = n->u.dir.info;
    if (published(d)) /* the common case: no lock */
        return lookup_published(t, d, name, out);
    int rc = tree_populate(t, dir);
    if (rc)
        return rc;
    if (published(d))
        return lookup_published(t, d, name, out);
    /* still being filled: its own callback (this thread holds the lock) looks at it */
    pthread_mutex_lock(&t->lock);
    if (published(d)) {
        rc = lookup_published(t, d, name, out);
    } else {
        uint32_t c = build_find(t, d->c.build, name);
        rc = c ? 0 : -ENOENT;
        if (c)
            *out = c;
    }
    pthread_mutex_unlock(&t->lock);
    return rc;
}

uint32_t tree_child_count(struct tree *t, uint32_t dir)
{
    struct dirinfo *d = dir_at(t, dir);
    if (!d)
        return 0;
    if (published(d))
        return d->n;
    pthread_mutex_lock(&t->lock);
    uint32_t n = published(d) ? d->n : d->c.build ? d->c.build->n : 0;
    pthread_mutex_unlock(&t->lock);
    return n;
}

uint32_t tree_child(struct tree *t, uint32_t dir, uint32_t i)
{
    struct dirinfo *d = dir_at(t, dir);
    if (!d)
        return 0;
    if (published(d))
        return i < d->n ? published_child(d, i) : 0;
    pthread_mutex_lock(&t->lock);
    uint32_t c = 0;
    if (published(d))
        c = i < d->n ? published_child(d, i) : 0;
    else if (d->c.build && i < d->c.build->n)
        c = d->c.build->child[i];
    pthread_mutex_unlock(&t->lock);
    return c;
}

int tree_resolve(struct tree *t, const char *path, uint32_t *out)
{
    uint32_t cur = TREE_ROOT;
    char *copy = strdup(path), *save = NULL;
    if (!copy)
        return -ENOMEM;
    int rc = node_at(t, cur) ? 0 : -ENOENT;
    for (char *part = strtok_r(copy, "/", &save); part && rc == 0; part = strtok_r(NULL, "/", &save)) {
        if (strcmp(part, ".") == 0)
            continue;
        if (strcmp(part, "..") == 0) {
            cur = node_at(t, cur)->parent;
            continue;
        }
        rc = tree_lookup(t, cur, part, &cur);
    }
    free(copy);
    if (rc == 0)
        *out = cur;
    return rc;
}

/* ---- reading files ---- */

char *tree_render(struct tree *t, uint32_t ino, size_t *len)
{
    struct node *n = node_at(t, ino);
    *len = 0;
    if (!n || n->content != CONTENT_VOLATILE)
        return NULL;
    struct sbuf b = {0};
    pthread_mutex_lock(&t->lock); /* the text reads state that populate callbacks extend */
    n->u.ext->fn.vol(t, n->u.ext->ctx, &b);
    pthread_mutex_unlock(&t->lock);
    return sb_take(&b, len);
}

uint64_t tree_size(struct tree *t, uint32_t ino)
{
    struct node *n = node_at(t, ino);
    if (!n || n->type == NODE_DIR)
        return 0;
    if (n->content != CONTENT_VOLATILE)
        return n->size;
    size_t len;
    free(tree_render(t, ino, &len));
    return len;
}

ssize_t tree_read(struct tree *t, uint32_t ino, uint64_t off, void *buf, size_t len)
{
    struct node *n = node_at(t, ino);
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
        struct source *s = n->flags & NODE_EXT ? n->u.ext->src : n->u.range.src;
        uint64_t at = n->flags & NODE_EXT ? n->u.ext->off : n->u.range.off;
        int rc = s ? source_pread_checked(s, at + off, buf, len) : -EIO;
        return rc ? -EIO : (ssize_t)len;
    }
    case CONTENT_TEXT:
        memcpy(buf, n->u.text.p + off, len);
        return (ssize_t)len;
    case CONTENT_GEN:
        return n->u.ext->fn.gen(t, n->u.ext->ctx, n->u.ext->arg, off, buf, len);
    default:
        return 0;
    }
}

int tree_read_all(struct tree *t, uint32_t ino, uint8_t **buf, size_t *len)
{
    struct node *n = node_at(t, ino);
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

/* ---- extended attributes ---- */

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
    struct node *n = node_at(t, ino);
    if (!n)
        return -ENOENT;
    char num[32];
    struct tree_span s;
    if (node_span(n, &s)) {
        if (strcmp(name, XA_OFFSET) == 0) {
            int l = snprintf(num, sizeof num, "%" PRIu64, s.off);
            return xattr_reply(num, (size_t)l, buf, size);
        }
        if (strcmp(name, XA_LENGTH) == 0) {
            int l = snprintf(num, sizeof num, "%" PRIu64, s.len);
            return xattr_reply(num, (size_t)l, buf, size);
        }
    }
    const char *xtype = type_str(t, n->xtype);
    if (strcmp(name, XA_TYPE) == 0 && xtype)
        return xattr_reply(xtype, strlen(xtype), buf, size);
    return -ENODATA;
}

ssize_t tree_listxattr(struct tree *t, uint32_t ino, char *buf, size_t size)
{
    struct node *n = node_at(t, ino);
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
    if (type_str(t, n->xtype)) {
        memcpy(list + len, XA_TYPE, sizeof XA_TYPE);
        len += sizeof XA_TYPE;
    }
    return xattr_reply(list, len, buf, size);
}

/* ---- paths ---- */

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

static char *path_of(struct tree *t, uint32_t ino)
{
    size_t len = 0;
    for (uint32_t i = ino; i != TREE_ROOT && slot_of(t, i)->parent != i; i = slot_of(t, i)->parent)
        len += strlen(slot_of(t, i)->name) + 1;
    char *s = malloc(len + 1);
    if (!s)
        return NULL;
    s[len] = 0;
    for (uint32_t i = ino; i != TREE_ROOT && slot_of(t, i)->parent != i; i = slot_of(t, i)->parent) {
        const char *name = slot_of(t, i)->name;
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
    if (!node_at(t, from_dir) || !node_at(t, to))
        return NULL;
    char *from = path_of(t, from_dir), *dest = path_of(t, to), *rel = NULL;
    if (from && dest)
        rel = tree_path_relative(from, dest);
    free(from);
    free(dest);
    return rel;
}

/* ---- open handles (tree.h) ---- */

#define MAX_GEN_ITEMS 16

static struct {
    gen_read_fn read;
    gen_item_fn item;
} gen_items[MAX_GEN_ITEMS];
static unsigned ngen_items;
static pthread_mutex_t gen_items_lock = PTHREAD_MUTEX_INITIALIZER;

int tree_gen_item(gen_read_fn read, gen_item_fn item)
{
    int rc = -1;
    pthread_mutex_lock(&gen_items_lock);
    for (unsigned i = 0; i < ngen_items && rc; i++)
        if (gen_items[i].read == read)
            rc = 0;
    if (rc && ngen_items < MAX_GEN_ITEMS) {
        gen_items[ngen_items].read = read;
        gen_items[ngen_items++].item = item;
        rc = 0;
    }
    pthread_mutex_unlock(&gen_items_lock);
    return rc;
}

static gen_item_fn gen_item_of(gen_read_fn read)
{
    gen_item_fn f = NULL;
    pthread_mutex_lock(&gen_items_lock);
    for (unsigned i = 0; i < ngen_items && !f; i++)
        if (gen_items[i].read == read)
            f = gen_items[i].item;
    pthread_mutex_unlock(&gen_items_lock);
    return f;
}

struct tree_hold {
    struct source *src;  /* a range of an expanded source (source_hold) */
    struct cache *cache; /* or a generated file's item */
    struct cached *item;
};

struct tree_hold *tree_hold(struct tree *t, uint32_t ino)
{
    struct node *n = node_at(t, ino);
    struct tree_hold h = {NULL, NULL, NULL};
    uint64_t off;
    if (!n || n->type != NODE_FILE)
        return NULL;
    if (n->content == CONTENT_RANGE) {
        if (!tree_range(t, ino, &h.src, &off) || !source_expands(h.src))
            return NULL;
    } else if (n->content == CONTENT_GEN) {
        gen_item_fn f = gen_item_of(n->u.ext->fn.gen);
        h.item = f ? f(n->u.ext->ctx, n->u.ext->arg, &h.cache) : NULL;
        if (!h.item)
            return NULL;
    } else {
        return NULL;
    }
    struct tree_hold *out = malloc(sizeof *out);
    if (!out)
        return NULL;
    *out = h;
    if (h.src)
        source_hold(h.src);
    else
        cache_hold(h.cache, h.item);
    return out;
}

void tree_release(struct tree_hold *h)
{
    if (!h)
        return;
    if (h->src)
        source_release(h->src);
    else
        cache_release(h->cache, h->item);
    free(h);
}

/* A listing reads its directory's source again and again (a view nested in an expanded
 * package resource parses it piece by piece): held for the populate callback, it is
 * expanded once per listing. */
static struct source *populate_hold(struct tree *t, uint32_t src_id)
{
    struct source *s = tree_source(t, src_id);
    if (s && source_expands(s))
        source_hold(s);
    else
        s = NULL;
    return s;
}

static void populate_release(struct source *held)
{
    if (held)
        source_release(held);
}

/* ---- accessors ---- */

int tree_kind(struct tree *t, uint32_t ino)
{
    struct node *n = node_at(t, ino);
    return n ? n->type : -ENOENT;
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

bool tree_is_populated(struct tree *t, uint32_t dir)
{
    struct dirinfo *d = dir_at(t, dir);
    return d && published(d);
}

uint32_t tree_nlink(struct tree *t, uint32_t ino)
{
    struct dirinfo *d = dir_at(t, ino);
    return d && published(d) ? 2 + d->nsubdirs : 1;
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

uint64_t tree_node_count(struct tree *t)
{
    return atomic_load_explicit(&t->nnodes, memory_order_acquire);
}

bool tree_full(struct tree *t)
{
    pthread_mutex_lock(&t->lock);
    bool full = t->full;
    pthread_mutex_unlock(&t->lock);
    return full;
}

void *tree_dir_ctx(struct tree *t, uint32_t dir, populate_fn fn)
{
    struct dirinfo *d = dir_at(t, dir);
    if (!d)
        return NULL;
    pthread_mutex_lock(&t->lock);
    void *ctx = d->populate == fn ? d->ctx : NULL;
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

uint64_t tree_name_probes(struct tree *t)
{
    pthread_mutex_lock(&t->lock);
    uint64_t n = t->probes;
    pthread_mutex_unlock(&t->lock);
    return n;
}
