/* The commit path: new file beside the old, fsync, optional backup, rename, fsync of the
 * directory. The rename is the one moment the file changes, and rename(2) is atomic, so a
 * crash leaves the old file (and perhaps a stale temporary, removed by the next
 * commit_lock) or the new one. */
#include "fs/core/commit.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

/* Temporaries are ".NAME.s3rig-N": hidden, and recognisable as ours after a crash. */
#define TEMP_TAG ".s3rig-"

static enum commit_step fail_step;
static enum s3_err fail_err;
static commit_step_fn *step_watcher;
static void *step_watcher_ctx;

void commit_watch_steps(commit_step_fn *fn, void *ctx)
{
    step_watcher_ctx = ctx;
    step_watcher = fn;
}

void commit_fail_at(enum commit_step step, enum s3_err e)
{
    __atomic_store_n(&fail_err, e, __ATOMIC_RELAXED);
    __atomic_store_n(&fail_step, step, __ATOMIC_RELEASE);
}

/* A step begins: the reason a test asked it to fail with (once), else S3_OK. */
static enum s3_err injected(enum commit_step step)
{
    if (step_watcher)
        step_watcher(step, step_watcher_ctx);
    enum commit_step want = step;
    if (!__atomic_compare_exchange_n(&fail_step, &want, COMMIT_STEP_NONE, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE))
        return S3_OK;
    return __atomic_load_n(&fail_err, __ATOMIC_RELAXED);
}

/* The reason of the OS call that just failed (ENOSPC stays NOSPACE). */
static enum s3_err os_err(void)
{
    return errno ? s3_err_of_errno(errno) : S3_ERR_IO;
}

static bool same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
           a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

static bool is_our_temp(const char *entry, const char *name)
{
    size_t n = strlen(name);
    return entry[0] == '.' && strncmp(entry + 1, name, n) == 0 &&
           strncmp(entry + 1 + n, TEMP_TAG, strlen(TEMP_TAG)) == 0;
}

/* Temporaries a crashed commit left: ours by name, and no live writer holds their lock —
 * or a link to the file itself (a backup being made), whose lock is the caller's own. */
static void remove_stale_temps(int dirfd, const char *name, const struct stat *self)
{
    int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return;
    }
    for (struct dirent *e; (e = readdir(d));) {
        if (!is_our_temp(e->d_name, name))
            continue;
        int t = openat(dirfd, e->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (t < 0)
            continue;
        struct stat st;
        bool is_self = fstat(t, &st) == 0 && st.st_dev == self->st_dev && st.st_ino == self->st_ino;
        if (is_self || flock(t, LOCK_EX | LOCK_NB) == 0)
            unlinkat(dirfd, e->d_name, 0);
        close(t);
    }
    closedir(d);
}

enum s3_err commit_lock(struct commit_lock *l, const char *path)
{
    memset(l, 0, sizeof *l);
    l->fd = l->dirfd = -1;
    enum s3_err rc = S3_OK;
    char *full = realpath(path, NULL);
    if (!full) {
        rc = os_err();
        goto fail;
    }
    char *slash = strrchr(full, '/');
    l->name = strdup(slash + 1);
    l->dir = slash == full ? strdup("/") : strndup(full, (size_t)(slash - full));
    free(full);
    if (!l->name || !l->dir) {
        rc = S3_ERR_NOMEM;
        goto fail;
    }
    l->dirfd = open(l->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    l->fd = l->dirfd < 0 ? -1 : openat(l->dirfd, l->name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (l->fd < 0 || fstat(l->fd, &l->st) != 0) {
        rc = os_err();
        goto fail;
    }
    if (!S_ISREG(l->st.st_mode)) {
        rc = S3_ERR_INVALID;
        goto fail;
    }
    if (flock(l->fd, LOCK_EX | LOCK_NB) != 0) {
        rc = errno == EWOULDBLOCK ? S3_ERR_BUSY : os_err();
        goto fail;
    }
    remove_stale_temps(l->dirfd, l->name, &l->st);
    return S3_OK;
fail:
    commit_unlock(l);
    return rc;
}

void commit_unlock(struct commit_lock *l)
{
    if (l->fd >= 0)
        close(l->fd); /* releases the flock */
    if (l->dirfd >= 0)
        close(l->dirfd);
    free(l->dir);
    free(l->name);
    memset(l, 0, sizeof *l);
    l->fd = l->dirfd = -1;
}

enum s3_err commit_unchanged(const struct commit_lock *l)
{
    struct stat now, held;
    if (fstatat(l->dirfd, l->name, &now, AT_SYMLINK_NOFOLLOW) != 0 || fstat(l->fd, &held) != 0)
        return S3_ERR_BUSY;
    return same_file(&now, &l->st) && same_file(&held, &l->st) ? S3_OK : S3_ERR_BUSY;
}

/* A fresh temporary beside the file into *fd, locked (so no later commit_lock takes it
 * for stale). */
static enum s3_err make_temp(const struct commit_lock *l, char *out, size_t outlen, int *fd)
{
    static unsigned counter;
    for (int tries = 0; tries < 100; tries++) {
        unsigned n = __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED);
        snprintf(out, outlen, ".%s" TEMP_TAG "%ld-%u", l->name, (long)getpid(), n);
        *fd = openat(l->dirfd, out, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (*fd >= 0) {
            if (flock(*fd, LOCK_EX | LOCK_NB) != 0) {
                enum s3_err rc = os_err();
                unlinkat(l->dirfd, out, 0);
                close(*fd);
                return rc;
            }
            return S3_OK;
        }
        if (errno != EEXIST)
            return os_err();
    }
    return S3_ERR_IO; /* 100 names of ours taken: not ours to remove */
}

/* The old file's bytes into fd (when a hard link cannot be made). */
static enum s3_err copy_old(const struct commit_lock *l, int fd)
{
    char buf[1 << 16];
    for (off_t at = 0;;) {
        ssize_t n = pread(l->fd, buf, sizeof buf, at);
        if (n < 0)
            return os_err();
        if (n == 0)
            return S3_OK;
        for (ssize_t done = 0; done < n;) {
            ssize_t w = write(fd, buf + done, (size_t)(n - done));
            if (w < 0)
                return os_err();
            done += w;
        }
        at += n;
    }
}

/* PATH~ = the old version, made whole under a temporary name and renamed into place. */
static enum s3_err make_backup(const struct commit_lock *l)
{
    enum s3_err rc = injected(COMMIT_STEP_BACKUP);
    if (rc)
        return rc;
    char tmp[4096], bak[4096];
    snprintf(bak, sizeof bak, "%s~", l->name);
    int fd;
    rc = make_temp(l, tmp, sizeof tmp, &fd);
    if (rc)
        return rc;
    close(fd);
    unlinkat(l->dirfd, tmp, 0);
    char self[64];
    snprintf(self, sizeof self, "/proc/self/fd/%d", l->fd);
    if (linkat(AT_FDCWD, self, l->dirfd, tmp, AT_SYMLINK_FOLLOW) != 0) {
        /* no hard links here (or no /proc): a copy */
        fd = openat(l->dirfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, l->st.st_mode & 07777);
        if (fd < 0)
            return os_err();
        rc = copy_old(l, fd);
        if (!rc && fsync(fd) != 0)
            rc = os_err();
        close(fd);
    }
    if (!rc && renameat(l->dirfd, tmp, l->dirfd, bak) != 0)
        rc = os_err();
    if (rc)
        unlinkat(l->dirfd, tmp, 0);
    return rc;
}

/* The new file's content, owner, mode and durability, before it takes the name. */
static enum s3_err fill_temp(struct commit_lock *l, int fd, commit_writer_fn *write_all, void *ctx)
{
    enum s3_err rc = injected(COMMIT_STEP_WRITE);
    if (!rc)
        rc = write_all(fd, ctx);
    if (rc)
        return rc;
    if (fchown(fd, l->st.st_uid, l->st.st_gid) != 0 && errno != EPERM)
        return os_err();
    if (fchmod(fd, l->st.st_mode & 07777) != 0)
        return os_err();
    rc = injected(COMMIT_STEP_FSYNC);
    if (!rc && fsync(fd) != 0)
        rc = os_err();
    return rc;
}

enum s3_err commit_replace(struct commit_lock *l, commit_writer_fn *write_all, void *ctx, bool backup)
{
    if (commit_unchanged(l))
        return S3_ERR_BUSY;
    char tmp[4096];
    int fd;
    enum s3_err rc = make_temp(l, tmp, sizeof tmp, &fd);
    if (rc)
        return rc;
    rc = fill_temp(l, fd, write_all, ctx);
    if (!rc && backup)
        rc = make_backup(l);
    if (!rc)
        rc = injected(COMMIT_STEP_RENAME);
    if (!rc && renameat(l->dirfd, tmp, l->dirfd, l->name) != 0)
        rc = os_err();
    if (rc) {
        unlinkat(l->dirfd, tmp, 0);
        close(fd);
        return rc;
    }
    /* renamed: the new file is PATH, and its lock is now the one that counts */
    close(l->fd);
    l->fd = fd;
    if (fstat(fd, &l->st) != 0)
        rc = os_err();
    enum s3_err synced = injected(COMMIT_STEP_DIRSYNC);
    if (!synced && fsync(l->dirfd) != 0)
        synced = os_err();
    return rc ? rc : synced;
}
