/* The .glb builder, the matrix helpers the exporters use, and the clear RIG's
 * /skeleton.glb, read back with a parser of the tests' own (glbread.c). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fixture_rig_clear.h"
#include "fs/export/export.h"
#include "fs/export/glb.h"
#include "fs/open/open.h"
#include "glbread.h"
#include "parse/base/model.h"
#include "testutil.h"

/* A scene of two nodes, a mesh of one triangle, a skin; names that need escaping. */
static uint8_t *small_scene(size_t *len, const char *name, size_t name_len)
{
    struct glb *g = glb_new();
    static const float pos[9] = {-1.5f, 0, 2, 3, 0.1f, -4, 0, 7, 0.25f};
    static const uint16_t idx[3] = {0, 1, 2};
    int p = glb_floats(g, pos, 3, 3, GLB_VERTICES, true);
    int iv = glb_view(g, idx, sizeof idx, GLB_INDICES); /* 6 bytes: the next view must realign */
    int ia = glb_accessor(g, iv, 0, GLB_U16, 3, 1, NULL, NULL);
    static const float ibm[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    int im = glb_floats(g, ibm, 1, 16, GLB_NO_TARGET, false);
    int root = glb_node(g, name, name_len);
    int child = glb_node(g, "child", 5);
    glb_node_child(g, root, child);
    static const float t[3] = {1, 2, 3}, r[4] = {0, 0, 0.70710678f, 0.70710678f}, s[3] = {1, 1, 1};
    glb_node_trs(g, child, t, r, s);
    int mesh = glb_mesh(g, "m", 1);
    int prim = glb_primitive(g, mesh, ia, -1);
    glb_attribute(g, mesh, prim, "POSITION", p);
    int mnode = glb_node(g, NULL, 0);
    int joints[1] = {child};
    int skin = glb_skin(g, joints, 1, im, root, NULL, 0);
    glb_node_mesh(g, mnode, mesh, -1);
    glb_scene_root(g, root);
    glb_scene_root(g, mnode);
    assert_int_equal(skin, 0);
    uint8_t *out;
    char err[128];
    assert_int_equal(glb_finish(g, &out, len, err, sizeof err), S3_OK);
    glb_free(g);
    return out;
}

static void test_builder_layout(void **state)
{
    (void)state;
    /* quote, backslash, a control byte, valid UTF-8 (é), an invalid byte */
    static const char name[] = "a\"b\\c\x01" "d\xC3\xA9" "e\xFF";
    size_t len;
    uint8_t *f = small_scene(&len, name, sizeof name - 1);
    struct glbdoc d;
    assert_int_equal(glb_read(f, len, &d), 0);
    json_t *nodes = json_object_get(d.json, "nodes");
    assert_int_equal(json_array_size(nodes), 3);
    assert_string_equal(json_string_value(json_object_get(json_array_get(nodes, 0), "name")),
                        "a\"b\\c\x01" "d\xC3\xA9" "e\xEF\xBF\xBD");
    assert_null(json_object_get(json_array_get(nodes, 2), "name")); /* no name given: none written */
    assert_int_equal(json_integer_value(json_array_get(json_object_get(json_array_get(nodes, 0), "children"), 0)), 1);
    assert_true(glb_num(json_array_get(nodes, 1), "translation", 2) == 3.0);
    assert_true((float)glb_num(json_array_get(nodes, 1), "rotation", 3) == 0.70710678f);
    /* POSITION min/max are the exact per-component bounds of the data */
    json_t *acc = json_array_get(json_object_get(d.json, "accessors"), 0);
    assert_true(glb_num(acc, "min", 0) == -1.5 && glb_num(acc, "min", 1) == 0.0 && glb_num(acc, "min", 2) == -4.0);
    assert_true(glb_num(acc, "max", 0) == 3.0 && glb_num(acc, "max", 1) == 7.0 && glb_num(acc, "max", 2) == 2.0);
    size_t count;
    int ncomp;
    float *pos = glb_accessor_floats(&d, 0, &count, &ncomp);
    assert_non_null(pos);
    assert_int_equal(count, 3);
    assert_true(pos[4] == 0.1f && pos[8] == 0.25f);
    free(pos);
    uint32_t *idx = glb_accessor_uints(&d, 1, &count, &ncomp);
    assert_non_null(idx);
    assert_true(idx[0] == 0 && idx[1] == 1 && idx[2] == 2);
    free(idx);
    json_t *views = json_object_get(d.json, "bufferViews");
    assert_int_equal(json_integer_value(json_object_get(json_array_get(views, 1), "target")), 34963);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(views, 2), "byteOffset")), 36 + 8);
    json_t *skin = json_array_get(json_object_get(d.json, "skins"), 0);
    assert_int_equal(json_integer_value(json_object_get(skin, "skeleton")), 0);
    /* same calls, same bytes */
    size_t len2;
    uint8_t *f2 = small_scene(&len2, name, sizeof name - 1);
    assert_int_equal(len, len2);
    assert_memory_equal(f, f2, len);
    glb_doc_free(&d);
    free(f);
    free(f2);
}

static void test_builder_refuses_nan(void **state)
{
    (void)state;
    struct glb *g = glb_new();
    float pos[3] = {0, NAN, 1};
    glb_floats(g, pos, 1, 3, GLB_VERTICES, true);
    uint8_t *out;
    size_t len;
    char err[128];
    assert_int_equal(glb_finish(g, &out, &len, err, sizeof err), S3_ERR_FORMAT);
    assert_non_null(strstr(err, "finite"));
    glb_free(g);
}

/* ---- matrices ---- */

static void assert_identity(const float m[16], float tol)
{
    for (int i = 0; i < 16; i++)
        if (fabsf(m[i] - (i % 5 == 0 ? 1.0f : 0.0f)) > tol)
            fail_msg("element %d is %g", i, (double)m[i]);
}

static void test_matrices(void **state)
{
    (void)state;
    /* a 90° turn about z moves x to y */
    float t[3] = {1, 2, 3}, r[4] = {0, 0, sqrtf(0.5f), sqrtf(0.5f)}, s[3] = {2, 2, 2}, m[16], inv[16], prod[16];
    mdl_trs_matrix(t, r, s, m);
    assert_true(fabsf(m[0]) < 1e-6f && fabsf(m[1] - 2) < 1e-6f && fabsf(m[4] + 2) < 1e-6f);
    assert_true(m[12] == 1 && m[13] == 2 && m[14] == 3 && m[15] == 1);
    assert_true(mdl_is_trs(m));
    assert_int_equal(mdl_mat_inverse(m, inv), S3_OK);
    mdl_mat_mul(m, inv, prod);
    assert_identity(prod, 1e-6f);
    /* a shear is not T × R × S */
    float shear[16] = {1, 0, 0, 0, 0.5f, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    assert_false(mdl_is_trs(shear));
    float singular[16] = {0};
    singular[15] = 1;
    assert_int_equal(mdl_mat_inverse(singular, inv), S3_ERR_FORMAT);
}

/* world = parent's world × local; the ibm undoes it */
static void test_compute_ibm(void **state)
{
    (void)state;
    struct mdl_bone b[3] = {
        {.parent = -1, .t = {0, 1, 0}, .r = {0, 0, 0, 1}, .s = {1, 1, 1}},
        {.parent = 2, .t = {0, 0, 5}, .r = {0, 0, 0, 1}, .s = {1, 1, 1}}, /* parent after child */
        {.parent = 0, .t = {3, 0, 0}, .r = {0, sqrtf(0.5f), 0, sqrtf(0.5f)}, .s = {1, 1, 1}},
    };
    struct mdl_skeleton sk = {.bone = b, .nbones = 3};
    char err[128];
    assert_int_equal(mdl_skeleton_check(&sk, err, sizeof err), S3_OK);
    assert_int_equal(mdl_compute_ibm(&sk, err, sizeof err), S3_OK);
    /* bone 1's world origin: (3,1,0) + rotate_y90((0,0,5)) = (3,1,0) + (5,0,0) */
    float o[16];
    assert_int_equal(mdl_mat_inverse(b[1].ibm, o), S3_OK);
    assert_true(fabsf(o[12] - 8) < 1e-5f && fabsf(o[13] - 1) < 1e-5f && fabsf(o[14]) < 1e-5f);
    b[0].parent = 1; /* 0 -> 1 -> 2 -> 0 */
    assert_int_equal(mdl_skeleton_check(&sk, err, sizeof err), S3_ERR_FORMAT);
    assert_non_null(strstr(err, "cycle"));
    b[0].parent = 7;
    assert_int_equal(mdl_skeleton_check(&sk, err, sizeof err), S3_ERR_FORMAT);
    assert_non_null(strstr(err, "not a bone"));
}

/* ---- the exporters' reasons (issue 31) ---- */

static void identity_bone(struct mdl_bone *b, int32_t parent)
{
    *b = (struct mdl_bone){.parent = parent, .r = {0, 0, 0, 1}, .s = {1, 1, 1}};
    for (int i = 0; i < 16; i += 5)
        b->ibm[i] = 1;
}

/* A skeleton glTF cannot take fails with the reason: none (FORMAT), a parent that is not a
 * bone (FORMAT), a zero rotation (FORMAT), a sheared local matrix (UNSUPPORTED). */
static void test_skeleton_reasons(void **state)
{
    (void)state;
    struct mdl_bone b[2];
    identity_bone(&b[0], -1);
    identity_bone(&b[1], 0);
    struct mdl_skeleton sk = {.bone = b, .nbones = 2};
    uint8_t *out;
    size_t len;
    char err[200];
    assert_int_equal(export_skeleton_glb(&sk, NULL, &len, err, sizeof err), S3_OK); /* the control */
    sk.nbones = 0;
    assert_int_equal(export_skeleton_glb(&sk, &out, &len, err, sizeof err), S3_ERR_FORMAT);
    assert_non_null(strstr(err, "no bones"));
    sk.nbones = 2;
    b[1].parent = 5;
    assert_int_equal(export_skeleton_glb(&sk, &out, &len, err, sizeof err), S3_ERR_FORMAT);
    assert_non_null(strstr(err, "not a bone"));
    b[1].parent = 0;
    b[1].r[3] = 0; /* (0, 0, 0, 0) */
    assert_int_equal(export_skeleton_glb(&sk, &out, &len, err, sizeof err), S3_ERR_FORMAT);
    assert_non_null(strstr(err, "bone 1: its orientation is not a rotation"));
    b[1].r[3] = 1;
    b[1].has_matrix = true;
    static const float shear[16] = {1, 0, 0, 0, 0.5f, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    memcpy(b[1].m, shear, sizeof shear);
    assert_int_equal(export_skeleton_glb(&sk, NULL, &len, err, sizeof err), S3_ERR_UNSUPPORTED);
    assert_non_null(strstr(err, "bone 1: its transform has a shear"));
    /* the same bones as nodes of a builder of the caller's */
    struct glb *g = glb_new_measure();
    int first = -7;
    assert_int_equal(export_bone_nodes(g, &sk, &first, err, sizeof err), S3_ERR_UNSUPPORTED);
    b[1].has_matrix = false;
    assert_int_equal(export_bone_nodes(g, &sk, &first, err, sizeof err), S3_OK);
    assert_int_equal(first, 2); /* after the two the refused call made */
    /* a skin over them: a rotation that is not finite is FORMAT, the root untouched */
    int root = -7;
    b[0].r[0] = NAN;
    assert_int_equal(export_bone_skin(g, &sk, first, &root, err, sizeof err), S3_ERR_FORMAT);
    assert_non_null(strstr(err, "bone 0: its orientation is not a rotation"));
    assert_int_equal(root, -7);
    b[0].r[0] = 0;
    assert_int_equal(export_bone_skin(g, &sk, first, &root, err, sizeof err), S3_OK);
    assert_int_equal(root, first); /* one root bone: the skin's root */
    glb_free(g);
}

/* One triangle over three vertices: the model the next tests break. */
struct tri_model {
    float pos[9];
    uint32_t index[3];
    struct mdl_model m;
};

static void tri_model(struct tri_model *t)
{
    *t = (struct tri_model){.pos = {0, 0, 0, 1, 0, 0, 0, 1, 0}, .index = {0, 1, 2}};
    static struct mdl_mesh mesh;
    mesh = (struct mdl_mesh){.nverts = 3, .pos = t->pos, .index = t->index, .ntris = 1};
    t->m = (struct mdl_model){.r = {0, 0, 0, 1}, .s = {1, 1, 1}, .mesh = &mesh, .nmeshes = 1};
}

/* A model glTF cannot take fails with the reason: a vertex not finite (FORMAT, from the
 * builder), a zero placement rotation (FORMAT), a mesh under a bone past the bones
 * (FORMAT), a file past 4 GiB (LIMIT: measured, 400 million triangles of 32-bit indices
 * are 4.8 GB of buffer; measuring reads none of them). */
static void test_model_reasons(void **state)
{
    (void)state;
    struct tri_model t;
    tri_model(&t);
    uint8_t *out;
    size_t len;
    char err[200];
    assert_int_equal(export_model_glb(&t.m, &out, &len, err, sizeof err), S3_OK); /* the control */
    free(out);
    t.pos[4] = INFINITY;
    assert_int_equal(export_model_glb(&t.m, &out, &len, err, sizeof err), S3_ERR_FORMAT);
    assert_non_null(strstr(err, "not a finite number"));
    assert_null(out);
    t.pos[4] = 0;
    t.m.r[3] = 0;
    assert_int_equal(export_model_glb(&t.m, NULL, &len, err, sizeof err), S3_ERR_FORMAT);
    assert_non_null(strstr(err, "the model's placement: its orientation is not a rotation"));
    t.m.r[3] = 1;
    t.m.mesh[0].on_bone = true;
    t.m.mesh[0].bone = 0;
    struct glb *g = glb_new_measure();
    assert_int_equal(export_model_into(g, &t.m, err, sizeof err), S3_ERR_FORMAT);
    assert_non_null(strstr(err, "mesh 0: placed under bone 0, past the 0 bones"));
    glb_free(g);
    t.m.mesh[0].on_bone = false;
    t.m.mesh[0].ntris = 400000000u; /* index past t.index: never read when measuring */
    assert_int_equal(export_model_glb(&t.m, NULL, &len, err, sizeof err), S3_ERR_LIMIT);
    assert_non_null(strstr(err, "larger than 4 GiB"));
}

/* ---- the clear RIG's /skeleton.glb ---- */

static void test_rig_clear_skeleton(void **state)
{
    (void)state;
    for (int v = 0; v < 3; v++) {
        struct fxc_opts o = fxc_variant(v);
        struct fxc_layout lay;
        size_t size;
        uint8_t *f = fxc_build(&o, &size, &lay);
        struct s3fs *fs = open_mem(f, size, NULL, NULL);
        size_t len;
        uint8_t *glb = read_path(fs, "/skeleton.glb", &len);
        assert_non_null(glb);
        uint32_t ino;
        assert_int_equal(tree_resolve(fs->tree, "/skeleton.glb", &ino), 0);
        assert_int_equal(tree_size(fs->tree, ino), len); /* the size stat gave before the read */
        struct glbdoc d;
        assert_int_equal(glb_read(glb, len, &d), 0);
        json_t *nodes = json_object_get(d.json, "nodes");
        assert_int_equal(json_array_size(nodes), FXC_BONES); /* one root: no extra node */
        for (size_t i = 0; i < FXC_BONES; i++) {
            const struct fxc_bone *b = &fxc_bones[i];
            json_t *n = json_array_get(nodes, i);
            assert_string_equal(json_string_value(json_object_get(n, "name")), b->name);
            for (int k = 0; k < 3; k++) {
                assert_true((float)glb_num(n, "translation", (size_t)k) == b->pos[k]);
                assert_true((float)glb_num(n, "scale", (size_t)k) == b->s[k]);
            }
            for (int k = 0; k < 4; k++)
                assert_true((float)glb_num(n, "rotation", (size_t)k) == b->q[k]);
            /* the parent lists the bone among its children */
            if (b->parent >= 0)
                assert_true(glb_has_child(&d, (size_t)b->parent, i));
        }
        json_t *skin = json_array_get(json_object_get(d.json, "skins"), 0);
        assert_int_equal(json_array_size(json_object_get(skin, "joints")), FXC_BONES);
        size_t count;
        int ncomp;
        float *ibm = glb_accessor_floats(&d, (size_t)json_integer_value(json_object_get(skin, "inverseBindMatrices")),
                                         &count, &ncomp);
        assert_non_null(ibm);
        assert_int_equal(count, FXC_BONES);
        assert_int_equal(ncomp, 16);
        /* bone 1 (child of the identity root): its world is its own T × R; ibm × world = I */
        float world[16], prod[16];
        mdl_trs_matrix(fxc_bones[1].pos, fxc_bones[1].q, fxc_bones[1].s, world);
        mdl_mat_mul(ibm + 16, world, prod);
        assert_identity(prod, 1e-5f);
        free(ibm);
        /* same bytes on a second read */
        size_t len2;
        uint8_t *again = read_path(fs, "/skeleton.glb", &len2);
        assert_int_equal(len, len2);
        assert_memory_equal(glb, again, len);
        free(again);
        glb_doc_free(&d);
        free(glb);
        s3fs_close(fs);
        free(f);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builder_layout),
        cmocka_unit_test(test_builder_refuses_nan),
        cmocka_unit_test(test_matrices),
        cmocka_unit_test(test_compute_ibm),
        cmocka_unit_test(test_skeleton_reasons),
        cmocka_unit_test(test_model_reasons),
        cmocka_unit_test(test_rig_clear_skeleton),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
