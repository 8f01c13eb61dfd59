/* Checks of /granny/root against what fxg_build wrote, through any probe (in-process
 * or mounted). */
#ifndef S3_GR2OBJ_CHECK_H
#define S3_GR2OBJ_CHECK_H

#include "expect.h"
#include "fixture_gr2obj.h"

void check_gr2_objects(const struct probe *p, const struct fxg_result *r, const char *sig);
/* In a wrapped RIG fxg_sample_rig built: /ik_chains/CHAIN/pole.bone links to the bone of
 * the fixture's chain (fx_sample_chains) in the Granny objects, and that bone's Name is
 * the one fxg wrote (bone names read through a compressed section resolve). */
void check_pole_bone(const struct probe *p, const struct fxg_result *r, int chain);

#endif
