/* /named (view_t2fs_named.c): /root under the schema's names, through the t2fs view's
 * locator. */
#ifndef S3_VIEW_T2FS_NAMED_H
#define S3_VIEW_T2FS_NAMED_H

#include <stdint.h>

#include "fs/view_t2fs.h"

/* /named: /root under the schema's names (directories, and links to /root's leaves). */
void t2fs_named_add(struct t2_view *v, uint32_t root_dir);

#endif
