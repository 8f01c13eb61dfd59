/* The package view: a DBPF package's index and resources, their expanded bytes, and the
 * resources the format table opens nested, each as a view of its own (fs->open_at). */
#ifndef S3_VIEW_DBPF_H
#define S3_VIEW_DBPF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fs/core/view.h"

/* Parses the header and index of fs's source and gives fs's root its populate callback.
 * S3_OK, or the reason with err. */
s3_view_open_fn dbpf_view_open;
/* A package's resource count and declared expanded bytes (s3rig extract's progress);
 * false when fs is not a package. */
bool dbpf_view_totals(struct s3fs *fs, uint32_t *count, uint64_t *bytes);
/* Instances compared so far while naming the resources from the name maps (counted, for
 * tests: linear in entries plus names, whatever the maps repeat); 0 when fs is not a
 * package. */
uint64_t dbpf_view_name_compares(struct s3fs *fs);
/* The most bytes held at once while naming the resources (counted, for tests): the
 * decoder's pieces while a name map is read (never the map whole) plus the names kept,
 * one per instance an entry has; 0 when fs is not a package. */
uint64_t dbpf_view_names_held_peak(struct s3fs *fs);
/* Resources larger than the cache's bound are decoded in pieces as they are read (never
 * one cache item): the readers started from a resource's start, and the bytes decoded,
 * so far (counted, for tests: a read-through in order starts one and decodes each byte
 * once); 0 when fs is not a package. */
void dbpf_view_stream_counts(struct s3fs *fs, uint64_t *starts, uint64_t *made);
/* The directory name under the package's resources/ of the index entry whose record
 * starts at `record` (struct dbpf_entry's; read from its name maps on the first call),
 * the same whether or not resources/ was listed; NULL when fs is not a package, no entry
 * starts there, or the names could not be made (out of memory). Call under the tree lock
 * (a populate callback or a volatile render). */
const char *dbpf_view_resource_name_at(struct s3fs *fs, uint32_t record);

#endif
