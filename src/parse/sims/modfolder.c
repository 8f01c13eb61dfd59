/* The Mods folder's loading rules (modfolder.h): written from the community's
 * descriptions (the Resource.cfg the game ships, the Mod The Sims wiki's "Load Order"
 * page, SimSweep's conflict notes, the mod guides' folder limits). */
#include "parse/sims/modfolder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

static int part_cmp(const char *a, size_t an, const char *b, size_t bn)
{
    int c = units_cmp(a, an, b, bn);
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

static int note_unapplied(struct mf_rules *r, unsigned lineno, const char *line, size_t n, const char *why)
{
    char **u = realloc(r->unapplied, (r->nunapplied + 1) * sizeof *u);
    if (!u)
        return -1;
    r->unapplied = u;
    size_t cap = n + strlen(why) + 40;
    char *s = malloc(cap);
    if (!s)
        return -1;
    snprintf(s, cap, "line %u: %.*s (%s)", lineno, (int)n, line, why);
    r->unapplied[r->nunapplied++] = s;
    return 0;
}

static int add_glob(struct mf_rules *r, const char *pat, size_t n, int32_t priority, unsigned lineno)
{
    struct mf_glob *g = realloc(r->globs, (r->nglobs + 1) * sizeof *g);
    if (!g)
        return -1;
    r->globs = g;
    if (n >= 2 && pat[0] == '"' && pat[n - 1] == '"')
        pat++, n -= 2;
    char *copy = strndup(pat, n);
    if (!copy)
        return -1;
    r->globs[r->nglobs++] = (struct mf_glob){copy, priority, lineno};
    return 0;
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

static int parse_line(struct mf_rules *r, const char *line, size_t n, unsigned lineno, int32_t *priority)
{
    trim(&line, &n);
    if (n == 0 || line[0] == '#' || (n >= 2 && line[0] == '/' && line[1] == '/'))
        return 0;
    const char *rest;
    if (keyword(line, n, "Priority", &rest)) {
        size_t rn = n - (size_t)(rest - line);
        trim(&rest, &rn);
        int32_t p;
        if (parse_priority(rest, rn, &p)) {
            *priority = p;
            return 0;
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
        if (parse_line(r, text + i, end - i, lineno, &priority)) {
            mf_rules_free(r);
            return S3_ERR_NOMEM;
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

static uint64_t key_hash(const struct mf_rec *r)
{
    uint64_t h = r->instance * 0x9E3779B97F4A7C15ull;
    h ^= ((uint64_t)r->type << 32 | r->group) * 0xC2B2AE3D27D4EB4Full;
    return h ^ (h >> 29);
}

static bool before(const struct mf_rec *a, const struct mf_rec *b)
{
    return a->file != b->file ? a->file < b->file : a->entry < b->entry;
}

uint32_t mf_winner(const struct mf_rec *provs, uint32_t n, const int32_t *priority)
{
    uint32_t w = 0;
    for (uint32_t i = 1; i < n; i++)
        if (priority[provs[i].file] >= priority[provs[w].file]) /* later in load order wins ties */
            w = i;
    return w;
}

/* Linear: each record's key is found in a hash table (open addressing over a power of
 * two at least twice the records), the records are placed key by key in the order the
 * keys first appear (a counting sort), and each key's few providers are put in load order
 * by insertion. */
enum s3_err mf_keys_group(struct mf_rec *recs, size_t *nrecs, const int32_t *priority, struct mf_key **keys,
                          size_t *nkeys)
{
    return mf_keys_group_indexed(recs, nrecs, priority, keys, nkeys, NULL);
}

bool mf_key_find(const struct mf_key_index *idx, const struct mf_rec *recs, const struct mf_key *keys, uint32_t type,
                 uint32_t group, uint64_t instance, uint32_t *k)
{
    if (!idx->slot)
        return false;
    struct mf_rec want = {.type = type, .group = group, .instance = instance};
    for (size_t h = (size_t)key_hash(&want) & (idx->cap - 1); idx->slot[h]; h = (h + 1) & (idx->cap - 1))
        if (same_key(&recs[keys[idx->slot[h] - 1].first], &want)) {
            *k = idx->slot[h] - 1;
            return true;
        }
    return false;
}

void mf_key_index_free(struct mf_key_index *idx)
{
    free(idx->slot);
    idx->slot = NULL;
    idx->cap = 0;
}

/* The table of keys that grouping builds is kept (idx) rather than built again: a
 * folder's /keys finds a key by name through it. */
enum s3_err mf_keys_group_indexed(struct mf_rec *recs, size_t *nrecs, const int32_t *priority, struct mf_key **keys,
                                  size_t *nkeys, struct mf_key_index *idx)
{
    if (idx)
        *idx = (struct mf_key_index){0};
    size_t n = *nrecs;
    *keys = NULL;
    *nkeys = 0;
    if (n == 0)
        return S3_OK;
    if (n > UINT32_MAX / 4)
        return S3_ERR_LIMIT;
    size_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    uint32_t *slot = alloc_array(cap, sizeof *slot);  /* key number + 1, 0 empty */
    uint32_t *kof = alloc_array(n, sizeof *kof);      /* each record's key number */
    uint32_t *first = alloc_array(n, sizeof *first);  /* each key's first record */
    uint32_t *count = alloc_array(n + 1, sizeof *count);
    struct mf_rec *out = alloc_array(n, sizeof *out);
    enum s3_err rc = S3_ERR_NOMEM;
    if (!slot || !kof || !first || !count || !out)
        goto done;
    size_t nk = 0;
    for (size_t i = 0; i < n; i++) {
        size_t h = (size_t)key_hash(&recs[i]) & (cap - 1);
        while (slot[h] && !same_key(&recs[first[slot[h] - 1]], &recs[i]))
            h = (h + 1) & (cap - 1);
        if (!slot[h]) {
            first[nk] = (uint32_t)i;
            slot[h] = (uint32_t)++nk;
        }
        kof[i] = slot[h] - 1;
        count[kof[i] + 1]++;
    }
    for (size_t k = 0; k < nk; k++) /* count[k] becomes where key k starts */
        count[k + 1] += count[k];
    for (size_t i = 0; i < n; i++)
        out[count[kof[i]]++] = recs[i];
    /* now count[k] is where key k ends; order each key's records, keep one per package */
    struct mf_key *k = alloc_array(nk, sizeof *k);
    if (!k)
        goto done;
    size_t kept = 0;
    for (size_t key = 0, start = 0; key < nk; start = count[key++]) {
        struct mf_rec *g = out + start;
        size_t len = count[key] - start;
        for (size_t i = 1; i < len; i++) /* insertion: a key has a few providers */
            for (size_t j = i; j > 0 && before(&g[j], &g[j - 1]); j--) {
                struct mf_rec t = g[j];
                g[j] = g[j - 1];
                g[j - 1] = t;
            }
        k[key] = (struct mf_key){(uint32_t)kept, 0, 0};
        for (size_t i = 0; i < len; i++) {
            /* a later entry of the key in the same package replaces the one kept */
            if (k[key].n && recs[kept - 1].file == g[i].file) {
                recs[kept - 1] = g[i];
                continue;
            }
            recs[kept++] = g[i];
            k[key].n++;
        }
        k[key].winner = mf_winner(&recs[k[key].first], k[key].n, priority);
    }
    *nrecs = kept;
    *keys = k;
    *nkeys = nk;
    rc = S3_OK;
    if (idx) { /* kept: the slots hold key numbers + 1, the numbers of k */
        *idx = (struct mf_key_index){slot, cap};
        slot = NULL;
    }
done:
    free(slot);
    free(kof);
    free(first);
    free(count);
    free(out);
    return rc;
}
