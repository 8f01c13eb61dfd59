/* A set of names, for making file names unique in linear time. A directory's names are
 * made one by one; each must differ from those made before it. A set of the names given
 * so far answers "is it taken" in one hash probe, and for each base name the set keeps
 * the next suffix to try, so n names with one base cost O(n) in all, not O(n^2) (a
 * Granny type may have 4,095 members of one name).
 *
 * Why this beside the tree's own unique names (tree.h: ~N before the extension, at the
 * moment a node is added): the names made here are decided before any node exists, and
 * paths are made of them. The Granny object walk (gr2walk.c) records each object's first
 * location as a path of member names (gr2_safe_names), view_gr2obj.c links every later
 * place to that path and /granny/skeletons to root/NAME, all before (or without) the
 * directories being listed; t2fs /named names a repeated schema name by its /root index.
 * Left to the tree, a second member X would become X~2 only when its node is added, after
 * the walk had given its objects the path .../X, the first X's: links would lead to the
 * wrong object. So these names stay unique here, and the tree's rule is the guard for
 * names that meet from different sources in one directory (a member called model.glb
 * beside the export), to which no path was computed. Either alone would change names:
 * Granny's ~N follows the whole name, the tree's goes before the extension, /named's is
 * the index. */
#include "parse/base/nameset.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash_of(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

/* The slot holding name, or the empty slot where it would go. */
static struct nameset_entry *slot_of(struct nameset *s, const char *name)
{
    size_t k = (size_t)hash_of(name) & (s->cap - 1);
    for (;;) {
        s->probes++;
        struct nameset_entry *e = &s->e[k];
        if (!e->name)
            return e;
        s->compared++;
        if (strcmp(e->name, name) == 0)
            return e;
        k = (k + 1) & (s->cap - 1);
    }
}

/* Room for one more name (at most half full): S3_OK, or NOMEM (s as it was). */
static enum s3_err grow(struct nameset *s)
{
    if (2 * (s->n + 1) <= s->cap)
        return S3_OK;
    size_t cap = s->cap ? 2 * s->cap : 64;
    struct nameset_entry *old = s->e;
    size_t oldcap = s->cap;
    s->e = calloc(cap, sizeof *s->e);
    if (!s->e) {
        s->e = old;
        return S3_ERR_NOMEM;
    }
    s->cap = cap;
    for (size_t i = 0; i < oldcap; i++)
        if (old[i].name) {
            size_t k = (size_t)hash_of(old[i].name) & (cap - 1);
            while (s->e[k].name)
                k = (k + 1) & (cap - 1);
            s->e[k] = old[i];
        }
    free(old);
    return S3_OK;
}

void nameset_free(struct nameset *s)
{
    for (size_t i = 0; i < s->cap; i++)
        free(s->e[i].name);
    free(s->e);
    memset(s, 0, sizeof *s);
}

bool nameset_has(struct nameset *s, const char *name)
{
    return s->cap && slot_of(s, name)->name;
}

/* The entry of name, added when missing; NULL out of memory. */
static struct nameset_entry *entry_for(struct nameset *s, const char *name)
{
    if (grow(s) != S3_OK)
        return NULL;
    struct nameset_entry *e = slot_of(s, name);
    if (e->name)
        return e;
    e->name = strdup(name);
    if (!e->name)
        return NULL;
    e->next = 2;
    s->n++;
    return e;
}

enum s3_err nameset_add(struct nameset *s, const char *name)
{
    return entry_for(s, name) ? S3_OK : S3_ERR_NOMEM;
}

enum s3_err nameset_unique(struct nameset *s, const char *base, char *out, size_t outlen)
{
    if (outlen <= strlen(base) + 11) /* "~" and a 32-bit number: never cut */
        return S3_ERR_LIMIT;
    if (!nameset_has(s, base)) {
        snprintf(out, outlen, "%s", base);
        return entry_for(s, out) ? S3_OK : S3_ERR_NOMEM;
    }
    unsigned next = slot_of(s, base)->next;
    for (;; next++) {
        snprintf(out, outlen, "%s~%u", base, next);
        if (!nameset_has(s, out))
            break;
    }
    /* again: adding may move the entries */
    struct nameset_entry *added = entry_for(s, out);
    if (!added)
        return S3_ERR_NOMEM;
    slot_of(s, base)->next = next + 1;
    return S3_OK;
}
