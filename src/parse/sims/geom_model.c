#include "parse/sims/geom_model.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/base/err.h"

void geom_report_free(struct geom_report *r)
{
    free(r->missing);
    memset(r, 0, sizeof *r);
}

/* count × n floats of declaration d (n elements of each vertex), malloc'd. */
static float *attribute(const struct geom *g, const struct geom_decl *d, unsigned n)
{
    size_t count = (size_t)g->nverts * n;
    float *f = alloc_array(count, sizeof *f);
    for (uint32_t i = 0; f && i < g->nverts; i++)
        for (unsigned k = 0; k < n; k++)
            f[(size_t)i * n + k] = geom_value(g, d, i, k);
    return f;
}

/* The whole triangles whose indices name vertices; the others are counted as left out. */
static enum s3_err triangles(const struct geom *g, struct mdl_mesh *m, struct geom_report *rep)
{
    uint32_t whole = geom_triangles(g);
    m->index = alloc_array(whole, 3 * sizeof *m->index);
    if (!m->index)
        return S3_ERR_NOMEM;
    for (uint32_t t = 0; t < whole; t++) {
        const uint32_t *x = g->index + 3 * (size_t)t;
        if (x[0] >= g->nverts || x[1] >= g->nverts || x[2] >= g->nverts)
            continue;
        memcpy(m->index + 3 * (size_t)m->ntris, x, 3 * sizeof *x);
        m->ntris++;
    }
    m->index16 = g->index_size <= 2;
    rep->tris_left_out = (g->indices_ok ? (g->index_count + 2) / 3 : 0) - m->ntris;
    return S3_OK;
}

static double length3(const float *v)
{
    return sqrt((double)v[0] * v[0] + (double)v[1] * v[1] + (double)v[2] * v[2]);
}

/* Zero-length (or not finite) normals get the sum of the face normals around them
 * (their cross products: larger faces weigh more), (0, 1, 0) where that is zero too; the
 * others are made unit length where they are not. */
static enum s3_err repair_normals(const struct mdl_mesh *m, struct geom_report *rep)
{
    uint32_t n = m->nverts;
    bool *bad = alloc_array(n, sizeof *bad);
    if (!bad)
        return S3_ERR_NOMEM;
    for (uint32_t i = 0; i < n; i++) {
        double len = length3(m->nrm + 3 * (size_t)i);
        bad[i] = !isfinite(len) || len < 1e-12;
        rep->zero_normals += bad[i];
    }
    /* one pass over the triangles adds each face to its corners: the faces around a bad
     * vertex are never searched for, so the work is the triangles (rep->repair_faces) */
    double *acc = rep->zero_normals ? alloc_array(3 * (size_t)n, sizeof *acc) : NULL;
    if (rep->zero_normals && !acc) {
        free(bad);
        return S3_ERR_NOMEM;
    }
    for (uint32_t t = 0; acc && t < m->ntris; t++) {
        const uint32_t *x = m->index + 3 * (size_t)t;
        if (!bad[x[0]] && !bad[x[1]] && !bad[x[2]])
            continue;
        rep->repair_faces++;
        const float *a = m->pos + 3 * (size_t)x[0], *b = m->pos + 3 * (size_t)x[1], *c = m->pos + 3 * (size_t)x[2];
        double u[3] = {(double)b[0] - a[0], (double)b[1] - a[1], (double)b[2] - a[2]};
        double v[3] = {(double)c[0] - a[0], (double)c[1] - a[1], (double)c[2] - a[2]};
        double f[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]};
        for (int k = 0; k < 3; k++)
            for (int j = 0; j < 3; j++)
                acc[3 * (size_t)x[k] + (size_t)j] += f[j];
    }
    for (uint32_t i = 0; i < n; i++) {
        float *v = m->nrm + 3 * (size_t)i;
        if (bad[i]) {
            const double *a = acc + 3 * (size_t)i;
            double len = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
            bool ok = isfinite(len) && len > 1e-30;
            for (int k = 0; k < 3; k++)
                v[k] = ok ? (float)(a[k] / len) : (k == 1 ? 1.0f : 0.0f);
            continue;
        }
        double len = length3(v);
        if (fabs(len - 1) > 1e-5) {
            rep->unit_normals++;
            for (int k = 0; k < 3; k++)
                v[k] = (float)(v[k] / len);
        }
    }
    free(acc);
    free(bad);
    return S3_OK;
}

/* Ascending u32, counting the comparisons in *ctx (a uint64_t). */
static int by_u32_counted(const void *a, const void *b, void *ctx)
{
    ++*(uint64_t *)ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

enum s3_err geom_missing_hashes(const struct geom *g, const struct rig_entry *rig, struct geom_report *rep)
{
    uint32_t n = g->bones.count, k = 0;
    uint32_t *m = alloc_array(n, sizeof *m);
    rep->missing = m;
    rep->nmissing = 0;
    if (!m)
        return S3_ERR_NOMEM;
    rep->lookups += n;
    for (uint32_t i = 0; i < n; i++)
        if (rig_bone_of(rig, g->bone_hash[i]) < 0)
            m[k++] = g->bone_hash[i];
    qsort_r(m, k, sizeof *m, by_u32_counted, &rep->compares); /* each named once, in order */
    for (uint32_t i = 0; i < k; i++)
        if (rep->nmissing == 0 || m[i] != m[rep->nmissing - 1])
            m[rep->nmissing++] = m[i];
    return S3_OK;
}

/* The rig bone of each entry of the GEOM's hash list (-1: missing, named in rep). */
static int32_t *map_hashes(const struct geom *g, const struct rig_entry *rig, struct geom_report *rep)
{
    uint32_t n = g->bones.count;
    int32_t *map = alloc_array(n, sizeof *map);
    if (!map || geom_missing_hashes(g, rig, rep) != S3_OK) {
        free(map);
        return NULL;
    }
    rep->lookups += n;
    for (uint32_t i = 0; i < n; i++)
        map[i] = rig_bone_of(rig, g->bone_hash[i]);
    return map;
}

/* One vertex's influences: slots with a weight, through the hash list to rig bones
 * (two slots of one bone merged), divided by their sum; none left: wholly bone 0. */
static void influences(const struct geom *g, const struct geom_decl *bd, const struct geom_decl *wd,
                       const int32_t *map, uint32_t i, uint16_t joints[4], float weights[4], struct geom_report *rep)
{
    double w[4] = {0};
    uint16_t j[4] = {0};
    int n = 0;
    bool lost = false;
    double sum_all = 0; /* of every weighted slot, for the check against 1 */
    for (unsigned k = 0; k < 4; k++) {
        double x = geom_value(g, wd, i, k);
        if (!(x > 0)) /* zero-weight slots hold leftover bytes; negative or NaN weights count as none */
            continue;
        sum_all += x;
        unsigned b = (unsigned)geom_value(g, bd, i, k);
        if (b >= g->bones.count) {
            rep->past_list++;
            continue;
        }
        if (map[b] < 0) {
            lost = true;
            continue;
        }
        int at = 0;
        while (at < n && j[at] != (uint16_t)map[b])
            at++;
        if (at == n)
            j[n++] = (uint16_t)map[b];
        w[at] += x;
    }
    double sum = 0;
    for (int k = 0; k < n; k++)
        sum += w[k];
    memset(joints, 0, 4 * sizeof *joints);
    memset(weights, 0, 4 * sizeof *weights);
    if (n == 0 || !(sum > 0) || !isfinite(sum)) {
        rep->unweighted++;
        weights[0] = 1;
        return;
    }
    double one = wd->type == GEOM_DT_FLOAT ? 1.0 : 255.0; /* the sum a vertex's weights have */
    if (lost)
        rep->missing_vertices++;
    else if (fabs(sum_all - one) > 1e-3 * one)
        rep->renormalised++;
    for (int k = 0; k < n; k++) {
        joints[k] = j[k];
        weights[k] = (float)(w[k] / sum);
    }
}

static enum s3_err skin(const struct geom *g, const struct rig_entry *rig, struct mdl_mesh *m, struct geom_report *rep)
{
    const struct geom_decl *bd = geom_find(g, GEOM_BONES, -1), *wd = geom_find(g, GEOM_WEIGHTS, -1);
    int32_t *map = map_hashes(g, rig, rep); /* the missing hashes are said, skinned or not */
    if (map && (!bd || !wd)) {
        snprintf(rep->unskinned_why, sizeof rep->unskinned_why, "the GEOM has no %s declaration",
                 !bd ? "bone-index (usage 4)" : "weight (usage 5)");
        free(map);
        return S3_OK;
    }
    size_t slots = m->nverts ? 4 * (size_t)m->nverts : 4;
    m->joints = alloc_array(slots, sizeof *m->joints);
    m->weights = alloc_array(slots, sizeof *m->weights);
    if (!map || !m->joints || !m->weights) {
        free(map);
        return S3_ERR_NOMEM;
    }
    for (uint32_t i = 0; i < m->nverts; i++)
        influences(g, bd, wd, map, i, m->joints + 4 * (size_t)i, m->weights + 4 * (size_t)i, rep);
    free(map);
    m->joints_u8 = rig->skel.nbones <= 255;
    rep->skinned = true;
    return S3_OK;
}

static enum s3_err build_mesh(const struct geom *g, const struct rig_entry *rig, struct mdl_mesh *m,
                              struct geom_report *rep, char *err, size_t errlen)
{
    const struct geom_decl *pd = geom_find(g, GEOM_POSITION, -1), *nd = geom_find(g, GEOM_NORMAL, -1);
    /* a part never reached (an earlier one broke) has no reason of its own: bad bytes */
    if (!g->verts_ok)
        return s3_fail(g->vert_reason ? g->vert_reason : S3_ERR_FORMAT, err, errlen, "the vertices cannot be read");
    if (!pd)
        return s3_fail(S3_ERR_FORMAT, err, errlen, "no position declaration (usage 1, float x3)");
    if (!g->indices_ok)
        return s3_fail(g->index_reason ? g->index_reason : S3_ERR_FORMAT, err, errlen, "the indices cannot be read");
    m->name = strdup("geom");
    m->name_len = 4;
    m->nverts = g->nverts;
    m->pos = attribute(g, pd, 3);
    m->nrm = nd ? attribute(g, nd, 3) : NULL;
    for (int set = 0; set < 3; set++) {
        const struct geom_decl *ud = geom_find(g, GEOM_UV, set);
        float **to = set == 0 ? &m->uv : &m->uv_more[set - 1];
        *to = ud ? attribute(g, ud, 2) : NULL;
        if (ud && !*to)
            return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    }
    /* the steps below fail only for memory */
    if (!m->name || !m->pos || (nd && !m->nrm) || triangles(g, m, rep) || (m->nrm && repair_normals(m, rep)) ||
        (rig && skin(g, rig, m, rep)))
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    const char *shader = g->has_material ? geom_param_name(g->shader) : NULL;
    char hex[16];
    snprintf(hex, sizeof hex, "0x%08" PRIx32, g->shader);
    m->material = alloc_array(1, sizeof *m->material);
    if (!m->material || !(m->material[0] = strdup(shader ? shader : hex)))
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    m->nmaterials = 1;
    m->group = alloc_array(1, sizeof *m->group);
    if (!m->group)
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    *m->group = (struct mdl_group){0, 0, m->ntris};
    m->ngroups = 1;
    return S3_OK;
}

enum s3_err geom_model(const struct geom *g, const struct rig_entry *rig, struct mdl_model *out,
                       struct geom_report *rep, char *err, size_t errlen)
{
    struct geom_report scratch;
    if (!rep)
        rep = &scratch;
    memset(rep, 0, sizeof *rep);
    memset(out, 0, sizeof *out);
    out->name = strdup("geom");
    out->name_len = 4;
    out->r[3] = 1;
    out->s[0] = out->s[1] = out->s[2] = 1;
    out->mesh = alloc_array(1, sizeof *out->mesh);
    enum s3_err rc;
    if (!out->name || !out->mesh)
        rc = s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    else if (out->nmeshes = 1, (rc = build_mesh(g, rig, out->mesh, rep, err, errlen)))
        ;
    else if (rig && (rc = mdl_skeleton_copy(&rig->skel, &out->skel)))
        s3_fail(rc, err, errlen, "out of memory");
    else
        rc = mdl_mesh_check(out->mesh, out->skel.nbones, err, errlen);
    if (rc) {
        mdl_model_free(out);
        struct geom_report work = *rep;
        geom_report_free(rep); /* nothing to report on a model that is not made, but its work */
        rep->lookups = work.lookups;
        rep->compares = work.compares;
        rep->repair_faces = work.repair_faces;
    }
    if (rep == &scratch)
        geom_report_free(&scratch);
    return rc;
}
