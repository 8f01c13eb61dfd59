#include "parse/sims/dbpf.h"
#include "parse/sims/dbpf_types.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const dbpf_header_field_names[DBPF_HEADER_FIELDS] = {
    "major", "minor", "user_major", "user_minor", "flags", "created", "updated",
    "index_count", "index_legacy_position", "index_size", "index_version", "index_position",
};
const uint32_t dbpf_header_field_offsets[DBPF_HEADER_FIELDS] = {
    0x04, 0x08, 0x0C, 0x10, 0x14, 0x18, 0x1C, 0x24, 0x28, 0x2C, 0x3C, 0x40,
};

bool dbpf_sniff(const uint8_t *p, size_t len)
{
    return len >= 4 && memcmp(p, "DBPF", 4) == 0;
}

enum s3_err dbpf_parse_header(const struct s3_src *src, struct dbpf *d, char *err, size_t errlen)
{
    memset(d, 0, sizeof *d);
    uint8_t h[DBPF_HEADER_SIZE];
    if (src->size < DBPF_HEADER_SIZE || src_read(src, 0, h, sizeof h))
        return s3_fail(S3_ERR_RANGE, err, errlen, "DBPF package too short for its %d-byte header (%llu bytes)",
                       DBPF_HEADER_SIZE, (unsigned long long)src->size);
    if (!dbpf_sniff(h, sizeof h))
        return s3_fail(S3_ERR_FORMAT, err, errlen, "not a DBPF package");
    for (int i = 0; i < DBPF_HEADER_FIELDS; i++)
        d->h[i] = ld_u32(h + dbpf_header_field_offsets[i], false);
    if (d->h[DBPF_H_MAJOR] != 2 || d->h[DBPF_H_MINOR] > 1)
        return s3_fail(S3_ERR_UNSUPPORTED, err, errlen,
                       "DBPF package version %u.%u is not supported (only 2.0, The Sims 3, and 2.1, The Sims 4)",
                       d->h[DBPF_H_MAJOR], d->h[DBPF_H_MINOR]);
    d->index_pos = d->h[DBPF_H_INDEX_POSITION] ? d->h[DBPF_H_INDEX_POSITION] : d->h[DBPF_H_INDEX_LEGACY_POSITION];
    d->index_size = d->h[DBPF_H_INDEX_SIZE];
    return S3_OK;
}

/* Field sizes in an entry's record, in order. */
static const uint8_t field_size[9] = {4, 4, 4, 4, 4, 4, 4, 2, 2};

uint64_t dbpf_field_pos(const struct dbpf *d, uint32_t i, int field)
{
    if (i >= d->count || field < 0 || field > 8)
        return 0;
    if (field < 3 && (d->index_flags & (1u << field)))
        return 0;
    uint64_t pos = d->e[i].record;
    for (int f = 0; f < field; f++)
        if (!(f < 3 && (d->index_flags & (1u << f))))
            pos += field_size[f];
    return pos;
}

static uint64_t entry_hash(const struct dbpf_entry *e, uint64_t seed)
{
    uint64_t h = (e->instance ^ seed) * 0x9E3779B97F4A7C15ull;
    h ^= (((uint64_t)e->type << 32 | e->group) + (seed >> 7)) * 0xC2B2AE3D27D4EB4Full;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    return h ^ (h >> 32);
}

static bool same_tgi(const struct dbpf_entry *a, const struct dbpf_entry *b)
{
    return a->type == b->type && a->group == b->group && a->instance == b->instance;
}

/* Numbers repeats of a key in index order: the first is 0, the next 1, ... Linear: each
 * entry looks its key up in a hash table holding the latest entry of each key (seeded by
 * where the table lies, so an index cannot choose keys that collide); a folder scan
 * parses ten thousand indexes, and sorting each was most of its time. */
static enum s3_err mark_duplicates(struct dbpf *d, struct diag *diag)
{
    if (d->count < 2)
        return S3_OK;
    size_t cap = 16;
    while (cap < 2 * (size_t)d->count)
        cap *= 2;
    uint32_t *slot = calloc(cap, sizeof *slot); /* entry + 1, 0 empty */
    if (!slot)
        return S3_ERR_NOMEM;
    uint64_t seed = ((uint64_t)(uintptr_t)slot ^ (uint64_t)(uintptr_t)d) * 0xD6E8FEB86659FD93ull;
    uint32_t repeats = 0;
    for (uint32_t i = 0; i < d->count; i++) {
        size_t at = (size_t)entry_hash(&d->e[i], seed) & (cap - 1);
        while (slot[at] && !same_tgi(&d->e[slot[at] - 1], &d->e[i]))
            at = (at + 1) & (cap - 1);
        if (slot[at]) {
            d->e[i].dup = d->e[slot[at] - 1].dup + 1;
            repeats++;
        }
        slot[at] = i + 1; /* the latest entry of the key */
    }
    enum s3_err e = S3_OK;
    if (repeats)
        e = diag_add(diag, "%u index entries repeat an earlier entry's type, group and instance (shown with ~N)",
                     repeats);
    free(slot);
    return e;
}

static void classify(struct dbpf_entry *e, uint64_t file_size)
{
    if (e->extended && e->compression == DBPF_COMP_DELETED)
        e->state = DBPF_DELETED;
    else if (e->stored_size == 1 && e->mem_size == 0xFFFFFFFFu)
        e->state = DBPF_NULL;
    else if (e->offset == 0xFFFFFFFFu)
        e->state = DBPF_NO_DATA;
    else if (!range_ok(e->offset, e->stored_size, file_size))
        e->state = DBPF_OUTSIDE;
    else
        e->state = DBPF_OK;
}

/* Where the index is and whether it lies inside the file: false with index_err when it
 * does not (want entries are declared). */
static bool index_inside(const struct s3_src *src, struct dbpf *d, uint32_t want)
{
    if (d->index_pos > src->size || d->index_size > src->size - d->index_pos || d->index_size < 4) {
        d->index_ok = false;
        snprintf(d->index_err, sizeof d->index_err,
                 "index [0x%llx, +%llu) for %u entries is not inside the file (%llu bytes)",
                 (unsigned long long)d->index_pos, (unsigned long long)d->index_size, want,
                 (unsigned long long)src->size);
        return false;
    }
    return true;
}

/* The flags and constant fields at the index's start; the most entries its bytes can
 * hold (the smallest record, three constant fields and no extended word, is 16 bytes).
 * *e: NOMEM when a warning is refused memory (left as it is otherwise). */
static uint64_t index_start(struct cursor *c, struct dbpf *d, struct diag *diag, enum s3_err *e)
{
    d->index_flags = cur_u32(c);
    if (diag && (d->index_flags & ~7u) &&
        diag_add(diag, "index flags 0x%08x: bits other than 0x7 are not known (ignored)", d->index_flags))
        *e = S3_ERR_NOMEM;
    for (int f = 0; f < 3; f++)
        if (d->index_flags & (1u << f))
            d->constant[f] = cur_u32(c);
    return cur_left(c) / 16 + 1;
}

/* One record at the cursor: false when the index ends inside it. */
static bool decode_record(struct cursor *c, const struct dbpf *d, struct dbpf_entry *e)
{
    memset(e, 0, sizeof *e);
    e->record = (uint32_t)(d->index_pos + c->pos);
    e->type = (d->index_flags & 1) ? d->constant[0] : cur_u32(c);
    e->group = (d->index_flags & 2) ? d->constant[1] : cur_u32(c);
    uint32_t hi = (d->index_flags & 4) ? d->constant[2] : cur_u32(c);
    e->instance = (uint64_t)hi << 32 | cur_u32(c);
    e->offset = cur_u32(c);
    uint32_t disk = cur_u32(c);
    e->mem_size = cur_u32(c);
    e->extended = disk >> 31;
    e->stored_size = disk & 0x7FFFFFFFu;
    if (e->extended) {
        e->compression = cur_u16(c);
        e->committed = cur_u16(c);
    }
    return !c->err;
}

/* After the records: a short index is broken (index_err), bytes left are a warning:
 * S3_OK, or NOMEM when it is refused memory. */
static enum s3_err index_end(struct dbpf *d, uint32_t want, size_t pos, struct diag *diag)
{
    if (d->count < want) {
        d->index_ok = false;
        snprintf(d->index_err, sizeof d->index_err, "index ends after %u of %u entries (%llu bytes)", d->count,
                 want, (unsigned long long)d->index_size);
    } else if (diag && pos < d->index_size) {
        return diag_add(diag, "index: %zu bytes after the last entry", d->index_size - pos);
    }
    return S3_OK;
}

enum s3_err dbpf_parse_index(const struct s3_src *src, struct dbpf *d, struct diag *diag)
{
    uint32_t want = d->h[DBPF_H_INDEX_COUNT];
    d->index_ok = true;
    if (want == 0 || !index_inside(src, d, want))
        return S3_OK;
    enum s3_err e = S3_OK;
    uint8_t *b = malloc(d->index_size);
    if (!b)
        return S3_ERR_NOMEM;
    if (src_read(src, d->index_pos, b, d->index_size)) {
        d->index_ok = false;
        snprintf(d->index_err, sizeof d->index_err, "index cannot be read");
        goto done; /* a broken part, not a failure */
    }
    struct cursor c;
    cur_init(&c, b, d->index_size, false);
    uint64_t cap = index_start(&c, d, diag, &e);
    d->e = e ? NULL : calloc(want < cap ? want : cap, sizeof *d->e);
    if (!d->e) {
        e = S3_ERR_NOMEM;
        goto done;
    }
    for (uint32_t i = 0; i < want && !c.err; i++) {
        struct dbpf_entry en;
        if (!decode_record(&c, d, &en) || d->count >= cap)
            break;
        classify(&en, src->size);
        d->e[d->count++] = en;
    }
    e = index_end(d, want, c.pos, diag);
    if (e == S3_OK)
        e = mark_duplicates(d, diag);
done:
    free(b);
    return e;
}

enum s3_err dbpf_read_entry(const struct s3_src *src, struct dbpf *d, uint32_t record, struct dbpf_entry *e)
{
    uint64_t end = d->index_pos + d->index_size;
    if (d->index_pos > src->size || d->index_size > src->size - d->index_pos || d->index_size < 4)
        return S3_ERR_RANGE;
    /* the flags and constant fields: at most 16 bytes at the index's start */
    uint8_t start[16], rec[32];
    size_t ns = d->index_size < sizeof start ? (size_t)d->index_size : sizeof start;
    if (src_read(src, d->index_pos, start, ns))
        return S3_ERR_IO;
    struct cursor c;
    cur_init(&c, start, ns, false);
    index_start(&c, d, NULL, &(enum s3_err){S3_OK}); /* no diag: nothing to refuse */
    if (c.err || record < d->index_pos + c.pos || record >= end)
        return S3_ERR_RANGE;
    /* the record: at most 32 bytes, and never past the index (decode_record checks) */
    size_t nr = end - record < sizeof rec ? (size_t)(end - record) : sizeof rec;
    if (src_read(src, record, rec, nr))
        return S3_ERR_IO;
    cur_init(&c, rec, nr, false);
    if (!decode_record(&c, d, e))
        return S3_ERR_RANGE;
    e->record = record;
    classify(e, src->size);
    return S3_OK;
}

/* Grows *p to hold n elements of size (through grow): false when refused. */
static bool grow_to(void **p, size_t *cap, size_t n, size_t size, dbpf_grow_fn *grow)
{
    if (n <= *cap)
        return true;
    size_t c = *cap ? *cap : 64;
    while (c < n)
        c *= 2;
    if (c > SIZE_MAX / size)
        return false;
    void *q = grow(*p, c * size);
    if (!q)
        return false;
    *p = q;
    *cap = c;
    return true;
}

/* dup for each key, as mark_duplicates numbers entries (the same rule, over the keys). */
static bool number_key_repeats(struct dbpf_keys *ks, dbpf_grow_fn *grow)
{
    if (ks->n < 2)
        return true;
    size_t cap = 16;
    while (cap < 2 * (size_t)ks->n)
        cap *= 2;
    if (!grow_to((void **)&ks->slot, &ks->capslot, cap, sizeof *ks->slot, grow))
        return false;
    memset(ks->slot, 0, cap * sizeof *ks->slot); /* key + 1, 0 empty */
    uint64_t seed = ((uint64_t)(uintptr_t)ks->slot ^ (uint64_t)ks->n * 0x9E37u) * 0xD6E8FEB86659FD93ull;
    for (uint32_t i = 0; i < ks->n; i++) {
        struct dbpf_key *k = &ks->k[i];
        struct dbpf_entry probe = {.type = k->type, .group = k->group, .instance = k->instance};
        size_t at = (size_t)entry_hash(&probe, seed) & (cap - 1);
        for (; ks->slot[at]; at = (at + 1) & (cap - 1)) {
            const struct dbpf_key *o = &ks->k[ks->slot[at] - 1];
            if (o->type == k->type && o->group == k->group && o->instance == k->instance)
                break;
        }
        if (ks->slot[at])
            k->dup = ks->k[ks->slot[at] - 1].dup + 1;
        ks->slot[at] = i + 1; /* the latest entry of the key */
    }
    return true;
}

static inline uint32_t le32_at(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The keys of the records in b[pos .. len), as decode_record reads them (the same fields
 * and the same end: a record the bytes end inside is not taken), at most max: the count.
 * Inlined loads instead of a cursor call per field: a folder scan decodes a million
 * records. */
static uint32_t decode_keys(const struct dbpf *d, const uint8_t *b, size_t pos, size_t len, uint32_t max,
                            struct dbpf_key *out)
{
    bool ct = d->index_flags & 1, cg = d->index_flags & 2, ch = d->index_flags & 4;
    size_t fixed = 16 + 4u * (!ct + !cg + !ch); /* without the extended word */
    uint32_t n = 0;
    while (n < max && len - pos >= fixed) {
        const uint8_t *p = b + pos;
        struct dbpf_key k = {.record = (uint32_t)(d->index_pos + pos)};
        k.type = ct ? d->constant[0] : le32_at(p);
        p += ct ? 0 : 4;
        k.group = cg ? d->constant[1] : le32_at(p);
        p += cg ? 0 : 4;
        uint32_t hi = ch ? d->constant[2] : le32_at(p);
        p += ch ? 0 : 4;
        k.instance = (uint64_t)hi << 32 | le32_at(p);
        uint32_t disk = le32_at(p + 8); /* after the offset */
        k.size = le32_at(p + 12);
        size_t size = fixed;
        if (disk >> 31) { /* the extended word: compression, committed */
            size += 4;
            if (len - pos < size)
                break;
            k.deleted = ((uint32_t)p[16] | (uint32_t)p[17] << 8) == DBPF_COMP_DELETED;
        }
        out[n++] = k;
        pos += size;
    }
    return n;
}

enum s3_err dbpf_parse_keys(const struct s3_src *src, struct dbpf *d, struct dbpf_keys *ks, dbpf_grow_fn *grow)
{
    uint32_t want = d->h[DBPF_H_INDEX_COUNT];
    d->index_ok = true;
    ks->n = 0;
    if (want == 0 || !index_inside(src, d, want))
        return S3_OK;
    if (!grow_to((void **)&ks->bytes, &ks->capbytes, d->index_size, 1, grow))
        return S3_ERR_NOMEM;
    if (src_read(src, d->index_pos, ks->bytes, d->index_size)) {
        d->index_ok = false;
        snprintf(d->index_err, sizeof d->index_err, "index cannot be read");
        return S3_OK;
    }
    struct cursor c;
    cur_init(&c, ks->bytes, d->index_size, false);
    uint64_t cap = index_start(&c, d, NULL, &(enum s3_err){S3_OK}); /* no diag: nothing to refuse */
    if (!grow_to((void **)&ks->k, &ks->capk, want < cap ? want : cap, sizeof *ks->k, grow))
        return S3_ERR_NOMEM;
    d->count = c.err ? 0 : decode_keys(d, ks->bytes, c.pos, d->index_size, want < cap ? want : (uint32_t)cap, ks->k);
    ks->n = d->count;
    (void)index_end(d, want, 0, NULL); /* no diag (nothing to refuse): where the records end is not needed */
    return number_key_repeats(ks, grow) ? S3_OK : S3_ERR_NOMEM;
}

void dbpf_keys_free(struct dbpf_keys *ks)
{
    free(ks->k);
    free(ks->bytes);
    free(ks->slot);
    memset(ks, 0, sizeof *ks);
}

void dbpf_free(struct dbpf *d)
{
    free(d->e);
    d->e = NULL;
    d->count = 0;
}

bool dbpf_type_names(uint32_t type, bool sims4, const char **tag, const char **ext)
{
    *tag = "UNKN";
    *ext = ".bnry";
    size_t lo = 0, hi = dbpf_ntype_rows; /* binary search: the rows are sorted by type */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct dbpf_type_row *r = &dbpf_type_rows[mid];
        if (r->type == type) {
            *tag = r->tag[sims4];
            *ext = r->ext[sims4];
            return strcmp(*tag, "UNKN") != 0;
        }
        if (r->type < type)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

const char *dbpf_compression_name(uint16_t c)
{
    switch (c) {
    case DBPF_COMP_STORED:
        return "stored";
    case DBPF_COMP_ZLIB:
        return "zlib";
    case DBPF_COMP_REFPACK:
        return "refpack";
    case DBPF_COMP_STREAMABLE:
        return "streamable";
    case DBPF_COMP_DELETED:
        return "deleted";
    default:
        return NULL;
    }
}

/* ---- name maps, read in pieces ---- */

void dbpf_namemap_begin(struct dbpf_namemap_reader *r, dbpf_name_fn *add, void *ctx, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    r->add = add;
    r->ctx = ctx;
    r->err = err;
    r->errlen = errlen;
    r->need = 8; /* version, count */
    if (errlen)
        err[0] = 0;
}

/* The gathered fixed part is complete: the header, or an entry's instance and length. */
static bool namemap_fixed_done(struct dbpf_namemap_reader *r)
{
    r->have = 0;
    if (r->need == 8) { /* the header */
        uint32_t version = ld_u32(r->fixed, false);
        r->count = (int32_t)ld_u32(r->fixed + 4, false);
        if (r->count < 0) {
            r->e = s3_fail(S3_ERR_FORMAT, r->err, r->errlen, "name map: header unreadable (count %d)", r->count);
            return false;
        }
        if (version != 1)
            snprintf(r->err, r->errlen, "name map version %u", version); /* read on: the layout is the same */
        r->need = 12;
        r->done = r->count == 0;
        return true;
    }
    r->instance = ld_u64(r->fixed, false);
    int32_t n = (int32_t)ld_u32(r->fixed + 8, false);
    if (n < 0) {
        r->e = s3_fail(S3_ERR_RANGE, r->err, r->errlen, "name map: entry %d of %d is cut short", r->i, r->count);
        return false;
    }
    r->name_len = (uint32_t)n;
    r->name_got = 0;
    r->in_name = true;
    return true;
}

/* The current entry's name is complete: given (its first DBPF_NAME_MAX bytes). */
static void namemap_name_done(struct dbpf_namemap_reader *r)
{
    uint32_t kept = r->name_len < DBPF_NAME_MAX ? r->name_len : DBPF_NAME_MAX;
    r->add(r->ctx, r->instance, r->name, kept);
    r->in_name = false;
    r->done = ++r->i == r->count;
}

bool dbpf_namemap_feed(struct dbpf_namemap_reader *r, const uint8_t *p, size_t n)
{
    r->bytes += n;
    while (n && !r->done && r->e == S3_OK) {
        if (!r->in_name) {
            size_t k = r->need - r->have < n ? r->need - r->have : n;
            memcpy(r->fixed + r->have, p, k);
            r->have += k, p += k, n -= k;
            if (r->have == r->need && !namemap_fixed_done(r))
                return false;
        } else {
            uint32_t left = r->name_len - r->name_got;
            size_t k = left < n ? left : n;
            if (r->name_got < DBPF_NAME_MAX) {
                size_t room = DBPF_NAME_MAX - r->name_got;
                memcpy(r->name + r->name_got, p, k < room ? k : room);
            }
            r->name_got += (uint32_t)k, p += k, n -= k;
        }
        if (r->in_name && r->name_got == r->name_len)
            namemap_name_done(r);
    }
    return r->e == S3_OK;
}

enum s3_err dbpf_namemap_end(struct dbpf_namemap_reader *r)
{
    if (r->e != S3_OK || r->done)
        return r->e;
    if (r->need == 8)
        return s3_fail(S3_ERR_RANGE, r->err, r->errlen, "name map: header unreadable (%llu bytes)",
                       (unsigned long long)r->bytes);
    return s3_fail(S3_ERR_RANGE, r->err, r->errlen, "name map: entry %d of %d is cut short", r->i, r->count);
}

enum s3_err dbpf_parse_namemap(const uint8_t *p, size_t len, dbpf_name_fn *add, void *ctx, char *err, size_t errlen)
{
    struct dbpf_namemap_reader r;
    dbpf_namemap_begin(&r, add, ctx, err, errlen);
    dbpf_namemap_feed(&r, p, len);
    return dbpf_namemap_end(&r);
}

/* Appends v as n upper-case hex digits. */
static char *put_hex(char *p, uint64_t v, int n)
{
    static const char hex[] = "0123456789ABCDEF";
    for (int i = n - 1; i >= 0; i--)
        p[i] = hex[v & 0xF], v >>= 4;
    return p + n;
}

/* The name of a resource without a name part, written by hand: a folder's /conflicts and
 * /keys render one per entry listed (25,000 or a million), where snprintf's parsing of
 * the format was most of the cost. The same bytes as the snprintf below. */
static size_t plain_resource_name(char *out, size_t size, bool sims4, const struct dbpf_entry *e)
{
    const char *tag, *ext;
    dbpf_type_names(e->type, sims4, &tag, &ext);
    size_t tn = strlen(tag), en = strlen(ext);
    char buf[64];
    if (40 + tn + en > sizeof buf || size == 0) /* no table entry is this long: snprintf's */
        return (size_t)-1;
    char *p = buf;
    *p++ = 'S', *p++ = sims4 ? '4' : '3', *p++ = '_';
    p = put_hex(p, e->type, 8);
    *p++ = '_';
    p = put_hex(p, e->group, 8);
    *p++ = '_';
    p = put_hex(p, e->instance, 16);
    *p++ = '%', *p++ = '%', *p++ = '+';
    memcpy(p, tag, tn);
    memcpy(p + tn, ext, en);
    size_t n = (size_t)(p - buf) + tn + en, k = n < size ? n : size - 1;
    memcpy(out, buf, k);
    out[k] = 0;
    return k;
}

size_t dbpf_resource_name(char *out, size_t size, bool sims4, const struct dbpf_entry *e, const char *name)
{
    if (!name || !name[0]) {
        size_t k = plain_resource_name(out, size, sims4, e);
        if (k != (size_t)-1)
            return k;
    }
    char safe[128] = "";
    if (name) {
        size_t k = 0;
        for (const char *s = name; *s && k + 1 < sizeof safe; s++) {
            unsigned char ch = (unsigned char)*s;
            safe[k++] = (ch < 0x20 || ch == 0x7F || ch == '/' || ch == '%') ? '_' : (char)ch;
        }
        safe[k] = 0;
    }
    const char *tag, *ext;
    dbpf_type_names(e->type, sims4, &tag, &ext);
    int n = snprintf(out, size, "%s_%08X_%08X_%016llX%s%s%%%%+%s%s", sims4 ? "S4" : "S3", e->type, e->group,
                     (unsigned long long)e->instance, safe[0] ? "_" : "", safe, tag, ext);
    return n < 0 ? 0 : (size_t)n >= size ? size - 1 : (size_t)n;
}

bool dbpf_detect(const struct s3_src *src, const uint8_t *head, size_t n, struct detect_result *r)
{
    (void)src, (void)r; /* the version is checked (and refused in one line) by the view */
    return dbpf_sniff(head, n);
}
