#include "refuse_open.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "alloc_refuse.h"
#include "fs/open/open.h"

struct open_sweep refuse_each_open_allocation(const char *what, const void *data, size_t size, open_check_fn opened,
                                              void *ctx)
{
    struct s3fs_opts o = {0};
    struct s3fs *clean = NULL;
    char err[512];
    struct open_sweep s = {0, 0};
    alloc_refuse_start(-1);
    if (s3fs_open_mem(&clean, data, size, &o, err, sizeof err))
        fail_msg("%s: the clean open failed: %s", what, err);
    s.allocations = alloc_refuse_count();
    for (long k = 0; k < s.allocations; k++) {
        struct s3fs *fs = NULL;
        alloc_refuse_start(k);
        int rc = s3fs_open_mem(&fs, data, size, &o, err, sizeof err);
        alloc_refuse_start(-1);
        if (rc) {
            if (!strstr(err, "out of memory"))
                fail_msg("%s: allocation %ld of %ld refused: the open failed, not saying out of memory: %s", what, k,
                         s.allocations, err);
            s.failed++;
            continue;
        }
        opened(ctx, clean, fs, k);
        s3fs_close(fs);
    }
    s3fs_close(clean);
    return s;
}
