/* The tree (tree.h): Walking the whole tree and the counters /info and tests read. */
#include "fs/core/tree_impl.h"
#include "fs/core/sbuf.h"

#include <inttypes.h>

enum s3_err tree_populate_all(struct tree *t)
{
    enum s3_err first = S3_OK;
    for (uint64_t ino = 1; ino <= tree_node_count(t); ino++) { /* the count grows as directories fill */
        struct dirinfo *d = dir_at(t, (uint32_t)ino);
        if (!d)
            continue;
        enum s3_err rc = published(d) ? S3_OK : tree_populate(t, (uint32_t)ino);
        if (rc && !first)
            first = rc;
        /* a computed directory of directories (/conflicts): its entries made, so the loop
         * reaches them (their numbers are above it); one of links has nothing to parse.
         * An entry that cannot be made gives its reason and the others are made still. */
        if (rc == S3_OK && is_computed(d) && d->comp->ops->populate)
            for (uint32_t i = 0, c; i < d->n; i++) {
                enum s3_err made = computed_child(t, (uint32_t)ino, d, i, &c);
                if (made && !first)
                    first = made;
            }
    }
    return first;
}

void tree_progress(struct tree *t, uint32_t src_id, uint64_t *done, uint64_t *total)
{
    struct src_slot *s = tree_source(t, src_id) ? slot_src(t, src_id) : NULL;
    *done = s ? s->done : 0;
    *total = s ? s->dirs : 0;
}

size_t tree_warnings(struct tree *t, struct sbuf *out)
{
    size_t n = 0;
    if (t->refused) {
        sb_printf(out,
                  "warning: node limit reached (max_nodes=%" PRIu64 "): %" PRIu64
                  " nodes refused, so some directories are incomplete\n",
                  t->limits.max_nodes, t->refused);
        n++;
    }
    if (t->failed_listings) {
        sb_printf(out,
                  "warning: out of memory: %" PRIu64 " %s failed (ENOMEM; a failed directory is "
                  "listed afresh at its next use)\n",
                  t->failed_listings, t->failed_listings == 1 ? "listing" : "listings");
        n++;
    }
    return n;
}

size_t tree_view_warnings(struct tree *t, uint32_t src_id, struct sbuf *out)
{
    size_t n = tree_warnings(t, out);
    struct src_slot *s = tree_source(t, src_id) ? slot_src(t, src_id) : NULL;
    if (s && s->renamed) {
        sb_printf(out,
                  "warning: %" PRIu64 " %s a name already used in %s directory, so %s NAME~N "
                  "(the first: %s)\n",
                  s->renamed, s->renamed == 1 ? "node had" : "nodes had", s->renamed == 1 ? "its" : "their",
                  s->renamed == 1 ? "it is shown as" : "they are shown as",
                  s->renamed_first ? s->renamed_first : "?");
        n++;
    }
    return n;
}


uint64_t tree_node_count(struct tree *t)
{
    return atomic_load_explicit(&t->nnodes, memory_order_acquire);
}

bool tree_full(struct tree *t)
{
    pthread_mutex_lock(&t->lock);
    bool full = t->full;
    pthread_mutex_unlock(&t->lock);
    return full;
}

/* One of the tree's counters: growth updates them under the tree lock, so a reader on
 * another thread takes it too (one reader for all three: a new counter is read alike). */
static uint64_t locked_count(struct tree *t, const uint64_t *counter)
{
    pthread_mutex_lock(&t->lock);
    uint64_t n = *counter;
    pthread_mutex_unlock(&t->lock);
    return n;
}

uint64_t tree_text_bytes(struct tree *t)
{
    return locked_count(t, &t->text_bytes);
}

uint64_t tree_alloc_bytes(struct tree *t)
{
    return locked_count(t, &t->alloc_bytes);
}

uint64_t tree_name_probes(struct tree *t)
{
    return locked_count(t, &t->probes);
}

uint64_t tree_version(struct tree *t)
{
    return atomic_load(&t->version);
}

void tree_touch(struct tree *t)
{
    atomic_fetch_add(&t->version, 1);
}
