/* What the two Granny Oodle codecs share, and no more: the 36-byte prefix of three 12-byte
 * parameter blocks, the three stages split by the section header's stop values, and the
 * 65-symbol length alphabet (docs/formats/oodle0.md §1.1 and §6, oodle1.md §2).
 * Their entropy coders, models, literal contexts and distance splits differ: those stay in
 * oodle0.c (Granny compression 1) and oodle1.c (compression 2). */
#ifndef S3_OODLE_FRAME_H
#define S3_OODLE_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parse/base/err.h"

#define OODLE_PARAMS_SIZE 36 /* three 12-byte parameter blocks, then the stream */
#define OODLE_LEN_SYMBOLS 65 /* 0: a literal; 1 … 64: a match (oodle_match_len) */

/* One stage's parameter block: words 0 and 1 in the file's byte order, word 2's four bytes
 * as stored (each codec gives word 1 and word 2 its own meaning). */
struct oodle_block {
    uint32_t a, b;
    uint8_t c[4];
};

/* Reads the three blocks at the start of a section (p holds OODLE_PARAMS_SIZE bytes). */
void oodle_read_blocks(const uint8_t *p, bool big_endian, struct oodle_block out[3]);

/* Word 0, the same in both codecs: bits 0–8 the raw literal alphabet, bits 9–31 Dmax. */
static inline uint32_t oodle_block_lraw(const struct oodle_block *b)
{
    return b->a & 0x1FF;
}

static inline uint32_t oodle_block_dmax(const struct oodle_block *b)
{
    return b->a >> 9;
}

/* Output bytes of match length symbol t (1 … 64): t + 1 up to 61, then 128, 192, 256, 512. */
static inline uint32_t oodle_match_len(uint32_t t)
{
    static const uint32_t long_len[4] = {128, 192, 256, 512};
    return t <= 60 ? t + 1 : long_len[(t - 61) & 3];
}

/* Which stored byte of word 2 (c[0] … c[3]) limits the length model of context t (the
 * previous length symbol, 0 … 64): c[3 − t/16], and c[0] for t = 64. */
static inline unsigned oodle_len_byte(uint32_t t)
{
    return t < 64 ? 3 - t / 16 : 0;
}

/* Where each stage's output ends: stage k covers [end[k-1], end[k]) (end[-1] = 0). The stops
 * are clamped to the expanded size and stop1 to at least stop0; a stage with nothing to
 * produce is skipped. */
void oodle_stage_ends(uint32_t stop0, uint32_t stop1, uint32_t expanded, uint32_t end[3]);

/* The checks before any allocation: the caller's limit on the expanded size (0: none), and
 * room for the parameter blocks when there is output to make. S3_OK, or S3_ERR_LIMIT /
 * S3_ERR_RANGE with err naming the codec. */
enum s3_err oodle_check_frame(const char *codec, size_t in_len, uint32_t expanded, uint64_t max_expanded, char *err,
                              size_t errlen);

/* A decoding failure's reason: oodle_out_of_memory (the one string a failed allocation
 * gives, compared by address) is S3_ERR_NOMEM, any other S3_ERR_FORMAT. */
extern const char oodle_out_of_memory[];
enum s3_err oodle_fail_reason(const char *fail);

#endif
