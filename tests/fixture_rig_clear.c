#include "fixture_rig_clear.h"

#include <stdlib.h>
#include <string.h>

#include "fixture.h"

const struct fxc_bone fxc_bones[FXC_BONES] = {
    {{0, 0, 0}, {0, 0, 0, 1}, {1, 1, 1}, "b__ROOT__", 0, -1, 0x20, false},
    {{0, 0.95f, 0}, {0.5f, 0.5f, 0.5f, 0.5f}, {1, 1, 1}, "b__Pelvis__", 1, 0, 0x21, false},
    {{0.1f, -0.05f, 0}, {0, 0.7071068f, 0, 0.7071068f}, {1, 1, 1}, "b__L_Thigh__", 3, 1, 0x3a, false},
    {{-0.1f, -0.05f, 0}, {0, -0.7071068f, 0, 0.7071068f}, {1, 1, 1}, "b__R_Thigh__", 2, 1, 0x3a, false},
    {{0, 0.1f, 0.01f}, {0, 0, 0.1f, 0.9949874f}, {1, 1, 1.25f}, "b__Spine0__", 4, 1, 0x5a, false},
    {{0, 0.45f, 0}, {0, 0, 0, 1}, {0.9f, 0.9f, 0.9f}, "b__Head,\"x\"__", 5, 4, 0x22, true},
};

const struct fxc_chain fxc_chains[FXC_CHAINS] = {
    {3, {2, 1, 0}, {4, 5, -1, -1, -1, -1, -1, -1, -1, -1, 0}, 2, 4, 5, 0},
    {2, {3, 1}, {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}, 3, -1, 5, 0},
};

const char fxc_skeleton[] = "auRig";

uint32_t fxc_hash(const char *name)
{
    uint32_t h = 2166136261u;
    for (const char *p = name; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c >= 'A' && c <= 'Z')
            c = (unsigned char)(c + 32);
        h = (h * 16777619u) ^ c;
    }
    return h;
}

struct fxc_opts fxc_variant(int v)
{
    struct fxc_opts o = {.major = 4, .minor = 2, .skeleton_name = true, .chains = true, .info = true};
    if (v == 1)
        o = (struct fxc_opts){.major = 3, .minor = 1, .skeleton_name = true};
    else if (v == 2)
        o = (struct fxc_opts){.major = 3, .minor = 2, .chains = true};
    return o;
}

uint8_t *fxc_build(const struct fxc_opts *o, size_t *size, struct fxc_layout *lay)
{
    struct fxbuf b = {0};
    memset(lay, 0, sizeof *lay);
    fx_u32(&b, o->major);
    fx_u32(&b, o->minor);
    fx_u32(&b, FXC_BONES);
    for (int i = 0; i < FXC_BONES; i++) {
        const struct fxc_bone *x = &fxc_bones[i];
        lay->bone_pos[i] = b.len;
        for (int k = 0; k < 3; k++)
            fx_f32(&b, x->pos[k]);
        for (int k = 0; k < 4; k++)
            fx_f32(&b, x->q[k]);
        for (int k = 0; k < 3; k++)
            fx_f32(&b, x->s[k]);
        fx_u32(&b, (uint32_t)strlen(x->name));
        fx_put(&b, x->name, strlen(x->name));
        fx_u32(&b, (uint32_t)x->opposing);
        fx_u32(&b, (uint32_t)x->parent);
        lay->hash[i] = fxc_hash(x->name) ^ (x->bad_hash ? 0x1000u : 0);
        fx_u32(&b, lay->hash[i]);
        fx_u32(&b, x->flags);
        lay->bone_size[i] = b.len - lay->bone_pos[i];
    }
    if (o->skeleton_name) {
        fx_u32(&b, (uint32_t)strlen(fxc_skeleton));
        lay->skel_pos = b.len;
        fx_put(&b, fxc_skeleton, strlen(fxc_skeleton));
    }
    if (o->chains) {
        lay->chains_pos = b.len;
        fx_u32(&b, FXC_CHAINS);
        for (int i = 0; i < FXC_CHAINS; i++) {
            const struct fxc_chain *c = &fxc_chains[i];
            lay->chain_pos[i] = b.len;
            fx_u32(&b, c->n);
            for (uint32_t k = 0; k < c->n; k++)
                fx_u32(&b, (uint32_t)c->bones[k]);
            if (o->info)
                for (int k = 0; k < 11; k++)
                    fx_u32(&b, (uint32_t)c->info[k]);
            fx_u32(&b, (uint32_t)c->pole);
            if (o->info)
                fx_u32(&b, (uint32_t)c->slot_info);
            fx_u32(&b, (uint32_t)c->slot_offset);
            fx_u32(&b, (uint32_t)c->root);
            lay->chain_size[i] = b.len - lay->chain_pos[i];
        }
    }
    lay->end = b.len;
    for (size_t i = 0; i < o->trailing; i++)
        fx_u8(&b, (uint8_t)(0x77 + i));
    lay->size = b.len;
    *size = b.len;
    return b.p;
}
