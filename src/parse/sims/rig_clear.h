/* The "clear" RIG encoding (Sims 3 after patches, Pets, Sims 4): the first two u32 are
 * major 3/4 and minor 1/2. Facts: docs/formats/rig.md.
 * - rig_clear_parse returns enum s3_err; free with rig_clear_free. */
#ifndef S3_RIG_CLEAR_H
#define S3_RIG_CLEAR_H

#include <stdbool.h>
#include <stdint.h>

#include "parse/base/diag.h"
#include "parse/base/err.h"
#include "parse/base/model.h"
#include "parse/base/format.h"
#include "parse/base/reader.h"

#define RIG_CLEAR_ERR 200

enum rig_clear_variant {
    RIG_CLEAR_MAJOR4, /* Sims 3 and Sims 4 write major 4 the same way */
    RIG_CLEAR_TS3_MAJOR3, /* skeleton name, no IK chains */
    RIG_CLEAR_TS4_MAJOR3, /* no skeleton name, IK chains without info nodes or slot_info */
};

struct rig_clear_bone {
    uint64_t pos, size; /* absolute */
    float position[3], orientation[4], scale[3];
    char *name;
    uint32_t name_len;
    int32_t opposing, parent;
    uint32_t name_hash, flags;
    bool hash_ok;
};

struct rig_clear_chain {
    uint64_t pos, size;
    uint32_t nbones;
    int32_t *bones;
    bool has_info;
    int32_t info_nodes[11];
    int32_t pole, slot_info, slot_offset, root;
    bool has_slot_info;
};

struct rig_clear {
    uint32_t major, minor;
    enum rig_clear_variant variant;
    bool ambiguous; /* major 3: both layouts ended at the end of the file */
    int32_t bone_count;
    struct rig_clear_bone *bones;
    uint32_t nbones; /* parsed */
    char bones_err[RIG_CLEAR_ERR];
    bool has_skeleton_name;
    char *skeleton_name;
    uint32_t skeleton_name_len;
    uint64_t skeleton_name_pos;
    bool chains_present;
    uint64_t chains_pos;
    int32_t chain_count;
    struct rig_clear_chain *chains;
    uint32_t nchains;
    char chains_err[RIG_CLEAR_ERR];
    uint64_t end; /* where parsing stopped */
};

/* FNV-1 32-bit hash of the lower-cased name. */
uint32_t rig_clear_name_hash(const char *name, size_t len);
const char *rig_clear_variant_name(enum rig_clear_variant v);

/* Parses the file: S3_OK, or the reason it cannot be read as any variant (err says why:
 * S3_ERR_RANGE shorter than its version, S3_ERR_FORMAT a major 3 neither layout of which
 * ends at the end of the file). Broken parts of a major-4 file stop the parse there: what
 * came before stays, *_err says why. */
enum s3_err rig_clear_parse(const struct s3_src *src, struct rig_clear *r, struct diag *d, char *err,
                            size_t errlen);
void rig_clear_free(struct rig_clear *r);

/* The parsed bones as a model.h skeleton (position, orientation, scale, parent, names;
 * the skeleton name when there is one): S3_OK or S3_ERR_NOMEM. */
enum s3_err rig_clear_skeleton(const struct rig_clear *r, struct mdl_skeleton *out);

/* s3_detect_fn: a clear RIG (version 3 or 4, minor 1 or 2). */
s3_detect_fn rig_clear_detect;

#endif
