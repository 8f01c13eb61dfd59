#include "mountutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "fixture.h"
#include "testutil.h"

char tmpdir[64];
char sandir[128];
const char *mount_bin;

bool mounts_disabled(void)
{
    const char *v = getenv("S3RIG_NO_MOUNT_TESTS");
    return v && strcmp(v, "1") == 0;
}

void run_mount_test(void **state)
{
    const struct mount_test *t = *state;
    if (mounts_disabled())
        skip();
    t->fn(state);
}

int mount_group_setup(void **state)
{
    (void)state;
    mount_bin = getenv("S3RIG_MOUNT");
    if (!mount_bin)
        mount_bin = "mount.s3rig";
    snprintf(tmpdir, sizeof tmpdir, "/tmp/s3rig-%.24s-XXXXXX", program_invocation_short_name);
    if (!mkdtemp(tmpdir))
        return -1;
    snprintf(sandir, sizeof sandir, "%s/san", tmpdir);
    mkdir(sandir, 0700);
    return 0;
}

int mount_group_teardown(void **state)
{
    (void)state;
    char cmd[256];
    snprintf(cmd, sizeof cmd, "for m in %s/m*; do fusermount3 -uz \"$m\" 2>/dev/null; done; rm -rf %s", tmpdir, tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

void child_env(void)
{
    char asan[256], ubsan[256];
    snprintf(asan, sizeof asan, "log_path=%s/asan:detect_leaks=1", sandir);
    snprintf(ubsan, sizeof ubsan, "log_path=%s/ubsan:print_stacktrace=1", sandir);
    setenv("ASAN_OPTIONS", asan, 1);
    setenv("UBSAN_OPTIONS", ubsan, 1);
}

/* Reads what a child wrote to `file` into buf (NUL-terminated; nothing if buf is NULL). */
static void read_capture(const char *file, char *buf, size_t len)
{
    if (!buf)
        return;
    FILE *f = fopen(file, "r");
    size_t n = f ? fread(buf, 1, len - 1, f) : 0;
    buf[n] = 0;
    if (f)
        fclose(f);
}

/* Runs argv with stdin from /dev/null, stdout to out_path (NULL: /dev/null) and stderr
 * to err_path; returns the exit status (128 + signal if killed). */
static int run_files(char *const argv[], const char *out_path, const char *err_path)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int nul = open("/dev/null", O_RDWR);
        dup2(nul, 0);
        dup2(out_path ? open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600) : nul, 1);
        dup2(open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600), 2);
        child_env();
        execvp(argv[0], argv);
        _exit(127);
    }
    int status;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int run_capture(char *const argv[], char *out, size_t outlen, char *err, size_t errlen)
{
    char outfile[128], errfile[128];
    snprintf(outfile, sizeof outfile, "%s/stdout", tmpdir);
    snprintf(errfile, sizeof errfile, "%s/stderr", tmpdir);
    int rc = run_files(argv, out ? outfile : NULL, errfile);
    read_capture(outfile, out, outlen);
    read_capture(errfile, err, errlen);
    return rc;
}

int run_to(char *const argv[], const char *out_path, char *err, size_t errlen)
{
    char errfile[128];
    snprintf(errfile, sizeof errfile, "%s/stderr", tmpdir);
    int rc = run_files(argv, out_path, errfile);
    read_capture(errfile, err, errlen);
    return rc;
}

int run(char *const argv[], char *errbuf, size_t errlen)
{
    return run_capture(argv, NULL, 0, errbuf, errlen);
}

const char *cli_bin(void)
{
    const char *c = getenv("S3RIG_CLI");
    return c ? c : "s3rig";
}

bool is_mounted(const char *mnt)
{
    char parent[512];
    snprintf(parent, sizeof parent, "%s/..", mnt);
    struct stat a, b;
    return stat(mnt, &a) == 0 && stat(parent, &b) == 0 && a.st_dev != b.st_dev;
}

void write_fixture(const char *name, const void *data, size_t size, char *path, size_t plen)
{
    snprintf(path, plen, "%s/%s", tmpdir, name);
    assert_int_equal(fx_write_file(path, data, size), 0);
}

void make_mountpoint(const char *name, char *path, size_t plen)
{
    snprintf(path, plen, "%s/%s", tmpdir, name);
    mkdir(path, 0755);
}

void do_mount(const char *file, const char *mnt, const char *opts)
{
    mkdir(mnt, 0755);
    char err[1024];
    char *argv[8] = {(char *)mount_bin, NULL};
    int argc = 1;
    if (opts) {
        argv[argc++] = "-o";
        argv[argc++] = (char *)opts;
    }
    argv[argc++] = (char *)file;
    argv[argc++] = (char *)mnt;
    int rc = run(argv, err, sizeof err);
    if (rc != 0)
        fail_msg("mount.s3rig %s %s: exit %d: %s", file, mnt, rc, err);
    assert_true(is_mounted(mnt));
}

pid_t start_mount_fg(const char *file, const char *mnt, const char *opts)
{
    mkdir(mnt, 0755);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int nul = open("/dev/null", O_RDWR);
        dup2(nul, 0);
        dup2(nul, 1);
        /* as from a terminal: whatever this process ignores, the server's signals act */
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        child_env();
        if (opts)
            execl(mount_bin, mount_bin, "-f", "-o", opts, file, mnt, (char *)NULL);
        else
            execl(mount_bin, mount_bin, "-f", file, mnt, (char *)NULL);
        _exit(127);
    }
    /* up to 30 s: a sanitized daemon on a loaded CI machine starts slowly; one that
     * ended instead is said at once */
    int status;
    for (int i = 0; i < 3000 && !is_mounted(mnt); i++) {
        if (waitpid(pid, &status, WNOHANG) == pid)
            fail_msg("mount.s3rig -f %s %s ended before mounting (%s %d)", file, mnt,
                     WIFEXITED(status) ? "exit status" : "signal",
                     WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        usleep(10000);
    }
    if (!is_mounted(mnt))
        fail_msg("mount.s3rig -f %s %s: not mounted after 30 s", file, mnt);
    return pid;
}

void do_umount(const char *mnt)
{
    char *argv[] = {"fusermount3", "-u", (char *)mnt, NULL};
    assert_int_equal(run(argv, NULL, 0), 0);
    assert_false(is_mounted(mnt));
}

void wait_unlocked(const char *path)
{
    for (int i = 0; i < 1000; i++) {
        int fd = open(path, O_RDONLY);
        assert_true(fd >= 0);
        int rc = flock(fd, LOCK_EX | LOCK_NB);
        close(fd);
        if (rc == 0)
            return;
        usleep(10000);
    }
    fail_msg("%s still locked", path);
}

void umount_rw(const char *mnt, const char *file)
{
    do_umount(mnt);
    wait_unlocked(file);
}

int write_file(const char *path, int flags, const void *b, size_t len, char *step)
{
    int fd = open(path, flags);
    if (fd < 0) {
        *step = 'o';
        return errno;
    }
    errno = 0;
    if (write(fd, b, len) != (ssize_t)len) {
        int e = errno ? errno : EIO; /* a short write sets none */
        close(fd);
        *step = 'w';
        return e;
    }
    *step = 'c';
    return close(fd) ? errno : 0;
}

void assert_file_is(const char *path, const void *want, size_t size)
{
    size_t n;
    uint8_t *got = slurp_path(path, &n);
    assert_int_equal(n, size);
    assert_memory_equal(got, want, size);
    free(got);
}

void test_no_sanitizer_reports(void **state)
{
    (void)state;
    sleep(1); /* daemons exit after unmount; let them write their reports */
    DIR *d = opendir(sandir);
    assert_non_null(d);
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        char f[512];
        snprintf(f, sizeof f, "%s/%s", sandir, de->d_name);
        size_t len;
        uint8_t *text = slurp_path(f, &len);
        fprintf(stderr, "sanitizer report from a child in %s:\n%.*s\n", f, (int)len, (char *)text);
        free(text);
        fail();
    }
    closedir(d);
}

/* ---- digests of mounted trees ---- */

static uint64_t fnv_add(uint64_t h, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

/* Adds path (a node below the walk's root, named name) to *h; its subdirectory names to
 * *sub (malloc'd, NULL-terminated) when it is a directory. 0 or an errno. */
/* An /info file, of the mount or of a view nested in it (type "info"): rendered live (the
 * cache line, what the readers so far made the view expand), so neither its bytes nor its
 * size are the same from one reader to the next; the digests leave it out. */
static bool is_live_info(const char *dir, const char *name)
{
    if (strcmp(name, "info") != 0)
        return false;
    char path[4096], type[16];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    ssize_t n = lgetxattr(path, "user.s3rig.type", type, sizeof type);
    return n == 4 && memcmp(type, "info", 4) == 0;
}

static int digest_node(const char *path, const char *name, uint64_t *h, char ***sub)
{
    struct stat st;
    if (lstat(path, &st))
        return errno;
    int kind = S_ISDIR(st.st_mode) ? 0 : S_ISREG(st.st_mode) ? 1 : 2; /* enum node_type */
    *h = fnv_add(*h, &kind, sizeof kind);
    static const char *const xattrs[] = {"user.s3rig.type", "user.s3rig.offset", "user.s3rig.length"};
    for (int k = 0; name && k < 3; k++) {
        char x[256];
        ssize_t xl = lgetxattr(path, xattrs[k], x, sizeof x);
        if (xl < 0 && errno != ENODATA)
            return errno;
        xl = xl < 0 ? -ENODATA : xl; /* what walk.c hashes of tree_getxattr's NO_ATTR */
        *h = fnv_add(*h, &xl, sizeof xl);
        if (xl > 0)
            *h = fnv_add(*h, x, (size_t)xl);
    }
    if (name)
        *h = fnv_add(*h, name, strlen(name) + 1);
    if (kind == 2) {
        char t[4096];
        ssize_t k = readlink(path, t, sizeof t);
        if (k < 0)
            return errno;
        *h = fnv_add(*h, t, (size_t)k);
        return 0;
    }
    if (kind == 1) {
        uint64_t size = (uint64_t)st.st_size, got = 0;
        *h = fnv_add(*h, &size, sizeof size);
        int fd = open(path, O_RDONLY);
        if (fd < 0)
            return errno;
        uint8_t buf[65536];
        ssize_t k;
        while ((k = read(fd, buf, sizeof buf)) > 0) {
            *h = fnv_add(*h, buf, (size_t)k);
            got += (uint64_t)k;
        }
        int e = k < 0 ? errno : got != size ? EIO : 0;
        close(fd);
        if (e) /* which file, in the failing test's output */
            fprintf(stderr, "mount_digest: %s: %s (read %llu of %llu bytes)\n", path, strerror(e),
                    (unsigned long long)got, (unsigned long long)size);
        return e;
    }
    DIR *d = opendir(path);
    if (!d)
        return errno;
    size_t n = 0;
    char **names = malloc(sizeof *names);
    struct dirent *de;
    errno = 0;
    while (names && (de = readdir(d))) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 || is_live_info(path, de->d_name))
            continue;
        char **m = realloc(names, (n + 2) * sizeof *names);
        if (!m)
            break;
        names = m;
        names[n++] = strdup(de->d_name);
    }
    int e = errno;
    closedir(d);
    if (!names)
        return ENOMEM;
    names[n] = NULL;
    uint32_t nc = (uint32_t)n;
    *h = fnv_add(*h, &nc, sizeof nc);
    *sub = names;
    return e;
}

int mount_digest(const char *dir, uint64_t *digest, size_t *nodes)
{
    /* depth first, children in listing order: an explicit stack of paths */
    size_t cap = 64, top = 0;
    char **stack = malloc(cap * sizeof *stack);
    uint64_t h = 0xcbf29ce484222325ull;
    int e = stack ? 0 : ENOMEM;
    *nodes = 0;
    if (!e && !(stack[top++] = strdup(dir)))
        e = ENOMEM;
    bool root = true;
    while (!e && top > 0) {
        char *path = stack[--top];
        char **sub = NULL;
        const char *slash = strrchr(path, '/');
        e = digest_node(path, root ? NULL : slash + 1, &h, &sub);
        (*nodes)++;
        root = false;
        size_t n = 0;
        while (sub && sub[n])
            n++;
        for (size_t i = n; i-- > 0 && !e;) {
            if (top == cap) {
                char **s = realloc(stack, 2 * cap * sizeof *s);
                if (!s) {
                    e = ENOMEM;
                    break;
                }
                stack = s;
                cap *= 2;
            }
            if (asprintf(&stack[top], "%s/%s", path, sub[i]) < 0)
                e = ENOMEM;
            else
                top++;
        }
        for (size_t i = 0; i < n; i++)
            free(sub[i]);
        free(sub);
        free(path);
    }
    while (top > 0)
        free(stack[--top]);
    free(stack);
    *digest = h;
    return e;
}
