/* Packages through real mounts: every resource's data.bin as packed, each rig/ equal
 * to the same rig mounted alone (walked through the kernel: paths, sizes, contents, link
 * targets, xattrs), /by-type links, EIO after the file changes, and s3rig ls/extract.
 * A mount that cannot be made fails; S3RIG_NO_MOUNT_TESTS=1 skips these explicitly. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cmocka.h>

#include "fixture.h"
#include "fixture_dbpf.h"
#include "mountutil.h"
#include "testutil.h"
#include "tree_compare.h"

static void check_mounted_package(int variant)
{
    struct fxp_sample s;
    fxp_sample(&s, variant);
    char pkg[256], mnt[256], alone_mnt[256];
    char fname[32];
    snprintf(fname, sizeof fname, "sample%d.package", variant);
    write_fixture(fname, s.file, s.size, pkg, sizeof pkg);
    snprintf(mnt, sizeof mnt, "%s/m-pkg%d", tmpdir, variant);
    snprintf(alone_mnt, sizeof alone_mnt, "%s/m-alone", tmpdir);
    do_mount(pkg, mnt, NULL);
    int game = variant == 3 ? 3 : 4;
    size_t rigs = 0;
    for (size_t i = 0; i < s.n; i++) {
        const struct fxp_res *r = &s.res[i];
        char name[256], p[600];
        fxp_expected_name(name, sizeof name, game, r, s.names[i], s.dup[i]);
        snprintf(p, sizeof p, "%s/resources/%s/data.bin", mnt, name);
        if (r->comp == FXP_DELETED || r->comp == FXP_NULL) {
            struct stat st;
            assert_int_equal(stat(p, &st), -1);
            continue;
        }
        struct stat st;
        assert_int_equal(stat(p, &st), 0);
        assert_int_equal(st.st_size, r->len); /* before reading: the declared size */
        size_t len;
        uint8_t *b = slurp_path(p, &len);
        assert_int_equal(len, r->len);
        if (len)
            assert_memory_equal(b, r->data, len);
        free(b);
        char x[32];
        ssize_t k = getxattr(p, "user.s3rig.offset", x, sizeof x - 1);
        assert_true(k > 0);
        x[k] = 0;
        assert_int_equal(strtoull(x, NULL, 10), s.lay.offset[i]);
        if (r->type != 0x8EAF13DE && r->type != 0x6B20C4F3)
            continue;
        /* rig/ through the package equals the rig mounted alone */
        rigs++;
        char rigfile[256];
        write_fixture("alone.rig", r->data, r->len, rigfile, sizeof rigfile);
        do_mount(rigfile, alone_mnt, NULL);
        struct snap alone = {0}, nested = {0};
        snap_path(&alone, alone_mnt);
        snprintf(p, sizeof p, "%s/resources/%s/rig", mnt, name);
        snap_path(&nested, p);
        do_umount(alone_mnt);
        assert_true(alone.n > 10);
        snap_assert_equal(&alone, &nested);
        snap_free(&alone);
        snap_free(&nested);
    }
    assert_int_equal(rigs, variant == 5 ? 3 : 4);
    /* /by-type links resolve to the resource directories */
    char name[256], p[600], target[600];
    fxp_expected_name(name, sizeof name, game, &s.res[0], s.names[0], 0);
    snprintf(p, sizeof p, "%s/by-type/_RIG/%s", mnt, name);
    ssize_t k = readlink(p, target, sizeof target - 1);
    assert_true(k > 0);
    target[k] = 0;
    char want[600];
    snprintf(want, sizeof want, "../../resources/%s", name);
    assert_string_equal(target, want);
    snprintf(p, sizeof p, "%s/by-type/_RIG/%s/type", mnt, name);
    size_t len;
    uint8_t *b = slurp_path(p, &len);
    assert_int_equal(len, 11);
    assert_memory_equal(b, "0x8eaf13de\n", 11);
    free(b);
    do_umount(mnt);
    fxp_sample_free(&s);
}

static void test_mount_package_sims3(void **state)
{
    (void)state;
    check_mounted_package(3);
}

static void test_mount_package_sims4(void **state)
{
    (void)state;
    check_mounted_package(4);
    check_mounted_package(5);
}

/* A changed package: stored and expanded rigs inside give EIO, never stale bytes. */
static void test_mount_package_changes(void **state)
{
    (void)state;
    struct fxp_sample s;
    fxp_sample(&s, 3);
    char pkg[256], mnt[256], p[600], stored[256], packed[256];
    write_fixture("changing.package", s.file, s.size, pkg, sizeof pkg);
    snprintf(mnt, sizeof mnt, "%s/m-change", tmpdir);
    do_mount(pkg, mnt, NULL);
    fxp_expected_name(stored, sizeof stored, 3, &s.res[1], NULL, 0);       /* raw Granny, stored */
    fxp_expected_name(packed, sizeof packed, 3, &s.res[0], s.names[0], 0); /* wrapped rig, RefPack */
    char buf[64];
    /* list both rigs first (their directories parse the bytes), then change the file;
     * files never read before cannot come from the page cache */
    snprintf(p, sizeof p, "%s/resources/%s/rig/granny/sections/0", mnt, stored);
    DIR *d = opendir(p);
    assert_non_null(d);
    while (readdir(d))
        ;
    closedir(d);
    snprintf(p, sizeof p, "%s/resources/%s/rig/header", mnt, packed);
    d = opendir(p);
    assert_non_null(d);
    while (readdir(d))
        ;
    closedir(d);
    assert_int_equal(truncate(pkg, (off_t)s.size - 1), 0);
    snprintf(p, sizeof p, "%s/resources/%s/rig/granny/sections/0/stored.bin", mnt, stored);
    int fd = open(p, O_RDONLY);
    assert_true(fd >= 0);
    errno = 0;
    assert_int_equal(pread(fd, buf, 16, 0), -1);
    assert_int_equal(errno, EIO);
    close(fd);
    snprintf(p, sizeof p, "%s/resources/%s/rig/header.bin", mnt, packed);
    fd = open(p, O_RDONLY);
    assert_true(fd >= 0);
    errno = 0;
    assert_int_equal(pread(fd, buf, 16, 0), -1);
    assert_int_equal(errno, EIO);
    close(fd);
    do_umount(mnt);
    fxp_sample_free(&s);
}

static void test_cli_package(void **state)
{
    (void)state;
    struct fxp_sample s;
    fxp_sample(&s, 4);
    char pkg[256], out[16384], err[1024], dir[256];
    write_fixture("cli.package", s.file, s.size, pkg, sizeof pkg);
    char *ls[] = {(char *)cli_bin(), "ls", pkg, "/resources", NULL};
    assert_int_equal(run_capture(ls, out, sizeof out, err, sizeof err), 0);
    snprintf(dir, sizeof dir, "%s/extracted", tmpdir);
    char *ex[] = {(char *)cli_bin(), "extract", pkg, dir, NULL};
    assert_int_equal(run(ex, err, sizeof err), 0);
    assert_non_null(strstr(err, "2 without data")); /* the deleted and the null record */
    assert_null(strchr(err, '\r'));                 /* no progress: stderr is not a terminal */
    for (size_t i = 0; i < s.n; i++) {
        char name[256], line[300], p[600];
        fxp_expected_name(name, sizeof name, 4, &s.res[i], s.names[i], s.dup[i]);
        snprintf(line, sizeof line, "%s\n", name);
        if (!strstr(out, line))
            fail_msg("s3rig ls lacks %s", name);
        snprintf(p, sizeof p, "%s/%s", dir, name);
        struct stat st;
        if (s.res[i].comp == FXP_DELETED || s.res[i].comp == FXP_NULL) {
            assert_int_equal(stat(p, &st), -1);
            continue;
        }
        size_t len;
        uint8_t *b = slurp_path(p, &len);
        assert_int_equal(len, s.res[i].len);
        if (len)
            assert_memory_equal(b, s.res[i].data, len);
        free(b);
    }
    /* a package of another version: one line, exit 3 */
    s.file[4] = 3;
    write_fixture("v3.package", s.file, s.size, pkg, sizeof pkg);
    char mnt[256];
    snprintf(mnt, sizeof mnt, "%s/m-refused", tmpdir);
    mkdir(mnt, 0755);
    char *m[] = {(char *)mount_bin, pkg, mnt, NULL};
    assert_int_equal(run(m, err, sizeof err), 3);
    assert_non_null(strstr(err, "version 3.1 is not supported"));
    assert_ptr_equal(strchr(err, '\n'), err + strlen(err) - 1);
    assert_false(is_mounted(mnt));
    fxp_sample_free(&s);
}

/* ---- parallel requests through the kernel ---- */

#define PKG_LISTERS 4
#define PKG_READERS 4

struct pkg_work {
    char **rigs; /* fresh rig/ directories: listers take from, from + PKG_LISTERS, ... */
    size_t nrigs, from;
    uint64_t want;
    size_t want_nodes;
    char **files; /* data.bin files and their bytes as read serially */
    uint8_t **bytes;
    size_t *len, nfiles;
    unsigned seed;
    int errors, mismatches;
};

static void *pkg_lister(void *p)
{
    struct pkg_work *w = p;
    for (size_t i = w->from; i < w->nrigs; i += PKG_LISTERS) {
        uint64_t d;
        size_t nodes;
        if (mount_digest(w->rigs[i], &d, &nodes))
            w->errors++;
        else if (d != w->want || nodes != w->want_nodes)
            w->mismatches++;
    }
    return NULL;
}

static void *pkg_reader(void *p)
{
    struct pkg_work *w = p;
    uint8_t buf[8192];
    for (int it = 0; it < 600; it++) {
        size_t i = rand_r(&w->seed) % w->nfiles;
        size_t off = rand_r(&w->seed) % w->len[i], n = 1 + rand_r(&w->seed) % (w->len[i] - off);
        n = n < sizeof buf ? n : sizeof buf;
        int fd = open(w->files[i], O_RDONLY);
        if (fd < 0 || pread(fd, buf, n, (off_t)off) != (ssize_t)n || memcmp(buf, w->bytes[i] + off, n) != 0)
            w->mismatches++;
        if (fd >= 0)
            close(fd);
    }
    return NULL;
}

/* With -o spin=0 (libfuse's threads): a package of 2,000 resources, a wrapped rig every
 * 20th; threads list fresh rig/ directories (each a nested open in the daemon, with its
 * Granny object directories) while others read resources' data.bin. Every listing equals
 * the rig mounted alone, every read the serial read. scripts/tsan.sh runs it with a
 * ThreadSanitizer daemon. */
static void test_mount_package_parallel(void **state)
{
    (void)state;
    size_t size, rig_size;
    uint8_t *f = fxp_build_big(2000, 4, 20, &size);
    char pkg[256], mnt[256], alone[256], rigfile[256];
    write_fixture("parallel.package", f, size, pkg, sizeof pkg);
    free(f);
    struct fx_rig_layout rl;
    struct fx_gr2_layout gl;
    uint8_t *rig = fx_sample_rig(&rig_size, &rl, &gl, NULL);
    write_fixture("parallel.rig", rig, rig_size, rigfile, sizeof rigfile);
    free(rig);
    snprintf(alone, sizeof alone, "%s/m-par-alone", tmpdir);
    do_mount(rigfile, alone, NULL);
    uint64_t want;
    size_t want_nodes;
    assert_int_equal(mount_digest(alone, &want, &want_nodes), 0);
    assert_true(want_nodes > 100);
    do_umount(alone);

    snprintf(mnt, sizeof mnt, "%s/m-par", tmpdir);
    do_mount(pkg, mnt, "spin=0");
    char res[300];
    snprintf(res, sizeof res, "%s/resources", mnt);
    DIR *d = opendir(res);
    assert_non_null(d);
    static char *rigs[100], *files[64];
    static uint8_t *bytes[64];
    static size_t len[64];
    size_t nrigs = 0, nfiles = 0, n = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        /* the builder: resource i is a rig when i % 20 == 0, listed in index order */
        if (n % 20 == 0) {
            assert_true(nrigs < 100);
            assert_true(asprintf(&rigs[nrigs++], "%s/%s/rig", res, de->d_name) > 0);
        } else if (nfiles < 64) {
            assert_true(asprintf(&files[nfiles], "%s/%s/data.bin", res, de->d_name) > 0);
            bytes[nfiles] = slurp_path(files[nfiles], &len[nfiles]);
            assert_true(len[nfiles] >= 1024);
            nfiles++;
        }
        n++;
    }
    closedir(d);
    assert_int_equal(n, 2000);
    assert_int_equal(nrigs, 100);
    pthread_t th[PKG_LISTERS + PKG_READERS];
    struct pkg_work w[PKG_LISTERS + PKG_READERS];
    for (int k = 0; k < PKG_LISTERS + PKG_READERS; k++) {
        w[k] = (struct pkg_work){rigs, nrigs, (size_t)k, want, want_nodes, files, bytes, len, nfiles,
                                 (unsigned)k * 7919u + 5, 0, 0};
        assert_int_equal(pthread_create(&th[k], NULL, k < PKG_LISTERS ? pkg_lister : pkg_reader, &w[k]), 0);
    }
    for (int k = 0; k < PKG_LISTERS + PKG_READERS; k++) {
        pthread_join(th[k], NULL);
        if (w[k].errors || w[k].mismatches)
            fail_msg("%s %d: %d errors, %d mismatches", k < PKG_LISTERS ? "lister" : "reader", k, w[k].errors,
                     w[k].mismatches);
    }
    /* and serially again, now that every rig/ is populated */
    for (size_t i = 0; i < nrigs; i += 9) {
        uint64_t dg;
        size_t nodes;
        assert_int_equal(mount_digest(rigs[i], &dg, &nodes), 0);
        assert_true(dg == want);
    }
    do_umount(mnt);
    for (size_t i = 0; i < nrigs; i++)
        free(rigs[i]);
    for (size_t i = 0; i < nfiles; i++) {
        free(files[i]);
        free(bytes[i]);
    }
}

/* The count of expansions /info's cache line reports ("cache: N expansions, ..."). */
static uint64_t mounted_expansions(const char *mnt)
{
    char p[300];
    snprintf(p, sizeof p, "%s/info", mnt);
    size_t len;
    char *info = (char *)slurp_path(p, &len);
    char *line = info ? strstr(info, "\ncache: ") : NULL;
    if (!line)
        fail_msg("%s has no cache line", p);
    unsigned long long n = 0;
    assert_int_equal(sscanf(line, "\ncache: %llu expansions,", &n), 1);
    free(info);
    return n;
}

/* Through the kernel, as `cp` reads: a 4 MiB zlib resource under -o cache_mb=1 is expanded
 * once for the whole read-through (the open file holds it), not once per read (32 reads
 * of 128 KiB, each expanding it again once the bytes were dropped). */
static void test_mount_big_resource_once(void **state)
{
    (void)state;
    const size_t n = 4u << 20;
    uint8_t *data = fxp_pattern(n, 99); /* zlib has work to do, and it does not fit in the cache */
    struct fxp_res r = {0x00B2D882, 0, 1, data, n, FXP_ZLIB};
    struct fxp_opts o = {.game = 4};
    struct fxp_layout lay;
    size_t size;
    uint8_t *f = fxp_build(&o, &r, 1, &size, &lay);
    char pkg[256], mnt[256], name[200], path[600];
    write_fixture("big.package", f, size, pkg, sizeof pkg);
    free(f);
    snprintf(mnt, sizeof mnt, "%s/m-big", tmpdir);
    do_mount(pkg, mnt, "cache_mb=1");
    fxp_expected_name(name, sizeof name, 4, &r, NULL, 0);
    snprintf(path, sizeof path, "%s/resources/%s/data.bin", mnt, name);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_size, n);
    uint64_t before = mounted_expansions(mnt);
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    uint8_t *buf = malloc(128 << 10);
    size_t off = 0;
    for (ssize_t k; (k = read(fd, buf, 128 << 10)) > 0; off += (size_t)k)
        if (memcmp(buf, data + off, (size_t)k) != 0)
            fail_msg("bytes differ in the 128 KiB read at %zu", off);
    close(fd);
    assert_int_equal(off, n);
    assert_int_equal(mounted_expansions(mnt) - before, 1);
    do_umount(mnt);
    free(buf);
    free(data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        mount_test(test_mount_package_sims3), mount_test(test_mount_package_sims4),
        mount_test(test_mount_package_changes), mount_test(test_cli_package),
        mount_test(test_mount_package_parallel), mount_test(test_mount_big_resource_once),
        mount_test(test_no_sanitizer_reports),
    };
    return cmocka_run_group_tests_name("package mounts", tests, mount_group_setup, mount_group_teardown);
}
