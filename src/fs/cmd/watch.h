/* Following a folder while it is mounted: a thread of its own reads inotify events on the
 * folder and its subfolders and, once they have been quiet for WATCH_QUIET_MS (or have
 * kept coming for WATCH_MAX_WAIT_MS), calls back once for all of them.
 * - changed(ctx) runs on the watch's thread; it must not block on FUSE requests.
 * - Subfolders are watched down to WATCH_MAX_DEPTH levels, those created later too;
 *   symbolic links are not followed. A subfolder that cannot be watched (the inotify
 *   limit) is reported once on stderr and the rest still works.
 * - folder_watch_stop joins the thread; no callback runs after it returns. */
#ifndef S3_WATCH_H
#define S3_WATCH_H

#define WATCH_QUIET_MS 200
#define WATCH_MAX_WAIT_MS 1000
#define WATCH_MAX_DEPTH 32

struct folder_watch;

/* 0, or -errno (no inotify, no thread, no memory). */
int folder_watch_start(struct folder_watch **w, const char *dir, void (*changed)(void *ctx), void *ctx);
void folder_watch_stop(struct folder_watch *w);

#endif
