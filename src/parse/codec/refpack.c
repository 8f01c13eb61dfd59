#include "parse/codec/refpack.h"

#include <stdio.h>
#include <string.h>

bool refpack_sniff(const uint8_t *p, size_t len)
{
    return len >= 2 && p[1] == 0xFB;
}

static uint32_t be_size(const uint8_t *p, size_t width)
{
    uint32_t v = 0;
    for (size_t i = 0; i < width; i++)
        v = v << 8 | p[i];
    return v;
}

enum s3_err refpack_parse_header(const uint8_t *p, size_t len, struct refpack_header *h, char *err, size_t errlen)
{
    memset(h, 0, sizeof *h);
    if (!refpack_sniff(p, len))
        return s3_fail(S3_ERR_FORMAT, err, errlen, "not a RefPack stream (second byte is not 0xFB)");
    h->flags = p[0];
    size_t width = (h->flags & 0x80) ? 4 : 3;
    h->has_stored_size = h->flags & 0x01;
    h->length = 2 + width * (h->has_stored_size ? 2 : 1);
    if (len < h->length)
        return s3_fail(S3_ERR_RANGE, err, errlen, "RefPack header needs %zu bytes, the stream has %zu", h->length, len);
    if (h->has_stored_size) {
        h->stored_size = be_size(p + 2, width);
        h->expanded_size = be_size(p + 2 + width, width);
    } else {
        h->expanded_size = be_size(p + 2, width);
    }
    return S3_OK;
}

/* One opcode, decoded: L literals follow it, then N bytes copied from D back. */
struct op {
    size_t bytes; /* of the opcode itself */
    size_t lit, copy, dist;
    bool end;
};

/* Decodes the opcode at p (avail bytes there). False when it is cut short. */
static bool read_op(const uint8_t *p, size_t avail, struct op *o)
{
    uint8_t b0 = p[0];
    memset(o, 0, sizeof *o);
    if (b0 < 0x80) {
        o->bytes = 2;
        if (avail < 2)
            return false;
        o->lit = b0 & 3;
        o->copy = ((b0 >> 2) & 7) + 3;
        o->dist = ((size_t)(b0 & 0x60) << 3) + p[1] + 1;
    } else if (b0 < 0xC0) {
        o->bytes = 3;
        if (avail < 3)
            return false;
        o->lit = p[1] >> 6;
        o->copy = (b0 & 0x3F) + 4;
        o->dist = ((size_t)(p[1] & 0x3F) << 8) + p[2] + 1;
    } else if (b0 < 0xE0) {
        o->bytes = 4;
        if (avail < 4)
            return false;
        o->lit = b0 & 3;
        o->copy = ((size_t)(b0 & 0x0C) << 6) + p[3] + 5;
        o->dist = ((size_t)(b0 & 0x10) << 12) + ((size_t)p[1] << 8) + p[2] + 1;
    } else if (b0 < 0xFC) {
        o->bytes = 1;
        o->lit = ((size_t)(b0 & 0x1F) + 1) * 4;
    } else {
        o->bytes = 1;
        o->lit = b0 & 3;
        o->end = true;
    }
    return true;
}

enum s3_err refpack_expand(const uint8_t *p, size_t len, uint8_t *out, size_t out_len, char *err, size_t errlen)
{
    struct refpack_header h;
    enum s3_err e = refpack_parse_header(p, len, &h, err, errlen);
    if (e != S3_OK)
        return e;
    if (h.expanded_size != out_len)
        return s3_fail(S3_ERR_FORMAT, err, errlen, "RefPack header declares %u bytes, %zu expected", h.expanded_size,
                       out_len);
    size_t in = h.length, pos = 0;
    while (pos < out_len) {
        if (in >= len)
            return s3_fail(S3_ERR_RANGE, err, errlen, "RefPack input ends at %zu with %zu of %zu bytes out", in, pos,
                           out_len);
        struct op o;
        if (!read_op(p + in, len - in, &o))
            return s3_fail(S3_ERR_RANGE, err, errlen, "RefPack opcode at %zu is cut short by the end of the input", in);
        size_t at = in;
        in += o.bytes;
        if (o.lit > len - in)
            return s3_fail(S3_ERR_RANGE, err, errlen, "RefPack opcode at %zu: %zu literals, the input has %zu left",
                           at, o.lit, len - in);
        if (o.lit + o.copy > out_len - pos)
            return s3_fail(S3_ERR_FORMAT, err, errlen,
                           "RefPack opcode at %zu writes past the declared size (%zu + %zu > %zu)", at, pos,
                           o.lit + o.copy, out_len);
        memcpy(out + pos, p + in, o.lit);
        in += o.lit;
        pos += o.lit;
        if (o.end)
            break;
        if (o.dist > pos)
            return s3_fail(S3_ERR_FORMAT, err, errlen,
                           "RefPack opcode at %zu copies from %zu bytes back, only %zu are out", at, o.dist, pos);
        /* byte by byte: a distance shorter than the length repeats a pattern */
        const uint8_t *from = out + pos - o.dist;
        if (o.dist >= o.copy)
            memcpy(out + pos, from, o.copy);
        else
            for (size_t i = 0; i < o.copy; i++)
                out[pos + i] = from[i];
        pos += o.copy;
    }
    if (pos != out_len)
        return s3_fail(S3_ERR_FORMAT, err, errlen, "RefPack stream ends after %zu of %zu bytes", pos, out_len);
    return S3_OK;
}
