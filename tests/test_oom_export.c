/* Generated files under refused allocations (issue 32): the exports (.glb, .obj) and
 * CSVs of Turok 1, Granny models and a clear RIG, and every file of the Turok 1 and
 * Turok 2 t2fs trees (rows rendered on read, slices of expanded items). For each file, a
 * clean run counts the allocations (malloc, calloc, realloc's growths:
 * tests/alloc_refuse.c) of listing its directory, which measures it, and of reading it
 * through in 4 KiB chunks, which builds or renders it (N). Then for every k < N a fresh
 * open refuses the k-th of those: the listing fails with NOMEM (and lists when tried
 * again), or a read fails with NOMEM, or everything succeeds whole; never a read that
 * ends short with success, nor EIO. After each run a read-through with nothing refused
 * gives the clean file's bytes, as many as the size at stat: nothing of the refusal
 * stays (no size measured short, no build kept short, no error kept). The clean bytes
 * are the clean open's, whose own correctness the views' and exporters' tests check
 * against the format rules. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "alloc_refuse.h"
#include "refuse_open.h"
#include "fixture_kinds.h"
#include "fs/open/open.h"
#include "tree_compare.h"

enum { CHUNK = 4096 };

/* What a sweep covers: the files with these extensions (NULL-terminated), refused in
 * their listing (measured) and reads (built, rendered), or in their reads alone. */
struct sweep {
    const char *kind;
    const char *const *ext; /* NULL: every file but /info */
    bool listing;
    unsigned min_files;
    int nargs; /* the fixture's arguments (fx_kind) */
    char *const *args;
    uint64_t cache_bytes; /* -o cache_mb in bytes (0: the default); small: every read makes its item again */
};

#ifdef S3_TEST_WRAP_ALLOC

static struct s3fs *open_data(const struct sweep *w, const uint8_t *data, size_t size)
{
    struct s3fs_opts o = {.cache_bytes = w->cache_bytes};
    struct s3fs *fs = NULL;
    char err[512];
    if (s3fs_open_mem(&fs, data, size, &o, err, sizeof err))
        fail_msg("open: %s", err);
    return fs;
}

static bool is_export(const struct sweep *w, const char *path)
{
    if (!w->ext)
        return strstr(path, "info") == NULL; /* every file but /info (it counts failures) */
    const char *dot = strrchr(path, '.');
    for (const char *const *x = w->ext; dot && *x; x++)
        if (strcmp(dot, *x) == 0)
            return true;
    return false;
}

/* The file's directory (populated along the way, itself not yet) and the file's name. */
static uint32_t parent_of(struct tree *t, const char *path, const char **name)
{
    const char *slash = strrchr(path, '/');
    *name = slash ? slash + 1 : path;
    if (!slash)
        return TREE_ROOT;
    char dir[512];
    snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    uint32_t ino;
    enum s3_err e = tree_resolve(t, dir, &ino);
    if (e)
        fail_msg("%s: %s", dir, s3_err_str(e));
    return ino;
}

/* Reads ino through in CHUNK-byte reads into buf (room for cap bytes, one more than the
 * file should hold): S3_OK with the bytes read (*total), or the first read's reason. */
static enum s3_err read_through(struct tree *t, uint32_t ino, uint8_t *buf, size_t cap, size_t *total)
{
    *total = 0;
    for (;;) {
        size_t want = cap - *total < CHUNK ? cap - *total : CHUNK, got = 0;
        if (want == 0)
            return S3_OK;
        enum s3_err e = tree_read(t, ino, *total, buf + *total, want, &got);
        if (e)
            return e;
        if (got == 0)
            return S3_OK;
        *total += got;
    }
}

/* The view's warnings (what /info lists), one a line, and the count of those not kept. */
static char *warnings_of(const struct s3fs *fs)
{
    size_t len = 32;
    for (size_t i = 0; i < fs->diag.n; i++)
        len += strlen(fs->diag.msg[i]) + 1;
    char *s = malloc(len), *p = s;
    assert_non_null(s);
    for (size_t i = 0; i < fs->diag.n; i++)
        p += sprintf(p, "%s\n", fs->diag.msg[i]);
    sprintf(p, "%zu not shown\n", fs->diag.dropped);
    return s;
}

/* One run: refuse allocation k (-1: none) of listing path's directory (with
 * w->listing) and reading path through. Returns whether something failed (with NOMEM;
 * anything else fails the test). Then reads it again, nothing refused: the clean bytes,
 * as many as the size at stat, and the view's warnings are the clean run's (*warn, set
 * by the run with k -1): a failed listing takes back the warnings it added. */
static bool run_once(const struct sweep *w, const uint8_t *data, size_t size, const struct snap_entry *clean, long k,
                     long *count, char **warn)
{
    struct s3fs *fs = open_data(w, data, size);
    struct tree *t = fs->tree;
    const char *name;
    uint32_t dir = parent_of(t, clean->path, &name), ino = 0;
    size_t cap = clean->dlen + 1, got;
    uint8_t *buf = malloc(cap);
    assert_non_null(buf);
    bool failed = false;
    if (!w->listing)
        assert_int_equal(tree_populate(t, dir), S3_OK);
    alloc_refuse_start(k);
    enum s3_err e = tree_populate(t, dir);
    if (e == S3_OK) {
        e = tree_lookup(t, dir, name, &ino);
        if (e == S3_OK)
            e = read_through(t, ino, buf, cap, &got);
        if (e == S3_OK && got != clean->dlen)
            fail_msg("%s: allocation %ld refused: read %zu bytes with success, the file has %zu", clean->path, k,
                     got, clean->dlen);
    }
    *count = alloc_refuse_count();
    alloc_refuse_start(-1);
    if (e) {
        if (e != S3_ERR_NOMEM)
            fail_msg("%s: allocation %ld refused: failed with %s, not NOMEM", clean->path, k, s3_err_str(e));
        failed = true;
        if ((e = tree_populate(t, dir)) != S3_OK || (e = tree_lookup(t, dir, name, &ino)) != S3_OK)
            fail_msg("%s: allocation %ld refused: the listing failed again (%s)", clean->path, k, s3_err_str(e));
    }
    /* the next request: the whole file, as measured */
    if (tree_size(t, ino) != clean->size)
        fail_msg("%s: allocation %ld refused: size %" PRIu64 ", clean %" PRIu64, clean->path, k, tree_size(t, ino),
                 clean->size);
    if ((e = read_through(t, ino, buf, cap, &got)) != S3_OK)
        fail_msg("%s: allocation %ld refused: the next read fails (%s)", clean->path, k, s3_err_str(e));
    if (got != clean->dlen || memcmp(buf, clean->data, got) != 0)
        fail_msg("%s: allocation %ld refused: the next read gives %zu bytes unlike the clean file's %zu", clean->path,
                 k, got, clean->dlen);
    char *warnings = warnings_of(fs);
    if (!*warn)
        *warn = warnings;
    else if (strcmp(warnings, *warn) != 0)
        fail_msg("%s: allocation %ld refused: the warnings differ from the clean run's:\n%s\nclean:\n%s",
                 clean->path, k, warnings, *warn);
    if (*warn != warnings)
        free(warnings);
    free(buf);
    s3fs_close(fs);
    return failed;
}

/* Every export file of the fixture, every allocation of its listing and read in turn. */
static void refuse_every_malloc_of_exports(const struct sweep *w)
{
    const char *kind = w->kind;
    size_t size;
    uint8_t *data = fx_kind(kind, w->nargs, w->args, &size);
    assert_non_null(data);
    struct s3fs *fs = open_data(w, data, size);
    struct snap clean = {0};
    snap_tree(&clean, fs->tree, TREE_ROOT);
    s3fs_close(fs);
    unsigned files = 0;
    long total = 0, failed = 0;
    for (size_t i = 0; i < clean.n; i++) {
        const struct snap_entry *f = &clean.e[i];
        if (f->kind != 'f' || !is_export(w, f->path))
            continue;
        assert_int_equal(f->size, f->dlen); /* the clean open reads what it stats */
        files++;
        long n;
        char *warn = NULL;
        assert_false(run_once(w, data, size, f, -1, &n, &warn));
        unsigned file_failed = 0;
        for (long k = 0; k < n; k++) {
            long seen;
            file_failed += run_once(w, data, size, f, k, &seen, &warn);
        }
        free(warn);
        if (n > 0 && file_failed == 0)
            fail_msg("%s: %ld allocations, none of which failed a request when refused", f->path, n);
        total += n;
        failed += file_failed;
    }
    print_message("%s: %u export files, %ld allocations refused in turn, %ld requests failed with ENOMEM, each "
                  "next read whole\n",
                  kind, files, total, failed);
    if (files < w->min_files)
        fail_msg("%s: %u export files, expected at least %u", kind, files, w->min_files);
    snap_free(&clean);
    free(data);
}

/* Opening kind with each allocation refused in turn: the open fails saying out of
 * memory, or its warnings (/info's, fs->diag) are the clean open's, every one: never a
 * warning lost with success (diag_add's NOMEM reaches the open). */
static void same_warnings(void *ctx, const struct s3fs *clean, struct s3fs *fs, long k)
{
    const char *kind = ctx;
    assert_true(clean->diag.n > 0); /* the fixture has warnings to lose */
    if (fs->diag.n != clean->diag.n || fs->diag.dropped != clean->diag.dropped)
        fail_msg("%s: allocation %ld refused: opened with %zu warnings, the clean open has %zu", kind, k, fs->diag.n,
                 clean->diag.n);
    for (size_t i = 0; i < fs->diag.n; i++)
        if (strcmp(fs->diag.msg[i], clean->diag.msg[i]) != 0)
            fail_msg("%s: allocation %ld refused: warning %zu is '%s', the clean open's '%s'", kind, k, i,
                     fs->diag.msg[i], clean->diag.msg[i]);
}

static void open_keeps_warnings(const char *kind)
{
    size_t size;
    uint8_t *data = fx_kind(kind, 0, NULL, &size);
    assert_non_null(data);
    struct open_sweep s = refuse_each_open_allocation(kind, data, size, same_warnings, (void *)kind);
    print_message("%s: %ld allocations while opening; refusing each failed the open in %u, the others kept every "
                  "warning\n",
                  kind, s.allocations, s.failed);
    assert_true(s.failed > 0);
    assert_true(s.failed < s.allocations); /* some opens succeeded: their warnings were compared */
    free(data);
}

#define SKIP_UNWRAPPED()

#else

/* under a sanitizer its runtime owns malloc: --wrap cannot refuse it */
#define SKIP_UNWRAPPED() skip()
#define refuse_every_malloc_of_exports(...) (void)(__VA_ARGS__)
#define open_keeps_warnings(...) (void)(__VA_ARGS__)

#endif

static const char *const models[] = {".glb", ".obj", NULL};
static const char *const tables[] = {".csv", NULL};
static const char *const all[] = {".glb", ".obj", ".csv", NULL};

/* models/N/model.glb and model.obj (view_t1_export.c) */
static void test_turok1_exports(void **state)
{
    (void)state;
    SKIP_UNWRAPPED();
    refuse_every_malloc_of_exports(&(struct sweep){"t2fs-turok1", models, true, 2, 0, NULL, 0});
}

/* every file of the Turok 1 view (rows rendered on read among them) */
static void test_turok1_files(void **state)
{
    (void)state;
    SKIP_UNWRAPPED();
    refuse_every_malloc_of_exports(&(struct sweep){"t2fs-turok1", NULL, true, 20, 0, NULL, 0});
}

/* every file of a Turok 2 t2fs tree: nodes inside RNC-compressed nodes (slices of an
 * expanded item), models' rows rendered on read */
static void test_t2fs_files(void **state)
{
    (void)state;
    SKIP_UNWRAPPED();
    refuse_every_malloc_of_exports(&(struct sweep){"t2fs", NULL, true, 20, 0, NULL, 0});
}

/* Rows past VIEW_TEXT_MAX rendered on read from a form derived into the cache
 * (view_add_form_rows: a mesh's indices and triangles; vertices.txt its own), refused in
 * reads only (the listing of every file is test_t2fs_files'), with a cache too small to
 * keep a form: each read derives it again. */
static void test_t2fs_rows_on_read(void **state)
{
    (void)state;
    SKIP_UNWRAPPED();
    static char *const verts[] = {"6000"};
    static const char *const txt[] = {".txt", NULL};
    refuse_every_malloc_of_exports(&(struct sweep){"t2fs-big-mesh", txt, false, 2, 1, verts, 1024});
}

/* The tables' NAME.csv of a Granny model, rendered on read (view_gr2obj.c); refused in
 * reads only: the object walk that lists them is test_oom's. */
static void test_granny_table_csvs(void **state)
{
    (void)state;
    SKIP_UNWRAPPED();
    refuse_every_malloc_of_exports(&(struct sweep){"gr2model-le32", tables, false, 3, 0, NULL, 0});
}

/* skeleton.glb, model.glb, mesh.obj of a Granny model (view_gr2export.c, src/fs/export,
 * parse/gr2/gr2model.c). */
static void test_granny_model_exports(void **state)
{
    (void)state;
    SKIP_UNWRAPPED();
    refuse_every_malloc_of_exports(&(struct sweep){"gr2model-le32", models, true, 3, 0, NULL, 0});
}

/* A Granny animation file's exports (view_gr2anim_glb.c): every animation's
 * animation.glb and animation_linear.glb (the plan: its skeletons, track groups and
 * tracks' curves), and the model's model.glb with the animations that play on it. */
static void test_granny_anim_exports(void **state)
{
    (void)state;
    SKIP_UNWRAPPED();
    refuse_every_malloc_of_exports(&(struct sweep){"gr2anim-le32-brief", models, true, 4, 0, NULL, 0});
}

/* The animations' CSVs (knots, controls, samples, entries: view_gr2anim.c), rendered on
 * read; refused in reads only (their listing is test_oom's gr2anim sweep). */
static void test_granny_anim_csvs(void **state)
{
    (void)state;
    SKIP_UNWRAPPED();
    refuse_every_malloc_of_exports(&(struct sweep){"gr2anim-le32-brief", tables, false, 4, 0, NULL, 0});
}

/* a clear RIG's skeleton.glb and CSVs (view_rig_clear.c) */
static void test_rig_clear_exports(void **state)
{
    (void)state;
    SKIP_UNWRAPPED();
    refuse_every_malloc_of_exports(&(struct sweep){"rig-clear-4", all, true, 1, 0, NULL, 0});
}

/* mesh.glb and mesh.obj of a GEOM with every trap (view_geom.c) */
static void test_geom_exports(void **state)
{
    (void)state;
    SKIP_UNWRAPPED();
    refuse_every_malloc_of_exports(&(struct sweep){"geom-traps", models, true, 2, 0, NULL, 0});
}

/* The warnings parsers and views add while opening: a GEOM's traps (geom_model's
 * report), a clear RIG's wrong name hash, a package's repeated key (its index). */
static void test_open_keeps_warnings(void **state)
{
    (void)state;
    SKIP_UNWRAPPED();
    open_keeps_warnings("geom-traps");
    open_keeps_warnings("rig-clear-4");
    open_keeps_warnings("package-s4");
}

int main(int argc, char **argv)
{
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_turok1_exports),
        cmocka_unit_test(test_turok1_files),
        cmocka_unit_test(test_t2fs_files),
        cmocka_unit_test(test_t2fs_rows_on_read),
        cmocka_unit_test(test_granny_table_csvs),
        cmocka_unit_test(test_granny_model_exports),
        cmocka_unit_test(test_granny_anim_exports),
        cmocka_unit_test(test_granny_anim_csvs),
        cmocka_unit_test(test_rig_clear_exports),
        cmocka_unit_test(test_geom_exports),
        cmocka_unit_test(test_open_keeps_warnings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
