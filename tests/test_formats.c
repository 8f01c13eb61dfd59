/* The format table (src/formats.def) and everything made from it agree: the parse layer's
 * rows, the reading scripts/formats.sh gives meson and the scripts, every seed kind (made
 * in-process, as s3rig-mkfixture makes it) detected and opened as its row, the refusal
 * message and the man pages (s3rig(5) names every format: line; mount.s3rig(8) lists
 * exactly the table's formats, in order). S3RIG_SOURCE: the project's source folder. */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fixture_kinds.h"
#include "fs/open/open.h"
#include "testutil.h"

/* The table as text, every column the scripts read, straight from the rows. */
static const struct {
    const char *id, *name, *code, *noun, *pkg_type, *pkg_dir, *cut, *seeds, *usage;
    size_t cut_value, prefix_len;
} rows[] = {
#define FORMAT(id, name, code, noun, pkg_type, pkg_dir, cut, prefix, seeds, usage) \
    {#id, name, #code, noun, #pkg_type, pkg_dir, #cut, seeds, usage, cut, sizeof(prefix) - 1},
#include "formats.def"
#undef FORMAT
};
#define NROWS (sizeof rows / sizeof rows[0])

static const char *source_dir(void)
{
    const char *s = getenv("S3RIG_SOURCE");
    if (!s)
        fail_msg("S3RIG_SOURCE is not set (tests/meson.build sets it)");
    return s;
}

/* The parse layer's table is the rows, in order, after FMT_UNKNOWN. */
static void test_parse_table(void **state)
{
    (void)state;
    assert_int_equal(FMT_COUNT, NROWS + 1);
    for (size_t i = 0; i < NROWS; i++) {
        const struct s3_format_info *f = &s3_formats[i + 1];
        assert_string_equal(f->name, rows[i].name);
        assert_string_equal(f->code, rows[i].code);
        assert_string_equal(format_name((enum s3_format)(i + 1)), rows[i].name);
        assert_int_equal(f->fuzz_cut, rows[i].cut_value);
        assert_int_equal(rows[i].prefix_len, rows[i].cut_value); /* fuzz_cut is the prefix's length */
        assert_non_null(f->detect);
        for (size_t k = 0; k < i; k++) /* one spelling each */
            assert_true(strcmp(rows[k].code, rows[i].code) != 0 && strcmp(rows[k].name, rows[i].name) != 0);
    }
}

/* scripts/formats.sh reads the rows as the compiler does. */
static void test_script_reading(void **state)
{
    (void)state;
    char cmd[600], line[2048];
    snprintf(cmd, sizeof cmd, "%s/scripts/formats.sh rows", source_dir());
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = 0;
    while (fgets(line, sizeof line, p)) {
        line[strcspn(line, "\n")] = 0;
        char want[2048];
        assert_true(n < NROWS);
        snprintf(want, sizeof want, "%s|%s|%s|%s|%s|%s|%s|%s|%s", rows[n].id, rows[n].name, rows[n].code,
                 rows[n].noun, rows[n].pkg_type, rows[n].pkg_dir, rows[n].cut, rows[n].seeds, rows[n].usage);
        assert_string_equal(line, want);
        n++;
    }
    assert_int_equal(pclose(p), 0);
    assert_int_equal(n, NROWS);
}

/* Every seed kind is a file of its row's format: detected as it, opened by its view. */
static void test_seeds_are_their_format(void **state)
{
    (void)state;
    for (size_t i = 0; i < NROWS; i++) {
        char seeds[1024];
        snprintf(seeds, sizeof seeds, "%s", rows[i].seeds);
        size_t nseeds = 0;
        for (char *save = NULL, *w = strtok_r(seeds, " ", &save); w; w = strtok_r(NULL, " ", &save), nseeds++) {
            char *args[8];
            int nargs = 0;
            for (char *c = strchr(w, ':'); c && nargs < 8; c = strchr(c + 1, ':')) {
                *c = 0;
                args[nargs++] = c + 1;
            }
            size_t size;
            uint8_t *f = fx_kind(w, nargs, args, &size);
            if (!f)
                fail_msg("%s: seed kind %s is not made", rows[i].code, w);
            struct s3fs *fs = open_mem(f, size, NULL, w);
            if (fs->det.format != (enum s3_format)(i + 1))
                fail_msg("seed %s of %s is detected as %s", w, rows[i].name, format_name(fs->det.format));
            char want[80];
            snprintf(want, sizeof want, "format: %s\n", rows[i].name);
            expect_has(fs, "/info", want);
            s3fs_close(fs);
            free(f);
        }
        if (nseeds == 0)
            fail_msg("%s has no seeds", rows[i].code);
    }
}

/* An unrecognised file is refused naming every noun once. */
static void test_refusal_names_formats(void **state)
{
    (void)state;
    struct s3fs *fs;
    char err[400];
    assert_open_refused(s3fs_open_mem(&fs, "neither of them", 15, NULL, err, sizeof err), S3_ERR_FORMAT, S3_EXIT_FORMAT);
    for (size_t i = 0; i < NROWS; i++)
        if (!strstr(err, rows[i].noun))
            fail_msg("'%s' does not name %s", err, rows[i].noun);
    char list[400];
    format_list(list, sizeof list, offsetof(struct s3_format_info, noun));
    assert_non_null(strstr(err, list));
    assert_null(strstr(list, "RIG, RIG")); /* each said once */
}

static char *slurp_source(const char *rel)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", source_dir(), rel);
    size_t len;
    return (char *)slurp_path(path, &len); /* NUL-terminated */
}

/* True when text holds word as a whole word (not followed by a letter, digit, - or _). */
static bool has_word(const char *text, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = strstr(text, word); p; p = strstr(p + 1, word)) {
        char c = p[n];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_'))
            return true;
    }
    return false;
}

/* s3rig(5) says, for every format, the format: line of its /info. */
static void test_man_tree_layout(void **state)
{
    (void)state;
    char *man = slurp_source("man/s3rig.5");
    for (size_t i = 0; i < NROWS; i++) {
        char want[80];
        snprintf(want, sizeof want, "format: %s", rows[i].name);
        if (!has_word(man, want))
            fail_msg("man/s3rig.5 lacks \"%s\"", want);
    }
    free(man);
}

/* mount.s3rig(8)'s FORMATS section lists the table's formats (".TP" then ".B NAME"),
 * exactly and in the table's order. */
static void test_man_mount_formats(void **state)
{
    (void)state;
    char *man = slurp_source("man/mount.s3rig.8");
    char *sec = strstr(man, "\n.SH FORMATS\n");
    if (!sec)
        fail_msg("man/mount.s3rig.8 has no FORMATS section");
    sec += 1;
    char *end = strstr(sec + 1, "\n.SH ");
    if (end)
        *end = 0;
    size_t n = 0;
    for (char *p = strstr(sec, "\n.TP\n.B "); p; p = strstr(p + 1, "\n.TP\n.B ")) {
        char *name = p + 8;
        size_t len = strcspn(name, "\n");
        if (n >= NROWS || strlen(rows[n].name) != len || strncmp(name, rows[n].name, len) != 0)
            fail_msg("mount.s3rig.8 lists \"%.*s\" where the table has %s", (int)len, name,
                     n < NROWS ? rows[n].name : "no more formats");
        n++;
    }
    assert_int_equal(n, NROWS);
    free(man);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_table),
        cmocka_unit_test(test_script_reading),
        cmocka_unit_test(test_seeds_are_their_format),
        cmocka_unit_test(test_refusal_names_formats),
        cmocka_unit_test(test_man_tree_layout),
        cmocka_unit_test(test_man_mount_formats),
    };
    return cmocka_run_group_tests_name("formats", tests, NULL, NULL);
}
