#include "fixture_gw.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint32_t gw_alloc(struct gw *w, size_t n)
{
    uint32_t at = (uint32_t)w->b.len;
    fx_fill(&w->b, 0, n);
    return at;
}

void gw_u32(struct gw *w, uint32_t at, uint32_t v)
{
    fx_patch_u32(&w->b, at, v);
}

void gw_u16(struct gw *w, uint32_t at, uint16_t v)
{
    w->b.p[at + (w->b.be ? 1 : 0)] = (uint8_t)v;
    w->b.p[at + (w->b.be ? 0 : 1)] = (uint8_t)(v >> 8);
}

void gw_f32(struct gw *w, uint32_t at, float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    gw_u32(w, at, u);
}

void gw_ptr(struct gw *w, uint32_t at, uint32_t target)
{
    w->fix[w->nfix++] = (struct fx_fixup){at, 0, target};
}

uint32_t gw_str(struct gw *w, const char *s)
{
    uint32_t at = gw_alloc(w, strlen(s) + 1);
    memcpy(w->b.p + at, s, strlen(s));
    return at;
}

uint32_t gw_type(struct gw *w, const struct mdef *m, int n)
{
    uint32_t def = w->p == 8 ? 44 : 32;
    uint32_t names[32];
    for (int i = 0; i < n; i++)
        names[i] = m[i].name ? gw_str(w, m[i].name) : NO_TYPE;
    while (w->b.len % 4)
        fx_u8(&w->b, 0);
    uint32_t at = gw_alloc(w, def * (size_t)(n + 1));
    for (int i = 0; i < n; i++) {
        uint32_t d = at + def * (uint32_t)i;
        gw_u32(w, d, m[i].type);
        if (names[i] != NO_TYPE)
            gw_ptr(w, d + 4, names[i]);
        if (m[i].ref != NO_TYPE)
            gw_ptr(w, d + 4 + (uint32_t)w->p, m[i].ref);
        gw_u32(w, d + 4 + 2 * (uint32_t)w->p, (uint32_t)m[i].width);
    }
    return at;
}

uint32_t gw_member_size(const struct gw *w, const struct mdef *m)
{
    uint32_t p = (uint32_t)w->p, elem;
    switch (m->type) {
    case REF:
    case STRING:
    case EMPTY_REF:
        elem = p;
        break;
    case REF_ARRAY:
    case ARRAY_REFS:
        elem = 4 + p;
        break;
    case VARIANT:
        elem = 2 * p;
        break;
    case REF_VARIANT_ARRAY:
        elem = 2 * p + 4;
        break;
    case TRANSFORM:
        elem = 68;
        break;
    case INLINE:
        elem = 0;
        break;
    case INT8:
    case UINT8:
    case BINORMAL8:
    case NORMAL8:
        elem = 1;
        break;
    case INT16:
    case UINT16:
    case BINORMAL16:
    case NORMAL16:
    case REAL16:
        elem = 2;
        break;
    default:
        elem = 4;
    }
    return elem * (uint32_t)(m->width > 0 ? m->width : 1);
}

uint32_t gw_struct_size(const struct gw *w, const struct mdef *m, int n)
{
    uint32_t o = 0;
    for (int i = 0; i < n; i++)
        o += gw_member_size(w, &m[i]);
    return o;
}

uint32_t gw_offset(const struct gw *w, const struct mdef *m, int n, const char *name)
{
    uint32_t o = 0;
    for (int i = 0; i < n; i++) {
        if (m[i].name && strcmp(m[i].name, name) == 0)
            return o;
        o += gw_member_size(w, &m[i]);
    }
    fprintf(stderr, "fixture: no member %s\n", name);
    abort();
}
