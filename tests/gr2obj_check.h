/* Checks of /granny/root against what fxg_build wrote, through any probe (in-process
 * or mounted). */
#ifndef S3_GR2OBJ_CHECK_H
#define S3_GR2OBJ_CHECK_H

#include "expect.h"
#include "fixture_gr2obj.h"

void check_gr2_objects(const struct probe *p, const struct fxg_result *r, const char *sig);

#endif
