/* /named: /root under the schema's names. A fixed child is named after its schema node,
 * a variable child by its index; branches are directories, leaves links to /root's
 * N.bin (so the bytes, xattrs and compressed handling are /root's own). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs/view.h"
#include "parse/t2fs.h"
#include "parse/t2fs_mesh.h"

struct named {
    struct s3fs *fs;
    const struct t2fs_schema *schema;
    char *root_path; /* "root/0/3" */
    unsigned depth;  /* of this directory below the mount root */
    bool be;
};

static int populate_named(struct tree *t, uint32_t dir, void *ctx, uint64_t arg);

/* Whether the parent names child i by the schema (fixed) or by index (variable). */
static bool named_by_schema(const struct t2fs_schema *s, uint32_t i)
{
    return s && (s->kind == T2K_FIXED || (s->kind == T2K_MIXED && i < s->nchild));
}

static void add_child(struct named *n, uint32_t dir, uint32_t i, bool is_dir)
{
    struct tree *t = n->fs->tree;
    const struct t2fs_schema *s = t2fs_schema_child(n->schema, i);
    char name[200], idx[16];
    snprintf(idx, sizeof idx, "%" PRIu32, i);
    if (named_by_schema(n->schema, i) && s && s->name && s->name[0] && !strchr(s->name, '/') &&
        strcmp(s->name, ".") && strcmp(s->name, ".."))
        snprintf(name, sizeof name, "%s", s->name);
    else
        snprintf(name, sizeof name, "%s", idx);
    uint32_t existing;
    char probe[220];
    snprintf(probe, sizeof probe, "%s%s", name, is_dir ? "" : ".bin");
    if (tree_lookup(t, dir, probe, &existing) == 0) /* two children, one name */
        snprintf(name + strlen(name), sizeof name - strlen(name), "~%s", idx);
    if (is_dir) {
        struct named *c = tree_alloc(t, sizeof *c);
        char *path = NULL;
        if (!c || asprintf(&path, "%s/%s", n->root_path, idx) < 0)
            return;
        *c = (struct named){n->fs, s, path, n->depth + 1, n->be};
        tree_on_free(t, free, path);
        tree_add_dir(t, dir, name, "t2fs.named", populate_named, c, 0);
        return;
    }
    struct sbuf target = {0};
    for (unsigned k = 0; k < n->depth; k++)
        sb_printf(&target, "../");
    sb_printf(&target, "%s/%s.bin", n->root_path, idx);
    char file[220];
    snprintf(file, sizeof file, "%s.bin", name);
    size_t len;
    char *tg = sb_take(&target, &len);
    if (tg)
        tree_add_link(t, dir, file, tg);
    free(tg);
}

/* An array leaf of /root, whole, when it is a valid array (data at byte 8). */
static uint8_t *read_array(struct named *n, const char *path, uint32_t *esize, uint32_t *count)
{
    uint32_t ino;
    uint8_t *b;
    size_t len;
    if (tree_resolve(n->fs->tree, path, &ino) || tree_read_all(n->fs->tree, ino, &b, &len))
        return NULL;
    if (t2fs_array_bytes(b, len, n->be, esize, count)) {
        free(b);
        return NULL;
    }
    return b;
}

/* A Turok 1 section: its usPStream decoded against its usVertices. */
static void add_turok1_triangles(struct named *n, uint32_t dir)
{
    struct tree *t = n->fs->tree;
    char path[1100];
    uint32_t es, words, vs, nverts;
    snprintf(path, sizeof path, "/%s/1.bin", n->root_path);
    uint8_t *ps = read_array(n, path, &es, &words);
    snprintf(path, sizeof path, "/%s/2.bin", n->root_path);
    uint8_t *vb = read_array(n, path, &vs, &nverts);
    if (ps && es == 2) {
        struct t2_stream st;
        if (t2_decode_turok1(ps + 8, words, n->be, vb ? nverts : 0, &st) == 0) {
            struct sbuf cmd = {0}, tri = {0};
            for (size_t i = 0; i < st.ncmd; i++)
                sb_printf(&cmd, "tri %u %u %u%s\n", st.cmd[i].a, st.cmd[i].b, st.cmd[i].c,
                          st.cmd[i].run_end ? " end" : "");
            for (size_t i = 0; i < st.ntri; i++)
                sb_printf(&tri, "%lld %lld %lld\n", (long long)st.tri[i].v[0], (long long)st.tri[i].v[1],
                          (long long)st.tri[i].v[2]);
            size_t len;
            char *text = sb_take(&cmd, &len);
            tree_add_text(t, dir, "commands.txt", "text", text, len);
            text = sb_take(&tri, &len);
            tree_add_text(t, dir, "triangles.txt", "text", text, len);
            if (st.nerr) {
                struct sbuf e = {0};
                for (size_t i = 0; i < st.nerr; i++)
                    sb_printf(&e, "%s\n", st.err[i]);
                text = sb_take(&e, &len);
                tree_add_text(t, dir, "triangles.error", "error", text, len);
            }
        }
        t2_stream_free(&st);
    }
    free(ps);
    free(vb);
}

static bool is_turok1_section(const struct t2fs_schema *s)
{
    return s && s->name && strcmp(s->name, "section") == 0 && s->kind == T2K_FIXED && s->nchild >= 3 &&
           s->child[1] && s->child[1]->name && strcmp(s->child[1]->name, "usPStream") == 0;
}

static int populate_named(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    struct named *n = ctx;
    if (is_turok1_section(n->schema))
        add_turok1_triangles(n, dir);
    char path[1100];
    uint32_t src;
    snprintf(path, sizeof path, "/%s", n->root_path);
    if (tree_resolve(t, path, &src) || tree_node(t, src)->type != NODE_DIR || tree_populate(t, src))
        return 0;
    const struct dirinfo *d = tree_node(t, src)->u.dir;
    for (uint32_t k = 0; k < d->n; k++) {
        const struct node *c = tree_node(t, d->child[k]);
        char *end;
        unsigned long i = strtoul(c->name, &end, 10);
        if (end == c->name)
            continue;
        if (c->type == NODE_DIR && *end == 0)
            add_child(n, dir, (uint32_t)i, true);
        else if (c->type == NODE_FILE && strcmp(end, ".bin") == 0)
            add_child(n, dir, (uint32_t)i, false);
    }
    return 0;
}

void t2fs_named_add(struct s3fs *fs, uint32_t root_dir, const struct t2fs_schema *schema, bool big_endian)
{
    struct named *n = tree_alloc(fs->tree, sizeof *n);
    if (!n)
        return;
    *n = (struct named){fs, schema, "root", 1, big_endian};
    tree_add_dir(fs->tree, root_dir, "named", "t2fs.named", populate_named, n, 0);
}
