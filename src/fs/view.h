/* Views: turn a parsed format into tree nodes. view.c opens a file, detects its format
 * and hands it to the format's view; it also holds the helpers every view uses to make
 * value files (so numbers look the same everywhere), .error files, /info and /unparsed. */
#ifndef S3_VIEW_H
#define S3_VIEW_H

#include <stdbool.h>
#include <stdint.h>

#include "fs/cache.h"
#include "fs/cover.h"
#include "fs/sbuf.h"
#include "fs/source.h"
#include "fs/tree.h"
#include "parse/detect.h"
#include "parse/diag.h"

/* Exit statuses shared by mount.s3rig and s3rig (documented in mount.s3rig(8)). */
enum s3_exit {
    S3_EXIT_OK = 0,
    S3_EXIT_USAGE = 1,
    S3_EXIT_OPEN = 2,   /* FILE cannot be opened or read */
    S3_EXIT_FORMAT = 3, /* unrecognised format, or its top-level header is unreadable */
    S3_EXIT_MOUNT = 4,  /* the mount itself failed */
    S3_EXIT_PATH = 5,   /* s3rig: a path inside the tree does not exist */
};

/* Set from "-o" through the one option table (options.c), for both commands. */
struct s3fs_opts {
    uint64_t max_nodes;    /* 0: default */
    uint64_t cache_bytes;  /* bound on expanded data held at once; 0: default (256 MiB) */
    uint64_t max_unpacked; /* largest expanded node or section accepted; 0: default (1 GiB) */
    bool has_rnc_key;
    uint16_t rnc_key;
    char schema[512]; /* t2fs: "turok1", "turok2" or a JSON file; empty = pick by shape */
};

#define S3FS_DEFAULT_CACHE (256ull << 20)
#define S3FS_DEFAULT_MAX_UNPACKED (1ull << 30)

struct s3fs {
    struct source src;
    struct tree *tree;
    struct detect_result det;
    struct diag diag;   /* warnings for /info */
    struct cover cover; /* bytes named structures cover */
    struct sbuf facts;  /* format-specific "key: value" lines for /info */
    struct cache cache; /* expanded data (RNC, Oodle1), bounded */
    /* lines of /info that change while mounted (a view's live state) */
    void (*info_hook)(struct s3fs *fs, struct sbuf *out, void *ctx);
    void *info_ctx;
    struct s3fs_opts opts;
    uint64_t covered;
    struct range *gaps;
    size_t ngaps;
    /* Where the view sits: TREE_ROOT for a file mounted alone; for a view nested in
     * another (a rig inside a package) the directory it was opened at, the id of its
     * source in the tree, and one /info line saying where that source lies in the
     * mounted file. A nested s3fs shares the tree and the cache of its host. */
    uint32_t root, src_id;
    bool nested;
    char origin[256];
};

/* Opens and parses FILE; returns S3_EXIT_OK or an exit status with err filled in (one
 * line naming the file and the reason). */
int s3fs_open(struct s3fs **out, const char *path, const struct s3fs_opts *opts, char *err, size_t errlen);
/* The same on bytes in memory (tests); data must outlive the s3fs. */
int s3fs_open_mem(struct s3fs **out, const void *data, uint64_t size, const struct s3fs_opts *opts, char *err,
                  size_t errlen);
void s3fs_close(struct s3fs *fs);

/* The one way a view is opened: over source `src` (described by the caller with
 * source_slice / source_mem / source_expanded, and outliving the host), at the existing
 * directory `dir` of host's tree, which becomes the view's root: its own /info (with
 * `origin` as a "source:" line), coverage, /unparsed and offsets, all relative to src.
 * The nested s3fs lives as long as the tree. `formats`: the formats the caller accepts,
 * a mask of (1u << enum s3_format); 0 accepts any. S3_EXIT_OK, or a status with err. */
int s3fs_open_at(struct s3fs *host, uint32_t dir, const struct source *src, const char *origin, unsigned formats,
                 struct s3fs **out, char *err, size_t errlen);

/* ---- helpers for views ---- */
uint32_t add_u32(struct tree *t, uint32_t dir, const char *name, uint32_t v, uint64_t abs_off);
uint32_t add_i32(struct tree *t, uint32_t dir, const char *name, int32_t v, uint64_t abs_off);
uint32_t add_hex32(struct tree *t, uint32_t dir, const char *name, uint32_t v, uint64_t abs_off);
/* A list file: one value per line; span = n·4 bytes at abs_off. */
uint32_t add_i32_list(struct tree *t, uint32_t dir, const char *name, const int32_t *v, uint64_t n,
                      uint64_t abs_off);
uint32_t add_u32_list(struct tree *t, uint32_t dir, const char *name, const uint32_t *v, uint64_t n,
                      uint64_t abs_off);
uint32_t add_hex32_list(struct tree *t, uint32_t dir, const char *name, const uint32_t *v, uint64_t n,
                        uint64_t abs_off);
/* NAME.names beside a list of bone indices: names[idx] per line, "?" where the index
 * does not resolve (or the bone has no name). */
uint32_t add_bone_names(struct tree *t, uint32_t dir, const char *field, const int32_t *idx, uint64_t n,
                        char *const *names, uint32_t nnames);
/* NAME.error holding msg and a newline. */
uint32_t add_error(struct tree *t, uint32_t dir, const char *name, const char *msg);
/* Sets a printf-made type string on a node. */
void set_typef(struct tree *t, uint32_t ino, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Makes the view's root directory with its populate callback: the tree's root (its span
 * the whole file), or the directory a nested view was opened at (which keeps the type and
 * span its host gave it: where the nested bytes lie in the host). 0, or -1. */
int view_root(struct s3fs *fs, const char *xtype, populate_fn fn, void *ctx);

/* Adds /info and /unparsed to the root (after the view has filled fs->cover). */
void add_info_and_unparsed(struct s3fs *fs, uint32_t root);

/* Format views: each parses at open and gives the root its populate callback. */
int rig_view_open(struct s3fs *fs, char *err, size_t errlen);
int gr2_view_open(struct s3fs *fs, char *err, size_t errlen);
int t2fs_view_open(struct s3fs *fs, char *err, size_t errlen);
int rig_clear_view_open(struct s3fs *fs, char *err, size_t errlen);
int dbpf_view_open(struct s3fs *fs, char *err, size_t errlen);
/* A package's resource count and declared expanded bytes (s3rig extract's progress);
 * false when fs is not a package. */
bool dbpf_view_totals(struct s3fs *fs, uint32_t *count, uint64_t *bytes);
/* The t2fs view's locator and its derived views (/models, /named): fs/view_t2fs.h. */

/* The GR2 part, shared by raw GR2 files and wrapped RIGs. */
struct gr2_view;
struct gr2_view *gr2_view_new(struct s3fs *fs, uint64_t base, char *err, size_t errlen);
/* Adds granny.gr2 and granny/ to dir. */
void gr2_view_add(struct gr2_view *v, uint32_t dir);
/* Adds the container's structures to fs->cover and its facts to fs->facts. */
void gr2_view_describe(struct gr2_view *v);
uint64_t gr2_view_total_size(const struct gr2_view *v);

#endif
