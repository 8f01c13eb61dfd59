/* Granny exports without FUSE: skeleton.glb, model.glb and mesh.obj of the model fixture
 * (fixture_gr2model.c), read back and compared with the fixture's own values, in every
 * byte order and pointer size; member-name variants; what cannot be exported. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "fixture_gr2model.h"
#include "fs/open/open.h"
#include "glbread.h"
#include "testutil.h"
#include "walk.h"

static const char *const sigs[] = {"le32", "le64", "be32", "be64"};

static struct s3fs *open_fixture(const struct fxm_opts *o, uint8_t **file)
{
    size_t size;
    *file = fxm_build(o, &size);
    struct s3fs *fs = open_mem(*file, size, NULL, o->sig);
    return fs;
}

static json_t *node(const struct glbdoc *d, size_t i)
{
    return json_array_get(json_object_get(d->json, "nodes"), i);
}

/* Nodes 0..3 are the bones: names, parents, local transforms by the Transform rules. */
static void check_bones(const struct glbdoc *d, size_t top)
{
    for (size_t i = 0; i < FXM_BONES; i++) {
        const struct fxm_bone *b = &fxm_bones[i];
        json_t *n = node(d, i);
        assert_string_equal(json_string_value(json_object_get(n, "name")), b->name);
        assert_true(glb_has_child(d, b->parent >= 0 ? (size_t)b->parent : top, i));
    }
    /* hip: position and orientation flags set, scale/shear flag clear (its 5s unused) */
    json_t *hip = node(d, 1);
    for (size_t k = 0; k < 3; k++) {
        assert_true((float)glb_num(hip, "translation", k) == fxm_bones[1].position[k]);
        assert_true(glb_num(hip, "scale", k) == 1.0);
    }
    for (size_t k = 0; k < 4; k++)
        assert_true((float)glb_num(hip, "rotation", k) == fxm_bones[1].orientation[k]);
    /* arm: only the position flag: identity rotation whatever is stored */
    assert_true((float)glb_num(node(d, 3), "translation", 0) == -1.0f);
    /* leg: scale/shear not diagonal, identity orientation: the matrix's columns are the
     * stored rows, its translation the position */
    json_t *leg = node(d, 2);
    assert_null(json_object_get(leg, "translation"));
    const float *ss = fxm_bones[2].scale_shear;
    for (size_t c = 0; c < 3; c++)
        for (size_t r = 0; r < 3; r++)
            assert_true((float)glb_num(leg, "matrix", 4 * c + r) == ss[3 * c + r]);
    for (size_t r = 0; r < 3; r++)
        assert_true((float)glb_num(leg, "matrix", 12 + r) == fxm_bones[2].position[r]);
    assert_true(glb_num(leg, "matrix", 15) == 1.0);
    /* the skin: every bone a joint, the inverse world transforms as stored, last row 0 0 0 1 */
    json_t *skin = json_array_get(json_object_get(d->json, "skins"), 0);
    json_t *joints = json_object_get(skin, "joints");
    assert_int_equal(json_array_size(joints), FXM_BONES);
    for (size_t i = 0; i < FXM_BONES; i++)
        assert_int_equal(json_integer_value(json_array_get(joints, i)), (json_int_t)i);
    assert_int_equal(json_integer_value(json_object_get(skin, "skeleton")), (json_int_t)top);
    size_t count;
    int ncomp;
    float *ibm = glb_accessor_floats(d, (size_t)json_integer_value(json_object_get(skin, "inverseBindMatrices")), &count, &ncomp);
    assert_non_null(ibm);
    assert_int_equal(count, FXM_BONES);
    for (size_t i = 0; i < FXM_BONES; i++)
        for (size_t k = 0; k < 16; k++) {
            float want = k == 15 ? 1.0f : (k % 4 == 3) ? 0.0f : fxm_bones[i].inverse_world[k];
            if (ibm[16 * i + k] != want)
                fail_msg("bone %zu ibm[%zu] = %g, expected %g", i, k, (double)ibm[16 * i + k], (double)want);
        }
    free(ibm);
}

static void test_skeleton_glb(void **state)
{
    (void)state;
    for (size_t s = 0; s < sizeof sigs / sizeof sigs[0]; s++) {
        for (int alt = 0; alt < 2; alt++) {
            struct fxm_opts o = {.sig = sigs[s], .alt_names = alt};
            uint8_t *file;
            struct s3fs *fs = open_fixture(&o, &file);
            size_t len;
            uint8_t *glb = read_path(fs, "/granny/root/Skeletons/0/skeleton.glb", &len);
            struct glbdoc d;
            assert_int_equal(glb_read(glb, len, &d), 0);
            /* two root bones: one more node, named as the skeleton, holds them */
            assert_int_equal(json_array_size(json_object_get(d.json, "nodes")), FXM_BONES + 1);
            assert_string_equal(json_string_value(json_object_get(node(&d, FXM_BONES), "name")), "fixture_skeleton");
            check_bones(&d, FXM_BONES);
            glb_doc_free(&d);
            free(glb);
            s3fs_close(fs);
            free(file);
        }
    }
}

/* Orientations stored off unit, as real files hold them (fxm_rough_orientation), are
 * written unit with every component in glTF's range [-1, 1]: the stored quaternion
 * divided by its length; root's w = 1.00000012 is written 1. Both exports, every byte
 * order. (check_exports.sh runs the validator on the same fixture.) */
static void test_rough_orientations(void **state)
{
    (void)state;
    static const char *const paths[] = {"/granny/root/Skeletons/0/skeleton.glb", "/granny/root/Models/0/model.glb"};
    for (size_t s = 0; s < sizeof sigs / sizeof sigs[0]; s++) {
        struct fxm_opts o = {.sig = sigs[s], .rough_orientations = true};
        uint8_t *file;
        struct s3fs *fs = open_fixture(&o, &file);
        for (size_t p = 0; p < 2; p++) {
            size_t len;
            uint8_t *glb = read_path(fs, paths[p], &len);
            struct glbdoc d;
            assert_int_equal(glb_read(glb, len, &d), 0);
            for (size_t b = 0; b < 2; b++) {
                char why[128];
                if (!glb_rotation_normalised(node(&d, b), fxm_rough_orientation[b], why, sizeof why))
                    fail_msg("%s %s bone %zu: %s", sigs[s], paths[p], b, why);
            }
            assert_true(glb_num(node(&d, 0), "rotation", 3) == 1.0);
            glb_doc_free(&d);
            free(glb);
        }
        s3fs_close(fs);
        free(file);
    }
}

static void test_model_glb(void **state)
{
    (void)state;
    uint8_t *first = NULL;
    size_t first_len = 0;
    for (size_t s = 0; s < sizeof sigs / sizeof sigs[0]; s++) {
        struct fxm_opts o = {.sig = sigs[s]};
        uint8_t *file;
        struct s3fs *fs = open_fixture(&o, &file);
        assert_true(path_exists(fs, "/granny/models")); /* -> root/Models */
        size_t len;
        uint8_t *glb = read_path(fs, "/granny/root/Models/0/model.glb", &len);
        struct glbdoc d;
        assert_int_equal(glb_read(glb, len, &d), 0);
        /* nodes: 4 bones, the model (placement), body, prop; broken is left out */
        json_t *model = node(&d, FXM_BONES);
        assert_string_equal(json_string_value(json_object_get(model, "name")), "fixture_model");
        assert_true(glb_num(model, "translation", 0) == 1 && glb_num(model, "translation", 2) == 3);
        check_bones(&d, FXM_BONES);
        json_t *meshes = json_object_get(d.json, "meshes");
        assert_int_equal(json_array_size(meshes), 2);
        json_t *body = json_array_get(meshes, 0);
        assert_string_equal(json_string_value(json_object_get(body, "name")), "body");
        json_t *prims = json_object_get(body, "primitives");
        assert_int_equal(json_array_size(prims), 2); /* one per group */
        json_t *attrs = json_object_get(json_array_get(prims, 0), "attributes");
        size_t count, pos_acc = (size_t)json_integer_value(json_object_get(attrs, "POSITION"));
        int ncomp;
        float *pos = glb_accessor_floats(&d, pos_acc, &count, &ncomp);
        assert_int_equal(count, FXM_BODY_VERTS);
        json_t *acc = json_array_get(json_object_get(d.json, "accessors"), pos_acc);
        for (size_t k = 0; k < 3; k++) {
            float lo = INFINITY, hi = -INFINITY;
            for (size_t v = 0; v < FXM_BODY_VERTS; v++) {
                assert_true(pos[3 * v + k] == fxm_body[v].pos[k]);
                lo = fminf(lo, fxm_body[v].pos[k]);
                hi = fmaxf(hi, fxm_body[v].pos[k]);
            }
            assert_true(glb_num(acc, "min", k) == lo && glb_num(acc, "max", k) == hi);
        }
        free(pos);
        /* triangles per group, 16-bit as stored */
        for (size_t g = 0; g < 2; g++) {
            json_t *p = json_array_get(prims, g);
            assert_int_equal(json_integer_value(json_object_get(p, "material")), (json_int_t)g);
            uint32_t *idx = glb_accessor_uints(&d, (size_t)json_integer_value(json_object_get(p, "indices")), &count, &ncomp);
            assert_int_equal(count, 3 * (size_t)fxm_body_groups[g][2]);
            for (size_t i = 0; i < count; i++)
                assert_int_equal(idx[i], fxm_body_index[3 * fxm_body_groups[g][1] + (int)i]);
            free(idx);
        }
        json_t *mats = json_object_get(d.json, "materials");
        assert_string_equal(json_string_value(json_object_get(json_array_get(mats, 1), "name")), "cloth");
        /* joints: the body's binding 0 is "leg" (bone 2), binding 1 "root" (bone 0) */
        uint32_t *j = glb_accessor_uints(&d, (size_t)json_integer_value(json_object_get(attrs, "JOINTS_0")), &count, &ncomp);
        float *w = glb_accessor_floats(&d, (size_t)json_integer_value(json_object_get(attrs, "WEIGHTS_0")), &count, &ncomp);
        assert_non_null(j);
        assert_non_null(w);
        static const uint16_t bone_of[2] = {2, 0};
        for (size_t v = 0; v < FXM_BODY_VERTS; v++) {
            float want[FXM_BONES] = {0}, got[FXM_BONES] = {0}, sum = 0;
            for (int k = 0; k < 4; k++)
                sum += fxm_body[v].weights[k];
            for (int k = 0; k < 4; k++)
                if (fxm_body[v].weights[k])
                    want[bone_of[fxm_body[v].indices[k]]] += fxm_body[v].weights[k] / sum;
            for (size_t k = 0; k < 4; k++) {
                if (w[4 * v + k] > 0) {
                    assert_true(j[4 * v + k] < FXM_BONES);
                    assert_true(got[j[4 * v + k]] == 0); /* one slot per bone */
                    got[j[4 * v + k]] += w[4 * v + k];
                }
            }
            for (size_t b = 0; b < FXM_BONES; b++)
                if (fabsf(got[b] - want[b]) > 1e-6f)
                    fail_msg("vertex %zu bone %zu: weight %g, expected %g", v, b, (double)got[b], (double)want[b]);
        }
        free(j);
        free(w);
        /* prop is rigid: every vertex wholly on "arm" (bone 3) */
        json_t *pattrs = json_object_get(json_array_get(json_object_get(json_array_get(meshes, 1), "primitives"), 0), "attributes");
        j = glb_accessor_uints(&d, (size_t)json_integer_value(json_object_get(pattrs, "JOINTS_0")), &count, &ncomp);
        assert_int_equal(count, FXM_PROP_VERTS);
        for (size_t v = 0; v < FXM_PROP_VERTS; v++)
            assert_int_equal(j[4 * v], 3);
        free(j);
        /* the mesh left out, and why */
        size_t elen;
        char *why = (char *)read_path(fs, "/granny/root/Models/0/meshes.error", &elen);
        assert_non_null(strstr(why, "mesh binding 2"));
        assert_non_null(strstr(why, "past the 3 vertices"));
        free(why);
        /* every byte order and pointer size gives the same file */
        if (!first) {
            first = glb;
            first_len = len;
        } else {
            assert_int_equal(len, first_len);
            assert_memory_equal(glb, first, len);
            free(glb);
        }
        glb_doc_free(&d);
        assert_true(walk_all(fs, 100000) > 0);
        s3fs_close(fs);
        free(file);
    }
    free(first);
}

/* Counts lines starting with prefix. */
static size_t lines(const char *text, const char *prefix)
{
    size_t n = 0, pl = strlen(prefix);
    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        n += strncmp(p, prefix, pl) == 0;
    return n;
}

static void test_mesh_obj(void **state)
{
    (void)state;
    struct fxm_opts o = {.sig = "be32"};
    uint8_t *file;
    struct s3fs *fs = open_fixture(&o, &file);
    size_t len;
    char *obj = (char *)read_path(fs, "/granny/root/Meshes/0/mesh.obj", &len);
    char *text = strndup(obj, len);
    assert_int_equal(lines(text, "v "), FXM_BODY_VERTS);
    assert_int_equal(lines(text, "vt "), FXM_BODY_VERTS);
    assert_int_equal(lines(text, "vn "), FXM_BODY_VERTS);
    assert_int_equal(lines(text, "f "), FXM_BODY_TRIS);
    char want[128];
    snprintf(want, sizeof want, "\nv %.9g %.9g %.9g\n", (double)fxm_body[3].pos[0], (double)fxm_body[3].pos[1],
             (double)fxm_body[3].pos[2]);
    assert_non_null(strstr(text, want));
    snprintf(want, sizeof want, "\nf %d/%d/%d %d/%d/%d %d/%d/%d\n", fxm_body_index[3] + 1, fxm_body_index[3] + 1,
             fxm_body_index[3] + 1, fxm_body_index[4] + 1, fxm_body_index[4] + 1, fxm_body_index[4] + 1,
             fxm_body_index[5] + 1, fxm_body_index[5] + 1, fxm_body_index[5] + 1);
    assert_non_null(strstr(text, want));
    free(text);
    free(obj);
    /* prop: positions only */
    obj = (char *)read_path(fs, "/granny/root/Meshes/1/mesh.obj", &len);
    text = strndup(obj, len);
    assert_non_null(strstr(text, "\nf 1 2 3\n"));
    assert_int_equal(lines(text, "vn "), 0);
    free(text);
    free(obj);
    /* broken: no .obj, an .error saying why */
    assert_false(path_exists(fs, "/granny/root/Meshes/2/mesh.obj"));
    char *why = (char *)read_path(fs, "/granny/root/Meshes/2/mesh.error", &len);
    assert_non_null(strstr(why, "past the 3 vertices"));
    free(why);
    s3fs_close(fs);
    free(file);
}

static void expect_skeleton_error(const struct fxm_opts *o, const char *needle)
{
    uint8_t *file;
    struct s3fs *fs = open_fixture(o, &file);
    assert_false(path_exists(fs, "/granny/root/Skeletons/0/skeleton.glb"));
    assert_false(path_exists(fs, "/granny/root/Models/0/model.glb"));
    expect_has(fs, "/granny/root/Skeletons/0/skeleton.error", needle);
    expect_has(fs, "/granny/root/Models/0/model.error", needle);
    assert_true(path_exists(fs, "/granny/root/Meshes/0/mesh.obj")); /* meshes need no skeleton */
    assert_true(walk_all(fs, 100000) > 0);
    s3fs_close(fs);
    free(file);
}

/* The body cannot be exported: mesh.error says why, and the model leaves it out. */
static void expect_body_error(const struct fxm_opts *o, const char *needle)
{
    uint8_t *file;
    struct s3fs *fs = open_fixture(o, &file);
    assert_false(path_exists(fs, "/granny/root/Meshes/0/mesh.obj"));
    expect_has(fs, "/granny/root/Meshes/0/mesh.error", needle);
    expect_has(fs, "/granny/root/Models/0/meshes.error", "mesh binding 0 (body): left out");
    expect_has(fs, "/granny/root/Models/0/meshes.error", needle);
    size_t len;
    uint8_t *glb = read_path(fs, "/granny/root/Models/0/model.glb", &len);
    struct glbdoc d;
    assert_int_equal(glb_read(glb, len, &d), 0);
    json_t *meshes = json_object_get(d.json, "meshes");
    assert_int_equal(json_array_size(meshes), 1); /* prop alone */
    assert_string_equal(json_string_value(json_object_get(json_array_get(meshes, 0), "name")), "prop");
    glb_doc_free(&d);
    free(glb);
    assert_true(walk_all(fs, 100000) > 0);
    s3fs_close(fs);
    free(file);
}

/* A model of 20,003 mesh bindings, 20,001 of them left out (the broken mesh, then NULL
 * Mesh references): meshes.error names the first MDL_NOTES_NAMED (256) and counts the
 * rest, and the model still holds its two good meshes. Each line used to be appended by
 * strlen and realloc of the whole text: the square of the bindings. */
static void test_many_bindings_left_out(void **state)
{
    (void)state;
    struct fxm_opts o = {.sig = "le32", .more_bindings = 20000};
    uint8_t *file;
    struct s3fs *fs = open_fixture(&o, &file);
    size_t len;
    char *text = (char *)read_path(fs, "/granny/root/Models/0/meshes.error", &len);
    text = realloc(text, len + 1);
    text[len] = 0;
    size_t lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += text[i] == '\n';
    assert_int_equal(lines + (len && text[len - 1] != '\n'), 257);
    assert_non_null(strstr(text, "mesh binding 2 (broken): left out: "));
    assert_non_null(strstr(text, "\nmesh binding 257 (): left out: no Mesh\n"));
    assert_null(strstr(text, "mesh binding 258 "));
    assert_non_null(strstr(text, "\n19745 more not named here")); /* 20,001 - 256 */
    free(text);
    uint8_t *glb = read_path(fs, "/granny/root/Models/0/model.glb", &len);
    struct glbdoc d;
    assert_int_equal(glb_read(glb, len, &d), 0);
    assert_int_equal(json_array_size(json_object_get(d.json, "meshes")), 2); /* body, prop */
    glb_doc_free(&d);
    free(glb);
    assert_true(walk_all(fs, 100000) > 0);
    s3fs_close(fs);
    free(file);
}

static void test_cannot_export(void **state)
{
    (void)state;
    struct fxm_opts o = {.sig = "le64", .no_inverse_world = true};
    expect_skeleton_error(&o, "no InverseWorldTransform or InverseWorld4x4");
    o = (struct fxm_opts){.sig = "le32", .parent_cycle = true};
    expect_skeleton_error(&o, "cycle");
    o = (struct fxm_opts){.sig = "be32", .no_position = true};
    expect_body_error(&o, "no Position member");
    o = (struct fxm_opts){.sig = "le64", .nan_position = true};
    expect_body_error(&o, "not a finite number");
}

/* ---- the real vectors: the exports against what the tree shows ---- */

static double value_at(struct s3fs *fs, const char *path, int line)
{
    char *t = read_path(fs, path, NULL);
    char *p = t;
    for (int i = 0; i < line && p; i++)
        p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL;
    double v = p ? strtod(p, NULL) : NAN;
    free(t);
    return v;
}

/* Elements of an array of structs: directories 0..N-1, or one NAME.csv row each (header first). */
static size_t array_count(struct s3fs *fs, const char *path)
{
    uint32_t ino;
    if (tree_resolve(fs->tree, path, &ino) == 0 && tree_kind(fs->tree, ino) == NODE_DIR) {
        tree_populate(fs->tree, ino);
        size_t n = 0;
        char sub[512];
        for (;; n++) {
            snprintf(sub, sizeof sub, "%s/%zu", path, n);
            uint32_t k;
            if (tree_resolve(fs->tree, sub, &k))
                return n;
        }
    }
    char csv[512];
    snprintf(csv, sizeof csv, "%s.csv", path);
    char *t = read_path(fs, csv, NULL);
    size_t lines = 0;
    for (char *p = t; *p; p++)
        lines += *p == '\n';
    free(t);
    return lines - 1;
}

/* Three floats of member `member` of element k: from k/member, or from the CSV columns whose
 * header starts with the member name. */
static void element_vec3(struct s3fs *fs, const char *array, size_t k, const char *member, float out[3])
{
    char path[512];
    snprintf(path, sizeof path, "%s/%zu/%s", array, k, member);
    uint32_t ino;
    if (tree_resolve(fs->tree, path, &ino) == 0) {
        for (int i = 0; i < 3; i++)
            out[i] = (float)value_at(fs, path, i);
        return;
    }
    snprintf(path, sizeof path, "%s.csv", array);
    char *t = read_path(fs, path, NULL);
    int col[3], ncol = 0, c = 0;
    char *line = t;
    for (char *p = t; *p && *p != '\n'; c++) {
        if (strncmp(p, member, strlen(member)) == 0 && ncol < 3)
            col[ncol++] = c;
        p += strcspn(p, ",\n");
        if (*p == ',')
            p++;
    }
    assert_int_equal(ncol, 3);
    for (size_t i = 0; i <= k; i++)
        line = strchr(line, '\n') + 1;
    c = 0;
    for (char *p = line; *p && *p != '\n'; c++) {
        for (int i = 0; i < 3; i++)
            if (col[i] == c)
                out[i] = strtof(p, NULL);
        p += strcspn(p, ",\n");
        if (*p == ',')
            p++;
    }
    free(t);
}

static void check_vector(const char *dir, const char *name)
{
    size_t size;
    uint8_t *file = slurp_vector(dir, "gr2", name, &size);
    assert_non_null(file);
    struct s3fs *fs = open_mem(file, size, NULL, name);
    /* skeleton.glb: a node per bone named as the bone, parents, bone 0's transform */
    const char *bones = "/granny/root/Skeletons/0/Bones";
    size_t nb = array_count(fs, bones), len;
    uint8_t *glb = read_path(fs, "/granny/root/Skeletons/0/skeleton.glb", &len);
    struct glbdoc d;
    assert_int_equal(glb_read(glb, len, &d), 0);
    json_t *skin = json_array_get(json_object_get(d.json, "skins"), 0);
    assert_int_equal(json_array_size(json_object_get(skin, "joints")), nb);
    char path[512];
    for (size_t i = 0; i < nb; i++) {
        snprintf(path, sizeof path, "%s/%zu/Name", bones, i);
        char *bn = read_path(fs, path, NULL);
        assert_non_null(bn);
        bn[strcspn(bn, "\n")] = 0;
        assert_string_equal(json_string_value(json_object_get(node(&d, i), "name")), bn);
        free(bn);
        snprintf(path, sizeof path, "%s/%zu/ParentIndex", bones, i);
        int parent = (int)value_at(fs, path, 0);
        if (parent >= 0)
            assert_true(glb_has_child(&d, (size_t)parent, i));
    }
    snprintf(path, sizeof path, "%s/0/Transform/position", bones);
    for (int k = 0; k < 3; k++)
        assert_true((float)glb_num(node(&d, 0), "translation", (size_t)k) == (float)value_at(fs, path, k));
    snprintf(path, sizeof path, "%s/0/Transform/orientation", bones);
    for (int k = 0; k < 4; k++)
        assert_true((float)glb_num(node(&d, 0), "rotation", (size_t)k) == (float)value_at(fs, path, k));
    glb_doc_free(&d);
    free(glb);
    /* model.glb: the mesh's vertices, triangles and bounds as the tree shows them */
    glb = read_path(fs, "/granny/root/Models/0/model.glb", &len);
    assert_int_equal(glb_read(glb, len, &d), 0);
    const char *verts = "/granny/root/VertexDatas/0/Vertices";
    size_t nv = array_count(fs, verts), ni = array_count(fs, "/granny/root/TriTopologies/0/Indices");
    json_t *prim = json_array_get(json_object_get(json_array_get(json_object_get(d.json, "meshes"), 0), "primitives"), 0);
    size_t pos_acc = (size_t)json_integer_value(json_object_get(json_object_get(prim, "attributes"), "POSITION"));
    json_t *acc = json_array_get(json_object_get(d.json, "accessors"), pos_acc);
    assert_int_equal(json_integer_value(json_object_get(acc, "count")), nv);
    size_t tris = 0;
    json_t *prims = json_object_get(json_array_get(json_object_get(d.json, "meshes"), 0), "primitives");
    for (size_t p = 0; p < json_array_size(prims); p++) {
        json_t *ia = json_array_get(json_object_get(d.json, "accessors"),
                                    (size_t)json_integer_value(json_object_get(json_array_get(prims, p), "indices")));
        tris += (size_t)json_integer_value(json_object_get(ia, "count")) / 3;
    }
    assert_int_equal(tris, ni / 3);
    float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (size_t v = 0; v < nv; v++) {
        float p[3];
        element_vec3(fs, verts, v, "Position", p);
        for (int k = 0; k < 3; k++) {
            lo[k] = fminf(lo[k], p[k]);
            hi[k] = fmaxf(hi[k], p[k]);
        }
    }
    for (int k = 0; k < 3; k++)
        assert_true((float)glb_num(acc, "min", (size_t)k) == lo[k] && (float)glb_num(acc, "max", (size_t)k) == hi[k]);
    glb_doc_free(&d);
    free(glb);
    assert_true(walk_all(fs, 1000000) > 0);
    s3fs_close(fs);
    free(file);
}

static void test_vectors(void **state)
{
    (void)state;
    each_gr2_vector(check_vector);
}

/* An export built (and cached) before the file changed is EIO afterwards, though a
 * rebuild would have the same size: the same bytes, a new mtime. */
static void test_export_after_change(void **state)
{
    (void)state;
    struct fxm_opts o = {.sig = "le32"};
    size_t size;
    uint8_t *file = fxm_build(&o, &size);
    char path[] = "/tmp/s3rig-export-change-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, file, size), (ssize_t)size);
    struct s3fs *fs;
    char err[256];
    if (s3fs_open(&fs, path, NULL, err, sizeof err))
        fail_msg("%s", err);
    size_t len;
    free(read_path(fs, "/granny/root/Models/0/model.glb", &len)); /* built and cached */
    uint32_t ino;
    assert_int_equal(tree_resolve(fs->tree, "/granny/root/Models/0/model.glb", &ino), 0);
    struct timespec ts[2] = {{0, UTIME_OMIT}, {12345, 0}};
    assert_int_equal(futimens(fd, ts), 0);
    uint8_t buf[16];
    size_t got = 0;
    assert_int_equal(tree_read(fs->tree, ino, 0, buf, sizeof buf, &got), S3_ERR_IO);
    s3fs_close(fs);
    close(fd);
    unlink(path);
    free(file);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_skeleton_glb),
        cmocka_unit_test(test_model_glb),
        cmocka_unit_test(test_rough_orientations),
        cmocka_unit_test(test_mesh_obj),
        cmocka_unit_test(test_cannot_export),
        cmocka_unit_test(test_many_bindings_left_out),
        cmocka_unit_test(test_vectors),
        cmocka_unit_test(test_export_after_change),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
