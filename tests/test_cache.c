/* The bounded cache of expanded bytes under parallel requests and hostile sizes, through
 * the views that use it: productions outside the cache lock (a big expansion stalls no
 * other item). Everything is counted (productions, waits, bytes held), never timed. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "fixture_dbpf.h"
#include "fs/open.h"
#include "testutil.h"

/* Bytes that compress a little (zlib has work to do), different per seed. */
static uint8_t *pattern(size_t n, uint32_t seed)
{
    uint8_t *b = malloc(n);
    uint32_t x = seed;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        b[i] = (i & 3) ? (uint8_t)(x >> 24) : (uint8_t)("expanded"[i % 8]);
    }
    return b;
}

/* A package of zlib resources of the given sizes (instances 1, 2, ...); their data.bin
 * paths into paths[i]. */
struct pkg {
    struct fxp_res r[8];
    uint8_t *data[8];
    size_t n;
    uint8_t *file;
    size_t size;
    char paths[8][300];
};

static void pkg_build(struct pkg *p, const size_t *sizes, size_t n)
{
    memset(p, 0, sizeof *p);
    p->n = n;
    for (size_t i = 0; i < n; i++) {
        p->data[i] = pattern(sizes[i], 7 + (uint32_t)i);
        p->r[i] = (struct fxp_res){0x00B2D882, 0, i + 1, p->data[i], sizes[i], FXP_ZLIB};
        char name[200];
        fxp_expected_name(name, sizeof name, 4, &p->r[i], NULL, 0);
        snprintf(p->paths[i], sizeof p->paths[i], "/resources/%s/data.bin", name);
    }
    struct fxp_opts o = {.game = 4};
    struct fxp_layout lay;
    p->file = fxp_build(&o, p->r, n, &p->size, &lay);
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
        ssize_t k = tree_read(fs->tree, ino, off, buf, chunk);
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
    static const size_t sizes[] = {3 << 20, 40000, 70000, 100000};
    struct pkg p;
    pkg_build(&p, sizes, 4);
    struct s3fs_opts o = {.cache_bytes = 1024}; /* keeps nothing: every read expands */
    struct s3fs *fs = open_mem(p.file, p.size, &o, "package");
    for (size_t i = 0; i < p.n; i++)
        ino_of(fs, p.paths[i]); /* listed (and expanded, to know they expand) */
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_production_outside_lock),
    };
    return cmocka_run_group_tests_name("cache", tests, NULL, NULL);
}
