/* Opening a file as a tree: the source (a file, bytes in memory, or a source nested in
 * another view) is detected and handed to its format's view (the format table's view
 * column); the exit statuses of the commands.
 * - s3fs_open* return S3_OK, or the reason with err filled in (one line); a command
 *   exits with s3_exit_of(reason).
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

/* The status a command exits with when s3fs_open gave reason e: S3_EXIT_FORMAT for a
 * file no format takes or whose top-level header cannot be read as its format (FORMAT,
 * RANGE, UNSUPPORTED, LIMIT), S3_EXIT_OPEN for one that cannot be opened or read (the
 * OS's reasons, IO, NOMEM); S3_EXIT_OK for S3_OK. */
int s3_exit_of(enum s3_err e);

/* Flushes and closes standard output at the end of a command: an output error (a full
 * disk, a closed pipe, /dev/full) is reported as "PROG: write error: ..." and gives
 * S3_EXIT_WRITE; otherwise S3_EXIT_OK. Without this, buffered output lost at exit would
 * leave the exit status 0. */
int s3_close_stdout(const char *prog);

/* Opens and parses FILE (a folder: the folder view); S3_OK, or the reason with err filled
 * in (one line naming the file and why): the OS's reason or NOMEM when it cannot be
 * opened, the detection's or the view's when no format takes it (FORMAT: no format or
 * no skeleton in -o skeleton=/rig='s file). */
enum s3_err s3fs_open(struct s3fs **out, const char *path, const struct s3fs_opts *opts, char *err, size_t errlen);
/* The same on bytes in memory (tests); data must outlive the s3fs. */
enum s3_err s3fs_open_mem(struct s3fs **out, const void *data, uint64_t size, const struct s3fs_opts *opts,
                          char *err, size_t errlen);
void s3fs_close(struct s3fs *fs);

/* The one way a view is opened: over source `src` (described by the caller with
 * source_slice / source_mem / source_expanded, and outliving the host), at the existing
 * directory `dir` of host's tree, which becomes the view's root: its own /info (with
 * `origin` as a "source:" line), coverage, /unparsed and offsets, all relative to src.
 * The nested s3fs lives as long as the tree. `formats`: the formats the caller accepts,
 * a mask of (1u << enum s3_format); 0 accepts any. S3_OK, or the reason with err
 * (FORMAT for a format not accepted, LIMIT past TREE_MAX_SOURCES, NOMEM, the view's).
 * Views below this layer call it as host->open_at (fs/core/view.h). */
s3fs_open_at_fn s3fs_open_at;

#endif
