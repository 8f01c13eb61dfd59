/* The floor of scripts/bench.sh folder: the smallest C loop reading every package's
 * header and index under a folder (nftw, no link followed; open, two preads, close),
 * timed. Prints "floor: N packages, M entries, S s". With --lstat PATH: one lstat(2) of
 * PATH timed in-process (a lookup through a mount without a process start in the time):
 * "lstat: S s". With --list DIR: every entry of DIR read (opendir, readdir to the end)
 * timed in-process, as the floor is: "list: N entries, S s". A benchmark, not a test. */
#define _XOPEN_SOURCE 700
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static uint64_t packages, entries;
static uint8_t *index_buf;
static size_t index_cap;

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int visit(const char *path, const struct stat *st, int kind, struct FTW *ftw)
{
    (void)ftw;
    size_t n = strlen(path);
    if (kind != FTW_F || n < 8 || strcmp(path + n - 8, ".package") != 0)
        return 0;
    int fd = open(path, O_RDONLY);
    uint8_t h[96];
    if (fd < 0)
        return 0;
    if (pread(fd, h, sizeof h, 0) == (ssize_t)sizeof h && memcmp(h, "DBPF", 4) == 0) {
        uint32_t pos = le32(h + 0x40) ? le32(h + 0x40) : le32(h + 0x28), size = le32(h + 0x2C);
        if ((uint64_t)pos + size <= (uint64_t)st->st_size) {
            if (size > index_cap) {
                free(index_buf);
                index_buf = malloc(size);
                index_cap = index_buf ? size : 0;
            }
            if (index_buf && pread(fd, index_buf, size, pos) == (ssize_t)size) {
                packages++;
                entries += le32(h + 0x24);
            }
        }
    }
    close(fd);
    return 0;
}

static double since(const struct timespec *a)
{
    struct timespec b;
    clock_gettime(CLOCK_MONOTONIC, &b);
    return (double)(b.tv_sec - a->tv_sec) + (b.tv_nsec - a->tv_nsec) / 1e9;
}

/* The listing alone: no process start, no sort of the names (what ls adds is its own). */
static int list_dir(const char *path)
{
    struct timespec a;
    clock_gettime(CLOCK_MONOTONIC, &a);
    DIR *d = opendir(path);
    if (!d) {
        perror(path);
        return 1;
    }
    unsigned long long n = 0;
    errno = 0;
    for (const struct dirent *e; (e = readdir(d));)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    int failed = errno;
    closedir(d);
    if (failed) {
        fprintf(stderr, "%s: %s\n", path, strerror(failed));
        return 1;
    }
    printf("list: %llu entries, %.6f s\n", n, since(&a));
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--list") == 0)
        return list_dir(argv[2]);
    if (argc == 3 && strcmp(argv[1], "--lstat") == 0) {
        struct stat st;
        struct timespec a;
        clock_gettime(CLOCK_MONOTONIC, &a);
        int rc = lstat(argv[2], &st);
        double s = since(&a);
        if (rc != 0) {
            perror(argv[2]);
            return 1;
        }
        printf("lstat: %.6f s\n", s);
        return 0;
    }
    if (argc != 2) {
        fprintf(stderr, "usage: bench_folder DIR\n");
        return 1;
    }
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    if (nftw(argv[1], visit, 64, FTW_PHYS) != 0) {
        perror(argv[1]);
        return 1;
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("floor: %llu packages, %llu entries, %.3f s\n", (unsigned long long)packages,
           (unsigned long long)entries, (double)(b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9);
    free(index_buf);
    return 0;
}
