/* Sims 3 RIG, wrapped-Granny encoding (first u32 0x8EAF13DE): the 52-byte wrapper header,
 * the IK-chain block and the four bone lists. Facts: docs/formats/rig.md. The Granny data
 * it wraps is parsed by gr2.h.
 * - rig_parse_wrapped returns enum s3_err; broken blocks keep their own messages.
 * - Free with rig_free_wrapped. */
#ifndef S3_RIG_H
#define S3_RIG_H

#include <stdbool.h>
#include <stdint.h>

#include "parse/base/diag.h"
#include "parse/base/err.h"
#include "parse/base/format.h"
#include "parse/base/reader.h"

#define RIG_MAGIC 0x8EAF13DEu
#define RIG_HEADER_SIZE 52
#define RIG_HEADER_FIELDS 13
#define RIG_IK_FIXED_SIZE 116 /* an entry is 116 + 12·L bytes */
#define RIG_ERR 200

enum rig_header_field {
    RIG_H_MAGIC,
    RIG_H_RESERVED,
    RIG_H_INT2,
    RIG_H_GRANNY,
    RIG_H_IK_CHAINS,
    RIG_H_IK_TARGET_SLOTS,
    RIG_H_IK_INFO_NODES,
    RIG_H_COMPRESS_NODES,
    RIG_H_FULL_BONE_LIST,
    RIG_H_UNUSED_0,
};

extern const char *const rig_header_field_names[RIG_HEADER_FIELDS];

enum rig_entry_base {
    RIG_BASE_FIELD, /* entry offsets count from their own u32 (the seed) */
    RIG_BASE_TABLE, /* from the start of the offset table (the wrapper writer) */
};

struct rig_link {
    int32_t end, start;
};

struct rig_ik_entry {
    uint64_t pos, size; /* absolute, bytes */
    bool ok;
    char err[RIG_ERR];
    uint32_t unknown_0, length;
    int32_t pole, pole_root, slot_info, slot_info_root, slot_offset, slot_offset_root;
    uint32_t info_node_flags;
    int32_t info_nodes[10];
    int32_t info_root;
    int32_t root;
    uint32_t *link_values; /* length entries */
    struct rig_link *links;
};

/* Offsets of the fixed fields inside an entry (for xattrs). */
enum {
    RIG_IK_OFF_UNKNOWN_0 = 0,
    RIG_IK_OFF_LENGTH = 4,
    RIG_IK_OFF_RESERVED = 8,
    RIG_IK_OFF_POLE = 40,
    RIG_IK_OFF_POLE_ROOT = 44,
    RIG_IK_OFF_SLOT_INFO = 48,
    RIG_IK_OFF_SLOT_INFO_ROOT = 52,
    RIG_IK_OFF_SLOT_OFFSET = 56,
    RIG_IK_OFF_SLOT_OFFSET_ROOT = 60,
    RIG_IK_OFF_FLAGS = 64,
    RIG_IK_OFF_INFO_NODES = 68,
    RIG_IK_OFF_INFO_ROOT = 108,
    RIG_IK_OFF_LINK_VALUES = 112,
};

enum rig_list_id { RIG_LIST_TARGET_SLOTS, RIG_LIST_INFO_NODES, RIG_LIST_COMPRESS_NODES, RIG_LIST_FULL_BONES };
extern const char *const rig_list_names[4];

struct rig_list {
    uint64_t pos; /* absolute position of the count */
    uint32_t count;
    int32_t *index;
    bool ok;
    char err[RIG_ERR];
};

struct rig_wrapped {
    uint32_t h[RIG_HEADER_FIELDS];
    uint64_t granny_pos;
    uint64_t ik_pos;
    bool ik_ok;
    char ik_err[RIG_ERR];
    uint32_t ik_count;
    uint32_t *entry_offset; /* as stored */
    enum rig_entry_base entry_base;
    bool entry_base_fits; /* false: neither reading made the entries contiguous */
    struct rig_ik_entry *entries;
    struct rig_list lists[4];
    bool oom; /* an allocation failed while parsing: rig_parse_wrapped returns NOMEM */
};

/* Parses the wrapper: S3_OK, or S3_ERR_RANGE / S3_ERR_FORMAT when the 52-byte header
 * itself is cut or not a wrapper (err says why), S3_ERR_NOMEM when an allocation failed
 * (r freed). Broken blocks are marked !ok with a reason. */
enum s3_err rig_parse_wrapped(const struct s3_src *src, struct rig_wrapped *r, struct diag *d, char *err,
                              size_t errlen);
void rig_check_granny_extent(const struct rig_wrapped *r, uint64_t granny_size, struct diag *d);

/* What replacing the Granny data by new bytes of another length changes in the wrapper
 * (docs/formats/rig.md): the bytes [from, to) (the Granny data and its padding up to the
 * IK-chain block) become the new data padded to 4 bytes (new_len), and the header words
 * word_at[i] (file offsets) take word[i] (the offsets past the Granny data moved, the
 * writer's Granny size in int2_offset when it held one). */
struct rig_granny_resize {
    uint64_t from, to, new_len;
    uint32_t nwords;
    uint32_t word_at[6], word[6];
};
/* From the header's 52 bytes as they are now, the Granny data's old length and the new
 * one: S3_OK, or S3_ERR_FORMAT when the header's offsets do not frame the Granny data
 * (old_len bytes at granny_pos), S3_ERR_LIMIT when the new offsets pass 32 bits. */
enum s3_err rig_plan_granny_resize(const uint8_t head[RIG_HEADER_SIZE], uint64_t granny_pos, uint64_t old_len,
                                   uint64_t new_len, struct rig_granny_resize *out, char *err, size_t errlen);
void rig_free_wrapped(struct rig_wrapped *r);

/* s3_detect_fn: a wrapped RIG (first u32 RIG_MAGIC). */
s3_detect_fn rig_detect;

#endif
