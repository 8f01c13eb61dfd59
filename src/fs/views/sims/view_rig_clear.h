/* The clear RIG view: bones, IK chains, bones.csv and skeleton.glb from a RIG in the
 * clear encoding (major 3/4). */
#ifndef S3_VIEW_RIG_CLEAR_H
#define S3_VIEW_RIG_CLEAR_H

#include <stddef.h>

#include "fs/core/view.h"

/* Parses fs's source and gives fs's root its populate callback. S3_OK, or the reason with err. */
s3_view_open_fn rig_clear_view_open;

#endif
