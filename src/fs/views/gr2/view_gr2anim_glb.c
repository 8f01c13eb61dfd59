/* animation.glb: a Granny Animation as glTF. Built from parsed structures only, each build
 * with its own type registry, so builds on other threads share no decoder state. */
#include "fs/views/gr2/view_gr2anim_glb.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs/export/export.h"
#include "fs/export/glb.h"
#include "parse/base/err.h"
#include "fs/views/gr2/view_gr2notes.h"
#include "parse/base/diag.h"
#include "parse/gr2/gr2anim.h"
#include "parse/gr2/gr2model.h"
#include "parse/gr2/gr2std.h"

/* ---- which skeleton each track group plays on ---- */

struct bone_name {
    const char *name;
    uint32_t bone;
};

/* How a track's name found its bone (docs/formats/gr2anim.md, "Nodes"). */
enum match { M_EXACT, M_CASE, M_STEM, M_NONE };

/* A skeleton a group may play on: the file's (read when first needed) or -o skeleton='s. */
struct skel {
    struct gr2_ref type, obj;
    const struct mdl_skeleton *s; /* NULL until read (or when it cannot be) */
    struct mdl_skeleton own;
    bool tried, used;
    bool oom; /* an allocation was refused reading it: the plan fails (NOMEM) */
    /* the bones by name, ties by bone index: as they are, ignoring case, and their stems
     * (name_stem) ignoring case */
    struct bone_name *by_name, *by_case, *by_stem;
    int first_node;
};

struct group {
    struct gr2_ref type, obj;
    char *name;
    struct gr2_elem tracks;
    char **names; /* the tracks' names */
    int skel; /* index into plan.skel, or -1: a node per track */
    int64_t *bone; /* per track: its bone in skel (-1: none, the track gets a node of its own) */
    uint8_t *how;  /* per track: enum match */
    int *node;     /* per track: the node it drives (add_nodes) */
    int first_node; /* the group's node holding the tracks that have no bone (-1: none) */
};

struct plan {
    struct gr2_animation anim;
    struct skel *skel;
    uint32_t nskel, external; /* external: the index of -o skeleton='s first, or nskel when none */
    struct group *group;
    uint32_t ngroups;
    /* root.Models: a model's name and its skeleton (an index into skel, -1: none) */
    char **model_name;
    int *model_skel;
    uint32_t nmodels;
    bool oom; /* an allocation was refused finding the skeletons: the plan fails (NOMEM) */
};

/* What is left of a name once exporters' prefixes are dropped: the part after the last
 * '|' or ':' (paths, namespaces), then after a first word of letters and digits followed
 * by a space ("Bip01 L Thigh" -> "L Thigh"). */
static const char *name_stem(const char *s)
{
    const char *p = s;
    for (const char *q = s; *q; q++)
        if (*q == '|' || *q == ':')
            p = q + 1;
    const char *q = p;
    while (isalpha((unsigned char)*q))
        q++;
    const char *digits = q;
    while (isdigit((unsigned char)*q))
        q++;
    if (digits > p && q > digits && q[0] == ' ' && q[1])
        p = q + 1;
    return p;
}

/* strcmp ignoring ASCII case (names are bytes: no locale decides). */
static int ascii_casecmp(const char *a, const char *b)
{
    for (;; a++, b++) {
        int x = (unsigned char)*a, y = (unsigned char)*b;
        x += x >= 'A' && x <= 'Z' ? 'a' - 'A' : 0;
        y += y >= 'A' && y <= 'Z' ? 'a' - 'A' : 0;
        if (x != y || !x)
            return x - y;
    }
}

static int bone_cmp(int c, const struct bone_name *x, const struct bone_name *y)
{
    return c ? c : (x->bone > y->bone) - (x->bone < y->bone);
}

static int by_name(const void *a, const void *b)
{
    const struct bone_name *x = a, *y = b;
    return bone_cmp(strcmp(x->name, y->name), x, y);
}

static int by_case(const void *a, const void *b)
{
    const struct bone_name *x = a, *y = b;
    return bone_cmp(ascii_casecmp(x->name, y->name), x, y);
}

static int name_only(const void *a, const void *b)
{
    return strcmp(((const struct bone_name *)a)->name, ((const struct bone_name *)b)->name);
}

static int case_only(const void *a, const void *b)
{
    return ascii_casecmp(((const struct bone_name *)a)->name, ((const struct bone_name *)b)->name);
}

/* The first bone (lowest index) of sorted list `list` equal to name under cmp (-1: none). */
static int64_t first_of(const struct bone_name *list, uint32_t n, const char *name,
                        int (*cmp)(const void *, const void *))
{
    struct bone_name key = {name, 0};
    const struct bone_name *hit = bsearch(&key, list, n, sizeof *hit, cmp);
    while (hit && hit > list && cmp(hit - 1, &key) == 0)
        hit--;
    return hit ? (int64_t)hit->bone : -1;
}

/* The bone a track called name plays on: the first bone of that name, else the first
 * whose name equals it ignoring case, else the first whose stem (name_stem) equals its
 * stem ignoring case; -1 when none. *how says which. */
static int64_t match_bone(const struct skel *k, const char *name, enum match *how)
{
    *how = M_NONE;
    if (!k->s)
        return -1;
    uint32_t n = k->s->nbones;
    int64_t b = first_of(k->by_name, n, name, name_only);
    if (b >= 0) {
        *how = M_EXACT;
        return b;
    }
    if ((b = first_of(k->by_case, n, name, case_only)) >= 0) {
        *how = M_CASE;
        return b;
    }
    if ((b = first_of(k->by_stem, n, name_stem(name), case_only)) >= 0)
        *how = M_STEM;
    return b;
}

/* The first bone called name exactly (-1: none). */
static int64_t bone_of(const struct skel *k, const char *name)
{
    return k->s ? first_of(k->by_name, k->s->nbones, name, name_only) : -1;
}

/* The skeleton read and its names sorted: false when it cannot be (k->oom when an
 * allocation was refused, which fails what asked, never a skeleton left out). */
static bool skel_ready(struct gr2_types *reg, const struct gr2_space *sp, struct skel *k)
{
    if (k->tried)
        return k->s != NULL;
    k->tried = true;
    char err[200];
    enum s3_err e = k->s ? S3_OK : gr2_skeleton_read(reg, sp, k->type, k->obj, &k->own, err, sizeof err);
    if (e) {
        k->oom = e == S3_ERR_NOMEM;
        return false;
    }
    if (!k->s)
        k->s = &k->own;
    size_t n = k->s->nbones;
    k->by_name = alloc_array(n, sizeof *k->by_name);
    k->by_case = alloc_array(n, sizeof *k->by_case);
    k->by_stem = alloc_array(n, sizeof *k->by_stem);
    if (!k->by_name || !k->by_case || !k->by_stem) {
        k->s = NULL;
        k->oom = true;
        return false;
    }
    for (uint32_t i = 0; i < k->s->nbones; i++) {
        const char *name = k->s->bone[i].name ? k->s->bone[i].name : "";
        k->by_name[i] = k->by_case[i] = (struct bone_name){name, i};
        k->by_stem[i] = (struct bone_name){name_stem(name), i};
    }
    qsort(k->by_name, k->s->nbones, sizeof *k->by_name, by_name);
    qsort(k->by_case, k->s->nbones, sizeof *k->by_case, by_case);
    qsort(k->by_stem, k->s->nbones, sizeof *k->by_stem, by_case);
    return true;
}

static int add_skel(struct plan *p, struct gr2_ref type, struct gr2_ref obj, const struct mdl_skeleton *s)
{
    for (uint32_t i = 0; !s && i < p->nskel; i++)
        if (p->skel[i].obj.section == obj.section && p->skel[i].obj.offset == obj.offset)
            return (int)i;
    struct skel *n = realloc(p->skel, (p->nskel + 1) * sizeof *n);
    if (!n) {
        p->oom = true;
        return -1;
    }
    p->skel = n;
    n[p->nskel] = (struct skel){.type = type, .obj = obj, .s = s, .first_node = -1};
    return (int)p->nskel++;
}

/* The file's skeletons: root.Skeletons in order, then the models' (root.Models), then
 * those of -o skeleton= (external, NULL: none). */
static void find_skeletons(struct gr2_types *reg, const struct gr2_space *sp, struct plan *p,
                           const struct rig_set *external)
{
    struct gr2_elem e;
    struct gr2_ref obj;
    gr2_root_array(reg, sp, "Skeletons", &e);
    p->oom |= e.kind == GR2_EK_ERROR && e.reason == S3_ERR_NOMEM; /* never a skeleton left out */
    for (uint32_t k = 0; e.kind == GR2_EK_PTRARRAY && k < e.count; k++)
        if (gr2_ptr_elem(sp, &e, k, &obj))
            add_skel(p, e.type, obj, NULL);
    gr2_root_array(reg, sp, "Models", &e);
    p->oom |= e.kind == GR2_EK_ERROR && e.reason == S3_ERR_NOMEM;
    if (e.kind == GR2_EK_PTRARRAY) {
        p->model_name = alloc_array(e.count, sizeof *p->model_name);
        p->model_skel = alloc_array(e.count, sizeof *p->model_skel);
        p->oom |= !p->model_name || !p->model_skel;
    }
    const struct gr2_type *mt = e.kind == GR2_EK_PTRARRAY ? gr2_type_get(reg, sp, e.type) : NULL;
    p->oom |= e.kind == GR2_EK_PTRARRAY && (!mt || (!mt->ok && mt->reason == S3_ERR_NOMEM));
    const struct gr2_member *nm = mt ? gr2_std_find(mt, GR2_STD_MODEL, "Name") : NULL;
    const struct gr2_member *sm = mt ? gr2_std_find(mt, GR2_STD_MODEL, "Skeleton") : NULL;
    for (uint32_t k = 0; p->model_name && p->model_skel && nm && sm && sm->type == GR2_REFERENCE && k < e.count; k++) {
        gr2_space_settle(sp); /* names are copied, skeletons kept as references */
        const char *why;
        struct gr2_ref so;
        bool points;
        if (!gr2_ptr_elem(sp, &e, k, &obj) || !gr2_bytes(sp, obj.section, obj.offset, mt->size, &why))
            continue;
        p->oom |= gr2_name_at(sp, obj.section, obj.offset + nm->offset, &p->model_name[p->nmodels], &why) ==
                  S3_ERR_NOMEM;
        p->model_skel[p->nmodels] =
            gr2_pointer(sp, obj.section, obj.offset + sm->offset, &so, &points, &why) == S3_OK && points
                ? add_skel(p, sm->ref_type, so, NULL)
                : -1;
        p->nmodels += p->model_name[p->nmodels] != NULL;
    }
    p->external = p->nskel;
    for (size_t k = 0; external && k < external->n; k++)
        add_skel(p, (struct gr2_ref){0, 0}, (struct gr2_ref){0, 0}, &external->r[k].skel);
}

/* How many transform tracks of g find a bone of skeleton k: by name exactly (exact) or by
 * match_bone. */
static uint32_t matched(struct gr2_types *reg, const struct gr2_space *sp, struct skel *k, const struct group *g,
                        bool exact)
{
    if (!skel_ready(reg, sp, k))
        return 0;
    uint32_t n = 0;
    enum match how;
    for (uint32_t t = 0; t < g->tracks.count; t++)
        n += (exact ? bone_of(k, g->names[t]) : match_bone(k, g->names[t], &how)) >= 0;
    return n;
}

static bool covers(struct gr2_types *reg, const struct gr2_space *sp, struct skel *k, const struct group *g)
{
    return g->tracks.count && matched(reg, sp, k, g, false) == g->tracks.count;
}

/* The names of g's transform tracks. */
static enum s3_err track_names(struct gr2_types *reg, const struct gr2_space *sp, struct group *g, char *err,
                               size_t errlen)
{
    g->names = alloc_array(g->tracks.count, sizeof *g->names);
    if (!g->names)
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    for (uint32_t t = 0; t < g->tracks.count; t++) {
        gr2_space_settle(sp); /* each name is copied */
        char why[200];
        const struct gr2_type *tt = gr2_type_get(reg, sp, g->tracks.type);
        const struct gr2_member *nm = tt ? gr2_std_find(tt, GR2_STD_TRANSFORMTRACK, "Name") : NULL;
        struct gr2_ref at = gr2_array_elem(&g->tracks, t);
        bool nomem = !tt || (!tt->ok && tt->reason == S3_ERR_NOMEM); /* the type refused memory: not "no Name" */
        const char *w = nomem ? "out of memory" : "no Name member";
        enum s3_err e = nomem ? S3_ERR_NOMEM : S3_ERR_FORMAT;
        g->names[t] = NULL;
        if (nm && nm->type == GR2_STRING)
            e = gr2_name_at(sp, at.section, at.offset + nm->offset, &g->names[t], &w);
        if (!g->names[t]) {
            snprintf(why, sizeof why, "%s", w);
            return s3_fail(e ? e : S3_ERR_FORMAT, err, errlen, "track group '%s', track %" PRIu32 ": Name: %s",
                           g->name, t, why);
        }
    }
    return S3_OK;
}

/* The skeleton group g plays on: the one of the model named as the group when it has a
 * bone for every track, else the first (the file's, then -o skeleton='s) that has one
 * named exactly as each track, else the first that has one for each by match_bone, else
 * the one that has bones for the most tracks (the first of those); -1 when no skeleton
 * has a bone for any. */
static int choose(struct gr2_types *reg, const struct gr2_space *sp, struct plan *p, const struct group *g)
{
    for (uint32_t m = 0; m < p->nmodels; m++)
        if (p->model_skel[m] >= 0 && strcmp(p->model_name[m], g->name) == 0 &&
            covers(reg, sp, &p->skel[p->model_skel[m]], g))
            return p->model_skel[m];
    for (uint32_t k = 0; k < p->nskel; k++)
        if (matched(reg, sp, &p->skel[k], g, true) == g->tracks.count)
            return (int)k;
    int best = -1;
    uint32_t most = 0;
    for (uint32_t k = 0; k < p->nskel; k++) {
        uint32_t n = matched(reg, sp, &p->skel[k], g, false);
        if (n > most)
            most = n, best = (int)k;
    }
    return best;
}

/* Each track's bone in the skeleton g plays on (none: -1), and how it was found. */
static enum s3_err bind_tracks(struct plan *p, struct group *g, char *err, size_t errlen)
{
    size_t n = g->tracks.count;
    g->bone = alloc_array(n, sizeof *g->bone);
    g->how = alloc_array(n, 1);
    g->node = alloc_array(n, sizeof *g->node);
    if (!g->bone || !g->how || !g->node)
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    for (uint32_t t = 0; t < g->tracks.count; t++) {
        enum match how = M_NONE;
        g->bone[t] = g->skel >= 0 ? match_bone(&p->skel[g->skel], g->names[t], &how) : -1;
        g->how[t] = (uint8_t)how;
        g->node[t] = -1;
    }
    return S3_OK;
}

static void plan_free(struct plan *p)
{
    gr2_animation_free(&p->anim);
    for (uint32_t k = 0; k < p->nskel; k++) {
        mdl_skeleton_free(&p->skel[k].own);
        free(p->skel[k].by_name);
        free(p->skel[k].by_case);
        free(p->skel[k].by_stem);
    }
    free(p->skel);
    for (uint32_t g = 0; g < p->ngroups; g++) {
        free(p->group[g].name);
        for (uint32_t t = 0; p->group[g].names && t < p->group[g].tracks.count; t++)
            free(p->group[g].names[t]);
        free(p->group[g].names);
        free(p->group[g].bone);
        free(p->group[g].how);
        free(p->group[g].node);
    }
    free(p->group);
    for (uint32_t m = 0; m < p->nmodels; m++)
        free(p->model_name[m]);
    free(p->model_name);
    free(p->model_skel);
    memset(p, 0, sizeof *p);
}

/* Whether an allocation was refused finding or reading the plan's skeletons. */
static bool plan_oom(const struct plan *p)
{
    bool oom = p->oom;
    for (uint32_t k = 0; k < p->nskel; k++)
        oom |= p->skel[k].oom;
    return oom;
}

/* Group k of the animation into the plan (none when its pointer is null). */
static enum s3_err plan_group(struct gr2_types *reg, const struct gr2_space *sp, struct plan *p, uint32_t k,
                              char *err, size_t errlen)
{
    const struct gr2_elem *ge = &p->anim.groups;
    gr2_space_settle(sp); /* the plan keeps references, copied names and read skeletons */
    struct group *g = &p->group[p->ngroups];
    struct gr2_track_group tg;
    if (!gr2_ptr_elem(sp, ge, k, &g->obj))
        return S3_OK;
    enum s3_err e = gr2_track_group_read(reg, sp, ge->type, g->obj, &tg, err, errlen);
    if (e)
        return e;
    g->type = ge->type;
    g->name = tg.name;
    g->tracks = tg.transform;
    if (g->tracks.kind != GR2_EK_ARRAY)
        g->tracks.count = 0;
    p->ngroups++;
    if ((e = track_names(reg, sp, g, err, errlen)))
        return e;
    g->skel = g->tracks.count ? choose(reg, sp, p, g) : -1;
    g->first_node = -1;
    return bind_tracks(p, g, err, errlen);
}

static enum s3_err make_plan(struct gr2_types *reg, const struct gr2_space *sp, struct gr2_ref type,
                             struct gr2_ref obj, const struct rig_set *external, struct plan *p, char *err,
                             size_t errlen)
{
    memset(p, 0, sizeof *p);
    enum s3_err e = gr2_animation_read(reg, sp, type, obj, &p->anim, err, errlen);
    if (e)
        return e;
    /* (plan_free frees what is made from here on) */
    find_skeletons(reg, sp, p, external);
    const struct gr2_elem *ge = &p->anim.groups;
    p->group = alloc_array(ge->kind == GR2_EK_PTRARRAY ? ge->count : 0, sizeof *p->group);
    if (!p->group || p->oom) {
        e = s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
        goto fail;
    }
    for (uint32_t k = 0; ge->kind == GR2_EK_PTRARRAY && k < ge->count; k++)
        if ((e = plan_group(reg, sp, p, k, err, errlen)))
            goto fail;
    if (plan_oom(p)) {
        e = s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
        goto fail;
    }
    return S3_OK;
fail:
    plan_free(p);
    return e;
}

/* ---- the glTF ---- */

static const char *const curve_names[3] = {"PositionCurve", "OrientationCurve", "ScaleShearCurve"};

/* What a build tells the listing (NULL at read time: nothing): the lines of the
 * animation's .warnings and /info, and, for animation_linear.glb, the sampling done. */
struct notes {
    struct mdl_notes warn;
    struct gr2_linear lin;
};

/* A bone's rest transform given as a matrix cannot stay on an animated node (glTF forbids
 * animating a node with a matrix): it takes the track's pose at 0 instead (a scale/shear
 * there: its diagonal). */
static void unmatrix(const struct gr2_transform_track *tr, struct mdl_bone *b)
{
    double v[16];
    gr2_transform_track_eval(tr, 0, v, NULL, NULL);
    b->has_matrix = false;
    for (int j = 0; j < 3; j++)
        b->t[j] = (float)v[j];
    for (int j = 0; j < 4; j++)
        b->r[j] = (float)v[3 + j];
    for (int j = 0; j < 3; j++)
        b->s[j] = (float)v[7 + 4 * j];
}

/* Decodes track t of group g (every curve, fitting its role), with err naming it. */
static enum s3_err read_track(struct gr2_types *reg, const struct gr2_space *sp, const struct group *g, uint32_t t,
                              struct gr2_transform_track *tr, char *err, size_t errlen)
{
    char why[240];
    enum s3_err e =
        gr2_transform_track_read(reg, sp, g->tracks.type, gr2_array_elem(&g->tracks, t), true, tr, why, sizeof why);
    if (e)
        return s3_fail(e, err, errlen, "track group '%s', track %" PRIu32 ": %s", g->name, t, why);
    if ((e = gr2_transform_track_check(tr, why, sizeof why))) {
        s3_fail(e, err, errlen, "track group '%s', track '%s': %s", g->name, tr->name, why);
        gr2_transform_track_free(tr);
    }
    return e;
}

/* A skeleton's bones as nodes with a skin of them: animated bones whose rest is a matrix
 * take their track's first pose, other rests with a shear their diagonal (named in warn,
 * may be NULL). */
static enum s3_err add_skeleton_nodes(struct glb *gl, struct gr2_types *reg, const struct gr2_space *sp,
                                      struct plan *p, uint32_t k, struct mdl_notes *warn, char *err, size_t errlen)
{
    struct skel *sk = &p->skel[k];
    struct mdl_skeleton copy = *sk->s;
    copy.bone = alloc_array(copy.nbones, sizeof *copy.bone);
    if (!copy.bone)
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    memcpy(copy.bone, sk->s->bone, copy.nbones * sizeof *copy.bone);
    enum s3_err e = S3_OK;
    for (uint32_t g = 0; g < p->ngroups; g++)
        for (uint32_t t = 0; p->group[g].skel == (int)k && t < p->group[g].tracks.count; t++) {
            int64_t b = p->group[g].bone[t];
            if (b < 0 || !copy.bone[b].has_matrix)
                continue;
            gr2_space_settle(sp); /* a track's curves are decoded copies */
            struct gr2_transform_track tr;
            if ((e = read_track(reg, sp, &p->group[g], t, &tr, err, errlen)))
                goto done;
            unmatrix(&tr, &copy.bone[b]);
            gr2_transform_track_free(&tr);
        }
    int top;
    if ((e = gr2_drop_rest_shear(&copy, warn, err, errlen)) ||
        (e = export_bone_nodes(gl, &copy, &sk->first_node, err, errlen)))
        goto done;
    /* the bones as a skeleton (Blender makes an armature of a skin's joints) */
    if ((e = export_bone_skin(gl, &copy, sk->first_node, &top, err, errlen)) == S3_OK)
        glb_scene_root(gl, top);
done:
    free(copy.bone);
    return e;
}

/* The nodes: the bones of every skeleton a group plays on, and for each group, a node
 * named as the group holding a node per track that has no bone (every track when the
 * group has no skeleton). Each track's node into group.node. */
static enum s3_err add_nodes(struct glb *gl, struct gr2_types *reg, const struct gr2_space *sp, struct plan *p,
                             struct mdl_notes *warn, char *err, size_t errlen)
{
    for (uint32_t k = 0; k < p->nskel; k++) {
        bool used = false;
        for (uint32_t g = 0; g < p->ngroups; g++)
            used |= p->group[g].skel == (int)k;
        enum s3_err e = used ? add_skeleton_nodes(gl, reg, sp, p, k, warn, err, errlen) : S3_OK;
        if (e)
            return e;
    }
    for (uint32_t g = 0; g < p->ngroups; g++) {
        struct group *gr = &p->group[g];
        gr->first_node = -1; /* a plan serves several builds */
        for (uint32_t t = 0; t < gr->tracks.count; t++) {
            if (gr->bone[t] >= 0) {
                gr->node[t] = p->skel[gr->skel].first_node + (int)gr->bone[t];
                continue;
            }
            if (gr->first_node < 0) {
                gr->first_node = glb_node(gl, gr->name, strlen(gr->name));
                glb_scene_root(gl, gr->first_node);
            }
            gr->node[t] = glb_node(gl, gr->names[t], strlen(gr->names[t]));
            glb_node_child(gl, gr->first_node, gr->node[t]);
        }
    }
    return S3_OK; /* a node refused is remembered by the builder: glb_finish says NOMEM */
}

/* One channel's sampling added to the animation's, and what it left out of tolerance
 * named for the listing. */
static void note_linear(struct notes *n, const struct gr2_linear *one, const struct group *g, const char *track, int r)
{
    n->lin.knot_keys += one->knot_keys;
    n->lin.inserted += one->inserted;
    n->lin.capped_spans += one->capped_spans;
    n->lin.worst = one->worst > n->lin.worst ? one->worst : n->lin.worst;
    n->lin.max_error = one->max_error > n->lin.max_error ? one->max_error : n->lin.max_error;
    if (one->capped_spans == 0)
        return;
    const char *unit = r == 1 ? " degrees" : "";
    mdl_notes_add(&n->warn, "animation_linear.glb: track group '%s', track '%s': %s: %" PRIu64 " spans reached the "
                  "bound of %d inserted keys; the largest error there is %.6g%s (tolerance %g%s)", g->name, track,
                  curve_names[r], one->capped_spans, GR2_LINEAR_MAX_PER_SPAN, one->worst, unit,
                  r == 1 ? GR2_LINEAR_TOL_DEGREES : GR2_LINEAR_TOL, unit);
}

/* A track's channels: the three curves as samplers of animation anim driving node (linear:
 * sampled LINEAR keys). */
static enum s3_err add_channels(struct glb *gl, struct export_times *times, int anim, int node, double duration,
                                const struct group *g, const struct gr2_transform_track *tr, bool linear,
                                struct notes *n, char *err, size_t errlen)
{
    static const enum mdl_path path[3] = {MDL_TRANSLATION, MDL_ROTATION, MDL_SCALE};
    for (int r = 0; r < 3; r++) {
        struct mdl_keys k;
        char why[200];
        struct gr2_linear one = {0};
        enum s3_err e = linear ? gr2_curve_linear_keys(&tr->curve[r], (enum gr2_role)r, duration, &k, &one, NULL,
                                                       why, sizeof why)
                               : gr2_curve_keys(&tr->curve[r], (enum gr2_role)r, duration, &k, NULL, why, sizeof why);
        if (e)
            return s3_fail(e, err, errlen, "track group '%s', track '%s': %s: %s", g->name, tr->name, curve_names[r],
                           why);
        if (n && linear)
            note_linear(n, &one, g, tr->name, r);
        e = export_channel(gl, times, anim, node, path[r], &k);
        mdl_keys_free(&k);
        if (e)
            return s3_fail(e, err, errlen, "out of memory");
    }
    double shear = gr2_curve_shear(&tr->curve[2]);
    if (n && !linear && shear != 0)
        mdl_notes_add(&n->warn, "track group '%s', track '%s': ScaleShearCurve has a shear (largest off-diagonal "
                      "%.9g), dropped: its glTF scale is the diagonal (samples.csv has the whole matrix)", g->name,
                      tr->name, shear);
    return S3_OK;
}

/* One glTF animation, named `name`: a channel per curve of every track (a second track
 * driving the same node is left out, and named in n: glTF allows one channel per node and
 * path). */
static enum s3_err add_group(struct glb *gl, struct export_times *times, struct gr2_types *reg,
                             const struct gr2_space *sp, double duration, const struct group *g, const char *name,
                             bool *driven, bool linear, struct notes *n, char *err, size_t errlen)
{
    int anim = glb_animation(gl, name, strlen(name));
    for (uint32_t t = 0; t < g->tracks.count; t++) {
        gr2_space_settle(sp); /* a track's curves are decoded copies */
        struct gr2_transform_track tr;
        enum s3_err rc = read_track(reg, sp, g, t, &tr, err, errlen);
        if (rc)
            return rc;
        int node = g->node[t];
        if (driven[node]) {
            if (n && !linear)
                mdl_notes_add(&n->warn, "track group '%s', track %" PRIu32 " '%s': an earlier track drives its node "
                              "already: left out", g->name, t, tr.name);
        } else {
            driven[node] = true;
            rc = add_channels(gl, times, anim, node, duration, g, &tr, linear, n, err, errlen);
        }
        gr2_transform_track_free(&tr);
        if (rc)
            return rc;
    }
    return S3_OK;
}

/* animation.glb (linear: animation_linear.glb); out NULL: measured. n (may be NULL)
 * collects what the listing says. */
static enum s3_err build_glb(struct gr2_types *reg, const struct gr2_space *sp, struct plan *p, bool linear,
                             uint8_t **out, size_t *len, struct notes *n, char *err, size_t errlen)
{
    struct glb *gl = out ? glb_new() : glb_new_measure();
    struct export_times *times = export_times_new();
    bool *driven = NULL;
    enum s3_err e;
    if (!gl || !times) {
        e = s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
        goto out;
    }
    if ((e = add_nodes(gl, reg, sp, p, n && !linear ? &n->warn : NULL, err, errlen)))
        goto out;
    uint32_t nnodes = glb_node_count(gl); /* the bones, their skins' roots and the track nodes */
    if (!(driven = alloc_array(nnodes, 1))) {
        e = s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
        goto out;
    }
    for (uint32_t g = 0; g < p->ngroups; g++) {
        if (p->group[g].tracks.count == 0)
            continue; /* glTF animations need a channel */
        memset(driven, 0, nnodes);
        if ((e = add_group(gl, times, reg, sp, p->anim.duration, &p->group[g], p->group[g].name, driven, linear, n,
                           err, errlen)))
            goto out;
    }
    e = glb_finish(gl, out, len, err, errlen);
out:
    free(driven);
    export_times_free(times);
    glb_free(gl);
    return e;
}

/* ---- the files ---- */

struct anim_ctx {
    struct gr2_view *v;
    struct gr2_ref type, obj;
    const uint8_t *refused; /* the sections its measurement was refused (tree memory) */
    bool linear;           /* animation_linear.glb */
};

/* The skeletons of -o skeleton=, or NULL. */
static const struct rig_set *option_skeletons(const struct s3fs *fs)
{
    return fs->skeleton_file ? fs->skeleton_file->set : NULL;
}

/* Over sections the caller pinned: the plan and its glTF (out NULL: only its size, with n).
 * One way for the measurement and the builds, so a build makes what was sized. */
static enum s3_err plan_and_build(const struct anim_ctx *a, struct gr2_space *sp, uint8_t **out, size_t *len,
                                  struct notes *n, char *err, size_t errlen)
{
    struct gr2_types reg = {0};
    struct plan p;
    enum s3_err rc = make_plan(&reg, sp, a->type, a->obj, option_skeletons(a->v->fs), &p, err, errlen);
    if (rc == S3_OK) {
        rc = build_glb(&reg, sp, &p, a->linear, out, len, n, err, errlen);
        plan_free(&p);
    }
    gr2_types_free(&reg);
    return rc;
}

static const char unpinned[] = "the sections cannot be read (the file changed, or out of memory)";

static enum s3_err anim_build(void *ctx, uint8_t **out, size_t *len, char *err, size_t errlen)
{
    struct anim_ctx *a = ctx;
    struct gr2_space sp;
    /* built the way it was sized: the sections refused then are refused again, and one
     * more refused fails this build (read again) rather than change the size */
    enum s3_err rc = gr2_view_pin_as(a->v, &sp, a->refused);
    if (rc)
        return s3_fail(rc, err, errlen, "%s", unpinned);
    rc = plan_and_build(a, &sp, out, len, NULL, err, errlen);
    if (rc == S3_OK && gr2_view_refused_beyond(a->v, &sp, a->refused)) {
        free(out ? *out : NULL);
        rc = s3_fail(S3_ERR_LIMIT, err, errlen,
                     "a section it was sized with cannot be had now (cache_mb): read it again");
    }
    gr2_view_unpin(a->v, &sp);
    return rc;
}

/* Sizes animation.glb (animation_linear.glb) in a request of its own (not the listing's,
 * whose earlier sections may have crowded one out), recording the sections refused to it
 * for the builds; n (may be NULL) gets what the listing says of it. */
static enum s3_err anim_measure(struct anim_ctx *a, size_t *len, struct notes *n, char *err, size_t errlen)
{
    struct gr2_space sp;
    enum s3_err rc = gr2_view_pin(a->v, &sp);
    if (rc)
        return s3_fail(rc, err, errlen, "%s", unpinned);
    rc = plan_and_build(a, &sp, NULL, len, n, err, errlen);
    uint8_t *refused = rc == S3_OK ? gr2_view_refusals(a->v, &sp) : NULL;
    uint32_t ns = gr2_view_nsections(a->v);
    uint8_t *kept = refused ? tree_alloc(a->v->fs->tree, ns ? ns : 1) : NULL;
    if (rc == S3_OK && !kept) {
        tree_note_oom(a->v->fs->tree);
        rc = s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    }
    if (kept)
        memcpy(kept, refused, ns);
    a->refused = kept;
    free(refused);
    gr2_view_unpin(a->v, &sp);
    return rc;
}

/* What the plan says of group g: its skeleton (when -o skeleton='s) into /info, tracks
 * found by a looser name into warn, tracks without a bone into both. */
static void note_group(struct gr2_view *v, const struct plan *p, const struct group *gr, uint32_t index,
                       struct mdl_notes *warn)
{
    const struct rig_set *ext = option_skeletons(v->fs);
    const char *sub = gr->skel >= 0 && (uint32_t)gr->skel >= p->external ? ext->r[gr->skel - p->external].label : NULL;
    enum s3_err e = S3_OK;
    if (gr->tracks.count && gr->skel < 0)
        e = diag_add(&v->fs->diag, "animation %" PRIu32 " (%s): track group '%s': no skeleton has bones named as "
                     "its %" PRIu32 " tracks: animation.glb has a node per track%s", index, p->anim.name, gr->name,
                     gr->tracks.count, ext ? "" : " (-o skeleton=FILE gives one)");
    else if (sub)
        e = diag_add(&v->fs->diag, "animation %" PRIu32 " (%s): track group '%s' plays on the skeleton of "
                     "-o skeleton=%s%s%s", index, p->anim.name, gr->name, v->fs->opts.skeleton, sub[0] ? " at " : "",
                     sub);
    if (e)
        tree_note_oom(v->fs->tree); /* the listing fails (ENOMEM), never an /info without it */
    static const char *const how[] = {"", "ignoring case", "after dropping prefixes"};
    for (uint32_t t = 0; t < gr->tracks.count; t++) {
        if (gr->bone[t] < 0) {
            mdl_notes_add(warn, "track group '%s', track '%s': no bone %s: a node of its own under a node named '%s'",
                          gr->name, gr->names[t], gr->skel < 0 ? "in any skeleton" : "of its skeleton matches it",
                          gr->name);
            continue;
        }
        if (gr->how[t] == M_EXACT)
            continue;
        const struct mdl_bone *b = &p->skel[gr->skel].s->bone[gr->bone[t]];
        mdl_notes_add(warn, "track group '%s', track '%s': plays on bone %" PRId64 " '%s' (matched %s)", gr->name,
                      gr->names[t], gr->bone[t], b->name ? b->name : "", how[gr->how[t]]);
    }
}

/* animation.glb or animation_linear.glb (a): measured in a request of its own, or
 * NAME.error saying why it cannot be made (rc, err: the listing's plan failed). */
static void add_file(struct gr2_view *v, uint32_t dir, const char *name, enum s3_err rc, char *err, size_t errlen,
                     struct anim_ctx *a, struct notes *n)
{
    size_t len = 0;
    if (rc == S3_OK) /* sized in a request of its own, what a build starts from */
        rc = anim_measure(a, &len, n, err, errlen);
    if (rc == S3_ERR_NOMEM) { /* the listing fails (ENOMEM), never NAME.error */
        tree_note_oom(v->fs->tree);
        return;
    }
    if (rc)
        export_add_error(v->fs, dir, name, err);
    else
        export_add_sized(v->fs, dir, name, a->linear ? "glb.animation_linear" : "glb.animation", len, anim_build, a);
}

void gr2_anim_glb_add(struct gr2_view *v, const struct gr2_space *sp, struct gr2_ref type, struct gr2_ref obj,
                      uint32_t index, uint32_t dir)
{
    struct anim_ctx *a = tree_alloc(v->fs->tree, 2 * sizeof *a);
    if (!a)
        return;
    a[0] = (struct anim_ctx){v, type, obj, NULL, false};
    a[1] = (struct anim_ctx){v, type, obj, NULL, true};
    /* one plan in the listing's space says what /info and animation.warnings say of the
     * groups; each file is then sized in a request of its own (nothing built) */
    struct gr2_types reg = {0};
    struct plan p;
    char err[256];
    struct notes n = {0};
    char what[200];
    snprintf(what, sizeof what, "animation %" PRIu32, index);
    enum s3_err rc = make_plan(&reg, sp, type, obj, option_skeletons(v->fs), &p, err, sizeof err);
    if (rc == S3_OK) {
        snprintf(what, sizeof what, "animation %" PRIu32 " (%s)", index, p.anim.name);
        for (uint32_t g = 0; g < p.ngroups; g++)
            note_group(v, &p, &p.group[g], index, &n.warn);
        plan_free(&p);
    }
    gr2_types_free(&reg);
    add_file(v, dir, "animation.glb", rc, err, sizeof err, &a[0], &n);
    add_file(v, dir, "animation_linear.glb", rc, err, sizeof err, &a[1], &n);
    if (n.lin.capped_spans &&
        diag_add(&v->fs->diag, "%s: animation_linear.glb: %" PRIu64 " spans reached the bound of %d inserted keys; "
                 "the largest error left is %.6g (degrees for rotations; animation.warnings names the tracks)", what,
                 n.lin.capped_spans, GR2_LINEAR_MAX_PER_SPAN, n.lin.worst))
        tree_note_oom(v->fs->tree); /* the listing fails (ENOMEM), never an /info without it */
    gr2_add_warnings(v, dir, "animation", what, &n.warn);
}

/* ---- model.glb's animations ---- */

/* Group i of animation `an` as a glTF animation on skeleton k's nodes when it plays on it
 * (every track finds a bone by match_bone, none a bone whose rest is a matrix, which glTF
 * cannot animate). A group that cannot be read is left out (animation.glb says why); a
 * refused allocation fails. */
static enum s3_err model_group(struct glb *gl, struct export_times *times, struct gr2_types *reg,
                               const struct gr2_space *sp, struct skel *k, const struct gr2_animation *an, uint32_t i,
                               bool *driven, char *err, size_t errlen)
{
    const struct gr2_elem *ge = &an->groups;
    gr2_space_settle(sp);
    struct group g = {.skel = 0, .first_node = -1};
    struct gr2_track_group tg;
    if (!gr2_ptr_elem(sp, ge, i, &g.obj))
        return S3_OK;
    enum s3_err e = gr2_track_group_read(reg, sp, ge->type, g.obj, &tg, err, errlen);
    if (e)
        return e == S3_ERR_NOMEM ? e : S3_OK;
    g.name = tg.name;
    g.tracks = tg.transform;
    if (g.tracks.kind != GR2_EK_ARRAY)
        g.tracks.count = 0;
    g.node = alloc_array(g.tracks.count, sizeof *g.node);
    if (!g.node) {
        e = s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
        goto done;
    }
    if (g.tracks.count == 0)
        goto done;
    if ((e = track_names(reg, sp, &g, err, errlen))) {
        e = e == S3_ERR_NOMEM ? e : S3_OK;
        goto done;
    }
    bool plays = covers(reg, sp, k, &g);
    for (uint32_t t = 0; plays && t < g.tracks.count; t++) {
        enum match how;
        g.node[t] = (int)match_bone(k, g.names[t], &how);
        plays = !k->s->bone[g.node[t]].has_matrix;
    }
    if (plays) {
        char name[300];
        if (ge->count > 1)
            snprintf(name, sizeof name, "%s/%s", an->name, g.name);
        else
            snprintf(name, sizeof name, "%s", an->name);
        memset(driven, 0, k->s->nbones);
        e = add_group(gl, times, reg, sp, an->duration, &g, name, driven, false, NULL, err, errlen);
    }
done:
    for (uint32_t t = 0; g.names && t < g.tracks.count; t++)
        free(g.names[t]);
    free(g.names);
    free(g.name);
    free(g.node);
    return e;
}

enum s3_err gr2_anim_into_model(struct glb *gl, struct gr2_types *reg, const struct gr2_space *sp,
                                const struct mdl_skeleton *skel, char *err, size_t errlen)
{
    if (skel->nbones == 0)
        return S3_OK;
    struct skel k = {.s = skel, .first_node = 0};
    struct export_times *times = export_times_new();
    bool *driven = malloc(skel->nbones);
    struct gr2_elem e;
    gr2_root_array(reg, sp, "Animations", &e);
    bool nomem = e.kind == GR2_EK_ERROR && e.reason == S3_ERR_NOMEM; /* never a model without its animations */
    enum s3_err rc = times && driven && !nomem && skel_ready(reg, sp, &k)
                         ? S3_OK
                         : s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    for (uint32_t a = 0; rc == S3_OK && e.kind == GR2_EK_PTRARRAY && a < e.count; a++) {
        gr2_space_settle(sp);
        struct gr2_ref obj;
        struct gr2_animation an;
        if (!gr2_ptr_elem(sp, &e, a, &obj))
            continue;
        if ((rc = gr2_animation_read(reg, sp, e.type, obj, &an, err, errlen))) {
            rc = rc == S3_ERR_NOMEM ? rc : S3_OK; /* one that cannot be read: its animation.error says why */
            continue;
        }
        const struct gr2_elem *ge = &an.groups;
        for (uint32_t i = 0; rc == S3_OK && ge->kind == GR2_EK_PTRARRAY && i < ge->count; i++)
            rc = model_group(gl, times, reg, sp, &k, &an, i, driven, err, errlen);
        gr2_animation_free(&an);
    }
    free(k.by_name);
    free(k.by_case);
    free(k.by_stem);
    free(driven);
    export_times_free(times);
    return rc;
}
