#include "expect_t1x.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "expect_t1.h"
#include "glbread.h"

/* ---- what fxt_t1_sample holds (fixture_t2fs.h) ---- */

struct part_want {
    const char *name;
    unsigned node, part;
    unsigned ncases, cases[2]; /* its sections, in order: fxt_t1_cases indices */
};

struct obj_want {
    unsigned index, nnodes;
    int parent[2]; /* of each node, from the fixture's child lists; -1: a root */
    unsigned nparts;
    struct part_want parts[2];
    unsigned nbroken, broken_cases[4]; /* nodes/1/parts/1/sections/0.. (object 0) */
};

/* Object 0: node 0 {children [1], part 0: cases 0, 2}, node 1 {part 0: case 1; part 1:
 * cases 3-6, whose streams fit neither layout}. Object 1: one node, part 0: case 2. */
static const struct obj_want objects[] = {
    {0, 2, {-1, 0}, 2, {{"node 0 part 0", 0, 0, 2, {0, 2}}, {"node 1 part 0", 1, 0, 1, {1, 0}}}, 4, {3, 4, 5, 6}},
    {1, 1, {-1, 0}, 1, {{"node 0 part 0", 0, 0, 1, {2, 0}}}, 0, {0}},
};

/* A case's triangles, from its hand-written text. */
static size_t case_tris(const struct fxt_t1_case *c, unsigned (*tri)[3], size_t max)
{
    size_t n = 0;
    int used;
    for (const char *s = c->triangles; n < max && sscanf(s, "%u %u %u\n%n", &tri[n][0], &tri[n][1], &tri[n][2], &used) == 3;
         s += used)
        n++;
    return n;
}

static uint8_t *read_file(const struct probe *p, const char *path, size_t *len)
{
    enum expect_kind kind;
    uint64_t size;
    uint8_t *buf;
    if (p->stat(p->ctx, path, &kind, &size) || kind != EX_FILE)
        fail_msg("%s: missing", path);
    if (p->read(p->ctx, path, &buf, len))
        fail_msg("%s: unreadable", path);
    if (size != *len)
        fail_msg("%s: stat says %llu bytes, read gives %zu", path, (unsigned long long)size, *len);
    uint8_t *again;
    size_t len2;
    assert_int_equal(p->read(p->ctx, path, &again, &len2), 0); /* byte-identical on every read */
    assert_int_equal(len2, *len);
    assert_memory_equal(again, buf, *len);
    free(again);
    return buf;
}

/* ---- model.glb ---- */

static size_t node_named(const struct glbdoc *d, const char *name)
{
    json_t *nodes = json_object_get(d->json, "nodes");
    for (size_t i = 0; i < json_array_size(nodes); i++)
    {
        const char *n = json_string_value(json_object_get(json_array_get(nodes, i), "name"));
        if (n && strcmp(n, name) == 0)
            return i;
    }
    fail_msg("no node named '%s'", name);
    return 0;
}

static size_t int_of(const json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_integer(v))
        fail_msg("no integer '%s'", key);
    return (size_t)json_integer_value(v);
}

/* POSITION, TEXCOORD_0 and COLOR_0 of a part: the fixture's vertices, section after section. */
static void check_vertices(const struct glbdoc *d, const json_t *attrs, const struct part_want *w)
{
    const struct fxt_t1_case *cases = fxt_t1_cases(&(size_t){0});
    size_t count, ucount, ccount;
    int ncomp, uncomp, cncomp, ctype;
    size_t pa = int_of(attrs, "POSITION"), ta = int_of(attrs, "TEXCOORD_0"), ca = int_of(attrs, "COLOR_0");
    float *pos = glb_accessor_floats(d, pa, &count, &ncomp), *uv = glb_accessor_floats(d, ta, &ucount, &uncomp);
    const uint8_t *col = glb_accessor_data(d, ca, &ccount, &cncomp, &ctype);
    assert_non_null(pos);
    assert_non_null(uv);
    assert_non_null(col);
    assert_int_equal(ncomp, 3);
    assert_int_equal(uncomp, 2);
    assert_int_equal(cncomp, 4);
    assert_int_equal(ctype, 5121); /* unsigned bytes, read as 0..1 */
    json_t *cacc = json_array_get(json_object_get(d->json, "accessors"), ca);
    assert_true(json_is_true(json_object_get(cacc, "normalized")));
    float min[3] = {1e30f, 1e30f, 1e30f}, max[3] = {-1e30f, -1e30f, -1e30f};
    size_t v = 0;
    for (unsigned k = 0; k < w->ncases; k++) {
        const struct fxt_t1_case *c = &cases[w->cases[k]];
        for (uint32_t i = 0; i < c->nverts; i++, v++) {
            struct fxt_t1_vert x = fxt_t1_vertex(c->seed, i);
            float want[3] = {x.x, x.y, x.z};
            assert_true(v < count && v < ucount && v < ccount);
            for (int j = 0; j < 3; j++) {
                if (pos[3 * v + (size_t)j] != want[j])
                    fail_msg("%s vertex %zu: coordinate %d is %g, stored %g", w->name, v, j, (double)pos[3 * v + (size_t)j],
                             (double)want[j]);
                min[j] = want[j] < min[j] ? want[j] : min[j];
                max[j] = want[j] > max[j] ? want[j] : max[j];
            }
            /* s and t are 10.5 fixed point: texels = value / 32 */
            assert_true(uv[2 * v] == x.s / 32.0f && uv[2 * v + 1] == x.t / 32.0f);
            assert_memory_equal(col + 4 * v, x.c, 4);
        }
    }
    assert_int_equal(count, v);
    assert_int_equal(ucount, v);
    assert_int_equal(ccount, v);
    json_t *pacc = json_array_get(json_object_get(d->json, "accessors"), pa);
    for (size_t j = 0; j < 3; j++) {
        assert_true(glb_num(pacc, "min", j) == min[j]);
        assert_true(glb_num(pacc, "max", j) == max[j]);
    }
    free(pos);
    free(uv);
}

/* One primitive per section: its triangles, shifted past the earlier sections' vertices. */
static void check_primitives(const struct glbdoc *d, const json_t *mesh, const struct part_want *w)
{
    const struct fxt_t1_case *cases = fxt_t1_cases(&(size_t){0});
    json_t *prims = json_object_get(mesh, "primitives");
    assert_int_equal(json_array_size(prims), w->ncases);
    json_t *attrs = json_object_get(json_array_get(prims, 0), "attributes");
    check_vertices(d, attrs, w);
    uint32_t base = 0;
    for (unsigned k = 0; k < w->ncases; k++) {
        const struct fxt_t1_case *c = &cases[w->cases[k]];
        json_t *prim = json_array_get(prims, k);
        assert_int_equal(int_of(json_object_get(prim, "attributes"), "POSITION"), int_of(attrs, "POSITION"));
        unsigned tri[16][3];
        size_t ntri = case_tris(c, tri, 16), count;
        int ncomp;
        uint32_t *idx = glb_accessor_uints(d, int_of(prim, "indices"), &count, &ncomp);
        assert_non_null(idx);
        assert_int_equal(count, 3 * ntri);
        for (size_t t = 0; t < ntri; t++)
            for (size_t j = 0; j < 3; j++)
                if (idx[3 * t + j] != base + tri[t][j])
                    fail_msg("%s section %u triangle %zu: index %u, expected %u", w->name, k, t, idx[3 * t + j],
                             base + tri[t][j]);
        free(idx);
        base += c->nverts;
    }
}

static void check_glb(const struct probe *p, const struct obj_want *o)
{
    char path[64], name[32];
    snprintf(path, sizeof path, "/models/%u/model.glb", o->index);
    size_t len;
    uint8_t *f = read_file(p, path, &len);
    struct glbdoc d;
    assert_int_equal(glb_read(f, len, &d), 0);
    /* the hierarchy: node K is "node K" under its parent, the roots under "object N", the
     * only scene root; no skin (the nodes place parts, they do not deform them) */
    snprintf(name, sizeof name, "object %u", o->index);
    size_t top = node_named(&d, name);
    json_t *roots = json_object_get(json_array_get(json_object_get(d.json, "scenes"), 0), "nodes");
    assert_int_equal(json_array_size(roots), 1);
    assert_int_equal(json_integer_value(json_array_get(roots, 0)), (json_int_t)top);
    assert_int_equal(json_array_size(json_object_get(d.json, "skins")), 0);
    size_t node[2];
    for (unsigned k = 0; k < o->nnodes; k++) {
        snprintf(name, sizeof name, "node %u", k);
        node[k] = node_named(&d, name);
    }
    for (unsigned k = 0; k < o->nnodes; k++)
        assert_true(glb_has_child(&d, o->parent[k] < 0 ? top : node[o->parent[k]], node[k]));
    /* one mesh per part that draws something, under its node */
    assert_int_equal(json_array_size(json_object_get(d.json, "meshes")), o->nparts);
    for (unsigned i = 0; i < o->nparts; i++) {
        const struct part_want *w = &o->parts[i];
        size_t mn = node_named(&d, w->name);
        assert_true(glb_has_child(&d, node[w->node], mn));
        json_t *mesh = json_array_get(json_object_get(d.json, "meshes"),
                                      int_of(json_array_get(json_object_get(d.json, "nodes"), mn), "mesh"));
        assert_string_equal(json_string_value(json_object_get(mesh, "name")), w->name);
        check_primitives(&d, mesh, w);
    }
    glb_doc_free(&d);
    free(f);
}

/* ---- model.obj: the whole text, from the fixture's values and the OBJ rules ---- */

static void want_obj(const struct obj_want *o, char *out, size_t cap)
{
    const struct fxt_t1_case *cases = fxt_t1_cases(&(size_t){0});
    unsigned nv = 0, nt = 0, tri[16][3];
    for (unsigned i = 0; i < o->nparts; i++)
        for (unsigned k = 0; k < o->parts[i].ncases; k++)
            nv += cases[o->parts[i].cases[k]].nverts,
                nt += (unsigned)case_tris(&cases[o->parts[i].cases[k]], tri, 16);
    size_t n = (size_t)snprintf(out, cap, "# s3rigfs: %u meshes, %u vertices, %u triangles; coordinates as stored\n",
                                o->nparts, nv, nt);
    unsigned base = 1; /* OBJ counts from 1; every mesh has texture coordinates */
    for (unsigned i = 0; i < o->nparts; i++) {
        const struct part_want *w = &o->parts[i];
        n += (size_t)snprintf(out + n, cap - n, "o node_%u_part_%u\n", w->node, w->part);
        for (unsigned k = 0; k < w->ncases; k++) {
            const struct fxt_t1_case *c = &cases[w->cases[k]];
            for (uint32_t v = 0; v < c->nverts; v++) {
                struct fxt_t1_vert x = fxt_t1_vertex(c->seed, v);
                n += (size_t)snprintf(out + n, cap - n, "v %d %d %d %.9g %.9g %.9g\n", x.x, x.y, x.z, x.c[0] / 255.0,
                                      x.c[1] / 255.0, x.c[2] / 255.0);
            }
        }
        for (unsigned k = 0; k < w->ncases; k++) {
            const struct fxt_t1_case *c = &cases[w->cases[k]];
            for (uint32_t v = 0; v < c->nverts; v++) {
                struct fxt_t1_vert x = fxt_t1_vertex(c->seed, v);
                n += (size_t)snprintf(out + n, cap - n, "vt %.9g %.9g\n", x.s / 32.0, x.t / 32.0);
            }
        }
        for (unsigned k = 0; k < w->ncases; k++) {
            const struct fxt_t1_case *c = &cases[w->cases[k]];
            size_t ntri = case_tris(c, tri, 16);
            for (size_t t = 0; t < ntri; t++)
                n += (size_t)snprintf(out + n, cap - n, "f %u/%u %u/%u %u/%u\n", base + tri[t][0], base + tri[t][0],
                                      base + tri[t][1], base + tri[t][1], base + tri[t][2], base + tri[t][2]);
            base += c->nverts;
        }
    }
    assert_true(n < cap);
}

static void check_obj(const struct probe *p, const struct obj_want *o)
{
    char path[64];
    snprintf(path, sizeof path, "/models/%u/model.obj", o->index);
    size_t len, cap = 64 * 1024;
    uint8_t *f = read_file(p, path, &len);
    char *want = malloc(cap);
    want_obj(o, want, cap);
    if (len != strlen(want) || memcmp(f, want, len) != 0)
        fail_msg("%s: '%.*s'\nexpected '%s'", path, (int)len, (const char *)f, want);
    free(want);
    free(f);
}

void ex_t1_exports(const struct probe *p, bool be)
{
    (void)be; /* the same values in both byte orders */
    const struct fxt_t1_case *cases = fxt_t1_cases(&(size_t){0});
    for (size_t i = 0; i < sizeof objects / sizeof objects[0]; i++) {
        const struct obj_want *o = &objects[i];
        check_glb(p, o);
        check_obj(p, o);
        char path[64];
        snprintf(path, sizeof path, "/models/%u/model.error", o->index);
        ex_absent(p, path);
        snprintf(path, sizeof path, "/models/%u/sections.error", o->index);
        if (o->nbroken == 0) {
            ex_absent(p, path);
            continue;
        }
        /* the sections left out, one line each, with each layout's reason */
        char *text = ex_read_text(p, path), *line = text;
        for (unsigned k = 0; k < o->nbroken; k++) {
            char *end = strchr(line, '\n');
            assert_non_null(end);
            *end = 0;
            char head[96];
            snprintf(head, sizeof head, "nodes/1/parts/1/sections/%u: the stream fits neither layout (", k);
            if (strncmp(line, head, strlen(head)) || !strstr(line, cases[o->broken_cases[k]].err16) ||
                !strstr(line, cases[o->broken_cases[k]].err32))
                fail_msg("%s line %u: '%s'", path, k, line);
            line = end + 1;
        }
        assert_string_equal(line, "");
        free(text);
    }
}
