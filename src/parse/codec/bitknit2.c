/* BitKnit2 decoder, from docs/formats/bitknit2.md (section numbers below are the
 * notes'). Hostile input is normal input: every input word is bounds-checked, every
 * distance and length is validated against the output that exists, and the end of each
 * compressed quantum must leave both rANS states at exactly 65536. Every command writes
 * at least one byte, so the loops run at most out_len times: no other guard is needed. */
#include "parse/codec/bitknit2.h"
#include "parse/base/diag.h"
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/base/err.h"

#define CMD_SYMBOLS 300
#define REUSE_SYMBOLS 40
#define BUCKET_SYMBOLS 21
#define MODEL_TOTAL 32768u  /* 15-bit cumulative frequencies */
#define MODEL_PERIOD 1024u  /* a model rebuilds its table every this many symbols */
#define STATE_LOW 65536u    /* states live in [65536, 2^32) between primitives */
#define LUT_SHIFT 5         /* lookup on the top 10 of the 15 bits, then a short scan up */
#define LUT_SIZE (MODEL_TOTAL >> LUT_SHIFT)

/* An adaptive model (section 5). cdf has n+1 entries; acc collects the deferred
 * frequency increments; lut[x >> LUT_SHIFT] is the symbol holding the bucket's lowest x. */
struct model {
    uint16_t cdf[CMD_SYMBOLS + 1];
    uint16_t acc[CMD_SYMBOLS];
    uint16_t lut[LUT_SIZE];
    uint32_t n, count, bonus;
};

struct bk2 {
    const uint8_t *in, *pos, *end; /* the input and its cursor */
    bool overrun;                  /* a word was wanted past the end (reads gave 0) */
    uint32_t active, other;        /* the two interleaved rANS states (section 4.1) */
    struct model cmd[4], reuse[4], bucket;
    uint32_t dist[8];              /* recent distances, 0 = most recently reused */
    uint32_t delta;                /* the distance literals are coded against */
};

/* ---- input ---- */

/* The next 16-bit little-endian word; 0 and the overrun flag when the input has none.
 * The flag is tested once per command, which is enough: a decoder fed zeros still
 * keeps its states in range and the loop is bounded by the output size. */
static inline uint32_t next_word(struct bk2 *d)
{
    if (d->end - d->pos < 2) {
        d->overrun = true;
        return 0;
    }
    uint32_t w = (uint32_t)d->pos[0] | (uint32_t)d->pos[1] << 8;
    d->pos += 2;
    return w;
}

/* ---- entropy coder (section 4) ---- */

/* After every primitive: refill the active state if it fell under 65536 (one word is
 * always enough: the state is at least 2 here), then the states swap roles. */
static inline void finish(struct bk2 *d)
{
    if (d->active < STATE_LOW)
        d->active = d->active << 16 | next_word(d);
    uint32_t t = d->active;
    d->active = d->other;
    d->other = t;
}

static inline uint32_t raw_bits(struct bk2 *d, unsigned k)
{
    uint32_t v = d->active & ((1u << k) - 1);
    d->active >>= k;
    finish(d);
    return v;
}

static void build_lut(struct model *m)
{
    uint32_t s = 0;
    for (uint32_t j = 0; j < LUT_SIZE; j++) {
        uint32_t x = j << LUT_SHIFT;
        while (m->cdf[s + 1] <= x)
            s++;
        m->lut[j] = (uint16_t)s;
    }
}

/* Section 5.2: each model starts with its own table, all accumulators 1. */
static void model_init(struct model *m, uint32_t n)
{
    m->n = n;
    m->count = 0;
    m->bonus = MODEL_TOTAL - n - 31 * MODEL_PERIOD + 1;
    for (uint32_t i = 0; i <= n; i++) {
        if (n == CMD_SYMBOLS)
            m->cdf[i] = (uint16_t)(i < 264 ? 32732u * i / 264 : 32468u + i);
        else
            m->cdf[i] = (uint16_t)(MODEL_TOTAL * i / n);
    }
    for (uint32_t i = 0; i < n; i++)
        m->acc[i] = 1;
    build_lut(m);
}

/* Section 5.3: after every symbol; the table moves halfway towards the counts every
 * 1024 symbols. R_n is always 32769, so cdf[n] stays 32768 and no frequency reaches 0. */
static void model_update(struct model *m, uint32_t s)
{
    m->acc[s] += 31;
    if (++m->count < MODEL_PERIOD)
        return;
    m->count = 0;
    m->acc[s] += (uint16_t)m->bonus;
    uint32_t r = 0;
    for (uint32_t i = 1; i <= m->n; i++) {
        r += m->acc[i - 1];
        m->cdf[i] = (uint16_t)((m->cdf[i] + r) >> 1);
    }
    for (uint32_t i = 0; i < m->n; i++)
        m->acc[i] = 1;
    build_lut(m);
}

/* A model symbol: decoded with the table as it was, then the model learns it. */
static inline uint32_t decode_symbol(struct bk2 *d, struct model *m)
{
    uint32_t x = d->active & (MODEL_TOTAL - 1);
    uint32_t s = m->lut[x >> LUT_SHIFT];
    while (m->cdf[s + 1] <= x)
        s++;
    uint32_t lo = m->cdf[s];
    d->active = (d->active >> 15) * (m->cdf[s + 1] - lo) + (x - lo);
    finish(d);
    model_update(m, s);
    return s;
}

/* Section 4.2, with the first (non-zero) word already read. The first word is the high
 * half of V. Both states come out in range by construction: T is at least 4096 × 65536
 * after its refill, so X is at least 2^13 before its own, and Y carries the implicit
 * 2^(16+s). All in 32 bits: (T mod 2^s) × 65536 < 2^31 and 2^(16+s) ≤ 2^31. */
static void init_states(struct bk2 *d, uint32_t first)
{
    uint32_t v = first << 16 | next_word(d);
    uint32_t s = v & 15, t = v >> 4;
    if (t < STATE_LOW)
        t = t << 16 | next_word(d);
    uint32_t x = t >> s;
    if (x < STATE_LOW)
        x = x << 16 | next_word(d);
    uint32_t y = (1u << (16 + s)) + ((t & ((1u << s) - 1)) << 16) + next_word(d);
    d->active = x;
    d->other = y;
}

enum s3_err bitknit2_init_states(const uint16_t *w, size_t nw, uint32_t *x, uint32_t *y, size_t *used)
{
    uint8_t b[10];
    size_t n = nw < 5 ? nw : 5;
    for (size_t i = 0; i < n; i++) {
        b[2 * i] = (uint8_t)w[i];
        b[2 * i + 1] = (uint8_t)(w[i] >> 8);
    }
    if (n == 0)
        return S3_ERR_RANGE;
    if (w[0] == 0)
        return S3_ERR_FORMAT;
    struct bk2 d = {.in = b, .pos = b + 2, .end = b + 2 * n};
    init_states(&d, w[0]);
    if (d.overrun)
        return S3_ERR_RANGE;
    *x = d.active;
    *y = d.other;
    *used = (size_t)(d.pos - b) / 2;
    return S3_OK;
}

/* ---- LZ layer (section 6) ---- */

/* out[p+i] = out[p+i-g] in increasing i: an overlap (g < m) repeats the pattern. */
static inline void copy_match(uint8_t *out, size_t p, uint32_t g, uint32_t m)
{
    uint8_t *dst = out + p;
    const uint8_t *src = dst - g;
    if (g == 1) {
        memset(dst, *src, m);
        return;
    }
    if (g >= 8) /* 8 bytes at a time never read what the same step writes */
        for (; m >= 8; m -= 8, dst += 8, src += 8)
            memcpy(dst, src, 8);
    while (m--)
        *dst++ = *src++;
}

/* The distance of a match after its reuse symbol r: a recent one moved to the front, or
 * a new one (bucket, raw bits, maybe a raw word) entering second to last. */
static uint32_t match_distance(struct bk2 *d, uint32_t r)
{
    if (r < 8) {
        uint32_t g = d->dist[r];
        memmove(d->dist + 1, d->dist, r * sizeof d->dist[0]);
        d->dist[0] = g;
        return g;
    }
    uint32_t k = decode_symbol(d, &d->bucket);
    uint32_t e = raw_bits(d, k & 15);
    if (k >= 16)
        e = e << 16 | next_word(d);
    uint32_t g = 32u * (1u << k) + 32u * e + r - 39;
    d->dist[7] = d->dist[6];
    d->dist[6] = g;
    return g;
}

static enum s3_err overrun_err(const struct bk2 *d, size_t p, size_t n, char *err, size_t errlen)
{
    return s3_fail(S3_ERR_RANGE, err, errlen,
                   "BitKnit2: input overrun: the %zu-byte stream ends at output byte %zu of %zu",
                   (size_t)(d->end - d->in), p, n);
}

/* Commands of one compressed quantum until *p reaches e (a match may run past e, up to n). */
static enum s3_err decode_commands(struct bk2 *d, uint8_t *out, size_t *p, size_t e, size_t n, char *err,
                                   size_t errlen)
{
    size_t pos = *p;
    while (pos < e) {
        uint32_t c = decode_symbol(d, &d->cmd[pos & 3]);
        if (c < 256) {
            out[pos] = (uint8_t)(c + out[pos - d->delta]);
            pos++;
            if (d->overrun)
                break;
            continue;
        }
        uint32_t m;
        if (c < 288) {
            m = c - 254;
        } else {
            uint32_t k = c - 287;
            m = (1u << k) + 32 + raw_bits(d, k);
        }
        uint32_t g = match_distance(d, decode_symbol(d, &d->reuse[pos & 3]));
        if (d->overrun)
            break;
        if (g > pos) {
            *p = pos;
            return s3_fail(S3_ERR_FORMAT, err, errlen,
                           "BitKnit2: match distance %u at output byte %zu reaches before the output start", g, pos);
        }
        if (m > n - pos) {
            *p = pos;
            return s3_fail(S3_ERR_FORMAT, err, errlen,
                           "BitKnit2: match of %u bytes at output byte %zu runs past the end (%zu bytes)", m, pos, n);
        }
        copy_match(out, pos, g, m);
        pos += m;
        d->delta = g;
    }
    *p = pos;
    if (d->overrun)
        return overrun_err(d, pos, n, err, errlen);
    return S3_OK;
}

static void stream_init(struct bk2 *d, const uint8_t *in, size_t in_len)
{
    d->in = in;
    d->pos = in + 2;
    d->end = in + in_len;
    d->overrun = false;
    for (int i = 0; i < 4; i++) {
        model_init(&d->cmd[i], CMD_SYMBOLS);
        model_init(&d->reuse[i], REUSE_SYMBOLS);
    }
    model_init(&d->bucket, BUCKET_SYMBOLS);
    for (int i = 0; i < 8; i++)
        d->dist[i] = 1;
    d->delta = 1;
}

/* One quantum starting at *p (section 3): stored, or compressed and state-checked. */
static enum s3_err decode_quantum(struct bk2 *d, uint8_t *out, size_t *p, size_t n, struct bitknit2_stats *st,
                                  char *err, size_t errlen)
{
    size_t e = (*p / BITKNIT2_QUANTUM + 1) * BITKNIT2_QUANTUM;
    if (e > n)
        e = n;
    uint32_t w = next_word(d);
    if (d->overrun)
        return overrun_err(d, *p, n, err, errlen);
    st->quanta++;
    if (w == 0) { /* stored: exactly e - p bytes follow */
        if ((size_t)(d->end - d->pos) < e - *p)
            return s3_fail(S3_ERR_RANGE, err, errlen,
                           "BitKnit2: input overrun: stored quantum at output byte %zu needs %zu bytes, %zu remain", *p,
                           e - *p, (size_t)(d->end - d->pos));
        memcpy(out + *p, d->pos, e - *p);
        d->pos += e - *p;
        *p = e;
        st->stored_quanta++;
        return S3_OK;
    }
    init_states(d, w);
    if (d->overrun)
        return overrun_err(d, *p, n, err, errlen);
    if (*p == 0) { /* section 6.2: the very first byte is 8 raw bits */
        out[0] = (uint8_t)raw_bits(d, 8);
        *p = 1;
    }
    enum s3_err r = decode_commands(d, out, p, e, n, err, errlen);
    if (r != S3_OK)
        return r;
    if (d->active != STATE_LOW || d->other != STATE_LOW)
        return s3_fail(S3_ERR_FORMAT, err, errlen,
                       "BitKnit2: final state check failed at output byte %zu (states 0x%x 0x%x, both must be "
                       "0x10000)", *p, d->active, d->other);
    return S3_OK;
}

enum s3_err bitknit2_decode(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len,
                            struct bitknit2_stats *stats, char *err, size_t errlen)
{
    struct bitknit2_stats local;
    struct bitknit2_stats *st = stats ? stats : &local;
    memset(st, 0, sizeof *st);
    if (out_len == 0) /* an empty section has no stream, not even the magic */
        return S3_OK;
    if (in_len < 2 || (in[0] | in[1] << 8) != BITKNIT2_MAGIC)
        return s3_fail(S3_ERR_FORMAT, err, errlen,
                       "BitKnit2: no stream magic (B1 75) at the start of the %zu stored bytes", in_len);
    struct bk2 *d = malloc(sizeof *d);
    if (!d)
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    stream_init(d, in, in_len);
    size_t p = 0;
    enum s3_err e = S3_OK;
    while (p < out_len && e == S3_OK)
        e = decode_quantum(d, out, &p, out_len, st, err, errlen);
    st->consumed = (size_t)(d->pos - d->in);
    st->produced = p;
    free(d);
    return e;
}

enum s3_err bitknit2_expand(const struct s3_src *src, uint64_t off, uint64_t len, uint64_t out_size,
                            uint64_t max_out, uint8_t **out, struct bitknit2_stats *stats, char *err, size_t errlen)
{
    *out = NULL;
    if ((max_out && out_size > max_out) || out_size > SIZE_MAX / 2)
        return s3_fail(S3_ERR_LIMIT, err, errlen, "BitKnit2: expanded size %llu is over the limit (%llu bytes)",
                       (unsigned long long)out_size, (unsigned long long)max_out);
    if (!range_ok(off, len, src->size) || len > SIZE_MAX / 2)
        return s3_fail(S3_ERR_RANGE, err, errlen,
                       "BitKnit2: stream at 0x%llx, %llu bytes, runs past the end of its source",
                       (unsigned long long)off, (unsigned long long)len);
    /* An empty output needs no input; else the input never needs more than the stream. */
    enum s3_err e;
    uint8_t *in = alloc_array(len, 1);
    uint8_t *o = alloc_array(out_size, 1);
    if (!in || !o) {
        e = s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
        goto fail;
    }
    if (src_read(src, off, in, (size_t)len)) {
        e = s3_fail(S3_ERR_IO, err, errlen, "BitKnit2: stream at 0x%llx: read error", (unsigned long long)off);
        goto fail;
    }
    e = bitknit2_decode(in, (size_t)len, o, (size_t)out_size, stats, err, errlen);
    if (e != S3_OK)
        goto fail;
    free(in);
    *out = o;
    return S3_OK;
fail:
    free(in);
    free(o);
    return e;
}
