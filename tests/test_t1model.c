/* Turok 1 exports without FUSE: /models/N/model.glb, model.obj and sections.error of the
 * Turok 1 fixture (fxt_t1_sample) read back and compared with the fixture's values
 * (expect_t1x.c); the pure model builder (parse/t1_model.h) on decoded fixture sections;
 * objects that cannot be exported (a hierarchy that is not a tree, nothing to draw). */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "expect_t1.h"
#include "expect_t1x.h"
#include "fixture_t2fs.h"
#include "fs/export/export.h"
#include "fs/core/view.h"
#include "glbread.h"
#include "parse/t2fs/t1_model.h"
#include "tree_probe.h"
#include "walk.h"
#include "testutil.h"

/* ---- the fixture through the tree ---- */

static void test_sample_exports(void **state)
{
    (void)state;
    for (int be = 0; be <= 1; be++) {
        struct fxt *root = fxt_t1_sample(be);
        size_t size;
        uint8_t *file = fxt_write(root, be, 0, 0, &size);
        struct s3fs *fs = open_mem(file, size, NULL, NULL);
        struct probe p = tree_probe(fs);
        ex_t1_exports(&p, be);
        assert_true(walk_all(fs, 100000) > 0);
        s3fs_close(fs);
        /* every cut of the file: exports or errors, never a crash */
        walk_cuts(file, size, 0, 5, 100000);
        free(file);
        fxt_free(root);
    }
}

/* Rebuilds on reader threads while another thread populates directories: with a cache
 * too small to keep them, every read of model.glb builds it again, reading the object
 * with the locator (under the view's lock) while the walk uses it too. The bytes stay the
 * same. */
struct reader {
    struct s3fs *fs;
    uint32_t ino;
    const uint8_t *want;
    size_t len;
    int bad;
    unsigned refused;
};

static void *read_again(void *arg)
{
    struct reader *r = arg;
    for (int k = 0; k < 40; k++) {
        uint8_t *buf;
        size_t len;
        enum s3_err rc;
        /* the bound is one for both readers: a build that does not fit beside the other's
         * bytes is refused (EIO), and read again */
        for (int tries = 0; (rc = tree_read_all(r->fs->tree, r->ino, &buf, &len)) == S3_ERR_IO && tries < 100000; tries++)
            r->refused++;
        if (rc || len != r->len || memcmp(buf, r->want, len))
            r->bad++;
        if (rc == 0)
            free(buf);
    }
    return NULL;
}

static void test_rebuild_threads(void **state)
{
    (void)state;
    struct fxt *root = fxt_t1_sample(true);
    size_t size;
    uint8_t *file = fxt_write(root, true, 0, 0, &size);
    struct s3fs_opts opts = {.cache_bytes = 1024};
    struct s3fs *fs = open_mem(file, size, &opts, NULL);
    struct reader r[2] = {{fs, 0, NULL, 0, 0, 0}, {fs, 0, NULL, 0, 0, 0}};
    const char *paths[2] = {"/models/0/model.glb", "/models/1/model.obj"};
    uint8_t *want[2];
    for (int i = 0; i < 2; i++) {
        assert_int_equal(tree_resolve(fs->tree, paths[i], &r[i].ino), 0);
        assert_int_equal(tree_read_all(fs->tree, r[i].ino, &want[i], &r[i].len), 0);
        r[i].want = want[i];
        assert_true(r[i].len > opts.cache_bytes || i == 1);
    }
    uint64_t before = fs->cache.produced;
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&th[i], NULL, read_again, &r[i]), 0);
    /* a listing refused bytes beside the readers' (one bound for all) fails, ENOMEM, and
     * is made afresh by the next walk */
    enum s3_err rc;
    for (unsigned tries = 0; (rc = tree_populate_all(fs->tree)) == S3_ERR_NOMEM && tries < 100000; tries++)
        ;
    assert_int_equal(rc, 0);
    for (int i = 0; i < 2; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(r[i].bad, 0);
        free(want[i]);
    }
    assert_true(fs->cache.produced >= before + 40); /* model.glb was built again and again */
    s3fs_close(fs);
    free(file);
    fxt_free(root);
}

/* ---- the pure builder on decoded sections ---- */

/* Decodes case k of fxt_t1_cases into x (the way the view does, from the stored bytes). */
static void decode_case(size_t k, bool be, struct t1_obj_section *x)
{
    const struct fxt_t1_case *c = &fxt_t1_cases(&(size_t){0})[k];
    struct fxt *sec = fxt_t1_section(c->words, c->nwords, c->nverts, c->seed, be);
    size_t size;
    uint8_t *bytes = fxt_write(sec, be, 0, 0, &size);
    const uint8_t *words = bytes + sec->child[1]->pos + 8, *planes = bytes + sec->child[2]->pos + 8;
    assert_int_equal(t1_section_decode(words, c->nwords, planes, c->nverts, be, &x->s), 0);
    x->ok = true;
    free(bytes);
    fxt_free(sec);
}

static void set_children(struct t1_object *o, uint32_t k, const uint32_t *c, uint32_t n)
{
    o->node[k].children = malloc((n ? n : 1) * sizeof *c);
    if (n)
        memcpy(o->node[k].children, c, n * sizeof *c);
    o->node[k].nchildren = n;
}

/* Object 0 of the sample, built by hand: node 0 {children [1], part 0: cases 0, 2},
 * node 1 {part 0: case 1, part 1: case 3}; extra: a section that could not be read. */
static void sample_object(struct t1_object *o, bool be)
{
    memset(o, 0, sizeof *o);
    assert_int_equal(t1_object_nodes(o, 2), S3_OK);
    set_children(o, 0, (const uint32_t[]){1}, 1);
    set_children(o, 1, NULL, 0);
    decode_case(0, be, t1_object_section(o, 0, 0, 0));
    decode_case(2, be, t1_object_section(o, 0, 0, 1));
    decode_case(1, be, t1_object_section(o, 1, 0, 0));
    decode_case(3, be, t1_object_section(o, 1, 1, 0));
    struct t1_obj_section *x = t1_object_section(o, 1, 1, 1);
    snprintf(x->err, sizeof x->err, "/root/0/0/1/1/1/2/1/1: not an array");
}

static void test_builder(void **state)
{
    (void)state;
    for (int be = 0; be <= 1; be++) {
        struct t1_object o;
        sample_object(&o, be);
        t1_object_missing(&o, "nodes/2/parts", "why");
        struct mdl_model m;
        char err[256];
        assert_int_equal(t1_object_model(&o, "object 0", &m, err, sizeof err), 0);
        assert_string_equal(m.name, "object 0");
        assert_true(m.no_skin);
        assert_int_equal(m.skel.nbones, 2);
        assert_string_equal(m.skel.bone[0].name, "node 0");
        assert_int_equal(m.skel.bone[0].parent, -1);
        assert_int_equal(m.skel.bone[1].parent, 0);
        /* two parts draw: counts are the decoded sections' */
        assert_int_equal(m.nmeshes, 2);
        const struct mdl_mesh *a = &m.mesh[0], *b = &m.mesh[1];
        assert_string_equal(a->name, "node 0 part 0");
        assert_true(a->on_bone && a->bone == 0 && b->on_bone && b->bone == 1);
        assert_int_equal(a->nverts, o.sec[0].s.nvert + o.sec[1].s.nvert);
        assert_int_equal(a->ntris, o.sec[0].s.st.ntri + o.sec[1].s.st.ntri);
        assert_int_equal(a->ngroups, 2);
        assert_true(a->index16); /* 16-bit in the .glb when every index fits */
        assert_int_equal(a->group[1].first, o.sec[0].s.st.ntri);
        assert_int_equal(a->group[1].count, o.sec[1].s.st.ntri);
        assert_int_equal(b->nverts, 70);
        assert_int_equal(b->ntris, 6);
        /* values as stored: vertex 3 of case 2 is vertex 43 of the part */
        struct fxt_t1_vert x = fxt_t1_vertex(fxt_t1_cases(&(size_t){0})[2].seed, 3);
        assert_true(a->pos[3 * 43] == x.x && a->pos[3 * 43 + 1] == x.y && a->pos[3 * 43 + 2] == x.z);
        assert_true(a->uv[2 * 43] == x.s / 32.0f && a->uv[2 * 43 + 1] == x.t / 32.0f);
        assert_memory_equal(a->rgba + 4 * 43, x.c, 4);
        assert_int_equal(a->index[3 * 8], 40); /* case 2's first triangle, 0 1 2, past case 0's 40 vertices */
        /* left out: the missing part first, then the broken sections */
        assert_non_null(strstr(m.left_out, "nodes/2/parts: why\n"));
        assert_non_null(strstr(m.left_out, "nodes/1/parts/1/sections/0: the stream fits neither layout ("));
        assert_non_null(strstr(m.left_out, "nodes/1/parts/1/sections/1: /root/0/0/1/1/1/2/1/1: not an array\n"));
        assert_true(strstr(m.left_out, "nodes/2/parts") < strstr(m.left_out, "sections/0"));
        /* the exporters take it: no skin, meshes under their nodes */
        uint8_t *f;
        size_t len;
        assert_int_equal(export_model_glb(&m, &f, &len, err, sizeof err), 0);
        struct glbdoc d;
        assert_int_equal(glb_read(f, len, &d), 0);
        assert_null(json_object_get(d.json, "skins"));
        json_t *nodes = json_object_get(d.json, "nodes");
        assert_int_equal(json_array_size(nodes), 5); /* 2 nodes, the object, 2 parts */
        glb_doc_free(&d);
        free(f);
        mdl_model_free(&m);
        t1_object_free(&o);
    }
    /* 300 missing parts and the 2 broken sections: the first 256 named, 46 counted */
    struct t1_object o;
    sample_object(&o, false);
    for (int i = 0; i < 300; i++) {
        char what[32];
        snprintf(what, sizeof what, "nodes/%d/parts", i);
        t1_object_missing(&o, what, "why");
    }
    struct mdl_model m;
    char err[256];
    assert_int_equal(t1_object_model(&o, "object 0", &m, err, sizeof err), 0);
    assert_non_null(strstr(m.left_out, "nodes/0/parts: why\nnodes/1/parts: why\n"));
    assert_non_null(strstr(m.left_out, "\nnodes/255/parts: why\n46 more not named here\n"));
    assert_null(strstr(m.left_out, "nodes/256/parts"));
    assert_null(strstr(m.left_out, "sections/"));
    mdl_model_free(&m);
    t1_object_free(&o);
}

/* Fails with err holding want. Every refusal here is the object's own bytes (a hierarchy
 * that is not a tree, no nodes, nothing to draw): FORMAT. */
static void refused(struct t1_object *o, const char *want)
{
    struct mdl_model m;
    char err[256];
    assert_int_equal(t1_object_model(o, "x", &m, err, sizeof err), S3_ERR_FORMAT);
    if (!strstr(err, want))
        fail_msg("'%s' lacks '%s'", err, want);
    assert_null(m.mesh);
    assert_null(m.skel.bone);
}

static void test_builder_refuses(void **state)
{
    (void)state;
    struct t1_object o;
    /* a child index past the nodes */
    sample_object(&o, false);
    o.node[0].children[0] = 7;
    refused(&o, "node 0: child 7 is not a node (the object has 2)");
    /* a node with two parents */
    free(o.node[1].children);
    set_children(&o, 1, (const uint32_t[]){1}, 1);
    o.node[0].children[0] = 1;
    refused(&o, "node 1: a child of node 0 and of node 1");
    /* a cycle: 0 -> 1 -> 0 */
    free(o.node[1].children);
    set_children(&o, 1, (const uint32_t[]){0}, 1);
    refused(&o, "the node hierarchy: bone 0: its parent chain is a cycle");
    t1_object_free(&o);
    /* no nodes */
    memset(&o, 0, sizeof o);
    refused(&o, "the object has no nodes");
    /* an object whose building ran out of memory (o->oom): NOMEM, not bad bytes */
    sample_object(&o, false);
    o.oom = true;
    struct mdl_model none;
    char why[256];
    assert_int_equal(t1_object_model(&o, "x", &none, why, sizeof why), S3_ERR_NOMEM);
    assert_null(none.mesh);
    t1_object_free(&o);
    /* nothing to draw: every section broken */
    memset(&o, 0, sizeof o);
    assert_int_equal(t1_object_nodes(&o, 1), S3_OK);
    decode_case(4, false, t1_object_section(&o, 0, 0, 0));
    decode_case(5, false, t1_object_section(&o, 0, 0, 1));
    refused(&o, "nothing to draw: 2 left out; the first: nodes/0/parts/0/sections/0: the stream fits neither layout");
    for (int i = 0; i < 300; i++) /* more than MDL_NOTES_NAMED: counted all the same */
        t1_object_missing(&o, "nodes/0/parts", "why");
    refused(&o, "nothing to draw: 302 left out; the first: nodes/0/parts: why");
    t1_object_free(&o);
    /* a triangle past the section's vertices (the decoder never makes one; the builder
     * checks anyway) is left out like a broken stream */
    memset(&o, 0, sizeof o);
    assert_int_equal(t1_object_nodes(&o, 1), S3_OK);
    struct t1_obj_section *x = t1_object_section(&o, 0, 0, 0);
    decode_case(2, false, x);
    x->s.st.tri[1][2] = 16;
    refused(&o, "nodes/0/parts/0/sections/0: triangle 1 names vertex 16 of 16");
    /* a section of a node that is not one */
    x->s.st.tri[1][2] = 12;
    x->node = 3;
    refused(&o, "node 3 is not one of the object's 1 nodes");
    x->node = 0;
    /* and an empty object of sections without triangles */
    struct t1_obj_section *e = t1_object_section(&o, 0, 1, 0);
    assert_int_equal(t1_section_decode(NULL, 0, NULL, 0, false, &e->s), 0);
    e->ok = true;
    struct mdl_model m;
    char err[256];
    assert_int_equal(t1_object_model(&o, "x", &m, err, sizeof err), 0);
    assert_int_equal(m.nmeshes, 1); /* the empty part makes no mesh and is not an error */
    assert_null(m.left_out);
    mdl_model_free(&m);
    t1_object_free(&o);
}

/* The exporter refuses a mesh placed under a bone the skeleton lacks. */
static void test_export_bone_range(void **state)
{
    (void)state;
    struct t1_object o;
    sample_object(&o, false);
    struct mdl_model m;
    char err[256];
    assert_int_equal(t1_object_model(&o, "x", &m, err, sizeof err), 0);
    m.mesh[1].bone = 2;
    uint8_t *f;
    size_t len;
    assert_int_equal(export_model_glb(&m, &f, &len, err, sizeof err), S3_ERR_FORMAT);
    assert_non_null(strstr(err, "mesh 1: placed under bone 2, past the 2 bones"));
    assert_int_equal(mdl_mesh_check(&m.mesh[1], m.skel.nbones, err, sizeof err), S3_ERR_FORMAT);
    mdl_model_free(&m);
    t1_object_free(&o);
}

/* ---- objects the tree cannot export ---- */

static struct fxt *u16s(const uint16_t *v, uint32_t n, bool be)
{
    uint8_t b[64];
    for (uint32_t i = 0; i < n; i++) {
        b[2 * i + (be ? 0 : 1)] = (uint8_t)(v[i] >> 8);
        b[2 * i + (be ? 1 : 0)] = (uint8_t)v[i];
    }
    return fxt_array(2, n, b, false);
}

static struct fxt *case_section(size_t k, bool be)
{
    const struct fxt_t1_case *c = &fxt_t1_cases(&(size_t){0})[k];
    return fxt_t1_section(c->words, c->nwords, c->nverts, c->seed, be);
}

/* A graphic object {info, geometry {info, nodes}, anims, events}; nodes NULL: a leaf
 * where the nodes branch belongs. */
static struct fxt *object(struct fxt *nodes)
{
    struct fxt *info = fxt_branch(2, fxt_raw("0123456789abcdef01234567", 24), fxt_array(2, 0, NULL, false));
    struct fxt *geometry = fxt_branch(2, fxt_raw("geominfo", 8), nodes ? nodes : fxt_raw("notnodes", 8));
    return fxt_branch(4, info, geometry, fxt_branch(0), fxt_array(4, 0, NULL, false));
}

/* A Turok 1 file (11 root children) holding these objects. */
static uint8_t *t1_file(struct fxt *objects, bool be, size_t *size, struct fxt **root)
{
    struct fxt *e[9];
    for (int k = 0; k < 9; k++)
        e[k] = fxt_array(1, 0, NULL, false);
    *root = fxt_branch(11, objects, fxt_array(80, 0, NULL, false), fxt_array(2, 0, NULL, false), fxt_branch(0),
                       fxt_branch(3, e[0], e[1], e[2]), fxt_branch(2, e[3], fxt_branch(0)), fxt_branch(0),
                       fxt_branch(3, e[4], e[5], fxt_raw("max", 3)), fxt_branch(2, e[6], e[7]), fxt_branch(0), e[8]);
    return fxt_write(*root, be, 0, 0, size);
}

static void test_tree_refuses(void **state)
{
    (void)state;
    for (int be = 0; be <= 1; be++) {
        const uint16_t seven[1] = {7}, zero[1] = {0};
        /* 0: a child index past the nodes; 1: the nodes branch is a leaf; 2: every
         * section broken; 3: a good node and a part that is a leaf (left out) */
        struct fxt *n0 = fxt_branch(1, fxt_branch(3, u16s(seven, 1, be), u16s(zero, 1, be),
                                                  fxt_branch(1, fxt_branch(1, case_section(2, be)))));
        struct fxt *n2 = fxt_branch(1, fxt_branch(3, u16s(NULL, 0, be), u16s(zero, 1, be),
                                                  fxt_branch(1, fxt_branch(2, case_section(3, be), case_section(4, be)))));
        struct fxt *n3 = fxt_branch(1, fxt_branch(3, u16s(NULL, 0, be), u16s(zero, 1, be),
                                                  fxt_branch(2, fxt_branch(1, case_section(0, be)), fxt_raw("leaf", 4))));
        struct fxt *root;
        size_t size;
        uint8_t *file = t1_file(fxt_branch(4, object(n0), object(NULL), object(n2), object(n3)), be, &size, &root);
        struct s3fs *fs = open_mem(file, size, NULL, NULL);
        struct probe p = tree_probe(fs);
        static const char *const why[] = {"node 0: child 7 is not a node (the object has 1)",
                                          "/root/0/1/1/1: a leaf, not a branch",
                                          ("nothing to draw: 2 left out; the first: nodes/0/parts/0/sections/0: "
                                           "the stream fits neither layout (")};
        for (unsigned k = 0; k < 3; k++) {
            char path[64];
            snprintf(path, sizeof path, "/models/%u/model.error", k);
            ex_holds(&p, path, why[k]);
            enum expect_kind kind;
            uint64_t sz;
            snprintf(path, sizeof path, "/models/%u/model.glb", k);
            assert_int_equal(p.stat(p.ctx, path, &kind, &sz), -ENOENT);
            snprintf(path, sizeof path, "/models/%u/model.obj", k);
            assert_int_equal(p.stat(p.ctx, path, &kind, &sz), -ENOENT);
        }
        /* the part that is a leaf is named; the rest is exported */
        ex_holds(&p, "/models/3/sections.error", "nodes/0/parts/1: /root/0/3/1/1/0/2/1: a leaf, not a branch\n");
        uint8_t *buf;
        size_t len;
        assert_int_equal(p.read(p.ctx, "/models/3/model.glb", &buf, &len), 0);
        struct glbdoc d;
        assert_int_equal(glb_read(buf, len, &d), 0);
        size_t count;
        int ncomp;
        json_t *prim = json_array_get(json_object_get(json_array_get(json_object_get(d.json, "meshes"), 0), "primitives"), 0);
        float *pos = glb_accessor_floats(&d, (size_t)json_integer_value(json_object_get(json_object_get(prim, "attributes"), "POSITION")),
                                         &count, &ncomp);
        assert_int_equal(count, 40);
        free(pos);
        glb_doc_free(&d);
        free(buf);
        assert_true(walk_all(fs, 100000) > 0);
        s3fs_close(fs);
        free(file);
        fxt_free(root);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sample_exports),
        cmocka_unit_test(test_rebuild_threads),
        cmocka_unit_test(test_builder),
        cmocka_unit_test(test_builder_refuses),
        cmocka_unit_test(test_export_bone_range),
        cmocka_unit_test(test_tree_refuses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
