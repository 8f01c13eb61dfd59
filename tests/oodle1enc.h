/* A test-only Oodle1 encoder: builds compressed sections for generated GR2 files. It is
 * never part of the product. Parameters are chosen so that no model ever fills up
 * (the escape stays available), which keeps the encoder simple. */
#ifndef S3_OODLE1ENC_H
#define S3_OODLE1ENC_H

#include <stddef.h>
#include <stdint.h>

#include <stdbool.h>

/* Returns a malloc'd compressed section (36 bytes of parameters + stream). The
 * parameter words are written in the file's byte order (big_endian for BE files). */
uint8_t *oodle1_encode(const uint8_t *in, uint32_t n, uint32_t first16bit, uint32_t first8bit, bool big_endian,
                       size_t *out_len);

#endif
