#include "fs/cache.h"

#include <stdlib.h>
#include <string.h>

void cache_init(struct cache *c, size_t limit)
{
    memset(c, 0, sizeof *c);
    c->limit = limit;
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&c->lock, &attr);
    pthread_mutexattr_destroy(&attr);
}

void cache_init_shared(struct cache *c, struct cache *to)
{
    memset(c, 0, sizeof *c);
    c->shared = to->shared ? to->shared : to;
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

static void drop(struct cache *c, struct cached *it)
{
    unlink_item(c, it);
    c->used -= it->size;
    free(it->data);
    it->data = NULL;
    it->size = 0;
    c->evicted++;
}

/* Evicts unpinned items from the cold end until the total fits (or nothing can go). */
static void shrink(struct cache *c)
{
    struct cached *it = c->tail;
    while (c->used > c->limit && it) {
        struct cached *prev = it->prev;
        if (it->pins == 0)
            drop(c, it);
        it = prev;
    }
}

const uint8_t *cache_pin(struct cache *c, struct cached *it, size_t *size, char *err, size_t errlen)
{
    if (c->shared)
        c = c->shared;
    pthread_mutex_lock(&c->lock);
    if (!it->data) {
        uint8_t *data;
        size_t n;
        /* Produced under the lock: simple, and two readers never expand one item twice. */
        if (it->produce(it, &data, &n, err, errlen)) {
            pthread_mutex_unlock(&c->lock);
            return NULL;
        }
        it->data = data;
        it->size = n;
        c->used += n;
        c->produced++;
    } else {
        unlink_item(c, it);
    }
    push_front(c, it);
    it->pins++;
    shrink(c);
    *size = it->size;
    const uint8_t *d = it->data;
    pthread_mutex_unlock(&c->lock);
    return d;
}

void cache_unpin(struct cache *c, struct cached *it)
{
    if (c->shared)
        c = c->shared;
    pthread_mutex_lock(&c->lock);
    if (it->pins)
        it->pins--;
    shrink(c);
    pthread_mutex_unlock(&c->lock);
}

void cache_forget(struct cache *c, struct cached *it)
{
    if (c->shared)
        c = c->shared;
    pthread_mutex_lock(&c->lock);
    if (it->data)
        drop(c, it);
    pthread_mutex_unlock(&c->lock);
}

void cache_destroy(struct cache *c)
{
    if (c->shared)
        return; /* the owner destroys it */
    while (c->head)
        drop(c, c->head);
    pthread_mutex_destroy(&c->lock);
}
