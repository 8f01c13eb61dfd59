#include "parse/codec/refpack.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
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

/* ---- the same, in pieces ---- */

/* A stream's state: unread input buf[lo, hi) (the stored bytes before `next` read), and
 * the output's last REFPACK_WINDOW bytes, of which [flushed, pos) are not handed on. */
struct rp_stream {
    stream_in_fn *in;
    void *ictx;
    uint64_t in_len, next;
    uint8_t *buf;
    size_t lo, hi;
    stream_out_fn *out;
    void *octx;
    uint8_t *win;
    uint64_t pos, flushed;
};

#define RP_BUF (REFPACK_STREAM_PIECE + 64)

/* At least k unread input bytes when the stored bytes have them (fewer at their end):
 * the count unread, or -1 when reading fails. */
static ptrdiff_t rp_fill(struct rp_stream *s, size_t k)
{
    if (s->hi - s->lo >= k || s->next == s->in_len)
        return (ptrdiff_t)(s->hi - s->lo);
    memmove(s->buf, s->buf + s->lo, s->hi - s->lo);
    s->hi -= s->lo;
    s->lo = 0;
    uint64_t want = RP_BUF - s->hi;
    if (want > s->in_len - s->next)
        want = s->in_len - s->next;
    if (s->in(s->ictx, s->next, s->buf + s->hi, (size_t)want))
        return -1;
    s->hi += (size_t)want;
    s->next += want;
    return (ptrdiff_t)(s->hi - s->lo);
}

/* Where the next unread input byte lies in the stored bytes. */
static uint64_t rp_at(const struct rp_stream *s)
{
    return s->next - (s->hi - s->lo);
}

/* Hands on whole pieces (all that is left when `all`): false when out stopped. Pieces
 * start at multiples of the piece size, which divides the window: none wraps. */
static bool rp_flush(struct rp_stream *s, bool all)
{
    while (s->pos - s->flushed >= REFPACK_STREAM_PIECE || (all && s->pos > s->flushed)) {
        uint64_t n = s->pos - s->flushed < REFPACK_STREAM_PIECE ? s->pos - s->flushed : REFPACK_STREAM_PIECE;
        if (!s->out(s->octx, s->win + (s->flushed & (REFPACK_WINDOW - 1)), (size_t)n))
            return false;
        s->flushed += n;
    }
    return true;
}

static enum s3_err rp_run(struct rp_stream *s, uint64_t out_len, char *err, size_t errlen)
{
    const uint64_t mask = REFPACK_WINDOW - 1;
    ptrdiff_t avail = rp_fill(s, 10);
    if (avail < 0)
        return s3_fail(S3_ERR_IO, err, errlen, "RefPack input cannot be read");
    struct refpack_header h;
    enum s3_err e = refpack_parse_header(s->buf + s->lo, (size_t)avail, &h, err, errlen);
    if (e != S3_OK)
        return e;
    if (h.expanded_size != out_len)
        return s3_fail(S3_ERR_FORMAT, err, errlen, "RefPack header declares %u bytes, %llu expected", h.expanded_size,
                       (unsigned long long)out_len);
    s->lo += h.length;
    while (s->pos < out_len) {
        uint64_t at = rp_at(s);
        if ((avail = rp_fill(s, 4)) < 0)
            return s3_fail(S3_ERR_IO, err, errlen, "RefPack input cannot be read");
        if (avail == 0)
            return s3_fail(S3_ERR_RANGE, err, errlen, "RefPack input ends at %llu with %llu of %llu bytes out",
                           (unsigned long long)at, (unsigned long long)s->pos, (unsigned long long)out_len);
        struct op o;
        if (!read_op(s->buf + s->lo, (size_t)avail, &o))
            return s3_fail(S3_ERR_RANGE, err, errlen, "RefPack opcode at %llu is cut short by the end of the input",
                           (unsigned long long)at);
        s->lo += o.bytes;
        uint64_t left = s->in_len - rp_at(s);
        if (o.lit > left)
            return s3_fail(S3_ERR_RANGE, err, errlen, "RefPack opcode at %llu: %zu literals, the input has %llu left",
                           (unsigned long long)at, o.lit, (unsigned long long)left);
        if (o.lit + o.copy > out_len - s->pos)
            return s3_fail(S3_ERR_FORMAT, err, errlen,
                           "RefPack opcode at %llu writes past the declared size (%llu + %zu > %llu)",
                           (unsigned long long)at, (unsigned long long)s->pos, o.lit + o.copy,
                           (unsigned long long)out_len);
        for (size_t k = 0; k < o.lit;) { /* literals may run past the input read so far */
            if ((avail = rp_fill(s, o.lit - k)) <= 0)
                return s3_fail(S3_ERR_IO, err, errlen, "RefPack input cannot be read");
            for (; k < o.lit && s->lo < s->hi; k++)
                s->win[s->pos++ & mask] = s->buf[s->lo++];
        }
        if (o.end)
            break;
        if (o.dist > s->pos)
            return s3_fail(S3_ERR_FORMAT, err, errlen,
                           "RefPack opcode at %llu copies from %zu bytes back, only %llu are out",
                           (unsigned long long)at, o.dist, (unsigned long long)s->pos);
        for (size_t k = 0; k < o.copy; k++, s->pos++) /* byte by byte: a short distance repeats */
            s->win[s->pos & mask] = s->win[(s->pos - o.dist) & mask];
        if (!rp_flush(s, false))
            return s3_fail(S3_ERR_LIMIT, err, errlen, "stopped");
    }
    if (s->pos != out_len)
        return s3_fail(S3_ERR_FORMAT, err, errlen, "RefPack stream ends after %llu of %llu bytes",
                       (unsigned long long)s->pos, (unsigned long long)out_len);
    return rp_flush(s, true) ? S3_OK : s3_fail(S3_ERR_LIMIT, err, errlen, "stopped");
}

enum s3_err refpack_expand_stream(stream_in_fn *in, void *ictx, uint64_t in_len, stream_out_fn *out, void *octx,
                                  uint64_t out_len, char *err, size_t errlen)
{
    struct rp_stream s = {.in = in, .ictx = ictx, .in_len = in_len, .out = out, .octx = octx};
    s.buf = malloc(RP_BUF);
    s.win = malloc(REFPACK_WINDOW);
    enum s3_err e = s.buf && s.win ? rp_run(&s, out_len, err, errlen)
                                   : s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory for the RefPack window");
    free(s.buf);
    free(s.win);
    return e;
}
