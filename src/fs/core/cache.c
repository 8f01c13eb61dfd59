/* The cache (cache.h). Each item has a permanent descriptor and a producer that (re)creates its
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
 * for items being produced) is recorded for tests and benchmarks (cache_stats). */
#include "fs/core/cache.h"

#include <stdlib.h>
#include <string.h>

void cache_init(struct cache *c, size_t limit)
{
    memset(c, 0, sizeof *c);
    c->limit = limit;
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->produced_cond, NULL);
}

void cache_init_shared(struct cache *c, struct cache *to)
{
    memset(c, 0, sizeof *c);
    c->shared = to->shared ? to->shared : to;
}

static struct cache *owner(struct cache *c)
{
    return c->shared ? c->shared : c;
}

static void unlink_item(struct cache *c, struct cached *it)
{
    if (it->prev)
        it->prev->next = it->next;
    else
        c->head = it->next;
    if (it->next)
        it->next->prev = it->prev;
    else
        c->tail = it->prev;
    it->prev = it->next = NULL;
}

static void push_front(struct cache *c, struct cached *it)
{
    it->next = c->head;
    it->prev = NULL;
    if (c->head)
        c->head->prev = it;
    c->head = it;
    if (!c->tail)
        c->tail = it;
}

static void note_used(struct cache *c)
{
    if (c->used > c->peak)
        c->peak = c->used;
}

static void drop(struct cache *c, struct cached *it)
{
    unlink_item(c, it);
    c->used -= it->size;
    free(it->data);
    it->data = NULL;
    it->size = 0;
    it->state = CACHED_ABSENT;
    c->evicted++;
}

/* Evicts ready items nobody pins or holds, from the cold end, until `room` more bytes
 * fit under the limit (or nothing more can go). */
static void make_room(struct cache *c, uint64_t room)
{
    struct cached *it = c->tail;
    while (it && c->used + room > c->limit) {
        struct cached *prev = it->prev;
        if (it->pins == 0 && it->holds == 0)
            drop(c, it);
        it = prev;
    }
}

/* Produces an absent item: marked being produced, the producer runs unlocked (others
 * that want this item wait for it; other items are served meanwhile). Called and returns
 * with c->lock held; 0 with the item ready (and pinned), or -1. */
static int produce_locked(struct cache *c, struct cached *it, char *err, size_t errlen)
{
    it->state = CACHED_PRODUCING;
    it->reserved = it->hint;
    make_room(c, it->reserved);
    c->used += it->reserved;
    note_used(c);
    pthread_mutex_unlock(&c->lock);
    if (c->before_produce)
        c->before_produce(it, c->before_produce_ctx);
    uint8_t *data = NULL;
    size_t n = 0;
    int rc = it->produce(it, &data, &n, err, errlen);
    pthread_mutex_lock(&c->lock);
    c->used -= it->reserved;
    it->reserved = 0;
    if (rc) {
        it->state = CACHED_ABSENT;
        c->failed++;
    } else {
        it->data = data;
        it->size = n;
        it->state = CACHED_READY;
        it->pins++;
        c->used += n;
        note_used(c); /* the bytes exist now, before anything older is let go */
        c->produced++;
        push_front(c, it);
    }
    pthread_cond_broadcast(&c->produced_cond);
    return rc ? -1 : 0;
}

const uint8_t *cache_pin(struct cache *c, struct cached *it, size_t *size, char *err, size_t errlen)
{
    c = owner(c);
    pthread_mutex_lock(&c->lock);
    if (it->state == CACHED_PRODUCING) {
        /* held while waiting: the producer's unpin cannot drop the bytes before this
         * reader, woken, has pinned them */
        it->holds++;
        c->waits++;
        while (it->state == CACHED_PRODUCING)
            pthread_cond_wait(&c->produced_cond, &c->lock);
        it->holds--;
    }
    if (it->state == CACHED_READY) {
        it->pins++;
        unlink_item(c, it);
        push_front(c, it);
    } else if (produce_locked(c, it, err, errlen)) {
        pthread_mutex_unlock(&c->lock);
        return NULL;
    }
    make_room(c, 0);
    *size = it->size;
    const uint8_t *d = it->data;
    pthread_mutex_unlock(&c->lock);
    return d;
}

void cache_unpin(struct cache *c, struct cached *it)
{
    c = owner(c);
    pthread_mutex_lock(&c->lock);
    if (it->pins)
        it->pins--;
    make_room(c, 0);
    pthread_mutex_unlock(&c->lock);
}

void cache_hold(struct cache *c, struct cached *it)
{
    c = owner(c);
    pthread_mutex_lock(&c->lock);
    it->holds++;
    pthread_mutex_unlock(&c->lock);
}

void cache_release(struct cache *c, struct cached *it)
{
    c = owner(c);
    pthread_mutex_lock(&c->lock);
    if (it->holds)
        it->holds--;
    make_room(c, 0);
    pthread_mutex_unlock(&c->lock);
}

void cache_forget(struct cache *c, struct cached *it)
{
    c = owner(c);
    pthread_mutex_lock(&c->lock);
    if (it->state == CACHED_READY && it->pins == 0)
        drop(c, it);
    pthread_mutex_unlock(&c->lock);
}

size_t cache_limit(const struct cache *c)
{
    return (c->shared ? c->shared : c)->limit;
}

void cache_stats(struct cache *c, struct cache_stats *out)
{
    c = owner(c);
    pthread_mutex_lock(&c->lock);
    *out = (struct cache_stats){c->produced, c->failed, c->evicted, c->waits, c->used, c->peak, c->limit};
    pthread_mutex_unlock(&c->lock);
}

void cache_reset_peak(struct cache *c)
{
    c = owner(c);
    pthread_mutex_lock(&c->lock);
    c->peak = c->used;
    pthread_mutex_unlock(&c->lock);
}

void cache_destroy(struct cache *c)
{
    if (c->shared)
        return; /* the owner destroys it */
    while (c->head)
        drop(c, c->head);
    pthread_cond_destroy(&c->produced_cond);
    pthread_mutex_destroy(&c->lock);
}
