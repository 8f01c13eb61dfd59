#include "parse/gr2/gr2anim.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/base/diag.h"
#include "parse/gr2/gr2std.h"

char *gr2_name_at(const struct gr2_space *sp, uint32_t sec, uint32_t off, const char **why)
{
    struct gr2_str s;
    gr2_string_slot(sp, sec, off, &s);
    char *out = NULL;
    switch (s.kind) {
    case GR2_STR_TEXT:
        out = strndup(s.text, s.len);
        break;
    case GR2_STR_CRC:
        if (asprintf(&out, "crc:0x%08" PRIx32, s.crc) < 0)
            out = NULL;
        break;
    case GR2_STR_NULL:
        out = strdup("");
        break;
    case GR2_STR_ERROR:
        *why = s.why;
        return NULL;
    }
    if (!out)
        *why = "out of memory";
    return out;
}

/* The member `name` of standard type std in t, of member type `type` (NULL otherwise). */
static const struct gr2_member *member(const struct gr2_type *t, enum gr2_std std, const char *name, uint32_t type)
{
    const struct gr2_member *m = gr2_std_find(t, std, name);
    return m && m->type == type && m->array_width == 0 ? m : NULL;
}

static const struct gr2_type *type_at(struct gr2_types *reg, const struct gr2_space *sp, struct gr2_ref type,
                                      struct gr2_ref obj, const char *what, char *err, size_t errlen)
{
    const struct gr2_type *t = gr2_type_get(reg, sp, type);
    const char *why;
    if (!t || !t->ok) {
        err_set(err, errlen, "%s: %s", what, t ? t->err : "out of memory");
        return NULL;
    }
    if (!gr2_bytes(sp, obj.section, obj.offset, t->size, &why)) {
        err_set(err, errlen, "%s: %s", what, why);
        return NULL;
    }
    return t;
}

/* A String member's text (the name rules of gr2_name_at); "" when the member is absent. */
static char *name_of(const struct gr2_space *sp, const struct gr2_type *t, enum gr2_std std, struct gr2_ref obj,
                     const char *what, char *err, size_t errlen)
{
    const struct gr2_member *m = member(t, std, "Name", GR2_STRING);
    const char *why = "out of memory";
    char *n = m ? gr2_name_at(sp, obj.section, obj.offset + m->offset, &why) : strdup("");
    if (!n)
        err_set(err, errlen, "%s: Name: %s", what, why);
    return n;
}

static double real_of(const struct gr2_space *sp, const struct gr2_type *t, enum gr2_std std, struct gr2_ref obj,
                      const char *name, double absent)
{
    const struct gr2_member *m = member(t, std, name, GR2_REAL32);
    const char *why;
    const uint8_t *b = m ? gr2_bytes(sp, obj.section, obj.offset + m->offset, 4, &why) : NULL;
    if (!b)
        return absent;
    uint32_t u = gr2_u32_at(sp, b);
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* A member's elements (ReferenceToArray / ArrayOfReferences): absent or empty is
 * GR2_EK_NULL. */
static void elements(struct gr2_types *reg, const struct gr2_space *sp, const struct gr2_type *t, enum gr2_std std,
                     struct gr2_ref obj, const char *name, uint32_t type, struct gr2_elem *e)
{
    const struct gr2_member *m = member(t, std, name, type);
    if (!m) {
        memset(e, 0, sizeof *e);
        e->kind = GR2_EK_NULL;
        return;
    }
    gr2_resolve(reg, sp, m, obj.section, obj.offset + m->offset, e);
    if (e->kind == GR2_EK_UNTYPED) {
        e->kind = GR2_EK_ERROR;
        e->why = "array of untyped elements";
    }
}

void gr2_root_array(struct gr2_types *reg, const struct gr2_space *sp, const char *name, struct gr2_elem *out)
{
    char err[160];
    const struct gr2_type *t = type_at(reg, sp, sp->g->root_type, sp->g->root_object, "root", err, sizeof err);
    if (!t) {
        memset(out, 0, sizeof *out);
        out->kind = GR2_EK_NULL;
        return;
    }
    elements(reg, sp, t, GR2_STD_ROOT, sp->g->root_object, name, GR2_ARRAY_OF_REFS, out);
}

int gr2_ptr_elem(const struct gr2_space *sp, const struct gr2_elem *e, uint32_t k, struct gr2_ref *obj)
{
    const char *why;
    return gr2_pointer(sp, e->obj.section, e->obj.offset + k * e->size, obj, &why);
}

struct gr2_ref gr2_array_elem(const struct gr2_elem *e, uint32_t k)
{
    return (struct gr2_ref){e->obj.section, e->obj.offset + k * e->size};
}

/* ---- animations and track groups ---- */

int gr2_animation_read(struct gr2_types *reg, const struct gr2_space *sp, struct gr2_ref type, struct gr2_ref obj,
                       struct gr2_animation *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    const struct gr2_type *t = type_at(reg, sp, type, obj, "animation", err, errlen);
    if (!t)
        return -1;
    if (!member(t, GR2_STD_ANIMATION, "Duration", GR2_REAL32) ||
        !member(t, GR2_STD_ANIMATION, "TrackGroups", GR2_ARRAY_OF_REFS))
        return err_set(err, errlen, "not an animation (no Duration or TrackGroups)");
    out->name = name_of(sp, t, GR2_STD_ANIMATION, obj, "animation", err, errlen);
    if (!out->name)
        return -1;
    out->duration = real_of(sp, t, GR2_STD_ANIMATION, obj, "Duration", 0);
    out->timestep = real_of(sp, t, GR2_STD_ANIMATION, obj, "TimeStep", 0);
    out->oversampling = real_of(sp, t, GR2_STD_ANIMATION, obj, "Oversampling", -1);
    elements(reg, sp, t, GR2_STD_ANIMATION, obj, "TrackGroups", GR2_ARRAY_OF_REFS, &out->groups);
    if (out->groups.kind == GR2_EK_ERROR) {
        err_set(err, errlen, "TrackGroups: %s", out->groups.why);
        gr2_animation_free(out);
        return -1;
    }
    return 0;
}

void gr2_animation_free(struct gr2_animation *a)
{
    free(a->name);
    a->name = NULL;
}

double gr2_animation_step(const struct gr2_animation *a)
{
    return a->timestep > 0 && isfinite(a->timestep) ? a->timestep : 1.0 / 30;
}

int gr2_track_group_read(struct gr2_types *reg, const struct gr2_space *sp, struct gr2_ref type, struct gr2_ref obj,
                         struct gr2_track_group *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    const struct gr2_type *t = type_at(reg, sp, type, obj, "track group", err, errlen);
    if (!t)
        return -1;
    if (!member(t, GR2_STD_TRACKGROUP, "TransformTracks", GR2_REF_TO_ARRAY))
        return err_set(err, errlen, "not a track group (no TransformTracks)");
    out->name = name_of(sp, t, GR2_STD_TRACKGROUP, obj, "track group", err, errlen);
    if (!out->name)
        return -1;
    static const char *const arrays[3] = {"TransformTracks", "VectorTracks", "TextTracks"};
    struct gr2_elem *e[3] = {&out->transform, &out->vector, &out->text};
    for (int i = 0; i < 3; i++) {
        elements(reg, sp, t, GR2_STD_TRACKGROUP, obj, arrays[i], GR2_REF_TO_ARRAY, e[i]);
        if (e[i]->kind == GR2_EK_ERROR) {
            err_set(err, errlen, "%s: %s", arrays[i], e[i]->why);
            gr2_track_group_free(out);
            return -1;
        }
    }
    return 0;
}

void gr2_track_group_free(struct gr2_track_group *g)
{
    free(g->name);
    g->name = NULL;
}

/* ---- tracks ---- */

static bool old_layout(const struct gr2_space *sp)
{
    return sp->g->type_tag >= 0x80000000u && sp->g->type_tag <= GR2_OLD_LAYOUT_LAST_TAG;
}

/* Locates (and decodes) one curve member of a track. */
static bool one_curve(struct gr2_types *reg, const struct gr2_space *sp, const struct gr2_type *t, enum gr2_std std,
                      const char *name, struct gr2_ref obj, bool decode, struct gr2_curve_ref *where, bool *located,
                      struct gr2_curve *c, char *err, size_t errlen)
{
    const struct gr2_member *m = gr2_std_find(t, std, name);
    char why[200];
    *located = false;
    if (!m) {
        err_set(err, errlen, "%s: no such member", name);
        return false;
    }
    if (gr2_curve_locate(reg, sp, m, obj, old_layout(sp), where, why, sizeof why)) {
        err_set(err, errlen, "%s: %s", name, why);
        return false;
    }
    *located = true;
    if (decode && gr2_curve_read(reg, sp, where, c, why, sizeof why)) {
        err_set(err, errlen, "%s: %s", name, why);
        return false;
    }
    return decode;
}

int gr2_transform_track_read(struct gr2_types *reg, const struct gr2_space *sp, struct gr2_ref type,
                             struct gr2_ref obj, bool decode, struct gr2_transform_track *out, char *err,
                             size_t errlen)
{
    memset(out, 0, sizeof *out);
    const struct gr2_type *t = type_at(reg, sp, type, obj, "transform track", err, errlen);
    if (!t)
        return -1;
    out->name = name_of(sp, t, GR2_STD_TRANSFORMTRACK, obj, "transform track", err, errlen);
    if (!out->name)
        return -1;
    static const char *const names[3] = {"PositionCurve", "OrientationCurve", "ScaleShearCurve"};
    for (int r = 0; r < 3; r++)
        out->ok[r] = one_curve(reg, sp, t, GR2_STD_TRANSFORMTRACK, names[r], obj, decode, &out->where[r],
                               &out->located[r], &out->curve[r], out->err[r], sizeof out->err[r]);
    return 0;
}

void gr2_transform_track_free(struct gr2_transform_track *tr)
{
    free(tr->name);
    for (int r = 0; r < 3; r++)
        if (tr->ok[r])
            gr2_curve_free(&tr->curve[r]);
    memset(tr, 0, sizeof *tr);
}

int gr2_transform_track_check(const struct gr2_transform_track *tr, char *err, size_t errlen)
{
    static const char *const names[3] = {"PositionCurve", "OrientationCurve", "ScaleShearCurve"};
    char why[200];
    for (int r = 0; r < 3; r++) {
        if (!tr->ok[r])
            return err_set(err, errlen, "%s", tr->err[r][0] ? tr->err[r] : "curve not decoded");
        if (gr2_curve_check(&tr->curve[r], (enum gr2_role)r, 0, why, sizeof why))
            return err_set(err, errlen, "%s: %s", names[r], why);
    }
    return 0;
}

void gr2_transform_track_eval(const struct gr2_transform_track *tr, double t, double out[16], struct gr2_seek seek[3],
                              struct gr2_work *w)
{
    static const int at[3] = {0, 3, 7};
    for (int r = 0; r < 3; r++)
        gr2_curve_eval(&tr->curve[r], (enum gr2_role)r, 0, t, out + at[r], seek ? &seek[r] : NULL, w);
}

int gr2_vector_track_read(struct gr2_types *reg, const struct gr2_space *sp, struct gr2_ref type, struct gr2_ref obj,
                          bool decode, struct gr2_vector_track *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    const struct gr2_type *t = type_at(reg, sp, type, obj, "vector track", err, errlen);
    if (!t)
        return -1;
    out->name = name_of(sp, t, GR2_STD_VECTORTRACK, obj, "vector track", err, errlen);
    if (!out->name)
        return -1;
    const struct gr2_member *km = gr2_std_find(t, GR2_STD_VECTORTRACK, "TrackKey");
    const struct gr2_member *dm = gr2_std_find(t, GR2_STD_VECTORTRACK, "Dimension");
    const char *bwhy;
    const uint8_t *b = gr2_bytes(sp, obj.section, obj.offset, t->size, &bwhy);
    if (!b) {
        gr2_vector_track_free(out);
        return err_set(err, errlen, "vector track: %s", bwhy);
    }
    if (km && (km->type == GR2_UINT32 || km->type == GR2_INT32) && km->array_width == 0)
        out->key = gr2_u32_at(sp, b + km->offset);
    if (!dm || !(dm->type == GR2_UINT32 || dm->type == GR2_INT32) || dm->array_width) {
        snprintf(out->err, sizeof out->err, "no Dimension member");
        return 0;
    }
    out->dimension = (int32_t)gr2_u32_at(sp, b + dm->offset);
    out->ok = one_curve(reg, sp, t, GR2_STD_VECTORTRACK, "ValueCurve", obj, decode, &out->where, &out->located,
                        &out->curve, out->err, sizeof out->err);
    char why[160];
    if (out->ok && (out->dimension < 0 || out->dimension > GR2_CURVE_MAX_DIM)) {
        snprintf(out->err, sizeof out->err, "Dimension %" PRId32 " (0 to %d are read)", out->dimension, GR2_CURVE_MAX_DIM);
        out->ok = false;
    } else if (out->ok && gr2_curve_check(&out->curve, GR2_ROLE_VECTOR, (uint32_t)out->dimension, why, sizeof why)) {
        snprintf(out->err, sizeof out->err, "ValueCurve: %s", why);
        out->ok = false;
    }
    if (!out->ok && decode && out->located && out->curve.controls)
        gr2_curve_free(&out->curve);
    return 0;
}

void gr2_vector_track_free(struct gr2_vector_track *v)
{
    free(v->name);
    if (v->ok)
        gr2_curve_free(&v->curve);
    memset(v, 0, sizeof *v);
}

int gr2_text_track_read(struct gr2_types *reg, const struct gr2_space *sp, struct gr2_ref type, struct gr2_ref obj,
                        struct gr2_text_track *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    const struct gr2_type *t = type_at(reg, sp, type, obj, "text track", err, errlen);
    if (!t)
        return -1;
    struct gr2_elem e;
    elements(reg, sp, t, GR2_STD_TEXTTRACK, obj, "Entries", GR2_REF_TO_ARRAY, &e);
    if (e.kind == GR2_EK_ERROR)
        return err_set(err, errlen, "Entries: %s", e.why);
    out->name = name_of(sp, t, GR2_STD_TEXTTRACK, obj, "text track", err, errlen);
    if (!out->name)
        return -1;
    if (e.kind != GR2_EK_ARRAY)
        return 0;
    const struct gr2_type *et = gr2_type_get(reg, sp, e.type);
    const struct gr2_member *tm = et ? member(et, GR2_STD_TEXTENTRY, "TimeStamp", GR2_REAL32) : NULL;
    const struct gr2_member *xm = et ? member(et, GR2_STD_TEXTENTRY, "Text", GR2_STRING) : NULL;
    if (!tm || !xm) {
        gr2_text_track_free(out);
        return err_set(err, errlen, "Entries: not {TimeStamp, Text} entries");
    }
    out->e = calloc(e.count, sizeof *out->e);
    if (!out->e) {
        gr2_text_track_free(out);
        return err_set(err, errlen, "out of memory");
    }
    for (uint32_t i = 0; i < e.count; i++) {
        struct gr2_ref at = gr2_array_elem(&e, i);
        const char *why;
        const uint8_t *b = gr2_bytes(sp, at.section, at.offset + tm->offset, 4, &why);
        if (!b) {
            gr2_text_track_free(out);
            return err_set(err, errlen, "entry %" PRIu32 ": TimeStamp: %s", i, why);
        }
        uint32_t u = gr2_u32_at(sp, b);
        float f;
        memcpy(&f, &u, 4);
        out->e[i].t = f;
        out->e[i].text = gr2_name_at(sp, at.section, at.offset + xm->offset, &why);
        out->n = i + 1;
        if (!out->e[i].text) {
            gr2_text_track_free(out);
            return err_set(err, errlen, "entry %" PRIu32 ": Text: %s", i, why);
        }
    }
    return 0;
}

void gr2_text_track_free(struct gr2_text_track *t)
{
    free(t->name);
    for (uint32_t i = 0; i < t->n; i++)
        free(t->e[i].text);
    free(t->e);
    memset(t, 0, sizeof *t);
}
