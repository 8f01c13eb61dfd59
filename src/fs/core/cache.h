/* A memory-bounded cache of expanded data (package resources, Granny sections, RNC nodes,
 * export files). Each item has a permanent descriptor and a producer that (re)creates its
 * bytes; the bytes are dropped least-recently-used first when the total passes the limit,
 * except while pinned or held.
 *
 * Contracts:
 *
 * Descriptors (struct cached) are owned by the views and live as long as the tree; only
 * their bytes come and go.
 *
 * Production runs outside the cache lock. An item is absent, being produced or ready
 * (its state, under the lock). cache_pin of an absent item marks it being produced and
 * runs the producer unlocked; a pin of an item being produced waits for that item alone
 * (a condition variable), so two readers never expand one item twice, and one long
 * expansion never stalls pins of other items. A producer may pin other items (a Granny
 * section of a rig whose bytes are an expanded package resource): items form no cycles,
 * since each is made from the bytes below it.
 *
 * Pins and holds. Pinned bytes are never evicted, so a reader may use them unlocked until
 * cache_unpin. A hold (cache_hold) keeps an item once it has been produced, without
 * producing it: an open file handle holds the item its reads come from, a listing holds
 * the source it reads, so reading an item of any size through expands it once. Pinned
 * and held items may take the total past the limit: the item being read by an open handle
 * is the one thing allowed past the bound, while held. Everything else is evicted first.
 *
 * The bound. Before an item is produced, room is made for its expected size (hint, when
 * the descriptor knows it), so the bytes held stay within the limit whenever what is
 * pinned and held fits; the peak of the bytes held (ready items and the room reserved
 * for items being produced) is recorded for tests and benchmarks (cache_stats).
 *
 * Lock order: the tree lock (tree.h) may be held when pinning or holding (populate
 * callbacks do), and a producer may wait for another item; nothing takes the tree lock
 * while holding the cache's lock. Producers read sources; the one kind that takes the
 * tree lock (a Turok 1 export build, which reads through the t2fs locator) makes an item
 * that is never pinned under the tree lock (export files are read by file reads only;
 * listings size them by measuring, never by pinning), so no thread waits under the tree
 * lock for a production that needs it. */
#ifndef S3_CACHE_H
#define S3_CACHE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

struct cached;
/* Produces the item's bytes (malloc'd). 0, or -1 with err. Runs without the cache lock. */
typedef int (*produce_fn)(struct cached *c, uint8_t **data, size_t *size, char *err, size_t errlen);

enum cached_state { CACHED_ABSENT, CACHED_PRODUCING, CACHED_READY };

struct cached {
    produce_fn produce;
    uint64_t hint; /* the expected size (0: unknown), set by the view: room made before producing */
    uint8_t *data; /* NULL while not held */
    size_t size;
    unsigned pins;  /* readers using the bytes now */
    unsigned holds; /* keep once produced (open handles, listings) */
    uint8_t state;  /* enum cached_state */
    uint64_t reserved; /* room counted in used while being produced */
    struct cached *prev, *next; /* LRU list of ready items, most recent first */
};

/* What tests and benchmarks read (cache_stats): counted, never timed. */
struct cache_stats {
    uint64_t produced; /* productions that succeeded */
    uint64_t failed;   /* productions that failed */
    uint64_t evicted;
    uint64_t waits;    /* pins that waited for another thread's production of the same item */
    uint64_t used, peak, limit; /* bytes held now, the most held at once, the bound */
};

struct cache {
    struct cache *shared; /* non-NULL: every call goes to that cache (a nested view's) */
    size_t limit, used;
    struct cached *head, *tail;
    pthread_mutex_t lock;
    pthread_cond_t produced_cond; /* an item's production ended (waiters recheck theirs) */
    uint64_t produced, evicted; /* statistics */
    uint64_t failed, waits, peak;
    /* Tests only: called (unlocked) right before each production, so a test can hold a
     * producer blocked and count what other threads do meanwhile. */
    void (*before_produce)(struct cached *it, void *ctx);
    void *before_produce_ctx;
};

void cache_init(struct cache *c, size_t limit);
/* A cache that forwards to `to` (a view nested in another shares its bound). */
void cache_init_shared(struct cache *c, struct cache *to);
void cache_destroy(struct cache *c);
/* Returns the item's bytes, producing them if needed; NULL with err on failure. The
 * bytes stay valid until cache_unpin. */
const uint8_t *cache_pin(struct cache *c, struct cached *it, size_t *size, char *err, size_t errlen);
void cache_unpin(struct cache *c, struct cached *it);
/* Keeps the item's bytes once they are produced (now or by a later pin), until
 * cache_release: an open file handle, a listing reading a source. Produces nothing. */
void cache_hold(struct cache *c, struct cached *it);
void cache_release(struct cache *c, struct cached *it);
/* Drops an item's bytes (used when its descriptor goes away); pinned bytes stay. */
void cache_forget(struct cache *c, struct cached *it);
/* The bound (the owner's, for a shared cache). */
size_t cache_limit(const struct cache *c);
void cache_stats(struct cache *c, struct cache_stats *out);
/* Starts a new peak measurement from what is held now. */
void cache_reset_peak(struct cache *c);

#endif
