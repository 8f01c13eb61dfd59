/* The thin libfuse3 low-level adapter: maps FUSE requests onto the tree. It knows no
 * format. */
#ifndef S3_FUSE_LL_H
#define S3_FUSE_LL_H

#include <stdbool.h>
#include <sys/types.h>

#include "fs/core/commit.h"
#include "fs/open/open.h"

struct s3_fuse_config {
    uid_t uid;
    gid_t gid;
    mode_t umask;
    bool foreground;
    bool single_thread;
    /* After each request, keep asking /dev/fuse for the next one this many microseconds
     * before sleeping (0: libfuse's own blocking loops). See spin_loop in fuse_ll.c. */
    unsigned spin_us;
    /* -o rw: edits are committed to the file through lock (held for the whole mount),
     * keeping FILE~ when backup; a commit opens the new file with opts */
    bool rw, backup;
    /* A folder followed while mounted (-o watch): a change there makes the next
     * request open it again with opts, as a new generation */
    bool watch;
    struct commit_lock *lock;
    struct s3fs_opts opts;
};

#define S3_DEFAULT_SPIN_US 50

/* Mounts fs on mountpoint with the libfuse arguments in argv (argv[0] included),
 * daemonizes unless foreground (after the mount is live), serves until unmounted.
 * Returns an s3_exit status. fs is the run's: closed before it returns (with -o rw or a
 * watch, as soon as a newer generation replaced it and nothing holds it). */
int s3_fuse_run(struct s3fs *fs, const struct s3_fuse_config *cfg, int argc, char **argv, const char *mountpoint);

#endif
