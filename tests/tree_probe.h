#ifndef S3_TREE_PROBE_H
#define S3_TREE_PROBE_H

#include "expect.h"
#include "fs/open.h"

struct probe tree_probe(struct s3fs *fs);
/* Reads path through p (any probe) and asserts it holds exactly the n bytes at want. */
void probe_expect_bytes(const struct probe *p, const char *path, const void *want, size_t n);
/* Reads path through p and asserts it contains needle (a line of /info, say), printing it. */
void probe_expect_has(const struct probe *p, const char *path, const char *needle);

#endif
