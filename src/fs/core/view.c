#include "fs/core/view.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/base/err.h"

uint32_t add_u32(struct tree *t, uint32_t dir, const char *name, uint32_t v, uint64_t abs_off)
{
    uint32_t ino = tree_add_textf(t, dir, name, "u32", "%" PRIu32 "\n", v);
    tree_set_span(t, ino, abs_off, 4);
    return ino;
}

uint32_t add_i32(struct tree *t, uint32_t dir, const char *name, int32_t v, uint64_t abs_off)
{
    uint32_t ino = tree_add_textf(t, dir, name, "i32", "%" PRId32 "\n", v);
    tree_set_span(t, ino, abs_off, 4);
    return ino;
}

uint32_t add_hex32(struct tree *t, uint32_t dir, const char *name, uint32_t v, uint64_t abs_off)
{
    uint32_t ino = tree_add_textf(t, dir, name, "u32", "0x%08" PRIx32 "\n", v);
    tree_set_span(t, ino, abs_off, 4);
    return ino;
}

void set_typef(struct tree *t, uint32_t ino, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    int rc = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (rc >= 0)
        tree_set_type(t, ino, s);
    free(s);
}

enum list_style { LIST_SIGNED, LIST_UNSIGNED, LIST_HEX };

/* A list file's rows: the values, which the caller keeps while the tree lives. */
struct value_list {
    const uint32_t *v;
    uint64_t n;
    enum list_style style;
};

/* One formatter for the three list kinds, so they cannot drift apart: row i's bytes
 * (no newline) in scratch (at most 11 bytes), their count returned. */
static int format_value(enum list_style style, uint32_t v, char *scratch, size_t cap)
{
    if (style == LIST_SIGNED)
        return snprintf(scratch, cap, "%" PRId32, (int32_t)v);
    if (style == LIST_UNSIGNED)
        return snprintf(scratch, cap, "%" PRIu32, v);
    return snprintf(scratch, cap, "0x%08" PRIx32, v);
}

/* The form: the values, 4 bytes each in the host's order. */
static enum s3_err value_list_row(const void *ctx, const uint8_t *form, uint64_t k, char *scratch,
                                  const char **text, size_t *len)
{
    const struct value_list *l = ctx;
    uint32_t v;
    memcpy(&v, form + 4 * k, 4);
    *text = scratch;
    return view_row_printed(format_value(l->style, v, scratch, VIEW_ROW_SCRATCH), len);
}

static enum s3_err value_list_derive(const void *ctx, uint8_t **form, size_t *len, char *err, size_t errlen)
{
    const struct value_list *l = ctx;
    *len = (size_t)l->n * 4;
    if (!(*form = alloc_array(l->n, 4)))
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    memcpy(*form, l->v, *len);
    return S3_OK;
}

/* The list's file: a text up to VIEW_TEXT_MAX, else rendered on read from the values
 * (view_add_form_rows: the tree keeps no copy of them), never a text whose length the
 * file chooses. */
static uint32_t add_list(struct s3fs *fs, uint32_t dir, const char *name, const uint32_t *v, uint64_t n,
                         uint64_t abs_off, enum list_style style)
{
    struct value_list l = {v, n, style};
    struct view_form f = {value_list_derive, value_list_row, &l, sizeof l};
    uint32_t ino = view_add_form_rows(fs, dir, name, NULL, &f, (const uint8_t *)v, (size_t)n * 4, n);
    tree_set_span(fs->tree, ino, abs_off, 4 * n);
    set_typef(fs->tree, ino, "%s[%" PRIu64 "]", style == LIST_SIGNED ? "i32" : "u32", n);
    return ino;
}

uint32_t add_i32_list(struct s3fs *fs, uint32_t dir, const char *name, const int32_t *v, uint64_t n,
                      uint64_t abs_off)
{
    return add_list(fs, dir, name, (const uint32_t *)v, n, abs_off, LIST_SIGNED);
}

uint32_t add_u32_list(struct s3fs *fs, uint32_t dir, const char *name, const uint32_t *v, uint64_t n,
                      uint64_t abs_off)
{
    return add_list(fs, dir, name, v, n, abs_off, LIST_UNSIGNED);
}

uint32_t add_hex32_list(struct s3fs *fs, uint32_t dir, const char *name, const uint32_t *v, uint64_t n,
                        uint64_t abs_off)
{
    return add_list(fs, dir, name, v, n, abs_off, LIST_HEX);
}

/* ---- rows over a derived form (view_add_form_rows) ---- */

#define FORM_ROWS_PER_MARK 64

/* A derived form's item (in the tree's arena): the cache item, what derives it, and the
 * file it makes. The item's bytes: the form (padded to 8), then one mark per
 * FORM_ROWS_PER_MARK rows (where that row starts in the file). */
struct form_item {
    struct cached c; /* first: the cache hands this pointer back */
    struct cache *cache;
    view_form_derive_fn *derive;
    view_form_row_fn *row;
    const void *ctx;
    uint64_t n, size; /* rows, and the file's bytes as measured at listing */
    size_t len;       /* the form's bytes */
};

static _Atomic uint64_t form_derivations;

uint64_t view_form_derivations(void)
{
    return form_derivations;
}

static _Atomic uint64_t form_rows_rendered;

uint64_t view_form_rows_rendered(void)
{
    return form_rows_rendered;
}

static size_t pad8(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

static uint64_t form_marks(uint64_t n)
{
    return (n + FORM_ROWS_PER_MARK - 1) / FORM_ROWS_PER_MARK;
}

enum s3_err view_row_printed(int n, size_t *len)
{
    *len = 0;
    if (n < 0 || n >= VIEW_ROW_SCRATCH)
        return S3_ERR_LIMIT;
    *len = (size_t)n;
    return S3_OK;
}

/* Row k of the form: S3_OK, *text its bytes and *len its length, or the row's reason
 * (INVALID for a row function that set no text: a view's bug, never bytes shown). */
static enum s3_err form_row(view_form_row_fn *row, const void *ctx, const uint8_t *form, uint64_t k, char *scratch,
                            const char **text, size_t *len)
{
    *text = NULL;
    *len = 0;
    enum s3_err e = row(ctx, form, k, scratch, text, len);
    return e ? e : *text ? S3_OK : S3_ERR_INVALID;
}

/* The file's size from the form: every row formatted once (linear); the reason of a row
 * that cannot be. */
static enum s3_err form_measure(view_form_row_fn *row, const void *ctx, const uint8_t *form, uint64_t n,
                                uint64_t *marks, uint64_t *size)
{
    char scratch[VIEW_ROW_SCRATCH];
    uint64_t at = 0;
    for (uint64_t k = 0; k < n; k++) {
        if (marks && k % FORM_ROWS_PER_MARK == 0)
            marks[k / FORM_ROWS_PER_MARK] = at;
        const char *text;
        size_t w;
        enum s3_err e = form_row(row, ctx, form, k, scratch, &text, &w);
        if (e)
            return e;
        at += (uint64_t)w + 1;
    }
    *size = at;
    return S3_OK;
}

static enum s3_err produce_form(struct cached *c, uint8_t **data, size_t *size, char *err, size_t errlen)
{
    struct form_item *it = (struct form_item *)c;
    uint8_t *form = NULL;
    size_t len = 0;
    form_derivations++;
    enum s3_err e = it->derive(it->ctx, &form, &len, err, errlen);
    if (e)
        return e;
    uint64_t bytes = pad8(it->len) + form_marks(it->n) * 8, measured = 0;
    uint8_t *b = NULL;
    if (len != it->len) {
        e = s3_fail(S3_ERR_IO, err, errlen, "the source gave %zu bytes, %zu when listed (it changed?)", len,
                    it->len);
        goto fail;
    }
    if (!(b = realloc(form, bytes ? bytes : 1))) {
        e = s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
        goto fail;
    }
    form = NULL; /* b is it now */
    e = form_measure(it->row, it->ctx, b, it->n, (uint64_t *)(b + pad8(it->len)), &measured);
    if (e) {
        e = s3_fail(e, err, errlen, "a row cannot be formatted: %s (the source changed?)", s3_err_str(e));
        goto fail;
    }
    if (measured != it->size) {
        e = s3_fail(S3_ERR_IO, err, errlen, "rows of %llu bytes, %llu when listed (the source changed?)",
                    (unsigned long long)measured, (unsigned long long)it->size);
        goto fail;
    }
    *data = b;
    *size = (size_t)bytes;
    return S3_OK;
fail:
    free(form);
    free(b);
    return e;
}

/* The last of nmarks ascending marks at or before off (0 when none is): by halves. */
static uint64_t last_mark_at(const uint64_t *mark, uint64_t nmarks, uint64_t off)
{
    uint64_t lo = 0, hi = nmarks;
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (mark[mid] <= off)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* Bytes [off, off+len) of the rows: from the mark at or before off, each row formatted
 * until len is filled (at most FORM_ROWS_PER_MARK rows more than asked). */
static enum s3_err form_rows_read(struct tree *t, void *ctx, uint64_t arg, uint64_t off, void *buf, size_t len,
                                  size_t *got_out)
{
    (void)t, (void)arg;
    struct form_item *it = ctx;
    char err[200];
    size_t have;
    *got_out = 0;
    const uint8_t *b;
    enum s3_err e = cache_pin(it->cache, &it->c, &b, &have, err, sizeof err);
    if (e) /* a derivation refused memory: ENOMEM to this read, the next derives again */
        return e == S3_ERR_NOMEM ? e : S3_ERR_IO;
    const uint64_t *mark = (const uint64_t *)(b + pad8(it->len));
    uint64_t nmarks = form_marks(it->n);
    uint64_t lo = last_mark_at(mark, nmarks, off);
    char *out = buf;
    size_t got = 0;
    uint64_t at = nmarks ? mark[lo] : 0;
    for (uint64_t k = lo * FORM_ROWS_PER_MARK; k < it->n && got < len; k++) {
        char scratch[VIEW_ROW_SCRATCH];
        const char *text;
        size_t w;
        enum s3_err e = form_row(it->row, it->ctx, b, k, scratch, &text, &w);
        if (e) {
            cache_unpin(it->cache, &it->c);
            return e;
        }
        uint64_t end = at + (uint64_t)w + 1; /* the row and its newline */
        if (end > off + got) {
            form_rows_rendered++;
            uint64_t from = off + got - at; /* at most w: the newline */
            if (from < (uint64_t)w) {
                size_t take = (uint64_t)w - from < len - got ? (size_t)((uint64_t)w - from) : len - got;
                memcpy(out + got, text + from, take);
                got += take;
            }
            if (got < len)
                out[got++] = '\n';
        }
        at = end;
    }
    cache_unpin(it->cache, &it->c);
    *got_out = got;
    return S3_OK;
}

/* What an open file of derived rows holds: the form's item (tree_hold). */
static struct cached *form_rows_item(void *ctx, uint64_t arg, struct cache **cache)
{
    (void)arg;
    struct form_item *it = ctx;
    *cache = it->cache;
    return &it->c;
}

uint32_t view_add_form_rows(struct s3fs *fs, uint32_t dir, const char *name, const char *xtype,
                            const struct view_form *f, const uint8_t *form, size_t len, uint64_t n)
{
    struct tree *t = fs->tree;
    uint64_t size;
    if (form_measure(f->row, f->ctx, form, n, NULL, &size))
        return 0;
    if (size <= VIEW_TEXT_MAX) { /* a text: rendered now, from the form it was given */
        char *text = alloc_array(size, 1);
        char scratch[VIEW_ROW_SCRATCH];
        for (uint64_t k = 0, at = 0; text && k < n; k++) {
            const char *row;
            size_t w;
            form_row(f->row, f->ctx, form, k, scratch, &row, &w); /* measured: it can be had */
            memcpy(text + at, row, w);
            text[at + (uint64_t)w] = '\n';
            at += (uint64_t)w + 1;
        }
        return tree_add_text(t, dir, name, xtype, text, size); /* NULL: the listing fails */
    }
    struct form_item *it = tree_alloc(t, sizeof *it);
    void *ctx = tree_alloc(t, f->ctx_size);
    if (!it || !ctx)
        return 0;
    memcpy(ctx, f->ctx, f->ctx_size);
    *it = (struct form_item){.cache = &fs->cache, .derive = f->derive, .row = f->row, .ctx = ctx, .n = n,
                             .size = size, .len = len};
    it->c.produce = produce_form;
    it->c.hint = pad8(len) + form_marks(n) * 8;
    enum s3_err e = tree_gen_item(form_rows_read, form_rows_item);
    if (e) { /* the listing fails with it, never shows the file missing */
        tree_note_failure(t, e);
        return 0;
    }
    return tree_add_gen(t, dir, name, xtype, size, form_rows_read, it, 0);
}

/* A .names file: the indices and the names they point at, which the caller keeps while
 * the tree lives. The form: each name's length + 1 (0: no name; measured once however
 * many rows repeat it, so linear in rows and names), then the indices. */
struct bone_names {
    const int32_t *idx;
    char *const *names;
    uint32_t nnames;
    uint64_t n;
};

static enum s3_err bone_name_row(const void *ctx, const uint8_t *form, uint64_t k, char *scratch,
                                 const char **text, size_t *len)
{
    (void)scratch;
    const struct bone_names *b = ctx;
    const uint64_t *nlen = (const uint64_t *)form;
    int32_t i;
    memcpy(&i, form + (size_t)b->nnames * 8 + 4 * k, 4);
    if (i < 0 || (uint32_t)i >= b->nnames || !nlen[i]) {
        *text = "?";
        *len = 1;
        return S3_OK;
    }
    *text = b->names[i];
    *len = (size_t)nlen[i] - 1;
    return S3_OK;
}

static enum s3_err bone_names_derive(const void *ctx, uint8_t **form, size_t *len, char *err, size_t errlen)
{
    const struct bone_names *b = ctx;
    uint64_t *nlen = alloc_array((size_t)b->nnames + (size_t)(b->n + 1) / 2, 8);
    if (!nlen)
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    for (uint32_t i = 0; i < b->nnames; i++)
        nlen[i] = b->names[i] ? strlen(b->names[i]) + 1 : 0;
    memcpy(nlen + b->nnames, b->idx, (size_t)b->n * 4);
    *form = (uint8_t *)nlen;
    *len = (size_t)b->nnames * 8 + (size_t)b->n * 4;
    return S3_OK;
}

uint32_t add_bone_names(struct s3fs *fs, uint32_t dir, const char *field, const int32_t *idx, uint64_t n,
                        char *const *names, uint32_t nnames)
{
    struct bone_names b = {idx, names, nnames, n};
    uint8_t *form;
    size_t len;
    char err[64], name[64];
    if (bone_names_derive(&b, &form, &len, err, sizeof err)) {
        tree_note_oom(fs->tree); /* the listing fails (ENOMEM), never shorter */
        return 0;
    }
    snprintf(name, sizeof name, "%s.names", field);
    struct view_form f = {bone_names_derive, bone_name_row, &b, sizeof b};
    uint32_t ino = view_add_form_rows(fs, dir, name, "bone_names", &f, form, len, n);
    free(form);
    return ino;
}

uint32_t add_error(struct tree *t, uint32_t dir, const char *name, const char *msg)
{
    char fname[256];
    snprintf(fname, sizeof fname, "%s.error", name);
    return tree_add_textf(t, dir, fname, "error", "%s\n", msg);
}

void view_add_numbered(struct tree *t, uint32_t dir, uint32_t n, const char *xtype, populate_fn fn, void *ctx,
                       view_span_fn *span, uint64_t list, const char *err)
{
    char name[16];
    for (uint32_t i = 0; i < n; i++) {
        snprintf(name, sizeof name, "%" PRIu32, i);
        uint32_t ino = tree_add_dir(t, dir, name, xtype, fn, ctx, i);
        if (!ino)
            return;
        uint64_t pos, size;
        span(ctx, list, i, &pos, &size);
        tree_set_span(t, ino, pos, size);
    }
    if (err && err[0]) {
        snprintf(name, sizeof name, "%" PRIu32, n);
        add_error(t, dir, name, err);
    }
}

/* ---- hooks ---- */

enum s3_err view_hooks_add(struct tree *t, struct view_hooks *list, void (*fn)(void), void *ctx)
{
    struct view_hook *h = tree_alloc(t, sizeof *h);
    if (!h)
        return S3_ERR_NOMEM;
    *h = (struct view_hook){NULL, fn, ctx};
    if (list->last)
        list->last->next = h;
    else
        list->first = h;
    list->last = h;
    return S3_OK;
}

enum s3_err view_add_info_hook(struct s3fs *fs, view_info_fn *fn, void *ctx)
{
    return view_hooks_add(fs->tree, &fs->info_hooks, (void (*)(void))fn, ctx);
}

enum s3_err view_add_skeletons_hook(struct s3fs *fs, view_skeletons_fn *fn, void *ctx)
{
    return view_hooks_add(fs->tree, &fs->skeletons_hooks, (void (*)(void))fn, ctx);
}

/* The mount's top view: a view nested in a container declares its writable files there,
 * since they are the mount's too. */
static struct s3fs *top_view(struct s3fs *fs)
{
    while (fs->host)
        fs = fs->host;
    return fs;
}

enum s3_err view_add_table_hook(struct s3fs *fs, view_table_fn *fn, void *ctx)
{
    return view_hooks_add(fs->tree, &top_view(fs)->table_hooks, (void (*)(void))fn, ctx);
}

bool view_table_of(struct s3fs *fs, uint32_t ino, struct table_field *tf)
{
    bool found = false;
    tree_lock(fs->tree);
    for (const struct view_hook *h = fs->table_hooks.first; h && !found; h = h->next)
        found = ((view_table_fn *)h->fn)(fs, ino, tf, h->ctx);
    tree_unlock(fs->tree);
    return found;
}

enum s3_err view_add_resize_hook(struct s3fs *fs, view_resize_fn *fn, void *ctx)
{
    return view_hooks_add(fs->tree, &top_view(fs)->resize_hooks, (void (*)(void))fn, ctx);
}

bool view_resize_of(struct s3fs *fs, uint32_t ino, struct view_resize *out)
{
    bool found = false;
    tree_lock(fs->tree);
    for (const struct view_hook *h = fs->resize_hooks.first; h && !found; h = h->next)
        found = ((view_resize_fn *)h->fn)(fs, ino, out, h->ctx);
    tree_unlock(fs->tree);
    return found;
}

/* fn added to the top view's list unless it was already (its shared[] remembers which:
 * a few kinds, so no walk of a list that grows with the views opened). */
static enum s3_err add_shared(struct s3fs *fs, struct view_hooks *list, void (*fn)(void))
{
    struct s3fs *top = top_view(fs);
    for (uint32_t i = 0; i < top->nshared; i++)
        if (top->shared[i] == fn)
            return S3_OK;
    enum s3_err e = view_hooks_add(fs->tree, list, fn, NULL);
    if (e == S3_OK && top->nshared < sizeof top->shared / sizeof top->shared[0])
        top->shared[top->nshared++] = fn; /* past 16 kinds: added again, still right */
    return e;
}

enum s3_err view_add_value_hook_shared(struct s3fs *fs, view_value_fn *fn)
{
    return add_shared(fs, &top_view(fs)->value_hooks, (void (*)(void))fn);
}

enum s3_err view_add_table_hook_shared(struct s3fs *fs, view_table_fn *fn)
{
    return add_shared(fs, &top_view(fs)->table_hooks, (void (*)(void))fn);
}

enum s3_err view_add_resize_hook_shared(struct s3fs *fs, view_resize_fn *fn)
{
    return add_shared(fs, &top_view(fs)->resize_hooks, (void (*)(void))fn);
}

enum s3_err view_add_part_hook_shared(struct s3fs *fs, view_part_fn *fn)
{
    return add_shared(fs, &top_view(fs)->part_hooks, (void (*)(void))fn);
}

enum s3_err view_add_part_hook(struct s3fs *fs, view_part_fn *fn, void *ctx)
{
    return view_hooks_add(fs->tree, &top_view(fs)->part_hooks, (void (*)(void))fn, ctx);
}

bool view_part_of(struct s3fs *fs, uint32_t ino, struct view_part *out)
{
    bool found = false;
    tree_lock(fs->tree);
    for (const struct view_hook *h = fs->part_hooks.first; h && !found; h = h->next)
        found = ((view_part_fn *)h->fn)(fs, ino, out, h->ctx);
    tree_unlock(fs->tree);
    return found;
}

enum s3_err view_add_section_hook_shared(struct s3fs *fs, view_section_fn *fn)
{
    return add_shared(fs, &top_view(fs)->section_hooks, (void (*)(void))fn);
}

bool view_section_of(struct s3fs *fs, enum view_section_ask ask, uint32_t dir, uint32_t ino,
                     struct view_section *out)
{
    /* as view_value_of: the entries read under the tree lock, each hook called outside */
    tree_lock(fs->tree);
    const struct view_hook *h = fs->section_hooks.first;
    tree_unlock(fs->tree);
    while (h) {
        memset(out, 0, sizeof *out);
        if (((view_section_fn *)h->fn)(fs, ask, dir, ino, out, h->ctx))
            return true;
        tree_lock(fs->tree);
        h = h->next;
        tree_unlock(fs->tree);
    }
    return false;
}

enum s3_err view_add_value_hook(struct s3fs *fs, view_value_fn *fn, void *ctx)
{
    return view_hooks_add(fs->tree, &top_view(fs)->value_hooks, (void (*)(void))fn, ctx);
}

bool view_value_of(struct s3fs *fs, uint32_t ino, struct view_value *out)
{
    /* the list grows under the tree lock; its entries never change or go: the first entry
     * is read under the lock, each next one too, the hook called outside it */
    tree_lock(fs->tree);
    const struct view_hook *h = fs->value_hooks.first;
    tree_unlock(fs->tree);
    while (h) {
        if (((view_value_fn *)h->fn)(fs, ino, out, h->ctx))
            return true;
        tree_lock(fs->tree);
        h = h->next;
        tree_unlock(fs->tree);
    }
    return false;
}

static bool xattr_number(struct tree *t, uint32_t ino, const char *name, uint64_t *v)
{
    char num[32], *end;
    if (tree_getxattr_str(t, ino, name, num, sizeof num) || !num[0])
        return false;
    *v = strtoull(num, &end, 10);
    return *end == 0;
}

bool view_value_as_published(struct tree *t, uint32_t ino, bool be, struct view_value *out)
{
    char type[160];
    uint64_t off, len;
    struct field_type ft;
    if (tree_getxattr_str(t, ino, "user.s3rig.type", type, sizeof type) || !type[0] ||
        !xattr_number(t, ino, "user.s3rig.offset", &off) || !xattr_number(t, ino, "user.s3rig.length", &len))
        return false;
    if (field_type_parse(type, len, &ft))
        return false;
    *out = (struct view_value){off, len, ft.kind, be, 0, NULL, 0};
    return true;
}

const struct rig_set *view_skeletons(struct s3fs *fs, char *err, size_t errlen)
{
    if (!fs->skeletons_made) {
        fs->skeletons_made = true; /* first: a hook that opens views may come back here */
        if (!fs->skeletons_hooks.first)
            snprintf(fs->skeletons_err, sizeof fs->skeletons_err, "a %s file holds no skeleton",
                     format_name(fs->det.format));
        for (const struct view_hook *h = fs->skeletons_hooks.first; h; h = h->next) {
            char why[sizeof fs->skeletons_err] = "";
            if (((view_skeletons_fn *)h->fn)(fs, h->ctx, &fs->skeletons, why, sizeof why) && !fs->skeletons_err[0])
                snprintf(fs->skeletons_err, sizeof fs->skeletons_err, "%s", why);
        }
    }
    snprintf(err, errlen, "%s", fs->skeletons.n ? "" : fs->skeletons_err);
    return &fs->skeletons;
}

/* ---- /info and /unparsed ---- */

/* What the mount's expanded-bytes cache has done so far (a nested view's /info shows the
 * mount's: they share it). A user tuning cache_mb sees whether items were expanded again
 * after eviction; tests count expansions through a real mount from it. */
static void info_cache_line(const struct cache_stats *s, struct sbuf *b)
{
    struct cache_stats st = *s;
    sb_printf(b,
              "cache: %" PRIu64 " expansions, %" PRIu64 " failed, %" PRIu64 " evicted; %" PRIu64
              " bytes held, peak %" PRIu64 ", limit %" PRIu64 "\n",
              st.produced, st.failed, st.evicted, st.used, st.peak, st.limit);
    if (st.refused)
        sb_printf(b,
                  "warning: cache_mb: %" PRIu64 " expansions refused: they did not fit beside what other "
                  "requests and open files held (those reads and listings failed; they are tried again)\n",
                  st.refused);
}

/* /info, rendered once per change: every stat measures it, and rendering reads state
 * populate callbacks extend, so under the tree lock; kept while the tree's version (its
 * growth, its populates, what views touch) and the cache's counts stay the same. */
struct info_text {
    struct s3fs *fs;
    pthread_mutex_t lock; /* taken after the tree lock, never before */
    uint64_t key[6];
    char *text;
    size_t len;
};

static _Atomic uint64_t info_renders;

uint64_t view_info_renders(void)
{
    return info_renders;
}

static void info_text_free(void *p)
{
    struct info_text *it = p;
    free(it->text);
    pthread_mutex_destroy(&it->lock);
    free(it);
}

/* The warnings line says how much has been checked: parsing is lazy, so a fresh mount
 * has not yet seen what browsing (or `s3rig info --full`) will find. Under the tree lock. */
static void render_info_locked(struct tree *t, struct s3fs *fs, const struct cache_stats *st, struct sbuf *out)
{
    struct sbuf b = *out;
    sb_printf(&b, "format: %s\n", format_name(fs->det.format));
    sb_printf(&b, "file_size: %" PRIu64 "\n", fs->src.size);
    if (fs->origin[0])
        sb_printf(&b, "source: %s\n", fs->origin);
    if (fs->facts.len)
        sb_put(&b, fs->facts.p, fs->facts.len);
    for (const struct view_hook *h = fs->info_hooks.first; h; h = h->next)
        ((view_info_fn *)h->fn)(fs, &b, h->ctx);
    info_cache_line(st, &b);
    sb_printf(&b, "covered_bytes: %" PRIu64 "\n", fs->covered);
    sb_printf(&b, "unparsed_bytes: %" PRIu64 " in %zu ranges\n", fs->src.size - fs->covered, fs->ngaps);
    struct sbuf tree_lines = {0};
    size_t nwarn = fs->diag.n + fs->diag.dropped + tree_view_warnings(t, fs->src_id, &tree_lines);
    uint64_t done, total;
    tree_progress(t, fs->src_id, &done, &total);
    if (done < total)
        sb_printf(&b, "warnings: %zu so far (%" PRIu64 " parsed of the %" PRIu64 " directories found so far)\n",
                  nwarn, done, total);
    else
        sb_printf(&b, "warnings: %zu\n", nwarn);
    if (tree_lines.len)
        sb_put(&b, tree_lines.p, tree_lines.len);
    sb_free(&tree_lines);
    for (size_t i = 0; i < fs->diag.n; i++)
        sb_printf(&b, "warning: %s\n", fs->diag.msg[i]);
    if (fs->diag.dropped)
        sb_printf(&b, "warning: %zu more warnings not shown\n", fs->diag.dropped);
    *out = b;
}

static void render_info(struct tree *t, void *ctx, struct sbuf *out)
{
    struct info_text *it = ctx;
    struct cache_stats st;
    cache_stats(&it->fs->cache, &st);
    uint64_t key[6] = {tree_version(t), st.produced, st.failed, st.evicted, st.used, st.peak};
    pthread_mutex_lock(&it->lock);
    bool same = it->text && memcmp(key, it->key, sizeof key) == 0;
    if (same)
        sb_put(out, it->text, it->len);
    pthread_mutex_unlock(&it->lock);
    if (same)
        return;
    struct sbuf fresh = {0};
    tree_lock(t);
    render_info_locked(t, it->fs, &st, &fresh);
    info_renders++;
    pthread_mutex_lock(&it->lock); /* after the tree lock */
    if (!fresh.oom) {
        free(it->text);
        it->text = alloc_array(fresh.len, 1);
        if (it->text) {
            memcpy(it->text, fresh.p, fresh.len);
            it->len = fresh.len;
            memcpy(it->key, key, sizeof key);
        }
    }
    pthread_mutex_unlock(&it->lock);
    tree_unlock(t);
    sb_put(out, fresh.p, fresh.len);
    if (fresh.oom)
        out->oom = true;
    sb_free(&fresh);
}

static enum s3_err populate_unparsed(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    struct s3fs *fs = ctx;
    for (size_t i = 0; i < fs->ngaps; i++) {
        char name[64];
        snprintf(name, sizeof name, "0x%" PRIx64 "-0x%" PRIx64 ".bin", fs->gaps[i].off, fs->gaps[i].len);
        tree_add_range(t, dir, name, "unparsed", fs->gaps[i].off, fs->gaps[i].len);
    }
    return S3_OK;
}

enum s3_err view_root(struct s3fs *fs, const char *xtype, populate_fn fn, void *ctx)
{
    if (fs->cover.oom) /* the covered ranges are short: /unparsed would show parsed bytes */
        return S3_ERR_NOMEM;
    bool made;
    if (fs->nested) { /* the directory keeps the host's type and span: where the bytes lie */
        made = tree_graft(fs->tree, fs->root, fs->src_id, NULL, fn, ctx, 0) == 0;
    } else {
        uint32_t root = tree_add_dir(fs->tree, 0, "", xtype, fn, ctx, 0);
        tree_set_span(fs->tree, root, 0, fs->src.size);
        made = root == fs->root;
    }
    return made ? S3_OK : tree_full(fs->tree) ? S3_ERR_LIMIT : S3_ERR_NOMEM;
}

void add_info_and_unparsed(struct s3fs *fs, uint32_t root)
{
    fs->covered = cover_merge(&fs->cover, fs->src.size);
    free(fs->gaps); /* a root listed again after a rolled-back listing computes them anew */
    fs->ngaps = cover_gaps(&fs->cover, fs->src.size, &fs->gaps);
    if (!fs->gaps || fs->cover.oom)
        tree_note_oom(fs->tree); /* the listing fails: /unparsed is never shown short */
    struct info_text *it = calloc(1, sizeof *it);
    if (it && tree_on_free(fs->tree, info_text_free, it)) {
        free(it);
        it = NULL;
    }
    if (!it) {
        tree_note_oom(fs->tree); /* the listing fails: never a root without /info */
    } else {
        it->fs = fs;
        pthread_mutex_init(&it->lock, NULL);
        tree_add_volatile_unlocked(fs->tree, root, "info", "info", render_info, it);
    }
    uint32_t u = tree_add_dir(fs->tree, root, "unparsed", "unparsed", populate_unparsed, fs, 0);
    tree_set_span(fs->tree, u, 0, fs->src.size);
}

bool rows_seek(const uint64_t *mark, uint64_t nrows, uint32_t per_mark, uint64_t header_len, uint64_t off,
               uint64_t *row, uint64_t *start)
{
    *row = 0;
    *start = 0;
    if (off < header_len || nrows == 0)
        return false;
    uint64_t lo = last_mark_at(mark, (nrows + per_mark - 1) / per_mark, off);
    *row = lo * per_mark;
    *start = mark[lo];
    return true;
}

size_t rows_copy(const struct sbuf *text, uint64_t start, uint64_t off, void *buf, size_t len)
{
    if (off < start || off - start >= text->len)
        return 0;
    size_t n = text->len - (size_t)(off - start);
    n = n < len ? n : len;
    memcpy(buf, text->p + (off - start), n);
    return n;
}
