/* BitKnit2 (Granny section compression 4): a clean-room decoder written from
 * docs/formats/bitknit2.md alone. Pure: compressed bytes in (a buffer, or a range of a
 * struct s3_src), expanded bytes out. The stream does not hold its output size: the
 * caller gives it (from the Granny section header or table count). */
#ifndef S3_BITKNIT2_H
#define S3_BITKNIT2_H

#include <stddef.h>
#include <stdint.h>

#include "parse/base/err.h"
#include "parse/base/reader.h"

#define BITKNIT2_MAGIC 0x75B1u   /* bytes B1 75 */
#define BITKNIT2_QUANTUM 65536u  /* each quantum ends at the next multiple of this */

/* What a successful (or failed) decode went through; for /info, tests and the bench. */
struct bitknit2_stats {
    size_t consumed;          /* input bytes read (the rest is padding the stream ignores) */
    uint32_t quanta, stored_quanta;
    uint64_t produced;        /* output bytes written before the end or the error */
};

/* Decodes the stream in[0, in_len) into exactly out_len bytes of out (the caller's
 * buffer). S3_OK, or with err saying which rule of the notes' section 7 failed and where:
 * S3_ERR_RANGE (the input ends first), S3_ERR_FORMAT (any other rule), S3_ERR_NOMEM.
 * out holds the bytes produced before an error. stats may be NULL. */
enum s3_err bitknit2_decode(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len,
                            struct bitknit2_stats *stats, char *err, size_t errlen);

/* Expands src[off, off+len) into out_size bytes (*out malloc'd, non-NULL even for 0
 * bytes). max_out (0: none) refuses larger sizes before anything is allocated; the
 * stored bytes are read through src, so their range must exist. S3_OK, or with err:
 * S3_ERR_LIMIT, S3_ERR_RANGE (the stream lies past src), S3_ERR_IO, and the decoder's. */
enum s3_err bitknit2_expand(const struct s3_src *src, uint64_t off, uint64_t len, uint64_t out_size,
                            uint64_t max_out, uint8_t **out, struct bitknit2_stats *stats, char *err, size_t errlen);

/* The quantum initialisation of section 4.2, exposed for tests: takes the words from
 * w[0..nw), sets the two states and *used to how many words it read (3, 4 or 5).
 * RANGE when w runs out, FORMAT when w[0] is 0 (a stored quantum, not an
 * initialisation); x, y and *used are untouched then. */
enum s3_err bitknit2_init_states(const uint16_t *w, size_t nw, uint32_t *x, uint32_t *y, size_t *used);

#endif
