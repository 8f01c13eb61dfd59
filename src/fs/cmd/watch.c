/* The folder watch (watch.h): inotify, a pipe to stop the thread, a debounce. */
#include "fs/cmd/watch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

#define WATCH_EVENTS (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE | IN_ONLYDIR | IN_DONT_FOLLOW)

/* What a watch descriptor stands for: its path (to watch subfolders made in it) and depth. */
struct watched {
    int wd;
    unsigned depth;
    char *path;
};

struct folder_watch {
    int ifd, stop[2];
    pthread_t thread;
    void (*changed)(void *);
    void *ctx;
    struct watched *dirs;
    size_t ndirs, cap;
    bool warned;
};

static void warn_once(struct folder_watch *w, const char *path, int err)
{
    if (!w->warned)
        fprintf(stderr, "mount.s3rig: cannot watch %s (%s): changes below it are not followed\n", path,
                strerror(err));
    w->warned = true;
}

static struct watched *find_wd(struct folder_watch *w, int wd)
{
    for (size_t k = 0; k < w->ndirs; k++)
        if (w->dirs[k].wd == wd)
            return &w->dirs[k];
    return NULL;
}

static void forget_wd(struct folder_watch *w, int wd)
{
    struct watched *d = find_wd(w, wd);
    if (!d)
        return;
    free(d->path);
    *d = w->dirs[--w->ndirs];
}

/* Watches path and, below WATCH_MAX_DEPTH, its subfolders (a folder already watched, by
 * a move or a second event, is watched once: inotify gives it the same descriptor). */
static void add_tree(struct folder_watch *w, const char *path, unsigned depth)
{
    int wd = inotify_add_watch(w->ifd, path, WATCH_EVENTS);
    if (wd < 0) {
        if (errno != ENOENT && errno != ENOTDIR)
            warn_once(w, path, errno);
        return;
    }
    if (!find_wd(w, wd)) {
        if (w->ndirs == w->cap) {
            size_t cap = w->cap ? 2 * w->cap : 16;
            struct watched *d = realloc(w->dirs, cap * sizeof *d);
            if (!d) {
                warn_once(w, path, ENOMEM);
                return;
            }
            w->dirs = d;
            w->cap = cap;
        }
        char *copy = strdup(path);
        if (!copy) {
            warn_once(w, path, ENOMEM);
            return;
        }
        w->dirs[w->ndirs++] = (struct watched){wd, depth, copy};
    }
    if (depth >= WATCH_MAX_DEPTH)
        return;
    DIR *d = opendir(path);
    if (!d)
        return;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_type != DT_DIR || strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue; /* DT_LNK: links are not followed */
        char *sub = NULL;
        if (asprintf(&sub, "%s/%s", path, e->d_name) < 0) {
            warn_once(w, path, ENOMEM);
            break;
        }
        add_tree(w, sub, depth + 1);
        free(sub);
    }
    closedir(d);
}

/* Reads what is pending; true when something changed. New subfolders get watched. */
static bool drain(struct folder_watch *w)
{
    char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
    bool any = false;
    for (;;) {
        ssize_t n = read(w->ifd, buf, sizeof buf);
        if (n <= 0)
            return any;
        for (char *p = buf; p < buf + n;) {
            const struct inotify_event *ev = (const struct inotify_event *)p;
            p += sizeof *ev + ev->len;
            if (ev->mask & IN_Q_OVERFLOW) {
                any = true;
                continue;
            }
            if (ev->mask & IN_IGNORED) { /* the folder went away: its descriptor is free */
                forget_wd(w, ev->wd);
                continue;
            }
            any = true;
            struct watched *dir = find_wd(w, ev->wd);
            if (dir && ev->len && (ev->mask & IN_ISDIR) && (ev->mask & (IN_CREATE | IN_MOVED_TO)) &&
                dir->depth < WATCH_MAX_DEPTH) {
                char *sub = NULL;
                unsigned depth = dir->depth + 1;
                if (asprintf(&sub, "%s/%s", dir->path, ev->name) >= 0) {
                    add_tree(w, sub, depth); /* may move w->dirs: dir is not used after */
                    free(sub);
                }
            }
        }
    }
}

static uint64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

/* Waits for events; after the first, keeps reading until WATCH_QUIET_MS pass without one
 * (a copy of many files is one change) or WATCH_MAX_WAIT_MS since the first. */
static void *run(void *arg)
{
    struct folder_watch *w = arg;
    struct pollfd p[2] = {{.fd = w->ifd, .events = POLLIN}, {.fd = w->stop[0], .events = POLLIN}};
    uint64_t first = 0;
    for (;;) {
        int timeout = -1;
        if (first) {
            uint64_t waited = now_ms() - first;
            timeout = waited >= WATCH_MAX_WAIT_MS ? 0 : WATCH_QUIET_MS;
        }
        int n = poll(p, 2, timeout);
        if (n < 0 && errno != EINTR)
            break;
        if (p[1].revents)
            break;
        if (n > 0 && (p[0].revents & POLLIN) && drain(w) && !first)
            first = now_ms();
        if (first && (n == 0 || now_ms() - first >= WATCH_MAX_WAIT_MS)) {
            first = 0;
            w->changed(w->ctx);
        }
    }
    return NULL;
}

int folder_watch_start(struct folder_watch **out, const char *dir, void (*changed)(void *ctx), void *ctx)
{
    struct folder_watch *w = calloc(1, sizeof *w);
    if (!w)
        return -ENOMEM;
    w->changed = changed;
    w->ctx = ctx;
    w->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    int rc = 0;
    if (w->ifd < 0 || pipe2(w->stop, O_CLOEXEC) != 0) {
        rc = -errno;
        if (w->ifd >= 0)
            close(w->ifd);
        free(w);
        return rc;
    }
    add_tree(w, dir, 0);
    rc = -pthread_create(&w->thread, NULL, run, w);
    if (rc) {
        w->thread = pthread_self();
        folder_watch_stop(w);
        return rc;
    }
    *out = w;
    return 0;
}

void folder_watch_stop(struct folder_watch *w)
{
    if (!w)
        return;
    if (!pthread_equal(w->thread, pthread_self())) {
        (void)!write(w->stop[1], "x", 1);
        pthread_join(w->thread, NULL);
    }
    close(w->stop[0]);
    close(w->stop[1]);
    close(w->ifd);
    for (size_t k = 0; k < w->ndirs; k++)
        free(w->dirs[k].path);
    free(w->dirs);
    free(w);
}
