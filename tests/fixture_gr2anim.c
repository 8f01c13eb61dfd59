#include "fixture_gr2anim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "fixture.h"
#include "fixture_gr2model.h"
#include "fixture_gw.h"

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

const struct fxa_bone fxa_bones[FXA_BONES] = {
    {"root", -1, {0, 0, 0}, {0, 0, 0, 1}},     {"hip", 0, {0, 1, 0}, {0, 0, 0, 1}},
    {"spine", 1, {0, 0.5f, 0}, {0, 0, 0, 1}},  {"head", 2, {0, 0.5f, 0.1f}, {0, 0.6f, 0, 0.8f}},
    {"leg", 1, {0.2f, -0.5f, 0}, {0, 0, 0, 1}}, {"foot", 4, {0, -0.5f, 0}, {0, 0, 0, 1}},
    {"tail", 1, {0, 0, -0.3f}, {0, 0, 0, 1}},  {"ear", 3, {0.1f, 0.1f, 0}, {0, 0, 0, 1}},
    {"toe", 5, {0, 0, 0.1f}, {0, 0, 0, 1}},    {"arm", 2, {0.3f, 0, 0}, {0, 0, 0.6f, 0.8f}},
};

uint32_t fxa_crc(const char *text)
{
    return (uint32_t)crc32(0, (const Bytef *)text, (uInt)strlen(text));
}

/* ---- encoding curves from the rules (shared/formats/gr2anim.md) ---- */

static int add(struct fxa_result *r, const struct fxa_curve *c)
{
    r->curve[r->ncurves] = *c;
    return (int)r->ncurves++;
}

/* DaK32fC32f (or the old inline layout): knots and controls as they are. */
static int c_dak32(struct fxa_result *r, int format, int degree, uint32_t n, const float *knots, uint32_t dim,
                   const float *ctrl)
{
    struct fxa_curve c = {.format = format, .degree = degree, .na = n, .nb = n * dim};
    memcpy(c.a, knots, n * sizeof *knots);
    memcpy(c.b, ctrl, n * dim * sizeof *ctrl);
    return add(r, &c);
}

static int c_identity(struct fxa_result *r, int16_t dimension)
{
    struct fxa_curve c = {.format = 2, .h16 = (uint16_t)dimension};
    return add(r, &c);
}

static int c_const(struct fxa_result *r, int format, uint32_t n, const float *v)
{
    struct fxa_curve c = {.format = format};
    if (format == 3) {
        c.na = n;
        memcpy(c.a, v, n * sizeof *v);
    } else {
        memcpy(c.s, v, n * sizeof *v);
    }
    return add(r, &c);
}

/* A stored word for value v on scale s, offset o: round((v - o) / s) within 0..max. */
static uint16_t quantise(double v, double s, double o, uint32_t max)
{
    double q = s != 0 ? round((v - o) / s) : 0;
    return (uint16_t)(q < 0 ? 0 : q > max ? max : q);
}

/* Scale and offset that spread values lo..hi over 0..max. */
static void scale_for(const float *v, uint32_t n, uint32_t stride, uint32_t max, float *s, float *o)
{
    float lo = v[0], hi = v[0];
    for (uint32_t i = 0; i < n; i++) {
        lo = fminf(lo, v[i * stride]);
        hi = fmaxf(hi, v[i * stride]);
    }
    *o = lo;
    *s = (hi - lo) / (float)max;
}

/* DaK16uC16u / DaK8uC8u: ControlScaleOffsets per dimension, N knot words, N keys. */
static int c_da_quant(struct fxa_result *r, int format, int degree, uint16_t trunc, uint32_t n, const uint16_t *kw,
                      uint32_t dim, const float *v)
{
    uint32_t max = format == 6 ? 65535 : 255;
    struct fxa_curve c = {.format = format, .degree = degree, .h16 = trunc, .na = 2 * dim, .nw = n * (dim + 1)};
    for (uint32_t j = 0; j < dim; j++)
        scale_for(v + j, n, dim, max, &c.a[j], &c.a[dim + j]);
    memcpy(c.w, kw, n * sizeof *kw);
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < dim; j++)
            c.w[n + i * dim + j] = quantise(v[i * dim + j], c.a[j], c.a[dim + j], max);
    return add(r, &c);
}

static void d4n_range(unsigned e, double *width, double *offset)
{
    const double r = sqrt(2.0);
    static const double wt[8] = {1, 0.5, 0.25, 0.25, 0.25, 0.125, 0.125, 0.125};
    static const double ot[8] = {-0.5, -0.25, -0.375, -0.125, 0.125, -0.125, -0.0625, 0};
    double sign = e >= 8 ? -1 : 1;
    *width = sign * wt[e & 7] * r;
    *offset = sign * ot[e & 7] * r;
}

/* D4n: the largest component is left out (its sign in a's top bit, its index in b's and
 * c's), the other three quantised on their selector's range. */
static void d4n_encode(const float *q, uint16_t sel, int bits, uint16_t out[3])
{
    int big = 0;
    for (int k = 1; k < 4; k++)
        if (fabsf(q[k]) > fabsf(q[big]))
            big = k;
    uint32_t top = 1u << bits, max = top - 1;
    for (int s = 0; s < 3; s++) {
        int comp = (big + 1 + s) & 3;
        double width, offset;
        d4n_range((sel >> (4 * comp)) & 15, &width, &offset);
        out[s] = quantise(q[comp], width / max, offset, max);
    }
    out[0] |= q[big] < 0 ? top : 0;
    out[1] |= (big & 2) ? top : 0;
    out[2] |= (big & 1) ? top : 0;
}

static int c_d4n(struct fxa_result *r, int format, int degree, float scale, uint16_t sel, uint32_t n,
                 const uint16_t *kw, const float *quats)
{
    struct fxa_curve c = {.format = format, .degree = degree, .h16 = sel, .f1 = scale, .nw = 4 * n};
    memcpy(c.w, kw, n * sizeof *kw);
    for (uint32_t i = 0; i < n; i++)
        d4n_encode(quats + 4 * i, sel, format == 8 ? 15 : 7, c.w + n + 3 * i);
    return add(r, &c);
}

/* Formats 10-18 but 12, 14, 16: per key 3 words (D3, D9I3) or 1 (D3I1), on scales s, o. */
static int c_scaled(struct fxa_result *r, int format, int degree, uint16_t trunc, uint32_t n, const uint16_t *kw,
                    const float *v, uint32_t per, const float *s, const float *o)
{
    uint32_t max = (format == 10 || format == 13 || format == 17) ? 65535 : 255;
    struct fxa_curve c = {.format = format, .degree = degree, .h16 = trunc, .nw = n * (per + 1)};
    memcpy(c.w, kw, n * sizeof *kw);
    for (uint32_t j = 0; j < 3; j++) {
        if (s)
            c.s[j] = s[j], c.o[j] = o[j];
        else
            scale_for(v + j, n, 3, max, &c.s[j], &c.o[j]);
    }
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < per; j++) /* D3I1: v holds the stored words themselves */
            c.w[n + i * per + j] = per == 1 ? (uint16_t)v[i] : quantise(v[i * 3 + j], c.s[j], c.o[j], max);
    return add(r, &c);
}

/* D9I1K16uC16u / D9I1K8uC8u: one value per key, scale and offset one each. */
static int c_d9i1(struct fxa_result *r, int format, int degree, uint16_t trunc, uint32_t n, const uint16_t *kw,
                  const float *v)
{
    uint32_t max = format == 12 ? 65535 : 255;
    struct fxa_curve c = {.format = format, .degree = degree, .h16 = trunc, .nw = 2 * n};
    scale_for(v, n, 1, max, &c.f1, &c.f2);
    memcpy(c.w, kw, n * sizeof *kw);
    for (uint32_t i = 0; i < n; i++)
        c.w[n + i] = quantise(v[i], c.f1, c.f2, max);
    return add(r, &c);
}

/* The curves of the fixture, encoded; track and group tables refer to them. */
#define NK 6
static const uint16_t k16[NK] = {0, 1, 30, 60, 90, 120}; /* trunc 0x4270: 60 words a second */
static const uint16_t k8[NK] = {0, 1, 15, 30, 45, 60};   /* trunc 0x41F0: 30 */
#define T60 0x4270
#define T30 0x41F0

static void axis_angle(float *q, double x, double y, double z, double a)
{
    double len = sqrt(x * x + y * y + z * z), s = sin(a / 2);
    q[0] = (float)(x / len * s);
    q[1] = (float)(y / len * s);
    q[2] = (float)(z / len * s);
    q[3] = (float)cos(a / 2);
}

struct curves {
    int ident, root_pos, root_rot, hip_pos, hip_rot, hip_ss, spine_pos, spine_rot, spine_ss, head_pos, head_rot,
        head_ss, leg_pos, leg_rot, leg_ss, foot_pos, foot_rot, foot_ss, tail_pos, tail_ss, ear_pos, ear_rot, toe_pos,
        lid_pos, blend, raw, short_pos;
};

static void make_curves(struct fxa_result *r, const struct fxa_opts *o, struct curves *c)
{
    float v[4 * NK], q[4 * NK];
    c->ident = c_identity(r, 0);
    /* the notes' degree-2 curve in x */
    static const float kx[4] = {0, 0.01f, 1, 2};
    static const float px[12] = {1, 0, 0, 2, 0.5f, -1, 6, 1, 0, 3, 0, 2};
    c->root_pos = c_dak32(r, 1, 2, 4, kx, 3, px);
    for (int i = 0; i < NK; i++)
        axis_angle(q + 4 * i, 1, 2, 3, 0.3 * i);
    c->root_rot = c_d4n(r, 8, 2, 60.0f, 0x0000, NK, k16, q);
    for (int i = 0; i < NK; i++) {
        v[3 * i] = 0.1f * (float)i;
        v[3 * i + 1] = 0.5f * (float)sin(i);
        v[3 * i + 2] = 1 - 0.2f * (float)i;
    }
    c->hip_pos = c_scaled(r, 10, 2, T60, NK, k16, v, 3, NULL, NULL);
    for (int i = 0; i < NK; i++)
        axis_angle(q + 4 * i, 1, 0, 0, 0.5 * i);
    c->hip_rot = c_d4n(r, 9, 2, 30.0f, 0x0B30, NK, k8, q);
    for (int i = 0; i < NK; i++)
        v[i] = 1 + 0.1f * (float)i;
    c->hip_ss = c_d9i1(r, 12, 1, T60, NK, k16, v);
    for (int i = 0; i < NK; i++) {
        v[3 * i] = 0.05f * (float)i;
        v[3 * i + 1] = 0.1f;
        v[3 * i + 2] = -0.1f * (float)i;
    }
    c->spine_pos = c_scaled(r, 11, 1, T30, NK, k8, v, 3, NULL, NULL);
    static const float ks[4] = {0, 0.5f, 1, 2};
    for (int i = 0; i < 4; i++)
        axis_angle(q + 4 * i, 0, 0, 1, 0.4 * i);
    c->spine_rot = c_dak32(r, 1, 1, 4, ks, 4, q);
    for (int i = 0; i < NK; i++) {
        v[3 * i] = 1 + 0.1f * (float)i;
        v[3 * i + 1] = 1 - 0.05f * (float)i;
        v[3 * i + 2] = 1 + 0.02f * (float)i;
    }
    c->spine_ss = c_scaled(r, 13, 1, T60, NK, k16, v, 3, NULL, NULL);
    /* D3I1K32fC32f: 5 float knots, then 5 floats on the line O + s S */
    struct fxa_curve h = {.format = 16, .degree = 2, .na = 10, .s = {0.5f, -0.25f, 1}, .o = {0, 1, 0}};
    static const float hk[10] = {0, 0.02f, 0.8f, 1.6f, 2, 0, 0.5f, 1.5f, 1, 2};
    memcpy(h.a, hk, sizeof hk);
    c->head_pos = add(r, &h);
    static const float head_rot[4] = {0, 0.3826834f, 0, 0.9238795f};
    c->head_rot = c_const(r, 5, 4, head_rot);
    for (int i = 0; i < NK; i++)
        v[i] = 1 - 0.05f * (float)i;
    c->head_ss = c_d9i1(r, 14, 1, T30, NK, k8, v);
    static const float line16_s[3] = {0.00005f, -0.000025f, 0.0001f}, line_o[3] = {0, 1, 0};
    static const float words16[NK] = {0, 1000, 5000, 20000, 30000, 65535};
    c->leg_pos = c_scaled(r, 17, 2, T60, NK, k16, words16, 1, line16_s, line_o);
    for (int i = 0; i < NK; i++)
        axis_angle(q + 4 * i, 0, 1, 1, 0.2 * i);
    c->leg_rot = c_da_quant(r, 6, 2, T60, NK, k16, 4, q);
    for (int i = 0; i < NK; i++) {
        v[3 * i] = 1;
        v[3 * i + 1] = 1 + 0.1f * (float)i;
        v[3 * i + 2] = 1;
    }
    c->leg_ss = c_scaled(r, 15, 1, T30, NK, k8, v, 3, NULL, NULL);
    static const float line8_s[3] = {0.01f, 0.02f, -0.01f}, line8_o[3] = {0, 0, 1};
    static const float words8[NK] = {0, 20, 100, 200, 255, 128};
    c->foot_pos = c_scaled(r, 18, 2, T30, NK, k8, words8, 1, line8_s, line8_o);
    for (int i = 0; i < NK; i++)
        axis_angle(q + 4 * i, 1, 0, 0, 0.25 * i);
    c->foot_rot = c_da_quant(r, 7, 1, T30, NK, k8, 4, q);
    float foot_ss[9] = {2, 0, 0, 0, 2, 0, 0, 0, 2};
    if (o->shear)
        foot_ss[1] = 0.5f;
    c->foot_ss = c_const(r, 3, 9, foot_ss);
    static const float tail_pos[3] = {0.25f, 0.5f, -0.75f};
    c->tail_pos = c_const(r, 4, 3, tail_pos);
    float ss9[9 * NK];
    memset(ss9, 0, sizeof ss9);
    for (int i = 0; i < NK; i++) {
        ss9[9 * i] = 1 + 0.1f * (float)i;
        ss9[9 * i + 4] = 1 + 0.05f * (float)i;
        ss9[9 * i + 8] = 1;
        if (o->shear) { /* a shear that changes over time too */
            ss9[9 * i + 1] = 0.05f * (float)i;
            ss9[9 * i + 7] = -0.02f * (float)i;
        }
    }
    c->tail_ss = c_da_quant(r, 6, 1, T60, NK, k16, 9, ss9);
    /* degree 0: P[k] holds on [T[k-1], T[k]) */
    static const float ke[3] = {0.5f, 1, 1.5f}, pe[9] = {0, 0, 0, 1, 0, 0, 1, 1, 0};
    c->ear_pos = c_dak32(r, 1, 0, 3, ke, 3, pe);
    static const float kr[2] = {0.5f, 1.5f}, pr[8] = {0, 0, 0, 1, 0, 0, 0.70710678f, 0.70710678f};
    c->ear_rot = c_dak32(r, 1, 0, 2, kr, 4, pr);
    static const float kt[1] = {0.7f}, pt[3] = {0.1f, 0.2f, 0.3f};
    c->toe_pos = c_dak32(r, 1, 2, 1, kt, 3, pt);
    static const float kl[2] = {0, 2}, pl[6] = {0, 0, 0, 0, 1, 0};
    c->lid_pos = c_dak32(r, 1, 1, 2, kl, 3, pl);
    static const float kb[3] = {0, 1, 2}, pb[6] = {0, 1, 1, 0.5f, 0, 0};
    c->blend = c_dak32(r, 1, 1, 3, kb, 2, pb);
    struct fxa_curve raw = {.format = 0, .h16 = 1, .na = 3, .a = {1, 2, 3}};
    c->raw = add(r, &raw);
    /* knots past the 0.5 s of the short animation */
    static const float kq[4] = {0, 0.25f, 0.75f, 1}, pq[12] = {0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 1};
    static const float pw[12] = {0, 0, 0, 1e5f, -1e5f, 0, -1e5f, 1e5f, 0, 1e5f, 0, 1};
    c->short_pos = c_dak32(r, 1, 2, 4, kq, 3, o->wild ? pw : pq);
}

/* The groups and animations of the fixture (old layout: one animation, two tracks). */
static void make_tables(struct fxa_result *r, const struct fxa_opts *o, const struct curves *c)
{
    if (o->old_layout) {
        struct fxa_group g = {.name = "hero", .ntracks = 2};
        g.track[0] = (struct fxa_track){"root", {c->root_pos, c->spine_rot, c->ident}, NULL};
        g.track[1] = (struct fxa_track){"spine", {c->ear_pos, c->ident, c->ident}, NULL};
        r->group[r->ngroups++] = g;
        r->anim[r->nanims++] = (struct fxa_anim){"old", 2.0f, 1.0f / 60, 0, {0}, 1};
        return;
    }
    struct fxa_group hero = {.name = "hero", .ntracks = 9, .nvec = 2, .text_name = "events", .nentries = 2};
    int t = 0;
    hero.track[t++] = (struct fxa_track){"root", {c->root_pos, c->root_rot, c->ident}, NULL};
    hero.track[t++] = (struct fxa_track){"hip", {c->hip_pos, c->hip_rot, c->hip_ss}, NULL};
    hero.track[t++] = (struct fxa_track){"spine", {c->spine_pos, c->spine_rot, c->spine_ss}, NULL};
    hero.track[t++] = (struct fxa_track){"head", {c->head_pos, c->head_rot, c->head_ss}, NULL};
    hero.track[t++] = (struct fxa_track){"leg", {c->leg_pos, c->leg_rot, c->leg_ss}, NULL};
    hero.track[t++] = (struct fxa_track){"foot", {c->foot_pos, c->foot_rot, c->foot_ss}, NULL};
    hero.track[t++] = (struct fxa_track){"tail", {c->tail_pos, c->ident, c->tail_ss}, NULL};
    hero.track[t++] = (struct fxa_track){"ear", {c->ear_pos, c->ear_rot, c->ident}, NULL};
    hero.track[t++] = (struct fxa_track){"toe", {c->toe_pos, c->ident, c->ident}, NULL};
    if (o->loose_names) {
        static const char *const loose[4][2] = {
            {"ROOT", "root"}, {"Bip01 hip", "hip"}, {"rig|Spine", "spine"}, {"Scene:Bip01 HEAD", "head"}};
        for (int k = 0; k < 4; k++)
            hero.track[k].name = loose[k][0], hero.track[k].bone = loose[k][1];
        hero.track[hero.ntracks++] = (struct fxa_track){"ghost", {c->lid_pos, c->ident, c->ident}, NULL};
    }
    hero.vec[0].name = "blend", hero.vec[0].key = 7, hero.vec[0].dimension = 2, hero.vec[0].curve = c->blend;
    hero.vec[1].name = "raw", hero.vec[1].key = 9, hero.vec[1].dimension = 1, hero.vec[1].curve = c->raw;
    hero.entry[0].t = 0.5f, hero.entry[0].text = "step";
    hero.entry[1].t = 1.25f, hero.entry[1].text = "left, \"heel\"";
    struct fxa_group prop = {.name = "prop", .ntracks = 1};
    prop.track[0] = (struct fxa_track){"lid", {c->lid_pos, c->ident, c->ident}, NULL};
    struct fxa_group shortg = {.name = "shortgroup", .ntracks = 1};
    shortg.track[0] = (struct fxa_track){"root", {c->short_pos, c->ident, c->ident}, NULL};
    struct fxa_group pose = {.name = "posegroup", .ntracks = 1};
    pose.track[0] = (struct fxa_track){"hip", {c->ident, c->root_rot, c->ident}, NULL}; /* a curve shared with root */
    r->group[r->ngroups++] = hero;
    r->group[r->ngroups++] = prop;
    r->group[r->ngroups++] = shortg;
    r->group[r->ngroups++] = pose;
    r->anim[r->nanims++] = (struct fxa_anim){"walk", 2.0f, 1.0f / 60, 2, {0, 1}, 2};
    r->anim[r->nanims++] = (struct fxa_anim){"short", 0.5f, 0, 1, {0, 2}, 2};
    r->anim[r->nanims++] = (struct fxa_anim){"pose", 0, 1.0f / 30, 1, {3}, 1};
    r->anim[r->nanims++] = (struct fxa_anim){"empty", 1, 1.0f / 30, 1, {0}, 0};
}

/* ---- writing ---- */

struct writer {
    struct gw w;
    const struct fxa_opts *o;
    uint32_t t_real, t_u16, t_u8, t_header, t_curve2, t_old, t_fmt[FXA_OLD + 1];
};

/* A type whose member names are written unless the file's names are remapped. */
static uint32_t type_of(struct writer *wr, const struct mdef *m, int n)
{
    struct mdef copy[32];
    for (int i = 0; i < n; i++) {
        copy[i] = m[i];
        if (wr->o->remapped)
            copy[i].name = NULL;
    }
    return gw_type(&wr->w, copy, n);
}

/* A String slot: the text, or (remapped) its CRC in the slot. */
static void put_name(struct writer *wr, uint32_t slot, const char *text)
{
    struct gw *w = &wr->w;
    if (!wr->o->remapped) {
        gw_ptr(w, slot, gw_str(w, text));
        return;
    }
    gw_u32(w, slot + (w->p == 8 && w->b.be ? 4 : 0), fxa_crc(text));
}

static uint32_t alloc(struct gw *w, size_t n)
{
    fx_align(&w->b, 4, 0);
    return gw_alloc(w, n);
}

static void ref_array(struct gw *w, uint32_t at, uint32_t count, uint32_t items)
{
    gw_u32(w, at, count);
    if (count)
        gw_ptr(w, at + 4, items);
}

static uint32_t floats(struct gw *w, const float *f, uint32_t n)
{
    uint32_t at = alloc(w, 4 * (size_t)n);
    for (uint32_t i = 0; i < n; i++)
        gw_f32(w, at + 4 * i, f[i]);
    return at;
}

static uint32_t words(struct gw *w, const uint16_t *v, uint32_t n, bool bytes)
{
    uint32_t at = alloc(w, (bytes ? 1 : 2) * (size_t)n);
    for (uint32_t i = 0; i < n; i++) {
        if (bytes)
            w->b.p[at + i] = (uint8_t)v[i];
        else
            gw_u16(w, at + 2 * i, v[i]);
    }
    return at;
}

static const char *const format_names[FXA_OLD] = {
    "DaKeyframes32f", "DaK32fC32f",   "DaIdentity",   "DaConstant32f", "D3Constant32f",
    "D4Constant32f",  "DaK16uC16u",   "DaK8uC8u",     "D4nK16uC15u",   "D4nK8uC7u",
    "D3K16uC16u",     "D3K8uC8u",     "D9I1K16uC16u", "D9I3K16uC16u",  "D9I1K8uC8u",
    "D9I3K8uC8u",     "D3I1K32fC32f", "D3I1K16uC16u", "D3I1K8uC8u"};

/* The members of format f's CurveData type (the header first; none for the old layout). */
static int format_members(const struct writer *wr, int f, struct mdef *m, char *hname)
{
    bool b8 = f == 7 || f == 9 || f == 11 || f == 14 || f == 15 || f == 18;
    uint32_t kc = f == 16 ? wr->t_real : b8 ? wr->t_u8 : wr->t_u16;
    int n = 0;
    if (f == FXA_OLD) {
        m[n++] = (struct mdef){INT32, "Degree", NO_TYPE, 0};
        m[n++] = (struct mdef){REF_ARRAY, "Knots", wr->t_real, 0};
        m[n++] = (struct mdef){REF_ARRAY, "Controls", wr->t_real, 0};
        return n;
    }
    sprintf(hname, "CurveDataHeader_%s", format_names[f]);
    m[n++] = (struct mdef){INLINE, hname, wr->t_header, 0};
    switch (f) {
    case 0:
    case 2:
        m[n++] = (struct mdef){INT16, "Dimension", NO_TYPE, 0};
        if (f == 0)
            m[n++] = (struct mdef){REF_ARRAY, "Controls", wr->t_real, 0};
        break;
    case 1:
        m[n++] = (struct mdef){INT16, "Padding", NO_TYPE, 0};
        m[n++] = (struct mdef){REF_ARRAY, "Knots", wr->t_real, 0};
        m[n++] = (struct mdef){REF_ARRAY, "Controls", wr->t_real, 0};
        break;
    case 3:
    case 4:
    case 5:
        m[n++] = (struct mdef){INT16, "Padding", NO_TYPE, 0};
        m[n++] = f == 3 ? (struct mdef){REF_ARRAY, "Controls", wr->t_real, 0}
                        : (struct mdef){REAL32, "Controls", NO_TYPE, f == 4 ? 3 : 4};
        break;
    case 6:
    case 7:
        m[n++] = (struct mdef){UINT16, "OneOverKnotScaleTrunc", NO_TYPE, 0};
        m[n++] = (struct mdef){REF_ARRAY, "ControlScaleOffsets", wr->t_real, 0};
        m[n++] = (struct mdef){REF_ARRAY, "KnotsControls", kc, 0};
        break;
    case 8:
    case 9:
        m[n++] = (struct mdef){UINT16, "ScaleOffsetTableEntries", NO_TYPE, 0};
        m[n++] = (struct mdef){REAL32, "OneOverKnotScale", NO_TYPE, 0};
        m[n++] = (struct mdef){REF_ARRAY, "KnotsControls", kc, 0};
        break;
    case 12:
    case 14:
        m[n++] = (struct mdef){UINT16, "OneOverKnotScaleTrunc", NO_TYPE, 0};
        m[n++] = (struct mdef){REAL32, "ControlScale", NO_TYPE, 0};
        m[n++] = (struct mdef){REAL32, "ControlOffset", NO_TYPE, 0};
        m[n++] = (struct mdef){REF_ARRAY, "KnotsControls", kc, 0};
        break;
    default: /* 10, 11, 13, 15, 16, 17, 18 */
        m[n++] = f == 16 ? (struct mdef){INT16, "Padding", NO_TYPE, 0}
                         : (struct mdef){UINT16, "OneOverKnotScaleTrunc", NO_TYPE, 0};
        m[n++] = (struct mdef){REAL32, "ControlScales", NO_TYPE, 3};
        m[n++] = (struct mdef){REAL32, "ControlOffsets", NO_TYPE, 3};
        m[n++] = (struct mdef){REF_ARRAY, "KnotsControls", kc, 0};
    }
    return n;
}

/* Offsets in a CurveData struct: the Inline header takes its 2 bytes (Format, Degree). */
static uint32_t curve_offset(const struct gw *w, const struct mdef *m, int n, const char *name, int f)
{
    return f == FXA_OLD ? gw_offset(w, m, n, name) : 2 + gw_offset(w, m + 1, n - 1, name);
}

static uint32_t write_curve_words(struct writer *wr, const struct fxa_curve *c, const uint16_t *kw, uint32_t nw);

/* Writes a curve: its CurveData object (old layout: the inline curve at `inline_at`);
 * returns the object's offset. */
static uint32_t write_curve(struct writer *wr, const struct fxa_curve *c, uint32_t inline_at)
{
    if (c->format != FXA_OLD)
        return write_curve_words(wr, c, c->w, c->nw);
    struct gw *w = &wr->w;
    struct mdef m[6];
    int n = format_members(wr, FXA_OLD, m, NULL);
    if (!wr->t_fmt[FXA_OLD])
        wr->t_fmt[FXA_OLD] = type_of(wr, m, n);
    gw_u32(w, inline_at, (uint32_t)c->degree);
    ref_array(w, inline_at + gw_offset(w, m, n, "Knots"), c->na, floats(w, c->a, c->na));
    ref_array(w, inline_at + gw_offset(w, m, n, "Controls"), c->nb, floats(w, c->b, c->nb));
    return inline_at;
}

/* A CurveData object of format c->format, its KnotsControls words kw (when it has them). */
static uint32_t write_curve_words(struct writer *wr, const struct fxa_curve *c, const uint16_t *kw, uint32_t nw)
{
    struct gw *w = &wr->w;
    struct mdef m[6];
    char hname[64];
    int f = c->format, n = format_members(wr, f, m, hname);
    if (!wr->t_fmt[f])
        wr->t_fmt[f] = type_of(wr, m, n);
    bool b8 = f == 7 || f == 9 || f == 11 || f == 14 || f == 15 || f == 18;
    uint32_t at = alloc(w, 2 + gw_struct_size(w, m + 1, n - 1));
    w->b.p[at] = (uint8_t)f;
    w->b.p[at + 1] = (uint8_t)c->degree;
    for (int i = 1; i < n; i++) {
        uint32_t mo = at + curve_offset(w, m, n, m[i].name, f);
        const char *nm = m[i].name;
        if (m[i].type == INT16 || m[i].type == UINT16)
            gw_u16(w, mo, c->h16);
        else if (!strcmp(nm, "OneOverKnotScale") || !strcmp(nm, "ControlScale"))
            gw_f32(w, mo, c->f1);
        else if (!strcmp(nm, "ControlOffset"))
            gw_f32(w, mo, c->f2);
        else if (!strcmp(nm, "ControlScales") || (!strcmp(nm, "Controls") && m[i].type == REAL32))
            for (int k = 0; k < m[i].width; k++)
                gw_f32(w, mo + 4 * (uint32_t)k, c->s[k]);
        else if (!strcmp(nm, "ControlOffsets"))
            for (int k = 0; k < 3; k++)
                gw_f32(w, mo + 4 * (uint32_t)k, c->o[k]);
        else if (!strcmp(nm, "KnotsControls") && f != 16)
            ref_array(w, mo, nw, words(w, kw, nw, b8));
        else if (!strcmp(nm, "Controls") && f == 1)
            ref_array(w, mo, c->nb, floats(w, c->b, c->nb));
        else /* Knots (1), Controls (0, 3), ControlScaleOffsets, KnotsControls (16) */
            ref_array(w, mo, c->na, floats(w, c->a, c->na));
    }
    return at;
}

static void transform(struct gw *w, uint32_t at, const float *pos, const float *q)
{
    gw_u32(w, at, 3);
    for (uint32_t k = 0; k < 3; k++)
        gw_f32(w, at + 4 + 4 * k, pos[k]);
    for (uint32_t k = 0; k < 4; k++)
        gw_f32(w, at + 16 + 4 * k, q[k]);
    for (uint32_t k = 0; k < 3; k++)
        gw_f32(w, at + 32 + 16 * k, 1);
}

uint8_t *fxa_build(const struct fxa_opts *o, size_t *size, struct fxa_result *r)
{
    static struct writer wr;
    memset(&wr, 0, sizeof wr);
    memset(r, 0, sizeof *r);
    wr.o = o;
    struct gw *w = &wr.w;
    w->p = strstr(o->sig, "64") ? 8 : 4;
    w->b.be = o->sig[0] == 'b';
    uint32_t p = (uint32_t)w->p;
    struct curves cv;
    make_curves(r, o, &cv);
    r->identity = o->old_layout ? -1 : cv.ident;
    if (o->old_layout) { /* every curve inline: identities are curves without knots */
        struct fxa_curve none = {.format = FXA_OLD, .degree = 2};
        cv.ident = add(r, &none);
        for (uint32_t i = 0; i < r->ncurves; i++)
            if (r->curve[i].format == 1)
                r->curve[i].format = FXA_OLD;
    }
    make_tables(r, o, &cv);
    if (o->set_duration) {
        r->anim[0].duration = o->duration;
        r->anim[0].timestep = o->timestep;
    }

    /* types */
    const struct mdef real[] = {{REAL32, "Real32", NO_TYPE, 0}}, u16[] = {{UINT16, "UInt16", NO_TYPE, 0}},
                      u8[] = {{UINT8, "UInt8", NO_TYPE, 0}};
    wr.t_real = type_of(&wr, real, 1);
    wr.t_u16 = type_of(&wr, u16, 1);
    wr.t_u8 = type_of(&wr, u8, 1);
    const struct mdef header[] = {{UINT8, "Format", NO_TYPE, 0}, {UINT8, "Degree", NO_TYPE, 0}};
    wr.t_header = type_of(&wr, header, 2);
    const struct mdef curve2[] = {{VARIANT, "CurveData", NO_TYPE, 0}};
    wr.t_curve2 = type_of(&wr, curve2, 1);
    struct mdef oldm[3];
    format_members(&wr, FXA_OLD, oldm, NULL);
    uint32_t t_inline = o->old_layout ? (wr.t_fmt[FXA_OLD] = type_of(&wr, oldm, 3)) : wr.t_curve2;
    const struct mdef ttrack[] = {{STRING, "Name", NO_TYPE, 0}, {INT32, "Flags", NO_TYPE, 0},
                                  {INLINE, "OrientationCurve", t_inline, 0}, {INLINE, "PositionCurve", t_inline, 0},
                                  {INLINE, "ScaleShearCurve", t_inline, 0}};
    uint32_t t_ttrack = type_of(&wr, ttrack, N(ttrack));
    uint32_t curve_size = o->old_layout ? gw_struct_size(w, oldm, 3) : 2 * p;
    uint32_t ttsize = p + 4 + 3 * curve_size;
    const struct mdef vtrack[] = {{STRING, "Name", NO_TYPE, 0}, {UINT32, "TrackKey", NO_TYPE, 0},
                                  {INT32, "Dimension", NO_TYPE, 0}, {INLINE, "ValueCurve", wr.t_curve2, 0}};
    uint32_t t_vtrack = type_of(&wr, vtrack, N(vtrack)), vtsize = p + 8 + 2 * p;
    const struct mdef entry[] = {{REAL32, "TimeStamp", NO_TYPE, 0}, {STRING, "Text", NO_TYPE, 0}};
    uint32_t t_entry = type_of(&wr, entry, N(entry));
    const struct mdef ttext[] = {{STRING, "Name", NO_TYPE, 0}, {REF_ARRAY, "Entries", t_entry, 0}};
    uint32_t t_ttext = type_of(&wr, ttext, N(ttext));
    const struct mdef group[] = {{STRING, "Name", NO_TYPE, 0},           {REF_ARRAY, "VectorTracks", t_vtrack, 0},
                                 {REF_ARRAY, "TransformTracks", t_ttrack, 0},
                                 {REF_ARRAY, "TransformLODErrors", wr.t_real, 0},
                                 {REF_ARRAY, "TextTracks", t_ttext, 0},  {TRANSFORM, "InitialPlacement", NO_TYPE, 0},
                                 {INT32, "AccumulationFlags", NO_TYPE, 0}, {REAL32, "LoopTranslation", NO_TYPE, 3},
                                 {REF, "PeriodicLoop", wr.t_real, 0},     {VARIANT, "ExtendedData", NO_TYPE, 0}};
    uint32_t t_group = type_of(&wr, group, N(group));
    const struct mdef anim[] = {{STRING, "Name", NO_TYPE, 0},         {REAL32, "Duration", NO_TYPE, 0},
                                {REAL32, "TimeStep", NO_TYPE, 0},     {REAL32, "Oversampling", NO_TYPE, 0},
                                {ARRAY_REFS, "TrackGroups", t_group, 0}, {INT32, "DefaultLoopCount", NO_TYPE, 0},
                                {INT32, "Flags", NO_TYPE, 0},         {VARIANT, "ExtendedData", NO_TYPE, 0}};
    const struct mdef anim_old[] = {{STRING, "Name", NO_TYPE, 0}, {REAL32, "Duration", NO_TYPE, 0},
                                    {REAL32, "TimeStep", NO_TYPE, 0}, {ARRAY_REFS, "TrackGroups", t_group, 0}};
    const struct mdef *am = o->old_layout ? anim_old : anim;
    int nam = o->old_layout ? N(anim_old) : N(anim);
    uint32_t t_anim = type_of(&wr, am, nam);
    const struct mdef bone[] = {{STRING, "Name", NO_TYPE, 0},         {INT32, "ParentIndex", NO_TYPE, 0},
                                {TRANSFORM, "Transform", NO_TYPE, 0}, {REAL32, "InverseWorldTransform", NO_TYPE, 16},
                                {REAL32, "LODError", NO_TYPE, 0},     {VARIANT, "ExtendedData", NO_TYPE, 0}};
    uint32_t t_bone = type_of(&wr, bone, N(bone));
    const struct mdef skel[] = {{STRING, "Name", NO_TYPE, 0}, {REF_ARRAY, "Bones", t_bone, 0},
                                {INT32, "LODType", NO_TYPE, 0}, {VARIANT, "ExtendedData", NO_TYPE, 0}};
    uint32_t t_skel = type_of(&wr, skel, N(skel));
    const struct mdef meshbind[] = {{REF, "Mesh", wr.t_real, 0}};
    uint32_t t_meshbind = type_of(&wr, meshbind, 1);
    const struct mdef model[] = {{STRING, "Name", NO_TYPE, 0}, {REF, "Skeleton", t_skel, 0},
                                 {TRANSFORM, "InitialPlacement", NO_TYPE, 0}, {REF_ARRAY, "MeshBindings", t_meshbind, 0},
                                 {VARIANT, "ExtendedData", NO_TYPE, 0}};
    uint32_t t_model = type_of(&wr, model, N(model));
    const struct mdef root[] = {{REF, "ArtToolInfo", wr.t_real, 0},   {REF, "ExporterInfo", wr.t_real, 0},
                                {STRING, "FromFileName", NO_TYPE, 0}, {ARRAY_REFS, "Textures", wr.t_real, 0},
                                {ARRAY_REFS, "Materials", wr.t_real, 0}, {ARRAY_REFS, "Skeletons", t_skel, 0},
                                {ARRAY_REFS, "VertexDatas", wr.t_real, 0}, {ARRAY_REFS, "TriTopologies", wr.t_real, 0},
                                {ARRAY_REFS, "Meshes", wr.t_real, 0}, {ARRAY_REFS, "Models", t_model, 0},
                                {ARRAY_REFS, "TrackGroups", t_group, 0}, {ARRAY_REFS, "Animations", t_anim, 0},
                                {VARIANT, "ExtendedData", NO_TYPE, 0}};
    uint32_t t_root = type_of(&wr, root, N(root));

    /* curves (CurveData objects; the old layout writes them inside the tracks) */
    uint32_t cobj[FXA_MAX_CURVES] = {0};
    for (uint32_t i = 0; !o->old_layout && i < r->ncurves; i++)
        cobj[i] = write_curve(&wr, &r->curve[i], 0);
    /* groups */
    uint32_t gsize = gw_struct_size(w, group, N(group)), o_groups[FXA_MAX_GROUPS];
    for (uint32_t g = 0; g < r->ngroups; g++) {
        const struct fxa_group *gr = &r->group[g];
        uint32_t o_tt = alloc(w, (size_t)ttsize * gr->ntracks);
        for (uint32_t k = 0; k < gr->ntracks; k++) {
            uint32_t at = o_tt + k * ttsize;
            put_name(&wr, at, gr->track[k].name);
            static const int order[3] = {FXA_ROT, FXA_POS, FXA_SS}; /* member order */
            for (int c = 0; c < 3; c++) {
                uint32_t slot = at + p + 4 + (uint32_t)c * curve_size;
                int ci = gr->track[k].curve[order[c]];
                if (o->old_layout) {
                    write_curve(&wr, &r->curve[ci], slot);
                } else {
                    gw_ptr(w, slot, wr.t_fmt[r->curve[ci].format]);
                    gw_ptr(w, slot + p, cobj[ci]);
                }
            }
        }
        uint32_t o_vt = alloc(w, (size_t)vtsize * (gr->nvec ? gr->nvec : 1));
        for (uint32_t k = 0; k < gr->nvec; k++) {
            uint32_t at = o_vt + k * vtsize;
            put_name(&wr, at, gr->vec[k].name);
            gw_u32(w, at + p, gr->vec[k].key);
            gw_u32(w, at + p + 4, (uint32_t)gr->vec[k].dimension);
            gw_ptr(w, at + p + 8, wr.t_fmt[r->curve[gr->vec[k].curve].format]);
            gw_ptr(w, at + p + 8 + p, cobj[gr->vec[k].curve]);
        }
        uint32_t esize = 4 + p, o_entries = alloc(w, (size_t)esize * 2), o_text = alloc(w, p + 4 + p);
        for (uint32_t k = 0; k < gr->nentries; k++) {
            gw_f32(w, o_entries + k * esize, gr->entry[k].t);
            put_name(&wr, o_entries + k * esize + 4, gr->entry[k].text);
        }
        if (gr->text_name) {
            put_name(&wr, o_text, gr->text_name);
            ref_array(w, o_text + p, gr->nentries, o_entries);
        }
        uint32_t at = o_groups[g] = alloc(w, gsize);
        put_name(&wr, at, gr->name);
        ref_array(w, at + gw_offset(w, group, N(group), "VectorTracks"), gr->nvec, o_vt);
        ref_array(w, at + gw_offset(w, group, N(group), "TransformTracks"), gr->ntracks, o_tt);
        ref_array(w, at + gw_offset(w, group, N(group), "TextTracks"), gr->text_name ? 1 : 0, o_text);
        static const float zero[3] = {0, 0, 0}, qid[4] = {0, 0, 0, 1};
        transform(w, at + gw_offset(w, group, N(group), "InitialPlacement"), zero, qid);
    }
    /* animations */
    uint32_t asize = gw_struct_size(w, am, nam), o_anims[4];
    for (uint32_t a = 0; a < r->nanims; a++) {
        const struct fxa_anim *an = &r->anim[a];
        uint32_t o_list = alloc(w, (size_t)p * (an->ngroups ? an->ngroups : 1));
        for (uint32_t g = 0; g < an->ngroups; g++)
            gw_ptr(w, o_list + g * p, o_groups[an->group[g]]);
        uint32_t at = o_anims[a] = alloc(w, asize);
        put_name(&wr, at, an->name);
        gw_f32(w, at + p, an->duration);
        gw_f32(w, at + p + 4, an->timestep);
        if (!o->old_layout)
            gw_f32(w, at + p + 8, an->oversampling);
        ref_array(w, at + gw_offset(w, am, nam, "TrackGroups"), an->ngroups, o_list);
    }
    /* the skeleton and the model */
    uint32_t bsize = gw_struct_size(w, bone, N(bone)), o_bones = alloc(w, (size_t)bsize * FXA_BONES);
    for (uint32_t i = 0; i < FXA_BONES; i++) {
        uint32_t at = o_bones + i * bsize;
        put_name(&wr, at, fxa_bones[i].name);
        gw_u32(w, at + p, (uint32_t)fxa_bones[i].parent);
        const float *q = fxa_bones[i].orientation;
        if (o->rough_orientations && (i == 0 || i == 3))
            q = fxm_rough_orientation[i == 3];
        transform(w, at + p + 4, fxa_bones[i].position, q);
        for (uint32_t k = 0; k < 4; k++) /* identity: the export does not read it for animations */
            gw_f32(w, at + p + 4 + 68 + 20 * k, 1);
    }
    uint32_t o_skel = alloc(w, gw_struct_size(w, skel, N(skel)));
    put_name(&wr, o_skel, "rig");
    ref_array(w, o_skel + p, FXA_BONES, o_bones);
    uint32_t o_model = alloc(w, gw_struct_size(w, model, N(model)));
    put_name(&wr, o_model, "hero");
    gw_ptr(w, o_model + p, o_skel);
    static const float zero[3] = {0, 0, 0}, qid[4] = {0, 0, 0, 1};
    transform(w, o_model + 2 * p, zero, qid);
    /* the root */
    uint32_t o_lists = alloc(w, (size_t)p * (2 + FXA_MAX_GROUPS + 4));
    gw_ptr(w, o_lists, o_skel);
    gw_ptr(w, o_lists + p, o_model);
    for (uint32_t g = 0; g < r->ngroups; g++)
        gw_ptr(w, o_lists + (2 + g) * p, o_groups[g]);
    for (uint32_t a = 0; a < r->nanims; a++)
        gw_ptr(w, o_lists + (2 + FXA_MAX_GROUPS + a) * p, o_anims[a]);
    uint32_t o_root = alloc(w, gw_struct_size(w, root, N(root)));
    put_name(&wr, o_root + 2 * p, "fixture.max");
    if (!o->no_skeleton) {
        ref_array(w, o_root + gw_offset(w, root, N(root), "Skeletons"), 1, o_lists);
        ref_array(w, o_root + gw_offset(w, root, N(root), "Models"), 1, o_lists + p);
    }
    ref_array(w, o_root + gw_offset(w, root, N(root), "TrackGroups"), r->ngroups, o_lists + 2 * p);
    ref_array(w, o_root + gw_offset(w, root, N(root), "Animations"), r->nanims, o_lists + (2 + FXA_MAX_GROUPS) * p);

    uint32_t len = (uint32_t)w->b.len;
    struct fx_section sec = {.compression = 0, .data = w->b.p, .data_size = len, .alignment = 4, .first16bit = len,
                             .first8bit = len, .fixups = w->fix, .nfixups = w->nfix, .bitknit2 = o->bitknit2};
    struct fx_gr2_opts go = {.version = 7, .sig = o->sig, .type_tag = o->old_layout ? 0x80000010 : 0x80000039,
                             .string_table_crc = o->remapped ? 0x452bfb41 : 0,
                             .root_type = {0, t_root}, .root_object = {0, o_root}};
    struct fx_gr2_layout lay;
    uint8_t *f = fx_build_gr2(&go, &sec, 1, size, &lay);
    free(w->b.p);
    return f;
}

/* ---- the chain files (long, demo): one group of tracks, a skeleton of bones in a chain ---- */

struct chain {
    uint32_t t_ttrack, t_group, t_anim, t_bone, t_skel;
    uint32_t ttsize, bsize, gsize, asize, ssize; /* struct sizes */
    uint32_t tracks_at, placement_at;             /* in the group */
};

/* A writer with the element, header and curve2 types written. */
static void chain_begin(struct writer *wr, const char *sig)
{
    static const struct fxa_opts named = {0};
    memset(wr, 0, sizeof *wr);
    wr->o = &named;
    wr->w.p = strstr(sig, "64") ? 8 : 4;
    wr->w.b.be = sig[0] == 'b';
    const struct mdef real[] = {{REAL32, "Real32", NO_TYPE, 0}}, u16[] = {{UINT16, "UInt16", NO_TYPE, 0}},
                      header[] = {{UINT8, "Format", NO_TYPE, 0}, {UINT8, "Degree", NO_TYPE, 0}},
                      curve2[] = {{VARIANT, "CurveData", NO_TYPE, 0}};
    wr->t_real = type_of(wr, real, 1);
    wr->t_u16 = type_of(wr, u16, 1);
    wr->t_header = type_of(wr, header, 2);
    wr->t_curve2 = type_of(wr, curve2, 1);
}

/* The types of tracks, a group, an animation, bones and a skeleton. */
static void chain_types(struct writer *wr, struct chain *c)
{
    struct gw *w = &wr->w;
    uint32_t p = (uint32_t)w->p;
    const struct mdef ttrack[] = {{STRING, "Name", NO_TYPE, 0}, {INT32, "Flags", NO_TYPE, 0},
                                  {INLINE, "OrientationCurve", wr->t_curve2, 0}, {INLINE, "PositionCurve", wr->t_curve2, 0},
                                  {INLINE, "ScaleShearCurve", wr->t_curve2, 0}};
    c->t_ttrack = type_of(wr, ttrack, N(ttrack));
    c->ttsize = p + 4 + 6 * p;
    const struct mdef group[] = {{STRING, "Name", NO_TYPE, 0}, {REF_ARRAY, "VectorTracks", wr->t_real, 0},
                                 {REF_ARRAY, "TransformTracks", c->t_ttrack, 0},
                                 {REF_ARRAY, "TransformLODErrors", wr->t_real, 0},
                                 {REF_ARRAY, "TextTracks", wr->t_real, 0}, {TRANSFORM, "InitialPlacement", NO_TYPE, 0}};
    c->t_group = type_of(wr, group, N(group));
    c->gsize = gw_struct_size(w, group, N(group));
    c->tracks_at = gw_offset(w, group, N(group), "TransformTracks");
    c->placement_at = gw_offset(w, group, N(group), "InitialPlacement");
    const struct mdef anim[] = {{STRING, "Name", NO_TYPE, 0}, {REAL32, "Duration", NO_TYPE, 0},
                                {REAL32, "TimeStep", NO_TYPE, 0}, {REAL32, "Oversampling", NO_TYPE, 0},
                                {ARRAY_REFS, "TrackGroups", c->t_group, 0}};
    c->t_anim = type_of(wr, anim, N(anim));
    c->asize = gw_struct_size(w, anim, N(anim));
    const struct mdef bone[] = {{STRING, "Name", NO_TYPE, 0}, {INT32, "ParentIndex", NO_TYPE, 0},
                                {TRANSFORM, "Transform", NO_TYPE, 0}, {REAL32, "InverseWorldTransform", NO_TYPE, 16}};
    c->t_bone = type_of(wr, bone, N(bone));
    c->bsize = gw_struct_size(w, bone, N(bone));
    const struct mdef skel[] = {{STRING, "Name", NO_TYPE, 0}, {REF_ARRAY, "Bones", c->t_bone, 0},
                                {INT32, "LODType", NO_TYPE, 0}};
    c->t_skel = type_of(wr, skel, N(skel));
    c->ssize = gw_struct_size(w, skel, N(skel));
}

/* Track t: its name and its curves (orientation, position, scale/shear: CurveData objects
 * of format types[k]); bone t: its name, parent t-1, rest position, identity inverse
 * world transform but translation -wy (the chains run up +Y). */
static void chain_link(struct writer *wr, const struct chain *c, uint32_t o_tt, uint32_t o_bones, uint32_t t,
                       const char *name, const uint32_t objs[3], const uint32_t types[3], const float *pos, float wy)
{
    struct gw *w = &wr->w;
    uint32_t p = (uint32_t)w->p, at = o_tt + t * c->ttsize, b = o_bones + t * c->bsize;
    static const float qid[4] = {0, 0, 0, 1};
    put_name(wr, at, name);
    for (uint32_t k = 0; k < 3; k++) {
        gw_ptr(w, at + p + 4 + 2 * p * k, types[k]);
        gw_ptr(w, at + p + 4 + 2 * p * k + p, objs[k]);
    }
    put_name(wr, b, name);
    gw_u32(w, b + p, t ? t - 1 : 0xFFFFFFFFu);
    transform(w, b + p + 4, pos, qid);
    for (uint32_t k = 0; k < 4; k++)
        gw_f32(w, b + p + 4 + 68 + 20 * k, 1);
    gw_f32(w, b + p + 4 + 68 + 4 * 13, -wy);
}

/* The file: the writer's bytes as one uncompressed section (the buffer freed). */
static uint8_t *chain_file(struct writer *wr, const char *sig, uint32_t t_root, uint32_t o_root, size_t *size)
{
    struct gw *w = &wr->w;
    uint32_t len = (uint32_t)w->b.len;
    struct fx_section sec = {.compression = 0, .data = w->b.p, .data_size = len, .alignment = 4, .first16bit = len,
                             .first8bit = len, .fixups = w->fix, .nfixups = w->nfix};
    struct fx_gr2_opts go = {.version = 7, .sig = sig, .type_tag = 0x80000039, .root_type = {0, t_root},
                             .root_object = {0, o_root}};
    struct fx_gr2_layout lay;
    uint8_t *f = fx_build_gr2(&go, &sec, 1, size, &lay);
    free(w->b.p);
    return f;
}

uint8_t *fxa_build_long(const struct fxa_long_opts *o, size_t *size)
{
    static struct writer wr;
    chain_begin(&wr, o->sig);
    struct gw *w = &wr.w;
    uint32_t p = (uint32_t)w->p, nt = o->tracks > 400 ? 400 : o->tracks;
    float secs = o->seconds > 60 ? 60 : o->seconds;
    uint32_t n = (uint32_t)(secs * (float)o->knots_per_second) + 1;
    /* the curves: knot words on a scale of 1024 a second (OneOverKnotScaleTrunc 0x4480) */
    uint16_t *kw = malloc(4 * (size_t)n * sizeof *kw);
    struct fxa_curve id = {.format = 2};
    uint32_t o_id = write_curve(&wr, &id, 0), *o_pos = malloc(nt * sizeof *o_pos), *o_rot = malloc(nt * sizeof *o_rot);
    for (uint32_t t = 0; t < nt; t++) {
        struct fxa_curve pc = {.format = 10, .degree = 2, .h16 = 0x4480, .s = {0.0001f, 0.0001f, 0.0001f},
                               .o = {-3, -3, -3}};
        for (uint32_t i = 0; i < n; i++) {
            kw[i] = (uint16_t)lround((double)secs * i / (n - 1) * 1024);
            for (uint32_t j = 0; j < 3; j++)
                kw[n + 3 * i + j] = (uint16_t)(30000 + 20000 * sin(0.05 * i + t + j));
        }
        o_pos[t] = write_curve_words(&wr, &pc, kw, 4 * n);
        struct fxa_curve rc = {.format = 8, .degree = 2, .h16 = 0, .f1 = 1024.0f};
        for (uint32_t i = 0; i < n; i++) {
            float q[4];
            axis_angle(q, 1 + 0.01 * t, 2, 3, 0.1 * i + 0.01 * t);
            d4n_encode(q, 0, 15, kw + n + 3 * i);
        }
        o_rot[t] = write_curve_words(&wr, &rc, kw, 4 * n);
    }
    struct chain c;
    chain_types(&wr, &c);
    const struct mdef root[] = {{ARRAY_REFS, "Skeletons", c.t_skel, 0}, {ARRAY_REFS, "Animations", c.t_anim, 0}};
    uint32_t t_root = type_of(&wr, root, N(root));
    uint32_t o_tt = alloc(w, (size_t)c.ttsize * nt), o_bones = alloc(w, (size_t)c.bsize * nt);
    static const float zero[3] = {0, 0, 0}, qid[4] = {0, 0, 0, 1}, up[3] = {0, 0.1f, 0};
    for (uint32_t t = 0; t < nt; t++) {
        char name[16];
        snprintf(name, sizeof name, "b%03u", t);
        uint32_t objs[3] = {o_rot[t], o_pos[t], o_id}, types[3] = {wr.t_fmt[8], wr.t_fmt[10], wr.t_fmt[2]};
        chain_link(&wr, &c, o_tt, o_bones, t, name, objs, types, t ? up : zero, 0.1f * (float)t);
    }
    uint32_t o_group = alloc(w, c.gsize);
    put_name(&wr, o_group, "long");
    ref_array(w, o_group + c.tracks_at, nt, o_tt);
    transform(w, o_group + c.placement_at, zero, qid);
    uint32_t o_list = alloc(w, 3 * (size_t)p), o_anim = alloc(w, c.asize);
    gw_ptr(w, o_list, o_group);
    put_name(&wr, o_anim, "long");
    gw_f32(w, o_anim + p, secs);
    gw_f32(w, o_anim + p + 4, 1.0f / 30);
    gw_f32(w, o_anim + p + 8, 1);
    ref_array(w, o_anim + p + 12, 1, o_list);
    uint32_t o_skel = alloc(w, c.ssize);
    put_name(&wr, o_skel, "chain");
    ref_array(w, o_skel + p, nt, o_bones);
    gw_ptr(w, o_list + p, o_skel);
    gw_ptr(w, o_list + 2 * p, o_anim);
    uint32_t o_root = alloc(w, gw_struct_size(w, root, N(root)));
    ref_array(w, o_root, 1, o_list + p);
    ref_array(w, o_root + 4 + p, 1, o_list + 2 * p);
    free(kw);
    free(o_pos);
    free(o_rot);
    return chain_file(&wr, o->sig, t_root, o_root, size);
}

#define DEMO_BONES FXA_DEMO_BONES
#define DEMO_RINGS 13
#define DEMO_SIDES 12

const float fxa_demo_offset[3] = {0, 0.5f, 0};

uint8_t *fxa_build_demo(size_t *size)
{
    static struct writer wr;
    chain_begin(&wr, "le32");
    struct gw *w = &wr.w;
    uint32_t p = 4;
    const struct mdef i32[] = {{INT32, "Int32", NO_TYPE, 0}};
    uint32_t t_i32 = type_of(&wr, i32, 1);
    /* curves: a sway about z, each bone half a second behind its parent */
    uint16_t kw[4 * 9];
    struct fxa_curve id = {.format = 2};
    uint32_t o_id = write_curve(&wr, &id, 0), o_pos[DEMO_BONES], o_rot[DEMO_BONES];
    for (uint32_t b = 0; b < DEMO_BONES; b++) {
        struct fxa_curve pc = {.format = 4, .s = {0, b ? 0.5f : 0, 0}};
        o_pos[b] = write_curve(&wr, &pc, 0);
        struct fxa_curve rc = {.format = 8, .degree = 2, .h16 = 0, .f1 = 4.0f};
        for (uint32_t i = 0; i < 9; i++) {
            float q[4];
            kw[i] = (uint16_t)i; /* a knot every quarter second */
            axis_angle(q, 0, 0, 1, (b ? 0.45 : 0.15) * sin(M_PI * (i / 4.0 - 0.35 * b) + 1.2));
            d4n_encode(q, 0, 15, kw + 9 + 3 * i);
        }
        o_rot[b] = write_curve_words(&wr, &rc, kw, 4 * 9);
    }
    struct chain c;
    chain_types(&wr, &c);
    const struct mdef vert[] = {{REAL32, "Position", NO_TYPE, 3}, {NORMAL8, "BoneWeights", NO_TYPE, 4},
                                {UINT8, "BoneIndices", NO_TYPE, 4}, {REAL32, "Normal", NO_TYPE, 3}};
    uint32_t t_vert = type_of(&wr, vert, N(vert)), vsize = gw_struct_size(w, vert, N(vert));
    const struct mdef vdata[] = {{REF_VARIANT_ARRAY, "Vertices", NO_TYPE, 0}};
    uint32_t t_vdata = type_of(&wr, vdata, 1);
    const struct mdef topo[] = {{REF_ARRAY, "Indices", t_i32, 0}};
    uint32_t t_topo = type_of(&wr, topo, 1);
    const struct mdef bonebind[] = {{STRING, "BoneName", NO_TYPE, 0}};
    uint32_t t_bonebind = type_of(&wr, bonebind, 1);
    const struct mdef mesh[] = {{STRING, "Name", NO_TYPE, 0}, {REF, "PrimaryVertexData", t_vdata, 0},
                                {REF, "PrimaryTopology", t_topo, 0}, {REF_ARRAY, "BoneBindings", t_bonebind, 0}};
    uint32_t t_mesh = type_of(&wr, mesh, N(mesh));
    const struct mdef meshbind[] = {{REF, "Mesh", t_mesh, 0}};
    uint32_t t_meshbind = type_of(&wr, meshbind, 1);
    const struct mdef model[] = {{STRING, "Name", NO_TYPE, 0}, {REF, "Skeleton", c.t_skel, 0},
                                 {TRANSFORM, "InitialPlacement", NO_TYPE, 0}, {REF_ARRAY, "MeshBindings", t_meshbind, 0}};
    uint32_t t_model = type_of(&wr, model, N(model));
    const struct mdef root[] = {{ARRAY_REFS, "Skeletons", c.t_skel, 0}, {ARRAY_REFS, "Meshes", t_mesh, 0},
                                {ARRAY_REFS, "Models", t_model, 0}, {ARRAY_REFS, "Animations", c.t_anim, 0}};
    uint32_t t_root = type_of(&wr, root, N(root));
    /* bones and tracks, the bones' names for the mesh's bindings */
    static const float zero[3] = {0, 0, 0}, qid[4] = {0, 0, 0, 1};
    uint32_t o_bones = alloc(w, (size_t)c.bsize * DEMO_BONES), o_tt = alloc(w, (size_t)c.ttsize * DEMO_BONES);
    uint32_t o_bb = alloc(w, (size_t)p * DEMO_BONES);
    for (uint32_t b = 0; b < DEMO_BONES; b++) {
        char name[8];
        snprintf(name, sizeof name, "b%u", b);
        uint32_t objs[3] = {o_rot[b], o_pos[b], o_id}, types[3] = {wr.t_fmt[8], wr.t_fmt[4], wr.t_fmt[2]};
        chain_link(&wr, &c, o_tt, o_bones, b, name, objs, types, b ? fxa_demo_offset : zero, 0.5f * (float)b);
        put_name(&wr, o_bb + b * p, name);
    }
    /* the tube: rings every 0.25 up to 3, each blended between the two bones around it */
    uint32_t nv = DEMO_RINGS * DEMO_SIDES, o_verts = alloc(w, (size_t)vsize * nv);
    for (uint32_t r = 0; r < DEMO_RINGS; r++)
        for (uint32_t k = 0; k < DEMO_SIDES; k++) {
            uint32_t at = o_verts + (r * DEMO_SIDES + k) * vsize;
            double a = 2 * M_PI * k / DEMO_SIDES, y = 0.25 * r, rad = 0.22 - 0.012 * r, f = y / 0.5;
            uint32_t b0 = (uint32_t)f < DEMO_BONES - 1 ? (uint32_t)f : DEMO_BONES - 1;
            double wgt = f - b0 > 1 ? 1 : f - b0;
            gw_f32(w, at, (float)(rad * cos(a)));
            gw_f32(w, at + 4, (float)y);
            gw_f32(w, at + 8, (float)(rad * sin(a)));
            w->b.p[at + 12] = (uint8_t)lround(255 * (1 - wgt));
            w->b.p[at + 13] = (uint8_t)(255 - w->b.p[at + 12]);
            w->b.p[at + 16] = (uint8_t)b0;
            w->b.p[at + 17] = (uint8_t)(b0 + 1 < DEMO_BONES ? b0 + 1 : b0);
            gw_f32(w, at + 20, (float)cos(a));
            gw_f32(w, at + 28, (float)sin(a));
        }
    uint32_t ntri = (DEMO_RINGS - 1) * DEMO_SIDES * 2, o_idx = alloc(w, 12 * (size_t)ntri), t = 0;
    for (uint32_t r = 0; r + 1 < DEMO_RINGS; r++)
        for (uint32_t k = 0; k < DEMO_SIDES; k++) {
            uint32_t a = r * DEMO_SIDES + k, b = r * DEMO_SIDES + (k + 1) % DEMO_SIDES;
            uint32_t tri[6] = {a, a + DEMO_SIDES, b, b, a + DEMO_SIDES, b + DEMO_SIDES};
            for (int j = 0; j < 6; j++)
                gw_u32(w, o_idx + 4 * t++, tri[j]);
        }
    uint32_t o_vdata = alloc(w, 2 * p + 4), o_topo = alloc(w, 4 + p), o_mesh = alloc(w, gw_struct_size(w, mesh, N(mesh)));
    gw_ptr(w, o_vdata, t_vert);
    gw_u32(w, o_vdata + p, nv);
    gw_ptr(w, o_vdata + p + 4, o_verts);
    ref_array(w, o_topo, 3 * ntri, o_idx);
    put_name(&wr, o_mesh, "tube");
    gw_ptr(w, o_mesh + p, o_vdata);
    gw_ptr(w, o_mesh + 2 * p, o_topo);
    ref_array(w, o_mesh + 3 * p, DEMO_BONES, o_bb);
    uint32_t o_skel = alloc(w, c.ssize), o_mb = alloc(w, p);
    put_name(&wr, o_skel, "chain");
    ref_array(w, o_skel + p, DEMO_BONES, o_bones);
    gw_ptr(w, o_mb, o_mesh);
    uint32_t o_model = alloc(w, gw_struct_size(w, model, N(model)));
    put_name(&wr, o_model, "snake");
    gw_ptr(w, o_model + p, o_skel);
    transform(w, o_model + 2 * p, zero, qid);
    ref_array(w, o_model + 2 * p + 68, 1, o_mb);
    uint32_t o_group = alloc(w, c.gsize);
    put_name(&wr, o_group, "snake");
    ref_array(w, o_group + c.tracks_at, DEMO_BONES, o_tt);
    transform(w, o_group + c.placement_at, zero, qid);
    uint32_t o_anim = alloc(w, c.asize), o_lists = alloc(w, 5 * (size_t)p);
    put_name(&wr, o_anim, "sway");
    gw_f32(w, o_anim + p, 2);
    gw_f32(w, o_anim + p + 4, 1.0f / 30);
    gw_f32(w, o_anim + p + 8, 1);
    ref_array(w, o_anim + p + 12, 1, o_lists);
    gw_ptr(w, o_lists, o_group);
    gw_ptr(w, o_lists + p, o_skel);
    gw_ptr(w, o_lists + 2 * p, o_mesh);
    gw_ptr(w, o_lists + 3 * p, o_model);
    gw_ptr(w, o_lists + 4 * p, o_anim);
    uint32_t o_root = alloc(w, gw_struct_size(w, root, N(root)));
    for (uint32_t k = 0; k < 4; k++)
        ref_array(w, o_root + k * (4 + p), 1, o_lists + (1 + k) * p);
    return chain_file(&wr, "le32", t_root, o_root, size);
}
