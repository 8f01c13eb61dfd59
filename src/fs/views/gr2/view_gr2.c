/* A raw Granny file mounted alone: the Granny data view (view_granny.h) with its object
 * tree (view_gr2obj.h) at the mount root. */
#include "fs/views/gr2/view_gr2.h"

#include <stdio.h>

#include "fs/views/gr2/view_gr2export.h"
#include "fs/views/gr2/view_gr2obj.h"

static enum s3_err populate_gr2_root(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg, (void)t;
    struct gr2_view *v = ctx;
    add_info_and_unparsed(v->fs, dir);
    gr2_view_add(v, dir);
    return S3_OK;
}

struct gr2_view *gr2_view_of(struct s3fs *fs)
{
    return tree_dir_ctx(fs->tree, fs->root, populate_gr2_root);
}

enum s3_err gr2_view_open(struct s3fs *fs, char *err, size_t errlen)
{
    struct gr2_view *v;
    enum s3_err e = gr2_view_new(fs, 0, &v, err, errlen);
    if (e != S3_OK)
        return e;
    if (gobj_attach(v) || gr2_add_skeletons_hook(v) || gr2_view_describe(v))
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    return view_root(fs, "gr2.file", populate_gr2_root, v);
}
