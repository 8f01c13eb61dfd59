#include "parse/sims/rig.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/base/err.h"

const char *const rig_header_field_names[RIG_HEADER_FIELDS] = {
    "magic",          "reserved",         "int2_offset",     "granny_offset",
    "ik_chains_offset", "ik_target_slots_offset", "ik_info_nodes_offset", "compress_nodes_offset",
    "full_bone_list_offset", "unused_0", "unused_1", "unused_2", "unused_3",
};

const char *const rig_list_names[4] = {"ik_target_slots", "info_nodes", "compress_nodes", "full_bone_list"};

/* Every offset in the header counts from the position of its own field. */
static uint64_t field_target(const struct rig_wrapped *r, int field)
{
    return (uint64_t)field * 4 + r->h[field];
}

static void parse_list(const struct s3_src *src, struct rig_wrapped *r, int id)
{
    struct rig_list *l = &r->lists[id];
    l->pos = field_target(r, RIG_H_IK_TARGET_SLOTS + id);
    if (src_u32(src, l->pos, false, &l->count)) {
        snprintf(l->err, RIG_ERR, "%s: count at 0x%llx lies past the end of the file (%llu bytes)",
                 rig_list_names[id], (unsigned long long)l->pos, (unsigned long long)src->size);
        return;
    }
    uint64_t bytes = (uint64_t)l->count * 4;
    if (!range_ok(l->pos + 4, bytes, src->size)) {
        snprintf(l->err, RIG_ERR, "%s at 0x%llx: count %u needs %llu bytes, only %llu remain", rig_list_names[id],
                 (unsigned long long)l->pos, l->count, (unsigned long long)bytes,
                 (unsigned long long)(src->size - l->pos - 4));
        return;
    }
    uint8_t *b = alloc_array(bytes, 1);
    l->index = alloc_array(l->count, sizeof *l->index);
    r->oom |= !b || !l->index; /* never a list shown broken for lack of memory */
    if (!b || !l->index || src_read(src, l->pos + 4, b, bytes)) {
        free(b);
        snprintf(l->err, RIG_ERR, "%s at 0x%llx: read error", rig_list_names[id], (unsigned long long)l->pos);
        return;
    }
    for (uint32_t i = 0; i < l->count; i++)
        l->index[i] = (int32_t)ld_u32(b + 4 * (size_t)i, false);
    free(b);
    l->ok = true;
}

/* Absolute position of entry i under one reading of the offset table. */
static uint64_t entry_pos(const struct rig_wrapped *r, uint32_t i, enum rig_entry_base base)
{
    uint64_t table = r->ik_pos + 4;
    return (base == RIG_BASE_FIELD ? table + 4ull * i : table) + r->entry_offset[i];
}

/* Reads the link count L of the entry at pos; false when the entry cannot fit. */
static bool entry_extent(const struct s3_src *src, uint64_t pos, uint64_t *size)
{
    uint32_t len;
    if (src_u32(src, pos + RIG_IK_OFF_LENGTH, false, &len))
        return false;
    *size = RIG_IK_FIXED_SIZE + 12ull * len;
    return range_ok(pos, *size, src->size);
}

/* A reading fits when every entry is in bounds and each starts where the previous ended. */
static bool reading_fits(const struct s3_src *src, const struct rig_wrapped *r, enum rig_entry_base base)
{
    uint64_t expect = entry_pos(r, 0, base);
    for (uint32_t i = 0; i < r->ik_count; i++) {
        uint64_t pos = entry_pos(r, i, base), size;
        if (pos != expect || !entry_extent(src, pos, &size))
            return false;
        expect = pos + size;
    }
    return true;
}

static void parse_entry(const struct s3_src *src, struct rig_wrapped *r, struct rig_ik_entry *e, uint32_t i)
{
    if (!entry_extent(src, e->pos, &e->size)) {
        snprintf(e->err, RIG_ERR, "IK chain %u at 0x%llx: entry does not fit in the file (%llu bytes)", i,
                 (unsigned long long)e->pos, (unsigned long long)src->size);
        return;
    }
    uint8_t *b = malloc(e->size);
    r->oom |= !b;
    if (!b || src_read(src, e->pos, b, e->size)) {
        free(b);
        snprintf(e->err, RIG_ERR, "IK chain %u at 0x%llx: read error", i, (unsigned long long)e->pos);
        return;
    }
    struct cursor c;
    cur_init(&c, b, e->size, false);
    e->unknown_0 = cur_u32(&c);
    e->length = cur_u32(&c);
    cur_skip(&c, 32);
    e->pole = cur_i32(&c);
    e->pole_root = cur_i32(&c);
    e->slot_info = cur_i32(&c);
    e->slot_info_root = cur_i32(&c);
    e->slot_offset = cur_i32(&c);
    e->slot_offset_root = cur_i32(&c);
    e->info_node_flags = cur_u32(&c);
    for (int k = 0; k < 10; k++)
        e->info_nodes[k] = cur_i32(&c);
    e->info_root = cur_i32(&c);
    e->link_values = alloc_array(e->length, sizeof *e->link_values);
    e->links = alloc_array(e->length, sizeof *e->links);
    if (!e->link_values || !e->links) {
        free(b);
        snprintf(e->err, RIG_ERR, "IK chain %u: out of memory", i);
        r->oom = true;
        return;
    }
    for (uint32_t k = 0; k < e->length; k++)
        e->link_values[k] = cur_u32(&c);
    e->root = cur_i32(&c);
    for (uint32_t k = 0; k < e->length; k++) {
        e->links[k].end = cur_i32(&c);
        e->links[k].start = cur_i32(&c);
    }
    e->ok = !c.err;
    free(b);
}

static void choose_entry_base(const struct s3_src *src, struct rig_wrapped *r, struct diag *d)
{
    bool field = reading_fits(src, r, RIG_BASE_FIELD);
    bool table = reading_fits(src, r, RIG_BASE_TABLE);
    r->entry_base_fits = field || table;
    r->entry_base = (table && !field) ? RIG_BASE_TABLE : RIG_BASE_FIELD;
    if (!field && !table && r->ik_count > 0)
        diag_add(d, "IK-chain entry offsets: neither reading (from each offset's own field, or from the table "
                    "start) makes the entries contiguous and in bounds; using the first");
}

static void parse_ik_block(const struct s3_src *src, struct rig_wrapped *r, struct diag *d)
{
    r->ik_pos = field_target(r, RIG_H_IK_CHAINS);
    if (src_u32(src, r->ik_pos, false, &r->ik_count)) {
        snprintf(r->ik_err, RIG_ERR, "IK-chain block at 0x%llx lies past the end of the file (%llu bytes)",
                 (unsigned long long)r->ik_pos, (unsigned long long)src->size);
        return;
    }
    uint64_t table = 4ull * r->ik_count;
    if (!range_ok(r->ik_pos + 4, table, src->size)) {
        snprintf(r->ik_err, RIG_ERR, "IK-chain block at 0x%llx: count %u needs a %llu-byte offset table, only %llu bytes remain",
                 (unsigned long long)r->ik_pos, r->ik_count, (unsigned long long)table,
                 (unsigned long long)(src->size - r->ik_pos - 4));
        return;
    }
    r->entry_offset = alloc_array(r->ik_count, sizeof *r->entry_offset);
    r->entries = alloc_array(r->ik_count, sizeof *r->entries);
    if (!r->entry_offset || !r->entries) {
        snprintf(r->ik_err, RIG_ERR, "IK-chain block: out of memory");
        r->oom = true;
        return;
    }
    for (uint32_t i = 0; i < r->ik_count; i++)
        if (src_u32(src, r->ik_pos + 4 + 4ull * i, false, &r->entry_offset[i]))
            return;
    choose_entry_base(src, r, d);
    /* Entries of a sound file never overlap, so together they never exceed the file:
     * this budget keeps hostile tables (every offset naming one huge entry) bounded. */
    uint64_t budget = src->size;
    for (uint32_t i = 0; i < r->ik_count; i++) {
        struct rig_ik_entry *e = &r->entries[i];
        uint64_t size;
        e->pos = entry_pos(r, i, r->entry_base);
        if (entry_extent(src, e->pos, &size) && size > budget) {
            snprintf(e->err, RIG_ERR, "IK chain %u at 0x%llx: entries overlap (together larger than the file)", i,
                     (unsigned long long)e->pos);
            continue;
        }
        parse_entry(src, r, e, i);
        if (e->ok)
            budget -= e->size;
    }
    r->ik_ok = true;
}

void rig_check_granny_extent(const struct rig_wrapped *r, uint64_t granny_size, struct diag *d)
{
    /* int2_offset is "Int2 block from the start of the Granny data" (seed) or the Granny
     * data size (writer): both mean the IK block follows the Granny data, up to padding. */
    uint64_t int2 = r->granny_pos + r->h[RIG_H_INT2];
    if (int2 > r->ik_pos || r->ik_pos - int2 > 3)
        diag_add(d, "int2_offset %u points to 0x%llx but ik_chains_offset points to 0x%llx", r->h[RIG_H_INT2],
                 (unsigned long long)int2, (unsigned long long)r->ik_pos);
    if (granny_size && (r->h[RIG_H_INT2] < granny_size || r->h[RIG_H_INT2] - granny_size > 3))
        diag_add(d, "int2_offset %u disagrees with the Granny data size %llu", r->h[RIG_H_INT2],
                 (unsigned long long)granny_size);
}

enum s3_err rig_plan_granny_resize(const uint8_t head[RIG_HEADER_SIZE], uint64_t granny_pos, uint64_t old_len,
                                   uint64_t new_len, struct rig_granny_resize *out, char *err, size_t errlen)
{
    uint32_t h[RIG_HEADER_FIELDS];
    for (int i = 0; i < RIG_HEADER_FIELDS; i++)
        h[i] = ld_u32(head + 4 * i, false);
    /* every offset counts from its own field */
    uint64_t g0 = 12 + (uint64_t)h[RIG_H_GRANNY], ik = 16 + (uint64_t)h[RIG_H_IK_CHAINS];
    uint64_t new_ik = (g0 + new_len + 3) & ~3ull;
    memset(out, 0, sizeof *out);
    if (g0 != granny_pos || ik < g0 + old_len)
        return s3_fail(S3_ERR_FORMAT, err, errlen, "the wrapper's offsets do not frame the Granny data");
    if (new_ik > UINT32_MAX)
        return s3_fail(S3_ERR_LIMIT, err, errlen, "the wrapper's offsets would pass 32 bits");
    int64_t delta = (int64_t)new_ik - (int64_t)ik;
    for (int i = RIG_H_IK_CHAINS; i <= RIG_H_FULL_BONE_LIST; i++) { /* the blocks after the Granny data */
        uint64_t at = 4 * (uint64_t)i;
        if (at + h[i] < ik)
            continue;
        out->word_at[out->nwords] = (uint32_t)at;
        out->word[out->nwords++] = (uint32_t)((int64_t)h[i] + delta);
    }
    /* int2_offset: the writer's Granny size (exact, or up to the IK block) follows it */
    if (h[RIG_H_INT2] == old_len || h[RIG_H_INT2] == ik - g0) {
        out->word_at[out->nwords] = 4 * RIG_H_INT2;
        out->word[out->nwords++] = (uint32_t)(h[RIG_H_INT2] == old_len ? new_len : new_ik - g0);
    }
    out->from = g0;
    out->to = ik;
    out->new_len = new_ik - g0;
    return S3_OK;
}

enum s3_err rig_parse_wrapped(const struct s3_src *src, struct rig_wrapped *r, struct diag *d, char *err,
                              size_t errlen)
{
    memset(r, 0, sizeof *r);
    uint8_t b[RIG_HEADER_SIZE];
    if (src_read(src, 0, b, sizeof b))
        return s3_fail(S3_ERR_RANGE, err, errlen, "wrapped RIG header needs 52 bytes, the file has %llu",
                       (unsigned long long)src->size);
    for (int i = 0; i < RIG_HEADER_FIELDS; i++)
        r->h[i] = ld_u32(b + 4 * i, false);
    if (r->h[RIG_H_MAGIC] != RIG_MAGIC)
        return s3_fail(S3_ERR_FORMAT, err, errlen, "not a wrapped RIG (first u32 0x%08x)", r->h[RIG_H_MAGIC]);
    if (r->h[RIG_H_RESERVED] != 0)
        diag_add(d, "wrapper reserved field is 0x%08x, expected 0", r->h[RIG_H_RESERVED]);
    r->granny_pos = field_target(r, RIG_H_GRANNY);
    parse_ik_block(src, r, d);
    for (int i = 0; i < 4; i++)
        parse_list(src, r, i);
    if (r->oom) { /* a part shown broken would be a guess: the open fails */
        rig_free_wrapped(r);
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    }
    return S3_OK;
}

void rig_free_wrapped(struct rig_wrapped *r)
{
    if (r->entries)
        for (uint32_t i = 0; i < r->ik_count; i++) {
            free(r->entries[i].link_values);
            free(r->entries[i].links);
        }
    free(r->entries);
    free(r->entry_offset);
    for (int i = 0; i < 4; i++)
        free(r->lists[i].index);
    memset(r, 0, sizeof *r);
}

bool rig_detect(const struct s3_src *src, const uint8_t *head, size_t n, struct detect_result *r)
{
    (void)src, (void)r;
    return n >= 4 && ld_u32(head, false) == RIG_MAGIC;
}
