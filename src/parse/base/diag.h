/* Warnings collected while parsing: one line each, shown in /info. Bounded, so a
 * hostile file cannot make the list grow without limit. */
#ifndef S3_DIAG_H
#define S3_DIAG_H

#include <stddef.h>

#define DIAG_MAX 4096

struct diag {
    char **msg;
    size_t n, cap;
    size_t dropped; /* warnings beyond DIAG_MAX, counted but not kept */
};

void diag_add(struct diag *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void diag_free(struct diag *d);

#endif
