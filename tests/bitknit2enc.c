/* Test-only BitKnit2 encoder (see bitknit2enc.h). Its own models and tables, written
 * from the notes; it shares no code with src/parse/codec/bitknit2.c. */
#include "bitknit2enc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define QUANTUM 65536u
#define MAX_MATCH 8223u

static void die(const char *why)
{
    fprintf(stderr, "bitknit2enc: %s\n", why);
    abort();
}

/* ---- growable arrays ---- */

struct bytes {
    uint8_t *p;
    size_t len, cap;
};

static void put(struct bytes *b, const void *d, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n)
            cap *= 2;
        b->p = realloc(b->p, cap);
        if (!b->p)
            die("out of memory");
        b->cap = cap;
    }
    memcpy(b->p + b->len, d, n);
    b->len += n;
}

static void put_word(struct bytes *b, uint32_t w)
{
    uint8_t x[2] = {(uint8_t)w, (uint8_t)(w >> 8)};
    put(b, x, 2);
}

/* ---- models (section 5), simulated forward ---- */

struct emodel {
    uint32_t n, count;
    uint32_t cdf[301];
    uint32_t acc[300];
};

static void emodel_init(struct emodel *m, uint32_t n)
{
    m->n = n;
    m->count = 0;
    for (uint32_t i = 0; i <= n; i++)
        m->cdf[i] = n == 300 ? (i <= 263 ? 32732 * i / 264 : 32468 + i) : 32768 * i / n;
    for (uint32_t i = 0; i < n; i++)
        m->acc[i] = 1;
}

/* The interval of s as it is now, then the model's update for s. */
static void emodel_take(struct emodel *m, uint32_t s, uint32_t *lo, uint32_t *freq)
{
    if (s >= m->n)
        die("symbol outside the alphabet");
    *lo = m->cdf[s];
    *freq = m->cdf[s + 1] - m->cdf[s];
    m->acc[s] += 31;
    if (++m->count < 1024)
        return;
    m->count = 0;
    m->acc[s] += 32768 - m->n - 31 * 1024 + 1;
    uint32_t sum = 0;
    for (uint32_t i = 1; i <= m->n; i++) {
        sum += m->acc[i - 1];
        m->cdf[i] = (m->cdf[i] + sum) / 2;
    }
    for (uint32_t i = 0; i < m->n; i++)
        m->acc[i] = 1;
}

/* ---- primitives of one quantum ---- */

enum { P_SYM, P_RAW, P_WORD };
struct prim {
    uint8_t kind;
    uint8_t bits;      /* P_RAW */
    uint16_t lo, freq; /* P_SYM: interval; P_RAW/P_WORD: lo is the value */
};

struct prims {
    struct prim *p;
    size_t n, cap;
};

static void add_prim(struct prims *v, struct prim x)
{
    if (v->n == v->cap) {
        v->cap = v->cap ? 2 * v->cap : 4096;
        v->p = realloc(v->p, v->cap * sizeof *v->p);
        if (!v->p)
            die("out of memory");
    }
    v->p[v->n++] = x;
}

static void sym(struct prims *v, struct emodel *m, uint32_t s)
{
    uint32_t lo, f;
    emodel_take(m, s, &lo, &f);
    add_prim(v, (struct prim){P_SYM, 0, (uint16_t)lo, (uint16_t)f});
}

static void raw(struct prims *v, uint32_t value, unsigned bits)
{
    if (bits > 15 || value >> bits)
        die("raw value does not fit its bits");
    add_prim(v, (struct prim){P_RAW, (uint8_t)bits, (uint16_t)value, 0});
}

static void word(struct prims *v, uint32_t w)
{
    add_prim(v, (struct prim){P_WORD, 0, (uint16_t)w, 0});
}

int bk2enc_init_words(uint32_t x, uint32_t y, uint16_t w[5])
{
    if (x < 65536 || y < 65536)
        die("state out of range");
    uint32_t hi = y >> 16, s = 0;
    while (hi >> (s + 1))
        s++;
    uint32_t low = hi - (1u << s);
    uint64_t t;
    int has_xw = 0;
    uint16_t xw = 0;
    if ((uint64_t)x << s < (1ull << 32)) {
        t = (uint64_t)x << s | low; /* X whole: no refill of X */
    } else {
        t = (uint64_t)(x >> 16) << s | low; /* X's top half, its low half a refill word */
        xw = (uint16_t)x;
        has_xw = 1;
    }
    if (t < 65536 || t >= (1ull << 32))
        die("no initialisation for these states");
    int n = 0;
    uint32_t v;
    if (t < (1u << 28)) {
        v = (uint32_t)t << 4 | s;
        w[n++] = (uint16_t)(v >> 16);
        w[n++] = (uint16_t)v;
    } else {
        v = (uint32_t)(t >> 16) << 4 | s;
        w[n++] = (uint16_t)(v >> 16);
        w[n++] = (uint16_t)v;
        w[n++] = (uint16_t)t;
    }
    if (has_xw)
        w[n++] = xw;
    w[n++] = (uint16_t)y;
    return n;
}

/* rANS in reverse: from the end states (65536, 65536) back to the quantum's start; the
 * words come out last-first and are reversed into the stream after the init words. */
static void code_quantum(const struct prims *v, struct bytes *out)
{
    size_t nstates = 0;
    for (size_t i = 0; i < v->n; i++)
        nstates += v->p[i].kind != P_WORD;
    uint32_t st[2] = {65536, 65536};
    struct bytes rev = {0};
    size_t k = nstates;
    for (size_t i = v->n; i-- > 0;) {
        const struct prim *p = &v->p[i];
        if (p->kind == P_WORD) {
            put(&rev, &p->lo, 2);
            continue;
        }
        k--;
        uint32_t *x = &st[k & 1];
        uint64_t xmax = p->kind == P_SYM ? (uint64_t)p->freq << 17 : 1ull << (32 - p->bits);
        if (*x >= xmax) {
            uint16_t w = (uint16_t)*x;
            put(&rev, &w, 2);
            *x >>= 16;
        }
        if (p->kind == P_SYM)
            *x = (*x / p->freq << 15) + *x % p->freq + p->lo;
        else
            *x = *x << p->bits | p->lo;
    }
    uint16_t init[5];
    int n = bk2enc_init_words(st[0], st[1], init);
    for (int i = 0; i < n; i++)
        put_word(out, init[i]);
    uint16_t *words = (uint16_t *)rev.p;
    for (size_t i = rev.len / 2; i-- > 0;)
        put_word(out, words[i]);
    free(rev.p);
}

/* ---- the LZ layer (section 6), forward ---- */

struct enc {
    const uint8_t *data;
    size_t n;
    struct emodel cmd[4], reuse[4], bucket;
    uint32_t dist[8], delta;
    struct bk2enc_stats *st;
    bool unchecked;
};

static unsigned floor_log2(uint32_t v)
{
    unsigned k = 0;
    while (v >> (k + 1))
        k++;
    return k;
}

static void enc_literal(struct enc *e, struct prims *v, size_t p)
{
    uint32_t c = (uint32_t)(e->data[p] - e->data[p - e->delta]) & 255;
    sym(v, &e->cmd[p & 3], c);
    e->st->literals++;
}

static void enc_match(struct enc *e, struct prims *v, size_t p, uint32_t m, uint32_t g)
{
    if (m < 2 || m > MAX_MATCH || g == 0 || g >= (1u << 26))
        die("a match the format cannot express");
    if (!e->unchecked && (g > p || p + m > e->n))
        die("invalid match in the parse");
    for (uint32_t i = 0; i < m && !e->unchecked; i++)
        if (e->data[p + i] != e->data[p + i - g])
            die("the parse does not describe the data");
    if (m <= 33) {
        sym(v, &e->cmd[p & 3], m + 254);
        e->st->short_matches++;
    } else {
        unsigned k = floor_log2(m - 32);
        sym(v, &e->cmd[p & 3], 287 + k);
        raw(v, m - 32 - (1u << k), k);
        e->st->long_matches++;
    }
    int r = -1;
    for (int i = 0; i < 8 && r < 0; i++)
        if (e->dist[i] == g)
            r = i;
    if (r >= 0) {
        sym(v, &e->reuse[p & 3], (uint32_t)r);
        memmove(e->dist + 1, e->dist, (size_t)r * sizeof e->dist[0]);
        e->dist[0] = g;
        e->st->reuses[r]++;
    } else {
        uint32_t q = (g - 1) >> 5;
        sym(v, &e->reuse[p & 3], 8 + ((g - 1) & 31));
        unsigned k = floor_log2(q + 1);
        uint32_t x = q + 1 - (1u << k);
        sym(v, &e->bucket, k);
        if (k < 16) {
            raw(v, x, k);
        } else {
            raw(v, x >> 16, k - 16);
            word(v, x & 0xFFFF);
        }
        e->dist[7] = e->dist[6];
        e->dist[6] = g;
        e->st->buckets[k]++;
    }
    e->delta = g;
}

uint8_t *bk2enc_encode_parse(const uint8_t *data, size_t n, const struct bk2enc_cmd *cmds, size_t ncmds,
                             const struct bk2enc_opts *o, size_t *len, struct bk2enc_stats *stp)
{
    struct bk2enc_stats st0;
    struct enc *e = calloc(1, sizeof *e);
    if (!e)
        die("out of memory");
    e->data = data;
    e->n = n;
    e->st = stp ? stp : &st0;
    e->unchecked = o->unchecked;
    memset(e->st, 0, sizeof *e->st);
    for (int i = 0; i < 4; i++) {
        emodel_init(&e->cmd[i], 300);
        emodel_init(&e->reuse[i], 40);
    }
    emodel_init(&e->bucket, 21);
    for (int i = 0; i < 8; i++)
        e->dist[i] = 1;
    e->delta = 1;

    struct bytes out = {0};
    if (n > 0)
        put_word(&out, 0x75B1);
    struct prims v = {0};
    size_t p = 0, ci = 0, within = 0; /* within: bytes of cmds[ci] already written */
    for (uint64_t q = 0; p < n; q++) {
        size_t end = (p / QUANTUM + 1) * QUANTUM;
        if (end > n)
            end = n;
        e->st->quanta++;
        if (q < 64 && (o->stored_mask >> q & 1)) {
            put_word(&out, 0);
            put(&out, data + p, end - p);
            e->st->stored_quanta++;
            while (p < end) { /* the parse resumes at end, maybe inside a match */
                if (ci >= ncmds)
                    die("parse shorter than the data");
                size_t take = cmds[ci].len - within;
                if (take > end - p)
                    take = end - p;
                within += take;
                p += take;
                if (within == cmds[ci].len)
                    ci++, within = 0;
            }
            continue;
        }
        v.n = 0;
        if (p == 0) {
            raw(&v, data[0], 8);
            if (ncmds == 0 || cmds[0].len != 1)
                die("the parse must start with a literal");
            p = 1;
            ci = 1;
        }
        while (p < end) {
            if (ci >= ncmds)
                die("parse shorter than the data");
            uint32_t m = cmds[ci].len - (uint32_t)within, g = cmds[ci].dist;
            ci++, within = 0;
            if (m == 1) {
                enc_literal(e, &v, p);
            } else {
                enc_match(e, &v, p, m, g);
                if (p + m > end)
                    e->st->spills++;
            }
            p += m;
        }
        code_quantum(&v, &out);
    }
    if (ci != ncmds && n > 0)
        die("parse longer than the data");
    free(v.p);
    free(e);
    *len = out.len;
    if (!out.p)
        out.p = malloc(1);
    return out.p;
}

/* ---- greedy parse ---- */

#define HASH_BITS 18

static uint32_t hash4(const uint8_t *p)
{
    uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    return (v * 2654435761u) >> (32 - HASH_BITS);
}

static uint32_t match_len(const uint8_t *d, size_t p, size_t g, size_t max)
{
    uint32_t m = 0;
    while (m < max && d[p + m] == d[p + m - g])
        m++;
    return m;
}

size_t bk2enc_parse(const uint8_t *data, size_t n, const struct bk2enc_opts *o, struct bk2enc_cmd **out)
{
    size_t cap = 1024, nc = 0;
    struct bk2enc_cmd *c = malloc(cap * sizeof *c);
    int64_t *head = malloc(sizeof *head << HASH_BITS);
    if (!c || !head)
        die("out of memory");
    for (size_t i = 0; i < (1u << HASH_BITS); i++)
        head[i] = -1;
    uint32_t dist[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    for (size_t p = 0; p < n;) {
        size_t max = n - p < MAX_MATCH ? n - p : MAX_MATCH;
        uint32_t best = 0, bestg = 0;
        if (p > 0 && !o->literals_only) {
            for (int r = 0; r < 8; r++) {
                uint32_t m = dist[r] <= p ? match_len(data, p, dist[r], max) : 0;
                if (m > best)
                    best = m, bestg = dist[r];
            }
            int64_t h = p + 4 <= n ? head[hash4(data + p)] : -1;
            uint32_t g = h >= 0 ? (uint32_t)(p - (size_t)h) : 0;
            uint32_t m = g && g < (1u << 26) ? match_len(data, p, g, max) : 0;
            if (m >= 4 && m > best + 2) /* a new distance costs more than a reuse */
                best = m, bestg = g;
        }
        if (nc == cap) {
            cap *= 2;
            c = realloc(c, cap * sizeof *c);
            if (!c)
                die("out of memory");
        }
        uint32_t len = best >= 2 ? best : 1;
        c[nc++] = (struct bk2enc_cmd){len, len > 1 ? bestg : 0, data[p]};
        if (len > 1) {
            int r = -1;
            for (int i = 0; i < 8 && r < 0; i++)
                if (dist[i] == bestg)
                    r = i;
            if (r >= 0) {
                memmove(dist + 1, dist, (size_t)r * sizeof dist[0]);
                dist[0] = bestg;
            } else {
                dist[7] = dist[6];
                dist[6] = bestg;
            }
        }
        for (size_t i = p; i < p + len; i++)
            if (i + 4 <= n)
                head[hash4(data + i)] = (int64_t)i;
        p += len;
    }
    free(head);
    *out = c;
    return nc;
}

uint8_t *bk2enc_encode(const uint8_t *data, size_t n, const struct bk2enc_opts *o, size_t *len,
                       struct bk2enc_stats *st)
{
    struct bk2enc_cmd *c;
    size_t nc = bk2enc_parse(data, n, o, &c);
    uint8_t *r = bk2enc_encode_parse(data, n, c, nc, o, len, st);
    free(c);
    return r;
}
