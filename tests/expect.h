/* Expected tree contents, computed from what the fixture builders wrote (never from the
 * parsers). The same list is checked in-process against the tree (test_tree) and through
 * a real mount (test_mount), mount-zip style: every expected node must exist with its
 * bytes, size and xattrs, and every node that exists must be expected. */
#ifndef S3_EXPECT_H
#define S3_EXPECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fixture.h"
#include "fixture_rig_clear.h"
#include "fixture_t2fs.h"

enum expect_kind { EX_FILE, EX_DIR, EX_LINK };

struct expect {
    char *path; /* "/granny/header/version" */
    enum expect_kind kind;
    uint8_t *content; /* files: exact bytes; links: target */
    size_t len;
    bool has_span;
    uint64_t off, span_len;
    const char *type; /* NULL: not checked */
    char *type_buf;   /* owned storage behind type, when made at run time */
    bool prefix_only; /* content is only a prefix check (e.g. /info) */
    bool skip_children; /* a directory whose subtree other tests check */
};

struct expect_list {
    struct expect *e;
    size_t n, cap;
};

void ex_free(struct expect_list *l);
/* Drops an expectation (a node that this variant does not have). */
void ex_remove(struct expect_list *l, const char *path);
/* Expects a directory whose contents other tests check. */
/* Appends an expectation for the path printf makes (its contents are the caller's to set). */
struct expect *ex_add(struct expect_list *l, enum expect_kind kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
struct expect *ex_add_dir_skip(struct expect_list *l, const char *path);
/* Building blocks of the expectations (expect.c and the per-format expect_*.c): a span
 * (offset and length xattrs); a directory with its span (none when both are 0) and type;
 * a value file with its span; a file holding the file's bytes [off, off + len); /info
 * starting with "format: NAME". */
void ex_span(struct expect *e, uint64_t off, uint64_t len);
void ex_dir(struct expect_list *l, const char *path, uint64_t off, uint64_t len, const char *type);
void ex_val(struct expect_list *l, const char *path, uint64_t off, uint64_t len, const char *type, const char *fmt,
            ...) __attribute__((format(printf, 6, 7)));
void ex_bytes(struct expect_list *l, const char *path, const uint8_t *file, uint64_t off, uint64_t len,
              const char *type);
void ex_info(struct expect_list *l, const char *format);
/* A file starting with the n bytes of prefix (an export: its magic), of that type. */
void ex_prefix(struct expect_list *l, const char *path, const void *prefix, size_t n, const char *type);
#define EX_GLB_MAGIC "glTF\x02\0\0\0" /* a .glb's first 8 bytes: magic, version 2 */
const struct expect *ex_find(const struct expect_list *l, const char *path);

/* The wrapped sample RIG (fx_sample_rig) mounted at the root. */
void ex_sample_rig(struct expect_list *l, const uint8_t *file, size_t size, const struct fx_rig_layout *rl,
                   const struct fx_gr2_layout *gl, char (*bone_names)[32]);
/* A sample GR2 (fx_sample_gr2) as a raw file. */
void ex_sample_gr2(struct expect_list *l, const uint8_t *file, size_t size, const struct fx_gr2_layout *gl,
                   int version);

/* A t2fs file written by fxt_write (prefix/trailer as passed to it). */
void ex_t2fs(struct expect_list *l, const uint8_t *file, size_t size, const struct fxt *root, size_t prefix,
             size_t trailer);

/* A clear RIG written by fxc_build. */
void ex_rig_clear(struct expect_list *l, const uint8_t *file, size_t size, const struct fxc_opts *o,
                  const struct fxc_layout *lay);

/* Bytes of a built GR2 that no structure covers (padding and filler). */
uint64_t ex_gr2_gap_bytes(const struct fx_gr2_layout *gl);

/* How a test reaches a tree: in-process or through a mount. */
struct probe {
    void *ctx;
    /* 0 and a malloc'd content, or -errno. kind: EX_FILE/EX_DIR/EX_LINK. */
    int (*stat)(void *ctx, const char *path, enum expect_kind *kind, uint64_t *size);
    int (*read)(void *ctx, const char *path, uint8_t **buf, size_t *len);
    int (*readlink)(void *ctx, const char *path, char **target);
    /* Returns value length or -errno; value NUL-terminated. */
    long (*getxattr)(void *ctx, const char *path, const char *name, char *value, size_t size);
    /* Lists a directory: names malloc'd, count returned or -errno. */
    int (*list)(void *ctx, const char *path, char ***names);
    bool is_mount;
};

/* Checks every expectation and that nothing else exists. Uses cmocka asserts. */
void ex_check(const struct expect_list *l, const struct probe *p);
/* A sample GR2's whole tree (ex_sample_gr2) checked through p: the one check of each
 * variant, in-process (test_tree) and through a mount (test_mount). */
void ex_check_sample_gr2(const struct probe *p, const uint8_t *file, size_t size, const struct fx_gr2_layout *gl,
                         int version);
/* The same for a t2fs file fxt_write wrote (ex_t2fs), whole: test_t2fs's walks and
 * test_mount's. */
void ex_check_t2fs(const struct probe *p, const uint8_t *file, size_t size, const struct fxt *root, size_t prefix,
                   size_t trailer);

#endif
