/* DBPF packages (The Sims 3 and 4) as a tree: every index entry as a directory of value
 * files with its stored and expanded bytes, and every file inside that the format table
 * (src/formats.def, pkg columns) opens nested (rigs, Granny files, ...) as the tree that
 * mounting it alone gives, opened over the resource's own source. */
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs/views/sims/view_dbpf.h"
#include "parse/base/err.h"
#include "parse/sims/dbpf.h"
#include "parse/sims/dbpf_codec.h"

struct stream_pool;

/* Resources past the cache's bound and past STREAM_MIN are decoded in pieces as they are
 * read (struct stream_pool): up to STREAM_READERS readers, each keeping the last bytes it
 * made (STREAM_RING, less under a small cache_mb). Below STREAM_MIN (what the readers may
 * hold, twice) one cache item, even one that passes the bound alone, costs no more and
 * reads anywhere at once. */
#define STREAM_READERS 4
#define STREAM_RING (1u << 20)
#define STREAM_RING_MIN (64u << 10)
#define STREAM_MIN (2ull * STREAM_READERS * STREAM_RING)

/* One resource's bytes, made when its directory is first listed. */
struct pkg_res {
    struct cached c; /* first: the cache hands this pointer back (expanded bytes) */
    struct pkg_view *v;
    uint32_t i;
    uint16_t codec;    /* what the bytes are decoded as (a DBPF_COMP_ value) */
    const char *nested_dir; /* the nested view's directory name (the table's pkg_dir) */
    uint32_t nested_ino;    /* that directory (0: none made) */
    struct s3fs *nested;    /* the view opened there, once populated */
    bool ok;           /* the bytes can be had (err otherwise) */
    bool streamed;     /* larger than the cache's bound: decoded in pieces (struct stream_pool) */
    char err[200];
    char *note;        /* the codec's warning (malloc'd; NULL: none), given to /info by each
                        * listing of the resource (a failed one takes it back, tree.h) */
    struct source src; /* a slice of the file (stored), or the expanded bytes */
};

/* The entries of one type: by_type[start .. start+n) in index order. */
/* The entries /by-type and /info count together: the types that share a tag in the
 * package's game (many ids are _XML or THUM), or one type the table gives no tag. */
struct type_group {
    uint32_t type, first, start, n; /* type: its first entry's; first: that entry's index */
};

struct pkg_view {
    struct s3fs *fs;
    uint32_t *by_type;          /* entry numbers sorted by (group, index) */
    struct type_group *groups;  /* in order of first appearance */
    uint32_t ngroups;
    struct dbpf d;
    bool sims4;
    char **dirname; /* per entry: its directory under /resources (made on first listing) */
    struct pkg_res **res;
    uint64_t nnames;        /* names read from the name maps (kept: only those naming an entry) */
    uint32_t namemaps;
    uint64_t name_compares; /* instances compared while naming (dbpf_view_name_compares) */
    uint64_t names_kept;      /* bytes of the names kept so far */
    uint64_t names_held_peak; /* the most held while naming (dbpf_view_names_held_peak) */
    bool names_loaded;
    enum s3_err names_rc; /* while name_entries runs: S3_OK, or NOMEM */
    /* warnings of broken name maps, kept with the names and given to /info by each
     * listing of /resources (a failed one takes them back, tree.h) */
    char **name_notes;
    size_t nname_notes;
    uint64_t mem_total; /* the declared expanded bytes of entries with data */
    struct stream_pool *pool; /* readers of streamed resources */
    uint32_t nstreamed;       /* resources listed so far that are streamed */
    uint32_t resources_dir; /* /resources (0 until the root is populated) */
    uint32_t *res_dir;      /* per entry: /resources/NAME (0 until /resources is populated) */
};

_Static_assert(FMT_COUNT <= 32, "format masks are 32-bit");

/* The formats a resource of this type is opened as, nested: a mask of (1u << format). */
static unsigned nested_formats(uint32_t type)
{
    unsigned mask = 0;
    for (int f = FMT_UNKNOWN + 1; f < FMT_COUNT; f++)
        if (s3_formats[f].pkg_dir[0] && (s3_formats[f].pkg_type == 0 || s3_formats[f].pkg_type == type))
            mask |= 1u << f;
    return mask;
}

/* The nested directory a resource of this type promises (a rig resource: rig/), so that
 * bytes of another format are said there as an .error; NULL when the type promises none. */
static const char *promised_dir(uint32_t type)
{
    for (int f = FMT_UNKNOWN + 1; f < FMT_COUNT; f++)
        if (s3_formats[f].pkg_dir[0] && s3_formats[f].pkg_type == type)
            return s3_formats[f].pkg_dir;
    return NULL;
}

static void stream_pool_free(struct stream_pool *p);

static void free_name_notes(struct pkg_view *v)
{
    for (size_t i = 0; i < v->nname_notes; i++)
        free(v->name_notes[i]);
    free(v->name_notes);
    v->name_notes = NULL;
    v->nname_notes = 0;
}

/* A name map's warning, kept (name_notes); out of memory: names_rc NOMEM (the names are
 * read again by the next listing). */
static void name_note(struct pkg_view *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void name_note(struct pkg_view *v, const char *fmt, ...)
{
    char *line = NULL;
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&line, fmt, ap);
    va_end(ap);
    char **grown = n < 0 ? NULL : realloc(v->name_notes, (v->nname_notes + 1) * sizeof *grown);
    if (!grown) {
        if (n >= 0)
            free(line);
        v->names_rc = S3_ERR_NOMEM;
        return;
    }
    v->name_notes = grown;
    v->name_notes[v->nname_notes++] = line;
}

static void pkg_view_free(void *p)
{
    struct pkg_view *v = p;
    stream_pool_free(v->pool);
    for (uint32_t i = 0; v->dirname && i < v->d.count; i++)
        free(v->dirname[i]);
    free(v->dirname);
    for (uint32_t i = 0; v->res && i < v->d.count; i++) {
        if (v->res[i])
            free(v->res[i]->note);
        free(v->res[i]);
    }
    free_name_notes(v);
    free(v->res);
    free(v->res_dir);
    dbpf_free(&v->d);
    free(v->by_type);
    free(v->groups);
    free(v);
}

/* Which group a type belongs to: its tag (4 bytes, above bit 32), or the type itself when
 * the table gives it no tag. */
static uint64_t group_key(const struct pkg_view *v, uint32_t type)
{
    const char *tag, *ext;
    if (!dbpf_type_names(type, v->sims4, &tag, &ext))
        return type;
    uint64_t k = 1;
    for (int i = 0; i < 4 && tag[i]; i++)
        k = k << 8 | (uint8_t)tag[i];
    return k << 32;
}

static int by_key_then_index(const void *a, const void *b, void *keys)
{
    const uint64_t *key = keys;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return key[x] != key[y] ? (key[x] < key[y] ? -1 : 1) : (x < y ? -1 : x > y);
}

static int by_first(const void *a, const void *b)
{
    const struct type_group *x = a, *y = b;
    return x->first < y->first ? -1 : x->first > y->first;
}

/* Groups the entries by tag (or untagged type) in O(n log n): a key per entry, looked up
 * once (a hostile index may hold a million types). */
static int group_types(struct pkg_view *v)
{
    uint32_t n = v->d.count;
    v->by_type = alloc_array(n, sizeof *v->by_type);
    v->groups = alloc_array(n, sizeof *v->groups);
    uint64_t *key = alloc_array(n, sizeof *key);
    if (!v->by_type || !v->groups || !key) {
        free(key);
        return -1;
    }
    for (uint32_t i = 0; i < n; i++) {
        v->by_type[i] = i;
        key[i] = group_key(v, v->d.e[i].type);
    }
    qsort_r(v->by_type, n, sizeof *v->by_type, by_key_then_index, key);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t e = v->by_type[i];
        if (i == 0 || key[e] != key[v->by_type[i - 1]])
            v->groups[v->ngroups++] = (struct type_group){v->d.e[e].type, e, i, 0};
        v->groups[v->ngroups - 1].n++;
    }
    free(key);
    qsort(v->groups, v->ngroups, sizeof *v->groups, by_first);
    return 0;
}

/* ---- codecs (parse/sims/dbpf_codec.h) ---- */

static enum s3_err produce_resource(struct cached *c, uint8_t **data, size_t *size, char *err, size_t errlen)
{
    struct pkg_res *r = (struct pkg_res *)c;
    const struct dbpf_entry *e = &r->v->d.e[r->i];
    struct source *file = &r->v->fs->src;
    uint8_t *in = alloc_array(e->stored_size, 1);
    uint8_t *out = malloc((size_t)e->mem_size + 1);
    enum s3_err rc;
    if (!in || !out)
        rc = s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory for %u bytes", e->mem_size);
    else if ((rc = source_pread_checked(file, e->offset, in, e->stored_size)))
        s3_fail(rc, err, errlen, "stored bytes cannot be read (the file changed?)");
    else
        rc = dbpf_expand(r->codec, in, e->stored_size, out, e->mem_size, err, errlen);
    free(in);
    if (rc) {
        free(out);
        return rc;
    }
    *data = out;
    *size = e->mem_size;
    return S3_OK;
}

/* An entry's stored bytes, read from the package's source piece by piece. */
struct map_input {
    struct source *file;
    uint64_t offset;
};

static enum s3_err read_stored(void *ctx, uint64_t off, uint8_t *buf, size_t len)
{
    const struct map_input *in = ctx;
    return source_pread_checked(in->file, in->offset + off, buf, len);
}


static bool discard(void *ctx, const uint8_t *p, size_t n)
{
    (void)ctx, (void)p, (void)n;
    return true;
}

/* A resource larger than the cache's bound (and than STREAM_MIN) is never one item (it
 * could not be held within cache_mb): checked now by decoding it in pieces, its data.bin
 * decoded in pieces as it is read (read_streamed). */
static enum s3_err check_streamed(struct pkg_view *v, struct pkg_res *r, const struct dbpf_entry *e)
{
    struct map_input in = {&v->fs->src, e->offset};
    size_t held;
    enum s3_err de = dbpf_expand_stream(r->codec, read_stored, &in, e->stored_size, discard, NULL, e->mem_size,
                                        &held, r->err, sizeof r->err);
    r->streamed = true;
    r->ok = de == S3_OK;
    v->nstreamed += de != S3_ERR_NOMEM;
    return de;
}

/* Sets up entry i's bytes (once): a slice of the file when stored, else an expanded
 * source, expanded now so a broken stream is data.error at once. The bytes are held
 * (source_hold) for the caller, which reads them next: release with resource_done. */
static struct pkg_res *resource(struct pkg_view *v, uint32_t i)
{
    if (v->res[i]) {
        source_hold(&v->res[i]->src);
        return v->res[i];
    }
    struct pkg_res *r = tree_calloc(v->fs->tree, 1, sizeof *r); /* NULL: the listing fails */
    if (!r)
        return NULL;
    v->res[i] = r;
    r->v = v;
    r->i = i;
    const struct dbpf_entry *e = &v->d.e[i];
    struct s3fs *fs = v->fs;
    uint8_t head[2] = {0};
    size_t hn = e->stored_size < 2 ? e->stored_size : 2;
    if (source_pread_checked(&fs->src, e->offset, head, hn)) {
        snprintf(r->err, sizeof r->err, "stored bytes cannot be read (the file changed?)");
        return r;
    }
    char note[200];
    int codec = dbpf_codec_choose(e, head, hn, note, sizeof note);
    if (note[0] && !(r->note = strdup(note))) { /* the listing fails; the next one makes it again */
        v->res[i] = NULL;
        free(r);
        return NULL;
    }
    if (codec < 0) {
        snprintf(r->err, sizeof r->err, "compression 0x%04x with %u bytes stored for %u: no codec fits",
                 e->compression, e->stored_size, e->mem_size);
        return r;
    }
    r->codec = (uint16_t)codec;
    if (codec == DBPF_COMP_STORED) {
        source_slice(&r->src, &fs->src, e->offset, e->stored_size);
        r->ok = true;
        return r;
    }
    if (e->mem_size > fs->opts.max_unpacked) {
        snprintf(r->err, sizeof r->err, "declared expanded size %u is over the limit (max_unpacked_mb)",
                 e->mem_size);
        return r;
    }
    r->c.produce = produce_resource;
    r->c.hint = e->mem_size;
    source_expanded(&r->src, &fs->src, &fs->cache, &r->c, e->mem_size);
    if (e->mem_size > cache_limit(&fs->cache) && e->mem_size > STREAM_MIN) {
        if (check_streamed(v, r, e) == S3_ERR_NOMEM) { /* the listing fails; the next one checks again */
            tree_note_oom(fs->tree);
            v->res[i] = NULL;
            free(r->note);
            free(r);
            return NULL;
        }
        source_hold(&r->src); /* resource_done lets go: nothing is produced by a hold */
        return r;
    }
    source_hold(&r->src);
    size_t got;
    const uint8_t *d;
    enum s3_err pe = cache_pin(&fs->cache, &r->c, &d, &got, r->err, sizeof r->err);
    if (pe == S3_ERR_NOMEM || pe == S3_ERR_LIMIT) {
        /* refused memory (or cache_mb beside others): the listing fails (the tree counts
         * both) and the next one expands it again, never data.error kept for it */
        source_release(&r->src);
        tree_note_oom(fs->tree);
        v->res[i] = NULL;
        free(r->note);
        free(r);
        return NULL;
    }
    if (pe)
        return r;
    cache_unpin(&fs->cache, &r->c);
    r->ok = true;
    return r;
}

static void resource_done(struct pkg_res *r)
{
    if (r)
        source_release(&r->src);
}

/* ---- names ----
 *
 * A name map may repeat an instance any number of times and name instances no entry has;
 * its expanded bytes may be hundreds of times the package. So the names are matched
 * against the entries as the map is read, in its cached expansion (never copied): a hash
 * of the entries' instances (one slot per distinct instance) keeps, for each, the first
 * name read for it, and nothing else. Naming is linear in entries plus names
 * (name_compares counts the instance comparisons), and what it keeps is bounded by the
 * entries, whatever the maps hold. The slots go once the entries are named. */

struct name_slot {
    uint64_t instance;
    char *name; /* the first name read for it (NULL: none yet) */
    bool used;
};

struct name_index {
    struct pkg_view *v;
    struct name_slot *slot; /* open addressing, a power of two at most half full */
    size_t cap;
    uint64_t seed; /* per view: a crafted index cannot choose instances that collide */
};

static size_t name_home(const struct name_index *x, uint64_t instance)
{
    uint64_t h = instance ^ x->seed; /* splitmix64's finaliser */
    h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
    h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
    return (size_t)(h ^ (h >> 31)) & (x->cap - 1);
}

/* The slot of instance: its own, or the free one where it would go. */
static struct name_slot *name_slot(struct name_index *x, uint64_t instance)
{
    for (size_t i = name_home(x, instance);; i = (i + 1) & (x->cap - 1)) {
        struct name_slot *s = &x->slot[i];
        if (!s->used)
            return s;
        x->v->name_compares++;
        if (s->instance == instance)
            return s;
    }
}

static int name_index_init(struct name_index *x, struct pkg_view *v)
{
    x->v = v;
    x->cap = 16;
    while (x->cap < 2 * (size_t)v->d.count)
        x->cap *= 2;
    x->seed = (uint64_t)(uintptr_t)v * 0x9E3779B97F4A7C15ull ^ (uint64_t)(uintptr_t)&name_home;
    x->slot = calloc(x->cap, sizeof *x->slot);
    if (!x->slot)
        return -1;
    for (uint32_t i = 0; i < v->d.count; i++) {
        struct name_slot *s = name_slot(x, v->d.e[i].instance);
        s->used = true;
        s->instance = v->d.e[i].instance;
    }
    return 0;
}

static void name_index_free(struct name_index *x)
{
    for (size_t i = 0; x->slot && i < x->cap; i++)
        free(x->slot[i].name);
    free(x->slot);
}

/* dbpf_parse_namemap's callback: a name kept only when it is the first for an instance
 * some entry has (at most 100 bytes of it, as before). */
static void add_name(void *ctx, uint64_t instance, const char *name, size_t len)
{
    struct name_index *x = ctx;
    struct pkg_view *v = x->v;
    v->nnames++;
    struct name_slot *s = name_slot(x, instance);
    if (!s->used || s->name)
        return;
    s->name = strndup(name, len < 100 ? len : 100);
    if (!s->name)
        v->names_rc = S3_ERR_NOMEM; /* a name left out would name its resource wrongly */
    else
        v->names_kept += strlen(s->name) + 1;
}

static bool feed_names(void *ctx, const uint8_t *p, size_t n)
{
    return dbpf_namemap_feed(ctx, p, n);
}

/* Reads name map entry i into x, decoded piece by piece as it is parsed: the map is never
 * held whole (its expansion may be hundreds of times the package), only the decoder's
 * pieces (DBPF_STREAM_HELD) and the names kept. A map that cannot be decoded is said in
 * /info (its data.error says it too); the names before a break are kept, as for a map
 * whose entries break. */
static void read_namemap(struct pkg_view *v, uint32_t i, struct name_index *x)
{
    struct s3fs *fs = v->fs;
    const struct dbpf_entry *e = &v->d.e[i];
    uint8_t head[2] = {0};
    size_t hn = e->stored_size < 2 ? e->stored_size : 2;
    char note[200], err[200];
    if (source_pread_checked(&fs->src, e->offset, head, hn))
        return; /* data.error says so when it is listed */
    int codec = dbpf_codec_choose(e, head, hn, note, sizeof note); /* the note: when it is listed */
    if (codec < 0 || (codec != DBPF_COMP_STORED && e->mem_size > fs->opts.max_unpacked))
        return; /* data.error says why */
    struct map_input in = {&fs->src, e->offset};
    struct dbpf_namemap_reader r;
    dbpf_namemap_begin(&r, add_name, x, err, sizeof err);
    size_t held = 0;
    char why[200] = "";
    enum s3_err de = dbpf_expand_stream((uint16_t)codec, read_stored, &in, e->stored_size, feed_names, &r,
                                        e->mem_size, &held, why, sizeof why);
    if (held + v->names_kept > v->names_held_peak)
        v->names_held_peak = held + v->names_kept;
    if (de == S3_ERR_NOMEM) {
        v->names_rc = S3_ERR_NOMEM; /* names left out would name resources wrongly */
        return;
    }
    if (de == S3_OK || de == S3_ERR_LIMIT) { /* decoded whole, or stopped by a broken entry */
        v->namemaps++;
        if (dbpf_namemap_end(&r) != S3_OK || err[0])
            name_note(v, "%s: %s", v->dirname[i], err);
    } else {
        name_note(v, "%s: names read up to a broken stream: %s", v->dirname[i], why);
    }
}

/* Reads every name map, then names every entry: S3_OK, or NOMEM with every name freed
 * (v->dirname[i] NULL), so that the next call, a listing tried again, reads them again
 * (a refused allocation is not kept: the folder view's conflicts name a package's
 * resources through it). The warnings of broken maps are kept anew (name_notes). */
static enum s3_err name_entries(struct pkg_view *v)
{
    char tmp[256];
    free_name_notes(v);
    v->names_rc = S3_OK;
    v->nnames = 0;
    v->namemaps = 0;
    for (uint32_t i = 0; i < v->d.count; i++) {
        const struct dbpf_entry *e = &v->d.e[i];
        dbpf_resource_name(tmp, sizeof tmp, v->sims4, e, NULL);
        v->dirname[i] = strdup(tmp); /* provisional: used in warnings while the maps load */
        if (!v->dirname[i])
            return S3_ERR_NOMEM;
    }
    struct name_index x;
    if (name_index_init(&x, v)) {
        name_index_free(&x);
        return S3_ERR_NOMEM;
    }
    for (uint32_t i = 0; i < v->d.count; i++) {
        const struct dbpf_entry *e = &v->d.e[i];
        if (e->type == DBPF_TYPE_NAMEMAP && e->state == DBPF_OK)
            read_namemap(v, i, &x);
    }
    for (uint32_t i = 0; i < v->d.count && v->names_rc == S3_OK; i++) {
        const struct dbpf_entry *e = &v->d.e[i];
        const char *nm = name_slot(&x, e->instance)->name;
        size_t n = dbpf_resource_name(tmp, sizeof tmp - 16, v->sims4, e, nm && nm[0] ? nm : NULL);
        if (e->dup)
            snprintf(tmp + n, sizeof tmp - n, "~%u", e->dup + 1);
        char *name = strdup(tmp);
        if (!name) {
            v->names_rc = S3_ERR_NOMEM;
            break;
        }
        free(v->dirname[i]);
        v->dirname[i] = name;
    }
    name_index_free(&x);
    return v->names_rc;
}

static enum s3_err load_names(struct pkg_view *v)
{
    if (v->names_loaded)
        return S3_OK;
    enum s3_err rc = name_entries(v);
    if (rc) {
        for (uint32_t i = 0; i < v->d.count; i++) {
            free(v->dirname[i]);
            v->dirname[i] = NULL;
        }
        free_name_notes(v);
        return rc;
    }
    v->names_loaded = true;
    return S3_OK;
}

/* ---- /resources/NAME ---- */

static const char *state_name(uint8_t s)
{
    static const char *const n[] = {"ok", "deleted", "null", "no data", "outside the file"};
    return s < sizeof n / sizeof n[0] ? n[s] : "?";
}

/* A value file spanning field f of entry i's record (or its constant, stored once). */
static void add_field(struct pkg_view *v, uint32_t dir, uint32_t i, const char *name, int f, const char *fmt,
                      uint64_t value)
{
    struct tree *t = v->fs->tree;
    uint32_t ino = tree_add_textf(t, dir, name, f >= 7 ? "u16" : "u32", fmt, value);
    uint64_t pos = dbpf_field_pos(&v->d, i, f);
    if (!pos && f < 3) { /* constant: the word after the flags */
        pos = v->d.index_pos + 4;
        for (int k = 0; k < f; k++)
            if (v->d.index_flags & (1u << k))
                pos += 4;
    }
    if (pos)
        tree_set_span(t, ino, pos, f >= 7 ? 2 : 4);
}

static enum s3_err read_expanded(struct tree *t, void *ctx, uint64_t arg, uint64_t off, void *buf, size_t len,
                                 size_t *got)
{
    (void)t, (void)arg;
    struct pkg_res *r = ctx;
    if (source_pread_checked(&r->src, off, buf, len))
        return S3_ERR_IO;
    *got = len;
    return S3_OK;
}

/* What an open data.bin holds: the expanded resource (tree_hold). */
static struct cached *expanded_item(void *ctx, uint64_t arg, struct cache **cache)
{
    (void)arg;
    struct pkg_res *r = ctx;
    *cache = r->src.cache;
    return r->src.kind == SOURCE_EXPANDED ? r->src.item : NULL;
}

/* ---- resources larger than the cache's bound, read in pieces ----
 *
 * A few readers per package, each a decoder resuming where it stopped and the last ring
 * bytes it made: a file read in order (by one reader, or by several at once, each followed
 * by its own, or slightly out of order as the kernel's read-ahead asks) decodes each byte
 * once; a read before what every reader keeps starts a reader from the resource's start
 * (the least recently used one when all are busy).
 *
 * What a reader holds is within cache_mb (issue 32): its ring is a cache item of ring +
 * DBPF_STREAM_HELD bytes (the tail, never touched, stands for its decoder's state, which
 * lives as long as the ring), made when the reader is first needed and held from then on
 * as an open file's bytes are (others' for every request), until the package's tree goes
 * (cache_destroy frees it). A reader is added only while its item fits beside what others
 * hold, and while all the readers' items take at most half of cache_mb (the rest is for
 * the items requests read): past that the readers there are reused, and with none the
 * read is refused, as an item is (the cache's refusal, counted in /info). The ring is a
 * sixteenth of cache_mb (64 KiB to STREAM_RING), so cache_mb=1 holds one reader, 4 MiB
 * three, 16 MiB and more all four (5.5 MiB of 1 MiB rings). */

struct stream_reader {
    struct cached c;         /* first: the cache hands it back; its bytes: the ring */
    struct stream_pool *p;
    struct pkg_res *r; /* the resource it reads (NULL: unused) */
    struct dbpf_reader *d;
    struct map_input in;
    uint64_t pos;  /* bytes made so far */
    uint8_t *ring; /* the item's bytes (NULL: not made): byte x (pos - ring <= x < pos) at ring[x % ring] */
    uint64_t used; /* when it last served (least recently used goes first) */
};

struct stream_pool {
    pthread_mutex_t lock; /* a view's own: taken after the tree's, before the cache's */
    struct stream_reader rd[STREAM_READERS];
    struct cache *cache;
    size_t ring; /* bytes each reader keeps */
    uint64_t tick;
    uint64_t starts, made; /* readers started from a resource's start; bytes decoded */
};

/* A reader's item: its ring and the room its decoder takes (malloc'd, the tail untouched:
 * a block this large is mapped, so untouched pages cost nothing but the count). */
static enum s3_err produce_ring(struct cached *c, uint8_t **data, size_t *size, char *err, size_t errlen)
{
    struct stream_reader *x = (struct stream_reader *)c;
    *size = x->p->ring + DBPF_STREAM_HELD;
    if (!(*data = malloc(*size)))
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    return S3_OK;
}

static struct stream_pool *stream_pool_new(struct cache *cache)
{
    struct stream_pool *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    pthread_mutex_init(&p->lock, NULL);
    p->cache = cache;
    size_t part = cache_limit(cache) / 16;
    p->ring = part > STREAM_RING ? STREAM_RING : part < STREAM_RING_MIN ? STREAM_RING_MIN : part;
    for (int i = 0; i < STREAM_READERS; i++) {
        p->rd[i].p = p;
        p->rd[i].c.produce = produce_ring;
        p->rd[i].c.hint = p->ring + DBPF_STREAM_HELD;
    }
    return p;
}

/* After cache_destroy (the tree's end): the rings were the cache's and are gone. */
static void stream_pool_free(struct stream_pool *p)
{
    if (!p)
        return;
    for (int i = 0; i < STREAM_READERS; i++)
        dbpf_reader_free(p->rd[i].d);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

/* Gives reader x its ring (a cache item held from now on): S3_OK; LIMIT with err when
 * it does not fit beside what others hold (the cache's refusal); NOMEM. */
static enum s3_err ring_make(struct stream_pool *p, struct stream_reader *x, char *err, size_t errlen)
{
    size_t size;
    const uint8_t *b;
    enum s3_err e = cache_pin(p->cache, &x->c, &b, &size, err, errlen); /* LIMIT, or the ring's NOMEM */
    if (e)
        return e;
    cache_hold_handle(p->cache, &x->c); /* kept while the package lives, as others' */
    cache_unpin(p->cache, &x->c);
    x->ring = (uint8_t *)b; /* held: the bytes stay */
    return S3_OK;
}

/* The reader to serve byte off of r (*out): one keeping it or behind it (the nearest),
 * else one started anew: an unused one whose ring fits in the cache, or the least
 * recently used of those made. S3_OK; LIMIT (no ring fits: err) or NOMEM when none can
 * be had. */
static enum s3_err stream_reader_for(struct stream_pool *p, struct pkg_res *r, uint64_t off,
                                     struct stream_reader **out, char *err, size_t errlen)
{
    struct stream_reader *best = NULL, *old = NULL, *unmade = NULL;
    uint64_t item = p->ring + DBPF_STREAM_HELD, made = 0;
    for (int i = 0; i < STREAM_READERS; i++) {
        struct stream_reader *x = &p->rd[i];
        if (!x->ring) {
            unmade = unmade ? unmade : x;
            continue;
        }
        made += item;
        uint64_t kept = x->pos > p->ring ? x->pos - p->ring : 0;
        bool fits = x->r == r && x->d && kept <= off;
        /* one that keeps off is best; else the one closest behind it */
        if (fits && (!best || (best->pos <= off && x->pos > best->pos)))
            best = x;
        if (!old || !x->r || (old->r && x->used < old->used))
            old = x;
    }
    *out = best;
    if (best)
        return S3_OK;
    enum s3_err e = S3_OK;
    bool room = !old || made + item <= cache_limit(p->cache) / 2; /* the first: as any item */
    if (unmade && (!old || old->r) && room && (e = ring_make(p, unmade, err, errlen)) == S3_OK)
        old = unmade; /* a reader more, within the bound */
    if (!old)
        return e; /* the cache's refusal, or no memory */
    const struct dbpf_entry *de = &r->v->d.e[r->i];
    dbpf_reader_free(old->d);
    old->r = NULL;
    old->in = (struct map_input){&r->v->fs->src, de->offset};
    old->d = dbpf_reader_new(r->codec, read_stored, &old->in, de->stored_size, de->mem_size);
    if (!old->d)
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    old->r = r;
    old->pos = 0;
    p->starts++;
    tree_touch(r->v->fs->tree); /* /info shows the starts */
    *out = old;
    return S3_OK;
}

static enum s3_err read_streamed(struct tree *t, void *ctx, uint64_t arg, uint64_t off, void *buf, size_t len,
                                 size_t *got_out)
{
    (void)t, (void)arg;
    struct pkg_res *r = ctx;
    struct stream_pool *p = r->v->pool;
    uint64_t size = r->v->d.e[r->i].mem_size;
    *got_out = 0;
    if (off >= size)
        return S3_OK;
    len = size - off < len ? (size_t)(size - off) : len;
    pthread_mutex_lock(&p->lock);
    char why[300];
    struct stream_reader *x = NULL;
    enum s3_err rc = stream_reader_for(p, r, off, &x, why, sizeof why);
    size_t got = 0;
    while (x && got < len) {
        uint64_t at = off + got;
        size_t slot = (size_t)(x->pos % p->ring);
        if (at < x->pos) { /* kept: copied up to the ring's end */
            size_t from = (size_t)(at % p->ring), k = (size_t)(x->pos - at);
            k = k < len - got ? k : len - got;
            k = k < p->ring - from ? k : p->ring - from;
            memcpy((uint8_t *)buf + got, x->ring + from, k);
            got += k;
            continue;
        }
        char err[200];
        size_t room = p->ring - slot < DBPF_STREAM_PIECE ? p->ring - slot : DBPF_STREAM_PIECE;
        ptrdiff_t k = dbpf_reader_next(x->d, x->ring + slot, room, err, sizeof err);
        if (k <= 0) { /* the stream broke (the file changed?) or ended early: start over next time */
            dbpf_reader_free(x->d);
            x->d = NULL;
            x->r = NULL;
            break;
        }
        x->pos += (uint64_t)k;
        p->made += (uint64_t)k;
    }
    if (x)
        x->used = ++p->tick;
    if (x && got < len)
        rc = S3_ERR_IO;
    pthread_mutex_unlock(&p->lock);
    *got_out = rc == S3_OK ? got : 0;
    return rc;
}

/* The format of a streamed resource's first bytes (its first 64 KiB decoded), for the
 * nested directory: only when they say a format the table opens here, or the type
 * promises one, is the resource detected (and expanded) whole. */
static bool streamed_maybe_nested(struct pkg_view *v, struct pkg_res *r, const struct dbpf_entry *e)
{
    if (promised_dir(e->type))
        return true;
    size_t want = e->mem_size < (64u << 10) ? e->mem_size : (64u << 10), got = 0;
    uint8_t *head = malloc(want ? want : 1);
    struct map_input in = {&v->fs->src, e->offset};
    struct dbpf_reader *d = dbpf_reader_new(r->codec, read_stored, &in, e->stored_size, e->mem_size);
    char err[200];
    for (ptrdiff_t k = 1; head && d && got < want && k > 0; got += (size_t)(k > 0 ? k : 0))
        k = dbpf_reader_next(d, head + got, want - got, err, sizeof err);
    dbpf_reader_free(d);
    bool maybe = !head || !d; /* out of memory: the whole detection decides */
    if (!maybe) {
        struct mem_src_ctx mc;
        struct s3_src src;
        struct detect_result det;
        mem_src_init(&src, &mc, head, got);
        maybe = detect_format(&src, &det) == 0 && (nested_formats(e->type) & (1u << det.format));
    }
    free(head);
    return maybe;
}

static enum s3_err populate_nested(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    struct pkg_res *r = ctx;
    struct pkg_view *v = r->v;
    const struct dbpf_entry *e = &v->d.e[r->i];
    char origin[256], err[256];
    snprintf(origin, sizeof origin, "resource %s, stored at offset %" PRIu32 " (%" PRIu32 " bytes, %s)%s",
             v->dirname[r->i], e->offset, e->stored_size, dbpf_compression_name(r->codec),
             r->codec == DBPF_COMP_STORED ? "" : ", offsets are in the expanded bytes");
    source_hold(&r->src); /* the nested view's opening reads it piece by piece */
    enum s3_err rc = v->fs->open_at(v->fs, dir, &r->src, origin, nested_formats(e->type), &r->nested, err,
                                    sizeof err);
    if (rc == S3_OK)
        rc = tree_populate(t, dir);
    else if (rc != S3_ERR_NOMEM) { /* NOMEM fails the listing, never reads as a broken file */
        add_error(t, dir, r->nested_dir, err);
        rc = S3_OK;
    }
    source_release(&r->src);
    return rc;
}

/* The nested directory (rig/, ...) when the bytes are a format the table opens in a
 * resource of this type (for rig resources any rig encoding, for any type a bare Granny
 * file); else, when the type promises a format, that directory's .error. */
static void add_nested(struct pkg_view *v, uint32_t dir, struct pkg_res *r)
{
    struct tree *t = v->fs->tree;
    const struct dbpf_entry *e = &v->d.e[r->i];
    struct detect_result det;
    const char *promised = promised_dir(e->type);
    if (r->streamed && !streamed_maybe_nested(v, r, e))
        return; /* its first bytes are no format the table opens here */
    bool known = detect_format(&r->src.src, &det) == 0;
    if (known && (nested_formats(e->type) & (1u << det.format))) {
        r->nested_dir = s3_formats[det.format].pkg_dir;
        uint32_t ino = tree_add_dir(t, dir, r->nested_dir, "dbpf.nested", populate_nested, r, 0);
        tree_set_span(t, ino, e->offset, e->stored_size);
        r->nested_ino = ino;
    } else if (promised) {
        char why[300];
        if (known)
            snprintf(why, sizeof why, "a %s resource holding another format (%s)", promised, format_name(det.format));
        add_error(t, dir, promised, known ? why : det.why);
    }
}

static enum s3_err populate_resource(struct tree *t, uint32_t dir, void *ctx, uint64_t i)
{
    struct pkg_view *v = ctx;
    const struct dbpf_entry *e = &v->d.e[i];
    if (e->state == DBPF_OK && source_check(&v->fs->src))
        return S3_ERR_IO;
    add_field(v, dir, (uint32_t)i, "type", 0, "0x%08" PRIx64 "\n", e->type);
    add_field(v, dir, (uint32_t)i, "group", 1, "0x%08" PRIx64 "\n", e->group);
    uint32_t ino = tree_add_textf(t, dir, "instance", "u64", "0x%016" PRIx64 "\n", e->instance);
    uint64_t hi = dbpf_field_pos(&v->d, (uint32_t)i, 2), lo = dbpf_field_pos(&v->d, (uint32_t)i, 3);
    tree_set_span(t, ino, hi ? hi : lo, hi ? 8 : 4);
    add_field(v, dir, (uint32_t)i, "offset", 4, "%" PRIu64 "\n", e->offset);
    add_field(v, dir, (uint32_t)i, "stored_size", 5, "%" PRIu64 "\n", e->stored_size);
    add_field(v, dir, (uint32_t)i, "memory_size", 6, "%" PRIu64 "\n", e->mem_size);
    const char *cn = dbpf_compression_name(e->compression);
    if (e->extended) {
        if (cn)
            ino = tree_add_textf(t, dir, "compression", "dbpf.compression", "%s\n", cn);
        else
            ino = tree_add_textf(t, dir, "compression", "dbpf.compression", "0x%04x\n", e->compression);
        tree_set_span(t, ino, dbpf_field_pos(&v->d, (uint32_t)i, 7), 2);
        add_field(v, dir, (uint32_t)i, "committed", 8, "%" PRIu64 "\n", e->committed);
    } else {
        tree_add_textf(t, dir, "compression", "dbpf.compression", "none given\n");
    }
    tree_add_textf(t, dir, "state", "text", "%s\n", state_name(e->state));
    if (e->state != DBPF_OK)
        return S3_OK;
    tree_add_range(t, dir, "stored.bin", "dbpf.stored", e->offset, e->stored_size);
    struct pkg_res *r = resource(v, (uint32_t)i);
    if (!r)
        return S3_ERR_NOMEM; /* counted by the tree: the listing fails, never shorter */
    if (r->note && diag_add(&v->fs->diag, "%s: %s", v->dirname[i], r->note)) {
        resource_done(r);
        return S3_ERR_NOMEM; /* never an /info short of it: the next listing warns */
    }
    if (!r->ok) {
        add_error(t, dir, "data", r->err);
        resource_done(r);
        return S3_OK;
    }
    if (r->codec == DBPF_COMP_STORED) {
        tree_add_range(t, dir, "data.bin", "dbpf.data", e->offset, e->stored_size);
    } else {
        ino = tree_add_gen(t, dir, "data.bin", "dbpf.data", e->mem_size, r->streamed ? read_streamed : read_expanded,
                           r, 0);
        tree_set_span(t, ino, e->offset, e->stored_size);
    }
    add_nested(v, dir, r);
    resource_done(r);
    return S3_OK;
}

/* Bytes of an entry's index record: seven u32 fields less the constant ones, plus the
 * compression and committed words when present. */
static uint64_t record_size(const struct pkg_view *v, const struct dbpf_entry *e)
{
    return 28 - 4 * (uint64_t)__builtin_popcount(v->d.index_flags & 7) + (e->extended ? 4 : 0);
}

static enum s3_err populate_resources(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    struct pkg_view *v = ctx;
    if (source_check(&v->fs->src))
        return S3_ERR_IO;
    enum s3_err e = load_names(v);
    for (size_t k = 0; e == S3_OK && k < v->nname_notes; k++)
        e = diag_add(&v->fs->diag, "%s", v->name_notes[k]); /* NOMEM: the listing fails, its retry warns */
    if (e)
        return e;
    for (uint32_t i = 0; i < v->d.count; i++) {
        const struct dbpf_entry *e = &v->d.e[i];
        uint32_t ino = tree_add_dir(t, dir, v->dirname[i], "dbpf.resource", populate_resource, v, i);
        v->res_dir[i] = ino;
        if (e->state == DBPF_OK)
            tree_set_span(t, ino, e->offset, e->stored_size);
        else
            tree_set_span(t, ino, e->record, record_size(v, e));
    }
    return S3_OK;
}

/* /by-type/TAG/NAME -> ../../resources/NAME */
static enum s3_err populate_type(struct tree *t, uint32_t dir, void *ctx, uint64_t g)
{
    struct pkg_view *v = ctx;
    enum s3_err e = load_names(v);
    if (e)
        return e;
    const struct type_group *grp = &v->groups[g];
    for (uint32_t k = 0; k < grp->n; k++) {
        uint32_t i = v->by_type[grp->start + k];
        char target[300];
        snprintf(target, sizeof target, "../../resources/%s", v->dirname[i]);
        tree_add_link(t, dir, v->dirname[i], target);
    }
    return S3_OK;
}

/* A group's name in /by-type and /info: the tag, or for an untagged type its id as 0x and
 * eight hex digits (0x02DC343F). */
static void type_dir_name(const struct pkg_view *v, char *out, size_t size, uint32_t type)
{
    const char *tag, *ext;
    if (dbpf_type_names(type, v->sims4, &tag, &ext))
        snprintf(out, size, "%s", tag);
    else
        snprintf(out, size, "0x%08" PRIX32, type);
}

static enum s3_err populate_by_type(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    struct pkg_view *v = ctx;
    for (uint32_t g = 0; g < v->ngroups; g++) {
        char name[16];
        type_dir_name(v, name, sizeof name, v->groups[g].type);
        tree_add_dir(t, dir, name, "dbpf.by_type", populate_type, v, g);
    }
    return S3_OK;
}

static enum s3_err populate_header(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    struct pkg_view *v = ctx;
    uint32_t ino = tree_add_textf(t, dir, "magic", "bytes", "DBPF\n");
    tree_set_span(t, ino, 0, 4);
    for (int i = 0; i < DBPF_HEADER_FIELDS; i++)
        add_u32(t, dir, dbpf_header_field_names[i], v->d.h[i], dbpf_header_field_offsets[i]);
    return S3_OK;
}

static enum s3_err populate_pkg_root(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    struct pkg_view *v = ctx;
    add_info_and_unparsed(v->fs, dir);
    tree_add_range(t, dir, "header.bin", "dbpf.header", 0, DBPF_HEADER_SIZE);
    uint32_t h = tree_add_dir(t, dir, "header", "dbpf.header", populate_header, v, 0);
    tree_set_span(t, h, 0, DBPF_HEADER_SIZE);
    /* an index of no entries is not checked by the parser: it may lie past the end */
    uint64_t size = v->fs->src.size;
    bool inside = v->d.index_pos <= size && v->d.index_size <= size - v->d.index_pos;
    if ((v->d.count || v->d.h[DBPF_H_INDEX_COUNT] == 0) && inside)
        tree_add_range(t, dir, "index.bin", "dbpf.index", v->d.index_pos, v->d.index_size);
    if (!v->d.index_ok) {
        add_error(t, dir, "index", v->d.index_err);
    } else if (!inside) {
        char msg[160];
        snprintf(msg, sizeof msg, "index [0x%" PRIx64 ", +%" PRIu64 ") of no entries is not inside the file (%" PRIu64
                 " bytes)", v->d.index_pos, v->d.index_size, size);
        add_error(t, dir, "index", msg);
    }
    uint32_t r = tree_add_dir(t, dir, "resources", "dbpf.resources", populate_resources, v, 0);
    tree_set_span(t, r, v->d.index_pos, v->d.index_size);
    v->resources_dir = r;
    tree_add_dir(t, dir, "by-type", "dbpf.by_type", populate_by_type, v, 0);
    return S3_OK;
}

/* ---- the skeletons it offers ---- */

/* The skeletons of one rig resource (its nested view's), added to into labelled
 * resources/NAME[/LABEL]; a rig that offers none is said in /info. */
static enum s3_err add_resource_skeletons(struct pkg_view *v, uint32_t i, struct rig_set *into)
{
    struct tree *t = v->fs->tree;
    if (!v->res_dir[i] || tree_populate(t, v->res_dir[i]))
        return S3_OK;
    struct pkg_res *r = v->res[i];
    if (!r || !r->nested_ino || tree_populate(t, r->nested_ino) || !r->nested)
        return S3_OK; /* not a rig the table opens: its rig.error says why */
    char err[200] = "";
    const struct rig_set *set = view_skeletons(r->nested, err, sizeof err);
    for (size_t k = 0; k < set->n; k++) {
        char *label = NULL;
        struct mdl_skeleton copy;
        const char *sub = set->r[k].label;
        if (asprintf(&label, "resources/%s%s%s", v->dirname[i], sub[0] ? "/" : "", sub) < 0)
            label = NULL;
        if (!label || mdl_skeleton_copy(&set->r[k].skel, &copy))
            snprintf(err, sizeof err, "out of memory");
        else
            rig_set_add(into, label, &copy, err, sizeof err);
        free(label);
    }
    if (err[0])
        return diag_add(&v->fs->diag, "%s: no skeleton to bind meshes to: %s", v->dirname[i], err);
    return S3_OK;
}

/* view_skeletons_fn of a package: every rig resource's skeletons, in index order (their
 * directories are populated to open them, as listing them would). */
static enum s3_err pkg_skeletons(struct s3fs *fs, void *ctx, struct rig_set *into, char *err, size_t errlen)
{
    struct pkg_view *v = ctx;
    struct tree *t = fs->tree;
    enum s3_err e = tree_populate(t, fs->root);
    if (!e && !v->resources_dir)
        e = S3_ERR_LIMIT; /* no /resources: the node limit refused it */
    if (!e)
        e = tree_populate(t, v->resources_dir);
    if (e)
        return s3_fail(e, err, errlen, "the resources cannot be listed");
    size_t before = into->n;
    for (uint32_t i = 0; i < v->d.count; i++)
        if (v->d.e[i].type == DBPF_TYPE_RIG && v->d.e[i].state == DBPF_OK &&
            add_resource_skeletons(v, i, into) == S3_ERR_NOMEM)
            return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory for a warning");
    if (into->n > before)
        return S3_OK;
    return s3_fail(S3_ERR_NOT_FOUND, err, errlen, "no rig resource holds a skeleton");
}

/* ---- /info ---- */

static void info_names(struct s3fs *fs, struct sbuf *out, void *ctx)
{
    (void)fs;
    struct pkg_view *v = ctx;
    if (v->names_loaded)
        sb_printf(out, "names: %" PRIu64 " from %u name maps\n", v->nnames, v->namemaps);
    else
        sb_printf(out, "names: not read yet (list /resources)\n");
    if (v->nstreamed) {
        pthread_mutex_lock(&v->pool->lock);
        uint64_t starts = v->pool->starts;
        pthread_mutex_unlock(&v->pool->lock);
        sb_printf(out,
                  "streamed: %" PRIu32 " resources larger than cache_mb, decoded in pieces as they are read; %" PRIu64
                  " reads from a resource's start\n",
                  v->nstreamed, starts);
    }
}

/* The package's facts for /info, and its index's warnings: S3_OK, or NOMEM when a
 * warning's memory is refused (the open fails: never an /info short of one). */
static enum s3_err describe(struct pkg_view *v)
{
    struct s3fs *fs = v->fs;
    struct dbpf *d = &v->d;
    struct sbuf *f = &fs->facts;
    sb_printf(f, "package: The Sims %d (DBPF %u.%u)\n", v->sims4 ? 4 : 3, d->h[DBPF_H_MAJOR], d->h[DBPF_H_MINOR]);
    sb_printf(f, "entries: %" PRIu32 "\n", d->count);
    sb_printf(f, "index_position: %" PRIu64 "\n", d->index_pos);
    sb_printf(f, "index_size: %" PRIu64 "\n", d->index_size);
    sb_printf(f, "index_flags: 0x%08" PRIx32 "%s%s%s\n", d->index_flags, d->index_flags & 1 ? " constant-type" : "",
              d->index_flags & 2 ? " constant-group" : "", d->index_flags & 4 ? " constant-instance-high" : "");
    cover_add(&fs->cover, 0, DBPF_HEADER_SIZE);
    cover_add(&fs->cover, d->index_pos, d->index_size);
    uint32_t states[5] = {0}, dups = 0, comp[6] = {0}; /* none given, stored, zlib, refpack, streamable, other */
    for (uint32_t i = 0; i < d->count; i++) {
        const struct dbpf_entry *e = &d->e[i];
        states[e->state < 5 ? e->state : 0]++;
        dups += e->dup > 0;
        if (e->state == DBPF_OK) {
            cover_add(&fs->cover, e->offset, e->stored_size);
            v->mem_total += e->mem_size;
        }
        if (e->state == DBPF_DELETED)
            continue;
        int k = !e->extended ? 0 : e->compression == DBPF_COMP_STORED ? 1 : e->compression == DBPF_COMP_ZLIB ? 2
              : e->compression == DBPF_COMP_REFPACK ? 3 : e->compression == DBPF_COMP_STREAMABLE ? 4 : 5;
        comp[k]++;
    }
    for (uint32_t g = 0; g < v->ngroups; g++) { /* per tag (or untagged type), in order of first appearance */
        char name[16];
        type_dir_name(v, name, sizeof name, v->groups[g].type);
        sb_printf(f, "type %s: %" PRIu32 "\n", name, v->groups[g].n);
    }
    static const char *const cn[6] = {"none given", "stored", "zlib", "refpack", "streamable", "other"};
    for (int k = 0; k < 6; k++)
        if (comp[k])
            sb_printf(f, "compression %s: %" PRIu32 "\n", cn[k], comp[k]);
    sb_printf(f, "deleted: %" PRIu32 "\nnull: %" PRIu32 "\nno_data: %" PRIu32 "\nduplicates: %" PRIu32 "\n",
              states[DBPF_DELETED], states[DBPF_NULL], states[DBPF_NO_DATA], dups);
    enum s3_err e = S3_OK;
    if (states[DBPF_OUTSIDE])
        e = diag_add(&fs->diag, "%" PRIu32 " entries point outside the file", states[DBPF_OUTSIDE]);
    if (e == S3_OK && !d->index_ok)
        e = diag_add(&fs->diag, "%s", d->index_err);
    return e;
}

/* -o rw: every header field (u32, docs/formats/dbpf.md: each is a fixed-size field) and
 * each index entry's fixed-size fields are fields of the file as published (their span
 * and type; little-endian): type, group (the constant word when stored once: every entry
 * takes it), offset, size on disk, size in memory and the committed word. The size on
 * disk shows its low 31 bits; bit 31 says whether the record holds the compression and
 * committed words (its length), so it is kept. The instance (u64), the compression (shown
 * by name) and the magic are not. */
static bool pkg_declared_value(struct s3fs *fs, uint32_t ino, struct view_value *out, void *ctx)
{
    (void)ctx; /* one hook for every package of the mount: the directory says whose */
    static const char *const entry_fields[] = {"type", "group", "offset", "stored_size", "memory_size",
                                               "committed"};
    struct tree *t = fs->tree;
    uint32_t dir = tree_parent(t, ino);
    const char *name = tree_name(t, ino);
    bool known = false;
    if (tree_dir_ctx(t, dir, populate_header)) {
        for (int i = 0; i < DBPF_HEADER_FIELDS && !known; i++)
            known = strcmp(name, dbpf_header_field_names[i]) == 0;
    } else if (tree_dir_ctx(t, dir, populate_resource)) {
        for (size_t i = 0; i < sizeof entry_fields / sizeof entry_fields[0] && !known; i++)
            known = strcmp(name, entry_fields[i]) == 0;
    }
    if (!known || !view_value_as_published(t, ino, false, out))
        return false;
    if (strcmp(name, "stored_size") == 0)
        out->keep = 0x80000000u;
    return true;
}

/* The entry whose /resources directory is dir, or -1. The directories are made in entry
 * order, so their inode numbers grow with it (0, the node limit reached, only after the
 * last made): a binary search, never a walk per question. */
static int64_t entry_of_dir(const struct pkg_view *v, uint32_t dir)
{
    if (!v->resources_dir || !dir)
        return -1;
    uint32_t lo = 0, hi = v->d.count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2, at = v->res_dir[mid] ? v->res_dir[mid] : UINT32_MAX;
        if (at < dir)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < v->d.count && v->res_dir[lo] == dir ? (int64_t)lo : -1;
}

/* -o rw: a resource's data (its data.bin, or the directory where the view of what it holds
 * is nested) is replaced whole by new bytes after the package's end: its index entry's
 * offset, sizes and compression follow (docs/formats/dbpf.md). Only a record with the
 * compression word (bit 31 of the size on disk, kept) whose data is stored raw, zlib
 * (encoded again) or RefPack (stored raw: the project has no RefPack encoder); a
 * streamable, deleted or unknown one stays as it is. */
static bool pkg_part(struct s3fs *fs, uint32_t ino, struct view_part *out, void *ctx)
{
    (void)ctx; /* one hook for every package of the mount: the directory says whose */
    struct tree *t = fs->tree;
    uint32_t dir = tree_parent(t, ino);
    const struct pkg_view *v = tree_dir_ctx(t, dir, populate_resource);
    if (!v ||
        (strcmp(tree_name(t, ino), "data.bin") != 0 && tree_kind(t, ino) != NODE_DIR))
        return false;
    int64_t i = entry_of_dir(v, dir);
    if (i < 0)
        return false;
    const struct dbpf_entry *e = &v->d.e[i];
    uint16_t c = e->compression;
    if (e->state != DBPF_OK || !e->extended || (c != DBPF_COMP_STORED && c != DBPF_COMP_ZLIB && c != DBPF_COMP_REFPACK))
        return false;
    *out = (struct view_part){dbpf_field_pos(&v->d, (uint32_t)i, 4), dbpf_field_pos(&v->d, (uint32_t)i, 5),
                              dbpf_field_pos(&v->d, (uint32_t)i, 6), dbpf_field_pos(&v->d, (uint32_t)i, 7),
                              0x80000000u, c == DBPF_COMP_ZLIB, DBPF_COMP_ZLIB, DBPF_COMP_STORED};
    return out->offset_at && out->stored_at && out->memory_at && out->codec_at;
}

enum s3_err dbpf_view_open(struct s3fs *fs, char *err, size_t errlen)
{
    struct pkg_view *v = calloc(1, sizeof *v);
    if (!v)
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    v->fs = fs;
    enum s3_err e = dbpf_parse_header(&fs->src.src, &v->d, err, errlen);
    if (e != S3_OK) {
        free(v);
        return e;
    }
    if (tree_on_free(fs->tree, pkg_view_free, v)) {
        pkg_view_free(v);
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    }
    v->sims4 = v->d.h[DBPF_H_MINOR] == 1;
    if (dbpf_parse_index(&fs->src.src, &v->d, &fs->diag))
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory for the index");
    uint32_t n = v->d.count;
    v->pool = stream_pool_new(&fs->cache);
    if (!v->pool)
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    v->dirname = alloc_array(n, sizeof *v->dirname);
    v->res = alloc_array(n, sizeof *v->res);
    v->res_dir = alloc_array(n, sizeof *v->res_dir);
    if (!v->dirname || !v->res || !v->res_dir || group_types(v))
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory for the index");
    if (describe(v))
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory for the warnings");
    if ((e = tree_gen_item(read_expanded, expanded_item)))
        return s3_fail(e, err, errlen, "the table of generated files' items is full");
    if (view_add_info_hook(fs, info_names, v) || view_add_skeletons_hook(fs, pkg_skeletons, v) ||
        view_add_value_hook_shared(fs, pkg_declared_value) || view_add_part_hook_shared(fs, pkg_part))
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    return view_root(fs, "dbpf.package", populate_pkg_root, v);
}

bool dbpf_view_totals(struct s3fs *fs, uint32_t *count, uint64_t *bytes)
{
    if (fs->det.format != FMT_DBPF)
        return false;
    /* the view is the root's populate context */
    struct pkg_view *v = tree_dir_ctx(fs->tree, fs->root, populate_pkg_root);
    if (!v)
        return false;
    *count = v->d.count;
    *bytes = v->mem_total;
    return true;
}

void dbpf_view_stream_counts(struct s3fs *fs, uint64_t *starts, uint64_t *made)
{
    struct pkg_view *v = fs->det.format == FMT_DBPF ? tree_dir_ctx(fs->tree, fs->root, populate_pkg_root) : NULL;
    *starts = *made = 0;
    if (v) {
        pthread_mutex_lock(&v->pool->lock);
        *starts = v->pool->starts;
        *made = v->pool->made;
        pthread_mutex_unlock(&v->pool->lock);
    }
}

uint64_t dbpf_view_names_held_peak(struct s3fs *fs)
{
    struct pkg_view *v = fs->det.format == FMT_DBPF ? tree_dir_ctx(fs->tree, fs->root, populate_pkg_root) : NULL;
    return v ? v->names_held_peak : 0;
}

uint64_t dbpf_view_name_compares(struct s3fs *fs)
{
    struct pkg_view *v = fs->det.format == FMT_DBPF ? tree_dir_ctx(fs->tree, fs->root, populate_pkg_root) : NULL;
    return v ? v->name_compares : 0;
}

const char *dbpf_view_resource_name_at(struct s3fs *fs, uint32_t record)
{
    if (fs->det.format != FMT_DBPF)
        return NULL;
    struct pkg_view *v = tree_dir_ctx(fs->tree, fs->root, populate_pkg_root);
    if (!v || load_names(v))
        return NULL;
    uint32_t lo = 0, hi = v->d.count; /* records lie in index order: ascending */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (v->d.e[mid].record == record)
            return v->dirname[mid];
        if (v->d.e[mid].record < record)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}
