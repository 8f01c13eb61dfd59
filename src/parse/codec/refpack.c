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

/* A stream's state: unread input buf[lo, hi) (the stored bytes before `next` read), the
 * output's last REFPACK_WINDOW bytes (pos bytes out so far), and the opcode being carried
 * out (its literals left, then its copy). */
struct refpack_reader {
    stream_in_fn *in;
    void *ictx;
    uint64_t in_len, next, out_len;
    uint8_t *buf;
    size_t lo, hi;
    uint8_t *win;
    uint64_t pos;
    bool started, ended;
    enum s3_err e; /* once failed, every call fails the same */
    uint64_t op_at;
    size_t lit, copy, dist;
    bool end;
};

#define RP_BUF (REFPACK_STREAM_PIECE + 64)

struct refpack_reader *refpack_reader_new(stream_in_fn *in, void *ictx, uint64_t in_len, uint64_t out_len)
{
    struct refpack_reader *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    *r = (struct refpack_reader){.in = in, .ictx = ictx, .in_len = in_len, .out_len = out_len};
    r->buf = malloc(RP_BUF);
    r->win = malloc(REFPACK_WINDOW);
    if (!r->buf || !r->win) {
        refpack_reader_free(r);
        return NULL;
    }
    return r;
}

void refpack_reader_free(struct refpack_reader *r)
{
    if (r) {
        free(r->buf);
        free(r->win);
        free(r);
    }
}

/* At least k unread input bytes when the stored bytes have them (fewer at their end):
 * the count unread, or -1 when reading fails. */
static ptrdiff_t rp_fill(struct refpack_reader *s, size_t k)
{
    if (s->hi - s->lo >= k || s->next == s->in_len)
        return (ptrdiff_t)(s->hi - s->lo);
    memmove(s->buf, s->buf + s->lo, s->hi - s->lo);
    s->hi -= s->lo;
    s->lo = 0;
    uint64_t want = RP_BUF - s->hi;
    if (want > s->in_len - s->next)
        want = s->in_len - s->next;
    if (s->in(s->ictx, s->next, s->buf + s->hi, (size_t)want) != S3_OK)
        return -1;
    s->hi += (size_t)want;
    s->next += want;
    return (ptrdiff_t)(s->hi - s->lo);
}

/* Where the next unread input byte lies in the stored bytes. */
static uint64_t rp_at(const struct refpack_reader *s)
{
    return s->next - (s->hi - s->lo);
}

static enum s3_err rp_header(struct refpack_reader *s, char *err, size_t errlen)
{
    ptrdiff_t avail = rp_fill(s, 10);
    if (avail < 0)
        return s3_fail(S3_ERR_IO, err, errlen, "RefPack input cannot be read");
    struct refpack_header h;
    enum s3_err e = refpack_parse_header(s->buf + s->lo, (size_t)avail, &h, err, errlen);
    if (e != S3_OK)
        return e;
    if (h.expanded_size != s->out_len)
        return s3_fail(S3_ERR_FORMAT, err, errlen, "RefPack header declares %u bytes, %llu expected", h.expanded_size,
                       (unsigned long long)s->out_len);
    s->lo += h.length;
    s->started = true;
    return S3_OK;
}

/* Reads the next opcode (its checks those of refpack_expand, in the same order). */
static enum s3_err rp_op(struct refpack_reader *s, char *err, size_t errlen)
{
    uint64_t at = rp_at(s);
    ptrdiff_t avail = rp_fill(s, 4);
    if (avail < 0)
        return s3_fail(S3_ERR_IO, err, errlen, "RefPack input cannot be read");
    if (avail == 0)
        return s3_fail(S3_ERR_RANGE, err, errlen, "RefPack input ends at %llu with %llu of %llu bytes out",
                       (unsigned long long)at, (unsigned long long)s->pos, (unsigned long long)s->out_len);
    struct op o;
    if (!read_op(s->buf + s->lo, (size_t)avail, &o))
        return s3_fail(S3_ERR_RANGE, err, errlen, "RefPack opcode at %llu is cut short by the end of the input",
                       (unsigned long long)at);
    s->lo += o.bytes;
    uint64_t left = s->in_len - rp_at(s);
    if (o.lit > left)
        return s3_fail(S3_ERR_RANGE, err, errlen, "RefPack opcode at %llu: %zu literals, the input has %llu left",
                       (unsigned long long)at, o.lit, (unsigned long long)left);
    if (o.lit + o.copy > s->out_len - s->pos)
        return s3_fail(S3_ERR_FORMAT, err, errlen,
                       "RefPack opcode at %llu writes past the declared size (%llu + %zu > %llu)",
                       (unsigned long long)at, (unsigned long long)s->pos, o.lit + o.copy,
                       (unsigned long long)s->out_len);
    s->op_at = at, s->lit = o.lit, s->copy = o.copy, s->dist = o.dist, s->end = o.end;
    if (o.end)
        s->copy = 0;
    return S3_OK;
}

/* The opcode's literals are out: its copy may start (or the stream ends). */
static enum s3_err rp_after_literals(struct refpack_reader *s, char *err, size_t errlen)
{
    if (s->end) {
        s->ended = true;
        if (s->pos != s->out_len)
            return s3_fail(S3_ERR_FORMAT, err, errlen, "RefPack stream ends after %llu of %llu bytes",
                           (unsigned long long)s->pos, (unsigned long long)s->out_len);
    } else if (s->copy && s->dist > s->pos) {
        return s3_fail(S3_ERR_FORMAT, err, errlen, "RefPack opcode at %llu copies from %zu bytes back, only %llu are out",
                       (unsigned long long)s->op_at, s->dist, (unsigned long long)s->pos);
    }
    return S3_OK;
}

/* Makes up to cap bytes into out (and the window). */
static enum s3_err rp_step(struct refpack_reader *s, uint8_t *out, size_t cap, size_t *made, char *err, size_t errlen)
{
    const uint64_t mask = REFPACK_WINDOW - 1;
    enum s3_err e = S3_OK;
    *made = 0;
    if (!s->started && (e = rp_header(s, err, errlen)) != S3_OK)
        return e;
    while (*made < cap && e == S3_OK) {
        if (s->lit) { /* literals may run past the input read so far */
            ptrdiff_t avail = rp_fill(s, 1);
            if (avail <= 0)
                return s3_fail(S3_ERR_IO, err, errlen, "RefPack input cannot be read");
            while (s->lit && s->lo < s->hi && *made < cap) {
                out[(*made)++] = s->win[s->pos++ & mask] = s->buf[s->lo++];
                s->lit--;
            }
            if (!s->lit)
                e = rp_after_literals(s, err, errlen);
        } else if (s->copy) { /* byte by byte: a short distance repeats */
            for (; s->copy && *made < cap; s->copy--, s->pos++)
                out[(*made)++] = s->win[s->pos & mask] = s->win[(s->pos - s->dist) & mask];
        } else if (s->ended || s->pos == s->out_len) {
            break;
        } else if ((e = rp_op(s, err, errlen)) == S3_OK && !s->lit) {
            e = rp_after_literals(s, err, errlen);
        }
    }
    return e;
}

ptrdiff_t refpack_reader_next(struct refpack_reader *r, uint8_t *out, size_t cap, char *err, size_t errlen)
{
    if (r->e != S3_OK)
        return -(ptrdiff_t)r->e;
    size_t made;
    enum s3_err e = rp_step(r, out, cap, &made, err, errlen);
    if (e != S3_OK) {
        r->e = e;
        return -(ptrdiff_t)e;
    }
    return (ptrdiff_t)made;
}

enum s3_err stream_push_all(stream_next_fn *next, void *reader, uint8_t *piece, size_t cap, stream_out_fn *out,
                            void *octx, char *err, size_t errlen)
{
    enum s3_err e = S3_OK;
    for (ptrdiff_t n = 1; e == S3_OK && n > 0;) {
        n = next(reader, piece, cap, err, errlen);
        if (n < 0)
            e = (enum s3_err)-n;
        else if (n > 0 && !out(octx, piece, (size_t)n))
            e = s3_fail(S3_ERR_LIMIT, err, errlen, "stopped");
    }
    return e;
}

/* refpack_reader_next as a stream_next_fn (a call through another function type is
 * undefined). */
static ptrdiff_t rp_next(void *r, uint8_t *out, size_t cap, char *err, size_t errlen)
{
    return refpack_reader_next(r, out, cap, err, errlen);
}

enum s3_err refpack_expand_stream(stream_in_fn *in, void *ictx, uint64_t in_len, stream_out_fn *out, void *octx,
                                  uint64_t out_len, char *err, size_t errlen)
{
    struct refpack_reader *r = refpack_reader_new(in, ictx, in_len, out_len);
    uint8_t *piece = malloc(REFPACK_STREAM_PIECE);
    enum s3_err e;
    if (!r || !piece)
        e = s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory for the RefPack window");
    else
        e = stream_push_all(rp_next, r, piece, REFPACK_STREAM_PIECE, out, octx, err, errlen);
    free(piece);
    refpack_reader_free(r);
    return e;
}
