/* A folder of Sims packages and script archives (a Mods folder) as one tree: what the
 * game loads and in which order, every package as its own package tree, every script
 * archive as a directory of its members, the key in effect, conflicts and duplicates
 * (the layout is man/s3rig.5's).
 * - fs is a fresh top-level s3fs whose tree and cache are made; its src is a memory
 *   source of no bytes (the folder has none of its own), whose path and st the caller
 *   sets to the folder's.
 * - Nothing is read at open: the folder is scanned (headers and indexes only) on the
 *   first request for the root's children. */
#ifndef S3_VIEW_FOLDER_H
#define S3_VIEW_FOLDER_H

#include <stddef.h>
#include <stdint.h>

#include "fs/core/view.h"

/* Gives fs's root the folder's populate callback. S3_OK, or the reason with err. */
enum s3_err folder_view_open(struct s3fs *fs, const char *path, char *err, size_t errlen);

/* Tests only, for every scan after the call: read packages with `workers` threads (0:
 * as chosen by the folder's size and the online CPUs), and refuse the k-th allocation of
 * the package reading from now (0: none). folder_view_test_scan_allocs counts those
 * allocations (since the program started). */
void folder_view_test_scan(unsigned workers, uint64_t k);
uint64_t folder_view_test_scan_allocs(void);
/* Tests only: the packages read whole (SHA-256, for duplicates.csv and identical_packages)
 * by every view since the program started, and in *peeked (when not NULL) those whose
 * first and last 4 KiB were read. */
uint64_t folder_view_test_hashed(uint64_t *peeked);
/* Tests only: the pairs of a conflict's providers compared by every view since the
 * program started, by what decided each (enum dbpf_same_how: nothing, the expanded
 * sizes, the stored bytes, expanding both); and the package views opened (a package's
 * tree populated under /files). */
void folder_view_test_compared(uint64_t counts[4]);
/* Tests only: every scan from now on calls fn(ctx) once it has walked the folder (what
 * its tree will show of the folder's files is fixed then), before it reads the packages;
 * fn NULL: none. A test holds a scan there to change the folder behind it (test_folder_watch:
 * a change the watch counts while a rescan runs). */
void folder_view_test_on_scan(void (*fn)(void *ctx), void *ctx);
uint64_t folder_view_test_packages_opened(void);
/* Tests only: the package files every view opened to compare providers' bytes (a
 * conflict's identical, conflicts.csv) since the program started. */
uint64_t folder_view_test_package_opens(void);

#endif
