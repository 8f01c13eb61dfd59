/* DBPF 2.0 / 2.1 packages (The Sims 3, The Sims 4): header, index, name maps, the
 * community's resource names. Written from docs/formats/dbpf.md. Pure: reads only
 * through struct s3_src. */
#ifndef S3_DBPF_H
#define S3_DBPF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parse/base/diag.h"
#include "parse/base/err.h"
#include "parse/base/format.h"
#include "parse/base/reader.h"

#define DBPF_HEADER_SIZE 96
#define DBPF_TYPE_RIG 0x8EAF13DEu
#define DBPF_TYPE_NAMEMAP 0x0166038Cu

enum {
    DBPF_COMP_STORED = 0x0000,
    DBPF_COMP_ZLIB = 0x5A42,
    DBPF_COMP_REFPACK = 0xFFFF,
    DBPF_COMP_STREAMABLE = 0xFFFE,
    DBPF_COMP_DELETED = 0xFFE0,
};

enum dbpf_state {
    DBPF_OK,       /* data at offset, stored_size bytes */
    DBPF_DELETED,  /* compression 0xFFE0 */
    DBPF_NULL,     /* size on disk 1, memory size 0xFFFFFFFF */
    DBPF_NO_DATA,  /* offset 0xFFFFFFFF */
    DBPF_OUTSIDE,  /* its bytes are not inside the file */
};

/* Header fields, as value files are named. */
enum {
    DBPF_H_MAJOR, DBPF_H_MINOR, DBPF_H_USER_MAJOR, DBPF_H_USER_MINOR, DBPF_H_FLAGS, DBPF_H_CREATED,
    DBPF_H_UPDATED, DBPF_H_INDEX_COUNT, DBPF_H_INDEX_LEGACY_POSITION, DBPF_H_INDEX_SIZE, DBPF_H_INDEX_VERSION,
    DBPF_H_INDEX_POSITION, DBPF_HEADER_FIELDS
};
extern const char *const dbpf_header_field_names[DBPF_HEADER_FIELDS];
extern const uint32_t dbpf_header_field_offsets[DBPF_HEADER_FIELDS];

struct dbpf_entry {
    uint32_t type, group;
    uint64_t instance;
    uint32_t offset, stored_size, mem_size; /* stored_size without bit 31 */
    uint16_t compression, committed;
    bool extended;      /* bit 31 of the size on disk: the compression word is there */
    uint8_t state;      /* enum dbpf_state */
    uint32_t record;    /* where the entry's record starts (absolute) */
    uint32_t dup;       /* 0; n > 0: the n-th repeat of an earlier entry's key */
};

struct dbpf {
    uint32_t h[DBPF_HEADER_FIELDS];
    uint64_t index_pos, index_size; /* the index as used (position 0x40, else 0x28) */
    uint32_t index_flags;
    uint32_t constant[3]; /* type, group, instance high: valid for set flags */
    uint32_t count;       /* entries parsed */
    struct dbpf_entry *e;
    bool index_ok;
    char index_err[200];
};

/* True when the first bytes are a package's ("DBPF"). */
bool dbpf_sniff(const uint8_t *p, size_t len);
/* Reads the header: S3_OK, or S3_ERR_RANGE (cut), S3_ERR_FORMAT (no "DBPF"),
 * S3_ERR_UNSUPPORTED (anything but major 2, minor 0 or 1), with one line in err. */
enum s3_err dbpf_parse_header(const struct s3_src *src, struct dbpf *d, char *err, size_t errlen);
/* Reads the index (one read of its bytes, bounded by the file): entries, special records,
 * duplicate keys. A broken index is index_ok = false with index_err (entries read
 * before the break are kept); warnings go to diag. S3_OK, or S3_ERR_NOMEM. */
enum s3_err dbpf_parse_index(const struct s3_src *src, struct dbpf *d, struct diag *diag);
void dbpf_free(struct dbpf *d);

/* An index entry's key, as a folder scan of a million entries keeps it. */
struct dbpf_key {
    uint64_t instance;
    uint32_t type, group;
    uint32_t dup;    /* as dbpf_entry's */
    uint32_t record; /* as dbpf_entry's: where its record starts (dbpf_read_entry reads it) */
    uint32_t size;   /* its memory size: the expanded size whenever a codec fits its bytes */
    bool deleted;    /* compression 0xFFE0 */
};
/* Reused from one package to the next: k[0 .. n) the keys of the index parsed last; the
 * rest scratch. Grown through the caller's grow (realloc's contract; NULL refuses); freed
 * with dbpf_keys_free. */
typedef void *dbpf_grow_fn(void *p, size_t size);
struct dbpf_keys {
    struct dbpf_key *k;
    uint32_t n;
    size_t capk;
    uint8_t *bytes;
    size_t capbytes;
    uint32_t *slot;
    size_t capslot;
};
/* The index's keys only (d's header parsed), every entry in index order: index_ok,
 * index_err and count as dbpf_parse_index sets them (a broken index: the keys before the
 * break), no warnings, no entries kept in d. S3_OK, or S3_ERR_NOMEM (a growth refused). */
enum s3_err dbpf_parse_keys(const struct s3_src *src, struct dbpf *d, struct dbpf_keys *ks, dbpf_grow_fn *grow);
void dbpf_keys_free(struct dbpf_keys *ks);

/* The one entry whose record starts at `record` (as dbpf_entry's, from an earlier parse
 * of the same file), d's header parsed: reads the index's flags and constant fields
 * (into d) and that record alone, and classifies it; dup is 0. S3_OK, S3_ERR_RANGE (the
 * record is not inside the index) or S3_ERR_IO. */
enum s3_err dbpf_read_entry(const struct s3_src *src, struct dbpf *d, uint32_t record, struct dbpf_entry *e);

/* Where each field of entry i's record lies (absolute), or 0 when the field is constant
 * (then dbpf_constant_pos gives it). field: 0 type 1 group 2 instance-high 3 instance-low
 * 4 offset 5 size on disk 6 memory size 7 compression (u16) 8 committed (u16). */
uint64_t dbpf_field_pos(const struct dbpf *d, uint32_t i, int field);

/* The community's type table (dbpf_types.h) as a package of the game reads it (sims4:
 * DBPF 2.1, else 2.0; where the Sims 3 and Sims 4 tools disagree on an id, the package's
 * game decides): true with its tag ("_RIG") and extension (".grannyrig") when the table
 * tags the type; false with "UNKN" and ".bnry" when it does not (unlisted ids, and the
 * ids the table lists as UNKN .bnry). */
bool dbpf_type_names(uint32_t type, bool sims4, const char **tag, const char **ext);
/* What the compression word means ("stored", "zlib", "refpack", "streamable",
 * "deleted"), or NULL for other values. */
const char *dbpf_compression_name(uint16_t c);

/* A name map resource's expanded bytes: u32 version, i32 count, count x {u64 instance,
 * i32 length, name}. Calls add for each name (its first DBPF_NAME_MAX bytes). S3_OK (err
 * may still hold a warning: an unknown version), or S3_ERR_RANGE / S3_ERR_FORMAT with err
 * (names before the break have been given). */
#define DBPF_NAME_MAX 256
typedef void dbpf_name_fn(void *ctx, uint64_t instance, const char *name, size_t len);
enum s3_err dbpf_parse_namemap(const uint8_t *p, size_t len, dbpf_name_fn *add, void *ctx, char *err,
                               size_t errlen);
/* The same over bytes handed in pieces of any size (a map never held whole): begin, feed
 * each piece in order (false once the map is broken: stop), then end for the result.
 * Holds sizeof(struct dbpf_namemap_reader) bytes, whatever the map's size. */
struct dbpf_namemap_reader {
    dbpf_name_fn *add;
    void *ctx;
    char *err;
    size_t errlen;
    enum s3_err e;
    uint8_t fixed[12]; /* the header, or an entry's instance and length, being gathered */
    size_t have, need;
    bool in_name, done;
    int32_t count, i;
    uint64_t instance, bytes;
    uint32_t name_len, name_got;
    char name[DBPF_NAME_MAX];
};
void dbpf_namemap_begin(struct dbpf_namemap_reader *r, dbpf_name_fn *add, void *ctx, char *err, size_t errlen);
bool dbpf_namemap_feed(struct dbpf_namemap_reader *r, const uint8_t *p, size_t n);
enum s3_err dbpf_namemap_end(struct dbpf_namemap_reader *r);

/* The community's file name: S3_|S4_ TYPE_GROUP_INSTANCE [_name] %%+TAG.ext (name
 * bytes that cannot be in a file name become '_'). Returns the length written. */
size_t dbpf_resource_name(char *out, size_t size, bool sims4, const struct dbpf_entry *e, const char *name);

/* s3_detect_fn: a DBPF header (its version is refused, in one line, by the view). */
s3_detect_fn dbpf_detect;

#endif
