/* Granny animations out of the object graph: Animations, TrackGroups and their transform,
 * vector and text tracks, each track's curves decoded (gr2curve.h). Members are found by
 * name, or by their place in the standard types when the file's names are remapped
 * (gr2std.h). Facts: docs/formats/gr2anim.md ("Object model"). Pure: bytes through a
 * gr2_space, types decoded into the caller's registry. */
#ifndef S3_GR2ANIM_H
#define S3_GR2ANIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parse/gr2/gr2curve.h"
#include "parse/gr2/gr2obj.h"
#include "parse/gr2/gr2walk.h"

/* A String slot as a name: the text, "crc:0x%08x" for a remapped string, "" for NULL,
 * malloc'd into *out. RANGE (why) when the slot is unreadable; NOMEM. */
enum s3_err gr2_name_at(const struct gr2_space *sp, uint32_t sec, uint32_t off, char **out, const char **why);

/* An ArrayOfReferences member of the root object (Animations, Skeletons, Models,
 * TrackGroups): GR2_EK_PTRARRAY, GR2_EK_NULL when absent or empty, or GR2_EK_ERROR. */
void gr2_root_array(struct gr2_types *reg, const struct gr2_space *sp, const char *name, struct gr2_elem *out);
/* Pointer k of a GR2_EK_PTRARRAY: true with *obj when it points somewhere; false when it
 * is NULL or unreadable (a lookup: the caller shows nothing there). */
bool gr2_ptr_elem(const struct gr2_space *sp, const struct gr2_elem *e, uint32_t k, struct gr2_ref *obj);

struct gr2_animation {
    char *name;
    double duration, timestep;
    double oversampling; /* -1: the member is absent (the oldest files) */
    struct gr2_elem groups; /* TrackGroups: GR2_EK_PTRARRAY or GR2_EK_NULL */
};
/* The read functions return S3_OK or the reason with err: FORMAT (not the standard type,
 * a bad member), RANGE (bytes past their section), NOMEM. */
enum s3_err gr2_animation_read(struct gr2_types *reg, const struct gr2_space *sp, struct gr2_ref type,
                               struct gr2_ref obj, struct gr2_animation *out, char *err, size_t errlen);
void gr2_animation_free(struct gr2_animation *a);
/* The step samples.csv uses: TimeStep, or 1/30 s when it is not a positive number. */
double gr2_animation_step(const struct gr2_animation *a);

struct gr2_track_group {
    char *name;
    /* GR2_EK_ARRAY (count elements of size bytes of type) or GR2_EK_NULL */
    struct gr2_elem transform, vector, text;
};
enum s3_err gr2_track_group_read(struct gr2_types *reg, const struct gr2_space *sp, struct gr2_ref type,
                                 struct gr2_ref obj, struct gr2_track_group *out, char *err, size_t errlen);
void gr2_track_group_free(struct gr2_track_group *g);
/* Element k of a GR2_EK_ARRAY. */
struct gr2_ref gr2_array_elem(const struct gr2_elem *e, uint32_t k);

/* A TransformTrack. Its curves by role (GR2_ROLE_POSITION, _ORIENTATION, _SCALESHEAR). */
struct gr2_transform_track {
    char *name;
    struct gr2_curve_ref where[3]; /* where each curve lies (valid when located[role]) */
    bool located[3];
    struct gr2_curve curve[3];     /* decoded (when ok[role]) */
    bool ok[3];
    char err[3][200];              /* why a curve is not ok */
};
/* Reads the track's name and locates its curves; decodes them too when `decode`. A
 * failure (err) only when the track itself is unreadable; a broken curve is !ok with its
 * reason. */
enum s3_err gr2_transform_track_read(struct gr2_types *reg, const struct gr2_space *sp, struct gr2_ref type,
                                     struct gr2_ref obj, bool decode, struct gr2_transform_track *out, char *err,
                                     size_t errlen);
void gr2_transform_track_free(struct gr2_transform_track *tr);
/* S3_OK when every curve decoded and fits its role, else FORMAT with err naming the
 * curve. */
enum s3_err gr2_transform_track_check(const struct gr2_transform_track *tr, char *err, size_t errlen);
/* The local transform at t: position (3), orientation (4, x y z w), scale/shear (9). */
void gr2_transform_track_eval(const struct gr2_transform_track *tr, double t, double out[16], struct gr2_seek seek[3],
                              struct gr2_work *w);

struct gr2_vector_track {
    char *name;
    uint32_t key;
    int32_t dimension;
    struct gr2_curve_ref where;
    bool located, ok;
    struct gr2_curve curve;
    char err[200];
};
enum s3_err gr2_vector_track_read(struct gr2_types *reg, const struct gr2_space *sp, struct gr2_ref type,
                                  struct gr2_ref obj, bool decode, struct gr2_vector_track *out, char *err,
                                  size_t errlen);
void gr2_vector_track_free(struct gr2_vector_track *v);

struct gr2_text_entry {
    double t;
    char *text;
};
struct gr2_text_track {
    char *name;
    struct gr2_text_entry *e;
    uint32_t n;
};
enum s3_err gr2_text_track_read(struct gr2_types *reg, const struct gr2_space *sp, struct gr2_ref type,
                                struct gr2_ref obj, struct gr2_text_track *out, char *err, size_t errlen);
void gr2_text_track_free(struct gr2_text_track *t);

#endif
