/* The tree (tree.h): Names: unique in every directory (the builder's hash set and ~N suffixes), and paths
 * between nodes. */
#include "fs/core/tree_impl.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- names ---- */

/* A name's hash (str_hash). */
static uint32_t name_hash(const struct tree *t, const char *s)
{
    return (uint32_t)str_hash(&t->strings, s);
}

/* Generated names must never be empty, "." or "..", nor contain '/'. */
bool name_ok(const char *name)
{
    return name[0] && strcmp(name, ".") != 0 && strcmp(name, "..") != 0 && !strchr(name, '/');
}

/* ---- directories being filled ---- */

void build_free(struct dirbuild *b)
{
    if (!b)
        return;
    for (uint32_t i = 0; b->memo && i < b->capmemo; i++)
        free(b->memo[i].name);
    free(b->memo);
    free(b->slot);
    free(b->child);
    free(b);
}

/* The child of b named name, or 0. */
uint32_t build_find(struct tree *t, const struct dirbuild *b, const char *name)
{
    if (!b || !b->nslot)
        return 0;
    for (uint32_t k = name_hash(t, name) & (b->nslot - 1);; k = (k + 1) & (b->nslot - 1)) {
        uint32_t c = b->slot[k];
        t->probes++;
        if (!c || strcmp(slot_of(t, c)->name, name) == 0)
            return c;
    }
}

void build_hash_put(struct tree *t, struct dirbuild *b, uint32_t ino)
{
    uint32_t k = name_hash(t, slot_of(t, ino)->name) & (b->nslot - 1);
    while (b->slot[k])
        k = (k + 1) & (b->nslot - 1);
    b->slot[k] = ino;
}

/* Rebuilds the hash set from the children (after growth or a rollback). */
enum s3_err build_rehash(struct tree *t, struct dirbuild *b, uint32_t nslot)
{
    uint32_t *s = meter_calloc(&t->strings.meter, nslot, sizeof *s);
    if (!s)
        return S3_ERR_NOMEM;
    free(b->slot);
    b->slot = s;
    b->nslot = nslot;
    for (uint32_t i = 0; i < b->n; i++)
        build_hash_put(t, b, b->child[i]);
    return S3_OK;
}

/* Makes room for one more child (the array and a load under one half). */
enum s3_err build_reserve(struct tree *t, struct dirbuild *b)
{
    if (b->n == b->cap) {
        uint32_t cap = b->cap ? b->cap * 2 : 8;
        uint32_t *c = meter_realloc(&t->strings.meter, b->child, cap * sizeof *c);
        if (!c)
            return S3_ERR_NOMEM;
        b->child = c;
        b->cap = cap;
    }
    if (2 * (b->n + 1) > b->nslot)
        return build_rehash(t, b, b->nslot ? b->nslot * 2 : 16);
    return S3_OK;
}

static struct suffix_memo *memo_find(struct tree *t, struct dirbuild *b, const char *name, bool add)
{
    if (add && 2 * (b->nmemo + 1) > b->capmemo) {
        uint32_t cap = b->capmemo ? b->capmemo * 2 : 8;
        struct suffix_memo *m = meter_calloc(&t->strings.meter, cap, sizeof *m);
        if (!m)
            return NULL;
        for (uint32_t i = 0; i < b->capmemo; i++)
            if (b->memo[i].name) {
                uint32_t k = name_hash(t, b->memo[i].name) & (cap - 1);
                while (m[k].name)
                    k = (k + 1) & (cap - 1);
                m[k] = b->memo[i];
            }
        free(b->memo);
        b->memo = m;
        b->capmemo = cap;
    }
    if (!b->capmemo)
        return NULL;
    uint32_t k = name_hash(t, name) & (b->capmemo - 1);
    while (b->memo[k].name && strcmp(b->memo[k].name, name) != 0)
        k = (k + 1) & (b->capmemo - 1);
    if (b->memo[k].name || !add)
        return b->memo[k].name ? &b->memo[k] : NULL;
    if (!(b->memo[k].name = meter_strdup(&t->strings.meter, name)))
        return NULL;
    b->memo[k].next = 2;
    b->nmemo++;
    return &b->memo[k];
}

/* The name a new child called `name` gets in b: name itself when no child has it, else
 * STEM~K.EXT (EXT from the last '.', not a leading one) with the smallest K >= 2 not in
 * use, so names stay unique whatever views make. malloc'd when renamed (*renamed).
 * The last guard, not the only one: a view whose names become paths before the nodes
 * exist makes them unique itself (parse/nameset.h: Granny member names, which the object
 * walk turns into link targets, and t2fs /named), because a rename here happens when the
 * node is added, too late for a link already computed to the name it had. What this
 * renames is what meets from different sources in one directory (a member called
 * model.glb beside the export, added after the members), where no link was computed. */
const char *unique_name(struct tree *t, struct dirbuild *b, const char *name, char **renamed)
{
    *renamed = NULL;
    if (!build_find(t, b, name))
        return name;
    struct suffix_memo *m = memo_find(t, b, name, true);
    if (!m)
        return NULL;
    const char *dot = strrchr(name, '.');
    size_t stem = dot && dot != name ? (size_t)(dot - name) : strlen(name);
    size_t cap = strlen(name) + 16;
    char *s = meter_malloc(&t->strings.meter, cap);
    if (!s)
        return NULL;
    for (;; m->next++) {
        snprintf(s, cap, "%.*s~%" PRIu32 "%s", (int)stem, name, m->next, name + stem);
        if (!build_find(t, b, s))
            break;
    }
    m->next++;
    *renamed = s;
    return s;
}

/* ---- paths ---- */

/* Number of '/'-separated components of a path ("" has none). */
static size_t path_components(const char *p)
{
    size_t n = 0;
    for (const char *s = p; *s;) {
        size_t len = strcspn(s, "/");
        n += len > 0;
        s += len + (s[len] == '/');
    }
    return n;
}

char *tree_path_relative(const char *from_dir, const char *to)
{
    /* Skip the whole components both paths share; every component of from_dir left
     * over is one "../", then the rest of `to` follows. */
    const char *a = from_dir, *b = to;
    for (;;) {
        while (*a == '/')
            a++;
        while (*b == '/')
            b++;
        size_t la = strcspn(a, "/"), lb = strcspn(b, "/");
        if (la == 0 || la != lb || memcmp(a, b, la) != 0)
            break;
        a += la;
        b += lb;
    }
    size_t ups = path_components(a), rest = strlen(b);
    while (rest > 0 && b[rest - 1] == '/')
        rest--;
    char *s = malloc(3 * ups + rest + 2), *p = s;
    if (!s)
        return NULL;
    for (size_t i = 0; i < ups; i++)
        p += sprintf(p, "../");
    memcpy(p, b, rest);
    p[rest] = 0;
    if (rest == 0 && p > s)
        p[-1] = 0; /* "../../" -> "../.." */
    else if (rest == 0)
        strcpy(s, ".");
    return s;
}

char *path_of(struct tree *t, uint32_t ino)
{
    size_t len = 0;
    for (uint32_t i = ino; i != TREE_ROOT && slot_of(t, i)->parent != i; i = slot_of(t, i)->parent)
        len += strlen(slot_of(t, i)->name) + 1;
    char *s = malloc(len + 1);
    if (!s)
        return NULL;
    s[len] = 0;
    for (uint32_t i = ino; i != TREE_ROOT && slot_of(t, i)->parent != i; i = slot_of(t, i)->parent) {
        const char *name = slot_of(t, i)->name;
        size_t n = strlen(name);
        len -= n;
        memcpy(s + len, name, n);
        if (len > 0)
            s[--len] = '/';
    }
    return s;
}

char *tree_relpath(struct tree *t, uint32_t from_dir, uint32_t to)
{
    if (!node_at(t, from_dir) || !node_at(t, to))
        return NULL;
    char *from = path_of(t, from_dir), *dest = path_of(t, to), *rel = NULL;
    if (from && dest)
        rel = tree_path_relative(from, dest);
    free(from);
    free(dest);
    return rel;
}

