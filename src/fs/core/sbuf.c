#include "fs/core/sbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int sb_reserve(struct sbuf *b, size_t more)
{
    if (b->oom)
        return -1;
    if (b->len + more + 1 <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + more + 1)
        cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
        b->oom = 1;
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

void sb_put(struct sbuf *b, const void *data, size_t n)
{
    if (b->measure) {
        b->len += n;
        return;
    }
    if (sb_reserve(b, n))
        return;
    memcpy(b->p + b->len, data, n);
    b->len += n;
    b->p[b->len] = 0;
}

void sb_printf(struct sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n >= 0 && b->measure)
        b->len += (size_t)n;
    if (n < 0 || b->measure || sb_reserve(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void sb_float(struct sbuf *b, float f)
{
    sb_printf(b, "%.9g\n", (double)f);
}

void sb_csv_field(struct sbuf *b, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        sb_put(b, s, strlen(s));
        return;
    }
    sb_put(b, "\"", 1);
    for (; *s; s++) {
        if (*s == '"')
            sb_put(b, "\"", 1);
        sb_put(b, s, 1);
    }
    sb_put(b, "\"", 1);
}

char *sb_take(struct sbuf *b, size_t *len)
{
    if (b->oom) {
        sb_free(b);
        *len = 0;
        return NULL;
    }
    if (!b->p && sb_reserve(b, 0))
        return NULL;
    char *p = b->p;
    *len = b->len;
    b->p = NULL;
    b->len = b->cap = 0;
    return p;
}

void sb_free(struct sbuf *b)
{
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
    b->oom = 0;
}
