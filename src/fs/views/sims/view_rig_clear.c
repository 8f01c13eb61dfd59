/* The clear RIG encoding as a tree: /major /minor /skeleton_name, /bones/N/…, /bones.csv,
 * /ik_chains/N/…, with .bone links between bones and from chains to bones. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs/export/export.h"
#include "fs/views/sims/view_rig_clear.h"
#include "parse/base/err.h"
#include "parse/sims/rig_clear.h"

struct rig_clear_view {
    struct s3fs *fs;
    struct rig_clear r;
    char **names; /* bones[i].name, for .names files */
    uint32_t *child_start, *child_list; /* children of each bone (CSR layout) */
};

static void rig_clear_view_free(void *p)
{
    struct rig_clear_view *v = p;
    rig_clear_free(&v->r);
    free(v->names);
    free(v->child_start);
    free(v->child_list);
    free(v);
}

static bool bone_ok(const struct rig_clear_view *v, int32_t i)
{
    return i >= 0 && (uint32_t)i < v->r.nbones;
}

static void link_bone(struct rig_clear_view *v, uint32_t dir, const char *field, int32_t idx, const char *prefix)
{
    if (!bone_ok(v, idx))
        return;
    char name[64], target[64];
    snprintf(name, sizeof name, "%s.bone", field);
    snprintf(target, sizeof target, "%s%" PRId32, prefix, idx);
    tree_add_link(v->fs->tree, dir, name, target);
}

static void add_floats(struct tree *t, uint32_t dir, const char *name, const float *f, int n, uint64_t at)
{
    struct sbuf b = {0};
    for (int i = 0; i < n; i++)
        sb_float(&b, f[i]);
    size_t len;
    char *text = sb_take(&b, &len);
    uint32_t ino = tree_add_text(t, dir, name, NULL, text, len);
    tree_set_span(t, ino, at, 4ull * (uint64_t)n);
    set_typef(t, ino, "f32[%d]", n);
}

/* Children lists for every bone, in one pass (CSR: start offsets, then indices). S3_OK
 * or NOMEM (never a bone shown without its children for lack of memory). */
static enum s3_err index_children(struct rig_clear_view *v)
{
    uint32_t n = v->r.nbones;
    v->child_start = calloc((size_t)n + 1, sizeof *v->child_start);
    v->child_list = alloc_array(n, sizeof *v->child_list);
    uint32_t *fill = calloc(n ? n : 1, sizeof *fill);
    if (!v->child_start || !v->child_list || !fill) {
        free(fill);
        return S3_ERR_NOMEM;
    }
    for (uint32_t i = 0; i < n; i++)
        if (bone_ok(v, v->r.bones[i].parent))
            v->child_start[v->r.bones[i].parent + 1]++;
    for (uint32_t i = 0; i < n; i++)
        v->child_start[i + 1] += v->child_start[i];
    for (uint32_t i = 0; i < n; i++) {
        int32_t p = v->r.bones[i].parent;
        if (bone_ok(v, p))
            v->child_list[v->child_start[p] + fill[p]++] = i;
    }
    free(fill);
    return S3_OK;
}

static enum s3_err populate_bone(struct tree *t, uint32_t dir, void *ctx, uint64_t i)
{
    struct rig_clear_view *v = ctx;
    const struct rig_clear_bone *b = &v->r.bones[i];
    uint64_t p = b->pos, after = p + 44 + b->name_len;
    uint32_t ino = tree_add_textf(t, dir, "name", "string", "%s\n", b->name);
    tree_set_span(t, ino, p + 44, b->name_len);
    add_floats(t, dir, "position", b->position, 3, p);
    add_floats(t, dir, "orientation", b->orientation, 4, p + 12);
    add_floats(t, dir, "scale", b->scale, 3, p + 28);
    add_i32(t, dir, "opposing_bone", b->opposing, after);
    add_i32(t, dir, "parent", b->parent, after + 4);
    add_hex32(t, dir, "name_hash", b->name_hash, after + 8);
    ino = tree_add_textf(t, dir, "name_hash_ok", "text", "%s\n", b->hash_ok ? "yes" : "no");
    tree_set_span(t, ino, after + 8, 4);
    add_hex32(t, dir, "flags", b->flags, after + 12);
    tree_add_range(t, dir, "raw.bin", "rig.bone", p, b->size);
    link_bone(v, dir, "parent", b->parent, "../");
    /* a bone that mirrors itself (a middle bone) gets no link: it would lead back into its
     * own directory, a loop for every tool that follows links (find -L, grep -R) */
    if (b->opposing != (int32_t)i)
        link_bone(v, dir, "opposing_bone", b->opposing, "../");
    if (v->child_start) {
        struct sbuf c = {0};
        for (uint32_t k = v->child_start[i]; k < v->child_start[i + 1]; k++)
            sb_printf(&c, "%" PRIu32 "\n", v->child_list[k]);
        size_t len;
        char *text = sb_take(&c, &len);
        tree_add_text(t, dir, "children", "bone_indices", text, len);
    }
    return S3_OK;
}


static void add_names(struct rig_clear_view *v, uint32_t dir, const char *field, const int32_t *idx, uint32_t n)
{
    add_bone_names(v->fs, dir, field, idx, n, v->names, v->names ? v->r.nbones : 0);
}

static enum s3_err populate_chain(struct tree *t, uint32_t dir, void *ctx, uint64_t i)
{
    struct rig_clear_view *v = ctx;
    const struct rig_clear_chain *c = &v->r.chains[i];
    uint64_t p = c->pos + 4;
    add_i32_list(v->fs, dir, "bones", c->bones, c->nbones, p);
    add_names(v, dir, "bones", c->bones, c->nbones);
    p += 4ull * c->nbones;
    if (c->has_info) {
        add_i32_list(v->fs, dir, "info_nodes", c->info_nodes, 11, p);
        add_names(v, dir, "info_nodes", c->info_nodes, 11);
        p += 44;
    }
    add_i32(t, dir, "pole", c->pole, p);
    link_bone(v, dir, "pole", c->pole, "../../bones/");
    p += 4;
    if (c->has_slot_info) {
        add_i32(t, dir, "slot_info", c->slot_info, p);
        link_bone(v, dir, "slot_info", c->slot_info, "../../bones/");
        p += 4;
    }
    add_i32(t, dir, "slot_offset", c->slot_offset, p);
    link_bone(v, dir, "slot_offset", c->slot_offset, "../../bones/");
    add_i32(t, dir, "root", c->root, p + 4);
    link_bone(v, dir, "root", c->root, "../../bones/");
    return S3_OK;
}

/* The rig's two lists of records: bones/ and ik_chains/. */
enum { LIST_BONES, LIST_CHAINS };

static void record_span(void *ctx, uint64_t list, uint32_t i, uint64_t *pos, uint64_t *size)
{
    const struct rig_clear_view *v = ctx;
    *pos = list == LIST_BONES ? v->r.bones[i].pos : v->r.chains[i].pos;
    *size = list == LIST_BONES ? v->r.bones[i].size : v->r.chains[i].size;
}

static enum s3_err populate_list(struct tree *t, uint32_t dir, void *ctx, uint64_t list)
{
    struct rig_clear_view *v = ctx;
    if (list == LIST_BONES)
        view_add_numbered(t, dir, v->r.nbones, "rig.bone", populate_bone, v, record_span, list, v->r.bones_err);
    else
        view_add_numbered(t, dir, v->r.nchains, "rig.ik_chain", populate_chain, v, record_span, list,
                          v->r.chains_err);
    return S3_OK;
}

static void add_csv(struct rig_clear_view *v, uint32_t root)
{
    struct sbuf b = {0};
    sb_printf(&b, "index,name,parent,opposing,hash,flags,px,py,pz,qx,qy,qz,qw,sx,sy,sz\n");
    for (uint32_t i = 0; i < v->r.nbones; i++) {
        const struct rig_clear_bone *x = &v->r.bones[i];
        sb_printf(&b, "%" PRIu32 ",", i);
        sb_csv_field(&b, x->name);
        sb_printf(&b, ",%" PRId32 ",%" PRId32 ",0x%08" PRIx32 ",0x%08" PRIx32, x->parent, x->opposing, x->name_hash,
                  x->flags);
        const float *f[3] = {x->position, x->orientation, x->scale};
        const int n[3] = {3, 4, 3};
        for (int k = 0; k < 3; k++)
            for (int j = 0; j < n[k]; j++)
                sb_printf(&b, ",%.9g", (double)f[k][j]);
        sb_put(&b, "\n", 1);
    }
    size_t len;
    char *text = sb_take(&b, &len);
    tree_add_text(v->fs->tree, root, "bones.csv", "csv", text, len);
}

static void warn_chain_indices(struct rig_clear_view *v)
{
    for (uint32_t i = 0; i < v->r.nchains; i++) {
        const struct rig_clear_chain *c = &v->r.chains[i];
        int32_t f[] = {c->pole, c->has_slot_info ? c->slot_info : -1, c->slot_offset, c->root};
        for (int k = 0; k < 4; k++)
            if (f[k] != -1 && !bone_ok(v, f[k]))
                diag_add(&v->fs->diag, "IK chain %u: bone index %" PRId32 " is out of range", i, f[k]);
        for (uint32_t k = 0; k < c->nbones; k++)
            if (c->bones[k] != -1 && !bone_ok(v, c->bones[k]))
                diag_add(&v->fs->diag, "IK chain %u: bone index %" PRId32 " is out of range", i, c->bones[k]);
    }
}

/* /skeleton.glb: the bone table as it is (position, orientation, scale, parent); the
 * inverse bind matrices are the inverses of the world transforms this makes. */
static enum s3_err build_skeleton_glb(void *ctx, uint8_t **out, size_t *len, char *err, size_t errlen)
{
    const struct rig_clear *r = ctx;
    struct mdl_skeleton s;
    enum s3_err e = rig_clear_skeleton(r, &s);
    if (e)
        return s3_fail(e, err, errlen, "%s", e == S3_ERR_NOMEM ? "out of memory" : s3_err_str(e));
    if ((e = mdl_skeleton_check(&s, err, errlen)) == S3_OK && (e = mdl_compute_ibm(&s, err, errlen)) == S3_OK)
        e = export_skeleton_glb(&s, out, len, err, errlen);
    mdl_skeleton_free(&s);
    return e;
}

/* view_skeletons_fn: the bone table (ctx: the struct rig_clear). */
static enum s3_err bone_table_skeleton(struct s3fs *fs, void *ctx, struct rig_set *into, char *err, size_t errlen)
{
    (void)fs;
    struct mdl_skeleton s;
    enum s3_err e = rig_clear_skeleton(ctx, &s);
    if (e)
        return s3_fail(e, err, errlen, "%s", e == S3_ERR_NOMEM ? "out of memory" : s3_err_str(e));
    return rig_set_add(into, "", &s, err, errlen);
}

static enum s3_err populate_root(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    struct rig_clear_view *v = ctx;
    add_info_and_unparsed(v->fs, dir);
    add_u32(t, dir, "major", v->r.major, 0);
    add_u32(t, dir, "minor", v->r.minor, 4);
    if (v->r.has_skeleton_name && v->r.skeleton_name) {
        uint32_t ino = tree_add_textf(t, dir, "skeleton_name", "string", "%s\n", v->r.skeleton_name);
        tree_set_span(t, ino, v->r.skeleton_name_pos, v->r.skeleton_name_len);
    }
    uint32_t bones = tree_add_dir(t, dir, "bones", "rig.bones", populate_list, v, LIST_BONES);
    tree_set_span(t, bones, 8, (v->r.nbones ? v->r.bones[v->r.nbones - 1].pos + v->r.bones[v->r.nbones - 1].size : 12) - 8);
    add_csv(v, dir);
    export_add(v->fs, dir, "skeleton.glb", "glb.skeleton", build_skeleton_glb, &v->r);
    if (v->r.chains_present) {
        uint32_t ik = tree_add_dir(t, dir, "ik_chains", "rig.ik_chains", populate_list, v, LIST_CHAINS);
        tree_set_span(t, ik, v->r.chains_pos, v->r.end > v->r.chains_pos ? v->r.end - v->r.chains_pos : 4);
    }
    return S3_OK;
}

/* -o rw: the value files of the version words, of each bone's fixed fields and of each IK
 * chain's words and bone lists are fields of the file as published (their span and type;
 * little-endian, docs/formats/rig.md). Names, name_hash_ok and what is derived are not. */
static bool rig_clear_value(struct s3fs *fs, uint32_t ino, struct view_value *out, void *ctx)
{
    static const char *const fields[] = {"major", "minor", "position", "orientation", "scale", "opposing_bone",
                                         "parent", "name_hash", "flags", "bones", "info_nodes", "pole",
                                         "slot_info", "slot_offset", "root"};
    struct tree *t = fs->tree;
    uint32_t dir = tree_parent(t, ino);
    if (tree_dir_ctx(t, dir, populate_root) != ctx && tree_dir_ctx(t, dir, populate_bone) != ctx &&
        tree_dir_ctx(t, dir, populate_chain) != ctx)
        return false;
    const char *name = tree_name(t, ino);
    bool known = false;
    for (size_t i = 0; i < sizeof fields / sizeof fields[0] && !known; i++)
        known = strcmp(name, fields[i]) == 0;
    return known && view_value_as_published(t, ino, false, out);
}

enum s3_err rig_clear_view_open(struct s3fs *fs, char *err, size_t errlen)
{
    struct rig_clear_view *v = calloc(1, sizeof *v);
    if (!v)
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    v->fs = fs;
    enum s3_err e = rig_clear_parse(&fs->src.src, &v->r, &fs->diag, err, errlen);
    if (e != S3_OK) {
        free(v);
        return e;
    }
    if (tree_on_free(fs->tree, rig_clear_view_free, v)) {
        rig_clear_view_free(v);
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    }
    v->names = alloc_array(v->r.nbones, sizeof *v->names);
    for (uint32_t i = 0; v->names && i < v->r.nbones; i++)
        v->names[i] = v->r.bones[i].name;
    if (!v->names || index_children(v)) /* the tree frees v */
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    warn_chain_indices(v);
    if (view_add_value_hook(fs, rig_clear_value, v)) {
        s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
        return S3_ERR_NOMEM; /* the tree frees v */
    }
    if (v->r.bones_err[0])
        diag_add(&fs->diag, "bones: %s", v->r.bones_err);
    if (v->r.chains_err[0])
        diag_add(&fs->diag, "%s", v->r.chains_err);
    sb_printf(&fs->facts, "encoding: clear\nbyte_order: le\nmajor: %" PRIu32 "\nminor: %" PRIu32 "\n", v->r.major,
              v->r.minor);
    sb_printf(&fs->facts, "variant: %s%s\n", rig_clear_variant_name(v->r.variant),
              v->r.ambiguous ? " (ambiguous)" : "");
    sb_printf(&fs->facts, "bones: %" PRIu32 "\n", v->r.nbones);
    if (v->r.has_skeleton_name && v->r.skeleton_name)
        sb_printf(&fs->facts, "skeleton_name: %s\n", v->r.skeleton_name);
    if (v->r.chains_present)
        sb_printf(&fs->facts, "ik_chains: %" PRIu32 "\n", v->r.nchains);
    uint32_t bad = 0;
    for (uint32_t i = 0; i < v->r.nbones; i++)
        bad += !v->r.bones[i].hash_ok;
    sb_printf(&fs->facts, "name_hash_mismatches: %" PRIu32 "\n", bad);
    cover_add(&fs->cover, 0, v->r.end ? v->r.end : 8);
    if (view_add_skeletons_hook(fs, bone_table_skeleton, &v->r))
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    return view_root(fs, "rig.clear", populate_root, v);
}
