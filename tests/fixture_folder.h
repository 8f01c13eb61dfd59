/* Builder of a Mods folder on disk (issue 33's rules, each shown once): packages sharing
 * keys at the game's Resource.cfg priorities (an Override/ section at 600 beating later
 * packages at 500, ties going to the one loaded last, names that sort differently upper-
 * and lower-cased), a package five folders down (loaded) and six (too deep), a copy of a
 * package (duplicates), script archives sharing a module (one too deep, one broken), and
 * junk: an empty, a git-lfs pointer, a truncated and a non-DBPF .package, a text file, a
 * symlink, a symlink loop and a name that is not UTF-8. What the builder wrote is in
 * FXF_ constants and fxf_key; the tests derive what the tree shows from the rules. */
#ifndef S3_FIXTURE_FOLDER_H
#define S3_FIXTURE_FOLDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fixture_dbpf.h"

/* The keys the packages provide (type, group, instance), XML resources and a name map. */
enum { FXF_K1, FXF_K2, FXF_K3, FXF_K4, FXF_NAMEMAP, FXF_NKEYS };
extern const struct fxp_res fxf_key[FXF_NKEYS]; /* data NULL: the key only */
#define FXF_K1_NAME "alpha" /* a.package's name map names K1 */

/* The module two script archives ship (identical bytes). */
#define FXF_MODULE "mods/foo/bar.pyc"
#define FXF_MODULE_BYTES "compiled module bytes"

/* Writes the folder into dir (which must exist and be empty); with_cfg false leaves out
 * Resource.cfg (every package at any depth is loaded). 0, or -1 with errno. */
int fxf_build(const char *dir, bool with_cfg);
/* A large folder for benchmarks (scripts/bench.sh folder): npkg Sims 4 packages of
 * nres / npkg stored resources each, spread over 100 folders and an Override/ folder (a
 * hundredth of them), the game's Resource.cfg; a tenth of the entries are keys shared
 * between 2 and 5 packages. 0, or -1 with errno. */
int fxf_write_big(const char *dir, uint32_t npkg, uint64_t nres);
/* The same, its packages numbered from `first` (first = NPKG of a folder written before:
 * packages of keys that folder lacks, e.g. one package added to it). */
int fxf_write_big_from(const char *dir, uint32_t npkg, uint64_t nres, uint32_t first);
/* The bytes of key k as package rel holds them (expanded), for comparisons. */
const char *fxf_bytes(const char *rel, int k);

#endif
