/* The rules by which The Sims 4 loads a Mods folder, as the community documents them
 * (observed behaviour, not EA's specification): Resource.cfg's Priority sections and
 * PackedFile globs, the load order (Windows' listing order, depth-first), which provider
 * of a key is in effect, and the depth limits. Pure: text and names in, no I/O.
 * - Names and paths are '/'-separated, relative to the folder, valid UTF-8 (check with
 *   mf_utf8_valid first: other names are not ordered here).
 * - mf_rules_* own what they allocate: free with mf_rules_free.
 * - mf_keys_group reorders the records it is given in place. */
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
    uint32_t entry; /* its index entry */
    uint32_t dup;   /* 0, or n: the entry repeats its key for the n-th time in its package */
};
/* A key and its providers: recs[first .. first + n), in load order, one per package. */
struct mf_key {
    uint32_t first, n;
    uint32_t winner; /* offset in [0, n) of the provider in effect */
};
/* Groups recs (in any order) by key, in the order the keys first appear in recs, each
 * key's records in load order (file, then entry), keeping one record per key and package:
 * the package's last entry of that key (later entries override earlier ones). keys[k] for
 * every distinct key, its winner chosen by mf_winner with priority[f] for file f. Linear
 * in the records (hashing), for a folder of a million entries. *nrecs becomes the records
 * kept; keys is malloc'd (*keys NULL when there are none). S3_OK, or S3_ERR_NOMEM (or
 * S3_ERR_LIMIT past 2^30 records). */
enum s3_err mf_keys_group(struct mf_rec *recs, size_t *nrecs, const int32_t *priority, struct mf_key **keys,
                  size_t *nkeys);
/* Keys by type, group and instance: the hash table mf_keys_group_indexed keeps (open
 * addressing, key number + 1 per slot, 0 empty; cap a power of two). */
struct mf_key_index {
    uint32_t *slot;
    size_t cap;
};
/* mf_keys_group, keeping its table of keys in idx (freed with mf_key_index_free; left
 * empty when there are no keys or on failure). */
enum s3_err mf_keys_group_indexed(struct mf_rec *recs, size_t *nrecs, const int32_t *priority, struct mf_key **keys,
                                  size_t *nkeys, struct mf_key_index *idx);
/* The number of the key (type, group, instance) among keys (whose first records are in
 * recs, as mf_keys_group_indexed left them): true and *k, or false. A few probes. */
bool mf_key_find(const struct mf_key_index *idx, const struct mf_rec *recs, const struct mf_key *keys, uint32_t type,
                 uint32_t group, uint64_t instance, uint32_t *k);
void mf_key_index_free(struct mf_key_index *idx);
/* The provider in effect among provs[0..n) (in load order): the highest priority; among
 * equal priorities the one loaded last. */
uint32_t mf_winner(const struct mf_rec *provs, uint32_t n, const int32_t *priority);

#endif
