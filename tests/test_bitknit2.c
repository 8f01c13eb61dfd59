/* BitKnit2: the initialisation primitive against the notes' example, the notes' debug
 * trace, round trips through the test encoder (random and structured inputs, every size
 * edge, stored quanta, spills, every distance bucket), and one test per hostile-input
 * rule of the notes' section 7. Expected bytes are the inputs the tests made, never the
 * decoder's own output. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bitknit2enc.h"
#include "parse/codec/bitknit2.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 11);
}

/* Decodes `stream` into n bytes; returns the buffer (NULL on error, err filled). */
static uint8_t *decode(const uint8_t *stream, size_t len, size_t n, struct bitknit2_stats *st, char *err)
{
    uint8_t *out = malloc(n ? n : 1);
    assert_non_null(out);
    if (bitknit2_decode(stream, len, out, n, st, err, 200)) {
        free(out);
        return NULL;
    }
    return out;
}

/* Encodes data, decodes it back and compares; returns the encoder's statistics. */
static struct bk2enc_stats roundtrip(const uint8_t *data, size_t n, const struct bk2enc_opts *o)
{
    struct bk2enc_stats st;
    size_t len;
    uint8_t *s = bk2enc_encode(data, n, o, &len, &st);
    char err[200] = "";
    struct bitknit2_stats ds;
    uint8_t *out = decode(s, len, n, &ds, err);
    if (!out)
        fail_msg("size %zu: %s", n, err);
    assert_memory_equal(out, data, n);
    assert_int_equal(ds.consumed, len); /* the encoder writes no padding */
    assert_int_equal(ds.quanta, st.quanta);
    assert_int_equal(ds.stored_quanta, st.stored_quanta);
    free(out);
    free(s);
    return st;
}

/* Section 4.2's example: a=0x0001, b=0x00D3, refill 0x4003, Y word 0x7E96. */
static void test_init_example(void **state)
{
    (void)state;
    const uint16_t w[] = {0x0001, 0x00D3, 0x4003, 0x7E96, 0xFFFF};
    uint32_t x, y;
    size_t used = 0;
    assert_int_equal(bitknit2_init_states(w, 5, &x, &y, &used), S3_OK);
    assert_int_equal(used, 4);
    assert_int_equal(x, 0x0201A800);
    assert_int_equal(y, 0x000B7E96);
    used = 99;
    assert_int_equal(bitknit2_init_states(w, 3, &x, &y, &used), S3_ERR_RANGE); /* runs out before the Y word */
    assert_int_equal(used, 99);
    assert_int_equal(bitknit2_init_states(w, 0, &x, &y, &used), S3_ERR_RANGE); /* no words at all */
    const uint16_t stored[] = {0, 1, 2, 3, 4};
    assert_int_equal(bitknit2_init_states(stored, 5, &x, &y, &used), S3_ERR_FORMAT); /* a stored quantum */
}

/* The steps of section 4.2 in 64-bit arithmetic, to check the decoder's 32-bit ones. */
static void init_reference(const uint16_t *w, uint64_t *x, uint64_t *y, int *used)
{
    int i = 0;
    uint64_t v = (uint64_t)w[i] * 65536 + w[i + 1];
    i += 2;
    uint64_t s = v % 16, t = v / 16;
    if (t < 65536)
        t = t * 65536 + w[i++];
    *x = t >> s;
    if (*x < 65536)
        *x = *x * 65536 + w[i++];
    *y = (1ull << (16 + s)) + (t % (1ull << s)) * 65536 + w[i++];
    *used = i;
}

/* Every branch of the initialisation (both refills or not, s from 0 to 15, extreme
 * words): the states come out as the 64-bit reference says, inside [65536, 2^32). */
static void test_init_states_range(void **state)
{
    (void)state;
    for (int i = 0; i < 20000; i++) {
        uint16_t w[5];
        for (int k = 0; k < 5; k++)
            w[k] = (uint16_t)rnd();
        if (i % 4 == 1)
            w[0] = 0xFFFF, w[1] = (uint16_t)(0xFFF0 | (i / 4 % 16));
        if (i % 4 == 2)
            w[0] = (uint16_t)(1 + i % 15), w[1] = (uint16_t)rnd(); /* T needs its refill */
        if (w[0] == 0)
            w[0] = 1;
        uint64_t rx, ry;
        int used;
        init_reference(w, &rx, &ry, &used);
        uint32_t x, y;
        size_t got = 0;
        assert_int_equal(bitknit2_init_states(w, 5, &x, &y, &got), S3_OK);
        assert_int_equal(got, used);
        assert_true(rx == x && ry == y);
        assert_true(x >= 65536 && y >= 65536 && ry < (1ull << 32));
        /* and the test encoder finds words for any pair of states */
        uint32_t ex = 65536 + rnd() * 1021u % 0xFFFEFFFFu, ey = 65536 + rnd() * 8191u % 0xFFFEFFFFu;
        if (i % 3 == 0)
            ex = 0xFFFFFFFFu - (uint32_t)(i & 7), ey = 65536 + (uint32_t)(i & 7);
        uint16_t ew[5];
        int n = bk2enc_init_words(ex, ey, ew);
        assert_int_equal(bitknit2_init_states(ew, (size_t)n, &x, &y, &got), S3_OK);
        assert_int_equal(got, n);
        assert_int_equal(x, ex);
        assert_int_equal(y, ey);
    }
}

/* The notes' debug trace starts from the example's states: first byte 0, then command
 * 261 (a match of 7) with reuse symbol 0 (distance 1), so output bytes 0..7 are zero and
 * the command ends exactly at 8. The trace's later words are not in the notes, so an
 * output of 8 bytes stops there and fails the final state check, at byte 8. */
static void test_trace_start(void **state)
{
    (void)state;
    const uint8_t s[] = {0xB1, 0x75, 0x01, 0x00, 0xD3, 0x00, 0x03, 0x40, 0x96, 0x7E,
                         0x34, 0x12, 0x34, 0x12, 0x34, 0x12, 0x34, 0x12};
    uint8_t out[8];
    memset(out, 0x55, sizeof out);
    char err[200] = "";
    struct bitknit2_stats st;
    assert_int_equal(bitknit2_decode(s, sizeof s, out, sizeof out, &st, err, sizeof err), S3_ERR_FORMAT);
    assert_non_null(strstr(err, "final state check failed at output byte 8"));
    assert_int_equal(st.produced, 8);
    for (int i = 0; i < 8; i++)
        assert_int_equal(out[i], 0);
}

static void test_sizes(void **state)
{
    (void)state;
    static const size_t sizes[] = {0, 1, 2, 3, 33, 34, 8223, 65535, 65536, 65537, 131072, 131073, 200000};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        size_t n = sizes[i];
        uint8_t *d = malloc(n ? n : 1);
        for (int kind = 0; kind < 4; kind++) {
            for (size_t k = 0; k < n; k++)
                d[k] = kind == 0   ? (uint8_t)rnd()
                       : kind == 1 ? 0
                       : kind == 2 ? (uint8_t)(k * 7 + k / 300)
                                   : (uint8_t)("the quick brown fox jumps "[(k / 3) % 26] ^ (rnd() % 50 == 0));
            struct bk2enc_opts o = {0};
            roundtrip(d, n, &o);
            o.literals_only = true;
            roundtrip(d, n, &o);
        }
        free(d);
    }
}

/* Many small random inputs built from literals and copies, so every model adapts many
 * times and the recent-distance list is used in all its places. */
static void test_random_small(void **state)
{
    (void)state;
    uint64_t reuses[8] = {0};
    for (int i = 0; i < 300; i++) {
        size_t n = rnd() % 6000;
        uint8_t *d = malloc(n + 1);
        for (size_t p = 0; p < n;) {
            if (p > 8 && rnd() % 3) {
                size_t g = 1 + rnd() % (p < 64 ? p : 64), m = 2 + rnd() % 40;
                if (rnd() % 4 == 0)
                    g = 1 + rnd() % p;
                for (size_t k = 0; k < m && p < n; k++, p++)
                    d[p] = d[p - g];
            } else {
                d[p++] = (uint8_t)(rnd() % (i % 5 == 0 ? 256 : 4));
            }
        }
        struct bk2enc_opts o = {0};
        struct bk2enc_stats st = roundtrip(d, n, &o);
        for (int r = 0; r < 8; r++)
            reuses[r] += st.reuses[r];
        free(d);
    }
    for (int r = 0; r < 8; r++)
        assert_true(reuses[r] > 0);
}

/* A parse executed by the test itself: literals given, matches copied byte by byte. */
struct script {
    struct bk2enc_cmd *c;
    size_t n, cap;
    uint8_t *data;
    size_t len, datacap;
};

static void sc_add(struct script *s, uint32_t len, uint32_t dist, uint8_t lit)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 1024;
        s->c = realloc(s->c, s->cap * sizeof *s->c);
    }
    if (s->len + len > s->datacap) {
        s->datacap = s->datacap ? 2 * s->datacap : 1 << 20;
        while (s->datacap < s->len + len)
            s->datacap *= 2;
        s->data = realloc(s->data, s->datacap);
    }
    assert_non_null(s->c);
    assert_non_null(s->data);
    s->c[s->n++] = (struct bk2enc_cmd){len, dist, lit};
    if (len == 1) {
        s->data[s->len++] = lit;
    } else {
        assert_true(dist <= s->len);
        for (uint32_t i = 0; i < len; i++, s->len++)
            s->data[s->len] = s->data[s->len - dist];
    }
}

/* Stored quanta: the first, one in the middle (with a match crossing into it), the last
 * (odd length), every one; and a compressed quantum after an odd stored one. */
static void test_stored_quanta(void **state)
{
    (void)state;
    size_t n = 5 * 65536 + 12345;
    uint8_t *d = malloc(n);
    for (size_t k = 0; k < n; k++)
        d[k] = k % 1000 < 600 ? (uint8_t)(k % 97) : (uint8_t)rnd();
    static const uint64_t masks[] = {1, 2, 4 | 16, 32, 0x3F, 1 | 4 | 32};
    for (size_t i = 0; i < sizeof masks / sizeof masks[0]; i++) {
        struct bk2enc_opts o = {.stored_mask = masks[i]};
        struct bk2enc_stats st = roundtrip(d, n, &o);
        assert_int_equal(st.quanta, 6);
        assert_int_equal(st.stored_quanta, __builtin_popcountll(masks[i]));
    }
    /* a match spills past 65536 so the next (stored) quantum starts at an odd position
     * and has an odd length; a compressed quantum follows it */
    struct script sc = {0};
    sc_add(&sc, 1, 0, 7);
    while (sc.len + 8223 <= 65536)
        sc_add(&sc, 8000, 1, 0);
    sc_add(&sc, 2000, 1, 0);
    assert_true(sc.len > 65536 && sc.len % 2 == 1);
    while (sc.len < 2 * 65536 + 100)
        sc_add(&sc, 1, 0, (uint8_t)rnd());
    struct bk2enc_opts o = {.stored_mask = 2}; /* quantum 1 starts where the spill ended */
    struct bk2enc_stats st;
    size_t len;
    uint8_t *s = bk2enc_encode_parse(sc.data, sc.len, sc.c, sc.n, &o, &len, &st);
    assert_int_equal(st.spills, 1);
    assert_int_equal(st.stored_quanta, 1);
    assert_int_equal(st.quanta, 3);
    char err[200];
    struct bitknit2_stats ds;
    uint8_t *out = decode(s, len, sc.len, &ds, err);
    assert_non_null(out);
    assert_memory_equal(out, sc.data, sc.len);
    assert_int_equal(ds.consumed, len);
    free(out);
    free(s);
    free(sc.c);
    free(sc.data);
    free(d);
}

/* Several MB: long matches spilling over quantum ends, a stored quantum, and a new
 * distance in every one of the 21 buckets (the largest needs 33 MB of output before
 * it), including the raw-word buckets 16..20 with non-zero high and low parts. */
static void test_every_bucket(void **state)
{
    (void)state;
    struct script s = {0};
    for (int i = 0; i < 5000; i++)
        sc_add(&s, 1, 0, (uint8_t)rnd());
    while (s.len < 36000000)
        sc_add(&s, 8000 + rnd() % 224, 5000 - rnd() % 2, 0);
    for (unsigned k = 0; k <= 20; k++) {
        uint32_t e = k < 16 ? (1u << k) / 3 : k == 16 ? 0x1234 : 0x11234; /* >= 17: high and low parts */
        uint32_t g = 32 * ((1u << k) - 1 + e) + 3 + (k * 5) % 29; /* never 1: that one is in the list */
        for (int i = 0; i < 3; i++)
            sc_add(&s, 1, 0, (uint8_t)rnd());
        sc_add(&s, 2 + k, g, 0);
        sc_add(&s, 40, g, 0); /* and again: now a reuse */
    }
    struct bk2enc_opts o = {.stored_mask = 1u << 7};
    struct bk2enc_stats st;
    size_t len;
    uint8_t *z = bk2enc_encode_parse(s.data, s.len, s.c, s.n, &o, &len, &st);
    for (int k = 0; k <= 20; k++)
        assert_true(st.buckets[k] > 0);
    assert_true(st.spills > 0 && st.long_matches > 0 && st.short_matches > 0 && st.stored_quanta == 1);
    assert_true(st.quanta > 500);
    char err[200] = "";
    struct bitknit2_stats ds;
    uint8_t *out = decode(z, len, s.len, &ds, err);
    if (!out)
        fail_msg("%s", err);
    assert_memory_equal(out, s.data, s.len);
    assert_int_equal(ds.consumed, len);
    free(out);
    free(z);
    /* a few MB through the greedy parse: 1 MB of noise, then copies of it from one
     * period back (a new distance of bucket 15, then reuses) */
    size_t n = 3u << 20, period = 1048576 + 77;
    uint8_t *d = malloc(n);
    for (size_t k = 0; k < n; k++)
        d[k] = k < period ? (uint8_t)rnd() : d[k - period];
    struct bk2enc_opts po = {0};
    st = roundtrip(d, n, &po);
    assert_true(st.buckets[15] > 0 && st.long_matches > 0);
    free(d);
    free(s.c);
    free(s.data);
}

/* ---- hostile input: one test per rule of section 7 ---- */

static uint8_t *encode_text_opts(size_t n, size_t *len, uint8_t **data, bool literals)
{
    uint8_t *d = malloc(n);
    for (size_t k = 0; k < n; k++)
        d[k] = (uint8_t)("abracadabra, said the wizard. "[k % 30] + (k % 211 == 0));
    struct bk2enc_opts o = {.literals_only = literals};
    uint8_t *s = bk2enc_encode(d, n, &o, len, NULL);
    *data = d;
    return s;
}

static uint8_t *encode_text(size_t n, size_t *len, uint8_t **data)
{
    return encode_text_opts(n, len, data, false);
}

static void expect_error(const uint8_t *s, size_t len, size_t n, const char *needle)
{
    char err[200] = "";
    uint8_t *out = decode(s, len, n, NULL, err);
    if (out)
        fail_msg("decoded, expected an error with \"%s\"", needle);
    if (!strstr(err, needle))
        fail_msg("error \"%s\" does not say \"%s\"", err, needle);
}

/* Rule 1: the magic; an empty output needs no stream. */
static void test_rule_magic(void **state)
{
    (void)state;
    size_t len;
    uint8_t *d, *s = encode_text(1000, &len, &d);
    char err[200];
    assert_int_equal(bitknit2_decode(NULL, 0, NULL, 0, NULL, err, sizeof err), 0);
    expect_error(s, 0, 1000, "no stream magic");
    expect_error(s, 1, 1000, "no stream magic");
    s[1] ^= 0x80;
    expect_error(s, len, 1000, "no stream magic");
    free(s);
    free(d);
}

/* Rule 2: every word and every stored byte inside the input; truncation anywhere is an
 * error, never a read past the end (ASan watches the exact-size copies). */
static void test_rule_overrun(void **state)
{
    (void)state;
    size_t len;
    uint8_t *d, *s = encode_text(70000, &len, &d);
    for (size_t cut = 2; cut < len; cut += (cut < 64 || len - cut < 64) ? 1 : 97) {
        uint8_t *t = malloc(cut);
        memcpy(t, s, cut);
        expect_error(t, cut, 70000, "input overrun");
        free(t);
    }
    /* a stored quantum whose bytes are not all there */
    struct bk2enc_opts o = {.stored_mask = 1};
    size_t slen;
    uint8_t *st = bk2enc_encode(d, 1000, &o, &slen, NULL);
    assert_int_equal(slen, 2 + 2 + 1000);
    expect_error(st, slen - 1, 1000, "stored quantum at output byte 0 needs 1000 bytes, 999 remain");
    expect_error(st, 3, 1000, "input overrun");
    free(st);
    free(s);
    free(d);
}

/* Rule 3: a distance before the output start, and a match longer than the room left. */
static void test_rule_distance_and_length(void **state)
{
    (void)state;
    uint8_t data[64] = {0};
    struct bk2enc_cmd c[8] = {{1, 0, 1}, {1, 0, 2}, {1, 0, 3}, {1, 0, 4}, {1, 0, 5}, {3, 9, 0}};
    for (int i = 0; i < 5; i++)
        data[i] = (uint8_t)(i + 1);
    struct bk2enc_opts o = {.unchecked = true};
    size_t len;
    uint8_t *s = bk2enc_encode_parse(data, 8, c, 6, &o, &len, NULL);
    expect_error(s, len, 8, "match distance 9 at output byte 5 reaches before the output start");
    free(s);
    c[5] = (struct bk2enc_cmd){30, 2, 0}; /* 30 bytes at 5 in an output of 12 */
    s = bk2enc_encode_parse(data, 12, c, 6, &o, &len, NULL);
    expect_error(s, len, 12, "match of 30 bytes at output byte 5 runs past the end (12 bytes)");
    free(s);
    /* (a reused distance was validated when it was new, and P only grows) */
}

/* Rule 4: both states exactly 65536 at the end of each compressed quantum. */
static void test_rule_final_state(void **state)
{
    (void)state;
    size_t len;
    uint8_t *d, *s = encode_text_opts(3000, &len, &d, true);
    /* the output is declared shorter than what was coded: the quantum ends early, with
     * the states mid-stream */
    expect_error(s, len, 1500, "final state check failed at output byte 1500 ");
    free(s);
    free(d);
    s = encode_text(3000, &len, &d);
    /* a changed last word: where it lands in bits a symbol or the state carries on, the
     * state check catches it (bits taken raw, e.g. a length, are not protected) */
    int state_errors = 0;
    for (int bit = 0; bit < 16; bit++) {
        uint8_t *t = malloc(len);
        memcpy(t, s, len);
        t[len - 1 - bit / 8] ^= (uint8_t)(1 << (bit % 8)); /* the last word: the end of the stream */
        char err[200] = "";
        uint8_t *out = decode(t, len, 3000, NULL, err);
        free(out);
        state_errors += strstr(err, "final state check failed") != NULL;
        free(t);
    }
    assert_true(state_errors > 0);
    free(s);
    free(d);
}

/* Rule 5: the size limit is applied before allocating; the stream's range must exist. */
static void test_rule_limits(void **state)
{
    (void)state;
    size_t len;
    uint8_t *d, *s = encode_text(5000, &len, &d);
    struct mem_src_ctx ctx;
    struct s3_src src;
    mem_src_init(&src, &ctx, s, len);
    uint8_t *out;
    char err[200];
    assert_int_equal(bitknit2_expand(&src, 0, len, 5000, 4999, &out, NULL, err, sizeof err), S3_ERR_LIMIT);
    assert_null(out);
    assert_non_null(strstr(err, "over the limit"));
    assert_int_equal(bitknit2_expand(&src, 0, len, 0xFFFFFFFFull * 16, 1ull << 30, &out, NULL, err, sizeof err),
                     S3_ERR_LIMIT);
    assert_int_equal(bitknit2_expand(&src, 1, len, 5000, 0, &out, NULL, err, sizeof err), S3_ERR_RANGE);
    assert_non_null(strstr(err, "runs past the end of its source"));
    struct bitknit2_stats st;
    assert_int_equal(bitknit2_expand(&src, 0, len, 5000, 5000, &out, &st, err, sizeof err), 0);
    assert_memory_equal(out, d, 5000);
    assert_int_equal(st.consumed, len);
    free(out);
    assert_int_equal(bitknit2_expand(&src, 0, 0, 0, 1, &out, NULL, err, sizeof err), 0); /* empty section */
    assert_non_null(out);
    free(out);
    free(s);
    free(d);
}

/* Everything at once: mutated and truncated streams decode or fail, never more. */
static void test_mutations(void **state)
{
    (void)state;
    size_t len;
    uint8_t *d, *s = encode_text(20000, &len, &d);
    uint8_t *out = malloc(20000);
    for (int i = 0; i < 3000; i++) {
        uint8_t *t = malloc(len);
        memcpy(t, s, len);
        int flips = 1 + (int)(rnd() % 4);
        for (int k = 0; k < flips; k++)
            t[2 + rnd() % (len - 2)] ^= (uint8_t)(1 + rnd() % 255);
        size_t cut = rnd() % 3 ? len : 2 + rnd() % (len - 2);
        char err[200] = "";
        struct bitknit2_stats st;
        enum s3_err rc = bitknit2_decode(t, cut, out, 20000, &st, err, sizeof err);
        assert_true(rc == S3_OK || ((rc == S3_ERR_FORMAT || rc == S3_ERR_RANGE) && err[0]));
        assert_true(st.produced <= 20000 && st.consumed <= cut);
        free(t);
    }
    free(out);
    free(s);
    free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_init_example),   cmocka_unit_test(test_init_states_range),
        cmocka_unit_test(test_trace_start),    cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_random_small),   cmocka_unit_test(test_stored_quanta),
        cmocka_unit_test(test_every_bucket),   cmocka_unit_test(test_rule_magic),
        cmocka_unit_test(test_rule_overrun),   cmocka_unit_test(test_rule_distance_and_length),
        cmocka_unit_test(test_rule_final_state), cmocka_unit_test(test_rule_limits),
        cmocka_unit_test(test_mutations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
