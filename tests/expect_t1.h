/* What a Turok 1 file built by fxt_t1_sample shows under /models and /named, checked
 * through a probe (in-process or through a mount). Expected values come from the
 * fixture's hand-written cases and its own vertex values. */
#ifndef S3_EXPECT_T1_H
#define S3_EXPECT_T1_H

#include <stdbool.h>

#include "expect.h"
#include "fixture_t2fs.h"
#include "tree_probe.h" /* ex_read_text, ex_holds */

void ex_t1_models(const struct probe *p, const struct fxt *root, bool be);

#endif
