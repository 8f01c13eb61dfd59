/* The Mods folder's loading rules (modfolder.h): written from the community's
 * descriptions (the Resource.cfg the game ships, the Mod The Sims wiki's "Load Order"
 * page, SimSweep's conflict notes, the mod guides' folder limits). */
#include "parse/sims/modfolder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <strings.h>

/* A folder scan keeps one record per resource (a million in the bench): its size is the
 * bulk of the scan's memory, and the record field fills what was padding. */
_Static_assert(sizeof(struct mf_rec) == 32, "struct mf_rec grew past 32 bytes");

/* ---- UTF-8 ---- */

/* Decodes one code point at s[*i], never past s[n]; bytes that do not decode (names are
 * checked with mf_utf8_valid first, but a comparison must not fail on others) are taken
 * one by one as themselves. */
static uint32_t utf8_next(const unsigned char *s, size_t n, size_t *i)
{
    uint32_t c = s[*i];
    int more = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC0 ? 1 : 0;
    if (more == 0 || n - *i <= (size_t)more) {
        (*i)++;
        return c;
    }
    uint32_t cp = c & (0x3Fu >> more);
    for (int k = 1; k <= more; k++) {
        if ((s[*i + k] & 0xC0) != 0x80) {
            (*i)++;
            return c;
        }
        cp = cp << 6 | (s[*i + k] & 0x3F);
    }
    *i += (size_t)more + 1;
    return cp;
}

bool mf_utf8_valid(const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        int more;
        uint32_t min;
        if (c < 0x80) {
            i++;
            continue;
        } else if (c >= 0xC2 && c <= 0xDF) {
            more = 1, min = 0x80;
        } else if (c >= 0xE0 && c <= 0xEF) {
            more = 2, min = 0x800;
        } else if (c >= 0xF0 && c <= 0xF4) {
            more = 3, min = 0x10000;
        } else {
            return false;
        }
        if (n - i <= (size_t)more)
            return false;
        uint32_t cp = c & (0x3Fu >> more);
        for (int k = 1; k <= more; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                return false;
            cp = cp << 6 | (s[i + k] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return false;
        i += (size_t)more + 1;
    }
    return true;
}

uint32_t mf_upper(uint32_t c)
{
    if (c >= 'a' && c <= 'z')
        return c - 32;
    if (c < 0xE0)
        return c;
    if (c <= 0xFE)
        return c == 0xF7 ? c : c - 32;
    if (c == 0xFF)
        return 0x178;
    /* Latin Extended-A: upper/lower pairs, even first except in two runs */
    if ((c >= 0x100 && c <= 0x137) || (c >= 0x14A && c <= 0x177))
        return c & ~1u;
    if ((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E))
        return (c & 1u) ? c : c - 1;
    if (c == 0x3C2) /* final sigma */
        return 0x3A3;
    if ((c >= 0x3B1 && c <= 0x3C1) || (c >= 0x3C3 && c <= 0x3CB))
        return c - 32;
    if (c >= 0x430 && c <= 0x44F)
        return c - 32;
    if (c >= 0x450 && c <= 0x45F)
        return c - 80;
    if (c >= 0xFF41 && c <= 0xFF5A)
        return c - 32;
    return c;
}

/* The UTF-16 code units of a name's upper case, one at a time. */
struct units {
    const unsigned char *s;
    size_t i, n;
    uint16_t pending; /* a low surrogate still to give (0: none) */
};

/* The next unit, or -1 at the end. */
static int32_t unit_next(struct units *u)
{
    if (u->pending) {
        uint16_t p = u->pending;
        u->pending = 0;
        return p;
    }
    if (u->i >= u->n)
        return -1;
    uint32_t c = mf_upper(utf8_next(u->s, u->n, &u->i));
    if (c < 0x10000)
        return (int32_t)c;
    c -= 0x10000;
    u->pending = (uint16_t)(0xDC00 | (c & 0x3FF));
    return (int32_t)(0xD800 | (c >> 10));
}

/* Compares a[0..an) and b[0..bn) by upper-cased UTF-16 units. */
static int units_cmp(const char *a, size_t an, const char *b, size_t bn)
{
    struct units x = {(const unsigned char *)a, 0, an, 0}, y = {(const unsigned char *)b, 0, bn, 0};
    for (;;) {
        int32_t p = unit_next(&x), q = unit_next(&y);
        if (p != q)
            return p < q ? -1 : 1;
        if (p < 0)
            return 0;
    }
}

static int bytes_cmp(const char *a, size_t an, const char *b, size_t bn)
{
    int c = memcmp(a, b, an < bn ? an : bn);
    return c ? c : an < bn ? -1 : an > bn;
}

/* units_cmp where both names are ASCII as far as they are compared (most names): a
 * letter's upper case is its UTF-16 unit, no decoding. 2: a byte past ASCII came first. */
static int ascii_units_cmp(const char *a, size_t an, const char *b, size_t bn)
{
    size_t n = an < bn ? an : bn;
    for (size_t i = 0; i < n; i++) {
        unsigned char x = (unsigned char)a[i], y = (unsigned char)b[i];
        if ((x | y) >= 0x80)
            return 2;
        x = x >= 'a' && x <= 'z' ? (unsigned char)(x - 32) : x;
        y = y >= 'a' && y <= 'z' ? (unsigned char)(y - 32) : y;
        if (x != y)
            return x < y ? -1 : 1;
    }
    /* the one that ends first is less, whatever the other's next unit */
    return an < bn ? -1 : an > bn;
}

static int part_cmp(const char *a, size_t an, const char *b, size_t bn)
{
    int c = ascii_units_cmp(a, an, b, bn);
    if (c == 2)
        c = units_cmp(a, an, b, bn);
    return c ? c : bytes_cmp(a, an, b, bn);
}

int mf_name_cmp(const char *a, const char *b)
{
    return part_cmp(a, strlen(a), b, strlen(b));
}

int mf_path_cmp(const char *a, const char *b)
{
    for (;;) {
        size_t an = strcspn(a, "/"), bn = strcspn(b, "/");
        int c = part_cmp(a, an, b, bn);
        if (c)
            return c;
        /* the same component: the one that ends here (a file, or the folder itself) first */
        if (!a[an] || !b[bn])
            return (a[an] != 0) - (b[bn] != 0);
        a += an + 1;
        b += bn + 1;
    }
}

unsigned mf_depth(const char *rel)
{
    unsigned d = 0;
    for (; *rel; rel++)
        d += *rel == '/';
    return d;
}

bool mf_script_depth_ok(const char *rel)
{
    return mf_depth(rel) <= MF_SCRIPT_MAX_DEPTH;
}

/* ---- globs ---- */

static unsigned char fold(unsigned char c)
{
    return c >= 'a' && c <= 'z' ? (unsigned char)(c - 32) : c == '\\' ? '/' : c;
}

/* One component: p[0..pn) against s[0..sn), '*' any run. Greedy with one backtrack point
 * (the last star): O(pn * sn), bounded by a component's length. */
static bool part_match(const char *p, size_t pn, const char *s, size_t sn)
{
    size_t i = 0, j = 0, star = (size_t)-1, mark = 0;
    while (j < sn) {
        if (i < pn && p[i] == '*') {
            star = i++;
            mark = j;
        } else if (i < pn && fold((unsigned char)p[i]) == fold((unsigned char)s[j])) {
            i++;
            j++;
        } else if (star != (size_t)-1) {
            i = star + 1;
            j = ++mark;
        } else {
            return false;
        }
    }
    while (i < pn && p[i] == '*')
        i++;
    return i == pn;
}

static size_t sep_span(const char *s)
{
    size_t n = 0;
    while (s[n] && s[n] != '/' && s[n] != '\\')
        n++;
    return n;
}

bool mf_glob_match(const char *pattern, const char *path)
{
    for (;;) {
        size_t pn = sep_span(pattern), sn = strcspn(path, "/");
        if (!part_match(pattern, pn, path, sn))
            return false;
        bool pend = !pattern[pn], send = !path[sn];
        if (pend || send)
            return pend && send;
        pattern += pn + 1;
        path += sn + 1;
    }
}

/* ---- Resource.cfg ---- */

void mf_rules_free(struct mf_rules *r)
{
    for (size_t i = 0; i < r->nglobs; i++)
        free(r->globs[i].pattern);
    free(r->globs);
    for (size_t i = 0; i < r->nunapplied; i++)
        free(r->unapplied[i]);
    free(r->unapplied);
    memset(r, 0, sizeof *r);
}

static bool keyword(const char *line, size_t n, const char *word, const char **rest)
{
    size_t k = strlen(word);
    if (n < k || strncasecmp(line, word, k) != 0 || (n > k && line[k] != ' ' && line[k] != '\t'))
        return false;
    *rest = line + k;
    return true;
}

/* S3_OK or NOMEM (r keeps what it had: mf_rules_free frees it). */
static enum s3_err note_unapplied(struct mf_rules *r, unsigned lineno, const char *line, size_t n, const char *why)
{
    char **u = realloc(r->unapplied, (r->nunapplied + 1) * sizeof *u);
    if (!u)
        return S3_ERR_NOMEM;
    r->unapplied = u;
    size_t cap = n + strlen(why) + 40;
    char *s = malloc(cap);
    if (!s)
        return S3_ERR_NOMEM;
    snprintf(s, cap, "line %u: %.*s (%s)", lineno, (int)n, line, why);
    r->unapplied[r->nunapplied++] = s;
    return S3_OK;
}

/* S3_OK or NOMEM (r keeps what it had: mf_rules_free frees it). */
static enum s3_err add_glob(struct mf_rules *r, const char *pat, size_t n, int32_t priority, unsigned lineno)
{
    struct mf_glob *g = realloc(r->globs, (r->nglobs + 1) * sizeof *g);
    if (!g)
        return S3_ERR_NOMEM;
    r->globs = g;
    if (n >= 2 && pat[0] == '"' && pat[n - 1] == '"')
        pat++, n -= 2;
    char *copy = strndup(pat, n);
    if (!copy)
        return S3_ERR_NOMEM;
    r->globs[r->nglobs++] = (struct mf_glob){copy, priority, lineno};
    return S3_OK;
}

/* A Priority's number: true and *out for a decimal integer (sign allowed) that fits. */
static bool parse_priority(const char *s, size_t n, int32_t *out)
{
    size_t i = 0;
    bool neg = false;
    if (i < n && (s[i] == '-' || s[i] == '+'))
        neg = s[i++] == '-';
    if (i == n)
        return false;
    int64_t v = 0;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9' || v > 100000000)
            return false;
        v = v * 10 + (s[i] - '0');
    }
    *out = (int32_t)(neg ? -v : v);
    return true;
}

static void trim(const char **s, size_t *n)
{
    while (*n && (**s == ' ' || **s == '\t'))
        (*s)++, (*n)--;
    while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t' || (*s)[*n - 1] == '\r'))
        (*n)--;
}

/* S3_OK or NOMEM: a line the rules do not take is noted, never a failure. */
static enum s3_err parse_line(struct mf_rules *r, const char *line, size_t n, unsigned lineno, int32_t *priority)
{
    trim(&line, &n);
    if (n == 0 || line[0] == '#' || (n >= 2 && line[0] == '/' && line[1] == '/'))
        return S3_OK;
    const char *rest;
    if (keyword(line, n, "Priority", &rest)) {
        size_t rn = n - (size_t)(rest - line);
        trim(&rest, &rn);
        int32_t p;
        if (parse_priority(rest, rn, &p)) {
            *priority = p;
            return S3_OK;
        }
        return note_unapplied(r, lineno, line, n, "a priority that is not a number; the section goes on");
    }
    if (keyword(line, n, "PackedFile", &rest)) {
        size_t rn = n - (size_t)(rest - line);
        trim(&rest, &rn);
        if (rn)
            return add_glob(r, rest, rn, *priority, lineno);
        return note_unapplied(r, lineno, line, n, "no glob");
    }
    if (keyword(line, n, "DirectoryFiles", &rest))
        return note_unapplied(r, lineno, line, n, "not applied: loose files are not read");
    return note_unapplied(r, lineno, line, n, "not applied: unknown keyword");
}

enum s3_err mf_rules_parse(const char *text, size_t len, struct mf_rules *r)
{
    memset(r, 0, sizeof *r);
    int32_t priority = 0;
    unsigned lineno = 0;
    size_t i = 0;
    /* a UTF-8 byte order mark, as Windows editors write one */
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
        i = 3;
    while (i < len) {
        size_t end = i;
        while (end < len && text[end] != '\n')
            end++;
        lineno++;
        enum s3_err e = parse_line(r, text + i, end - i, lineno, &priority);
        if (e != S3_OK) {
            mf_rules_free(r);
            return e;
        }
        i = end + 1;
    }
    return S3_OK;
}

bool mf_rules_match(const struct mf_rules *r, const char *rel, int32_t *priority, uint64_t *hits)
{
    bool found = false;
    for (size_t i = 0; i < r->nglobs; i++) {
        if (!mf_glob_match(r->globs[i].pattern, rel))
            continue;
        if (hits)
            hits[i]++;
        if (!found || r->globs[i].priority > *priority)
            *priority = r->globs[i].priority;
        found = true;
    }
    return found;
}

unsigned mf_rules_max_depth(const struct mf_rules *r)
{
    unsigned best = 0;
    for (size_t i = 0; i < r->nglobs; i++) {
        unsigned d = 0;
        for (const char *p = r->globs[i].pattern; *p; p++)
            d += *p == '/' || *p == '\\';
        if (d > best)
            best = d;
    }
    return best;
}

/* ---- sniffing ---- */

enum mf_sniff mf_sniff(const uint8_t *head, size_t n, uint64_t size)
{
    static const char lfs[] = "version https://git-lfs.github.com/spec/";
    if (size == 0)
        return MF_EMPTY;
    if (n >= sizeof lfs - 1 && memcmp(head, lfs, sizeof lfs - 1) == 0)
        return MF_LFS;
    if (n >= 4 && memcmp(head, "DBPF", 4) == 0)
        return MF_DBPF;
    return MF_OTHER;
}

/* ---- keys ---- */

static bool same_key(const struct mf_rec *a, const struct mf_rec *b)
{
    return a->type == b->type && a->group == b->group && a->instance == b->instance;
}

/* Seeded: the keys come from files, and with a fixed hash a crafted folder could make
 * every key probe all the others. */
static uint64_t key_hash(const struct mf_rec *r, uint64_t seed)
{
    uint64_t h = (r->instance ^ seed) * 0x9E3779B97F4A7C15ull;
    h ^= (((uint64_t)r->type << 32 | r->group) + (seed >> 7)) * 0xC2B2AE3D27D4EB4Full;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    return h ^ (h >> 32);
}

/* ---- the keys of records in load order, not moved ---- */

#define PREFETCH 16 /* records ahead whose slot is prefetched */

/* A key's home slot: the top bits of its fingerprint (h >> 32), so a slot's value alone
 * gives its home and a doubling rehash reads no record; the probe order is the homes'
 * order, so the rehash writes the new table front to back. */
static size_t home(const struct mf_keyset *ks, uint64_t fp)
{
    return (size_t)(fp >> (32 - __builtin_ctzll(ks->cap)));
}

/* Key k's first record while building (a multi's first holds it until the lists are
 * made). */
static uint32_t first_rec(const struct mf_keyset *ks, uint32_t k)
{
    uint32_t x = ks->keys[k];
    return x & MF_MULTI ? ks->multi[x & ~MF_MULTI].first : x;
}

/* The slot of rec's key, or of the empty place it goes: a slot compares its fingerprint
 * before the record behind it, so a probe past other keys reads no record. */
static size_t probe(const struct mf_keyset *ks, const struct mf_rec *r, uint64_t h)
{
    uint64_t fp = h >> 32;
    size_t at = home(ks, fp);
    for (; ks->slot[at]; at = (at + 1) & (ks->cap - 1)) {
        uint64_t s = ks->slot[at];
        if (s >> 32 == fp && same_key(mf_rec_at(&ks->recs, first_rec(ks, (uint32_t)s - 1)), r))
            break;
    }
    return at;
}

/* While building, a key that got a second provider is multi[m] with first its first
 * record and winner its last so far (for the same-package check); each provider after a
 * key's first is a `more`, in load order. A few bytes for each record of such a key,
 * none for the others (most keys have one provider: no array of a word per record). */
struct mf_more {
    uint32_t multi, rec;
};

static bool grow(void **p, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap)
        return true;
    size_t c = *cap ? 2 * *cap : 1024;
    void *q = realloc(*p, c * elem);
    if (!q)
        return false;
    *p = q;
    *cap = c;
    return true;
}

/* Record id (at rec) has key k already: the package's later entry overwrites its earlier
 * one, or it is k's next provider. false: out of memory. */
static bool add_provider(struct mf_keybuild *b, uint32_t k, uint32_t id, const struct mf_rec *rec)
{
    struct mf_keyset *ks = b->ks;
    uint32_t x = ks->keys[k];
    uint32_t last = x & MF_MULTI ? ks->multi[x & ~MF_MULTI].winner : x;
    struct mf_rec *l = mf_rec_at(&ks->recs, last);
    if (l->file == rec->file) {
        *l = *rec; /* the package's later entry of the key stands */
        return true;
    }
    if (!(x & MF_MULTI)) {
        if (!grow((void **)&ks->multi, &b->capmulti, ks->nmulti, sizeof *ks->multi))
            return false;
        ks->multi[ks->nmulti] = (struct mf_multi){x, 1, x};
        x = ks->keys[k] = MF_MULTI | (uint32_t)ks->nmulti++;
    }
    if (!grow((void **)&b->more, &b->capmore, b->nmore, sizeof *b->more))
        return false;
    struct mf_multi *m = &ks->multi[x & ~MF_MULTI];
    m->winner = id;
    m->n++;
    b->more[b->nmore++] = (struct mf_more){x & ~MF_MULTI, id};
    return true;
}

/* The providers of the keys that have two or more, as lists in prov (each key's first
 * record, then its later ones in load order); a multi's first becomes its list's start
 * and winner the provider in effect. */
static enum s3_err gather_providers(struct mf_keybuild *b, const int32_t *priority)
{
    struct mf_keyset *ks = b->ks;
    ks->prov = alloc_array(ks->nmulti + b->nmore, sizeof *ks->prov);
    if (!ks->prov)
        return S3_ERR_NOMEM;
    for (size_t m = 0; m < ks->nmulti; m++) { /* each list's start; winner: where it is filled */
        struct mf_multi *key = &ks->multi[m];
        ks->prov[ks->nprov] = key->first;
        key->first = (uint32_t)ks->nprov;
        key->winner = (uint32_t)ks->nprov + 1;
        ks->nprov += key->n;
    }
    for (size_t i = 0; i < b->nmore; i++)
        ks->prov[ks->multi[b->more[i].multi].winner++] = b->more[i].rec;
    for (size_t m = 0; m < ks->nmulti; m++) {
        struct mf_multi *key = &ks->multi[m];
        const uint32_t *p = ks->prov + key->first;
        uint32_t w = 0; /* mf_winner over the list: later in load order wins ties */
        for (uint32_t j = 1; j < key->n; j++)
            if (priority[mf_rec_at(&ks->recs, p[j])->file] >= priority[mf_rec_at(&ks->recs, p[w])->file])
                w = j;
        key->winner = w;
    }
    return S3_OK;
}

/* A zeroed table of cap slots (a power of two, 16 to 2^32): NULL when out of memory. */
static uint64_t *new_slots(size_t cap)
{
    uint64_t *s = alloc_array(cap, sizeof *s);
    if (s) /* written now: a probe's read of an untouched page would map the zero page,
            * and the insert's write fault again (two faults a page) */
        memset(s, 0, cap * sizeof *s);
    return s;
}

/* The smallest table for n keys: at most half full. */
static size_t table_cap(size_t n)
{
    size_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    return cap;
}

/* The table moved to one of cap slots (bigger or smaller: cap holds its keys): each slot
 * to its home there or past it, in slot order, reading no record: linear in both tables.
 * S3_OK or NOMEM (ks as it was). */
static enum s3_err rehash(struct mf_keyset *ks, size_t cap)
{
    uint64_t *slot = new_slots(cap);
    if (!slot)
        return S3_ERR_NOMEM;
    struct mf_keyset old = *ks;
    ks->slot = slot;
    ks->cap = cap;
    /* a cluster that wraps past the old table's end starts at its front: take those after
     * the rest, so the new table too is written front to back */
    size_t start = 0;
    while (start < old.cap && old.slot[start])
        start++;
    for (size_t i = 0; i < old.cap; i++) {
        uint64_t s = old.slot[(start + i) & (old.cap - 1)];
        if (!s)
            continue;
        size_t at = home(ks, s >> 32);
        while (slot[at])
            at = (at + 1) & (cap - 1);
        slot[at] = s;
    }
    free(old.slot);
    return S3_OK;
}

/* The table and the keys' array made room for n keys in all (the table at most half
 * full): S3_OK or NOMEM (ks as it was). */
static enum s3_err make_room(struct mf_keybuild *b, size_t n)
{
    struct mf_keyset *ks = b->ks;
    if (n > b->capkeys) {
        size_t c = b->capkeys ? b->capkeys : 1024;
        while (c < n)
            c *= 2;
        uint32_t *k = alloc_array(c, sizeof *k);
        if (!k)
            return S3_ERR_NOMEM;
        if (ks->nkeys)
            memcpy(k, ks->keys, ks->nkeys * sizeof *k);
        free(ks->keys);
        ks->keys = k;
        b->capkeys = c;
    }
    if (!ks->slot) { /* the first table: new, not moved */
        ks->cap = table_cap(n);
        ks->slot = new_slots(ks->cap);
        if (!ks->slot)
            ks->cap = 0;
        return ks->slot ? S3_OK : S3_ERR_NOMEM;
    }
    return ks->cap < 2 * n ? rehash(ks, table_cap(n)) : S3_OK;
}

enum s3_err mf_keybuild_begin(struct mf_keybuild *b, struct mf_keyset *ks, size_t est)
{
    *ks = (struct mf_keyset){0};
    *b = (struct mf_keybuild){.ks = ks};
    if (est > UINT32_MAX / 4)
        est = UINT32_MAX / 4;
    enum s3_err rc = make_room(b, est ? est : 1);
    if (rc == S3_ERR_NOMEM && est > 1) {
        /* a guess bigger than the memory there is (it may be 8 times the records): begun
         * small, grown as keys come, so a scan the memory allows does not fail at its guess
         * (and again at every retry, which guesses the same) */
        mf_keyset_free(ks);
        *ks = (struct mf_keyset){0};
        *b = (struct mf_keybuild){.ks = ks};
        rc = make_room(b, 1);
    }
    /* where the table lies (randomised per run) and the clock's low bits, mixed */
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ks->seed = ((uint64_t)(uintptr_t)ks->slot ^ (uint64_t)ts.tv_nsec) * 0xD6E8FEB86659FD93ull;
    return rc;
}

/* Run r's records into the table (their file set from the run). false: out of memory. */
static bool add_run(struct mf_keybuild *b, const struct mf_run *r, const struct mf_run *next)
{
    struct mf_keyset *ks = b->ks;
    struct mf_rec *rec = mf_rec_at(&ks->recs, r->first);
    const struct mf_rec *after = next && next->n ? mf_rec_at(&ks->recs, next->first) : NULL;
    for (uint32_t i = 0; i < r->n; i++) {
        rec[i].file = r->file;
        uint64_t h = key_hash(&rec[i], ks->seed);
        /* the table is far bigger than the caches: ask ahead, into the next run's records
         * near a run's end (else a package's first records would wait for theirs) */
        const struct mf_rec *ahead = i + PREFETCH < r->n ? &rec[i + PREFETCH]
                                     : after && i + PREFETCH - r->n < next->n ? &after[i + PREFETCH - r->n]
                                                                              : NULL;
        if (ahead)
            __builtin_prefetch(&ks->slot[home(ks, key_hash(ahead, ks->seed) >> 32)]);
        size_t at = probe(ks, &rec[i], h);
        uint32_t id = r->first + i;
        if (ks->slot[at]) {
            if (!add_provider(b, (uint32_t)ks->slot[at] - 1, id, &rec[i]))
                return false;
            continue;
        }
        uint32_t k = (uint32_t)ks->nkeys++;
        ks->keys[k] = id;
        ks->slot[at] = (h >> 32) << 32 | (k + 1);
    }
    return true;
}

enum s3_err mf_keybuild_add(struct mf_keybuild *b, const struct mf_run *r, const struct mf_run *next)
{
    if (r->n > UINT32_MAX / 4 - b->nrecs) /* also: key and multi numbers below MF_MULTI */
        return S3_ERR_LIMIT;
    enum s3_err rc = make_room(b, b->ks->nkeys + r->n);
    if (rc)
        return rc;
    b->nrecs += r->n;
    return add_run(b, r, next) ? S3_OK : S3_ERR_NOMEM;
}

enum s3_err mf_keybuild_finish(struct mf_keybuild *b, const int32_t *priority)
{
    struct mf_keyset *ks = b->ks;
    enum s3_err rc = gather_providers(b, priority);
    free(b->more);
    b->more = NULL;
    if (rc)
        return rc;
    uint32_t *fit = realloc(ks->keys, (ks->nkeys ? ks->nkeys : 1) * sizeof *fit);
    if (fit)
        ks->keys = fit;
    /* a table begun too big (the caller's guess) shrinks to what the keys need: the
     * memory is then the same as if the count had been known (or, refused, stays as it
     * is: it works the same) */
    if (ks->slot && ks->cap > table_cap(ks->nkeys))
        (void)rehash(ks, table_cap(ks->nkeys));
    return S3_OK;
}

void mf_keybuild_free(struct mf_keybuild *b)
{
    free(b->more);
    b->more = NULL;
    if (b->ks)
        mf_keyset_free(b->ks);
}

enum s3_err mf_keyset_build_runs(const struct mf_recs *rs, const struct mf_run *runs, size_t nruns,
                                 const int32_t *priority, struct mf_keyset *ks)
{
    *ks = (struct mf_keyset){0};
    size_t n = 0;
    for (size_t r = 0; r < nruns; r++)
        n += runs[r].n;
    if (n == 0)
        return S3_OK;
    if (n > UINT32_MAX / 4) /* also: key and multi numbers below MF_MULTI */
        return S3_ERR_LIMIT;
    struct mf_keybuild b;
    enum s3_err rc = mf_keybuild_begin(&b, ks, n);
    ks->recs = *rs;
    for (size_t r = 0; rc == S3_OK && r < nruns; r++)
        rc = mf_keybuild_add(&b, &runs[r], r + 1 < nruns ? &runs[r + 1] : NULL);
    if (rc == S3_OK)
        rc = mf_keybuild_finish(&b, priority);
    if (rc)
        mf_keybuild_free(&b);
    return rc;
}

enum s3_err mf_keyset_build(struct mf_rec *recs, size_t n, const int32_t *priority, struct mf_keyset *ks)
{
    *ks = (struct mf_keyset){0};
    if (n > UINT32_MAX / 4)
        return S3_ERR_LIMIT;
    struct mf_recs rs = {{recs}};
    size_t nruns = 0;
    struct mf_run *runs = alloc_array(n, sizeof *runs); /* at most one a record */
    if (!runs)
        return S3_ERR_NOMEM;
    for (size_t i = 0; i < n; i++) {
        if (!nruns || recs[i].file != runs[nruns - 1].file)
            runs[nruns++] = (struct mf_run){(uint32_t)i, 0, recs[i].file};
        runs[nruns - 1].n++;
    }
    enum s3_err rc = mf_keyset_build_runs(&rs, runs, nruns, priority, ks);
    free(runs);
    return rc;
}

bool mf_keyset_find(const struct mf_keyset *ks, uint32_t type, uint32_t group, uint64_t instance, uint32_t *k)
{
    if (!ks->slot)
        return false;
    struct mf_rec want = {.type = type, .group = group, .instance = instance};
    uint64_t h = key_hash(&want, ks->seed), fp = h >> 32;
    for (size_t at = home(ks, fp); ks->slot[at]; at = (at + 1) & (ks->cap - 1)) {
        uint64_t s = ks->slot[at];
        if (s >> 32 == fp && same_key(mf_rec_at(&ks->recs, mf_keyset_rec(ks, (uint32_t)s - 1, 0)), &want)) {
            *k = (uint32_t)s - 1;
            return true;
        }
    }
    return false;
}

void mf_keyset_free(struct mf_keyset *ks)
{
    free(ks->keys);
    free(ks->multi);
    free(ks->prov);
    free(ks->slot);
    *ks = (struct mf_keyset){0};
}
