/* The Granny format's entry: a .gr2 file mounted alone, the Granny data view with its
 * object tree at fs's root.
 * - gr2_view_open: S3_OK, or the reason with err (the header is unreadable).
 * - gr2_view_of: that view of fs, or NULL when fs is another format's; hooks
 *   (gr2_view_add_granny_extra) may be registered on it from outside. */
#ifndef S3_VIEW_GR2_H
#define S3_VIEW_GR2_H

#include "fs/views/gr2/view_granny.h"

s3_view_open_fn gr2_view_open;
struct gr2_view *gr2_view_of(struct s3fs *fs);

#endif
