/* A failed allocation never publishes a short directory. For a package, a Granny object
 * tree and t2fs trees (the fixture builders' files), a clean walk counts the allocations
 * the tree attempts while it lists everything (N); then, for every k from 1 to N + 1, a
 * fresh open refuses the k-th (tree_test_fail_alloc, once) and lists everything again,
 * listing afresh each directory whose populate failed. Every populate either succeeds
 * with the full listing or fails with -ENOMEM: for k <= N at least one failed (the
 * refusal always lands in a listing, and must reach it), and the tree in the end is the
 * clean one, entry for entry (a directory published short would stay short). /info
 * counts the failed listings. The same for a Mods folder on disk. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "alloc_refuse.h"
#include "refuse_open.h"
#include "fixture_dbpf.h"
#include "fixture_folder.h"
#include "fixture_kinds.h"
#include "fs/open/open.h"
#include "fs/views/gr2/view_gr2.h"
#include "fs/views/gr2/view_gr2obj.h"
#include "parse/sims/modfolder.h"
#include "parse/gr2/gr2anim.h"
#include "parse/gr2/gr2curve.h"
#include "parse/gr2/gr2std.h"
#include "testutil.h"
#include "tree_compare.h"

/* Lists every directory of the tree (explicit stack); a populate that fails must fail
 * with -ENOMEM and succeed when tried again (the refusal is once). Returns how many
 * populates failed. */
static unsigned list_everything(struct tree *t)
{
    unsigned failed = 0;
    size_t cap = 64, top = 0;
    uint32_t *stack = malloc(cap * sizeof *stack);
    assert_non_null(stack);
    stack[top++] = TREE_ROOT;
    while (top > 0) {
        uint32_t dir = stack[--top];
        enum s3_err rc = tree_populate(t, dir);
        if (rc) {
            assert_int_equal(rc, S3_ERR_NOMEM);
            failed++;
            assert_int_equal(tree_populate(t, dir), 0);
        }
        uint32_t n = tree_child_count(t, dir);
        for (uint32_t i = 0; i < n; i++) {
            uint32_t c = tree_child(t, dir, i);
            if (c == 0) { /* an entry of a computed directory not made: that listing fails */
                failed++;
                c = tree_child(t, dir, i);
                assert_int_not_equal(c, 0);
            }
            if (tree_kind(t, c) != NODE_DIR)
                continue;
            if (top == cap) {
                cap *= 2;
                stack = realloc(stack, cap * sizeof *stack);
                assert_non_null(stack);
            }
            stack[top++] = c;
        }
    }
    free(stack);
    return failed;
}

static bool is_info(const char *path)
{
    const char *slash = strrchr(path, '/');
    return strcmp(slash ? slash + 1 : path, "info") == 0;
}

/* /info's text without the lines a refusal may change by design: the failed listings
 * counted ("warning: out of memory: N listings failed", and the "warnings: N" count that
 * includes it), the cache's counts of expansions (a failed listing may have expanded
 * items), its refusals. Everything else, each warning of the views among it, must be the
 * clean open's: a listing that failed leaves no warning behind (the retry adds its own
 * once). malloc'd. */
static char *info_kept(const uint8_t *text, size_t len)
{
    static const char *const skip[] = {"cache: ", "warnings: ", "warning: out of memory: ", "warning: cache_mb: "};
    char *out = malloc(len + 1), *o = out;
    assert_non_null(out);
    for (size_t i = 0; i < len;) {
        const uint8_t *nl = memchr(text + i, '\n', len - i);
        size_t end = nl ? (size_t)(nl - text) + 1 : len;
        bool drop = false;
        for (size_t s = 0; s < sizeof skip / sizeof *skip; s++)
            drop |= end - i >= strlen(skip[s]) && memcmp(text + i, skip[s], strlen(skip[s])) == 0;
        if (!drop) {
            memcpy(o, text + i, end - i);
            o += end - i;
        }
        i = end;
    }
    *o = 0;
    return out;
}

static void assert_same_info(const struct snap_entry *clean, const struct snap_entry *got, size_t k)
{
    char *a = info_kept(clean->data, clean->dlen), *b = info_kept(got->data, got->dlen);
    if (strcmp(a, b) != 0)
        fail_msg("k=%zu: %s differs from the clean tree's (beyond the failures it counts):\n%s\nclean:\n%s", k,
                 clean->path, b, a);
    free(a);
    free(b);
}

/* The same entries, byte for byte, but /info files (each says how many listings
 * failed): those without the lines that count failures (info_kept). */
static void assert_same_tree(const struct snap *clean, const struct snap *got, size_t k)
{
    if (clean->n != got->n) {
        size_t i = 0; /* the first entry that differs, for the message */
        while (i < clean->n && i < got->n && strcmp(clean->e[i].path, got->e[i].path) == 0)
            i++;
        fail_msg("k=%zu: %zu entries, the clean tree has %zu; first difference: %s (clean: %s)", k, got->n,
                 clean->n, i < got->n ? got->e[i].path : "(none)", i < clean->n ? clean->e[i].path : "(none)");
    }
    for (size_t i = 0; i < clean->n; i++) {
        const struct snap_entry *a = &clean->e[i], *b = &got->e[i];
        if (strcmp(a->path, b->path) != 0 || a->kind != b->kind)
            fail_msg("k=%zu: entry %zu is %s (%c), the clean tree has %s (%c)", k, i, b->path, b->kind, a->path,
                     a->kind);
        if (is_info(a->path)) {
            assert_same_info(a, b, k);
            continue;
        }
        if (a->size != b->size || a->dlen != b->dlen || (a->dlen && memcmp(a->data, b->data, a->dlen) != 0) ||
            strcmp(a->type, b->type) != 0 || strcmp(a->offset, b->offset) != 0 ||
            strcmp(a->length, b->length) != 0)
            fail_msg("k=%zu: %s differs from the clean tree", k, a->path);
    }
}

static struct s3fs *open_kind(const uint8_t *data, size_t size)
{
    struct s3fs_opts o = {0};
    struct s3fs *fs = NULL;
    char err[512];
    int rc = s3fs_open_mem(&fs, data, size, &o, err, sizeof err);
    if (rc)
        fail_msg("open: %s", err);
    return fs;
}

static char *read_info(struct tree *t)
{
    uint32_t info;
    assert_int_equal(tree_lookup(t, TREE_ROOT, "info", &info), 0);
    size_t len;
    return tree_render(t, info, &len);
}

/* What a run opens: a fixture kind in memory, or a folder on disk (path). */
struct subject {
    const char *kind;
    uint8_t *data;
    size_t size;
    const char *path;
};

static struct s3fs *open_subject(const struct subject *s)
{
    if (!s->path)
        return open_kind(s->data, s->size);
    struct s3fs *fs = NULL;
    char err[512];
    if (s3fs_open(&fs, s->path, NULL, err, sizeof err))
        fail_msg("open: %s", err);
    return fs;
}

static void fail_every_allocation_in(const struct subject *s)
{
    const char *kind = s->kind;
    struct s3fs *fs = open_subject(s);
    uint64_t before, after, failures;
    tree_test_alloc_counts(fs->tree, &before, &failures);
    assert_int_equal(list_everything(fs->tree), 0);
    tree_test_alloc_counts(fs->tree, &after, &failures);
    assert_int_equal(failures, 0);
    struct snap clean = {0};
    snap_tree(&clean, fs->tree, TREE_ROOT);
    s3fs_close(fs);
    uint64_t n = after - before;
    assert_true(n > 10); /* the walk grows the tree: there is something to refuse */

    uint64_t errors = 0;
    for (uint64_t k = 1; k <= n + 1; k++) {
        fs = open_subject(s);
        tree_test_fail_alloc(fs->tree, k);
        unsigned failed = list_everything(fs->tree);
        tree_test_alloc_counts(fs->tree, &after, &failures);
        if (k <= n) {
            /* refused inside some listing, which must have failed */
            assert_true(failures >= 1);
            if (failed == 0)
                fail_msg("%s: allocation %" PRIu64 " of %" PRIu64 " refused, yet every listing succeeded", kind, k, n);
            char *info = read_info(fs->tree);
            assert_non_null(info);
            if (!strstr(info, "warning: out of memory: "))
                fail_msg("%s: k=%" PRIu64 ": /info does not count the failed listing:\n%s", kind, k, info);
            free(info);
            errors++;
        } else {
            assert_int_equal(failed, 0); /* past the end: nothing refused */
        }
        struct snap got = {0};
        snap_tree(&got, fs->tree, TREE_ROOT);
        assert_same_tree(&clean, &got, (size_t)k);
        snap_free(&got);
        s3fs_close(fs);
    }
    print_message("%s: %" PRIu64 " allocations while listing; refusing each once failed a listing "
                  "(ENOMEM) in %" PRIu64 " runs, each listed whole again, none short\n",
                  kind, n, errors);
    snap_free(&clean);
}

/* Lists every directory, each populate that fails being tried once more: it must fail
 * with NOMEM (any other reason fails the test, naming kind and k). Its stack (cap
 * entries) is the caller's, allocated before refusals start. Returns how many failed. */
static unsigned list_everything_refused(struct tree *t, const char *kind, long k, uint32_t *stack, size_t cap)
{
    unsigned failed = 0;
    size_t top = 0;
    stack[top++] = TREE_ROOT;
    while (top > 0) {
        uint32_t dir = stack[--top];
        enum s3_err rc = tree_populate(t, dir);
        if (rc) {
            if (rc != S3_ERR_NOMEM)
                fail_msg("%s: malloc %ld refused: a listing failed with %s, not NOMEM", kind, k, s3_err_str(rc));
            failed++;
            if ((rc = tree_populate(t, dir)) != S3_OK) /* a refusal must not stay in the view */
                fail_msg("%s: malloc %ld refused: a listing failed, and failed again (%s)", kind, k,
                         s3_err_str(rc));
        }
        uint32_t n = tree_child_count(t, dir);
        for (uint32_t i = 0; i < n; i++) {
            uint32_t c = tree_child(t, dir, i);
            if (c == 0) {
                failed++;
                c = tree_child(t, dir, i);
                assert_int_not_equal(c, 0);
            }
            if (tree_kind(t, c) != NODE_DIR)
                continue;
            assert_true(top < cap);
            stack[top++] = c;
        }
    }
    return failed;
}

/* The views' own allocations (issue 32): malloc, calloc and realloc refused through the
 * linker (alloc_refuse.c), the k-th of a listing of everything, for every k. Not every
 * allocation can fail a listing (a read-ahead window the view can do without), so each
 * run must end with the clean tree, entry for entry and byte for byte (files read after
 * the refusal), and every listing that failed must have failed with NOMEM and succeed
 * when tried again: a refusal that published a shorter listing, or an error file,
 * differs from the clean tree. With same_tree false only the listings are checked. */
/* Which allocations a sweep refuses: every one, or (a fixture whose every listing or
 * read costs milliseconds: thousands of runs would take minutes) every one of the first
 * `prefix`, where the views build what later requests share (indexes, type registries),
 * and every stride-th after; S3RIG_OOM_FULL=1 in the environment refuses every one. */
struct sweep_plan {
    long prefix, stride;
};

static const struct sweep_plan every_one = {0, 1};

static bool refused_in_sweep(const struct sweep_plan *p, long k)
{
    static int full = -1;
    if (full < 0) {
        const char *e = getenv("S3RIG_OOM_FULL");
        full = e && strcmp(e, "1") == 0;
    }
    return full || k < p->prefix || k % p->stride == 0;
}

static void refuse_mallocs_in_subject(const struct subject *s, bool same_tree, const struct sweep_plan *plan)
{
    const char *kind = s->kind;
#ifndef S3_TEST_WRAP_ALLOC
    print_message("%s: not under a sanitizer's malloc: skipped\n", kind);
    (void)list_everything_refused, (void)same_tree, (void)plan, (void)refused_in_sweep;
#else
    enum { CAP = 1 << 16 };
    uint32_t *stack = malloc(CAP * sizeof *stack);
    assert_non_null(stack);
    struct s3fs *fs = open_subject(s);
    alloc_refuse_start(-1);
    assert_int_equal(list_everything_refused(fs->tree, kind, -1, stack, CAP), 0);
    long n = alloc_refuse_count();
    struct snap clean = {0};
    snap_tree(&clean, fs->tree, TREE_ROOT);
    s3fs_close(fs);
    assert_true(n > 10);
    unsigned runs_failed = 0;
    long runs = 0;
    for (long k = 0; k <= n; k++) {
        if (!refused_in_sweep(plan, k))
            continue;
        runs++;
        fs = open_subject(s);
        alloc_refuse_start(k);
        unsigned failed = list_everything_refused(fs->tree, kind, k, stack, CAP);
        alloc_refuse_start(-1);
        runs_failed += failed > 0;
        if (same_tree) {
            struct snap got = {0};
            snap_tree(&got, fs->tree, TREE_ROOT);
            assert_same_tree(&clean, &got, (size_t)k);
            snap_free(&got);
        }
        s3fs_close(fs);
    }
    print_message("%s: %ld allocations while listing, %ld refused in turn; refusing each once failed a listing "
                  "(ENOMEM) in %u runs, each listed again%s\n",
                  kind, n, runs, runs_failed, same_tree ? ", the tree whole: none short" : "");
    assert_true(runs_failed > 0);
    snap_free(&clean);
    free(stack);
#endif
}

static void refuse_mallocs_in(const char *kind, const uint8_t *data, size_t size, bool same_tree,
                              const struct sweep_plan *plan)
{
    struct subject s = {kind, (uint8_t *)data, size, NULL};
    refuse_mallocs_in_subject(&s, same_tree, plan);
}

static void refuse_mallocs_of(const char *kind, bool same_tree, const struct sweep_plan *plan)
{
    size_t size;
    uint8_t *data = fx_kind(kind, 0, NULL, &size);
    assert_non_null(data);
    refuse_mallocs_in(kind, data, size, same_tree, plan);
    free(data);
}

static void refuse_every_malloc_in(const char *kind, const uint8_t *data, size_t size, bool same_tree)
{
    refuse_mallocs_in(kind, data, size, same_tree, &every_one);
}

static void refuse_every_malloc_of(const char *kind, bool same_tree)
{
    refuse_mallocs_of(kind, same_tree, &every_one);
}

/* ---- reads: every allocation of a read of every file refused in turn ---- */

enum { READ_CHUNK = 128 << 10, PATH_CAP = 4096 };

/* One faulted read pass: the clean tree's entries (sorted by path) to compare with, a
 * buffer allocated before refusals start (the pass itself allocates nothing), and how
 * many reads failed. */
struct read_pass {
    const struct snap *clean;
    uint8_t *buf;
    size_t cap;
    const char *kind;
    long k;
    unsigned failed;
};

static int by_snap_path(const void *key, const void *e)
{
    return strcmp(key, ((const struct snap_entry *)e)->path);
}

/* Reads file ino (path) in FUSE-sized pieces: it fails with NOMEM or IO (any other reason
 * fails the test), or gives exactly the clean tree's bytes. */
static void read_one(struct tree *t, uint32_t ino, const char *path, struct read_pass *r)
{
    uint64_t size = tree_size(t, ino);
    assert_true(size < r->cap);
    size_t at = 0, got = 0;
    enum s3_err rc = S3_OK;
    do {
        rc = tree_read(t, ino, at, r->buf + at, READ_CHUNK, &got);
        at += rc ? 0 : got;
    } while (rc == S3_OK && got == READ_CHUNK && at < r->cap - READ_CHUNK);
    if (rc) {
        if (rc != S3_ERR_NOMEM && rc != S3_ERR_IO)
            fail_msg("%s: malloc %ld refused: reading %s failed with %s, not NOMEM or IO", r->kind, r->k, path,
                     s3_err_str(rc));
        r->failed++;
        return;
    }
    const struct snap_entry *e = bsearch(path, r->clean->e, r->clean->n, sizeof *e, by_snap_path);
    assert_non_null(e);
    if (at != e->dlen || memcmp(r->buf, e->data, at) != 0)
        fail_msg("%s: malloc %ld refused: %s read %zu bytes, not the clean tree's %zu (or other bytes)", r->kind,
                 r->k, path, at, e->dlen);
}

/* Reads every file below dir (listed already), its path built in path[0..plen). The
 * views' info files are left out: they count what failed. */
static void read_every_file(struct tree *t, uint32_t dir, char *path, size_t plen, struct read_pass *r)
{
    uint32_t n = tree_child_count(t, dir);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t c = tree_child(t, dir, i);
        assert_int_not_equal(c, 0);
        const char *name = tree_name(t, c);
        size_t len = plen + (plen ? 1 : 0) + strlen(name);
        assert_true(len < PATH_CAP);
        snprintf(path + plen, PATH_CAP - plen, "%s%s", plen ? "/" : "", name);
        if (tree_kind(t, c) == NODE_DIR)
            read_every_file(t, c, path, len, r);
        else if (tree_kind(t, c) == NODE_FILE && !is_info(path))
            read_one(t, c, path, r);
        path[plen] = 0;
    }
}

/* Issue 32 for reads: the tree listed without refusals, then every malloc, calloc and
 * realloc of a read of every file refused in turn (the k-th, for every k). Each read
 * either fails (NOMEM, IO) or gives the clean bytes, never other bytes; and afterwards,
 * without refusals, the whole tree reads as a clean open's: no read kept a refusal (a
 * section or resource remembered as failing, an export sized wrong). */
static void refuse_mallocs_reading(const char *kind, const struct sweep_plan *plan)
{
#ifndef S3_TEST_WRAP_ALLOC
    print_message("%s reads: not under a sanitizer's malloc: skipped\n", kind);
    (void)read_every_file, (void)plan;
#else
    size_t size;
    uint8_t *data = fx_kind(kind, 0, NULL, &size);
    assert_non_null(data);
    enum { CAP = 1 << 16 };
    uint32_t *stack = malloc(CAP * sizeof *stack);
    char *path = malloc(PATH_CAP);
    assert_non_null(stack);
    assert_non_null(path);
    struct snap clean = {0};
    struct s3fs *fs = open_kind(data, size);
    snap_tree(&clean, fs->tree, TREE_ROOT);
    s3fs_close(fs);
    size_t biggest = 0;
    for (size_t i = 0; i < clean.n; i++)
        biggest = clean.e[i].dlen > biggest ? clean.e[i].dlen : biggest;
    struct read_pass r = {&clean, malloc(biggest + 2 * READ_CHUNK), biggest + 2 * READ_CHUNK, kind, -1, 0};
    assert_non_null(r.buf);
    fs = open_kind(data, size);
    assert_int_equal(list_everything_refused(fs->tree, kind, -1, stack, CAP), 0);
    path[0] = 0;
    alloc_refuse_start(-1);
    read_every_file(fs->tree, TREE_ROOT, path, 0, &r);
    long n = alloc_refuse_count();
    assert_int_equal(r.failed, 0);
    s3fs_close(fs);
    assert_true(n > 10);
    unsigned runs_failed = 0;
    long runs = 0;
    for (long k = 0; k <= n; k++) {
        if (!refused_in_sweep(plan, k))
            continue;
        runs++;
        fs = open_kind(data, size);
        assert_int_equal(list_everything_refused(fs->tree, kind, -1, stack, CAP), 0);
        r.k = k;
        r.failed = 0;
        path[0] = 0;
        alloc_refuse_start(k);
        read_every_file(fs->tree, TREE_ROOT, path, 0, &r);
        alloc_refuse_start(-1);
        runs_failed += r.failed > 0;
        struct snap got = {0};
        snap_tree(&got, fs->tree, TREE_ROOT);
        assert_same_tree(&clean, &got, (size_t)k);
        snap_free(&got);
        s3fs_close(fs);
    }
    print_message("%s: %ld allocations while reading every file, %ld refused in turn; refusing each once failed a "
                  "read in %u runs, each read whole again\n",
                  kind, n, runs, runs_failed);
    assert_true(runs_failed > 0);
    free(r.buf);
    snap_free(&clean);
    free(path);
    free(stack);
    free(data);
#endif
}

static void refuse_every_malloc_reading(const char *kind)
{
    refuse_mallocs_reading(kind, &every_one);
}

static void test_granny_objects_reads_malloc(void **state)
{
    (void)state;
    refuse_every_malloc_reading("gr2obj-le32-v7");
}

static void test_package_reads_malloc(void **state)
{
    (void)state;
    refuse_every_malloc_reading("package-s4");
}

static void test_t2fs_views_malloc(void **state)
{
    (void)state;
    refuse_every_malloc_of("t2fs", true);
}

/* The whole tree: a refused measurement of model.glb/model.obj fails the listing, never
 * model.error (view_t1_export.c). */
static void test_turok1_views_malloc(void **state)
{
    (void)state;
    refuse_every_malloc_of("t2fs-turok1", true);
}

/* The Granny object tree whole after each refusal: the type decoder, the object walk,
 * the section fetches, the fixups, the tables' columns and the exports' measurements keep
 * no refusal (a type refused memory is decoded again in the next request, the walk is
 * undone), so no member, link or export is shown as NAME.error for it. */
static void test_granny_objects_views_malloc(void **state)
{
    (void)state;
    refuse_every_malloc_of("gr2obj-le32-v7", true);
}

/* A Granny animation file's tree whole after each refusal: the animation index
 * (view_gr2anim.c), its type registry (a type refused memory is decoded again in the
 * next request), the track groups and the animation exports' measurements fail the
 * listing with NOMEM and keep nothing of it. */
static void test_granny_anims_views_malloc(void **state)
{
    (void)state;
    refuse_mallocs_of("gr2anim-le32-brief", true, &(struct sweep_plan){400, 29});
}

/* What the Granny object tree counts against its file's text budgets (the animations'
 * CSVs, view_gr2anim.c; the tables' CSVs, view_gr2obj.c) is counted once per file: a
 * listing failed by a refused allocation gives back what it counted, so once every
 * listing was retried the counts are a clean open's. Before, each failure left its
 * count behind and a file's budget shrank with every ENOMEM. */
static void test_granny_measured_once(void **state)
{
    (void)state;
#ifndef S3_TEST_WRAP_ALLOC
    print_message("not under a sanitizer's malloc: skipped\n");
    (void)list_everything_refused, (void)refused_in_sweep;
#else
    size_t size;
    uint8_t *data = fx_kind("gr2anim-le32-brief", 0, NULL, &size);
    assert_non_null(data);
    enum { CAP = 1 << 16 };
    uint32_t *stack = malloc(CAP * sizeof *stack); /* before refusals start */
    assert_non_null(stack);
    struct s3fs *fs = open_kind(data, size);
    alloc_refuse_start(-1);
    assert_int_equal(list_everything_refused(fs->tree, "gr2anim-le32-brief", -1, stack, CAP), 0);
    long n = alloc_refuse_count();
    uint64_t tables, text;
    gobj_test_measured(gr2_view_of(fs), &tables, &text);
    assert_true(text > 0 && tables > 0); /* the file has animation CSVs and table CSVs */
    s3fs_close(fs);
    unsigned runs_failed = 0;
    for (long k = 0; k <= n; k++) {
        if (!refused_in_sweep(&(struct sweep_plan){400, 7}, k))
            continue;
        fs = open_kind(data, size);
        alloc_refuse_start(k);
        /* each failed listing made again */
        unsigned failed = list_everything_refused(fs->tree, "gr2anim-le32-brief", k, stack, CAP);
        alloc_refuse_start(-1);
        runs_failed += failed > 0;
        uint64_t got_tables, got_text;
        gobj_test_measured(gr2_view_of(fs), &got_tables, &got_text);
        if (got_text != text || got_tables != tables)
            fail_msg("k=%ld (%u listings failed): measured %" PRIu64 " bytes of animation CSV and %" PRIu64
                     " of table CSV, a clean open %" PRIu64 " and %" PRIu64,
                     k, failed, got_text, got_tables, text, tables);
        s3fs_close(fs);
    }
    assert_true(runs_failed > 0);
    free(stack);
    free(data);
#endif
}

/* gr2_is_curve_type on the animation fixture's first transform track's PositionCurve
 * data type (a CurveData type: its first member is the CurveDataHeader), with a fresh type
 * registry and each of its allocations refused in turn: the answer is "a curve" or NOMEM,
 * never "not a curve" (a refused allocation is no answer). */
static void test_granny_is_curve_type_nomem(void **state)
{
    (void)state;
#ifndef S3_TEST_WRAP_ALLOC
    print_message("not under a sanitizer's malloc: skipped\n");
#else
    size_t size;
    uint8_t *data = fx_kind("gr2anim-le32-brief", 0, NULL, &size);
    assert_non_null(data);
    struct s3fs *fs = open_kind(data, size);
    struct gr2_view *v = gr2_view_of(fs);
    assert_non_null(v);
    struct gr2_space sp;
    assert_int_equal(gr2_view_pin(v, &sp), S3_OK);
    struct gr2_types reg = {0};
    struct gr2_elem groups;
    gr2_root_array(&reg, &sp, "TrackGroups", &groups);
    assert_int_equal(groups.kind, GR2_EK_PTRARRAY);
    struct gr2_ref group;
    assert_true(gr2_ptr_elem(&sp, &groups, 0, &group));
    struct gr2_track_group g;
    char err[200];
    assert_int_equal(gr2_track_group_read(&reg, &sp, groups.type, group, &g, err, sizeof err), S3_OK);
    assert_true(g.transform.count > 0);
    const struct gr2_type *tt = gr2_type_get(&reg, &sp, g.transform.type);
    assert_non_null(tt);
    const struct gr2_member *m = gr2_std_find(tt, GR2_STD_TRANSFORMTRACK, "PositionCurve");
    assert_non_null(m);
    struct gr2_curve_ref at;
    assert_int_equal(gr2_curve_locate(&reg, &sp, m, g.transform.obj, false, &at, err, sizeof err), S3_OK);
    assert_false(at.old); /* the CurveData layout: at.type is a CurveData type */
    gr2_track_group_free(&g);
    unsigned refused = 0;
    for (long k = 0;; k++) {
        struct gr2_types fresh = {0};
        bool is = false;
        alloc_refuse_start(k);
        enum s3_err rc = gr2_is_curve_type(&fresh, &sp, at.type, &is);
        long asked = alloc_refuse_count();
        alloc_refuse_start(-1);
        gr2_types_free(&fresh);
        if (k >= asked) { /* nothing refused: the answer */
            assert_int_equal(rc, S3_OK);
            assert_true(is);
            break;
        }
        if (rc == S3_OK && !is)
            fail_msg("allocation %ld refused: gr2_is_curve_type answered \"not a curve\"", k);
        if (rc != S3_OK)
            assert_int_equal(rc, S3_ERR_NOMEM);
        refused += rc == S3_ERR_NOMEM;
    }
    assert_true(refused > 0);
    gr2_types_free(&reg);
    gr2_view_unpin(v, &sp);
    s3fs_close(fs);
    free(data);
#endif
}

/* Every file of the Granny animation tree read with each allocation refused in turn
 * (animation.glb's builds among them). */
static void test_granny_anims_reads_malloc(void **state)
{
    (void)state;
    refuse_mallocs_reading("gr2anim-le32-brief", &(struct sweep_plan){400, 29});
}

/* A package whole after each refusal (fixture_dbpf.c's sample: resources stored and
 * RefPack-compressed, a name map, nested RIGs wrapped and clear): its names, expansions,
 * exports and nested opens (the wrapped RIG's lists, the clear RIG's bones, the covered
 * ranges) keep no refusal. */
static void test_package_views_malloc(void **state)
{
    (void)state;
    refuse_every_malloc_of("package-s4", true);
}

/* A wrapped RIG: its root's listing also resolves the first skeleton's bones
 * (load_bones), whose refused allocations fail the listing with NOMEM; tried again, the
 * tree is whole. */
static void test_rig_views_malloc(void **state)
{
    (void)state;
    refuse_every_malloc_of("rig", true);
}

#ifdef S3_TEST_WRAP_ALLOC
/* An open that succeeded under a refusal: whole, its /info not saying out of memory. */
static void info_says_no_nomem(void *ctx, const struct s3fs *clean, struct s3fs *fs, long k)
{
    (void)ctx, (void)clean;
    char *info = read_info(fs->tree);
    assert_non_null(info);
    if (strstr(info, "out of memory"))
        fail_msg("rig open: malloc %ld refused: opened, yet /info says out of memory:\n%s", k, info);
    free(info);
}
#endif

/* Opening a wrapped RIG with each of its allocations refused in turn: the open fails
 * saying out of memory, or succeeds whole (its /info not saying out of memory), never a
 * RIG open without its Granny object tree. */
static void test_rig_open_malloc(void **state)
{
    (void)state;
#ifndef S3_TEST_WRAP_ALLOC
    print_message("rig open: not under a sanitizer's malloc: skipped\n");
#else
    size_t size;
    uint8_t *data = fx_kind("rig", 0, NULL, &size);
    assert_non_null(data);
    struct open_sweep s = refuse_each_open_allocation("rig open", data, size, info_says_no_nomem, NULL);
    assert_true(s.allocations > 10);
    print_message("rig open: %ld allocations; refusing each once failed the open (out of memory) in %u\n",
                  s.allocations, s.failed);
    assert_true(s.failed > 0);
    free(data);
#endif
}

static void fail_every_allocation_of(const char *kind, int nargs, char *const *args)
{
    struct subject s = {kind, NULL, 0, NULL};
    s.data = fx_kind(kind, nargs, args, &s.size);
    assert_non_null(s.data);
    fail_every_allocation_in(&s);
    free(s.data);
}

static void fail_every_allocation(const char *kind)
{
    fail_every_allocation_of(kind, 0, NULL);
}

static void test_package(void **state)
{
    (void)state;
    fail_every_allocation("package-s4");
}

static void test_granny_objects(void **state)
{
    (void)state;
    fail_every_allocation("gr2obj-le32-v7");
}

/* a value file past VIEW_TEXT_MAX, rendered on read (its row ends kept in the tree) */
static void test_granny_repeated_string(void **state)
{
    (void)state;
    static char *const args[] = {"400", "1000"};
    fail_every_allocation_of("gr2-repeated-string", 2, args);
}

static void test_t2fs(void **state)
{
    (void)state;
    fail_every_allocation("t2fs");
}

static void test_t2fs_turok1(void **state)
{
    (void)state;
    fail_every_allocation("t2fs-turok1");
}

/* A package whose listings warn (docs/formats/dbpf.md): a zlib resource whose
 * compression word says RefPack (its bytes decide: a warning when its directory is
 * listed) and a name map cut inside its last entry (a warning when /resources is
 * listed). Sims 4, no constant fields: records of 32 bytes, the compression word at 28. */
static uint8_t *warning_package(size_t *size)
{
    static const uint64_t inst[] = {0x11, 0x22};
    static const char *const names[] = {"first", "second"};
    size_t maplen;
    uint8_t *map = fxp_namemap(inst, names, 2, &maplen);
    uint8_t *blob = fxp_pattern(3000, 7);
    assert_non_null(map);
    assert_non_null(blob);
    struct fxp_res r[] = {
        {0x0166038Cu, 0, 0x99, map, maplen - 3, FXP_STORED},
        {0x12345678u, 0, 0x11, blob, 3000, FXP_ZLIB},
        {0x12345678u, 0, 0x22, blob, 1000, FXP_STORED},
    };
    struct fxp_opts o = {.game = 4};
    struct fxp_layout lay;
    uint8_t *data = fxp_build(&o, r, 3, size, &lay);
    assert_non_null(data);
    assert_int_equal(data[lay.record[1] + 28] | data[lay.record[1] + 29] << 8, 0x5A42);
    data[lay.record[1] + 28] = 0xFF; /* 0xFFFF: RefPack */
    data[lay.record[1] + 29] = 0xFF;
    free(map);
    free(blob);
    return data;
}

/* Its warnings are in /info after a clean walk, once each; with every allocation of the
 * tree's (fail_every_allocation_in) and every malloc of the walk (refuse_every_malloc_in)
 * refused in turn, /info ends the clean one: diag_add's NOMEM fails the listing that
 * warns, a listing that failed takes its warnings back, and the retry gives them once. */
static void test_package_warnings(void **state)
{
    (void)state;
    struct subject s = {"package-warnings", NULL, 0, NULL};
    s.data = warning_package(&s.size);
    struct s3fs *fs = open_kind(s.data, s.size);
    assert_int_equal(list_everything(fs->tree), 0);
    char *info = read_info(fs->tree);
    assert_non_null(info);
    const char *word = strstr(info, "compression word 0xffff does not fit its bytes; decoded as zlib (sniffed)");
    const char *cut = strstr(info, "name map: entry 1 of 2 is cut short"); /* from 0: the second */
    if (!word || !cut || strstr(word + 1, "compression word") || strstr(cut + 1, "name map: entry"))
        fail_msg("the package's two warnings, once each, expected in /info:\n%s", info);
    free(info);
    s3fs_close(fs);
    fail_every_allocation_in(&s);
    refuse_every_malloc_in("package-warnings", s.data, s.size, true);
    free(s.data);
}

/* A Mods folder (fixture_folder.c): the scan, /files with every package's tree and the
 * script archives' members, /keys, /conflicts and /script-conflicts, /by-type. */
static void test_folder(void **state)
{
    (void)state;
    char dir[] = "/tmp/s3rig-oom-folder-XXXXXX";
    assert_non_null(mkdtemp(dir));
    assert_int_equal(fxf_build(dir, true), 0);
    struct subject s = {"folder", NULL, 0, dir};
    fail_every_allocation_in(&s);
    remove_tree(dir);
}

/* A Mods folder on disk with the views' every malloc refused in turn (alloc_refuse.c), the
 * scan's among them (the first listing of the root scans the folder): the listing that
 * met the refusal fails with NOMEM, keeps nothing, and its retry scans again, so the tree
 * listed whole equals a clean open's, /info's text too (issue 32: a scan refused memory
 * is not kept as the mount's answer). Every allocation: the folder is small (well
 * under a second for the whole sweep). */
static void test_folder_scan_malloc(void **state)
{
    (void)state;
    char dir[] = "/tmp/s3rig-oom-scan-XXXXXX";
    assert_non_null(mkdtemp(dir));
    assert_int_equal(fxf_build(dir, true), 0);
    struct subject s = {"folder-scan", NULL, 0, dir};
    refuse_mallocs_in_subject(&s, true, &every_one);
    remove_tree(dir);
}

/* Every script archive member of a Mods folder (its bytes a cache item read through
 * libzip), read through with each malloc of the read refused in turn (the folder listed
 * first, nothing refused): the read succeeds whole or fails with NOMEM, never EIO (which
 * says the file changed), and the next read gives the clean bytes. */
static void test_folder_member_reads_malloc(void **state)
{
    (void)state;
#ifndef S3_TEST_WRAP_ALLOC
    print_message("folder member reads: not under a sanitizer's malloc: skipped\n");
#else
    char dir[] = "/tmp/s3rig-oom-member-XXXXXX";
    assert_non_null(mkdtemp(dir));
    assert_int_equal(fxf_build(dir, true), 0);
    struct subject s = {"folder", NULL, 0, dir};
    struct s3fs *fs = open_subject(&s);
    struct snap clean = {0};
    snap_tree(&clean, fs->tree, TREE_ROOT);
    s3fs_close(fs);
    unsigned members = 0, nomem = 0;
    long total = 0;
    for (size_t i = 0; i < clean.n; i++) {
        const struct snap_entry *f = &clean.e[i];
        if (f->kind != 'f' || strncmp(f->path, "files/", 6) != 0 || !strstr(f->path, ".ts4script/"))
            continue;
        members++;
        uint8_t *buf = malloc(f->dlen + 1);
        assert_non_null(buf);
        for (long k = 0;; k++) {
            fs = open_subject(&s);
            uint32_t ino;
            assert_int_equal(tree_resolve(fs->tree, f->path, &ino), S3_OK);
            size_t got = 0, n = 0;
            alloc_refuse_start(k);
            enum s3_err e = tree_read(fs->tree, ino, 0, buf, f->dlen + 1, &got);
            long asked = alloc_refuse_count();
            alloc_refuse_start(-1);
            if (e != S3_OK && e != S3_ERR_NOMEM)
                fail_msg("%s: malloc %ld of the read refused: %s, not NOMEM", f->path, k, s3_err_str(e));
            if (e == S3_OK && (got != f->dlen || memcmp(buf, f->data, got) != 0))
                fail_msg("%s: malloc %ld of the read refused: %zu bytes with success, unlike the clean %zu", f->path,
                         k, got, f->dlen);
            nomem += e == S3_ERR_NOMEM;
            assert_int_equal(tree_read(fs->tree, ino, 0, buf, f->dlen + 1, &n), S3_OK);
            if (n != f->dlen || memcmp(buf, f->data, n) != 0)
                fail_msg("%s: malloc %ld refused: the next read differs from the clean bytes", f->path, k);
            s3fs_close(fs);
            if (k >= asked) /* past the read's allocations: nothing was refused */
                break;
            total++;
        }
        free(buf);
    }
    print_message("folder: %u script members, %ld allocations of their reads refused in turn, %u reads ENOMEM, "
                  "each next read whole\n",
                  members, total, nomem);
    assert_true(members >= 4);
    assert_true(nomem > 0);
    snap_free(&clean);
    remove_tree(dir);
#endif
}

/* /info's duplicates note (a package changed since the scan, docs: s3rig(5) "not in
 * duplicates.csv") with each malloc of rendering /info refused in turn: the render fails
 * or shows it, and the next render shows it once, never "1 more warnings not shown" (a
 * refused warning counted as dropped for good). The copy of a.package is changed after
 * each open's scan (its time), so the packages compared when /info is first rendered
 * find it changed. */
static void test_folder_info_note_malloc(void **state)
{
    (void)state;
#ifndef S3_TEST_WRAP_ALLOC
    print_message("folder /info note: not under a sanitizer's malloc: skipped\n");
#else
    char dir[] = "/tmp/s3rig-oom-note-XXXXXX", copy[128];
    assert_non_null(mkdtemp(dir));
    assert_int_equal(fxf_build(dir, true), 0);
    snprintf(copy, sizeof copy, "%s/copy/a-copy.package", dir);
    struct subject s = {"folder", NULL, 0, dir};
    const char *note = "copy/a-copy.package: changed or gone since the folder was scanned; not in duplicates.csv";
    unsigned failed = 0;
    long k = 0;
    for (;; k++) {
        struct s3fs *fs = open_subject(&s);
        assert_int_equal(tree_populate(fs->tree, TREE_ROOT), S3_OK); /* the scan */
        struct timespec when[2] = {{1000000 + k, 0}, {1000000 + k, 0}};
        assert_int_equal(utimensat(AT_FDCWD, copy, when, 0), 0);
        uint32_t info;
        assert_int_equal(tree_lookup(fs->tree, TREE_ROOT, "info", &info), S3_OK);
        size_t len;
        alloc_refuse_start(k);
        char *first = tree_render(fs->tree, info, &len);
        long asked = alloc_refuse_count();
        alloc_refuse_start(-1);
        failed += first == NULL;
        free(first);
        char *text = read_info(fs->tree);
        assert_non_null(text);
        const char *at = strstr(text, note);
        if (!at || strstr(at + 1, note) || strstr(text, "more warnings not shown"))
            fail_msg("malloc %ld of rendering /info refused: the next /info has not the note once:\n%s", k, text);
        free(text);
        s3fs_close(fs);
        if (k >= asked)
            break;
    }
    print_message("folder /info: %ld allocations of its first render refused in turn, %u renders failed, the next "
                  "one whole\n",
                  k, failed);
    assert_true(failed > 0);
    remove_tree(dir);
#endif
}

/* A conflict's `identical` (folder6, issue 33): yes or no, the layout's two answers,
 * whatever is refused. Every malloc of listing one conflict's directory, then of reading
 * conflicts.csv, refused in turn (alloc_refuse.c): the listing or the read fails with
 * NOMEM and gives the answer when tried again, or succeeds with it; never identical.error
 * nor an empty column. The answers from the fixture's rules: K1's providers hold five
 * different texts (no), K2's "same two" each and the name map a package and its copy (yes). */
static const char *want_identical(const char *conflict)
{
    char k1[64];
    snprintf(k1, sizeof k1, "S4_%08X_%08X_%016llX", fxf_key[FXF_K1].type, fxf_key[FXF_K1].group,
             (unsigned long long)fxf_key[FXF_K1].instance);
    return strncmp(conflict, k1, strlen(k1)) == 0 ? "no\n" : "yes\n";
}

static void expect_identical_text(struct tree *t, uint32_t dir, const char *want, long k)
{
    uint32_t f;
    if (tree_lookup(t, dir, "identical", &f))
        fail_msg("malloc %ld refused: %s has no identical file", k, tree_name(t, dir));
    uint8_t *b;
    size_t n;
    assert_int_equal(tree_read_all(t, f, &b, &n), 0);
    if (n != strlen(want) || memcmp(b, want, n) != 0)
        fail_msg("malloc %ld refused: %s/identical is %.*s, want %s", k, tree_name(t, dir), (int)n, (char *)b, want);
    free(b);
}

static void test_folder_identical_malloc(void **state)
{
    (void)state;
#ifndef S3_TEST_WRAP_ALLOC
    print_message("folder identical: not under a sanitizer's malloc: skipped\n");
    (void)want_identical, (void)expect_identical_text;
#else
    char dir[] = "/tmp/s3rig-oom-ident-XXXXXX";
    assert_non_null(mkdtemp(dir));
    assert_int_equal(fxf_build(dir, true), 0);
    struct subject s = {"folder", NULL, 0, dir};
    unsigned conflicts = 0, refused_listings = 0, refused_reads = 0;
    for (uint32_t c = 0;; c++) { /* each conflict directory in turn */
        long n = -1;
        for (long k = -1; k <= n; k++) {
            struct s3fs *fs = open_subject(&s);
            uint32_t top, d;
            assert_int_equal(tree_resolve(fs->tree, "conflicts", &top), 0);
            assert_int_equal(tree_populate(fs->tree, top), 0);
            if (c >= tree_child_count(fs->tree, top)) {
                s3fs_close(fs);
                goto csv;
            }
            d = tree_child(fs->tree, top, c);
            alloc_refuse_start(k);
            enum s3_err rc = tree_populate(fs->tree, d);
            if (k < 0)
                n = alloc_refuse_count();
            alloc_refuse_start(-1);
            if (rc) {
                if (rc != S3_ERR_NOMEM)
                    fail_msg("malloc %ld refused: listing %s failed with %s", k, tree_name(fs->tree, d), s3_err_str(rc));
                refused_listings++;
                if ((rc = tree_populate(fs->tree, d)) != S3_OK)
                    fail_msg("malloc %ld of %ld refused: %s listed again failed with %s", k, n, tree_name(fs->tree, d),
                             s3_err_str(rc));
            }
            expect_identical_text(fs->tree, d, want_identical(tree_name(fs->tree, d)), k);
            s3fs_close(fs);
        }
        conflicts++;
    }
csv:
    assert_int_equal(conflicts, 3);
    for (long k = -1, n = -1; k <= n; k++) {
        struct s3fs *fs = open_subject(&s);
        uint32_t csv;
        assert_int_equal(tree_populate(fs->tree, TREE_ROOT), 0);
        assert_int_equal(tree_lookup(fs->tree, TREE_ROOT, "conflicts.csv", &csv), 0);
        size_t len;
        /* as a reader's open takes it (fuse_ll.c): the render whole, NULL for ENOMEM */
        alloc_refuse_start(k);
        char *b = tree_render(fs->tree, csv, &len);
        if (k < 0)
            n = alloc_refuse_count();
        alloc_refuse_start(-1);
        if (!b) {
            refused_reads++;
            b = tree_render(fs->tree, csv, &len);
            if (!b)
                fail_msg("malloc %ld refused: conflicts.csv failed again", k);
        }
        /* three rows, each ending in yes or no (the rules' answers, as above) */
        if (!strstr((char *)b, ",5,Override/o.package,no\n") || !strstr((char *)b, ",4,_x.package,yes\n") ||
            !strstr((char *)b, ",2,copy/a-copy.package,yes\n"))
            fail_msg("malloc %ld refused: conflicts.csv is\n%s", k, (char *)b);
        free(b);
        s3fs_close(fs);
    }
    print_message("folder identical: %u conflicts, %u listings and %u conflicts.csv reads refused an "
                  "allocation: each ENOMEM, then yes/no\n",
                  conflicts, refused_listings, refused_reads);
    assert_true(refused_listings > 0);
    assert_true(refused_reads > 0);
    remove_tree(dir);
#endif
}

/* A folder scan begins its key table from a guess (up to 8 times the records: a folder
 * whose first packages are its biggest). A guess bigger than the memory there is (every
 * allocation above 1 MiB refused here, the guess's table 128 MiB) must not fail the
 * build: the table begins small and grows as keys come, to the same keys, providers,
 * winners and an exact-size table (the smallest power of two at least twice the keys). */
static void test_key_table_guess_refused(void **state)
{
    (void)state;
#ifndef S3_TEST_WRAP_ALLOC
    print_message("not under a sanitizer's malloc: skipped\n");
#else
    enum { N = 3000, FILES = 2 };
    static int32_t prio[FILES];
    struct mf_rec *recs = malloc(FILES * N * sizeof *recs);
    assert_non_null(recs);
    struct mf_run runs[FILES];
    for (uint32_t f = 0; f < FILES; f++) {
        runs[f] = (struct mf_run){f * N, N, f};
        for (uint32_t i = 0; i < N; i++) /* both files provide every key: the second wins */
            recs[f * N + i] = (struct mf_rec){7, 0, (uint64_t)i << 20, 16, i, 0, 0};
    }
    struct mf_keyset ks;
    struct mf_keybuild b;
    alloc_refuse_above(1u << 20);
    enum s3_err rc = mf_keybuild_begin(&b, &ks, 8u << 20);
    ks.recs = (struct mf_recs){{recs}};
    for (uint32_t f = 0; rc == S3_OK && f < FILES; f++)
        rc = mf_keybuild_add(&b, &runs[f], f + 1 < FILES ? &runs[f + 1] : NULL);
    if (rc == S3_OK)
        rc = mf_keybuild_finish(&b, prio);
    alloc_refuse_above(0);
    assert_int_equal(rc, S3_OK);
    assert_int_equal(ks.nkeys, N);
    assert_int_equal(ks.cap, 8192);
    for (uint32_t k = 0; k < ks.nkeys; k++) {
        assert_int_equal(mf_keyset_n(&ks, k), 2);
        assert_int_equal(mf_keyset_winner(&ks, k), 1);
        assert_int_equal(recs[mf_keyset_rec(&ks, k, 1)].file, 1);
    }
    mf_keyset_free(&ks);
    free(recs);
#endif
}

/* ./test_oom [PATTERN]: only the tests whose names match (cmocka's filter, * wildcards) */
int main(int argc, char **argv)
{
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_package),
        cmocka_unit_test(test_package_warnings),
        cmocka_unit_test(test_granny_objects),
        cmocka_unit_test(test_granny_repeated_string),
        cmocka_unit_test(test_t2fs),
        cmocka_unit_test(test_t2fs_turok1),
        cmocka_unit_test(test_folder),
        cmocka_unit_test(test_folder_identical_malloc),
        cmocka_unit_test(test_folder_member_reads_malloc),
        cmocka_unit_test(test_folder_scan_malloc),
        cmocka_unit_test(test_folder_info_note_malloc),
        cmocka_unit_test(test_t2fs_views_malloc),
        cmocka_unit_test(test_turok1_views_malloc),
        cmocka_unit_test(test_granny_objects_views_malloc),
        cmocka_unit_test(test_package_views_malloc),
        cmocka_unit_test(test_granny_objects_reads_malloc),
        cmocka_unit_test(test_granny_anims_views_malloc),
        cmocka_unit_test(test_granny_measured_once),
        cmocka_unit_test(test_granny_is_curve_type_nomem),
        cmocka_unit_test(test_granny_anims_reads_malloc),
        cmocka_unit_test(test_package_reads_malloc),
        cmocka_unit_test(test_rig_views_malloc),
        cmocka_unit_test(test_rig_open_malloc),
        cmocka_unit_test(test_key_table_guess_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
