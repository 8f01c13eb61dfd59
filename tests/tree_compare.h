/* Snapshots of a whole subtree (every path, kind, size, content, link target and xattr),
 * taken in-process from a tree or through a mounted directory, and compared. Used to show
 * that a view nested in another (a rig over a memory buffer, a slice of a file, a package
 * resource) gives exactly the tree of the same file mounted alone. */
#ifndef S3_TREE_COMPARE_H
#define S3_TREE_COMPARE_H

#include <stddef.h>
#include <stdint.h>

#include "fs/core/tree.h"

struct snap_entry {
    char *path; /* relative to the snapshot's root, "" for the root itself */
    char kind;  /* 'd' 'f' 'l' */
    uint64_t size;
    uint8_t *data; /* files: contents; links: target */
    size_t dlen;
    char offset[32], length[32], type[128]; /* xattrs, "" when absent */
};

struct snap {
    struct snap_entry *e;
    size_t n, cap;
};

/* The subtree under dir of t (populating it). The root's "info" is read last, without
 * its "source:" lines (the one line a nested view adds), so warnings found while walking
 * are in it for both sides. */
void snap_tree(struct snap *s, struct tree *t, uint32_t dir);
/* The same without the subtrees named in skip (paths relative to dir, NULL-terminated):
 * they are neither populated nor read. */
void snap_tree_except(struct snap *s, struct tree *t, uint32_t dir, const char *const *skip);
/* The whole tree of bytes opened alone (in memory, default options). */
void snap_file_alone(struct snap *s, const uint8_t *data, size_t size);
/* The same through the file system (a mounted directory). */
void snap_path(struct snap *s, const char *dir);
/* cmocka-asserts that a and b hold the same entries (names the first difference). The
 * roots themselves are not compared: a nested view's root directory keeps the type and
 * span its host gave it (where its bytes lie in the mounted file). */
void snap_assert_equal(const struct snap *a, const struct snap *b);
/* The same without comparing xattrs: twins whose bytes lie elsewhere in their files (one
 * stored, one compressed) show the same paths, kinds, sizes, contents and link targets. */
void snap_assert_same_content(const struct snap *a, const struct snap *b);
const struct snap_entry *snap_find(const struct snap *s, const char *path);
void snap_free(struct snap *s);

#endif
