/* Atomic replacement of a file on disk: the one path by which an edit reaches the source.
 * - commit_lock: open PATH and take an exclusive, non-blocking flock for as long as the
 *   lock lives; a second writer is refused (BUSY). It records what the file was.
 * - commit_replace: writes a whole new file beside PATH (same directory), fsyncs it, keeps
 *   the old version as PATH~ when asked, renames the new file over PATH and fsyncs the
 *   directory. At every moment PATH is the old or the new file, never a mix. The file
 *   must still be the one recorded (else BUSY, nothing written); any failure removes the
 *   new file and leaves PATH untouched (the failing step's reason: NOSPACE for a full disk).
 * - Failures are enum s3_err; the lock moves to the new file on success (commit_unlock).
 * - Not thread-safe: one caller at a time per lock. */
#ifndef S3_COMMIT_H
#define S3_COMMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "parse/base/err.h"

struct commit_lock {
    int fd;         /* the locked file, as recorded */
    int dirfd;      /* its directory */
    char *dir;      /* the directory's path (for messages) */
    char *name;     /* PATH's last component */
    struct stat st; /* what the file was when locked or last committed */
};

/* Writes the whole new content to fd (a fresh empty file): S3_OK or the reason. */
typedef enum s3_err commit_writer_fn(int fd, void *ctx);

/* The steps a test may make fail (commit_fail_at). */
enum commit_step { COMMIT_STEP_NONE, COMMIT_STEP_WRITE, COMMIT_STEP_FSYNC, COMMIT_STEP_BACKUP,
                   COMMIT_STEP_RENAME, COMMIT_STEP_DIRSYNC };

/* S3_OK, BUSY (locked by another), NOT_FOUND, INVALID (not a regular file), NOMEM, ... */
enum s3_err commit_lock(struct commit_lock *l, const char *path);
void commit_unlock(struct commit_lock *l);
/* S3_OK while the file at the path is still the one recorded, BUSY otherwise. */
enum s3_err commit_unchanged(const struct commit_lock *l);
enum s3_err commit_replace(struct commit_lock *l, commit_writer_fn *write_all, void *ctx, bool backup);

/* Test hook: the next commit fails at `step` with reason e (COMMIT_STEP_NONE: no failure). */
void commit_fail_at(enum commit_step step, enum s3_err e);
/* Bench hook: fn(step, ctx) is called as each step of a commit begins (NULL: none), so
 * that a bench can time the steps; the product keeps no clock. */
typedef void commit_step_fn(enum commit_step step, void *ctx);
void commit_watch_steps(commit_step_fn *fn, void *ctx);

#endif
