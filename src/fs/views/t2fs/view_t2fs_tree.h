/* The t2fs container view (/root) and its locator: handles on container nodes for views
 * derived from /root. A handle says where a node's bytes are and what the node is, read
 * the one way /root reads it; a missing or broken node comes back as an error naming it.
 * - The locator may be called from any thread, in a populate callback or not: it takes
 *   the view's own lock (after the tree's, when a populate callback holds that), never
 *   the tree's.
 * - A handle's bytes are malloc'd: the caller frees them. */
#ifndef S3_VIEW_T2FS_TREE_H
#define S3_VIEW_T2FS_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fs/core/view.h"
#include "parse/t2fs/t2fs.h"

struct t2_view; /* the t2fs view of one opened file */
struct t2_cnode;

enum t2fs_node_kind {
    T2FS_NODE_BRANCH, /* a directory in /root: `count` children */
    T2FS_NODE_LEAF,   /* N.bin in /root */
};

#define T2FS_PATH_KEPT 24 /* child indices a handle remembers, for naming it */

/* A node handle: a plain value (copy it freely), valid as long as the tree. */
struct t2fs_node {
    enum t2fs_node_kind kind;
    uint32_t count;                   /* children of a branch */
    const struct t2fs_schema *schema; /* NULL: the schema says nothing */
    struct t2_cnode *blob;            /* the compressed node holding the bytes; NULL: the file */
    uint64_t off, space;              /* the node's bytes, in the file or in blob's data */
    uint32_t depth;                   /* 0 = /root */
    uint32_t path[T2FS_PATH_KEPT];    /* child indices from /root (the first T2FS_PATH_KEPT) */
};

/* An array leaf's bytes: data = bytes + 8 holds esize·count bytes. */
struct t2fs_array {
    uint8_t *bytes; /* the whole node (malloc'd): free it */
    size_t len;
    const uint8_t *data;
    uint32_t esize, count;
};

/* Adds derived views' directories to the root directory, after /root (the views above
 * this one say which). */
typedef void t2fs_root_extra_fn(struct t2_view *v, uint32_t root_dir, void *ctx);

/* Parses the t2fs header of fs's source, picks the schema (fs->opts.schema, else by
 * shape) and gives fs's root its populate callback, which calls root_extra (may be NULL;
 * ctx NULL) after making /root, then the hooks added with t2fs_view_add_root_extra. S3_OK,
 * or the reason with err. The format's entry is t2fs_view_open (view_t2fs.h). */
enum s3_err t2fs_view_new(struct s3fs *fs, t2fs_root_extra_fn *root_extra, char *err, size_t errlen);
/* Registers one more root_extra hook (called in the order added). S3_OK, or
 * S3_ERR_NOMEM. */
enum s3_err t2fs_view_add_root_extra(struct t2_view *v, t2fs_root_extra_fn *fn, void *ctx);

/* The t2fs view of an opened file (NULL when it is not a t2fs file). */
struct t2_view *t2fs_view_of(struct s3fs *fs);
struct s3fs *t2fs_view_fs(const struct t2_view *v);
bool t2fs_view_big_endian(const struct t2_view *v);
/* Offsets of branch tables read so far by listings and lookups (the view's work: tests
 * check it stays proportional to the file, whatever the lists' lengths). */
uint64_t t2fs_view_table_words(const struct t2_view *v);
const struct t2fs_schema *t2fs_view_schema(const struct t2_view *v);
/* "turok1", "turok2" (built in) or "file" (a JSON schema file). */
const char *t2fs_view_schema_name(const struct t2_view *v);

/* /root itself. */
void t2fs_node_root(struct t2_view *v, struct t2fs_node *out);
/* The locator's functions return S3_OK, or the reason with err naming the node: NOMEM
 * when an allocation (here or expanding a compressed node) failed, which a listing turns
 * into its own failure (never a NAME.error: tree_note_oom), a producer into its own; any
 * other reason is the node's (a NAME.error). */
/* Child i of a branch; the reason: no such child or not a branch (FORMAT), a compressed
 * node that does not decode, the file changed (IO), NOMEM. */
enum s3_err t2fs_node_child(struct t2_view *v, const struct t2fs_node *n, uint32_t i, struct t2fs_node *out,
                            char *err, size_t errlen);
/* Follows nidx child indices from n; the reason of the first node that is missing or
 * broken. */
enum s3_err t2fs_node_at(struct t2_view *v, const struct t2fs_node *n, const unsigned *idx, size_t nidx,
                         struct t2fs_node *out, char *err, size_t errlen);
/* S3_OK when the node is of that kind, else FORMAT ("/root/0/3: a leaf, not a branch"). */
enum s3_err t2fs_node_expect(const struct t2fs_node *n, enum t2fs_node_kind kind, char *err, size_t errlen);
/* The node's bytes (padding included), expanded when it lies in compressed data;
 * malloc'd. */
enum s3_err t2fs_node_bytes(struct t2_view *v, const struct t2fs_node *n, uint8_t **buf, size_t *len, char *err,
                            size_t errlen);
/* A leaf read as an array (element size, count, data). */
enum s3_err t2fs_node_array(struct t2_view *v, const struct t2fs_node *n, struct t2fs_array *a, char *err,
                            size_t errlen);
/* What a listing shows for a node the locator could not give (e, with err): NAME.error
 * in dir, or for NOMEM the listing's failure (tree_note_oom), never a NAME.error. From a
 * populate callback only. */
void t2fs_add_node_error(struct t2_view *v, uint32_t dir, const char *name, enum s3_err e, const char *err);
/* "/root/0/3/1" (for messages and link targets; "/root/.../N" past T2FS_PATH_KEPT). */
void t2fs_node_name(const struct t2fs_node *n, char *buf, size_t len);
/* The name /root gives a node that is child i of its parent: "i" for a branch, "i.bin"
 * for a leaf (so views linking into /root need not know /root's naming). */
void t2fs_node_root_entry(const struct t2fs_node *n, uint32_t i, char *buf, size_t len);
/* The node's span in the file: its own bytes, or the compressed node it lies in. */
void t2fs_node_span(const struct t2fs_node *n, uint64_t *off, uint64_t *len);
/* A file in dir with bytes [off, off+len) of the node: a range of the mounted file when the node is stored
 * plain, else a slice of the expanded compressed node read through the cache (an open
 * file holds it); never a copy kept in the tree. Its xattrs give the node's span. The new
 * inode, or 0. */
uint32_t t2fs_node_add_file(struct t2_view *v, const struct t2fs_node *n, uint32_t dir, const char *name,
                            uint64_t off, uint64_t len, const char *type);

#endif
