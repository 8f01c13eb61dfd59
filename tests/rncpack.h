/* A test-only RNC packer (methods 1 and 2): literals, literal runs and simple greedy
 * matches. It exists so tests can put compressed nodes into generated t2fs files; it is
 * never part of the product. */
#ifndef S3_RNCPACK_H
#define S3_RNCPACK_H

#include <stddef.h>
#include <stdint.h>

/* Returns a malloc'd RNC item (18-byte header + payload). chunk_tokens > 0 limits the
 * tokens per chunk (to exercise multi-chunk streams). */
uint8_t *rncpack(int method, const uint8_t *in, size_t n, unsigned chunk_tokens, size_t *out_len);
/* CRC-16/ARC, bit by bit (independent of the product's table). */
uint16_t rncpack_crc16(const uint8_t *p, size_t n);

#endif
