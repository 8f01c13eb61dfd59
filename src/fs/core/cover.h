/* Which bytes of the mounted file named structures cover; the rest is /unparsed. */
#ifndef S3_COVER_H
#define S3_COVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct range {
    uint64_t off, len;
};

struct cover {
    struct range *r;
    size_t n, cap;
    bool oom; /* a range could not be added: /unparsed would be wrong (the open fails) */
};

/* Adds a range; out of memory sets c->oom (view_root then fails the open with NOMEM). */
void cover_add(struct cover *c, uint64_t off, uint64_t len);
/* Merges the ranges (clipped to [0, limit)); returns the covered byte count. */
uint64_t cover_merge(struct cover *c, uint64_t limit);
/* After cover_merge: the gaps in [0, limit). *out is malloc'd. */
size_t cover_gaps(const struct cover *c, uint64_t limit, struct range **out);
void cover_free(struct cover *c);

#endif
