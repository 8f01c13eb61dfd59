/* The wrapped Sims 3 RIG as a tree: header, Granny data, IK chains, bone lists. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs/views/gr2/view_gr2export.h"
#include "fs/views/gr2/view_gr2obj.h"
#include "fs/views/gr2/view_rig.h"
#include "parse/sims/rig.h"

struct rig_view {
    struct s3fs *fs;
    struct rig_wrapped r;
    struct gr2_view *granny; /* NULL when the Granny data is unreadable */
    char granny_err[256];
    /* the first skeleton's bones, for .bone links and .names files */
    bool bones_ok;
    char *bones_path; /* relative to the mount root */
    uint32_t nbones;
    char **bone_names;
};

static void free_bones(struct rig_view *v)
{
    for (uint32_t i = 0; v->bone_names && i < v->nbones; i++)
        free(v->bone_names[i]);
    free(v->bone_names);
    free(v->bones_path);
    v->bone_names = NULL;
    v->bones_path = NULL;
    v->nbones = 0;
    v->bones_ok = false;
}

static void rig_view_free(void *p)
{
    struct rig_view *v = p;
    rig_free_wrapped(&v->r);
    free_bones(v);
    free(v);
}

/* ---- bone references ---- */

static bool bone_valid(const struct rig_view *v, int32_t idx)
{
    return v->bones_ok && idx >= 0 && (uint32_t)idx < v->nbones;
}

/* NAME.bone -> UP/granny/root/.../Bones/IDX, when the index resolves. `up` climbs from
 * the directory holding the link to the mount root. */
static void add_bone_link(struct rig_view *v, uint32_t dir, const char *field, int32_t idx, const char *up)
{
    if (!bone_valid(v, idx) || !v->bones_path) /* no path: the tree does not show the bones */
        return;
    char name[64], *target = NULL;
    snprintf(name, sizeof name, "%s.bone", field);
    if (asprintf(&target, "%s%s/%" PRId32, up, v->bones_path, idx) < 0)
        return;
    tree_add_link(v->fs->tree, dir, name, target);
    free(target);
}

/* NAME.names, once the skeleton is known. */
static void add_names_file(struct rig_view *v, uint32_t dir, const char *field, const int32_t *idx, uint64_t n)
{
    if (v->bones_ok)
        add_bone_names(v->fs, dir, field, idx, n, v->bone_names, v->nbones);
}

/* S3_OK, or NOMEM when the warning is refused memory. */
static enum s3_err warn_index(struct rig_view *v, const char *where, uint32_t i, const char *field, int32_t idx)
{
    if (v->bones_ok && idx != -1 && !bone_valid(v, idx))
        return diag_add(&v->fs->diag, "%s %u %s: bone index %" PRId32 " is out of range (%u bones)", where, i, field,
                        idx, v->nbones);
    return S3_OK;
}

/* Every out-of-range bone index of the IK chains and lists, in /info: S3_OK, or NOMEM. */
static enum s3_err warn_indices(struct rig_view *v)
{
    enum s3_err w = S3_OK;
    for (uint32_t i = 0; w == S3_OK && v->r.ik_ok && i < v->r.ik_count; i++) {
        const struct rig_ik_entry *e = &v->r.entries[i];
        if (!e->ok)
            continue;
        int32_t f[] = {e->pole, e->pole_root, e->slot_info, e->slot_info_root, e->slot_offset, e->slot_offset_root,
                       e->info_root, e->root};
        static const char *const fn[] = {"pole", "pole_root", "slot_info", "slot_info_root", "slot_offset",
                                         "slot_offset_root", "info_root", "root"};
        for (int k = 0; w == S3_OK && k < 8; k++)
            w = warn_index(v, "IK chain", i, fn[k], f[k]);
        for (int k = 0; w == S3_OK && k < 10; k++)
            w = warn_index(v, "IK chain", i, "info_nodes", e->info_nodes[k]);
        for (uint32_t k = 0; w == S3_OK && k < e->length; k++) {
            w = warn_index(v, "IK chain", i, "link end", e->links[k].end);
            if (w == S3_OK)
                w = warn_index(v, "IK chain", i, "link start", e->links[k].start);
        }
    }
    for (int l = 0; w == S3_OK && l < 4; l++)
        for (uint32_t k = 0; w == S3_OK && v->r.lists[l].ok && k < v->r.lists[l].count; k++)
            w = warn_index(v, rig_list_names[l], k, "entry", v->r.lists[l].index[k]);
    return w;
}

/* Resolves the skeleton once and reports every out-of-range index in /info. A file
 * without usable bones is said in /info; NOMEM is returned (also for a warning refused
 * memory: the bones are let go, a retry resolves them again), the listing failing
 * rather than showing no bone links or an /info without the warning. */
static enum s3_err load_bones(struct rig_view *v)
{
    char why[200];
    if (v->bones_ok) /* resolved by a listing rolled back since for another refusal */
        return S3_OK;
    if (!v->granny)
        return diag_add(&v->fs->diag, "bone names unavailable: the Granny data is unreadable");
    enum s3_err e = gobj_first_skeleton(v->granny, &v->bones_path, &v->nbones, &v->bone_names, why, sizeof why);
    if (e == S3_ERR_NOMEM)
        return e;
    if (e)
        return diag_add(&v->fs->diag, "bone names unavailable: %s", why);
    v->bones_ok = true;
    e = warn_indices(v);
    if (e)
        free_bones(v);
    return e;
}

static enum s3_err populate_header(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    struct rig_view *v = ctx;
    for (int i = 0; i < RIG_HEADER_FIELDS; i++) {
        if (i == RIG_H_MAGIC)
            add_hex32(t, dir, rig_header_field_names[i], v->r.h[i], 0);
        else
            add_u32(t, dir, rig_header_field_names[i], v->r.h[i], 4 * (uint64_t)i);
    }
    return S3_OK;
}

struct entry_ctx {
    struct rig_view *v;
    struct rig_ik_entry *e;
};

static enum s3_err populate_link(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    struct entry_ctx *c = ctx;
    struct rig_ik_entry *e = c->e;
    uint64_t at = e->pos + RIG_IK_OFF_LINK_VALUES + 4ull * e->length + 4 + 8 * arg;
    add_i32(t, dir, "end", e->links[arg].end, at);
    add_i32(t, dir, "start", e->links[arg].start, at + 4);
    add_bone_link(c->v, dir, "end", e->links[arg].end, "../../../../");
    add_bone_link(c->v, dir, "start", e->links[arg].start, "../../../../");
    return S3_OK;
}

static enum s3_err populate_links(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    struct entry_ctx *c = ctx;
    struct rig_ik_entry *e = c->e;
    uint64_t base = e->pos + RIG_IK_OFF_LINK_VALUES + 4ull * e->length + 4;
    for (uint32_t k = 0; k < e->length; k++) {
        char name[16];
        snprintf(name, sizeof name, "%" PRIu32, k);
        uint32_t ino = tree_add_dir(t, dir, name, "rig.ik_link", populate_link, c, k);
        tree_set_span(t, ino, base + 8ull * k, 8);
    }
    return S3_OK;
}

static enum s3_err populate_entry(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    struct entry_ctx *c = ctx;
    struct rig_ik_entry *e = c->e;
    uint64_t p = e->pos;
    tree_add_range(t, dir, "raw.bin", "rig.ik_chain", p, e->size);
    add_u32(t, dir, "unknown_0", e->unknown_0, p + RIG_IK_OFF_UNKNOWN_0);
    add_u32(t, dir, "length", e->length, p + RIG_IK_OFF_LENGTH);
    tree_add_range(t, dir, "reserved.bin", "bytes", p + RIG_IK_OFF_RESERVED, 32);
    add_i32(t, dir, "pole", e->pole, p + RIG_IK_OFF_POLE);
    add_i32(t, dir, "pole_root", e->pole_root, p + RIG_IK_OFF_POLE_ROOT);
    add_i32(t, dir, "slot_info", e->slot_info, p + RIG_IK_OFF_SLOT_INFO);
    add_i32(t, dir, "slot_info_root", e->slot_info_root, p + RIG_IK_OFF_SLOT_INFO_ROOT);
    add_i32(t, dir, "slot_offset", e->slot_offset, p + RIG_IK_OFF_SLOT_OFFSET);
    add_i32(t, dir, "slot_offset_root", e->slot_offset_root, p + RIG_IK_OFF_SLOT_OFFSET_ROOT);
    add_hex32(t, dir, "info_node_flags", e->info_node_flags, p + RIG_IK_OFF_FLAGS);
    add_i32_list(c->v->fs, dir, "info_nodes", e->info_nodes, 10, p + RIG_IK_OFF_INFO_NODES);
    add_i32(t, dir, "info_root", e->info_root, p + RIG_IK_OFF_INFO_ROOT);
    add_u32_list(c->v->fs, dir, "link_values", e->link_values, e->length, p + RIG_IK_OFF_LINK_VALUES);
    add_i32(t, dir, "root", e->root, p + RIG_IK_OFF_LINK_VALUES + 4ull * e->length);
    uint32_t links = tree_add_dir(t, dir, "links", "rig.ik_links", populate_links, c, 0);
    tree_set_span(t, links, p + RIG_IK_OFF_LINK_VALUES + 4ull * e->length + 4, 8ull * e->length);
    static const char *const fields[] = {"pole", "pole_root", "slot_info", "slot_info_root", "slot_offset",
                                         "slot_offset_root", "info_root", "root"};
    int32_t idx[] = {e->pole, e->pole_root, e->slot_info, e->slot_info_root, e->slot_offset, e->slot_offset_root,
                     e->info_root, e->root};
    for (int k = 0; k < 8; k++)
        add_bone_link(c->v, dir, fields[k], idx[k], "../../");
    add_names_file(c->v, dir, "info_nodes", e->info_nodes, 10);
    return S3_OK;
}

static enum s3_err populate_ik_chains(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    struct rig_view *v = ctx;
    for (uint32_t i = 0; i < v->r.ik_count; i++) {
        struct rig_ik_entry *e = &v->r.entries[i];
        char name[16];
        snprintf(name, sizeof name, "%" PRIu32, i);
        if (!e->ok) {
            add_error(t, dir, name, e->err);
            continue;
        }
        struct entry_ctx *c = tree_alloc(t, sizeof *c);
        if (!c)
            continue;
        *c = (struct entry_ctx){v, e};
        uint32_t ino = tree_add_dir(t, dir, name, "rig.ik_chain", populate_entry, c, 0);
        tree_set_span(t, ino, e->pos, e->size);
    }
    return S3_OK;
}

static void add_lists(struct rig_view *v, uint32_t dir)
{
    struct tree *t = v->fs->tree;
    for (int i = 0; i < 4; i++) {
        const struct rig_list *l = &v->r.lists[i];
        if (!l->ok) {
            add_error(t, dir, rig_list_names[i], l->err);
            continue;
        }
        uint32_t ino = add_i32_list(v->fs, dir, rig_list_names[i], l->index, l->count, l->pos + 4);
        tree_set_span(t, ino, l->pos, 4 + 4ull * l->count);
        add_names_file(v, dir, rig_list_names[i], l->index, l->count);
    }
}

static enum s3_err populate_rig_root(struct tree *t, uint32_t dir, void *ctx, uint64_t arg);

/* -o rw: a root list's field is its indices (i32, after its count, which stays). */
static bool list_value(const struct rig_view *v, const char *name, struct view_value *out)
{
    for (int i = 0; i < 4; i++) {
        const struct rig_list *l = &v->r.lists[i];
        if (l->ok && l->count > 0 && strcmp(name, rig_list_names[i]) == 0) {
            *out = (struct view_value){l->pos + 4, 4ull * l->count, FIELD_I32, false, 0, NULL, 0};
            return true;
        }
    }
    return false;
}

/* -o rw: the wrapper's header words, each IK chain's words, lists and links, and the root
 * lists' indices are fields of the file as published (little-endian: docs/formats/rig.md);
 * .names files and what the Granny view shows are not this hook's. */
static bool rig_declared_value(struct s3fs *fs, uint32_t ino, struct view_value *out, void *ctx)
{
    (void)ctx; /* one hook for every wrapped RIG of the mount: the directory says whose */
    struct tree *t = fs->tree;
    uint32_t dir = tree_parent(t, ino);
    const struct rig_view *root = tree_dir_ctx(t, dir, populate_rig_root);
    if (root)
        return list_value(root, tree_name(t, ino), out);
    bool ours = tree_dir_ctx(t, dir, populate_header) || tree_dir_ctx(t, dir, populate_entry) ||
                tree_dir_ctx(t, dir, populate_link);
    return ours && view_value_as_published(t, ino, false, out);
}

static enum s3_err populate_rig_root(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    struct rig_view *v = ctx;
    enum s3_err e = load_bones(v);
    if (e)
        return e;
    add_info_and_unparsed(v->fs, dir);
    tree_add_range(t, dir, "header.bin", "rig.header", 0, RIG_HEADER_SIZE);
    uint32_t h = tree_add_dir(t, dir, "header", "rig.header", populate_header, v, 0);
    tree_set_span(t, h, 0, RIG_HEADER_SIZE);
    if (v->granny)
        gr2_view_add(v->granny, dir);
    else
        add_error(t, dir, "granny", v->granny_err);
    if (v->r.ik_ok) {
        uint32_t ik = tree_add_dir(t, dir, "ik_chains", "rig.ik_chains", populate_ik_chains, v, 0);
        tree_set_span(t, ik, v->r.ik_pos, 4 + 4ull * v->r.ik_count);
    } else {
        add_error(t, dir, "ik_chains", v->r.ik_err);
    }
    add_lists(v, dir);
    return S3_OK;
}

struct block {
    const char *name;
    uint64_t off, len;
};

/* Top-level blocks must not overlap; a file where they do is reported, not refused:
 * S3_OK, or NOMEM when a warning is refused memory. */
static enum s3_err check_overlaps(struct rig_view *v, const struct block *b, int n)
{
    for (int i = 0; i < n; i++)
        for (int k = i + 1; k < n; k++)
            if (b[i].len && b[k].len && b[i].off < b[k].off + b[k].len && b[k].off < b[i].off + b[i].len &&
                diag_add(&v->fs->diag, "blocks overlap: %s [0x%" PRIx64 ", 0x%" PRIx64 ") and %s [0x%" PRIx64
                         ", 0x%" PRIx64 ")", b[i].name, b[i].off, b[i].off + b[i].len, b[k].name, b[k].off,
                         b[k].off + b[k].len))
                return S3_ERR_NOMEM;
    return S3_OK;
}

static uint64_t ik_block_end(const struct rig_wrapped *r)
{
    uint64_t end = r->ik_pos + 4 + 4ull * r->ik_count;
    for (uint32_t i = 0; i < r->ik_count; i++)
        if (r->entries[i].ok && r->entries[i].pos + r->entries[i].size > end)
            end = r->entries[i].pos + r->entries[i].size;
    return end;
}

/* The facts and covered bytes; NOMEM when /info's live lines cannot be hooked. */
static enum s3_err describe(struct rig_view *v)
{
    struct s3fs *fs = v->fs;
    struct rig_wrapped *r = &v->r;
    struct block blocks[8]; /* header, granny, ik_chains, four lists */
    int nb = 0;
    cover_add(&fs->cover, 0, RIG_HEADER_SIZE);
    blocks[nb++] = (struct block){"header", 0, RIG_HEADER_SIZE};
    if (v->granny) {
        if (gr2_view_describe(v->granny))
            return S3_ERR_NOMEM;
        blocks[nb++] = (struct block){"granny", r->granny_pos, gr2_view_total_size(v->granny)};
    }
    if (r->ik_ok) {
        sb_printf(&fs->facts, "ik_chains: %" PRIu32 "\n", r->ik_count);
        sb_printf(&fs->facts, "ik_entry_offsets: from %s%s\n",
                  r->entry_base == RIG_BASE_FIELD ? "each offset's own field" : "the table start",
                  r->entry_base_fits ? "" : " (neither reading fits)");
        cover_add(&fs->cover, r->ik_pos, 4 + 4ull * r->ik_count);
        for (uint32_t i = 0; i < r->ik_count; i++)
            if (r->entries[i].ok)
                cover_add(&fs->cover, r->entries[i].pos, r->entries[i].size);
        blocks[nb++] = (struct block){"ik_chains", r->ik_pos, ik_block_end(r) - r->ik_pos};
    }
    for (int i = 0; i < 4; i++) {
        const struct rig_list *l = &r->lists[i];
        if (!l->ok)
            continue;
        sb_printf(&fs->facts, "%s: %" PRIu32 "\n", rig_list_names[i], l->count);
        cover_add(&fs->cover, l->pos, 4 + 4ull * l->count);
        blocks[nb++] = (struct block){rig_list_names[i], l->pos, 4 + 4ull * l->count};
    }
    return check_overlaps(v, blocks, nb);
}

/* -o rw: the wrapper's words that follow a new Granny data length (rig.h's plan). */
static enum s3_err plan_granny(const uint8_t *head, uint64_t pos, uint64_t old_len, uint64_t new_len,
                               struct view_resize_plan *out, char *why, size_t whylen)
{
    struct rig_granny_resize r;
    enum s3_err e = rig_plan_granny_resize(head, pos, old_len, new_len, &r, why, whylen);
    if (e != S3_OK)
        return e;
    *out = (struct view_resize_plan){r.from, r.to, r.new_len, r.nwords, {0}, {0}};
    for (uint32_t i = 0; i < r.nwords; i++) {
        out->word_at[i] = r.word_at[i];
        out->word[i] = r.word[i];
    }
    return S3_OK;
}

/* -o rw: granny.gr2 may be replaced at another length, the RIG being the mounted file or
 * a package resource's whole data (then rw makes the resource's new data, and the
 * package's index follows it). Asked of the RIG's root (where its Granny view is shown: a
 * compressed section stored raw goes into new Granny bytes), the answer is granny.gr2's. */
static bool granny_resize(struct s3fs *fs, uint32_t ino, struct view_resize *out, void *ctx)
{
    (void)ctx; /* one hook for every wrapped RIG of the mount: the root says whose */
    struct tree *t = fs->tree;
    const struct rig_view *v = tree_dir_ctx(t, tree_kind(t, ino) == NODE_DIR ? ino : tree_parent(t, ino),
                                            populate_rig_root);
    if (!v)
        return false;
    /* called under the tree lock: a lookup only in a published root (one that takes no lock) */
    if (!v->granny ||
        (ino == v->fs->root && (!tree_is_populated(t, ino) || tree_lookup(t, ino, "granny.gr2", &ino))) ||
        tree_parent(t, ino) != v->fs->root || strcmp(tree_name(t, ino), "granny.gr2") != 0)
        return false;
    *out = (struct view_resize){v->r.granny_pos, tree_size(t, ino), RIG_HEADER_SIZE, plan_granny};
    return true;
}

enum s3_err rig_view_open(struct s3fs *fs, char *err, size_t errlen)
{
    struct rig_view *v = calloc(1, sizeof *v);
    if (!v)
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    v->fs = fs;
    enum s3_err e = rig_parse_wrapped(&fs->src.src, &v->r, &fs->diag, err, errlen);
    if (e != S3_OK) {
        free(v);
        return e;
    }
    if (tree_on_free(fs->tree, rig_view_free, v)) {
        rig_view_free(v);
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    }
    sb_printf(&fs->facts, "encoding: wrapped granny\n");
    e = gr2_view_new(fs, v->r.granny_pos, &v->granny, v->granny_err, sizeof v->granny_err);
    if (e == S3_ERR_NOMEM) /* a broken Granny part is said; a refused allocation fails the open */
        return s3_fail(e, err, errlen, "out of memory");
    if (e != S3_OK && diag_add(&fs->diag, "Granny data: %s", v->granny_err))
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    if (e == S3_OK && (gobj_attach(v->granny) || gr2_add_skeletons_hook(v->granny)))
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    if (rig_check_granny_extent(&v->r, v->granny ? gr2_view_total_size(v->granny) : 0, &fs->diag) ||
        describe(v) || view_add_resize_hook_shared(fs, granny_resize) ||
        view_add_value_hook_shared(fs, rig_declared_value))
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    return view_root(fs, "rig.wrapped", populate_rig_root, v);
}
