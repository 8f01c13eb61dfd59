/* Turok 1 geometry sections as the engine draws them (docs/formats/t2fs.md, "Turok 1
 * sections: vertices and the polygon stream"): a vertex cache loaded in steps, a stream
 * of words naming cache slots, in one of two layouts (16 or 32 slots).
 * - t1_section_decode gives the vertices and the triangles as section-vertex indices, no
 *   tree involved; the layout is the one under which the stream is consumed exactly.
 * - Pure; free with t1_section_free. */
#ifndef S3_T1_SECTION_H
#define S3_T1_SECTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parse/base/err.h"

#define T1_VERTEX_SIZE 16
#define T1_ERR 400

/* One N64 vertex, numbers read in the file's byte order. */
struct t1_vertex {
    int16_t x, y, z;
    uint16_t flag;
    int16_t s, t; /* signed 10.5 fixed point texels: s / 32.0 (the texture size is not known here) */
    uint8_t c[4]; /* r, g, b, a; or, for lit materials, (int8_t) nx, ny, nz and alpha */
};

struct t1_layout {
    unsigned slots;      /* C */
    unsigned field_bits; /* slot fields at bits 0, field_bits, 2·field_bits */
    unsigned flag_bit;   /* the last-in-run flag */
    const char *name;    /* "16" or "32" */
    const char *text;    /* "16 slots, 4-bit fields, flag bit 12" */
};

enum { T1_LAYOUT_16, T1_LAYOUT_32, T1_NLAYOUTS };
extern const struct t1_layout t1_layouts[T1_NLAYOUTS];

enum t1_cmd_kind { T1_CMD_LOAD, T1_CMD_TRI };

struct t1_cmd {
    enum t1_cmd_kind kind;
    uint32_t first, count, slot; /* load: vertices first..first+count-1 into slots slot.. */
    uint8_t s[3];                /* tri: the three slots */
    uint32_t word;               /* tri: its word in the stream */
    bool run_end;                /* tri: the last triangle of its run */
};

/* A decoded stream: what the engine issues, and the triangles it draws. */
struct t1_stream {
    struct t1_cmd *cmd;
    size_t ncmd;
    uint32_t (*tri)[3]; /* section-vertex indices, 0-based */
    size_t ntri;
    uint32_t loads;
};

/* A decoded section. */
struct t1_section {
    struct t1_vertex *vert;
    uint8_t *records; /* nvert·16 bytes: the vertices de-interleaved, file byte order */
    uint32_t nvert;
    struct t1_stream st; /* empty when layout < 0 */
    int layout;          /* index into t1_layouts, or -1: the stream fits neither */
    bool ambiguous;      /* both layouts fit (the 16-slot one, the real data's, is used) */
    char err[T1_ERR];    /* layout < 0: each layout's reason, one line each */
};

/* Number of loads for count vertices in a cache of `slots`. */
uint32_t t1_load_count(uint64_t count, unsigned slots);

/* De-interleaves count vertices from byte planes (byte j of vertex i at planes[j·count +
 * i]) into records (count·16 bytes) and decodes them into out (may be NULL). */
void t1_vertices(const uint8_t *planes, uint32_t count, bool big_endian, uint8_t *records, struct t1_vertex *out);

/* Decodes nwords u16 words (file byte order) for a section of nverts vertices under one
 * layout. S3_OK: consumed exactly (out filled); S3_ERR_FORMAT: it does not fit (err: the
 * word and the reason; out emptied); S3_ERR_NOMEM. */
enum s3_err t1_decode_stream(const uint8_t *words, size_t nwords, bool big_endian, uint32_t nverts,
                             const struct t1_layout *L, struct t1_stream *out, char *err, size_t errlen);
void t1_stream_free(struct t1_stream *s);

/* A whole section: vplanes holds nverts 16-byte vertices as byte planes (usVertices'
 * data), words the stream. Picks the layout that consumes the stream exactly. S3_OK, or
 * S3_ERR_NOMEM. A stream that fits neither layout is not a failure: layout = -1
 * and err says why, the vertices are still decoded. */
enum s3_err t1_section_decode(const uint8_t *words, size_t nwords, const uint8_t *vplanes, uint32_t nverts,
                              bool big_endian, struct t1_section *s);
void t1_section_free(struct t1_section *s);

#endif
