/* Warnings collected while parsing: one line each, shown in /info. Bounded, so a
 * hostile file cannot make the list grow without limit. */
#ifndef S3_DIAG_H
#define S3_DIAG_H

#include <stddef.h>

#include "parse/base/err.h"

#define DIAG_MAX 4096

struct diag {
    char **msg;
    size_t n, cap;
    size_t dropped; /* warnings not kept: beyond DIAG_MAX, or refused memory */
};

/* Adds a warning (d NULL: none kept). S3_OK, also past DIAG_MAX (the bound: counted in
 * dropped, not kept, by design); NOMEM when memory for it is refused (counted in dropped
 * too): the caller fails with it, or, where a warning is best-effort, says so where it
 * ignores it (/info then still says warnings are missing). */
enum s3_err diag_add(struct diag *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void diag_free(struct diag *d);

#endif
