/* What `-o rw` adds to a mount, apart from FUSE: which files are writable and where their
 * bytes lie in the file, the pending edits, the commit, and the tree generations.
 * - A generation is the tree of the file as committed last; a commit opens the new file
 *   as the next one. Whoever uses one holds it (rw_acquire*, rw_hold; rw_release), and
 *   the kernel's lookups of its inode numbers count too (rw_lookup, rw_forget): an older
 *   generation is freed as soon as nothing holds it. A generation's tree and fs are valid
 *   only while held. All of it is safe from any thread.
 * - A watched folder uses the same generations (rw_init_watch): a change seen there
 *   makes the next request open the folder again, as a commit does.
 * - rw_target, rw_put_*, rw_commit and rw_log are thread-safe (locks: secmu for the
 *   section copy, then mu for the edits and the commit, then logmu for the log, then gmu
 *   for the generations, in that order).
 * - Edits are not visible in the tree before they are committed. */
#ifndef S3_RW_H
#define S3_RW_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "fs/core/commit.h"
#include "fs/core/edit.h"
#include "fs/core/view.h"
#include "fs/open/open.h"

struct rw_gen {
    struct s3fs *fs;
    uint32_t epoch;
    struct rw_gen *prev; /* the next older one still alive (under rw->gmu) */
    uint64_t refs;       /* requests and handles holding it (under rw->gmu) */
    uint64_t lookups;    /* the kernel's lookup count of its inode numbers (under rw->gmu) */
    uint8_t *given;      /* a bit per node the kernel was given (under rw->gmu) */
    size_t given_bytes;
};

/* RW_RESOURCE: a package resource's data.bin; RW_GRANNY: a wrapped RIG's granny.gr2;
 * RW_SECTION: a compressed Granny section's data.bin (its expanded bytes), written back
 * stored raw; all replaced whole, at any size. */
enum rw_kind { RW_NONE, RW_VALUE, RW_BYTES, RW_RESOURCE, RW_GRANNY, RW_SECTION };

static inline bool rw_whole(enum rw_kind k)
{
    return k == RW_RESOURCE || k == RW_GRANNY || k == RW_SECTION;
}

/* A writable file: its bytes are [pos, pos+len) of the mounted file. */
struct rw_target {
    enum rw_kind kind;
    uint64_t pos, len;
    struct field_type ft; /* RW_VALUE (a table: ft.count bounds its text, 64 bytes a unit) */
    bool be;              /* RW_VALUE: the field's byte order */
    bool is_table;        /* RW_VALUE: a table a view declared (view_table_of): table */
    struct table_field table;
    uint32_t gr2_dir;     /* the directory holding the Granny data it lies in, 0: none */
    uint64_t gr2_pos, gr2_len;
    /* RW_RESOURCE (a package resource's data.bin, replaced whole, view_part_of): where its
     * index record's fields lie, how it is stored (zlib stays zlib, the rest becomes raw),
     * and the flag bits of its stored size */
    uint64_t f_offset, f_stored, f_memory, f_comp;
    bool zlib;
    uint32_t stored_flags;
    uint16_t codec_zlib, codec_raw; /* the compression word's values (view_part) */
    /* RW_SECTION: the Granny view (what it lends through the section hook, view_section_of:
     * opaque here, its functions gops, its s3fs gfs, its data's length gtotal) and
     * section; the Granny data starts at gr2_pos of the file and at gr2_base of the view's
     * source, and ends at the file's end */
    struct view_sections *gv;
    const struct view_sections_ops *gops;
    struct s3fs *gfs;
    uint64_t gtotal;
    uint32_t sec;
    uint64_t gr2_base;
    /* RW_VALUE inside a compressed section (gv, sec): the field is [sec_off, +len) of its
     * expanded bytes; written, the section is stored raw as RW_SECTION's are */
    bool in_section;
    uint64_t sec_off;
    /* RW_SECTION (or a value in one) whose Granny data is a wrapped RIG's granny.gr2
     * (gr2_pos, gr2_len): the section goes into new Granny bytes, which replace it whole */
    bool wrapped;
    /* RW_SECTION (or a value or NAME.bin in one) whose Granny data is a package resource's
     * whole data (a .gr2 resource): the section goes into the resource's new data, which
     * replaces its data.bin whole (the f_* fields, zlib, stored_flags: its index record) */
    bool in_resource;
    /* RW_GRANNY of a wrapped RIG that is a package resource's whole data, or RW_SECTION
     * (or a value or NAME.bin in one) of its Granny data: new RIG bytes (its view's resize
     * plan, `resize`, over them) replace the resource's data.bin whole (the f_* fields,
     * zlib, stored_flags: its index record); gr2_pos/gr2_len: granny.gr2 in the RIG */
    bool rig_in_resource;
    struct source *res_src; /* rig_in_resource: the resource's bytes (the RIG view's source) */
    /* in_resource or rig_in_resource, the resource stored raw: its bytes are one plain run
     * of the file from res_file_pos on, so the pending patches there (values written in
     * its uncompressed parts) are laid over them when its new data is made */
    bool res_in_file;
    uint64_t res_file_pos;
    /* RW_GRANNY (and a section in it): the view's declaration of the part (view_resize_of),
     * and where its container's head lies in the file */
    struct view_resize resize;
    uint64_t head_pos;
    /* RW_VALUE a view declared (view_value_of): each line's label, kept before its values,
     * and the bits of each (u32) element kept from the file's bytes */
    uint32_t nlabels;
    const char *const *labels;
    uint32_t keep;
};

/* The most bytes of a container's head a resize plan reads. */
#define RW_HEAD_MAX 256

/* The largest resource a write may replace. */
#define RW_RESOURCE_MAX (256u << 20)

#define RW_LOG_LINES 16

struct rw {
    struct commit_lock *lock;
    bool backup;
    struct s3fs_opts opts;
    struct rw_gen *cur; /* atomic; changed under gmu */
    pthread_mutex_t gmu; /* the list of generations and their counts; taken last */
    uint64_t gens_alive, gens_most, gens_freed;
    uint32_t epoch; /* atomic: the current generation's */
    pthread_mutex_t mu; /* pending, gr2, commits */
    struct edits pending;
    struct rw_gr2 {
        uint32_t dir;
        uint64_t pos, len;
        uint64_t grown; /* bytes appended to it (sections stored raw at its end) */
    } *gr2;
    size_t ngr2;
    uint64_t commits;
    /* atomic, for /info: pending bytes, those in memory, the most in memory at once */
    uint64_t pending_now, mem_now, mem_most;
    /* atomic, for /info: editors' temporaries (fuse_ll.c's), their bytes, those in
     * memory, the most in memory at once (rw_note_temps) */
    uint64_t temps_now, temps_mem_now, temps_mem_most;
    bool watch; /* a watched folder (rw_init_watch): no edits, reopened from its path */
    /* atomic: changes asked for (a commit, the watch), and how many of them the newest
     * generation was opened after; rw_acquire opens again while they differ, so a change
     * made while a generation is being opened gets one of its own */
    uint64_t stale, opened;
    bool said_sections; /* atomic: /info said why compressed sections are read-only here */
    /* the pending splice's file holds, in its first wrapped_len bytes, new Granny bytes of
     * a wrapped RIG (sections stored raw in them): later section writes build on them;
     * stale once the splice is gone */
    bool wrapped_live;
    uint64_t wrapped_len;
    uint64_t wrapped_serial; /* counts the wrapped Granny bytes made: which a write built on */
    /* atomic, for /info: bytes of content held in memory by writes (the chunks content
     * streams through), now and at most at once */
    uint64_t held_now, held_most;
    /* atomic, for /info: renames (sed -i) answered at their deadline, before the kernel
     * was told of the tree they committed (fuse_ll.c op_rename) */
    uint64_t renames_late;
    /* atomic, for /info: bytes written into scratch files (section copies, new Granny,
     * RIG or resource bytes made around a section, whole replacements' splices) */
    uint64_t scratch_written;
    /* atomic, for /info (and the tests' count of what one write costs): bytes rw wrote
     * into files (scratch files and the pending edits' tail) during the last value or
     * bytes write into a compressed section, before any commit */
    uint64_t last_section_write;
    /* atomic: bytes appended to the pending edits' tail (a section stored raw, a
     * resource's new content); with scratch_written what last_section_write is made of */
    uint64_t tail_written;
    /* the section copy's users, one at a time (its file is read while a section is
     * stored raw from it, outside mu); taken before mu */
    pthread_mutex_t secmu;
    /* under secmu: the expanded bytes of the compressed section values were written into
     * last, with those writes (until the commit), in an unlinked file beside the source
     * (never in memory: a section may be larger than cache_mb) */
    struct rw_section_copy {
        struct view_sections *gv;
        uint32_t sec;
        int fd;       /* the file + 1 (0: no copy); its first len bytes are the copy */
        uint64_t len;
        /* bytes written into it (a NAME.bin of the section) not stored yet: stored raw
         * once, at the next commit, by `target` (a writable file of the section), whose
         * path the log names */
        bool dirty;
        /* stored raw at least once since it was made: a value written into it after
         * only marks it dirty (stored again at the commit, O(value) now), the first one
         * stores it at once, so that what refuses storing it refuses that write */
        bool stored;
        /* the index record's offset field of the package resource the section lies in
         * (0: none): a replacement of that resource's data.bin supersedes the copy */
        uint64_t res_record;
        uint64_t serial; /* which copy this is (rw->seccopies counts those made) */
        struct rw_target target;
        char path[256];
    } seccopy;
    uint64_t seccopies; /* section copies made (their serials) */
    /* the compressed sections stored raw since the last commit, in the order stored: where
     * each copy starts (its padding first), in the pending tail or in the wrapped RIG's new Granny bytes; the
     * last one written again is stored again in its place, so that no earlier copy is left
     * in the file unreferenced */
    struct rw_raw_copy {
        struct view_sections *gv;
        uint32_t sec;
        bool wrapped;
        uint64_t from;
    } *raw;
    size_t nraw, capraw;
    /* the package resources appended since the last commit, in the tail's order: where
     * the index record's offset field is, the copy's range of the pending tail, and the
     * offset written there. A resource replaced again leaves its copy of before a hole of
     * the tail (written nowhere), and the commit moves each offset down by the holes
     * before its copy (rw_commit), so that the new file holds only referenced copies. */
    struct rw_res_copy {
        uint64_t f_offset, from, to;
        uint32_t word;
        /* the bytes of the file the record pointed at before ([was_from, was_to)): a
         * write there is refused while the copy is pending (it would go to bytes no
         * longer the resource's) */
        uint64_t was_from, was_to;
        /* made by a write into the section copy (seccopy) of section `sec` of view gv,
         * the copy's serial: a later write into that same copy (which holds every write
         * made into it) makes the resource again, replacing it */
        bool of_copy;
        struct view_sections *gv;
        uint32_t sec;
        uint64_t copy_serial;
        bool whole; /* made by a replacement of its data.bin (not by a write inside it) */
    } *res;
    size_t nres, capres;
    pthread_mutex_t logmu;
    char log[RW_LOG_LINES][320];
    uint64_t nlog;
};

/* fs becomes generation 0, rw's from then on (closed when freed); 0 or -ENOMEM (then
 * fs is still the caller's). */
int rw_init(struct rw *rw, struct s3fs *fs, struct commit_lock *lock, bool backup, const struct s3fs_opts *opts);
/* A watched folder's generations, without edits or commits: fs becomes generation 0 (as
 * for rw_init), rw_mark_stale makes the next rw_acquire open the folder again as the
 * next one. */
int rw_init_watch(struct rw *rw, struct s3fs *fs, const struct s3fs_opts *opts);
void rw_mark_stale(struct rw *rw);
/* Frees every generation left, held or not (at the end, when no request runs). */
void rw_free(struct rw *rw);
/* The current generation, held (a committed file is opened first). */
struct rw_gen *rw_acquire(struct rw *rw);
/* The generation of that epoch, held; NULL when there is none (any more). */
struct rw_gen *rw_acquire_epoch(struct rw *rw, uint32_t epoch);
/* The newest generation older than epoch `before`, held; NULL when none is alive. */
struct rw_gen *rw_acquire_before(struct rw *rw, uint32_t before);
/* One more hold on a generation the caller holds. */
void rw_hold(struct rw *rw, struct rw_gen *g);
/* Lets go of a hold; the generation is freed when it was the last and a newer one is
 * current. */
void rw_release(struct rw *rw, struct rw_gen *g);
/* The kernel was given one more lookup of node ino of g (counted before the reply: the
 * caller holds g). */
void rw_lookup(struct rw *rw, struct rw_gen *g, uint32_t ino);
/* The nodes of g (held) the kernel was ever given, as a bitmap (a copy, malloc'd, *bytes
 * long; NULL when none or out of memory). */
uint8_t *rw_copy_given(struct rw *rw, struct rw_gen *g, size_t *bytes);
/* The kernel forgot n lookups of an inode number of that epoch. */
void rw_forget(struct rw *rw, uint32_t epoch, uint64_t n);
/* The current generation's epoch (without holding it). */
uint32_t rw_epoch(struct rw *rw);
/* Generations alive now, the most alive at once, and freed so far. */
void rw_gen_counts(struct rw *rw, uint64_t *alive, uint64_t *most, uint64_t *freed);
/* True when node ino of g is writable (what, where: *t). */
bool rw_target(struct rw *rw, struct rw_gen *g, uint32_t ino, struct rw_target *t);
/* Bytes [off, off+len) of a RW_BYTES file: 0, -EFBIG past its end, -ENOMEM. */
int rw_put_bytes(struct rw *rw, const struct rw_target *t, uint64_t off, const void *b, size_t len);
/* A whole file's new content. RW_RESOURCE: stored after the file's end (zlib when it was,
 * else raw) and its index record pointed at it. RW_SECTION: stored raw after the Granny
 * data's end (the file's), the section header and total_size changed to say so. RW_GRANNY: the Granny data replaced in
 * place, what follows moved, the wrapper's offsets (and its Granny size) updated. 0,
 * -EFBIG (past 4 GiB), -EBUSY (another such replacement pending), -ENOMEM. */
int rw_put_whole(struct rw *rw, const struct rw_target *t, const char *path, const void *data, size_t len);
/* What a write to a RW_VALUE file can already refuse (field_check_prefix; a table
 * only at the close): 0 or -EINVAL with why. */
int rw_check_prefix(const struct rw_target *t, const char *text, size_t len, char *why, size_t whylen);
/* The same from the first len bytes of file fd, read piece by piece: a resource's new
 * content goes to the pending edits' file (edits_spill), a Granny part to a file of its
 * own (the wrapper's splice), neither held in memory. */
int rw_put_whole_fd(struct rw *rw, const struct rw_target *t, const char *path, int fd, uint64_t len);
/* A RW_VALUE file's whole new text: 0, or -EINVAL (logged with path and why), -ENOMEM. */
int rw_put_value(struct rw *rw, const struct rw_target *t, const char *path, const char *text, size_t len);
/* Commits the pending edits (nothing to do: 0). On success the next generation is the
 * current one (unless reopen is false: at unmount). -errno of the refusal or failure
 * otherwise, logged; the edits stay pending. */
int rw_commit(struct rw *rw, bool reopen);
/* The edits a commit could not write (at unmount), kept: the new version written whole
 * as FILE.s3rig-unsaved beside the file (never over it: .1 ... .9 when taken), else in
 * $TMPDIR or /tmp. 1 with its path in where, 0 when nothing is pending, -errno when it
 * could be written nowhere; *why: the errno that kept it from beside the file (0: none);
 * *left_out: the errno that kept a compressed section's writes since its last store out
 * of it (0: none left out). */
int rw_save_unsaved(struct rw *rw, char *where, size_t wherelen, int *why, int *left_out);
/* What editors' temporaries hold now (bytes) and of it in memory, for /info. */
void rw_note_temps(struct rw *rw, uint64_t bytes, uint64_t in_mem);
void rw_log(struct rw *rw, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A node's path from the root ("/a/b", "" for the root), malloc'd; NULL when out of memory. */
char *rw_path(struct tree *t, uint32_t ino);

#endif
