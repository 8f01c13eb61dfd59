/* /granny/root: the Granny object graph decoded from the file's own type definitions.
 * A struct is a directory, a member a file or directory named after the member; objects
 * reached a second time are relative symlinks to their first location in breadth-first
 * order from the root. That order is computed once (a walk over objects, not tree
 * nodes) when /granny/root is first used; directories are still made only when listed. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs/view_gr2.h"

#define GOBJ_MAX_INSTANCES 5000000 /* struct instances the breadth-first walk visits, at most */
#define GOBJ_MIN_INSTANCES 65536   /* ... and at least; in between, a quarter of the section bytes */
#define GOBJ_MAX_PATH 1024         /* deeper first locations are not recorded */

enum { KEY_SINGLE = 0, KEY_ARRAY = 1 };

struct map_entry {
    uint32_t sec, off;
    uint8_t kind, used;
    char *path; /* first location, relative to /granny/root ("" = the root) */
};

struct gobj {
    struct gr2_view *v;
    struct gr2_types types;
    bool walked;
    struct map_entry *map; /* open addressing */
    size_t nmap, capmap;
    char note[200];        /* walk limits reached, for /info */
};

/* ---- first locations ---- */

static size_t key_hash(uint32_t sec, uint32_t off, uint8_t kind)
{
    uint64_t h = ((uint64_t)sec << 33) ^ ((uint64_t)off << 1) ^ kind;
    h *= 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 17);
}

static struct map_entry *map_slot(struct map_entry *map, size_t cap, uint32_t sec, uint32_t off, uint8_t kind)
{
    size_t k = key_hash(sec, off, kind) & (cap - 1);
    while (map[k].used && !(map[k].sec == sec && map[k].off == off && map[k].kind == kind))
        k = (k + 1) & (cap - 1);
    return &map[k];
}

static const char *map_get(struct gobj *o, struct gr2_ref r, uint8_t kind)
{
    if (!o->capmap)
        return NULL;
    struct map_entry *e = map_slot(o->map, o->capmap, r.section, r.offset, kind);
    return e->used ? e->path : NULL;
}

/* Records a first location; false when the key was already there (or no memory). */
static bool map_put(struct gobj *o, struct gr2_ref r, uint8_t kind, const char *path)
{
    if (o->nmap * 2 >= o->capmap) {
        size_t cap = o->capmap ? o->capmap * 2 : 1024;
        struct map_entry *m = calloc(cap, sizeof *m);
        if (!m)
            return false;
        for (size_t i = 0; i < o->capmap; i++)
            if (o->map[i].used)
                *map_slot(m, cap, o->map[i].sec, o->map[i].off, o->map[i].kind) = o->map[i];
        free(o->map);
        o->map = m;
        o->capmap = cap;
    }
    struct map_entry *e = map_slot(o->map, o->capmap, r.section, r.offset, kind);
    if (e->used)
        return false;
    e->path = strdup(path);
    if (!e->path)
        return false;
    *e = (struct map_entry){r.section, r.offset, kind, 1, e->path};
    o->nmap++;
    return true;
}

/* ---- what one member element holds ---- */

enum elem_kind { EK_VALUE, EK_INLINE, EK_OBJECT, EK_ARRAY, EK_PTRARRAY, EK_NULL, EK_UNTYPED, EK_ERROR };

struct elem {
    enum elem_kind kind;
    struct gr2_ref type, obj;
    uint32_t count, size;
    const char *why;
    char buf[160];
};

static void elem_error(struct elem *e, const char *fmt, uint64_t a, uint64_t b)
{
    snprintf(e->buf, sizeof e->buf, fmt, a, b);
    e->why = e->buf;
    e->kind = EK_ERROR;
}

/* An array of count elements of `size` bytes at obj must exist in its section. */
static void check_array(const struct gr2_space *sp, struct elem *e)
{
    const char *why;
    if (e->size == 0) {
        elem_error(e, "array of %" PRIu64 " zero-sized elements%.0" PRIu64 "s", e->count, 0);
        return;
    }
    if (!gr2_bytes(sp, e->obj.section, e->obj.offset, (uint64_t)e->count * e->size, &why))
        elem_error(e, "array of %" PRIu64 " elements of %" PRIu64 " bytes: does not fit its section", e->count,
                   e->size);
}

static void resolve_typed_array(struct gobj *o, const struct gr2_space *sp, struct elem *e, bool has_type,
                                uint32_t count, int ptr_rc)
{
    e->count = count;
    if (count == 0 || ptr_rc == 0) {
        if (count && ptr_rc == 0)
            elem_error(e, "count %" PRIu64 " with a NULL pointer%.0" PRIu64 "s", count, 0);
        else
            e->kind = EK_NULL;
        return;
    }
    if (!has_type) {
        e->kind = EK_UNTYPED;
        return;
    }
    const struct gr2_type *t = gr2_type_get(&o->types, sp, e->type);
    if (!t || !t->ok) {
        e->kind = EK_ERROR;
        e->why = t ? t->err : "out of memory";
        return;
    }
    e->kind = EK_ARRAY;
    e->size = t->size;
    check_array(sp, e);
}

static void resolve(struct gobj *o, const struct gr2_space *sp, const struct gr2_member *m, uint32_t sec,
                    uint32_t off, struct elem *e)
{
    memset(e, 0, sizeof *e);
    uint32_t p = (uint32_t)gr2_pointer_size(sp);
    const uint8_t *b = gr2_bytes(sp, sec, off, m->type == GR2_INLINE ? 0 : gr2_elem_size(sp, m->type), &e->why);
    if (!b) {
        e->kind = EK_ERROR;
        return;
    }
    e->type = m->ref_type;
    int rc, trc;
    switch (m->type) {
    case GR2_INLINE:
        e->kind = EK_INLINE;
        e->obj = (struct gr2_ref){sec, off};
        return;
    case GR2_REFERENCE:
    case GR2_EMPTY_REF:
        rc = gr2_pointer(sp, sec, off, &e->obj, &e->why);
        e->kind = rc < 0 ? EK_ERROR : rc == 0 ? EK_NULL
                : (m->type == GR2_EMPTY_REF || !m->has_ref_type) ? EK_UNTYPED : EK_OBJECT;
        return;
    case GR2_VARIANT_REF:
        trc = gr2_pointer(sp, sec, off, &e->type, &e->why);
        rc = trc < 0 ? -1 : gr2_pointer(sp, sec, off + p, &e->obj, &e->why);
        e->kind = rc < 0 ? EK_ERROR : rc == 0 ? EK_NULL : trc == 0 ? EK_UNTYPED : EK_OBJECT;
        return;
    case GR2_REF_TO_ARRAY:
        rc = gr2_pointer(sp, sec, off + 4, &e->obj, &e->why);
        if (rc < 0) {
            e->kind = EK_ERROR;
            return;
        }
        resolve_typed_array(o, sp, e, m->has_ref_type, gr2_u32_at(sp, b), rc);
        return;
    case GR2_REF_TO_VARIANT_ARRAY:
        trc = gr2_pointer(sp, sec, off, &e->type, &e->why);
        rc = trc < 0 ? -1 : gr2_pointer(sp, sec, off + p + 4, &e->obj, &e->why);
        if (rc < 0) {
            e->kind = EK_ERROR;
            return;
        }
        resolve_typed_array(o, sp, e, trc == 1, gr2_u32_at(sp, b + p), rc);
        return;
    case GR2_ARRAY_OF_REFS:
        e->count = gr2_u32_at(sp, b);
        rc = gr2_pointer(sp, sec, off + 4, &e->obj, &e->why);
        if (rc <= 0 || e->count == 0) {
            if (rc < 0)
                e->kind = EK_ERROR;
            else if (e->count && rc == 0)
                elem_error(e, "count %" PRIu64 " with a NULL pointer%.0" PRIu64 "s", e->count, 0);
            else
                e->kind = EK_NULL;
            return;
        }
        e->kind = EK_PTRARRAY;
        e->size = p;
        check_array(sp, e);
        return;
    default:
        if (gr2_elem_size(sp, m->type) == 0)
            elem_error(e, "unknown member type %" PRIu64 "%.0" PRIu64 "s", m->type, 0);
        else
            e->kind = EK_VALUE;
    }
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
};

static char *join(const char *a, const char *b)
{
    char *s = NULL;
    if (asprintf(&s, "%s%s%s", a, a[0] ? "/" : "", b) < 0)
        return NULL;
    return s;
}

static char *join_index(const char *a, uint64_t i)
{
    char n[24];
    snprintf(n, sizeof n, "%" PRIu64, i);
    return join(a, n);
}

static void push(struct gobj *o, struct queue *q, struct gr2_ref type, struct gr2_ref obj, char *path)
{
    if (!path)
        return;
    if (q->stop) {
        free(path);
        return;
    }
    if (strlen(path) > GOBJ_MAX_PATH) {
        snprintf(o->note, sizeof o->note, "object walk stopped at paths longer than %d bytes: links may be missing",
                 GOBJ_MAX_PATH);
        free(path);
        return;
    }
    if (q->pushed >= q->budget) {
        snprintf(o->note, sizeof o->note, "object walk stopped after %llu struct instances: links may be missing",
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
                return;
            }
            q->q = n;
            q->cap = cap;
        }
    }
    q->q[q->tail++] = (struct instance){type, obj, path};
    q->pushed++;
}

static void walk_element(struct gobj *o, const struct gr2_space *sp, struct queue *q, const struct elem *e,
                         const char *ep)
{
    switch (e->kind) {
    case EK_INLINE:
        push(o, q, e->type, e->obj, strdup(ep));
        break;
    case EK_OBJECT:
        if (map_put(o, e->obj, KEY_SINGLE, ep))
            push(o, q, e->type, e->obj, strdup(ep));
        break;
    case EK_ARRAY:
        if (map_put(o, e->obj, KEY_ARRAY, ep))
            for (uint32_t k = 0; k < e->count; k++)
                push(o, q, e->type, (struct gr2_ref){e->obj.section, e->obj.offset + k * e->size}, join_index(ep, k));
        break;
    case EK_PTRARRAY:
        for (uint32_t k = 0; k < e->count; k++) {
            struct gr2_ref target;
            const char *why;
            uint32_t slot = e->obj.offset + k * e->size;
            if (gr2_pointer(sp, e->obj.section, slot, &target, &why) != 1)
                continue;
            char *kp = join_index(ep, k);
            if (kp && map_put(o, target, KEY_SINGLE, kp))
                push(o, q, e->type, target, kp);
            else
                free(kp);
        }
        break;
    default:
        break;
    }
}

static void walk_instance(struct gobj *o, const struct gr2_space *sp, struct queue *q, const struct instance *in)
{
    const struct gr2_type *t = gr2_type_get(&o->types, sp, in->type);
    const char *why;
    /* an instance whose bytes do not exist has nothing to follow */
    if (!t || !t->ok || !gr2_bytes(sp, in->obj.section, in->obj.offset, t->size, &why))
        return;
    for (uint32_t i = 0; i < t->nmembers; i++) {
        const struct gr2_member *m = &t->m[i];
        if (gr2_is_scalar(m->type) || m->type == GR2_STRING || m->type == GR2_TRANSFORM)
            continue;
        uint32_t width = m->array_width > 0 ? (uint32_t)m->array_width : 1, esize = m->size / width;
        q->work += width;
        if (q->work > 16 * q->budget) {
            snprintf(o->note, sizeof o->note, "object walk stopped after %llu member visits: links may be missing",
                     (unsigned long long)q->work);
            q->stop = true; /* the rest of the queue is dropped */
            return;
        }
        char *mp = join(in->path, t->safe_name[i]);
        for (uint32_t k = 0; mp && k < width; k++) {
            char *ep = width > 1 ? join_index(mp, k) : strdup(mp);
            struct elem e;
            resolve(o, sp, m, in->obj.section, in->obj.offset + m->offset + k * esize, &e);
            if (ep)
                walk_element(o, sp, q, &e, ep);
            free(ep);
        }
        free(mp);
    }
}

static void walk(struct gobj *o, const struct gr2_space *sp)
{
    if (o->walked)
        return;
    o->walked = true;
    const struct gr2_file *g = &o->v->g;
    struct queue q = {0};
    /* Real files hold fewer struct instances than a quarter of their bytes; crafted ones
     * that alias arrays could otherwise ask for billions. */
    uint64_t bytes = 0;
    for (uint32_t i = 0; i < g->nsections; i++)
        bytes += sp->size[i];
    q.budget = bytes / 4 < GOBJ_MIN_INSTANCES ? GOBJ_MIN_INSTANCES
               : bytes / 4 > GOBJ_MAX_INSTANCES ? GOBJ_MAX_INSTANCES : bytes / 4;
    map_put(o, g->root_object, KEY_SINGLE, "");
    push(o, &q, g->root_type, g->root_object, strdup(""));
    while (q.head < q.tail) {
        struct instance in = q.q[q.head++];
        if (!q.stop)
            walk_instance(o, sp, &q, &in);
        free(in.path);
    }
    free(q.q);
    if (o->note[0])
        diag_add(&o->v->fs->diag, "%s", o->note);
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

static int populate_gdir(struct tree *t, uint32_t dir, void *ctx, uint64_t arg);

static void span_of(struct gobj *o, uint32_t ino, uint32_t sec, uint64_t off, uint64_t len)
{
    uint64_t abs, alen;
    gr2_view_span(o->v, sec, off, len, &abs, &alen);
    tree_set_span(o->v->fs->tree, ino, abs, alen);
}

static uint32_t add_gdir(struct gobj *o, uint32_t parent, const char *name, enum gdir_kind kind,
                         const struct elem *e, const struct gr2_member *m, const char *path, uint64_t span_len)
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

/* A relative link from directory `from` to `to` (both relative to /granny/root). */
static char *relative_link(const char *from, const char *to)
{
    size_t common = 0, i = 0;
    for (;; i++) { /* longest common prefix ending at a component boundary */
        char a = from[i], b = to[i];
        if ((a == '/' || a == 0) && (b == '/' || b == 0))
            common = i;
        if (a != b || a == 0)
            break;
    }
    unsigned ups = from[common] ? 1 : 0;
    for (size_t k = common + (from[common] == '/'); from[k]; k++)
        ups += from[k] == '/';
    if (from[0] && common == 0 && from[0] != to[0])
        ups = 1;
    const char *rest = to + common + (to[common] == '/');
    if (common == 0 && to[0] && from[0] && from[0] == to[0])
        rest = to;
    size_t len = 3 * (size_t)ups + strlen(rest) + 2;
    char *s = malloc(len), *p = s;
    if (!s)
        return NULL;
    for (unsigned k = 0; k < ups; k++)
        p += sprintf(p, "../");
    if (*rest)
        strcpy(p, rest);
    else if (p > s)
        p[-1] = 0;
    else
        strcpy(s, ".");
    return s;
}

static double half_to_double(uint16_t h)
{
    int sign = h >> 15, exp = (h >> 10) & 31, mant = h & 1023;
    double v = exp == 0 ? ldexp(mant, -24) : exp == 31 ? (mant ? NAN : INFINITY) : ldexp(mant + 1024, exp - 25);
    return sign ? -v : v;
}

/* Scalars and strings: one value file, an element per line. */
static void add_values(struct gobj *o, const struct gr2_space *sp, uint32_t dir, const char *name,
                       const struct gr2_member *m, uint32_t sec, uint32_t off)
{
    struct tree *t = o->v->fs->tree;
    uint32_t width = m->array_width > 0 ? (uint32_t)m->array_width : 1, esize = gr2_elem_size(sp, m->type);
    const char *why;
    const uint8_t *b = gr2_bytes(sp, sec, off, m->size, &why);
    if (!b) {
        add_error(t, dir, name, why);
        return;
    }
    bool be = sp->g->be;
    struct sbuf out = {0};
    bool any = false;
    for (uint32_t k = 0; k < width; k++) {
        const uint8_t *p = b + (size_t)k * esize;
        switch (m->type) {
        case GR2_REAL32: {
            uint32_t u = ld_u32(p, be);
            float f;
            memcpy(&f, &u, 4);
            sb_printf(&out, "%.9g\n", (double)f);
            break;
        }
        case GR2_REAL16:
            sb_printf(&out, "%.9g\n", half_to_double(ld_u16(p, be)));
            break;
        case GR2_INT8:
        case GR2_BINORMAL_INT8:
            sb_printf(&out, "%d\n", (int8_t)p[0]);
            break;
        case GR2_UINT8:
        case GR2_NORMAL_UINT8:
            sb_printf(&out, "%u\n", p[0]);
            break;
        case GR2_INT16:
        case GR2_BINORMAL_INT16:
            sb_printf(&out, "%d\n", (int16_t)ld_u16(p, be));
            break;
        case GR2_UINT16:
        case GR2_NORMAL_UINT16:
            sb_printf(&out, "%u\n", ld_u16(p, be));
            break;
        case GR2_INT32:
            sb_printf(&out, "%" PRId32 "\n", (int32_t)ld_u32(p, be));
            break;
        case GR2_UINT32:
            sb_printf(&out, "%" PRIu32 "\n", ld_u32(p, be));
            break;
        case GR2_STRING: {
            struct gr2_ref at;
            const char *str;
            size_t len;
            int rc = gr2_pointer(sp, sec, off + k * esize, &at, &why);
            if (rc < 0 || (rc == 1 && gr2_string_at(sp, at, &str, &len, &why))) {
                sb_free(&out);
                add_error(t, dir, name, why);
                return;
            }
            if (rc == 1) {
                sb_put(&out, str, len);
                sb_put(&out, "\n", 1);
                any = true;
            } else if (width > 1) {
                sb_put(&out, "\n", 1);
            }
            continue;
        }
        default:
            break;
        }
        any = true;
    }
    if (!any) { /* a NULL string is absent */
        sb_free(&out);
        return;
    }
    size_t len;
    char *text = sb_take(&out, &len);
    uint32_t ino = tree_add_text(t, dir, name, NULL, text, len);
    span_of(o, ino, sec, off, m->size);
    member_type(t, ino, m, name);
}

/* One element of a member (or a whole member of width 0) as a node named `name`. */
static uint32_t add_element(struct gobj *o, const struct gr2_space *sp, uint32_t dir, const char *dir_path,
                            const char *name, const struct gr2_member *m, uint32_t sec, uint32_t off,
                            const char *ep)
{
    struct tree *t = o->v->fs->tree;
    if (strlen(ep) > GOBJ_MAX_PATH) /* bounds the tree's depth even where the walk stopped */
        return add_error(t, dir, name, "nested too deeply to show");
    struct elem e;
    resolve(o, sp, m, sec, off, &e);
    uint32_t esize = m->type == GR2_INLINE ? m->size / (m->array_width > 0 ? (uint32_t)m->array_width : 1)
                                           : gr2_elem_size(sp, m->type);
    if (m->type == GR2_TRANSFORM) {
        e.obj = (struct gr2_ref){sec, off};
        return add_gdir(o, dir, name, GD_TRANSFORM, &e, m, ep, GR2_TRANSFORM_SIZE);
    }
    const char *first = NULL;
    switch (e.kind) {
    case EK_ERROR:
        return add_error(t, dir, name, e.why);
    case EK_NULL:
        return 0;
    case EK_UNTYPED: {
        uint32_t ino = tree_add_textf(t, dir, name, "gr2.untyped", "%" PRIu32 " %" PRIu32 "\n", e.obj.section,
                                      e.obj.offset);
        span_of(o, ino, sec, off, esize);
        return ino;
    }
    case EK_OBJECT:
    case EK_ARRAY:
        first = map_get(o, e.obj, e.kind == EK_ARRAY ? KEY_ARRAY : KEY_SINGLE);
        if (first && strcmp(first, ep) != 0) {
            char *target = relative_link(dir_path, first);
            uint32_t ino = target ? tree_add_link(t, dir, name, target) : 0;
            free(target);
            return ino;
        }
        break;
    default:
        break;
    }
    if (e.kind == EK_INLINE || e.kind == EK_OBJECT) {
        const struct gr2_type *ty = gr2_type_get(&o->types, sp, e.type);
        if (!ty || !ty->ok)
            return add_error(t, dir, name, ty ? ty->err : "out of memory");
        const char *why;
        if (!gr2_bytes(sp, e.obj.section, e.obj.offset, ty->size, &why))
            return add_error(t, dir, name, why);
        return add_gdir(o, dir, name, GD_STRUCT, &e, NULL, ep, ty->size);
    }
    if (e.kind == EK_ARRAY)
        return add_gdir(o, dir, name, GD_ARRAY, &e, NULL, ep, (uint64_t)e.count * e.size);
    if (e.kind == EK_PTRARRAY)
        return add_gdir(o, dir, name, GD_PTRARRAY, &e, NULL, ep, (uint64_t)e.count * e.size);
    return 0;
}

static void add_member(struct gobj *o, const struct gr2_space *sp, uint32_t dir, const char *dir_path,
                       const struct gr2_member *m, const char *safe, uint32_t sec, uint32_t off)
{
    struct tree *t = o->v->fs->tree;
    const char *why;
    if (!gr2_bytes(sp, sec, off, m->size, &why)) { /* before any per-element work */
        add_error(t, dir, safe, why);
        return;
    }
    if (gr2_is_scalar(m->type) || m->type == GR2_STRING) {
        add_values(o, sp, dir, safe, m, sec, off);
        return;
    }
    char *mp = join(dir_path, safe);
    if (!mp)
        return;
    uint32_t ino;
    if (m->array_width > 0) { /* a fixed array of references/structs: a directory 0..N-1 */
        struct elem e = {.obj = {sec, off}};
        ino = add_gdir(o, dir, safe, GD_WIDTH, &e, m, mp, m->size);
    } else {
        ino = add_element(o, sp, dir, dir_path, safe, m, sec, off, mp);
    }
    if (ino && tree_node(t, ino)->type != NODE_LINK && !strstr(tree_node(t, ino)->name, ".error"))
        member_type(t, ino, m, safe);
    free(mp);
}

static void populate_struct(struct gdir *d, const struct gr2_space *sp, uint32_t dir)
{
    const struct gr2_type *ty = gr2_type_get(&d->o->types, sp, d->type);
    if (!ty || !ty->ok) {
        add_error(d->o->v->fs->tree, dir, "type", ty ? ty->err : "out of memory");
        return;
    }
    for (uint32_t i = 0; i < ty->nmembers; i++)
        add_member(d->o, sp, dir, d->path, &ty->m[i], ty->safe_name[i], d->obj.section,
                   d->obj.offset + ty->m[i].offset);
    gr2_exports_add(d->o->v, ty, d->type, d->obj, dir); /* skeleton.glb, model.glb, mesh.obj */
}

/* Elements 0..n-1 of one member kind, `stride` bytes apart: arrays of structs, arrays of
 * pointers and fixed-width members all list this way. */
static void populate_elements(struct gdir *d, const struct gr2_space *sp, uint32_t dir, const struct gr2_member *m,
                              uint32_t n, uint32_t stride)
{
    for (uint32_t k = 0; k < n; k++) {
        char name[16], *ep = join_index(d->path, k);
        snprintf(name, sizeof name, "%" PRIu32, k);
        if (ep)
            add_element(d->o, sp, dir, d->path, name, m, d->obj.section, d->obj.offset + k * stride, ep);
        free(ep);
    }
}

static void populate_transform(struct gdir *d, const struct gr2_space *sp, uint32_t dir)
{
    struct tree *t = d->o->v->fs->tree;
    const char *why;
    const uint8_t *b = gr2_bytes(sp, d->obj.section, d->obj.offset, GR2_TRANSFORM_SIZE, &why);
    if (!b) {
        add_error(t, dir, "transform", why);
        return;
    }
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

static int populate_gdir(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)t, (void)arg;
    struct gdir *d = ctx;
    struct gr2_space sp;
    if (gr2_view_pin(d->o->v, &sp))
        return -ENOMEM;
    walk(d->o, &sp);
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
    return 0;
}

/* ---- /granny/types ---- */

static int populate_types(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    struct gobj *o = ctx;
    struct gr2_space sp;
    if (gr2_view_pin(o->v, &sp))
        return -ENOMEM;
    walk(o, &sp);
    for (size_t i = 0; i < o->types.n; i++) {
        const struct gr2_type *ty = o->types.t[i];
        char name[48];
        snprintf(name, sizeof name, "%" PRIu32 "_0x%" PRIx32, ty->at.section, ty->at.offset);
        if (!ty->ok) {
            add_error(t, dir, name, ty->err);
            continue;
        }
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
    return 0;
}

/* ---- entry points ---- */

void gobj_add(struct gr2_view *v, uint32_t granny_dir)
{
    struct tree *t = v->fs->tree;
    if (!v->obj) {
        v->obj = calloc(1, sizeof *v->obj);
        if (!v->obj)
            return;
        v->obj->v = v;
    }
    struct gobj *o = v->obj;
    struct gr2_space sp;
    if (gr2_view_pin(v, &sp))
        return;
    const struct gr2_type *root = gr2_type_get(&o->types, &sp, v->g.root_type);
    const char *why = NULL;
    if (!root || !root->ok)
        why = root ? root->err : "out of memory";
    else
        (void)gr2_bytes(&sp, v->g.root_object.section, v->g.root_object.offset, root->size, &why);
    if (why) {
        char msg[256];
        snprintf(msg, sizeof msg, "root object %" PRIu32 " %" PRIu32 ": %s", v->g.root_object.section,
                 v->g.root_object.offset, why);
        add_error(t, granny_dir, "root", msg);
    } else {
        struct elem e = {.type = v->g.root_type, .obj = v->g.root_object};
        uint32_t ino = add_gdir(o, granny_dir, "root", GD_STRUCT, &e, NULL, "", root->size);
        set_typef(t, ino, "gr2.struct");
        const struct gr2_member *sk = gr2_find_member(root, "Skeletons");
        if (sk)
            tree_add_link(t, granny_dir, "skeletons", "root/Skeletons");
        tree_add_dir(t, granny_dir, "types", "gr2.types", populate_types, o, 0);
    }
    gr2_view_unpin(v, &sp);
}

void gobj_free(struct gobj *o)
{
    if (!o)
        return;
    gr2_types_free(&o->types);
    for (size_t i = 0; i < o->capmap; i++)
        if (o->map[i].used)
            free(o->map[i].path);
    free(o->map);
    free(o);
}

int gobj_first_skeleton(struct gr2_view *v, char **bones_path, uint32_t *count, char ***names, char *why,
                        size_t whylen)
{
    *bones_path = NULL;
    *names = NULL;
    *count = 0;
    if (!v->obj) {
        v->obj = calloc(1, sizeof *v->obj);
        if (!v->obj)
            return -1;
        v->obj->v = v;
    }
    struct gobj *o = v->obj;
    struct gr2_space sp;
    if (gr2_view_pin(v, &sp))
        return -1;
    int rc = -1;
    walk(o, &sp);
    const struct gr2_type *root = gr2_type_get(&o->types, &sp, v->g.root_type);
    const struct gr2_member *sk = root && root->ok ? gr2_find_member(root, "Skeletons") : NULL;
    struct elem e, be;
    if (!sk || sk->type != GR2_ARRAY_OF_REFS) {
        snprintf(why, whylen, "the root object has no Skeletons array");
        goto out;
    }
    resolve(o, &sp, sk, v->g.root_object.section, v->g.root_object.offset + sk->offset, &e);
    struct gr2_ref skel;
    const char *w = "no skeleton";
    if (e.kind != EK_PTRARRAY || gr2_pointer(&sp, e.obj.section, e.obj.offset, &skel, &w) != 1) {
        snprintf(why, whylen, "first skeleton: %s", e.kind == EK_ERROR ? e.why : w);
        goto out;
    }
    const struct gr2_type *st = gr2_type_get(&o->types, &sp, sk->ref_type);
    const struct gr2_member *bm = st && st->ok ? gr2_find_member(st, "Bones") : NULL;
    if (!bm || bm->type != GR2_REF_TO_ARRAY) {
        snprintf(why, whylen, "the first skeleton has no Bones array");
        goto out;
    }
    resolve(o, &sp, bm, skel.section, skel.offset + bm->offset, &be);
    if (be.kind != EK_ARRAY) {
        snprintf(why, whylen, "first skeleton's bones: %s", be.kind == EK_ERROR ? be.why : "none");
        goto out;
    }
    const char *first = map_get(o, be.obj, KEY_ARRAY);
    if (asprintf(bones_path, "granny/root/%s", first ? first : "Skeletons/0/Bones") < 0) {
        *bones_path = NULL;
        goto out;
    }
    const struct gr2_type *bt = gr2_type_get(&o->types, &sp, be.type);
    const struct gr2_member *nm = bt && bt->ok ? gr2_find_member(bt, "Name") : NULL;
    *names = calloc(be.count ? be.count : 1, sizeof **names);
    for (uint32_t k = 0; *names && k < be.count; k++) {
        struct gr2_ref at;
        const char *str, *ww;
        size_t len;
        if (nm && nm->type == GR2_STRING &&
            gr2_pointer(&sp, be.obj.section, be.obj.offset + k * be.size + nm->offset, &at, &ww) == 1 &&
            gr2_string_at(&sp, at, &str, &len, &ww) == 0)
            (*names)[k] = strndup(str, len);
    }
    *count = be.count;
    rc = 0;
out:
    gr2_view_unpin(v, &sp);
    return rc;
}
