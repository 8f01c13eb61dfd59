/* Skeletons a mesh can be bound to, each with its bones' name hashes (FNV-1 32 of the
 * lower-cased name), so a bone of any rig matches by name.
 * - Errors follow err.h: enum s3_err, the detail in the caller's buffer.
 * - Lookups sort once and search by halves: linear-logarithmic by construction. */
#ifndef S3_RIGSET_H
#define S3_RIGSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parse/base/err.h"
#include "parse/base/model.h"

/* FNV-1 32 of the lower-cased bytes (start 0x811C9DC5; per byte multiply by 0x01000193,
 * then xor): the bone-name hash the rigs are searched by. */
uint32_t fnv1_lower32(const char *name, size_t len);

struct rig_hash {
    uint32_t hash, bone;
};

struct rig_entry {
    char *label; /* where the skeleton is (the /info rig: line) */
    struct mdl_skeleton skel; /* inverse bind matrices computed */
    struct rig_hash *by_hash; /* the named bones' hashes, sorted (by bone on equal hashes) */
    uint32_t nhashes;
};

struct rig_set {
    struct rig_entry *r;
    size_t n, cap;
};

/* Takes skel (cleared on return, whatever the result) as a rig labelled label: S3_OK, or
 * with err S3_ERR_NOMEM, or S3_ERR_FORMAT (no bones, a parent cycle, a singular
 * transform). */
enum s3_err rig_set_add(struct rig_set *s, const char *label, struct mdl_skeleton *skel, char *err,
                        size_t errlen);
/* Moves every rig of from into to (from is left empty): S3_OK or S3_ERR_NOMEM (both kept). */
enum s3_err rig_set_take(struct rig_set *to, struct rig_set *from);
void rig_set_free(struct rig_set *s);

/* The bone of r whose name hashes to hash (the first of two with one hash), or -1.
 * O(log bones). */
int32_t rig_bone_of(const struct rig_entry *r, uint32_t hash);
/* How many of the n hashes a bone of r has. O(n log bones). */
size_t rig_covers(const struct rig_entry *r, const uint32_t *hashes, size_t n);
/* *pick: the first rig of s having a bone for every hash; with `best`, else the one
 * having the most distinct hashes (the first of equals); -1 for none (s empty). S3_OK, or
 * NOMEM (*pick untouched: a failure, never "no rig"). O(n log n + the rigs' bones × log n). */
enum s3_err rig_set_pick(const struct rig_set *s, const uint32_t *hashes, size_t n, bool best, ptrdiff_t *pick);

#endif
