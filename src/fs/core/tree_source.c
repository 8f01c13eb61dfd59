/* The tree (tree.h): Sources (the bytes views read) and what open handles and listings hold of them. */
#include "fs/core/tree_impl.h"

#include <stdlib.h>

/* ---- sources ---- */

enum s3_err tree_add_source(struct tree *t, struct source *s, uint32_t *id)
{
    uint32_t n = atomic_load_explicit(&t->nsrcs, memory_order_relaxed);
    if (n >= SRC_CHUNK * SRC_CHUNKS)
        return S3_ERR_LIMIT; /* the limit, not memory: a directory's src_id is 16 bits */
    if (!t->srcchunk[n / SRC_CHUNK] && !(t->srcchunk[n / SRC_CHUNK] = meter_calloc(&t->strings.meter, SRC_CHUNK, sizeof(struct src_slot))))
        return S3_ERR_NOMEM;
    *slot_src(t, n) = (struct src_slot){.src = s};
    *id = n;
    /* release: a reader that sees the new count sees the slot (chunks never move) */
    atomic_store_explicit(&t->nsrcs, n + 1, memory_order_release);
    return S3_OK;
}

enum s3_err tree_set_source_diag(struct tree *t, uint32_t id, struct diag *d)
{
    if (id >= atomic_load_explicit(&t->nsrcs, memory_order_acquire))
        return S3_ERR_INVALID;
    pthread_mutex_lock(&t->lock);
    slot_src(t, id)->diag = d;
    pthread_mutex_unlock(&t->lock);
    return S3_OK;
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


/* ---- open handles (tree.h) ---- */

#define MAX_GEN_ITEMS 16

static struct {
    gen_read_fn read;
    gen_item_fn item;
} gen_items[MAX_GEN_ITEMS];
static unsigned ngen_items;
static pthread_mutex_t gen_items_lock = PTHREAD_MUTEX_INITIALIZER;

enum s3_err tree_gen_item(gen_read_fn read, gen_item_fn item)
{
    enum s3_err rc = S3_ERR_LIMIT;
    pthread_mutex_lock(&gen_items_lock);
    for (unsigned i = 0; i < ngen_items && rc; i++)
        if (gen_items[i].read == read)
            rc = S3_OK;
    if (rc && ngen_items < MAX_GEN_ITEMS) {
        gen_items[ngen_items].read = read;
        gen_items[ngen_items++].item = item;
        rc = S3_OK;
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
        source_hold_handle(h.src);
    else
        cache_hold_handle(h.cache, h.item);
    return out;
}

void tree_release(struct tree_hold *h)
{
    if (!h)
        return;
    if (h->src)
        source_release_handle(h->src);
    else
        cache_release_handle(h->cache, h->item);
    free(h);
}

/* A listing reads its directory's source again and again (a view nested in an expanded
 * package resource parses it piece by piece): held for the populate callback, it is
 * expanded once per listing. */
struct source *populate_hold(struct tree *t, uint32_t src_id)
{
    struct source *s = tree_source(t, src_id);
    if (s && source_expands(s))
        source_hold(s);
    else
        s = NULL;
    return s;
}

void populate_release(struct source *held)
{
    if (held)
        source_release(held);
}

