/* A set of names, for making file names unique in linear time. A directory's names are
 * made one by one; each must differ from those made before it. A set of the names given
 * so far answers "is it taken" in one hash probe, and for each base name the set keeps
 * the next suffix to try, so n names with one base cost O(n) in all, not O(n^2) (a
 * Granny type may have 4,095 members of one name). Counts its name comparisons, so tests
 * can assert the cost is linear.
 *
 * Why this beside the tree's own unique names (tree.h: ~N before the extension, at the
 * moment a node is added): the names made here are decided before any node exists, and
 * paths are made of them. The Granny object walk (gr2walk.c) records each object's first
 * location as a path of member names (gr2_safe_names), view_gr2obj.c links every later
 * place to that path and /granny/skeletons to root/NAME, all before (or without) the
 * directories being listed; t2fs /named names a repeated schema name by its /root index.
 * Left to the tree, a second member X would become X~2 only when its node is added, after
 * the walk had given its objects the path .../X, the first X's: links would lead to the
 * wrong object. So these names stay unique here, and the tree's rule is the guard for
 * names that meet from different sources in one directory (a member called model.glb
 * beside the export), to which no path was computed. Either alone would change names:
 * Granny's ~N follows the whole name, the tree's goes before the extension, /named's is
 * the index. */
#ifndef S3_NAMESET_H
#define S3_NAMESET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
/* Adds a copy of name (nothing when it is there). 0, or -1 out of memory. */
int nameset_add(struct nameset *s, const char *name);
/* The first of base, base~2, base~3, ... that is not in the set, added and written to
 * out, which must have room for base and a suffix (outlen > strlen(base) + 11). 0, or -1
 * (out of memory, no room). The tries for base~N start where the last name of this base
 * ended: every base~M below it is taken (the set only grows). */
int nameset_unique(struct nameset *s, const char *base, char *out, size_t outlen);

#endif
