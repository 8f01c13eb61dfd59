/* The rules by which The Sims 4 loads a Mods folder, as the community documents them
 * (observed behaviour, not EA's specification): Resource.cfg's Priority sections and
 * PackedFile globs, the load order (Windows' listing order, depth-first), which provider
 * of a key is in effect, and the depth limits. Pure: text and names in, no I/O.
 * - Names and paths are '/'-separated, relative to the folder, valid UTF-8 (check with
 *   mf_utf8_valid first: other names are not ordered here).
 * - mf_rules_* own what they allocate: free with mf_rules_free.
 * - mf_keyset_build overwrites a record that a later entry of its package replaces. */
#ifndef S3_MODFOLDER_H
#define S3_MODFOLDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parse/base/err.h"

/* ---- names and load order ---- */

/* True when s[0..n) is well-formed UTF-8 (no overlongs, surrogates or values past U+10FFFF). */
bool mf_utf8_valid(const char *s, size_t n);
/* The upper-case of code point c as the listing order uses it: the letters of ASCII,
 * Latin-1, Latin Extended-A, Greek, Cyrillic and fullwidth Latin; others unchanged. */
uint32_t mf_upper(uint32_t c);
/* Orders two names as Windows lists a folder: upper-cased, then compared by UTF-16 code
 * unit (so '_' sorts after 'Z', and characters past U+FFFF, as surrogates, before
 * U+E000..U+FFFF); names equal so are ordered by their bytes. <0, 0, >0. */
int mf_name_cmp(const char *a, const char *b);
/* The load order of two relative paths: component by component with mf_name_cmp, which
 * is the depth-first walk of the folder with each folder's files and subfolders listed
 * together. */
int mf_path_cmp(const char *a, const char *b);
/* Folders above the file: 0 for "a.package", 2 for "a/b/c.package". */
unsigned mf_depth(const char *rel);
/* Script archives are loaded at most one folder below the top. */
#define MF_SCRIPT_MAX_DEPTH 1u
bool mf_script_depth_ok(const char *rel);

/* ---- Resource.cfg ---- */

/* A glob: '*' matches any run of characters within one path component; letters match
 * either case (ASCII); '\' in the pattern is read as '/'. */
bool mf_glob_match(const char *pattern, const char *path);

struct mf_glob {
    char *pattern;
    int32_t priority; /* the Priority section it is in (0 before any) */
    unsigned line;
};
struct mf_rules {
    struct mf_glob *globs;
    size_t nglobs;
    char **unapplied; /* "line N: TEXT (why)" for every line not applied */
    size_t nunapplied;
};
/* Parses Resource.cfg's text: `Priority N` starts a section, `PackedFile GLOB` adds a
 * glob to it; blank lines and comments (# or //) are ignored; every other line
 * (DirectoryFiles, unknown keywords, a Priority without a number) goes to unapplied.
 * Keywords are matched in either case. S3_OK, or S3_ERR_NOMEM (r then freed). */
enum s3_err mf_rules_parse(const char *text, size_t len, struct mf_rules *r);
void mf_rules_free(struct mf_rules *r);
/* The priority rel is loaded at: true and the highest priority of the sections whose
 * globs match it (and in hits, when not NULL, each matching glob's count is raised);
 * false when none does. */
bool mf_rules_match(const struct mf_rules *r, const char *rel, int32_t *priority, uint64_t *hits);
/* The deepest folder level the globs reach: a glob of k components matches files k-1
 * folders down. 0 with no globs. */
unsigned mf_rules_max_depth(const struct mf_rules *r);

/* ---- what a file is, by its first bytes ---- */

enum mf_sniff {
    MF_EMPTY,     /* no bytes */
    MF_LFS,       /* a git-lfs pointer: the package's bytes are not here */
    MF_DBPF,      /* starts with DBPF (its version is the header parser's to check) */
    MF_OTHER,
};
enum mf_sniff mf_sniff(const uint8_t *head, size_t n, uint64_t size);

/* ---- keys, providers and the one in effect ---- */

/* One index entry of a loaded package. */
struct mf_rec {
    uint32_t type, group;
    uint64_t instance;
    uint32_t file;  /* the package's place in the load order */
    uint32_t size;  /* its memory size (dbpf_key's: providers of different sizes differ) */
    uint32_t dup;   /* 0, or n: the entry repeats its key for the n-th time in its package */
    uint32_t record; /* where its index record starts in the package (read back alone) */
};
/* The records, in up to MF_SEGS arrays (a folder scan's workers each fill their own, and
 * nothing is copied into one array): record id s << MF_SEG_BITS | i is seg[s][i]. A plain
 * array is seg[0], its ids its indexes. Ids stay below 2^31 (MF_MULTI is free). */
#define MF_SEGS 4u
#define MF_SEG_BITS 29u
#define MF_SEG_MAX (1u << MF_SEG_BITS) /* records a segment holds at most */
struct mf_recs {
    struct mf_rec *seg[MF_SEGS];
};
static inline struct mf_rec *mf_rec_at(const struct mf_recs *rs, uint32_t id)
{
    return &rs->seg[id >> MF_SEG_BITS][id & (MF_SEG_MAX - 1)];
}
/* Records first .. first + n - 1 (ids, in one segment): package `file`'s, in index order.
 * The build sets each record's file from its run. */
struct mf_run {
    uint32_t first, n, file;
};
/* A key of two or more providers: prov[first .. first + n) in load order. */
struct mf_multi {
    uint32_t first, n;
    uint32_t winner; /* offset in [0, n) of the provider in effect */
};
#define MF_MULTI 0x80000000u /* keys[k] = MF_MULTI | m: key k is multi[m] */
/* The keys of a folder's records, grouped without moving them (a million records: the
 * scan's cost is one hash probe per record, and a word per key). Records are given in load order (runs in
 * load order, each its package's entries in order); a key's later entry in the same
 * package overwrites its earlier record (the later one stands) and the later record is
 * left out of every key.
 * - keys[k] for every distinct key, in the order keys first appear: its record id when
 *   it has one provider, else MF_MULTI | its number in multi; key k's
 *   mf_keyset_n(ks, k) providers, one per package in load order, are records
 *   mf_keyset_rec(ks, k, 0 .. n - 1), mf_keyset_winner(ks, k) the one in effect;
 * - slot: the keys by type, group and instance (fingerprint << 32 | key number + 1);
 * - recs: the records' arrays (not owned: they must outlive the keyset). */
struct mf_keyset {
    uint32_t *keys;
    size_t nkeys;
    struct mf_multi *multi;
    size_t nmulti;
    uint32_t *prov; /* providers of the keys that have two or more */
    size_t nprov;
    uint64_t *slot;
    size_t cap;
    uint64_t seed; /* of the hash, per keyset: a folder cannot choose keys that collide */
    struct mf_recs recs;
};
/* S3_OK, S3_ERR_NOMEM, or S3_ERR_LIMIT past 2^30 records (ks then empty). Linear in the
 * records, whatever they hold; besides the keyset's own arrays it holds a few bytes per
 * record of a key that has two or more providers. */
enum s3_err mf_keyset_build_runs(const struct mf_recs *rs, const struct mf_run *runs, size_t nruns,
                                 const int32_t *priority, struct mf_keyset *ks);
/* The same built run by run while the records are still being read (a folder scan adds
 * each package as soon as it and all before it are read): the table grows as the keys
 * come (a doubling rehash reads only the slots), so the records' number need not be
 * known. begin: est records expected (a guess; 0 is fine); add: run r, whose records
 * ks->recs must reach at the call (the caller may change ks->recs between calls, the
 * records' ids staying), next the run after it when known (its records are prefetched);
 * finish: the providers and the ones in effect. Each returns S3_OK, NOMEM or LIMIT; after
 * a failure the caller calls mf_keybuild_free (which empties ks). */
struct mf_keybuild {
    struct mf_keyset *ks;
    size_t nrecs, capkeys, capmulti;
    struct mf_more *more;
    size_t nmore, capmore;
};
enum s3_err mf_keybuild_begin(struct mf_keybuild *b, struct mf_keyset *ks, size_t est);
enum s3_err mf_keybuild_add(struct mf_keybuild *b, const struct mf_run *r, const struct mf_run *next);
enum s3_err mf_keybuild_finish(struct mf_keybuild *b, const int32_t *priority);
void mf_keybuild_free(struct mf_keybuild *b);
/* The same over one plain array recs[0 .. nrecs) in load order, their file fields set
 * (each package's records together). */
enum s3_err mf_keyset_build(struct mf_rec *recs, size_t nrecs, const int32_t *priority, struct mf_keyset *ks);
/* Key k's number of providers; the offset of the one in effect; the record id of
 * provider j (mf_rec_at(&ks->recs, id) is the record). */
static inline uint32_t mf_keyset_n(const struct mf_keyset *ks, uint32_t k)
{
    uint32_t x = ks->keys[k];
    return x & MF_MULTI ? ks->multi[x & ~MF_MULTI].n : 1;
}
static inline uint32_t mf_keyset_winner(const struct mf_keyset *ks, uint32_t k)
{
    uint32_t x = ks->keys[k];
    return x & MF_MULTI ? ks->multi[x & ~MF_MULTI].winner : 0;
}
static inline uint32_t mf_keyset_rec(const struct mf_keyset *ks, uint32_t k, uint32_t j)
{
    uint32_t x = ks->keys[k];
    return x & MF_MULTI ? ks->prov[ks->multi[x & ~MF_MULTI].first + j] : x;
}
/* The number of the key (type, group, instance): true and *k, or false. A few probes. */
bool mf_keyset_find(const struct mf_keyset *ks, uint32_t type, uint32_t group, uint64_t instance, uint32_t *k);
void mf_keyset_free(struct mf_keyset *ks);

#endif
