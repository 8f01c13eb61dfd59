/* A request (a listing of the object tree, a table read, an export build) pins a section
 * when the decoder first needs its bytes, and keeps it until the request ends, unless the
 * decoder reaches a settle point without having used it since: then it may be let go to
 * make room for another. The sections a request holds stay within the bound; a section
 * that cannot fit beside those in use is refused: the decoder sees why, and what lies in
 * it is an .error file.
 *
 * Sections used in turn that do not fit together are let go and fetched again, each time
 * expanded again once the cache dropped them: a request may fetch again at most as many
 * bytes as all sections expand to, so its work stays linear in the file's expanded size
 * whatever the order its objects lie in (a crafted file alternating hundreds of times
 * between two big sections expanded one of them at every switch). */
#include "parse/gr2/gr2broker.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WHY_LEN 200

struct gr2_pins {
    const struct gr2_broker_ops *ops;
    void *ctx;
    uint32_t nsections;
    struct gr2_lazy lazy;
    uint32_t *pinned; /* sections pinned now (npinned of them) */
    uint32_t npinned;
    uint64_t bytes, bound;
    char **refused;   /* per section: the reason given when refused (owned) */
    uint8_t *fetched; /* per section: fetched before in this request */
    uint64_t refetched, refetch_budget;
};

static void unpin_one(struct gr2_pins *p, const struct gr2_space *sp, uint32_t k)
{
    uint32_t sec = p->pinned[k];
    p->ops->unpin(p->ctx, sec);
    p->bytes -= sp->size[sec];
    sp->data[sec] = NULL; /* fetched again if used again */
    p->pinned[k] = p->pinned[--p->npinned];
}

/* Lets go of every pinned section not used since the last settle point. */
static void let_go_idle(struct gr2_pins *p, const struct gr2_space *sp)
{
    for (uint32_t k = 0; k < p->npinned;) {
        if (p->lazy.state[p->pinned[k]] == GR2_SEC_USED)
            k++;
        else
            unpin_one(p, sp, k);
    }
}

/* Eager mode: every settle point lets go of the sections not used since the last one and
 * forgets their bytes, so that a pointer kept into section bytes across a settle point
 * reads freed memory (ASan reports it). */
static void settled_eagerly(const struct gr2_space *sp)
{
    struct gr2_pins *p = sp->lazy->ctx;
    for (uint32_t k = 0; k < p->npinned;) {
        uint32_t sec = p->pinned[k];
        if (p->lazy.state[sec] == GR2_SEC_USED) {
            k++;
            continue;
        }
        unpin_one(p, sp, k);
        p->ops->forget(p->ctx, sec);
    }
}

/* Section sec cannot be had in this request: why (copied), and the reason a read of it
 * gets. A copy refused fails it as out of memory (the request's listing fails, and the
 * next one tries again), never with another message. */
static void unavailable(struct gr2_pins *p, const struct gr2_space *sp, uint32_t sec, enum s3_err reason,
                        const char *msg)
{
    p->refused[sec] = strdup(msg);
    sp->why[sec] = p->refused[sec] ? p->refused[sec] : "out of memory";
    sp->reason[sec] = p->refused[sec] ? reason : S3_ERR_NOMEM;
}

static void refuse_why(struct gr2_pins *p, const struct gr2_space *sp, uint32_t sec, const char *msg)
{
    unavailable(p, sp, sec, S3_ERR_IO, msg);
    p->ops->refused(p->ctx, sec);
}

static void refuse(struct gr2_pins *p, const struct gr2_space *sp, uint32_t sec)
{
    char msg[WHY_LEN];
    snprintf(msg, sizeof msg,
             "section %" PRIu32 ": its %zu expanded bytes, with the %" PRIu64
             " of the sections this request uses, pass the cache_mb bound (%" PRIu64 " bytes)",
             sec, sp->size[sec], p->bytes, p->bound);
    refuse_why(p, sp, sec, msg);
}

/* A section fetched again past the request's budget. */
static void refuse_again(struct gr2_pins *p, const struct gr2_space *sp, uint32_t sec)
{
    char msg[WHY_LEN];
    snprintf(msg, sizeof msg,
             "section %" PRIu32 ": used in turn with sections that do not fit beside it in the cache_mb bound (%" PRIu64
             " bytes), this request expanded again %" PRIu64 " bytes, as many as the whole file expands to",
             sec, p->bound, p->refetched);
    refuse_why(p, sp, sec, msg);
}

static void fetch_section(const struct gr2_space *sp, uint32_t sec)
{
    struct gr2_pins *p = sp->lazy->ctx;
    const char *veto = p->ops->veto ? p->ops->veto(p->ctx, sec) : NULL;
    if (veto) {
        refuse_why(p, sp, sec, veto);
        return;
    }
    if (p->bytes + sp->size[sec] > p->bound)
        let_go_idle(p, sp);
    if (p->bytes + sp->size[sec] > p->bound) {
        refuse(p, sp, sec);
        return;
    }
    if (p->fetched[sec] && !p->lazy.settled) { /* (eager mode drops everything) */
        if (p->refetched + sp->size[sec] > p->refetch_budget) {
            refuse_again(p, sp, sec);
            return;
        }
        p->refetched += sp->size[sec];
    }
    p->fetched[sec] = 1;
    char why[WHY_LEN] = "section bytes unavailable";
    size_t size;
    enum s3_err reason = S3_ERR_IO;
    const uint8_t *d = p->ops->pin(p->ctx, sec, &size, &reason, why, sizeof why);
    if (!d) {
        /* out of memory fails the reader's request; any other reason (bad compressed
         * bytes, the file changed, the cache's bound) reads as bytes not had (IO) */
        unavailable(p, sp, sec, reason == S3_ERR_NOMEM ? S3_ERR_NOMEM : S3_ERR_IO, why);
        return;
    }
    sp->data[sec] = d;
    p->pinned[p->npinned++] = sec;
    p->bytes += sp->size[sec];
}

enum s3_err gr2_broker_open(struct gr2_space *sp, const struct gr2_file *g, uint64_t bound, bool eager,
                            const struct gr2_broker_ops *ops, void *ctx)
{
    uint32_t n = g->nsections;
    memset(sp, 0, sizeof *sp);
    struct gr2_pins *p = calloc(1, sizeof *p);
    if (!p)
        return S3_ERR_NOMEM;
    sp->g = g;
    sp->lazy = &p->lazy;
    p->ops = ops;
    p->ctx = ctx;
    p->nsections = n;
    p->bound = bound;
    p->lazy.ctx = p;
    p->lazy.fetch = fetch_section;
    p->lazy.settled = eager ? settled_eagerly : NULL;
    sp->data = alloc_array(n, sizeof *sp->data);
    sp->size = alloc_array(n, sizeof *sp->size);
    sp->why = alloc_array(n, sizeof *sp->why);
    sp->reason = alloc_array(n, sizeof *sp->reason);
    p->lazy.state = alloc_array(n, 1);
    p->lazy.used = alloc_array(n, sizeof *p->lazy.used);
    p->pinned = alloc_array(n, sizeof *p->pinned);
    p->refused = alloc_array(n, sizeof *p->refused);
    p->fetched = alloc_array(n, 1);
    if (!sp->data || !sp->size || !sp->why || !sp->reason || !p->lazy.state || !p->lazy.used || !p->pinned || !p->refused ||
        !p->fetched)
        return S3_ERR_NOMEM;
    return S3_OK;
}

void gr2_broker_set_size(struct gr2_space *sp, uint32_t sec, size_t size)
{
    struct gr2_pins *p = sp->lazy->ctx;
    sp->size[sec] = size;
    p->refetch_budget += size;
}

void gr2_broker_close(struct gr2_space *sp)
{
    struct gr2_pins *p = sp->lazy ? sp->lazy->ctx : NULL;
    if (p) {
        while (p->pinned && p->npinned)
            unpin_one(p, sp, p->npinned - 1);
        for (uint32_t i = 0; p->refused && i < p->nsections; i++)
            free(p->refused[i]);
        free(p->refused);
        free(p->fetched);
        free(p->pinned);
        free(p->lazy.state);
        free(p->lazy.used);
        free(p);
    }
    free(sp->data);
    free(sp->size);
    free(sp->why);
    free(sp->reason);
    memset(sp, 0, sizeof *sp);
}
