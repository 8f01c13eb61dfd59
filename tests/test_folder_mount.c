/* A Mods folder through a real mount and through s3rig: the fixture folder
 * (fixture_folder.c) mounted as FILE, its load order, links read through the kernel to the
 * winner's bytes, conflicts and their identical files (sizes as read), a package's tree
 * equal to the package mounted alone, the whole mount walked through the kernel, and
 * `s3rig ls DIR /conflicts`, and 8 threads walking it at once under -o spin=0.
 * S3RIG_NO_MOUNT_TESTS=1 skips these explicitly. */
#include <dirent.h>
#include <errno.h>
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

#include "fixture_folder.h"
#include "mountutil.h"
#include "testutil.h"

#define K1 "S4_0333406C_00000000_0000000000001111%%+_XML.xml"
#define K2 "S4_0333406C_00000000_0000000000002222%%+_XML.xml"
#define KMAP "S4_0166038C_00000000_0000000000000000%%+_KEY.keyname"

static void make_mods(char *path, size_t plen)
{
    snprintf(path, plen, "%s/mods", tmpdir);
    if (access(path, F_OK) == 0)
        return;
    assert_int_equal(mkdir(path, 0755), 0);
    assert_int_equal(fxf_build(path, true), 0);
}

static void expect_file(const char *path, const char *want)
{
    size_t len;
    uint8_t *b = slurp_path(path, &len);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal((size_t)st.st_size, len); /* a size read is the size stat gave */
    if (len != strlen(want) || memcmp(b, want, len) != 0)
        fail_msg("%s holds '%.*s', want '%s'", path, (int)len, (const char *)b, want);
    free(b);
}

static void expect_target(const char *path, const char *want)
{
    char target[1024];
    ssize_t k = readlink(path, target, sizeof target - 1);
    if (k < 0)
        fail_msg("%s: %s", path, strerror(errno));
    target[k] = 0;
    assert_string_equal(target, want);
}

static void test_mount_folder(void **state)
{
    (void)state;
    char mods[256], mnt[256], p[1024];
    make_mods(mods, sizeof mods);
    snprintf(mnt, sizeof mnt, "%s/m-folder", tmpdir);
    do_mount(mods, mnt, NULL);
    snprintf(p, sizeof p, "%s/info", mnt);
    size_t len;
    char *info = (char *)slurp_path(p, &len);
    assert_non_null(strstr(info, "format: folder\n"));
    assert_non_null(strstr(info, "packages: 7\n"));
    assert_non_null(strstr(info, "conflicts: 3\n"));
    free(info);
    snprintf(p, sizeof p, "%s/load-order", mnt);
    expect_file(p, "500\ta.package\n500\tb/B.package\n500\tcopy/a-copy.package\n500\td1/d2/d3/d4/d5/five.package\n"
                   "600\tOverride/o.package\n-\ts1.ts4script\n-\tsub/s2.ts4script\n500\tZx.package\n500\t_x.package\n");
    /* the key in effect, through the kernel: Override/o's (600) */
    snprintf(p, sizeof p, "%s/keys/%s", mnt, K1);
    expect_target(p, "../files/Override/o.package/resources/" K1);
    snprintf(p, sizeof p, "%s/keys/%s/data.bin", mnt, K1);
    expect_file(p, fxf_bytes("Override/o.package", FXF_K1));
    snprintf(p, sizeof p, "%s/conflicts/%s/1/data.bin", mnt, K1);
    expect_file(p, fxf_bytes("a.package", FXF_K1));
    snprintf(p, sizeof p, "%s/conflicts/%s/identical", mnt, K1);
    expect_file(p, "no\n");
    snprintf(p, sizeof p, "%s/conflicts/%s/identical", mnt, K2);
    expect_file(p, "yes\n");
    snprintf(p, sizeof p, "%s/conflicts/%s/winner/data.bin", mnt, K2);
    expect_file(p, "same two");
    snprintf(p, sizeof p, "%s/script-conflicts/%s/winner", mnt, FXF_MODULE);
    expect_file(p, FXF_MODULE_BYTES);
    snprintf(p, sizeof p, "%s/conflicts.csv", mnt);
    expect_file(p, "key,type,providers,winner,identical\n" KMAP ",_KEY,2,copy/a-copy.package,yes\n" K1
                   ",_XML,5,Override/o.package,no\n" K2 ",_XML,4,_x.package,yes\n");

    /* a package's tree is what mounting it alone gives */
    char alone[256], pkg[512];
    uint64_t d1, d2;
    size_t n1, n2;
    snprintf(alone, sizeof alone, "%s/m-alone", tmpdir);
    snprintf(pkg, sizeof pkg, "%s/b/B.package", mods);
    do_mount(pkg, alone, NULL);
    snprintf(p, sizeof p, "%s/files/b/B.package", mnt);
    assert_int_equal(mount_digest(p, &d1, &n1), 0);
    assert_int_equal(mount_digest(alone, &d2, &n2), 0);
    do_umount(alone);
    assert_int_equal(n1, n2);
    assert_true(d1 == d2);

    /* everything, through the kernel: every file reads, every link is read */
    assert_int_equal(mount_digest(mnt, &d1, &n1), 0);
    assert_true(n1 > 100);
    do_umount(mnt);
}

static void test_cli_folder(void **state)
{
    (void)state;
    char mods[256], out[8192], err[1024];
    make_mods(mods, sizeof mods);
    char *ls[] = {(char *)cli_bin(), "ls", mods, "/conflicts", NULL};
    assert_int_equal(run_capture(ls, out, sizeof out, err, sizeof err), 0);
    assert_string_equal(out, KMAP "\n" K1 "\n" K2 "\n");
    char *cat[] = {(char *)cli_bin(), "cat", mods, "/keys/" K2 "/data.bin", NULL};
    assert_int_equal(run_capture(cat, out, sizeof out, err, sizeof err), 0);
    assert_string_equal(out, "same two");
}

/* With -o spin=0 (libfuse's threads): 8 threads walk the whole folder mount at once
 * (the first listings, package views opened, identical files compared while others read):
 * every walk reads everything, and the subtrees that do not change as parsing goes on
 * (/conflicts with its identical files, /script-conflicts, a package's resources/; the
 * packages' info files do change: they say what has been parsed so far) are the same for
 * all, and the same once more alone on the warm mount. */
#define WALKERS 8
static const char *const stable[] = {"conflicts", "script-conflicts", "files/a.package/resources", "by-type"};
#define NSTABLE (sizeof stable / sizeof stable[0])
struct walker {
    const char *mnt;
    uint64_t digest[NSTABLE];
    size_t nodes[NSTABLE], all_nodes;
    int rc;
};

static void *walk_mount(void *p)
{
    struct walker *w = p;
    uint64_t all;
    char path[512];
    w->rc = mount_digest(w->mnt, &all, &w->all_nodes);
    for (size_t i = 0; i < NSTABLE && w->rc == 0; i++) {
        snprintf(path, sizeof path, "%s/%s", w->mnt, stable[i]);
        w->rc = mount_digest(path, &w->digest[i], &w->nodes[i]);
    }
    return NULL;
}

static void test_mount_folder_parallel(void **state)
{
    (void)state;
    char mods[256], mnt[256];
    make_mods(mods, sizeof mods);
    snprintf(mnt, sizeof mnt, "%s/m-folder-par", tmpdir);
    do_mount(mods, mnt, "spin=0");
    pthread_t th[WALKERS];
    struct walker w[WALKERS];
    for (int k = 0; k < WALKERS; k++) {
        w[k] = (struct walker){.mnt = mnt};
        assert_int_equal(pthread_create(&th[k], NULL, walk_mount, &w[k]), 0);
    }
    for (int k = 0; k < WALKERS; k++)
        assert_int_equal(pthread_join(th[k], NULL), 0);
    struct walker after = {.mnt = mnt};
    walk_mount(&after);
    do_umount(mnt);
    assert_int_equal(after.rc, 0);
    assert_true(after.all_nodes > 100);
    for (int k = 0; k < WALKERS; k++) {
        assert_int_equal(w[k].rc, 0);
        assert_int_equal(w[k].all_nodes, after.all_nodes);
        for (size_t i = 0; i < NSTABLE; i++) {
            assert_int_equal(w[k].nodes[i], after.nodes[i]);
            if (w[k].digest[i] != after.digest[i])
                fail_msg("walker %d saw another %s", k, stable[i]);
        }
    }
}

/* A plain listing of the root measures none of its volatile files (READDIRPLUS gives
 * them as names and kinds); /info says the exact identical_packages from the first read
 * (a.package and its copy: 2), its stat size the bytes a read then gives, and
 * duplicates.csv answers a stat. */
static void test_mount_root_listing_hashes_nothing(void **state)
{
    (void)state;
    char mods[256], mnt[512], p[1024];
    make_mods(mods, sizeof mods);
    make_mountpoint("m-rootls", mnt, sizeof mnt);
    do_mount(mods, mnt, NULL);
    DIR *d = opendir(mnt);
    assert_non_null(d);
    unsigned n = 0, regular = 0;
    for (struct dirent *e; (e = readdir(d));) {
        n++;
        regular += e->d_type == DT_REG;
    }
    closedir(d);
    assert_int_equal(n, 2 + 10); /* . .. and the layout's ten entries */
    assert_int_equal(regular, 5); /* info load-order skipped conflicts.csv duplicates.csv */
    struct stat st;
    snprintf(p, sizeof p, "%s/info", mnt);
    assert_int_equal(stat(p, &st), 0);
    size_t len;
    char *info = (char *)slurp_path(p, &len);
    assert_int_equal((size_t)st.st_size, len);
    assert_non_null(strstr(info, "identical_packages: 2\n"));
    free(info);
    snprintf(p, sizeof p, "%s/duplicates.csv", mnt);
    assert_int_equal(stat(p, &st), 0);
    assert_true(st.st_size > 0);
    do_umount(mnt);
}

/* A directory of more than READDIR_BARE_ABOVE (fuse_ll.c: 4,096) entries is listed by
 * READDIRPLUS as names and kinds alone: the listing still gives every name once with its
 * kind, and each entry then answers a stat and a listing of its own (looked up). The
 * folder: fxf_write_big's 40 packages of 4,200 entries, each tenth key shared by four
 * neighbouring packages: 40 / 4 * 420 = 4,200 conflicts of 4 providers. */
static void test_mount_big_listing(void **state)
{
    (void)state;
    char mods[512], mnt[512], p[1024];
    snprintf(mods, sizeof mods, "%s/mods-big", tmpdir);
    assert_int_equal(mkdir(mods, 0755), 0);
    assert_int_equal(fxf_write_big(mods, 40, 40 * 4200), 0);
    make_mountpoint("m-big", mnt, sizeof mnt);
    do_mount(mods, mnt, NULL);
    snprintf(p, sizeof p, "%s/conflicts", mnt);
    DIR *d = opendir(p);
    assert_non_null(d);
    unsigned n = 0, dirs = 0;
    char first[256] = "", last[256] = "";
    for (struct dirent *e; (e = readdir(d));) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        n++;
        dirs += e->d_type == DT_DIR;
        if (!first[0])
            snprintf(first, sizeof first, "%s", e->d_name);
        snprintf(last, sizeof last, "%s", e->d_name);
    }
    closedir(d);
    assert_int_equal(n, 4200);
    assert_int_equal(dirs, 4200);
    /* keys 0xF000000000000000 | group << 20 | j, by key: the first and last of them */
    assert_string_equal(first, "S4_0333406C_00000000_F000000000000000%%+_XML.xml");
    assert_string_equal(last, "S4_0333406C_00000000_F00000000090105E%%+_XML.xml");
    struct stat st;
    snprintf(p, sizeof p, "%s/conflicts/%s", mnt, last);
    assert_int_equal(stat(p, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    snprintf(p, sizeof p, "%s/conflicts/%s/4", mnt, last);
    assert_int_equal(lstat(p, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    snprintf(p, sizeof p, "%s/conflicts/%s/winner/data.bin", mnt, first);
    expect_file(p, "0123456789abcdef");
    do_umount(mnt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        mount_test(test_mount_folder),
        mount_test(test_cli_folder),
        mount_test(test_mount_folder_parallel),
        mount_test(test_mount_big_listing),
        mount_test(test_mount_root_listing_hashes_nothing),
        mount_test(test_no_sanitizer_reports),
    };
    return cmocka_run_group_tests_name("folder mounts", tests, mount_group_setup, mount_group_teardown);
}
