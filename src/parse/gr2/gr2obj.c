#include "parse/gr2/gr2obj.h"
#include "parse/base/err.h"
#include "parse/base/nameset.h"

#include <math.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int gr2_pointer_size(const struct gr2_space *s)
{
    return s->g->pointer_bits / 8;
}

const char *gr2_member_type_name(uint32_t type)
{
    static const char *const names[GR2_MEMBER_TYPES] = {
        "End",          "Inline",          "Reference",     "ReferenceToArray", "ArrayOfReferences",
        "VariantReference", "Unused6",     "ReferenceToVariantArray", "String", "Transform",
        "Real32",       "Int8",            "UInt8",         "BinormalInt8",     "NormalUInt8",
        "Int16",        "UInt16",          "BinormalInt16", "NormalUInt16",     "Int32",
        "UInt32",       "Real16",          "EmptyReference"};
    return type < GR2_MEMBER_TYPES ? names[type] : "Unknown";
}

bool gr2_is_scalar(uint32_t type)
{
    return type >= GR2_REAL32 && type <= GR2_REAL16;
}

uint32_t gr2_elem_size(const struct gr2_space *s, uint32_t type)
{
    uint32_t p = (uint32_t)gr2_pointer_size(s);
    switch (type) {
    case GR2_REFERENCE:
    case GR2_STRING:
    case GR2_EMPTY_REF:
        return p;
    case GR2_REF_TO_ARRAY:
    case GR2_ARRAY_OF_REFS:
        return 4 + p;
    case GR2_VARIANT_REF:
        return 2 * p;
    case GR2_REF_TO_VARIANT_ARRAY:
        return 2 * p + 4;
    case GR2_TRANSFORM:
        return GR2_TRANSFORM_SIZE;
    case GR2_REAL32:
    case GR2_INT32:
    case GR2_UINT32:
        return 4;
    case GR2_INT16:
    case GR2_UINT16:
    case GR2_BINORMAL_INT16:
    case GR2_NORMAL_UINT16:
    case GR2_REAL16:
        return 2;
    case GR2_INT8:
    case GR2_UINT8:
    case GR2_BINORMAL_INT8:
    case GR2_NORMAL_UINT8:
        return 1;
    default:
        return 0;
    }
}

/* A lazy section's bytes, fetched when not there yet, and recorded as used: from here to
 * the next settle point the caller may hold pointers into them. */
static void use_section(const struct gr2_space *s, uint32_t sec)
{
    struct gr2_lazy *l = s->lazy;
    if (!s->data[sec] && !s->why[sec])
        l->fetch(s, sec);
    if (s->data[sec] && l->state[sec] != GR2_SEC_USED) {
        l->state[sec] = GR2_SEC_USED;
        l->used[l->nused++] = sec;
    }
}

void gr2_space_settle(const struct gr2_space *s)
{
    struct gr2_lazy *l = s->lazy;
    if (!l)
        return;
    for (uint32_t k = 0; k < l->nused; k++)
        l->state[l->used[k]] = GR2_SEC_IDLE;
    l->nused = 0;
    if (l->settled)
        l->settled(s);
}

enum s3_err gr2_bytes_at(const struct gr2_space *s, uint32_t sec, uint64_t off, uint64_t len, const uint8_t **p,
                         const char **why)
{
    *p = NULL;
    if (sec >= s->g->nsections) {
        *why = "reference to a section that does not exist";
        return S3_ERR_FORMAT;
    }
    if (s->lazy)
        use_section(s, sec);
    if (!s->data[sec]) {
        *why = s->why[sec] ? s->why[sec] : "section bytes unavailable";
        return s->reason && s->reason[sec] ? s->reason[sec] : S3_ERR_IO;
    }
    if (off > s->size[sec] || len > s->size[sec] - off) {
        *why = "reference past the end of its section";
        return S3_ERR_RANGE;
    }
    *p = s->data[sec] + off;
    return S3_OK;
}

const uint8_t *gr2_bytes(const struct gr2_space *s, uint32_t sec, uint64_t off, uint64_t len, const char **why)
{
    const uint8_t *p;
    gr2_bytes_at(s, sec, off, len, &p, why);
    return p;
}

uint32_t gr2_u32_at(const struct gr2_space *s, const uint8_t *p)
{
    return ld_u32(p, s->g->be);
}

float gr2_f32_at(const struct gr2_space *s, const uint8_t *p)
{
    return ld_f32(p, s->g->be);
}

enum s3_err gr2_pointer(const struct gr2_space *s, uint32_t sec, uint32_t off, struct gr2_ref *to, bool *points,
                        const char **why)
{
    const uint8_t *slot;
    *points = false;
    enum s3_err e = gr2_bytes_at(s, sec, off, (uint64_t)gr2_pointer_size(s), &slot, why);
    if (e)
        return e;
    const struct gr2_fixup *f = s->fixups[sec];
    size_t lo = 0, hi = s->nfixups[sec];
    while (lo < hi) { /* fixups are sorted by from_offset */
        size_t mid = (lo + hi) / 2;
        if (f[mid].from_offset == off) {
            to->section = f[mid].to_section;
            to->offset = f[mid].to_offset;
            if (to->section >= s->g->nsections) {
                *why = "fixup to a section that does not exist";
                return S3_ERR_FORMAT;
            }
            *points = true;
            return S3_OK;
        }
        if (f[mid].from_offset < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return S3_OK;
}

enum s3_err gr2_string_at(const struct gr2_space *s, struct gr2_ref at, const char **str, size_t *len,
                          const char **why)
{
    const uint8_t *p;
    enum s3_err e = gr2_bytes_at(s, at.section, at.offset, 0, &p, why);
    if (e)
        return e;
    size_t room = s->size[at.section] - at.offset;
    const uint8_t *nul = memchr(p, 0, room);
    if (!nul) {
        *why = "string without a terminating NUL before the end of its section";
        return S3_ERR_RANGE;
    }
    *str = (const char *)p;
    *len = (size_t)(nul - p);
    return S3_OK;
}

/* ---- member definitions ---- */

static uint32_t member_def_size(const struct gr2_space *s)
{
    return gr2_pointer_size(s) == 8 ? 44 : 32;
}

static struct gr2_type *type_new(struct gr2_ref at)
{
    struct gr2_type *t = calloc(1, sizeof *t);
    if (t)
        t->at = at;
    return t;
}

/* ---- the registry's index: types by where they are defined ----
 *
 * Open addressing over a power-of-two table at most half full, so a lookup looks at a
 * couple of slots whatever the number of types (a file may define thousands: a linear
 * search made each decode quadratic in them). */

static size_t type_slot_home(struct gr2_ref at, size_t cap)
{
    uint64_t h = ((uint64_t)at.section << 32 | at.offset) * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 32) & (cap - 1);
}

static const struct gr2_type *type_lookup(struct gr2_types *reg, struct gr2_ref at)
{
    reg->lookups++;
    if (!reg->cap_index)
        return NULL;
    for (size_t k = type_slot_home(at, reg->cap_index);; k = (k + 1) & (reg->cap_index - 1)) {
        reg->probes++;
        struct gr2_type *t = reg->index[k];
        if (!t)
            return NULL;
        if (t->at.section == at.section && t->at.offset == at.offset)
            return t;
    }
}

static void index_put(struct gr2_type **index, size_t cap, struct gr2_type *t)
{
    size_t k = type_slot_home(t->at, cap);
    while (index[k])
        k = (k + 1) & (cap - 1);
    index[k] = t;
}

/* Registers t (its list and its index). */
static enum s3_err type_register(struct gr2_types *reg, struct gr2_type *t)
{
    if (reg->n == reg->cap) {
        size_t cap = reg->cap ? reg->cap * 2 : 16;
        struct gr2_type **nt = realloc(reg->t, cap * sizeof *nt);
        if (!nt)
            return S3_ERR_NOMEM;
        reg->t = nt;
        reg->cap = cap;
    }
    if (2 * (reg->n + 1) > reg->cap_index) {
        size_t cap = reg->cap_index ? reg->cap_index * 2 : 32;
        struct gr2_type **ni = alloc_array(cap, sizeof *ni);
        if (!ni)
            return S3_ERR_NOMEM;
        for (size_t i = 0; i < reg->n; i++)
            index_put(ni, cap, reg->t[i]);
        free(reg->index);
        reg->index = ni;
        reg->cap_index = cap;
    }
    reg->t[reg->n++] = t;
    index_put(reg->index, reg->cap_index, t);
    return S3_OK;
}

static enum s3_err type_fail(struct gr2_type *t, enum s3_err e, const char *fmt, const char *a)
{
    char msg[sizeof t->err];
    snprintf(msg, sizeof msg, fmt, a); /* a may be t->err itself */
    memcpy(t->err, msg, sizeof msg);
    t->ok = false;
    return e;
}

static enum s3_err read_member(const struct gr2_space *s, struct gr2_ref at, uint32_t i, struct gr2_member *m,
                               const char **why)
{
    uint32_t p = (uint32_t)gr2_pointer_size(s), base = at.offset + i * member_def_size(s);
    const uint8_t *b;
    enum s3_err e = gr2_bytes_at(s, at.section, base, member_def_size(s), &b, why);
    if (e)
        return e;
    m->type = gr2_u32_at(s, b);
    if (m->type == GR2_END)
        return S3_OK;
    struct gr2_ref name;
    bool named;
    if ((e = gr2_pointer(s, at.section, base + 4, &name, &named, why)))
        return e;
    m->name = NULL;
    m->name_len = 0;
    if (named && (e = gr2_string_at(s, name, &m->name, &m->name_len, why)))
        return e;
    if ((e = gr2_pointer(s, at.section, base + 4 + p, &m->ref_type, &m->has_ref_type, why)))
        return e;
    m->array_width = (int32_t)gr2_u32_at(s, b + 4 + 2 * p);
    return S3_OK;
}

static enum s3_err type_size_of(struct gr2_types *reg, const struct gr2_space *s, struct gr2_ref at, int depth,
                                uint32_t *size, const char **why);

/* Fills member sizes and offsets; Inline members need their struct's size. */
static enum s3_err layout_members(struct gr2_types *reg, const struct gr2_space *s, struct gr2_type *t, int depth)
{
    uint64_t off = 0;
    for (uint32_t i = 0; i < t->nmembers; i++) {
        struct gr2_member *m = &t->m[i];
        uint32_t elem;
        const char *why = NULL;
        if (m->type == GR2_INLINE) {
            if (!m->has_ref_type)
                return type_fail(t, S3_ERR_FORMAT, "Inline member '%s' without a type", m->name ? m->name : "");
            enum s3_err e = type_size_of(reg, s, m->ref_type, depth + 1, &elem, &why);
            if (e)
                return type_fail(t, e, "%s", why);
        } else {
            elem = gr2_elem_size(s, m->type);
            if (elem == 0) {
                char msg[64];
                snprintf(msg, sizeof msg, "unknown member type %u", m->type);
                return type_fail(t, S3_ERR_FORMAT, "%s", msg);
            }
        }
        if (m->array_width < 0 || m->array_width > (1 << 24))
            return type_fail(t, S3_ERR_FORMAT, "absurd array width in member '%s'", m->name ? m->name : "");
        uint64_t size = (uint64_t)elem * (uint64_t)(m->array_width > 0 ? m->array_width : 1);
        if (size > UINT32_MAX || off + size > UINT32_MAX)
            return type_fail(t, S3_ERR_LIMIT, "struct larger than 4 GiB at member '%s'", m->name ? m->name : "");
        m->offset = (uint32_t)off;
        m->size = (uint32_t)size;
        off += size;
    }
    t->size = (uint32_t)off;
    return S3_OK;
}

/* Inline members' types were decoded (and decided) by layout_members before this. */
static void decide_flat(struct gr2_types *reg, struct gr2_type *t)
{
    uint64_t cols = 0;
    t->flat = false;
    for (uint32_t i = 0; i < t->nmembers; i++) {
        const struct gr2_member *m = &t->m[i];
        uint64_t width = m->array_width > 0 ? (uint64_t)m->array_width : 1, per;
        if (gr2_is_scalar(m->type)) {
            per = 1;
        } else if (m->type == GR2_TRANSFORM) {
            per = 16;
        } else if (m->type == GR2_INLINE) {
            const struct gr2_type *in = type_lookup(reg, m->ref_type);
            if (!in || !in->ok || !in->flat)
                return;
            per = in->ncolumns;
        } else {
            return;
        }
        cols += per * width;
        if (cols > GR2_MAX_COLUMNS)
            return;
    }
    t->flat = t->nmembers > 0;
    t->ncolumns = (uint32_t)cols;
}

/* Copies the member names into the type (the type outlives the pin of the bytes). */
static enum s3_err own_names(struct gr2_type *t)
{
    size_t total = 1;
    for (uint32_t i = 0; i < t->nmembers; i++)
        total += t->m[i].name ? t->m[i].name_len + 1 : 0;
    t->names = malloc(total);
    if (!t->names)
        return S3_ERR_NOMEM;
    char *p = t->names;
    for (uint32_t i = 0; i < t->nmembers; i++) {
        if (!t->m[i].name)
            continue;
        memcpy(p, t->m[i].name, t->m[i].name_len);
        p[t->m[i].name_len] = 0;
        t->m[i].name = p;
        p += t->m[i].name_len + 1;
    }
    return S3_OK;
}

/* Frees what an earlier, failed decoding of t left (a decoding that ran out of memory is
 * done again in place: the type keeps its place in the registry). */
static void type_clear(struct gr2_type *t)
{
    if (t->safe_name)
        for (uint32_t k = 0; k < t->nmembers; k++)
            free(t->safe_name[k]);
    free(t->safe_name);
    free(t->names);
    free(t->m);
    struct gr2_ref at = t->at;
    memset(t, 0, sizeof *t);
    t->at = at;
}

/* Reads t's member definitions (up to End) into t->m. S3_OK, or the reason with t->err. */
static enum s3_err read_members(const struct gr2_space *s, struct gr2_type *t)
{
    struct gr2_member tmp[64], *m = tmp;
    uint32_t cap = 64, n = 0;
    enum s3_err e = S3_OK;
    for (;; n++) {
        if (n == GR2_MAX_MEMBERS) {
            snprintf(t->err, sizeof t->err, "member definitions without an End entry (more than %d)",
                     GR2_MAX_MEMBERS);
            e = S3_ERR_FORMAT;
            goto out;
        }
        if (n == cap) {
            struct gr2_member *bigger = alloc_array(2 * (size_t)cap, sizeof *bigger);
            if (!bigger) {
                e = S3_ERR_NOMEM;
                goto out;
            }
            memcpy(bigger, m, n * sizeof *m);
            if (m != tmp)
                free(m);
            m = bigger;
            cap *= 2;
        }
        const char *why;
        if ((e = read_member(s, t->at, n, &m[n], &why)) != S3_OK) {
            snprintf(t->err, sizeof t->err, "member definition %u: %s", n, why);
            goto out;
        }
        if (m[n].type == GR2_END)
            break;
    }
    t->m = alloc_array(n, sizeof *t->m);
    if (!t->m) {
        e = S3_ERR_NOMEM;
        goto out;
    }
    memcpy(t->m, m, n * sizeof *m);
    t->nmembers = n;
out:
    if (m != tmp)
        free(m);
    return e;
}

/* Decodes the type at t->at into t (registered already, so that a cycle through Inline
 * members finds it still failing, "refers to itself", instead of a half-computed size). */
static void decode_into(struct gr2_types *reg, const struct gr2_space *s, struct gr2_type *t, int depth)
{
    t->ok = false;
    t->decoding = true;
    t->round = reg->round;
    t->reason = S3_ERR_FORMAT;
    snprintf(t->err, sizeof t->err, "type definition refers to itself through Inline members");
    enum s3_err e;
    if (depth > GR2_MAX_TYPE_DEPTH) {
        snprintf(t->err, sizeof t->err, "Inline types nested deeper than %d", GR2_MAX_TYPE_DEPTH);
        e = S3_ERR_FORMAT;
    } else if ((e = read_members(s, t)) == S3_OK && (e = own_names(t)) == S3_OK &&
               (e = layout_members(reg, s, t, depth)) == S3_OK) {
        t->safe_name = gr2_safe_names_counted(t->m, t->nmembers, &reg->name_compares);
        e = t->safe_name ? S3_OK : S3_ERR_NOMEM;
        if (e == S3_OK) {
            t->ok = true;
            t->err[0] = 0;
            decide_flat(reg, t);
        }
    }
    if (e == S3_ERR_NOMEM)
        snprintf(t->err, sizeof t->err, "out of memory");
    t->reason = e;
    t->decoding = false;
}

/* Kept for the request: bad bytes fail the same way every time; out of memory, or bytes
 * that could not be had (IO), only in the request that met them. */
static bool type_failed_for_now(const struct gr2_type *t)
{
    return t->reason == S3_ERR_NOMEM || t->reason == S3_ERR_IO;
}

static struct gr2_type *decode_type(struct gr2_types *reg, const struct gr2_space *s, struct gr2_ref at, int depth)
{
    struct gr2_type *t = type_new(at);
    if (!t)
        return NULL;
    if (type_register(reg, t) != S3_OK) { /* registered before decoding members: cycles see it */
        free(t);
        return NULL;
    }
    decode_into(reg, s, t, depth);
    return t;
}

/* The type at `at`, decoded when first asked for, and again when its last decoding failed
 * for now in an earlier request (gr2_types_new_request) and is not under way. */
static const struct gr2_type *type_at(struct gr2_types *reg, const struct gr2_space *s, struct gr2_ref at,
                                      int depth)
{
    struct gr2_type *t = (struct gr2_type *)type_lookup(reg, at);
    if (!t)
        return decode_type(reg, s, at, depth);
    if (!t->ok && !t->decoding && t->round != reg->round && type_failed_for_now(t)) {
        type_clear(t);
        decode_into(reg, s, t, depth);
    }
    return t;
}

/* The size of the struct defined at `at`: a type that failed is bad bytes (its message
 * says which), one that could not be made is out of memory. */
static enum s3_err type_size_of(struct gr2_types *reg, const struct gr2_space *s, struct gr2_ref at, int depth,
                                uint32_t *size, const char **why)
{
    const struct gr2_type *t = type_at(reg, s, at, depth);
    *size = 0;
    if (!t) {
        *why = "out of memory";
        return S3_ERR_NOMEM;
    }
    if (!t->ok) {
        *why = t->err;
        return t->reason;
    }
    *size = t->size;
    return S3_OK;
}

const struct gr2_type *gr2_type_get(struct gr2_types *reg, const struct gr2_space *s, struct gr2_ref at)
{
    return type_at(reg, s, at, 0);
}

void gr2_types_new_request(struct gr2_types *reg)
{
    reg->round++;
}

void gr2_types_free(struct gr2_types *reg)
{
    for (size_t i = 0; i < reg->n; i++) {
        type_clear(reg->t[i]);
        free(reg->t[i]);
    }
    free(reg->t);
    free(reg->index);
    memset(reg, 0, sizeof *reg);
}

const struct gr2_member *gr2_find_member(const struct gr2_type *t, const char *name)
{
    size_t len = strlen(name);
    for (uint32_t i = 0; t->ok && i < t->nmembers; i++)
        if (t->m[i].name && t->m[i].name_len == len && memcmp(t->m[i].name, name, len) == 0)
            return &t->m[i];
    return NULL;
}

char **gr2_safe_names_counted(const struct gr2_member *m, uint32_t n, uint64_t *compared)
{
    char **out = alloc_array(n, sizeof *out);
    struct nameset taken = {0}; /* the earlier members' names: one probe per try */
    uint32_t made = 0;
    for (; out && made < n; made++) {
        size_t len = m[made].name ? m[made].name_len : 0;
        if (len > 200)
            len = 200;
        char base[256];
        size_t k = 0;
        for (size_t j = 0; j < len; j++) {
            unsigned char c = (unsigned char)m[made].name[j];
            base[k++] = (c == '/' || c < 0x20) ? '_' : (char)c;
        }
        base[k] = 0;
        if (k == 0)
            snprintf(base, sizeof base, "_member%u", made);
        else if (strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
            snprintf(base + k, sizeof base - k, "_");
        char name[280]; /* unique among the earlier members: base, else base~2, base~3, ... */
        if (nameset_unique(&taken, base, name, sizeof name) || !(out[made] = strdup(name)))
            break;
    }
    if (compared)
        *compared += taken.compared;
    nameset_free(&taken);
    if (out && made < n) { /* out of memory */
        for (uint32_t p = 0; p < made; p++)
            free(out[p]);
        free(out);
        out = NULL;
    }
    return out;
}

char **gr2_safe_names(const struct gr2_member *m, uint32_t n)
{
    return gr2_safe_names_counted(m, n, NULL);
}

/* ---- tables ---- */

struct colbuf {
    struct gr2_column *c;
    uint32_t n;
    size_t cap;
};

static enum s3_err col_add(struct colbuf *b, const char *name, uint32_t type, uint32_t offset, bool hex)
{
    if (grow_array(&b->c, &b->cap, (size_t)b->n + 1, sizeof *b->c))
        return S3_ERR_NOMEM;
    char *copy = strdup(name);
    if (!copy)
        return S3_ERR_NOMEM;
    b->c[b->n++] = (struct gr2_column){copy, type, offset, hex};
    return S3_OK;
}

/* A CSV header cell must not hold a comma, a quote or a line break. */
static void csv_safe(char *s)
{
    for (; *s; s++)
        if (*s == ',' || *s == '"' || *s == '\n' || *s == '\r')
            *s = '_';
}

static enum s3_err add_columns(struct gr2_types *reg, const struct gr2_type *t, const char *prefix, uint32_t base,
                               int depth, struct colbuf *b);

/* The columns of one element of member m (at `at` within the row): name is its cell name. */
static enum s3_err add_member_columns(struct gr2_types *reg, const struct gr2_member *m, char *name, uint32_t at,
                                      int depth, struct colbuf *b)
{
    csv_safe(name);
    if (gr2_is_scalar(m->type))
        return col_add(b, name, m->type, at, false);
    char *sub = NULL;
    enum s3_err e = S3_OK;
    if (m->type == GR2_TRANSFORM) {
        static const char *const part[] = {"position", "orientation", "scale_shear"};
        static const int nval[] = {3, 4, 9};
        if (asprintf(&sub, "%s.flags", name) < 0)
            return S3_ERR_NOMEM;
        e = col_add(b, sub, GR2_UINT32, at, true);
        free(sub);
        uint32_t o = at + 4;
        for (int p = 0; p < 3 && !e; p++)
            for (int j = 0; j < nval[p] && !e; j++, o += 4) {
                if (asprintf(&sub, "%s.%s[%d]", name, part[p], j) < 0)
                    return S3_ERR_NOMEM;
                e = col_add(b, sub, GR2_REAL32, o, false);
                free(sub);
            }
        return e;
    }
    /* Inline: flat, by decide_flat, so its type is in the registry */
    const struct gr2_type *in = type_lookup(reg, m->ref_type);
    if (!in)
        return S3_ERR_FORMAT;
    if (asprintf(&sub, "%s.", name) < 0)
        return S3_ERR_NOMEM;
    e = add_columns(reg, in, sub, at, depth + 1, b);
    free(sub);
    return e;
}

static enum s3_err add_columns(struct gr2_types *reg, const struct gr2_type *t, const char *prefix, uint32_t base,
                               int depth, struct colbuf *b)
{
    if (!t->ok)
        return S3_ERR_FORMAT;
    if (!t->flat)
        return S3_ERR_UNSUPPORTED;
    if (depth > GR2_MAX_TYPE_DEPTH)
        return S3_ERR_LIMIT;
    for (uint32_t i = 0; i < t->nmembers; i++) {
        const struct gr2_member *m = &t->m[i];
        uint32_t width = m->array_width > 0 ? (uint32_t)m->array_width : 1, esize = m->size / width;
        for (uint32_t k = 0; k < width; k++) {
            char *name = NULL;
            int n = m->array_width > 0 ? asprintf(&name, "%s%s[%u]", prefix, t->safe_name[i], k)
                                       : asprintf(&name, "%s%s", prefix, t->safe_name[i]);
            if (n < 0)
                return S3_ERR_NOMEM;
            enum s3_err e = add_member_columns(reg, m, name, base + m->offset + k * esize, depth, b);
            free(name);
            if (e)
                return e;
        }
    }
    return S3_OK;
}

enum s3_err gr2_type_columns(struct gr2_types *reg, const struct gr2_space *s, const struct gr2_type *t,
                             struct gr2_column **cols, uint32_t *n)
{
    (void)s;
    struct colbuf b = {0};
    *cols = NULL;
    *n = 0;
    enum s3_err e = add_columns(reg, t, "", 0, 0, &b);
    if (e) {
        gr2_columns_free(b.c, b.n);
        return e;
    }
    *cols = b.c;
    *n = b.n;
    return S3_OK;
}

void gr2_columns_free(struct gr2_column *cols, uint32_t n)
{
    for (uint32_t i = 0; cols && i < n; i++)
        free(cols[i].name);
    free(cols);
}

double gr2_half_to_double(uint16_t h)
{
    int sign = h >> 15, exp = (h >> 10) & 31, mant = h & 1023;
    double v = exp == 0 ? ldexp(mant, -24) : exp == 31 ? (mant ? NAN : INFINITY) : ldexp(mant + 1024, exp - 25);
    return sign ? -v : v;
}

int gr2_format_scalar(char *out, size_t outlen, uint32_t type, bool hex, const uint8_t *p, bool be)
{
    switch (type) {
    case GR2_REAL32:
        return snprintf(out, outlen, "%.9g", (double)ld_f32(p, be));
    case GR2_REAL16:
        return snprintf(out, outlen, "%.9g", gr2_half_to_double(ld_u16(p, be)));
    case GR2_INT8:
    case GR2_BINORMAL_INT8:
        return snprintf(out, outlen, "%d", (int8_t)p[0]);
    case GR2_UINT8:
    case GR2_NORMAL_UINT8:
        return snprintf(out, outlen, "%u", p[0]);
    case GR2_INT16:
    case GR2_BINORMAL_INT16:
        return snprintf(out, outlen, "%d", (int16_t)ld_u16(p, be));
    case GR2_UINT16:
    case GR2_NORMAL_UINT16:
        return snprintf(out, outlen, "%u", ld_u16(p, be));
    case GR2_INT32:
        return snprintf(out, outlen, "%" PRId32, (int32_t)ld_u32(p, be));
    case GR2_UINT32:
        return snprintf(out, outlen, hex ? "0x%08" PRIx32 : "%" PRIu32, ld_u32(p, be));
    default:
        return snprintf(out, outlen, "?");
    }
}

/* ---- strings ---- */

bool gr2_strings_remapped(const struct gr2_file *g)
{
    return g->string_table_crc != 0;
}

void gr2_string_slot(const struct gr2_space *s, uint32_t sec, uint32_t off, struct gr2_str *out)
{
    memset(out, 0, sizeof *out);
    struct gr2_ref at;
    bool points;
    if (gr2_pointer(s, sec, off, &at, &points, &out->why) != S3_OK) {
        out->kind = GR2_STR_ERROR;
        return;
    }
    if (points) {
        out->kind = gr2_string_at(s, at, &out->text, &out->len, &out->why) ? GR2_STR_ERROR : GR2_STR_TEXT;
        return;
    }
    /* No fixup: a NULL string, or, where the file's strings are remapped, the CRC of a
     * string in the external table (the slot's value, low 32 bits of a 64-bit slot). */
    const uint8_t *p = gr2_bytes(s, sec, off, (uint64_t)gr2_pointer_size(s), &out->why);
    uint32_t v = 0;
    if (p)
        v = gr2_pointer_size(s) == 8 && s->g->be ? gr2_u32_at(s, p + 4) : gr2_u32_at(s, p);
    if (gr2_strings_remapped(s->g) && v != 0) {
        out->kind = GR2_STR_CRC;
        out->crc = v;
    } else {
        out->kind = GR2_STR_NULL;
    }
}
