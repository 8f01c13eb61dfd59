/* /models for the turok1 schema, derived from /root through the t2fs view's locator, and
 * the decoded files of a Turok 1 geometry section. */
#ifndef S3_VIEW_T1_MODELS_H
#define S3_VIEW_T1_MODELS_H

#include <stddef.h>
#include <stdint.h>

#include "fs/views/t2fs/view_t2fs_tree.h"

/* /models for the turok1 schema: graphic objects, their nodes, parts and sections. */
void t1_models_add(struct t2_view *v, uint32_t root_dir);
/* The decoded files of a Turok 1 section (sec: its node {section, usPStream,
 * usVertices}) in dir: vertices.bin/.txt, pstream.bin, layout, triangles.txt,
 * commands.txt or triangles.error. */
void t1_section_files(struct t2_view *v, const struct t2fs_node *sec, uint32_t dir);
#endif
