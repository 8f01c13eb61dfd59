/* Pending edits of the mounted file and the encoders that make them: what `-o rw` writes.
 * - What can fail returns enum s3_err: INVALID for refused text (why: the reason), NOMEM,
 *   BUSY, or the OS's reason (NOSPACE for a full disk).
 * - field_type_parse / field_encode: a value file's type -> its field's kind and count;
 *   the text a user wrote -> the field's bytes (blank-separated values, one or more a
 *   line, no empty line, a final newline optional).
 * - struct edits: byte patches over the file, kept sorted and merged (a later write wins),
 *   bytes appended after its end (after edits_spill in an unlinked file, costing no
 *   memory); edits_write streams the file with them applied (one buffer), then stores
 *   each CRC-32 fix.
 * - Not thread-safe: the caller serialises every use of one struct edits. */
#ifndef S3_EDIT_H
#define S3_EDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parse/base/err.h"

/* FIELD_U64: table cells only (value files of 8 bytes stay read-only). */
enum field_kind { FIELD_U8, FIELD_I8, FIELD_U16, FIELD_I16, FIELD_U32, FIELD_I32, FIELD_F32, FIELD_U64 };

struct field_type {
    enum field_kind kind;
    uint32_t size;  /* bytes per element */
    uint64_t count; /* elements (lines) */
};

/* Largest field (in bytes) a value file may stand for. */
#define FIELD_MAX_BYTES (1u << 20)

enum s3_err field_type_parse(const char *xtype, uint64_t span_len, struct field_type *ft);
/* out holds ft->size * ft->count bytes. */
enum s3_err field_encode(const struct field_type *ft, bool be, const char *text, size_t len, uint8_t *out,
                         char *why, size_t whylen);
/* What a write can already refuse: a complete line (ended by '\n') that does not parse or
 * fit, or more lines than elements (INVALID). S3_OK otherwise. */
enum s3_err field_check_prefix(const struct field_type *ft, const char *text, size_t len, char *why, size_t whylen);

/* A table file a view declares writable (view_add_table_hook): a CSV over an array of
 * fixed-size records of the file. Its text is a header line, then one row per record: the
 * record's number first when `numbered`, then each column's cells, comma-separated.
 * - table_encode: the whole new text -> the records' bytes. recs holds nrec·stride bytes,
 *   the current ones on entry (bytes no column covers stay, and an f32 cell that is NaN
 *   in both keeps its old bits); INVALID with why when the header, a row's number, a
 *   cell or a count is wrong (then recs is half-written: the caller discards it).
 * - A table with its own encoder (tf->encode: rows of several sizes) is encoded by it.
 * - A derived column (derive set) is one cell that shows what other bytes of the record
 *   make (a name looked up, bits of a word): it is not stored; a write must leave it as
 *   the record's old bytes or its new ones show it, else INVALID naming the column. */
struct table_col {
    enum field_kind kind;
    uint32_t offset; /* in the record */
    uint32_t count;  /* cells: that many consecutive elements */
    bool raw;        /* one cell: count bytes as hex digits, two a byte (kind unused) */
    /* derived: the cell's text from a record's bytes (into out, NUL-ended) */
    void (*derive)(const uint8_t *rec, const void *ctx, char *out, size_t outlen);
    const void *derive_ctx;
    const char *name; /* a derived column's name, for refusals */
};

struct table_field {
    uint64_t off; /* the first record, in the source of the file's directory */
    uint32_t nrec, stride;
    bool numbered, be;
    const char *header;           /* the first line, without its newline */
    const struct table_col *cols; /* the view's: live as long as its tree */
    uint32_t ncols;
    /* rows that are not one a record (records of several sizes, a GEOM's UV stitches):
     * the view's own encoder of the whole text into the nrec·stride bytes (the current
     * ones on entry, as for table_encode), and the rows its text has (0: nrec), which
     * bound what a write may hold; cols then only count a row's cells */
    enum s3_err (*encode)(const struct table_field *tf, const char *text, size_t len, uint8_t *bytes, char *why,
                          size_t whylen);
    const void *encode_ctx;
    uint32_t text_rows;
};

enum s3_err table_encode(const struct table_field *tf, const char *text, size_t len, uint8_t *recs, char *why,
                         size_t whylen);
/* Cells a row of tf holds (its number included). */
uint64_t table_row_cells(const struct table_field *tf);

struct edit {
    uint64_t off;
    size_t len, cap;
    uint8_t *bytes;
};

struct edits {
    struct edit *e; /* sorted by offset, neither overlapping nor touching */
    size_t n, cap;
    uint8_t *tail; /* bytes appended after the file's end */
    size_t tail_len, tail_cap;
    int spill_dir; /* edits_spill: the folder of the tail's file, +1 (0: in memory) */
    int tail_fd;   /* that file, +1 (0: not made yet); its first tail_len bytes are the tail */
    /* one range of the file replaced by bytes of another length (splice_to > splice_from,
     * or both 0: none); edits inside it are dropped, the others keep their offsets in the
     * old file */
    uint64_t splice_from, splice_to;
    uint8_t *splice;
    size_t splice_len;
    int splice_fd; /* edits_splice_file: fd + 1 of the file whose first splice_len bytes
                    * are the splice (0: in memory) */
    /* ranges of the tail no longer referenced (a resource replaced again before a
     * commit): sorted, neither overlapping nor touching; edits_write leaves them out, so
     * what follows one moves down by its length (edits_tail_written) */
    struct tail_hole {
        uint64_t from, to;
    } *holes;
    size_t nholes, capholes;
};

/* Replaces [off, off+len) by b in the pending bytes: S3_OK or NOMEM (then nothing changed). */
enum s3_err edits_put(struct edits *e, uint64_t off, const void *b, size_t len);
/* Appends b after the file's end (after what was appended before): S3_OK, NOMEM, or the
 * reason writing the tail's file failed (then nothing changed). */
enum s3_err edits_append(struct edits *e, const void *b, size_t len);
/* An unlinked file in folder dirfd (O_TMPFILE, or a name removed at once where the file
 * system has none), read-write, into *fd; the OS's reason when none can be made. */
enum s3_err edits_scratch(int dirfd, int *fd);
/* The tail cut back to its first len bytes (what a failed append added taken back). */
void edits_cut_tail(struct edits *e, size_t len);
/* From now on appended bytes go to an unlinked file made in folder dirfd (kept by the
 * caller open while the edits live), not to memory. */
void edits_spill(struct edits *e, int dirfd);
/* Bytes of pending edits held in memory (patches, the tail when not spilled, the
 * splice when not in a file). */
uint64_t edits_mem_bytes(const struct edits *e);
/* Replaces [from, to) of the file by b (taken: malloc'd, freed with the edits): S3_OK,
 * or BUSY when a splice is already pending. */
enum s3_err edits_splice(struct edits *e, uint64_t from, uint64_t to, uint8_t *b, size_t len);
/* The pending bytes of [pos, pos+n) laid over buf (which holds the file's). */
void edits_overlay(const struct edits *e, uint64_t pos, uint8_t *buf, size_t n);
/* The same with the bytes in the first len bytes of file fd (taken: closed with the
 * edits), so that they cost no memory. */
enum s3_err edits_splice_file(struct edits *e, uint64_t from, uint64_t to, int fd, size_t len);
/* The pending splice dropped (its bytes freed, its file closed), to be replaced. */
void edits_drop_splice(struct edits *e);
/* [from, to) of the tail is referenced no more: left out when the file is written (S3_OK
 * or NOMEM, then nothing changed). */
enum s3_err edits_tail_hole(struct edits *e, uint64_t from, uint64_t to);
/* Where tail byte pos (not in a hole) lands in the written tail: pos less the holes'
 * bytes before it. */
uint64_t edits_tail_written(const struct edits *e, uint64_t pos);

/* An all-or-nothing change of the pending edits: the tail's length when it began, and
 * each patch put through edits_put_undoable with what the bytes were before; edits_undo
 * takes it all back without allocating (a patch that made a new edit is removed, one
 * that changed pending bytes gets them back), so a write refused half-way leaves nothing
 * pending of it (no appended bytes, no header word). */
#define EDITS_UNDO_PUTS 8
#define EDITS_UNDO_BYTES 64
struct edits_undo {
    size_t tail_len;
    unsigned n;
    struct undo_put {
        uint64_t off;
        uint32_t len;
        bool fresh; /* it made an edit of its own (none overlapped or touched it) */
        uint8_t was[EDITS_UNDO_BYTES];
    } put[EDITS_UNDO_PUTS];
};
void edits_undo_begin(const struct edits *e, struct edits_undo *u);
/* edits_put of len <= EDITS_UNDO_BYTES bytes, remembered in u; file_bytes: what the
 * file holds at [off, off+len) (the pending bytes are laid over them). S3_OK, NOMEM, or
 * LIMIT when u is full or the patch too long (then nothing changed). */
enum s3_err edits_put_undoable(struct edits *e, struct edits_undo *u, uint64_t off, const void *b, size_t len,
                               const uint8_t *file_bytes);
/* Everything put through u since edits_undo_begin taken back, and the tail cut to its
 * length then (a hole is made last, when nothing is left to fail: it is not undone). */
void edits_undo(struct edits *e, const struct edits_undo *u);
/* Tests: the k-th edits_put from now (1: the next) fails with NOMEM, once; 0: none. */
void edits_test_fail_put(uint64_t k);

/* True when a pending edit touches [off, off+len). */
bool edits_touch(const struct edits *e, uint64_t off, uint64_t len);
uint64_t edits_bytes(const struct edits *e);
/* Drops every edit (the tail's file too); edits_spill stays in force. */
void edits_clear(struct edits *e);

/* A CRC-32 (zlib's) over the new bytes [from, to) (which may run on into the appended
 * bytes), stored at field_off in byte order be. */
struct crc_fix {
    uint64_t field_off, from, to;
    bool be;
};

/* Writes in_fd's first in_size bytes with the edits applied to out_fd (a fresh file, at
 * its start), then the appended bytes but their holes, then the CRC fixes (a range past
 * in_size is in the written file's offsets) (the write-back of what it
 * wrote started as it goes: the fsync after it waits for little): S3_OK or the reason. */
enum s3_err edits_write(int in_fd, uint64_t in_size, const struct edits *e, const struct crc_fix *fix,
                        size_t nfix, int out_fd);

#endif
