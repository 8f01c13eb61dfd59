/* A Turok 1 graphic object as a neutral model (parse/base/model.h), for the .glb and .obj
 * exports. The caller (the view) reads the object's node hierarchy and decodes its
 * sections (parse/t2fs/t1_section.h) into a struct t1_object; t1_object_model turns that into
 * a model, no tree and no file involved:
 *   - the object's nodes are the model's skeleton, bone K = node K ("node K"), parents
 *     from the nodes' child lists (usChildNodeIndices), identity transforms (placements,
 *     which would come from the animations, are not decoded), and no skin (no_skin);
 *     every part of a node is used (usPartIndices is not interpreted);
 *   - each part P of node K with something to draw is a mesh "node K part P" placed
 *     under bone K (on_bone): its sections' vertices one after the other, one group
 *     (glTF primitive) per section, positions x y z as stored, texture coordinates s/32
 *     t/32 (texels: the texture's size is not known here), the 4 colour bytes as stored;
 *   - a section that cannot be drawn (not readable, a stream that fits neither layout, a
 *     triangle past its vertices) is left out and named in the model's left_out.
 * It fails (no model) when the hierarchy is not a tree of the object's nodes, or when no
 * section has a triangle to draw. */
#include "parse/t2fs/t1_model.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/base/err.h"

/* ---- building a t1_object ---- */

enum s3_err t1_object_nodes(struct t1_object *o, uint32_t nnodes)
{
    o->node = alloc_array(nnodes, sizeof *o->node);
    if (!o->node) {
        o->oom = true;
        return S3_ERR_NOMEM;
    }
    o->nnodes = nnodes;
    return S3_OK;
}

struct t1_obj_section *t1_object_section(struct t1_object *o, uint32_t node, uint32_t part, uint32_t index)
{
    if (o->nsec == o->capsec) {
        size_t cap = o->capsec ? o->capsec * 2 : 16;
        struct t1_obj_section *s = realloc(o->sec, cap * sizeof *s);
        if (!s) {
            o->oom = true;
            return NULL;
        }
        o->sec = s;
        o->capsec = cap;
    }
    struct t1_obj_section *x = &o->sec[o->nsec++];
    memset(x, 0, sizeof *x);
    x->node = node;
    x->part = part;
    x->index = index;
    return x;
}

void t1_object_missing(struct t1_object *o, const char *what, const char *why)
{
    mdl_notes_add(&o->missing, "%s: %s", what, why);
    if (o->missing.oom)
        o->oom = true;
}

void t1_object_free(struct t1_object *o)
{
    if (!o)
        return;
    for (uint32_t i = 0; o->node && i < o->nnodes; i++)
        free(o->node[i].children);
    free(o->node);
    for (size_t i = 0; i < o->nsec; i++)
        if (o->sec[i].ok)
            t1_section_free(&o->sec[i].s);
    free(o->sec);
    mdl_notes_free(&o->missing);
    memset(o, 0, sizeof *o);
}

/* ---- the model ---- */

static char *name_of(const char *fmt, uint32_t a, uint32_t b, size_t *len)
{
    char buf[64];
    int n = snprintf(buf, sizeof buf, fmt, a, b);
    char *s = malloc((size_t)n + 1);
    if (s) {
        memcpy(s, buf, (size_t)n + 1);
        *len = (size_t)n;
    }
    return s;
}

/* Bone K = node K, identity transform, parent from the child lists. */
static enum s3_err node_skeleton(const struct t1_object *o, struct mdl_skeleton *sk, char *err, size_t errlen)
{
    sk->bone = alloc_array(o->nnodes, sizeof *sk->bone);
    if (!sk->bone)
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    sk->nbones = o->nnodes;
    for (uint32_t k = 0; k < o->nnodes; k++) {
        struct mdl_bone *b = &sk->bone[k];
        b->parent = -1;
        b->r[3] = 1;
        b->s[0] = b->s[1] = b->s[2] = 1;
        b->name = name_of("node %" PRIu32, k, 0, &b->name_len);
        if (!b->name)
            return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    }
    for (uint32_t k = 0; k < o->nnodes; k++)
        for (uint32_t i = 0; i < o->node[k].nchildren; i++) {
            uint32_t c = o->node[k].children[i];
            if (c >= o->nnodes)
                return s3_fail(S3_ERR_FORMAT, err, errlen,
                               "node %" PRIu32 ": child %" PRIu32 " is not a node (the object has %" PRIu32 ")", k, c,
                               o->nnodes);
            if (sk->bone[c].parent >= 0)
                return s3_fail(S3_ERR_FORMAT, err, errlen,
                               "node %" PRIu32 ": a child of node %" PRId32 " and of node %" PRIu32
                               " (a node has one parent)", c, sk->bone[c].parent, k);
            sk->bone[c].parent = (int32_t)k;
        }
    char why[200];
    enum s3_err e = mdl_skeleton_check(sk, why, sizeof why); /* a cycle: "bone K" is node K */
    if (e)
        return s3_fail(e, err, errlen, "the node hierarchy: %s", why);
    return S3_OK;
}

enum { SEC_DRAW, SEC_LEFT_OUT, SEC_EMPTY };

/* Whether a section can be drawn; why when it is left out. */
static int section_state(const struct t1_object *o, const struct t1_obj_section *x, char *why, size_t len)
{
    if (!x->ok) {
        snprintf(why, len, "%s", x->err);
        return SEC_LEFT_OUT;
    }
    if (x->node >= o->nnodes) {
        snprintf(why, len, "node %" PRIu32 " is not one of the object's %" PRIu32 " nodes", x->node, o->nnodes);
        return SEC_LEFT_OUT;
    }
    const struct t1_section *s = &x->s;
    if (s->layout < 0) {
        char lines[T1_ERR + 16]; /* each layout's reason, on one line */
        size_t k = 0;
        for (const char *p = s->err; *p && k + 3 < sizeof lines; p++) {
            if (*p != '\n')
                lines[k++] = *p;
            else if (p[1])
                lines[k++] = ';', lines[k++] = ' ';
        }
        lines[k] = 0;
        snprintf(why, len, "the stream fits neither layout (%s)", lines);
        return SEC_LEFT_OUT;
    }
    for (size_t t = 0; t < s->st.ntri; t++)
        for (int k = 0; k < 3; k++)
            if (s->st.tri[t][k] >= s->nvert) {
                snprintf(why, len, "triangle %zu names vertex %" PRIu32 " of %" PRIu32, t, s->st.tri[t][k], s->nvert);
                return SEC_LEFT_OUT;
            }
    return s->st.ntri ? SEC_DRAW : SEC_EMPTY;
}

/* The sections [first, end) (one part) that are drawn, appended to m. */
static enum s3_err fill_mesh(const struct t1_object *o, size_t first, size_t end, const uint8_t *draw,
                             struct mdl_mesh *m, char *err, size_t errlen)
{
    uint64_t nv = 0, nt = 0;
    uint32_t ng = 0;
    for (size_t i = first; i < end; i++)
        if (draw[i])
            nv += o->sec[i].s.nvert, nt += o->sec[i].s.st.ntri, ng++;
    if (nv > UINT32_MAX || nt > UINT32_MAX / 3)
        return s3_fail(S3_ERR_LIMIT, err, errlen,
                       "node %" PRIu32 " part %" PRIu32 ": more vertices or triangles than 32-bit indices hold",
                       o->sec[first].node, o->sec[first].part);
    m->pos = malloc((size_t)nv * 3 * sizeof *m->pos + 1);
    m->uv = malloc((size_t)nv * 2 * sizeof *m->uv + 1);
    m->rgba = malloc((size_t)nv * 4 + 1);
    m->index = malloc((size_t)nt * 3 * sizeof *m->index + 1);
    m->group = alloc_array(ng, sizeof *m->group);
    if (!m->pos || !m->uv || !m->rgba || !m->index || !m->group)
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    for (size_t i = first; i < end; i++) {
        if (!draw[i])
            continue;
        const struct t1_section *s = &o->sec[i].s;
        uint32_t base = m->nverts;
        for (uint32_t v = 0; v < s->nvert; v++) {
            const struct t1_vertex *x = &s->vert[v];
            float *p = m->pos + 3 * (size_t)(base + v), *uv = m->uv + 2 * (size_t)(base + v);
            p[0] = x->x;
            p[1] = x->y;
            p[2] = x->z;
            uv[0] = x->s / 32.0f; /* signed 10.5 fixed point texels */
            uv[1] = x->t / 32.0f;
            memcpy(m->rgba + 4 * (size_t)(base + v), x->c, 4);
        }
        m->group[m->ngroups++] = (struct mdl_group){-1, m->ntris, (uint32_t)s->st.ntri};
        for (size_t t = 0; t < s->st.ntri; t++)
            for (int k = 0; k < 3; k++)
                m->index[3 * (size_t)m->ntris + 3 * t + (size_t)k] = base + s->st.tri[t][k];
        m->ntris += (uint32_t)s->st.ntri;
        m->nverts += s->nvert;
    }
    m->index16 = true; /* 16-bit indices in the .glb whenever they fit (sections are small) */
    m->on_bone = true;
    m->bone = o->sec[first].node;
    m->name = name_of("node %" PRIu32 " part %" PRIu32, o->sec[first].node, o->sec[first].part, &m->name_len);
    if (!m->name)
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    return S3_OK;
}

/* Marks the sections drawn (draw[i]) and lists the others in out->left_out (NOMEM when
 * the list could not be made). */
static enum s3_err pick_sections(const struct t1_object *o, uint8_t *draw, struct mdl_model *out, size_t *nleft,
                                 const char **first_left)
{
    *first_left = NULL;
    struct mdl_notes left = {0};
    for (const char *p = o->missing.p, *e; p && *p; p = e + 1) { /* the parts missing first */
        e = strchr(p, '\n');
        mdl_notes_add(&left, "%.*s", (int)(e - p), p);
    }
    left.more += o->missing.more;
    *nleft = o->missing.lines + o->missing.more;
    for (size_t i = 0; i < o->nsec; i++) {
        const struct t1_obj_section *x = &o->sec[i];
        char why[T1_ERR + 64];
        int st = section_state(o, x, why, sizeof why);
        draw[i] = st == SEC_DRAW;
        if (st == SEC_LEFT_OUT) {
            mdl_notes_add(&left, "nodes/%" PRIu32 "/parts/%" PRIu32 "/sections/%" PRIu32 ": %s", x->node, x->part,
                          x->index, why);
            ++*nleft;
        }
    }
    bool oom = left.oom;
    out->left_out = mdl_notes_take(&left);
    *first_left = out->left_out;
    return oom ? S3_ERR_NOMEM : S3_OK;
}

static enum s3_err build_meshes(const struct t1_object *o, const uint8_t *draw, struct mdl_model *out, char *err,
                                size_t errlen)
{
    size_t nparts = 0;
    for (size_t i = 0; i < o->nsec; i++)
        if (i == 0 || o->sec[i].node != o->sec[i - 1].node || o->sec[i].part != o->sec[i - 1].part)
            nparts++;
    out->mesh = alloc_array(nparts, sizeof *out->mesh);
    if (!out->mesh)
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    for (size_t first = 0, end; first < o->nsec; first = end) {
        bool any = false;
        for (end = first; end < o->nsec && o->sec[end].node == o->sec[first].node &&
                          o->sec[end].part == o->sec[first].part;
             end++)
            any |= draw[end] != 0;
        if (!any)
            continue;
        enum s3_err e = fill_mesh(o, first, end, draw, &out->mesh[out->nmeshes], err, errlen);
        out->nmeshes++; /* freed with the model, filled or not */
        if (e)
            return e;
    }
    return S3_OK;
}

enum s3_err t1_object_model(const struct t1_object *o, const char *name, struct mdl_model *out, char *err,
                            size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (o->oom)
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    if (o->nnodes == 0)
        return s3_fail(S3_ERR_FORMAT, err, errlen, "the object has no nodes");
    out->r[3] = 1;
    out->s[0] = out->s[1] = out->s[2] = 1;
    out->no_skin = true;
    out->name_len = strlen(name);
    out->name = malloc(out->name_len + 1);
    if (out->name)
        memcpy(out->name, name, out->name_len + 1);
    uint8_t *draw = alloc_array(o->nsec, 1);
    size_t nleft;
    const char *left;
    enum s3_err rc;
    if (!out->name || !draw || pick_sections(o, draw, out, &nleft, &left))
        rc = s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    else if ((rc = node_skeleton(o, &out->skel, err, errlen)) == S3_OK)
        rc = build_meshes(o, draw, out, err, errlen);
    free(draw);
    if (rc == S3_OK && out->nmeshes == 0) {
        if (nleft)
            rc = s3_fail(S3_ERR_FORMAT, err, errlen, "nothing to draw: %zu left out; the first: %.*s", nleft,
                         (int)strcspn(left, "\n"), left);
        else
            rc = s3_fail(S3_ERR_FORMAT, err, errlen, "nothing to draw: the object's sections have no triangles");
    }
    if (rc)
        mdl_model_free(out);
    return rc;
}
