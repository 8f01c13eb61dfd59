/* The one option table (src/fs/open/options.c) shared by mount.s3rig and s3rig: every option
 * stores what it says, refuses values outside its range with a message naming the item,
 * s3rig refuses mount-only options by name, and both commands' help is made from it. */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "fs/open/options.h"

static int take(struct s3_options *o, unsigned scopes, const char *item, char *err, size_t errlen)
{
    err[0] = 0;
    return s3_option_take(o, scopes, item, err, errlen);
}

static void test_values_stored(void **state)
{
    (void)state;
    struct s3_options o = {0};
    char err[600];
    const unsigned both = OPT_SHARED | OPT_MOUNT;
    assert_int_equal(take(&o, both, "max_nodes=100", err, sizeof err), 1);
    assert_int_equal(o.fs.max_nodes, 100);
    assert_int_equal(take(&o, both, "max_nodes=4294967294", err, sizeof err), 1);
    assert_int_equal(o.fs.max_nodes, 4294967294u);
    assert_int_equal(take(&o, both, "cache_mb=3", err, sizeof err), 1);
    assert_int_equal(o.fs.cache_bytes, 3u << 20);
    assert_int_equal(take(&o, both, "max_unpacked_mb=2", err, sizeof err), 1);
    assert_int_equal(o.fs.max_unpacked, 2u << 20);
    assert_int_equal(take(&o, both, "rnc_key=0x1234", err, sizeof err), 1);
    assert_true(o.fs.has_rnc_key);
    assert_int_equal(o.fs.rnc_key, 0x1234);
    assert_int_equal(take(&o, both, "rnc_key=65535", err, sizeof err), 1);
    assert_int_equal(o.fs.rnc_key, 0xFFFF);
    assert_int_equal(take(&o, both, "schema=turok1", err, sizeof err), 1);
    assert_string_equal(o.fs.schema, "turok1");
    assert_int_equal(take(&o, both, "uid=1234", err, sizeof err), 1);
    assert_int_equal(o.uid, 1234);
    assert_int_equal(take(&o, both, "gid=4321", err, sizeof err), 1);
    assert_int_equal(o.gid, 4321);
    assert_int_equal(take(&o, both, "umask=027", err, sizeof err), 1);
    assert_int_equal(o.umask, 027);
    assert_int_equal(take(&o, both, "spin=0", err, sizeof err), 1);
    assert_int_equal(o.spin_us, 0);
    assert_int_equal(take(&o, both, "spin=1000000", err, sizeof err), 1);
    assert_int_equal(o.spin_us, 1000000);
    /* -o rw: a bare word (and its other name), and the backup switch */
    assert_false(o.rw);
    assert_int_equal(take(&o, both, "rw", err, sizeof err), 1);
    assert_true(o.rw);
    o.rw = false;
    assert_int_equal(take(&o, both, "writable", err, sizeof err), 1);
    assert_true(o.rw);
    assert_int_equal(take(&o, both, "backup=0", err, sizeof err), 1);
    assert_true(o.no_backup);
    assert_int_equal(take(&o, both, "backup=1", err, sizeof err), 1);
    assert_false(o.no_backup);
    assert_int_equal(take(&o, both, "backup=2", err, sizeof err), -1);
    assert_int_equal(take(&o, both, "rw=1", err, sizeof err), 0); /* a flag takes no value */
    assert_int_equal(take(&o, OPT_SHARED, "rw", err, sizeof err), -1);
    assert_non_null(strstr(err, "mount.s3rig only"));
}

static void test_bad_values_refused(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "max_nodes=0",     "max_nodes=4294967295", "max_nodes=-1",    "max_nodes=",     "max_nodes=12x",
        "cache_mb=0",      "cache_mb=abc",         "cache_mb=+5",     "cache_mb= 5",    "max_unpacked_mb=0",
        "max_unpacked_mb=1099511627777",           "rnc_key=0x10000", "rnc_key=zz",     "umask=999",
        "umask=1000",      "spin=-5",              "spin=1000001",    "uid=4294967295", "gid=-1",
        "schema=",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct s3_options o = {0};
        char err[600];
        if (take(&o, OPT_SHARED | OPT_MOUNT, bad[i], err, sizeof err) != -1)
            fail_msg("'%s' accepted", bad[i]);
        assert_non_null(strstr(err, bad[i]));
        assert_non_null(strstr(err, "bad value"));
    }
    /* a schema longer than the field holds */
    char item[600] = "schema=";
    memset(item + 7, 'a', 520);
    struct s3_options o = {0};
    char err[800];
    assert_int_equal(take(&o, OPT_SHARED, item, err, sizeof err), -1);
    assert_int_equal(o.fs.schema[0], 0);
}

static void test_scopes_and_unknown(void **state)
{
    (void)state;
    struct s3_options o = {0};
    char err[600];
    /* s3rig has no use for ownership or the request loop, and says so */
    assert_int_equal(take(&o, OPT_SHARED, "uid=5", err, sizeof err), -1);
    assert_non_null(strstr(err, "uid=5"));
    assert_non_null(strstr(err, "mount.s3rig only"));
    assert_int_equal(o.uid, 0);
    /* not ours: left to the caller (libfuse options, mount(8)'s) */
    assert_int_equal(take(&o, OPT_SHARED | OPT_MOUNT, "allow_other", err, sizeof err), 0);
    assert_int_equal(take(&o, OPT_SHARED | OPT_MOUNT, "max_nodes", err, sizeof err), 0);
    assert_int_equal(take(&o, OPT_SHARED | OPT_MOUNT, "max_nodesx=5", err, sizeof err), 0);
}

struct collected {
    char items[8][32];
    int n;
};

static int collect(const char *item, void *ctx)
{
    struct collected *c = ctx;
    if (strcmp(item, "stop") == 0)
        return -1;
    snprintf(c->items[c->n++], sizeof c->items[0], "%s", item);
    return 0;
}

static void test_list(void **state)
{
    (void)state;
    struct s3_options o = {0};
    struct collected c = {0};
    char err[600];
    assert_int_equal(s3_options_take_list(&o, OPT_SHARED | OPT_MOUNT, "noatime,max_nodes=7,allow_other,umask=022",
                                          collect, &c, err, sizeof err),
                     0);
    assert_int_equal(o.fs.max_nodes, 7);
    assert_int_equal(o.umask, 022);
    assert_int_equal(c.n, 2);
    assert_string_equal(c.items[0], "noatime");
    assert_string_equal(c.items[1], "allow_other");
    /* the first refusal stops the list: err set by the table, or empty when the caller refused */
    c.n = 0;
    assert_int_equal(s3_options_take_list(&o, OPT_SHARED, "cache_mb=0,noatime", collect, &c, err, sizeof err), -1);
    assert_non_null(strstr(err, "cache_mb=0"));
    assert_int_equal(c.n, 0);
    assert_int_equal(s3_options_take_list(&o, OPT_SHARED, "stop,max_nodes=9", collect, &c, err, sizeof err), -1);
    assert_int_equal(err[0], 0);
    assert_int_equal(o.fs.max_nodes, 7);
}

/* Runs a command line, returns its exit status and stdout+stderr. */
static int run(const char *cmd, char *out, size_t outlen)
{
    char full[1024];
    snprintf(full, sizeof full, "%s 2>&1", cmd);
    FILE *f = popen(full, "r");
    assert_non_null(f);
    size_t n = fread(out, 1, outlen - 1, f);
    out[n] = 0;
    int st = pclose(f);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static const char *const shared_names[] = {"max_nodes=", "cache_mb=", "max_unpacked_mb=", "rnc_key=", "schema="};
static const char *const mount_names[] = {"uid=", "gid=", "umask=", "spin="};

/* A help text lists every shared option, and the mount-only ones exactly when `mount`. */
static void expect_help(const char *out, bool mount)
{
    for (size_t k = 0; k < sizeof shared_names / sizeof shared_names[0]; k++)
        if (!strstr(out, shared_names[k]))
            fail_msg("help lacks %s:\n%s", shared_names[k], out);
    for (size_t k = 0; k < sizeof mount_names / sizeof mount_names[0]; k++)
        if (!strstr(out, mount_names[k]) == mount)
            fail_msg("help %s %s:\n%s", mount ? "lacks" : "lists", mount_names[k], out);
}

/* Both commands' help comes from the table: s3rig lists the shared options (schema=
 * too), mount.s3rig all of them; --help and --version work for both. */
static void test_help(void **state)
{
    (void)state;
    const char *cli = getenv("S3RIG_CLI"), *mnt = getenv("S3RIG_MOUNT");
    if (!cli || !mnt)
        fail_msg("S3RIG_CLI and S3RIG_MOUNT must be set (tests/meson.build sets them)");
    char cmd[600], out[8192];
    static const char *const flags[] = {"-h", "--help"};
    for (int i = 0; i < 2; i++) {
        snprintf(cmd, sizeof cmd, "%s %s", cli, flags[i]);
        assert_int_equal(run(cmd, out, sizeof out), 0);
        expect_help(out, false);
        assert_non_null(strstr(out, "info [--full] FILE"));
        snprintf(cmd, sizeof cmd, "%s %s", mnt, flags[i]);
        assert_int_equal(run(cmd, out, sizeof out), 0);
        expect_help(out, true);
    }
    /* version lines (exact) and refusals (status 1, the message naming the item) */
    static const struct {
        bool mount;
        const char *args;
        int status;
        const char *text;
    } cases[] = {
        {false, "--version", 0, "s3rig " S3RIG_VERSION "\n"},
        {false, "-V", 0, "s3rig " S3RIG_VERSION "\n"},
        {true, "--version", 0, "mount.s3rig " S3RIG_VERSION "\n"},
        {false, "-o uid=3 info /dev/null", 1, "'uid=3' is for mount.s3rig only"},
        {false, "-o bogus=1 info /dev/null", 1, "unknown option 'bogus=1'"},
        {false, "-o max_nodes=0 info /dev/null", 1, "bad value in option 'max_nodes=0' (1 to 4294967294)"},
        {true, "-o umask=999 /dev/null /tmp", 1, "bad value in option 'umask=999' (octal, 0 to 777)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(cmd, sizeof cmd, "%s %s", cases[i].mount ? mnt : cli, cases[i].args);
        assert_int_equal(run(cmd, out, sizeof out), cases[i].status);
        if (cases[i].status == 0 ? strcmp(out, cases[i].text) != 0 : !strstr(out, cases[i].text))
            fail_msg("%s: '%s', expected '%s'", cmd, out, cases[i].text);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values_stored),
        cmocka_unit_test(test_bad_values_refused),
        cmocka_unit_test(test_scopes_and_unknown),
        cmocka_unit_test(test_list),
        cmocka_unit_test(test_help),
    };
    return cmocka_run_group_tests_name("options", tests, NULL, NULL);
}
