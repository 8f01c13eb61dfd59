/* What the Turok 1 exports of a file built by fxt_t1_sample hold (model.glb, model.obj,
 * sections.error), checked through a probe (in-process or through a mount). Expected
 * values come from the fixture's hand-written cases and its own vertex values. */
#ifndef S3_EXPECT_T1X_H
#define S3_EXPECT_T1X_H

#include <stdbool.h>

#include "expect.h"
#include "fixture_t2fs.h"

void ex_t1_exports(const struct probe *p, bool be);

#endif
