/* /granny/root: the Granny object graph decoded from the file's own type definitions.
 * A struct is a directory, a member a file or directory named after the member; objects
 * reached a second time are relative symlinks to their first location in breadth-first
 * order from the root (computed once by the parse-level walk, parse/gr2walk.c, when
 * /granny/root is first used); directories are still made only when listed. Arrays of
 * flat elements are tables: NAME.bin (the bytes) and NAME.csv (one row per element). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs/views/gr2/view_gr2anim.h"
#include "fs/views/gr2/view_gr2export.h"
#include "fs/views/gr2/view_gr2obj.h"
#include "parse/base/err.h"
#include "parse/gr2/gr2std.h"
#include "parse/gr2/gr2walk.h"

/* Columns of the flat types met so far (a file has few): tables of one type share them. */
struct colset {
    struct gr2_ref type;
    struct gr2_column *cols;
    uint32_t n;
    int ok;
    /* -o rw (gobj_table): the columns as table cells and the CSV's header line; NULL
     * when a column has no encoder (Real16) */
    struct table_col *tcols;
    char *header;
};

struct gobj {
    struct gr2_view *v;
    struct gr2_walk w;
    bool noted; /* the walk's limit said in /info */
    bool crc_noted; /* a String member holding a CRC said in /info */
    struct colset **colsets; /* each allocated alone: tables keep pointers to them */
    size_t ncolsets;
    /* Tables already measured, by (bytes, type, count): arrays shared by many members
     * are measured once. And the CSV text measured so far, against a budget, so that a
     * crafted file whose arrays all alias the same bytes cannot make every listing
     * format them again. */
    struct gtable **tables; /* open addressing by table_hash, power-of-two capacity */
    size_t ntables, captables;
    uint64_t csv_measured;
    struct gr2_anim *anim; /* curves, tracks and animations: their derived files */
};

/* A request on the object tree starts (a listing, the first skeleton's bones): types
 * whose decoding an earlier one was refused memory for are decoded again. */
static void new_request(struct gobj *o)
{
    gr2_types_new_request(&o->w.types);
}

/* Starts a request and walks the object graph (once: later requests find it done). NOMEM
 * when the walk ran out of memory (it keeps nothing: the next request walks again). */
static enum s3_err walk(struct gobj *o, const struct gr2_space *sp)
{
    new_request(o);
    if (gr2_walk_run(&o->w, sp) != S3_OK)
        return S3_ERR_NOMEM;
    if (o->w.note[0] && !o->noted) {
        o->noted = true;
        diag_add(&o->v->fs->diag, "%s", o->w.note);
    }
    return S3_OK;
}

/* NAME.error saying why, unless the reason is out of memory: then nothing is shown and
 * the listing fails (ENOMEM), to be made whole by the next. */
static void add_fault(struct tree *t, uint32_t dir, const char *name, enum s3_err reason, const char *why)
{
    if (reason == S3_ERR_NOMEM)
        tree_note_oom(t);
    else
        add_error(t, dir, name, why);
}

/* A type usable for an object: true; else NAME.error with its reason (or the listing
 * fails, when it could not be made for lack of memory). */
static bool type_usable(struct tree *t, uint32_t dir, const char *name, const struct gr2_type *ty)
{
    if (ty && ty->ok)
        return true;
    add_fault(t, dir, name, ty ? ty->reason : S3_ERR_NOMEM, ty ? ty->err : "out of memory");
    return false;
}

/* Section bytes an object needs: true; else NAME.error (or a failed listing, as above). */
static bool bytes_there(struct tree *t, const struct gr2_space *sp, uint32_t dir, const char *name, uint32_t sec,
                        uint64_t off, uint64_t len)
{
    const uint8_t *b;
    const char *why;
    enum s3_err e = gr2_bytes_at(sp, sec, off, len, &b, &why);
    if (e)
        add_fault(t, dir, name, e, why);
    return e == S3_OK;
}

/* ---- tree nodes ---- */

enum gdir_kind { GD_STRUCT, GD_ARRAY, GD_PTRARRAY, GD_WIDTH, GD_TRANSFORM };

struct gdir {
    struct gobj *o;
    enum gdir_kind kind;
    struct gr2_ref type, obj;
    uint32_t count, size;
    const struct gr2_member *m; /* GD_WIDTH: the member whose elements these are */
    char *path;                 /* relative to /granny/root */
};

static char *gobj_strdup(struct gobj *o, const char *s)
{
    char *p = tree_alloc(o->v->fs->tree, strlen(s) + 1);
    if (p)
        strcpy(p, s);
    return p;
}

static enum s3_err populate_gdir(struct tree *t, uint32_t dir, void *ctx, uint64_t arg);

static void span_of(struct gobj *o, uint32_t ino, uint32_t sec, uint64_t off, uint64_t len)
{
    gr2_view_set_span(o->v, ino, sec, off, len);
}

static uint32_t add_gdir(struct gobj *o, uint32_t parent, const char *name, enum gdir_kind kind,
                         const struct gr2_elem *e, const struct gr2_member *m, const char *path, uint64_t span_len)
{
    struct gdir *d = tree_alloc(o->v->fs->tree, sizeof *d);
    if (!d)
        return 0;
    *d = (struct gdir){o, kind, e->type, e->obj, e->count, e->size, m, gobj_strdup(o, path)};
    uint32_t ino = tree_add_dir(o->v->fs->tree, parent, name, "gr2.struct", populate_gdir, d, 0);
    span_of(o, ino, e->obj.section, e->obj.offset, span_len);
    return ino;
}

/* "gr2.TYPE[WIDTH] name=ORIGINAL" */
static void member_type(struct tree *t, uint32_t ino, const struct gr2_member *m, const char *safe)
{
    char orig[96] = "";
    if (m->name && (m->name_len != strlen(safe) || memcmp(m->name, safe, m->name_len) != 0))
        snprintf(orig, sizeof orig, " name=%.*s", (int)(m->name_len < 80 ? m->name_len : 80), m->name);
    if (m->array_width > 0)
        set_typef(t, ino, "gr2.%s[%" PRId32 "]%s", gr2_member_type_name(m->type), m->array_width, orig);
    else
        set_typef(t, ino, "gr2.%s%s", gr2_member_type_name(m->type), orig);
}

/* A String member holds a CRC into an external string table: said once in /info. Only
 * then: a header's non-zero string_table_crc alone says nothing (real files carry one
 * with ordinary strings, pointers with fixups), each slot decides (gr2_string_slot). */
static void note_crc_string(struct gobj *o)
{
    if (o->crc_noted)
        return;
    o->crc_noted = true;
    diag_add(&o->v->fs->diag,
             "strings are remapped to an external string table (string_table_crc 0x%08" PRIx32
             "): String members without a pointer show the CRC of their string (crc:0x...), "
             "those names are not in this file",
             o->v->g.string_table_crc);
}

/* Scalars and strings: one value file, an element per line. A remapped string (a CRC
 * into an external table) is "crc:0x%08x". Its text is as long as the input chooses (an
 * array of W slots pointing at one L-byte string is W×L bytes): kept as a text only up to
 * VIEW_TEXT_MAX, else rendered on read (view_add_form_rows) from a compact form, a cache
 * item derived again from the sections: a scalar array's bytes, or for strings each row's
 * place in a pool holding every string the slots point at once (overlapping strings
 * share their bytes), so the form is linear in the slots and the section bytes they
 * name, never W×L. The tree keeps only where the slots are (struct gvalues). */
struct gvalues {
    struct gr2_view *v;
    const struct gr2_member *m;
    uint32_t sec, off, width, esize;
    bool be;
};

/* A string form's row: where its text lies in the pool, and its length (0: a NULL
 * string, an empty row). */
struct gvalue_row {
    uint64_t at, len;
};

static enum s3_err value_row(const void *ctx, const uint8_t *form, uint64_t k, char *scratch, const char **text,
                             size_t *len)
{
    const struct gvalues *g = ctx;
    if (g->m->type == GR2_STRING) {
        const struct gvalue_row *r = (const struct gvalue_row *)form + k;
        *text = (const char *)form + (uint64_t)g->width * sizeof *r + r->at;
        *len = (size_t)r->len;
        return S3_OK;
    }
    *text = scratch;
    gr2_format_scalar(scratch, VIEW_ROW_SCRATCH, g->m->type, false, form + k * g->esize, g->be);
    *len = strlen(scratch);
    return S3_OK;
}

/* A slot pointing at a string: where, and which slot. */
struct string_target {
    uint32_t sec, off, slot;
};

static int by_place(const void *a, const void *b)
{
    const struct string_target *x = a, *y = b;
    if (x->sec != y->sec)
        return x->sec < y->sec ? -1 : 1;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* The lengths of the strings the slots point at (len[slot]), in time linear in the slots
 * and the sections' bytes, however the strings overlap (slots at every offset of one long
 * string, or all at one): taken from the highest address down, each search for a NUL
 * stops where the string above starts, whose length it then extends. So strings that
 * overlap end at the same NUL. tg is left sorted by place. S3_OK, or the reason with why
 * (NOMEM when section bytes could not be made for lack of memory). */
static enum s3_err string_lengths(const struct gr2_space *sp, struct string_target *tg, size_t n, uint64_t *len,
                                  const char **why)
{
    qsort(tg, n, sizeof *tg, by_place);
    const struct string_target *above = NULL;
    uint64_t above_len = 0;
    for (size_t i = n; i-- > 0;) {
        const struct string_target *s = &tg[i];
        const uint8_t *p;
        enum s3_err e = gr2_bytes_at(sp, s->sec, s->off, 0, &p, why);
        if (e)
            return e;
        bool under = above && above->sec == s->sec;
        size_t room = under ? above->off - s->off : sp->size[s->sec] - s->off;
        const uint8_t *nul = memchr(p, 0, room);
        if (nul)
            len[s->slot] = (uint64_t)(nul - p);
        else if (under)
            len[s->slot] = room + above_len;
        else {
            *why = "string without a terminating NUL before the end of its section";
            return S3_ERR_FORMAT;
        }
        above = s;
        above_len = len[s->slot];
    }
    return S3_OK;
}

/* The pool: each run of overlapping strings (tg sorted by place, all ending at one NUL)
 * copied once, each slot's row pointing into it. pool NULL: only its size (*pool_len).
 * S3_OK, or the reason the bytes could not be had, with why. */
static enum s3_err string_pool(const struct gr2_space *sp, const struct string_target *tg, size_t n,
                       struct gvalue_row *rows, char *pool, uint64_t *pool_len, const char **why)
{
    uint64_t at = *pool_len;
    for (size_t i = 0; i < n;) {
        uint32_t sec = tg[i].sec, start = tg[i].off;
        uint64_t end = start + rows[tg[i].slot].len;
        size_t j = i;
        for (; j < n && tg[j].sec == sec && tg[j].off <= end; j++) {
            uint64_t e = tg[j].off + rows[tg[j].slot].len;
            end = e > end ? e : end;
            rows[tg[j].slot].at = at + (tg[j].off - start);
        }
        if (pool) {
            const uint8_t *b;
            enum s3_err e = gr2_bytes_at(sp, sec, start, (size_t)(end - start), &b, why);
            if (e)
                return e;
            memcpy(pool + at, b, (size_t)(end - start));
        }
        at += end - start;
        i = j;
    }
    *pool_len = at;
    return S3_OK;
}

/* The compact form of g's rows (malloc'd, *len bytes) from the space pinned now, touching
 * no tree state (a cache producer calls it): a scalar array's bytes, or a string array's
 * rows and pool. *any: some row is not a NULL string (else there is no file); *crc: some
 * slot holds a CRC. S3_OK; NOMEM (also when section bytes could not be made for lack of
 * memory); FORMAT with why (the member is NAME.error). */
static enum s3_err derive_values(const struct gvalues *g, const struct gr2_space *sp, uint8_t **form, size_t *len,
                                 bool *any, bool *crc, const char **why)
{
    *form = NULL, *len = 0, *any = false, *crc = false;
    if (g->m->type != GR2_STRING) {
        size_t bytes = (size_t)g->width * g->esize;
        const uint8_t *b;
        enum s3_err be = gr2_bytes_at(sp, g->sec, g->off, bytes, &b, why);
        if (be)
            return be == S3_ERR_NOMEM ? be : S3_ERR_FORMAT;
        if (!(*form = alloc_array(bytes, 1)))
            return S3_ERR_NOMEM;
        memcpy(*form, b, bytes);
        *len = bytes, *any = true;
        return S3_OK;
    }
    struct gvalue_row *rows = calloc(g->width, sizeof *rows);
    struct string_target *tg = alloc_array(g->width, sizeof *tg);
    uint64_t *slen = calloc(g->width, sizeof *slen);
    uint32_t *crcs = calloc(g->width, sizeof *crcs);
    enum s3_err e = S3_ERR_NOMEM;
    size_t ntg = 0;
    uint64_t pool = 0, ncrc = 0;
    if (!rows || !tg || !slen || !crcs)
        goto out;
    e = S3_ERR_FORMAT;
    for (uint32_t k = 0; k < g->width; k++) {
        uint32_t slot = g->off + k * g->esize;
        struct gr2_ref to;
        bool points;
        struct gr2_str str = {.kind = GR2_STR_TEXT};
        enum s3_err pe = gr2_pointer(sp, g->sec, slot, &to, &points, why);
        if (pe) {
            e = pe == S3_ERR_NOMEM ? pe : S3_ERR_FORMAT;
            goto out;
        }
        if (!points)
            gr2_string_slot(sp, g->sec, slot, &str);
        if (str.kind == GR2_STR_ERROR) {
            *why = str.why;
            goto out;
        }
        if (points)
            tg[ntg++] = (struct string_target){to.section, to.offset, k};
        else if (str.kind == GR2_STR_CRC) /* "crc:0x%08x": 14 bytes, at the pool's start */
            crcs[k] = str.crc, rows[k] = (struct gvalue_row){14 * ncrc++, 14};
        *any |= str.kind != GR2_STR_NULL;
    }
    enum s3_err se = ntg ? string_lengths(sp, tg, ntg, slen, why) : S3_OK;
    if (se) {
        e = se == S3_ERR_NOMEM ? se : S3_ERR_FORMAT;
        goto out;
    }
    for (size_t i = 0; i < ntg; i++)
        rows[tg[i].slot].len = slen[tg[i].slot];
    pool = 14 * ncrc;
    if ((se = string_pool(sp, tg, ntg, rows, NULL, &pool, why)) != S3_OK) {
        e = se == S3_ERR_NOMEM ? se : S3_ERR_FORMAT;
        goto out;
    }
    size_t head = (size_t)g->width * sizeof *rows;
    e = S3_ERR_NOMEM;
    if (!(*form = alloc_array(head + (size_t)pool, 1)))
        goto out;
    memcpy(*form, rows, head);
    char *text = (char *)*form + head;
    for (uint32_t k = 0; k < g->width; k++)
        if (rows[k].len && rows[k].at < 14 * ncrc) { /* the CRCs' part: pointed strings lie after */
            char c[15];
            snprintf(c, sizeof c, "crc:0x%08" PRIx32, crcs[k]);
            memcpy(text + rows[k].at, c, 14);
        }
    pool = 14 * ncrc;
    se = string_pool(sp, tg, ntg, (struct gvalue_row *)*form, text, &pool, why);
    e = se == S3_OK || se == S3_ERR_NOMEM ? se : S3_ERR_FORMAT;
    *len = head + (size_t)pool;
    *crc = ncrc > 0;
out:
    if (e) {
        free(*form);
        *form = NULL, *len = 0;
    }
    free(rows);
    free(tg);
    free(slen);
    free(crcs);
    return e;
}

/* The form again, for the cache (view_form_derive_fn): the sections pinned for it. */
static enum s3_err values_derive(const void *ctx, uint8_t **form, size_t *len, char *err, size_t errlen)
{
    const struct gvalues *g = ctx;
    struct gr2_space sp;
    const char *why = "out of memory";
    enum s3_err e = gr2_view_pin(g->v, &sp);
    bool any, crc;
    if (e == S3_OK) {
        e = derive_values(g, &sp, form, len, &any, &crc, &why);
        gr2_view_unpin(g->v, &sp);
    } else if (e == S3_ERR_IO) {
        why = "the file changed";
    }
    return e ? s3_fail(e, err, errlen, "%s", why) : S3_OK;
}

static void add_values(struct gobj *o, const struct gr2_space *sp, uint32_t dir, const char *name,
                       const struct gr2_member *m, uint32_t sec, uint32_t off)
{
    struct tree *t = o->v->fs->tree;
    struct gvalues g = {o->v, m, sec, off, m->array_width > 0 ? (uint32_t)m->array_width : 1,
                        gr2_elem_size(sp, m->type), sp->g->be};
    const char *why;
    if (!bytes_there(t, sp, dir, name, sec, off, m->size))
        return;
    uint8_t *form;
    size_t len;
    bool any, crc;
    enum s3_err e = derive_values(&g, sp, &form, &len, &any, &crc, &why);
    if (crc)
        note_crc_string(o);
    if (e == S3_ERR_NOMEM) {
        tree_note_oom(t); /* the listing fails (ENOMEM), never shorter */
    } else if (e) {
        add_error(t, dir, name, why);
    } else if (any) { /* a NULL string is absent */
        struct view_form f = {values_derive, value_row, &g, sizeof g};
        uint32_t ino = view_add_form_rows(o->v->fs, dir, name, NULL, &f, form, len, g.width);
        span_of(o, ino, sec, off, m->size);
        member_type(t, ino, m, name);
    }
    free(form);
}

/* ---- tables: NAME.bin and NAME.csv ---- */

#define ROWS_PER_MARK 64

#define CSV_BUDGET_MIN (256ull << 20) /* CSV bytes measured per file, at least; else 16 × its bytes */

struct gtable {
    struct gobj *o;
    struct gr2_ref obj, type;
    uint32_t count, size;
    const struct colset *cs;
    uint64_t header_len, total;
    uint64_t *mark; /* mark[i]: where row i·ROWS_PER_MARK starts in the CSV text */
};

/* A Granny scalar type's cell kind for -o rw; false when it has no encoder. */
static bool cell_kind(uint32_t type, enum field_kind *k)
{
    switch (type) {
    case GR2_REAL32: *k = FIELD_F32; return true;
    case GR2_INT8: case GR2_BINORMAL_INT8: *k = FIELD_I8; return true;
    case GR2_UINT8: case GR2_NORMAL_UINT8: *k = FIELD_U8; return true;
    case GR2_INT16: case GR2_BINORMAL_INT16: *k = FIELD_I16; return true;
    case GR2_UINT16: case GR2_NORMAL_UINT16: *k = FIELD_U16; return true;
    case GR2_INT32: *k = FIELD_I32; return true;
    case GR2_UINT32: *k = FIELD_U32; return true; /* hex flags too: the encoder reads 0x */
    default: return false;
    }
}

/* The table cells of a column set, and its CSV's header line (csv_header's), for -o rw;
 * left NULL (read-only tables) when a column has no encoder. NOMEM (never a table made
 * read-only for lack of memory). */
static enum s3_err writable_columns(struct colset *c)
{
    struct table_col *tc = alloc_array(c->n, sizeof *tc);
    struct sbuf h = {0};
    bool ok = tc != NULL;
    for (uint32_t i = 0; ok && i < c->n; i++) {
        ok = cell_kind(c->cols[i].type, &tc[i].kind);
        tc[i].offset = c->cols[i].offset;
        tc[i].count = 1;
        sb_printf(&h, "%s%s", i ? "," : "", c->cols[i].name);
    }
    size_t len;
    char *header = sb_take(&h, &len);
    if (!ok || !header) {
        free(tc);
        free(header);
        return !tc || !header ? S3_ERR_NOMEM : S3_OK;
    }
    c->tcols = tc;
    c->header = header;
    return S3_OK;
}

static void colset_free(struct colset *c)
{
    gr2_columns_free(c->cols, c->n);
    free(c->tcols);
    free(c->header);
    free(c);
}

/* The columns of a flat type, made once: NULL when the type has none (kept so), or when
 * out of memory (*oom set, nothing kept: the next listing makes them). */
static const struct colset *columns_of(struct gobj *o, const struct gr2_space *sp, struct gr2_ref type, bool *oom)
{
    *oom = false;
    for (size_t i = 0; i < o->ncolsets; i++)
        if (o->colsets[i]->type.section == type.section && o->colsets[i]->type.offset == type.offset)
            return o->colsets[i]->ok ? o->colsets[i] : NULL;
    struct colset **n = realloc(o->colsets, (o->ncolsets + 1) * sizeof *n);
    struct colset *c = n ? calloc(1, sizeof *c) : NULL;
    if (n)
        o->colsets = n;
    if (!c) {
        *oom = true;
        return NULL;
    }
    c->type = type;
    const struct gr2_type *ty = gr2_type_get(&o->w.types, sp, type);
    enum s3_err e = !ty ? S3_ERR_NOMEM : gr2_type_columns(&o->w.types, sp, ty, &c->cols, &c->n);
    if (ty && !ty->ok && ty->reason == S3_ERR_NOMEM)
        e = S3_ERR_NOMEM;
    c->ok = e == S3_OK && c->n > 0;
    if (c->ok)
        e = writable_columns(c);
    if (e == S3_ERR_NOMEM) {
        colset_free(c);
        *oom = true;
        return NULL;
    }
    o->colsets[o->ncolsets++] = c;
    return c->ok ? c : NULL;
}

static void csv_header(const struct colset *cs, struct sbuf *out)
{
    for (uint32_t c = 0; c < cs->n; c++)
        sb_printf(out, "%s%s", c ? "," : "", cs->cols[c].name);
    sb_put(out, "\n", 1);
}

static void csv_row(const struct colset *cs, const uint8_t *p, bool be, struct sbuf *out)
{
    for (uint32_t c = 0; c < cs->n; c++) {
        char v[64];
        gr2_format_scalar(v, sizeof v, cs->cols[c].type, cs->cols[c].hex, p + cs->cols[c].offset, be);
        sb_printf(out, "%s%s", c ? "," : "", v);
    }
    sb_put(out, "\n", 1);
}

/* Bytes [off, off+len) of one of a table's files, made from its element bytes (rows,
 * count × size bytes): S3_OK with the count copied (*got), or NOMEM when the rows'
 * text could not be made (never a short read). */
typedef enum s3_err table_copy_fn(const struct gtable *tb, const uint8_t *rows, bool be, uint64_t off, void *buf,
                                  size_t len, size_t *got);

/* A read of a table's file: its element bytes pinned for the copy (IO when the sections
 * cannot be had, the file changed, or the elements are not in them; NOMEM when the
 * copy's text was refused memory). */
static enum s3_err table_read(struct gtable *tb, table_copy_fn *copy, uint64_t off, void *buf, size_t len,
                              size_t *got)
{
    struct gr2_space sp;
    enum s3_err e = gr2_view_pin(tb->o->v, &sp);
    if (e)
        return e;
    const char *why;
    const uint8_t *b;
    enum s3_err be = gr2_bytes_at(&sp, tb->obj.section, tb->obj.offset, (uint64_t)tb->count * tb->size, &b, &why);
    *got = 0;
    e = b ? copy(tb, b, sp.g->be, off, buf, len, got) : be == S3_ERR_NOMEM ? be : S3_ERR_IO;
    gr2_view_unpin(tb->o->v, &sp);
    return e;
}

/* Renders from the header, or from the last mark at or before off, until past off+len. */
static enum s3_err csv_copy(const struct gtable *tb, const uint8_t *rows, bool be, uint64_t off, void *buf,
                            size_t len, size_t *got)
{
    struct sbuf text = {0};
    uint64_t start, row;
    if (!rows_seek(tb->mark, tb->count, ROWS_PER_MARK, tb->header_len, off, &row, &start))
        csv_header(tb->cs, &text);
    /* text.oom: a refused growth stops the text short, which must not read as the end */
    while (!text.oom && row < tb->count && start + text.len < off + len)
        csv_row(tb->cs, rows + (size_t)row++ * tb->size, be, &text);
    enum s3_err e = text.oom ? S3_ERR_NOMEM : S3_OK;
    *got = e ? 0 : rows_copy(&text, start, off, buf, len);
    sb_free(&text);
    return e;
}

static enum s3_err bin_copy(const struct gtable *tb, const uint8_t *rows, bool be, uint64_t off, void *buf,
                            size_t len, size_t *got)
{
    (void)be;
    uint64_t size = (uint64_t)tb->count * tb->size;
    size_t n = 0;
    if (off < size) {
        n = size - off < len ? (size_t)(size - off) : len;
        memcpy(buf, rows + off, n);
    }
    *got = n;
    return S3_OK;
}

static enum s3_err csv_read(struct tree *t, void *ctx, uint64_t arg, uint64_t off, void *buf, size_t len, size_t *got)
{
    (void)t, (void)arg;
    return table_read(ctx, csv_copy, off, buf, len, got);
}

static enum s3_err table_bin_read(struct tree *t, void *ctx, uint64_t arg, uint64_t off, void *buf, size_t len,
                                  size_t *got)
{
    (void)t, (void)arg;
    return table_read(ctx, bin_copy, off, buf, len, got);
}

/* What an open NAME.csv or NAME.bin holds: the section its elements are in (tree_hold). */
static struct cached *table_item(void *ctx, uint64_t arg, struct cache **cache)
{
    (void)arg;
    struct gtable *tb = ctx;
    return gr2_view_section_item(tb->o->v, tb->obj.section, cache);
}

static size_t table_hash(struct gr2_ref obj, struct gr2_ref type, uint32_t count)
{
    uint64_t h = ((uint64_t)obj.section << 32 | obj.offset) * 0x9E3779B97F4A7C15ull;
    h ^= ((uint64_t)type.section << 32 | type.offset) + count;
    h *= 0xC2B2AE3D27D4EB4Full;
    return (size_t)(h >> 20);
}

static bool table_is(const struct gtable *tb, const struct gr2_elem *e)
{
    return tb->obj.section == e->obj.section && tb->obj.offset == e->obj.offset && tb->count == e->count &&
           tb->type.section == e->type.section && tb->type.offset == e->type.offset;
}

/* The slot of e's table in the hash (NULL there: not measured yet). */
static struct gtable **table_slot(struct gtable **tables, size_t cap, const struct gr2_elem *e)
{
    size_t k = table_hash(e->obj, e->type, e->count) & (cap - 1);
    while (tables[k] && !table_is(tables[k], e))
        k = (k + 1) & (cap - 1);
    return &tables[k];
}

static struct gtable *find_table(struct gobj *o, const struct gr2_elem *e)
{
    return o->captables ? *table_slot(o->tables, o->captables, e) : NULL;
}

/* Room for one more table (load under a half). */
static int tables_grow(struct gobj *o)
{
    if (2 * (o->ntables + 1) <= o->captables)
        return 0;
    size_t cap = o->captables ? 2 * o->captables : 64;
    struct gtable **n = calloc(cap, sizeof *n);
    if (!n)
        return -1;
    for (size_t i = 0; i < o->captables; i++)
        if (o->tables[i]) {
            struct gr2_elem e = {.obj = o->tables[i]->obj, .type = o->tables[i]->type, .count = o->tables[i]->count};
            *table_slot(n, cap, &e) = o->tables[i];
        }
    free(o->tables);
    o->tables = n;
    o->captables = cap;
    return 0;
}

/* Measures a table's CSV: its exact size and where every ROWS_PER_MARK-th row starts.
 * S3_OK with *out; else the reason with why (the file's budget of measured text spent is
 * LIMIT; NOMEM keeps nothing: a later listing measures again). */
static enum s3_err measure_table(struct gobj *o, const struct gr2_space *sp, const struct gr2_elem *e,
                                 struct gtable **out, const char **why)
{
    struct tree *t = o->v->fs->tree;
    struct gtable *tb = *out = find_table(o, e);
    if (tb)
        return S3_OK;
    bool oom;
    const struct colset *cs = columns_of(o, sp, e->type, &oom);
    *why = oom ? "out of memory" : "its elements' columns cannot be made";
    if (!cs)
        return oom ? S3_ERR_NOMEM : S3_ERR_FORMAT;
    const uint8_t *b;
    enum s3_err be = gr2_bytes_at(sp, e->obj.section, e->obj.offset, (uint64_t)e->count * e->size, &b, why);
    if (be)
        return be;
    uint64_t bytes = 0;
    for (uint32_t i = 0; i < sp->g->nsections; i++)
        bytes += sp->size[i];
    uint64_t budget = 16 * bytes > CSV_BUDGET_MIN ? 16 * bytes : CSV_BUDGET_MIN;
    if (o->csv_measured > budget) {
        *why = "this file's tables hold more text than the limit (16 times the file's expanded bytes)";
        return S3_ERR_LIMIT;
    }
    if (tables_grow(o))
        return S3_ERR_NOMEM;
    uint32_t nmarks = (e->count + ROWS_PER_MARK - 1) / ROWS_PER_MARK;
    tb = tree_alloc(t, sizeof *tb);
    uint64_t *mark = tree_alloc(t, (nmarks ? nmarks : 1) * sizeof *mark);
    if (!tb || !mark)
        return S3_ERR_NOMEM;
    *tb = (struct gtable){o, e->obj, e->type, e->count, e->size, cs, 0, 0, mark};
    /* measured without keeping text: nothing to refuse, so never a size short of what a
     * read renders */
    struct sbuf text = {.measure = 1};
    csv_header(cs, &text);
    uint64_t total = tb->header_len = text.len;
    for (uint32_t r = 0; r < e->count; r++) {
        if (r % ROWS_PER_MARK == 0)
            mark[r / ROWS_PER_MARK] = total;
        text.len = 0;
        csv_row(cs, b + (size_t)r * e->size, sp->g->be, &text);
        total += text.len;
    }
    bool short_text = text.oom; /* a row not formatted: its length unknown */
    sb_free(&text);
    if (short_text)
        return S3_ERR_NOMEM;
    tb->total = total;
    o->csv_measured += total;
    *table_slot(o->tables, o->captables, e) = tb;
    o->ntables++;
    *out = tb;
    return S3_OK;
}

/* NAME.bin: the elements' bytes as stored in the expanded section (a slice of the
 * mounted file when the section is stored as is); NAME.csv: a header row of column
 * names, then one row per element. Both typed "gr2.table[COUNT]xSIZE type=SEC_0xOFF". */
static void add_table(struct gobj *o, const struct gr2_space *sp, uint32_t dir, const char *name,
                      const struct gr2_elem *e)
{
    struct tree *t = o->v->fs->tree;
    char fname[300], xtype[96];
    snprintf(xtype, sizeof xtype, "gr2.table[%" PRIu32 "]x%" PRIu32 " type=%" PRIu32 "_0x%" PRIx32, e->count,
             e->size, e->type.section, e->type.offset);
    uint64_t bytes = (uint64_t)e->count * e->size;
    const struct gr2_section *sec = &o->v->g.sections[e->obj.section];
    const char *why;
    struct gtable *tb;
    enum s3_err me = measure_table(o, sp, e, &tb, &why);
    snprintf(fname, sizeof fname, "%s.bin", name);
    uint32_t ino = 0;
    if (sec->compression == GR2_COMP_NONE) {
        uint64_t abs, alen;
        gr2_view_span(o->v, e->obj.section, e->obj.offset, bytes, &abs, &alen);
        ino = tree_add_range(t, dir, fname, NULL, abs, bytes);
    } else if (tb) {
        ino = tree_add_gen(t, dir, fname, NULL, bytes, table_bin_read, tb, 0);
    }
    if (ino) {
        span_of(o, ino, e->obj.section, e->obj.offset, bytes);
        tree_set_type(t, ino, xtype);
    }
    snprintf(fname, sizeof fname, "%s.csv", name);
    if (me) {
        add_fault(t, dir, fname, me, why);
        return;
    }
    ino = tree_add_gen(t, dir, fname, NULL, tb->total, csv_read, tb, 0);
    span_of(o, ino, e->obj.section, e->obj.offset, bytes);
    tree_set_type(t, ino, xtype);
}

/* ---- members and elements ---- */

/* What add_element made: the member's own node (typed after the member), or something
 * else (an error, a link, a table, nothing). */
enum made { MADE_NONE, MADE_NODE, MADE_OTHER };

/* One element of a member (or a whole member of width 0) as a node named `name`. */
static enum made add_element(struct gobj *o, const struct gr2_space *sp, uint32_t dir, const char *dir_path,
                             const char *name, const struct gr2_member *m, uint32_t sec, uint32_t off,
                             const char *ep, uint32_t *ino)
{
    struct tree *t = o->v->fs->tree;
    *ino = 0;
    if (strlen(ep) > GR2_WALK_MAX_PATH) { /* bounds the tree's depth even where the walk stopped */
        add_error(t, dir, name, "nested too deeply to show");
        return MADE_OTHER;
    }
    struct gr2_elem e;
    gr2_resolve(&o->w.types, sp, m, sec, off, &e);
    uint32_t esize = m->type == GR2_INLINE ? m->size / (m->array_width > 0 ? (uint32_t)m->array_width : 1)
                                           : gr2_elem_size(sp, m->type);
    if (m->type == GR2_TRANSFORM) {
        e.obj = (struct gr2_ref){sec, off};
        *ino = add_gdir(o, dir, name, GD_TRANSFORM, &e, m, ep, GR2_TRANSFORM_SIZE);
        return MADE_NODE;
    }
    switch (e.kind) {
    case GR2_EK_ERROR:
        add_fault(t, dir, name, e.reason, e.why);
        return MADE_OTHER;
    case GR2_EK_NULL:
        return MADE_NONE;
    case GR2_EK_UNTYPED:
        *ino = tree_add_textf(t, dir, name, "gr2.untyped", "%" PRIu32 " %" PRIu32 "\n", e.obj.section, e.obj.offset);
        span_of(o, *ino, sec, off, esize);
        return MADE_NODE;
    case GR2_EK_ARRAY:
        if (gr2_elem_is_table(&o->w.types, sp, &e)) {
            add_table(o, sp, dir, name, &e);
            return MADE_OTHER;
        }
        /* fall through */
    case GR2_EK_OBJECT: {
        const char *first = gr2_walk_first(&o->w, e.obj, e.kind == GR2_EK_ARRAY ? GR2_KEY_ARRAY : GR2_KEY_SINGLE);
        if (first && strcmp(first, ep) != 0) {
            char *target = tree_path_relative(dir_path, first);
            if (target)
                tree_add_link(t, dir, name, target);
            else
                tree_note_oom(t); /* never a link left out */
            free(target);
            return MADE_OTHER;
        }
        break;
    }
    default:
        break;
    }
    if (e.kind == GR2_EK_INLINE || e.kind == GR2_EK_OBJECT) {
        const struct gr2_type *ty = gr2_type_get(&o->w.types, sp, e.type);
        if (!type_usable(t, dir, name, ty) || !bytes_there(t, sp, dir, name, e.obj.section, e.obj.offset, ty->size))
            return MADE_OTHER;
        *ino = add_gdir(o, dir, name, GD_STRUCT, &e, NULL, ep, ty->size);
    } else if (e.kind == GR2_EK_ARRAY) {
        *ino = add_gdir(o, dir, name, GD_ARRAY, &e, NULL, ep, (uint64_t)e.count * e.size);
    } else if (e.kind == GR2_EK_PTRARRAY) {
        *ino = add_gdir(o, dir, name, GD_PTRARRAY, &e, NULL, ep, (uint64_t)e.count * e.size);
    }
    return *ino ? MADE_NODE : MADE_NONE;
}

static void add_member(struct gobj *o, const struct gr2_space *sp, uint32_t dir, const char *dir_path,
                       const struct gr2_member *m, const char *safe, uint32_t sec, uint32_t off)
{
    struct tree *t = o->v->fs->tree;
    if (!bytes_there(t, sp, dir, safe, sec, off, m->size)) /* before any per-element work */
        return;
    if (gr2_is_scalar(m->type) || m->type == GR2_STRING) {
        add_values(o, sp, dir, safe, m, sec, off);
        return;
    }
    char *mp = gr2_path_join(dir_path, safe);
    if (!mp) {
        tree_note_oom(t); /* never a member left out */
        return;
    }
    uint32_t ino = 0;
    enum made made = MADE_NODE;
    if (m->array_width > 0) { /* a fixed array of references/structs: a directory 0..N-1 */
        struct gr2_elem e = {.obj = {sec, off}};
        ino = add_gdir(o, dir, safe, GD_WIDTH, &e, m, mp, m->size);
    } else {
        made = add_element(o, sp, dir, dir_path, safe, m, sec, off, mp, &ino);
    }
    if (made == MADE_NODE && ino)
        member_type(t, ino, m, safe);
    free(mp);
}

static void populate_struct(struct gdir *d, const struct gr2_space *sp, uint32_t dir)
{
    const struct gr2_type *ty = gr2_type_get(&d->o->w.types, sp, d->type);
    if (!type_usable(d->o->v->fs->tree, dir, "type", ty))
        return;
    for (uint32_t i = 0; i < ty->nmembers; i++) {
        gr2_space_settle(sp); /* a member's nodes are made: the bytes it needed may go */
        add_member(d->o, sp, dir, d->path, &ty->m[i], ty->safe_name[i], d->obj.section,
                   d->obj.offset + ty->m[i].offset);
    }
    gr2_space_settle(sp); /* the members' nodes are made */
    gr2_exports_add(d->o->v, sp, ty, d->type, d->obj, dir); /* skeleton.glb, model.glb, mesh.obj */
    gr2_space_settle(sp);
    gr2_anim_add(d->o->anim, sp, d->type, d->obj, dir); /* knots.csv, samples.csv, animation.glb ... */
}

/* Elements 0..n-1 of one member kind, `stride` bytes apart: arrays of structs, arrays of
 * pointers and fixed-width members all list this way. */
static void populate_elements(struct gdir *d, const struct gr2_space *sp, uint32_t dir, const struct gr2_member *m,
                              uint32_t n, uint32_t stride)
{
    for (uint32_t k = 0; k < n; k++) {
        gr2_space_settle(sp); /* an element's nodes are made: the bytes it needed may go */
        char name[16], *ep = gr2_path_index(d->path, k);
        snprintf(name, sizeof name, "%" PRIu32, k);
        uint32_t ino;
        if (ep)
            add_element(d->o, sp, dir, d->path, name, m, d->obj.section, d->obj.offset + k * stride, ep, &ino);
        else
            tree_note_oom(d->o->v->fs->tree); /* never an element left out */
        free(ep);
    }
}

static void populate_transform(struct gdir *d, const struct gr2_space *sp, uint32_t dir)
{
    struct tree *t = d->o->v->fs->tree;
    if (!bytes_there(t, sp, dir, "transform", d->obj.section, d->obj.offset, GR2_TRANSFORM_SIZE))
        return;
    const char *why;
    const uint8_t *b = gr2_bytes(sp, d->obj.section, d->obj.offset, GR2_TRANSFORM_SIZE, &why);
    bool be = sp->g->be;
    float f[16];
    for (int i = 0; i < 16; i++) {
        uint32_t u = ld_u32(b + 4 + 4 * i, be);
        memcpy(&f[i], &u, 4);
    }
    uint32_t ino = tree_add_textf(t, dir, "flags", "u32", "0x%08" PRIx32 "\n", ld_u32(b, be));
    span_of(d->o, ino, d->obj.section, d->obj.offset, 4);
    ino = tree_add_textf(t, dir, "position", "f32[3]", "%.9g\n%.9g\n%.9g\n", (double)f[0], (double)f[1],
                         (double)f[2]);
    span_of(d->o, ino, d->obj.section, d->obj.offset + 4, 12);
    ino = tree_add_textf(t, dir, "orientation", "f32[4]", "%.9g\n%.9g\n%.9g\n%.9g\n", (double)f[3], (double)f[4],
                         (double)f[5], (double)f[6]);
    span_of(d->o, ino, d->obj.section, d->obj.offset + 16, 16);
    ino = tree_add_textf(t, dir, "scale_shear", "f32[3][3]", "%.9g %.9g %.9g\n%.9g %.9g %.9g\n%.9g %.9g %.9g\n",
                         (double)f[7], (double)f[8], (double)f[9], (double)f[10], (double)f[11], (double)f[12],
                         (double)f[13], (double)f[14], (double)f[15]);
    span_of(d->o, ino, d->obj.section, d->obj.offset + 32, 36);
}

static enum s3_err populate_gdir(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)t, (void)arg;
    struct gdir *d = ctx;
    struct gr2_space sp;
    enum s3_err e = gr2_view_pin(d->o->v, &sp);
    if (e == S3_OK)
        e = walk(d->o, &sp);
    if (e) {
        gr2_view_unpin(d->o->v, &sp);
        return e;
    }
    switch (d->kind) {
    case GD_STRUCT:
        populate_struct(d, &sp, dir);
        break;
    case GD_ARRAY: {
        struct gr2_member m = {.type = GR2_INLINE, .ref_type = d->type, .has_ref_type = true, .size = d->size};
        populate_elements(d, &sp, dir, &m, d->count, d->size);
        break;
    }
    case GD_PTRARRAY: {
        struct gr2_member m = {.type = GR2_REFERENCE, .ref_type = d->type, .has_ref_type = true};
        populate_elements(d, &sp, dir, &m, d->count, d->size);
        break;
    }
    case GD_WIDTH:
        populate_elements(d, &sp, dir, d->m, (uint32_t)d->m->array_width,
                          d->m->size / (uint32_t)d->m->array_width);
        break;
    case GD_TRANSFORM:
        populate_transform(d, &sp, dir);
        break;
    }
    gr2_view_unpin(d->o->v, &sp);
    return S3_OK;
}

/* ---- /granny/types ---- */

static enum s3_err populate_types(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    struct gobj *o = ctx;
    struct gr2_space sp;
    enum s3_err e = gr2_view_pin(o->v, &sp);
    if (e == S3_OK)
        e = walk(o, &sp);
    if (e) {
        gr2_view_unpin(o->v, &sp);
        return e;
    }
    for (size_t i = 0; i < o->w.types.n; i++) {
        /* through the registry: one refused memory in an earlier request is made again */
        const struct gr2_type *ty = gr2_type_get(&o->w.types, &sp, o->w.types.t[i]->at);
        char name[48];
        snprintf(name, sizeof name, "%" PRIu32 "_0x%" PRIx32, ty->at.section, ty->at.offset);
        if (!type_usable(t, dir, name, ty))
            continue;
        struct sbuf b = {0};
        sb_printf(&b, "# size %" PRIu32 " bytes, %" PRIu32 " members\n", ty->size, ty->nmembers);
        for (uint32_t k = 0; k < ty->nmembers; k++) {
            const struct gr2_member *m = &ty->m[k];
            sb_printf(&b, "%s %.*s", gr2_member_type_name(m->type), (int)m->name_len, m->name ? m->name : "");
            if (m->array_width > 0)
                sb_printf(&b, "[%" PRId32 "]", m->array_width);
            if (m->has_ref_type)
                sb_printf(&b, " -> %" PRIu32 "_0x%" PRIx32, m->ref_type.section, m->ref_type.offset);
            sb_printf(&b, " @%" PRIu32 "\n", m->offset);
        }
        size_t len;
        char *text = sb_take(&b, &len);
        uint32_t ino = tree_add_text(t, dir, name, "gr2.type", text, len);
        span_of(o, ino, ty->at.section, ty->at.offset, (uint64_t)(ty->nmembers + 1) * (sp.g->pointer_bits == 64 ? 44 : 32));
    }
    gr2_view_unpin(o->v, &sp);
    return S3_OK;
}

/* ---- entry points ---- */

/* /granny/NAME -> root/MEMBER only when the root's MEMBER array is there and not empty (a
 * convenience link never dangles). MEMBER is found by name, or by its place in the
 * standard root when the file's names are remapped. */
static void add_root_link(struct gobj *o, const struct gr2_space *sp, uint32_t granny_dir, const struct gr2_type *root,
                          const char *member, const char *name)
{
    const struct gr2_member *sk = gr2_std_find(root, GR2_STD_ROOT, member);
    if (!sk || sk->array_width > 0 || gr2_is_scalar(sk->type) || sk->type == GR2_STRING ||
        sk->type == GR2_TRANSFORM)
        return;
    struct gr2_elem e;
    gr2_resolve(&o->w.types, sp, sk, o->v->g.root_object.section, o->v->g.root_object.offset + sk->offset, &e);
    if (e.kind == GR2_EK_ERROR && e.reason == S3_ERR_NOMEM) {
        tree_note_oom(o->v->fs->tree); /* never a link left out */
        return;
    }
    bool shown = (e.kind == GR2_EK_PTRARRAY && e.count > 0) ||
                 (e.kind == GR2_EK_ARRAY && e.count > 0 && !gr2_elem_is_table(&o->w.types, sp, &e));
    if (!shown)
        return;
    char target[300]; /* root/MEMBER is a directory or a link that resolves */
    snprintf(target, sizeof target, "root/%s", root->safe_name[sk - root->m]);
    tree_add_link(o->v->fs->tree, granny_dir, name, target);
}

/* A directory whose bytes cannot be had: its listing fails with the reason in arg, and
 * the tree tries again next time (a failed populate leaves it unpopulated). */
static enum s3_err populate_unreadable(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)t, (void)dir, (void)ctx;
    return (enum s3_err)arg;
}

void gobj_test_measured(struct gr2_view *v, uint64_t *tables, uint64_t *anim_text)
{
    const struct gobj *o = v->extra;
    *tables = o ? o->csv_measured : 0;
    *anim_text = o ? gr2_anim_text_measured(o->anim) : 0;
}

static void gobj_add(struct gr2_view *v, uint32_t granny_dir, void *ctx)
{
    (void)ctx;
    struct tree *t = v->fs->tree;
    struct gobj *o = v->extra;
    struct gr2_space sp;
    enum s3_err e = gr2_view_pin(v, &sp);
    if (e == S3_ERR_NOMEM) { /* /granny's listing fails, and is made again next time */
        tree_note_oom(t);
        return;
    }
    if (e) { /* the file changed: root lists as that error, on every try */
        tree_add_dir(t, granny_dir, "root", "gr2.struct", populate_unreadable, NULL, e);
        return;
    }
    new_request(o);
    const struct gr2_type *root = gr2_type_get(&o->w.types, &sp, v->g.root_type);
    const char *why = NULL;
    const uint8_t *b;
    enum s3_err re = !root ? S3_ERR_NOMEM : !root->ok ? root->reason : S3_OK;
    if (re)
        why = root ? root->err : "out of memory";
    else
        re = gr2_bytes_at(&sp, v->g.root_object.section, v->g.root_object.offset, root->size, &b, &why);
    if (re == S3_ERR_NOMEM) { /* /granny's listing fails, and is made again next time */
        tree_note_oom(t);
    } else if (re) {
        char msg[256];
        snprintf(msg, sizeof msg, "root object %" PRIu32 " %" PRIu32 ": %s", v->g.root_object.section,
                 v->g.root_object.offset, why);
        add_error(t, granny_dir, "root", msg);
    } else {
        struct gr2_elem e = {.type = v->g.root_type, .obj = v->g.root_object};
        uint32_t ino = add_gdir(o, granny_dir, "root", GD_STRUCT, &e, NULL, "", root->size);
        set_typef(t, ino, "gr2.struct");
        add_root_link(o, &sp, granny_dir, root, "Skeletons", "skeletons");
        add_root_link(o, &sp, granny_dir, root, "Animations", "animations");
        tree_add_dir(t, granny_dir, "types", "gr2.types", populate_types, o, 0);
    }
    if (!re)
        gr2_exports_links(v, &sp, granny_dir);
    gr2_view_unpin(v, &sp);
}

static void gobj_free(void *p)
{
    struct gobj *o = p;
    if (!o)
        return;
    gr2_walk_free(&o->w);
    gr2_anim_free(o->anim);
    for (size_t i = 0; i < o->ncolsets; i++)
        colset_free(o->colsets[i]);
    free(o->colsets);
    free(o->tables);
    free(o);
}

/* -o rw: a table's NAME.csv whose columns all have encoders is writable, cell by cell.
 * In a section stored as is its records are a plain run of the file (tf->off); in a
 * compressed one tf->off is the stored section's, and its place in the expanded bytes
 * is the node's (gr2_view_expanded_at, span_of). */
static bool gobj_table(struct s3fs *fs, uint32_t ino, struct table_field *tf, void *ctx)
{
    (void)ctx; /* one hook for every object tree of the mount: the file says whose */
    struct gtable *tb = tree_gen_ctx(fs->tree, ino, csv_read);
    if (!tb || !tb->cs->tcols || tb->obj.section >= tb->o->v->g.nsections)
        return false;
    struct gobj *o = tb->o;
    uint64_t abs, alen;
    gr2_view_span(o->v, tb->obj.section, tb->obj.offset, (uint64_t)tb->count * tb->size, &abs, &alen);
    *tf = (struct table_field){.off = abs, .nrec = tb->count, .stride = tb->size, .be = o->v->g.be,
                               .header = tb->cs->header, .cols = tb->cs->tcols, .ncols = tb->cs->n};
    return true;
}

/* -o rw: a member of a scalar type (its elements, a fixed array's too) and a transform's
 * flags, position, orientation and scale/shear are fields: their bytes are the member's in
 * its section, in the file's byte order. Strings, references, untyped words and what is
 * derived (exports, CSVs of animations) are not. In a compressed section the span
 * published is the stored section's: the field's length is its place's in the expanded
 * bytes (gr2_view_place), where rw writes it. */
static bool gobj_value(struct s3fs *fs, uint32_t ino, struct view_value *out, void *ctx)
{
    (void)ctx; /* one hook for every object tree of the mount: the directory says whose */
    struct tree *t = fs->tree;
    const struct gdir *d = tree_dir_ctx(t, tree_parent(t, ino), populate_gdir);
    if (!d || (d->kind != GD_STRUCT && d->kind != GD_TRANSFORM))
        return false;
    struct gobj *o = d->o;
    uint32_t sec;
    uint64_t off, len;
    if (!gr2_view_place(o->v, ino, &sec, &off, &len))
        return view_value_as_published(t, ino, o->v->g.be, out);
    char type[160];
    struct field_type ft;
    if (tree_getxattr_str(t, ino, "user.s3rig.type", type, sizeof type) || !type[0] ||
        field_type_parse(type, len, &ft))
        return false;
    *out = (struct view_value){off, len, ft.kind, o->v->g.be, 0, NULL, 0};
    return true;
}

/* -o rw: a table's NAME.bin in a compressed section (its records' expanded bytes, a file
 * generated from the section): the Granny view, the section and the records' place in its
 * expanded bytes, so that a write goes there and the section is stored raw. False for
 * every other node (a NAME.bin in a section stored as is is a range of the file). */
static bool gobj_table_bytes_at(struct tree *t, uint32_t ino, struct gr2_view **v, uint32_t *sec, uint64_t *off,
                                uint64_t *len)
{
    const struct gtable *tb = tree_gen_ctx(t, ino, table_bin_read);
    if (!tb || tb->obj.section >= tb->o->v->g.nsections)
        return false;
    *v = tb->o->v;
    *sec = tb->obj.section;
    *off = tb->obj.offset;
    *len = (uint64_t)tb->count * tb->size;
    return true;
}

/* -o rw's section hook for a table's NAME.bin in a compressed section (the Granny view's
 * own, granny_sections, says the rest): added once per mount, it finds the table from the
 * file. */
static bool gobj_sections(struct s3fs *fs, enum view_section_ask ask, uint32_t dir, uint32_t ino,
                          struct view_section *out, void *ctx)
{
    (void)dir, (void)ctx;
    struct gr2_view *v;
    if (ask != VIEW_SECTION_BYTES || !gobj_table_bytes_at(fs->tree, ino, &v, &out->sec, &out->off, &out->len))
        return false;
    gr2_view_sections(v, out);
    return true;
}

enum s3_err gobj_attach(struct gr2_view *v)
{
    if (v->extra)
        return S3_OK;
    struct gobj *o = calloc(1, sizeof *o);
    if (!o)
        return S3_ERR_NOMEM;
    o->v = v;
    o->anim = gr2_anim_new(v);
    if (!o->anim) {
        free(o);
        return S3_ERR_NOMEM;
    }
    v->extra = o;
    v->extra_free = gobj_free;
    enum s3_err e = tree_gen_item(csv_read, table_item);
    if (e == S3_OK)
        e = tree_gen_item(table_bin_read, table_item);
    if (e == S3_OK)
        e = view_add_table_hook_shared(v->fs, gobj_table);
    if (e == S3_OK)
        e = view_add_value_hook_shared(v->fs, gobj_value);
    if (e == S3_OK)
        e = view_add_section_hook_shared(v->fs, gobj_sections);
    return e ? e : gr2_view_add_granny_extra(v, gobj_add, NULL);
}

enum s3_err gobj_first_skeleton(struct gr2_view *v, char **bones_path, uint32_t *count, char ***names, char *why,
                                size_t whylen)
{
    *bones_path = NULL;
    *names = NULL;
    *count = 0;
    if (gobj_attach(v))
        return s3_fail(S3_ERR_NOMEM, why, whylen, "out of memory");
    struct gobj *o = v->extra;
    struct gr2_space sp;
    enum s3_err e = gr2_view_pin(v, &sp);
    if (e != S3_OK)
        return s3_fail(e, why, whylen, "%s", e == S3_ERR_NOMEM ? "out of memory" : "the file changed");
    if (walk(o, &sp) != S3_OK) {
        gr2_view_unpin(v, &sp);
        return s3_fail(S3_ERR_NOMEM, why, whylen, "out of memory");
    }
    struct gr2_bones b;
    e = gr2_first_bones(&o->w, &sp, &b, why, whylen);
    if (e == S3_OK && gr2_elem_is_table(&o->w.types, &sp, &b.arr))
        e = s3_fail(S3_ERR_FORMAT, why, whylen,
                    "the first skeleton's bones hold no names or references (shown as a table)");
    /* links only where the walk put the bones: a skeleton the tree shows as an .error (its
     * bytes run past its section) has none, and a guessed path would dangle */
    if (e == S3_OK && !b.first)
        diag_add(&v->fs->diag, "bone links unavailable: the first skeleton's bones are not in the object tree "
                               "(see its .error)");
    if (e == S3_OK && b.first && asprintf(bones_path, "granny/root/%s", b.first) < 0) {
        *bones_path = NULL;
        e = s3_fail(S3_ERR_NOMEM, why, whylen, "out of memory");
    }
    if (e == S3_OK) {
        if (b.nnamed == 0 && b.arr.count > 0) {
            if (b.ncrc > 0)
                diag_add(&v->fs->diag, "bone names unavailable: they are CRCs into an external string table "
                         "(string_table_crc 0x%08" PRIx32 "); .names files show ?", v->g.string_table_crc);
            else
                diag_add(&v->fs->diag, "bone names unavailable: the bones carry no Name strings; .names files show ?");
        }
        *count = b.arr.count;
        *names = b.names;
        b.names = NULL;
    }
    gr2_bones_free(&b);
    gr2_view_unpin(v, &sp);
    return e;
}
