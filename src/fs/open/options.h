/* The -o options of both commands, from one table: names, value types, ranges and help
 * text together, so the two accept, check and document the same options.
 * - Mount-only options (ownership, permissions, the request loop) are refused by name
 *   where there is no mount. */
#ifndef S3_OPTIONS_H
#define S3_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "fs/core/view.h"

/* Which command an option is for. */
enum opt_scope {
    OPT_SHARED = 1, /* both commands: how the file is opened and parsed */
    OPT_MOUNT = 2,  /* mount.s3rig only */
};

/* Every value an option can set. Callers fill in defaults first (mount.s3rig: its own
 * uid/gid), then each option given overrides its field. */
struct s3_options {
    struct s3fs_opts fs;
    uid_t uid;
    gid_t gid;
    mode_t umask;
    unsigned spin_us;
    bool rw;        /* -o rw / -o writable: edits in place (mount only) */
    bool no_backup; /* -o backup=0: no FILE~ kept at a commit */
    bool no_watch;  /* -o nowatch: a folder mount shows the folder as mounted (default: it follows) */
};

/* Takes one "-o" item ("name=value") for a command that accepts `scopes`: 1 taken, 0 not
 * in the table, -1 refused (a bad value, or an option of another command), with err
 * naming the item and what is allowed. */
int s3_option_take(struct s3_options *o, unsigned scopes, const char *item, char *err, size_t errlen);

/* Takes a comma-separated list; items not in the table go to other(item, ctx), which
 * returns 0 to go on or -1 to stop (it reports). -1 on the first refusal (err set, or
 * empty when other() refused). */
int s3_options_take_list(struct s3_options *o, unsigned scopes, const char *list,
                         int (*other)(const char *item, void *ctx), void *ctx, char *err, size_t errlen);

/* Writes the help lines of the options in `scopes`, each starting with indent. */
void s3_options_help(FILE *f, unsigned scopes, const char *indent);

#endif
