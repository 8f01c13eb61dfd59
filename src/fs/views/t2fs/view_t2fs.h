/* The t2fs format's entry: the container view with the views derived from /root that
 * its schema gets. */
#ifndef S3_VIEW_T2FS_H
#define S3_VIEW_T2FS_H

#include <stddef.h>

#include "fs/core/view.h"

/* Opens the container view at fs's root, with /models (turok1 or turok2 schema) and
 * /named added beside /root. S3_OK, or the reason with err (the top level is unreadable, or the
 * schema asked for cannot be had). */
s3_view_open_fn t2fs_view_open;

#endif
