/* The tree (tree.h): Directories: adding a child, populating, publishing (lock-free reads from then on),
 * rolling a failed populate back, and looking children up. */
#include "fs/core/tree_impl.h"

#include <stdlib.h>
#include <string.h>

/* ---- publishing ---- */

/* Room for one more u32 in a growing array of n (its capacity doubles, from 64). */
static enum s3_err reserve_u32(struct alloc_meter *m, uint32_t **v, size_t n, size_t *cap)
{
    if (n == *cap) {
        size_t c = *cap ? *cap * 2 : 64;
        uint32_t *p = m ? meter_realloc(m, *v, c * sizeof *p) : realloc(*v, c * sizeof *p);
        if (!p)
            return S3_ERR_NOMEM;
        *v = p;
        *cap = c;
    }
    return S3_OK;
}

static enum s3_err push_u32(struct alloc_meter *m, uint32_t **v, size_t *n, size_t *cap, uint32_t x)
{
    if (reserve_u32(m, v, *n, cap))
        return S3_ERR_NOMEM;
    (*v)[(*n)++] = x;
    return S3_OK;
}

/* Room for one more pending directory. */
enum s3_err pending_reserve(struct tree *t)
{
    return reserve_u32(&t->strings.meter, &t->pending, t->npending, &t->cappending);
}

static enum s3_err push_pending(struct tree *t, uint32_t dir)
{
    return push_u32(&t->strings.meter, &t->pending, &t->npending, &t->cappending, dir);
}


static int by_name(const void *a, const void *b, void *tp)
{
    struct tree *t = tp;
    return strcmp(slot_of(t, *(const uint32_t *)a)->name, slot_of(t, *(const uint32_t *)b)->name);
}


/* Builds the final child list, name index and counts of a directory and publishes it:
 * from here on it is read without the lock. */
static enum s3_err publish(struct tree *t, struct dirinfo *d)
{
    if (is_computed(d)) { /* its entries are made on use (tree_computed.c) */
        atomic_store_explicit(&d->state, DIR_PUBLISHED, memory_order_release);
        return S3_OK;
    }
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
            return S3_ERR_NOMEM;
        memcpy(child, c, n * sizeof *child);
    }
    if (!in_order) {
        sorted = arena_alloc(&t->strings, n * sizeof *sorted, sizeof *sorted);
        if (!sorted)
            return S3_ERR_NOMEM;
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
    return S3_OK;
}

/* Publishes the directories opened since pending mark (the ones a populate made and
 * filled, or grafted), newest first, so that each is published before its parent.
 * S3_OK, or NOMEM: the one that failed stays OPEN (published when first read), the
 * populate that made it fails (a refused allocation always fails its listing). */
static enum s3_err publish_pending(struct tree *t, size_t mark)
{
    while (t->npending > mark) {
        uint32_t dir = t->pending[--t->npending];
        struct dirinfo *d = dir_at(t, dir);
        if (d && atomic_load_explicit(&d->state, memory_order_relaxed) == DIR_OPEN && publish(t, d))
            return S3_ERR_NOMEM;
    }
    return S3_OK;
}


/* Marks node ino and everything below it dead: no accessor finds them, the progress
 * counts forget their directories, builders are freed. Iterative (explicit stack). */
static void discard(struct tree *t, uint32_t ino)
{
    uint32_t *stack = NULL;
    size_t top = 0, cap = 0;
    if (push_u32(NULL, &stack, &top, &cap, ino)) /* unmetered: a rollback, not growth */
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
        if (is_computed(c)) { /* only the entries made have nodes */
            for (uint32_t i = 0; i < c->n; i++)
                if (computed_is_made(c, i) && push_u32(NULL, &stack, &top, &cap, c->c.first + i))
                    break;
            continue;
        }
        struct dirbuild *b = pub ? NULL : c->c.build;
        uint32_t nc = pub ? c->n : b ? b->n : 0;
        for (uint32_t i = 0; i < nc; i++)
            if (push_u32(NULL, &stack, &top, &cap, pub ? published_child(c, i) : b->child[i]))
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
    /* directories opened since: dead ones are gone; others (grafted elsewhere) stay */
    size_t keep = mark;
    for (size_t i = mark; i < t->npending; i++) {
        struct dirinfo *p = dir_at(t, t->pending[i]);
        if (p && atomic_load_explicit(&p->state, memory_order_relaxed) == DIR_OPEN)
            t->pending[keep++] = t->pending[i];
    }
    t->npending = keep;
}


/* The builder of a directory that gets a child now; NULL for a published one (it takes
 * no child: tree.h). */
static struct dirbuild *builder_of(struct tree *t, uint32_t dir, struct dirinfo *d)
{
    (void)dir;
    if (atomic_load_explicit(&d->state, memory_order_relaxed) == DIR_PUBLISHED || is_computed(d))
        return NULL; /* published: lock-free readers hold its arrays (tree.h); computed: no children added */
    if (!d->c.build)
        d->c.build = meter_calloc(&t->strings.meter, 1, sizeof *d->c.build);
    return d->c.build;
}

/* A new node named name in parent (0: the root), its name made unique there; the
 * caller fills its payload. NULL when it cannot be made. Runs under the lock. */
struct node *add_node_locked(struct tree *t, uint32_t parent, const char *name, uint8_t type,
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
    atomic_fetch_add(&t->version, 1);
    return n;
}

/* The source id children of `parent` inherit (0 at the root). */
uint32_t inherited_src(struct tree *t, uint32_t parent)
{
    struct dirinfo *p = parent ? dir_at(t, parent) : NULL;
    return p ? p->src_id : 0;
}


enum s3_err tree_graft(struct tree *t, uint32_t dir, uint32_t src_id, const char *xtype, populate_fn fn, void *ctx,
               uint64_t arg)
{
    struct node *n = node_at(t, dir);
    if (!n)
        return S3_ERR_NOT_FOUND;
    if (n->type != NODE_DIR)
        return S3_ERR_NOT_DIR;
    if (!tree_source(t, src_id))
        return S3_ERR_INVALID;
    pthread_mutex_lock(&t->lock);
    struct dirinfo *d = n->u.dir.info;
    enum s3_err rc = S3_OK;
    uint8_t st = atomic_load_explicit(&d->state, memory_order_relaxed);
    if (st == DIR_PUBLISHED) /* lock-free readers hold its arrays (tree.h) */
        rc = S3_ERR_BUSY;
    if (rc == S3_OK) {
        d->populate = fn;
        d->ctx = ctx;
        d->arg = arg;
        d->src_id = (uint16_t)src_id;
        if (fn)
            atomic_store_explicit(&d->state, DIR_UNPOPULATED, memory_order_relaxed);
        else if (st != DIR_PUBLISHED && st != DIR_OPEN && !(rc = push_pending(t, dir)))
            atomic_store_explicit(&d->state, DIR_OPEN, memory_order_relaxed);
        slot_src(t, src_id)->dirs += fn != NULL; /* now a directory of the nested view */
        if (xtype)
            n->xtype = type_id(t, xtype);
    }
    pthread_mutex_unlock(&t->lock);
    return rc;
}

/* ---- populating ---- */



/* A populate failed and d is not published: everything it added goes, and d gets back the
 * callback it had (a nested view grafted by the failed callback is dropped: the next use
 * runs the original callback afresh, which opens it again). */
static void undo_populate(struct tree *t, struct dirinfo *d, const struct dirinfo *before, uint32_t n0, size_t mark)
{
    computed_undo(d); /* made computed by the failed callback: an ordinary directory again */
    rollback(t, d, n0, mark);
    d->populate = before->populate;
    d->ctx = before->ctx;
    d->arg = before->arg;
    d->src_id = before->src_id;
    atomic_store_explicit(&d->state, DIR_UNPOPULATED, memory_order_relaxed);
}

/* Whether dir is anc or lies below it. */
static bool is_within(struct tree *t, uint32_t dir, uint32_t anc)
{
    for (struct node *n = node_at(t, dir); n; n = node_at(t, n->parent)) {
        if (dir == anc)
            return true;
        if (n->parent == dir) /* the root is its own parent */
            return false;
        dir = n->parent;
    }
    return false;
}

/* A populate that ran inside others succeeded: its listing is published and is not made
 * again unless one it runs inside fails and takes it away (its directory lies within
 * that one's). So its warnings survive a failure of each enclosing populate warning
 * into the same list up to the first whose directory holds it: they are moved before
 * the outermost such one's mark (diag_keep; the marks in between move past them). A
 * populate further out that fails takes them back with the one that holds it, whose own
 * success moves them on in turn. */
static void keep_warnings(struct tree *t, const struct populate_frame *f)
{
    struct diag *d = f->diag;
    if (!d || (d->n == f->mark.n && d->dropped == f->mark.dropped))
        return;
    struct populate_frame *target = NULL;
    for (struct populate_frame *p = f->up; p && !is_within(t, f->dir, p->dir); p = p->up)
        if (p->diag == d)
            target = p;
    if (!target)
        return;
    size_t kept = d->n - f->mark.n, dropped = d->dropped - f->mark.dropped;
    for (struct populate_frame *p = f->up; p != target; p = p->up)
        if (p->diag == d) {
            p->mark.n += kept;
            p->mark.dropped += dropped;
        }
    diag_keep(d, &target->mark, f->mark);
}

/* A populate failed and its listing goes: what views counted for it (and for nested
 * listings that went with it) is given back, newest first; records of nested listings
 * kept elsewhere stay. The outermost populate leaves no records. */
static void undo_run(struct tree *t, const struct populate_frame *f)
{
    for (size_t i = t->nundo; i-- > f->undo_mark;)
        if (t->undo[i].owner == f)
            t->undo[i].fn(t->undo[i].ctx, t->undo[i].amount);
    size_t keep = f->undo_mark;
    for (size_t i = f->undo_mark; i < t->nundo; i++)
        if (t->undo[i].owner != f)
            t->undo[keep++] = t->undo[i];
    t->nundo = f->up ? keep : 0;
}

/* A populate's listing stays: its records go to the first enclosing populate whose
 * directory holds its directory (that one's failure takes the listing away too), or are
 * kept for good (owner NULL) when none does. As keep_warnings. */
static void undo_keep(struct tree *t, const struct populate_frame *f)
{
    const struct populate_frame *holder = f->up;
    while (holder && !is_within(t, f->dir, holder->dir))
        holder = holder->up;
    for (size_t i = f->undo_mark; i < t->nundo; i++)
        if (t->undo[i].owner == f)
            t->undo[i].owner = holder;
    if (!f->up)
        t->nundo = 0;
}

static enum s3_err populate_locked(struct tree *t, uint32_t dir, struct dirinfo *d)
{
    uint8_t st = atomic_load_explicit(&d->state, memory_order_relaxed);
    if (st == DIR_PUBLISHED || st == DIR_BUSY) /* BUSY: its own callback looks at it */
        return S3_OK;
    if (st == DIR_OPEN)
        return publish(t, d);
    size_t mark = t->npending;
    uint32_t n0 = d->c.build ? d->c.build->n : 0;
    struct dirinfo before = {.populate = d->populate, .ctx = d->ctx, .arg = d->arg, .src_id = d->src_id};
    uint32_t sid = d->src_id; /* before the callback: a nested view's graft changes it */
    atomic_store_explicit(&d->state, DIR_BUSY, memory_order_relaxed);
    /* Failures are counted from the outermost populate on: what its callback did before
     * calling this one (opening a nested view) shapes what this one lists. */
    if (t->populate_depth++ == 0) {
        t->failures_outer = t->strings.meter.failures;
        t->refusals_outer = cache_thread_refusals();
        t->noted = S3_OK;
    }
    struct source *held = populate_hold(t, sid);
    struct populate_frame frame = {dir, slot_src(t, sid)->diag, diag_mark(slot_src(t, sid)->diag), t->nundo,
                                   t->frame};
    t->frame = &frame;
    enum s3_err rc = d->populate(t, dir, d->ctx, d->arg);
    t->frame = frame.up;
    populate_release(held);
    t->populate_depth--;
    st = atomic_load_explicit(&d->state, memory_order_relaxed);
    /* An allocation failed while it ran (a tree_add_* returned 0, a nested populate
     * failed): whatever the callback returned, its listing may be short, so it fails. */
    if (rc == 0 && (t->strings.meter.failures != t->failures_outer || cache_thread_refusals() != t->refusals_outer))
        rc = S3_ERR_NOMEM; /* ... or the cache refused it bytes (cache_mb is taken by others) */
    if (rc == 0 && t->noted) /* a reason a callee could only note (tree_note_failure) */
        rc = t->noted;
    if (rc == 0)
        rc = publish_pending(t, mark);
    if (rc) {
        /* Published by a nested populate that succeeded (nothing had failed yet): its
         * listing is whole and lock-free readers may hold it, so it stays; the request
         * still fails. */
        if (st != DIR_PUBLISHED) {
            undo_populate(t, d, &before, n0, mark);
            diag_rollback(frame.diag, frame.mark); /* the retry warns again */
            undo_run(t, &frame);                   /* ... and counts again */
        } else {
            keep_warnings(t, &frame);
            undo_keep(t, &frame);
        }
        return rc;
    }
    keep_warnings(t, &frame);
    undo_keep(t, &frame);
    slot_src(t, sid)->done++;
    if (st == DIR_BUSY || st == DIR_OPEN) {
        atomic_store_explicit(&d->state, DIR_OPEN, memory_order_relaxed); /* if out of memory: next read */
        return publish(t, d);
    }
    return S3_OK; /* published by a nested populate, or grafted to be populated next */
}

enum s3_err tree_populate(struct tree *t, uint32_t dir)
{
    struct node *n = node_at(t, dir);
    if (!n)
        return S3_ERR_NOT_FOUND;
    if (n->type != NODE_DIR)
        return S3_ERR_NOT_DIR;
    if (published(n->u.dir.info)) /* the common case: no lock */
        return S3_OK;
    pthread_mutex_lock(&t->lock);
    enum s3_err rc = populate_locked(t, dir, n->u.dir.info);
    if (rc == S3_ERR_NOMEM)
        t->failed_listings++;
    atomic_fetch_add(&t->version, 1); /* what it parsed, warned, failed */
    pthread_mutex_unlock(&t->lock);
    return rc;
}


/* ---- reading directories ---- */

/* Binary search of a published directory. */
static enum s3_err lookup_published(struct tree *t, const struct dirinfo *d, const char *name, uint32_t *out)
{
    size_t lo = 0, hi = d->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        uint32_t c = d->sorted ? d->sorted[mid] : published_child(d, (uint32_t)mid);
        int cmp = strcmp(name, slot_of(t, c)->name);
        if (cmp == 0) {
            *out = c;
            return S3_OK;
        }
        if (cmp < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return S3_ERR_NOT_FOUND;
}

enum s3_err tree_lookup(struct tree *t, uint32_t dir, const char *name, uint32_t *out)
{
    struct node *n = node_at(t, dir);
    if (!n)
        return S3_ERR_NOT_FOUND;
    if (n->type != NODE_DIR)
        return S3_ERR_NOT_DIR;
    struct dirinfo *d = n->u.dir.info;
    if (published(d)) /* the common case: no lock */
        return is_computed(d) ? computed_lookup(t, dir, d, name, out) : lookup_published(t, d, name, out);
    enum s3_err rc = tree_populate(t, dir);
    if (rc)
        return rc;
    if (published(d))
        return is_computed(d) ? computed_lookup(t, dir, d, name, out) : lookup_published(t, d, name, out);
    /* still being filled: its own callback (this thread holds the lock) looks at it */
    pthread_mutex_lock(&t->lock);
    if (is_computed(d)) {
        rc = computed_lookup(t, dir, d, name, out);
    } else if (published(d)) {
        rc = lookup_published(t, d, name, out);
    } else {
        uint32_t c = build_find(t, d->c.build, name);
        rc = c ? S3_OK : S3_ERR_NOT_FOUND;
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
    uint32_t n = published(d) || is_computed(d) ? d->n : d->c.build ? d->c.build->n : 0;
    pthread_mutex_unlock(&t->lock);
    return n;
}

uint32_t tree_child(struct tree *t, uint32_t dir, uint32_t i)
{
    struct dirinfo *d = dir_at(t, dir);
    if (!d)
        return 0;
    uint32_t c = 0;
    if (published(d) && is_computed(d)) /* made when reached: 0 when it cannot be */
        return computed_child(t, dir, d, i, &c) == S3_OK ? c : 0;
    if (published(d))
        return i < d->n ? published_child(d, i) : 0;
    pthread_mutex_lock(&t->lock);
    if (is_computed(d)) {
        enum s3_err rc = computed_child(t, dir, d, i, &c);
        pthread_mutex_unlock(&t->lock);
        return rc == S3_OK ? c : 0;
    }
    if (published(d))
        c = i < d->n ? published_child(d, i) : 0;
    else if (d->c.build && i < d->c.build->n)
        c = d->c.build->child[i];
    pthread_mutex_unlock(&t->lock);
    return c;
}

enum s3_err tree_resolve(struct tree *t, const char *path, uint32_t *out)
{
    uint32_t cur = TREE_ROOT;
    char *copy = strdup(path), *save = NULL;
    if (!copy)
        return S3_ERR_NOMEM;
    enum s3_err rc = node_at(t, cur) ? S3_OK : S3_ERR_NOT_FOUND;
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

