#include "walk.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

bool link_stays_inside(struct tree *t, uint32_t ino)
{
    struct node *n = tree_node(t, ino);
    const char *s = n->u.target;
    if (s[0] == '/')
        return false;
    long depth = 0; /* of the directory holding the link */
    for (uint32_t p = n->parent; p != TREE_ROOT; p = tree_node(t, p)->parent)
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
        struct node *nd = tree_node(t, ino);
        char x[256];
        tree_getxattr(t, ino, "user.s3rig.type", x, sizeof x);
        tree_getxattr(t, ino, "user.s3rig.offset", x, sizeof x);
        tree_listxattr(t, ino, x, sizeof x);
        if (nd->type == NODE_LINK && !link_stays_inside(t, ino))
            abort();
        if (nd->type == NODE_FILE) {
            uint64_t size = tree_size(t, ino);
            for (uint64_t off = 0; off < size && off < (4u << 20);) {
                ssize_t k = tree_read(t, ino, off, buf, sizeof buf);
                if (k <= 0)
                    break;
                off += (uint64_t)k;
            }
            continue;
        }
        if (nd->type != NODE_DIR || tree_populate(t, ino) != 0)
            continue;
        struct dirinfo *d = tree_node(t, ino)->u.dir;
        for (uint32_t i = 0; i < d->n; i++) {
            if (n == cap) {
                uint32_t *s = realloc(stack, 2 * cap * sizeof *s);
                if (!s)
                    break;
                stack = s;
                cap *= 2;
            }
            stack[n++] = d->child[i];
        }
    }
    free(stack);
    return visited;
}
