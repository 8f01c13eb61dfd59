/* The Granny object tree: /granny/root, /granny/skeletons, /granny/types, made from the
 * parse-level walk (parse/gr2/gr2walk.h) over the container view's sections.
 * - gobj_attach hooks it into /granny (gr2_view_add_granny_extra); nothing calls back up. */
#ifndef S3_VIEW_GR2OBJ_H
#define S3_VIEW_GR2OBJ_H

#include "fs/views/gr2/view_granny.h"

/* Gives a Granny view its object tree (added to /granny when it is listed). S3_OK (also
 * when it has one already); NOMEM, after which the view is not to be used (a hook may
 * already hold the half-made tree). */
enum s3_err gobj_attach(struct gr2_view *v);

/* The first skeleton's bones: the path of its Bones directory relative to the mount
 * root ("granny/root/Skeletons/0/Bones"; NULL when the object tree does not show them,
 * which /info then says), the bone count and names (malloc'd; NULL entries for
 * unnamed). S3_OK; NOMEM; IO when the file changed; else the reason the file has no
 * first skeleton's bones to name (FORMAT, RANGE, ...; FORMAT for bones shown as a table);
 * each with why. Bones without names (remapped strings, no Name member) are said once in
 * /info. */
enum s3_err gobj_first_skeleton(struct gr2_view *v, char **bones_path, uint32_t *count, char ***names, char *why,
                                size_t whylen);

/* Tests: the text the object tree counted against its budgets so far: its tables' CSVs
 * (*tables) and the animations' CSVs (*anim_text); both 0 before the tree is made. */
void gobj_test_measured(struct gr2_view *v, uint64_t *tables, uint64_t *anim_text);

#endif
