/* Small helpers shared by the unit tests. */
#ifndef S3_TESTUTIL_H
#define S3_TESTUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parse/diag.h"

/* Stores v at p in the given byte order. */
void put32(uint8_t *p, uint32_t v, bool be);
/* True when some warning contains needle. */
bool diag_has(const struct diag *d, const char *needle);
/* The shared codec vectors folder (S3RIG_VECTORS), or NULL (and a message) when absent. */
const char *vectors_dir(void);
/* Reads DIR/SUB/NAME whole (NUL-terminated copy); NULL when missing. */
uint8_t *slurp_vector(const char *dir, const char *sub, const char *name, size_t *n);
/* Reads a real file whole (malloc'd); fails the test when it cannot be opened. */
uint8_t *slurp_path(const char *path, size_t *len);

#endif
