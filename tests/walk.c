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

size_t walk_all(struct s3fs *fs, size_t max_nodes)
{
    struct tree *t = fs->tree;
    size_t cap = 256, n = 0, visited = 0;
    uint32_t *stack = malloc(cap * sizeof *stack);
    if (!stack)
        return 0;
    stack[n++] = TREE_ROOT;
    static char buf[65536];
    while (n > 0 && visited < max_nodes) {
        uint32_t ino = stack[--n];
        visited++;
        int kind = tree_kind(t, ino);
        char x[256];
        tree_getxattr(t, ino, "user.s3rig.type", x, sizeof x);
        tree_getxattr(t, ino, "user.s3rig.offset", x, sizeof x);
        tree_listxattr(t, ino, x, sizeof x);
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
            uint64_t size = tree_size(t, ino);
            for (uint64_t off = 0; off < size && off < (4u << 20);) {
                ssize_t k = tree_read(t, ino, off, buf, sizeof buf);
                if (k <= 0)
                    break;
                off += (uint64_t)k;
            }
            continue;
        }
        if (kind != NODE_DIR || tree_populate(t, ino) != 0)
            continue;
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
    return visited;
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
