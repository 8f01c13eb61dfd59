/* RefPack (QFS), the LZ77 codec of Sims 3 packages ("internal compression"). Written
 * from docs/formats/dbpf.md alone.
 * - refpack_expand: pure, buffers in, buffer out, no allocation.
 * - refpack_expand_stream: input pulled and output pushed in pieces through callbacks,
 *   holding at most REFPACK_STREAM_HELD bytes whatever the sizes.
 * - stream_push_all: the push loop of every pulled reader's *_expand_stream (here and
 *   dbpf_expand_stream), written once. */
#ifndef S3_REFPACK_H
#define S3_REFPACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parse/base/err.h"

struct refpack_header {
    uint8_t flags;
    size_t length;          /* bytes of header: 2 + one or two size fields of 3 or 4 bytes */
    bool has_stored_size;   /* flags 0x01 */
    uint32_t stored_size;   /* when has_stored_size */
    uint32_t expanded_size; /* what the stream declares */
};

/* True when the bytes start like a RefPack stream (second byte 0xFB). */
bool refpack_sniff(const uint8_t *p, size_t len);
/* Parses the header: S3_OK, S3_ERR_FORMAT (not RefPack) or S3_ERR_RANGE (cut), with err. */
enum s3_err refpack_parse_header(const uint8_t *p, size_t len, struct refpack_header *h, char *err, size_t errlen);
/* Expands a whole stream (header included) into out, which holds exactly out_len bytes:
 * the stream must produce exactly that many (its header must declare it too). Every
 * copy is checked: no distance before the output's start, no byte past out_len, no
 * input read past `len`. S3_OK, or with err (what, and at which input offset):
 * S3_ERR_RANGE when the input ends early, S3_ERR_FORMAT for any other broken stream. */
enum s3_err refpack_expand(const uint8_t *p, size_t len, uint8_t *out, size_t out_len, char *err, size_t errlen);

/* Streams: stored bytes pulled in pieces, expanded bytes pushed in pieces. */
/* Reads len stored bytes at off (off + len is within the stored size): S3_OK, or the
 * reason the bytes cannot be had. */
typedef enum s3_err stream_in_fn(void *ctx, uint64_t off, uint8_t *buf, size_t len);
/* Takes the next n expanded bytes: true to go on, false to stop the decoding. */
typedef bool stream_out_fn(void *ctx, const uint8_t *p, size_t n);

#define REFPACK_STREAM_PIECE (64u << 10) /* input read, and output handed on, at a time */
#define REFPACK_WINDOW (1u << 17)        /* past output kept: the longest distance */
#define REFPACK_STREAM_HELD (REFPACK_WINDOW + 2 * REFPACK_STREAM_PIECE + 64 + 256)
/* refpack_expand over in_len stored bytes read through in, handing exactly out_len
 * expanded bytes to out in pieces of at most REFPACK_STREAM_PIECE (the same checks and
 * messages). Allocates its window and buffers (REFPACK_STREAM_HELD bytes, once).
 * S3_OK, or as refpack_expand; S3_ERR_IO when in fails, S3_ERR_NOMEM, and S3_ERR_LIMIT
 * when out stopped it (err: "stopped"). */
enum s3_err refpack_expand_stream(stream_in_fn *in, void *ictx, uint64_t in_len, stream_out_fn *out, void *octx,
                                  uint64_t out_len, char *err, size_t errlen);
/* The same, pulled: each call makes the next bytes (up to cap; 0 at the end), or returns
 * minus the enum s3_err (the message in err; every later call fails the same). Holds
 * REFPACK_WINDOW + REFPACK_STREAM_PIECE + 64 bytes. NULL when out of memory. */
struct refpack_reader;
struct refpack_reader *refpack_reader_new(stream_in_fn *in, void *ictx, uint64_t in_len, uint64_t out_len);
ptrdiff_t refpack_reader_next(struct refpack_reader *r, uint8_t *out, size_t cap, char *err, size_t errlen);
void refpack_reader_free(struct refpack_reader *r);

/* A pulled reader's next call (refpack_reader_next, dbpf_reader_next), on a void *. */
typedef ptrdiff_t stream_next_fn(void *reader, uint8_t *out, size_t cap, char *err, size_t errlen);
/* The push side of every *_expand_stream: pulls the reader into piece (cap bytes) until
 * it ends, handing each piece to out. S3_OK, the reader's failure (err its message), or
 * S3_ERR_LIMIT when out stopped it (err: "stopped"). */
enum s3_err stream_push_all(stream_next_fn *next, void *reader, uint8_t *piece, size_t cap, stream_out_fn *out,
                            void *octx, char *err, size_t errlen);

#endif
