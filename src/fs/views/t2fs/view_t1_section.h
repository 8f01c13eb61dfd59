/* One Turok 1 geometry section read through the t2fs locator and decoded. */
#ifndef S3_VIEW_T1_SECTION_H
#define S3_VIEW_T1_SECTION_H

#include <stdbool.h>
#include <stddef.h>

#include "fs/views/t2fs/view_t2fs_tree.h"

/* A section's stream and vertices as arrays (each ok, or its error). */
struct t1_arrays {
    struct t2fs_array ps, vs;
    bool ps_ok, vs_ok;
    bool nomem; /* a read ran out of memory: no part is broken, the caller fails */
    char ps_err[400], vs_err[400];
    struct t2fs_node psn, vn;
};

/* Reads children 1 (usPStream, u16 words) and 2 (usVertices, 16-byte records) of sec;
 * free a->ps.bytes and a->vs.bytes after use. */
void t1_arrays_read(struct t2_view *v, const struct t2fs_node *sec, struct t1_arrays *a);
/* Decodes them (parse/t2fs/t1_section.h): S3_OK, or NOMEM. */
struct t1_section;
enum s3_err t1_arrays_decode(struct t2_view *v, const struct t1_arrays *a, struct t1_section *s);

/* A Turok 1 section (sec: its node {section, usPStream, usVertices}) read and decoded
 * (parse/t2fs/t1_section.h; free with t1_section_free), for exporters: S3_OK, NOMEM, or
 * the reason with err naming the node that is missing or broken. A stream that fits neither layout is not
 * a failure (out->layout < 0, out->err says why). Find sections with the locator:
 * object = child N of child 0 of the root; its nodes = object/1/1; node K's parts =
 * nodes/K/2; section S of part P = parts/P/S. */
enum s3_err t1_section_read(struct t2_view *v, const struct t2fs_node *sec, struct t1_section *out, char *err,
                            size_t errlen);

#endif
