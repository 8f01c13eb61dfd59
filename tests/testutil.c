#include "testutil.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

void put32(uint8_t *p, uint32_t v, bool be)
{
    for (int i = 0; i < 4; i++)
        p[be ? 3 - i : i] = (uint8_t)(v >> (8 * i));
}

bool diag_has(const struct diag *d, const char *needle)
{
    for (size_t i = 0; i < d->n; i++)
        if (strstr(d->msg[i], needle))
            return true;
    return false;
}

const char *vectors_path(void)
{
    const char *d = getenv("S3RIG_VECTORS");
    return d && *d ? d : S3RIG_DEFAULT_VECTORS;
}

const char *vectors_dir(void)
{
    const char *d = vectors_path();
    struct stat st;
    if (stat(d, &st) != 0 || !S_ISDIR(st.st_mode)) {
        print_message("the vectors folder %s is absent (S3RIG_VECTORS): skipping the vector test\n", d);
        return NULL;
    }
    return d;
}

const char *const gr2_vector_files[] = {"suzanne_le.gr2", "suzanne_be.gr2", "suzanne_le64.gr2", "suzanne_be64.gr2",
                                        "suzanne_textured_external.gr2", NULL};

const char *vectors_or_skip(void)
{
    const char *d = vectors_dir();
    if (!d)
        skip();
    return d;
}

void each_gr2_vector(void (*fn)(const char *dir, const char *name))
{
    const char *dir = vectors_or_skip();
    for (size_t i = 0; gr2_vector_files[i]; i++)
        fn(dir, gr2_vector_files[i]);
}

uint8_t *slurp_vector(const char *dir, const char *sub, const char *name, size_t *n)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s/%s", dir, sub, name);
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    rewind(f);
    uint8_t *b = malloc(*n + 1);
    if (!b || fread(b, 1, *n, f) != *n) {
        free(b);
        fclose(f);
        return NULL;
    }
    fclose(f);
    b[*n] = 0;
    return b;
}

uint8_t *slurp_path(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s: %s", path, strerror(errno));
    size_t cap = 4096, n = 0, k;
    uint8_t *b = malloc(cap);
    while ((k = fread(b + n, 1, cap - n, f)) > 0)
        if ((n += k) == cap)
            b = realloc(b, cap *= 2);
    fclose(f);
    b[n] = 0; /* n < cap: text can be used as a string */
    *len = n;
    return b;
}

struct s3fs *open_mem(const void *data, size_t size, const struct s3fs_opts *opts, const char *what)
{
    struct s3fs *fs;
    char err[512];
    if (s3fs_open_mem(&fs, data, size, opts, err, sizeof err) != S3_OK)
        fail_msg("%s%s%s", what ? what : "", what ? ": " : "", err);
    return fs;
}

bool path_exists(struct s3fs *fs, const char *path)
{
    uint32_t ino;
    return tree_resolve(fs->tree, path, &ino) == 0;
}

void *read_path(struct s3fs *fs, const char *path, size_t *len)
{
    uint32_t ino;
    if (tree_resolve(fs->tree, path, &ino))
        fail_msg("%s: missing", path);
    uint8_t *buf;
    size_t n;
    enum s3_err rc = tree_read_all(fs->tree, ino, &buf, &n);
    if (rc)
        fail_msg("%s: unreadable (%s)", path, s3_err_str(rc));
    assert_int_equal(tree_size(fs->tree, ino), n);
    buf = realloc(buf, n + 1);
    buf[n] = 0;
    if (len)
        *len = n;
    return buf;
}

void expect_bytes(struct s3fs *fs, const char *path, const void *want, size_t n)
{
    size_t len;
    uint8_t *b = read_path(fs, path, &len);
    if (len != n)
        fail_msg("%s: %zu bytes, expected %zu", path, len, n);
    if (n)
        assert_memory_equal(b, want, n);
    free(b);
}

void expect_text(struct s3fs *fs, const char *path, const char *want)
{
    char *s = read_path(fs, path, NULL);
    if (strcmp(s, want) != 0)
        fail_msg("%s: '%s', expected '%s'", path, s, want);
    free(s);
}

void expect_has(struct s3fs *fs, const char *path, const char *needle)
{
    char *s = read_path(fs, path, NULL);
    if (!strstr(s, needle))
        fail_msg("%s lacks '%s':\n%s", path, needle, s);
    free(s);
}

void expect_lacks(struct s3fs *fs, const char *path, const char *needle)
{
    char *s = read_path(fs, path, NULL);
    if (strstr(s, needle))
        fail_msg("%s has '%s':\n%s", path, needle, s);
    free(s);
}

size_t tree_read_ok(struct tree *t, uint32_t ino, uint64_t off, void *buf, size_t len)
{
    size_t got = 0;
    assert_int_equal(tree_read(t, ino, off, buf, len, &got), S3_OK);
    return got;
}

void remove_tree(const char *dir)
{
    char cmd[4200];
    assert_true(strlen(dir) < sizeof cmd - 16 && !strchr(dir, '\''));
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}
