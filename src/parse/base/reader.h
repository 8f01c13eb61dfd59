/* Bounds-checked byte access, the only way a parser reads.
 * - struct s3_src: a read callback and the number of bytes that exist; src_read refuses
 *   (S3_ERR_RANGE) any range not wholly inside [0, size), overflow-safe, so a hostile
 *   offset never reaches the callback.
 * - struct cursor: a position in a buffer already read; every getter checks the length
 *   left, and a short read sets err and returns 0: read a whole record, test err once. */
#ifndef S3_READER_H
#define S3_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parse/base/err.h"

struct s3_src {
    /* Read exactly len bytes at off into buf: S3_OK, or the reason (IO, RANGE). */
    enum s3_err (*read)(void *ctx, uint64_t off, void *buf, size_t len);
    void *ctx;
    uint64_t size;
};

/* True when [off, off+len) lies inside [0, limit) without overflow. */
bool range_ok(uint64_t off, uint64_t len, uint64_t limit);

/* Reads [off, off+len) of src; RANGE when the range does not exist, IO when it cannot be
 * read. */
enum s3_err src_read(const struct s3_src *src, uint64_t off, void *buf, size_t len);

/* Reads one u32 at off in the given byte order (src_read's reasons). */
enum s3_err src_u32(const struct s3_src *src, uint64_t off, bool big_endian, uint32_t *out);

/* An s3_src over a memory buffer (tests, decompressed data). */
struct mem_src_ctx {
    const uint8_t *data;
    uint64_t size;
};
void mem_src_init(struct s3_src *src, struct mem_src_ctx *ctx, const void *data, uint64_t size);

uint16_t ld_u16(const uint8_t *p, bool big_endian);
uint32_t ld_u32(const uint8_t *p, bool big_endian);
uint64_t ld_u64(const uint8_t *p, bool big_endian);
/* The IEEE 754 single of 32 bits (as stored: no NaN or infinity refused), and the one
 * stored at p in the given byte order. */
float f32_of_bits(uint32_t u);
float ld_f32(const uint8_t *p, bool big_endian);

struct cursor {
    const uint8_t *p;
    size_t len;
    size_t pos;
    bool be;
    bool err;
};

void cur_init(struct cursor *c, const void *p, size_t len, bool big_endian);
uint8_t cur_u8(struct cursor *c);
uint16_t cur_u16(struct cursor *c);
uint32_t cur_u32(struct cursor *c);
int32_t cur_i32(struct cursor *c);
uint64_t cur_u64(struct cursor *c);
float cur_f32(struct cursor *c);
/* Copies n bytes out (or zero-fills and sets err when they are not there). */
void cur_bytes(struct cursor *c, void *out, size_t n);
void cur_skip(struct cursor *c, size_t n);
size_t cur_left(const struct cursor *c);

#endif
