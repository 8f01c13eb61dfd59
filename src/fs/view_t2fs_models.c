/* /models/N: the Turok 2 model tree under the seed's names, decoded. It reads node
 * bytes through /root (so compressed nodes, the cache and laziness are shared) and adds
 * de-interleaved vertex buffers, header-stripped arrays and decoded index streams. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs/view.h"
#include "parse/reader.h"
#include "parse/t2fs.h"
#include "parse/t2fs_mesh.h"

struct mview {
    struct s3fs *fs;
    bool be;
};

/* A /root leaf: its node and bytes (malloc'd). */
struct leaf {
    uint32_t ino;
    uint8_t *b;
    size_t len;
};

static int read_leaf(struct mview *m, const char *path, struct leaf *l)
{
    struct tree *t = m->fs->tree;
    memset(l, 0, sizeof *l);
    if (tree_resolve(t, path, &l->ino))
        return -1;
    return tree_read_all(t, l->ino, &l->b, &l->len) ? -1 : 0;
}

/* An array leaf's header: element size and count (its data starts at byte 8). */
static bool array_of(struct mview *m, const struct leaf *l, uint32_t *esize, uint32_t *count)
{
    return t2fs_array_bytes(l->b, l->len, m->be, esize, count) == 0;
}

/* A file holding bytes [off, off+len) of a /root leaf: a slice of the source when the
 * leaf is one, a copy otherwise; its xattrs follow the leaf's. */
static uint32_t add_slice(struct mview *m, uint32_t dir, const char *name, const struct leaf *l, uint64_t off,
                          uint64_t len, const char *type)
{
    struct tree *t = m->fs->tree;
    struct node *src = tree_node(t, l->ino);
    uint32_t ino;
    if (src->content == CONTENT_RANGE) {
        ino = tree_add_range(t, dir, name, NULL, src->u.src_off + off, len);
    } else {
        char *copy = malloc(len ? len : 1);
        if (!copy)
            return 0;
        memcpy(copy, l->b + off, len);
        ino = tree_add_text(t, dir, name, NULL, copy, len);
        tree_set_span(t, ino, src->span_off, src->span_len);
    }
    if (ino)
        tree_set_type(t, ino, type);
    return ino;
}

/* NAME.bin with an array leaf's data, header stripped; the count is in the type. */
static void add_array_data(struct mview *m, uint32_t dir, const char *name, const char *path)
{
    struct leaf l;
    uint32_t es, n;
    if (read_leaf(m, path, &l))
        return;
    char type[64], fname[64];
    snprintf(fname, sizeof fname, "%s.bin", name);
    if (array_of(m, &l, &es, &n)) {
        snprintf(type, sizeof type, "t2fs.array[%" PRIu32 "]x%" PRIu32, es, n);
        add_slice(m, dir, fname, &l, 8, (uint64_t)es * n, type);
    } else {
        add_error(m->fs->tree, dir, name, "not an array: the element header does not fit the node");
    }
    free(l.b);
}

static void add_raw(struct mview *m, uint32_t dir, const char *name, const char *path)
{
    struct leaf l;
    if (read_leaf(m, path, &l))
        return;
    add_slice(m, dir, name, &l, 0, l.len, "t2fs.raw");
    free(l.b);
}

/* ---- meshes ---- */

static int populate_mesh(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    struct mview *m = ctx;
    char path[96];
    snprintf(path, sizeof path, "/root/0/%" PRIu32 "/1/0/%" PRIu32 ".bin", (uint32_t)(arg >> 32), (uint32_t)arg);
    struct leaf l;
    uint32_t es, n;
    if (read_leaf(m, path, &l))
        return 0;
    if (!array_of(m, &l, &es, &n) || es == 0) {
        add_error(t, dir, "vertices", "the vertex buffer is not an array");
        free(l.b);
        return 0;
    }
    size_t bytes = (size_t)es * n;
    uint8_t *v = malloc(bytes ? bytes : 1);
    if (!v) {
        free(l.b);
        return -ENOMEM;
    }
    t2_deinterleave(l.b + 8, es, n, v);
    uint32_t ino = tree_add_text(t, dir, "vertices.bin", NULL, (char *)v, bytes);
    if (!ino) { /* refused (the node limit, which /info reports): v is freed */
        free(l.b);
        return 0;
    }
    struct node *src = tree_node(t, l.ino);
    tree_set_span(t, ino, src->span_off, src->span_len);
    set_typef(t, ino, "t2fs.vertices[%" PRIu32 "]x%" PRIu32, es, n);
    struct sbuf txt = {0};
    const uint8_t *rec = (const uint8_t *)tree_node(t, ino)->u.text;
    for (uint32_t i = 0; i < n; i++) {
        for (uint32_t k = 0; k < es; k++)
            sb_printf(&txt, "%s%02x", k && k % 4 == 0 ? " " : "", rec[(size_t)i * es + k]);
        sb_put(&txt, "\n", 1);
    }
    size_t len;
    char *text = sb_take(&txt, &len);
    tree_add_text(t, dir, "vertices.txt", "text", text, len);
    free(l.b);
    return 0;
}

/* ---- surfaces: the index streams of one mesh, decoded in order ---- */

static void add_stream_files(struct tree *t, uint32_t dir, const struct t2_stream *s)
{
    struct sbuf cmd = {0}, tri = {0}, bones = {0};
    for (size_t i = 0; i < s->ncmd; i++) {
        const struct t2_cmd *c = &s->cmd[i];
        if (c->kind == T2_CMD_TRI)
            sb_printf(&cmd, "tri %u %u %u\n", c->a, c->b, c->c);
        else if (c->kind == T2_CMD_BONE)
            sb_printf(&cmd, "bone %u\n", c->a);
        else if (c->kind == T2_CMD_LOAD)
            sb_printf(&cmd, "load %u at %u\n", c->a, c->b);
        else
            sb_printf(&cmd, "unknown 0x%04x\n", c->word);
    }
    for (size_t i = 0; i < s->ntri; i++) {
        const struct t2_tri *x = &s->tri[i];
        sb_printf(&tri, "%" PRId64 " %" PRId64 " %" PRId64 "\n", x->v[0], x->v[1], x->v[2]);
        sb_printf(&bones, "%" PRId32 " %" PRId32 " %" PRId32 "\n", x->bone[0], x->bone[1], x->bone[2]);
    }
    size_t len;
    char *text = sb_take(&cmd, &len);
    tree_add_text(t, dir, "commands.txt", "text", text, len);
    text = sb_take(&tri, &len);
    tree_add_text(t, dir, "triangles.txt", "text", text, len);
    text = sb_take(&bones, &len);
    tree_add_text(t, dir, "bones.txt", "text", text, len);
    if (s->first >= 0)
        tree_add_textf(t, dir, "vertex_range", "text", "%" PRId64 " %" PRId64 "\n", s->first, s->last);
    else
        tree_add_textf(t, dir, "vertex_range", "text", "none\n");
    if (s->nerr) {
        struct sbuf e = {0};
        for (size_t i = 0; i < s->nerr; i++)
            sb_printf(&e, "%s\n", s->err[i]);
        if (s->dropped)
            sb_printf(&e, "%zu more problems not shown\n", s->dropped);
        text = sb_take(&e, &len);
        tree_add_text(t, dir, "triangles.error", "error", text, len);
    }
}

static int populate_surfaces(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    struct mview *m = ctx;
    uint32_t model = (uint32_t)(arg >> 32), mesh = (uint32_t)arg;
    char path[128];
    struct leaf vb;
    uint32_t es = 0, nverts = 0;
    snprintf(path, sizeof path, "/root/0/%" PRIu32 "/1/0/%" PRIu32 ".bin", model, mesh);
    if (read_leaf(m, path, &vb) == 0) {
        if (!array_of(m, &vb, &es, &nverts))
            nverts = 0;
        free(vb.b);
    }
    struct t2_vcache cache; /* one per mesh: its surfaces share the vertex buffer */
    t2_vcache_init(&cache, nverts);
    for (uint32_t s = 0;; s++) {
        uint32_t sdir_ino;
        snprintf(path, sizeof path, "/root/0/%" PRIu32 "/1/2/%" PRIu32 "/%" PRIu32, model, mesh, s);
        if (tree_resolve(t, path, &sdir_ino) || tree_node(t, sdir_ino)->type != NODE_DIR)
            break;
        char name[16];
        snprintf(name, sizeof name, "%" PRIu32, s);
        uint32_t sdir = tree_add_dir(t, dir, name, "t2fs.surface", NULL, NULL, 0);
        struct leaf mat, idx;
        snprintf(path, sizeof path, "/root/0/%" PRIu32 "/1/2/%" PRIu32 "/%" PRIu32 "/0.bin", model, mesh, s);
        if (read_leaf(m, path, &mat) == 0) {
            add_slice(m, sdir, "material.bin", &mat, 0, mat.len < 24 ? mat.len : 24, "s_t2fsDataMaterial");
            if (mat.len >= 4)
                tree_add_textf(t, sdir, "texture_id", "u32", "%" PRIu32 "\n", ld_u32(mat.b, m->be));
            free(mat.b);
        }
        snprintf(path, sizeof path, "/root/0/%" PRIu32 "/1/2/%" PRIu32 "/%" PRIu32 "/1.bin", model, mesh, s);
        if (read_leaf(m, path, &idx) == 0) {
            add_slice(m, sdir, "indices.bin", &idx, 0, idx.len, "u16[]");
            struct t2_stream st;
            if (t2_decode_stream(idx.b, idx.len, m->be, &cache, &st) == 0)
                add_stream_files(t, sdir, &st);
            t2_stream_free(&st);
            free(idx.b);
        }
    }
    return 0;
}

/* ---- bones, poses, the model ---- */

static int populate_bone(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    struct mview *m = ctx;
    char path[96];
    snprintf(path, sizeof path, "/root/0/%" PRIu32 "/1/3/%" PRIu32 "/1.bin", (uint32_t)(arg >> 32), (uint32_t)arg);
    add_raw(m, dir, "bone.bin", path);
    snprintf(path, sizeof path, "/root/0/%" PRIu32 "/1/3/%" PRIu32 "/0.bin", (uint32_t)(arg >> 32), (uint32_t)arg);
    struct leaf l;
    uint32_t es, n;
    if (read_leaf(m, path, &l) == 0) {
        if (array_of(m, &l, &es, &n) && es == 4) {
            struct sbuf b = {0};
            for (uint32_t i = 0; i < n; i++)
                sb_printf(&b, "%" PRIu32 "\n", ld_u32(l.b + 8 + 4 * (size_t)i, m->be));
            size_t len;
            char *text = sb_take(&b, &len);
            tree_add_text(t, dir, "indices", "u32[]", text, len);
        }
        free(l.b);
    }
    return 0;
}

static int populate_pose(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    struct mview *m = ctx;
    char base[64], path[96];
    snprintf(base, sizeof base, "/root/0/%" PRIu32 "/2/%" PRIu32, (uint32_t)(arg >> 32), (uint32_t)arg);
    snprintf(path, sizeof path, "%s/1.bin", base);
    struct leaf l;
    uint32_t es, n;
    if (read_leaf(m, path, &l) == 0) {
        if (array_of(m, &l, &es, &n) && es == 4) {
            struct sbuf b = {0};
            for (uint32_t i = 0; i < n; i++) {
                const uint8_t *p = l.b + 8 + 4 * (size_t)i;
                sb_printf(&b, "%d %d\n", (int16_t)ld_u16(p, m->be), (int16_t)ld_u16(p + 2, m->be));
            }
            size_t len;
            char *text = sb_take(&b, &len);
            tree_add_text(t, dir, "bone_indices", "s16[][2]", text, len);
        }
        free(l.b);
    }
    snprintf(path, sizeof path, "%s/2.bin", base);
    add_array_data(m, dir, "orientations", path);
    snprintf(path, sizeof path, "%s/5/0.bin", base);
    add_raw(m, dir, "header.bin", path);
    snprintf(path, sizeof path, "%s/5/1.bin", base);
    add_raw(m, dir, "rotations.bin", path);
    snprintf(path, sizeof path, "%s/5/2.bin", base);
    add_raw(m, dir, "positions.bin", path);
    snprintf(path, sizeof path, "%s/0.bin", base);
    add_array_data(m, dir, "model_2_x_0", path);
    snprintf(path, sizeof path, "%s/3/0.bin", base);
    add_raw(m, dir, "model_2_x_3_0.bin", path);
    snprintf(path, sizeof path, "%s/3/1.bin", base);
    add_array_data(m, dir, "model_2_x_3_1", path);
    snprintf(path, sizeof path, "%s/4.bin", base);
    add_array_data(m, dir, "model_2_x_4", path);
    return 0;
}

/* Children of a /root branch that are directories (or compressed nodes), counted. */
static uint32_t count_children(struct tree *t, const char *path)
{
    uint32_t ino, n = 0;
    if (tree_resolve(t, path, &ino) || tree_node(t, ino)->type != NODE_DIR || tree_populate(t, ino))
        return 0;
    const struct dirinfo *d = tree_node(t, ino)->u.dir;
    for (uint32_t i = 0; i < d->n; i++) {
        const char *name = tree_node(t, d->child[i])->name;
        if (strchr(name, '.') == NULL || strstr(name, ".bin")) /* "N" or "N.bin", once each */
            n++;
    }
    return n;
}

static void add_indexed(struct mview *m, uint32_t dir, const char *name, uint32_t model, const char *list,
                        populate_fn fn, const char *type)
{
    struct tree *t = m->fs->tree;
    char path[64];
    snprintf(path, sizeof path, "/root/0/%" PRIu32 "/%s", model, list);
    uint32_t n = count_children(t, path);
    uint32_t d = tree_add_dir(t, dir, name, "t2fs.list", NULL, NULL, 0);
    for (uint32_t i = 0; i < n; i++) {
        char child[16];
        snprintf(child, sizeof child, "%" PRIu32, i);
        tree_add_dir(t, d, child, type, fn, m, (uint64_t)model << 32 | i);
    }
}

static int populate_model(struct tree *t, uint32_t dir, void *ctx, uint64_t model)
{
    struct mview *m = ctx;
    char path[96];
    snprintf(path, sizeof path, "../../root/0/%" PRIu64, model);
    tree_add_link(t, dir, "raw", path);
    struct leaf info;
    snprintf(path, sizeof path, "/root/0/%" PRIu64 "/0/0.bin", model);
    if (read_leaf(m, path, &info) == 0) {
        bool unset = info.len == 8 && memcmp(info.b, "\0\0\0\0\0\0\0\0", 8) == 0;
        if (!unset)
            add_slice(m, dir, "info.bin", &info, 0, info.len < 32 ? info.len : 32, "s_t2fsDataModelInfo");
        free(info.b);
    }
    snprintf(path, sizeof path, "/root/0/%" PRIu64 "/0/1.bin", model);
    add_array_data(m, dir, "model_0_1", path);
    add_indexed(m, dir, "meshes", (uint32_t)model, "1/0", populate_mesh, "t2fs.mesh");
    snprintf(path, sizeof path, "/root/0/%" PRIu64 "/1/1/0.bin", model);
    add_array_data(m, dir, "model_1_1_0", path);
    add_indexed(m, dir, "surfaces", (uint32_t)model, "1/2", populate_surfaces, "t2fs.surfaces");
    add_indexed(m, dir, "bones", (uint32_t)model, "1/3", populate_bone, "t2fs.bone");
    uint32_t hp = tree_add_dir(t, dir, "hotpoints", "t2fs.list", NULL, NULL, 0);
    snprintf(path, sizeof path, "/root/0/%" PRIu64 "/1/4", model);
    uint32_t nh = count_children(t, path);
    for (uint32_t i = 0; i < nh; i++) {
        char p2[96], name[16];
        snprintf(p2, sizeof p2, "/root/0/%" PRIu64 "/1/4/%" PRIu32 ".bin", model, i);
        snprintf(name, sizeof name, "%" PRIu32, i);
        add_array_data(m, hp, name, p2);
    }
    add_indexed(m, dir, "poses", (uint32_t)model, "2", populate_pose, "t2fs.pose");
    snprintf(path, sizeof path, "/root/0/%" PRIu64 "/3.bin", model);
    add_array_data(m, dir, "model_3", path);
    return 0;
}

static int populate_models(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    struct mview *m = ctx;
    uint32_t n = count_children(t, "/root/0");
    for (uint32_t i = 0; i < n; i++) {
        char name[16], path[32];
        uint32_t ino;
        snprintf(name, sizeof name, "%" PRIu32, i);
        snprintf(path, sizeof path, "/root/0/%" PRIu32, i);
        if (tree_resolve(t, path, &ino) || tree_node(t, ino)->type != NODE_DIR)
            continue; /* a broken model: /root shows why */
        tree_add_dir(t, dir, name, "t2fs.model", populate_model, m, i);
    }
    return 0;
}

void t2fs_models_add(struct s3fs *fs, uint32_t root_dir, bool big_endian)
{
    struct mview *m = calloc(1, sizeof *m);
    if (!m)
        return;
    m->fs = fs;
    m->be = big_endian;
    tree_on_free(fs->tree, free, m);
    tree_add_dir(fs->tree, root_dir, "models", "t2fs.models", populate_models, m, 0);
}
