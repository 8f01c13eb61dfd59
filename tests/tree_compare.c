#include "tree_compare.h"

#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cmocka.h>

#include "fs/open/open.h"
#include "testutil.h"

static struct snap_entry *snap_add(struct snap *s, const char *path)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 256;
        s->e = realloc(s->e, s->cap * sizeof *s->e);
        assert_non_null(s->e);
    }
    struct snap_entry *e = &s->e[s->n++];
    memset(e, 0, sizeof *e);
    e->path = strdup(path);
    return e;
}

/* Drops the lines that depend on the run, not the file: "source: ..." (where a nested view
 * says where its bytes lie) and "cache: ..." (what the mount's cache has done so far). */
static void drop_run_lines(uint8_t *d, size_t *len)
{
    size_t w = 0;
    for (size_t r = 0; r < *len;) {
        const uint8_t *nl = memchr(d + r, '\n', *len - r);
        size_t l = nl ? (size_t)(nl - (d + r)) + 1 : *len - r;
        bool run_line = (l >= 8 && memcmp(d + r, "source: ", 8) == 0) || (l >= 7 && memcmp(d + r, "cache: ", 7) == 0);
        if (!run_line) {
            memmove(d + w, d + r, l);
            w += l;
        }
        r += l;
    }
    *len = w;
}

static int by_path(const void *a, const void *b)
{
    return strcmp(((const struct snap_entry *)a)->path, ((const struct snap_entry *)b)->path);
}

static void tree_xattr(struct tree *t, uint32_t ino, const char *name, char *out, size_t size)
{
    tree_getxattr_str(t, ino, name, out, size); /* "" when it has none */
}

/* True when path is one of skip's paths or lies below one. */
static bool skipped(const char *path, const char *const *skip)
{
    for (; skip && *skip; skip++) {
        size_t n = strlen(*skip);
        if (strncmp(path, *skip, n) == 0 && (path[n] == 0 || path[n] == '/'))
            return true;
    }
    return false;
}

static void snap_tree_node(struct snap *s, struct tree *t, uint32_t ino, const char *path,
                           const char *const *skip)
{
    int kind = tree_kind(t, ino);
    struct snap_entry *e = snap_add(s, path);
    tree_xattr(t, ino, "user.s3rig.offset", e->offset, sizeof e->offset);
    tree_xattr(t, ino, "user.s3rig.length", e->length, sizeof e->length);
    tree_xattr(t, ino, "user.s3rig.type", e->type, sizeof e->type);
    if (kind == NODE_LINK) {
        e->kind = 'l';
        e->data = (uint8_t *)strdup(tree_link_target(t, ino));
        e->dlen = strlen(tree_link_target(t, ino));
        return;
    }
    if (kind == NODE_FILE) {
        e->kind = 'f';
        e->size = tree_size(t, ino);
        assert_int_equal(tree_read_all(t, ino, &e->data, &e->dlen), 0);
        return;
    }
    e->kind = 'd';
    assert_int_equal(tree_populate(t, ino), 0);
    for (uint32_t i = 0; i < tree_child_count(t, ino); i++) {
        uint32_t c = tree_child(t, ino, i);
        char *sub;
        assert_true(asprintf(&sub, "%s%s%s", path, path[0] ? "/" : "", tree_name(t, c)) > 0);
        if (!skipped(sub, skip))
            snap_tree_node(s, t, c, sub, skip);
        free(sub);
    }
}

static void finish(struct snap *s, void (*reread)(struct snap_entry *e, void *ctx), void *ctx)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->e[i].path, "info") == 0) {
            reread(&s->e[i], ctx);
            drop_run_lines(s->e[i].data, &s->e[i].dlen);
            s->e[i].size = s->e[i].dlen;
        }
    qsort(s->e, s->n, sizeof *s->e, by_path);
}

struct tree_at {
    struct tree *t;
    uint32_t dir;
};

static void reread_tree(struct snap_entry *e, void *ctx)
{
    struct tree_at *a = ctx;
    uint32_t ino;
    assert_int_equal(tree_lookup(a->t, a->dir, "info", &ino), 0);
    free(e->data);
    assert_int_equal(tree_read_all(a->t, ino, &e->data, &e->dlen), 0);
}

void snap_tree_except(struct snap *s, struct tree *t, uint32_t dir, const char *const *skip)
{
    snap_tree_node(s, t, dir, "", skip);
    struct tree_at a = {t, dir};
    finish(s, reread_tree, &a);
}

void snap_tree(struct snap *s, struct tree *t, uint32_t dir)
{
    snap_tree_except(s, t, dir, NULL);
}

void snap_file_alone(struct snap *s, const uint8_t *data, size_t size)
{
    struct s3fs *fs = open_mem(data, size, NULL, NULL);
    snap_tree(s, fs->tree, TREE_ROOT);
    s3fs_close(fs);
}

static void path_xattr(const char *p, const char *name, char *out, size_t size)
{
    ssize_t k = lgetxattr(p, name, out, size - 1);
    out[k > 0 ? k : 0] = 0;
}

static void snap_path_node(struct snap *s, const char *root, const char *rel)
{
    char *full;
    assert_true(asprintf(&full, "%s%s%s", root, rel[0] ? "/" : "", rel) > 0);
    struct stat st;
    assert_int_equal(lstat(full, &st), 0);
    struct snap_entry *e = snap_add(s, rel);
    path_xattr(full, "user.s3rig.offset", e->offset, sizeof e->offset);
    path_xattr(full, "user.s3rig.length", e->length, sizeof e->length);
    path_xattr(full, "user.s3rig.type", e->type, sizeof e->type);
    if (S_ISLNK(st.st_mode)) {
        e->kind = 'l';
        char buf[4096];
        ssize_t k = readlink(full, buf, sizeof buf);
        assert_true(k >= 0);
        e->data = malloc((size_t)k + 1);
        memcpy(e->data, buf, (size_t)k);
        e->dlen = (size_t)k;
    } else if (S_ISREG(st.st_mode)) {
        e->kind = 'f';
        e->size = (uint64_t)st.st_size;
        e->data = slurp_path(full, &e->dlen);
    } else {
        e->kind = 'd';
        DIR *d = opendir(full);
        assert_non_null(d);
        char **names = NULL;
        size_t nn = 0;
        struct dirent *de;
        while ((de = readdir(d))) {
            if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                continue;
            names = realloc(names, (nn + 1) * sizeof *names);
            names[nn++] = strdup(de->d_name);
        }
        closedir(d);
        for (size_t i = 0; i < nn; i++) {
            char *sub;
            assert_true(asprintf(&sub, "%s%s%s", rel, rel[0] ? "/" : "", names[i]) > 0);
            snap_path_node(s, root, sub);
            free(sub);
            free(names[i]);
        }
        free(names);
    }
    free(full);
}

static void reread_path(struct snap_entry *e, void *ctx)
{
    char *p;
    assert_true(asprintf(&p, "%s/info", (const char *)ctx) > 0);
    free(e->data);
    e->data = slurp_path(p, &e->dlen);
    free(p);
}

void snap_path(struct snap *s, const char *dir)
{
    snap_path_node(s, dir, "");
    finish(s, reread_path, (void *)dir);
}

static void snap_compare(const struct snap *a, const struct snap *b, bool xattrs)
{
    for (size_t i = 0; i < a->n && i < b->n; i++) {
        const struct snap_entry *x = &a->e[i], *y = &b->e[i];
        if (!x->path[0] && !y->path[0]) /* the roots' xattrs are their hosts' */
            continue;
        if (strcmp(x->path, y->path) != 0)
            fail_msg("paths differ: '%s' and '%s'", x->path, y->path);
        if (x->kind != y->kind || x->size != y->size || x->dlen != y->dlen ||
            (x->dlen && memcmp(x->data, y->data, x->dlen) != 0))
            fail_msg("'%s' differs: kind %c/%c, size %llu/%llu, %zu/%zu bytes", x->path, x->kind, y->kind,
                     (unsigned long long)x->size, (unsigned long long)y->size, x->dlen, y->dlen);
        if (xattrs && (strcmp(x->offset, y->offset) || strcmp(x->length, y->length) || strcmp(x->type, y->type)))
            fail_msg("'%s' xattrs differ: offset %s/%s length %s/%s type %s/%s", x->path, x->offset, y->offset,
                     x->length, y->length, x->type, y->type);
    }
    if (a->n != b->n)
        fail_msg("%zu and %zu nodes", a->n, b->n);
}

void snap_assert_equal(const struct snap *a, const struct snap *b)
{
    snap_compare(a, b, true);
}

void snap_assert_same_content(const struct snap *a, const struct snap *b)
{
    snap_compare(a, b, false);
}

const struct snap_entry *snap_find(const struct snap *s, const char *path)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->e[i].path, path) == 0)
            return &s->e[i];
    return NULL;
}

void snap_free(struct snap *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->e[i].path);
        free(s->e[i].data);
    }
    free(s->e);
    memset(s, 0, sizeof *s);
}
