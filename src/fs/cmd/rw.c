/* -o rw: writable files, pending edits, commits and tree generations (rw.h). */
#include "fs/cmd/rw.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs/core/sbuf.h"
#include "parse/base/err.h"

#include <zlib.h>

static void info_lines(struct s3fs *fs, struct sbuf *out, void *ctx);
static void watch_info_lines(struct s3fs *fs, struct sbuf *out, void *ctx);

/* ---- generations ---- */

static struct rw_gen *newest(struct rw *rw)
{
    return __atomic_load_n(&rw->cur, __ATOMIC_ACQUIRE);
}

static int gen_add(struct rw *rw, struct s3fs *fs, uint32_t epoch);

static void gen_init_locks(struct rw *rw)
{
    pthread_mutex_init(&rw->secmu, NULL);
    pthread_mutex_init(&rw->mu, NULL);
    pthread_mutex_init(&rw->logmu, NULL);
    pthread_mutex_init(&rw->gmu, NULL);
}

/* The -errno this file's functions return for a reason of edit.c's or commit.c's (0 for
 * S3_OK; a full disk stays ENOSPC, a changed file EBUSY). */
static int neg_errno_of(enum s3_err e)
{
    return -s3_err_errno(e);
}

int rw_init(struct rw *rw, struct s3fs *fs, struct commit_lock *lock, bool backup, const struct s3fs_opts *opts)
{
    memset(rw, 0, sizeof *rw);
    rw->lock = lock;
    rw->backup = backup;
    rw->opts = *opts;
    edits_spill(&rw->pending, lock->dirfd); /* appended resources: a file beside the source */
    /* tests only: S3RIG_TEST_FAIL_EDIT=K makes the K-th patch of the pending edits fail
     * for lack of memory (once), so that a mount test sees a write refused half-way */
    const char *fail_edit = getenv("S3RIG_TEST_FAIL_EDIT");
    if (fail_edit)
        edits_test_fail_put(strtoull(fail_edit, NULL, 10));
    gen_init_locks(rw);
    return gen_add(rw, fs, 0);
}

int rw_init_watch(struct rw *rw, struct s3fs *fs, const struct s3fs_opts *opts)
{
    memset(rw, 0, sizeof *rw);
    rw->watch = true;
    rw->opts = *opts;
    gen_init_locks(rw);
    return gen_add(rw, fs, 0);
}

void rw_mark_stale(struct rw *rw)
{
    __atomic_add_fetch(&rw->stale, 1, __ATOMIC_RELEASE);
}

void rw_free(struct rw *rw)
{
    for (struct rw_gen *g = rw->cur, *prev; g; g = prev) {
        prev = g->prev;
        s3fs_close(g->fs);
        free(g->given);
        free(g);
    }
    rw->cur = NULL;
    edits_clear(&rw->pending);
    free(rw->gr2);
    if (rw->seccopy.fd)
        close(rw->seccopy.fd - 1);
    free(rw->raw);
    free(rw->res);
    pthread_mutex_destroy(&rw->secmu);
    pthread_mutex_destroy(&rw->mu);
    pthread_mutex_destroy(&rw->logmu);
    pthread_mutex_destroy(&rw->gmu);
}

/* Under gmu: takes g out of the list when nothing holds it and it is not the current one
 * (true: the caller frees it, after letting go of gmu). */
static bool gen_unlink_unheld(struct rw *rw, struct rw_gen *g)
{
    struct rw_gen *cur = newest(rw);
    if (g == cur || g->refs || g->lookups)
        return false;
    for (struct rw_gen **p = &cur->prev; *p; p = &(*p)->prev)
        if (*p == g) {
            *p = g->prev;
            rw->gens_alive--;
            rw->gens_freed++;
            return true;
        }
    return false;
}

static struct rw_gen *acquire_newest(struct rw *rw);

/* Its tree, its sources (package fds) and its cache go; outside every lock of ours. The
 * current tree's /info shows the counts: it is rendered again. */
static void gen_destroy(struct rw *rw, struct rw_gen *g)
{
    s3fs_close(g->fs);
    free(g->given);
    free(g);
    struct rw_gen *cur = acquire_newest(rw);
    if (cur)
        tree_touch(cur->fs->tree);
    rw_release(rw, cur);
}

/* The next generation becomes the current one; the one before is freed at once when
 * nothing holds it. */
static int gen_add(struct rw *rw, struct s3fs *fs, uint32_t epoch)
{
    struct rw_gen *g = calloc(1, sizeof *g);
    if (!g || view_add_info_hook(fs, rw->watch ? watch_info_lines : info_lines, rw)) {
        free(g);
        return -ENOMEM;
    }
    g->fs = fs;
    g->epoch = epoch;
    pthread_mutex_lock(&rw->gmu);
    struct rw_gen *old = newest(rw);
    g->prev = old;
    __atomic_store_n(&rw->cur, g, __ATOMIC_RELEASE);
    __atomic_store_n(&rw->epoch, epoch, __ATOMIC_RELEASE);
    rw->gens_alive++;
    if (rw->gens_alive > rw->gens_most)
        rw->gens_most = rw->gens_alive;
    bool gone = old && gen_unlink_unheld(rw, old);
    pthread_mutex_unlock(&rw->gmu);
    if (gone)
        gen_destroy(rw, old);
    return 0;
}

static void reopen(struct rw *rw, struct rw_gen *g);

/* The newest generation, held, without opening a committed file (callers that may hold
 * rw->mu). */
static struct rw_gen *acquire_newest(struct rw *rw)
{
    pthread_mutex_lock(&rw->gmu);
    struct rw_gen *g = newest(rw);
    if (g)
        g->refs++;
    pthread_mutex_unlock(&rw->gmu);
    return g;
}

/* The file committed last is opened by the first caller after the commit (not by the
 * commit: the close that made it returns as soon as the file is in place); callers
 * meanwhile wait for it, so none sees the tree before. */
struct rw_gen *rw_acquire(struct rw *rw)
{
    if (__atomic_load_n(&rw->stale, __ATOMIC_ACQUIRE) != __atomic_load_n(&rw->opened, __ATOMIC_ACQUIRE)) {
        pthread_mutex_lock(&rw->mu);
        /* the watch counts changes without the lock; `opened` moves once the new
         * generation is in place, so other callers wait for it rather than see the old
         * tree; a change counted while it opens stays ahead, and the next call (the
         * notifier's, which that change woke) opens again */
        uint64_t want = __atomic_load_n(&rw->stale, __ATOMIC_ACQUIRE);
        if (want != __atomic_load_n(&rw->opened, __ATOMIC_ACQUIRE)) {
            reopen(rw, newest(rw));
            __atomic_store_n(&rw->opened, want, __ATOMIC_RELEASE);
        }
        pthread_mutex_unlock(&rw->mu);
    }
    return acquire_newest(rw);
}

struct rw_gen *rw_acquire_epoch(struct rw *rw, uint32_t epoch)
{
    pthread_mutex_lock(&rw->gmu);
    struct rw_gen *g = newest(rw);
    while (g && g->epoch != epoch)
        g = g->prev;
    if (g)
        g->refs++;
    pthread_mutex_unlock(&rw->gmu);
    return g;
}

struct rw_gen *rw_acquire_before(struct rw *rw, uint32_t before)
{
    pthread_mutex_lock(&rw->gmu);
    struct rw_gen *g = newest(rw);
    while (g && g->epoch >= before)
        g = g->prev;
    if (g)
        g->refs++;
    pthread_mutex_unlock(&rw->gmu);
    return g;
}

void rw_hold(struct rw *rw, struct rw_gen *g)
{
    pthread_mutex_lock(&rw->gmu);
    g->refs++;
    pthread_mutex_unlock(&rw->gmu);
}

void rw_release(struct rw *rw, struct rw_gen *g)
{
    if (!g)
        return;
    pthread_mutex_lock(&rw->gmu);
    g->refs--;
    bool gone = gen_unlink_unheld(rw, g);
    pthread_mutex_unlock(&rw->gmu);
    if (gone)
        gen_destroy(rw, g);
}

void rw_lookup(struct rw *rw, struct rw_gen *g, uint32_t ino)
{
    pthread_mutex_lock(&rw->gmu);
    g->lookups++;
    size_t byte = ino / 8;
    if (byte >= g->given_bytes) {
        /* doubling: amortised constant; out of memory, the node is only not swept */
        size_t n = byte + 1 > 2 * g->given_bytes ? byte + 1 : 2 * g->given_bytes;
        uint8_t *b = realloc(g->given, n);
        if (b) {
            memset(b + g->given_bytes, 0, n - g->given_bytes);
            g->given = b;
            g->given_bytes = n;
        }
    }
    if (byte < g->given_bytes)
        g->given[byte] |= (uint8_t)(1u << (ino % 8));
    pthread_mutex_unlock(&rw->gmu);
}

uint8_t *rw_copy_given(struct rw *rw, struct rw_gen *g, size_t *bytes)
{
    pthread_mutex_lock(&rw->gmu);
    uint8_t *b = g->given_bytes ? malloc(g->given_bytes) : NULL;
    *bytes = b ? g->given_bytes : 0;
    if (b)
        memcpy(b, g->given, g->given_bytes);
    pthread_mutex_unlock(&rw->gmu);
    return b;
}

void rw_forget(struct rw *rw, uint32_t epoch, uint64_t n)
{
    pthread_mutex_lock(&rw->gmu);
    struct rw_gen *g = newest(rw);
    while (g && g->epoch != epoch)
        g = g->prev;
    bool gone = false;
    if (g) {
        /* never below 0: a forget for numbers the kernel had before a count began */
        g->lookups -= n < g->lookups ? n : g->lookups;
        gone = gen_unlink_unheld(rw, g);
    }
    pthread_mutex_unlock(&rw->gmu);
    if (gone)
        gen_destroy(rw, g);
}

uint32_t rw_epoch(struct rw *rw)
{
    return __atomic_load_n(&rw->epoch, __ATOMIC_ACQUIRE);
}

void rw_gen_counts(struct rw *rw, uint64_t *alive, uint64_t *most, uint64_t *freed)
{
    pthread_mutex_lock(&rw->gmu);

    *alive = rw->gens_alive;
    *most = rw->gens_most;
    *freed = rw->gens_freed;
    pthread_mutex_unlock(&rw->gmu);
}

/* ---- the log (/info) ---- */

void rw_log(struct rw *rw, const char *fmt, ...)
{
    pthread_mutex_lock(&rw->logmu);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rw->log[rw->nlog % RW_LOG_LINES], sizeof rw->log[0], fmt, ap);
    va_end(ap);
    rw->nlog++;
    pthread_mutex_unlock(&rw->logmu);
    struct rw_gen *g = acquire_newest(rw);
    if (g)
        tree_touch(g->fs->tree); /* /info is rendered again only when the tree says it changed */
    rw_release(rw, g);
}

void rw_note_temps(struct rw *rw, uint64_t bytes, uint64_t in_mem)
{
    __atomic_store_n(&rw->temps_now, bytes, __ATOMIC_RELAXED);
    __atomic_store_n(&rw->temps_mem_now, in_mem, __ATOMIC_RELAXED);
    if (in_mem > __atomic_load_n(&rw->temps_mem_most, __ATOMIC_RELAXED))
        __atomic_store_n(&rw->temps_mem_most, in_mem, __ATOMIC_RELAXED);
    struct rw_gen *g = acquire_newest(rw);
    if (g)
        tree_touch(g->fs->tree); /* /info shows them */
    rw_release(rw, g);
}

/* /info: the mode, what is pending, and the last things that happened (refusals, commits). */
static void info_lines(struct s3fs *fs, struct sbuf *out, void *ctx)
{
    struct rw *rw = ctx;
    pthread_mutex_lock(&rw->logmu);
    sb_printf(out, "rw: writable, backup %s, %" PRIu64 " commit%s\n", rw->backup ? "on" : "off", rw->commits,
              rw->commits == 1 ? "" : "s");
    if (fs->rw_read_only_why) /* the view's own reason (fs/core/view.h) */
        sb_printf(out, "rw: %s\n", fs->rw_read_only_why);
    /* not under mu: /info is rendered while mu is held (the CRC fix) */
    uint64_t pending = __atomic_load_n(&rw->pending_now, __ATOMIC_RELAXED);
    uint64_t in_mem = __atomic_load_n(&rw->mem_now, __ATOMIC_RELAXED);
    uint64_t mem_most = __atomic_load_n(&rw->mem_most, __ATOMIC_RELAXED);
    sb_printf(out, "rw: pending: %" PRIu64 " bytes, %" PRIu64 " of them in memory; at most %" PRIu64
              " in memory at once\n", pending, in_mem, mem_most);
    sb_printf(out, "rw: temporaries: %" PRIu64 " bytes, %" PRIu64 " of them in memory; at most %" PRIu64
              " in memory at once\n", __atomic_load_n(&rw->temps_now, __ATOMIC_RELAXED),
              __atomic_load_n(&rw->temps_mem_now, __ATOMIC_RELAXED),
              __atomic_load_n(&rw->temps_mem_most, __ATOMIC_RELAXED));
    sb_printf(out, "rw: contents held in memory by writes: %" PRIu64 " bytes; at most %" PRIu64 " at once\n",
              __atomic_load_n(&rw->held_now, __ATOMIC_RELAXED), __atomic_load_n(&rw->held_most, __ATOMIC_RELAXED));
    sb_printf(out, "rw: written into scratch files: %" PRIu64 " bytes\n",
              __atomic_load_n(&rw->scratch_written, __ATOMIC_RELAXED));
    sb_printf(out, "rw: the last write into a compressed section wrote %" PRIu64 " bytes into files\n",
              __atomic_load_n(&rw->last_section_write, __ATOMIC_RELAXED));
    uint64_t alive, most, freed;
    rw_gen_counts(rw, &alive, &most, &freed);
    sb_printf(out, "rw: generations: %" PRIu64 " alive, %" PRIu64 " at most, %" PRIu64 " freed\n", alive, most,
              freed);
    sb_printf(out, "rw: renames answered before the kernel was told of their commit: %" PRIu64 "\n",
              __atomic_load_n(&rw->renames_late, __ATOMIC_RELAXED));
    uint64_t first = rw->nlog > RW_LOG_LINES ? rw->nlog - RW_LOG_LINES : 0;
    for (uint64_t i = first; i < rw->nlog; i++)
        sb_printf(out, "rw: %s\n", rw->log[i % RW_LOG_LINES]);
    pthread_mutex_unlock(&rw->logmu);
}

/* /info of a watched folder: its generations (one per rescan). */
static void watch_info_lines(struct s3fs *fs, struct sbuf *out, void *ctx)
{
    (void)fs;
    uint64_t alive, most, freed;
    rw_gen_counts(ctx, &alive, &most, &freed);
    sb_printf(out, "watch: generations: %" PRIu64 " alive, %" PRIu64 " at most, %" PRIu64 " freed\n", alive, most,
              freed);
}

/* ---- which files are writable ---- */

char *rw_path(struct tree *t, uint32_t ino)
{
    size_t len = 0;
    for (uint32_t i = ino; i != TREE_ROOT && i; i = tree_parent(t, i))
        len += strlen(tree_name(t, i)) + 1;
    char *p = malloc(len + 1);
    if (!p)
        return NULL;
    p[len] = 0;
    size_t at = len;
    for (uint32_t i = ino; i != TREE_ROOT && i; i = tree_parent(t, i)) {
        const char *name = tree_name(t, i);
        size_t n = strlen(name);
        at -= n;
        memcpy(p + at, name, n);
        if (at)
            p[--at] = '/';
    }
    return p;
}

/* Where [off, off+len) of source s lies in the mounted file, when it is one plain run of
 * it. */
static bool file_pos(const struct rw_gen *g, const struct source *s, uint64_t off, uint64_t len, uint64_t *pos)
{
    int fd, fd2;
    uint64_t p, p2;
    if (!s || len == 0 || source_file_pos(s, off, &fd, &p) != 0 || fd != g->fs->src.fd)
        return false;
    if (source_file_pos(s, off + len - 1, &fd2, &p2) != 0 || fd2 != fd || p2 != p + len - 1)
        return false;
    *pos = p;
    return p + len <= g->fs->src.size;
}

static void find_gr2(struct rw_gen *g, uint32_t ino, struct rw_target *w);

/* Where the Granny data of view gv lies in the file, when it ends at the file's end (a
 * .gr2 mounted alone: a section stored raw goes there): into w (pos, gr2_base, the CRC's
 * directory). */
static bool granny_at_end(struct rw_gen *g, uint32_t ino, const struct view_section *gv, struct rw_target *w)
{
    struct tree *t = g->fs->tree;
    uint64_t base = gv->base, end = base + gv->total, pos;
    struct source *s = tree_node_source(t, tree_parent(t, ino));
    /* nested (a package resource), what follows its end is not its own to grow into */
    if (gv->fs->nested || gv->total > gv->avail || end <= base || !file_pos(g, s, base, end - base, &pos) ||
        pos + (end - base) != g->fs->src.size)
        return false;
    w->pos = pos;
    w->gr2_base = base;
    struct rw_target at = *w; /* the Granny data holding it: its CRC is recomputed */
    at.len = end - base;
    find_gr2(g, ino, &at);
    w->gr2_dir = at.gr2_dir, w->gr2_pos = at.gr2_pos, w->gr2_len = at.gr2_len;
    return true;
}

/* /info, once: why compressed sections (and what lies in them) are read-only here. */
static void say_sections_read_only(struct rw *rw)
{
    if (!__atomic_exchange_n(&rw->said_sections, true, __ATOMIC_ACQ_REL))
        rw_log(rw, "compressed Granny sections stay read-only here: written back raw, a section goes after "
                   "the Granny data, which here neither ends the mounted file, nor is the granny.gr2 of "
                   "the mounted RIG or of a RIG that is a package resource, nor a package resource's whole "
                   "data");
}

static bool granny_target(struct rw_gen *g, uint32_t ino, struct rw_target *w);

/* Where the Granny data of view gv lies when it is the mounted wrapped RIG's granny.gr2
 * (its Granny data starting there; the part its view lets be resized, asked of the
 * directory where the Granny view is shown): into w (wrapped, pos, gr2_pos/len,
 * gr2_base). A section stored raw then goes into new Granny bytes that replace
 * granny.gr2 whole. */
static bool granny_in_rig(struct rw_gen *g, uint32_t ino, const struct view_section *gv, struct rw_target *w)
{
    struct tree *t = g->fs->tree;
    struct rw_target rig;
    uint64_t pos;
    memset(&rig, 0, sizeof rig);
    if (!granny_target(g, gv->fs->root, &rig) || rig.rig_in_resource || /* granny_in_rig_resource's */
        gv->total > gv->avail || gv->total == 0 ||
        !file_pos(g, tree_node_source(t, tree_parent(t, ino)), gv->base, gv->total, &pos) || pos != rig.pos ||
        gv->total > rig.len)
        return false;
    w->wrapped = true;
    w->resize = rig.resize;
    w->head_pos = rig.head_pos;
    w->pos = w->gr2_pos = rig.pos;
    w->gr2_len = rig.len;
    w->gr2_base = gv->base;
    return true;
}

static bool resource_target(struct rw_gen *g, uint32_t ino, struct rw_target *w);

/* The index record's places and words of resource target r taken into w (a part nested
 * in the resource is written as the resource's new data). */
static void take_record(struct rw_target *w, const struct rw_target *r)
{
    w->f_offset = r->f_offset, w->f_stored = r->f_stored, w->f_memory = r->f_memory, w->f_comp = r->f_comp;
    w->zlib = r->zlib;
    w->stored_flags = r->stored_flags;
    w->codec_zlib = r->codec_zlib;
    w->codec_raw = r->codec_raw;
}

/* Where the Granny data of view gv lies when it is a package resource's whole data (a
 * .gr2 resource: the nested view's source is the resource's bytes, its Granny data from
 * their start): into w (in_resource, the resource's record as the package view declares
 * the part the nested view shows, view_part_of). A section stored raw then goes into new
 * resource bytes, which replace the resource's data whole. */
static bool granny_in_resource(struct rw_gen *g, const struct view_section *gv, struct rw_target *w)
{
    const struct s3fs *fs = gv->fs;
    struct rw_target res;
    memset(&res, 0, sizeof res);
    if (!fs->nested || gv->base != 0 || gv->total > gv->avail || gv->total == 0 ||
        fs->src.size > RW_RESOURCE_MAX || !resource_target(g, fs->root, &res))
        return false;
    w->in_resource = true;
    take_record(w, &res);
    w->res_in_file = file_pos(g, &fs->src, 0, fs->src.size, &w->res_file_pos);
    w->gr2_base = 0;
    return true;
}

/* Where the Granny data of view gv lies when it is the granny.gr2 of a wrapped RIG that
 * is a package resource's whole data: into w (rig_in_resource, the RIG's resize plan, the
 * resource's index record). A section stored raw then goes into new Granny bytes, those
 * into new RIG bytes, which replace the resource's data.bin whole. */
static bool granny_in_rig_resource(struct rw_gen *g, const struct view_section *gv, struct rw_target *w)
{
    struct tree *t = g->fs->tree;
    uint32_t gi;
    struct rw_target rig;
    memset(&rig, 0, sizeof rig);
    if (!gv->fs->nested || tree_lookup(t, gv->fs->root, "granny.gr2", &gi) != S3_OK || !granny_target(g, gi, &rig) ||
        !rig.rig_in_resource || gv->total > gv->avail || gv->total == 0 || gv->base != rig.resize.pos ||
        gv->total > rig.resize.len)
        return false;
    w->rig_in_resource = true;
    w->res_src = rig.res_src;
    w->res_in_file = rig.res_in_file;
    w->res_file_pos = rig.res_file_pos;
    w->resize = rig.resize;
    take_record(w, &rig);
    w->gr2_pos = rig.resize.pos;
    w->gr2_len = rig.resize.len;
    w->gr2_base = gv->base;
    return true;
}

/* A place a compressed section can be stored raw: after Granny data that ends the file,
 * in a wrapped RIG's Granny data replaced whole (the mounted RIG's, or a package
 * resource's), or in a package resource's data replaced whole. */
static bool granny_place(struct rw_gen *g, uint32_t ino, const struct view_section *gv, struct rw_target *w)
{
    return granny_at_end(g, ino, gv, w) || granny_in_rig(g, ino, gv, w) || granny_in_resource(g, gv, w) ||
           granny_in_rig_resource(g, gv, w);
}

/* What the section hook lent (view_section_of) kept in w: the Granny view, its functions,
 * its s3fs, its data's length, the section. */
static void take_section(struct rw_target *w, const struct view_section *vs)
{
    w->gv = vs->s;
    w->gops = vs->ops;
    w->gfs = vs->fs;
    w->gtotal = vs->total;
    w->sec = vs->sec;
}

/* Node ino's place in a compressed Granny section's expanded bytes, asked of the Granny
 * view nearest above it (view_section_of, VIEW_SECTION_PLACE): false when it has none. */
static bool section_place(struct rw_gen *g, uint32_t ino, struct view_section *vs)
{
    struct tree *t = g->fs->tree;
    for (uint32_t d = tree_parent(t, ino);; d = tree_parent(t, d)) {
        if (view_section_of(g->fs, VIEW_SECTION_PLACE, d, ino, vs))
            return true;
        if (d == TREE_ROOT || d == 0)
            return false;
    }
}

/* The Granny data a writable file lies in (its CRC is then recomputed at commit): the
 * nearest directory above it where a Granny view shows its data (VIEW_SECTION_DATA), but
 * for that data's own bytes (granny.gr2 written as a whole file of bytes: the writer's
 * CRC stays as written). */
static void find_gr2(struct rw_gen *g, uint32_t ino, struct rw_target *w)
{
    struct tree *t = g->fs->tree;
    for (uint32_t d = tree_parent(t, ino);; d = tree_parent(t, d)) {
        struct view_section vs;
        uint64_t start = 0, pos, size = 0;
        bool data = view_section_of(g->fs, VIEW_SECTION_DATA, d, 0, &vs);
        if (data)
            start = vs.base, size = vs.limit; /* granny.gr2's bytes: what exists of total_size */
        if (data && file_pos(g, tree_node_source(t, d), start, size, &pos) &&
            w->pos >= pos && w->pos + w->len <= pos + size &&
            !(tree_parent(t, ino) == d && w->pos == pos && w->len == size)) {
            w->gr2_dir = d;
            w->gr2_pos = pos;
            w->gr2_len = size;
            return;
        }
        if (d == TREE_ROOT || d == 0)
            return;
    }
}

/* A part its view lets be replaced whole by bytes after the file's end (view_part_of: a
 * package resource's data.bin, or the directory of the view nested in it), its record's
 * words lying in the file as is: stored the way it was (zlib stays zlib, the rest becomes
 * raw), the record pointed at the new bytes. */
static bool resource_target(struct rw_gen *g, uint32_t ino, struct rw_target *w)
{
    struct tree *t = g->fs->tree;
    struct source *s = tree_node_source(t, tree_parent(t, ino));
    struct view_part vp;
    if (!view_part_of(g->fs, ino, &vp) || !file_pos(g, s, vp.offset_at, 4, &w->f_offset) ||
        !file_pos(g, s, vp.stored_at, 4, &w->f_stored) || !file_pos(g, s, vp.memory_at, 4, &w->f_memory) ||
        !file_pos(g, s, vp.codec_at, 2, &w->f_comp))
        return false;
    w->kind = RW_RESOURCE;
    w->zlib = vp.zlib;
    w->stored_flags = vp.stored_flags;
    w->codec_zlib = vp.codec_zlib;
    w->codec_raw = vp.codec_raw;
    w->len = tree_kind(t, ino) == NODE_FILE ? tree_size(t, ino) : 0;
    w->pos = 0;
    return true;
}

/* A part its view lets be replaced at another length (view_resize_of: a wrapped RIG's
 * granny.gr2), lying in one plain run of the file, as does its container's head. */
/* The data.bin of the package resource whose nested view has its root at `root` (the
 * view's directory is inside the resource's), or 0 when the view is no resource's. */
static uint32_t resource_data_of(struct tree *t, uint32_t root)
{
    uint32_t dir = tree_parent(t, root), data;
    char type[32];
    if (root == TREE_ROOT || dir == 0 || tree_lookup(t, dir, "data.bin", &data) != S3_OK)
        return 0;
    return tree_getxattr_str(t, data, "user.s3rig.type", type, sizeof type) == S3_OK && strcmp(type, "dbpf.data") == 0
               ? data
               : 0;
}

/* The index record of the package resource whose whole data is source s, read by the
 * nested view with its root at `root`, into w (f_*, zlib, stored_flags). */
static bool resource_of_root(struct rw_gen *g, uint32_t root, const struct source *s, struct rw_target *w)
{
    struct tree *t = g->fs->tree;
    uint32_t data = resource_data_of(t, root);
    struct rw_target res;
    memset(&res, 0, sizeof res);
    if (!data || !s || s->size > RW_RESOURCE_MAX || tree_size(t, data) != s->size || !resource_target(g, data, &res))
        return false;
    take_record(w, &res);
    return true;
}

/* A part its view lets be replaced at another length (view_resize_of: a wrapped RIG's
 * granny.gr2). In a RIG that is a package resource's whole data, new RIG bytes replace
 * the resource (rig_in_resource); else the part and its container's head lie in one plain
 * run of the file, spliced there. A RIG in a resource is never spliced in the file: the
 * package's index would not follow. */
static bool granny_target(struct rw_gen *g, uint32_t ino, struct rw_target *w)
{
    struct tree *t = g->fs->tree;
    struct source *s = tree_node_source(t, ino);
    /* the RIG view's root: granny.gr2's directory, or ino itself when asked of the root
     * (granny_in_rig): a RIG stored raw in a package resource must be found a resource's
     * there too, never spliced in the file, where the package's index would not follow */
    uint32_t root = tree_kind(t, ino) == NODE_DIR ? ino : tree_parent(t, ino);
    if (!view_resize_of(g->fs, ino, &w->resize) || !w->resize.plan || w->resize.head_len == 0 ||
        w->resize.head_len > RW_HEAD_MAX)
        return false;
    if (resource_data_of(t, root)) {
        if (!s || w->resize.pos + w->resize.len > s->size || !resource_of_root(g, root, s, w))
            return false;
        w->rig_in_resource = true;
        w->res_src = s;
        w->res_in_file = file_pos(g, s, 0, s->size, &w->res_file_pos);
        w->gr2_pos = w->resize.pos;
        w->gr2_len = w->resize.len;
    } else if (!file_pos(g, s, w->resize.pos, w->resize.len, &w->pos) ||
               !file_pos(g, s, 0, w->resize.head_len, &w->head_pos)) {
        return false;
    }
    w->kind = RW_GRANNY;
    w->len = w->resize.len;
    return true;
}

/* A compressed Granny section's data.bin: written back stored raw after the Granny data,
 * which must be one plain run of the file ending at its end (a .gr2 mounted alone). Else
 * read-only, said once in /info. */
static bool section_target(struct rw *rw, struct rw_gen *g, uint32_t ino, struct rw_target *w)
{
    struct tree *t = g->fs->tree;
    struct view_section vs;
    if (!view_section_of(g->fs, VIEW_SECTION_FILE, 0, ino, &vs) || vs.total > vs.avail)
        return false;
    take_section(w, &vs);
    if (!granny_place(g, ino, &vs, w)) {
        say_sections_read_only(rw);
        return false;
    }
    w->kind = RW_SECTION;
    w->len = tree_size(t, ino);
    return true;
}

/* A table its view declares (view_table_of): its records are one plain run of the
 * mounted file, in the source its directory reads, or lie in a compressed Granny section
 * (section_place), which is then stored raw. */
static bool table_target(struct rw_gen *g, uint32_t ino, struct rw_target *w)
{
    struct tree *t = g->fs->tree;
    if (!view_table_of(g->fs, ino, &w->table))
        return false;
    uint64_t len = (uint64_t)w->table.nrec * w->table.stride;
    struct view_section vs;
    if (len == 0 || len > RW_RESOURCE_MAX)
        return false;
    if (section_place(g, ino, &vs)) { /* in a compressed Granny section: stored raw */
        take_section(w, &vs);
        if (vs.len != len || !granny_place(g, ino, &vs, w))
            return false;
        w->in_section = true;
        w->sec_off = vs.off;
    } else if (!file_pos(g, tree_node_source(t, tree_parent(t, ino)), w->table.off, len, &w->pos)) {
        return false;
    }
    w->kind = RW_VALUE;
    w->is_table = true;
    w->len = len;
    w->be = w->table.be;
    /* the text a write may hold: 64 bytes a cell, the header's own room */
    uint64_t rows = w->table.text_rows ? w->table.text_rows : w->table.nrec;
    w->ft = (struct field_type){FIELD_U8, 1, (rows + 1) * (table_row_cells(&w->table) + 1) +
                                                 strlen(w->table.header) / 64 + 1};
    return true;
}

/* Stored bytes of a compressed Granny section (a table's NAME.bin, whose bytes its view
 * says are [off, +len) of the expanded section: VIEW_SECTION_BYTES): written in place,
 * same size, into the section's expanded bytes, stored raw at the commit. */
static bool section_bytes_target(struct rw *rw, struct rw_gen *g, uint32_t ino, struct rw_target *w)
{
    struct tree *t = g->fs->tree;
    struct view_section vs;
    memset(w, 0, sizeof *w);
    if (!view_section_of(g->fs, VIEW_SECTION_BYTES, 0, ino, &vs) || vs.len == 0 || vs.len != tree_size(t, ino) ||
        vs.len > RW_RESOURCE_MAX)
        return false;
    uint64_t off = vs.off, len = vs.len;
    take_section(w, &vs);
    if (!granny_place(g, ino, &vs, w)) {
        say_sections_read_only(rw);
        memset(w, 0, sizeof *w);
        return false;
    }
    w->kind = RW_BYTES;
    w->in_section = true;
    w->sec_off = off;
    w->len = len;
    return true;
}

/* A value file its view declares a field (view_value_of), the only way a value file is
 * writable: where its bytes lie in the source its directory reads, as one plain run of
 * the file, or in a compressed Granny section (section_place: its declared length must be
 * its place's there), which is then stored raw. */
static bool declared_value_target(struct rw *rw, struct rw_gen *g, uint32_t ino, struct rw_target *w)
{
    struct tree *t = g->fs->tree;
    struct view_value vv;
    if (!view_value_of(g->fs, ino, &vv))
        return false;
    uint32_t size = vv.kind == FIELD_U8 || vv.kind == FIELD_I8     ? 1
                    : vv.kind == FIELD_U16 || vv.kind == FIELD_I16 ? 2
                                                                   : 4;
    if (vv.kind == FIELD_U64 || vv.len == 0 || vv.len % size || vv.len > FIELD_MAX_BYTES ||
        (vv.keep && vv.kind != FIELD_U32))
        return false;
    struct view_section vs;
    if (section_place(g, ino, &vs)) {
        if (vs.len != vv.len || vv.keep)
            return false;
        take_section(w, &vs);
        if (!granny_place(g, ino, &vs, w)) {
            say_sections_read_only(rw);
            return false;
        }
        w->in_section = true;
        w->sec_off = vs.off;
    } else if (!file_pos(g, tree_node_source(t, tree_parent(t, ino)), vv.off, vv.len, &w->pos)) {
        return false;
    }
    w->ft = (struct field_type){vv.kind, size, vv.len / size};
    w->kind = RW_VALUE;
    w->len = vv.len;
    w->be = vv.be;
    w->nlabels = vv.nlabels;
    w->labels = vv.labels;
    w->keep = vv.keep;
    return true;
}

bool rw_target(struct rw *rw, struct rw_gen *g, uint32_t ino, struct rw_target *w)
{
    memset(w, 0, sizeof *w);
    struct tree *t = g->fs->tree;
    if (tree_kind(t, ino) != NODE_FILE || tree_is_volatile(t, ino))
        return false;
    struct source *s;
    uint64_t start, size = tree_size(t, ino);
    if (resource_target(g, ino, w) || granny_target(g, ino, w))
        return true;
    memset(w, 0, sizeof *w);
    if (section_target(rw, g, ino, w))
        return true;
    memset(w, 0, sizeof *w);
    if (tree_range(t, ino, &s, &start)) { /* stored bytes: never a table or a value */
        if (!file_pos(g, s, start, size, &w->pos))
            return false;
        w->kind = RW_BYTES;
        w->len = size;
    } else if (section_bytes_target(rw, g, ino, w)) {
        return true;
    } else if (!declared_value_target(rw, g, ino, w) && (memset(w, 0, sizeof *w), !table_target(g, ino, w))) {
        memset(w, 0, sizeof *w); /* nothing declares it: read-only */
        return false;
    }
    find_gr2(g, ino, w);
    return true;
}

/* ---- pending edits ---- */

/* The pending edits' bytes, those in memory and the most in memory at once, for /info
 * (which reads them without mu). Under mu, after every change of the edits. */
static void note_memory(struct rw *rw)
{
    uint64_t m = edits_mem_bytes(&rw->pending);
    __atomic_store_n(&rw->pending_now, edits_bytes(&rw->pending), __ATOMIC_RELAXED);
    __atomic_store_n(&rw->mem_now, m, __ATOMIC_RELAXED);
    if (m > __atomic_load_n(&rw->mem_most, __ATOMIC_RELAXED))
        __atomic_store_n(&rw->mem_most, m, __ATOMIC_RELAXED);
}


/* A buffer holding content being written (a chunk, a section's bytes), counted while it
 * lives: /info shows the most held at once, which stays within cache_mb however large
 * the content (everything whole goes through files). */
static void held_add(struct rw *rw, uint64_t n)
{
    uint64_t now = __atomic_add_fetch(&rw->held_now, n, __ATOMIC_RELAXED);
    uint64_t most = __atomic_load_n(&rw->held_most, __ATOMIC_RELAXED);
    while (now > most && !__atomic_compare_exchange_n(&rw->held_most, &most, now, true, __ATOMIC_RELAXED,
                                                      __ATOMIC_RELAXED))
        ;
}

static void held_sub(struct rw *rw, uint64_t n)
{
    __atomic_sub_fetch(&rw->held_now, n, __ATOMIC_RELAXED);
}

static void *held_alloc(struct rw *rw, size_t n)
{
    void *p = malloc(n ? n : 1);
    if (p)
        held_add(rw, n);
    return p;
}

static void held_free(struct rw *rw, void *p, size_t n)
{
    if (p)
        held_sub(rw, n);
    free(p);
}

static int note_gr2(struct rw *rw, const struct rw_target *t)
{
    if (!t->gr2_dir)
        return 0;
    for (size_t i = 0; i < rw->ngr2; i++)
        if (rw->gr2[i].dir == t->gr2_dir)
            return 0;
    struct rw_gr2 *n = realloc(rw->gr2, (rw->ngr2 + 1) * sizeof *n);
    if (!n)
        return -ENOMEM;
    rw->gr2 = n;
    rw->gr2[rw->ngr2++] = (struct rw_gr2){t->gr2_dir, t->gr2_pos, t->gr2_len, 0};
    return 0;
}

/* Under mu: whether [pos, pos+len) of the file lies in part in the pending splice (a
 * whole replacement at another length): an edit there would be dropped at the commit, so
 * it is refused rather than taken and lost. */
static bool in_splice(const struct rw *rw, uint64_t pos, uint64_t len)
{
    const struct edits *e = &rw->pending;
    return e->splice_to > e->splice_from && pos < e->splice_to && pos + len > e->splice_from;
}

#define IN_SPLICE_WHY "a whole replacement of the bytes it lies in is pending"

/* Under mu: whether [pos, pos+len) of the file lies in part in the bytes of a package
 * resource whose new copy is pending (a value or bytes inside a resource stored raw): the
 * record points at the new copy, so the write would go to bytes that are the resource's
 * no more; it is refused rather than taken and lost. */
static bool in_replaced(const struct rw *rw, uint64_t pos, uint64_t len)
{
    for (size_t i = 0; i < rw->nres; i++)
        if (pos < rw->res[i].was_to && pos + len > rw->res[i].was_from)
            return true;
    return false;
}

/* (a data.bin replaced, or the resource made again by a section stored raw, which holds
 * the writes before it only) */
#define IN_REPLACED_WHY "new content of the package resource it lies in is pending (its data.bin replaced, or made " \
                        "again for a write inside it)"

static int put_section_bytes(struct rw *rw, const struct rw_target *t, uint64_t off, const void *b, size_t len);

int rw_put_bytes(struct rw *rw, const struct rw_target *t, uint64_t off, const void *b, size_t len)
{
    if (off > t->len || len > t->len - off)
        return -EFBIG;
    if (t->in_section)
        return put_section_bytes(rw, t, off, b, len);
    pthread_mutex_lock(&rw->mu);
    bool spliced = in_splice(rw, t->pos + off, len), replaced = !spliced && in_replaced(rw, t->pos + off, len);
    int rc = spliced || replaced ? -EBUSY : note_gr2(rw, t);
    if (!rc)
        rc = neg_errno_of(edits_put(&rw->pending, t->pos + off, b, len));
    note_memory(rw);
    pthread_mutex_unlock(&rw->mu);
    if (spliced || replaced)
        rw_log(rw, "refused a write to bytes [%" PRIu64 ", +%zu) of the file: %s (commit it first); nothing changed",
               t->pos + off, len, spliced ? IN_SPLICE_WHY : IN_REPLACED_WHY);
    return rc;
}

int rw_check_prefix(const struct rw_target *t, const char *text, size_t len, char *why, size_t whylen)
{
    return t->is_table || t->nlabels ? 0 : neg_errno_of(field_check_prefix(&t->ft, text, len, why, whylen));
}

/* A labelled value's text without its labels: each line must start with its label and a
 * blank (one line a label, a final newline optional). The values' text, malloc'd, into
 * *out; -EINVAL with why, -ENOMEM. */
static int strip_labels(const struct rw_target *t, const char *text, size_t len, char **out, size_t *outlen, char *why,
                        size_t whylen)
{
    char *plain = malloc(len + 1);
    if (!plain)
        return -ENOMEM;
    size_t at = 0, n = 0;
    uint32_t line = 0;
    while (at < len) {
        const char *nl = memchr(text + at, '\n', len - at);
        size_t end = nl ? (size_t)(nl - text) : len;
        const char *label = line < t->nlabels ? t->labels[line] : NULL;
        size_t ll = label ? strlen(label) : 0;
        if (!label || end - at <= ll || memcmp(text + at, label, ll) != 0 ||
            (text[at + ll] != ' ' && text[at + ll] != '\t')) {
            if (label)
                snprintf(why, whylen, "line %" PRIu32 " must start with '%s' and its values", line + 1, label);
            else
                snprintf(why, whylen, "more than %" PRIu32 " lines", t->nlabels);
            free(plain);
            return -EINVAL;
        }
        memcpy(plain + n, text + at + ll, end - at - ll);
        n += end - at - ll;
        plain[n++] = '\n';
        at = nl ? end + 1 : len;
        line++;
    }
    if (line != t->nlabels) {
        snprintf(why, whylen, "%" PRIu32 " lines for %" PRIu32 " (each starting with its label)", line, t->nlabels);
        free(plain);
        return -EINVAL;
    }
    *out = plain;
    *outlen = n;
    return 0;
}

/* len bytes at pos of the file as the current generation has it (held meanwhile). */
static bool pread_current(struct rw *rw, uint8_t *bytes, size_t len, uint64_t pos)
{
    struct rw_gen *cur = acquire_newest(rw);
    bool ok = pread(cur->fs->src.fd, bytes, len, (off_t)pos) == (ssize_t)len;
    rw_release(rw, cur);
    return ok;
}

/* ---- the section copy: a compressed section's expanded bytes being written ---- */

/* The piece content streams through (into and out of files), held while it is. */
#define STREAM_CHUNK (64u << 10)

static void scratch_note(struct rw *rw, uint64_t n)
{
    __atomic_add_fetch(&rw->scratch_written, n, __ATOMIC_RELAXED);
}

/* b appended to the pending edits' tail, counted (tail_written): edits_append's result. */
static enum s3_err tail_append(struct rw *rw, const void *b, size_t n)
{
    enum s3_err e = edits_append(&rw->pending, b, n);
    if (e == S3_OK)
        __atomic_add_fetch(&rw->tail_written, n, __ATOMIC_RELAXED);
    return e;
}

/* Bytes rw wrote into files so far (scratch files, the pending tail): a write's cost is
 * the difference across it (last_section_write). */
static uint64_t files_written(struct rw *rw)
{
    return __atomic_load_n(&rw->scratch_written, __ATOMIC_RELAXED) +
           __atomic_load_n(&rw->tail_written, __ATOMIC_RELAXED);
}

/* All n bytes of p into scratch file fd at `at` (counted for /info): 0 or -errno. */
static int put_at(struct rw *rw, int fd, const uint8_t *p, size_t n, uint64_t at)
{
    while (n) {
        ssize_t w = pwrite(fd, p, n, (off_t)at);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? -errno : -EIO;
        scratch_note(rw, (uint64_t)w);
        p += w, n -= (size_t)w, at += (uint64_t)w;
    }
    return 0;
}

/* Under secmu: bytes [at, at+n) of the section copy into buf: 0 or -EIO. */
static int copy_read(const struct rw_section_copy *c, void *buf, size_t n, uint64_t at)
{
    return c->fd && pread(c->fd - 1, buf, n, (off_t)at) == (ssize_t)n ? 0 : -EIO;
}

/* Under secmu: the section copy let go (its file closed): after a commit, or when the
 * pending edits its stored writes were in are dropped. */
static void section_copy_drop(struct rw *rw)
{
    struct rw_section_copy *c = &rw->seccopy;
    if (c->fd)
        close(c->fd - 1);
    *c = (struct rw_section_copy){0};
}

/* Under secmu: n bytes laid over the section copy at `at`, all or nothing: a write that
 * fails half-way (a full disk) gets the copy's bytes of before back; when even that
 * fails the copy is dropped (its writes not stored yet with it, logged), never left
 * holding part of a refused write. 0 or -errno. */
static int copy_write(struct rw *rw, const void *b, size_t n, uint64_t at)
{
    struct rw_section_copy *c = &rw->seccopy;
    uint8_t *was = malloc(n ? n : 1);
    int rc = was ? copy_read(c, was, n, at) : -ENOMEM;
    if (!rc)
        rc = put_at(rw, c->fd - 1, b, n, at);
    if (rc && was && c->fd && put_at(rw, c->fd - 1, was, n, at) != 0) {
        if (c->dirty)
            rw_log(rw, "failed: section %" PRIu32 "'s bytes written since the last commit could not be kept "
                       "(their copy's file); they are dropped", c->sec);
        section_copy_drop(rw);
    }
    free(was);
    return rc;
}

struct copy_fill {
    struct rw *rw;
    int fd;
    int rc;
    uint64_t len; /* the expanded bytes' */
};

/* The pinned expanded bytes into the copy's file, a chunk at a time. */
static enum s3_err fill_copy(void *ctx, const uint8_t *bytes, size_t len, char *err, size_t errlen)
{
    struct copy_fill *f = ctx;
    f->len = len;
    for (size_t at = 0; at < len && !f->rc; at += STREAM_CHUNK)
        f->rc = put_at(f->rw, f->fd, bytes + at, len - at < STREAM_CHUNK ? len - at : STREAM_CHUNK, at);
    if (f->rc)
        snprintf(err, errlen, "its copy's file: %s", strerror(-f->rc));
    return f->rc ? S3_ERR_IO : S3_OK;
}

static int raw_copy_of(struct rw *rw, const struct rw_target *t, bool wrapped, size_t *at);

/* Under secmu: whether new bytes of t's section are pending that no section copy holds
 * (its data.bin replaced whole, or a copy of before let go after it was stored raw): a
 * copy made now would start from the committed bytes the view expands, and storing it
 * would put them back over the pending ones, losing them; a write inside is refused
 * (EBUSY) until a commit. (In a package resource record_busy refuses it: the copy
 * pending is not the new copy's own.) */
static bool section_replaced(struct rw *rw, const struct rw_target *t)
{
    size_t at;
    pthread_mutex_lock(&rw->mu);
    bool pending = raw_copy_of(rw, t, t->wrapped, &at) != -1;
    pthread_mutex_unlock(&rw->mu);
    return pending;
}

#define SECTION_REPLACED_WHY                                                                                     \
    "new bytes of the section are pending, which the tree does not show (a whole replacement, or writes "          \
    "stored before another section's; commit first)"

/* Under secmu: the section copy made t's section's, unless it is already: its expanded
 * bytes (pinned in the cache, within its bound, only while they are copied) written into
 * an unlinked file beside the source, so that a section larger than cache_mb costs no
 * memory while its values are written. 0, or -ENOMEM / -EIO / -errno with why. The copy
 * of another section must not hold bytes not stored (the caller flushed it). */
static int section_copy_for(struct rw *rw, const struct rw_target *t, char *why, size_t whylen)
{
    struct rw_section_copy *c = &rw->seccopy;
    if (c->fd && c->gv == t->gv && c->sec == t->sec)
        return 0;
    if (section_replaced(rw, t)) {
        snprintf(why, whylen, "%s", SECTION_REPLACED_WHY);
        return -EBUSY;
    }
    int fd;
    enum s3_err e = edits_scratch(rw->lock->dirfd, &fd);
    if (e != S3_OK) {
        snprintf(why, whylen, "a file for its copy: %s", s3_err_str(e));
        return neg_errno_of(e);
    }
    struct copy_fill f = {rw, fd, 0, 0};
    e = t->gops->expanded_use(t->gv, t->sec, fill_copy, &f, why, whylen);
    if (e != S3_OK) {
        close(fd);
        return f.rc ? f.rc : e == S3_ERR_NOMEM ? -ENOMEM : -EIO;
    }
    section_copy_drop(rw);
    *c = (struct rw_section_copy){.gv = t->gv, .sec = t->sec, .fd = fd + 1, .len = f.len,
                                  .res_record = t->in_resource || t->rig_in_resource ? t->f_offset : 0,
                                  .serial = ++rw->seccopies};
    return 0;
}

/* Stores the section copy raw by target t (a writable file of its section), streamed
 * from its file (put_section_src); later in this file. */
static int store_copy(struct rw *rw, const struct rw_target *t, const char *path);

/* A table's records as they will be: the file's bytes with the pending edits over them,
 * then the new text's cells. */
static int encode_table(struct rw *rw, const struct rw_target *t, const char *text, size_t len, uint8_t *bytes,
                        char *why, size_t whylen)
{
    int rc = 0;
    if (t->in_section) { /* the expanded bytes, with the writes into them until the commit */
        pthread_mutex_lock(&rw->secmu);
        const struct rw_section_copy *c = &rw->seccopy;
        if (c->fd && c->gv == t->gv && c->sec == t->sec && t->sec_off <= c->len && t->len <= c->len - t->sec_off)
            rc = copy_read(c, bytes, t->len, t->sec_off);
        else if (t->gops->expanded_read(t->gv, t->sec, t->sec_off, bytes, t->len) != S3_OK)
            rc = -EIO;
        pthread_mutex_unlock(&rw->secmu);
    } else if (!pread_current(rw, bytes, t->len, t->pos)) {
        rc = -EIO;
    } else {
        pthread_mutex_lock(&rw->mu);
        edits_overlay(&rw->pending, t->pos, bytes, t->len);
        pthread_mutex_unlock(&rw->mu);
    }
    return rc ? rc : neg_errno_of(table_encode(&t->table, text, len, bytes, why, whylen));
}

/* Under secmu: the section copy's bytes written since it was last stored (NAME.bin
 * writes), stored raw now (store_copy): 0 when there are none, else its result (a
 * failure keeps them waiting). */
static int flush_section_copy(struct rw *rw)
{
    struct rw_section_copy *c = &rw->seccopy;
    if (!c->dirty)
        return 0;
    char path[sizeof c->path];
    memcpy(path, c->path, sizeof path);
    struct rw_target st = c->target; /* c may be dropped meanwhile (drop_pending) */
    int rc = store_copy(rw, &st, path);
    if (!rc && c->fd && c->gv == st.gv && c->sec == st.sec)
        c->dirty = false, c->stored = true;
    return rc;
}

/* Under secmu: whether the section copy holds bytes of a section other than t's not stored. */
static bool other_copy_dirty(const struct rw *rw, const struct rw_target *t)
{
    const struct rw_section_copy *c = &rw->seccopy;
    return c->dirty && (c->gv != t->gv || c->sec != t->sec);
}

static bool record_busy(const struct rw *rw, const struct rw_target *t);

/* Under mu: whether storing t's section raw would be refused now (put_section's and its
 * containers' refusals that hold until a commit): another section stored raw after its
 * copy, a pending replacement of the package resource or the RIG's Granny data holding
 * it that is not a section write's own. */
static bool store_refused(struct rw *rw, const struct rw_target *t)
{
    size_t at;
    const struct edits *e = &rw->pending;
    bool spliced = e->splice_to > e->splice_from;
    return raw_copy_of(rw, t, t->wrapped, &at) == -EBUSY ||
           ((t->in_resource || t->rig_in_resource) && record_busy(rw, t)) ||
           (t->wrapped && spliced && !(rw->wrapped_live && e->splice_from == t->gr2_pos));
}

/* Bytes [off, +len) of a section's NAME.bin (t->in_section, RW_BYTES): laid over the
 * section copy (with the writes before), which is stored raw once, at the next commit
 * (flush_section_copy), so that a writer's many small writes cost one. */
static int put_section_bytes(struct rw *rw, const struct rw_target *t, uint64_t off, const void *b, size_t len)
{
    struct rw_section_copy *c = &rw->seccopy;
    char why[200] = "";
    pthread_mutex_lock(&rw->secmu);
    int rc = other_copy_dirty(rw, t) ? flush_section_copy(rw) : 0;
    uint64_t written = files_written(rw); /* another section's store is not this write's */
    pthread_mutex_lock(&rw->mu);
    bool later = !rc && store_refused(rw, t);
    pthread_mutex_unlock(&rw->mu);
    if (later) /* refused now rather than at every commit */
        rc = -EBUSY;
    if (!rc)
        rc = section_copy_for(rw, t, why, sizeof why);
    if (!rc && (t->sec_off > c->len || t->len > c->len - t->sec_off))
        rc = -EIO;
    if (!rc)
        rc = copy_write(rw, b, len, t->sec_off + off);
    if (!rc) {
        if (!c->dirty) { /* how it is stored at the commit, and the log's name for it */
            c->target = *t;
            snprintf(c->path, sizeof c->path, "section %" PRIu32 "'s bytes", t->sec);
        }
        c->dirty = true;
    }
    __atomic_store_n(&rw->last_section_write, files_written(rw) - written, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&rw->secmu);
    if (later)
        rw_log(rw, "refused a write to section %" PRIu32 "'s bytes: it could not be stored raw before a commit "
                   "(another section stored raw after it, or a whole replacement of what holds it pending); "
                   "nothing changed", t->sec);
    else if (rc && (rc != -EBUSY || why[0]))
        rw_log(rw, "refused a write to section %" PRIu32 "'s bytes: %s; nothing changed", t->sec,
               why[0] ? why : strerror(-rc));
    return rc;
}

/* Under secmu: a value's bytes laid over the section copy already stored raw since it
 * was made (c->stored): the copy is only marked dirty and stored again, in its place, at
 * the next commit (flush_section_copy), so that this write costs O(value), not
 * O(section). Refused (EBUSY) now when storing it again would be refused then (another
 * section stored raw after it, a whole replacement of what holds it pending), as the
 * store at the write was before. */
static int defer_in_section(struct rw *rw, const struct rw_target *t, const char *path, const uint8_t *field)
{
    struct rw_section_copy *c = &rw->seccopy;
    struct rw_target st = *t;
    st.kind = RW_SECTION;
    pthread_mutex_lock(&rw->mu);
    bool later = store_refused(rw, &st);
    pthread_mutex_unlock(&rw->mu);
    if (later) {
        rw_log(rw, "refused %s: its section could not be stored raw again before a commit (another section "
                   "stored raw after it, or a whole replacement of what holds it pending); nothing changed", path);
        return -EBUSY;
    }
    int rc = copy_write(rw, field, t->len, t->sec_off);
    if (rc) {
        rw_log(rw, "refused %s: the section's expanded bytes: %s; nothing changed", path, strerror(-rc));
        return rc;
    }
    if (!c->dirty) { /* how it is stored at the commit, and the log's name for it */
        c->target = st;
        snprintf(c->path, sizeof c->path, "section %" PRIu32 "'s values", t->sec);
    }
    c->dirty = true;
    return 0;
}

/* Under secmu: the first value written into the section copy since it was made (not
 * stored raw yet): laid over it, and the copy stored raw at once (store_copy), streamed
 * from its file, so that what refuses storing it refuses this write; refused, the copy
 * gets the value's bytes of before back (was: room for them). */
static int store_first_value(struct rw *rw, const struct rw_target *t, const char *path, const uint8_t *field,
                             uint8_t *was)
{
    struct rw_section_copy *c = &rw->seccopy;
    int rc = copy_read(c, was, t->len, t->sec_off);
    if (!rc)
        rc = copy_write(rw, field, t->len, t->sec_off);
    if (rc) {
        rw_log(rw, "refused %s: the section's expanded bytes: %s; nothing changed", path, strerror(-rc));
        return rc;
    }
    struct rw_target st = *t;
    st.kind = RW_SECTION;
    rc = store_copy(rw, &st, path);
    if (rc && c->fd && c->gv == t->gv && c->sec == t->sec)
        (void)copy_write(rw, was, t->len, t->sec_off); /* the copy holds a write that is not pending: its
                                                      * bytes of before again (the writes before it are
                                                      * pending, stored raw: they stay) */
    else if (!rc && c->gv == t->gv && c->sec == t->sec)
        c->dirty = false, c->stored = true; /* its bytes written before went with it */
    return rc;
}

/* A value inside a compressed section: its bytes laid over the section copy (with the
 * values written before, until the commit). The first value written into a copy stores
 * it raw at once (store_first_value); the later ones only mark it for the commit
 * (defer_in_section). /info's last_section_write says what this write wrote into files. */
static int put_in_section(struct rw *rw, const struct rw_target *t, const char *path, const uint8_t *field)
{
    struct rw_section_copy *c = &rw->seccopy;
    char why[200] = "";
    uint8_t *was = malloc(t->len ? t->len : 1);
    pthread_mutex_lock(&rw->secmu);
    int rc = !was ? -ENOMEM : other_copy_dirty(rw, t) ? flush_section_copy(rw) : 0;
    uint64_t written = files_written(rw); /* another section's store is not this write's */
    if (!rc)
        rc = section_copy_for(rw, t, why, sizeof why);
    if (!rc && (t->sec_off > c->len || t->len > c->len - t->sec_off))
        rc = -EIO;
    if (rc == -EBUSY && why[0]) /* section_copy_for's refusal, with its why */
        rw_log(rw, "refused %s: %s; nothing changed", path, why);
    else if (rc)
        rw_log(rw, "refused %s: the section's expanded bytes: %s; nothing changed", path, why[0] ? why : strerror(-rc));
    else
        rc = c->stored ? defer_in_section(rw, t, path, field) : store_first_value(rw, t, path, field, was);
    __atomic_store_n(&rw->last_section_write, files_written(rw) - written, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&rw->secmu);
    free(was);
    return rc;
}

static uint32_t ld32(const uint8_t *b, bool be)
{
    return be ? (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3]
              : (uint32_t)b[3] << 24 | (uint32_t)b[2] << 16 | (uint32_t)b[1] << 8 | b[0];
}

static void st32(uint8_t *b, uint32_t v, bool be)
{
    for (int i = 0; i < 4; i++)
        b[i] = (uint8_t)(v >> (be ? 24 - 8 * i : 8 * i));
}

/* The bits a declared value keeps (t->keep: a flag its text does not show) put back from
 * the file's bytes with the pending edits over them: 0, -EINVAL with why when the new
 * value sets one of them, -EIO, -ENOMEM. */
static int keep_bits(struct rw *rw, const struct rw_target *t, uint8_t *bytes, char *why, size_t whylen)
{
    uint8_t *old = malloc(t->len);
    if (!old)
        return -ENOMEM;
    int rc = pread_current(rw, old, t->len, t->pos) ? 0 : -EIO;
    if (!rc) {
        pthread_mutex_lock(&rw->mu);
        edits_overlay(&rw->pending, t->pos, old, t->len);
        pthread_mutex_unlock(&rw->mu);
    }
    for (uint64_t at = 0; !rc && at + 4 <= t->len; at += 4) {
        uint32_t v = ld32(bytes + at, t->be);
        if (v & t->keep) {
            snprintf(why, whylen, "%" PRIu32 " does not fit the field's bits shown (mask 0x%08" PRIx32 ")", v,
                     ~t->keep);
            rc = -EINVAL;
        } else {
            st32(bytes + at, v | (ld32(old + at, t->be) & t->keep), t->be);
        }
    }
    free(old);
    return rc;
}

int rw_put_value(struct rw *rw, const struct rw_target *t, const char *path, const char *text, size_t len)
{
    uint8_t *bytes = malloc(t->len);
    if (!bytes)
        return -ENOMEM;
    char why[200], *plain = NULL;
    size_t plen = 0;
    int rc = t->nlabels ? strip_labels(t, text, len, &plain, &plen, why, sizeof why) : 0;
    if (plain) {
        text = plain;
        len = plen;
    }
    if (!rc)
        rc = t->is_table ? encode_table(rw, t, text, len, bytes, why, sizeof why)
                         : neg_errno_of(field_encode(&t->ft, t->be, text, len, bytes, why, sizeof why));
    if (!rc && t->keep)
        rc = keep_bits(rw, t, bytes, why, sizeof why);
    free(plain);
    if (rc == -EINVAL)
        rw_log(rw, "refused %s: %s; nothing changed", path, why);
    else if (rc)
        rw_log(rw, "refused %s: %s; nothing changed", path, strerror(-rc));
    else if (t->in_section)
        rc = put_in_section(rw, t, path, bytes);
    if (rc || t->in_section) {
        free(bytes);
        return rc;
    }
    pthread_mutex_lock(&rw->mu);
    bool spliced = in_splice(rw, t->pos, t->len), replaced = !spliced && in_replaced(rw, t->pos, t->len);
    pthread_mutex_unlock(&rw->mu);
    if (spliced || replaced) {
        rw_log(rw, "refused %s: %s (commit it first); nothing changed", path,
               spliced ? IN_SPLICE_WHY : IN_REPLACED_WHY);
        rc = -EBUSY;
    } else {
        rc = rw_put_bytes(rw, t, 0, bytes, t->len);
    }
    free(bytes);
    return rc;
}

static void put_le(uint8_t *b, uint32_t v, int n)
{
    for (int i = 0; i < n; i++)
        b[i] = (uint8_t)(v >> (8 * i));
}

/* A whole file's new content: in memory (mem) or the first len bytes of file fd. */
struct whole_src {
    const uint8_t *mem;
    int fd;
    uint64_t len;
};

/* Up to n bytes of the content from pos into buf: the count, or -errno. */
static ssize_t whole_read(const struct whole_src *w, uint64_t pos, uint8_t *buf, size_t n)
{
    if (pos >= w->len)
        return 0;
    if (n > w->len - pos)
        n = (size_t)(w->len - pos);
    if (w->mem) {
        memcpy(buf, w->mem + pos, n);
        return (ssize_t)n;
    }
    ssize_t got = pread(w->fd, buf, n, (off_t)pos);
    return got < 0 ? -errno : got == 0 ? -EIO : got;
}

/* Under mu: the content appended to the pending tail, deflated (zlib) or raw, piece by
 * piece (the tail is a file: nothing the size of the content is held in memory); at most
 * `room` bytes. Its stored length into *blen. 0, -EFBIG past room, -ENOMEM, -errno. */
static int append_stream(struct rw *rw, const struct whole_src *src, bool zlib, uint64_t room, uint64_t *blen)
{
    uint8_t *in = held_alloc(rw, STREAM_CHUNK), *out = held_alloc(rw, STREAM_CHUNK);
    z_stream z = {0};
    int rc = in && out ? 0 : -ENOMEM;
    bool zinit = !rc && zlib && deflateInit(&z, Z_DEFAULT_COMPRESSION) == Z_OK;
    if (!rc && zlib && !zinit)
        rc = -ENOMEM;
    *blen = 0;
    for (uint64_t pos = 0; !rc;) {
        ssize_t got = whole_read(src, pos, in, STREAM_CHUNK);
        if (got < 0) {
            rc = (int)got;
            break;
        }
        pos += (uint64_t)got;
        bool last = pos >= src->len;
        if (!zlib) {
            if (*blen + (uint64_t)got > room)
                rc = -EFBIG;
            else if (got)
                rc = neg_errno_of(tail_append(rw, in, (size_t)got));
            *blen += (uint64_t)got;
        } else {
            z.next_in = in;
            z.avail_in = (uInt)got;
            int zr;
            do {
                z.next_out = out;
                z.avail_out = STREAM_CHUNK;
                zr = deflate(&z, last ? Z_FINISH : Z_NO_FLUSH);
                size_t n = STREAM_CHUNK - z.avail_out;
                if (zr == Z_STREAM_ERROR)
                    rc = -ENOMEM;
                else if (*blen + n > room)
                    rc = -EFBIG;
                else if (n)
                    rc = neg_errno_of(tail_append(rw, out, n));
                *blen += n;
            } while (!rc && (z.avail_out == 0 || (last && zr != Z_STREAM_END)));
        }
        if (last)
            break;
    }
    if (zinit)
        deflateEnd(&z);
    held_free(rw, in, STREAM_CHUNK);
    held_free(rw, out, STREAM_CHUNK);
    return rc;
}

/* Under mu: the resource copy appended since the last commit whose offset field is at
 * f_offset, or SIZE_MAX. */
static size_t res_copy_of(const struct rw *rw, uint64_t f_offset)
{
    for (size_t i = 0; i < rw->nres; i++)
        if (rw->res[i].f_offset == f_offset)
            return i;
    return SIZE_MAX;
}

/* Under mu: room for one more resource copy noted (taken before anything changes). */
static int res_copy_room(struct rw *rw)
{
    return grow_array(&rw->res, &rw->capres, rw->nres + 1, sizeof *rw->res) ? -ENOMEM : 0;
}

/* Under mu, after res_copy_room: the copy [from, to) of the tail of resource t noted last
 * (the tail's order), the one it replaces (prev, SIZE_MAX: none) forgotten; `was`: the
 * file's bytes its record pointed at. A copy made from the section copy (a value or a
 * NAME.bin of a compressed section: t->in_section) says which section's. */
static void res_copy_note(struct rw *rw, size_t prev, const struct rw_target *t, uint64_t from, uint64_t to,
                          uint32_t word, const uint64_t was[2])
{
    if (prev != SIZE_MAX) {
        memmove(rw->res + prev, rw->res + prev + 1, (rw->nres - prev - 1) * sizeof *rw->res);
        rw->nres--;
    }
    bool of_copy = t->in_section && rw->seccopy.fd && rw->seccopy.gv == t->gv && rw->seccopy.sec == t->sec;
    rw->res[rw->nres++] = (struct rw_res_copy){t->f_offset, from, to, word, was[0], was[1], of_copy,
                                               of_copy ? t->gv : NULL, of_copy ? t->sec : 0,
                                               of_copy ? rw->seccopy.serial : 0, t->kind == RW_RESOURCE};
}

/* Under mu: the bytes of the file resource t's index record points at as committed
 * ([was[0], was[1]); empty when its words do not read): its stored size without the flag
 * bits the record keeps (view_part's stored_flags). */
static void record_span(struct rw *rw, const struct rw_target *t, uint64_t was[2])
{
    uint8_t off[4], stored[4];
    int fd = newest(rw)->fs->src.fd;
    was[0] = was[1] = 0;
    if (pread(fd, off, 4, (off_t)t->f_offset) != 4 || pread(fd, stored, 4, (off_t)t->f_stored) != 4)
        return;
    was[0] = ld32(off, false);
    was[1] = was[0] + (ld32(stored, false) & ~t->stored_flags);
}

/* Under mu: whether resource t's last copy pending was made by writes into the section
 * copy t writes into now (the same copy, not a fresh one of the same section made after
 * another section's), and the record still points at it: the copy then holds every write
 * made into the section since, and the resource is made again from its committed bytes
 * with them all (two values of one compressed section, one commit). */
static bool own_copy(const struct rw *rw, const struct rw_target *t)
{
    size_t i = res_copy_of(rw, t->f_offset);
    const struct rw_section_copy *c = &rw->seccopy;
    if (!t->in_section || i == SIZE_MAX || !rw->res[i].of_copy || rw->res[i].gv != t->gv ||
        rw->res[i].sec != t->sec || !c->fd || c->gv != t->gv || c->sec != t->sec ||
        c->serial != rw->res[i].copy_serial)
        return false;
    uint8_t now[4] = {0}, want[4];
    put_le(want, rw->res[i].word, 4);
    edits_overlay(&rw->pending, t->f_offset, now, 4);
    return memcmp(now, want, 4) == 0;
}

/* Under mu: whether the index record of the resource t lies in has a change pending that
 * a write into the resource cannot build on: a replacement of its data.bin, a word of the
 * record written, a section of it stored raw from other bytes than t's (unless t is the
 * RIG's granny.gr2 replaced whole, which supersedes what was written inside it), or bytes
 * of a section written and not stored yet (a NAME.bin) that t's whole part would not
 * hold. */
static bool record_busy(const struct rw *rw, const struct rw_target *t)
{
    const struct rw_section_copy *c = &rw->seccopy;
    if (!t->in_section && c->dirty && c->res_record == t->f_offset)
        return true;
    if (!edits_touch(&rw->pending, t->f_offset, 4) || own_copy(rw, t))
        return false;
    size_t i = res_copy_of(rw, t->f_offset);
    if (t->kind != RW_GRANNY || i == SIZE_MAX || rw->res[i].whole)
        return true;
    uint8_t now[4] = {0}, want[4];
    put_le(want, rw->res[i].word, 4);
    edits_overlay(&rw->pending, t->f_offset, now, 4);
    return memcmp(now, want, 4) != 0;
}

/* Under secmu and mu, after resource t's data.bin (or its RIG's granny.gr2) was replaced
 * whole: the section copy of a section inside it dropped (its writes, stored or not, are superseded
 * by the new content). Whether there were writes inside pending before (the copy of
 * before, the section copy's, and for data.bin patches of its committed bytes; a RIG's
 * values outside granny.gr2 are in its new bytes, not superseded). */
static bool supersede_inside(struct rw *rw, const struct rw_target *t, size_t prev, const uint64_t was[2])
{
    const struct rw_section_copy *c = &rw->seccopy;
    bool inside = prev != SIZE_MAX || (t->kind == RW_RESOURCE && was[1] > was[0] &&
                                       edits_touch(&rw->pending, was[0], was[1] - was[0]));
    if (c->fd && c->res_record == t->f_offset) {
        inside = true;
        section_copy_drop(rw);
    }
    return inside;
}

/* Under mu: a field of the file put undoably: what the file holds there is read from the
 * current generation's source (the pending bytes go over it in edits_put_undoable). */
static int put_field(struct rw *rw, struct edits_undo *u, uint64_t at, const uint8_t *b, size_t len)
{
    uint8_t was[EDITS_UNDO_BYTES];
    if (len > sizeof was || pread(newest(rw)->fs->src.fd, was, len, (off_t)at) != (ssize_t)len)
        return -EIO;
    return neg_errno_of(edits_put_undoable(&rw->pending, u, at, b, len, was));
}

/* Under mu: a resource's index record pointed at its copy appended at `at` (blen bytes
 * stored), undoably (u). */
static int put_index_record(struct rw *rw, struct edits_undo *u, const struct rw_target *t, uint64_t at,
                            uint64_t blen, uint64_t mem)
{
    uint8_t f[4];
    put_le(f, (uint32_t)at, 4);
    int rc = put_field(rw, u, t->f_offset, f, 4);
    if (!rc) {
        put_le(f, (uint32_t)blen | t->stored_flags, 4);
        rc = put_field(rw, u, t->f_stored, f, 4);
    }
    if (!rc) {
        put_le(f, (uint32_t)mem, 4);
        rc = put_field(rw, u, t->f_memory, f, 4);
    }
    if (!rc) {
        put_le(f, t->zlib ? t->codec_zlib : t->codec_raw, 2); /* the words its view gives */
        rc = put_field(rw, u, t->f_comp, f, 2);
    }
    return rc;
}

/* A package resource's new content appended to the pending tail and its index record
 * pointed at it, all or nothing (a refusal half-way takes back the appended bytes and
 * the words put). Replaced again before a commit, its copy of before becomes a hole of
 * the tail: the committed file holds the last copy only. */
static int put_resource(struct rw *rw, const struct rw_target *t, const char *path, const struct whole_src *src)
{
    if (src->len > RW_RESOURCE_MAX)
        return -EFBIG;
    pthread_mutex_lock(&rw->mu);
    struct edits_undo u;
    edits_undo_begin(&rw->pending, &u);
    uint64_t before = rw->pending.tail_len, blen = 0;
    uint64_t at = newest(rw)->fs->src.size + before; /* current while mu is held */
    size_t prev = res_copy_of(rw, t->f_offset);
    uint64_t was[2];
    record_span(rw, t, was);
    bool superseded = false;
    /* an index record's offset is 32 bits: the resource must end below 4 GiB */
    int rc = at >= UINT32_MAX ? -EFBIG : res_copy_room(rw);
    if (!rc)
        rc = append_stream(rw, src, t->zlib, UINT32_MAX - at, &blen);
    if (!rc)
        rc = put_index_record(rw, &u, t, at, blen, src->len);
    if (!rc && prev != SIZE_MAX) /* the last thing that may fail */
        rc = neg_errno_of(edits_tail_hole(&rw->pending, rw->res[prev].from, rw->res[prev].to));
    if (rc) {
        edits_undo(&rw->pending, &u); /* nothing of it stays pending */
    } else {
        if (t->kind == RW_RESOURCE || t->kind == RW_GRANNY) /* the last whole content wins */
            superseded = supersede_inside(rw, t, prev, was);
        res_copy_note(rw, prev, t, before, rw->pending.tail_len, (uint32_t)at, was);
    }
    note_memory(rw);
    pthread_mutex_unlock(&rw->mu);
    if (superseded)
        rw_log(rw, "%s: replaced whole; the writes inside %s pending before it are superseded (not written)", path,
               t->kind == RW_RESOURCE ? "the resource" : "it");
    if (rc == -EFBIG)
        rw_log(rw, "refused %s: the package would pass 4 GiB; nothing changed", path);
    else if (!rc && !t->zlib)
        rw_log(rw, "%s: stored raw (%" PRIu64 " bytes) after the package's end", path, src->len);
    return rc;
}

/* The content into file fd from its start, then zeros up to `size` (>= the content's
 * length): 0 or -errno. */
static int copy_whole(struct rw *rw, const struct whole_src *src, int fd, uint64_t size)
{
    uint8_t *buf = held_alloc(rw, STREAM_CHUNK);
    int rc = buf ? 0 : -ENOMEM;
    for (uint64_t pos = 0; !rc && pos < src->len;) {
        ssize_t got = whole_read(src, pos, buf, STREAM_CHUNK);
        if (got < 0)
            rc = (int)got;
        else
            rc = put_at(rw, fd, buf, (size_t)got, pos);
        pos += got > 0 ? (uint64_t)got : 0;
    }
    held_free(rw, buf, STREAM_CHUNK);
    if (!rc && ftruncate(fd, (off_t)size) != 0) /* the padding reads as zeros */
        rc = -errno;
    return rc;
}

/* edits_put of a 4-byte word of the container's head at file offset `at` (hb: the head's
 * bytes, read from head_pos), first keeping what the pending bytes held there so that a
 * later refusal can put it back. */
static int put_undoable(struct edits *e, const uint8_t *hb, uint64_t head_pos, uint64_t at, const uint8_t *word,
                        uint8_t *was, uint64_t *was_at, int *n)
{
    memcpy(was, hb + (at - head_pos), 4);
    edits_overlay(e, at, was, 4);
    int rc = neg_errno_of(edits_put(e, at, word, 4));
    if (rc == 0) {
        *was_at = at;
        (*n)++;
    }
    return rc;
}

/* The view's plan for t's part (t->resize: a wrapped RIG's granny.gr2) replaced by
 * new_len bytes, made from its container's head as the file has it now (into hb): which
 * bytes the new content (padded) replaces and which head words follow (a wrapper's
 * offsets). 0, -EIO, or -EPERM (logged). */
static int granny_plan(struct rw *rw, const struct rw_target *t, const char *path, uint64_t new_len,
                       uint8_t hb[RW_HEAD_MAX], struct view_resize_plan *plan)
{
    const struct view_resize *vr = &t->resize;
    if (!vr->plan || vr->head_len > RW_HEAD_MAX)
        return -EPERM;
    struct rw_gen *cur = acquire_newest(rw);
    bool read = pread(cur->fs->src.fd, hb, vr->head_len, (off_t)t->head_pos) == (ssize_t)vr->head_len;
    rw_release(rw, cur);
    if (!read)
        return -EIO;
    char why[200];
    enum s3_err e = vr->plan(hb, vr->pos, t->len, new_len, plan, why, sizeof why);
    bool words_in_head = e == S3_OK && plan->nwords <= sizeof plan->word / sizeof plan->word[0];
    for (uint32_t i = 0; words_in_head && i < plan->nwords; i++)
        words_in_head = plan->word_at[i] + 4 <= vr->head_len;
    if (e != S3_OK || !words_in_head || t->head_pos + plan->from != t->pos || plan->to < plan->from ||
        plan->new_len < new_len) {
        rw_log(rw, "refused %s: %s; nothing changed", path,
               e != S3_OK ? why : "the container's offsets do not frame the part");
        return -EPERM;
    }
    return 0;
}

/* A part its view lets be replaced at another length (t->resize: a wrapped RIG's
 * granny.gr2), by its plan (granny_plan): the bytes go into a splice, the head words into
 * patches. `built_on`: the wrapped_serial of the pending section write's bytes the new
 * ones were made from, whose splice they replace (0: none; another writer's since:
 * -EBUSY). own_fd >= 0: a scratch file whose first src->len bytes are the content and
 * nothing after them (new Granny bytes a section write made): taken in every case
 * (closed, or kept as the splice), so that the content is written once, not copied into
 * a file of the splice's own. */
static int put_granny(struct rw *rw, const struct rw_target *t, const char *path, const struct whole_src *src,
                      uint64_t built_on, int own_fd)
{
    uint8_t hb[RW_HEAD_MAX];
    struct view_resize_plan plan;
    int sfd = own_fd, rc = granny_plan(rw, t, path, src->len, hb, &plan);
    /* the splice: the new bytes and their padding (zeros), in an unlinked file beside the
     * source until the commit */
    if (!rc && sfd < 0) {
        enum s3_err made = edits_scratch(rw->lock->dirfd, &sfd);
        rc = made ? neg_errno_of(made) : copy_whole(rw, src, sfd, plan.new_len);
        if (made)
            sfd = -1;
    } else if (!rc && ftruncate(sfd, (off_t)plan.new_len) != 0) {
        rc = -errno;
    }
    if (rc) {
        if (sfd >= 0)
            close(sfd);
        return rc;
    }
    uint64_t from = t->head_pos + plan.from, to = t->head_pos + plan.to;
    pthread_mutex_lock(&rw->mu);
    /* nothing pending changes unless all of it does: the splice's only refusal is told
     * first, and the head words put are put back (into the edits they made, which takes
     * no memory) when a later one is refused */
    bool redo = built_on && built_on == rw->wrapped_serial && rw->wrapped_live && rw->pending.splice_from == from &&
                rw->pending.splice_to > rw->pending.splice_from;
    rc = !redo && rw->pending.splice_to > rw->pending.splice_from ? -EBUSY : 0;
    uint8_t f[4], was[8][4];
    uint64_t put_where[8];
    int nput = 0;
    for (uint32_t i = 0; i < plan.nwords && !rc; i++) {
        put_le(f, plan.word[i], 4);
        rc = put_undoable(&rw->pending, hb, t->head_pos, t->head_pos + plan.word_at[i], f, was[nput], &put_where[nput],
                          &nput);
    }
    if (!rc && redo)
        edits_drop_splice(&rw->pending); /* its bytes are in the new ones */
    if (!rc)
        rc = neg_errno_of(edits_splice_file(&rw->pending, from, to, sfd, (size_t)plan.new_len));
    while (rc && nput > 0) {
        nput--;
        (void)edits_put(&rw->pending, put_where[nput], was[nput], 4); /* an existing edit: no allocation */
    }
    note_memory(rw);
    pthread_mutex_unlock(&rw->mu);
    if (rc) {
        close(sfd);
        if (rc == -EBUSY)
            rw_log(rw, "refused %s: another whole replacement is pending; nothing changed", path);
    }
    return rc;
}

/* Under mu: the raw copy of t's section stored since the last commit (in the tail, or in
 * the wrapped RIG's new Granny bytes), or -1. -EBUSY when there is one but another
 * section was stored after it: it cannot be stored again in its place. */
static int raw_copy_of(struct rw *rw, const struct rw_target *t, bool wrapped, size_t *at)
{
    size_t last = SIZE_MAX;
    for (size_t i = 0; i < rw->nraw; i++)
        if (rw->raw[i].wrapped == wrapped)
            last = i;
    for (size_t i = 0; i < rw->nraw; i++)
        if (rw->raw[i].wrapped == wrapped && rw->raw[i].gv == t->gv && rw->raw[i].sec == t->sec) {
            *at = i;
            return i == last ? 0 : -EBUSY;
        }
    return -1;
}

/* Under mu: room for one more raw copy noted (taken before anything changes, so that the
 * note cannot fail after): 0 or -ENOMEM. */
static int raw_copy_room(struct rw *rw)
{
    return grow_array(&rw->raw, &rw->capraw, rw->nraw + 1, sizeof *rw->raw) ? -ENOMEM : 0;
}

/* Under mu, after raw_copy_room: a raw copy stored at `from` (or its place again). */
static void raw_copy_note(struct rw *rw, const struct rw_target *t, bool wrapped, uint64_t from)
{
    size_t at;
    if (raw_copy_of(rw, t, wrapped, &at) == 0)
        rw->raw[at].from = from;
    else if (rw->nraw < rw->capraw)
        rw->raw[rw->nraw++] = (struct rw_raw_copy){t->gv, t->sec, wrapped, from};
}

/* Under mu: the wrapped RIG's raw copies forgotten (their Granny bytes are gone). */
static void raw_copies_drop_wrapped(struct rw *rw)
{
    size_t k = 0;
    for (size_t i = 0; i < rw->nraw; i++)
        if (!rw->raw[i].wrapped)
            rw->raw[k++] = rw->raw[i];
    rw->nraw = k;
}

static void log_stored_after(struct rw *rw, const char *path, uint32_t sec)
{
    rw_log(rw, "refused %s: section %" PRIu32 " was stored raw before another section since the last commit, "
               "and cannot be stored again in its place until a commit; nothing changed", path, sec);
}

/* The Granny bytes a section write builds on, read piece by piece: a wrapped RIG's from
 * the file (the pending patches laid over them) or from the previous such write's splice
 * file while it is pending (fd: a duplicate of it, ours to close), or a package
 * resource's as its nested view reads them (rs). */
struct base_src {
    int fd;                /* >= 0: the splice file's first len bytes */
    const struct source *rs; /* else when set: a resource's source, from pos on */
    uint64_t pos;          /* else: the file from pos on, with the pending patches */
    uint64_t len;
    /* rs stored raw in the file, its byte 0 at file_at: the pending patches there (values
     * of its uncompressed parts) laid over what it reads */
    bool overlay;
    uint64_t file_at;
};

/* n bytes of the base from pos into buf: 0 or -errno. */
static int base_read(struct rw *rw, const struct base_src *b, uint64_t pos, uint8_t *buf, size_t n)
{
    if (b->fd >= 0)
        return pread(b->fd, buf, n, (off_t)pos) == (ssize_t)n ? 0 : -EIO;
    if (b->rs) {
        if (source_pread((struct source *)b->rs, b->pos + pos, buf, n) != S3_OK)
            return -EIO;
        if (b->overlay) {
            pthread_mutex_lock(&rw->mu);
            edits_overlay(&rw->pending, b->file_at + b->pos + pos, buf, n);
            pthread_mutex_unlock(&rw->mu);
        }
        return 0;
    }
    if (!pread_current(rw, buf, n, b->pos + pos))
        return -EIO;
    pthread_mutex_lock(&rw->mu);
    edits_overlay(&rw->pending, b->pos + pos, buf, n);
    pthread_mutex_unlock(&rw->mu);
    return 0;
}

/* The Granny bytes a wrapped-RIG section write builds on: those of the previous such
 * write while its splice is still pending, else the file's (pending patches over them).
 * *serial: the pending bytes' wrapped_serial, 0 for the file's. */
static int wrapped_base(struct rw *rw, const struct rw_target *t, struct base_src *b, uint64_t *serial,
                        bool *stored_after)
{
    pthread_mutex_lock(&rw->mu);
    const struct edits *e = &rw->pending;
    bool live = rw->wrapped_live && e->splice_to > e->splice_from && e->splice_from == t->gr2_pos && e->splice_fd;
    int rc = raw_copy_room(rw);
    uint64_t n = live ? rw->wrapped_len : t->gr2_len;
    size_t at;
    *stored_after = false;
    *b = (struct base_src){.fd = -1, .pos = t->gr2_pos};
    if (!live) {
        rw->wrapped_live = false;
        raw_copies_drop_wrapped(rw);
        if (!rc && e->splice_to > e->splice_from)
            rc = -EBUSY; /* another whole replacement is pending */
    } else if (!rc) {
        /* this section stored raw by the last such write: stored again in its place (the
         * bytes before it are the ones it was appended to) */
        int again = raw_copy_of(rw, t, true, &at);
        if (again == -EBUSY)
            rc = -EBUSY, *stored_after = true;
        else if (again == 0 && rw->raw[at].from <= n)
            n = rw->raw[at].from;
    }
    /* a duplicate: a writer that replaces the splice meanwhile closes only its own */
    if (!rc && live && (b->fd = fcntl(e->splice_fd - 1, F_DUPFD_CLOEXEC, 0)) < 0)
        rc = -errno;
    b->len = n;
    *serial = live ? rw->wrapped_serial : 0;
    pthread_mutex_unlock(&rw->mu);
    return rc;
}

/* The base's first blen bytes, then the content from `at` on, into file fd, a chunk at a
 * time (buf: STREAM_CHUNK bytes). */
static int compose_copy(struct rw *rw, const struct base_src *base, uint64_t blen, const struct whole_src *data,
                        uint64_t at, int fd, uint8_t *buf)
{
    int rc = 0;
    for (uint64_t pos = 0; !rc && pos < blen;) {
        size_t n = blen - pos < STREAM_CHUNK ? (size_t)(blen - pos) : STREAM_CHUNK;
        rc = base_read(rw, base, pos, buf, n);
        if (!rc)
            rc = put_at(rw, fd, buf, n, pos);
        pos += n;
    }
    for (uint64_t pos = 0; !rc && pos < data->len;) {
        ssize_t got = whole_read(data, pos, buf, STREAM_CHUNK);
        rc = got < 0 ? (int)got : put_at(rw, fd, buf, (size_t)got, at + pos);
        pos += got > 0 ? (uint64_t)got : 0;
    }
    return rc;
}

/* The CRC of the new Granny bytes in file fd (total bytes), by the format's rule (the
 * view's crc_rule: from the header's end to total_size), stored when it was right before
 * (a wrong one stays as it was); read back a chunk at a time. */
static int compose_crc(struct rw *rw, const struct rw_target *t, int fd, uint64_t total, uint8_t *buf)
{
    uint64_t field, from;
    bool be;
    if (!t->gops->crc_rule(t->gv, &field, &from, &be) || from > total || field + 4 > from)
        return 0;
    uLong crc = crc32(0L, Z_NULL, 0);
    for (uint64_t pos = from; pos < total;) {
        size_t n = total - pos < STREAM_CHUNK ? (size_t)(total - pos) : STREAM_CHUNK;
        if (pread(fd, buf, n, (off_t)pos) != (ssize_t)n)
            return -EIO;
        crc = crc32(crc, buf, (uInt)n);
        pos += n;
    }
    uint8_t f[4];
    for (int i = 0; i < 4; i++)
        f[i] = (uint8_t)(be ? crc >> (24 - 8 * i) : crc >> (8 * i));
    return put_at(rw, fd, f, 4, field);
}

/* New Granny bytes with section t->sec stored raw in them, written into file fd (a fresh
 * scratch file) piece by piece, never whole in memory: the old ones (the base's first
 * blen bytes), the section's content 4-aligned after them (at *at) with the tables the
 * plan gives, its header and total_size changed, the CRC recomputed when it was right.
 * Their length into *outlen. 0, -EFBIG past RW_RESOURCE_MAX, -ENOMEM, -EIO; *e and why say
 * what the Granny plan refused. */
static int compose_raw(struct rw *rw, const struct rw_target *t, const struct base_src *base, uint64_t blen,
                       const struct whole_src *data, int fd, uint64_t *outlen, uint64_t *at, enum s3_err *e,
                       char *why, size_t whylen)
{
    struct view_raw_plan plan = {0};
    uint8_t *buf = NULL;
    *at = ((blen > t->gtotal ? blen : t->gtotal) + 3) & ~3ull;
    *e = t->gops->raw_plan(t->gv, t->sec, *at, data->len, &plan, why, whylen);
    uint64_t header = plan.header_at, total_field = plan.total_at;
    int rc = *e == S3_OK ? 0 : *e == S3_ERR_NOMEM ? -ENOMEM : *e == S3_ERR_LIMIT ? -EFBIG : -EIO;
    uint64_t hrel = header - t->gr2_base, trel = total_field - t->gr2_base;
    if (!rc && (plan.total > RW_RESOURCE_MAX || hrel + plan.header_len > blen || trel + 4 > blen))
        rc = -EFBIG;
    if (!rc && !(buf = held_alloc(rw, STREAM_CHUNK)))
        rc = -ENOMEM;
    if (!rc && ftruncate(fd, (off_t)plan.total) != 0) /* the padding reads as zeros */
        rc = -errno;
    if (!rc)
        rc = compose_copy(rw, base, blen, data, *at, fd, buf);
    if (!rc && plan.after_len)
        rc = put_at(rw, fd, plan.after, plan.after_len, *at + data->len);
    if (!rc)
        rc = put_at(rw, fd, plan.header, plan.header_len, hrel);
    if (!rc)
        rc = put_at(rw, fd, plan.total_bytes, 4, trel);
    if (!rc)
        rc = compose_crc(rw, t, fd, plan.total, buf);
    if (!rc)
        *outlen = plan.total;
    held_free(rw, buf, STREAM_CHUNK);
    free(plan.after);
    return rc;
}

/* The log line of a section stored raw in new Granny bytes (`where` they go), or of its
 * refusal: the Granny plan's (e, why), a pending write's (busy), the size bound's. */
static void log_composed(struct rw *rw, const char *path, const struct rw_target *t, uint64_t len, int rc,
                         enum s3_err e, const char *why, const char *busy, const char *where)
{
    if (e != S3_OK)
        rw_log(rw, "refused %s: %s; nothing changed", path, why);
    else if (busy)
        rw_log(rw, "refused %s: %s; nothing changed", path, busy);
    else if (rc == -EFBIG)
        rw_log(rw, "refused %s: %s would pass %u bytes; nothing changed", path, where, RW_RESOURCE_MAX);
    else if (!rc)
        rw_log(rw, "%s: section %" PRIu32 " stored raw (%" PRIu64 " bytes, compression 0) in %s, Granny CRC "
                   "recomputed", path, t->sec, len, where);
}

/* A compressed section of a wrapped RIG's Granny data, stored raw: new Granny bytes
 * (compose_raw, in a scratch file) replace granny.gr2 whole (put_granny: the wrapper's
 * offsets follow); its splice file is what the next section write builds on. */
static int put_wrapped_section(struct rw *rw, const struct rw_target *t, const char *path,
                               const struct whole_src *data)
{
    struct base_src base = {.fd = -1};
    char why[200] = "";
    uint64_t serial = 0, at = 0, nlen = 0;
    bool stored_after;
    enum s3_err e = S3_OK;
    int sfd = -1;
    int rc = wrapped_base(rw, t, &base, &serial, &stored_after);
    int base_rc = rc;
    if (!rc)
        rc = neg_errno_of(edits_scratch(rw->lock->dirfd, &sfd));
    if (!rc)
        rc = compose_raw(rw, t, &base, base.len, data, sfd, &nlen, &at, &e, why, sizeof why);
    bool put = !rc; /* put_granny logs its own refusals */
    if (put) {
        struct rw_target gt = {
            .kind = RW_GRANNY, .pos = t->gr2_pos, .len = t->gr2_len, .resize = t->resize, .head_pos = t->head_pos};
        struct whole_src src = {NULL, sfd, nlen};
        rc = put_granny(rw, &gt, path, &src, serial, sfd); /* sfd taken: the splice's file */
        sfd = -1;
        pthread_mutex_lock(&rw->mu);
        if (!rc) { /* what the next section write builds on: the splice's first nlen bytes */
            rw->wrapped_live = true;
            rw->wrapped_len = nlen;
            rw->wrapped_serial++;
            if (raw_copy_room(rw) == 0) /* taken in wrapped_base: cannot fail here */
                raw_copy_note(rw, t, true, at);
        }
        pthread_mutex_unlock(&rw->mu);
    }
    if (sfd >= 0)
        close(sfd);
    if (base.fd >= 0)
        close(base.fd);
    if (stored_after)
        log_stored_after(rw, path, t->sec);
    else if (!put || !rc)
        log_composed(rw, path, t, data->len, rc, e, why,
                     base_rc == -EBUSY ? "another whole replacement is pending" : NULL, "the RIG's new granny.gr2");
    return rc;
}

static int put_resource(struct rw *rw, const struct rw_target *t, const char *path, const struct whole_src *src);

/* A compressed section of a Granny file that is a package resource's whole data, stored
 * raw: the resource's new bytes (compose_raw over its bytes as the view reads them, in a
 * scratch file) replace its data.bin whole (put_resource: appended, stored as it was, its
 * index record updated). Refused (EBUSY) while a replacement of that resource is pending:
 * its bytes would not be the ones built on. */
static int put_resource_section(struct rw *rw, const struct rw_target *t, const char *path,
                                const struct whole_src *data)
{
    struct base_src base = {.fd = -1, .rs = &t->gfs->src, .pos = 0, .len = t->gfs->src.size,
                            .overlay = t->res_in_file, .file_at = t->res_file_pos};
    char why[200] = "";
    uint64_t at = 0, nlen = 0;
    enum s3_err e = S3_OK;
    int sfd = -1;
    pthread_mutex_lock(&rw->mu);
    bool pending = record_busy(rw, t);
    pthread_mutex_unlock(&rw->mu);
    int rc = pending ? -EBUSY : base.len > RW_RESOURCE_MAX ? -EFBIG : 0;
    if (!rc)
        rc = neg_errno_of(edits_scratch(rw->lock->dirfd, &sfd));
    if (!rc)
        rc = compose_raw(rw, t, &base, base.len, data, sfd, &nlen, &at, &e, why, sizeof why);
    bool put = !rc; /* put_resource logs its own refusals */
    if (put) {
        struct whole_src src = {NULL, sfd, nlen};
        rc = put_resource(rw, t, path, &src);
    }
    if (sfd >= 0)
        close(sfd);
    if (!put || !rc)
        log_composed(rw, path, t, data->len, rc, e, why,
                     pending ? "a replacement of the package resource holding it is pending" : NULL,
                     "the resource's new data");
    return rc;
}

/* Under mu: a raw copy appended to the pending tail: padding, the section's bytes (piece
 * by piece: from a handle's file they are never in memory whole), the tables stored with
 * it. 0 or the -errno of the append (then the tail is as it was). */
static int append_copy(struct rw *rw, uint64_t pad, const struct whole_src *src, const struct view_raw_plan *plan)
{
    static const uint8_t zero[4];
    size_t tail_was = rw->pending.tail_len;
    uint64_t appended = 0;
    int rc = neg_errno_of(tail_append(rw, zero, (size_t)pad));
    if (!rc)
        rc = append_stream(rw, src, false, src->len, &appended);
    if (!rc)
        rc = neg_errno_of(tail_append(rw, plan->after, plan->after_len));
    if (rc)
        edits_cut_tail(&rw->pending, tail_was); /* what was appended is not referenced: dropped */
    return rc;
}

/* Under secmu and mu: everything pending dropped (the tail's file failed where it held a
 * copy), the section copy with it (its writes were stored in it). */
static void drop_pending(struct rw *rw)
{
    edits_clear(&rw->pending);
    rw->ngr2 = 0;
    rw->nraw = 0;
    rw->nres = 0;
    section_copy_drop(rw);
}

/* A compressed section's expanded bytes, stored raw after the Granny data (the file's
 * end, after what is appended already), 4-aligned; the Granny format's plan
 * (the view's raw_plan) gives the section header, the tables that were compressed with it,
 * and total_size. The old stored bytes stay, unreferenced. Stored raw again before a
 * commit, the section goes in the place of its copy of before when that is the last one
 * appended (room for it is proven first by appending it at the end: once in place, no
 * allocation is left to fail), so that no copy is left unreferenced; when another
 * section's copy follows it, the write is refused (EBUSY) until a commit. */
static int put_section_raw(struct rw *rw, const struct rw_target *t, const char *path, const struct whole_src *src);

/* n bytes of src from pos to file fd at `at`, a chunk at a time (buf: STREAM_CHUNK). */
static int copy_src_to(struct rw *rw, const struct whole_src *src, uint64_t pos, uint64_t n, int fd, uint64_t at, uint8_t *buf)
{
    int rc = 0;
    for (uint64_t done = 0; !rc && done < n;) {
        size_t want = n - done < STREAM_CHUNK ? (size_t)(n - done) : STREAM_CHUNK;
        ssize_t got = whole_read(src, pos + done, buf, want);
        rc = got < 0 ? (int)got : got == 0 ? -EIO : put_at(rw, fd, buf, (size_t)got, at + done);
        done += got > 0 ? (uint64_t)got : 0;
    }
    return rc;
}

/* New bytes of a container that lets part [vr->pos, +vr->len) be replaced at another
 * length (a wrapped RIG: vr from its view), written into file fd piece by piece: the old
 * ones (the base's first blen bytes) with [plan.from, plan.to) replaced by the content
 * zero-padded to plan.new_len and the plan's head words changed. Their length into
 * *outlen; 0, or -EPERM (the plan refused: why), -EFBIG, -ENOMEM, -EIO. */
static int compose_resized(struct rw *rw, const struct view_resize *vr, const struct base_src *base, uint64_t blen,
                           const struct whole_src *content, int fd, uint64_t *outlen, char *why, size_t whylen)
{
    uint8_t hb[RW_HEAD_MAX];
    struct view_resize_plan plan;
    if (!vr->plan || vr->head_len > sizeof hb || vr->head_len > blen)
        return -EPERM;
    int rc = base_read(rw, base, 0, hb, vr->head_len);
    if (rc)
        return rc;
    if (vr->plan(hb, vr->pos, vr->len, content->len, &plan, why, whylen) != S3_OK)
        return -EPERM;
    bool ok = plan.nwords <= sizeof plan.word / sizeof plan.word[0] && plan.from == vr->pos &&
              plan.from <= plan.to && plan.to <= blen && plan.new_len >= content->len;
    for (uint32_t i = 0; ok && i < plan.nwords; i++)
        ok = plan.word_at[i] + 4 <= vr->head_len && plan.word_at[i] + 4 <= plan.from;
    if (!ok) {
        snprintf(why, whylen, "the container's offsets do not frame the part");
        return -EPERM;
    }
    uint64_t total = plan.from + plan.new_len + (blen - plan.to);
    if (total > RW_RESOURCE_MAX)
        return -EFBIG;
    uint8_t *buf = held_alloc(rw, STREAM_CHUNK);
    if (!buf)
        return -ENOMEM;
    rc = ftruncate(fd, (off_t)total) == 0 ? 0 : -errno; /* the padding reads as zeros */
    for (uint64_t pos = 0; !rc && pos < plan.from;) { /* the head and what precedes the part */
        size_t n = plan.from - pos < STREAM_CHUNK ? (size_t)(plan.from - pos) : STREAM_CHUNK;
        rc = base_read(rw, base, pos, buf, n);
        rc = rc ? rc : put_at(rw, fd, buf, n, pos);
        pos += n;
    }
    if (!rc)
        rc = copy_src_to(rw, content, 0, content->len, fd, plan.from, buf);
    for (uint64_t pos = plan.to; !rc && pos < blen;) { /* what follows it, moved */
        size_t n = blen - pos < STREAM_CHUNK ? (size_t)(blen - pos) : STREAM_CHUNK;
        rc = base_read(rw, base, pos, buf, n);
        rc = rc ? rc : put_at(rw, fd, buf, n, plan.from + plan.new_len + (pos - plan.to));
        pos += n;
    }
    for (uint32_t i = 0; !rc && i < plan.nwords; i++) {
        uint8_t f[4];
        put_le(f, plan.word[i], 4);
        rc = put_at(rw, fd, f, 4, plan.word_at[i]);
    }
    held_free(rw, buf, STREAM_CHUNK);
    if (!rc)
        *outlen = total;
    return rc;
}

/* A wrapped RIG's granny.gr2 (content) when the RIG is a package resource's whole data:
 * new RIG bytes (compose_resized, in a scratch file) replace the resource's data.bin
 * whole (put_resource: appended, stored as it was, its index record updated). */
static int put_rig_in_resource(struct rw *rw, const struct rw_target *t, const char *path,
                               const struct whole_src *content)
{
    struct base_src rig = {.fd = -1, .rs = t->res_src, .pos = 0, .len = t->res_src ? t->res_src->size : 0,
                           .overlay = t->res_in_file, .file_at = t->res_file_pos};
    char why[200] = "";
    uint64_t nlen = 0;
    int sfd = -1;
    pthread_mutex_lock(&rw->mu);
    bool pending = record_busy(rw, t);
    pthread_mutex_unlock(&rw->mu);
    int rc = pending ? -EBUSY : !t->res_src ? -EIO : 0;
    if (!rc)
        rc = neg_errno_of(edits_scratch(rw->lock->dirfd, &sfd));
    if (!rc)
        rc = compose_resized(rw, &t->resize, &rig, rig.len, content, sfd, &nlen, why, sizeof why);
    bool put = !rc; /* put_resource logs its own refusals */
    if (put) {
        struct whole_src src = {NULL, sfd, nlen};
        rc = put_resource(rw, t, path, &src);
    }
    if (sfd >= 0)
        close(sfd);
    if (pending)
        rw_log(rw, "refused %s: a replacement of the package resource holding it is pending; nothing changed", path);
    else if (!put && rc == -EPERM)
        rw_log(rw, "refused %s: %s; nothing changed", path, why);
    else if (!put && rc == -EFBIG)
        rw_log(rw, "refused %s: the resource's new data would pass %u bytes; nothing changed", path,
               RW_RESOURCE_MAX);
    else if (!rc)
        rw_log(rw, "%s: the RIG's granny.gr2 replaced (%" PRIu64 " bytes) in the resource's new data", path,
               content->len);
    return rc;
}

/* A compressed section of the Granny data of a wrapped RIG that is a package resource's
 * whole data, stored raw: new Granny bytes (compose_raw over granny.gr2 as the RIG view
 * reads it) in one scratch file, new RIG bytes around them (put_rig_in_resource) in
 * another, which replace the resource's data.bin. */
static int put_rig_resource_section(struct rw *rw, const struct rw_target *t, const char *path,
                                    const struct whole_src *data)
{
    struct base_src gr = {.fd = -1, .rs = t->res_src, .pos = t->gr2_pos, .len = t->gr2_len,
                          .overlay = t->res_in_file, .file_at = t->res_file_pos};
    char why[200] = "";
    uint64_t at = 0, nlen = 0;
    enum s3_err e = S3_OK;
    int sfd = -1;
    pthread_mutex_lock(&rw->mu);
    bool pending = record_busy(rw, t);
    pthread_mutex_unlock(&rw->mu);
    int rc = pending ? -EBUSY : !t->res_src ? -EIO : 0;
    if (!rc)
        rc = neg_errno_of(edits_scratch(rw->lock->dirfd, &sfd));
    if (!rc)
        rc = compose_raw(rw, t, &gr, gr.len, data, sfd, &nlen, &at, &e, why, sizeof why);
    bool put = !rc; /* put_rig_in_resource logs its own */
    if (put) {
        struct whole_src granny = {NULL, sfd, nlen};
        rc = put_rig_in_resource(rw, t, path, &granny);
    }
    if (sfd >= 0)
        close(sfd);
    if (!put || !rc)
        log_composed(rw, path, t, data->len, rc, e, why,
                     pending ? "a replacement of the package resource holding it is pending" : NULL,
                     "the RIG's new granny.gr2 in the resource's new data");
    return rc;
}

/* A section's new bytes (in memory or a handle's file), stored raw the way its place
 * asks, piece by piece in every case (never read whole into memory). */
static int put_section_src(struct rw *rw, const struct rw_target *t, const char *path, const struct whole_src *src)
{
    if (t->wrapped)
        return put_wrapped_section(rw, t, path, src);
    if (t->rig_in_resource)
        return put_rig_resource_section(rw, t, path, src);
    if (t->in_resource)
        return put_resource_section(rw, t, path, src);
    return put_section_raw(rw, t, path, src);
}

static int store_copy(struct rw *rw, const struct rw_target *t, const char *path)
{
    const struct rw_section_copy *c = &rw->seccopy;
    struct whole_src src = {NULL, c->fd - 1, c->len};
    return put_section_src(rw, t, path, &src);
}

/* put_section of a Granny file's own section, its bytes from src (streamed). */
static int put_section_raw(struct rw *rw, const struct rw_target *t, const char *path, const struct whole_src *src)
{
    size_t len = (size_t)src->len;
    char why[200] = "";
    pthread_mutex_lock(&rw->mu);
    size_t prev = 0;
    int again = raw_copy_of(rw, t, false, &prev);
    int rc = again == -EBUSY ? -EBUSY : raw_copy_room(rw);
    uint64_t from = again == 0 ? rw->raw[prev].from : rw->pending.tail_len;
    uint64_t rel = newest(rw)->fs->src.size + from - t->pos; /* current while mu is held */
    uint64_t pad = (4 - rel % 4) % 4, header = 0, total_field = 0;
    struct view_raw_plan plan = {0};
    enum s3_err e = S3_OK;
    if (!rc) {
        e = t->gops->raw_plan(t->gv, t->sec, rel + pad, len, &plan, why, sizeof why);
        header = plan.header_at, total_field = plan.total_at;
        rc = e == S3_OK ? 0 : e == S3_ERR_NOMEM ? -ENOMEM : e == S3_ERR_LIMIT ? -EFBIG : -EIO;
    }
    /* all or nothing: what may fail for lack of memory comes before the copy of before
     * is overwritten, and a refusal takes back the appended bytes and the header words */
    struct edits_undo u;
    edits_undo_begin(&rw->pending, &u);
    if (!rc)
        rc = note_gr2(rw, t); /* only says where the CRC is: harmless when refused after */
    if (!rc)
        rc = append_copy(rw, pad, src, &plan);
    if (!rc)
        rc = put_field(rw, &u, t->pos + (header - t->gr2_base), plan.header, plan.header_len);
    if (!rc)
        rc = put_field(rw, &u, t->pos + (total_field - t->gr2_base), plan.total_bytes, 4);
    if (rc)
        edits_undo(&rw->pending, &u);
    bool lost = false;
    if (!rc && again == 0) { /* in the place of the copy of before, room proven at the end */
        edits_cut_tail(&rw->pending, from);
        rc = append_copy(rw, pad, src, &plan);
        if (rc) { /* the copy of before is overwritten in part: nothing pending is whole */
            drop_pending(rw);
            lost = true;
        }
    }
    if (!rc) {
        for (size_t i = 0; i < rw->ngr2; i++)
            if (rw->gr2[i].dir == t->gr2_dir)
                rw->gr2[i].grown = plan.total - (rw->gr2[i].len);
        raw_copy_note(rw, t, false, from);
    }
    note_memory(rw);
    pthread_mutex_unlock(&rw->mu);
    free(plan.after);
    if (e != S3_OK)
        rw_log(rw, "refused %s: %s; nothing changed", path, why);
    else if (again == -EBUSY)
        log_stored_after(rw, path, t->sec);
    else if (lost)
        rw_log(rw, "failed %s: the pending edits' file: %s; every pending edit is dropped", path, strerror(-rc));
    else if (!rc)
        rw_log(rw, "%s: section %" PRIu32 " stored raw (%zu bytes, compression 0) after the Granny data", path,
               t->sec, len);
    return rc;
}

static int put_whole(struct rw *rw, const struct rw_target *t, const char *path, const struct whole_src *src)
{
    if (src->len > RW_RESOURCE_MAX)
        return -EFBIG;
    /* each may read or drop the section copy (drop_pending; a replaced resource supersedes
     * the copy of a section inside it: supersede_inside): under secmu */
    pthread_mutex_lock(&rw->secmu);
    struct rw_section_copy *c = &rw->seccopy;
    bool own = c->fd && t->kind == RW_SECTION && c->gv == t->gv && c->sec == t->sec;
    /* values of another section waiting in the copy are stored first, in the order
     * written (stored after this one they would be refused at every commit); in a package
     * resource they stay waiting: its own refusals (record_busy) or supersede_inside say */
    int rc = c->dirty && !own && !c->res_record ? flush_section_copy(rw) : 0;
    if (!rc)
        rc = t->kind == RW_SECTION                         ? put_section_src(rw, t, path, src)
             : t->kind == RW_GRANNY && t->rig_in_resource ? put_rig_in_resource(rw, t, path, src)
             : t->kind == RW_GRANNY                        ? put_granny(rw, t, path, src, 0, -1)
                                                           : put_resource(rw, t, path, src);
    if (!rc && own && c->fd && c->gv == t->gv && c->sec == t->sec) {
        if (c->dirty) /* the later whole content wins: the copy's writes are not stored over it */
            rw_log(rw, "%s: replaced whole; the writes into the section pending before it are superseded", path);
        section_copy_drop(rw); /* its bytes are not the section's any more */
    }
    pthread_mutex_unlock(&rw->secmu);
    return rc;
}

int rw_put_whole(struct rw *rw, const struct rw_target *t, const char *path, const void *data, size_t len)
{
    struct whole_src src = {data, -1, len};
    return put_whole(rw, t, path, &src);
}

int rw_put_whole_fd(struct rw *rw, const struct rw_target *t, const char *path, int fd, uint64_t len)
{
    struct whole_src src = {NULL, fd, len};
    return put_whole(rw, t, path, &src);
}

/* ---- commit ---- */

/* The CRC of a Granny part touched by the edits, recomputed over the new bytes when the
 * Granny view says where by the format's rule (VIEW_SECTION_DATA: the CRC was right before;
 * a wrong one stays as it was) and the edits leave the CRC field itself alone. */
static bool gr2_fix(struct rw *rw, struct rw_gen *g, const struct rw_gr2 *p, struct crc_fix *fix)
{
    struct tree *t = g->fs->tree;
    struct source *s = tree_node_source(t, p->dir);
    struct view_section vs;
    if (!view_section_of(g->fs, VIEW_SECTION_DATA, p->dir, 0, &vs) || !vs.crc_ok)
        return false;
    uint64_t field = vs.crc_field, from = vs.crc_from, to = vs.crc_to;
    fix->be = vs.crc_be;
    if (to <= from ||
        !file_pos(g, s, field, 4, &fix->field_off) || !file_pos(g, s, from, to - from, &fix->from))
        return false;
    fix->to = fix->from + (to - from) + p->grown; /* sections stored raw after it: covered too */
    return !edits_touch(&rw->pending, fix->field_off, 4);
}

struct writer {
    int in_fd;
    uint64_t size;
    const struct edits *e;
    const struct crc_fix *fix;
    size_t nfix;
};

static enum s3_err write_new(int fd, void *ctx)
{
    const struct writer *w = ctx;
    return edits_write(w->in_fd, w->size, w->e, w->fix, w->nfix, fd);
}

/* A watched folder: opened again from its path and scanned (its root listed) before it
 * becomes the next generation, so that the generation captures the folder while `opened`
 * has not moved yet: a change the watch counts from the scan's start on stays ahead of
 * it and gets a rescan of its own (rw_acquire). A failure keeps the tree as it was; the
 * next change tries again. */
static void reopen_folder(struct rw *rw, struct rw_gen *g)
{
    char err[512];
    struct s3fs *fs = NULL;
    if (s3fs_open(&fs, g->fs->src.path, &rw->opts, err, sizeof err) != S3_OK) {
        fprintf(stderr, "mount.s3rig: rescan failed (%s): the tree shows the folder as before\n", err);
        return;
    }
    enum s3_err scanned = tree_populate(fs->tree, fs->root);
    if (scanned) {
        fprintf(stderr, "mount.s3rig: rescan failed (%s): the tree shows the folder as before\n",
                s3_err_str(scanned));
        s3fs_close(fs);
        return;
    }
    if (gen_add(rw, fs, g->epoch + 1)) {
        fprintf(stderr, "mount.s3rig: rescan: out of memory: the tree shows the folder as before\n");
        s3fs_close(fs);
    }
}

/* Opens the committed file as the next generation. */
static void reopen(struct rw *rw, struct rw_gen *g)
{
    if (rw->watch) {
        reopen_folder(rw, g);
        return;
    }
    char *path = NULL;
    char err[512];
    struct s3fs *fs = NULL;
    if (asprintf(&path, "%s/%s", rw->lock->dir, rw->lock->name) < 0) {
        rw_log(rw, "committed, but out of memory opening it again: the tree shows the previous version");
        return;
    }
    enum s3_err e = s3fs_open(&fs, path, &rw->opts, err, sizeof err);
    free(path);
    if (e) {
        rw_log(rw, "committed, but the new file does not open (%s): the tree shows the previous version", err);
        return;
    }
    if (fs->src.st.st_ino != rw->lock->st.st_ino || fs->src.st.st_dev != rw->lock->st.st_dev) {
        rw_log(rw, "committed, but the file was replaced at once by someone else: the tree shows the previous version");
        s3fs_close(fs);
        return;
    }
    if (gen_add(rw, fs, g->epoch + 1)) {
        rw_log(rw, "committed, but out of memory opening it again: the tree shows the previous version");
        s3fs_close(fs);
    }
}

/* Under mu: the CRC fixes of the Granny parts the edits touch (malloc'd, *nfix of them;
 * NULL when out of memory). */
static struct crc_fix *crc_fixes(struct rw *rw, struct rw_gen *g, size_t *nfix)
{
    struct crc_fix *fix = alloc_array(rw->ngr2, sizeof *fix);
    *nfix = 0;
    for (size_t i = 0; fix && i < rw->ngr2; i++)
        *nfix += gr2_fix(rw, g, &rw->gr2[i], &fix[*nfix]);
    return fix;
}

/* Under mu, before the file is written: each resource copy's offset moved down by the
 * tail's holes before it (where edits_write puts the copy), when its offset field still
 * holds the word put (a value written there since chose otherwise). The words rewritten
 * lie in edits of their own already: no allocation, so this cannot fail; a commit that
 * fails after leaves them right for the next one (the copies' tail ranges stay). */
static void renumber_copies(struct rw *rw)
{
    const struct edits *e = &rw->pending;
    uint64_t size = newest(rw)->fs->src.size, gone = 0;
    size_t h = 0;
    for (size_t i = 0; i < rw->nres; i++) { /* both in the tail's order: one walk */
        struct rw_res_copy *c = &rw->res[i];
        for (; h < e->nholes && e->holes[h].to <= c->from; h++)
            gone += e->holes[h].to - e->holes[h].from;
        uint8_t now[4], want[4];
        put_le(want, c->word, 4);
        memset(now, 0, sizeof now);
        edits_overlay(e, c->f_offset, now, 4);
        uint32_t word = (uint32_t)(size + c->from - gone);
        if (!edits_touch(e, c->f_offset, 4) || memcmp(now, want, 4) != 0 || word == c->word)
            continue;
        put_le(want, word, 4);
        if (edits_put(&rw->pending, c->f_offset, want, 4) == S3_OK)
            c->word = word;
    }
}

static bool nothing_pending(const struct rw *rw)
{
    return rw->pending.n == 0 && rw->pending.tail_len == 0;
}

int rw_commit(struct rw *rw, bool again)
{
    rw_release(rw, rw_acquire(rw)); /* the tree of the file as it is (a commit before may be unopened) */
    pthread_mutex_lock(&rw->secmu);
    int flushed = flush_section_copy(rw); /* NAME.bin writes into a compressed section */
    if (flushed) {
        pthread_mutex_unlock(&rw->secmu);
        return flushed;
    }
    pthread_mutex_lock(&rw->mu);
    if (nothing_pending(rw)) {
        pthread_mutex_unlock(&rw->mu);
        pthread_mutex_unlock(&rw->secmu);
        return 0;
    }
    struct rw_gen *g = newest(rw); /* current while mu is held */
    renumber_copies(rw);
    size_t nfix;
    struct crc_fix *fix = crc_fixes(rw, g, &nfix);
    int rc = fix ? 0 : -ENOMEM;
    uint64_t bytes = edits_bytes(&rw->pending);
    struct writer w = {rw->lock->fd, g->fs->src.size, &rw->pending, fix, nfix};
    if (!rc)
        rc = neg_errno_of(commit_replace(rw->lock, write_new, &w, rw->backup));
    free(fix);
    if (rc) {
        rw_log(rw, "commit %s: %s; %" PRIu64 " bytes of edits stay pending",
               rc == -EBUSY ? "refused: the file was changed by someone else since it was read" : "failed",
               strerror(-rc), bytes);
    } else {
        edits_clear(&rw->pending);
        note_memory(rw);
        rw->ngr2 = 0;
        section_copy_drop(rw); /* stored raw now: its values are fields */
        rw->nraw = 0;
        rw->nres = 0;
        pthread_mutex_lock(&rw->logmu);
        rw->commits++;
        pthread_mutex_unlock(&rw->logmu);
        rw_log(rw, "committed %" PRIu64 " bytes%s", bytes, nfix ? ", Granny CRC recomputed" : "");
        if (again)
            rw_mark_stale(rw);
    }
    pthread_mutex_unlock(&rw->mu);
    pthread_mutex_unlock(&rw->secmu);
    return rc;
}

/* The new version written whole as a new file at path (never over an existing one):
 * 0, -EEXIST, or the -errno of the step that failed (the partial file removed). */
static int write_unsaved(const char *path, mode_t mode, struct writer *w)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0)
        return -errno;
    int rc = neg_errno_of(write_new(fd, w));
    if (!rc && fsync(fd) != 0)
        rc = -errno;
    if (close(fd) != 0 && !rc)
        rc = -errno;
    if (rc)
        unlink(path);
    return rc;
}

int rw_save_unsaved(struct rw *rw, char *where, size_t wherelen, int *why, int *left_out)
{
    pthread_mutex_lock(&rw->secmu);
    /* what it cannot store stays out of the unsaved copy, and the report says so */
    *left_out = -flush_section_copy(rw);
    pthread_mutex_lock(&rw->mu);
    pthread_mutex_unlock(&rw->secmu);
    if (nothing_pending(rw)) {
        pthread_mutex_unlock(&rw->mu);
        return 0;
    }
    struct rw_gen *g = newest(rw);
    renumber_copies(rw);
    size_t nfix;
    struct crc_fix *fix = crc_fixes(rw, g, &nfix);
    int rc = fix ? -EEXIST : -ENOMEM;
    struct writer w = {rw->lock->fd, g->fs->src.size, &rw->pending, fix, nfix};
    const char *tmp = getenv("TMPDIR");
    const char *dirs[2] = {rw->lock->dir, tmp && *tmp == '/' ? tmp : "/tmp"};
    *why = 0;
    /* beside the file; where that cannot be written (a full disk, a read-only folder),
     * the temporary folder. FILE.s3rig-unsaved, or .1 ... .9 when older ones are there. */
    for (int d = 0; d < 2 && rc && rc != -ENOMEM; d++) {
        rc = -EEXIST;
        for (int k = 0; k < 10 && rc == -EEXIST; k++) {
            char suffix[8] = "";
            if (k)
                snprintf(suffix, sizeof suffix, ".%d", k);
            snprintf(where, wherelen, "%s/%s.s3rig-unsaved%s", dirs[d], rw->lock->name, suffix);
            rc = write_unsaved(where, rw->lock->st.st_mode & 0666, &w);
        }
        if (rc && !*why)
            *why = -rc; /* the reason it could not go beside the file */
    }
    free(fix);
    pthread_mutex_unlock(&rw->mu);
    if (rc)
        snprintf(where, wherelen, "nowhere");
    return rc ? rc : 1;
}
