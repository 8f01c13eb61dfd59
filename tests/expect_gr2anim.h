/* What the animation fixture (fixture_gr2anim.c) must show, from the test's own reading of
 * shared/formats/gr2anim.md: each stored curve decoded and evaluated here (never by the
 * parser), and the checks of knots.csv, controls.csv, samples.csv and entries.csv through
 * any probe (in-process or a mount). */
#ifndef S3_EXPECT_GR2ANIM_H
#define S3_EXPECT_GR2ANIM_H

#include <stdbool.h>
#include <stdint.h>

#include "expect.h"
#include "fixture_gr2anim.h"

enum ref_kind { REF_KNOTS, REF_IDENTITY, REF_CONSTANT, REF_SAMPLES };

/* A stored curve decoded by the rules. */
struct ref_curve {
    enum ref_kind kind;
    int degree;
    uint32_t n, dim;
    double knots[FXA_MAX];
    double ctrl[9 * FXA_MAX];
};
void ref_decode(const struct fxa_curve *c, struct ref_curve *out);

enum ref_role { ROLE_POS, ROLE_ROT, ROLE_SS, ROLE_VEC };
/* The curve at t by the notes' Evaluation (t not clamped here): 3, 4 (normalised), 9 or
 * dim values. */
void ref_eval(const struct ref_curve *c, enum ref_role role, double t, double *out);

/* The paths of the fixture's tree: member names, or their remapped placeholders. */
struct fxa_paths {
    const char *groups, *transform, *vector, *text, *curve[3], *value_curve, *curve_data;
};
struct fxa_paths fxa_paths_of(const struct fxa_opts *o);

/* Every curve's knots.csv and controls.csv, every track's samples.csv (or samples.error),
 * the text track's entries.csv, the /granny/animations link. */
void ex_gr2anim(const struct probe *p, const struct fxa_opts *o, const struct fxa_result *r);

#endif
