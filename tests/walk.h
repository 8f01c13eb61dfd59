/* Visits every node of a tree in-process (explicit stack, no recursion) and reads every
 * file and link: what the fuzz targets and the regression test do to each input. */
#ifndef S3_WALK_H
#define S3_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fs/open/open.h"

/* True when a symlink's target, resolved from the directory holding it, stays inside
 * the tree (relative, never climbing above the root). */
bool link_stays_inside(struct tree *t, uint32_t ino);

/* Resolves a symlink (and any links its target passes through) to the node it names:
 * 0 and *out, or -1 with why (dangling, absolute, above the root, a loop, itself). */
int link_resolve(struct tree *t, uint32_t link, uint32_t *out, char *why, size_t whylen);
/* Resolves every link of the tree as it stands: 0 and *links counted, or -1 with why
 * naming the first link that does not resolve (or, with want_dir, names no directory). */
int check_links(struct tree *t, bool want_dir, size_t *links, char *why, size_t whylen);

/* Returns the number of nodes visited (at most max_nodes). Aborts (so fuzzing treats it
 * as a crash) on a link that leaves the tree or does not resolve (dangling, a loop;
 * unless the node limit cut the tree), on a file whose read fails or whose bytes read
 * differ from its stat size (files over 64 MiB: their first 4 MiB and last 64 KiB), and
 * on two entries of one name in a directory. */
size_t walk_all(struct s3fs *fs, size_t max_nodes);

/* A digest of the subtree at dir as the tree API shows it (names, kinds, types, sizes,
 * every file's bytes, link targets, in creation order; volatile files such as /info are
 * left out, so a nested view and the same file opened alone agree), and how many nodes
 * it covers. Safe from any thread (no test assertions, no shared state): 0, or -1 when
 * a directory or a file cannot be read. */
int walk_digest(struct tree *t, uint32_t dir, uint64_t *digest, size_t *nodes);

/* Every cut of a file (its first from, from + step, ... bytes, below size) that opens is
 * walked whole (walk_all, at most max_nodes): a cut file gives what is there or .error
 * files, never a crash. */
void walk_cuts(const uint8_t *file, size_t size, size_t from, size_t step, size_t max_nodes);

#endif
