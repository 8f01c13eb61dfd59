#include "walk.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool link_stays_inside(struct tree *t, uint32_t ino)
{
    const char *s = tree_link_target(t, ino);
    if (s[0] == '/')
        return false;
    long depth = 0; /* of the directory holding the link */
    for (uint32_t p = tree_parent(t, ino); p != TREE_ROOT; p = tree_parent(t, p))
        depth++;
    while (*s) {
        size_t len = strcspn(s, "/");
        if (len == 2 && s[0] == '.' && s[1] == '.')
            depth--;
        else if (!(len == 1 && s[0] == '.') && len > 0)
            depth++;
        if (depth < 0)
            return false;
        s += len + (s[len] == '/');
    }
    return true;
}

int link_resolve(struct tree *t, uint32_t link, uint32_t *out, char *why, size_t whylen)
{
    /* Follows the target one component at a time from the link's directory, as the
     * kernel would, and each link met on the way (at most 40, none twice). */
    uint32_t seen[40], nseen = 0, dir = tree_parent(t, link), cur = link;
    char path[4096];
    snprintf(path, sizeof path, "%s", tree_link_target(t, link));
    seen[nseen++] = link;
    const char *s = path;
    if (*s == '/') {
        snprintf(why, whylen, "absolute target %s", path);
        return -1;
    }
    cur = dir;
    while (*s) {
        size_t len = strcspn(s, "/");
        char name[1024];
        snprintf(name, sizeof name, "%.*s", (int)(len < sizeof name - 1 ? len : sizeof name - 1), s);
        s += len + (s[len] == '/');
        if (len == 0 || strcmp(name, ".") == 0)
            continue;
        if (strcmp(name, "..") == 0) {
            if (cur == TREE_ROOT) {
                snprintf(why, whylen, "climbs above the root");
                return -1;
            }
            cur = tree_parent(t, cur);
            continue;
        }
        uint32_t next;
        if (tree_kind(t, cur) != NODE_DIR || tree_lookup(t, cur, name, &next) != 0) {
            snprintf(why, whylen, "no node '%s'", name);
            return -1;
        }
        if (tree_kind(t, next) == NODE_LINK) {
            for (uint32_t i = 0; i < nseen; i++)
                if (seen[i] == next) {
                    snprintf(why, whylen, "a loop of links (through '%s')", name);
                    return -1;
                }
            if (nseen == sizeof seen / sizeof seen[0]) {
                snprintf(why, whylen, "more than 40 links in a row");
                return -1;
            }
            seen[nseen++] = next;
            /* continue inside the next link's target, then with what was left */
            char rest[4096];
            snprintf(rest, sizeof rest, "%s%s%s", tree_link_target(t, next), *s ? "/" : "", s);
            if (rest[0] == '/') {
                snprintf(why, whylen, "absolute target %s", rest);
                return -1;
            }
            memcpy(path, rest, sizeof path);
            s = path;
            cur = tree_parent(t, next);
            continue;
        }
        cur = next;
    }
    if (cur == link) {
        snprintf(why, whylen, "points at itself");
        return -1;
    }
    *out = cur;
    return 0;
}

int check_links(struct tree *t, bool want_dir, size_t *links, char *why, size_t whylen)
{
    *links = 0;
    for (uint64_t i = 1; i <= tree_node_count(t); i++) {
        uint32_t ino = (uint32_t)i;
        if (tree_kind(t, ino) != NODE_LINK)
            continue;
        uint32_t to;
        char w[200];
        if (link_resolve(t, ino, &to, w, sizeof w)) {
            snprintf(why, whylen, "link %s -> %s: %s", tree_name(t, ino), tree_link_target(t, ino), w);
            return -1;
        }
        if (want_dir && tree_kind(t, to) != NODE_DIR) {
            snprintf(why, whylen, "link %s -> %s: not a directory", tree_name(t, ino), tree_link_target(t, ino));
            return -1;
        }
        (*links)++;
    }
    return 0;
}

/* A node's path from the root, for messages (static: the walk is a test's, and it aborts
 * right after). */
static const char *walk_path(struct tree *t, uint32_t ino)
{
    static char p[4096];
    char *rel = tree_relpath(t, TREE_ROOT, ino);
    snprintf(p, sizeof p, "/%s", rel && strcmp(rel, ".") != 0 ? rel : "");
    free(rel);
    return p;
}

/* Files bigger than this are read at their start and their end only. */
#define WALK_READ_ALL (64u << 20)

/* Reads a file in pieces: no read fails (a view checks what it can show when it lists it:
 * what cannot be read is NAME.error), and the bytes read are exactly its stat size. */
static void walk_file(struct tree *t, uint32_t ino, uint8_t *buf, size_t cap)
{
    uint64_t size = tree_size(t, ino), off = 0;
    if (size > WALK_READ_ALL)
        off = size - cap; /* its start was read below, in the first round */
    for (int round = size > WALK_READ_ALL ? 0 : 1; round < 2; round++) {
        uint64_t at = round == 0 ? 0 : off, got = 0;
        for (;;) {
            size_t k = 0;
            enum s3_err e = tree_read(t, ino, at + got, buf, cap, &k);
            if (e) {
                fprintf(stderr, "walk: %s: read at %llu of %llu bytes: %s\n", walk_path(t, ino),
                        (unsigned long long)(at + got), (unsigned long long)size, s3_err_str(e));
                abort();
            }
            if (k == 0 || (round == 0 && got + (uint64_t)k >= (4u << 20)))
                break;
            got += (uint64_t)k;
        }
        if (round == 1 && at + got != size) {
            fprintf(stderr, "walk: %s: %llu bytes read, its size is %llu\n", walk_path(t, ino),
                    (unsigned long long)(at + got), (unsigned long long)size);
            abort();
        }
    }
}

static int by_string(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* No two children of a directory share a name (the tree makes them unique). */
static void walk_names_unique(struct tree *t, uint32_t dir)
{
    uint32_t n = tree_child_count(t, dir);
    const char **names = malloc((n ? n : 1) * sizeof *names);
    if (!names)
        return;
    for (uint32_t i = 0; i < n; i++)
        names[i] = tree_name(t, tree_child(t, dir, i));
    qsort(names, n, sizeof *names, by_string);
    for (uint32_t i = 1; i < n; i++)
        if (strcmp(names[i - 1], names[i]) == 0) {
            fprintf(stderr, "walk: %s: two entries named %s\n", walk_path(t, dir), names[i]);
            abort();
        }
    free(names);
}

size_t walk_all(struct s3fs *fs, size_t max_nodes)
{
    struct tree *t = fs->tree;
    size_t cap = 256, n = 0, visited = 0, bufcap = 65536;
    uint32_t *stack = malloc(cap * sizeof *stack);
    uint8_t *buf = malloc(bufcap);
    if (!stack || !buf) {
        free(stack);
        free(buf);
        return 0;
    }
    stack[n++] = TREE_ROOT;
    while (n > 0 && visited < max_nodes) {
        uint32_t ino = stack[--n];
        visited++;
        int kind = tree_kind(t, ino);
        char x[256];
        size_t xl;
        tree_getxattr(t, ino, "user.s3rig.type", x, sizeof x, &xl);
        tree_getxattr(t, ino, "user.s3rig.offset", x, sizeof x, &xl);
        tree_listxattr(t, ino, x, sizeof x, &xl);
        if (kind == NODE_LINK && !link_stays_inside(t, ino))
            abort();
        if (kind == NODE_LINK) {
            uint32_t to;
            char why[200];
            if (link_resolve(t, ino, &to, why, sizeof why) != 0 && !tree_full(t)) {
                fprintf(stderr, "walk: link %s -> %s: %s\n", tree_name(t, ino), tree_link_target(t, ino), why);
                abort();
            }
        }
        if (kind == NODE_FILE) {
            walk_file(t, ino, buf, bufcap);
            continue;
        }
        if (kind != NODE_DIR || tree_populate(t, ino) != 0)
            continue;
        walk_names_unique(t, ino);
        uint32_t nchildren = tree_child_count(t, ino);
        for (uint32_t i = 0; i < nchildren; i++) {
            if (n == cap) {
                uint32_t *s = realloc(stack, 2 * cap * sizeof *s);
                if (!s)
                    break;
                stack = s;
                cap *= 2;
            }
            stack[n++] = tree_child(t, ino, i);
        }
    }
    free(stack);
    free(buf);
    return visited;
}

/* FNV-1a over bytes, continued from h. */
static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

int walk_digest(struct tree *t, uint32_t dir, uint64_t *digest, size_t *nodes)
{
    size_t cap = 256, n = 0;
    uint32_t *stack = malloc(cap * sizeof *stack);
    uint8_t *buf = malloc(65536);
    uint64_t h = 0xcbf29ce484222325ull;
    int rc = stack && buf ? 0 : -1;
    *nodes = 0;
    if (rc == 0)
        stack[n++] = dir;
    while (rc == 0 && n > 0) {
        uint32_t ino = stack[--n];
        int kind = tree_kind(t, ino);
        if (tree_is_volatile(t, ino))
            continue;
        (*nodes)++;
        h = fnv(h, &kind, sizeof kind);
        static const char *const xattrs[] = {"user.s3rig.type", "user.s3rig.offset", "user.s3rig.length"};
        for (int k = 0; ino != dir && k < 3; k++) { /* dir keeps what its host gives it */
            char x[256];
            size_t len = 0;
            enum s3_err e = tree_getxattr(t, ino, xattrs[k], x, sizeof x, &len);
            /* as getxattr(2) answers (mountutil.c hashes a mount's answers alike) */
            ssize_t xl = e ? -s3_err_errno(e) : (ssize_t)len;
            h = fnv(h, &xl, sizeof xl);
            if (xl > 0)
                h = fnv(h, x, (size_t)xl);
        }
        if (ino != dir)
            h = fnv(h, tree_name(t, ino), strlen(tree_name(t, ino)) + 1);
        if (kind == NODE_LINK) {
            h = fnv(h, tree_link_target(t, ino), strlen(tree_link_target(t, ino)));
        } else if (kind == NODE_FILE) {
            uint64_t size = tree_size(t, ino), off = 0;
            h = fnv(h, &size, sizeof size);
            while (off < size) {
                size_t k = 0;
                if (tree_read(t, ino, off, buf, 65536, &k) || k == 0) {
                    rc = -1;
                    break;
                }
                h = fnv(h, buf, (size_t)k);
                off += (uint64_t)k;
            }
        } else if (kind == NODE_DIR) {
            if (tree_populate(t, ino)) {
                rc = -1;
                break;
            }
            uint32_t nc = tree_child_count(t, ino);
            h = fnv(h, &nc, sizeof nc);
            for (uint32_t i = nc; i-- > 0;) { /* pushed backwards: visited in creation order */
                if (n == cap) {
                    uint32_t *s = realloc(stack, 2 * cap * sizeof *s);
                    if (!s) {
                        rc = -1;
                        break;
                    }
                    stack = s;
                    cap *= 2;
                }
                stack[n++] = tree_child(t, ino, i);
            }
        } else {
            rc = -1;
        }
    }
    free(stack);
    free(buf);
    *digest = h;
    return rc;
}

void walk_cuts(const uint8_t *file, size_t size, size_t from, size_t step, size_t max_nodes)
{
    for (size_t cut = from; cut < size; cut += step) {
        struct s3fs *fs;
        char err[256];
        if (s3fs_open_mem(&fs, file, cut, NULL, err, sizeof err))
            continue;
        walk_all(fs, max_nodes);
        s3fs_close(fs);
    }
}
