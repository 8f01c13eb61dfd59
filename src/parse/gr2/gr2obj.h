/* Granny object graph: pointers through fixups, member definitions, struct sizes.
 * Facts: docs/formats/gr2.md ("Type definitions").
 * - Pure: section bytes and fixup tables come from the caller through struct gr2_space.
 * - Keep no pointer into section bytes across a settle point (gr2_space_settle): a lazy
 *   provider may take the bytes back there. */
#ifndef S3_GR2OBJ_H
#define S3_GR2OBJ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parse/base/err.h"
#include "parse/gr2/gr2.h"

enum gr2_member_type {
    GR2_END = 0,
    GR2_INLINE = 1,
    GR2_REFERENCE = 2,
    GR2_REF_TO_ARRAY = 3,
    GR2_ARRAY_OF_REFS = 4,
    GR2_VARIANT_REF = 5,
    GR2_UNUSED6 = 6,
    GR2_REF_TO_VARIANT_ARRAY = 7,
    GR2_STRING = 8,
    GR2_TRANSFORM = 9,
    GR2_REAL32 = 10,
    GR2_INT8 = 11,
    GR2_UINT8 = 12,
    GR2_BINORMAL_INT8 = 13,
    GR2_NORMAL_UINT8 = 14,
    GR2_INT16 = 15,
    GR2_UINT16 = 16,
    GR2_BINORMAL_INT16 = 17,
    GR2_NORMAL_UINT16 = 18,
    GR2_INT32 = 19,
    GR2_UINT32 = 20,
    GR2_REAL16 = 21,
    GR2_EMPTY_REF = 22,
    GR2_MEMBER_TYPES
};

#define GR2_MAX_MEMBERS 4096   /* a definition without End stops here */
#define GR2_MAX_TYPE_DEPTH 32  /* Inline nesting (and cycles through type definitions) */
#define GR2_TRANSFORM_SIZE 68

/* Sections given on demand (optional). A section whose data and why are both NULL is
 * asked of fetch the first time its bytes are needed; fetch sets one of them. A provider
 * that bounds memory may also take back (set to NULL again) a section the decoder holds
 * no pointer into: one not used since the last settle point (gr2_space_settle), where
 * the decoder keeps no pointer into section bytes. state and used are the decoder's
 * record of that (one byte per section, and the sections used since the last settle). */
struct gr2_space;
struct gr2_lazy {
    void (*fetch)(const struct gr2_space *s, uint32_t sec);
    void *ctx; /* the provider's */
    uint8_t *state; /* per section: GR2_SEC_IDLE or GR2_SEC_USED */
    uint32_t *used;
    uint32_t nused;
    /* optional: called at each settle point, after the states are reset (a provider's
     * test mode that lets go of every idle section at once) */
    void (*settled)(const struct gr2_space *s);
};
enum { GR2_SEC_IDLE = 0, GR2_SEC_USED = 1 };

/* What the decoder needs of the container: each section's expanded bytes (NULL when
 * they cannot be had, with a reason) and its fixups sorted by from_offset. size holds
 * every section's size from the start, also for a lazy section not fetched yet. */
struct gr2_space {
    const struct gr2_file *g;
    const uint8_t **data; /* per section */
    size_t *size;
    const char **why;     /* reason when data is NULL */
    enum s3_err *reason;  /* ... and as a kind (NULL, or 0: IO): NOMEM fails what reads it */
    struct gr2_fixup **fixups;
    uint32_t *nfixups;
    struct gr2_lazy *lazy; /* NULL: every section is given up front */
};

/* A settle point: the caller holds no pointer into section bytes (names and types live
 * in the type registry), so a provider may take back what is not used after it. */
void gr2_space_settle(const struct gr2_space *s);

int gr2_pointer_size(const struct gr2_space *s);
const char *gr2_member_type_name(uint32_t type);
bool gr2_is_scalar(uint32_t type);
/* Size of one element of a non-Inline member type; 0 for unknown types. */
uint32_t gr2_elem_size(const struct gr2_space *s, uint32_t type);

/* Bytes [off, off+len) of section sec, or NULL with why. */
const uint8_t *gr2_bytes(const struct gr2_space *s, uint32_t sec, uint64_t off, uint64_t len, const char **why);
/* The same with the reason: FORMAT (no such section), IO (its bytes could not be had),
 * NOMEM (nor made, for lack of memory), RANGE (past its end). *p is NULL on failure. */
enum s3_err gr2_bytes_at(const struct gr2_space *s, uint32_t sec, uint64_t off, uint64_t len, const uint8_t **p,
                         const char **why);
/* The pointer slot at (sec, off): *points true with *to set, false for a NULL slot; a
 * failure (the reason, and why) when the slot is unreadable or its fixup goes nowhere. */
enum s3_err gr2_pointer(const struct gr2_space *s, uint32_t sec, uint32_t off, struct gr2_ref *to, bool *points,
                        const char **why);
/* A NUL-terminated string at ref (bounded by its section: RANGE without a NUL). */
enum s3_err gr2_string_at(const struct gr2_space *s, struct gr2_ref at, const char **str, size_t *len,
                          const char **why);
uint32_t gr2_u32_at(const struct gr2_space *s, const uint8_t *p);
/* The Real32 at p, in the file's byte order. */
float gr2_f32_at(const struct gr2_space *s, const uint8_t *p);

struct gr2_member {
    uint32_t type;
    const char *name; /* in section bytes; may be NULL (unnamed) */
    size_t name_len;
    struct gr2_ref ref_type;
    bool has_ref_type;
    int32_t array_width;
    uint32_t offset; /* within the struct */
    uint32_t size;   /* elem size × max(width, 1) */
};

struct gr2_type {
    struct gr2_ref at;
    bool ok;
    char err[160];
    /* Why it is not ok: FORMAT, RANGE or LIMIT for its bytes (kept: they fail the same
     * way every time); NOMEM, or IO when section bytes could not be had, only for the
     * request that met it (decoded again in the next, gr2_types_new_request). */
    enum s3_err reason;
    uint64_t round;  /* the registry's request it was last decoded in */
    bool decoding;   /* under way (an Inline cycle back to it finds it failing) */
    uint32_t nmembers;
    struct gr2_member *m;
    uint32_t size;
    char **safe_name; /* per member: a usable, unique file name */
    /* Elements hold no references, strings or arrays: only scalars, Transforms and
     * Inline structs of those (at most GR2_MAX_COLUMNS values). An array of such
     * elements is a table (gr2_type_columns). */
    bool flat;
    uint32_t ncolumns; /* when flat */
    char *names;      /* the members' names, copied: m[].name points here, not into section
                       * bytes, which a bounded cache may drop once they are unpinned */
};

#define GR2_MAX_COLUMNS 1024

/* A cache of decoded types, keyed by definition address. */
struct gr2_types {
    struct gr2_type **t; /* in the order decoded */
    size_t n, cap;
    struct gr2_type **index; /* by where they are defined: open addressing, at most half full */
    size_t cap_index;
    uint64_t name_compares; /* member-name comparisons made unique names cost (tests) */
    uint64_t lookups, probes; /* type lookups, and index slots they looked at (tests) */
    uint64_t round; /* the request (gr2_types_new_request) */
};

/* The type at ref (decoded once, then cached). Never NULL unless out of memory;
 * check ->ok, and ->reason when it is not. A type that failed for now (NOMEM, IO) stays
 * failed for the rest of the request (each type is decoded at most once per request) and
 * is decoded again in a later one: no refusal is kept. */
const struct gr2_type *gr2_type_get(struct gr2_types *reg, const struct gr2_space *s, struct gr2_ref at);
/* Starts a new request on a registry that outlives requests (a view's): types that
 * failed for now are decoded again when next asked for. */
void gr2_types_new_request(struct gr2_types *reg);
void gr2_types_free(struct gr2_types *reg);
/* Finds a member by name; NULL when absent. */
const struct gr2_member *gr2_find_member(const struct gr2_type *t, const char *name);

/* One value column of a flat type: a scalar at `offset` within an element. */
struct gr2_column {
    char *name;    /* "Position[0]", "Inner.x", "Transform.orientation[3]" */
    uint32_t type; /* a scalar member type (GR2_REAL32 ... GR2_REAL16) */
    uint32_t offset;
    bool hex;      /* a Transform's flags: shown as 0x%08x */
};

/* The columns of a flat type, in member order: a member of width N gives N columns
 * NAME[0]..NAME[N-1], an Inline member its own columns prefixed "NAME.", a Transform
 * flags, position[3], orientation[4], scale_shear[9]. UNSUPPORTED for a type that is not
 * flat, FORMAT for a bad one, NOMEM. */
enum s3_err gr2_type_columns(struct gr2_types *reg, const struct gr2_space *s, const struct gr2_type *t,
                             struct gr2_column **cols, uint32_t *n);
void gr2_columns_free(struct gr2_column *cols, uint32_t n);
/* One scalar of a column as text (no newline): "%.9g" floats, decimal integers. */
int gr2_format_scalar(char *out, size_t outlen, uint32_t type, bool hex, const uint8_t *p, bool be);
double gr2_half_to_double(uint16_t h);

/* A String slot. Strings remapped to an external table (header string_table_crc
 * non-zero) hold a 32-bit CRC and no fixup. */
enum gr2_str_kind { GR2_STR_NULL, GR2_STR_TEXT, GR2_STR_CRC, GR2_STR_ERROR };
struct gr2_str {
    enum gr2_str_kind kind;
    const char *text; /* GR2_STR_TEXT: in section bytes, len bytes, not NUL-terminated here */
    size_t len;
    uint32_t crc;     /* GR2_STR_CRC */
    const char *why;  /* GR2_STR_ERROR */
};
void gr2_string_slot(const struct gr2_space *s, uint32_t sec, uint32_t off, struct gr2_str *out);
/* True when the file's strings are CRCs into an external string table. */
bool gr2_strings_remapped(const struct gr2_file *g);

/* Makes file names from member names: no '/', not empty, not "." or "..", unique (a
 * repeated name gets ~2, ~3, ... in member order). Linear in n (parse/nameset.h). */
char **gr2_safe_names(const struct gr2_member *m, uint32_t n);
/* The same, adding the name comparisons it made to *compared (NULL: not counted). */
char **gr2_safe_names_counted(const struct gr2_member *m, uint32_t n, uint64_t *compared);

#endif
