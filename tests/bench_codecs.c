/* Codec throughput (MB/s of output on one core): RNC methods 1 and 2 on a few MB of
 * data packed by the test packer. Run by scripts/bench.sh; not a test. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "parse/oodle1.h"
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
        for (int rep = 0; rep < 12; rep++) {
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
    /* Oodle1: the largest shared vector */
    char path[1024];
    snprintf(path, sizeof path, "%s/oodle1/alice_full.oodle1", argc > 1 ? argv[1] : ".");
    FILE *f = fopen(path, "rb");
    if (!f) {
        printf("codec oodle1: vector not found (%s)\n", path);
        return 0;
    }
    static uint8_t packed[1 << 20];
    size_t pn = fread(packed, 1, sizeof packed, f);
    fclose(f);
    double best = 1e9;
    for (int rep = 0; rep < 10; rep++) {
        uint8_t *out;
        char err[256];
        double t0 = now();
        if (oodle1_expand(packed, pn, false, 49152, 98304, 152089, 0, &out, err, sizeof err)) {
            fprintf(stderr, "oodle1: %s\n", err);
            return 1;
        }
        double dt = now() - t0;
        best = dt < best ? dt : best;
        free(out);
    }
    printf("codec oodle1: %.1f MB/s of output (alice_full: %zu -> 152089 bytes)\n", 152089 / best / 1e6, pn);
    return 0;
}
