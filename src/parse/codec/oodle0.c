#include "parse/codec/oodle0.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/base/err.h"
#include "parse/base/reader.h"

#define MASK31 0x7FFFFFFFu
#define PAST_END_BITS 32 /* valid streams read at most 31 bits past the end (CODE's look-ahead) */
#define STREAM_PAD 24    /* zero bytes after the stream copy: every read up to the limit stays inside */
#define RESCALE_AT 16384 /* a model's total that triggers halving */
#define MAX_VALUE 65535  /* slot values are 16-bit (§7.7): a wider new high part is refused */

/* ---- bits and the arithmetic decoder (§2 bit order, §3) ---- */

struct coder {
    const uint8_t *s; /* the stream with each byte's bits reversed: stream bit i is bit 7 − i%8 of s[i/8] */
    uint64_t bit;     /* bits consumed */
    uint64_t limit;   /* consuming more is reading past the end (§7.2) */
    uint32_t low, high, code;
    const char *fail;
};

/* The 32 stream bits from the current one on, the first one most significant. */
static inline uint32_t peek32(const struct coder *c)
{
    const uint8_t *p = c->s + (c->bit >> 3);
    uint64_t w = (uint64_t)p[0] << 56 | (uint64_t)p[1] << 48 | (uint64_t)p[2] << 40 | (uint64_t)p[3] << 32 |
                 (uint64_t)p[4] << 24 | (uint64_t)p[5] << 16 | (uint64_t)p[6] << 8 | p[7];
    return (uint32_t)((w << (c->bit & 7)) >> 32);
}

/* One read of k (0 … 31) bits that may cross the limit: past it, zeros, and the coder stays
 * at the limit, so that reads keep inside the padding until the caller stops. */
static uint32_t take_checked(struct coder *c, unsigned k)
{
    uint32_t top = peek32(c);
    c->bit += k;
    if (c->bit > c->limit) {
        c->bit = c->limit;
        if (!c->fail)
            c->fail = "stream read more than 32 bits past the end of the compressed data";
        return 0;
    }
    return (uint32_t)(((uint64_t)top << k) >> 32);
}

/* The next k + m (≤ 31) stream bits, the first one most significant: a renormalisation's k
 * shifts and m straddles take theirs in one read. Near the limit, two reads, as the decoder
 * always made them: the coder goes on to the end of the LZ step after a read past the limit,
 * and an error of a model there replaces the read's, so a broken stream keeps its error only
 * if the bits after the limit stay what they were. */
static inline uint32_t take(struct coder *c, unsigned k, unsigned m)
{
    uint64_t end = c->bit + k + m;
    if (__builtin_expect(end > c->limit, 0)) {
        uint32_t shifts = take_checked(c, k);
        return shifts << m | take_checked(c, m);
    }
    uint32_t top = peek32(c);
    c->bit = end;
    return (uint32_t)(((uint64_t)top << (k + m)) >> 32);
}

static void coder_init(struct coder *c, const uint8_t *s, uint64_t nbits)
{
    c->s = s;
    c->bit = 0;
    c->limit = nbits + PAST_END_BITS;
    c->fail = NULL;
    c->low = 0;
    c->high = MASK31;
    c->code = take(c, 31, 0);
}

/* The shift-one-bit renormalisation of §3, all its steps at once. First the k shifts of
 * settled bits (bits 30, 29, … equal in LOW and HIGH), then the m straddle steps (a straddle
 * is never followed by a shift): LOW's next bits 1 where HIGH's are 0. A straddle maps x to
 * 2x − 2^30 (mod 2^31), that is 2x with bit 30 flipped; the flip of one step leaves through
 * bit 31 in the next, so k + m steps are a shift by k + m and, when m > 0, one flip of bit 30. */
static inline void renorm(struct coder *c)
{
    unsigned k = (unsigned)__builtin_clz((c->low ^ c->high) << 1); /* ≤ 30: HIGH > LOW */
    /* LOW & ~HIGH has a 0 where they first differ (bit 30 − k), then the straddles' 1s */
    uint32_t straddles = (uint32_t)((uint64_t)(c->low & ~c->high) << (k + 2));
    unsigned m = (unsigned)__builtin_clz(~straddles); /* ≤ 30 − k: the k + 2 bits shifted in are 0 */
    unsigned s = k + m;
    if (s) {
        uint32_t flip = m ? 0x40000000u : 0;
        c->low = ((c->low << s) & MASK31) ^ flip;
        c->high = (((c->high << s) | ((1u << s) - 1)) & MASK31) ^ flip;
        c->code = (((c->code << s) | take(c, k, m)) & MASK31) ^ flip;
    }
}

/* 0 … T−1 (T ≥ 1): where CODE lies, scaled to T. The full 64-bit products are required. */
static inline uint32_t target(const struct coder *c, uint32_t T)
{
    uint64_t w = (uint64_t)c->high - c->low + 1;
    return (uint32_t)((((uint64_t)(c->code - c->low) + 1) * T - 1) / w);
}

static inline void narrow(struct coder *c, uint32_t start, uint32_t count, uint32_t T)
{
    uint64_t w = (uint64_t)c->high - c->low + 1;
    c->high = c->low + (uint32_t)(w * (start + count) / T) - 1;
    c->low = c->low + (uint32_t)(w * start / T);
    renorm(c);
}

static inline uint32_t uniform(struct coder *c, uint32_t T)
{
    uint32_t v = target(c, T);
    if (v > T - 1) /* cannot happen (LOW ≤ CODE ≤ HIGH); kept as the notes do */
        v = T - 1;
    narrow(c, v, 1, T);
    return v;
}

/* ---- adaptive frequency model with escape (§4) ----
 * The counts live in a tree of fan-out 16 over the slots, so that finding the slot of a
 * target and adding to a count take one step per level (16^levels ≥ the slots) whatever the
 * number of live symbols: a hostile high-distance model may have a slot per match, so no
 * step may scan the slots.
 *
 * A node is 8 words of four 16-bit lanes (every value < 2^15: total ≤ 16386). Words 0–3 hold
 * the running sums of its 16 children's counts (lane k: children 0 … k), words 4–7 the
 * children's counts. A step compares the 16 sums with what is left of the target all at
 * once: the sums below it give the child, and the counts under the same mask add up to what
 * to take off the target. So the next step waits for no lane to be read back: the decoder's
 * speed is the length of that chain (target, search, narrow, renorm), symbol after symbol. */

#define FAN 16       /* children per node */
#define FAN_BITS 4
#define NODE_WORDS 8 /* 4 of sums, 4 of counts */
#define MAX_LEVELS 4 /* 16^4 slots: n ≤ total ≤ 16386, every live count being ≥ 1 */
#define LANES 0x0001000100010001ull /* 1 in each lane of a word */
#define LANE_TOPS 0x8000800080008000ull

struct model {
    uint32_t n;      /* live slots 1 … n */
    uint32_t total;  /* sum of all counts */
    uint32_t u;      /* the limit that switches the escape off */
    uint32_t cap;    /* (U + 5) & ~3: n must stay below it */
    uint32_t room;   /* allocated slots, a power of two ≥ FAN */
    uint32_t levels; /* tree levels, the root's first: FAN^levels ≥ room */
    uint16_t *cnt, *val;
    uint64_t *tree;
    uint32_t level_at[MAX_LEVELS]; /* the first word of each level */
    struct oodle0_counts *counts;
};

/* The sum of the four lanes of x (< 2^16). */
static inline uint32_t lane_sum(uint64_t x)
{
    return (uint32_t)((x * LANES) >> 48);
}

/* The sum of the four lanes of x (< 2^16) in each lane. */
static inline uint64_t lane_sum_all(uint64_t x)
{
    x += x << 16 | x >> 48;
    return x + (x << 32 | x >> 32);
}

/* 1 in each lane whose sum is ≤ rem, from r = rem in each lane with its top bit set: a lane
 * of r − sums keeps its top bit exactly when sum ≤ rem, and borrows nothing from the next
 * lane (all values < 2^15). */
static inline uint64_t lanes_below(uint64_t r, uint64_t sums)
{
    return ((r - sums) & LANE_TOPS) >> 15;
}

/* The counts of the lanes where `ones` has its 1s. */
static inline uint64_t counts_of(uint64_t ones, uint64_t counts)
{
    return ((ones << 16) - ones) & counts;
}

/* One step down: the child k of `node` with sum(k − 1) ≤ rem < sum(k), where sum(−1) = 0
 * (the sums grow with k, and rem is below the node's total), and rem − sum(k − 1) for the
 * next step. *r holds rem in each lane with its top bit set, before and after. k is the
 * number of sums ≤ rem, and the counts of those children add up to sum(k − 1). */
static inline uint32_t node_step(const uint64_t *node, uint64_t *r)
{
    uint64_t b0 = lanes_below(*r, node[0]), b1 = lanes_below(*r, node[1]);
    uint64_t b2 = lanes_below(*r, node[2]), b3 = lanes_below(*r, node[3]);
    uint64_t taken = (counts_of(b0, node[4]) + counts_of(b1, node[5])) +
                     (counts_of(b2, node[6]) + counts_of(b3, node[7]));
    *r -= lane_sum_all(taken);
    return lane_sum((b0 + b1) + (b2 + b3));
}

/* The slot s with cum(s) ≤ t < cum(s) + cnt[s] (t < total); *cum = cum(s). A zero count
 * is never chosen: its sum equals the one before it, so both are ≤ t or neither. */
static inline uint32_t tree_find(const struct model *m, uint32_t t, uint32_t *cum)
{
    uint32_t node = 0;
    uint64_t r = (uint64_t)t * LANES | LANE_TOPS;
    for (uint32_t l = 0; l < m->levels; l++)
        node = node * FAN + node_step(m->tree + m->level_at[l] + NODE_WORDS * (size_t)node, &r);
    *cum = t - ((uint32_t)r & 0x7FFF);
    return node;
}

/* 1 in the lanes k … 15 of the 16 (row k), word by word (the shift's count masked so that
 * the branches not taken stay within the word too). */
#define FROM(k, w) ((k) <= 4 * (w) ? LANES : (k) >= 4 * (w) + 4 ? 0 : LANES << (16 * (((k) - 4 * (w)) & 3)))
#define FROM_ROW(k) {FROM(k, 0), FROM(k, 1), FROM(k, 2), FROM(k, 3)}
static const uint64_t sums_from[FAN][4] = {FROM_ROW(0),  FROM_ROW(1),  FROM_ROW(2),  FROM_ROW(3),
                                           FROM_ROW(4),  FROM_ROW(5),  FROM_ROW(6),  FROM_ROW(7),
                                           FROM_ROW(8),  FROM_ROW(9),  FROM_ROW(10), FROM_ROW(11),
                                           FROM_ROW(12), FROM_ROW(13), FROM_ROW(14), FROM_ROW(15)};

/* Adds delta to the count of a slot: in the node on its path at each level, to its child's
 * count and to the sums from that child on (a negative delta takes no lane below 0, so no
 * lane borrows from the next). */
static inline void tree_add(struct model *m, uint32_t slot, int delta)
{
    uint64_t d = (uint64_t)(int64_t)delta;
    for (uint32_t l = 0; l < m->levels; l++) {
        uint32_t below = FAN_BITS * (m->levels - 1 - l);
        uint32_t k = (slot >> below) & (FAN - 1);
        uint64_t *at = m->tree + m->level_at[l] + NODE_WORDS * (size_t)(slot >> (below + FAN_BITS));
        for (uint32_t w = 0; w < 4; w++)
            at[w] += d * sums_from[k][w];
        at[4 + (k >> 2)] += d << (16 * (k & 3));
    }
}

/* The tree from the counts. A node of level l spans FAN^(levels − l) slots. */
static void tree_build(struct model *m)
{
    for (uint32_t l = 0; l < m->levels; l++) {
        uint32_t child_span = 1u << (FAN_BITS * (m->levels - 1 - l)), span = child_span * FAN;
        uint64_t *level = m->tree + m->level_at[l];
        for (uint32_t i = 0; i * span < m->room; i++) {
            uint64_t *node = level + NODE_WORDS * (size_t)i;
            uint32_t sum = 0, slot = i * span;
            memset(node, 0, NODE_WORDS * sizeof *node);
            for (uint32_t k = 0; k < FAN; k++) {
                uint32_t count = 0;
                for (uint32_t end = slot + child_span; slot < end && slot < m->room; slot++)
                    count += m->cnt[slot];
                sum += count;
                node[k >> 2] |= (uint64_t)sum << (16 * (k & 3));
                node[4 + (k >> 2)] |= (uint64_t)count << (16 * (k & 3));
            }
        }
    }
}

/* Gives m room for `room` slots (a power of two, FAN ≤ room ≤ FAN^MAX_LEVELS), keeping the
 * slots it had. NOMEM (m stays as it was), or LIMIT past MAX_LEVELS. */
static enum s3_err model_room(struct model *m, uint32_t room)
{
    uint32_t levels = 1, words = 0, level_at[MAX_LEVELS];
    while ((1u << (FAN_BITS * levels)) < room)
        if (++levels > MAX_LEVELS)
            return S3_ERR_LIMIT; /* cannot happen: n < total < 2^15 */
    for (uint32_t l = 0; l < levels; l++) {
        level_at[l] = words;
        uint32_t span = 1u << (FAN_BITS * (levels - l));
        words += NODE_WORDS * ((room + span - 1) / span);
    }
    uint64_t *tree = malloc((size_t)words * sizeof *tree);
    uint16_t *b = calloc(2 * (size_t)room, sizeof *b);
    if (!tree || !b) {
        free(tree);
        free(b);
        return S3_ERR_NOMEM;
    }
    if (m->cnt) { /* growing: the old slots, all of them (the new slot n may be the first past them) */
        memcpy(b, m->cnt, (size_t)m->room * sizeof *b);
        memcpy(b + room, m->val, (size_t)m->room * sizeof *b);
        free(m->cnt);
        free(m->tree);
        m->counts->grows++;
    }
    m->cnt = b;
    m->val = b + room;
    m->tree = tree;
    m->room = room;
    m->levels = levels;
    memcpy(m->level_at, level_at, levels * sizeof *level_at);
    if (levels > m->counts->max_levels)
        m->counts->max_levels = levels;
    tree_build(m);
    return S3_OK;
}

static void model_free(struct model *m)
{
    free(m->cnt);
    free(m->tree);
    memset(m, 0, sizeof *m);
}

static enum s3_err model_init(struct model *m, uint32_t u, struct oodle0_counts *counts)
{
    model_free(m);
    m->u = u;
    m->cap = (u + 5) & ~3u;
    m->counts = counts;
    enum s3_err e = model_room(m, FAN);
    if (e != S3_OK)
        return e;
    m->cnt[0] = 3;
    m->total = 3;
    tree_add(m, 0, 3);
    return S3_OK;
}

/* The decoder's failure string for a model's reason: a failed allocation must read as
 * NOMEM (oodle_out_of_memory), anything else as broken bytes. */
static const char *model_fail(enum s3_err e)
{
    return e == S3_ERR_NOMEM ? oodle_out_of_memory : "model grows past its level limit";
}

/* Group width 2^k and start L of the last of 16 groups, for m slots; only the swap target
 * of a rescale depends on it. */
static void layout(uint32_t m, uint32_t *k, uint32_t *L)
{
    *k = 0;
    *L = 0;
    if (m < 6)
        return;
    uint32_t best_tail = UINT32_MAX;
    for (uint32_t kk = 0; kk < 16; kk++) {
        uint32_t g = 1u << kk, groups = (m + g - 1) / g;
        if (groups > 16)
            groups = 16;
        uint32_t tail = m - g * (groups - 1);
        if (tail < g)
            tail = g;
        if (tail < best_tail) { /* strictly smaller: the first k wins ties */
            best_tail = tail;
            *k = kk;
        }
        if (g > m)
            break;
    }
    *L = 15u << *k;
}

/* Halves the counts, dropping the symbols that would reach 0, and moves the most frequent
 * to the start of its group. -1 when no count is left (only possible with U = 0). */
static int rescale(struct model *m)
{
    uint32_t k, L;
    m->counts->rescales++;
    layout(m->n + 1, &k, &L);
    m->cnt[0] >>= 1;
    uint32_t n = m->n, best = 0, bestpos = 0;
    for (uint32_t i = 1; i <= n;) {
        if (m->cnt[i] <= 1) { /* drop it: the last slot fills the hole and is looked at next */
            m->counts->drops++;
            m->cnt[i] = m->cnt[n];
            m->val[i] = m->val[n];
            m->cnt[n] = 0;
            n--;
            continue;
        }
        m->cnt[i] >>= 1;
        if (m->cnt[i] > best) {
            best = m->cnt[i];
            bestpos = i;
        }
        i++;
    }
    m->n = n;
    if (best > 0) {
        uint32_t p = n < L ? n & ~((1u << k) - 1) : L;
        if (p == 0)
            p = 1;
        if (p != bestpos) {
            m->counts->swaps++;
            uint16_t c = m->cnt[p], v = m->val[p];
            m->cnt[p] = m->cnt[bestpos];
            m->val[p] = m->val[bestpos];
            m->cnt[bestpos] = c;
            m->val[bestpos] = v;
        }
    }
    if (n != m->u && m->cnt[0] == 0) { /* the escape back on */
        m->cnt[0] = 2;
        m->counts->reenables++;
    }
    uint32_t total = 0;
    for (uint32_t i = 0; i <= n; i++)
        total += m->cnt[i];
    m->total = total;
    tree_build(m);
    return total ? 0 : -1;
}

/* One symbol; a new one (the escape) is a raw value below raw_T. */
static inline uint32_t model_decode(struct model *m, struct coder *c, uint32_t raw_T)
{
    if (m->total >= RESCALE_AT && rescale(m)) {
        c->fail = "model with no count left (a limit U of 0)";
        return 0;
    }
    uint32_t T = m->total, cum;
    uint32_t s = tree_find(m, target(c, T), &cum);
    narrow(c, cum, m->cnt[s], T);
    m->cnt[s]++;
    tree_add(m, s, 1);
    m->total++;
    if (s)
        return m->val[s];
    m->counts->escapes++;
    uint32_t n = ++m->n;
    if (n > m->counts->max_slots)
        m->counts->max_slots = n;
    if (n >= m->cap) {
        c->fail = "more new symbols than the model's limit U allows";
        return 0;
    }
    if (n >= m->room) {
        enum s3_err e = model_room(m, m->room * 2);
        if (e != S3_OK) {
            c->fail = model_fail(e);
            return 0;
        }
    }
    m->cnt[n] = 2;
    tree_add(m, n, 2);
    m->total += 2;
    if (n == m->u) { /* every symbol the limit allows is here: the escape off at once */
        m->counts->switch_offs++;
        m->total -= m->cnt[0];
        tree_add(m, 0, -(int)m->cnt[0]);
        m->cnt[0] = 0;
    }
    uint32_t v = uniform(c, raw_T);
    m->val[n] = (uint16_t)v; /* a wider value is refused by the caller before any reuse */
    return v;
}

/* ---- LZ layer (§5) ---- */

struct stage {
    struct oodle0_params p;
    uint32_t lo_raw;
    uint32_t seen, prev; /* bytes made and the previous length symbol, in this stage */
    struct model lit, lo, hi, len[OODLE_LEN_SYMBOLS];
};

static void stage_free(struct stage *s)
{
    model_free(&s->lit);
    model_free(&s->lo);
    model_free(&s->hi);
    for (int t = 0; t < OODLE_LEN_SYMBOLS; t++)
        model_free(&s->len[t]);
}

/* S3_OK, or the first model's reason (the stage keeps what it had; stage_free frees it). */
static enum s3_err stage_init(struct stage *s, const struct oodle0_params *p, struct oodle0_counts *counts)
{
    s->p = *p;
    s->lo_raw = p->dmax < 4 ? p->dmax : 4;
    s->seen = 0;
    s->prev = 0;
    enum s3_err e = model_init(&s->lit, p->ulit, counts);
    if (e == S3_OK)
        e = model_init(&s->lo, s->lo_raw, counts);
    if (e == S3_OK)
        e = model_init(&s->hi, p->uhi, counts);
    for (uint32_t t = 0; t < OODLE_LEN_SYMBOLS && e == S3_OK; t++)
        e = model_init(&s->len[t], p->len_u[oodle_len_byte(t)], counts);
    return e;
}

/* One literal or match. NULL, or why the stream is broken. */
static inline const char *step(struct stage *s, struct coder *c, uint8_t *out, uint32_t *pos, uint32_t stop)
{
    uint32_t j = model_decode(&s->len[s->prev], c, OODLE_LEN_SYMBOLS);
    if (c->fail)
        return c->fail;
    s->prev = j; /* < 65: every length value came from uniform(65) */
    if (j == 0) {
        uint32_t b = model_decode(&s->lit, c, s->p.lraw);
        if (c->fail)
            return c->fail;
        if (b > 255)
            return "literal value above 255";
        out[(*pos)++] = (uint8_t)b;
        s->seen++;
        return NULL;
    }
    uint32_t n = oodle_match_len(j);
    uint32_t r = s->p.dmax < s->seen ? s->p.dmax : s->seen; /* `seen` before this match */
    uint32_t lo = model_decode(&s->lo, c, s->lo_raw);
    uint32_t hi = model_decode(&s->hi, c, (r >> 2) + 1);
    if (c->fail)
        return c->fail;
    if (hi > MAX_VALUE)
        return "high distance part above 65535 (unsupported)";
    uint32_t d = 4 * hi + lo + 1;
    if (d > *pos)
        return "match distance reaches before the start of the output";
    if (n > stop - *pos)
        return "match runs past the end of its stage";
    uint8_t *o = out + *pos;
    if (d >= n)
        memcpy(o, o - d, n);
    else /* overlapping: a pattern of d bytes repeats */
        for (const uint8_t *from = o - d; o < out + *pos + n; o++, from++)
            *o = *from;
    *pos += n;
    s->seen += n;
    return NULL;
}

/* Decodes until pos reaches stop, on a local copy of the coder (kept in registers). */
static const char *decode_stage(struct stage *s, struct coder *shared, uint8_t *out, uint32_t *pos, uint32_t stop)
{
    struct coder c = *shared;
    uint32_t at = *pos;
    const char *fail = NULL;
    while (at < stop && !fail)
        fail = step(s, &c, out, &at, stop);
    *shared = c;
    *pos = at;
    return fail;
}

void oodle0_read_params(const uint8_t *p, bool be, struct oodle0_params out[3])
{
    struct oodle_block b[3];
    oodle_read_blocks(p, be, b);
    for (int k = 0; k < 3; k++) {
        out[k].lraw = oodle_block_lraw(&b[k]);
        out[k].dmax = oodle_block_dmax(&b[k]);
        out[k].ulit = b[k].b & 0x1FF;
        out[k].uhi = b[k].b >> 9;
        uint32_t c = ld_u32(b[k].c, be);
        for (int i = 0; i < 4; i++)
            out[k].len_u[i] = (uint8_t)(c >> (8 * i));
    }
}

/* The stream as the coder reads it: bytes bit-reversed (and, for big-endian files, each
 * 32-bit word byte-swapped first), then zero padding. *nbits: the stream's stored bits. */
static uint8_t *prepare_stream(const uint8_t *s, size_t len, bool be, uint64_t *nbits)
{
    size_t body = be ? (len + 3) & ~(size_t)3 : len;
    uint8_t *b = calloc(body + STREAM_PAD, 1);
    if (!b)
        return NULL;
    for (size_t i = 0; i < body; i++) {
        size_t from = be ? (i & ~(size_t)3) + 3 - (i & 3) : i;
        uint8_t x = from < len ? s[from] : 0;
        x = (uint8_t)((x & 0xF0) >> 4 | (x & 0x0F) << 4);
        x = (uint8_t)((x & 0xCC) >> 2 | (x & 0x33) << 2);
        b[i] = (uint8_t)((x & 0xAA) >> 1 | (x & 0x55) << 1);
    }
    *nbits = (uint64_t)body * 8;
    return b;
}

/* Frees buf and says why (fmt takes two numbers and the reason). */
static enum s3_err fail_with(enum s3_err e, char *err, size_t errlen, uint8_t *buf, const char *fmt, uint32_t a,
                             uint32_t b, const char *why)
{
    free(buf);
    snprintf(err, errlen, fmt, a, b, why);
    return e;
}

enum s3_err oodle0_expand(const uint8_t *in, size_t in_len, bool be, uint32_t stop0, uint32_t stop1,
                          uint32_t expanded_size, uint64_t max_expanded, uint8_t **out, char *err, size_t errlen)
{
    return oodle0_expand_counted(in, in_len, be, stop0, stop1, expanded_size, max_expanded, out, err, errlen, NULL);
}

enum s3_err oodle0_expand_counted(const uint8_t *in, size_t in_len, bool be, uint32_t stop0, uint32_t stop1,
                                  uint32_t expanded_size, uint64_t max_expanded, uint8_t **out, char *err,
                                  size_t errlen, struct oodle0_counts *counts)
{
    struct oodle0_counts unused;
    if (!counts)
        counts = &unused;
    memset(counts, 0, sizeof *counts);
    *out = NULL;
    enum s3_err e = oodle_check_frame("Oodle0", in_len, expanded_size, max_expanded, err, errlen);
    if (e != S3_OK)
        return e;
    uint8_t *buf = alloc_array(expanded_size, 1);
    if (!buf)
        return s3_fail(S3_ERR_NOMEM, err, errlen, "Oodle0: cannot allocate %u bytes", expanded_size);
    if (expanded_size == 0) { /* nothing to make: nothing is read */
        *out = buf;
        return S3_OK;
    }
    struct oodle0_params p[3];
    oodle0_read_params(in, be, p);
    uint32_t end[3], pos = 0;
    oodle_stage_ends(stop0, stop1, expanded_size, end);
    for (uint32_t k = 0, from = 0; k < 3; from = end[k], k++) {
        if (end[k] <= from)
            continue; /* a stage that runs needs both alphabets (§7.4, §7.5) */
        if (p[k].lraw == 0)
            return fail_with(S3_ERR_FORMAT, err, errlen, buf,
                             "Oodle0: stage %u parameter block (output from byte %u): %s", k, from,
                             "a literal alphabet of 0");
        if (p[k].dmax == 0)
            return fail_with(S3_ERR_FORMAT, err, errlen, buf,
                             "Oodle0: stage %u parameter block (output from byte %u): %s", k, from,
                             "a distance limit of 0");
    }
    uint64_t nbits;
    uint8_t *stream = prepare_stream(in + OODLE_PARAMS_SIZE, in_len - OODLE_PARAMS_SIZE, be, &nbits);
    struct stage *s = stream ? calloc(1, sizeof *s) : NULL;
    const char *fail = s ? NULL : oodle_out_of_memory;
    struct coder c;
    if (s)
        coder_init(&c, stream, nbits); /* once: the stream runs through all three stages */
    for (int k = 0; k < 3 && !fail; k++) {
        if (pos >= end[k])
            continue; /* skipped: no models, no bits */
        enum s3_err se = stage_init(s, &p[k], counts);
        fail = se != S3_OK ? model_fail(se) : decode_stage(s, &c, buf, &pos, end[k]);
    }
    if (s)
        stage_free(s);
    free(s);
    free(stream);
    if (fail)
        return fail_with(oodle_fail_reason(fail), err, errlen, buf, "Oodle0: at output byte %u of %u: %s", pos,
                         expanded_size, fail);
    *out = buf;
    return S3_OK;
}
