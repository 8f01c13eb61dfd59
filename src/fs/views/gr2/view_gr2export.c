/* Exports in the Granny object tree: skeleton.glb in a skeleton's directory, model.glb in
 * a model's, mesh.obj in a mesh's, and the /granny/models link. Reads the object graph
 * through the parse API (gr2model.c), never through tree paths; each build decodes types
 * into its own registry, so reads on other threads share no decoder state. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs/export/export.h"
#include "fs/export/glb.h"
#include "fs/views/gr2/view_gr2anim_glb.h"
#include "fs/views/gr2/view_gr2export.h"
#include "fs/views/gr2/view_gr2notes.h"
#include "parse/gr2/gr2anim.h"
#include "parse/gr2/gr2model.h"

enum gx_kind { GX_SKELETON, GX_MODEL, GX_MESH };

struct gx {
    struct gr2_view *v;
    enum gx_kind kind;
    struct gr2_ref type, obj;
    const uint8_t *refused; /* the sections its measurement was refused (tree memory) */
};

/* model.glb: the model, with the file's animations that play on its skeleton (when they
 * cannot be added, animation.glb says why: the model is made without them; out of memory
 * fails it). out NULL: only measures (*len). */
static enum s3_err model_glb(struct gr2_types *reg, const struct gr2_space *sp, const struct mdl_model *m,
                             uint8_t **out, size_t *len, char *err, size_t errlen)
{
    struct glb *g = out ? glb_new() : glb_new_measure();
    if (!g)
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    char why[256];
    enum s3_err e = export_model_into(g, m, err, errlen);
    if (e)
        goto done;
    e = gr2_anim_into_model(g, reg, sp, &m->skel, why, sizeof why);
    if (e == S3_ERR_NOMEM) {
        s3_fail(e, err, errlen, "%s", why);
        goto done;
    }
    if (e) {
        glb_free(g);
        return export_model_glb(m, out, len, err, errlen);
    }
    e = glb_finish(g, out, len, err, errlen);
done:
    glb_free(g);
    return e;
}

/* The export of x made from the space sp (out NULL: measured). With left_out, a model's
 * note of the meshes left out is handed over (malloc'd, NULL when none); warn (may be
 * NULL) gets what was dropped (shears). */
static enum s3_err gx_make(const struct gx *x, const struct gr2_space *sp, uint8_t **out, size_t *len,
                           char **left_out, struct mdl_notes *warn, char *err, size_t errlen)
{
    struct gr2_types reg = {0};
    enum s3_err rc;
    if (x->kind == GX_SKELETON) {
        struct mdl_skeleton s;
        if ((rc = gr2_skeleton_read(&reg, sp, x->type, x->obj, &s, err, errlen)) == S3_OK) {
            rc = gr2_drop_rest_shear(&s, warn, err, errlen);
            if (rc == S3_OK)
                rc = export_skeleton_glb(&s, out, len, err, errlen);
            mdl_skeleton_free(&s);
        }
    } else if (x->kind == GX_MODEL) {
        struct mdl_model m;
        if ((rc = gr2_model_read(&reg, sp, x->type, x->obj, &m, err, errlen)) == S3_OK) {
            gr2_space_settle(sp); /* the model is copied out: the animations' bytes may take its room */
            double d = mdl_drop_shear(&m.has_matrix, m.m, m.r);
            if (d != 0 && warn)
                mdl_notes_add(warn, "the model's placement has a shear (largest off-diagonal %.9g), dropped: its glTF "
                              "scale is the diagonal", d);
            rc = gr2_drop_rest_shear(&m.skel, warn, err, errlen);
            if (rc == S3_OK)
                rc = model_glb(&reg, sp, &m, out, len, err, errlen);
            if (left_out) {
                *left_out = m.left_out;
                m.left_out = NULL;
            }
            mdl_model_free(&m);
        }
    } else {
        struct mdl_mesh m;
        char **names;
        uint32_t n;
        if ((rc = gr2_mesh_read(&reg, sp, x->type, x->obj, &m, &names, &n, err, errlen)) == S3_OK) {
            rc = export_mesh_obj(&m, out, len, err, errlen);
            mdl_mesh_free(&m);
            gr2_names_free(names, n);
        }
    }
    gr2_types_free(&reg);
    return rc;
}

/* Builds what was measured: the sections the measurement was refused are refused again,
 * and a build refused one more fails (this read is EIO, the next builds again) rather
 * than make a file of another size. */
static enum s3_err gx_build(void *ctx, uint8_t **out, size_t *len, char *err, size_t errlen)
{
    struct gx *x = ctx;
    struct gr2_space sp;
    enum s3_err rc = gr2_view_pin_as(x->v, &sp, x->refused);
    if (rc)
        return s3_fail(rc, err, errlen, "the sections cannot be read (the file changed, or out of memory)");
    rc = gx_make(x, &sp, out, len, NULL, NULL, err, errlen);
    if (rc == S3_OK && gr2_view_refused_beyond(x->v, &sp, x->refused)) {
        free(out ? *out : NULL);
        rc = s3_fail(S3_ERR_LIMIT, err, errlen,
                     "a section it was sized with cannot be had now (cache_mb): read it again");
    }
    gr2_view_unpin(x->v, &sp);
    return rc;
}

/* Sizes x in a request of its own (what a build starts from, not the listing's, whose
 * earlier sections may have crowded one out), recording the sections refused to it so
 * that builds leave out the same; warn (may be NULL) gets what it drops. */
static enum s3_err gx_measure(struct gx *x, size_t *len, char **left_out, struct mdl_notes *warn, char *err,
                              size_t errlen)
{
    struct gr2_space sp;
    enum s3_err rc = gr2_view_pin(x->v, &sp);
    if (rc)
        return s3_fail(rc, err, errlen, "the sections cannot be read (the file changed, or out of memory)");
    rc = gx_make(x, &sp, NULL, len, left_out, warn, err, errlen);
    uint8_t *refused = rc == S3_OK ? gr2_view_refusals(x->v, &sp) : NULL;
    uint32_t n = gr2_view_nsections(x->v);
    uint8_t *kept = refused ? tree_alloc(x->v->fs->tree, n ? n : 1) : NULL;
    if (rc == S3_OK && !kept)
        rc = s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory"); /* the caller fails the listing */
    if (kept)
        memcpy(kept, refused, n);
    x->refused = kept;
    free(refused);
    gr2_view_unpin(x->v, &sp);
    return rc;
}

void gr2_exports_add(struct gr2_view *v, const struct gr2_space *sp, const struct gr2_type *ty, struct gr2_ref type,
                     struct gr2_ref obj, uint32_t dir)
{
    (void)sp;
    static const char *const file[] = {"skeleton.glb", "model.glb", "mesh.obj"};
    static const char *const xtype[] = {"glb.skeleton", "glb.model", "obj.mesh"};
    enum gx_kind kind;
    if (gr2_is_skeleton(ty))
        kind = GX_SKELETON;
    else if (gr2_is_model(ty))
        kind = GX_MODEL;
    else if (gr2_is_mesh(ty))
        kind = GX_MESH;
    else
        return;
    struct gx *x = tree_alloc(v->fs->tree, sizeof *x);
    if (!x)
        return;
    *x = (struct gx){v, kind, type, obj, NULL};
    /* sized by measuring (one decode, nothing built), and for a model, beside it
     * meshes.error saying why meshes were left out (the same decode) */
    char err[256], *left_out = NULL;
    size_t len;
    struct mdl_notes warn = {0};
    enum s3_err rc = gx_measure(x, &len, kind == GX_MODEL ? &left_out : NULL, &warn, err, sizeof err);
    if (rc == S3_ERR_NOMEM) { /* the listing fails (ENOMEM), never STEM.error */
        tree_note_oom(v->fs->tree);
        mdl_notes_free(&warn);
        free(left_out);
        return;
    }
    if (rc == S3_OK)
        export_add_sized(v->fs, dir, file[kind], xtype[kind], len, gx_build, x);
    else
        export_add_error(v->fs, dir, file[kind], err);
    static const char *const stem[] = {"skeleton", "model", "mesh"};
    gr2_add_warnings(v, dir, stem[kind], file[kind], &warn);
    if (left_out) {
        left_out[strlen(left_out) - 1] = 0; /* add_error ends the text */
        add_error(v->fs->tree, dir, "meshes", left_out);
    }
    free(left_out);
}

void gr2_exports_links(struct gr2_view *v, const struct gr2_space *sp, uint32_t granny_dir)
{
    struct gr2_types reg = {0};
    const struct gr2_type *root = gr2_type_get(&reg, sp, v->g.root_type);
    const struct gr2_member *m = root && root->ok ? gr2_find_member(root, "Models") : NULL;
    const char *why;
    struct gr2_ref to;
    bool points = false;
    const uint8_t *b = NULL, *arr = NULL;
    /* out of memory anywhere: the listing fails rather than leave the link out */
    enum s3_err e = !root || (!root->ok && root->reason == S3_ERR_NOMEM) ? S3_ERR_NOMEM : S3_OK;
    if (e == S3_OK && m && m->type == GR2_ARRAY_OF_REFS)
        e = gr2_bytes_at(sp, v->g.root_object.section, v->g.root_object.offset + m->offset, 4, &b, &why);
    uint32_t slot = b ? v->g.root_object.offset + m->offset + 4 : 0;
    if (e == S3_OK && b && gr2_u32_at(sp, b) > 0 &&
        (e = gr2_pointer(sp, v->g.root_object.section, slot, &to, &points, &why)) == S3_OK && points)
        e = gr2_bytes_at(sp, to.section, to.offset, (uint64_t)gr2_u32_at(sp, b) * (uint64_t)gr2_pointer_size(sp),
                         &arr, &why);
    /* only where root/Models will be a directory, so the link never dangles */
    if (arr)
        tree_add_link(v->fs->tree, granny_dir, "models", "root/Models");
    else if (e == S3_ERR_NOMEM)
        tree_note_oom(v->fs->tree);
    gr2_types_free(&reg);
}

enum s3_err gr2_view_first_skeleton(struct gr2_view *v, struct mdl_skeleton *out, char *err, size_t errlen)
{
    struct gr2_space sp;
    memset(out, 0, sizeof *out);
    enum s3_err e = gr2_view_pin(v, &sp);
    if (e != S3_OK)
        return s3_fail(e, err, errlen, "the sections cannot be read (%s)", s3_err_str(e));
    struct gr2_types reg = {0};
    struct gr2_elem el;
    struct gr2_ref obj;
    gr2_root_array(&reg, &sp, "Skeletons", &el); /* by name, or by place when names are remapped */
    if (el.kind == GR2_EK_ERROR && (el.reason == S3_ERR_NOMEM || el.reason == S3_ERR_IO))
        e = s3_fail(el.reason, err, errlen, "Skeletons: %s", el.why); /* for now: not "no skeleton" */
    else if (el.kind != GR2_EK_PTRARRAY || !gr2_ptr_elem(&sp, &el, 0, &obj))
        e = s3_fail(S3_ERR_FORMAT, err, errlen, "the Granny file holds no skeleton");
    else
        e = gr2_skeleton_read(&reg, &sp, el.type, obj, out, err, errlen);
    gr2_types_free(&reg);
    gr2_view_unpin(v, &sp);
    return e;
}

/* view_skeletons_fn of a Granny file or a wrapped RIG: its first skeleton (ctx: the gr2_view). */
static enum s3_err first_skeleton(struct s3fs *fs, void *ctx, struct rig_set *into, char *err, size_t errlen)
{
    (void)fs;
    struct mdl_skeleton s;
    enum s3_err e = gr2_view_first_skeleton(ctx, &s, err, errlen);
    return e ? e : rig_set_add(into, "", &s, err, errlen);
}

enum s3_err gr2_add_skeletons_hook(struct gr2_view *v)
{
    return view_add_skeletons_hook(v->fs, first_skeleton, v);
}
