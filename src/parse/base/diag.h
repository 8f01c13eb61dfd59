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

/* Where the list stands: what a listing that fails rolls back to, so that the listing
 * tried again adds its warnings once (the tree marks its view's diag when a populate
 * starts, tree_set_source_diag). */
struct diag_mark {
    size_t n, dropped;
};
struct diag_mark diag_mark(const struct diag *d); /* d NULL: an empty mark */
/* Drops what was added since m (kept warnings freed, the dropped count as it was). No
 * allocation: a rollback cannot fail. d NULL, or m not behind d: nothing. */
void diag_rollback(struct diag *d, struct diag_mark m);
/* Keeps what was added since `inner` (a listing that succeeded inside one still running)
 * when the diag later rolls back to `outer` (outer <= inner): those warnings are moved
 * before everything added since outer, and outer is moved past them. Their listing is
 * published and not made again, so its warnings must survive its caller's failure. */
void diag_keep(struct diag *d, struct diag_mark *outer, struct diag_mark inner);

#endif
