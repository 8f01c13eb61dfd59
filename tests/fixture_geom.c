#include "fixture_geom.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "fixture_rig_clear.h"

const float fxgeom_pos[FXGEOM_VERTS][3] = {
    {-0.05f, 0.9f, 0.0f}, {0.05f, 0.9f, 0.02f}, {-0.05f, 1.0f, 0.04f},
    {0.05f, 1.0f, 0.06f}, {-0.05f, 1.1f, 0.08f}, {0.05f, 1.1f, 0.1f},
};
const float fxgeom_nrm[FXGEOM_VERTS][3] = {
    {0, 0, 1}, {0, 0, 1}, {0.6f, 0, 0.8f}, {0, 0.6f, 0.8f}, {0, 0, 1}, {-0.6f, 0, 0.8f},
};
const float fxgeom_uv[3][FXGEOM_VERTS][2] = {
    {{0, 1}, {0.125f, 0.9f}, {0.25f, 0.8f}, {0.375f, 0.7f}, {0.5f, 0.6f}, {0.625f, 0.5f}},
    {{0.5f, -0.5f}, {0.3f, -0.4f}, {0.1f, -0.3f}, {-0.1f, -0.2f}, {-0.3f, -0.1f}, {-0.5f, 0}},
    {{1, 0}, {0.75f, 0.25f}, {0.5f, 0.5f}, {0.25f, 0.75f}, {0, 1}, {-0.25f, -1}},
};
const float fxgeom_tangent[3] = {1, 0, 0};
const uint32_t fxgeom_index[FXGEOM_TRIS * 3] = {0, 1, 2, 2, 1, 3, 2, 3, 4, 4, 3, 5};
/* slot k goes with weight k; vertex 2's slot 1 is a leftover index of a zero weight;
 * vertex 3 names list entry 3 twice */
const uint8_t fxgeom_bones[FXGEOM_VERTS][4] = {{0, 1, 0, 0}, {1, 2, 3, 0}, {2, 5, 0, 0},
                                               {3, 3, 1, 0}, {4, 0, 0, 0}, {5, 4, 2, 1}};
const uint8_t fxgeom_wbytes[FXGEOM_VERTS][4] = {{200, 55, 0, 0},   {128, 100, 27, 0}, {255, 0, 0, 0},
                                                {100, 100, 55, 0}, {255, 0, 0, 0},    {100, 80, 50, 25}};
const float fxgeom_wfloats[FXGEOM_VERTS][4] = {{0.8f, 0.2000001f, 0, 0}, {0.5f, 0.4f, 0.1f, 0}, {1, 0, 0, 0},
                                               {0.4f, 0.4f, 0.2f, 0},     {1, 0, 0, 0},          {0.4f, 0.3f, 0.2f, 0.1f}};
const char *const fxgeom_rig_names[FXGEOM_HASHES] = {"b__Spine0__",  "b__Pelvis__", "b__L_Thigh__",
                                                     "b__R_Thigh__", "b__ROOT__",   "b__Head,\"x\"__"};
const char fxgeom_custom_bone[] = "b__Custom_Tail__";
const uint32_t fxgeom_unknown_param = 0x12345678;

const struct fxgeom_uv_stitch fxgeom_uv_stitches[3] = {
    {1, 2, {{0.1f, 0.2f}, {0.3f, 0.4f}}}, {4, 0, {{0, 0}, {0, 0}}}, {5, 1, {{0.5f, 0.75f}, {0, 0}}}};
const uint32_t fxgeom_seams[3][2] = {{2, 3u << 12 | 7}, {4, 0u << 12 | 1}, {5, 6u << 12 | 0x123}};
const uint32_t fxgeom_states[2][5] = {{1, 0, 0, 6, 4}, {2, 3, 2, 4, 2}};
const uint32_t fxgeom_tgi[FXGEOM_TGIS][2] = {{0x00B2D882, 0}, {0x00B2D882, 0x80000000}, {0x00AE6C67, 0}};
const uint64_t fxgeom_tgi_instance[FXGEOM_TGIS] = {0x1111222233334444ull, 0x5555666677778888ull,
                                                   0x99990000AAAABBBBull};

/* DiffuseMap (texture, TGI 0), Shininess (float), Ambient (4 floats), an unknown int, and
 * NormalMap as type 0x10004 (index 1; read as s4pi's inline key: instance 1, type _IMG) */
const uint32_t fxgeom_param_type[FXGEOM_PARAMS] = {4, 1, 1, 2, 0x10004};
const uint32_t fxgeom_param_count[FXGEOM_PARAMS] = {4, 1, 4, 1, 4};
const uint32_t fxgeom_param_words[FXGEOM_PARAMS][4] = {
    {0, 0, 0, 0}, {0x3E800000, 0, 0, 0}, {0x3DCCCCCD, 0x3E4CCCCD, 0x3E99999A, 0x3F800000},
    {0xFFFFFFF9, 0, 0, 0}, {1, 0, 0x00B2D882, 0}};
const char *const fxgeom_param_names[FXGEOM_PARAMS] = {"DiffuseMap", "Shininess", "Ambient", NULL, "NormalMap"};

uint32_t fxgeom_param_hash(int i)
{
    return fxgeom_param_names[i] ? fxc_hash(fxgeom_param_names[i]) : fxgeom_unknown_param;
}

uint32_t fxgeom_decls(const struct fxgeom_opts *o, struct fxgeom_decl *out)
{
    enum { POS = 1, NRM, UV, BONES, WEIGHTS, TAN, TAG, VID = 10 };
    static const struct fxgeom_decl v5[] = {{POS, 1, 12, -1}, {NRM, 1, 12, -1},    {UV, 1, 8, 0},
                                            {BONES, 2, 4, -1}, {WEIGHTS, 1, 16, -1}, {TAN, 1, 12, -1}};
    static const struct fxgeom_decl v12[] = {{POS, 1, 12, -1}, {NRM, 1, 12, -1},   {UV, 1, 8, 0},
                                             {BONES, 2, 4, -1}, {WEIGHTS, 2, 4, -1}, {TAN, 1, 12, -1}};
    static const struct fxgeom_decl v13[] = {{NRM, 1, 12, -1},  {POS, 1, 12, -1},    {UV, 1, 8, 0},    {UV, 1, 8, 1},
                                             {BONES, 2, 4, -1}, {WEIGHTS, 2, 4, -1}, {TAN, 1, 12, -1}, {TAG, 3, 4, -1}};
    static const struct fxgeom_decl v14[] = {{UV, 1, 8, 0},       {POS, 1, 12, -1}, {NRM, 1, 12, -1}, {BONES, 2, 4, -1},
                                             {WEIGHTS, 2, 4, -1}, {UV, 1, 8, 1},    {TAG, 3, 4, -1}};
    static const struct fxgeom_decl v15[] = {{POS, 1, 12, -1},    {NRM, 1, 12, -1}, {UV, 1, 8, 0},  {UV, 1, 8, 1},
                                             {UV, 1, 8, 2},       {BONES, 2, 4, -1}, {WEIGHTS, 2, 4, -1},
                                             {TAN, 1, 12, -1},    {TAG, 3, 4, -1},  {VID, 4, 4, -1}};
    const struct fxgeom_decl *d = o->version == 5 ? v5 : o->version == 12 ? v12 : o->version == 13 ? v13
                                : o->version == 14 ? v14 : v15;
    uint32_t n = o->version == 5 ? 6 : o->version == 12 ? 6 : o->version == 13 ? 8 : o->version == 14 ? 7 : 10;
    memcpy(out, d, n * sizeof *d);
    if (o->unknown_decl)
        out[n++] = (struct fxgeom_decl){11, 2, 4, -1};
    return n;
}

static uint32_t version_index_size(uint32_t version)
{
    return version == 13 ? 1 : version == 15 ? 4 : 2;
}

size_t fxgeom_slot_ray(uint32_t version, int r, const uint32_t *hashes, uint8_t *out)
{
    struct fxbuf b = {0};
    bool h = version >= 14;
    static const uint16_t tri[2][3] = {{0, 1, 2}, {2, 3, 4}};
    static const float f[2][14] = {{0.25f, 0.5f, 0.125f, 0.01f, 0.02f, 0.03f, 0, 1.2f, 0.1f, 0, 0, 0, 1},
                                   {0.1f, 0.2f, 1.5f, -0.1f, 0, 0.2f, 0.1f, 0.9f, 0, 0, 0.7071068f, 0, 0.7071068f}};
    fx_u32(&b, h ? hashes[r == 0 ? 0 : 1] : (uint32_t)(r == 0 ? 4 : 1));
    for (int k = 0; k < 3; k++)
        fx_u16(&b, tri[r][k]);
    for (int k = 0; k < 13; k++)
        fx_f32(&b, f[r][k]);
    if (h)
        fx_u32(&b, r == 0 ? 0 : hashes[2]);
    else
        fx_u8(&b, r == 0 ? 0xFF : 2);
    size_t n = b.len;
    memcpy(out, b.p, n);
    free(b.p);
    return n;
}

static void block_start(struct fxbuf *b, struct fxgeom_block *blk, uint32_t count)
{
    blk->pos = b->len;
    fx_u32(b, count);
}

static void block_end(struct fxbuf *b, struct fxgeom_block *blk)
{
    blk->size = b->len - blk->pos;
}

static void write_material(struct fxbuf *b, struct fxgeom_layout *lay)
{
    uint32_t data = 0;
    for (int i = 0; i < FXGEOM_PARAMS; i++)
        data += 4 * fxgeom_param_count[i];
    uint32_t size = 16 + 16 * FXGEOM_PARAMS + data;
    fx_u32(b, size);
    lay->material_pos = b->len;
    lay->material_size = size;
    fx_put(b, "MTNF", 4);
    fx_u32(b, 0);
    fx_u32(b, data);
    fx_u32(b, FXGEOM_PARAMS);
    uint32_t off = 16 + 16 * FXGEOM_PARAMS;
    for (int i = 0; i < FXGEOM_PARAMS; i++) {
        lay->param_pos[i] = b->len;
        fx_u32(b, fxgeom_param_hash(i));
        fx_u32(b, fxgeom_param_type[i]);
        fx_u32(b, fxgeom_param_count[i]);
        fx_u32(b, off);
        lay->param_data_pos[i] = lay->material_pos + off;
        off += 4 * fxgeom_param_count[i];
    }
    for (int i = 0; i < FXGEOM_PARAMS; i++)
        for (uint32_t k = 0; k < fxgeom_param_count[i]; k++)
            fx_u32(b, fxgeom_param_words[i][k]);
}

/* One vertex's values: the table mesh (with the opts' traps), or a grid. */
struct vertex {
    float pos[3], nrm[3], uv[3][2];
    uint8_t bones[4], wbytes[4];
    float wfloats[4];
};

static void table_vertex(const struct fxgeom_opts *o, uint32_t v, struct vertex *x)
{
    memcpy(x->pos, fxgeom_pos[v], sizeof x->pos);
    memcpy(x->nrm, fxgeom_nrm[v], sizeof x->nrm);
    if (o->zero_normal && v == 3)
        memset(x->nrm, 0, sizeof x->nrm);
    for (int set = 0; set < 3; set++)
        memcpy(x->uv[set], fxgeom_uv[set][v], sizeof x->uv[set]);
    memcpy(x->bones, fxgeom_bones[v], 4);
    memcpy(x->wbytes, fxgeom_wbytes[v], 4);
    memcpy(x->wfloats, fxgeom_wfloats[v], sizeof x->wfloats);
    if (o->bad_weight_sum && v == 1) { /* its third weight smaller */
        x->wbytes[2] = 20;
        x->wfloats[2] = 0.05f;
    }
}

/* A grid of cols x rows vertices, 1 cm apart, facing +Z; each vertex weighted to two
 * neighbouring entries of the hash list (bytes summing to 255, floats to 1). */
static void grid_vertex(const struct fxgeom_opts *o, uint32_t v, struct vertex *x)
{
    uint32_t c = v % o->grid_cols, r = v / o->grid_cols;
    memset(x, 0, sizeof *x);
    x->pos[0] = 0.01f * (float)c;
    x->pos[1] = 0.01f * (float)r;
    x->nrm[2] = 1;
    for (int set = 0; set < 3; set++) {
        x->uv[set][0] = (float)c / (float)o->grid_cols;
        x->uv[set][1] = (float)r / (float)o->grid_rows;
    }
    x->bones[0] = (uint8_t)(r % FXGEOM_HASHES);
    x->bones[1] = (uint8_t)((r + 1) % FXGEOM_HASHES);
    x->wbytes[0] = (uint8_t)(128 + c % 100);
    x->wbytes[1] = (uint8_t)(255 - x->wbytes[0]);
    x->wfloats[0] = x->wbytes[0] / 255.0f;
    x->wfloats[1] = 1 - x->wfloats[0];
}

/* The figure: a body of revolution 1.75 m tall (legs, hips, waist, chest, neck, head: the
 * radius at heights 0..1), each ring weighted between two neighbouring bones of a chain
 * from the feet up (hash-list entries ROOT, L_Thigh, Pelvis, Spine0, Head). */
static void figure_vertex(const struct fxgeom_opts *o, uint32_t v, struct vertex *x)
{
    static const float profile[][2] = {{0, 0.07f},    {0.45f, 0.1f},  {0.52f, 0.17f}, {0.6f, 0.13f},
                                       {0.72f, 0.18f}, {0.82f, 0.09f}, {0.85f, 0.05f}, {0.88f, 0.08f},
                                       {0.94f, 0.1f},  {1, 0.001f}};
    static const uint8_t chain[] = {4, 2, 1, 0, 5};
    uint32_t c = v % o->grid_cols, r = v / o->grid_cols;
    float t = (float)r / (float)(o->grid_rows - 1), a = 6.2831853f * (float)c / (float)(o->grid_cols - 1);
    size_t k = 0;
    while (k + 2 < sizeof profile / sizeof profile[0] && t > profile[k + 1][0])
        k++;
    float f = (t - profile[k][0]) / (profile[k + 1][0] - profile[k][0]);
    float radius = profile[k][1] + f * (profile[k + 1][1] - profile[k][1]);
    memset(x, 0, sizeof *x);
    x->pos[0] = radius * cosf(a);
    x->pos[1] = 1.75f * t;
    x->pos[2] = -radius * sinf(a); /* clockwise seen from above: the triangles face out */
    x->nrm[0] = cosf(a);
    x->nrm[2] = -sinf(a);
    for (int set = 0; set < 3; set++) {
        x->uv[set][0] = (float)c / (float)(o->grid_cols - 1);
        x->uv[set][1] = 1 - t;
    }
    float band = t * 4;
    uint32_t lo = band >= 4 ? 3 : (uint32_t)band;
    float w = band - (float)lo; /* toward the next bone up */
    x->bones[0] = chain[lo];
    x->bones[1] = chain[lo + 1];
    x->wbytes[1] = (uint8_t)(w * 255 + 0.5f);
    x->wbytes[0] = (uint8_t)(255 - x->wbytes[1]);
    x->wfloats[0] = x->wbytes[0] / 255.0f;
    x->wfloats[1] = x->wbytes[1] / 255.0f;
}

static uint32_t nverts_of(const struct fxgeom_opts *o)
{
    return o->grid_cols ? o->grid_cols * o->grid_rows : FXGEOM_VERTS;
}

/* Index i of the triangle list: the table's, or two triangles per grid cell. */
static uint32_t index_at(const struct fxgeom_opts *o, uint32_t i)
{
    if (!o->grid_cols)
        return i < FXGEOM_TRIS * 3 ? fxgeom_index[i] : 0;
    static const uint32_t corner[6][2] = {{0, 0}, {1, 0}, {0, 1}, {0, 1}, {1, 0}, {1, 1}};
    uint32_t cell = i / 6, k = i % 6, cw = o->grid_cols - 1;
    uint32_t c = cell % cw + corner[k][0], r = cell / cw + corner[k][1];
    return r * o->grid_cols + c;
}

static void write_vertex(struct fxbuf *b, const struct fxgeom_opts *o, const struct fxgeom_layout *lay, uint32_t v)
{
    struct vertex x;
    if (o->figure)
        figure_vertex(o, v, &x);
    else if (o->grid_cols)
        grid_vertex(o, v, &x);
    else
        table_vertex(o, v, &x);
    for (uint32_t d = 0; d < lay->ndecls; d++) {
        const struct fxgeom_decl *dc = &lay->decl[d];
        switch (dc->usage) {
        case 1:
            for (int k = 0; k < 3; k++)
                fx_f32(b, x.pos[k]);
            break;
        case 2:
            for (int k = 0; k < 3; k++)
                fx_f32(b, x.nrm[k]);
            break;
        case 3:
            fx_f32(b, x.uv[dc->uv_set][0]);
            fx_f32(b, x.uv[dc->uv_set][1]);
            break;
        case 4:
            fx_put(b, x.bones, 4);
            break;
        case 5:
            for (int k = 0; k < 4; k++) {
                if (dc->type == 1)
                    fx_f32(b, x.wfloats[k]);
                else
                    fx_u8(b, x.wbytes[k]);
            }
            break;
        case 6:
            for (int k = 0; k < 3; k++)
                fx_f32(b, fxgeom_tangent[k]);
            break;
        case 7:
            for (int k = 0; k < 4; k++)
                fx_u8(b, k == 3 ? 255 : (uint8_t)(v * (uint32_t)(k + 1)));
            break;
        case 10:
            fx_u32(b, 1000 + v);
            break;
        default:
            fx_fill(b, (uint8_t)(0xA0 + v), dc->size);
        }
    }
}

static void write_tail(struct fxbuf *b, const struct fxgeom_opts *o, struct fxgeom_layout *lay)
{
    uint32_t v = o->version;
    if (v < 12) {
        lay->skin.pos = b->len;
        fx_u32(b, 2); /* the skin controller's TGI entry */
        lay->skin.size = 4;
    } else {
        block_start(b, &lay->uv_stitches, 3);
        for (int i = 0; i < 3; i++) {
            const struct fxgeom_uv_stitch *s = &fxgeom_uv_stitches[i];
            fx_u32(b, (uint32_t)s->vertex);
            fx_u32(b, s->count);
            for (uint32_t k = 0; k < s->count; k++) {
                fx_f32(b, s->uv[k][0]);
                fx_f32(b, s->uv[k][1]);
            }
        }
        block_end(b, &lay->uv_stitches);
        if (v >= 13) {
            block_start(b, &lay->seams, 3);
            for (int i = 0; i < 3; i++) {
                fx_u32(b, fxgeom_seams[i][0]);
                fx_u16(b, (uint16_t)fxgeom_seams[i][1]);
            }
            block_end(b, &lay->seams);
        }
        block_start(b, &lay->slot_rays, 2);
        for (int r = 0; r < 2; r++) {
            uint8_t rec[80];
            fx_put(b, rec, fxgeom_slot_ray(v, r, lay->hash, rec));
        }
        block_end(b, &lay->slot_rays);
    }
    block_start(b, &lay->bones, FXGEOM_HASHES);
    for (int i = 0; i < FXGEOM_HASHES; i++)
        fx_u32(b, lay->hash[i]);
    block_end(b, &lay->bones);
    if (v >= 15) {
        block_start(b, &lay->states, 2);
        for (int i = 0; i < 2; i++)
            for (int k = 0; k < 5; k++)
                fx_u32(b, fxgeom_states[i][k]);
        block_end(b, &lay->states);
    }
}

uint8_t *fxgeom_build(const struct fxgeom_opts *o, size_t *size, struct fxgeom_layout *lay)
{
    struct fxbuf b = {0};
    memset(lay, 0, sizeof *lay);
    const char *const *names = o->names ? o->names : fxgeom_rig_names;
    for (int i = 0; i < FXGEOM_HASHES; i++)
        lay->hash[i] = fxc_hash(o->missing_hash && i == 5 ? fxgeom_custom_bone : names[i]);
    /* RCOL: version 3, one chunk (instance, type, group), no external keys, its position
     * and length patched in at the end */
    fx_u32(&b, 3);
    fx_u32(&b, 0);
    fx_u32(&b, 0);
    fx_u32(&b, 0);
    fx_u32(&b, 1);
    fx_u32(&b, 0x0BADF00D);
    fx_u32(&b, 0x00C0FFEE);
    fx_u32(&b, 0x015A1849);
    fx_u32(&b, 0);
    fx_u32(&b, 0);
    fx_u32(&b, 0);
    lay->rcol_size = b.len;
    lay->geom_pos = b.len;
    fx_put(&b, "GEOM", 4);
    fx_u32(&b, o->version);
    fx_u32(&b, 0); /* the TGI-list offset, patched */
    fx_u32(&b, 4 + 16 * FXGEOM_TGIS);
    fx_u32(&b, o->no_material ? 0 : fxc_hash("simskin"));
    if (!o->no_material)
        write_material(&b, lay);
    lay->fields_pos = b.len;
    fx_u32(&b, 0);  /* merge group */
    fx_u32(&b, 0);  /* sort order */
    fx_u32(&b, nverts_of(o));
    lay->ndecls = fxgeom_decls(o, lay->decl);
    fx_u32(&b, lay->ndecls);
    lay->decl_pos = b.len;
    for (uint32_t d = 0; d < lay->ndecls; d++) {
        fx_u32(&b, lay->decl[d].usage);
        fx_u32(&b, lay->decl[d].type);
        fx_u8(&b, lay->decl[d].size);
        lay->decl_offset[d] = lay->stride;
        lay->stride += lay->decl[d].size;
        lay->nuv += lay->decl[d].usage == 3;
    }
    lay->vert_pos = b.len;
    for (uint32_t v = 0; v < nverts_of(o); v++)
        write_vertex(&b, o, lay, v);
    lay->ibuf_pos = b.len;
    lay->index_size = version_index_size(o->version);
    lay->index_count = o->grid_cols ? 6 * (o->grid_cols - 1) * (o->grid_rows - 1)
                                    : FXGEOM_TRIS * 3 + (o->extra_index ? 1 : 0);
    fx_u32(&b, 1);
    fx_u8(&b, (uint8_t)lay->index_size);
    fx_u32(&b, lay->index_count);
    lay->index_pos = b.len;
    for (uint32_t i = 0; i < lay->index_count; i++) {
        uint32_t x = index_at(o, i);
        if (o->index_out_of_range && i == 3)
            x = FXGEOM_VERTS;
        if (lay->index_size == 1)
            fx_u8(&b, (uint8_t)x);
        else if (lay->index_size == 2)
            fx_u16(&b, (uint16_t)x);
        else
            fx_u32(&b, x);
    }
    write_tail(&b, o, lay);
    block_start(&b, &lay->tgis, FXGEOM_TGIS);
    for (int i = 0; i < FXGEOM_TGIS; i++) {
        fx_u32(&b, fxgeom_tgi[i][0]);
        fx_u32(&b, fxgeom_tgi[i][1]);
        fx_u32(&b, (uint32_t)fxgeom_tgi_instance[i]);
        fx_u32(&b, (uint32_t)(fxgeom_tgi_instance[i] >> 32));
    }
    block_end(&b, &lay->tgis);
    fx_patch_u32(&b, lay->geom_pos + 8, (uint32_t)(lay->tgis.pos - (lay->geom_pos + 12)));
    lay->geom_size = b.len - lay->geom_pos;
    fx_patch_u32(&b, 0x24, (uint32_t)lay->geom_pos);
    fx_patch_u32(&b, 0x28, (uint32_t)lay->geom_size);
    lay->size = b.len;
    *size = b.len;
    return b.p;
}
