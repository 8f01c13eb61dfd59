/* Granny animation curves from the rules (shared/formats/gr2anim.md): the notes' worked
 * numbers (knot scales, a D4n key, a degree-2 curve and its glTF keys), every D4n
 * selector, omitted component, sign and width encoded here and decoded, the evaluator's
 * properties, glTF keys evaluated by the glTF formulas, and linear work. */
#include <inttypes.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "expect_gr2anim.h"
#include "fs/export/export.h"
#include "fs/views/gr2/view_gr2.h"
#include "fs/views/gr2/view_gr2anim_glb.h"
#include "parse/gr2/gr2anim.h"
#include "parse/gr2/gr2model.h"
#include "glbread.h"
#include "fixture_dbpf.h"
#include "fixture_gr2anim.h"
#include "fixture_gr2model.h"
#include "fixture_rig_clear.h"
#include "parse/gr2/gr2curve.h"
#include "parse/base/model.h"
#include "testutil.h"
#include "tree_probe.h"
#include "walk.h"

#define CLOSE(a, b, tol)                                                                                              \
    do {                                                                                                              \
        double a_ = (a), b_ = (b);                                                                                    \
        if (!(fabs(a_ - b_) <= (tol)))                                                                                \
            fail_msg("%s = %.9g, expected %.9g (line %d)", #a, a_, b_, __LINE__);                                   \
    } while (0)

/* ---- the notes' worked numbers ---- */

static void test_knot_scale_trunc(void **state)
{
    (void)state;
    assert_true(gr2_knot_scale_trunc(0x3F80) == 1.0f);
    assert_true(3 / gr2_knot_scale_trunc(0x3F80) == 3.0f);
    /* 0x4755: exponent 2^15, mantissa 1 + 85/128 */
    assert_true(gr2_knot_scale_trunc(0x4755) == 32768.0f * (1 + 85.0f / 128));
    assert_true(gr2_knot_scale_trunc(0x4755) == 54528.0f);
    assert_true(27264 / gr2_knot_scale_trunc(0x4755) == 0.5f);
}

static void test_d4n_worked_key(void **state)
{
    (void)state;
    double q[4];
    gr2_d4n_key(0x0093, 0xD000, 0xE000, 0x2000, 15, q);
    CLOSE(q[0], 0.0883964, 1e-7);
    CLOSE(q[1], 0.1767713, 1e-7);
    CLOSE(q[2], -0.9641983, 1e-7);
    CLOSE(q[3], 0.1768037, 1e-7);
    CLOSE(sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]), 1, 1e-12);
}

/* The selector table of the notes, written out here: entries 0-7, 8-15 negated. */
static void range_of(unsigned e, double *width, double *offset)
{
    const double r = sqrt(2.0);
    static const double w8[8][2] = {{1, -0.5},  {0.5, -0.25},     {0.25, -0.375}, {0.25, -0.125},
                                    {0.25, 0.125}, {0.125, -0.125}, {0.125, -0.0625}, {0.125, 0}};
    double s = e < 8 ? 1 : -1;
    *width = s * w8[e % 8][0] * r;
    *offset = s * w8[e % 8][1] * r;
}

/* Every selector entry, omitted component, sign and width: a quaternion encoded here (its
 * three kept components in the middle of their entry's range), decoded, compared with the
 * decoding rule applied to the stored words and with the original within one step. */
static void test_d4n_every_selector(void **state)
{
    (void)state;
    int checked = 0;
    for (int bits = 7; bits <= 15; bits += 8) {
        uint32_t top = 1u << bits, max = top - 1;
        for (unsigned e = 0; e < 16; e++) {
            for (unsigned omit = 0; omit < 4; omit++) {
                for (int neg = 0; neg < 2; neg++) {
                    /* component c uses entry (e + c) & 15: every entry on every component */
                    uint16_t sel = 0;
                    for (unsigned c = 0; c < 4; c++)
                        sel |= (uint16_t)(((e + c) & 15) << (4 * c));
                    double want[4], sum = 0;
                    uint32_t word[3];
                    for (unsigned s = 0; s < 3; s++) {
                        unsigned c = (omit + 1 + s) & 3;
                        double width, offset;
                        range_of((sel >> (4 * c)) & 15, &width, &offset);
                        double v = offset + width * (0.3 + 0.1 * s); /* inside the range */
                        word[s] = (uint32_t)lround((v - offset) / width * max);
                        want[c] = word[s] * width / max + offset; /* what the word means */
                        assert_true(fabs(want[c] - v) <= fabs(width) / max);
                        sum += want[c] * want[c];
                    }
                    assert_true(sum <= 1);
                    want[omit] = (neg ? -1 : 1) * sqrt(1 - sum);
                    uint32_t a = word[0] | (neg ? top : 0), b = word[1] | ((omit & 2) ? top : 0),
                             c = word[2] | ((omit & 1) ? top : 0);
                    double got[4];
                    gr2_d4n_key(sel, a, b, c, bits, got);
                    for (int k = 0; k < 4; k++)
                        CLOSE(got[k], want[k], 1e-12);
                    checked++;
                }
            }
        }
    }
    assert_int_equal(checked, 2 * 16 * 4 * 2);
    /* a hostile radicand: the omitted component is 0, not NaN */
    double q[4];
    gr2_d4n_key(0x0000, 0x7FFF, 0x7FFF, 0x7FFF, 15, q);
    assert_true(q[0] == 0);
}

/* ---- evaluation ---- */

/* A curve of `dim` values per control, degree d, from arrays (not owned). */
static struct gr2_curve curve_of(int d, uint32_t n, uint32_t dim, double *knots, double *controls)
{
    struct gr2_curve c = {.format = 1, .degree = d, .kind = GR2_CURVE_KNOTS, .n = n, .dim = dim, .dimension = -1,
                          .knots = knots, .controls = controls, .kmax = knots, .sorted = true};
    return c;
}

/* The notes' curve in x of a position: T = (0, 0.01, 1, 2), P = (1, 2, 6, 3). */
static double wk[4] = {0, 0.01f, 1, 2};
static double wp[12] = {1, 0, 0, 2, 0, 0, 6, 0, 0, 3, 0, 0};

static void test_degree2_worked(void **state)
{
    (void)state;
    struct gr2_curve c = curve_of(2, 4, 3, wk, wp);
    double v[3];
    static const double t[4] = {0, 0.5, 2, 1}, want[4] = {1, 14677.0 / 6567, 3, 794.0 / 199};
    for (int i = 0; i < 4; i++) {
        gr2_curve_eval(&c, GR2_ROLE_POSITION, 0, t[i], v, NULL, NULL);
        /* the knot 0.01 is a float here, as Granny holds it: about 1e-9 off the notes' */
        CLOSE(v[0], want[i], 1e-6);
    }
    gr2_curve_eval(&c, GR2_ROLE_POSITION, 0, 0.5, v, NULL, NULL);
    CLOSE(v[0], 2.2349627, 1e-6);
}

static void test_degree2_worked_keys(void **state)
{
    (void)state;
    struct gr2_curve c = curve_of(2, 4, 3, wk, wp);
    struct mdl_keys k;
    char err[200];
    assert_int_equal(gr2_curve_keys(&c, GR2_ROLE_POSITION, 2, &k, NULL, err, sizeof err), 0);
    assert_int_equal(k.interp, MDL_CUBICSPLINE);
    assert_int_equal(k.n, 4);
    static const double want[4][4] = {{0, 0, 1, 0}, {0.01, 2, 1.01, 2}, {1, 4.0201005, 3.9899497, 4.0201005},
                                      {2, -6, 3, 0}};
    for (uint32_t i = 0; i < 4; i++) {
        CLOSE(k.times[i], want[i][0], 1e-7);
        for (int j = 0; j < 3; j++) /* in-tangent, value, out-tangent of x */
            CLOSE(k.values[9 * i + 3 * j], want[i][1 + j], 2e-5);
    }
    mdl_keys_free(&k);
}

static void test_evaluator_properties(void **state)
{
    (void)state;
    /* degree 1 passes through the controls at the knots */
    double k1[4] = {0, 0.3, 0.7, 1.5}, p1[12] = {1, 2, 3, -1, 0, 4, 2, 2, 2, 0.5, -0.5, 9};
    struct gr2_curve c = curve_of(1, 4, 3, k1, p1);
    double v[9];
    for (int i = 0; i < 4; i++) {
        gr2_curve_eval(&c, GR2_ROLE_POSITION, 0, k1[i], v, NULL, NULL);
        for (int j = 0; j < 3; j++)
            CLOSE(v[j], p1[3 * i + j], 1e-12);
    }
    /* degree 2 starts at the first control and ends at the last */
    c = curve_of(2, 4, 3, k1, p1);
    gr2_curve_eval(&c, GR2_ROLE_POSITION, 0, k1[0], v, NULL, NULL);
    for (int j = 0; j < 3; j++)
        CLOSE(v[j], p1[j], 1e-12);
    gr2_curve_eval(&c, GR2_ROLE_POSITION, 0, k1[3], v, NULL, NULL);
    for (int j = 0; j < 3; j++)
        CLOSE(v[j], p1[9 + j], 1e-12);
    /* before the first knot: the value at it */
    double k2[3] = {0.04, 0.5, 1}, p2[3] = {5, 7, 11};
    struct gr2_curve s = curve_of(2, 3, 1, k2, p2);
    gr2_curve_eval(&s, GR2_ROLE_VECTOR, 1, 0, v, NULL, NULL);
    CLOSE(v[0], 5, 1e-12);
    /* degree 0: P[k] on [T[k-1], T[k]) */
    s = curve_of(0, 3, 1, k2, p2);
    static const double t0[5] = {0, 0.04, 0.3, 0.5, 0.99};
    static const double w0[5] = {5, 7, 7, 11, 11};
    for (int i = 0; i < 5; i++) {
        gr2_curve_eval(&s, GR2_ROLE_VECTOR, 1, t0[i], v, NULL, NULL);
        CLOSE(v[0], w0[i], 0);
    }
    /* orientations: per component, then normalised */
    double kq[3] = {0, 1, 2}, pq[12] = {0, 0, 0, 2, 0, 0, 3, 3, 1, 1, 1, 1};
    struct gr2_curve q = curve_of(1, 3, 4, kq, pq);
    gr2_curve_eval(&q, GR2_ROLE_ORIENTATION, 0, 0.5, v, NULL, NULL);
    double raw[4] = {0, 0, 1.5, 2.5}, len = sqrt(1.5 * 1.5 + 2.5 * 2.5);
    for (int j = 0; j < 4; j++)
        CLOSE(v[j], raw[j] / len, 1e-12);
    for (double t = 0; t <= 2; t += 0.125) {
        gr2_curve_eval(&q, GR2_ROLE_ORIENTATION, 0, t, v, NULL, NULL);
        CLOSE(v[0] * v[0] + v[1] * v[1] + v[2] * v[2] + v[3] * v[3], 1, 1e-12);
    }
    /* identity by role, whatever Dimension says (0 included) */
    for (int dim = 0; dim < 10; dim += 3) {
        struct gr2_curve id = {.format = 2, .kind = GR2_CURVE_IDENTITY, .dimension = dim};
        char err[100];
        assert_int_equal(gr2_curve_check(&id, GR2_ROLE_SCALESHEAR, 0, err, sizeof err), 0);
        gr2_curve_eval(&id, GR2_ROLE_POSITION, 0, 0.5, v, NULL, NULL);
        assert_true(v[0] == 0 && v[1] == 0 && v[2] == 0);
        gr2_curve_eval(&id, GR2_ROLE_ORIENTATION, 0, 0.5, v, NULL, NULL);
        assert_true(v[0] == 0 && v[1] == 0 && v[2] == 0 && v[3] == 1);
        gr2_curve_eval(&id, GR2_ROLE_SCALESHEAR, 0, 0.5, v, NULL, NULL);
        for (int j = 0; j < 9; j++)
            assert_true(v[j] == (j % 4 == 0 ? 1 : 0));
    }
    /* one knot: the constant P[0] */
    double k3[1] = {0.7}, p3[3] = {0.1, 0.2, 0.3};
    struct gr2_curve one = curve_of(2, 1, 3, k3, p3);
    gr2_curve_eval(&one, GR2_ROLE_POSITION, 0, 1.9, v, NULL, NULL);
    for (int j = 0; j < 3; j++)
        CLOSE(v[j], p3[j], 0);
}

/* ---- glTF keys against the glTF formulas ---- */

/* The glTF sampler at t: STEP, LINEAR (rotations: slerp), CUBICSPLINE (Hermite with the
 * tangents scaled by the key interval; rotations normalised). */
static void gltf_sample(const struct mdl_keys *k, bool rotation, double t, double *out)
{
    int nc = k->ncomp, per = k->interp == MDL_CUBICSPLINE ? 3 * nc : nc, off = k->interp == MDL_CUBICSPLINE ? nc : 0;
    uint32_t i = 0;
    if (t <= k->times[0] || k->n == 1) {
        for (int j = 0; j < nc; j++)
            out[j] = k->values[off + j];
        return;
    }
    if (t >= k->times[k->n - 1]) {
        for (int j = 0; j < nc; j++)
            out[j] = k->values[(k->n - 1) * per + off + j];
        return;
    }
    while (!(t < k->times[i + 1]))
        i++;
    double t0 = k->times[i], t1 = k->times[i + 1], td = t1 - t0, s = (t - t0) / td;
    const float *a = k->values + i * per, *b = k->values + (i + 1) * per;
    if (k->interp == MDL_STEP) {
        for (int j = 0; j < nc; j++)
            out[j] = a[j];
        return;
    }
    if (k->interp == MDL_LINEAR) {
        double dot = 0;
        for (int j = 0; j < nc; j++)
            dot += a[j] * b[j];
        if (rotation && fabs(dot) < 1 - 1e-12) { /* slerp */
            double th = acos(fabs(dot)), sa = sin((1 - s) * th) / sin(th), sb = sin(s * th) / sin(th);
            for (int j = 0; j < nc; j++)
                out[j] = sa * a[j] + (dot < 0 ? -1 : 1) * sb * b[j];
        } else {
            for (int j = 0; j < nc; j++)
                out[j] = (1 - s) * a[j] + s * b[j];
        }
        return;
    }
    double s2 = s * s, s3 = s2 * s;
    for (int j = 0; j < nc; j++)
        out[j] = (2 * s3 - 3 * s2 + 1) * a[nc + j] + td * (s3 - 2 * s2 + s) * a[2 * nc + j] +
                 (-2 * s3 + 3 * s2) * b[nc + j] + td * (s3 - s2) * b[j];
    if (rotation) {
        double len = sqrt(out[0] * out[0] + out[1] * out[1] + out[2] * out[2] + out[3] * out[3]);
        for (int j = 0; j < 4; j++)
            out[j] /= len;
    }
}

/* Keys of c sampled by glTF at its knots, between them and at Duration equal Granny's
 * evaluation to 1e-5. */
static void expect_exact(const struct gr2_curve *c, enum gr2_role role, double duration)
{
    struct mdl_keys k;
    char err[200];
    if (gr2_curve_keys(c, role, duration, &k, NULL, err, sizeof err))
        fail_msg("keys: %s", err);
    for (uint32_t i = 1; i < k.n; i++)
        assert_true(k.times[i] > k.times[i - 1]);
    assert_true(k.times[0] == 0 && k.times[k.n - 1] == (float)duration);
    int per = k.interp == MDL_CUBICSPLINE ? 3 * k.ncomp : k.ncomp, at = k.interp == MDL_CUBICSPLINE ? k.ncomp : 0;
    for (uint32_t i = 0; role == GR2_ROLE_ORIENTATION && i < k.n; i++) { /* keys are unit quaternions */
        const float *q = k.values + i * (uint32_t)per + at;
        CLOSE(sqrt((double)q[0] * q[0] + (double)q[1] * q[1] + (double)q[2] * q[2] + (double)q[3] * q[3]), 1, 1e-6);
    }
    double g[9] = {0}, want[9] = {0}, p[4] = {0};
    int nc = k.ncomp;
    for (int i = 0; i <= 400; i++) {
        double t = duration * i / 400;
        gltf_sample(&k, role == GR2_ROLE_ORIENTATION, t, p);
        gr2_curve_eval(c, role, 0, t, want, NULL, NULL);
        for (int j = 0; j < nc; j++)
            g[j] = role == GR2_ROLE_SCALESHEAR ? want[4 * j] : want[j];
        for (int j = 0; j < nc; j++)
            if (fabs(p[j] - g[j]) > 1e-5)
                fail_msg("t = %g: component %d: glTF %.9g, Granny %.9g", t, j, p[j], g[j]);
    }
    mdl_keys_free(&k);
}

static void test_keys_exact(void **state)
{
    (void)state;
    struct gr2_curve c = curve_of(2, 4, 3, wk, wp);
    expect_exact(&c, GR2_ROLE_POSITION, 2);
    expect_exact(&c, GR2_ROLE_POSITION, 1.3);  /* knots past Duration */
    expect_exact(&c, GR2_ROLE_POSITION, 2.75); /* Duration past the last knot */
    /* orientation, degree 2 and 1, controls far from unit */
    double kq[5] = {0, 0.01, 0.6, 1.1, 2}, pq[20] = {0, 0, 0, 1, 0.3, 0, 0, 0.9, 0.9, 0.4, 0.1, 0.2,
                                                     -0.2, 0.8, 0.5, 0.3, 0.1, 0.1, 0.9, -0.6};
    c = curve_of(2, 5, 4, kq, pq);
    expect_exact(&c, GR2_ROLE_ORIENTATION, 2);
    c = curve_of(1, 5, 4, kq, pq);
    expect_exact(&c, GR2_ROLE_ORIENTATION, 2);
    /* degree 1 and 0 positions; a double knot (a kink) and a triple knot (a jump) */
    double kd[6] = {0, 0.5, 1, 1, 1, 2}, pd[18] = {0, 0, 0, 1, 2, 3, -1, 0, 1, 4, 4, 4, 2, 0, -2, 1, 1, 1};
    c = curve_of(1, 6, 3, kd, pd);
    expect_exact(&c, GR2_ROLE_POSITION, 2);
    c = curve_of(0, 6, 3, kd, pd);
    expect_exact(&c, GR2_ROLE_POSITION, 2);
    double kk[6] = {0, 0.5, 1, 1, 1.5, 2};
    c = curve_of(2, 6, 3, kk, pd);
    expect_exact(&c, GR2_ROLE_POSITION, 2);
    /* scale/shear: the diagonal */
    double ks[3] = {0, 1, 2}, ps[27] = {1, 0, 0, 0, 2, 0, 0, 0, 3, 2, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0, 5};
    c = curve_of(2, 3, 9, ks, ps);
    expect_exact(&c, GR2_ROLE_SCALESHEAR, 2);
    assert_true(gr2_curve_shear(&c) == 0);
    /* a shear: the keys are the diagonal's (expect_exact compares the diagonal), and
     * gr2_curve_shear says the largest off-diagonal magnitude, whatever its sign */
    ps[1] = 0.5;
    ps[9 + 7] = -0.75;
    expect_exact(&c, GR2_ROLE_SCALESHEAR, 2);
    assert_true(gr2_curve_shear(&c) == 0.75);
    struct mdl_keys k;
    char err[200];
    /* Duration 0: one key */
    c = curve_of(2, 4, 3, wk, wp);
    assert_int_equal(gr2_curve_keys(&c, GR2_ROLE_POSITION, 0, &k, NULL, err, sizeof err), 0);
    assert_int_equal(k.n, 1);
    assert_true(k.values[0] == 1);
    mdl_keys_free(&k);
}

/* Keys of a long curve: work proportional to knots + keys (counted, not timed). */
static void test_keys_linear_work(void **state)
{
    (void)state;
    for (uint32_t n = 1000; n <= 64000; n *= 4) {
        double *t = malloc(n * sizeof *t), *p = malloc(4 * n * sizeof *p);
        for (uint32_t i = 0; i < n; i++) {
            t[i] = (float)(i / 30.0);
            for (int j = 0; j < 4; j++)
                p[4 * i + j] = sin(i * 0.01 + j);
        }
        struct gr2_curve c = curve_of(2, n, 4, t, p);
        struct gr2_work w = {0};
        struct mdl_keys k;
        char err[200];
        assert_int_equal(gr2_curve_keys(&c, GR2_ROLE_ORIENTATION, t[n - 1], &k, &w, err, sizeof err), 0);
        assert_int_equal(k.n, n);
        assert_true(w.seek_steps <= 2 * (uint64_t)n);
        assert_true(w.spans <= 2 * (uint64_t)n);
        /* samples at increasing times through one seek: a step per knot passed */
        struct gr2_seek s = {0};
        struct gr2_work w2 = {0};
        double v[4];
        for (uint32_t i = 0; i < 3 * n; i++)
            gr2_curve_eval(&c, GR2_ROLE_ORIENTATION, 0, t[n - 1] * i / (3 * n), v, &s, &w2);
        assert_true(w2.seek_steps <= (uint64_t)n + 64);
        mdl_keys_free(&k);
        free(t);
        free(p);
    }
}

/* ---- sampled LINEAR keys ---- */

/* How far glTF's value got is from the rules' want: for rotations the angle between them
 * in degrees (sign free), else the largest component difference. */
static double off_by(int role, const double *got, const double *want, int nc)
{
    if (role == FXA_ROT) { /* both made unit; the chord between them as an angle (acos near 1 is too coarse) */
        double lg = 0, lw = 0, dot = 0, chord = 0;
        for (int j = 0; j < 4; j++)
            lg += got[j] * got[j], lw += want[j] * want[j], dot += got[j] * want[j];
        for (int j = 0; j < 4; j++) {
            double d = got[j] / sqrt(lg) - (dot < 0 ? -1 : 1) * want[j] / sqrt(lw);
            chord += d * d;
        }
        return 4 * asin(fmin(1, sqrt(chord) / 2)) * 180 / M_PI;
    }
    double most = 0;
    for (int j = 0; j < nc; j++) {
        double w = role == FXA_SS ? want[4 * j] : want[j];
        most = fmax(most, fabs(got[j] - w));
    }
    return most;
}


/* Linear keys of c on [0, duration] checked by glTF's formulas against the project's own
 * evaluation at 9 points between every two keys and on a grid of 2000: within
 * 0.01 degree (rotations) or 1e-4; a key at every knot inside (0, duration); keys in order.
 * Returns the report. */
static struct gr2_linear expect_linear(const struct gr2_curve *c, enum gr2_role role, double duration)
{
    struct mdl_keys k;
    struct gr2_linear rep = {0};
    struct gr2_work w = {0};
    char err[200];
    if (gr2_curve_linear_keys(c, role, duration, &k, &rep, &w, err, sizeof err))
        fail_msg("linear keys: %s", err);
    assert_true(k.interp != MDL_CUBICSPLINE);
    assert_int_equal(k.n, rep.knot_keys + rep.inserted);
    for (uint32_t i = 1; i < k.n; i++)
        assert_true(k.times[i] > k.times[i - 1]);
    for (uint32_t i = 0; c->kind == GR2_CURVE_KNOTS && i < c->n; i++) {
        bool found = !(c->knots[i] > 0 && c->knots[i] < duration);
        for (uint32_t j = 0; !found && j < k.n; j++)
            found = k.times[j] == (float)c->knots[i];
        if (!found)
            fail_msg("no key at knot %.9g", c->knots[i]);
    }
    /* work, counted: a few evaluations a span (its ends, the exact keys', a piece's three
     * checks) and at most seven a cut (its value; a split makes one more piece than it
     * cuts, each checked three times, and there are no more splits than cuts) */
    if (!(w.spans <= 7 * (uint64_t)(c->n + 2) + 7 * rep.inserted))
        fail_msg("%" PRIu64 " evaluations for %u knots, %" PRIu64 " inserted", w.spans, c->n, rep.inserted);
    int nc = k.ncomp, role_fx = role == GR2_ROLE_ORIENTATION ? FXA_ROT : role == GR2_ROLE_SCALESHEAR ? FXA_SS : FXA_POS;
    double tol = role == GR2_ROLE_ORIENTATION ? 0.01 : 1e-4, worst = 0;
    for (uint32_t i = 0; i + 1 < k.n || i < 2000; i++) {
        /* (not inside a jump's one float step, where glTF goes from the value before it to
         * the value after it: docs/formats/gr2anim.md, "A knot repeated") */
        int parts = i + 1 < k.n ? (k.times[i + 1] - k.times[i] > 1e-6f ? 10 : 1) : 1;
        for (int part = 0; part < parts; part++) {
            double at = i + 1 < k.n ? k.times[i] + (k.times[i + 1] - k.times[i]) * part / 10.0 : duration * i / 1999.0;
            if (i + 1 >= k.n && i >= 2000)
                break;
            double got[4], want[9];
            gltf_sample(&k, role == GR2_ROLE_ORIENTATION, at, got);
            gr2_curve_eval(c, role, 0, at, want, NULL, NULL);
            double off = off_by(role_fx, got, want, nc);
            worst = fmax(worst, off);
            if (!(off <= tol) && rep.capped_spans == 0)
                fail_msg("t = %.9g: linear keys %.9g off the curve (tolerance %g; %u keys)", at, off, tol, k.n);
        }
    }
    if (rep.capped_spans == 0)
        assert_true(rep.max_error <= tol / 2);
    mdl_keys_free(&k);
    return rep;
}

/* Bent curves get keys between knots, as many as their bending needs; a straight one
 * (linear in time: a degree-2 B-spline with controls in arithmetic progression on uniform
 * knots, every span inside, no clamped index) gets the knot keys only. */
static void test_linear_keys(void **state)
{
    (void)state;
    struct gr2_curve c = curve_of(2, 4, 3, wk, wp);
    struct gr2_linear rep = expect_linear(&c, GR2_ROLE_POSITION, 2);
    assert_true(rep.inserted > 0);
    assert_int_equal(rep.capped_spans, 0);
    assert_int_equal(rep.knot_keys, 4);
    /* rotations of degree 2 and 1 (lerp-then-normalise is not a slerp) */
    double kq[5] = {0, 0.01, 0.6, 1.1, 2}, pq[20] = {0, 0, 0, 1, 0.3, 0, 0, 0.9, 0.9, 0.4, 0.1, 0.2,
                                                     -0.2, 0.8, 0.5, 0.3, 0.1, 0.1, 0.9, -0.6};
    c = curve_of(2, 5, 4, kq, pq);
    assert_true(expect_linear(&c, GR2_ROLE_ORIENTATION, 2).inserted > 0);
    c = curve_of(1, 5, 4, kq, pq);
    assert_true(expect_linear(&c, GR2_ROLE_ORIENTATION, 2).inserted > 0);
    /* a kink and a jump, degree 2; degree 1 and 0 positions: the exact LINEAR / STEP keys */
    double kd[6] = {0, 0.5, 1, 1, 1, 2}, pd[18] = {0, 0, 0, 1, 2, 3, -1, 0, 1, 4, 4, 4, 2, 0, -2, 1, 1, 1};
    double kk[6] = {0, 0.5, 1, 1, 1.5, 2};
    c = curve_of(2, 6, 3, kk, pd);
    expect_linear(&c, GR2_ROLE_POSITION, 2);
    c = curve_of(1, 6, 3, kd, pd);
    assert_int_equal(expect_linear(&c, GR2_ROLE_POSITION, 2).inserted, 0);
    c = curve_of(0, 6, 3, kd, pd);
    assert_int_equal(expect_linear(&c, GR2_ROLE_POSITION, 2).inserted, 0);
    /* straight: T_i = (i - 3) / 4, P_i = i (1, 2, -1); Duration 1.5 keeps every span inside */
    double ts[13], cs[39];
    for (int i = 0; i < 13; i++) {
        ts[i] = (i - 3) / 4.0;
        for (int j = 0; j < 3; j++)
            cs[3 * i + j] = i * (j == 0 ? 1 : j == 1 ? 2 : -1);
    }
    c = curve_of(2, 13, 3, ts, cs);
    rep = expect_linear(&c, GR2_ROLE_POSITION, 1.5);
    assert_int_equal(rep.inserted, 0);
    assert_int_equal(rep.knot_keys, 7); /* 0, 0.25, ... 1.5 */
    /* the same knots bent (P_i = i², then 16 i²): more bending, more keys, no more knots */
    uint64_t before = 0;
    for (double amp = 1; amp <= 16; amp *= 16) {
        for (int i = 0; i < 13; i++)
            for (int j = 0; j < 3; j++)
                cs[3 * i + j] = amp * i * i * (j + 1) / 10.0;
        rep = expect_linear(&c, GR2_ROLE_POSITION, 1.5);
        assert_int_equal(rep.knot_keys, 7);
        assert_true(rep.inserted > before);
        before = rep.inserted;
    }
}

/* Bending beyond the bound: at most GR2_LINEAR_MAX_PER_SPAN keys between two knot keys,
 * the spans counted and the error left said. */
static void test_linear_keys_bound(void **state)
{
    (void)state;
    double t[4] = {0, 0.25, 0.75, 1}, p[12] = {0, 0, 0, 1e5, -1e5, 0, -1e5, 1e5, 0, 1e5, 0, 1};
    struct gr2_curve c = curve_of(2, 4, 3, t, p);
    struct mdl_keys k;
    struct gr2_linear rep = {0};
    char err[200];
    assert_int_equal(gr2_curve_linear_keys(&c, GR2_ROLE_POSITION, 1, &k, &rep, NULL, err, sizeof err), 0);
    assert_true(rep.capped_spans > 0);
    assert_true(rep.worst > 1e-4);
    assert_true(rep.inserted <= 3 * (uint64_t)GR2_LINEAR_MAX_PER_SPAN);
    for (uint32_t i = 0, last = 0; i < k.n; i++) /* keys between knot keys */
        if (k.times[i] == 0.25f || k.times[i] == 0.75f || i == k.n - 1) {
            assert_true(i - last - 1 <= GR2_LINEAR_MAX_PER_SPAN);
            last = i;
        }
    mdl_keys_free(&k);
}

/* ---- the tree of the fixture ---- */

/* Fixture o built (what it holds into r) and opened in memory; *file is freed after
 * s3fs_close. */
static struct s3fs *open_fixture(const struct fxa_opts *o, struct fxa_result *r, uint8_t **file)
{
    size_t size;
    *file = fxa_build(o, &size, r);
    return open_mem(*file, size, NULL, o->sig);
}

static const struct fxa_opts variants[] = {
    {.sig = "le32"},
    {.sig = "le64"},
    {.sig = "be32"},
    {.sig = "be64"},
    {.sig = "le32", .bitknit2 = true},
    {.sig = "le64", .remapped = true},
    {.sig = "be32", .remapped = true, .bitknit2 = true},
    {.sig = "le32", .old_layout = true},
    {.sig = "be64", .old_layout = true},
};

static void test_tree_files(void **state)
{
    (void)state;
    for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
        struct fxa_result r;
        uint8_t *file;
        struct s3fs *fs = open_fixture(&variants[v], &r, &file);
        struct probe p = tree_probe(fs);
        ex_gr2anim(&p, &variants[v], &r);
        if (v == 0) { /* curve objects shared between tracks (and roles) are links to one directory */
            enum expect_kind kind;
            uint64_t sz;
            const char *tt = "/granny/root/TrackGroups/0/TransformTracks";
            char path[256];
            snprintf(path, sizeof path, "%s/6/OrientationCurve/CurveData", tt);
            assert_int_equal(p.stat(p.ctx, path, &kind, &sz), 0);
            assert_int_equal(kind, EX_LINK);
            char *real = probe_resolve(&p, path);
            snprintf(path, sizeof path, "%s/0/ScaleShearCurve/CurveData", tt);
            assert_string_equal(real, path);
            free(real);
            real = probe_resolve(&p, "/granny/root/TrackGroups/3/TransformTracks/0/OrientationCurve/CurveData");
            snprintf(path, sizeof path, "%s/0/OrientationCurve/CurveData", tt);
            assert_string_equal(real, path);
            free(real);
        }
        assert_true(walk_all(fs, 1000000) > 0);
        s3fs_close(fs);
        free(file);
    }
}

/* ---- animation.glb ---- */

/* The node a track drives: the bone its name matches, or the one named as it. */
static const char *driven_name(const struct fxa_track *tr, const struct fxa_opts *o, char *crc, size_t crclen)
{
    snprintf(crc, crclen, "crc:0x%08x", fxa_crc(tr->name));
    return o->remapped ? crc : tr->bone ? tr->bone : tr->name;
}

/* The animation of group g: the channels, each checked against the test's evaluation of
 * the stored curve (glTF formulas at the keys, between them and on a fine grid): equal
 * (1e-5) in animation.glb; in animation_linear.glb (linear) LINEAR or STEP samplers
 * within 0.01 degree (rotations) or 1e-4 (translations, scales) at 7 points between every
 * two keys and on a grid of 1000, with a key at every knot inside the animation. */
static void check_channels(const struct glbdoc *d, json_t *anim, const struct fxa_result *r, const struct fxa_group *g,
                           const struct fxa_opts *o, float duration, bool linear, int *checked)
{
    json_t *nodes = json_object_get(d->json, "nodes"), *samplers = json_object_get(anim, "samplers");
    json_t *channels = json_object_get(anim, "channels");
    assert_int_equal(json_array_size(channels), 3 * g->ntracks);
    for (size_t c = 0; c < json_array_size(channels); c++) {
        json_t *ch = json_array_get(channels, c), *target = json_object_get(ch, "target");
        const char *path = json_string_value(json_object_get(target, "path"));
        const char *node = json_string_value(
            json_object_get(json_array_get(nodes, (size_t)json_integer_value(json_object_get(target, "node"))), "name"));
        int role = !strcmp(path, "translation") ? FXA_POS : !strcmp(path, "rotation") ? FXA_ROT : FXA_SS;
        const struct fxa_track *tr = NULL;
        for (uint32_t k = 0; k < g->ntracks; k++) {
            char crc[32];
            if (!strcmp(node, driven_name(&g->track[k], o, crc, sizeof crc)))
                tr = &g->track[k];
        }
        assert_non_null(tr);
        json_t *smp = json_array_get(samplers, (size_t)json_integer_value(json_object_get(ch, "sampler")));
        const char *interp = json_string_value(json_object_get(smp, "interpolation"));
        size_t nt, nv;
        int ct, cv;
        struct mdl_keys k = {.interp = !strcmp(interp, "LINEAR") ? MDL_LINEAR : !strcmp(interp, "STEP") ? MDL_STEP
                                                                                                        : MDL_CUBICSPLINE};
        if (linear && k.interp == MDL_CUBICSPLINE)
            fail_msg("%s %s %s: CUBICSPLINE in animation_linear.glb", g->name, node, path);
        k.times = glb_accessor_floats(d, (size_t)json_integer_value(json_object_get(smp, "input")), &nt, &ct);
        k.values = glb_accessor_floats(d, (size_t)json_integer_value(json_object_get(smp, "output")), &nv, &cv);
        assert_non_null(k.times);
        assert_non_null(k.values);
        k.n = (uint32_t)nt;
        k.ncomp = cv;
        assert_int_equal(cv, role == FXA_ROT ? 4 : 3);
        assert_int_equal(nv, k.interp == MDL_CUBICSPLINE ? 3 * nt : nt);
        if (k.times[nt - 1] != duration)
            fail_msg("%s %s %s: last key %.9g, Duration %.9g", g->name, node, path, (double)k.times[nt - 1], (double)duration);
        struct ref_curve rc;
        ref_decode(&r->curve[tr->curve[role]], &rc);
        for (uint32_t i = 0; linear && rc.kind == REF_KNOTS && rc.n > 1 && i < rc.n; i++) { /* a key at every knot */
            bool found = !(rc.knots[i] > 0 && rc.knots[i] < duration);
            for (size_t j = 0; !found && j < nt; j++)
                found = k.times[j] == (float)rc.knots[i];
            if (!found)
                fail_msg("%s %s %s: no key at knot %.9g", g->name, node, path, rc.knots[i]);
        }
        /* at each key, between it and the next, and on a grid */
        int between = linear ? 8 : 2, grid = linear ? 1000 : 300;
        for (size_t i = 0; i < nt + (duration > 0 ? (size_t)grid : 0); i++) {
            double t = i < nt ? k.times[i] : (i - nt) * (double)duration / (grid - 1);
            for (int part = 0; part < (i < nt && i + 1 < nt ? between : 1); part++) {
                double at = part ? k.times[i] + (k.times[i + 1] - k.times[i]) * (double)part / between : t;
                double got[4], want[9];
                gltf_sample(&k, role == FXA_ROT, at, got);
                ref_eval(&rc, role == FXA_POS ? ROLE_POS : role == FXA_ROT ? ROLE_ROT : ROLE_SS, at, want);
                double off = off_by(role, got, want, cv), tol = !linear ? 1e-5 : role == FXA_ROT ? 0.01 : 1e-4;
                if (!linear) { /* componentwise, as glTF writes them */
                    off = 0;
                    for (int j = 0; j < cv; j++)
                        off = fmax(off, fabs(got[j] - (role == FXA_SS ? want[4 * j] : want[j])));
                }
                if (!(off <= tol))
                    fail_msg("group %s, track %s, %s at %.9g: glTF is %.9g off Granny (tolerance %g)", g->name,
                             tr->name, path, at, off, tol);
                (*checked)++;
            }
        }
        free(k.times);
        free(k.values);
    }
}

/* The glb of animation a (linear: animation_linear.glb): an animation per group with
 * tracks, named as the group. */
static void check_glb_file(struct s3fs *fs, const struct fxa_opts *o, const struct fxa_result *r, uint32_t a,
                           bool linear, struct glbdoc *d, uint8_t **bytes)
{
    char path[128];
    snprintf(path, sizeof path, "/granny/root/%s/%u/%s", o->remapped ? "_member11" : "Animations", a,
             linear ? "animation_linear.glb" : "animation.glb");
    size_t len;
    uint8_t *glb = *bytes = read_path(fs, path, &len); /* d reads its BIN chunk in place */
    assert_int_equal(glb_read(glb, len, d), 0);
    const struct fxa_anim *an = &r->anim[a];
    json_t *anims = json_object_get(d->json, "animations");
    uint32_t want = 0;
    int checked = 0;
    for (uint32_t k = 0; k < an->ngroups; k++) {
        const struct fxa_group *g = &r->group[an->group[k]];
        if (!g->ntracks)
            continue;
        json_t *anim = json_array_get(anims, want++);
        char crc[32];
        snprintf(crc, sizeof crc, "crc:0x%08x", fxa_crc(g->name));
        assert_string_equal(json_string_value(json_object_get(anim, "name")), o->remapped ? crc : g->name);
        check_channels(d, anim, r, g, o, an->duration, linear, &checked);
    }
    assert_int_equal(json_array_size(anims), want);
}

static void check_animation_glb(struct s3fs *fs, const struct fxa_opts *o, const struct fxa_result *r, uint32_t a,
                                struct glbdoc *d, uint8_t **bytes)
{
    check_glb_file(fs, o, r, a, false, d, bytes);
}

static json_t *node_named(const struct glbdoc *d, const char *name)
{
    json_t *nodes = json_object_get(d->json, "nodes");
    for (size_t i = 0; i < json_array_size(nodes); i++)
        if (json_string_value(json_object_get(json_array_get(nodes, i), "name")) &&
            !strcmp(json_string_value(json_object_get(json_array_get(nodes, i), "name")), name))
            return json_array_get(nodes, i);
    return NULL;
}

static void test_animation_glb(void **state)
{
    (void)state;
    for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
        struct fxa_result r;
        uint8_t *file;
        struct s3fs *fs = open_fixture(&variants[v], &r, &file);
        for (uint32_t a = 0; a < r.nanims; a++) {
            struct glbdoc d;
            uint8_t *bytes;
            check_animation_glb(fs, &variants[v], &r, a, &d, &bytes);
            if (!variants[v].remapped && !variants[v].old_layout && a == 0) {
                /* the bones as nodes; arm has no track and keeps its rest pose */
                json_t *arm = node_named(&d, "arm");
                assert_non_null(arm);
                for (int k = 0; k < 3; k++)
                    assert_true((float)glb_num(arm, "translation", (size_t)k) == fxa_bones[9].position[k]);
                for (int k = 0; k < 4; k++)
                    assert_true((float)glb_num(arm, "rotation", (size_t)k) == fxa_bones[9].orientation[k]);
                /* no bone is called lid: prop's track gets a node under a node named prop */
                json_t *prop = node_named(&d, "prop"), *lid = node_named(&d, "lid");
                assert_non_null(prop);
                assert_non_null(lid);
                assert_int_equal(json_array_size(json_object_get(prop, "children")), 1);
            }
            glb_doc_free(&d);
            free(bytes);
        }
        if (!variants[v].remapped && !variants[v].old_layout)
            expect_has(fs, "/info", "animation 0 (walk): track group 'prop': no skeleton has bones named as its 1 tracks");
        s3fs_close(fs);
        free(file);
    }
}

/* animation_linear.glb beside every animation.glb, in every variant: LINEAR (and STEP)
 * samplers within tolerance of the test's own evaluation of the stored curves everywhere
 * (check_channels), the same nodes as animation.glb, the same bytes from another build
 * (another open of the same file); no curve of the
 * fixture reaches the key bound, so /info says nothing of it. */
static void test_linear_glb(void **state)
{
    (void)state;
    for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
        struct fxa_result r;
        uint8_t *file, *file2;
        struct s3fs *fs = open_fixture(&variants[v], &r, &file);
        for (uint32_t a = 0; a < r.nanims; a++) {
            struct glbdoc d, e;
            uint8_t *bytes, *exact;
            check_glb_file(fs, &variants[v], &r, a, true, &d, &bytes);
            check_glb_file(fs, &variants[v], &r, a, false, &e, &exact);
            json_t *ln = json_object_get(d.json, "nodes"), *en = json_object_get(e.json, "nodes");
            assert_int_equal(json_array_size(ln), json_array_size(en));
            for (size_t i = 0; i < json_array_size(ln); i++)
                assert_true(json_equal(json_array_get(ln, i), json_array_get(en, i)));
            char path[128];
            snprintf(path, sizeof path, "/granny/root/%s/%u/animation_linear.glb",
                     variants[v].remapped ? "_member11" : "Animations", a);
            size_t len, len2;
            uint64_t builds = export_builds();
            struct s3fs *fs2 = open_fixture(&variants[v], &r, &file2); /* a build of its own */
            uint8_t *again = read_path(fs2, path, &len2);
            assert_true(export_builds() > builds);
            free(read_path(fs, path, &len));
            assert_int_equal(len, len2);
            assert_memory_equal(again, bytes, len);
            free(again);
            s3fs_close(fs2);
            free(file2);
            glb_doc_free(&d);
            glb_doc_free(&e);
            free(bytes);
            free(exact);
        }
        char *info = (char *)read_path(fs, "/info", NULL);
        assert_null(strstr(info, "reached the bound"));
        free(info);
        s3fs_close(fs);
        free(file);
    }
}

/* A curve bent beyond the key bound (wild: ±1e5 between knots 0.25 s apart): the file is
 * still made, and /info and animation.warnings say how far off it stays and where. */
static void test_linear_bound_info(void **state)
{
    (void)state;
    struct fxa_opts o = {.sig = "le32", .wild = true};
    struct fxa_result r;
    uint8_t *file;
    struct s3fs *fs = open_fixture(&o, &r, &file);
    size_t len;
    uint8_t *glb = read_path(fs, "/granny/root/Animations/1/animation_linear.glb", &len);
    struct glbdoc d;
    assert_int_equal(glb_read(glb, len, &d), 0);
    glb_doc_free(&d);
    free(glb);
    expect_has(fs, "/info", "animation 1 (short): animation_linear.glb: ");
    expect_has(fs, "/info", "spans reached the bound of 256 inserted keys; the largest error left is ");
    expect_has(fs, "/granny/root/Animations/1/animation.warnings",
               "animation_linear.glb: track group 'shortgroup', track 'root': PositionCurve: ");
    s3fs_close(fs);
    free(file);
}

/* Tracks named loosely (loose_names): ROOT (case), "Bip01 hip" (a Biped prefix),
 * "rig|Spine" (a path, case), "Scene:Bip01 HEAD" (a namespace, a prefix, case) play on
 * root, hip, spine and head, each named once in animation.warnings (and /info) with how it
 * matched; ghost matches nothing: listed, and kept as a node of its own under a node named
 * as the group; every channel as the curves say (check_channels, by the bone each drives). */
static void test_loose_names(void **state)
{
    (void)state;
    struct fxa_opts o = {.sig = "be64", .loose_names = true};
    struct fxa_result r;
    uint8_t *file;
    struct s3fs *fs = open_fixture(&o, &r, &file);
    for (int linear = 0; linear < 2; linear++) {
        struct glbdoc d;
        uint8_t *bytes;
        check_glb_file(fs, &o, &r, 0, linear, &d, &bytes);
        /* ghost's node: a child of a node named hero (the group), no bone of that name */
        json_t *nodes = json_object_get(d.json, "nodes");
        size_t ghost = SIZE_MAX, holder = SIZE_MAX;
        for (size_t i = 0; i < json_array_size(nodes); i++) {
            const char *n = json_string_value(json_object_get(json_array_get(nodes, i), "name"));
            if (n && !strcmp(n, "ghost"))
                ghost = i;
            if (n && !strcmp(n, "hero"))
                holder = i;
        }
        assert_true(ghost != SIZE_MAX && holder != SIZE_MAX);
        assert_true(glb_has_child(&d, holder, ghost));
        for (int b = 0; b < FXA_BONES; b++)
            assert_non_null(node_named(&d, fxa_bones[b].name));
        glb_doc_free(&d);
        free(bytes);
    }
    static const char *const lines[] = {
        "track group 'hero', track 'ROOT': plays on bone 0 'root' (matched ignoring case)\n",
        "track group 'hero', track 'Bip01 hip': plays on bone 1 'hip' (matched after dropping prefixes)\n",
        "track group 'hero', track 'rig|Spine': plays on bone 2 'spine' (matched after dropping prefixes)\n",
        "track group 'hero', track 'Scene:Bip01 HEAD': plays on bone 3 'head' (matched after dropping prefixes)\n",
        ("track group 'hero', track 'ghost': no bone of its skeleton matches it: a node of its own under a node "
         "named 'hero'\n")};
    char *warn = (char *)read_path(fs, "/granny/root/Animations/0/animation.warnings", NULL);
    char *info = (char *)read_path(fs, "/info", NULL);
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
        const char *at = strstr(warn, lines[i]);
        if (!at)
            fail_msg("animation.warnings lacks: %s", lines[i]);
        assert_null(strstr(at + 1, lines[i])); /* once */
        char want[300];
        snprintf(want, sizeof want, "animation 0 (walk): %s", lines[i]);
        if (!strstr(info, want))
            fail_msg("/info lacks: %s", want);
    }
    assert_null(strstr(warn, "track 'leg'")); /* exact matches are not named */
    free(warn);
    free(info);
    assert_true(walk_all(fs, 1000000) > 0);
    s3fs_close(fs);
    free(file);
}

/* The bones of animation.glb are a skeleton's: a skin whose joints are the bone nodes in
 * order, rooted at the root bone (listed among the scene's roots), its inverse bind
 * matrices undoing the bones' rest world transforms (the fixture's, composed here), so
 * importers that make armatures only of skins' joints (Blender) make one, bound at rest.
 * The track nodes of a group with no skeleton (prop) are in no skin. */
static void test_animation_glb_skin(void **state)
{
    (void)state;
    struct fxa_result r;
    uint8_t *file;
    struct s3fs *fs = open_fixture(&variants[0], &r, &file);
    size_t len, count;
    int ncomp;
    uint8_t *f = read_path(fs, "/granny/root/Animations/0/animation.glb", &len);
    struct glbdoc d;
    assert_int_equal(glb_read(f, len, &d), 0);
    json_t *skins = json_object_get(d.json, "skins"), *nodes = json_object_get(d.json, "nodes");
    assert_int_equal(json_array_size(skins), 1);
    json_t *skin = json_array_get(skins, 0), *joints = json_object_get(skin, "joints");
    assert_int_equal(json_array_size(joints), FXA_BONES);
    for (int i = 0; i < FXA_BONES; i++) {
        json_t *node = json_array_get(nodes, (size_t)json_integer_value(json_array_get(joints, (size_t)i)));
        assert_string_equal(json_string_value(json_object_get(node, "name")), fxa_bones[i].name);
    }
    json_int_t root = json_integer_value(json_object_get(skin, "skeleton"));
    assert_int_equal(root, json_integer_value(json_array_get(joints, 0)));
    json_t *scene = json_object_get(json_array_get(json_object_get(d.json, "scenes"), 0), "nodes");
    bool listed = false;
    for (size_t i = 0; i < json_array_size(scene); i++)
        listed |= json_integer_value(json_array_get(scene, i)) == root;
    assert_true(listed);
    float *ibm = glb_accessor_floats(&d, (size_t)json_integer_value(json_object_get(skin, "inverseBindMatrices")),
                                     &count, &ncomp);
    assert_non_null(ibm);
    assert_int_equal(count, FXA_BONES);
    assert_int_equal(ncomp, 16);
    float world[FXA_BONES][16];
    static const float unit[3] = {1, 1, 1};
    for (int i = 0; i < FXA_BONES; i++) {
        const struct fxa_bone *x = &fxa_bones[i];
        float local[16], prod[16];
        mdl_trs_matrix(x->position, x->orientation, unit, local);
        if (x->parent < 0)
            memcpy(world[i], local, sizeof local);
        else
            mdl_mat_mul(world[x->parent], local, world[i]); /* parents come first in the fixture */
        mdl_mat_mul(ibm + 16 * i, world[i], prod);
        for (int k = 0; k < 16; k++)
            if (fabsf(prod[k] - (k % 5 == 0 ? 1.0f : 0.0f)) > 1e-6f)
                fail_msg("bone %s: inverse bind x world [%d] = %.9g", x->name, k, (double)prod[k]);
    }
    free(ibm);
    glb_doc_free(&d);
    free(f);
    s3fs_close(fs);
    free(file);
}

/* The notes' degree-2 curve (root's position x) keyed as the notes say. */
static void test_worked_keys_in_glb(void **state)
{
    (void)state;
    struct fxa_opts o = {.sig = "le32"};
    struct fxa_result r;
    size_t len;
    uint8_t *file;
    struct s3fs *fs = open_fixture(&o, &r, &file);
    uint8_t *glb = read_path(fs, "/granny/root/Animations/0/animation.glb", &len);
    struct glbdoc d;
    assert_int_equal(glb_read(glb, len, &d), 0);
    json_t *anim = json_array_get(json_object_get(d.json, "animations"), 0);
    json_t *ch = json_array_get(json_object_get(anim, "channels"), 0); /* root's translation: the first */
    json_t *target = json_object_get(ch, "target");
    assert_string_equal(json_string_value(json_object_get(target, "path")), "translation");
    assert_int_equal(json_integer_value(json_object_get(target, "node")), 0);
    json_t *smp = json_array_get(json_object_get(anim, "samplers"), (size_t)json_integer_value(json_object_get(ch, "sampler")));
    assert_string_equal(json_string_value(json_object_get(smp, "interpolation")), "CUBICSPLINE");
    size_t nt, nv;
    int c;
    float *t = glb_accessor_floats(&d, (size_t)json_integer_value(json_object_get(smp, "input")), &nt, &c);
    float *v = glb_accessor_floats(&d, (size_t)json_integer_value(json_object_get(smp, "output")), &nv, &c);
    static const double want[4][4] = {{0, 0, 1, 0}, {0.01, 2, 1.01, 2}, {1, 4.0201005, 3.9899497, 4.0201005},
                                      {2, -6, 3, 0}};
    assert_int_equal(nt, 4);
    for (size_t i = 0; i < 4; i++) {
        CLOSE(t[i], want[i][0], 1e-7);
        for (int j = 0; j < 3; j++)
            CLOSE(v[9 * i + 3 * (size_t)j], want[i][1 + j], 2e-5);
    }
    free(t);
    free(v);
    glb_doc_free(&d);
    free(glb);
    s3fs_close(fs);
    free(file);
}

/* The number after "largest off-diagonal " in the line of text naming `what` (NAN when
 * there is none). */
static double shear_named(const char *text, const char *what)
{
    const char *line = strstr(text, what), *at = line ? strstr(line, "largest off-diagonal ") : NULL;
    const char *eol = line ? strchr(line, '\n') : NULL;
    if (!at || (eol && at > eol))
        return NAN;
    return strtod(at + strlen("largest off-diagonal "), NULL);
}

/* The largest off-diagonal magnitude of a stored scale/shear curve, by the rules. */
static double ref_shear(const struct fxa_curve *c)
{
    struct ref_curve rc;
    ref_decode(c, &rc);
    double most = 0;
    for (uint32_t i = 0; i < (rc.kind == REF_CONSTANT ? 1 : rc.n); i++)
        for (int k = 0; k < 9; k++)
            if (k % 4 != 0)
                most = fmax(most, fabs(rc.ctrl[9 * i + (uint32_t)k]));
    return most;
}

/* Scale/shears that are not diagonal (foot: a constant, tail: knots whose shear grows):
 * animation.glb is made, their glTF scales the diagonal (check_animation_glb evaluates
 * the stored curves' diagonals), animation.warnings and /info name each track with the
 * largest off-diagonal magnitude dropped; samples.csv keeps the whole matrix. */
static void test_shear_dropped(void **state)
{
    (void)state;
    struct fxa_opts o = {.sig = "be32", .shear = true};
    struct fxa_result r;
    uint8_t *file;
    struct s3fs *fs = open_fixture(&o, &r, &file);
    struct glbdoc d;
    uint8_t *bytes;
    check_animation_glb(fs, &o, &r, 0, &d, &bytes);
    glb_doc_free(&d);
    free(bytes);
    check_glb_file(fs, &o, &r, 0, true, &d, &bytes);
    glb_doc_free(&d);
    free(bytes);
    assert_false(path_exists(fs, "/granny/root/Animations/0/animation.error"));
    char *warn = (char *)read_path(fs, "/granny/root/Animations/0/animation.warnings", NULL);
    const struct fxa_group *hero = &r.group[0];
    assert_string_equal(hero->track[5].name, "foot");
    assert_string_equal(hero->track[6].name, "tail");
    double foot = ref_shear(&r.curve[hero->track[5].curve[FXA_SS]]);
    double tail = ref_shear(&r.curve[hero->track[6].curve[FXA_SS]]);
    assert_true(foot == 0.5);
    assert_true(tail > 0.2); /* 0.05 × 5, quantised */
    CLOSE(shear_named(warn, "track group 'hero', track 'foot': ScaleShearCurve"), foot, 1e-7);
    CLOSE(shear_named(warn, "track group 'hero', track 'tail': ScaleShearCurve"), tail, 1e-6);
    assert_null(strstr(warn, "track 'hip'")); /* diagonal ones are not named */
    free(warn);
    char *info = (char *)read_path(fs, "/info", NULL);
    CLOSE(shear_named(info, "animation 0 (walk): track group 'hero', track 'foot'"), foot, 1e-7);
    CLOSE(shear_named(info, "animation 0 (walk): track group 'hero', track 'tail'"), tail, 1e-6);
    free(info);
    /* pose has no sheared track: no warnings file */
    assert_false(path_exists(fs, "/granny/root/Animations/2/animation.warnings"));
    struct probe p = tree_probe(fs); /* samples.csv of every track: the whole matrix, by the rules */
    ex_gr2anim(&p, &o, &r);
    s3fs_close(fs);
    free(file);
}

/* A rest pose with a shear (root's scale/shear fxm_shear): skeleton.glb and model.glb are
 * made, root's glTF scale the diagonal (1.25, 1, 0.75), its rotation and translation as
 * stored; skeleton.warnings, model.warnings and /info name the bone with 0.5; the
 * inverse bind matrices undo the rest pose as written (ibm × world = I). */
static void test_rest_shear(void **state)
{
    (void)state;
    struct fxm_opts o = {.sig = "le64", .shear_rest = true};
    size_t size;
    uint8_t *file = fxm_build(&o, &size);
    struct s3fs *fs = open_mem(file, size, NULL, o.sig);
    static const char *const dirs[] = {"/granny/root/Skeletons/0/skeleton", "/granny/root/Models/0/model"};
    for (int k = 0; k < 2; k++) {
        char path[128];
        snprintf(path, sizeof path, "%s.glb", dirs[k]);
        size_t len;
        uint8_t *glb = read_path(fs, path, &len);
        struct glbdoc d;
        assert_int_equal(glb_read(glb, len, &d), 0);
        json_t *root = node_named(&d, "root");
        assert_non_null(root);
        assert_null(json_object_get(root, "matrix"));
        for (size_t j = 0; j < 3; j++)
            assert_true((float)glb_num(root, "scale", j) == fxm_shear[4 * j]);
        for (size_t j = 0; j < 4; j++)
            assert_true((float)glb_num(root, "rotation", j) == fxm_bones[0].orientation[j]);
        json_t *skin = json_array_get(json_object_get(d.json, "skins"), 0);
        size_t count;
        int ncomp;
        float *ibm = glb_accessor_floats(&d, (size_t)json_integer_value(json_object_get(skin, "inverseBindMatrices")),
                                         &count, &ncomp);
        float world[16], prod[16];
        float diag[3] = {fxm_shear[0], fxm_shear[4], fxm_shear[8]};
        mdl_trs_matrix(fxm_bones[0].position, fxm_bones[0].orientation, diag, world);
        mdl_mat_mul(ibm, world, prod); /* bone 0 is a root: its world is its rest */
        for (int j = 0; j < 16; j++)
            CLOSE(prod[j], j % 5 == 0 ? 1.0 : 0.0, 1e-6);
        free(ibm);
        glb_doc_free(&d);
        free(glb);
        snprintf(path, sizeof path, "%s.warnings", dirs[k]);
        char *warn = (char *)read_path(fs, path, NULL);
        CLOSE(shear_named(warn, "bone 0 'root': its rest scale/shear has a shear"), 0.5, 1e-7);
        free(warn);
    }
    char *info = (char *)read_path(fs, "/info", NULL);
    CLOSE(shear_named(info, "skeleton.glb: bone 0 'root'"), 0.5, 1e-7);
    CLOSE(shear_named(info, "model.glb: bone 0 'root'"), 0.5, 1e-7);
    free(info);
    assert_true(walk_all(fs, 1000000) > 0);
    s3fs_close(fs);
    free(file);
    /* without the shear: no warnings */
    o.shear_rest = false;
    file = fxm_build(&o, &size);
    fs = open_mem(file, size, NULL, o.sig);
    assert_true(path_exists(fs, "/granny/root/Skeletons/0/skeleton.glb"));
    assert_false(path_exists(fs, "/granny/root/Skeletons/0/skeleton.warnings"));
    assert_false(path_exists(fs, "/granny/root/Models/0/model.warnings"));
    s3fs_close(fs);
    free(file);
}

/* A file in /tmp holding data (its path into path). */
static void temp_file(const void *data, size_t size, char *path, size_t plen)
{
    snprintf(path, plen, "/tmp/s3rig-anim-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, data, size), (ssize_t)size);
    close(fd);
}

static size_t count_animations(struct s3fs *fs, const char *path, json_t **names, uint8_t **bytes, struct glbdoc *d)
{
    size_t len;
    *bytes = read_path(fs, path, &len);
    assert_int_equal(glb_read(*bytes, len, d), 0);
    *names = json_object_get(d->json, "nodes");
    return json_array_size(json_object_get(d->json, "animations"));
}

/* A file without a skeleton: a node per track, and /info says so; -o skeleton= gives one
 * (a Granny file's, a clear or wrapped RIG's, a package's rig resources'); a file without
 * one is refused by name. */
static void test_skeleton_option(void **state)
{
    (void)state;
    struct fxa_opts o = {.sig = "le32", .no_skeleton = true}, with = {.sig = "be64"};
    struct fxa_result r;
    size_t size, ssize;
    uint8_t *file = fxa_build(&o, &size, &r), *sfile = fxa_build(&with, &ssize, &r);
    struct s3fs *fs = open_mem(file, size, NULL, "no skeleton");
    json_t *nodes;
    uint8_t *bytes;
    struct glbdoc d;
    assert_int_equal(count_animations(fs, "/granny/root/Animations/0/animation.glb", &nodes, &bytes, &d), 2);
    assert_non_null(node_named(&d, "hero")); /* the group's node */
    assert_null(node_named(&d, "arm"));      /* no bones */
    assert_int_equal(json_array_size(json_object_get(node_named(&d, "hero"), "children")), 9);
    glb_doc_free(&d);
    free(bytes);
    expect_has(fs, "/info", "track group 'hero': no skeleton has bones named as its 9 tracks: animation.glb has a "
                            "node per track (-o skeleton=FILE gives one)");
    s3fs_close(fs);
    /* -o skeleton=: a Granny file with the bones */
    char spath[64];
    temp_file(sfile, ssize, spath, sizeof spath);
    struct s3fs_opts opts = {0};
    snprintf(opts.skeleton, sizeof opts.skeleton, "%s", spath);
    fs = open_mem(file, size, &opts, "-o skeleton=");
    assert_int_equal(count_animations(fs, "/granny/root/Animations/0/animation.glb", &nodes, &bytes, &d), 2);
    json_t *arm = node_named(&d, "arm");
    assert_non_null(arm);
    assert_true((float)glb_num(arm, "translation", 0) == fxa_bones[9].position[0]);
    assert_null(node_named(&d, "hero"));
    glb_doc_free(&d);
    free(bytes);
    expect_has(fs, "/info", "track group 'hero' plays on the skeleton of -o skeleton=");
    s3fs_close(fs);
    unlink(spath);
    /* a clear RIG is read too (its bones are not these tracks': a node per track still) */
    struct fxc_opts co = fxc_variant(0);
    struct fxc_layout lay;
    uint8_t *rig = fxc_build(&co, &ssize, &lay);
    temp_file(rig, ssize, spath, sizeof spath);
    snprintf(opts.skeleton, sizeof opts.skeleton, "%s", spath);
    fs = open_mem(file, size, &opts, "-o skeleton=RIG");
    assert_int_equal(count_animations(fs, "/granny/root/Animations/0/animation.glb", &nodes, &bytes, &d), 2);
    assert_non_null(node_named(&d, "hero"));
    glb_doc_free(&d);
    free(bytes);
    s3fs_close(fs);
    unlink(spath);
    free(rig);
    /* a wrapped RIG: its Granny file's first skeleton */
    struct fx_rig_layout rl;
    struct fx_gr2_layout gl;
    rig = fx_sample_rig(&ssize, &rl, &gl, NULL);
    temp_file(rig, ssize, spath, sizeof spath);
    snprintf(opts.skeleton, sizeof opts.skeleton, "%s", spath);
    fs = open_mem(file, size, &opts, "-o skeleton=wrapped RIG");
    free(read_path(fs, "/granny/root/Animations/0/animation.glb", NULL));
    s3fs_close(fs);
    unlink(spath);
    free(rig);
    /* a package: its rig resources' skeletons, in order; the group plays on the first that
     * has its tracks' bones (the Granny file after the clear RIG), named by where it lies */
    struct fxc_opts pco = fxc_variant(0);
    size_t csize, gsize;
    uint8_t *clear = fxc_build(&pco, &csize, &lay), *granny = fxa_build(&with, &gsize, &r);
    struct fxp_res res[2] = {{0x8EAF13DE, 0, 1, clear, csize, FXP_ZLIB}, {0x8EAF13DE, 0, 2, granny, gsize, FXP_STORED}};
    struct fxp_layout play;
    uint8_t *pkg = fxp_build(&(struct fxp_opts){.game = 4}, res, 2, &ssize, &play);
    temp_file(pkg, ssize, spath, sizeof spath);
    snprintf(opts.skeleton, sizeof opts.skeleton, "%s", spath);
    fs = open_mem(file, size, &opts, "-o skeleton=PACKAGE");
    assert_int_equal(count_animations(fs, "/granny/root/Animations/0/animation.glb", &nodes, &bytes, &d), 2);
    assert_non_null(node_named(&d, "arm"));
    assert_null(node_named(&d, "hero"));
    glb_doc_free(&d);
    free(bytes);
    char name[256], want[700];
    fxp_expected_name(name, sizeof name, 4, &res[1], NULL, 0);
    snprintf(want, sizeof want, "track group 'hero' plays on the skeleton of -o skeleton=%s at resources/%s\n", spath,
             name);
    expect_has(fs, "/info", want);
    s3fs_close(fs);
    unlink(spath);
    free(pkg);
    free(clear);
    free(granny);
    /* a file that holds no skeleton: the open fails, naming the option */
    struct fxa_opts bare = {.sig = "le32", .no_skeleton = true};
    uint8_t *none = fxa_build(&bare, &ssize, &r);
    temp_file(none, ssize, spath, sizeof spath);
    snprintf(opts.skeleton, sizeof opts.skeleton, "%s", spath);
    struct s3fs *bad;
    char err[512];
    assert_open_refused(s3fs_open_mem(&bad, file, size, &opts, err, sizeof err), S3_ERR_FORMAT, S3_EXIT_FORMAT);
    assert_non_null(strstr(err, "skeleton="));
    assert_non_null(strstr(err, "holds no skeleton"));
    snprintf(opts.skeleton, sizeof opts.skeleton, "/nonexistent/skeleton.gr2");
    assert_open_refused(s3fs_open_mem(&bad, file, size, &opts, err, sizeof err), S3_ERR_NOT_FOUND, S3_EXIT_OPEN);
    assert_non_null(strstr(err, "skeleton=/nonexistent/skeleton.gr2"));
    unlink(spath);
    free(none);
    free(file);
    free(sfile);
}

/* A skeleton with several roots (-o skeleton= the model fixture's: root and arm): the skin
 * of animation.glb is rooted at a node named as the skeleton holding both roots, listed
 * among the scene's roots instead of them, and made after the bones, so the track still
 * drives the bone of its name (pose's one track, hip). */
static void test_animation_glb_skin_roots(void **state)
{
    (void)state;
    struct fxa_opts o = {.sig = "le32", .no_skeleton = true};
    struct fxm_opts mo = {.sig = "le32"};
    struct fxa_result r;
    size_t size, ssize, count;
    int ncomp;
    uint8_t *file = fxa_build(&o, &size, &r), *sfile = fxm_build(&mo, &ssize);
    char spath[64];
    temp_file(sfile, ssize, spath, sizeof spath);
    struct s3fs_opts opts = {0};
    snprintf(opts.skeleton, sizeof opts.skeleton, "%s", spath);
    struct s3fs *fs = open_mem(file, size, &opts, "-o skeleton=model");
    json_t *nodes;
    uint8_t *bytes;
    struct glbdoc d;
    assert_int_equal(count_animations(fs, "/granny/root/Animations/2/animation.glb", &nodes, &bytes, &d), 1);
    json_t *skin = json_array_get(json_object_get(d.json, "skins"), 0);
    assert_non_null(skin);
    json_t *joints = json_object_get(skin, "joints");
    assert_int_equal(json_array_size(joints), FXM_BONES);
    json_int_t top = json_integer_value(json_object_get(skin, "skeleton"));
    json_t *topn = json_array_get(nodes, (size_t)top);
    assert_string_equal(json_string_value(json_object_get(topn, "name")), "fixture_skeleton");
    json_t *kids = json_object_get(topn, "children");
    assert_int_equal(json_array_size(kids), 2);
    for (size_t k = 0; k < 2; k++) {
        json_int_t bone = k ? 3 : 0; /* root and arm: the roots of fxm_bones */
        assert_int_equal(json_integer_value(json_array_get(kids, k)), json_integer_value(json_array_get(joints, (size_t)bone)));
        assert_string_equal(json_string_value(json_object_get(json_array_get(nodes, (size_t)json_integer_value(
                                                                  json_array_get(kids, k))), "name")),
                            fxm_bones[bone].name);
    }
    json_t *scene = json_object_get(json_array_get(json_object_get(d.json, "scenes"), 0), "nodes");
    assert_int_equal(json_array_size(scene), 1);
    assert_int_equal(json_integer_value(json_array_get(scene, 0)), top);
    json_t *ch = json_array_get(json_object_get(json_array_get(json_object_get(d.json, "animations"), 0), "channels"), 0);
    json_int_t target = json_integer_value(json_object_get(json_object_get(ch, "target"), "node"));
    assert_string_equal(json_string_value(json_object_get(json_array_get(nodes, (size_t)target), "name")), "hip");
    float *ibm = glb_accessor_floats(&d, (size_t)json_integer_value(json_object_get(skin, "inverseBindMatrices")),
                                     &count, &ncomp);
    assert_non_null(ibm);
    assert_int_equal(count, FXM_BONES);
    assert_int_equal(ncomp, 16);
    free(ibm);
    glb_doc_free(&d);
    free(bytes);
    s3fs_close(fs);
    unlink(spath);
    free(sfile);
    free(file);
}

/* The real-file cases, one by one: a curve of one knot, an animation without groups,
 * a Duration of 0, knots past Duration. */
static void test_real_file_cases(void **state)
{
    (void)state;
    struct fxa_opts o = {.sig = "le64"};
    struct fxa_result r;
    size_t len;
    uint8_t *file;
    struct s3fs *fs = open_fixture(&o, &r, &file);
    const char *tt = "/granny/root/TrackGroups/0/TransformTracks";
    char path[256];
    /* toe: one knot (0.7 s), so the constant P[0] all along */
    snprintf(path, sizeof path, "%s/8/PositionCurve/CurveData/knots.csv", tt);
    expect_text(fs, path, "0.699999988\n");
    snprintf(path, sizeof path, "%s/8/samples.csv", tt);
    char *t = read_path(fs, path, &len);
    assert_non_null(strstr(t, "\n0,0.100000001,0.200000003,0.300000012,"));
    assert_non_null(strstr(t, "\n2,0.100000001,0.200000003,0.300000012,"));
    free(t);
    /* pose: Duration 0, one sample, one key per channel */
    expect_text(fs, "/granny/root/TrackGroups/3/TransformTracks/0/samples.csv",
                "t,px,py,pz,qx,qy,qz,qw,s00,s01,s02,s10,s11,s12,s20,s21,s22\n"
                "0,0,0,0,2.15798445e-05,2.15798445e-05,2.15798445e-05,1,1,0,0,0,1,0,0,0,1\n");
    uint8_t *glb = read_path(fs, "/granny/root/Animations/2/animation.glb", &len);
    struct glbdoc d;
    assert_int_equal(glb_read(glb, len, &d), 0);
    json_t *accs = json_object_get(d.json, "accessors");
    json_t *smp = json_object_get(json_array_get(json_object_get(d.json, "animations"), 0), "samplers");
    assert_int_equal(json_array_size(smp), 3);
    for (size_t i = 0; i < 3; i++) {
        json_t *in = json_array_get(accs, (size_t)json_integer_value(json_object_get(json_array_get(smp, i), "input")));
        assert_int_equal(json_integer_value(json_object_get(in, "count")), 1);
    }
    glb_doc_free(&d);
    free(glb);
    /* empty: no track groups, so no glTF animation (and no node) */
    glb = read_path(fs, "/granny/root/Animations/3/animation.glb", &len);
    assert_int_equal(glb_read(glb, len, &d), 0);
    assert_null(json_object_get(d.json, "animations"));
    assert_null(json_object_get(d.json, "nodes"));
    glb_doc_free(&d);
    free(glb);
    /* short: Duration 0.5, knots to 1 s: knots.csv has them all, the samples stop at 0.5 */
    expect_text(fs, "/granny/root/TrackGroups/2/TransformTracks/0/PositionCurve/CurveData/knots.csv", "0\n0.25\n0.75\n1\n");
    t = read_path(fs, "/granny/root/TrackGroups/2/TransformTracks/0/samples.csv", &len);
    assert_non_null(strstr(t, "\n0.5,"));
    assert_null(strstr(t, "\n0.53"));
    free(t);
    s3fs_close(fs);
    free(file);
}

/* Hostile Durations and TimeSteps: an .error saying why, never a hang or a huge file. */
static void test_hostile_durations(void **state)
{
    (void)state;
    static const struct {
        float duration, timestep;
        const char *samples, *glb; /* what samples.error and animation.error say (NULL: made) */
    } cases[] = {
        {1e9f, 1.0f / 60, "more than 1000000", NULL},
        {NAN, 1.0f / 60, "not a number of seconds", "Duration"},
        {-1, 1.0f / 60, "not a number of seconds", "Duration"},
        {INFINITY, 0, "not a number of seconds", "Duration"},
        {2, -5, NULL, NULL}, /* TimeStep not positive: 1/30 s */
        {2, NAN, NULL, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct fxa_opts o = {.sig = "le32", .set_duration = true, .duration = cases[i].duration,
                             .timestep = cases[i].timestep};
        struct fxa_result r;
        size_t len;
        uint8_t *file;
        struct s3fs *fs = open_fixture(&o, &r, &file);
        const char *tt = "/granny/root/TrackGroups/0/TransformTracks/0";
        char path[256];
        if (cases[i].samples) {
            snprintf(path, sizeof path, "%s/samples.error", tt);
            expect_has(fs, path, cases[i].samples);
        } else {
            snprintf(path, sizeof path, "%s/samples.csv", tt);
            char *t = read_path(fs, path, &len);
            size_t rows = 0;
            for (char *c = t; *c; c++)
                rows += *c == '\n';
            assert_int_equal(rows, 1 + 61); /* 2 s at 1/30 s, and the header */
            free(t);
        }
        if (cases[i].glb)
            expect_has(fs, "/granny/root/Animations/0/animation.error", cases[i].glb);
        else
            free(read_path(fs, "/granny/root/Animations/0/animation.glb", &len));
        assert_true(walk_all(fs, 1000000) > 0);
        s3fs_close(fs);
        free(file);
    }
}

/* The file's first skeleton (root.Skeletons[0]) played by the file's animations in a
 * builder of the test's own: gr2_anim_into_model's reason. */
static enum s3_err anim_into_skeleton(struct s3fs *fs, char *err, size_t errlen)
{
    struct gr2_view *v = gr2_view_of(fs);
    assert_non_null(v);
    struct gr2_space sp;
    assert_int_equal(gr2_view_pin(v, &sp), S3_OK);
    struct gr2_types reg = {0};
    struct gr2_elem e;
    struct gr2_ref obj;
    struct mdl_skeleton skel;
    gr2_root_array(&reg, &sp, "Skeletons", &e);
    assert_true(gr2_ptr_elem(&sp, &e, 0, &obj));
    assert_int_equal(gr2_skeleton_read(&reg, &sp, e.type, obj, &skel, err, errlen), S3_OK);
    struct glb *g = glb_new_measure();
    int first;
    assert_int_equal(export_bone_nodes(g, &skel, &first, err, errlen), S3_OK);
    enum s3_err rc = gr2_anim_into_model(g, &reg, &sp, &skel, err, errlen);
    if (rc == S3_OK) { /* the animations were added: the builder's file holds them */
        size_t len;
        assert_int_equal(glb_finish(g, NULL, &len, err, errlen), S3_OK);
    }
    glb_free(g);
    mdl_skeleton_free(&skel);
    gr2_types_free(&reg);
    gr2_view_unpin(v, &sp);
    return rc;
}

/* Issue 31: the Granny animation glTF says why it cannot be made. A knot of the hero's
 * root position curve (DaK32fC32f, 4 float knots) set to NaN is a value the format does
 * not allow: the animations cannot be added to a model on that skeleton (FORMAT, naming
 * the knot), animation.error says so, and model.glb is made without them. */
static void test_animation_reasons(void **state)
{
    (void)state;
    struct fxa_opts o = {.sig = "le32"};
    struct fxa_result r;
    size_t size;
    uint8_t *file = fxa_build(&o, &size, &r);
    char err[256];
    struct s3fs *fs = open_mem(file, size, NULL, o.sig);
    assert_int_equal(anim_into_skeleton(fs, err, sizeof err), S3_OK); /* the control */
    s3fs_close(fs);
    /* the root position curve: degree 2, 4 knots (fixture_gr2anim.c), its knots once in the file */
    const struct fxa_curve *c = NULL;
    for (uint32_t i = 0; i < r.ncurves && !c; i++)
        if (r.curve[i].format == 1 && r.curve[i].degree == 2 && r.curve[i].na == 4)
            c = &r.curve[i];
    assert_non_null(c);
    uint8_t *at = memmem(file, size, c->a, 4 * sizeof *c->a);
    assert_non_null(at);
    assert_null(memmem(at + 1, size - (size_t)(at + 1 - file), c->a, 4 * sizeof *c->a));
    const float nan = NAN;
    memcpy(at + sizeof(float), &nan, sizeof nan);
    fs = open_mem(file, size, NULL, o.sig);
    assert_int_equal(anim_into_skeleton(fs, err, sizeof err), S3_ERR_FORMAT);
    assert_non_null(strstr(err, "knot 1 is not a finite number"));
    expect_has(fs, "/granny/root/Animations/0/animation.error", "knot 1 is not a finite number");
    assert_true(path_exists(fs, "/granny/root/Models/0/model.glb"));
    s3fs_close(fs);
    free(file);
}

/* Every cut of the file, and bytes changed at random (a fixed seed): whatever opens is
 * walked whole, every file read (samples.csv and animation.glb made), never a crash. */
static void test_broken_files(void **state)
{
    (void)state;
    struct fxa_opts o = {.sig = "le32"};
    struct fxa_result r;
    size_t size;
    uint8_t *file = fxa_build(&o, &size, &r);
    walk_cuts(file, size, 200, 997, 200000);
    uint8_t *copy = malloc(size);
    uint32_t seed = 12345;
    for (int i = 0; i < 150; i++) {
        memcpy(copy, file, size);
        for (int k = 0; k < 6; k++) {
            seed = seed * 1103515245u + 12345u;
            size_t at = 0x80 + (seed >> 8) % (size - 0x80);
            seed = seed * 1103515245u + 12345u;
            copy[at] ^= (uint8_t)(1u << ((seed >> 16) % 8));
        }
        struct s3fs *fs;
        char err[256];
        if (s3fs_open_mem(&fs, copy, size, NULL, err, sizeof err) == 0) {
            walk_all(fs, 200000);
            s3fs_close(fs);
        }
    }
    free(copy);
    free(file);
}

/* The MIT suzanne files: one track group of one track, every curve an identity. What the
 * tree shows of the animation (Duration, TimeStep, names) against samples.csv and
 * animation.glb. */
static void check_suzanne(const char *dir, const char *name)
{
    size_t size, len;
    uint8_t *file = slurp_vector(dir, "gr2", name, &size);
    assert_non_null(file);
    struct s3fs *fs = open_mem(file, size, NULL, name);
    struct probe p = tree_probe(fs);
    char *real = probe_resolve(&p, "/granny/animations/0");
    assert_non_null(real);
    char path[512];
    snprintf(path, sizeof path, "%s/Duration", real);
    char *v = read_path(fs, path, NULL);
    float duration = strtof(v, NULL);
    free(v);
    snprintf(path, sizeof path, "%s/TimeStep", real);
    v = read_path(fs, path, NULL);
    float step = strtof(v, NULL);
    free(v);
    assert_true(duration > 0 && step > 0);
    char *track = probe_resolve(&p, "/granny/animations/0/TrackGroups/0/TransformTracks/0");
    assert_non_null(track);
    static const char *const curves[3] = {"PositionCurve", "OrientationCurve", "ScaleShearCurve"};
    for (int c = 0; c < 3; c++) { /* identities: no knots, no controls */
        snprintf(path, sizeof path, "%s/%s/CurveData", track, curves[c]);
        char *cd = probe_resolve(&p, path), sub[600];
        snprintf(sub, sizeof sub, "%s/knots.csv", cd);
        expect_text(fs, sub, "");
        snprintf(sub, sizeof sub, "%s/controls.csv", cd);
        expect_text(fs, sub, "");
        free(cd);
    }
    snprintf(path, sizeof path, "%s/samples.csv", track);
    char *t = read_path(fs, path, &len);
    size_t rows = 0;
    for (char *c = strchr(t, '\n') + 1; *c; c = strchr(c, '\n') + 1, rows++) {
        double time = (float)fmin((double)rows * step, duration);
        char want[200];
        snprintf(want, sizeof want, "%.9g,0,0,0,0,0,0,1,1,0,0,0,1,0,0,0,1\n", time);
        assert_memory_equal(c, want, strlen(want));
    }
    assert_int_equal(rows, (size_t)ceil((double)duration / step) + 1);
    free(t);
    /* animation.glb: the track plays on the skeleton's bone of its name */
    snprintf(path, sizeof path, "%s/Name", track);
    char *tname = read_path(fs, path, NULL);
    tname[strcspn(tname, "\n")] = 0;
    snprintf(path, sizeof path, "%s/animation.glb", real);
    uint8_t *glb = read_path(fs, path, &len);
    struct glbdoc d;
    assert_int_equal(glb_read(glb, len, &d), 0);
    json_t *anim = json_array_get(json_object_get(d.json, "animations"), 0);
    assert_int_equal(json_array_size(json_object_get(d.json, "animations")), 1);
    snprintf(path, sizeof path, "%s/TrackGroups/0/Name", real);
    char *gpath = probe_resolve(&p, path), *gname = read_path(fs, gpath, NULL);
    free(gpath);
    gname[strcspn(gname, "\n")] = 0;
    assert_string_equal(json_string_value(json_object_get(anim, "name")), gname);
    json_t *chs = json_object_get(anim, "channels");
    assert_int_equal(json_array_size(chs), 3);
    json_t *node = json_array_get(json_object_get(d.json, "nodes"),
                                  (size_t)json_integer_value(json_object_get(json_object_get(json_array_get(chs, 0),
                                                                                             "target"), "node")));
    assert_string_equal(json_string_value(json_object_get(node, "name")), tname);
    for (size_t c = 0; c < 3; c++) { /* two keys, 0 and Duration, the identity */
        json_t *smp = json_array_get(json_object_get(anim, "samplers"), c);
        size_t n;
        int nc;
        float *tv = glb_accessor_floats(&d, (size_t)json_integer_value(json_object_get(smp, "input")), &n, &nc);
        float *vv = glb_accessor_floats(&d, (size_t)json_integer_value(json_object_get(smp, "output")), &n, &nc);
        assert_int_equal(n, 2);
        assert_true(tv[0] == 0 && tv[1] == duration);
        for (int j = 0; j < nc; j++)
            assert_true(vv[j] == (c == 1 ? (j == 3) : c == 2 ? 1 : 0) && vv[nc + j] == vv[j]);
        free(tv);
        free(vv);
    }
    glb_doc_free(&d);
    free(glb);
    free(gname);
    free(tname);
    free(track);
    free(real);
    assert_true(walk_all(fs, 1000000) > 0);
    s3fs_close(fs);
    free(file);
}

static void test_vectors(void **state)
{
    (void)state;
    each_gr2_vector(check_suzanne);
}

/* model.glb carries the animations that play on its skeleton (named ANIMATION/GROUP when
 * the animation has several groups), keyed as animation.glb keys them. */
static void test_model_glb_animations(void **state)
{
    (void)state;
    struct fxa_opts o = {.sig = "be32"};
    struct fxa_result r;
    size_t lm, la;
    uint8_t *file;
    struct s3fs *fs = open_fixture(&o, &r, &file);
    uint8_t *mb = read_path(fs, "/granny/root/Models/0/model.glb", &lm);
    uint8_t *ab = read_path(fs, "/granny/root/Animations/0/animation.glb", &la);
    struct glbdoc m, a;
    assert_int_equal(glb_read(mb, lm, &m), 0);
    assert_int_equal(glb_read(ab, la, &a), 0);
    json_t *anims = json_object_get(m.json, "animations");
    static const char *const want[] = {"walk/hero", "short/hero", "short/shortgroup", "pose"}; /* not prop: no bone lid */
    assert_int_equal(json_array_size(anims), 4);
    for (size_t i = 0; i < 4; i++)
        assert_string_equal(json_string_value(json_object_get(json_array_get(anims, i), "name")), want[i]);
    /* walk/hero in model.glb and hero in animation.glb: the same nodes (bones 0..9 first in
     * both) and the same keys */
    json_t *mh = json_array_get(anims, 0), *ah = json_array_get(json_object_get(a.json, "animations"), 0);
    json_t *mc = json_object_get(mh, "channels"), *ac = json_object_get(ah, "channels");
    assert_int_equal(json_array_size(mc), json_array_size(ac));
    for (size_t c = 0; c < json_array_size(mc); c++) {
        json_t *x = json_array_get(mc, c), *y = json_array_get(ac, c);
        assert_true(json_equal(json_object_get(x, "target"), json_object_get(y, "target")));
        json_t *sx = json_array_get(json_object_get(mh, "samplers"), (size_t)json_integer_value(json_object_get(x, "sampler")));
        json_t *sy = json_array_get(json_object_get(ah, "samplers"), (size_t)json_integer_value(json_object_get(y, "sampler")));
        for (int io = 0; io < 2; io++) {
            const char *k = io ? "output" : "input";
            size_t nx, ny;
            int cx, cy;
            float *fx = glb_accessor_floats(&m, (size_t)json_integer_value(json_object_get(sx, k)), &nx, &cx);
            float *fy = glb_accessor_floats(&a, (size_t)json_integer_value(json_object_get(sy, k)), &ny, &cy);
            assert_int_equal(nx * (size_t)cx, ny * (size_t)cy);
            assert_memory_equal(fx, fy, nx * (size_t)cx * sizeof *fx);
            free(fx);
            free(fy);
        }
    }
    glb_doc_free(&m);
    glb_doc_free(&a);
    free(mb);
    free(ab);
    s3fs_close(fs);
    free(file);
}

/* Rest orientations stored off unit (root's w one float step above 1, head's doubled) are
 * normalised in animation.glb's and model.glb's bone nodes, as in skeleton.glb; the
 * animation keys stay exact. */
static void test_rough_rest_orientations(void **state)
{
    (void)state;
    struct fxa_opts o = {.sig = "le32", .rough_orientations = true};
    struct fxa_result r;
    uint8_t *file;
    struct s3fs *fs = open_fixture(&o, &r, &file);
    static const char *const paths[] = {"/granny/root/Animations/0/animation.glb", "/granny/root/Models/0/model.glb"};
    static const char *const bones[] = {"root", "head"};
    for (size_t p = 0; p < 2; p++) {
        struct glbdoc d;
        uint8_t *bytes;
        size_t len;
        if (p == 0) {
            check_animation_glb(fs, &o, &r, 0, &d, &bytes); /* the keys as the curves say */
        } else {
            bytes = read_path(fs, paths[p], &len);
            assert_int_equal(glb_read(bytes, len, &d), 0);
        }
        for (size_t b = 0; b < 2; b++) {
            json_t *n = node_named(&d, bones[b]);
            char why[128];
            assert_non_null(n);
            if (!glb_rotation_normalised(n, fxm_rough_orientation[b], why, sizeof why))
                fail_msg("%s %s: %s", paths[p], bones[b], why);
        }
        assert_true(glb_num(node_named(&d, "root"), "rotation", 3) == 1.0);
        glb_doc_free(&d);
        free(bytes);
    }
    s3fs_close(fs);
    free(file);
}

/* ---- parallel readers ---- */

struct par {
    struct s3fs *fs;
    char **paths;
    uint8_t **want;
    size_t *len, n;
    int start;
};

/* Reads every path (from a different one in each thread, in 4 KiB pieces) and compares. */
static void *par_reader(void *arg)
{
    struct par *a = arg;
    uint8_t *buf = malloc(1 << 22);
    for (size_t k = 0; k < a->n; k++) {
        size_t i = (k + (size_t)a->start) % a->n;
        uint32_t ino;
        if (tree_resolve(a->fs->tree, a->paths[i], &ino) || tree_size(a->fs->tree, ino) != a->len[i])
            return a->paths[i];
        size_t got = 0;
        while (got < a->len[i]) {
            size_t r = 0;
            if (tree_read(a->fs->tree, ino, got, buf + got, 4096, &r) || r == 0)
                return a->paths[i];
            got += r;
        }
        if (memcmp(buf, a->want[i], got) != 0)
            return a->paths[i];
    }
    free(buf);
    return NULL;
}

/* The animation files read by four threads at once on a fresh tree (directories populated
 * and exports built while others read): the bytes one thread reads alone. What
 * scripts/tsan.sh gr2anim checks for races. */
static void test_parallel_readers(void **state)
{
    (void)state;
    struct fxa_opts o = {.sig = "le64", .bitknit2 = true};
    struct fxa_result r;
    uint8_t *file;
    struct s3fs *fs = open_fixture(&o, &r, &file);
    struct probe p = tree_probe(fs);
    struct par a = {0};
    a.paths = calloc(64, sizeof *a.paths);
    a.want = calloc(64, sizeof *a.want);
    a.len = calloc(64, sizeof *a.len);
    for (uint32_t an = 0; an < r.nanims; an++) {
        char path[128];
        snprintf(path, sizeof path, "/granny/root/Animations/%u/animation.glb", an);
        a.paths[a.n++] = strdup(path);
    }
    for (uint32_t k = 0; k < r.group[0].ntracks; k++) {
        char path[160];
        snprintf(path, sizeof path, "/granny/root/TrackGroups/0/TransformTracks/%u/samples.csv", k);
        a.paths[a.n++] = strdup(path);
        snprintf(path, sizeof path, "/granny/root/TrackGroups/0/TransformTracks/%u/OrientationCurve/CurveData", k);
        char *real = probe_resolve(&p, path), full[300];
        snprintf(full, sizeof full, "%s/controls.csv", real);
        a.paths[a.n++] = strdup(full);
        free(real);
    }
    a.paths[a.n++] = strdup("/granny/root/Models/0/model.glb");
    for (size_t i = 0; i < a.n; i++)
        a.want[i] = read_path(fs, a.paths[i], &a.len[i]);
    s3fs_close(fs);
    size_t size;
    free(file);
    file = fxa_build(&o, &size, &r);
    a.fs = open_mem(file, size, NULL, "parallel");
    pthread_t th[4];
    struct par each[4];
    for (int i = 0; i < 4; i++) {
        each[i] = a;
        each[i].start = 7 * i;
        assert_int_equal(pthread_create(&th[i], NULL, par_reader, &each[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        void *bad;
        pthread_join(th[i], &bad);
        if (bad)
            fail_msg("thread %d: %s differs", i, (char *)bad);
    }
    s3fs_close(a.fs);
    for (size_t i = 0; i < a.n; i++) {
        free(a.paths[i]);
        free(a.want[i]);
    }
    free(a.paths);
    free(a.want);
    free(a.len);
    free(file);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_knot_scale_trunc),     cmocka_unit_test(test_d4n_worked_key),
        cmocka_unit_test(test_d4n_every_selector),   cmocka_unit_test(test_degree2_worked),
        cmocka_unit_test(test_degree2_worked_keys),  cmocka_unit_test(test_evaluator_properties),
        cmocka_unit_test(test_keys_exact),           cmocka_unit_test(test_keys_linear_work),
        cmocka_unit_test(test_linear_keys),          cmocka_unit_test(test_linear_keys_bound),
        cmocka_unit_test(test_tree_files),           cmocka_unit_test(test_animation_glb),
        cmocka_unit_test(test_animation_glb_skin),  cmocka_unit_test(test_animation_glb_skin_roots),
        cmocka_unit_test(test_worked_keys_in_glb),   cmocka_unit_test(test_shear_dropped),      cmocka_unit_test(test_rest_shear),
        cmocka_unit_test(test_linear_glb),           cmocka_unit_test(test_linear_bound_info),
        cmocka_unit_test(test_loose_names),
        cmocka_unit_test(test_skeleton_option),      cmocka_unit_test(test_real_file_cases),
        cmocka_unit_test(test_hostile_durations),    cmocka_unit_test(test_broken_files),
        cmocka_unit_test(test_vectors),              cmocka_unit_test(test_model_glb_animations),
        cmocka_unit_test(test_animation_reasons),
        cmocka_unit_test(test_rough_rest_orientations),
        cmocka_unit_test(test_parallel_readers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
