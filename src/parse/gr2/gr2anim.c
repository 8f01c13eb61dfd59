#include "parse/gr2/gr2anim.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/base/diag.h"
#include "parse/gr2/gr2std.h"

enum s3_err gr2_name_at(const struct gr2_space *sp, uint32_t sec, uint32_t off, char **out, const char **why)
{
    struct gr2_str s;
    gr2_string_slot(sp, sec, off, &s);
    *out = NULL;
    switch (s.kind) {
    case GR2_STR_TEXT:
        *out = strndup(s.text, s.len);
        break;
    case GR2_STR_CRC:
        if (asprintf(out, "crc:0x%08" PRIx32, s.crc) < 0)
            *out = NULL;
        break;
    case GR2_STR_NULL:
        *out = strdup("");
        break;
    case GR2_STR_ERROR:
        *why = s.why;
        return S3_ERR_RANGE;
    }
    if (!*out) {
        *why = "out of memory";
        return S3_ERR_NOMEM;
    }
    return S3_OK;
}

/* The member `name` of standard type std in t, of member type `type` (NULL otherwise). */
static const struct gr2_member *member(const struct gr2_type *t, enum gr2_std std, const char *name, uint32_t type)
{
    const struct gr2_member *m = gr2_std_find(t, std, name);
    return m && m->type == type && m->array_width == 0 ? m : NULL;
}

/* Why a type cannot be used: NOMEM when it could not be made, its own reason when it
 * failed for now (out of memory, section bytes not had: decoded again in a later
 * request), else FORMAT (its bytes are bad). */
static enum s3_err type_failure(const struct gr2_type *t)
{
    if (!t)
        return S3_ERR_NOMEM;
    return t->reason == S3_ERR_NOMEM || t->reason == S3_ERR_IO ? t->reason : S3_ERR_FORMAT;
}

/* The decoded type of an object whose bytes are all there. */
static enum s3_err type_at(struct gr2_types *reg, const struct gr2_space *sp, struct gr2_ref type, struct gr2_ref obj,
                           const char *what, const struct gr2_type **out, char *err, size_t errlen)
{
    const struct gr2_type *t = gr2_type_get(reg, sp, type);
    const char *why;
    const uint8_t *b;
    *out = NULL;
    if (!t)
        return s3_fail(S3_ERR_NOMEM, err, errlen, "%s: out of memory", what);
    if (!t->ok)
        return s3_fail(type_failure(t), err, errlen, "%s: %s", what, t->err);
    enum s3_err e = gr2_bytes_at(sp, obj.section, obj.offset, t->size, &b, &why);
    if (e)
        return s3_fail(e, err, errlen, "%s: %s", what, why);
    *out = t;
    return S3_OK;
}

/* A String member's text (the name rules of gr2_name_at); "" when the member is absent. */
static enum s3_err name_of(const struct gr2_space *sp, const struct gr2_type *t, enum gr2_std std, struct gr2_ref obj,
                           const char *what, char **name, char *err, size_t errlen)
{
    const struct gr2_member *m = member(t, std, "Name", GR2_STRING);
    const char *why = "out of memory";
    enum s3_err e = S3_OK;
    if (m)
        e = gr2_name_at(sp, obj.section, obj.offset + m->offset, name, &why);
    else if (!(*name = strdup("")))
        e = S3_ERR_NOMEM;
    return e ? s3_fail(e, err, errlen, "%s: Name: %s", what, why) : S3_OK;
}

/* An object's decoded type and its Name, in that order (the transform and vector track
 * readers' head; the others check members between the two). */
static enum s3_err typed_named(struct gr2_types *reg, const struct gr2_space *sp, struct gr2_ref type,
                               struct gr2_ref obj, enum gr2_std std, const char *what, const struct gr2_type **t,
                               char **name, char *err, size_t errlen)
{
    enum s3_err e = type_at(reg, sp, type, obj, what, t, err, errlen);
    return e ? e : name_of(sp, *t, std, obj, what, name, err, errlen);
}

static double real_of(const struct gr2_space *sp, const struct gr2_type *t, enum gr2_std std, struct gr2_ref obj,
                      const char *name, double absent)
{
    const struct gr2_member *m = member(t, std, name, GR2_REAL32);
    const char *why;
    const uint8_t *b = m ? gr2_bytes(sp, obj.section, obj.offset + m->offset, 4, &why) : NULL;
    return b ? gr2_f32_at(sp, b) : absent;
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
        e->reason = S3_ERR_FORMAT;
        e->why = "array of untyped elements";
    }
}

/* elements() of a member the object cannot be read without: its failure is the reader's,
 * named after the member (the animation's, track group's and text track's arrays). */
static enum s3_err needed_elements(struct gr2_types *reg, const struct gr2_space *sp, const struct gr2_type *t,
                                   enum gr2_std std, struct gr2_ref obj, const char *name, uint32_t type,
                                   struct gr2_elem *e, char *err, size_t errlen)
{
    elements(reg, sp, t, std, obj, name, type, e);
    return e->kind == GR2_EK_ERROR ? s3_fail(e->reason, err, errlen, "%s: %s", name, e->why) : S3_OK;
}

void gr2_root_array(struct gr2_types *reg, const struct gr2_space *sp, const char *name, struct gr2_elem *out)
{
    const struct gr2_type *t;
    enum s3_err e = type_at(reg, sp, sp->g->root_type, sp->g->root_object, "root", &t, NULL, 0);
    if (e != S3_OK) {
        memset(out, 0, sizeof *out);
        out->kind = GR2_EK_NULL;
        if (e == S3_ERR_NOMEM || e == S3_ERR_IO) { /* for now: never taken for "no such array" */
            out->kind = GR2_EK_ERROR;
            out->reason = e;
            out->why = e == S3_ERR_NOMEM ? "out of memory" : "the root's bytes cannot be read";
        }
        return;
    }
    elements(reg, sp, t, GR2_STD_ROOT, sp->g->root_object, name, GR2_ARRAY_OF_REFS, out);
}

bool gr2_ptr_elem(const struct gr2_space *sp, const struct gr2_elem *e, uint32_t k, struct gr2_ref *obj)
{
    const char *why;
    bool points;
    return gr2_pointer(sp, e->obj.section, e->obj.offset + k * e->size, obj, &points, &why) == S3_OK && points;
}

struct gr2_ref gr2_array_elem(const struct gr2_elem *e, uint32_t k)
{
    return (struct gr2_ref){e->obj.section, e->obj.offset + k * e->size};
}

/* ---- animations and track groups ---- */

enum s3_err gr2_animation_read(struct gr2_types *reg, const struct gr2_space *sp, struct gr2_ref type,
                               struct gr2_ref obj, struct gr2_animation *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    const struct gr2_type *t;
    enum s3_err e = type_at(reg, sp, type, obj, "animation", &t, err, errlen);
    if (e)
        return e;
    if (!member(t, GR2_STD_ANIMATION, "Duration", GR2_REAL32) ||
        !member(t, GR2_STD_ANIMATION, "TrackGroups", GR2_ARRAY_OF_REFS))
        return s3_fail(S3_ERR_FORMAT, err, errlen, "not an animation (no Duration or TrackGroups)");
    if ((e = name_of(sp, t, GR2_STD_ANIMATION, obj, "animation", &out->name, err, errlen)))
        return e;
    out->duration = real_of(sp, t, GR2_STD_ANIMATION, obj, "Duration", 0);
    out->timestep = real_of(sp, t, GR2_STD_ANIMATION, obj, "TimeStep", 0);
    out->oversampling = real_of(sp, t, GR2_STD_ANIMATION, obj, "Oversampling", -1);
    if ((e = needed_elements(reg, sp, t, GR2_STD_ANIMATION, obj, "TrackGroups", GR2_ARRAY_OF_REFS, &out->groups,
                             err, errlen)))
        gr2_animation_free(out);
    return e;
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

enum s3_err gr2_track_group_read(struct gr2_types *reg, const struct gr2_space *sp, struct gr2_ref type,
                                 struct gr2_ref obj, struct gr2_track_group *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    const struct gr2_type *t;
    enum s3_err err_kind = type_at(reg, sp, type, obj, "track group", &t, err, errlen);
    if (err_kind)
        return err_kind;
    if (!member(t, GR2_STD_TRACKGROUP, "TransformTracks", GR2_REF_TO_ARRAY))
        return s3_fail(S3_ERR_FORMAT, err, errlen, "not a track group (no TransformTracks)");
    if ((err_kind = name_of(sp, t, GR2_STD_TRACKGROUP, obj, "track group", &out->name, err, errlen)))
        return err_kind;
    static const char *const arrays[3] = {"TransformTracks", "VectorTracks", "TextTracks"};
    struct gr2_elem *e[3] = {&out->transform, &out->vector, &out->text};
    for (int i = 0; i < 3; i++) {
        if ((err_kind = needed_elements(reg, sp, t, GR2_STD_TRACKGROUP, obj, arrays[i], GR2_REF_TO_ARRAY, e[i], err,
                                        errlen))) {
            gr2_track_group_free(out);
            return err_kind;
        }
    }
    return S3_OK;
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

/* Locates (and decodes) one curve member of a track. A curve that could not be read for
 * now (out of memory) sets *nomem: the track's reader fails rather than keep it as a bad
 * curve. */
static bool one_curve(struct gr2_types *reg, const struct gr2_space *sp, const struct gr2_type *t, enum gr2_std std,
                      const char *name, struct gr2_ref obj, bool decode, struct gr2_curve_ref *where, bool *located,
                      struct gr2_curve *c, bool *nomem, char *err, size_t errlen)
{
    const struct gr2_member *m = gr2_std_find(t, std, name);
    char why[200];
    enum s3_err e;
    *located = false;
    if (!m) {
        s3_fail(S3_ERR_FORMAT, err, errlen, "%s: no such member", name);
        return false;
    }
    if ((e = gr2_curve_locate(reg, sp, m, obj, old_layout(sp), where, why, sizeof why)) != S3_OK) {
        *nomem |= e == S3_ERR_NOMEM;
        s3_fail(S3_ERR_FORMAT, err, errlen, "%s: %s", name, why);
        return false;
    }
    *located = true;
    if (decode && (e = gr2_curve_read(reg, sp, where, c, why, sizeof why)) != S3_OK) {
        *nomem |= e == S3_ERR_NOMEM;
        s3_fail(S3_ERR_FORMAT, err, errlen, "%s: %s", name, why);
        return false;
    }
    return decode;
}

enum s3_err gr2_transform_track_read(struct gr2_types *reg, const struct gr2_space *sp, struct gr2_ref type,
                                     struct gr2_ref obj, bool decode, struct gr2_transform_track *out, char *err,
                                     size_t errlen)
{
    memset(out, 0, sizeof *out);
    const struct gr2_type *t;
    enum s3_err e =
        typed_named(reg, sp, type, obj, GR2_STD_TRANSFORMTRACK, "transform track", &t, &out->name, err, errlen);
    if (e)
        return e;
    static const char *const names[3] = {"PositionCurve", "OrientationCurve", "ScaleShearCurve"};
    bool nomem = false;
    for (int r = 0; r < 3; r++)
        out->ok[r] = one_curve(reg, sp, t, GR2_STD_TRANSFORMTRACK, names[r], obj, decode, &out->where[r],
                               &out->located[r], &out->curve[r], &nomem, out->err[r], sizeof out->err[r]);
    if (nomem) {
        gr2_transform_track_free(out);
        return s3_fail(S3_ERR_NOMEM, err, errlen, "transform track: out of memory");
    }
    return S3_OK;
}

void gr2_transform_track_free(struct gr2_transform_track *tr)
{
    free(tr->name);
    for (int r = 0; r < 3; r++)
        if (tr->ok[r])
            gr2_curve_free(&tr->curve[r]);
    memset(tr, 0, sizeof *tr);
}

enum s3_err gr2_transform_track_check(const struct gr2_transform_track *tr, char *err, size_t errlen)
{
    static const char *const names[3] = {"PositionCurve", "OrientationCurve", "ScaleShearCurve"};
    char why[200];
    for (int r = 0; r < 3; r++) {
        if (!tr->ok[r])
            return s3_fail(S3_ERR_FORMAT, err, errlen, "%s", tr->err[r][0] ? tr->err[r] : "curve not decoded");
        enum s3_err e = gr2_curve_check(&tr->curve[r], (enum gr2_role)r, 0, why, sizeof why);
        if (e)
            return s3_fail(e, err, errlen, "%s: %s", names[r], why);
    }
    return S3_OK;
}

void gr2_transform_track_eval(const struct gr2_transform_track *tr, double t, double out[16], struct gr2_seek seek[3],
                              struct gr2_work *w)
{
    static const int at[3] = {0, 3, 7};
    for (int r = 0; r < 3; r++)
        gr2_curve_eval(&tr->curve[r], (enum gr2_role)r, 0, t, out + at[r], seek ? &seek[r] : NULL, w);
}

enum s3_err gr2_vector_track_read(struct gr2_types *reg, const struct gr2_space *sp, struct gr2_ref type,
                                  struct gr2_ref obj, bool decode, struct gr2_vector_track *out, char *err,
                                  size_t errlen)
{
    memset(out, 0, sizeof *out);
    const struct gr2_type *t;
    enum s3_err e = typed_named(reg, sp, type, obj, GR2_STD_VECTORTRACK, "vector track", &t, &out->name, err, errlen);
    if (e)
        return e;
    const struct gr2_member *km = gr2_std_find(t, GR2_STD_VECTORTRACK, "TrackKey");
    const struct gr2_member *dm = gr2_std_find(t, GR2_STD_VECTORTRACK, "Dimension");
    const char *bwhy;
    const uint8_t *b;
    if ((e = gr2_bytes_at(sp, obj.section, obj.offset, t->size, &b, &bwhy))) {
        gr2_vector_track_free(out);
        return s3_fail(e, err, errlen, "vector track: %s", bwhy);
    }
    if (km && (km->type == GR2_UINT32 || km->type == GR2_INT32) && km->array_width == 0)
        out->key = gr2_u32_at(sp, b + km->offset);
    if (!dm || !(dm->type == GR2_UINT32 || dm->type == GR2_INT32) || dm->array_width) {
        snprintf(out->err, sizeof out->err, "no Dimension member");
        return S3_OK;
    }
    out->dimension = (int32_t)gr2_u32_at(sp, b + dm->offset);
    bool nomem = false;
    out->ok = one_curve(reg, sp, t, GR2_STD_VECTORTRACK, "ValueCurve", obj, decode, &out->where, &out->located,
                        &out->curve, &nomem, out->err, sizeof out->err);
    if (nomem) {
        gr2_vector_track_free(out);
        return s3_fail(S3_ERR_NOMEM, err, errlen, "vector track: out of memory");
    }
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
    return S3_OK;
}

void gr2_vector_track_free(struct gr2_vector_track *v)
{
    free(v->name);
    if (v->ok)
        gr2_curve_free(&v->curve);
    memset(v, 0, sizeof *v);
}

enum s3_err gr2_text_track_read(struct gr2_types *reg, const struct gr2_space *sp, struct gr2_ref type,
                                struct gr2_ref obj, struct gr2_text_track *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    const struct gr2_type *t;
    enum s3_err e = type_at(reg, sp, type, obj, "text track", &t, err, errlen);
    if (e)
        return e;
    struct gr2_elem entries;
    if ((e = needed_elements(reg, sp, t, GR2_STD_TEXTTRACK, obj, "Entries", GR2_REF_TO_ARRAY, &entries, err, errlen)) ||
        (e = name_of(sp, t, GR2_STD_TEXTTRACK, obj, "text track", &out->name, err, errlen)))
        return e;
    if (entries.kind != GR2_EK_ARRAY)
        return S3_OK;
    const struct gr2_type *et = gr2_type_get(reg, sp, entries.type);
    const struct gr2_member *tm = et ? member(et, GR2_STD_TEXTENTRY, "TimeStamp", GR2_REAL32) : NULL;
    const struct gr2_member *xm = et ? member(et, GR2_STD_TEXTENTRY, "Text", GR2_STRING) : NULL;
    if (!tm || !xm) {
        e = s3_fail(et && et->ok ? S3_ERR_FORMAT : type_failure(et), err, errlen,
                    "Entries: not {TimeStamp, Text} entries");
        goto fail;
    }
    out->e = alloc_array(entries.count, sizeof *out->e);
    if (!out->e) {
        e = s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
        goto fail;
    }
    for (uint32_t i = 0; i < entries.count; i++) {
        struct gr2_ref at = gr2_array_elem(&entries, i);
        const char *why;
        const uint8_t *b;
        if ((e = gr2_bytes_at(sp, at.section, at.offset + tm->offset, 4, &b, &why))) {
            e = s3_fail(e, err, errlen, "entry %" PRIu32 ": TimeStamp: %s", i, why);
            goto fail;
        }
        out->e[i].t = gr2_f32_at(sp, b);
        e = gr2_name_at(sp, at.section, at.offset + xm->offset, &out->e[i].text, &why);
        out->n = i + 1;
        if (e) {
            e = s3_fail(e, err, errlen, "entry %" PRIu32 ": Text: %s", i, why);
            goto fail;
        }
    }
    return S3_OK;
fail:
    gr2_text_track_free(out);
    return e;
}

void gr2_text_track_free(struct gr2_text_track *t)
{
    free(t->name);
    for (uint32_t i = 0; i < t->n; i++)
        free(t->e[i].text);
    free(t->e);
    memset(t, 0, sizeof *t);
}
