#include "fixture_dbpf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "fixture.h"
#include "fixture_geom.h"
#include "fixture_rig_clear.h"
#include "refpack_pack.h"

static uint16_t comp_word(enum fxp_comp c)
{
    switch (c) {
    case FXP_REFPACK:
        return 0xFFFF;
    case FXP_STREAMABLE:
        return 0xFFFE;
    case FXP_ZLIB:
        return 0x5A42;
    case FXP_DELETED:
        return 0xFFE0;
    default:
        return 0;
    }
}

static uint8_t *compress_zlib(const uint8_t *in, size_t n, size_t *out_len)
{
    uLongf cap = compressBound((uLong)n);
    uint8_t *out = malloc(cap);
    if (compress2(out, &cap, in, (uLong)n, 9) != Z_OK)
        abort();
    *out_len = cap;
    return out;
}

uint8_t *fxp_build(const struct fxp_opts *o, const struct fxp_res *r, size_t n, size_t *size,
                   struct fxp_layout *lay)
{
    struct fxbuf b = {0};
    memset(lay, 0, sizeof *lay);
    fx_fill(&b, 0, 96);
    /* data first, as the games' tools write it */
    uint64_t *off = calloc(n ? n : 1, sizeof *off), *ssz = calloc(n ? n : 1, sizeof *ssz);
    for (size_t i = 0; i < n; i++) {
        const struct fxp_res *x = &r[i];
        uint8_t *packed = NULL;
        size_t plen = x->len;
        const uint8_t *bytes = x->data;
        if (x->comp == FXP_REFPACK || x->comp == FXP_STREAMABLE)
            bytes = packed = rp_pack(x->data, x->len, NULL, &plen, NULL);
        else if (x->comp == FXP_ZLIB)
            bytes = packed = compress_zlib(x->data, x->len, &plen);
        if (x->comp == FXP_DELETED || x->comp == FXP_NULL) {
            off[i] = x->comp == FXP_NULL ? b.len : 0xFFFFFFFFu;
            ssz[i] = x->comp == FXP_NULL ? 1 : 0;
            if (x->comp == FXP_NULL)
                fx_u8(&b, 0);
        } else {
            off[i] = b.len;
            ssz[i] = plen;
            fx_put(&b, bytes, plen);
        }
        if (i < FXP_MAX) {
            lay->offset[i] = off[i];
            lay->stored_size[i] = ssz[i];
        }
        free(packed);
    }
    lay->index_pos = b.len;
    fx_u32(&b, o->index_flags);
    if (o->index_flags & 1)
        fx_u32(&b, r[0].type);
    if (o->index_flags & 2)
        fx_u32(&b, r[0].group);
    if (o->index_flags & 4)
        fx_u32(&b, (uint32_t)(r[0].instance >> 32));
    for (size_t i = 0; i < n; i++) {
        const struct fxp_res *x = &r[i];
        if (i < FXP_MAX)
            lay->record[i] = b.len;
        if (!(o->index_flags & 1))
            fx_u32(&b, x->type);
        if (!(o->index_flags & 2))
            fx_u32(&b, x->group);
        if (!(o->index_flags & 4))
            fx_u32(&b, (uint32_t)(x->instance >> 32));
        fx_u32(&b, (uint32_t)x->instance);
        fx_u32(&b, (uint32_t)off[i]);
        bool ext = x->comp != FXP_PLAIN && x->comp != FXP_NULL;
        fx_u32(&b, (uint32_t)ssz[i] | (ext ? 0x80000000u : 0));
        fx_u32(&b, x->comp == FXP_NULL ? 0xFFFFFFFFu : x->comp == FXP_DELETED ? 0 : (uint32_t)x->len);
        if (ext) {
            fx_u16(&b, comp_word(x->comp));
            fx_u16(&b, 1);
        }
    }
    free(off);
    free(ssz);
    lay->index_size = b.len - lay->index_pos;
    memcpy(b.p, "DBPF", 4);
    fx_patch_u32(&b, 0x04, o->major ? o->major : 2);
    fx_patch_u32(&b, 0x08, o->minor ? o->minor : o->game == 4 ? 1 : 0);
    fx_patch_u32(&b, 0x24, (uint32_t)n);
    fx_patch_u32(&b, 0x28, o->legacy_position ? (uint32_t)lay->index_pos : 0);
    fx_patch_u32(&b, 0x2C, (uint32_t)lay->index_size);
    fx_patch_u32(&b, 0x3C, 3);
    fx_patch_u32(&b, 0x40, o->legacy_position ? 0 : (uint32_t)lay->index_pos);
    lay->size = b.len;
    *size = b.len;
    return b.p;
}

uint8_t *fxp_namemap(const uint64_t *instances, const char *const *names, size_t n, size_t *size)
{
    struct fxbuf b = {0};
    fx_u32(&b, 1);
    fx_u32(&b, (uint32_t)n);
    for (size_t i = 0; i < n; i++) {
        fx_u32(&b, (uint32_t)instances[i]);
        fx_u32(&b, (uint32_t)(instances[i] >> 32));
        fx_u32(&b, (uint32_t)strlen(names[i]));
        fx_put(&b, names[i], strlen(names[i]));
    }
    *size = b.len;
    return b.p;
}

static void tag_of(uint32_t type, const char **tag, const char **ext)
{
    /* the notes' type table, for the types the samples use */
    static const struct {
        uint32_t type;
        const char *tag, *ext;
    } t[] = {{0x8EAF13DE, "_RIG", ".grannyrig"}, {0x015A1849, "GEOM", ".simgeom"},
             {0x6B20C4F3, "CLIP", ".animation"}, {0x0166038C, "_KEY", ".keyname"},
             {0x00B2D882, "_IMG", ".dds"}};
    *tag = "UNKN";
    *ext = ".bnry";
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (t[i].type == type) {
            *tag = t[i].tag;
            *ext = t[i].ext;
        }
}

void fxp_expected_name(char *out, size_t size, int game, const struct fxp_res *r, const char *name, unsigned dup)
{
    const char *tag, *ext;
    tag_of(r->type, &tag, &ext);
    int k = snprintf(out, size, "S%d_%08X_%08X_%016llX%s%s%%%%+%s%s", game, r->type, r->group,
                     (unsigned long long)r->instance, name ? "_" : "", name ? name : "", tag, ext);
    if (dup && k > 0 && (size_t)k < size)
        snprintf(out + k, size - (size_t)k, "~%u", dup + 1);
}

static void add(struct fxp_sample *s, uint32_t type, uint32_t group, uint64_t inst, uint8_t *data, size_t len,
                enum fxp_comp comp, const char *name)
{
    size_t i = s->n++;
    s->res[i] = (struct fxp_res){type, group, inst, data, len, comp};
    s->owned[i] = data;
    s->names[i] = name;
}

uint8_t *fxp_pattern(size_t n, uint32_t seed)
{
    uint8_t *b = malloc(n ? n : 1);
    uint32_t x = seed;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        b[i] = (i & 3) ? (uint8_t)(x >> 24) : (uint8_t)("expanded"[i % 8]);
    }
    return b;
}

static uint8_t *blob(size_t n, uint32_t seed, bool repetitive)
{
    uint8_t *b = malloc(n ? n : 1);
    uint32_t x = seed;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        b[i] = repetitive ? (uint8_t)("geometry"[i % 8] ^ ((i / 64) & 3)) : (uint8_t)(x >> 16);
    }
    return b;
}

/* variant 6: GEOM resources and the rigs they may bind to (Sims 4, zlib, one group) */
static void geom_sample(struct fxp_sample *s)
{
    s->opts = (struct fxp_opts){.game = 4, .index_flags = 2};
    struct fx_rig_layout rl;
    struct fx_gr2_layout gl;
    size_t n;
    uint8_t *decoy = fx_sample_rig(&n, &rl, &gl, NULL);
    add(s, 0x8EAF13DE, 0, FXP_GEOM_DECOY, decoy, n, FXP_ZLIB, "decoy_rig");
    struct fxc_opts co = fxc_variant(0);
    struct fxc_layout cl;
    uint8_t *clear = fxc_build(&co, &n, &cl);
    add(s, 0x8EAF13DE, 0, FXP_GEOM_RIG, clear, n, FXP_ZLIB, "auRig");
    struct fxgeom_opts go = {.version = 14};
    struct fxgeom_layout glay;
    uint8_t *mesh = fxgeom_build(&go, &n, &glay);
    add(s, 0x015A1849, 0, FXP_GEOM_MESH, mesh, n, FXP_ZLIB, "yfBody");
    go = (struct fxgeom_opts){.version = 5, .missing_hash = true};
    uint8_t *custom = fxgeom_build(&go, &n, &glay);
    add(s, 0x015A1849, 0, FXP_GEOM_CUSTOM, custom, n, FXP_STORED, "yfCustom");
    uint64_t inst[] = {FXP_GEOM_DECOY, FXP_GEOM_RIG, FXP_GEOM_MESH, FXP_GEOM_CUSTOM};
    const char *nm[] = {"decoy_rig", "auRig", "yfBody", "yfCustom"};
    uint8_t *map = fxp_namemap(inst, nm, 4, &n);
    add(s, 0x0166038C, 0, 0x0000000100000100ull, map, n, FXP_ZLIB, NULL);
    s->file = fxp_build(&s->opts, s->res, s->n, &s->size, &s->lay);
}

void fxp_sample(struct fxp_sample *s, int variant)
{
    memset(s, 0, sizeof *s);
    if (variant == 6) {
        geom_sample(s);
        return;
    }
    bool s4 = variant >= 4;
    enum fxp_comp packed = s4 ? FXP_ZLIB : FXP_REFPACK;
    uint32_t group = s4 ? 0 : 0x00000001; /* Sims 4 variant: one group for all (constant) */
    s->opts = (struct fxp_opts){.game = s4 ? 4 : 3, .index_flags = variant == 4 ? 2u : variant == 5 ? 1u : 0u};
    struct fx_rig_layout rl;
    struct fx_gr2_layout gl;
    size_t n;
    uint8_t *rig = fx_sample_rig(&n, &rl, &gl, NULL);
    add(s, 0x8EAF13DE, group, 0x47B84BA0E85F42F4ull, rig, n, packed, "body_rig");
    uint8_t *gr2 = fx_sample_gr2("le32", 7, &n, &gl);
    add(s, 0x8EAF13DE, group, 0x0000000100000002ull, gr2, n, FXP_STORED, NULL);
    struct fxc_opts co = fxc_variant(s4 ? 2 : 1);
    struct fxc_layout cl;
    uint8_t *clear = fxc_build(&co, &n, &cl);
    add(s, 0x8EAF13DE, group, 0x0000000100000003ull, clear, n, s4 ? FXP_ZLIB : FXP_STREAMABLE, "clear_rig");
    if (variant != 5) {
        add(s, 0x015A1849, group, 0x00000001000000A0ull, blob(5000, 7, true), 5000, packed, NULL);
        add(s, 0x6B20C4F3, group, 0x00000001000000B0ull, NULL, 0, FXP_DELETED, NULL);
        /* the same key again, stored without a compression word (a later override) */
        add(s, 0x015A1849, group, 0x00000001000000A0ull, blob(300, 9, false), 300, FXP_PLAIN, NULL);
        s->dup[s->n - 1] = 1;
        uint8_t *g2 = fx_sample_gr2("le64", 6, &n, &gl);
        add(s, 0x6B20C4F3, group, 0x00000001000000C0ull, g2, n, packed, "walk_clip");
        add(s, 0x00B2D882, group, 0x00000001000000D0ull, NULL, 0, FXP_NULL, NULL);
        add(s, 0x12345678, group, 0x00000001000000E0ull, blob(64, 3, false), 64, FXP_STORED, NULL);
        add(s, 0x00B2D882, group, 0x00000001000000F0ull, blob(20000, 5, false), 20000, packed, NULL);
        uint64_t inst[] = {0x47B84BA0E85F42F4ull, 0x0000000100000003ull, 0x00000001000000C0ull};
        const char *nm[] = {"body_rig", "clear_rig", "walk_clip"};
        uint8_t *map = fxp_namemap(inst, nm, 3, &n);
        add(s, 0x0166038C, group, 0x0000000100000100ull, map, n, s4 ? FXP_ZLIB : FXP_STORED, NULL);
    } else {
        s->names[0] = s->names[2] = NULL; /* no name map in this one */
    }
    s->file = fxp_build(&s->opts, s->res, s->n, &s->size, &s->lay);
}

void fxp_sample_free(struct fxp_sample *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->owned[i]);
    free(s->file);
}

int fxp_write_big(const char *path, uint32_t n, int game)
{
    size_t size;
    uint8_t *f = fxp_build_big(n, game, 100, &size);
    int rc = f ? fx_write_file(path, f, size) : -1;
    free(f);
    return rc;
}

uint8_t *fxp_build_big(uint32_t n, int game, uint32_t rig_every, size_t *size)
{
    struct fxp_res *r = calloc(n ? n : 1, sizeof *r);
    uint8_t **own = calloc(n ? n : 1, sizeof *own);
    struct fx_rig_layout rl;
    struct fx_gr2_layout gl;
    size_t rig_size;
    uint8_t *rig = fx_sample_rig(&rig_size, &rl, &gl, NULL);
    for (uint32_t i = 0; i < n; i++) {
        bool is_rig = i % rig_every == 0;
        size_t len = is_rig ? rig_size : 1024 + (i % 7) * 512;
        own[i] = is_rig ? NULL : blob(len, i, i % 2 == 0);
        r[i] = (struct fxp_res){is_rig ? 0x8EAF13DE : (i % 3 ? 0x015A1849 : 0x00B2D882), 0,
                                0x0000000100000000ull + i, is_rig ? rig : own[i], len,
                                game == 4 ? FXP_ZLIB : FXP_REFPACK};
    }
    struct fxp_opts o = {.game = game};
    struct fxp_layout lay;
    /* the layout records only FXP_MAX entries: enough for the tests, unused here */
    uint8_t *f = fxp_build(&o, r, n, size, &lay);
    for (uint32_t i = 0; i < n; i++)
        free(own[i]);
    free(own);
    free(r);
    free(rig);
    return f;
}

uint8_t *fxp_build_repeated_names(uint32_t entries, uint32_t names, size_t *size)
{
    return fxp_build_repeated_names_as(entries, names, FXP_ZLIB, size);
}

uint8_t *fxp_build_repeated_names_as(uint32_t entries, uint32_t names, enum fxp_comp map_comp, size_t *size)
{
    struct fxp_res *r = calloc((size_t)entries + 1, sizeof *r);
    uint64_t *inst = malloc(((size_t)names + 1) * sizeof *inst);
    char **nm = malloc(((size_t)names + 1) * sizeof *nm);
    char first[101], later[101];
    static const uint8_t data[4] = {1, 2, 3, 4};
    uint8_t *f = NULL;
    if (!r || !inst || !nm)
        goto out;
    memset(first, '.', 100);
    memset(later, '.', 100);
    first[100] = later[100] = 0;
    memcpy(first, FXP_REPEATED_FIRST, strlen(FXP_REPEATED_FIRST));
    memcpy(later, "later", 5);
    for (uint32_t i = 0; i < names; i++) {
        inst[i] = FXP_REPEATED_INSTANCE;
        nm[i] = i ? later : first;
    }
    for (uint32_t i = 0; i < entries; i++)
        r[i] = (struct fxp_res){0x12345678, i, FXP_REPEATED_INSTANCE, data, sizeof data, FXP_STORED};
    size_t mlen;
    uint8_t *map = fxp_namemap(inst, (const char *const *)nm, names, &mlen);
    r[entries] = (struct fxp_res){0x0166038C, 0, 0x0000000100000100ull, map, mlen, map_comp};
    struct fxp_opts o = {.game = 4};
    struct fxp_layout lay;
    f = fxp_build(&o, r, (size_t)entries + 1, size, &lay);
    free(map);
out:
    free(r);
    free(inst);
    free(nm);
    return f;
}
