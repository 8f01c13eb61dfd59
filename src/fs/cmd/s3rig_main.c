/* s3rig: the tree without FUSE. info / ls / cat / stat / extract on the same tree the
 * mount serves, so the two can never disagree. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs/core/cache.h"
#include "fs/open/open.h"
#include "fs/open/options.h"
#include "fs/views/sims/view_dbpf.h"

/* The commands: the usage text and the check of every command line (done before FILE is
 * opened) come from this table. */
static const struct command {
    const char *name;
    const char *synopsis; /* operands after FILE are named here: "missing PATH" */
    const char *help, *help2;
    int min, max; /* how many operands after FILE; max -1: any number */
} commands[] = {
    {"info", "info [--full] FILE", "what /info shows (--full: after parsing everything)", NULL, 0, 0},
    {"ls", "ls [-l] [-R] FILE [PATH]", "list a directory of the tree", NULL, 0, 1},
    {"cat", "cat FILE PATH...", "write files' contents to stdout", NULL, 1, -1},
    {"stat", "stat FILE PATH", "size, kind and xattrs of a node", NULL, 1, 1},
    {"extract", "extract FILE DIR [PATH]", "write the tree (or a subtree) out as real files;",
     "a package without PATH: each resource as DIR/NAME", 1, 2},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *f)
{
    fprintf(f, "usage: s3rig [-o OPTS] COMMAND FILE [ARGS]\n");
    for (size_t i = 0; i < NCOMMANDS; i++) {
        fprintf(f, "  %-26s  %s\n", commands[i].synopsis, commands[i].help);
        if (commands[i].help2)
            fprintf(f, "  %-26s  %s\n", "", commands[i].help2);
    }
    fprintf(f, "  -o OPTS                     comma-separated options, as for mount.s3rig:\n");
    s3_options_help(f, OPT_SHARED, "      ");
    fprintf(f, "  -h, --help                  this text\n"
               "  -V, --version               the version\n"
               "Exit status: 0 done, 1 usage, 2 cannot open or read FILE, 3 unrecognised format,\n"
               "             5 no such path in the tree, 6 cannot write the output.\n"
               "See s3rig(1).\n");
}

static const struct command *find_command(const char *name)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

/* A usage error: one line naming what is wrong and the command's synopsis. */
static int usage_error(const struct command *c, const char *fmt, const char *what)
{
    fprintf(stderr, "s3rig: ");
    fprintf(stderr, fmt, what);
    if (c)
        fprintf(stderr, " (usage: s3rig %s)\n", c->synopsis);
    else
        fprintf(stderr, " (see s3rig --help)\n");
    return S3_EXIT_USAGE;
}

/* The name of the operand after FILE at `index` in c's synopsis ("PATH" of "PATH..."). */
static void operand_name(const struct command *c, int index, char *out, size_t outlen)
{
    const char *p = strstr(c->synopsis, " FILE");
    snprintf(out, outlen, "an operand");
    for (int i = 0; p && i <= index; i++) {
        p = strchr(p + 1, ' ');
        if (!p)
            return;
        const char *w = p + 1 + (p[1] == '[');
        size_t n = strcspn(w, " .]");
        if (i == index)
            snprintf(out, outlen, "%.*s", (int)n, w);
    }
}

/* The operands after FILE: as many as the command takes. */
static int check_operands(const struct command *c, int n, char **ops)
{
    if (n < c->min) {
        char name[32];
        operand_name(c, n, name, sizeof name);
        return usage_error(c, "missing %s", name);
    }
    if (c->max >= 0 && n > c->max)
        return usage_error(c, "unexpected operand '%s'", ops[c->max]);
    return 0;
}

/* -o for s3rig: only the table's shared options exist here. */
static int unknown_option(const char *item, void *ctx)
{
    (void)ctx;
    fprintf(stderr, "s3rig: unknown option '%s' (see s3rig(1))\n", item);
    return -1;
}

static const char *kind_name(int kind)
{
    return kind == NODE_DIR ? "dir" : kind == NODE_LINK ? "symlink" : "file";
}

/* Resolves path from the root as the kernel does through a mount: a symlink met before
 * the last component is followed (relative to its directory; at most 40 of them), so
 * `s3rig cat DIR /keys/NAME/data.bin` reads what `cat MNT/keys/NAME/data.bin` does; the
 * last component is never followed (stat shows a link as one). 0, or -errno. */
static int resolve_following(struct tree *t, const char *path, uint32_t *out)
{
    char *rest = strdup(path);
    uint32_t cur = TREE_ROOT;
    int hops = 0, rc = rest ? 0 : -ENOMEM;
    for (char *p = rest; rc == 0 && p && *p;) {
        while (*p == '/')
            p++;
        if (!*p)
            break;
        char *next = strchr(p, '/');
        if (next)
            *next++ = 0;
        bool last = !next || !next[strspn(next, "/")];
        uint32_t child;
        if (strcmp(p, ".") == 0) {
            child = cur;
        } else if (strcmp(p, "..") == 0) {
            child = tree_parent(t, cur);
        } else if ((rc = -s3_err_errno(tree_lookup(t, cur, p, &child))) != 0) {
            break;
        }
        if (last || tree_kind(t, child) != NODE_LINK) {
            cur = child;
            p = next;
            continue;
        }
        const char *target = tree_link_target(t, child);
        char *joined = NULL;
        if (++hops > 40 || !target || target[0] == '/') {
            rc = hops > 40 ? -ELOOP : -ENOENT; /* an absolute link leaves the tree */
        } else if (asprintf(&joined, "%s/%s", target, next) < 0) {
            rc = -ENOMEM;
        } else {
            free(rest);
            rest = p = joined; /* on from the link's directory, cur */
        }
    }
    free(rest);
    if (rc == 0)
        *out = cur;
    return rc;
}

static int resolve(struct s3fs *fs, const char *path, uint32_t *ino)
{
    int rc = resolve_following(fs->tree, path, ino);
    if (rc) {
        fprintf(stderr, "s3rig: %s: %s\n", path, strerror(-rc));
        return S3_EXIT_PATH;
    }
    return 0;
}

/* Copies a file of the tree to fd: 0, or the side that failed, with its errno in *why:
 * S3_EXIT_OPEN (reading the tree: the source is unreadable or changed) or S3_EXIT_WRITE
 * (writing fd; a write that writes nothing counts as failed). */
static int copy_out(struct s3fs *fs, uint32_t ino, int fd, int *why)
{
    uint64_t size = tree_size(fs->tree, ino);
    char buf[65536];
    int rc = 0;
    struct tree_hold *h = tree_hold(fs->tree, ino); /* expanded bytes: expanded once */
    for (uint64_t off = 0; off < size && rc == 0;) {
        size_t n = 0;
        enum s3_err e = tree_read(fs->tree, ino, off, buf, sizeof buf, &n);
        ssize_t got = (ssize_t)n;
        if (e || got == 0) {
            *why = e ? s3_err_errno(e) : EIO;
            rc = S3_EXIT_OPEN;
            break;
        }
        for (ssize_t w = 0; w < got;) {
            ssize_t k = write(fd, buf + w, (size_t)(got - w));
            if (k < 0 && errno == EINTR)
                continue;
            if (k <= 0) {
                *why = k < 0 ? errno : EIO;
                rc = S3_EXIT_WRITE;
                break;
            }
            w += k;
        }
        off += (uint64_t)got;
    }
    tree_release(h);
    return rc;
}

static int cmd_cat(struct s3fs *fs, int argc, char **argv)
{
    int status = 0;
    for (int i = 0; i < argc; i++) {
        uint32_t ino;
        if (resolve(fs, argv[i], &ino)) {
            status = S3_EXIT_PATH;
            continue;
        }
        int kind = tree_kind(fs->tree, ino);
        if (kind != NODE_FILE) {
            fprintf(stderr, "s3rig: %s: %s\n", argv[i], kind == NODE_DIR ? "is a directory" : "is a symlink");
            status = S3_EXIT_PATH;
            continue;
        }
        int why, rc = copy_out(fs, ino, STDOUT_FILENO, &why);
        if (rc == S3_EXIT_WRITE) {
            fprintf(stderr, "s3rig: write error: %s\n", strerror(why));
            return rc; /* the rest cannot be written either */
        }
        if (rc) {
            fprintf(stderr, "s3rig: %s: cannot read: %s\n", argv[i], strerror(why));
            status = rc;
        }
    }
    return status;
}

static void print_xattr(struct s3fs *fs, uint32_t ino, const char *name, const char *label)
{
    char v[512];
    if (tree_getxattr_str(fs->tree, ino, name, v, sizeof v) == S3_OK)
        printf("%s: %s\n", label, v);
}

static int cmd_stat(struct s3fs *fs, const char *path)
{
    uint32_t ino;
    if (resolve(fs, path, &ino))
        return S3_EXIT_PATH;
    int kind = tree_kind(fs->tree, ino);
    printf("path: %s\nkind: %s\nsize: %" PRIu64 "\ninode: %" PRIu32 "\n", path, kind_name(kind), tree_size(fs->tree, ino), ino);
    if (kind == NODE_LINK)
        printf("target: %s\n", tree_link_target(fs->tree, ino));
    print_xattr(fs, ino, "user.s3rig.offset", "offset");
    print_xattr(fs, ino, "user.s3rig.length", "length");
    print_xattr(fs, ino, "user.s3rig.type", "type");
    return 0;
}

static void print_entry(struct s3fs *fs, uint32_t ino, const char *name, bool longfmt)
{
    if (!longfmt) { /* ino may be an entry not made (tree_child_peek): not read */
        printf("%s\n", name);
        return;
    }
    int kind = tree_kind(fs->tree, ino);
    char off[32], len[32], type[256];
    if (tree_getxattr_str(fs->tree, ino, "user.s3rig.offset", off, sizeof off))
        strcpy(off, "-");
    if (tree_getxattr_str(fs->tree, ino, "user.s3rig.length", len, sizeof len))
        strcpy(len, "-");
    if (tree_getxattr_str(fs->tree, ino, "user.s3rig.type", type, sizeof type))
        strcpy(type, "-");
    printf("%c %12" PRIu64 " %12s %10s %-24s %s", kind == NODE_DIR ? 'd' : kind == NODE_LINK ? 'l' : '-',
           tree_size(fs->tree, ino), off, len, type, name);
    if (kind == NODE_LINK)
        printf(" -> %s", tree_link_target(fs->tree, ino));
    printf("\n");
}

/* Lists dir; with recursive, walks depth-first with an explicit stack of paths. */
static int list_dir(struct s3fs *fs, uint32_t dir, const char *path, bool longfmt, bool recursive)
{
    int rc = -s3_err_errno(tree_populate(fs->tree, dir));
    if (rc)
        return rc;
    struct tree *t = fs->tree;
    uint32_t n = tree_child_count(t, dir);
    if (recursive)
        printf("%s:\n", path);
    for (uint32_t i = 0; i < n; i++) {
        /* names alone: a computed directory's entries are not made for them (as the mount's
         * bare listing); an entry that cannot be made fails the listing (ENOMEM) */
        char peeked[NAME_MAX + 1];
        uint32_t c = 0;
        int kind;
        const char *name = longfmt ? NULL : tree_child_peek(t, dir, i, peeked, sizeof peeked, &c, &kind);
        if (!name) {
            c = tree_child(t, dir, i);
            name = c ? tree_name(t, c) : NULL;
        }
        if (!name)
            return -ENOMEM;
        print_entry(fs, c, name, longfmt);
    }
    if (!recursive)
        return 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t c = tree_child(t, dir, i);
        if (tree_kind(t, c) != NODE_DIR)
            continue;
        char *sub = NULL;
        if (asprintf(&sub, "%s/%s", strcmp(path, "/") == 0 ? "" : path, tree_name(t, c)) < 0)
            return -ENOMEM;
        printf("\n");
        rc = list_dir(fs, c, sub, longfmt, true);
        free(sub);
        if (rc)
            return rc;
    }
    return 0;
}

static int cmd_ls(struct s3fs *fs, const char *path, bool longfmt, bool recursive)
{
    uint32_t ino;
    if (resolve(fs, path, &ino))
        return S3_EXIT_PATH;
    if (tree_kind(fs->tree, ino) != NODE_DIR) {
        print_entry(fs, ino, path, longfmt);
        return 0;
    }
    int rc = list_dir(fs, ino, path, longfmt, recursive);
    if (rc) {
        fprintf(stderr, "s3rig: %s: %s\n", path, strerror(-rc));
        return S3_EXIT_OPEN;
    }
    return 0;
}

/* Extraction writes below the output folder through folder descriptors (openat), and
 * never through a link that is already there: a file or symlink of the same name is
 * replaced (unlinked, then made with O_CREAT | O_EXCL | O_NOFOLLOW), and so is a symlink
 * or file where a folder goes. So a planted symlink or hard link in the output folder
 * cannot redirect a write elsewhere. The output the user names (DIR, or the file when
 * PATH is a file) is taken as given, like a shell redirection. */
struct extract_state {
    struct s3fs *fs;
    uint64_t done, files;
    bool progress;
    /* volatile files (/info) are written last, when everything else has been parsed */
    uint32_t deferred[8];
    struct out_name {
        int dirfd;  /* a descriptor of its folder (AT_FDCWD for the named output) */
        char *name; /* its name there */
        char *dest; /* its whole path, for messages */
    } deferred_at[8];
    int ndeferred;
};

static int extract_node(struct extract_state *st, uint32_t ino, const struct out_name *out);
static int write_file(struct extract_state *st, uint32_t ino, const struct out_name *out);

/* An extract failure, reported where it happens: `side` S3_EXIT_WRITE (the output) or
 * S3_EXIT_OPEN (reading the tree), naming the output path (on a line of its own when a
 * progress line may be showing). Returns side. */
static int extract_failed(int side, const char *dest, int why)
{
    fprintf(stderr, "%ss3rig: %s: %s%s\n", isatty(STDERR_FILENO) ? "\n" : "", dest,
            side == S3_EXIT_OPEN ? "cannot read: " : "",
            why == ELOOP ? "a symlink is in the way (not followed)" : strerror(why));
    return side;
}

/* A new file for `out`: the named output opened as given; below it, whatever has the name
 * is unlinked first and the file made anew, never opened through a link. */
static int create_out(const struct out_name *out)
{
    if (out->dirfd == AT_FDCWD)
        return open(out->name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (unlinkat(out->dirfd, out->name, 0) != 0 && errno != ENOENT && errno != EISDIR)
        return -1;
    return openat(out->dirfd, out->name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
}

/* Writes the tree's file ino as `out`: 0, or the status of a failure (reported). */
static int write_out(struct s3fs *fs, uint32_t ino, const struct out_name *out)
{
    int fd = create_out(out);
    if (fd < 0)
        return extract_failed(S3_EXIT_WRITE, out->dest, errno);
    int why, rc = copy_out(fs, ino, fd, &why);
    if (close(fd) != 0 && !rc) {
        rc = S3_EXIT_WRITE;
        why = errno;
    }
    return rc ? extract_failed(rc, out->dest, why) : 0;
}

/* The folder `out` (made if missing) opened for writing below it: a descriptor, or -1
 * (errno set). Below the named output, a symlink or file of its name is replaced by the
 * folder (never followed). */
static int open_out_dir(const struct out_name *out)
{
    bool named = out->dirfd == AT_FDCWD;
    for (int attempt = 0; attempt < 2; attempt++) {
        if (mkdirat(out->dirfd, out->name, 0755) != 0 && errno != EEXIST)
            return -1;
        int fd = openat(out->dirfd, out->name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | (named ? 0 : O_NOFOLLOW));
        if (fd >= 0 || named || (errno != ELOOP && errno != ENOTDIR) || attempt)
            return fd;
        if (unlinkat(out->dirfd, out->name, 0) != 0)
            return -1;
    }
    return -1;
}

static int extract_dir(struct extract_state *st, uint32_t dir, const struct out_name *out)
{
    int fd = open_out_dir(out);
    if (fd < 0)
        return extract_failed(S3_EXIT_WRITE, out->dest, errno);
    int rc = -s3_err_errno(tree_populate(st->fs->tree, dir));
    if (rc) {
        close(fd);
        return extract_failed(S3_EXIT_OPEN, out->dest, -rc);
    }
    struct tree *t = st->fs->tree;
    for (uint32_t i = 0; i < tree_child_count(t, dir) && !rc; i++) {
        uint32_t c = tree_child(t, dir, i);
        struct out_name sub = {fd, (char *)tree_name(t, c), NULL};
        if (asprintf(&sub.dest, "%s/%s", out->dest, sub.name) < 0) {
            rc = extract_failed(S3_EXIT_WRITE, out->dest, ENOMEM);
            break;
        }
        rc = extract_node(st, c, &sub);
        free(sub.dest);
    }
    close(fd);
    return rc;
}

/* A symlink as `out`, replacing a file or link of that name. */
static int write_link(const char *target, const struct out_name *out)
{
    if (symlinkat(target, out->dirfd, out->name) != 0 &&
        (errno != EEXIST || unlinkat(out->dirfd, out->name, 0) != 0 || symlinkat(target, out->dirfd, out->name) != 0))
        return extract_failed(S3_EXIT_WRITE, out->dest, errno);
    return 0;
}

static int extract_node(struct extract_state *st, uint32_t ino, const struct out_name *out)
{
    struct tree *t = st->fs->tree;
    int kind = tree_kind(t, ino);
    if (kind == NODE_DIR)
        return extract_dir(st, ino, out);
    if (kind == NODE_LINK)
        return write_link(tree_link_target(t, ino), out);
    if (tree_is_volatile(t, ino) && st->ndeferred < 8) {
        struct out_name *d = &st->deferred_at[st->ndeferred];
        d->dirfd = out->dirfd == AT_FDCWD ? AT_FDCWD : fcntl(out->dirfd, F_DUPFD_CLOEXEC, 0);
        int why = d->dirfd == -1 ? errno : ENOMEM;
        d->name = strdup(out->name);
        d->dest = strdup(out->dest);
        st->deferred[st->ndeferred++] = ino;
        return d->dirfd == -1 || !d->name || !d->dest ? extract_failed(S3_EXIT_WRITE, out->dest, why) : 0;
    }
    return write_file(st, ino, out);
}

static int write_file(struct extract_state *st, uint32_t ino, const struct out_name *out)
{
    int rc = write_out(st->fs, ino, out);
    st->done += tree_size(st->fs->tree, ino);
    if (st->progress && ++st->files % 256 == 0)
        fprintf(stderr, "\rs3rig: %" PRIu64 " files, %" PRIu64 " bytes", st->files, st->done);
    return rc;
}

static int cmd_extract(struct s3fs *fs, const char *dest, const char *path)
{
    uint32_t ino;
    if (resolve(fs, path, &ino))
        return S3_EXIT_PATH;
    struct extract_state st = {.fs = fs, .progress = isatty(STDERR_FILENO)};
    const struct out_name top = {AT_FDCWD, (char *)dest, (char *)dest};
    int rc = extract_node(&st, ino, &top);
    for (int i = 0; i < st.ndeferred; i++) {
        struct out_name *d = &st.deferred_at[i];
        if (!rc)
            rc = write_file(&st, st.deferred[i], d);
        if (d->dirfd >= 0)
            close(d->dirfd);
        free(d->name);
        free(d->dest);
    }
    if (st.progress)
        fprintf(stderr, "\rs3rig: %" PRIu64 " files, %" PRIu64 " bytes\n", st.files, st.done);
    return rc;
}

/* info --full: everything parsed first (every directory populated), so the warnings
 * listed are the final ones. */
static int cmd_info_full(struct s3fs *fs)
{
    enum s3_err rc = tree_populate_all(fs->tree);
    if (rc)
        fprintf(stderr, "s3rig: parsing everything: %s\n", s3_err_str(rc));
    int st = cmd_cat(fs, 1, (char *[]){"info"});
    return st ? st : rc ? S3_EXIT_OPEN : 0;
}

/* A package without PATH: every resource's expanded bytes as DIR/<community name>, the
 * form the usual package tools import. Deleted, null and broken entries are counted. */
static int extract_resources(struct s3fs *fs, const char *dest)
{
    uint32_t total, res;
    uint64_t total_bytes, done = 0;
    if (!dbpf_view_totals(fs, &total, &total_bytes) || resolve(fs, "/resources", &res))
        return S3_EXIT_PATH;
    int dirfd = open_out_dir(&(struct out_name){AT_FDCWD, (char *)dest, (char *)dest});
    if (dirfd < 0)
        return extract_failed(S3_EXIT_WRITE, dest, errno);
    int rc = -s3_err_errno(tree_populate(fs->tree, res));
    if (rc) {
        close(dirfd);
        return extract_failed(S3_EXIT_OPEN, dest, -rc);
    }
    bool progress = isatty(STDERR_FILENO);
    uint32_t n = tree_child_count(fs->tree, res);
    uint32_t written = 0, skipped = 0;
    for (uint32_t i = 0; i < n && !rc; i++) {
        uint32_t c = tree_child(fs->tree, res, i);
        const char *name = tree_name(fs->tree, c);
        uint32_t data;
        if (tree_lookup(fs->tree, c, "data.bin", &data)) {
            skipped++;
            continue;
        }
        struct out_name out = {dirfd, (char *)name, NULL};
        if (asprintf(&out.dest, "%s/%s", dest, name) < 0) {
            rc = extract_failed(S3_EXIT_WRITE, dest, ENOMEM);
            break;
        }
        rc = write_out(fs, data, &out);
        free(out.dest);
        done += tree_size(fs->tree, data);
        written++;
        if (progress && (i % 64 == 0 || i + 1 == n))
            fprintf(stderr, "\rs3rig: %" PRIu32 "/%" PRIu32 " resources, %" PRIu64 "/%" PRIu64 " bytes", i + 1,
                    total, done, total_bytes);
    }
    close(dirfd);
    if (progress)
        fprintf(stderr, "\n");
    if (rc)
        return rc;
    if (skipped)
        fprintf(stderr, "s3rig: %" PRIu32 " resources written; %" PRIu32 " without data (deleted, null or broken: "
                        "see their state and data.error)\n", written, skipped);
    return 0;
}

/* Runs a command whose operands (argc of them, after FILE) have been checked. */
static int dispatch(struct s3fs *fs, const char *cmd, int argc, char **argv, bool longfmt, bool recursive)
{
    if (strcmp(cmd, "info") == 0)
        return cmd_cat(fs, 1, (char *[]){"info"});
    if (strcmp(cmd, "ls") == 0)
        return cmd_ls(fs, argc > 0 ? argv[0] : "/", longfmt, recursive);
    if (strcmp(cmd, "cat") == 0)
        return cmd_cat(fs, argc, argv);
    if (strcmp(cmd, "stat") == 0)
        return cmd_stat(fs, argv[0]);
    if (argc == 1 && fs->det.format == FMT_DBPF)
        return extract_resources(fs, argv[0]);
    return cmd_extract(fs, argv[0], argc > 1 ? argv[1] : "/");
}

/* The command line, checked whole before FILE is opened. */
struct cmdline {
    const struct command *cmd;
    bool longfmt, recursive, full;
    struct s3_options opts;
    const char *file;
    int nops;
    char **ops; /* the operands after FILE */
};

/* 0 when the command line is complete; -1 when --help/--version were handled; else
 * S3_EXIT_USAGE (reported). */
static int parse_cmdline(struct cmdline *c, int argc, char **argv)
{
    static const struct option longopts[] = {
        {"help", no_argument, NULL, 'h'}, {"version", no_argument, NULL, 'V'}, {NULL, 0, NULL, 0}};
    int ch;
    while ((ch = getopt_long(argc, argv, "+lRo:hV", longopts, NULL)) != -1) {
        switch (ch) {
        case 'l':
            c->longfmt = true;
            break;
        case 'R':
            c->recursive = true;
            break;
        case 'o': {
            char err[600];
            if (s3_options_take_list(&c->opts, OPT_SHARED, optarg, unknown_option, NULL, err, sizeof err)) {
                if (err[0])
                    fprintf(stderr, "s3rig: %s\n", err);
                return S3_EXIT_USAGE;
            }
            break;
        }
        case 'h':
            usage(stdout);
            return -1;
        case 'V':
            printf("s3rig %s\n", S3RIG_VERSION);
            return -1;
        default:
            usage(stderr);
            return S3_EXIT_USAGE;
        }
    }
    if (optind >= argc)
        return usage_error(NULL, "missing %s", "COMMAND");
    c->cmd = find_command(argv[optind]);
    if (!c->cmd)
        return usage_error(NULL, "unknown command '%s'", argv[optind]);
    /* ls and info take their flags after the command too: s3rig ls -l FILE */
    optind++;
    if (c->cmd == find_command("ls")) {
        while ((ch = getopt(argc, argv, "+lR")) != -1) {
            if (ch == 'l')
                c->longfmt = true;
            else if (ch == 'R')
                c->recursive = true;
            else
                return usage_error(c->cmd, "%s", "unknown flag");
        }
    } else if (c->longfmt || c->recursive) {
        return usage_error(c->cmd, "%s", "-l and -R are flags of ls");
    } else if (c->cmd == find_command("info") && optind < argc && strcmp(argv[optind], "--full") == 0) {
        c->full = true;
        optind++;
    }
    if (optind >= argc)
        return usage_error(c->cmd, "missing %s", "FILE");
    c->file = argv[optind++];
    c->nops = argc - optind;
    c->ops = argv + optind;
    return check_operands(c->cmd, c->nops, c->ops);
}

int main(int argc, char **argv)
{
    cache_tune_allocator(); /* memory the cache lets go returns to the system */
    struct cmdline c = {0};
    int rc = parse_cmdline(&c, argc, argv);
    if (rc)
        return rc < 0 ? s3_close_stdout("s3rig") : rc;
    char err[512];
    struct s3fs *fs;
    rc = s3_exit_of(s3fs_open(&fs, c.file, &c.opts.fs, err, sizeof err));
    if (rc) {
        fprintf(stderr, "s3rig: %s\n", err);
        return rc;
    }
    /* Tests only: refuse the tree's k-th allocation from here on, once (test_info checks
     * that a listing failing so exits non-zero). */
    const char *fail_at = getenv("S3RIG_TEST_FAIL_ALLOC");
    if (fail_at)
        tree_test_fail_alloc(fs->tree, strtoull(fail_at, NULL, 10));
    rc = c.full ? cmd_info_full(fs) : dispatch(fs, c.cmd->name, c.nops, c.ops, c.longfmt, c.recursive);
    s3fs_close(fs);
    int out = s3_close_stdout("s3rig");
    return rc ? rc : out;
}
