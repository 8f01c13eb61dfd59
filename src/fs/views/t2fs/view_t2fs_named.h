/* /named: /root under the schema's names, through the t2fs view's locator. */
#ifndef S3_VIEW_T2FS_NAMED_H
#define S3_VIEW_T2FS_NAMED_H

#include <stdint.h>

#include "fs/views/t2fs/view_t2fs_tree.h"

/* /named: /root under the schema's names (directories, and links to /root's leaves). */
void t2fs_named_add(struct t2_view *v, uint32_t root_dir);
/* Tests: the name comparisons /named's listings have made to keep names unique, and the
 * directory lookups they needed (only in Turok 1 section directories), process-wide. */
void t2fs_named_counts(uint64_t *compares, uint64_t *lookups);

#endif
