/* Byte sources: the mounted file (pread, never mmap), bytes in memory, a slice of another
 * source, or the expanded bytes of a compressed part, held by the bounded cache.
 * - Every read checks that the file is still the one parsed: a changed or truncated file
 *   reads as -EIO at every level of derived sources, never as other bytes.
 * - An expanded source pins its item per read; an evicted item is expanded again, unless
 *   held (source_hold / source_release, which pair).
 * - A view reads only through its source, whichever kind it is. */
#ifndef S3_SOURCE_H
#define S3_SOURCE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "fs/core/cache.h"
#include "parse/base/reader.h"

/* SOURCE_MEM first: a zeroed source is an empty memory source, never descriptor 0. */
enum source_kind { SOURCE_MEM, SOURCE_FILE, SOURCE_SLICE, SOURCE_EXPANDED };

struct source {
    enum source_kind kind;
    int fd;                /* SOURCE_FILE only; -1 for every other kind */
    const uint8_t *mem;    /* SOURCE_MEM */
    char *path;            /* SOURCE_FILE: absolute */
    uint64_t size;
    struct stat st;        /* SOURCE_FILE: as opened */
    struct source *parent; /* SLICE, EXPANDED: the source the bytes come from (must outlive this) */
    uint64_t base;         /* SLICE: where the slice starts in parent */
    struct cache *cache;   /* EXPANDED: the cache holding the item */
    struct cached *item;   /* EXPANDED: its producer reads parent */
    struct s3_src src;     /* read callback for the parsers */
};

/* Opens the regular file at path as a SOURCE_FILE. S3_OK; else the OS's reason
 * (NOT_FOUND, DENIED, NOMEM, ...), IS_DIR for a directory, INVALID for another
 * non-regular file; each with err ("PATH: why"). */
enum s3_err source_open(struct source *s, const char *path, char *err, size_t errlen);
void source_mem(struct source *s, const void *data, uint64_t size);
/* [off, off+len) of parent (clipped to what exists). */
void source_slice(struct source *s, struct source *parent, uint64_t off, uint64_t len);
/* size bytes produced by `item` in cache c; parent is checked for changes. */
void source_expanded(struct source *s, struct source *parent, struct cache *c, struct cached *item,
                     uint64_t size);
/* Copies a source description (its read callback must point at the copy). */
void source_move(struct source *dst, const struct source *src);
void source_close(struct source *s);

/* S3_OK while the file is unchanged, S3_ERR_IO otherwise. Called once per operation that
 * reads the file (a read request, a directory's first listing), not per pread. */
enum s3_err source_check(struct source *s);
/* Reads exactly len bytes at off: S3_OK, or IO (short), RANGE (outside). */
enum s3_err source_pread(struct source *s, uint64_t off, void *buf, size_t len);
/* source_check, then source_pread. */
enum s3_err source_pread_checked(struct source *s, uint64_t off, void *buf, size_t len);
/* When bytes at off of s are a plain range of an open file (the file itself or a slice
 * of it): 0 with the descriptor and the position in the file (for zero-copy replies).
 * -1 otherwise (memory, expanded data). */
int source_file_pos(const struct source *s, uint64_t off, int *fd, uint64_t *pos);
/* The mounted file under s (following slices and expansions): NULL for memory. */
const struct source *source_root(const struct source *s);

/* Holds the expanded bytes s reads (each expanded source in its chain) in their cache
 * until source_release, producing nothing: a file handle or a listing that reads s many
 * times expands them once, whatever the cache's size (cache.h). Nothing to hold for the
 * file, memory, or slices of them. Calls must pair. */
void source_hold(struct source *s);
void source_release(struct source *s);
/* The same for an open file handle (cache_hold_handle: taken and let go on any thread). */
void source_hold_handle(struct source *s);
void source_release_handle(struct source *s);
/* True when s reads expanded bytes somewhere in its chain (something to hold). */
bool source_expands(const struct source *s);

/* A read-ahead window over a source, for parsers that read many small neighbouring
 * fields (directory tables and their children): one pread per 64 KiB instead of one per
 * field or per directory. It holds bytes read earlier: check the source is unchanged
 * (source_check) before each use that may follow a change. */
#define SOURCE_WINDOW 65536
struct source_window {
    struct source *src;
    uint64_t off;
    size_t len;
    uint8_t buf[SOURCE_WINDOW];
    struct s3_src view; /* the s3_src to hand to parsers */
};
void source_window_init(struct source_window *w, struct source *src);

#endif
