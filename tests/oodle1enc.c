#include "oodle1enc.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* ---- range encoder: the interval [lo, lo + range) kept exactly ----
 * The decoder reads the stream as one MSB-first bit string; after k refills its window
 * is 7 + 8k bits wide. The encoder keeps lo as that many bits (a big integer stored
 * MSB-first) and adds at its least significant end, carrying upwards. The output is lo
 * itself: it lies in the final interval. */
struct renc {
    uint8_t *bits; /* bit i of the stream = bits[i / 8] >> (7 - i % 8) */
    size_t cap, width;
    uint32_t range;
};

static void renc_init(struct renc *e)
{
    e->cap = 1024;
    e->bits = calloc(e->cap, 1);
    e->width = 7;
    e->range = 0x80;
}

static void renc_normalise(struct renc *e)
{
    while (e->range <= 0x00800000) {
        e->width += 8;
        e->range <<= 8;
        if ((e->width + 7) / 8 + 8 > e->cap) {
            e->bits = realloc(e->bits, e->cap * 2);
            memset(e->bits + e->cap, 0, e->cap);
            e->cap *= 2;
        }
    }
}

static void renc_add(struct renc *e, uint64_t x)
{
    unsigned carry = 0;
    for (size_t i = e->width; i-- > 0 && (x || carry);) {
        unsigned b = ((e->bits[i / 8] >> (7 - i % 8)) & 1) + (unsigned)(x & 1) + carry;
        if (b & 1)
            e->bits[i / 8] |= (uint8_t)(0x80 >> (i % 8));
        else
            e->bits[i / 8] &= (uint8_t)~(0x80 >> (i % 8));
        carry = b >> 1;
        x >>= 1;
    }
}

static void renc_put(struct renc *e, uint32_t start, uint32_t width, uint32_t total)
{
    renc_normalise(e);
    uint32_t step = e->range / total;
    renc_add(e, (uint64_t)step * start);
    if (start + width < total)
        e->range = step * width;
    else
        e->range -= step * start;
}

static void renc_uniform(struct renc *e, uint32_t v, uint32_t total)
{
    renc_put(e, v, 1, total);
}

/* ---- the models, mirrored ---- */

struct emodel {
    uint16_t cap, tot, inc, next_rescan, halve_at, inc_cap;
    uint32_t n, ncum;
    uint16_t w[1024], sym[1024], cum[1025];
};

static void em_init(struct emodel *m, uint32_t M, uint16_t cap_arg)
{
    memset(m, 0, sizeof *m);
    m->cap = (uint16_t)(cap_arg + 1);
    m->w[0] = 4;
    m->cum[1] = 0x4000;
    m->n = 1;
    m->ncum = 2;
    m->tot = 4;
    m->inc = 4;
    m->next_rescan = 8;
    uint32_t h = 32u * M;
    h = h < 15160 ? h : 15160;
    m->halve_at = (uint16_t)(h > 256 ? h : 256);
    m->inc_cap = M > 64 ? (uint16_t)(2 * M < (uint32_t)(m->halve_at / 2 - 32) ? 2 * M : (uint32_t)(m->halve_at / 2 - 32))
                        : 128;
}

static void em_rescan(struct emodel *m)
{
    uint32_t unit = 0x20000u / m->tot, acc = 0;
    for (uint32_t i = 0; i < m->n; i++) {
        m->cum[i] = (uint16_t)acc;
        acc += (m->w[i] * unit) / 8;
    }
    m->cum[m->n] = 0x4000;
    m->ncum = m->n + 1;
    if (m->inc > m->inc_cap / 2)
        m->next_rescan = (uint16_t)(m->tot + m->inc_cap);
    else {
        m->inc = (uint16_t)(m->inc * 2);
        m->next_rescan = (uint16_t)(m->tot + m->inc);
    }
}

static void em_halve(struct emodel *m)
{
    m->tot = 0;
    for (uint32_t i = 0; i < m->n; i++) {
        m->w[i] >>= 1;
        m->tot = (uint16_t)(m->tot + m->w[i]);
    }
    uint32_t i = 1;
    while (i < m->n) {
        if (m->w[i] == 0) {
            m->n--;
            m->w[i] = m->w[m->n];
            m->sym[i] = m->sym[m->n];
        } else {
            i++;
        }
    }
    if (m->n > 1) {
        uint32_t best = 1;
        for (uint32_t k = 2; k < m->n; k++)
            if (m->w[k] > m->w[best])
                best = k;
        uint16_t tw = m->w[best], ts = m->sym[best];
        m->w[best] = m->w[m->n - 1];
        m->sym[best] = m->sym[m->n - 1];
        m->w[m->n - 1] = tw;
        m->sym[m->n - 1] = ts;
    }
    if (m->n < m->cap && m->w[0] == 0) {
        m->w[0] = 1;
        m->tot = (uint16_t)(m->tot + 1);
    }
}

static void em_put(struct emodel *m, struct renc *e, uint32_t x, uint32_t raw_total)
{
    if (m->tot >= m->next_rescan) {
        if (m->next_rescan >= m->halve_at)
            em_halve(m);
        em_rescan(m);
    }
    uint32_t ranged = m->ncum - 1;
    for (uint32_t k = 1; k < ranged; k++) {
        if (m->sym[k] == x && m->cum[k + 1] > m->cum[k]) {
            renc_put(e, m->cum[k], (uint32_t)(m->cum[k + 1] - m->cum[k]), 0x4000);
            m->w[k]++;
            m->tot++;
            return;
        }
    }
    renc_put(e, m->cum[0], (uint32_t)(m->cum[1] - m->cum[0]), 0x4000); /* escape */
    m->w[0]++;
    m->tot++;
    if (m->n > ranged) {
        for (uint32_t j = ranged; j < m->n; j++) {
            if (m->sym[j] == x) {
                renc_uniform(e, 1, 2);
                renc_uniform(e, j - ranged, m->n - ranged);
                m->w[j] = (uint16_t)(m->w[j] + 2);
                m->tot = (uint16_t)(m->tot + 2);
                return;
            }
        }
        renc_uniform(e, 0, 2);
    }
    uint32_t s = m->n++;
    m->w[s] = 2;
    m->sym[s] = (uint16_t)x;
    m->tot = (uint16_t)(m->tot + 2);
    if (m->n == m->cap) {
        m->tot = (uint16_t)(m->tot - m->w[0]);
        m->w[0] = 0;
    }
    renc_uniform(e, x, raw_total);
}

/* ---- LZ: fixed parameters that never fill a model ---- */

#define LMAX 256
#define DMAX 262143u /* 2^18 - 1, as RAD's encoder writes */
#define LC 511
#define HC 8191
#define SZ 255

struct estage {
    struct emodel lo, hi, lit[4], len[65];
    struct emodel *mid[256];
    uint32_t seen, prev;
};

static void put_params(uint8_t *p, bool be)
{
    for (int k = 0; k < 3; k++) {
        uint32_t a = LMAX | DMAX << 9, b = LC | (uint32_t)HC << 19;
        for (int i = 0; i < 4; i++) {
            int at = be ? 3 - i : i;
            p[12 * k + at] = (uint8_t)(a >> (8 * i));
            p[12 * k + 4 + at] = (uint8_t)(b >> (8 * i));
            p[12 * k + 8 + i] = SZ;
        }
    }
}

static size_t longest(const uint8_t *in, uint32_t pos, uint32_t limit, uint32_t maxdist, uint32_t *dist)
{
    size_t best = 0;
    uint32_t from = pos > maxdist ? pos - maxdist : 0;
    uint32_t tries = 0;
    for (uint32_t c = pos; c-- > from && tries < 4096; tries++) {
        size_t l = 0;
        while (pos + l < limit && l < 512 && in[c + l] == in[pos + l])
            l++;
        if (l > best) {
            best = l;
            *dist = pos - c;
        }
    }
    return best;
}

static uint32_t length_symbol(size_t *len)
{
    static const uint32_t longs[4] = {512, 256, 192, 128};
    for (int i = 0; i < 4; i++)
        if (*len >= longs[i]) {
            *len = longs[i];
            return 64 - (uint32_t)i;
        }
    if (*len > 61)
        *len = 61;
    return (uint32_t)*len - 1;
}

static void encode_stage(struct renc *e, const uint8_t *in, uint32_t *pos, uint32_t stop)
{
    struct estage *s = calloc(1, sizeof *s);
    em_init(&s->lo, 3, 4);
    em_init(&s->hi, DMAX / 1024, HC + 1);
    for (int c = 0; c < 4; c++)
        em_init(&s->lit[c], LMAX - 1, LC);
    for (int t = 0; t < 65; t++)
        em_init(&s->len[t], 64, SZ);
    while (*pos < stop) {
        uint32_t dist = 0;
        size_t len = s->seen ? longest(in, *pos, stop, s->seen < DMAX ? s->seen : DMAX, &dist) : 0;
        if (len >= 2) {
            uint32_t t = length_symbol(&len);
            uint32_t r = s->seen < DMAX ? s->seen : DMAX, d = dist - 1;
            em_put(&s->len[s->prev], e, t, 65);
            s->prev = t;
            em_put(&s->lo, e, d & 3, 4);
            em_put(&s->hi, e, d >> 10, r / 1024 + 1);
            if (!s->mid[d >> 10]) {
                s->mid[d >> 10] = malloc(sizeof(struct emodel));
                em_init(s->mid[d >> 10], 255, 256);
            }
            em_put(s->mid[d >> 10], e, (d >> 2) & 255, r / 4 + 1 < 256 ? r / 4 + 1 : 256);
            s->seen += (uint32_t)len;
            *pos += (uint32_t)len;
        } else {
            em_put(&s->len[s->prev], e, 0, 65);
            s->prev = 0;
            em_put(&s->lit[*pos & 3], e, in[*pos], LMAX);
            s->seen++;
            (*pos)++;
        }
    }
    for (int h = 0; h < 256; h++)
        free(s->mid[h]);
    free(s);
}

uint8_t *oodle1_encode(const uint8_t *in, uint32_t n, uint32_t first16bit, uint32_t first8bit, bool big_endian,
                       size_t *out_len)
{
    struct renc e;
    renc_init(&e);
    uint32_t stops[3] = {first16bit, first8bit, n}, pos = 0;
    for (int k = 0; k < 3; k++)
        encode_stage(&e, in, &pos, stops[k] < n ? stops[k] : n);
    size_t stream = (e.width + 7) / 8;
    uint8_t *out = malloc(36 + stream);
    put_params(out, big_endian);
    memcpy(out + 36, e.bits, stream);
    free(e.bits);
    *out_len = 36 + stream;
    return out;
}
