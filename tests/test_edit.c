/* Field encoders and the pending-edits overlay (fs/core/edit.h): texts as each field type
 * takes them, refusals with their reasons, patches merged as later writes win, and the
 * streamed writer with a CRC fix. Expected bytes are written out by hand from the types'
 * definitions (little/big-endian two's complement, IEEE-754 binary32). */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#include "fs/core/edit.h"

static void test_type_names(void **state)
{
    (void)state;
    struct field_type ft;
    assert_int_equal(field_type_parse("u32", 4, &ft), 0);
    assert_int_equal(ft.kind, FIELD_U32);
    assert_int_equal(ft.count, 1);
    assert_int_equal(field_type_parse("i32[10]", 40, &ft), 0);
    assert_int_equal(ft.kind, FIELD_I32);
    assert_int_equal(ft.count, 10);
    assert_int_equal(field_type_parse("gr2.Real32[3] name=a/b", 12, &ft), 0);
    assert_int_equal(ft.kind, FIELD_F32);
    assert_int_equal(ft.count, 3);
    assert_int_equal(field_type_parse("gr2.NormalUInt8", 1, &ft), 0);
    assert_int_equal(ft.kind, FIELD_U8);
    assert_int_equal(field_type_parse("f32[3][3]", 36, &ft), 0);
    assert_int_equal(ft.count, 9);
    /* not fields: other types, spans that are not whole elements, no span */
    assert_int_equal(field_type_parse("gr2.Real16", 2, &ft), S3_ERR_INVALID);
    assert_int_equal(field_type_parse("gr2.String", 4, &ft), S3_ERR_INVALID);
    assert_int_equal(field_type_parse("u32", 6, &ft), S3_ERR_INVALID);
    assert_int_equal(field_type_parse("u32", 0, &ft), S3_ERR_INVALID);
    assert_int_equal(field_type_parse("u32x", 4, &ft), S3_ERR_INVALID);
    assert_int_equal(field_type_parse("crc32", 4, &ft), S3_ERR_INVALID);
    assert_int_equal(field_type_parse(NULL, 4, &ft), S3_ERR_INVALID);
}

static enum s3_err enc(const char *type, uint64_t span, bool be, const char *text, uint8_t *out, char *why)
{
    struct field_type ft;
    assert_int_equal(field_type_parse(type, span, &ft), 0);
    return field_encode(&ft, be, text, strlen(text), out, why, 200);
}

static void test_encode_values(void **state)
{
    (void)state;
    uint8_t b[16];
    char why[200];
    assert_int_equal(enc("u32", 4, false, "305419896\n", b, why), 0);
    assert_memory_equal(b, "\x78\x56\x34\x12", 4);
    assert_int_equal(enc("u32", 4, true, "0x12345678", b, why), 0);
    assert_memory_equal(b, "\x12\x34\x56\x78", 4);
    assert_int_equal(enc("i32", 4, false, "  -2 \n", b, why), 0);
    assert_memory_equal(b, "\xfe\xff\xff\xff", 4);
    assert_int_equal(enc("u8", 1, false, "255", b, why), 0);
    assert_int_equal(b[0], 255);
    assert_int_equal(enc("gr2.Int16", 2, true, "-32768\n", b, why), 0);
    assert_memory_equal(b, "\x80\x00", 2);
    assert_int_equal(enc("u32", 4, false, "010\n", b, why), 0); /* decimal, never octal */
    assert_memory_equal(b, "\x0a\x00\x00\x00", 4);
    /* 1.5 = 0x3FC00000; -2 = 0xC0000000 */
    assert_int_equal(enc("gr2.Real32[2]", 8, false, "1.5\n-2\n", b, why), 0);
    assert_memory_equal(b, "\x00\x00\xc0\x3f\x00\x00\x00\xc0", 8);
    assert_int_equal(enc("i32[3]", 12, false, "1\n2\n3", b, why), 0); /* last newline optional */
    assert_memory_equal(b, "\x01\0\0\0\x02\0\0\0\x03\0\0\0", 12);
}

static void test_encode_refusals(void **state)
{
    (void)state;
    uint8_t b[16];
    char why[200];
    assert_int_equal(enc("u8", 1, false, "300\n", b, why), S3_ERR_INVALID);
    assert_non_null(strstr(why, "does not fit a u8"));
    assert_int_equal(enc("gr2.Real32", 4, false, "abc\n", b, why), S3_ERR_INVALID);
    assert_non_null(strstr(why, "not a number"));
    assert_int_equal(enc("f32", 4, false, "1e39\n", b, why), S3_ERR_INVALID);
    assert_non_null(strstr(why, "does not fit an f32"));
    assert_int_equal(enc("u32", 4, false, "-1\n", b, why), S3_ERR_INVALID);
    assert_int_equal(enc("u32", 4, false, "4294967296\n", b, why), S3_ERR_INVALID);
    assert_int_equal(enc("i32", 4, false, "2147483648\n", b, why), S3_ERR_INVALID);
    assert_int_equal(enc("i32", 4, false, "-2147483649\n", b, why), S3_ERR_INVALID);
    assert_int_equal(enc("i8", 1, false, "-129", b, why), S3_ERR_INVALID);
    assert_int_equal(enc("u32", 4, false, "12abc\n", b, why), S3_ERR_INVALID);
    assert_non_null(strstr(why, "not an integer"));
    assert_int_equal(enc("u32", 4, false, "", b, why), S3_ERR_INVALID);
    assert_int_equal(enc("u32", 4, false, "\n", b, why), S3_ERR_INVALID);
    assert_int_equal(enc("i32[3]", 12, false, "1\n2\n", b, why), S3_ERR_INVALID);
    assert_non_null(strstr(why, "2 lines for 3 values"));
    assert_int_equal(enc("i32[3]", 12, false, "1\n2\n3\n4\n", b, why), S3_ERR_INVALID);
    assert_non_null(strstr(why, "more than 3 lines"));
}

/* Several values a line (a matrix's rows, a vector on one line): the field's elements in
 * order, whatever the line breaks; the count of all components must be the field's. */
static void test_encode_multi_value_lines(void **state)
{
    (void)state;
    uint8_t b[36];
    char why[200];
    /* scale_shear's rows: identity times 2, as binary32 (2.0 = 0x40000000), little-endian */
    assert_int_equal(enc("f32[3][3]", 36, false, "2 0 0\n0 2 0\n0 0 2\n", b, why), 0);
    for (int i = 0; i < 9; i++) {
        const uint8_t two[4] = {0, 0, 0, 0x40}, zero[4] = {0};
        assert_memory_equal(b + 4 * i, i % 4 == 0 ? two : zero, 4);
    }
    /* blanks of any kind between values, big-endian, one line for a quaternion */
    assert_int_equal(enc("gr2.Int16[4]", 8, true, " 1\t-2  3 4 \r\n", b, why), 0);
    assert_memory_equal(b, "\x00\x01\xff\xfe\x00\x03\x00\x04", 8);
    /* a component missing, one too many, a bad one, an empty line between rows */
    assert_int_equal(enc("f32[3][3]", 36, false, "1 0 0\n0 1 0\n0 0\n", b, why), S3_ERR_INVALID);
    assert_non_null(strstr(why, "8 values for 9"));
    assert_int_equal(enc("f32[3][3]", 36, false, "1 0 0\n0 1 0\n0 0 1 0\n", b, why), S3_ERR_INVALID);
    assert_non_null(strstr(why, "more than 9 values"));
    assert_int_equal(enc("f32[3][3]", 36, false, "1 0 0\n0 x 0\n0 0 1\n", b, why), S3_ERR_INVALID);
    assert_non_null(strstr(why, "'x' is not a number"));
    assert_int_equal(enc("f32[3][3]", 36, false, "1 0 0\n\n0 1 0\n0 0 1\n", b, why), S3_ERR_INVALID);
    assert_non_null(strstr(why, "empty line"));
    assert_int_equal(enc("u8[2]", 2, false, "1 256\n", b, why), S3_ERR_INVALID);
    assert_non_null(strstr(why, "does not fit a u8"));
}

/* A table of 2 records of 8 bytes: a numbered row, an f32 at 0, a u16 pair at 4 (big-
 * endian), and byte 6 as a raw hex cell; byte 7 belongs to no column. */
static void test_table_encode(void **state)
{
    (void)state;
    static const struct table_col cols[] = {{.kind = FIELD_F32, .offset = 0, .count = 1},
                                            {.kind = FIELD_U16, .offset = 4, .count = 1},
                                            {.kind = FIELD_U8, .offset = 6, .count = 1, .raw = true}};
    struct table_field tf = {.nrec = 2, .stride = 8, .numbered = true, .be = true, .header = "index,f,u,raw",
                             .cols = cols, .ncols = 3};
    assert_int_equal(table_row_cells(&tf), 4);
    uint8_t recs[16], nan_bits[4] = {0x7f, 0xc0, 0x12, 0x34}; /* a NaN with a payload */
    memset(recs, 0xee, sizeof recs);
    memcpy(recs + 8, nan_bits, 4);
    char why[200];
    const char *text = "index,f,u,raw\n0,1.5,513,a0\n1, nan ,2,0F\r\n";
    assert_int_equal(table_encode(&tf, text, strlen(text), recs, why, sizeof why), 0);
    /* 1.5 = 0x3fc00000, 513 = 0x0201, big-endian; byte 7 kept; the NaN kept bit for bit */
    assert_memory_equal(recs, "\x3f\xc0\x00\x00\x02\x01\xa0\xee", 8);
    assert_memory_equal(recs + 8, "\x7f\xc0\x12\x34\x00\x02\x0f\xee", 8);
    const char *bad[][2] = {
        {"index,f,u\n0,1,2,00\n1,1,2,00\n", "header"},
        {"index,f,u,raw\n0,1,2,00\n", "1 rows for 2 records"},
        {"index,f,u,raw\n0,1,2,00\n1,1,2,00\n2,1,2,00\n", "more than 2 rows"},
        {"index,f,u,raw\n0,1,2,00\n1,1,2\n", "row 2: 3 cells for 4"},
        {"index,f,u,raw\n1,1,2,00\n0,1,2,00\n", "its number must stay 0"},
        {"index,f,u,raw\n0,1,65536,00\n1,1,2,00\n", "row 1: 65536 does not fit a u16"},
        {"index,f,u,raw\n0,1,2,0g\n1,1,2,00\n", "not 1 bytes as hex"},
        {"index,f,u,raw\n0,1,2,000\n1,1,2,00\n", "not 1 bytes as hex"},
        {"", "0 rows for 2 records"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(table_encode(&tf, bad[i][0], strlen(bad[i][0]), recs, why, sizeof why), S3_ERR_INVALID);
        if (!strstr(why, bad[i][1]))
            fail_msg("case %zu: '%s' lacks '%s'", i, why, bad[i][1]);
    }
}

/* The top 4 bits of the little-endian u16 at 8 (a derived cell's text). */
static void top_bits(const uint8_t *rec, const void *ctx, char *out, size_t outlen)
{
    (void)ctx;
    snprintf(out, outlen, "%u", rec[9] >> 4);
}

/* u64 cells (decimal or 0x hex, little-endian) and a derived column: records of 10
 * bytes, a u64 at 0 and a u16 at 8 whose top 4 bits a derived cell shows. A derived cell
 * may stay as the old bytes show it or say what the new ones show; anything else is
 * EINVAL naming the column, as is a u64 that does not parse or fit. */
static void test_table_u64_and_derived(void **state)
{
    (void)state;
    static const struct table_col cols[] = {{.kind = FIELD_U64, .offset = 0, .count = 1},
                                            {.kind = FIELD_U16, .offset = 8, .count = 1},
                                            {.count = 1, .derive = top_bits, .name = "top"}};
    struct table_field tf = {.nrec = 1, .stride = 10, .numbered = true, .header = "index,id,word,top", .cols = cols,
                             .ncols = 3};
    assert_int_equal(table_row_cells(&tf), 4);
    uint8_t recs[10] = {0};
    recs[9] = 0x30; /* word 0x3000: top 3 */
    char why[200];
    const char *ok[] = {"index,id,word,top\n0,0x0123456789abcdef,0x5001,3\n", /* the old top */
                        "index,id,word,top\n0,0x0123456789abcdef,0x5001,5\n", /* the new top */
                        "index,id,word,top\n0,18446744073709551615,4096,1\n"};
    const uint8_t want[][10] = {{0xef, 0xcd, 0xab, 0x89, 0x67, 0x45, 0x23, 0x01, 0x01, 0x50},
                                {0xef, 0xcd, 0xab, 0x89, 0x67, 0x45, 0x23, 0x01, 0x01, 0x50},
                                {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x10}};
    for (int i = 0; i < 3; i++) {
        uint8_t r[10] = {0};
        r[9] = 0x30;
        assert_int_equal(table_encode(&tf, ok[i], strlen(ok[i]), r, why, sizeof why), 0);
        assert_memory_equal(r, want[i], 10);
    }
    const char *bad[][2] = {
        {"index,id,word,top\n0,1,0x5001,7\n", "row 1: top is not stored but shown from the record's other cells ('5')"},
        {"index,id,word,top\n0,18446744073709551616,0x3000,3\n", "does not fit a u64"},
        {"index,id,word,top\n0,-1,0x3000,3\n", "'-1' is not an integer (u64)"},
        {"index,id,word,top\n0,0x,0x3000,3\n", "'0x' is not an integer (u64)"},
        {"index,id,word,top\n0,12z,0x3000,3\n", "'12z' is not an integer (u64)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(table_encode(&tf, bad[i][0], strlen(bad[i][0]), recs, why, sizeof why), S3_ERR_INVALID);
        if (!strstr(why, bad[i][1]))
            fail_msg("case %zu: '%s' lacks '%s'", i, why, bad[i][1]);
    }
}

/* A CRC range that runs on into the appended bytes (a Granny section stored raw after
 * the data) covers them too: CRC-32 of the new bytes [4, 14) then the tail "!!" (to 16). */
static void test_crc_into_tail(void **state)
{
    (void)state;
    char in[] = "/tmp/s3rig-edit-tin-XXXXXX", out[] = "/tmp/s3rig-edit-tout-XXXXXX";
    int fi = mkstemp(in), fo = mkstemp(out);
    assert_true(fi >= 0 && fo >= 0);
    assert_int_equal(write(fi, "0123456789ABCD", 14), 14);
    struct edits e = {0};
    assert_int_equal(edits_put(&e, 6, "xy", 2), 0);
    assert_int_equal(edits_append(&e, "!!", 2), 0);
    struct crc_fix fix = {.field_off = 0, .from = 4, .to = 16, .be = false};
    assert_int_equal(edits_write(fi, 14, &e, &fix, 1, fo), 0);
    uint8_t got[32];
    assert_int_equal(pread(fo, got, sizeof got, 0), 16);
    uint32_t c = (uint32_t)crc32(crc32(0, NULL, 0), (const Bytef *)"45xy89ABCD!!", 12);
    const uint8_t le[4] = {(uint8_t)c, (uint8_t)(c >> 8), (uint8_t)(c >> 16), (uint8_t)(c >> 24)};
    assert_memory_equal(got, le, 4);
    assert_memory_equal(got + 4, "45xy89ABCD!!", 12);
    edits_clear(&e);
    close(fi), close(fo);
    unlink(in), unlink(out);
}

static void test_check_prefix(void **state)
{
    (void)state;
    struct field_type ft;
    char why[200];
    assert_int_equal(field_type_parse("u8[2]", 2, &ft), 0);
    assert_int_equal(field_check_prefix(&ft, "30", 2, why, sizeof why), 0); /* "300" may come */
    assert_int_equal(field_check_prefix(&ft, "300\n", 4, why, sizeof why), S3_ERR_INVALID);
    assert_int_equal(field_check_prefix(&ft, "1\n2\n3", 5, why, sizeof why), S3_ERR_INVALID);
    assert_int_equal(field_check_prefix(&ft, "1\n2\n", 4, why, sizeof why), 0);
}

static void test_overlay_merges(void **state)
{
    (void)state;
    struct edits e = {0};
    assert_int_equal(edits_put(&e, 10, "abcd", 4), 0);
    assert_int_equal(edits_put(&e, 20, "xy", 2), 0);
    assert_int_equal(edits_put(&e, 0, "Q", 1), 0);
    assert_int_equal(e.n, 3);
    assert_true(edits_touch(&e, 12, 1));
    assert_false(edits_touch(&e, 14, 6));
    assert_true(edits_touch(&e, 14, 7));
    /* overlapping both of the later ones and the gap between: one edit, newest on top */
    assert_int_equal(edits_put(&e, 12, "0123456789", 10), 0);
    assert_int_equal(e.n, 2);
    assert_int_equal(e.e[1].off, 10);
    assert_int_equal(e.e[1].len, 12);
    assert_memory_equal(e.e[1].bytes, "ab0123456789", 12);
    /* touching (adjacent) writes merge too: sequential writes make one edit */
    for (uint64_t k = 0; k < 1000; k++)
        assert_int_equal(edits_put(&e, 100 + k, "z", 1), 0);
    assert_int_equal(e.n, 3);
    assert_int_equal(e.e[2].len, 1000);
    assert_int_equal(edits_bytes(&e), 1 + 12 + 1000);
    edits_clear(&e);
    assert_int_equal(e.n, 0);
}

static void test_write_with_crc(void **state)
{
    (void)state;
    char in[] = "/tmp/s3rig-edit-in-XXXXXX", out[] = "/tmp/s3rig-edit-out-XXXXXX";
    int fi = mkstemp(in), fo = mkstemp(out);
    assert_true(fi >= 0 && fo >= 0);
    /* bigger than one chunk, so edits and the CRC cross chunk boundaries */
    size_t size = (3u << 20) + 17;
    uint8_t *old = malloc(size), *want = malloc(size), *got = malloc(size + 1);
    assert_non_null(old);
    for (size_t i = 0; i < size; i++)
        old[i] = (uint8_t)(i * 7 + 3);
    assert_int_equal(write(fi, old, size), (ssize_t)size);
    memcpy(want, old, size);
    struct edits e = {0};
    uint8_t patch[100];
    memset(patch, 0xAB, sizeof patch);
    assert_int_equal(edits_put(&e, (1u << 20) - 50, patch, sizeof patch), 0);
    memcpy(want + (1u << 20) - 50, patch, sizeof patch);
    assert_int_equal(edits_put(&e, size - 1, "Z", 1), 0);
    want[size - 1] = 'Z';
    struct crc_fix fix = {.field_off = 4, .from = 8, .to = size - 5, .be = true};
    uint32_t c = (uint32_t)crc32(crc32(0, NULL, 0), want + 8, (uInt)(size - 13));
    want[4] = (uint8_t)(c >> 24), want[5] = (uint8_t)(c >> 16), want[6] = (uint8_t)(c >> 8), want[7] = (uint8_t)c;
    assert_int_equal(edits_write(fi, size, &e, &fix, 1, fo), 0);
    assert_int_equal(pread(fo, got, size + 1, 0), (ssize_t)size);
    assert_memory_equal(got, want, size);
    /* a file shorter than it should be is an error, never a shorter copy */
    assert_int_equal(ftruncate(fo, 0), 0);
    assert_int_equal(lseek(fo, 0, SEEK_SET), 0);
    assert_int_equal(edits_write(fi, size + 10, &e, NULL, 0, fo), S3_ERR_IO);
    /* no CRC: the long unchanged stretches are copied by the kernel, the edits still land */
    assert_int_equal(ftruncate(fo, 0), 0);
    assert_int_equal(lseek(fo, 0, SEEK_SET), 0);
    memcpy(want, old, size);
    memcpy(want + (1u << 20) - 50, patch, sizeof patch);
    want[size - 1] = 'Z';
    assert_int_equal(edits_write(fi, size, &e, NULL, 0, fo), 0);
    assert_int_equal(pread(fo, got, size + 1, 0), (ssize_t)size);
    assert_memory_equal(got, want, size);
    edits_clear(&e);
    close(fi), close(fo);
    unlink(in), unlink(out);
    free(old), free(want), free(got);
}

/* A range replaced by bytes of another length: what precedes and follows it is copied
 * (with its own edits), edits inside it are dropped, a second splice waits. */
static void test_splice(void **state)
{
    (void)state;
    char in[] = "/tmp/s3rig-edit-sin-XXXXXX", out[] = "/tmp/s3rig-edit-sout-XXXXXX";
    int fi = mkstemp(in), fo = mkstemp(out);
    assert_true(fi >= 0 && fo >= 0);
    assert_int_equal(write(fi, "0123456789ABCDEF", 16), 16);
    struct edits e = {0};
    assert_int_equal(edits_put(&e, 1, "x", 1), 0);
    assert_int_equal(edits_put(&e, 5, "y", 1), 0);  /* inside the splice: dropped */
    assert_int_equal(edits_put(&e, 14, "z", 1), 0);
    uint8_t *b = malloc(7);
    memcpy(b, "spliced", 7);
    assert_int_equal(edits_splice(&e, 4, 8, b, 7), 0);
    uint8_t *b2 = malloc(1);
    assert_int_equal(edits_splice(&e, 10, 12, b2, 1), S3_ERR_BUSY);
    free(b2);
    assert_int_equal(edits_append(&e, "!", 1), 0);
    assert_int_equal(edits_write(fi, 16, &e, NULL, 0, fo), 0);
    char got[64] = "";
    assert_int_equal(pread(fo, got, sizeof got, 0), 20);
    assert_memory_equal(got, "0x23spliced89ABCDzF!", 20);
    edits_clear(&e);
    close(fi), close(fo);
    unlink(in), unlink(out);
}

/* A pending splice dropped (edits_drop_splice) and another made in its place: only the
 * second is written, the edits outside it stay, and its file is closed with it. */
static void test_splice_replaced(void **state)
{
    (void)state;
    char in[] = "/tmp/s3rig-edit-rin-XXXXXX", out[] = "/tmp/s3rig-edit-rout-XXXXXX";
    int fi = mkstemp(in), fo = mkstemp(out), dir = open("/tmp", O_RDONLY | O_DIRECTORY);
    assert_true(fi >= 0 && fo >= 0 && dir >= 0);
    assert_int_equal(write(fi, "0123456789ABCDEF", 16), 16);
    struct edits e = {0};
    assert_int_equal(edits_put(&e, 1, "x", 1), 0);
    int sfd = -1;
    assert_int_equal(edits_scratch(dir, &sfd), S3_OK);
    assert_true(sfd >= 0);
    assert_int_equal(pwrite(sfd, "first", 5, 0), 5);
    assert_int_equal(edits_splice_file(&e, 4, 8, sfd, 5), 0);
    edits_drop_splice(&e);
    assert_int_equal(fcntl(sfd, F_GETFD), -1); /* closed with the splice */
    assert_int_equal(edits_bytes(&e), 1);
    uint8_t *b = malloc(6);
    memcpy(b, "second", 6);
    assert_int_equal(edits_splice(&e, 4, 8, b, 6), 0);
    assert_int_equal(edits_write(fi, 16, &e, NULL, 0, fo), 0);
    char got[64] = "";
    assert_int_equal(pread(fo, got, sizeof got, 0), 18);
    assert_memory_equal(got, "0x23second89ABCDEF", 18);
    edits_clear(&e);
    close(fi), close(fo), close(dir);
    unlink(in), unlink(out);
}

/* The same, the splice and the appended bytes kept in files (edits_spill,
 * edits_splice_file): the same new file, none of those bytes in memory, and an append
 * taken back (edits_cut_tail) leaves nothing behind. */
static void test_spilled(void **state)
{
    (void)state;
    char in[] = "/tmp/s3rig-edit-fin-XXXXXX", out[] = "/tmp/s3rig-edit-fout-XXXXXX";
    int fi = mkstemp(in), fo = mkstemp(out), dir = open("/tmp", O_RDONLY | O_DIRECTORY);
    assert_true(fi >= 0 && fo >= 0 && dir >= 0);
    assert_int_equal(write(fi, "0123456789ABCDEF", 16), 16);
    struct edits e = {0};
    edits_spill(&e, dir);
    assert_int_equal(edits_put(&e, 1, "x", 1), 0);
    assert_int_equal(edits_put(&e, 14, "z", 1), 0);
    int sfd = -1;
    assert_int_equal(edits_scratch(dir, &sfd), S3_OK);
    assert_true(sfd >= 0);
    assert_int_equal(pwrite(sfd, "spliced", 7, 0), 7);
    assert_int_equal(edits_splice_file(&e, 4, 8, sfd, 7), 0);
    assert_int_equal(edits_append(&e, "!?", 2), 0);
    assert_int_equal(edits_append(&e, "taken back", 10), 0);
    edits_cut_tail(&e, 2);
    assert_int_equal(edits_mem_bytes(&e), 2); /* the two patches */
    assert_int_equal(edits_bytes(&e), 2 + 7 + 2);
    assert_int_equal(edits_write(fi, 16, &e, NULL, 0, fo), 0);
    char got[64] = "";
    assert_int_equal(pread(fo, got, sizeof got, 0), 21);
    assert_memory_equal(got, "0x23spliced89ABCDzF!?", 21);
    edits_clear(&e);
    assert_int_equal(edits_bytes(&e), 0);
    /* still spilled after a clear: the next append goes to a file again, and a CRC range
     * running on into it is read from there (test_crc_into_tail's case) */
    assert_int_equal(edits_put(&e, 6, "xy", 2), 0);
    assert_int_equal(edits_append(&e, "!!", 2), 0);
    assert_int_equal(edits_mem_bytes(&e), 2);
    struct crc_fix fix = {.field_off = 0, .from = 4, .to = 18, .be = false};
    assert_int_equal(ftruncate(fo, 0), 0);
    assert_int_equal(lseek(fo, 0, SEEK_SET), 0);
    assert_int_equal(edits_write(fi, 16, &e, &fix, 1, fo), 0);
    assert_int_equal(pread(fo, got, sizeof got, 0), 18);
    uint32_t c = (uint32_t)crc32(crc32(0, NULL, 0), (const Bytef *)"45xy89ABCDEF!!", 14);
    const uint8_t le[4] = {(uint8_t)c, (uint8_t)(c >> 8), (uint8_t)(c >> 16), (uint8_t)(c >> 24)};
    assert_memory_equal(got, le, 4);
    assert_memory_equal(got + 4, "45xy89ABCDEF!!", 14);
    edits_clear(&e);
    close(fi), close(fo), close(dir);
    unlink(in), unlink(out);
}

/* A full disk is NOSPACE (a commit's ENOSPC stays ENOSPC), from the new file's writes and
 * from the appended bytes' file alike; the edits stay as they were. */
static void test_full_disk_is_nospace(void **state)
{
    (void)state;
    char in[] = "/tmp/s3rig-edit-nin-XXXXXX";
    int fi = mkstemp(in), full = open("/dev/full", O_WRONLY);
    assert_true(fi >= 0 && full >= 0);
    assert_int_equal(write(fi, "0123456789ABCDEF", 16), 16);
    struct edits e = {0};
    assert_int_equal(edits_put(&e, 1, "x", 1), S3_OK);
    assert_int_equal(edits_write(fi, 16, &e, NULL, 0, full), S3_ERR_NOSPACE);
    /* the appended bytes' file on a full disk: what a spilled tail's write meets */
    edits_spill(&e, full); /* its folder unused: the tail's file is there already */
    e.tail_fd = open("/dev/full", O_RDWR) + 1;
    assert_true(e.tail_fd > 0);
    assert_int_equal(edits_append(&e, "!!", 2), S3_ERR_NOSPACE);
    assert_int_equal(e.tail_len, 0);
    edits_clear(&e);
    close(fi), close(full);
    unlink(in);
}

/* Holes of the tail (copies replaced before a commit) are written nowhere: the file is
 * the old bytes, then the appended ones but the holes, in order; a CRC range running into
 * the tail covers the bytes as written. In memory and spilled alike. */
static void holes_left_out(bool spilled)
{
    char in[] = "/tmp/s3rig-edit-hin-XXXXXX", out[] = "/tmp/s3rig-edit-hout-XXXXXX";
    int fi = mkstemp(in), fo = mkstemp(out), dir = open("/tmp", O_RDONLY | O_DIRECTORY);
    assert_true(fi >= 0 && fo >= 0 && dir >= 0);
    assert_int_equal(write(fi, "0123456789", 10), 10);
    struct edits e = {0};
    if (spilled)
        edits_spill(&e, dir);
    assert_int_equal(edits_append(&e, "AAAA", 4), 0);  /* [0, 4): replaced by the C's */
    assert_int_equal(edits_append(&e, "bbb", 3), 0);   /* [4, 7) */
    assert_int_equal(edits_append(&e, "CCCCC", 5), 0); /* [7, 12): replaced by the d's */
    assert_int_equal(edits_append(&e, "dd", 2), 0);    /* [12, 14) */
    assert_int_equal(edits_tail_hole(&e, 7, 12), 0);
    assert_int_equal(edits_tail_hole(&e, 0, 4), 0);
    assert_int_equal(e.nholes, 2);
    assert_int_equal(edits_tail_written(&e, 4), 0);
    assert_int_equal(edits_tail_written(&e, 12), 3);
    assert_int_equal(edits_bytes(&e), 5); /* what will be written */
    struct crc_fix fix = {.field_off = 0, .from = 2, .to = 15, .be = false};
    assert_int_equal(edits_write(fi, 10, &e, &fix, 1, fo), 0);
    char got[32] = "";
    assert_int_equal(pread(fo, got, sizeof got, 0), 15);
    uint32_t c = (uint32_t)crc32(crc32(0, NULL, 0), (const Bytef *)"23456789bbbdd", 13);
    const uint8_t le[4] = {(uint8_t)c, (uint8_t)(c >> 8), (uint8_t)(c >> 16), (uint8_t)(c >> 24)};
    assert_memory_equal(got, le, 4);
    assert_memory_equal(got + 4, "456789bbbdd", 11);
    /* touching holes become one; a cut of the tail takes the holes past it */
    assert_int_equal(edits_tail_hole(&e, 4, 7), 0);
    assert_int_equal(e.nholes, 1);
    assert_int_equal(e.holes[0].from, 0);
    assert_int_equal(e.holes[0].to, 12);
    edits_cut_tail(&e, 6);
    assert_int_equal(e.nholes, 1);
    assert_int_equal(e.holes[0].to, 6);
    assert_int_equal(edits_bytes(&e), 0);
    edits_clear(&e);
    assert_int_equal(e.nholes, 0);
    close(fi), close(fo), close(dir);
    unlink(in), unlink(out);
}

static void test_tail_holes(void **state)
{
    (void)state;
    holes_left_out(false);
    holes_left_out(true);
}

/* The same pending edits: each (offset, bytes), and the tail. */
static void assert_same_edits(const struct edits *a, const struct edits *b)
{
    assert_int_equal(a->n, b->n);
    for (size_t i = 0; i < a->n; i++) {
        assert_int_equal(a->e[i].off, b->e[i].off);
        assert_int_equal(a->e[i].len, b->e[i].len);
        assert_memory_equal(a->e[i].bytes, b->e[i].bytes, a->e[i].len);
    }
    assert_int_equal(a->tail_len, b->tail_len);
    assert_memory_equal(a->tail, b->tail, a->tail_len);
}

/* The same new file from `file` (32 bytes): the bytes with each one's edits over them,
 * and the tail. */
static void assert_same_effect(const struct edits *a, const struct edits *b, const uint8_t *file)
{
    uint8_t x[32], y[32];
    memcpy(x, file, 32);
    memcpy(y, file, 32);
    edits_overlay(a, 0, x, 32);
    edits_overlay(b, 0, y, 32);
    assert_memory_equal(x, y, 32);
    assert_int_equal(a->tail_len, b->tail_len);
    assert_memory_equal(a->tail, b->tail, a->tail_len);
}

/* A change refused half-way is taken back whole: each put in turn made to fail (the test
 * hook), after an append and the puts before it; the edits are then exactly what they were
 * (a put that made an edit of its own leaves none; one over pending bytes gives them
 * back), and what the file would be is unchanged. */
static void test_undo_takes_back(void **state)
{
    (void)state;
    const uint8_t file[32] = "................................";
    for (uint64_t fail = 1; fail <= 4; fail++) {
        struct edits e = {0}, ref = {0};
        assert_int_equal(edits_put(&e, 20, "pp", 2), 0); /* pending before: stays as it was */
        assert_int_equal(edits_append(&e, "tail", 4), 0);
        assert_int_equal(edits_put(&ref, 20, "pp", 2), 0);
        assert_int_equal(edits_append(&ref, "tail", 4), 0);
        struct edits_undo u;
        edits_undo_begin(&e, &u);
        assert_int_equal(edits_append(&e, "copy", 4), 0);
        edits_test_fail_put(fail);
        enum s3_err rc = edits_put_undoable(&e, &u, 2, "ABCD", 4, file + 2);
        if (!rc) /* over the pending bytes and touching them: merged into their edit */
            rc = edits_put_undoable(&e, &u, 19, "xyz", 3, file + 19);
        if (!rc)
            rc = edits_put_undoable(&e, &u, 8, "Q", 1, file + 8);
        if (!rc)
            rc = edits_put_undoable(&e, &u, 9, "R", 1, file + 9); /* touches Q's */
        assert_int_equal(rc, S3_ERR_NOMEM);
        edits_undo(&e, &u);
        if (fail <= 2) /* only puts of edits of their own before: none is left */
            assert_same_edits(&e, &ref);
        else
            assert_same_effect(&e, &ref, file);
        edits_clear(&e);
        edits_clear(&ref);
    }
    edits_test_fail_put(0);
    /* refused without changing anything: a full record, a patch too long */
    struct edits e = {0};
    struct edits_undo u;
    edits_undo_begin(&e, &u);
    uint8_t big[EDITS_UNDO_BYTES + 1] = {0};
    assert_int_equal(edits_put_undoable(&e, &u, 0, big, sizeof big, big), S3_ERR_LIMIT);
    assert_int_equal(e.n, 0);
    edits_clear(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_type_names),     cmocka_unit_test(test_encode_values),
        cmocka_unit_test(test_encode_refusals), cmocka_unit_test(test_check_prefix),
        cmocka_unit_test(test_overlay_merges),  cmocka_unit_test(test_write_with_crc),
        cmocka_unit_test(test_splice), cmocka_unit_test(test_splice_replaced),          cmocka_unit_test(test_encode_multi_value_lines),
        cmocka_unit_test(test_table_encode),    cmocka_unit_test(test_crc_into_tail),
        cmocka_unit_test(test_table_u64_and_derived),
        cmocka_unit_test(test_spilled),         cmocka_unit_test(test_full_disk_is_nospace),
        cmocka_unit_test(test_tail_holes),      cmocka_unit_test(test_undo_takes_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
