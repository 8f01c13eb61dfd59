/* A new format is one row of the format table, its parser's detection and its view:
 * nothing else in src/ is edited. This program is the whole library compiled again with a
 * table of one more row (formats_dummy.def), whose detection (dummy_detect) and view
 * (dummy_view_open) are defined here, as a format's parser and view would define them. It
 * checks that the row is detected, opened, listed, refused by name and opened nested in a
 * package, and that the real rows still detect their seeds as before. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fixture_dbpf.h"
#include "fixture_kinds.h"
#include "fs/open/open.h"

/* The dummy format: "DUMMYFMT", then a little-endian u32 value (12 bytes at least). */
#define DUMMY_MAGIC "DUMMYFMT"
#define DUMMY_TYPE 0x0D0D0D0Du /* the row's pkg_type */

/* ---- the parser's part: its detection ---- */
s3_detect_fn dummy_detect;
bool dummy_detect(const struct s3_src *src, const uint8_t *head, size_t n, struct detect_result *r)
{
    (void)src, (void)r;
    return n >= 8 && memcmp(head, DUMMY_MAGIC, 8) == 0;
}

/* ---- the view's part: CODE_view_open ---- */
struct dummy_view {
    struct s3fs *fs;
    uint32_t value;
};

static enum s3_err populate_dummy_root(struct tree *t, uint32_t dir, void *ctx, uint64_t arg)
{
    (void)arg;
    struct dummy_view *v = ctx;
    add_info_and_unparsed(v->fs, dir);
    add_u32(t, dir, "value", v->value, 8);
    return S3_OK;
}

s3_view_open_fn dummy_view_open;
enum s3_err dummy_view_open(struct s3fs *fs, char *err, size_t errlen)
{
    uint8_t b[4];
    if (src_read(&fs->src.src, 8, b, 4) != 0)
        return s3_fail(S3_ERR_RANGE, err, errlen, "dummy: no value after the magic");
    struct dummy_view *v = tree_alloc(fs->tree, sizeof *v);
    if (!v)
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    v->fs = fs;
    v->value = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    cover_add(&fs->cover, 0, 12);
    return view_root(fs, "dummy.file", populate_dummy_root, v);
}

/* ---- the checks ---- */
static const uint8_t dummy_file[] = {'D', 'U', 'M', 'M', 'Y', 'F', 'M', 'T', 0x2a, 0x01, 0x00, 0x00};

static struct s3fs *open_bytes(const void *data, size_t size)
{
    struct s3fs *fs = NULL;
    struct s3fs_opts o = {0};
    char err[512] = "";
    int rc = s3fs_open_mem(&fs, data, size, &o, err, sizeof err);
    if (rc != S3_OK)
        fail_msg("open: %s", err);
    return fs;
}

static char *read_text(struct s3fs *fs, const char *path)
{
    uint32_t ino;
    if (tree_resolve(fs->tree, path, &ino) != 0)
        fail_msg("%s: missing", path);
    uint8_t *buf;
    size_t len;
    assert_int_equal(tree_read_all(fs->tree, ino, &buf, &len), 0);
    char *s = malloc(len + 1);
    assert_non_null(s);
    memcpy(s, buf, len);
    s[len] = 0;
    free(buf);
    return s;
}

/* The row is the table's last, after the seven real ones, with the columns it gives. */
static void test_row_in_table(void **state)
{
    (void)state;
    assert_int_equal(FMT_DUMMY, FMT_T2FS + 1);
    assert_int_equal(FMT_COUNT, FMT_DUMMY + 1);
    assert_string_equal(format_name(FMT_DUMMY), "dummy");
    assert_string_equal(s3_formats[FMT_DUMMY].code, "dummy");
    assert_ptr_equal(s3_formats[FMT_DUMMY].detect, dummy_detect);
    char usage[300];
    format_list(usage, sizeof usage, offsetof(struct s3_format_info, usage));
    assert_non_null(strstr(usage, " or Dummy")); /* the last of mount.s3rig's words */
}

/* A source whose every read fails, as a file that vanished under us. */
static enum s3_err failing_read(void *ctx, uint64_t off, void *buf, size_t len)
{
    (void)ctx, (void)off, (void)buf, (void)len;
    return S3_ERR_IO;
}

/* Detected by its row; a file of no format is refused with the row's noun among the
 * others; the real rows still detect their first seed as themselves. */
static void test_detection(void **state)
{
    (void)state;
    struct detect_result r;
    struct s3_src src;
    struct mem_src_ctx ctx;
    mem_src_init(&src, &ctx, dummy_file, sizeof dummy_file);
    assert_int_equal(detect_format(&src, &r), S3_OK);
    assert_int_equal(r.format, FMT_DUMMY);

    static const uint8_t junk[16] = "NOTHING KNOWN..";
    mem_src_init(&src, &ctx, junk, sizeof junk);
    assert_int_equal(detect_format(&src, &r), S3_ERR_FORMAT);
    assert_non_null(strstr(r.why, " or DUMMY file"));

    /* a source that fails its read: IO, not a format verdict */
    struct s3_src broken = {.read = failing_read, .ctx = NULL, .size = sizeof junk};
    assert_int_equal(detect_format(&broken, &r), S3_ERR_IO);
    assert_non_null(strstr(r.why, "cannot read"));

    for (int f = FMT_UNKNOWN + 1; f < FMT_DUMMY; f++) {
        char kind[64];
        size_t k = strcspn(s3_formats[f].seeds, " ");
        assert_true(k > 0 && k < sizeof kind);
        memcpy(kind, s3_formats[f].seeds, k);
        kind[k] = 0;
        size_t size;
        uint8_t *file = fx_kind(kind, 0, NULL, &size);
        assert_non_null(file);
        mem_src_init(&src, &ctx, file, size);
        assert_int_equal(detect_format(&src, &r), S3_OK);
        assert_int_equal(r.format, f);
        free(file);
    }
}

/* Opened by its view: the root holds what dummy_view_open made, /info says the format. */
static void test_open(void **state)
{
    (void)state;
    struct s3fs *fs = open_bytes(dummy_file, sizeof dummy_file);
    char *value = read_text(fs, "/value");
    assert_string_equal(value, "298\n"); /* 0x0000012a */
    char *info = read_text(fs, "/info");
    assert_non_null(strstr(info, "format: dummy\n"));
    free(value);
    free(info);
    s3fs_close(fs);
}

/* A view's refusal is the open's error, as for every row. */
static void test_refused(void **state)
{
    (void)state;
    struct s3fs *fs = NULL;
    struct s3fs_opts o = {0};
    char err[512] = "";
    enum s3_err e = s3fs_open_mem(&fs, dummy_file, 10, &o, err, sizeof err);
    assert_int_equal(e, S3_ERR_RANGE); /* the view's reason: its value is cut */
    assert_int_equal(s3_exit_of(e), S3_EXIT_FORMAT);
    assert_non_null(strstr(err, "dummy: no value after the magic"));
    s3fs_close(fs);
}

/* A package opens a resource of the row's pkg_type as a nested dummy/ directory. */
static void test_nested_in_package(void **state)
{
    (void)state;
    struct fxp_opts po = {.game = 4};
    struct fxp_res res = {.type = DUMMY_TYPE, .group = 0, .instance = 0x77, .data = dummy_file,
                          .len = sizeof dummy_file, .comp = FXP_STORED};
    size_t size;
    struct fxp_layout lay;
    uint8_t *pkg = fxp_build(&po, &res, 1, &size, &lay);
    assert_non_null(pkg);
    struct s3fs *fs = open_bytes(pkg, size);
    char name[256], path[400];
    fxp_expected_name(name, sizeof name, 4, &res, NULL, 0);
    snprintf(path, sizeof path, "/resources/%s/dummy/value", name);
    char *value = read_text(fs, path);
    assert_string_equal(value, "298\n");
    free(value);
    s3fs_close(fs);
    free(pkg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_row_in_table),
        cmocka_unit_test(test_detection),
        cmocka_unit_test(test_open),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_nested_in_package),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
