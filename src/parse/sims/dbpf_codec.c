/* Package codecs (docs/formats/dbpf.md): zlib (The Sims 4) and RefPack (The Sims 3). The
 * compression word is not always right (tools write packages whose word says stored for
 * compressed bytes, or none at all), so the first bytes decide when they disagree. */
#include "parse/sims/dbpf_codec.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "parse/codec/refpack.h"

static bool looks_zlib(const uint8_t *h, size_t n)
{
    return n >= 2 && (h[0] & 0x0F) == 8 && ((h[0] << 8) | h[1]) % 31 == 0;
}

static const char *sniffed(int c)
{
    return c < 0 ? "no codec fits them" : c == DBPF_COMP_ZLIB ? "decoded as zlib (sniffed)"
           : c == DBPF_COMP_REFPACK                       ? "decoded as RefPack (sniffed)"
                                                          : "read as stored (sizes agree)";
}

int dbpf_codec_choose(const struct dbpf_entry *e, const uint8_t *h, size_t n, char *note, size_t notelen)
{
    if (notelen)
        note[0] = 0;
    bool same = e->stored_size == e->mem_size;
    if (e->extended) {
        uint16_t w = e->compression;
        if (w == DBPF_COMP_STORED && same)
            return w;
        if (w == DBPF_COMP_ZLIB && looks_zlib(h, n))
            return w;
        if ((w == DBPF_COMP_REFPACK || w == DBPF_COMP_STREAMABLE) && refpack_sniff(h, n))
            return w;
    } else if (same) {
        return DBPF_COMP_STORED;
    }
    int c = looks_zlib(h, n) ? DBPF_COMP_ZLIB : refpack_sniff(h, n) ? DBPF_COMP_REFPACK : same ? DBPF_COMP_STORED : -1;
    if (e->extended)
        snprintf(note, notelen, "compression word 0x%04x does not fit its bytes; %s", e->compression, sniffed(c));
    else if (c >= 0)
        snprintf(note, notelen, "no compression word; %s", sniffed(c));
    return c;
}

static enum s3_err inflate_exact(const uint8_t *in, size_t n, uint8_t *out, size_t want, char *err, size_t errlen)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit(&z) != Z_OK)
        return s3_fail(S3_ERR_NOMEM, err, errlen, "zlib: cannot start");
    z.next_in = (Bytef *)in;
    z.avail_in = (uInt)n;
    z.next_out = out;
    z.avail_out = (uInt)want + 1; /* one spare byte: a stream that goes on is caught */
    int rc = inflate(&z, Z_FINISH);
    size_t got = z.total_out;
    const char *msg = z.msg;
    enum s3_err e = S3_ERR_FORMAT;
    if (rc == Z_STREAM_END && got == want)
        e = S3_OK;
    else if (got > want)
        s3_fail(e, err, errlen, "zlib stream expands past the declared %zu bytes", want);
    else if (rc == Z_STREAM_END)
        s3_fail(e, err, errlen, "zlib stream ends after %zu of the declared %zu bytes", got, want);
    else if (rc == Z_BUF_ERROR)
        s3_fail(e, err, errlen, "zlib input ends early (%zu of %zu bytes out)", got, want);
    else
        s3_fail(e, err, errlen, "zlib: %s (after %zu bytes out)", msg ? msg : "corrupt stream", got);
    inflateEnd(&z);
    return e;
}

enum s3_err dbpf_expand(uint16_t codec, const uint8_t *in, size_t n, uint8_t *out, size_t want, char *err,
                        size_t errlen)
{
    if (codec == DBPF_COMP_ZLIB)
        return inflate_exact(in, n, out, want, err, errlen);
    if (codec == DBPF_COMP_REFPACK || codec == DBPF_COMP_STREAMABLE)
        return refpack_expand(in, n, out, want, err, errlen);
    return s3_fail(S3_ERR_UNSUPPORTED, err, errlen, "compression 0x%04x: no codec", codec);
}

/* ---- in pieces ---- */

/* zlib's allocations, counted (what a stream holds is measured, not assumed). */
struct z_count {
    size_t now, peak;
};

static voidpf z_counted_alloc(voidpf opaque, uInt items, uInt size)
{
    struct z_count *c = opaque;
    size_t n = (size_t)items * size;
    size_t *p = malloc(n + sizeof(size_t));
    if (!p)
        return Z_NULL;
    *p = n;
    c->now += n;
    if (c->now > c->peak)
        c->peak = c->now;
    return p + 1;
}

static void z_counted_free(voidpf opaque, voidpf address)
{
    struct z_count *c = opaque;
    size_t *p = (size_t *)address - 1;
    c->now -= *p;
    free(p);
}

/* A zlib stream's input and output pieces: 2 · DBPF_STREAM_PIECE, and zlib's own state. */
static enum s3_err inflate_stream(z_stream *z, uint8_t *ib, uint8_t *ob, stream_in_fn *in, void *ictx, uint64_t n,
                                  stream_out_fn *out, void *octx, uint64_t want, char *err, size_t errlen)
{
    uint64_t next = 0, got = 0;
    for (;;) {
        if (z->avail_in == 0 && next < n) {
            size_t k = n - next < DBPF_STREAM_PIECE ? (size_t)(n - next) : DBPF_STREAM_PIECE;
            if (in(ictx, next, ib, k))
                return s3_fail(S3_ERR_IO, err, errlen, "zlib input cannot be read");
            z->next_in = ib;
            z->avail_in = (uInt)k;
            next += k;
        }
        z->next_out = ob;
        z->avail_out = DBPF_STREAM_PIECE;
        int rc = inflate(z, Z_NO_FLUSH);
        size_t made = DBPF_STREAM_PIECE - z->avail_out;
        if (made > want - got)
            return s3_fail(S3_ERR_FORMAT, err, errlen, "zlib stream expands past the declared %llu bytes",
                           (unsigned long long)want);
        if (made && !out(octx, ob, made))
            return s3_fail(S3_ERR_LIMIT, err, errlen, "stopped");
        got += made;
        if (rc == Z_STREAM_END)
            return got == want ? S3_OK
                               : s3_fail(S3_ERR_FORMAT, err, errlen, "zlib stream ends after %llu of the declared %llu bytes",
                                         (unsigned long long)got, (unsigned long long)want);
        if (rc == Z_BUF_ERROR && z->avail_in == 0 && next == n)
            return s3_fail(S3_ERR_FORMAT, err, errlen, "zlib input ends early (%llu of %llu bytes out)",
                           (unsigned long long)got, (unsigned long long)want);
        if (rc != Z_OK && rc != Z_BUF_ERROR)
            return s3_fail(S3_ERR_FORMAT, err, errlen, "zlib: %s (after %llu bytes out)",
                           z->msg ? z->msg : "corrupt stream", (unsigned long long)got);
    }
}

static enum s3_err inflate_pieces(stream_in_fn *in, void *ictx, uint64_t n, stream_out_fn *out, void *octx,
                                  uint64_t want, size_t *held, char *err, size_t errlen)
{
    struct z_count count = {0};
    z_stream z;
    memset(&z, 0, sizeof z);
    z.zalloc = z_counted_alloc;
    z.zfree = z_counted_free;
    z.opaque = &count;
    uint8_t *ib = malloc(DBPF_STREAM_PIECE), *ob = malloc(DBPF_STREAM_PIECE);
    enum s3_err e;
    if (!ib || !ob || inflateInit(&z) != Z_OK) {
        e = s3_fail(S3_ERR_NOMEM, err, errlen, "zlib: cannot start");
        z.zfree = Z_NULL; /* never started: nothing to end */
    } else {
        e = inflate_stream(&z, ib, ob, in, ictx, n, out, octx, want, err, errlen);
    }
    if (z.zfree)
        inflateEnd(&z);
    *held = 2 * DBPF_STREAM_PIECE + count.peak;
    free(ib);
    free(ob);
    return e;
}

/* Stored bytes handed on as they are read, one piece at a time. */
static enum s3_err stored_pieces(stream_in_fn *in, void *ictx, uint64_t n, stream_out_fn *out, void *octx,
                                 uint64_t want, size_t *held, char *err, size_t errlen)
{
    if (n != want)
        return s3_fail(S3_ERR_FORMAT, err, errlen, "stored with %llu bytes for %llu", (unsigned long long)n,
                       (unsigned long long)want);
    uint8_t *b = malloc(DBPF_STREAM_PIECE);
    if (!b)
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    *held = DBPF_STREAM_PIECE;
    enum s3_err e = S3_OK;
    for (uint64_t at = 0; at < n && e == S3_OK;) {
        size_t k = n - at < DBPF_STREAM_PIECE ? (size_t)(n - at) : DBPF_STREAM_PIECE;
        if (in(ictx, at, b, k))
            e = s3_fail(S3_ERR_IO, err, errlen, "stored bytes cannot be read");
        else if (!out(octx, b, k))
            e = s3_fail(S3_ERR_LIMIT, err, errlen, "stopped");
        at += k;
    }
    free(b);
    return e;
}

enum s3_err dbpf_expand_stream(uint16_t codec, stream_in_fn *in, void *ictx, uint64_t n, stream_out_fn *out,
                               void *octx, uint64_t want, size_t *held, char *err, size_t errlen)
{
    *held = 0;
    if (codec == DBPF_COMP_STORED)
        return stored_pieces(in, ictx, n, out, octx, want, held, err, errlen);
    if (codec == DBPF_COMP_ZLIB)
        return inflate_pieces(in, ictx, n, out, octx, want, held, err, errlen);
    if (codec == DBPF_COMP_REFPACK || codec == DBPF_COMP_STREAMABLE) {
        *held = REFPACK_STREAM_HELD;
        return refpack_expand_stream(in, ictx, n, out, octx, want, err, errlen);
    }
    return s3_fail(S3_ERR_UNSUPPORTED, err, errlen, "compression 0x%04x: no codec", codec);
}
