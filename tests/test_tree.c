/* The tree without FUSE: node operations, and whole-tree walks of generated files
 * compared with what the fixture builder wrote. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "expect.h"
#include "fixture.h"
#include "fs/open/open.h"
#include "fs/core/sbuf.h"
#include "fs/core/view.h"
#include "fs/views/gr2/view_gr2.h"
#include "fs/views/gr2/view_gr2obj.h"
#include "tree_probe.h"
#include "walk.h"
#include "fixture_gr2obj.h"
#include "fixture_rig_clear.h"
#include "testutil.h"

/* ---- node operations ---- */

/* A tree made by hand over the len bytes at data (src is the caller's: the tree keeps
 * it), with lim (NULL: the defaults); its root into *root. */
static struct tree *hand_tree(struct source *src, const void *data, size_t len, const struct tree_limits *lim,
                              uint32_t *root)
{
    source_mem(src, data, len);
    struct tree *t = tree_new(src, lim);
    *root = tree_add_dir(t, 0, "", NULL, NULL, NULL, 0);
    return t;
}

/* A view over a hand tree, for the value-file helpers: the tree and a cache for the
 * forms of files rendered on read. */
static void hand_fs(struct s3fs *fs, struct tree *t)
{
    memset(fs, 0, sizeof *fs);
    fs->tree = t;
    cache_init(&fs->cache, 64u << 20);
}

static enum s3_err populate_three(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)ctx;
    for (uint64_t i = 0; i < arg; i++) {
        char name[8];
        snprintf(name, sizeof name, "%c", (char)('c' - i));
        tree_add_textf(t, dir, name, "u32", "%llu\n", (unsigned long long)i);
    }
    return S3_OK;
}

static void test_tree_nodes(void **state)
{
    (void)state;
    static const uint8_t data[] = "0123456789abcdef";
    struct source src;
    uint32_t root;
    struct tree *t = hand_tree(&src, data, 16, NULL, &root);
    assert_int_equal(root, TREE_ROOT);
    uint32_t lazy = tree_add_dir(t, root, "lazy", "dir", populate_three, NULL, 3);
    uint32_t f = tree_add_range(t, root, "r.bin", "bytes", 4, 6);
    assert_int_equal(tree_add_range(t, root, "bad/name", "bytes", 0, 1), 0);
    assert_int_equal(tree_add_range(t, root, "..", "bytes", 0, 1), 0);
    assert_int_equal(tree_add_range(t, root, "", "bytes", 0, 1), 0);
    /* lazy: nothing below until looked up */
    assert_int_equal(tree_node_count(t), 3);
    uint32_t b;
    assert_int_equal(tree_lookup(t, lazy, "b", &b), 0);
    assert_int_equal(tree_node_count(t), 6);
    char buf[32];
    assert_int_equal(tree_read_ok(t, b, 0, buf, sizeof buf), 2);
    assert_memory_equal(buf, "1\n", 2);
    assert_int_equal(tree_lookup(t, lazy, "zz", &b), S3_ERR_NOT_FOUND);
    assert_int_equal(tree_lookup(t, f, "x", &b), S3_ERR_NOT_DIR);
    /* creation order is kept for readdir: c b a */
    assert_string_equal(tree_name(t, tree_child(t, lazy, 0)), "c");
    assert_string_equal(tree_name(t, tree_child(t, lazy, 2)), "a");
    assert_int_equal(tree_read_ok(t, f, 2, buf, 100), 4);
    assert_memory_equal(buf, "6789", 4);
    assert_int_equal(tree_read_ok(t, f, 6, buf, 100), 0);
    /* xattrs: getxattr(2)'s questions, the reasons its errnos stand for */
    size_t len = 99;
    assert_int_equal(tree_getxattr(t, f, "user.s3rig.offset", NULL, 0, &len), S3_OK); /* the length only */
    assert_int_equal(len, 1);
    assert_int_equal(tree_getxattr(t, f, "user.s3rig.offset", buf, sizeof buf, &len), S3_OK);
    assert_int_equal(len, 1);
    assert_int_equal(buf[0], '4');
    /* "bytes" does not fit in 2: RANGE (ERANGE), with the length it needs */
    assert_int_equal(tree_getxattr(t, f, "user.s3rig.type", buf, 2, &len), S3_ERR_RANGE);
    assert_int_equal(len, 5);
    assert_int_equal(s3_err_errno(S3_ERR_RANGE), ERANGE);
    assert_int_equal(tree_getxattr(t, f, "user.other", buf, sizeof buf, &len), S3_ERR_NO_ATTR);
    assert_int_equal(tree_getxattr(t, lazy, "user.s3rig.offset", buf, sizeof buf, &len), S3_ERR_NO_ATTR);
    assert_int_equal(s3_err_errno(S3_ERR_NO_ATTR), ENODATA);
    assert_int_equal(tree_getxattr(t, 999999, "user.s3rig.type", buf, sizeof buf, &len), S3_ERR_NOT_FOUND);
    /* as a C string: the NUL counts; too short is RANGE, and buf is "" */
    char s6[6], s5[5];
    assert_int_equal(tree_getxattr_str(t, f, "user.s3rig.type", s6, sizeof s6), S3_OK);
    assert_string_equal(s6, "bytes");
    assert_int_equal(tree_getxattr_str(t, f, "user.s3rig.type", s5, sizeof s5), S3_ERR_RANGE);
    assert_string_equal(s5, "");
    assert_int_equal(tree_getxattr_str(t, f, "user.s3rig.offset", s5, 1), S3_ERR_RANGE);
    assert_string_equal(s5, "");
    assert_int_equal(tree_getxattr_str(t, f, "user.other", s6, sizeof s6), S3_ERR_NO_ATTR);
    char list[128];
    const size_t want = sizeof "user.s3rig.offset" + sizeof "user.s3rig.length" + sizeof "user.s3rig.type";
    assert_int_equal(tree_listxattr(t, f, list, 10, &len), S3_ERR_RANGE);
    assert_int_equal(len, want);
    assert_int_equal(tree_listxattr(t, f, NULL, 0, &len), S3_OK);
    assert_int_equal(len, want);
    assert_int_equal(tree_listxattr(t, f, list, sizeof list, &len), S3_OK);
    assert_int_equal(len, want);
    assert_memory_equal(list, "user.s3rig.offset\0user.s3rig.length\0user.s3rig.type", want);
    assert_int_equal(tree_listxattr(t, 999999, list, sizeof list, &len), S3_ERR_NOT_FOUND);
    /* relative paths for symlinks */
    uint32_t a;
    assert_int_equal(tree_lookup(t, lazy, "a", &a), 0);
    char *rel = tree_relpath(t, lazy, f);
    assert_string_equal(rel, "../r.bin");
    free(rel);
    rel = tree_relpath(t, root, a);
    assert_string_equal(rel, "lazy/a");
    free(rel);
    uint32_t got;
    assert_int_equal(tree_resolve(t, "/lazy/./a", &got), 0);
    assert_int_equal(got, a);
    tree_free(t);
}

/* Applies a relative path to a directory path, as the kernel resolves a symlink:
 * ".." drops a component (never above the root), "." stays. */
static void apply_relative(const char *dir, const char *rel, char *out, size_t outlen)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", dir);
    size_t n = strlen(buf);
    for (const char *s = rel; *s;) {
        size_t len = strcspn(s, "/");
        if (len == 2 && s[0] == '.' && s[1] == '.') {
            assert_true(n > 0); /* never above the root */
            while (n > 0 && buf[n - 1] != '/')
                n--;
            if (n > 0)
                n--;
            buf[n] = 0;
        } else if (!(len == 1 && s[0] == '.') && len > 0) {
            n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%.*s", n ? "/" : "", (int)len, s);
        }
        s += len + (s[len] == '/');
    }
    snprintf(out, outlen, "%s", buf);
}

static void expect_rel(const char *from, const char *to, const char *want)
{
    char *rel = tree_path_relative(from, to);
    if (strcmp(rel, want) != 0)
        fail_msg("from '%s' to '%s': '%s', expected '%s'", from, to, rel, want);
    free(rel);
}

/* Issue 31: the tree's small helpers say why they fail. A cleanup the tree has no room
 * to record is refused with NOMEM (the caller keeps its pointer: freed here, it is not
 * run twice at tree_free); a source the tree has no room for is NOMEM, the next one is
 * added; past TREE_MAX_SOURCES it is LIMIT (test_nested's source limit). */
static void test_helpers_reasons(void **state)
{
    (void)state;
    struct source src;
    uint32_t root;
    struct tree *t = hand_tree(&src, "abcd", 4, NULL, &root);
    char *kept = malloc(8);
    assert_non_null(kept);
    tree_test_fail_alloc(t, 1);
    assert_int_equal(tree_on_free(t, free, kept), S3_ERR_NOMEM);
    uint64_t attempts, failures;
    tree_test_alloc_counts(t, &attempts, &failures);
    assert_int_equal(failures, 1); /* it was the refused allocation, not another */
    free(kept);
    char *registered = malloc(8);
    assert_int_equal(tree_on_free(t, free, registered), S3_OK); /* freed by tree_free */
    /* a source needs memory once per chunk of slots: the first add that asks is refused */
    struct source more;
    source_mem(&more, "x", 1);
    uint32_t id = 0, added = 0;
    enum s3_err rc;
    tree_test_fail_alloc(t, 1);
    while ((rc = tree_add_source(t, &more, &id)) == S3_OK)
        added++;
    assert_int_equal(rc, S3_ERR_NOMEM);
    assert_true(added + 1 < TREE_MAX_SOURCES);
    assert_int_equal(tree_add_source(t, &more, &id), S3_OK);
    assert_int_equal(id, added + 1); /* the refused one took no id */
    tree_free(t);
}

/* source_open's reasons are the OS's, told apart as FUSE needs them (err.h): no such
 * file, a directory, a device (not a regular file); a regular file opens at its size. */
static void test_source_open_reasons(void **state)
{
    (void)state;
    char dir[] = "/tmp/s3rig-source-open-XXXXXX", path[64], missing[64], err[256];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/file", dir);
    snprintf(missing, sizeof missing, "%s/missing", dir);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite("12345", 1, 5, f), 5);
    assert_int_equal(fclose(f), 0);
    struct source s;
    assert_int_equal(source_open(&s, missing, err, sizeof err), S3_ERR_NOT_FOUND);
    assert_non_null(strstr(err, "missing: No such file or directory"));
    assert_int_equal(s.fd, -1);
    assert_int_equal(source_open(&s, dir, err, sizeof err), S3_ERR_IS_DIR);
    assert_non_null(strstr(err, "not a regular file"));
    assert_int_equal(source_open(&s, "/dev/null", err, sizeof err), S3_ERR_INVALID);
    assert_int_equal(source_open(&s, path, err, sizeof err), S3_OK);
    assert_int_equal(s.size, 5);
    source_close(&s);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(rmdir(dir), 0);
}

/* The one relative-path function: known answers, then every depth pair 0..4 with every
 * shared-prefix length, checked by resolving the answer back. */
static void test_path_relative(void **state)
{
    (void)state;
    expect_rel("Meshes/0", "VertexDatas/0", "../../VertexDatas/0"); /* no common prefix */
    expect_rel("Models/0", "Skeletons/0", "../../Skeletons/0");
    expect_rel("Animations/0/TrackGroups", "TrackGroups/0", "../../../TrackGroups/0");
    expect_rel("ExporterInfo", "ArtToolInfo", "../ArtToolInfo");
    expect_rel("Skeletons/1", "Skeletons/0/Bones", "../0/Bones");
    expect_rel("", "a/b", "a/b");
    expect_rel("a/b", "", "../..");
    expect_rel("a/b", "a/b", ".");
    expect_rel("a/b", "a", "..");
    expect_rel("a", "a/b/c", "b/c");
    expect_rel("ab", "a", "../a");    /* a shared first letter is not a shared component */
    expect_rel("a", "ab/c", "../ab/c");
    expect_rel("a/bc", "a/b", "../b");
    expect_rel("", "", ".");
    static const char *const comp[] = {"x", "y", "xy"};
    char from[64], to[64], back[512];
    for (int df = 0; df <= 4; df++)
        for (int dt = 0; dt <= 4; dt++)
            for (int shared = 0; shared <= (df < dt ? df : dt); shared++)
                for (int variant = 0; variant < 3; variant++) {
                    /* the first `shared` components agree, the next differ */
                    size_t nf = 0, nt = 0;
                    from[0] = to[0] = 0;
                    for (int i = 0; i < df; i++)
                        nf += (size_t)snprintf(from + nf, sizeof from - nf, "%s%s", i ? "/" : "",
                                               i < shared ? comp[i % 3] : comp[(i + variant) % 3]);
                    for (int i = 0; i < dt; i++)
                        nt += (size_t)snprintf(to + nt, sizeof to - nt, "%s%s", i ? "/" : "",
                                               i < shared ? comp[i % 3] : comp[(i + variant + 1) % 3]);
                    char *rel = tree_path_relative(from, to);
                    apply_relative(from, rel, back, sizeof back);
                    if (strcmp(back, to) != 0)
                        fail_msg("from '%s' to '%s': '%s' leads to '%s'", from, to, rel, back);
                    free(rel);
                }
}

static void test_tree_node_limit(void **state)
{
    (void)state;
    struct source src;
    struct tree_limits lim = {.max_nodes = 3};
    uint32_t root;
    struct tree *t = hand_tree(&src, "", 0, &lim, &root);
    assert_int_not_equal(tree_add_textf(t, root, "a", NULL, "x"), 0);
    assert_int_not_equal(tree_add_textf(t, root, "b", NULL, "x"), 0);
    assert_int_equal(tree_add_textf(t, root, "c", NULL, "x"), 0);
    assert_true(tree_full(t));
    tree_free(t);
}

/* ---- the accessors ---- */

static enum s3_err populate_two_dirs(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)ctx, (void)arg;
    tree_add_dir(t, dir, "d1", NULL, NULL, NULL, 0);
    tree_add_textf(t, dir, "f", NULL, "x\n");
    tree_add_dir(t, dir, "d2", NULL, populate_three, NULL, 2);
    return S3_OK;
}

static void render_hello(struct tree *t, void *ctx, struct sbuf *out)
{
    (void)t, (void)ctx;
    sb_printf(out, "hello\n");
}

/* Every accessor of tree.h on a tree made by hand, with known answers. */
static void test_tree_accessors(void **state)
{
    (void)state;
    static const uint8_t data[] = "0123456789abcdef";
    struct source src;
    uint32_t root;
    struct tree *t = hand_tree(&src, data, 16, NULL, &root);
    uint32_t r = tree_add_range(t, root, "r.bin", "bytes", 4, 6);
    uint32_t x = tree_add_textf(t, root, "t", "u32", "%d\n", 7);
    uint32_t l = tree_add_link(t, root, "l", "r.bin");
    uint32_t v = tree_add_volatile(t, root, "v", "info", render_hello, NULL);
    int ctx;
    uint32_t sub = tree_add_dir(t, root, "sub", "dir", populate_two_dirs, &ctx, 0);
    assert_int_equal(tree_node_count(t), 6);
    assert_int_equal(tree_kind(t, r), NODE_FILE);
    assert_int_equal(tree_kind(t, l), NODE_LINK);
    assert_int_equal(tree_kind(t, sub), NODE_DIR);
    assert_int_equal(tree_kind(t, 0), NODE_NONE);
    assert_int_equal(tree_kind(t, 7), NODE_NONE);
    assert_string_equal(tree_name(t, root), "");
    assert_string_equal(tree_name(t, x), "t");
    assert_null(tree_name(t, 99));
    assert_int_equal(tree_parent(t, x), root);
    assert_int_equal(tree_parent(t, root), root);
    assert_string_equal(tree_link_target(t, l), "r.bin");
    assert_null(tree_link_target(t, r));
    struct source *s = NULL;
    uint64_t off = 0;
    assert_true(tree_range(t, r, &s, &off));
    assert_ptr_equal(s, &src);
    assert_int_equal(off, 4);
    assert_false(tree_range(t, x, &s, &off));
    assert_ptr_equal(tree_node_source(t, r), &src);
    assert_ptr_equal(tree_source(t, 0), &src);
    assert_null(tree_source(t, 1));
    assert_true(tree_is_volatile(t, v));
    assert_false(tree_is_volatile(t, x));
    assert_int_equal(tree_size(t, v), 6);
    assert_int_equal(tree_size(t, x), 2);
    assert_int_equal(tree_size(t, sub), 0);
    /* a directory: nothing, and nlink 1 ("unknown"), until populated */
    assert_false(tree_is_populated(t, sub));
    assert_int_equal(tree_child_count(t, sub), 0);
    assert_int_equal(tree_nlink(t, sub), 1);
    assert_ptr_equal(tree_dir_ctx(t, sub, populate_two_dirs), &ctx);
    assert_null(tree_dir_ctx(t, sub, populate_three));
    assert_int_equal(tree_populate(t, sub), 0);
    assert_true(tree_is_populated(t, sub));
    assert_int_equal(tree_child_count(t, sub), 3);
    assert_string_equal(tree_name(t, tree_child(t, sub, 0)), "d1");
    assert_string_equal(tree_name(t, tree_child(t, sub, 2)), "d2");
    assert_int_equal(tree_child(t, sub, 3), 0);
    assert_int_equal(tree_child(t, r, 0), 0);
    assert_int_equal(tree_nlink(t, sub), 2 + 2); /* d1 and d2 */
    assert_int_equal(tree_nlink(t, r), 1);
    assert_int_equal(tree_nlink(t, l), 1);
    /* the root, made with no callback: final once first read */
    assert_int_equal(tree_child_count(t, root), 5);
    assert_int_equal(tree_populate(t, root), 0);
    assert_int_equal(tree_nlink(t, root), 2 + 1);
    assert_false(tree_full(t));
    tree_free(t);
}

/* ---- unique names ---- */

static const char *const clash_names[] = {"X.csv", "X.csv", "X.csv", "X", "X", ".hidden", ".hidden",
                                          "a.b.c", "a.b.c", "X~2.csv", "t.", "t."};
static const char *const clash_want[] = {"X.csv", "X~2.csv", "X~3.csv", "X", "X~2", ".hidden", ".hidden~2",
                                         "a.b.c", "a.b~2.c", "X~2~2.csv", "t.", "t~2."};
#define NCLASH (sizeof clash_names / sizeof clash_names[0])

static enum s3_err populate_clash(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)ctx, (void)arg;
    for (size_t i = 0; i < NCLASH; i++)
        assert_int_not_equal(tree_add_textf(t, dir, clash_names[i], NULL, "%zu\n", i), 0);
    return S3_OK;
}

/* A name already used in a directory gets ~N before its extension (the rule of tree.h and
 * s3rig(5)); the first keeps its name, creation order is kept, and the view's /info
 * line counts them once. */
static void test_names_unique(void **state)
{
    (void)state;
    struct source src;
    uint32_t root;
    struct tree *t = hand_tree(&src, "", 0, NULL, &root);
    uint32_t d = tree_add_dir(t, root, "d", NULL, populate_clash, NULL, 0);
    assert_int_equal(tree_populate(t, d), 0);
    assert_int_equal(tree_child_count(t, d), NCLASH);
    for (size_t i = 0; i < NCLASH; i++) {
        uint32_t c = tree_child(t, d, (uint32_t)i), found;
        if (strcmp(tree_name(t, c), clash_want[i]) != 0)
            fail_msg("child %zu is '%s', expected '%s'", i, tree_name(t, c), clash_want[i]);
        assert_int_equal(tree_lookup(t, d, clash_want[i], &found), 0);
        assert_int_equal(found, c);
        char buf[16], want[16];
        snprintf(want, sizeof want, "%zu\n", i);
        assert_int_equal(tree_read_ok(t, c, 0, buf, sizeof buf), (ssize_t)strlen(want));
        assert_memory_equal(buf, want, strlen(want));
    }
    struct sbuf w = {0};
    assert_int_equal(tree_view_warnings(t, 0, &w), 1);
    sb_put(&w, "", 1);
    assert_string_equal(w.p, "warning: 7 nodes had a name already used in their directory, so they are shown as "
                             "NAME~N (the first: /d/X~2.csv)\n");
    sb_free(&w);
    tree_free(t);
}

struct many_names {
    unsigned n;
    bool taken_first; /* the suffixed names exist before the clashes */
};

static enum s3_err populate_many(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    const struct many_names *m = ctx;
    char name[32];
    for (unsigned i = 2; m->taken_first && i <= m->n; i++) {
        snprintf(name, sizeof name, "m~%u.csv", i);
        tree_add_textf(t, dir, name, NULL, "taken\n");
    }
    for (unsigned i = 0; i < m->n; i++)
        tree_add_textf(t, dir, "m.csv", NULL, "%u\n", i);
    for (unsigned i = 0; i < m->n; i++) {
        snprintf(name, sizeof name, "d%u", i);
        tree_add_textf(t, dir, name, NULL, "%u\n", i);
    }
    return S3_OK;
}

/* Making names unique is linear: 4,095 children of one name (the most members a Granny
 * type may have), with and without every suffixed name taken before, and 4,095 distinct
 * names, counted in name probes (a rescan per candidate would be millions). */
static void test_names_unique_linear(void **state)
{
    (void)state;
    for (int taken = 0; taken < 2; taken++) {
        struct source src;
        uint32_t root;
        struct tree *t = hand_tree(&src, "", 0, NULL, &root);
        struct many_names m = {4095, taken};
        uint32_t d = tree_add_dir(t, root, "d", NULL, populate_many, &m, 0);
        uint64_t before = tree_name_probes(t);
        assert_int_equal(tree_populate(t, d), 0);
        uint64_t adds = 2 * m.n + (taken ? m.n - 1 : 0), probes = tree_name_probes(t) - before;
        if (probes > 10 * adds)
            fail_msg("%llu name probes for %llu children", (unsigned long long)probes, (unsigned long long)adds);
        assert_int_equal(tree_child_count(t, d), adds);
        uint32_t c;
        char want[32];
        snprintf(want, sizeof want, "m~%u.csv", taken ? m.n + m.n - 1 : m.n); /* the last of one name */
        assert_int_equal(tree_lookup(t, d, want, &c), 0);
        snprintf(want, sizeof want, "%u\n", m.n - 1);
        uint8_t *b;
        size_t len;
        assert_int_equal(tree_read_all(t, c, &b, &len), 0);
        assert_int_equal(len, strlen(want));
        assert_memory_equal(b, want, len);
        free(b);
        tree_free(t);
    }
}

/* ---- a populate that fails leaves nothing behind ---- */

struct flaky {
    int calls;
    uint32_t made[5];
};

static enum s3_err populate_leaf(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)ctx, (void)arg;
    tree_add_textf(t, dir, "leaf", NULL, "x\n");
    return S3_OK;
}

/* Adds a file, a directory with a callback (populated at once, successfully), one with
 * none and a file in it, then fails the first time (a file that changed, say). */
static enum s3_err populate_flaky(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    struct flaky *f = ctx;
    f->calls++;
    f->made[0] = tree_add_textf(t, dir, "a", NULL, "1\n");
    f->made[1] = tree_add_dir(t, dir, "sub", NULL, populate_leaf, NULL, 0);
    f->made[2] = tree_add_dir(t, dir, "plain", NULL, NULL, NULL, 0);
    f->made[3] = tree_add_textf(t, f->made[2], "inner", NULL, "2\n");
    assert_int_equal(tree_lookup(t, f->made[1], "leaf", &f->made[4]), 0);
    return f->calls == 1 ? S3_ERR_IO : S3_OK;
}

static void test_populate_rollback(void **state)
{
    (void)state;
    struct source src;
    uint32_t root;
    struct tree *t = hand_tree(&src, "", 0, NULL, &root);
    struct flaky f = {0};
    uint32_t d = tree_add_dir(t, root, "d", NULL, populate_flaky, &f, 0);
    uint64_t done, total;
    tree_progress(t, 0, &done, &total);
    assert_int_equal(done, 0);
    assert_int_equal(total, 1);
    uint32_t a;
    assert_int_equal(tree_lookup(t, d, "a", &a), S3_ERR_IO);
    assert_int_equal(f.calls, 1);
    for (int i = 0; i < 5; i++) { /* made, then removed: no such node */
        assert_int_not_equal(f.made[i], 0);
        assert_int_equal(tree_kind(t, f.made[i]), NODE_NONE);
    }
    assert_false(tree_is_populated(t, d));
    assert_int_equal(tree_child_count(t, d), 0);
    tree_progress(t, 0, &done, &total);
    assert_int_equal(done, 0); /* sub's populate is forgotten with it */
    assert_int_equal(total, 1);
    /* the retry starts afresh: the same names, once each */
    assert_int_equal(tree_lookup(t, d, "a", &a), 0);
    assert_int_equal(f.calls, 2);
    assert_int_equal(a, f.made[0]);
    assert_int_equal(tree_child_count(t, d), 3);
    assert_string_equal(tree_name(t, tree_child(t, d, 1)), "sub");
    assert_string_equal(tree_name(t, tree_child(t, d, 2)), "plain");
    uint32_t inner;
    assert_int_equal(tree_resolve(t, "/d/plain/inner", &inner), 0);
    assert_int_equal(inner, f.made[3]);
    assert_int_equal(tree_nlink(t, d), 2 + 2);
    tree_progress(t, 0, &done, &total);
    assert_int_equal(done, 2);
    assert_int_equal(total, 2);
    struct sbuf w = {0};
    assert_int_equal(tree_view_warnings(t, 0, &w), 0); /* nothing was renamed */
    sb_free(&w);
    tree_free(t);
}

/* A reason a callee could only note (tree_note_failure: a registration refused inside a
 * function that returns a node) fails the populate running with it, whatever the
 * callback returns: rolled back, and the next populate, noting nothing, lists it whole. */
static enum s3_err populate_noting(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    int *calls = ctx;
    tree_add_textf(t, dir, "a", NULL, "1\n");
    if ((*calls)++ == 0) {
        tree_note_failure(t, S3_ERR_LIMIT);
        tree_note_failure(t, S3_ERR_IO); /* the first noted is the one */
    }
    return S3_OK;
}

static void test_populate_noted_failure(void **state)
{
    (void)state;
    struct source src;
    uint32_t root;
    struct tree *t = hand_tree(&src, "", 0, NULL, &root);
    int calls = 0;
    uint32_t d = tree_add_dir(t, root, "d", NULL, populate_noting, &calls, 0);
    uint32_t a;
    assert_int_equal(tree_lookup(t, d, "a", &a), S3_ERR_LIMIT);
    assert_false(tree_is_populated(t, d));
    assert_int_equal(tree_child_count(t, d), 0);
    assert_int_equal(tree_lookup(t, d, "a", &a), S3_OK);
    assert_int_equal(calls, 2);
    assert_int_equal(tree_child_count(t, d), 1);
    tree_free(t);
}

/* ---- a failed listing's warnings (issue 32) ---- */

/* Listings that warn: each adds its warning ("outer", "inner", "a", "b") to the view's
 * list; "outer" and "b" fail their first time, after listing another directory that
 * warns and succeeds. */
struct warner {
    struct diag dg;
    int outer_calls, b_calls;
    uint32_t a;
};

static enum s3_err populate_inner(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    struct warner *w = ctx;
    tree_add_textf(t, dir, "x", NULL, "1\n");
    return diag_add(&w->dg, "%s", "inner");
}

/* "outer" makes "in" and lists it (so a failure of outer takes "in" away too). */
static enum s3_err populate_outer(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    struct warner *w = ctx;
    assert_int_equal(diag_add(&w->dg, "%s", "outer"), S3_OK);
    uint32_t in = tree_add_dir(t, dir, "in", NULL, populate_inner, w, 0);
    assert_int_equal(tree_populate(t, in), S3_OK);
    return w->outer_calls++ == 0 ? S3_ERR_FORMAT : S3_OK;
}

static enum s3_err populate_a(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    struct warner *w = ctx;
    tree_add_textf(t, dir, "x", NULL, "1\n");
    return diag_add(&w->dg, "%s", "a");
}

/* "b" lists its sibling "a", which stays listed when b fails. */
static enum s3_err populate_b(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    struct warner *w = ctx;
    assert_int_equal(diag_add(&w->dg, "%s", "b"), S3_OK);
    assert_int_equal(tree_populate(t, w->a), S3_OK);
    tree_add_textf(t, dir, "y", NULL, "1\n");
    return w->b_calls++ == 0 ? S3_ERR_NOMEM : S3_OK;
}

static size_t warned(const struct diag *d, const char *what)
{
    size_t n = 0;
    for (size_t i = 0; i < d->n; i++)
        n += strcmp(d->msg[i], what) == 0;
    return n;
}

/* A listing that fails takes its warnings back (the retry adds them once), those of the
 * listings it made inside it too (they are made again), but not those of a listing
 * elsewhere it ran that stays published (it is not made again): each warning once. */
static void test_populate_rollback_warnings(void **state)
{
    (void)state;
    struct source src;
    uint32_t root;
    struct tree *t = hand_tree(&src, "", 0, NULL, &root);
    struct warner w = {0};
    assert_int_equal(tree_set_source_diag(t, 0, &w.dg), S3_OK);
    assert_int_equal(tree_set_source_diag(t, 1, &w.dg), S3_ERR_INVALID);
    uint32_t outer = tree_add_dir(t, root, "outer", NULL, populate_outer, &w, 0);
    w.a = tree_add_dir(t, root, "a", NULL, populate_a, &w, 0);
    uint32_t b = tree_add_dir(t, root, "b", NULL, populate_b, &w, 0);
    assert_int_equal(tree_populate(t, root), S3_OK);

    assert_int_equal(tree_populate(t, outer), S3_ERR_FORMAT);
    assert_int_equal(w.dg.n, 0); /* "outer" and "inner" taken back with "in" */
    assert_int_equal(tree_populate(t, outer), S3_OK);
    assert_int_equal(warned(&w.dg, "outer"), 1);
    assert_int_equal(warned(&w.dg, "inner"), 1);

    assert_int_equal(tree_populate(t, b), S3_ERR_NOMEM);
    assert_true(tree_is_populated(t, w.a));
    assert_int_equal(warned(&w.dg, "a"), 1); /* kept: "a" stays listed */
    assert_int_equal(warned(&w.dg, "b"), 0);
    assert_int_equal(tree_populate(t, b), S3_OK);
    assert_int_equal(warned(&w.dg, "a"), 1);
    assert_int_equal(warned(&w.dg, "b"), 1);
    assert_int_equal(w.dg.n, 4);
    assert_int_equal(w.dg.dropped, 0);
    tree_free(t);
    diag_free(&w.dg);
}

/* ---- a failed listing's counts (tree_on_rollback) ---- */

/* The same listings as the warner's, each counting its own amount (outer 1, inner 10,
 * a 100, b 1000) against a view's budget through tree_on_rollback. */
struct counter {
    uint64_t n;
    int outer_calls, b_calls;
    uint32_t a;
};

static void give_back(void *ctx, uint64_t amount)
{
    ((struct counter *)ctx)->n -= amount;
}

static void count(struct tree *t, struct counter *c, uint64_t amount)
{
    c->n += amount;
    assert_int_equal(tree_on_rollback(t, give_back, c, amount), S3_OK);
}

static enum s3_err count_inner(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    tree_add_textf(t, dir, "x", NULL, "1\n");
    count(t, ctx, 10);
    return S3_OK;
}

static enum s3_err count_outer(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    struct counter *c = ctx;
    count(t, c, 1);
    uint32_t in = tree_add_dir(t, dir, "in", NULL, count_inner, c, 0);
    assert_int_equal(tree_populate(t, in), S3_OK);
    return c->outer_calls++ == 0 ? S3_ERR_FORMAT : S3_OK;
}

static enum s3_err count_a(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    tree_add_textf(t, dir, "x", NULL, "1\n");
    count(t, ctx, 100);
    return S3_OK;
}

static enum s3_err count_b(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    struct counter *c = ctx;
    count(t, c, 1000);
    assert_int_equal(tree_populate(t, c->a), S3_OK);
    tree_add_textf(t, dir, "y", NULL, "1\n");
    return c->b_calls++ == 0 ? S3_ERR_NOMEM : S3_OK;
}

/* A listing that fails gives back what it counted, and what the listings made inside it
 * counted (they are made again), but not what a listing elsewhere it ran counted (it
 * stays published): each amount counted once. Outside a listing nothing is kept. */
static void test_populate_rollback_counts(void **state)
{
    (void)state;
    struct source src;
    uint32_t root;
    struct tree *t = hand_tree(&src, "", 0, NULL, &root);
    struct counter c = {0};
    uint32_t outer = tree_add_dir(t, root, "outer", NULL, count_outer, &c, 0);
    c.a = tree_add_dir(t, root, "a", NULL, count_a, &c, 0);
    uint32_t b = tree_add_dir(t, root, "b", NULL, count_b, &c, 0);
    assert_int_equal(tree_populate(t, root), S3_OK);

    assert_int_equal(tree_populate(t, outer), S3_ERR_FORMAT);
    assert_int_equal(c.n, 0); /* outer's and inner's given back, "in" went with outer */
    assert_int_equal(tree_populate(t, outer), S3_OK);
    assert_int_equal(c.n, 11);

    assert_int_equal(tree_populate(t, b), S3_ERR_NOMEM);
    assert_true(tree_is_populated(t, c.a));
    assert_int_equal(c.n, 111); /* a's kept: "a" stays listed */
    assert_int_equal(tree_populate(t, b), S3_OK);
    assert_int_equal(c.n, 1111);

    assert_int_equal(tree_on_rollback(t, give_back, &c, 5), S3_OK); /* no listing: kept */
    assert_int_equal(c.n, 1111);
    tree_free(t);
}

/* The diag's own marks: a rollback frees what came after, the dropped count included;
 * diag_keep moves what came after an inner mark before an outer one. */
static void test_diag_marks(void **state)
{
    (void)state;
    struct diag d = {0};
    assert_int_equal(diag_add(&d, "one"), S3_OK);
    struct diag_mark outer = diag_mark(&d);
    assert_int_equal(diag_add(&d, "two"), S3_OK);
    struct diag_mark inner = diag_mark(&d);
    assert_int_equal(diag_add(&d, "three"), S3_OK);
    d.dropped++; /* as a refused warning counts itself */
    diag_keep(&d, &outer, inner);
    assert_int_equal(outer.n, 2);
    assert_int_equal(outer.dropped, 1);
    assert_string_equal(d.msg[0], "one");
    assert_string_equal(d.msg[1], "three");
    assert_string_equal(d.msg[2], "two");
    diag_rollback(&d, outer);
    assert_int_equal(d.n, 2);
    assert_int_equal(d.dropped, 1);
    assert_string_equal(d.msg[1], "three");
    diag_rollback(&d, (struct diag_mark){5, 0}); /* not behind: nothing */
    assert_int_equal(d.n, 2);
    diag_rollback(&d, (struct diag_mark){0, 0});
    assert_int_equal(d.n, 0);
    assert_int_equal(d.dropped, 0);
    diag_free(&d);
}

/* ---- whole-tree walks ---- */

static void test_walk_sample_rig(void **state)
{
    (void)state;
    size_t size;
    struct fx_rig_layout rl;
    struct fx_gr2_layout gl;
    char names[FX_SAMPLE_BONES][32];
    uint8_t *file = fx_sample_rig(&size, &rl, &gl, names);
    struct s3fs *fs = open_mem(file, size, NULL, NULL);
    struct expect_list l = {0};
    ex_sample_rig(&l, file, size, &rl, &gl, names);
    struct probe p = tree_probe(fs);
    ex_check(&l, &p);
    ex_free(&l);
    s3fs_close(fs);
    free(file);
}

static void walk_gr2(const char *sig, int version)
{
    size_t size;
    struct fx_gr2_layout gl;
    uint8_t *file = fx_sample_gr2(sig, version, &size, &gl);
    struct s3fs *fs = open_mem(file, size, NULL, NULL);
    struct probe p = tree_probe(fs);
    ex_check_sample_gr2(&p, file, size, &gl, version);
    s3fs_close(fs);
    free(file);
}

static void test_walk_gr2_variants(void **state)
{
    (void)state;
    static const char *const sigs[] = {"le32-old", "le32", "le64", "be32", "be64", "be32-old", "be32-alt",
                                       "be64-alt"};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        walk_gr2(sigs[i], 6);
        walk_gr2(sigs[i], 7);
    }
}

/* /info of the sample rig: counts and coverage computed from the layout. */
static void test_info_sample_rig(void **state)
{
    (void)state;
    size_t size;
    struct fx_rig_layout rl;
    struct fx_gr2_layout gl;
    char names[FX_SAMPLE_BONES][32];
    uint8_t *file = fx_sample_rig(&size, &rl, &gl, names);
    struct s3fs *fs = open_mem(file, size, NULL, NULL);
    uint32_t ino;
    assert_int_equal(tree_resolve(fs->tree, "/info", &ino), 0);
    char info[4096] = {0};
    assert_true(tree_read_ok(fs->tree, ino, 0, info, sizeof info - 1) > 0);
    char line[128];
    snprintf(line, sizeof line, "covered_bytes: %llu\n", (unsigned long long)(size - 56 - ex_gr2_gap_bytes(&gl)));
    assert_non_null(strstr(info, line));
    assert_non_null(strstr(info, "ik_chains: 2\n"));
    assert_non_null(strstr(info, "full_bone_list: 6\n"));
    assert_non_null(strstr(info, "gr2_crc: ok"));
    assert_non_null(strstr(info, "section 1: oodle1, 0 stored, 0 expanded, empty\n"));
    /* only the root has been parsed: the count is not final yet */
    assert_non_null(strstr(info, "warnings: 0 so far (1 parsed of the "));
    assert_int_equal(tree_populate_all(fs->tree), 0);
    memset(info, 0, sizeof info);
    assert_true(tree_read_ok(fs->tree, ino, 0, info, sizeof info - 1) > 0);
    assert_non_null(strstr(info, "warnings: 0\n"));
    s3fs_close(fs);
    free(file);
}

/* Adds two more entries named like the container's own (header, sections) and two
 * files of one name, to /granny. */
static void clashing_children(struct gr2_view *v, uint32_t granny_dir, void *ctx)
{
    (void)ctx;
    struct tree *t = v->fs->tree;
    tree_add_dir(t, granny_dir, "header", NULL, NULL, NULL, 0);
    tree_add_textf(t, granny_dir, "sections", NULL, "a file\n");
    tree_add_textf(t, granny_dir, "x.csv", NULL, "1\n");
    tree_add_textf(t, granny_dir, "x.csv", NULL, "2\n");
}

/* A view's entries that meet a name already used are renamed by the tree, and the view's
 * /info says so in one line (counted among its warnings), whatever their number. */
static void test_info_renamed_entries(void **state)
{
    (void)state;
    size_t size;
    struct fx_gr2_layout gl;
    uint8_t *file = fx_sample_gr2("le32", 7, &size, &gl);
    struct s3fs *fs = open_mem(file, size, NULL, NULL);
    assert_int_equal(gr2_view_add_granny_extra(gr2_view_of(fs), clashing_children, NULL), 0);
    assert_true(path_exists(fs, "/granny/header"));
    assert_true(path_exists(fs, "/granny/header~2"));
    assert_true(path_exists(fs, "/granny/sections~2"));
    expect_text(fs, "/granny/x.csv", "1\n");
    expect_text(fs, "/granny/x~2.csv", "2\n");
    char *info = read_path(fs, "/info", NULL);
    const char *line = "warning: 3 nodes had a name already used in their directory, so they are shown as NAME~N "
                       "(the first: /granny/header~2)\n";
    const char *at = strstr(info, line);
    if (!at || strstr(at + strlen(line), "a name already used"))
        fail_msg("one line for the renamed entries:\n%s", info);
    /* counted: the number on the warnings line is the number of warning lines */
    unsigned long nwarn = strtoul(strstr(info, "\nwarnings: ") + 11, NULL, 10), lines = 0;
    for (const char *p = info; (p = strstr(p, "\nwarning: ")); p++)
        lines++;
    assert_int_equal(nwarn, lines);
    free(info);
    s3fs_close(fs);
    free(file);
}

static void walk_links(const uint8_t *f, size_t size, size_t *links)
{
    struct s3fs *fs = open_mem(f, size, NULL, NULL);
    walk_all(fs, 1000000); /* aborts on an escaping link */
    for (uint64_t i = 1; i <= tree_node_count(fs->tree); i++)
        if (tree_kind(fs->tree, (uint32_t)i) == NODE_LINK)
            assert_true(link_stays_inside(fs->tree, (uint32_t)i));
    /* .bone, parent.bone, Granny objects, /granny/skeletons: all name directories */
    size_t n;
    char why[300];
    if (check_links(fs->tree, true, &n, why, sizeof why))
        fail_msg("%s", why);
    *links += n;
    s3fs_close(fs);
}

/* Every symlink of every fixture kind stays inside the mount and resolves to a directory
 * (the wrapped RIG's .bone links, the clear RIG's parent.bone, the Granny object links). */
static void test_links_stay_inside(void **state)
{
    (void)state;
    size_t size, links = 0;
    struct fx_rig_layout rl;
    struct fx_gr2_layout gl;
    uint8_t *f = fx_sample_rig(&size, &rl, &gl, NULL);
    walk_links(f, size, &links);
    free(f);
    struct fxg_opts go = {.sig = "le64", .version = 7, .nbones = 5};
    struct fxg_result r;
    f = fxg_build(&go, &size, &r);
    walk_links(f, size, &links);
    free(f);
    free(r.section);
    struct fxc_opts o = fxc_variant(0);
    struct fxc_layout lay;
    f = fxc_build(&o, &size, &lay);
    walk_links(f, size, &links);
    free(f);
    assert_true(links > 40);
    /* and the checker itself: */
    struct source src;
    uint32_t root;
    struct tree *t = hand_tree(&src, "", 0, NULL, &root);
    uint32_t d = tree_add_dir(t, root, "d", NULL, NULL, NULL, 0);
    assert_true(link_stays_inside(t, tree_add_link(t, d, "a", "../d/x")));
    assert_false(link_stays_inside(t, tree_add_link(t, d, "b", "../../x")));
    assert_false(link_stays_inside(t, tree_add_link(t, d, "c", "/etc/passwd")));
    /* and the resolver: a dangling link, a link to itself, a loop of two, a chain */
    char why[200];
    uint32_t to;
    /* every link made before the first resolution lists (publishes) d: a published
     * directory takes no child */
    uint32_t dangling = tree_add_link(t, d, "dangling", "../d/nothing"), self = tree_add_link(t, d, "self", "self");
    tree_add_link(t, d, "p", "q");
    uint32_t q = tree_add_link(t, d, "q", "p");
    uint32_t e = tree_add_dir(t, root, "e", NULL, NULL, NULL, 0);
    tree_add_link(t, d, "toe", "../e");
    uint32_t chain = tree_add_link(t, root, "chain", "d/toe"), up = tree_add_link(t, d, "up", "..");
    assert_int_not_equal(link_resolve(t, dangling, &to, why, sizeof why), 0);
    assert_int_not_equal(link_resolve(t, self, &to, why, sizeof why), 0);
    assert_non_null(strstr(why, "loop"));
    assert_int_not_equal(link_resolve(t, q, &to, why, sizeof why), 0);
    assert_int_equal(link_resolve(t, chain, &to, why, sizeof why), 0);
    assert_int_equal(to, e);
    assert_int_equal(link_resolve(t, up, &to, why, sizeof why), 0);
    assert_int_equal(to, root);
    /* and d, listed now, takes no child (lock-free readers hold its arrays) */
    assert_int_equal(tree_add_link(t, d, "late", "up"), 0);
    assert_int_equal(tree_graft(t, d, 0, NULL, NULL, NULL, 0), S3_ERR_BUSY);
    tree_free(t);
}

/* NAME.names (add_bone_names) whose indices all name one long bone (issue 32): 20,000 rows
 * of a 200-byte name, 4 MB of text, rendered on read from a form in the cache (the tree
 * keeps no text of it, nor a copy of the indices: tree_alloc_bytes), read at any offset;
 * out-of-range indices read "?"; a short list stays a text of its own. */
static void test_bone_names_bounded(void **state)
{
    (void)state;
    struct source src;
    uint32_t root;
    struct tree *t = hand_tree(&src, "", 0, NULL, &root);
    char longname[201];
    for (int i = 0; i < 200; i++)
        longname[i] = (char)('A' + i % 26);
    longname[200] = 0;
    char *names[2] = {longname, "pelvis"};
    enum { ROWS = 20000 };
    int32_t *idx = malloc(ROWS * sizeof *idx);
    for (int i = 0; i < ROWS; i++)
        idx[i] = i % 1000 == 999 ? 7 : 0; /* every 1000th out of range */
    struct s3fs fs;
    hand_fs(&fs, t);
    uint64_t held = tree_text_bytes(t), kept = tree_alloc_bytes(t), derived = view_form_derivations();
    uint32_t big = add_bone_names(&fs, root, "bones", idx, ROWS, names, 2);
    int32_t few[3] = {1, -1, 0};
    uint32_t small = add_bone_names(&fs, root, "chain", few, 3, names, 2);
    assert_true(big && small);
    uint64_t want = 20 * 2 + 19980 * 201ull;
    assert_int_equal(tree_size(t, big), want);
    assert_true(tree_text_bytes(t) - held < 512); /* the short list only */
    assert_true(tree_alloc_bytes(t) - kept < 512); /* the form's item, not 20,000 indices */
    uint8_t *all;
    size_t len;
    assert_int_equal(tree_read_all(t, big, &all, &len), 0);
    assert_int_equal(len, want);
    uint64_t at = 0;
    for (int i = 0; i < ROWS; i++) {
        const char *nm = i % 1000 == 999 ? "?" : longname;
        size_t n = strlen(nm);
        if (memcmp(all + at, nm, n) != 0 || all[at + n] != '\n')
            fail_msg("row %d is not %s", i, nm);
        at += n + 1;
    }
    char buf[300];
    assert_int_equal(tree_read_ok(t, big, 201 * 999 - 1, buf, 10), 10); /* across "?\n" */
    assert_memory_equal(buf, "\n?\nABCDEFG", 10);
    free(all);
    assert_int_equal(tree_read_all(t, small, &all, &len), 0);
    assert_int_equal(len, strlen("pelvis\n?\n") + 201);
    assert_memory_equal(all, "pelvis\n?\n", 9);
    free(all);
    assert_int_equal(view_form_derivations() - derived, 1); /* the long file's form, once */
    cache_destroy(&fs.cache); /* first: its items live in the tree */
    tree_free(t);
    free(idx); /* kept by the caller while the tree lives */
}

/* A derived form's rows (view_form_row_fn) give the reason a row cannot be formatted:
 * view_row_printed says LIMIT for a text longer than VIEW_ROW_SCRATCH; a file whose row
 * fails at listing is not made, and a read whose row fails then gives that reason. */
static bool rows_fail; /* from now on, every row is 100 digits: more than the scratch */

static enum s3_err digit_row(const void *ctx, const uint8_t *form, uint64_t k, char *scratch, const char **text,
                             size_t *len)
{
    (void)ctx;
    *text = scratch;
    int width = rows_fail ? 100 : 1;
    return view_row_printed(snprintf(scratch, VIEW_ROW_SCRATCH, "%0*u", width, form[k]), len);
}

static enum s3_err zeros_derive(const void *ctx, uint8_t **form, size_t *len, char *err, size_t errlen)
{
    const uint64_t *n = ctx;
    if (!(*form = alloc_array(*n, 1)))
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    *len = *n;
    return S3_OK;
}

static void test_form_row_reasons(void **state)
{
    (void)state;
    size_t len = 99;
    assert_int_equal(view_row_printed(VIEW_ROW_SCRATCH - 1, &len), S3_OK);
    assert_int_equal(len, VIEW_ROW_SCRATCH - 1);
    assert_int_equal(view_row_printed(VIEW_ROW_SCRATCH, &len), S3_ERR_LIMIT); /* cut by snprintf */
    assert_int_equal(view_row_printed(-1, &len), S3_ERR_LIMIT);
    struct source src;
    uint32_t root;
    struct tree *t = hand_tree(&src, "", 0, NULL, &root);
    struct s3fs fs;
    hand_fs(&fs, t);
    uint64_t n = VIEW_TEXT_MAX; /* rows of "0\n": twice VIEW_TEXT_MAX, rendered on read */
    uint8_t *zeros = calloc(n, 1);
    assert_non_null(zeros);
    struct view_form f = {zeros_derive, digit_row, &n, sizeof n};
    rows_fail = true;
    assert_int_equal(view_add_form_rows(&fs, root, "never", NULL, &f, zeros, n, n), 0);
    rows_fail = false;
    uint32_t ino = view_add_form_rows(&fs, root, "zeros", NULL, &f, zeros, n, n);
    assert_int_not_equal(ino, 0);
    assert_int_equal(tree_size(t, ino), 2 * n);
    char buf[8];
    size_t got = 0;
    assert_int_equal(tree_read(t, ino, 2 * n - 4, buf, sizeof buf, &got), S3_OK);
    assert_int_equal(got, 4);
    assert_memory_equal(buf, "0\n0\n", 4);
    rows_fail = true;
    assert_int_equal(tree_read(t, ino, 0, buf, sizeof buf, &got), S3_ERR_LIMIT);
    rows_fail = false;
    free(zeros);
    cache_destroy(&fs.cache); /* first: its items live in the tree */
    tree_free(t);
}

/* Value lists (add_*_list) longer than VIEW_TEXT_MAX (issue 32): 30,000 values each, so
 * every list passes 64 KiB; the tree keeps no text of them nor a copy of the values (a
 * form in the cache, derived from the caller's values), and each reads back exactly
 * the rows written here by hand (one value per line, in the list's own notation), whole
 * and from an offset inside a row; a short list stays a text. */
static void expect_list_rows(struct tree *t, uint32_t ino, const char *want, size_t wlen)
{
    uint8_t *all;
    size_t len;
    assert_int_equal(tree_size(t, ino), wlen);
    assert_int_equal(tree_read_all(t, ino, &all, &len), 0);
    assert_int_equal(len, wlen);
    assert_memory_equal(all, want, wlen);
    free(all);
    char buf[40];
    uint64_t at = wlen / 2 + 3; /* somewhere inside a row, across the next rows */
    assert_int_equal(tree_read_ok(t, ino, at, buf, sizeof buf), sizeof buf);
    assert_memory_equal(buf, want + at, sizeof buf);
}

static void test_value_lists_bounded(void **state)
{
    (void)state;
    struct source src;
    uint32_t root;
    struct tree *t = hand_tree(&src, "", 0, NULL, &root);
    enum { N = 30000 };
    uint32_t *v = malloc(N * sizeof *v);
    char *dec = malloc(N * 12), *udec = malloc(N * 12), *hex = malloc(N * 12);
    static const char digits[] = "0123456789abcdef";
    size_t nd = 0, nu = 0, nh = 0;
    for (uint32_t i = 0; i < N; i++) {
        v[i] = i % 3 == 0 ? 0u - i * 7919u : i * 104729u; /* negatives and wide values */
        /* the expected rows, written digit by digit (not through the code's printf) */
        uint32_t x = v[i];
        bool neg = (int32_t)x < 0;
        uint32_t mag = neg ? 0u - x : x;
        char tmp[12];
        int k = 0;
        do
            tmp[k++] = digits[mag % 10];
        while (mag /= 10);
        if (neg)
            dec[nd++] = '-';
        while (k)
            dec[nd++] = tmp[--k];
        dec[nd++] = '\n';
        mag = x;
        do
            tmp[k++] = digits[mag % 10];
        while (mag /= 10);
        while (k)
            udec[nu++] = tmp[--k];
        udec[nu++] = '\n';
        hex[nh++] = '0', hex[nh++] = 'x';
        for (int s = 28; s >= 0; s -= 4)
            hex[nh++] = digits[(x >> s) & 15];
        hex[nh++] = '\n';
    }
    assert_true(nd > VIEW_TEXT_MAX && nu > VIEW_TEXT_MAX && nh > VIEW_TEXT_MAX);
    struct s3fs fs;
    hand_fs(&fs, t);
    uint64_t held = tree_text_bytes(t), kept = tree_alloc_bytes(t);
    uint32_t si = add_i32_list(&fs, root, "signed", (const int32_t *)v, N, 0);
    uint32_t ui = add_u32_list(&fs, root, "unsigned", v, N, 0);
    uint32_t hi = add_hex32_list(&fs, root, "hex", v, N, 0);
    uint32_t short_list = add_u32_list(&fs, root, "short", v + 1, 2, 4);
    assert_true(si && ui && hi && short_list);
    assert_true(tree_text_bytes(t) - held < 64); /* the short list only */
    assert_true(tree_alloc_bytes(t) - kept < 1024); /* three forms' items, not 3 × 30,000 values */
    expect_list_rows(t, si, dec, nd);
    expect_list_rows(t, ui, udec, nu);
    expect_list_rows(t, hi, hex, nh);
    assert_int_equal(tree_size(t, short_list), strlen("104729\n209458\n"));
    free(dec);
    free(udec);
    free(hex);
    cache_destroy(&fs.cache); /* first: its items live in the tree */
    tree_free(t);
    free(v); /* kept by the caller while the tree lives */
}

/* ---- computed directories ---- */

/* A table of n entries named "e%07u" (sorted, as a key table is), each a link to ../x,
 * or (entry `fail`) a target that cannot be made. The test's find is a binary search
 * that counts the entries it looks at, so the bound on a lookup comes from here. */
struct ctable {
    uint32_t n, fail;
    uint64_t probes, targets;
};

static enum s3_err ct_name(void *ctx, uint32_t i, char *buf, size_t size)
{
    (void)ctx;
    snprintf(buf, size, "e%07u", i);
    return S3_OK;
}

static enum s3_err ct_find(void *ctx, const char *name, uint32_t *out)
{
    struct ctable *c = ctx;
    uint32_t lo = 0, hi = c->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        char m[16];
        ct_name(c, mid, m, sizeof m);
        c->probes++;
        int cmp = strcmp(name, m);
        if (cmp == 0) {
            *out = mid;
            return S3_OK;
        }
        if (cmp < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return S3_ERR_NOT_FOUND;
}

static enum s3_err ct_target(struct tree *t, void *ctx, uint32_t dir, uint32_t i, char **target)
{
    (void)t, (void)dir;
    struct ctable *c = ctx;
    c->targets++;
    if (i == c->fail)
        return S3_ERR_IO;
    *target = strdup("../x");
    return *target ? S3_OK : S3_ERR_NOMEM;
}

static const struct tree_computed_ops ct_ops = {.name = ct_name, .find = ct_find, .target = ct_target};

/* arg: 0 succeeds; 1 makes the directory computed, then fails (rolled back) */
static enum s3_err populate_ctable(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    struct ctable *c = ctx;
    enum s3_err rc = tree_set_computed(t, dir, &ct_ops, c, c->n);
    if (rc == 0 && arg == 1)
        return S3_ERR_IO;
    return rc;
}

static struct tree *ctable_tree(struct source *src, struct ctable *c, uint32_t *keys)
{
    static const uint8_t data[] = "x";
    uint32_t root;
    struct tree *t = hand_tree(src, data, 1, NULL, &root);
    assert_int_not_equal(tree_add_range(t, root, "x", "bytes", 0, 1), 0);
    *keys = tree_add_dir(t, root, "keys", "dir", populate_ctable, c, 0);
    assert_int_not_equal(*keys, 0);
    return t;
}

/* ---- computed directories of directories ---- */

/* Entry i's own populate: one file "arg" holding the arg it was given. */
static enum s3_err populate_cdir_entry(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)ctx;
    return tree_add_textf(t, dir, "arg", "text", "%llu", (unsigned long long)arg) ? S3_OK : S3_ERR_NOMEM;
}

static const struct tree_computed_ops cdir_ops = {
    .name = ct_name, .find = ct_find, .populate = populate_cdir_entry, .xtype = "entry"};

static enum s3_err populate_cdirs(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    struct ctable *c = ctx;
    return tree_set_computed(t, dir, &cdir_ops, c, c->n);
}

/* Entries that are directories (ops->populate): counted as subdirectories, listed bare by
 * tree_child_peek (name, reserved number, kind) without being made, made by a lookup at
 * the number the listing gave, populated with their index; tree_populate_all makes and
 * populates them all (but no entry of a computed directory of links). */
static void test_computed_dirs(void **state)
{
    (void)state;
    struct ctable c = {.n = 1000, .fail = UINT32_MAX}, links = {.n = 50, .fail = UINT32_MAX};
    struct source src;
    uint32_t keys, dirs, e, num[1000];
    struct tree *t = ctable_tree(&src, &links, &keys);
    dirs = tree_add_dir(t, TREE_ROOT, "dirs", "dir", populate_cdirs, &c, 0);
    assert_int_not_equal(dirs, 0);
    assert_int_equal(tree_populate(t, dirs), 0);
    assert_int_equal(tree_child_count(t, dirs), 1000);
    assert_int_equal(tree_nlink(t, dirs), 2 + 1000);
    char buf[NAME_MAX + 1], want[16];
    for (uint32_t i = 0; i < 1000; i++) {
        int kind = -1;
        snprintf(want, sizeof want, "e%07u", i);
        const char *name = tree_child_peek(t, dirs, i, buf, sizeof buf, &num[i], &kind);
        assert_non_null(name);
        assert_string_equal(name, want);
        assert_int_equal(kind, NODE_DIR);
        assert_int_equal(num[i], num[0] + i); /* reserved in a row */
    }
    int kind = -1;
    assert_null(tree_child_peek(t, dirs, 1000, buf, sizeof buf, &e, &kind)); /* past the end */
    assert_null(tree_child_peek(t, dirs, 0, buf, NAME_MAX, &e, &kind));      /* too small a buffer */
    assert_int_equal(tree_computed_made(t), 0);

    assert_int_equal(tree_lookup(t, dirs, "e0000500", &e), 0);
    assert_int_equal(e, num[500]);
    assert_int_equal(tree_computed_made(t), 1);
    assert_int_equal(tree_kind(t, e), NODE_DIR);
    assert_int_equal(tree_parent(t, e), dirs);
    assert_false(tree_is_populated(t, e));
    uint32_t f;
    assert_int_equal(tree_lookup(t, e, "arg", &f), 0);
    uint8_t *b;
    size_t n;
    assert_int_equal(tree_read_all(t, f, &b, &n), 0);
    assert_memory_equal(b, "500", 3);
    assert_int_equal(n, 3);
    free(b);
    /* a made entry: peeked as its node (the same name and number), nothing rendered */
    uint64_t r0 = tree_computed_renders(t);
    assert_string_equal(tree_child_peek(t, dirs, 500, buf, sizeof buf, &f, &kind), "e0000500");
    assert_int_equal(f, e);
    assert_int_equal(kind, NODE_DIR);
    assert_int_equal(tree_computed_renders(t), r0);

    assert_int_equal(tree_populate_all(t), 0);
    assert_int_equal(tree_computed_made(t), 1000); /* the directories, no link of keys */
    for (uint32_t i = 0; i < 1000; i += 111)
        assert_true(tree_is_populated(t, num[i]));
    tree_free(t);
}

/* A lookup in a computed directory of 1,000,000 entries looks at O(log n) of them (the
 * view's find: at most 21 probes; the tree: at most one name rendered) and makes one
 * node; absent names give ENOENT; nothing is made per entry until used. */
static void test_computed_lookup(void **state)
{
    (void)state;
    struct ctable c = {.n = 1000000, .fail = UINT32_MAX};
    struct source src;
    uint32_t keys, e;
    struct tree *t = ctable_tree(&src, &c, &keys);
    assert_int_equal(tree_populate(t, keys), 0);
    assert_int_equal(tree_child_count(t, keys), 1000000);
    assert_int_equal(tree_nlink(t, keys), 2);
    assert_int_equal(tree_computed_made(t), 0);
    uint64_t r0 = tree_computed_renders(t);
    assert_int_equal(tree_lookup(t, keys, "e0654321", &e), 0);
    assert_in_range(c.probes, 1, 21); /* log2(1e6) < 20 */
    assert_in_range(tree_computed_renders(t) - r0, 1, 2); /* checked, then made */
    assert_int_equal(tree_computed_made(t), 1);
    assert_int_equal(c.targets, 1);
    assert_int_equal(tree_kind(t, e), NODE_LINK);
    assert_string_equal(tree_name(t, e), "e0654321");
    assert_string_equal(tree_link_target(t, e), "../x");
    assert_int_equal(tree_parent(t, e), keys);
    assert_int_equal(tree_size(t, e), 4);
    /* the same entry again: the same number, nothing rendered or made */
    uint32_t again;
    uint64_t r1 = tree_computed_renders(t);
    assert_int_equal(tree_lookup(t, keys, "e0654321", &again), 0);
    assert_int_equal(again, e);
    assert_int_equal(tree_computed_renders(t), r1);
    assert_int_equal(tree_child(t, keys, 654321), e);
    /* absent: past the end, between names, a prefix, a longer name */
    static const char *const absent[] = {"e1000000", "e0654321x", "e065432", "a", "zzzz", "E0000001"};
    for (size_t i = 0; i < sizeof absent / sizeof *absent; i++) {
        c.probes = 0;
        assert_int_equal(tree_lookup(t, keys, absent[i], &again), S3_ERR_NOT_FOUND);
        assert_in_range(c.probes, 0, 21);
    }
    assert_int_equal(tree_computed_made(t), 1);
    /* an unmade entry's number names no node yet (a forged number) */
    assert_int_equal(tree_kind(t, e + 1), NODE_NONE);
    assert_null(tree_name(t, e + 1));
    tree_free(t);
}

/* A listing reads entries by index and resumes at any offset: each pass gives the same
 * names in table order and the same numbers, which lookups agree with. */
static void test_computed_readdir_resume(void **state)
{
    (void)state;
    struct ctable c = {.n = 1000, .fail = UINT32_MAX};
    struct source src;
    uint32_t keys, seen[1000];
    struct tree *t = ctable_tree(&src, &c, &keys);
    assert_int_equal(tree_populate(t, keys), 0);
    /* in slices of 7 from offsets, as readdir asks */
    for (uint32_t off = 0; off < 1000; off += 7)
        for (uint32_t i = off; i < off + 7 && i < 1000; i++) {
            seen[i] = tree_child(t, keys, i);
            char want[16];
            snprintf(want, sizeof want, "e%07u", i);
            assert_string_equal(tree_name(t, seen[i]), want);
        }
    assert_int_equal(tree_child(t, keys, 1000), 0);
    assert_int_equal(tree_computed_made(t), 1000);
    assert_int_equal(c.targets, 1000);
    /* resumed from the middle, again: the same numbers, nothing made again */
    for (uint32_t i = 500; i < 1000; i++)
        assert_int_equal(tree_child(t, keys, i), seen[i]);
    for (uint32_t i = 0; i < 1000; i += 97) {
        char name[16];
        uint32_t found;
        snprintf(name, sizeof name, "e%07u", i);
        assert_int_equal(tree_lookup(t, keys, name, &found), 0);
        assert_int_equal(found, seen[i]);
    }
    assert_int_equal(c.targets, 1000);
    size_t links;
    char why[256];
    assert_int_equal(check_links(t, false, &links, why, sizeof why), 0);
    assert_int_equal(links, 1000);
    tree_free(t);
}

/* A populate that made its directory computed and then failed leaves an ordinary
 * unpopulated directory: the next use runs it again. An entry whose target cannot be
 * made fails its request and stays unmade; the others are unaffected. */
static void test_computed_failures(void **state)
{
    (void)state;
    struct ctable c = {.n = 50, .fail = 7};
    struct source src;
    uint32_t keys, e;
    struct tree *t = ctable_tree(&src, &c, &keys);
    uint32_t bad = tree_add_dir(t, TREE_ROOT, "bad", "dir", populate_ctable, &c, 1);
    assert_int_equal(tree_populate(t, bad), S3_ERR_IO);
    assert_false(tree_is_populated(t, bad));
    assert_int_equal(tree_lookup(t, bad, "e0000001", &e), S3_ERR_IO);
    assert_int_equal(tree_populate(t, keys), 0);
    assert_int_equal(tree_lookup(t, keys, "e0000007", &e), S3_ERR_IO);
    assert_int_equal(tree_child(t, keys, 7), 0);
    assert_int_equal(tree_computed_made(t), 0);
    assert_int_equal(tree_lookup(t, keys, "e0000008", &e), 0);
    assert_int_equal(tree_computed_made(t), 1);
    c.fail = UINT32_MAX; /* the next use asks again */
    assert_int_equal(tree_lookup(t, keys, "e0000007", &e), 0);
    assert_string_equal(tree_name(t, e), "e0000007");
    /* tree_set_computed outside the directory's own populate */
    assert_int_equal(tree_set_computed(t, keys, &ct_ops, &c, 3), S3_ERR_BUSY);
    tree_free(t);
}

/* The node limit counts a computed directory's reserved numbers: past it, the directory
 * holds the entries that fit (as a populate stops at the limit), the rest are refused
 * (tree_full, the node-limit line of /info) and not found. */
static void test_computed_node_limit(void **state)
{
    (void)state;
    struct ctable c = {.n = 100, .fail = UINT32_MAX};
    struct source src;
    uint32_t root, keys, e;
    static const uint8_t data[] = "x";
    struct tree_limits lim = {.max_nodes = 50};
    struct tree *t = hand_tree(&src, data, 1, &lim, &root);
    assert_int_not_equal(tree_add_range(t, root, "x", "bytes", 0, 1), 0);
    keys = tree_add_dir(t, root, "keys", "dir", populate_ctable, &c, 0);
    uint64_t before = tree_node_count(t); /* 3: the root, x, keys */
    assert_int_equal(tree_populate(t, keys), 0);
    assert_true(tree_full(t));
    assert_int_equal(tree_child_count(t, keys), 50 - before);
    assert_int_equal(tree_node_count(t), 50);
    char last[16];
    snprintf(last, sizeof last, "e%07u", (unsigned)(50 - before - 1));
    assert_int_equal(tree_lookup(t, keys, last, &e), 0);
    snprintf(last, sizeof last, "e%07u", (unsigned)(50 - before));
    assert_int_equal(tree_lookup(t, keys, last, &e), S3_ERR_NOT_FOUND);
    struct sbuf w = {0};
    assert_int_equal(tree_warnings(t, &w), 1);
    assert_non_null(strstr(w.p, "node limit reached"));
    sb_free(&w);
    tree_free(t);
}

struct ct_reader {
    struct tree *t;
    uint32_t keys, n, start;
    uint32_t ino[64];
};

static void *ct_read(void *p)
{
    struct ct_reader *r = p;
    for (uint32_t i = 0; i < r->n; i++) {
        uint32_t k = (r->start + i) % r->n;
        uint32_t c = tree_child(r->t, r->keys, k);
        const char *tg = tree_link_target(r->t, c);
        r->ino[k] = c && tg && strcmp(tg, "../x") == 0 ? c : 0;
    }
    return NULL;
}

/* Threads reaching the same entries at once (the TSan suite runs this): each entry is
 * made once, every thread gets the same number for it. */
static void test_computed_threads(void **state)
{
    (void)state;
    struct ctable c = {.n = 64, .fail = UINT32_MAX};
    struct source src;
    uint32_t keys;
    struct tree *t = ctable_tree(&src, &c, &keys);
    assert_int_equal(tree_populate(t, keys), 0);
    struct ct_reader r[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        r[i] = (struct ct_reader){.t = t, .keys = keys, .n = 64, .start = (uint32_t)i * 16};
        assert_int_equal(pthread_create(&th[i], NULL, ct_read, &r[i]), 0);
    }
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    for (uint32_t k = 0; k < 64; k++) {
        assert_int_not_equal(r[0].ino[k], 0);
        for (int i = 1; i < 4; i++)
            assert_int_equal(r[i].ino[k], r[0].ino[k]);
    }
    assert_int_equal(tree_computed_made(t), 64);
    assert_int_equal(c.targets, 64);
    tree_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tree_nodes),
        cmocka_unit_test(test_value_lists_bounded),
        cmocka_unit_test(test_tree_node_limit),
        cmocka_unit_test(test_tree_accessors),
        cmocka_unit_test(test_names_unique),
        cmocka_unit_test(test_names_unique_linear),
        cmocka_unit_test(test_populate_rollback),
        cmocka_unit_test(test_populate_noted_failure),
        cmocka_unit_test(test_populate_rollback_warnings),
        cmocka_unit_test(test_populate_rollback_counts),
        cmocka_unit_test(test_diag_marks),
        cmocka_unit_test(test_path_relative),
        cmocka_unit_test(test_walk_sample_rig),
        cmocka_unit_test(test_walk_gr2_variants),
        cmocka_unit_test(test_info_sample_rig),
        cmocka_unit_test(test_info_renamed_entries),
        cmocka_unit_test(test_links_stay_inside),
        cmocka_unit_test(test_bone_names_bounded),
        cmocka_unit_test(test_form_row_reasons),
        cmocka_unit_test(test_computed_lookup),
        cmocka_unit_test(test_computed_dirs),
        cmocka_unit_test(test_computed_readdir_resume),
        cmocka_unit_test(test_computed_failures),
        cmocka_unit_test(test_computed_node_limit),
        cmocka_unit_test(test_computed_threads),
        cmocka_unit_test(test_helpers_reasons),
        cmocka_unit_test(test_source_open_reasons),
    };
    return cmocka_run_group_tests_name("tree", tests, NULL, NULL);
}
