/* Builder of t2fs (TEngine container) files for tests: a tree of nodes written in
 * either byte order, with optional RNC-compressed nodes, prefix and trailer. After
 * writing, every node knows where it went, so tests can compare the mounted tree. */
#ifndef S3_FIXTURE_T2FS_H
#define S3_FIXTURE_T2FS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum fxt_kind { FXT_BRANCH, FXT_ARRAY, FXT_RAW };

struct fxt {
    enum fxt_kind kind;
    struct fxt **child;
    uint32_t n;
    uint32_t elem_size, count; /* arrays: records given in order, interleaved on write if asked */
    bool interleave;
    uint8_t *data; /* arrays: elem_size·count bytes of records; raw: len bytes */
    size_t len;
    int compress;     /* 0, 1 or 2: store this node RNC-compressed */
    const char *type; /* the user.s3rig.type the mount should show (NULL: not checked) */
    /* filled by fxt_write */
    uint8_t *bytes; /* the node as stored between its parent's offsets (padding included) */
    size_t stored;
    uint8_t *inner; /* compressed nodes: the node before packing (unpadded) */
    size_t inner_len;
    uint64_t pos;         /* absolute in the file, or in the enclosing blob */
    const struct fxt *blob; /* the compressed node holding this one (NULL: the file) */
};

struct fxt *fxt_branch(uint32_t n, ...);
struct fxt *fxt_branch_v(uint32_t n, struct fxt **children);
struct fxt *fxt_array(uint32_t elem_size, uint32_t count, const void *records, bool interleave);
struct fxt *fxt_raw(const void *data, size_t len);
void fxt_free(struct fxt *n);

/* Serialises the tree. prefix: bytes before the root; trailer: after it. Returns the
 * malloc'd file. */
uint8_t *fxt_write(struct fxt *root, bool be, size_t prefix, size_t trailer, size_t *size);

/* One Turok 2 model with the seed's full tree (deterministic content from `seed`):
 * info, model_0_1, meshes (interleaved vertex buffers), model_1_1, surfaces with
 * material and index stream, bones, hotpoints, empty model_1_5 branches, poses with all
 * six children, model_3. */
struct fxt *fxt_model(unsigned seed, uint32_t meshes, uint32_t poses, bool be);

/* The u16 words of the index stream fxt_model writes for a surface (seed + surface). */
const uint16_t *fxt_index_words(unsigned seed, size_t *n);

struct fxt *fxt_model_ex(unsigned seed, uint32_t meshes, uint32_t poses, bool be, uint32_t verts);

/* A large file written to disk (benchmarks): root {nmodels models with `verts`-vertex
 * meshes, one raw leaf of big_leaf bytes}. */
int fxt_write_big(const char *path, uint32_t nmodels, uint32_t verts, uint64_t big_leaf, bool be);

/* A whole file: root {models[nmodels], an unknown branch, an unknown raw leaf}. */
struct fxt *fxt_sample(unsigned seed, uint32_t nmodels, bool with_compressed, bool be);

/* ---- Turok 1 (formats/t2fs.md, "Turok 1 sections") ---- */

struct fxt_t1_vert {
    int16_t x, y, z;
    uint16_t flag;
    int16_t s, t;
    uint8_t c[4];
};

/* Vertex i of a section made from seed: values on both sides of zero. */
struct fxt_t1_vert fxt_t1_vertex(unsigned seed, uint32_t i);
/* One polygon-stream word under a layout of `slots` (16: 4-bit fields, flag bit 12; 32:
 * 5-bit fields, flag bit 15): slots a, b, c (lowest field first) and last-in-run. */
uint16_t fxt_t1_word(unsigned slots, unsigned a, unsigned b, unsigned c, bool last);
/* A section {section struct (8 bytes), usPStream (words in the file's byte order),
 * usVertices (nverts vertices from seed, 16-byte records written as byte planes)}. */
struct fxt *fxt_t1_section(const uint16_t *words, size_t nwords, uint32_t nverts, unsigned seed, bool be);

/* A test case: a section and what the engine draws from it, written down by hand from
 * the layout rules (never from the decoder). */
struct fxt_t1_case {
    const char *what;
    uint32_t nverts;
    unsigned seed;
    uint16_t words[16];
    size_t nwords;
    const char *layout;    /* the section's layout file: "16", "32" or "none" */
    const char *triangles; /* NULL when the stream fits neither layout */
    const char *commands;
    const char *err16, *err32; /* lines triangles.error must hold (fits neither) */
};
const struct fxt_t1_case *fxt_t1_cases(size_t *n);

/* A Turok 1 file (11 root children) of two graphic objects, in the file's byte order.
 * Object 0: bounds {-1.5, -2, -3, 4, 5.25, 6}; node 0 {children [1], part indices [0],
 * parts {0: cases 0 and 2}}; node 1 {children [], part indices [0 1], parts {0: case 1;
 * 1: cases 3 4 5 6}}. Object 1: 8-byte bounds; one node {[], [0], parts {0: case 2,
 * stored RNC-compressed}}. Cases as fxt_t1_cases gives them. */
struct fxt *fxt_t1_sample(bool be);
/* The section node of case k in fxt_t1_sample's tree. */
const struct fxt *fxt_t1_sample_section(const struct fxt *root, unsigned object, unsigned node, unsigned part,
                                        unsigned section);

#endif
