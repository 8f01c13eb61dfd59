/* Animation channels as glTF samplers (through the glb builder): key times shared between
 * channels that have the same ones (constant channels at 0 and Duration, curves that share
 * knots), values in the layout the interpolation asks for. */
#include <stdlib.h>
#include <string.h>

#include "fs/export/export.h"
#include "fs/export/glb.h"

/* Time arrays already written: open addressing on their bytes' hash. */
struct times_entry {
    uint64_t hash;
    uint32_t n;
    float *t; /* a copy, to compare */
    int accessor;
};

struct export_times {
    struct times_entry *e;
    size_t n, cap;
};

struct export_times *export_times_new(void)
{
    return calloc(1, sizeof(struct export_times));
}

void export_times_free(struct export_times *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->cap; i++)
        free(c->e[i].t);
    free(c->e);
    free(c);
}

static uint64_t hash_times(const float *t, uint32_t n)
{
    uint64_t h = 0xcbf29ce484222325ull ^ n;
    const unsigned char *p = (const unsigned char *)t;
    for (size_t i = 0; i < (size_t)n * sizeof *t; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

static struct times_entry *slot(struct times_entry *e, size_t cap, uint64_t h, const float *t, uint32_t n)
{
    size_t k = (size_t)h & (cap - 1);
    while (e[k].t && !(e[k].hash == h && e[k].n == n && memcmp(e[k].t, t, n * sizeof *t) == 0))
        k = (k + 1) & (cap - 1);
    return &e[k];
}

/* The input accessor of times t: the one written before for the same times, or a new one
 * (-1: out of memory). */
static int times_accessor(struct glb *g, struct export_times *c, const float *t, uint32_t n)
{
    uint64_t h = hash_times(t, n);
    if (c && c->cap) {
        struct times_entry *e = slot(c->e, c->cap, h, t, n);
        if (e->t)
            return e->accessor;
    }
    int acc = glb_floats(g, t, n, 1, GLB_NO_TARGET, true); /* inputs need min and max */
    if (acc < 0 || !c)
        return acc;
    /* a time array left out of the cache would be written again by a later channel: a
     * file of another size than measured, so a refused allocation fails the build */
    if (2 * (c->n + 1) > c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 64;
        struct times_entry *ne = alloc_array(cap, sizeof *ne);
        if (!ne)
            return -1;
        for (size_t i = 0; i < c->cap; i++)
            if (c->e[i].t)
                *slot(ne, cap, c->e[i].hash, c->e[i].t, c->e[i].n) = c->e[i];
        free(c->e);
        c->e = ne;
        c->cap = cap;
    }
    float *copy = alloc_array(n, sizeof *copy);
    if (!copy)
        return -1;
    memcpy(copy, t, n * sizeof *copy);
    *slot(c->e, c->cap, h, t, n) = (struct times_entry){h, n, copy, acc};
    c->n++;
    return acc;
}

enum s3_err export_channel(struct glb *g, struct export_times *cache, int anim, int node, enum mdl_path path,
                           const struct mdl_keys *k)
{
    static const enum glb_interp interp[] = {[MDL_LINEAR] = GLB_LINEAR, [MDL_STEP] = GLB_STEP,
                                             [MDL_CUBICSPLINE] = GLB_CUBICSPLINE};
    static const enum glb_path target[] = {[MDL_TRANSLATION] = GLB_TRANSLATION, [MDL_ROTATION] = GLB_ROTATION,
                                           [MDL_SCALE] = GLB_SCALE};
    int in = times_accessor(g, cache, k->times, k->n);
    uint32_t per_key = k->interp == MDL_CUBICSPLINE ? 3 : 1;
    int out = glb_floats(g, k->values, k->n * per_key, k->ncomp, GLB_NO_TARGET, false);
    int s = in >= 0 && out >= 0 ? glb_sampler(g, anim, in, out, interp[k->interp]) : -1;
    if (s < 0)
        return S3_ERR_NOMEM;
    glb_channel(g, anim, s, node, target[path]);
    return S3_OK;
}
