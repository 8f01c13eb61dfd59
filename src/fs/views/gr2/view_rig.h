/* The wrapped RIG view: the RIG header, its IK chains and bone lists, and the Granny file
 * it wraps shown at /granny by the Granny views. */
#ifndef S3_VIEW_RIG_H
#define S3_VIEW_RIG_H

#include <stddef.h>

#include "fs/core/view.h"

/* Parses the header of fs's source and gives fs's root its populate callback. S3_OK, or the
 * reason with err (the top level is unreadable). */
s3_view_open_fn rig_view_open;

#endif
