/* RNC ProPack methods 1 and 2 (Rob Northen Compression): header, CRC-16, decoder.
 * Written from docs/formats/rnc.md. Pure: buffers in, buffer out. */
#ifndef S3_RNC_H
#define S3_RNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parse/base/err.h"

#define RNC_HEADER_SIZE 18

struct rnc_header {
    int method; /* 1 or 2 */
    bool dots;  /* "..." signature (Total Carnage variant of method 1) */
    uint32_t unpacked_size, packed_size;
    uint16_t unpacked_crc, packed_crc;
    uint8_t leeway, chunks;
};

struct rnc_options {
    bool has_key;
    uint16_t key;
    uint64_t max_unpacked; /* refuse larger headers before allocating; 0 = no limit */
};

uint16_t rnc_crc16(const uint8_t *p, size_t n);

/* Parses the 18-byte header of an item of `avail` bytes: S3_OK, or with err S3_ERR_RANGE
 * (cut), S3_ERR_FORMAT (no signature) or S3_ERR_UNSUPPORTED (another method). */
enum s3_err rnc_parse_header(const uint8_t *p, size_t avail, struct rnc_header *h, char *err, size_t errlen);

/* Decodes a whole item (header + payload, `avail` bytes). On success *out is a malloc'd
 * buffer of h.unpacked_size bytes. Both CRCs are checked. S3_OK, or with err: the
 * header's reasons, S3_ERR_LIMIT (over max_unpacked), S3_ERR_NOMEM, S3_ERR_UNSUPPORTED
 * (encrypted, no key), S3_ERR_FORMAT (a broken stream or a CRC mismatch). */
enum s3_err rnc_unpack(const uint8_t *item, size_t avail, const struct rnc_options *opt, uint8_t **out,
                       size_t *out_len, char *err, size_t errlen);

#endif
