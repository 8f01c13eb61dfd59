/* Parser unit tests: reader, detection, GR2 container, wrapped RIG — valid files from
 * the fixture builder and every kind of broken input the issue names. */
#include <errno.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fixture.h"
#include "fixture_gr2obj.h"
#include "fs/open/open.h"
#include "parse/base/err.h"
#include "parse/detect.h"
#include "parse/gr2/gr2.h"
#include "parse/sims/rig.h"
#include "testutil.h"



/* ---- reader ---- */

static void test_reader_bounds(void **state)
{
    (void)state;
    assert_true(range_ok(0, 0, 0));
    assert_true(range_ok(10, 6, 16));
    assert_false(range_ok(10, 7, 16));
    assert_false(range_ok(17, 0, 16));
    assert_false(range_ok(UINT64_MAX, 2, 16));
    assert_false(range_ok(8, UINT64_MAX, 16));
    static const uint8_t bytes[8] = {1, 2, 3, 4, 0xfe, 0xff, 0xff, 0xff};
    struct mem_src_ctx mc;
    struct s3_src src;
    mem_src_init(&src, &mc, bytes, sizeof bytes);
    uint32_t v;
    assert_int_equal(src_u32(&src, 0, false, &v), 0);
    assert_int_equal(v, 0x04030201);
    assert_int_equal(src_u32(&src, 0, true, &v), 0);
    assert_int_equal(v, 0x01020304);
    assert_int_equal(src_u32(&src, 5, false, &v), S3_ERR_RANGE);
    uint8_t buf[8];
    assert_int_equal(src_read(&src, 0, buf, 9), S3_ERR_RANGE);
    struct cursor c;
    cur_init(&c, bytes, sizeof bytes, false);
    assert_int_equal(cur_u32(&c), 0x04030201);
    assert_int_equal(cur_i32(&c), -2);
    assert_false(c.err);
    assert_int_equal(cur_u16(&c), 0);
    assert_true(c.err);
    cur_init(&c, bytes, sizeof bytes, true);
    assert_int_equal(cur_u16(&c), 0x0102);
    assert_int_equal(cur_u64(&c), 0);
    assert_true(c.err);
    /* IEEE 754 singles: 1.5 is 0x3FC00000, -2 is 0xC0000000 */
    static const uint8_t f_le[8] = {0, 0, 0xc0, 0x3f, 0, 0, 0, 0xc0}, f_be[8] = {0x3f, 0xc0, 0, 0, 0xc0, 0, 0, 0};
    assert_true(ld_f32(f_le, false) == 1.5f);
    assert_true(ld_f32(f_le + 4, false) == -2.0f);
    assert_true(ld_f32(f_be, true) == 1.5f);
    assert_true(ld_f32(f_be + 4, true) == -2.0f);
    assert_true(f32_of_bits(0x3FC00000u) == 1.5f);
    cur_init(&c, f_be, sizeof f_be, true);
    assert_true(cur_f32(&c) == 1.5f);
    assert_true(cur_f32(&c) == -2.0f);
    assert_false(c.err);
}

static void test_crc32_check_value(void **state)
{
    (void)state;
    struct mem_src_ctx mc;
    struct s3_src src;
    mem_src_init(&src, &mc, "123456789", 9);
    uint32_t crc;
    assert_int_equal(crc32_range(&src, 0, 9, &crc), 0);
    assert_int_equal(crc, 0xCBF43926u);
    assert_int_equal(crc32_range(&src, 1, 9, &crc), S3_ERR_RANGE);
}

/* ---- detection ---- */

static enum s3_format detect_bytes(const void *data, size_t size, struct detect_result *r)
{
    struct mem_src_ctx mc;
    struct s3_src src;
    mem_src_init(&src, &mc, data, size);
    detect_format(&src, r);
    return r->format;
}

static void test_detect(void **state)
{
    (void)state;
    struct detect_result r;
    size_t size;
    struct fx_gr2_layout gl;
    struct fx_rig_layout rl;
    uint8_t *f = fx_sample_gr2("be64", 7, &size, &gl);
    assert_int_equal(detect_bytes(f, size, &r), FMT_GR2);
    free(f);
    f = fx_sample_rig(&size, &rl, &gl, NULL);
    assert_int_equal(detect_bytes(f, size, &r), FMT_RIG_WRAPPED);
    free(f);
    uint8_t clear[16] = {4, 0, 0, 0, 2, 0, 0, 0};
    assert_int_equal(detect_bytes(clear, sizeof clear, &r), FMT_RIG_CLEAR);
    /* t2fs: a root branch with two empty children, in both byte orders and after a prefix */
    uint8_t t2[40] = {0};
    for (int be = 0; be <= 1; be++) {
        put32(t2 + 8, 2, be);
        put32(t2 + 12, 16, be);
        put32(t2 + 16, 24, be);
        put32(t2 + 20, 32, be);
        put32(t2 + 24, 0, be);
        put32(t2 + 28, 8, be);
        assert_int_equal(detect_bytes(t2 + 8, 32, &r), FMT_T2FS);
        assert_int_equal(r.big_endian, be);
        assert_int_equal(r.root_off, 0);
        memset(t2, 0xEE, 8);
        assert_int_equal(detect_bytes(t2, 40, &r), FMT_T2FS);
        assert_int_equal(r.root_off, 8);
    }
    assert_int_equal(detect_bytes("hello world, not a model", 24, &r), FMT_UNKNOWN);
    assert_non_null(strstr(r.why, "not a RIG"));
    assert_int_equal(detect_bytes("", 0, &r), FMT_UNKNOWN);
    assert_string_equal(r.why, "empty file");
}

/* ---- GR2 ---- */

static void parse_gr2_ok(const uint8_t *f, size_t size, struct gr2_file *g, struct diag *d)
{
    struct mem_src_ctx mc;
    struct s3_src src;
    mem_src_init(&src, &mc, f, size);
    char err[256];
    memset(d, 0, sizeof *d);
    assert_int_equal(gr2_parse(&src, 0, g, d, err, sizeof err), 0);
}

static void check_sample_gr2(const char *sig, int version, bool be, int bits)
{
    size_t size;
    struct fx_gr2_layout gl;
    uint8_t *f = fx_sample_gr2(sig, version, &size, &gl);
    struct gr2_file g;
    struct diag d;
    parse_gr2_ok(f, size, &g, &d);
    assert_int_equal(g.be, be);
    assert_int_equal(g.pointer_bits, bits);
    assert_int_equal(g.version, version);
    assert_int_equal(g.header_length, version == 6 ? 0x38 : 0x48);
    assert_int_equal(g.total_size, size);
    assert_true(g.crc_checked);
    assert_int_equal(g.crc, gl.crc);
    assert_int_equal(g.crc_computed, gl.crc);
    assert_int_equal(g.type_tag, 0x8000001c);
    assert_int_equal(g.extra_tags[3], 0xffffffff);
    assert_int_equal(g.root_object.offset, 20);
    if (version == 7)
        assert_int_equal(g.string_table_crc, 0x11223344);
    assert_int_equal(g.nsections, 3);
    assert_int_equal(g.sections[0].data_offset, gl.data_offset[0]);
    assert_int_equal(g.sections[0].data_size, 40);
    assert_int_equal(g.sections[0].fixup_count, 2);
    assert_int_equal(g.sections[1].compression, GR2_COMP_OODLE1);
    assert_int_equal(g.sections[2].data_size, 7);
    assert_true(g.sections[0].data_ok && g.sections[0].fixups_ok && g.sections[0].marshal_ok);
    struct mem_src_ctx mc;
    struct s3_src src;
    mem_src_init(&src, &mc, f, size);
    struct gr2_fixup *fx;
    uint32_t n;
    assert_int_equal(gr2_read_fixups(&src, &g, 0, &fx, &n, NULL, 0), 0);
    assert_int_equal(n, 2);
    assert_int_equal(fx[1].from_offset, 4);
    assert_int_equal(fx[1].to_section, 2);
    assert_int_equal(fx[1].to_offset, 3);
    free(fx);
    struct gr2_marshal *m;
    assert_int_equal(gr2_read_marshals(&src, &g, 0, &m, &n, NULL, 0), 0);
    assert_int_equal(n, 1);
    assert_int_equal(m[0].count, 2);
    assert_int_equal(m[0].type_offset, 24);
    free(m);
    assert_int_equal(d.n, sig[strlen(sig) - 1] == 't' ? 1 : 0); /* the -alt spellings warn */
    diag_free(&d);
    gr2_free(&g);
    free(f);
}

static void test_gr2_variants(void **state)
{
    (void)state;
    check_sample_gr2("le32-old", 6, false, 32);
    check_sample_gr2("le32", 7, false, 32);
    check_sample_gr2("le32", 6, false, 32); /* a v7-era signature with a v6 header */
    check_sample_gr2("le64", 7, false, 64);
    check_sample_gr2("be32", 7, true, 32);
    check_sample_gr2("be64", 7, true, 64);
    check_sample_gr2("be32-old", 6, true, 32);
    check_sample_gr2("be32-alt", 7, true, 32);
    check_sample_gr2("be64-alt", 6, true, 64);
}

static void test_gr2_crc_mismatch(void **state)
{
    (void)state;
    struct fx_section s = {.data = (const uint8_t *)"abcdefgh", .data_size = 8};
    struct fx_gr2_opts o = {.version = 7, .sig = "le32", .corrupt_crc = true};
    struct fx_gr2_layout gl;
    size_t size;
    uint8_t *f = fx_build_gr2(&o, &s, 1, &size, &gl);
    struct gr2_file g;
    struct diag d;
    parse_gr2_ok(f, size, &g, &d);
    assert_int_equal(g.crc_computed, gl.crc);
    assert_int_not_equal(g.crc, gl.crc);
    assert_true(diag_has(&d, "CRC mismatch"));
    diag_free(&d);
    gr2_free(&g);
    free(f);
}

static void test_gr2_compression_codes(void **state)
{
    (void)state;
    static const uint8_t blob[12] = {9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 1, 2};
    struct fx_section s[6];
    for (int i = 0; i < 6; i++)
        s[i] = (struct fx_section){.compression = (uint32_t)i, .data = blob, .data_size = 12,
                                   .expanded_size = i ? 100 : 0};
    s[5].compression = 9;
    struct fx_gr2_opts o = {.version = 6, .sig = "le32-old"};
    struct fx_gr2_layout gl;
    size_t size;
    uint8_t *f = fx_build_gr2(&o, s, 6, &size, &gl);
    struct s3fs *fs = open_mem(f, size, NULL, NULL);
    static const char *const names[] = {"none", "oodle0", "oodle1", "bitknit1", "bitknit2", "unknown"};
    for (int i = 0; i < 6; i++) {
        char path[64], buf[64] = {0};
        uint32_t ino;
        snprintf(path, sizeof path, "/granny/sections/%d/compression", i);
        assert_int_equal(tree_resolve(fs->tree, path, &ino), 0);
        assert_true(tree_read_ok(fs->tree, ino, 0, buf, sizeof buf) > 0);
        buf[strcspn(buf, "\n")] = 0;
        assert_string_equal(buf, names[i]);
        snprintf(path, sizeof path, "/granny/sections/%d/stored.bin", i);
        assert_int_equal(tree_resolve(fs->tree, path, &ino), 0);
        snprintf(path, sizeof path, "/granny/sections/%d/%s", i, i == 0 ? "data.bin" : "data.error");
        assert_int_equal(tree_resolve(fs->tree, path, &ino), 0);
    }
    /* BitKnit2 tables of count 0 have no stream: empty tables, no error (issue 17); the
     * section's 12 bytes are no BitKnit2 stream: data.error says so */
    uint32_t ino;
    assert_int_equal(tree_resolve(fs->tree, "/granny/sections/4/fixups.error", &ino), S3_ERR_NOT_FOUND);
    assert_int_equal(tree_resolve(fs->tree, "/granny/sections/4/marshalling.error", &ino), S3_ERR_NOT_FOUND);
    assert_int_equal(tree_resolve(fs->tree, "/granny/sections/4/fixups", &ino), 0);
    assert_int_equal(tree_size(fs->tree, ino), 0);
    assert_int_equal(tree_resolve(fs->tree, "/granny/sections/4/data.error", &ino), 0);
    char why[256] = {0};
    assert_true(tree_read_ok(fs->tree, ino, 0, why, sizeof why - 1) > 0);
    assert_non_null(strstr(why, "no stream magic"));
    assert_int_equal(tree_resolve(fs->tree, "/granny/sections/3/data.error", &ino), 0);
    memset(why, 0, sizeof why);
    assert_true(tree_read_ok(fs->tree, ino, 0, why, sizeof why - 1) > 0);
    assert_non_null(strstr(why, "bitknit1 compression is not supported"));
    assert_true(diag_has(&fs->diag, "unknown compression code 9"));
    s3fs_close(fs);
    free(f);
}

static void test_gr2_empty_sections(void **state)
{
    (void)state;
    struct fx_gr2_opts o = {.version = 7, .sig = "le64"};
    struct fx_gr2_layout gl;
    size_t size;
    uint8_t *f = fx_build_gr2(&o, NULL, 0, &size, &gl);
    struct gr2_file g;
    struct diag d;
    parse_gr2_ok(f, size, &g, &d);
    assert_int_equal(g.nsections, 0);
    assert_int_equal(d.n, 0);
    diag_free(&d);
    gr2_free(&g);
    free(f);
}

/* Every truncation of the header: refused with a reason, or parsed with warnings. */
static void test_gr2_truncated_everywhere(void **state)
{
    (void)state;
    size_t size;
    struct fx_gr2_layout gl;
    uint8_t *f = fx_sample_gr2("le32", 7, &size, &gl);
    for (size_t cut = 0; cut < size; cut++) {
        struct s3fs *fs;
        char err[256] = "";
        int rc = s3fs_open_mem(&fs, f, cut, NULL, err, sizeof err);
        if (cut < 0x20 + gl.header_length) {
            assert_int_not_equal(rc, 0);
            assert_true(strlen(err) > 0);
            continue;
        }
        assert_int_equal(rc, 0);
        assert_true(diag_has(&fs->diag, "truncated"));
        s3fs_close(fs);
    }
    free(f);
}

static void test_gr2_hostile_counts(void **state)
{
    (void)state;
    size_t size;
    struct fx_gr2_layout gl;
    uint8_t *f = fx_sample_gr2("le32", 7, &size, &gl);
    uint8_t *h = malloc(size);
    /* section_count 0xFFFFFFFF */
    memcpy(h, f, size);
    put32(h + 0x30, 0xFFFFFFFF, false);
    struct gr2_file g;
    struct diag d;
    parse_gr2_ok(h, size, &g, &d);
    assert_true(strstr(g.sections_err, "section_count 4294967295") != NULL);
    assert_true(g.nsections < 10);
    diag_free(&d);
    gr2_free(&g);
    /* a fixup count of 0xFFFFFFFF and a data offset past the end */
    memcpy(h, f, size);
    uint32_t s0 = 0x20 + gl.section_array_offset;
    put32(h + s0 + 32, 0xFFFFFFFF, false);
    put32(h + s0 + 44 + 4, 0xFFFFFFF0, false);
    parse_gr2_ok(h, size, &g, &d);
    assert_false(g.sections[0].fixups_ok);
    assert_non_null(strstr(g.sections[0].fixups_err, "run past the end"));
    assert_false(g.sections[1].data_ok);
    assert_true(g.sections[2].data_ok);
    diag_free(&d);
    gr2_free(&g);
    /* the whole tree stays browsable with .error files */
    struct s3fs *fs = open_mem(h, size, NULL, NULL);
    uint32_t ino;
    assert_int_equal(tree_resolve(fs->tree, "/granny/sections/0/fixups.error", &ino), 0);
    assert_int_equal(tree_resolve(fs->tree, "/granny/sections/1/stored.error", &ino), 0);
    assert_int_equal(tree_resolve(fs->tree, "/granny/sections/2/data.bin", &ino), 0);
    s3fs_close(fs);
    /* unknown version */
    memcpy(h, f, size);
    put32(h + 0x20, 9, false);
    char err[256];
    assert_open_refused(s3fs_open_mem(&fs, h, size, NULL, err, sizeof err), S3_ERR_UNSUPPORTED, S3_EXIT_FORMAT);
    assert_non_null(strstr(err, "unsupported version 9"));
    free(h);
    free(f);
}

/* ---- wrapped RIG ---- */

static void parse_rig(const uint8_t *f, size_t size, struct rig_wrapped *r, struct diag *d, int expect_rc)
{
    struct mem_src_ctx mc;
    struct s3_src src;
    mem_src_init(&src, &mc, f, size);
    char err[256];
    memset(d, 0, sizeof *d);
    assert_int_equal(rig_parse_wrapped(&src, r, d, err, sizeof err), expect_rc);
}

static void check_chain(const struct rig_ik_entry *e, const struct fx_chain *c)
{
    assert_true(e->ok);
    assert_int_equal(e->unknown_0, c->unknown_0);
    assert_int_equal(e->length, c->length);
    assert_int_equal(e->pole, c->pole);
    assert_int_equal(e->pole_root, c->pole_root);
    assert_int_equal(e->slot_info, c->slot_info);
    assert_int_equal(e->slot_offset, c->slot_offset);
    assert_int_equal(e->info_node_flags, c->info_node_flags);
    assert_memory_equal(e->info_nodes, c->info_nodes, sizeof c->info_nodes);
    assert_int_equal(e->info_root, c->info_root);
    assert_int_equal(e->root, c->root);
    for (uint32_t k = 0; k < c->length; k++) {
        assert_int_equal(e->link_values[k], c->link_values[k]);
        assert_int_equal(e->links[k].end, c->links[k].end);
        assert_int_equal(e->links[k].start, c->links[k].start);
    }
}

static uint8_t *build_rig(bool from_table, size_t *size, struct fx_rig_layout *rl)
{
    size_t gsize;
    struct fx_gr2_layout gl;
    uint8_t *g = fx_sample_gr2("le32-old", 6, &gsize, &gl);
    struct fx_rig_opts o = fx_sample_rig_opts(g, gsize);
    o.offsets_from_table = from_table;
    uint8_t *f = fx_build_rig(&o, size, rl);
    free(g);
    return f;
}

static void test_rig_both_readings(void **state)
{
    (void)state;
    for (int from_table = 0; from_table <= 1; from_table++) {
        size_t size;
        struct fx_rig_layout rl;
        uint8_t *f = build_rig(from_table, &size, &rl);
        struct rig_wrapped r;
        struct diag d;
        parse_rig(f, size, &r, &d, 0);
        assert_int_equal(r.granny_pos, rl.granny_pos);
        assert_int_equal(r.ik_pos, rl.ik_pos);
        assert_true(r.ik_ok);
        assert_true(r.entry_base_fits);
        assert_int_equal(r.entry_base, from_table ? RIG_BASE_TABLE : RIG_BASE_FIELD);
        assert_int_equal(r.ik_count, 2);
        for (int i = 0; i < 2; i++) {
            assert_int_equal(r.entries[i].pos, rl.entry_pos[i]);
            check_chain(&r.entries[i], &fx_sample_chains[i]);
        }
        for (int l = 0; l < 4; l++) {
            assert_true(r.lists[l].ok);
            assert_int_equal(r.lists[l].pos, rl.list_pos[l]);
            assert_int_equal(r.lists[l].count, fx_sample_list_count[l]);
            assert_memory_equal(r.lists[l].index, fx_sample_lists[l], 4 * fx_sample_list_count[l]);
        }
        assert_int_equal(d.n, 0);
        diag_free(&d);
        rig_free_wrapped(&r);
        free(f);
    }
}

/* A new Granny length in a wrapped RIG (rig_plan_granny_resize, for -o rw): the Granny
 * data and its padding up to the IK-chain block become the new bytes padded to 4; the
 * IK-chain block and the four lists, which follow it, keep their bytes at positions moved
 * by the growth, so their offsets (each counted from its own field) move by it; the
 * writer's Granny size follows the new length. Offsets that do not frame the Granny data
 * are refused (FORMAT), a layout past 32 bits too (LIMIT). */
static void test_rig_granny_resize_plan(void **state)
{
    (void)state;
    size_t size;
    struct fx_rig_layout rl;
    uint8_t *f = build_rig(false, &size, &rl);
    uint64_t old_len = rl.header[2]; /* the writer's Granny size (fx_build_rig stores it) */
    assert_true(rl.granny_pos + old_len <= rl.ik_pos && rl.ik_pos - (rl.granny_pos + old_len) < 4);
    char err[200];
    for (uint64_t grow = 0; grow < 9; grow++) {
        struct rig_granny_resize p;
        uint64_t new_len = old_len + grow;
        assert_int_equal(rig_plan_granny_resize(f, rl.granny_pos, old_len, new_len, &p, err, sizeof err), S3_OK);
        uint64_t new_ik = (rl.granny_pos + new_len + 3) / 4 * 4;
        int64_t delta = (int64_t)new_ik - (int64_t)rl.ik_pos;
        assert_int_equal(p.from, rl.granny_pos);
        assert_int_equal(p.to, rl.ik_pos);
        assert_int_equal(p.new_len, new_ik - rl.granny_pos);
        assert_int_equal(p.nwords, 6); /* IK chains, four lists, the Granny size */
        uint64_t want_at[6] = {16, 20, 24, 28, 32, 8};
        uint64_t block[5] = {rl.ik_pos, rl.list_pos[0], rl.list_pos[1], rl.list_pos[2], rl.list_pos[3]};
        for (int i = 0; i < 5; i++) {
            assert_int_equal(p.word_at[i], want_at[i]);
            assert_int_equal(p.word[i], (uint64_t)((int64_t)block[i] + delta) - want_at[i]);
        }
        assert_int_equal(p.word_at[5], 8);
        assert_int_equal(p.word[5], new_len);
    }
    struct rig_granny_resize p;
    assert_int_equal(rig_plan_granny_resize(f, rl.granny_pos + 4, old_len, 10, &p, err, sizeof err), S3_ERR_FORMAT);
    assert_non_null(strstr(err, "do not frame the Granny data"));
    assert_int_equal(rig_plan_granny_resize(f, rl.granny_pos, rl.ik_pos - rl.granny_pos + 1, 10, &p, err, sizeof err),
                     S3_ERR_FORMAT);
    assert_int_equal(rig_plan_granny_resize(f, rl.granny_pos, old_len, UINT32_MAX, &p, err, sizeof err), S3_ERR_LIMIT);
    free(f);
}

static void test_rig_truncated_everywhere(void **state)
{
    (void)state;
    size_t size;
    struct fx_rig_layout rl;
    uint8_t *f = build_rig(false, &size, &rl);
    for (size_t cut = 0; cut < size; cut++) {
        struct s3fs *fs;
        char err[256] = "";
        int rc = s3fs_open_mem(&fs, f, cut, NULL, err, sizeof err);
        if (cut < 52) {
            /* the wrapper header itself is unreadable: refused, with a reason */
            assert_int_not_equal(rc, 0);
            assert_true(strlen(err) > 0);
            continue;
        }
        assert_int_equal(rc, 0);
        /* the last list is always cut: it must become an .error file */
        uint32_t ino;
        assert_int_equal(tree_resolve(fs->tree, "/full_bone_list.error", &ino), 0);
        assert_int_equal(tree_resolve(fs->tree, "/info", &ino), 0);
        s3fs_close(fs);
    }
    free(f);
}

static void test_rig_hostile(void **state)
{
    (void)state;
    size_t size;
    struct fx_rig_layout rl;
    uint8_t *f = build_rig(false, &size, &rl);
    uint8_t *h = malloc(size);
    struct rig_wrapped r;
    struct diag d;
    /* IK count 0xFFFFFFFF */
    memcpy(h, f, size);
    put32(h + rl.ik_pos, 0xFFFFFFFF, false);
    parse_rig(h, size, &r, &d, 0);
    assert_false(r.ik_ok);
    assert_non_null(strstr(r.ik_err, "count 4294967295"));
    assert_true(r.lists[3].ok);
    diag_free(&d);
    rig_free_wrapped(&r);
    {   /* and the tree built on it: ik_chains.error, the rest browsable */
        struct s3fs *fs = open_mem(h, size, NULL, NULL);
        uint32_t ino;
        assert_int_equal(tree_resolve(fs->tree, "/ik_chains.error", &ino), 0);
        assert_int_equal(tree_resolve(fs->tree, "/full_bone_list", &ino), 0);
        /* this GR2 has no skeleton: no names, and /info says why */
        assert_int_equal(tree_resolve(fs->tree, "/full_bone_list.names", &ino), S3_ERR_NOT_FOUND);
        assert_true(diag_has(&fs->diag, "bone names unavailable"));
        s3fs_close(fs);
    }
    /* list count 0xFFFFFFFF and a list offset past the end */
    memcpy(h, f, size);
    put32(h + rl.list_pos[0], 0xFFFFFFFF, false);
    put32(h + 24, 0x7FFFFFF0, false);
    parse_rig(h, size, &r, &d, 0);
    assert_false(r.lists[0].ok);
    assert_false(r.lists[1].ok);
    assert_non_null(strstr(r.lists[1].err, "past the end"));
    assert_true(r.lists[2].ok);
    diag_free(&d);
    rig_free_wrapped(&r);
    /* a chain with a huge link count, and every entry offset naming the same entry */
    memcpy(h, f, size);
    put32(h + rl.entry_pos[0] + 4, 0x10000000, false);
    put32(h + rl.ik_pos + 8, 0xFFFFFFFC, false);
    parse_rig(h, size, &r, &d, 0);
    assert_true(r.ik_ok);
    assert_false(r.entries[0].ok);
    assert_false(r.entries[1].ok);
    assert_true(diag_has(&d, "neither reading"));
    diag_free(&d);
    rig_free_wrapped(&r);
    /* overlapping blocks and a disagreeing int2_offset: warnings, still mounted */
    memcpy(h, f, size);
    put32(h + 8, 12345, false);
    put32(h + 20, (uint32_t)(rl.list_pos[3] - 20), false);
    struct s3fs *fs = open_mem(h, size, NULL, NULL);
    assert_true(diag_has(&fs->diag, "int2_offset 12345"));
    assert_true(diag_has(&fs->diag, "blocks overlap"));
    s3fs_close(fs);
    /* bad Granny data inside: granny.error, the rest stays */
    memcpy(h, f, size);
    h[rl.granny_pos] ^= 0xff;
    fs = open_mem(h, size, NULL, NULL);
    uint32_t ino;
    assert_int_equal(tree_resolve(fs->tree, "/granny.error", &ino), 0);
    assert_int_equal(tree_resolve(fs->tree, "/ik_chains/1/links/2/end", &ino), 0);
    s3fs_close(fs);
    free(h);
    free(f);
}

static uint32_t rd_le32(const uint8_t *p)
{
    return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* A section's plan to be stored raw (docs/formats/gr2.md, section header): compression
 * 0, the data at `at`, data and expanded size the new length, first16bit = first8bit =
 * the length; then padding to 4 and, when the tables were compressed with the section
 * (BitKnit2), the fixups (12 bytes each) and marshalling (16 each) raw; total_size the
 * end. Where it may go and how big it may be are checked. */
static void raw_plan_case(const struct fxg_opts *o, bool tables_move)
{
    struct fxg_result r;
    size_t size;
    uint8_t *f = fxg_build(o, &size, &r);
    struct mem_src_ctx mc;
    struct s3_src src;
    mem_src_init(&src, &mc, f, size);
    struct gr2_file g;
    struct diag d = {0};
    char err[256];
    assert_int_equal(gr2_parse(&src, 0, &g, &d, err, sizeof err), S3_OK);
    const struct gr2_section *s = &g.sections[0];
    uint32_t nfix = s->fixup_count, nmar = s->marshal_count, len = 1001, at = (g.total_size + 3) & ~3u;
    struct gr2_raw_plan p;
    assert_int_equal(gr2_raw_section_plan(&src, &g, 0, at, len, &p, err, sizeof err), S3_OK);
    uint32_t tables = tables_move ? 12 * nfix + 16 * nmar : 0;
    assert_int_equal(p.after_len, 3 + tables); /* 1001 + 3 is a multiple of 4 */
    assert_int_equal(p.total, at + 1004 + tables);
    assert_int_equal(p.total_field, 0x24);
    assert_int_equal(rd_le32(p.total_bytes), p.total);
    const uint32_t want[11] = {0, at, len, len, s->alignment, len, len,
                               tables_move ? at + 1004 : s->fixup_offset, nfix,
                               tables_move ? at + 1004 + 12 * nfix : s->marshal_offset, nmar};
    for (int i = 0; i < 11; i++)
        assert_int_equal(rd_le32(p.header + 4 * i), want[i]);
    if (tables_move) { /* the first fixup raw: its three fields as the parser reads them */
        struct gr2_fixup *fx = NULL;
        uint32_t n = 0;
        assert_int_equal(gr2_read_fixups(&src, &g, 0, &fx, &n, err, sizeof err), S3_OK);
        assert_true(n > 0);
        assert_int_equal(rd_le32(p.after + 3), fx[0].from_offset);
        assert_int_equal(rd_le32(p.after + 7), fx[0].to_section);
        assert_int_equal(rd_le32(p.after + 11), fx[0].to_offset);
        free(fx);
    }
    free(p.after);
    /* not aligned, inside the data, past 4 GiB */
    assert_int_equal(gr2_raw_section_plan(&src, &g, 0, at + 2, len, &p, err, sizeof err), S3_ERR_RANGE);
    assert_int_equal(gr2_raw_section_plan(&src, &g, 0, at - 4, len, &p, err, sizeof err), S3_ERR_RANGE);
    assert_int_equal(gr2_raw_section_plan(&src, &g, 0, at, UINT32_MAX, &p, err, sizeof err), S3_ERR_LIMIT);
    assert_non_null(strstr(err, "past 4 GiB"));
    assert_int_equal(gr2_raw_section_plan(&src, &g, g.nsections, at, len, &p, err, sizeof err), S3_ERR_RANGE);
    gr2_free(&g);
    free(r.section);
    free(f);
}

static void test_gr2_raw_section_plan(void **state)
{
    (void)state;
    struct fxg_opts oodle0 = {.sig = "le32-old", .version = 6, .nbones = 5, .oodle0_objects = true};
    raw_plan_case(&oodle0, false);
    struct fxg_opts bk2 = {.sig = "le32", .version = 7, .nbones = 5, .bitknit2_objects = true, .nmarshals = 2};
    raw_plan_case(&bk2, true);
}

static void test_unrecognised(void **state)
{
    (void)state;
    struct s3fs *fs;
    char err[256];
    assert_open_refused(s3fs_open_mem(&fs, "garbage garbage garbage", 23, NULL, err, sizeof err), S3_ERR_FORMAT, S3_EXIT_FORMAT);
    assert_non_null(strstr(err, "unrecognised format"));
    assert_null(strchr(err, '\n'));
    assert_non_null(strstr(err, "(first bytes 67 61 72 62 61 67 65 20)"));
    /* a file shorter than 8 bytes: its bytes, not the zeros past its end */
    assert_open_refused(s3fs_open_mem(&fs, "\x05\x06\x07", 3, NULL, err, sizeof err), S3_ERR_FORMAT, S3_EXIT_FORMAT);
    assert_non_null(strstr(err, "(all its bytes: 05 06 07)"));
    /* a t2fs root table (1 child: offsets 16 and 24, the 16-byte table then 8 bytes of leaf):
     * cut inside its leaf, it mounts (test_t2fs); cut inside the table itself, it is refused,
     * said as that, with the end of the table */
    uint8_t t2[24] = {1, 0, 0, 0, 16, 0, 0, 0, 24, 0, 0, 0, 0, 0, 0, 0, 'l', 'e', 'a', 'f', 'l', 'e', 'a', 'f'};
    fs = open_mem(t2, sizeof t2, NULL, NULL); /* whole: a t2fs file */
    s3fs_close(fs);
    assert_open_refused(s3fs_open_mem(&fs, t2, 12, NULL, err, sizeof err), S3_ERR_FORMAT, S3_EXIT_FORMAT);
    if (!strstr(err, "a t2fs container cut short (little-endian, root at 0): its root table ends at byte 16, "
                     "the file has 12"))
        fail_msg("%s", err);
    /* recognised as a clear RIG (major 3), but no layout fits: refused with the reason */
    uint8_t clear[8] = {3, 0, 0, 0, 1, 0, 0, 0};
    assert_open_refused(s3fs_open_mem(&fs, clear, sizeof clear, NULL, err, sizeof err), S3_ERR_FORMAT, S3_EXIT_FORMAT);
    assert_non_null(strstr(err, "neither the TS3 layout"));
}

/* The exit status a command gives for s3fs_open's reason (mount.s3rig(8), EXIT STATUS):
 * 3 for a file no format takes or whose header cannot be read as its format, 2 for one
 * that cannot be opened or read; every reason has one. */
static void test_exit_of_reasons(void **state)
{
    (void)state;
    assert_int_equal(s3_exit_of(S3_OK), 0);
    static const enum s3_err not_format[] = {S3_ERR_FORMAT, S3_ERR_RANGE, S3_ERR_UNSUPPORTED, S3_ERR_LIMIT};
    for (size_t i = 0; i < sizeof not_format / sizeof *not_format; i++)
        assert_int_equal(s3_exit_of(not_format[i]), 3);
    static const enum s3_err unopened[] = {S3_ERR_NOMEM, S3_ERR_IO, S3_ERR_NOT_FOUND, S3_ERR_IS_DIR,
                                           S3_ERR_INVALID, S3_ERR_DENIED};
    for (size_t i = 0; i < sizeof unopened / sizeof *unopened; i++)
        assert_int_equal(s3_exit_of(unopened[i]), 2);
    for (int e = S3_ERR_NOMEM; e < S3_ERR_COUNT; e++) {
        int status = s3_exit_of((enum s3_err)e);
        assert_true(status == 2 || status == 3);
    }
}

/* alloc_array: an empty array is a pointer to free, zeroed memory otherwise, NULL only
 * when n * size does not fit in size_t. Every s3_err has its own sentence. */
static void test_alloc_array_and_errors(void **state)
{
    (void)state;
    void *empty = alloc_array(0, sizeof(uint64_t));
    assert_non_null(empty);
    free(empty);
    uint32_t *a = alloc_array(100, sizeof *a);
    assert_non_null(a);
    for (size_t i = 0; i < 100; i++)
        assert_int_equal(a[i], 0);
    free(a);
    assert_null(alloc_array(SIZE_MAX / 4 + 1, 4));
    assert_null(alloc_array(SIZE_MAX, SIZE_MAX));
    for (int e = 0; e < S3_ERR_COUNT; e++) {
        assert_true(s3_err_str((enum s3_err)e)[0] != 0);
        for (int k = 0; k < e; k++)
            assert_string_not_equal(s3_err_str((enum s3_err)k), s3_err_str((enum s3_err)e));
    }
    assert_string_equal(s3_err_str(S3_ERR_COUNT), "unknown error");
    /* the map FUSE replies with (issue 31): each reason's errno, by the table in err.h */
    static const struct {
        enum s3_err e;
        int errnum;
    } map[] = {
        {S3_OK, 0},
        {S3_ERR_NOMEM, ENOMEM},
        {S3_ERR_IO, EIO},
        {S3_ERR_FORMAT, EIO},
        {S3_ERR_RANGE, ERANGE},
        {S3_ERR_LIMIT, EIO},
        {S3_ERR_UNSUPPORTED, ENOTSUP},
        {S3_ERR_NOT_FOUND, ENOENT},
        {S3_ERR_NOT_DIR, ENOTDIR},
        {S3_ERR_IS_DIR, EISDIR},
        {S3_ERR_STALE, ESTALE},
        {S3_ERR_READONLY, EROFS},
        {S3_ERR_TOO_BIG, EFBIG},
        {S3_ERR_BUSY, EBUSY},
        {S3_ERR_INVALID, EINVAL},
        {S3_ERR_DENIED, EACCES},
        {S3_ERR_NOSPACE, ENOSPC},
        {S3_ERR_NO_ATTR, ENODATA},
    };
    assert_int_equal(sizeof map / sizeof *map, S3_ERR_COUNT); /* every reason mapped */
    for (size_t i = 0; i < sizeof map / sizeof *map; i++) {
        assert_int_equal(map[i].e, (enum s3_err)i);
        assert_int_equal(s3_err_errno(map[i].e), map[i].errnum);
        /* back: one to one but for FORMAT and LIMIT, which read as EIO (IO) */
        enum s3_err back = map[i].e == S3_ERR_FORMAT || map[i].e == S3_ERR_LIMIT ? S3_ERR_IO : map[i].e;
        assert_int_equal(s3_err_of_errno(map[i].errnum), back);
    }
    assert_int_equal(s3_err_errno(S3_ERR_COUNT), EIO); /* out of range: still an errno */
    assert_int_equal(s3_err_of_errno(EPERM), S3_ERR_DENIED);
    assert_int_equal(s3_err_of_errno(ENOSPC), S3_ERR_NOSPACE); /* a full disk stays ENOSPC */
    assert_int_equal(s3_err_of_errno(EXDEV), S3_ERR_IO);       /* no reason of ours */
}

/* grow_array: room for what is asked, the elements kept, capacity doubling (a few
 * reallocations for many appends: linear in all), and an impossible size NOMEM with the
 * array and its capacity untouched. */
static void test_grow_array(void **state)
{
    (void)state;
    uint64_t *a = NULL;
    size_t n = 0, cap = 0;
    unsigned grown = 0;
    for (uint64_t i = 0; i < 100000; i++) {
        size_t before = cap;
        assert_int_equal(grow_array(&a, &cap, n + 1, sizeof *a), S3_OK);
        assert_true(cap >= n + 1);
        grown += cap != before;
        a[n++] = i * 7;
    }
    assert_true(grown <= 20); /* doubling: about log2(100000) = 17 */
    for (uint64_t i = 0; i < n; i++)
        assert_int_equal(a[i], i * 7);
    uint64_t *same = a;
    size_t had = cap;
    assert_int_equal(grow_array(&a, &cap, cap, sizeof *a), S3_OK); /* room already: nothing moves */
    assert_ptr_equal(a, same);
    assert_int_equal(cap, had);
    assert_int_equal(grow_array(&a, &cap, SIZE_MAX / sizeof *a + 1, sizeof *a), S3_ERR_NOMEM);
    assert_int_equal(grow_array(&a, &cap, SIZE_MAX, sizeof *a), S3_ERR_NOMEM);
    assert_ptr_equal(a, same);
    assert_int_equal(cap, had);
    assert_int_equal(a[n - 1], (n - 1) * 7);
    free(a);
    char *c = NULL; /* a first growth to more than the minimum takes what is asked */
    size_t ccap = 0;
    assert_int_equal(grow_array(&c, &ccap, 1000, 1), S3_OK);
    assert_true(ccap >= 1000);
    memset(c, 1, 1000);
    free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reader_bounds),
        cmocka_unit_test(test_alloc_array_and_errors),
        cmocka_unit_test(test_grow_array),
        cmocka_unit_test(test_exit_of_reasons),
        cmocka_unit_test(test_crc32_check_value),
        cmocka_unit_test(test_detect),
        cmocka_unit_test(test_gr2_variants),
        cmocka_unit_test(test_gr2_crc_mismatch),
        cmocka_unit_test(test_gr2_compression_codes),
        cmocka_unit_test(test_gr2_empty_sections),
        cmocka_unit_test(test_gr2_truncated_everywhere),
        cmocka_unit_test(test_gr2_hostile_counts),
        cmocka_unit_test(test_rig_both_readings),
        cmocka_unit_test(test_rig_granny_resize_plan),
        cmocka_unit_test(test_rig_truncated_everywhere),
        cmocka_unit_test(test_rig_hostile),
        cmocka_unit_test(test_unrecognised),
        cmocka_unit_test(test_gr2_raw_section_plan),
    };
    return cmocka_run_group_tests_name("parse", tests, NULL, NULL);
}
