/* The libfuse low-level adapter. Contracts it relies on (see tree.h and cache.h):
 *
 * Inodes. A FUSE inode number is the tree's node number (the root is 1, FUSE_ROOT_ID).
 * Nodes are never freed or renumbered while their tree lives, so a number the kernel
 * holds stays valid whatever its lookup count, and the generation is always 1. node_of()
 * converts and range-checks every number the kernel sends. With generations (below) the
 * lookup counts are kept per generation (.forget), as they keep an older one alive.
 *
 * Threads. How requests are run depends on -o spin and -s (s3_fuse_run):
 *   spin=US > 0 (the default, 50): one thread, spin_loop below, one request at a time;
 *   spin=0 with -s: one thread, libfuse's fuse_session_loop;
 *   spin=0 without -s: libfuse's fuse_session_loop_mt, so any operation may run on any
 *     of its worker threads at the same time as any other.
 * op_init runs before the first request in every mode. The adapter itself holds only the
 * list of open /info snapshots (a->lock); the tree serialises its own growth (tree.h):
 * lookups, listings and stats of populated directories and reads of file bytes take no
 * lock and run in parallel; only the first listing or lookup of a directory (its
 * populate) takes the tree lock. The adapter reads the tree only through tree.h's
 * accessors (the tree is opaque).
 *
 * -o rw (rw.h). Each commit makes a new tree (a generation). A FUSE inode number is the
 * generation's epoch << 32 | the node number (the root is always 1, the current tree's),
 * so generation 0 numbers as before. A number of an older generation still names what is
 * at its path now: every request on it is answered from the current tree's node at the
 * same path (ESTALE when there is none), with attributes the kernel may not keep. A
 * lookup under an older generation's directory gives that generation's own child
 * (old_generation_child), and its listing gives names alone: a directory's number is
 * never given under two parents, which the kernel answers with ESTALE. Files
 * are opened without the kernel's page cache (direct_io), so a reader holding one open
 * across a commit reads the new version. After each commit a thread of ours tells the
 * kernel to forget the root's entries (not the request's own thread: the kernel may hold
 * a directory's lock while it waits for us), and the committing FLUSH, FSYNC or RENAME
 * (sed -i) is answered by that thread once it has (reply_when_told), so that path walks
 * after the close or rename see the new tree; a RENAME in the root or in an older tree's
 * directory is answered at once, and a RENAME's wait is bounded (op_rename says why);
 * nobody waits for a RELEASE, which does not wait either (ask_notifier). Pending
 * edits are not shown before they are committed: a commit runs at fsync, at every close
 * of a written file (FLUSH, whose error close(2) returns) and at unmount.
 *
 * A folder mount with -o watch uses the same generations (a->gens): a change the watch
 * sees (watch.h) marks the current one stale as a commit does, and the notifier opens the
 * folder again and tells the kernel.
 *
 * Freeing generations. Every request holds the generations it uses from its first use to
 * its end (gen_now and node_of keep them on the thread's list, `held`; each operation in
 * the table is wrapped by HELD_OP, which lets go of them after the reply); an open handle
 * holds the one it was opened in; the kernel's lookups of a generation's inode numbers
 * (entries of LOOKUP and READDIRPLUS, counted before the reply; FORGET) hold it too. An
 * older generation is freed when the last of these lets go (rw.h), so after a commit or a
 * rescan the old tree and its package fds go once the kernel, told to forget the old
 * paths by the notifier, has forgotten them and no request or handle uses it. */
#define FUSE_USE_VERSION 35
#include "fs/cmd/fuse_ll.h"

#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>

#include "fs/cmd/rw.h"
#include "fs/cmd/watch.h"
#include "parse/base/err.h"

/* A node never changes while mounted (with -o rw a commit makes a new tree, whose nodes
 * have other numbers): let the kernel cache names and attributes. */
#define CACHE_TIMEOUT 86400.0
/* But a directory not listed yet has st_nlink 1 ("unknown"), 2 + its subdirectories once
 * it is: the kernel keeps such attributes only this long, so a stat a moment after the
 * first listing shows the count. Not 0, and no invalidation at populate: with
 * default_permissions every step through a directory needs valid attributes, and a walk
 * (find -ls) would pay a GETATTR round trip per directory; a second, only for the
 * directories it reaches a second after their parent's listing. */
#define UNLISTED_DIR_TIMEOUT 1.0

/* An open file's handle (fi->fh): a reader's copy of a volatile file (text), or what
 * tree_hold keeps for a file of expanded bytes, so its reads expand it once whatever the
 * cache's size (hold). Kept on a list: after a lazy unmount the kernel sends no RELEASE
 * for files still open, and they are freed at shutdown instead. */
struct snapshot {
    char *text;
    size_t len;
    struct tree_hold *hold;
    struct snapshot *prev, *next;
    fuse_ino_t fino;  /* -o rw: what it was opened as */
    uint32_t epoch;   /* the generation it was opened in */
    uint32_t ino;     /* its node there */
    bool writer;      /* opened for writing */
    bool dirty;       /* written (or truncated) since the last flush */
    struct rw_gen *gen; /* with generations: the one it was opened in, held (its hold) */
    bool bad;         /* a write was refused: the flush refuses too */
    bool whole_bytes; /* RW_BYTES opened with O_TRUNC (cp): the new bytes, in buf, all */
    struct rw_target w;
    char *buf;        /* RW_VALUE: the text being written */
    size_t blen, bcap;
    int scratch;      /* a whole replacement: fd + 1 of the unlinked file holding the new
                       * content (its first blen bytes), so its size costs no memory */
};

/* -o rw: a file an editor made beside a writable one, to rename over it (sed -i). It
 * exists only in the mount: its bytes in memory up to TEMP_MEM_MAX, past that in an
 * unlinked scratch file beside the source (so memory stays small whatever the editor
 * writes); renamed over a writable file it becomes that file's new content (committed at
 * once) and its number then names that file's path (moved_to). */
struct tempfile {
    uint32_t id;
    char *dir;   /* its directory's path */
    char *name;
    size_t len;  /* its size */
    char *data;  /* in memory: its bytes (cap allocated) */
    size_t cap;
    int fd;      /* fd + 1 of its scratch file, which holds its len bytes (0: in memory) */
    char *moved_to; /* after the rename: the path its number stands for */
    struct tempfile *next;
};

/* Temporaries' numbers: an epoch no tree reaches. */
#define TEMP_EPOCH 0xFFFFFFFFu
/* The largest temporary: what replaces a value or a byte range, not a whole package. */
#define TEMP_MAX (64ull << 20)
/* A temporary larger than this goes to a scratch file (a value's text is far smaller). */
#define TEMP_MEM_MAX (64u << 10)

/* A committing FLUSH, FSYNC or RENAME whose reply (success) the notifier sends once the
 * kernel was told of the new tree (told >= mine): reply_when_told. A RENAME's is sent by
 * the late replier at its deadline if the notifier has not told the kernel by then. */
struct told_wait {
    fuse_req_t req;
    uint64_t mine;
    uint64_t deadline; /* CLOCK_MONOTONIC ns; 0: none (a FLUSH's or FSYNC's) */
    struct told_wait *next;
};

struct adapter {
    char *src_path;  /* the source's path (generation 0 may be freed) */
    struct s3_fuse_config cfg;
    bool no_opendir; /* the kernel skips OPENDIR/RELEASEDIR once we answer ENOSYS */
    pthread_mutex_t lock;
    struct snapshot *open;
    struct rw_gen gen0; /* without generations (no -o rw, no watch): the one there is */
    bool gens;          /* generations in a->rw: -o rw, or a watched folder */
    struct folder_watch *watch;
    /* -o rw */
    struct rw rw;
    struct fuse_session *se;
    pthread_t notifier, late;
    bool notifier_started, late_started, stopping;
    pthread_mutex_t nmu;
    pthread_cond_t ncv;
    uint32_t notified; /* the epoch the kernel was last told about */
    uint64_t asked, done; /* commits to tell the kernel about, and told (under nmu) */
    uint64_t told;        /* of those, how many had the root's entries dropped (under nmu) */
    fuse_ino_t *stale;    /* numbers of older trees whose entries the kernel is to drop */
    size_t nstale, capstale; /* (under nmu; forget_later) */
    struct told_wait *waiting; /* replies sent once the kernel is told (under nmu) */
    pthread_cond_t late_cv;    /* (CLOCK_MONOTONIC) a wait with a deadline joined `waiting` */
    /* temporaries' renames from their arrival to their reply (under nmu): meanwhile the
     * notifier drops no older tree's entry below the root (op_rename), and owes it */
    unsigned renames;
    bool sweep_owed;
    /* held (read) by a LOOKUP or READDIRPLUS from its choice of generation to its reply;
     * forget_root takes it (write) before it tells the kernel: an entry of the tree before
     * reaches the kernel before the notification that drops it, never after */
    pthread_rwlock_t answering;
    pthread_mutex_t tmu; /* temps */
    struct tempfile *temps;
    uint32_t ntemps_made;
};

/* s joins the open list, holding generation g (with generations) for its life. */
static void snapshot_link(struct adapter *a, struct snapshot *s, struct rw_gen *g)
{
    if (a->gens) {
        rw_hold(&a->rw, g);
        s->gen = g;
    }
    pthread_mutex_lock(&a->lock);
    s->prev = NULL;
    s->next = a->open;
    if (a->open)
        a->open->prev = s;
    a->open = s;
    pthread_mutex_unlock(&a->lock);
}

static void snapshot_free(struct adapter *a, struct snapshot *s)
{
    pthread_mutex_lock(&a->lock);
    if (s->prev)
        s->prev->next = s->next;
    else
        a->open = s->next;
    if (s->next)
        s->next->prev = s->prev;
    pthread_mutex_unlock(&a->lock);
    tree_release(s->hold);
    if (s->scratch)
        close(s->scratch - 1);
    if (s->gen)
        rw_release(&a->rw, s->gen); /* after its hold: that was the generation's tree's */
    free(s->text);
    free(s->buf);
    free(s);
}

static struct adapter *adapter_of(fuse_req_t req)
{
    return fuse_req_userdata(req);
}

/* The generations the request running on this thread holds (freed after its reply by
 * held_release; see "Freeing generations"). A generation is held once whatever the number
 * of uses; more than HELD_MAX different ones in one request cannot happen (a request uses
 * the current one and at most the one a number names), and would only keep one alive. */
#define HELD_MAX 8
static __thread struct {
    struct rw *rw;
    struct rw_gen *g[HELD_MAX];
    unsigned n;
} held;

static struct rw_gen *held_keep(struct rw *rw, struct rw_gen *g)
{
    for (unsigned k = 0; k < held.n; k++)
        if (held.g[k] == g) {
            rw_release(rw, g); /* held already */
            return g;
        }
    if (held.n < HELD_MAX) {
        held.rw = rw;
        held.g[held.n++] = g;
    }
    return g;
}

static void held_release(void)
{
    for (unsigned k = 0; k < held.n; k++)
        rw_release(held.rw, held.g[k]);
    held.n = 0;
}

/* The current generation, held until the request ends (taken once per request: a commit
 * may make another meanwhile). */
static struct rw_gen *gen_now(struct adapter *a)
{
    return a->gens ? held_keep(&a->rw, rw_acquire(&a->rw)) : &a->gen0;
}

/* An entry of an older generation the kernel may keep after the notifier told it to
 * forget that tree (the file was open then, so its entry stayed, or a lookup answered
 * from the tree before crossed the notification): the notifier drops it, so the kernel's
 * lookups of that generation end and it can be freed. Dropped when out of memory (the
 * generation then lives until the kernel forgets by itself). */
static void forget_later(struct adapter *a, fuse_ino_t fino)
{
    uint32_t epoch = (uint32_t)(fino >> 32);
    if (!a->gens || fino == FUSE_ROOT_ID || epoch == TEMP_EPOCH || epoch == rw_epoch(&a->rw))
        return;
    pthread_mutex_lock(&a->nmu);
    if (a->nstale == a->capstale) {
        size_t cap = a->capstale ? 2 * a->capstale : 16;
        fuse_ino_t *n = realloc(a->stale, cap * sizeof *n);
        if (n) {
            a->stale = n;
            a->capstale = cap;
        }
    }
    if (a->nstale < a->capstale) {
        a->stale[a->nstale++] = fino;
        pthread_cond_broadcast(&a->ncv);
    }
    pthread_mutex_unlock(&a->nmu);
}

/* The kernel keeps one more lookup of node ino of g (a reply made from it; never the
 * root's, which is always the current tree's). */
static void count_lookup(struct adapter *a, struct rw_gen *g, uint32_t ino)
{
    if (a->gens && ino != TREE_ROOT)
        rw_lookup(&a->rw, g, ino);
}

/* The FUSE number of node ino of generation g. */
static fuse_ino_t fuse_ino(const struct rw_gen *g, uint32_t ino)
{
    return ino == TREE_ROOT ? FUSE_ROOT_ID : ((fuse_ino_t)g->epoch << 32) | ino;
}

/* tree_kind as node_of_moved answers: the kind, or -ENOENT for no node. */
static int kind_or_enoent(struct tree *t, uint32_t ino)
{
    enum node_type k = tree_kind(t, ino);
    return k == NODE_NONE ? -ENOENT : (int)k;
}

/* The kind (enum node_type) of the node a FUSE inode number names, with the generation
 * (*g, the current one) and its node number there (*ino); -ENOENT when there is none,
 * -ESTALE for a number of an older generation whose path names nothing (or something
 * of another kind) now (*moved: it was of an older one). Every number the kernel sends
 * came from one of our replies, but a 64-bit fuse_ino_t is checked, never truncated
 * into some other node's number. */
static int node_of_moved(fuse_req_t req, fuse_ino_t fino, struct rw_gen **g, uint32_t *ino, bool *moved)
{
    struct adapter *a = adapter_of(req);
    struct rw_gen *cur = gen_now(a);
    *g = cur;
    *moved = false;
    if (fino == FUSE_ROOT_ID) {
        *ino = TREE_ROOT;
        return kind_or_enoent(cur->fs->tree, TREE_ROOT);
    }
    uint32_t low = (uint32_t)fino, epoch = (uint32_t)(fino >> 32);
    if (low == 0)
        return -ENOENT;
    if (epoch == cur->epoch) {
        *ino = low;
        return kind_or_enoent(cur->fs->tree, low);
    }
    if (epoch == TEMP_EPOCH && a->cfg.rw) {
        /* a temporary renamed over a file: that file's path now */
        char *path = NULL;
        pthread_mutex_lock(&a->tmu);
        for (struct tempfile *t = a->temps; t; t = t->next)
            if (t->id == low && t->moved_to)
                path = strdup(t->moved_to);
        pthread_mutex_unlock(&a->tmu);
        if (!path)
            return -ENOENT;
        enum s3_err rc = tree_resolve(cur->fs->tree, path, ino);
        free(path);
        *moved = true;
        return rc ? -ESTALE : kind_or_enoent(cur->fs->tree, *ino);
    }
    struct rw_gen *old = a->gens ? rw_acquire_epoch(&a->rw, epoch) : NULL;
    if (old)
        held_keep(&a->rw, old);
    int was = old ? kind_or_enoent(old->fs->tree, low) : -ENOENT;
    if (was < 0)
        return -ENOENT;
    char *path = rw_path(old->fs->tree, low);
    if (!path)
        return -ENOMEM;
    enum s3_err rc = tree_resolve(cur->fs->tree, path, ino);
    free(path);
    *moved = true;
    int kind = rc ? -ESTALE : kind_or_enoent(cur->fs->tree, *ino);
    return kind == was ? kind : -ESTALE;
}

static int node_of(fuse_req_t req, fuse_ino_t fino, struct rw_gen **g, uint32_t *ino)
{
    bool moved;
    return node_of_moved(req, fino, g, ino, &moved);
}

static void reply_kind_err(fuse_req_t req, int kind)
{
    fuse_reply_err(req, kind == -ESTALE || kind == -ENOMEM ? -kind : ENOENT);
}

/* The preamble of an operation on one node: the node a request names (node_of_moved:
 * generation, number, kind, moved), or false once its error is replied (no such node, a
 * stale number, no memory). */
static bool node_or_reply(fuse_req_t req, fuse_ino_t fino, struct rw_gen **g, uint32_t *ino, int *kind, bool *moved)
{
    *kind = node_of_moved(req, fino, g, ino, moved);
    if (*kind >= 0)
        return true;
    reply_kind_err(req, *kind);
    return false;
}

static void fill_stat(struct adapter *a, struct rw_gen *g, uint32_t ino, int kind, struct stat *st)
{
    memset(st, 0, sizeof *st);
    struct s3fs *fs = g->fs;
    uint64_t size = tree_size(fs->tree, ino); /* volatile files are measured */
    st->st_ino = fuse_ino(g, ino);
    st->st_uid = a->cfg.uid;
    st->st_gid = a->cfg.gid;
    st->st_size = (off_t)size;
    st->st_blksize = 4096;
    st->st_blocks = (blkcnt_t)((size + 511) / 512);
    st->st_atim = st->st_mtim = st->st_ctim = fs->src.st.st_mtim;
    st->st_nlink = tree_nlink(fs->tree, ino);
    switch (kind) {
    case NODE_DIR:
        st->st_mode = S_IFDIR | (0555 & ~a->cfg.umask);
        break;
    case NODE_LINK:
        st->st_mode = S_IFLNK | 0777;
        break;
    default: {
        /* -o rw: the mode bits say what is writable */
        struct rw_target w;
        bool writable = a->cfg.rw && rw_target(&a->rw, g, ino, &w);
        st->st_mode = S_IFREG | ((writable ? 0644 : 0444) & ~a->cfg.umask);
    }
    }
}

/* How long the kernel may keep a node's attributes. */
static double attr_timeout(const struct rw_gen *g, uint32_t ino)
{
    struct tree *t = g->fs->tree;
    if (tree_is_volatile(t, ino))
        return 0;
    if (tree_kind(t, ino) == NODE_DIR && !tree_is_populated(t, ino))
        return UNLISTED_DIR_TIMEOUT;
    return CACHE_TIMEOUT;
}

static void fill_entry(struct adapter *a, struct rw_gen *g, uint32_t ino, struct fuse_entry_param *e)
{
    memset(e, 0, sizeof *e);
    e->ino = fuse_ino(g, ino);
    e->generation = 1;
    e->attr_timeout = attr_timeout(g, ino);
    e->entry_timeout = CACHE_TIMEOUT;
    fill_stat(a, g, ino, tree_kind(g->fs->tree, ino), &e->attr);
}

/* ---- -o rw: temporaries (sed -i) ---- */

static fuse_ino_t temp_ino(const struct tempfile *t)
{
    return ((fuse_ino_t)TEMP_EPOCH << 32) | t->id;
}

/* Whether any temporary exists (a hint, read without the lock: lookups skip the list). */
static bool any_temps(struct adapter *a)
{
    return __atomic_load_n(&a->temps, __ATOMIC_ACQUIRE) != NULL;
}

/* The temporary (not yet renamed) a number names; call under a->tmu. */
static struct tempfile *temp_by_ino(struct adapter *a, fuse_ino_t fino)
{
    if (!a->cfg.rw || (uint32_t)(fino >> 32) != TEMP_EPOCH)
        return NULL;
    for (struct tempfile *t = a->temps; t; t = t->next)
        if (t->id == (uint32_t)fino && !t->moved_to)
            return t;
    return NULL;
}

/* The path of directory fino in the current tree (malloc'd), or NULL. */
static char *dir_path(fuse_req_t req, fuse_ino_t fino)
{
    struct rw_gen *g;
    uint32_t dir;
    if (node_of(req, fino, &g, &dir) != NODE_DIR)
        return NULL;
    return rw_path(g->fs->tree, dir);
}

/* The temporary named name in directory path dir; under a->tmu. */
static struct tempfile *temp_by_name(struct adapter *a, const char *dir, const char *name)
{
    for (struct tempfile *t = a->temps; t; t = t->next)
        if (!t->moved_to && strcmp(t->dir, dir) == 0 && strcmp(t->name, name) == 0)
            return t;
    return NULL;
}

static void temp_stat(const struct adapter *a, const struct tempfile *t, struct stat *st)
{
    memset(st, 0, sizeof *st);
    st->st_ino = temp_ino(t);
    st->st_mode = S_IFREG | (0644 & ~a->cfg.umask);
    st->st_nlink = 1;
    st->st_uid = a->cfg.uid;
    st->st_gid = a->cfg.gid;
    st->st_size = (off_t)t->len;
    st->st_blksize = 4096;
}

static void temp_entry(const struct adapter *a, const struct tempfile *t, struct fuse_entry_param *e)
{
    memset(e, 0, sizeof *e);
    e->ino = temp_ino(t);
    e->generation = 1;
    temp_stat(a, t, &e->attr);
}

/* /info's count of the temporaries' bytes and those held in memory; under a->tmu. */
static void note_temps(struct adapter *a)
{
    uint64_t bytes = 0, in_mem = 0;
    for (struct tempfile *t = a->temps; t; t = t->next) {
        bytes += t->len;
        in_mem += t->cap;
    }
    rw_note_temps(&a->rw, bytes, in_mem);
}

static void temp_unlink(struct adapter *a, struct tempfile *dead)
{
    for (struct tempfile **p = &a->temps; *p; p = &(*p)->next)
        if (*p == dead) {
            __atomic_store_n(p, dead->next, __ATOMIC_RELEASE);
            break;
        }
    free(dead->dir);
    free(dead->name);
    free(dead->data);
    if (dead->fd)
        close(dead->fd - 1);
    free(dead->moved_to);
    free(dead);
}

/* The temporary's bytes from now on in a scratch file beside the source (what it held in
 * memory moved there): 0 or an errno; under a->tmu. */
static int temp_spill(struct adapter *a, struct tempfile *t)
{
    int fd;
    enum s3_err made = edits_scratch(a->rw.lock->dirfd, &fd);
    if (made)
        return s3_err_errno(made);
    ssize_t put = t->len ? pwrite(fd, t->data, t->len, 0) : 0;
    if (put != (ssize_t)t->len) {
        int err = put < 0 ? errno : EIO;
        close(fd);
        return err;
    }
    free(t->data);
    t->data = NULL;
    t->cap = 0;
    t->fd = fd + 1;
    return 0;
}

/* The temporary at size `size` (zeros past its end): 0 or an errno; under a->tmu. */
static int temp_resize(struct adapter *a, struct tempfile *t, size_t size)
{
    int err = !t->fd && size > TEMP_MEM_MAX ? temp_spill(a, t) : 0;
    if (err)
        return err;
    if (t->fd)
        return ftruncate(t->fd - 1, (off_t)size) == 0 ? 0 : errno;
    if (size > t->cap) {
        size_t cap = size > 2 * t->cap ? size : 2 * t->cap;
        cap = cap < TEMP_MEM_MAX ? cap : TEMP_MEM_MAX; /* size is at most that */
        char *n = realloc(t->data, cap);
        if (!n)
            return ENOMEM;
        t->data = n;
        t->cap = cap;
    }
    if (size > t->len)
        memset(t->data + t->len, 0, size - t->len);
    return 0;
}

/* Bytes [off, off+size) of the temporary written: 0 or an errno; under a->tmu. */
static int temp_write(struct adapter *a, struct tempfile *t, const char *data, size_t size, uint64_t off)
{
    if (off > TEMP_MAX || size > TEMP_MAX - off)
        return EFBIG;
    size_t end = (size_t)off + size;
    int err = end > t->len ? temp_resize(a, t, end) : 0;
    if (err)
        return err;
    if (t->fd) {
        ssize_t put = pwrite(t->fd - 1, data, size, (off_t)off);
        if (put != (ssize_t)size)
            return put < 0 ? errno : EIO;
    } else {
        memcpy(t->data + off, data, size);
    }
    if (end > t->len)
        t->len = end;
    return 0;
}

/* Up to n of the temporary's bytes from off into buf: the count, or -errno; under
 * a->tmu. */
static ssize_t temp_read(const struct tempfile *t, char *buf, size_t n, uint64_t off)
{
    size_t k = off < t->len ? t->len - (size_t)off : 0;
    k = k < n ? k : n;
    if (!k)
        return 0;
    if (!t->fd) {
        memcpy(buf, t->data + off, k);
        return (ssize_t)k;
    }
    for (size_t done = 0; done < k;) {
        ssize_t got = pread(t->fd - 1, buf + done, k - done, (off_t)(off + done));
        if (got <= 0)
            return got < 0 ? -errno : -EIO;
        done += (size_t)got;
    }
    return (ssize_t)k;
}

/* A directory where an editor may make a temporary: one holding a writable file. */
static bool dir_has_writable(struct adapter *a, struct rw_gen *g, uint32_t dir)
{
    struct tree *t = g->fs->tree;
    if (tree_populate(t, dir))
        return false;
    uint32_t n = tree_child_count(t, dir);
    struct rw_target w;
    for (uint32_t i = 0; i < n; i++)
        if (rw_target(&a->rw, g, tree_child(t, dir, i), &w))
            return true;
    return false;
}

static void op_init(void *userdata, struct fuse_conn_info *conn)
{
    struct adapter *a = userdata;
    /* Two fewer round trips per directory: listing needs no open handle. */
    if (conn->capable & FUSE_CAP_NO_OPENDIR_SUPPORT) {
        conn->want |= FUSE_CAP_NO_OPENDIR_SUPPORT;
        a->no_opendir = true;
    }
    if (conn->capable & FUSE_CAP_SPLICE_WRITE)
        conn->want |= FUSE_CAP_SPLICE_WRITE | FUSE_CAP_SPLICE_MOVE;
    /* Bigger requests for big leaves: libfuse derives the kernel's max_pages (and so the
     * largest READ) from max_write; readahead follows. */
    conn->max_write = 1u << 20;
    conn->max_readahead = 1u << 20;
    conn->want &= ~(unsigned)FUSE_CAP_READDIRPLUS_AUTO; /* always send attributes with names */
    /* -o rw: writes reach us as they are made (no writeback cache), so every error is
     * the writer's */
    conn->want &= ~(unsigned)FUSE_CAP_WRITEBACK_CACHE;
}

/* A lookup under a directory number of an older generation (a walk that crossed a commit,
 * a working directory or a directory fd kept from before one): the number it gives is
 * that generation's own child of the same name and kind (*og, *oino), never the current
 * tree's node. The kernel keeps one dentry per directory inode: a current directory given
 * under an old parent, and again under its current parent by a fresh walk, is moved
 * between the two by the kernel (d_splice_alias), which fails with ESTALE when it cannot
 * take the locks; that was the fresh open's ESTALE after a commit. An old number names
 * what is at its path now (node_of_moved), so the files read the same. 1: *og, *oino
 * set (*og held for the request); 0: the current node's number will do (a file, which may
 * have many dentries); -ESTALE: a directory that has no such place in the old tree;
 * -ENOMEM. */
static int old_generation_child(struct adapter *a, fuse_ino_t parent, const char *name, const struct rw_gen *cur,
                                uint32_t ino, struct rw_gen **og, uint32_t *oino)
{
    uint32_t epoch = (uint32_t)(parent >> 32);
    if (!a->gens || parent == FUSE_ROOT_ID || epoch == TEMP_EPOCH || epoch == cur->epoch)
        return 0;
    enum node_type want = tree_kind(cur->fs->tree, ino);
    struct rw_gen *old = rw_acquire_epoch(&a->rw, epoch);
    if (!old)
        return want == NODE_DIR ? -ESTALE : 0;
    held_keep(&a->rw, old);
    uint32_t c;
    enum s3_err rc = tree_lookup(old->fs->tree, (uint32_t)parent, name, &c);
    if (rc == S3_ERR_NOMEM)
        return -ENOMEM;
    if (rc == S3_OK && tree_kind(old->fs->tree, c) == want) {
        *og = old;
        *oino = c;
        return 1;
    }
    return want == NODE_DIR ? -ESTALE : 0;
}

static void do_lookup(fuse_req_t req, fuse_ino_t parent, const char *name);

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
    struct adapter *a = adapter_of(req);
    if (a->gens)
        pthread_rwlock_rdlock(&a->answering);
    do_lookup(req, parent, name);
    if (a->gens)
        pthread_rwlock_unlock(&a->answering);
}

static void do_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
    struct adapter *a = adapter_of(req);
    struct rw_gen *g;
    uint32_t dir, ino;
    int kind = node_of(req, parent, &g, &dir);
    if (kind < 0) {
        reply_kind_err(req, kind);
        return;
    }
    enum s3_err rc = tree_lookup(g->fs->tree, dir, name, &ino);
    if (rc == S3_ERR_NOT_FOUND && a->cfg.rw && any_temps(a)) {
        char *path = rw_path(g->fs->tree, dir);
        pthread_mutex_lock(&a->tmu);
        struct tempfile *t = path ? temp_by_name(a, path, name) : NULL;
        struct fuse_entry_param e;
        if (t)
            temp_entry(a, t, &e);
        pthread_mutex_unlock(&a->tmu);
        free(path);
        if (t) {
            fuse_reply_entry(req, &e);
            return;
        }
    }
    if (rc == S3_ERR_NOT_FOUND) {
        /* A negative entry the kernel may cache as long as the positive ones. */
        struct fuse_entry_param e = {.ino = 0, .entry_timeout = CACHE_TIMEOUT};
        fuse_reply_entry(req, &e);
        return;
    }
    if (rc) {
        fuse_reply_err(req, s3_err_errno(rc));
        return;
    }
    struct fuse_entry_param e;
    fill_entry(a, g, ino, &e);
    struct rw_gen *og;
    uint32_t oino;
    int in_old = old_generation_child(a, parent, name, g, ino, &og, &oino);
    if (in_old < 0) {
        fuse_reply_err(req, -in_old);
        return;
    }
    if (in_old) {
        /* the current node's attributes, under the old number (kept by no one: moved) */
        e.ino = e.attr.st_ino = fuse_ino(og, oino);
        e.attr_timeout = 0;
        count_lookup(a, og, oino);
    } else {
        count_lookup(a, g, ino);
    }
    fuse_reply_entry(req, &e);
    forget_later(a, e.ino); /* a commit came meanwhile: the entry is of an older tree */
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    (void)fi;
    struct adapter *a = adapter_of(req);
    struct stat st;
    struct tempfile *t = NULL;
    if (a->cfg.rw) {
        pthread_mutex_lock(&a->tmu);
        t = temp_by_ino(a, ino);
        if (t)
            temp_stat(a, t, &st);
        pthread_mutex_unlock(&a->tmu);
    }
    if (t) {
        fuse_reply_attr(req, &st, 0);
        return;
    }
    struct rw_gen *g;
    uint32_t i;
    int kind;
    bool moved;
    if (!node_or_reply(req, ino, &g, &i, &kind, &moved))
        return;
    fill_stat(a, g, i, kind, &st);
    st.st_ino = ino; /* the number the kernel asked about */
    fuse_reply_attr(req, &st, moved ? 0 : attr_timeout(g, i));
}

/* The writer handle open on a node (for a truncate by path), NULL when none. */
static struct snapshot *writer_on(struct adapter *a, fuse_ino_t fino)
{
    pthread_mutex_lock(&a->lock);
    struct snapshot *s = a->open;
    while (s && !(s->writer && s->fino == fino))
        s = s->next;
    pthread_mutex_unlock(&a->lock);
    return s;
}

/* A handle opened before a commit: its target again, from the current tree (the node at
 * its path; -ESTALE when that is no longer the same kind of writable bytes). */
static int handle_target(struct adapter *a, fuse_req_t req, struct snapshot *s)
{
    struct rw_gen *g = gen_now(a);
    if (s->epoch == g->epoch)
        return 0;
    uint32_t ino;
    struct rw_target w;
    if (node_of(req, s->fino, &g, &ino) != NODE_FILE || !rw_target(&a->rw, g, ino, &w) || w.kind != s->w.kind ||
        (w.len != s->w.len && !rw_whole(w.kind)))
        return -ESTALE;
    s->w = w;
    s->epoch = g->epoch;
    s->ino = ino;
    return 0;
}

static void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set, struct fuse_file_info *fi)
{
    struct adapter *a = adapter_of(req);
    if (!a->cfg.rw) {
        fuse_reply_err(req, EROFS);
        return;
    }
    pthread_mutex_lock(&a->tmu);
    struct tempfile *t = temp_by_ino(a, ino);
    int trc = 0;
    struct stat tst;
    if (t && (to_set & FUSE_SET_ATTR_SIZE)) {
        /* an editor's own file: any size (mode, owner and times are accepted as they are) */
        trc = (uint64_t)attr->st_size > TEMP_MAX ? EFBIG : temp_resize(a, t, (size_t)attr->st_size);
        if (!trc)
            t->len = (size_t)attr->st_size;
        note_temps(a);
    }
    if (t)
        temp_stat(a, t, &tst);
    pthread_mutex_unlock(&a->tmu);
    if (t) {
        if (trc)
            fuse_reply_err(req, trc);
        else
            fuse_reply_attr(req, &tst, 0);
        return;
    }
    struct rw_gen *g;
    uint32_t i;
    int kind = node_of(req, ino, &g, &i);
    struct rw_target w;
    if (kind < 0) {
        reply_kind_err(req, kind);
        return;
    }
    /* times are the file's (touch succeeds, and changes nothing); owner and mode are not
     * ours to change */
    if (kind != NODE_FILE || !rw_target(&a->rw, g, i, &w) || (to_set & (FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID |
                                                                         FUSE_SET_ATTR_GID))) {
        fuse_reply_err(req, kind == NODE_FILE && !(to_set & FUSE_SET_ATTR_SIZE) ? EPERM : EROFS);
        return;
    }
    struct stat st;
    fill_stat(a, g, i, kind, &st);
    st.st_ino = ino;
    if (to_set & FUSE_SET_ATTR_SIZE) {
        struct snapshot *s = fi ? (struct snapshot *)(uintptr_t)fi->fh : writer_on(a, ino);
        uint64_t size = (uint64_t)attr->st_size;
        if (w.kind == RW_BYTES && size != w.len) {
            fuse_reply_err(req, EPERM); /* a byte range has a fixed size */
            return;
        }
        if (w.kind == RW_VALUE || rw_whole(w.kind)) {
            /* the text being written (a shell's O_TRUNC): it only shrinks; a resource's
             * new content (truncate): any size up to the limit */
            pthread_mutex_lock(&a->rw.mu);
            bool ok = s && s->writer && (size <= s->blen || (rw_whole(w.kind) && size <= RW_RESOURCE_MAX));
            if (ok && s->scratch) {
                ok = ftruncate(s->scratch - 1, (off_t)size) == 0; /* its file: zeros past the end */
                if (ok) {
                    s->blen = (size_t)size;
                    s->dirty = true;
                }
            } else if (ok && size > s->bcap) {
                char *n = realloc(s->buf, (size_t)size);
                ok = n != NULL;
                if (n) {
                    s->buf = n;
                    s->bcap = (size_t)size;
                }
            }
            if (ok && !s->scratch) {
                if (size > s->blen)
                    memset(s->buf + s->blen, 0, (size_t)size - s->blen);
                s->blen = (size_t)size;
                s->dirty = true;
            }
            pthread_mutex_unlock(&a->rw.mu);
            if (!ok) {
                fuse_reply_err(req, EPERM);
                return;
            }
            st.st_size = (off_t)size;
        }
    }
    fuse_reply_attr(req, &st, 0);
}

static void op_readlink(fuse_req_t req, fuse_ino_t ino)
{
    struct rw_gen *g;
    uint32_t i;
    if (node_of(req, ino, &g, &i) != NODE_LINK) {
        fuse_reply_err(req, EINVAL);
        return;
    }
    fuse_reply_readlink(req, tree_link_target(g->fs->tree, i));
}

static void op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    if (adapter_of(req)->no_opendir) {
        fuse_reply_err(req, ENOSYS);
        return;
    }
    struct rw_gen *g;
    uint32_t i;
    int kind = node_of(req, ino, &g, &i);
    int rc = kind >= 0 ? -s3_err_errno(tree_populate(g->fs->tree, i)) : kind;
    if (rc) {
        fuse_reply_err(req, -rc);
        return;
    }
    fi->keep_cache = 1;
    fi->cache_readdir = 1;
    fuse_reply_open(req, fi);
}

/* A directory of more children than this (a Mods folder's /conflicts: 25,000) is
 * listed by READDIRPLUS as names alone (node id 0: the kernel makes no dentry and inode
 * per entry, which cost more than the listing; a later stat looks the entry up). So is
 * every volatile file: its attributes expire at once (attr_timeout 0), and measuring it
 * may cost (a folder's duplicates.csv hashes packages): a plain ls measures nothing. */
#define READDIR_BARE_ABOVE 4096u

/* The file type bits of a node kind (a bare entry's d_type). */
static mode_t kind_mode(int kind)
{
    return kind == NODE_DIR ? S_IFDIR : kind == NODE_LINK ? S_IFLNK : S_IFREG;
}

/* One readdir / readdirplus implementation: entries 0 "." 1 ".." then the children. */
static void do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, bool plus)
{
    struct adapter *a = adapter_of(req);
    struct rw_gen *g;
    uint32_t dino;
    bool moved;
    int kind = node_of_moved(req, ino, &g, &dino, &moved);
    struct tree *t = g->fs->tree;
    if (kind != NODE_DIR) {
        if (kind >= 0)
            fuse_reply_err(req, ENOTDIR);
        else
            reply_kind_err(req, kind);
        return;
    }
    enum s3_err rc = tree_populate(t, dino); /* no-op once populated */
    if (rc) {
        fuse_reply_err(req, s3_err_errno(rc));
        return;
    }
    char *buf = malloc(size);
    if (!buf) {
        fuse_reply_err(req, ENOMEM);
        return;
    }
    /* published: its children never change, and are read without a lock */
    uint32_t n = tree_child_count(t, dino);
    size_t used = 0;
    /* entries listed bare whatever they are: a computed directory's are not made for it */
    bool bare_all = !plus || moved || n > READDIR_BARE_ABOVE;
    char peeked[NAME_MAX + 1];
    for (uint64_t i = (uint64_t)off; i < 2ull + n; i++) {
        uint32_t cino = 0;
        int ckind = -1;
        const char *name = NULL;
        if (i >= 2 && bare_all)
            name = tree_child_peek(t, dino, (uint32_t)(i - 2), peeked, sizeof peeked, &cino, &ckind);
        if (!name) {
            cino = i == 0 ? dino : i == 1 ? tree_parent(t, dino) : tree_child(t, dino, (uint32_t)(i - 2));
            name = i == 0 ? "." : i == 1 ? ".." : tree_name(t, cino);
            ckind = (int)tree_kind(t, cino);
        }
        if (!name) { /* an entry of a computed directory that could not be made */
            if (used == 0) {
                free(buf);
                fuse_reply_err(req, ENOMEM);
                return;
            }
            break; /* what fits so far; the next call asks for it again */
        }
        struct fuse_entry_param e;
        /* plain READDIR reads the number and kind alone: nothing measured either */
        /* and in a directory of an older generation (moved), whose entries would give the
         * kernel current numbers under an old parent (old_generation_child): a later
         * lookup gives each the number it may have there */
        bool bare = !plus || (i >= 2 && (bare_all || tree_is_volatile(t, cino)));
        if (bare) { /* the name and its kind only: the kernel makes no entry of it */
            memset(&e, 0, sizeof e);
            e.attr.st_ino = fuse_ino(g, cino);
            e.attr.st_mode = kind_mode(ckind);
        } else {
            fill_entry(a, g, cino, &e);
        }
        size_t room = size - used, need;
        if (plus)
            need = fuse_add_direntry_plus(req, buf + used, room, name, &e, (off_t)(i + 1));
        else
            need = fuse_add_direntry(req, buf + used, room, name, &e.attr, (off_t)(i + 1));
        if (need > room)
            break;
        used += need;
        if (plus && i >= 2 && !bare) /* the kernel looks up every entry but . and .., bare ones not */
            count_lookup(a, g, cino);
    }
    fuse_reply_buf(req, buf, used);
    free(buf);
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
    (void)fi;
    do_readdir(req, ino, size, off, false);
}

static void op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
    (void)fi;
    struct adapter *a = adapter_of(req);
    if (a->gens)
        pthread_rwlock_rdlock(&a->answering);
    do_readdir(req, ino, size, off, true);
    if (a->gens)
        pthread_rwlock_unlock(&a->answering);
}

/* A whole replacement's handle: its content in an unlinked file beside the source (the
 * size of a resource is no memory of ours), holding the file's bytes now unless trunc.
 * 0 or -errno. */
static int scratch_open(struct adapter *a, struct rw_gen *g, uint32_t i, bool trunc, struct snapshot *s)
{
    int fd;
    enum s3_err made = edits_scratch(a->rw.lock->dirfd, &fd);
    if (made)
        return -s3_err_errno(made);
    s->scratch = fd + 1;
    uint64_t size = trunc ? 0 : tree_size(g->fs->tree, i);
    char *buf = size ? malloc(1u << 20) : NULL;
    int rc = size && !buf ? -ENOMEM : 0;
    for (uint64_t pos = 0; !rc && pos < size;) {
        size_t n = size - pos < (1u << 20) ? (size_t)(size - pos) : 1u << 20;
        size_t got = 0;
        enum s3_err e = tree_read(g->fs->tree, i, pos, buf, n, &got);
        if (e || got == 0)
            rc = e ? -s3_err_errno(e) : -EIO;
        else if (pwrite(fd, buf, got, (off_t)pos) != (ssize_t)got)
            rc = errno ? -errno : -EIO;
        pos += got;
    }
    free(buf);
    if (rc) {
        close(fd);
        s->scratch = 0;
        return rc;
    }
    s->blen = (size_t)size;
    return 0;
}

/* -o rw: a handle for writing node i (which rw_target says is writable): a value's
 * text starts as it is (a shell's O_TRUNC then empties it); bytes go straight to the
 * pending edits. No page cache: every write and read reaches us. */
static void open_writer(fuse_req_t req, fuse_ino_t fino, struct rw_gen *g, uint32_t i, const struct rw_target *w,
                        struct fuse_file_info *fi)
{
    struct adapter *a = adapter_of(req);
    bool trunc = fi->flags & O_TRUNC; /* libfuse asks for atomic O_TRUNC: no SETATTR follows */
    struct snapshot *s = calloc(1, sizeof *s);
    if (s && rw_whole(w->kind) && scratch_open(a, g, i, trunc, s)) {
        free(s);
        s = NULL;
    } else if (s && w->kind == RW_VALUE) {
        uint8_t *text;
        if (tree_read_all(g->fs->tree, i, &text, &s->blen) == 0) {
            s->buf = (char *)text;
            s->bcap = s->blen;
        } else {
            free(s);
            s = NULL;
        }
    }
    if (!s) {
        fuse_reply_err(req, ENOMEM);
        return;
    }
    s->fino = fino;
    s->epoch = g->epoch;
    s->ino = i;
    s->writer = true;
    s->w = *w;
    if (trunc) {
        /* a byte range written whole (cp): taken at the close if it has the range's size */
        s->whole_bytes = w->kind == RW_BYTES;
        s->blen = 0;
        s->dirty = true;
    }
    snapshot_link(a, s, g);
    fi->fh = (uint64_t)(uintptr_t)s;
    fi->direct_io = 1;
    fuse_reply_open(req, fi);
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    struct adapter *a = adapter_of(req);
    pthread_mutex_lock(&a->tmu);
    struct tempfile *tf = temp_by_ino(a, ino);
    if (tf && (fi->flags & O_TRUNC) && !temp_resize(a, tf, 0)) { /* cannot fail: it shrinks */
        tf->len = 0;
        note_temps(a);
    }
    pthread_mutex_unlock(&a->tmu);
    if (tf) {
        fi->fh = 0;
        fi->direct_io = 1;
        fuse_reply_open(req, fi);
        return;
    }
    struct rw_gen *g;
    uint32_t i;
    int kind;
    bool moved;
    if (!node_or_reply(req, ino, &g, &i, &kind, &moved))
        return;
    struct tree *t = g->fs->tree;
    if ((fi->flags & O_ACCMODE) != O_RDONLY || (fi->flags & O_TRUNC)) {
        struct rw_target w;
        if (kind == NODE_DIR)
            fuse_reply_err(req, EISDIR);
        else if (!a->cfg.rw || !rw_target(&a->rw, g, i, &w))
            fuse_reply_err(req, EROFS);
        else
            open_writer(req, ino, g, i, &w, fi);
        return;
    }
    if (kind == NODE_DIR) {
        fuse_reply_err(req, EISDIR);
        return;
    }
    if (tree_is_volatile(t, i)) {
        /* A snapshot per reader: consistent across its reads, fresh at each open. */
        struct snapshot *s = calloc(1, sizeof *s);
        if (s)
            s->text = tree_render(t, i, &s->len);
        if (!s || !s->text) {
            free(s);
            fuse_reply_err(req, ENOMEM);
            return;
        }
        s->fino = ino;
        s->epoch = g->epoch;
        snapshot_link(a, s, g);
        fi->fh = (uint64_t)(uintptr_t)s;
        fi->direct_io = 1;
        fuse_reply_open(req, fi);
        return;
    }
    /* -o rw or a watched folder: no page cache, so a reader holding a file open across a
     * commit or a rescan reads the new version from then on (pages kept would be the old
     * one's). */
    fi->keep_cache = !a->gens && !moved;
    fi->direct_io = a->gens || moved;
    struct tree_hold *h = tree_hold(t, i);
    if (h || a->gens) {
        struct snapshot *s = calloc(1, sizeof *s);
        if (!s) {
            tree_release(h);
            fuse_reply_err(req, ENOMEM);
            return;
        }
        s->hold = h;
        s->fino = ino;
        s->epoch = g->epoch;
        s->ino = i;
        snapshot_link(a, s, g);
        fi->fh = (uint64_t)(uintptr_t)s;
    }
    fuse_reply_open(req, fi);
}

/* How long a commit by a RENAME (sed -i) waits for the notifier at most before it is
 * answered anyway (reply_when_told; the late replier). The notifier normally tells the
 * kernel well within it, the request's thread being free meanwhile; the bound only ends
 * the lock cycles that remain possible (op_rename says which), and stays well below an
 * editor's patience. */
#define RENAME_WAIT_NS 1000000000ull

static uint64_t monotonic_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* After a commit whose reply does not wait (a RELEASE, which nobody waits for: the kernel
 * sends it after close(2) returned; a RENAME that may not wait, rename_may_wait; out of
 * memory): the notifier is asked to tell the kernel, and we go on. Never waited for on a request's thread: with one
 * thread serving requests, the kernel may hold the root's lock while it waits for our
 * answer to a lookup that this request would keep us from giving. */
static void ask_notifier(struct adapter *a)
{
    pthread_mutex_lock(&a->nmu);
    ++a->asked;
    pthread_cond_broadcast(&a->ncv);
    pthread_mutex_unlock(&a->nmu);
}

/* A temporary's rename was answered (under nmu): the notifier may drop the entries below
 * the root again (op_rename). */
static void rename_done_locked(struct adapter *a)
{
    if (--a->renames == 0)
        pthread_cond_broadcast(&a->ncv);
}

/* A temporary's rename began: until it is answered (rename_done) the notifier drops no
 * older tree's entry below the root (op_rename). */
static void rename_begin(struct adapter *a)
{
    pthread_mutex_lock(&a->nmu);
    a->renames++;
    pthread_mutex_unlock(&a->nmu);
}

static void rename_done(struct adapter *a)
{
    pthread_mutex_lock(&a->nmu);
    rename_done_locked(a);
    pthread_mutex_unlock(&a->nmu);
}

/* After a commit by a FLUSH, an FSYNC or a RENAME: the notifier tells the kernel and then
 * replies to req (0), so the close, fsync or rename returns once the kernel has dropped
 * the root's entries: the path walks after it look up again, in the new tree. Not waited
 * for on this thread: with one thread serving requests, the kernel may hold the root's
 * lock for a lookup it waits for us to answer, and the notifier needs that lock; this
 * thread answers it meanwhile. With a deadline (a RENAME's, RENAME_WAIT_NS from now) the
 * late replier answers at the deadline if the kernel was not told by then. Without the
 * notifier (stopping), or out of memory: the reply at once, the notifier asked. */
static void reply_when_told(struct adapter *a, fuse_req_t req, uint64_t wait_ns)
{
    struct told_wait *w = malloc(sizeof *w);
    pthread_mutex_lock(&a->nmu);
    bool later = w && a->notifier_started && !a->stopping && (!wait_ns || a->late_started);
    if (later) {
        w->req = req;
        w->mine = ++a->asked;
        w->deadline = wait_ns ? monotonic_ns() + wait_ns : 0;
        w->next = a->waiting;
        a->waiting = w;
        pthread_cond_broadcast(&a->ncv);
        if (wait_ns)
            pthread_cond_broadcast(&a->late_cv);
    }
    pthread_mutex_unlock(&a->nmu);
    if (!later) {
        free(w);
        ask_notifier(a);
        fuse_reply_err(req, 0);
        if (wait_ns)
            rename_done(a);
    }
}

/* The replies whose commits the kernel has been told of, or whose deadline has passed
 * (all of them: every), sent; under nmu, which it lets go of while it replies. */
static void reply_told(struct adapter *a, bool every)
{
    struct told_wait *ready = NULL;
    uint64_t now = monotonic_ns();
    for (struct told_wait **p = &a->waiting; *p;) {
        struct told_wait *w = *p;
        if (every || w->mine <= a->told || (w->deadline && w->deadline <= now)) {
            *p = w->next;
            w->next = ready;
            ready = w;
            if (w->deadline)
                rename_done_locked(a);
            if (w->deadline && w->mine > a->told && !every)
                __atomic_add_fetch(&a->rw.renames_late, 1, __ATOMIC_RELAXED);
        } else {
            p = &w->next;
        }
    }
    pthread_mutex_unlock(&a->nmu);
    while (ready) {
        struct told_wait *w = ready;
        ready = w->next;
        fuse_reply_err(w->req, 0);
        free(w);
    }
    pthread_mutex_lock(&a->nmu);
}

/* The late replier's thread: a RENAME's reply when its deadline passes before the
 * notifier told the kernel (the notifier stuck on a directory's lock that the rename
 * holds: op_rename). Asleep while no reply has a deadline. */
static void *late_replier(void *arg)
{
    struct adapter *a = arg;
    pthread_mutex_lock(&a->nmu);
    while (!a->stopping) {
        uint64_t first = 0;
        for (const struct told_wait *w = a->waiting; w; w = w->next)
            if (w->deadline && (!first || w->deadline < first))
                first = w->deadline;
        if (!first) {
            pthread_cond_wait(&a->late_cv, &a->nmu);
        } else if (first <= monotonic_ns()) {
            reply_told(a, false);
        } else {
            struct timespec until = {.tv_sec = (time_t)(first / 1000000000u),
                                     .tv_nsec = (long)(first % 1000000000u)};
            pthread_cond_timedwait(&a->late_cv, &a->nmu, &until);
        }
    }
    pthread_mutex_unlock(&a->nmu);
    return NULL;
}

/* settle's answer when it committed (the reply and telling the kernel are the caller's:
 * reply_when_told or ask_notifier). */
#define COMMITTED 1

/* -o rw: what a writer handle holds goes to the pending edits (a value's text parsed),
 * then everything pending is committed. COMMITTED, 0 (nothing to commit yet) or the
 * -errno for the flush/fsync. */
static int settle(fuse_req_t req, struct snapshot *s, bool last)
{
    struct adapter *a = adapter_of(req);
    int rc = 0;
    if (s && s->writer && s->dirty && (s->w.kind != RW_BYTES || s->whole_bytes) && s->blen == 0 && !last)
        return 0; /* a shell's O_TRUNC, then a close of a duplicate before it writes */
    if (s && s->writer && s->dirty) {
        s->dirty = false;
        if (s->bad)
            return -EINVAL;
        rc = handle_target(a, req, s);
        if (!rc && s->whole_bytes) {
            pthread_mutex_lock(&a->rw.mu);
            size_t len = s->blen;
            char *copy = len == s->w.len ? alloc_array(len ? len : 1, 1) : NULL;
            if (copy)
                memcpy(copy, s->buf, len);
            pthread_mutex_unlock(&a->rw.mu);
            if (len != s->w.len) {
                char *path = rw_path(gen_now(a)->fs->tree, s->ino);
                rw_log(&a->rw, "refused %s: %zu bytes for a range of %" PRIu64 "; nothing changed", path ? path : "?",
                       len, s->w.len);
                free(path);
                rc = -EPERM;
            } else {
                rc = copy ? rw_put_bytes(&a->rw, &s->w, 0, copy, len) : -ENOMEM;
            }
            free(copy);
        } else if (!rc && s->scratch) {
            char *path = rw_path(gen_now(a)->fs->tree, s->ino);
            pthread_mutex_lock(&a->rw.mu); /* the length (a truncate may run meanwhile) */
            size_t len = s->blen;
            pthread_mutex_unlock(&a->rw.mu);
            rc = path ? rw_put_whole_fd(&a->rw, &s->w, path, s->scratch - 1, len) : -ENOMEM;
            free(path);
        } else if (!rc && (s->w.kind == RW_VALUE || rw_whole(s->w.kind))) {
            char *path = rw_path(gen_now(a)->fs->tree, s->ino);
            pthread_mutex_lock(&a->rw.mu); /* the buffer (a truncate may run meanwhile) */
            char *text = alloc_array(s->blen ? s->blen : 1, 1);
            size_t len = s->blen;
            if (text)
                memcpy(text, s->buf, len);
            pthread_mutex_unlock(&a->rw.mu);
            rc = !text || !path                ? -ENOMEM
                 : rw_whole(s->w.kind) ? rw_put_whole(&a->rw, &s->w, path, text, len)
                                       : rw_put_value(&a->rw, &s->w, path, text, len);
            free(text);
            free(path);
        }
        if (rc)
            return rc;
    }
    rc = rw_commit(&a->rw, true);
    return rc ? rc : COMMITTED;
}

static void op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    (void)ino;
    struct snapshot *s = (struct snapshot *)(uintptr_t)fi->fh;
    int rc = s && s->writer ? settle(req, s, false) : 0;
    if (rc == COMMITTED)
        reply_when_told(adapter_of(req), req, 0);
    else
        fuse_reply_err(req, -rc);
}

static void op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
    (void)ino, (void)datasync;
    struct adapter *a = adapter_of(req);
    int rc = a->cfg.rw ? settle(req, (struct snapshot *)(uintptr_t)fi->fh, false) : 0;
    if (rc == COMMITTED)
        reply_when_told(a, req, 0);
    else
        fuse_reply_err(req, -rc);
}

static void op_write(fuse_req_t req, fuse_ino_t ino, const char *data, size_t size, off_t off,
                     struct fuse_file_info *fi)
{
    struct adapter *a = adapter_of(req);
    struct snapshot *s = (struct snapshot *)(uintptr_t)fi->fh;
    if (!s) {
        /* a temporary's bytes */
        int trc = EBADF;
        pthread_mutex_lock(&a->tmu);
        struct tempfile *t = temp_by_ino(a, ino);
        if (t) {
            trc = temp_write(a, t, data, size, (uint64_t)off);
            note_temps(a);
        }
        pthread_mutex_unlock(&a->tmu);
        if (trc)
            fuse_reply_err(req, trc);
        else
            fuse_reply_write(req, size);
        return;
    }
    if (!s->writer) {
        fuse_reply_err(req, EBADF);
        return;
    }
    int rc = handle_target(a, req, s);
    if (!rc && s->w.kind == RW_BYTES && !s->whole_bytes) {
        rc = rw_put_bytes(&a->rw, &s->w, (uint64_t)off, data, size);
        s->dirty |= rc == 0;
    } else if (!rc) {
        /* a value's text: at most 64 characters a value, whatever the writer sends; a
         * resource's new content: up to RW_RESOURCE_MAX */
        uint64_t limit = s->whole_bytes ? s->w.len : rw_whole(s->w.kind) ? RW_RESOURCE_MAX : 64 * s->w.ft.count + 64;
        pthread_mutex_lock(&a->rw.mu);
        if ((uint64_t)off > limit || size > limit - (uint64_t)off) {
            rc = -EFBIG;
        } else if (s->scratch) {
            /* a whole replacement's content: into its file (a hole reads as zeros) */
            ssize_t put = pwrite(s->scratch - 1, data, size, off);
            rc = put == (ssize_t)size ? 0 : put < 0 ? -errno : -EIO;
            if (!rc && (size_t)off + size > s->blen)
                s->blen = (size_t)off + size;
            s->dirty |= rc == 0;
        } else if ((size_t)off + size > s->bcap) {
            size_t cap = (size_t)off + size > 2 * s->bcap ? (size_t)off + size : 2 * s->bcap;
            char *n = realloc(s->buf, cap);
            rc = n ? 0 : -ENOMEM;
            if (n) {
                s->buf = n;
                s->bcap = cap;
            }
        }
        if (!rc && !s->scratch) {
            if ((size_t)off > s->blen)
                memset(s->buf + s->blen, s->w.kind == RW_VALUE ? ' ' : 0, (size_t)off - s->blen);
            memcpy(s->buf + off, data, size);
            if ((size_t)off + size > s->blen)
                s->blen = (size_t)off + size;
            s->dirty = true;
        }
        char why[200];
        if (!rc && s->w.kind == RW_VALUE && rw_check_prefix(&s->w, s->buf, s->blen, why, sizeof why)) {
            rc = -EINVAL;
            s->bad = true;
        }
        pthread_mutex_unlock(&a->rw.mu);
        if (rc == -EINVAL) {
            char *path = rw_path(gen_now(a)->fs->tree, s->ino);
            rw_log(&a->rw, "refused %s: %s; nothing changed", path ? path : "?", why);
            free(path);
        }
    }
    if (rc)
        fuse_reply_err(req, -rc);
    else
        fuse_reply_write(req, size);
}

static void op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    (void)ino;
    struct snapshot *s = (struct snapshot *)(uintptr_t)fi->fh;
    /* written without a flush, or emptied: nobody to tell but /info, and nobody waits for
     * this reply (the kernel sends a RELEASE after close(2) returned) */
    if (s && s->writer && s->dirty && !s->bad && settle(req, s, true) == COMMITTED)
        ask_notifier(adapter_of(req));
    if (s) {
        forget_later(adapter_of(req), s->fino); /* open at the commit: its entry stayed */
        snapshot_free(adapter_of(req), s);
    }
    fuse_reply_err(req, 0);
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
    struct adapter *a = adapter_of(req);
    if (a->cfg.rw && !fi->fh) {
        pthread_mutex_lock(&a->tmu);
        struct tempfile *t = temp_by_ino(a, ino);
        char *copy = t ? alloc_array(size ? size : 1, 1) : NULL;
        ssize_t k = copy ? temp_read(t, copy, size, (uint64_t)off) : -ENOMEM;
        pthread_mutex_unlock(&a->tmu);
        if (t) {
            if (k >= 0)
                fuse_reply_buf(req, copy, (size_t)k);
            else
                fuse_reply_err(req, (int)-k);
            free(copy);
            return;
        }
    }
    struct rw_gen *g;
    uint32_t i;
    int kind = node_of(req, ino, &g, &i);
    if (kind != NODE_FILE) {
        if (kind >= 0)
            fuse_reply_err(req, EISDIR);
        else
            reply_kind_err(req, kind);
        return;
    }
    struct tree *t = g->fs->tree;
    const struct snapshot *s = (const struct snapshot *)(uintptr_t)fi->fh;
    if (s && s->text) {
        /* Reply from a private copy: once the reply is written the reader may close, and
         * the snapshot be released by another thread, before fuse_reply_buf returns. */
        size_t k = (uint64_t)off < s->len ? s->len - (size_t)off : 0;
        k = k < size ? k : size;
        char *copy = alloc_array(k, 1);
        if (!copy) {
            fuse_reply_err(req, ENOMEM);
            return;
        }
        memcpy(copy, s->text + (k ? off : 0), k);
        fuse_reply_buf(req, copy, k);
        free(copy);
        return;
    }
    uint64_t fsize = tree_size(t, i);
    if ((uint64_t)off >= fsize) {
        fuse_reply_buf(req, NULL, 0);
        return;
    }
    if (size > fsize - (uint64_t)off)
        size = (size_t)(fsize - (uint64_t)off);
    struct source *rs;
    uint64_t start, rpos;
    int rfd;
    if (tree_range(t, i, &rs, &start) && source_file_pos(rs, start + (uint64_t)off, &rfd, &rpos) == 0) {
        /* Straight from the file's descriptor (the file or a slice of it: a stored
         * resource): no copy through our buffers. Expanded data goes through tree_read. */
        if (source_check(rs)) {
            fuse_reply_err(req, EIO);
            return;
        }
        struct fuse_bufvec bv = FUSE_BUFVEC_INIT(size);
        bv.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
        bv.buf[0].fd = rfd;
        bv.buf[0].pos = (off_t)rpos;
        fuse_reply_data(req, &bv, FUSE_BUF_SPLICE_MOVE);
        return;
    }
    char *buf = alloc_array(size, 1);
    if (!buf) {
        fuse_reply_err(req, ENOMEM);
        return;
    }
    size_t got = 0;
    enum s3_err e = tree_read(t, i, (uint64_t)off, buf, size, &got);
    if (e)
        fuse_reply_err(req, s3_err_errno(e));
    else
        fuse_reply_buf(req, buf, got);
    free(buf);
}

/* getxattr/listxattr's reply: the length when size is 0 (a query), else the bytes; a
 * node that cannot be had answers as every operation does (reply_kind_err). */
static void reply_xattr(fuse_req_t req, int kind, enum s3_err e, const char *buf, size_t len, size_t size)
{
    if (kind < 0)
        reply_kind_err(req, kind);
    else if (e)
        fuse_reply_err(req, s3_err_errno(e));
    else if (size == 0)
        fuse_reply_xattr(req, len);
    else
        fuse_reply_buf(req, buf, len);
}

static void op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
    char buf[512];
    size_t cap = size < sizeof buf ? size : sizeof buf, len = 0;
    struct rw_gen *g;
    uint32_t i;
    int kind = node_of(req, ino, &g, &i);
    enum s3_err e = kind >= 0 ? tree_getxattr(g->fs->tree, i, name, buf, cap, &len) : S3_OK;
    if (e == S3_ERR_RANGE && size >= sizeof buf) {
        fuse_reply_err(req, E2BIG); /* cannot happen with our short values; never claim ENOSYS */
        return;
    }
    reply_xattr(req, kind, e, buf, len, size);
}

static void op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
    char buf[256];
    size_t cap = size < sizeof buf ? size : sizeof buf, len = 0;
    struct rw_gen *g;
    uint32_t i;
    int kind = node_of(req, ino, &g, &i);
    enum s3_err e = kind >= 0 ? tree_listxattr(g->fs->tree, i, buf, cap, &len) : S3_OK;
    reply_xattr(req, kind, e, buf, len, size);
}

/* What never changes: EROFS read-only, EPERM with -o rw (the mount is writable, this is
 * not). */
static int no_change(fuse_req_t req)
{
    return adapter_of(req)->cfg.rw ? EPERM : EROFS;
}

static void op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value, size_t size,
                        int flags)
{
    (void)name, (void)value, (void)size, (void)flags;
    /* an editor's temporary has no attributes to keep (ENOTSUP: editors copying ACLs go on) */
    fuse_reply_err(req, (uint32_t)(ino >> 32) == TEMP_EPOCH ? ENOTSUP : no_change(req));
}

static void op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
    (void)ino, (void)name;
    fuse_reply_err(req, no_change(req));
}

static void op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev)
{
    (void)parent, (void)name, (void)mode, (void)rdev;
    fuse_reply_err(req, no_change(req));
}

static void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
    (void)parent, (void)name, (void)mode;
    fuse_reply_err(req, no_change(req));
}

static void op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
    struct adapter *a = adapter_of(req);
    char *dir = a->cfg.rw && any_temps(a) ? dir_path(req, parent) : NULL;
    pthread_mutex_lock(&a->tmu);
    struct tempfile *t = dir ? temp_by_name(a, dir, name) : NULL;
    if (t) {
        temp_unlink(a, t); /* an editor's temporary: the only thing that can go */
        note_temps(a);
    }
    pthread_mutex_unlock(&a->tmu);
    free(dir);
    fuse_reply_err(req, t ? 0 : no_change(req));
}

static void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
    (void)parent, (void)name;
    fuse_reply_err(req, no_change(req));
}

static void op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
    (void)link, (void)parent, (void)name;
    fuse_reply_err(req, no_change(req));
}

/* The first len bytes of file fd into *out (malloc'd): 0 or -errno. */
static int fd_bytes(int fd, size_t len, char **out)
{
    char *b = alloc_array(len ? len : 1, 1);
    int rc = b ? 0 : -ENOMEM;
    for (size_t done = 0; !rc && done < len;) {
        ssize_t got = pread(fd, b + done, len - done, (off_t)done);
        rc = got < 0 ? -errno : got == 0 ? -EIO : 0;
        done += got > 0 ? (size_t)got : 0;
    }
    if (rc)
        free(b);
    *out = rc ? NULL : b;
    return rc;
}

/* Whether a rename in directories parent and newparent that committed may wait for the
 * notifier: neither is the root, and both are of generation `current` (the one current
 * when the rename came, before its commit). See op_rename. */
static bool rename_may_wait(fuse_ino_t parent, fuse_ino_t newparent, uint32_t current)
{
    return parent != FUSE_ROOT_ID && newparent != FUSE_ROOT_ID && (uint32_t)(parent >> 32) == current &&
           (uint32_t)(newparent >> 32) == current;
}

/* A temporary renamed over a writable file (sed -i): its bytes become that file's (a
 * value's text parsed; a byte range's same size), committed at once; the errno of that is
 * rename's. Every other rename: EPERM (EROFS read-only).
 *
 * The reply of a rename that committed waits for the notifier (reply_when_told), so that
 * after rename(2) returns the path walks meet the new tree, as after a close. Locks: the
 * kernel holds the rename's directories' locks (parent's and newparent's) from before it
 * sends the RENAME until our reply; the notifier's forget_root takes the root's lock for
 * each entry it drops, and no other. So when neither directory is the root (a leaf's
 * directory is a child of the root or deeper) the notifier is not kept from telling by
 * the rename itself, and this thread, free meanwhile, answers the lookups the kernel may
 * make while it holds the root's lock. Not waited for (rename_may_wait): (a) when one of
 * them is the root, as the notifier can tell the kernel only after the reply; (b) when
 * one of them is a directory of an older tree (a shell whose working directory was
 * entered before an earlier commit: `cd header && sed -i ... a b`), as the notifier's
 * passes drop the older trees' entries (drop_entries, sweep_old), which takes their
 * directories' locks (measured: every such rename waited for the deadline; and the walks
 * from that directory stay in its tree whatever we wait for). (1) The directory, current
 * when the rename came, is older once it committed, and a pass of the notifier that
 * opened the committed tree before telling the kernel would drop its entries (seen under
 * load, 20 of 1000 renames): from its arrival (rename_begin, before it reads the current
 * tree) to its reply, the notifier drops no entry below the root (the next pass does).
 * The bound (RENAME_WAIT_NS, the late replier) is kept for the cycle that remains:
 * (2) another process holding the root's lock while it waits for the rename's
 * directory's (rmdir of that directory, or a rename between the root and it, refused by
 * us but only once the kernel has both locks), while the notifier waits for the root's. */
static void op_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
                      const char *newname, unsigned int flags)
{
    struct adapter *a = adapter_of(req);
    char *dir = a->cfg.rw && any_temps(a) && !flags ? dir_path(req, parent) : NULL;
    pthread_mutex_lock(&a->tmu);
    struct tempfile *t = dir ? temp_by_name(a, dir, name) : NULL;
    char *text = NULL;
    size_t len = 0;
    int tfd = -1; /* a temporary in a scratch file: its own descriptor of it */
    if (t) {
        len = t->len;
        if (t->fd)
            tfd = fcntl(t->fd - 1, F_DUPFD_CLOEXEC, 0);
        else if ((text = alloc_array(len ? len : 1, 1)))
            memcpy(text, t->data, len);
    }
    pthread_mutex_unlock(&a->tmu);
    free(dir);
    if (!t) {
        fuse_reply_err(req, no_change(req));
        return;
    }
    rename_begin(a); /* before the current tree is read (node_of): see (1) above */
    struct rw_gen *g;
    uint32_t pdir, target;
    struct rw_target w;
    int rc = text || tfd >= 0 ? 0 : -ENOMEM;
    if (!rc && (node_of(req, newparent, &g, &pdir) != NODE_DIR || tree_lookup(g->fs->tree, pdir, newname, &target) ||
                !rw_target(&a->rw, g, target, &w)))
        rc = -EPERM;
    char *path = rc ? NULL : rw_path(g->fs->tree, target);
    uint32_t current = rc ? 0 : g->epoch; /* before the commit: rename_may_wait */
    if (!rc && !path)
        rc = -ENOMEM;
    /* a value's text is parsed whole, and a byte range's bytes become pending edits (in
     * memory) at once: read whole; a whole replacement is read from the file */
    if (!rc && tfd >= 0 && !rw_whole(w.kind) && (w.kind == RW_VALUE || len == w.len))
        rc = fd_bytes(tfd, len, &text);
    if (!rc && w.kind == RW_VALUE)
        rc = rw_put_value(&a->rw, &w, path, text, len);
    else if (!rc && rw_whole(w.kind))
        rc = tfd >= 0 ? rw_put_whole_fd(&a->rw, &w, path, tfd, len) : rw_put_whole(&a->rw, &w, path, text, len);
    else if (!rc && len != w.len) {
        rw_log(&a->rw, "refused %s: %zu bytes for a range of %" PRIu64 "; nothing changed", path, len, w.len);
        rc = -EPERM;
    } else if (!rc) {
        rc = rw_put_bytes(&a->rw, &w, 0, text, len);
    }
    free(text);
    if (tfd >= 0)
        close(tfd);
    if (!rc)
        rc = settle(req, NULL, false);
    if (rc == COMMITTED) {
        /* its number now names the file it replaced */
        pthread_mutex_lock(&a->tmu);
        struct tempfile *same = temp_by_ino(a, temp_ino(t));
        if (same) {
            same->moved_to = path;
            path = NULL;
            free(same->data);
            same->data = NULL;
            same->len = same->cap = 0;
            if (same->fd)
                close(same->fd - 1);
            same->fd = 0;
            note_temps(a);
        }
        pthread_mutex_unlock(&a->tmu);
    }
    free(path);
    if (rc == COMMITTED && rename_may_wait(parent, newparent, current)) {
        reply_when_told(a, req, RENAME_WAIT_NS); /* rename_done once answered */
        return;
    }
    if (rc == COMMITTED)
        ask_notifier(a);
    fuse_reply_err(req, rc == COMMITTED ? 0 : -rc);
    rename_done(a);
}

static void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
    (void)ino, (void)newparent, (void)newname;
    fuse_reply_err(req, no_change(req));
}

/* -o rw: an editor's temporary, in a directory holding a writable file; every other new
 * file: EPERM (EROFS read-only). */
static void op_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, struct fuse_file_info *fi)
{
    (void)mode;
    struct adapter *a = adapter_of(req);
    struct rw_gen *g;
    uint32_t dir, existing;
    if (!a->cfg.rw || node_of(req, parent, &g, &dir) != NODE_DIR || !dir_has_writable(a, g, dir) ||
        strlen(name) > 255) {
        fuse_reply_err(req, no_change(req));
        return;
    }
    if (tree_lookup(g->fs->tree, dir, name, &existing) == 0) {
        fuse_reply_err(req, EEXIST);
        return;
    }
    struct tempfile *t = calloc(1, sizeof *t);
    char *path = rw_path(g->fs->tree, dir);
    if (t) {
        t->dir = path;
        t->name = strdup(name);
    }
    if (!t || !t->dir || !t->name) {
        if (t) {
            free(t->name);
            free(t);
        }
        free(path);
        fuse_reply_err(req, ENOMEM);
        return;
    }
    struct fuse_entry_param e;
    pthread_mutex_lock(&a->tmu);
    if (temp_by_name(a, path, name)) {
        pthread_mutex_unlock(&a->tmu);
        free(t->name);
        free(t->dir);
        free(t);
        fuse_reply_err(req, EEXIST);
        return;
    }
    t->id = ++a->ntemps_made;
    t->next = a->temps;
    __atomic_store_n(&a->temps, t, __ATOMIC_RELEASE);
    temp_entry(a, t, &e);
    pthread_mutex_unlock(&a->tmu);
    fi->fh = 0;
    fi->direct_io = 1;
    fuse_reply_create(req, &e, fi);
}

static void op_statfs(fuse_req_t req, fuse_ino_t ino)
{
    (void)ino;
    struct adapter *a = adapter_of(req);
    struct rw_gen *g = gen_now(a);
    struct statvfs sv = {0};
    sv.f_bsize = sv.f_frsize = 4096;
    sv.f_blocks = (g->fs->src.size + 4095) / 4096;
    sv.f_files = tree_node_count(g->fs->tree);
    sv.f_namemax = 255;
    sv.f_flag = a->cfg.rw ? 0 : ST_RDONLY;
    fuse_reply_statfs(req, &sv);
}

/* The kernel lets go of lookups: with generations, an older one may go with them. */
static void forget_one(struct adapter *a, fuse_ino_t ino, uint64_t nlookup)
{
    uint32_t epoch = (uint32_t)(ino >> 32);
    if (a->gens && ino != FUSE_ROOT_ID && epoch != TEMP_EPOCH)
        rw_forget(&a->rw, epoch, nlookup);
}

static void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
    forget_one(adapter_of(req), ino, nlookup);
    fuse_reply_none(req);
}

static void op_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
    struct adapter *a = adapter_of(req);
    for (size_t k = 0; k < count; k++)
        forget_one(a, forgets[k].ino, forgets[k].nlookup);
    fuse_reply_none(req);
}

/* Each operation that uses a generation, then the generations it held let go of (after
 * its reply: see "Freeing generations"). */
#define HELD_OP(name, params, args)                                                                                   \
    static void name##_held params                                                                                     \
    {                                                                                                                  \
        name args;                                                                                                     \
        held_release();                                                                                                \
    }
HELD_OP(op_lookup, (fuse_req_t req, fuse_ino_t parent, const char *name), (req, parent, name))
HELD_OP(op_getattr, (fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi), (req, ino, fi))
HELD_OP(op_setattr, (fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set, struct fuse_file_info *fi),
        (req, ino, attr, to_set, fi))
HELD_OP(op_readlink, (fuse_req_t req, fuse_ino_t ino), (req, ino))
HELD_OP(op_unlink, (fuse_req_t req, fuse_ino_t parent, const char *name), (req, parent, name))
HELD_OP(op_rename,
        (fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent, const char *newname,
         unsigned int flags),
        (req, parent, name, newparent, newname, flags))
HELD_OP(op_opendir, (fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi), (req, ino, fi))
HELD_OP(op_readdir, (fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi),
        (req, ino, size, off, fi))
HELD_OP(op_readdirplus, (fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi),
        (req, ino, size, off, fi))
HELD_OP(op_open, (fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi), (req, ino, fi))
HELD_OP(op_read, (fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi),
        (req, ino, size, off, fi))
HELD_OP(op_write,
        (fuse_req_t req, fuse_ino_t ino, const char *data, size_t size, off_t off, struct fuse_file_info *fi),
        (req, ino, data, size, off, fi))
HELD_OP(op_flush, (fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi), (req, ino, fi))
HELD_OP(op_fsync, (fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi), (req, ino, datasync, fi))
HELD_OP(op_release, (fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi), (req, ino, fi))
HELD_OP(op_getxattr, (fuse_req_t req, fuse_ino_t ino, const char *name, size_t size), (req, ino, name, size))
HELD_OP(op_listxattr, (fuse_req_t req, fuse_ino_t ino, size_t size), (req, ino, size))
HELD_OP(op_create, (fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, struct fuse_file_info *fi),
        (req, parent, name, mode, fi))
HELD_OP(op_statfs, (fuse_req_t req, fuse_ino_t ino), (req, ino))

static const struct fuse_lowlevel_ops ops = {
    .init = op_init,
    .forget = op_forget,
    .forget_multi = op_forget_multi,
    .lookup = op_lookup_held,
    .getattr = op_getattr_held,
    .setattr = op_setattr_held,
    .readlink = op_readlink_held,
    .mknod = op_mknod,
    .mkdir = op_mkdir,
    .unlink = op_unlink_held,
    .rmdir = op_rmdir,
    .symlink = op_symlink,
    .rename = op_rename_held,
    .link = op_link,
    .opendir = op_opendir_held,
    .readdir = op_readdir_held,
    .readdirplus = op_readdirplus_held,
    .open = op_open_held,
    .read = op_read_held,
    .write = op_write_held,
    .flush = op_flush_held,
    .fsync = op_fsync_held,
    .release = op_release_held,
    .getxattr = op_getxattr_held,
    .listxattr = op_listxattr_held,
    .setxattr = op_setxattr,
    .removexattr = op_removexattr,
    .create = op_create_held,
    .statfs = op_statfs_held,
};

/* -o rw: after each commit, tell the kernel to forget what it keeps of older trees: the
 * root's entries (and with them every path below) and its listing, and the pages of
 * files open then. Its own thread: the kernel takes a directory's lock for an entry's
 * invalidation, and may hold it while it waits for one of our replies. */
static void notify_epoch(struct adapter *a, struct rw_gen *old)
{
    struct tree *t = old->fs->tree;
    uint32_t n = tree_is_populated(t, TREE_ROOT) ? tree_child_count(t, TREE_ROOT) : 0;
    for (uint32_t k = 0; k < n; k++) {
        const char *name = tree_name(t, tree_child(t, TREE_ROOT, k));
        fuse_lowlevel_notify_inval_entry(a->se, FUSE_ROOT_ID, name, strlen(name));
    }
    /* open files of older generations */
    size_t cap = 0, count = 0;
    fuse_ino_t *inos = NULL;
    pthread_mutex_lock(&a->lock);
    for (struct snapshot *s = a->open; s; s = s->next)
        cap++;
    inos = cap ? calloc(cap, sizeof *inos) : NULL;
    for (struct snapshot *s = a->open; inos && s; s = s->next)
        if (s->epoch <= old->epoch && s->fino != FUSE_ROOT_ID)
            inos[count++] = s->fino;
    pthread_mutex_unlock(&a->lock);
    for (size_t k = 0; k < count; k++)
        fuse_lowlevel_notify_inval_inode(a->se, inos[k], 0, 0);
    free(inos);
}

/* Every entry of an older generation (still alive) the kernel was given is dropped, at
 * each pass of the notifier: dropping the root's entries (notify_epoch) lets the kernel
 * forget the paths below them only where nothing used them at that moment; one in use (a
 * walk going through it, a file open) would stay kept, and so its directories, once it
 * is let go. Again at each pass: a reply from an older tree may reach the kernel after
 * the pass before. */
static void sweep_old(struct adapter *a, uint32_t now)
{
    for (struct rw_gen *g; (g = rw_acquire_before(&a->rw, now)); now = g->epoch, rw_release(&a->rw, g)) {
        size_t bytes = 0;
        uint8_t *given = rw_copy_given(&a->rw, g, &bytes);
        for (size_t k = 0; k < bytes * 8; k++) {
            if (!(given[k / 8] & (1u << (k % 8))))
                continue;
            struct tree *t = g->fs->tree;
            uint32_t ino = (uint32_t)k;
            const char *name = tree_name(t, ino);
            fuse_lowlevel_notify_inval_entry(a->se, fuse_ino(g, tree_parent(t, ino)), name, strlen(name));
        }
        free(given);
    }
}

/* The entries of those numbers (of older generations still alive) are dropped, and
 * their directories' up to the root: an entry the kernel drops while it is in use goes
 * when its last user lets go, but then its directory, still named, would stay kept. */
static void drop_entries(struct adapter *a, const fuse_ino_t *fino, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        struct rw_gen *g = rw_acquire_epoch(&a->rw, (uint32_t)(fino[k] >> 32));
        uint32_t ino = (uint32_t)fino[k];
        if (g && g->epoch != rw_epoch(&a->rw) && tree_kind(g->fs->tree, ino) != NODE_NONE) {
            struct tree *t = g->fs->tree;
            for (uint32_t i = ino; i != TREE_ROOT && i; i = tree_parent(t, i)) {
                const char *name = tree_name(t, i);
                fuse_lowlevel_notify_inval_entry(a->se, fuse_ino(g, tree_parent(t, i)), name, strlen(name));
            }
        }
        rw_release(&a->rw, g);
    }
}

/* What a commit's close waits for, before the committed file is opened (its parse is
 * no part of the close): the kernel drops the root's entries and listing of the tree
 * current until then, so the path walks after the close look up again, in the new tree.
 * The pass that follows, after the opening, drops every older tree's entries as well. */
static void forget_root(struct adapter *a, uint64_t asked)
{
    /* the lookups answered from the tree before the commit have replied; those after
     * answer from the new one (the commit marked it stale before asking us) */
    pthread_rwlock_wrlock(&a->answering);
    pthread_rwlock_unlock(&a->answering);
    /* Every tree alive, newest first, not only the newest: a request may have opened the
     * committed file already (rw_acquire), and that tree's root, not listed yet, names
     * nothing, while the tree current at the commit is the one the kernel holds entries
     * of. Only the trees still alive are visited (the kernel holds nothing of the rest). */
    for (struct rw_gen *g = rw_acquire_before(&a->rw, UINT32_MAX), *older; g; g = older) {
        notify_epoch(a, g);
        older = g->epoch ? rw_acquire_before(&a->rw, g->epoch) : NULL;
        rw_release(&a->rw, g);
    }
    fuse_lowlevel_notify_inval_inode(a->se, FUSE_ROOT_ID, 0, 0);
    pthread_mutex_lock(&a->nmu);
    a->told = asked;
    reply_told(a, false);
    pthread_mutex_unlock(&a->nmu);
}

static void *notifier(void *arg)
{
    struct adapter *a = arg;
    pthread_mutex_lock(&a->nmu);
    while (!a->stopping) {
        bool below = a->renames == 0; /* entries below the root may be dropped (op_rename) */
        if (a->done == a->asked && !(below && (a->nstale || a->sweep_owed))) {
            pthread_cond_wait(&a->ncv, &a->nmu);
            continue;
        }
        uint64_t asked = a->asked;
        bool untold = asked > a->told;
        uint32_t from = a->notified;
        fuse_ino_t *stale = below ? a->stale : NULL;
        size_t nstale = below ? a->nstale : 0;
        if (below) {
            a->stale = NULL;
            a->nstale = a->capstale = 0;
        }
        pthread_mutex_unlock(&a->nmu);
        if (untold)
            forget_root(a, asked);
        drop_entries(a, stale, nstale);
        free(stale);
        struct rw_gen *cur = rw_acquire(&a->rw); /* opens the committed file */
        uint32_t now = cur->epoch;
        rw_release(&a->rw, cur);
        /* the entries of the older trees still alive (one the kernel holds nothing of
         * is freed already), and the root's listing */
        for (uint32_t e = from; e < now; e++) {
            struct rw_gen *old = rw_acquire_epoch(&a->rw, e);
            if (old)
                notify_epoch(a, old);
            rw_release(&a->rw, old);
        }
        if (from < now)
            fuse_lowlevel_notify_inval_inode(a->se, FUSE_ROOT_ID, 0, 0);
        /* checked after the opening: a rename that comes later found `now` current, and
         * its directories are of no tree this sweep visits */
        pthread_mutex_lock(&a->nmu);
        below = a->renames == 0;
        a->sweep_owed = !below;
        pthread_mutex_unlock(&a->nmu);
        if (below)
            sweep_old(a, now);
        pthread_mutex_lock(&a->nmu);
        if (now > a->notified)
            a->notified = now;
        a->done = asked;
        if (asked > a->told)
            a->told = asked;
        reply_told(a, false);
    }
    pthread_mutex_unlock(&a->nmu);
    return NULL;
}


/* A single-threaded loop that polls before it sleeps. A reader that walks the tree sends
 * one request right after another; when the daemon is asleep, each one costs the kernel a
 * wake-up of this thread on another CPU, and on a virtual machine that wake-up costs more
 * than the request (measured: `find` over 220,000 nodes 10 s blocking, 6.6 s polling).
 * So after each request the loop keeps reading the (non-blocking) device for spin_us, and
 * only then sleeps in poll(). Idle, it uses no CPU; during a walk, one core. */
static int spin_loop(struct fuse_session *se, unsigned spin_us)
{
    int fd = fuse_session_fd(se);
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
        return -errno;
    /* The ending signals stay blocked except inside ppoll, which unblocks them atomically:
     * one that arrived after the loop's exit check and before the sleep would otherwise set
     * libfuse's exit flag unseen and leave the loop asleep until the next request. */
    sigset_t ending, outside;
    sigemptyset(&ending);
    sigaddset(&ending, SIGINT);
    sigaddset(&ending, SIGTERM);
    sigaddset(&ending, SIGHUP);
    int masked = pthread_sigmask(SIG_BLOCK, &ending, &outside);
    if (masked != 0)
        return -masked;
    struct fuse_buf buf = {.mem = NULL};
    uint64_t window = (uint64_t)spin_us * 1000u, last = monotonic_ns();
    int res = 0;
    while (!fuse_session_exited(se)) {
        res = fuse_session_receive_buf(se, &buf);
        if (res == -EAGAIN) {
            if (monotonic_ns() - last >= window) {
                struct pollfd p = {.fd = fd, .events = POLLIN};
                ppoll(&p, 1, NULL, &outside); /* an ending signal ends it with EINTR */
                last = monotonic_ns();
            }
            continue;
        }
        if (res == -EINTR)
            continue;
        if (res <= 0) /* 0: unmounted */
            break;
        fuse_session_process_buf(se, &buf);
        last = monotonic_ns();
    }
    /* Asked to end (SIGTERM, SIGINT, SIGHUP through libfuse's handlers; or unmounted):
     * a clean end, whatever the last read said (poll was interrupted). */
    bool asked = fuse_session_exited(se);
    pthread_sigmask(SIG_SETMASK, &outside, NULL);
    free(buf.mem);
    fuse_session_reset(se);
    return asked || res >= 0 ? 0 : res;
}

/* How a loop's result ends the daemon. libfuse's loops return the signal that ended them
 * (SIGTERM, SIGINT, SIGHUP) or 0 when unmounted: clean ends. A read of the device also
 * fails with ENODEV or ECONNABORTED when the connection goes while a request is being
 * taken off its queue (a lazy unmount whose last user leaves with requests in flight:
 * the kernel's fuse_dev_do_read), which libfuse passes on as an error: the same clean end.
 * Anything else is a failure, named on stderr. */
static bool loop_ended_cleanly(int rc)
{
    if (rc >= 0 || rc == -ENODEV || rc == -ECONNABORTED)
        return true;
    fprintf(stderr, "mount.s3rig: reading the FUSE device: %s\n", strerror(-rc));
    return false;
}

/* The watched folder changed: the next request opens it again (a new generation), as
 * after a commit, and the notifier tells the kernel. On the watch's thread. */
static void folder_changed(void *ctx)
{
    struct adapter *a = ctx;
    rw_mark_stale(&a->rw);
    pthread_mutex_lock(&a->nmu);
    a->asked++;
    pthread_cond_broadcast(&a->ncv);
    pthread_mutex_unlock(&a->nmu);
}

/* -o rw or a watched folder: the notifier thread, and the watch; after fork
 * (fuse_daemonize). */
static int rw_start(struct adapter *a, struct fuse_session *se)
{
    a->se = se;
    int made = pthread_create(&a->notifier, NULL, notifier, a);
    if (made != 0) {
        fprintf(stderr, "mount.s3rig: cannot start the notifier thread: %s\n", strerror(made));
        return -1;
    }
    a->notifier_started = true;
    /* without it a rename's reply does not wait (reply_when_told): the mount still serves */
    a->late_started = pthread_create(&a->late, NULL, late_replier, a) == 0;
    if (a->cfg.watch) {
        /* no inotify (or its limit reached): the mount still serves, as with nowatch */
        int rc = folder_watch_start(&a->watch, a->src_path, folder_changed, a);
        if (rc)
            fprintf(stderr, "mount.s3rig: %s: cannot follow the folder (%s): it is shown as mounted\n",
                    a->src_path, strerror(-rc));
    }
    return 0;
}

/* Edits the commit at unmount could not write (why: its -errno): nobody is left to
 * return an error to, and a daemon's stderr goes nowhere. So they are kept in a file of
 * their own (the new version whole, never over the source) and said where a user sees it:
 * one line to syslog (LOG_ERR) naming the file, why, and where the edits are, the same on
 * stderr, and the exit status (S3_EXIT_UNSAVED). */
static void report_unsaved(struct adapter *a, int why)
{
    char where[4200];
    int beside, left_out;
    int kept = rw_save_unsaved(&a->rw, where, sizeof where, &beside, &left_out);
    char line[8600];
    snprintf(line, sizeof line,
             "%s: the edits could not be committed at unmount (%s); the file is unchanged; %s%s%s%s%s",
             a->src_path,
             why == -EBUSY ? "the file was changed by someone else since it was read" : strerror(-why),
             kept > 0 ? "the new version is in " : "the edits are lost: ", kept > 0 ? where : "",
             kept < 0 ? strerror(-kept) : "", beside && kept > 0 ? " (not beside it: " : "",
             beside && kept > 0 ? strerror(beside) : "");
    if (beside && kept > 0)
        strncat(line, ")", sizeof line - strlen(line) - 1);
    if (left_out) {
        size_t at = strlen(line);
        snprintf(line + at, sizeof line - at, "; the values written into a compressed section since it was last "
                 "stored are not in it either (%s)", strerror(left_out));
    }
    openlog("mount.s3rig", LOG_PID, LOG_DAEMON);
    syslog(LOG_ERR, "%s", line);
    closelog();
    fprintf(stderr, "mount.s3rig: %s\n", line);
}

/* At the end: what is still pending is committed, and the notifier stops. Non-zero when
 * edits could not be committed (report_unsaved). */
static int rw_stop(struct adapter *a)
{
    folder_watch_stop(a->watch); /* no rescan asked after this */
    a->watch = NULL;
    if (a->notifier_started) {
        pthread_mutex_lock(&a->nmu);
        a->stopping = true;
        /* Every waiting reply first: the notifier may be inside an invalidation that waits
         * for a lock another process holds while it waits for a rename's directory, whose
         * lock the kernel lets go only once that rename is answered (op_rename's 1 s
         * case); the late replier, told to stop, answers no more. */
        reply_told(a, true);
        pthread_cond_broadcast(&a->ncv);
        pthread_cond_broadcast(&a->late_cv);
        pthread_mutex_unlock(&a->nmu);
        pthread_join(a->notifier, NULL);
        if (a->late_started)
            pthread_join(a->late, NULL);
        pthread_mutex_lock(&a->nmu);
        a->notifier_started = a->late_started = false;
        reply_told(a, true); /* any left: committed; the kernel is told no more */
        pthread_mutex_unlock(&a->nmu);
    }
    if (!a->cfg.rw)
        return 0;
    int rc = rw_commit(&a->rw, false);
    if (rc)
        report_unsaved(a, rc);
    return rc;
}

int s3_fuse_run(struct s3fs *fs, const struct s3_fuse_config *cfg, int argc, char **argv, const char *mountpoint)
{
    struct adapter a = {.cfg = *cfg,
                        .lock = PTHREAD_MUTEX_INITIALIZER,
                        .nmu = PTHREAD_MUTEX_INITIALIZER,
                        .ncv = PTHREAD_COND_INITIALIZER,
                        .tmu = PTHREAD_MUTEX_INITIALIZER};
    a.gen0.fs = fs;
    a.gens = cfg->rw || cfg->watch;
    /* writers first: a notifier waiting for it is not kept waiting by lookups that come
     * after it */
    pthread_rwlockattr_t ra;
    pthread_rwlockattr_init(&ra);
    pthread_rwlockattr_setkind_np(&ra, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&a.answering, &ra);
    pthread_rwlockattr_destroy(&ra);
    /* the late replier's deadlines are CLOCK_MONOTONIC's (a clock step moves none) */
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&a.late_cv, &ca);
    pthread_condattr_destroy(&ca);
    a.src_path = strdup(fs->src.path);
    if (!a.src_path || (cfg->rw && rw_init(&a.rw, fs, cfg->lock, cfg->backup, &cfg->opts)) ||
        (!cfg->rw && cfg->watch && rw_init_watch(&a.rw, fs, &cfg->opts))) {
        fprintf(stderr, "mount.s3rig: out of memory\n");
        free(a.src_path);
        s3fs_close(fs);
        return S3_EXIT_MOUNT;
    }
    struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
    struct fuse_session *se = fuse_session_new(&args, &ops, sizeof ops, &a);
    if (!se) {
        fuse_opt_free_args(&args);
        if (a.gens)
            rw_free(&a.rw); /* closes fs, generation 0 */
        else
            s3fs_close(fs);
        free(a.src_path);
        return S3_EXIT_MOUNT;
    }
    int status = S3_EXIT_MOUNT;
    if (fuse_set_signal_handlers(se) != 0)
        goto out_destroy;
    if (fuse_session_mount(se, mountpoint) != 0) {
        fprintf(stderr, "mount.s3rig: cannot mount on %s\n", mountpoint);
        goto out_signals;
    }
    fuse_daemonize(cfg->foreground);
    int rc;
    bool started = !a.gens || rw_start(&a, se) == 0;
    if (!started) {
        rc = 0; /* said by rw_start; the status below says it too */
    } else if (cfg->spin_us > 0) {
        rc = spin_loop(se, cfg->spin_us);
    } else if (cfg->single_thread) {
        rc = fuse_session_loop(se);
    } else {
        struct fuse_loop_config lc = {.clone_fd = 0, .max_idle_threads = 10};
        rc = fuse_session_loop_mt(se, &lc);
    }
    status = started && loop_ended_cleanly(rc) ? S3_EXIT_OK : S3_EXIT_MOUNT;
    if (a.gens && rw_stop(&a))
        status = S3_EXIT_UNSAVED;
    fuse_session_unmount(se);
out_signals:
    fuse_remove_signal_handlers(se);
out_destroy:
    fuse_session_destroy(se);
    fuse_opt_free_args(&args);
    while (a.open)
        snapshot_free(&a, a.open);
    free(a.src_path);
    if (!a.gens)
        s3fs_close(fs);
    if (a.gens) {
        rw_free(&a.rw); /* every generation left, 0 (fs) among them when still alive */
        while (a.temps)
            temp_unlink(&a, a.temps);
        free(a.stale);
        pthread_mutex_destroy(&a.nmu);
        pthread_cond_destroy(&a.ncv);
        pthread_mutex_destroy(&a.tmu);
    }
    pthread_rwlock_destroy(&a.answering);
    pthread_cond_destroy(&a.late_cv);
    return status;
}
