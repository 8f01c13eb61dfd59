#include "parse/base/diag.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* The message formatted into malloc'd memory (vsnprintf twice, not vasprintf: the
 * allocation is ours, so a refused one is seen, and tests can refuse it). NULL when
 * memory is refused or the format fails. */
static char *format(const char *fmt, va_list ap)
{
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    char *s = n < 0 ? NULL : malloc((size_t)n + 1);
    if (s)
        vsnprintf(s, (size_t)n + 1, fmt, again);
    va_end(again);
    return s;
}

enum s3_err diag_add(struct diag *d, const char *fmt, ...)
{
    if (!d)
        return S3_OK;
    if (d->n >= DIAG_MAX) { /* the bound: counted, by design not kept */
        d->dropped++;
        return S3_OK;
    }
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 16;
        char **m = realloc(d->msg, cap * sizeof *m);
        if (!m) {
            d->dropped++;
            return S3_ERR_NOMEM;
        }
        d->msg = m;
        d->cap = cap;
    }
    va_list ap;
    va_start(ap, fmt);
    char *s = format(fmt, ap);
    va_end(ap);
    if (!s) {
        d->dropped++;
        return S3_ERR_NOMEM;
    }
    d->msg[d->n++] = s;
    return S3_OK;
}

void diag_free(struct diag *d)
{
    for (size_t i = 0; i < d->n; i++)
        free(d->msg[i]);
    free(d->msg);
    d->msg = NULL;
    d->n = d->cap = d->dropped = 0;
}

struct diag_mark diag_mark(const struct diag *d)
{
    return d ? (struct diag_mark){d->n, d->dropped} : (struct diag_mark){0, 0};
}

void diag_rollback(struct diag *d, struct diag_mark m)
{
    if (!d || m.n > d->n || m.dropped > d->dropped)
        return;
    for (size_t i = m.n; i < d->n; i++)
        free(d->msg[i]);
    d->n = m.n;
    d->dropped = m.dropped;
}

/* Reverses msg[a, b) in place. */
static void reverse(char **msg, size_t a, size_t b)
{
    while (a + 1 < b) {
        char *x = msg[a];
        msg[a++] = msg[--b];
        msg[b] = x;
    }
}

void diag_keep(struct diag *d, struct diag_mark *outer, struct diag_mark inner)
{
    if (!d || outer->n > inner.n || inner.n > d->n || outer->dropped > inner.dropped || inner.dropped > d->dropped)
        return;
    size_t kept = d->n - inner.n;
    if (kept && inner.n > outer->n) { /* rotate [outer, n) so the kept ones come first */
        reverse(d->msg, outer->n, inner.n);
        reverse(d->msg, inner.n, d->n);
        reverse(d->msg, outer->n, d->n);
    }
    outer->n += kept;
    outer->dropped += d->dropped - inner.dropped;
}
