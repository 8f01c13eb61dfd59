/* The mounted file, opened once before the FUSE loop starts. Reads use pread (never
 * mmap, so a truncated file cannot raise SIGBUS) and every read first checks that the
 * file is still the one that was parsed: a changed, truncated or deleted source turns
 * into -EIO instead of wrong bytes. A source may also be a memory buffer (tests). */
#ifndef S3_SOURCE_H
#define S3_SOURCE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "parse/reader.h"

struct source {
    int fd;                /* -1 for memory sources */
    const uint8_t *mem;
    char *path;            /* absolute */
    uint64_t size;
    struct stat st;        /* as opened */
    struct s3_src src;     /* read callback for the parsers */
};

int source_open(struct source *s, const char *path, char *err, size_t errlen);
void source_mem(struct source *s, const void *data, uint64_t size);
void source_close(struct source *s);

/* 0 while the file is unchanged, -EIO otherwise. Called once per operation that reads
 * the file (a read request, a directory's first listing), not per pread. */
int source_check(struct source *s);
/* Reads exactly len bytes at off: 0, or -EIO (short), -ERANGE (outside). */
int source_pread(struct source *s, uint64_t off, void *buf, size_t len);
/* source_check, then source_pread. */
int source_pread_checked(struct source *s, uint64_t off, void *buf, size_t len);

/* A read-ahead window over a source, for parsers that read many small neighbouring
 * fields (t2fs directories and their children): one pread per 64 KiB instead of one per
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
