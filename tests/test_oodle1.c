/* Oodle1: the shared vectors, stage boundaries, broken streams, and GR2 files whose
 * sections are Oodle1-compressed (vector streams wrapped at test time, and object
 * sections packed by the test encoder: the Sims 3 wrapped-rig case). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "expect.h"
#include "fixture.h"
#include "fixture_gr2obj.h"
#include "fs/open/open.h"
#include "gr2obj_check.h"
#include "oodle1enc.h"
#include "parse/codec/oodle1.h"
#include "testutil.h"
#include "tree_probe.h"

/* first16bit / first8bit of a vector, read from vectors.json. */
static void stops_of(const char *json, const char *name, uint32_t *f16, uint32_t *f8)
{
    char key[64];
    snprintf(key, sizeof key, "\"%s\"", name);
    const char *at = strstr(json, key);
    assert_non_null(at);
    const char *a = strstr(at, "\"first16bit\":"), *b = strstr(at, "\"first8bit\":");
    assert_non_null(a);
    assert_non_null(b);
    *f16 = (uint32_t)strtoul(a + 13, NULL, 10);
    *f8 = (uint32_t)strtoul(b + 12, NULL, 10);
}

struct vec {
    uint8_t *packed, *raw;
    size_t np, nr;
    uint32_t f16, f8;
};

static void load(const char *d, const char *name, struct vec *v)
{
    size_t nj;
    char file[64];
    char *json = (char *)slurp_vector(d, "oodle1", "vectors.json", &nj);
    assert_non_null(json);
    stops_of(json, name, &v->f16, &v->f8);
    free(json);
    snprintf(file, sizeof file, "%s.oodle1", name);
    v->packed = slurp_vector(d, "oodle1", file, &v->np);
    snprintf(file, sizeof file, "%s.raw", name);
    v->raw = slurp_vector(d, "oodle1", file, &v->nr);
    assert_non_null(v->packed);
    assert_non_null(v->raw);
}

static const char *const names[] = {"alice_small", "struct_mixed", "tiny_window", "alice_full"};

static void test_vectors(void **state)
{
    (void)state;
    const char *d = vectors_or_skip();
    for (int i = 0; i < 4; i++) {
        struct vec v;
        load(d, names[i], &v);
        uint8_t *out;
        char err[256];
        if (oodle1_expand(v.packed, v.np, false, v.f16, v.f8, (uint32_t)v.nr, 0, &out, err, sizeof err))
            fail_msg("%s: %s", names[i], err);
        assert_memory_equal(out, v.raw, v.nr);
        free(out);
        /* the stage boundaries matter: the stream is coded with three model sets */
        if (v.f16 > 0 && oodle1_expand(v.packed, v.np, false, v.f16 / 2, v.f8, (uint32_t)v.nr, 0, &out, err,
                                       sizeof err) == 0) {
            assert_memory_not_equal(out, v.raw, v.nr);
            free(out);
        }
        free(v.packed);
        free(v.raw);
    }
}

static void test_params(void **state)
{
    (void)state;
    const char *d = vectors_or_skip();
    struct vec v;
    load(d, "tiny_window", &v);
    struct oodle1_params p[3];
    oodle1_read_params(v.packed, false, p);
    assert_int_equal(p[0].lmax, 256);
    assert_int_equal(p[0].dmax, 3); /* tiny_window: Dmax = 3 */
    free(v.packed);
    free(v.raw);
}

/* Every truncation and random corruption of the small vectors: a clean error or
 * wrong-but-bounded output; never a crash or hang. */
static void test_broken_streams(void **state)
{
    (void)state;
    const char *d = vectors_or_skip();
    for (int i = 0; i < 3; i++) {
        struct vec v;
        load(d, names[i], &v);
        uint8_t *out;
        char err[256];
        for (size_t cut = 0; cut < v.np; cut++) {
            if (oodle1_expand(v.packed, cut, false, v.f16, v.f8, (uint32_t)v.nr, 0, &out, err, sizeof err) == 0)
                free(out); /* zero-extended input may still decode to something */
        }
        uint8_t *q = malloc(v.np);
        unsigned seed = 17;
        for (int k = 0; k < 300; k++) {
            memcpy(q, v.packed, v.np);
            for (int f = 0; f < 3; f++)
                q[rand_r(&seed) % v.np] ^= (uint8_t)(1u << (rand_r(&seed) % 8));
            if (oodle1_expand(q, v.np, false, v.f16, v.f8, (uint32_t)v.nr, 0, &out, err, sizeof err) == 0)
                free(out);
            else
                assert_true(strlen(err) > 0);
        }
        /* Lmax = 0 in a parameter block is refused */
        memcpy(q, v.packed, v.np);
        q[12] = 0;
        q[13] &= 0xFE;
        assert_int_equal(oodle1_expand(q, v.np, false, v.f16, v.f8, (uint32_t)v.nr, 0, &out, err, sizeof err),
                         S3_ERR_FORMAT);
        assert_non_null(strstr(err, "alphabet of 0"));
        /* a huge expanded size is refused before allocating */
        assert_int_equal(oodle1_expand(q, v.np, false, v.f16, v.f8, 0xFFFFFFF0u, 1 << 20, &out, err, sizeof err),
                         S3_ERR_LIMIT);
        assert_non_null(strstr(err, "exceeds the limit"));
        free(q);
        free(v.packed);
        free(v.raw);
    }
}

/* Stages share their models' memory, so a later stage may have fewer MID models than an
 * earlier one (alice_full's blocks reversed: 512, 65, then 33). Wrong parameters decode to
 * garbage or an error, cleanly; the true vector then still decodes exactly. */
static void test_stages_shrinking(void **state)
{
    (void)state;
    const char *d = vectors_or_skip();
    struct vec v;
    load(d, names[3], &v);
    uint8_t *q = malloc(v.np), *out;
    memcpy(q, v.packed, v.np);
    memcpy(q, v.packed + 24, 12);
    memcpy(q + 24, v.packed, 12);
    struct oodle1_params p[3];
    oodle1_read_params(q, false, p);
    assert_true(p[0].dmax / 1024 + 1 > p[1].dmax / 1024 + 1);
    assert_true(p[1].dmax / 1024 + 1 > p[2].dmax / 1024 + 1);
    char err[256] = "";
    if (oodle1_expand(q, v.np, false, v.f16, v.f8, (uint32_t)v.nr, 0, &out, err, sizeof err) == 0) {
        free(out);
    } else { /* the garbage must have reached the third stage, or nothing was shrunk */
        unsigned at;
        assert_int_equal(sscanf(err, "Oodle1: at output byte %u", &at), 1);
        assert_true(at >= v.f8);
    }
    assert_int_equal(oodle1_expand(v.packed, v.np, false, v.f16, v.f8, (uint32_t)v.nr, 0, &out, err, sizeof err), 0);
    assert_memory_equal(out, v.raw, v.nr);
    free(out);
    free(q);
    free(v.packed);
    free(v.raw);
}

static void test_encoder_roundtrip(void **state)
{
    (void)state;
    unsigned seed = 9;
    for (int it = 0; it < 60; it++) {
        uint32_t n = (uint32_t)rand_r(&seed) % (it < 30 ? 400 : 9000);
        uint8_t *in = malloc(n + 1);
        for (uint32_t i = 0; i < n; i++)
            in[i] = it % 3 == 0 ? (uint8_t)rand_r(&seed) : it % 3 == 1 ? (uint8_t)"abcdab"[rand_r(&seed) % 6]
                                                                       : (uint8_t)(i / 9);
        uint32_t f16 = n ? (uint32_t)rand_r(&seed) % (n + 1) : 0;
        uint32_t f8 = f16 + (n > f16 ? (uint32_t)rand_r(&seed) % (n - f16 + 1) : 0);
        size_t cl;
        uint8_t *c = oodle1_encode(in, n, f16, f8, false, &cl), *out;
        char err[256];
        if (oodle1_expand(c, cl, false, f16, f8, n, 0, &out, err, sizeof err))
            fail_msg("round trip %d (%u bytes): %s", it, n, err);
        assert_memory_equal(out, in, n);
        free(out);
        free(c);
        free(in);
    }
}

/* A vector's stream wrapped into a GR2 section: data.bin is the expanded bytes. */
static void test_vector_in_gr2(void **state)
{
    (void)state;
    const char *d = vectors_or_skip();
    struct vec v;
    load(d, "struct_mixed", &v);
    struct fx_section s = {.compression = 2, .data = v.packed, .data_size = (uint32_t)v.np,
                           .expanded_size = (uint32_t)v.nr, .alignment = 4, .first16bit = v.f16, .first8bit = v.f8};
    struct fx_gr2_opts o = {.version = 6, .sig = "le32-old"};
    struct fx_gr2_layout gl;
    size_t size;
    uint8_t *f = fx_build_gr2(&o, &s, 1, &size, &gl);
    struct s3fs *fs = open_mem(f, size, NULL, NULL);
    struct probe p = tree_probe(fs);
    probe_expect_bytes(&p, "/granny/sections/0/data.bin", v.raw, v.nr);
    probe_expect_bytes(&p, "/granny/sections/0/stored.bin", v.packed, v.np);
    ex_holds(&p, "/info", "section 0: oodle1, 4297 stored, 8225 expanded, expanded\n");
    char type[64];
    assert_true(p.getxattr(p.ctx, "/granny/sections/0/data.bin", "user.s3rig.type", type, sizeof type) > 0);
    assert_string_equal(type, "oodle1:gr2.section_data");
    s3fs_close(fs);
    /* a corrupt stream: data.error, the rest stays */
    f[gl.data_offset[0] + 40] ^= 0x5A;
    f[gl.data_offset[0] + 200] ^= 0xA5;
    f[gl.data_offset[0] + 12] = 0; /* and stage 1 gets Lmax = 0 */
    f[gl.data_offset[0] + 13] &= 0xFE;
    fs = open_mem(f, size, NULL, NULL);
    uint32_t ino;
    assert_int_equal(tree_resolve(fs->tree, "/granny/sections/0/data.error", &ino), 0);
    assert_int_equal(tree_resolve(fs->tree, "/granny/sections/0/stored.bin", &ino), 0);
    s3fs_close(fs);
    free(f);
    free(v.packed);
    free(v.raw);
}

/* Object sections stored Oodle1-compressed decode like uncompressed ones. */
static void test_objects_through_oodle1(void **state)
{
    (void)state;
    static const char *const sigs[] = {"le32-old", "le64", "be32"};
    for (int i = 0; i < 3; i++) {
        struct fxg_opts o = {.sig = sigs[i], .version = 6 + (i & 1), .nbones = 11, .oodle1_objects = true};
        struct fxg_result r;
        size_t size;
        uint8_t *f = fxg_build(&o, &size, &r);
        struct s3fs *fs = open_mem(f, size, NULL, sigs[i]);
        struct probe p = tree_probe(fs);
        check_gr2_objects(&p, &r, sigs[i]);
        probe_expect_bytes(&p, "/granny/sections/0/data.bin", r.section, r.section_size);
        s3fs_close(fs);
        free(f);
        free(r.section);
    }
}

/* The Sims 3 case: a wrapped RIG whose Granny section is Oodle1, bone names resolved. */
static void test_wrapped_rig_oodle1(void **state)
{
    (void)state;
    struct fxg_opts go = {.sig = "le32-old", .version = 6, .nbones = 16, .oodle1_objects = true};
    struct fxg_result r;
    size_t size;
    struct fx_rig_layout rl;
    uint8_t *f = fxg_sample_rig(&go, &r, &size, &rl);
    struct s3fs *fs = open_mem(f, size, NULL, NULL);
    struct probe p = tree_probe(fs);
    check_pole_bone(&p, &r, 0);
    uint8_t *buf;
    size_t len;
    assert_int_equal(p.read(p.ctx, "/ik_chains/0/pole.bone/Name", &buf, &len), -ENOTDIR); /* links are not followed */
    char want[128];
    snprintf(want, sizeof want, "%s\n%s\n%s\n", r.bones[5].name, r.bones[6].name, r.bones[7].name);
    probe_expect_bytes(&p, "/ik_target_slots.names", want, strlen(want));
    assert_int_equal(p.read(p.ctx, "/info", &buf, &len), 0);
    assert_non_null(memmem(buf, len, ", expanded\n", 11));
    assert_null(memmem(buf, len, "bone names unavailable", 22));
    free(buf);
    s3fs_close(fs);
    free(f);
    free(r.section);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vectors),          cmocka_unit_test(test_params),
        cmocka_unit_test(test_broken_streams),   cmocka_unit_test(test_encoder_roundtrip),
        cmocka_unit_test(test_vector_in_gr2),    cmocka_unit_test(test_objects_through_oodle1),
        cmocka_unit_test(test_wrapped_rig_oodle1), cmocka_unit_test(test_stages_shrinking),
    };
    return cmocka_run_group_tests_name("oodle1", tests, NULL, NULL);
}
