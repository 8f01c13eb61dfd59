/* Codec throughput (MB/s of output on one core): RNC methods 1 and 2 on a few MB of
 * data packed by the test packer, RefPack (test packer) beside zlib on the same data,
 * Oodle1 on the shared vector, Oodle0 and BitKnit2 on data packed by their test encoders.
 * Run by scripts/bench.sh; not a test. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "oodle0enc.h"
#include "parse/codec/oodle0.h"
#include "bitknit2enc.h"
#include "parse/codec/bitknit2.h"
#include "parse/codec/oodle1.h"
#include "parse/codec/refpack.h"
#include "parse/codec/rnc.h"
#include "refpack_pack.h"
#include "rncpack.h"

#include <zlib.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The CPU time this thread has used. */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
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

/* BitKnit2 bench data: words drawn at random from a small vocabulary (literals and short
 * matches, like text), or 32-byte vertex records whose low bytes are noise. */
static void bitknit2_sample(uint8_t *p, size_t n, int kind)
{
    static const char *const words[] = {"the ", "bone ", "of ", "a ", "skeleton ", "Mesh", "vertex ", "and ",
                                        "rig. ", "Granny ", "track ", "curve ", "\n", "position ", "0.5 ", "-1 "};
    uint32_t x = 2463534242u;
    size_t i = 0;
    while (i < n) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        if (kind == 0) {
            for (const char *w = words[x % 16]; *w && i < n; w++)
                p[i++] = (uint8_t)*w;
        } else {
            uint8_t rec[32];
            for (int k = 0; k < 32; k++) /* position/normal/uv floats: random low bytes */
                rec[k] = k % 4 == 0 ? (uint8_t)(x >> (k % 24)) : k % 4 == 1 ? (uint8_t)(i >> 12) : k % 4 == 2 ? 0x80 : 0x3f;
            for (int k = 0; k < 32 && i < n; k++)
                p[i++] = rec[k];
        }
    }
}

/* BitKnit2: both samples packed by the test encoder (64 quanta each); best of 5. */
static int bench_bitknit2(void)
{
    size_t n = 4u << 20;
    for (int kind = 0; kind < 2; kind++) {
        uint8_t *raw = malloc(n), *out = malloc(n);
        if (!raw || !out)
            return 1;
        bitknit2_sample(raw, n, kind);
        struct bk2enc_opts o = {0};
        size_t pn;
        uint8_t *packed = bk2enc_encode(raw, n, &o, &pn, NULL);
        double best = 1e9;
        for (int rep = 0; rep < 5; rep++) {
            char err[256];
            double t0 = now();
            if (bitknit2_decode(packed, pn, out, n, NULL, err, sizeof err) || memcmp(out, raw, n) != 0) {
                fprintf(stderr, "bitknit2: %s\n", err);
                return 1;
            }
            double dt = now() - t0;
            best = dt < best ? dt : best;
        }
        printf("codec bitknit2: %.1f MB/s of output (%s: %zu -> %zu bytes)\n", (double)n / best / 1e6,
               kind == 0 ? "random words" : "vertex records", pn, n);
        free(out);
        free(packed);
        free(raw);
    }
    return 0;
}

/* A floor under an Oodle1 decoder on this CPU: a loop holding only the range decoder's
 * per-symbol arithmetic (refill, step, the division, one table load, the take), with one
 * small table in L1 and every branch predictable, over random bytes. Returns ns/symbol. */
static double range_decoder_floor(void)
{
    enum { SYMBOLS = 20000000, STREAM = 1 << 20 };
    uint8_t *s = malloc(STREAM + 4);
    if (!s)
        return 0;
    uint32_t x = 12345;
    for (size_t i = 0; i < STREAM + 4; i++) {
        x = x * 1103515245u + 12345u;
        s[i] = (uint8_t)(x >> 16);
    }
    uint64_t table[256]; /* 256 ranges of 64 in 0x4000: start | end << 32 */
    for (uint32_t b = 0; b < 256; b++)
        table[b] = b * 64 | (uint64_t)(b * 64 + 64) << 32;
    uint32_t low = s[0] >> 1, range = 0x80, sum = 0;
    size_t p = 0;
    double t0 = now();
    for (long i = 0; i < SYMBOLS; i++) {
        uint32_t k = (uint32_t)(range <= 0x800000) + (range <= 0x8000) + (range <= 0x80);
        uint32_t y = ((uint32_t)s[p] << 24 | (uint32_t)s[p + 1] << 16 | (uint32_t)s[p + 2] << 8 | s[p + 3]) >> 1;
        low = (uint32_t)((uint64_t)low << (8 * k)) | (uint32_t)((uint64_t)(y & 0xFFFFFF) >> (24 - 8 * k));
        range = (uint32_t)((uint64_t)range << (8 * k));
        p = p + k < STREAM ? p + k : 0;
        uint32_t step = (range >> 14) | 1, q = low / step;
        uint64_t e = table[(q < 0x3FFF ? q : 0x3FFF) >> 6];
        uint32_t lo = (uint32_t)e, hi = (uint32_t)(e >> 32);
        sum += lo;
        low -= step * lo;
        range = hi < 0x4000 ? step * (hi - lo) : range - step * lo;
    }
    double dt = now() - t0;
    free(s);
    return sum == 1 ? 0 : dt / SYMBOLS * 1e9; /* sum keeps the loop from being dropped */
}

/* Packs raw[0, n) with the Oodle0 test encoder (stops s0, s1) and times its expansion:
 * "codec oodle0 (what)" with the best wall time and the best CPU time of `reps` runs. The CPU
 * time too, because a long expansion outlasts a scheduler time slice: on a shared, busy
 * machine its wall time measures the other processes. */
static int time_oodle0(const uint8_t *raw, uint32_t n, uint32_t s0, uint32_t s1, int reps, const char *what)
{
    struct o0e_opts o = {.u_extra = 1};
    size_t pn;
    uint8_t *packed = o0e_encode(raw, n, s0, s1, &o, &pn, NULL);
    if (!packed)
        return 1;
    double best = 1e9, best_cpu = 1e9;
    for (int rep = 0; rep < reps; rep++) {
        uint8_t *out;
        char err[256];
        double t0 = now(), c0 = cpu_now();
        if (oodle0_expand(packed, pn, false, s0, s1, n, 0, &out, err, sizeof err)) {
            fprintf(stderr, "oodle0: %s\n", err);
            return 1;
        }
        double dt = now() - t0, dc = cpu_now() - c0;
        best = dt < best ? dt : best;
        best_cpu = dc < best_cpu ? dc : best_cpu;
        if (memcmp(out, raw, n) != 0) {
            fprintf(stderr, "oodle0: wrong output\n");
            return 1;
        }
        free(out);
    }
    printf("codec oodle0: %.1f MB/s of output, %.1f MB/s of CPU time (%s: %zu -> %u bytes, packed by the test "
           "encoder)\n",
           n / best / 1e6, n / best_cpu / 1e6, what, pn, n);
    free(packed);
    return 0;
}

/* Oodle0: the same kind of data as RNC (text from the vectors, else structured bytes), 1 MB,
 * stops at a half and three quarters; then the text of the Oodle1 vector timed below, with
 * its stops, to compare the two codecs on the same bytes. */
static int bench_oodle0(const char *vectors)
{
    uint32_t n = 1u << 20;
    uint8_t *raw = sample(vectors, n);
    int rc = time_oodle0(raw, n, n / 2, n / 4 * 3, 20, "1 MB sample");
    free(raw);
    char path[1024];
    snprintf(path, sizeof path, "%s/oodle1/alice_full.raw", vectors ? vectors : ".");
    FILE *f = fopen(path, "rb");
    if (rc || !f) {
        if (f)
            fclose(f);
        return rc;
    }
    static uint8_t text[152089];
    size_t got = fread(text, 1, sizeof text, f);
    fclose(f);
    return time_oodle0(text, (uint32_t)got, 49152, 98304, 100, "alice_full");
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
    /* the two package codecs on the same bytes */
    size_t rn;
    uint8_t *rp = rp_pack(raw, n, NULL, &rn, NULL);
    uLongf zn = compressBound((uLong)n);
    uint8_t *zp = malloc(zn), *out = malloc(n + 1);
    if (!zp || !out || compress2(zp, &zn, raw, (uLong)n, 6) != Z_OK)
        return 1;
    double best_rp = 1e9, best_z = 1e9;
    for (int rep = 0; rep < 12; rep++) {
        char err[200];
        double t0 = now();
        if (refpack_expand(rp, rn, out, n, err, sizeof err) || memcmp(out, raw, n) != 0) {
            fprintf(stderr, "refpack: %s\n", err);
            return 1;
        }
        double dt = now() - t0;
        best_rp = dt < best_rp ? dt : best_rp;
        uLongf on = (uLongf)n;
        t0 = now();
        if (uncompress(out, &on, zp, zn) != Z_OK || on != n) {
            fprintf(stderr, "zlib: failed\n");
            return 1;
        }
        dt = now() - t0;
        best_z = dt < best_z ? dt : best_z;
    }
    printf("codec refpack: %.1f MB/s of output (%zu -> %zu bytes)\n", (double)n / best_rp / 1e6, rn, n);
    printf("codec zlib: %.1f MB/s of output (%lu -> %zu bytes, the system zlib)\n", (double)n / best_z / 1e6,
           (unsigned long)zn, n);
    free(rp);
    free(zp);
    free(out);
    free(raw);
    if (bench_oodle0(argc > 1 ? argv[1] : NULL))
        return 1;
    if (bench_bitknit2())
        return 1;
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
    for (int rep = 0; rep < 200; rep++) {
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
    /* alice_full is 120,230 modelled symbols and 25,139 raw values (counted once with a
     * counter in the decoder); the raw ones cost about as much each */
    double floor_ns = range_decoder_floor();
    printf("codec oodle1 floor: the range decoder's arithmetic alone, with no model or LZ work, takes %.1f ns "
           "per symbol here: %.0f MB/s on alice_full\n",
           floor_ns, 152089 / (145369 * floor_ns * 1e-9) / 1e6);
    return 0;
}
