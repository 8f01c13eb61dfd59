/* model.glb and model.obj for a Turok 1 graphic object. The object's nodes and sections
 * are read with the t2fs locator and decoded (t1_section_read), then turned into a
 * neutral model by parse/t1_model.c and written by the exporters (export_model.c).
 *
 * Listing the directory decodes the object once, to measure both files and say what
 * was left out; a build runs on the first read and again whenever the cache has dropped
 * the bytes, on whatever thread reads the file. A build reads through the locator, which
 * takes the view's own lock (never the tree's), so it needs no lock of its own. */
#include "fs/views/t2fs/view_t1_export.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs/export/export.h"
#include "fs/views/t2fs/view_t1_section.h"
#include "parse/base/err.h"
#include "parse/base/reader.h"
#include "parse/t2fs/t1_model.h"

struct t1x {
    struct t2_view *v;
    struct t2fs_node obj;
    bool obj_text; /* model.obj, else model.glb */
};

/* usChildNodeIndices of node k (1, 2 or 4-byte indices): S3_OK, or the reason with err. */
static enum s3_err read_children(struct t2_view *v, const struct t2fs_node *node, struct t1_obj_node *out,
                                 char *err, size_t errlen)
{
    struct t2fs_node n;
    struct t2fs_array a;
    enum s3_err rc = t2fs_node_child(v, node, 0, &n, err, errlen);
    if (rc == S3_OK)
        rc = t2fs_node_array(v, &n, &a, err, errlen);
    if (rc)
        return rc;
    if (a.count && a.esize != 1 && a.esize != 2 && a.esize != 4) {
        char name[160];
        t2fs_node_name(&n, name, sizeof name);
        rc = s3_fail(S3_ERR_FORMAT, err, errlen, "%s: element size %" PRIu32 ", not an index list (1, 2 or 4 bytes)",
                     name, a.esize);
    } else if ((out->children = alloc_array(a.count, sizeof *out->children)) == NULL) {
        rc = s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    } else {
        bool be = t2fs_view_big_endian(v);
        for (uint32_t i = 0; i < a.count; i++) {
            const uint8_t *p = a.data + (size_t)i * a.esize;
            out->children[i] = a.esize == 1 ? p[0] : a.esize == 2 ? ld_u16(p, be) : ld_u32(p, be);
        }
        out->nchildren = a.count;
    }
    free(a.bytes);
    return rc;
}

/* A part that cannot be read goes to o->missing; one refused memory sets o->oom (the
 * model is not made then: never a model without it). */
static void part_missing(struct t1_object *o, enum s3_err e, const char *what, const char *err)
{
    if (e == S3_ERR_NOMEM)
        o->oom = true;
    else
        t1_object_missing(o, what, err);
}

/* The sections of node k's parts. */
static void read_parts(struct t2_view *v, const struct t2fs_node *node, uint32_t k, struct t1_object *o)
{
    char err[400], what[80];
    struct t2fs_node parts, part, sec;
    enum s3_err e = t2fs_node_child(v, node, 2, &parts, err, sizeof err);
    if (e == S3_OK)
        e = t2fs_node_expect(&parts, T2FS_NODE_BRANCH, err, sizeof err);
    if (e) {
        snprintf(what, sizeof what, "nodes/%" PRIu32 "/parts", k);
        part_missing(o, e, what, err);
        return;
    }
    for (uint32_t p = 0; p < parts.count && !o->oom; p++) {
        e = t2fs_node_child(v, &parts, p, &part, err, sizeof err);
        if (e == S3_OK)
            e = t2fs_node_expect(&part, T2FS_NODE_BRANCH, err, sizeof err);
        if (e) {
            snprintf(what, sizeof what, "nodes/%" PRIu32 "/parts/%" PRIu32, k, p);
            part_missing(o, e, what, err);
            continue;
        }
        for (uint32_t s = 0; s < part.count && !o->oom; s++) {
            struct t1_obj_section *x = t1_object_section(o, k, p, s);
            if (!x)
                return;
            e = t2fs_node_child(v, &part, s, &sec, x->err, sizeof x->err);
            if (e == S3_OK)
                e = t1_section_read(v, &sec, &x->s, x->err, sizeof x->err);
            x->ok = e == S3_OK;
            o->oom |= e == S3_ERR_NOMEM;
        }
    }
}

/* The object's hierarchy and sections: S3_OK, or the reason with err (NOMEM, or the
 * hierarchy cannot be read). */
static enum s3_err read_object(struct t2_view *v, const struct t2fs_node *obj, struct t1_object *o, char *err,
                               size_t errlen)
{
    struct t2fs_node nodes, node;
    memset(o, 0, sizeof *o);
    enum s3_err e = t2fs_node_at(v, obj, (const unsigned[]){1, 1}, 2, &nodes, err, errlen);
    if (e == S3_OK)
        e = t2fs_node_expect(&nodes, T2FS_NODE_BRANCH, err, errlen);
    if (e)
        return e;
    if (t1_object_nodes(o, nodes.count) != S3_OK)
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    for (uint32_t k = 0; k < nodes.count && !o->oom; k++) {
        e = t2fs_node_child(v, &nodes, k, &node, err, errlen);
        if (e == S3_OK)
            e = t2fs_node_expect(&node, T2FS_NODE_BRANCH, err, errlen);
        if (e == S3_OK)
            e = read_children(v, &node, &o->node[k], err, errlen);
        if (e)
            return e;
        read_parts(v, &node, k, o);
    }
    return o->oom ? s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory") : S3_OK;
}

/* The object as a model: S3_OK, or the reason with err. */
static enum s3_err object_model(const struct t1x *x, struct mdl_model *m, char *err, size_t errlen)
{
    struct t1_object o;
    enum s3_err e = read_object(x->v, &x->obj, &o, err, errlen);
    if (e == S3_OK) {
        char name[32];
        snprintf(name, sizeof name, "object %" PRIu32, x->obj.depth >= 2 ? x->obj.path[1] : 0);
        e = t1_object_model(&o, name, m, err, errlen);
    }
    t1_object_free(&o);
    return e;
}

static enum s3_err t1x_build(void *ctx, uint8_t **out, size_t *len, char *err, size_t errlen)
{
    const struct t1x *x = ctx;
    struct mdl_model m;
    enum s3_err e = object_model(x, &m, err, errlen);
    if (e)
        return e;
    e = x->obj_text ? export_model_obj(&m, out, len, err, errlen) : export_model_glb(&m, out, len, err, errlen);
    mdl_model_free(&m);
    return e;
}

void t1_exports_add(struct t2_view *v, const struct t2fs_node *obj, uint32_t dir)
{
    struct s3fs *fs = t2fs_view_fs(v);
    struct t1x *glb = tree_alloc(fs->tree, sizeof *glb), *obj_text = tree_alloc(fs->tree, sizeof *obj_text);
    if (!glb || !obj_text)
        return;
    *glb = (struct t1x){v, *obj, false};
    *obj_text = (struct t1x){v, *obj, true};
    /* one decode sizes both files (measured, not built) and says what was left out */
    char err[256];
    struct mdl_model m;
    enum s3_err e = object_model(glb, &m, err, sizeof err);
    if (e == S3_ERR_NOMEM) {
        tree_note_oom(fs->tree); /* the listing fails (ENOMEM), never model.error */
        return;
    }
    if (e) {
        export_add_error(fs, dir, "model.glb", err); /* model.error: there is no model */
        return;
    }
    size_t glb_len, obj_len;
    enum s3_err eg = export_model_glb(&m, NULL, &glb_len, err, sizeof err);
    if (eg && eg != S3_ERR_NOMEM)
        export_add_error(fs, dir, "model.glb", err);
    enum s3_err eo = eg == S3_ERR_NOMEM ? eg : export_model_obj(&m, NULL, &obj_len, err, sizeof err);
    if (eo && eo != S3_ERR_NOMEM)
        export_add_error(fs, dir, "model.obj", err);
    if (eg == S3_ERR_NOMEM || eo == S3_ERR_NOMEM) {
        /* a measurement refused memory: the listing fails (ENOMEM), never model.error */
        tree_note_oom(fs->tree);
        mdl_model_free(&m);
        return;
    }
    if (eg == S3_OK)
        export_add_sized(fs, dir, "model.glb", "glb.model", glb_len, t1x_build, glb);
    if (eo == S3_OK)
        export_add_sized(fs, dir, "model.obj", "obj.model", obj_len, t1x_build, obj_text);
    if (m.left_out) {
        m.left_out[strlen(m.left_out) - 1] = 0; /* add_error ends the text */
        add_error(fs->tree, dir, "sections", m.left_out);
    }
    mdl_model_free(&m);
}
