#include "parse/gr2/gr2walk.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/base/err.h"

/* ---- what one member element holds ---- */

static void elem_error(struct gr2_elem *e, enum s3_err reason, const char *fmt, uint64_t a, uint64_t b)
{
    snprintf(e->buf, sizeof e->buf, fmt, a, b);
    e->why = e->buf;
    e->kind = GR2_EK_ERROR;
    e->reason = reason;
}

/* An element whose slot could not be read: why is already set. */
static void elem_failed(struct gr2_elem *e, enum s3_err reason)
{
    e->kind = GR2_EK_ERROR;
    e->reason = reason;
}

/* An array of count elements of `size` bytes at obj must exist in its section. */
static void check_array(const struct gr2_space *sp, struct gr2_elem *e)
{
    const char *why;
    if (e->size == 0) {
        elem_error(e, S3_ERR_FORMAT, "array of %" PRIu64 " zero-sized elements%.0" PRIu64, e->count, 0);
        return;
    }
    if (!gr2_bytes(sp, e->obj.section, e->obj.offset, (uint64_t)e->count * e->size, &why))
        elem_error(e, S3_ERR_RANGE, "array of %" PRIu64 " elements of %" PRIu64 " bytes: does not fit its section",
                   e->count, e->size);
}

static void resolve_typed_array(struct gr2_types *types, const struct gr2_space *sp, struct gr2_elem *e,
                                bool has_type, uint32_t count, bool points)
{
    e->count = count;
    if (count == 0 || !points) {
        if (count)
            elem_error(e, S3_ERR_FORMAT, "count %" PRIu64 " with a NULL pointer%.0" PRIu64, count, 0);
        else
            e->kind = GR2_EK_NULL;
        return;
    }
    if (!has_type) {
        e->kind = GR2_EK_UNTYPED;
        return;
    }
    const struct gr2_type *t = gr2_type_get(types, sp, e->type);
    if (!t || !t->ok) {
        e->why = t ? t->err : "out of memory";
        elem_failed(e, !t ? S3_ERR_NOMEM : t->reason == S3_ERR_NOMEM || t->reason == S3_ERR_IO ? t->reason
                                                                                               : S3_ERR_FORMAT);
        return;
    }
    e->kind = GR2_EK_ARRAY;
    e->size = t->size;
    check_array(sp, e);
}

void gr2_resolve(struct gr2_types *types, const struct gr2_space *sp, const struct gr2_member *m, uint32_t sec,
                 uint32_t off, struct gr2_elem *e)
{
    memset(e, 0, sizeof *e);
    uint32_t p = (uint32_t)gr2_pointer_size(sp);
    const uint8_t *b;
    enum s3_err err = gr2_bytes_at(sp, sec, off, m->type == GR2_INLINE ? 0 : gr2_elem_size(sp, m->type), &b, &e->why);
    if (err) {
        elem_failed(e, err);
        return;
    }
    e->type = m->ref_type;
    bool points = false, typed = false;
    switch (m->type) {
    case GR2_INLINE:
        e->kind = GR2_EK_INLINE;
        e->obj = (struct gr2_ref){sec, off};
        return;
    case GR2_REFERENCE:
    case GR2_EMPTY_REF:
        if ((err = gr2_pointer(sp, sec, off, &e->obj, &points, &e->why)))
            elem_failed(e, err);
        else
            e->kind = !points ? GR2_EK_NULL
                    : (m->type == GR2_EMPTY_REF || !m->has_ref_type) ? GR2_EK_UNTYPED : GR2_EK_OBJECT;
        return;
    case GR2_VARIANT_REF:
        if ((err = gr2_pointer(sp, sec, off, &e->type, &typed, &e->why)) ||
            (err = gr2_pointer(sp, sec, off + p, &e->obj, &points, &e->why)))
            elem_failed(e, err);
        else
            e->kind = !points ? GR2_EK_NULL : !typed ? GR2_EK_UNTYPED : GR2_EK_OBJECT;
        return;
    case GR2_REF_TO_ARRAY:
        if ((err = gr2_pointer(sp, sec, off + 4, &e->obj, &points, &e->why))) {
            elem_failed(e, err);
            return;
        }
        resolve_typed_array(types, sp, e, m->has_ref_type, gr2_u32_at(sp, b), points);
        return;
    case GR2_REF_TO_VARIANT_ARRAY:
        if ((err = gr2_pointer(sp, sec, off, &e->type, &typed, &e->why)) ||
            (err = gr2_pointer(sp, sec, off + p + 4, &e->obj, &points, &e->why))) {
            elem_failed(e, err);
            return;
        }
        resolve_typed_array(types, sp, e, typed, gr2_u32_at(sp, b + p), points);
        return;
    case GR2_ARRAY_OF_REFS:
        e->count = gr2_u32_at(sp, b);
        if ((err = gr2_pointer(sp, sec, off + 4, &e->obj, &points, &e->why))) {
            elem_failed(e, err);
            return;
        }
        if (!points || e->count == 0) {
            if (e->count)
                elem_error(e, S3_ERR_FORMAT, "count %" PRIu64 " with a NULL pointer%.0" PRIu64, e->count, 0);
            else
                e->kind = GR2_EK_NULL;
            return;
        }
        e->kind = GR2_EK_PTRARRAY;
        e->size = p;
        check_array(sp, e);
        return;
    default:
        if (gr2_elem_size(sp, m->type) == 0)
            elem_error(e, S3_ERR_FORMAT, "unknown member type %" PRIu64 "%.0" PRIu64, m->type, 0);
        else
            e->kind = GR2_EK_VALUE;
    }
}

bool gr2_elem_is_table(struct gr2_types *types, const struct gr2_space *sp, const struct gr2_elem *e)
{
    if (e->kind != GR2_EK_ARRAY)
        return false;
    const struct gr2_type *t = gr2_type_get(types, sp, e->type);
    return t && t->ok && t->flat;
}

/* ---- first locations ---- */

static size_t key_hash(uint32_t sec, uint32_t off, uint8_t kind)
{
    uint64_t h = ((uint64_t)sec << 33) ^ ((uint64_t)off << 1) ^ kind;
    h *= 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 17);
}

static struct gr2_walk_entry *map_slot(struct gr2_walk_entry *map, size_t cap, uint32_t sec, uint32_t off,
                                       uint8_t kind)
{
    size_t k = key_hash(sec, off, kind) & (cap - 1);
    while (map[k].used && !(map[k].sec == sec && map[k].off == off && map[k].kind == kind))
        k = (k + 1) & (cap - 1);
    return &map[k];
}

const char *gr2_walk_first(const struct gr2_walk *w, struct gr2_ref r, enum gr2_key kind)
{
    if (!w->capmap)
        return NULL;
    struct gr2_walk_entry *e = map_slot(w->map, w->capmap, r.section, r.offset, (uint8_t)kind);
    return e->used ? e->path : NULL;
}

/* Records a first location: 1, 0 when the key was already there, -1 out of memory (never
 * taken for "already there": the walk fails instead). */
static int map_put(struct gr2_walk *w, struct gr2_ref r, uint8_t kind, const char *path)
{
    if (w->nmap * 2 >= w->capmap) {
        size_t cap = w->capmap ? w->capmap * 2 : 1024;
        struct gr2_walk_entry *m = calloc(cap, sizeof *m);
        if (!m)
            return -1;
        for (size_t i = 0; i < w->capmap; i++)
            if (w->map[i].used)
                *map_slot(m, cap, w->map[i].sec, w->map[i].off, w->map[i].kind) = w->map[i];
        free(w->map);
        w->map = m;
        w->capmap = cap;
    }
    struct gr2_walk_entry *e = map_slot(w->map, w->capmap, r.section, r.offset, kind);
    if (e->used)
        return 0;
    char *copy = strdup(path);
    if (!copy)
        return -1;
    *e = (struct gr2_walk_entry){r.section, r.offset, kind, 1, copy};
    w->nmap++;
    return 1;
}

/* ---- the breadth-first walk ---- */

struct instance {
    struct gr2_ref type, obj;
    char *path;
};

struct queue {
    struct instance *q;
    size_t head, tail, cap;
    uint64_t pushed, budget;
    uint64_t work; /* member elements visited: bounded by 16 × budget */
    bool stop;
    bool oom; /* an allocation failed, or bytes could not be made for lack of memory: the
               * walk stops and is undone (gr2_walk_run returns NOMEM) */
};

/* Out of memory: the walk stops, and keeps nothing. */
static void walk_oom(struct queue *q)
{
    q->oom = q->stop = true;
}

/* A first location recorded: true; false when already there or out of memory (q->oom). */
static bool first_put(struct gr2_walk *w, struct queue *q, struct gr2_ref r, uint8_t kind, const char *path)
{
    int put = map_put(w, r, kind, path);
    if (put < 0)
        walk_oom(q);
    return put > 0;
}

char *gr2_path_join(const char *a, const char *b)
{
    char *s = NULL;
    if (asprintf(&s, "%s%s%s", a, a[0] ? "/" : "", b) < 0)
        return NULL;
    return s;
}

char *gr2_path_index(const char *a, uint64_t i)
{
    char n[24];
    snprintf(n, sizeof n, "%" PRIu64, i);
    return gr2_path_join(a, n);
}

/* Paths too long to be shown (the view shows an .error there) are never first locations. */
static bool path_fits(struct gr2_walk *w, const char *path)
{
    if (strlen(path) <= GR2_WALK_MAX_PATH)
        return true;
    snprintf(w->note, sizeof w->note, "object walk stopped at paths longer than %d bytes: links may be missing",
             GR2_WALK_MAX_PATH);
    return false;
}

static void push(struct gr2_walk *w, struct queue *q, struct gr2_ref type, struct gr2_ref obj, char *path)
{
    if (!path) { /* the path could not be made */
        walk_oom(q);
        return;
    }
    if (q->stop || !path_fits(w, path)) {
        free(path);
        return;
    }
    if (q->pushed >= q->budget) {
        snprintf(w->note, sizeof w->note, "object walk stopped after %llu struct instances: links may be missing",
                 (unsigned long long)q->budget);
        free(path);
        return;
    }
    if (q->tail == q->cap) {
        if (q->head > 0) { /* reuse the consumed front */
            memmove(q->q, q->q + q->head, (q->tail - q->head) * sizeof *q->q);
            q->tail -= q->head;
            q->head = 0;
        }
        if (q->tail == q->cap) {
            size_t cap = q->cap ? q->cap * 2 : 256;
            struct instance *n = realloc(q->q, cap * sizeof *n);
            if (!n) {
                free(path);
                walk_oom(q);
                return;
            }
            q->q = n;
            q->cap = cap;
        }
    }
    q->q[q->tail++] = (struct instance){type, obj, path};
    q->pushed++;
}

/* A type and the bytes of an instance of it, sound: true; false when not (out of memory
 * sets q->oom: not knowing is no answer). */
static bool instance_sound(struct gr2_walk *w, const struct gr2_space *sp, struct queue *q, struct gr2_ref type,
                           struct gr2_ref obj)
{
    const struct gr2_type *t = gr2_type_get(&w->types, sp, type);
    if (!t || (!t->ok && t->reason == S3_ERR_NOMEM)) {
        walk_oom(q);
        return false;
    }
    const uint8_t *b;
    const char *why;
    enum s3_err e = t->ok ? gr2_bytes_at(sp, obj.section, obj.offset, t->size, &b, &why) : S3_ERR_FORMAT;
    if (e == S3_ERR_NOMEM)
        walk_oom(q);
    return e == S3_OK;
}

/* An object is shown at its first location only when its type and bytes are sound;
 * otherwise every place shows the same .error and none may link to it. */
static bool object_showable(struct gr2_walk *w, const struct gr2_space *sp, struct queue *q, const struct gr2_elem *e)
{
    return instance_sound(w, sp, q, e->type, e->obj);
}

static void walk_element(struct gr2_walk *w, const struct gr2_space *sp, struct queue *q, const struct gr2_elem *e,
                         const char *ep)
{
    switch (e->kind) {
    case GR2_EK_ERROR:
        if (e->reason == S3_ERR_NOMEM)
            walk_oom(q);
        break;
    case GR2_EK_INLINE:
        push(w, q, e->type, e->obj, strdup(ep));
        break;
    case GR2_EK_OBJECT:
        if (object_showable(w, sp, q, e) && path_fits(w, ep) && first_put(w, q, e->obj, GR2_KEY_SINGLE, ep))
            push(w, q, e->type, e->obj, strdup(ep));
        break;
    case GR2_EK_ARRAY:
        /* a table holds nothing to follow, and each place shows its own */
        if (gr2_elem_is_table(&w->types, sp, e))
            break;
        if (path_fits(w, ep) && first_put(w, q, e->obj, GR2_KEY_ARRAY, ep))
            for (uint32_t k = 0; k < e->count && !q->oom; k++)
                push(w, q, e->type, (struct gr2_ref){e->obj.section, e->obj.offset + k * e->size}, gr2_path_index(ep, k));
        break;
    case GR2_EK_PTRARRAY:
        for (uint32_t k = 0; k < e->count && !q->oom; k++) {
            gr2_space_settle(sp); /* each pointer's target is looked at alone */
            struct gr2_elem one = {.kind = GR2_EK_OBJECT, .type = e->type};
            const char *why;
            bool points;
            uint32_t slot = e->obj.offset + k * e->size;
            enum s3_err pe = gr2_pointer(sp, e->obj.section, slot, &one.obj, &points, &why);
            if (pe == S3_ERR_NOMEM)
                walk_oom(q);
            if (pe != S3_OK || !points || !object_showable(w, sp, q, &one))
                continue;
            char *kp = gr2_path_index(ep, k);
            if (!kp)
                walk_oom(q);
            else if (path_fits(w, kp) && first_put(w, q, one.obj, GR2_KEY_SINGLE, kp))
                push(w, q, e->type, one.obj, kp);
            else
                free(kp);
        }
        break;
    default:
        break;
    }
}

static void walk_instance(struct gr2_walk *w, const struct gr2_space *sp, struct queue *q, const struct instance *in)
{
    /* an instance whose bytes do not exist has nothing to follow */
    if (!instance_sound(w, sp, q, in->type, in->obj))
        return;
    const struct gr2_type *t = gr2_type_get(&w->types, sp, in->type);
    for (uint32_t i = 0; i < t->nmembers; i++) {
        const struct gr2_member *m = &t->m[i];
        if (gr2_is_scalar(m->type) || m->type == GR2_STRING || m->type == GR2_TRANSFORM)
            continue;
        uint32_t width = m->array_width > 0 ? (uint32_t)m->array_width : 1, esize = m->size / width;
        q->work += width;
        if (q->work > 16 * q->budget) {
            snprintf(w->note, sizeof w->note, "object walk stopped after %llu member visits: links may be missing",
                     (unsigned long long)q->work);
            q->stop = true; /* the rest of the queue is dropped */
            return;
        }
        char *mp = gr2_path_join(in->path, t->safe_name[i]);
        if (!mp)
            walk_oom(q);
        for (uint32_t k = 0; mp && k < width && !q->oom; k++) {
            gr2_space_settle(sp); /* nothing of the last element's bytes is kept */
            /* a member with an array width is a directory of 0..N-1, even of width 1 */
            char *ep = m->array_width > 0 ? gr2_path_index(mp, k) : strdup(mp);
            struct gr2_elem e;
            gr2_resolve(&w->types, sp, m, in->obj.section, in->obj.offset + m->offset + k * esize, &e);
            if (ep)
                walk_element(w, sp, q, &e, ep);
            else
                walk_oom(q);
            free(ep);
        }
        free(mp);
    }
}

/* Forgets every first location (the types stay: they keep no refusal). */
static void map_clear(struct gr2_walk *w)
{
    for (size_t i = 0; i < w->capmap; i++)
        if (w->map[i].used)
            free(w->map[i].path);
    free(w->map);
    w->map = NULL;
    w->nmap = w->capmap = 0;
}

enum s3_err gr2_walk_run(struct gr2_walk *w, const struct gr2_space *sp)
{
    if (w->done)
        return S3_OK;
    const struct gr2_file *g = sp->g;
    struct queue q = {0};
    /* Real files hold fewer struct instances than a quarter of their bytes; crafted ones
     * that alias arrays could otherwise ask for billions. */
    uint64_t bytes = 0;
    for (uint32_t i = 0; i < g->nsections; i++)
        bytes += sp->size[i];
    q.budget = bytes / 4 < GR2_WALK_MIN_INSTANCES ? GR2_WALK_MIN_INSTANCES
               : bytes / 4 > GR2_WALK_MAX_INSTANCES ? GR2_WALK_MAX_INSTANCES : bytes / 4;
    if (first_put(w, &q, g->root_object, GR2_KEY_SINGLE, ""))
        push(w, &q, g->root_type, g->root_object, strdup(""));
    while (q.head < q.tail) {
        struct instance in = q.q[q.head++];
        if (!q.stop)
            walk_instance(w, sp, &q, &in);
        free(in.path);
    }
    free(q.q);
    if (q.oom) { /* nothing of it kept: the next request walks again */
        map_clear(w);
        w->note[0] = 0;
        return S3_ERR_NOMEM;
    }
    w->done = true;
    return S3_OK;
}

void gr2_walk_free(struct gr2_walk *w)
{
    gr2_types_free(&w->types);
    map_clear(w);
    memset(w, 0, sizeof *w);
}

/* ---- the first skeleton ---- */

/* A type that could not be made (or failed for lack of memory): the caller's answer
 * would be a guess, so it fails with NOMEM. */
static bool type_oom(const struct gr2_type *t)
{
    return !t || (!t->ok && t->reason == S3_ERR_NOMEM);
}

enum s3_err gr2_first_bones(struct gr2_walk *w, const struct gr2_space *sp, struct gr2_bones *out, char *why,
                            size_t whylen)
{
    memset(out, 0, sizeof *out);
    if (gr2_walk_run(w, sp) != S3_OK)
        return s3_fail(S3_ERR_NOMEM, why, whylen, "out of memory");
    const struct gr2_file *g = sp->g;
    const struct gr2_type *root = gr2_type_get(&w->types, sp, g->root_type);
    const struct gr2_member *sk = root && root->ok ? gr2_find_member(root, "Skeletons") : NULL;
    struct gr2_elem e;
    if (type_oom(root))
        return s3_fail(S3_ERR_NOMEM, why, whylen, "out of memory");
    if (!sk || sk->type != GR2_ARRAY_OF_REFS)
        return s3_fail(S3_ERR_FORMAT, why, whylen, "the root object has no Skeletons array");
    gr2_resolve(&w->types, sp, sk, g->root_object.section, g->root_object.offset + sk->offset, &e);
    struct gr2_ref skel;
    const char *wy = "no skeleton";
    bool points = false;
    enum s3_err err = e.kind == GR2_EK_PTRARRAY ? gr2_pointer(sp, e.obj.section, e.obj.offset, &skel, &points, &wy)
                      : e.kind == GR2_EK_ERROR ? e.reason
                                               : S3_ERR_FORMAT;
    if (err || !points)
        return s3_fail(err ? err : S3_ERR_FORMAT, why, whylen, "first skeleton: %s",
                       e.kind == GR2_EK_ERROR ? e.why : wy);
    const struct gr2_type *st = gr2_type_get(&w->types, sp, sk->ref_type);
    const struct gr2_member *bm = st && st->ok ? gr2_find_member(st, "Bones") : NULL;
    if (type_oom(st))
        return s3_fail(S3_ERR_NOMEM, why, whylen, "out of memory");
    if (!bm || bm->type != GR2_REF_TO_ARRAY)
        return s3_fail(S3_ERR_FORMAT, why, whylen, "the first skeleton has no Bones array");
    gr2_resolve(&w->types, sp, bm, skel.section, skel.offset + bm->offset, &out->arr);
    if (out->arr.kind != GR2_EK_ARRAY)
        return s3_fail(out->arr.kind == GR2_EK_ERROR ? out->arr.reason : S3_ERR_FORMAT, why, whylen,
                       "first skeleton's bones: %s", out->arr.kind == GR2_EK_ERROR ? out->arr.why : "none");
    out->first = gr2_walk_first(w, out->arr.obj, GR2_KEY_ARRAY);
    const struct gr2_type *bt = gr2_type_get(&w->types, sp, out->arr.type);
    const struct gr2_member *nm = bt && bt->ok ? gr2_find_member(bt, "Name") : NULL;
    if (type_oom(bt))
        return s3_fail(S3_ERR_NOMEM, why, whylen, "out of memory");
    out->names = alloc_array(out->arr.count, sizeof *out->names);
    if (!out->names)
        return s3_fail(S3_ERR_NOMEM, why, whylen, "out of memory");
    for (uint32_t k = 0; nm && nm->type == GR2_STRING && k < out->arr.count; k++) {
        struct gr2_str s;
        gr2_string_slot(sp, out->arr.obj.section, out->arr.obj.offset + k * out->arr.size + nm->offset, &s);
        if (s.kind == GR2_STR_TEXT) {
            if (!(out->names[k] = strndup(s.text, s.len)))
                return s3_fail(S3_ERR_NOMEM, why, whylen, "out of memory"); /* never a name shown as ? */
            out->nnamed++;
        } else if (s.kind == GR2_STR_CRC) {
            out->ncrc++;
        }
    }
    return S3_OK;
}

void gr2_bones_free(struct gr2_bones *b)
{
    for (uint32_t k = 0; b->names && k < b->arr.count; k++)
        free(b->names[k]);
    free(b->names);
    b->names = NULL;
}
