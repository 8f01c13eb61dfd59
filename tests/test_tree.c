/* The tree without FUSE: node operations, and whole-tree walks of generated files
 * compared with what the fixture builder wrote. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "expect.h"
#include "fixture.h"
#include "fs/view.h"
#include "tree_probe.h"
#include "walk.h"
#include "fixture_gr2obj.h"
#include "fixture_crig.h"

/* ---- node operations ---- */

static int populate_three(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)ctx;
    for (uint64_t i = 0; i < arg; i++) {
        char name[8];
        snprintf(name, sizeof name, "%c", (char)('c' - i));
        tree_add_textf(t, dir, name, "u32", "%llu\n", (unsigned long long)i);
    }
    return 0;
}

static void test_tree_nodes(void **state)
{
    (void)state;
    static const uint8_t data[] = "0123456789abcdef";
    struct source src;
    source_mem(&src, data, 16);
    struct tree *t = tree_new(&src, NULL);
    uint32_t root = tree_add_dir(t, 0, "", NULL, NULL, NULL, 0);
    assert_int_equal(root, TREE_ROOT);
    uint32_t lazy = tree_add_dir(t, root, "lazy", "dir", populate_three, NULL, 3);
    uint32_t f = tree_add_range(t, root, "r.bin", "bytes", 4, 6);
    assert_int_equal(tree_add_range(t, root, "bad/name", "bytes", 0, 1), 0);
    assert_int_equal(tree_add_range(t, root, "..", "bytes", 0, 1), 0);
    assert_int_equal(tree_add_range(t, root, "", "bytes", 0, 1), 0);
    /* lazy: nothing below until looked up */
    assert_int_equal(t->nnodes, 3);
    uint32_t b;
    assert_int_equal(tree_lookup(t, lazy, "b", &b), 0);
    assert_int_equal(t->nnodes, 6);
    char buf[32];
    assert_int_equal(tree_read(t, b, 0, buf, sizeof buf), 2);
    assert_memory_equal(buf, "1\n", 2);
    assert_int_equal(tree_lookup(t, lazy, "zz", &b), -ENOENT);
    assert_int_equal(tree_lookup(t, f, "x", &b), -ENOTDIR);
    /* creation order is kept for readdir: c b a */
    struct dirinfo *d = tree_node(t, lazy)->u.dir;
    assert_string_equal(tree_node(t, d->child[0])->name, "c");
    assert_string_equal(tree_node(t, d->child[2])->name, "a");
    assert_int_equal(tree_read(t, f, 2, buf, 100), 4);
    assert_memory_equal(buf, "6789", 4);
    assert_int_equal(tree_read(t, f, 6, buf, 100), 0);
    /* xattrs: getxattr semantics */
    assert_int_equal(tree_getxattr(t, f, "user.s3rig.offset", NULL, 0), 1);
    assert_int_equal(tree_getxattr(t, f, "user.s3rig.offset", buf, sizeof buf), 1);
    assert_int_equal(buf[0], '4');
    assert_int_equal(tree_getxattr(t, f, "user.s3rig.type", buf, 2), -ERANGE);
    assert_int_equal(tree_getxattr(t, f, "user.other", buf, sizeof buf), -ENODATA);
    assert_int_equal(tree_getxattr(t, lazy, "user.s3rig.offset", buf, sizeof buf), -ENODATA);
    char list[128];
    assert_int_equal(tree_listxattr(t, f, list, 10), -ERANGE);
    ssize_t n = tree_listxattr(t, f, list, sizeof list);
    assert_int_equal(n, (ssize_t)(sizeof "user.s3rig.offset" + sizeof "user.s3rig.length" + sizeof "user.s3rig.type"));
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

static void test_tree_node_limit(void **state)
{
    (void)state;
    struct source src;
    source_mem(&src, "", 0);
    struct tree_limits lim = {.max_nodes = 3};
    struct tree *t = tree_new(&src, &lim);
    uint32_t root = tree_add_dir(t, 0, "", NULL, NULL, NULL, 0);
    assert_int_not_equal(tree_add_textf(t, root, "a", NULL, "x"), 0);
    assert_int_not_equal(tree_add_textf(t, root, "b", NULL, "x"), 0);
    assert_int_equal(tree_add_textf(t, root, "c", NULL, "x"), 0);
    assert_true(t->full);
    tree_free(t);
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
    struct s3fs *fs;
    char err[256];
    assert_int_equal(s3fs_open_mem(&fs, file, size, NULL, err, sizeof err), 0);
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
    struct s3fs *fs;
    char err[256];
    assert_int_equal(s3fs_open_mem(&fs, file, size, NULL, err, sizeof err), 0);
    struct expect_list l = {0};
    ex_sample_gr2(&l, file, size, &gl, version);
    struct probe p = tree_probe(fs);
    ex_check(&l, &p);
    ex_free(&l);
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
    struct s3fs *fs;
    char err[256];
    assert_int_equal(s3fs_open_mem(&fs, file, size, NULL, err, sizeof err), 0);
    uint32_t ino;
    assert_int_equal(tree_resolve(fs->tree, "/info", &ino), 0);
    char info[4096] = {0};
    assert_true(tree_read(fs->tree, ino, 0, info, sizeof info - 1) > 0);
    char line[128];
    snprintf(line, sizeof line, "covered_bytes: %llu\n", (unsigned long long)(size - 56 - ex_gr2_gap_bytes(&gl)));
    assert_non_null(strstr(info, line));
    assert_non_null(strstr(info, "ik_chains: 2\n"));
    assert_non_null(strstr(info, "full_bone_list: 6\n"));
    assert_non_null(strstr(info, "gr2_crc: ok"));
    assert_non_null(strstr(info, "section 1: oodle1, 0 stored, 0 expanded, empty\n"));
    /* only the root has been parsed: the count is not final yet */
    assert_non_null(strstr(info, "warnings: 0 so far (1 of "));
    assert_int_equal(tree_populate_all(fs->tree), 0);
    memset(info, 0, sizeof info);
    assert_true(tree_read(fs->tree, ino, 0, info, sizeof info - 1) > 0);
    assert_non_null(strstr(info, "warnings: 0\n"));
    s3fs_close(fs);
    free(file);
}

static void walk_links(const uint8_t *f, size_t size, size_t *links)
{
    struct s3fs *fs;
    char err[256];
    assert_int_equal(s3fs_open_mem(&fs, f, size, NULL, err, sizeof err), 0);
    walk_all(fs, 1000000); /* aborts on an escaping link */
    for (uint64_t i = 1; i <= fs->tree->nnodes; i++) {
        struct node *n = tree_node(fs->tree, (uint32_t)i);
        if (n->type == NODE_LINK) {
            assert_true(link_stays_inside(fs->tree, (uint32_t)i));
            (*links)++;
        }
    }
    s3fs_close(fs);
}

/* Every symlink of every fixture kind stays inside the mount. */
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
    source_mem(&src, "", 0);
    struct tree *t = tree_new(&src, NULL);
    uint32_t root = tree_add_dir(t, 0, "", NULL, NULL, NULL, 0);
    uint32_t d = tree_add_dir(t, root, "d", NULL, NULL, NULL, 0);
    assert_true(link_stays_inside(t, tree_add_link(t, d, "a", "../d/x")));
    assert_false(link_stays_inside(t, tree_add_link(t, d, "b", "../../x")));
    assert_false(link_stays_inside(t, tree_add_link(t, d, "c", "/etc/passwd")));
    tree_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tree_nodes),
        cmocka_unit_test(test_tree_node_limit),
        cmocka_unit_test(test_walk_sample_rig),
        cmocka_unit_test(test_walk_gr2_variants),
        cmocka_unit_test(test_info_sample_rig),
        cmocka_unit_test(test_links_stay_inside),
    };
    return cmocka_run_group_tests_name("tree", tests, NULL, NULL);
}
