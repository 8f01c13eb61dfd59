#include "parse/base/diag.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void diag_add(struct diag *d, const char *fmt, ...)
{
    if (!d)
        return;
    if (d->n >= DIAG_MAX) {
        d->dropped++;
        return;
    }
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 16;
        char **m = realloc(d->msg, cap * sizeof *m);
        if (!m) {
            d->dropped++;
            return;
        }
        d->msg = m;
        d->cap = cap;
    }
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    int rc = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (rc < 0) {
        d->dropped++;
        return;
    }
    d->msg[d->n++] = s;
}

void diag_free(struct diag *d)
{
    for (size_t i = 0; i < d->n; i++)
        free(d->msg[i]);
    free(d->msg);
    d->msg = NULL;
    d->n = d->cap = d->dropped = 0;
}
