/* GEOM meshes (Sims 3 v5, Sims 4 v12-15): the parser field by field, every cut, hostile
 * counts and sizes, the whole tree (ex_geom: paths, contents, sizes, spans, types, nothing
 * else; walk_all), the binding to a rig (clear, wrapped, raw Granny, a package's) and
 * mesh.glb read back: per vertex, the (bone name, weight) pairs the rules give. Expected
 * values come from the fixture's tables and the notes' rules, never from the parser. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "alloc_refuse.h"
#include "expect_geom.h"
#include "fixture.h"
#include "fixture_dbpf.h"
#include "fixture_geom.h"
#include "fixture_gr2model.h"
#include "fixture_rig_clear.h"
#include "fs/export/export.h"
#include "fs/export/glb.h"
#include "fs/open/open.h"
#include "fs/views/sims/view_geom.h"
#include "glbread.h"
#include "parse/sims/geom.h"
#include "parse/sims/geom_model.h"
#include "parse/base/rigset.h"
#include "testutil.h"
#include "tree_probe.h"
#include "walk.h"

static const uint32_t versions[] = {5, 12, 13, 14, 15};
#define NVERSIONS (sizeof versions / sizeof versions[0])

/* ---- helpers ---- */

struct built {
    struct fxgeom_opts o;
    struct fxgeom_layout lay;
    uint8_t *file;
    size_t size;
};

static void build(struct built *b, const struct fxgeom_opts *o)
{
    b->o = *o;
    b->file = fxgeom_build(o, &b->size, &b->lay);
}

static int parse(const struct built *b, size_t size, struct geom *g, struct diag *d)
{
    struct mem_src_ctx mc;
    struct s3_src src;
    mem_src_init(&src, &mc, b->file, size);
    char err[256];
    return geom_parse(&src, 1u << 30, g, d, err, sizeof err);
}

/* Issue 31: a refused allocation reaches the caller. For GEOMs of every version (the
 * Sims 4 ones with their tail blocks), a clean geom_parse counts its allocations (N);
 * each is then refused in turn and every such parse fails with S3_ERR_NOMEM: never S3_OK
 * with a part missing (before, refused declarations, indices or tail blocks read as a
 * part that broke, or as none). */
static void test_parse_refused_allocation(void **state)
{
    (void)state;
#ifndef S3_TEST_WRAP_ALLOC
    skip(); /* a sanitizer's runtime owns malloc: the plain build runs this */
#else
    static const uint32_t versions[] = {5, 12, 13, 14, 15};
    for (size_t v = 0; v < sizeof versions / sizeof *versions; v++) {
        struct built b;
        build(&b, &(struct fxgeom_opts){.version = versions[v]});
        struct geom g;
        struct diag d = {0};
        alloc_refuse_start(-1);
        assert_int_equal(parse(&b, b.size, &g, &d), S3_OK);
        long n = alloc_refuse_count();
        assert_true(n >= 3); /* the chunk, its declarations and its indices at least */
        geom_free(&g);
        diag_free(&d);
        for (long k = 0; k < n; k++) {
            alloc_refuse_start(k);
            enum s3_err e = parse(&b, b.size, &g, &d);
            alloc_refuse_start(-1);
            if (e != S3_ERR_NOMEM)
                fail_msg("version %u, allocation %ld of %ld refused: %s", versions[v], k, n, s3_err_str(e));
            diag_free(&d);
        }
        free(b.file);
    }
#endif
}

#ifdef S3_TEST_WRAP_ALLOC
/* The exporters under refusal: export_model_glb (built and measured), export_mesh_obj,
 * export_model_obj and export_skeleton_glb of a skinned GEOM model, and run for an
 * animation's two channels sharing key times (export_channel, then glb_finish). */
enum export_run { RUN_MODEL_GLB, RUN_MODEL_GLB_MEASURED, RUN_MESH_OBJ, RUN_MODEL_OBJ, RUN_SKELETON_GLB, RUN_CHANNELS,
                  RUN_COUNT };

static enum s3_err channels(uint8_t **out, size_t *len, char *err, size_t errlen)
{
    struct glb *g = glb_new();
    struct export_times *times = export_times_new();
    enum s3_err e = S3_ERR_NOMEM;
    if (g && times) {
        float t[3] = {0, 0.5f, 1}, v[12] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
        struct mdl_keys k = {.interp = MDL_LINEAR, .ncomp = 3, .n = 3, .times = t, .values = v};
        int anim = glb_animation(g, "a", 1), a = glb_node(g, "a", 1), b = glb_node(g, "b", 1);
        e = export_channel(g, times, anim, a, MDL_TRANSLATION, &k);
        if (e == S3_OK)
            e = export_channel(g, times, anim, b, MDL_SCALE, &k); /* the times shared */
        if (e == S3_OK)
            e = glb_finish(g, out, len, err, errlen);
    }
    export_times_free(times);
    glb_free(g);
    return e;
}

static enum s3_err export_run(enum export_run r, struct mdl_model *m, uint8_t **out, size_t *len, char *err,
                              size_t errlen)
{
    *out = NULL;
    switch (r) {
    case RUN_MODEL_GLB:
        return export_model_glb(m, out, len, err, errlen);
    case RUN_MODEL_GLB_MEASURED:
        return export_model_glb(m, NULL, len, err, errlen);
    case RUN_MESH_OBJ:
        return export_mesh_obj(&m->mesh[0], out, len, err, errlen);
    case RUN_MODEL_OBJ:
        return export_model_obj(m, out, len, err, errlen);
    case RUN_SKELETON_GLB:
        return export_skeleton_glb(&m->skel, out, len, err, errlen);
    default:
        return channels(out, len, err, errlen);
    }
}
#endif

/* Issue 31: an exporter refused an allocation fails with S3_ERR_NOMEM, never S3_OK with a
 * part left out (before, a refused skin, index buffer or JOINTS_0 made a file without it,
 * and a refused key-time cache entry wrote the times again: another size than measured).
 * A clean run counts its allocations (realloc's growths included); each is then refused
 * in turn. */
static void test_export_refused_allocation(void **state)
{
    (void)state;
#ifndef S3_TEST_WRAP_ALLOC
    skip(); /* a sanitizer's runtime owns malloc: the plain build runs this */
#else
    struct mdl_skeleton sk = {.nbones = FXGEOM_HASHES, .bone = calloc(FXGEOM_HASHES, sizeof *sk.bone)};
    for (int i = 0; i < FXGEOM_HASHES; i++) {
        const char *name = fxgeom_rig_names[i];
        sk.bone[i] = (struct mdl_bone){.name = strdup(name), .name_len = strlen(name), .parent = i - 1};
        sk.bone[i].t[1] = 0.01f;
        sk.bone[i].r[3] = sk.bone[i].s[0] = sk.bone[i].s[1] = sk.bone[i].s[2] = 1;
    }
    struct rig_set rigs = {0};
    char err[256];
    assert_int_equal(rig_set_add(&rigs, "rig", &sk, err, sizeof err), S3_OK);
    struct built b;
    build(&b, &(struct fxgeom_opts){.version = 15});
    struct geom g;
    struct diag d = {0};
    assert_int_equal(parse(&b, b.size, &g, &d), S3_OK);
    struct mdl_model m;
    assert_int_equal(geom_model(&g, &rigs.r[0], &m, NULL, err, sizeof err), S3_OK);
    assert_non_null(m.mesh[0].joints); /* skinned: the skin and JOINTS_0 are refused too */
    for (int r = 0; r < RUN_COUNT; r++) {
        uint8_t *out;
        size_t len;
        alloc_refuse_start(-1);
        enum s3_err e = export_run((enum export_run)r, &m, &out, &len, err, sizeof err);
        long n = alloc_refuse_count();
        assert_int_equal(e, S3_OK);
        free(out);
        assert_true(n >= 1); /* a builder or a text buffer at least: the count is real */
        for (long k = 0; k < n; k++) {
            alloc_refuse_start(k);
            e = export_run((enum export_run)r, &m, &out, &len, err, sizeof err);
            alloc_refuse_start(-1);
            if (e != S3_ERR_NOMEM)
                fail_msg("run %d, allocation %ld of %ld refused: %s (%s)", r, k, n, s3_err_str(e), err);
            assert_null(out);
        }
    }
    mdl_model_free(&m);
    geom_free(&g);
    diag_free(&d);
    free(b.file);
    rig_set_free(&rigs);
#endif
}

/* Issue 31: geom_model says why it made no model. The index-buffer header (docs/formats/
 * geom.md: buffer count u32, bytes per index u8, index count u32) patched: 3 bytes per
 * index is a value the format does not allow (FORMAT); 2^31 - 1 indices run past the
 * chunk (RANGE). The GEOM itself still parses: only its model fails. */
static void test_model_reasons(void **state)
{
    (void)state;
    static const struct {
        int at;        /* byte after the header's start */
        uint32_t value; /* little-endian, 1 or 4 bytes */
        enum s3_err want;
    } cases[] = {{4, 3, S3_ERR_FORMAT}, {5, 0x7fffffff, S3_ERR_RANGE}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct built b;
        build(&b, &(struct fxgeom_opts){.version = 12});
        uint8_t *p = b.file + b.lay.ibuf_pos + cases[i].at;
        for (int k = 0; k < (cases[i].at == 4 ? 1 : 4); k++)
            p[k] = (uint8_t)(cases[i].value >> (8 * k));
        struct geom g;
        struct diag d = {0};
        assert_int_equal(parse(&b, b.size, &g, &d), S3_OK);
        assert_false(g.indices_ok);
        struct mdl_model m;
        char err[256] = "";
        assert_int_equal(geom_model(&g, NULL, &m, NULL, err, sizeof err), cases[i].want);
        assert_string_equal(err, "the indices cannot be read");
        geom_free(&g);
        diag_free(&d);
        free(b.file);
    }
}

/* A file written to a temporary path (for -o rig=): its path, removed by unlink_tmp. */
static char *write_tmp(const void *data, size_t size)
{
    char *path = strdup("/tmp/s3rig-geom-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, data, size), (ssize_t)size);
    close(fd);
    return path;
}

static char *clear_rig_file(void)
{
    struct fxc_opts o = fxc_variant(0);
    struct fxc_layout lay;
    size_t size;
    uint8_t *f = fxc_build(&o, &size, &lay);
    char *path = write_tmp(f, size);
    free(f);
    return path;
}

static struct s3fs *open_with_rig(const struct built *b, const char *rig)
{
    struct s3fs_opts o = {0};
    if (rig)
        snprintf(o.rig, sizeof o.rig, "%s", rig);
    return open_mem(b->file, b->size, &o, "geom");
}

/* ---- hashes and detection ---- */

/* FNV-1 32 of the lower-cased name: the notes' examples. */
static void test_hash(void **state)
{
    (void)state;
    assert_int_equal(fnv1_lower32("b__ROOT__", 9), 0xFEAE6981u);
    assert_int_equal(fnv1_lower32("b__L_Hand__", 11), 0x7CCD6D29u);
    assert_int_equal(fnv1_lower32("B__L_HAND__", 11), 0x7CCD6D29u); /* the case does not matter */
    assert_int_equal(fnv1_lower32("diffusemap", 10), 0x6CC0FD85u);
    assert_int_equal(fnv1_lower32("simskin", 7), 0x548394B9u);
    assert_int_equal(fnv1_lower32("", 0), 0x811C9DC5u);
    /* names of known hashes come back as the notes spell them; unknown ones: none */
    assert_string_equal(geom_param_name(0x6CC0FD85u), "DiffuseMap");
    assert_string_equal(geom_param_name(0x548394B9u), "simskin");
    assert_null(geom_param_name(fxgeom_unknown_param));
}

static void test_detect(void **state)
{
    (void)state;
    for (size_t i = 0; i < NVERSIONS; i++) {
        struct built b;
        build(&b, &(struct fxgeom_opts){.version = versions[i]});
        struct mem_src_ctx mc;
        struct s3_src src;
        mem_src_init(&src, &mc, b.file, b.size);
        struct detect_result r;
        assert_int_equal(detect_format(&src, &r), S3_OK);
        assert_int_equal(r.format, FMT_GEOM);
        /* another chunk tag: no GEOM (and no other format either) */
        b.file[b.lay.geom_pos] = 'X';
        assert_int_equal(detect_format(&src, &r), S3_ERR_FORMAT);
        assert_non_null(strstr(r.why, "GEOM"));
        free(b.file);
    }
    /* a clear RIG (first u32 3 as well) stays a clear RIG */
    struct fxc_opts co = fxc_variant(1);
    struct fxc_layout cl;
    size_t size;
    uint8_t *f = fxc_build(&co, &size, &cl);
    struct mem_src_ctx mc;
    struct s3_src src;
    mem_src_init(&src, &mc, f, size);
    struct detect_result r;
    assert_int_equal(detect_format(&src, &r), S3_OK);
    assert_int_equal(r.format, FMT_RIG_CLEAR);
    free(f);
}

/* ---- the parser ---- */

static void check_decls(const struct geom *g, const struct built *b)
{
    assert_int_equal(g->ndecls, b->lay.ndecls);
    assert_int_equal(g->stride, b->lay.stride);
    for (uint32_t i = 0; i < g->ndecls; i++) {
        assert_int_equal(g->decl[i].usage, b->lay.decl[i].usage);
        assert_int_equal(g->decl[i].type, b->lay.decl[i].type);
        assert_int_equal(g->decl[i].size, b->lay.decl[i].size);
        assert_int_equal(g->decl[i].offset, b->lay.decl_offset[i]);
        assert_int_equal(g->decl[i].uv_set, b->lay.decl[i].uv_set);
        assert_true(g->decl[i].ok);
    }
}

static void check_vertices(const struct geom *g, const struct built *b)
{
    assert_true(g->verts_ok);
    assert_int_equal(g->vert_pos, b->lay.vert_pos);
    const struct geom_decl *p = geom_find(g, GEOM_POSITION, -1), *n = geom_find(g, GEOM_NORMAL, -1);
    const struct geom_decl *bo = geom_find(g, GEOM_BONES, -1), *w = geom_find(g, GEOM_WEIGHTS, -1);
    assert_non_null(p);
    assert_non_null(n);
    for (uint32_t v = 0; v < FXGEOM_VERTS; v++) {
        for (unsigned k = 0; k < 3; k++) {
            assert_true(geom_value(g, p, v, k) == fxgeom_pos[v][k]);
            assert_true(geom_value(g, n, v, k) == fxgeom_nrm[v][k]);
        }
        for (int set = 0; set < (int)b->lay.nuv; set++)
            for (unsigned k = 0; k < 2; k++)
                assert_true(geom_value(g, geom_find(g, GEOM_UV, set), v, k) == fxgeom_uv[set][v][k]);
        for (unsigned k = 0; k < 4; k++) {
            assert_true(geom_value(g, bo, v, k) == fxgeom_bones[v][k]);
            float want = b->o.version == 5 ? fxgeom_wfloats[v][k] : fxgeom_wbytes[v][k];
            assert_true(geom_value(g, w, v, k) == want);
        }
    }
    assert_null(geom_find(g, GEOM_UV, (int)b->lay.nuv));
}

static void check_tail(const struct geom *g, const struct built *b)
{
    uint32_t v = b->o.version;
    assert_int_equal(g->skin.present, v == 5);
    if (v == 5) {
        assert_int_equal(g->skin_index, 2);
        assert_int_equal(g->skin.pos, b->lay.skin.pos);
    }
    assert_int_equal(g->uv_stitches.present, v >= 12);
    if (v >= 12) {
        assert_int_equal(g->uv_stitches.count, 3);
        assert_int_equal(g->uv_stitches.pos, b->lay.uv_stitches.pos);
        assert_int_equal(g->uv_stitches.size, b->lay.uv_stitches.size);
        for (int i = 0; i < 3; i++) {
            assert_int_equal(g->uv_stitch[i].vertex, fxgeom_uv_stitches[i].vertex);
            assert_int_equal(g->uv_stitch[i].count, fxgeom_uv_stitches[i].count);
            for (uint32_t k = 0; k < fxgeom_uv_stitches[i].count; k++) {
                assert_true(g->uv_stitch[i].uv[2 * k] == fxgeom_uv_stitches[i].uv[k][0]);
                assert_true(g->uv_stitch[i].uv[2 * k + 1] == fxgeom_uv_stitches[i].uv[k][1]);
            }
        }
        /* slot rays: 63-byte records before version 14, 66-byte ones from it */
        assert_int_equal(g->ray_size, v >= 14 ? 66 : 63);
        assert_int_equal(g->slot_rays.count, 2);
        assert_int_equal(g->slot_rays.size, b->lay.slot_rays.size);
        assert_int_equal(g->ray[0].slot, v >= 14 ? b->lay.hash[0] : 4u);
        assert_int_equal(g->ray[1].tri[2], 4);
        assert_true(g->ray[0].bary[1] == 0.5f && g->ray[0].distance == 0.125f);
        assert_true(g->ray[1].rotation[1] == 0.7071068f && g->ray[1].position[1] == 0.9f);
        assert_int_equal(g->ray[0].pivot, v >= 14 ? 0u : 0xFFu);
        assert_int_equal(g->ray[1].pivot, v >= 14 ? b->lay.hash[2] : 2u);
    }
    assert_int_equal(g->seams.present, v >= 13);
    for (uint32_t i = 0; v >= 13 && i < 3; i++) {
        assert_int_equal(g->seam[i].vertex, fxgeom_seams[i][0]);
        assert_int_equal(g->seam[i].word, fxgeom_seams[i][1]);
    }
    assert_int_equal(g->bones.count, FXGEOM_HASHES);
    assert_int_equal(g->bones.pos, b->lay.bones.pos);
    for (int i = 0; i < FXGEOM_HASHES; i++)
        assert_int_equal(g->bone_hash[i], b->lay.hash[i]);
    assert_int_equal(g->states.present, v >= 15);
    for (int i = 0; v >= 15 && i < 2; i++) {
        assert_int_equal(g->state[i].state, fxgeom_states[i][0]);
        assert_int_equal(g->state[i].start, fxgeom_states[i][1]);
        assert_int_equal(g->state[i].min_vertex, fxgeom_states[i][2]);
        assert_int_equal(g->state[i].vertex_count, fxgeom_states[i][3]);
        assert_int_equal(g->state[i].primitive_count, fxgeom_states[i][4]);
    }
    assert_int_equal(g->tgis.count, FXGEOM_TGIS);
    assert_int_equal(g->tgis.pos, b->lay.tgis.pos);
    for (int i = 0; i < FXGEOM_TGIS; i++) {
        assert_int_equal(g->tgi[i].type, fxgeom_tgi[i][0]);
        assert_int_equal(g->tgi[i].group, fxgeom_tgi[i][1]);
        assert_int_equal(g->tgi[i].instance, fxgeom_tgi_instance[i]);
    }
    /* the sequential parse ends exactly where the TGI list starts */
    assert_int_equal(g->pos + g->tail_end, b->lay.tgis.pos);
    assert_int_equal(g->seq_end, g->tail_end);
}

static void check_material(const struct geom *g, const struct built *b)
{
    assert_true(g->has_material);
    assert_int_equal(g->shader, 0x548394B9u);
    const struct geom_mtnf *m = &g->mtnf;
    assert_string_equal(m->err, "");
    assert_int_equal(m->pos, b->lay.material_pos);
    assert_int_equal(m->size, b->lay.material_size);
    assert_int_equal(m->tag, 0x464E544Du);
    assert_int_equal(m->nparams, FXGEOM_PARAMS);
    assert_int_equal(16 + 16 * FXGEOM_PARAMS + m->data_size, m->size);
    for (int i = 0; i < FXGEOM_PARAMS; i++) {
        const struct geom_param *p = &m->param[i];
        assert_int_equal(p->name_hash, fxgeom_param_hash(i));
        assert_int_equal(p->type, fxgeom_param_type[i]);
        assert_int_equal(p->count, fxgeom_param_count[i]);
        assert_true(p->data_ok);
        assert_int_equal(p->data_pos, b->lay.param_data_pos[i]);
        if (fxgeom_param_names[i])
            assert_string_equal(geom_param_name(p->name_hash), fxgeom_param_names[i]);
    }
}

/* Every field of every version, as the builder wrote it, with no warning. */
static void test_parse_fields(void **state)
{
    (void)state;
    for (size_t i = 0; i < NVERSIONS; i++) {
        struct built b;
        build(&b, &(struct fxgeom_opts){.version = versions[i]});
        struct geom g;
        struct diag d = {0};
        assert_int_equal(parse(&b, b.size, &g, &d), 0);
        if (d.n)
            fail_msg("v%u: warning %s", versions[i], d.msg[0]);
        const struct geom_rcol *r = &g.rcol;
        assert_int_equal(r->version, 3);
        assert_int_equal(r->nchunks, 1);
        assert_int_equal(r->nexternal, 0);
        assert_int_equal(r->chunk_key[0].type, GEOM_TYPE);
        assert_int_equal(r->chunk_key[0].instance, 0x00C0FFEE0BADF00Dull);
        assert_int_equal(r->chunk_pos[0], b.lay.geom_pos);
        assert_int_equal(r->chunk_len[0], b.lay.geom_size);
        assert_int_equal(r->size, b.lay.rcol_size);
        assert_int_equal(g.pos, b.lay.geom_pos);
        assert_int_equal(g.size, b.lay.geom_size);
        assert_int_equal(g.version, versions[i]);
        assert_int_equal(g.sims3, versions[i] == 5);
        assert_int_equal(g.tgi_offset, b.lay.tgis.pos - b.lay.geom_pos - 12);
        assert_int_equal(g.tgi_size, 4 + 16 * FXGEOM_TGIS);
        check_material(&g, &b);
        assert_int_equal(g.fields_pos, b.lay.fields_pos);
        assert_int_equal(g.nverts, FXGEOM_VERTS);
        check_decls(&g, &b);
        check_vertices(&g, &b);
        assert_true(g.indices_ok);
        assert_int_equal(g.index_size, b.lay.index_size);
        assert_int_equal(g.index_count, FXGEOM_TRIS * 3);
        assert_int_equal(g.index_pos, b.lay.index_pos);
        for (int k = 0; k < FXGEOM_TRIS * 3; k++)
            assert_int_equal(g.index[k], fxgeom_index[k]);
        assert_int_equal(geom_triangles(&g), FXGEOM_TRIS);
        assert_string_equal(g.tri_err, "");
        check_tail(&g, &b);
        geom_free(&g);
        diag_free(&d);
        free(b.file);
    }
}

/* No material (shader 0), and the RCOL's stored position and length disagreeing. */
static void test_parse_variants(void **state)
{
    (void)state;
    struct built b;
    build(&b, &(struct fxgeom_opts){.version = 13, .no_material = true});
    struct geom g;
    struct diag d = {0};
    assert_int_equal(parse(&b, b.size, &g, &d), 0);
    assert_false(g.has_material);
    assert_int_equal(d.n, 0);
    check_vertices(&g, &b);
    check_tail(&g, &b);
    geom_free(&g);
    /* stored length one short, stored position one past: read as s4pi does, both said */
    put32(b.file + 0x28, (uint32_t)b.lay.geom_size - 1, false);
    assert_int_equal(parse(&b, b.size, &g, &d), 0);
    assert_int_equal(g.size, b.lay.geom_size);
    assert_true(diag_has(&d, "stored length"));
    geom_free(&g);
    put32(b.file + 0x24, (uint32_t)b.lay.geom_pos + 1, false);
    assert_int_equal(parse(&b, b.size, &g, &d), 0);
    assert_int_equal(g.pos, b.lay.geom_pos);
    assert_true(diag_has(&d, "stored position"));
    check_tail(&g, &b);
    geom_free(&g);
    diag_free(&d);
    free(b.file);
    /* an unknown version: read with the nearest layout and said */
    build(&b, &(struct fxgeom_opts){.version = 16});
    assert_int_equal(parse(&b, b.size, &g, &d), 0);
    assert_true(diag_has(&d, "version 16"));
    assert_int_equal(g.states.count, 2);
    assert_int_equal(g.pos + g.tail_end, b.lay.tgis.pos);
    geom_free(&g);
    diag_free(&d);
    free(b.file);
}

/* Every cut of every version: the header cut refuses the file in one line; past it the
 * parse succeeds with what is there, and the tree walks (walk_cuts). The TGI list is at
 * the end, so a cut file has tgis.error and the parts cut say why. */
static void test_cuts(void **state)
{
    (void)state;
    for (size_t i = 0; i < NVERSIONS; i++) {
        struct built b;
        build(&b, &(struct fxgeom_opts){.version = versions[i]});
        for (size_t cut = 0; cut < b.size; cut++) {
            struct geom g;
            struct diag d = {0};
            int rc = parse(&b, cut, &g, &d);
            if (cut < b.lay.geom_pos + 20) {
                assert_int_equal(rc, S3_ERR_RANGE);
            } else {
                assert_int_equal(rc, 0);
                assert_true(g.tgis.err[0] != 0); /* the TGI list is the last part */
                assert_true(g.pos + g.seq_end <= cut);
                /* a part is there exactly when the cut leaves it whole */
                uint64_t verts_end = b.lay.vert_pos + (uint64_t)FXGEOM_VERTS * b.lay.stride;
                assert_int_equal(g.verts_ok, cut >= verts_end);
                assert_int_equal(g.indices_ok, cut >= b.lay.index_pos + (uint64_t)b.lay.index_size * 12);
                assert_int_equal(g.bones.count, cut >= b.lay.bones.pos + b.lay.bones.size ? FXGEOM_HASHES : 0);
                if (cut >= b.lay.tgis.pos) /* the tail whole: read to where the TGI list starts */
                    assert_int_equal(g.pos + g.seq_end, b.lay.tgis.pos);
                geom_free(&g);
            }
            diag_free(&d);
        }
        walk_cuts(b.file, b.size, 0, 1, 100000);
        free(b.file);
    }
}

/* A count or size that the bytes cannot hold: that part's error, no allocation it drives,
 * the rest of the tree there. */
static void test_hostile_counts(void **state)
{
    (void)state;
    struct built b;
    build(&b, &(struct fxgeom_opts){.version = 15});
    const struct fxgeom_layout *L = &b.lay;
    struct {
        uint64_t at;
        uint32_t value;
        const char *needle; /* in the part's error */
    } cases[] = {
        {L->material_pos - 4, 0xFFFFFFF0u, "material"},
        {L->material_pos + 12, 0x10000000u, "parameters do not fit"},
        {L->param_pos[2] + 12, 0x7FFFFFF0u, NULL}, /* a data offset past the block: that parameter */
        {L->fields_pos + 12, 0x40000000u, "declarations"},
        {L->fields_pos + 8, 0x40000000u, "vertices"},
        {L->ibuf_pos + 5, 0x40000000u, "indices"},
        {L->ibuf_pos + 4, 3, "bytes per index"},
        {L->uv_stitches.pos, 0x40000000u, "UV stitches"},
        {L->uv_stitches.pos + 8, 0x40000000u, "pairs"},
        {L->seams.pos, 0x40000000u, "seam stitches"},
        {L->slot_rays.pos, 0x40000000u, "slot rays"},
        {L->bones.pos, 0x40000000u, "bone hashes"},
        {L->states.pos, 0x40000000u, "geometry states"},
        {L->tgis.pos, 0x40000000u, "TGI list"},
        {L->geom_pos + 8, 0x7FFFFFF0u, "TGI-list offset"},
        {0x10, 0x40000000u, NULL}, /* the RCOL chunk count: not a GEOM any more */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        uint8_t *f = malloc(b.size);
        memcpy(f, b.file, b.size);
        if (cases[c].at == L->ibuf_pos + 4)
            f[cases[c].at] = (uint8_t)cases[c].value;
        else
            put32(f + cases[c].at, cases[c].value, false);
        struct built h = b;
        h.file = f;
        struct geom g;
        struct diag d = {0};
        int rc = parse(&h, h.size, &g, &d);
        if (cases[c].at == 0x10) {
            assert_int_equal(rc, S3_ERR_RANGE);
        } else {
            assert_int_equal(rc, 0);
            if (cases[c].needle) {
                const char *errs[] = {g.mtnf.err, g.decl_err, g.vert_err, g.index_err, g.uv_stitches.err,
                                      g.seams.err, g.slot_rays.err, g.bones.err, g.states.err, g.tgis.err};
                bool found = false;
                for (size_t k = 0; k < sizeof errs / sizeof errs[0]; k++)
                    found = found || strstr(errs[k], cases[c].needle);
                if (!found)
                    fail_msg("case %zu: no error says '%s'", c, cases[c].needle);
            } else {
                assert_false(g.mtnf.param[2].data_ok);
                assert_true(diag_has(&d, "run past the block"));
            }
            /* counts kept are what the bytes hold */
            assert_true((uint64_t)g.bones.count * 4 <= h.size);
            assert_true((uint64_t)g.uv_stitches.count * 8 <= h.size);
            assert_true((uint64_t)g.mtnf.nparams * 16 <= h.size);
            geom_free(&g);
            struct s3fs *fs = open_mem(f, h.size, NULL, "hostile GEOM");
            assert_true(walk_all(fs, 100000) > 5);
            s3fs_close(fs);
        }
        diag_free(&d);
        free(f);
    }
    /* a declaration of 0 bytes: vertices.bin, but no per-element vertices.csv */
    b.file[L->decl_pos + 8] = 0;
    struct s3fs *fs = open_mem(b.file, b.size, NULL, "0-byte declaration");
    expect_has(fs, "/geom/vertices.error", "a declaration of 0 bytes");
    assert_false(path_exists(fs, "/geom/vertices.csv"));
    assert_true(path_exists(fs, "/geom/vertices.bin"));
    assert_true(walk_all(fs, 100000) > 5);
    s3fs_close(fs);
    free(b.file);
}

/* A version 12 GEOM of no vertices whose material has nparams parameters and whose bone
 * list has nhashes entries, each named by the callbacks (large hostile lists). */
static uint8_t *long_lists(uint32_t nparams, uint32_t (*param)(uint32_t), uint32_t nhashes,
                           uint32_t (*hash)(uint32_t), size_t *size)
{
    struct fxbuf b = {0};
    static const uint32_t rcol[] = {3, 0, 0, 0, 1, 0, 0, 0x015A1849, 0, 0x2C, 0};
    for (size_t i = 0; i < sizeof rcol / sizeof rcol[0]; i++)
        fx_u32(&b, rcol[i]);
    fx_put(&b, "GEOM", 4);
    fx_u32(&b, 12);
    fx_u32(&b, 0); /* the TGI-list offset, patched */
    fx_u32(&b, 4);
    fx_u32(&b, fxc_hash("simskin"));
    fx_u32(&b, 16 + 16 * nparams);
    fx_put(&b, "MTNF", 4);
    fx_u32(&b, 0);
    fx_u32(&b, 0);
    fx_u32(&b, nparams);
    for (uint32_t i = 0; i < nparams; i++) {
        fx_u32(&b, param(i));
        fx_u32(&b, 1);
        fx_u32(&b, 0);
        fx_u32(&b, 16);
    }
    static const uint32_t empty[] = {0, 0, 0, 0, 1}; /* merge, sort, 0 vertices, 0 declarations, 1 buffer */
    for (size_t i = 0; i < 5; i++)
        fx_u32(&b, empty[i]);
    fx_u8(&b, 2);
    fx_u32(&b, 0); /* no indices */
    fx_u32(&b, 0); /* no UV stitches */
    fx_u32(&b, 0); /* no slot rays */
    fx_u32(&b, nhashes);
    for (uint32_t i = 0; i < nhashes; i++)
        fx_u32(&b, hash(i));
    fx_patch_u32(&b, 0x2C + 8, (uint32_t)(b.len - 0x2C - 12));
    fx_u32(&b, 0); /* the TGI list: empty */
    *size = b.len;
    return b.p;
}

static uint32_t same_hash(uint32_t i)
{
    (void)i;
    return 0x6CC0FD85u; /* DiffuseMap */
}

static uint32_t distinct_hash(uint32_t i)
{
    return 0x10000000u + i * 7919u;
}

/* The GEOM views' work since the last call (geom_view_counts), into *d. */
static void work_since(struct geom_view_counts *last, struct geom_view_counts *d)
{
    struct geom_view_counts now;
    geom_view_counts(&now);
    *d = (struct geom_view_counts){now.lookups - last->lookups, now.compares - last->compares,
                                   now.repair_faces - last->repair_faces};
    *last = now;
}

/* Comparisons a sort of n items may make: n log2 n (rounded up), the bound of a merge sort. */
static uint64_t sort_bound(uint64_t n)
{
    uint64_t log2n = 0;
    while ((1ull << log2n) < n)
        log2n++;
    return n * log2n;
}

/* Long hostile lists are worked through in work that follows their length, counted:
 * 200 000 parameters of one name (unique directory names by sorting, not by looking back:
 * the sort's comparisons, and the tree's name probes when it adds them), 200 000 bone
 * hashes no rig has, distinct or all one (the missing ones named by sorting; one lookup
 * per hash for the binding's report and one for bones.csv; the rig picked by looking up
 * its own bones, rigset.h). A pass looking back over these lists would make some 2 x 10^10
 * comparisons. */
static void test_long_lists(void **state)
{
    (void)state;
    char *rig = clear_rig_file();
    enum { N = 200000 };
    struct geom_view_counts last, d;
    geom_view_counts(&last);
    size_t size;
    uint8_t *f = long_lists(N, same_hash, N, distinct_hash, &size);
    struct built b = {.file = f, .size = size};
    struct s3fs *fs = open_with_rig(&b, rig);
    uint64_t probes = tree_name_probes(fs->tree);
    assert_true(path_exists(fs, "/geom/material/DiffuseMap"));
    assert_true(path_exists(fs, "/geom/material/DiffuseMap~2"));
    assert_true(path_exists(fs, "/geom/material/DiffuseMap~200000"));
    assert_true(path_exists(fs, "/geom/bones.csv"));
    probes = tree_name_probes(fs->tree) - probes;
    if (probes > 4ull * N)
        fail_msg("%llu name probes for %d parameter directories", (unsigned long long)probes, N);
    work_since(&last, &d);
    assert_int_equal(d.lookups, 2 * N); /* the report's missing hashes, bones.csv */
    if (d.compares > 2 * sort_bound(N)) /* the parameters by hash, the missing hashes */
        fail_msg("%llu comparisons for two lists of %d", (unsigned long long)d.compares, N);
    assert_true(d.compares >= N); /* counted at all */
    expect_has(fs, "/info", "warning: 200000 bone hashes are not in the rig (0x10000000 0x10001eef");
    expect_has(fs, "/info", "and 199968 more)");
    s3fs_close(fs);
    free(f);
    f = long_lists(1, same_hash, N, same_hash, &size);
    b = (struct built){.file = f, .size = size};
    fs = open_with_rig(&b, rig);
    expect_has(fs, "/info", "warning: 1 bone hashes are not in the rig (0x6cc0fd85)");
    expect_has(fs, "/info", "rig_bones: 6 (0 of the 200000 hashes found)");
    work_since(&last, &d);
    assert_int_equal(d.lookups, N); /* the report's missing hashes (bones.csv not listed) */
    if (d.compares > sort_bound(N))
        fail_msg("%llu comparisons sorting %d equal hashes", (unsigned long long)d.compares, N);
    s3fs_close(fs);
    free(f);
    unlink(rig);
    free(rig);
}

/* Zero-length normals rebuilt from the faces around them in one pass over the triangles:
 * a grid of 64 x 1,000 vertices whose every normal is zero (so every triangle touches a
 * vertex to repair) makes the repair go through each of its 125,874 triangles once per
 * model made: the binding's report at opening, the measures of mesh.glb and mesh.obj when
 * the root is listed, the build of mesh.obj when it is read. The faces around a vertex are
 * never searched for (a pass over the triangles per vertex: 8 x 10^9 face visits). */
static void test_zero_normals_linear(void **state)
{
    (void)state;
    char *rig = clear_rig_file();
    struct built b;
    build(&b, &(struct fxgeom_opts){.version = 15, .grid_cols = 64, .grid_rows = 1000});
    uint32_t nverts = 64 * 1000, ntris = 2 * 63 * 999, zeroed = 0;
    for (uint32_t k = 0; k < b.lay.ndecls; k++)
        if (b.lay.decl[k].usage == 2) /* the normal: 3 floats */
            for (uint32_t i = 0; i < nverts; i++, zeroed++)
                memset(b.file + b.lay.vert_pos + (uint64_t)i * b.lay.stride + b.lay.decl_offset[k], 0, 12);
    assert_int_equal(zeroed, nverts);
    struct geom_view_counts last, d;
    geom_view_counts(&last);
    struct s3fs *fs = open_with_rig(&b, rig);
    work_since(&last, &d); /* the report */
    assert_int_equal(d.repair_faces, ntris);
    assert_int_equal(d.lookups, 2 * FXGEOM_HASHES); /* the missing hashes, then the map */
    char want[120];
    snprintf(want, sizeof want, "warning: %u zero-length normals", nverts);
    expect_has(fs, "/info", want);
    work_since(&last, &d); /* the two exports measured */
    assert_int_equal(d.repair_faces, 2ull * ntris);
    size_t len;
    free(read_path(fs, "/mesh.obj", &len));
    work_since(&last, &d); /* mesh.obj built */
    assert_int_equal(d.repair_faces, ntris);
    s3fs_close(fs);
    free(b.file);
    unlink(rig);
    free(rig);
}

/* ---- the tree ---- */

/* The default hash list bound to the clear RIG fixture: entry i names fxgeom_rig_names[i]. */
static const char *const *bound_names(const struct fxgeom_opts *o, const char **out)
{
    for (int i = 0; i < FXGEOM_HASHES; i++)
        out[i] = o->missing_hash && i == 5 ? NULL : fxgeom_rig_names[i];
    return out;
}

static void check_tree(const struct built *b, const char *rig)
{
    struct s3fs *fs = open_with_rig(b, rig);
    struct expect_list l = {0};
    const char *names[FXGEOM_HASHES];
    ex_geom(&l, b->file, b->size, &b->o, &b->lay, rig ? bound_names(&b->o, names) : NULL);
    struct probe p = tree_probe(fs);
    ex_check(&l, &p);
    ex_free(&l);
    char want[600];
    snprintf(want, sizeof want, "\ngeom_version: %u\ngame: The Sims %d\n", b->o.version, b->o.version == 5 ? 3 : 4);
    expect_has(fs, "/info", want);
    snprintf(want, sizeof want, "\nvertices: %d\ntriangles: %d\nbones: %d\n", FXGEOM_VERTS, FXGEOM_TRIS,
             FXGEOM_HASHES);
    expect_has(fs, "/info", want);
    if (rig) {
        char *abs = realpath(rig, NULL);
        snprintf(want, sizeof want, "\nrig: %s\n", abs);
        free(abs);
    } else {
        snprintf(want, sizeof want, "\nrig: none\n");
    }
    expect_has(fs, "/info", want);
    expect_has(fs, "/info", "\ncovered_bytes: ");
    snprintf(want, sizeof want, "covered_bytes: %zu\nunparsed_bytes: 0 in 0 ranges\nwarnings: 0\n", b->size);
    expect_has(fs, "/info", want);
    assert_true(walk_all(fs, 100000) > 30);
    size_t links;
    char why[256];
    assert_int_equal(check_links(fs->tree, false, &links, why, sizeof why), 0);
    s3fs_close(fs);
}

static void test_tree(void **state)
{
    (void)state;
    char *rig = clear_rig_file();
    for (size_t i = 0; i < NVERSIONS; i++) {
        struct built b;
        build(&b, &(struct fxgeom_opts){.version = versions[i]});
        check_tree(&b, NULL);
        check_tree(&b, rig);
        free(b.file);
    }
    struct built b;
    build(&b, &(struct fxgeom_opts){.version = 12, .no_material = true});
    check_tree(&b, rig);
    free(b.file);
    unlink(rig);
    free(rig);
}

/* ---- mesh.glb read back ---- */

struct pair {
    const char *name;
    double w;
};

/* The (bone name, weight) pairs of vertex v by the rules: slots with a weight above 0,
 * through the hash list to the rig's names (entries with no name dropped), one pair per
 * bone, divided by the sum kept (Sims 4: bytes, so byte / 255 when they sum to 255; Sims 3:
 * floats over their sum); none kept: wholly bone 0 (root0). */
static int rule_pairs(const struct fxgeom_opts *o, const char *const *names, const char *root0, int v,
                      struct pair out[4])
{
    int n = 0;
    double sum = 0;
    for (int k = 0; k < 4; k++) {
        double w = o->version == 5 ? fxgeom_wfloats[v][k] : fxgeom_wbytes[v][k];
        if (o->bad_weight_sum && v == 1 && k == 2)
            w = o->version == 5 ? (double)0.05f : 20;
        const char *name = names[fxgeom_bones[v][k]];
        if (w <= 0 || !name)
            continue;
        int at = 0;
        while (at < n && strcmp(out[at].name, name) != 0)
            at++;
        if (at == n)
            out[n++] = (struct pair){name, 0};
        out[at].w += w;
        sum += w;
    }
    for (int k = 0; k < n; k++)
        out[k].w /= sum;
    if (n == 0)
        out[n++] = (struct pair){root0, 1};
    return n;
}

static int attribute(json_t *prim, const char *name)
{
    json_t *a = json_object_get(json_object_get(prim, "attributes"), name);
    return a ? (int)json_integer_value(a) : -1;
}

/* The skin of mesh.glb, vertex by vertex, against rule_pairs; and what is stored. */
static void check_glb(struct s3fs *fs, const struct fxgeom_opts *o, const char *const *names,
                      const char *const *rig_bones, uint32_t nbones, int nuv)
{
    size_t len;
    uint8_t *f = read_path(fs, "/mesh.glb", &len);
    struct glbdoc d;
    assert_int_equal(glb_read(f, len, &d), 0);
    json_t *nodes = json_object_get(d.json, "nodes");
    json_t *mesh = json_array_get(json_object_get(d.json, "meshes"), 0);
    json_t *prim = json_array_get(json_object_get(mesh, "primitives"), 0);
    assert_int_equal(json_array_size(json_object_get(mesh, "primitives")), 1);
    size_t count;
    int ncomp;
    /* POSITION, NORMAL, TEXCOORD_n: as stored */
    float *pos = glb_accessor_floats(&d, (size_t)attribute(prim, "POSITION"), &count, &ncomp);
    assert_int_equal(count, FXGEOM_VERTS);
    float *nrm = glb_accessor_floats(&d, (size_t)attribute(prim, "NORMAL"), &count, &ncomp);
    for (int v = 0; v < FXGEOM_VERTS; v++)
        for (int k = 0; k < 3; k++) {
            assert_true(pos[3 * v + k] == fxgeom_pos[v][k]);
            if (!(o->zero_normal && v == 3))
                assert_true(nrm[3 * v + k] == fxgeom_nrm[v][k]);
        }
    for (int set = 0; set < 3; set++) {
        char sem[16];
        snprintf(sem, sizeof sem, "TEXCOORD_%d", set);
        int a = attribute(prim, sem);
        assert_int_equal(a >= 0, set < nuv);
        if (a < 0)
            continue;
        float *uv = glb_accessor_floats(&d, (size_t)a, &count, &ncomp);
        for (int v = 0; v < FXGEOM_VERTS; v++)
            assert_true(uv[2 * v] == fxgeom_uv[set][v][0] && uv[2 * v + 1] == fxgeom_uv[set][v][1]);
        free(uv);
    }
    uint32_t *idx = glb_accessor_uints(&d, (size_t)json_integer_value(json_object_get(prim, "indices")), &count,
                                       &ncomp);
    uint32_t ntris = (uint32_t)count / 3, t = 0;
    for (uint32_t k = 0; k < FXGEOM_TRIS; k++) {
        if (o->index_out_of_range && k == 1)
            continue; /* left out */
        for (int j = 0; j < 3; j++)
            assert_int_equal(idx[3 * t + (uint32_t)j], fxgeom_index[3 * k + (uint32_t)j]);
        t++;
    }
    assert_int_equal(ntris, t);
    free(idx);
    /* the skin */
    json_t *skins = json_object_get(d.json, "skins");
    if (!names) {
        assert_int_equal(json_array_size(skins), 0);
        assert_int_equal(attribute(prim, "JOINTS_0"), -1);
        assert_int_equal(json_array_size(nodes), 2); /* the model node and the mesh's */
    } else {
        json_t *skin = json_array_get(skins, 0);
        json_t *joints = json_object_get(skin, "joints");
        assert_int_equal(json_array_size(joints), nbones); /* every rig bone */
        assert_int_equal(json_array_size(nodes), nbones + 2);
        for (uint32_t j = 0; j < nbones; j++) {
            json_t *n = json_array_get(nodes, (size_t)json_integer_value(json_array_get(joints, j)));
            assert_string_equal(json_string_value(json_object_get(n, "name")), rig_bones[j]);
        }
        int ja = attribute(prim, "JOINTS_0"), wa = attribute(prim, "WEIGHTS_0");
        int ctype;
        assert_non_null(glb_accessor_data(&d, (size_t)ja, &count, &ncomp, &ctype));
        assert_int_equal(ctype, nbones <= 255 ? 5121 : 5123); /* bytes while they reach */
        uint32_t *jv = glb_accessor_uints(&d, (size_t)ja, &count, &ncomp);
        float *wv = glb_accessor_floats(&d, (size_t)wa, &count, &ncomp);
        for (int v = 0; v < FXGEOM_VERTS; v++) {
            struct pair want[4];
            int n = rule_pairs(o, names, rig_bones[0], v, want);
            int got = 0;
            double sum = 0;
            for (int k = 0; k < 4; k++) {
                float w = wv[4 * v + k];
                sum += w;
                if (w == 0) {
                    assert_int_equal(jv[4 * v + k], 0); /* an empty slot: joint 0, weight 0 */
                    continue;
                }
                const char *name = rig_bones[jv[4 * v + k]];
                int at = 0;
                while (at < n && strcmp(want[at].name, name) != 0)
                    at++;
                if (at == n)
                    fail_msg("vertex %d: bone %s (weight %g) is not one of its bones", v, name, (double)w);
                if (fabs(want[at].w - w) > 1e-6)
                    fail_msg("vertex %d, %s: weight %.9g, the rules give %.9g", v, name, (double)w, want[at].w);
                got++;
            }
            assert_int_equal(got, n);
            assert_true(fabs(sum - 1) < 1e-6);
        }
        free(jv);
        free(wv);
    }
    free(pos);
    free(nrm);
    glb_doc_free(&d);
    free(f);
}

static const char *const *fxc_names(void)
{
    static const char *n[FXC_BONES];
    for (int i = 0; i < FXC_BONES; i++)
        n[i] = fxc_bones[i].name;
    return n;
}

static void test_glb_clear_rig(void **state)
{
    (void)state;
    char *rig = clear_rig_file();
    for (size_t i = 0; i < NVERSIONS; i++) {
        struct built b;
        build(&b, &(struct fxgeom_opts){.version = versions[i]});
        struct s3fs *fs = open_with_rig(&b, rig);
        const char *names[FXGEOM_HASHES];
        check_glb(fs, &b.o, bound_names(&b.o, names), fxc_names(), FXC_BONES, (int)b.lay.nuv);
        s3fs_close(fs);
        fs = open_with_rig(&b, NULL);
        check_glb(fs, &b.o, NULL, NULL, 0, (int)b.lay.nuv);
        s3fs_close(fs);
        free(b.file);
    }
    unlink(rig);
    free(rig);
}

/* The joints' inverse bind matrices undo the rig's world transforms (bind pose). */
static void test_glb_inverse_binds(void **state)
{
    (void)state;
    char *rig = clear_rig_file();
    struct built b;
    build(&b, &(struct fxgeom_opts){.version = 14});
    struct s3fs *fs = open_with_rig(&b, rig);
    size_t len, count;
    int ncomp;
    uint8_t *f = read_path(fs, "/mesh.glb", &len);
    struct glbdoc d;
    assert_int_equal(glb_read(f, len, &d), 0);
    json_t *skin = json_array_get(json_object_get(d.json, "skins"), 0);
    float *ibm = glb_accessor_floats(&d, (size_t)json_integer_value(json_object_get(skin, "inverseBindMatrices")),
                                     &count, &ncomp);
    assert_int_equal(count, FXC_BONES);
    float world[FXC_BONES][16];
    for (int i = 0; i < FXC_BONES; i++) {
        const struct fxc_bone *x = &fxc_bones[i];
        float local[16];
        mdl_trs_matrix(x->pos, x->q, x->s, local);
        if (x->parent < 0)
            memcpy(world[i], local, sizeof local);
        else
            mdl_mat_mul(world[x->parent], local, world[i]); /* parents come first in the fixture */
        float prod[16];
        mdl_mat_mul(ibm + 16 * i, world[i], prod);
        for (int k = 0; k < 16; k++)
            assert_true(fabsf(prod[k] - (k % 5 == 0 ? 1.0f : 0.0f)) < 1e-5f);
    }
    free(ibm);
    glb_doc_free(&d);
    free(f);
    s3fs_close(fs);
    free(b.file);
    unlink(rig);
    free(rig);
}

/* A rig of more than 255 bones: JOINTS_0 as 16-bit indices, remapped to the rig's bones
 * (the mesh's bones are bones 290-295 of 300). Through the parse API and the exporter. */
static void test_glb_wide_rig(void **state)
{
    (void)state;
    enum { NB = 300, FIRST = 290 };
    struct mdl_skeleton sk = {.nbones = NB, .bone = calloc(NB, sizeof *sk.bone)};
    const char *rig_bones[NB];
    char names[NB][24];
    for (int i = 0; i < NB; i++) {
        if (i >= FIRST && i < FIRST + FXGEOM_HASHES)
            snprintf(names[i], sizeof names[i], "%s", fxgeom_rig_names[i - FIRST]);
        else
            snprintf(names[i], sizeof names[i], "b__Extra_%03d__", i);
        rig_bones[i] = names[i];
        sk.bone[i] = (struct mdl_bone){.name = strdup(names[i]), .name_len = strlen(names[i]), .parent = i - 1};
        sk.bone[i].t[1] = 0.01f;
        sk.bone[i].r[3] = sk.bone[i].s[0] = sk.bone[i].s[1] = sk.bone[i].s[2] = 1;
    }
    struct rig_set rigs = {0};
    char err[256];
    assert_int_equal(rig_set_add(&rigs, "wide", &sk, err, sizeof err), 0);
    struct built b;
    build(&b, &(struct fxgeom_opts){.version = 15});
    struct geom g;
    struct diag d = {0};
    assert_int_equal(parse(&b, b.size, &g, &d), 0);
    struct mdl_model m;
    assert_int_equal(geom_model(&g, &rigs.r[0], &m, NULL, err, sizeof err), 0);
    assert_false(m.mesh[0].joints_u8);
    uint8_t *glb;
    size_t len;
    assert_int_equal(export_model_glb(&m, &glb, &len, err, sizeof err), 0);
    struct glbdoc doc;
    assert_int_equal(glb_read(glb, len, &doc), 0);
    json_t *prim = json_array_get(json_object_get(json_array_get(json_object_get(doc.json, "meshes"), 0),
                                                  "primitives"), 0);
    size_t count;
    int ncomp, ctype;
    assert_non_null(glb_accessor_data(&doc, (size_t)attribute(prim, "JOINTS_0"), &count, &ncomp, &ctype));
    assert_int_equal(ctype, 5123);
    uint32_t *jv = glb_accessor_uints(&doc, (size_t)attribute(prim, "JOINTS_0"), &count, &ncomp);
    float *wv = glb_accessor_floats(&doc, (size_t)attribute(prim, "WEIGHTS_0"), &count, &ncomp);
    const char *entry[FXGEOM_HASHES];
    bound_names(&b.o, entry);
    for (int v = 0; v < FXGEOM_VERTS; v++) {
        struct pair want[4];
        int n = rule_pairs(&b.o, entry, rig_bones[0], v, want);
        for (int k = 0; k < n; k++) {
            bool found = false;
            for (int j = 0; j < 4; j++)
                found = found || (wv[4 * v + j] > 0 && jv[4 * v + j] >= FIRST &&
                                  strcmp(rig_bones[jv[4 * v + j]], want[k].name) == 0 &&
                                  fabs(wv[4 * v + j] - want[k].w) < 1e-6);
            if (!found)
                fail_msg("vertex %d: no joint %s of weight %g", v, want[k].name, want[k].w);
        }
    }
    free(jv);
    free(wv);
    glb_doc_free(&doc);
    free(glb);
    mdl_model_free(&m);
    geom_free(&g);
    diag_free(&d);
    rig_set_free(&rigs);
    free(b.file);
}

/* ---- real-file traps ---- */

static void test_traps(void **state)
{
    (void)state;
    char *rig = clear_rig_file();
    for (size_t i = 0; i < NVERSIONS; i += 4) { /* v5 (floats) and v15 (bytes) */
        uint32_t v = versions[i];
        /* a zero-length normal: rebuilt from the faces around vertex 3 (triangles 1-3) */
        struct built b;
        build(&b, &(struct fxgeom_opts){.version = v, .zero_normal = true});
        struct s3fs *fs = open_with_rig(&b, rig);
        expect_has(fs, "/info", "warning: 1 zero-length normals");
        const char *names[FXGEOM_HASHES];
        check_glb(fs, &b.o, bound_names(&b.o, names), fxc_names(), FXC_BONES, (int)b.lay.nuv);
        size_t len, count;
        int ncomp;
        uint8_t *f = read_path(fs, "/mesh.glb", &len);
        struct glbdoc d;
        assert_int_equal(glb_read(f, len, &d), 0);
        json_t *prim = json_array_get(json_object_get(json_array_get(json_object_get(d.json, "meshes"), 0),
                                                      "primitives"), 0);
        float *nrm = glb_accessor_floats(&d, (size_t)attribute(prim, "NORMAL"), &count, &ncomp);
        double sum[3] = {0};
        for (int t = 1; t <= 3; t++) {
            const float *a = fxgeom_pos[fxgeom_index[3 * t]], *bb = fxgeom_pos[fxgeom_index[3 * t + 1]],
                        *c = fxgeom_pos[fxgeom_index[3 * t + 2]];
            double u[3], w[3];
            for (int k = 0; k < 3; k++)
                u[k] = (double)bb[k] - a[k], w[k] = (double)c[k] - a[k];
            sum[0] += u[1] * w[2] - u[2] * w[1];
            sum[1] += u[2] * w[0] - u[0] * w[2];
            sum[2] += u[0] * w[1] - u[1] * w[0];
        }
        double l = sqrt(sum[0] * sum[0] + sum[1] * sum[1] + sum[2] * sum[2]);
        for (int k = 0; k < 3; k++)
            assert_true(fabs(nrm[9 + k] - sum[k] / l) < 1e-6);
        free(nrm);
        glb_doc_free(&d);
        free(f);
        s3fs_close(fs);
        free(b.file);
        /* a hash the rig lacks: named, its influences dropped, the rest renormalised */
        build(&b, &(struct fxgeom_opts){.version = v, .missing_hash = true});
        fs = open_with_rig(&b, rig);
        char want[200];
        snprintf(want, sizeof want, "warning: 1 bone hashes are not in the rig (0x%08x)", fxc_hash(fxgeom_custom_bone));
        expect_has(fs, "/info", want);
        expect_has(fs, "/info", "rig_bones: 6 (5 of the 6 hashes found)");
        check_glb(fs, &b.o, bound_names(&b.o, names), fxc_names(), FXC_BONES, (int)b.lay.nuv);
        struct expect_list el = {0};
        ex_geom(&el, b.file, b.size, &b.o, &b.lay, names); /* bones.csv: no name for entry 5 */
        struct probe p = tree_probe(fs);
        ex_check(&el, &p);
        ex_free(&el);
        s3fs_close(fs);
        free(b.file);
        /* weights that do not sum to 1: divided by their sum */
        build(&b, &(struct fxgeom_opts){.version = v, .bad_weight_sum = true});
        fs = open_with_rig(&b, rig);
        expect_has(fs, "/info", "warning: 1 vertices' weights do not sum to 1");
        check_glb(fs, &b.o, bound_names(&b.o, names), fxc_names(), FXC_BONES, (int)b.lay.nuv);
        s3fs_close(fs);
        free(b.file);
    }
    unlink(rig);
    free(rig);
}

/* Broken parts: an .error each, the rest of the tree and the exports still there. */
static void test_broken_parts(void **state)
{
    (void)state;
    char *rig = clear_rig_file();
    const struct fxgeom_opts cases[] = {
        {.version = 14, .extra_index = true},
        {.version = 14, .index_out_of_range = true},
        {.version = 12, .unknown_decl = true},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        struct built b;
        build(&b, &cases[c]);
        struct s3fs *fs = open_with_rig(&b, rig);
        struct expect_list l = {0};
        const char *names[FXGEOM_HASHES];
        ex_geom(&l, b.file, b.size, &b.o, &b.lay, bound_names(&b.o, names));
        struct probe p = tree_probe(fs);
        ex_check(&l, &p);
        ex_free(&l);
        if (b.o.extra_index) {
            expect_has(fs, "/geom/triangles.error", "13 indices are not whole triangles");
            expect_has(fs, "/info", "warning: 1 triangles are left out");
        } else if (b.o.index_out_of_range) {
            expect_has(fs, "/geom/triangles.error", "index 3 (triangle 1) is 6, past the 6 vertices");
            expect_has(fs, "/info", "warning: 1 triangles are left out");
        } else {
            expect_has(fs, "/geom/vertex_format.error", "declaration 6: usage 11, type 2, 4 bytes: an unknown usage");
        }
        check_glb(fs, &b.o, names, fxc_names(), FXC_BONES, (int)b.lay.nuv);
        s3fs_close(fs);
        free(b.file);
    }
    unlink(rig);
    free(rig);
}

/* A vertex that is not a finite number: no exports (mesh.error, one /info line), the rest
 * of the tree there; nothing the binding had made is kept (found by fuzz_geom: the report
 * of a model not made leaked). */
static void test_model_not_made(void **state)
{
    (void)state;
    char *rig = clear_rig_file();
    struct built b;
    build(&b, &(struct fxgeom_opts){.version = 15});
    put32(b.file + b.lay.vert_pos + 4, 0x7FC00000u, false); /* vertex 0's y: NaN */
    struct s3fs *fs = open_with_rig(&b, rig);
    expect_has(fs, "/info", "warning: mesh.glb, mesh.obj: a vertex value is not a finite number");
    expect_has(fs, "/mesh.error", "not a finite number");
    assert_false(path_exists(fs, "/mesh.glb"));
    expect_has(fs, "/geom/vertices.csv", "\n0,-0.0500000007,nan,0,");
    assert_true(walk_all(fs, 100000) > 30);
    s3fs_close(fs);
    free(b.file);
    unlink(rig);
    free(rig);
}

/* ---- other rigs ---- */

/* A Granny-based rig (a raw Granny file, and the same Granny data in a wrapped RIG): the
 * hashes come from the Granny bone names. */
static void test_granny_rigs(void **state)
{
    (void)state;
    size_t gsize, wsize;
    uint8_t *raw = fxm_build(&(struct fxm_opts){.sig = "le32"}, &gsize);
    struct fx_rig_opts ro = fx_sample_rig_opts(raw, gsize);
    struct fx_rig_layout rl;
    uint8_t *wrapped = fx_build_rig(&ro, &wsize, &rl);
    char *paths[2] = {write_tmp(raw, gsize), write_tmp(wrapped, wsize)};
    const char *rig_bones[FXM_BONES], *names[FXGEOM_HASHES];
    for (int i = 0; i < FXM_BONES; i++)
        rig_bones[i] = fxm_bones[i].name;
    static const int pick[FXGEOM_HASHES] = {3, 1, 2, 0, 1, 2}; /* two list entries of one bone */
    for (int i = 0; i < FXGEOM_HASHES; i++)
        names[i] = rig_bones[pick[i]];
    for (int which = 0; which < 2; which++) {
        struct built b;
        build(&b, &(struct fxgeom_opts){.version = 13, .names = names});
        struct s3fs *fs = open_with_rig(&b, paths[which]);
        expect_has(fs, "/info", "rig_bones: 4 (6 of the 6 hashes found)");
        check_glb(fs, &b.o, names, rig_bones, FXM_BONES, (int)b.lay.nuv);
        struct expect_list l = {0};
        ex_geom(&l, b.file, b.size, &b.o, &b.lay, names);
        struct probe p = tree_probe(fs);
        ex_check(&l, &p);
        ex_free(&l);
        s3fs_close(fs);
        free(b.file);
        unlink(paths[which]);
        free(paths[which]);
    }
    free(wrapped);
    free(raw);
}

/* -o rig= that cannot be had: the open fails in one line, with the right status. */
static void test_rig_option_refusals(void **state)
{
    (void)state;
    struct built b;
    build(&b, &(struct fxgeom_opts){.version = 12});
    struct s3fs_opts o = {0};
    struct s3fs *fs;
    char err[600];
    snprintf(o.rig, sizeof o.rig, "/nonexistent/rig.grannyrig");
    assert_open_refused(s3fs_open_mem(&fs, b.file, b.size, &o, err, sizeof err), S3_ERR_NOT_FOUND, S3_EXIT_OPEN);
    assert_non_null(strstr(err, "rig=/nonexistent/rig.grannyrig"));
    char *mesh = write_tmp(b.file, b.size); /* a mesh is no rig */
    snprintf(o.rig, sizeof o.rig, "%s", mesh);
    assert_open_refused(s3fs_open_mem(&fs, b.file, b.size, &o, err, sizeof err), S3_ERR_FORMAT, S3_EXIT_FORMAT);
    assert_non_null(strstr(err, "no skeleton to bind to"));
    assert_null(strchr(err, '\n'));
    unlink(mesh);
    free(mesh);
    free(b.file);
}

/* ---- packages ---- */

static char *resource_dir(const struct fxp_sample *s, uint64_t instance)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->res[i].instance == instance) {
            char name[256], *path;
            fxp_expected_name(name, sizeof name, 4, &s->res[i], s->names[i], 0);
            assert_true(asprintf(&path, "/resources/%s", name) > 0);
            return path;
        }
    fail_msg("no resource 0x%016llx", (unsigned long long)instance);
    return NULL;
}

/* A package's GEOM binds to the rig resource having all its hashes (not the decoy listed
 * before it); one no rig covers stays unbound, or takes -o rig='s. */
static void test_package_binding(void **state)
{
    (void)state;
    struct fxp_sample s;
    fxp_sample(&s, 6);
    char *rig_dir = resource_dir(&s, FXP_GEOM_RIG), *mesh = resource_dir(&s, FXP_GEOM_MESH);
    char *custom = resource_dir(&s, FXP_GEOM_CUSTOM), path[600], want[600];
    for (int with_option = 0; with_option < 2; with_option++) {
        struct s3fs_opts o = {0};
        char *rig = with_option ? clear_rig_file() : NULL;
        if (rig)
            snprintf(o.rig, sizeof o.rig, "%s", rig);
        struct s3fs *fs = open_mem(s.file, s.size, &o, "package");
        snprintf(path, sizeof path, "%s/geom/info", mesh);
        snprintf(want, sizeof want, "\nrig: %s\n", rig_dir + 1); /* the package's own rig, option or not */
        expect_has(fs, path, want);
        snprintf(path, sizeof path, "%s/geom/geom/bones.csv", mesh);
        expect_has(fs, path, "0,0x6fa96266,b__Spine0__\n");
        /* the mesh, skinned to the clear rig's bones */
        snprintf(path, sizeof path, "%s/geom/mesh.glb", mesh);
        size_t len;
        uint8_t *glb = read_path(fs, path, &len);
        struct glbdoc d;
        assert_int_equal(glb_read(glb, len, &d), 0);
        json_t *joints = json_object_get(json_array_get(json_object_get(d.json, "skins"), 0), "joints");
        assert_int_equal(json_array_size(joints), FXC_BONES);
        glb_doc_free(&d);
        free(glb);
        /* the custom mesh: no rig has its custom bone */
        snprintf(path, sizeof path, "%s/geom/info", custom);
        if (rig) {
            char *abs = realpath(rig, NULL);
            snprintf(want, sizeof want, "\nrig: %s\n", abs);
            free(abs);
            expect_has(fs, path, want);
            expect_has(fs, path, "bone hashes are not in the rig");
        } else {
            expect_has(fs, path, "\nrig: none\n");
            expect_has(fs, path, "warning: no rig of the package has every bone hash of the mesh");
        }
        assert_true(walk_all(fs, 200000) > 100);
        size_t links;
        char why[256];
        assert_int_equal(check_links(fs->tree, false, &links, why, sizeof why), 0);
        s3fs_close(fs);
        if (rig) {
            unlink(rig);
            free(rig);
        }
    }
    /* the package itself as -o rig=: its rig covering the mesh is taken, named by path */
    char *pkg = write_tmp(s.file, s.size);
    struct built b;
    build(&b, &(struct fxgeom_opts){.version = 15});
    struct s3fs *fs = open_with_rig(&b, pkg);
    char *abs = realpath(pkg, NULL);
    snprintf(want, sizeof want, "\nrig: %s%s\n", abs, rig_dir);
    expect_has(fs, "/info", want);
    const char *names[FXGEOM_HASHES];
    check_glb(fs, &b.o, bound_names(&b.o, names), fxc_names(), FXC_BONES, (int)b.lay.nuv);
    s3fs_close(fs);
    free(abs);
    free(b.file);
    unlink(pkg);
    free(pkg);
    free(rig_dir);
    free(mesh);
    free(custom);
    fxp_sample_free(&s);
}

/* The one way views offer their skeletons (view_skeletons), which -o rig=, -o skeleton=
 * and a package's GEOM read alike: a raw Granny file and a wrapped RIG their first
 * skeleton, a clear RIG its bone table, a package every rig resource's in index order (the
 * decoy wrapped rig, then the clear one), labelled where each lies; a mesh none, saying
 * why. The set is made once. */
static void expect_skeleton(const struct rig_entry *e, const char *label, uint32_t nbones, const char *const *names)
{
    assert_string_equal(e->label, label);
    assert_int_equal(e->skel.nbones, nbones);
    for (uint32_t i = 0; i < nbones; i++)
        assert_string_equal(e->skel.bone[i].name, names[i]);
}

static void test_offered_skeletons(void **state)
{
    (void)state;
    size_t gsize, wsize, csize;
    uint8_t *raw = fxm_build(&(struct fxm_opts){.sig = "le32"}, &gsize);
    struct fx_rig_opts ro = fx_sample_rig_opts(raw, gsize);
    struct fx_rig_layout rl;
    uint8_t *wrapped = fx_build_rig(&ro, &wsize, &rl);
    struct fxc_opts co = fxc_variant(0);
    struct fxc_layout cl;
    uint8_t *clear = fxc_build(&co, &csize, &cl);
    const char *granny_names[FXM_BONES];
    for (int i = 0; i < FXM_BONES; i++)
        granny_names[i] = fxm_bones[i].name;
    const struct {
        const uint8_t *file;
        size_t size;
        uint32_t nbones;
        const char *const *names;
    } alone[] = {{raw, gsize, FXM_BONES, granny_names}, {wrapped, wsize, FXM_BONES, granny_names},
                 {clear, csize, FXC_BONES, fxc_names()}};
    char err[256];
    for (size_t i = 0; i < sizeof alone / sizeof alone[0]; i++) {
        struct s3fs *fs = open_mem(alone[i].file, alone[i].size, NULL, "a rig");
        const struct rig_set *set = view_skeletons(fs, err, sizeof err);
        assert_int_equal(set->n, 1);
        expect_skeleton(&set->r[0], "", alone[i].nbones, alone[i].names);
        assert_string_equal(err, "");
        assert_ptr_equal(view_skeletons(fs, err, sizeof err), set);
        s3fs_close(fs);
    }
    struct fxp_sample s;
    fxp_sample(&s, 6);
    char sample_names[FX_SAMPLE_BONES][32];
    const char *decoy_names[FX_SAMPLE_BONES];
    struct fx_gr2_layout gl;
    size_t n;
    free(fx_sample_rig(&n, &rl, &gl, sample_names));
    for (int i = 0; i < FX_SAMPLE_BONES; i++)
        decoy_names[i] = sample_names[i];
    char *decoy = resource_dir(&s, FXP_GEOM_DECOY), *rig = resource_dir(&s, FXP_GEOM_RIG);
    struct s3fs *fs = open_mem(s.file, s.size, NULL, "package");
    const struct rig_set *set = view_skeletons(fs, err, sizeof err);
    assert_int_equal(set->n, 2);
    expect_skeleton(&set->r[0], decoy + 1, FX_SAMPLE_BONES, decoy_names);
    expect_skeleton(&set->r[1], rig + 1, FXC_BONES, fxc_names());
    assert_ptr_equal(view_skeletons(fs, err, sizeof err), set);
    s3fs_close(fs);
    struct built b;
    build(&b, &(struct fxgeom_opts){.version = 14});
    fs = open_mem(b.file, b.size, NULL, "geom");
    assert_int_equal(view_skeletons(fs, err, sizeof err)->n, 0);
    assert_string_equal(err, "a geom file holds no skeleton");
    s3fs_close(fs);
    free(b.file);
    free(decoy);
    free(rig);
    fxp_sample_free(&s);
    free(clear);
    free(wrapped);
    free(raw);
}

/* rig_set_pick: the rig having every hash, else (best) the one having the most, else
 * none (-1) with S3_OK; a refused allocation is NOMEM with *pick untouched, never read as
 * "no rig". Rig A has bones named a, b; rig B has a, b, c (hashes: fnv1_lower32). */
static void add_named_rig(struct rig_set *s, const char *label, const char *const *names, uint32_t n)
{
    struct mdl_skeleton sk = {.nbones = n, .bone = calloc(n, sizeof *sk.bone)};
    assert_non_null(sk.bone);
    for (uint32_t i = 0; i < n; i++) {
        sk.bone[i] = (struct mdl_bone){.name = strdup(names[i]), .name_len = strlen(names[i]), .parent = -1};
        sk.bone[i].r[3] = sk.bone[i].s[0] = sk.bone[i].s[1] = sk.bone[i].s[2] = 1;
    }
    char err[200];
    assert_int_equal(rig_set_add(s, label, &sk, err, sizeof err), S3_OK);
}

static void test_rig_set_pick(void **state)
{
    (void)state;
    static const char *const a[] = {"a", "b"}, *const abc[] = {"a", "b", "c"};
    struct rig_set rigs = {0};
    const uint32_t want[] = {fnv1_lower32("c", 1), fnv1_lower32("a", 1), fnv1_lower32("z", 1)};
    ptrdiff_t k = 7;
    assert_int_equal(rig_set_pick(&rigs, want, 2, true, &k), S3_OK);
    assert_int_equal(k, -1); /* an empty set: none */
    add_named_rig(&rigs, "A", a, 2);
    add_named_rig(&rigs, "B", abc, 3);
    assert_int_equal(rig_set_pick(&rigs, want, 2, false, &k), S3_OK);
    assert_int_equal(k, 1); /* only B has c and a */
    assert_int_equal(rig_set_pick(&rigs, want + 1, 1, false, &k), S3_OK);
    assert_int_equal(k, 0); /* the first having a */
    assert_int_equal(rig_set_pick(&rigs, want, 3, false, &k), S3_OK);
    assert_int_equal(k, -1); /* none has z */
    assert_int_equal(rig_set_pick(&rigs, want, 3, true, &k), S3_OK);
    assert_int_equal(k, 1); /* B has two of the three, A one */
#ifdef S3_TEST_WRAP_ALLOC
    k = 7;
    alloc_refuse_start(0);
    enum s3_err e = rig_set_pick(&rigs, want, 3, true, &k);
    alloc_refuse_start(-1);
    assert_int_equal(e, S3_ERR_NOMEM);
    assert_int_equal(k, 7);
#endif
    rig_set_free(&rigs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hash),
        cmocka_unit_test(test_detect),
        cmocka_unit_test(test_parse_fields),
        cmocka_unit_test(test_parse_variants),
        cmocka_unit_test(test_cuts),
        cmocka_unit_test(test_hostile_counts),
        cmocka_unit_test(test_long_lists),
        cmocka_unit_test(test_zero_normals_linear),
        cmocka_unit_test(test_tree),
        cmocka_unit_test(test_glb_clear_rig),
        cmocka_unit_test(test_glb_inverse_binds),
        cmocka_unit_test(test_glb_wide_rig),
        cmocka_unit_test(test_traps),
        cmocka_unit_test(test_broken_parts),
        cmocka_unit_test(test_model_not_made),
        cmocka_unit_test(test_granny_rigs),
        cmocka_unit_test(test_rig_option_refusals),
        cmocka_unit_test(test_package_binding),
        cmocka_unit_test(test_offered_skeletons),
        cmocka_unit_test(test_model_reasons),
        cmocka_unit_test(test_parse_refused_allocation),
        cmocka_unit_test(test_export_refused_allocation),
        cmocka_unit_test(test_rig_set_pick),
    };
    return cmocka_run_group_tests_name("geom", tests, NULL, NULL);
}
