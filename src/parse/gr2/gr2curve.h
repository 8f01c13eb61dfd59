/* Granny animation curves: the 19 CurveData formats (and the old inline layout) decoded
 * into knots and controls, evaluated exactly as Granny does, and turned into glTF keys
 * that reproduce that evaluation. Facts: docs/formats/gr2anim.md ("Curve formats",
 * "D4n quaternions", "Evaluation", "Exporting to glTF exactly"). Pure: bytes come through
 * a gr2_space, types are decoded into the caller's registry. */
#ifndef S3_GR2CURVE_H
#define S3_GR2CURVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parse/gr2/gr2obj.h"
#include "parse/base/model.h"

#define GR2_CURVE_FORMATS 19
#define GR2_CURVE_OLD 19         /* the format number given to the old inline layout */
#define GR2_CURVE_MAX_DEGREE 7   /* higher degrees were never seen; refused */
#define GR2_CURVE_MAX_DIM 256    /* values per control, at most */

/* What a curve is for: its identity, and the values a pose takes from it. */
enum gr2_role {
    GR2_ROLE_POSITION,    /* 3 values; identity (0, 0, 0) */
    GR2_ROLE_ORIENTATION, /* 4 values x, y, z, w, normalised; identity (0, 0, 0, 1) */
    GR2_ROLE_SCALESHEAR,  /* 9 values, a 3x3 matrix row by row; identity the unit matrix */
    GR2_ROLE_VECTOR,      /* a vector track's Dimension values; identity zeros */
};

enum gr2_curve_kind {
    GR2_CURVE_KNOTS,    /* a B-spline: n knots, n controls (n may be 0 or 1) */
    GR2_CURVE_IDENTITY, /* the identity of the curve's role, whatever Dimension says */
    GR2_CURVE_CONSTANT, /* one control */
    GR2_CURVE_SAMPLES,  /* raw samples whose times are not known (unconfirmed): controls only */
};

struct gr2_curve {
    int format;      /* 0..18, or GR2_CURVE_OLD */
    bool by_name;    /* the format came from the header member's name, not the Format byte */
    int degree;
    enum gr2_curve_kind kind;
    uint32_t n;      /* controls (knots too for GR2_CURVE_KNOTS) */
    uint32_t dim;    /* values per control */
    int32_t dimension; /* the stored Dimension (DaIdentity, DaKeyframes32f), else -1 */
    double *knots;   /* n, seconds (float values), GR2_CURVE_KNOTS only */
    double *controls; /* n × dim */
    double *kmax;    /* kmax[i] = max(knots[0..i]): the knot search (== knots when sorted) */
    bool sorted;     /* knots never decrease */
};

const char *gr2_curve_format_name(int format);
void gr2_curve_free(struct gr2_curve *c);

/* ---- dequantisation (pure; the tests recompute the notes' worked numbers) ---- */

/* OneOverKnotScaleTrunc: the upper half of a float32 whose lower half is zero. */
float gr2_knot_scale_trunc(uint16_t word);
/* The range of D4n selector entry e (0..15): value = q × width / max + offset. */
void gr2_d4n_range(unsigned entry, double *width, double *offset);
/* One D4n key: three words a, b, c holding `bits` value bits under a top bit (15 for the
 * 16-bit format, 7 for the 8-bit one), with the curve's selectors, into x, y, z, w. */
void gr2_d4n_key(uint16_t selectors, uint32_t a, uint32_t b, uint32_t c, int bits, double q[4]);

/* ---- reading ---- */

/* Where a track's curve lies: the CurveData object a curve2 member points at, or (files
 * with type tags up to 0x80000010) the old curve stored inline in the track. */
struct gr2_curve_ref {
    bool old;
    struct gr2_ref type, obj;
};
#define GR2_OLD_LAYOUT_LAST_TAG 0x80000010u

/* The curve held by the Inline member m of a track whose bytes start at `track`
 * (old: the old inline layout, by the file's type tag). FORMAT or UNSUPPORTED (a layout
 * this version does not know) with err. */
enum s3_err gr2_curve_locate(struct gr2_types *reg, const struct gr2_space *sp, const struct gr2_member *m,
                             struct gr2_ref track, bool old, struct gr2_curve_ref *out, char *err, size_t errlen);
/* *is: whether the type at `type` is a CurveData type: its first member is an Inline
 * {Format, Degree} header (named CurveDataHeader_<Name> when it has a name). S3_OK, or
 * NOMEM / IO when a type could not be decoded (then *is is false and means nothing). */
enum s3_err gr2_is_curve_type(struct gr2_types *reg, const struct gr2_space *sp, struct gr2_ref type, bool *is);
/* Decodes a curve, or the reason with err: UNSUPPORTED (an unknown format or layout, a
 * degree past GR2_CURVE_MAX_DEGREE), FORMAT (counts that do not fit, a knot scale that is
 * not a positive number ...), LIMIT (too many values per control), RANGE, NOMEM. */
enum s3_err gr2_curve_read(struct gr2_types *reg, const struct gr2_space *sp, const struct gr2_curve_ref *r,
                           struct gr2_curve *out, char *err, size_t errlen);

/* ---- evaluation ---- */

/* Values the role takes (vector: dim). */
uint32_t gr2_role_dim(enum gr2_role role, uint32_t vector_dim);
/* Whether the curve can be evaluated for the role: S3_OK, or with err UNSUPPORTED (raw
 * samples) or FORMAT (a dimension that is not the role's). */
enum s3_err gr2_curve_check(const struct gr2_curve *c, enum gr2_role role, uint32_t vector_dim, char *err,
                            size_t errlen);

/* Work done, counted (tests prove it linear): knot-search steps and span evaluations. */
struct gr2_work {
    uint64_t seek_steps, spans;
};

/* A position in the knots kept between calls, so that increasing times cost a forward
 * step each (start with {0}). */
struct gr2_seek {
    uint32_t k;
    double t;
    bool valid;
};

/* The curve at t (not clamped here: callers clamp t to [0, Duration]) into out (the role's
 * values; gr2_curve_check passed). seek and w may be NULL. */
void gr2_curve_eval(const struct gr2_curve *c, enum gr2_role role, uint32_t vector_dim, double t, double *out,
                    struct gr2_seek *seek, struct gr2_work *w);

/* ---- glTF keys ---- */

/* Keys that make glTF play the curve exactly as Granny evaluates it on [0, duration]
 * (translation: position; rotation: orientation; scale: the diagonal of scale/shear, its
 * off-diagonal terms dropped: gr2_curve_shear says how large they are). S3_OK, or with err
 * FORMAT (a zero orientation, a value not finite), UNSUPPORTED (a vector curve, a degree
 * the cubic keys cannot hold), NOMEM. out is freed by
 * mdl_keys_free. */
enum s3_err gr2_curve_keys(const struct gr2_curve *c, enum gr2_role role, double duration, struct mdl_keys *out,
                           struct gr2_work *w, char *err, size_t errlen);
/* The largest magnitude among a scale/shear curve's off-diagonal control values (what a
 * glTF scale drops; 0 for a diagonal one, NaN when one is NaN). */
double gr2_curve_shear(const struct gr2_curve *c);

/* ---- sampled glTF keys (for importers without CUBICSPLINE) ---- */

#define GR2_LINEAR_TOL_DEGREES 0.01 /* rotations: the angle between glTF's slerp and the curve */
#define GR2_LINEAR_TOL 1e-4         /* translations, scales: per component */
#define GR2_LINEAR_MAX_PER_SPAN 256 /* keys inserted between two knot keys, at most */

/* What sampling a channel did (summed over the calls given the same report). */
struct gr2_linear {
    uint64_t knot_keys; /* keys at knots, 0 and Duration (and before jumps) */
    uint64_t inserted;  /* keys inserted between them */
    uint64_t capped_spans; /* spans where GR2_LINEAR_MAX_PER_SPAN stopped the cutting */
    double worst;       /* the largest error measured in those spans (0 when none) */
    double max_error;   /* the largest error measured on any piece kept */
};

/* LINEAR keys (rotations: glTF's slerp) at every key time of gr2_curve_keys plus keys
 * inserted by cutting each span, each piece checked at its halves' midpoints, recursively,
 * until glTF's interpolation is within GR2_LINEAR_TOL_DEGREES / GR2_LINEAR_TOL of the
 * curve (half of it there, for the points between), at most GR2_LINEAR_MAX_PER_SPAN keys
 * a span. Curves the exact keys write as LINEAR or STEP (degree 0 and 1 positions and
 * scales, constants) get those.
 * Work: at most 7 evaluations a span and 7 an inserted key. S3_OK, or the reason
 * with err (as gr2_curve_keys; LIMIT past the key bound). out is freed by mdl_keys_free. */
enum s3_err gr2_curve_linear_keys(const struct gr2_curve *c, enum gr2_role role, double duration, struct mdl_keys *out,
                                  struct gr2_linear *rep, struct gr2_work *w, char *err, size_t errlen);

#endif
