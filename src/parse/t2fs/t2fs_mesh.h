/* Turok 2 index streams (t2fs model surfaces): u16 words in the file's byte order.
 *   bit 15: triangle, three 5-bit vertex-cache slots (bits 0-4, 5-9, 10-14)
 *   bit 14: select bone (bits 0-7) for the vertices loaded after it
 *   bit 13: load the next n vertices (bits 0-4) into cache slots v0.. (bits 5-9)
 * The running vertex pointer continues across the surfaces of one mesh, in order: the
 * vertex buffer is shared (an assumption no real file has confirmed; docs/formats/t2fs.md). */
#ifndef S3_T2FS_MESH_H
#define S3_T2FS_MESH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parse/base/err.h"

#define T2_CACHE_SLOTS 32
#define T2_MAX_STREAM_ERRORS 256

struct t2_vcache {
    int64_t slot[T2_CACHE_SLOTS];      /* vertex index, -1 = not loaded */
    int32_t slot_bone[T2_CACHE_SLOTS]; /* the bone selected when it was loaded */
    int32_t bone;                      /* -1 before any bone word */
    uint64_t next;                     /* the running vertex pointer */
    uint64_t nverts;                   /* vertices in the mesh's buffer */
};

enum t2_cmd_kind { T2_CMD_TRI, T2_CMD_BONE, T2_CMD_LOAD, T2_CMD_UNKNOWN };

struct t2_cmd {
    enum t2_cmd_kind kind;
    uint16_t word;
    uint32_t a, b, c; /* tri: slots; bone: b in a; load: n in a, v0 in b */
};

struct t2_tri {
    int64_t v[3];
    int32_t bone[3];
};

struct t2_stream {
    struct t2_cmd *cmd;
    size_t ncmd;
    struct t2_tri *tri;
    size_t ntri, captri; /* captri: the stream's triangle words, tri's room, allocated once */
    char *err[T2_MAX_STREAM_ERRORS];
    size_t nerr, dropped;
    int64_t first, last; /* vertices this stream loaded, -1 when none */
};

/* Starts a mesh: an empty cache, the vertex pointer at 0. */
void t2_vcache_init(struct t2_vcache *c, uint64_t nverts);

/* Decodes one surface's stream against the mesh's cache. Trailing zero words are
 * padding. Problems (unloaded slots, loads past the buffer, unknown words) are reported
 * in out->err; decoding goes on. Returns S3_OK, or S3_ERR_NOMEM (S3_ERR_LIMIT never:
 * a triangle word makes one triangle at most). */
enum s3_err t2_decode_stream(const uint8_t *p, size_t len, bool big_endian, struct t2_vcache *c, struct t2_stream *out);
void t2_stream_free(struct t2_stream *s);

/* De-interleaves an array's data: byte k of element i is at data[k·count + i]. */
void t2_deinterleave(const uint8_t *data, uint32_t elem_size, uint32_t count, uint8_t *out);

#endif
