#include "oodle0enc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define M31 0x7FFFFFFFu
#define HALF 0x40000000u
#define QUARTER 0x20000000u

uint32_t o0e_len(uint32_t s)
{
    switch (s) {
    case 61: return 128;
    case 62: return 192;
    case 63: return 256;
    case 64: return 512;
    default: return s + 1;
    }
}

/* ---- bits out, least significant first; the arithmetic encoder (§3, inverted) ---- */

struct aenc {
    uint8_t *b;
    size_t cap;
    uint64_t nbits, pending;
    uint32_t low, high;
};

static void put_bit(struct aenc *e, unsigned bit)
{
    if (e->nbits / 8 + 1 >= e->cap) {
        e->b = realloc(e->b, e->cap * 2);
        memset(e->b + e->cap, 0, e->cap);
        e->cap *= 2;
    }
    if (bit)
        e->b[e->nbits / 8] |= (uint8_t)(1u << (e->nbits % 8));
    e->nbits++;
}

/* A settled bit, then the straddle steps' bits waiting for it (each its opposite). */
static void settle(struct aenc *e, unsigned bit)
{
    put_bit(e, bit);
    for (; e->pending; e->pending--)
        put_bit(e, !bit);
}

static void enc_interval(struct aenc *e, uint32_t start, uint32_t count, uint32_t total)
{
    uint64_t w = (uint64_t)e->high - e->low + 1;
    e->high = e->low + (uint32_t)(w * (start + count) / total) - 1;
    e->low = e->low + (uint32_t)(w * start / total);
    for (;;) {
        if (((e->low ^ e->high) & HALF) == 0) {
            settle(e, (e->low >> 30) & 1);
            e->low = (e->low << 1) & M31;
            e->high = ((e->high << 1) | 1) & M31;
        } else if (e->low >= QUARTER && e->high < 3 * QUARTER) {
            e->pending++;
            e->low = (e->low - QUARTER) << 1;
            e->high = ((e->high - QUARTER) << 1) | 1;
        } else {
            break;
        }
    }
}

/* Two more bits (and the pending ones) put the decoder's value inside the last interval
 * whatever follows: 01… when LOW is in the first quarter, else 10… (HIGH then reaches the
 * last quarter). */
static void enc_finish(struct aenc *e)
{
    e->pending++;
    settle(e, e->low >= QUARTER);
}

/* ---- the model (§4), mirrored with a linear search ---- */

struct emodel {
    uint32_t n, total, u, cap, room;
    uint32_t *cnt, *val;
    struct o0e_stats *st;
};

static void em_init(struct emodel *m, uint32_t u, struct o0e_stats *st)
{
    m->u = u;
    m->cap = (u + 5) & ~3u;
    m->room = 16;
    m->cnt = calloc(m->room, sizeof *m->cnt);
    m->val = calloc(m->room, sizeof *m->val);
    m->n = 0;
    m->cnt[0] = 3;
    m->total = 3;
    m->st = st;
}

static void em_free(struct emodel *m)
{
    free(m->cnt);
    free(m->val);
}

static void em_layout(uint32_t m, uint32_t *k, uint32_t *L)
{
    if (m < 6) {
        *k = 0;
        *L = 0;
        return;
    }
    uint64_t best_tail = UINT64_MAX;
    *k = 0;
    for (uint32_t kp = 0; kp <= 15; kp++) {
        uint64_t g = 1ull << kp;
        uint64_t groups = (m + g - 1) / g < 16 ? (m + g - 1) / g : 16;
        uint64_t tail = m - g * (groups - 1) > g ? m - g * (groups - 1) : g;
        if (tail < best_tail) {
            best_tail = tail;
            *k = kp;
        }
        if (g > m)
            break;
    }
    *L = 15u << *k;
}

static void em_rescale(struct emodel *m)
{
    m->st->rescales++;
    uint32_t k, L;
    em_layout(m->n + 1, &k, &L);
    m->cnt[0] >>= 1;
    uint32_t i = 1, best = 0, bestpos = 0;
    while (i <= m->n) {
        if (m->cnt[i] <= 1) {
            m->st->drops++;
            if (i < m->n) {
                m->cnt[i] = m->cnt[m->n];
                m->val[i] = m->val[m->n];
                m->cnt[m->n] = 0;
                m->n--;
            } else {
                m->cnt[i] = 0;
                m->n--;
                break;
            }
        } else {
            m->cnt[i] >>= 1;
            if (m->cnt[i] > best) {
                best = m->cnt[i];
                bestpos = i;
            }
            i++;
        }
    }
    if (best > 0) {
        uint32_t p = m->n < L ? (m->n >> k) << k : L;
        if (p == 0)
            p = 1;
        if (p != bestpos) {
            uint32_t c = m->cnt[p], v = m->val[p];
            m->cnt[p] = m->cnt[bestpos];
            m->val[p] = m->val[bestpos];
            m->cnt[bestpos] = c;
            m->val[bestpos] = v;
            m->st->swaps++;
        }
    }
    if (m->n != m->u && m->cnt[0] == 0) {
        m->cnt[0] = 2;
        m->st->reenables++;
    }
    m->total = 0;
    for (uint32_t j = 0; j <= m->n; j++)
        m->total += m->cnt[j];
}

/* Codes v; a new one as a raw value below raw_T. 0, or -1 when it cannot be coded. */
static int em_put(struct emodel *m, struct aenc *e, uint32_t v, uint32_t raw_T)
{
    if (m->total >= 16384)
        em_rescale(m);
    uint32_t cum = 0, s = 0;
    for (uint32_t i = 1; i <= m->n; i++) {
        if (m->val[i] == v) {
            s = i;
            break;
        }
    }
    for (uint32_t i = 0; i < s; i++)
        cum += m->cnt[i];
    if (s == 0 && (m->cnt[0] == 0 || v >= raw_T))
        return -1;
    enc_interval(e, cum, m->cnt[s], m->total);
    m->cnt[s]++;
    m->total++;
    if (s)
        return 0;
    m->st->escapes++;
    m->n++;
    if (m->n >= m->cap)
        return -1;
    if (m->n >= m->room) {
        m->cnt = realloc(m->cnt, 2 * m->room * sizeof *m->cnt);
        m->val = realloc(m->val, 2 * m->room * sizeof *m->val);
        memset(m->cnt + m->room, 0, m->room * sizeof *m->cnt);
        m->room *= 2;
    }
    m->cnt[m->n] = 2;
    m->total += 2;
    if (m->n == m->u) {
        m->total -= m->cnt[0];
        m->cnt[0] = 0;
        m->st->switch_offs++;
    }
    enc_interval(e, v, 1, raw_T);
    m->val[m->n] = v;
    return 0;
}

/* ---- parameters from the tokens ---- */

static uint32_t distinct(const uint32_t *v, size_t n, uint32_t range)
{
    uint8_t *seen = calloc(range, 1);
    uint32_t d = 0;
    for (size_t i = 0; i < n; i++)
        if (v[i] < range && !seen[v[i]]) {
            seen[v[i]] = 1;
            d++;
        }
    free(seen);
    return d;
}

static uint32_t clampu(uint32_t x, uint32_t lo, uint32_t hi)
{
    return x < lo ? lo : x > hi ? hi : x;
}

static void derive_params(const struct o0e_token *tok, size_t n, const struct o0e_opts *o, struct o0e_params *p)
{
    p->lraw = o->lraw ? o->lraw : 256;
    p->dmax = o->dmax ? o->dmax : 262136;
    uint32_t *lits = calloc(n + 1, sizeof *lits), *his = calloc(n + 1, sizeof *his);
    size_t nl = 0, nh = 0;
    for (size_t i = 0; i < n; i++) {
        if (tok[i].sym == 0)
            lits[nl++] = tok[i].value;
        else if (tok[i].value > 0)
            his[nh++] = (tok[i].value - 1) >> 2;
    }
    p->ulit = clampu(distinct(lits, nl, 512) + o->u_extra, 1, 511);
    p->uhi = clampu(distinct(his, nh, 1u << 22) + o->u_extra, 1, (1u << 23) - 1);
    /* length contexts: the distinct symbols after each previous symbol; a group takes its largest */
    uint8_t follows[65][65] = {{0}};
    uint32_t per_ctx[65] = {0}, prev = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t s = tok[i].sym;
        if (!follows[prev][s]) {
            follows[prev][s] = 1;
            per_ctx[prev]++;
        }
        prev = s;
    }
    for (int g = 0; g < 4; g++) {
        uint32_t most = 0;
        for (int c = 16 * g; c < (g == 3 ? 65 : 16 * g + 16); c++)
            most = per_ctx[c] > most ? per_ctx[c] : most;
        p->ulen[g] = (uint8_t)clampu(most + o->u_extra, 1, 255);
    }
    free(lits);
    free(his);
}

static void put_word(uint8_t *p, uint32_t v, bool be)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (be ? 24 - 8 * i : 8 * i));
}

/* ---- one stage's tokens ---- */

static int code_stage(const struct o0e_token *tok, size_t n, const struct o0e_params *p, struct aenc *e,
                      struct o0e_stats *st, char *err, size_t errlen)
{
    struct emodel lit, lo, hi, len[65];
    uint32_t lo_raw = p->dmax < 4 ? p->dmax : 4;
    em_init(&lit, p->ulit, st);
    em_init(&lo, lo_raw, st);
    em_init(&hi, p->uhi, st);
    for (int t = 0; t < 65; t++)
        em_init(&len[t], p->ulen[t < 64 ? t / 16 : 3], st);
    uint32_t seen = 0, prev = 0;
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        uint32_t s = tok[i].sym, v = tok[i].value;
        if (s > 64 || (s > 0 && v == 0)) {
            snprintf(err, errlen, "token %zu: bad symbol %u / value %u", i, s, v);
            rc = -1;
            break;
        }
        if (em_put(&len[prev], e, s, 65)) {
            snprintf(err, errlen, "token %zu: length symbol %u cannot be coded", i, s);
            rc = -1;
            break;
        }
        prev = s;
        if (s == 0) {
            if (em_put(&lit, e, v, p->lraw)) {
                snprintf(err, errlen, "token %zu: literal %u cannot be coded", i, v);
                rc = -1;
            }
            st->literals++;
            seen++;
            continue;
        }
        uint32_t r = p->dmax < seen ? p->dmax : seen, L = o0e_len(s);
        if (em_put(&lo, e, (v - 1) & 3, lo_raw) || em_put(&hi, e, (v - 1) >> 2, (r >> 2) + 1)) {
            snprintf(err, errlen, "token %zu: distance %u cannot be coded (seen %u)", i, v, seen);
            rc = -1;
        }
        st->matches++;
        st->long_matches += s > 60;
        st->short_matches += L <= 3;
        st->overlaps += v < L;
        st->max_dist = v > st->max_dist ? v : st->max_dist;
        seen += L;
    }
    em_free(&lit);
    em_free(&lo);
    em_free(&hi);
    for (int t = 0; t < 65; t++)
        em_free(&len[t]);
    return rc;
}

uint8_t *o0e_encode_tokens(const struct o0e_token *const tok[3], const size_t ntok[3], const struct o0e_opts *o,
                           size_t *out_len, struct o0e_stats *st, char *err, size_t errlen)
{
    struct o0e_stats local;
    if (!st)
        st = &local;
    memset(st, 0, sizeof *st);
    struct aenc e = {.cap = 4096, .low = 0, .high = M31};
    e.b = calloc(e.cap, 1);
    uint8_t head[36];
    int rc = 0;
    for (int k = 0; k < 3 && !rc; k++) {
        if (ntok[k] == 0 && !o->fixed_params) { /* the block the exporter writes for an empty stage */
            put_word(head + 12 * k, 0x07FFF100, o->big_endian);
            put_word(head + 12 * k + 4, 0x00000201, o->big_endian);
            put_word(head + 12 * k + 8, 0x01010101, o->big_endian);
            continue;
        }
        struct o0e_params p;
        if (o->fixed_params)
            p = o->params[k];
        else
            derive_params(tok[k], ntok[k], o, &p);
        put_word(head + 12 * k, p.lraw | p.dmax << 9, o->big_endian);
        put_word(head + 12 * k + 4, p.ulit | p.uhi << 9, o->big_endian);
        put_word(head + 12 * k + 8,
                 (uint32_t)p.ulen[0] << 24 | (uint32_t)p.ulen[1] << 16 | (uint32_t)p.ulen[2] << 8 | p.ulen[3],
                 o->big_endian);
        if (ntok[k]) {
            st->stages_run++;
            rc = code_stage(tok[k], ntok[k], &p, &e, st, err, errlen);
        }
    }
    if (rc) {
        free(e.b);
        return NULL;
    }
    enc_finish(&e);
    st->bits = e.nbits;
    size_t words = (size_t)((e.nbits + 31) / 32);
    uint8_t *out = calloc(36 + 4 * words + 1, 1);
    memcpy(out, head, 36);
    for (size_t i = 0; i < 4 * words; i++) {
        size_t from = o->big_endian ? (i & ~(size_t)3) + 3 - (i & 3) : i;
        out[36 + i] = from < e.cap ? e.b[from] : 0;
    }
    free(e.b);
    *out_len = 36 + 4 * words;
    return out;
}

/* ---- a greedy parse ---- */

/* A distance the decoder can take as a new value at this point: lo within min(Dmax, 4),
 * hi within min(Dmax, seen) / 4, and not before the output start. */
static int dist_ok(uint32_t d, uint32_t pos, uint32_t seen, uint32_t dmax)
{
    uint32_t r = dmax < seen ? dmax : seen;
    return d >= 1 && d <= pos && ((d - 1) & 3) < (dmax < 4 ? dmax : 4) && ((d - 1) >> 2) <= (r >> 2);
}

static uint32_t code_len(uint32_t l)
{
    return l >= 512 ? 512 : l >= 256 ? 256 : l >= 192 ? 192 : l >= 128 ? 128 : l > 61 ? 61 : l;
}

static uint32_t len_sym(uint32_t l)
{
    return l == 512 ? 64 : l == 256 ? 63 : l == 192 ? 62 : l == 128 ? 61 : l - 1;
}

uint8_t *o0e_encode(const uint8_t *in, uint32_t n, uint32_t stop0, uint32_t stop1, const struct o0e_opts *o,
                    size_t *out_len, struct o0e_stats *st)
{
    uint32_t end[3];
    end[0] = stop0 < n ? stop0 : n;
    end[1] = stop1 < n ? stop1 : n;
    end[1] = end[1] < end[0] ? end[0] : end[1];
    end[2] = n;
    uint32_t dmax = o->fixed_params ? 0 : o->dmax ? o->dmax : 262136;
    enum { HBITS = 15, CHAIN = 24 };
    int32_t *head = malloc(sizeof(int32_t) << HBITS), *prevpos = malloc(((size_t)n + 1) * sizeof(int32_t));
    memset(head, 0xFF, sizeof(int32_t) << HBITS);
    struct o0e_token *tok[3];
    size_t ntok[3] = {0};
    uint32_t pos = 0;
    for (int k = 0; k < 3; k++) {
        tok[k] = malloc(((size_t)(end[k] > pos ? end[k] - pos : 0) + 1) * sizeof *tok[k]);
        uint32_t seen = 0, d_max_k = o->fixed_params ? o->params[k].dmax : dmax;
        while (pos < end[k]) {
            uint32_t best = 0, best_d = 0, room = end[k] - pos;
            if (!o->literals_only && room >= 2) {
                uint32_t cand[CHAIN + 4], nc = 0;
                for (uint32_t d = 1; d <= 4; d++)
                    cand[nc++] = d;
                if (room >= 3) {
                    uint32_t h = ((uint32_t)in[pos] * 2654435761u ^ (uint32_t)in[pos + 1] * 40503u ^ in[pos + 2]) &
                                 ((1u << HBITS) - 1);
                    for (int32_t q = head[h]; q >= 0 && nc < CHAIN + 4; q = prevpos[q])
                        cand[nc++] = pos - (uint32_t)q;
                }
                for (uint32_t c = 0; c < nc; c++) {
                    uint32_t d = cand[c];
                    if (!dist_ok(d, pos, seen, d_max_k))
                        continue;
                    uint32_t l = 0;
                    while (l < room && l < 512 && in[pos + l] == in[pos + l - d])
                        l++;
                    l = code_len(l);
                    if (l >= 2 && l > best) {
                        best = l;
                        best_d = d;
                    }
                }
            }
            uint32_t step = best ? best : 1;
            if (best)
                tok[k][ntok[k]++] = (struct o0e_token){(uint8_t)len_sym(best), best_d};
            else
                tok[k][ntok[k]++] = (struct o0e_token){0, in[pos]};
            for (uint32_t i = 0; i < step; i++, pos++) {
                if (pos + 3 <= n) {
                    uint32_t h = ((uint32_t)in[pos] * 2654435761u ^ (uint32_t)in[pos + 1] * 40503u ^ in[pos + 2]) &
                                 ((1u << HBITS) - 1);
                    prevpos[pos] = head[h];
                    head[h] = (int32_t)pos;
                }
            }
            seen += step;
        }
    }
    free(head);
    free(prevpos);
    char err[256];
    const struct o0e_token *const ct[3] = {tok[0], tok[1], tok[2]};
    uint8_t *out = o0e_encode_tokens(ct, ntok, o, out_len, st, err, sizeof err);
    if (!out)
        fprintf(stderr, "o0e_encode: %s\n", err);
    for (int k = 0; k < 3; k++)
        free(tok[k]);
    return out;
}
