/* /named: /root under the schema's names. A fixed child is named after its schema node,
 * a variable child by its index; branches are directories, leaves links to /root's
 * N.bin (so the bytes, xattrs and compressed handling are /root's own). Children are
 * found with the t2fs view's locator, which reads them the way /root does: a child that
 * cannot be read is NAME.error. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs/views/t2fs/view_t1_models.h"
#include "fs/views/t2fs/view_t2fs_named.h"
#include "parse/base/nameset.h"
#include "parse/t2fs/t2fs.h"

struct named {
    struct t2_view *v;
    struct t2fs_node node;
    const char *root_path; /* "root/0/3": where the links point (the node's own /root path) */
    unsigned depth;        /* of this directory below the mount root */
};

/* What a directory of /named keeps until it is listed (its populate context): its node
 * without the locator's child indices, which root_path spells, so that the directories
 * of a big file cost 56 bytes each, not 170 (the tree keeps about 100 bytes a node). */
struct named_dir {
    struct t2_view *v;
    const struct t2fs_schema *schema;
    struct t2_cnode *blob;
    uint64_t off, space;
    uint32_t count;
    unsigned depth;
    const char *root_path;
};

/* A branch node as a directory of /named (root_path: in the tree's arena). */
static struct named_dir *named_dir_new(struct tree *t, struct t2_view *v, const struct t2fs_node *c,
                                       const char *root_path, unsigned depth)
{
    struct named_dir *d = tree_alloc(t, sizeof *d);
    if (d)
        *d = (struct named_dir){v, c->schema, c->blob, c->off, c->space, c->count, depth, root_path};
    return d && root_path ? d : NULL;
}

/* The directory's node again, its child indices read back from root_path ("root/0/3":
 * depth 2, indices 0 and 3). */
static void named_of(const struct named_dir *d, struct named *n)
{
    memset(n, 0, sizeof *n);
    n->v = d->v;
    n->root_path = d->root_path;
    n->depth = d->depth;
    n->node.kind = T2FS_NODE_BRANCH;
    n->node.count = d->count;
    n->node.schema = d->schema;
    n->node.blob = d->blob;
    n->node.off = d->off;
    n->node.space = d->space;
    for (const char *p = strchr(d->root_path, '/'); p; p = strchr(p + 1, '/')) {
        if (n->node.depth < T2FS_PATH_KEPT)
            n->node.path[n->node.depth] = (uint32_t)strtoul(p + 1, NULL, 10);
        n->node.depth++;
    }
}

static enum s3_err populate_named(struct tree *t, uint32_t dir, void *ctx, uint64_t arg);

/* Whether the parent names child i by the schema (fixed) or by index (variable). */
static bool named_by_schema(const struct t2fs_schema *s, uint32_t i)
{
    return s && (s->kind == T2K_FIXED || (s->kind == T2K_MIXED && i < s->nchild));
}

enum child_as { AS_DIR, AS_LINK, AS_ERROR };

/* The names one listing has given (NULL when no two children can meet: a variable
 * branch names them by index), so each clash check is one hash probe instead of a lookup
 * in the directory being filled. A Turok 1 section's directory also holds its decoded
 * files, made before the children: there (a few children) the directory is asked. */
struct taken {
    struct nameset *names;
    bool ask_tree;
};

static _Atomic uint64_t named_compares, named_lookups;

void t2fs_named_counts(uint64_t *compares, uint64_t *lookups)
{
    *compares = named_compares;
    *lookups = named_lookups;
}

static bool name_taken(struct taken *tk, struct tree *t, uint32_t dir, const char *probe)
{
    if (!tk->names)
        return false;
    uint64_t before = tk->names->compared;
    bool taken = nameset_has(tk->names, probe);
    named_compares += tk->names->compared - before;
    uint32_t existing;
    if (!taken && tk->ask_tree) {
        named_lookups++;
        taken = tree_lookup(t, dir, probe, &existing) == 0;
    }
    return taken;
}

/* Child i under its name; an allocation refused on the way fails the listing (never a
 * child missing or named otherwise). */
static void add_child(struct named *n, uint32_t dir, uint32_t i, const struct t2fs_node *c, enum child_as as,
                      const char *err, struct taken *tk)
{
    struct tree *t = t2fs_view_fs(n->v)->tree;
    const struct t2fs_schema *s = c->schema;
    char name[200], idx[16];
    snprintf(idx, sizeof idx, "%" PRIu32, i);
    if (named_by_schema(n->node.schema, i) && s && s->name && s->name[0] && !strchr(s->name, '/') &&
        strcmp(s->name, ".") && strcmp(s->name, ".."))
        snprintf(name, sizeof name, "%s", s->name);
    else
        snprintf(name, sizeof name, "%s", idx);
    const char *suffix = as == AS_DIR ? "" : as == AS_LINK ? ".bin" : ".error";
    char probe[220];
    snprintf(probe, sizeof probe, "%s%s", name, suffix);
    if (name_taken(tk, t, dir, probe)) {
        snprintf(name + strlen(name), sizeof name - strlen(name), "~%s", idx);
        snprintf(probe, sizeof probe, "%s%s", name, suffix);
    }
    if (tk->names && nameset_add(tk->names, probe)) {
        tree_note_oom(t); /* the next clash check would miss this name */
        return;
    }
    if (as == AS_ERROR) {
        add_error(t, dir, name, err);
        return;
    }
    char entry[32]; /* what /root calls the child */
    t2fs_node_root_entry(c, i, entry, sizeof entry);
    if (as == AS_DIR) {
        char *path = NULL;
        if (asprintf(&path, "%s/%s", n->root_path, entry) < 0) {
            tree_note_oom(t);
            return;
        }
        struct named_dir *d = named_dir_new(t, n->v, c, tree_strdup(t, path), n->depth + 1);
        free(path);
        if (d)
            tree_add_dir(t, dir, name, "t2fs.named", populate_named, d, 0);
        return;
    }
    struct sbuf target = {0};
    for (unsigned k = 0; k < n->depth; k++)
        sb_printf(&target, "../");
    sb_printf(&target, "%s/%s", n->root_path, entry);
    char file[220];
    snprintf(file, sizeof file, "%s.bin", name);
    size_t len;
    char *tg = sb_take(&target, &len);
    if (tg)
        tree_add_link(t, dir, file, tg);
    else
        tree_note_oom(t);
    free(tg);
}

static bool is_turok1_section(const struct t2fs_schema *s)
{
    return s && s->name && strcmp(s->name, "section") == 0 && s->kind == T2K_FIXED && s->nchild >= 3 &&
           s->child[1] && s->child[1]->name && strcmp(s->child[1]->name, "usPStream") == 0;
}

static enum s3_err populate_named(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    struct named self, *n = &self;
    named_of(ctx, n);
    bool section = is_turok1_section(n->node.schema);
    if (section)
        t1_section_files(n->v, &n->node, dir);
    /* Two children, one name: only schema names can meet (indices are distinct), so a
     * variable branch's thousands of children need no check. */
    const struct t2fs_schema *s = n->node.schema;
    struct nameset names = {0};
    struct taken tk = {NULL, section};
    if (s && (s->kind == T2K_FIXED || s->kind == T2K_MIXED || s->kind == T2K_REPEATED))
        tk.names = &names;
    for (uint32_t i = 0; n->node.kind == T2FS_NODE_BRANCH && i < n->node.count; i++) {
        struct t2fs_node c;
        char err[400];
        enum s3_err e = t2fs_node_child(n->v, &n->node, i, &c, err, sizeof err);
        if (e == S3_ERR_NOMEM) {
            tree_note_oom(t); /* the listing fails (ENOMEM), never NAME.error */
            break;
        }
        if (e) {
            c.schema = t2fs_schema_child(n->node.schema, i);
            add_child(n, dir, i, &c, AS_ERROR, err, &tk);
        } else {
            add_child(n, dir, i, &c, c.kind == T2FS_NODE_BRANCH ? AS_DIR : AS_LINK, NULL, &tk);
        }
    }
    nameset_free(&names);
    return S3_OK;
}

void t2fs_named_add(struct t2_view *v, uint32_t root_dir)
{
    struct tree *t = t2fs_view_fs(v)->tree;
    struct t2fs_node root;
    t2fs_node_root(v, &root);
    struct named_dir *d = named_dir_new(t, v, &root, "root", 1);
    if (d)
        tree_add_dir(t, root_dir, "named", "t2fs.named", populate_named, d, 0);
}
