#include "fs/core/cover.h"

#include <stdlib.h>

void cover_add(struct cover *c, uint64_t off, uint64_t len)
{
    if (len == 0)
        return;
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 32;
        struct range *r = realloc(c->r, cap * sizeof *r);
        if (!r) {
            c->oom = true;
            return;
        }
        c->r = r;
        c->cap = cap;
    }
    c->r[c->n++] = (struct range){off, len};
}

static int by_offset(const void *a, const void *b)
{
    const struct range *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

uint64_t cover_merge(struct cover *c, uint64_t limit)
{
    qsort(c->r, c->n, sizeof *c->r, by_offset);
    size_t out = 0;
    uint64_t total = 0;
    for (size_t i = 0; i < c->n; i++) {
        uint64_t a = c->r[i].off, b = a + c->r[i].len;
        if (b < a || b > limit)
            b = limit;
        if (a >= b)
            continue;
        if (out > 0 && a <= c->r[out - 1].off + c->r[out - 1].len) {
            uint64_t end = c->r[out - 1].off + c->r[out - 1].len;
            if (b > end)
                c->r[out - 1].len = b - c->r[out - 1].off;
            continue;
        }
        c->r[out++] = (struct range){a, b - a};
    }
    c->n = out;
    for (size_t i = 0; i < out; i++)
        total += c->r[i].len;
    return total;
}

size_t cover_gaps(const struct cover *c, uint64_t limit, struct range **out)
{
    struct range *g = malloc((c->n + 1) * sizeof *g);
    size_t n = 0;
    uint64_t pos = 0;
    if (!g) {
        *out = NULL;
        return 0;
    }
    for (size_t i = 0; i < c->n; i++) {
        if (c->r[i].off > pos)
            g[n++] = (struct range){pos, c->r[i].off - pos};
        pos = c->r[i].off + c->r[i].len;
    }
    if (pos < limit)
        g[n++] = (struct range){pos, limit - pos};
    *out = g;
    return n;
}

void cover_free(struct cover *c)
{
    free(c->r);
    c->r = NULL;
    c->n = c->cap = 0;
    c->oom = false;
}
