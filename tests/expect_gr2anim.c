#include "expect_gr2anim.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tree_probe.h"

/* ---- the rules, read again (shared/formats/gr2anim.md) ---- */

static float trunc_scale(uint16_t w)
{
    uint32_t bits = (uint32_t)w << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

/* D4n selector entries: 0-7 as the table lists them (in units of sqrt 2), 8-15 negated. */
static void d4n_range(unsigned e, double *width, double *offset)
{
    static const double t[8][2] = {{1, -0.5},     {0.5, -0.25},     {0.25, -0.375},   {0.25, -0.125},
                                   {0.25, 0.125}, {0.125, -0.125}, {0.125, -0.0625}, {0.125, 0}};
    double s = e >= 8 ? -sqrt(2.0) : sqrt(2.0);
    *width = s * t[e & 7][0];
    *offset = s * t[e & 7][1];
}

static void d4n_key(uint16_t sel, const uint16_t *w, int bits, double *q)
{
    unsigned top = 1u << bits, max = top - 1, omit = (w[1] & top ? 2u : 0u) + (w[2] & top ? 1u : 0u);
    double sum = 0;
    for (unsigned s = 0; s < 3; s++) {
        unsigned c = (omit + 1 + s) & 3;
        double width, offset;
        d4n_range((sel >> (4 * c)) & 15, &width, &offset);
        q[c] = (w[s] & max) * width / max + offset;
        sum += q[c] * q[c];
    }
    q[omit] = (w[0] & top ? -1.0 : 1.0) * sqrt(sum < 1 ? 1 - sum : 0);
}

static bool bytes8(int f)
{
    return f == 7 || f == 9 || f == 11 || f == 14 || f == 15 || f == 18;
}

void ref_decode(const struct fxa_curve *c, struct ref_curve *out)
{
    memset(out, 0, sizeof *out);
    out->degree = c->degree;
    int f = c->format;
    float scale = trunc_scale(c->h16);
    uint32_t n = 0;
    switch (f) {
    case 0:
        out->kind = REF_SAMPLES;
        out->dim = c->h16;
        out->n = c->na / out->dim;
        for (uint32_t i = 0; i < c->na; i++)
            out->ctrl[i] = c->a[i];
        return;
    case 1:
    case FXA_OLD:
        out->n = c->na;
        out->dim = c->na ? c->nb / c->na : 0;
        for (uint32_t i = 0; i < c->na; i++)
            out->knots[i] = c->a[i];
        for (uint32_t i = 0; i < c->nb; i++)
            out->ctrl[i] = c->b[i];
        return;
    case 2:
        out->kind = REF_IDENTITY;
        return;
    case 3:
    case 4:
    case 5:
        out->kind = REF_CONSTANT;
        out->n = 1;
        out->dim = f == 3 ? c->na : f == 4 ? 3 : 4;
        for (uint32_t j = 0; j < out->dim; j++)
            out->ctrl[j] = f == 3 ? c->a[j] : c->s[j];
        return;
    case 6:
    case 7:
        out->dim = c->na / 2;
        n = c->nw / (out->dim + 1);
        for (uint32_t i = 0; i < n; i++)
            for (uint32_t j = 0; j < out->dim; j++)
                out->ctrl[i * out->dim + j] = c->w[n + i * out->dim + j] * (double)c->a[j] + c->a[out->dim + j];
        break;
    case 8:
    case 9:
        out->dim = 4;
        n = c->nw / 4;
        scale = c->f1;
        for (uint32_t i = 0; i < n; i++)
            d4n_key(c->h16, c->w + n + 3 * i, f == 8 ? 15 : 7, out->ctrl + 4 * i);
        break;
    case 12:
    case 14:
        out->dim = 9;
        n = c->nw / 2;
        for (uint32_t i = 0; i < n; i++) {
            double s = c->w[n + i] * (double)c->f1 + c->f2;
            out->ctrl[9 * i] = out->ctrl[9 * i + 4] = out->ctrl[9 * i + 8] = s;
        }
        break;
    case 16:
        out->dim = 3;
        n = out->n = c->na / 2;
        for (uint32_t i = 0; i < n; i++) {
            out->knots[i] = c->a[i];
            for (uint32_t j = 0; j < 3; j++)
                out->ctrl[3 * i + j] = c->a[n + i] * (double)c->s[j] + c->o[j];
        }
        return;
    default: { /* 10, 11, 13, 15, 17, 18 */
        bool one = f == 17 || f == 18, d9 = f == 13 || f == 15;
        uint32_t per = one ? 1 : 3;
        out->dim = d9 ? 9 : 3;
        n = c->nw / (per + 1);
        for (uint32_t i = 0; i < n; i++)
            for (uint32_t j = 0; j < 3; j++) {
                double v = c->w[n + i * per + (one ? 0 : j)] * (double)c->s[j] + c->o[j];
                out->ctrl[i * out->dim + (d9 ? 4 * j : j)] = v;
            }
    }
    }
    out->n = n;
    for (uint32_t i = 0; i < n; i++) /* knot words over the scale, in float as Granny does */
        out->knots[i] = (float)(bytes8(f) ? (c->w[i] & 0xFF) : c->w[i]) / scale;
}

/* The notes' de Boor: k the first knot after t (or n - 1), controls P[k-d..k], knot u_m =
 * T[m-1], indices clamped. */
void ref_eval(const struct ref_curve *c, enum ref_role role, double t, double *out)
{
    uint32_t dim = role == ROLE_POS ? 3 : role == ROLE_ROT ? 4 : role == ROLE_SS ? 9 : c->dim;
    if (c->kind == REF_IDENTITY || (c->kind == REF_KNOTS && c->n == 0)) {
        for (uint32_t j = 0; j < dim; j++)
            out[j] = (role == ROLE_ROT && j == 3) || (role == ROLE_SS && j % 4 == 0) ? 1 : 0;
        return;
    }
    int n = (int)c->n, d = c->degree, k = n - 1;
    for (int i = 0; i < n; i++)
        if (c->knots[i] > t) {
            k = i;
            break;
        }
#define CL(i) ((i) < 0 ? 0 : (i) > n - 1 ? n - 1 : (i))
    for (uint32_t j = 0; j < dim; j++) {
        double D[8] = {0};
        for (int i = k - d; i <= k; i++)
            D[i - (k - d)] = c->ctrl[CL(i) * (int)c->dim + (int)j];
        for (int r = 1; r <= d; r++)
            for (int jj = k; jj >= k - d + r; jj--) {
                double lo = c->knots[CL(jj - 1)], den = c->knots[CL(jj + d - r)] - lo;
                double a = den == 0 ? 0 : (t - lo) / den;
                D[jj - (k - d)] = (1 - a) * D[jj - 1 - (k - d)] + a * D[jj - (k - d)];
            }
        out[j] = D[d];
    }
#undef CL
    if (role == ROLE_ROT) {
        double len = sqrt(out[0] * out[0] + out[1] * out[1] + out[2] * out[2] + out[3] * out[3]);
        for (int j = 0; j < 4; j++)
            out[j] /= len;
    }
}

/* ---- the tree ---- */

struct fxa_paths fxa_paths_of(const struct fxa_opts *o)
{
    if (o->remapped) /* members by place: root.TrackGroups is the 11th, and so on */
        return (struct fxa_paths){"_member10", "_member2", "_member1", "_member4",
                                  {"_member3", "_member2", "_member4"}, "_member3", "_member0"};
    return (struct fxa_paths){"TrackGroups", "TransformTracks", "VectorTracks", "TextTracks",
                              {"PositionCurve", "OrientationCurve", "ScaleShearCurve"}, "ValueCurve",
                              o->old_layout ? NULL : "CurveData"};
}

/* The numbers of a CSV text, row by row (header skipped when asked): malloc'd, count in *n. */
static double *numbers(const char *text, bool header, size_t *rows, size_t *per_row)
{
    size_t cap = 64, n = 0;
    double *v = malloc(cap * sizeof *v);
    *rows = 0;
    *per_row = 0;
    const char *p = text;
    if (header)
        p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p);
    while (*p) {
        size_t in_row = 0;
        while (*p && *p != '\n') {
            char *end;
            if (n == cap)
                v = realloc(v, (cap *= 2) * sizeof *v);
            v[n++] = strtod(p, &end);
            assert_true(end != p);
            in_row++;
            p = *end == ',' ? end + 1 : end;
        }
        if (*p == '\n')
            p++;
        if (*rows == 0)
            *per_row = in_row;
        assert_int_equal(in_row, *per_row);
        (*rows)++;
    }
    return v;
}

static void near(double got, double want, double tol, const char *what, size_t row, size_t col)
{
    if (!(fabs(got - want) <= tol * (1 + fabs(want))))
        fail_msg("%s: row %zu, column %zu: %.9g, expected %.9g", what, row, col, got, want);
}

static char *join(const char *a, const char *b)
{
    char *s = malloc(strlen(a) + strlen(b) + 2);
    sprintf(s, "%s/%s", a, b);
    return s;
}

static void expect_curve_files(const struct probe *p, const char *dir, const struct fxa_curve *c)
{
    char *real = probe_resolve(p, dir);
    if (!real)
        fail_msg("%s does not resolve", dir);
    struct ref_curve rc;
    ref_decode(c, &rc);
    char *kpath = join(real, "knots.csv"), *cpath = join(real, "controls.csv");
    size_t rows, per;
    if (rc.kind == REF_SAMPLES) { /* raw samples: no knots, the values as stored */
        char *kerr = join(real, "knots.error");
        ex_holds(p, kerr, "unconfirmed");
        free(kerr);
    } else {
        char *t = ex_read_text(p, kpath);
        double *k = numbers(t, false, &rows, &per);
        assert_int_equal(rows, rc.kind == REF_KNOTS ? rc.n : 0);
        for (size_t i = 0; i < rows; i++) /* the float Granny holds, printed to read back exactly */
            if ((float)k[i] != (float)rc.knots[i])
                fail_msg("%s: knot %zu = %.9g, expected %.9g", kpath, i, k[i], rc.knots[i]);
        free(k);
        free(t);
    }
    char *t = ex_read_text(p, cpath);
    double *v = numbers(t, false, &rows, &per);
    assert_int_equal(rows, rc.kind == REF_IDENTITY ? 0 : rc.n);
    if (rows)
        assert_int_equal(per, rc.dim);
    for (size_t i = 0; i < rows * per; i++)
        near(v[i], rc.ctrl[i], 1e-6, cpath, i / per, i % per);
    free(v);
    free(t);
    free(kpath);
    free(cpath);
    free(real);
}

/* The first animation whose groups include group g (-1: none). */
static int anim_of(const struct fxa_result *r, int g)
{
    for (uint32_t a = 0; a < r->nanims; a++)
        for (uint32_t k = 0; k < r->anim[a].ngroups; k++)
            if (r->anim[a].group[k] == g)
                return (int)a;
    return -1;
}

static size_t sample_count(const struct fxa_anim *an)
{
    double step = an->timestep > 0 ? an->timestep : 1.0 / 30;
    return (size_t)ceil((double)an->duration / step) + 1;
}

static double sample_t(const struct fxa_anim *an, size_t k)
{
    double step = an->timestep > 0 ? an->timestep : 1.0 / 30, t = (double)k * step;
    return (float)(t < an->duration ? t : an->duration);
}

static void expect_track_samples(const struct probe *p, const char *path, const struct fxa_result *r,
                                 const struct fxa_track *tr, const struct fxa_anim *an)
{
    struct ref_curve c[3];
    for (int role = 0; role < 3; role++)
        ref_decode(&r->curve[tr->curve[role]], &c[role]);
    char *t = ex_read_text(p, path);
    assert_memory_equal(t, "t,px,py,pz,qx,qy,qz,qw,s00,s01,s02,s10,s11,s12,s20,s21,s22\n", 58);
    size_t rows, per;
    double *v = numbers(t, true, &rows, &per);
    assert_int_equal(rows, sample_count(an));
    assert_int_equal(per, 17);
    for (size_t k = 0; k < rows; k++) {
        double time = sample_t(an, k), want[17];
        want[0] = time;
        ref_eval(&c[0], ROLE_POS, time, want + 1);
        ref_eval(&c[1], ROLE_ROT, time, want + 4);
        ref_eval(&c[2], ROLE_SS, time, want + 8);
        for (size_t j = 0; j < 17; j++)
            near(v[17 * k + j], want[j], 1e-5, path, k, j);
    }
    free(v);
    free(t);
}

static void expect_vector_samples(const struct probe *p, const char *base, const struct fxa_result *r,
                                  const struct fxa_group *g, uint32_t k, const struct fxa_anim *an)
{
    struct ref_curve c;
    ref_decode(&r->curve[g->vec[k].curve], &c);
    if (c.kind == REF_SAMPLES) {
        char *e = join(base, "samples.error");
        ex_holds(p, e, "unconfirmed");
        free(e);
        return;
    }
    char *path = join(base, "samples.csv"), *t = ex_read_text(p, path);
    assert_memory_equal(t, "t,v0,v1\n", 8);
    size_t rows, per;
    double *v = numbers(t, true, &rows, &per);
    assert_int_equal(rows, sample_count(an));
    for (size_t i = 0; i < rows; i++) {
        double time = sample_t(an, i), want[2];
        ref_eval(&c, ROLE_VEC, time, want);
        near(v[3 * i], time, 1e-7, path, i, 0);
        for (int j = 0; j < 2; j++)
            near(v[3 * i + 1 + (size_t)j], want[j], 1e-5, path, i, (size_t)j + 1);
    }
    free(v);
    free(t);
    free(path);
}

void ex_gr2anim(const struct probe *p, const struct fxa_opts *o, const struct fxa_result *r)
{
    struct fxa_paths names = fxa_paths_of(o);
    enum expect_kind kind;
    uint64_t size;
    assert_int_equal(p->stat(p->ctx, "/granny/animations", &kind, &size), 0);
    assert_int_equal(kind, EX_LINK);
    for (uint32_t g = 0; g < r->ngroups; g++) {
        const struct fxa_group *gr = &r->group[g];
        int a = anim_of(r, (int)g);
        char base[512];
        for (uint32_t k = 0; k < gr->ntracks; k++) {
            snprintf(base, sizeof base, "/granny/root/%s/%u/%s/%u", names.groups, g, names.transform, k);
            for (int role = 0; role < 3; role++) {
                char dir[600];
                snprintf(dir, sizeof dir, "%s/%s%s%s", base, names.curve[role], names.curve_data ? "/" : "",
                         names.curve_data ? names.curve_data : "");
                expect_curve_files(p, dir, &r->curve[gr->track[k].curve[role]]);
            }
            char *path = join(base, a >= 0 ? "samples.csv" : "samples.error");
            if (a >= 0)
                expect_track_samples(p, path, r, &gr->track[k], &r->anim[a]);
            else
                ex_holds(p, path, "in no Animation");
            free(path);
        }
        for (uint32_t k = 0; k < gr->nvec; k++) {
            snprintf(base, sizeof base, "/granny/root/%s/%u/%s/%u", names.groups, g, names.vector, k);
            char dir[600];
            snprintf(dir, sizeof dir, "%s/%s/%s", base, names.value_curve, names.curve_data);
            expect_curve_files(p, dir, &r->curve[gr->vec[k].curve]);
            expect_vector_samples(p, base, r, gr, k, &r->anim[a]);
        }
        if (gr->text_name) {
            snprintf(base, sizeof base, "/granny/root/%s/%u/%s/0/entries.csv", names.groups, g, names.text);
            char want[256] = "t,text\n";
            for (uint32_t e = 0; e < gr->nentries; e++) {
                char crc[32];
                snprintf(crc, sizeof crc, "crc:0x%08x", fxa_crc(gr->entry[e].text));
                const char *x = o->remapped ? crc : gr->entry[e].text;
                size_t len = strlen(want);
                snprintf(want + len, sizeof want - len, "%.9g,", (double)gr->entry[e].t);
                len = strlen(want);
                bool quote = strpbrk(x, ",\"\n") != NULL;
                if (quote)
                    want[len++] = '"';
                for (; *x; x++) {
                    want[len++] = *x;
                    if (*x == '"')
                        want[len++] = '"';
                }
                if (quote)
                    want[len++] = '"';
                want[len++] = '\n';
                want[len] = 0;
            }
            ex_text_is(p, base, want);
        }
    }
}
