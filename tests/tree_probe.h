#ifndef S3_TREE_PROBE_H
#define S3_TREE_PROBE_H

#include "expect.h"
#include "fs/open/open.h"

struct probe tree_probe(struct s3fs *fs);
/* Reads path through p (any probe) and asserts it holds exactly the n bytes at want. */
void probe_expect_bytes(const struct probe *p, const char *path, const void *want, size_t n);
/* A whole file as a string (through p); fails the test when it is missing. */
char *ex_read_text(const struct probe *p, const char *path);
/* Fails unless the file holds exactly want. */
void ex_text_is(const struct probe *p, const char *path, const char *want);
/* Fails unless the file holds want (a line of /info, say). */
void ex_holds(const struct probe *p, const char *path, const char *want);
/* Fails unless path is a link to exactly want. */
void ex_link_is(const struct probe *p, const char *path, const char *want);
/* Fails unless path does not exist (ENOENT). */
void ex_absent(const struct probe *p, const char *path);
/* path with every symlink on it followed (relative targets, as the kernel does): malloc'd,
 * NULL when a component is missing or the links go round more than 40 times. */
char *probe_resolve(const struct probe *p, const char *path);

#endif
