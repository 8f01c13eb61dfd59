#include "parse/codec/oodle1.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/codec/oodle_frame.h"
#include "parse/base/reader.h"

#define OVERREAD_LIMIT 16   /* zero bytes past the input allowed before calling it corrupt */
#define COPY_SLACK 8         /* output bytes past the end that a match copy may scribble on */
#define MAX_SLOTS 65535     /* hard bound on a model's slots (weights are 16-bit) */

/* ---- range decoder (§3) ---- */

struct rdec {
    const uint8_t *s;
    size_t len, p;
    uint32_t low, range, step;
    const char *fail;
};

static uint8_t rd_byte(struct rdec *d, size_t i)
{
    if (i < d->len)
        return d->s[i];
    if (i >= d->len + OVERREAD_LIMIT && !d->fail)
        d->fail = "stream runs past the end of the compressed data";
    return 0;
}

static void rd_init(struct rdec *d, const uint8_t *s, size_t len)
{
    d->s = s;
    d->len = len;
    d->p = 0;
    d->low = rd_byte(d, 0) >> 1;
    d->range = 0x80;
    d->step = 1;
    d->fail = NULL;
}

/* The next 24 bits of the coded value: the payload as one MSB-first bit string, delayed by
 * one bit, starting at byte p (bytes past the end read as 0). */
static inline uint32_t rd_next24(const struct rdec *d)
{
    uint32_t y;
    if (d->p + 4 <= d->len) {
        const uint8_t *s = d->s + d->p;
        y = (uint32_t)s[0] << 24 | (uint32_t)s[1] << 16 | (uint32_t)s[2] << 8 | s[3];
    } else {
        y = 0;
        for (size_t i = 0; i < 4; i++)
            y = y << 8 | (d->p + i < d->len ? d->s[d->p + i] : 0);
    }
    return (y >> 1) & 0xFFFFFF;
}

/* Normalise: append whole bytes until range > 2^23. After any take, range >= 0x80, so at
 * most three bytes; counting them first keeps the loop's unpredictable branch out of the
 * hot path (same result as appending one byte at a time). */
static inline void rd_refill(struct rdec *d)
{
    uint32_t k = (uint32_t)(d->range <= 0x800000) + (d->range <= 0x8000) + (d->range <= 0x80);
    uint32_t bits = rd_next24(d);
    d->low = (uint32_t)((uint64_t)d->low << (8 * k)) | (uint32_t)((uint64_t)bits >> (24 - 8 * k));
    d->range = (uint32_t)((uint64_t)d->range << (8 * k));
    d->p += k;
    if (d->p >= d->len + OVERREAD_LIMIT && !d->fail)
        d->fail = "stream runs past the end of the compressed data";
    if (__builtin_expect(d->range <= 0x800000, 0)) {
        /* only a corrupt stream gets here; it is reported, and the decoder gets a range it
         * can divide by, so that no step below is ever 0 (a branch that is never taken
         * costs nothing, where a guard on the step would lengthen every symbol) */
        if (!d->fail)
            d->fail = "range decoder lost its range";
        d->range = 0x80000000u;
    }
}

/* peek(0x4000), the models' total: a shift instead of the first division. */
static inline uint32_t rd_peek_models(struct rdec *d)
{
    rd_refill(d);
    d->step = d->range >> 14; /* at least 512: range > 2^23 after a refill */
    uint32_t q = d->low / d->step;
    return q < 0x3FFF ? q : 0x3FFF;
}

static inline __attribute__((always_inline)) uint32_t rd_peek(struct rdec *d, uint32_t total)
{
    rd_refill(d);
    if (total == 0) {
        if (!d->fail)
            d->fail = "zero-sized alphabet";
        return 0;
    }
    d->step = d->range / total; /* at least 128: total is 16-bit */
    uint32_t q = d->low / d->step;
    return q < total - 1 ? q : total - 1;
}

static inline void rd_take(struct rdec *d, uint32_t total, uint32_t start, uint32_t width)
{
    uint32_t below = d->step * start;
    d->low -= below;
    /* a mask, not a branch: which case it is cannot be predicted */
    uint32_t last = 0u - (uint32_t)(start + width >= total);
    d->range = (d->step * width & ~last) | ((d->range - below) & last);
}

/* uniform(2), the escape's flag: range / 2 is a shift and the quotient is 0 or 1, so no
 * division (same result as rd_uniform(d, 2)). */
static inline uint32_t rd_flag(struct rdec *d)
{
    rd_refill(d);
    d->step = d->range >> 1;
    uint32_t v = d->low >= d->step;
    rd_take(d, 2, v, 1);
    return v;
}

static inline __attribute__((always_inline)) uint32_t rd_uniform(struct rdec *d, uint32_t total)
{
    total &= 0xFFFF; /* a 16-bit argument in the reference */
    uint32_t v = rd_peek(d, total);
    rd_take(d, total, v, 1);
    return v;
}

/* ---- adaptive model (§4) ---- */

struct model {
    uint16_t cap, tot, inc, next_rescan, halve_at, inc_cap;
    uint32_t n, ncum, room; /* slots; entries of cum; allocated slots */
    uint16_t *w, *sym, *cum;
    /* bucket[b]: the range holding value b << shift, as cum[k] | k << 16 | cum[k+1] << 32
     * (the bounds where taking them out costs the least, as they are on the critical path),
     * so that one load gives all a take needs. There are about twice as many buckets as
     * ranges (4 to 256, at most nb_room): a lookup seldom steps past its bucket's range. */
    uint64_t *bucket;
    uint32_t shift, nb_room;
    void *block; /* one allocation: bucket, w, sym, cum */
};

/* Buckets worth having for `room` slots: a power of two, at least twice room + 1, 4 to 256. */
static uint32_t bucket_room(uint32_t room)
{
    uint32_t nb = 4;
    while (nb < 2 * (room + 1) && nb < 256)
        nb <<= 1;
    return nb;
}

/* Gives m a block for `room` slots and its buckets, keeping the first n slots (and ncum
 * entries of cum) of the old block. NOMEM leaves the old block as it was. */
static enum s3_err model_alloc(struct model *m, uint32_t room)
{
    uint32_t nb_room = bucket_room(room);
    uint8_t *block = malloc(nb_room * sizeof(uint64_t) + (3 * (size_t)room + 1) * sizeof(uint16_t));
    if (!block)
        return S3_ERR_NOMEM;
    uint64_t *bucket = (uint64_t *)block;
    uint16_t *w = (uint16_t *)(bucket + nb_room), *sym = w + room, *cum = sym + room;
    if (m->block) {
        memcpy(w, m->w, m->n * sizeof *w);
        memcpy(sym, m->sym, m->n * sizeof *sym);
        memcpy(cum, m->cum, m->ncum * sizeof *cum);
        free(m->block);
    }
    m->block = block;
    m->bucket = bucket;
    m->w = w;
    m->sym = sym;
    m->cum = cum;
    m->room = room;
    m->nb_room = nb_room;
    return S3_OK;
}

static void build_buckets(struct model *m)
{
    uint32_t nb = 4, shift = 12;
    while (nb < 2 * m->ncum && nb < m->nb_room) {
        nb <<= 1;
        shift--;
    }
    m->shift = shift;
    /* Bucket b starts at value b << shift and belongs to the last range starting at or
     * below that: mark the bucket where each range starts (cum[k] / 2^shift rounded up; a later
     * range starting in the same bucket wins), then carry the latest mark forward. No
     * branch depends on the ranges' widths. */
    uint16_t first[257];
    memset(first, 0, (nb + 1) * sizeof first[0]);
    uint32_t last = m->ncum - 2, round = (1u << shift) - 1;
    for (uint32_t k = 1; k <= last; k++)
        first[(m->cum[k] + round) >> shift] = (uint16_t)k;
    uint32_t k = 0;
    for (uint32_t b = 0; b < nb; b++) {
        k = first[b] > k ? first[b] : k;
        m->bucket[b] = m->cum[k] | (uint64_t)k << 16 | (uint64_t)m->cum[k + 1] << 32;
    }
}

/* Makes m a fresh model. m is zeroed or an earlier model, whose block is reused when it
 * is big enough: the three stages of a section share their models' memory. */
static enum s3_err model_init(struct model *m, uint32_t M, uint16_t cap_arg)
{
    /* room for every slot the cap allows (the count seldom goes past it), up to 64 */
    uint32_t room = cap_arg < 8 ? 8 : cap_arg < 64 ? (uint32_t)cap_arg + 2 : 64;
    m->n = 0; /* nothing to keep */
    m->ncum = 0;
    if ((!m->block || m->room < room) && model_alloc(m, room) != S3_OK)
        return S3_ERR_NOMEM;
    m->cap = (uint16_t)(cap_arg + 1);
    m->w[0] = 4;
    m->sym[0] = 0;
    m->cum[0] = 0;
    m->cum[1] = 0x4000;
    m->n = 1;
    m->ncum = 2;
    build_buckets(m);
    m->tot = 4;
    m->inc = 4;
    m->next_rescan = 8;
    uint32_t h = 32u * M; /* u32 arithmetic, as the reference */
    h = h < 15160 ? h : 15160;
    m->halve_at = (uint16_t)(h > 256 ? h : 256);
    if (M > 64) {
        uint32_t a = 2u * M, b = (uint32_t)(m->halve_at / 2) - 32u;
        m->inc_cap = (uint16_t)(a < b ? a : b);
    } else {
        m->inc_cap = 128;
    }
    return S3_OK;
}

static void model_free(struct model *m)
{
    free(m->block);
    memset(m, 0, sizeof *m);
}

/* LIMIT when the model already holds MAX_SLOTS, NOMEM when the bigger block is not had. */
static enum s3_err model_grow(struct model *m)
{
    if (m->n >= MAX_SLOTS)
        return S3_ERR_LIMIT;
    if (model_alloc(m, m->room * 2) != S3_OK)
        return S3_ERR_NOMEM;
    build_buckets(m); /* the new block's table, from the ranges as they are */
    return S3_OK;
}

/* FORMAT when no weight is left to share out (the stream drove every weight to 0). */
static enum s3_err model_rescan(struct model *m)
{
    if (m->tot == 0)
        return S3_ERR_FORMAT;
    uint32_t unit = 0x20000u / m->tot, acc = 0;
    for (uint32_t i = 0; i < m->n; i++) {
        m->cum[i] = (uint16_t)acc;
        acc += (m->w[i] * unit) / 8;
    }
    m->cum[m->n] = 0x4000;
    m->ncum = m->n + 1;
    build_buckets(m);
    if (m->inc > m->inc_cap / 2) {
        m->next_rescan = (uint16_t)(m->tot + m->inc_cap);
    } else {
        m->inc = (uint16_t)(m->inc * 2);
        m->next_rescan = (uint16_t)(m->tot + m->inc);
    }
    return 0;
}

static void swap_slots(struct model *m, uint32_t a, uint32_t b)
{
    uint16_t w = m->w[a], s = m->sym[a];
    m->w[a] = m->w[b];
    m->sym[a] = m->sym[b];
    m->w[b] = w;
    m->sym[b] = s;
}

static void model_halve(struct model *m)
{
    uint16_t tot = 0;
    for (uint32_t i = 0; i < m->n; i++) {
        m->w[i] >>= 1;
        tot = (uint16_t)(tot + m->w[i]);
    }
    m->tot = tot;
    for (uint32_t i = 1; i < m->n;) { /* drop slots whose weight became 0 (never slot 0) */
        if (m->w[i] == 0) {
            m->w[i] = m->w[m->n - 1];
            m->sym[i] = m->sym[m->n - 1];
            m->n--;
        } else {
            i++;
        }
    }
    if (m->n > 1) {
        uint32_t b = 1;
        for (uint32_t i = 2; i < m->n; i++)
            if (m->w[i] > m->w[b])
                b = i;
        swap_slots(m, b, m->n - 1);
    }
    if (m->n < m->cap && m->w[0] == 0) {
        m->w[0] = 1;
        m->tot = (uint16_t)(m->tot + 1);
    }
}

/* The largest k with cum[k] <= v (zero-width entries are passed over), and its range
 * [lo, hi): v's bucket, else step forward (cum[ncum-1] = 0x4000 > v stops the scan). */
static inline uint32_t find_range(const struct model *m, uint32_t v, uint32_t *lo, uint32_t *hi)
{
    uint64_t e = m->bucket[v >> m->shift];
    uint32_t k = (uint32_t)(e >> 16) & 0xFFFF;
    *lo = (uint16_t)e;
    *hi = (uint32_t)(e >> 32);
    if (__builtin_expect(*hi <= v, 0)) {
        do
            k++;
        while (m->cum[k + 1] <= v);
        *lo = m->cum[k];
        *hi = m->cum[k + 1];
    }
    return k;
}

/* Inlined into the block decoder: it runs about once per output byte. */
static inline __attribute__((always_inline)) uint32_t model_get(struct model *m, struct rdec *d,
                                                                uint32_t raw_total)
{
    if (m->tot >= m->next_rescan) {
        if (m->next_rescan >= m->halve_at)
            model_halve(m);
        if (model_rescan(m) != S3_OK) {
            d->fail = "model with no weight left";
            return 0;
        }
    }
    uint32_t v = rd_peek_models(d);
    uint32_t lo, hi;
    uint32_t k = find_range(m, v, &lo, &hi);
    rd_take(d, 0x4000, lo, hi - lo);
    m->w[k] = (uint16_t)(m->w[k] + 1);
    m->tot = (uint16_t)(m->tot + 1);
    if (k > 0)
        return m->sym[k];
    uint32_t ranged = m->ncum - 1; /* slots that own a range */
    if (m->n > ranged && rd_flag(d) == 1) {
        uint32_t j = ranged + rd_uniform(d, m->n - ranged);
        if (j >= m->n) {
            d->fail = "escape to a slot that does not exist";
            return 0;
        }
        m->w[j] = (uint16_t)(m->w[j] + 2);
        m->tot = (uint16_t)(m->tot + 2);
        return m->sym[j];
    }
    if (m->n == m->room) {
        enum s3_err e = model_grow(m);
        if (e != S3_OK) { /* a failed allocation must read as NOMEM, not as bad bytes */
            d->fail = e == S3_ERR_NOMEM ? oodle_out_of_memory : "model slots exhausted";
            return 0;
        }
    }
    uint32_t s = m->n++;
    m->w[s] = 2;
    m->tot = (uint16_t)(m->tot + 2);
    if (m->n == m->cap) { /* escape switched off */
        m->tot = (uint16_t)(m->tot - m->w[0]);
        m->w[0] = 0;
    }
    uint32_t value = rd_uniform(d, raw_total);
    m->sym[s] = (uint16_t)value;
    return value;
}

/* ---- LZ layer (§5) ---- */

/* One stage's state. The models outlive the stage: the next stage re-initialises them in
 * place, so a section allocates its models' memory once, not three times. */
struct stage {
    struct oodle1_params p;
    uint32_t lo_max, mid_max, hi_max;
    struct model lo, hi, lit[4], len[65];
    struct model **mid;  /* mid_room models, made when first used */
    uint8_t *mid_fresh;  /* mid[h] has been initialised for this stage */
    uint32_t mid_room;
    uint32_t seen, prev;
};

static void stage_free(struct stage *s)
{
    model_free(&s->lo);
    model_free(&s->hi);
    for (int i = 0; i < 4; i++)
        model_free(&s->lit[i]);
    for (int i = 0; i < 65; i++)
        model_free(&s->len[i]);
    for (uint32_t h = 0; h < s->mid_room; h++)
        if (s->mid[h]) {
            model_free(s->mid[h]);
            free(s->mid[h]);
        }
    free(s->mid);
    free(s->mid_fresh);
}

/* S3_OK, or NOMEM (the stage keeps what it had; stage_free frees it). */
static enum s3_err stage_init(struct stage *s, const struct oodle1_params *p)
{
    s->p = *p;
    s->seen = 0;
    s->prev = 0;
    s->lo_max = p->dmax + 1 < 4 ? p->dmax + 1 : 4;
    s->mid_max = p->dmax / 4 + 1 < 256 ? p->dmax / 4 + 1 : 256;
    s->hi_max = p->dmax / 1024 + 1;
    if (s->hi_max > s->mid_room) {
        struct model **mid = realloc(s->mid, s->hi_max * sizeof *mid);
        uint8_t *fresh = mid ? realloc(s->mid_fresh, s->hi_max) : NULL;
        if (mid)
            s->mid = mid;
        if (fresh) {
            s->mid_fresh = fresh;
            memset(s->mid + s->mid_room, 0, (s->hi_max - s->mid_room) * sizeof *mid);
            s->mid_room = s->hi_max;
        } else {
            return S3_ERR_NOMEM;
        }
    }
    memset(s->mid_fresh, 0, s->hi_max);
    if (model_init(&s->lo, s->lo_max - 1, (uint16_t)s->lo_max) != S3_OK ||
        model_init(&s->hi, s->hi_max - 1, (uint16_t)(p->hc + 1)) != S3_OK)
        return S3_ERR_NOMEM;
    for (int c = 0; c < 4; c++)
        if (model_init(&s->lit[c], p->lmax - 1, (uint16_t)p->lc) != S3_OK)
            return S3_ERR_NOMEM;
    for (uint32_t t = 0; t < OODLE_LEN_SYMBOLS; t++)
        if (model_init(&s->len[t], 64, p->sizes[oodle_len_byte(t)]) != S3_OK)
            return S3_ERR_NOMEM;
    return S3_OK;
}

static struct model *mid_model(struct stage *s, uint32_t h)
{
    if (__builtin_expect(s->mid_fresh[h], 1))
        return s->mid[h];
    if (!s->mid[h] && !(s->mid[h] = calloc(1, sizeof *s->mid[h])))
        return NULL;
    if (model_init(s->mid[h], s->mid_max - 1, (uint16_t)s->mid_max) != S3_OK)
        return NULL;
    s->mid_fresh[h] = 1;
    return s->mid[h];
}

static inline __attribute__((always_inline)) const char *decode_block(struct stage *s, struct rdec *d, uint8_t *out,
                                                                      uint32_t *pos, uint32_t size)
{
    uint32_t t = model_get(&s->len[s->prev], d, OODLE_LEN_SYMBOLS);
    if (t > 64)
        return "length symbol out of range";
    s->prev = t;
    if (t == 0) {
        uint32_t b = model_get(&s->lit[*pos & 3], d, s->p.lmax);
        if (*pos >= size)
            return "literal past the end of the output";
        out[(*pos)++] = (uint8_t)b;
        s->seen++;
        return NULL;
    }
    uint32_t n = oodle_match_len(t);
    uint32_t r = s->p.dmax < s->seen ? s->p.dmax : s->seen;
    uint32_t lo = model_get(&s->lo, d, s->lo_max);
    uint32_t hi = model_get(&s->hi, d, r / 1024 + 1);
    if (hi >= s->hi_max)
        return "distance out of range";
    struct model *mm = mid_model(s, hi);
    if (!mm)
        return oodle_out_of_memory;
    uint32_t mid = model_get(mm, d, r / 4 + 1 < 256 ? r / 4 + 1 : 256);
    uint32_t dist = hi * 1024 + mid * 4 + lo + 1;
    s->seen += n;
    if (d->fail)
        return d->fail;
    if (dist > *pos)
        return "match distance reaches before the start of the output";
    if (n > size - *pos)
        return "match runs past the end of the output";
    uint8_t *o = out + *pos;
    if (dist >= 8) /* 8 at a time, each from bytes already written; may spill into the slack */
        for (uint32_t i = 0; i < n; i += 8)
            memcpy(o + i, o + i - dist, 8);
    else /* a pattern shorter than 8 repeats */
        for (uint32_t i = 0; i < n; i++)
            o[i] = o[(ptrdiff_t)i - (ptrdiff_t)dist];
    *pos += n;
    return NULL;
}

/* Decodes blocks until pos reaches end. The range decoder works on a local copy, so that
 * its state stays in registers (stores to the output bytes may alias anything in memory). */
static const char *decode_stage(struct stage *s, struct rdec *shared, uint8_t *out, uint32_t *pos, uint32_t end,
                                uint32_t size)
{
    struct rdec d = *shared;
    uint32_t at = *pos;
    const char *fail = NULL;
    while (at < end && !fail) {
        fail = decode_block(s, &d, out, &at, size);
        if (!fail && d.fail)
            fail = d.fail;
    }
    *shared = d;
    *pos = at;
    return fail;
}

void oodle1_read_params(const uint8_t *p, bool be, struct oodle1_params out[3])
{
    struct oodle_block b[3];
    oodle_read_blocks(p, be, b);
    for (int k = 0; k < 3; k++) {
        out[k].lmax = oodle_block_lraw(&b[k]);
        out[k].dmax = oodle_block_dmax(&b[k]);
        out[k].lc = b[k].b & 0x1FF;
        out[k].hc = b[k].b >> 19;
        memcpy(out[k].sizes, b[k].c, 4);
    }
}

enum s3_err oodle1_expand(const uint8_t *in, size_t in_len, bool be, uint32_t first16bit, uint32_t first8bit,
                          uint32_t expanded_size, uint64_t max_expanded, uint8_t **out, char *err, size_t errlen)
{
    *out = NULL;
    enum s3_err e = oodle_check_frame("Oodle1", in_len, expanded_size, max_expanded, err, errlen);
    if (e != S3_OK)
        return e;
    uint8_t *buf = malloc((size_t)expanded_size + COPY_SLACK);
    if (!buf)
        return s3_fail(S3_ERR_NOMEM, err, errlen, "Oodle1: cannot allocate %u bytes", expanded_size);
    if (expanded_size == 0) {
        *out = buf;
        return S3_OK;
    }
    struct oodle1_params p[3];
    oodle1_read_params(in, be, p);
    for (int k = 0; k < 3; k++)
        if (p[k].lmax == 0) {
            e = s3_fail(S3_ERR_FORMAT, err, errlen, "Oodle1: stage %d parameter block has a literal alphabet of 0",
                        k);
            goto fail;
        }
    struct rdec d;
    rd_init(&d, in + OODLE_PARAMS_SIZE, in_len - OODLE_PARAMS_SIZE);
    uint32_t end[3], pos = 0;
    oodle_stage_ends(first16bit, first8bit, expanded_size, end);
    const char *fail = NULL;
    struct stage *s = calloc(1, sizeof *s);
    if (!s)
        fail = oodle_out_of_memory;
    for (int k = 0; k < 3 && !fail; k++) {
        if (stage_init(s, &p[k]) != S3_OK) {
            fail = oodle_out_of_memory;
            break;
        }
        fail = decode_stage(s, &d, buf, &pos, end[k], expanded_size);
    }
    if (s)
        stage_free(s);
    free(s);
    if (fail) {
        e = s3_fail(oodle_fail_reason(fail), err, errlen, "Oodle1: at output byte %u of %u: %s", pos, expanded_size,
                    fail);
        goto fail;
    }
    *out = buf;
    return S3_OK;
fail:
    free(buf);
    return e;
}
