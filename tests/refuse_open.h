/* An open swept by allocation refusal (tests/alloc_refuse.c): the set-up test_oom,
 * test_oom_export and test_rig_clear share. Only in binaries linked with --wrap=malloc
 * (S3_TEST_WRAP_ALLOC); single-threaded. */
#ifndef S3_REFUSE_OPEN_H
#define S3_REFUSE_OPEN_H

#include <stddef.h>

struct s3fs;

/* What a sweep saw: the clean open's allocations, and how many refused opens failed. */
struct open_sweep {
    long allocations;
    unsigned failed;
};

/* Opens data in memory (default options) with nothing refused, counting its allocations,
 * then once more with each of them refused in turn: an open that fails must say "out of
 * memory" (else the test fails, naming `what` and the allocation); one that succeeds is
 * handed to opened(ctx, clean, fs, k), which checks it against the clean open (fs and
 * clean are closed by the sweep). */
typedef void (*open_check_fn)(void *ctx, const struct s3fs *clean, struct s3fs *fs, long k);
struct open_sweep refuse_each_open_allocation(const char *what, const void *data, size_t size, open_check_fn opened,
                                              void *ctx);

#endif
