#include "rncpack.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

uint16_t rncpack_crc16(const uint8_t *p, size_t n)
{
    uint16_t crc = 0;
    for (size_t i = 0; i < n; i++) {
        crc ^= p[i];
        for (int k = 0; k < 8; k++)
            crc = (crc & 1) ? (uint16_t)((crc >> 1) ^ 0xA001) : (uint16_t)(crc >> 1);
    }
    return crc;
}

struct out {
    uint8_t *p;
    size_t len, cap;
    size_t unit;  /* position of the current bit unit (word or byte) */
    int used;     /* bits used in it; = unit size when full */
    int unit_bits;
    bool msb;     /* method 2: MSB first */
};

static void grow(struct out *o, size_t n)
{
    if (o->len + n > o->cap) {
        o->cap = (o->len + n) * 2 + 64;
        o->p = realloc(o->p, o->cap);
    }
}

static void put_raw(struct out *o, uint8_t b)
{
    grow(o, 1);
    o->p[o->len++] = b;
}

/* Bits go into the unit fetched most recently; a new unit is placed at the current end
 * exactly when the decoder would fetch one (lazily, on the next bit). */
static void put_bit(struct out *o, unsigned bit)
{
    if (o->used == o->unit_bits) {
        o->unit = o->len;
        grow(o, (size_t)o->unit_bits / 8);
        memset(o->p + o->len, 0, (size_t)o->unit_bits / 8);
        o->len += (size_t)o->unit_bits / 8;
        o->used = 0;
    }
    if (bit) {
        if (o->msb)
            o->p[o->unit] |= (uint8_t)(0x80 >> o->used);
        else
            o->p[o->unit + (size_t)o->used / 8] |= (uint8_t)(1u << (o->used % 8));
    }
    o->used++;
}

/* LSB-first number (method 1). */
static void put_bits_lsb(struct out *o, uint32_t v, int n)
{
    for (int i = 0; i < n; i++)
        put_bit(o, (v >> i) & 1);
}

/* MSB-first number (method 2 and Huffman codes). */
static void put_bits_msb(struct out *o, uint32_t v, int n)
{
    for (int i = n - 1; i >= 0; i--)
        put_bit(o, (v >> i) & 1);
}

/* Greedy longest match within `window` bytes, through hash chains of 3-byte prefixes
 * (at most 32 candidates), so megabytes pack quickly. */
struct matcher {
    const uint8_t *in;
    size_t n;
    int32_t *head, *prev;
};

#define HASH_BITS 15

static unsigned hash3(const uint8_t *p)
{
    return ((unsigned)p[0] << 10 ^ (unsigned)p[1] << 5 ^ p[2]) & ((1u << HASH_BITS) - 1);
}

static void matcher_init(struct matcher *m, const uint8_t *in, size_t n)
{
    m->in = in;
    m->n = n;
    m->head = malloc(sizeof(int32_t) << HASH_BITS);
    m->prev = malloc(sizeof(int32_t) * (n ? n : 1));
    for (size_t i = 0; i < (1u << HASH_BITS); i++)
        m->head[i] = -1;
}

static void matcher_insert(struct matcher *m, size_t pos)
{
    if (pos + 3 > m->n)
        return;
    unsigned h = hash3(m->in + pos);
    m->prev[pos] = m->head[h];
    m->head[h] = (int32_t)pos;
}

static size_t find_match(struct matcher *m, size_t pos, size_t window, size_t maxlen, size_t *dist)
{
    size_t best = 0;
    if (pos + 3 > m->n)
        return 0;
    int32_t cand = m->head[hash3(m->in + pos)];
    for (int steps = 0; cand >= 0 && steps < 32 && pos - (size_t)cand <= window; steps++) {
        size_t l = 0;
        while (pos + l < m->n && l < maxlen && m->in[(size_t)cand + l] == m->in[pos + l])
            l++;
        if (l > best) {
            best = l;
            *dist = pos - (size_t)cand;
        }
        cand = m->prev[cand];
    }
    return best;
}

static void matcher_free(struct matcher *m)
{
    free(m->head);
    free(m->prev);
}

/* ---- method 1: all 16 symbols with 4-bit codes in every table ---- */

static void m1_value(struct out *o, uint32_t v)
{
    unsigned s = 0;
    if (v >= 2) {
        s = 1;
        while ((v >> s) != 0)
            s++;
    } else {
        s = v;
    }
    put_bits_msb(o, s, 4); /* canonical code of symbol s with 16 four-bit codes = s */
    if (s >= 2)
        put_bits_lsb(o, v - (1u << (s - 1)), (int)s - 1);
}

static void m1_tables(struct out *o)
{
    for (int t = 0; t < 3; t++) {
        put_bits_lsb(o, 16, 5);
        for (int i = 0; i < 16; i++)
            put_bits_lsb(o, 4, 4);
    }
}

struct token {
    size_t lit_start, lit_len, dist, len;
};

static size_t tokenize(const uint8_t *in, size_t n, size_t window, size_t minlen, size_t maxlen,
                       size_t maxlit, struct token **out)
{
    size_t cap = 64, nt = 0, pos = 0, lit = 0;
    struct token *t = malloc(cap * sizeof *t);
    struct matcher m;
    matcher_init(&m, in, n);
    while (pos < n) {
        size_t dist = 0, len = find_match(&m, pos, window, maxlen, &dist);
        if (len >= minlen || (lit == maxlit)) {
            if (nt == cap)
                t = realloc(t, (cap *= 2) * sizeof *t);
            if (len < minlen)
                len = dist = 0;
            t[nt++] = (struct token){pos - lit, lit, dist, len};
            for (size_t k = 0; k < len; k++) /* a forced token (len 0) consumes no byte */
                matcher_insert(&m, pos++);
            lit = 0;
            continue;
        }
        matcher_insert(&m, pos);
        lit++;
        pos++;
    }
    matcher_free(&m);
    if (nt == cap)
        t = realloc(t, (cap + 1) * sizeof *t);
    t[nt++] = (struct token){pos - lit, lit, 0, 0};
    *out = t;
    return nt;
}

static void m1_chunk(struct out *o, const uint8_t *in, const struct token *run, size_t count)
{
    m1_tables(o);
    put_bits_lsb(o, (uint32_t)count, 16);
    for (size_t k = 0; k < count; k++) {
        m1_value(o, (uint32_t)run[k].lit_len);
        for (size_t b = 0; b < run[k].lit_len; b++)
            put_raw(o, in[run[k].lit_start + b]);
        if (k + 1 < count) {
            m1_value(o, (uint32_t)(run[k].dist - 1));
            m1_value(o, (uint32_t)(run[k].len - 2));
        }
    }
}

/* A chunk holds `count` literal runs and count-1 matches: the last run has no match.
 * When a chunk would end on a run with a match, the match moves to the next chunk as a
 * run of zero literals. */
static unsigned pack_m1(struct out *o, const uint8_t *in, size_t n, unsigned chunk_tokens)
{
    o->unit_bits = 16;
    o->used = 16;
    o->msb = false;
    put_bits_lsb(o, 0, 2); /* lock, key */
    struct token *t;
    size_t nt = tokenize(in, n, 32768, 3, 32769, 32767, &t);
    if (chunk_tokens < 2 || chunk_tokens > 65535)
        chunk_tokens = 65535;
    struct token *run = malloc(chunk_tokens * sizeof *run), carry = {0};
    bool has_carry = false;
    unsigned chunks = 0;
    size_t i = 0;
    while (i < nt || has_carry) {
        size_t c = 0;
        if (has_carry) {
            run[c++] = carry;
            has_carry = false;
        }
        while (c < chunk_tokens && i < nt) {
            run[c++] = t[i++];
            if (run[c - 1].len == 0)
                break; /* a run without a match can only end a chunk */
        }
        if (run[c - 1].len) {
            carry = (struct token){0, 0, run[c - 1].dist, run[c - 1].len};
            run[c - 1].len = 0;
            has_carry = true;
        }
        m1_chunk(o, in, run, c);
        chunks++;
    }
    free(run);
    free(t);
    return chunks;
}

/* ---- method 2 ---- */

static void m2_distance(struct out *o, size_t d)
{
    static const struct {
        uint8_t bits, n;
    } hi_code[16] = {{0x0, 1},  {0x6, 3},  {0x8, 4},  {0x9, 4},  {0x15, 5}, {0x17, 5}, {0x1D, 5}, {0x1F, 5},
                     {0x28, 6}, {0x29, 6}, {0x2C, 6}, {0x2D, 6}, {0x38, 6}, {0x39, 6}, {0x3C, 6}, {0x3D, 6}};
    size_t v = d - 1;
    put_bits_msb(o, hi_code[v >> 8].bits, hi_code[v >> 8].n);
    put_raw(o, (uint8_t)(v & 0xFF));
}

static void m2_literal_run(struct out *o, const uint8_t *p, size_t n)
{
    while (n >= 12) {
        size_t k = (n - 12) / 4;
        if (k > 15)
            k = 15;
        size_t len = 4 * k + 12;
        put_bits_msb(o, 0x2, 2); /* 10 */
        put_bits_msb(o, 0x7, 3); /* len code 111 = 9 = literal run */
        put_bits_msb(o, (uint32_t)k, 4);
        for (size_t i = 0; i < len; i++)
            put_raw(o, p[i]);
        p += len;
        n -= len;
    }
    for (size_t i = 0; i < n; i++) {
        put_bit(o, 0);
        put_raw(o, p[i]);
    }
}

static void m2_match(struct out *o, size_t dist, size_t len)
{
    if (len == 2) {
        put_bits_msb(o, 0x6, 3);
        put_raw(o, (uint8_t)(dist - 1));
    } else if (len == 3) {
        put_bits_msb(o, 0xE, 4);
        m2_distance(o, dist);
    } else if (len <= 8) {
        static const struct {
            uint8_t bits, n;
        } len_code[9] = {{0, 0}, {0, 0}, {0, 0}, {0, 0}, {0x0, 2}, {0x2, 2}, {0x2, 3}, {0x3, 3}, {0x6, 3}};
        put_bits_msb(o, 0x2, 2);
        put_bits_msb(o, len_code[len].bits, len_code[len].n);
        m2_distance(o, dist);
    } else {
        put_bits_msb(o, 0xF, 4);
        put_raw(o, (uint8_t)(len - 8));
        m2_distance(o, dist);
    }
}

static unsigned pack_m2(struct out *o, const uint8_t *in, size_t n, unsigned chunk_tokens)
{
    o->unit_bits = 8;
    o->used = 8;
    o->msb = true;
    put_bits_msb(o, 0, 2);
    struct token *t;
    size_t nt = tokenize(in, n, 4096, 2, 263, (size_t)-1, &t);
    unsigned chunks = 1, in_chunk = 0;
    for (size_t k = 0; k < nt; k++) {
        m2_literal_run(o, in + t[k].lit_start, t[k].lit_len);
        size_t d = t[k].dist, l = t[k].len;
        if (l == 2 && d > 256) { /* no short form that far: send as literals */
            m2_literal_run(o, in + t[k].lit_start + t[k].lit_len, 2);
        } else if (l) {
            m2_match(o, d, l);
        }
        if (chunk_tokens && ++in_chunk == chunk_tokens && k + 1 < nt) {
            put_bits_msb(o, 0xF, 4);
            put_raw(o, 0);
            put_bit(o, 1);
            chunks++;
            in_chunk = 0;
        }
    }
    put_bits_msb(o, 0xF, 4);
    put_raw(o, 0);
    put_bit(o, 0);
    free(t);
    return chunks;
}

uint8_t *rncpack(int method, const uint8_t *in, size_t n, unsigned chunk_tokens, size_t *out_len)
{
    struct out o = {0};
    grow(&o, 18);
    o.len = 18;
    unsigned chunks = method == 1 ? pack_m1(&o, in, n, chunk_tokens) : pack_m2(&o, in, n, chunk_tokens);
    uint32_t packed = (uint32_t)(o.len - 18);
    uint8_t *h = o.p;
    memcpy(h, "RNC", 3);
    h[3] = (uint8_t)method;
    uint32_t v[2] = {(uint32_t)n, packed};
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < 4; i++)
            h[4 + 4 * k + i] = (uint8_t)(v[k] >> (24 - 8 * i));
    uint16_t ucrc = rncpack_crc16(in, n), pcrc = rncpack_crc16(o.p + 18, packed);
    h[12] = (uint8_t)(ucrc >> 8);
    h[13] = (uint8_t)ucrc;
    h[14] = (uint8_t)(pcrc >> 8);
    h[15] = (uint8_t)pcrc;
    h[16] = 0;
    h[17] = (uint8_t)chunks;
    *out_len = o.len;
    return o.p;
}
