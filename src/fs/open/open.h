/* Opening a file as a tree: the source (a file, bytes in memory, or a source nested in
 * another view) is detected and handed to its format's view (the format table's view
 * column); the exit statuses of the commands.
 * - s3fs_open* return S3_EXIT_OK, or a status with err filled in (one line).
 * - A view never includes this: it opens the files it holds with fs->open_at. */
#ifndef S3_OPEN_H
#define S3_OPEN_H

#include <stddef.h>
#include <stdint.h>

#include "fs/core/view.h"

/* Exit statuses shared by mount.s3rig and s3rig (documented in mount.s3rig(8)). */
enum s3_exit {
    S3_EXIT_OK = 0,
    S3_EXIT_USAGE = 1,
    S3_EXIT_OPEN = 2,   /* FILE cannot be opened or read */
    S3_EXIT_FORMAT = 3, /* unrecognised format, or its top-level header is unreadable */
    S3_EXIT_MOUNT = 4,  /* the mount itself failed */
    S3_EXIT_PATH = 5,   /* s3rig: a path inside the tree does not exist */
    S3_EXIT_WRITE = 6,  /* the output could not be written (stdout, extract's DIR) */
    S3_EXIT_UNSAVED = 7, /* mount.s3rig -o rw: edits not committed at unmount (kept apart) */
};

/* Flushes and closes standard output at the end of a command: an output error (a full
 * disk, a closed pipe, /dev/full) is reported as "PROG: write error: ..." and gives
 * S3_EXIT_WRITE; otherwise S3_EXIT_OK. Without this, buffered output lost at exit would
 * leave the exit status 0. */
int s3_close_stdout(const char *prog);

/* Opens and parses FILE; returns S3_EXIT_OK or an exit status with err filled in (one
 * line naming the file and the reason). */
int s3fs_open(struct s3fs **out, const char *path, const struct s3fs_opts *opts, char *err, size_t errlen);
/* The same on bytes in memory (tests); data must outlive the s3fs. */
int s3fs_open_mem(struct s3fs **out, const void *data, uint64_t size, const struct s3fs_opts *opts, char *err,
                  size_t errlen);
void s3fs_close(struct s3fs *fs);

/* The one way a view is opened: over source `src` (described by the caller with
 * source_slice / source_mem / source_expanded, and outliving the host), at the existing
 * directory `dir` of host's tree, which becomes the view's root: its own /info (with
 * `origin` as a "source:" line), coverage, /unparsed and offsets, all relative to src.
 * The nested s3fs lives as long as the tree. `formats`: the formats the caller accepts,
 * a mask of (1u << enum s3_format); 0 accepts any. S3_EXIT_OK, or a status with err.
 * Views below this layer call it as host->open_at (fs/core/view.h). */
s3fs_open_at_fn s3fs_open_at;

#endif
