/* t2fs (TEngine container, Turok 1/2/3): branch tables, array headers, compressed-node
 * recognition, and the schema that says what each path holds. Facts:
 * docs/formats/t2fs.md.
 * - Nodes are read lazily, one table at a time; reads return enum s3_err with a message.
 * - A table's count is checked against the bytes that exist before it is allocated. */
#ifndef S3_T2FS_H
#define S3_T2FS_H

#include <stdbool.h>
#include <stdint.h>

#include "parse/base/format.h"
#include "parse/base/err.h"
#include "parse/base/reader.h"

#define T2FS_ERR 200

struct t2fs_branch {
    uint32_t count;
    uint32_t header_len; /* align8(4 + 4·(count+1)) */
    uint32_t *offset;    /* count + 1 entries, relative to the node */
};

/* Header length of a branch with count children. */
uint64_t t2fs_branch_header_len(uint64_t count);

/* Reads the branch at off, given `space` bytes for it, and applies the strong validity
 * test (docs/formats/t2fs.md): S3_OK, or S3_ERR_FORMAT (the test fails), S3_ERR_RANGE
 * (the table runs past the data), S3_ERR_NOMEM / S3_ERR_IO, with the reason in err.
 * `space` may run past the end of src (a file cut short): the table itself must lie in
 * src, checked before anything is allocated for its count. */
enum s3_err t2fs_read_branch(const struct s3_src *src, uint64_t off, uint64_t space, bool be, struct t2fs_branch *b,
                             char *err, size_t errlen);
void t2fs_branch_free(struct t2fs_branch *b);

/* Reads an array leaf's 8-byte header and checks that its data fits in space: S3_OK,
 * S3_ERR_FORMAT (it does not) or S3_ERR_RANGE (the header lies past the data). */
enum s3_err t2fs_read_array(const struct s3_src *src, uint64_t off, uint64_t space, bool be, uint32_t *elem_size,
                            uint32_t *count, char *err, size_t errlen);

/* The same check on a node already in memory (len bytes at p). */
enum s3_err t2fs_array_bytes(const uint8_t *p, size_t len, bool be, uint32_t *elem_size, uint32_t *count);

/* 1 or 2 when the node starts with "RNC" and that method byte; 0 otherwise; -1 for
 * "RNC" with any other method byte. */
int t2fs_rnc_method(const struct s3_src *src, uint64_t off, uint64_t space);

/* ---- schema ---- */

enum t2fs_kind {
    T2K_FIXED,    /* branch with schema-known children */
    T2K_VARIABLE, /* branch whose children all share one schema */
    T2K_DATA,     /* leaf */
    T2K_REPEATED, /* branch whose fixed children repeat as a pattern */
    T2K_MIXED,    /* branch: some fixed children, then variable ones */
};

enum t2fs_data {
    T2D_RAW,     /* one struct (fixed_size > 0) or unknown bytes */
    T2D_ARRAY,   /* element size, count, data */
};

struct t2fs_schema {
    char *name; /* the seed's name, e.g. "vertexBuffer" */
    enum t2fs_kind kind;
    enum t2fs_data data;
    char *type;          /* e.g. "s_t2fsDataVertex" (may be NULL) */
    uint32_t fixed_size; /* raw structs: expected size, 0 = varies */
    uint32_t value_size; /* arrays: expected element size, 0 = any */
    bool interleaved;
    struct t2fs_schema **child; /* fixed: by index (entries may be NULL) */
    uint32_t nchild;
    struct t2fs_schema *each; /* variable */
};

/* The built-in Turok 2 model schema (the seed's table with t2fs.md's corrections); NULL
 * only when out of memory. */
struct t2fs_schema *t2fs_schema_turok2(void);
/* The built-in Turok 1 schema (the engine's directory in t2fs.md, its names); NULL only
 * when out of memory. */
struct t2fs_schema *t2fs_schema_turok1(void);
/* A built-in schema by name ("turok1", "turok2") into *out: UNSUPPORTED for another
 * name, NOMEM. */
enum s3_err t2fs_schema_builtin(const char *name, struct t2fs_schema **out);

/* LibT2FS-style JSON: {"name", "type": data|fixed|variable|repeated|mixed, "next", "pre",
 * "data": {"type", "size", "array", "interleaved"}}. fixed/repeated: "next" is a list
 * (null = unknown child); variable: "next" is one node; mixed: "pre" is the fixed list,
 * "next" the node of the rest. */
char *t2fs_schema_to_json(const struct t2fs_schema *s); /* NULL: out of memory */
/* Parses a schema from JSON text into *out, or the reason with err naming the JSON path:
 * FORMAT (not JSON, not a schema), LIMIT (nested deeper than 64 levels, more than 100000
 * nodes), NOMEM. */
enum s3_err t2fs_schema_from_json(const char *text, size_t len, struct t2fs_schema **out, char *err,
                                  size_t errlen);
void t2fs_schema_free(struct t2fs_schema *s);
/* The schema of child i of a branch with schema s (NULL: the schema says nothing). */
const struct t2fs_schema *t2fs_schema_child(const struct t2fs_schema *s, uint32_t i);

/* s3_detect_fn: a t2fs root at offset 0 or 8, in either byte order, or a cut-short one
 * (t2fs.c says which); a root whose table itself is cut short is refused with r->why. */
s3_detect_fn t2fs_detect;

/* The strong validity test of a t2fs branch (docs/formats/t2fs.md) at off, given `space`
 * bytes for it. Reads at most the offset table, which must fit inside space. */
bool t2fs_branch_valid(const struct s3_src *src, uint64_t off, uint64_t space, bool big_endian);

#endif
