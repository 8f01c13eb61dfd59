/* A set of the names given so far in one directory, for making file names unique in
 * linear time: "is it taken" is one hash probe, and each base name keeps its next suffix,
 * so n names of one base cost O(n) in all.
 * - For names decided before any node exists (paths are made of them); the tree's own
 *   rule still guards every directory.
 * - Errors follow err.h (enum s3_err; no message: the reason says it all).
 * - Counts its name comparisons, so tests can assert the cost is linear. */
#ifndef S3_NAMESET_H
#define S3_NAMESET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parse/base/err.h"

struct nameset_entry {
    char *name;    /* owned; NULL: an empty slot */
    unsigned next; /* as a base: the next N to try for base~N (2 at first) */
};

struct nameset {
    struct nameset_entry *e; /* open addressing, power-of-two capacity, at most half full */
    size_t cap, n;
    uint64_t compared; /* name comparisons made (strcmp on a hash match) */
    uint64_t probes;   /* slots looked at */
};

void nameset_free(struct nameset *s);
bool nameset_has(struct nameset *s, const char *name);
/* Adds a copy of name (nothing when it is there): S3_OK or S3_ERR_NOMEM. */
enum s3_err nameset_add(struct nameset *s, const char *name);
/* The first of base, base~2, base~3, ... that is not in the set, added and written to
 * out, which must have room for base and a suffix (outlen > strlen(base) + 11): S3_OK,
 * S3_ERR_NOMEM, or S3_ERR_LIMIT (no room). The tries for base~N start where the last name of this base
 * ended: every base~M below it is taken (the set only grows). */
enum s3_err nameset_unique(struct nameset *s, const char *base, char *out, size_t outlen);

#endif
