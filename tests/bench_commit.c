/* The -o rw commit split into its parts (scripts/bench.sh commit; not a test). Two modes:
 *
 *   bench_commit split FILE ROUNDS BACKUP   in-process, on FILE (not mounted): one 4-byte
 *       value changed (offset 24: a package's "created"), committed as a mount does
 *       (commit_replace writing through edits_write), each step timed through the commit's
 *       step hook, the old file kept open meanwhile as the mount's tree keeps it, and
 *       its last close timed apart; then FILE parsed again as the mount does after a
 *       commit (s3fs_open).
 *       Prints the best of ROUNDS of each part, in ms.
 *   bench_commit mount VALUE_FILE ROUNDS    through a mount: open(O_TRUNC), the write of a
 *       new value (the value write, before any commit) and the close (the commit), each
 *       the best of ROUNDS, in ms.
 *   bench_commit section VALUE_FILE INFO ROUNDS   the same for a value inside a compressed
 *       Granny section (scripts/bench.sh commit moves the file away first, so that each
 *       close's commit is refused, EBUSY, and every write lands in the compressed section
 *       with the ones before pending): the first close (the section expanded into its copy
 *       and stored raw) apart from the best of the others, and what each wrote into files
 *       (/info's "the last write into a compressed section wrote N bytes"): the write's
 *       own cost, the commit's store of the section excluded.
 *
 * The clock is here only: the product has a hook (commit_watch_steps), no timing. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fs/core/commit.h"
#include "fs/core/edit.h"
#include "fs/open/open.h"

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* The parts, in the order a commit runs them; PART_END is the commit's return. */
enum part { PART_WRITE, PART_FSYNC, PART_BACKUP, PART_RENAME, PART_DIRSYNC, PART_END, NPART };
static const char *const part_name[NPART - 1] = {"write (copy + edited chunks)", "fsync of the file",
                                                 "backup FILE~ (link)", "rename", "fsync of the folder"};

struct stamps {
    double at[NPART]; /* when each part began (0: not run) */
};

static void on_step(enum commit_step step, void *ctx)
{
    struct stamps *s = ctx;
    static const enum part of[] = {[COMMIT_STEP_WRITE] = PART_WRITE,   [COMMIT_STEP_FSYNC] = PART_FSYNC,
                                   [COMMIT_STEP_BACKUP] = PART_BACKUP, [COMMIT_STEP_RENAME] = PART_RENAME,
                                   [COMMIT_STEP_DIRSYNC] = PART_DIRSYNC};
    if (step != COMMIT_STEP_NONE)
        s->at[of[step]] = now_ms();
}

struct writer {
    int in_fd;
    uint64_t size;
    const struct edits *e;
};

static enum s3_err write_new(int fd, void *ctx)
{
    const struct writer *w = ctx;
    return edits_write(w->in_fd, w->size, w->e, NULL, 0, fd);
}

static int split(const char *path, int rounds, bool backup)
{
    double best[NPART], best_total = 1e9, best_parse = 1e9, best_drop = 1e9;
    for (int p = 0; p < NPART; p++)
        best[p] = 1e9;
    for (int r = 0; r < rounds; r++) {
        struct commit_lock l;
        enum s3_err rc = commit_lock(&l, path);
        if (rc) {
            fprintf(stderr, "bench_commit: %s: %s\n", path, s3_err_str(rc));
            return 1;
        }
        /* the old file stays open as the mount's tree keeps it; let go after the commit */
        int old = open(path, O_RDONLY | O_CLOEXEC);
        struct edits e = {0};
        uint8_t value[4] = {(uint8_t)r, 0, 0, 0};
        struct stamps s = {{0}};
        struct writer w = {l.fd, (uint64_t)l.st.st_size, &e};
        commit_watch_steps(on_step, &s);
        double start = now_ms();
        rc = edits_put(&e, 24, value, sizeof value);
        if (!rc)
            rc = commit_replace(&l, write_new, &w, backup);
        s.at[PART_END] = now_ms();
        commit_watch_steps(NULL, NULL);
        edits_clear(&e);
        commit_unlock(&l);
        double d0 = now_ms();
        if (old >= 0)
            close(old);
        if (now_ms() - d0 < best_drop)
            best_drop = now_ms() - d0;
        if (rc) {
            fprintf(stderr, "bench_commit: commit: %s\n", s3_err_str(rc));
            return 1;
        }
        if (s.at[PART_END] - start < best_total)
            best_total = s.at[PART_END] - start;
        for (int p = 0; p < PART_END; p++) {
            if (!s.at[p])
                continue;
            int next = p + 1;
            while (!s.at[next])
                next++;
            if (s.at[next] - s.at[p] < best[p])
                best[p] = s.at[next] - s.at[p];
        }
        char err[512];
        struct s3fs *fs = NULL;
        double t0 = now_ms();
        if (s3fs_open(&fs, path, NULL, err, sizeof err)) {
            fprintf(stderr, "bench_commit: reparse: %s\n", err);
            return 1;
        }
        double t1 = now_ms();
        s3fs_close(fs);
        if (t1 - t0 < best_parse)
            best_parse = t1 - t0;
    }
    printf("commit in-process (backup %s), best of %d, ms:\n", backup ? "on" : "off", rounds);
    for (int p = 0; p < PART_END; p++)
        if (best[p] < 1e9)
            printf("  %-30s %8.1f\n", part_name[p], best[p]);
    printf("  %-30s %8.1f\n", "whole commit", best_total);
    printf("  %-30s %8.1f  (after the close: not part of it)\n", "reparse of the new file", best_parse);
    printf("  %-30s %8.1f  (%s)\n", "old file let go", best_drop,
           backup ? "kept as FILE~; the FILE~ before it goes at the backup's rename"
                  : "its blocks freed, when its tree is freed: after the close");
    return 0;
}

static int through_mount(const char *value_file, int rounds)
{
    double best_open = 1e9, best_write = 1e9, best_close = 1e9;
    for (int r = 0; r < rounds; r++) {
        char text[32];
        int n = snprintf(text, sizeof text, "%d\n", 100 + r);
        double t0 = now_ms();
        int fd = open(value_file, O_WRONLY | O_TRUNC);
        double topen = now_ms();
        if (fd < 0 || write(fd, text, (size_t)n) != n) {
            fprintf(stderr, "bench_commit: %s: %s\n", value_file, strerror(errno));
            return 1;
        }
        double t1 = now_ms();
        if (close(fd) != 0) {
            fprintf(stderr, "bench_commit: close (the commit): %s\n", strerror(errno));
            return 1;
        }
        double t2 = now_ms();
        if (topen - t0 < best_open)
            best_open = topen - t0;
        if (t1 - topen < best_write)
            best_write = t1 - topen;
        if (t2 - t1 < best_close)
            best_close = t2 - t1;
        usleep(200000); /* the new file's parse, after the close, out of the next round */
    }
    printf("through the mount, best of %d: open (O_TRUNC, path looked up again after a commit) %.3f ms; "
           "value write %.3f ms; close (the commit) %.1f ms\n",
           rounds, best_open, best_write, best_close);
    return 0;
}

/* /info's bytes the last write into a compressed section wrote into files (-1: no line). */
static long long section_write_bytes(const char *info)
{
    FILE *f = fopen(info, "r");
    char line[512];
    long long n = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "rw: the last write into a compressed section wrote %lld bytes", &n) == 1)
            break;
    if (f)
        fclose(f);
    return n;
}

static int in_section(const char *value_file, const char *info, int rounds)
{
    double first = 0, best = 1e9;
    long long first_bytes = -1, most_bytes = -1;
    for (int r = 0; r < rounds; r++) {
        char text[32];
        int n = snprintf(text, sizeof text, "%d\n", 100 + r);
        double t0 = now_ms();
        int fd = open(value_file, O_WRONLY | O_TRUNC);
        if (fd < 0 || write(fd, text, (size_t)n) != n) {
            fprintf(stderr, "bench_commit: %s: %s\n", value_file, strerror(errno));
            return 1;
        }
        if (close(fd) != 0 && errno != EBUSY) { /* EBUSY: the commit refused, as meant */
            fprintf(stderr, "bench_commit: close: %s\n", strerror(errno));
            return 1;
        }
        double d = now_ms() - t0;
        long long bytes = section_write_bytes(info);
        if (r == 0) {
            first = d, first_bytes = bytes;
        } else {
            best = d < best ? d : best;
            most_bytes = bytes > most_bytes ? bytes : most_bytes;
        }
    }
    printf("value in a compressed section, through the mount (commits refused): first write %.1f ms "
           "(%lld bytes into files); the next %d, best %.1f ms (at most %lld bytes into files each)\n",
           first, first_bytes, rounds - 1, best, most_bytes);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 5 && strcmp(argv[1], "split") == 0)
        return split(argv[2], atoi(argv[3]), atoi(argv[4]) != 0);
    if (argc == 4 && strcmp(argv[1], "mount") == 0)
        return through_mount(argv[2], atoi(argv[3]));
    if (argc == 5 && strcmp(argv[1], "section") == 0)
        return in_section(argv[2], argv[3], atoi(argv[4]));
    fprintf(stderr, "usage: bench_commit split FILE ROUNDS BACKUP | mount VALUE_FILE ROUNDS | "
                    "section VALUE_FILE INFO ROUNDS\n");
    return 1;
}
