/* Package codecs (docs/formats/dbpf.md): zlib (The Sims 4) and RefPack (The Sims 3). The
 * compression word is not always right (tools write packages whose word says stored for
 * compressed bytes, or none at all), so the first bytes decide when they disagree. */
#include "parse/sims/dbpf_codec.h"

#include <stdbool.h>
#include <stdio.h>
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
