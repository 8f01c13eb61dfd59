/* A memory-bounded cache of expanded bytes: permanent descriptors (struct cached, owned by
 * their creator for the tree's life) whose bytes a producer makes on demand, dropped least
 * recently used first once the total passes the limit.
 * - Use bytes only between cache_pin and cache_unpin: pinned and held bytes stay.
 * - A producer runs with no cache lock held, one at a time per item; pins of that item
 *   wait for it. It may pin items below its own (no cycles).
 * - A producer must not take a lock that a thread may hold while it pins that same item.
 * - Lock order: the tree's, then a view's own, then the cache's.
 * - One bound for all threads: an item that does not fit beside what other requests and
 *   open files hold is refused, never produced past it. Room is made first (hint). */
#ifndef S3_CACHE_H
#define S3_CACHE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "parse/base/err.h"

struct cached;
/* Produces the item's bytes (malloc'd): S3_OK, or the reason with err. Runs without the
 * cache lock. */
typedef enum s3_err (*produce_fn)(struct cached *c, uint8_t **data, size_t *size, char *err, size_t errlen);

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
    uint64_t refused;  /* productions refused: they did not fit beside what others held */
};

struct cache {
    struct cache *shared; /* non-NULL: every call goes to that cache (a nested view's) */
    size_t limit, used;
    struct cached *head, *tail;
    pthread_mutex_t lock;
    pthread_cond_t produced_cond; /* an item's production ended (waiters recheck theirs) */
    uint64_t produced, evicted; /* statistics */
    uint64_t failed, waits, peak, refused;
    /* Tests only: called (unlocked) right before each production, so a test can hold a
     * producer blocked and count what other threads do meanwhile. */
    void (*before_produce)(struct cached *it, void *ctx);
    void *before_produce_ctx;
};

void cache_init(struct cache *c, size_t limit);
/* A cache that forwards to `to` (a view nested in another shares its bound). */
void cache_init_shared(struct cache *c, struct cache *to);
void cache_destroy(struct cache *c);
/* The item's bytes (*data, *size), produced if needed: S3_OK, or the reason with err (the
 * producer's, or LIMIT). The bytes stay valid until cache_unpin. The bound is one for
 * every thread: an item that does not fit beside what other requests pin and open files
 * hold is refused (LIMIT, err says so; cache_stats counts it), never produced past the
 * bound; alone, a request may pass it. */
enum s3_err cache_pin(struct cache *c, struct cached *it, const uint8_t **data, size_t *size, char *err,
                      size_t errlen);
void cache_unpin(struct cache *c, struct cached *it);
/* A file's read of an item's bytes: [off, off + len) copied into buf under a pin, *got
 * fewer at the end and 0 past it. `size_must` is the size the bytes must have (another:
 * IO, the source changed since the file was sized), CACHE_ANY_SIZE for any. A production
 * refused memory is the read's NOMEM (not kept: the next read produces again), every
 * other refusal, cache_mb's included, IO; the pin's message is dropped (a read has no
 * place to say it). */
#define CACHE_ANY_SIZE UINT64_MAX
enum s3_err cache_read(struct cache *c, struct cached *it, uint64_t size_must, uint64_t off, void *buf, size_t len,
                       size_t *got);
/* Keeps the item's bytes once they are produced (now or by a later pin), until
 * cache_release: an open file handle, a listing reading a source. Produces nothing. */
void cache_hold(struct cache *c, struct cached *it);
void cache_release(struct cache *c, struct cached *it);
/* The same for an open file handle, whose hold outlives the request (and thread) that
 * took it: its bytes count as others' for every request. cache_hold/release are for a
 * request's own holds (a listing, a build), taken and let go on one thread. */
void cache_hold_handle(struct cache *c, struct cached *it);
void cache_release_handle(struct cache *c, struct cached *it);
/* Drops an item's bytes (used when its descriptor goes away); pinned bytes stay. */
void cache_forget(struct cache *c, struct cached *it);
/* The bound (the owner's, for a shared cache). */
size_t cache_limit(const struct cache *c);
void cache_stats(struct cache *c, struct cache_stats *out);
/* Productions refused to the calling thread so far (a listing that was refused one
 * fails: its directory is made again at its next use). */
uint64_t cache_thread_refusals(void);
/* Starts a new peak measurement from what is held now. */
void cache_reset_peak(struct cache *c);
/* Process-wide, once, before threads start (the commands' main): allocations of 1 MiB
 * and more are their own mappings, so bytes the cache lets go return to the system at
 * once. Else glibc raises that threshold as big blocks are freed and keeps them in each
 * thread's arena: with parallel requests the daemon's memory is every thread's
 * high-water mark, not the cache's bound (98 MB for 12.6 MB held, bench bounds). */
void cache_tune_allocator(void);

#endif
