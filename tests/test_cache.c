/* The bounded cache of expanded bytes under parallel requests and hostile sizes, through
 * the views that use it: productions outside the cache lock (a big expansion stalls no
 * other item). Everything is counted (productions, waits, bytes held), never timed. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "fixture.h"
#include "fixture_dbpf.h"
#include "fixture_gr2anim.h"
#include "fixture_gr2model.h"
#include "fixture_gr2obj.h"
#include "fixture_kinds.h"
#include "fixture_t2fs.h"
#include "fs/export/export.h"
#include "fs/open/open.h"
#include "fs/views/gr2/view_granny.h"
#include "oodle1enc.h"
#include "testutil.h"
#include "walk.h"

/* A package of zlib resources of the given sizes (instances 1, 2, ...), each fxp_pattern()
 * bytes unless given; their data.bin paths into paths[i]. */
struct pkg {
    struct fxp_res r[8];
    uint8_t *data[8];
    size_t n;
    uint8_t *file;
    size_t size;
    char paths[8][300];
};

static void pkg_build_with(struct pkg *p, const size_t *sizes, size_t n, const uint8_t *first)
{
    memset(p, 0, sizeof *p);
    p->n = n;
    for (size_t i = 0; i < n; i++) {
        p->data[i] = fxp_pattern(sizes[i], 7 + (uint32_t)i);
        if (i == 0 && first)
            memcpy(p->data[i], first, sizes[i]);
        p->r[i] = (struct fxp_res){0x00B2D882, 0, i + 1, p->data[i], sizes[i], FXP_ZLIB};
        char name[200];
        fxp_expected_name(name, sizeof name, 4, &p->r[i], NULL, 0);
        snprintf(p->paths[i], sizeof p->paths[i], "/resources/%s/data.bin", name);
    }
    struct fxp_opts o = {.game = 4};
    struct fxp_layout lay;
    p->file = fxp_build(&o, p->r, n, &p->size, &lay);
}

static void pkg_build(struct pkg *p, const size_t *sizes, size_t n)
{
    pkg_build_with(p, sizes, n, NULL);
}

static void pkg_free(struct pkg *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->data[i]);
    free(p->file);
}

/* Reads a whole file in `chunk`-byte reads and compares it with want. */
static void read_through(struct s3fs *fs, uint32_t ino, const uint8_t *want, size_t n, size_t chunk)
{
    uint8_t *buf = malloc(chunk);
    for (size_t off = 0; off < n;) {
        ssize_t k = (ssize_t)tree_read_ok(fs->tree, ino, off, buf, chunk);
        assert_true(k > 0);
        assert_memory_equal(buf, want + off, (size_t)k);
        off += (size_t)k;
    }
    free(buf);
}

static uint32_t ino_of(struct s3fs *fs, const char *path)
{
    uint32_t ino;
    if (tree_resolve(fs->tree, path, &ino))
        fail_msg("%s does not resolve", path);
    return ino;
}

/* ---- productions outside the cache lock ---- */

/* The test hook: the production made on the `blocked` thread stops until released. */
struct gate {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    pthread_t blocked;
    bool armed, entered, open;
    int small_done; /* small files read through while the big production is stopped */
};

static void gate_hook(struct cached *it, void *ctx)
{
    (void)it;
    struct gate *g = ctx;
    pthread_mutex_lock(&g->lock);
    if (g->armed && pthread_equal(pthread_self(), g->blocked)) {
        g->entered = true;
        pthread_cond_broadcast(&g->cond);
        while (!g->open)
            pthread_cond_wait(&g->cond, &g->lock);
    }
    pthread_mutex_unlock(&g->lock);
}

/* Waits (a generous safety net, not a measurement) until *flag reaches want. */
static bool gate_wait(struct gate *g, const bool *flag, const int *count, int want)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 60;
    pthread_mutex_lock(&g->lock);
    int rc = 0;
    while (rc == 0 && !(flag ? *flag : *count >= want))
        rc = pthread_cond_timedwait(&g->cond, &g->lock, &until);
    bool ok = flag ? *flag : *count >= want;
    pthread_mutex_unlock(&g->lock);
    return ok;
}

struct reader {
    struct s3fs *fs;
    struct pkg *p;
    struct gate *g;
    bool stopped; /* this thread's production is the one the gate stops */
};

/* The first 128 KiB of the big resource (one read: one pin). */
static void *read_big(void *arg)
{
    struct reader *r = arg;
    if (r->stopped) {
        pthread_mutex_lock(&r->g->lock);
        r->g->blocked = pthread_self();
        r->g->armed = true;
        pthread_mutex_unlock(&r->g->lock);
    }
    read_through(r->fs, ino_of(r->fs, r->p->paths[0]), r->p->data[0], 128 << 10, 128 << 10);
    return NULL;
}

/* Each small resource whole, in one read. */
static void *read_small(void *arg)
{
    struct reader *r = arg;
    for (size_t i = 1; i < r->p->n; i++) {
        read_through(r->fs, ino_of(r->fs, r->p->paths[i]), r->p->data[i], r->p->r[i].len, r->p->r[i].len);
        pthread_mutex_lock(&r->g->lock);
        r->g->small_done++;
        pthread_cond_broadcast(&r->g->cond);
        pthread_mutex_unlock(&r->g->lock);
    }
    return NULL;
}

/* Polls the cache (a safety net of a minute, not a measurement) until some pin has
 * waited for a production under way. */
static bool someone_waits(struct cache *c, uint64_t waits_before)
{
    for (int i = 0; i < 60000; i++) {
        struct cache_stats st;
        cache_stats(c, &st);
        if (st.waits > waits_before)
            return true;
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    return false;
}

/* One thread expands a big resource, held stopped inside its producer by the test hook;
 * a second reader of the big one waits for that production instead of making its own;
 * meanwhile another thread reads three other resources through (the cache keeps
 * nothing, so each is expanded). The small reads all complete while the big production
 * is still stopped; then the big resource is produced once for both of its readers. */
static void test_production_outside_lock(void **state)
{
    (void)state;
    static const size_t sizes[] = {1 << 20, 40000, 70000, 100000};
    struct pkg p;
    pkg_build(&p, sizes, 4);
    struct s3fs_opts o = {.cache_bytes = 1024}; /* keeps nothing: every read expands */
    struct s3fs *fs = open_mem(p.file, p.size, &o, "package");
    for (size_t i = 0; i < p.n; i++)
        ino_of(fs, p.paths[i]); /* listed (and expanded, to know they expand) */
    /* then a bound all four fit in at once (the bound is one for every thread: in 1 KiB
     * the small ones would be refused beside the big one's room); nothing is kept yet */
    fs->cache.limit = 2u << 20;
    struct gate g = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};
    fs->cache.before_produce = gate_hook;
    fs->cache.before_produce_ctx = &g;
    struct cache_stats before, during, after;
    cache_stats(&fs->cache, &before);
    struct reader big = {fs, &p, &g, true}, big2 = {fs, &p, &g, false}, small = {fs, &p, &g, false};
    pthread_t tb, tb2, ts;
    assert_int_equal(pthread_create(&tb, NULL, read_big, &big), 0);
    if (!gate_wait(&g, &g.entered, NULL, 0))
        fail_msg("the big resource's production never started");
    assert_int_equal(pthread_create(&tb2, NULL, read_big, &big2), 0);
    bool waited = someone_waits(&fs->cache, before.waits);
    assert_int_equal(pthread_create(&ts, NULL, read_small, &small), 0);
    bool all = gate_wait(&g, NULL, &g.small_done, 3);
    cache_stats(&fs->cache, &during);
    pthread_mutex_lock(&g.lock);
    g.open = true;
    pthread_cond_broadcast(&g.cond);
    pthread_mutex_unlock(&g.lock);
    pthread_join(tb, NULL);
    pthread_join(tb2, NULL);
    pthread_join(ts, NULL);
    cache_stats(&fs->cache, &after);
    if (!all)
        fail_msg("the small resources waited for the big one's expansion (%d of 3 read)", g.small_done);
    assert_true(waited);
    /* while stopped: the three small ones produced, the big one not yet; then once */
    assert_int_equal(during.produced - before.produced, 3);
    assert_int_equal(after.produced - before.produced, 4);
    assert_int_equal(after.failed, before.failed);
    s3fs_close(fs);
    pkg_free(&p);
}

/* ---- one expansion per read-through ---- */

static uint64_t productions(struct s3fs *fs)
{
    struct cache_stats st;
    cache_stats(&fs->cache, &st);
    return st.produced;
}

/* Reads path through in 128 KiB reads, held as an open handle holds it (or not), and
 * returns how many expansions the read-through cost. */
static uint64_t read_cost(struct s3fs *fs, const char *path, const uint8_t *want, size_t n, bool held)
{
    uint32_t ino = ino_of(fs, path);
    assert_int_equal(tree_size(fs->tree, ino), n);
    uint64_t before = productions(fs);
    struct tree_hold *h = held ? tree_hold(fs->tree, ino) : NULL;
    if (held && !h)
        fail_msg("%s: nothing to hold", path);
    read_through(fs, ino, want, n, 128 << 10);
    tree_release(h);
    return productions(fs) - before;
}

/* After every hold is released, the bytes held are back within the bound. */
static void assert_within_bound(struct s3fs *fs)
{
    struct cache_stats st;
    cache_stats(&fs->cache, &st);
    assert_true(st.used <= st.limit);
}

/* A 1 MiB zlib resource with a 256 KiB cache: listing it expands it once (to know it
 * expands, and what it holds); reading it through with a handle expands it once, where
 * each read would expand it again without one (8 reads of 128 KiB). */
static void test_package_resource_once(void **state)
{
    (void)state;
    static const size_t sizes[] = {1 << 20};
    struct pkg p;
    pkg_build(&p, sizes, 1);
    struct s3fs_opts o = {.cache_bytes = 256 << 10};
    struct s3fs *fs = open_mem(p.file, p.size, &o, "package");
    uint64_t before = productions(fs);
    ino_of(fs, p.paths[0]);
    assert_int_equal(productions(fs) - before, 1);
    assert_int_equal(read_cost(fs, p.paths[0], p.data[0], sizes[0], false), 8);
    assert_int_equal(read_cost(fs, p.paths[0], p.data[0], sizes[0], true), 1);
    assert_within_bound(fs);
    s3fs_close(fs);
    pkg_free(&p);
}

/* A Granny file of three sections: BitKnit2 (512 KiB expanded), Oodle1 (256 KiB), stored
 * as is (256 KiB). Their bytes in sec[]. */
struct gr2_file_x {
    uint8_t *file, *sec[3];
    size_t size, sec_size[3];
};

static void gr2_sections(struct gr2_file_x *x)
{
    static const size_t sz[3] = {512 << 10, 256 << 10, 256 << 10};
    for (int i = 0; i < 3; i++) {
        x->sec_size[i] = sz[i];
        x->sec[i] = fxp_pattern(sz[i], 100 + (uint32_t)i);
    }
    size_t plen;
    uint32_t n1 = (uint32_t)sz[1];
    uint8_t *packed = oodle1_encode(x->sec[1], n1, n1 / 2, n1 / 4 * 3, false, &plen);
    struct fx_section s[3] = {
        {.data = x->sec[0], .data_size = (uint32_t)sz[0], .alignment = 4, .first16bit = 1, .first8bit = 1,
         .bitknit2 = true},
        {.compression = 2, .data = packed, .data_size = (uint32_t)plen, .expanded_size = n1, .alignment = 4,
         .first16bit = n1 / 2, .first8bit = n1 / 4 * 3},
        {.data = x->sec[2], .data_size = (uint32_t)sz[2], .alignment = 4, .first16bit = (uint32_t)sz[2],
         .first8bit = (uint32_t)sz[2]},
    };
    struct fx_gr2_opts go = {.version = 7, .sig = "le32"};
    struct fx_gr2_layout lay;
    x->file = fx_build_gr2(&go, s, 3, &x->size, &lay);
    free(packed);
}

static void gr2_sections_free(struct gr2_file_x *x)
{
    for (int i = 0; i < 3; i++)
        free(x->sec[i]);
    free(x->file);
}

/* A BitKnit2 and an Oodle1 section each larger than the cache: listed, each is expanded
 * once (to know it expands); read through with a handle, once. */
static void test_granny_section_once(void **state)
{
    (void)state;
    struct gr2_file_x x;
    gr2_sections(&x);
    struct s3fs_opts o = {.cache_bytes = 64 << 10};
    struct s3fs *fs = open_mem(x.file, x.size, &o, "Granny file");
    ino_of(fs, "/granny/sections");
    for (int i = 0; i < 2; i++) {
        char path[64];
        snprintf(path, sizeof path, "/granny/sections/%d/data.bin", i);
        uint64_t before = productions(fs);
        ino_of(fs, path);
        assert_int_equal(productions(fs) - before, 1);
        assert_true(read_cost(fs, path, x.sec[i], x.sec_size[i], false) > 1);
        assert_int_equal(read_cost(fs, path, x.sec[i], x.sec_size[i], true), 1);
        assert_within_bound(fs);
    }
    s3fs_close(fs);
    gr2_sections_free(&x);
}

/* An RNC node expanding to 300 KB with a 64 KiB cache: read through with a handle, once. */
static void test_rnc_node_once(void **state)
{
    (void)state;
    size_t n = 300000;
    uint8_t *data = fxp_pattern(n, 3);
    struct fxt *leaf = fxt_raw(data, n);
    leaf->compress = 1;
    struct fxt *root = fxt_branch(2, leaf, fxt_raw("tail", 4));
    size_t size;
    uint8_t *file = fxt_write(root, false, 0, 0, &size);
    struct s3fs_opts o = {.cache_bytes = 64 << 10};
    struct s3fs *fs = open_mem(file, size, &o, "t2fs file");
    assert_true(read_cost(fs, "/root/0.bin", data, n, false) > 1);
    assert_int_equal(read_cost(fs, "/root/0.bin", data, n, true), 1);
    assert_within_bound(fs);
    s3fs_close(fs);
    free(file);
    fxt_free(root);
    free(data);
}

/* The Granny file above inside a zlib package resource, with a cache smaller than the
 * resource and than its sections: each listing of the nested view expands the resource
 * at most once (the listing holds it while the view parses it piece by piece); reading a
 * BitKnit2 section through expands it once and the resource under it once; reading the
 * stored section (a range of the expanded resource) expands the resource once. */
static void test_nested_once(void **state)
{
    (void)state;
    struct gr2_file_x x;
    gr2_sections(&x);
    size_t sizes[] = {x.size};
    struct pkg p;
    pkg_build_with(&p, sizes, 1, x.file);
    struct s3fs_opts o = {.cache_bytes = 64 << 10};
    struct s3fs *fs = open_mem(p.file, p.size, &o, "package");
    char rig[300], path[400];
    snprintf(rig, sizeof rig, "%.*s/rig", (int)(strlen(p.paths[0]) - strlen("/data.bin")), p.paths[0]);
    /* each listing in turn (the resource's directory was listed to find rig/): the
     * resource once; for /granny, section 0 as well (where the root type would be), for
     * section 1 its Oodle1 bytes (data.bin or data.error); /granny/sections reads
     * nothing */
    static const char *const listings[] = {"", "/granny", "/granny/sections", "/granny/sections/1"};
    static const int want[] = {1, 2, 0, 2};
    for (size_t i = 0; i < sizeof listings / sizeof *listings; i++) {
        snprintf(path, sizeof path, "%s%s", rig, listings[i]);
        uint32_t dir = ino_of(fs, path);
        uint64_t before = productions(fs);
        assert_int_equal(tree_populate(fs->tree, dir), 0);
        if (want[i] >= 0)
            assert_int_equal(productions(fs) - before, want[i]);
    }
    snprintf(path, sizeof path, "%s/granny/sections/0/data.bin", rig);
    assert_int_equal(read_cost(fs, path, x.sec[0], x.sec_size[0], true), 2);
    snprintf(path, sizeof path, "%s/granny/sections/2/data.bin", rig);
    assert_int_equal(read_cost(fs, path, x.sec[2], x.sec_size[2], true), 1);
    assert_within_bound(fs);
    s3fs_close(fs);
    pkg_free(&p);
    gr2_sections_free(&x);
}

/* ---- the bound: many sections, each smaller than the cache, together far larger ---- */

/* fxg_build_sections(nsections, section_size) opened with a cache of cache_bytes; the
 * file into *f and the fixture's sections into r (free both). */
static struct s3fs *open_sections(uint32_t nsections, uint32_t section_size, uint64_t cache_bytes, uint8_t **f,
                                  struct fxg_sections_result *r)
{
    struct fxg_sections_opts so = {nsections, section_size};
    size_t size;
    *f = fxg_build_sections(&so, &size, r);
    struct s3fs_opts o = {.cache_bytes = cache_bytes};
    return open_mem(*f, size, &o, "Granny file");
}

/* 15 BitKnit2 sections of 5 MiB each (75 MiB expanded, 4.7 times the cache) under
 * cache_mb=16: the whole tree walked and read (the object tree reaches every section:
 * Part_k lives at the start of section k, its Values table right after it), and every
 * section's data.bin read through with a handle. The expanded bytes held never passed
 * the bound, nothing was refused, and the values are the fixture's. */
static void test_many_sections_bounded(void **state)
{
    (void)state;
    struct fxg_sections_result r;
    uint8_t *f;
    struct s3fs *fs = open_sections(16, 5 << 20, 16 << 20, &f, &r);
    cache_reset_peak(&fs->cache);
    assert_true(walk_all(fs, 1000000) > 100);
    for (uint32_t k = 1; k < r.nsections; k++) {
        char path[96], want[32];
        snprintf(path, sizeof path, "/granny/sections/%u/data.bin", k);
        assert_true(read_cost(fs, path, r.section[k], r.section_size[k], true) <= 1);
        snprintf(path, sizeof path, "/granny/root/Part_%u/Index", k);
        snprintf(want, sizeof want, "%u\n", k);
        expect_text(fs, path, want);
        snprintf(path, sizeof path, "/granny/root/Part_%u/Values.csv", k);
        char *csv = read_path(fs, path, NULL);
        snprintf(want, sizeof want, "v\n%u\n%u\n", k * 1000, k * 1000 + 1);
        assert_memory_equal(csv, want, strlen(want));
        free(csv);
    }
    struct cache_stats st;
    cache_stats(&fs->cache, &st);
    print_message("peak %llu bytes held of %llu, %llu productions\n", (unsigned long long)st.peak,
                  (unsigned long long)st.limit, (unsigned long long)st.produced);
    assert_true(st.peak <= st.limit);
    assert_true(st.peak >= r.section_size[1]); /* a section was held: the peak is real */
    expect_lacks(fs, "/info", "refused");
    s3fs_close(fs);
    free(f);
    fxg_sections_free(&r);
}

/* A request that cannot fit: with cache_mb=1, sections of 2 MiB. The objects in them are
 * .error files saying why, and /info says so; the sections' data.bin are still served
 * (read through with a handle: expanded once, the one thing held past the bound). */
static void test_section_over_bound(void **state)
{
    (void)state;
    struct fxg_sections_result r;
    uint8_t *f;
    struct s3fs *fs = open_sections(3, 2 << 20, 1 << 20, &f, &r);
    char want[200]; /* beside the bytes of section 0, which the request reads the reference in */
    snprintf(want, sizeof want,
             "section 1: its 2097152 expanded bytes, with the %u of the sections this request uses, pass the "
             "cache_mb bound (1048576 bytes)", r.section_size[0]);
    expect_has(fs, "/granny/root/Part_1.error", want);
    expect_has(fs, "/info", "section 1: refused to a request: with the other sections it needed, over the cache_mb "
                            "bound (1048576 bytes); what lies in it there is an .error file");
    for (uint32_t k = 1; k < r.nsections; k++) {
        char path[64];
        snprintf(path, sizeof path, "/granny/sections/%u/data.bin", k);
        assert_int_equal(read_cost(fs, path, r.section[k], r.section_size[k], true), 1);
    }
    assert_within_bound(fs);
    s3fs_close(fs);
    free(f);
    fxg_sections_free(&r);
}

/* Two sections used in turn that do not fit together: 400 parts alternate between
 * sections 1 and 2 (640 KiB expanded each; section 0, stored, holds the root and the list
 * of parts; 116 KB of file) under cache_mb=1. Listing /granny/root runs the object walk
 * and listing Parts looks at each part: both go through the parts in order, and each
 * expanded one of the two big sections at every switch (401 expansions, 260 MB, for one
 * listing). Now a request fetches again at most the bytes the whole file expands to
 * (1,312,616), then refuses the section: the parts there are .error files saying why, and
 * /info says a request was refused. With a cache that holds all three sections, each is
 * expanded once and every part is there. */
static void test_sections_in_turn(void **state)
{
    (void)state;
    struct fxg_sections_result r;
    size_t size;
    uint8_t *f = fxg_build_alternating(400, 640 << 10, &size, &r);
    struct s3fs_opts small = {.cache_bytes = 1 << 20};
    struct s3fs *fs = open_mem(f, size, &small, "Granny file");
    /* in each request: the three sections once (section 0 is held in the cache as well),
     * then again at most the two big ones and section 0 */
    uint64_t before = productions(fs);
    uint32_t parts = ino_of(fs, "/granny/root/Parts"); /* /granny/root listed: the walk ran */
    uint64_t walk_cost = productions(fs) - before;
    before = productions(fs);
    assert_int_equal(tree_populate(fs->tree, parts), 0);
    uint64_t list_cost = productions(fs) - before;
    print_message("cache_mb=1: listing /granny/root %llu expansions, /granny/root/Parts %llu\n",
                  (unsigned long long)walk_cost, (unsigned long long)list_cost);
    assert_true(walk_cost >= 3 && walk_cost <= 6);
    assert_true(list_cost <= 6);
    assert_int_equal(tree_child_count(fs->tree, parts), 400);
    size_t errors = 0;
    char first_error[64] = "";
    for (uint32_t j = 0; j < 400; j++) {
        const char *name = tree_name(fs->tree, tree_child(fs->tree, parts, j));
        char dir[16], err[24];
        snprintf(dir, sizeof dir, "%u", j);
        snprintf(err, sizeof err, "%u.error", j);
        if (strcmp(name, err) == 0 && errors++ == 0)
            snprintf(first_error, sizeof first_error, "/granny/root/Parts/%s", name);
        else if (strcmp(name, dir) != 0 && strcmp(name, err) != 0)
            fail_msg("part %u listed as %s", j, name);
    }
    assert_true(errors > 0 && errors < 400);
    expect_has(fs, first_error, "used in turn with sections that do not fit beside it in the cache_mb bound (1048576 "
                                "bytes), this request expanded again");
    expect_text(fs, "/granny/root/Parts/0/Index", "0\n");
    expect_has(fs, "/info", "refused to a request");
    assert_within_bound(fs);
    s3fs_close(fs);

    struct s3fs_opts big = {.cache_bytes = 4 << 20};
    fs = open_mem(f, size, &big, "Granny file");
    before = productions(fs);
    assert_true(walk_all(fs, 1000000) > 400 * 3);
    assert_int_equal(productions(fs) - before, 3);
    expect_text(fs, "/granny/root/Parts/0/Index", "0\n");
    expect_text(fs, "/granny/root/Parts/399/Index", "399\n");
    expect_text(fs, "/granny/root/Parts/399/Magic", "1414676816\n");
    expect_lacks(fs, "/info", "refused");
    s3fs_close(fs);
    free(f);
    fxg_sections_free(&r);
}

/* ---- one bound for every request and open file ---- */

struct budget_item {
    struct cached c; /* first */
    size_t size;
};

static enum s3_err produce_budget_item(struct cached *c, uint8_t **data, size_t *size, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    struct budget_item *b = (struct budget_item *)c;
    *data = calloc(1, b->size);
    *size = b->size;
    return *data ? S3_OK : S3_ERR_NOMEM;
}

struct budget_run {
    struct cache *c;
    struct budget_item *item;
    pthread_mutex_t *lock;
    pthread_cond_t *all_tried;
    int *tried, nthreads;
    bool pinned;
    char err[256];
    enum s3_err why; /* cache_pin's reason when not pinned */
};

/* Pins its item, waits until every thread has tried (so the pins overlap), unpins. */
static void *pin_then_wait(void *arg)
{
    struct budget_run *r = arg;
    size_t size;
    const uint8_t *d;
    r->why = cache_pin(r->c, &r->item->c, &d, &size, r->err, sizeof r->err);
    r->pinned = r->why == S3_OK;
    pthread_mutex_lock(r->lock);
    if (++*r->tried == r->nthreads)
        pthread_cond_broadcast(r->all_tried);
    while (*r->tried < r->nthreads)
        pthread_cond_wait(r->all_tried, r->lock);
    pthread_mutex_unlock(r->lock);
    if (r->pinned)
        cache_unpin(r->c, &r->item->c);
    return NULL;
}

/* The directory's callback pins an item; refused, it lists nothing (as a view that
 * shows the failure as an .error would list something else): the tree fails it. */
static enum s3_err populate_pinning(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    struct budget_run *r = ctx;
    size_t size;
    const uint8_t *d;
    if (cache_pin(r->c, &r->item->c, &d, &size, r->err, sizeof r->err))
        return S3_OK;
    cache_unpin(r->c, &r->item->c);
    tree_add_textf(t, dir, "pinned", NULL, "%zu\n", size);
    return S3_OK;
}

/* A producer that fails as told (fail: its reason, S3_OK: it makes 8 bytes). */
struct failing_item {
    struct cached c; /* first */
    enum s3_err fail;
    unsigned calls;
};

static enum s3_err produce_failing(struct cached *c, uint8_t **data, size_t *size, char *err, size_t errlen)
{
    struct failing_item *f = (struct failing_item *)c;
    f->calls++;
    if (f->fail)
        return s3_fail(f->fail, err, errlen, "told to fail");
    *data = calloc(1, 8);
    *size = 8;
    return *data ? S3_OK : S3_ERR_NOMEM;
}

/* Issue 31: cache_pin hands on the producer's reason and message, counts the failure,
 * keeps nothing (the next pin produces again), and pins once the producer succeeds. */
static void test_producer_reason(void **state)
{
    (void)state;
    struct cache c;
    cache_init(&c, 100);
    static const enum s3_err reasons[] = {S3_ERR_FORMAT, S3_ERR_NOMEM, S3_ERR_RANGE};
    struct failing_item f = {.c = {.produce = produce_failing}};
    const uint8_t *d;
    size_t size;
    char err[64];
    for (size_t i = 0; i < sizeof reasons / sizeof *reasons; i++) {
        f.fail = reasons[i];
        err[0] = 0;
        assert_int_equal(cache_pin(&c, &f.c, &d, &size, err, sizeof err), reasons[i]);
        assert_string_equal(err, "told to fail");
        assert_int_equal(f.calls, i + 1);
    }
    f.fail = S3_OK;
    assert_int_equal(cache_pin(&c, &f.c, &d, &size, err, sizeof err), S3_OK);
    assert_int_equal(size, 8);
    cache_unpin(&c, &f.c);
    struct cache_stats st;
    cache_stats(&c, &st);
    assert_int_equal(st.failed, 3);
    assert_int_equal(st.produced, 1);
    cache_forget(&c, &f.c);
    cache_destroy(&c);
}

/* A producer of n bytes 0, 1, 2, ... (n <= 256), or of its failure. */
struct counting_item {
    struct cached c; /* first */
    size_t n;
    enum s3_err fail;
};

static enum s3_err produce_counting(struct cached *c, uint8_t **data, size_t *size, char *err, size_t errlen)
{
    struct counting_item *f = (struct counting_item *)c;
    if (f->fail)
        return s3_fail(f->fail, err, errlen, "told to fail");
    if (!(*data = malloc(f->n ? f->n : 1)))
        return S3_ERR_NOMEM;
    for (size_t i = 0; i < f->n; i++)
        (*data)[i] = (uint8_t)i;
    *size = f->n;
    return S3_OK;
}

/* cache_read, every file's read of expanded bytes: the slice asked, clipped at the end and
 * empty past it; bytes of another size than size_must are IO; a production refused
 * memory is NOMEM and any other refusal IO; no pin is left behind either way. */
static void test_cache_read_slices(void **state)
{
    (void)state;
    struct cache c;
    cache_init(&c, 1000);
    struct counting_item f = {.c = {.produce = produce_counting}, .n = 10};
    uint8_t buf[16];
    size_t got = 99;
    assert_int_equal(cache_read(&c, &f.c, CACHE_ANY_SIZE, 3, buf, 4, &got), S3_OK);
    assert_int_equal(got, 4);
    assert_memory_equal(buf, ((uint8_t[]){3, 4, 5, 6}), 4);
    assert_int_equal(cache_read(&c, &f.c, 10, 8, buf, 4, &got), S3_OK); /* the end */
    assert_int_equal(got, 2);
    assert_memory_equal(buf, ((uint8_t[]){8, 9}), 2);
    got = 99;
    assert_int_equal(cache_read(&c, &f.c, CACHE_ANY_SIZE, 10, buf, 4, &got), S3_OK);
    assert_int_equal(got, 0);
    got = 99;
    assert_int_equal(cache_read(&c, &f.c, CACHE_ANY_SIZE, UINT64_MAX, buf, 4, &got), S3_OK);
    assert_int_equal(got, 0);
    assert_int_equal(cache_read(&c, &f.c, 11, 0, buf, 4, &got), S3_ERR_IO); /* sized 11 when listed */
    assert_int_equal(f.c.pins, 0);
    cache_forget(&c, &f.c);
    static const struct {
        enum s3_err produced, read;
    } refusals[] = {{S3_ERR_NOMEM, S3_ERR_NOMEM}, {S3_ERR_FORMAT, S3_ERR_IO}, {S3_ERR_LIMIT, S3_ERR_IO},
                    {S3_ERR_RANGE, S3_ERR_IO}};
    for (size_t i = 0; i < sizeof refusals / sizeof *refusals; i++) {
        f.fail = refusals[i].produced;
        assert_int_equal(cache_read(&c, &f.c, CACHE_ANY_SIZE, 0, buf, 4, &got), refusals[i].read);
        assert_int_equal(f.c.pins, 0);
    }
    f.fail = S3_OK; /* nothing of a refusal is kept: the next read produces */
    assert_int_equal(cache_read(&c, &f.c, CACHE_ANY_SIZE, 0, buf, 16, &got), S3_OK);
    assert_int_equal(got, 10);
    assert_int_equal(buf[9], 9);
    cache_forget(&c, &f.c);
    cache_destroy(&c);
}

/* cache_mb is one bound: four threads each pin an item of 60 bytes under a bound of 100
 * at once, and only one holds its item, the others are refused saying why (never 240
 * bytes held); an open file's hold counts as well: beside a held 60-byte item a request
 * cannot pin another, and a listing that is refused fails (ENOMEM) rather than list
 * what it could, then lists whole once the file is closed. Counted, never timed. */
static void test_budget_is_global(void **state)
{
    (void)state;
    struct cache c;
    cache_init(&c, 100);
    struct budget_item items[4];
    for (int i = 0; i < 4; i++)
        items[i] = (struct budget_item){.c = {.produce = produce_budget_item, .hint = 60}, .size = 60};
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t all_tried = PTHREAD_COND_INITIALIZER;
    int tried = 0;
    struct budget_run r[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        r[i] = (struct budget_run){&c, &items[i], &lock, &all_tried, &tried, 4, false, "", S3_OK};
        assert_int_equal(pthread_create(&th[i], NULL, pin_then_wait, &r[i]), 0);
    }
    int pinned = 0;
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        if (r[i].pinned)
            pinned++;
        else if (r[i].why != S3_ERR_LIMIT || !strstr(r[i].err, "cache_mb") || !strstr(r[i].err, "do not fit beside"))
            fail_msg("refused without saying why (%s): %s", s3_err_str(r[i].why), r[i].err);
    }
    struct cache_stats st;
    cache_stats(&c, &st);
    assert_int_equal(pinned, 1);
    assert_int_equal(st.refused, 3);
    assert_true(st.peak <= 100);

    /* an open file holds item 0 (read once: 60 bytes held) */
    size_t size;
    char err[256];
    const uint8_t *d;
    cache_hold_handle(&c, &items[0].c);
    assert_int_equal(cache_pin(&c, &items[0].c, &d, &size, err, sizeof err), S3_OK);
    assert_non_null(d);
    cache_unpin(&c, &items[0].c);
    assert_int_equal(cache_pin(&c, &items[1].c, &d, &size, err, sizeof err), S3_ERR_LIMIT); /* cache_mb */
    struct source src;
    source_mem(&src, "x", 1);
    struct tree *t = tree_new(&src, NULL);
    uint32_t root = tree_add_dir(t, 0, "", NULL, NULL, NULL, 0);
    struct budget_run lr = {&c, &items[1], NULL, NULL, NULL, 0, false, "", S3_OK};
    uint32_t dir = tree_add_dir(t, root, "d", NULL, populate_pinning, &lr, 0);
    assert_int_equal(tree_populate(t, root), 0);
    assert_int_equal(tree_populate(t, dir), S3_ERR_NOMEM);
    assert_int_equal(tree_child_count(t, dir), 0);
    cache_stats(&c, &st);
    assert_true(st.peak <= 100);
    cache_release_handle(&c, &items[0].c); /* closed: item 0 may go */
    assert_int_equal(tree_populate(t, dir), 0);
    assert_int_equal(tree_child_count(t, dir), 1);
    cache_stats(&c, &st);
    assert_true(st.peak <= 100);
    assert_int_equal(st.refused, 5);
    tree_free(t);
    cache_destroy(&c);
}

/* ---- exports: built as they were sized ---- */

/* model.glb and animation.glb of a Granny file with an animation: the refusal of one
 * section fetch (each in turn, gr2_view_test_refuse_fetch) while the file's directory is
 * listed and the file sized, or while it is built. A file sized without a section (its animations) is built
 * without it too: it reads exactly its stat size, a glb of that length, never EIO; one
 * sized with everything reads the clean bytes, at once or (refused while built) at the
 * next read. No build is ever cached with another size. */
static void built_as_sized(const uint8_t *f, size_t size, const char *path, unsigned *sized_without_out,
                           unsigned *built_without_out)
{
    struct s3fs *fs = open_mem(f, size, NULL, "Granny file");
    size_t clean_len;
    uint8_t *clean = read_path(fs, path, &clean_len);
    s3fs_close(fs);
    uint64_t mismatches = export_size_mismatches();
    unsigned sized_without = 0, built_without = 0;
    for (uint64_t k = 1;; k++) { /* refused while listing and sizing */
        fs = open_mem(f, size, NULL, "Granny file");
        gr2_view_test_refuse_fetch(k);
        uint32_t ino;
        enum s3_err found = tree_resolve(fs->tree, path, &ino);
        bool fired = gr2_view_test_refuse_fetch(0) == 0;
        if (found) { /* the refusal made the model itself an .error */
            assert_true(fired);
            assert_int_equal(found, S3_ERR_NOT_FOUND);
            s3fs_close(fs);
            continue;
        }
        uint64_t stat_size = tree_size(fs->tree, ino);
        uint8_t *got;
        size_t len;
        if (tree_read_all(fs->tree, ino, &got, &len))
            fail_msg("k=%" PRIu64 ": %s (sized %" PRIu64 ") does not read", k, path, stat_size);
        assert_int_equal(len, stat_size);
        if (stat_size == clean_len) {
            assert_memory_equal(got, clean, len);
        } else {
            sized_without++;
            assert_true(stat_size < clean_len);
            assert_true(len >= 12 && memcmp(got, "glTF", 4) == 0);
            assert_int_equal(got[8] | got[9] << 8 | got[10] << 16 | (uint32_t)got[11] << 24, len);
        }
        free(got);
        s3fs_close(fs);
        if (!fired)
            break; /* past the last fetch of the listing */
    }
    for (uint64_t k = 1;; k++) { /* refused while building */
        fs = open_mem(f, size, NULL, "Granny file");
        uint32_t ino;
        assert_int_equal(tree_resolve(fs->tree, path, &ino), 0);
        gr2_view_test_refuse_fetch(k);
        uint8_t *got;
        size_t len;
        enum s3_err rc = tree_read_all(fs->tree, ino, &got, &len);
        bool fired = gr2_view_test_refuse_fetch(0) == 0;
        if (rc) {
            assert_int_equal(rc, S3_ERR_IO); /* refused what it was sized with: read again */
            built_without++;
            assert_int_equal(tree_read_all(fs->tree, ino, &got, &len), 0);
        }
        assert_int_equal(len, clean_len);
        assert_memory_equal(got, clean, len);
        free(got);
        s3fs_close(fs);
        if (!fired)
            break;
    }
    print_message("%s: %u runs sized it without a section (and built it so), %u builds refused one "
                  "and were made again\n", path, sized_without, built_without);
    assert_int_equal(export_size_mismatches(), mismatches);
    free(clean);
    *sized_without_out = sized_without;
    *built_without_out = built_without;
}

static void test_exports_built_as_sized(void **state)
{
    (void)state;
    size_t size; /* a real file: its model, meshes and animation lie in sections of their own */
    uint8_t *f = slurp_vector(vectors_or_skip(), "gr2", "suzanne_le.gr2", &size);
    assert_non_null(f);
    unsigned sized_without, built_without;
    built_as_sized(f, size, "/granny/root/Models/0/model.glb", &sized_without, &built_without);
    assert_true(sized_without > 0 && built_without > 0); /* both cases were reached */
    built_as_sized(f, size, "/granny/root/Animations/0/animation.glb", &sized_without, &built_without);
    assert_true(built_without > 0);
    free(f);
}

/* ---- exports: sized without building ---- */

/* Lists dir, then stats and reads each file named: listing builds nothing (the sizes are
 * measured), each file is built once by its read-through (with a handle), its bytes as
 * many as the listing said, and a second read-through with a cache that kept it builds
 * nothing more. */
static void check_exports_built_on_read(struct s3fs *fs, const char *dir, const char *const *names, size_t n)
{
    uint64_t before = export_builds();
    uint32_t d = ino_of(fs, dir);
    assert_int_equal(tree_populate(fs->tree, d), 0);
    assert_int_equal(export_builds(), before);
    for (size_t i = 0; i < n; i++) {
        char path[300];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        uint32_t ino = ino_of(fs, path);
        uint64_t size = tree_size(fs->tree, ino);
        assert_true(size > 0);
        assert_int_equal(export_builds(), before + i);
        struct tree_hold *h = tree_hold(fs->tree, ino);
        assert_non_null(h);
        uint8_t *buf = malloc(size);
        for (uint64_t off = 0; off < size;) {
            ssize_t k = (ssize_t)tree_read_ok(fs->tree, ino, off, buf + off, 4096);
            assert_true(k > 0);
            off += (uint64_t)k;
        }
        assert_int_equal(tree_read_ok(fs->tree, ino, size, buf, 1), 0); /* the listed size is exact */
        tree_release(h);
        assert_int_equal(export_builds(), before + i + 1);
        uint8_t *again;
        size_t len;
        assert_int_equal(tree_read_all(fs->tree, ino, &again, &len), 0);
        assert_int_equal(len, size);
        assert_memory_equal(again, buf, size);
        assert_int_equal(export_builds(), before + i + 1); /* kept by the cache */
        free(again);
        free(buf);
    }
}

/* A Granny model's model.glb and its skeleton's skeleton.glb; a Turok 1 object's
 * model.glb and model.obj (one decode sizes both). */
static void test_exports_sized_without_building(void **state)
{
    (void)state;
    struct fxm_opts mo = {.sig = "le32"};
    size_t size;
    uint8_t *f = fxm_build(&mo, &size);
    struct s3fs *fs = open_mem(f, size, NULL, "Granny model");
    static const char *const model[] = {"model.glb"}, *const skeleton[] = {"skeleton.glb"};
    check_exports_built_on_read(fs, "/granny/root/Models/0", model, 1);
    check_exports_built_on_read(fs, "/granny/root/Skeletons/0", skeleton, 1);
    s3fs_close(fs);
    free(f);
    struct fxt *root = fxt_t1_sample(false);
    f = fxt_write(root, false, 0, 0, &size);
    fs = open_mem(f, size, NULL, "Turok 1 file");
    static const char *const t1[] = {"model.glb", "model.obj"};
    check_exports_built_on_read(fs, "/models/0", t1, 2);
    s3fs_close(fs);
    free(f);
    fxt_free(root);
}

/* A package's GEOM resource bound to the package's rig: its mesh.glb and mesh.obj. A
 * Granny file with a skinned model and an animation: animation.glb, and model.glb, which
 * carries the animation (its measure runs the animation exporter too). */
static void test_new_exports_sized_without_building(void **state)
{
    (void)state;
    struct fxp_sample s;
    fxp_sample(&s, 6);
    struct s3fs *fs = open_mem(s.file, s.size, NULL, "package");
    uint32_t res = ino_of(fs, "/resources"), found = 0;
    static const char *const mesh[] = {"mesh.glb", "mesh.obj"};
    assert_int_equal(tree_populate(fs->tree, res), 0);
    for (uint32_t i = 0; i < tree_child_count(fs->tree, res); i++) {
        char dir[400];
        uint32_t ino;
        snprintf(dir, sizeof dir, "/resources/%s/geom", tree_name(fs->tree, tree_child(fs->tree, res, i)));
        if (tree_resolve(fs->tree, dir, &ino) || tree_kind(fs->tree, ino) != NODE_DIR)
            continue;
        check_exports_built_on_read(fs, dir, mesh, 2);
        found++;
    }
    assert_true(found >= 2); /* the mesh the rig covers and the custom one */
    s3fs_close(fs);
    fxp_sample_free(&s);
    size_t size;
    uint8_t *f = fxa_build_demo(&size);
    fs = open_mem(f, size, NULL, "Granny animation");
    static const char *const anim[] = {"animation.glb"}, *const model[] = {"model.glb"};
    check_exports_built_on_read(fs, "/granny/root/Animations/0", anim, 1);
    check_exports_built_on_read(fs, "/granny/root/Models/0", model, 1);
    s3fs_close(fs);
    free(f);
}

/* ---- settle points: no pointer into section bytes kept across one ---- */

/* The tree of a Granny-bearing file under cache_mb=1, walked twice: as served, and with
 * every idle section let go and its bytes dropped at each settle point (the object walk,
 * members, elements, meshes, animations and tracks). The two trees are the same, every
 * file reads its stat size, and sections were dropped (under ASan, a pointer kept across
 * a settle point reads freed bytes). */
static void eager_walk(const uint8_t *file, size_t size, const char *what)
{
    struct s3fs_opts o = {.cache_bytes = 1 << 20};
    struct s3fs *fs = open_mem(file, size, &o, what);
    uint64_t plain, eager;
    size_t nplain, neager;
    assert_int_equal(walk_digest(fs->tree, fs->root, &plain, &nplain), 0);
    s3fs_close(fs);
    gr2_view_test_eager_settle(true);
    uint64_t drops = gr2_view_test_eager_drops();
    fs = open_mem(file, size, &o, what);
    size_t walked = walk_all(fs, 2000000);
    s3fs_close(fs);
    fs = open_mem(file, size, &o, what);
    int rc = walk_digest(fs->tree, fs->root, &eager, &neager);
    s3fs_close(fs);
    drops = gr2_view_test_eager_drops() - drops;
    gr2_view_test_eager_settle(false);
    print_message("%-28s %7zu nodes, %6llu sections dropped at settle points\n", what, walked,
                  (unsigned long long)drops);
    assert_int_equal(rc, 0);
    assert_int_equal(neager, nplain);
    assert_true(eager == plain);
    assert_true(drops > 0);
}

static void test_eager_settle_fixtures(void **state)
{
    (void)state;
    static const char *const kinds[] = {
        "rig", "gr2obj-le32-v7", "gr2obj-be32-old-v6", "bk2obj-be64-v7", "gr2-oodle0", "gr2-remapped",
        "gr2model-le32", "gr2model-be64-alt", "gr2model-le64-rough", "gr2anim-le32", "gr2anim-be64-crc-bk2",
        "gr2anim-le32-old", "gr2anim-le64-shear", "gr2anim-be32-noskel", "gr2anim-le32-crc", "gr2anim-demo",
        "package-s4-rigs", NULL};
    for (size_t i = 0; kinds[i]; i++) {
        size_t size;
        uint8_t *f = fx_kind(kinds[i], 0, NULL, &size);
        assert_non_null(f);
        eager_walk(f, size, kinds[i]);
        free(f);
    }
    static char *const big[] = {"4096", "100", "20"}, *const long_anim[] = {"6", "2", "10"},
                       *const members[] = {"300", "same"}, *const repeated[] = {"400", "1000"};
    static const struct {
        const char *kind;
        char *const *args;
    } with_args[] = {{"gr2-big", big}, {"gr2anim-long", long_anim}, {"gr2-members", members},
                     {"gr2-repeated-string", repeated}};
    for (size_t i = 0; i < sizeof with_args / sizeof with_args[0]; i++) {
        size_t size;
        int nargs = with_args[i].args == members || with_args[i].args == repeated ? 2 : 3;
        uint8_t *f = fx_kind(with_args[i].kind, nargs, with_args[i].args, &size);
        assert_non_null(f);
        eager_walk(f, size, with_args[i].kind);
        free(f);
    }
}

static void eager_vector(const char *dir, const char *name)
{
    size_t size;
    uint8_t *f = slurp_vector(dir, "gr2", name, &size);
    assert_non_null(f);
    eager_walk(f, size, name);
    free(f);
}

static void test_eager_settle_vectors(void **state)
{
    (void)state;
    each_gr2_vector(eager_vector);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_production_outside_lock),
        cmocka_unit_test(test_cache_read_slices),
        cmocka_unit_test(test_package_resource_once),
        cmocka_unit_test(test_granny_section_once),
        cmocka_unit_test(test_rnc_node_once),
        cmocka_unit_test(test_nested_once),
        cmocka_unit_test(test_many_sections_bounded),
        cmocka_unit_test(test_section_over_bound), cmocka_unit_test(test_sections_in_turn),
        cmocka_unit_test(test_exports_sized_without_building),
        cmocka_unit_test(test_exports_built_as_sized),
        cmocka_unit_test(test_budget_is_global),
        cmocka_unit_test(test_producer_reason),
        cmocka_unit_test(test_new_exports_sized_without_building),
        cmocka_unit_test(test_eager_settle_fixtures),
        cmocka_unit_test(test_eager_settle_vectors),
    };
    return cmocka_run_group_tests_name("cache", tests, NULL, NULL);
}
