/* Codec throughput (MB/s of output on one core): RNC methods 1 and 2 on a few MB of
 * data packed by the test packer. Run by scripts/bench.sh; not a test. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "parse/rnc.h"
#include "rncpack.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Text from the vectors when present (repeated), else structured bytes like vertex data. */
static uint8_t *sample(const char *vectors, size_t n)
{
    uint8_t *p = malloc(n);
    char path[1024];
    snprintf(path, sizeof path, "%s/rnc/test_C1.raw", vectors ? vectors : ".");
    FILE *f = fopen(path, "rb");
    size_t got = f ? fread(p, 1, n, f) : 0;
    if (f)
        fclose(f);
    if (got == 0) {
        for (size_t i = 0; i < n; i++)
            p[i] = (uint8_t)((i % 20) < 12 ? (i / 20) * 7 % 251 : i % 20);
        got = n;
    }
    for (size_t i = got; i < n; i++)
        p[i] = p[i - got];
    return p;
}

int main(int argc, char **argv)
{
    size_t n = 4u << 20;
    uint8_t *raw = sample(argc > 1 ? argv[1] : NULL, n);
    for (int m = 1; m <= 2; m++) {
        size_t pn;
        uint8_t *packed = rncpack(m, raw, n, 0, &pn);
        double best = 1e9;
        for (int rep = 0; rep < 5; rep++) {
            uint8_t *out;
            size_t on;
            char err[256];
            double t0 = now();
            if (rnc_unpack(packed, pn, NULL, &out, &on, err, sizeof err)) {
                fprintf(stderr, "rnc%d: %s\n", m, err);
                return 1;
            }
            double dt = now() - t0;
            if (dt < best)
                best = dt;
            if (on != n || memcmp(out, raw, n) != 0) {
                fprintf(stderr, "rnc%d: wrong output\n", m);
                return 1;
            }
            free(out);
        }
        printf("codec rnc%d: %.1f MB/s of output (%zu -> %zu bytes)\n", m, (double)n / best / 1e6, pn, n);
        free(packed);
    }
    free(raw);
    return 0;
}
