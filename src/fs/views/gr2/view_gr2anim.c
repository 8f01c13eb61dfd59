/* Granny animations in the object tree: the index of animation objects, the CSV files of
 * curves and tracks (measured once, rendered on read), animation.glb. */
#include "fs/views/gr2/view_gr2anim.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs/views/gr2/view_gr2anim_glb.h"
#include "parse/base/diag.h"
#include "parse/gr2/gr2anim.h"

/* ---- the index: which objects are animations, tracks and curves ---- */

enum ekind { E_ANIM, E_GROUP, E_TTRACK, E_VTRACK, E_XTRACK, E_CURVE };

struct entry {
    struct gr2_ref type, obj;
    uint8_t kind, used;
    int32_t anim; /* E_ANIM: its index; tracks: the first animation whose groups hold the
                   * track's group (-1: none) */
};

struct gr2_anim {
    struct gr2_view *v;
    bool built;
    struct gr2_types types; /* used under the tree lock only */
    struct entry *map;      /* open addressing */
    size_t n, cap;
    struct gr2_ref *anim_type, *anim_obj; /* by animation index */
    uint32_t nanims;
    uint64_t text_measured; /* CSV bytes measured so far (bounded) */
};

static size_t hash_of(struct gr2_ref obj, struct gr2_ref type)
{
    uint64_t h = ((uint64_t)obj.section << 32 | obj.offset) * 0x9E3779B97F4A7C15ull;
    h ^= ((uint64_t)type.section << 32 | type.offset) * 0xC2B2AE3D27D4EB4Full;
    return (size_t)(h >> 17);
}

static bool same_ref(struct gr2_ref a, struct gr2_ref b)
{
    return a.section == b.section && a.offset == b.offset;
}

static struct entry *slot_of(struct entry *map, size_t cap, struct gr2_ref obj, struct gr2_ref type)
{
    size_t k = hash_of(obj, type) & (cap - 1);
    while (map[k].used && !(same_ref(map[k].obj, obj) && same_ref(map[k].type, type)))
        k = (k + 1) & (cap - 1);
    return &map[k];
}

static const struct entry *find(const struct gr2_anim *a, struct gr2_ref type, struct gr2_ref obj)
{
    if (!a->cap)
        return NULL;
    const struct entry *e = slot_of(a->map, a->cap, obj, type);
    return e->used ? e : NULL;
}

/* Index work, bounded like the object walk: a crafted file aliasing one big track array
 * from many groups cannot make it quadratic. oom: an allocation was refused (the index
 * is dropped and built again in the next request). */
struct budget {
    uint64_t left;
    bool out, oom;
};

/* Records an object (the first record of an object wins); false when it was there, or
 * when out of memory (b->oom). */
static bool put(struct gr2_anim *a, struct gr2_ref type, struct gr2_ref obj, enum ekind kind, int32_t anim,
                struct budget *b)
{
    if (2 * (a->n + 1) > a->cap) {
        size_t cap = a->cap ? 2 * a->cap : 256;
        struct entry *m = calloc(cap, sizeof *m);
        if (!m) {
            b->oom = true;
            return false;
        }
        for (size_t i = 0; i < a->cap; i++)
            if (a->map[i].used)
                *slot_of(m, cap, a->map[i].obj, a->map[i].type) = a->map[i];
        free(a->map);
        a->map = m;
        a->cap = cap;
    }
    struct entry *e = slot_of(a->map, a->cap, obj, type);
    if (e->used)
        return false;
    *e = (struct entry){type, obj, (uint8_t)kind, 1, anim};
    a->n++;
    return true;
}

static bool spend(struct budget *b, uint64_t n)
{
    if (b->oom)
        return false;
    if (b->left < n) {
        b->out = true;
        return false;
    }
    b->left -= n;
    return true;
}

static void index_curve(struct gr2_anim *a, const struct gr2_curve_ref *r, struct budget *b)
{
    put(a, r->type, r->obj, E_CURVE, -1, b);
}

/* A reader's failure: out of memory stops the index (b->oom); anything else leaves the
 * object out of it (it shows no derived files). */
static bool read_ok(enum s3_err e, struct budget *b)
{
    b->oom |= e == S3_ERR_NOMEM;
    return e == S3_OK;
}

static void index_group(struct gr2_anim *a, const struct gr2_space *sp, struct gr2_ref type, struct gr2_ref obj,
                        int32_t anim, struct budget *b)
{
    struct gr2_track_group g;
    char err[200];
    if (!read_ok(gr2_track_group_read(&a->types, sp, type, obj, &g, err, sizeof err), b))
        return;
    if (g.transform.kind == GR2_EK_ARRAY && spend(b, g.transform.count))
        for (uint32_t k = 0; !b->oom && k < g.transform.count; k++) {
            gr2_space_settle(sp); /* the index keeps references only */
            struct gr2_ref at = gr2_array_elem(&g.transform, k);
            if (!put(a, g.transform.type, at, E_TTRACK, anim, b))
                continue;
            struct gr2_transform_track tr;
            if (!read_ok(gr2_transform_track_read(&a->types, sp, g.transform.type, at, false, &tr, err, sizeof err),
                         b))
                continue;
            for (int r = 0; r < 3; r++)
                if (tr.located[r])
                    index_curve(a, &tr.where[r], b);
            gr2_transform_track_free(&tr);
        }
    if (g.vector.kind == GR2_EK_ARRAY && spend(b, g.vector.count))
        for (uint32_t k = 0; !b->oom && k < g.vector.count; k++) {
            gr2_space_settle(sp);
            struct gr2_ref at = gr2_array_elem(&g.vector, k);
            if (!put(a, g.vector.type, at, E_VTRACK, anim, b))
                continue;
            struct gr2_vector_track vt;
            if (read_ok(gr2_vector_track_read(&a->types, sp, g.vector.type, at, false, &vt, err, sizeof err), b) &&
                vt.located)
                index_curve(a, &vt.where, b);
            gr2_vector_track_free(&vt);
        }
    if (g.text.kind == GR2_EK_ARRAY && spend(b, g.text.count))
        for (uint32_t k = 0; !b->oom && k < g.text.count; k++)
            put(a, g.text.type, gr2_array_elem(&g.text, k), E_XTRACK, anim, b);
    b->oom |= g.transform.kind == GR2_EK_ERROR && g.transform.reason == S3_ERR_NOMEM;
    b->oom |= g.vector.kind == GR2_EK_ERROR && g.vector.reason == S3_ERR_NOMEM;
    b->oom |= g.text.kind == GR2_EK_ERROR && g.text.reason == S3_ERR_NOMEM;
    gr2_track_group_free(&g);
}

/* Groups are keyed by their object alone (the first animation holding one is its). */
static const struct gr2_ref group_key = {0xFFFFFFFFu, 0xFFFFFFFFu};

static void index_groups_of(struct gr2_anim *a, const struct gr2_space *sp, const struct gr2_elem *groups,
                            int32_t anim, struct budget *b)
{
    b->oom |= groups->kind == GR2_EK_ERROR && groups->reason == S3_ERR_NOMEM;
    if (groups->kind != GR2_EK_PTRARRAY || !spend(b, groups->count))
        return;
    for (uint32_t g = 0; !b->oom && g < groups->count; g++) {
        gr2_space_settle(sp);
        struct gr2_ref obj;
        if (gr2_ptr_elem(sp, groups, g, &obj) && put(a, group_key, obj, E_GROUP, anim, b))
            index_group(a, sp, groups->type, obj, anim, b);
    }
}

/* Drops a partial index: the next request builds it again. */
static void index_drop(struct gr2_anim *a)
{
    free(a->map);
    free(a->anim_type);
    free(a->anim_obj);
    a->map = NULL;
    a->anim_type = a->anim_obj = NULL;
    a->n = a->cap = 0;
    a->nanims = 0;
    a->built = false;
}

/* Builds the index once. NOMEM when an allocation was refused: nothing of it is kept
 * (no object left out of it for good), the next request builds it again. */
static enum s3_err build_index(struct gr2_anim *a, const struct gr2_space *sp)
{
    if (a->built)
        return S3_OK;
    a->built = true;
    uint64_t bytes = 0;
    for (uint32_t i = 0; i < sp->g->nsections; i++)
        bytes += sp->size[i];
    struct budget b = {bytes / 4 > 65536 ? bytes / 4 : 65536, false, false};
    struct gr2_elem anims, groups;
    gr2_root_array(&a->types, sp, "Animations", &anims);
    b.oom |= anims.kind == GR2_EK_ERROR && anims.reason == S3_ERR_NOMEM;
    if (anims.kind == GR2_EK_PTRARRAY && spend(&b, anims.count)) {
        a->anim_type = calloc(anims.count, sizeof *a->anim_type);
        a->anim_obj = calloc(anims.count, sizeof *a->anim_obj);
        b.oom |= !a->anim_type || !a->anim_obj;
        for (uint32_t k = 0; !b.oom && k < anims.count; k++) {
            gr2_space_settle(sp);
            struct gr2_ref obj;
            struct gr2_animation an;
            char err[200];
            if (!gr2_ptr_elem(sp, &anims, k, &obj) ||
                !read_ok(gr2_animation_read(&a->types, sp, anims.type, obj, &an, err, sizeof err), &b))
                continue;
            int32_t idx = (int32_t)a->nanims++;
            a->anim_type[idx] = anims.type;
            a->anim_obj[idx] = obj;
            put(a, anims.type, obj, E_ANIM, idx, &b);
            index_groups_of(a, sp, &an.groups, idx, &b);
            gr2_animation_free(&an);
        }
    }
    if (!b.oom) {
        gr2_root_array(&a->types, sp, "TrackGroups", &groups);
        index_groups_of(a, sp, &groups, -1, &b);
    }
    if (!b.oom && b.out &&
        diag_add(&a->v->fs->diag, "animation index stopped after %" PRIu64 " track visits: some tracks have no "
                 "samples.csv", bytes / 4 > 65536 ? bytes / 4 : 65536))
        b.oom = true; /* the listing fails (ENOMEM), never an /info without it */
    if (b.oom) {
        index_drop(a);
        return S3_ERR_NOMEM;
    }
    return S3_OK;
}

struct gr2_anim *gr2_anim_new(struct gr2_view *v)
{
    struct gr2_anim *a = calloc(1, sizeof *a);
    if (a)
        a->v = v;
    return a;
}

void gr2_anim_free(struct gr2_anim *a)
{
    if (!a)
        return;
    gr2_types_free(&a->types);
    free(a->map);
    free(a->anim_type);
    free(a->anim_obj);
    free(a);
}

/* ---- CSV files: rows measured once, rendered on read ---- */

#define ROWS_PER_MARK 8 /* a read renders at most this many rows before the bytes it wants */
#define MAX_SAMPLE_ROWS 1000000ull    /* rows of one samples.csv, at most (2.3 hours at 120 a second) */
#define TEXT_BUDGET_MIN (256ull << 20) /* CSV bytes measured per file, at least (else 16 × its bytes) */

enum rkind { R_KNOTS, R_CONTROLS, R_TSAMPLES, R_VSAMPLES, R_ENTRIES };

/* One CSV file: immutable once measured (reads on any thread use it). */
struct rows {
    struct gr2_anim *a;
    enum rkind kind;
    struct gr2_ref type, obj;
    double duration, step; /* samples */
    uint64_t nrows, header_len, total;
    uint64_t *mark; /* mark[i]: where row i × ROWS_PER_MARK starts */
};

/* What a file's rows are made from, decoded for one measure or read. */
struct rowsrc {
    struct gr2_curve curve;
    struct gr2_transform_track tt;
    struct gr2_vector_track vt;
    struct gr2_text_track xt;
    struct gr2_seek seek[3];
    bool open;
};

static void rowsrc_close(struct rows *r, struct rowsrc *s)
{
    if (!s->open)
        return;
    if (r->kind == R_KNOTS || r->kind == R_CONTROLS)
        gr2_curve_free(&s->curve);
    else if (r->kind == R_TSAMPLES)
        gr2_transform_track_free(&s->tt);
    else if (r->kind == R_VSAMPLES)
        gr2_vector_track_free(&s->vt);
    else
        gr2_text_track_free(&s->xt);
    s->open = false;
}

/* S3_OK with s open, or the reason with err (s closed). */
static enum s3_err rowsrc_open(struct rows *r, struct gr2_types *reg, const struct gr2_space *sp, struct rowsrc *s,
                               uint64_t *nrows, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    enum s3_err rc = S3_OK;
    switch (r->kind) {
    case R_KNOTS:
    case R_CONTROLS: {
        struct gr2_curve_ref ref = {sp->g->type_tag >= 0x80000000u && sp->g->type_tag <= GR2_OLD_LAYOUT_LAST_TAG,
                                    r->type, r->obj};
        rc = gr2_curve_read(reg, sp, &ref, &s->curve, err, errlen);
        if (rc == S3_OK && r->kind == R_KNOTS && s->curve.kind == GR2_CURVE_SAMPLES) {
            gr2_curve_free(&s->curve);
            return s3_fail(S3_ERR_UNSUPPORTED, err, errlen,
                           "%s: raw samples whose times are not known (unconfirmed): no knots",
                           gr2_curve_format_name(s->curve.format));
        }
        *nrows = r->kind == R_KNOTS && s->curve.kind != GR2_CURVE_KNOTS ? 0 : s->curve.n;
        break;
    }
    case R_TSAMPLES:
        rc = gr2_transform_track_read(reg, sp, r->type, r->obj, true, &s->tt, err, errlen);
        if (rc == S3_OK && (rc = gr2_transform_track_check(&s->tt, err, errlen)) != S3_OK)
            gr2_transform_track_free(&s->tt);
        break;
    case R_VSAMPLES:
        rc = gr2_vector_track_read(reg, sp, r->type, r->obj, true, &s->vt, err, errlen);
        if (rc == S3_OK && !s->vt.ok) {
            rc = s3_fail(S3_ERR_FORMAT, err, errlen, "%s", s->vt.err);
            gr2_vector_track_free(&s->vt);
        }
        break;
    case R_ENTRIES:
        rc = gr2_text_track_read(reg, sp, r->type, r->obj, &s->xt, err, errlen);
        *nrows = s->xt.n;
        break;
    }
    s->open = rc == S3_OK;
    return rc;
}

static void put_value(struct sbuf *out, double v, bool first)
{
    sb_printf(out, first ? "%.9g" : ",%.9g", (double)(float)v);
}

static void header(const struct rows *r, const struct rowsrc *s, struct sbuf *out)
{
    if (r->kind == R_TSAMPLES) {
        sb_printf(out, "t,px,py,pz,qx,qy,qz,qw,s00,s01,s02,s10,s11,s12,s20,s21,s22\n");
    } else if (r->kind == R_VSAMPLES) {
        sb_printf(out, "t");
        for (int32_t j = 0; j < s->vt.dimension; j++)
            sb_printf(out, ",v%" PRId32, j);
        sb_printf(out, "\n");
    } else if (r->kind == R_ENTRIES) {
        sb_printf(out, "t,text\n");
    }
}

/* Sample k's time: min(k × step, Duration), as a float. */
static double sample_time(const struct rows *r, uint64_t k)
{
    double t = (double)k * r->step;
    return (float)(t < r->duration ? t : r->duration);
}

static void row(const struct rows *r, struct rowsrc *s, uint64_t i, struct sbuf *out)
{
    switch (r->kind) {
    case R_KNOTS:
        sb_printf(out, "%.9g\n", s->curve.knots[i]);
        return;
    case R_CONTROLS:
        for (uint32_t j = 0; j < s->curve.dim; j++)
            put_value(out, s->curve.controls[(size_t)i * s->curve.dim + j], j == 0);
        sb_put(out, "\n", 1);
        return;
    case R_TSAMPLES: {
        double t = sample_time(r, i), v[16];
        gr2_transform_track_eval(&s->tt, t, v, s->seek, NULL);
        put_value(out, t, true);
        for (int j = 0; j < 16; j++)
            put_value(out, v[j], false);
        sb_put(out, "\n", 1);
        return;
    }
    case R_VSAMPLES: {
        double t = sample_time(r, i), v[GR2_CURVE_MAX_DIM];
        gr2_curve_eval(&s->vt.curve, GR2_ROLE_VECTOR, (uint32_t)s->vt.dimension, t, v, s->seek, NULL);
        put_value(out, t, true);
        for (int32_t j = 0; j < s->vt.dimension; j++)
            put_value(out, v[j], false);
        sb_put(out, "\n", 1);
        return;
    }
    case R_ENTRIES:
        put_value(out, s->xt.e[i].t, true);
        sb_put(out, ",", 1);
        sb_csv_field(out, s->xt.e[i].text);
        sb_put(out, "\n", 1);
        return;
    }
}

static uint64_t text_budget(const struct gr2_space *sp)
{
    uint64_t bytes = 0;
    for (uint32_t i = 0; i < sp->g->nsections; i++)
        bytes += sp->size[i];
    return 16 * bytes > TEXT_BUDGET_MIN ? 16 * bytes : TEXT_BUDGET_MIN;
}

/* The row count of a samples file: k = 0 .. ceil(Duration / step). */
static enum s3_err sample_rows(struct rows *r, uint64_t *nrows, char *err, size_t errlen)
{
    if (!(r->duration >= 0) || !isfinite(r->duration))
        return s3_fail(S3_ERR_FORMAT, err, errlen, "the animation's Duration %g is not a number of seconds",
                       r->duration);
    double k = ceil(r->duration / r->step);
    if (!(k < (double)MAX_SAMPLE_ROWS))
        return s3_fail(S3_ERR_LIMIT, err, errlen, "Duration %g s at a step of %g s makes %.0f rows, more than %llu",
                       r->duration, r->step, k + 1, MAX_SAMPLE_ROWS);
    *nrows = (uint64_t)k + 1;
    return S3_OK;
}

uint64_t gr2_anim_text_measured(const struct gr2_anim *a)
{
    return a ? a->text_measured : 0;
}

/* The listing that measured them failed: its bytes are not counted (its retry measures
 * them again). */
static void give_back_measured(void *ctx, uint64_t amount)
{
    struct gr2_anim *a = ctx;
    a->text_measured -= amount;
}

/* Counts a file's measured text against the budget, given back if its listing fails. */
static enum s3_err count_measured(struct gr2_anim *a, uint64_t total, char *err, size_t errlen)
{
    if (tree_on_rollback(a->v->fs->tree, give_back_measured, a, total))
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    a->text_measured += total;
    return S3_OK;
}

/* Measures the file: its exact size, and where every ROWS_PER_MARK-th row starts. */
static enum s3_err measure(struct rows *r, const struct gr2_space *sp, char *err, size_t errlen)
{
    struct rowsrc s;
    uint64_t nrows = 0;
    enum s3_err rc = rowsrc_open(r, &r->a->types, sp, &s, &nrows, err, errlen);
    if (rc != S3_OK)
        return rc;
    if (r->kind == R_TSAMPLES || r->kind == R_VSAMPLES)
        rc = sample_rows(r, &nrows, err, errlen);
    uint64_t budget = text_budget(sp);
    r->mark = rc ? NULL : tree_alloc(r->a->v->fs->tree, ((nrows + ROWS_PER_MARK - 1) / ROWS_PER_MARK + 1) * sizeof *r->mark);
    if (!rc && !r->mark)
        rc = s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    /* measured without keeping text: nothing to refuse, so never a size short of what a
     * read renders */
    struct sbuf text = {.measure = 1};
    if (!rc) {
        header(r, &s, &text);
        r->header_len = r->total = text.len;
        r->nrows = nrows;
    }
    for (uint64_t i = 0; !rc && i < nrows; i++) {
        if (i % ROWS_PER_MARK == 0)
            r->mark[i / ROWS_PER_MARK] = r->total;
        text.len = 0;
        row(r, &s, i, &text);
        r->total += text.len;
        if (r->a->text_measured + r->total > budget)
            rc = s3_fail(S3_ERR_LIMIT, err, errlen,
                         "this file's animation text is larger than the limit (16 times the file's expanded bytes)");
    }
    sb_free(&text);
    rowsrc_close(r, &s);
    if (!rc)
        rc = count_measured(r->a, r->total, err, errlen);
    return rc;
}

static enum s3_err rows_read(struct tree *t, void *ctx, uint64_t arg, uint64_t off, void *buf, size_t len, size_t *got)
{
    (void)t, (void)arg;
    struct rows *r = ctx;
    struct gr2_space sp;
    enum s3_err e = gr2_view_pin(r->a->v, &sp);
    if (e)
        return e;
    struct gr2_types reg = {0};
    struct rowsrc s;
    uint64_t nrows = 0;
    char err[200];
    if ((e = rowsrc_open(r, &reg, &sp, &s, &nrows, err, sizeof err)) != S3_OK) {
        gr2_types_free(&reg);
        gr2_view_unpin(r->a->v, &sp);
        return e == S3_ERR_NOMEM ? e : S3_ERR_IO; /* it measured, so the bytes changed */
    }
    struct sbuf text = {0};
    uint64_t start, i;
    if (!rows_seek(r->mark, r->nrows, ROWS_PER_MARK, r->header_len, off, &i, &start))
        header(r, &s, &text);
    while (!text.oom && i < r->nrows && start + text.len < off + len)
        row(r, &s, i++, &text);
    rowsrc_close(r, &s);
    gr2_types_free(&reg);
    gr2_view_unpin(r->a->v, &sp);
    bool oom = text.oom; /* the text stops short: never read as the end */
    *got = oom ? 0 : rows_copy(&text, start, off, buf, len);
    sb_free(&text);
    return oom ? S3_ERR_NOMEM : S3_OK;
}

/* NAME.csv (or NAME.error saying why it cannot be made), typed and spanning the object. */
static void add_rows(struct gr2_anim *a, const struct gr2_space *sp, uint32_t dir, const char *name,
                     const char *xtype, struct rows proto, uint64_t span_len)
{
    struct tree *t = a->v->fs->tree;
    char err[256], fname[64], stem[64];
    snprintf(fname, sizeof fname, "%s.csv", name);
    snprintf(stem, sizeof stem, "%s", name);
    struct rows *r = tree_alloc(t, sizeof *r);
    if (!r)
        return;
    *r = proto;
    r->a = a;
    enum s3_err e = measure(r, sp, err, sizeof err);
    if (e == S3_ERR_NOMEM) { /* the listing fails (ENOMEM), never NAME.error */
        tree_note_oom(t);
        return;
    }
    if (e) {
        add_error(t, dir, stem, err);
        return;
    }
    uint32_t ino = tree_add_gen(t, dir, fname, xtype, r->total, rows_read, r, 0);
    uint64_t abs, alen;
    gr2_view_span(a->v, r->obj.section, r->obj.offset, span_len, &abs, &alen);
    tree_set_span(t, ino, abs, alen);
}

/* The size of a type (0 when it is bad); a type refused memory fails the listing (its
 * span would be short). */
static uint64_t size_of(struct gr2_anim *a, const struct gr2_space *sp, struct gr2_ref type)
{
    const struct gr2_type *t = gr2_type_get(&a->types, sp, type);
    if (!t || (!t->ok && t->reason == S3_ERR_NOMEM))
        tree_note_oom(a->v->fs->tree);
    return t && t->ok ? t->size : 0;
}

static void add_samples(struct gr2_anim *a, const struct gr2_space *sp, const struct entry *e, uint32_t dir)
{
    if (e->anim < 0) {
        add_error(a->v->fs->tree, dir, "samples",
                  "the track's group is in no Animation: there is no Duration to sample");
        return;
    }
    struct gr2_animation an;
    char err[200];
    enum s3_err rc = gr2_animation_read(&a->types, sp, a->anim_type[e->anim], a->anim_obj[e->anim], &an, err,
                                        sizeof err);
    if (rc == S3_ERR_NOMEM) { /* the listing fails (ENOMEM), never samples.error */
        tree_note_oom(a->v->fs->tree);
        return;
    }
    if (rc) {
        add_error(a->v->fs->tree, dir, "samples", err);
        return;
    }
    struct rows proto = {.kind = e->kind == E_TTRACK ? R_TSAMPLES : R_VSAMPLES, .type = e->type, .obj = e->obj,
                         .duration = an.duration, .step = gr2_animation_step(&an)};
    gr2_animation_free(&an);
    add_rows(a, sp, dir, "samples", "gr2.samples", proto, size_of(a, sp, e->type));
}

void gr2_anim_add(struct gr2_anim *a, const struct gr2_space *sp, struct gr2_ref type, struct gr2_ref obj,
                  uint32_t dir)
{
    if (!a)
        return;
    gr2_types_new_request(&a->types); /* a type refused memory before is decoded again */
    if (build_index(a, sp) != S3_OK) { /* the listing fails (ENOMEM), never one without its files */
        tree_note_oom(a->v->fs->tree);
        return;
    }
    const struct entry *e = find(a, type, obj);
    if (!e)
        return;
    uint64_t span = size_of(a, sp, type);
    switch (e->kind) {
    case E_CURVE:
        add_rows(a, sp, dir, "knots", "gr2.knots", (struct rows){.kind = R_KNOTS, .type = type, .obj = obj}, span);
        add_rows(a, sp, dir, "controls", "gr2.controls", (struct rows){.kind = R_CONTROLS, .type = type, .obj = obj},
                 span);
        break;
    case E_TTRACK:
    case E_VTRACK:
        add_samples(a, sp, e, dir);
        break;
    case E_XTRACK:
        add_rows(a, sp, dir, "entries", "gr2.entries", (struct rows){.kind = R_ENTRIES, .type = type, .obj = obj}, span);
        break;
    case E_ANIM:
        gr2_anim_glb_add(a->v, sp, type, obj, (uint32_t)e->anim, dir);
        break;
    default:
        break;
    }
}
