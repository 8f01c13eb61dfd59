/* Builder of GR2 files holding animations: a skeleton, a model, four animations (walk,
 * short, pose, empty) whose transform tracks use every one of the 19 curve formats (and
 * identity curves shared between tracks of other roles), vector and text tracks; and
 * variants (byte orders and pointer sizes, BitKnit2-compressed, every name remapped to a
 * CRC, the old inline curve layout, a shear, no skeleton). Curves are encoded here from
 * the format rules (shared/formats/gr2anim.md); what was stored is in fxa_* so tests
 * decode and evaluate it with their own reading of the rules. */
#ifndef S3_FIXTURE_GR2ANIM_H
#define S3_FIXTURE_GR2ANIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FXA_OLD 19   /* the old inline layout {Degree, Knots, Controls} */
#define FXA_MAX 96   /* stored values per array, at most */

/* One curve as stored (members after the header, by format):
 *   0 DaKeyframes32f  h16 Dimension, a Controls
 *   1 DaK32fC32f      a Knots, b Controls          FXA_OLD: degree, a Knots, b Controls
 *   2 DaIdentity      h16 Dimension
 *   3 DaConstant32f   a Controls;  4, 5: s Controls[3] / [4]
 *   6, 7              h16 OneOverKnotScaleTrunc, a ControlScaleOffsets, w KnotsControls
 *   8, 9 (D4n)        h16 ScaleOffsetTableEntries, f1 OneOverKnotScale, w KnotsControls
 *   10, 11, 13, 15, 17, 18   h16 trunc, s ControlScales, o ControlOffsets, w KnotsControls
 *   12, 14            h16 trunc, f1 ControlScale, f2 ControlOffset, w KnotsControls
 *   16                s ControlScales, o ControlOffsets, a KnotsControls (floats)
 * 8-bit formats store the low byte of each w. */
struct fxa_curve {
    int format, degree;
    uint16_t h16;
    float f1, f2;
    float s[4], o[3];
    uint32_t na, nb, nw;
    float a[FXA_MAX], b[FXA_MAX];
    uint16_t w[FXA_MAX];
};

enum { FXA_POS, FXA_ROT, FXA_SS };

struct fxa_track {
    const char *name;
    int curve[3]; /* indices into fxa_result.curve, by FXA_POS, FXA_ROT, FXA_SS */
    const char *bone; /* the node it drives, when not the one named as the track: the bone
                       * its name matches loosely (loose_names), or NULL */
};

#define FXA_MAX_TRACKS 12

struct fxa_group {
    const char *name;
    struct fxa_track track[FXA_MAX_TRACKS];
    uint32_t ntracks;
    /* vector tracks: name, key, dimension, curve */
    struct {
        const char *name;
        uint32_t key;
        int32_t dimension;
        int curve;
    } vec[2];
    uint32_t nvec;
    /* one text track */
    const char *text_name;
    struct {
        float t;
        const char *text;
    } entry[2];
    uint32_t nentries;
};

#define FXA_MAX_GROUPS 4

struct fxa_anim {
    const char *name;
    float duration, timestep, oversampling;
    int group[FXA_MAX_GROUPS]; /* indices into fxa_result.group */
    uint32_t ngroups;
};

#define FXA_BONES 10
struct fxa_bone {
    const char *name;
    int32_t parent;
    float position[3], orientation[4];
};
extern const struct fxa_bone fxa_bones[FXA_BONES];

struct fxa_opts {
    const char *sig;     /* le32, le64, be32, be64 */
    bool bitknit2;       /* the object section and its tables BitKnit2-compressed */
    bool remapped;       /* every name a CRC: member names absent, strings crc32(text) */
    bool old_layout;     /* type tag 0x80000010: curves inline as {Degree, Knots, Controls} */
    bool shear;          /* the foot's scale/shear constant has an off-diagonal value (0.5),
                          * the tail's DaK16uC16u ones that grow from 0 over the knots */
    bool no_skeleton;    /* no Skeletons, no Models */
    bool rough_orientations; /* root and head store fxm_rough_orientation (off unit) */
    bool set_duration;   /* walk's Duration and TimeStep are these (hostile values) */
    bool loose_names;    /* hero's tracks root, hip, spine, head called "ROOT", "Bip01 hip",
                          * "rig|Spine", "Scene:Bip01 HEAD", and a tenth track "ghost" (the
                          * lid's curve) that matches no bone */
    bool wild;           /* short's curve (root's position, degree 2) swings by ±1e5 between
                          * knots 0.25 s apart: more bending than the sampled keys' bound */
    float duration, timestep;
};

#define FXA_MAX_CURVES 40
struct fxa_result {
    struct fxa_curve curve[FXA_MAX_CURVES];
    uint32_t ncurves;
    int identity; /* the DaIdentity curve several tracks share (-1 in the old layout) */
    struct fxa_group group[FXA_MAX_GROUPS];
    uint32_t ngroups;
    struct fxa_anim anim[4];
    uint32_t nanims;
};

/* Builds the file (malloc'd) and fills r with what it holds. Root: Skeletons [rig],
 * Models [hero], TrackGroups [every group], Animations [every animation]. Old layout:
 * one animation of two tracks. */
uint8_t *fxa_build(const struct fxa_opts *o, size_t *size, struct fxa_result *r);

/* A long animation for benchmarks: a skeleton of `tracks` bones in a chain, one animation
 * of `seconds` whose one group has a track per bone: position D3K16uC16u and orientation
 * D4nK16uC15u of degree 2 with knots_per_second knots a second, scale/shear the identity.
 * At most 400 tracks and 60 seconds. */
struct fxa_long_opts {
    const char *sig;
    uint32_t tracks, knots_per_second;
    float seconds;
};
uint8_t *fxa_build_long(const struct fxa_long_opts *o, size_t *size);

/* The demo (README picture, s3rig-mkfixture gr2anim-demo): a chain of 6 bones up +Y, a
 * tube skinned to it (model "snake"), and one animation "sway" of 2 s whose tracks bend
 * the chain to and fro (D4nK16uC15u rotations of degree 2, constant positions). */
uint8_t *fxa_build_demo(size_t *size);
/* The demo's bones: "b0".."b5", bone b the child of b - 1 at fxa_demo_offset from it (b0 at
 * the origin), no rotation; its animation "sway" (2 s) has one group "snake" (the model's
 * name) with a track per bone, named as the bone. */
#define FXA_DEMO_BONES 6
extern const float fxa_demo_offset[3];

/* The name a remapped file stores for text: crc32 of it. */
uint32_t fxa_crc(const char *text);

#endif
