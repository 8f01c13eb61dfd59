#include "parse/base/model.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/base/err.h"

/* Room for `more` bytes after n->len (and a NUL): doubling. */
static bool notes_room(struct mdl_notes *n, size_t more)
{
    if (n->len + more + 1 <= n->cap)
        return true;
    size_t cap = n->cap ? n->cap : 256;
    while (cap < n->len + more + 1)
        cap *= 2;
    char *p = realloc(n->p, cap);
    if (!p) {
        n->oom = true;
        return false;
    }
    n->p = p;
    n->cap = cap;
    return true;
}

void mdl_notes_add(struct mdl_notes *n, const char *fmt, ...)
{
    if (n->lines >= MDL_NOTES_NAMED) {
        n->more++;
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (k < 0 || !notes_room(n, (size_t)k + 1))
        return;
    va_start(ap, fmt);
    vsnprintf(n->p + n->len, (size_t)k + 1, fmt, ap);
    va_end(ap);
    n->len += (size_t)k;
    n->p[n->len++] = '\n';
    n->p[n->len] = 0;
    n->lines++;
}

char *mdl_notes_take(struct mdl_notes *n)
{
    if (n->more) {
        char tail[64];
        int k = snprintf(tail, sizeof tail, "%" PRIu64 " more not named here\n", n->more);
        if (notes_room(n, (size_t)k)) {
            memcpy(n->p + n->len, tail, (size_t)k + 1);
            n->len += (size_t)k;
        }
    }
    char *p = n->oom ? NULL : n->p;
    if (n->oom)
        free(n->p);
    memset(n, 0, sizeof *n);
    return p;
}

void mdl_notes_free(struct mdl_notes *n)
{
    free(n->p);
    memset(n, 0, sizeof *n);
}

void mdl_skeleton_free(struct mdl_skeleton *s)
{
    if (!s)
        return;
    for (uint32_t i = 0; s->bone && i < s->nbones; i++)
        free(s->bone[i].name);
    free(s->bone);
    free(s->name);
    memset(s, 0, sizeof *s);
}

enum s3_err mdl_skeleton_copy(const struct mdl_skeleton *from, struct mdl_skeleton *to)
{
    memset(to, 0, sizeof *to);
    to->bone = alloc_array(from->nbones, sizeof *to->bone);
    if (!to->bone)
        return S3_ERR_NOMEM;
    to->nbones = from->nbones;
    bool ok = true;
    if (from->name) {
        to->name = strndup(from->name, from->name_len);
        to->name_len = from->name_len;
        ok = to->name != NULL;
    }
    for (uint32_t i = 0; i < from->nbones; i++) {
        to->bone[i] = from->bone[i];
        if (from->bone[i].name) {
            to->bone[i].name = malloc(from->bone[i].name_len + 1);
            if (to->bone[i].name) {
                memcpy(to->bone[i].name, from->bone[i].name, from->bone[i].name_len);
                to->bone[i].name[from->bone[i].name_len] = 0;
            }
            ok = ok && to->bone[i].name;
        }
    }
    if (!ok)
        mdl_skeleton_free(to);
    return ok ? S3_OK : S3_ERR_NOMEM;
}

void mdl_mesh_free(struct mdl_mesh *m)
{
    if (!m)
        return;
    free(m->name);
    free(m->pos);
    free(m->nrm);
    free(m->uv);
    free(m->uv_more[0]);
    free(m->uv_more[1]);
    free(m->rgba);
    free(m->joints);
    free(m->weights);
    free(m->index);
    free(m->group);
    for (uint32_t i = 0; m->material && i < m->nmaterials; i++)
        free(m->material[i]);
    free(m->material);
    memset(m, 0, sizeof *m);
}

void mdl_model_free(struct mdl_model *m)
{
    if (!m)
        return;
    free(m->name);
    mdl_skeleton_free(&m->skel);
    for (uint32_t i = 0; m->mesh && i < m->nmeshes; i++)
        mdl_mesh_free(&m->mesh[i]);
    free(m->mesh);
    free(m->left_out);
    memset(m, 0, sizeof *m);
}

enum s3_err mdl_skeleton_check(const struct mdl_skeleton *s, char *err, size_t errlen)
{
    uint32_t n = s->nbones;
    for (uint32_t i = 0; i < n; i++) {
        int32_t p = s->bone[i].parent;
        if (p < -1 || p >= (int32_t)n) {
            return s3_fail(S3_ERR_FORMAT, err, errlen, "bone %" PRIu32 ": parent %" PRId32 " is not a bone", i, p);
        }
    }
    /* walk up from each bone, marking the path: meeting the path again is a cycle */
    uint8_t *state = alloc_array(n, 1); /* 0 new, 1 on the current path, 2 done */
    if (!state)
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    enum s3_err rc = S3_OK;
    for (uint32_t i = 0; i < n && rc == S3_OK; i++) {
        int32_t p = (int32_t)i;
        while (p >= 0 && state[p] == 0) {
            state[p] = 1;
            p = s->bone[p].parent;
        }
        if (p >= 0 && state[p] == 1)
            rc = s3_fail(S3_ERR_FORMAT, err, errlen, "bone %" PRId32 ": its parent chain is a cycle", p);
        for (p = (int32_t)i; p >= 0 && state[p] == 1; p = s->bone[p].parent)
            state[p] = 2;
    }
    free(state);
    return rc;
}

void mdl_trs_matrix(const float t[3], const float r[4], const float s[3], float m[16])
{
    float x = r[0], y = r[1], z = r[2], w = r[3];
    float rot[9] = {1 - 2 * (y * y + z * z), 2 * (x * y + z * w),     2 * (x * z - y * w),
                    2 * (x * y - z * w),     1 - 2 * (x * x + z * z), 2 * (y * z + x * w),
                    2 * (x * z + y * w),     2 * (y * z - x * w),     1 - 2 * (x * x + y * y)};
    for (int c = 0; c < 3; c++) { /* column c of the rotation, scaled by s[c] */
        for (int k = 0; k < 3; k++)
            m[4 * c + k] = rot[3 * c + k] * s[c];
        m[4 * c + 3] = 0;
    }
    m[12] = t[0];
    m[13] = t[1];
    m[14] = t[2];
    m[15] = 1;
}

void mdl_mat_mul(const float a[16], const float b[16], float out[16])
{
    float r[16];
    for (int c = 0; c < 4; c++)
        for (int k = 0; k < 4; k++) {
            double sum = 0;
            for (int i = 0; i < 4; i++)
                sum += (double)a[4 * i + k] * (double)b[4 * c + i];
            r[4 * c + k] = (float)sum;
        }
    memcpy(out, r, sizeof r);
}

enum s3_err mdl_mat_inverse(const float m[16], float out[16])
{
    /* the 3×3 part by cofactors, then the translation */
    double a = m[0], b = m[4], c = m[8], d = m[1], e = m[5], f = m[9], g = m[2], h = m[6], i = m[10];
    double A = e * i - f * h, B = -(d * i - f * g), C = d * h - e * g;
    double det = a * A + b * B + c * C;
    if (!isfinite(det) || fabs(det) < 1e-30)
        return S3_ERR_FORMAT;
    double inv[9] = {A / det, -(b * i - c * h) / det, (b * f - c * e) / det,
                     B / det, (a * i - c * g) / det,  -(a * f - c * d) / det,
                     C / det, -(a * h - b * g) / det, (a * e - b * d) / det}; /* row-major */
    double t[3] = {m[12], m[13], m[14]};
    for (int r = 0; r < 3; r++) {
        for (int k = 0; k < 3; k++)
            out[4 * k + r] = (float)inv[3 * r + k];
        out[12 + r] = (float)-(inv[3 * r] * t[0] + inv[3 * r + 1] * t[1] + inv[3 * r + 2] * t[2]);
    }
    out[3] = out[7] = out[11] = 0;
    out[15] = 1;
    return S3_OK;
}

static void local_matrix(const struct mdl_bone *b, float m[16])
{
    if (b->has_matrix)
        memcpy(m, b->m, sizeof b->m);
    else
        mdl_trs_matrix(b->t, b->r, b->s, m);
}

enum s3_err mdl_compute_ibm(struct mdl_skeleton *s, char *err, size_t errlen)
{
    uint32_t n = s->nbones;
    float *world = alloc_array(n, 16 * sizeof *world);
    uint8_t *done = alloc_array(n, 1);
    uint32_t *stack = alloc_array(n, sizeof *stack);
    enum s3_err rc = S3_OK;
    if (!world || !done || !stack)
        rc = s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    for (uint32_t i = 0; rc == S3_OK && i < n; i++) {
        /* the chain up to the first bone already done (or a root), then down again */
        uint32_t depth = 0;
        for (int32_t p = (int32_t)i; p >= 0 && !done[p] && depth < n; p = s->bone[p].parent)
            stack[depth++] = (uint32_t)p;
        while (depth && rc == S3_OK) {
            uint32_t k = stack[--depth];
            float local[16];
            local_matrix(&s->bone[k], local);
            int32_t p = s->bone[k].parent;
            if (p >= 0)
                mdl_mat_mul(world + 16 * (uint32_t)p, local, world + 16 * k);
            else
                memcpy(world + 16 * k, local, sizeof local);
            done[k] = 1;
            if (mdl_mat_inverse(world + 16 * k, s->bone[k].ibm) != S3_OK)
                rc = s3_fail(S3_ERR_FORMAT, err, errlen, "bone %" PRIu32 ": its world transform is singular (no inverse)",
                             k);
        }
    }
    free(world);
    free(done);
    free(stack);
    return rc;
}

static double dot3(const double *a, const double *b)
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* The column-norm of a 4×4: the largest sum of absolute values of a column. */
static double col_norm(const double m[16])
{
    double best = 0;
    for (int c = 0; c < 4; c++) {
        double sum = fabs(m[4 * c]) + fabs(m[4 * c + 1]) + fabs(m[4 * c + 2]) + fabs(m[4 * c + 3]);
        if (sum > best)
            best = sum;
    }
    return best;
}

/* The glTF validator's test: decompose into T, R (through a quaternion) and S, compose
 * again, and compare the two matrices' column-norms. */
bool mdl_is_trs(const float m[16])
{
    for (int i = 0; i < 16; i++)
        if (!isfinite(m[i]))
            return false;
    if (m[3] != 0 || m[7] != 0 || m[11] != 0 || m[15] != 1)
        return false;
    double a[16], col[3][3], s[3];
    for (int i = 0; i < 16; i++)
        a[i] = m[i];
    for (int c = 0; c < 3; c++) {
        for (int k = 0; k < 3; k++)
            col[c][k] = a[4 * c + k];
        s[c] = sqrt(dot3(col[c], col[c]));
    }
    double det = col[0][0] * (col[1][1] * col[2][2] - col[2][1] * col[1][2]) -
                 col[1][0] * (col[0][1] * col[2][2] - col[2][1] * col[0][2]) +
                 col[2][0] * (col[0][1] * col[1][2] - col[1][1] * col[0][2]);
    if (det == 0 || s[0] == 0 || s[1] == 0 || s[2] == 0)
        return false;
    if (det < 0)
        s[0] = -s[0];
    double r[3][3]; /* r[row][col], the rotation part */
    for (int c = 0; c < 3; c++)
        for (int k = 0; k < 3; k++)
            r[k][c] = col[c][k] / s[c];
    double q[4], tr = r[0][0] + r[1][1] + r[2][2];
    if (tr > 0) {
        double w = sqrt(tr + 1) * 2;
        q[3] = w / 4;
        q[0] = (r[2][1] - r[1][2]) / w;
        q[1] = (r[0][2] - r[2][0]) / w;
        q[2] = (r[1][0] - r[0][1]) / w;
    } else {
        int i = r[0][0] < r[1][1] ? (r[1][1] < r[2][2] ? 2 : 1) : (r[0][0] < r[2][2] ? 2 : 0);
        int j = (i + 1) % 3, k = (i + 2) % 3;
        double root = sqrt(r[i][i] - r[j][j] - r[k][k] + 1);
        q[i] = root / 2;
        root = 0.5 / root;
        q[3] = (r[k][j] - r[j][k]) * root;
        q[j] = (r[j][i] + r[i][j]) * root;
        q[k] = (r[k][i] + r[i][k]) * root;
    }
    float t[3] = {m[12], m[13], m[14]}, fq[4] = {(float)q[0], (float)q[1], (float)q[2], (float)q[3]},
          fs[3] = {(float)s[0], (float)s[1], (float)s[2]}, back[16];
    mdl_trs_matrix(t, fq, fs, back);
    double b[16];
    for (int i = 0; i < 16; i++)
        b[i] = back[i];
    return fabs(col_norm(a) - col_norm(b)) < 0.00005;
}

static bool all_finite(const float *f, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        if (!isfinite(f[i]))
            return false;
    return true;
}

enum s3_err mdl_mesh_check(const struct mdl_mesh *m, uint32_t nbones, char *err, size_t errlen)
{
    uint64_t v = m->nverts;
    if (!all_finite(m->pos, 3 * v) || (m->nrm && !all_finite(m->nrm, 3 * v)) || (m->uv && !all_finite(m->uv, 2 * v)) ||
        (m->uv_more[0] && !all_finite(m->uv_more[0], 2 * v)) || (m->uv_more[1] && !all_finite(m->uv_more[1], 2 * v)) ||
        (m->weights && !all_finite(m->weights, 4 * v))) {
        return s3_fail(S3_ERR_FORMAT, err, errlen, "a vertex value is not a finite number (NaN or infinity)");
    }
    for (uint64_t i = 0; i < 3 * (uint64_t)m->ntris; i++)
        if (m->index[i] >= m->nverts) {
            return s3_fail(S3_ERR_FORMAT, err, errlen, "index %" PRIu64 " is %" PRIu32 ", past the %" PRIu32 " vertices", i, m->index[i],
                     m->nverts);
        }
    for (uint32_t g = 0; g < m->ngroups; g++)
        if (m->group[g].first > m->ntris || m->group[g].count > m->ntris - m->group[g].first) {
            return s3_fail(S3_ERR_FORMAT, err, errlen, "group %" PRIu32 ": triangles %" PRIu32 "+%" PRIu32 " past the %" PRIu32 " triangles",
                     g, m->group[g].first, m->group[g].count, m->ntris);
        }
    if (m->on_bone && m->bone >= nbones) {
        return s3_fail(S3_ERR_FORMAT, err, errlen, "placed under bone %" PRIu32 ", past the %" PRIu32 " bones", m->bone, nbones);
    }
    for (uint64_t i = 0; m->joints && i < 4 * v; i++)
        if (m->joints[i] >= nbones) {
            return s3_fail(S3_ERR_FORMAT, err, errlen, "vertex %" PRIu64 ": bone %u is not in the skeleton", i / 4, m->joints[i]);
        }
    return S3_OK;
}

void mdl_keys_free(struct mdl_keys *k)
{
    if (!k)
        return;
    free(k->times);
    free(k->values);
    k->times = NULL;
    k->values = NULL;
    k->n = 0;
}

double mdl_drop_shear(bool *has_matrix, const float m[16], const float r[4])
{
    if (!*has_matrix || mdl_is_trs(m))
        return 0;
    *has_matrix = false;
    /* SS = R^T × the matrix's 3×3 part (R from r, made unit; a zero r leaves it as is) */
    double q[4] = {r[0], r[1], r[2], r[3]}, len = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    for (int i = 0; i < 4 && len > 0; i++)
        q[i] /= len;
    double x = q[0], y = q[1], z = q[2], w = q[3];
    double R[3][3] = {{1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)},
                      {2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)},
                      {2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)}};
    double most = 0;
    for (int row = 0; row < 3; row++)
        for (int col = 0; col < 3; col++) {
            double v = 0;
            for (int k = 0; k < 3; k++)
                v += R[k][row] * m[4 * col + k];
            if (row != col && !(fabs(v) <= most))
                most = fabs(v);
        }
    return most;
}
