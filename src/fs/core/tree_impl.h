/* The tree's private half: the struct bodies and the helpers the tree_*.c files share.
 * - Included only by src/fs/core/tree*.c; everyone else uses tree.h (scripts/
 *   check_includes.sh fails on a struct of the tree's defined anywhere else).
 * - Locking is tree.h's: helpers that change the tree run under t->lock.
 * - How it keeps tree.h's contracts (permanent numbers, unique names, publication,
 *   rollback, locking, the node count, sources): HACKING.md, "The tree inside". */
#ifndef S3_TREE_IMPL_H
#define S3_TREE_IMPL_H

#include "fs/core/cache.h"
#include "fs/core/tree.h"
#include "parse/base/diag.h"

#include <stdlib.h>
#include <string.h>

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
    uint64_t arg;       /* generators; volatile files: VOLATILE_LOCKED or _UNLOCKED */
    struct source *src; /* ranges */
    uint64_t off;       /* ranges */
    struct tree_span span;
};

/* How a volatile file's render function runs (node_ext.arg): under the tree lock, or
 * taking it itself (tree_add_volatile_unlocked). */
enum { VOLATILE_LOCKED, VOLATILE_UNLOCKED };

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
    union {
        const uint32_t *sorted; /* published: by name (lookup); NULL: creation order is sorted */
        struct computed *comp;  /* DIRF_COMPUTED: its callbacks and which entries are made */
    };
    uint32_t n, nsubdirs;   /* published */
    uint16_t src_id;        /* the view its nodes belong to; range nodes read its source */
    _Atomic uint8_t state;
    uint8_t dflags;
    /* under the lock */
    populate_fn populate;
    void *ctx;
    uint64_t arg;
};

/* DIRF_COMPUTED: a computed directory (tree_set_computed): its entries are c.first + i
 * for i < n, each made on first use (tree_computed.c); also DIRF_CONTIGUOUS. */
enum { DIRF_CONTIGUOUS = 1, DIRF_COMPUTED = 2 };

/* A computed directory's own record (in the arena): the view's callbacks and one bit per
 * entry, set with release once the entry's node is whole (readers load it with acquire:
 * the node's fields are visible from then on, without the lock). */
struct computed {
    const struct tree_computed_ops *ops;
    void *ctx;
    _Atomic uint8_t *made;
};

static inline bool is_computed(const struct dirinfo *d)
{
    return d->dflags & DIRF_COMPUTED;
}

_Static_assert(sizeof(struct node) == 40, "a node is 40 bytes (memory per node, HACKING.md)");
_Static_assert(sizeof(struct dirinfo) == 56, "a directory record is 56 bytes");

/* Allocations the tree makes while it grows, counted under the lock. Every one goes
 * through meter_refuse (the test hook tree_test_fail_alloc refuses the k-th once), and
 * every failure, refused or real, is counted: a populate during which one failed fails
 * with NOMEM (tree_dir.c), whatever its callback returned. */
struct alloc_meter {
    uint64_t attempts, fail_at, failures;
};

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
    struct alloc_meter meter; /* the whole tree's (t->strings.meter) */
};

/* One registered source (a view's bytes) and what /info says about that view's part of
 * the tree. Slots live in chunks that never move: tree_source reads them without the
 * lock while a nested open adds one. */
struct src_slot {
    struct source *src;
    uint64_t dirs, done;       /* directories with a callback, and how many populated */
    uint64_t renamed;          /* names given a ~N suffix (reported once, in /info) */
    const char *renamed_first; /* the path of the first */
    struct diag *diag;         /* the view's warnings (/info), rolled back with its listings */
};

/* A populate running (populate_locked), on the C stack: its view's warnings as they were
 * when it began, and the one it runs inside. */
struct populate_frame {
    uint32_t dir;
    struct diag *diag;
    struct diag_mark mark;
    size_t undo_mark; /* t->nundo when it began */
    struct populate_frame *up;
};

/* A view's budget given back if the populate that owns it fails (tree_on_rollback).
 * owner NULL: kept for good (its listing was published). */
struct tree_undo {
    void (*fn)(void *ctx, uint64_t amount);
    void *ctx;
    uint64_t amount;
    const struct populate_frame *owner;
};

#define SRC_CHUNK 256u
#define SRC_CHUNKS 256u /* 65536 sources: a directory's src_id is 16 bits */
_Static_assert(SRC_CHUNK * SRC_CHUNKS == TREE_MAX_SOURCES, "TREE_MAX_SOURCES is the source table's size");

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
    /* directories opened (no callback, or grafted) and not yet published, in order */
    uint32_t *pending;
    size_t npending, cappending;
    uint64_t probes;  /* names looked at while adding children (tree_name_probes) */
    uint64_t text_bytes; /* bytes of the texts kept (tree_text_bytes) */
    uint64_t alloc_bytes; /* bytes handed to views by tree_alloc (tree_alloc_bytes) */
    bool full;        /* max_nodes reached: populate stopped early */
    uint64_t failed_listings; /* populates failed for lack of memory (reported in /info) */
    uint32_t populate_depth;  /* populates running (nested in each other's callbacks) */
    uint64_t failures_outer;  /* the meter's failures when the outermost one began */
    uint64_t refusals_outer;  /* and the cache's refusals to its thread (cache.h) */
    enum s3_err noted;        /* tree_note_failure's first reason since the outermost began */
    struct populate_frame *frame; /* the innermost populate running, NULL: none */
    struct tree_undo *undo; /* tree_on_rollback's records of the populates running */
    size_t nundo, capundo;
    _Atomic uint64_t version; /* tree_version: bumped under the lock, read without */
    uint64_t refused; /* nodes not made because of max_nodes (reported once, in /info) */
    _Atomic uint64_t computed_renders; /* names a computed directory rendered (tests) */
    _Atomic uint64_t computed_made;    /* entries of computed directories made (tests) */
};

#define CHUNK_BITS 16
#define CHUNK_SIZE (1u << CHUNK_BITS)
#define NCHUNKS (1u << 16)
#define ARENA_BLOCK 65536u
#define NAME_INTERN_MAX 24 /* names up to this long are interned */

/* ---- nodes by number ---- */

/* The slot of ino, dead or alive; NULL when ino was never made (or is reserved by a
 * computed directory in a chunk none of whose entries is made yet). */
static inline struct node *slot_of(struct tree *t, uint32_t ino)
{
    /* acquire: pairs with node_alloc's release, so the chunk holding ino is visible */
    if (ino == 0 || ino > atomic_load_explicit(&t->nnodes, memory_order_acquire))
        return NULL;
    uint64_t i = ino - 1;
    struct node *c = t->chunk[i >> CHUNK_BITS];
    return c ? &c[i & (CHUNK_SIZE - 1)] : NULL; /* none: numbers a computed directory reserved */
}

/* The node ino names, NULL when there is none (never made, removed by a rollback, or an
 * entry of a computed directory not made yet: a reserved slot has no name). */
static inline struct node *node_at(struct tree *t, uint32_t ino)
{
    struct node *n = slot_of(t, ino);
    return n && n->name && !(n->flags & NODE_DEAD) ? n : NULL;
}

static inline struct dirinfo *dir_at(struct tree *t, uint32_t ino)
{
    struct node *n = node_at(t, ino);
    return n && n->type == NODE_DIR ? n->u.dir.info : NULL;
}

static inline bool published(struct dirinfo *d)
{
    return atomic_load_explicit(&d->state, memory_order_acquire) == DIR_PUBLISHED;
}

/* Child i of a published directory. */
static inline uint32_t published_child(const struct dirinfo *d, uint32_t i)
{
    return d->dflags & DIRF_CONTIGUOUS ? d->c.first + i : d->c.child[i];
}

static inline struct src_slot *slot_src(struct tree *t, uint32_t id)
{
    return &t->srcchunk[id / SRC_CHUNK][id % SRC_CHUNK];
}

/* Allocation attempts (struct alloc_meter): true when this one is refused (the test
 * hook), counted as a failure. */
static inline bool meter_refuse(struct alloc_meter *m)
{
    m->attempts++;
    if (!m->fail_at || m->attempts != m->fail_at)
        return false;
    m->fail_at = 0; /* once */
    m->failures++;
    return true;
}

/* p, with a real failure (NULL) counted. */
static inline void *meter_check(struct alloc_meter *m, void *p)
{
    if (!p)
        m->failures++;
    return p;
}

static inline void *meter_malloc(struct alloc_meter *m, size_t n)
{
    return meter_refuse(m) ? NULL : meter_check(m, malloc(n));
}

static inline void *meter_calloc(struct alloc_meter *m, size_t n, size_t size)
{
    return meter_refuse(m) ? NULL : meter_check(m, calloc(n, size));
}

static inline void *meter_realloc(struct alloc_meter *m, void *p, size_t n)
{
    return meter_refuse(m) ? NULL : meter_check(m, realloc(p, n));
}

static inline char *meter_strdup(struct alloc_meter *m, const char *s)
{
    return meter_refuse(m) ? NULL : meter_check(m, strdup(s));
}

/* nodes and the arena (tree_node.c) */
void *arena_alloc(struct strarena *a, size_t n, size_t align);
char *arena_strdup(struct strarena *a, const char *s);
size_t str_hash(const struct strarena *a, const char *s);
const char *arena_intern(struct strarena *a, const char *s);
const char *type_str(struct tree *t, uint32_t id);
uint32_t type_id(struct tree *t, const char *s);
struct node *node_alloc(struct tree *t, uint32_t *ino);

/* names: unique per directory, paths (tree_name.c) */
bool name_ok(const char *name);
void build_free(struct dirbuild *b);
uint32_t build_find(struct tree *t, const struct dirbuild *b, const char *name);
void build_hash_put(struct tree *t, struct dirbuild *b, uint32_t ino);
enum s3_err build_rehash(struct tree *t, struct dirbuild *b, uint32_t nslot);
enum s3_err build_reserve(struct tree *t, struct dirbuild *b);
const char *unique_name(struct tree *t, struct dirbuild *b, const char *name, char **renamed);
char *path_of(struct tree *t, uint32_t ino);

/* directories: adding children, publication, rollback (tree_dir.c) */
enum s3_err pending_reserve(struct tree *t);
struct node *add_node_locked(struct tree *t, uint32_t parent, const char *name, uint8_t type,
                                    uint32_t *ino);
uint32_t inherited_src(struct tree *t, uint32_t parent);

/* computed directories (tree_computed.c) */
enum s3_err computed_child(struct tree *t, uint32_t dir, struct dirinfo *d, uint32_t i, uint32_t *out);
enum s3_err computed_lookup(struct tree *t, uint32_t dir, struct dirinfo *d, const char *name, uint32_t *out);
bool computed_is_made(const struct dirinfo *d, uint32_t i);
void computed_undo(struct dirinfo *d);

/* sources and open handles (tree_source.c) */
struct source *populate_hold(struct tree *t, uint32_t src_id);
void populate_release(struct source *held);

#endif
