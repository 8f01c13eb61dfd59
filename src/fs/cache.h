/* A memory-bounded cache of expanded data (RNC nodes, Oodle1 sections). Each item has
 * a permanent descriptor and a producer that (re)creates its bytes; the bytes are
 * dropped least-recently-used first when the total passes the limit, except while
 * pinned by a reader.
 *
 * Contracts: descriptors (struct cached) are owned by the views and live as long as the
 * tree; only their bytes come and go. cache_pin holds c->lock while it produces, so two
 * readers never expand one item twice, and while one item is being expanded every other
 * pin waits (simple; expansion is bounded by max_unpacked_mb). Pinned bytes are never
 * evicted, so a reader may use them unlocked until cache_unpin; the total may then pass
 * the limit until the pins are dropped. Lock order: the tree lock (tree.h) may be held
 * when pinning (populate callbacks do), never the other way round: a produce callback
 * reads the source only and must not call into the tree.
 *
 * A producer runs under the cache lock, and may itself pin another item (an Oodle1
 * section of a rig whose bytes are an expanded package resource): the lock is recursive,
 * and an item being produced is not in the list yet, so nothing it needs is evicted. */
#ifndef S3_CACHE_H
#define S3_CACHE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

struct cached;
/* Produces the item's bytes (malloc'd). 0, or -1 with err. */
typedef int (*produce_fn)(struct cached *c, uint8_t **data, size_t *size, char *err, size_t errlen);

struct cached {
    produce_fn produce;
    uint8_t *data; /* NULL while not held */
    size_t size;
    unsigned pins;
    struct cached *prev, *next; /* LRU list of held items, most recent first */
};

struct cache {
    struct cache *shared; /* non-NULL: every call goes to that cache (a nested view's) */
    size_t limit, used;
    struct cached *head, *tail;
    pthread_mutex_t lock;
    uint64_t produced, evicted; /* statistics */
};

void cache_init(struct cache *c, size_t limit);
/* A cache that forwards to `to` (a view nested in another shares its bound). */
void cache_init_shared(struct cache *c, struct cache *to);
void cache_destroy(struct cache *c);
/* Returns the item's bytes, producing them if needed; NULL with err on failure. The
 * bytes stay valid until cache_unpin. */
const uint8_t *cache_pin(struct cache *c, struct cached *it, size_t *size, char *err, size_t errlen);
void cache_unpin(struct cache *c, struct cached *it);
/* Drops an item's bytes (used when its descriptor goes away). */
void cache_forget(struct cache *c, struct cached *it);

#endif
