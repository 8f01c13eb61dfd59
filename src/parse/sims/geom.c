#include "parse/sims/geom.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/base/err.h"
#include "parse/base/rigset.h"

#define TAG_GEOM 0x4D4F4547u /* "GEOM" read as a little-endian u32 */
#define TAG_MTNF 0x464E544Du /* "MTNF" */

/* Names the notes list for shaders and material parameters (geom.md); their hashes are
 * computed, so a misspelt name cannot give a wrong hash. */
static const char *const known_names[] = {
    "simskin",   "DiffuseMap", "NormalMap",    "SpecularMap", "AlphaMap", "Ambient", "Emission",
    "Shininess", "Transparency", "reflectivity", "index_of_refraction",
};

const char *geom_param_name(uint32_t hash)
{
    for (size_t i = 0; i < sizeof known_names / sizeof known_names[0]; i++)
        if (fnv1_lower32(known_names[i], strlen(known_names[i])) == hash)
            return known_names[i];
    return NULL;
}

const char *geom_usage_name(uint32_t usage)
{
    static const char *const n[] = {NULL,      "position", "normal", "uv",        "bones",    "weights",
                                    "tangent", "tag",      "binormal", "weight_map", "vertex_id"};
    return usage < sizeof n / sizeof n[0] ? n[usage] : NULL;
}

const char *geom_seam_name(unsigned seam)
{
    static const char *const n[] = {"ankles", "tail", "ears", "neck", "waist", "adult-female waist",
                                    "adult-male waist"};
    return seam < sizeof n / sizeof n[0] ? n[seam] : NULL;
}

/* ---- detection ---- */

/* The RCOL counts at 0x0C (external keys) and 0x10 (chunks) and the header's size:
 * whether they fit the file (a test, used by detection too). */
static bool rcol_counts(const struct s3_src *src, uint32_t *nexternal, uint32_t *nchunks, uint64_t *hdr)
{
    if (src_u32(src, 0x0C, false, nexternal) || src_u32(src, 0x10, false, nchunks))
        return false;
    if (*nchunks == 0 || *nchunks > src->size / 24 || *nexternal > src->size / 16)
        return false;
    *hdr = 0x14 + 24ull * *nchunks + 16ull * *nexternal;
    return *hdr <= src->size;
}

static bool tag_at(const struct s3_src *src, uint64_t off, uint32_t tag)
{
    uint32_t v;
    return src_u32(src, off, false, &v) == 0 && v == tag;
}

bool geom_detect(const struct s3_src *src, const uint8_t *head, size_t n, struct detect_result *r)
{
    (void)head, (void)n, (void)r;
    uint32_t ne, nc, stored;
    uint64_t hdr;
    if (!rcol_counts(src, &ne, &nc, &hdr) || src_u32(src, 0x14 + 16ull * nc + 16ull * ne, false, &stored))
        return false;
    return tag_at(src, stored, TAG_GEOM) || tag_at(src, hdr, TAG_GEOM);
}

/* ---- the RCOL wrapper ---- */

static void read_key_itg(struct cursor *c, struct geom_key *k)
{
    k->instance = cur_u64(c);
    k->type = cur_u32(c);
    k->group = cur_u32(c);
}

/* The header, then where the GEOM chunk lies: for one chunk, from the end of the header
 * to the end of the resource (as s4pi reads it), the stored position and length checked
 * against that; for more, chunk 0 at its stored position. Either reading is taken when
 * only it finds the tag. */
static enum s3_err parse_rcol(const struct s3_src *src, struct geom *g, struct diag *d, char *err, size_t errlen)
{
    struct geom_rcol *r = &g->rcol;
    uint64_t hdr;
    if (!rcol_counts(src, &r->nexternal, &r->nchunks, &hdr))
        return s3_fail(S3_ERR_RANGE, err, errlen, "RCOL: the chunk and key counts do not fit the file");
    enum s3_err e = S3_OK;
    uint8_t *b = malloc(hdr);
    if (!b || src_read(src, 0, b, hdr)) {
        e = b ? s3_fail(S3_ERR_IO, err, errlen, "RCOL: the header cannot be read")
              : s3_fail(S3_ERR_NOMEM, err, errlen, "RCOL header: out of memory");
        goto fail;
    }
    struct cursor c;
    cur_init(&c, b, hdr, false);
    r->version = cur_u32(&c);
    r->public_chunks = cur_u32(&c);
    r->unused = cur_u32(&c);
    cur_skip(&c, 8);
    r->chunk_key = calloc(r->nchunks, sizeof *r->chunk_key);
    r->external_key = alloc_array(r->nexternal, sizeof *r->external_key);
    r->chunk_pos = calloc(r->nchunks, sizeof *r->chunk_pos);
    r->chunk_len = calloc(r->nchunks, sizeof *r->chunk_len);
    if (!r->chunk_key || !r->external_key || !r->chunk_pos || !r->chunk_len) {
        e = s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
        goto fail;
    }
    for (uint32_t i = 0; i < r->nchunks; i++)
        read_key_itg(&c, &r->chunk_key[i]);
    for (uint32_t i = 0; i < r->nexternal; i++)
        read_key_itg(&c, &r->external_key[i]);
    r->index_pos = c.pos;
    for (uint32_t i = 0; i < r->nchunks; i++) {
        r->chunk_pos[i] = cur_u32(&c);
        r->chunk_len[i] = cur_u32(&c);
    }
    free(b);
    r->size = hdr;
    uint64_t computed = hdr, stored = r->chunk_pos[0];
    bool one = r->nchunks == 1;
    bool at_computed = tag_at(src, computed, TAG_GEOM), at_stored = tag_at(src, stored, TAG_GEOM);
    bool use_stored = one ? !at_computed && at_stored : at_stored || !at_computed;
    g->pos = use_stored ? stored : computed;
    /* a warning refused memory fails the parse (NOMEM), never a GEOM without it */
    if (stored != computed &&
        diag_add(d, "RCOL: chunk 0's stored position is %" PRIu64 ", the header ends at %" PRIu64 "; read at %" PRIu64,
                 stored, computed, g->pos))
        return s3_fail(S3_ERR_NOMEM, err, errlen, "RCOL: out of memory");
    uint64_t to_end = src->size - g->pos, len = r->chunk_len[0];
    if (one || !range_ok(g->pos, len, src->size)) {
        if (len != to_end &&
            diag_add(d, "RCOL: chunk 0's stored length is %" PRIu64 ", %" PRIu64 " bytes follow its position; read to "
                        "the end", len, to_end))
            return s3_fail(S3_ERR_NOMEM, err, errlen, "RCOL: out of memory");
        len = to_end;
    }
    g->size = len;
    if (!tag_at(src, g->pos, TAG_GEOM))
        return s3_fail(range_ok(g->pos, 4, src->size) ? S3_ERR_FORMAT : S3_ERR_RANGE, err, errlen,
                       "RCOL: chunk 0 at %" PRIu64 " is no GEOM chunk", g->pos);
    return S3_OK;
fail:
    free(b);
    return e;
}

/* ---- the GEOM chunk ---- */

/* Bytes left in the chunk after the cursor. */
static uint64_t left(const struct cursor *c)
{
    return cur_left(c);
}

/* Absolute position of the cursor. */
static uint64_t at(const struct geom *g, const struct cursor *c)
{
    return g->pos + c->pos;
}

/* The material block (a broken one is its m->err, and c->err when its size runs past the
 * chunk); NOMEM only when its parameters cannot have their memory. */
static enum s3_err parse_mtnf(struct geom *g, struct cursor *c, struct diag *d)
{
    struct geom_mtnf *m = &g->mtnf;
    uint64_t size_pos = at(g, c);
    m->size = cur_u32(c);
    m->pos = at(g, c);
    if (c->err || m->size > left(c)) {
        snprintf(m->err, sizeof m->err, "material at %" PRIu64 ": its size %" PRIu32 " runs past the chunk", size_pos,
                 m->size);
        c->err = true;
        return S3_OK;
    }
    struct cursor mc;
    cur_init(&mc, c->p + c->pos, m->size, false);
    cur_skip(c, m->size);
    m->tag = cur_u32(&mc);
    m->unknown = cur_u32(&mc);
    m->data_size = cur_u32(&mc);
    m->nparams = cur_u32(&mc);
    if (mc.err) {
        snprintf(m->err, sizeof m->err, "material at %" PRIu64 ": %" PRIu32 " bytes hold no MTNF header", m->pos,
                 m->size);
        m->nparams = 0;
        return S3_OK;
    }
    if (m->tag != TAG_MTNF && diag_add(d, "material at %" PRIu64 ": tag 0x%08" PRIx32 ", not MTNF", m->pos, m->tag))
        return S3_ERR_NOMEM;
    if (m->nparams > cur_left(&mc) / 16) {
        snprintf(m->err, sizeof m->err, "material at %" PRIu64 ": %" PRIu32 " parameters do not fit its %" PRIu32
                 " bytes", m->pos, m->nparams, m->size);
        m->nparams = 0;
        return S3_OK;
    }
    if (16 + 16ull * m->nparams + m->data_size != m->size &&
        diag_add(d, "material: 16 + 16 x %" PRIu32 " parameters + %" PRIu32 " data bytes is not its size %" PRIu32,
                 m->nparams, m->data_size, m->size))
        return S3_ERR_NOMEM;
    m->param = alloc_array(m->nparams, sizeof *m->param);
    if (!m->param) { /* not a broken part: the whole parse fails */
        m->nparams = 0;
        return S3_ERR_NOMEM;
    }
    for (uint32_t i = 0; i < m->nparams; i++) {
        struct geom_param *p = &m->param[i];
        p->name_hash = cur_u32(&mc);
        p->type = cur_u32(&mc);
        p->count = cur_u32(&mc);
        p->data_off = cur_u32(&mc);
        p->data_ok = range_ok(p->data_off, 4ull * p->count, m->size);
        p->data_pos = m->pos + p->data_off;
        if (!p->data_ok &&
            diag_add(d, "material parameter %" PRIu32 ": %" PRIu32 " words at offset %" PRIu32 " run past the block", i,
                     p->count, p->data_off))
            return S3_ERR_NOMEM; /* m->param is the geom's: geom_free frees it */
    }
    return S3_OK;
}

/* Whether a declaration's (usage, type, size) is one this reader knows (geom.md). */
static bool decl_check(struct geom_decl *x)
{
    const char *what = NULL;
    bool floats = x->type == GEOM_DT_FLOAT, bytes = x->type == GEOM_DT_BYTE || x->type == GEOM_DT_COLOR;
    if (x->type < GEOM_DT_FLOAT || x->type > GEOM_DT_U32)
        what = "an unknown data type";
    else if (x->size == 0 || ((floats || x->type == GEOM_DT_U32) && x->size % 4))
        what = "a size that does not fit its data type";
    else
        switch (x->usage) {
        case GEOM_POSITION:
        case GEOM_NORMAL:
        case GEOM_TANGENT:
            what = floats && x->size == 12 ? NULL : "not float x3 (type 1, 12 bytes)";
            break;
        case GEOM_UV:
            what = floats && x->size == 8 ? NULL : "not float x2 (type 1, 8 bytes)";
            break;
        case GEOM_BONES:
        case GEOM_TAG:
            what = bytes && x->size == 4 ? NULL : "not 4 bytes (type 2 or 3)";
            break;
        case GEOM_WEIGHTS:
            what = (floats && x->size == 16) || (bytes && x->size == 4) ? NULL
                                                                          : "not float x4 (16 bytes) or 4 bytes";
            break;
        case GEOM_VERTEX_ID:
            what = x->type == GEOM_DT_U32 && x->size == 4 ? NULL : "not a u32 (type 4, 4 bytes)";
            break;
        case GEOM_BINORMAL:
        case GEOM_WEIGHT_MAP:
            break; /* never seen: shown by their type */
        default:
            what = "an unknown usage";
        }
    if (what)
        snprintf(x->err, sizeof x->err, "usage %" PRIu32 ", type %" PRIu32 ", %u bytes: %s", x->usage, x->type,
                 x->size, what);
    x->ok = what == NULL;
    return x->ok;
}

static enum s3_err parse_decls(struct geom *g, struct cursor *c, struct diag *d)
{
    g->fields_pos = at(g, c);
    g->merge_group = cur_u32(c);
    g->sort_order = cur_u32(c);
    g->nverts = cur_u32(c);
    g->ndecls = cur_u32(c);
    g->decl_pos = at(g, c);
    if (c->err || g->ndecls > left(c) / 9) {
        snprintf(g->decl_err, sizeof g->decl_err, "%s at %" PRIu64 "%s", c->err ? "counts" : "declarations",
                 g->fields_pos, c->err ? ": past the end of the chunk" : ": more than the chunk holds");
        g->ndecls = 0;
        return S3_ERR_RANGE;
    }
    g->decl = alloc_array(g->ndecls, sizeof *g->decl);
    if (!g->decl) /* not a broken part: the whole parse fails */
        return s3_fail(S3_ERR_NOMEM, g->decl_err, sizeof g->decl_err, "out of memory");
    int uv = 0;
    uint32_t bad = 0;
    for (uint32_t i = 0; i < g->ndecls; i++) {
        struct geom_decl *x = &g->decl[i];
        x->usage = cur_u32(c);
        x->type = cur_u32(c);
        x->size = cur_u8(c);
        x->offset = g->stride;
        x->uv_set = x->usage == GEOM_UV ? uv++ : -1;
        g->stride += x->size;
        g->decl_empty = g->decl_empty || x->size == 0;
        if (!decl_check(x))
            bad++;
    }
    if (bad)
        snprintf(g->decl_err, sizeof g->decl_err, "%" PRIu32 " of %" PRIu32 " declarations have a layout this reader "
                 "does not know (vertex_format.csv shows them; their bytes are shown raw)", bad, g->ndecls);
    if (uv > 3)
        return diag_add(d, "%d UV sets (at most 3 seen)", uv);
    return S3_OK;
}

static enum s3_err parse_vertices(struct geom *g, struct cursor *c)
{
    g->vert_pos = at(g, c);
    uint64_t bytes = (uint64_t)g->nverts * g->stride;
    if (g->nverts && g->stride == 0)
        return g->vert_reason = s3_fail(S3_ERR_FORMAT, g->vert_err, sizeof g->vert_err,
                                        "%" PRIu32 " vertices of 0 bytes (no declaration)", g->nverts);
    if (bytes > left(c))
        return g->vert_reason = s3_fail(S3_ERR_RANGE, g->vert_err, sizeof g->vert_err,
                                        "%" PRIu32 " vertices of %" PRIu32 " bytes at %" PRIu64 " run past the chunk "
                                        "(%" PRIu64 " bytes left)", g->nverts, g->stride, g->vert_pos, left(c));
    g->vert = c->p + c->pos;
    cur_skip(c, (size_t)bytes);
    g->verts_ok = true;
    return S3_OK;
}

uint32_t geom_triangles(const struct geom *g)
{
    return g->indices_ok ? g->index_count / 3 : 0;
}

static void check_triangles(struct geom *g)
{
    if (g->index_count % 3)
        snprintf(g->tri_err, sizeof g->tri_err, "%" PRIu32 " indices are not whole triangles (%" PRIu32 " left over)",
                 g->index_count, g->index_count % 3);
    for (uint32_t i = 0; i < g->index_count; i++)
        if (g->index[i] >= g->nverts) {
            size_t n = strlen(g->tri_err);
            snprintf(g->tri_err + n, sizeof g->tri_err - n, "%sindex %" PRIu32 " (triangle %" PRIu32 ") is %" PRIu32
                     ", past the %" PRIu32 " vertices", n ? "; " : "", i, i / 3, g->index[i], g->nverts);
            break;
        }
}

static enum s3_err parse_indices(struct geom *g, struct cursor *c, struct diag *d)
{
    g->ibuf_pos = at(g, c);
    g->index_buffers = cur_u32(c);
    g->index_size = cur_u8(c);
    g->index_count = cur_u32(c);
    g->index_pos = at(g, c);
    if (c->err)
        return g->index_reason = s3_fail(S3_ERR_RANGE, g->index_err, sizeof g->index_err,
                                         "index header at %" PRIu64 ": past the end of the chunk", g->ibuf_pos);
    if (g->index_buffers != 1 &&
        diag_add(d, "index-buffer count %" PRIu32 " (1 seen); read as one buffer", g->index_buffers))
        return S3_ERR_NOMEM; /* the whole parse fails */
    if (g->index_size != 1 && g->index_size != 2 && g->index_size != 4)
        return g->index_reason = s3_fail(S3_ERR_FORMAT, g->index_err, sizeof g->index_err,
                                         "%u bytes per index (1, 2 or 4)", g->index_size);
    if ((uint64_t)g->index_count * g->index_size > left(c))
        return g->index_reason = s3_fail(S3_ERR_RANGE, g->index_err, sizeof g->index_err,
                                         "%" PRIu32 " indices of %u bytes at %" PRIu64 " run past the chunk",
                                         g->index_count, g->index_size, g->index_pos);
    g->index = alloc_array(g->index_count, sizeof *g->index);
    if (!g->index) /* not a broken part: the whole parse fails */
        return g->index_reason = s3_fail(S3_ERR_NOMEM, g->index_err, sizeof g->index_err, "out of memory");
    for (uint32_t i = 0; i < g->index_count; i++)
        g->index[i] = g->index_size == 1 ? cur_u8(c) : g->index_size == 2 ? cur_u16(c) : cur_u32(c);
    g->indices_ok = true;
    check_triangles(g);
    return S3_OK;
}

/* A block's count, checked to leave room for count records of at least min bytes. */
static enum s3_err block_start(struct geom *g, struct cursor *c, struct geom_block *b, const char *what, uint64_t min)
{
    b->present = true;
    b->pos = at(g, c);
    b->count = cur_u32(c);
    if (c->err)
        return s3_fail(S3_ERR_RANGE, b->err, sizeof b->err, "%s count at %" PRIu64 ": past the end of the chunk", what,
                       b->pos);
    if (b->count > left(c) / min) {
        snprintf(b->err, sizeof b->err, "%s at %" PRIu64 ": %" PRIu32 " records of %" PRIu64 "%s bytes do not fit the "
                 "%" PRIu64 " bytes left", what, b->pos, b->count, min, min == 8 ? " or more" : "", left(c));
        b->count = 0;
        return S3_ERR_RANGE;
    }
    return S3_OK;
}

static void block_end(struct geom *g, struct cursor *c, struct geom_block *b)
{
    b->size = at(g, c) - b->pos;
}

/* A block's count (block_start) and its records' array into *out: count elements of elem
 * bytes (one at least), zeroed. RANGE when the count is refused, NOMEM; b->err says why. */
static enum s3_err block_records(struct geom *g, struct cursor *c, struct geom_block *b, const char *what,
                                 uint64_t min, size_t elem, void **out)
{
    *out = NULL;
    enum s3_err e = block_start(g, c, b, what, min);
    if (e)
        return e;
    *out = alloc_array(b->count, elem);
    return *out ? S3_OK : s3_fail(S3_ERR_NOMEM, b->err, sizeof b->err, "out of memory");
}

static enum s3_err parse_uv_stitches(struct geom *g, struct cursor *c)
{
    struct geom_block *b = &g->uv_stitches;
    enum s3_err e = block_records(g, c, b, "UV stitches", 8, sizeof *g->uv_stitch, (void **)&g->uv_stitch);
    if (e)
        return e;
    for (uint32_t i = 0; i < b->count; i++) {
        struct geom_uv_stitch *s = &g->uv_stitch[i];
        s->pos = at(g, c);
        s->vertex = cur_i32(c);
        s->count = cur_u32(c);
        if (c->err || s->count > left(c) / 8) {
            snprintf(b->err, sizeof b->err, "UV stitch %" PRIu32 " at %" PRIu64 ": %" PRIu32 " pairs run past the chunk",
                     i, s->pos, s->count);
            b->count = i;
            return S3_ERR_RANGE;
        }
        s->uv = alloc_array(s->count, 2 * sizeof *s->uv);
        if (!s->uv) {
            b->count = i;
            return s3_fail(S3_ERR_NOMEM, b->err, sizeof b->err, "out of memory");
        }
        for (uint32_t k = 0; k < 2 * s->count; k++)
            s->uv[k] = cur_f32(c);
    }
    block_end(g, c, b);
    return S3_OK;
}

static enum s3_err parse_seams(struct geom *g, struct cursor *c)
{
    struct geom_block *b = &g->seams;
    enum s3_err e = block_records(g, c, b, "seam stitches", 6, sizeof *g->seam, (void **)&g->seam);
    if (e)
        return e;
    for (uint32_t i = 0; i < b->count; i++) {
        g->seam[i].vertex = cur_u32(c);
        g->seam[i].word = cur_u16(c);
    }
    block_end(g, c, b);
    return S3_OK;
}

static void read_floats(struct cursor *c, float *f, int n)
{
    for (int i = 0; i < n; i++)
        f[i] = cur_f32(c);
}

static enum s3_err parse_slot_rays(struct geom *g, struct cursor *c)
{
    struct geom_block *b = &g->slot_rays;
    bool hashes = g->version >= 14;
    g->ray_size = hashes ? 66 : 63;
    enum s3_err e = block_records(g, c, b, "slot rays", g->ray_size, sizeof *g->ray, (void **)&g->ray);
    if (e)
        return e;
    for (uint32_t i = 0; i < b->count; i++) {
        struct geom_slot_ray *r = &g->ray[i];
        r->slot = cur_u32(c);
        for (int k = 0; k < 3; k++)
            r->tri[k] = cur_u16(c);
        read_floats(c, r->bary, 2);
        read_floats(c, &r->distance, 1);
        read_floats(c, r->offset, 3);
        read_floats(c, r->position, 3);
        read_floats(c, r->rotation, 4);
        r->pivot = hashes ? cur_u32(c) : cur_u8(c);
    }
    block_end(g, c, b);
    return S3_OK;
}

static enum s3_err parse_u32s(struct geom *g, struct cursor *c, struct geom_block *b, const char *what, uint32_t **out)
{
    enum s3_err e = block_records(g, c, b, what, 4, sizeof **out, (void **)out);
    if (e)
        return e;
    for (uint32_t i = 0; i < b->count; i++)
        (*out)[i] = cur_u32(c);
    block_end(g, c, b);
    return S3_OK;
}

static enum s3_err parse_states(struct geom *g, struct cursor *c)
{
    struct geom_block *b = &g->states;
    enum s3_err e = block_records(g, c, b, "geometry states", 20, sizeof *g->state, (void **)&g->state);
    if (e)
        return e;
    for (uint32_t i = 0; i < b->count; i++) {
        struct geom_state *s = &g->state[i];
        s->state = cur_u32(c);
        s->start = cur_i32(c);
        s->min_vertex = cur_i32(c);
        s->vertex_count = cur_i32(c);
        s->primitive_count = cur_i32(c);
    }
    block_end(g, c, b);
    return S3_OK;
}

/* The tail before the TGI list, in the version's order (geom.md). */
static enum s3_err parse_tail(struct geom *g, struct cursor *c)
{
    if (g->sims3) {
        g->skin.present = true;
        g->skin.pos = at(g, c);
        g->skin.size = 4;
        g->skin_index = cur_i32(c);
        if (c->err)
            return s3_fail(S3_ERR_RANGE, g->skin.err, sizeof g->skin.err,
                           "skin-controller index at %" PRIu64 ": past the end of the chunk", g->skin.pos);
    } else {
        enum s3_err e = parse_uv_stitches(g, c);
        if (e || (g->version >= 13 && (e = parse_seams(g, c))) || (e = parse_slot_rays(g, c)))
            return e;
    }
    uint32_t *hashes = NULL;
    enum s3_err e = parse_u32s(g, c, &g->bones, "bone hashes", &hashes);
    g->bone_hash = hashes;
    if (e || (g->version >= 15 && (e = parse_states(g, c))))
        return e;
    g->tail_end = c->pos;
    return S3_OK;
}

/* Where the tail's blocks read whole end (chunk-relative): the end of the last one before
 * the broken one. */
static uint64_t seq_end_of_tail(const struct geom *g)
{
    const struct geom_block *order[] = {&g->skin, &g->uv_stitches, &g->seams, &g->slot_rays, &g->bones, &g->states};
    uint64_t end = g->index_pos + (uint64_t)g->index_count * g->index_size - g->pos;
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        if (!order[i]->present)
            continue;
        if (order[i]->err[0] || order[i]->size == 0)
            break;
        end = order[i]->pos + order[i]->size - g->pos;
    }
    return end;
}

/* The TGI list, found by its offset (so it is read even when a part before it is broken). */
/* The TGI list (a broken one is its b->err); NOMEM only when its records cannot have their
 * memory, which fails the whole parse. */
static enum s3_err parse_tgis(struct geom *g, struct diag *d)
{
    struct geom_block *b = &g->tgis;
    b->present = true;
    uint64_t off = 12 + (uint64_t)g->tgi_offset;
    if (off > g->size) {
        snprintf(b->err, sizeof b->err, "TGI-list offset %" PRIu32 " (at %" PRIu64 ") is past the chunk's %" PRIu64
                 " bytes", g->tgi_offset, g->pos + 8, g->size);
        return S3_OK;
    }
    struct cursor c;
    cur_init(&c, g->buf, g->size, false);
    cur_skip(&c, (size_t)off);
    enum s3_err e = block_records(g, &c, b, "TGI list", 16, sizeof *g->tgi, (void **)&g->tgi);
    if (e) {
        b->count = 0; /* a refused count is 0 already */
        return e == S3_ERR_NOMEM ? e : S3_OK;
    }
    for (uint32_t i = 0; i < b->count; i++) {
        g->tgi[i].type = cur_u32(&c);
        g->tgi[i].group = cur_u32(&c);
        g->tgi[i].instance = cur_u64(&c);
    }
    block_end(g, &c, b);
    if (b->size != g->tgi_size &&
        diag_add(d, "TGI list: %" PRIu64 " bytes (4 + 16 x %" PRIu32 "), the header says %" PRIu32, b->size, b->count,
                 g->tgi_size))
        return S3_ERR_NOMEM;
    if (c.pos != g->size)
        return diag_add(d, "%" PRIu64 " bytes after the TGI list (at %" PRIu64 ")", g->size - c.pos, g->pos + c.pos);
    return S3_OK;
}

static enum s3_err parse_all(const struct s3_src *src, uint64_t max_bytes, struct geom *g, struct diag *d,
                             char *err, size_t errlen)
{
    g->has_rcol = true;
    enum s3_err e = parse_rcol(src, g, d, err, errlen);
    if (e != S3_OK)
        return e;
    if (g->size > max_bytes)
        return s3_fail(S3_ERR_LIMIT, err, errlen, "GEOM chunk of %" PRIu64 " bytes: over the limit (max_unpacked_mb)",
                       g->size);
    g->buf = alloc_array(g->size, 1);
    if (!g->buf)
        return s3_fail(S3_ERR_NOMEM, err, errlen, "GEOM chunk at %" PRIu64 ": out of memory", g->pos);
    if (src_read(src, g->pos, g->buf, g->size))
        return s3_fail(S3_ERR_IO, err, errlen, "GEOM chunk at %" PRIu64 ": cannot be read", g->pos);
    struct cursor c;
    cur_init(&c, g->buf, g->size, false);
    cur_skip(&c, 4);
    g->version = cur_u32(&c);
    g->tgi_offset = cur_u32(&c);
    g->tgi_size = cur_u32(&c);
    g->shader = cur_u32(&c);
    if (c.err)
        return s3_fail(S3_ERR_RANGE, err, errlen, "GEOM header at %" PRIu64 ": the chunk's %" PRIu64
                       " bytes are fewer than 20", g->pos, g->size);
    g->sims3 = g->version < 12;
    if (g->version != 5 && (g->version < 12 || g->version > 15) &&
        diag_add(d, "GEOM version %" PRIu32 " (5, 12 to 15 known); read as version %s", g->version,
                 g->sims3 ? "5" : "15"))
        return s3_fail(S3_ERR_NOMEM, err, errlen, "GEOM header: out of memory");
    if ((e = parse_tgis(g, d)))
        return s3_fail(e, err, errlen, "GEOM TGI list: out of memory");
    g->seq_end = c.pos;
    if (g->shader) {
        g->has_material = true;
        if ((e = parse_mtnf(g, &c, d)))
            return s3_fail(e, err, errlen, "GEOM material: out of memory");
        if (c.err)
            return S3_OK;
        g->seq_end = c.pos;
    }
    /* each part in turn; a broken one ends the sequence (its bytes stay unparsed), a
     * refused allocation fails the whole parse */
    if ((e = parse_decls(g, &c, d)) == S3_ERR_NOMEM)
        return s3_fail(e, err, errlen, "GEOM declarations: out of memory");
    if (e)
        return S3_OK;
    g->seq_end = c.pos;
    if (parse_vertices(g, &c) != S3_OK)
        return S3_OK;
    g->seq_end = c.pos;
    e = parse_indices(g, &c, d);
    if (e == S3_ERR_NOMEM)
        return s3_fail(e, err, errlen, "GEOM indices: out of memory");
    if (e)
        return S3_OK;
    g->seq_end = c.pos;
    if ((e = parse_tail(g, &c)) == S3_ERR_NOMEM)
        return s3_fail(e, err, errlen, "GEOM tail: out of memory");
    g->seq_end = e ? seq_end_of_tail(g) : c.pos;
    if (e == S3_OK && g->tail_end != 12 + (uint64_t)g->tgi_offset &&
        diag_add(d, "the tail ends at %" PRIu64 ", the TGI-list offset says %" PRIu64, g->pos + g->tail_end,
                 g->pos + 12 + (uint64_t)g->tgi_offset))
        return s3_fail(S3_ERR_NOMEM, err, errlen, "GEOM tail: out of memory");
    return S3_OK;
}

enum s3_err geom_parse(const struct s3_src *src, uint64_t max_bytes, struct geom *g, struct diag *d, char *err,
                       size_t errlen)
{
    memset(g, 0, sizeof *g);
    enum s3_err e = parse_all(src, max_bytes, g, d, err, errlen);
    if (e != S3_OK)
        geom_free(g);
    return e;
}

void geom_free(struct geom *g)
{
    free(g->rcol.chunk_key);
    free(g->rcol.external_key);
    free(g->rcol.chunk_pos);
    free(g->rcol.chunk_len);
    free(g->mtnf.param);
    free(g->decl);
    free(g->index);
    for (uint32_t i = 0; g->uv_stitch && i < g->uv_stitches.count; i++)
        free(g->uv_stitch[i].uv);
    free(g->uv_stitch);
    free(g->seam);
    free(g->ray);
    free(g->bone_hash);
    free(g->state);
    free(g->tgi);
    free(g->buf);
    memset(g, 0, sizeof *g);
}

/* ---- vertex values ---- */

unsigned geom_elements(const struct geom_decl *d)
{
    return d->type == GEOM_DT_FLOAT || d->type == GEOM_DT_U32 ? d->size / 4u : d->size;
}

const struct geom_decl *geom_find(const struct geom *g, uint32_t usage, int set)
{
    for (uint32_t i = 0; i < g->ndecls; i++) {
        const struct geom_decl *x = &g->decl[i];
        if (x->ok && x->usage == usage && (usage != GEOM_UV || x->uv_set == set))
            return x;
    }
    return NULL;
}

float geom_value(const struct geom *g, const struct geom_decl *d, uint32_t i, unsigned k)
{
    const uint8_t *p = g->vert + (size_t)i * g->stride + d->offset;
    if (d->type == GEOM_DT_FLOAT || d->type == GEOM_DT_U32) {
        uint32_t u = ld_u32(p + 4 * k, false);
        return d->type == GEOM_DT_FLOAT ? f32_of_bits(u) : (float)u;
    }
    return p[k];
}
