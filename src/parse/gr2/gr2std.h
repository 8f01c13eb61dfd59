/* The standard Granny types by member order and kinds, for files whose strings are
 * remapped to an external table (member names are CRCs there): a member of a standard
 * type is found by its place in the type's signature (docs/formats/gr2anim.md, "Files
 * whose names are remapped").
 * - Pure: works on decoded types (gr2obj.h). */
#ifndef S3_GR2STD_H
#define S3_GR2STD_H

#include <stdbool.h>

#include "parse/gr2/gr2obj.h"

enum gr2_std {
    GR2_STD_ANY,        /* any standard type whose signature the type matches */
    GR2_STD_ROOT,       /* the file info: ArtToolInfo ... Animations, ExtendedData */
    GR2_STD_SKELETON,   /* Name, Bones, LODType */
    GR2_STD_BONE,       /* Name, ParentIndex, Transform, InverseWorldTransform[16], LODError */
    GR2_STD_MODEL,      /* Name, Skeleton, InitialPlacement, MeshBindings */
    GR2_STD_ANIMATION,  /* Name, Duration, TimeStep, [Oversampling,] TrackGroups */
    GR2_STD_TRACKGROUP, /* Name, VectorTracks, TransformTracks, TransformLODErrors, TextTracks,
                         * InitialPlacement */
    GR2_STD_TRANSFORMTRACK, /* Name, [Flags,] OrientationCurve, PositionCurve, ScaleShearCurve */
    GR2_STD_VECTORTRACK,    /* Name, TrackKey, Dimension, ValueCurve */
    GR2_STD_TEXTTRACK,      /* Name, Entries */
    GR2_STD_TEXTENTRY,      /* TimeStamp, Text */
    GR2_STD_CURVE2,         /* CurveData */
    GR2_STD_CURVEHEADER,    /* Format, Degree */
    GR2_STD_OLDCURVE,       /* Degree, Knots, Controls (type tags up to 0x80000010) */
};

/* True when no member of t has a name (its names were remapped, or never written). */
bool gr2_type_unnamed(const struct gr2_type *t);

/* The member called name: by its name when t's members have names (gr2_find_member),
 * else by its place when t's kinds match the signature of standard type std (of any
 * standard type with GR2_STD_ANY, when they agree). NULL when absent. */
const struct gr2_member *gr2_std_find(const struct gr2_type *t, enum gr2_std std, const char *name);

/* True when t's kinds match std's signature (t may have more members after it). */
bool gr2_std_matches(const struct gr2_type *t, enum gr2_std std);

#endif
