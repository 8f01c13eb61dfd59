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

struct dbpf_reader {
    uint16_t codec;
    stream_in_fn *in;
    void *ictx;
    uint64_t n, want, got, next; /* stored bytes, expanded bytes; made so far, read so far */
    enum s3_err e;               /* once failed, every call fails the same */
    char err[200];
    struct refpack_reader *rp;
    z_stream z;
    bool z_live, z_end;
    struct z_count count;
    uint8_t *ib; /* zlib's input piece */
};

static ptrdiff_t reader_fail(struct dbpf_reader *r, enum s3_err e, char *err, size_t errlen)
{
    r->e = e;
    snprintf(err, errlen, "%s", r->err);
    return -(ptrdiff_t)e;
}

struct dbpf_reader *dbpf_reader_new(uint16_t codec, stream_in_fn *in, void *ictx, uint64_t n, uint64_t want)
{
    struct dbpf_reader *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->codec = codec, r->in = in, r->ictx = ictx, r->n = n, r->want = want;
    bool ok = true;
    if (codec == DBPF_COMP_ZLIB) {
        r->z.zalloc = z_counted_alloc;
        r->z.zfree = z_counted_free;
        r->z.opaque = &r->count;
        r->ib = malloc(DBPF_STREAM_PIECE);
        r->z_live = r->ib && inflateInit(&r->z) == Z_OK;
        ok = r->z_live;
    } else if (codec == DBPF_COMP_REFPACK || codec == DBPF_COMP_STREAMABLE) {
        r->rp = refpack_reader_new(in, ictx, n, want);
        ok = r->rp != NULL;
    } else if (codec != DBPF_COMP_STORED) {
        r->e = s3_fail(S3_ERR_UNSUPPORTED, r->err, sizeof r->err, "compression 0x%04x: no codec", codec);
    } else if (n != want) {
        r->e = s3_fail(S3_ERR_FORMAT, r->err, sizeof r->err, "stored with %llu bytes for %llu",
                       (unsigned long long)n, (unsigned long long)want);
    }
    if (!ok) {
        dbpf_reader_free(r);
        return NULL;
    }
    return r;
}

void dbpf_reader_free(struct dbpf_reader *r)
{
    if (!r)
        return;
    if (r->z_live)
        inflateEnd(&r->z);
    free(r->ib);
    refpack_reader_free(r->rp);
    free(r);
}

size_t dbpf_reader_held(const struct dbpf_reader *r)
{
    size_t own = sizeof *r + (r->ib ? DBPF_STREAM_PIECE : 0) + r->count.peak;
    return own + (r->rp ? REFPACK_WINDOW + REFPACK_STREAM_PIECE + 64 + 256 : 0);
}

/* zlib: up to cap bytes; past the declared size one spare byte is asked for, so a stream
 * that goes on is caught, and its end is checked. */
static ptrdiff_t inflate_next(struct dbpf_reader *r, uint8_t *out, size_t cap, char *err, size_t errlen)
{
    size_t made = 0;
    while (made < cap && !r->z_end) {
        if (r->z.avail_in == 0 && r->next < r->n) {
            size_t k = r->n - r->next < DBPF_STREAM_PIECE ? (size_t)(r->n - r->next) : DBPF_STREAM_PIECE;
            if (r->in(r->ictx, r->next, r->ib, k) != S3_OK) {
                s3_fail(S3_ERR_IO, r->err, sizeof r->err, "zlib input cannot be read");
                return reader_fail(r, S3_ERR_IO, err, errlen);
            }
            r->z.next_in = r->ib;
            r->z.avail_in = (uInt)k;
            r->next += k;
        }
        uint8_t spare;
        bool past = r->got == r->want;
        size_t room = past ? 1 : cap - made < r->want - r->got ? cap - made : (size_t)(r->want - r->got);
        r->z.next_out = past ? &spare : out + made;
        r->z.avail_out = (uInt)room;
        int rc = inflate(&r->z, Z_NO_FLUSH);
        size_t produced = room - r->z.avail_out;
        if (past && produced) {
            s3_fail(S3_ERR_FORMAT, r->err, sizeof r->err, "zlib stream expands past the declared %llu bytes",
                    (unsigned long long)r->want);
            return reader_fail(r, S3_ERR_FORMAT, err, errlen);
        }
        r->got += produced;
        made += produced;
        if (rc == Z_STREAM_END) {
            r->z_end = true;
            if (r->got != r->want) {
                s3_fail(S3_ERR_FORMAT, r->err, sizeof r->err, "zlib stream ends after %llu of the declared %llu bytes",
                        (unsigned long long)r->got, (unsigned long long)r->want);
                return reader_fail(r, S3_ERR_FORMAT, err, errlen);
            }
        } else if (rc == Z_BUF_ERROR && r->z.avail_in == 0 && r->next == r->n) {
            s3_fail(S3_ERR_FORMAT, r->err, sizeof r->err, "zlib input ends early (%llu of %llu bytes out)",
                    (unsigned long long)r->got, (unsigned long long)r->want);
            return reader_fail(r, S3_ERR_FORMAT, err, errlen);
        } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
            s3_fail(S3_ERR_FORMAT, r->err, sizeof r->err, "zlib: %s (after %llu bytes out)",
                    r->z.msg ? r->z.msg : "corrupt stream", (unsigned long long)r->got);
            return reader_fail(r, S3_ERR_FORMAT, err, errlen);
        }
    }
    return (ptrdiff_t)made;
}

ptrdiff_t dbpf_reader_next(struct dbpf_reader *r, uint8_t *out, size_t cap, char *err, size_t errlen)
{
    if (r->e != S3_OK)
        return reader_fail(r, r->e, err, errlen);
    if (r->codec == DBPF_COMP_ZLIB)
        return inflate_next(r, out, cap, err, errlen);
    if (r->rp) {
        ptrdiff_t k = refpack_reader_next(r->rp, out, cap, r->err, sizeof r->err);
        if (k < 0)
            return reader_fail(r, (enum s3_err)-k, err, errlen);
        r->got += (uint64_t)k;
        return k;
    }
    size_t k = r->n - r->got < cap ? (size_t)(r->n - r->got) : cap; /* stored: as read */
    if (k && r->in(r->ictx, r->got, out, k) != S3_OK) {
        s3_fail(S3_ERR_IO, r->err, sizeof r->err, "stored bytes cannot be read");
        return reader_fail(r, S3_ERR_IO, err, errlen);
    }
    r->got += k;
    return (ptrdiff_t)k;
}

/* dbpf_reader_next as a stream_next_fn (a call through another function type is
 * undefined). */
static ptrdiff_t reader_next(void *r, uint8_t *out, size_t cap, char *err, size_t errlen)
{
    return dbpf_reader_next(r, out, cap, err, errlen);
}

enum s3_err dbpf_expand_stream(uint16_t codec, stream_in_fn *in, void *ictx, uint64_t n, stream_out_fn *out,
                               void *octx, uint64_t want, size_t *held, char *err, size_t errlen)
{
    struct dbpf_reader *r = dbpf_reader_new(codec, in, ictx, n, want);
    uint8_t *piece = malloc(DBPF_STREAM_PIECE);
    enum s3_err e;
    *held = 0;
    if (!r || !piece)
        e = s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory for the decoder");
    else
        e = stream_push_all(reader_next, r, piece, DBPF_STREAM_PIECE, out, octx, err, errlen);
    if (r)
        *held = dbpf_reader_held(r) + DBPF_STREAM_PIECE;
    free(piece);
    dbpf_reader_free(r);
    return e;
}

/* ---- comparing two entries' bytes ---- */

/* An entry's stored bytes as a stream_in_fn reads them. */
struct stored_in {
    const struct s3_src *src;
    uint64_t base;
};

static enum s3_err stored_read(void *ctx, uint64_t off, uint8_t *buf, size_t len)
{
    const struct stored_in *s = ctx;
    return src_read(s->src, s->base + off, buf, len);
}

/* The codec the view decodes e with and its expanded size: S3_OK, or why it has none with
 * err (FORMAT: a state other than DBPF_OK; IO: its first bytes cannot be read;
 * UNSUPPORTED: no codec fits; LIMIT: over max_unpacked). */
static enum s3_err entry_codec(const struct s3_src *src, const struct dbpf_entry *e, uint64_t max_unpacked,
                               uint16_t *codec, uint64_t *size, char *err, size_t errlen)
{
    uint8_t head[2] = {0};
    size_t hn = e->stored_size < 2 ? e->stored_size : 2;
    char note[200];
    if (e->state != DBPF_OK)
        return s3_fail(S3_ERR_FORMAT, err, errlen, "a record without bytes (state %u)", e->state);
    enum s3_err rc = src_read(src, e->offset, head, hn);
    if (rc)
        return s3_fail(rc, err, errlen, "stored bytes cannot be read");
    int c = dbpf_codec_choose(e, head, hn, note, sizeof note);
    if (c < 0)
        return s3_fail(S3_ERR_UNSUPPORTED, err, errlen, "compression 0x%04x: no codec fits", e->compression);
    *codec = (uint16_t)c;
    *size = c == DBPF_COMP_STORED ? e->stored_size : e->mem_size;
    if (c != DBPF_COMP_STORED && e->mem_size > max_unpacked)
        return s3_fail(S3_ERR_LIMIT, err, errlen, "declared expanded size %u is over the limit", e->mem_size);
    return S3_OK;
}

/* Exactly n bytes from r: S3_OK, or the reason with err (FORMAT when the stream ends
 * before). */
static enum s3_err pull(struct dbpf_reader *r, uint8_t *buf, size_t n, char *err, size_t errlen)
{
    size_t got = 0;
    while (got < n) {
        ptrdiff_t k = dbpf_reader_next(r, buf + got, n - got, err, errlen);
        if (k < 0)
            return (enum s3_err)-k;
        if (k == 0)
            return s3_fail(S3_ERR_FORMAT, err, errlen, "a stream ends before its declared size");
        got += (size_t)k;
    }
    return S3_OK;
}

/* Both entries' stored bytes, n each, compared piece by piece: S3_OK with *same, or the
 * reason they cannot be read. */
static enum s3_err same_stored(const struct s3_src *sa, uint64_t oa, const struct s3_src *sb, uint64_t ob,
                               uint64_t n, uint8_t *x, uint8_t *y, bool *same, char *err, size_t errlen)
{
    *same = true;
    for (uint64_t off = 0; off < n; off += DBPF_STREAM_PIECE) {
        size_t k = n - off < DBPF_STREAM_PIECE ? (size_t)(n - off) : DBPF_STREAM_PIECE;
        enum s3_err rc = src_read(sa, oa + off, x, k);
        if (rc == S3_OK)
            rc = src_read(sb, ob + off, y, k);
        if (rc)
            return s3_fail(rc, err, errlen, "stored bytes cannot be read");
        if (memcmp(x, y, k) != 0) {
            *same = false;
            return S3_OK;
        }
    }
    return S3_OK;
}

/* Both streams expanded to their end (size bytes each) and compared piece by piece. */
static enum s3_err same_expanded(struct dbpf_reader *ra, struct dbpf_reader *rb, uint64_t size, uint8_t *x,
                                 uint8_t *y, bool *same, char *err, size_t errlen)
{
    *same = false;
    for (uint64_t off = 0; off < size; off += DBPF_STREAM_PIECE) {
        size_t k = size - off < DBPF_STREAM_PIECE ? (size_t)(size - off) : DBPF_STREAM_PIECE;
        enum s3_err rc = pull(ra, x, k, err, errlen);
        if (rc == S3_OK)
            rc = pull(rb, y, k, err, errlen);
        if (rc)
            return rc;
        if (memcmp(x, y, k) != 0)
            return S3_OK;
    }
    /* the streams' ends are checked as a read of data.bin checks them */
    for (int side = 0; side < 2; side++) {
        ptrdiff_t k = dbpf_reader_next(side ? rb : ra, side ? y : x, 1, err, errlen);
        if (k < 0)
            return (enum s3_err)-k;
        if (k > 0)
            return s3_fail(S3_ERR_FORMAT, err, errlen, "a stream goes on past its declared size");
    }
    *same = true;
    return S3_OK;
}

/* Both entries decoded (codecs ca, cb; size bytes each) and compared. */
static enum s3_err expand_both(const struct s3_src *sa, const struct dbpf_entry *a, uint16_t ca,
                               const struct s3_src *sb, const struct dbpf_entry *b, uint16_t cb, uint64_t size,
                               uint8_t *x, uint8_t *y, bool *same, char *err, size_t errlen)
{
    struct stored_in ia = {sa, a->offset}, ib = {sb, b->offset};
    struct dbpf_reader *ra = dbpf_reader_new(ca, stored_read, &ia, a->stored_size, size);
    struct dbpf_reader *rb = dbpf_reader_new(cb, stored_read, &ib, b->stored_size, size);
    enum s3_err rc = ra && rb ? same_expanded(ra, rb, size, x, y, same, err, errlen)
                              : s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory for the decoders");
    dbpf_reader_free(ra);
    dbpf_reader_free(rb);
    return rc;
}

enum s3_err dbpf_same_bytes(const struct s3_src *sa, const struct dbpf_entry *a, const struct s3_src *sb,
                            const struct dbpf_entry *b, uint64_t max_unpacked, bool *same,
                            enum dbpf_same_how *how, char *err, size_t errlen)
{
    uint16_t ca, cb;
    uint64_t na, nb;
    *how = DBPF_BY_NOTHING;
    *same = false;
    if (errlen)
        err[0] = 0;
    enum s3_err rc = entry_codec(sa, a, max_unpacked, &ca, &na, err, errlen);
    if (rc == S3_OK)
        rc = entry_codec(sb, b, max_unpacked, &cb, &nb, err, errlen);
    if (rc)
        return rc;
    *how = DBPF_BY_SIZE;
    if (na != nb)
        return S3_OK;
    uint8_t *x = malloc(DBPF_STREAM_PIECE), *y = malloc(DBPF_STREAM_PIECE);
    if (!x || !y) {
        rc = s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory for the comparison");
        goto done;
    }
    if (ca == cb && a->stored_size == b->stored_size) {
        *how = DBPF_BY_STORED;
        rc = same_stored(sa, a->offset, sb, b->offset, a->stored_size, x, y, same, err, errlen);
        if (rc || *same || ca == DBPF_COMP_STORED)
            goto done; /* equal stored bytes, or raw bytes that differ */
    }
    *how = DBPF_BY_EXPANDING;
    rc = expand_both(sa, a, ca, sb, b, cb, na, x, y, same, err, errlen);
done:
    free(x);
    free(y);
    return rc;
}
