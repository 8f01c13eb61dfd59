/* The t2fs schema: what each path of the container holds. The built-in Turok 2 model
 * schema is kept as data — the seed's table of path patterns, with the corrections of
 * formats/t2fs.md — and turned into a tree of schema nodes at start. A schema loaded
 * from a LibT2FS JSON file (a later issue) builds the same tree. */
#include <stdlib.h>
#include <string.h>

#include "parse/t2fs.h"

struct pattern {
    const char *path; /* below /root; "x" = any index of a variable branch */
    enum t2fs_kind kind;
    enum t2fs_data data;
    const char *type;
    uint32_t fixed_size, value_size;
    bool interleaved;
    const char *name;
};

#define BR(p, k, n) {p, k, T2D_RAW, NULL, 0, 0, false, n}
#define ARR(p, t, v, il, n) {p, T2K_DATA, T2D_ARRAY, t, 0, v, il, n}
#define RAW(p, t, s, n) {p, T2K_DATA, T2D_RAW, t, s, 0, false, n}

static const struct pattern turok2_models[] = {
    BR("", T2K_FIXED, "root"),
    BR("/0", T2K_VARIABLE, "models"),
    BR("/0/x", T2K_FIXED, "model"),
    BR("/0/x/0", T2K_FIXED, "model_0"),
    RAW("/0/x/0/0", "s_t2fsDataModelInfo", 32, "info"),
    ARR("/0/x/0/1", "t2fsArray", 4, false, "model_0_1"),
    BR("/0/x/1", T2K_FIXED, "model_1"),
    BR("/0/x/1/0", T2K_VARIABLE, "meshes"),
    ARR("/0/x/1/0/x", "s_t2fsDataVertex", 20, true, "vertexBuffer"),
    BR("/0/x/1/1", T2K_FIXED, "model_1_1"),
    ARR("/0/x/1/1/0", "t2fsArray", 4, false, "model_1_1_0"),
    BR("/0/x/1/2", T2K_VARIABLE, "surfaces"),
    BR("/0/x/1/2/x", T2K_VARIABLE, "meshId"),
    BR("/0/x/1/2/x/x", T2K_FIXED, "surface"),
    RAW("/0/x/1/2/x/x/0", "s_t2fsDataMaterial", 24, "material"),
    RAW("/0/x/1/2/x/x/1", "unknown", 0, "indices"),
    BR("/0/x/1/3", T2K_VARIABLE, "bones"),
    BR("/0/x/1/3/x", T2K_FIXED, "model_1_3_x"),
    ARR("/0/x/1/3/x/0", "t2fsArray", 4, false, "model_1_3_x_0"),
    RAW("/0/x/1/3/x/1", "s_t2fsDataBone", 112, "bone"),
    BR("/0/x/1/4", T2K_VARIABLE, "hotpoints"),
    ARR("/0/x/1/4/x", "s_t2fsDataHotpoint", 20, false, "hotpointsArray"),
    BR("/0/x/1/5", T2K_VARIABLE, "model_1_5"),
    /* the seed calls these 8-byte "data"; they are empty branches {0, 8} */
    BR("/0/x/1/5/x", T2K_FIXED, "model_1_5_x"),
    BR("/0/x/2", T2K_VARIABLE, "poses"),
    BR("/0/x/2/x", T2K_FIXED, "pose"),
    ARR("/0/x/2/x/0", "t2fsArray", 2, false, "model_2_x_0"),
    ARR("/0/x/2/x/1", "s_t2fsDataAnimationBoneIndices", 4, false, "model_2_x_1"),
    ARR("/0/x/2/x/2", "s_t2fsDataBoneOrientation", 20, false, "boneOrientations"),
    BR("/0/x/2/x/3", T2K_FIXED, "model_2_x_3"),
    RAW("/0/x/2/x/3/0", "unknown", 16, "model_2_x_3_0"),
    ARR("/0/x/2/x/3/1", "t2fsArray", 12, false, "model_2_x_3_1"),
    ARR("/0/x/2/x/4", "t2fsArray", 28, false, "model_2_x_4"),
    BR("/0/x/2/x/5", T2K_FIXED, "model_2_x_5"),
    RAW("/0/x/2/x/5/0", "s_t2fsDataAnimationHeader", 32, "model_2_x_5_0"),
    RAW("/0/x/2/x/5/1", "unknown", 0, "model_2_x_5_1"),
    RAW("/0/x/2/x/5/2", "unknown", 0, "model_2_x_5_2"),
    ARR("/0/x/3", "t2fsArray", 28, false, "model_3"),
};

static struct t2fs_schema *schema_new(void)
{
    struct t2fs_schema *s = calloc(1, sizeof *s);
    if (s)
        s->kind = T2K_FIXED;
    return s;
}

/* The node for one path component below s, created when missing. */
static struct t2fs_schema *schema_step(struct t2fs_schema *s, const char *comp, size_t len)
{
    if (len == 1 && comp[0] == 'x') {
        if (!s->each)
            s->each = schema_new();
        return s->each;
    }
    uint32_t idx = (uint32_t)strtoul(comp, NULL, 10);
    if (idx >= s->nchild) {
        struct t2fs_schema **c = realloc(s->child, (idx + 1) * sizeof *c);
        if (!c)
            return NULL;
        memset(c + s->nchild, 0, (idx + 1 - s->nchild) * sizeof *c);
        s->child = c;
        s->nchild = idx + 1;
    }
    if (!s->child[idx])
        s->child[idx] = schema_new();
    return s->child[idx];
}

static int schema_apply(struct t2fs_schema *root, const struct pattern *p)
{
    struct t2fs_schema *s = root;
    for (const char *c = p->path; s && *c;) {
        c++; /* the '/' */
        size_t len = strcspn(c, "/");
        s = schema_step(s, c, len);
        c += len;
    }
    if (!s)
        return -1;
    s->kind = p->kind;
    s->data = p->data;
    s->fixed_size = p->fixed_size;
    s->value_size = p->value_size;
    s->interleaved = p->interleaved;
    s->name = strdup(p->name);
    s->type = p->type ? strdup(p->type) : NULL;
    return s->name ? 0 : -1;
}

struct t2fs_schema *t2fs_schema_turok2(void)
{
    struct t2fs_schema *root = schema_new();
    if (!root)
        return NULL;
    for (size_t i = 0; i < sizeof turok2_models / sizeof turok2_models[0]; i++) {
        if (schema_apply(root, &turok2_models[i])) {
            t2fs_schema_free(root);
            return NULL;
        }
    }
    return root;
}

void t2fs_schema_free(struct t2fs_schema *s)
{
    if (!s)
        return;
    for (uint32_t i = 0; i < s->nchild; i++)
        t2fs_schema_free(s->child[i]);
    free(s->child);
    t2fs_schema_free(s->each);
    free(s->name);
    free(s->type);
    free(s);
}

const struct t2fs_schema *t2fs_schema_child(const struct t2fs_schema *s, uint32_t i)
{
    if (!s)
        return NULL;
    if (s->kind == T2K_VARIABLE)
        return s->each;
    if (s->kind == T2K_FIXED && i < s->nchild)
        return s->child[i];
    return NULL;
}
