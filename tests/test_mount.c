/* Mount tests: run mount.s3rig for real on generated files and check the mounted tree
 * through the kernel (paths, bytes, sizes, xattrs, errors), then unmount. A mount that
 * cannot be made fails the test; set S3RIG_NO_MOUNT_TESTS=1 to skip them explicitly.
 * Sanitizer reports of the daemon are written to files (ASAN/UBSAN log_path) and any
 * such file fails the suite. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
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
#include "expect_geom.h"
#include "expect_gr2anim.h"
#include "fixture_dbpf.h"
#include "fixture_geom.h"
#include "testutil.h"
#include "fixture.h"
#include "fixture_gr2anim.h"
#include "fixture_rig_clear.h"
#include "fixture_dbpf.h"
#include "fixture_gr2obj.h"
#include "expect_t1.h"
#include "expect_t1x.h"
#include "fixture_t2fs.h"
#include "gr2obj_check.h"
#include "mountutil.h"
#include "tree_compare.h"
#include "tree_probe.h"
#include "parse/t2fs/t2fs.h"
#include "testutil.h"
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

/* The sample RIG (fx_sample_rig) written under tmpdir as NAME (its path into path); its
 * Granny part's layout into *gl when not NULL. */
static void write_sample_rig(const char *name, char *path, size_t plen, struct fx_gr2_layout *gl)
{
    size_t size;
    struct fx_rig_layout rl;
    struct fx_gr2_layout own;
    char names[FX_SAMPLE_BONES][32];
    uint8_t *file = fx_sample_rig(&size, &rl, gl ? gl : &own, names);
    write_fixture(name, file, size, path, plen);
    free(file);
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
            struct probe p = mount_probe(mnt);
            ex_check_sample_gr2(&p, file, size, &gl, version);
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

/* Writes n bytes at off of the file at path and gives it a new mtime (12345 s): a change
 * the daemon must see even when the bytes written are the ones already there. */
static void rewrite_with_new_mtime(const char *path, const void *bytes, size_t n, off_t off)
{
    int fd = open(path, O_WRONLY);
    assert_true(fd >= 0);
    struct timespec ts[2] = {{0, UTIME_OMIT}, {12345, 0}};
    assert_int_equal(pwrite(fd, bytes, n, off), (ssize_t)n);
    assert_int_equal(futimens(fd, ts), 0);
    close(fd);
}

/* The source changes under the mount (truncated, written in place): reads of its bytes
 * give EIO, the mount stays. */
static void test_mount_source_changes(void **state)
{
    (void)state;
    size_t size;
    struct fx_gr2_layout gl;
    uint8_t *file = fx_sample_gr2("le32", 7, &size, &gl);
    char path[256], mnt[256];
    make_mountpoint("m_change", mnt, sizeof mnt);
    for (int mode = 0; mode < 2; mode++) {
        write_fixture("change.gr2", file, size, path, sizeof path);
        do_mount(path, mnt, NULL);
        uint8_t *buf;
        size_t len;
        assert_int_equal(mp_read(mnt, "/granny.gr2", &buf, &len), 0);
        assert_int_equal(len, size);
        free(buf);
        if (mode == 0) {
            assert_int_equal(truncate(path, (off_t)(size / 2)), 0);
        } else {
            rewrite_with_new_mtime(path, "XXXX", 4, 100);
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

/* The source's name deleted, or another file renamed over it (as editors save): the
 * mount goes on serving the file it opened, whole (bytes never read before, a directory
 * never listed before), not the new file, and no EIO. */
static void test_mount_source_replaced(void **state)
{
    (void)state;
    size_t size, other_size;
    struct fx_gr2_layout gl, ol;
    uint8_t *file = fx_sample_gr2("le32", 7, &size, &gl);
    uint8_t *other = fx_sample_gr2("be64", 6, &other_size, &ol);
    char path[256], tmp[256], mnt[256];
    make_mountpoint("m_replaced", mnt, sizeof mnt);
    for (int mode = 0; mode < 2; mode++) {
        write_fixture("replaced.gr2", file, size, path, sizeof path);
        do_mount(path, mnt, NULL);
        mnt_expect_bytes(mnt, "/granny/header/version", "7\n", 2);
        if (mode == 0) {
            assert_int_equal(unlink(path), 0);
        } else {
            write_fixture("replaced.gr2.new", other, other_size, tmp, sizeof tmp);
            assert_int_equal(rename(tmp, path), 0);
        }
        /* first reads after the change: section 2's stored bytes, the whole file */
        mnt_expect_bytes(mnt, "/granny/sections/2/stored.bin", file + gl.data_offset[2], gl.data_size[2]);
        mnt_expect_bytes(mnt, "/granny.gr2", file, size);
        assert_int_equal(list_errno(mnt, "/granny/sections/1"), 0);
        mnt_expect_has(mnt, "/info", "format: gr2");
        do_umount(mnt);
    }
    free(file);
    free(other);
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
    rewrite_with_new_mtime(c.path, c.file + c.size - 4, 4, (off_t)c.size - 4); /* same bytes, new mtime */
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
        rewrite_with_new_mtime(path, file + size - 4, 4, (off_t)size - 4); /* same bytes, new mtime */
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

/* 16 threads read random ranges of the n files at once (thread t seeded t * mul + add),
 * each compared with the reference bytes. */
static void run_readers(const char *mnt, char **paths, uint8_t **content, size_t *len, int n, unsigned mul,
                        unsigned add)
{
    pthread_t th[16];
    struct reader_arg args[16];
    for (int t = 0; t < 16; t++) {
        args[t] = (struct reader_arg){mnt, paths, content, len, n, (unsigned)t * mul + add, 0};
        pthread_create(&th[t], NULL, random_reader, &args[t]);
    }
    for (int t = 0; t < 16; t++) {
        pthread_join(th[t], NULL);
        assert_int_equal(args[t].mismatches, 0);
    }
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
    run_readers(mnt, paths, content, len, n, 7919u, 1);
    for (int i = 0; i < n; i++)
        free(content[i]);
    rig_case_end(&c);
}

/* A package's GEOM trees opened by 16 threads at once on a fresh mount with spin=0 (the
 * nested views, the package's rigs they bind to and the exports are made while other
 * requests run): every byte as a single in-process reader gets it. */
static void test_mount_geom_parallel(void **state)
{
    (void)state;
    struct fxp_sample s;
    fxp_sample(&s, 6);
    char pkg[256], mnt[256], mesh[300], custom[300];
    write_fixture("par.package", s.file, s.size, pkg, sizeof pkg);
    fxp_expected_name(mesh, sizeof mesh, 4, &s.res[2], s.names[2], 0);
    fxp_expected_name(custom, sizeof custom, 4, &s.res[3], s.names[3], 0);
    const char *rel[] = {"geom/mesh.glb", "geom/mesh.obj", "geom/geom/bones.csv", "geom/geom/vertices.csv",
                         "geom/geom/material/DiffuseMap/texture", "geom/rcol/chunks/0/instance"};
    char *paths[12];
    uint8_t *content[12];
    size_t len[12];
    int n = 0;
    struct s3fs *fs = open_mem(s.file, s.size, NULL, "package");
    for (int r = 0; r < 2; r++)
        for (size_t k = 0; k < sizeof rel / sizeof rel[0]; k++) {
            assert_true(asprintf(&paths[n], "/resources/%s/%s", r ? custom : mesh, rel[k]) > 0);
            content[n] = read_path(fs, paths[n], &len[n]);
            n++;
        }
    s3fs_close(fs);
    make_mountpoint("m_geompar", mnt, sizeof mnt);
    do_mount(pkg, mnt, "spin=0");
    run_readers(mnt, paths, content, len, n, 104729u, 3);
    do_umount(mnt);
    for (int i = 0; i < n; i++) {
        free(paths[i]);
        free(content[i]);
    }
    fxp_sample_free(&s);
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
        struct probe p = mount_probe(c.mnt);
        ex_check_t2fs(&p, c.file, c.size, c.root, c.prefix, c.trailer);
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

/* The real Granny files of the vectors folder's gr2/, mounted in place: every link resolves
 * through the kernel, the tables' bytes are the file's own. */
static void test_mount_gr2_vectors(void **state)
{
    (void)state;
    const char *vec = vectors_or_skip();
    for (int i = 0; gr2_vector_files[i]; i++) {
        char path[4096], mnt[256], at[512];
        snprintf(path, sizeof path, "%s/gr2/%s", vec, gr2_vector_files[i]);
        make_mountpoint("m_vec", mnt, sizeof mnt);
        do_mount(path, mnt, NULL);
        size_t links = walk_mounted(mnt);
        if (links < 7)
            fail_msg("%s: %zu links", gr2_vector_files[i], links);
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

/* The bytes of path in the tree of file opened in-process (with -o rig=rig when given). */
static uint8_t *in_process(const uint8_t *file, size_t size, const char *rig, const char *path, size_t *len)
{
    struct s3fs_opts o = {0};
    if (rig)
        snprintf(o.rig, sizeof o.rig, "%s", rig);
    struct s3fs *fs = open_mem(file, size, &o, path);
    uint8_t *b = read_path(fs, path, len);
    s3fs_close(fs);
    return b;
}

static void expect_same_bytes(char *mnt, const char *path, const uint8_t *want, size_t n)
{
    uint8_t *buf;
    size_t len;
    assert_int_equal(mp_read(mnt, path, &buf, &len), 0);
    assert_int_equal(len, n);
    assert_memory_equal(buf, want, n);
    free(buf);
}

/* A GEOM mounted with -o rig= (a path relative to where mount.s3rig runs: it is opened
 * before the daemon leaves that folder): the whole tree through the kernel, the rig: line
 * naming the rig's absolute path, mesh.glb as in-process; and a package's GEOM resource
 * bound to the package's rig that has its bones. */
static void test_mount_geom(void **state)
{
    (void)state;
    struct fxc_opts co = fxc_variant(0);
    struct fxc_layout cl;
    size_t rsize;
    uint8_t *rig = fxc_build(&co, &rsize, &cl);
    char rig_path[256], cwd[4096], mnt[256], path[700], want[600];
    write_fixture("clear.rig", rig, rsize, rig_path, sizeof rig_path);
    assert_non_null(getcwd(cwd, sizeof cwd));
    static const uint32_t versions[] = {5, 14};
    for (int i = 0; i < 2; i++) {
        struct fxgeom_opts o = {.version = versions[i]};
        struct fxgeom_layout lay;
        size_t size;
        uint8_t *file = fxgeom_build(&o, &size, &lay);
        char name[32];
        snprintf(name, sizeof name, "mesh%u.simgeom", versions[i]);
        write_fixture(name, file, size, path, sizeof path);
        make_mountpoint("m_geom", mnt, sizeof mnt);
        assert_int_equal(chdir(tmpdir), 0);
        do_mount(path, mnt, "rig=clear.rig");
        assert_int_equal(chdir(cwd), 0);
        struct expect_list l = {0};
        ex_geom(&l, file, size, &o, &lay, fxgeom_rig_names);
        struct probe p = mount_probe(mnt);
        ex_check(&l, &p);
        ex_free(&l);
        uint8_t *info;
        size_t len;
        assert_int_equal(mp_read(mnt, "/info", &info, &len), 0);
        snprintf(want, sizeof want, "\nrig: %s\n", rig_path);
        if (!memmem(info, len, want, strlen(want)))
            fail_msg("/info lacks %s: %.*s", want, (int)len, (char *)info);
        free(info);
        uint8_t *glb = in_process(file, size, rig_path, "/mesh.glb", &len);
        expect_same_bytes(mnt, "/mesh.glb", glb, len);
        free(glb);
        do_umount(mnt);
        free(file);
    }
    struct fxp_sample s;
    fxp_sample(&s, 6);
    write_fixture("geom.package", s.file, s.size, path, sizeof path);
    make_mountpoint("m_geompkg", mnt, sizeof mnt);
    do_mount(path, mnt, NULL);
    char mesh[300], rigdir[300];
    fxp_expected_name(mesh, sizeof mesh, 4, &s.res[2], s.names[2], 0);
    fxp_expected_name(rigdir, sizeof rigdir, 4, &s.res[1], s.names[1], 0);
    snprintf(path, sizeof path, "/resources/%s/geom/info", mesh);
    uint8_t *info;
    size_t len;
    assert_int_equal(mp_read(mnt, path, &info, &len), 0);
    snprintf(want, sizeof want, "\nrig: resources/%s\n", rigdir);
    if (!memmem(info, len, want, strlen(want)))
        fail_msg("%s lacks %s: %.*s", path, want, (int)len, (char *)info);
    free(info);
    snprintf(path, sizeof path, "/resources/%s/geom/mesh.glb", mesh);
    uint8_t *glb = in_process(s.file, s.size, NULL, path, &len);
    expect_same_bytes(mnt, path, glb, len);
    free(glb);
    do_umount(mnt);
    fxp_sample_free(&s);
    free(rig);
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
    pid_t pid = start_mount_fg(path, mnt, NULL);
    struct hammer h = {mnt, 0, 0};
    pthread_t th[8];
    for (int i = 0; i < 8; i++)
        pthread_create(&th[i], NULL, hammer_reads, &h);
    while (__atomic_load_n(&h.reads, __ATOMIC_RELAXED) < 200)
        usleep(1000);
    char *um[] = {"fusermount3", "-uz", mnt, NULL};
    char err[512];
    int urc = run(um, err, sizeof err);
    usleep(100000);
    __atomic_store_n(&h.stop, 1, __ATOMIC_RELAXED);
    for (int i = 0; i < 8; i++)
        pthread_join(th[i], NULL);
    if (urc != 0)
        fail_msg("fusermount3 -uz: exit %d: %s", urc, err);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("the daemon ended with %s %d after %ld reads", WIFEXITED(status) ? "exit status" : "signal",
                 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), h.reads);
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

/* The pid of the mount.s3rig process whose last argument is `last` (a daemon, not our
 * child), or 0. */
static pid_t server_pid(const char *last)
{
    DIR *d = opendir("/proc");
    assert_non_null(d);
    pid_t found = 0;
    struct dirent *de;
    while (!found && (de = readdir(d))) {
        char p[300], args[4096];
        snprintf(p, sizeof p, "/proc/%s/cmdline", de->d_name);
        FILE *f = fopen(p, "r");
        if (!f)
            continue;
        size_t n = fread(args, 1, sizeof args - 1, f);
        fclose(f);
        args[n] = 0;
        const char *lastarg = NULL;
        for (size_t i = 0; i < n; i += strlen(args + i) + 1)
            lastarg = args + i;
        if (n && strcmp(args, mount_bin) == 0 && lastarg && strcmp(lastarg, last) == 0)
            found = (pid_t)atoi(de->d_name);
    }
    closedir(d);
    return found;
}

/* mount.s3rig -f ended by SIGTERM or SIGINT (Ctrl-C): exit status 0 and DIR unmounted,
 * with either request loop. A daemon given a relative DIR (it works from /) unmounts DIR
 * too when SIGTERM ends it: DIR is made absolute before it daemonises. */
static void test_mount_signals(void **state)
{
    (void)state;
    char path[256], mnt[256];
    write_sample_rig("sig.rig", path, sizeof path, NULL);
    make_mountpoint("m_sig", mnt, sizeof mnt);
    static const int sigs[] = {SIGTERM, SIGINT};
    static const char *const loops[] = {NULL, "spin=0"}; /* the polling loop, libfuse's */
    for (int l = 0; l < 2; l++)
        for (int s = 0; s < 2; s++) {
            pid_t pid = start_mount_fg(path, mnt, loops[l]);
            mnt_expect_bytes(mnt, "/ik_chains/0/pole", "5\n", 2);
            assert_int_equal(kill(pid, sigs[s]), 0);
            int status;
            assert_int_equal(waitpid(pid, &status, 0), pid);
            if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                fail_msg("%s, %s: status 0x%x, expected exit 0", strsignal(sigs[s]), loops[l] ? loops[l] : "spin",
                         status);
            assert_false(is_mounted(mnt));
        }

    /* relative FILE and DIR, from tmpdir; the daemon stopped by SIGTERM */
    char cwd[4096], rel[300];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(tmpdir), 0);
    mkdir("m_rel", 0755);
    char err[1024];
    char *argv[] = {(char *)mount_bin, "sig.rig", "m_rel", NULL};
    int rc = run(argv, err, sizeof err);
    assert_int_equal(chdir(cwd), 0);
    if (rc)
        fail_msg("mount.s3rig sig.rig m_rel: exit %d: %s", rc, err);
    snprintf(rel, sizeof rel, "%s/m_rel", tmpdir);
    assert_true(is_mounted(rel));
    pid_t pid = server_pid("m_rel");
    assert_true(pid > 0);
    assert_int_equal(kill(pid, SIGTERM), 0);
    for (int i = 0; i < 1000 && kill(pid, 0) == 0; i++)
        usleep(10000);
    assert_int_not_equal(kill(pid, 0), 0);
    struct stat st;
    if (stat(rel, &st) != 0)
        fail_msg("%s after the server ended: %s (left mounted)", rel, strerror(errno));
    assert_false(is_mounted(rel));
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

/* Writes text as the file path. */
static void put_file(const char *path, const char *text)
{
    assert_int_equal(fx_write_file(path, text, strlen(text)), 0);
}

/* The file at path holds exactly text, and is a plain file with one link. */
static void expect_file(const char *path, const char *text)
{
    struct stat st;
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(st.st_nlink, 1);
    size_t len;
    uint8_t *b = slurp_path(path, &len);
    if (len != strlen(text) || memcmp(b, text, len) != 0)
        fail_msg("%s: '%.*s', expected '%s'", path, (int)len, (char *)b, text);
    free(b);
}

/* s3rig extract never writes through a link already in its output folder: a symlink or
 * hard link planted where a file goes, a symlink where a folder goes, are replaced by
 * the file or folder; what they pointed at is untouched. Also for a package's resources. */
static void test_cli_extract_planted_links(void **state)
{
    (void)state;
    struct fx_gr2_layout gl;
    char path[256], out[300], victim[300], vdir[300], p[600], err[1024];
    write_sample_rig("plant.rig", path, sizeof path, &gl);
    snprintf(out, sizeof out, "%s/plant-out", tmpdir);
    snprintf(victim, sizeof victim, "%s/victim", tmpdir);
    snprintf(vdir, sizeof vdir, "%s/victim-dir", tmpdir);
    mkdir(out, 0755);
    mkdir(vdir, 0755);
    put_file(victim, "precious\n");
    /* info (volatile, written last) and a value file: symlinks; granny.gr2: a hard link;
     * header: a symlink to a folder */
    snprintf(p, sizeof p, "%s/info", out);
    assert_int_equal(symlink(victim, p), 0);
    snprintf(p, sizeof p, "%s/header.bin", out);
    assert_int_equal(symlink(victim, p), 0);
    snprintf(p, sizeof p, "%s/granny.gr2", out);
    assert_int_equal(link(victim, p), 0);
    snprintf(p, sizeof p, "%s/header", out);
    assert_int_equal(symlink(vdir, p), 0);
    char *args[] = {"extract", path, out, NULL};
    int rc = run_cli(args, NULL, 0, err, sizeof err);
    if (rc)
        fail_msg("s3rig extract: exit %d: %s", rc, err);
    expect_file(victim, "precious\n");
    DIR *d = opendir(vdir);
    assert_non_null(d);
    struct dirent *de;
    while ((de = readdir(d)))
        if (de->d_name[0] != '.')
            fail_msg("extract wrote %s into the folder a planted link pointed at", de->d_name);
    closedir(d);
    struct stat st;
    snprintf(p, sizeof p, "%s/header", out);
    assert_int_equal(lstat(p, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    snprintf(p, sizeof p, "%s/header/magic", out);
    expect_file(p, "0x8eaf13de\n");
    snprintf(p, sizeof p, "%s/granny.gr2", out);
    assert_int_equal(lstat(p, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(st.st_nlink, 1);
    assert_int_equal(st.st_size, (off_t)gl.total_size);
    snprintf(p, sizeof p, "%s/info", out);
    assert_int_equal(lstat(p, &st), 0);
    assert_true(S_ISREG(st.st_mode));

    /* a package's resources, each written as OUT/NAME */
    struct fxp_sample s;
    fxp_sample(&s, 3);
    write_fixture("plant.package", s.file, s.size, path, sizeof path);
    snprintf(out, sizeof out, "%s/plant-pkg", tmpdir);
    mkdir(out, 0755);
    char name[256];
    fxp_expected_name(name, sizeof name, 3, &s.res[0], s.names[0], s.dup[0]);
    snprintf(p, sizeof p, "%s/%s", out, name);
    assert_int_equal(symlink(victim, p), 0);
    char *pargs[] = {"extract", path, out, NULL};
    rc = run_cli(pargs, NULL, 0, err, sizeof err);
    if (rc)
        fail_msg("s3rig extract (package): exit %d: %s", rc, err);
    expect_file(victim, "precious\n");
    assert_int_equal(lstat(p, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(st.st_size, (off_t)s.res[0].len);
    fxp_sample_free(&s);
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

/* The bytes of path under mnt hold needle (binary files too). */
static bool mnt_file_has(const char *mnt, const char *path, const char *needle)
{
    struct probe p = mount_probe(mnt);
    uint8_t *buf;
    size_t len;
    if (p.read(p.ctx, path, &buf, &len))
        return false;
    bool found = memmem(buf, len, needle, strlen(needle)) != NULL;
    free(buf);
    return found;
}

/* Granny animations through the kernel: every curve's and track's files against the
 * rules (named and remapped, BitKnit2), the same bytes as s3rig extract, and
 * -o skeleton= for a file without a skeleton, in mount.s3rig and s3rig. */
static void test_mount_gr2_animations(void **state)
{
    (void)state;
    static const struct fxa_opts variants[] = {{.sig = "le32"}, {.sig = "be64", .remapped = true, .bitknit2 = true}};
    for (size_t v = 0; v < 2; v++) {
        struct fxa_result r;
        size_t size;
        uint8_t *f = fxa_build(&variants[v], &size, &r);
        char path[256], mnt[256], name[32];
        snprintf(name, sizeof name, "anim%zu.gr2", v);
        write_fixture(name, f, size, path, sizeof path);
        make_mountpoint("m_anim", mnt, sizeof mnt);
        do_mount(path, mnt, NULL);
        struct probe p = mount_probe(mnt);
        ex_gr2anim(&p, &variants[v], &r);
        do_umount(mnt);
        extract_and_compare(name, f, size);
        free(f);
    }
    /* a file without a skeleton, given one */
    struct fxa_opts bare = {.sig = "le32", .no_skeleton = true}, with = {.sig = "le64"};
    struct fxa_result r;
    size_t size, ssize;
    uint8_t *f = fxa_build(&bare, &size, &r), *sk = fxa_build(&with, &ssize, &r);
    char path[256], skel[256], mnt[256], opts[400], out[65536], err[1024];
    write_fixture("bare.gr2", f, size, path, sizeof path);
    write_fixture("skel.gr2", sk, ssize, skel, sizeof skel);
    make_mountpoint("m_anim", mnt, sizeof mnt);
    do_mount(path, mnt, NULL);
    assert_false(mnt_file_has(mnt, "/granny/root/Animations/0/animation.glb", "\"arm\""));
    mnt_expect_has(mnt, "/info", "no skeleton has bones named as its 9 tracks");
    do_umount(mnt);
    snprintf(opts, sizeof opts, "skeleton=%s", skel);
    do_mount(path, mnt, opts);
    assert_true(mnt_file_has(mnt, "/granny/animations/0/animation.glb", "\"arm\""));
    mnt_expect_has(mnt, "/info", "track group 'hero' plays on the skeleton of -o skeleton=");
    do_umount(mnt);
    char *full[] = {"-o", opts, "info", "--full", path, NULL};
    assert_int_equal(run_cli(full, out, sizeof out, err, sizeof err), 0);
    assert_non_null(strstr(out, "plays on the skeleton of -o skeleton="));
    snprintf(opts, sizeof opts, "skeleton=%s", path); /* a file without one: refused, exit 3 */
    char *refuse[] = {"-o", opts, "info", path, NULL};
    assert_int_equal(run_cli(refuse, out, sizeof out, err, sizeof err), 3);
    assert_non_null(strstr(err, "holds no skeleton"));
    char *margs[] = {(char *)mount_bin, "-o", opts, path, mnt, NULL};
    assert_int_equal(run(margs, err, sizeof err), 3);
    assert_non_null(strstr(err, "holds no skeleton"));
    free(f);
    free(sk);
}

/* Every command line is checked whole before FILE is opened: a wrong one is a usage
 * error (1) naming what is wrong, although FILE does not exist (opening it gives 2). */
static void test_cli_command_line(void **state)
{
    (void)state;
    static const struct {
        char *args[6];
        const char *text;
    } cases[] = {
        {{"frob", "/nonexistent"}, "unknown command 'frob'"},
        {{"stat", "/nonexistent"}, "missing PATH"},
        {{"cat", "/nonexistent"}, "missing PATH"},
        {{"extract", "/nonexistent"}, "missing DIR"},
        {{"ls"}, "missing FILE"},
        {{"-o", "max_nodes=9"}, "missing COMMAND"},
        {{"info", "/nonexistent", "junk"}, "unexpected operand 'junk'"},
        {{"info", "--full", "/nonexistent", "junk"}, "unexpected operand 'junk'"},
        {{"ls", "/nonexistent", "a", "b"}, "unexpected operand 'b'"},
        {{"ls", "-l", "/nonexistent", "a", "b"}, "unexpected operand 'b'"},
        {{"stat", "/nonexistent", "a", "b"}, "unexpected operand 'b'"},
        {{"extract", "/nonexistent", "d", "p", "q"}, "unexpected operand 'q'"},
        {{"-l", "cat", "/nonexistent", "p"}, "-l and -R are flags of ls"},
        {{"-o", "bogus", "ls", "/nonexistent"}, "unknown option 'bogus'"},
    };
    char out[1024], err[1024];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc = run_cli(cases[i].args, out, sizeof out, err, sizeof err);
        if (rc != 1 || !strstr(err, cases[i].text))
            fail_msg("s3rig %s %s ...: exit %d, '%s' (expected 1, '%s')", cases[i].args[0],
                     cases[i].args[1] ? cases[i].args[1] : "", rc, err, cases[i].text);
    }
    /* the same command lines made whole: FILE is opened (and is missing: 2) */
    char *whole[] = {"stat", "/nonexistent", "/a", NULL};
    assert_int_equal(run_cli(whole, out, sizeof out, err, sizeof err), 2);

    /* mount.s3rig: an -o item nobody knows is a usage error naming it, before FILE is
     * opened; mount(8)'s sloppy -s ignores it (and then the missing FILE gives 2) */
    char *unknown[] = {(char *)mount_bin, "-o", "noatime,frob=2", "/nonexistent", tmpdir, NULL};
    assert_int_equal(run(unknown, err, sizeof err), 1);
    assert_non_null(strstr(err, "unknown option 'frob=2'"));
    setenv("S3RIG_MOUNT_HELPER", "1", 1);
    char *helper[] = {(char *)mount_bin, "/nonexistent", tmpdir, "-o", "frob=2", NULL};
    assert_int_equal(run(helper, err, sizeof err), 1);
    char *sloppy[] = {(char *)mount_bin, "/nonexistent", tmpdir, "-s", "-o", "frob=2", NULL};
    assert_int_equal(run(sloppy, err, sizeof err), 2);
    unsetenv("S3RIG_MOUNT_HELPER");

    /* no limit on the number of -o lists: the 70th is read too, by both commands */
    enum { LISTS = 70 };
    char *many[2 * LISTS + 6];
    for (int cli = 0; cli <= 1; cli++) {
        int n = 0;
        many[n++] = (char *)(cli ? cli_bin() : mount_bin);
        for (int i = 0; i < LISTS - 1; i++) {
            many[n++] = "-o";
            many[n++] = "max_nodes=5000";
        }
        many[n++] = "-o";
        many[n++] = "max_nodes=0";
        if (cli)
            many[n++] = "info";
        many[n++] = "/nonexistent";
        if (!cli)
            many[n++] = tmpdir;
        many[n] = NULL;
        assert_int_equal(run(many, err, sizeof err), 1);
        assert_non_null(strstr(err, "'max_nodes=0'"));
    }
}

/* Output that cannot be written is an error (6, "write error"), never lost with status 0:
 * stdout checked at exit, a failed write in cat is not a failed read. */
static void test_cli_output_errors(void **state)
{
    (void)state;
    char path[256], err[1024];
    write_sample_rig("out.rig", path, sizeof path, NULL);
    const char *cli = cli_bin();
    char *cases[][7] = {
        {(char *)cli, "ls", path, NULL},
        {(char *)cli, "ls", "-l", "-R", path, NULL},
        {(char *)cli, "info", path, NULL},
        {(char *)cli, "info", "--full", path, NULL},
        {(char *)cli, "stat", path, "/header", NULL},
        {(char *)cli, "cat", path, "/granny.gr2", NULL},
        {(char *)cli, "cat", path, "/header/magic", "/granny.gr2", NULL},
        {(char *)cli, "--help", NULL},
        {(char *)cli, "--version", NULL},
        {(char *)mount_bin, "--help", NULL},
        {(char *)mount_bin, "--print-schema", NULL},
        /* extract: a file written onto /dev/full, a folder that cannot be made */
        {(char *)cli, "extract", path, "/dev/full", "/granny.gr2", NULL},
        {(char *)cli, "extract", path, "/dev/full/x", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc = run_to(cases[i], "/dev/full", err, sizeof err);
        if (rc != 6 || (!strstr(err, "write error") && !strstr(err, "/dev/full")) || strstr(err, "cannot read"))
            fail_msg("%s %s > /dev/full: exit %d, '%s' (expected 6, a write error)", cases[i][0], cases[i][1], rc,
                     err);
    }
    /* the same to a file that takes them: 0 */
    char to[300];
    snprintf(to, sizeof to, "%s/out.txt", tmpdir);
    assert_int_equal(run_to(cases[0], to, err, sizeof err), 0);
    assert_int_equal(run_to(cases[5], to, err, sizeof err), 0);
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
        mount_test(test_mount_source_replaced),
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
        mount_test(test_mount_gr2_animations),
        mount_test(test_mount_geom),
        mount_test(test_mount_geom_parallel),
        mount_test(test_cli_extract_equals_mount),
        mount_test(test_mount_unmount_during_reads),
        mount_test(test_mount_schema_option),
        mount_test(test_mount_signals),
        cmocka_unit_test(test_cli_commands),
        cmocka_unit_test(test_cli_extract_planted_links),
        cmocka_unit_test(test_cli_command_line),
        cmocka_unit_test(test_cli_output_errors),
        mount_test(test_no_sanitizer_reports), /* last: the daemons reported nothing */
    };
    if (getenv("S3RIG_TEST_FILTER")) /* one test by name, when chasing a failure */
        cmocka_set_test_filter(getenv("S3RIG_TEST_FILTER"));
    return cmocka_run_group_tests_name("mount", tests, mount_group_setup, mount_group_teardown);
}
