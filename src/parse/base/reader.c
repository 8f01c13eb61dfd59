#include "parse/base/reader.h"

#include <errno.h>
#include <string.h>

bool range_ok(uint64_t off, uint64_t len, uint64_t limit)
{
    return off <= limit && len <= limit - off;
}

enum s3_err src_read(const struct s3_src *src, uint64_t off, void *buf, size_t len)
{
    if (!range_ok(off, len, src->size))
        return S3_ERR_RANGE;
    if (len == 0)
        return S3_OK;
    return src->read(src->ctx, off, buf, len);
}

enum s3_err src_u32(const struct s3_src *src, uint64_t off, bool big_endian, uint32_t *out)
{
    uint8_t b[4];
    enum s3_err rc = src_read(src, off, b, 4);
    if (rc == S3_OK)
        *out = ld_u32(b, big_endian);
    return rc;
}

static enum s3_err mem_read(void *ctx, uint64_t off, void *buf, size_t len)
{
    const struct mem_src_ctx *m = ctx;
    if (!range_ok(off, len, m->size))
        return S3_ERR_RANGE;
    memcpy(buf, m->data + off, len);
    return S3_OK;
}

void mem_src_init(struct s3_src *src, struct mem_src_ctx *ctx, const void *data, uint64_t size)
{
    ctx->data = data;
    ctx->size = size;
    src->read = mem_read;
    src->ctx = ctx;
    src->size = size;
}

uint16_t ld_u16(const uint8_t *p, bool be)
{
    return be ? (uint16_t)(p[0] << 8 | p[1]) : (uint16_t)(p[1] << 8 | p[0]);
}

uint32_t ld_u32(const uint8_t *p, bool be)
{
    if (be)
        return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
    return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

float f32_of_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

float ld_f32(const uint8_t *p, bool be)
{
    return f32_of_bits(ld_u32(p, be));
}

uint64_t ld_u64(const uint8_t *p, bool be)
{
    uint64_t a = ld_u32(p, be), b = ld_u32(p + 4, be);
    return be ? (a << 32 | b) : (b << 32 | a);
}

void cur_init(struct cursor *c, const void *p, size_t len, bool big_endian)
{
    c->p = p;
    c->len = len;
    c->pos = 0;
    c->be = big_endian;
    c->err = false;
}

size_t cur_left(const struct cursor *c)
{
    return c->pos <= c->len ? c->len - c->pos : 0;
}

/* Returns a pointer to n readable bytes and advances, or NULL (and sets err). */
static const uint8_t *cur_take(struct cursor *c, size_t n)
{
    if (c->err || cur_left(c) < n) {
        c->err = true;
        return NULL;
    }
    const uint8_t *p = c->p + c->pos;
    c->pos += n;
    return p;
}

uint8_t cur_u8(struct cursor *c)
{
    const uint8_t *p = cur_take(c, 1);
    return p ? p[0] : 0;
}

uint16_t cur_u16(struct cursor *c)
{
    const uint8_t *p = cur_take(c, 2);
    return p ? ld_u16(p, c->be) : 0;
}

uint32_t cur_u32(struct cursor *c)
{
    const uint8_t *p = cur_take(c, 4);
    return p ? ld_u32(p, c->be) : 0;
}

int32_t cur_i32(struct cursor *c)
{
    return (int32_t)cur_u32(c);
}

uint64_t cur_u64(struct cursor *c)
{
    const uint8_t *p = cur_take(c, 8);
    return p ? ld_u64(p, c->be) : 0;
}

float cur_f32(struct cursor *c)
{
    return f32_of_bits(cur_u32(c));
}

void cur_bytes(struct cursor *c, void *out, size_t n)
{
    const uint8_t *p = cur_take(c, n);
    if (p)
        memcpy(out, p, n);
    else
        memset(out, 0, n);
}

void cur_skip(struct cursor *c, size_t n)
{
    (void)cur_take(c, n);
}
