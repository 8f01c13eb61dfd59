/* A Mods folder as one tree, in-process (no mount): the fixture folder (fixture_folder.c)
 * opened as a folder source, each file of the layout (man/s3rig.5) checked against what
 * the rules (issue 33) say of what the builder wrote, the whole tree walked (sizes,
 * unique names, every link resolving), each package's tree equal to the package opened
 * alone, a folder without Resource.cfg, packages changed or gone after the scan, and a
 * folder of 100,000 files. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <nettle/sha2.h>

#include "fixture_dbpf.h"
#include "fixture_folder.h"
#include "fs/open/open.h"
#include "fs/views/sims/view_folder.h"
#include "parse/sims/dbpf_codec.h"
#include "testutil.h"
#include "tree_compare.h"
#include "walk.h"

static char dir[64];

static void make_folder(bool with_cfg)
{
    snprintf(dir, sizeof dir, "/tmp/s3rig-folder-XXXXXX");
    assert_non_null(mkdtemp(dir));
    assert_int_equal(fxf_build(dir, with_cfg), 0);
}

static void remove_folder(void)
{
    remove_tree(dir);
}

static struct s3fs *open_folder(void)
{
    struct s3fs *fs;
    char err[512];
    int rc = s3fs_open(&fs, dir, NULL, err, sizeof err);
    if (rc)
        fail_msg("%s", err);
    return fs;
}

/* The name a key has in /keys and /conflicts (no name part), and a provider's directory
 * name in its package (with the name map's part: a.package and its copy name K1). */
/* Tags and extensions from docs/formats/dbpf-types.md for the fixture's types. */
static const char *tag_of(int k)
{
    return k == FXF_K3 ? "_IMG" : k == FXF_NAMEMAP ? "_KEY" : "_XML";
}
static const char *ext_of(int k)
{
    return k == FXF_K3 ? ".dds" : k == FXF_NAMEMAP ? ".keyname" : ".xml";
}
static void named_key(char *out, size_t size, int k, const char *name)
{
    snprintf(out, size, "S4_%08X_%08X_%016llX%s%s%%%%+%s%s", fxf_key[k].type, fxf_key[k].group,
             (unsigned long long)fxf_key[k].instance, name ? "_" : "", name ? name : "", tag_of(k), ext_of(k));
}
static void key_name(char *out, size_t size, int k)
{
    named_key(out, size, k, NULL);
}
static void full_name(char *out, size_t size, int k, const char *pkg)
{
    bool named = k == FXF_K1 && (strcmp(pkg, "a.package") == 0 || strcmp(pkg, "copy/a-copy.package") == 0);
    named_key(out, size, k, named ? FXF_K1_NAME : NULL);
}

static void expect_link(struct s3fs *fs, const char *path, const char *target)
{
    uint32_t ino;
    if (tree_resolve(fs->tree, path, &ino))
        fail_msg("%s: missing", path);
    const char *t = tree_link_target(fs->tree, ino);
    if (!t || strcmp(t, target) != 0)
        fail_msg("%s -> %s, want %s", path, t ? t : "(not a link)", target);
}

/* The file a link leads to, read whole (NUL-terminated). */
static char *read_through(struct s3fs *fs, const char *link, const char *below)
{
    uint32_t ino, to, file;
    char why[256];
    assert_int_equal(tree_resolve(fs->tree, link, &ino), 0);
    if (link_resolve(fs->tree, ino, &to, why, sizeof why))
        fail_msg("%s: %s", link, why);
    assert_int_equal(tree_lookup(fs->tree, to, below, &file), 0);
    uint8_t *buf;
    size_t n;
    assert_int_equal(tree_read_all(fs->tree, file, &buf, &n), 0);
    buf = realloc(buf, n + 1);
    buf[n] = 0;
    return (char *)buf;
}

/* In load order (Windows' order, depth-first: a, the folder b, copy, d1, Override, s1,
 * sub, then Zx and _x, '_' after 'Z' once upper-cased), at the priority of the highest
 * glob matching each (Override/ 600, the rest 500); scripts without one. */
static const char want_order[] = "500\ta.package\n"
                                 "500\tb/B.package\n"
                                 "500\tcopy/a-copy.package\n"
                                 "500\td1/d2/d3/d4/d5/five.package\n"
                                 "600\tOverride/o.package\n"
                                 "-\ts1.ts4script\n"
                                 "-\tsub/s2.ts4script\n"
                                 "500\tZx.package\n"
                                 "500\t_x.package\n";

static void test_load_order_and_skipped(void **state)
{
    (void)state;
    make_folder(true);
    struct s3fs *fs = open_folder();
    expect_text(fs, "load-order", want_order);
    /* every file not loaded, in load order, with its reason */
    expect_text(fs, "skipped",
                "bad\\xff.package\ta name that is not valid UTF-8 (or holds control characters)\n"
                "broken.ts4script\tnot a readable zip archive: Not a zip archive\n"
                "d1/d2/d3/d4/d5/d6/deep.package\ttoo deep: 6 folders down, Resource.cfg's globs reach 5\n"
                "empty.package\tan empty file\n"
                "lfs.package\ta git-lfs pointer (the package's bytes are not here)\n"
                "link.package\ta symbolic link (not followed)\n"
                "loop\ta symbolic link (not followed)\n"
                "notdbpf.package\tnot a DBPF 2.x package\n"
                "readme.txt\tnot a package or script archive (by its name)\n"
                "sub/deeper/s3.ts4script\ta script archive too deep (at most 1 folder below the top)\n"
                "trunc.package\ta truncated or broken index: index [0x8e, +100) for 3 entries is not inside the "
                "file (230 bytes)\n");
    s3fs_close(fs);
    remove_folder();
}

static void test_info(void **state)
{
    (void)state;
    make_folder(true);
    struct s3fs *fs = open_folder();
    /* 7 packages; entries: a 3, b 2, copy 3, five 1, o 1, Zx 2, _x 1 = 13; keys K1..K4 and
     * the name map; conflicts: K1 (5 packages), K2 (4), the name map (a and its copy) */
    static const char *const lines[] = {
        "format: folder\n", "rules: Resource.cfg (8 globs)\n", "packages: 7\n", "scripts: 2\n",
        "resources: 13\n", "keys: 5\n", "conflicts: 3\n", "script_conflicts: 1\n", "skipped: 11\n",
        "warning: Resource.cfg line 11: DirectoryFiles Override autoupdate (not applied",
        "warning: Resource.cfg line 10: PackedFile Nothing/*.package matches no file\n",
        "warning: Resource.cfg line 4: PackedFile */*/*.package matches no file\n",
    };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
        expect_has(fs, "info", lines[i]);
    expect_has(fs, "info", "identical_packages: 2\n"); /* a.package and its copy */
    s3fs_close(fs);
    remove_folder();
}

/* Each key's winner by the rules: K1 is Override/o's (600 beats the later Zx at 500);
 * K2 _x's (all at 500: the last loaded); K3 and K4 their one provider's; the name map
 * the copy's (loaded after a.package). */
static const char *const winner[FXF_NKEYS] = {
    [FXF_K1] = "Override/o.package", [FXF_K2] = "_x.package", [FXF_K3] = "b/B.package",
    [FXF_K4] = "d1/d2/d3/d4/d5/five.package", [FXF_NAMEMAP] = "copy/a-copy.package"};

static void test_keys(void **state)
{
    (void)state;
    make_folder(true);
    struct s3fs *fs = open_folder();
    for (int k = 0; k < FXF_NKEYS; k++) {
        char name[160], full[160], path[256], target[512];
        key_name(name, sizeof name, k);
        full_name(full, sizeof full, k, winner[k]);
        snprintf(path, sizeof path, "keys/%s", name);
        snprintf(target, sizeof target, "../files/%s/resources/%s", winner[k], full);
        expect_link(fs, path, target);
        if (k != FXF_NAMEMAP) { /* the winner's bytes, through the link */
            char *got = read_through(fs, path, "data.bin");
            assert_string_equal(got, fxf_bytes(winner[k], k));
            free(got);
        }
        /* /by-type/TAG/NAME -> ../../keys/NAME */
        snprintf(path, sizeof path, "by-type/%s/%s", tag_of(k), name);
        snprintf(target, sizeof target, "../../keys/%s", name);
        expect_link(fs, path, target);
    }
    s3fs_close(fs);
    remove_folder();
}

static void expect_conflict(struct s3fs *fs, int k, const char *const *providers, size_t n, const char *identical)
{
    char name[160], full[160], path[512], target[512];
    key_name(name, sizeof name, k);
    for (size_t j = 0; j <= n; j++) {
        const char *pkg = j < n ? providers[j] : winner[k];
        full_name(full, sizeof full, k, pkg);
        if (j < n)
            snprintf(path, sizeof path, "conflicts/%s/%zu", name, j + 1);
        else
            snprintf(path, sizeof path, "conflicts/%s/winner", name);
        snprintf(target, sizeof target, "../../files/%s/resources/%s", pkg, full);
        expect_link(fs, path, target);
    }
    snprintf(path, sizeof path, "conflicts/%s/%zu", name, n + 1);
    assert_false(path_exists(fs, path));
    snprintf(path, sizeof path, "conflicts/%s/identical", name);
    expect_text(fs, path, identical);
}

static void test_conflicts(void **state)
{
    (void)state;
    make_folder(true);
    struct s3fs *fs = open_folder();
    static const char *const k1[] = {"a.package", "b/B.package", "copy/a-copy.package", "Override/o.package",
                                     "Zx.package"};
    static const char *const k2[] = {"a.package", "copy/a-copy.package", "Zx.package", "_x.package"};
    static const char *const map[] = {"a.package", "copy/a-copy.package"};
    expect_conflict(fs, FXF_K1, k1, 5, "no\n");       /* five different texts */
    expect_conflict(fs, FXF_K2, k2, 4, "yes\n");      /* "same two" in each */
    expect_conflict(fs, FXF_NAMEMAP, map, 2, "yes\n"); /* a copy */
    char k3[160], path[256];
    key_name(k3, sizeof k3, FXF_K3);
    snprintf(path, sizeof path, "conflicts/%s", k3);
    assert_false(path_exists(fs, path)); /* one provider: no conflict */

    char n1[160], n2[160], nm[160], csv[1024];
    key_name(n1, sizeof n1, FXF_K1);
    key_name(n2, sizeof n2, FXF_K2);
    key_name(nm, sizeof nm, FXF_NAMEMAP);
    snprintf(csv, sizeof csv,
             "key,type,providers,winner,identical\n"
             "%s,_KEY,2,copy/a-copy.package,yes\n"
             "%s,_XML,5,Override/o.package,no\n"
             "%s,_XML,4,_x.package,yes\n",
             nm, n1, n2);
    expect_text(fs, "conflicts.csv", csv);
    s3fs_close(fs);
    remove_folder();
}

/* /conflicts is computed (tree.h): a bare listing (tree_child_peek, what READDIRPLUS
 * past 4,096 entries and READDIR use) gives each conflict's name, number and kind and
 * makes no node; a lookup makes the one it finds, a directory of the providers. */
static void test_conflicts_lazy(void **state)
{
    (void)state;
    make_folder(true);
    struct s3fs *fs = open_folder();
    struct tree *t = fs->tree;
    uint32_t dir, ino[3], got;
    assert_int_equal(tree_resolve(t, "conflicts", &dir), 0);
    assert_int_equal(tree_populate(t, dir), 0);
    assert_int_equal(tree_child_count(t, dir), 3);
    assert_int_equal(tree_nlink(t, dir), 2 + 3); /* its subdirectories, made or not */
    char want[3][160], buf[256], bad[200];
    key_name(want[0], sizeof want[0], FXF_NAMEMAP); /* by key, as conflicts.csv */
    key_name(want[1], sizeof want[1], FXF_K1);
    key_name(want[2], sizeof want[2], FXF_K2);
    uint64_t made = tree_computed_made(t);
    for (uint32_t i = 0; i < 3; i++) {
        int kind = -1;
        const char *name = tree_child_peek(t, dir, i, buf, sizeof buf, &ino[i], &kind);
        assert_non_null(name);
        assert_string_equal(name, want[i]);
        assert_int_equal(kind, NODE_DIR);
    }
    assert_null(tree_child_peek(t, dir, 3, buf, sizeof buf, &got, &(int){0}));
    assert_int_equal(tree_computed_made(t), made); /* listed, none made */

    assert_int_equal(tree_lookup(t, dir, want[2], &got), 0);
    assert_int_equal(got, ino[2]); /* the number the listing gave */
    assert_int_equal(tree_computed_made(t), made + 1);
    assert_int_equal(tree_kind(t, got), NODE_DIR);
    assert_int_equal(tree_populate(t, got), 0);
    assert_int_equal(tree_child_count(t, got), 4 + 2); /* 1..4, winner, identical */
    int kind = -1;
    assert_string_equal(tree_child_peek(t, dir, 2, buf, sizeof buf, &got, &kind), want[2]); /* the node's */
    assert_int_equal(got, ino[2]);
    assert_int_equal(kind, NODE_DIR);
    assert_int_equal(tree_computed_made(t), made + 1);

    /* a key of one provider, and a conflict's key with another suffix, are no entries */
    key_name(bad, sizeof bad, FXF_K3);
    assert_int_equal(tree_lookup(t, dir, bad, &got), S3_ERR_NOT_FOUND);
    snprintf(bad, sizeof bad, "%s.x", want[1]);
    assert_int_equal(tree_lookup(t, dir, bad, &got), S3_ERR_NOT_FOUND);
    assert_int_equal(tree_computed_made(t), made + 1);

    /* everything parsed (s3rig info --full): every conflict made and populated, no link
     * of /keys made for it */
    assert_int_equal(tree_populate_all(t), 0);
    assert_int_equal(tree_computed_made(t), made + 3);
    for (uint32_t i = 0; i < 3; i++)
        assert_true(tree_is_populated(t, ino[i]));
    s3fs_close(fs);
    remove_folder();
}

static void test_duplicates(void **state)
{
    (void)state;
    make_folder(true);
    struct s3fs *fs = open_folder();
    char path[256];
    snprintf(path, sizeof path, "%s/a.package", dir);
    size_t n;
    uint8_t *bytes = slurp_path(path, &n);
    struct sha256_ctx c;
    uint8_t sum[SHA256_DIGEST_SIZE];
    sha256_init(&c);
    sha256_update(&c, n, bytes);
    sha256_digest(&c, sizeof sum, sum);
    free(bytes);
    char want[512], *p = want;
    p += sprintf(p, "sha256,size,paths\n");
    for (size_t i = 0; i < sizeof sum; i++)
        p += sprintf(p, "%02x", sum[i]);
    sprintf(p, ",%zu,a.package,copy/a-copy.package\n", n);
    expect_text(fs, "duplicates.csv", want);
    s3fs_close(fs);
    remove_folder();
}

static void test_scripts(void **state)
{
    (void)state;
    make_folder(true);
    struct s3fs *fs = open_folder();
    expect_text(fs, "files/s1.ts4script/" FXF_MODULE, FXF_MODULE_BYTES);
    expect_text(fs, "files/s1.ts4script/mods/one.py", "one");
    expect_text(fs, "files/sub/s2.ts4script/mods/two.py", "two");
    /* /script-conflicts/mods/foo/bar.pyc/: four folders down */
    expect_link(fs, "script-conflicts/" FXF_MODULE "/1", "../../../../files/s1.ts4script/" FXF_MODULE);
    expect_link(fs, "script-conflicts/" FXF_MODULE "/2", "../../../../files/sub/s2.ts4script/" FXF_MODULE);
    expect_link(fs, "script-conflicts/" FXF_MODULE "/winner", "../../../../files/sub/s2.ts4script/" FXF_MODULE);
    expect_text(fs, "script-conflicts/" FXF_MODULE "/identical", "yes\n");
    assert_false(path_exists(fs, "script-conflicts/mods/one.py"));
    s3fs_close(fs);
    remove_folder();
}

static void test_walk(void **state)
{
    (void)state;
    make_folder(true);
    struct s3fs *fs = open_folder();
    size_t nodes = walk_all(fs, 1000000);
    assert_true(nodes > 100);
    size_t links;
    char why[256];
    if (check_links(fs->tree, false, &links, why, sizeof why))
        fail_msg("%s", why);
    /* 5 keys, 3 conflicts of 5 + 4 + 2 providers with their winners, 5 by-type, 3 module
     * links; and the packages' own by-type links, one per entry: 3 + 2 + 3 + 1 + 1 + 2 + 1 */
    assert_int_equal(links, 5 + (6 + 5 + 3) + 5 + 3 + 13);
    s3fs_close(fs);
    remove_folder();
}

/* /files/REL/ is what mounting REL alone gives (its /info left out: it says where the
 * bytes lie). */
static void test_package_tree_same_as_alone(void **state)
{
    (void)state;
    make_folder(true);
    struct s3fs *fs = open_folder();
    static const char *const rels[] = {"a.package", "b/B.package", "Override/o.package"};
    for (size_t i = 0; i < sizeof rels / sizeof rels[0]; i++) {
        char path[256], err[256];
        uint32_t ino;
        snprintf(path, sizeof path, "files/%s", rels[i]);
        assert_int_equal(tree_resolve(fs->tree, path, &ino), 0);
        uint64_t d1, d2;
        size_t n1, n2;
        assert_int_equal(walk_digest(fs->tree, ino, &d1, &n1), 0);
        snprintf(path, sizeof path, "%s/%s", dir, rels[i]);
        struct s3fs *alone;
        assert_int_equal(s3fs_open(&alone, path, NULL, err, sizeof err), 0);
        assert_int_equal(walk_digest(alone->tree, TREE_ROOT, &d2, &n2), 0);
        assert_int_equal(n1, n2);
        assert_true(d1 == d2);
        s3fs_close(alone);
    }
    s3fs_close(fs);
    remove_folder();
}

/* Without Resource.cfg every package at any depth is loaded, at one priority (0). */
static void test_no_cfg(void **state)
{
    (void)state;
    make_folder(false);
    struct s3fs *fs = open_folder();
    expect_has(fs, "info", "rules: every package (no Resource.cfg)\n");
    expect_has(fs, "info", "packages: 8\n");
    expect_text(fs, "load-order",
                "0\ta.package\n0\tb/B.package\n0\tcopy/a-copy.package\n0\td1/d2/d3/d4/d5/d6/deep.package\n"
                "0\td1/d2/d3/d4/d5/five.package\n0\tOverride/o.package\n-\ts1.ts4script\n-\tsub/s2.ts4script\n"
                "0\tZx.package\n0\t_x.package\n");
    /* at one priority, K1 goes to the last loaded: Zx */
    char name[160], path[256];
    key_name(name, sizeof name, FXF_K1);
    snprintf(path, sizeof path, "keys/%s", name);
    expect_link(fs, path, "../files/Zx.package/resources/S4_0333406C_00000000_0000000000001111%%+_XML.xml");
    expect_lacks(fs, "skipped", "deep.package");
    walk_all(fs, 1000000);
    s3fs_close(fs);
    remove_folder();
}

/* A package replaced or removed after the scan is never read by its old index: its
 * directory holds package.error, its keys link to that directory (said in /info), and
 * every link still resolves. */
static void test_changed_after_scan(void **state)
{
    (void)state;
    make_folder(true);
    struct s3fs *fs = open_folder();
    expect_has(fs, "info", "packages: 7\n"); /* scanned */
    char path[256], tmp[256];
    snprintf(path, sizeof path, "%s/_x.package", dir);
    assert_int_equal(unlink(path), 0);
    snprintf(path, sizeof path, "%s/Zx.package", dir);
    snprintf(tmp, sizeof tmp, "%s/Zx.new", dir);
    FILE *f = fopen(tmp, "wb");
    assert_non_null(f);
    fputs("replaced", f);
    fclose(f);
    assert_int_equal(rename(tmp, path), 0);
    expect_has(fs, "files/_x.package/package.error", "_x.package");
    expect_has(fs, "files/Zx.package/package.error", "changed since the folder was scanned");
    char name[160];
    key_name(name, sizeof name, FXF_K2);
    snprintf(path, sizeof path, "keys/%s", name);
    uint32_t link; /* its winner (_x) is gone: the link shows the package's error */
    assert_int_equal(tree_resolve(fs->tree, path, &link), 0);
    assert_string_equal(tree_link_target(fs->tree, link), "../files/_x.package");
    expect_has(fs, "info", "warning: keys of _x.package link to its directory (its package.error)");
    snprintf(path, sizeof path, "conflicts/%s/4.error", name);
    assert_true(path_exists(fs, path));
    /* K2's identical cannot be told (Zx, its third provider, is another file now): not a
     * third answer but identical.error saying why, and an empty column in conflicts.csv;
     * K1's is still told (a.package and b/B.package differ: "no" before Zx is read) */
    snprintf(path, sizeof path, "conflicts/%s/identical", name);
    assert_false(path_exists(fs, path));
    snprintf(path, sizeof path, "conflicts/%s/identical.error", name);
    expect_has(fs, path, "Zx.package: changed or gone since the folder was scanned");
    char row[256], k1[160];
    snprintf(row, sizeof row, "%s,_XML,4,_x.package,\n", name);
    expect_has(fs, "conflicts.csv", row);
    key_name(k1, sizeof k1, FXF_K1);
    snprintf(row, sizeof row, "%s,_XML,5,Override/o.package,no\n", k1);
    expect_has(fs, "conflicts.csv", row);
    walk_all(fs, 1000000);
    s3fs_close(fs);
    remove_folder();
}

/* conflicts.csv's identical column from the providers' index records and stored bytes,
 * no package tree opened: two packages (no Resource.cfg: p2 loaded last wins) sharing
 * keys whose bytes the builder wrote as each case needs. The expected answer is the
 * builder's input (expanded bytes equal), and how each pair was decided is counted: equal
 * stored bytes are never expanded, different sizes never read. */
enum { SAME_STORED, SAME_ZLIB_VS_RAW, SAME_REFPACK_VS_ZLIB, DIFF_EQUAL_SIZE_ZLIB, DIFF_EQUAL_SIZE_RAW,
       DIFF_SIZES, BIG_SAME, BIG_LAST_BYTE, NCASES };
#define CASE_BIG (3 * 65536 + 17) /* past several of the comparison's pieces */

struct pair_case {
    enum fxp_comp c1, c2;
    size_t len1, len2;
    uint32_t seed1, seed2;
    bool flip_last;           /* p2's bytes: p1's with the last byte changed */
    enum dbpf_same_how how;   /* what must decide it */
};
static const struct pair_case pair_cases[NCASES] = {
    [SAME_STORED] = {FXP_ZLIB, FXP_ZLIB, 3000, 3000, 1, 1, false, DBPF_BY_STORED},
    [SAME_ZLIB_VS_RAW] = {FXP_ZLIB, FXP_STORED, 3000, 3000, 2, 2, false, DBPF_BY_EXPANDING},
    [SAME_REFPACK_VS_ZLIB] = {FXP_REFPACK, FXP_ZLIB, 3000, 3000, 3, 3, false, DBPF_BY_EXPANDING},
    [DIFF_EQUAL_SIZE_ZLIB] = {FXP_ZLIB, FXP_ZLIB, 3000, 3000, 4, 5, false, DBPF_BY_EXPANDING},
    [DIFF_EQUAL_SIZE_RAW] = {FXP_STORED, FXP_STORED, 3000, 3000, 6, 7, false, DBPF_BY_STORED},
    [DIFF_SIZES] = {FXP_ZLIB, FXP_ZLIB, 3000, 3001, 8, 8, false, DBPF_BY_SIZE},
    [BIG_SAME] = {FXP_ZLIB, FXP_STORED, CASE_BIG, CASE_BIG, 9, 9, false, DBPF_BY_EXPANDING},
    [BIG_LAST_BYTE] = {FXP_STORED, FXP_ZLIB, CASE_BIG, CASE_BIG, 10, 10, true, DBPF_BY_EXPANDING},
};

static void write_bytes(const char *path, const uint8_t *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

/* A case's key name (an XML resource of no name map): the same in /conflicts and in its
 * packages' resources/. */
static void case_name(char *out, size_t size, const struct fxp_res *r)
{
    snprintf(out, size, "S4_%08X_%08X_%016llX%%%%+_XML.xml", r->type, r->group, (unsigned long long)r->instance);
}

static void test_identical_without_trees(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/s3rig-folder-XXXXXX");
    assert_non_null(mkdtemp(dir));
    struct fxp_res r1[NCASES], r2[NCASES];
    uint8_t *d1[NCASES], *d2[NCASES];
    bool want[NCASES];
    for (int i = 0; i < NCASES; i++) {
        const struct pair_case *c = &pair_cases[i];
        d1[i] = fxp_pattern(c->len1, c->seed1);
        d2[i] = fxp_pattern(c->len2, c->seed2);
        if (c->flip_last)
            d2[i][c->len2 - 1] ^= 0x5A;
        want[i] = c->len1 == c->len2 && memcmp(d1[i], d2[i], c->len1) == 0;
        r1[i] = (struct fxp_res){0x0333406C, 0, 0x7700000000000000ull + (uint64_t)i, d1[i], c->len1, c->c1};
        r2[i] = (struct fxp_res){0x0333406C, 0, 0x7700000000000000ull + (uint64_t)i, d2[i], c->len2, c->c2};
    }
    struct fxp_opts o = {.game = 4};
    size_t n1, n2;
    struct fxp_layout lay;
    uint8_t *p1 = fxp_build(&o, r1, NCASES, &n1, &lay), *p2 = fxp_build(&o, r2, NCASES, &n2, &lay);
    char path[256];
    snprintf(path, sizeof path, "%s/p1.package", dir);
    write_bytes(path, p1, n1);
    snprintf(path, sizeof path, "%s/p2.package", dir);
    write_bytes(path, p2, n2);
    free(p1);
    free(p2);

    struct s3fs *fs = open_folder();
    uint64_t opened = folder_view_test_packages_opened(), before[4], after[4];
    folder_view_test_compared(before);
    char *csv = read_path(fs, "conflicts.csv", NULL);
    assert_int_equal(folder_view_test_packages_opened() - opened, 0); /* no package tree */
    folder_view_test_compared(after);
    uint64_t want_how[4] = {0};
    for (int i = 0; i < NCASES; i++) {
        char name[160], row[256];
        case_name(name, sizeof name, &r1[i]);
        snprintf(row, sizeof row, "%s,_XML,2,p2.package,%s\n", name, want[i] ? "yes" : "no");
        if (!strstr(csv, row))
            fail_msg("case %d: no row %s in\n%s", i, row, csv);
        want_how[pair_cases[i].how]++;
    }
    for (int h = 0; h < 4; h++)
        if (after[h] - before[h] != want_how[h])
            fail_msg("decided by %d: %llu pairs, want %llu", h, (unsigned long long)(after[h] - before[h]),
                     (unsigned long long)want_how[h]);
    free(csv);
    /* the same answer in /conflicts/NAME/identical (memoized: nothing compared again), and
     * the same as the two data.bin files the package trees show, compared here */
    for (int i = 0; i < NCASES; i++) {
        char name[160], p[512];
        case_name(name, sizeof name, &r1[i]);
        snprintf(p, sizeof p, "conflicts/%s/identical", name);
        expect_text(fs, p, want[i] ? "yes\n" : "no\n");
        size_t la, lb;
        snprintf(p, sizeof p, "files/p1.package/resources/%s/data.bin", name);
        uint8_t *a = read_path(fs, p, &la);
        snprintf(p, sizeof p, "files/p2.package/resources/%s/data.bin", name);
        uint8_t *b = read_path(fs, p, &lb);
        assert_int_equal(la == lb && memcmp(a, b, la) == 0, want[i]);
        free(a);
        free(b);
        free(d1[i]);
        free(d2[i]);
    }
    folder_view_test_compared(before);
    assert_memory_equal(before, after, sizeof after);
    assert_int_equal(folder_view_test_packages_opened() - opened, 2); /* the data.bin reads above */
    s3fs_close(fs);
    remove_folder();
}

/* conflicts.csv opens a package only to read bytes it must compare: providers whose
 * declared sizes differ are "no" with no file opened (20 keys in three packages, each
 * package's copy a byte longer); providers of equal sizes open each package once for
 * all their conflicts (20 keys of equal bytes in two packages: two opens), whatever the
 * number of conflicts. */
#define OPEN_KEYS 20
static void test_conflicts_csv_opens(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/s3rig-folder-XXXXXX");
    assert_non_null(mkdtemp(dir));
    uint8_t *same = fxp_pattern(50, 11), *bytes[3];
    for (int p = 0; p < 3; p++) {
        bytes[p] = fxp_pattern(100 + (size_t)p, 12);
        struct fxp_res r[2 * OPEN_KEYS];
        size_t n = 0;
        for (int i = 0; i < OPEN_KEYS; i++) {
            r[n++] = (struct fxp_res){0x0333406C, 0, 0x6600000000000000ull + (uint64_t)i, bytes[p], 100 + (size_t)p,
                                      FXP_STORED};
            if (p < 2)
                r[n++] = (struct fxp_res){0x0333406C, 0, 0x6500000000000000ull + (uint64_t)i, same, 50, FXP_STORED};
        }
        struct fxp_opts o = {.game = 4};
        struct fxp_layout lay;
        size_t size;
        uint8_t *pkg = fxp_build(&o, r, n, &size, &lay);
        char path[256];
        snprintf(path, sizeof path, "%s/p%d.package", dir, p + 1);
        write_bytes(path, pkg, size);
        free(pkg);
    }
    struct s3fs *fs = open_folder();
    uint64_t opens = folder_view_test_package_opens();
    char *csv = read_path(fs, "conflicts.csv", NULL);
    assert_int_equal(folder_view_test_package_opens() - opens, 2); /* p1 and p2, once each */
    for (int i = 0; i < OPEN_KEYS; i++) {
        char row[256];
        snprintf(row, sizeof row, "S4_0333406C_00000000_%016llX%%%%+_XML.xml,_XML,3,p3.package,no\n",
                 0x6600000000000000ull + (unsigned long long)i);
        if (!strstr(csv, row))
            fail_msg("no row %s in\n%s", row, csv);
        snprintf(row, sizeof row, "S4_0333406C_00000000_%016llX%%%%+_XML.xml,_XML,2,p2.package,yes\n",
                 0x6500000000000000ull + (unsigned long long)i);
        if (!strstr(csv, row))
            fail_msg("no row %s in\n%s", row, csv);
    }
    free(csv);
    s3fs_close(fs);
    /* the differing sizes alone: nothing opened at all */
    fs = open_folder();
    opens = folder_view_test_package_opens();
    for (int i = 0; i < OPEN_KEYS; i++) {
        char p[256];
        snprintf(p, sizeof p, "conflicts/S4_0333406C_00000000_%016llX%%%%+_XML.xml/identical",
                 0x6600000000000000ull + (unsigned long long)i);
        expect_text(fs, p, "no\n");
    }
    assert_int_equal(folder_view_test_package_opens() - opens, 0);
    s3fs_close(fs);
    free(same);
    for (int p = 0; p < 3; p++)
        free(bytes[p]);
    remove_folder();
}

/* The fixture folder and, in big/, BIG_NPKG packages of fxf_write_big (10 entries each,
 * the first of each shared by four neighbouring packages: BIG_NPKG / 4 conflicts more),
 * enough for every worker of a scan to read several claims of packages. */
#define BIG_NPKG 200u
static void make_bigger_folder(void)
{
    make_folder(true);
    char big[128];
    snprintf(big, sizeof big, "%s/big", dir);
    assert_int_equal(mkdir(big, 0755), 0);
    assert_int_equal(fxf_write_big(big, BIG_NPKG, BIG_NPKG * 10), 0);
}

/* The loaded packages (from /load-order) whose size another loaded package has. */
static unsigned packages_sharing_a_size(struct s3fs *fs)
{
    char *order = read_path(fs, "load-order", NULL);
    off_t size[1024];
    unsigned n = 0, sharing = 0;
    for (char *line = strtok(order, "\n"); line; line = strtok(NULL, "\n")) {
        char *tab = strchr(line, '\t'), path[512];
        struct stat st;
        if (line[0] == '-' || !tab) /* a script archive */
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, tab + 1);
        assert_int_equal(stat(path, &st), 0);
        assert_true(n < 1024);
        size[n++] = st.st_size;
    }
    free(order);
    for (unsigned i = 0; i < n; i++)
        for (unsigned j = 0; j < n; j++)
            if (i != j && size[i] == size[j]) {
                sharing++;
                break;
            }
    return sharing;
}

/* Stat of every file of the root (`ls -l /`) reads whole only the packages that size,
 * index and their first and last 4 KiB cannot tell from another: in the fixture and 200
 * packages of distinct keys, most of them sharing a size, that is a.package and its copy
 * (the fixture's one pair of equal bytes), read once; /info's identical_packages is then
 * exact, 2. Counted by folder_view_test_hashed. */
static void test_info_hashes_nothing(void **state)
{
    (void)state;
    make_bigger_folder();
    struct s3fs *fs = open_folder();
    uint64_t peeked0, peeked, hashed0 = folder_view_test_hashed(&peeked0);
    assert_int_equal(tree_populate(fs->tree, TREE_ROOT), 0);
    for (uint32_t i = 0; i < tree_child_count(fs->tree, TREE_ROOT); i++)
        (void)tree_size(fs->tree, tree_child(fs->tree, TREE_ROOT, i));
    assert_int_equal(folder_view_test_hashed(&peeked) - hashed0, 2);
    assert_int_equal(peeked - peeked0, 2); /* no other package has the index of another */
    expect_has(fs, "info", "identical_packages: 2\n");
    free(read_path(fs, "duplicates.csv", NULL));
    assert_int_equal(folder_view_test_hashed(&peeked) - hashed0, 2); /* once */
    assert_true(packages_sharing_a_size(fs) >= 100); /* what hashing by size alone read */
    s3fs_close(fs);
    remove_folder();
}

/* identical_packages and duplicates.csv exact however packages resemble each other (no
 * Resource.cfg: every package loaded), each pair of one size: p1/p2 equal bytes; q1/q2 the
 * same key, its bytes differing at their start (told apart by their first 4 KiB: not read
 * whole); r1/r2 the same key, differing only in their middle (read whole: only then told
 * apart); s1/s2 another key each (told apart by the index: not read at all). */
#define EXACT_LEN 20000u
static void write_one_key(const char *name, uint64_t instance, const uint8_t *data)
{
    struct fxp_res r = {0x0333406C, 0, instance, data, EXACT_LEN, FXP_STORED};
    struct fxp_opts o = {.game = 4};
    struct fxp_layout lay;
    size_t n;
    uint8_t *pkg = fxp_build(&o, &r, 1, &n, &lay);
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    write_bytes(path, pkg, n);
    free(pkg);
}

static void test_identical_packages_exact(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/s3rig-folder-XXXXXX");
    assert_non_null(mkdtemp(dir));
    uint8_t *a = fxp_pattern(EXACT_LEN, 1), *b = fxp_pattern(EXACT_LEN, 1);
    write_one_key("p1.package", 1, a);
    write_one_key("p2.package", 1, a);
    b[100] ^= 1;
    write_one_key("q1.package", 2, a);
    write_one_key("q2.package", 2, b);
    b[100] ^= 1;
    b[EXACT_LEN / 2] ^= 1;
    write_one_key("r1.package", 3, a);
    write_one_key("r2.package", 3, b);
    write_one_key("s1.package", 4, a);
    write_one_key("s2.package", 5, a);
    struct s3fs *fs = open_folder();
    uint64_t peeked0, peeked, hashed0 = folder_view_test_hashed(&peeked0);
    expect_has(fs, "info", "identical_packages: 2\n");
    assert_int_equal(folder_view_test_hashed(&peeked) - hashed0, 4); /* p and r */
    assert_int_equal(peeked - peeked0, 6);                            /* p, q and r */
    char path[256], want[256], *p = want;
    snprintf(path, sizeof path, "%s/p1.package", dir);
    size_t n;
    uint8_t *bytes = slurp_path(path, &n), sum[SHA256_DIGEST_SIZE];
    struct sha256_ctx c;
    sha256_init(&c);
    sha256_update(&c, n, bytes);
    sha256_digest(&c, sizeof sum, sum);
    free(bytes);
    p += sprintf(p, "sha256,size,paths\n");
    for (size_t i = 0; i < sizeof sum; i++)
        p += sprintf(p, "%02x", sum[i]);
    sprintf(p, ",%zu,p1.package,p2.package\n", n);
    expect_text(fs, "duplicates.csv", want);
    free(a);
    free(b);
    s3fs_close(fs);
    remove_folder();
}

/* The scan reads packages with a pool of workers whose results are merged in load order:
 * 1, 2, 3 and 8 workers make the same tree, entry for entry (every package's tree, the
 * keys, conflicts, /info), and it holds what the builders wrote. */
static void test_scan_workers_same_tree(void **state)
{
    (void)state;
    make_bigger_folder();
    static const unsigned workers[] = {1, 2, 3, 8};
    struct snap first = {0};
    for (size_t i = 0; i < sizeof workers / sizeof workers[0]; i++) {
        folder_view_test_scan(workers[i], 0);
        struct s3fs *fs = open_folder();
        char want[64];
        snprintf(want, sizeof want, "packages: %u\n", 7 + BIG_NPKG);
        expect_has(fs, "info", want);
        snprintf(want, sizeof want, "conflicts: %u\n", 3 + BIG_NPKG / 4);
        expect_has(fs, "info", want);
        struct snap s = {0};
        snap_tree(&s, fs->tree, TREE_ROOT);
        if (i == 0)
            first = s;
        else
            snap_assert_equal(&first, &s);
        if (i)
            snap_free(&s);
        s3fs_close(fs);
    }
    folder_view_test_scan(0, 0);
    snap_free(&first);
    remove_folder();
}

/* A scan whose k-th allocation reading packages is refused (in whichever worker makes
 * it, or in the merge) fails the root's listing with NOMEM, and the next listing scans
 * again and lists the folder whole (a refusal is not kept); one that never reaches the
 * refusal lists the folder whole. One worker: every k up to the count of a clean scan
 * fails. Four: the count varies with who read what, so each run counts its own and
 * fails exactly when it reached k. */
static void test_scan_refused_allocation(void **state)
{
    (void)state;
    make_bigger_folder();
    static const unsigned workers[] = {1, 4};
    for (size_t w = 0; w < sizeof workers / sizeof workers[0]; w++) {
        folder_view_test_scan(workers[w], 0);
        uint64_t before = folder_view_test_scan_allocs();
        struct s3fs *fs = open_folder();
        assert_int_equal(tree_populate(fs->tree, TREE_ROOT), S3_OK);
        uint64_t n = folder_view_test_scan_allocs() - before;
        size_t clean_len;
        char *clean = read_path(fs, "load-order", &clean_len);
        s3fs_close(fs);
        assert_true(n >= 3); /* the workers, a worker's records and the merge's */
        unsigned failed = 0;
        for (uint64_t k = 1; k <= n + 1; k++) {
            folder_view_test_scan(workers[w], k);
            before = folder_view_test_scan_allocs();
            fs = open_folder();
            enum s3_err rc = tree_populate(fs->tree, TREE_ROOT);
            uint64_t made = folder_view_test_scan_allocs() - before;
            if (made >= k) {
                if (rc != S3_ERR_NOMEM)
                    fail_msg("%u workers, allocation %llu refused: %s, not NOMEM", workers[w],
                             (unsigned long long)k, s3_err_str(rc));
                failed++;
                /* the refusal is kept by nothing: the next listing scans again, whole */
                rc = tree_populate(fs->tree, TREE_ROOT);
                if (rc != S3_OK)
                    fail_msg("%u workers, allocation %llu refused: the listing after it failed too (%s)",
                             workers[w], (unsigned long long)k, s3_err_str(rc));
            }
            if (rc == S3_OK) {
                size_t len;
                char *order = read_path(fs, "load-order", &len);
                assert_int_equal(len, clean_len);
                assert_memory_equal(order, clean, len);
                free(order);
            }
            if (workers[w] == 1)
                assert_int_equal(made >= k, k <= n);
            s3fs_close(fs);
        }
        assert_true(failed >= 1);
        free(clean);
    }
    folder_view_test_scan(0, 0);
    remove_folder();
}

/* A folder whose only package has an empty index (a DBPF 2.1 header, no entries): it is
 * loaded with no resources; no key, no conflict, and the tree walks whole. The scan then
 * has no record at all to copy (the fuzzer found the copy reading from no list). */
static void test_package_without_entries(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/s3rig-folder-XXXXXX");
    assert_non_null(mkdtemp(dir));
    struct fxp_opts o = {.game = 4};
    struct fxp_layout lay;
    size_t size;
    uint8_t *pkg = fxp_build(&o, NULL, 0, &size, &lay);
    assert_non_null(pkg);
    char path[128];
    snprintf(path, sizeof path, "%s/none.package", dir);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(pkg, 1, size, f), size);
    assert_int_equal(fclose(f), 0);
    free(pkg);
    struct s3fs *fs = open_folder();
    expect_has(fs, "info", "packages: 1\n");
    expect_has(fs, "info", "resources: 0\n");
    expect_has(fs, "info", "keys: 0\n");
    expect_text(fs, "load-order", "0\tnone.package\n");
    walk_all(fs, 1000);
    s3fs_close(fs);
    remove_folder();
}

/* 100,000 files in one folder: each a line in /skipped, the mount fine. */
static void test_many_files(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/s3rig-folder-XXXXXX");
    assert_non_null(mkdtemp(dir));
    int dfd = open(dir, O_RDONLY | O_DIRECTORY);
    assert_true(dfd >= 0);
    for (int i = 0; i < 100000; i++) {
        char name[32];
        snprintf(name, sizeof name, "note%06d.txt", i);
        int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL, 0644);
        assert_true(fd >= 0);
        close(fd);
    }
    close(dfd);
    struct s3fs *fs = open_folder();
    expect_has(fs, "info", "skipped: 100000\n");
    size_t n;
    char *text = read_path(fs, "skipped", &n);
    size_t lines = 0;
    for (size_t i = 0; i < n; i++)
        lines += text[i] == '\n';
    assert_int_equal(lines, 100000);
    assert_non_null(strstr(text, "note000000.txt\tnot a package"));
    assert_true(strstr(text, "note000000.txt") < strstr(text, "note099999.txt")); /* in listing order */
    free(text);
    s3fs_close(fs);
    remove_folder();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_load_order_and_skipped),
        cmocka_unit_test(test_info),
        cmocka_unit_test(test_info_hashes_nothing),
        cmocka_unit_test(test_keys),
        cmocka_unit_test(test_conflicts),
        cmocka_unit_test(test_conflicts_lazy),
        cmocka_unit_test(test_identical_without_trees),
        cmocka_unit_test(test_conflicts_csv_opens),
        cmocka_unit_test(test_duplicates),
        cmocka_unit_test(test_identical_packages_exact),
        cmocka_unit_test(test_scripts),
        cmocka_unit_test(test_walk),
        cmocka_unit_test(test_package_tree_same_as_alone),
        cmocka_unit_test(test_no_cfg),
        cmocka_unit_test(test_changed_after_scan),
        cmocka_unit_test(test_many_files),
        cmocka_unit_test(test_package_without_entries),
        cmocka_unit_test(test_scan_workers_same_tree),
        cmocka_unit_test(test_scan_refused_allocation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
