/* The commit path (fs/core/commit.h): whole new file, fsync, backup, rename, directory
 * fsync; the lock; refusals that change nothing; injected failures at every step; and a
 * writer killed at random moments leaving the old or the new file, never a mix. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>

#include <cmocka.h>

#include "fs/core/commit.h"

struct content {
    const uint8_t *bytes;
    size_t len;
};

static enum s3_err write_content(int fd, void *ctx)
{
    const struct content *c = ctx;
    for (size_t done = 0; done < c->len;) {
        ssize_t n = write(fd, c->bytes + done, c->len - done);
        if (n < 0)
            return s3_err_of_errno(errno);
        done += (size_t)n;
    }
    return S3_OK;
}

static char dir[256];
static char path[300];

static void put_file(const char *p, const void *bytes, size_t len, mode_t mode)
{
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, mode);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, bytes, len), (ssize_t)len);
    close(fd);
}

/* The file's bytes (malloc'd) and their count. */
static uint8_t *slurp(const char *p, size_t *len)
{
    int fd = open(p, O_RDONLY);
    if (fd < 0)
        return NULL;
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    uint8_t *b = malloc((size_t)st.st_size + 1);
    assert_non_null(b);
    assert_int_equal(pread(fd, b, (size_t)st.st_size, 0), st.st_size);
    close(fd);
    *len = (size_t)st.st_size;
    return b;
}

static void expect_file(const char *p, const void *bytes, size_t len)
{
    size_t n;
    uint8_t *b = slurp(p, &n);
    assert_non_null(b);
    assert_int_equal(n, len);
    assert_memory_equal(b, bytes, len);
    free(b);
}

/* Entries of the directory other than . and .. */
static int entries(void)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n;
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/s3rig-commit-XXXXXX");
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/a.package", dir);
    put_file(path, "old bytes", 9, 0640);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd);
}

static void test_replace_keeps_backup_and_mode(void **state)
{
    (void)state;
    struct commit_lock l;
    assert_int_equal(commit_lock(&l, path), 0);
    struct content c = {(const uint8_t *)"brand new bytes", 15};
    assert_int_equal(commit_replace(&l, write_content, &c, true), 0);
    expect_file(path, "brand new bytes", 15);
    char bak[320];
    snprintf(bak, sizeof bak, "%s~", path);
    expect_file(bak, "old bytes", 9);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0640);
    assert_int_equal(entries(), 2); /* the file and its backup: no temporary left */
    /* a second commit on the same lock: the lock moved to the new file */
    struct content d = {(const uint8_t *)"third", 5};
    assert_int_equal(commit_replace(&l, write_content, &d, false), 0);
    expect_file(path, "third", 5);
    expect_file(bak, "old bytes", 9); /* backup=0 leaves the earlier backup alone */
    commit_unlock(&l);
}

static void test_second_writer_refused(void **state)
{
    (void)state;
    struct commit_lock a, b;
    assert_int_equal(commit_lock(&a, path), 0);
    assert_int_equal(commit_lock(&b, path), S3_ERR_BUSY);
    struct content c = {(const uint8_t *)"x", 1};
    assert_int_equal(commit_replace(&a, write_content, &c, false), 0);
    /* still refused after the commit: the lock is on the new file */
    assert_int_equal(commit_lock(&b, path), S3_ERR_BUSY);
    commit_unlock(&a);
    assert_int_equal(commit_lock(&b, path), 0);
    commit_unlock(&b);
}

static void test_changed_elsewhere_refused(void **state)
{
    (void)state;
    struct commit_lock l;
    assert_int_equal(commit_lock(&l, path), 0);
    /* someone else replaces the file by rename (as an editor saving does) */
    char other[320];
    snprintf(other, sizeof other, "%s/other", dir);
    put_file(other, "theirs", 6, 0644);
    assert_int_equal(rename(other, path), 0);
    struct content c = {(const uint8_t *)"mine", 4};
    assert_int_equal(commit_unchanged(&l), S3_ERR_BUSY);
    assert_int_equal(commit_replace(&l, write_content, &c, true), S3_ERR_BUSY);
    expect_file(path, "theirs", 6);
    assert_int_equal(entries(), 1);
    commit_unlock(&l);
}

static void test_changed_in_place_refused(void **state)
{
    (void)state;
    struct commit_lock l;
    assert_int_equal(commit_lock(&l, path), 0);
    int fd = open(path, O_WRONLY | O_APPEND);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "+", 1), 1);
    close(fd);
    struct content c = {(const uint8_t *)"mine", 4};
    assert_int_equal(commit_replace(&l, write_content, &c, false), S3_ERR_BUSY);
    expect_file(path, "old bytes+", 10);
    commit_unlock(&l);
}

/* Each step failing: an error, and the file exactly as it was (before the rename) or
 * exactly the new one (the directory's fsync comes after it); never a temporary left. */
static void test_each_step_fails_cleanly(void **state)
{
    (void)state;
    const enum commit_step steps[] = {COMMIT_STEP_WRITE, COMMIT_STEP_FSYNC, COMMIT_STEP_BACKUP, COMMIT_STEP_RENAME,
                                      COMMIT_STEP_DIRSYNC};
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        put_file(path, "old bytes", 9, 0640);
        char bak[320];
        snprintf(bak, sizeof bak, "%s~", path);
        unlink(bak);
        struct commit_lock l;
        assert_int_equal(commit_lock(&l, path), 0);
        struct content c = {(const uint8_t *)"new", 3};
        commit_fail_at(steps[i], S3_ERR_NOSPACE);
        assert_int_equal(commit_replace(&l, write_content, &c, true), S3_ERR_NOSPACE);
        if (steps[i] == COMMIT_STEP_DIRSYNC) {
            expect_file(path, "new", 3);
            assert_int_equal(entries(), 2);
        } else {
            expect_file(path, "old bytes", 9);
            assert_int_equal(entries(), steps[i] == COMMIT_STEP_RENAME ? 2 : 1); /* the backup was made */
        }
        commit_unlock(&l);
    }
    commit_fail_at(COMMIT_STEP_NONE, S3_OK);
}

static void test_refused_when_not_a_file(void **state)
{
    (void)state;
    struct commit_lock l;
    assert_int_equal(commit_lock(&l, dir), S3_ERR_INVALID);
    char missing[320];
    snprintf(missing, sizeof missing, "%s/missing", dir);
    assert_int_equal(commit_lock(&l, missing), S3_ERR_NOT_FOUND);
}

/* A child commits two alternating contents over and over; it is killed at a random
 * moment, 200 times. After each kill the file is one of the two contents, whole, and a
 * new lock can be taken (stale temporaries are removed by it). */
#define BIG (2u << 20)
static void test_killed_writer_leaves_old_or_new(void **state)
{
    (void)state;
    uint8_t *a = malloc(BIG), *b = malloc(BIG);
    assert_non_null(a);
    assert_non_null(b);
    for (size_t i = 0; i < BIG; i++) {
        a[i] = (uint8_t)(i * 7 + 1);
        b[i] = (uint8_t)(i * 13 + 5);
    }
    put_file(path, a, BIG, 0644);
    srand(12345);
    int seen_a = 0, seen_b = 0;
    for (int round = 0; round < 200; round++) {
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            struct commit_lock l;
            if (commit_lock(&l, path))
                _exit(3);
            for (int k = 0;; k++) {
                size_t n;
                uint8_t *now = slurp(path, &n);
                struct content c = {now && n == BIG && memcmp(now, a, BIG) == 0 ? b : a, BIG};
                free(now);
                if (commit_replace(&l, write_content, &c, k % 2 == 0))
                    _exit(4);
            }
        }
        struct timespec ts = {0, (long)(rand() % 40000) * 1000};
        nanosleep(&ts, NULL);
        kill(pid, SIGKILL);
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFSIGNALED(status)); /* it never stopped by itself with an error */
        size_t n;
        uint8_t *now = slurp(path, &n);
        assert_non_null(now);
        assert_int_equal(n, BIG);
        bool is_a = memcmp(now, a, BIG) == 0, is_b = memcmp(now, b, BIG) == 0;
        assert_true(is_a || is_b);
        seen_a += is_a;
        seen_b += is_b;
        free(now);
        struct commit_lock l;
        assert_int_equal(commit_lock(&l, path), 0);
        commit_unlock(&l);
        assert_true(entries() <= 2); /* the file and perhaps its backup: no stale temporary */
    }
    /* the kills landed before and after commits, or the test proved nothing */
    assert_true(seen_a > 0);
    assert_true(seen_b > 0);
    free(a);
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_replace_keeps_backup_and_mode, setup, teardown),
        cmocka_unit_test_setup_teardown(test_second_writer_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_changed_elsewhere_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_changed_in_place_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_each_step_fails_cleanly, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refused_when_not_a_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_killed_writer_leaves_old_or_new, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
