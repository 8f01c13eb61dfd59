/* The tree (tree.h): computed directories. A directory of n symlinks that its view
 * describes by callbacks (tree_computed_ops) instead of nodes: made with n inode numbers
 * reserved (base + i for entry i, so a number never changes and never needs a table), and
 * each entry's node made the first time a lookup finds it or a listing reaches it. Why:
 * a folder of 10,000 packages has a million keys; making them all as nodes costs about
 * 180 bytes each and seconds before the first lookup answers.
 *
 * Publication: the directory is published like any other (its state stored with release
 * when its populate returns 0); from then on c.first, n and comp never change. An entry
 * is made under the tree lock, in its reserved slot (its chunk allocated by the first entry
 * made there), and its bit in comp->made is set with release once the node is whole; a
 * reader that loads the bit with acquire reads the node without the lock. Reserved slots
 * not made yet have no name, so node_at finds nothing there. */
#include "fs/core/tree_impl.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

bool computed_is_made(const struct dirinfo *d, uint32_t i)
{
    return atomic_load_explicit(&d->comp->made[i / 8], memory_order_acquire) & (1u << (i % 8));
}

/* The chunk holding node slot ino, allocated when it is the first made there (a computed
 * directory reserves numbers, not chunks: a million reserved cost nothing). Under the
 * lock; readers find it through the entry's bit (released after) or the kernel. */
static struct node *chunk_slot(struct tree *t, uint32_t ino)
{
    uint64_t i = ino - 1;
    if (!t->chunk[i >> CHUNK_BITS] &&
        !(t->chunk[i >> CHUNK_BITS] = meter_calloc(&t->strings.meter, CHUNK_SIZE, sizeof(struct node))))
        return NULL;
    return &t->chunk[i >> CHUNK_BITS][i & (CHUNK_SIZE - 1)];
}

enum s3_err tree_set_computed(struct tree *t, uint32_t dir, const struct tree_computed_ops *ops, void *ctx, uint32_t n)
{
    struct node *dn = node_at(t, dir);
    if (!dn)
        return S3_ERR_NOT_FOUND;
    if (dn->type != NODE_DIR)
        return S3_ERR_NOT_DIR;
    pthread_mutex_lock(&t->lock);
    struct dirinfo *d = dn->u.dir.info;
    enum s3_err rc = S3_OK;
    uint64_t have = atomic_load_explicit(&t->nnodes, memory_order_relaxed);
    if (atomic_load_explicit(&d->state, memory_order_relaxed) != DIR_BUSY || is_computed(d) ||
        (d->c.build && d->c.build->n))
        rc = S3_ERR_BUSY; /* only its own populate, before any child (tree.h) */
    uint64_t room = t->limits.max_nodes < (uint64_t)NCHUNKS * CHUNK_SIZE - 1 ? t->limits.max_nodes
                                                                           : (uint64_t)NCHUNKS * CHUNK_SIZE - 1;
    if (rc == 0 && have + n > room) { /* the node limit: the first entries that fit, as a populate */
        uint32_t fit = have < room ? (uint32_t)(room - have) : 0;
        t->full = true;
        t->refused += n - fit;
        n = fit;
    }
    struct computed *c = NULL;
    _Atomic uint8_t *made = NULL;
    if (rc == 0) {
        c = arena_alloc(&t->strings, sizeof *c, _Alignof(struct computed));
        made = arena_alloc(&t->strings, n / 8 + 1, 1);
        if (!c || !made)
            rc = S3_ERR_NOMEM;
    }
    if (rc == 0) {
        memset((void *)made, 0, n / 8 + 1);
        *c = (struct computed){ops, ctx, made};
        build_free(d->c.build);
        d->c.first = (uint32_t)have + 1;
        d->n = n;
        d->nsubdirs = ops->populate ? n : 0; /* st_nlink counts them, made or not */
        d->comp = c;
        d->dflags |= DIRF_COMPUTED | DIRF_CONTIGUOUS;
        /* the numbers are taken; their chunks come with their first entry (chunk_slot) */
        atomic_store_explicit(&t->nnodes, have + n, memory_order_release);
        atomic_fetch_add(&t->version, 1);
    }
    pthread_mutex_unlock(&t->lock);
    return rc;
}

/* A populate that made dir computed failed: dir is an ordinary unpopulated directory
 * again (its reserved numbers stay unused: numbers are never reused). Under the lock. */
void computed_undo(struct dirinfo *d)
{
    if (!is_computed(d))
        return;
    d->dflags &= (uint8_t) ~(DIRF_COMPUTED | DIRF_CONTIGUOUS);
    d->comp = NULL;
    d->c.build = NULL;
    d->n = 0;
}

/* Entry i's directory state (ops->populate): unpopulated, populated by the view with
 * arg i. NULL: out of memory. Under the lock. */
static struct dirinfo *entry_dir(struct tree *t, uint32_t dir, const struct computed *c, uint32_t i)
{
    struct dirinfo *e = arena_alloc(&t->strings, sizeof *e, _Alignof(struct dirinfo));
    if (!e)
        return NULL;
    memset(e, 0, sizeof *e);
    e->populate = c->ops->populate;
    e->ctx = c->ctx;
    e->arg = i;
    e->src_id = (uint16_t)inherited_src(t, dir);
    atomic_init(&e->state, DIR_UNPOPULATED);
    return e;
}

/* Makes entry i's node (under the lock): its name and target (or directory state) from
 * the view. */
static enum s3_err make_entry(struct tree *t, uint32_t dir, struct dirinfo *d, uint32_t i)
{
    struct computed *c = d->comp;
    bool is_dir = c->ops->populate != NULL;
    char name[NAME_MAX + 1], *target = NULL;
    atomic_fetch_add(&t->computed_renders, 1);
    enum s3_err rc = c->ops->name(c->ctx, i, name, sizeof name);
    if (rc == 0 && !name_ok(name))
        rc = S3_ERR_IO; /* the view broke its rule: no such name can be listed */
    if (rc == 0 && !is_dir)
        rc = c->ops->target(t, c->ctx, dir, i, &target);
    const char *ncopy = NULL, *tcopy = NULL;
    struct dirinfo *e = NULL;
    if (rc == 0) {
        ncopy = strlen(name) <= NAME_INTERN_MAX ? arena_intern(&t->strings, name) : arena_strdup(&t->strings, name);
        if (is_dir)
            e = entry_dir(t, dir, c, i);
        else
            tcopy = target ? arena_strdup(&t->strings, target) : NULL;
        if (!ncopy || (is_dir ? !e : !tcopy))
            rc = S3_ERR_NOMEM;
    }
    free(target);
    struct node *n = rc ? NULL : chunk_slot(t, d->c.first + i);
    if (!rc && !n)
        rc = S3_ERR_NOMEM;
    if (rc)
        return rc;
    if (is_dir) {
        n->u.dir.info = e;
        n->type = NODE_DIR;
        n->xtype = type_id(t, c->ops->xtype);
        slot_src(t, e->src_id)->dirs++; /* one more to populate (tree_progress) */
    } else {
        n->u.text.p = tcopy;
        n->size = strlen(tcopy) & NODE_SIZE_MAX;
        n->type = NODE_LINK;
        n->xtype = type_id(t, "symlink");
    }
    n->parent = dir;
    n->name = ncopy; /* last: a node with a name is made (node_at) */
    atomic_fetch_add(&t->computed_made, 1);
    /* release: a reader that sees the bit sees the node */
    atomic_fetch_or_explicit(&c->made[i / 8], (uint8_t)(1u << (i % 8)), memory_order_release);
    return S3_OK;
}

/* Entry i of computed directory dir, made when it is not yet: 0 and its number, or the
 * reason making it failed. */
enum s3_err computed_child(struct tree *t, uint32_t dir, struct dirinfo *d, uint32_t i, uint32_t *out)
{
    if (i >= d->n)
        return S3_ERR_NOT_FOUND;
    enum s3_err rc = S3_OK;
    if (!computed_is_made(d, i)) { /* the common case after the first use: no lock */
        pthread_mutex_lock(&t->lock);
        if (!computed_is_made(d, i))
            rc = make_entry(t, dir, d, i);
        if (rc == S3_ERR_NOMEM) { /* a listing failed for lack of memory: /info counts it */
            t->failed_listings++;
            atomic_fetch_add(&t->version, 1);
        }
        pthread_mutex_unlock(&t->lock);
    }
    if (rc == 0)
        *out = d->c.first + i;
    return rc;
}

/* The entry named name: the view's find, then the name checked (the node's, or one
 * rendered), so a find that answers wrongly never makes a name appear twice. */
enum s3_err computed_lookup(struct tree *t, uint32_t dir, struct dirinfo *d, const char *name, uint32_t *out)
{
    struct computed *c = d->comp;
    uint32_t i;
    if (c->ops->find(c->ctx, name, &i) || i >= d->n)
        return S3_ERR_NOT_FOUND;
    if (computed_is_made(d, i)) {
        if (strcmp(slot_of(t, d->c.first + i)->name, name) != 0)
            return S3_ERR_NOT_FOUND;
    } else {
        char mine[NAME_MAX + 1];
        atomic_fetch_add(&t->computed_renders, 1);
        if (c->ops->name(c->ctx, i, mine, sizeof mine) || strcmp(mine, name) != 0)
            return S3_ERR_NOT_FOUND;
    }
    return computed_child(t, dir, d, i, out);
}

const char *tree_child_peek(struct tree *t, uint32_t dir, uint32_t i, char *buf, size_t size, uint32_t *ino,
                            int *kind)
{
    struct dirinfo *d = dir_at(t, dir);
    if (d && published(d) && is_computed(d) && i < d->n && !computed_is_made(d, i)) {
        struct computed *c = d->comp; /* fixed once published: no lock (tree.h) */
        atomic_fetch_add(&t->computed_renders, 1);
        if (size > NAME_MAX && c->ops->name(c->ctx, i, buf, size) == S3_OK && name_ok(buf)) {
            *ino = d->c.first + i;
            *kind = c->ops->populate ? NODE_DIR : NODE_LINK;
            return buf;
        }
        return NULL;
    }
    uint32_t c = d ? tree_child(t, dir, i) : 0;
    const char *name = c ? tree_name(t, c) : NULL;
    if (name) {
        *ino = c;
        *kind = (int)tree_kind(t, c);
    }
    return name;
}

uint64_t tree_computed_renders(struct tree *t)
{
    return atomic_load(&t->computed_renders);
}

uint64_t tree_computed_made(struct tree *t)
{
    return atomic_load(&t->computed_made);
}
