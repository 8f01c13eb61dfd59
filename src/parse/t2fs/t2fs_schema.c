/* The t2fs schema: what each path of the container holds. The built-in Turok 2 model
 * schema is kept as data — the seed's table of path patterns, with the corrections of
 * docs/formats/t2fs.md — and turned into a tree of schema nodes at start. A schema loaded
 * from a LibT2FS JSON file (a later issue) builds the same tree. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/t2fs/t2fs.h"

struct pattern {
    const char *path; /* below /root; "x" = any index of a variable branch */
    enum t2fs_kind kind;
    enum t2fs_data data;
    const char *type;
    uint32_t fixed_size, value_size;
    bool interleaved;
    const char *name;
    /* a fixed branch whose children 0, 1, ... are all untyped arrays: their names, each
     * followed by '|' (NULL: the pattern is one node) */
    const char *arrays;
};

#define BR(p, k, n) {p, k, T2D_RAW, NULL, 0, 0, false, n, NULL}
#define ARR(p, t, v, il, n) {p, T2K_DATA, T2D_ARRAY, t, 0, v, il, n, NULL}
#define RAW(p, t, s, n) {p, T2K_DATA, T2D_RAW, t, s, 0, false, n, NULL}

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

/* Turok 1: the engine's own directory (docs/formats/t2fs.md); "is" = branch, "us" = array. */
#define VAR(p, n) BR(p, T2K_VARIABLE, n)
#define FIX(p, n) BR(p, T2K_FIXED, n)
#define US(p, n) ARR(p, NULL, 0, false, n)
#define FIX_US(p, n, arrays) {p, T2K_FIXED, T2D_RAW, NULL, 0, 0, false, n, arrays}
static const struct pattern turok1_all[] = {
    FIX("", "root"),
    VAR("/0", "isGraphicObjects"),
    FIX("/0/x", "graphicObject"),
    FIX("/0/x/0", "isObjectInfo"),
    RAW("/0/x/0/0", NULL, 0, "bounds"),
    US("/0/x/0/1", "usAnimTypes"),
    FIX("/0/x/1", "isGeometry"),
    RAW("/0/x/1/0", NULL, 0, "info"),
    VAR("/0/x/1/1", "isNodes"),
    FIX("/0/x/1/1/x", "node"),
    US("/0/x/1/1/x/0", "usChildNodeIndices"),
    US("/0/x/1/1/x/1", "usPartIndices"),
    VAR("/0/x/1/1/x/2", "isParts"),
    VAR("/0/x/1/1/x/2/x", "part"),
    FIX("/0/x/1/1/x/2/x/x", "section"),
    RAW("/0/x/1/1/x/2/x/x/0", NULL, 0, "section"),
    ARR("/0/x/1/1/x/2/x/x/1", NULL, 2, false, "usPStream"),
    ARR("/0/x/1/1/x/2/x/x/2", NULL, 16, true, "usVertices"), /* 16-byte N64 vertices, byte planes */
    VAR("/0/x/2", "isAnims"),
    FIX("/0/x/2/x", "anim"),
    US("/0/x/2/x/0", "usYRotations"),
    US("/0/x/2/x/1", "usNodeAnimIndices"),
    US("/0/x/2/x/2", "usInitialOrients"),
    US("/0/x/2/x/3", "usTranslationSets"),
    US("/0/x/2/x/4", "usRotationSets"),
    FIX("/0/x/2/x/5", "isTransitionTable"),
    RAW("/0/x/2/x/5/0", NULL, 0, "transition"),
    US("/0/x/2/x/5/1", "usTableEntries"),
    US("/0/x/2/x/6", "usEvents"),
    US("/0/x/3", "usStaticEvents"),
    ARR("/1", NULL, 80, false, "usObjectAttributes"),
    ARR("/2", NULL, 2, false, "usObjectTypes"),
    VAR("/3", "isTextureSets"),
    FIX("/3/x", "textureSet"),
    RAW("/3/x/0", NULL, 0, "format"),
    VAR("/3/x/1", "isBitmaps"),
    RAW("/3/x/1/x", NULL, 0, "bitmap"),
    VAR("/3/x/2", "isPalettes"),
    RAW("/3/x/2/x", NULL, 0, "palette"),
    FIX_US("/4", "isParticleEffects", "usTypes|usParticles|usImpacts|"),
    FIX("/5", "isSoundEffects"),
    US("/5/0", "usTypes"),
    VAR("/5/1", "isSounds"),
    RAW("/5/1/x", NULL, 0, "sound"),
    VAR("/6", "isLevels"),
    FIX("/6/x", "level"),
    RAW("/6/x/0", NULL, 0, "level"),
    FIX_US("/6/x/1", "isCollision", "usRegionAttributes|usCorners|usRegions|usBlockBounds|"),
    US("/6/x/2", "usInstances"),
    FIX_US("/6/x/3", "isGridBounds", "usMinXs|usMaxXs|usMinZs|usMaxZs|usBounds|"),
    VAR("/6/x/4", "isGridSections"),
    FIX_US("/6/x/4/x", "gridSection", "usEStaticInstances|usStaticInstances|usSimpleInstances|"),
    VAR("/6/x/5", "isSkyTextureSet"), /* children not described: recognised by validation */
    FIX("/7", "isPersistantCounts"),
    US("/7/0", "usPickupCounts"),
    US("/7/1", "usAnimCounts"),
    RAW("/7/2", NULL, 0, "MaxRegionCount"),
    FIX_US("/8", "isWarpDests", "usIDs|usWarpDests|"),
    VAR("/9", "isBinaries"),
    RAW("/9/x", NULL, 0, "binary"),
    US("/10", "usBinaryTypes"),
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

static enum s3_err schema_apply(struct t2fs_schema *root, const struct pattern *p)
{
    struct t2fs_schema *s = root;
    for (const char *c = p->path; s && *c;) {
        c++; /* the '/' */
        size_t len = strcspn(c, "/");
        s = schema_step(s, c, len);
        c += len;
    }
    if (!s)
        return S3_ERR_NOMEM;
    s->kind = p->kind;
    s->data = p->data;
    s->fixed_size = p->fixed_size;
    s->value_size = p->value_size;
    s->interleaved = p->interleaved;
    s->name = strdup(p->name);
    s->type = p->type ? strdup(p->type) : NULL;
    return s->name && (s->type || !p->type) ? S3_OK : S3_ERR_NOMEM;
}

/* A pattern, and the arrays it names below it (FIX_US): children path/0, path/1, ... */
static enum s3_err pattern_apply(struct t2fs_schema *root, const struct pattern *p)
{
    enum s3_err e = schema_apply(root, p);
    unsigned k = 0;
    for (const char *a = p->arrays, *bar; !e && a && (bar = strchr(a, '|')); a = bar + 1, k++) {
        char path[64], name[64];
        snprintf(path, sizeof path, "%s/%u", p->path, k);
        snprintf(name, sizeof name, "%.*s", (int)(bar - a), a);
        e = schema_apply(root, &(struct pattern)US(path, name));
    }
    return e;
}

static struct t2fs_schema *from_table(const struct pattern *table, size_t n)
{
    struct t2fs_schema *root = schema_new();
    for (size_t i = 0; root && i < n; i++) {
        if (pattern_apply(root, &table[i]) != S3_OK) {
            t2fs_schema_free(root);
            return NULL;
        }
    }
    return root;
}

struct t2fs_schema *t2fs_schema_turok2(void)
{
    return from_table(turok2_models, sizeof turok2_models / sizeof turok2_models[0]);
}

struct t2fs_schema *t2fs_schema_turok1(void)
{
    return from_table(turok1_all, sizeof turok1_all / sizeof turok1_all[0]);
}

enum s3_err t2fs_schema_builtin(const char *name, struct t2fs_schema **out)
{
    if (strcmp(name, "turok2") == 0)
        *out = t2fs_schema_turok2();
    else if (strcmp(name, "turok1") == 0)
        *out = t2fs_schema_turok1();
    else
        return *out = NULL, S3_ERR_UNSUPPORTED;
    return *out ? S3_OK : S3_ERR_NOMEM;
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
    switch (s->kind) {
    case T2K_VARIABLE:
        return s->each;
    case T2K_FIXED:
        return i < s->nchild ? s->child[i] : NULL;
    case T2K_REPEATED:
        return s->nchild ? s->child[i % s->nchild] : NULL;
    case T2K_MIXED:
        return i < s->nchild ? s->child[i] : s->each;
    default:
        return NULL;
    }
}
