/* A test-only Oodle0 encoder (Granny compression 1), written from shared/formats/oodle0.md:
 * it builds sections for the decoder's tests and for generated GR2 files, and is never
 * part of the product. Its parts are built differently from the decoder's, so that the two
 * only agree through the format: a linear slot search (no Fenwick tree), the arithmetic
 * coder's renormalisation one bit at a time as the notes write it (no runs), its own
 * rescale and layout. It can also code token lists that break the format's rules (a
 * distance before the output start, a match past a stage stop, a literal above 255), for
 * the decoder's corruption tests. */
#ifndef S3_OODLE0ENC_H
#define S3_OODLE0ENC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A stage's parameters (§2). ulen[g]: the limit of length contexts 16g … 16g+15 (g = 3: 48 … 64). */
struct o0e_params {
    uint32_t lraw, dmax, ulit, uhi;
    uint8_t ulen[4];
};

/* sym 0: a literal byte `value`; sym 1 … 64: a match of that length symbol at distance `value`. */
struct o0e_token {
    uint8_t sym;
    uint32_t value;
};

/* What the encoder's models did (the decoder's mirror does the same to round-trip). */
struct o0e_stats {
    uint32_t stages_run, literals, matches, long_matches, overlaps, short_matches;
    uint32_t escapes, switch_offs, rescales, swaps, reenables, drops;
    uint32_t max_dist;
    uint64_t bits; /* stream bits written before the end's padding */
};

struct o0e_opts {
    bool big_endian;     /* parameter words and stream words byte-swapped (the notes' [unverified] reading) */
    uint32_t u_extra;    /* each U = the model's distinct symbols + u_extra (1: as the exporter; 0: the escape
                          * switches off when the last one arrives) */
    uint32_t lraw, dmax; /* 0: 256 and 262136, as in every real block */
    bool fixed_params;   /* code with params[] as given (tests of odd parameters) */
    struct o0e_params params[3];
    bool literals_only;  /* the tokenizer makes no matches */
};

/* Codes per-stage token lists into a section (36 parameter bytes + stream, whole 32-bit
 * words). NULL, with err, when a token cannot be coded (a new value the raw alphabet
 * cannot hold, or a model out of escapes). */
uint8_t *o0e_encode_tokens(const struct o0e_token *const tok[3], const size_t ntok[3], const struct o0e_opts *o,
                           size_t *out_len, struct o0e_stats *st, char *err, size_t errlen);

/* Splits in[0, n) into stages at stop0 / stop1 (clamped as the decoder does), parses each
 * greedily into literals and matches that never cross a stop, and codes them. st may be NULL. */
uint8_t *o0e_encode(const uint8_t *in, uint32_t n, uint32_t stop0, uint32_t stop1, const struct o0e_opts *o,
                    size_t *out_len, struct o0e_stats *st);

/* Match length of symbol s (1 … 64), as the notes' table. */
uint32_t o0e_len(uint32_t s);

#endif
