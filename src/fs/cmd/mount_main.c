/* mount.s3rig: the command line. Two calling conventions:
 *   direct:        mount.s3rig [-f] [-d] [-s] [-o OPTS] FILE DIR      (-f = foreground)
 *   mount(8) helper: mount.s3rig FILE DIR [-sfnv] [-o OPTS]           (-f = fake, -s = sloppy,
 *                  -n = no mtab, -v = verbose), chosen when our parent is mount(8) or
 *                  when S3RIG_MOUNT_HELPER=1.
 * FILE is opened and parsed before anything is mounted, so an unreadable or unknown
 * file fails with one line on stderr and nothing mounted. */
#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs/cmd/fuse_ll.h"
#include "fs/core/cache.h"
#include "fs/open/open.h"
#include "fs/open/options.h"
#include "parse/t2fs/t2fs.h"

struct cmdline {
    const char *file, *dir;
    bool helper, foreground, debug, single_thread, fake, sloppy, verbose;
    struct s3_fuse_config fc;
    struct s3_options opts; /* -o values from the shared table (options.c) */
    char *fuse_opts; /* comma-separated, for libfuse */
};

static void usage(FILE *f)
{
    char formats[400];
    format_list(formats, sizeof formats, offsetof(struct s3_format_info, usage)); /* the format table's */
    fprintf(f, "usage: mount.s3rig [options] FILE DIR\n"
               "Mounts a %s file\n"
               "as a directory tree, read-only unless -o rw.\n"
               "\n"
               "  -f            stay in the foreground (as mount(8) helper: fake, do not mount)\n"
               "  -d            debug: foreground, print every FUSE request\n"
               "  -s            single-threaded (as mount(8) helper: sloppy, ignore unknown options)\n"
               "  -o OPTS       comma-separated mount options:\n",
            formats);
    s3_options_help(f, OPT_SHARED | OPT_MOUNT, "      ");
    fprintf(f, "      ro (the default), allow_other, allow_root and libfuse's own options;\n"
               "      spin=0: libfuse's multi-threaded loop (single-threaded with -s)\n"
               "  --print-schema[=turok1|turok2]  print a built-in t2fs schema as JSON\n"
               "  -h, --help    this text\n"
               "  -V, --version the version\n"
               "\n"
               "Unmount with: fusermount3 -u DIR   (or umount DIR as root)\n"
               "Exit status: 0 mounted, 1 usage, 2 cannot open FILE, 3 unrecognised format,\n"
               "             4 mount failed. See mount.s3rig(8) and s3rig(5).\n");
}

/* Options that mount(8)/fstab pass and a FUSE file system has no use for. */
static bool ignored_option(const char *o)
{
    static const char *const list[] = {"user", "nouser", "users", "auto", "noauto", "_netdev", "nofail",
                                       "defaults", "ro", "owner", "group", "comment", "x-", "loop", NULL};
    for (int i = 0; list[i]; i++) {
        size_t n = strlen(list[i]);
        if (strcmp(o, list[i]) == 0 || (list[i][n - 1] == '-' && strncmp(o, list[i], n) == 0) ||
            (strncmp(o, "comment=", 8) == 0))
            return true;
    }
    return false;
}

/* libfuse options we pass through in sloppy mode (the rest are dropped). */
static bool known_fuse_option(const char *o)
{
    static const char *const list[] = {"allow_other", "allow_root", "auto_unmount", "nosuid", "suid", "nodev",
                                       "dev", "noexec", "exec", "noatime", "atime", "relatime", "sync", "async",
                                       "dirsync", "max_read=", "max_readahead=", "blksize=", "context=",
                                       "fscontext=", "defcontext=", "rootcontext=", NULL};
    for (int i = 0; list[i]; i++) {
        size_t n = strlen(list[i]);
        if (list[i][n - 1] == '=' ? strncmp(o, list[i], n) == 0 : strcmp(o, list[i]) == 0)
            return true;
    }
    return false;
}

static int append_fuse_opt(struct cmdline *c, const char *o)
{
    size_t old = c->fuse_opts ? strlen(c->fuse_opts) : 0;
    char *p = realloc(c->fuse_opts, old + strlen(o) + 2);
    if (!p)
        return -1;
    if (old)
        p[old++] = ',';
    strcpy(p + old, o);
    c->fuse_opts = p;
    return 0;
}

/* An -o item the shared table does not know: ignored (mount(8)'s), passed to libfuse (the
 * libfuse options above), or unknown: a usage error naming it, before FILE is opened
 * (libfuse would refuse it only when mounting), or ignored when sloppy (-s as helper). */
static int take_other_option(const char *o, void *ctx)
{
    struct cmdline *c = ctx;
    if (ignored_option(o))
        return 0;
    if (known_fuse_option(o))
        return append_fuse_opt(c, o);
    if (!c->sloppy) {
        fprintf(stderr, "mount.s3rig: unknown option '%s' (see mount.s3rig(8))\n", o);
        return -1;
    }
    if (c->verbose)
        fprintf(stderr, "mount.s3rig: ignoring option '%s'\n", o);
    return 0;
}

/* mount(8) passes "rw" to its helpers whether the user asked for it or not: as a helper,
 * only "writable" makes the mount writable (a copy of list without the bare "rw"). */
static char *helper_list(const char *list)
{
    char *out = calloc(1, strlen(list) + 1), *copy = strdup(list), *save = NULL;
    if (!out || !copy) {
        free(out);
        free(copy);
        return NULL;
    }
    for (char *it = strtok_r(copy, ",", &save); it; it = strtok_r(NULL, ",", &save)) {
        if (strcmp(it, "rw") == 0)
            continue;
        if (*out)
            strcat(out, ",");
        strcat(out, it);
    }
    free(copy);
    return out;
}

static int take_options(struct cmdline *c, const char *given)
{
    char err[600];
    char *own = c->helper ? helper_list(given) : NULL;
    if (c->helper && !own)
        return -1;
    const char *list = own ? own : given;
    int rc = s3_options_take_list(&c->opts, OPT_SHARED | OPT_MOUNT, list, take_other_option, c, err, sizeof err);
    free(own);
    if (rc) {
        if (err[0])
            fprintf(stderr, "mount.s3rig: %s\n", err);
        return -1;
    }
    return 0;
}

/* mount(8) runs helpers as its child: that is how we know -f means "fake". */
static bool called_by_mount(void)
{
    const char *env = getenv("S3RIG_MOUNT_HELPER");
    if (env)
        return strcmp(env, "1") == 0;
    char path[64], comm[64] = "";
    snprintf(path, sizeof path, "/proc/%d/comm", (int)getppid());
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    if (!fgets(comm, sizeof comm, f))
        comm[0] = 0;
    fclose(f);
    comm[strcspn(comm, "\n")] = 0;
    return strcmp(comm, "mount") == 0;
}

/* Returns -1 to exit with usage error, 1 when --help/--version were handled. */
static int parse_cmdline(struct cmdline *c, int argc, char **argv, const char **optlists)
{
    static const struct option longopts[] = {{"help", no_argument, NULL, 'h'},
                                             {"version", no_argument, NULL, 'V'},
                                             {"print-schema", optional_argument, NULL, 'P'},
                                             {NULL, 0, NULL, 0}};
    c->helper = called_by_mount();
    c->opts.uid = getuid();
    c->opts.gid = getgid();
    c->opts.spin_us = S3_DEFAULT_SPIN_US;
    int nopt = 0, ch; /* optlists has room for argc lists */
    /* '+' would stop at FILE; the helper convention puts options after the operands. */
    while ((ch = getopt_long(argc, argv, "fdsnvo:hV", longopts, NULL)) != -1) {
        switch (ch) {
        case 'f':
            if (c->helper)
                c->fake = true;
            else
                c->foreground = true;
            break;
        case 'd':
            c->debug = c->foreground = true;
            break;
        case 's':
            if (c->helper)
                c->sloppy = true;
            else
                c->single_thread = true;
            break;
        case 'n':
            break; /* no mtab: there is none to write */
        case 'v':
            c->verbose = true;
            break;
        case 'o':
            optlists[nopt++] = optarg;
            break;
        case 'h':
            usage(stdout);
            return 1;
        case 'V':
            printf("mount.s3rig %s\n", S3RIG_VERSION);
            return 1;
        case 'P': {
            /* a starting point for -o schema=FILE: the built-in schema as JSON */
            struct t2fs_schema *s;
            enum s3_err e = t2fs_schema_builtin(optarg ? optarg : "turok2", &s);
            char *json = s ? t2fs_schema_to_json(s) : NULL;
            t2fs_schema_free(s);
            if (e == S3_ERR_UNSUPPORTED) {
                fprintf(stderr, "mount.s3rig: unknown schema '%s' (turok1, turok2)\n", optarg ? optarg : "");
                return -1;
            }
            if (!json) {
                fprintf(stderr, "mount.s3rig: %s\n", s3_err_str(S3_ERR_NOMEM));
                return -1;
            }
            printf("%s\n", json);
            free(json);
            return 1;
        }
        default:
            usage(stderr);
            return -1;
        }
    }
    if (argc - optind != 2) {
        fprintf(stderr, "mount.s3rig: expected FILE and DIR\n");
        usage(stderr);
        return -1;
    }
    c->file = argv[optind];
    c->dir = argv[optind + 1];
    /* Options are taken after all flags, so -s (sloppy) applies whatever the order. */
    for (int i = 0; i < nopt; i++)
        if (take_options(c, optlists[i]))
            return -1;
    c->fc.uid = c->opts.uid;
    c->fc.gid = c->opts.gid;
    c->fc.umask = c->opts.umask;
    c->fc.spin_us = c->opts.spin_us;
    c->fc.rw = c->opts.rw;
    c->fc.backup = !c->opts.no_backup;
    c->fc.opts = c->opts.fs;
    return 0;
}

/* libfuse's fsname option needs commas and backslashes escaped. */
static char *escape_commas(const char *s)
{
    char *out = malloc(2 * strlen(s) + 1), *p = out;
    if (!out)
        return NULL;
    for (; *s; s++) {
        if (*s == ',' || *s == '\\')
            *p++ = '\\';
        *p++ = *s;
    }
    *p = 0;
    return out;
}

/* Serves fs until unmounted; fs is closed when it returns (s3_fuse_run's). */
static int run_mount(struct cmdline *c, struct s3fs *fs)
{
    char *fsname = escape_commas(fs->src.path);
    char *opts = NULL;
    if (!fsname ||
        asprintf(&opts, "%s,default_permissions,subtype=s3rig,fsname=%s%s%s", c->fc.rw ? "rw" : "ro", fsname,
                 c->fuse_opts ? "," : "",
                 c->fuse_opts ? c->fuse_opts : "") < 0) {
        free(fsname);
        s3fs_close(fs);
        return S3_EXIT_MOUNT;
    }
    free(fsname);
    char *fargv[5] = {"mount.s3rig", "-o", opts, NULL, NULL};
    int fargc = 3;
    if (c->debug)
        fargv[fargc++] = "-d";
    c->fc.foreground = c->foreground;
    c->fc.single_thread = c->single_thread;
    int rc = s3_fuse_run(fs, &c->fc, fargc, fargv, c->dir);
    free(opts);
    return rc;
}

int main(int argc, char **argv)
{
    cache_tune_allocator(); /* memory the cache lets go returns to the system */
    struct cmdline c = {0};
    const char **optlists = calloc((size_t)argc, sizeof *optlists); /* every -o list, no limit */
    int rc = optlists ? parse_cmdline(&c, argc, argv, optlists) : -1;
    free(optlists);
    if (rc) {
        free(c.fuse_opts);
        return rc > 0 ? s3_close_stdout("mount.s3rig") : S3_EXIT_USAGE;
    }
    char err[512];
    struct s3fs *fs;
    /* -o rw: the file is locked first, so what is parsed is what the lock recorded */
    struct commit_lock lock = {.fd = -1, .dirfd = -1};
    if (c.fc.rw) {
        enum s3_err locked = commit_lock(&lock, c.file);
        if (locked) {
            fprintf(stderr, "mount.s3rig: %s: %s\n", c.file,
                    locked == S3_ERR_BUSY ? "already mounted rw (locked by another process)"
                                          : strerror(s3_err_errno(locked)));
            free(c.fuse_opts);
            return locked == S3_ERR_BUSY ? S3_EXIT_MOUNT : S3_EXIT_OPEN;
        }
        c.fc.lock = &lock;
    }
    rc = s3_exit_of(s3fs_open(&fs, c.file, &c.opts.fs, err, sizeof err));
    if (!rc && c.fc.rw && (fs->src.st.st_ino != lock.st.st_ino || fs->src.st.st_dev != lock.st.st_dev)) {
        s3fs_close(fs);
        snprintf(err, sizeof err, "%s: replaced while it was opened; try again", c.file);
        rc = S3_EXIT_OPEN;
    }
    if (rc) {
        fprintf(stderr, "mount.s3rig: %s\n", err);
        free(c.fuse_opts);
        commit_unlock(&lock);
        return rc;
    }
    /* DIR as an absolute path, as libfuse's own parser makes it: the daemon works from /,
     * and unmounts DIR by this name when it ends (SIGTERM, Ctrl-C). */
    struct stat st;
    char *dir = realpath(c.dir, NULL);
    if (!dir || stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "mount.s3rig: %s: %s\n", c.dir, dir ? "not a directory" : strerror(errno));
        rc = S3_EXIT_MOUNT;
    } else if (c.fake) {
        if (c.verbose)
            fprintf(stderr, "mount.s3rig: %s is a valid %s file (fake mount)\n", c.file, format_name(fs->det.format));
        rc = S3_EXIT_OK;
    } else {
        c.dir = dir;
        /* a folder source follows the folder unless -o nowatch; -o rw has its own
         * generations, from its commits */
        c.fc.watch = S_ISDIR(fs->src.st.st_mode) && !c.opts.no_watch && !c.fc.rw;
        rc = run_mount(&c, fs);
        fs = NULL; /* the run closed it */
    }
    free(dir);
    s3fs_close(fs);
    commit_unlock(&lock);
    free(c.fuse_opts);
    return rc;
}
