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
 * and held items are never evicted, so they count against the one bound: an item that
 * does not fit beside what others pin and hold is refused (see mine() below).
 *
 * The bound. Before an item is produced, room is made for its expected size (hint, when
 * the descriptor knows it), so the bytes held stay within the limit whenever what is
 * pinned and held fits; the peak of the bytes held (ready items and the room reserved
 * for items being produced) is recorded for tests and benchmarks (cache_stats). */
#include "fs/core/cache.h"

#include <malloc.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
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

/* What the calling thread's request holds: the items it pins, holds (a listing's source,
 * a build's) or produces now, each once. Everything else held (other requests' items,
 * open files' holds: cache_hold_handle) is others': an item that does not fit beside what
 * others hold is refused, so concurrent requests and open files share one bound. Past
 * MINE_MAX items a request's further items count as others' (stricter, never looser). */
#define MINE_MAX 256
static _Thread_local struct mine_entry {
    struct cache *c;
    struct cached *it;
    unsigned refs;
    bool producing;
} mine_set[MINE_MAX];
static _Thread_local unsigned mine_n;
static _Thread_local uint64_t mine_refusals;

static struct mine_entry *mine_find(struct cache *c, struct cached *it, bool add)
{
    for (unsigned i = 0; i < mine_n; i++)
        if (mine_set[i].it == it && mine_set[i].c == c)
            return &mine_set[i];
    if (!add || mine_n == MINE_MAX)
        return NULL;
    mine_set[mine_n] = (struct mine_entry){c, it, 0, false};
    return &mine_set[mine_n++];
}

static void mine_ref(struct cache *c, struct cached *it)
{
    struct mine_entry *e = mine_find(c, it, true);
    if (e)
        e->refs++;
}

static void mine_unref(struct cache *c, struct cached *it)
{
    struct mine_entry *e = mine_find(c, it, false);
    if (e && e->refs && --e->refs == 0 && !e->producing)
        *e = mine_set[--mine_n];
}

static void mine_producing(struct cache *c, struct cached *it, bool on)
{
    struct mine_entry *e = mine_find(c, it, on);
    if (!e)
        return;
    e->producing = on;
    if (!on && e->refs == 0)
        *e = mine_set[--mine_n];
}

/* The bytes of c the calling thread's request holds (under c->lock). */
static uint64_t mine(const struct cache *c)
{
    uint64_t n = 0;
    for (unsigned i = 0; i < mine_n; i++) {
        const struct mine_entry *e = &mine_set[i];
        if (e->c != c)
            continue;
        n += e->it->state == CACHED_READY ? e->it->size : e->producing ? e->it->reserved : 0;
    }
    return n;
}

uint64_t cache_thread_refusals(void)
{
    return mine_refusals;
}

/* True when need more bytes may be held: within the bound, or beside nothing but the
 * request's own (an item or a request bigger than the bound alone). */
static bool fits(const struct cache *c, uint64_t need)
{
    return c->used + need <= c->limit || c->used <= mine(c);
}

static enum s3_err refuse(struct cache *c, uint64_t need, char *err, size_t errlen)
{
    c->refused++;
    mine_refusals++;
    return s3_fail(S3_ERR_LIMIT, err, errlen,
                   "cache_mb: its %" PRIu64 " bytes do not fit beside the %" PRIu64
                   " bytes other requests and open files hold (the bound: %zu bytes); read it again later",
                   need, c->used - mine(c), c->limit);
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
 * with c->lock held; S3_OK with the item ready (and pinned), or the reason. */
static enum s3_err produce_locked(struct cache *c, struct cached *it, char *err, size_t errlen)
{
    make_room(c, it->hint);
    if (!fits(c, it->hint)) {
        pthread_cond_broadcast(&c->produced_cond); /* waiters for it try themselves */
        return refuse(c, it->hint, err, errlen);
    }
    it->state = CACHED_PRODUCING;
    it->reserved = it->hint;
    c->used += it->reserved;
    mine_producing(c, it, true);
    note_used(c);
    pthread_mutex_unlock(&c->lock);
    if (c->before_produce)
        c->before_produce(it, c->before_produce_ctx);
    uint8_t *data = NULL;
    size_t n = 0;
    enum s3_err rc = it->produce(it, &data, &n, err, errlen);
    pthread_mutex_lock(&c->lock);
    c->used -= it->reserved;
    it->reserved = 0;
    if (rc == S3_OK) { /* its size was unknown or wrong: it must fit as it is */
        make_room(c, n);
        if (!fits(c, n)) {
            free(data);
            it->state = CACHED_ABSENT;
            mine_producing(c, it, false);
            pthread_cond_broadcast(&c->produced_cond);
            return refuse(c, n, err, errlen);
        }
    }
    if (rc) {
        it->state = CACHED_ABSENT;
        c->failed++;
    } else {
        it->data = data;
        it->size = n;
        it->state = CACHED_READY;
        it->pins++;
        c->used += n;
        mine_ref(c, it);
        note_used(c); /* the bytes exist now, before anything older is let go */
        c->produced++;
        push_front(c, it);
    }
    mine_producing(c, it, false);
    pthread_cond_broadcast(&c->produced_cond);
    return rc;
}

enum s3_err cache_pin(struct cache *c, struct cached *it, const uint8_t **data, size_t *size, char *err,
                      size_t errlen)
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
        mine_ref(c, it);
        unlink_item(c, it);
        push_front(c, it);
    } else {
        enum s3_err e = produce_locked(c, it, err, errlen);
        if (e) {
            pthread_mutex_unlock(&c->lock);
            return e;
        }
    }
    make_room(c, 0);
    *size = it->size;
    *data = it->data;
    pthread_mutex_unlock(&c->lock);
    return S3_OK;
}

void cache_unpin(struct cache *c, struct cached *it)
{
    c = owner(c);
    pthread_mutex_lock(&c->lock);
    if (it->pins) {
        it->pins--;
        mine_unref(c, it);
    }
    make_room(c, 0);
    pthread_mutex_unlock(&c->lock);
}

enum s3_err cache_read(struct cache *c, struct cached *it, uint64_t size_must, uint64_t off, void *buf, size_t len,
                       size_t *got)
{
    char err[256];
    const uint8_t *d;
    size_t size;
    enum s3_err rc = cache_pin(c, it, &d, &size, err, sizeof err);
    if (rc)
        return rc == S3_ERR_NOMEM ? rc : S3_ERR_IO;
    rc = S3_ERR_IO;
    if (size_must == CACHE_ANY_SIZE || size == size_must) {
        *got = off < size ? (len < size - off ? len : (size_t)(size - off)) : 0;
        if (*got) /* d + off only inside the item */
            memcpy(buf, d + off, *got);
        rc = S3_OK;
    }
    cache_unpin(c, it);
    return rc;
}

static void hold(struct cache *c, struct cached *it, bool request)
{
    c = owner(c);
    pthread_mutex_lock(&c->lock);
    it->holds++;
    if (request)
        mine_ref(c, it);
    pthread_mutex_unlock(&c->lock);
}

static void release(struct cache *c, struct cached *it, bool request)
{
    c = owner(c);
    pthread_mutex_lock(&c->lock);
    if (it->holds) {
        it->holds--;
        if (request)
            mine_unref(c, it);
    }
    make_room(c, 0);
    pthread_mutex_unlock(&c->lock);
}

void cache_hold(struct cache *c, struct cached *it)
{
    hold(c, it, true);
}

void cache_release(struct cache *c, struct cached *it)
{
    release(c, it, true);
}

void cache_hold_handle(struct cache *c, struct cached *it)
{
    hold(c, it, false);
}

void cache_release_handle(struct cache *c, struct cached *it)
{
    release(c, it, false);
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
    *out = (struct cache_stats){c->produced, c->failed, c->evicted, c->waits, c->used, c->peak, c->limit, c->refused};
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
    for (unsigned i = mine_n; i-- > 0;) /* a pin or hold never let go: forget it here */
        if (mine_set[i].c == c)
            mine_set[i] = mine_set[--mine_n];
    while (c->head)
        drop(c, c->head);
    pthread_cond_destroy(&c->produced_cond);
    pthread_mutex_destroy(&c->lock);
}

void cache_tune_allocator(void)
{
    mallopt(M_MMAP_THRESHOLD, 1 << 20); /* a fixed threshold: glibc stops raising it */
}
