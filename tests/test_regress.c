/* Regression inputs (tests/regress/): files that once made the tree slow or crash, found
 * by fuzzing. Each must open (or be refused) and be walked completely within a short
 * time under the sanitizers. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "fs/open/open.h"
#include "walk.h"

static void test_regression_inputs(void **state)
{
    (void)state;
    const char *dir = getenv("S3RIG_REGRESS");
    assert_non_null(dir);
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *de;
    int seen = 0;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        struct s3fs *fs;
        char err[512];
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        if (s3fs_open(&fs, path, NULL, err, sizeof err) == 0) {
            assert_true(walk_all(fs, 1000000) > 0);
            s3fs_close(fs);
        }
        clock_gettime(CLOCK_MONOTONIC, &b);
        double secs = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
        /* generous: this guards against runaway work (minutes), not speed */
        if (secs > 20)
            fail_msg("%s: %.1f s to walk", de->d_name, secs);
        seen++;
    }
    closedir(d);
    assert_true(seen > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_regression_inputs)};
    return cmocka_run_group_tests_name("regress", tests, NULL, NULL);
}
