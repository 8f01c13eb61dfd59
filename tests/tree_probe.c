/* The in-process probe: reaches the tree through its API, as the mount would. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tree_probe.h"

/* ---- the in-process probe ---- */

static int tp_stat(void *ctx, const char *path, enum expect_kind *kind, uint64_t *size)
{
    struct s3fs *fs = ctx;
    uint32_t ino;
    enum s3_err rc = tree_resolve(fs->tree, path, &ino);
    if (rc)
        return -s3_err_errno(rc); /* the probe speaks errno, as a mount does */
    int k = tree_kind(fs->tree, ino);
    *kind = k == NODE_DIR ? EX_DIR : k == NODE_LINK ? EX_LINK : EX_FILE;
    *size = tree_size(fs->tree, ino);
    return 0;
}

static int tp_read(void *ctx, const char *path, uint8_t **buf, size_t *len)
{
    struct s3fs *fs = ctx;
    uint32_t ino;
    enum s3_err rc = tree_resolve(fs->tree, path, &ino);
    if (rc)
        return -s3_err_errno(rc); /* the probe speaks errno, as a mount does */
    uint64_t size = tree_size(fs->tree, ino);
    *buf = malloc(size + 1);
    /* read in odd-sized pieces to exercise offsets */
    size_t got = 0;
    while (got < size) {
        size_t k = 0;
        enum s3_err e = tree_read(fs->tree, ino, got, *buf + got, 7, &k);
        if (e || k == 0)
            return e ? -s3_err_errno(e) : -EIO;
        got += k;
    }
    size_t past = 1;
    assert_int_equal(tree_read(fs->tree, ino, got, *buf, 7, &past), S3_OK);
    assert_int_equal(past, 0);
    *len = got;
    return 0;
}

static int tp_readlink(void *ctx, const char *path, char **target)
{
    struct s3fs *fs = ctx;
    uint32_t ino;
    enum s3_err rc = tree_resolve(fs->tree, path, &ino);
    if (rc)
        return -s3_err_errno(rc); /* the probe speaks errno, as a mount does */
    const char *to = tree_link_target(fs->tree, ino);
    if (!to)
        return -EINVAL;
    *target = strdup(to);
    return 0;
}

static long tp_getxattr(void *ctx, const char *path, const char *name, char *value, size_t size)
{
    struct s3fs *fs = ctx;
    uint32_t ino;
    enum s3_err rc = tree_resolve(fs->tree, path, &ino);
    if (rc)
        return -s3_err_errno(rc); /* the probe speaks errno, as a mount does */
    size_t n = 0;
    rc = size ? tree_getxattr(fs->tree, ino, name, value, size - 1, &n) : S3_ERR_RANGE;
    if (rc)
        return -s3_err_errno(rc); /* ENODATA, ERANGE: as getxattr(2) */
    value[n] = 0;
    return (long)n;
}

static int tp_list(void *ctx, const char *path, char ***names)
{
    struct s3fs *fs = ctx;
    uint32_t ino;
    enum s3_err rc = tree_resolve(fs->tree, path, &ino);
    if (rc)
        return -s3_err_errno(rc); /* the probe speaks errno, as a mount does */
    rc = tree_populate(fs->tree, ino);
    if (rc)
        return -s3_err_errno(rc); /* the probe speaks errno, as a mount does */
    uint32_t n = tree_child_count(fs->tree, ino);
    *names = malloc((n + 1) * sizeof **names);
    for (uint32_t i = 0; i < n; i++)
        (*names)[i] = strdup(tree_name(fs->tree, tree_child(fs->tree, ino, i)));
    return (int)n;
}

struct probe tree_probe(struct s3fs *fs)
{
    return (struct probe){fs, tp_stat, tp_read, tp_readlink, tp_getxattr, tp_list, false};
}


void probe_expect_bytes(const struct probe *p, const char *path, const void *want, size_t n)
{
    uint8_t *buf;
    size_t len;
    int rc = p->read(p->ctx, path, &buf, &len);
    if (rc)
        fail_msg("%s: cannot read (%d)", path, rc);
    if (len != n)
        fail_msg("%s: %zu bytes, expected %zu", path, len, n);
    if (n)
        assert_memory_equal(buf, want, n);
    free(buf);
}

char *ex_read_text(const struct probe *p, const char *path)
{
    uint8_t *buf;
    size_t len;
    if (p->read(p->ctx, path, &buf, &len))
        fail_msg("%s: missing", path);
    char *s = malloc(len + 1);
    memcpy(s, buf, len);
    s[len] = 0;
    free(buf);
    return s;
}

void ex_text_is(const struct probe *p, const char *path, const char *want)
{
    uint8_t *buf;
    size_t len;
    int rc = p->read(p->ctx, path, &buf, &len);
    if (rc)
        fail_msg("%s: cannot read (%d)", path, rc);
    if (len != strlen(want) || memcmp(buf, want, len) != 0)
        fail_msg("%s: '%.*s', expected '%s'", path, (int)len, (char *)buf, want);
    free(buf);
}

void ex_holds(const struct probe *p, const char *path, const char *want)
{
    char *s = ex_read_text(p, path);
    if (!strstr(s, want))
        fail_msg("%s: '%s' lacks '%s'", path, s, want);
    free(s);
}

void ex_link_is(const struct probe *p, const char *path, const char *want)
{
    char *target;
    int rc = p->readlink(p->ctx, path, &target);
    if (rc)
        fail_msg("%s: not a link (%d)", path, rc);
    if (strcmp(target, want) != 0)
        fail_msg("%s -> %s, expected %s", path, target, want);
    free(target);
}

void ex_absent(const struct probe *p, const char *path)
{
    enum expect_kind k;
    uint64_t size;
    if (p->stat(p->ctx, path, &k, &size) != -ENOENT)
        fail_msg("%s: exists", path);
}

/* Appends component c (of length n) to the absolute path in out, "..": drops the last. */
static void push_component(char *out, size_t outlen, const char *c, size_t n)
{
    if (n == 0 || (n == 1 && c[0] == '.'))
        return;
    if (n == 2 && c[0] == '.' && c[1] == '.') {
        char *slash = strrchr(out, '/');
        if (slash)
            *slash = 0;
        return;
    }
    size_t len = strlen(out);
    snprintf(out + len, outlen - len, "/%.*s", (int)n, c);
}

char *probe_resolve(const struct probe *p, const char *path)
{
    char done[4096] = "", rest[4096];
    snprintf(rest, sizeof rest, "%s", path);
    for (int hops = 0; rest[0];) {
        const char *s = rest;
        while (*s == '/')
            s++;
        size_t n = strcspn(s, "/");
        char before[4096];
        snprintf(before, sizeof before, "%s", done);
        push_component(done, sizeof done, s, n);
        char tail[4096];
        snprintf(tail, sizeof tail, "%s", s + n);
        enum expect_kind kind;
        uint64_t size;
        if (done[0] && p->stat(p->ctx, done, &kind, &size))
            return NULL;
        if (done[0] && kind == EX_LINK) {
            char *target;
            if (++hops > 40 || p->readlink(p->ctx, done, &target))
                return NULL;
            snprintf(done, sizeof done, "%s", before); /* the target is relative to the link's directory */
            snprintf(rest, sizeof rest, "%s%s", target, tail);
            free(target);
            continue;
        }
        snprintf(rest, sizeof rest, "%s", tail);
    }
    return strdup(done[0] ? done : "/");
}
