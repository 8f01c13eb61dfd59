/* What every view shares: struct s3fs (one opened view), the value-file helpers (so
 * numbers look the same everywhere), .error files, the view's root, /info and /unparsed,
 * and the hook lists through which views extend each other.
 * - Grow the tree only from populate callbacks, or before it is shared (tree.h).
 * - Hooks: add before the view serves or under the tree lock; called in the order added.
 * - A generated file is a slice of source or expanded bytes, rendered on read in time
 *   proportional to the bytes asked, or a text of at most VIEW_TEXT_MAX: never a text
 *   whose size the input chooses kept in the tree (view_add_form_rows; tree_text_bytes).
 * - A nested s3fs shares its host's tree and cache. */
#ifndef S3_VIEW_H
#define S3_VIEW_H

#include <stdbool.h>
#include <stdint.h>

#include "fs/core/cache.h"
#include "fs/core/cover.h"
#include "fs/core/edit.h"
#include "fs/core/sbuf.h"
#include "fs/core/source.h"
#include "fs/core/tree.h"
#include "parse/detect.h"
#include "parse/base/diag.h"
#include "parse/base/err.h"
#include "parse/base/rigset.h"

/* Set from "-o" through the one option table (options.c), for both commands. */
struct s3fs_opts {
    uint64_t max_nodes;    /* 0: default */
    uint64_t cache_bytes;  /* bound on expanded data held at once; 0: default (256 MiB) */
    uint64_t max_unpacked; /* largest expanded node or section accepted; 0: default (1 GiB) */
    bool has_rnc_key;
    uint16_t rnc_key;
    char schema[512]; /* a container schema: a built-in name or a JSON file; empty = pick by shape */
    char skeleton[512]; /* animations: a file whose first skeleton they play on; empty = none */
    char rig[4096];   /* meshes: the rig file to bind them to; empty = none */
};

#define S3FS_DEFAULT_CACHE (256ull << 20)
#define S3FS_DEFAULT_MAX_UNPACKED (1ull << 30)

struct s3fs;

/* Hooks: a small list of registered callbacks, called in the order they were added, so a
 * second user adds to the first, never overwrites it (extra /info lines, a container's
 * extra children, the views derived from a root, the skeletons a view
 * offers). Entries live in the tree's arena. Add before the view serves, or
 * under the tree lock (from a populate callback); the lists are walked under the tree
 * lock. Each list's owner calls the entries with the function type it documents
 * (view_hooks_add takes any function pointer type as the generic void (*)(void)). */
struct view_hook {
    struct view_hook *next;
    void (*fn)(void);
    void *ctx;
};
struct view_hooks {
    struct view_hook *first, *last;
};
/* S3_OK, or S3_ERR_NOMEM (the hook is not added). So are the view_add_*_hook below. */
enum s3_err view_hooks_add(struct tree *t, struct view_hooks *list, void (*fn)(void), void *ctx);

/* Extra lines of a view's /info that change while mounted (its live state), after the
 * facts: each registered hook writes its own lines. */
typedef void view_info_fn(struct s3fs *fs, struct sbuf *out, void *ctx);
enum s3_err view_add_info_hook(struct s3fs *fs, view_info_fn *fn, void *ctx);

/* The skeletons a view offers to others (a file's first skeleton, a bone table, those of
 * the files a container holds). The one way they are had: -o skeleton= plays animations
 * on them, -o rig= and the meshes a container holds bind to them. A view that has
 * skeletons registers a hook (in the order registered, like every hook list); each adds
 * what it has to `into` with rig_set_add, labelled where it lies relative to the view's
 * root ("" the file itself): S3_OK, or the reason with err saying why it added none
 * (NOT_FOUND: it holds none). */
typedef enum s3_err view_skeletons_fn(struct s3fs *fs, void *ctx, struct rig_set *into, char *err, size_t errlen);
enum s3_err view_add_skeletons_hook(struct s3fs *fs, view_skeletons_fn *fn, void *ctx);
/* Every hook's skeletons, made on the first call (the hooks run once) and kept with fs.
 * Never NULL; when it is empty, err says why (the first hook's reason, or that the file's
 * format holds none). Called while no other thread grows the tree: under the tree lock (a
 * nested view opening) or before the tree is shared (the open layer). */
const struct rig_set *view_skeletons(struct s3fs *fs, char *err, size_t errlen);

/* -o rw: tables a view declares writable (a CSV over fixed-size records of the file:
 * struct table_field, fs/core/edit.h), so that rw need not infer them. A hook is kept by
 * the mount's top view (a nested view's too: ask the top one), and knows its own files by
 * their inode. The first hook that knows ino fills *tf and returns true; a hook reads only
 * what its view made before the file existed, from any thread (view_table_of walks the
 * list under the tree lock). */
typedef bool view_table_fn(struct s3fs *fs, uint32_t ino, struct table_field *tf, void *ctx);
enum s3_err view_add_table_hook(struct s3fs *fs, view_table_fn *fn, void *ctx);
bool view_table_of(struct s3fs *fs, uint32_t ino, struct table_field *tf);

/* -o rw: parts a view lets be replaced whole at another length because it can keep its
 * container consistent (a wrapped RIG's granny.gr2: the wrapper's offsets follow), so that
 * rw knows no container's header. A hook is kept by the mount's top view, like the table
 * hooks; the first that knows ino fills *out (ino: the part's file, or the directory where
 * a view of the part's bytes is shown: a wrapped RIG's root, for its Granny view). The part is [pos, pos+len) of the view's
 * source; `plan`, given the container's first head_len bytes as they are when the write
 * comes (read by the caller from the source's start) and the new length, says which bytes
 * [from, to) the new content (zero-padded to new_len) replaces and which words (4 bytes,
 * little-endian, at source offsets) change with it: S3_OK or the reason, with why. */
struct view_resize_plan {
    uint64_t from, to, new_len;
    uint32_t nwords;
    uint64_t word_at[8];
    uint32_t word[8];
};
typedef enum s3_err view_resize_plan_fn(const uint8_t *head, uint64_t pos, uint64_t old_len, uint64_t new_len,
                                        struct view_resize_plan *out, char *why, size_t whylen);
struct view_resize {
    uint64_t pos, len;
    uint32_t head_len;
    view_resize_plan_fn *plan;
};
typedef bool view_resize_fn(struct s3fs *fs, uint32_t ino, struct view_resize *out, void *ctx);
enum s3_err view_add_resize_hook(struct s3fs *fs, view_resize_fn *fn, void *ctx);
bool view_resize_of(struct s3fs *fs, uint32_t ino, struct view_resize *out);

/* -o rw: parts a view lets be replaced whole by new bytes stored after its container's
 * end, the container's record of the part pointed at them (a package resource's data: the
 * new bytes stored the way the old were, zlib or raw, its index entry's offset, sizes and
 * compression updated), so that rw knows no container's layout. Kept by the mount's top
 * view, like the table hooks; the first hook that knows ino fills *out: ino is the part's
 * file (data.bin) or the directory where a view nested in the part is shown (a Granny
 * resource's, whose compressed sections are stored raw in new bytes of the part). The
 * record's words, in the view's source, little-endian: the part's offset (u32: the part
 * must end below 4 GiB), its stored length (u32, stored_flags ORed in: flags the record
 * keeps), its expanded length (u32) and its codec (u16: codec_zlib or codec_raw). */
struct view_part {
    uint64_t offset_at, stored_at, memory_at, codec_at;
    uint32_t stored_flags;
    bool zlib; /* stored zlib-compressed again; else raw */
    uint16_t codec_zlib, codec_raw;
};
typedef bool view_part_fn(struct s3fs *fs, uint32_t ino, struct view_part *out, void *ctx);
enum s3_err view_add_part_hook(struct s3fs *fs, view_part_fn *fn, void *ctx);
bool view_part_of(struct s3fs *fs, uint32_t ino, struct view_part *out);

/* -o rw: data made of sections, some stored compressed (Granny data), that a view shows
 * and lets rw write into without rw knowing the format: rw writes a value, a table or
 * bytes into a compressed section's expanded bytes and stores the section raw (which the
 * format allows), recomputing the data's CRC. The view declares (view_add_section_hook_shared,
 * the Granny views), rw asks (view_section_of), as the part hook works for a package's
 * resources. What a view lends is opaque to rw (struct view_sections) with its functions
 * (struct view_sections_ops), and where its data lies: */
struct view_sections;
typedef enum s3_err view_bytes_use_fn(void *ctx, const uint8_t *bytes, size_t len, char *err, size_t errlen);
#define VIEW_SECTION_HEADER_MAX 64
/* A section stored raw, its new bytes going at `at` (relative to the data's start): what
 * changes besides them. `after` (malloc'd, the caller frees it) follows the section's
 * bytes (tables the format stored compressed with them); places are in the view's source. */
struct view_raw_plan {
    uint8_t header[VIEW_SECTION_HEADER_MAX]; /* the section's new header, */
    uint32_t header_len;
    uint64_t header_at; /* there */
    uint8_t *after;
    size_t after_len;
    uint64_t total;         /* the data's new length, */
    uint8_t total_bytes[4]; /* its length field's new bytes, */
    uint64_t total_at;      /* there */
};
struct view_sections_ops {
    /* section sec's expanded bytes handed to use() while pinned (within cache_mb): NOMEM,
     * IO when they cannot be had (err says why), else what use returns */
    enum s3_err (*expanded_use)(struct view_sections *s, uint32_t sec, view_bytes_use_fn *use, void *ctx, char *err,
                                size_t errlen);
    /* bytes [off, +len) of section sec's expanded bytes: S3_OK or IO */
    enum s3_err (*expanded_read)(struct view_sections *s, uint32_t sec, uint64_t off, void *buf, size_t len);
    /* section sec stored raw, len bytes at `at`: S3_OK or the reason, with why */
    enum s3_err (*raw_plan)(struct view_sections *s, uint32_t sec, uint64_t at, uint64_t len,
                            struct view_raw_plan *p, char *err, size_t errlen);
    /* the data's CRC rule, relative to its start: the field (4 bytes, order be), the bytes
     * it covers from `from` to the data's end; false when it has none, or the stored CRC
     * was wrong (not ours to fix) */
    bool (*crc_rule)(struct view_sections *s, uint64_t *field, uint64_t *from, bool *be);
};
/* What rw asks of node ino (and the data shown at directory dir): */
enum view_section_ask {
    VIEW_SECTION_DATA,  /* dir shows the data (its own file and directory): data, limit; crc */
    VIEW_SECTION_PLACE, /* ino's place in a compressed section's expanded bytes, in the data
                         * shown at dir: sec, off, len */
    VIEW_SECTION_FILE,  /* ino is a compressed section's expanded bytes (its data.bin): sec */
    VIEW_SECTION_BYTES, /* ino is stored bytes of a section (a table's NAME.bin): sec, off, len */
};
struct view_section {
    struct view_sections *s;
    const struct view_sections_ops *ops;
    struct s3fs *fs;   /* the view's: its source holds the data */
    uint64_t base;     /* where the data starts in that source, */
    uint64_t total;    /* the length its header says, */
    uint64_t avail;    /* the bytes there are from base on, */
    uint64_t limit;    /* what the data's own file shows (what exists of total) */
    bool crc_ok;       /* VIEW_SECTION_DATA: the crc fields hold the rule (crc_rule's) */
    uint64_t crc_field, crc_from, crc_to; /* in the view's source */
    bool crc_be;
    uint32_t sec;
    uint64_t off, len;
};
typedef bool view_section_fn(struct s3fs *fs, enum view_section_ask ask, uint32_t dir, uint32_t ino,
                             struct view_section *out, void *ctx);
enum s3_err view_add_section_hook_shared(struct s3fs *fs, view_section_fn *fn);
/* Asked without the tree lock (a hook may take it, and use tree_dir_ctx): the first hook
 * that knows fills *out. */
bool view_section_of(struct s3fs *fs, enum view_section_ask ask, uint32_t dir, uint32_t ino,
                     struct view_section *out);

/* -o rw: value files a view declares writable fields; rw infers none from their text or
 * bytes, and a value file no hook declares stays read-only (0444). A declaration: the
 * field's span in the source its directory reads, its elements' kind and byte order, per
 * line a label the text keeps before its values ("min", "max"; nlabels 0: none), and the
 * bits of each element the text does not show, kept from the file's bytes (`keep`, u32
 * elements only: a package index entry's size on disk shows its low 31 bits, bit 31 says
 * how long the record is; a value setting a kept bit is refused). A value lying in a
 * compressed Granny section is declared with off and len its place in the section's
 * expanded bytes (rw finds the section through view_section_of, VIEW_SECTION_PLACE).
 * Kept by the mount's top view, like the table hooks; view_value_of calls the hooks
 * without the tree lock (a hook may use the tree's accessors, tree_dir_ctx among them),
 * so a hook reads only what its view does not change once published. */
struct view_value {
    uint64_t off, len;
    enum field_kind kind;
    bool be;
    uint32_t nlabels;
    const char *const *labels;
    uint32_t keep;
};
typedef bool view_value_fn(struct s3fs *fs, uint32_t ino, struct view_value *out, void *ctx);
enum s3_err view_add_value_hook(struct s3fs *fs, view_value_fn *fn, void *ctx);
bool view_value_of(struct s3fs *fs, uint32_t ino, struct view_value *out);
/* The same hooks added once per mount, with a NULL ctx, however many views of a kind it
 * opens (the rigs, Granny files and packages a container or a folder holds): such a hook
 * finds its view from the file (tree_dir_ctx, tree_gen_ctx), so that asking about a file
 * costs the same with one nested view or thousands. S3_OK or NOMEM. */
enum s3_err view_add_value_hook_shared(struct s3fs *fs, view_value_fn *fn);
enum s3_err view_add_table_hook_shared(struct s3fs *fs, view_table_fn *fn);
enum s3_err view_add_resize_hook_shared(struct s3fs *fs, view_resize_fn *fn);
enum s3_err view_add_part_hook_shared(struct s3fs *fs, view_part_fn *fn);
/* For a hook: ino's field as published (its span and its type, a field type) in byte
 * order be, without labels; false when ino has no span or its type is no field type. */
bool view_value_as_published(struct tree *t, uint32_t ino, bool be, struct view_value *out);

/* A file an option names for its skeletons (-o skeleton=, -o rig=): opened by the open
 * layer before the view, as a tree of its own, and kept while the mount lives. */
struct skeleton_file {
    char *path;                /* absolute: the mount's daemon may change folders */
    struct s3fs *fs;           /* the file's own tree */
    const struct rig_set *set; /* view_skeletons(fs): one or more */
};

/* Opens view over src at dir of host's tree: s3fs_open_at (fs/open/open.h). */
typedef enum s3_err s3fs_open_at_fn(struct s3fs *host, uint32_t dir, const struct source *src, const char *origin,
                                    unsigned formats, struct s3fs **out, char *err, size_t errlen);

struct s3fs {
    struct source src;
    struct tree *tree;
    struct detect_result det;
    struct diag diag;   /* warnings for /info */
    struct cover cover; /* bytes named structures cover */
    struct sbuf facts;  /* format-specific "key: value" lines for /info */
    struct cache cache; /* expanded data, bounded */
    /* lines of /info that change while mounted (view_add_info_hook) */
    struct view_hooks info_hooks;
    struct s3fs_opts opts;
    uint64_t covered;
    struct range *gaps;
    size_t ngaps;
    /* Where the view sits: TREE_ROOT for a file mounted alone; for a view nested in
     * another (a file inside a container) the directory it was opened at, the id of its
     * source in the tree, and one /info line saying where that source lies in the
     * mounted file. A nested s3fs shares the tree and the cache of its host. */
    uint32_t root, src_id;
    bool nested;
    char origin[256];
    /* s3fs_open_at, put here by the open layer on every s3fs it makes: a view that holds
     * other files (a container's parts) opens them through it, so the format views
     * never call up into the dispatch that calls them. */
    s3fs_open_at_fn *open_at;
    /* the tables its views declare writable (view_add_table_hook) */
    struct view_hooks table_hooks;
    /* the parts its views let be replaced at another length (view_add_resize_hook) */
    struct view_hooks resize_hooks;
    /* the value files its views declare writable fields (view_add_value_hook) */
    struct view_hooks value_hooks;
    /* the parts its views let be replaced by bytes after the container's end (view_add_part_hook) */
    struct view_hooks part_hooks;
    /* the sectioned data its views let be written into (view_add_section_hook_shared) */
    struct view_hooks section_hooks;
    /* the hooks added once per mount (view_add_*_hook_shared), kept by the top view */
    void (*shared[16])(void);
    uint32_t nshared;
    /* -o rw: why a kind of part the view shows stays read-only, when one does (a static
     * text, set at open; /info shows it under -o rw); NULL: none */
    const char *rw_read_only_why;
    /* the skeletons the view offers (view_add_skeletons_hook, view_skeletons) */
    struct view_hooks skeletons_hooks;
    struct rig_set skeletons;
    bool skeletons_made;
    char skeletons_err[200];
    struct s3fs *host; /* the view that opened this one (a container), NULL at the top */
    /* -o skeleton=FILE (animations without a skeleton of their own play on its
     * first) and -o rig=FILE (meshes bind to one of its); NULL when not given. A nested
     * view shares its host's; only the top s3fs closes them. */
    struct skeleton_file *skeleton_file, *rig_file;
};

/* A format's view (the open column of src/formats.def): parses fs's source (refusing only
 * an unreadable top level) and gives fs's root its populate callback. S3_OK, or the
 * reason with err (empty err: the open layer says the reason). A view's header declares
 * it as `s3_view_open_fn CODE_view_open;`. */
typedef enum s3_err s3_view_open_fn(struct s3fs *fs, char *err, size_t errlen);

/* ---- helpers for views ---- */
uint32_t add_u32(struct tree *t, uint32_t dir, const char *name, uint32_t v, uint64_t abs_off);
uint32_t add_i32(struct tree *t, uint32_t dir, const char *name, int32_t v, uint64_t abs_off);
uint32_t add_hex32(struct tree *t, uint32_t dir, const char *name, uint32_t v, uint64_t abs_off);
/* A list file: one value per line; span = n·4 bytes at abs_off. A text up to
 * VIEW_TEXT_MAX, else rendered on read (view_add_form_rows): v must then live as long as
 * the tree (the form is derived again from it). */
uint32_t add_i32_list(struct s3fs *fs, uint32_t dir, const char *name, const int32_t *v, uint64_t n,
                      uint64_t abs_off);
uint32_t add_u32_list(struct s3fs *fs, uint32_t dir, const char *name, const uint32_t *v, uint64_t n,
                      uint64_t abs_off);
uint32_t add_hex32_list(struct s3fs *fs, uint32_t dir, const char *name, const uint32_t *v, uint64_t n,
                        uint64_t abs_off);
/* NAME.names beside a list of bone indices: names[idx] per line, "?" where the index
 * does not resolve (or the bone has no name). A text up to VIEW_TEXT_MAX, else rendered on
 * read (view_add_form_rows): idx and names must then live as long as the tree. */
uint32_t add_bone_names(struct s3fs *fs, uint32_t dir, const char *field, const int32_t *idx, uint64_t n,
                        char *const *names, uint32_t nnames);

/* Files of rows whose text the input sizes (value files, .names, tables): a text kept in
 * the tree only up to VIEW_TEXT_MAX bytes, else rendered on read from a compact form. */
#define VIEW_TEXT_MAX (64u << 10)
/* Rows past VIEW_TEXT_MAX whose compact form (the values, the decoded stream, strings'
 * places and their bytes once) is a cache item made again from the source, never a copy
 * kept in the tree (issue 32): within cache_mb, held by an open file, derived on the
 * first read and again once the cache let it go. The view hands the form it has now (for
 * the size, and the text when it fits) and how to make the same bytes again. */
/* Makes the form (malloc'd) from the source, or from arrays the view keeps while the tree
 * lives; runs as a cache producer (no tree lock): S3_OK, or the reason with err (the
 * read fails, EIO). */
typedef enum s3_err view_form_derive_fn(const void *ctx, uint8_t **form, size_t *len, char *err, size_t errlen);
/* Row k's text (no newline): S3_OK, *text set to its bytes and *len to its length,
 * either formatted into scratch (VIEW_ROW_SCRATCH bytes: numbers) or lying in form or in
 * what the view keeps while the tree lives (a row of any length, e.g. a string); or the
 * reason it cannot be formatted (LIMIT: longer than scratch, view_row_printed). */
#define VIEW_ROW_SCRATCH 64
typedef enum s3_err view_form_row_fn(const void *ctx, const uint8_t *form, uint64_t k, char *scratch,
                                     const char **text, size_t *len);
/* A row snprintf wrote into scratch, n its result: S3_OK and *len = n, or LIMIT when it
 * did not fit in VIEW_ROW_SCRATCH bytes (or snprintf failed). */
enum s3_err view_row_printed(int n, size_t *len);
struct view_form {
    view_form_derive_fn *derive;
    view_form_row_fn *row;
    const void *ctx; /* copied into the tree (ctx_size bytes): what derive needs, no bytes */
    size_t ctx_size;
};
/* The file of n rows in dir: a text when it fits in VIEW_TEXT_MAX, rendered now from form
 * (len bytes), else a generator over the derived form (len bytes again, or the read
 * fails) and marks of every 64th row's start. The new inode, or 0 (no memory: the listing
 * fails; a row that cannot be formatted: no file). */
uint32_t view_add_form_rows(struct s3fs *fs, uint32_t dir, const char *name, const char *xtype,
                            const struct view_form *f, const uint8_t *form, size_t len, uint64_t n);
/* Forms derived so far, process-wide (tests: a read after eviction derives again). */
uint64_t view_form_derivations(void);
/* Rows of such files whose bytes reads copied out, process-wide (tests: a read-through
 * copies each row once, and once more a row cut by the end of a read). */
uint64_t view_form_rows_rendered(void);
/* NAME.error holding msg and a newline. */
uint32_t add_error(struct tree *t, uint32_t dir, const char *name, const char *msg);
/* Where record i of list `list` (the caller's numbering) lies in the source (its span). */
typedef void view_span_fn(void *ctx, uint64_t list, uint32_t i, uint64_t *pos, uint64_t *size);
/* Directories "0" .. "n-1" in dir, of type xtype, each populated by fn(ctx, i) and spanning
 * what span(ctx, list, i) says; then "n.error" holding err when err is not empty (a list
 * cut by a broken record after n whole ones). Stops at the node limit (the tree reports
 * it). */
void view_add_numbered(struct tree *t, uint32_t dir, uint32_t n, const char *xtype, populate_fn fn, void *ctx,
                       view_span_fn *span, uint64_t list, const char *err);
/* Text files made of rows, measured once and rendered on read (tables, animation CSVs):
 * mark[i] is where row i × per_mark starts. A read at off renders from *row, which starts
 * at *start; false when off lies in the header (render it, then from row 0). */
bool rows_seek(const uint64_t *mark, uint64_t nrows, uint32_t per_mark, uint64_t header_len, uint64_t off,
               uint64_t *row, uint64_t *start);
/* Copies bytes [off, off+len) of the file out of text, which holds the file from start
 * on: the count copied. */
size_t rows_copy(const struct sbuf *text, uint64_t start, uint64_t off, void *buf, size_t len);
/* Sets a printf-made type string on a node. */
void set_typef(struct tree *t, uint32_t ino, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Makes the view's root directory with its populate callback: the tree's root (its span
 * the whole file), or the directory a nested view was opened at (which keeps the type and
 * span its host gave it: where the nested bytes lie in the host). S3_OK, S3_ERR_LIMIT (the
 * node limit) or S3_ERR_NOMEM (also when a range the view covers could not be recorded:
 * fs->cover.oom). */
enum s3_err view_root(struct s3fs *fs, const char *xtype, populate_fn fn, void *ctx);

/* Times /info was rendered under the tree lock, process-wide (tests: once per change,
 * however often it is measured). */
uint64_t view_info_renders(void);
/* Adds /info and /unparsed to the root (after the view has filled fs->cover). */
void add_info_and_unparsed(struct s3fs *fs, uint32_t root);

#endif
