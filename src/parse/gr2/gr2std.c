#include "parse/gr2/gr2std.h"

#include <string.h>

/* Member kinds as a signature compares them: integers of one width are one kind (files
 * disagree on signedness: Int32 Flags here, UInt32 there). */
enum kind { K_S, K_R, K_A, K_P, K_V, K_T, K_F, K_I32, K_I16, K_I8, K_N, K_OTHER };

static enum kind kind_of(uint32_t type)
{
    switch (type) {
    case GR2_STRING:
        return K_S;
    case GR2_REFERENCE:
        return K_R;
    case GR2_REF_TO_ARRAY:
        return K_A;
    case GR2_ARRAY_OF_REFS:
        return K_P;
    case GR2_VARIANT_REF:
        return K_V;
    case GR2_TRANSFORM:
        return K_T;
    case GR2_REAL32:
        return K_F;
    case GR2_INT32:
    case GR2_UINT32:
        return K_I32;
    case GR2_INT16:
    case GR2_UINT16:
        return K_I16;
    case GR2_INT8:
    case GR2_UINT8:
        return K_I8;
    case GR2_INLINE:
        return K_N;
    default:
        return K_OTHER;
    }
}

struct std_member {
    const char *name;
    enum kind kind;
    int32_t width; /* array width (0: scalar) */
};

#define MAX_SIG 16

/* One signature: the first n members of a standard type as files write them. */
struct signature {
    enum gr2_std std;
    int n;
    struct std_member m[MAX_SIG];
};

static const struct signature sigs[] = {
    {GR2_STD_ROOT, 12,
     {{"ArtToolInfo", K_R, 0}, {"ExporterInfo", K_R, 0}, {"FromFileName", K_S, 0}, {"Textures", K_P, 0},
      {"Materials", K_P, 0}, {"Skeletons", K_P, 0}, {"VertexDatas", K_P, 0}, {"TriTopologies", K_P, 0},
      {"Meshes", K_P, 0}, {"Models", K_P, 0}, {"TrackGroups", K_P, 0}, {"Animations", K_P, 0}}},
    {GR2_STD_SKELETON, 3, {{"Name", K_S, 0}, {"Bones", K_A, 0}, {"LODType", K_I32, 0}}},
    {GR2_STD_BONE, 4,
     {{"Name", K_S, 0}, {"ParentIndex", K_I32, 0}, {"Transform", K_T, 0}, {"InverseWorldTransform", K_F, 16}}},
    {GR2_STD_MODEL, 4,
     {{"Name", K_S, 0}, {"Skeleton", K_R, 0}, {"InitialPlacement", K_T, 0}, {"MeshBindings", K_A, 0}}},
    {GR2_STD_ANIMATION, 5,
     {{"Name", K_S, 0}, {"Duration", K_F, 0}, {"TimeStep", K_F, 0}, {"Oversampling", K_F, 0},
      {"TrackGroups", K_P, 0}}},
    /* the oldest files: no Oversampling */
    {GR2_STD_ANIMATION, 4, {{"Name", K_S, 0}, {"Duration", K_F, 0}, {"TimeStep", K_F, 0}, {"TrackGroups", K_P, 0}}},
    {GR2_STD_TRACKGROUP, 6,
     {{"Name", K_S, 0}, {"VectorTracks", K_A, 0}, {"TransformTracks", K_A, 0}, {"TransformLODErrors", K_A, 0},
      {"TextTracks", K_A, 0}, {"InitialPlacement", K_T, 0}}},
    {GR2_STD_TRANSFORMTRACK, 5,
     {{"Name", K_S, 0}, {"Flags", K_I32, 0}, {"OrientationCurve", K_N, 0}, {"PositionCurve", K_N, 0},
      {"ScaleShearCurve", K_N, 0}}},
    {GR2_STD_TRANSFORMTRACK, 4,
     {{"Name", K_S, 0}, {"OrientationCurve", K_N, 0}, {"PositionCurve", K_N, 0}, {"ScaleShearCurve", K_N, 0}}},
    {GR2_STD_VECTORTRACK, 4,
     {{"Name", K_S, 0}, {"TrackKey", K_I32, 0}, {"Dimension", K_I32, 0}, {"ValueCurve", K_N, 0}}},
    {GR2_STD_TEXTTRACK, 2, {{"Name", K_S, 0}, {"Entries", K_A, 0}}},
    {GR2_STD_TEXTENTRY, 2, {{"TimeStamp", K_F, 0}, {"Text", K_S, 0}}},
    {GR2_STD_CURVE2, 1, {{"CurveData", K_V, 0}}},
    {GR2_STD_CURVEHEADER, 2, {{"Format", K_I8, 0}, {"Degree", K_I8, 0}}},
    {GR2_STD_OLDCURVE, 3, {{"Degree", K_I32, 0}, {"Knots", K_A, 0}, {"Controls", K_A, 0}}},
};

#define NSIGS (sizeof sigs / sizeof sigs[0])

bool gr2_type_unnamed(const struct gr2_type *t)
{
    for (uint32_t i = 0; t->ok && i < t->nmembers; i++)
        if (t->m[i].name)
            return false;
    return true;
}

static bool sig_matches(const struct gr2_type *t, const struct signature *s)
{
    if (!t->ok || t->nmembers < (uint32_t)s->n)
        return false;
    for (int i = 0; i < s->n; i++)
        if (kind_of(t->m[i].type) != s->m[i].kind || t->m[i].array_width != s->m[i].width)
            return false;
    return true;
}

bool gr2_std_matches(const struct gr2_type *t, enum gr2_std std)
{
    for (size_t k = 0; k < NSIGS; k++)
        if (sigs[k].std == std && sig_matches(t, &sigs[k]))
            return true;
    return false;
}

const struct gr2_member *gr2_std_find(const struct gr2_type *t, enum gr2_std std, const char *name)
{
    if (!t || !t->ok)
        return NULL;
    if (!gr2_type_unnamed(t))
        return gr2_find_member(t, name);
    int found = -1;
    for (size_t k = 0; k < NSIGS; k++) {
        const struct signature *s = &sigs[k];
        if ((std != GR2_STD_ANY && s->std != std) || !sig_matches(t, s))
            continue;
        for (int i = 0; i < s->n; i++) {
            if (strcmp(s->m[i].name, name) != 0)
                continue;
            if (found >= 0 && found != i)
                return NULL; /* two signatures place it differently: no answer */
            found = i;
        }
    }
    return found >= 0 ? &t->m[found] : NULL;
}
