/* The Mods folder's rules (parse/sims/modfolder.h), with expected values from the rules as
 * issue 33 states them: Resource.cfg's sections and globs, Windows' listing order
 * (upper-cased, UTF-16 code units, depth-first with files and folders together), the
 * depth limits, and the provider in effect (highest priority, ties to the one loaded
 * last). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "parse/sims/modfolder.h"

static void test_utf8_valid(void **state)
{
    (void)state;
    assert_true(mf_utf8_valid("plain.package", 13));
    assert_true(mf_utf8_valid("\xC3\xA9t\xC3\xA9", 6));      /* été */
    assert_true(mf_utf8_valid("\xF0\x9F\x98\x80", 4));       /* U+1F600 */
    assert_false(mf_utf8_valid("\xE9t\xE9", 3));             /* Latin-1 bytes */
    assert_false(mf_utf8_valid("\xC0\xAF", 2));              /* overlong '/' */
    assert_false(mf_utf8_valid("\xED\xA0\x80", 3));          /* a surrogate */
    assert_false(mf_utf8_valid("\xF4\x90\x80\x80", 4));      /* past U+10FFFF */
    assert_false(mf_utf8_valid("\xE2\x82", 2));              /* cut short */
}

static void test_upper(void **state)
{
    (void)state;
    assert_int_equal(mf_upper('a'), 'A');
    assert_int_equal(mf_upper('_'), '_');
    assert_int_equal(mf_upper(0xE9), 0xC9);   /* é -> É */
    assert_int_equal(mf_upper(0xF7), 0xF7);   /* ÷ stays */
    assert_int_equal(mf_upper(0xFF), 0x178);  /* ÿ -> Ÿ */
    assert_int_equal(mf_upper(0x101), 0x100); /* ā -> Ā */
    assert_int_equal(mf_upper(0x142), 0x141); /* ł -> Ł (odd upper run) */
    assert_int_equal(mf_upper(0x3C2), 0x3A3); /* ς -> Σ */
    assert_int_equal(mf_upper(0x436), 0x416); /* ж -> Ж */
    assert_int_equal(mf_upper(0x451), 0x401); /* ё -> Ё */
    assert_int_equal(mf_upper(0xFF41), 0xFF21);
}

static void test_name_order(void **state)
{
    (void)state;
    /* '_' (0x5F) sorts after 'Z' (0x5A) once upper-cased; lower-casing ('z' 0x7A) would
     * put it before */
    assert_true(mf_name_cmp("_x", "Zx") > 0);
    assert_true(mf_name_cmp("zx", "_x") < 0);
    assert_true(mf_name_cmp("abc", "ABD") < 0);
    assert_true(mf_name_cmp("a", "a.package") < 0);
    /* É (0xC9) after F; Ÿ (0x178) after Z */
    assert_true(mf_name_cmp("\xC3\xA9", "f") > 0);
    assert_true(mf_name_cmp("\xC3\xBF", "z") > 0);
    /* U+1F600 is the surrogates D83D DE00: before U+FF21 by code unit (after it by code
     * point) */
    assert_true(mf_name_cmp("\xF0\x9F\x98\x80", "\xEF\xBC\xA1") < 0);
    /* names equal when upper-cased are still ordered, by their bytes */
    assert_true(mf_name_cmp("A.package", "a.package") < 0);
    assert_int_equal(mf_name_cmp("same", "same"), 0);
}

/* The order written out (modfolder.h): upper-cased UTF-16 units (names of characters
 * below U+10000 here: a unit is a code point), then bytes. For test_name_order_ascii. */
static int ref_name_cmp(const char *a, const char *b)
{
    const unsigned char *x = (const unsigned char *)a, *y = (const unsigned char *)b;
    for (;;) {
        int32_t p = -1, q = -1;
        if (*x) {
            p = *x < 0x80 ? *x++ : (x[0] & 0x1F) << 6 | (x[1] & 0x3F);
            if (p >= 0x80)
                x += 2;
            p = (int32_t)mf_upper((uint32_t)p);
        }
        if (*y) {
            q = *y < 0x80 ? *y++ : (y[0] & 0x1F) << 6 | (y[1] & 0x3F);
            if (q >= 0x80)
                y += 2;
            q = (int32_t)mf_upper((uint32_t)q);
        }
        if (p != q)
            return p < q ? -1 : 1;
        if (p < 0)
            break;
    }
    int c = strcmp(a, b);
    return c < 0 ? -1 : c > 0;
}

/* Every pair of names, ASCII ones (compared without decoding) and ones that leave ASCII
 * after a common prefix, ordered as the reference orders them. */
static void test_name_order_ascii(void **state)
{
    (void)state;
    static const char *const names[] = {"", "a", "A", "b", "Z", "z", "_", "_a", "a_", "aZ", "az", "a.package",
                                        "A.package", "ab", "abc", "ABD", "a\xC3\xA9", "A\xC3\x89", "a\xC3\xBF",
                                        "\xC3\xA9", "f", "F", "ab\xC3\xA9x", "abZ", "ab~", "ab@", "0", "9a",
                                        "mod.package", "Mod.package", "mod2.package", "mod_2.package"};
    size_t n = sizeof names / sizeof *names;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            int got = mf_name_cmp(names[i], names[j]), want = ref_name_cmp(names[i], names[j]);
            got = got < 0 ? -1 : got > 0;
            if (got != want)
                fail_msg("mf_name_cmp(\"%s\", \"%s\") = %d, want %d", names[i], names[j], got, want);
        }
}

static int path_cmp_qsort(const void *a, const void *b)
{
    return mf_path_cmp(*(const char *const *)a, *(const char *const *)b);
}

static void test_load_order(void **state)
{
    (void)state;
    const char *paths[] = {"b.package", "a/z.package", "a/B/c.package", "_x.package", "Zx.package",
                           "a.package", "a/a.package"};
    /* depth-first; folder a's files and its subfolder B listed together: a.package < B <
     * z.package; the folder "a" before the file "a.package" (a shorter name first) */
    const char *want[] = {"a/a.package", "a/B/c.package", "a/z.package", "a.package", "b.package",
                          "Zx.package", "_x.package"};
    size_t n = sizeof paths / sizeof paths[0];
    qsort(paths, n, sizeof paths[0], path_cmp_qsort);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(paths[i], want[i]);
}

static void test_depths(void **state)
{
    (void)state;
    assert_int_equal(mf_depth("a.package"), 0);
    assert_int_equal(mf_depth("a/b/c.package"), 2);
    assert_true(mf_script_depth_ok("s.ts4script"));
    assert_true(mf_script_depth_ok("mod/s.ts4script"));
    assert_false(mf_script_depth_ok("mod/sub/s.ts4script"));
}

static void test_glob(void **state)
{
    (void)state;
    assert_true(mf_glob_match("*.package", "x.package"));
    assert_false(mf_glob_match("*.package", "d/x.package")); /* '*' stays in one component */
    assert_true(mf_glob_match("*/*.package", "d/x.package"));
    assert_false(mf_glob_match("*/*.package", "x.package"));
    assert_true(mf_glob_match("Override/*.package", "override/X.PACKAGE")); /* either case */
    assert_true(mf_glob_match("Override\\*.package", "Override/x.package")); /* '\' is '/' */
    assert_true(mf_glob_match("a*c.package", "abbc.package"));
    assert_false(mf_glob_match("a*c.package", "abbd.package"));
    assert_true(mf_glob_match("*", "anything"));
    assert_false(mf_glob_match("*.package", "x.ts4script"));
    assert_true(mf_glob_match("*a*a*a*b", "aaaaaaaaaaaaaaaaab"));
    assert_false(mf_glob_match("*a*a*a*b", "aaaaaaaaaaaaaaaaaa"));
}

/* The Resource.cfg the game ships (as the issue describes it), plus lines the project
 * does not apply. */
static const char game_cfg[] = "Priority 500\r\n"
                               "PackedFile *.package\r\n"
                               "PackedFile */*.package\r\n"
                               "PackedFile */*/*.package\r\n"
                               "PackedFile */*/*/*.package\r\n"
                               "PackedFile */*/*/*/*.package\r\n"
                               "PackedFile */*/*/*/*/*.package\r\n"
                               "\r\n"
                               "# the override folder\r\n"
                               "Priority 600\r\n"
                               "PackedFile Override/*.package\r\n"
                               "DirectoryFiles Override autoupdate\r\n"
                               "Frobnicate yes\r\n"
                               "Priority high\r\n";

static void test_rules(void **state)
{
    (void)state;
    struct mf_rules r;
    assert_int_equal(mf_rules_parse(game_cfg, sizeof game_cfg - 1, &r), S3_OK);
    assert_int_equal(r.nglobs, 7);
    assert_string_equal(r.globs[0].pattern, "*.package");
    assert_int_equal(r.globs[0].priority, 500);
    assert_int_equal(r.globs[0].line, 2);
    assert_string_equal(r.globs[6].pattern, "Override/*.package");
    assert_int_equal(r.globs[6].priority, 600);
    assert_int_equal(r.nunapplied, 3);
    assert_non_null(strstr(r.unapplied[0], "line 12: DirectoryFiles Override autoupdate"));
    assert_non_null(strstr(r.unapplied[1], "line 13: Frobnicate yes"));
    assert_non_null(strstr(r.unapplied[2], "line 14: Priority high"));
    assert_int_equal(mf_rules_max_depth(&r), 5);

    uint64_t hits[7] = {0};
    int32_t p = 0;
    assert_true(mf_rules_match(&r, "top.package", &p, hits));
    assert_int_equal(p, 500);
    /* matched by the two-component glob (500) and the Override one (600): the highest */
    assert_true(mf_rules_match(&r, "Override/x.package", &p, hits));
    assert_int_equal(p, 600);
    assert_true(mf_rules_match(&r, "a/b/c/d/e/five.package", &p, hits));
    assert_int_equal(p, 500);
    assert_false(mf_rules_match(&r, "a/b/c/d/e/f/six.package", &p, hits));
    assert_false(mf_rules_match(&r, "script.ts4script", &p, hits));
    assert_int_equal(hits[0], 1);
    assert_int_equal(hits[1], 1);
    assert_int_equal(hits[5], 1);
    assert_int_equal(hits[6], 1);
    assert_int_equal(hits[2], 0);
    mf_rules_free(&r);

    /* a glob before any Priority line is at priority 0; a BOM is not part of the line */
    static const char bare[] = "\xEF\xBB\xBFPackedFile x/*.package\nPriority -5\nPackedFile *.package\n";
    assert_int_equal(mf_rules_parse(bare, sizeof bare - 1, &r), S3_OK);
    assert_int_equal(r.nglobs, 2);
    assert_int_equal(r.globs[0].priority, 0);
    assert_int_equal(r.globs[1].priority, -5);
    assert_int_equal(r.nunapplied, 0);
    mf_rules_free(&r);
}

static void test_sniff(void **state)
{
    (void)state;
    static const char lfs[] = "version https://git-lfs.github.com/spec/v1\noid sha256:00\nsize 12\n";
    assert_int_equal(mf_sniff(NULL, 0, 0), MF_EMPTY);
    assert_int_equal(mf_sniff((const uint8_t *)lfs, sizeof lfs - 1, sizeof lfs - 1), MF_LFS);
    assert_int_equal(mf_sniff((const uint8_t *)"DBPF\2\0\0\0", 8, 96), MF_DBPF);
    assert_int_equal(mf_sniff((const uint8_t *)"PK\3\4", 4, 4), MF_OTHER);
}

#define K(t, i) (t), 0, (i)
static void test_keys_and_winner(void **state)
{
    (void)state;
    /* files in load order 0..3, each's entries in order; file 1 is an Override package (600) */
    const int32_t prio[] = {500, 600, 500, 500};
    struct mf_rec recs[] = {
        {K(0x10, 1), 0, 0, 0, 0}, {K(0x10, 2), 0, 1, 0, 0}, {K(0x20, 9), 0, 5, 0, 0}, {K(0x10, 1), 1, 0, 0, 0},
        {K(0x10, 1), 2, 0, 0, 0}, {K(0x20, 9), 2, 1, 0, 0},
        {K(0x10, 1), 2, 3, 1, 0}, /* the same key again in file 2: its later entry stands */
        {K(0x10, 2), 3, 0, 0, 0},
    };
    size_t n = sizeof recs / sizeof recs[0];
    struct mf_keyset ks;
    assert_int_equal(mf_keyset_build(recs, n, prio, &ks), S3_OK);
    assert_int_equal(ks.nkeys, 3);
    /* key (0x10,0,1): files 0, 1, 2 in load order; file 1's 600 beats the later 500s */
    assert_int_equal(mf_keyset_n(&ks, 0), 3);
    assert_int_equal(recs[mf_keyset_rec(&ks, 0, 0)].file, 0);
    assert_int_equal(recs[mf_keyset_rec(&ks, 0, 1)].file, 1);
    assert_int_equal(recs[mf_keyset_rec(&ks, 0, 2)].file, 2);
    assert_int_equal(recs[mf_keyset_rec(&ks, 0, 2)].size, 3);
    assert_int_equal(recs[mf_keyset_rec(&ks, 0, 2)].dup, 1);
    assert_int_equal(mf_keyset_winner(&ks, 0), 1);
    /* key (0x10,0,2): files 0 and 3 at 500: the one loaded last */
    assert_int_equal(mf_keyset_n(&ks, 1), 2);
    assert_int_equal(recs[mf_keyset_rec(&ks, 1, mf_keyset_winner(&ks, 1))].file, 3);
    /* key (0x20,0,9): files 0 and 2 */
    assert_int_equal(mf_keyset_n(&ks, 2), 2);
    assert_int_equal(recs[mf_keyset_rec(&ks, 2, 0)].file, 0);
    assert_int_equal(recs[mf_keyset_rec(&ks, 2, mf_keyset_winner(&ks, 2))].file, 2);
    /* found by type, group and instance; others not */
    uint32_t k;
    assert_true(mf_keyset_find(&ks, 0x20, 0, 9, &k));
    assert_int_equal(k, 2);
    assert_true(mf_keyset_find(&ks, 0x10, 0, 1, &k));
    assert_int_equal(k, 0);
    assert_false(mf_keyset_find(&ks, 0x20, 1, 9, &k));
    assert_false(mf_keyset_find(&ks, 0x10, 0, 3, &k));
    mf_keyset_free(&ks);

    assert_int_equal(mf_keyset_build(recs, 0, prio, &ks), S3_OK);
    assert_int_equal(ks.nkeys, 0);
    assert_false(mf_keyset_find(&ks, 0x10, 0, 1, &k));
    mf_keyset_free(&ks);
}


/* Key k of the three-provider fixtures: instance i is provided by files i%7, +1 and +3 in
 * that order, all of priority 0, so the last (the third) wins, and a lookup finds k. */
static void check_three_providers(const struct mf_keyset *ks, const struct mf_rec *recs, uint32_t k)
{
    const struct mf_rec *p0 = &recs[mf_keyset_rec(ks, k, 0)], *p1 = &recs[mf_keyset_rec(ks, k, 1)],
                        *p2 = &recs[mf_keyset_rec(ks, k, 2)];
    uint32_t base = (uint32_t)(p0->instance >> 40) % 7;
    assert_int_equal(mf_keyset_n(ks, k), 3);
    assert_int_equal(p0->file, base);
    assert_int_equal(p1->file, base + 1);
    assert_int_equal(p2->file, base + 3);
    assert_int_equal(mf_keyset_winner(ks, k), 2);
    assert_true(p0->instance == p1->instance && p1->instance == p2->instance);
    uint32_t found;
    assert_true(mf_keyset_find(ks, p0->type, p0->group, p0->instance, &found));
    assert_int_equal(found, k);
}
/* 3,000 keys, each in three of ten packages, given in load order: every key found once
 * (hashing), its providers in load order, ties to the one loaded last; and one key
 * repeated 100,000 times in one package is one key of one provider, the last record. */
static void test_keys_many(void **state)
{
    (void)state;
    enum { N = 3000, R = 100000 };
    static int32_t prio[10];
    struct mf_rec *recs = malloc((3 * N + R) * sizeof *recs);
    size_t n = 0;
    for (uint32_t file = 0; file < 10; file++)
        for (int i = 0; i < N; i++) {
            uint32_t base = (uint32_t)(i % 7);
            if (file == base || file == base + 1 || file == base + 3)
                recs[n++] = (struct mf_rec){(uint32_t)i % 5, (uint32_t)i % 3, (uint64_t)i << 40, file, (uint32_t)i, 0, 0};
        }
    assert_int_equal(n, 3 * N);
    struct mf_keyset ks;
    assert_int_equal(mf_keyset_build(recs, n, prio, &ks), S3_OK);
    assert_int_equal(ks.nkeys, N);
    for (uint32_t k = 0; k < ks.nkeys; k++) {
        check_three_providers(&ks, recs, k);
    }
    mf_keyset_free(&ks);
    for (uint32_t e = 0; e < R; e++)
        recs[e] = (struct mf_rec){7, 7, 7, 0, e, e, 0};
    assert_int_equal(mf_keyset_build(recs, R, prio, &ks), S3_OK);
    assert_int_equal(ks.nkeys, 1);
    assert_int_equal(mf_keyset_n(&ks, 0), 1);
    assert_int_equal(recs[mf_keyset_rec(&ks, 0, 0)].size, R - 1);
    assert_int_equal(recs[mf_keyset_rec(&ks, 0, 0)].dup, R - 1);
    mf_keyset_free(&ks);
    free(recs);
}

/* The key table built run by run (a folder scan's merge), from a guess of none, of far
 * too few and of far too many records: the same keys, providers and winners as the rules
 * give, keys numbered by first appearance, and a table of the size the keys need (the
 * smallest power of two at least twice their number) whatever the guess. */
static void test_keys_grown(void **state)
{
    (void)state;
    enum { N = 3000, FILES = 10 };
    static int32_t prio[FILES];
    struct mf_rec *recs = malloc(3 * N * sizeof *recs);
    struct mf_run runs[FILES];
    size_t n = 0, nruns = 0;
    for (uint32_t file = 0; file < FILES; file++) {
        runs[nruns] = (struct mf_run){(uint32_t)n, 0, file};
        for (int i = 0; i < N; i++) {
            uint32_t base = (uint32_t)(i % 7);
            if (file == base || file == base + 1 || file == base + 3)
                recs[n++] = (struct mf_rec){(uint32_t)i % 5, (uint32_t)i % 3, (uint64_t)i << 40, 99, (uint32_t)i, 0, 0};
        }
        runs[nruns].n = (uint32_t)n - runs[nruns].first;
        nruns += runs[nruns].n > 0;
    }
    const size_t guesses[] = {0, 1, 100, 100 * N};
    for (size_t g = 0; g < sizeof guesses / sizeof *guesses; g++) {
        struct mf_keyset ks;
        struct mf_keybuild b;
        assert_int_equal(mf_keybuild_begin(&b, &ks, guesses[g]), S3_OK);
        ks.recs = (struct mf_recs){{recs}};
        for (size_t r = 0; r < nruns; r++)
            assert_int_equal(mf_keybuild_add(&b, &runs[r], r + 1 < nruns ? &runs[r + 1] : NULL), S3_OK);
        assert_int_equal(mf_keybuild_finish(&b, prio), S3_OK);
        assert_int_equal(ks.nkeys, N);
        assert_int_equal(ks.cap, 8192);
        uint32_t prev = 0;
        for (uint32_t k = 0; k < ks.nkeys; k++) {
            uint32_t first = mf_keyset_rec(&ks, k, 0);
            assert_true(k == 0 || first > prev); /* numbered as they first appear */
            prev = first;
            check_three_providers(&ks, recs, k);
        }
        uint32_t none;
        assert_false(mf_keyset_find(&ks, 0, 0, 1, &none));
        mf_keyset_free(&ks);
    }
    free(recs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_utf8_valid),   cmocka_unit_test(test_upper),
        cmocka_unit_test(test_name_order), cmocka_unit_test(test_name_order_ascii), cmocka_unit_test(test_load_order),
        cmocka_unit_test(test_depths),       cmocka_unit_test(test_glob),
        cmocka_unit_test(test_rules),        cmocka_unit_test(test_sniff),
        cmocka_unit_test(test_keys_and_winner), cmocka_unit_test(test_keys_many),
        cmocka_unit_test(test_keys_grown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
