/* Oodle0 (Granny section compression 1, the 2.0–2.2-era exporters): a clean-room decoder
 * written from docs/formats/oodle0.md. Pure: compressed bytes in, expanded bytes out.
 * The framing (parameter prefix, stages, length alphabet) is shared with Oodle1 through
 * oodle_frame.h; the coder and models are its own. */
#ifndef S3_OODLE0_H
#define S3_OODLE0_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parse/base/err.h"

#include "parse/codec/oodle_frame.h"

/* One stage's parameter block (§2). */
struct oodle0_params {
    uint32_t lraw; /* raw alphabet of a new literal (word 0 bits 0–8) */
    uint32_t dmax; /* distance clamp (word 0 bits 9–31) */
    uint32_t ulit; /* limit U of the literal model (word 1 bits 0–8) */
    uint32_t uhi;  /* limit U of the high-distance model (word 1 bits 9–31) */
    /* word 2 as a little-endian word's bytes 0 … 3: length context t has the limit
     * len_u[oodle_len_byte(t)] (byte 3 for contexts 0–15, … byte 0 for 48–64) */
    uint8_t len_u[4];
};

/* Reads the three parameter blocks (36 bytes, in the file's byte order). */
void oodle0_read_params(const uint8_t *p, bool big_endian, struct oodle0_params out[3]);

/* Expands `in` (a whole compressed section: parameters, then the stream) into
 * expanded_size bytes with the stage stops stop0 (First16Bit) and stop1 (First8Bit).
 * *out is malloc'd (expanded_size bytes, at least 1 allocated). max_expanded (0: none)
 * refuses larger sizes before allocating. Every rule of the notes' §7 that the input
 * breaks is an error naming the rule. S3_OK, or with err: S3_ERR_LIMIT (over
 * max_expanded), S3_ERR_RANGE (too short for the parameters), S3_ERR_NOMEM, S3_ERR_FORMAT
 * (a broken stream).
 * Big-endian files: every 32-bit word of the section is taken byte-swapped (Knit's reading;
 * no such file has been seen). */
enum s3_err oodle0_expand(const uint8_t *in, size_t in_len, bool big_endian, uint32_t stop0, uint32_t stop1,
                          uint32_t expanded_size, uint64_t max_expanded, uint8_t **out, char *err, size_t errlen);

/* What one expansion went through (the events of the notes' §4, over all models and stages),
 * for tests that must show that a path was taken. */
struct oodle0_counts {
    uint32_t escapes;     /* new symbols */
    uint32_t switch_offs; /* escapes switched off (a model holding U symbols) */
    uint32_t rescales;    /* halvings, and in them: */
    uint32_t drops;       /* symbols dropped (a count ≤ 1) */
    uint32_t swaps;       /* the most frequent moved to the start of its group */
    uint32_t reenables;   /* escapes switched back on */
    uint32_t max_slots;   /* the most live symbols one model held */
    uint32_t grows;       /* a model's slots doubled, its count tree rebuilt */
    uint32_t max_levels;  /* the deepest count tree (fan-out 16: 1 up to 16 slots, 4 up to 65536) */
};

/* oodle0_expand, filling *counts (NULL: not kept). */
enum s3_err oodle0_expand_counted(const uint8_t *in, size_t in_len, bool big_endian, uint32_t stop0,
                                  uint32_t stop1, uint32_t expanded_size, uint64_t max_expanded, uint8_t **out,
                                  char *err, size_t errlen, struct oodle0_counts *counts);

#endif
