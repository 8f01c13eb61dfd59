/* Shared by the GR2 container view (view_gr2.c) and the object tree (view_gr2obj.c). */
#ifndef S3_VIEW_GR2_H
#define S3_VIEW_GR2_H

#include "fs/view.h"
#include "parse/gr2.h"
#include "parse/gr2obj.h"

struct gr2_view;

/* One section's expanded bytes as a cache item. */
struct gr2_secitem {
    struct cached c; /* first: the cache hands this pointer back */
    struct gr2_view *v;
    uint32_t sec;
    char err[200]; /* why the bytes cannot be had (empty: they can) */
    int expanded;  /* compressed sections: 0 not tried yet, 1 expanded, -1 failed (err) */
};

struct gobj; /* the object tree state (view_gr2obj.c) */

struct gr2_view {
    struct s3fs *fs;
    struct gr2_file g;
    struct gr2_secitem *items;  /* per section */
    struct gr2_fixup **fixups;  /* per section, sorted by from_offset (loaded on first use) */
    uint32_t *nfixups;
    bool fixups_loaded;
    struct gobj *obj;
};

/* Pins every section's bytes and loads the fixups: the space the object decoder walks.
 * Sections that cannot be had are NULL with a reason. Release with gr2_view_unpin. */
int gr2_view_pin(struct gr2_view *v, struct gr2_space *sp);
void gr2_view_unpin(struct gr2_view *v, struct gr2_space *sp);
/* The span xattrs of bytes [off, off+len) of a section: absolute when stored as is,
 * else the section's stored bytes. */
void gr2_view_span(struct gr2_view *v, uint32_t sec, uint64_t off, uint64_t len, uint64_t *abs, uint64_t *alen);

/* The object tree: /granny/root, /granny/skeletons, /granny/types. */
void gobj_add(struct gr2_view *v, uint32_t granny_dir);
void gobj_free(struct gobj *o);

/* The first skeleton's bones: the path of its Bones directory relative to the mount
 * root ("granny/root/Skeletons/0/Bones"), the bone count and names (malloc'd; NULL
 * entries for unnamed). Returns 0, or -1 with why. */
int gobj_first_skeleton(struct gr2_view *v, char **bones_path, uint32_t *count, char ***names, char *why,
                        size_t whylen);

/* Exports (view_gr2export.c): skeleton.glb, model.glb or mesh.obj in the directory of a
 * struct that is a skeleton, model or mesh; the /granny/models link. */
void gr2_exports_add(struct gr2_view *v, const struct gr2_type *ty, struct gr2_ref type, struct gr2_ref obj,
                     uint32_t dir);
void gr2_exports_links(struct gr2_view *v, uint32_t granny_dir);

#endif
