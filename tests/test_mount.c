/* Mount tests: run mount.s3rig for real on generated files and check the mounted tree
 * through the kernel (paths, bytes, sizes, xattrs, errors), then unmount. A mount that
 * cannot be made fails the test; set S3RIG_NO_MOUNT_TESTS=1 to skip them explicitly.
 * Sanitizer reports of the daemon are written to files (ASAN/UBSAN log_path) and any
 * such file fails the suite. */
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
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "expect.h"
#include "fixture.h"
#include "fixture_rig_clear.h"
#include "fixture_gr2obj.h"
#include "expect_t1.h"
#include "expect_t1x.h"
#include "fixture_t2fs.h"
#include "gr2obj_check.h"
#include "mountutil.h"
#include "tree_compare.h"
#include "tree_probe.h"
#include "parse/t2fs.h"
#include "tree_compare.h"

/* A generated t2fs file (fxt_sample(seed, models, compressed, be)) written under tmpdir
 * as NAME, with a mount point NAME.mnt. */
struct t2fs_case {
    struct fxt *root;
    uint8_t *file;
    size_t size, prefix, trailer;
    char path[256], mnt[256];
};

static void t2fs_case_make(struct t2fs_case *c, const char *name, unsigned seed, uint32_t models, bool be,
                           size_t prefix, size_t trailer)
{
    char mname[128];
    c->root = fxt_sample(seed, models, true, be);
    c->prefix = prefix;
    c->trailer = trailer;
    c->file = fxt_write(c->root, be, prefix, trailer, &c->size);
    write_fixture(name, c->file, c->size, c->path, sizeof c->path);
    snprintf(mname, sizeof mname, "%s.mnt", name);
    make_mountpoint(mname, c->mnt, sizeof c->mnt);
}

static void t2fs_case_free(struct t2fs_case *c)
{
    free(c->file);
    fxt_free(c->root);
}

/* The sample RIG (fx_sample_rig) written under tmpdir as NAME, mounted on NAME.mnt with
 * opts, and what it should show (l). rig_case_end unmounts and frees. */
struct rig_case {
    uint8_t *file;
    size_t size;
    struct fx_rig_layout rl;
    struct fx_gr2_layout gl;
    char names[FX_SAMPLE_BONES][32];
    char path[256], mnt[256];
    struct expect_list l;
};

static void rig_case_mount(struct rig_case *c, const char *name, const char *opts)
{
    char mname[128];
    c->file = fx_sample_rig(&c->size, &c->rl, &c->gl, c->names);
    write_fixture(name, c->file, c->size, c->path, sizeof c->path);
    snprintf(mname, sizeof mname, "%s.mnt", name);
    make_mountpoint(mname, c->mnt, sizeof c->mnt);
    do_mount(c->path, c->mnt, opts);
    c->l = (struct expect_list){0};
    ex_sample_rig(&c->l, c->file, c->size, &c->rl, &c->gl, c->names);
}

static void rig_case_end(struct rig_case *c)
{
    ex_free(&c->l);
    do_umount(c->mnt);
    free(c->file);
}

/* ---- the mounted probe ---- */

static void full_path(void *ctx, const char *path, char *out, size_t n)
{
    snprintf(out, n, "%s%s", (const char *)ctx, strcmp(path, "/") == 0 ? "" : path);
}

static int mp_stat(void *ctx, const char *path, enum expect_kind *kind, uint64_t *size)
{
    char p[1024];
    full_path(ctx, path, p, sizeof p);
    struct stat st;
    if (lstat(p, &st) != 0)
        return -errno;
    *kind = S_ISDIR(st.st_mode) ? EX_DIR : S_ISLNK(st.st_mode) ? EX_LINK : EX_FILE;
    *size = (uint64_t)st.st_size;
    return 0;
}

static int mp_read(void *ctx, const char *path, uint8_t **buf, size_t *len)
{
    char p[1024];
    full_path(ctx, path, p, sizeof p);
    int fd = open(p, O_RDONLY);
    if (fd < 0)
        return -errno;
    size_t cap = 4096, n = 0;
    *buf = malloc(cap);
    for (;;) {
        if (n == cap)
            *buf = realloc(*buf, cap *= 2);
        ssize_t k = read(fd, *buf + n, cap - n);
        if (k < 0) {
            int e = errno;
            close(fd);
            free(*buf);
            return -e;
        }
        if (k == 0)
            break;
        n += (size_t)k;
    }
    close(fd);
    *len = n;
    return 0;
}

static int mp_readlink(void *ctx, const char *path, char **target)
{
    char p[1024], t[1024];
    full_path(ctx, path, p, sizeof p);
    ssize_t n = readlink(p, t, sizeof t - 1);
    if (n < 0)
        return -errno;
    t[n] = 0;
    *target = strdup(t);
    return 0;
}

static long mp_getxattr(void *ctx, const char *path, const char *name, char *value, size_t size)
{
    char p[1024];
    full_path(ctx, path, p, sizeof p);
    ssize_t n = lgetxattr(p, name, value, size - 1);
    if (n < 0)
        return -errno;
    value[n] = 0;
    return n;
}

static int mp_list(void *ctx, const char *path, char ***names)
{
    char p[1024];
    full_path(ctx, path, p, sizeof p);
    DIR *d = opendir(p);
    if (!d)
        return -errno;
    int n = 0, cap = 16;
    *names = malloc(cap * sizeof **names);
    struct dirent *de;
    while ((de = readdir(d))) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        if (n == cap)
            *names = realloc(*names, (cap *= 2) * sizeof **names);
        (*names)[n++] = strdup(de->d_name);
    }
    closedir(d);
    return n;
}

static struct probe mount_probe(const char *mnt)
{
    return (struct probe){(void *)mnt, mp_stat, mp_read, mp_readlink, mp_getxattr, mp_list, true};
}

/* Reads path under mnt through the kernel and asserts it holds exactly the n bytes at want. */
static void mnt_expect_bytes(const char *mnt, const char *path, const void *want, size_t n)
{
    struct probe p = mount_probe(mnt);
    probe_expect_bytes(&p, path, want, n);
}

/* Reads path under mnt through the kernel and asserts it contains needle. */
static void mnt_expect_has(const char *mnt, const char *path, const char *needle)
{
    struct probe p = mount_probe(mnt);
    ex_holds(&p, path, needle);
}

/* ---- tests ---- */

static void test_mount_sample_rig(void **state)
{
    (void)state;
    struct rig_case c;
    rig_case_mount(&c, "sample.rig", NULL);
    const char *path = c.path, *mnt = c.mnt;
    struct probe p = mount_probe(mnt);
    ex_check(&c.l, &p);

    /* attributes: read-only modes, the source's mtime, owner = the mounting user */
    struct stat src, st;
    assert_int_equal(stat(path, &src), 0);
    char f[512];
    snprintf(f, sizeof f, "%s/granny/header/version", mnt);
    assert_int_equal(stat(f, &st), 0);
    assert_int_equal(st.st_mode, S_IFREG | 0444);
    assert_int_equal(st.st_mtime, src.st_mtime);
    assert_int_equal(st.st_uid, getuid());
    snprintf(f, sizeof f, "%s/ik_chains", mnt);
    assert_int_equal(stat(f, &st), 0);
    assert_int_equal(st.st_mode, S_IFDIR | 0555);
    /* inode numbers are stable while mounted */
    struct stat again;
    assert_int_equal(stat(f, &again), 0);
    assert_int_equal(st.st_ino, again.st_ino);

    /* nothing is writable */
    snprintf(f, sizeof f, "%s/info", mnt);
    errno = 0;
    assert_int_equal(open(f, O_WRONLY), -1);
    assert_int_equal(errno, EROFS);
    assert_int_equal(open(f, O_RDWR), -1);
    assert_int_equal(errno, EROFS);
    snprintf(f, sizeof f, "%s/new", mnt);
    assert_int_equal(open(f, O_WRONLY | O_CREAT, 0644), -1);
    assert_int_equal(errno, EROFS);
    assert_int_equal(mkdir(f, 0755), -1);
    assert_int_equal(errno, EROFS);
    snprintf(f, sizeof f, "%s/header.bin", mnt);
    assert_int_equal(unlink(f), -1);
    assert_int_equal(errno, EROFS);
    assert_int_equal(setxattr(f, "user.x", "1", 1, 0), -1);
    assert_int_equal(errno, EROFS);

    /* xattr errors: ENODATA for unknown names (never ENOSYS), ERANGE for short buffers */
    char v[4];
    assert_int_equal(getxattr(f, "user.nope", v, sizeof v), -1);
    assert_int_equal(errno, ENODATA);
    assert_int_equal(getxattr(f, "user.s3rig.type", v, 2), -1);
    assert_int_equal(errno, ERANGE);
    assert_int_equal(getxattr(f, "user.s3rig.length", NULL, 0), 2);
    char list[256];
    ssize_t n = listxattr(f, list, sizeof list);
    assert_int_equal(n, (ssize_t)(sizeof "user.s3rig.offset" + sizeof "user.s3rig.length" + sizeof "user.s3rig.type"));
    snprintf(f, sizeof f, "%s/nonexistent", mnt);
    assert_int_equal(stat(f, &st), -1);
    assert_int_equal(errno, ENOENT);

    struct statvfs sv;
    assert_int_equal(statvfs(mnt, &sv), 0);
    assert_true(sv.f_flag & ST_RDONLY);
    /* mount(8)'s view: subtype and fsname */
    FILE *mi = fopen("/proc/self/mounts", "r");
    char line[1024];
    bool found = false;
    while (fgets(line, sizeof line, mi))
        if (strstr(line, mnt) && strstr(line, "fuse.s3rig") && strncmp(line, path, strlen(path)) == 0)
            found = true;
    fclose(mi);
    assert_true(found);
    rig_case_end(&c);
}

static void test_mount_gr2_variants(void **state)
{
    (void)state;
    static const char *const sigs[] = {"le32-old", "le32", "le64", "be32", "be64", "be32-alt"};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        for (int version = 6; version <= 7; version++) {
            size_t size;
            struct fx_gr2_layout gl;
            uint8_t *file = fx_sample_gr2(sigs[i], version, &size, &gl);
            char name[64], path[256], mnt[256];
            snprintf(name, sizeof name, "%s-v%d.gr2", sigs[i], version);
            write_fixture(name, file, size, path, sizeof path);
            make_mountpoint("m_gr2", mnt, sizeof mnt);
            do_mount(path, mnt, NULL);
            struct expect_list l = {0};
            ex_sample_gr2(&l, file, size, &gl, version);
            struct probe p = mount_probe(mnt);
            ex_check(&l, &p);
            ex_free(&l);
            do_umount(mnt);
            free(file);
        }
    }
}

static void test_mount_options(void **state)
{
    (void)state;
    size_t size;
    struct fx_gr2_layout gl;
    uint8_t *file = fx_sample_gr2("le32", 7, &size, &gl);
    char path[256], mnt[256], f[512];
    write_fixture("opts.gr2", file, size, path, sizeof path);
    make_mountpoint("m_opts", mnt, sizeof mnt);
    do_mount(path, mnt, "uid=1234,gid=4321,umask=027,noatime");
    struct stat st;
    snprintf(f, sizeof f, "%s/granny.gr2", mnt);
    assert_int_equal(stat(f, &st), 0);
    assert_int_equal(st.st_uid, 1234);
    assert_int_equal(st.st_gid, 4321);
    assert_int_equal(st.st_mode, S_IFREG | 0440);
    snprintf(f, sizeof f, "%s/granny", mnt);
    assert_int_equal(stat(f, &st), 0);
    assert_int_equal(st.st_mode, S_IFDIR | 0550);
    do_umount(mnt);
    free(file);
}

/* mount -t s3rig goes through /sbin/mount.s3rig: link ours there for the test. */
static void test_mount_helper(void **state)
{
    (void)state;
    char target[512];
    ssize_t tl = readlink("/sbin/mount.s3rig", target, sizeof target - 1);
    bool ours = false;
    char abs[512];
    assert_non_null(realpath(mount_bin, abs));
    if (tl < 0) {
        assert_int_equal(symlink(abs, "/sbin/mount.s3rig"), 0);
        ours = true;
    }
    size_t size;
    struct fx_rig_layout rl;
    struct fx_gr2_layout gl;
    char names[FX_SAMPLE_BONES][32];
    uint8_t *file = fx_sample_rig(&size, &rl, &gl, names);
    char path[256], mnt[256], f[512], err[1024];
    write_fixture("helper.rig", file, size, path, sizeof path);
    make_mountpoint("m_helper", mnt, sizeof mnt);
    /* -f is "fake" for a helper: validates, mounts nothing */
    char *fake[] = {"mount", "-f", "-t", "s3rig", path, mnt, NULL};
    assert_int_equal(run(fake, err, sizeof err), 0);
    assert_false(is_mounted(mnt));
    char *real[] = {"mount", "-t", "s3rig", "-o", "ro,nofail,umask=022,uid=77", path, mnt, NULL};
    int rc = run(real, err, sizeof err);
    if (rc)
        fail_msg("mount -t s3rig: exit %d: %s", rc, err);
    assert_true(is_mounted(mnt));
    struct stat st;
    snprintf(f, sizeof f, "%s/ik_chains/0/pole", mnt);
    assert_int_equal(stat(f, &st), 0);
    assert_int_equal(st.st_uid, 77);
    mnt_expect_bytes(mnt, "/ik_chains/0/pole", "5\n", 2);
    /* a bad file through the helper: mount(8) reports failure */
    char bad[256];
    write_fixture("helper.bad", "not a rig at all", 16, bad, sizeof bad);
    char *badmount[] = {"mount", "-t", "s3rig", bad, mnt, NULL};
    assert_int_not_equal(run(badmount, err, sizeof err), 0);
    char *um[] = {"umount", mnt, NULL};
    assert_int_equal(run(um, err, sizeof err), 0);
    assert_false(is_mounted(mnt));
    if (ours)
        unlink("/sbin/mount.s3rig");
    free(file);
}

static void expect_refusal(const char *file, const char *mnt, int want_rc, const char *want_text)
{
    char err[1024];
    char *argv[] = {(char *)mount_bin, (char *)file, (char *)mnt, NULL};
    int rc = run(argv, err, sizeof err);
    if (rc != want_rc)
        fail_msg("%s: exit %d, expected %d (%s)", file, rc, want_rc, err);
    if (!strstr(err, want_text))
        fail_msg("%s: message '%s' lacks '%s'", file, err, want_text);
    /* exactly one line */
    assert_non_null(strchr(err, '\n'));
    assert_null(strchr(err, '\n') + 1 < err + strlen(err) ? strchr(strchr(err, '\n') + 1, '\n') : NULL);
    assert_false(is_mounted(mnt));
}

static void test_mount_refusals(void **state)
{
    (void)state;
    char path[256], mnt[256];
    make_mountpoint("m_bad", mnt, sizeof mnt);
    write_fixture("garbage.bin", "\x01\x02\x03garbage garbage garbage", 26, path, sizeof path);
    expect_refusal(path, mnt, 3, "unrecognised format");
    write_fixture("empty.bin", "", 0, path, sizeof path);
    expect_refusal(path, mnt, 3, "empty file");
    snprintf(path, sizeof path, "%s/does-not-exist", tmpdir);
    expect_refusal(path, mnt, 2, "No such file");
    /* a wrapped RIG cut inside its header, and a GR2 with an unknown version */
    size_t size;
    struct fx_rig_layout rl;
    struct fx_gr2_layout gl;
    char names[FX_SAMPLE_BONES][32];
    uint8_t *file = fx_sample_rig(&size, &rl, &gl, names);
    write_fixture("cut.rig", file, 30, path, sizeof path);
    expect_refusal(path, mnt, 3, "header needs 52 bytes");
    free(file);
    file = fx_sample_gr2("le32", 7, &size, &gl);
    file[0x20] = 42;
    write_fixture("v42.gr2", file, size, path, sizeof path);
    expect_refusal(path, mnt, 3, "unsupported version 42");
    free(file);
    /* usage errors */
    char err[512];
    char *noargs[] = {(char *)mount_bin, NULL};
    assert_int_equal(run(noargs, err, sizeof err), 1);
    char *badopt[] = {(char *)mount_bin, "-o", "umask=999", path, mnt, NULL};
    assert_int_equal(run(badopt, err, sizeof err), 1);
    assert_non_null(strstr(err, "umask=999"));
    char *badspin[] = {(char *)mount_bin, "-o", "spin=-5", path, mnt, NULL};
    assert_int_equal(run(badspin, err, sizeof err), 1);
    assert_non_null(strstr(err, "spin=-5"));
    char *notdir[] = {(char *)mount_bin, path, path, NULL};
    file = fx_sample_gr2("le32", 7, &size, &gl);
    write_fixture("ok.gr2", file, size, path, sizeof path);
    free(file);
    assert_int_equal(run(notdir, err, sizeof err), 4);
    char *help[] = {(char *)mount_bin, "--help", NULL};
    assert_int_equal(run(help, err, sizeof err), 0);
}

static void test_mount_broken_parts(void **state)
{
    (void)state;
    size_t size;
    struct fx_rig_layout rl;
    struct fx_gr2_layout gl;
    char names[FX_SAMPLE_BONES][32];
    uint8_t *file = fx_sample_rig(&size, &rl, &gl, names);
    for (int i = 0; i < 4; i++)
        file[rl.ik_pos + i] = 0xff; /* IK count 0xFFFFFFFF */
    char path[256], mnt[256];
    write_fixture("broken.rig", file, size, path, sizeof path);
    make_mountpoint("m_broken", mnt, sizeof mnt);
    do_mount(path, mnt, NULL);
    uint8_t *buf;
    size_t len;
    assert_int_equal(mp_read(mnt, "/ik_chains.error", &buf, &len), 0);
    assert_non_null(memmem(buf, len, "count 4294967295", 16));
    free(buf);
    enum expect_kind k;
    uint64_t sz;
    assert_int_equal(mp_stat(mnt, "/ik_chains", &k, &sz), -ENOENT);
    mnt_expect_bytes(mnt, "/full_bone_list", "0\n1\n2\n3\n4\n5\n", 12);
    assert_int_equal(mp_read(mnt, "/granny/sections/0/data.bin", &buf, &len), 0);
    assert_int_equal(len, gl.data_size[0]);
    free(buf);
    /* the skeleton still resolves without the IK block */
    assert_int_equal(mp_read(mnt, "/full_bone_list.names", &buf, &len), 0);
    char want[256];
    snprintf(want, sizeof want, "%s\n%s\n", names[0], names[1]);
    assert_memory_equal(buf, want, strlen(want));
    free(buf);
    do_umount(mnt);
    free(file);
}

/* The source changes under the mount: reads of its bytes give EIO, the mount stays. */
static void test_mount_source_changes(void **state)
{
    (void)state;
    size_t size;
    struct fx_gr2_layout gl;
    uint8_t *file = fx_sample_gr2("le32", 7, &size, &gl);
    char path[256], mnt[256];
    make_mountpoint("m_change", mnt, sizeof mnt);
    for (int mode = 0; mode < 3; mode++) {
        write_fixture("change.gr2", file, size, path, sizeof path);
        do_mount(path, mnt, NULL);
        uint8_t *buf;
        size_t len;
        assert_int_equal(mp_read(mnt, "/granny.gr2", &buf, &len), 0);
        assert_int_equal(len, size);
        free(buf);
        if (mode == 0) {
            assert_int_equal(truncate(path, (off_t)(size / 2)), 0);
        } else if (mode == 1) {
            int fd = open(path, O_WRONLY);
            assert_true(fd >= 0);
            struct timespec ts[2] = {{0, UTIME_OMIT}, {12345, 0}};
            assert_int_equal(pwrite(fd, "XXXX", 4, 100), 4);
            assert_int_equal(futimens(fd, ts), 0);
            close(fd);
        } else {
            assert_int_equal(unlink(path), 0);
        }
        /* the page cache may hold the earlier read: drop it by reading a fresh range file */
        assert_int_equal(mp_read(mnt, "/granny/sections/2/stored.bin", &buf, &len), -EIO);
        /* the mount is still up and serves what does not need the file */
        assert_true(is_mounted(mnt));
        assert_int_equal(mp_read(mnt, "/granny/header/version", &buf, &len), 0);
        assert_memory_equal(buf, "7\n", 2);
        free(buf);
        do_umount(mnt);
    }
    free(file);
}

/* 0 when the directory lists, else the errno of opening or reading it. */
static int list_errno(const char *mnt, const char *rel)
{
    char p[1024];
    snprintf(p, sizeof p, "%s%s", mnt, rel);
    DIR *d = opendir(p);
    if (!d)
        return errno;
    errno = 0;
    while (readdir(d))
        ;
    int e = errno;
    closedir(d);
    return e;
}

/* A t2fs directory not yet listed when the file changes: its listing is EIO, although the
 * read-ahead window still holds the bytes it would have been parsed from. */
static void test_mount_source_changes_t2fs(void **state)
{
    (void)state;
    struct t2fs_case c;
    t2fs_case_make(&c, "change.t2fs", 21, 3, false, 0, 0);
    do_mount(c.path, c.mnt, NULL);
    assert_int_equal(list_errno(c.mnt, "/root"), 0);
    int fd = open(c.path, O_WRONLY);
    assert_true(fd >= 0);
    struct timespec ts[2] = {{0, UTIME_OMIT}, {12345, 0}};
    assert_int_equal(pwrite(fd, c.file + c.size - 4, 4, (off_t)c.size - 4), 4); /* same bytes, new mtime */
    assert_int_equal(futimens(fd, ts), 0);
    close(fd);
    assert_int_equal(list_errno(c.mnt, "/root/0"), EIO);
    assert_true(is_mounted(c.mnt));
    assert_int_equal(list_errno(c.mnt, "/root"), 0); /* listed before: still there */
    do_umount(c.mnt);
    t2fs_case_free(&c);
}

/* A Granny object tree not yet listed when the file changes: its listing is EIO, never
 * a tree built from a changed file, nor an empty directory (earlier: /granny listed then
 * showed root.error "read error" and no root, for good), although the sections read
 * before the change are still in the cache. /granny itself still lists. */
static void test_mount_source_changes_gr2_tree(void **state)
{
    (void)state;
    struct fxg_opts o = {.sig = "le32", .version = 7, .nbones = 5};
    struct fxg_result r;
    size_t size;
    uint8_t *file = fxg_build(&o, &size, &r);
    char path[256], mnt[256];
    make_mountpoint("m_change_tree", mnt, sizeof mnt);
    for (int listed = 0; listed < 2; listed++) {
        write_fixture("change-tree.gr2", file, size, path, sizeof path);
        do_mount(path, mnt, NULL);
        if (listed) { /* the root listed and its sections cached before the change */
            assert_int_equal(list_errno(mnt, "/granny"), 0);
            assert_int_equal(list_errno(mnt, "/granny/root"), 0);
        }
        int fd = open(path, O_WRONLY);
        assert_true(fd >= 0);
        struct timespec ts[2] = {{0, UTIME_OMIT}, {12345, 0}};
        assert_int_equal(pwrite(fd, file + size - 4, 4, (off_t)size - 4), 4); /* same bytes, new mtime */
        assert_int_equal(futimens(fd, ts), 0);
        close(fd);
        const char *dir = listed ? "/granny/root/Skeletons" : "/granny/root";
        assert_int_equal(list_errno(mnt, dir), EIO);
        assert_int_equal(list_errno(mnt, dir), EIO); /* again: not an empty directory later */
        assert_int_equal(list_errno(mnt, "/granny"), 0); /* header and sections need no read */
        assert_true(is_mounted(mnt));
        do_umount(mnt);
    }
    free(file);
    free(r.section);
}

/* st_nlink of /root/REL (mnt + "/root" + rel). */
static nlink_t nlink_of(const char *mnt, const char *rel)
{
    char p[1024];
    struct stat st;
    snprintf(p, sizeof p, "%s/root%s", mnt, rel);
    assert_int_equal(lstat(p, &st), 0);
    return st.st_nlink;
}

static uint32_t branches_of(const struct fxt *n)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < n->n; i++)
        k += n->child[i]->kind == FXT_BRANCH;
    return k;
}

/* The kernel forgets the inodes it holds (drop_caches, as root): the next stat of a path
 * asks LOOKUP again, the next listing gives its entries' attributes by READDIRPLUS. */
static void forget_inodes(void)
{
    sync();
    int fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "2\n", 2), 2);
    close(fd);
}

/* A directory's st_nlink is 1 ("unknown") until it is listed or looked into, then 2 + its
 * subdirectories (the branches among its children, by the builder), the same through
 * LOOKUP (stat) and READDIRPLUS (the parent's listing). The kernel keeps a directory's
 * attributes a second before it is listed, a day after, so each way is checked after it
 * forgot its inodes. Files and links have 1. */
static void test_mount_nlink(void **state)
{
    (void)state;
    struct t2fs_case c;
    t2fs_case_make(&c, "nlink.t2fs", 21, 3, false, 0, 0);
    do_mount(c.path, c.mnt, NULL);
    const struct fxt *model = c.root->child[0];
    assert_int_equal(model->kind, FXT_BRANCH);
    assert_int_equal(nlink_of(c.mnt, "/0"), 1); /* looked up, never listed */
    assert_int_equal(list_errno(c.mnt, "/root/0"), 0);
    size_t branches = 0;
    for (uint32_t i = 0; i < model->n; i++) {
        char rel[64], dir[80];
        bool branch = model->child[i]->kind == FXT_BRANCH;
        snprintf(rel, sizeof rel, branch ? "/0/%u" : "/0/%u.bin", i);
        assert_int_equal(nlink_of(c.mnt, rel), 1); /* from 0's READDIRPLUS: not listed yet */
        snprintf(dir, sizeof dir, "/root%s", rel);
        if (branch)
            assert_int_equal(list_errno(c.mnt, dir), 0);
        branches += branch;
    }
    assert_true(branches >= 2);
    for (int way = 0; way < 2; way++) { /* 0: LOOKUP, 1: READDIRPLUS */
        forget_inodes();
        if (way == 1)
            assert_int_equal(list_errno(c.mnt, "/root/0"), 0);
        for (uint32_t i = 0; i < model->n; i++) {
            char rel[64];
            bool branch = model->child[i]->kind == FXT_BRANCH;
            snprintf(rel, sizeof rel, branch ? "/0/%u" : "/0/%u.bin", i);
            assert_int_equal(nlink_of(c.mnt, rel), branch ? 2 + branches_of(model->child[i]) : 1);
        }
        assert_int_equal(nlink_of(c.mnt, "/0"), 2 + branches_of(model));
        assert_int_equal(nlink_of(c.mnt, ""), 2 + branches_of(c.root)); /* populated by the lookup of 0 */
    }
    char p[1024];
    struct stat st;
    snprintf(p, sizeof p, "%s/info", c.mnt);
    assert_int_equal(lstat(p, &st), 0);
    assert_int_equal(st.st_nlink, 1);
    do_umount(c.mnt);
    t2fs_case_free(&c);
}

struct reader_arg {
    const char *mnt;
    char **paths;
    uint8_t **content;
    size_t *len;
    int npaths;
    unsigned seed;
    int mismatches;
};

static void *random_reader(void *p)
{
    struct reader_arg *a = p;
    for (int it = 0; it < 300; it++) {
        int i = (int)(rand_r(&a->seed) % (unsigned)a->npaths);
        if (a->len[i] == 0)
            continue;
        size_t off = rand_r(&a->seed) % a->len[i];
        size_t n = 1 + rand_r(&a->seed) % (a->len[i] - off);
        char f[1024];
        snprintf(f, sizeof f, "%s%s", a->mnt, a->paths[i]);
        int fd = open(f, O_RDONLY);
        uint8_t buf[8192];
        if (n > sizeof buf)
            n = sizeof buf;
        if (fd < 0 || pread(fd, buf, n, (off_t)off) != (ssize_t)n || memcmp(buf, a->content[i] + off, n) != 0)
            a->mismatches++;
        if (fd >= 0)
            close(fd);
    }
    return NULL;
}

/* 16 threads read random files at once and compare with a single reader's bytes, with
 * the given mount options (the loop that serves them differs). */
static void check_concurrent_readers(const char *opts)
{
    struct rig_case c;
    rig_case_mount(&c, "conc.rig", opts);
    char *mnt = c.mnt;
    const struct expect_list l = c.l;
    /* single reader first: the reference bytes */
    char *paths[512];
    uint8_t *content[512];
    size_t len[512];
    int n = 0;
    for (size_t i = 0; i < l.n && n < 512; i++) {
        if (l.e[i].kind != EX_FILE || l.e[i].prefix_only)
            continue;
        paths[n] = l.e[i].path;
        assert_int_equal(mp_read(mnt, paths[n], &content[n], &len[n]), 0);
        n++;
    }
    pthread_t th[16];
    struct reader_arg args[16];
    for (int t = 0; t < 16; t++) {
        args[t] = (struct reader_arg){mnt, paths, content, len, n, (unsigned)t * 7919u + 1, 0};
        pthread_create(&th[t], NULL, random_reader, &args[t]);
    }
    for (int t = 0; t < 16; t++) {
        pthread_join(th[t], NULL);
        assert_int_equal(args[t].mismatches, 0);
    }
    for (int i = 0; i < n; i++)
        free(content[i]);
    rig_case_end(&c);
}

static void test_mount_concurrent_readers(void **state)
{
    (void)state;
    check_concurrent_readers(NULL);     /* the default: one polling thread */
    check_concurrent_readers("spin=0"); /* libfuse's multi-threaded loop */
    check_concurrent_readers("spin=1000000");
}

static void test_mount_t2fs(void **state)
{
    (void)state;
    for (int be = 0; be <= 1; be++) {
        struct t2fs_case c;
        t2fs_case_make(&c, be ? "be.t2fs" : "le.t2fs", 21, 3, be, be ? 8 : 0, be ? 0 : 16);
        do_mount(c.path, c.mnt, be ? "cache_mb=1" : NULL);
        struct expect_list l = {0};
        ex_t2fs(&l, c.file, c.size, c.root, c.prefix, c.trailer);
        struct probe p = mount_probe(c.mnt);
        ex_check(&l, &p);
        ex_free(&l);
        /* the seed's example path */
        uint8_t *buf;
        size_t len;
        assert_int_equal(mp_read(c.mnt, "/root/0/0/1/0/0.bin", &buf, &len), 0);
        free(buf);
        do_umount(c.mnt);
        t2fs_case_free(&c);
    }
}

/* A t2fs file cut short (a truncated download) mounts: the nodes before the cut are there,
 * byte-exact; the ones past it are NAME.error; /info says how much is missing; the whole
 * tree through the kernel is the tree in-process. The cut: 4 bytes into the table of model
 * 1's first child (model 1's own table is whole, so /root/0/1 is a directory). */
static void test_mount_t2fs_cut(void **state)
{
    (void)state;
    struct t2fs_case c;
    t2fs_case_make(&c, "whole.t2fs", 21, 3, false, 0, 0);
    const struct fxt *m0 = c.root->child[0]->child[0], *m1 = c.root->child[0]->child[1];
    size_t cut = m1->child[0]->pos + 4;
    char path[256], mnt[256], want[200];
    write_fixture("cut.t2fs", c.file, cut, path, sizeof path);
    make_mountpoint("cut.t2fs.mnt", mnt, sizeof mnt);
    do_mount(path, mnt, NULL);
    uint8_t *buf;
    size_t len;
    assert_int_equal(mp_read(mnt, "/root/0/0/3.bin", &buf, &len), 0); /* model 0, whole: its last leaf */
    assert_int_equal(len, m0->child[3]->stored);
    assert_memory_equal(buf, m0->child[3]->bytes, len);
    free(buf);
    assert_int_equal(mp_read(mnt, "/root/0/1.error", &buf, &len), 0);
    snprintf(want, sizeof want, "cut short: the node at offset %zu (0x%zx), %zu bytes, ends at byte %zu,",
             (size_t)m1->pos, (size_t)m1->pos, m1->stored, (size_t)m1->pos + m1->stored);
    assert_true(len > strlen(want) && memcmp(buf, want, strlen(want)) == 0);
    free(buf);
    snprintf(want, sizeof want, "/unparsed/0x%zx-0x4.bin", (size_t)m1->child[0]->pos);
    assert_int_equal(mp_read(mnt, want, &buf, &len), 0); /* the 4 bytes of the cut table */
    assert_int_equal(len, 4);
    assert_memory_equal(buf, c.file + m1->child[0]->pos, 4);
    free(buf);
    enum expect_kind kind;
    uint64_t size;
    assert_int_equal(mp_stat(mnt, "/root/0/1/0.error", &kind, &size), 0);
    assert_int_equal(mp_stat(mnt, "/root/0/2.error", &kind, &size), 0);
    assert_int_equal(mp_stat(mnt, "/root/2.error", &kind, &size), 0);
    assert_int_equal(mp_stat(mnt, "/models/0/poses", &kind, &size), 0);
    assert_int_equal(mp_stat(mnt, "/models/2.error", &kind, &size), 0);
    assert_int_equal(mp_read(mnt, "/info", &buf, &len), 0);
    snprintf(want, sizeof want,
             "the file is cut short: its root node ends at byte %zu, the file has %zu bytes (%zu missing)", c.size,
             cut, c.size - cut);
    buf = realloc(buf, len + 1);
    buf[len] = 0;
    assert_non_null(strstr((char *)buf, want));
    free(buf);
    struct snap in_process = {0}, mounted = {0};
    snap_file_alone(&in_process, c.file, cut);
    snap_path(&mounted, mnt); /* a walk through the kernel, every file read */
    assert_int_equal(mounted.n, in_process.n);
    for (size_t i = 0; i < in_process.n; i++) { /* symlinks show no xattrs through the kernel: no snap_assert_equal */
        const struct snap_entry *a = &in_process.e[i], *b = snap_find(&mounted, a->path);
        if (!b || b->kind != a->kind || b->size != a->size || b->dlen != a->dlen ||
            (a->dlen && memcmp(a->data, b->data, a->dlen) != 0))
            fail_msg("%s: differs through the mount", a->path);
    }
    snap_free(&in_process);
    snap_free(&mounted);
    do_umount(mnt);
    t2fs_case_free(&c);
}

/* A Turok 1 file through a real mount: /models/N/... and /named's sections against the
 * fixture's hand-written cases, in both byte orders. */
static void test_mount_turok1(void **state)
{
    (void)state;
    for (int be = 0; be <= 1; be++) {
        struct fxt *root = fxt_t1_sample(be);
        size_t size;
        uint8_t *file = fxt_write(root, be, 0, 0, &size);
        char path[256], mnt[256];
        write_fixture(be ? "t1-be.t2fs" : "t1-le.t2fs", file, size, path, sizeof path);
        make_mountpoint(be ? "m_t1_be" : "m_t1_le", mnt, sizeof mnt);
        do_mount(path, mnt, NULL);
        struct probe p = mount_probe(mnt);
        ex_t1_models(&p, root, be);
        ex_t1_exports(&p, be); /* model.glb and model.obj through FUSE: stat's size = bytes read */
        uint8_t *buf;
        size_t len;
        assert_int_equal(mp_read(mnt, "/models/0/nodes/0/parts/0/sections/1/triangles.txt", &buf, &len), 0);
        assert_int_equal(len, strlen("0 1 2\n10 11 12\n3 2 1\n15 12 14\n")); /* the notes' example */
        assert_memory_equal(buf, "0 1 2\n10 11 12\n3 2 1\n15 12 14\n", len);
        free(buf);
        do_umount(mnt);
        free(file);
        fxt_free(root);
    }
}

static void test_mount_gr2_objects(void **state)
{
    (void)state;
    static const char *const sigs[] = {"le32", "be64"};
    for (int i = 0; i < 2; i++) {
        struct fxg_opts o = {.sig = sigs[i], .version = 7, .nbones = 9};
        struct fxg_result r;
        size_t size;
        uint8_t *file = fxg_build(&o, &size, &r);
        char path[256], mnt[256];
        write_fixture(i ? "objects-be.gr2" : "objects-le.gr2", file, size, path, sizeof path);
        make_mountpoint("m_obj", mnt, sizeof mnt);
        do_mount(path, mnt, NULL);
        struct probe p = mount_probe(mnt);
        check_gr2_objects(&p, &r, sigs[i]);
        do_umount(mnt);
        free(file);
        free(r.section);
    }
}

/* Walks a mounted tree (no recursion into links): every file is read whole, every link
 * followed by the kernel must land on a directory (no ENOENT, no ELOOP). Returns the
 * number of links. */
static size_t walk_mounted(const char *root)
{
    size_t links = 0, cap = 64, n = 0;
    char **stack = malloc(cap * sizeof *stack);
    stack[n++] = strdup(root);
    static char buf[1 << 16];
    while (n > 0) {
        char *dir = stack[--n];
        DIR *d = opendir(dir);
        if (!d)
            fail_msg("%s: %s", dir, strerror(errno));
        for (struct dirent *e; (e = readdir(d));) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            char *p = NULL;
            assert_true(asprintf(&p, "%s/%s", dir, e->d_name) > 0);
            struct stat st;
            assert_int_equal(lstat(p, &st), 0);
            if (S_ISLNK(st.st_mode)) {
                struct stat to;
                if (stat(p, &to) != 0)
                    fail_msg("link %s: %s", p, strerror(errno));
                if (!S_ISDIR(to.st_mode))
                    fail_msg("link %s: not a directory", p);
                links++;
                free(p);
            } else if (S_ISDIR(st.st_mode)) {
                if (n == cap)
                    stack = realloc(stack, (cap *= 2) * sizeof *stack);
                stack[n++] = p;
            } else {
                int fd = open(p, O_RDONLY);
                assert_true(fd >= 0);
                off_t total = 0;
                for (ssize_t k; (k = read(fd, buf, sizeof buf)) > 0;)
                    total += k;
                close(fd);
                if (total != st.st_size)
                    fail_msg("%s: read %lld of %lld bytes", p, (long long)total, (long long)st.st_size);
                free(p);
            }
        }
        closedir(d);
        free(dir);
    }
    free(stack);
    return links;
}

/* The real Granny files of ../shared/vectors/gr2, mounted in place: every link resolves
 * through the kernel, the tables' bytes are the file's own. */
static void test_mount_gr2_vectors(void **state)
{
    (void)state;
    const char *vec = getenv("S3RIG_VECTORS");
    struct stat vst;
    if (!vec || stat(vec, &vst) != 0) {
        print_message("shared/vectors is absent: skipping the vector mount test\n");
        skip();
    }
    static const char *const files[] = {"suzanne_le.gr2", "suzanne_be.gr2", "suzanne_le64.gr2", "suzanne_be64.gr2",
                                        "suzanne_textured_external.gr2"};
    for (int i = 0; i < 5; i++) {
        char path[4096], mnt[256], at[512];
        snprintf(path, sizeof path, "%s/gr2/%s", vec, files[i]);
        make_mountpoint("m_vec", mnt, sizeof mnt);
        do_mount(path, mnt, NULL);
        size_t links = walk_mounted(mnt);
        if (links < 7)
            fail_msg("%s: %zu links", files[i], links);
        /* the kernel follows Meshes/0/PrimaryVertexData into VertexDatas/0 */
        snprintf(at, sizeof at, "%s/granny/root/Meshes/0/PrimaryVertexData/Vertices.bin", mnt);
        struct stat st;
        assert_int_equal(stat(at, &st), 0);
        assert_int_equal(st.st_size % 32, 0);
        /* Indices.bin: the bytes at its offset xattr in the file itself */
        snprintf(at, sizeof at, "%s/granny/root/TriTopologies/0/Indices.bin", mnt);
        char v[32] = {0};
        assert_true(getxattr(at, "user.s3rig.offset", v, sizeof v - 1) > 0);
        long long off = atoll(v);
        uint8_t *a, *b;
        size_t alen;
        assert_int_equal(mp_read(mnt, "/granny/root/TriTopologies/0/Indices.bin", &a, &alen), 0);
        b = malloc(alen);
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        assert_int_equal(fseek(f, off, SEEK_SET), 0);
        assert_int_equal(fread(b, 1, alen, f), alen);
        fclose(f);
        assert_memory_equal(a, b, alen);
        free(a);
        free(b);
        do_umount(mnt);
    }
}

/* The Sims 3 case through a real mount: Oodle1 Granny data, bone names resolved, and the
 * kernel following a .bone link into the skeleton. */
static void test_mount_rig_oodle1(void **state)
{
    (void)state;
    struct fxg_opts go = {.sig = "le32-old", .version = 6, .nbones = 16, .oodle1_objects = true};
    struct fxg_result r;
    size_t size;
    struct fx_rig_layout rl;
    uint8_t *file = fxg_sample_rig(&go, &r, &size, &rl);
    char path[256], mnt[256], f[512];
    write_fixture("oodle1.rig", file, size, path, sizeof path);
    make_mountpoint("m_oodle1", mnt, sizeof mnt);
    do_mount(path, mnt, NULL);
    uint8_t *buf;
    size_t len;
    char want[128];
    snprintf(want, sizeof want, "%s\n", r.bones[12].name);
    mnt_expect_bytes(mnt, "/ik_chains/1/pole.bone/Name", want, strlen(want)); /* through the link */
    assert_int_equal(mp_read(mnt, "/ik_chains/1/links/2/start.bone/ParentIndex", &buf, &len), 0);
    assert_memory_equal(buf, "-1\n", 3); /* bone 0 is the root */
    free(buf);
    assert_int_equal(mp_read(mnt, "/compress_nodes.names", &buf, &len), 0);
    snprintf(want, sizeof want, "%s\n", r.bones[14].name);
    assert_memory_equal(buf, want, strlen(want));
    free(buf);
    mnt_expect_bytes(mnt, "/granny/sections/0/data.bin", r.section, r.section_size);
    snprintf(f, sizeof f, "%s/granny/sections/0/data.bin", mnt);
    struct stat st;
    assert_int_equal(stat(f, &st), 0);
    assert_int_equal(st.st_size, r.section_size);
    do_umount(mnt);
    free(file);
    free(r.section);
}

/* A Granny file whose object section is Oodle0-compressed (early Granny 2 exporters): the
 * object tree, the expanded section bytes and the /info line through a real mount. */
static void test_mount_gr2_oodle0(void **state)
{
    (void)state;
    struct fxg_opts o = {.sig = "le32-old", .version = 6, .nbones = 12, .oodle0_objects = true};
    struct fxg_result r;
    size_t size;
    uint8_t *file = fxg_build(&o, &size, &r);
    char path[256], mnt[256], f[512];
    write_fixture("oodle0.gr2", file, size, path, sizeof path);
    make_mountpoint("m_oodle0", mnt, sizeof mnt);
    do_mount(path, mnt, NULL);
    struct probe p = mount_probe(mnt);
    check_gr2_objects(&p, &r, o.sig);
    mnt_expect_bytes(mnt, "/granny/sections/0/data.bin", r.section, r.section_size);
    snprintf(f, sizeof f, "%s/granny/sections/0/data.bin", mnt);
    struct stat st;
    assert_int_equal(stat(f, &st), 0);
    assert_int_equal(st.st_size, r.section_size);
    char want[128];
    snprintf(want, sizeof want, "section 0: oodle0, %u stored, %u expanded, expanded\n", r.layout.data_size[0],
             r.section_size);
    mnt_expect_has(mnt, "/info", want);
    do_umount(mnt);
    free(file);
    free(r.section);
}

/* The BG3 case through a real mount (-o spin=0: requests in parallel): a wrapped RIG
 * whose Granny sections and tables are BitKnit2; the kernel follows a .bone link into
 * the decoded skeleton, data.bin is the expanded section, the compressed tables are
 * claimed and /info says the section expanded. */
static void test_mount_rig_bitknit2(void **state)
{
    (void)state;
    struct fxg_opts go = {.sig = "le64", .version = 7, .nbones = 16, .bitknit2_objects = true,
                          .bitknit2_section = true, .nmarshals = 3};
    struct fxg_result r;
    size_t size;
    struct fx_rig_layout rl;
    uint8_t *file = fxg_sample_rig(&go, &r, &size, &rl);
    char path[256], mnt[256];
    write_fixture("bitknit2.rig", file, size, path, sizeof path);
    make_mountpoint("m_bitknit2", mnt, sizeof mnt);
    do_mount(path, mnt, "spin=0");
    char want[160];
    snprintf(want, sizeof want, "%s\n", r.bones[fx_sample_chains[1].pole].name);
    mnt_expect_bytes(mnt, "/ik_chains/1/pole.bone/Name", want, strlen(want)); /* through the link */
    snprintf(want, sizeof want, "%s\n%s\n", r.bones[fx_sample_lists[1][0]].name, r.bones[fx_sample_lists[1][1]].name);
    mnt_expect_bytes(mnt, "/info_nodes.names", want, strlen(want));
    mnt_expect_bytes(mnt, "/granny/sections/0/data.bin", r.section, r.section_size);
    mnt_expect_bytes(mnt, "/granny/sections/0/fixups_stored.bin", file + rl.granny_pos + r.layout.fixup_offset[0],
                     r.layout.fixup_stored[0]);
    char val[64];
    assert_true(mp_getxattr(mnt, "/granny/sections/0/fixups", "user.s3rig.type", val, sizeof val) > 0);
    assert_true(strncmp(val, "bitknit2:gr2.fixup[", 19) == 0);
    snprintf(want, sizeof want, "section 0: bitknit2, %u stored, %u expanded, expanded\n", r.layout.data_size[0],
             r.section_size);
    mnt_expect_has(mnt, "/info", want);
    char **names;
    assert_int_equal(mp_list(mnt, "/unparsed", &names), 1); /* the RIG's 56 unknown bytes only */
    free(names[0]);
    free(names);
    do_umount(mnt);
    free(file);
    free(r.section);
}

static void test_mount_rig_clear(void **state)
{
    (void)state;
    for (int v = 0; v < 3; v++) {
        struct fxc_opts o = fxc_variant(v);
        struct fxc_layout lay;
        size_t size;
        uint8_t *file = fxc_build(&o, &size, &lay);
        char name[32], path[256], mnt[256];
        snprintf(name, sizeof name, "clear%d.rig", v);
        write_fixture(name, file, size, path, sizeof path);
        make_mountpoint("m_clear", mnt, sizeof mnt);
        do_mount(path, mnt, NULL);
        struct expect_list l = {0};
        ex_rig_clear(&l, file, size, &o, &lay);
        struct probe p = mount_probe(mnt);
        ex_check(&l, &p);
        ex_free(&l);
        /* the kernel follows a chain's link into the bones */
        if (o.chains) {
            uint8_t *buf;
            size_t len;
            assert_int_equal(mp_read(mnt, "/ik_chains/0/pole.bone/name", &buf, &len), 0);
            assert_memory_equal(buf, "b__L_Thigh__\n", 13);
            free(buf);
        }
        do_umount(mnt);
        free(file);
    }
}

struct hammer {
    const char *mnt;
    int stop; /* atomic: set by the main thread while readers poll it */
    long reads;
};

static void *hammer_reads(void *p)
{
    struct hammer *h = p;
    static const char *const files[] = {"/root/1.bin", "/info", "/root/0/0/1/0/0.bin", "/root/0/1/0/0.bin"};
    char buf[65536], f[512];
    for (unsigned i = 0; !__atomic_load_n(&h->stop, __ATOMIC_RELAXED); i++) {
        snprintf(f, sizeof f, "%s%s", h->mnt, files[i % 4]);
        int fd = open(f, O_RDONLY);
        if (fd < 0)
            continue;
        while (read(fd, buf, sizeof buf) > 0)
            __atomic_add_fetch(&h->reads, 1, __ATOMIC_RELAXED);
        close(fd);
    }
    return NULL;
}

/* A lazy unmount while 8 readers are busy: the daemon finishes them and exits cleanly. */
static void test_mount_unmount_during_reads(void **state)
{
    (void)state;
    struct fxt *root = fxt_sample(4, 3, true, false);
    size_t size;
    uint8_t *file = fxt_write(root, false, 0, 0, &size);
    char path[256], mnt[256];
    write_fixture("busy.t2fs", file, size, path, sizeof path);
    make_mountpoint("m_busy", mnt, sizeof mnt);
    pid_t pid = fork();
    if (pid == 0) {
        int nul = open("/dev/null", O_RDWR);
        dup2(nul, 0);
        dup2(nul, 1);
        child_env();
        execl(mount_bin, mount_bin, "-f", path, mnt, (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 200 && !is_mounted(mnt); i++)
        usleep(10000);
    assert_true(is_mounted(mnt));
    struct hammer h = {mnt, 0, 0};
    pthread_t th[8];
    for (int i = 0; i < 8; i++)
        pthread_create(&th[i], NULL, hammer_reads, &h);
    while (__atomic_load_n(&h.reads, __ATOMIC_RELAXED) < 200)
        usleep(1000);
    char *um[] = {"fusermount3", "-uz", mnt, NULL};
    assert_int_equal(run(um, NULL, 0), 0);
    usleep(100000);
    __atomic_store_n(&h.stop, 1, __ATOMIC_RELAXED);
    for (int i = 0; i < 8; i++)
        pthread_join(th[i], NULL);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_false(is_mounted(mnt));
    /* the daemon never writes to its source */
    uint8_t *now;
    size_t len;
    assert_int_equal(mp_read("", path, &now, &len), 0);
    assert_int_equal(len, size);
    assert_memory_equal(now, file, size);
    free(now);
    free(file);
    fxt_free(root);
}

/* -o schema=FILE through a real mount, and a malformed schema refused. */
static void test_mount_schema_option(void **state)
{
    (void)state;
    struct fxt *root = fxt_sample(6, 2, false, true);
    size_t size;
    uint8_t *file = fxt_write(root, true, 0, 0, &size);
    char path[256], mnt[256], schema[300], opt[400], err[1024];
    write_fixture("schema.t2fs", file, size, path, sizeof path);
    make_mountpoint("m_schema", mnt, sizeof mnt);
    struct t2fs_schema *s = t2fs_schema_turok2();
    char *json = t2fs_schema_to_json(s);
    snprintf(schema, sizeof schema, "%s/turok2.json", tmpdir);
    assert_int_equal(fx_write_file(schema, json, strlen(json)), 0);
    free(json);
    t2fs_schema_free(s);
    snprintf(opt, sizeof opt, "schema=%s", schema);
    do_mount(path, mnt, opt);
    uint8_t *buf;
    size_t len;
    assert_int_equal(mp_read(mnt, "/info", &buf, &len), 0);
    assert_non_null(memmem(buf, len, "schema: file ", 13));
    free(buf);
    assert_int_equal(mp_read(mnt, "/named/models/1/model_1/surfaces/0/0/indices.bin", &buf, &len), 0);
    assert_int_equal(len, 24); /* 10 u16 words, padded to 8 */
    free(buf);
    do_umount(mnt);
    write_fixture("bad.json", "{\"name\": \"r\", \"type\": \"fixed\", \"next\": [{\"name\": 1}]}", 53, schema,
                  sizeof schema);
    snprintf(opt, sizeof opt, "schema=%s", schema);
    char *argv[] = {(char *)mount_bin, "-o", opt, path, mnt, NULL};
    assert_int_equal(run(argv, err, sizeof err), 3);
    assert_non_null(strstr(err, "$.next[0]"));
    assert_false(is_mounted(mnt));
    free(file);
    fxt_free(root);
}

/* ---- s3rig (the same tree without FUSE) ---- */

/* Runs s3rig with args, stdout captured into out and stderr into err; the exit status. */
static int run_cli(char *const args[], char *out, size_t outlen, char *err, size_t errlen)
{
    char *argv[16] = {(char *)cli_bin()};
    int n = 1;
    for (int i = 0; args[i] && n < 15; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    return run_capture(argv, out, outlen, err, errlen);
}

/* Compares two real trees: names, kinds, sizes, bytes, link targets. */
static void compare_trees(const char *a_root, const char *b_root)
{
    struct snap a = {0}, b = {0};
    snap_path(&a, a_root);
    snap_path(&b, b_root);
    snap_assert_same_content(&a, &b);
    assert_true(a.n > 10);
    snap_free(&a);
    snap_free(&b);
}

static void extract_and_compare(const char *name, const uint8_t *file, size_t size)
{
    char path[256], mnt[256], dest[256], err[512];
    write_fixture(name, file, size, path, sizeof path);
    make_mountpoint("m_cli", mnt, sizeof mnt);
    snprintf(dest, sizeof dest, "%s/extract-%s", tmpdir, name);
    char *args[] = {"extract", path, dest, NULL};
    int rc = run_cli(args, NULL, 0, err, sizeof err);
    if (rc)
        fail_msg("s3rig extract %s: exit %d: %s", name, rc, err);
    do_mount(path, mnt, NULL);
    compare_trees(mnt, dest);
    do_umount(mnt);
}

static void test_cli_extract_equals_mount(void **state)
{
    (void)state;
    size_t size;
    uint8_t *f;
    struct fx_rig_layout rl;
    struct fx_gr2_layout gl;
    char names[FX_SAMPLE_BONES][32];
    f = fx_sample_rig(&size, &rl, &gl, names);
    extract_and_compare("x.rig", f, size);
    free(f);
    struct fxg_opts go = {.sig = "be64", .version = 7, .nbones = 6, .oodle1_objects = true};
    struct fxg_result r;
    f = fxg_build(&go, &size, &r);
    extract_and_compare("x.gr2", f, size);
    free(f);
    free(r.section);
    for (int be = 0; be <= 1; be++) {
        struct fxt *root = fxt_sample(3, 3, true, be);
        f = fxt_write(root, be, be ? 8 : 0, 0, &size);
        extract_and_compare(be ? "x-be.t2fs" : "x-le.t2fs", f, size);
        free(f);
        fxt_free(root);
    }
    for (int v = 0; v < 3; v++) {
        struct fxc_opts o = fxc_variant(v);
        struct fxc_layout lay;
        f = fxc_build(&o, &size, &lay);
        char n[32];
        snprintf(n, sizeof n, "x%d.rig_clear", v);
        extract_and_compare(n, f, size);
        free(f);
    }
}

static void test_cli_commands(void **state)
{
    (void)state;
    size_t size;
    struct fx_rig_layout rl;
    struct fx_gr2_layout gl;
    char names[FX_SAMPLE_BONES][32];
    uint8_t *f = fx_sample_rig(&size, &rl, &gl, names);
    char path[256], out[8192], err[1024];
    write_fixture("cli.rig", f, size, path, sizeof path);
    /* info = /info */
    char *info[] = {"info", path, NULL};
    assert_int_equal(run_cli(info, out, sizeof out, err, sizeof err), 0);
    assert_non_null(strstr(out, "format: wrapped-rig\n"));
    assert_non_null(strstr(out, "ik_chains: 2\n"));
    /* cat of several files, in order */
    char *cat[] = {"cat", path, "/ik_chains/0/pole", "/header/magic", NULL};
    assert_int_equal(run_cli(cat, out, sizeof out, err, sizeof err), 0);
    assert_string_equal(out, "5\n0x8eaf13de\n");
    /* stat: size, kind and the xattrs */
    char *st[] = {"stat", path, "/ik_chains/1/pole", NULL};
    assert_int_equal(run_cli(st, out, sizeof out, err, sizeof err), 0);
    char want[128];
    snprintf(want, sizeof want, "offset: %llu\nlength: 4\ntype: i32\n", (unsigned long long)(rl.entry_pos[1] + 40));
    assert_non_null(strstr(out, "kind: file\nsize: 3\n"));
    assert_non_null(strstr(out, want));
    /* ls and ls -l */
    char *ls[] = {"ls", path, "/ik_chains/0/links", NULL};
    assert_int_equal(run_cli(ls, out, sizeof out, err, sizeof err), 0);
    assert_string_equal(out, "0\n1\n");
    char *lsl[] = {"ls", "-l", path, "/ik_chains/0", NULL};
    assert_int_equal(run_cli(lsl, out, sizeof out, err, sizeof err), 0);
    assert_non_null(strstr(out, "pole.bone -> ../../granny/root/Skeletons/0/Bones/5"));
    char *lsr[] = {"ls", "-R", path, "/granny/sections", NULL};
    assert_int_equal(run_cli(lsr, out, sizeof out, err, sizeof err), 0);
    assert_non_null(strstr(out, "/granny/sections/1:\n"));
    /* errors: a bad path (5), a bad file (3), a missing file (2), usage (1) */
    char *bad[] = {"cat", path, "/no/such/file", NULL};
    assert_int_equal(run_cli(bad, out, sizeof out, err, sizeof err), 5);
    assert_non_null(strstr(err, "/no/such/file"));
    char *dir[] = {"cat", path, "/ik_chains", NULL};
    assert_int_equal(run_cli(dir, out, sizeof out, err, sizeof err), 5);
    assert_non_null(strstr(err, "is a directory"));
    char junk[256];
    write_fixture("cli.junk", "this is not a model", 19, junk, sizeof junk);
    char *bf[] = {"info", junk, NULL};
    assert_int_equal(run_cli(bf, out, sizeof out, err, sizeof err), 3);
    assert_non_null(strstr(err, "unrecognised format"));
    char missing[300];
    snprintf(missing, sizeof missing, "%s/nope", tmpdir);
    char *mf[] = {"info", missing, NULL};
    assert_int_equal(run_cli(mf, out, sizeof out, err, sizeof err), 2);
    char *usage[] = {"frobnicate", path, NULL};
    assert_int_equal(run_cli(usage, out, sizeof out, err, sizeof err), 1);
    char *none[] = {NULL};
    assert_int_equal(run_cli(none, out, sizeof out, err, sizeof err), 1);
    /* options: the same parser as mount.s3rig */
    char *bogus[] = {"-o", "bogus=1", "info", path, NULL};
    assert_int_equal(run_cli(bogus, out, sizeof out, err, sizeof err), 1);
    assert_non_null(strstr(err, "unknown option"));
    char *zero[] = {"-o", "cache_mb=0", "info", path, NULL};
    assert_int_equal(run_cli(zero, out, sizeof out, err, sizeof err), 1);
    assert_non_null(strstr(err, "cache_mb=0"));
    char *good[] = {"-o", "cache_mb=1,max_nodes=100000,rnc_key=0x1234", "info", path, NULL};
    assert_int_equal(run_cli(good, out, sizeof out, err, sizeof err), 0);
    char *schema[] = {"--print-schema=turok9", NULL};
    char *mbin[] = {(char *)mount_bin, schema[0], NULL};
    assert_int_equal(run(mbin, err, sizeof err), 1);
    assert_non_null(strstr(err, "unknown schema"));
    free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        mount_test(test_mount_sample_rig),
        mount_test(test_mount_gr2_variants),
        mount_test(test_mount_options),
        mount_test(test_mount_helper),
        mount_test(test_mount_refusals),
        mount_test(test_mount_broken_parts),
        mount_test(test_mount_source_changes),
        mount_test(test_mount_source_changes_t2fs),
        mount_test(test_mount_source_changes_gr2_tree),
        mount_test(test_mount_concurrent_readers),
        mount_test(test_mount_t2fs),
        mount_test(test_mount_t2fs_cut),
        mount_test(test_mount_nlink),
        mount_test(test_mount_turok1),
        mount_test(test_mount_gr2_objects),
        mount_test(test_mount_gr2_vectors),
        mount_test(test_mount_rig_oodle1),
        mount_test(test_mount_gr2_oodle0),
        mount_test(test_mount_rig_bitknit2),
        mount_test(test_mount_rig_clear),
        mount_test(test_cli_extract_equals_mount),
        mount_test(test_mount_unmount_during_reads),
        mount_test(test_mount_schema_option),
        cmocka_unit_test(test_cli_commands),
        mount_test(test_no_sanitizer_reports), /* last: the daemons reported nothing */
    };
    return cmocka_run_group_tests_name("mount", tests, mount_group_setup, mount_group_teardown);
}
