/* -o rw: a fresh open by path after a commit never fails with ESTALE (issue 34: "readers
 * of the mount see the new tree after a commit"). Every value file of a package holding
 * RIGs (directories five deep: resources/R/rig/granny/sections/N/) is given its own text
 * back in turn, each close a commit, while threads open and read the same files by path;
 * every open is counted, and none may say ESTALE (a count, not a clock); and the path
 * stat after each close names the new tree (the close returns once the kernel was told,
 * whatever the readers keep it busy with). The same for commits by rename (sed -i's
 * temporary renamed over a value): the path after the rename names the new tree, and
 * no rename waited for its deadline (/info). Its own program
 * so that it runs alone under ASan and ThreadSanitizer (scripts/tsan.sh rw_fresh). */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "fixture_kinds.h"
#include "mountutil.h"

enum { MAX_FILES = 512, CYCLES = 500, READERS = 3 };

static char files[MAX_FILES][512];
static int nfiles;

/* A writable value file (the mode says so, s3rig(5)); not the byte leaves (.bin, .gr2),
 * whose text is no value. */
static int collect(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)ftw;
    size_t n = strlen(path);
    if (flag != FTW_F || !S_ISREG(st->st_mode) || !(st->st_mode & 0200) ||
        (n > 4 && (strcmp(path + n - 4, ".bin") == 0 || strcmp(path + n - 4, ".gr2") == 0)))
        return 0;
    if (nfiles < MAX_FILES && n < sizeof files[0])
        strcpy(files[nfiles++], path);
    return 0;
}

struct reader_arg {
    unsigned seed;
    volatile int *stop;
    unsigned opens, stale, other;
};

/* Opens and reads the files by path until told to stop; counts ESTALE and other errors. */
static void *reader(void *p)
{
    struct reader_arg *r = p;
    char buf[4096];
    while (!__atomic_load_n(r->stop, __ATOMIC_ACQUIRE)) {
        const char *path = files[rand_r(&r->seed) % (unsigned)nfiles];
        int fd = open(path, O_RDONLY);
        r->opens++;
        if (fd < 0) {
            if (errno == ESTALE)
                r->stale++;
            else
                r->other++;
            continue;
        }
        if (read(fd, buf, sizeof buf) < 0)
            r->other++;
        close(fd);
    }
    return NULL;
}

/* The file's text (at most 4 KiB, a value's), by a fresh open: 0 or the open's errno. */
static int read_text(const char *path, char *text, size_t cap, size_t *len)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return errno;
    ssize_t n = read(fd, text, cap);
    int e = n < 0 ? errno : 0;
    close(fd);
    assert_int_equal(e, 0);
    *len = (size_t)n;
    return 0;
}

/* The text written back with a fresh open (O_TRUNC, as a shell does); the close commits:
 * 0 or the open's errno. */
static int write_text(const char *path, const char *text, size_t len)
{
    char step;
    int e = write_file(path, O_WRONLY | O_TRUNC, text, len, &step);
    if (e && step != 'o')
        fail_msg("%s: %s failed: %s", path, step == 'w' ? "write" : "close", strerror(e));
    return e;
}

/* The package every cycle test edits, written as file and mounted rw with opts on a
 * mount point named mntname; files[] then lists its value files (nfiles). */
struct fresh_mount {
    uint8_t *bytes;
    size_t size;
    char path[256], mnt[256];
};

static void fresh_mount(struct fresh_mount *m, const char *file, const char *mntname, const char *opts)
{
    m->bytes = fx_kind("package-s4-rigs", 0, NULL, &m->size);
    assert_non_null(m->bytes);
    write_fixture(file, m->bytes, m->size, m->path, sizeof m->path);
    make_mountpoint(mntname, m->mnt, sizeof m->mnt);
    do_mount(m->path, m->mnt, opts);
    nfiles = 0;
    assert_int_equal(nftw(m->mnt, collect, 16, FTW_PHYS), 0);
}

/* Every value was given its own text back: unmounted, the file is byte for byte what it was. */
static void fresh_unmount_unchanged(struct fresh_mount *m)
{
    umount_rw(m->mnt, m->path);
    assert_file_is(m->path, m->bytes, m->size);
    free(m->bytes);
}

/* READERS threads opening and reading files[] until stopped; their counts summed. */
struct reader_pool {
    volatile int stop;
    pthread_t th[READERS];
    struct reader_arg ra[READERS];
    unsigned opens, stale, other;
};

static void readers_start(struct reader_pool *rp, unsigned seed)
{
    rp->stop = 0;
    for (int i = 0; i < READERS; i++) {
        rp->ra[i] = (struct reader_arg){.seed = seed + (unsigned)i, .stop = &rp->stop};
        assert_int_equal(pthread_create(&rp->th[i], NULL, reader, &rp->ra[i]), 0);
    }
}

static void readers_stop(struct reader_pool *rp)
{
    __atomic_store_n(&rp->stop, 1, __ATOMIC_RELEASE);
    rp->opens = rp->stale = rp->other = 0;
    for (int i = 0; i < READERS; i++) {
        pthread_join(rp->th[i], NULL);
        rp->stale += rp->ra[i].stale;
        rp->opens += rp->ra[i].opens;
        rp->other += rp->ra[i].other;
    }
}

static void fresh_opens(const char *opts, const char *tag)
{
    struct fresh_mount m;
    char file[64], mntname[64];
    snprintf(file, sizeof file, "fresh-%s.package", tag);
    snprintf(mntname, sizeof mntname, "m-fresh-%s", tag);
    fresh_mount(&m, file, mntname, opts);
    assert_true(nfiles > 20); /* header fields, index fields, the RIGs' Granny words */
    struct reader_pool rp;
    readers_start(&rp, 17u);
    unsigned stale = 0, commits = 0, old_after = 0;
    char text[4096];
    for (int k = 0; k < CYCLES; k++) {
        const char *p = files[k % nfiles];
        size_t len = 0;
        struct stat before, after;
        int e = lstat(p, &before) ? errno : 0;
        if (!e)
            e = read_text(p, text, sizeof text, &len);
        if (!e)
            e = write_text(p, text, len);
        if (e == ESTALE) {
            stale++;
            continue;
        }
        if (e)
            fail_msg("%s: %s", p, strerror(e));
        commits++;
        /* the close returned once the kernel was told: the path names the new tree, whose
         * numbers are of a newer generation (fuse_ll.c: an inode number is epoch << 32 | node) */
        assert_int_equal(lstat(p, &after), 0);
        old_after += (after.st_ino >> 32) <= (before.st_ino >> 32);
    }
    readers_stop(&rp);
    printf("%s: %u commits over %d files; writer opens ESTALE: %u; old tree after the close: %u; readers: %u "
           "opens, %u ESTALE, %u other errors\n",
           tag, commits, nfiles, stale, old_after, rp.opens, rp.stale, rp.other);
    assert_int_equal(stale, 0);
    if (old_after)
        fail_msg("%s: %u of %u closes left the path naming the old tree", tag, old_after, commits);
    assert_int_equal(rp.stale, 0);
    assert_int_equal(rp.other, 0);
    assert_int_equal(commits, CYCLES);
    fresh_unmount_unchanged(&m);
}

/* One thread serving requests (the default, -o spin=50): every close returns after the
 * kernel was told, and no request is answered meanwhile. */
static void test_rw_fresh_open_single_thread(void **state)
{
    (void)state;
    fresh_opens("rw", "spin");
}

/* libfuse's multi-threaded loop: requests at once. No ESTALE ever, and the close returns
 * only once a walk of the path meets the new tree. (It did not, 2 of 500 commits under
 * load and 18 to 21 under ThreadSanitizer, while the notifier told the kernel of the
 * newest tree alone: a reader had often opened the committed file first, whose root was
 * not listed yet, so the kernel was told of no name at all.) */
static void test_rw_fresh_open_threads(void **state)
{
    (void)state;
    fresh_opens("rw,spin=0", "mt");
}

/* ---- a commit by RENAME: sed -i's temporary renamed over a value (issue 34) ---- */

/* The path's epoch (fuse_ll.c: an inode number is epoch << 32 | node; an editor's
 * temporary has epoch 0xFFFFFFFF, a number of no tree). */
static uint32_t epoch_of(const struct stat *st)
{
    return (uint32_t)(st->st_ino >> 32);
}

/* What `sed -i` does to path: a temporary in the same directory gets the new text
 * (here the value's own), then is renamed over path; 0 or the errno of the step that
 * failed (ESTALE counted by the caller). */
static int sed_like(const char *path, const char *text, size_t len, int k)
{
    char tmp[600];
    const char *slash = strrchr(path, '/');
    assert_non_null(slash);
    snprintf(tmp, sizeof tmp, "%.*s/sed%06d", (int)(slash - path), path, k);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0)
        return errno;
    assert_int_equal(write(fd, text, len), (ssize_t)len);
    assert_int_equal(close(fd), 0);
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return e;
    }
    return 0;
}

/* Only the files whose directory is not the mount's root (the rename holds its
 * directory's lock until answered, and the root's is what the notifier needs:
 * see renames_at_root). */
static void keep_below_root(const char *mnt, bool below)
{
    int kept = 0;
    size_t n = strlen(mnt);
    for (int i = 0; i < nfiles; i++) {
        bool deep = strchr(files[i] + n + 1, '/') != NULL;
        if (deep == below)
            memmove(files[kept++], files[i], sizeof files[0]);
    }
    nfiles = kept;
}

/* The count /info gives of renames answered at their deadline, before the kernel was
 * told of their commit (mount.s3rig(8): a rename waits for that at most 1 s). */
static unsigned long renames_late(const char *mnt)
{
    char p[600], line[512];
    snprintf(p, sizeof p, "%s/info", mnt);
    FILE *f = fopen(p, "r");
    assert_non_null(f);
    const char *key = "rw: renames answered before the kernel was told of their commit: ";
    long n = -1;
    while (n < 0 && fgets(line, sizeof line, f))
        if (strncmp(line, key, strlen(key)) == 0)
            n = strtol(line + strlen(key), NULL, 10);
    fclose(f);
    assert_true(n >= 0);
    return (unsigned long)n;
}

/* Each cycle gives a value its own text back by a sed -i-style rename while readers
 * walk; after the rename returns, an lstat of the path must name the new tree: a
 * generation newer than the one before (neither the tree before nor the temporary's
 * number, which the kernel keeps under the path until told to forget the old tree).
 * Returns how many did not (printed); the file ends byte for byte as it was. */
static unsigned fresh_renames(const char *opts, const char *tag, bool below, const char *extra)
{
    struct fresh_mount m;
    char file[64], mntname[64];
    snprintf(file, sizeof file, "ren-%s.package", tag);
    snprintf(mntname, sizeof mntname, "m-ren-%s", tag);
    fresh_mount(&m, file, mntname, opts);
    if (extra && nfiles < MAX_FILES) /* a byte leaf, given its own bytes back */
        snprintf(files[nfiles++], sizeof files[0], "%s/%s", m.mnt, extra);
    keep_below_root(m.mnt, below);
    assert_true(nfiles >= (below ? 20 : 1));
    struct reader_pool rp;
    readers_start(&rp, 29u);
    unsigned stale = 0, commits = 0, old_after = 0, temp_after = 0;
    char text[4096];
    for (int k = 0; k < CYCLES; k++) {
        const char *p = files[k % nfiles];
        size_t len = 0;
        struct stat before, after;
        int e = lstat(p, &before) ? errno : 0;
        if (!e)
            e = read_text(p, text, sizeof text, &len);
        if (!e)
            e = sed_like(p, text, len, k);
        if (e == ESTALE) {
            stale++;
            continue;
        }
        if (e)
            fail_msg("%s: %s", p, strerror(e));
        commits++;
        assert_int_equal(lstat(p, &after), 0);
        if (epoch_of(&after) == 0xFFFFFFFFu)
            temp_after++;
        else if (epoch_of(&after) <= epoch_of(&before))
            old_after++;
        /* whatever number names it, the path reads the committed text */
        char back[4096];
        size_t blen = 0;
        assert_int_equal(read_text(p, back, sizeof back, &blen), 0);
        assert_int_equal(blen, len);
        assert_memory_equal(back, text, len);
    }
    readers_stop(&rp);
    unsigned long late = renames_late(m.mnt);
    printf("%s: %u renames over %d files; ESTALE: %u; after the rename the path named the old tree: %u, the "
           "temporary: %u; answered at the deadline: %lu; readers: %u opens, %u ESTALE, %u other errors\n",
           tag, commits, nfiles, stale, old_after, temp_after, late, rp.opens, rp.stale, rp.other);
    if (below)
        assert_int_equal(late, 0);
    assert_int_equal(stale, 0);
    assert_int_equal(rp.stale, 0);
    assert_int_equal(rp.other, 0);
    assert_int_equal(commits, CYCLES);
    fresh_unmount_unchanged(&m);
    return old_after + temp_after;
}

/* One thread serving requests: the rename's reply waits for the kernel to be told, and
 * the thread serves the readers' lookups meanwhile. */
static void test_rw_fresh_rename_single_thread(void **state)
{
    (void)state;
    unsigned old = fresh_renames("rw", "ren-spin", true, NULL);
    if (old)
        fail_msg("%u of %d renames left the path naming the old tree", old, CYCLES);
}

static void test_rw_fresh_rename_threads(void **state)
{
    (void)state;
    unsigned old = fresh_renames("rw,spin=0", "ren-mt", true, NULL);
    if (old)
        fail_msg("%u of %d renames left the path naming the old tree", old, CYCLES);
}

/* A value at the root (the package's header.bin): the rename holds the root's lock until
 * it is answered, which the kernel needs to be told to forget the root's entries, so the
 * reply cannot wait for it (fuse_ll.c op_rename). The path reads the new bytes at once;
 * which number names it just after is printed, not asserted. */
static void test_rw_fresh_rename_at_root(void **state)
{
    (void)state;
    fresh_renames("rw", "ren-root", false, "header.bin");
}

/* sed -i from a shell whose working directory was entered before a commit (an older
 * tree's directory): each rename answered without waiting for the deadline (it did wait
 * for it, each one, when such renames waited for the notifier: the notifier drops the
 * older trees' entries, which takes the lock of the directory the rename holds), and
 * each value reads back its text. */
static void test_rw_fresh_rename_from_older_directory(void **state)
{
    (void)state;
    struct fresh_mount m;
    fresh_mount(&m, "ren-cwd.package", "m-ren-cwd", "rw");
    char dir[300], p[600];
    snprintf(dir, sizeof dir, "%s/header", m.mnt);
    int back = open(".", O_RDONLY | O_DIRECTORY);
    assert_true(back >= 0);
    assert_int_equal(chdir(dir), 0);
    /* a commit: the working directory is now a directory of the tree before */
    const char *names[] = {"major", "minor", "user_major", "user_minor", "flags", "created", "updated"};
    char text[64];
    size_t len = 0;
    snprintf(p, sizeof p, "%s/major", dir);
    assert_int_equal(read_text(p, text, sizeof text, &len), 0);
    assert_int_equal(write_text(p, text, len), 0);
    char cmd[512] = "sed -i 's/x/x/'";
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        strcat(cmd, " ");
        strcat(cmd, names[k]);
    }
    assert_int_equal(system(cmd), 0);
    assert_int_equal(fchdir(back), 0);
    close(back);
    unsigned long late = renames_late(m.mnt);
    printf("sed -i over %zu files from an older tree's directory: %lu answered at the deadline\n",
           sizeof names / sizeof names[0], late);
    assert_int_equal(late, 0);
    fresh_unmount_unchanged(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        mount_test(test_rw_fresh_open_single_thread),
        mount_test(test_rw_fresh_open_threads),
        mount_test(test_rw_fresh_rename_single_thread),
        mount_test(test_rw_fresh_rename_threads),
        mount_test(test_rw_fresh_rename_at_root),
        mount_test(test_rw_fresh_rename_from_older_directory),
        mount_test(test_no_sanitizer_reports),
    };
    return cmocka_run_group_tests(tests, mount_group_setup, mount_group_teardown);
}
