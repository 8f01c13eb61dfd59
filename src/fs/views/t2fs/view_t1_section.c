/* Reading one Turok 1 geometry section through the t2fs locator: its polygon stream and
 * vertices as arrays, decoded by parse/t1_section. Below both users: the /models files
 * (view_t1_models.c) and the exports (view_t1_export.c). */
#include "fs/views/t2fs/view_t1_section.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/t2fs/t1_section.h"

void t1_arrays_read(struct t2_view *v, const struct t2fs_node *sec, struct t1_arrays *a)
{
    memset(a, 0, sizeof *a);
    enum s3_err e = t2fs_node_child(v, sec, 1, &a->psn, a->ps_err, sizeof a->ps_err);
    if (e == S3_OK)
        e = t2fs_node_array(v, &a->psn, &a->ps, a->ps_err, sizeof a->ps_err);
    a->nomem = e == S3_ERR_NOMEM;
    if (e == S3_OK) {
        a->ps_ok = a->ps.esize == 2 || a->ps.count == 0;
        if (!a->ps_ok) {
            snprintf(a->ps_err, sizeof a->ps_err, "usPStream: element size %" PRIu32 ", not 2 (u16 words)",
                     a->ps.esize);
            free(a->ps.bytes);
            a->ps.bytes = NULL;
        }
    }
    e = t2fs_node_child(v, sec, 2, &a->vn, a->vs_err, sizeof a->vs_err);
    if (e == S3_OK)
        e = t2fs_node_array(v, &a->vn, &a->vs, a->vs_err, sizeof a->vs_err);
    a->nomem |= e == S3_ERR_NOMEM;
    if (e == S3_OK) {
        a->vs_ok = a->vs.esize == T1_VERTEX_SIZE || a->vs.count == 0;
        if (!a->vs_ok) {
            snprintf(a->vs_err, sizeof a->vs_err, "usVertices: element size %" PRIu32 ", not 16", a->vs.esize);
            free(a->vs.bytes);
            a->vs.bytes = NULL;
        }
    }
}

enum s3_err t1_arrays_decode(struct t2_view *v, const struct t1_arrays *a, struct t1_section *s)
{
    return t1_section_decode(a->ps_ok ? a->ps.data : NULL, a->ps_ok ? a->ps.count : 0, a->vs_ok ? a->vs.data : NULL,
                             a->vs_ok ? a->vs.count : 0, t2fs_view_big_endian(v), s);
}

enum s3_err t1_section_read(struct t2_view *v, const struct t2fs_node *sec, struct t1_section *out, char *err,
                            size_t errlen)
{
    struct t1_arrays a;
    t1_arrays_read(v, sec, &a);
    enum s3_err e = S3_OK;
    if (a.nomem)
        e = s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    else if (!a.ps_ok || !a.vs_ok)
        e = s3_fail(S3_ERR_FORMAT, err, errlen, "%s", a.ps_ok ? a.vs_err : a.ps_err);
    else if ((e = t1_arrays_decode(v, &a, out)))
        s3_fail(e, err, errlen, "out of memory");
    free(a.ps.bytes);
    free(a.vs.bytes);
    return e;
}

