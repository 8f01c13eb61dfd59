/* A growing text buffer.
 * - Out of memory is remembered (oom) and the text taken is NULL: check it once at the end.
 * - A measuring buffer (measure set) keeps no text: only its length grows. */
#ifndef S3_SBUF_H
#define S3_SBUF_H

#include <stddef.h>

struct sbuf {
    char *p;
    size_t len, cap;
    int oom;
    /* A measuring buffer: keeps no text, only its length grows (the exact size of what
     * the same calls would write: an export's size without building it). */
    int measure;
};

void sb_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_put(struct sbuf *b, const void *data, size_t n);
/* Takes the text out (never NULL unless out of memory); the buffer is reset. */
char *sb_take(struct sbuf *b, size_t *len);
void sb_free(struct sbuf *b);

/* Formats a float the way value files show it: %.9g. */
void sb_float(struct sbuf *b, float f);
/* A CSV field: as it is, or quoted (quotes doubled) when it holds a comma, quote or line
 * break. */
void sb_csv_field(struct sbuf *b, const char *s);

#endif
