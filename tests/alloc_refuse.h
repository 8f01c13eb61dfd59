/* Allocation refusal for the parsers' and views' tests: a test binary linked with
 * --wrap=malloc and --wrap=calloc (tests/meson.build, which then defines
 * S3_TEST_WRAP_ALLOC; never under a sanitizer, whose runtime owns malloc), and for
 * test_oom and test_geom --wrap=realloc too (S3_TEST_WRAP_REALLOC), sends every such call of the code
 * linked into it here (not the C library's own: strdup, asprintf).
 * - alloc_refuse_start(k): counts allocations from now and refuses the k-th (0-based; -1:
 *   none); alloc_refuse_count(): how many were asked since the last start.
 * - Single-threaded tests only. */
#ifndef S3_ALLOC_REFUSE_H
#define S3_ALLOC_REFUSE_H

#include <stddef.h>

void alloc_refuse_start(long k);
long alloc_refuse_count(void);
/* Refuses every allocation of more than n bytes from now (0: none refused by size), as a
 * process whose memory limit a big request passes. */
void alloc_refuse_above(size_t n);

#endif
