/* What a Granny export drops to be made (a rest pose's shear), said to users in
 * STEM.warnings beside the export and in /info.
 * - gr2_drop_rest_shear: before exporting a skeleton; it rewrites bones and their ibm.
 * - gr2_add_warnings: at listing, under the tree lock, once per export and directory. */
#ifndef S3_VIEW_GR2NOTES_H
#define S3_VIEW_GR2NOTES_H

#include <stdint.h>

#include "fs/views/gr2/view_granny.h"
#include "parse/base/model.h"

/* Rest transforms with a shear (not translation × rotation × scale) made TRS, the
 * diagonal of their scale/shear as the scale, each named in warn (may be NULL); the
 * inverse bind matrices are then made from that rest pose. S3_OK, or the reason of
 * mdl_compute_ibm with err. */
enum s3_err gr2_drop_rest_shear(struct mdl_skeleton *s, struct mdl_notes *warn, char *err, size_t errlen);
/* What an export dropped, for users: STEM.warnings in dir (the lines of n; n is emptied)
 * and the first GR2_INFO_WARNINGS of them in /info, after "WHAT: ", with a line saying
 * how many more the file has. Nothing when n is empty. */
#define GR2_INFO_WARNINGS 16
void gr2_add_warnings(struct gr2_view *v, uint32_t dir, const char *stem, const char *what, struct mdl_notes *n);

#endif
