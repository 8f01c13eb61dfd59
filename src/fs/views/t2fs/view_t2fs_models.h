/* /models for the turok2 schema, derived from /root through the t2fs view's locator. */
#ifndef S3_VIEW_T2FS_MODELS_H
#define S3_VIEW_T2FS_MODELS_H

#include <stdint.h>

#include "fs/views/t2fs/view_t2fs_tree.h"

/* /models for the turok2 schema: the model tree under the seed's names. */
void t2fs_models_add(struct t2_view *v, uint32_t root_dir);
/* Rows of vertices.txt rendered so far, process-wide (each row counted where its first
 * character is rendered): a read-through renders each row once, in any chunks. */
uint64_t t2fs_models_vertex_rows(void);

#endif
