/* What /info says about how much it has checked: the node limit reported once, from the
 * tree, for every format; "warnings: N so far (P parsed of the T directories found so far)" until the lazy
 * parts have all been parsed; `s3rig info --full` parsing everything first. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "fixture.h"
#include "fixture_kinds.h"
#include "fixture_t2fs.h"
#include "fs/open/open.h"
#include "fs/views/gr2/view_gr2.h"
#include "fs/views/gr2/view_gr2obj.h"
#include "fs/views/t2fs/view_t2fs_tree.h"
#include "testutil.h"

/* The current text of /info (malloc'd). */
static char *info_text(struct s3fs *fs)
{
    uint32_t ino;
    assert_int_equal(tree_resolve(fs->tree, "/info", &ino), 0);
    size_t len;
    char *text = tree_render(fs->tree, ino, &len);
    assert_non_null(text);
    return text;
}

static size_t count_of(const char *text, const char *needle)
{
    size_t n = 0;
    for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

/* The count on the "warnings:" line. */
static unsigned long warnings_count(const char *info)
{
    const char *p = strstr(info, "\nwarnings: ");
    assert_non_null(p);
    return strtoul(p + 11, NULL, 10);
}

/* One file of each format: the first seed kind of its row in the format table. */
static uint8_t *format_file(int f, size_t *size, const char **label)
{
    char kind[64];
    const char *seeds = s3_formats[f].seeds;
    snprintf(kind, sizeof kind, "%.*s", (int)strcspn(seeds, " :"), seeds);
    *label = s3_formats[f].name;
    uint8_t *file = fx_kind(kind, 0, NULL, size);
    if (!file)
        fail_msg("%s: its first seed %s is not made", *label, kind);
    return file;
}

/* Every format: a tree cut at max_nodes says so once in /info (however many directories
 * were cut), counts it among the warnings, and holds exactly max_nodes nodes. Without
 * the limit, nothing is said. */
static void test_node_limit_every_format(void **state)
{
    (void)state;
    for (int which = FMT_UNKNOWN + 1; which < FMT_COUNT; which++) {
        size_t size;
        const char *label;
        uint8_t *file = format_file(which, &size, &label);
        struct s3fs *fs = open_mem(file, size, NULL, NULL);
        assert_int_equal(tree_populate_all(fs->tree), 0);
        uint64_t whole = tree_node_count(fs->tree);
        char *info = info_text(fs);
        if (strstr(info, "node limit"))
            fail_msg("%s: a limit reported with none reached:\n%s", label, info);
        free(info);
        s3fs_close(fs);

        struct s3fs_opts o = {.max_nodes = whole / 2};
        fs = open_mem(file, size, &o, NULL);
        assert_int_equal(tree_populate_all(fs->tree), 0);
        assert_int_equal(tree_node_count(fs->tree), whole / 2);
        info = info_text(fs);
        if (count_of(info, "warning: node limit reached (max_nodes=") != 1)
            fail_msg("%s (%llu of %llu nodes): the limit is not reported once:\n%s", label,
                     (unsigned long long)(whole / 2), (unsigned long long)whole, info);
        assert_int_equal(warnings_count(info), count_of(info, "\nwarning: "));
        assert_null(strstr(info, "so far")); /* every directory made was parsed */
        free(info);
        s3fs_close(fs);
        /* every smaller limit: views meet a refused node anywhere, and must not crash */
        for (uint64_t lim = 1; lim < whole; lim += 1 + whole / 200) {
            o.max_nodes = lim;
            fs = open_mem(file, size, &o, NULL);
            tree_populate_all(fs->tree);
            assert_true(tree_node_count(fs->tree) <= lim);
            s3fs_close(fs);
        }
        free(file);
    }
}

/* /info after everything was parsed: a final count, which lists the broken vertex
 * buffer's warning and counts every line it shows. */
static void expect_final_warnings(const char *info)
{
    if (strstr(info, "so far") || !strstr(info, "elements"))
        fail_msg("not the final list:\n%s", info);
    assert_true(warnings_count(info) >= 1);
    assert_int_equal(warnings_count(info), count_of(info, "\nwarning: "));
}

/* Runs "CLI ARGS PATH", which must succeed, and keeps its standard output. */
static void cli_output(const char *cli, const char *args, const char *path, char *out, size_t len)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "%s %s %s", cli, args, path);
    FILE *f = popen(cmd, "r");
    assert_non_null(f);
    size_t n = fread(out, 1, len - 1, f);
    out[n] = 0;
    assert_int_equal(pclose(f), 0);
}

/* A t2fs file whose vertex buffer (four levels down) claims more elements than fit: the
 * warning exists only once that table is parsed, and /info says how much it has seen. */
static void test_info_says_what_is_checked(void **state)
{
    (void)state;
    struct fxt *root = fxt_sample(5, 2, false, false);
    size_t size;
    uint8_t *file = fxt_write(root, false, 0, 0, &size);
    const struct fxt *vb = root->child[0]->child[0]->child[1]->child[0]->child[0];
    put32(file + vb->pos + 4, 0x10000000, false);
    struct s3fs *fs = open_mem(file, size, NULL, NULL);
    char *info = info_text(fs);
    unsigned long done, total;
    const char *p = strstr(info, "warnings: 0 so far (");
    if (!p)
        fail_msg("a fresh mount claims a final count:\n%s", info);
    assert_int_equal(sscanf(p, "warnings: 0 so far (%lu parsed of the %lu directories found so far)", &done, &total), 2);
    assert_true(done >= 1 && done < total);
    free(info);
    assert_int_equal(tree_populate_all(fs->tree), 0);
    info = info_text(fs);
    expect_final_warnings(info);
    free(info);
    s3fs_close(fs);

    /* the same through s3rig: info, then info --full */
    const char *cli = getenv("S3RIG_CLI");
    if (!cli)
        fail_msg("S3RIG_CLI is not set (tests/meson.build sets it)");
    char path[] = "/tmp/s3rig-info-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, file, size), (ssize_t)size);
    close(fd);
    char out[8192];
    cli_output(cli, "info", path, out, sizeof out);
    assert_non_null(strstr(out, "warnings: 0 so far ("));
    cli_output(cli, "info --full", path, out, sizeof out);
    expect_final_warnings(out);
    unlink(path);
    free(file);
    fxt_free(root);
}

/* A listing that runs out of memory makes s3rig fail: the tree refuses its k-th
 * allocation (S3RIG_TEST_FAIL_ALLOC, once) for each of the first 40, and `s3rig ls -R`
 * over a package (thousands of allocations) must exit non-zero saying so, never print a
 * shorter listing and exit 0; with nothing refused it succeeds. */
static void test_cli_fails_when_a_listing_fails(void **state)
{
    (void)state;
    const char *cli = getenv("S3RIG_CLI");
    if (!cli)
        fail_msg("S3RIG_CLI is not set (tests/meson.build sets it)");
    size_t size;
    uint8_t *file = fx_kind("package-s4", 0, NULL, &size);
    assert_non_null(file);
    char path[] = "/tmp/s3rig-oom-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, file, size), (ssize_t)size);
    close(fd);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "%s ls -R %s / >/dev/null 2>&1", cli, path);
    assert_int_equal(system(cmd), 0);
    for (int k = 1; k <= 40; k++) {
        snprintf(cmd, sizeof cmd, "S3RIG_TEST_FAIL_ALLOC=%d %s ls -R %s / 2>&1 >/dev/null", k, cli, path);
        FILE *f = popen(cmd, "r");
        assert_non_null(f);
        char err[512];
        size_t n = fread(err, 1, sizeof err - 1, f);
        err[n] = 0;
        int status = pclose(f);
        if (status == 0)
            fail_msg("allocation %d refused, yet s3rig ls -R exited 0", k);
        if (!strstr(err, strerror(ENOMEM)))
            fail_msg("allocation %d refused: s3rig does not say it ran out of memory: %s", k, err);
    }
    unlink(path);
    free(file);
}

/* /info is rendered under the tree lock once per change, however often it is measured
 * (every stat measures it): 200 measures of an unchanged mount render it at most once;
 * a listing (the tree grew, warnings may come) and an expansion (the cache line) each
 * make one more rendering, and its text is what a fresh mount shows after the same. */
static void test_info_rendered_once_per_change(void **state)
{
    (void)state;
    struct fxt *root = fxt_sample(1, 3, true, false); /* some nodes RNC-compressed */
    size_t size;
    uint8_t *file = fxt_write(root, false, 0, 0, &size);
    struct s3fs *fs = open_mem(file, size, NULL, NULL);
    uint32_t info;
    assert_int_equal(tree_lookup(fs->tree, TREE_ROOT, "info", &info), 0);
    uint64_t first = tree_size(fs->tree, info), before = view_info_renders();
    for (int i = 0; i < 200; i++)
        assert_int_equal(tree_size(fs->tree, info), first);
    assert_true(view_info_renders() - before <= 1);
    char *a = info_text(fs);
    before = view_info_renders();
    uint32_t r;
    assert_int_equal(tree_lookup(fs->tree, TREE_ROOT, "root", &r), 0);
    assert_int_equal(tree_populate(fs->tree, r), 0); /* a listing: the progress line moves */
    char *b = info_text(fs);
    for (int i = 0; i < 200; i++)
        tree_size(fs->tree, info);
    assert_int_equal(view_info_renders() - before, 1);
    if (strcmp(a, b) == 0)
        fail_msg("/info did not change after a listing:\n%s", b);
    assert_int_equal(tree_populate_all(fs->tree), 0); /* expands the RNC nodes: the cache line */
    before = view_info_renders();
    char *c = info_text(fs), *d = info_text(fs);
    assert_int_equal(view_info_renders() - before, 1);
    assert_string_equal(c, d);
    assert_non_null(strstr(c, "cache: "));
    if (strstr(c, "cache: 0 expansions"))
        fail_msg("the cache line did not follow the expansions:\n%s", c);
    free(a), free(b), free(c), free(d);
    s3fs_close(fs);
    free(file);
    fxt_free(root);
}

/* ---- hooks: a second user adds, never overwrites ---- */

static void info_line(struct s3fs *fs, struct sbuf *out, void *ctx)
{
    (void)fs;
    sb_printf(out, "hooked: %s\n", (const char *)ctx);
}

static void granny_extra(struct gr2_view *v, uint32_t granny_dir, void *ctx)
{
    tree_add_textf(v->fs->tree, granny_dir, "extra.txt", "text", "%s\n", (const char *)ctx);
}

static void root_extra(struct t2_view *v, uint32_t root_dir, void *ctx)
{
    tree_add_dir(t2fs_view_fs(v)->tree, root_dir, (const char *)ctx, NULL, NULL, NULL, 0);
}

/* Extra /info lines, /granny children and t2fs root directories registered from
 * outside a view come after the view's own, in the order registered; none replaces
 * another. */
static void test_hooks_add(void **state)
{
    (void)state;
    size_t size;
    const char *label;
    uint8_t *file = format_file(FMT_GR2, &size, &label);
    struct s3fs *fs = open_mem(file, size, NULL, label);
    assert_int_equal(view_add_info_hook(fs, info_line, "first"), 0);
    assert_int_equal(view_add_info_hook(fs, info_line, "second"), 0);
    struct gr2_view *g = gr2_view_of(fs);
    assert_non_null(g);
    assert_int_equal(gr2_view_add_granny_extra(g, granny_extra, "from a hook"), 0);
    char *info = info_text(fs);
    const char *sec = strstr(info, "section 0: "), *first = strstr(info, "hooked: first\n"),
               *second = strstr(info, "hooked: second\n");
    if (!sec || !first || !second || !(sec < first && first < second))
        fail_msg("the view's section lines, then both hooks' lines, in order:\n%s", info);
    free(info);
    /* the object tree's own hook (this sample's object section does not decode) */
    assert_true(path_exists(fs, "/granny/root.error"));
    expect_text(fs, "/granny/extra.txt", "from a hook\n");
    uint32_t granny;
    assert_int_equal(tree_resolve(fs->tree, "/granny", &granny), 0);
    uint32_t last = tree_child(fs->tree, granny, tree_child_count(fs->tree, granny) - 1);
    assert_string_equal(tree_name(fs->tree, last), "extra.txt");
    /* a hook the tree cannot keep is refused with the reason and not called (issue 31) */
    tree_test_fail_alloc(fs->tree, 1);
    assert_int_equal(view_add_info_hook(fs, info_line, "refused"), S3_ERR_NOMEM);
    tree_test_fail_alloc(fs->tree, 0);
    assert_int_equal(view_add_info_hook(fs, info_line, "third"), S3_OK);
    info = info_text(fs);
    if (strstr(info, "hooked: refused\n") || !strstr(info, "hooked: second\nhooked: third\n"))
        fail_msg("the refused hook left out, the next one after the second:\n%s", info);
    free(info);
    s3fs_close(fs);
    free(file);

    file = format_file(FMT_T2FS, &size, &label);
    fs = open_mem(file, size, NULL, label);
    assert_null(gr2_view_of(fs));
    struct t2_view *v = t2fs_view_of(fs);
    assert_non_null(v);
    assert_int_equal(t2fs_view_add_root_extra(v, root_extra, "more"), 0);
    assert_int_equal(t2fs_view_add_root_extra(v, root_extra, "again"), 0);
    assert_true(path_exists(fs, "/named")); /* the derived views' hook stays */
    assert_true(path_exists(fs, "/more"));
    assert_true(path_exists(fs, "/again"));
    uint32_t n = tree_child_count(fs->tree, TREE_ROOT);
    assert_string_equal(tree_name(fs->tree, tree_child(fs->tree, TREE_ROOT, n - 2)), "more");
    assert_string_equal(tree_name(fs->tree, tree_child(fs->tree, TREE_ROOT, n - 1)), "again");
    s3fs_close(fs);
    free(file);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_node_limit_every_format),
        cmocka_unit_test(test_info_says_what_is_checked),
        cmocka_unit_test(test_hooks_add),
        cmocka_unit_test(test_cli_fails_when_a_listing_fails),
        cmocka_unit_test(test_info_rendered_once_per_change),
    };
    return cmocka_run_group_tests_name("info", tests, NULL, NULL);
}
