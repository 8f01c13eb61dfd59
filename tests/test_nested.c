/* A view opened over any byte source, nested at a directory of another view's tree: the
 * sample RIG over a memory buffer, over a slice of a larger file, and over expanded
 * bytes held by the bounded cache, each compared node by node with the RIG opened alone
 * (paths, sizes, contents, link targets, xattrs: offsets relative to the source). */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "fixture.h"
#include "fixture_dbpf.h"
#include "fixture_kinds.h"
#include "fs/open/open.h"
#include "tree_compare.h"
#include "testutil.h"
#include "walk.h"

struct host {
    char path[64];
    uint8_t *rig, *gr2;
    size_t rig_size, gr2_size;
    uint64_t rig_at; /* where the rig lies in the host file */
    struct s3fs *fs;
};

/* A host file: a sample GR2, 13 bytes of filler, the sample RIG, 7 trailing bytes. */
static void host_open(struct host *h)
{
    struct fx_rig_layout rl;
    struct fx_gr2_layout gl;
    h->rig = fx_sample_rig(&h->rig_size, &rl, &gl, NULL);
    h->gr2 = fx_sample_gr2("le32", 7, &h->gr2_size, &gl);
    assert_non_null(h->rig);
    assert_non_null(h->gr2);
    size_t total = h->gr2_size + 13 + h->rig_size + 7;
    uint8_t *f = malloc(total);
    memcpy(f, h->gr2, h->gr2_size);
    memset(f + h->gr2_size, 0xEE, 13);
    h->rig_at = h->gr2_size + 13;
    memcpy(f + h->rig_at, h->rig, h->rig_size);
    memset(f + h->rig_at + h->rig_size, 0xDD, 7);
    snprintf(h->path, sizeof h->path, "/tmp/s3rig-nested-XXXXXX");
    int fd = mkstemp(h->path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(fx_write_file(h->path, f, total), 0);
    free(f);
    char err[256];
    assert_int_equal(s3fs_open(&h->fs, h->path, NULL, err, sizeof err), S3_OK);
    /* the root stays unlisted: nest() adds to it, and a published directory takes no child */
}

static void host_close(struct host *h)
{
    s3fs_close(h->fs);
    unlink(h->path);
    free(h->rig);
    free(h->gr2);
}

static uint32_t nest(struct host *h, const char *name, const struct source *src, const char *origin)
{
    uint32_t dir = tree_add_dir(h->fs->tree, TREE_ROOT, name, NULL, NULL, NULL, 0);
    assert_true(dir != 0);
    struct s3fs *n;
    char err[256];
    assert_int_equal(s3fs_open_at(h->fs, dir, src, origin, 0, &n, err, sizeof err), S3_OK);
    assert_true(n->nested);
    assert_int_equal(n->det.format, FMT_RIG_WRAPPED);
    return dir;
}

static void assert_info_says(struct tree *t, uint32_t dir, const char *needle)
{
    uint32_t ino;
    assert_int_equal(tree_lookup(t, dir, "info", &ino), 0);
    uint8_t *b;
    size_t len;
    assert_int_equal(tree_read_all(t, ino, &b, &len), 0);
    b = realloc(b, len + 1);
    b[len] = 0;
    if (!strstr((char *)b, needle))
        fail_msg("info lacks '%s':\n%s", needle, b);
    free(b);
}

static void test_rig_over_memory_and_slice(void **state)
{
    (void)state;
    struct host h;
    host_open(&h);
    struct snap alone = {0}, in_mem = {0}, in_slice = {0};
    snap_file_alone(&alone, h.rig, h.rig_size);
    assert_true(alone.n > 100); /* the whole sample rig: header, granny tree, chains, lists */

    struct source m, sl;
    source_mem(&m, h.rig, h.rig_size);
    source_slice(&sl, &h.fs->src, h.rig_at, h.rig_size);
    char origin[128];
    snprintf(origin, sizeof origin, "bytes %llu-%llu of the file", (unsigned long long)h.rig_at,
             (unsigned long long)(h.rig_at + h.rig_size));
    uint32_t dm = nest(&h, "mem", &m, "memory");
    uint32_t ds = nest(&h, "slice", &sl, origin);
    snap_tree(&in_mem, h.fs->tree, dm);
    snap_tree(&in_slice, h.fs->tree, ds);
    snap_assert_equal(&alone, &in_mem);
    snap_assert_equal(&alone, &in_slice);

    /* offsets are the rig's own: header.bin at 0, granny.gr2 where the wrapper says */
    const struct snap_entry *hb = snap_find(&in_slice, "header.bin");
    assert_non_null(hb);
    assert_string_equal(hb->offset, "0");
    assert_int_equal(hb->dlen, 52);
    assert_memory_equal(hb->data, h.rig, 52);
    /* each view has its own /info: the nested ones say where their bytes are */
    assert_info_says(h.fs->tree, ds, "format: wrapped-rig\n");
    assert_info_says(h.fs->tree, ds, origin);
    assert_info_says(h.fs->tree, dm, "source: memory\n");
    assert_info_says(h.fs->tree, TREE_ROOT, "format: gr2\n");
    /* the host's own tree is unchanged beside them */
    uint32_t g;
    assert_int_equal(tree_lookup(h.fs->tree, TREE_ROOT, "granny.gr2", &g), 0);
    assert_int_equal(tree_size(h.fs->tree, g), h.gr2_size);

    /* a slice of the mounted file is EIO once the file changes, as the file itself is */
    uint32_t hbi;
    assert_int_equal(tree_lookup(h.fs->tree, ds, "header.bin", &hbi), 0);
    char buf[52];
    assert_int_equal(tree_read_ok(h.fs->tree, hbi, 0, buf, sizeof buf), 52);
    assert_int_equal(truncate(h.path, (off_t)h.rig_at), 0);
    size_t got = 0;
    assert_int_equal(tree_read(h.fs->tree, hbi, 0, buf, sizeof buf, &got), S3_ERR_IO);
    /* slices of the file keep the zero-copy path: their position in the file */
    int fd;
    uint64_t pos;
    assert_int_equal(source_file_pos(tree_node_source(h.fs->tree, hbi), 10, &fd, &pos), 0);
    assert_int_equal(pos, h.rig_at + 10);
    assert_int_equal(fd, h.fs->src.fd);
    /* memory is not the file: still readable */
    assert_int_equal(tree_lookup(h.fs->tree, dm, "header.bin", &hbi), 0);
    assert_int_equal(tree_read_ok(h.fs->tree, hbi, 0, buf, sizeof buf), 52);

    snap_free(&alone);
    snap_free(&in_mem);
    snap_free(&in_slice);
    host_close(&h);
}

/* Expanded bytes: a cache item whose producer copies the rig (as a codec would expand
 * it); once dropped from the cache it is produced again on the next read. (Not a cache
 * too small for the rig: the Granny object tree keeps member names pointing into section
 * bytes after unpinning them, so a cache that evicts sections mid-walk is a use after
 * free in view_gr2obj.c, reported, not fixed here.) */
struct fake_expanded {
    struct cached c; /* first */
    const uint8_t *bytes;
    size_t size;
    unsigned produced;
};

static enum s3_err produce_copy(struct cached *c, uint8_t **data, size_t *size, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    struct fake_expanded *f = (struct fake_expanded *)c;
    *data = malloc(f->size);
    if (!*data)
        return S3_ERR_NOMEM;
    memcpy(*data, f->bytes, f->size);
    *size = f->size;
    f->produced++;
    return S3_OK;
}

static void test_rig_over_expanded_bytes(void **state)
{
    (void)state;
    struct fx_rig_layout rl;
    struct fx_gr2_layout gl;
    size_t rig_size, gsize;
    uint8_t *rig = fx_sample_rig(&rig_size, &rl, &gl, NULL);
    uint8_t *gr2 = fx_sample_gr2("le32", 7, &gsize, &gl);
    struct s3fs *host = open_mem(gr2, gsize, NULL, NULL);
    /* the root stays unlisted: a published directory takes no child */
    struct fake_expanded f = {.c = {.produce = produce_copy}, .bytes = rig, .size = rig_size};
    struct source x;
    source_expanded(&x, &host->src, &host->cache, &f.c, rig_size);
    uint32_t dir = tree_add_dir(host->tree, TREE_ROOT, "x", NULL, NULL, NULL, 0);
    struct s3fs *n;
    char err[256];
    assert_int_equal(s3fs_open_at(host, dir, &x, "expanded", 0, &n, err, sizeof err), S3_OK);
    struct snap alone = {0}, nested = {0};
    snap_file_alone(&alone, rig, rig_size);
    snap_tree(&nested, host->tree, dir);
    snap_assert_equal(&alone, &nested);
    assert_int_equal(f.produced, 1);
    /* dropped (as eviction does): the next read expands it again, same bytes */
    cache_forget(&host->cache, &f.c);
    uint32_t hb;
    assert_int_equal(tree_lookup(host->tree, dir, "header.bin", &hb), 0);
    char buf[52];
    assert_int_equal(tree_read_ok(host->tree, hb, 0, buf, sizeof buf), 52);
    assert_memory_equal(buf, rig, 52);
    assert_int_equal(f.produced, 2);
    /* the rig's own ranges are not file ranges: no zero-copy path for them */
    int fd;
    uint64_t pos;
    assert_int_equal(source_file_pos(tree_node_source(host->tree, hb), 0, &fd, &pos), -1);
    snap_free(&alone);
    snap_free(&nested);
    s3fs_close(host);
    free(rig);
    free(gr2);
}

/* Only the formats a host accepts are opened (a package opens rigs and Granny files). */
static void test_nested_format_mask(void **state)
{
    (void)state;
    struct host h;
    host_open(&h);
    struct source m;
    source_mem(&m, h.rig, h.rig_size);
    uint32_t dir = tree_add_dir(h.fs->tree, TREE_ROOT, "only_gr2", NULL, NULL, NULL, 0);
    struct s3fs *n;
    char err[256];
    assert_open_refused(s3fs_open_at(h.fs, dir, &m, "", 1u << FMT_GR2, &n, err, sizeof err), S3_ERR_FORMAT, S3_EXIT_FORMAT);
    assert_null(n);
    assert_non_null(strstr(err, "wrapped-rig"));
    host_close(&h);
}

/* ---- parallel requests ---- */

#define PAR_LISTERS 4
#define PAR_READERS 4

struct par_work {
    struct s3fs *fs;
    /* listers: fresh rig/ directories, taken from=k, k + PAR_LISTERS, ... */
    const uint32_t *dirs;
    size_t ndirs, from;
    uint64_t want; /* the digest of the rig opened alone */
    size_t want_nodes;
    /* readers: files of rigs populated before, and their bytes as read serially */
    const uint32_t *files;
    uint8_t *const *bytes;
    const size_t *len;
    size_t nfiles;
    unsigned seed;
    int mismatches, errors;
};

static void *par_lister(void *p)
{
    struct par_work *w = p;
    for (size_t i = w->from; i < w->ndirs; i += PAR_LISTERS) {
        uint64_t d;
        size_t nodes;
        if (walk_digest(w->fs->tree, w->dirs[i], &d, &nodes))
            w->errors++;
        else if (d != w->want || nodes != w->want_nodes)
            w->mismatches++;
    }
    return NULL;
}

static void *par_reader(void *p)
{
    struct par_work *w = p;
    uint8_t buf[4096];
    for (int it = 0; it < 4000; it++) {
        size_t i = rand_r(&w->seed) % w->nfiles;
        if (w->len[i] == 0)
            continue;
        size_t off = rand_r(&w->seed) % w->len[i], n = 1 + rand_r(&w->seed) % (w->len[i] - off);
        n = n < sizeof buf ? n : sizeof buf;
        size_t k = 0;
        if (tree_read(w->fs->tree, w->files[i], off, buf, n, &k) || k != n || memcmp(buf, w->bytes[i] + off, n) != 0)
            w->mismatches++;
    }
    return NULL;
}

/* Collects every file below dir (its number, and its bytes read serially). */
static void collect_files(struct tree *t, uint32_t dir, uint32_t *files, uint8_t **bytes, size_t *len,
                          size_t *n, size_t cap)
{
    assert_int_equal(tree_populate(t, dir), 0);
    for (uint32_t i = 0; i < tree_child_count(t, dir) && *n < cap; i++) {
        uint32_t c = tree_child(t, dir, i);
        if (tree_kind(t, c) == NODE_DIR) {
            collect_files(t, c, files, bytes, len, n, cap);
        } else if (tree_kind(t, c) == NODE_FILE && !tree_is_volatile(t, c)) {
            files[*n] = c;
            assert_int_equal(tree_read_all(t, c, &bytes[*n], &len[*n]), 0);
            (*n)++;
        }
    }
}

/* A package of 2,000 resources, a wrapped rig every 10th (the case that showed the race
 * on the source table): threads list fresh rig/ directories (each a nested open, with
 * its Granny object tree) through tree_populate, tree_lookup and tree_read, while other
 * threads read files of rigs listed before (byte ranges of nested sources, expanded
 * data). Every listing equals the rig opened alone, every read equals the serial read.
 * ThreadSanitizer runs it (scripts/tsan.sh). */
static void test_parallel_nested_opens(void **state)
{
    (void)state;
    size_t size, rig_size;
    uint8_t *pkg = fxp_build_big(2000, 4, 10, &size);
    struct fx_rig_layout rl;
    struct fx_gr2_layout gl;
    uint8_t *rig = fx_sample_rig(&rig_size, &rl, &gl, NULL);
    struct s3fs *alone = open_mem(rig, rig_size, NULL, "the rig alone");
    uint64_t want;
    size_t want_nodes;
    assert_int_equal(walk_digest(alone->tree, TREE_ROOT, &want, &want_nodes), 0);
    assert_true(want_nodes > 100);
    s3fs_close(alone);

    struct s3fs *fs = open_mem(pkg, size, NULL, "the package");
    struct tree *t = fs->tree;
    uint32_t res;
    assert_int_equal(tree_resolve(t, "/resources", &res), 0);
    assert_int_equal(tree_populate(t, res), 0);
    assert_int_equal(tree_child_count(t, res), 2000);
    static uint32_t dirs[200], files[8192];
    static uint8_t *bytes[8192];
    static size_t len[8192];
    size_t ndirs = 0, nfiles = 0;
    for (uint32_t i = 0; i < tree_child_count(t, res); i++) {
        uint32_t r = tree_child(t, res, i), rigdir, data;
        assert_int_equal(tree_lookup(t, r, "data.bin", &data), 0);
        if (tree_lookup(t, r, "rig", &rigdir) != 0) {
            if (nfiles < 64) { /* expanded resources */
                files[nfiles] = data;
                assert_int_equal(tree_read_all(t, data, &bytes[nfiles], &len[nfiles]), 0);
                nfiles++;
            }
            continue;
        }
        assert_true(ndirs < 200);
        dirs[ndirs++] = rigdir;
    }
    assert_int_equal(ndirs, 200);
    /* the first 8 rigs listed serially: their files are what the readers read */
    for (size_t i = 0; i < 8; i++)
        collect_files(t, dirs[i], files, bytes, len, &nfiles, 8192);
    assert_true(nfiles > 200);
    pthread_t th[PAR_LISTERS + PAR_READERS];
    struct par_work w[PAR_LISTERS + PAR_READERS];
    for (int k = 0; k < PAR_LISTERS + PAR_READERS; k++) {
        w[k] = (struct par_work){fs, dirs + 8, ndirs - 8, (size_t)k, want, want_nodes, files, bytes, len, nfiles,
                                 (unsigned)k * 7919u + 3, 0, 0};
        assert_int_equal(pthread_create(&th[k], NULL, k < PAR_LISTERS ? par_lister : par_reader, &w[k]), 0);
    }
    for (int k = 0; k < PAR_LISTERS + PAR_READERS; k++) {
        pthread_join(th[k], NULL);
        if (w[k].errors || w[k].mismatches)
            fail_msg("%s %d: %d errors, %d mismatches", k < PAR_LISTERS ? "lister" : "reader", k, w[k].errors,
                     w[k].mismatches);
    }
    /* every rig/ was listed once, by one thread, and is what the serial walk gives */
    for (size_t i = 0; i < ndirs; i++) {
        uint64_t d;
        size_t nodes;
        assert_true(tree_is_populated(t, dirs[i]));
        assert_int_equal(walk_digest(t, dirs[i], &d, &nodes), 0);
        assert_true(d == want);
    }
    for (size_t i = 0; i < nfiles; i++)
        free(bytes[i]);
    s3fs_close(fs);
    free(rig);
    free(pkg);
}

/* Past TREE_MAX_SOURCES views in one mount a nested open fails saying which limit it hit,
 * not "out of memory": the source table is filled to its last slot, then a rig is opened
 * at a directory. */
static void test_nested_view_limit(void **state)
{
    (void)state;
    struct host h;
    host_open(&h);
    struct tree *t = h.fs->tree;
    uint32_t dir = tree_add_dir(t, TREE_ROOT, "last", NULL, NULL, NULL, 0);
    assert_true(dir != 0);
    struct source m;
    source_mem(&m, h.rig, h.rig_size);
    uint32_t id, added = 0;
    enum s3_err rc;
    while ((rc = tree_add_source(t, &m, &id)) == S3_OK)
        added++;
    assert_int_equal(rc, S3_ERR_LIMIT);
    assert_int_equal(added + 1, TREE_MAX_SOURCES); /* and the file's own */
    struct s3fs *n;
    char err[256];
    assert_int_not_equal(s3fs_open_at(h.fs, dir, &m, "memory", 0, &n, err, sizeof err), S3_OK);
    if (!strstr(err, "65535 nested views") || strstr(err, "out of memory"))
        fail_msg("the error does not name the limit: %s", err);
    host_close(&h);
}

/* No fn twice in a hook list (the views of one kind share one hook). */
static void assert_each_once(const struct view_hooks *list, const char *what)
{
    for (const struct view_hook *a = list->first; a; a = a->next)
        for (const struct view_hook *b = a->next; b; b = b->next)
            if (a->fn == b->fn)
                fail_msg("%s: a hook added twice", what);
}

/* A package's nested views (two Granny views: a wrapped RIG's and a Granny file's, a
 * clear RIG, GEOMs) add the -o rw hooks once per kind, so that asking about a file walks
 * as many hooks with one nested view as with thousands. */
static void test_rw_hooks_once_per_kind(void **state)
{
    (void)state;
    static const char *const kinds[] = {"package-s4", "package-geom"};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        size_t size;
        uint8_t *pkg = fx_kind(kinds[k], 0, NULL, &size);
        assert_non_null(pkg);
        char path[64] = "/tmp/s3rig-hooks-XXXXXX", err[256];
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        close(fd);
        assert_int_equal(fx_write_file(path, pkg, size), 0);
        struct s3fs *fs;
        assert_int_equal(s3fs_open(&fs, path, NULL, err, sizeof err), S3_EXIT_OK);
        assert_int_equal(tree_populate_all(fs->tree), S3_OK);
        assert_each_once(&fs->value_hooks, "value");
        assert_each_once(&fs->table_hooks, "table");
        assert_each_once(&fs->resize_hooks, "resize");
        assert_each_once(&fs->part_hooks, "part");
        s3fs_close(fs);
        unlink(path);
        free(pkg);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rig_over_memory_and_slice),
        cmocka_unit_test(test_rig_over_expanded_bytes),
        cmocka_unit_test(test_nested_format_mask),
        cmocka_unit_test(test_parallel_nested_opens),
        cmocka_unit_test(test_nested_view_limit),
        cmocka_unit_test(test_rw_hooks_once_per_kind),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
