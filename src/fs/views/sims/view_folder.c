/* A Mods folder as one tree (view_folder.h). The scan walks the folder without following
 * links, applies the loading rules (parse/sims/modfolder.h), reads each package's header
 * and index and each script archive's central directory, and groups the index entries by
 * key. Everything else is made when it is first used: a package's own tree is the package
 * view opened nested at /files/REL (fs->open_at), a script archive's members are read
 * through libzip into the cache, a conflict's comparison when its directory is listed (or
 * conflicts.csv measured), and the packages' duplicates when /info or duplicates.csv is
 * first measured. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nettle/sha2.h>
#include <zip.h>

#include "fs/views/sims/view_folder.h"
#include "fs/views/sims/view_dbpf.h"
#include "parse/base/err.h"
#include "parse/sims/dbpf.h"
#include "parse/sims/dbpf_codec.h"
#include "parse/sims/modfolder.h"

#define SCAN_MAX_DEPTH 32u    /* folders below the top the scan enters */
#define MEMBER_MAX_DEPTH 64u  /* folders in a member's path inside a script archive */
#define CFG_MAX (1u << 20)    /* Resource.cfg read at most */
#define COMPARE_CHUNK 65536u

struct folder_view;

/* A member of a script archive: its bytes are a cache item, read through libzip. */
struct zmember {
    struct cached c; /* first: the cache hands this pointer back */
    struct mf_file *f;
    uint64_t index, size;
};

/* One loaded file, in load order. */
struct mf_file {
    struct folder_view *v;
    char *rel;
    int32_t priority;
    bool script, sims4;
    bool names;     /* a package with a name map: its resources' names are read from it */
    bool checked;   /* (without names) the file was found to be still the one scanned, or err */
    struct stat st; /* as scanned: a file that is no longer this one is not read */
    uint32_t ino;   /* its directory under /files (0 until /files is listed) */
    /* a package: what its use needs is allocated when it is first used, not by the scan
     * for each of 10,000 files (pages of memory to fault in before the first listing) */
    struct source *src; /* open (closed with the view), or NULL */
    bool tried;         /* its view was opened (or refused: err) */
    char *err;          /* why it cannot be read (malloc'd), or NULL */
    struct s3fs *pkg;   /* the package view nested at ino */
    bool warned;
    /* a script archive: member paths sorted in listing order, their zip indices */
    char **members;
    uint64_t *member_index;
    uint32_t nmembers;
    struct zmember *zm;
};

struct skip {
    char *rel, *why;
};

#define FILE_ERR_MAX 320 /* a file's err, at most */

/* f->err set to the text (at most FILE_ERR_MAX bytes): S3_OK or NOMEM. */
static enum s3_err file_err(struct mf_file *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static enum s3_err file_err(struct mf_file *f, const char *fmt, ...)
{
    char line[FILE_ERR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    char *e = strdup(line);
    if (!e)
        return S3_ERR_NOMEM;
    free(f->err);
    f->err = e;
    return S3_OK;
}

/* A module two or more script archives contain: prov[first .. first + n) */
struct mprov {
    const char *name;
    uint32_t file;
};
struct mconf {
    uint32_t first, n;
};

/* By-type groups: keys bytag[start .. start + n) */
struct tgroup {
    uint64_t gkey;
    uint32_t start, n;
};

/* duplicates.csv and /info's identical_packages: the packages told apart (compute_duplicates)
 * when either is first measured (under the tree lock, as every render). */
struct dups {
    bool done; /* csv, len and identical are set */
    char *csv;
    size_t len, identical;
    char **notes; /* files left out, said in /info's warnings */
    size_t nnotes, given;
};

#define HANDLES 16 /* packages open at once while conflicts are compared */
struct handle;

struct folder_view {
    struct s3fs *fs;
    char *root; /* absolute */
    bool scanned;
    enum s3_err scan_rc;
    bool has_cfg;
    struct mf_rules rules;
    struct mf_file *files;
    size_t nfiles, npackages, nscripts;
    int32_t *prio; /* per file */
    struct skip *skips;
    size_t nskips, capskips;
    struct mf_recs recs; /* the scan's workers' arrays, kept as they filled them */
    struct mf_run *runs; /* each loaded package's records, in load order */
    size_t nruns;
    uint64_t resources;
    struct mf_keyset ks; /* the keys, their providers, and the keys by type, group, instance */
    uint32_t *conflicts; /* key numbers with two or more providers */
    size_t nconflicts;
    int8_t *identical;   /* per conflict: -1 not told yet, 0 no, 1 yes */
    struct handle *handles; /* HANDLES, made with the view: packages open while a render
                             * compares conflicts */
    size_t nhandles;
    uint64_t handle_clock;
    struct mprov *mprov;
    size_t nmprov;
    struct mconf *mconf;
    size_t nmconf;
    int8_t *midentical;
    uint32_t *bytag;
    struct tgroup *tgroups;
    size_t ntgroups;
    uint32_t files_dir, keys_dir;
    struct dups dups;
    /* the scan's warnings: kept with its result and given to /info by the root's listing
     * (each time it runs: a listing that failed took its warnings back, tree.h) */
    char **notes;
    size_t nnotes, capnotes;
};

/* ---- small helpers ---- */

static char *join(const char *a, const char *b)
{
    char *s = NULL;
    return asprintf(&s, "%s/%s", a, b) < 0 ? NULL : s;
}

/* A node a populate could not add: the node limit (the tree reports it) is no error;
 * anything else is out of memory. */
static enum s3_err added(struct tree *t, uint32_t ino)
{
    return ino || tree_full(t) ? S3_OK : S3_ERR_NOMEM;
}

static bool same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
           a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* The key's name in /keys and /conflicts: the community's resource name without a name. */
static void key_name(char *out, size_t size, bool sims4, const struct mf_rec *r)
{
    struct dbpf_entry e = {.type = r->type, .group = r->group, .instance = r->instance};
    dbpf_resource_name(out, size, sims4, &e, NULL);
}

/* The record of the provider in effect for key k. */
static const struct mf_rec *winner_of(const struct folder_view *v, uint32_t k)
{
    return mf_rec_at(&v->recs, mf_keyset_rec(&v->ks, k, mf_keyset_winner(&v->ks, k)));
}

/* A name shown in /skipped: bytes outside printable UTF-8 as \xNN. */
static char *shown_name(const char *rel)
{
    size_t n = strlen(rel);
    bool valid = mf_utf8_valid(rel, n);
    char *s = malloc(4 * n + 1), *p = s;
    if (!s)
        return NULL;
    for (const unsigned char *q = (const unsigned char *)rel; *q; q++) {
        if (*q < 0x20 || *q == 0x7F || *q == '\\' || (!valid && *q >= 0x80))
            p += sprintf(p, "\\x%02x", *q);
        else
            *p++ = (char)*q;
    }
    *p = 0;
    return s;
}

static enum s3_err add_skip(struct folder_view *v, const char *rel, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static enum s3_err add_skip(struct folder_view *v, const char *rel, const char *fmt, ...)
{
    if (grow_array(&v->skips, &v->capskips, v->nskips + 1, sizeof *v->skips))
        return S3_ERR_NOMEM;
    char *why = NULL;
    va_list ap;
    va_start(ap, fmt);
    int rc = vasprintf(&why, fmt, ap);
    va_end(ap);
    char *shown = shown_name(rel);
    if (rc < 0 || !shown) {
        free(shown);
        if (rc >= 0)
            free(why);
        return S3_ERR_NOMEM;
    }
    v->skips[v->nskips++] = (struct skip){shown, why};
    return S3_OK;
}

static enum s3_err push(void **arr, size_t *n, size_t *cap, size_t elem, const void *item);

/* A warning of the scan (the notes above): S3_OK or NOMEM. */
static enum s3_err scan_note(struct folder_view *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static enum s3_err scan_note(struct folder_view *v, const char *fmt, ...)
{
    char *line = NULL;
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&line, fmt, ap);
    va_end(ap);
    if (n < 0)
        return S3_ERR_NOMEM;
    enum s3_err rc = push((void **)&v->notes, &v->nnotes, &v->capnotes, sizeof *v->notes, &line);
    if (rc)
        free(line);
    return rc;
}

/* ---- the scan: walking the folder ---- */

struct cand {
    char *rel;
    bool script;
    bool take;        /* the rules load it (script archives: when they can be read) */
    int32_t priority; /* a package's */
    uint32_t job;     /* a package's slot in the pool */
};

struct walk {
    struct cand *c;
    size_t n, cap;
    char **dirs; /* folders still to list (relative) */
    size_t ndirs, capdirs;
    char *cfg_name; /* the top's Resource.cfg, in whatever case it is spelt */
};

static enum s3_err push(void **arr, size_t *n, size_t *cap, size_t elem, const void *item)
{
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 64;
        void *p = realloc(*arr, c * elem);
        if (!p)
            return S3_ERR_NOMEM;
        *arr = p;
        *cap = c;
    }
    memcpy((char *)*arr + *n * elem, item, elem);
    (*n)++;
    return S3_OK;
}

static bool has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n > k && strcasecmp(s + n - k, suffix) == 0;
}

static bool has_control(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7F)
            return true;
    return false;
}

/* One entry of a listed folder: a candidate, a folder to list, or a line in /skipped. */
/* What an entry is: from the listing's d_type when the filesystem gives one (no system
 * call per entry: a folder of 10,000 packages), else lstat. Either way nothing is
 * trusted later: a package is opened O_NOFOLLOW and checked with fstat, a folder
 * O_NOFOLLOW | O_DIRECTORY. S3_OK and st's mode, or lstat's reason (s3_err_of_errno)
 * with its strerror text in err (what /skipped says). */
static enum s3_err entry_kind(int dfd, const char *name, unsigned char d_type, struct stat *st, char *err,
                              size_t errlen)
{
    memset(st, 0, sizeof *st);
    switch (d_type) {
    case DT_REG:
        st->st_mode = S_IFREG;
        return S3_OK;
    case DT_DIR:
        st->st_mode = S_IFDIR;
        return S3_OK;
    case DT_LNK:
        st->st_mode = S_IFLNK;
        return S3_OK;
    case DT_UNKNOWN:
        if (fstatat(dfd, name, st, AT_SYMLINK_NOFOLLOW) != 0) {
            int errnum = errno;
            return s3_fail(s3_err_of_errno(errnum), err, errlen, "%s", strerror(errnum));
        }
        return S3_OK;
    default:
        st->st_mode = S_IFIFO; /* a device, pipe or socket: "not a regular file or folder" */
        return S3_OK;
    }
}

static enum s3_err walk_entry(struct folder_view *v, struct walk *w, int dfd, const char *dir, unsigned depth,
                      const char *name, unsigned char d_type)
{
    char *rel = dir[0] ? join(dir, name) : strdup(name);
    if (!rel)
        return S3_ERR_NOMEM;
    enum s3_err rc = S3_OK;
    struct stat st;
    char why[128];
    if (!mf_utf8_valid(name, strlen(name)) || has_control(name)) {
        rc = add_skip(v, rel, "a name that is not valid UTF-8 (or holds control characters)");
    } else if (entry_kind(dfd, name, d_type, &st, why, sizeof why) != S3_OK) {
        rc = add_skip(v, rel, "unreadable: %s", why);
    } else if (S_ISLNK(st.st_mode)) {
        rc = add_skip(v, rel, "a symbolic link (not followed)");
    } else if (S_ISDIR(st.st_mode)) {
        if (depth + 1 > SCAN_MAX_DEPTH)
            rc = add_skip(v, rel, "a folder too deep (the scan stops %u folders down)", SCAN_MAX_DEPTH);
        else if ((rc = push((void **)&w->dirs, &w->ndirs, &w->capdirs, sizeof *w->dirs, &rel)) == S3_OK)
            rel = NULL; /* the list owns it */
    } else if (!S_ISREG(st.st_mode)) {
        rc = add_skip(v, rel, "not a regular file or folder");
    } else if (depth == 0 && strcasecmp(name, "Resource.cfg") == 0 && !w->cfg_name) {
        w->cfg_name = rel;
        rel = NULL;
    } else if (has_suffix(name, ".package") || has_suffix(name, ".ts4script")) {
        struct cand c = {.rel = rel, .script = has_suffix(name, ".ts4script")};
        if ((rc = push((void **)&w->c, &w->n, &w->cap, sizeof *w->c, &c)) == S3_OK)
            rel = NULL;
    } else {
        rc = add_skip(v, rel, "not a package or script archive (by its name)");
    }
    free(rel);
    return rc;
}

static enum s3_err walk_dir(struct folder_view *v, struct walk *w, int rootfd, const char *dir)
{
    int dfd = dir[0] ? openat(rootfd, dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                     : openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return add_skip(v, dir[0] ? dir : ".", "an unreadable folder: %s", strerror(errno));
    DIR *d = fdopendir(dfd);
    if (!d) {
        close(dfd);
        return S3_ERR_NOMEM;
    }
    unsigned depth = dir[0] ? mf_depth(dir) + 1 : 0;
    enum s3_err rc = S3_OK;
    struct dirent *e;
    while (rc == S3_OK && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        rc = walk_entry(v, w, dfd, dir, depth, e->d_name, e->d_type);
    }
    closedir(d);
    return rc;
}

static enum s3_err walk_folder(struct folder_view *v, struct walk *w)
{
    int rootfd = open(v->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (rootfd < 0)
        return add_skip(v, ".", "an unreadable folder: %s", strerror(errno));
    enum s3_err rc = walk_dir(v, w, rootfd, "");
    while (rc == S3_OK && w->ndirs) {
        char *dir = w->dirs[--w->ndirs];
        rc = walk_dir(v, w, rootfd, dir);
        free(dir);
    }
    close(rootfd);
    return rc;
}

/* ---- the scan: the rules ---- */

static enum s3_err read_rules(struct folder_view *v, const char *name)
{
    char *path = join(v->root, name);
    if (!path)
        return S3_ERR_NOMEM;
    FILE *f = fopen(path, "rb");
    free(path);
    if (!f)
        return scan_note(v, "Resource.cfg: %s; every package is loaded", strerror(errno));
    char *text = malloc(CFG_MAX + 1);
    size_t n = text ? fread(text, 1, CFG_MAX + 1, f) : 0;
    bool failed = text && ferror(f);
    fclose(f);
    if (!text)
        return S3_ERR_NOMEM;
    enum s3_err rc = S3_OK;
    if (failed || n > CFG_MAX) {
        rc = scan_note(v, "Resource.cfg: %s; every package is loaded", failed ? "unreadable" : "over 1 MiB, not read");
    } else if (mf_rules_parse(text, n, &v->rules)) {
        rc = S3_ERR_NOMEM;
    } else {
        v->has_cfg = true;
        for (size_t i = 0; rc == S3_OK && i < v->rules.nunapplied; i++)
            rc = scan_note(v, "Resource.cfg %s", v->rules.unapplied[i]);
    }
    free(text);
    return rc;
}

static int by_cand_path(const void *a, const void *b)
{
    return mf_path_cmp(((const struct cand *)a)->rel, ((const struct cand *)b)->rel);
}

static int by_skip_path(const void *a, const void *b)
{
    return mf_path_cmp(((const struct skip *)a)->rel, ((const struct skip *)b)->rel);
}

/* ---- the scan: reading packages, in parallel ---- */

/* Packages are read by a small pool of workers (the online CPUs, at most
 * SCAN_WORKERS_MAX; none but the caller for a small folder): each takes the next few
 * packages in load order, reads each one's header and index into records of its own and
 * writes the outcome into that package's slot, which no other thread touches. The merge,
 * on the calling thread between its own jobs, walks the slots in load order as far as
 * they are read (the rest once the others ended), so the files, their numbers, the
 * records and the keys are the same whatever the number of workers and whichever read
 * what. The records stay where their worker wrote them (worker i's array is segment
 * i of the view's records): a million records are not copied, and the pages of a copy
 * (on this project's machine, touching fresh memory costs more than reading the files)
 * are not faulted in. */
#define SCAN_WORKERS_MAX MF_SEGS
#define SCAN_CLAIM 8u        /* packages a worker takes at once */
#define SCAN_ALONE_BELOW 64u /* fewer packages: no worker threads */

/* Tests only (folder_view_test_scan): the workers' number, and an allocation refused. */
static unsigned test_workers;           /* atomic */
static uint64_t scan_allocs, refuse_at; /* atomic */

void folder_view_test_scan(unsigned workers, uint64_t refuse)
{
    uint64_t now = __atomic_load_n(&scan_allocs, __ATOMIC_RELAXED);
    __atomic_store_n(&test_workers, workers, __ATOMIC_RELAXED);
    __atomic_store_n(&refuse_at, refuse ? now + refuse : 0, __ATOMIC_RELAXED);
}

uint64_t folder_view_test_scan_allocs(void)
{
    return __atomic_load_n(&scan_allocs, __ATOMIC_RELAXED);
}

/* Every allocation of the package reading (the workers' and the merge's records): realloc,
 * counted, and refused where a test asks. */
static void *scan_realloc(void *p, size_t size)
{
    uint64_t k = __atomic_add_fetch(&scan_allocs, 1, __ATOMIC_RELAXED);
    if (k == __atomic_load_n(&refuse_at, __ATOMIC_RELAXED))
        return NULL;
    return realloc(p, size);
}

enum job_state { JOB_UNREAD, JOB_LOADED, JOB_SKIPPED, JOB_NOMEM, JOB_LIMIT };

/* A package to read and what it holds: written by the one worker that took it, read by
 * the merge once done says it is read. */
struct pkg_job {
    const char *rel;
    uint8_t state; /* enum job_state */
    bool sims4, names;
    struct stat st;
    uint32_t first, n; /* its records: ids first .. first + n - 1 (its worker's segment) */
    uint8_t done; /* atomic (release): its worker is through with it; the merge may read it */
    char *why; /* JOB_SKIPPED: its line in /skipped (scan_realloc'd: skips are few, and a
                * fixed buffer in each of 10,000 jobs is megabytes of pages to fault in) */
};

struct scan_merge;
struct scan_worker;

struct scan_pool {
    int rootfd, root_errno; /* the folder (or why it cannot be opened) */
    struct pkg_job *jobs;
    size_t njobs;
    size_t next;  /* atomic: the next job to take */
    uint8_t failed; /* atomic: JOB_NOMEM or JOB_LIMIT once a worker met one: the others stop */
    struct scan_worker *workers;
    unsigned nworkers;
    /* held by a worker moving its records (realloc), and by the merge while it reads and
     * writes records: the merge reads every worker's array while they still fill them */
    pthread_mutex_t recs_lock;
    struct scan_merge *merge; /* run by worker 0 (the calling thread) between its jobs */
};

/* The merge, on the calling thread while the workers read ahead: the candidates in load
 * order, each package once it is read (and all before it), its records into the key
 * table at once (instead of after every worker ended: on two cores that was serial). */
static enum s3_err merge_ready(struct scan_merge *m);
static bool merged_all(const struct scan_merge *m);

/* A package's first bytes read at once: the header, and all of a small package (its index
 * too: one read call instead of two, which costs less than copying these few KiB). */
#define SCAN_HEAD 16384u

struct scan_worker {
    struct scan_pool *pool;
    uint32_t id;
    uint8_t head[SCAN_HEAD];
    struct mf_rec *recs; /* segment id of the view's records (their file set by the grouping) */
    size_t n, cap;
    struct dbpf_keys keys; /* the parser's buffers, reused from package to package */
    pthread_t thread;
};

/* The scan reads a package straight from its descriptor (one open, relative to the
 * folder's): the parsers' read callback over pread, its first bytes (the header, or the
 * whole of a small package) read once into head. */
struct fd_src {
    int fd;
    const uint8_t *head;
    size_t nhead;
};

static enum s3_err fd_read(void *ctx, uint64_t off, void *buf, size_t len)
{
    struct fd_src *f = ctx;
    if (off + len <= f->nhead) {
        memcpy(buf, f->head + off, len);
        return S3_OK;
    }
    int fd = f->fd;
    for (size_t got = 0; got < len;) {
        ssize_t r = pread(fd, (char *)buf + got, len - got, (off_t)(off + got));
        if (r <= 0)
            return S3_ERR_IO;
        got += (size_t)r;
    }
    return S3_OK;
}

static void job_skip(struct pkg_job *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void job_skip(struct pkg_job *j, const char *fmt, ...)
{
    char line[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    size_t len = n < 0 ? 0 : (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
    j->why = scan_realloc(NULL, len + 1);
    if (!j->why) {
        j->state = JOB_NOMEM;
        return;
    }
    memcpy(j->why, line, len);
    j->why[len] = 0;
    j->state = JOB_SKIPPED;
}

/* The keys parsed last (w->keys) as the job's records: JOB_LOADED, or JOB_NOMEM. */
static void take_keys(struct scan_worker *w, struct pkg_job *j, const struct dbpf *d)
{
    const struct dbpf_keys *ks = &w->keys;
    if (ks->n > MF_SEG_MAX - w->n) { /* ids hold MF_SEG_BITS bits of place */
        j->state = JOB_LIMIT;
        return;
    }
    if (w->n + ks->n > w->cap) {
        size_t cap = w->cap ? w->cap : 4096;
        while (cap < w->n + ks->n)
            cap *= 2;
        pthread_mutex_lock(&w->pool->recs_lock);
        struct mf_rec *r = cap <= SIZE_MAX / sizeof *r ? scan_realloc(w->recs, cap * sizeof *r) : NULL;
        if (r)
            w->recs = r;
        pthread_mutex_unlock(&w->pool->recs_lock);
        if (!r) {
            j->state = JOB_NOMEM;
            return;
        }
        w->cap = cap;
    }
    size_t first = w->n;
    for (uint32_t i = 0; i < ks->n; i++) {
        const struct dbpf_key *k = &ks->k[i];
        if (k->deleted)
            continue;
        j->names |= k->type == DBPF_TYPE_NAMEMAP;
        w->recs[w->n++] = (struct mf_rec){k->type, k->group, k->instance, 0, k->size, k->dup, k->record};
    }
    j->first = w->id << MF_SEG_BITS | (uint32_t)first;
    j->n = (uint32_t)(w->n - first);
    j->sims4 = d->h[DBPF_H_MINOR] == 1;
    j->state = JOB_LOADED;
}

/* Job j's package: its header and index read into w's records, or why it is skipped. */
static void read_job(struct scan_worker *w, struct pkg_job *j)
{
    const struct scan_pool *p = w->pool;
    int fd = p->rootfd < 0 ? -1 : openat(p->rootfd, j->rel, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    int why = p->rootfd < 0 ? p->root_errno
              : fd < 0 ? errno
              : fstat(fd, &j->st) != 0 ? errno
              : !S_ISREG(j->st.st_mode) ? EINVAL : 0;
    char msg[200];
    if (why) {
        if (fd >= 0)
            close(fd);
        job_skip(j, "unreadable: %s", strerror_r(why, msg, sizeof msg));
        return;
    }
    struct fd_src fs = {.fd = fd, .head = w->head};
    struct s3_src src = {fd_read, &fs, (uint64_t)j->st.st_size};
    size_t hn = src.size < SCAN_HEAD ? (size_t)src.size : SCAN_HEAD;
    bool got = fd_read(&fs, 0, w->head, hn) == 0;
    fs.nhead = got ? hn : 0;
    enum mf_sniff kind = got ? mf_sniff(w->head, hn, src.size) : MF_OTHER;
    struct dbpf d;
    memset(&d, 0, sizeof d);
    if (kind == MF_EMPTY)
        job_skip(j, "an empty file");
    else if (kind == MF_LFS)
        job_skip(j, "a git-lfs pointer (the package's bytes are not here)");
    else if (kind != MF_DBPF)
        job_skip(j, "not a DBPF 2.x package");
    else if (dbpf_parse_header(&src, &d, msg, sizeof msg))
        job_skip(j, "not a DBPF 2.x package: %s", msg);
    else if (dbpf_parse_keys(&src, &d, &w->keys, scan_realloc))
        j->state = JOB_NOMEM;
    else if (!d.index_ok)
        job_skip(j, "a truncated or broken index: %s", d.index_err);
    else
        take_keys(w, j, &d);
    close(fd);
}

/* What the merge can take now (all, once the workers ended). A failure stops the workers. */
static void merge_some(struct scan_pool *p)
{
    if (__atomic_load_n(&p->failed, __ATOMIC_RELAXED))
        return;
    enum s3_err rc = merge_ready(p->merge);
    if (rc)
        __atomic_store_n(&p->failed, rc == S3_ERR_LIMIT ? JOB_LIMIT : JOB_NOMEM, __ATOMIC_RELAXED);
}

static void *scan_work(void *arg)
{
    struct scan_worker *w = arg;
    struct scan_pool *p = w->pool;
    while (!__atomic_load_n(&p->failed, __ATOMIC_RELAXED)) {
        size_t at = __atomic_fetch_add(&p->next, SCAN_CLAIM, __ATOMIC_RELAXED);
        if (at >= p->njobs)
            break;
        size_t end = p->njobs - at < SCAN_CLAIM ? p->njobs : at + SCAN_CLAIM;
        for (size_t j = at; j < end; j++) {
            read_job(w, &p->jobs[j]);
            __atomic_store_n(&p->jobs[j].done, 1, __ATOMIC_RELEASE);
            if (p->jobs[j].state == JOB_NOMEM || p->jobs[j].state == JOB_LIMIT)
                __atomic_store_n(&p->failed, p->jobs[j].state, __ATOMIC_RELAXED);
            if (w->id == 0 && p->merge)
                merge_some(p);
        }
    }
    return NULL;
}

static unsigned worker_count(size_t njobs)
{
    unsigned forced = __atomic_load_n(&test_workers, __ATOMIC_RELAXED);
    if (forced)
        return forced < SCAN_WORKERS_MAX ? forced : SCAN_WORKERS_MAX;
    if (njobs < SCAN_ALONE_BELOW)
        return 1;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return cpus < 1 ? 1 : cpus > (long)SCAN_WORKERS_MAX ? SCAN_WORKERS_MAX : (unsigned)cpus;
}

static void free_workers(struct scan_worker *w, size_t n)
{
    for (size_t i = 0; w && i < n; i++) {
        free(w[i].recs);
        dbpf_keys_free(&w[i].keys);
    }
    free(w);
}

/* Reads every job, the caller being a worker too (a thread that cannot be started leaves
 * its share to the others). *out: the workers, whose records the jobs point into. S3_OK,
 * NOMEM, or LIMIT (a worker's records past MF_SEG_MAX). */
static enum s3_err read_packages(struct folder_view *v, struct scan_pool *p, struct scan_worker **out, size_t *nout)
{
    unsigned n = worker_count(p->njobs);
    struct scan_worker *w = scan_realloc(NULL, n * sizeof *w);
    *out = NULL;
    *nout = 0;
    if (!w)
        return S3_ERR_NOMEM;
    memset(w, 0, n * sizeof *w);
    p->rootfd = open(v->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    p->root_errno = p->rootfd < 0 ? errno : 0;
    for (unsigned i = 0; i < n; i++)
        w[i].pool = p, w[i].id = i;
    p->workers = w;
    p->nworkers = n;
    unsigned started = 1;
    while (started < n && pthread_create(&w[started].thread, NULL, scan_work, &w[started]) == 0)
        started++;
    scan_work(&w[0]);
    /* what the others read meanwhile; then they end (each has at most SCAN_CLAIM packages
     * left: waiting for them costs little, and a worker blocked on a slow disk is not
     * polled), and the rest is merged */
    if (p->merge)
        merge_some(p);
    for (unsigned i = 1; i < started; i++)
        pthread_join(w[i].thread, NULL);
    if (p->merge)
        merge_some(p);
    if (p->rootfd >= 0)
        close(p->rootfd);
    *out = w;
    *nout = n;
    uint8_t failed = __atomic_load_n(&p->failed, __ATOMIC_RELAXED);
    return failed == JOB_LIMIT ? S3_ERR_LIMIT : failed ? S3_ERR_NOMEM : S3_OK;
}

/* ---- the scan: script archives ---- */

/* A member path a directory tree can show: relative, no empty, "." or ".." component,
 * valid UTF-8 without control characters, at most MEMBER_MAX_DEPTH folders. */
static bool member_path_ok(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > 4096 || !mf_utf8_valid(name, n) || has_control(name) || mf_depth(name) > MEMBER_MAX_DEPTH)
        return false;
    for (const char *p = name;;) {
        size_t k = strcspn(p, "/");
        if (k == 0 || k > 255 || (k == 1 && p[0] == '.') || (k == 2 && p[0] == '.' && p[1] == '.'))
            return false;
        if (!p[k])
            return true;
        p += k + 1;
    }
}

static const char *zip_why(int code, char *buf, size_t len)
{
    zip_error_t ze;
    zip_error_init_with_code(&ze, code);
    snprintf(buf, len, "%s", zip_error_strerror(&ze));
    zip_error_fini(&ze);
    return buf;
}

struct mem_sort {
    char *name;
    uint64_t index;
};
static int by_member(const void *a, const void *b)
{
    return mf_path_cmp(((const struct mem_sort *)a)->name, ((const struct mem_sort *)b)->name);
}

/* Reads a script archive's member list: S3_OK (*skip: left out, said in /skipped), or
 * NOMEM. */
static enum s3_err read_script(struct folder_view *v, struct mf_file *f, bool *skip)
{
    *skip = true;
    char *path = join(v->root, f->rel), why[200];
    if (!path)
        return S3_ERR_NOMEM;
    int code = 0;
    if (stat(path, &f->st) != 0) {
        int errnum = errno;
        free(path);
        return add_skip(v, f->rel, "unreadable: %s", strerror(errnum));
    }
    if (f->st.st_size == 0) {
        free(path);
        return add_skip(v, f->rel, "an empty file");
    }
    zip_t *z = zip_open(path, ZIP_RDONLY, &code);
    free(path);
    if (!z)
        return add_skip(v, f->rel, "not a readable zip archive: %s", zip_why(code, why, sizeof why));
    *skip = false;
    zip_int64_t n = zip_get_num_entries(z, 0);
    struct mem_sort *m = alloc_array(n > 0 ? (size_t)n : 0, sizeof *m);
    size_t k = 0;
    bool oom = !m;
    for (zip_int64_t i = 0; !oom && i < n; i++) {
        const char *name = zip_get_name(z, (zip_uint64_t)i, ZIP_FL_ENC_GUESS);
        if (!name || (name[0] && name[strlen(name) - 1] == '/'))
            continue; /* folders are made from the members' paths */
        if (!member_path_ok(name)) {
            oom = scan_note(v, "%s: member %" PRId64 " has a name that is no relative path; left out", f->rel,
                            (int64_t)i) != S3_OK;
            continue;
        }
        if (!(m[k].name = strdup(name)))
            oom = true;
        else
            m[k++].index = (uint64_t)i;
    }
    zip_discard(z);
    if (!oom) {
        qsort(m, k, sizeof *m, by_member);
        f->members = alloc_array(k, sizeof *f->members);
        f->member_index = alloc_array(k, sizeof *f->member_index);
        oom = !f->members || !f->member_index;
    }
    if (oom) {
        for (size_t i = 0; i < k; i++)
            free(m[i].name);
        free(m);
        free(f->members);
        free(f->member_index);
        f->members = NULL;
        f->member_index = NULL;
        return S3_ERR_NOMEM;
    }
    for (size_t i = 0; i < k; i++) {
        f->members[i] = m[i].name;
        f->member_index[i] = m[i].index;
    }
    f->nmembers = (uint32_t)k;
    free(m);
    return S3_OK;
}

/* ---- the scan: keys and modules ---- */

static int by_module(const void *a, const void *b)
{
    const struct mprov *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : x->file < y->file ? -1 : x->file > y->file;
}

static enum s3_err group_modules(struct folder_view *v)
{
    size_t n = 0;
    for (size_t i = 0; i < v->nfiles; i++)
        n += v->files[i].nmembers;
    v->mprov = alloc_array(n, sizeof *v->mprov);
    if (!v->mprov)
        return S3_ERR_NOMEM;
    for (size_t i = 0; i < v->nfiles; i++)
        for (uint32_t k = 0; k < v->files[i].nmembers; k++)
            v->mprov[v->nmprov++] = (struct mprov){v->files[i].members[k], (uint32_t)i};
    qsort(v->mprov, v->nmprov, sizeof *v->mprov, by_module);
    size_t kept = 0; /* one per module and archive (an archive naming a path twice) */
    for (size_t i = 0; i < v->nmprov; i++)
        if (!kept || by_module(&v->mprov[kept - 1], &v->mprov[i]) != 0)
            v->mprov[kept++] = v->mprov[i];
    v->nmprov = kept;
    v->mconf = alloc_array(kept, sizeof *v->mconf);
    if (!v->mconf)
        return S3_ERR_NOMEM;
    for (size_t i = 0; i < kept;) {
        size_t j = i + 1;
        while (j < kept && strcmp(v->mprov[j].name, v->mprov[i].name) == 0)
            j++;
        if (j - i >= 2)
            v->mconf[v->nmconf++] = (struct mconf){(uint32_t)i, (uint32_t)(j - i)};
        i = j;
    }
    v->midentical = alloc_array(v->nmconf, 1);
    if (!v->midentical)
        return S3_ERR_NOMEM;
    memset(v->midentical, -1, v->nmconf ? v->nmconf : 1);
    return S3_OK;
}

/* The /by-type group of a key: its tag as the winner's game reads it (4 bytes above bit
 * 32), or the type itself when the table gives it none. */
static uint64_t tag_key(const struct folder_view *v, uint32_t k)
{
    const struct mf_rec *w = winner_of(v, k);
    const char *tag, *ext;
    if (!dbpf_type_names(w->type, v->files[w->file].sims4, &tag, &ext))
        return w->type;
    uint64_t g = 1;
    for (int i = 0; i < 4 && tag[i]; i++)
        g = g << 8 | (uint8_t)tag[i];
    return g << 32;
}

static int by_gkey(const void *a, const void *b, void *ctx)
{
    const uint64_t *g = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return g[x] != g[y] ? (g[x] < g[y] ? -1 : 1) : (x < y ? -1 : x > y);
}

static enum s3_err group_tags(struct folder_view *v)
{
    size_t n = v->ks.nkeys;
    uint64_t *g = alloc_array(n, sizeof *g);
    v->bytag = alloc_array(n, sizeof *v->bytag);
    v->tgroups = alloc_array(n, sizeof *v->tgroups);
    if (!g || !v->bytag || !v->tgroups) {
        free(g);
        return S3_ERR_NOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        v->bytag[i] = (uint32_t)i;
        g[i] = tag_key(v, (uint32_t)i);
    }
    qsort_r(v->bytag, n, sizeof *v->bytag, by_gkey, g);
    for (size_t i = 0; i < n; i++) {
        uint64_t gk = g[v->bytag[i]];
        if (!v->ntgroups || v->tgroups[v->ntgroups - 1].gkey != gk)
            v->tgroups[v->ntgroups++] = (struct tgroup){gk, (uint32_t)i, 0};
        v->tgroups[v->ntgroups - 1].n++;
    }
    free(g);
    return S3_OK;
}

/* Conflicts are listed by key (type, group, instance): the order of conflicts.csv. */
static int by_conflict_key(const void *a, const void *b, void *ctx)
{
    const struct folder_view *v = ctx;
    const struct mf_rec *x = mf_rec_at(&v->recs, mf_keyset_rec(&v->ks, *(const uint32_t *)a, 0));
    const struct mf_rec *y = mf_rec_at(&v->recs, mf_keyset_rec(&v->ks, *(const uint32_t *)b, 0));
    if (x->type != y->type)
        return x->type < y->type ? -1 : 1;
    if (x->group != y->group)
        return x->group < y->group ? -1 : 1;
    return x->instance < y->instance ? -1 : x->instance > y->instance;
}

/* A conflict's key beside its number, so the sort compares values in one array instead
 * of reading two records far apart in the scan's arrays at each comparison. */
struct ckey {
    uint64_t instance;
    uint32_t type, group, k;
};

static int by_ckey(const void *a, const void *b)
{
    const struct ckey *x = a, *y = b;
    if (x->type != y->type)
        return x->type < y->type ? -1 : 1;
    if (x->group != y->group)
        return x->group < y->group ? -1 : 1;
    return x->instance < y->instance ? -1 : x->instance > y->instance;
}

/* v->conflicts in by_conflict_key's order. S3_OK or NOMEM. */
static enum s3_err sort_conflicts(struct folder_view *v)
{
    if (v->nconflicts < 2)
        return S3_OK;
    struct ckey *c = alloc_array(v->nconflicts, sizeof *c);
    if (!c)
        return S3_ERR_NOMEM;
    for (size_t i = 0; i < v->nconflicts; i++) {
        const struct mf_rec *r = mf_rec_at(&v->recs, mf_keyset_rec(&v->ks, v->conflicts[i], 0));
        c[i] = (struct ckey){r->instance, r->type, r->group, v->conflicts[i]};
    }
    qsort(c, v->nconflicts, sizeof *c, by_ckey); /* keys are distinct: the order is total */
    for (size_t i = 0; i < v->nconflicts; i++)
        v->conflicts[i] = c[i].k;
    free(c);
    return S3_OK;
}

static enum s3_err group_keys(struct folder_view *v)
{
    /* the key table is built by the scan's merge (scan_files); the runs stay (12 bytes a
     * package): /info's identical_packages digests each package's records through them */
    enum s3_err e;
    v->conflicts = alloc_array(v->ks.nkeys, sizeof *v->conflicts);
    if (!v->conflicts)
        return S3_ERR_NOMEM;
    for (size_t k = 0; k < v->ks.nkeys; k++)
        if (mf_keyset_n(&v->ks, (uint32_t)k) >= 2)
            v->conflicts[v->nconflicts++] = (uint32_t)k;
    e = sort_conflicts(v);
    if (e)
        return e;
    v->identical = alloc_array(v->nconflicts, 1);
    if (!v->identical)
        return S3_ERR_NOMEM;
    memset(v->identical, -1, v->nconflicts ? v->nconflicts : 1);
    return S3_OK;
}

/* Candidate c (in load order) as the rules take it: skipped (said in /skipped), a script
 * archive (read in the merge), or a package: the next job of the pool. S3_OK or NOMEM. */
static enum s3_err plan_candidate(struct folder_view *v, struct cand *c, struct scan_pool *p, uint64_t *hits,
                          unsigned max_depth)
{
    if (c->script) {
        if (!mf_script_depth_ok(c->rel))
            return add_skip(v, c->rel, "a script archive too deep (at most %u folder below the top)",
                            MF_SCRIPT_MAX_DEPTH);
        c->take = true;
        return S3_OK;
    }
    if (v->has_cfg && !mf_rules_match(&v->rules, c->rel, &c->priority, hits)) {
        unsigned d = mf_depth(c->rel);
        if (d > max_depth)
            return add_skip(v, c->rel, "too deep: %u folders down, Resource.cfg's globs reach %u", d, max_depth);
        return add_skip(v, c->rel, "outside Resource.cfg's globs");
    }
    c->take = true;
    c->job = (uint32_t)p->njobs;
    p->jobs[p->njobs++] = (struct pkg_job){.rel = c->rel};
    return S3_OK;
}

struct scan_merge {
    struct folder_view *v;
    struct walk *w;
    struct scan_pool *p;
    size_t next;           /* the next candidate (load order) to merge */
    size_t jobs;           /* packages merged */
    struct mf_keybuild kb; /* of v->ks, begun once an eighth of the packages is merged */
    bool began;
    size_t fed; /* runs in the key table: the last one waits for its successor, whose
                 * records are prefetched while it goes in */
};

static bool merged_all(const struct scan_merge *m)
{
    return m->next == m->w->n;
}

/* The table's size guessed from the packages merged so far: their records per package
 * times the packages. Begun once an eighth of them is merged (or all), so the guess is at
 * most 8 times the records (the table shrinks at the end when too big): linear, and the
 * rehashes of a table grown from nothing (its pages faulted in twice) are not paid. */
static bool table_guess(const struct scan_merge *m, bool all, size_t *est)
{
    size_t njobs = m->p->njobs;
    if (!all && m->jobs < njobs / 8 + 1)
        return false;
    uint64_t per = m->jobs ? m->v->resources / m->jobs : 0;
    *est = (size_t)(per * (uint64_t)njobs);
    return true;
}

/* The runs merged into the key table but the last (all: the last too), the workers'
 * arrays as they are now (under the lock: none moves them meanwhile). */
static enum s3_err feed_table(struct scan_merge *m, bool all)
{
    struct folder_view *v = m->v;
    if (m->fed + !all >= v->nruns)
        return S3_OK;
    if (!m->began) {
        size_t est;
        if (!table_guess(m, all, &est))
            return S3_OK;
        m->began = true;
        enum s3_err e = mf_keybuild_begin(&m->kb, &v->ks, est);
        if (e)
            return e;
    }
    pthread_mutex_lock(&m->p->recs_lock);
    for (unsigned i = 0; i < m->p->nworkers; i++)
        v->ks.recs.seg[i] = m->p->workers[i].recs;
    enum s3_err rc = S3_OK;
    for (; rc == S3_OK && m->fed + !all < v->nruns; m->fed++)
        rc = mf_keybuild_add(&m->kb, &v->runs[m->fed], m->fed + 1 < v->nruns ? &v->runs[m->fed + 1] : NULL);
    pthread_mutex_unlock(&m->p->recs_lock);
    return rc;
}

/* Candidate c as the file it is: a script archive read now, a package from its job (read:
 * its records a run). S3_OK, NOMEM or LIMIT. */
static enum s3_err merge_one(struct scan_merge *m, struct cand *c)
{
    struct folder_view *v = m->v;
    struct mf_file f = {.v = v, .rel = c->rel, .script = c->script, .priority = c->priority};
    if (c->script) {
        bool skip;
        enum s3_err e = read_script(v, &f, &skip);
        if (e || skip) /* skipped: said in /skipped */
            return e;
    } else {
        const struct pkg_job *j = &m->p->jobs[c->job];
        if (j->state == JOB_NOMEM || j->state == JOB_LIMIT)
            return j->state == JOB_LIMIT ? S3_ERR_LIMIT : S3_ERR_NOMEM;
        m->jobs++;
        if (j->state == JOB_SKIPPED)
            return add_skip(v, c->rel, "%s", j->why) ? S3_ERR_NOMEM : S3_OK;
        f.st = j->st;
        f.sims4 = j->sims4;
        f.names = j->names;
        if (j->n) /* a package with no resources has no records, and its worker maybe no list */
            v->runs[v->nruns++] = (struct mf_run){j->first, j->n, (uint32_t)v->nfiles};
        v->resources += j->n;
    }
    c->rel = NULL; /* the file owns it now */
    v->npackages += !f.script;
    v->nscripts += f.script;
    v->files[v->nfiles++] = f;
    return S3_OK;
}

/* The candidates from m->next on whose packages are read (all, once every worker ended),
 * and their runs into the key table. */
static enum s3_err merge_ready(struct scan_merge *m)
{
    for (; m->next < m->w->n; m->next++) {
        struct cand *c = &m->w->c[m->next];
        if (!c->take)
            continue;
        if (!c->script && !__atomic_load_n(&m->p->jobs[c->job].done, __ATOMIC_ACQUIRE))
            break;
        enum s3_err e = merge_one(m, c);
        if (e)
            return e;
    }
    return feed_table(m, merged_all(m));
}

/* After the reading: the records the view's (the workers' arrays as they ended), the key
 * table's providers and the ones in effect (by the files' priorities). */
static enum s3_err merge_end(struct scan_merge *m, struct scan_worker *workers, size_t nworkers, enum s3_err rc)
{
    struct folder_view *v = m->v;
    for (size_t i = 0; i < nworkers; i++) { /* the view frees them from now */
        v->recs.seg[i] = workers[i].recs;
        workers[i].recs = NULL;
    }
    if (rc == S3_OK && !merged_all(m)) /* cannot be: read_packages merged until all were */
        rc = S3_ERR_IO;
    if (rc == S3_OK && !(v->prio = alloc_array(v->nfiles, sizeof *v->prio)))
        rc = S3_ERR_NOMEM;
    for (size_t i = 0; rc == S3_OK && i < v->nfiles; i++)
        v->prio[i] = v->files[i].priority;
    if (rc == S3_OK && m->began) {
        v->ks.recs = v->recs;
        rc = mf_keybuild_finish(&m->kb, v->prio);
    }
    if (rc && m->began)
        mf_keybuild_free(&m->kb);
    return rc;
}

static enum s3_err scan_files(struct folder_view *v, struct walk *w)
{
    if (w->n) /* an empty folder has no list at all */
        qsort(w->c, w->n, sizeof *w->c, by_cand_path);
    v->files = alloc_array(w->n, sizeof *v->files);
    uint64_t *hits = alloc_array(v->rules.nglobs, sizeof *hits);
    struct scan_pool pool = {.jobs = alloc_array(w->n, sizeof *pool.jobs)};
    if (!v->files || !hits || !pool.jobs) {
        free(hits);
        free(pool.jobs);
        return S3_ERR_NOMEM;
    }
    unsigned max_depth = mf_rules_max_depth(&v->rules);
    enum s3_err rc = S3_OK;
    for (size_t i = 0; rc == S3_OK && i < w->n; i++)
        rc = plan_candidate(v, &w->c[i], &pool, hits, max_depth);
    /* a run for each package at most (12 bytes a package) */
    if (rc == S3_OK && !(v->runs = scan_realloc(NULL, (pool.njobs ? pool.njobs : 1) * sizeof *v->runs)))
        rc = S3_ERR_NOMEM;
    struct scan_merge merge = {.v = v, .w = w, .p = &pool};
    pool.merge = &merge;
    pthread_mutex_init(&pool.recs_lock, NULL);
    struct scan_worker *workers = NULL;
    size_t nworkers = 0;
    if (rc == S3_OK)
        rc = read_packages(v, &pool, &workers, &nworkers);
    uint8_t failed = __atomic_load_n(&pool.failed, __ATOMIC_RELAXED);
    if (rc == S3_OK && failed)
        rc = failed == JOB_LIMIT ? S3_ERR_LIMIT : S3_ERR_NOMEM;
    rc = merge_end(&merge, workers, nworkers, rc);
    pthread_mutex_destroy(&pool.recs_lock);
    free_workers(workers, nworkers);
    for (size_t j = 0; j < pool.njobs; j++)
        free(pool.jobs[j].why);
    free(pool.jobs);
    for (size_t i = 0; rc == S3_OK && i < v->rules.nglobs; i++)
        if (!hits[i])
            rc = scan_note(v, "Resource.cfg line %u: PackedFile %s matches no file", v->rules.globs[i].line,
                           v->rules.globs[i].pattern);
    free(hits);
    return rc;
}

/* Tests only (folder_view_test_on_scan): called once a scan has walked the folder. */
static struct scan_hook {
    void (*fn)(void *ctx);
    void *ctx;
} *scan_hook; /* atomic */

void folder_view_test_on_scan(void (*fn)(void *ctx), void *ctx)
{
    static struct scan_hook hooks[2];
    static unsigned next;
    struct scan_hook *h = NULL;
    if (fn) { /* the other slot: a scan running now may still read the one set before */
        h = &hooks[next++ % 2];
        *h = (struct scan_hook){fn, ctx};
    }
    __atomic_store_n(&scan_hook, h, __ATOMIC_RELEASE);
}

/* Frees what a scan built (whole or in part) and leaves v as before its first scan: a scan
 * refused memory keeps nothing, and the next request scans again (HACKING "Fault
 * injection"). Only the scan's own fields: the handles, dups and directories are made
 * after a scan that succeeded. */
static void scan_forget(struct folder_view *v)
{
    for (size_t i = 0; i < v->nfiles; i++) {
        struct mf_file *f = &v->files[i];
        free(f->rel);
        if (f->src)
            source_close(f->src);
        free(f->src);
        free(f->err);
        for (uint32_t k = 0; k < f->nmembers; k++)
            free(f->members[k]);
        free(f->members);
        free(f->member_index);
        free(f->zm);
    }
    free(v->files);
    for (size_t i = 0; i < v->nskips; i++) {
        free(v->skips[i].rel);
        free(v->skips[i].why);
    }
    free(v->skips);
    mf_rules_free(&v->rules);
    free(v->prio);
    for (unsigned i = 0; i < MF_SEGS; i++)
        free(v->recs.seg[i]);
    free(v->runs);
    mf_keyset_free(&v->ks);
    free(v->conflicts);
    free(v->identical);
    free(v->mprov);
    free(v->mconf);
    free(v->midentical);
    free(v->bytag);
    free(v->tgroups);
    for (size_t i = 0; i < v->nnotes; i++)
        free(v->notes[i]);
    free(v->notes);
    v->scanned = false;
    v->scan_rc = S3_OK;
    v->has_cfg = false;
    v->files = NULL;
    v->nfiles = v->npackages = v->nscripts = 0;
    v->prio = NULL;
    v->skips = NULL;
    v->nskips = v->capskips = 0;
    v->recs = (struct mf_recs){0};
    v->runs = NULL;
    v->nruns = 0;
    v->resources = 0;
    v->conflicts = NULL;
    v->nconflicts = 0;
    v->identical = NULL;
    v->mprov = NULL;
    v->nmprov = 0;
    v->mconf = NULL;
    v->nmconf = 0;
    v->midentical = NULL;
    v->bytag = NULL;
    v->tgroups = NULL;
    v->ntgroups = 0;
    v->notes = NULL;
    v->nnotes = v->capnotes = 0;
}

/* The folder scanned, once: its outcome is kept (a LIMIT or an unreadable folder is the
 * same at every request), except a refused allocation, which keeps nothing and is
 * tried again by the next request. Called by the root's populate, under the tree lock. */
static enum s3_err scan(struct folder_view *v)
{
    if (v->scanned)
        return v->scan_rc;
    v->scanned = true;
    struct walk w = {0};
    enum s3_err rc = walk_folder(v, &w);
    const struct scan_hook *hook = __atomic_load_n(&scan_hook, __ATOMIC_ACQUIRE);
    if (hook)
        hook->fn(hook->ctx);
    if (rc == S3_OK && w.cfg_name)
        rc = read_rules(v, w.cfg_name);
    if (rc == S3_OK)
        rc = scan_files(v, &w);
    for (size_t i = 0; i < w.n; i++)
        free(w.c[i].rel);
    free(w.c);
    for (size_t i = 0; i < w.ndirs; i++)
        free(w.dirs[i]);
    free(w.dirs);
    free(w.cfg_name);
    if (rc == S3_OK)
        rc = group_keys(v);
    if (rc == S3_OK)
        rc = group_modules(v);
    if (v->nskips) /* none skipped: no list at all (qsort's pointer must not be NULL) */
        qsort(v->skips, v->nskips, sizeof *v->skips, by_skip_path);
    if (rc == S3_ERR_NOMEM)
        scan_forget(v);
    else
        v->scan_rc = rc;
    return rc;
}

/* ---- nested folders for sorted paths ---- */

/* The folders of the last path placed, so paths given in listing order (each folder's
 * paths together) make each folder once. */
struct chain {
    unsigned depth;
    uint32_t ino[MEMBER_MAX_DEPTH + 2];
    size_t end[MEMBER_MAX_DEPTH + 2]; /* where level k's folder path ends in path */
    char *path;                       /* the folder path of the chain (a copy) */
};

static void chain_init(struct chain *c, uint32_t base)
{
    memset(c, 0, sizeof *c);
    c->ino[0] = base;
}

/* The directory for rel's file (made as needed) and its leaf name: 0 when a directory
 * cannot be made (*rc: S3_OK for the node limit, or NOMEM). */
static uint32_t chain_parent(struct tree *t, struct chain *c, const char *rel, const char **leaf, enum s3_err *rc)
{
    const char *slash = strrchr(rel, '/');
    size_t dlen = slash ? (size_t)(slash - rel) : 0;
    *leaf = slash ? slash + 1 : rel;
    while (c->depth && !(c->end[c->depth] <= dlen && memcmp(c->path, rel, c->end[c->depth]) == 0 &&
                         (c->end[c->depth] == dlen || rel[c->end[c->depth]] == '/')))
        c->depth--;
    size_t pos = c->depth ? c->end[c->depth] + 1 : 0;
    if (pos < dlen) {
        char *p = strndup(rel, dlen);
        if (!p) {
            *rc = S3_ERR_NOMEM;
            return 0;
        }
        free(c->path);
        c->path = p;
    }
    while (pos < dlen && c->depth <= MEMBER_MAX_DEPTH) {
        size_t e = pos;
        while (e < dlen && rel[e] != '/')
            e++;
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)(e - pos), rel + pos);
        uint32_t ino = tree_add_dir(t, c->ino[c->depth], name, "folder.dir", NULL, NULL, 0);
        if (!ino) {
            *rc = added(t, 0);
            return 0;
        }
        c->depth++;
        c->ino[c->depth] = ino;
        c->end[c->depth] = e;
        pos = e + 1;
    }
    return c->ino[c->depth];
}

/* ---- /files ---- */

/* Tests only: package views opened (folder_view_test_packages_opened). */
static uint64_t packages_opened; /* atomic */

uint64_t folder_view_test_packages_opened(void)
{
    return __atomic_load_n(&packages_opened, __ATOMIC_RELAXED);
}

/* A package's directory: the package view, opened over the file when first listed (the
 * file must still be the one scanned: a package replaced since is not read by the old
 * index). */
static enum s3_err populate_package(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    struct mf_file *f = ctx;
    struct folder_view *v = f->v;
    if (!f->tried && !f->err) {
        char *path = join(v->root, f->rel), msg[FILE_ERR_MAX];
        struct source *src = malloc(sizeof *src);
        enum s3_err e = path && src ? source_open(src, path, msg, sizeof msg) : S3_ERR_NOMEM;
        free(path);
        if (e == S3_OK && !same_file(&src->st, &f->st)) {
            source_close(src);
            e = S3_ERR_IO;
            snprintf(msg, sizeof msg, "%s: changed since the folder was scanned", f->rel);
        }
        if (e == S3_OK) {
            f->src = src;
        } else {
            free(src);
            /* memory: the listing fails and opens it again, never an .error */
            if (e == S3_ERR_NOMEM || file_err(f, "%s", msg))
                return S3_ERR_NOMEM;
        }
        f->tried = true;
    }
    if (f->err)
        return added(t, add_error(t, dir, "package", f->err));
    char origin[300], err[FILE_ERR_MAX];
    f->pkg = NULL; /* a view opened by a listing that failed is not this one */
    snprintf(origin, sizeof origin, "package %s in the folder", f->rel);
    __atomic_add_fetch(&packages_opened, 1, __ATOMIC_RELAXED);
    enum s3_err e = v->fs->open_at(v->fs, dir, f->src, origin, 1u << FMT_DBPF, &f->pkg, err, sizeof err);
    if (e == S3_ERR_NOMEM)
        return e; /* the listing fails, never shows package.error for it */
    if (e) /* not kept in f->err: a listing that failed for memory opens it again */
        return added(t, add_error(t, dir, "package", err));
    return tree_populate(t, dir);
}

static enum s3_err produce_member(struct cached *c, uint8_t **data, size_t *size, char *err, size_t errlen)
{
    struct zmember *m = (struct zmember *)c;
    struct mf_file *f = m->f;
    char *path = join(f->v->root, f->rel);
    struct stat st;
    if (!path)
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    if (stat(path, &st) != 0 || !same_file(&st, &f->st)) {
        free(path);
        return s3_fail(S3_ERR_IO, err, errlen, "%s: changed since the folder was scanned", f->rel);
    }
    int code = 0;
    zip_t *z = zip_open(path, ZIP_RDONLY, &code);
    free(path);
    char why[200];
    if (!z) /* libzip's own refused memory is NOMEM too: the next read tries again */
        return s3_fail(code == ZIP_ER_MEMORY ? S3_ERR_NOMEM : S3_ERR_IO, err, errlen, "%s: %s", f->rel,
                       zip_why(code, why, sizeof why));
    uint8_t *out = malloc(m->size + 1);
    zip_file_t *zf = out ? zip_fopen_index(z, m->index, 0) : NULL;
    enum s3_err rc = S3_OK;
    if (!out) {
        rc = s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory for %" PRIu64 " bytes", m->size);
    } else if (!zf) {
        rc = s3_fail(zip_error_code_zip(zip_get_error(z)) == ZIP_ER_MEMORY ? S3_ERR_NOMEM : S3_ERR_IO, err, errlen,
                     "%s", zip_strerror(z));
    } else {
        uint64_t got = 0;
        zip_int64_t r = 1;
        while (got <= m->size && (r = zip_fread(zf, out + got, m->size + 1 - got)) > 0)
            got += (uint64_t)r;
        if (r < 0)
            rc = s3_fail(zip_error_code_zip(zip_file_get_error(zf)) == ZIP_ER_MEMORY ? S3_ERR_NOMEM : S3_ERR_IO, err,
                         errlen, "%s", zip_file_strerror(zf));
        else if (got != m->size)
            rc = s3_fail(S3_ERR_FORMAT, err, errlen, "the member holds %" PRIu64 " bytes, its entry says %" PRIu64,
                         got, m->size);
    }
    if (zf)
        zip_fclose(zf);
    zip_discard(z);
    if (rc) {
        free(out);
        return rc;
    }
    *data = out;
    *size = m->size;
    return S3_OK;
}

static enum s3_err read_member(struct tree *t, void *ctx, uint64_t arg, uint64_t off, void *buf, size_t len,
                               size_t *got)
{
    (void)t, (void)arg;
    struct zmember *m = ctx;
    /* a production refused memory: ENOMEM to this read, the next produces again */
    return cache_read(&m->f->v->fs->cache, &m->c, CACHE_ANY_SIZE, off, buf, len, got);
}

static struct cached *member_item(void *ctx, uint64_t arg, struct cache **cache)
{
    (void)arg;
    struct zmember *m = ctx;
    *cache = &m->f->v->fs->cache;
    return &m->c;
}

/* A script archive's directory: its members, in their folders, read through libzip. */
static enum s3_err populate_script(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    struct mf_file *f = ctx;
    struct folder_view *v = f->v;
    char *path = join(v->root, f->rel), why[200];
    struct stat st;
    if (!path)
        return S3_ERR_NOMEM;
    int code = 0;
    zip_t *z = stat(path, &st) == 0 && same_file(&st, &f->st) ? zip_open(path, ZIP_RDONLY, &code) : NULL;
    free(path);
    if (!z) {
        snprintf(why, sizeof why, "%s", code ? zip_why(code, why, sizeof why) : "changed since the folder was scanned");
        return added(t, add_error(t, dir, "archive", why));
    }
    if (!f->zm && !(f->zm = alloc_array(f->nmembers, sizeof *f->zm))) {
        zip_discard(z);
        return S3_ERR_NOMEM;
    }
    struct chain c;
    chain_init(&c, dir);
    enum s3_err rc = S3_OK;
    for (uint32_t i = 0; rc == S3_OK && i < f->nmembers; i++) {
        const char *leaf;
        uint32_t parent = chain_parent(t, &c, f->members[i], &leaf, &rc);
        if (!parent)
            break;
        zip_stat_t zs;
        struct zmember *m = &f->zm[i];
        if (zip_stat_index(z, f->member_index[i], 0, &zs) != 0 || !(zs.valid & ZIP_STAT_SIZE)) {
            rc = added(t, add_error(t, parent, leaf, zip_strerror(z)));
            continue;
        }
        if (zs.size > v->fs->opts.max_unpacked) {
            snprintf(why, sizeof why, "%" PRIu64 " bytes expanded: over the limit (max_unpacked_mb)", (uint64_t)zs.size);
            rc = added(t, add_error(t, parent, leaf, why));
            continue;
        }
        if (!m->f) { /* once: a listing made again after a failure finds it set up */
            *m = (struct zmember){.f = f, .index = f->member_index[i], .size = zs.size};
            m->c.produce = produce_member;
            m->c.hint = zs.size;
        }
        rc = added(t, tree_add_gen(t, parent, leaf, "zip.member", zs.size, read_member, m, 0));
    }
    free(c.path);
    zip_discard(z);
    return rc;
}

static enum s3_err populate_files(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    struct folder_view *v = ctx;
    struct chain c;
    chain_init(&c, dir);
    enum s3_err rc = S3_OK;
    for (size_t i = 0; rc == S3_OK && i < v->nfiles; i++) {
        struct mf_file *f = &v->files[i];
        const char *leaf;
        uint32_t parent = chain_parent(t, &c, f->rel, &leaf, &rc);
        if (!parent)
            break;
        f->ino = tree_add_dir(t, parent, leaf, f->script ? "folder.script" : "folder.package",
                              f->script ? populate_script : populate_package, f, 0);
        rc = added(t, f->ino);
    }
    free(c.path);
    return rc;
}

/* ---- providers ---- */

/* Package f's view, opened (its /files directory populated) when it is not yet: NULL
 * when it cannot be (f->err or its package.error says why, or *rc is the reason to pass
 * on). Populated each time, not trusted from f->pkg alone: a listing that failed after
 * the view was opened is rolled back, and listing it again opens a new one. */
static struct s3fs *package_of(struct folder_view *v, struct mf_file *f, enum s3_err *rc)
{
    struct tree *t = v->fs->tree;
    if ((*rc = tree_populate(t, v->files_dir)) != S3_OK)
        return NULL;
    if (!f->ino) {
        *rc = file_err(f, "%s has no directory under /files (the node limit)", f->rel);
        return NULL;
    }
    *rc = tree_populate(t, f->ino);
    return *rc ? NULL : f->pkg;
}

/* Whether package f is still the file scanned (looked at once, without opening its view):
 * false with f->err saying why, which its /files directory then shows, or with *rc NOMEM. */
static bool still_there(struct folder_view *v, struct mf_file *f, enum s3_err *rc)
{
    if (!f->checked && !f->err) {
        char *path = join(v->root, f->rel);
        struct stat st;
        if (!path) {
            *rc = S3_ERR_NOMEM;
            return false;
        }
        if (stat(path, &st) != 0)
            *rc = file_err(f, "%s: %s", f->rel, strerror(errno));
        else if (!same_file(&st, &f->st))
            *rc = file_err(f, "%s: changed since the folder was scanned", f->rel);
        free(path);
        if (*rc)
            return false;
        f->checked = true;
    }
    return !f->err;
}

/* The relative path from dir to file f's directory under /files: /files mirrors the
 * folder's relative paths (names unique as the folder's are), so it is written without
 * /files being listed: a first lookup of a key makes no node for 10,000 packages. */
static char *files_path(struct folder_view *v, uint32_t dir, const struct mf_file *f)
{
    struct tree *t = v->fs->tree;
    if (f->ino)
        return tree_relpath(t, dir, f->ino);
    size_t depth = 0;
    for (uint32_t d = dir; d != TREE_ROOT && depth < 64; d = tree_parent(t, d))
        depth++; /* the folder view is the root's; 64: a bound whatever dir is */
    char *p = malloc(3 * depth + strlen("files/") + strlen(f->rel) + 1);
    if (!p)
        return NULL;
    p[0] = 0;
    for (size_t i = 0; i < depth; i++)
        strcat(p, "../");
    strcat(p, "files/");
    strcat(p, f->rel);
    return p;
}

/* The link from dir to resource r's directory (malloc'd): NULL with why (its package
 * can no longer be read) and *rc S3_OK, or with *rc the reason to pass on. */
static char *provider_target(struct folder_view *v, uint32_t dir, const struct mf_rec *r, char *why, size_t whylen,
                             enum s3_err *rc)
{
    struct mf_file *f = &v->files[r->file];
    char named[160];
    const char *full;
    *rc = S3_OK;
    if (!f->names) {
        /* no name map: the package view names the entry as the key, with "~N" for a
         * repeat (view_dbpf.c); so the package need not be opened to link to it */
        key_name(named, sizeof named, f->sims4, r);
        if (r->dup)
            snprintf(named + strlen(named), sizeof named - strlen(named), "~%u", r->dup + 1);
        full = named;
        if (!still_there(v, f, rc)) {
            snprintf(why, whylen, "%s", f->err ? f->err : "");
            return NULL;
        }
    } else {
        struct s3fs *pkg = package_of(v, f, rc);
        full = pkg ? dbpf_view_resource_name_at(pkg, r->record) : NULL;
        if (!full) {
            if (pkg && *rc == S3_OK)
                *rc = S3_ERR_NOMEM; /* the names could not be made */
            snprintf(why, whylen, "%s", f->err ? f->err : "the package cannot be opened (its package.error says why)");
            return NULL;
        }
    }
    char *rel = files_path(v, dir, f);
    char *target = NULL;
    if (!rel || asprintf(&target, "%s/resources/%s", rel, full) < 0) {
        target = NULL;
        *rc = S3_ERR_NOMEM;
    }
    free(rel);
    return target;
}

/* ---- /keys, /by-type ---- */

/* /keys and /by-type/TAG are computed directories (tree.h): a million keys cost their
 * table here, not a node each; an entry's link is made when it is first used. */

static enum s3_err key_entry_name(const struct folder_view *v, uint32_t k, char *buf, size_t size)
{
    const struct mf_rec *w = winner_of(v, k);
    key_name(buf, size, v->files[w->file].sims4, w);
    return S3_OK;
}

/* The key a /keys name is of: its type, group and instance read from the name's fixed
 * prefix (PP_TTTTTTTT_GGGGGGGG_IIIIIIIIIIIIIIII), then found in the key table; the tree
 * checks the whole name against the key's own. */
static bool key_of_name(const struct folder_view *v, const char *name, uint32_t *k)
{
    uint32_t type = 0, group = 0;
    uint64_t inst = 0;
    static const unsigned at[] = {3, 12, 21}, len[] = {8, 8, 16};
    if (strlen(name) < 37 || name[2] != '_' || name[11] != '_' || name[20] != '_')
        return false;
    for (int f = 0; f < 3; f++) {
        uint64_t x = 0;
        for (unsigned i = 0; i < len[f]; i++) {
            char c = name[at[f] + i];
            int d = c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
            if (d < 0)
                return false;
            x = x << 4 | (uint64_t)d;
        }
        if (f == 0)
            type = (uint32_t)x;
        else if (f == 1)
            group = (uint32_t)x;
        else
            inst = x;
    }
    return mf_keyset_find(&v->ks, type, group, inst, k);
}

static enum s3_err keys_name(void *ctx, uint32_t i, char *buf, size_t size)
{
    return key_entry_name(ctx, i, buf, size);
}

static enum s3_err keys_find(void *ctx, const char *name, uint32_t *i)
{
    return key_of_name(ctx, name, i) ? S3_OK : S3_ERR_NOT_FOUND;
}

/* The winner's resource directory; when its package can no longer be read (changed or
 * gone since the scan) the package's own directory, whose package.error says why (said
 * once in /info): a link must resolve, and the names of a computed directory are fixed. */
static enum s3_err keys_target(struct tree *t, void *ctx, uint32_t dir, uint32_t i, char **target)
{
    struct folder_view *v = ctx;
    const struct mf_rec *w = winner_of(v, i);
    struct mf_file *f = &v->files[w->file];
    char why[FILE_ERR_MAX];
    enum s3_err rc;
    *target = provider_target(v, dir, w, why, sizeof why, &rc);
    if (*target || rc)
        return rc;
    if (!f->warned) {
        struct diag_mark m = diag_mark(&v->fs->diag);
        if (diag_add(&v->fs->diag, "keys of %s link to its directory (its package.error): %s", f->rel, why)) {
            diag_rollback(&v->fs->diag, m); /* not counted as dropped: the entry's next making warns */
            return S3_ERR_NOMEM;
        }
        f->warned = true;
        tree_touch(t);
    }
    *target = files_path(v, dir, f);
    return *target ? S3_OK : S3_ERR_NOMEM;
}

static const struct tree_computed_ops keys_ops = {.name = keys_name, .find = keys_find, .target = keys_target};

static enum s3_err populate_keys(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    struct folder_view *v = ctx;
    return tree_set_computed(t, dir, &keys_ops, v, (uint32_t)v->ks.nkeys);
}

static void tag_name(const struct folder_view *v, uint32_t key, char *out, size_t size)
{
    const struct mf_rec *w = winner_of(v, key);
    const char *tag, *ext;
    if (dbpf_type_names(w->type, v->files[w->file].sims4, &tag, &ext))
        snprintf(out, size, "%s", tag);
    else
        snprintf(out, size, "0x%08" PRIX32, w->type);
}

/* One /by-type/TAG directory: group g's keys, bytag[start .. start + n) (in key order). */
struct tagdir {
    struct folder_view *v;
    uint32_t g;
};

static enum s3_err tag_name_of(void *ctx, uint32_t i, char *buf, size_t size)
{
    const struct tagdir *d = ctx;
    return key_entry_name(d->v, d->v->bytag[d->v->tgroups[d->g].start + i], buf, size);
}

/* The key by its name, then its place in the group by halves (a group lists its keys in
 * ascending key number). */
static enum s3_err tag_find(void *ctx, const char *name, uint32_t *i)
{
    const struct tagdir *d = ctx;
    const struct tgroup *grp = &d->v->tgroups[d->g];
    uint32_t k;
    if (!key_of_name(d->v, name, &k))
        return S3_ERR_NOT_FOUND;
    const uint32_t *keys = d->v->bytag + grp->start;
    uint32_t lo = 0, hi = grp->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (keys[mid] == k) {
            *i = mid;
            return S3_OK;
        }
        if (keys[mid] < k)
            lo = mid + 1;
        else
            hi = mid;
    }
    return S3_ERR_NOT_FOUND;
}

static enum s3_err tag_target(struct tree *t, void *ctx, uint32_t dir, uint32_t i, char **target)
{
    (void)t, (void)dir;
    char name[128];
    tag_name_of(ctx, i, name, sizeof name);
    if (asprintf(target, "../../keys/%s", name) < 0) {
        *target = NULL;
        return S3_ERR_NOMEM;
    }
    return S3_OK;
}

static const struct tree_computed_ops tag_ops = {.name = tag_name_of, .find = tag_find, .target = tag_target};

static enum s3_err populate_tag(struct tree *t, uint32_t dir, void *ctx, uint64_t g)
{
    struct folder_view *v = ctx;
    struct tagdir *d = tree_alloc(t, sizeof *d);
    if (!d)
        return S3_ERR_NOMEM;
    *d = (struct tagdir){v, (uint32_t)g};
    return tree_set_computed(t, dir, &tag_ops, d, v->tgroups[g].n);
}

static enum s3_err populate_by_type(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    struct folder_view *v = ctx;
    enum s3_err rc = v->bytag ? S3_OK : group_tags(v); /* made when first listed: the scan does not need it */
    if (rc) {
        free(v->bytag);
        free(v->tgroups);
        v->bytag = NULL;
        v->tgroups = NULL;
        v->ntgroups = 0;
        return rc;
    }
    for (size_t g = 0; rc == S3_OK && g < v->ntgroups; g++) {
        char name[16];
        tag_name(v, v->bytag[v->tgroups[g].start], name, sizeof name);
        rc = added(t, tree_add_dir(t, dir, name, "folder.by_type", populate_tag, v, g));
    }
    return rc;
}

/* ---- comparing providers' bytes ---- */

/* The node of a module's bytes in a script archive (under /files): S3_OK with *node (0
 * when there is none: the archive changed, the node limit), or NOMEM, which a listing
 * passes on rather than show the member as missing. */
static enum s3_err member_bytes(struct folder_view *v, uint32_t file, const char *module, uint32_t *node)
{
    struct tree *t = v->fs->tree;
    struct mf_file *f = &v->files[file];
    enum s3_err rc = tree_populate(t, v->files_dir);
    *node = 0;
    if (rc || !f->ino)
        return rc == S3_ERR_NOMEM ? rc : S3_OK;
    char *copy = strdup(module), *save = NULL;
    if (!copy)
        return S3_ERR_NOMEM;
    uint32_t cur = f->ino;
    for (char *part = strtok_r(copy, "/", &save); part && cur; part = strtok_r(NULL, "/", &save)) {
        rc = tree_lookup(t, cur, part, &cur);
        if (rc)
            cur = 0;
    }
    free(copy);
    *node = cur;
    return rc == S3_ERR_NOMEM ? rc : S3_OK;
}

/* Bytes [off, off+n) of file ino into buf: the read's reason, or IO when it comes out
 * short (the file changed since it was listed). */
static enum s3_err read_exactly(struct tree *t, uint32_t ino, uint64_t off, uint8_t *buf, size_t n)
{
    size_t got = 0;
    enum s3_err e = tree_read(t, ino, off, buf, n, &got);
    return e ? e : got == n ? S3_OK : S3_ERR_IO;
}

/* Whether a and b hold the same bytes: S3_OK and *same, or the reason either cannot be
 * read (NOMEM, IO, ...). Both are held while compared (each expanded once, whatever the
 * cache's size). */
static enum s3_err same_bytes(struct tree *t, uint32_t a, uint32_t b, bool *same)
{
    uint64_t size = tree_size(t, a);
    *same = false;
    if (size != tree_size(t, b))
        return S3_OK;
    struct tree_hold *ha = tree_hold(t, a), *hb = tree_hold(t, b);
    uint8_t *x = malloc(COMPARE_CHUNK), *y = malloc(COMPARE_CHUNK);
    enum s3_err e = x && y ? S3_OK : S3_ERR_NOMEM;
    bool differ = false;
    for (uint64_t off = 0; e == S3_OK && !differ && off < size; off += COMPARE_CHUNK) {
        size_t n = size - off < COMPARE_CHUNK ? (size_t)(size - off) : COMPARE_CHUNK;
        if ((e = read_exactly(t, a, off, x, n)) == S3_OK && (e = read_exactly(t, b, off, y, n)) == S3_OK)
            differ = memcmp(x, y, n) != 0;
    }
    *same = e == S3_OK && !differ;
    free(x);
    free(y);
    tree_release(ha);
    tree_release(hb);
    return e;
}

/* Module conflict i's providers compared through their archives' members: S3_OK with
 * *same, or why they cannot be (with why): NOMEM (a refused allocation, here or in
 * same_bytes), or the reason a member cannot be listed or read. */
static enum s3_err compare_members(struct folder_view *v, uint32_t i, bool *same, char *why, size_t whylen)
{
    struct tree *t = v->fs->tree;
    const struct mconf *m = &v->mconf[i];
    uint32_t base = 0;
    *same = true;
    for (uint32_t j = 0; j < m->n && *same; j++) {
        const struct mprov *p = &v->mprov[m->first + j];
        uint32_t node;
        if (member_bytes(v, p->file, p->name, &node))
            return s3_fail(S3_ERR_NOMEM, why, whylen, "out of memory");
        if (!node || tree_kind(t, node) != NODE_FILE)
            return s3_fail(S3_ERR_IO, why, whylen, "%s in %s cannot be listed", p->name, v->files[p->file].rel);
        if (j == 0) {
            base = node;
            continue;
        }
        enum s3_err e = same_bytes(t, base, node, same);
        if (e == S3_ERR_NOMEM)
            return s3_fail(e, why, whylen, "out of memory");
        if (e)
            return s3_fail(e, why, whylen, "%s in %s cannot be read", p->name, v->files[p->file].rel);
    }
    return S3_OK;
}

/* Tests only: how the keys' comparisons were decided, by enum dbpf_same_how. */
static uint64_t compared[4]; /* atomic */

void folder_view_test_compared(uint64_t counts[4])
{
    for (int i = 0; i < 4; i++)
        counts[i] = __atomic_load_n(&compared[i], __ATOMIC_RELAXED);
}

/* Tests only: package files opened to compare providers' bytes (no package tree). */
static uint64_t package_opens; /* atomic */

uint64_t folder_view_test_package_opens(void)
{
    return __atomic_load_n(&package_opens, __ATOMIC_RELAXED);
}

/* A package file open for comparisons, its header parsed: kept while one render compares
 * conflicts (conflicts.csv: 25,000 conflicts of four providers were 100,000 opens, each
 * with its header read; now each package once while its conflicts come by). */
#define WINDOW 65536u    /* bytes a handle keeps of its file around its last small read */
#define WINDOW_BELOW 4096u /* reads this small go through the window */
struct handle {
    uint32_t file;
    int fd;
    struct s3_src src; /* reads through handle_read: a handle is not moved while open */
    struct dbpf d;
    uint64_t used; /* the render's clock at its last use: the least recent is let go */
    /* the header, the index's start, a record, a resource's first bytes: each comparison
     * reads a few small pieces, mostly near each other (a whole small package) */
    uint64_t win_off;
    size_t win_len;
    uint8_t win[WINDOW]; /* (the handles are one calloc: pages never used cost nothing) */
};

/* s3_src's read over a handle: small reads from its window (loaded around them when they
 * miss it), big ones straight from the file. */
static enum s3_err handle_read(void *ctx, uint64_t off, void *buf, size_t len)
{
    struct handle *h = ctx;
    if (len < WINDOW_BELOW && (off < h->win_off || off - h->win_off + len > h->win_len)) {
        uint64_t at = off & ~(uint64_t)(WINDOW_BELOW - 1);
        ssize_t r = at < h->src.size ? pread(h->fd, h->win, WINDOW, (off_t)at) : -1;
        h->win_off = at;
        h->win_len = r > 0 ? (size_t)r : 0;
    }
    if (off >= h->win_off && off - h->win_off + len <= h->win_len) {
        memcpy(buf, h->win + (off - h->win_off), len);
        return S3_OK;
    }
    for (size_t got = 0; got < len;) {
        ssize_t r = pread(h->fd, (char *)buf + got, len - got, (off_t)(off + got));
        if (r <= 0)
            return S3_ERR_IO;
        got += (size_t)r;
    }
    return S3_OK;
}

static void handle_close(struct handle *h)
{
    if (h->fd >= 0)
        close(h->fd);
    h->fd = -1;
}

/* Ends a render's comparisons: no package stays open after it (one that is deleted
 * meanwhile keeps no space). */
static void handles_close(struct folder_view *v)
{
    for (size_t i = 0; i < v->nhandles; i++)
        handle_close(&v->handles[i]);
    v->nhandles = 0;
}

/* Opens file's package into h: false when it changed or is gone since the scan, or its
 * header cannot be read. */
static bool handle_open(struct folder_view *v, uint32_t file, struct handle *h)
{
    const struct mf_file *f = &v->files[file];
    char *path = join(v->root, f->rel), err[200];
    struct stat st;
    h->file = file;
    h->fd = path ? open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) : -1;
    free(path);
    if (h->fd >= 0)
        __atomic_add_fetch(&package_opens, 1, __ATOMIC_RELAXED);
    if (h->fd < 0 || fstat(h->fd, &st) != 0 || !same_file(&st, &f->st))
        return false;
    h->src = (struct s3_src){handle_read, h, (uint64_t)st.st_size};
    h->win_off = 0;
    h->win_len = 0;
    return dbpf_parse_header(&h->src, &h->d, err, sizeof err) == S3_OK;
}

/* File's package, open: from the render's handles, else opened in place of the one used
 * least recently (never `keep`, the other side of a pair). NULL when it cannot be read. */
static struct handle *handle_of(struct folder_view *v, uint32_t file, const struct handle *keep)
{
    struct handle *h = NULL;
    for (size_t i = 0; i < v->nhandles && !h; i++)
        if (v->handles[i].fd >= 0 && v->handles[i].file == file)
            h = &v->handles[i];
    if (h) {
        struct stat st; /* still the file scanned (it may be rewritten in place) */
        if (fstat(h->fd, &st) != 0 || !same_file(&st, &v->files[file].st))
            return NULL;
        h->used = ++v->handle_clock;
        return h;
    }
    if (v->nhandles < HANDLES) {
        h = &v->handles[v->nhandles++];
    } else {
        for (size_t i = 0; i < HANDLES; i++)
            if (&v->handles[i] != keep && (!h || v->handles[i].used < h->used))
                h = &v->handles[i];
        handle_close(h);
    }
    if (!handle_open(v, file, h)) {
        handle_close(h); /* the slot stays, closed and first to be taken (handles never move:
                          * their src points at them) */
        h->used = 0;
        return NULL;
    }
    h->used = ++v->handle_clock;
    return h;
}

/* A provider's index entry read back from its package file, which must still be the one
 * scanned: that one record, and no package tree (a conflict's `identical` must not open
 * every provider's package view: 10,000 packages' trees). */
struct provider {
    struct handle *h;
    struct dbpf_entry e;
};

/* S3_OK, or why its bytes cannot be read, with why (IO: the package changed or is gone
 * since the scan, or its record cannot be read again). */
static enum s3_err provider_read(struct folder_view *v, const struct mf_rec *r, const struct handle *keep,
                                 struct provider *p, char *why, size_t whylen)
{
    const char *rel = v->files[r->file].rel;
    p->h = handle_of(v, r->file, keep);
    if (!p->h)
        return s3_fail(S3_ERR_IO, why, whylen, "%s: changed or gone since the folder was scanned", rel);
    if (dbpf_read_entry(&p->h->src, &p->h->d, r->record, &p->e) || p->e.type != r->type || p->e.group != r->group ||
        p->e.instance != r->instance)
        return s3_fail(S3_ERR_IO, why, whylen, "%s: its index record cannot be read again", rel);
    return S3_OK;
}

/* Key conflict i's providers compared: different declared sizes (kept from the scan) are
 * "no" with no file opened; else from their index records and stored bytes
 * (dbpf_same_bytes), one pair at a time, each against the first. S3_OK with *same, or
 * why it cannot be told (with why). The packages stay open in the view's handles until
 * handles_close. */
static enum s3_err compare_keys(struct folder_view *v, uint32_t i, bool *same, char *why, size_t whylen)
{
    uint32_t k = v->conflicts[i], n = mf_keyset_n(&v->ks, k);
    const struct mf_rec *r0 = mf_rec_at(&v->recs, mf_keyset_rec(&v->ks, k, 0));
    *same = false;
    for (uint32_t j = 1; j < n; j++)
        if (mf_rec_at(&v->recs, mf_keyset_rec(&v->ks, k, j))->size != r0->size) {
            __atomic_add_fetch(&compared[DBPF_BY_SIZE], 1, __ATOMIC_RELAXED);
            return S3_OK;
        }
    struct provider base, other;
    enum s3_err rc = provider_read(v, r0, NULL, &base, why, whylen);
    *same = true;
    for (uint32_t j = 1; j < n && rc == S3_OK && *same; j++) {
        const struct mf_rec *r = mf_rec_at(&v->recs, mf_keyset_rec(&v->ks, k, j));
        rc = provider_read(v, r, base.h, &other, why, whylen);
        if (rc == S3_OK) {
            enum dbpf_same_how how;
            char err[200];
            rc = dbpf_same_bytes(&base.h->src, &base.e, &other.h->src, &other.e, v->fs->opts.max_unpacked, same,
                                 &how, err, sizeof err);
            __atomic_add_fetch(&compared[how], 1, __ATOMIC_RELAXED);
            if (rc)
                s3_fail(rc, why, whylen, "%s against %s: %s", v->files[r->file].rel, v->files[r0->file].rel, err);
        }
    }
    return rc;
}

/* Conflict i's `identical`: S3_OK with *same, or the reason it cannot be told (with why).
 * Only an answer is kept (conflicts.csv and the conflict's directory ask once); a refused
 * allocation, or a package that cannot be read, is asked again the next time. */
static enum s3_err compare_providers(struct folder_view *v, uint32_t i, bool module, bool *same, char *why,
                                     size_t whylen)
{
    int8_t *memo = module ? &v->midentical[i] : &v->identical[i];
    if (*memo >= 0) {
        *same = *memo == 1;
        return S3_OK;
    }
    enum s3_err rc = module ? compare_members(v, i, same, why, whylen) : compare_keys(v, i, same, why, whylen);
    if (rc == S3_OK)
        *memo = *same;
    return rc;
}

/* ---- /conflicts, /script-conflicts ---- */

/* A conflict's `identical`, decided when its directory is listed: "yes" or "no" (the
 * layout's two answers). A refused allocation fails the listing (ENOMEM; listed again, it
 * compares again); a provider whose bytes cannot be read (its package changed since the
 * scan, a broken stream, over max_unpacked) makes identical.error saying why, as any part
 * that cannot be made. */
static enum s3_err add_identical(struct tree *t, uint32_t dir, struct folder_view *v, uint32_t i, bool module)
{
    bool same;
    char why[400];
    enum s3_err rc = compare_providers(v, i, module, &same, why, sizeof why);
    handles_close(v); /* no package stays open after a listing */
    if (rc == S3_ERR_NOMEM)
        return rc;
    if (rc)
        return added(t, add_error(t, dir, "identical", why));
    return added(t, tree_add_textf(t, dir, "identical", "folder.identical", "%s\n", same ? "yes" : "no"));
}

static enum s3_err populate_conflict(struct tree *t, uint32_t dir, void *ctx, uint64_t c)
{
    struct folder_view *v = ctx;
    uint32_t k = v->conflicts[c], n = mf_keyset_n(&v->ks, k);
    enum s3_err rc = S3_OK;
    for (uint32_t j = 0; rc == S3_OK && j <= n; j++) {
        /* 1 .. n in load order, then the winner */
        const struct mf_rec *r = mf_rec_at(&v->recs, mf_keyset_rec(&v->ks, k, j < n ? j : mf_keyset_winner(&v->ks, k)));
        char name[16], why[FILE_ERR_MAX];
        if (j < n)
            snprintf(name, sizeof name, "%u", j + 1);
        else
            snprintf(name, sizeof name, "winner");
        enum s3_err e;
        char *target = provider_target(v, dir, r, why, sizeof why, &e);
        if (target)
            rc = added(t, tree_add_link(t, dir, name, target));
        else if (e == S3_OK)
            rc = added(t, add_error(t, dir, name, why));
        else
            rc = e;
        free(target);
    }
    return rc ? rc : add_identical(t, dir, v, (uint32_t)c, false);
}

/* /conflicts is a computed directory of directories (tree.h): entry c is conflict c, its
 * name its key's, and its directory node is made only when a lookup or a listing reaches
 * it (25,000 conflicts in the bench: no name made unique, none kept, before that). */

static enum s3_err conflict_name(void *ctx, uint32_t c, char *buf, size_t size)
{
    struct folder_view *v = ctx;
    return key_entry_name(v, v->conflicts[c], buf, size);
}

/* The conflict a name is of: its key (key_of_name), then that key's place in conflicts,
 * which is sorted by key (by_conflict_key): a binary search. */
static enum s3_err conflict_find(void *ctx, const char *name, uint32_t *c)
{
    struct folder_view *v = ctx;
    uint32_t k;
    if (!key_of_name(v, name, &k) || mf_keyset_n(&v->ks, k) < 2)
        return S3_ERR_NOT_FOUND;
    size_t lo = 0, hi = v->nconflicts;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int cmp = by_conflict_key(&v->conflicts[mid], &k, v);
        if (cmp == 0) {
            *c = (uint32_t)mid;
            return S3_OK;
        }
        if (cmp < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return S3_ERR_NOT_FOUND;
}

static const struct tree_computed_ops conflicts_ops = {
    .name = conflict_name, .find = conflict_find, .populate = populate_conflict, .xtype = "folder.conflict"};

static enum s3_err populate_conflicts(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    struct folder_view *v = ctx;
    return tree_set_computed(t, dir, &conflicts_ops, v, (uint32_t)v->nconflicts);
}

static enum s3_err populate_module_conflict(struct tree *t, uint32_t dir, void *ctx, uint64_t c)
{
    struct folder_view *v = ctx;
    const struct mconf *m = &v->mconf[c];
    enum s3_err rc = S3_OK;
    for (uint32_t j = 0; rc == S3_OK && j <= m->n; j++) {
        /* all at one priority: the one loaded last is in effect */
        const struct mprov *p = &v->mprov[m->first + (j < m->n ? j : m->n - 1)];
        char name[16];
        if (j < m->n)
            snprintf(name, sizeof name, "%u", j + 1);
        else
            snprintf(name, sizeof name, "winner");
        uint32_t node;
        if ((rc = member_bytes(v, p->file, p->name, &node)) != S3_OK)
            break;
        char *target = node ? tree_relpath(t, dir, node) : NULL;
        if (target)
            rc = added(t, tree_add_link(t, dir, name, target));
        else if (node)
            rc = S3_ERR_NOMEM;
        else
            rc = added(t, add_error(t, dir, name, "the archive's member cannot be listed"));
        free(target);
    }
    return rc ? rc : add_identical(t, dir, v, (uint32_t)c, true);
}

static enum s3_err populate_script_conflicts(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    struct folder_view *v = ctx;
    struct chain c;
    chain_init(&c, dir);
    enum s3_err rc = S3_OK;
    /* sorted by bytes (strcmp); the chain needs each folder's paths together, and paths
     * sharing a prefix ("mods/foo/") are together in any lexicographic order */
    for (size_t i = 0; rc == S3_OK && i < v->nmconf; i++) {
        const char *name = v->mprov[v->mconf[i].first].name, *leaf;
        uint32_t parent = chain_parent(t, &c, name, &leaf, &rc);
        if (!parent)
            break;
        rc = added(t, tree_add_dir(t, parent, leaf, "folder.script_conflict", populate_module_conflict, v, i));
    }
    free(c.path);
    return rc;
}

/* ---- generated tables ---- */

/* One row a conflict; its identical column as the conflict's `identical` file says it:
 * yes or no, and empty where that file is identical.error (a provider's bytes cannot be
 * read: its package changed since the scan, a broken stream, ...; the reason is there).
 * A refused allocation fails the read (ENOMEM; read again, it compares again). */
static void render_conflicts_csv(struct tree *t, void *ctx, struct sbuf *out)
{
    (void)t;
    struct folder_view *v = ctx;
    sb_printf(out, "key,type,providers,winner,identical\n");
    for (size_t c = 0; c < v->nconflicts && !out->oom; c++) {
        bool same;
        char why[400];
        enum s3_err rc = compare_providers(v, (uint32_t)c, false, &same, why, sizeof why);
        if (rc == S3_ERR_NOMEM) {
            out->oom = 1;
            return;
        }
        uint32_t k = v->conflicts[c];
        const struct mf_rec *w = winner_of(v, k);
        char name[128], tag[16];
        key_name(name, sizeof name, v->files[w->file].sims4, w);
        tag_name(v, k, tag, sizeof tag);
        sb_csv_field(out, name);
        sb_printf(out, ",%s,%u,", tag, mf_keyset_n(&v->ks, k));
        sb_csv_field(out, v->files[w->file].rel);
        sb_printf(out, ",%s\n", rc ? "" : same ? "yes" : "no");
    }
    handles_close(v);
}

/* A package and what tells it from others of its size, cheapest first: the digest of its
 * index records as the scan read them (no I/O), the SHA-256 of its first and last
 * PEEK_BYTES, then of all its bytes. */
struct hashed {
    uint32_t file;
    uint8_t stage; /* HASH_*: how far it was told apart */
    bool ok;       /* false: left out (changed or unreadable: a note says why) */
    uint64_t index;
    uint8_t peek[SHA256_DIGEST_SIZE];
    uint8_t sum[SHA256_DIGEST_SIZE];
};
enum { HASH_INDEX, HASH_PEEK, HASH_FULL };
#define PEEK_BYTES 4096u

/* Tests only: the files read whole, and those whose ends were read, so far
 * (folder_view_test_hashed). */
static uint64_t files_hashed, files_peeked; /* atomic */

uint64_t folder_view_test_hashed(uint64_t *peeked)
{
    if (peeked)
        *peeked = __atomic_load_n(&files_peeked, __ATOMIC_RELAXED);
    return __atomic_load_n(&files_hashed, __ATOMIC_RELAXED);
}

/* A warning found while hashing: kept with the result, given to /info's warnings by the
 * render that first sees it (under the tree lock, as every diag_add). S3_OK or NOMEM. */
static enum s3_err note_dup(struct dups *d, const char *rel, const char *why)
{
    char **n = realloc(d->notes, (d->nnotes + 1) * sizeof *n);
    if (!n)
        return S3_ERR_NOMEM;
    d->notes = n;
    if (asprintf(&d->notes[d->nnotes], "%s: %s; not in duplicates.csv", rel, why) < 0)
        return S3_ERR_NOMEM;
    d->nnotes++;
    return S3_OK;
}

/* Every package's index digest: FNV-1a over its records (key, entry, repeat, where the
 * record lies), which the scan wrote in file order. Equal bytes give equal records, so
 * packages whose digests differ differ. */
static void index_digests(const struct folder_view *v, struct hashed *h, size_t n, uint64_t *by_file)
{
    for (size_t i = 0; i < v->nfiles; i++)
        by_file[i] = 0xcbf29ce484222325ull;
    for (size_t run = 0; run < v->nruns; run++) {
        const struct mf_run *u = &v->runs[run];
        uint64_t x = by_file[u->file];
        for (uint32_t i = 0; i < u->n; i++) {
            const struct mf_rec *r = mf_rec_at(&v->recs, u->first + i);
            uint64_t words[5] = {r->type, r->group, r->instance, r->size, (uint64_t)r->dup << 32 | r->record};
            const uint8_t *b = (const uint8_t *)words;
            for (size_t k = 0; k < sizeof words; k++)
                x = (x ^ b[k]) * 0x100000001b3ull;
        }
        by_file[u->file] = x;
    }
    for (size_t i = 0; i < n; i++)
        h[i].index = by_file[h[i].file];
}

/* h's file opened, checked to be the one scanned: the descriptor, or -1 (a note says why;
 * *rc NOMEM when that note cannot be kept). */
static int open_scanned(struct folder_view *v, struct hashed *h, enum s3_err *rc)
{
    struct mf_file *f = &v->files[h->file];
    char *path = join(v->root, f->rel);
    *rc = S3_OK;
    if (!path) {
        *rc = S3_ERR_NOMEM;
        return -1;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    free(path);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !same_file(&st, &f->st)) {
        if (fd >= 0)
            close(fd);
        *rc = note_dup(&v->dups, f->rel, "changed or gone since the folder was scanned");
        return -1;
    }
    return fd;
}

/* Reads [off, off + len) of fd into the hash; false when it cannot be read whole. */
static bool hash_span(int fd, uint64_t off, uint64_t len, struct sha256_ctx *sc, uint8_t *buf)
{
    while (len > 0) {
        size_t want = len < COMPARE_CHUNK ? (size_t)len : COMPARE_CHUNK;
        ssize_t got = pread(fd, buf, want, (off_t)off);
        if (got <= 0)
            return false;
        sha256_update(sc, (size_t)got, buf);
        off += (uint64_t)got;
        len -= (uint64_t)got;
    }
    return true;
}

/* h's next stage (HASH_PEEK: its first and last PEEK_BYTES; HASH_FULL: every byte):
 * S3_OK, h->ok false when the file changed or cannot be read (a note says so), or NOMEM. */
static enum s3_err hash_stage(struct folder_view *v, struct hashed *h, uint8_t stage, uint8_t *buf)
{
    enum s3_err rc;
    int fd = open_scanned(v, h, &rc);
    h->ok = fd >= 0;
    if (fd < 0)
        return rc;
    uint64_t size = (uint64_t)v->files[h->file].st.st_size;
    struct sha256_ctx sc;
    sha256_init(&sc);
    bool read;
    if (stage == HASH_PEEK) {
        __atomic_add_fetch(&files_peeked, 1, __ATOMIC_RELAXED);
        uint64_t head = size < PEEK_BYTES ? size : PEEK_BYTES;
        uint64_t tail = size - head < PEEK_BYTES ? size - head : PEEK_BYTES;
        read = hash_span(fd, 0, head, &sc, buf) && hash_span(fd, size - tail, tail, &sc, buf);
        sha256_digest(&sc, SHA256_DIGEST_SIZE, h->peek);
    } else {
        __atomic_add_fetch(&files_hashed, 1, __ATOMIC_RELAXED);
        read = hash_span(fd, 0, size, &sc, buf);
        sha256_digest(&sc, SHA256_DIGEST_SIZE, h->sum);
    }
    close(fd);
    h->stage = stage;
    h->ok = read;
    return read ? S3_OK : note_dup(&v->dups, v->files[h->file].rel, "unreadable");
}

/* Orders by what tells packages apart so far: size, index digest, then the hashes of the
 * stage both reached (the stages of one run of equal keys are the same). */
static int by_told(const void *a, const void *b, void *ctx)
{
    const struct folder_view *v = ctx;
    const struct hashed *x = a, *y = b;
    off_t sx = v->files[x->file].st.st_size, sy = v->files[y->file].st.st_size;
    if (sx != sy)
        return sx < sy ? -1 : 1;
    if (x->index != y->index)
        return x->index < y->index ? -1 : 1;
    int c = x->stage != y->stage ? (x->stage < y->stage ? -1 : 1) : 0;
    if (!c && x->stage >= HASH_PEEK)
        c = memcmp(x->peek, y->peek, sizeof x->peek);
    if (!c && x->stage >= HASH_FULL)
        c = memcmp(x->sum, y->sum, sizeof x->sum);
    return c ? c : x->file < y->file ? -1 : x->file > y->file;
}

static bool same_told(const struct folder_view *v, const struct hashed *x, const struct hashed *y)
{
    struct hashed a = *x, b = *y;
    a.file = b.file = 0; /* everything but the file */
    return v->files[x->file].st.st_size == v->files[y->file].st.st_size && by_told(&a, &b, (void *)v) == 0;
}

/* One stage over the sorted h[0 .. *n): the packages still alike another (sharing size,
 * digest and the last stage's hash) get the next stage; the others, told apart, leave the
 * list, as do those left out (a note). Sorted again after. S3_OK or NOMEM. */
static enum s3_err next_stage(struct folder_view *v, struct hashed *h, size_t *n, uint8_t stage, uint8_t *buf)
{
    size_t kept = 0;
    enum s3_err rc = S3_OK;
    for (size_t i = 0; i < *n && rc == S3_OK;) {
        size_t j = i + 1;
        while (j < *n && same_told(v, &h[i], &h[j]))
            j++;
        for (size_t k = i; j - i >= 2 && k < j && rc == S3_OK; k++) {
            struct hashed one = h[k];
            rc = hash_stage(v, &one, stage, buf);
            if (one.ok)
                h[kept++] = one;
        }
        i = j;
    }
    *n = kept;
    if (rc == S3_OK && kept)
        qsort_r(h, kept, sizeof *h, by_told, v);
    return rc;
}

static int by_first_file(const void *a, const void *b)
{
    const uint32_t *x = a, *y = b;
    return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* duplicates.csv's text from the fully hashed packages h[0 .. kept) (sorted), and the
 * number of packages in groups: S3_OK or NOMEM. */
static enum s3_err write_groups(struct folder_view *v, struct hashed *h, size_t kept, uint32_t (*groups)[2],
                                struct dups *d)
{
    size_t ngroups = 0, identical = 0;
    for (size_t i = 0; i < kept;) {
        size_t j = i + 1;
        while (j < kept && same_told(v, &h[i], &h[j]))
            j++;
        if (j - i >= 2) {
            groups[ngroups][0] = (uint32_t)i;
            groups[ngroups++][1] = h[i].file;
            identical += j - i;
        }
        i = j;
    }
    if (ngroups)
        qsort(groups, ngroups, sizeof *groups, by_first_file); /* rows in load order */
    struct sbuf out = {0};
    sb_printf(&out, "sha256,size,paths\n");
    for (size_t g = 0; g < ngroups; g++) {
        size_t i = groups[g][0];
        for (int b = 0; b < SHA256_DIGEST_SIZE; b++)
            sb_printf(&out, "%02x", h[i].sum[b]);
        sb_printf(&out, ",%" PRIu64, (uint64_t)v->files[h[i].file].st.st_size);
        for (size_t j = i; j < kept && same_told(v, &h[i], &h[j]); j++) {
            sb_printf(&out, ",");
            sb_csv_field(&out, v->files[h[j].file].rel);
        }
        sb_printf(&out, "\n");
    }
    d->csv = out.oom ? NULL : sb_take(&out, &d->len);
    sb_free(&out);
    d->identical = identical;
    return d->csv ? S3_OK : S3_ERR_NOMEM;
}

/* The packages grouped by identical bytes, each told apart from the others as cheaply as
 * it can be: by size and index digest (the scan's, no I/O), then by the hash of its first
 * and last 4 KiB, and only a package still alike another by then is read whole (equal
 * bytes are proven by reading them: those of real duplicates, and of packages differing
 * only inside). Writes duplicates.csv's text into v->dups: S3_OK or NOMEM. */
static enum s3_err compute_duplicates(struct folder_view *v)
{
    struct dups *d = &v->dups;
    size_t n = 0;
    struct hashed *h = alloc_array(v->nfiles, sizeof *h);
    uint64_t *digest = alloc_array(v->nfiles, sizeof *digest);
    uint32_t(*groups)[2] = alloc_array(v->nfiles, sizeof *groups); /* start, first file */
    uint8_t *buf = malloc(COMPARE_CHUNK);
    enum s3_err rc = h && digest && groups && buf ? S3_OK : S3_ERR_NOMEM;
    for (size_t i = 0; rc == S3_OK && i < v->nfiles; i++)
        if (!v->files[i].script)
            h[n++] = (struct hashed){.file = (uint32_t)i, .ok = true};
    if (rc == S3_OK) {
        index_digests(v, h, n, digest);
        if (n)
            qsort_r(h, n, sizeof *h, by_told, v);
    }
    for (uint8_t stage = HASH_PEEK; rc == S3_OK && stage <= HASH_FULL; stage++)
        rc = next_stage(v, h, &n, stage, buf);
    if (rc == S3_OK)
        rc = write_groups(v, h, n, groups, d);
    free(h);
    free(digest);
    free(groups);
    free(buf);
    return rc;
}

/* Under the tree lock (a render): the packages compared, once, when /info or
 * duplicates.csv is first measured; the notes go to /info's warnings. NULL when out of
 * memory: nothing is kept, the next render compares again (or, refused a note's
 * warning, gives the notes not given yet). */
static struct dups *dups_make(struct folder_view *v)
{
    struct dups *d = &v->dups;
    if (!d->done) {
        if (compute_duplicates(v)) {
            for (size_t i = d->given; i < d->nnotes; i++)
                free(d->notes[i]);
            d->nnotes = d->given; /* notes said already stay said */
            return NULL;
        }
        d->done = true;
        tree_touch(v->fs->tree);
    }
    for (; d->given < d->nnotes; d->given++) {
        struct diag_mark m = diag_mark(&v->fs->diag);
        if (diag_add(&v->fs->diag, "%s", d->notes[d->given])) {
            diag_rollback(&v->fs->diag, m); /* not counted as dropped: the next render gives it */
            return NULL;                    /* this render fails (ENOMEM), never /info short of it */
        }
    }
    return d;
}

static void dups_free(struct dups *d)
{
    free(d->csv);
    for (size_t i = 0; i < d->nnotes; i++)
        free(d->notes[i]);
    free(d->notes);
}

static void render_duplicates(struct tree *t, void *ctx, struct sbuf *out)
{
    (void)t;
    struct dups *d = dups_make(ctx);
    if (d)
        sb_put(out, d->csv, d->len);
    else
        out->oom = 1;
}

/* /info's identical_packages: exact (the packages in duplicates.csv's groups), made when
 * /info is first measured; a stat of /info reads only packages that size, index and ends
 * cannot tell from another (in a folder without duplicates, none whole). */
static void identical_line(struct folder_view *v, struct sbuf *out)
{
    struct dups *d = dups_make(v);
    if (d)
        sb_printf(out, "identical_packages: %zu\n", d->identical);
    else
        out->oom = 1;
}

static void render_info(struct tree *t, void *ctx, struct sbuf *out)
{
    struct folder_view *v = ctx;
    struct s3fs *fs = v->fs;
    sb_printf(out, "format: folder\nfolder: %s\n", v->root);
    if (v->has_cfg)
        sb_printf(out, "rules: Resource.cfg (%zu globs)\n", v->rules.nglobs);
    else
        sb_printf(out, "rules: every package (no Resource.cfg)\n");
    sb_printf(out, "packages: %zu\nscripts: %zu\nresources: %" PRIu64 "\nkeys: %zu\nconflicts: %zu\n",
              v->npackages, v->nscripts, v->resources, v->ks.nkeys, v->nconflicts);
    sb_printf(out, "script_conflicts: %zu\n", v->nmconf);
    identical_line(v, out);
    sb_printf(out, "skipped: %zu\n", v->nskips);
    for (const struct view_hook *h = fs->info_hooks.first; h; h = h->next) /* a watch's generations */
        ((view_info_fn *)h->fn)(fs, out, h->ctx);
    struct sbuf tree_lines = {0};
    size_t nwarn = fs->diag.n + fs->diag.dropped + tree_view_warnings(t, 0, &tree_lines);
    sb_printf(out, "warnings: %zu\n", nwarn);
    if (tree_lines.len)
        sb_put(out, tree_lines.p, tree_lines.len);
    sb_free(&tree_lines);
    for (size_t i = 0; i < fs->diag.n; i++)
        sb_printf(out, "warning: %s\n", fs->diag.msg[i]);
    if (fs->diag.dropped)
        sb_printf(out, "warning: %zu more warnings not shown\n", fs->diag.dropped);
}

static enum s3_err add_text(struct tree *t, uint32_t dir, const char *name, struct sbuf *b)
{
    size_t len;
    char *text = b->oom ? NULL : sb_take(b, &len);
    sb_free(b);
    if (!text)
        return S3_ERR_NOMEM;
    return added(t, tree_add_text(t, dir, name, "text", text, len));
}

static enum s3_err populate_root(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    struct folder_view *v = ctx;
    enum s3_err rc = scan(v);
    for (size_t i = 0; rc == S3_OK && i < v->nnotes; i++)
        rc = diag_add(&v->fs->diag, "%s", v->notes[i]); /* NOMEM: the listing fails, its retry warns */
    if (rc)
        return rc;
    struct sbuf order = {0}, skipped = {0};
    for (size_t i = 0; i < v->nfiles; i++) {
        if (v->files[i].script)
            sb_printf(&order, "-\t%s\n", v->files[i].rel);
        else
            sb_printf(&order, "%" PRId32 "\t%s\n", v->files[i].priority, v->files[i].rel);
    }
    for (size_t i = 0; i < v->nskips; i++)
        sb_printf(&skipped, "%s\t%s\n", v->skips[i].rel, v->skips[i].why);
    rc = added(t, tree_add_volatile(t, dir, "info", "info", render_info, v));
    if (rc == S3_OK)
        rc = add_text(t, dir, "load-order", &order);
    if (rc == S3_OK)
        rc = add_text(t, dir, "skipped", &skipped);
    sb_free(&order);
    sb_free(&skipped);
    if (rc)
        return rc;
    v->files_dir = tree_add_dir(t, dir, "files", "folder.files", populate_files, v, 0);
    v->keys_dir = tree_add_dir(t, dir, "keys", "folder.keys", populate_keys, v, 0);
    if ((rc = added(t, v->files_dir)) || (rc = added(t, v->keys_dir)))
        return rc;
    if ((rc = added(t, tree_add_dir(t, dir, "conflicts", "folder.conflicts", populate_conflicts, v, 0))) ||
        (rc = added(t, tree_add_volatile(t, dir, "conflicts.csv", "csv", render_conflicts_csv, v))) ||
        (rc = added(t, tree_add_dir(t, dir, "script-conflicts", "folder.script_conflicts", populate_script_conflicts,
                                    v, 0))) ||
        (rc = added(t, tree_add_volatile(t, dir, "duplicates.csv", "csv", render_duplicates, v))))
        return rc;
    uint32_t by_type = tree_add_dir(t, dir, "by-type", "folder.by_type", populate_by_type, v, 0);
    return added(t, by_type);
}

static void folder_view_free(void *p)
{
    struct folder_view *v = p;
    scan_forget(v);
    if (v->handles)
        handles_close(v);
    free(v->handles);
    dups_free(&v->dups);
    free(v->root);
    free(v);
}

enum s3_err folder_view_open(struct s3fs *fs, const char *path, char *err, size_t errlen)
{
    struct folder_view *v = calloc(1, sizeof *v);
    if (!v || !(v->root = strdup(path)) || !(v->handles = alloc_array(HANDLES, sizeof *v->handles)) ||
        tree_on_free(fs->tree, folder_view_free, v)) {
        if (v) {
            free(v->root);
            free(v->handles);
        }
        free(v);
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    }
    v->fs = fs; /* from here v is the tree's to free */
    enum s3_err e = tree_gen_item(read_member, member_item);
    if (e)
        return s3_fail(e, err, errlen, "the table of generated files' items is full");
    return view_root(fs, "folder", populate_root, v);
}
