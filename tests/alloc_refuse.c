#include "alloc_refuse.h"

#include <stddef.h>

static long refuse = -1, allocs;
static size_t refuse_above;

void alloc_refuse_above(size_t n)
{
    refuse_above = n;
}

void alloc_refuse_start(long k)
{
    refuse = k;
    allocs = 0;
}

long alloc_refuse_count(void)
{
    return allocs;
}

#ifdef S3_TEST_WRAP_ALLOC
/* The k-th allocation counted, or one bigger than the bound. */
static int refused(size_t bytes)
{
    return allocs++ == refuse || (refuse_above && bytes > refuse_above);
}

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);

void *__wrap_malloc(size_t n)
{
    return refused(n) ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
    return refused(size && n > (size_t)-1 / size ? (size_t)-1 : n * size) ? NULL : __real_calloc(n, size);
}

#ifdef S3_TEST_WRAP_REALLOC
void *__real_realloc(void *p, size_t n);
void *__wrap_realloc(void *p, size_t n);

/* Only in a binary linked with --wrap=realloc as well (test_oom, test_geom). A growth refused leaves
 * the block as it was (realloc's contract); realloc(p, 0) is never refused. */
void *__wrap_realloc(void *p, size_t n)
{
    return n && refused(n) ? NULL : __real_realloc(p, n);
}
#endif
#endif
