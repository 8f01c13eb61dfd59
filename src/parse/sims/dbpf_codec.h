/* How a package entry's stored bytes are decoded: the codec chosen from the compression
 * word and the bytes themselves, and the decoding into a buffer of the declared size.
 * - Pure: buffers in, buffer out; dbpf_expand allocates nothing but zlib's state.
 * - dbpf_expand's out holds want + 1 bytes (one spare: a stream that goes on is caught).
 * - dbpf_expand_stream pulls stored bytes and pushes expanded ones in pieces, holding at
 *   most DBPF_STREAM_HELD bytes, whatever the sizes (for bytes not kept whole).
 * - dbpf_same_bytes reads two entries through their sources, in bounded pieces.
 * - Errors: enum s3_err with one line in err (what, and where in the stream). */
#ifndef S3_DBPF_CODEC_H
#define S3_DBPF_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "parse/base/err.h"
#include "parse/codec/refpack.h"
#include "parse/sims/dbpf.h"

/* The codec (a DBPF_COMP_ value) to decode e with, from its first n bytes (n <= 2 is
 * enough): the compression word when the bytes agree with it, else what the bytes say;
 * -1 when nothing fits. note: empty, or one line saying what was sniffed and why. */
int dbpf_codec_choose(const struct dbpf_entry *e, const uint8_t *head, size_t n, char *note, size_t notelen);

/* Decodes n stored bytes with codec (DBPF_COMP_ZLIB, _REFPACK or _STREAMABLE) into
 * exactly want bytes: S3_OK, S3_ERR_FORMAT (a stream that is broken or goes on),
 * S3_ERR_RANGE (RefPack input that ends early), S3_ERR_NOMEM (zlib cannot start) or
 * S3_ERR_UNSUPPORTED (another codec). */
enum s3_err dbpf_expand(uint16_t codec, const uint8_t *in, size_t n, uint8_t *out, size_t want, char *err,
                        size_t errlen);

/* dbpf_expand over n stored bytes read through in, handing exactly want expanded bytes
 * to out in pieces of at most DBPF_STREAM_PIECE (the same checks; stored bytes are
 * handed on as read). *held: the most bytes it held at once (its buffers and zlib's
 * state, counted as allocated), at most DBPF_STREAM_HELD. S3_OK, or as dbpf_expand, and
 * S3_ERR_IO (in failed), S3_ERR_LIMIT (out stopped it). */
#define DBPF_STREAM_PIECE (64u << 10)
#define DBPF_STREAM_HELD (REFPACK_STREAM_HELD + 2 * DBPF_STREAM_PIECE + 1024)
enum s3_err dbpf_expand_stream(uint16_t codec, stream_in_fn *in, void *ictx, uint64_t n, stream_out_fn *out,
                               void *octx, uint64_t want, size_t *held, char *err, size_t errlen);
/* The same, pulled (a reader that resumes where it stopped): each call makes the next
 * bytes (up to cap; 0 once all want are made and the stream's end checked), or returns
 * minus the enum s3_err with err (every later call fails the same). NULL when out of
 * memory. dbpf_reader_held: what it holds (at most DBPF_STREAM_HELD). */
struct dbpf_reader;
struct dbpf_reader *dbpf_reader_new(uint16_t codec, stream_in_fn *in, void *ictx, uint64_t n, uint64_t want);
ptrdiff_t dbpf_reader_next(struct dbpf_reader *r, uint8_t *out, size_t cap, char *err, size_t errlen);
size_t dbpf_reader_held(const struct dbpf_reader *r);
void dbpf_reader_free(struct dbpf_reader *r);

/* Whether two entries' expanded bytes (what a package view's data.bin holds) are equal,
 * each entry read through its own source, never held whole: two DBPF_STREAM_PIECE
 * buffers and two readers at most, whatever the sizes. S3_OK with *same, or the reason it
 * cannot be told with err: FORMAT (a state other than DBPF_OK, a stream that breaks),
 * UNSUPPORTED (a codec that fits neither the word nor the bytes), LIMIT (an expanded size
 * over max_unpacked), IO/RANGE (bytes that cannot be read), NOMEM. Decided in this order:
 * expanded sizes that differ: not the same; the same codec, the same stored size and
 * equal stored bytes: the same (nothing expanded); stored bytes that differ under the
 * stored codec: not; else both expanded and compared piece by piece. *how: what decided
 * it (or was deciding it when it failed). */
enum dbpf_same_how { DBPF_BY_NOTHING, DBPF_BY_SIZE, DBPF_BY_STORED, DBPF_BY_EXPANDING };
enum s3_err dbpf_same_bytes(const struct s3_src *sa, const struct dbpf_entry *a, const struct s3_src *sb,
                            const struct dbpf_entry *b, uint64_t max_unpacked, bool *same,
                            enum dbpf_same_how *how, char *err, size_t errlen);

#endif
