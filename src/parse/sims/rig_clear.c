#include "parse/sims/rig_clear.h"

#include "parse/base/err.h"
#include "parse/base/rigset.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BONE_MIN 60 /* 10 floats, name length, opposing, parent, hash, flags */

uint32_t rig_clear_name_hash(const char *name, size_t len)
{
    return fnv1_lower32(name, len);
}

const char *rig_clear_variant_name(enum rig_clear_variant v)
{
    switch (v) {
    case RIG_CLEAR_TS3_MAJOR3:
        return "TS3 (major 3: skeleton name, no IK chains)";
    case RIG_CLEAR_TS4_MAJOR3:
        return "TS4 (major 3: IK chains, no skeleton name)";
    default:
        return "major 4 (TS3/TS4)";
    }
}

/* A forward reader over the whole source that remembers the first failure. */
struct seq {
    const struct s3_src *src;
    uint64_t pos;
    bool fail;
};

static uint32_t seq_u32(struct seq *s)
{
    uint32_t v = 0;
    if (!s->fail && src_u32(s->src, s->pos, false, &v))
        s->fail = true;
    s->pos += 4;
    return v;
}

static float seq_f32(struct seq *s)
{
    return f32_of_bits(seq_u32(s));
}

/* A length-prefixed string into *out; the length must be ≥ 0 and fit in what is left.
 * RANGE (past the end), FORMAT (a negative length), NOMEM, IO, with err. */
static enum s3_err seq_string(struct seq *s, char **out, uint32_t *len_out, uint64_t *pos_out, char *err,
                              const char *what)
{
    uint64_t at = s->pos;
    int32_t len = (int32_t)seq_u32(s);
    *out = NULL;
    if (s->fail)
        return s3_fail(S3_ERR_RANGE, err, RIG_CLEAR_ERR, "%s length at 0x%llx: past the end of the file", what,
                       (unsigned long long)at);
    if (len < 0 || !range_ok(s->pos, (uint64_t)len, s->src->size)) {
        s->fail = true;
        return s3_fail(len < 0 ? S3_ERR_FORMAT : S3_ERR_RANGE, err, RIG_CLEAR_ERR, "%s length %d at 0x%llx: %s", what,
                       len, (unsigned long long)at, len < 0 ? "negative" : "runs past the end of the file");
    }
    char *str = malloc((size_t)len + 1);
    if (!str || src_read(s->src, s->pos, str, (size_t)len)) {
        s->fail = true;
        free(str);
        return str ? s3_fail(S3_ERR_IO, err, RIG_CLEAR_ERR, "%s at 0x%llx: unreadable", what, (unsigned long long)at)
                   : s3_fail(S3_ERR_NOMEM, err, RIG_CLEAR_ERR, "out of memory");
    }
    str[len] = 0;
    if (pos_out)
        *pos_out = s->pos;
    s->pos += (uint64_t)len;
    *len_out = (uint32_t)len;
    *out = str;
    return S3_OK;
}

static enum s3_err parse_bones(struct seq *s, struct rig_clear *r)
{
    uint64_t at = s->pos;
    r->bone_count = (int32_t)seq_u32(s);
    if (s->fail)
        return s3_fail(S3_ERR_RANGE, r->bones_err, RIG_CLEAR_ERR, "bone count at 0x%llx: past the end of the file",
                       (unsigned long long)at);
    uint64_t room = s->src->size > s->pos ? s->src->size - s->pos : 0;
    if (r->bone_count < 0 || (uint64_t)r->bone_count > room / BONE_MIN)
        return s3_fail(r->bone_count < 0 ? S3_ERR_FORMAT : S3_ERR_RANGE, r->bones_err, RIG_CLEAR_ERR,
                       "bone count %d at 0x%llx: %s", r->bone_count, (unsigned long long)at,
                       r->bone_count < 0 ? "negative" : "more bones than the file can hold");
    r->bones = alloc_array((size_t)r->bone_count + 1, sizeof *r->bones);
    if (!r->bones)
        return s3_fail(S3_ERR_NOMEM, r->bones_err, RIG_CLEAR_ERR, "out of memory");
    for (int32_t i = 0; i < r->bone_count; i++) {
        struct rig_clear_bone *b = &r->bones[i];
        b->pos = s->pos;
        for (int k = 0; k < 3; k++)
            b->position[k] = seq_f32(s);
        for (int k = 0; k < 4; k++)
            b->orientation[k] = seq_f32(s);
        for (int k = 0; k < 3; k++)
            b->scale[k] = seq_f32(s);
        char err[RIG_CLEAR_ERR] = "";
        enum s3_err e = seq_string(s, &b->name, &b->name_len, NULL, err, "bone name");
        if (e)
            return s3_fail(e, r->bones_err, RIG_CLEAR_ERR, "bone %d: %.160s", i, err);
        b->opposing = (int32_t)seq_u32(s);
        b->parent = (int32_t)seq_u32(s);
        b->name_hash = seq_u32(s);
        b->flags = seq_u32(s);
        if (s->fail) {
            free(b->name);
            b->name = NULL;
            return s3_fail(S3_ERR_RANGE, r->bones_err, RIG_CLEAR_ERR, "bone %d at 0x%llx: truncated", i,
                           (unsigned long long)b->pos);
        }
        b->size = s->pos - b->pos;
        b->hash_ok = rig_clear_name_hash(b->name, b->name_len) == b->name_hash;
        r->nbones = (uint32_t)i + 1;
    }
    return S3_OK;
}

static enum s3_err parse_chains(struct seq *s, struct rig_clear *r, bool with_info)
{
    r->chains_present = true;
    r->chains_pos = s->pos;
    r->chain_count = (int32_t)seq_u32(s);
    if (s->fail)
        return s3_fail(S3_ERR_RANGE, r->chains_err, RIG_CLEAR_ERR, "IK chain count at 0x%llx: past the end of the file",
                       (unsigned long long)r->chains_pos);
    uint64_t room = s->src->size > s->pos ? s->src->size - s->pos : 0;
    uint64_t min = with_info ? 4 + 44 + 16 : 4 + 12;
    if (r->chain_count < 0 || (uint64_t)r->chain_count > room / min)
        return s3_fail(r->chain_count < 0 ? S3_ERR_FORMAT : S3_ERR_RANGE, r->chains_err, RIG_CLEAR_ERR,
                       "IK chain count %d at 0x%llx: %s", r->chain_count, (unsigned long long)r->chains_pos,
                       r->chain_count < 0 ? "negative" : "more than the file can hold");
    r->chains = alloc_array((size_t)r->chain_count + 1, sizeof *r->chains);
    if (!r->chains)
        return s3_fail(S3_ERR_NOMEM, r->chains_err, RIG_CLEAR_ERR, "out of memory");
    for (int32_t i = 0; i < r->chain_count; i++) {
        struct rig_clear_chain *c = &r->chains[i];
        c->pos = s->pos;
        int32_t n = (int32_t)seq_u32(s);
        room = s->src->size > s->pos ? s->src->size - s->pos : 0;
        if (s->fail || n < 0 || (uint64_t)n > room / 4)
            return s3_fail(n < 0 && !s->fail ? S3_ERR_FORMAT : S3_ERR_RANGE, r->chains_err, RIG_CLEAR_ERR,
                           "IK chain %d at 0x%llx: bone count %d does not fit", i, (unsigned long long)c->pos, n);
        c->bones = alloc_array((size_t)n + 1, sizeof *c->bones);
        if (!c->bones)
            return s3_fail(S3_ERR_NOMEM, r->chains_err, RIG_CLEAR_ERR, "out of memory");
        c->nbones = (uint32_t)n;
        for (int32_t k = 0; k < n; k++)
            c->bones[k] = (int32_t)seq_u32(s);
        c->has_info = c->has_slot_info = with_info;
        if (with_info)
            for (int k = 0; k < 11; k++)
                c->info_nodes[k] = (int32_t)seq_u32(s);
        c->pole = (int32_t)seq_u32(s);
        if (with_info)
            c->slot_info = (int32_t)seq_u32(s);
        c->slot_offset = (int32_t)seq_u32(s);
        c->root = (int32_t)seq_u32(s);
        if (s->fail)
            return s3_fail(S3_ERR_RANGE, r->chains_err, RIG_CLEAR_ERR, "IK chain %d at 0x%llx: truncated", i,
                           (unsigned long long)c->pos);
        c->size = s->pos - c->pos;
        r->nchains = (uint32_t)i + 1;
    }
    return S3_OK;
}

/* One layout: bones, then (optionally) the skeleton name, then (optionally) chains. */
static enum s3_err parse_layout(const struct s3_src *src, struct rig_clear *r, bool name, bool chains, bool info)
{
    struct seq s = {src, 8, false};
    enum s3_err e = parse_bones(&s, r);
    if (e)
        return e;
    if (name) {
        r->has_skeleton_name = true;
        e = seq_string(&s, &r->skeleton_name, &r->skeleton_name_len, &r->skeleton_name_pos, r->chains_err,
                       "skeleton name");
        if (e)
            return e;
    }
    if (chains && (e = parse_chains(&s, r, info)))
        return e;
    r->end = s.pos;
    return S3_OK;
}

static void reset(struct rig_clear *r)
{
    uint32_t major = r->major, minor = r->minor;
    rig_clear_free(r);
    r->major = major;
    r->minor = minor;
}

/* Warnings on the bones' values; NOMEM when the cycle check cannot have its memory (a
 * check skipped in silence would let a cycle through unsaid) or a warning is refused. */
static enum s3_err check_bones(struct rig_clear *r, struct diag *d)
{
    enum s3_err e = S3_OK;
    for (uint32_t i = 0; e == S3_OK && i < r->nbones; i++) {
        const struct rig_clear_bone *b = &r->bones[i];
        if (!b->hash_ok)
            e = diag_add(d, "bone %u '%s': name_hash 0x%08x, the name hashes to 0x%08x", i, b->name, b->name_hash,
                         rig_clear_name_hash(b->name, b->name_len));
        if (e == S3_OK && (b->parent < -1 || b->parent >= (int32_t)r->nbones))
            e = diag_add(d, "bone %u: parent %d is not a bone", i, b->parent);
        if (e == S3_OK && (b->opposing < 0 || b->opposing >= (int32_t)r->nbones))
            e = diag_add(d, "bone %u: opposing bone %d is not a bone", i, b->opposing);
    }
    if (e)
        return e;
    /* Parent cycles, in linear time: walk up from each bone marking the path; meeting a
     * bone of the current path is a cycle. */
    uint8_t *state = alloc_array(r->nbones, 1); /* 0 new, 1 on the path, 2 done */
    if (!state)
        return S3_ERR_NOMEM;
    for (uint32_t i = 0; e == S3_OK && i < r->nbones; i++) {
        int32_t p = (int32_t)i;
        while (p >= 0 && p < (int32_t)r->nbones && state[p] == 0) {
            state[p] = 1;
            p = r->bones[p].parent;
        }
        if (p >= 0 && p < (int32_t)r->nbones && state[p] == 1)
            e = diag_add(d, "bone %d: its parent chain is a cycle", p);
        for (p = (int32_t)i; p >= 0 && p < (int32_t)r->nbones && state[p] == 1; p = r->bones[p].parent)
            state[p] = 2;
    }
    free(state);
    return e;
}

enum s3_err rig_clear_parse(const struct s3_src *src, struct rig_clear *r, struct diag *d, char *err,
                            size_t errlen)
{
    memset(r, 0, sizeof *r);
    if (src_u32(src, 0, false, &r->major) || src_u32(src, 4, false, &r->minor))
        return s3_fail(S3_ERR_RANGE, err, errlen, "clear RIG: the file is shorter than its 8-byte version");
    /* a broken part is its .error (bones_err, chains_err); a refused allocation fails all */
    enum s3_err e;
    if (r->major == 4) {
        r->variant = RIG_CLEAR_MAJOR4;
        if ((e = parse_layout(src, r, true, true, true)) == S3_ERR_NOMEM)
            goto nomem;
        if (e == S3_OK && r->end < src->size &&
            diag_add(d, "%llu trailing bytes after the IK chains", (unsigned long long)(src->size - r->end)))
            goto nomem;
        if (check_bones(r, d))
            goto nomem;
        return S3_OK;
    }
    /* major 3: the game is not written down; the layout that ends exactly at the end of
     * the file is the right one */
    if ((e = parse_layout(src, r, true, false, false)) == S3_ERR_NOMEM)
        goto nomem;
    bool ts3 = e == S3_OK && r->end == src->size;
    reset(r);
    if ((e = parse_layout(src, r, false, true, false)) == S3_ERR_NOMEM)
        goto nomem;
    bool ts4 = e == S3_OK && r->end == src->size;
    if (!ts4 && !ts3) {
        reset(r);
        return s3_fail(S3_ERR_FORMAT, err, errlen,
                       "clear RIG major 3: neither the TS3 layout (skeleton name, no IK chains) nor the TS4 "
                       "layout (IK chains, no skeleton name) ends at the end of the file");
    }
    r->ambiguous = ts3 && ts4;
    if (!ts4) {
        reset(r);
        if (parse_layout(src, r, true, false, false) == S3_ERR_NOMEM)
            goto nomem;
        r->variant = RIG_CLEAR_TS3_MAJOR3;
    } else {
        r->variant = RIG_CLEAR_TS4_MAJOR3;
    }
    if (r->ambiguous && diag_add(d, "major 3: both layouts end at the end of the file; the TS4 reading was kept"))
        goto nomem;
    if (check_bones(r, d))
        goto nomem;
    return S3_OK;
nomem:
    reset(r);
    return s3_fail(S3_ERR_NOMEM, err, errlen, "clear RIG: out of memory");
}

void rig_clear_free(struct rig_clear *r)
{
    for (uint32_t i = 0; r->bones && i < r->nbones; i++)
        free(r->bones[i].name);
    free(r->bones);
    free(r->skeleton_name);
    for (uint32_t i = 0; r->chains && i < (uint32_t)(r->chain_count > 0 ? r->chain_count : 0); i++)
        free(r->chains[i].bones);
    free(r->chains);
    memset(r, 0, sizeof *r);
}

enum s3_err rig_clear_skeleton(const struct rig_clear *r, struct mdl_skeleton *s)
{
    memset(s, 0, sizeof *s);
    s->bone = alloc_array(r->nbones, sizeof *s->bone);
    if (!s->bone)
        return S3_ERR_NOMEM;
    s->nbones = r->nbones;
    bool ok = true;
    if (r->skeleton_name) {
        s->name = strdup(r->skeleton_name);
        s->name_len = s->name ? strlen(s->name) : 0;
        ok = s->name != NULL;
    }
    for (uint32_t i = 0; i < r->nbones; i++) {
        const struct rig_clear_bone *b = &r->bones[i];
        struct mdl_bone *o = &s->bone[i];
        o->name = strdup(b->name ? b->name : "");
        o->name_len = o->name ? strlen(o->name) : 0;
        ok = ok && o->name;
        o->parent = b->parent;
        memcpy(o->t, b->position, sizeof o->t);
        memcpy(o->r, b->orientation, sizeof o->r);
        memcpy(o->s, b->scale, sizeof o->s);
    }
    if (!ok)
        mdl_skeleton_free(s);
    return ok ? S3_OK : S3_ERR_NOMEM;
}

bool rig_clear_detect(const struct s3_src *src, const uint8_t *head, size_t n, struct detect_result *r)
{
    (void)src, (void)r;
    uint32_t major = n >= 8 ? ld_u32(head, false) : 0, minor = n >= 8 ? ld_u32(head + 4, false) : 0;
    return (major == 3 || major == 4) && (minor == 1 || minor == 2);
}
