/* Oodle0 (Granny compression 1): values worked out by hand from shared/formats/oodle0.md,
 * round trips through the test encoder (random and structured data, every stage, awkward
 * stops, long and short matches, escapes, rescales), one broken stream per rule of the
 * notes' §7, and GR2 files whose object section is Oodle0-compressed. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "expect.h"
#include "fixture.h"
#include "fixture_gr2obj.h"
#include "fs/open/open.h"
#include "gr2obj_check.h"
#include "oodle0enc.h"
#include "parse/codec/oodle0.h"
#include "tree_probe.h"
#include "walk.h"
#include "testutil.h"
#include "tree_compare.h"

/* Expands and returns the bytes, or NULL with err. */
static uint8_t *expand(const uint8_t *in, size_t n, bool be, uint32_t s0, uint32_t s1, uint32_t size, char *err)
{
    uint8_t *out;
    if (oodle0_expand(in, n, be, s0, s1, size, 0, &out, err, 256))
        return NULL;
    return out;
}

/* Expects the expansion to fail with a reason containing `why`. */
static void expect_error(const uint8_t *in, size_t n, bool be, uint32_t s0, uint32_t s1, uint32_t size,
                         const char *why)
{
    char err[256] = "";
    uint8_t *out = expand(in, n, be, s0, s1, size, err);
    if (out)
        fail_msg("expected an error \"%s\", got %u bytes", why, size);
    if (!strstr(err, why))
        fail_msg("expected \"%s\" in \"%s\"", why, err);
}

static void put_le(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* ---- known values ---- */

/* The block the exporter writes for an empty stage (§2), and the length limits' byte order. */
static void test_params(void **state)
{
    (void)state;
    uint8_t b[36];
    for (int k = 0; k < 3; k++) {
        put_le(b + 12 * k, 0x07FFF100);
        put_le(b + 12 * k + 4, 0x00000201);
        put_le(b + 12 * k + 8, 0x01010101);
    }
    put_le(b + 12 + 4, 3348u << 9 | 69); /* stage 1: the largest Uhi and smallest Ulit seen in real blocks */
    b[12 + 8] = 60, b[12 + 9] = 7, b[12 + 10] = 8, b[12 + 11] = 9;
    struct oodle0_params p[3];
    oodle0_read_params(b, false, p);
    assert_int_equal(p[0].lraw, 256);
    assert_int_equal(p[0].dmax, 262136); /* 0x3FFF8: every real block */
    assert_int_equal(p[0].ulit, 1);
    assert_int_equal(p[0].uhi, 1);
    assert_int_equal(p[1].ulit, 69);
    assert_int_equal(p[1].uhi, 3348);
    /* Ulen[0] (contexts 0–15) is byte +11, …, Ulen[3] (48–64) byte +8 */
    assert_int_equal(p[1].len_u[oodle_len_byte(0)], 9);
    assert_int_equal(p[1].len_u[oodle_len_byte(15)], 9);
    assert_int_equal(p[1].len_u[oodle_len_byte(16)], 8);
    assert_int_equal(p[1].len_u[oodle_len_byte(32)], 7);
    assert_int_equal(p[1].len_u[oodle_len_byte(48)], 60);
    assert_int_equal(p[1].len_u[oodle_len_byte(64)], 60);
    /* big-endian files: the words byte-swapped */
    uint8_t q[36];
    for (int i = 0; i < 36; i++)
        q[i] = b[(i & ~3) + 3 - (i & 3)];
    struct oodle0_params r[3];
    oodle0_read_params(q, true, r);
    assert_memory_equal(p, r, sizeof p);
    /* the length alphabet */
    assert_int_equal(oodle_match_len(1), 2);
    assert_int_equal(oodle_match_len(60), 61);
    assert_int_equal(oodle_match_len(61), 128);
    assert_int_equal(oodle_match_len(62), 192);
    assert_int_equal(oodle_match_len(63), 256);
    assert_int_equal(oodle_match_len(64), 512);
}

/* A stream of zero bits, worked by hand (§3, §4): CODE = 0. LEN[0] is fresh, so T = 3 is all
 * escape and costs no bits; uniform(65) gives 0, a literal, and narrows HIGH to
 * 2^31/65 − 1 = 33038208: 6 settled bits. The fresh literal model escapes for free again;
 * uniform(256) gives the byte 0 and HIGH = 2114445376/256 − 1 = 8259551 < 2^23: 8 more
 * bits. 31 + 6 + 8 = 45 bits: with at most 32 read past the end, 2 stored bytes are enough
 * and 1 is not. */
static void test_zero_stream_by_hand(void **state)
{
    (void)state;
    uint8_t s[36 + 4] = {0};
    for (int k = 0; k < 3; k++)
        put_le(s + 12 * k, 0x07FFF100), put_le(s + 12 * k + 4, 0x00000201), put_le(s + 12 * k + 8, 0x01010101);
    char err[256];
    for (size_t n = 38; n <= 40; n++) {
        uint8_t *out = expand(s, n, false, 0, 0, 1, err);
        if (!out)
            fail_msg("%zu stored bytes: %s", n, err);
        assert_int_equal(out[0], 0);
        free(out);
    }
    expect_error(s, 37, false, 0, 0, 1, "past the end");
    expect_error(s, 36, false, 0, 0, 1, "past the end");
    /* the same in stage 0 (stops at the end) */
    uint8_t *out = expand(s, 38, false, 1, 1, 1, err);
    assert_non_null(out);
    assert_int_equal(out[0], 0);
    free(out);
    /* the second step: LEN[0] (count 3 + 1, symbol 0 count 2: T = 6) — CODE = 0 lies in the
     * escape again, whose raw value 0 makes a second slot for symbol 0; the literal model's
     * T = 6 too and the same happens. Two zero bytes, and more bits */
    out = expand(s, 40, false, 0, 0, 2, err);
    if (!out)
        fail_msg("%s", err);
    assert_int_equal(out[0], 0);
    assert_int_equal(out[1], 0);
    free(out);
    /* an empty section reads nothing, not even the parameters */
    out = expand(s, 0, false, 0, 0, 0, err);
    assert_non_null(out);
    free(out);
}

/* A stream of one bits (§3): CODE = 2^31 − 1. LEN[0]'s free escape, then uniform(65) gives
 * 64: a 512-byte match before any output, so its distance (hi from an alphabet of
 * min(Dmax, 0)/4 + 1 = 1, at most 4) reaches before the output start. */
static void test_one_stream_by_hand(void **state)
{
    (void)state;
    uint8_t s[36 + 16];
    memset(s, 0xFF, sizeof s);
    for (int k = 0; k < 3; k++)
        put_le(s + 12 * k, 0x07FFF100), put_le(s + 12 * k + 4, 0x00000201), put_le(s + 12 * k + 8, 0x01010101);
    expect_error(s, sizeof s, false, 0, 0, 1000, "before the start of the output");
    expect_error(s, sizeof s, false, 0, 0, 100, "before the start of the output");
}

/* ---- round trips ---- */

struct totals {
    struct o0e_stats s;
    uint32_t runs;
};

static void add_stats(struct totals *t, const struct o0e_stats *s)
{
    t->runs++;
    t->s.stages_run += s->stages_run;
    t->s.literals += s->literals;
    t->s.matches += s->matches;
    t->s.long_matches += s->long_matches;
    t->s.short_matches += s->short_matches;
    t->s.overlaps += s->overlaps;
    t->s.escapes += s->escapes;
    t->s.switch_offs += s->switch_offs;
    t->s.rescales += s->rescales;
    t->s.swaps += s->swaps;
    t->s.reenables += s->reenables;
    t->s.drops += s->drops;
    t->s.max_dist = s->max_dist > t->s.max_dist ? s->max_dist : t->s.max_dist;
}

/* The decoder's models went through the events the encoder's models went through (two
 * implementations of §4 that share no code). */
static void expect_same_events(const struct oodle0_counts *dec, const struct o0e_stats *enc)
{
    assert_int_equal(dec->escapes, enc->escapes);
    assert_int_equal(dec->switch_offs, enc->switch_offs);
    assert_int_equal(dec->rescales, enc->rescales);
    assert_int_equal(dec->drops, enc->drops);
    assert_int_equal(dec->swaps, enc->swaps);
    assert_int_equal(dec->reenables, enc->reenables);
}

/* Encodes, expands, compares; the encoder's events go into t. */
static void round_trip(const uint8_t *in, uint32_t n, uint32_t s0, uint32_t s1, const struct o0e_opts *o,
                       struct totals *t, const char *what)
{
    size_t cl;
    struct o0e_stats st;
    uint8_t *c = o0e_encode(in, n, s0, s1, o, &cl, &st);
    if (!c)
        fail_msg("%s: the encoder failed", what);
    assert_int_equal((cl - 36) % 4, 0); /* whole 32-bit words, as the real streams */
    char err[256];
    uint8_t *out;
    struct oodle0_counts seen;
    if (oodle0_expand_counted(c, cl, o->big_endian, s0, s1, n, 0, &out, err, sizeof err, &seen))
        fail_msg("%s (%u bytes, stops %u %u): %s", what, n, s0, s1, err);
    if (memcmp(out, in, n) != 0)
        fail_msg("%s (%u bytes, stops %u %u): wrong output", what, n, s0, s1);
    free(out);
    expect_same_events(&seen, &st);
    /* a stage stop moved: other models for some bytes, so other output or an error */
    if (n > 64 && st.matches > 0 && s0 > 8 && s0 < n) {
        out = expand(c, cl, o->big_endian, s0 - 8, s1, n, err);
        if (out)
            assert_memory_not_equal(out, in, n);
        free(out);
    }
    free(c);
    if (t)
        add_stats(t, &st);
}

enum kind { RANDOM, TEXT, VERTS, RUNS, FEW };

static uint8_t *make_data(enum kind k, uint32_t n, unsigned *seed)
{
    uint8_t *p = malloc(n + 1);
    static const char *words[] = {"bone ", "Skeleton ", "mesh", "ArtToolInfo ", "\n", "x", "the quick ", "Granny"};
    float f = 0;
    for (uint32_t i = 0; i < n;) {
        switch (k) {
        case RANDOM:
            p[i++] = (uint8_t)rand_r(seed);
            break;
        case TEXT: {
            const char *w = words[rand_r(seed) % 8];
            for (size_t j = 0; w[j] && i < n; j++)
                p[i++] = (uint8_t)w[j];
            break;
        }
        case VERTS: { /* floats that drift, with u32 indices between */
            f += (float)(rand_r(seed) % 7) * 0.25f;
            uint32_t w;
            memcpy(&w, &f, 4);
            w = i % 16 < 12 ? w : i / 16;
            for (int j = 0; j < 4 && i < n; j++, i++)
                p[i] = (uint8_t)(w >> (8 * j));
            break;
        }
        case RUNS: { /* long runs: long matches with overlapping copies */
            uint8_t b = (uint8_t)rand_r(seed);
            uint32_t len = 1 + (uint32_t)rand_r(seed) % 1500;
            for (uint32_t j = 0; j < len && i < n; j++)
                p[i++] = b;
            break;
        }
        case FEW: /* a handful of byte values: literal models with a few slots */
            p[i++] = (uint8_t)"abcab"[rand_r(seed) % 5];
            break;
        }
    }
    return p;
}

static void test_round_trips(void **state)
{
    (void)state;
    unsigned seed = 22;
    struct totals t = {0};
    for (int it = 0; it < 80; it++) {
        enum kind k = (enum kind)(it % 5);
        uint32_t n = (uint32_t)rand_r(&seed) % (it < 40 ? 700 : 40000);
        uint8_t *in = make_data(k, n, &seed);
        /* stops: inside, at 0, at the end, equal, past the end, reversed */
        uint32_t s0, s1;
        switch (it % 6) {
        case 0: s0 = n / 3, s1 = n / 3 * 2; break;
        case 1: s0 = 0, s1 = 0; break;
        case 2: s0 = n, s1 = n; break;
        case 3: s0 = s1 = n / 2; break;
        case 4: s0 = n + 5, s1 = 0xFFFFFFFF; break;
        default: s0 = n / 2, s1 = n / 4; break;
        }
        struct o0e_opts o = {.big_endian = it % 7 == 3, .u_extra = it % 2};
        char what[64];
        snprintf(what, sizeof what, "round trip %d (kind %d)", it, (int)k);
        round_trip(in, n, s0, s1, &o, &t, what);
        free(in);
    }
    /* what the round trips went through (the encoder's own counts) */
    assert_true(t.s.stages_run > 80);
    assert_true(t.s.literals > 10000);
    assert_true(t.s.matches > 10000);
    assert_true(t.s.long_matches > 100);
    assert_true(t.s.short_matches > 100);
    assert_true(t.s.overlaps > 100);
    assert_true(t.s.escapes > 1000);
    assert_true(t.s.switch_offs > 10);
    assert_true(t.s.rescales > 10);
    assert_true(t.s.swaps > 5);
    assert_true(t.s.max_dist > 20000);
}

/* Every stop from 0 to the end on one small input, the two stops apart and together:
 * stages of one byte, stops inside would-be matches, stages that start with a match reaching
 * up to 4 bytes back into the previous stage. */
static void test_every_stop(void **state)
{
    (void)state;
    unsigned seed = 5;
    const uint32_t n = 90;
    uint8_t *in = make_data(TEXT, n, &seed);
    struct totals t = {0};
    for (uint32_t s0 = 0; s0 <= n; s0++)
        for (uint32_t s1 = s0; s1 <= n; s1 += (s1 < s0 + 3 || s1 > n - 3) ? 1 : 7) {
            struct o0e_opts o = {.u_extra = (s0 + s1) & 1};
            round_trip(in, n, s0, s1, &o, &t, "every stop");
        }
    assert_true(t.s.stages_run > 2 * t.runs);
    free(in);
}

/* Hand-made tokens: a stage starting with a match into the previous stage's bytes, and a
 * overlapping copy. Expected bytes by the format's rules. */
static void test_tokens_across_stages(void **state)
{
    (void)state;
    const struct o0e_token s0[] = {{0, 'a'}, {0, 'b'}, {0, 'c'}, {0, 'd'}};
    const struct o0e_token s1[] = {{3, 4}, {0, 'e'}};           /* 4 bytes from distance 4: "abcd" */
    const struct o0e_token s2[] = {{1, 2}, {5, 1}, {61, 3}};    /* "de", then 6 × 'e', then 128 from 3 back */
    const struct o0e_token *const tok[3] = {s0, s1, s2};
    const size_t nt[3] = {4, 2, 3};
    uint8_t want[4 + 5 + 2 + 6 + 128];
    memcpy(want, "abcdabcde" "de" "eeeeee", 17);
    for (int i = 17; i < (int)sizeof want; i++)
        want[i] = want[i - 3];
    for (int be = 0; be <= 1; be++) {
        struct o0e_opts o = {.big_endian = be, .u_extra = 1};
        size_t cl;
        char err[256];
        uint8_t *c = o0e_encode_tokens(tok, nt, &o, &cl, NULL, err, sizeof err);
        if (!c)
            fail_msg("%s", err);
        uint8_t *out = expand(c, cl, be, 4, 9, sizeof want, err);
        if (!out)
            fail_msg("%s", err);
        assert_memory_equal(out, want, sizeof want);
        free(out);
        free(c);
    }
}

/* Models as large as real ones get, and larger (the decoder keeps counts in a tree of
 * fan-out 16, rebuilt when a model's slots double and at every halving): a literal model of
 * all 256 byte values (257 slots with the escape's: 3 levels) and a high-distance model of
 * 5000 symbols (more than 16^3 slots: 4 levels), each switching its escape off at its last
 * new symbol (U = 256 and 5000). Then half of the distances again and again, until halvings
 * drop the other half (their count 2 halves to 1, then goes) and switch the escape back on.
 * Expected bytes by the LZ rules; the decoder's events must be the encoder's. */
static void test_large_models(void **state)
{
    (void)state;
    enum { LITS = 20100, NEW_HI = 5000, REUSED = 30000 };
    const size_t ntok = LITS + NEW_HI + REUSED;
    struct o0e_token *tok = malloc(ntok * sizeof *tok);
    unsigned seed = 9;
    size_t t = 0;
    for (; t < LITS; t++) /* every byte value first, so that the 256th new literal is the last */
        tok[t] = (struct o0e_token){0, t < 256 ? (uint32_t)t : (uint32_t)rand_r(&seed) & 0xFF};
    /* length symbol 1 (2 bytes) at distance 4·h + lo + 1: high part h, new for h = 1 … 5000
     * (allowed: h ≤ seen / 4, and seen ≥ 20100) */
    for (uint32_t h = 1; h <= NEW_HI; h++)
        tok[t++] = (struct o0e_token){1, 4 * h + h % 4 + 1};
    for (uint32_t i = 0; i < REUSED; i++) { /* 1 … 2500, all of them in every 2500 */
        uint32_t h = 1 + i * 7919u % (NEW_HI / 2);
        tok[t++] = (struct o0e_token){1, 4 * h + h % 4 + 1};
    }
    uint32_t size = LITS + 2 * (NEW_HI + REUSED);
    uint8_t *want = malloc(size);
    uint32_t pos = 0;
    for (size_t i = 0; i < ntok; i++) {
        if (tok[i].sym == 0) {
            want[pos++] = (uint8_t)tok[i].value;
            continue;
        }
        for (uint32_t j = 0; j < 2; j++, pos++)
            want[pos] = want[pos - tok[i].value];
    }
    struct o0e_opts o = {.fixed_params = true};
    for (int k = 0; k < 3; k++)
        o.params[k] = (struct o0e_params){.lraw = 256, .dmax = 262136, .ulit = 256, .uhi = NEW_HI, .ulen = {3, 3, 3, 3}};
    const struct o0e_token *const stages[3] = {tok, NULL, NULL};
    const size_t nt[3] = {ntok, 0, 0};
    struct o0e_stats st = {0};
    size_t cl;
    char err[256];
    uint8_t *c = o0e_encode_tokens(stages, nt, &o, &cl, &st, err, sizeof err), *out;
    if (!c)
        fail_msg("%s", err);
    struct oodle0_counts seen;
    if (oodle0_expand_counted(c, cl, false, size, size, size, 0, &out, err, sizeof err, &seen))
        fail_msg("%s", err);
    assert_memory_equal(out, want, size);
    expect_same_events(&seen, &st);
    assert_int_equal(seen.max_slots, NEW_HI);
    assert_int_equal(seen.max_levels, 4);
    assert_int_equal(seen.grows, 9 + 5); /* 16 → 8192 slots, 16 → 512 slots */
    /* and the length models' (0 and 1 after a literal, 1 after a match), the low parts 0 … 3 */
    assert_int_equal(seen.escapes, 256 + NEW_HI + 3 + 4);
    assert_true(seen.switch_offs >= 2);
    assert_true(seen.drops >= NEW_HI / 2);
    assert_true(seen.reenables >= 1);
    assert_true(seen.swaps >= 1);
    free(out);
    free(c);
    free(want);
    free(tok);
}

/* The escape switched off when a model holds U symbols, and back on when a rescale drops
 * one (count 2, §4 r4): a literal model with U = the number of byte values used. */
static void test_escape_off_and_on(void **state)
{
    (void)state;
    unsigned seed = 3;
    const uint32_t n = 60000;
    uint8_t *in = malloc(n);
    for (uint32_t i = 0; i < n; i++) /* 20 other bytes once each early on, then 'a': two rescales drop them */
        in[i] = (uint8_t)(i % 10 == 5 && i < 200 ? 'b' + i / 10 : 'a');
    (void)seed;
    struct o0e_opts o = {.u_extra = 0, .literals_only = true};
    struct totals t = {0};
    round_trip(in, n, n, n, &o, &t, "escape off and on");
    assert_true(t.s.switch_offs > 0);
    assert_true(t.s.rescales > 2);
    assert_true(t.s.reenables > 0);
    assert_true(t.s.drops > 0);
    free(in);
}

/* ---- broken input: one test per rule of §7 ---- */

/* §7.2: bits read past the end. A literal-only stream cut short reads zeros until it has
 * read more than 32 bits past the end. */
static void test_rule_past_end(void **state)
{
    (void)state;
    unsigned seed = 8;
    const uint32_t n = 3000;
    uint8_t *in = make_data(RANDOM, n, &seed);
    struct o0e_opts o = {.u_extra = 1, .literals_only = true};
    size_t cl;
    struct o0e_stats st;
    uint8_t *c = o0e_encode(in, n, 0, 0, &o, &cl, &st);
    assert_non_null(c);
    char err[256];
    for (size_t cut = 5; cut < 40; cut += 4)
        expect_error(c, cl - cut, false, 0, 0, n, "past the end");
    /* what follows the coded bits does not matter (§7.2: 0x00 or 0xFF padding): ones after
     * them, and 4 more bytes of ones */
    uint8_t *q = malloc(cl + 4);
    memcpy(q, c, cl);
    memset(q + cl, 0xFF, 4);
    for (uint64_t b = st.bits; b < (uint64_t)(cl - 36) * 8; b++)
        q[36 + b / 8] |= (uint8_t)(1u << (b % 8));
    for (int k = 0; k < 2; k++) {
        uint8_t *out = expand(k ? q : c, cl + 4 * k, false, 0, 0, n, err);
        if (!out)
            fail_msg("%s", err);
        assert_memory_equal(out, in, n);
        free(out);
    }
    free(q);
    free(c);
    free(in);
}

static uint8_t *code(const struct o0e_token *t0, size_t n0, const struct o0e_token *t1, size_t n1,
                     const struct o0e_token *t2, size_t n2, const struct o0e_opts *o, size_t *cl)
{
    const struct o0e_token *const tok[3] = {t0, t1, t2};
    const size_t nt[3] = {n0, n1, n2};
    char err[256];
    uint8_t *c = o0e_encode_tokens(tok, nt, o, cl, NULL, err, sizeof err);
    if (!c)
        fail_msg("encoder: %s", err);
    return c;
}

/* §7.5: a distance before the output start (hi 0, lo 2: distance 3 after one byte). */
static void test_rule_distance(void **state)
{
    (void)state;
    const struct o0e_token t[] = {{0, 'x'}, {2, 3}};
    struct o0e_opts o = {.u_extra = 1};
    size_t cl;
    uint8_t *c = code(t, 2, NULL, 0, NULL, 0, &o, &cl);
    expect_error(c, cl, false, 4, 4, 4, "before the start of the output");
    free(c);
    /* distance 1 after one byte is fine: "xxx" */
    const struct o0e_token ok[] = {{0, 'x'}, {2, 1}};
    c = code(ok, 2, NULL, 0, NULL, 0, &o, &cl);
    char err[256];
    uint8_t *out = expand(c, cl, false, 4, 4, 4, err);
    if (!out)
        fail_msg("%s", err);
    assert_memory_equal(out, "xxxx", 4);
    free(out);
    free(c);
}

/* §7.6: a match past its stage's stop, and past the end of the output. */
static void test_rule_match_past_stop(void **state)
{
    (void)state;
    const struct o0e_token t0[] = {{0, 'a'}, {0, 'b'}, {3, 1}}; /* 2 + 4 bytes in a stage of 5 */
    const struct o0e_token t2[] = {{0, 'z'}};
    struct o0e_opts o = {.u_extra = 1};
    size_t cl;
    uint8_t *c = code(t0, 3, NULL, 0, t2, 1, &o, &cl);
    expect_error(c, cl, false, 5, 5, 7, "past the end of its stage");
    expect_error(c, cl, false, 5, 5, 5, "past the end of its stage"); /* past the output's end */
    char err[256];
    uint8_t *out = expand(c, cl, false, 6, 6, 7, err); /* the right stops */
    if (!out)
        fail_msg("%s", err);
    assert_memory_equal(out, "abbbbbz", 7);
    free(out);
    free(c);
    /* a 512-byte match in stage 2 past the end */
    const struct o0e_token big[] = {{0, 'q'}, {64, 1}};
    c = code(NULL, 0, NULL, 0, big, 2, &o, &cl);
    expect_error(c, cl, false, 0, 0, 400, "past the end of its stage");
    out = expand(c, cl, false, 0, 0, 513, err);
    assert_non_null(out);
    free(out);
    free(c);
}

/* §7.1, 7.3, 7.4, 7.5: bad parameters and sizes. */
static void test_rule_parameters(void **state)
{
    (void)state;
    const struct o0e_token t[] = {{0, 'a'}, {0, 'b'}, {0, 'c'}, {0, 'd'}, {0, 'e'}, {1, 1}};
    struct o0e_opts o = {.u_extra = 1};
    size_t cl;
    uint8_t *c = code(NULL, 0, NULL, 0, t, 6, &o, &cl);
    uint8_t *q = malloc(cl);
    char err[256];
    /* sizes: over the caller's limit (nothing allocated), too short for the parameters */
    uint8_t *out;
    assert_int_equal(oodle0_expand(c, cl, false, 0, 0, 0xFFFFFFF0u, 1 << 20, &out, err, sizeof err), S3_ERR_LIMIT);
    assert_non_null(strstr(err, "exceeds the limit"));
    expect_error(c, 35, false, 0, 0, 7, "too short");
    /* Lraw = 0 in the stage that runs; the same in a stage that does not run is harmless */
    memcpy(q, c, cl);
    q[24] = 0, q[25] &= 0xFE;
    expect_error(q, cl, false, 0, 0, 7, "literal alphabet of 0");
    memcpy(q, c, cl);
    q[0] = 0, q[1] &= 0xFE;
    out = expand(q, cl, false, 0, 0, 7, err);
    if (!out)
        fail_msg("%s", err);
    assert_memory_equal(out, "abcdeee", 7);
    free(out);
    /* Dmax = 0 */
    memcpy(q, c, cl);
    put_le(q + 24, 256);
    expect_error(q, cl, false, 0, 0, 7, "distance limit of 0");
    /* U = 0 for the literals: room for three new symbols only (cap 4), the fourth fails */
    memcpy(q, c, cl);
    q[28] = 0, q[29] &= 0xFE;
    expect_error(q, cl, false, 0, 0, 7, "limit U");
    /* Lraw = 511 lets a literal above 255 through the coder: refused */
    const struct o0e_token wide[] = {{0, 'a'}, {0, 300}};
    struct o0e_opts ow = {.u_extra = 1, .lraw = 511};
    free(c);
    c = code(wide, 2, NULL, 0, NULL, 0, &ow, &cl);
    expect_error(c, cl, false, 2, 2, 2, "literal value above 255");
    free(c);
    free(q);
}

/* §7.7: a new high distance part above 65535 (only with Dmax > 262143) is refused. */
static void test_rule_wide_distance(void **state)
{
    (void)state;
    const uint32_t lits = 262150;
    struct o0e_token *t = malloc((lits + 1) * sizeof *t);
    for (uint32_t i = 0; i < lits; i++)
        t[i] = (struct o0e_token){0, (uint8_t)(i * 7)};
    t[lits] = (struct o0e_token){1, 4 * 65536 + 1}; /* hi = 65536 */
    struct o0e_opts o = {.u_extra = 1, .dmax = (1u << 23) - 1};
    size_t cl;
    uint8_t *c = code(t, lits + 1, NULL, 0, NULL, 0, &o, &cl);
    expect_error(c, cl, false, lits + 2, lits + 2, lits + 2, "above 65535");
    free(c);
    t[lits].value = 4 * 65535 + 1; /* hi = 65535: fine */
    c = code(t, lits + 1, NULL, 0, NULL, 0, &o, &cl);
    char err[256];
    uint8_t *out = expand(c, cl, false, lits + 2, lits + 2, lits + 2, err);
    if (!out)
        fail_msg("%s", err);
    assert_int_equal(out[lits], out[lits - 4 * 65535 - 1]);
    free(out);
    free(c);
    free(t);
}

/* Random damage to valid streams: a clean error or some output, never a crash (ASan). */
static void test_random_damage(void **state)
{
    (void)state;
    unsigned seed = 99;
    for (int it = 0; it < 12; it++) {
        uint32_t n = 200 + (uint32_t)rand_r(&seed) % 5000;
        uint8_t *in = make_data((enum kind)(it % 5), n, &seed);
        struct o0e_opts o = {.u_extra = 1};
        size_t cl;
        uint8_t *c = o0e_encode(in, n, n / 3, n / 2, &o, &cl, NULL);
        uint8_t *q = malloc(cl);
        for (int k = 0; k < 60; k++) {
            memcpy(q, c, cl);
            for (int f = 0; f < 1 + k % 4; f++)
                q[rand_r(&seed) % cl] ^= (uint8_t)(1u << (rand_r(&seed) % 8));
            char err[256] = "";
            uint8_t *out = expand(q, cl, k & 1, n / 3, n / 2, n, err);
            if (out)
                free(out);
            else
                assert_true(strncmp(err, "Oodle0: ", 8) == 0);
        }
        for (size_t cut = 0; cut < cl; cut += 1 + cl / 50) {
            char err[256];
            uint8_t *out = expand(c, cut, false, n / 3, n / 2, n, err);
            free(out);
        }
        free(q);
        free(c);
        free(in);
    }
}

/* ---- in a GR2 file ---- */

/* The trees of a and b below path: the same names, kinds, sizes, bytes and link targets. */
static void same_tree(struct s3fs *a, struct s3fs *b, const char *path)
{
    uint32_t da, db;
    assert_int_equal(tree_resolve(a->tree, path, &da), 0);
    if (tree_resolve(b->tree, path, &db))
        fail_msg("%s: missing in the Oodle0 tree", path);
    struct snap sa = {0}, sb = {0};
    snap_tree(&sa, a->tree, da);
    snap_tree(&sb, b->tree, db);
    snap_assert_same_content(&sa, &sb);
    assert_true(sa.n > 50);
    snap_free(&sa);
    snap_free(&sb);
}

static void test_objects_through_oodle0(void **state)
{
    (void)state;
    static const char *const sigs[] = {"le32-old", "le64", "be32", "be64"};
    for (int i = 0; i < 4; i++) {
        struct fxg_opts plain = {.sig = sigs[i], .version = 6 + (i & 1), .nbones = 11};
        struct fxg_opts packed = plain;
        packed.oodle0_objects = true;
        struct fxg_result rp, rz;
        size_t sp, sz;
        uint8_t *fp = fxg_build(&plain, &sp, &rp), *fz = fxg_build(&packed, &sz, &rz);
        struct s3fs *a = open_mem(fp, sp, NULL, sigs[i]), *b = open_mem(fz, sz, NULL, sigs[i]);
        struct probe pb = tree_probe(b);
        check_gr2_objects(&pb, &rz, sigs[i]);
        same_tree(a, b, "/granny/root");
        uint8_t *buf;
        size_t len;
        probe_expect_bytes(&pb, "/granny/sections/0/data.bin", rz.section, rz.section_size);
        assert_int_equal(pb.read(pb.ctx, "/granny/sections/0/compression", &buf, &len), 0);
        assert_memory_equal(buf, "oodle0\n", 7);
        free(buf);
        char type[64];
        assert_true(pb.getxattr(pb.ctx, "/granny/sections/0/data.bin", "user.s3rig.type", type, sizeof type) > 0);
        assert_string_equal(type, "oodle0:gr2.section_data");
        /* /info: codec, stored and expanded size, state */
        char want[128];
        snprintf(want, sizeof want, "section 0: oodle0, %u stored, %u expanded, expanded\n",
                 rz.layout.data_size[0], rz.section_size);
        ex_holds(&pb, "/info", want);
        walk_all(b, 100000); /* links stay inside, every file reads */
        s3fs_close(a);
        s3fs_close(b);
        free(fp);
        free(fz);
        free(rp.section);
        free(rz.section);
    }
}

/* A broken Oodle0 section: data.error and an /info line saying why; the headers stay. */
static void test_broken_section_in_gr2(void **state)
{
    (void)state;
    struct fxg_opts o = {.sig = "le32-old", .version = 6, .nbones = 5, .oodle0_objects = true};
    struct fxg_result r;
    size_t size;
    uint8_t *f = fxg_build(&o, &size, &r);
    put_le(f + r.layout.data_offset[0] + 24, 256); /* stage 2's Dmax = 0 */
    struct s3fs *fs = open_mem(f, size, NULL, NULL);
    struct probe p = tree_probe(fs);
    uint8_t *buf;
    size_t len;
    assert_int_equal(p.read(p.ctx, "/granny/sections/0/data.error", &buf, &len), 0);
    assert_non_null(memmem(buf, len, "distance limit of 0", 19));
    free(buf);
    assert_int_equal(p.read(p.ctx, "/granny/sections/0/stored.bin", &buf, &len), 0);
    assert_int_equal(len, r.layout.data_size[0]);
    free(buf);
    ex_holds(&p, "/info", "section 0: oodle0");
    ex_holds(&p, "/info", "distance limit of 0");
    walk_all(fs, 100000);
    s3fs_close(fs);
    free(f);
    free(r.section);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_params),
        cmocka_unit_test(test_zero_stream_by_hand),
        cmocka_unit_test(test_one_stream_by_hand),
        cmocka_unit_test(test_round_trips),
        cmocka_unit_test(test_every_stop),
        cmocka_unit_test(test_tokens_across_stages),
        cmocka_unit_test(test_escape_off_and_on),
        cmocka_unit_test(test_large_models),
        cmocka_unit_test(test_rule_past_end),
        cmocka_unit_test(test_rule_distance),
        cmocka_unit_test(test_rule_match_past_stop),
        cmocka_unit_test(test_rule_parameters),
        cmocka_unit_test(test_rule_wide_distance),
        cmocka_unit_test(test_random_damage),
        cmocka_unit_test(test_objects_through_oodle0),
        cmocka_unit_test(test_broken_section_in_gr2),
    };
    return cmocka_run_group_tests_name("oodle0", tests, NULL, NULL);
}
