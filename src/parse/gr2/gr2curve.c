#include "parse/gr2/gr2curve.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/base/diag.h"
#include "parse/base/err.h"
#include "parse/gr2/gr2std.h"
#include "parse/gr2/gr2walk.h"

/* ---- the formats (docs/formats/gr2anim.md, "Curve formats") ---- */

/* What a member after the header holds: 16-bit integers (Dimension, Padding, the knot
 * scale, the D4n selectors), floats (one, three, four), arrays of floats, u16 or u8. */
enum ck { C_I16, C_F32, C_F32x3, C_F32x4, C_AF32, C_AU16, C_AU8, C_I32 };

struct cfield {
    const char *name;
    enum ck kind;
};

struct cformat {
    const char *name;
    int nf;
    struct cfield f[4];
};

#define KC16 {"KnotsControls", C_AU16}
#define KC8 {"KnotsControls", C_AU8}
#define TRUNC {"OneOverKnotScaleTrunc", C_I16}
#define S3 {"ControlScales", C_F32x3}
#define O3 {"ControlOffsets", C_F32x3}

/* Why a type cannot be used: NOMEM when it could not be made, its own reason when it
 * failed for now (out of memory, section bytes not had: decoded again in a later
 * request), else FORMAT (its bytes are bad). */
static enum s3_err type_failure(const struct gr2_type *t)
{
    if (!t)
        return S3_ERR_NOMEM;
    return t->reason == S3_ERR_NOMEM || t->reason == S3_ERR_IO ? t->reason : S3_ERR_FORMAT;
}

static const struct cformat formats[GR2_CURVE_FORMATS + 1] = {
    {"DaKeyframes32f", 2, {{"Dimension", C_I16}, {"Controls", C_AF32}}},
    {"DaK32fC32f", 3, {{"Padding", C_I16}, {"Knots", C_AF32}, {"Controls", C_AF32}}},
    {"DaIdentity", 1, {{"Dimension", C_I16}}},
    {"DaConstant32f", 2, {{"Padding", C_I16}, {"Controls", C_AF32}}},
    {"D3Constant32f", 2, {{"Padding", C_I16}, {"Controls", C_F32x3}}},
    {"D4Constant32f", 2, {{"Padding", C_I16}, {"Controls", C_F32x4}}},
    {"DaK16uC16u", 3, {TRUNC, {"ControlScaleOffsets", C_AF32}, KC16}},
    {"DaK8uC8u", 3, {TRUNC, {"ControlScaleOffsets", C_AF32}, KC8}},
    {"D4nK16uC15u", 3, {{"ScaleOffsetTableEntries", C_I16}, {"OneOverKnotScale", C_F32}, KC16}},
    {"D4nK8uC7u", 3, {{"ScaleOffsetTableEntries", C_I16}, {"OneOverKnotScale", C_F32}, KC8}},
    {"D3K16uC16u", 4, {TRUNC, S3, O3, KC16}},
    {"D3K8uC8u", 4, {TRUNC, S3, O3, KC8}},
    {"D9I1K16uC16u", 4, {TRUNC, {"ControlScale", C_F32}, {"ControlOffset", C_F32}, KC16}},
    {"D9I3K16uC16u", 4, {TRUNC, S3, O3, KC16}},
    {"D9I1K8uC8u", 4, {TRUNC, {"ControlScale", C_F32}, {"ControlOffset", C_F32}, KC8}},
    {"D9I3K8uC8u", 4, {TRUNC, S3, O3, KC8}},
    {"D3I1K32fC32f", 4, {{"Padding", C_I16}, S3, O3, {"KnotsControls", C_AF32}}},
    {"D3I1K16uC16u", 4, {TRUNC, S3, O3, KC16}},
    {"D3I1K8uC8u", 4, {TRUNC, S3, O3, KC8}},
    /* the old inline layout: no header, these three members */
    {"old inline curve", 3, {{"Degree", C_I32}, {"Knots", C_AF32}, {"Controls", C_AF32}}},
};

#define HEADER_PREFIX "CurveDataHeader_"

const char *gr2_curve_format_name(int format)
{
    return format >= 0 && format <= GR2_CURVE_OLD ? formats[format].name : "unknown";
}

void gr2_curve_free(struct gr2_curve *c)
{
    if (!c)
        return;
    if (c->kmax != c->knots)
        free(c->kmax);
    free(c->knots);
    free(c->controls);
    memset(c, 0, sizeof *c);
}

/* ---- dequantisation ---- */

float gr2_knot_scale_trunc(uint16_t word)
{
    return f32_of_bits((uint32_t)word << 16);
}

void gr2_d4n_range(unsigned entry, double *width, double *offset)
{
    const double r = M_SQRT2;
    static const double w[8] = {1, 0.5, 0.25, 0.25, 0.25, 0.125, 0.125, 0.125};
    static const double o[8] = {-0.5, -0.25, -0.375, -0.125, 0.125, -0.125, -0.0625, 0};
    unsigned e = entry & 7;
    double sign = (entry & 15) >= 8 ? -1 : 1; /* 8-15: entry - 8's range negated */
    *width = sign * w[e] * r;
    *offset = sign * o[e] * r;
}

void gr2_d4n_key(uint16_t selectors, uint32_t a, uint32_t b, uint32_t c, int bits, double q[4])
{
    uint32_t top = 1u << bits, mask = top - 1;
    unsigned omitted = ((b & top) ? 2u : 0u) | ((c & top) ? 1u : 0u);
    uint32_t word[3] = {a & mask, b & mask, c & mask};
    double sum = 0;
    for (unsigned s = 0; s < 3; s++) {
        unsigned comp = (omitted + 1 + s) & 3;
        double width, offset;
        gr2_d4n_range((selectors >> (4 * comp)) & 15, &width, &offset);
        q[comp] = word[s] * width / mask + offset;
        sum += q[comp] * q[comp];
    }
    double rest = 1 - sum; /* hostile words can make it negative */
    q[omitted] = (a & top ? -1 : 1) * sqrt(rest > 0 ? rest : 0);
}

/* ---- reading the members ---- */

struct field {
    int32_t i;    /* C_I16 (as stored: Dimension is signed, the others unsigned words), C_I32 */
    float f[4];   /* C_F32 (f[0]), C_F32x3, C_F32x4 */
    const uint8_t *arr; /* arrays: count elements of esize bytes */
    uint32_t count, esize;
};

static bool int_of_size(uint32_t type, uint32_t size)
{
    switch (type) {
    case GR2_INT8:
    case GR2_UINT8:
        return size == 1;
    case GR2_INT16:
    case GR2_UINT16:
        return size == 2;
    case GR2_INT32:
    case GR2_UINT32:
        return size == 4;
    default:
        return false;
    }
}

static const char *kind_text(enum ck k)
{
    static const char *const t[] = {"a 16-bit integer", "a Real32", "Real32[3]", "Real32[4]", "an array of Real32",
                                    "an array of UInt16", "an array of UInt8", "a 32-bit integer"};
    return t[k];
}

/* An array member whose elements are one scalar of the wanted kind (why: copied into
 * whybuf when it lives in a local). FORMAT with why untouched: not of that kind. */
static enum s3_err read_array(struct gr2_types *reg, const struct gr2_space *sp, const struct gr2_member *m,
                              struct gr2_ref obj, enum ck kind, struct field *f, const char **why, char *whybuf,
                              size_t whylen)
{
    if (m->type != GR2_REF_TO_ARRAY || m->array_width != 0)
        return S3_ERR_FORMAT;
    struct gr2_elem e;
    gr2_resolve(reg, sp, m, obj.section, obj.offset + m->offset, &e);
    if (e.kind == GR2_EK_NULL)
        return S3_OK;
    if (e.kind == GR2_EK_ERROR) { /* e.why may point into e itself */
        snprintf(whybuf, whylen, "%s", e.why);
        *why = whybuf;
        return e.reason;
    }
    if (e.kind != GR2_EK_ARRAY)
        return S3_ERR_FORMAT;
    const struct gr2_type *et = gr2_type_get(reg, sp, e.type);
    uint32_t want = kind == C_AF32 ? 4 : kind == C_AU16 ? 2 : 1;
    if (!et || !et->ok)
        return type_failure(et);
    if (et->nmembers < 1 || et->size != want)
        return S3_ERR_FORMAT;
    uint32_t t0 = et->m[0].type;
    if (kind == C_AF32 ? t0 != GR2_REAL32 : !int_of_size(t0, want))
        return S3_ERR_FORMAT;
    enum s3_err err = gr2_bytes_at(sp, e.obj.section, e.obj.offset, (uint64_t)e.count * want, &f->arr, why);
    if (err)
        return err;
    f->count = e.count;
    f->esize = want;
    return S3_OK;
}

/* Reads field `fi` of format `fmt` from the struct at obj (type t; members after the
 * header, found by name, or by place when the type has no names). */
static enum s3_err read_field(struct gr2_types *reg, const struct gr2_space *sp, const struct gr2_type *t,
                              struct gr2_ref obj, int fmt, int fi, struct field *f, char *err, size_t errlen)
{
    const struct cfield *cf = &formats[fmt].f[fi];
    int first = fmt == GR2_CURVE_OLD ? 0 : 1; /* after the header */
    const struct gr2_member *m = gr2_type_unnamed(t) ? ((uint32_t)(first + fi) < t->nmembers ? &t->m[first + fi] : NULL)
                                                     : gr2_find_member(t, cf->name);
    memset(f, 0, sizeof *f);
    if (!m)
        return s3_fail(S3_ERR_FORMAT, err, errlen, "%s: no member %s", formats[fmt].name, cf->name);
    const char *why = NULL;
    char whybuf[160];
    const uint8_t *b;
    enum s3_err rc = gr2_bytes_at(sp, obj.section, obj.offset + m->offset, m->size, &b, &why);
    bool be = sp->g->be;
    if (!rc) {
        rc = S3_ERR_FORMAT; /* until the member is the kind wanted */
        switch (cf->kind) {
        case C_I16:
            if (int_of_size(m->type, 2) && m->array_width == 0) {
                f->i = m->type == GR2_INT16 ? (int16_t)ld_u16(b, be) : ld_u16(b, be);
                rc = S3_OK;
            }
            break;
        case C_I32:
            if (int_of_size(m->type, 4) && m->array_width == 0) {
                f->i = (int32_t)ld_u32(b, be);
                rc = S3_OK;
            }
            break;
        case C_F32:
        case C_F32x3:
        case C_F32x4: {
            int n = cf->kind == C_F32 ? 0 : cf->kind == C_F32x3 ? 3 : 4;
            if (m->type == GR2_REAL32 && m->array_width == n) {
                for (int k = 0; k < (n ? n : 1); k++)
                    f->f[k] = f32_of_bits(ld_u32(b + 4 * k, be));
                rc = S3_OK;
            }
            break;
        }
        default:
            rc = read_array(reg, sp, m, obj, cf->kind, f, &why, whybuf, sizeof whybuf);
        }
    }
    if (rc && why)
        return s3_fail(rc, err, errlen, "%s: %s: %s", formats[fmt].name, cf->name, why);
    if (rc)
        return s3_fail(rc, err, errlen, "%s: member %s is %s%s, not %s", formats[fmt].name, cf->name,
                       gr2_member_type_name(m->type), m->array_width ? "[]" : "", kind_text(cf->kind));
    return S3_OK;
}

/* ---- decoding ---- */

static uint32_t word_at(const struct field *f, uint32_t i, bool be)
{
    const uint8_t *p = f->arr + (size_t)i * f->esize;
    return f->esize == 1 ? p[0] : f->esize == 2 ? ld_u16(p, be) : ld_u32(p, be);
}

static double float_at(const struct field *f, uint32_t i, bool be)
{
    return f32_of_bits(ld_u32(f->arr + (size_t)i * 4, be));
}

static enum s3_err alloc_curve(struct gr2_curve *c, uint32_t n, uint32_t dim, bool knots, char *err, size_t errlen)
{
    if (dim > GR2_CURVE_MAX_DIM)
        return s3_fail(S3_ERR_LIMIT, err, errlen, "%s: %" PRIu32 " values per control, more than %d",
                       formats[c->format].name, dim, GR2_CURVE_MAX_DIM);
    c->n = n;
    c->dim = dim;
    size_t nv = (size_t)n * dim;
    c->controls = alloc_array(nv, sizeof *c->controls);
    c->knots = knots ? alloc_array(n, sizeof *c->knots) : NULL;
    if (!c->controls || (knots && !c->knots))
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    return S3_OK;
}

/* Knots from N words divided by scale (or raw floats when scale is 0 and the words are
 * Real32), as float32 values, as Granny holds them. */
static enum s3_err read_knots(struct gr2_curve *c, const struct field *kc, uint32_t n, float scale, bool be, char *err,
                              size_t errlen)
{
    if (kc->esize != 4 && n > 0 && !(scale > 0 && isfinite(scale)))
        return s3_fail(S3_ERR_FORMAT, err, errlen, "%s: knot scale %g is not a positive number",
                       formats[c->format].name, (double)scale);
    for (uint32_t i = 0; i < n; i++) {
        float k = kc->esize == 4 ? (float)float_at(kc, i, be) : (float)word_at(kc, i, be) / scale;
        if (!isfinite(k))
            return s3_fail(S3_ERR_FORMAT, err, errlen, "%s: knot %" PRIu32 " is not a finite number",
                           formats[c->format].name, i);
        c->knots[i] = k;
    }
    return S3_OK;
}

static enum s3_err whole(const struct gr2_curve *c, uint32_t len, uint32_t per, const char *what, char *err,
                         size_t errlen)
{
    if (per == 0 || len % per)
        return s3_fail(S3_ERR_FORMAT, err, errlen, "%s: %" PRIu32 " %s are not a whole number of keys of %" PRIu32,
                       formats[c->format].name, len, what, per);
    return S3_OK;
}

/* Formats 6 and 7: dim = len(SO)/2; N knot words, then N keys of dim words. */
static enum s3_err decode_da_quantised(struct gr2_curve *c, const struct field *f, bool be, char *err, size_t errlen)
{
    const struct field *so = &f[1], *kc = &f[2];
    if (so->count % 2)
        return s3_fail(S3_ERR_FORMAT, err, errlen, "%s: %" PRIu32 " control scales and offsets, not pairs",
                       formats[c->format].name, so->count);
    uint32_t dim = so->count / 2;
    enum s3_err e = whole(c, kc->count, dim + 1, "knot and control words", err, errlen);
    if (e)
        return e;
    uint32_t n = kc->count / (dim + 1);
    if ((e = alloc_curve(c, n, dim, true, err, errlen)) ||
        (e = read_knots(c, kc, n, gr2_knot_scale_trunc((uint16_t)f[0].i), be, err, errlen)))
        return e;
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < dim; j++)
            c->controls[(size_t)i * dim + j] =
                word_at(kc, n + i * dim + j, be) * float_at(so, j, be) + float_at(so, dim + j, be);
    return S3_OK;
}

static enum s3_err decode_d4n(struct gr2_curve *c, const struct field *f, bool be, char *err, size_t errlen)
{
    const struct field *kc = &f[2];
    enum s3_err e = whole(c, kc->count, 4, "knot and control words", err, errlen);
    if (e)
        return e;
    uint32_t n = kc->count / 4;
    if ((e = alloc_curve(c, n, 4, true, err, errlen)) || (e = read_knots(c, kc, n, f[1].f[0], be, err, errlen)))
        return e;
    int bits = kc->esize == 2 ? 15 : 7;
    for (uint32_t i = 0; i < n; i++)
        gr2_d4n_key((uint16_t)f[0].i, word_at(kc, n + 3 * i, be), word_at(kc, n + 3 * i + 1, be),
                    word_at(kc, n + 3 * i + 2, be), bits, c->controls + 4 * (size_t)i);
    return S3_OK;
}

/* Formats 10-18 but 16: knot words then per key `stored` words (or, 16: floats) that
 * make `dim` values. */
static enum s3_err decode_scaled(struct gr2_curve *c, const struct field *f, bool be, char *err, size_t errlen)
{
    int fmt = c->format;
    bool i1 = fmt == 12 || fmt == 14 || fmt >= 16; /* one stored value per key */
    bool d9 = fmt >= 12 && fmt <= 15;
    uint32_t stored = i1 ? 1 : 3, dim = d9 ? 9 : 3;
    const struct field *kc = &f[3];
    enum s3_err e = whole(c, kc->count, stored + 1, "knot and control words", err, errlen);
    if (e)
        return e;
    uint32_t n = kc->count / (stored + 1);
    float scale = fmt == 16 ? 0 : gr2_knot_scale_trunc((uint16_t)f[0].i);
    if ((e = alloc_curve(c, n, dim, true, err, errlen)) || (e = read_knots(c, kc, n, scale, be, err, errlen)))
        return e;
    bool one_pair = fmt == 12 || fmt == 14; /* ControlScale, ControlOffset: one each */
    for (uint32_t i = 0; i < n; i++) {
        double v[3];
        for (uint32_t j = 0; j < 3; j++) {
            uint32_t at = n + i * stored + (i1 ? 0 : j);
            double q = fmt == 16 ? float_at(kc, at, be) : (double)word_at(kc, at, be);
            double s = one_pair ? f[1].f[0] : f[1].f[j], o = one_pair ? f[2].f[0] : f[2].f[j];
            v[j] = q * s + o;
        }
        double *out = c->controls + (size_t)i * dim;
        if (d9) { /* diag(v0, v1, v2); I1: all three the same value */
            memset(out, 0, 9 * sizeof *out);
            out[0] = v[0];
            out[4] = v[1];
            out[8] = v[2];
        } else {
            memcpy(out, v, sizeof v);
        }
    }
    return S3_OK;
}

static enum s3_err copy_floats(struct gr2_curve *c, const struct field *a, uint32_t from, bool be)
{
    for (size_t i = 0; i < (size_t)c->n * c->dim; i++)
        c->controls[i] = float_at(a, from + (uint32_t)i, be);
    return S3_OK;
}

static enum s3_err decode_fields(struct gr2_curve *c, const struct field *f, bool be, char *err, size_t errlen)
{
    enum s3_err e;
    switch (c->format) {
    case 0: /* DaKeyframes32f: raw samples; their times are not known */
        c->dimension = f[0].i;
        if (f[0].i <= 0 && f[1].count)
            return s3_fail(S3_ERR_FORMAT, err, errlen, "DaKeyframes32f: Dimension %d with %" PRIu32 " values", f[0].i,
                           f[1].count);
        if (f[0].i > 0 && (e = whole(c, f[1].count, (uint32_t)f[0].i, "values", err, errlen)))
            return e;
        c->kind = GR2_CURVE_SAMPLES;
        if ((e = alloc_curve(c, f[0].i > 0 ? f[1].count / (uint32_t)f[0].i : 0, f[0].i > 0 ? (uint32_t)f[0].i : 0,
                             false, err, errlen)))
            return e;
        return copy_floats(c, &f[1], 0, be);
    case 1:
    case GR2_CURVE_OLD: {
        const struct field *k = &f[1], *v = &f[2];
        if (c->format == GR2_CURVE_OLD)
            c->degree = f[0].i;
        if (k->count == 0 && v->count > 0) { /* raw samples at the oversampled rate (unconfirmed) */
            c->kind = c->format == GR2_CURVE_OLD ? GR2_CURVE_KNOTS : GR2_CURVE_SAMPLES;
            if (c->format == GR2_CURVE_OLD) /* a curve with no knots is the identity of its role */
                return alloc_curve(c, 0, 0, true, err, errlen);
            if ((e = alloc_curve(c, v->count, 1, false, err, errlen)))
                return e;
            return copy_floats(c, v, 0, be);
        }
        if (k->count && (e = whole(c, v->count, k->count, "control values for the knots", err, errlen)))
            return e;
        uint32_t dim = k->count ? v->count / k->count : 0;
        if ((e = alloc_curve(c, k->count, dim, true, err, errlen)) ||
            (e = read_knots(c, k, k->count, 0, be, err, errlen)))
            return e;
        return copy_floats(c, v, 0, be);
    }
    case 2:
        c->kind = GR2_CURVE_IDENTITY;
        c->dimension = f[0].i;
        return alloc_curve(c, 0, 0, false, err, errlen);
    case 3:
    case 4:
    case 5: {
        uint32_t dim = c->format == 3 ? f[1].count : c->format == 4 ? 3 : 4;
        c->kind = GR2_CURVE_CONSTANT;
        if ((e = alloc_curve(c, 1, dim, false, err, errlen)))
            return e;
        for (uint32_t j = 0; j < dim; j++)
            c->controls[j] = c->format == 3 ? float_at(&f[1], j, be) : f[1].f[j];
        return S3_OK;
    }
    case 6:
    case 7:
        return decode_da_quantised(c, f, be, err, errlen);
    case 8:
    case 9:
        return decode_d4n(c, f, be, err, errlen);
    default:
        return decode_scaled(c, f, be, err, errlen);
    }
}

/* The knot search needs prefix maxima: the first knot after t is the first place where
 * they exceed t, knots sorted or not. */
static enum s3_err finish_knots(struct gr2_curve *c, char *err, size_t errlen)
{
    c->sorted = true;
    for (uint32_t i = 1; c->knots && i < c->n; i++)
        if (c->knots[i] < c->knots[i - 1])
            c->sorted = false;
    if (c->sorted) {
        c->kmax = c->knots;
        return S3_OK;
    }
    c->kmax = malloc(c->n * sizeof *c->kmax);
    if (!c->kmax)
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    for (uint32_t i = 0; i < c->n; i++)
        c->kmax[i] = i && c->kmax[i - 1] > c->knots[i] ? c->kmax[i - 1] : c->knots[i];
    return S3_OK;
}

/* The format of a CurveData type: from its header member's name, else the Format byte. */
static enum s3_err curve_format(struct gr2_types *reg, const struct gr2_space *sp, const struct gr2_type *t,
                                struct gr2_ref obj, struct gr2_curve *c, char *err, size_t errlen)
{
    const struct gr2_member *h = t->nmembers ? &t->m[0] : NULL;
    const struct gr2_type *ht = h && h->type == GR2_INLINE && h->has_ref_type ? gr2_type_get(reg, sp, h->ref_type) : NULL;
    if (!ht || !gr2_std_matches(ht, GR2_STD_CURVEHEADER))
        return s3_fail(S3_ERR_FORMAT, err, errlen,
                       "not a curve: the first member is not an Inline {Format, Degree} header");
    const struct gr2_member *fm = gr2_std_find(ht, GR2_STD_CURVEHEADER, "Format");
    const struct gr2_member *dm = gr2_std_find(ht, GR2_STD_CURVEHEADER, "Degree");
    const char *why;
    const uint8_t *b;
    enum s3_err e = gr2_bytes_at(sp, obj.section, obj.offset, t->size, &b, &why);
    if (e)
        return s3_fail(e, err, errlen, "curve: %s", why);
    if (!fm || !dm)
        return s3_fail(S3_ERR_FORMAT, err, errlen, "curve header without Format and Degree members");
    int byte = b[h->offset + fm->offset];
    c->degree = b[h->offset + dm->offset];
    c->format = -1;
    if (h->name) {
        size_t pl = strlen(HEADER_PREFIX);
        if (h->name_len <= pl || strncmp(h->name, HEADER_PREFIX, pl) != 0)
            return s3_fail(S3_ERR_UNSUPPORTED, err, errlen, "unknown curve layout: header member %.*s",
                           (int)(h->name_len < 80 ? h->name_len : 80), h->name);
        for (int k = 0; k < GR2_CURVE_FORMATS; k++)
            if (strlen(formats[k].name) == h->name_len - pl && memcmp(h->name + pl, formats[k].name, h->name_len - pl) == 0)
                c->format = k;
        if (c->format < 0)
            return s3_fail(S3_ERR_UNSUPPORTED, err, errlen, "unknown curve format %.*s (Format byte %d)",
                           (int)(h->name_len < 80 ? h->name_len : 80), h->name, byte);
        c->by_name = true;
    } else if (byte < GR2_CURVE_FORMATS) {
        c->format = byte;
    } else {
        return s3_fail(S3_ERR_UNSUPPORTED, err, errlen, "unknown curve format byte %d (the header has no name)", byte);
    }
    return S3_OK;
}

enum s3_err gr2_curve_read(struct gr2_types *reg, const struct gr2_space *sp, const struct gr2_curve_ref *r,
                           struct gr2_curve *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->dimension = -1;
    const struct gr2_type *t = gr2_type_get(reg, sp, r->type);
    const char *why;
    const uint8_t *b;
    if (!t)
        return s3_fail(S3_ERR_NOMEM, err, errlen, "curve type: out of memory");
    if (!t->ok)
        return s3_fail(type_failure(t), err, errlen, "curve type: %s", t->err);
    enum s3_err e = gr2_bytes_at(sp, r->obj.section, r->obj.offset, t->size, &b, &why);
    if (e)
        return s3_fail(e, err, errlen, "curve: %s", why);
    if (r->old)
        out->format = GR2_CURVE_OLD;
    else if ((e = curve_format(reg, sp, t, r->obj, out, err, errlen)))
        return e;
    const struct cformat *cf = &formats[out->format];
    struct field f[4];
    for (int i = 0; i < cf->nf; i++)
        if ((e = read_field(reg, sp, t, r->obj, out->format, i, &f[i], err, errlen)))
            return e;
    out->kind = GR2_CURVE_KNOTS;
    if ((e = decode_fields(out, f, sp->g->be, err, errlen)) ||
        (out->kind == GR2_CURVE_KNOTS && (e = finish_knots(out, err, errlen)))) {
        gr2_curve_free(out);
        return e;
    }
    if (out->kind == GR2_CURVE_KNOTS && out->n > 1 && (out->degree < 0 || out->degree > GR2_CURVE_MAX_DEGREE)) {
        int d = out->degree;
        gr2_curve_free(out);
        return s3_fail(S3_ERR_UNSUPPORTED, err, errlen, "%s: degree %d (at most %d is read)", cf->name, d,
                       GR2_CURVE_MAX_DEGREE);
    }
    return S3_OK;
}

/* A type that could not be decoded for lack of memory (or a read of the file that
 * failed) is no answer: the caller's request fails, never takes it as "not a curve". */
static bool type_unanswered(const struct gr2_type *t)
{
    return !t || (!t->ok && (t->reason == S3_ERR_NOMEM || t->reason == S3_ERR_IO));
}

enum s3_err gr2_is_curve_type(struct gr2_types *reg, const struct gr2_space *sp, struct gr2_ref type, bool *is)
{
    *is = false;
    const struct gr2_type *t = gr2_type_get(reg, sp, type);
    if (type_unanswered(t))
        return type_failure(t);
    if (!t->ok || t->nmembers < 1 || t->m[0].type != GR2_INLINE || !t->m[0].has_ref_type)
        return S3_OK;
    const struct gr2_member *h = &t->m[0];
    if (h->name && (h->name_len < strlen(HEADER_PREFIX) || strncmp(h->name, HEADER_PREFIX, strlen(HEADER_PREFIX))))
        return S3_OK;
    const struct gr2_type *ht = gr2_type_get(reg, sp, h->ref_type);
    if (type_unanswered(ht))
        return type_failure(ht);
    *is = gr2_std_matches(ht, GR2_STD_CURVEHEADER);
    return S3_OK;
}

enum s3_err gr2_curve_locate(struct gr2_types *reg, const struct gr2_space *sp, const struct gr2_member *m,
                             struct gr2_ref track, bool old, struct gr2_curve_ref *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (m->type != GR2_INLINE || !m->has_ref_type || m->array_width > 0)
        return s3_fail(S3_ERR_FORMAT, err, errlen, "the curve member is %s, not an Inline struct",
                       gr2_member_type_name(m->type));
    const struct gr2_type *t = gr2_type_get(reg, sp, m->ref_type);
    if (!t)
        return s3_fail(S3_ERR_NOMEM, err, errlen, "curve type: out of memory");
    if (!t->ok)
        return s3_fail(type_failure(t), err, errlen, "curve type: %s", t->err);
    struct gr2_ref at = {track.section, track.offset + m->offset};
    if (old) {
        if (!gr2_std_find(t, GR2_STD_OLDCURVE, "Degree") || !gr2_std_find(t, GR2_STD_OLDCURVE, "Knots") ||
            !gr2_std_find(t, GR2_STD_OLDCURVE, "Controls"))
            return s3_fail(S3_ERR_UNSUPPORTED, err, errlen,
                           "unknown curve layout: type tag 0x%08" PRIx32 " wants the old inline curve "
                           "{Degree, Knots, Controls}, which this member is not",
                           sp->g->type_tag);
        *out = (struct gr2_curve_ref){true, m->ref_type, at};
        return S3_OK;
    }
    const struct gr2_member *cd = gr2_std_find(t, GR2_STD_CURVE2, "CurveData");
    if (!cd || cd->type != GR2_VARIANT_REF)
        return s3_fail(S3_ERR_UNSUPPORTED, err, errlen,
                       "unknown curve layout: the curve member has no CurveData VariantReference");
    struct gr2_elem e;
    gr2_resolve(reg, sp, cd, at.section, at.offset + cd->offset, &e);
    switch (e.kind) {
    case GR2_EK_OBJECT:
        *out = (struct gr2_curve_ref){false, e.type, e.obj};
        return S3_OK;
    case GR2_EK_NULL:
        return s3_fail(S3_ERR_FORMAT, err, errlen, "CurveData is NULL");
    case GR2_EK_UNTYPED:
        return s3_fail(S3_ERR_FORMAT, err, errlen, "CurveData has no type");
    default:
        return s3_fail(e.kind == GR2_EK_ERROR ? e.reason : S3_ERR_FORMAT, err, errlen, "CurveData: %s",
                       e.why ? e.why : "unreadable");
    }
}

/* ---- evaluation (docs/formats/gr2anim.md, "Evaluation") ---- */

uint32_t gr2_role_dim(enum gr2_role role, uint32_t vector_dim)
{
    static const uint32_t dims[] = {3, 4, 9};
    return role == GR2_ROLE_VECTOR ? vector_dim : dims[role];
}

enum s3_err gr2_curve_check(const struct gr2_curve *c, enum gr2_role role, uint32_t vector_dim, char *err,
                            size_t errlen)
{
    const char *name = gr2_curve_format_name(c->format);
    if (c->kind == GR2_CURVE_SAMPLES)
        return s3_fail(S3_ERR_UNSUPPORTED, err, errlen, "%s: raw samples whose times are not known (unconfirmed)",
                       name);
    if (c->kind == GR2_CURVE_IDENTITY || (c->kind == GR2_CURVE_KNOTS && c->n == 0))
        return S3_OK;
    uint32_t want = gr2_role_dim(role, vector_dim);
    if (c->dim != want)
        return s3_fail(S3_ERR_FORMAT, err, errlen, "%s: %" PRIu32 " values per control where %" PRIu32 " are needed",
                       name, c->dim, want);
    return S3_OK;
}

static void identity(enum gr2_role role, uint32_t dim, double *out)
{
    memset(out, 0, dim * sizeof *out);
    if (role == GR2_ROLE_ORIENTATION)
        out[3] = 1;
    else if (role == GR2_ROLE_SCALESHEAR)
        out[0] = out[4] = out[8] = 1;
}

static uint32_t clampi(int64_t i, uint32_t n)
{
    return i < 0 ? 0 : i >= (int64_t)n ? n - 1 : (uint32_t)i;
}

/* k: the first index whose knot is after t (n - 1 when none). */
static uint32_t seek_k(const struct gr2_curve *c, double t, struct gr2_seek *s, struct gr2_work *w)
{
    uint32_t n = c->n, k;
    uint64_t steps = 0;
    if (s && s->valid && t >= s->t && s->k < n) {
        for (k = s->k; k < n - 1 && !(c->kmax[k] > t); k++)
            steps++;
    } else {
        uint32_t lo = 0, hi = n; /* first index in [lo, hi) with kmax > t */
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (c->kmax[mid] > t)
                hi = mid;
            else
                lo = mid + 1;
            steps++;
        }
        k = lo < n ? lo : n - 1;
    }
    if (s)
        *s = (struct gr2_seek){k, t, true};
    if (w)
        w->seek_steps += steps;
    return k;
}

/* The polynomial of span k at x (which may lie outside the span), per component: de Boor
 * with the knot vector shifted by one and indices clamped, and its derivative carried
 * along (dv may be NULL). */
static void span_eval(const struct gr2_curve *c, uint32_t k, double x, double *v, double *dv, struct gr2_work *w)
{
    int d = c->degree;
    uint32_t n = c->n, dim = c->dim;
    const double *T = c->knots;
    double D[GR2_CURVE_MAX_DEGREE + 1], dD[GR2_CURVE_MAX_DEGREE + 1];
    /* what is the same for every component: the controls' rows, the blend factors (and
     * their derivatives) */
    const double *row[GR2_CURVE_MAX_DEGREE + 1];
    double A[GR2_CURVE_MAX_DEGREE + 1][GR2_CURVE_MAX_DEGREE + 1], dA[GR2_CURVE_MAX_DEGREE + 1][GR2_CURVE_MAX_DEGREE + 1];
    if (w)
        w->spans++;
    for (int i = 0; i <= d; i++)
        row[i] = c->controls + (size_t)clampi((int64_t)k - d + i, n) * dim;
    if (d == 2 && !dv) { /* the common case, unrolled: the same steps as below */
        double a21 = 0, a22 = 0, a11 = 0, den;
        int64_t k2 = k;
        if ((den = T[clampi(k2, n)] - T[clampi(k2 - 2, n)]) != 0) /* r 1, i 1 */
            a11 = (x - T[clampi(k2 - 2, n)]) / den;
        if ((den = T[clampi(k2 + 1, n)] - T[clampi(k2 - 1, n)]) != 0) /* r 1, i 2 */
            a21 = (x - T[clampi(k2 - 1, n)]) / den;
        if ((den = T[clampi(k2, n)] - T[clampi(k2 - 1, n)]) != 0) /* r 2, i 2 */
            a22 = (x - T[clampi(k2 - 1, n)]) / den;
        for (uint32_t j = 0; j < dim; j++) {
            double p0 = row[0][j], p1 = row[1][j], p2 = row[2][j];
            double d2 = (1 - a21) * p1 + a21 * p2, d1 = (1 - a11) * p0 + a11 * p1;
            v[j] = (1 - a22) * d1 + a22 * d2;
        }
        return;
    }
    for (int r = 1; r <= d; r++)
        for (int i = d; i >= r; i--) { /* i = jj - (k - d), jj = k down to k - d + r */
            int64_t jj = (int64_t)k - d + i;
            double lo = T[clampi(jj - 1, n)], hi = T[clampi(jj + d - r, n)], den = hi - lo;
            A[r][i] = den != 0 ? (x - lo) / den : 0;
            if (dv)
                dA[r][i] = den != 0 ? 1 / den : 0;
        }
    for (uint32_t j = 0; j < dim; j++) {
        for (int i = 0; i <= d; i++)
            D[i] = row[i][j];
        if (dv) {
            for (int i = 0; i <= d; i++)
                dD[i] = 0;
            for (int r = 1; r <= d; r++)
                for (int i = d; i >= r; i--) {
                    double a = A[r][i];
                    dD[i] = (1 - a) * dD[i - 1] + a * dD[i] + dA[r][i] * (D[i] - D[i - 1]);
                    D[i] = (1 - a) * D[i - 1] + a * D[i];
                }
            dv[j] = dD[d];
        } else {
            for (int r = 1; r <= d; r++)
                for (int i = d; i >= r; i--)
                    D[i] = (1 - A[r][i]) * D[i - 1] + A[r][i] * D[i];
        }
        v[j] = D[d];
    }
}

static void normalise4(double *q)
{
    double len = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    if (len > 0)
        for (int i = 0; i < 4; i++)
            q[i] /= len;
}

void gr2_curve_eval(const struct gr2_curve *c, enum gr2_role role, uint32_t vector_dim, double t, double *out,
                    struct gr2_seek *seek, struct gr2_work *w)
{
    uint32_t dim = gr2_role_dim(role, vector_dim);
    if (c->kind == GR2_CURVE_IDENTITY || c->kind == GR2_CURVE_SAMPLES || (c->kind == GR2_CURVE_KNOTS && c->n == 0)) {
        identity(role, dim, out);
        return;
    }
    if (c->kind == GR2_CURVE_CONSTANT || c->n == 1)
        memcpy(out, c->controls, dim * sizeof *out);
    else
        span_eval(c, seek_k(c, t, seek, w), t, out, NULL, w);
    if (role == GR2_ROLE_ORIENTATION)
        normalise4(out);
}

/* ---- glTF keys (docs/formats/gr2anim.md, "Exporting to glTF exactly") ---- */

/* The channel's values out of the role's: the scale is the diagonal of scale/shear. */
static void project(enum gr2_role role, const double *in, double *out)
{
    if (role == GR2_ROLE_SCALESHEAR) {
        out[0] = in[0];
        out[1] = in[4];
        out[2] = in[8];
    } else {
        memcpy(out, in, (role == GR2_ROLE_ORIENTATION ? 4 : 3) * sizeof *out);
    }
}

double gr2_curve_shear(const struct gr2_curve *c)
{
    if (c->kind == GR2_CURVE_IDENTITY || c->kind == GR2_CURVE_SAMPLES || c->dim != 9)
        return 0;
    static const int off[6] = {1, 2, 3, 5, 6, 7};
    double most = 0;
    for (uint32_t i = 0; i < c->n; i++)
        for (int k = 0; k < 6; k++) {
            double v = fabs(c->controls[(size_t)i * 9 + off[k]]);
            if (isnan(v)) /* reported as such */
                return v;
            if (v > most)
                most = v;
        }
    return most;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The key times: the distinct knots in [0, D], and 0 and D. */
static double *key_times(const struct gr2_curve *c, float D, uint32_t *count)
{
    double *t = malloc(((size_t)c->n + 2) * sizeof *t);
    if (!t)
        return NULL;
    uint32_t m = 0;
    t[m++] = 0;
    for (uint32_t i = 0; i < c->n; i++)
        if (c->knots[i] > 0 && c->knots[i] < D)
            t[m++] = c->knots[i];
    t[m++] = D;
    if (!c->sorted)
        qsort(t, m, sizeof *t, cmp_double);
    uint32_t u = 0;
    for (uint32_t i = 0; i < m; i++)
        if (u == 0 || t[i] != t[u - 1])
            t[u++] = t[i];
    *count = u;
    return t;
}

/* One end of a span: the channel's value and its derivative (per second). */
struct end {
    double v[4], d[4];
};

struct keybuf {
    struct mdl_keys *k;
    int nc;
    uint32_t cap;
    bool cubic;
};

static void put_key(struct keybuf *b, double t, const double *in, const double *v, const double *out)
{
    struct mdl_keys *k = b->k;
    size_t per = (size_t)(b->cubic ? 3 : 1) * b->nc;
    k->times[k->n] = (float)t;
    float *p = k->values + k->n * per;
    for (int j = 0; j < b->nc; j++) {
        if (b->cubic) {
            p[j] = (float)(in ? in[j] : 0);
            p[b->nc + j] = (float)v[j];
            p[2 * b->nc + j] = (float)(out ? out[j] : 0);
        } else {
            p[j] = (float)v[j];
        }
    }
    k->n++;
}

static bool same(const double *a, const double *b, int nc)
{
    for (int j = 0; j < nc; j++)
        if (fabs(a[j] - b[j]) > 1e-9 * (1 + fabs(a[j]) + fabs(b[j])))
            return false;
    return true;
}

/* The two ends of the span used on (a, b), as the channel's values; rotations rescaled
 * on the span by the positive linear factor that makes both ends unit, so that the cubic
 * keys are unit quaternions and their normalised Hermite is still Granny's curve. */
static enum s3_err span_ends(const struct gr2_curve *c, enum gr2_role role, uint32_t k, double a, double b,
                             struct end *L, struct end *R, struct gr2_work *w, char *err, size_t errlen)
{
    double v[9], dv[9];
    span_eval(c, k, a, v, dv, w);
    project(role, v, L->v);
    project(role, dv, L->d);
    span_eval(c, k, b, v, dv, w);
    project(role, v, R->v);
    project(role, dv, R->d);
    if (role != GR2_ROLE_ORIENTATION)
        return S3_OK;
    double la = sqrt(L->v[0] * L->v[0] + L->v[1] * L->v[1] + L->v[2] * L->v[2] + L->v[3] * L->v[3]);
    double lb = sqrt(R->v[0] * R->v[0] + R->v[1] * R->v[1] + R->v[2] * R->v[2] + R->v[3] * R->v[3]);
    if (!(la > 0) || !(lb > 0))
        return s3_fail(S3_ERR_FORMAT, err, errlen, "the orientation is zero (or not a number) at %.9g s",
                       !(la > 0) ? a : b);
    double sa = 1 / la, sb = 1 / lb, ds = (sb - sa) / (b - a);
    for (int j = 0; j < 4; j++) {
        L->d[j] = L->d[j] * sa + L->v[j] * ds;
        R->d[j] = R->d[j] * sb + R->v[j] * ds;
        L->v[j] *= sa;
        R->v[j] *= sb;
    }
    return S3_OK;
}

static enum s3_err keys_alloc(struct keybuf *b, uint32_t cap, char *err, size_t errlen)
{
    size_t per = (size_t)(b->cubic ? 3 : 1) * b->nc;
    b->k->times = malloc(cap * sizeof *b->k->times);
    b->k->values = malloc(cap * per * sizeof *b->k->values);
    b->cap = cap;
    if (!b->k->times || !b->k->values)
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    return S3_OK;
}

static enum s3_err constant_keys(const struct gr2_curve *c, enum gr2_role role, float D, struct keybuf *b, char *err,
                                 size_t errlen)
{
    double v[9], p[4];
    gr2_curve_eval(c, role, 0, 0, v, NULL, NULL);
    project(role, v, p);
    if (role == GR2_ROLE_ORIENTATION && p[0] == 0 && p[1] == 0 && p[2] == 0 && p[3] == 0)
        return s3_fail(S3_ERR_FORMAT, err, errlen, "the orientation is zero");
    b->k->interp = MDL_LINEAR;
    b->cubic = false;
    enum s3_err e = keys_alloc(b, 2, err, errlen);
    if (e)
        return e;
    put_key(b, 0, NULL, p, NULL);
    if (D > 0)
        put_key(b, D, NULL, p, NULL);
    return S3_OK;
}

static enum s3_err check_finite(const struct mdl_keys *k, char *err, size_t errlen)
{
    size_t nv = (size_t)k->n * (size_t)k->ncomp * (k->interp == MDL_CUBICSPLINE ? 3 : 1);
    for (size_t i = 0; i < nv; i++)
        if (!isfinite(k->values[i]))
            return s3_fail(S3_ERR_FORMAT, err, errlen, "a value is not a finite number");
    return S3_OK;
}

static enum s3_err spline_keys(const struct gr2_curve *c, enum gr2_role role, float D, struct keybuf *b,
                               struct gr2_work *w, char *err, size_t errlen)
{
    uint32_t nk;
    double *t = key_times(c, D, &nk);
    if (!t)
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    int d = c->degree;
    b->k->interp = d == 0 ? MDL_STEP : d == 1 && role != GR2_ROLE_ORIENTATION ? MDL_LINEAR : MDL_CUBICSPLINE;
    b->cubic = b->k->interp == MDL_CUBICSPLINE;
    enum s3_err rc = keys_alloc(b, 2 * nk, err, errlen);
    struct gr2_seek seek = {0};
    struct end L, R, prevR;
    for (uint32_t i = 0; rc == S3_OK && i + 1 < nk; i++) {
        uint32_t k = seek_k(c, t[i], &seek, w);
        rc = span_ends(c, role, k, t[i], t[i + 1], &L, &R, w, err, errlen);
        if (rc)
            break;
        if (i == 0) {
            put_key(b, t[i], NULL, L.v, L.d);
        } else if (b->k->interp == MDL_STEP || same(prevR.v, L.v, b->nc)) {
            put_key(b, t[i], prevR.d, L.v, L.d);
        } else {
            /* a jump (a knot of full multiplicity): Granny takes the value after it at the
             * knot itself, so the value before it ends one float step earlier */
            float before = nextafterf((float)t[i], -INFINITY);
            if (before > b->k->times[b->k->n - 1])
                put_key(b, before, prevR.d, prevR.v, NULL);
            put_key(b, t[i], NULL, L.v, L.d);
        }
        prevR = R;
    }
    if (rc == S3_OK && b->k->interp == MDL_STEP) { /* what holds at D itself */
        double v[9];
        gr2_curve_eval(c, role, 0, D, v, &seek, w);
        project(role, v, prevR.v);
    }
    if (rc == S3_OK)
        put_key(b, D, prevR.d, prevR.v, NULL);
    free(t);
    return rc;
}

enum s3_err gr2_curve_keys(const struct gr2_curve *c, enum gr2_role role, double duration, struct mdl_keys *out,
                           struct gr2_work *w, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (role == GR2_ROLE_VECTOR)
        return s3_fail(S3_ERR_UNSUPPORTED, err, errlen, "vector curves have no glTF channel");
    out->ncomp = role == GR2_ROLE_ORIENTATION ? 4 : 3;
    struct keybuf b = {out, out->ncomp, 0, false};
    enum s3_err rc = gr2_curve_check(c, role, 0, err, errlen);
    if (rc)
        return rc;
    if (!(duration >= 0) || !isfinite(duration))
        return s3_fail(S3_ERR_FORMAT, err, errlen, "Duration %g is not a number of seconds", duration);
    float D = (float)duration;
    bool constant = c->kind != GR2_CURVE_KNOTS || c->n <= 1 || D == 0;
    if (constant) {
        rc = constant_keys(c, role, D, &b, err, errlen);
    } else if (c->degree > (role == GR2_ROLE_ORIENTATION ? 2 : 3)) {
        rc = s3_fail(S3_ERR_UNSUPPORTED, err, errlen, "%s: degree %d, which cubic glTF keys cannot hold exactly",
                     gr2_curve_format_name(c->format), c->degree);
    } else {
        rc = spline_keys(c, role, D, &b, w, err, errlen);
    }
    if (rc == S3_OK)
        rc = check_finite(out, err, errlen);
    if (rc)
        mdl_keys_free(out);
    return rc;
}

/* ---- sampled LINEAR keys (docs/formats/gr2anim.md, "glTF for importers without
 * CUBICSPLINE") ---- */

/* The channel's value on the span polynomial k at x: projected, rotations normalised. */
static void chan_at(const struct gr2_curve *c, enum gr2_role role, uint32_t k, double x, double *out,
                    struct gr2_work *w)
{
    double v[9];
    span_eval(c, k, x, v, NULL, w);
    project(role, v, out);
    if (role == GR2_ROLE_ORIENTATION)
        normalise4(out);
}

/* glTF's slerp between two written keys, the parts that do not depend on where. */
struct slerp {
    double th, inv_sin, sb; /* the angle between them, 1 / its sine, the sign taking the short way */
};

static struct slerp slerp_of(const float *a, const float *b)
{
    double dot = 0;
    for (int j = 0; j < 4; j++)
        dot += (double)a[j] * b[j];
    double th = acos(fmin(1, fabs(dot)));
    return (struct slerp){th, th > 1e-9 ? 1 / sin(th) : 0, dot < 0 ? -1 : 1};
}

/* How far glTF's LINEAR interpolation of the written keys a, b (floats as written;
 * rotations: slerp along the shorter arc, sl) is at s from the curve's value want:
 * degrees between the rotations, the largest component difference otherwise. */
static double lin_error(bool rotation, int nc, const float *a, const float *b, const struct slerp *sl, double s,
                        const double *want)
{
    if (rotation) {
        double wa = 1 - s, wb = s, got[4];
        if (sl->inv_sin != 0) {
            wa = sin((1 - s) * sl->th) * sl->inv_sin;
            wb = sin(s * sl->th) * sl->inv_sin;
        }
        for (int j = 0; j < 4; j++)
            got[j] = wa * a[j] + sl->sb * wb * b[j];
        normalise4(got);
        double dw = 0, dist = 0;
        for (int j = 0; j < 4; j++)
            dw += got[j] * want[j];
        for (int j = 0; j < 4; j++) { /* the chord between the two unit quaternions */
            double d = got[j] - (dw < 0 ? -want[j] : want[j]);
            dist += d * d;
        }
        /* as the angle between the rotations, 4 asin(chord / 2): 2 chord when small
         * (4e-6 relative below a chord of 0.01, about 1.1 degrees) */
        double chord = sqrt(dist);
        return (chord < 1e-2 ? 2 * chord : 4 * asin(fmin(1, chord / 2))) * (180 / M_PI);
    }
    double most = 0;
    for (int j = 0; j < nc; j++) {
        double d = fabs((1 - s) * a[j] + s * b[j] - want[j]);
        if (!(d <= most)) /* NaN too */
            most = d;
    }
    return most;
}

/* One piece of a span being subdivided: its ends' times and written values. */
struct piece {
    float t0, t1;
    float v0[4], v1[4];
};

struct linbuf {
    struct mdl_keys *k;
    int nc;
    bool rotation;
    size_t cap;
    uint64_t limit; /* keys at most (the whole channel) */
};

/* Appends a key (values as floats; a rotation turned to the hemisphere of the key before,
 * the same rotation, so importers that lerp components take the short way too). */
static enum s3_err lin_put(struct linbuf *b, float t, const float *v, char *err, size_t errlen)
{
    struct mdl_keys *k = b->k;
    if (k->n == b->cap) {
        if ((uint64_t)b->cap >= b->limit)
            return s3_fail(S3_ERR_LIMIT, err, errlen, "more than %" PRIu64 " keys", b->limit);
        size_t cap = b->cap ? 2 * b->cap : 64;
        if (cap > b->limit)
            cap = (size_t)b->limit;
        float *nt = realloc(k->times, cap * sizeof *nt);
        if (nt)
            k->times = nt;
        float *nv = nt ? realloc(k->values, cap * (size_t)b->nc * sizeof *nv) : NULL;
        if (!nv)
            return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
        k->values = nv;
        b->cap = cap;
    }
    float *p = k->values + (size_t)k->n * b->nc;
    double dot = 0;
    for (int j = 0; b->rotation && k->n > 0 && j < 4; j++)
        dot += (double)p[j - b->nc] * v[j];
    for (int j = 0; j < b->nc; j++)
        p[j] = dot < 0 ? -v[j] : v[j];
    k->times[k->n++] = t;
    return S3_OK;
}

static void to_floats(const double *v, int nc, float *out)
{
    for (int j = 0; j < nc; j++)
        out[j] = (float)v[j];
}

/* How far glTF's interpolation of piece p is from the curve (span k), judged at the
 * midpoints of the piece's halves. Over a short piece the error is a parabola (the
 * curve's sag: there it is 3/4 of its top, returned as its top) plus, for rotations, a
 * timing error that is odd about the middle (lerp-then-normalise follows slerp's arc at
 * another speed: nothing at the midpoint), which the two points see. */
static double piece_error(const struct gr2_curve *c, enum gr2_role role, uint32_t k, const struct piece *p,
                          const struct linbuf *b, struct gr2_work *w)
{
    double most = 0;
    struct slerp sl = {0, 0, 1};
    if (b->rotation)
        sl = slerp_of(p->v0, p->v1);
    for (int q = 1; q <= 3; q += 2) {
        float t = (float)(p->t0 + ((double)p->t1 - p->t0) * q / 4);
        if (!(t > p->t0 && t < p->t1))
            continue; /* no float between */
        double want[4];
        chan_at(c, role, k, t, want, w);
        double e = lin_error(b->rotation, b->nc, p->v0, p->v1, &sl, ((double)t - p->t0) / ((double)p->t1 - p->t0),
                             want);
        if (!(e <= most))
            most = e;
    }
    return most * (4.0 / 3);
}

/* Keys inside (a, b) on span k, so that glTF's linear interpolation between them stays
 * within tol of the curve on every piece (piece_error): a piece off by e,
 * more than half of tol (margin for the points between), is cut into
 * ceil(sqrt(e / (tol / 2))) equal pieces (the count that brings a parabola's sag within
 * it: the pieces follow the bending, not a rate), each checked again the same way, left
 * before right, so keys come in order. At most GR2_LINEAR_MAX_PER_SPAN cut points a span;
 * pieces then left uncut are counted in rep with their error. No recursion: a stack of at
 * most GR2_LINEAR_MAX_PER_SPAN + 1 pieces (each cut adds one). Work: two evaluations a
 * piece popped and one a cut; pieces popped are at most 1 + 2 cuts. */
static enum s3_err subdivide(const struct gr2_curve *c, enum gr2_role role, uint32_t k, const struct piece *whole,
                             double tol, struct linbuf *b, struct gr2_linear *rep, struct gr2_work *w, char *err,
                             size_t errlen)
{
    struct piece stack[GR2_LINEAR_MAX_PER_SPAN + 2];
    int top = 0, nc = b->nc;
    uint32_t cuts = 0;
    bool capped = false;
    double worst = 0;
    stack[top++] = *whole;
    while (top > 0) {
        struct piece p = stack[--top];
        float mid = (float)(((double)p.t0 + p.t1) / 2);
        double e = piece_error(c, role, k, &p, b, w);
        bool cut = !(e <= tol / 2) && mid > p.t0 && mid < p.t1;
        uint32_t left = GR2_LINEAR_MAX_PER_SPAN - cuts;
        if (cut && left == 0) {
            cut = false;
            capped = true;
        }
        if (!cut) {
            if (!(e <= worst))
                worst = e;
            enum s3_err put = p.t1 < whole->t1 ? lin_put(b, p.t1, p.v1, err, errlen) : S3_OK;
            if (put)
                return put;
            continue;
        }
        double want_m = ceil(sqrt(e / (tol / 2)));
        uint32_t m = !(want_m < (double)left + 1) ? left + 1 : want_m < 2 ? 2 : (uint32_t)want_m;
        /* the cut points, at distinct float times inside the piece, pushed right to left */
        float tcut[GR2_LINEAR_MAX_PER_SPAN + 1];
        uint32_t nt = 0;
        for (uint32_t j = 1; j < m; j++) {
            float t = (float)(p.t0 + ((double)p.t1 - p.t0) * j / m);
            if (t > (nt ? tcut[nt - 1] : p.t0) && t < p.t1)
                tcut[nt++] = t;
        }
        if (nt == 0) /* no float between: m was 2, and mid is one (tested above) */
            tcut[nt++] = mid;
        cuts += nt;
        struct piece right = p;
        for (uint32_t j = nt; j-- > 0;) {
            double v[4];
            chan_at(c, role, k, tcut[j], v, w);
            struct piece q = {tcut[j], right.t0 == p.t0 ? p.t1 : right.t0, {0}, {0}};
            to_floats(v, nc, q.v0);
            memcpy(q.v1, right.t0 == p.t0 ? p.v1 : right.v0, sizeof q.v1);
            stack[top++] = q;
            right = q;
        }
        struct piece first = {p.t0, right.t0, {0}, {0}};
        memcpy(first.v0, p.v0, sizeof first.v0);
        memcpy(first.v1, right.v0, sizeof first.v1);
        stack[top++] = first;
    }
    rep->inserted += cuts;
    if (capped) {
        rep->capped_spans++;
        if (!(worst <= rep->worst))
            rep->worst = worst;
    }
    if (!(worst <= rep->max_error))
        rep->max_error = worst;
    return S3_OK;
}

static enum s3_err linear_spans(const struct gr2_curve *c, enum gr2_role role, float D, double tol, struct linbuf *b,
                                struct gr2_linear *rep, struct gr2_work *w, char *err, size_t errlen)
{
    uint32_t nk;
    double *t = key_times(c, D, &nk);
    if (!t)
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    int nc = b->nc;
    enum s3_err rc = S3_OK;
    struct gr2_seek seek = {0};
    double L[4], R[4], prevR[4];
    for (uint32_t i = 0; rc == S3_OK && i + 1 < nk; i++) {
        uint32_t k = seek_k(c, t[i], &seek, w);
        chan_at(c, role, k, t[i], L, w);
        chan_at(c, role, k, t[i + 1], R, w);
        if (b->rotation && (!(fabs(L[3]) + fabs(L[0]) + fabs(L[1]) + fabs(L[2]) > 0) ||
                            !(fabs(R[3]) + fabs(R[0]) + fabs(R[1]) + fabs(R[2]) > 0))) {
            rc = s3_fail(S3_ERR_FORMAT, err, errlen, "the orientation is zero (or not a number) near %.9g s", t[i]);
            break;
        }
        struct piece whole = {(float)t[i], (float)t[i + 1], {0}, {0}};
        to_floats(L, nc, whole.v0);
        to_floats(R, nc, whole.v1);
        if (i > 0 && !same(prevR, L, nc)) { /* a jump: as in the exact keys */
            float before = nextafterf((float)t[i], -INFINITY), pv[4];
            to_floats(prevR, nc, pv);
            if (before > b->k->times[b->k->n - 1])
                rc = lin_put(b, before, pv, err, errlen);
        }
        rep->knot_keys++;
        if (rc == S3_OK)
            rc = lin_put(b, whole.t0, whole.v0, err, errlen);
        if (rc == S3_OK)
            rc = subdivide(c, role, k, &whole, tol, b, rep, w, err, errlen);
        memcpy(prevR, R, sizeof prevR);
    }
    if (rc == S3_OK) {
        float pv[4];
        to_floats(prevR, nc, pv);
        rep->knot_keys++;
        rc = lin_put(b, D, pv, err, errlen);
    }
    free(t);
    return rc;
}

enum s3_err gr2_curve_linear_keys(const struct gr2_curve *c, enum gr2_role role, double duration, struct mdl_keys *out,
                                  struct gr2_linear *rep, struct gr2_work *w, char *err, size_t errlen)
{
    /* what the exact keys write as LINEAR or STEP already is the curve: those as they are
     * (gr2_curve_keys' choice: constants, degree 0, degree 1 but rotations) */
    memset(out, 0, sizeof *out);
    bool exact = role == GR2_ROLE_VECTOR || c->kind != GR2_CURVE_KNOTS || c->n <= 1 || !(duration > 0) ||
                 !isfinite(duration) || (float)duration == 0 || c->degree == 0 ||
                 (c->degree == 1 && role != GR2_ROLE_ORIENTATION);
    enum s3_err rc = exact ? S3_OK : gr2_curve_check(c, role, 0, err, errlen);
    if (exact || rc) {
        if (exact && (rc = gr2_curve_keys(c, role, duration, out, w, err, errlen)) == S3_OK)
            rep->knot_keys += out->n;
        return rc;
    }
    uint32_t nk = c->n + 2;
    out->interp = MDL_LINEAR;
    out->ncomp = role == GR2_ROLE_ORIENTATION ? 4 : 3;
    /* every knot key, one before each jump, and the cuts of every span */
    struct linbuf b = {out, out->ncomp, role == GR2_ROLE_ORIENTATION, 0,
                       2 * (uint64_t)nk * (GR2_LINEAR_MAX_PER_SPAN + 2)};
    double tol = role == GR2_ROLE_ORIENTATION ? GR2_LINEAR_TOL_DEGREES : GR2_LINEAR_TOL;
    rc = linear_spans(c, role, (float)duration, tol, &b, rep, w, err, errlen);
    if (rc == S3_OK)
        rc = check_finite(out, err, errlen);
    if (rc)
        mdl_keys_free(out);
    return rc;
}
