/* Which derived views a t2fs file gets. They sit above the container view and read it
 * through its locator; the container calls them only through the hook given here, so
 * neither the container nor a derived view calls up. */
#include "fs/views/t2fs/view_t2fs.h"

#include <string.h>

#include "fs/views/t2fs/view_t1_models.h"
#include "fs/views/t2fs/view_t2fs_tree.h"
#include "fs/views/t2fs/view_t2fs_models.h"
#include "fs/views/t2fs/view_t2fs_named.h"

static void add_derived(struct t2_view *v, uint32_t root_dir, void *ctx)
{
    (void)ctx;
    const char *schema = t2fs_view_schema_name(v);
    if (strcmp(schema, "turok2") == 0)
        t2fs_models_add(v, root_dir);
    else if (strcmp(schema, "turok1") == 0)
        t1_models_add(v, root_dir);
    t2fs_named_add(v, root_dir);
}

enum s3_err t2fs_view_open(struct s3fs *fs, char *err, size_t errlen)
{
    /* docs/formats/t2fs.md, "Compression" */
    fs->rw_read_only_why = "t2fs nodes stored RNC-compressed (N.rnc and what it holds) stay read-only: only a "
                           "node's own first bytes say it is compressed, and its size is fixed by its parent's "
                           "offsets, so it cannot be stored raw in its place";
    return t2fs_view_new(fs, add_derived, err, errlen);
}
