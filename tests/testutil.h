/* Small helpers shared by the unit tests. */
#ifndef S3_TESTUTIL_H
#define S3_TESTUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fs/open/open.h"
#include "parse/base/diag.h"

/* Stores v at p in the given byte order. */
void put32(uint8_t *p, uint32_t v, bool be);
/* tree_read that must succeed (the test fails otherwise): the bytes it read. */
size_t tree_read_ok(struct tree *t, uint32_t ino, uint64_t off, void *buf, size_t len);
/* True when some warning contains needle. */
bool diag_has(const struct diag *d, const char *needle);
/* The real test vectors folder: the one setting every test and script reads, the
 * environment variable S3RIG_VECTORS, by default ../shared/vectors beside the project
 * (S3RIG_DEFAULT_VECTORS, from tests/meson.build). Whether it exists is not checked. */
const char *vectors_path(void);
/* The vectors folder, or NULL (and a message) when it is absent. */
const char *vectors_dir(void);
/* The same, skipping the test (cmocka's skip) when the folder is absent. */
const char *vectors_or_skip(void);
/* The real Granny files of the vectors folder (its gr2/ folder), NULL-terminated. */
extern const char *const gr2_vector_files[];
/* fn(dir, name) on each of them (the test skipped when the vectors folder is absent). */
void each_gr2_vector(void (*fn)(const char *dir, const char *name));
/* Reads DIR/SUB/NAME whole (NUL-terminated copy); NULL when missing. */
uint8_t *slurp_vector(const char *dir, const char *sub, const char *name, size_t *n);
/* Reads a real file whole (malloc'd, with a NUL after its bytes); fails the test when it
 * cannot be opened. */
uint8_t *slurp_path(const char *path, size_t *len);
/* A test's temporary directory and all below it removed (rm -rf); fails the test if not. */
void remove_tree(const char *dir);

/* ---- the tree of bytes opened in memory, through the tree API ---- */

/* Opens data with opts (NULL: the defaults); fails the test with the error text (after
 * what, when not NULL) when it does not open. */
struct s3fs *open_mem(const void *data, size_t size, const struct s3fs_opts *opts, const char *what);
/* True when path resolves in fs's tree. */
bool path_exists(struct s3fs *fs, const char *path);
/* The file at path, read whole: malloc'd, with a NUL after its bytes so text can be
 * used as a string; its length into *len (may be NULL). Fails the test when the path
 * is missing or unreadable, or the bytes read are not the size the tree gives. */
void *read_path(struct s3fs *fs, const char *path, size_t *len);
/* Fails unless the file at path holds exactly the n bytes at want. */
void expect_bytes(struct s3fs *fs, const char *path, const void *want, size_t n);
/* Fails unless the file at path holds exactly want. */
void expect_text(struct s3fs *fs, const char *path, const char *want);
/* Fails unless the file at path contains needle (a line of /info, say), printing it. */
void expect_has(struct s3fs *fs, const char *path, const char *needle);
/* Fails if the file at path contains needle, printing it. */
void expect_lacks(struct s3fs *fs, const char *path, const char *needle);

/* An open refused (s3fs_open*): call gives reason `want`, and the status a command exits
 * with for it (s3_exit_of) is `status`, the one mount.s3rig(8) documents. */
#define assert_open_refused(call, want, status)                                                                       \
    do {                                                                                                               \
        enum s3_err open_e_ = (call);                                                                                 \
        assert_int_equal(open_e_, (want));                                                                             \
        assert_int_equal(s3_exit_of(open_e_), (status));                                                               \
    } while (0)

#endif
