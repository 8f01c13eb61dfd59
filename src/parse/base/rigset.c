#include "parse/base/rigset.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>


uint32_t fnv1_lower32(const char *name, size_t len)
{
    uint32_t h = 0x811C9DC5u;
    for (size_t i = 0; i < len; i++) {
        h *= 0x01000193u;
        h ^= (uint8_t)tolower((unsigned char)name[i]);
    }
    return h;
}

static void entry_free(struct rig_entry *r)
{
    free(r->label);
    mdl_skeleton_free(&r->skel);
    free(r->by_hash);
    memset(r, 0, sizeof *r);
}

/* S3_OK or NOMEM (s as it was). */
static enum s3_err grow(struct rig_set *s, size_t more)
{
    if (s->n + more <= s->cap)
        return S3_OK;
    size_t cap = s->cap ? s->cap : 4;
    while (cap < s->n + more)
        cap *= 2;
    struct rig_entry *r = realloc(s->r, cap * sizeof *r);
    if (!r)
        return S3_ERR_NOMEM;
    s->r = r;
    s->cap = cap;
    return S3_OK;
}

static int by_hash_then_bone(const void *a, const void *b)
{
    const struct rig_hash *x = a, *y = b;
    if (x->hash != y->hash)
        return x->hash < y->hash ? -1 : 1;
    return x->bone < y->bone ? -1 : x->bone > y->bone;
}

enum s3_err rig_set_add(struct rig_set *s, const char *label, struct mdl_skeleton *skel, char *err,
                        size_t errlen)
{
    struct rig_entry e = {.skel = *skel};
    memset(skel, 0, sizeof *skel);
    uint32_t n = e.skel.nbones;
    enum s3_err r = S3_OK;
    e.label = strdup(label);
    e.by_hash = alloc_array(n, sizeof *e.by_hash);
    if (!e.label || !e.by_hash || grow(s, 1) != S3_OK) {
        r = s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
        goto fail;
    }
    if (n == 0) {
        r = s3_fail(S3_ERR_FORMAT, err, errlen, "the skeleton has no bones");
        goto fail;
    }
    if (mdl_skeleton_check(&e.skel, err, errlen) || mdl_compute_ibm(&e.skel, err, errlen)) {
        r = S3_ERR_FORMAT; /* a parent cycle or a singular transform: err says which */
        goto fail;
    }
    for (uint32_t i = 0; i < n; i++) {
        const struct mdl_bone *b = &e.skel.bone[i];
        if (b->name && b->name_len) /* an unnamed bone matches nothing */
            e.by_hash[e.nhashes++] = (struct rig_hash){fnv1_lower32(b->name, b->name_len), i};
    }
    qsort(e.by_hash, e.nhashes, sizeof *e.by_hash, by_hash_then_bone);
    s->r[s->n++] = e;
    return S3_OK;
fail:
    entry_free(&e);
    return r;
}

enum s3_err rig_set_take(struct rig_set *to, struct rig_set *from)
{
    if (grow(to, from->n))
        return S3_ERR_NOMEM;
    memcpy(to->r + to->n, from->r, from->n * sizeof *from->r);
    to->n += from->n;
    free(from->r);
    memset(from, 0, sizeof *from);
    return S3_OK;
}

void rig_set_free(struct rig_set *s)
{
    for (size_t i = 0; i < s->n; i++)
        entry_free(&s->r[i]);
    free(s->r);
    memset(s, 0, sizeof *s);
}

int32_t rig_bone_of(const struct rig_entry *r, uint32_t hash)
{
    size_t lo = 0, hi = r->nhashes; /* the first entry with hash >= the one asked */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->by_hash[mid].hash < hash)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < r->nhashes && r->by_hash[lo].hash == hash ? (int32_t)r->by_hash[lo].bone : -1;
}

size_t rig_covers(const struct rig_entry *r, const uint32_t *hashes, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += rig_bone_of(r, hashes[i]) >= 0;
    return k;
}

static int by_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* How many of the distinct hashes (sorted) a rig's bones have: its own distinct hashes
 * looked up in them, so the work follows the rig's size, not rigs × hashes. */
static size_t distinct_covered(const struct rig_entry *r, const uint32_t *u, size_t nu)
{
    size_t k = 0;
    for (uint32_t i = 0; i < r->nhashes; i++)
        if ((i == 0 || r->by_hash[i].hash != r->by_hash[i - 1].hash) &&
            bsearch(&r->by_hash[i].hash, u, nu, sizeof *u, by_u32))
            k++;
    return k;
}

enum s3_err rig_set_pick(const struct rig_set *s, const uint32_t *hashes, size_t n, bool best, ptrdiff_t *pick_out)
{
    uint32_t *u = alloc_array(n, sizeof *u);
    if (!u)
        return S3_ERR_NOMEM;
    if (n) /* a GEOM without bone hashes passes NULL: memcpy's source must not be, even for 0 bytes */
        memcpy(u, hashes, n * sizeof *u);
    qsort(u, n, sizeof *u, by_u32);
    size_t nu = 0;
    for (size_t i = 0; i < n; i++)
        if (nu == 0 || u[i] != u[nu - 1])
            u[nu++] = u[i];
    ptrdiff_t pick = -1;
    size_t most = 0;
    for (size_t i = 0; i < s->n; i++) {
        size_t k = distinct_covered(&s->r[i], u, nu);
        if (k == nu) {
            pick = (ptrdiff_t)i;
            break;
        }
        if (best && (pick < 0 || k > most)) {
            pick = (ptrdiff_t)i;
            most = k;
        }
    }
    free(u);
    *pick_out = pick;
    return S3_OK;
}
