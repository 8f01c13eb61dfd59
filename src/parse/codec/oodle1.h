/* Oodle1 (Granny section compression 2): a clean-room decoder written from
 * docs/formats/oodle1.md. Pure: compressed bytes in, expanded bytes out. */
#ifndef S3_OODLE1_H
#define S3_OODLE1_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parse/base/err.h"

#include "parse/codec/oodle_frame.h"

#define OODLE1_PARAMS_SIZE OODLE_PARAMS_SIZE

struct oodle1_params {
    uint32_t lmax, dmax, lc, hc;
    uint8_t sizes[4];
};

/* Reads the three 12-byte parameter blocks (in the file's byte order). */
void oodle1_read_params(const uint8_t *p, bool big_endian, struct oodle1_params out[3]);

/* Expands `in` (a whole compressed section: parameters, then the stream) into
 * expanded_size bytes with the stage stops first16bit and first8bit. *out is malloc'd.
 * max_expanded (0: none) refuses larger sizes before allocating. S3_OK, or with err:
 * S3_ERR_LIMIT (over max_expanded), S3_ERR_RANGE (too short for the parameters),
 * S3_ERR_NOMEM, S3_ERR_FORMAT (a broken stream). */
enum s3_err oodle1_expand(const uint8_t *in, size_t in_len, bool big_endian, uint32_t first16bit, uint32_t first8bit,
                          uint32_t expanded_size, uint64_t max_expanded, uint8_t **out, char *err, size_t errlen);

#endif
