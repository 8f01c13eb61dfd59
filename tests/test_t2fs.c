/* t2fs container, schema, RNC decoder and the /root tree, without FUSE. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "expect.h"
#include "expect_t1.h"
#include "fixture_t2fs.h"
#include "fs/core/sbuf.h"
#include "fs/core/view.h"
#include "fs/open/open.h"
#include "fs/views/t2fs/view_t1_models.h"
#include "fs/views/t2fs/view_t1_section.h"
#include "fs/views/t2fs/view_t2fs_models.h"
#include "fs/views/t2fs/view_t2fs_tree.h"
#include "fs/views/t2fs/view_t2fs_named.h"
#include "parse/detect.h"
#include "parse/codec/rnc.h"
#include "parse/t2fs/t2fs.h"
#include "parse/t2fs/t1_section.h"
#include "parse/t2fs/t2fs_mesh.h"
#include "rncpack.h"
#include "testutil.h"
#include "tree_compare.h"
#include "tree_probe.h"
#include "walk.h"



/* ---- container primitives ---- */

static int branch_of(const uint32_t *words, size_t n, uint64_t space, bool be, struct t2fs_branch *b, char *err)
{
    uint8_t buf[256] = {0};
    for (size_t i = 0; i < n; i++)
        put32(buf + 4 * i, words[i], be);
    struct mem_src_ctx mc;
    struct s3_src src;
    mem_src_init(&src, &mc, buf, sizeof buf);
    return t2fs_read_branch(&src, 0, space, be, b, err, T2FS_ERR);
}

static void test_branch_validity(void **state)
{
    (void)state;
    struct t2fs_branch b;
    char err[T2FS_ERR];
    for (int be = 0; be <= 1; be++) {
        uint32_t ok[] = {2, 16, 24, 40};
        assert_int_equal(branch_of(ok, 4, 40, be, &b, err), 0);
        assert_int_equal(b.count, 2);
        assert_int_equal(b.header_len, 16);
        assert_int_equal(b.offset[2], 40);
        t2fs_branch_free(&b);
        uint32_t empty[] = {0, 8};
        assert_int_equal(branch_of(empty, 2, 8, be, &b, err), 0);
        assert_int_equal(b.count, 0);
        t2fs_branch_free(&b);
        uint32_t first_wrong[] = {2, 24, 24, 40};
        assert_int_equal(branch_of(first_wrong, 4, 40, be, &b, err), S3_ERR_FORMAT);
        assert_non_null(strstr(err, "first offset"));
        uint32_t decreasing[] = {3, 24, 40, 32, 48};
        assert_int_equal(branch_of(decreasing, 5, 48, be, &b, err), S3_ERR_FORMAT);
        assert_non_null(strstr(err, "decrease"));
        uint32_t misaligned[] = {2, 16, 20, 40};
        assert_int_equal(branch_of(misaligned, 4, 40, be, &b, err), S3_ERR_FORMAT);
        assert_non_null(strstr(err, "multiple of 8"));
        uint32_t past[] = {2, 16, 24, 48};
        assert_int_equal(branch_of(past, 4, 40, be, &b, err), S3_ERR_FORMAT);
        assert_non_null(strstr(err, "past the end"));
        uint32_t huge[] = {0xFFFFFFFF, 8};
        assert_int_equal(branch_of(huge, 2, 64, be, &b, err), S3_ERR_FORMAT);
        assert_non_null(strstr(err, "count 4294967295"));
        /* a node given more space than the data has (a file cut short): the count is checked
         * against the bytes there (256 in branch_of), before a table is allocated for it */
        uint32_t beyond[] = {0x3FFFFFFF, 0xFFFFFFF8u};
        assert_int_equal(branch_of(beyond, 2, UINT64_MAX, be, &b, err), S3_ERR_RANGE);
        assert_non_null(strstr(err, "count 1073741823 needs a 4294967300-byte table, the data has 256 bytes there"));
        uint32_t one_past[] = {63, 264}; /* a 260-byte table */
        assert_int_equal(branch_of(one_past, 2, 4096, be, &b, err), S3_ERR_RANGE);
        assert_non_null(strstr(err, "needs a 260-byte table, the data has 256 bytes there"));
        uint32_t fits[62 + 2] = {62, 256}; /* 4 + 4 * 63 = 256 bytes: the whole buffer */
        for (int k = 2; k < 64; k++)
            fits[k] = 256 + 8 * (uint32_t)(k - 1);
        assert_int_equal(branch_of(fits, 64, 4096, be, &b, err), 0);
        assert_int_equal(b.count, 62);
        assert_int_equal(b.offset[62], 256 + 8 * 62);
        t2fs_branch_free(&b);
        /* a table pointing at itself: offset[0] = 0 */
        uint32_t self[] = {1, 0, 0};
        assert_int_equal(branch_of(self, 3, 16, be, &b, err), S3_ERR_FORMAT);
    }
    assert_int_equal(t2fs_branch_header_len(0), 8);
    assert_int_equal(t2fs_branch_header_len(1), 16);
    assert_int_equal(t2fs_branch_header_len(2), 16);
    assert_int_equal(t2fs_branch_header_len(3), 24);
}

static void test_array_and_rnc_header(void **state)
{
    (void)state;
    uint8_t buf[64] = {0};
    put32(buf, 20, true);
    put32(buf + 4, 2, true);
    struct mem_src_ctx mc;
    struct s3_src src;
    mem_src_init(&src, &mc, buf, sizeof buf);
    uint32_t e, c;
    char err[T2FS_ERR];
    assert_int_equal(t2fs_read_array(&src, 0, 48, true, &e, &c, err, sizeof err), 0);
    assert_int_equal(e, 20);
    assert_int_equal(c, 2);
    assert_int_equal(t2fs_read_array(&src, 0, 40, true, &e, &c, err, sizeof err), S3_ERR_FORMAT);
    assert_non_null(strstr(err, "need 48 bytes"));
    memcpy(buf, "RNC\x02", 4);
    assert_int_equal(t2fs_rnc_method(&src, 0, 64), 2);
    buf[3] = 7;
    assert_int_equal(t2fs_rnc_method(&src, 0, 64), -1);
    assert_int_equal(t2fs_rnc_method(&src, 0, 10), 0);
}

static void test_schema_turok2(void **state)
{
    (void)state;
    struct t2fs_schema *s = t2fs_schema_turok2();
    assert_non_null(s);
    const struct t2fs_schema *models = t2fs_schema_child(s, 0);
    assert_int_equal(models->kind, T2K_VARIABLE);
    assert_null(t2fs_schema_child(s, 1)); /* the root's other children: unknown */
    const struct t2fs_schema *model = t2fs_schema_child(models, 1234);
    assert_string_equal(model->name, "model");
    const struct t2fs_schema *vb = t2fs_schema_child(t2fs_schema_child(t2fs_schema_child(model, 1), 0), 5);
    assert_string_equal(vb->name, "vertexBuffer");
    assert_int_equal(vb->data, T2D_ARRAY);
    assert_int_equal(vb->value_size, 20);
    assert_true(vb->interleaved);
    const struct t2fs_schema *idx =
        t2fs_schema_child(t2fs_schema_child(t2fs_schema_child(t2fs_schema_child(model, 1), 2), 0), 0);
    assert_string_equal(t2fs_schema_child(idx, 1)->name, "indices");
    assert_int_equal(t2fs_schema_child(idx, 0)->fixed_size, 24);
    const struct t2fs_schema *m15x = t2fs_schema_child(t2fs_schema_child(t2fs_schema_child(model, 1), 5), 0);
    assert_int_equal(m15x->kind, T2K_FIXED); /* corrected: an empty branch, not 8 bytes of data */
    assert_int_equal(m15x->nchild, 0);
    t2fs_schema_free(s);
}

/* ---- RNC ---- */



static void expect_unpacks(const char *dir, const char *packed, const char *raw, const struct rnc_options *o)
{
    size_t pn, rn, on;
    uint8_t *p = slurp_vector(dir, "rnc", packed, &pn), *r = slurp_vector(dir, "rnc", raw, &rn), *out;
    assert_non_null(p);
    assert_non_null(r);
    char err[256];
    if (rnc_unpack(p, pn, o, &out, &on, err, sizeof err))
        fail_msg("%s: %s", packed, err);
    assert_int_equal(on, rn);
    assert_memory_equal(out, r, rn);
    /* both CRCs: the header's values are what the data gives */
    struct rnc_header h;
    assert_int_equal(rnc_parse_header(p, pn, &h, err, sizeof err), 0);
    assert_int_equal(h.unpacked_crc, rncpack_crc16(r, rn));
    assert_int_equal(h.packed_crc, rncpack_crc16(p + 18, h.packed_size));
    free(out);
    free(p);
    free(r);
}

static void expect_refused(const char *dir, const char *packed, const struct rnc_options *o, enum s3_err reason,
                           const char *why)
{
    size_t pn, on;
    uint8_t *p = slurp_vector(dir, "rnc", packed, &pn), *out;
    assert_non_null(p);
    char err[256];
    assert_int_equal(rnc_unpack(p, pn, o, &out, &on, err, sizeof err), reason);
    if (!strstr(err, why))
        fail_msg("%s: '%s' lacks '%s'", packed, err, why);
    assert_null(out);
    free(p);
}

static void test_rnc_vectors(void **state)
{
    (void)state;
    const char *d = vectors_dir();
    if (!d)
        skip();
    expect_unpacks(d, "test_C1.rnc1", "test_C1.raw", NULL);
    expect_unpacks(d, "test_C1.rnc2", "test_C1.raw", NULL);
    expect_unpacks(d, "test_C1_dot1.rnc1", "test_C1.raw", NULL);
    static const char *const names[] = {"alice1k", "alice40k", "mixed"};
    for (int i = 0; i < 3; i++)
        for (int m = 1; m <= 2; m++) {
            char p[64], r[64];
            snprintf(p, sizeof p, "%s.m%d.rnc", names[i], m);
            snprintf(r, sizeof r, "%s.raw", names[i]);
            expect_unpacks(d, p, r, NULL);
        }
    /* the old 12-byte header: read as an 18-byte one, the packed bytes run 6 past the end */
    expect_refused(d, "test_C1.rnc1old", NULL, S3_ERR_RANGE, "");
    expect_refused(d, "test_C1.rnc2old", NULL, S3_ERR_RANGE, "");
    expect_refused(d, "alice1k.m1.key1234.rnc", NULL, S3_ERR_UNSUPPORTED, "encrypted");
    expect_refused(d, "alice1k.m2.key1234.rnc", NULL, S3_ERR_UNSUPPORTED, "encrypted");
    struct rnc_options key = {.has_key = true, .key = 0x1234};
    expect_unpacks(d, "alice1k.m1.key1234.rnc", "alice1k.raw", &key);
    expect_unpacks(d, "alice1k.m2.key1234.rnc", "alice1k.raw", &key);
    struct rnc_options wrong = {.has_key = true, .key = 0x4321};
    expect_refused(d, "alice1k.m2.key1234.rnc", &wrong, S3_ERR_FORMAT, "CRC");
    struct rnc_options small = {.max_unpacked = 1000};
    expect_refused(d, "alice1k.m1.rnc", &small, S3_ERR_LIMIT, "exceeds the limit");
}

static void fill(uint8_t *p, size_t n, int mode, unsigned *seed)
{
    for (size_t i = 0; i < n; i++) {
        switch (mode) {
        case 0:
            p[i] = (uint8_t)rand_r(seed);
            break;
        case 1:
            p[i] = (uint8_t)"abcab"[rand_r(seed) % 5];
            break;
        case 2:
            p[i] = (uint8_t)((i / 7) % 3);
            break;
        default:
            p[i] = (rand_r(seed) % 10 < 8 && i) ? p[i - 1] : (uint8_t)rand_r(seed);
        }
    }
}

static void test_rnc_crc16(void **state)
{
    (void)state;
    assert_int_equal(rnc_crc16((const uint8_t *)"123456789", 9), 0xBB3D);
    uint8_t b[333];
    unsigned seed = 5;
    for (size_t i = 0; i < sizeof b; i++)
        b[i] = (uint8_t)rand_r(&seed);
    for (size_t n = 0; n <= sizeof b; n++) /* every length: the 4-byte folding and the tail */
        assert_int_equal(rnc_crc16(b, n), rncpack_crc16(b, n));
}

static void test_rnc_packer_roundtrip(void **state)
{
    (void)state;
    unsigned seed = 7;
    for (int it = 0; it < 300; it++) {
        size_t n = (size_t)rand_r(&seed) % (it < 150 ? 300 : 12000);
        uint8_t *in = malloc(n + 1);
        fill(in, n, it % 4, &seed);
        for (int m = 1; m <= 2; m++) {
            size_t pn, on;
            uint8_t *p = rncpack(m, in, n, it % 3 == 0 ? 3 : 0, &pn), *out;
            char err[256];
            if (rnc_unpack(p, pn, NULL, &out, &on, err, sizeof err))
                fail_msg("round trip %d method %d, %zu bytes: %s", it, m, n, err);
            assert_int_equal(on, n);
            assert_memory_equal(out, in, n);
            free(out);
            free(p);
        }
        free(in);
    }
}

/* Every truncation, flipped bits, wrong CRCs, huge sizes: clean errors, bounded work. */
static void test_rnc_broken_streams(void **state)
{
    (void)state;
    uint8_t in[700];
    unsigned seed = 3;
    fill(in, sizeof in, 3, &seed);
    for (int m = 1; m <= 2; m++) {
        size_t pn, on;
        uint8_t *p = rncpack(m, in, sizeof in, 0, &pn), *out;
        char err[256];
        for (size_t cut = 0; cut < pn; cut++) {
            assert_int_equal(rnc_unpack(p, cut, NULL, &out, &on, err, sizeof err), S3_ERR_RANGE);
            assert_null(out);
        }
        uint8_t *q = malloc(pn);
        for (size_t bit = 18 * 8; bit < pn * 8; bit += 3) {
            memcpy(q, p, pn);
            q[bit / 8] ^= (uint8_t)(1u << (bit % 8));
            /* keep the packed CRC right so the decoder itself meets the damage */
            uint16_t crc = rncpack_crc16(q + 18, pn - 18);
            q[14] = (uint8_t)(crc >> 8);
            q[15] = (uint8_t)crc;
            if (rnc_unpack(q, pn, NULL, &out, &on, err, sizeof err) == 0) {
                assert_int_equal(on, sizeof in); /* a flip that still decodes passed the unpacked CRC */
                free(out);
            } else {
                assert_true(strlen(err) > 0);
            }
        }
        memcpy(q, p, pn);
        q[12] ^= 1;
        assert_int_equal(rnc_unpack(q, pn, NULL, &out, &on, err, sizeof err), S3_ERR_FORMAT);
        assert_non_null(strstr(err, "unpacked CRC"));
        memcpy(q, p, pn);
        q[15] ^= 1;
        assert_int_equal(rnc_unpack(q, pn, NULL, &out, &on, err, sizeof err), S3_ERR_FORMAT);
        assert_non_null(strstr(err, "packed CRC"));
        memcpy(q, p, pn);
        q[4] = q[5] = q[6] = q[7] = 0xFF; /* 4 GiB unpacked: refused before allocating */
        struct rnc_options lim = {.max_unpacked = 1 << 20};
        assert_int_equal(rnc_unpack(q, pn, &lim, &out, &on, err, sizeof err), S3_ERR_LIMIT);
        assert_non_null(strstr(err, "exceeds the limit"));
        memcpy(q, p, pn);
        q[3] = 3;
        assert_int_equal(rnc_unpack(q, pn, NULL, &out, &on, err, sizeof err), S3_ERR_UNSUPPORTED);
        assert_non_null(strstr(err, "method 3"));
        free(q);
        free(p);
    }
}

/* Closes a tree opened over a fixture file written from root, and frees both. */
static void close_fixture(struct s3fs *fs, uint8_t *file, struct fxt *root)
{
    s3fs_close(fs);
    free(file);
    fxt_free(root);
}

/* ---- the /root tree ---- */

static void walk(bool be, size_t prefix, size_t trailer, bool compressed, uint32_t nmodels)
{
    struct fxt *root = fxt_sample(11, nmodels, compressed, be);
    size_t size;
    uint8_t *file = fxt_write(root, be, prefix, trailer, &size);
    struct s3fs *fs;
    char err[256];
    if (s3fs_open_mem(&fs, file, size, NULL, err, sizeof err))
        fail_msg("open: %s", err);
    struct probe p = tree_probe(fs);
    ex_check_t2fs(&p, file, size, root, prefix, trailer);
    /* a generated file raises no warnings */
    if (fs->diag.n)
        fail_msg("unexpected warning: %s", fs->diag.msg[0]);
    close_fixture(fs, file, root);
}

static void test_walk_t2fs(void **state)
{
    (void)state;
    for (int be = 0; be <= 1; be++) {
        walk(be, 0, 0, false, 3);
        walk(be, 8, 0, false, 2);
        walk(be, 0, 8, true, 3);
        walk(be, 8, 0, true, 2);
    }
}

/* The seed's path example: model 0's first vertex buffer node, in both byte orders. */
static void test_seed_paths(void **state)
{
    (void)state;
    static const char *const paths[] = {
        "/root/0/0/0/0.bin",       "/root/0/0/0/1.bin",       "/root/0/0/1/0/0.bin",     "/root/0/0/1/1/0.bin",
        "/root/0/0/1/2/0/0/0.bin", "/root/0/0/1/2/0/0/1.bin", "/root/0/0/1/3/0/0.bin",   "/root/0/0/1/3/0/1.bin",
        "/root/0/0/1/4/0.bin",     "/root/0/0/1/5/0",         "/root/0/0/2/0/0.bin",     "/root/0/0/2/0/1.bin",
        "/root/0/0/2/0/2.bin",     "/root/0/0/2/0/3/0.bin",   "/root/0/0/2/0/3/1.bin",   "/root/0/0/2/0/4.bin",
        "/root/0/0/2/0/5/0.bin",   "/root/0/0/2/0/5/1.bin",   "/root/0/0/2/0/5/2.bin",   "/root/0/0/3.bin",
    };
    for (int be = 0; be <= 1; be++) {
        struct fxt *root = fxt_sample(5, 1, false, be);
        size_t size;
        uint8_t *file = fxt_write(root, be, 0, 0, &size);
        struct s3fs *fs = open_mem(file, size, NULL, "t2fs fixture");
        for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
            uint32_t ino;
            if (tree_resolve(fs->tree, paths[i], &ino))
                fail_msg("%s: missing (%s)", paths[i], be ? "be" : "le");
        }
        uint32_t ino;
        assert_int_equal(tree_resolve(fs->tree, "/root/0/0/1/0/0.bin", &ino), 0);
        char type[64] = {0};
        assert_int_equal(tree_getxattr_str(fs->tree, ino, "user.s3rig.type", type, sizeof type), S3_OK);
        assert_string_equal(type, "t2fs.array[20]x5");
        close_fixture(fs, file, root);
    }
}

/* Broken containers: .error files next to the rest, or a clean refusal. */
static void test_t2fs_broken(void **state)
{
    (void)state;
    struct fxt *root = fxt_sample(5, 2, false, false);
    size_t size;
    uint8_t *file = fxt_write(root, false, 0, 0, &size);
    uint8_t *h = malloc(size);
    struct s3fs *fs;
    char err[256];
    uint32_t ino;
    /* the vertex buffer's array header claims more elements than fit */
    const struct fxt *vb = root->child[0]->child[0]->child[1]->child[0]->child[0];
    memcpy(h, file, size);
    put32(h + vb->pos + 4, 0x10000000, false);
    assert_int_equal(s3fs_open_mem(&fs, h, size, NULL, err, sizeof err), 0);
    assert_int_equal(tree_resolve(fs->tree, "/root/0/0/1/0/0.error", &ino), 0);
    assert_int_equal(tree_resolve(fs->tree, "/root/0/0/1/0/0.bin", &ino), 0);
    assert_int_equal(tree_resolve(fs->tree, "/root/0/1/3.bin", &ino), 0);
    assert_true(diag_has(&fs->diag, "elements"));
    assert_true(walk_all(fs, 100000) > 0); /* /models and /named over the broken model too */
    s3fs_close(fs);
    /* a model table with decreasing offsets: the schema says branch, the bytes disagree */
    const struct fxt *model = root->child[0]->child[1];
    memcpy(h, file, size);
    put32(h + model->pos + 8, 0xFFFFFFF8, false);
    assert_int_equal(s3fs_open_mem(&fs, h, size, NULL, err, sizeof err), 0);
    assert_int_equal(tree_resolve(fs->tree, "/root/0/1.error", &ino), 0);
    assert_int_equal(tree_resolve(fs->tree, "/root/0/1.bin", &ino), 0);
    assert_int_equal(tree_resolve(fs->tree, "/root/0/0/3.bin", &ino), 0);
    assert_true(walk_all(fs, 100000) > 0);
    s3fs_close(fs);
    /* the model list claims 2^32-1 children: not a valid branch */
    memcpy(h, file, size);
    put32(h + root->child[0]->pos, 0xFFFFFFFF, false);
    assert_int_equal(s3fs_open_mem(&fs, h, size, NULL, err, sizeof err), 0);
    assert_int_equal(tree_resolve(fs->tree, "/root/0.error", &ino), 0);
    assert_true(walk_all(fs, 100000) > 0);
    assert_int_equal(tree_resolve(fs->tree, "/models/0", &ino), S3_ERR_NOT_FOUND); /* no model list: no models */
    s3fs_close(fs);
    /* truncated files: every cut either refuses cleanly or mounts with what is there */
    for (size_t cut = 0; cut < size; cut += 5) {
        int rc = s3fs_open_mem(&fs, file, cut, NULL, err, sizeof err);
        if (rc) {
            assert_true(strlen(err) > 0);
            continue;
        }
        assert_int_equal(tree_resolve(fs->tree, "/info", &ino), 0);
        walk_all(fs, 100000);
        s3fs_close(fs);
    }
    free(h);
    free(file);
    fxt_free(root);
}

/* A broken compressed node: N.error with the reason, N.rnc still there. */
static void test_t2fs_broken_rnc(void **state)
{
    (void)state;
    struct fxt *root = fxt_sample(5, 2, true, true);
    size_t size;
    uint8_t *file = fxt_write(root, true, 0, 0, &size);
    const struct fxt *poses = root->child[0]->child[1]->child[2];
    file[poses->pos + 13] ^= 0xFF; /* the unpacked CRC */
    struct s3fs *fs = open_mem(file, size, NULL, "t2fs fixture");
    uint32_t ino;
    assert_int_equal(tree_resolve(fs->tree, "/root/0/1/2.rnc", &ino), 0);
    assert_int_equal(tree_resolve(fs->tree, "/root/0/1/2.error", &ino), 0);
    char text[256] = {0};
    assert_true(tree_read_ok(fs->tree, ino, 0, text, sizeof text - 1) > 0);
    assert_non_null(strstr(text, "unpacked CRC mismatch"));
    assert_int_equal(tree_resolve(fs->tree, "/root/0/1/2", &ino), S3_ERR_NOT_FOUND);
    assert_int_equal(tree_resolve(fs->tree, "/root/0/1/3.bin", &ino), 0);
    assert_true(walk_all(fs, 100000) > 0); /* the models view meets the broken poses */
    assert_int_equal(tree_resolve(fs->tree, "/models/1/poses", &ino), 0);
    close_fixture(fs, file, root);
}

/* The cache bound: with room for one node, reading every compressed leaf still works. */
static void test_t2fs_cache_bound(void **state)
{
    (void)state;
    struct fxt *root = fxt_sample(9, 3, true, false);
    size_t size;
    uint8_t *file = fxt_write(root, false, 0, 0, &size);
    struct s3fs_opts o = {.cache_bytes = 64};
    struct s3fs *fs;
    char err[256];
    assert_int_equal(s3fs_open_mem(&fs, file, size, &o, err, sizeof err), 0);
    struct probe p = tree_probe(fs);
    ex_check_t2fs(&p, file, size, root, 0, 0);
    assert_true(fs->cache.used <= 64 || fs->cache.head == fs->cache.tail);
    assert_true(fs->cache.evicted > 0);
    close_fixture(fs, file, root);
}

/* ---- /models ---- */

/* The test's own reading of an index stream (independent of the product's decoder):
 * a 32-slot cache, a vertex pointer shared by a mesh's surfaces. */
struct sim {
    long slot[32], bone_at[32], bone, next;
};

static void simulate(struct sim *s, const uint16_t *w, size_t n, char *tri, char *bones, char *cmds, long *first,
                     long *last)
{
    *first = *last = -1;
    for (size_t i = 0; i < n; i++) {
        unsigned x = w[i];
        if (x & 0x8000) {
            unsigned a = x & 31, b = (x >> 5) & 31, c = (x >> 10) & 31;
            cmds += sprintf(cmds, "tri %u %u %u\n", a, b, c);
            tri += sprintf(tri, "%ld %ld %ld\n", s->slot[a], s->slot[b], s->slot[c]);
            bones += sprintf(bones, "%ld %ld %ld\n", s->bone_at[a], s->bone_at[b], s->bone_at[c]);
        } else if (x & 0x4000) {
            s->bone = x & 0xFF;
            cmds += sprintf(cmds, "bone %u\n", x & 0xFF);
        } else {
            unsigned cnt = x & 31, v0 = (x >> 5) & 31;
            cmds += sprintf(cmds, "load %u at %u\n", cnt, v0);
            for (unsigned k = 0; k < cnt; k++) {
                s->slot[v0 + k] = s->next + k;
                s->bone_at[v0 + k] = s->bone;
            }
            if (*first < 0)
                *first = s->next;
            s->next += cnt;
            *last = s->next - 1;
        }
    }
}

static void expect_file(const struct probe *p, const char *path, const char *want)
{
    uint8_t *buf;
    size_t len;
    if (p->read(p->ctx, path, &buf, &len))
        fail_msg("%s: missing", path);
    if (len != strlen(want) || memcmp(buf, want, len) != 0)
        fail_msg("%s: '%.*s', expected '%s'", path, (int)len, (char *)buf, want);
    free(buf);
}

static void check_models(bool be, bool compress_mesh)
{
    struct fxt *model = fxt_model_ex(700, 2, 1, be, 40);
    if (compress_mesh)
        model->child[1]->child[0]->child[1]->compress = 2;
    struct fxt *root = fxt_branch(1, fxt_branch(1, model));
    size_t size;
    uint8_t *file = fxt_write(root, be, 0, 0, &size);
    struct s3fs *fs = open_mem(file, size, NULL, "t2fs fixture");
    struct probe p = tree_probe(fs);
    ex_link_is(&p, "/models/0/raw", "../../root/0/0");
    for (int m = 0; m < 2; m++) {
        /* vertices.bin: the records before interleaving */
        const struct fxt *vb = model->child[1]->child[0]->child[m];
        char path[160];
        snprintf(path, sizeof path, "/models/0/meshes/%d/vertices.bin", m);
        uint8_t *buf;
        size_t len;
        assert_int_equal(p.read(p.ctx, path, &buf, &len), 0);
        assert_int_equal(len, vb->len);
        assert_memory_equal(buf, vb->data, len);
        char line[64];
        snprintf(line, sizeof line, "%02x%02x%02x%02x %02x%02x%02x%02x", buf[0], buf[1], buf[2], buf[3], buf[4],
                 buf[5], buf[6], buf[7]);
        free(buf);
        snprintf(path, sizeof path, "/models/0/meshes/%d/vertices.txt", m);
        assert_int_equal(p.read(p.ctx, path, &buf, &len), 0);
        assert_int_equal(len, 40 * 45);
        assert_memory_equal(buf, line, strlen(line));
        free(buf);
        /* the surfaces of the mesh, decoded in order with one cache */
        struct sim s;
        memset(&s, 0, sizeof s);
        for (int k = 0; k < 32; k++)
            s.slot[k] = s.bone_at[k] = -1;
        s.bone = -1;
        for (int surf = 0; surf < 2; surf++) {
            size_t n;
            const uint16_t *w = fxt_index_words(700 + (unsigned)surf, &n);
            char tri[512], bones[512], cmds[1024], range[64];
            long first, last;
            simulate(&s, w, n, tri, bones, cmds, &first, &last);
            snprintf(range, sizeof range, "%ld %ld\n", first, last);
            char base[96];
            snprintf(base, sizeof base, "/models/0/surfaces/%d/%d", m, surf);
            snprintf(path, sizeof path, "%s/triangles.txt", base);
            expect_file(&p, path, tri);
            snprintf(path, sizeof path, "%s/bones.txt", base);
            expect_file(&p, path, bones);
            snprintf(path, sizeof path, "%s/commands.txt", base);
            expect_file(&p, path, cmds);
            snprintf(path, sizeof path, "%s/vertex_range", base);
            expect_file(&p, path, range);
            snprintf(path, sizeof path, "%s/triangles.error", base);
            enum expect_kind k;
            uint64_t sz;
            assert_int_equal(p.stat(p.ctx, path, &k, &sz), -ENOENT);
            snprintf(path, sizeof path, "%s/material.bin", base);
            assert_int_equal(p.read(p.ctx, path, &buf, &len), 0);
            assert_int_equal(len, 24);
            const struct fxt *mat = model->child[1]->child[2]->child[m]->child[surf]->child[0];
            assert_memory_equal(buf, mat->data, 24);
            uint32_t tex = be ? (uint32_t)buf[0] << 24 | (uint32_t)buf[1] << 16 | (uint32_t)buf[2] << 8 | buf[3]
                              : (uint32_t)buf[3] << 24 | (uint32_t)buf[2] << 16 | (uint32_t)buf[1] << 8 | buf[0];
            free(buf);
            char want[32];
            snprintf(want, sizeof want, "%u\n", tex);
            snprintf(path, sizeof path, "%s/texture_id", base);
            expect_file(&p, path, want);
        }
    }
    /* the other seed nodes under their names, header-stripped */
    const struct fxt *m3 = model->child[3];
    uint8_t *buf;
    size_t len;
    assert_int_equal(p.read(p.ctx, "/models/0/model_3.bin", &buf, &len), 0);
    assert_int_equal(len, m3->len);
    assert_memory_equal(buf, m3->data, len);
    free(buf);
    char type[64];
    assert_true(p.getxattr(p.ctx, "/models/0/model_3.bin", "user.s3rig.type", type, sizeof type) > 0);
    assert_string_equal(type, "t2fs.array[28]x2");
    assert_int_equal(p.read(p.ctx, "/models/0/bones/1/bone.bin", &buf, &len), 0);
    assert_int_equal(len, 112);
    free(buf);
    assert_int_equal(p.read(p.ctx, "/models/0/poses/0/bone_indices", &buf, &len), 0);
    assert_int_equal(len > 0 && buf[len - 1] == '\n', 1);
    free(buf);
    assert_int_equal(p.read(p.ctx, "/models/0/poses/0/header.bin", &buf, &len), 0);
    assert_int_equal(len, 32);
    free(buf);
    assert_int_equal(p.read(p.ctx, "/models/0/info.bin", &buf, &len), 0);
    assert_int_equal(len, 32);
    free(buf);
    close_fixture(fs, file, root);
}

static void test_models_view(void **state)
{
    (void)state;
    check_models(false, false);
    check_models(true, false);
    check_models(false, true); /* a compressed vertex buffer decodes the same way */
}

/* Every link of a tree resolves: its target, taken from the directory holding it, is
 * a node of the tree. */
static void links_resolve(struct s3fs *fs)
{
    struct tree *t = fs->tree;
    for (uint32_t ino = 1; tree_kind(t, ino) >= 0; ino++) {
        if (tree_kind(t, ino) != NODE_LINK)
            continue;
        uint32_t at = tree_parent(t, ino);
        char *path = strdup(tree_link_target(t, ino)), *save, *part;
        for (part = strtok_r(path, "/", &save); part; part = strtok_r(NULL, "/", &save)) {
            if (strcmp(part, "..") == 0)
                at = tree_parent(t, at);
            else if (strcmp(part, ".") != 0 && tree_lookup(t, at, part, &at))
                fail_msg("%s -> %s: %s is missing", tree_name(t, ino), tree_link_target(t, ino), part);
        }
        free(path);
    }
}

/* Nodes the derived views need but that are missing or of the wrong kind: each is an
 * .error naming the node, never an empty directory or a silent gap. */
static void test_models_missing_nodes(void **state)
{
    (void)state;
    struct fxt *model = fxt_model(40, 1, 1, false);
    struct fxt *m1 = model->child[1];
    fxt_free(m1->child[4]); /* model_1 keeps 4 of its 6 children: no hotpoints */
    fxt_free(m1->child[5]);
    m1->n = 4;
    fxt_free(m1->child[3]); /* the bones list is a leaf, not a branch */
    m1->child[3] = fxt_raw("not a branch", 12);
    fxt_free(model->child[2]->child[0]->child[5]); /* pose 0's child 5 is a leaf */
    model->child[2]->child[0]->child[5] = fxt_raw("leaf", 4);
    struct fxt *other = fxt_model(41, 1, 1, false);
    other->child[2]->compress = 2; /* poses compressed, then damaged below */
    struct fxt *root = fxt_branch(1, fxt_branch(2, model, other));
    size_t size;
    uint8_t *file = fxt_write(root, false, 0, 0, &size);
    file[other->child[2]->pos + 13] ^= 0xFF; /* the unpacked CRC */
    struct s3fs *fs;
    char err[256];
    assert_int_equal(s3fs_open_mem(&fs, file, size, NULL, err, sizeof err), 0);
    struct probe p = tree_probe(fs);
    ex_holds(&p, "/models/0/hotpoints/hotpoints.error", "/root/0/0/1: 4 children, no child 4");
    ex_holds(&p, "/models/0/bones/bones.error", "/root/0/0/1/3: a leaf, not a branch");
    ex_holds(&p, "/models/0/poses/0/header.error", "/root/0/0/2/0/5: a leaf, not a branch");
    ex_holds(&p, "/models/0/poses/0/rotations.error", "/root/0/0/2/0/5: a leaf, not a branch");
    ex_holds(&p, "/models/1/poses/poses.error", "/root/0/1/2: RNC2 at output byte 320 of 320: unpacked CRC mismatch");
    ex_holds(&p, "/named/models/1/poses.error", "/root/0/1/2: RNC2 at output byte 320 of 320: unpacked CRC mismatch");
    /* the parts that are there are still read */
    enum expect_kind k;
    uint64_t sz;
    assert_int_equal(p.stat(p.ctx, "/models/0/poses/0/orientations.bin", &k, &sz), 0);
    assert_int_equal(p.stat(p.ctx, "/models/1/bones/0/bone.bin", &k, &sz), 0);
    assert_int_equal(p.stat(p.ctx, "/models/0/surfaces/0/0/triangles.txt", &k, &sz), 0);
    assert_true(walk_all(fs, 100000) > 0);
    links_resolve(fs); /* /named links only to what /root shows */
    s3fs_close(fs);
    /* the model list itself is a leaf: /models says so and holds nothing else */
    struct fxt *flat = fxt_branch(1, fxt_raw("12345678abcdefgh", 16));
    free(file);
    file = fxt_write(flat, true, 0, 0, &size);
    assert_int_equal(s3fs_open_mem(&fs, file, size, NULL, err, sizeof err), 0);
    p = tree_probe(fs);
    ex_holds(&p, "/models/models.error", "/root/0: a leaf, not a branch");
    s3fs_close(fs);
    fxt_free(flat);
    free(file);
    fxt_free(root);
}

/* Long lists cost their length once, not once per item: a model with `nmeshes` meshes
 * (empty vertex buffers), nposes poses and nbones bones (fxt_model's, repeated), walked
 * whole; the branch-table offsets the view reads (t2fs_view_table_words) stay within a
 * small multiple of the file's words, whatever the lists' lengths. Each item used to look
 * itself up from the model, validating its whole list on the way: M^2 for M items. */
/* Pose 0 of fxt_model(seed), taken out of the model. */
static struct fxt *lone_pose(unsigned seed)
{
    struct fxt *m = fxt_model(seed, 1, 1, false);
    struct fxt *p = m->child[2]->child[0];
    m->child[2]->child[0] = fxt_branch(0);
    fxt_free(m);
    return p;
}

static void long_lists_case(uint32_t nmeshes, uint32_t nposes, uint32_t nbones)
{
    struct fxt *model = fxt_model(7, 1, 1, false);
    struct fxt *m1 = model->child[1];
    struct fxt **mesh = malloc(nmeshes * sizeof *mesh), **surf = malloc(nmeshes * sizeof *surf);
    struct fxt **pose = malloc(nposes * sizeof *pose), **bone = malloc(nbones * sizeof *bone);
    assert_true(mesh && surf && pose && bone);
    for (uint32_t i = 0; i < nmeshes; i++) {
        mesh[i] = fxt_array(20, 0, NULL, true);
        surf[i] = fxt_branch(0);
    }
    for (uint32_t i = 0; i < nposes; i++)
        pose[i] = lone_pose(i);
    for (uint32_t i = 0; i < nbones; i++)
        bone[i] = fxt_branch(2, fxt_array(4, 2, "\1\0\0\0\2\0\0\0", false), fxt_raw("bonebone", 8));
    fxt_free(m1->child[0]);
    m1->child[0] = fxt_branch_v(nmeshes, mesh);
    fxt_free(m1->child[2]);
    m1->child[2] = fxt_branch_v(nmeshes, surf);
    fxt_free(m1->child[3]);
    m1->child[3] = fxt_branch_v(nbones, bone);
    fxt_free(model->child[2]);
    model->child[2] = fxt_branch_v(nposes, pose);
    free(mesh);
    free(surf);
    free(pose);
    free(bone);
    struct fxt *root = fxt_branch(1, fxt_branch(1, model));
    size_t size;
    uint8_t *file = fxt_write(root, false, 0, 0, &size);
    struct s3fs *fs = open_mem(file, size, NULL, "t2fs fixture with long lists");
    size_t nodes = walk_all(fs, 10000000);
    assert_true(nodes > 3 * (size_t)(nmeshes + nposes + nbones));
    uint64_t words = t2fs_view_table_words(t2fs_view_of(fs));
    /* every table is read a few times (listing its parent, listing it, each derived view
     * that shows it once), and each lookup reads two offsets: 8 x the file's words is far
     * above that and far below M^2 */
    if (words > 8 * (uint64_t)(size / 4))
        fail_msg("%u meshes, %u poses, %u bones: %llu table offsets read for a file of %zu bytes", nmeshes, nposes,
                 nbones, (unsigned long long)words, size);
    print_message("%u meshes, %u poses, %u bones: %llu table offsets read, file %zu bytes\n", nmeshes, nposes, nbones,
                  (unsigned long long)words, size);
    close_fixture(fs, file, root);
}

static void test_models_long_lists(void **state)
{
    (void)state;
    long_lists_case(3000, 1, 3);
    long_lists_case(1, 2000, 3);
    long_lists_case(1, 1, 3000);
}

/* ---- Turok 1 sections ---- */

/* The test's own rendering of decoded commands, in commands.txt's words. */
static char *render_commands(const struct t1_stream *st)
{
    char *out = malloc(40 * st->ncmd + 1), *q = out;
    *q = 0;
    for (size_t i = 0; i < st->ncmd; i++) {
        const struct t1_cmd *c = &st->cmd[i];
        if (c->kind == T1_CMD_LOAD)
            q += sprintf(q, "load %u..%u -> slot %u\n", c->first, c->first + c->count - 1, c->slot);
        else
            q += sprintf(q, "tri %u %u %u\n", c->s[0], c->s[1], c->s[2]);
    }
    return out;
}

static char *render_triangles(const struct t1_stream *st)
{
    char *out = malloc(40 * st->ntri + 1), *q = out;
    *q = 0;
    for (size_t i = 0; i < st->ntri; i++)
        q += sprintf(q, "%u %u %u\n", st->tri[i][0], st->tri[i][1], st->tri[i][2]);
    return out;
}

/* Every case of the fixture, decoded straight from its bytes in both byte orders. */
static void test_turok1_sections(void **state)
{
    (void)state;
    assert_int_equal(t1_load_count(0, 16), 0);
    assert_int_equal(t1_load_count(16, 16), 1);
    assert_int_equal(t1_load_count(17, 16), 2);
    assert_int_equal(t1_load_count(24, 16), 2);
    assert_int_equal(t1_load_count(25, 16), 3);
    assert_int_equal(t1_load_count(40, 16), 4);
    assert_int_equal(t1_load_count(70, 32), 4);
    size_t n;
    const struct fxt_t1_case *cases = fxt_t1_cases(&n);
    for (int be = 0; be <= 1; be++)
        for (size_t k = 0; k < n; k++) {
            const struct fxt_t1_case *c = &cases[k];
            struct fxt *sec = fxt_t1_section(c->words, c->nwords, c->nverts, c->seed, be);
            size_t size;
            uint8_t *bytes = fxt_write(sec, be, 0, 0, &size);
            /* the arrays' data: past their 8-byte headers, where the writer put them */
            const uint8_t *words = bytes + sec->child[1]->pos + 8, *planes = bytes + sec->child[2]->pos + 8;
            struct t1_section s;
            assert_int_equal(t1_section_decode(words, c->nwords, planes, c->nverts, be, &s), 0);
            if (c->triangles) {
                if (s.layout < 0)
                    fail_msg("case %zu (%s): %s", k, c->what, s.err);
                assert_string_equal(t1_layouts[s.layout].name, c->layout);
                assert_false(s.ambiguous);
                char *t = render_triangles(&s.st), *cm = render_commands(&s.st);
                assert_string_equal(t, c->triangles);
                assert_string_equal(cm, c->commands);
                free(t);
                free(cm);
            } else {
                assert_int_equal(s.layout, -1);
                assert_int_equal(s.st.ntri, 0);
                if (!strstr(s.err, c->err16) || !strstr(s.err, c->err32))
                    fail_msg("case %zu (%s): '%s'", k, c->what, s.err);
            }
            assert_int_equal(s.nvert, c->nverts);
            assert_memory_equal(s.records, sec->child[2]->data, 16 * (size_t)c->nverts);
            for (uint32_t i = 0; i < c->nverts; i++) {
                struct fxt_t1_vert x = fxt_t1_vertex(c->seed, i);
                assert_int_equal(s.vert[i].x, x.x);
                assert_int_equal(s.vert[i].y, x.y);
                assert_int_equal(s.vert[i].z, x.z);
                assert_int_equal(s.vert[i].flag, x.flag);
                assert_int_equal(s.vert[i].s, x.s);
                assert_int_equal(s.vert[i].t, x.t);
                assert_memory_equal(s.vert[i].c, x.c, 4);
            }
            t1_section_free(&s);
            free(bytes);
            fxt_free(sec);
        }
    /* the notes' example, word by word: (0,1,2) (10,11,12) (3,2,1) (15,12,14), one run */
    static const uint8_t ex[8] = {0x02, 0x10, 0x0c, 0xba, 0x01, 0x23, 0x1e, 0xcf}; /* big-endian words */
    struct t1_stream st;
    char err[T1_ERR];
    assert_int_equal(t1_decode_stream(ex, 4, true, 16, &t1_layouts[T1_LAYOUT_16], &st, err, sizeof err), 0);
    static const uint32_t want[4][3] = {{0, 1, 2}, {10, 11, 12}, {3, 2, 1}, {15, 12, 14}};
    assert_int_equal(st.ntri, 4);
    assert_memory_equal(st.tri, want, sizeof want);
    assert_int_equal(st.loads, 1);
    assert_true(st.cmd[4].run_end);
    assert_false(st.cmd[1].run_end || st.cmd[2].run_end || st.cmd[3].run_end);
    t1_stream_free(&st);
    assert_int_equal(t1_decode_stream(ex, 4, true, 16, &t1_layouts[T1_LAYOUT_32], &st, err, sizeof err),
                     S3_ERR_FORMAT);
    assert_non_null(strstr(err, "word 0 (0x0210): slot 16 used before"));
    assert_null(st.tri);
    /* no vertices, no words: both layouts fit, the 16-slot one is taken */
    struct t1_section s;
    assert_int_equal(t1_section_decode(NULL, 0, NULL, 0, false, &s), 0);
    assert_int_equal(s.layout, T1_LAYOUT_16);
    assert_true(s.ambiguous);
    assert_int_equal(s.st.ntri, 0);
    t1_section_free(&s);
}

/* The Turok 1 /models and /named's section files against the hand-written cases. */
static void test_turok1_models(void **state)
{
    (void)state;
    for (int be = 0; be <= 1; be++) {
        struct fxt *root = fxt_t1_sample(be);
        size_t size;
        uint8_t *file = fxt_write(root, be, 0, 0, &size);
        struct s3fs *fs;
        char err[256];
        assert_int_equal(s3fs_open_mem(&fs, file, size, NULL, err, sizeof err), 0);
        struct probe p = tree_probe(fs);
        ex_t1_models(&p, root, be);
        /* the exporters' way in: locator handles and a decoded section, no tree paths */
        struct t2_view *v = t2fs_view_of(fs);
        assert_non_null(v);
        struct t2fs_node top, sec;
        t2fs_node_root(v, &top);
        assert_int_equal(top.count, 11);
        /* object 0, its nodes (1/1), node 1, its parts (2), part 0, section 0: case 1 */
        assert_int_equal(t2fs_node_at(v, &top, (const unsigned[]){0, 0, 1, 1, 1, 2, 0, 0}, 8, &sec, err, sizeof err), 0);
        struct t1_section s;
        assert_int_equal(t1_section_read(v, &sec, &s, err, sizeof err), 0);
        assert_int_equal(s.layout, T1_LAYOUT_32);
        assert_int_equal(s.nvert, 70);
        char *tri = render_triangles(&s.st);
        assert_string_equal(tri, fxt_t1_cases(&(size_t){0})[1].triangles);
        free(tri);
        t1_section_free(&s);
        /* a node that is not a section: the error names it (the reason: FORMAT, the
         * node's own, not NOMEM, which would fail a listing) */
        struct t2fs_node leaf;
        assert_int_equal(t2fs_node_at(v, &top, (const unsigned[]){0, 0, 1, 0}, 4, &leaf, err, sizeof err), 0);
        assert_int_equal(t1_section_read(v, &leaf, &s, err, sizeof err), S3_ERR_FORMAT);
        assert_non_null(strstr(err, "/root/0/0/1/0: a leaf, not a branch"));
        assert_int_equal(t2fs_node_child(v, &top, 11, &leaf, err, sizeof err), S3_ERR_FORMAT);
        assert_non_null(strstr(err, "/root: 11 children, no child 11"));
        assert_true(walk_all(fs, 100000) > 0);
        links_resolve(fs);
        s3fs_close(fs);
        /* every cut of the file mounts with what is there, or is refused */
        for (size_t cut = 0; cut < size; cut += 7) {
            if (s3fs_open_mem(&fs, file, cut, NULL, err, sizeof err))
                continue;
            walk_all(fs, 100000);
            s3fs_close(fs);
        }
        free(file);
        fxt_free(root);
    }
}

static void test_index_stream_errors(void **state)
{
    (void)state;
    struct t2_vcache c;
    t2_vcache_init(&c, 4);
    uint16_t words[] = {0x8000 | (0 | 1 << 5 | 2 << 10), /* triangle before any load */
                        0x2000 | 30 << 5 | 5,            /* load past the 32 slots */
                        0x2000 | 6,                      /* load past the 4 vertices */
                        0x1234,                          /* no command bit */
                        0, 0};                           /* padding */
    uint8_t b[sizeof words];
    for (size_t i = 0; i < sizeof words / 2; i++) {
        b[2 * i] = (uint8_t)words[i];
        b[2 * i + 1] = (uint8_t)(words[i] >> 8);
    }
    struct t2_stream s;
    assert_int_equal(t2_decode_stream(b, sizeof b, false, &c, &s), S3_OK);
    assert_int_equal(s.ncmd, 4); /* the padding is not a command */
    assert_int_equal(s.ntri, 0);
    assert_int_equal(s.nerr, 4);
    assert_non_null(strstr(s.err[0], "nothing loaded"));
    assert_non_null(strstr(s.err[1], "32 cache slots"));
    assert_non_null(strstr(s.err[2], "4 vertices"));
    assert_non_null(strstr(s.err[3], "0x1234"));
    t2_stream_free(&s);
    /* a long stream: one load, then a triangle per word; the triangle list is allocated
     * once, for the stream's triangle words, not grown by one triangle per realloc */
    enum { NWORDS = 100000 };
    uint8_t *big = malloc(2 * NWORDS);
    assert_non_null(big);
    for (size_t i = 0; i < NWORDS; i++) {
        uint16_t w = i == 0 ? 0x2000 | 3 : 0x8000 | (0 | 1 << 5 | 2 << 10);
        big[2 * i] = (uint8_t)w;
        big[2 * i + 1] = (uint8_t)(w >> 8);
    }
    t2_vcache_init(&c, 3);
    assert_int_equal(t2_decode_stream(big, 2 * NWORDS, false, &c, &s), S3_OK);
    assert_int_equal(s.ntri, NWORDS - 1);
    assert_int_equal(s.nerr, 0);
    assert_true(s.tri[NWORDS - 2].v[0] == 0 && s.tri[NWORDS - 2].v[1] == 1 && s.tri[NWORDS - 2].v[2] == 2);
    assert_int_equal(s.captri, NWORDS - 1);
    t2_stream_free(&s);
    free(big);
    /* a model whose vertex buffer is too short: triangles.error beside the rest */
    struct fxt *model = fxt_model_ex(3, 1, 1, false, 4);
    struct fxt *root = fxt_branch(1, fxt_branch(1, model));
    size_t size;
    uint8_t *file = fxt_write(root, false, 0, 0, &size);
    struct s3fs *fs = open_mem(file, size, NULL, "t2fs fixture");
    uint32_t ino;
    assert_int_equal(tree_resolve(fs->tree, "/models/0/surfaces/0/0/triangles.error", &ino), 0);
    char text[1024] = {0};
    assert_true(tree_read_ok(fs->tree, ino, 0, text, sizeof text - 1) > 0);
    assert_non_null(strstr(text, "past the 4 vertices"));
    assert_int_equal(tree_resolve(fs->tree, "/models/0/surfaces/0/0/triangles.txt", &ino), 0);
    close_fixture(fs, file, root);
}

/* ---- schemas ---- */

static void same_schema(const struct t2fs_schema *a, const struct t2fs_schema *b, int depth)
{
    assert_true(depth < 64);
    if (!a || !b) {
        assert_true(a == b);
        return;
    }
    assert_string_equal(a->name ? a->name : "", b->name ? b->name : "");
    assert_int_equal(a->kind, b->kind);
    assert_int_equal(a->nchild, b->nchild);
    if (a->kind == T2K_DATA) {
        assert_int_equal(a->data, b->data);
        assert_int_equal(a->fixed_size, b->fixed_size);
        assert_int_equal(a->value_size, b->value_size);
        assert_int_equal(a->interleaved, b->interleaved);
        assert_string_equal(a->type ? a->type : "", b->type ? b->type : "");
    }
    for (uint32_t i = 0; i < a->nchild; i++)
        same_schema(a->child[i], b->child[i], depth + 1);
    same_schema(a->each, b->each, depth + 1);
}

/* Writes json to a new temporary file; path receives its name (unlink it when done). */
static void write_schema_file(char path[static 32], const char *json)
{
    snprintf(path, 32, "/tmp/s3rig-schema-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, json, strlen(json)), (ssize_t)strlen(json));
    close(fd);
}

static void test_schema_json_roundtrip(void **state)
{
    (void)state;
    static const char *const names[] = {"turok2", "turok1"};
    for (int i = 0; i < 2; i++) {
        struct t2fs_schema *s, *back;
        assert_int_equal(t2fs_schema_builtin(names[i], &s), S3_OK);
        char *json = t2fs_schema_to_json(s), err[256];
        if (t2fs_schema_from_json(json, strlen(json), &back, err, sizeof err) != S3_OK)
            fail_msg("%s: %s", names[i], err);
        same_schema(s, back, 0);
        /* the loaded schema gives the same tree */
        if (i == 0) {
            char path[32];
            write_schema_file(path, json);
            struct fxt *root = fxt_sample(8, 2, true, false);
            size_t size;
            uint8_t *file = fxt_write(root, false, 0, 0, &size);
            struct s3fs_opts o = {0};
            snprintf(o.schema, sizeof o.schema, "%s", path);
            struct s3fs *fs;
            assert_int_equal(s3fs_open_mem(&fs, file, size, &o, err, sizeof err), 0);
            struct expect_list l = {0};
            ex_t2fs(&l, file, size, root, 0, 0);
            ex_remove(&l, "/models"); /* the Turok 2 view comes with the built-in schema only */
            struct probe p = tree_probe(fs);
            ex_check(&l, &p);
            ex_free(&l);
            s3fs_close(fs);
            free(file);
            fxt_free(root);
            unlink(path);
        }
        free(json);
        t2fs_schema_free(s);
        t2fs_schema_free(back);
    }
}

/* Opens file under the schema in json, lists /named and returns the name comparisons and
 * directory lookups its listing cost (t2fs_named_counts). */
static struct s3fs *open_named(const uint8_t *file, size_t size, const char *json, char path[static 32],
                               uint64_t *compares, uint64_t *lookups)
{
    write_schema_file(path, json);
    struct s3fs_opts o = {0};
    snprintf(o.schema, sizeof o.schema, "%s", path);
    struct s3fs *fs = open_mem(file, size, &o, "t2fs file");
    uint64_t c0, l0, c1, l1;
    uint32_t ino;
    assert_int_equal(tree_resolve(fs->tree, "/named", &ino), 0);
    t2fs_named_counts(&c0, &l0);
    assert_int_equal(tree_populate(fs->tree, ino), 0);
    t2fs_named_counts(&c1, &l1);
    *compares = c1 - c0;
    *lookups = l1 - l0;
    return fs;
}

/* Issue 25: /named keeps names unique with a set of the names given in each listing, so
 * a listing costs linear time: a repeated schema's 20,000 children (named by index) cost
 * no directory lookup and a few name comparisons each; 300 fixed children of one schema
 * name are x.bin, x~1.bin, ... x~299.bin (the index after the clash), as before. */
static void test_named_linear(void **state)
{
    (void)state;
    enum { N = 20000, NFIXED = 300 };
    struct fxt **kids = malloc(N * sizeof *kids);
    for (uint32_t i = 0; i < N; i++)
        kids[i] = fxt_raw("leaf", 4);
    struct fxt *root = fxt_branch_v(N, kids);
    free(kids);
    size_t size;
    uint8_t *file = fxt_write(root, false, 0, 0, &size);
    char path[32];
    uint64_t compares, lookups;
    struct s3fs *fs = open_named(file, size,
                                 "{\"name\": \"top\", \"type\": \"repeated\", \"next\": ["
                                 "{\"name\": \"a\", \"type\": \"data\"}, {\"name\": \"b\", \"type\": \"data\"}]}",
                                 path, &compares, &lookups);
    assert_int_equal(lookups, 0);
    assert_true(compares <= 4u * N);
    struct probe p = tree_probe(fs);
    ex_link_is(&p, "/named/19999.bin", "../root/19999.bin");
    s3fs_close(fs);
    unlink(path);
    free(file);
    fxt_free(root);

    struct sbuf json = {0};
    sb_printf(&json, "{\"name\": \"top\", \"type\": \"fixed\", \"next\": [");
    for (uint32_t i = 0; i < NFIXED; i++)
        sb_printf(&json, "%s{\"name\": \"x\", \"type\": \"data\"}", i ? ", " : "");
    sb_printf(&json, "]}");
    kids = malloc(NFIXED * sizeof *kids);
    for (uint32_t i = 0; i < NFIXED; i++)
        kids[i] = fxt_raw("leaf", 4);
    root = fxt_branch_v(NFIXED, kids);
    free(kids);
    file = fxt_write(root, false, 0, 0, &size);
    fs = open_named(file, size, json.p, path, &compares, &lookups);
    assert_int_equal(lookups, 0);
    assert_true(compares <= 8u * NFIXED);
    p = tree_probe(fs);
    for (uint32_t i = 0; i < NFIXED; i++) {
        char name[64], want[64];
        snprintf(name, sizeof name, i ? "/named/x~%u.bin" : "/named/x.bin", i);
        snprintf(want, sizeof want, "../root/%u.bin", i);
        ex_link_is(&p, name, want);
    }
    s3fs_close(fs);
    unlink(path);
    free(file);
    fxt_free(root);
    sb_free(&json);
}

/* A hand-written schema for another shape: names in /named, kinds from the schema. */
static void test_schema_hand_written(void **state)
{
    (void)state;
    const char *json = "{\"name\": \"top\", \"type\": \"fixed\", \"next\": ["
                       " {\"name\": \"things\", \"type\": \"variable\","
                       "  \"next\": {\"name\": \"thing\", \"type\": \"data\", \"data\": {\"array\": 4}}},"
                       " {\"name\": \"pair\", \"type\": \"mixed\", \"pre\": [{\"name\": \"head\", \"type\": \"data\"}],"
                       "  \"next\": {\"name\": \"tail\", \"type\": \"data\"}},"
                       " {\"name\": \"blob\", \"type\": \"data\", \"data\": {\"size\": 8}}]}";
    char path[32];
    write_schema_file(path, json);
    uint32_t four[3] = {1, 2, 3};
    struct fxt *root = fxt_branch(3, fxt_branch(2, fxt_array(4, 3, four, false), fxt_array(4, 1, four, false)),
                                  fxt_branch(3, fxt_raw("HEAD", 4), fxt_raw("t1", 2), fxt_raw("t2", 2)),
                                  fxt_raw("12345678", 8));
    size_t size;
    uint8_t *file = fxt_write(root, false, 0, 0, &size);
    struct s3fs_opts o = {0};
    snprintf(o.schema, sizeof o.schema, "%s", path);
    struct s3fs *fs;
    char err[256];
    assert_int_equal(s3fs_open_mem(&fs, file, size, &o, err, sizeof err), 0);
    struct probe p = tree_probe(fs);
    char *target;
    ex_link_is(&p, "/named/things/1.bin", "../../root/0/1.bin");
    ex_link_is(&p, "/named/pair/head.bin", "../../root/1/0.bin");
    assert_int_equal(p.readlink(p.ctx, "/named/pair/2.bin", &target), 0); /* past "pre": by index */
    free(target);
    ex_link_is(&p, "/named/blob.bin", "../root/2.bin");
    char type[64];
    assert_true(p.getxattr(p.ctx, "/root/0/0.bin", "user.s3rig.type", type, sizeof type) > 0);
    assert_string_equal(type, "t2fs.array[4]x3");
    enum expect_kind k;
    uint64_t sz;
    assert_int_equal(p.stat(p.ctx, "/models", &k, &sz), -ENOENT); /* a file schema: no Turok 2 view */
    close_fixture(fs, file, root);
    unlink(path);
}

static void test_schema_malformed(void **state)
{
    (void)state;
    /* every one is text that is not a schema: FORMAT (issue 31: was just NULL) */
    static const struct {
        const char *json, *want;
    } bad[] = {
        {"{\"name\": \"r\", \"type\": \"fixed\", \"next\": [", "line"},
        {"{\"name\": \"r\", \"type\": \"sideways\"}", "$.type"},
        {"{\"type\": \"fixed\"}", "$: \"name\""},
        {"{\"name\": \"r\", \"type\": \"fixed\", \"next\": [{\"name\": \"a\", \"type\": 3}]}", "$.next[0].type"},
        {"{\"name\": \"r\", \"type\": \"variable\", \"next\": {\"name\": \"a\", \"type\": \"data\","
         " \"data\": {\"array\": \"four\"}}}", "$.next.data"},
        {"[1, 2]", "$: expected a node object"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char err[256];
        struct t2fs_schema *s;
        assert_int_equal(t2fs_schema_from_json(bad[i].json, strlen(bad[i].json), &s, err, sizeof err), S3_ERR_FORMAT);
        assert_null(s);
        if (!strstr(err, bad[i].want))
            fail_msg("schema %zu: '%s' lacks '%s'", i, err, bad[i].want);
    }
    /* a bound of ours, not bad text: 66 nested variable nodes, depths 0 to 65 (64 is the
     * deepest read) */
    char deep[66 * 48 + 64] = "", why[1024]; /* the message holds the JSON path */
    for (int d = 0; d < 66; d++)
        strcat(deep, "{\"name\": \"n\", \"type\": \"variable\", \"next\": ");
    strcat(deep, "null");
    for (int d = 0; d < 66; d++)
        strcat(deep, "}");
    struct t2fs_schema *s;
    assert_int_equal(t2fs_schema_from_json(deep, strlen(deep), &s, why, sizeof why), S3_ERR_LIMIT);
    assert_null(s);
    assert_non_null(strstr(why, "nested deeper than 64 levels"));
    /* a name that is not built in */
    assert_int_equal(t2fs_schema_builtin("turok3", &s), S3_ERR_UNSUPPORTED);
    assert_null(s);
    /* through the mount path: refused with the file name and the JSON path */
    char path[32];
    write_schema_file(path, bad[1].json);
    struct fxt *root = fxt_sample(8, 1, false, false);
    size_t size;
    uint8_t *file = fxt_write(root, false, 0, 0, &size);
    struct s3fs_opts o = {0};
    snprintf(o.schema, sizeof o.schema, "%s", path);
    struct s3fs *fs;
    char err[512];
    assert_open_refused(s3fs_open_mem(&fs, file, size, &o, err, sizeof err), S3_ERR_FORMAT, S3_EXIT_FORMAT);
    assert_non_null(strstr(err, path));
    assert_non_null(strstr(err, "$.type"));
    snprintf(o.schema, sizeof o.schema, "turok9");
    assert_open_refused(s3fs_open_mem(&fs, file, size, &o, err, sizeof err), S3_ERR_FORMAT, S3_EXIT_FORMAT);
    assert_non_null(strstr(err, "not a built-in schema"));
    free(file);
    fxt_free(root);
    unlink(path);
}

/* A Turok 1 shaped file: 11 root children pick the turok1 schema; /named uses its names. */
static void test_turok1_named(void **state)
{
    (void)state;
    uint16_t words[3] = {0x1234, 0x8421, 0};
    struct fxt *section = fxt_branch(3, fxt_raw("sect", 4), fxt_array(2, 3, words, false), fxt_array(4, 0, NULL, false));
    struct fxt *geometry = fxt_branch(2, fxt_raw("info", 4),
                                      fxt_branch(1, fxt_branch(3, fxt_array(2, 0, NULL, false),
                                                               fxt_array(2, 0, NULL, false),
                                                               fxt_branch(1, fxt_branch(1, section)))));
    struct fxt *object = fxt_branch(4, fxt_branch(2, fxt_raw("bounds!!", 8), fxt_array(2, 0, NULL, false)), geometry,
                                    fxt_branch(0), fxt_array(4, 0, NULL, false));
    struct fxt *root = fxt_branch(11, fxt_branch(1, object), fxt_array(80, 0, NULL, false),
                                  fxt_array(2, 1, words, false), fxt_branch(0),
                                  fxt_branch(3, fxt_array(1, 0, NULL, false), fxt_array(1, 0, NULL, false),
                                             fxt_array(1, 0, NULL, false)),
                                  fxt_branch(2, fxt_array(1, 0, NULL, false), fxt_branch(0)), fxt_branch(0),
                                  fxt_branch(3, fxt_array(1, 0, NULL, false), fxt_array(1, 0, NULL, false),
                                             fxt_raw("max", 3)),
                                  fxt_branch(2, fxt_array(1, 0, NULL, false), fxt_array(1, 0, NULL, false)),
                                  fxt_branch(0), fxt_array(1, 0, NULL, false));
    for (int be = 0; be <= 1; be++) {
        size_t size;
        uint8_t *file = fxt_write(root, be, 0, 0, &size);
        struct s3fs *fs = open_mem(file, size, NULL, "t2fs fixture");
        assert_true(!fs->diag.n || !diag_has(&fs->diag, "schema expects"));
        struct probe p = tree_probe(fs);
        uint8_t *buf;
        size_t len;
        assert_int_equal(p.read(p.ctx, "/info", &buf, &len), 0);
        assert_non_null(memmem(buf, len, "schema: turok1\n", 15));
        free(buf);
        ex_link_is(&p, "/named/isGraphicObjects/0/isGeometry/isNodes/0/isParts/0/0/usPStream.bin",
                   "../../../../../../../../../root/0/0/1/1/0/2/0/0/1.bin");
        /* the section's stream {0x1234, 0x8421, 0} and no vertices: no load, so no run can
         * take the words; under either layout the first word is one too many */
        char *sec = "/named/isGraphicObjects/0/isGeometry/isNodes/0/isParts/0/0";
        char path[256];
        enum expect_kind kind;
        uint64_t size0;
        snprintf(path, sizeof path, "%s/commands.txt", sec);
        assert_int_equal(p.stat(p.ctx, path, &kind, &size0), -ENOENT);
        snprintf(path, sizeof path, "%s/triangles.error", sec); /* the section has no vertices */
        assert_int_equal(p.read(p.ctx, path, &buf, &len), 0);
        assert_non_null(memmem(buf, len, "the section has 0", 17));
        assert_non_null(memmem(buf, len, "16 slots, 4-bit fields, flag bit 12: word 0:", 44));
        assert_non_null(memmem(buf, len, "32 slots, 5-bit fields, flag bit 15: word 0:", 44));
        free(buf);
        snprintf(path, sizeof path, "%s/pstream.bin", sec); /* the raw stream stays */
        assert_int_equal(p.read(p.ctx, path, &buf, &len), 0);
        assert_int_equal(len, 6);
        assert_memory_equal(buf, "\x34\x12\x21\x84\0\0", 6); /* stored as LE bytes either way */
        free(buf);
        ex_link_is(&p, "/named/isPersistantCounts/MaxRegionCount.bin", "../../root/7/2.bin");
        enum expect_kind k;
        uint64_t sz;
        assert_int_equal(p.stat(p.ctx, "/named/usObjectAttributes.bin", &k, &sz), 0);
        assert_int_equal(p.stat(p.ctx, "/models/0/nodes/0/parts/0/sections/0/layout", &k, &sz), 0); /* Turok 1 /models */
        char type[64];
        assert_true(p.getxattr(p.ctx, "/root/0/0/1/1/0/2/0/0/1.bin", "user.s3rig.type", type, sizeof type) > 0);
        assert_string_equal(type, "t2fs.array[2]x3");
        s3fs_close(fs);
        free(file);
    }
    fxt_free(root);
}

/* De-interleaving: byte k of element i is stored at k·count + i (the notes' planar order);
 * the record comes out whole. And an empty array whose element size is 2^32-1 (what a
 * mutated file said) is no work at all: the loop once ran over the element size first,
 * billions of empty passes, 1-18 s per listing of such a file (tests/regress keeps it). */
static void test_deinterleave(void **state)
{
    (void)state;
    static const uint8_t planar[] = {0xa0, 0xa1, 0xa2, 0xb0, 0xb1, 0xb2}; /* 3 elements of 2 bytes */
    static const uint8_t want[] = {0xa0, 0xb0, 0xa1, 0xb1, 0xa2, 0xb2};
    uint8_t out[6] = {0};
    t2_deinterleave(planar, 2, 3, out);
    assert_memory_equal(out, want, sizeof want);
    uint8_t one[3] = {0};
    t2_deinterleave(planar, 3, 1, one); /* one element: the bytes in order */
    assert_memory_equal(one, planar, 3);
    uint8_t untouched = 0x5a;
    t2_deinterleave(planar, UINT32_MAX, 0, &untouched);
    assert_int_equal(untouched, 0x5a);
}

/* ---- files cut short: every truncation point of the sample files ---- */

/* What a node of the fixture is in a file cut to `cut` bytes, from its place alone. */
enum cut_state {
    CUT_INSIDE,  /* wholly in the file: shown as in the whole file */
    CUT_OUTSIDE, /* starts at or after the end: N.error only */
    CUT_DIR,     /* a plain branch whose table is in the file: N/ (what is there) and N.error */
    CUT_PARTIAL, /* cut in the middle, not a directory: N.error, its bytes in /unparsed */
};

static uint64_t fx_align8(uint64_t v)
{
    return (v + 7) & ~7ull;
}

static enum cut_state cut_state_of(const struct fxt *n, uint64_t cut)
{
    if (n->pos + n->stored <= cut)
        return CUT_INSIDE;
    if (n->pos >= cut)
        return CUT_OUTSIDE;
    if (n->kind == FXT_BRANCH && !n->compress && n->pos + fx_align8(4 + 4 * ((uint64_t)n->n + 1)) <= cut)
        return CUT_DIR;
    return CUT_PARTIAL;
}

static void cut_expect_text(struct expect_list *l, const char *path, const char *text)
{
    struct expect *e = ex_add(l, EX_FILE, "%s", path);
    e->content = (uint8_t *)strdup(text);
    e->len = strlen(text);
    e->type = "error";
}

/* Whether an expectation of the whole file's /root stays in the cut file: its node (found
 * by the path's indices) is wholly in the file, or it is the directory of a CUT_DIR node. */
static bool cut_keeps(const struct fxt *root, const char *path, uint64_t cut)
{
    if (strncmp(path, "/root/", 6) != 0)
        return true;
    const struct fxt *n = root;
    const char *s = path + 6;
    while (*s) {
        char *end;
        unsigned long i = strtoul(s, &end, 10);
        assert_true(end > s && i < n->n);
        n = n->child[i];
        bool last = *end != '/';
        if (!n->blob) { /* nodes inside compressed data go with the compressed node */
            enum cut_state st = cut_state_of(n, cut);
            if (st == CUT_INSIDE)
                return true;
            if (st != CUT_DIR)
                return false;
            if (last)
                return *end == 0; /* the directory itself, not N.bin or N.rnc */
        }
        s = last ? end + strlen(end) : end + 1;
    }
    return true;
}

/* The .error files (and the /unparsed file) of the nodes the cut reaches, below dir. */
static void cut_expect_errors(struct expect_list *l, const struct fxt *n, const char *dir, const uint8_t *file,
                              uint64_t cut, uint64_t *partial)
{
    for (uint32_t i = 0; i < n->n; i++) {
        const struct fxt *c = n->child[i];
        enum cut_state st = cut_state_of(c, cut);
        if (st == CUT_INSIDE)
            continue;
        char path[512], text[512], up[96];
        snprintf(path, sizeof path, "%s/%u.error", dir, i);
        int k = snprintf(text, sizeof text, "cut short: the node at offset %llu (0x%llx), %zu bytes, ",
                         (unsigned long long)c->pos, (unsigned long long)c->pos, c->stored);
        if (st == CUT_OUTSIDE)
            snprintf(text + k, sizeof text - (size_t)k, "lies past the end of the file (%llu bytes)\n",
                     (unsigned long long)cut);
        else if (st == CUT_DIR)
            snprintf(text + k, sizeof text - (size_t)k,
                     "ends at byte %llu, past the end of the file (%llu bytes); %u/ shows its children that "
                     "lie within the file\n",
                     (unsigned long long)(c->pos + c->stored), (unsigned long long)cut, i);
        else {
            snprintf(up, sizeof up, "/unparsed/0x%llx-0x%llx.bin", (unsigned long long)c->pos,
                     (unsigned long long)(cut - c->pos));
            snprintf(text + k, sizeof text - (size_t)k,
                     "ends at byte %llu, past the end of the file (%llu bytes); its first %llu bytes are %s\n",
                     (unsigned long long)(c->pos + c->stored), (unsigned long long)cut,
                     (unsigned long long)(cut - c->pos), up);
            struct expect *e = ex_add(l, EX_FILE, "%s", up);
            e->len = cut - c->pos;
            e->content = malloc(e->len);
            memcpy(e->content, file + c->pos, e->len);
            e->type = "unparsed";
            e->has_span = true;
            e->off = c->pos;
            e->span_len = e->len;
            assert_true(*partial == cut); /* one node at most is cut in the middle, not a directory */
            *partial = c->pos;
        }
        cut_expect_text(l, path, text);
        if (st == CUT_DIR) {
            snprintf(path, sizeof path, "%s/%u", dir, i);
            cut_expect_errors(l, c, path, file, cut, partial);
        }
    }
}

/* The children of /root/0 (Turok 2 models, Turok 1 graphic objects) as a derived view
 * shows them in the cut file, under dir (/models, /named/NAME): as in the whole file
 * (whole[i], when given) for a whole node, i.error for one that cannot be reached;
 * list_error: the view's .error when the list itself cannot be. */
static void cut_check_list(struct s3fs *fs, const struct fxt *root, uint64_t cut, const char *dir,
                           const char *list_error, struct snap *whole)
{
    const struct fxt *list = root->child[0];
    enum cut_state ls = cut_state_of(list, cut);
    uint32_t ino;
    if (ls == CUT_OUTSIDE || ls == CUT_PARTIAL) {
        if (tree_resolve(fs->tree, list_error, &ino) != 0)
            fail_msg("cut at %llu: no %s", (unsigned long long)cut, list_error);
        return;
    }
    for (uint32_t i = 0; i < list->n; i++) {
        char path[96];
        enum cut_state st = cut_state_of(list->child[i], cut);
        snprintf(path, sizeof path, "%s/%u%s", dir, i, st == CUT_OUTSIDE || st == CUT_PARTIAL ? ".error" : "");
        if (tree_resolve(fs->tree, path, &ino) != 0)
            fail_msg("cut at %llu: no %s", (unsigned long long)cut, path);
        if (st != CUT_INSIDE || !whole)
            continue;
        struct snap s = {0};
        snap_tree(&s, fs->tree, ino);
        snap_assert_equal(&whole[i], &s);
        snap_free(&s);
    }
}

static void cut_case(struct fxt *root, bool be, size_t prefix, const char *list_name)
{
    size_t size;
    uint8_t *file = fxt_write(root, be, prefix, 0, &size);
    uint64_t table_end = prefix + fx_align8(4 + 4 * ((uint64_t)root->n + 1));
    struct s3fs *fs;
    char err[256];
    /* the whole file's /models/i and /named/NAME/i, to compare the whole models of each cut with */
    char named[64], named_error[80];
    snprintf(named, sizeof named, "/named/%s", list_name);
    snprintf(named_error, sizeof named_error, "/named/%s.error", list_name);
    assert_int_equal(s3fs_open_mem(&fs, file, size, NULL, err, sizeof err), 0);
    uint32_t nm = root->child[0]->n;
    struct snap *whole = calloc(2 * nm, sizeof *whole);
    for (uint32_t i = 0; i < 2 * nm; i++) {
        char path[96];
        uint32_t ino;
        snprintf(path, sizeof path, "%s/%u", i < nm ? "/models" : named, i % nm);
        assert_int_equal(tree_resolve(fs->tree, path, &ino), 0);
        snap_tree(&whole[i], fs->tree, ino);
    }
    s3fs_close(fs);
    for (size_t cut = 0; cut < size; cut++) {
        int rc = s3fs_open_mem(&fs, file, cut, NULL, err, sizeof err);
        if (cut < prefix + 8) { /* not even the first offset: nothing says t2fs */
            assert_open_refused(rc, S3_ERR_FORMAT, S3_EXIT_FORMAT);
            continue;
        }
        if (cut < table_end) { /* the root table itself is cut: refused, saying so */
            char want[200];
            snprintf(want, sizeof want,
                     "a t2fs container cut short (%s, root at %zu): its root table ends at byte %llu, the file "
                     "has %zu",
                     be ? "big-endian" : "little-endian", prefix, (unsigned long long)table_end, cut);
            assert_open_refused(rc, S3_ERR_FORMAT, S3_EXIT_FORMAT);
            if (!strstr(err, want))
                fail_msg("cut at %zu: '%s', expected '%s'", cut, err, want);
            continue;
        }
        if (rc)
            fail_msg("cut at %zu: refused: %s", cut, err);
        struct expect_list l = {0};
        ex_t2fs(&l, file, cut, root, prefix, 0);
        for (size_t i = 0; i < l.n;) /* drop what lies past the cut */
            if (cut_keeps(root, l.e[i].path, cut)) {
                i++;
            } else {
                char *p = strdup(l.e[i].path);
                ex_remove(&l, p);
                free(p);
            }
        uint64_t partial = cut; /* where the bytes no file of /root holds start */
        cut_expect_errors(&l, root, "/root", file, cut, &partial);
        struct probe p = tree_probe(fs);
        ex_check(&l, &p);
        ex_free(&l);
        /* /info: once, how much is missing; coverage: all but the partial node's bytes */
        uint32_t ino;
        char info[4096] = {0}, line[300];
        assert_int_equal(tree_resolve(fs->tree, "/info", &ino), 0);
        assert_true(tree_read_ok(fs->tree, ino, 0, info, sizeof info - 1) > 0);
        snprintf(line, sizeof line,
                 "warning: the file is cut short: its root node ends at byte %zu, the file has %zu bytes (%zu "
                 "missing)",
                 prefix + root->stored, cut, prefix + root->stored - cut);
        char *at = strstr(info, line);
        if (!at || strstr(at + strlen(line), "cut short: its root"))
            fail_msg("cut at %zu: /info does not warn once with '%s':\n%s", cut, line, info);
        snprintf(line, sizeof line, "\ncovered_bytes: %llu\nunparsed_bytes: %llu in %d ranges\n",
                 (unsigned long long)partial, (unsigned long long)(cut - partial), partial < cut);
        if (!strstr(info, line))
            fail_msg("cut at %zu: /info lacks '%s':\n%s", cut, line, info);
        /* snapshots at every 11th cut: the whole suite under ASan stays within its timeout */
        cut_check_list(fs, root, cut, "/models", "/models/models.error", cut % 11 == 0 ? whole : NULL);
        cut_check_list(fs, root, cut, named, named_error, cut % 11 == 5 ? whole + nm : NULL);
        assert_true(walk_all(fs, 100000) > 0);
        size_t links;
        if (check_links(fs->tree, false, &links, err, sizeof err))
            fail_msg("cut at %zu: %s", cut, err);
        s3fs_close(fs);
    }
    for (uint32_t i = 0; i < 2 * nm; i++)
        snap_free(&whole[i]);
    free(whole);
    free(file);
}

static void test_t2fs_cut_everywhere(void **state)
{
    (void)state;
    for (int be = 0; be <= 1; be++) {
        struct fxt *t2 = fxt_sample(5, 2, true, be);
        cut_case(t2, be, be ? 8 : 0, "models");
        fxt_free(t2);
        struct fxt *t1 = fxt_t1_sample(be);
        cut_case(t1, be, be ? 0 : 8, "isGraphicObjects");
        fxt_free(t1);
    }
}

/* Detection of a cut root stays strict: an empty child, too many children, a table that
 * is not one. */
static void test_t2fs_cut_detection(void **state)
{
    (void)state;
    struct detect_result r;
    struct mem_src_ctx mc;
    struct s3_src src;
    for (int be = 0; be <= 1; be++) {
        uint8_t f[40] = {0};
        /* 2 children (16 + 16 bytes claimed), the file has 24: a cut t2fs */
        uint32_t w[] = {2, 16, 32, 48};
        for (int i = 0; i < 4; i++)
            put32(f + 4 * i, w[i], be);
        mem_src_init(&src, &mc, f, 24);
        assert_int_equal(detect_format(&src, &r), S3_OK);
        assert_int_equal(r.format, FMT_T2FS);
        assert_true(r.root_cut);
        assert_int_equal(r.big_endian, be);
        /* an empty child (offsets 16, 16): no real root has one */
        put32(f + 8, 16, be);
        mem_src_init(&src, &mc, f, 24);
        assert_int_equal(detect_format(&src, &r), S3_ERR_FORMAT);
        /* the same whole (the file holds all 48 bytes): the strong test allows it */
        mem_src_init(&src, &mc, f, 40);
        put32(f + 12, 40, be);
        assert_int_equal(detect_format(&src, &r), S3_OK);
        assert_false(r.root_cut);
        /* an offset not a multiple of 8, or a first offset that is not the table length */
        uint32_t odd[] = {2, 16, 36, 48}, first[] = {2, 24, 32, 48};
        for (int i = 0; i < 4; i++)
            put32(f + 4 * i, odd[i], be);
        mem_src_init(&src, &mc, f, 24);
        assert_int_equal(detect_format(&src, &r), S3_ERR_FORMAT);
        for (int i = 0; i < 4; i++)
            put32(f + 4 * i, first[i], be);
        assert_int_equal(detect_format(&src, &r), S3_ERR_FORMAT);
        assert_null(strstr(r.why, "cut short"));
    }
    /* more children than a root has: not taken for a cut root */
    size_t n = 65537, len = 8 + 4 * (n + 1);
    uint8_t *big = calloc(1, len);
    put32(big, (uint32_t)n, false);
    for (size_t i = 0; i <= n; i++)
        put32(big + 4 + 4 * i, (uint32_t)(fx_align8(4 + 4 * (n + 1)) + 8 * i), false);
    mem_src_init(&src, &mc, big, len);
    assert_int_equal(detect_format(&src, &r), S3_ERR_FORMAT);
    free(big);
}

/* vertices.txt of a large mesh (issue 32) read through in 128 KiB chunks, held as an open
 * file holds it: each row rendered once (not once per chunk), the records made once (under
 * a cache smaller than them), and every byte the fixture's records in the format's words
 * (hex per byte, a space before every fourth byte but the first). Again with the vertex
 * buffer stored RNC-compressed (a cache with room: the compressed node, expanded by the
 * listing, is kept, so the one production is the records'). */
static void test_vertices_txt_rows_once(void **state)
{
    (void)state;
    const uint32_t verts = 100000; /* 20-byte records: 2 MB, 4.5 MB of text */
    for (int compress = 0; compress < 2; compress++) {
        struct fxt *model = fxt_model_ex(31, 1, 1, false, verts);
        if (compress)
            model->child[1]->child[0]->child[0]->compress = 1;
        struct fxt *root = fxt_branch(1, fxt_branch(1, model));
        size_t size;
        uint8_t *file = fxt_write(root, false, 0, 0, &size);
        struct s3fs_opts o = {.cache_bytes = compress ? 0 : 1u << 20};
        struct s3fs *fs = open_mem(file, size, &o, "big mesh");
        uint32_t ino;
        assert_int_equal(tree_resolve(fs->tree, "/models/0/meshes/0/vertices.txt", &ino), 0);
        const struct fxt *vb = model->child[1]->child[0]->child[0];
        const uint64_t width = 2 * 20 + 4 + 1;
        assert_int_equal(tree_size(fs->tree, ino), verts * width);
        struct cache_stats before, after;
        cache_stats(&fs->cache, &before);
        uint64_t rows = t2fs_models_vertex_rows();
        struct tree_hold *h = tree_hold(fs->tree, ino);
        assert_non_null(h);
        char *buf = malloc(128 << 10);
        uint64_t off = 0;
        for (;;) {
            ssize_t n = (ssize_t)tree_read_ok(fs->tree, ino, off, buf, 128 << 10);
            assert_true(n >= 0);
            if (n == 0)
                break;
            for (ssize_t i = 0; i < n; i++) { /* the expected character, from the records */
                uint64_t row = (off + (uint64_t)i) / width, p = (off + (uint64_t)i) % width;
                char want[64];
                const uint8_t *r = vb->data + row * 20;
                snprintf(want, sizeof want, "%02x%02x%02x%02x %02x%02x%02x%02x %02x%02x%02x%02x %02x%02x%02x%02x "
                         "%02x%02x%02x%02x\n", r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10],
                         r[11], r[12], r[13], r[14], r[15], r[16], r[17], r[18], r[19]);
                if (buf[i] != want[p])
                    fail_msg("byte %llu: '%c', expected '%c'", (unsigned long long)(off + (uint64_t)i), buf[i],
                             want[p]);
            }
            off += (uint64_t)n;
        }
        tree_release(h);
        assert_int_equal(off, verts * width);
        assert_int_equal(t2fs_models_vertex_rows() - rows, verts);
        cache_stats(&fs->cache, &after);
        assert_int_equal(after.produced - before.produced, 1);
        free(buf);
        close_fixture(fs, file, root);
    }
}

static void expect_chunks(struct tree *t, const char *path, const char *want, size_t wlen);

/* The Turok 1 sample with children of section 0 (node 0, part 0) replaced: child k by
 * with[k] where it is not NULL (the section takes it), opened. *file and *root are the
 * caller's to free after s3fs_close. */
static struct s3fs *t1_section_replaced_opts(struct fxt *const with[3], const char *what, uint8_t **file,
                                             struct fxt **root, const struct s3fs_opts *o)
{
    *root = fxt_t1_sample(false);
    struct fxt *sec = (struct fxt *)fxt_t1_sample_section(*root, 0, 0, 0, 0);
    for (int k = 0; k < 3; k++)
        if (with[k]) {
            fxt_free(sec->child[k]);
            sec->child[k] = with[k];
        }
    size_t size;
    *file = fxt_write(*root, false, 0, 0, &size);
    return open_mem(*file, size, o, what);
}

static struct s3fs *t1_section_replaced(struct fxt *const with[3], const char *what, uint8_t **file,
                                        struct fxt **root)
{
    return t1_section_replaced_opts(with, what, file, root, NULL);
}

/* Walks the whole tree (reading every file); then the tree keeps under 64 KiB of texts
 * (*held) and of the views' own state (*kept): no text whose size the file chooses, no
 * copy of a form (issue 32). */
static void walk_keeps_little(struct s3fs *fs, uint64_t *held, uint64_t *kept)
{
    assert_true(walk_all(fs, 1000000) > 0);
    *held = tree_text_bytes(fs->tree);
    *kept = tree_alloc_bytes(fs->tree);
    if (*held >= 64 * 1024)
        fail_msg("the tree keeps %llu bytes of text", (unsigned long long)*held);
    if (*kept >= 64 * 1024)
        fail_msg("the views keep %llu bytes in the tree", (unsigned long long)*kept);
}

/* n Turok 1 vertex records of the fixture's vertex rule (seed), little-endian as the
 * notes lay them out (malloc'd), and the vertices.txt rows the notes' words give them. */
static uint8_t *t1_vertex_records(uint32_t seed, uint32_t n, struct sbuf *want)
{
    uint8_t *rec = malloc((size_t)n * 16);
    assert_non_null(rec);
    for (uint32_t i = 0; i < n; i++) {
        struct fxt_t1_vert x = fxt_t1_vertex(seed, i);
        const uint16_t h[6] = {(uint16_t)x.x, (uint16_t)x.y, (uint16_t)x.z, x.flag, (uint16_t)x.s, (uint16_t)x.t};
        for (int k = 0; k < 6; k++) {
            rec[16 * i + 2 * k] = (uint8_t)h[k];
            rec[16 * i + 2 * k + 1] = (uint8_t)(h[k] >> 8);
        }
        memcpy(rec + 16 * i + 12, x.c, 4);
        sb_printf(want, "%d %d %d %u %d %d %u %u %u %u\n", x.x, x.y, x.z, x.flag, x.s, x.t, x.c[0], x.c[1], x.c[2],
                  x.c[3]);
    }
    return rec;
}

/* A Turok 1 section of 5,000 vertices (vertices.txt past VIEW_TEXT_MAX: rendered on read
 * from the records, a cache item): vertices.txt read through in 128 KiB chunks is every
 * vertex of the fixture in the notes' words, vertices.bin the records, and the tree keeps
 * no text of them. */
static void test_t1_vertices_rendered_on_read(void **state)
{
    (void)state;
    enum { N = 5000 };
    struct sbuf want = {0};
    uint8_t *rec = t1_vertex_records(77, N, &want);
    struct fxt *root;
    uint8_t *file;
    struct s3fs *fs = t1_section_replaced((struct fxt *const[3]){NULL, NULL, fxt_array(16, N, rec, true)},
                                          "big Turok 1 section", &file, &root);
    uint32_t bin;
    const char *dir = "/models/0/nodes/0/parts/0/sections/0";
    char path[128], bin_path[128];
    snprintf(bin_path, sizeof bin_path, "%s/vertices.bin", dir);
    assert_int_equal(tree_resolve(fs->tree, bin_path, &bin), 0);
    assert_true(tree_text_bytes(fs->tree) < 64 * 1024); /* the whole tree so far: no 170 KB text */
    snprintf(path, sizeof path, "%s/vertices.txt", dir);
    expect_chunks(fs->tree, path, want.p, want.len);
    expect_bytes(fs, bin_path, rec, N * 16);
    sb_free(&want);
    free(rec);
    close_fixture(fs, file, root);
}

/* A Turok 1 section of 40,000 vertices under a 1 MiB cache (issue 32): vertices.txt's
 * records (640 KB) are a cache item derived again from the file, never kept in the tree.
 * Read whole, then vertices.bin (640 KB more: the cache lets the records go), then read
 * whole again: derived again, the same bytes as the fixture says, the tree still keeps
 * under 64 KiB and reading added nothing to it. */
static void test_t1_vertices_derived_again(void **state)
{
    (void)state;
    enum { N = 40000 };
    struct sbuf want = {0};
    uint8_t *rec = t1_vertex_records(91, N, &want);
    struct fxt *root;
    uint8_t *file;
    struct s3fs_opts o = {.cache_bytes = 1u << 20};
    struct s3fs *fs = t1_section_replaced_opts((struct fxt *const[3]){NULL, NULL, fxt_array(16, N, rec, true)},
                                               "Turok 1 section of 40,000 vertices", &file, &root, &o);
    uint64_t held, kept; /* no copy of the records nor of each row's end */
    walk_keeps_little(fs, &held, &kept);
    const char *dir = "/models/0/nodes/0/parts/0/sections/0";
    char path[128];
    snprintf(path, sizeof path, "%s/vertices.txt", dir);
    uint64_t derived = view_form_derivations();
    expect_chunks(fs->tree, path, want.p, want.len);
    assert_true(view_form_derivations() > derived);
    snprintf(path, sizeof path, "%s/vertices.bin", dir);
    expect_bytes(fs, path, rec, N * 16);
    struct cache_stats st;
    cache_stats(&fs->cache, &st);
    assert_true(st.evicted > 0);
    derived = view_form_derivations();
    snprintf(path, sizeof path, "%s/vertices.txt", dir);
    expect_chunks(fs->tree, path, want.p, want.len);
    assert_true(view_form_derivations() > derived); /* the records were let go: made again */
    cache_stats(&fs->cache, &st);
    if (st.peak > st.limit)
        fail_msg("the cache held %llu bytes, its bound is %llu", (unsigned long long)st.peak,
                 (unsigned long long)st.limit);
    assert_int_equal(tree_text_bytes(fs->tree), held);
    assert_int_equal(tree_alloc_bytes(fs->tree), kept);
    sb_free(&want);
    free(rec);
    close_fixture(fs, file, root);
}

/* A Turok 2 model whose surface stream, bone indices and pose bone_indices each make a
 * file past VIEW_TEXT_MAX (issue 32): after a walk the tree keeps no text of them (all
 * its texts together stay under 64 KiB), and each reads back, in 128 KiB chunks and from
 * an offset inside a row, exactly what the test's own decoder (simulate) and the
 * fixture's records say. */
static void expect_chunks(struct tree *t, const char *path, const char *want, size_t wlen)
{
    uint32_t ino;
    assert_int_equal(tree_resolve(t, path, &ino), 0);
    if (wlen <= VIEW_TEXT_MAX)
        fail_msg("%s: %zu bytes, not past VIEW_TEXT_MAX", path, wlen);
    assert_int_equal(tree_size(t, ino), wlen);
    char *buf = malloc(128 << 10);
    uint64_t off = 0;
    ssize_t n;
    while ((n = (ssize_t)tree_read_ok(t, ino, off, buf, 128 << 10)) > 0) {
        if (memcmp(buf, want + off, (size_t)n) != 0)
            fail_msg("%s: bytes at %llu differ", path, (unsigned long long)off);
        off += (uint64_t)n;
    }
    assert_int_equal(off, wlen);
    off = wlen / 3 + 1;
    assert_int_equal(tree_read_ok(t, ino, off, buf, 50), 50);
    assert_memory_equal(buf, want + off, 50);
    free(buf);
}

static void test_t2fs_rows_rendered_on_read(void **state)
{
    (void)state;
    enum { TRIS = 15000, N = 12000 };
    struct fxt *model = fxt_model_ex(700, 1, 1, false, 40);
    /* the stream: bone 5, load 30 at slot 0, then triangles over the 30 slots */
    uint16_t *w = malloc((TRIS + 2) * sizeof *w);
    uint8_t *wb = malloc(2 * (TRIS + 2));
    w[0] = 0x4000 | 5;
    w[1] = 0x2000 | 30;
    for (uint32_t i = 0; i < TRIS; i++)
        w[2 + i] = (uint16_t)(0x8000 | (i % 30) | ((i + 7) % 30) << 5 | ((i * 13) % 30) << 10);
    for (uint32_t i = 0; i < TRIS + 2; i++)
        wb[2 * i] = (uint8_t)w[i], wb[2 * i + 1] = (uint8_t)(w[i] >> 8);
    struct fxt **idx = &model->child[1]->child[2]->child[0]->child[0]->child[1];
    fxt_free(*idx);
    *idx = fxt_raw(wb, 2 * (TRIS + 2));
    (*idx)->type = "t2fs.raw";
    struct sim sim = {.bone = -1};
    for (int k = 0; k < 32; k++)
        sim.slot[k] = sim.bone_at[k] = -1;
    char *tri = malloc(40 * TRIS), *bones = malloc(40 * TRIS), *cmds = malloc(40 * (TRIS + 2));
    long first, last;
    simulate(&sim, w, TRIS + 2, tri, bones, cmds, &first, &last);
    /* bone 0's indices and pose 0's bone_indices: N 4-byte records each */
    uint8_t *u = malloc(4 * N), *pairs = malloc(4 * N);
    struct sbuf want_u = {0}, want_pairs = {0};
    for (uint32_t i = 0; i < N; i++) {
        uint32_t x = i * 2654435761u;
        int16_t a = (int16_t)(i * 37u - 30000u), b = (int16_t)(i * 4099u);
        for (int k = 0; k < 4; k++)
            u[4 * i + k] = (uint8_t)(x >> 8 * k);
        pairs[4 * i] = (uint8_t)a, pairs[4 * i + 1] = (uint8_t)((uint16_t)a >> 8);
        pairs[4 * i + 2] = (uint8_t)b, pairs[4 * i + 3] = (uint8_t)((uint16_t)b >> 8);
        sb_printf(&want_u, "%u\n", x);
        sb_printf(&want_pairs, "%d %d\n", a, b);
    }
    struct fxt **bi = &model->child[1]->child[3]->child[0]->child[0];
    fxt_free(*bi);
    *bi = fxt_array(4, N, u, false);
    struct fxt **pi = &model->child[2]->child[0]->child[1];
    fxt_free(*pi);
    *pi = fxt_array(4, N, pairs, false);
    struct fxt *root = fxt_branch(1, fxt_branch(1, model));
    size_t size;
    uint8_t *file = fxt_write(root, false, 0, 0, &size);
    /* 1 MiB of cache: each decoded form (15,000 triangles of 36 bytes, plus marks) fits
     * alone, two do not */
    struct s3fs_opts o = {.cache_bytes = 1u << 20};
    struct s3fs *fs = open_mem(file, size, &o, "t2fs model with long rows");
    uint64_t held, kept; /* no copy of the rows' forms (15,000 triangles, 12,000 values) */
    walk_keeps_little(fs, &held, &kept);
    expect_chunks(fs->tree, "/models/0/surfaces/0/0/triangles.txt", tri, strlen(tri));
    uint64_t derived = view_form_derivations();
    expect_chunks(fs->tree, "/models/0/surfaces/0/0/bones.txt", bones, strlen(bones));
    expect_chunks(fs->tree, "/models/0/surfaces/0/0/commands.txt", cmds, strlen(cmds));
    expect_chunks(fs->tree, "/models/0/bones/0/indices", want_u.p, want_u.len);
    expect_chunks(fs->tree, "/models/0/poses/0/bone_indices", want_pairs.p, want_pairs.len);
    /* triangles.txt's form was let go meanwhile: read whole again, it is derived again
     * from the file and reads the same; the cache never held more than its bound */
    expect_chunks(fs->tree, "/models/0/surfaces/0/0/triangles.txt", tri, strlen(tri));
    assert_true(view_form_derivations() >= derived + 5);
    struct cache_stats st;
    cache_stats(&fs->cache, &st);
    assert_true(st.evicted > 0);
    if (st.peak > st.limit)
        fail_msg("the cache held %llu bytes, its bound is %llu", (unsigned long long)st.peak,
                 (unsigned long long)st.limit);
    assert_int_equal(tree_text_bytes(fs->tree), held); /* reading kept nothing either */
    assert_int_equal(tree_alloc_bytes(fs->tree), kept);
    close_fixture(fs, file, root);
    sb_free(&want_u);
    sb_free(&want_pairs);
    free(u);
    free(pairs);
    free(tri);
    free(bones);
    free(cmds);
    free(w);
    free(wb);
}

/* A Turok 1 section whose stream makes commands.txt and triangles.txt past VIEW_TEXT_MAX
 * (issue 32): 16 vertices, one load into slots 0-15 (16-slot layout), then one run of
 * 12,000 triangle words, the last flagged. The tree keeps no text of them after a walk,
 * and both read back as the layout rules say: slot k holds vertex k. */
static void test_t1_stream_rendered_on_read(void **state)
{
    (void)state;
    enum { W = 12000 };
    uint16_t *w = malloc(W * sizeof *w);
    struct sbuf tri = {0}, cmds = {0};
    sb_printf(&cmds, "load 0..15 -> slot 0\n");
    for (unsigned i = 0; i < W; i++) {
        unsigned a = i % 16, b = (i * 7 + 3) % 16, c = (i * 11 + 5) % 16;
        w[i] = fxt_t1_word(16, a, b, c, i == W - 1);
        sb_printf(&tri, "%u %u %u\n", a, b, c);
        sb_printf(&cmds, "tri %u %u %u\n", a, b, c);
    }
    struct fxt *fresh = fxt_t1_section(w, W, 16, 5, false), *root;
    struct fxt *const with[3] = {NULL, fresh->child[1], fresh->child[2]}; /* its stream and vertices */
    fresh->child[1] = fresh->child[2] = NULL;
    fxt_free(fresh);
    uint8_t *file;
    struct s3fs *fs = t1_section_replaced(with, "Turok 1 section with a long stream", &file, &root);
    uint64_t held, kept; /* nor a copy of the decoded stream: a cache item made again */
    walk_keeps_little(fs, &held, &kept);
    const char *dir = "/models/0/nodes/0/parts/0/sections/0";
    char path[128];
    snprintf(path, sizeof path, "%s/triangles.txt", dir);
    expect_chunks(fs->tree, path, tri.p, tri.len);
    snprintf(path, sizeof path, "%s/commands.txt", dir);
    expect_chunks(fs->tree, path, cmds.p, cmds.len);
    assert_int_equal(tree_text_bytes(fs->tree), held);
    close_fixture(fs, file, root);
    sb_free(&tri);
    sb_free(&cmds);
    free(w);
}

/* Every node of the fixture stored plain. */
static void store_plain(struct fxt *n)
{
    n->compress = 0;
    for (uint32_t i = 0; i < n->n; i++)
        store_plain(n->child[i]);
}

/* The tree's texts after a walk that reads every file. */
static uint64_t text_after_walk(struct fxt *root, const char *what, struct snap *snap)
{
    size_t size;
    uint8_t *file = fxt_write(root, false, 0, 0, &size);
    struct s3fs *fs = open_mem(file, size, NULL, what);
    assert_true(walk_all(fs, 1000000) > 0);
    uint64_t held = tree_text_bytes(fs->tree);
    uint32_t models;
    assert_int_equal(tree_resolve(fs->tree, "/models", &models), 0);
    snap_tree(snap, fs->tree, models);
    s3fs_close(fs);
    free(file);
    return held;
}

/* Files of /models made from nodes inside RNC-compressed nodes (Turok 2's array
 * leaves, indices.bin and info.bin; Turok 1's pstream.bin, section.bin and bounds.bin) are
 * slices of the expanded node through the cache (issue 32), never copies kept in the
 * tree: after a walk reading every file, the tree keeps exactly as many bytes of text as
 * for the same file stored plain, and /models reads the same. */
static void test_models_in_compressed_nodes_are_slices(void **state)
{
    (void)state;
    for (int turok = 1; turok <= 2; turok++) {
        struct fxt *root = turok == 1 ? fxt_t1_sample(false) : fxt_sample(11, 3, true, false);
        struct snap packed = {0}, plain = {0};
        uint64_t a = text_after_walk(root, "compressed nodes", &packed);
        store_plain(root);
        uint64_t b = text_after_walk(root, "the same stored plain", &plain);
        if (a != b)
            fail_msg("Turok %d: the tree keeps %llu bytes of text with compressed nodes, %llu without", turok,
                     (unsigned long long)a, (unsigned long long)b);
        snap_assert_same_content(&packed, &plain);
        snap_free(&packed);
        snap_free(&plain);
        fxt_free(root);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_branch_validity),    cmocka_unit_test(test_array_and_rnc_header),
        cmocka_unit_test(test_schema_turok2),      cmocka_unit_test(test_rnc_vectors),
        cmocka_unit_test(test_rnc_crc16),
        cmocka_unit_test(test_vertices_txt_rows_once),
        cmocka_unit_test(test_t1_vertices_rendered_on_read),
        cmocka_unit_test(test_t2fs_rows_rendered_on_read),
        cmocka_unit_test(test_t1_vertices_derived_again),
        cmocka_unit_test(test_t1_stream_rendered_on_read),
        cmocka_unit_test(test_models_in_compressed_nodes_are_slices),
        cmocka_unit_test(test_rnc_packer_roundtrip), cmocka_unit_test(test_rnc_broken_streams),
        cmocka_unit_test(test_walk_t2fs),          cmocka_unit_test(test_seed_paths),
        cmocka_unit_test(test_t2fs_broken),        cmocka_unit_test(test_t2fs_broken_rnc),
        cmocka_unit_test(test_t2fs_cache_bound),          cmocka_unit_test(test_deinterleave),
        cmocka_unit_test(test_models_view),       cmocka_unit_test(test_models_missing_nodes),
        cmocka_unit_test(test_models_long_lists),       cmocka_unit_test(test_index_stream_errors),
        cmocka_unit_test(test_schema_json_roundtrip), cmocka_unit_test(test_schema_hand_written),
        cmocka_unit_test(test_schema_malformed),  cmocka_unit_test(test_turok1_named),
        cmocka_unit_test(test_named_linear),
        cmocka_unit_test(test_turok1_sections),   cmocka_unit_test(test_turok1_models),
        cmocka_unit_test(test_t2fs_cut_everywhere), cmocka_unit_test(test_t2fs_cut_detection),
    };
    return cmocka_run_group_tests_name("t2fs", tests, NULL, NULL);
}
