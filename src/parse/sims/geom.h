/* GEOM (type 0x015A1849): the skinned body meshes of The Sims 3 (version 5) and The Sims 4
 * (versions 12 to 15), in their RCOL wrapper. Facts: docs/formats/geom.md.
 * - The chunk is read once (at most max_bytes) and parsed in memory, every count checked
 *   against the bytes that exist.
 * - A broken part is an error string of its own; the parts after it that cannot be found
 *   without it are absent. Free with geom_free. */
#ifndef S3_GEOM_H
#define S3_GEOM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parse/base/format.h"
#include "parse/base/diag.h"
#include "parse/base/err.h"
#include "parse/base/reader.h"

#define GEOM_TYPE 0x015A1849u
#define GEOM_ERR 240

/* RCOL keys: stored instance, type, group (ITG) in the header, type, group, instance
 * (TGI) in the GEOM's own list. */
struct geom_key {
    uint32_t type, group;
    uint64_t instance;
};

struct geom_rcol {
    uint32_t version, public_chunks, unused, nexternal, nchunks;
    struct geom_key *chunk_key, *external_key;
    uint32_t *chunk_pos, *chunk_len; /* as stored */
    uint64_t index_pos;              /* the position/length pairs */
    uint64_t size;                   /* the header's bytes: 0x14 + 16C + 16E + 8C */
};

/* One MTNF parameter. */
struct geom_param {
    uint32_t name_hash, type, count, data_off; /* data_off from the MTNF tag */
    uint64_t data_pos;                         /* absolute; valid when data_ok */
    bool data_ok;                              /* count words at data_off lie in the block */
};

struct geom_mtnf {
    uint64_t pos; /* the MTNF tag (absolute) */
    uint32_t size; /* stored before the block */
    uint32_t tag, unknown, data_size, nparams;
    struct geom_param *param;
    char err[GEOM_ERR];
};

enum geom_usage {
    GEOM_POSITION = 1,
    GEOM_NORMAL = 2,
    GEOM_UV = 3,
    GEOM_BONES = 4,
    GEOM_WEIGHTS = 5,
    GEOM_TANGENT = 6,
    GEOM_TAG = 7,
    GEOM_BINORMAL = 8,
    GEOM_WEIGHT_MAP = 9,
    GEOM_VERTEX_ID = 10,
};
enum geom_dtype { GEOM_DT_FLOAT = 1, GEOM_DT_BYTE = 2, GEOM_DT_COLOR = 3, GEOM_DT_U32 = 4 };

struct geom_decl {
    uint32_t usage, type;
    uint8_t size;
    uint32_t offset; /* in the vertex */
    int uv_set;      /* usage 3: 0, 1, 2 in order; else -1 */
    bool ok;         /* a usage, type and size this reader knows (else why in err) */
    char err[120];
};

struct geom_uv_stitch {
    uint64_t pos; /* the record */
    int32_t vertex;
    uint32_t count;
    float *uv; /* 2 per pair */
};

struct geom_seam {
    uint32_t vertex;
    uint16_t word; /* seam = word >> 12, position = word & 0xFFF */
};

struct geom_slot_ray {
    uint32_t slot; /* a bone index (v < 14) or a bone hash (v >= 14) */
    uint16_t tri[3];
    float bary[2], distance, offset[3], position[3], rotation[4];
    uint32_t pivot; /* u8 index, 0xFF none (v < 14); u32 hash, 0 none (v >= 14) */
};

struct geom_state {
    uint32_t state;
    int32_t start, min_vertex, vertex_count, primitive_count;
};

/* A tail block: a count and its records, where it lies, or why it could not be read. */
struct geom_block {
    bool present; /* this version has it */
    uint64_t pos, size; /* absolute, count included */
    uint32_t count;
    char err[GEOM_ERR];
};

struct geom {
    bool has_rcol;
    struct geom_rcol rcol;
    uint64_t pos, size; /* the GEOM chunk in the source */
    uint8_t *buf;       /* the chunk's bytes */

    uint32_t version, tgi_offset, tgi_size, shader;
    bool sims3; /* the version 5 tail (versions below 12) */
    char header_err[GEOM_ERR];
    bool has_material;
    struct geom_mtnf mtnf;
    uint64_t fields_pos; /* merge group, sort order, vertex and declaration counts */
    uint32_t merge_group, sort_order, nverts, ndecls;
    struct geom_decl *decl;
    uint64_t decl_pos;
    uint32_t stride;
    bool decl_empty; /* a declaration of 0 bytes: the vertices cannot be shown by element
                        (vertices × declarations could then exceed the bytes) */
    char decl_err[GEOM_ERR];
    uint64_t vert_pos; /* absolute; nverts × stride bytes */
    const uint8_t *vert; /* in buf */
    bool verts_ok;
    char vert_err[GEOM_ERR];
    enum s3_err vert_reason; /* why not verts_ok: FORMAT or RANGE */
    uint64_t ibuf_pos; /* the index-buffer count, bytes per index, index count */
    uint32_t index_buffers, index_count;
    uint8_t index_size;
    uint64_t index_pos; /* absolute */
    uint32_t *index;
    bool indices_ok; /* read (whatever their values) */
    char index_err[GEOM_ERR];
    enum s3_err index_reason; /* why not indices_ok: FORMAT or RANGE */
    char tri_err[GEOM_ERR]; /* the indices do not make triangles (count, range) */

    struct geom_block skin, uv_stitches, seams, slot_rays, bones, states, tgis;
    int32_t skin_index;
    struct geom_uv_stitch *uv_stitch;
    struct geom_seam *seam;
    struct geom_slot_ray *ray;
    uint32_t ray_size; /* 63 or 66 */
    uint32_t *bone_hash;
    struct geom_state *state;
    struct geom_key *tgi;
    uint64_t tail_end; /* where the tail ends, chunk-relative (0: it was not read to its end) */
    uint64_t seq_end;  /* chunk-relative end of the parts read whole, in order (the covered bytes) */
};

/* s3_detect_fn: an RCOL header whose first chunk is a GEOM chunk. */
s3_detect_fn geom_detect;

/* The name of a known material parameter or shader hash (geom.md), or NULL. */
const char *geom_param_name(uint32_t hash);
const char *geom_usage_name(uint32_t usage);
const char *geom_seam_name(unsigned seam);

/* Parses the source (at most max_bytes of chunk read into memory): S3_OK, or the reason
 * not even the header can be read (err says why; S3_ERR_LIMIT: the chunk is over
 * max_bytes). Disagreements and broken parts: warnings in d and the parts' err strings.
 * Linear in the chunk by construction: one pass, every count checked against the bytes
 * left before its records are read, each record read once, no lookup (so nothing to
 * count; the binding's work is counted in geom_model.h). */
enum s3_err geom_parse(const struct s3_src *src, uint64_t max_bytes, struct geom *g, struct diag *d, char *err,
                       size_t errlen);
void geom_free(struct geom *g);

/* Decoded vertex attributes: the first declaration of a usage (set: the UV set) whose
 * layout is known, as floats (n per vertex); NULL when there is none. */
const struct geom_decl *geom_find(const struct geom *g, uint32_t usage, int set);
/* Element k of declaration d of vertex i, as a float (floats; bytes and u32 as their value). */
float geom_value(const struct geom *g, const struct geom_decl *d, uint32_t i, unsigned k);
/* The element count of a declaration (floats: size / 4; bytes: size; u32: size / 4). */
unsigned geom_elements(const struct geom_decl *d);
/* Number of whole triangles, and the indices (3 per triangle) are all < nverts: true. */
uint32_t geom_triangles(const struct geom *g);

#endif
