/* Granny files whose sections and tables are BitKnit2-compressed (the BG3 case), built
 * by the fixture builders with the test encoder: the same tree as their uncompressed
 * twins, the tables expanded and claimed, padding named, nothing unparsed, broken
 * streams as .error files, and /info saying what expanded. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "expect.h"
#include "fixture.h"
#include "fixture_gr2obj.h"
#include "fs/open/open.h"
#include "gr2obj_check.h"
#include "testutil.h"
#include "tree_compare.h"
#include "tree_probe.h"
#include "walk.h"

/* What differs between twins by design: the container's own description, and /info. */
static const char *const twin_skip[] = {"granny/sections", "granny/header", "granny.gr2", "info", "unparsed", NULL};

/* Every signature: the BitKnit2 file's tree equals its uncompressed twin's, node by node
 * (paths, kinds, sizes, contents, link targets); the objects are the fixture's. */
static void test_twins(void **state)
{
    (void)state;
    static const char *const sigs[] = {"le32-old", "le32", "le64", "be32", "be64"};
    for (int i = 0; i < 5; i++) {
        struct fxg_opts plain = {.sig = sigs[i], .version = 6 + (i & 1), .nbones = 9 + (uint32_t)i,
                                 .oodle1_section = true, .nmarshals = 4};
        struct fxg_opts bk = plain;
        bk.oodle1_section = false;
        bk.bitknit2_section = true;
        bk.bitknit2_objects = true;
        bk.bitknit2_padded = i & 1;
        struct fxg_result ra, rb;
        size_t na, nb;
        uint8_t *fa = fxg_build(&plain, &na, &ra), *fb = fxg_build(&bk, &nb, &rb);
        assert_true(nb < na); /* it did compress */
        struct s3fs *a = open_mem(fa, na, NULL, NULL), *b = open_mem(fb, nb, NULL, NULL);
        struct probe pb = tree_probe(b);
        check_gr2_objects(&pb, &rb, sigs[i]);
        struct snap sa = {0}, sb = {0};
        snap_tree_except(&sa, a->tree, TREE_ROOT, twin_skip);
        snap_tree_except(&sb, b->tree, TREE_ROOT, twin_skip);
        assert_true(sa.n > 100);
        snap_assert_same_content(&sa, &sb);
        /* and with a cache that keeps nothing: every directory expands the section again
         * (the types decoded earlier must not point into dropped bytes) */
        struct s3fs_opts tiny = {.cache_bytes = 1};
        struct s3fs *c = open_mem(fb, nb, &tiny, NULL);
        struct snap sc = {0};
        snap_tree_except(&sc, c->tree, TREE_ROOT, twin_skip);
        snap_assert_same_content(&sa, &sc);
        snap_free(&sc);
        s3fs_close(c);
        /* the tables: expanded, the same records as the twin's */
        static const char *const same[] = {"/granny/sections/0/fixups", "/granny/sections/0/marshalling",
                                           "/granny/sections/0/data.bin"};
        for (int k = 0; k < 3; k++) {
            size_t la_, lb_;
            char *x = read_path(a, same[k], &la_), *y = read_path(b, same[k], &lb_);
            assert_int_equal(la_, lb_);
            assert_memory_equal(x, y, la_);
            assert_true(la_ > 0);
            free(x);
            free(y);
        }
        char *info = read_path(b, "/info", NULL);
        char want[160];
        snprintf(want, sizeof want, "section 0: bitknit2, %u stored, %u expanded, expanded\n",
                 rb.layout.data_size[0], rb.section_size);
        if (!strstr(info, want))
            fail_msg("/info lacks \"%s\":\n%s", want, info);
        assert_non_null(strstr(info, "section 1: bitknit2, 0 stored, 0 expanded, empty\n"));
        /* the stage stops mean nothing to BitKnit2: no warning (the count may say "so far") */
        if (!strstr(info, "\nwarnings: 0") || strstr(info, "\nwarning: "))
            fail_msg("%s", info);
        free(info);
        snap_free(&sa);
        snap_free(&sb);
        s3fs_close(a);
        s3fs_close(b);
        free(fa);
        free(fb);
        free(ra.section);
        free(rb.section);
    }
}

/* Issue 17 item 5: empty tables have no .error; compressed tables are claimed and shown
 * as stored bytes; zero padding after a piece (< the alignment) is named; nothing is
 * left in /unparsed and every byte is covered. Offsets from the builder's layout. */
static void test_claimed_and_padding(void **state)
{
    (void)state;
    int seen_data_pad = 0, seen_marshal_pad = 0;
    for (uint32_t nb = 1; nb <= 12; nb++) {
        struct fxg_opts o = {.sig = "le64", .version = 7, .nbones = nb, .bitknit2_objects = true,
                             .bitknit2_section = true, .nmarshals = 1 + nb % 4};
        struct fxg_result r;
        size_t size;
        uint8_t *f = fxg_build(&o, &size, &r);
        const struct fx_gr2_layout *gl = &r.layout;
        struct s3fs *fs = open_mem(f, size, NULL, NULL);
        char path[128], val[64];
        /* the empty section's tables: empty files, no .error */
        assert_false(path_exists(fs, "/granny/sections/1/fixups.error"));
        assert_false(path_exists(fs, "/granny/sections/1/marshalling.error"));
        assert_false(path_exists(fs, "/granny/sections/1/fixups_stored.bin"));
        char *s = read_path(fs, "/granny/sections/1/fixups", NULL);
        assert_string_equal(s, "");
        free(s);
        /* the compressed tables' bytes, as stored */
        static const char *const names[2] = {"fixups_stored.bin", "marshalling_stored.bin"};
        uint32_t at[2] = {gl->fixup_offset[0], gl->marshal_offset[0]};
        uint32_t len[2] = {gl->fixup_stored[0], gl->marshal_stored[0]};
        for (int k = 0; k < 2; k++) {
            snprintf(path, sizeof path, "/granny/sections/0/%s", names[k]);
            size_t n;
            s = read_path(fs, path, &n);
            assert_int_equal(n, len[k]);
            assert_memory_equal(s, f + at[k], n);
            free(s);
            struct probe p = tree_probe(fs);
            assert_true(p.getxattr(p.ctx, path, "user.s3rig.offset", val, sizeof val) > 0);
            assert_int_equal(strtoull(val, NULL, 10), at[k]);
        }
        /* the padding, where the builder aligned */
        uint32_t data_end = gl->data_offset[0] + gl->data_size[0];
        uint32_t marshal_end = gl->marshal_offset[0] + gl->marshal_stored[0];
        struct {
            const char *name;
            uint32_t off, len;
        } pads[2] = {{"data_padding.bin", data_end, gl->fixup_offset[0] - data_end},
                     {"marshalling_padding.bin", marshal_end, gl->total_size - marshal_end}};
        for (int k = 0; k < 2; k++) {
            assert_true(pads[k].len < 4);
            snprintf(path, sizeof path, "/granny/sections/0/%s", pads[k].name);
            assert_int_equal(path_exists(fs, path), pads[k].len > 0);
            if (!pads[k].len)
                continue;
            size_t n;
            s = read_path(fs, path, &n);
            assert_int_equal(n, pads[k].len);
            assert_memory_equal(s, f + pads[k].off, n);
            free(s);
        }
        seen_data_pad += pads[0].len > 0;
        seen_marshal_pad += pads[1].len > 0;
        struct probe p = tree_probe(fs);
        char **list;
        int nu = p.list(p.ctx, "/unparsed", &list);
        assert_int_equal(nu, 0);
        free(list);
        snprintf(val, sizeof val, "covered_bytes: %zu\n", size);
        expect_has(fs, "/info", val);
        s3fs_close(fs);
        free(f);
        free(r.section);
    }
    assert_true(seen_data_pad > 0 && seen_marshal_pad > 0);
}

/* Padding is named only when it is zero and shorter than the alignment. */
static void test_padding_rule(void **state)
{
    (void)state;
    static const uint8_t five[5] = {1, 2, 3, 4, 5};
    struct fx_section s[1] = {{.data = five, .data_size = 5, .alignment = 4}};
    struct fx_gr2_opts o = {.version = 7, .sig = "le32"};
    struct fx_gr2_layout gl;
    size_t size;
    for (int variant = 0; variant < 3; variant++) {
        s[0].alignment = variant == 1 ? 2 : 4; /* 3 bytes of zeros are not < 2 */
        uint8_t *f = fx_build_gr2(&o, s, 1, &size, &gl);
        if (variant == 2)
            f[gl.data_offset[0] + 6] = 0x99; /* not zero: not padding (the CRC only warns) */
        struct s3fs *fs = open_mem(f, size, NULL, NULL);
        bool named = variant == 0;
        assert_int_equal(path_exists(fs, "/granny/sections/0/data_padding.bin"), named);
        char want[64];
        snprintf(want, sizeof want, "/unparsed/0x%x-0x3.bin", gl.data_offset[0] + 5);
        assert_int_equal(path_exists(fs, want), !named);
        s3fs_close(fs);
        free(f);
    }
}

/* A BG3-like wrapped RIG: bones, .names and .bone links through BitKnit2 data. */
static void test_wrapped_rig(void **state)
{
    (void)state;
    struct fxg_opts go = {.sig = "le32-old", .version = 6, .nbones = 16, .bitknit2_objects = true,
                          .bitknit2_section = true, .nmarshals = 2};
    struct fxg_result r;
    size_t size;
    struct fx_rig_layout rl;
    uint8_t *f = fxg_sample_rig(&go, &r, &size, &rl);
    struct s3fs *fs = open_mem(f, size, NULL, NULL);
    struct probe p = tree_probe(fs);
    check_pole_bone(&p, &r, 1);
    char want[128];
    char *s = read_path(fs, "/compress_nodes.names", NULL);
    snprintf(want, sizeof want, "%s\n", r.bones[fx_sample_lists[2][0]].name);
    assert_string_equal(s, want);
    free(s);
    s3fs_close(fs);
    free(f);
    free(r.section);
}

/* Broken streams: each an .error on its part, the rest usable. */
static void test_broken(void **state)
{
    (void)state;
    struct fxg_opts o = {.sig = "le32", .version = 7, .nbones = 5, .bitknit2_objects = true, .nmarshals = 2};
    struct fxg_result r;
    size_t size;
    uint8_t *f = fxg_build(&o, &size, &r);
    const struct fx_gr2_layout *gl = &r.layout;
    for (int variant = 0; variant < 4; variant++) {
        uint8_t *c = malloc(size);
        memcpy(c, f, size);
        const char *errfile = NULL, *needle = NULL;
        if (variant == 0) { /* the section's magic */
            c[gl->data_offset[0]] ^= 0xFF;
            errfile = "/granny/sections/0/data.error";
            needle = "section 0: BitKnit2: no stream magic";
        } else if (variant == 1) { /* the fixup table's stream cut short by its byte count */
            uint32_t n = c[gl->fixup_offset[0]] | c[gl->fixup_offset[0] + 1] << 8;
            c[gl->fixup_offset[0]] = (uint8_t)(n - 3);
            c[gl->fixup_offset[0] + 1] = (uint8_t)((n - 3) >> 8);
            errfile = "/granny/sections/0/fixups.error";
            needle = "fixup table at 0x";
        } else if (variant == 2) { /* a byte count past the end of the file */
            c[gl->marshal_offset[0] + 3] = 0x7F;
            errfile = "/granny/sections/0/marshalling.error";
            needle = "compressed stream runs past the end";
        } else { /* a declared size the limit refuses */
            put32(c + 0x20 + gl->section_array_offset + 12, 0x7FFFFFFF, false);
            errfile = "/granny/sections/0/data.error";
            needle = "over the limit";
        }
        struct s3fs *fs = open_mem(c, size, NULL, NULL);
        char *s = read_path(fs, errfile, NULL);
        if (!strstr(s, needle))
            fail_msg("variant %d: %s says \"%s\", not \"%s\"", variant, errfile, s, needle);
        free(s);
        assert_true(path_exists(fs, "/granny/sections/0/stored.bin"));
        walk_all(fs, 100000);
        if (variant == 0) { /* the section's line gives the reason once, after its own name */
            char want[160];
            snprintf(want, sizeof want, "\nsection 0: bitknit2, %u stored, %u expanded, cannot be expanded: BitKnit2: "
                     "no stream magic", gl->data_size[0], r.section_size);
            expect_has(fs, "/info", want);
        }
        if (variant == 1) { /* the object tree lost its pointers: /info says so */
            expect_has(fs, "/info", "\nwarning: section 0: its fixups cannot be used (fixup table at 0x");
        }
        s3fs_close(fs);
        free(c);
    }
    free(f);
    free(r.section);
}

/* Requests in parallel, as with -o spin=0: /info, the object tree (which pins every
 * section), data.bin and data.error from several threads, with a cache too small to keep
 * anything, so sections are expanded (and fail) again and again while others read their
 * state. Each thread checks what it reads; built with -Db_sanitize=thread this is the
 * check of the one lock over the sections' state. The bound is one for all threads: an
 * expansion beside another thread's bytes is refused (a lookup ENOMEM, a read EIO), and
 * the thread asks again, as a reader would. */
struct par {
    struct s3fs *fs;
    const struct fxg_result *r;
    bool broken;
    int iterations;
};

#define PAR_RETRIES 100000

static enum s3_err resolve_again(struct tree *t, const char *path, uint32_t *ino)
{
    enum s3_err rc;
    for (int k = 0; (rc = tree_resolve(t, path, ino)) == S3_ERR_NOMEM && k < PAR_RETRIES; k++)
        ;
    return rc;
}

/* The bytes read (-1 when the read failed with another reason than IO, or kept failing). */
static ssize_t read_again(struct tree *t, uint32_t ino, uint64_t off, void *buf, size_t len)
{
    size_t n = 0;
    enum s3_err e;
    for (int k = 0; (e = tree_read(t, ino, off, buf, len, &n)) == S3_ERR_IO && k < PAR_RETRIES; k++)
        ;
    return e ? -1 : (ssize_t)n;
}

/* One read: the bytes, or -1 when it fails. */
static ssize_t read_once(struct tree *t, uint32_t ino, uint64_t off, void *buf, size_t len)
{
    size_t n = 0;
    return tree_read(t, ino, off, buf, len, &n) ? -1 : (ssize_t)n;
}

static void *par_thread(void *p)
{
    struct par *a = p;
    struct tree *t = a->fs->tree;
    static __thread uint8_t buf[65536];
    for (int i = 0; i < a->iterations; i++) {
        uint32_t ino;
        if (resolve_again(t, "/info", &ino) != 0) /* always there: a missing one is a failure, not a skip */
            return "no /info";
        ssize_t n = read_once(t, ino, 0, buf, sizeof buf - 1);
        if (n <= 0)
            return "no /info";
        buf[n] = 0;
        if (!strstr((char *)buf, "section 0: bitknit2, "))
            return "no section line";
        if (a->broken) {
            if (resolve_again(t, "/granny/sections/0/data.error", &ino) != 0)
                return "no data.error";
            ssize_t k = read_once(t, ino, 0, buf, sizeof buf - 1);
            buf[k > 0 ? k : 0] = 0;
            if (!strstr((char *)buf, "no stream magic"))
                return "wrong data.error";
            tree_resolve(t, "/granny/root", &ino); /* pins the broken section */
            continue;
        }
        if (resolve_again(t, "/granny/sections/0/data.bin", &ino) != 0)
            return "no data.bin";
        ssize_t k = read_again(t, ino, (uint64_t)i % 64, buf, 100);
        if (k != 100 || memcmp(buf, a->r->section + i % 64, 100) != 0)
            return "wrong data.bin bytes";
        char path[96];
        snprintf(path, sizeof path, "/granny/root/Skeletons/0/Bones/%d/Name", i % (int)a->r->nbones);
        if (resolve_again(t, path, &ino) != 0)
            return "no bone";
        k = read_once(t, ino, 0, buf, 64);
        if (k <= 0 || strncmp((char *)buf, a->r->bones[i % (int)a->r->nbones].name, (size_t)k - 1) != 0)
            return "wrong bone name";
    }
    return NULL;
}

static void test_parallel_requests(void **state)
{
    (void)state;
    struct fxg_opts o = {.sig = "le32", .version = 7, .nbones = 12, .bitknit2_objects = true,
                         .bitknit2_section = true, .nmarshals = 1};
    struct fxg_result r;
    size_t size;
    uint8_t *f = fxg_build(&o, &size, &r);
    uint8_t *broken = malloc(size);
    memcpy(broken, f, size);
    broken[r.layout.data_offset[0]] ^= 0xFF;
    struct s3fs_opts tiny = {.cache_bytes = 1}; /* nothing stays: every read expands again */
    for (int b = 0; b < 2; b++) {
        struct s3fs *fs = open_mem(b ? broken : f, size, &tiny, NULL);
        pthread_t th[4];
        struct par a = {fs, &r, b == 1, 150};
        for (int i = 0; i < 4; i++)
            assert_int_equal(pthread_create(&th[i], NULL, par_thread, &a), 0);
        for (int i = 0; i < 4; i++) {
            void *why;
            pthread_join(th[i], &why);
            if (why)
                fail_msg("thread %d (%s file): %s", i, b ? "broken" : "good", (const char *)why);
        }
        s3fs_close(fs);
    }
    free(broken);
    free(f);
    free(r.section);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_twins),        cmocka_unit_test(test_claimed_and_padding),
        cmocka_unit_test(test_padding_rule), cmocka_unit_test(test_wrapped_rig),
        cmocka_unit_test(test_broken),       cmocka_unit_test(test_parallel_requests),
    };
    return cmocka_run_group_tests_name("gr2_bitknit2", tests, NULL, NULL);
}
