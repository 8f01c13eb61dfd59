/* Builder of clear RIG files (major 3/4, the TS3 and TS4 layouts). fxc_: "fixture, clear
 * RIG", the one-letter style of the other builders (fxg_, fxm_, fxp_, fxt_). */
#ifndef S3_FIXTURE_RIG_CLEAR_H
#define S3_FIXTURE_RIG_CLEAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FXC_BONES 6
#define FXC_CHAINS 2

struct fxc_bone {
    float pos[3], q[4], s[3];
    const char *name;
    int32_t opposing, parent;
    uint32_t flags;
    bool bad_hash;
};

struct fxc_chain {
    uint32_t n;
    int32_t bones[4];
    int32_t info[11];
    int32_t pole, slot_info, slot_offset, root;
};

struct fxc_opts {
    uint32_t major, minor;
    bool skeleton_name, chains, info; /* the layout */
    size_t trailing;                  /* junk bytes at the end */
};

struct fxc_layout {
    uint64_t bone_pos[FXC_BONES], bone_size[FXC_BONES];
    uint64_t skel_pos, chains_pos, chain_pos[FXC_CHAINS], chain_size[FXC_CHAINS], end, size;
    uint32_t hash[FXC_BONES];
};

extern const struct fxc_bone fxc_bones[FXC_BONES];
extern const struct fxc_chain fxc_chains[FXC_CHAINS];
extern const char fxc_skeleton[];

/* FNV-1 32-bit of the lower-cased name (the test's own). */
uint32_t fxc_hash(const char *name);
/* The opts for a variant: 0 major 4, 1 TS3 major 3, 2 TS4 major 3. */
struct fxc_opts fxc_variant(int v);
uint8_t *fxc_build(const struct fxc_opts *o, size_t *size, struct fxc_layout *lay);

#endif
