#include "fixture_gr2obj.h"
#include "fixture_gw.h"
#include "oodle1enc.h"
#include "oodle0enc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void make_bones(struct fxg_result *r, uint32_t n)
{
    r->nbones = n;
    for (uint32_t i = 0; i < n; i++) {
        struct fxg_bone *b = &r->bones[i];
        snprintf(b->name, sizeof b->name, i == 0 ? "b__ROOT__" : "b__Bone_%02u__", i);
        b->parent = i == 0 ? -1 : (int32_t)((i - 1) / 2);
        b->flags = 7;
        for (int k = 0; k < 3; k++)
            b->position[k] = 0.125f * (float)(i + 1) * (float)(k + 1);
        b->orientation[0] = 0.5f;
        b->orientation[1] = -0.5f;
        b->orientation[2] = 0.5f / (float)(i + 1);
        b->orientation[3] = 1.0f / 3.0f;
        for (int k = 0; k < 9; k++)
            b->scale_shear[k] = k % 4 == 0 ? 1.0f : 0.001f * (float)k;
        for (int k = 0; k < 16; k++)
            b->inverse_world[k] = (float)k - 0.1f * (float)i;
        b->lod_error = 0.01f * (float)i;
    }
}

uint8_t *fxg_build(const struct fxg_opts *o, size_t *size, struct fxg_result *r)
{
    struct gw w = {.p = strstr(o->sig, "64") ? 8 : 4};
    w.b.be = o->sig[0] == 'b';
    uint32_t p = (uint32_t)w.p;
    memset(r, 0, sizeof *r);
    make_bones(r, o->nbones);

    /* types, innermost first */
    const struct mdef vec3[] = {{REAL32, "x", NO_TYPE, 0}, {REAL32, "y", NO_TYPE, 0}, {REAL32, "z", NO_TYPE, 0}};
    uint32_t t_vec3 = gw_type(&w, vec3, 3);
    const struct mdef art[] = {{STRING, "FromArtToolName", NO_TYPE, 0}, {INT32, "ArtToolMajorRevision", NO_TYPE, 0},
                               {INT32, "ArtToolMinorRevision", NO_TYPE, 0}, {REAL32, "UnitsPerMeter", NO_TYPE, 0},
                               {REAL32, "Origin", NO_TYPE, 3}};
    uint32_t t_art = gw_type(&w, art, 5);
    const struct mdef exp[] = {{STRING, "ExporterName", NO_TYPE, 0}, {INT32, "ExporterMajorRevision", NO_TYPE, 0},
                               {REF, "ArtTool", t_art, 0}};
    uint32_t t_exp = gw_type(&w, exp, 3);
    const struct mdef bone[] = {{STRING, "Name", NO_TYPE, 0}, {INT32, "ParentIndex", NO_TYPE, 0},
                                {TRANSFORM, "Transform", NO_TYPE, 0}, {REAL32, "InverseWorldTransform", NO_TYPE, 16},
                                {REAL32, "LODError", NO_TYPE, 0}, {VARIANT, "ExtendedData", NO_TYPE, 0}};
    uint32_t t_bone = gw_type(&w, bone, 6);
    const struct mdef skel[] = {{STRING, "Name", NO_TYPE, 0}, {REF_ARRAY, "Bones", t_bone, 0},
                                {INT32, "LODType", NO_TYPE, 0}, {VARIANT, "ExtendedData", NO_TYPE, 0}};
    uint32_t t_skel = gw_type(&w, skel, 4);
    const struct mdef misc[] = {{INT8, "i8", NO_TYPE, 0},         {UINT8, "u8", NO_TYPE, 3},
                                {INT16, "i16", NO_TYPE, 0},       {UINT16, "u16", NO_TYPE, 0},
                                {REAL16, "half", NO_TYPE, 2},     {BINORMAL8, "bn8", NO_TYPE, 0},
                                {NORMAL8, "n8", NO_TYPE, 0},      {BINORMAL16, "bn16", NO_TYPE, 0},
                                {NORMAL16, "n16", NO_TYPE, 0},    {UINT32, "u32", NO_TYPE, 0},
                                {INLINE, "Vec", t_vec3, 0},       {INLINE, "Vecs", t_vec3, 2},
                                {EMPTY_REF, "Opaque", NO_TYPE, 0}, {REF_VARIANT_ARRAY, "Points", NO_TYPE, 0},
                                {INT32, "a/b", NO_TYPE, 0},       {INT32, "dup", NO_TYPE, 0},
                                {INT32, "dup", NO_TYPE, 0},       {INT32, NULL, NO_TYPE, 0},
                                {REF, "Nothing", t_vec3, 0},      {STRING, "NoString", NO_TYPE, 0}};
    uint32_t t_misc = gw_type(&w, misc, 20);
    const struct mdef root[] = {{REF, "ArtToolInfo", t_art, 0},       {REF, "ExporterInfo", t_exp, 0},
                                {STRING, "FromFileName", NO_TYPE, 0}, {ARRAY_REFS, "Skeletons", t_skel, 0},
                                {REF, "Misc", t_misc, 0},             {VARIANT, "ExtendedData", NO_TYPE, 0}};
    uint32_t t_root = gw_type(&w, root, 6);

    /* objects */
    uint32_t tr = 68;
    uint32_t bone_size = p + 4 + tr + 64 + 4 + 2 * p;
    uint32_t o_root = gw_alloc(&w, 2 * p + p + (4 + p) + p + 2 * p);
    uint32_t o_art = gw_alloc(&w, p + 4 + 4 + 4 + 12);
    gw_ptr(&w, o_art, gw_str(&w, "Fixture Studio"));
    gw_u32(&w, o_art + p, 2);
    gw_u32(&w, o_art + p + 4, 7);
    gw_f32(&w, o_art + p + 8, 100.0f);
    gw_f32(&w, o_art + p + 12, 1.5f);
    gw_f32(&w, o_art + p + 16, -2.25f);
    gw_f32(&w, o_art + p + 20, 0.0f);
    uint32_t o_exp = gw_alloc(&w, p + 4 + p);
    gw_ptr(&w, o_exp, gw_str(&w, "s3rigfs fixture"));
    gw_u32(&w, o_exp + p, 3);
    gw_ptr(&w, o_exp + p + 4, o_art); /* the same ArtToolInfo again */
    uint32_t o_bones = gw_alloc(&w, (size_t)bone_size * o->nbones);
    for (uint32_t i = 0; i < o->nbones; i++) {
        const struct fxg_bone *b = &r->bones[i];
        uint32_t at = o_bones + i * bone_size;
        gw_ptr(&w, at, gw_str(&w, b->name));
        gw_u32(&w, at + p, (uint32_t)b->parent);
        uint32_t t = at + p + 4;
        gw_u32(&w, t, b->flags);
        for (int k = 0; k < 3; k++)
            gw_f32(&w, t + 4 + 4 * (uint32_t)k, b->position[k]);
        for (int k = 0; k < 4; k++)
            gw_f32(&w, t + 16 + 4 * (uint32_t)k, b->orientation[k]);
        for (int k = 0; k < 9; k++)
            gw_f32(&w, t + 32 + 4 * (uint32_t)k, b->scale_shear[k]);
        for (int k = 0; k < 16; k++)
            gw_f32(&w, t + tr + 4 * (uint32_t)k, b->inverse_world[k]);
        gw_f32(&w, t + tr + 64, b->lod_error);
    }
    uint32_t skel_size = p + 4 + p + 4 + 2 * p;
    uint32_t o_skel = gw_alloc(&w, 2 * (size_t)skel_size);
    for (uint32_t s = 0; s < 2; s++) {
        uint32_t at = o_skel + s * skel_size;
        gw_ptr(&w, at, gw_str(&w, s == 0 ? "Skeleton" : "SkeletonCopy"));
        gw_u32(&w, at + p, o->nbones);
        if (o->nbones)
            gw_ptr(&w, at + p + 4, o_bones); /* both skeletons share one bones array */
        gw_u32(&w, at + p + 4 + p, s);
    }
    uint32_t o_skel_ptrs = gw_alloc(&w, 2 * (size_t)p);
    gw_ptr(&w, o_skel_ptrs, o_skel);
    gw_ptr(&w, o_skel_ptrs + p, o_skel + skel_size);
    /* Misc: 1+3+2+2+4+1+1+2+2+4 scalars, 12+24 inline, p empty ref, 2p+4 variant array, 4×4 ints, p, p */
    uint32_t o_misc = gw_alloc(&w, 22 + 36 + p + (2 * p + 4) + 16 + 2 * p);
    w.b.p[o_misc] = 0xF6;                 /* i8 = -10 */
    w.b.p[o_misc + 1] = 1;                /* u8 = 1 2 255 */
    w.b.p[o_misc + 2] = 2;
    w.b.p[o_misc + 3] = 255;
    gw_u16(&w, o_misc + 4, 0xFFFE);       /* i16 = -2 */
    gw_u16(&w, o_misc + 6, 65535);        /* u16 */
    gw_u16(&w, o_misc + 8, 0x3C00);       /* half 1.0 */
    gw_u16(&w, o_misc + 10, 0xC500);      /* half -5.0 */
    w.b.p[o_misc + 12] = 0x80;            /* bn8 = -128 */
    w.b.p[o_misc + 13] = 200;             /* n8 */
    gw_u16(&w, o_misc + 14, 0x8000);      /* bn16 = -32768 */
    gw_u16(&w, o_misc + 16, 40000);       /* n16 */
    gw_u32(&w, o_misc + 18, 4000000000u); /* u32 */
    for (int k = 0; k < 9; k++)
        gw_f32(&w, o_misc + 22 + 4 * (uint32_t)k, 0.5f * (float)(k + 1));
    uint32_t after = o_misc + 22 + 36;
    gw_ptr(&w, after, o_art); /* Opaque: an EmptyReference */
    uint32_t va = after + p;
    gw_ptr(&w, va, t_vec3);   /* Points: type, count, items */
    gw_u32(&w, va + p, 2);
    uint32_t o_points = gw_alloc(&w, 24);
    for (int k = 0; k < 6; k++)
        gw_f32(&w, o_points + 4 * (uint32_t)k, (float)k);
    gw_ptr(&w, va + p + 4, o_points);
    uint32_t ints = va + 2 * p + 4;
    gw_u32(&w, ints, 11);
    gw_u32(&w, ints + 4, 12);
    gw_u32(&w, ints + 8, 13);
    gw_u32(&w, ints + 12, (uint32_t)-14);
    /* root */
    gw_ptr(&w, o_root, o_art);
    gw_ptr(&w, o_root + p, o_exp);
    gw_ptr(&w, o_root + 2 * p, gw_str(&w, "C:\\fixture\\body.max"));
    gw_u32(&w, o_root + 3 * p, 2);
    gw_ptr(&w, o_root + 3 * p + 4, o_skel_ptrs);
    gw_ptr(&w, o_root + 4 * p + 4, o_misc);
    gw_ptr(&w, o_root + 5 * p + 4, t_root); /* ExtendedData: the root again */
    gw_ptr(&w, o_root + 6 * p + 4, o_root);

    uint32_t len = (uint32_t)w.b.len;
    struct fx_section sec[2] = {{.compression = 0, .data = w.b.p, .data_size = len, .alignment = 4,
                                 .first16bit = len, .first8bit = len, .fixups = w.fix, .nfixups = w.nfix},
                                {.compression = 2}};
    uint8_t *packed = NULL;
    if (o->oodle1_objects) { /* stage stops inside the data, so all three stages run */
        size_t plen;
        sec[0].first16bit = len / 2;
        sec[0].first8bit = len / 4 * 3;
        packed = oodle1_encode(w.b.p, len, sec[0].first16bit, sec[0].first8bit, w.b.be, &plen);
        sec[0].compression = 2;
        sec[0].data = packed;
        sec[0].data_size = (uint32_t)plen;
        sec[0].expanded_size = len;
    }
    /* marshalling entries: object counts and types of a few arrays (values only shown) */
    const struct fx_marshal marshals[4] = {{o->nbones, o_bones, 0, t_bone}, {2, o_skel, 0, t_skel},
                                           {1, o_art, 0, t_art}, {6, o_points, 0, t_vec3}};
    sec[0].marshals = marshals;
    sec[0].nmarshals = o->nmarshals < 4 ? o->nmarshals : 4;
    if (o->bitknit2_objects) {
        sec[0].bitknit2 = true;
        sec[0].bitknit2_padded = o->bitknit2_padded;
        sec[0].first16bit = 0x7FFFFFFF; /* stops are Oodle's: non-zero, ignored by BitKnit2 */
        sec[0].first8bit = 1;
    }
    if (o->bitknit2_section)
        sec[1] = (struct fx_section){.compression = 4, .alignment = 4};
    if (o->oodle0_objects) { /* the same: stops inside the data, all three stages run */
        size_t plen;
        struct o0e_opts eo = {.big_endian = w.b.be, .u_extra = 1};
        sec[0].first16bit = len / 2;
        sec[0].first8bit = len / 4 * 3;
        packed = o0e_encode(w.b.p, len, sec[0].first16bit, sec[0].first8bit, &eo, &plen, NULL);
        sec[0].compression = 1;
        sec[0].data = packed;
        sec[0].data_size = (uint32_t)plen;
        sec[0].expanded_size = len;
    }
    struct fx_gr2_opts go = {.version = o->version, .sig = o->sig, .type_tag = 0x8000001c,
                             .root_type = {0, t_root}, .root_object = {0, o_root}};
    r->section_size = len;
    r->section = w.b.p;
    uint8_t *f = fx_build_gr2(&go, sec, o->oodle1_section || o->bitknit2_section ? 2 : 1, size, &r->layout);
    free(packed);
    return f;
}

/* ---- a texture-like model file (tables, node counts, remapped strings) ---- */

struct big_writer {
    struct gw *w;
    const struct fxg_big_opts *o;
    uint32_t serial; /* remapped strings: the next CRC */
};

/* A String slot: a pointer to the text, or (remapped) a CRC in the slot. */
static uint32_t big_string(struct big_writer *bw, uint32_t slot, const char *text)
{
    uint32_t crc = 0x5EED0000u + bw->serial++;
    if (!bw->o->string_table_crc || bw->serial <= bw->o->crc_from) {
        gw_ptr(bw->w, slot, gw_str(bw->w, text));
        return 0;
    }
    gw_u32(bw->w, slot, crc); /* the low 32 bits of a 64-bit slot, in file order */
    if (bw->w->p == 8 && bw->w->b.be) {
        gw_u32(bw->w, slot, 0);
        gw_u32(bw->w, slot + 4, crc);
    }
    return crc;
}

uint8_t *fxg_build_big(const struct fxg_big_opts *o, size_t *size, struct fxg_big_result *r)
{
    static struct gw w; /* its fixup table is large */
    memset(&w, 0, sizeof w);
    w.p = strstr(o->sig, "64") ? 8 : 4;
    w.b.be = o->sig[0] == 'b';
    uint32_t p = (uint32_t)w.p;
    struct big_writer bw = {&w, o, 0};
    memset(r, 0, sizeof *r);

    const struct mdef u8t[] = {{UINT8, "UInt8", NO_TYPE, 0}};
    uint32_t t_u8 = gw_type(&w, u8t, 1);
    const struct mdef u16t[] = {{UINT16, "Int16", NO_TYPE, 0}};
    uint32_t t_u16 = gw_type(&w, u16t, 1);
    const struct mdef tex[] = {{STRING, "FromFileName", NO_TYPE, 0}, {INT32, "Width", NO_TYPE, 0},
                               {INT32, "Height", NO_TYPE, 0}, {REF_ARRAY, "PixelBytes", t_u8, 0}};
    uint32_t t_tex = gw_type(&w, tex, 4);
    const struct mdef vert[] = {{REAL32, "Position", NO_TYPE, 3}, {REAL32, "Normal", NO_TYPE, 3},
                                {REAL32, "TextureCoordinates0", NO_TYPE, 2}, {UINT8, "BoneIndices", NO_TYPE, 4},
                                {NORMAL8, "BoneWeights", NO_TYPE, 4}};
    uint32_t t_vert = gw_type(&w, vert, 5);
    const struct mdef vdata[] = {{REF_VARIANT_ARRAY, "Vertices", NO_TYPE, 0}};
    uint32_t t_vdata = gw_type(&w, vdata, 1);
    const struct mdef topo[] = {{REF_ARRAY, "Indices16", t_u16, 0}};
    uint32_t t_topo = gw_type(&w, topo, 1);
    const struct mdef mesh[] = {{STRING, "Name", NO_TYPE, 0}, {REF, "PrimaryVertexData", t_vdata, 0},
                                {REF, "PrimaryTopology", t_topo, 0}};
    uint32_t t_mesh = gw_type(&w, mesh, 3);
    const struct mdef bone[] = {{STRING, "Name", NO_TYPE, 0}, {INT32, "ParentIndex", NO_TYPE, 0},
                                {TRANSFORM, "Transform", NO_TYPE, 0}, {REAL32, "InverseWorldTransform", NO_TYPE, 16}};
    uint32_t t_bone = gw_type(&w, bone, 4);
    const struct mdef skel[] = {{STRING, "Name", NO_TYPE, 0}, {REF_ARRAY, "Bones", t_bone, 0}};
    uint32_t t_skel = gw_type(&w, skel, 2);
    const struct mdef model[] = {{STRING, "Name", NO_TYPE, 0}, {REF, "Skeleton", t_skel, 0}};
    uint32_t t_model = gw_type(&w, model, 2);
    const struct mdef anim[] = {{STRING, "Name", NO_TYPE, 0}, {REAL32, "Duration", NO_TYPE, 0}};
    uint32_t t_anim = gw_type(&w, anim, 2);
    const struct mdef root[] = {{ARRAY_REFS, "Textures", t_tex, 0},      {ARRAY_REFS, "Skeletons", t_skel, 0},
                                {ARRAY_REFS, "VertexDatas", t_vdata, 0}, {ARRAY_REFS, "TriTopologies", t_topo, 0},
                                {ARRAY_REFS, "Meshes", t_mesh, 0},       {ARRAY_REFS, "Models", t_model, 0},
                                {ARRAY_REFS, "Animations", t_anim, 0}};
    uint32_t t_root = gw_type(&w, root, 7);

    uint32_t aref = 4 + p; /* an ArrayOfReferences member: count, pointer */
    uint32_t o_root = gw_alloc(&w, 7 * aref);
    /* the texture */
    uint32_t o_tex = gw_alloc(&w, p + 8 + 4 + p);
    r->texture_name_crc = big_string(&bw, o_tex, "C:\\fixture\\skin.tga");
    gw_u32(&w, o_tex + p, 512);
    gw_u32(&w, o_tex + p + 4, o->npixels / 512 / 4);
    gw_u32(&w, o_tex + p + 8, o->npixels);
    r->pixels_at = gw_alloc(&w, o->npixels);
    for (uint32_t i = 0; i < o->npixels; i++)
        w.b.p[r->pixels_at + i] = (uint8_t)(i * 7u + (i >> 9));
    if (o->npixels)
        gw_ptr(&w, o_tex + p + 12, r->pixels_at);
    /* the vertices */
    r->vertex_size = 8 * 4 + 4 + 4;
    while (w.b.len % 4)
        fx_u8(&w.b, 0);
    r->vertices_at = gw_alloc(&w, (size_t)o->nvertices * r->vertex_size);
    for (uint32_t i = 0; i < o->nvertices; i++) {
        uint32_t at = r->vertices_at + i * r->vertex_size;
        for (uint32_t k = 0; k < 8; k++)
            gw_f32(&w, at + 4 * k, (float)i * 0.25f + (float)k);
        for (uint32_t k = 0; k < 4; k++) {
            w.b.p[at + 32 + k] = (uint8_t)((i + k) % o->nbones);
            w.b.p[at + 36 + k] = (uint8_t)(k == 0 ? 255 : 0);
        }
    }
    uint32_t o_vdata = gw_alloc(&w, 2 * p + 4);
    gw_ptr(&w, o_vdata, t_vert);
    gw_u32(&w, o_vdata + p, o->nvertices);
    if (o->nvertices)
        gw_ptr(&w, o_vdata + p + 4, r->vertices_at);
    /* the triangles */
    r->indices_at = gw_alloc(&w, (size_t)o->ntris * 6);
    for (uint32_t i = 0; i < 3 * o->ntris; i++)
        gw_u16(&w, r->indices_at + 2 * i, (uint16_t)(i % (o->nvertices ? o->nvertices : 1)));
    while (w.b.len % 4)
        fx_u8(&w.b, 0);
    uint32_t o_topo = gw_alloc(&w, 4 + p);
    gw_u32(&w, o_topo, 3 * o->ntris);
    if (o->ntris)
        gw_ptr(&w, o_topo + 4, r->indices_at);
    uint32_t o_mesh = gw_alloc(&w, 3 * p);
    big_string(&bw, o_mesh, "Body");
    gw_ptr(&w, o_mesh + p, o_vdata);
    gw_ptr(&w, o_mesh + 2 * p, o_topo);
    /* the skeleton */
    uint32_t bone_size = p + 4 + 68 + 64;
    uint32_t o_bones = gw_alloc(&w, (size_t)bone_size * o->nbones);
    for (uint32_t i = 0; i < o->nbones; i++) {
        uint32_t at = o_bones + i * bone_size;
        char name[32];
        snprintf(name, sizeof name, "bone_%03u", i);
        uint32_t crc = big_string(&bw, at, name);
        if (i == 0)
            r->bone0_name_crc = crc;
        gw_u32(&w, at + p, i == 0 ? 0xFFFFFFFFu : (i - 1) / 2);
        gw_u32(&w, at + p + 4, 7);
        gw_f32(&w, at + p + 4 + 16, 1.0f); /* orientation w = 1 */
        for (uint32_t k = 0; k < 16; k++)
            gw_f32(&w, at + p + 4 + 68 + 4 * k, k % 5 == 0 ? 1.0f : 0.0f);
    }
    uint32_t o_skel = gw_alloc(&w, p + 4 + p);
    big_string(&bw, o_skel, "Armature");
    gw_u32(&w, o_skel + p, o->nbones);
    if (o->nbones)
        gw_ptr(&w, o_skel + p + 4, o_bones);
    uint32_t o_model = gw_alloc(&w, 2 * p);
    big_string(&bw, o_model, "Figure");
    gw_ptr(&w, o_model + p, o_skel);
    /* pointer arrays, one element each */
    uint32_t one[6] = {o_tex, o_skel, o_vdata, o_topo, o_mesh, o_model};
    for (uint32_t k = 0; k < 6; k++) {
        if (k == 1 && o->no_skeleton)
            continue;
        uint32_t arr = gw_alloc(&w, p);
        gw_ptr(&w, arr, one[k]);
        gw_u32(&w, o_root + k * aref, 1);
        gw_ptr(&w, o_root + k * aref + 4, arr);
    }
    /* Animations: count 0, NULL */

    uint32_t len = (uint32_t)w.b.len;
    struct fx_section sec = {.compression = 0, .data = w.b.p, .data_size = len, .alignment = 4,
                             .first16bit = len, .first8bit = len, .fixups = w.fix, .nfixups = w.nfix};
    uint8_t *packed = NULL;
    if (o->oodle1) {
        size_t plen;
        sec.first16bit = len / 2;
        sec.first8bit = len / 4 * 3;
        packed = oodle1_encode(w.b.p, len, sec.first16bit, sec.first8bit, w.b.be, &plen);
        sec.compression = 2;
        sec.data = packed;
        sec.data_size = (uint32_t)plen;
        sec.expanded_size = len;
    }
    struct fx_gr2_opts go = {.version = 7, .sig = o->sig, .type_tag = 0x80000037,
                             .string_table_crc = o->string_table_crc,
                             .root_type = {0, t_root}, .root_object = {0, o_root}};
    r->section_size = len;
    r->section = w.b.p;
    uint8_t *f = fx_build_gr2(&go, &sec, 1, size, &r->layout);
    free(packed);
    return f;
}

uint8_t *fxg_sample_rig(const struct fxg_opts *o, struct fxg_result *r, size_t *size, struct fx_rig_layout *rl)
{
    size_t gsize;
    uint8_t *g = fxg_build(o, &gsize, r);
    struct fx_rig_opts ro = fx_sample_rig_opts(g, gsize);
    uint8_t *f = fx_build_rig(&ro, size, rl);
    free(g);
    return f;
}

/* ---- a type of many members (name handling) ---- */

/* After the root type at t_root (n members of 4 bytes), the root object, member k holding
 * k, and the file of this one section (le32, uncompressed); frees w's buffer. */
static uint8_t *counting_root(struct gw *w, uint32_t t_root, uint32_t n, size_t *size, struct fx_gr2_layout *lay)
{
    uint32_t o_root = gw_alloc(w, 4 * (size_t)n);
    for (uint32_t k = 0; k < n; k++)
        gw_u32(w, o_root + 4 * k, k);
    uint32_t len = (uint32_t)w->b.len;
    struct fx_section sec = {.data = w->b.p, .data_size = len, .alignment = 4, .first16bit = len, .first8bit = len,
                             .fixups = w->fix, .nfixups = w->nfix};
    struct fx_gr2_opts go = {.version = 7, .sig = "le32", .type_tag = 0x8000001c,
                             .root_type = {0, t_root}, .root_object = {0, o_root}};
    uint8_t *f = fx_build_gr2(&go, &sec, 1, size, lay);
    free(w->b.p);
    return f;
}

uint8_t *fxg_build_members(uint32_t n, bool same, size_t *size, struct fx_gr2_layout *lay)
{
    static struct gw w; /* its fixup table is large: not on the stack */
    memset(&w, 0, sizeof w);
    w.p = 4;
    if (n > FXG_MAX_MEMBERS)
        n = FXG_MAX_MEMBERS;
    uint32_t *names = malloc((n ? n : 1) * sizeof *names);
    for (uint32_t k = 0; k < n; k++) {
        char name[32];
        snprintf(name, sizeof name, "m%u", k);
        names[k] = same && k > 0 ? names[0] : gw_str(&w, same ? "Bone" : name);
    }
    while (w.b.len % 4)
        fx_u8(&w.b, 0);
    uint32_t t_root = gw_alloc(&w, 32 * ((size_t)n + 1)); /* member definitions, END last */
    for (uint32_t k = 0; k < n; k++) {
        gw_u32(&w, t_root + 32 * k, UINT32);
        gw_ptr(&w, t_root + 32 * k + 4, names[k]);
    }
    free(names);
    return counting_root(&w, t_root, n, size, lay);
}

/* ---- a String array whose slots share one string (value files amplify) ---- */

char fxg_repeated_letter(uint32_t i)
{
    return (char)('a' + i % 26);
}

uint8_t *fxg_build_repeated_string(uint32_t width, uint32_t len, uint32_t step, size_t *size)
{
    static struct gw w; /* its fixup table is large: not on the stack */
    memset(&w, 0, sizeof w);
    w.p = 4;
    if (width > FXG_MAX_STRING_SLOTS)
        width = FXG_MAX_STRING_SLOTS;
    if (width == 0 || (uint64_t)step * (width - 1) > len)
        return NULL;
    char *s = malloc((size_t)len + 1);
    if (!s)
        return NULL;
    for (uint32_t i = 0; i < len; i++)
        s[i] = fxg_repeated_letter(i);
    s[len] = 0;
    uint32_t str = gw_str(&w, s);
    free(s);
    while (w.b.len % 4)
        fx_u8(&w.b, 0);
    const struct mdef defs[] = {{STRING, "Names", NO_TYPE, (int32_t)width}};
    uint32_t t_root = gw_type(&w, defs, 1);
    uint32_t o_root = gw_alloc(&w, 4 * (size_t)width);
    for (uint32_t k = 0; k < width; k++)
        gw_ptr(&w, o_root + 4 * k, str + step * k);
    uint32_t n = (uint32_t)w.b.len;
    struct fx_section sec = {.data = w.b.p, .data_size = n, .alignment = 4, .first16bit = n, .first8bit = n,
                             .fixups = w.fix, .nfixups = w.nfix};
    struct fx_gr2_opts go = {.version = 7, .sig = "le32", .type_tag = 0x8000001c,
                             .root_type = {0, t_root}, .root_object = {0, o_root}};
    struct fx_gr2_layout lay;
    uint8_t *f = fx_build_gr2(&go, &sec, 1, size, &lay);
    free(w.b.p);
    return f;
}

/* ---- a type of many distinct member types (type lookups) ---- */

uint8_t *fxg_build_types(uint32_t n, size_t *size, struct fx_gr2_layout *lay)
{
    static struct gw w;
    memset(&w, 0, sizeof w);
    w.p = 4;
    if (n > FXG_MAX_MEMBERS)
        n = FXG_MAX_MEMBERS;
    const struct mdef one[] = {{UINT32, NULL, NO_TYPE, 0}};
    uint32_t *types = malloc((n ? n : 1) * sizeof *types);
    for (uint32_t k = 0; k < n; k++) /* the same definition, n times: n types */
        types[k] = gw_type(&w, one, 1);
    uint32_t t_root = gw_alloc(&w, 32 * ((size_t)n + 1)); /* unnamed Inline members, END last */
    for (uint32_t k = 0; k < n; k++) {
        gw_u32(&w, t_root + 32 * k, INLINE);
        gw_ptr(&w, t_root + 32 * k + 8, types[k]);
    }
    free(types);
    return counting_root(&w, t_root, n, size, lay);
}

/* ---- many big compressed sections (the cache's bound) ---- */

/* Fills a section of n bytes that compresses (a 64-byte period, a few bytes vary). */
static uint8_t *section_filler(uint32_t n, uint32_t k)
{
    uint8_t *b = malloc(n);
    uint32_t x = 0x9E3779B9u * k;
    for (uint32_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        b[i] = (i & 63) < 60 ? (uint8_t)("section-bytes-for-the-cache-test"[i & 31] + k) : (uint8_t)(x >> 24);
    }
    return b;
}

uint8_t *fxg_build_sections(const struct fxg_sections_opts *o, size_t *size, struct fxg_sections_result *r)
{
    memset(r, 0, sizeof *r);
    /* each section's head is written whole into it: a smaller one would be overrun */
    if (o->nsections < 2 || o->nsections > FX_MAX_SECTIONS || o->section_size < FXG_SECTION_MIN)
        return NULL;
    static struct gw w;
    memset(&w, 0, sizeof w);
    w.p = 4;
    uint32_t nparts = o->nsections - 1;
    r->nsections = o->nsections;
    const struct mdef value[] = {{UINT32, "v", NO_TYPE, 0}};
    uint32_t t_value = gw_type(&w, value, 1);
    const struct mdef part[] = {{UINT32, "Magic", NO_TYPE, 0}, {UINT32, "Index", NO_TYPE, 0},
                                {REF_ARRAY, "Values", t_value, 0}};
    uint32_t t_part = gw_type(&w, part, 3);
    struct mdef root[FX_MAX_SECTIONS];
    char names[FX_MAX_SECTIONS][16];
    for (uint32_t k = 0; k < nparts; k++) {
        snprintf(names[k], sizeof names[k], "Part_%u", k + 1);
        root[k] = (struct mdef){REF, names[k], t_part, 0};
    }
    uint32_t t_root = gw_type(&w, root, (int)nparts);
    uint32_t o_root = gw_alloc(&w, 4 * (size_t)nparts);
    for (uint32_t k = 0; k < nparts; k++)
        w.fix[w.nfix++] = (struct fx_fixup){o_root + 4 * k, k + 1, 0}; /* Part_k at the start of section k */
    uint32_t len0 = (uint32_t)w.b.len;
    struct fx_section sec[FX_MAX_SECTIONS] = {{.data = w.b.p, .data_size = len0, .alignment = 4,
                                               .first16bit = len0, .first8bit = len0, .fixups = w.fix,
                                               .nfixups = w.nfix}};
    r->section[0] = w.b.p;
    r->section_size[0] = len0;
    struct fx_fixup values_at[FX_MAX_SECTIONS];
    for (uint32_t k = 1; k < o->nsections; k++) {
        uint32_t n = o->section_size;
        uint8_t *b = section_filler(n, k);
        uint32_t head[4 + FXG_SECTION_VALUES] = {0x54524150u, k, FXG_SECTION_VALUES, 0};
        for (uint32_t j = 0; j < FXG_SECTION_VALUES; j++)
            head[4 + j] = k * 1000 + j;
        for (size_t i = 0; i < 4 * (size_t)(4 + FXG_SECTION_VALUES); i++) /* le32 */
            b[i] = (uint8_t)(head[i / 4] >> (8 * (i % 4)));
        values_at[k] = (struct fx_fixup){12, k, 16};
        sec[k] = (struct fx_section){.data = b, .data_size = n, .alignment = 4, .first16bit = 1, .first8bit = 1,
                                     .fixups = &values_at[k], .nfixups = 1, .bitknit2 = true};
        r->section[k] = b;
        r->section_size[k] = n;
    }
    struct fx_gr2_opts go = {.version = 7, .sig = "le32", .type_tag = 0x8000001c,
                             .root_type = {0, t_root}, .root_object = {0, o_root}};
    uint8_t *f = fx_build_gr2(&go, sec, o->nsections, size, &r->layout);
    w.b.p = NULL; /* r->section[0] owns it */
    return f;
}

uint8_t *fxg_build_alternating(uint32_t nparts, uint32_t section_size, size_t *size, struct fxg_sections_result *r)
{
    static struct gw w;
    memset(&w, 0, sizeof w);
    w.p = 4;
    memset(r, 0, sizeof *r);
    r->nsections = 3;
    const struct mdef value[] = {{UINT32, "v", NO_TYPE, 0}};
    uint32_t t_value = gw_type(&w, value, 1);
    const struct mdef part[] = {{UINT32, "Magic", NO_TYPE, 0}, {UINT32, "Index", NO_TYPE, 0},
                                {REF_ARRAY, "Values", t_value, 0}};
    uint32_t t_part = gw_type(&w, part, 3);
    const struct mdef root[] = {{ARRAY_REFS, "Parts", t_part, 0}};
    uint32_t t_root = gw_type(&w, root, 1);
    uint32_t o_root = gw_alloc(&w, 8), o_list = gw_alloc(&w, 4 * (size_t)nparts);
    gw_u32(&w, o_root, nparts);
    gw_ptr(&w, o_root + 4, o_list);
    uint32_t per_section = (nparts + 1) / 2;
    for (uint32_t j = 0; j < nparts && w.nfix < sizeof w.fix / sizeof w.fix[0]; j++) /* part j: section 1 + j % 2 */
        w.fix[w.nfix++] = (struct fx_fixup){o_list + 4 * j, 1 + j % 2, FXG_PART_STRIDE * (j / 2)};
    uint32_t len0 = (uint32_t)w.b.len;
    struct fx_section sec[3] = {{.data = w.b.p, .data_size = len0, .alignment = 4, .first16bit = len0,
                                 .first8bit = len0, .fixups = w.fix, .nfixups = w.nfix}};
    r->section[0] = w.b.p;
    r->section_size[0] = len0;
    for (uint32_t k = 1; k < 3; k++) {
        uint32_t n = section_size > FXG_PART_STRIDE * per_section ? section_size : FXG_PART_STRIDE * per_section;
        uint8_t *b = section_filler(n, k);
        for (uint32_t j = k - 1; j < nparts; j += 2) { /* Magic, Index j, Values: none */
            uint32_t head[4] = {0x54524150u, j, 0, 0};
            for (size_t i = 0; i < sizeof head; i++) /* le32 */
                b[FXG_PART_STRIDE * (j / 2) + i] = (uint8_t)(head[i / 4] >> (8 * (i % 4)));
        }
        sec[k] = (struct fx_section){.data = b, .data_size = n, .alignment = 4, .first16bit = 1, .first8bit = 1,
                                     .bitknit2 = true};
        r->section[k] = b;
        r->section_size[k] = n;
    }
    struct fx_gr2_opts go = {.version = 7, .sig = "le32", .type_tag = 0x8000001c,
                             .root_type = {0, t_root}, .root_object = {0, o_root}};
    uint8_t *f = fx_build_gr2(&go, sec, 3, size, &r->layout);
    w.b.p = NULL; /* r->section[0] owns it */
    return f;
}

void fxg_sections_free(struct fxg_sections_result *r)
{
    for (uint32_t k = 0; k < r->nsections; k++)
        free(r->section[k]);
}
