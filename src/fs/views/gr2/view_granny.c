/* The Granny container as a tree: /granny.gr2 and /granny/{header,sections}. */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs/views/gr2/view_granny.h"
#include "parse/base/err.h"
#include "parse/codec/oodle0.h"
#include "parse/codec/bitknit2.h"
#include "parse/codec/oodle1.h"
#include "parse/gr2/gr2broker.h"

static void gr2_view_free(void *p)
{
    struct gr2_view *v = p;
    if (v->extra_free)
        v->extra_free(v->extra);
    if (v->fixups)
        for (uint32_t i = 0; i < v->g.nsections; i++)
            free(v->fixups[i]);
    free(v->fixups);
    free(v->nfixups);
    free(v->items);
    free(v->pad);
    free(v->places);
    pthread_mutex_destroy(&v->state_lock);
    gr2_free(&v->g);
    free(v);
}

/* ---- section bytes and fixups for the object decoder ---- */

#define GR2_WHY_LEN 200

/* Runs in the producer (one per item at a time); it->err and it->expanded change only
 * here (state lock). */
static void set_item_state(struct gr2_secitem *it, int expanded, const char *err)
{
    pthread_mutex_lock(&it->v->state_lock);
    it->expanded = expanded;
    if (err)
        snprintf(it->err, sizeof it->err, "section %u: %s", it->sec, err);
    pthread_mutex_unlock(&it->v->state_lock);
}

int gr2_secitem_state(struct gr2_view *v, uint32_t sec, char *err, size_t errlen)
{
    pthread_mutex_lock(&v->state_lock);
    int expanded = v->items[sec].expanded;
    snprintf(err, errlen, "%s", v->items[sec].err);
    pthread_mutex_unlock(&v->state_lock);
    return expanded;
}

/* A BitKnit2 section, read through the source's s3_src. */
static enum s3_err produce_bitknit2(struct gr2_secitem *it, uint8_t **data, size_t *size, char *err, size_t errlen)
{
    struct gr2_view *v = it->v;
    const struct gr2_section *s = &v->g.sections[it->sec];
    enum s3_err e = source_check(&v->fs->src);
    if (e)
        return s3_fail(e, err, errlen, "section %u: read error (the file changed?)", it->sec);
    if ((e = bitknit2_expand(&v->fs->src.src, v->g.base + s->data_offset, s->data_size, s->expanded_size,
                             v->fs->opts.max_unpacked, data, NULL, err, errlen))) {
        /* the same bytes fail the same way: say it once in /info (not for lack of memory,
         * which the next try may have) */
        if (e != S3_ERR_NOMEM && source_check(&v->fs->src) == 0)
            set_item_state(it, -1, err);
        return e;
    }
    set_item_state(it, 1, NULL);
    *size = s->expanded_size;
    return S3_OK;
}

static enum s3_err expand_section(struct gr2_secitem *it, uint8_t **data, size_t *size, char *err, size_t errlen)
{
    struct gr2_view *v = it->v;
    const struct gr2_section *s = &v->g.sections[it->sec];
    if (s->compression == GR2_COMP_BITKNIT2)
        return produce_bitknit2(it, data, size, err, errlen);
    uint8_t *b = alloc_array(s->data_size, 1);
    if (!b)
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    enum s3_err rc = source_pread_checked(&v->fs->src, v->g.base + s->data_offset, b, s->data_size);
    if (rc) {
        free(b);
        return s3_fail(rc, err, errlen, "section %u: read error (the file changed?)", it->sec);
    }
    if (s->compression == GR2_COMP_OODLE1 || s->compression == GR2_COMP_OODLE0) {
        uint8_t *x; /* the two Oodle codecs take the same arguments */
        rc = (s->compression == GR2_COMP_OODLE0 ? oodle0_expand : oodle1_expand)(
            b, s->data_size, v->g.be, s->first16bit, s->first8bit, s->expanded_size, v->fs->opts.max_unpacked, &x,
            err, errlen);
        free(b);
        if (rc) {
            /* the same bytes fail the same way: remember it, say it once in /info; out of
             * memory is not kept (the next try may have it) */
            if (rc != S3_ERR_NOMEM)
                set_item_state(it, -1, err);
            return rc;
        }
        set_item_state(it, 1, NULL);
        b = x;
    }
    *data = b;
    *size = s->expanded_size;
    return S3_OK;
}

static enum s3_err produce_section(struct cached *c, uint8_t **data, size_t *size, char *err, size_t errlen)
{
    struct gr2_secitem *it = (struct gr2_secitem *)c;
    struct gr2_view *v = it->v;
    if (gr2_secitem_state(v, it->sec, err, errlen) < 0 || err[0])
        return S3_ERR_FORMAT; /* a decode that failed before: the same bytes fail the same way */
    /* the stored bytes may themselves be expanded (a rig in a package resource): read
     * piece by piece (BitKnit2), they are expanded once for this section */
    source_hold(&v->fs->src);
    enum s3_err rc = expand_section(it, data, size, err, errlen);
    source_release(&v->fs->src);
    return rc;
}

struct cached *gr2_view_section_item(struct gr2_view *v, uint32_t sec, struct cache **cache)
{
    if (sec >= v->g.nsections || v->g.sections[sec].expanded_size == 0)
        return NULL;
    *cache = &v->fs->cache;
    return &v->items[sec].c;
}

/* Why a section's expanded bytes cannot be had (empty string: they can). */
static void section_state(struct gr2_view *v, uint32_t i, char *err, size_t errlen)
{
    const struct gr2_section *s = &v->g.sections[i];
    err[0] = 0;
    if (s->expanded_size == 0)
        return;
    if (!s->data_ok)
        snprintf(err, errlen, "%s", s->data_err);
    else if (s->compression != GR2_COMP_NONE && s->compression != GR2_COMP_OODLE1 &&
             s->compression != GR2_COMP_OODLE0 && s->compression != GR2_COMP_BITKNIT2)
        snprintf(err, errlen, "section %u: %s compression is not supported (unsupported compression)", i,
                 gr2_compression_name(s->compression));
    else if (s->compression == GR2_COMP_NONE && s->data_size != s->expanded_size)
        snprintf(err, errlen, "section %u: uncompressed, but data_size %u != expanded_size %u", i, s->data_size,
                 s->expanded_size);
}

static int by_from(const void *a, const void *b)
{
    const struct gr2_fixup *x = a, *y = b;
    return x->from_offset < y->from_offset ? -1 : x->from_offset > y->from_offset;
}

/* The sections' fixups, read on the first pin. A table refused memory fails that pin
 * (NOMEM) and is read again by the next: only tables that cannot be used for their bytes
 * are kept as none (pointers stored there read as NULL, said in /info). */
static enum s3_err load_fixups(struct gr2_view *v)
{
    for (; v->fixups_loaded < v->g.nsections; v->fixups_loaded++) {
        uint32_t i = v->fixups_loaded;
        char err[GR2_WHY_LEN];
        enum s3_err e = gr2_read_fixups(&v->fs->src.src, &v->g, i, &v->fixups[i], &v->nfixups[i], err, sizeof err);
        if (e == S3_ERR_NOMEM)
            return e;
        if (e == S3_OK) {
            if (v->fixups[i])
                qsort(v->fixups[i], v->nfixups[i], sizeof *v->fixups[i], by_from);
        } else { /* not silent: objects reached through these pointers are missing from the tree */
            diag_add(&v->fs->diag,
                     "section %" PRIu32 ": its fixups cannot be used (%s): pointers stored in it read as NULL", i,
                     v->g.sections[i].fixups_ok ? err : v->g.sections[i].fixups_err);
        }
    }
    return S3_OK;
}

/* ---- the sections a request holds (parse/gr2/gr2broker.h), pinned in the view's cache ---- */

#define GR2_MIN_BOUND (1u << 20) /* the smallest cache_mb */

static uint64_t request_bound(struct gr2_view *v)
{
    uint64_t limit = cache_limit(&v->fs->cache);
    return limit > GR2_MIN_BOUND ? limit : GR2_MIN_BOUND;
}

/* Tests: requests let go of every idle section at each settle point and drop its bytes
 * from the cache (unless another request pins them). */
static _Atomic bool eager_settle;
static _Atomic uint64_t eager_drops;

void gr2_view_test_eager_settle(bool on)
{
    eager_settle = on;
}

uint64_t gr2_view_test_eager_drops(void)
{
    return eager_drops;
}

static const uint8_t *pin_section(void *ctx, uint32_t sec, size_t *size, enum s3_err *reason, char *why,
                                  size_t whylen)
{
    struct gr2_view *v = ctx; /* the items' state is only read, under its lock */
    const uint8_t *d;
    *reason = cache_pin(&v->fs->cache, &v->items[sec].c, &d, size, why, whylen);
    return *reason ? NULL : d;
}

static void unpin_section(void *ctx, uint32_t sec)
{
    struct gr2_view *v = ctx;
    cache_unpin(&v->fs->cache, &v->items[sec].c);
}

static void forget_section(void *ctx, uint32_t sec)
{
    struct gr2_view *v = ctx;
    cache_forget(&v->fs->cache, &v->items[sec].c);
    eager_drops++;
}

static void section_refused(void *ctx, uint32_t sec)
{
    struct gr2_view *v = ctx;
    pthread_mutex_lock(&v->state_lock);
    v->items[sec].bounded = true; /* /info says so */
    pthread_mutex_unlock(&v->state_lock);
    tree_touch(v->fs->tree); /* a read may refuse it, outside any listing */
}

static _Atomic uint64_t test_refuse_at;

uint64_t gr2_view_test_refuse_fetch(uint64_t k)
{
    return atomic_exchange(&test_refuse_at, k);
}

/* The fetch gr2_view_test_refuse_fetch picked is refused, whatever the section. */
static const char *refused_by_test(void *ctx, uint32_t sec)
{
    (void)ctx, (void)sec;
    uint64_t k = test_refuse_at;
    while (k && !atomic_compare_exchange_weak(&test_refuse_at, &k, k - 1))
        ;
    return k == 1 ? "refused by a test (gr2_view_test_refuse_fetch)" : NULL;
}

static const struct gr2_broker_ops broker_ops = {.veto = refused_by_test,
                                                 .pin = pin_section,
                                                 .unpin = unpin_section,
                                                 .forget = forget_section,
                                                 .refused = section_refused};

enum s3_err gr2_view_pin(struct gr2_view *v, struct gr2_space *sp)
{
    memset(sp, 0, sizeof *sp);
    if (source_check(&v->fs->src)) /* the cache may still hold a changed file's sections */
        return S3_ERR_IO;
    enum s3_err e = gr2_broker_open(sp, &v->g, request_bound(v), eager_settle, &broker_ops, v);
    if (e == S3_OK)
        e = load_fixups(v);
    if (e) {
        gr2_broker_close(sp);
        return e;
    }
    sp->fixups = v->fixups;
    sp->nfixups = v->nfixups;
    for (uint32_t i = 0; i < v->g.nsections; i++) {
        char why[GR2_WHY_LEN];
        /* sizes up front (the walk and the table budgets weigh them); a section known
         * not to expand counts nothing, as when it was tried */
        bool fails = gr2_secitem_state(v, i, why, sizeof why) < 0 || why[0];
        gr2_broker_set_size(sp, i, fails ? 0 : v->g.sections[i].expanded_size);
        if (v->g.sections[i].expanded_size == 0)
            sp->data[i] = (const uint8_t *)"";
    }
    return S3_OK;
}

void gr2_view_unpin(struct gr2_view *v, struct gr2_space *sp)
{
    (void)v;
    gr2_broker_close(sp);
}

uint32_t gr2_view_nsections(const struct gr2_view *v)
{
    return v->g.nsections;
}

uint8_t *gr2_view_refusals(const struct gr2_view *v, const struct gr2_space *sp)
{
    uint32_t n = v->g.nsections;
    uint8_t *m = alloc_array(n, 1);
    for (uint32_t i = 0; m && i < n; i++)
        m[i] = !sp->data[i] && sp->why[i];
    return m;
}

enum s3_err gr2_view_pin_as(struct gr2_view *v, struct gr2_space *sp, const uint8_t *refused)
{
    enum s3_err rc = gr2_view_pin(v, sp);
    for (uint32_t i = 0; rc == S3_OK && refused && i < v->g.nsections; i++)
        if (refused[i] && !sp->data[i])
            sp->why[i] = "refused when the file was sized (cache_mb), so left out of it again";
    return rc;
}

bool gr2_view_refused_beyond(const struct gr2_view *v, const struct gr2_space *sp, const uint8_t *refused)
{
    for (uint32_t i = 0; i < v->g.nsections; i++)
        if (!sp->data[i] && sp->why[i] && !(refused && refused[i]))
            return true;
    return false;
}

void gr2_view_span(struct gr2_view *v, uint32_t sec, uint64_t off, uint64_t len, uint64_t *abs, uint64_t *alen)
{
    const struct gr2_section *s = &v->g.sections[sec];
    if (s->compression == GR2_COMP_NONE) {
        *abs = v->g.base + s->data_offset + off;
        *alen = len;
    } else {
        *abs = v->g.base + s->data_offset;
        *alen = s->data_size;
    }
}

static int by_section(const void *a, const void *b)
{
    const struct gr2_padding *x = a, *y = b;
    return x->sec != y->sec ? (x->sec < y->sec ? -1 : 1) : (x->off < y->off ? -1 : x->off > y->off);
}

static enum s3_err populate_header(struct tree *t, uint32_t dir, void *ctx, uint64_t arg);
static enum s3_err populate_section(struct tree *t, uint32_t dir, void *ctx, uint64_t i);

/* -o rw: the file header's words after the magic and each section header's words but the
 * compression (shown by name) are fields of the file as published (their span and type),
 * in the file's byte order (docs/formats/gr2.md: every header word follows the magic's
 * byte order). What is derived (byte_order, pointer_size, signature, crc_computed) and the
 * references (root_type, root_object: two words of one text) are not. */
static view_section_fn granny_sections; /* -o rw's section hook, below */

static bool granny_declared_value(struct s3fs *fs, uint32_t ino, struct view_value *out, void *ctx)
{
    static const char *const header[] = {"headers_size", "header_format", "version", "total_size", "crc",
                                         "section_array_offset", "section_count", "type_tag", "extra_tags",
                                         "string_table_crc"};
    static const char *const section[] = {"data_offset", "data_size", "expanded_size", "alignment",
                                          "first16bit", "first8bit", "fixup_offset", "fixup_count",
                                          "marshal_offset", "marshal_count"};
    (void)ctx; /* one hook for every Granny view of the mount: the directory says whose */
    struct tree *t = fs->tree;
    uint32_t dir = tree_parent(t, ino);
    const struct gr2_view *v = tree_dir_ctx(t, dir, populate_header), *sv = tree_dir_ctx(t, dir, populate_section);
    const char *name = tree_name(t, ino);
    const char *const *names = NULL;
    size_t n = 0;
    if (v)
        names = header, n = sizeof header / sizeof header[0];
    else if ((v = sv) != NULL)
        names = section, n = sizeof section / sizeof section[0];
    bool known = false;
    for (size_t i = 0; i < n && !known; i++)
        known = strcmp(name, names[i]) == 0;
    return known && view_value_as_published(t, ino, v->g.be, out);
}

enum s3_err gr2_view_new(struct s3fs *fs, uint64_t base, struct gr2_view **out, char *err, size_t errlen)
{
    *out = NULL;
    struct gr2_view *v = calloc(1, sizeof *v);
    if (!v)
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    v->fs = fs;
    enum s3_err e = gr2_parse(&fs->src.src, base, &v->g, &fs->diag, err, errlen);
    if (e != S3_OK)
        goto fail;
    uint32_t n = v->g.nsections;
    v->items = alloc_array(n, sizeof *v->items);
    v->fixups = alloc_array(n, sizeof *v->fixups);
    v->nfixups = alloc_array(n, sizeof *v->nfixups);
    if (!v->items || !v->fixups || !v->nfixups) {
        e = s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
        goto fail;
    }
    for (uint32_t i = 0; i < v->g.nsections; i++) {
        v->items[i].c.produce = produce_section;
        /* room made before expanding; none for a size the producer refuses anyway */
        if (v->g.sections[i].expanded_size <= fs->opts.max_unpacked)
            v->items[i].c.hint = v->g.sections[i].expanded_size;
        v->items[i].v = v;
        v->items[i].sec = i;
        section_state(v, i, v->items[i].err, sizeof v->items[i].err);
    }
    pthread_mutex_init(&v->state_lock, NULL);
    v->g.max_expanded = fs->opts.max_unpacked;
    if (gr2_find_padding(&fs->src.src, &v->g, &v->pad, &v->npad) == 0) /* without it: /unparsed */
        qsort(v->pad, v->npad, sizeof *v->pad, by_section);
    if (tree_on_free(fs->tree, gr2_view_free, v)) {
        gr2_view_free(v); /* everything it holds, its lock too */
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    }
    if (view_add_value_hook_shared(fs, granny_declared_value) || view_add_section_hook_shared(fs, granny_sections))
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory"); /* the tree frees v */
    *out = v;
    return S3_OK;
fail:
    free(v->items);
    free(v->fixups);
    free(v->nfixups);
    gr2_free(&v->g);
    free(v);
    return e;
}

uint64_t gr2_view_total_size(const struct gr2_view *v)
{
    return v->g.total_size;
}

static uint64_t abs_of(const struct gr2_view *v, uint64_t rel)
{
    return v->g.base + rel;
}

/* A "SECTION OFFSET" value file for a (u32, u32) reference. */
static void add_ref(struct gr2_view *v, uint32_t dir, const char *name, struct gr2_ref r, uint64_t rel)
{
    uint32_t ino = tree_add_textf(v->fs->tree, dir, name, "gr2.ref", "%" PRIu32 " %" PRIu32 "\n", r.section,
                                  r.offset);
    tree_set_span(v->fs->tree, ino, abs_of(v, rel), 8);
}

static enum s3_err populate_header(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    struct gr2_view *v = ctx;
    const struct gr2_file *g = &v->g;
    char hex[33];
    for (int i = 0; i < 16; i++)
        snprintf(hex + 2 * i, 3, "%02x", g->magic[i]);
    uint32_t ino = tree_add_textf(t, dir, "magic", "gr2.signature", "%s\n", hex);
    tree_set_span(t, ino, abs_of(v, 0), 16);
    ino = tree_add_textf(t, dir, "byte_order", "text", "%s\n", g->be ? "be" : "le");
    tree_set_span(t, ino, abs_of(v, 0), 16);
    ino = tree_add_textf(t, dir, "pointer_size", "text", "%d\n", g->pointer_bits);
    tree_set_span(t, ino, abs_of(v, 0), 16);
    tree_set_span(t, tree_add_textf(t, dir, "signature", "text", "%s\n", g->sig->name), abs_of(v, 0), 16);
    add_u32(t, dir, "headers_size", g->headers_size, abs_of(v, 16));
    add_u32(t, dir, "header_format", g->header_format, abs_of(v, 20));
    add_u32(t, dir, "version", g->version, abs_of(v, 0x20));
    add_u32(t, dir, "total_size", g->total_size, abs_of(v, 0x24));
    add_hex32(t, dir, "crc", g->crc, abs_of(v, 0x28));
    if (g->crc_checked) {
        ino = tree_add_textf(t, dir, "crc_computed", "crc32", "0x%08" PRIx32 "\n", g->crc_computed);
        tree_set_span(t, ino, abs_of(v, 0x20 + g->header_length), g->total_size - 0x20 - g->header_length);
    } else {
        add_error(t, dir, "crc_computed", "CRC not computed: total_size does not fit the file");
    }
    add_u32(t, dir, "section_array_offset", g->section_array_offset, abs_of(v, 0x2c));
    add_u32(t, dir, "section_count", g->section_count, abs_of(v, 0x30));
    add_ref(v, dir, "root_type", g->root_type, 0x34);
    add_ref(v, dir, "root_object", g->root_object, 0x3c);
    add_hex32(t, dir, "type_tag", g->type_tag, abs_of(v, 0x44));
    add_hex32_list(v->fs, dir, "extra_tags", g->extra_tags, 4, abs_of(v, 0x48));
    if (g->version == 7)
        add_hex32(t, dir, "string_table_crc", g->string_table_crc, abs_of(v, 0x58));
    return S3_OK;
}

/* A compressed table's bytes as stored (the u32 byte count and the stream). */
static void add_stored_table(struct gr2_view *v, uint32_t dir, const char *name, uint32_t offset, uint64_t stored)
{
    if (stored)
        tree_add_range(v->fs->tree, dir, name, "gr2.table_stored", abs_of(v, offset), stored);
}

/* The span and type of a table file: its records as is, or the compressed bytes. */
static void table_span(struct gr2_view *v, uint32_t ino, uint32_t i, uint32_t offset, uint64_t stored,
                       const char *type, uint32_t n)
{
    const struct gr2_section *s = &v->g.sections[i];
    tree_set_span(v->fs->tree, ino, abs_of(v, offset), stored);
    if (gr2_tables_compressed(s->compression) && n)
        set_typef(v->fs->tree, ino, "%s:%s[%" PRIu32 "]", gr2_compression_name(s->compression), type, n);
    else
        set_typef(v->fs->tree, ino, "%s[%" PRIu32 "]", type, n);
}

/* A section's fixup or marshalling table, one record a line: a text up to VIEW_TEXT_MAX,
 * else rendered on read (view_add_form_rows) from the records read again from the file as
 * a cache item, never a text whose size the file chooses kept in the tree. */
struct gr2_table_rows {
    struct gr2_view *v;
    uint32_t sec;
    bool marshal;
};

static enum s3_err table_row(const void *ctx, const uint8_t *form, uint64_t k, char *scratch, const char **text,
                             size_t *len)
{
    const struct gr2_table_rows *r = ctx;
    *text = scratch;
    if (r->marshal) {
        const struct gr2_marshal *m = (const struct gr2_marshal *)form + k;
        return view_row_printed(snprintf(scratch, VIEW_ROW_SCRATCH, "%" PRIu32 " %" PRIu32 " %" PRIu32 " %" PRIu32,
                                         m->count, m->offset, m->type_section, m->type_offset),
                                len);
    }
    const struct gr2_fixup *f = (const struct gr2_fixup *)form + k;
    return view_row_printed(snprintf(scratch, VIEW_ROW_SCRATCH, "%" PRIu32 " %" PRIu32 " %" PRIu32, f->from_offset,
                                     f->to_section, f->to_offset),
                            len);
}

/* The records (malloc'd) read from the file: the listing's form, and the cache's again. */
static enum s3_err table_records(const struct gr2_table_rows *r, uint8_t **form, size_t *len, uint32_t *n, char *err,
                                 size_t errlen)
{
    enum s3_err e;
    if (r->marshal) {
        struct gr2_marshal *m = NULL;
        e = gr2_read_marshals(&r->v->fs->src.src, &r->v->g, r->sec, &m, n, err, errlen);
        *form = (uint8_t *)m, *len = e ? 0 : (size_t)*n * sizeof *m;
    } else {
        struct gr2_fixup *f = NULL;
        e = gr2_read_fixups(&r->v->fs->src.src, &r->v->g, r->sec, &f, n, err, errlen);
        *form = (uint8_t *)f, *len = e ? 0 : (size_t)*n * sizeof *f;
    }
    return e;
}

static enum s3_err table_derive(const void *ctx, uint8_t **form, size_t *len, char *err, size_t errlen)
{
    uint32_t n;
    return table_records(ctx, form, len, &n, err, errlen);
}

/* The file NAME (fixups or marshalling) of section i's table, or NAME.error (ok false:
 * the header's reason, bad). */
static void add_table_rows(struct gr2_view *v, uint32_t dir, uint32_t i, bool marshal, bool ok, const char *bad)
{
    struct tree *t = v->fs->tree;
    const struct gr2_section *s = &v->g.sections[i];
    const char *name = marshal ? "marshalling" : "fixups";
    struct gr2_table_rows r = {v, i, marshal};
    uint8_t *form = NULL;
    size_t len;
    uint32_t n;
    char err[GR2_ERR];
    enum s3_err e = ok ? table_records(&r, &form, &len, &n, err, sizeof err) : S3_ERR_FORMAT;
    if (e == S3_ERR_NOMEM) {
        tree_note_oom(t); /* the listing fails (ENOMEM), never shorter */
    } else if (e) {
        add_error(t, dir, name, ok ? err : bad);
    } else {
        struct view_form f = {table_derive, table_row, &r, sizeof r};
        uint32_t ino = view_add_form_rows(v->fs, dir, name, NULL, &f, form, len, n);
        if (marshal)
            table_span(v, ino, i, s->marshal_offset, s->marshal_stored, "gr2.marshal", n);
        else
            table_span(v, ino, i, s->fixup_offset, s->fixup_stored, "gr2.fixup", n);
    }
    free(form);
}

static void add_fixups_file(struct gr2_view *v, uint32_t dir, uint32_t i)
{
    const struct gr2_section *s = &v->g.sections[i];
    if (gr2_tables_compressed(s->compression))
        add_stored_table(v, dir, "fixups_stored.bin", s->fixup_offset, s->fixup_stored);
    add_table_rows(v, dir, i, false, s->fixups_ok, s->fixups_err);
}

static void add_marshalling_file(struct gr2_view *v, uint32_t dir, uint32_t i)
{
    const struct gr2_section *s = &v->g.sections[i];
    if (gr2_tables_compressed(s->compression))
        add_stored_table(v, dir, "marshalling_stored.bin", s->marshal_offset, s->marshal_stored);
    add_table_rows(v, dir, i, true, s->marshal_ok, s->marshal_err);
}

/* NAME_padding.bin for the zero padding after each piece of section i. */
static void add_padding_files(struct gr2_view *v, uint32_t dir, uint32_t i)
{
    size_t lo = 0, hi = v->npad; /* the first padding of section i */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (v->pad[mid].sec < i)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t k = lo; k < v->npad && v->pad[k].sec == i; k++) {
        char name[32];
        snprintf(name, sizeof name, "%s_padding.bin", v->pad[k].after);
        tree_add_range(v->fs->tree, dir, name, "gr2.padding", abs_of(v, v->pad[k].off), v->pad[k].len);
    }
}

static enum s3_err section_read(struct tree *t, void *ctx, uint64_t arg, uint64_t off, void *buf, size_t len,
                                size_t *got)
{
    (void)t, (void)arg;
    struct gr2_secitem *it = ctx;
    /* an expansion refused memory is ENOMEM to this read (HACKING.md "Fault injection") */
    return cache_read(&it->v->fs->cache, &it->c, CACHE_ANY_SIZE, off, buf, len, got);
}

/* What an open data.bin holds: its section's expanded bytes (tree_hold). */
static struct cached *section_item(void *ctx, uint64_t arg, struct cache **cache)
{
    (void)arg;
    struct gr2_secitem *it = ctx;
    return gr2_view_section_item(it->v, it->sec, cache);
}

/* data.bin when the expanded bytes can be served; otherwise data.error saying why.
 * A compressed section is expanded here, on first use, to know which. */
static void add_data_file(struct gr2_view *v, uint32_t dir, uint32_t i)
{
    struct tree *t = v->fs->tree;
    const struct gr2_section *s = &v->g.sections[i];
    struct gr2_secitem *it = &v->items[i];
    if (s->expanded_size == 0) {
        tree_add_text(t, dir, "data.bin", "gr2.section_data", strdup(""), 0);
        return;
    }
    char why[200];
    if (gr2_secitem_state(v, i, why, sizeof why) < 0 || why[0]) {
        add_error(t, dir, "data", why);
        return;
    }
    if (s->compression == GR2_COMP_NONE) {
        tree_add_range(t, dir, "data.bin", "gr2.section_data", abs_of(v, s->data_offset), s->data_size);
        return;
    }
    char err[200];
    size_t size;
    const uint8_t *d;
    if (cache_pin(&v->fs->cache, &it->c, &d, &size, err, sizeof err)) {
        gr2_secitem_state(v, i, why, sizeof why); /* a decode failure, with its section number */
        add_error(t, dir, "data", why[0] ? why : err);
        return;
    }
    cache_unpin(&v->fs->cache, &it->c);
    uint32_t ino = tree_add_gen(t, dir, "data.bin", NULL, s->expanded_size, section_read, it, 0);
    tree_set_span(t, ino, abs_of(v, s->data_offset), s->data_size);
    set_typef(t, ino, "%s:gr2.section_data", gr2_compression_name(s->compression));
}

static enum s3_err populate_section(struct tree *t, uint32_t dir, void *ctx, uint64_t i)
{
    struct gr2_view *v = ctx;
    if (source_check(&v->fs->src)) /* the tables below are read from the file */
        return S3_ERR_IO;
    const struct gr2_section *s = &v->g.sections[i];
    uint64_t h = abs_of(v, s->header_pos);
    tree_add_range(t, dir, "header.bin", "gr2.section_header", h, GR2_SECTION_HEADER_SIZE);
    uint32_t ino = tree_add_textf(t, dir, "compression", "u32", "%s\n", gr2_compression_name(s->compression));
    tree_set_span(t, ino, h, 4);
    add_u32(t, dir, "data_offset", s->data_offset, h + 4);
    add_u32(t, dir, "data_size", s->data_size, h + 8);
    add_u32(t, dir, "expanded_size", s->expanded_size, h + 12);
    add_u32(t, dir, "alignment", s->alignment, h + 16);
    add_u32(t, dir, "first16bit", s->first16bit, h + 20);
    add_u32(t, dir, "first8bit", s->first8bit, h + 24);
    add_u32(t, dir, "fixup_offset", s->fixup_offset, h + 28);
    add_u32(t, dir, "fixup_count", s->fixup_count, h + 32);
    add_u32(t, dir, "marshal_offset", s->marshal_offset, h + 36);
    add_u32(t, dir, "marshal_count", s->marshal_count, h + 40);
    add_fixups_file(v, dir, (uint32_t)i);
    add_marshalling_file(v, dir, (uint32_t)i);
    if (s->data_ok)
        tree_add_range(t, dir, "stored.bin", "gr2.section_stored", abs_of(v, s->data_offset), s->data_size);
    else
        add_error(t, dir, "stored", s->data_err);
    add_data_file(v, dir, (uint32_t)i);
    add_padding_files(v, dir, (uint32_t)i);
    return S3_OK;
}

static void section_span(void *ctx, uint64_t list, uint32_t i, uint64_t *pos, uint64_t *size)
{
    (void)list;
    struct gr2_view *v = ctx;
    *pos = abs_of(v, v->g.sections[i].header_pos);
    *size = GR2_SECTION_HEADER_SIZE;
}

static enum s3_err populate_sections(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    struct gr2_view *v = ctx;
    view_add_numbered(t, dir, v->g.nsections, "gr2.section", populate_section, v, section_span, 0, NULL);
    return S3_OK;
}

static enum s3_err populate_granny(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    struct gr2_view *v = ctx;
    uint32_t h = tree_add_dir(t, dir, "header", "gr2.header", populate_header, v, 0);
    tree_set_span(t, h, abs_of(v, 0), 0x20 + v->g.header_length);
    uint32_t s = tree_add_dir(t, dir, "sections", "gr2.sections", populate_sections, v, 0);
    tree_set_span(t, s, abs_of(v, 0x20 + (uint64_t)v->g.section_array_offset),
                  (uint64_t)v->g.nsections * GR2_SECTION_HEADER_SIZE);
    if (v->g.sections_err[0])
        add_error(t, dir, "sections", v->g.sections_err);
    for (const struct view_hook *h = v->granny_extra.first; h; h = h->next)
        ((gr2_granny_extra_fn *)h->fn)(v, dir, h->ctx);
    return S3_OK;
}

enum s3_err gr2_view_add_granny_extra(struct gr2_view *v, gr2_granny_extra_fn *fn, void *ctx)
{
    return view_hooks_add(v->fs->tree, &v->granny_extra, (void (*)(void))fn, ctx);
}

void gr2_view_add(struct gr2_view *v, uint32_t dir)
{
    struct tree *t = v->fs->tree;
    enum s3_err e = tree_gen_item(section_read, section_item);
    if (e)
        tree_note_failure(t, e); /* the listing of dir fails with it */
    tree_add_range(t, dir, "granny.gr2", "gr2.file", v->g.base, v->g.limit);
    uint32_t g = tree_add_dir(t, dir, "granny", "gr2", populate_granny, v, 0);
    tree_set_span(t, g, v->g.base, v->g.limit);
    if (v->g.limit < v->g.total_size) {
        char msg[160];
        snprintf(msg, sizeof msg, "Granny data at 0x%" PRIx64 ": total_size %" PRIu32 " but only %" PRIu64
                 " bytes exist; granny.gr2 holds what exists", v->g.base, v->g.total_size, v->g.limit);
        add_error(t, dir, "granny", msg);
    }
}

/* One line per section, with its live expansion state. */
static void section_lines(struct s3fs *fs, struct sbuf *out, void *ctx)
{
    (void)fs;
    struct gr2_view *v = ctx;
    for (uint32_t i = 0; i < v->g.nsections; i++) {
        const struct gr2_section *s = &v->g.sections[i];
        char err[200], own[24];
        int expanded = gr2_secitem_state(v, i, err, sizeof err);
        /* the reason, without the "section N: " the line already starts with */
        int ownlen = snprintf(own, sizeof own, "section %" PRIu32 ": ", i);
        const char *why = strncmp(err, own, (size_t)ownlen) == 0 ? err + ownlen : err;
        const char *state = s->expanded_size == 0               ? "empty"
                            : s->compression == GR2_COMP_NONE && !err[0] ? "stored as is"
                            : expanded == 1                     ? "expanded"
                            : err[0]                            ? "cannot be expanded: "
                                                                : "expands on first use";
        sb_printf(out, "section %" PRIu32 ": %s, %" PRIu32 " stored, %" PRIu32 " expanded, %s%s\n", i,
                  gr2_compression_name(s->compression), s->data_size, s->expanded_size, state,
                  expanded != 1 && err[0] && s->expanded_size ? why : "");
        pthread_mutex_lock(&v->state_lock);
        bool bounded = v->items[i].bounded;
        pthread_mutex_unlock(&v->state_lock);
        if (bounded)
            sb_printf(out, "section %" PRIu32 ": refused to a request: with the other sections it needed, over the "
                           "cache_mb bound (%" PRIu64 " bytes); what lies in it there is an .error file\n",
                      i, request_bound(v));
    }
}

enum s3_err gr2_view_describe(struct gr2_view *v)
{
    const struct gr2_file *g = &v->g;
    struct sbuf *f = &v->fs->facts;
    struct cover *c = &v->fs->cover;
    sb_printf(f, "granny_offset: %" PRIu64 "\n", g->base);
    sb_printf(f, "granny_size: %" PRIu32 "\n", g->total_size);
    sb_printf(f, "gr2_signature: %s%s\n", g->sig->name, g->sig->alt_spelling ? " (little-endian spelling)" : "");
    sb_printf(f, "byte_order: %s\n", g->be ? "be" : "le");
    sb_printf(f, "pointer_size: %d\n", g->pointer_bits);
    sb_printf(f, "gr2_version: %" PRIu32 "\n", g->version);
    if (g->crc_checked)
        sb_printf(f, "gr2_crc: %s (stored 0x%08" PRIx32 ", computed 0x%08" PRIx32 ")\n",
                  g->crc == g->crc_computed ? "ok" : "mismatch", g->crc, g->crc_computed);
    else
        sb_printf(f, "gr2_crc: not checked\n");
    sb_printf(f, "sections: %" PRIu32 "\n", g->nsections);
    if (view_add_info_hook(v->fs, section_lines, v))
        return S3_ERR_NOMEM; /* never an /info without the section lines */
    cover_add(c, g->base, 0x20 + g->header_length);
    cover_add(c, abs_of(v, 0x20 + (uint64_t)g->section_array_offset), (uint64_t)g->nsections * GR2_SECTION_HEADER_SIZE);
    for (uint32_t i = 0; i < g->nsections; i++) {
        const struct gr2_section *s = &g->sections[i];
        if (s->data_ok)
            cover_add(c, abs_of(v, s->data_offset), s->data_size);
        cover_add(c, abs_of(v, s->fixup_offset), s->fixup_stored); /* 0 when it does not fit */
        cover_add(c, abs_of(v, s->marshal_offset), s->marshal_stored);
    }
    for (size_t k = 0; k < v->npad; k++)
        cover_add(c, abs_of(v, v->pad[k].off), v->pad[k].len);
    return S3_OK;
}

/* -o rw: the CRC of the Granny data a view shows at dir (the directory holding its
 * granny.gr2 and granny/), by the format's rule (gr2_crc_span): where the field is, the
 * range it covers (in the view's source) and the byte order. False when dir holds no
 * Granny view, the rule does not fit the data, or the stored CRC was wrong (not ours to
 * fix). Thread-safe: reads what the view parsed at its open. */
static bool gr2_view_crc_at(struct tree *t, uint32_t dir, uint64_t *field, uint64_t *from, uint64_t *to, bool *be)
{
    uint32_t gdir;
    if (tree_lookup(t, dir, "granny", &gdir))
        return false;
    const struct gr2_view *v = tree_dir_ctx(t, gdir, populate_granny);
    struct gr2_crc_span span;
    if (!v || !v->g.crc_checked || v->g.crc != v->g.crc_computed || !gr2_crc_span(&v->g, &span))
        return false;
    *field = v->g.base + span.field;
    *from = v->g.base + span.from;
    *to = v->g.base + span.to;
    *be = v->g.be;
    return true;
}

/* -o rw: the view and section of a compressed section's data.bin (its expanded bytes),
 * so that it can be written back stored raw (gr2_view_raw_plan). False for every other
 * node, and when the Granny data runs past the source's end. */
static bool gr2_view_section_at(struct tree *t, uint32_t ino, struct gr2_view **v, uint32_t *sec)
{
    const struct gr2_secitem *it = tree_gen_ctx(t, ino, section_read);
    if (!it || it->sec >= it->v->g.nsections || it->v->g.sections[it->sec].compression == GR2_COMP_NONE)
        return false;
    *v = it->v;
    *sec = it->sec;
    return it->v->g.total_size <= it->v->g.avail;
}

/* gr2_raw_section_plan (parse/gr2/gr2.h) for section sec of v, its data going at `at`
 * (relative to the Granny data); the section header's and total_size's places in v's
 * source into *header and *total_field. */
static enum s3_err gr2_view_raw_plan(struct gr2_view *v, uint32_t sec, uint64_t at, uint64_t len,
                                     struct gr2_raw_plan *p, uint64_t *header, uint64_t *total_field, char *err,
                                     size_t errlen)
{
    enum s3_err e = gr2_raw_section_plan(&v->fs->src.src, &v->g, sec, at, len, p, err, errlen);
    *header = abs_of(v, v->g.sections[sec].header_pos);
    *total_field = abs_of(v, p->total_field);
    return e;
}

static size_t place_slot(const struct gr2_place *p, size_t cap, uint32_t ino)
{
    size_t k = (ino * 2654435761u) & (cap - 1);
    while (p[k].ino && p[k].ino != ino)
        k = (k + 1) & (cap - 1);
    return k;
}

/* Room for one more place (load under a half): false when out of memory. */
static bool places_grow(struct gr2_view *v)
{
    if (2 * (v->nplaces + 1) <= v->capplaces)
        return true;
    size_t cap = v->capplaces ? 2 * v->capplaces : 256;
    struct gr2_place *n = calloc(cap, sizeof *n);
    if (!n)
        return false;
    for (size_t i = 0; i < v->capplaces; i++)
        if (v->places[i].ino)
            n[place_slot(n, cap, v->places[i].ino)] = v->places[i];
    free(v->places);
    v->places = n;
    v->capplaces = cap;
    return true;
}

void gr2_view_set_span(struct gr2_view *v, uint32_t ino, uint32_t sec, uint64_t off, uint64_t len)
{
    uint64_t abs, alen;
    gr2_view_span(v, sec, off, len, &abs, &alen);
    tree_set_span(v->fs->tree, ino, abs, alen);
    if (!ino || v->g.sections[sec].compression == GR2_COMP_NONE)
        return;
    if (!places_grow(v)) { /* the listing fails rather than show a node -o rw cannot place */
        tree_note_oom(v->fs->tree);
        return;
    }
    size_t k = place_slot(v->places, v->capplaces, ino);
    v->nplaces += v->places[k].ino == 0;
    v->places[k] = (struct gr2_place){ino, sec, off, len};
}

bool gr2_view_place(struct gr2_view *v, uint32_t ino, uint32_t *sec, uint64_t *off, uint64_t *len)
{
    struct tree *t = v->fs->tree;
    bool found = false;
    tree_lock(t);
    if (v->capplaces) {
        const struct gr2_place *p = &v->places[place_slot(v->places, v->capplaces, ino)];
        if (p->ino == ino) {
            *sec = p->sec, *off = p->off, *len = p->len;
            found = true;
        }
    }
    tree_unlock(t);
    return found;
}

bool gr2_view_expanded_at(struct tree *t, uint32_t dir, uint32_t ino, struct gr2_view **out, uint32_t *sec,
                          uint64_t *off, uint64_t *len)
{
    uint32_t gdir;
    if (tree_lookup(t, dir, "granny", &gdir))
        return false;
    struct gr2_view *v = tree_dir_ctx(t, gdir, populate_granny);
    if (!v || !gr2_view_place(v, ino, sec, off, len))
        return false;
    *out = v;
    return true;
}

/* Section sec's expanded bytes handed to use() while pinned (produced by the cache, within
 * its bound), so that -o rw copies them out a piece at a time (into a file) with no copy
 * of its own in memory: NOMEM, or IO when they cannot be had otherwise (err says why),
 * else what use returns (its reason in err). */
static enum s3_err gr2_view_expanded_use(struct gr2_view *v, uint32_t sec, view_bytes_use_fn *use, void *ctx,
                                         char *err, size_t errlen)
{
    struct gr2_secitem *it = &v->items[sec];
    size_t size;
    const uint8_t *d;
    enum s3_err e = cache_pin(&v->fs->cache, &it->c, &d, &size, err, errlen);
    if (e != S3_OK) /* out of memory stays so; the rest: the bytes cannot be had */
        return e == S3_ERR_NOMEM ? e : S3_ERR_IO;
    e = use(ctx, d, size, err, errlen);
    cache_unpin(&v->fs->cache, &it->c);
    return e;
}

/* Bytes [off, off+len) of section sec's expanded bytes into buf: S3_OK, or S3_ERR_IO
 * (they cannot be had, or the range runs past their end). */
static enum s3_err gr2_view_expanded_read(struct gr2_view *v, uint32_t sec, uint64_t off, void *buf, size_t len)
{
    struct gr2_secitem *it = &v->items[sec];
    char err[200];
    size_t size;
    const uint8_t *d;
    if (cache_pin(&v->fs->cache, &it->c, &d, &size, err, sizeof err))
        return S3_ERR_IO;
    bool inside = off <= size && len <= size - off;
    if (inside)
        memcpy(buf, d + off, len);
    cache_unpin(&v->fs->cache, &it->c);
    return inside ? S3_OK : S3_ERR_IO;
}

/* ---- -o rw: the Granny data lent to rw through the section hook (view.h) ---- */

static enum s3_err sections_use(struct view_sections *s, uint32_t sec, view_bytes_use_fn *use, void *ctx, char *err,
                                size_t errlen)
{
    return gr2_view_expanded_use((struct gr2_view *)s, sec, use, ctx, err, errlen);
}

static enum s3_err sections_read(struct view_sections *s, uint32_t sec, uint64_t off, void *buf, size_t len)
{
    return gr2_view_expanded_read((struct gr2_view *)s, sec, off, buf, len);
}

static enum s3_err sections_plan(struct view_sections *s, uint32_t sec, uint64_t at, uint64_t len,
                                 struct view_raw_plan *p, char *err, size_t errlen)
{
    _Static_assert(GR2_SECTION_HEADER_SIZE <= VIEW_SECTION_HEADER_MAX, "a section header fits the plan");
    struct gr2_raw_plan gp = {0};
    uint64_t header = 0, total_field = 0;
    enum s3_err e = gr2_view_raw_plan((struct gr2_view *)s, sec, at, len, &gp, &header, &total_field, err, errlen);
    memcpy(p->header, gp.header, sizeof gp.header);
    p->header_len = sizeof gp.header;
    p->header_at = header;
    p->after = gp.after; /* the caller's to free */
    p->after_len = gp.after_len;
    p->total = gp.total;
    memcpy(p->total_bytes, gp.total_bytes, sizeof p->total_bytes);
    p->total_at = total_field;
    return e;
}

/* The CRC by the format's rule (gr2_crc_span: from the header's end to total_size),
 * relative to the Granny data's start, when the stored one was right. */
static bool sections_crc(struct view_sections *s, uint64_t *field, uint64_t *from, bool *be)
{
    const struct gr2_view *v = (const struct gr2_view *)s;
    struct gr2_crc_span span;
    if (!v->g.crc_checked || v->g.crc != v->g.crc_computed || !gr2_crc_span(&v->g, &span))
        return false;
    *field = span.field;
    *from = span.from;
    *be = v->g.be;
    return true;
}

static const struct view_sections_ops granny_sections_ops = {sections_use, sections_read, sections_plan,
                                                             sections_crc};

void gr2_view_sections(struct gr2_view *v, struct view_section *out)
{
    out->s = (struct view_sections *)v; /* opaque to rw: only these functions read it */
    out->ops = &granny_sections_ops;
    out->fs = v->fs;
    out->base = v->g.base;
    out->total = v->g.total_size;
    out->avail = v->g.avail;
    out->limit = v->g.limit;
}

/* The section hook of every Granny view of a mount (added once: it finds the view from the
 * file): the data shown at dir, a node's place in a compressed section, a compressed
 * section's data.bin. A table's NAME.bin is the object tree's to say (gobj_sections). */
static bool granny_sections(struct s3fs *fs, enum view_section_ask ask, uint32_t dir, uint32_t ino,
                            struct view_section *out, void *ctx)
{
    (void)ctx;
    struct tree *t = fs->tree;
    struct gr2_view *v = NULL;
    uint32_t gdir;
    switch (ask) {
    case VIEW_SECTION_DATA:
        if (tree_lookup(t, dir, "granny", &gdir) || !(v = tree_dir_ctx(t, gdir, populate_granny)) || v->g.limit == 0)
            return false;
        out->crc_ok = gr2_view_crc_at(t, dir, &out->crc_field, &out->crc_from, &out->crc_to, &out->crc_be);
        break;
    case VIEW_SECTION_PLACE:
        if (!gr2_view_expanded_at(t, dir, ino, &v, &out->sec, &out->off, &out->len))
            return false;
        break;
    case VIEW_SECTION_FILE:
        if (!gr2_view_section_at(t, ino, &v, &out->sec))
            return false;
        break;
    default:
        return false;
    }
    gr2_view_sections(v, out);
    return true;
}
