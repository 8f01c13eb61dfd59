/* The Turok 1 exports: model.glb and model.obj in a graphic object's /models directory,
 * made from its decoded sections (parse/t2fs/t1_model.h), read through the t2fs locator. */
#ifndef S3_VIEW_T1_EXPORT_H
#define S3_VIEW_T1_EXPORT_H

#include <stdint.h>

#include "fs/views/t2fs/view_t2fs_tree.h"

/* model.glb and model.obj in dir, the directory of graphic object obj (/root/0/N), with
 * sections.error listing the sections (or parts) left out; or model.error saying why the
 * object cannot be exported. Call from the directory's populate callback. */
void t1_exports_add(struct t2_view *v, const struct t2fs_node *obj, uint32_t dir);

#endif
