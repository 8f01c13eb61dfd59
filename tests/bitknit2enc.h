/* A test-only BitKnit2 encoder, written from shared/formats/bitknit2.md (never linked
 * into the product). It runs the decoder's rules backwards: the models are simulated
 * forward to know each symbol's interval, then each quantum's primitives are rANS-coded
 * in reverse starting from the end state 65536, and the two final states are turned
 * into the initialisation words of section 4.2. Simple, not small: a greedy parse. */
#ifndef S3_BITKNIT2ENC_H
#define S3_BITKNIT2ENC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One step of a parse: len 1 is a literal (byte lit), len 2..8223 a match at distance dist. */
struct bk2enc_cmd {
    uint32_t len, dist;
    uint8_t lit;
};

struct bk2enc_opts {
    uint64_t stored_mask;    /* bit q: quantum q (in stream order) is a stored quantum */
    bool literals_only;      /* the greedy parse makes no matches */
    bool unchecked;          /* corruption tests: encode the parse even where it is invalid
                              * (distance before the start, a match past the end) */
};

/* What the encoder wrote: tests assert the features they meant to exercise were used. */
struct bk2enc_stats {
    uint64_t literals, short_matches, long_matches, reuses[8], buckets[21];
    uint64_t quanta, stored_quanta, spills; /* spill: a match ending past its quantum's end */
};

/* A greedy parse of data (malloc'd array, count returned). */
size_t bk2enc_parse(const uint8_t *data, size_t n, const struct bk2enc_opts *o, struct bk2enc_cmd **cmds);

/* Encodes data (n bytes) as the given parse says; the parse must describe data exactly
 * (the encoder aborts otherwise). Returns the malloc'd stream; *len its size. */
uint8_t *bk2enc_encode_parse(const uint8_t *data, size_t n, const struct bk2enc_cmd *cmds, size_t ncmds,
                             const struct bk2enc_opts *o, size_t *len, struct bk2enc_stats *st);

/* bk2enc_parse + bk2enc_encode_parse. */
uint8_t *bk2enc_encode(const uint8_t *data, size_t n, const struct bk2enc_opts *o, size_t *len,
                       struct bk2enc_stats *st);

/* The init words (a, b, [T refill], [X refill], Y word) that make states x and y; returns
 * how many (3..5). Both states must be in [65536, 2^32). */
int bk2enc_init_words(uint32_t x, uint32_t y, uint16_t w[5]);

#endif
