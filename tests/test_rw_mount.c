/* -o rw through real mounts: what is writable (mode bits), the lock, value files and
 * byte ranges written by the usual tools, committed, unmounted, mounted again and read
 * back; the rest of the tree unchanged; the Granny CRC right after; every refusal with its
 * errno and the file unchanged; open handles after a commit; a daemon killed while it
 * commits. Expected bytes come from the fixture's layout and the types' definitions. */
#include <dirent.h>
#include <pthread.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <ftw.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>
#include <nettle/sha2.h>

#include "fixture.h"
#include "fixture_dbpf.h"
#include "fixture_geom.h"
#include "fixture_gr2obj.h"
#include "fixture_t2fs.h"
#include "fixture_kinds.h"
#include "mountutil.h"
#include "tree_compare.h"

/* The wrapper header's unused_0 (word 9 of the 13). */
#define UNUSED0_POS 36

struct rig {
    uint8_t *bytes;
    size_t size;
    struct fx_rig_layout rl;
    struct fx_gr2_layout gl;
    char path[256], mnt[256];
};

static void rig_make(struct rig *r, const char *name)
{
    char names[FX_SAMPLE_BONES][32], mname[128];
    r->bytes = fx_sample_rig(&r->size, &r->rl, &r->gl, names);
    write_fixture(name, r->bytes, r->size, r->path, sizeof r->path);
    snprintf(mname, sizeof mname, "m-%s", name);
    make_mountpoint(mname, r->mnt, sizeof r->mnt);
}

static void rig_free(struct rig *r)
{
    free(r->bytes);
}

static uint8_t *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    uint8_t *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n == cap) {
            cap = cap ? 2 * cap : 65536;
            buf = realloc(buf, cap);
            assert_non_null(buf);
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        if (!got)
            break;
        n += got;
    }
    fclose(f);
    *size = n;
    return buf;
}

static char *text_of(const char *path)
{
    size_t n;
    uint8_t *b = slurp(path, &n);
    b = realloc(b, n + 1);
    b[n] = 0;
    return (char *)b;
}

/* open, write text, close: the errno of the first failing step (0: none) and which
 * (*step 'o' 'w' 'c'). */
static int write_text(const char *path, int flags, const char *text, char *step)
{
    return write_file(path, flags, text, strlen(text), step);
}

static void put_value(const char *mnt, const char *rel, const char *text)
{
    char p[512], step;
    snprintf(p, sizeof p, "%s/%s", mnt, rel);
    assert_int_equal(write_text(p, O_WRONLY | O_TRUNC, text, &step), 0);
}

static mode_t mode_of(const char *mnt, const char *rel)
{
    char p[1024];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", mnt, rel);
    assert_int_equal(lstat(p, &st), 0);
    return st.st_mode & 07777;
}

static bool info_has(const char *mnt, const char *needle)
{
    char p[512];
    snprintf(p, sizeof p, "%s/info", mnt);
    char *t = text_of(p);
    bool yes = strstr(t, needle) != NULL;
    free(t);
    return yes;
}

static void le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16), p[3] = (uint8_t)(v >> 24);
}

static int sh(const char *cmd)
{
    char *argv[] = {"sh", "-c", (char *)cmd, NULL};
    return run(argv, NULL, 0);
}

static void sha256_of(const uint8_t *b, size_t n, uint8_t out[SHA256_DIGEST_SIZE]);

/* ---- the independent package reader (tests/dbpf_read.py) ---- */

static void sha256_hex(const uint8_t *b, size_t n, char out[2 * SHA256_DIGEST_SIZE + 1])
{
    uint8_t d[SHA256_DIGEST_SIZE];
    sha256_of(b, n, d);
    for (int i = 0; i < SHA256_DIGEST_SIZE; i++)
        sprintf(out + 2 * i, "%02x", d[i]);
}

/* The reader's lines for the package at path (it must read it without complaint). */
static char *outside_read(const char *path)
{
    const char *script = getenv("S3RIG_DBPF_READ");
    assert_non_null(script);
    char *argv[] = {"python3", (char *)script, (char *)path, NULL};
    size_t cap = 1 << 16;
    char *out = malloc(cap), err[1024];
    assert_non_null(out);
    int rc = run_capture(argv, out, cap, err, sizeof err);
    if (rc != 0)
        fail_msg("dbpf_read.py %s: exit %d: %s", path, rc, err);
    return out;
}

/* The reader's line of the entry whose key (8+8+16 hex digits, spaced) is key; NULL when
 * none. A copy without its newline. */
static char *entry_line(const char *lines, const char *key)
{
    char needle[64];
    snprintf(needle, sizeof needle, "entry %s ", key);
    const char *at = strstr(lines, needle);
    if (!at)
        return NULL;
    return strndup(at, strcspn(at, "\n"));
}

/* ---- tests ---- */

static void test_rw_off_by_default(void **state)
{
    (void)state;
    struct rig r;
    rig_make(&r, "ro.rig");
    do_mount(r.path, r.mnt, NULL);
    assert_int_equal(mode_of(r.mnt, "header.bin"), 0444);
    assert_int_equal(mode_of(r.mnt, "header/unused_0"), 0444);
    char p[512], step;
    snprintf(p, sizeof p, "%s/header/unused_0", r.mnt);
    assert_int_equal(write_text(p, O_WRONLY, "1\n", &step), EROFS);
    snprintf(p, sizeof p, "%s/header.bin", r.mnt);
    assert_int_equal(write_text(p, O_RDWR, "x", &step), EROFS);
    do_umount(r.mnt);
    /* as mount(8)'s helper, which always passes rw: only "writable" makes it writable */
    setenv("S3RIG_MOUNT_HELPER", "1", 1);
    char *ro[] = {(char *)mount_bin, r.path, r.mnt, "-o", "rw", NULL};
    assert_int_equal(run(ro, NULL, 0), 0);
    assert_int_equal(mode_of(r.mnt, "header.bin"), 0444);
    do_umount(r.mnt);
    char *rw[] = {(char *)mount_bin, r.path, r.mnt, "-o", "rw,writable", NULL};
    assert_int_equal(run(rw, NULL, 0), 0);
    unsetenv("S3RIG_MOUNT_HELPER");
    assert_int_equal(mode_of(r.mnt, "header.bin"), 0644);
    umount_rw(r.mnt, r.path);
    assert_file_is(r.path, r.bytes, r.size);
    rig_free(&r);
}

static void test_rw_modes_and_lock(void **state)
{
    (void)state;
    struct rig r;
    rig_make(&r, "lock.rig");
    do_mount(r.path, r.mnt, "rw");
    /* writable: byte ranges of the file and the fields its views declare */
    assert_int_equal(mode_of(r.mnt, "header.bin"), 0644);
    assert_int_equal(mode_of(r.mnt, "granny.gr2"), 0644);
    assert_int_equal(mode_of(r.mnt, "header/unused_0"), 0644);
    assert_int_equal(mode_of(r.mnt, "ik_chains/0/pole"), 0644);
    assert_int_equal(mode_of(r.mnt, "granny/root/Skeletons/0/Bones/1/Transform/position"), 0644);
    /* a value of several numbers a line (a matrix's rows): its components in order */
    assert_int_equal(mode_of(r.mnt, "granny/root/Skeletons/0/Bones/1/Transform/scale_shear"), 0644);
    /* not: generated text, names, /info */
    assert_int_equal(mode_of(r.mnt, "info"), 0444);
    assert_int_equal(mode_of(r.mnt, "ik_target_slots.names"), 0444);
    assert_int_equal(mode_of(r.mnt, "granny/root/Skeletons/0/Bones/1/Name"), 0444);
    /* a second rw mount of the same file: refused, exit 4, one line */
    char other[256], err[512];
    make_mountpoint("m-lock2", other, sizeof other);
    char *argv[] = {(char *)mount_bin, "-o", "rw", r.path, other, NULL};
    assert_int_equal(run(argv, err, sizeof err), 4);
    assert_non_null(strstr(err, "already mounted rw"));
    assert_non_null(strchr(err, '\n'));
    assert_null(strchr(strchr(err, '\n') + 1, '\n'));
    assert_false(is_mounted(other));
    /* a read-only mount beside it is fine */
    do_mount(r.path, other, NULL);
    do_umount(other);
    umount_rw(r.mnt, r.path);
    assert_file_is(r.path, r.bytes, r.size);
    rig_free(&r);
}

/* The trees of two files, mounted read-only, equal except the paths listed. */
static void assert_trees_differ_only(const char *a, const char *b, const char *const *changed)
{
    char ma[256], mb[256];
    make_mountpoint("m-cmp-a", ma, sizeof ma);
    make_mountpoint("m-cmp-b", mb, sizeof mb);
    do_mount(a, ma, NULL);
    do_mount(b, mb, NULL);
    struct snap sa = {0}, sb = {0};
    snap_path(&sa, ma);
    snap_path(&sb, mb);
    assert_int_equal(sa.n, sb.n);
    size_t differing = 0;
    for (size_t i = 0; i < sa.n; i++) {
        const struct snap_entry *x = &sa.e[i], *y = snap_find(&sb, x->path);
        assert_non_null(y);
        bool same = x->kind == y->kind && x->size == y->size && x->dlen == y->dlen &&
                    (x->dlen == 0 || memcmp(x->data, y->data, x->dlen) == 0) && strcmp(x->type, y->type) == 0 &&
                    strcmp(x->offset, y->offset) == 0 && strcmp(x->length, y->length) == 0;
        bool allowed = false;
        for (size_t k = 0; changed[k]; k++)
            allowed |= strcmp(changed[k], x->path) == 0;
        if (!same && !allowed)
            fail_msg("%s differs:\n%.*s\n----\n%.*s", x->path, (int)x->dlen, (const char *)x->data, (int)y->dlen, (const char *)y->data);
        differing += !same;
    }
    assert_true(differing > 0);
    snap_free(&sa);
    snap_free(&sb);
    do_umount(ma);
    do_umount(mb);
}

static void test_rw_value_roundtrip(void **state)
{
    (void)state;
    struct rig r;
    rig_make(&r, "value.rig");
    char orig[300];
    snprintf(orig, sizeof orig, "%s/orig.rig", tmpdir);
    assert_int_equal(fx_write_file(orig, r.bytes, r.size), 0);
    do_mount(r.path, r.mnt, "rw");
    /* a shell's way: O_TRUNC, write, close; effective at the close */
    put_value(r.mnt, "header/unused_0", "305419896\n");
    char p[512];
    snprintf(p, sizeof p, "%s/header/unused_0", r.mnt);
    char *t = text_of(p);
    assert_string_equal(t, "305419896\n");
    free(t);
    assert_true(info_has(r.mnt, "rw: committed 4 bytes"));
    /* the kept version is the one before */
    char bak[300];
    snprintf(bak, sizeof bak, "%s~", r.path);
    assert_file_is(bak, r.bytes, r.size);
    /* a bone list (its span begins with its count, which stays): one bone index a line */
    put_value(r.mnt, "full_bone_list", "5\n4\n3\n2\n1\n-1\n");
    umount_rw(r.mnt, r.path);
    uint8_t *want = malloc(r.size);
    memcpy(want, r.bytes, r.size);
    le32(want + UNUSED0_POS, 305419896u);
    static const int32_t list[6] = {5, 4, 3, 2, 1, -1};
    for (int i = 0; i < 6; i++)
        le32(want + r.rl.list_pos[3] + 4 + 4 * i, (uint32_t)list[i]);
    assert_file_is(r.path, want, r.size);
    /* mounted again: the values, and nothing else but the header's and the list's bytes
     * (and the names the list shows) changed */
    const char *changed[] = {"header/unused_0", "header.bin", "full_bone_list", "full_bone_list.names", NULL};
    assert_trees_differ_only(orig, r.path, changed);
    free(want);
    rig_free(&r);
}

static uint32_t rd32(const uint8_t *p)
{
    return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void test_rw_granny_value_crc(void **state)
{
    (void)state;
    struct rig r;
    rig_make(&r, "granny.rig");
    do_mount(r.path, r.mnt, "rw");
    const char *rel = "granny/root/Skeletons/0/Bones/1/Transform/position";
    put_value(r.mnt, rel, "1.5\n-2\n0.25\n");
    assert_true(info_has(r.mnt, "Granny CRC recomputed"));
    umount_rw(r.mnt, r.path);
    size_t n;
    uint8_t *now = slurp(r.path, &n);
    assert_int_equal(n, r.size);
    /* the CRC: CRC-32 over [0x20 + header length (v6: 0x38), total_size) of the Granny data */
    const uint8_t *g = now + r.rl.granny_pos;
    assert_int_equal(rd32(g + 0x20), 6);
    uint32_t total = rd32(g + 0x24);
    uint32_t crc = (uint32_t)crc32(crc32(0, NULL, 0), g + 0x20 + 0x38, total - (0x20 + 0x38));
    assert_int_equal(rd32(g + 0x28), crc);
    assert_int_not_equal(rd32(r.bytes + r.rl.granny_pos + 0x28), crc); /* it did change */
    /* 1.5, -2, 0.25 as binary32, little-endian, once, where the old values were */
    static const uint8_t floats[12] = {0, 0, 0xc0, 0x3f, 0, 0, 0, 0xc0, 0, 0, 0x80, 0x3e};
    size_t at = SIZE_MAX, diffs = 0;
    for (size_t i = 0; i + 12 <= n; i++)
        if (memcmp(now + i, floats, 12) == 0)
            at = i;
    assert_true(at != SIZE_MAX);
    for (size_t i = 0; i < n; i++)
        diffs += now[i] != r.bytes[i] && !(i >= at && i < at + 12) &&
                 !(i >= r.rl.granny_pos + 0x28 && i < r.rl.granny_pos + 0x2c);
    assert_int_equal(diffs, 0);
    free(now);
    do_mount(r.path, r.mnt, NULL);
    char p[512];
    snprintf(p, sizeof p, "%s/%s", r.mnt, rel);
    char *t = text_of(p);
    assert_string_equal(t, "1.5\n-2\n0.25\n");
    free(t);
    assert_true(info_has(r.mnt, "gr2_crc: ok"));
    do_umount(r.mnt);
    rig_free(&r);
}

/* Where the 12-byte run `want` lies in the Granny data of b (once), SIZE_MAX if nowhere. */
static size_t find_once(const uint8_t *b, size_t n, const uint8_t *want, size_t wlen)
{
    size_t at = SIZE_MAX, seen = 0;
    for (size_t i = 0; i + wlen <= n; i++)
        if (memcmp(b + i, want, wlen) == 0)
            at = i, seen++;
    return seen == 1 ? at : SIZE_MAX;
}

/* The Granny CRC of the data at g (little-endian): CRC-32 over [0x20 + header length,
 * total_size), the header 0x38 bytes long in version 6, 0x48 in version 7. */
static void assert_gr2_crc_valid(const uint8_t *g)
{
    uint32_t version = rd32(g + 0x20), from = 0x20 + (version == 6 ? 0x38 : 0x48);
    assert_true(version == 6 || version == 7);
    uint32_t total = rd32(g + 0x24);
    assert_int_equal(rd32(g + 0x28), (uint32_t)crc32(crc32(0, NULL, 0), g + from, total - from));
}

/* A value of several numbers a line (a Transform's scale_shear, three a line): the whole
 * text is the field's nine components; a wrong count or component is EINVAL at the close
 * and changes nothing; the right one commits, the CRC is recomputed, and the tree differs
 * in that matrix only (and what shows the same bytes). */
static void test_rw_multi_value_lines(void **state)
{
    (void)state;
    struct rig r;
    rig_make(&r, "matrix.rig");
    char orig[300];
    snprintf(orig, sizeof orig, "%s/orig-matrix.rig", tmpdir);
    assert_int_equal(fx_write_file(orig, r.bytes, r.size), 0);
    do_mount(r.path, r.mnt, "rw");
    const char *rel = "granny/root/Skeletons/0/Bones/1/Transform/scale_shear";
    char p[512], step;
    snprintf(p, sizeof p, "%s/%s", r.mnt, rel);
    assert_int_equal(mode_of(r.mnt, rel), 0644);
    assert_int_equal(write_text(p, O_WRONLY | O_TRUNC, "2 0 0\n0 2 0\n0 0\n", &step), EINVAL);
    assert_int_equal(step, 'c');
    assert_true(info_has(r.mnt, "8 values for 9"));
    assert_int_equal(write_text(p, O_WRONLY | O_TRUNC, "2 0 0\n0 two 0\n", &step), EINVAL);
    assert_int_equal(step, 'w'); /* a complete line shows it */
    assert_int_equal(write_text(p, O_WRONLY | O_TRUNC, "2 0 0\n0 2 0\n0 0 2 0\n", &step), EINVAL);
    assert_true(info_has(r.mnt, "more than 9 values"));
    assert_file_is(r.path, r.bytes, r.size);
    put_value(r.mnt, rel, "2 0 0\n0 3 0\n0 0 0.5\n");
    char *t = text_of(p);
    assert_string_equal(t, "2 0 0\n0 3 0\n0 0 0.5\n");
    free(t);
    assert_true(info_has(r.mnt, "Granny CRC recomputed"));
    umount_rw(r.mnt, r.path);
    size_t n;
    uint8_t *now = slurp(r.path, &n);
    assert_int_equal(n, r.size);
    assert_gr2_crc_valid(now + r.rl.granny_pos);
    /* 2, 0, 0, 0, 3, 0, 0, 0, 0.5 as binary32 little-endian: 2 = 0x40000000, 3 = 0x40400000,
     * 0.5 = 0x3f000000 */
    uint8_t m[36] = {0};
    m[3] = 0x40, m[16 + 2] = 0x40, m[16 + 3] = 0x40, m[32 + 3] = 0x3f;
    size_t at = find_once(now, n, m, 36);
    assert_true(at != SIZE_MAX);
    size_t diffs = 0;
    for (size_t i = 0; i < n; i++)
        diffs += now[i] != r.bytes[i] && !(i >= at && i < at + 36) &&
                 !(i >= r.rl.granny_pos + 0x28 && i < r.rl.granny_pos + 0x2c);
    assert_int_equal(diffs, 0);
    free(now);
    const char *changed[] = {"granny/root/Skeletons/0/Bones/1/Transform/scale_shear",
                             "info", /* its gr2_crc line: the new CRC */
                             "granny.gr2",
                             "granny/header/crc",
                             "granny/header/crc_computed",
                             "granny/sections/0/data.bin",
                             "granny/sections/0/stored.bin",
                             "granny/root/Skeletons/0/skeleton.glb",
                             "granny/skeletons/0/skeleton.glb",
                             NULL};
    assert_trees_differ_only(orig, r.path, changed);
    rig_free(&r);
}

/* Where cell (row, col) of a CSV text starts (row 0: the header). */
static const char *csv_at(const char *text, int row, int col)
{
    const char *p = text;
    for (int r = 0; r < row; r++) {
        p = strchr(p, '\n');
        assert_non_null(p);
        p++;
    }
    for (int c = 0; c < col; c++) {
        p = strpbrk(p, ",\n");
        assert_true(p && *p == ',');
        p++;
    }
    return p;
}

/* text with cell (row, col) set to value (row 0: the header), malloc'd. */
static char *csv_set(const char *text, int row, int col, const char *value)
{
    size_t n = strlen(text), vlen = strlen(value);
    char *out = malloc(n + vlen + 1);
    assert_non_null(out);
    const char *p = csv_at(text, row, col);
    size_t cell = strcspn(p, ",\n");
    size_t head = (size_t)(p - text);
    memcpy(out, text, head);
    memcpy(out + head, value, vlen);
    strcpy(out + head + vlen, p + cell);
    return out;
}

/* Cell (row, col) of a CSV text (row 0: the header), malloc'd. */
static char *csv_get(const char *text, int row, int col)
{
    const char *p = csv_at(text, row, col);
    return strndup(p, strcspn(p, ",\n"));
}

/* The column of a CSV header named name. */
static int csv_col(const char *text, const char *name)
{
    int col = 0;
    size_t nlen = strlen(name);
    for (const char *p = text; *p && *p != '\n'; col++) {
        size_t cell = strcspn(p, ",\n");
        if (cell == nlen && memcmp(p, name, nlen) == 0)
            return col;
        p += cell + (p[cell] == ',');
    }
    fail_msg("no column %s", name);
    return -1;
}

/* Writes text whole to rel: the errno and the step that failed ('o' 'w' 'c'), 0 when none. */
static int put_text(const char *mnt, const char *rel, const char *text, char *step)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", mnt, rel);
    return write_text(p, O_WRONLY | O_TRUNC, text, step);
}

/* A refused write of a table: the CSV, the cell changed (its row and column, the row's
 * number being column "index"; row -1: the last row dropped instead) and to what, and
 * what /info then says. */
struct csv_refusal {
    const char *csv, *col, *text, *why;
    int row;
};

/* Each refusal: EINVAL at the close, /info saying why, the file (path) still `bytes`. */
static void assert_csv_refusals(const char *mnt, const char *path, const struct csv_refusal *bad, size_t n,
                                const uint8_t *bytes, size_t size)
{
    for (size_t i = 0; i < n; i++) {
        char p[512], step, *text;
        snprintf(p, sizeof p, "%s/%s", mnt, bad[i].csv);
        char *now = text_of(p);
        if (bad[i].row < 0) {
            text = strdup(now);
            *strrchr(text, '\n') = 0;
            *(strrchr(text, '\n') + 1) = 0;
        } else {
            text = csv_set(now, bad[i].row, csv_col(now, bad[i].col), bad[i].text);
        }
        assert_int_equal(put_text(mnt, bad[i].csv, text, &step), EINVAL);
        assert_int_equal(step, 'c');
        if (!info_has(mnt, bad[i].why))
            fail_msg("%s: /info does not say '%s'", bad[i].csv, bad[i].why);
        assert_file_is(path, bytes, size);
        free(text);
        free(now);
    }
}

/* A GEOM fixture of that version written as name, mounted rw at a mount point of its own:
 * its bytes (malloc'd). */
static uint8_t *geom_mounted(uint32_t version, const char *name, struct fxgeom_layout *lay, size_t *size, char *path,
                             char *mnt)
{
    struct fxgeom_opts o = {.version = version};
    uint8_t *bytes = fxgeom_build(&o, size, lay);
    char mname[128];
    write_fixture(name, bytes, *size, path, 256);
    snprintf(mname, sizeof mname, "m-%s", name);
    make_mountpoint(mname, mnt, 256);
    do_mount(path, mnt, "rw");
    return bytes;
}

/* GEOM vertex fields: vertices.csv is a table over the vertex records (its view declares
 * the columns: f32 positions, byte weights, ...). A cell written is encoded as its
 * declaration's type at its place in its vertex; a wrong cell count, a value that does not
 * fit, a row number or header changed: EINVAL at the close, nothing changed. Mounted again,
 * the CSV shows exactly the text written, and the file differs only in the cells' bytes. */
static void test_rw_geom_vertices(void **state)
{
    (void)state;
    struct fxgeom_layout lay;
    size_t size;
    char path[256], mnt[256];
    uint8_t *bytes = geom_mounted(14, "vertices.geom", &lay, &size, path, mnt);
    const char *rel = "geom/vertices.csv";
    assert_int_equal(mode_of(mnt, rel), 0644);
    assert_int_equal(mode_of(mnt, "geom/vertices.bin"), 0644);
    char p[512];
    snprintf(p, sizeof p, "%s/%s", mnt, rel);
    char *now = text_of(p);
    int px = csv_col(now, "px"), w0 = csv_col(now, "weight0");
    static const struct csv_refusal bad[] = {
        {"geom/vertices.csv", "px", "7.25,1", "row 3: ", 3}, /* a cell too many */
        {"geom/vertices.csv", "weight0", "300", "300 does not fit a u8", 1},
        {"geom/vertices.csv", "px", "abc", "'abc' is not a number (f32)", 3},
        {"geom/vertices.csv", "index", "5", "its number must stay 2", 3},
        {"geom/vertices.csv", "px", "x", "the first line must stay the header", 0},
        {"geom/vertices.csv", NULL, NULL, "5 rows for 6 records", -1}, /* the last row gone */
    };
    assert_csv_refusals(mnt, path, bad, sizeof bad / sizeof bad[0], bytes, size);
    /* vertex 2's x := 7.25, vertex 1's first weight := 17 */
    char *a = csv_set(now, 3, px, "7.25"), *want_text = csv_set(a, 2, w0, "17");
    free(a);
    put_value(mnt, rel, want_text);
    umount_rw(mnt, path);
    uint64_t pos_off = UINT64_MAX, w_off = UINT64_MAX;
    for (uint32_t i = 0; i < lay.ndecls; i++) {
        if (lay.decl[i].usage == 1)
            pos_off = lay.decl_offset[i];
        if (lay.decl[i].usage == 5)
            w_off = lay.decl_offset[i];
    }
    assert_true(pos_off != UINT64_MAX && w_off != UINT64_MAX);
    uint8_t *want = malloc(size);
    memcpy(want, bytes, size);
    le32(want + lay.vert_pos + 2ull * lay.stride + pos_off, 0x40e80000u); /* 7.25 as binary32 */
    want[lay.vert_pos + lay.stride + w_off] = 17;
    assert_file_is(path, want, size);
    do_mount(path, mnt, NULL);
    char *again = text_of(p);
    assert_string_equal(again, want_text);
    free(again);
    do_umount(mnt);
    free(want);
    free(want_text);
    free(now);
    free(bytes);
}

/* One cell written into a GEOM tail CSV: the file, the record (row - 1), the column, the
 * text written, and the bytes it must become at `at` bytes into that record (the
 * format's little-endian encoding of the value), after the block's count. */
struct geom_cell {
    const char *csv, *col, *text;
    int record;
    uint32_t at, width;
    uint8_t bytes[8];
    uint64_t (*block_pos)(const struct fxgeom_layout *l);
    uint32_t stride;
};

static uint64_t tgis_pos(const struct fxgeom_layout *l) { return l->tgis.pos; }
static uint64_t seams_pos(const struct fxgeom_layout *l) { return l->seams.pos; }
static uint64_t rays_pos(const struct fxgeom_layout *l) { return l->slot_rays.pos; }
static uint64_t bones_pos(const struct fxgeom_layout *l) { return l->bones.pos; }
static uint64_t states_pos(const struct fxgeom_layout *l) { return l->states.pos; }

/* The GEOM tail's CSVs of fixed-size records (tgis, seam_stitches, slot_rays, bones,
 * geometry_states; version 15 has them all) are tables: a cell written becomes its
 * column's type at its place in its record; derived cells (a seam's number, name and
 * position from its word; a bone's name) may stay as they were; uv_stitches.csv (rows of
 * several sizes) stays read-only. Refusals (a value that does not fit or parse, a row
 * fewer, a derived cell changed alone) are EINVAL with an /info line and leave the file's
 * sha256 as it was. Committed, unmounted, mounted again: the cells read back, the file
 * differs from the original in exactly those bytes, and the tree only in those CSVs. */
static void test_rw_geom_tail_tables(void **state)
{
    (void)state;
    struct fxgeom_layout lay;
    size_t size;
    char path[256], orig[300], mnt[256], p[512], step;
    uint8_t *bytes = geom_mounted(15, "tail.geom", &lay, &size, path, mnt);
    snprintf(orig, sizeof orig, "%s/orig-tail.geom", tmpdir);
    assert_int_equal(fx_write_file(orig, bytes, size), 0);
    const struct geom_cell cells[] = {
        {"geom/tgis.csv", "instance", "0x00000000deadbeef", 1, 8, 8, {0xef, 0xbe, 0xad, 0xde, 0, 0, 0, 0}, tgis_pos, 16},
        {"geom/tgis.csv", "type", "0x12345678", 2, 0, 4, {0x78, 0x56, 0x34, 0x12}, tgis_pos, 16},
        {"geom/seam_stitches.csv", "word", "0x2005", 0, 4, 2, {0x05, 0x20}, seams_pos, 6},
        {"geom/slot_rays.csv", "distance", "2.5", 0, 18, 4, {0, 0, 0x20, 0x40}, rays_pos, 66},
        {"geom/bones.csv", "hash", "0x01020304", 1, 0, 4, {4, 3, 2, 1}, bones_pos, 4},
        {"geom/geometry_states.csv", "vertex_count", "-9", 1, 12, 4, {0xf7, 0xff, 0xff, 0xff}, states_pos, 20},
    };
    static const struct csv_refusal bad[] = {
        {"geom/tgis.csv", NULL, NULL, "2 rows for 3 records", -1},
        {"geom/tgis.csv", "instance", "0x1ffffffffffffffff", "does not fit a u64", 1},
        {"geom/seam_stitches.csv", "seam_name", "Ankles", "seam_name is not stored", 1},
        {"geom/slot_rays.csv", "distance", "abc", "'abc' is not a number (f32)", 1},
        {"geom/bones.csv", "hash", "0x1ffffffff", "does not fit a u32", 1},
        {"geom/geometry_states.csv", "vertex_count", "2147483648", "does not fit a i32", 1},
    };
    for (size_t i = 0; i < sizeof cells / sizeof cells[0]; i++)
        assert_int_equal(mode_of(mnt, cells[i].csv), 0644);
    (void)step;
    assert_csv_refusals(mnt, path, bad, sizeof bad / sizeof bad[0], bytes, size);
    uint8_t *want = malloc(size);
    memcpy(want, bytes, size);
    for (size_t i = 0; i < sizeof cells / sizeof cells[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", mnt, cells[i].csv);
        char *now = text_of(p);
        char *text = csv_set(now, cells[i].record + 1, csv_col(now, cells[i].col), cells[i].text);
        put_value(mnt, cells[i].csv, text);
        uint64_t at = cells[i].block_pos(&lay) + 4 + (uint64_t)cells[i].record * cells[i].stride + cells[i].at;
        memcpy(want + at, cells[i].bytes, cells[i].width);
        free(text);
        free(now);
    }
    umount_rw(mnt, path);
    assert_file_is(path, want, size);
    do_mount(path, mnt, NULL);
    for (size_t i = 0; i < sizeof cells / sizeof cells[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", mnt, cells[i].csv);
        char *now = text_of(p), *cell = csv_get(now, cells[i].record + 1, csv_col(now, cells[i].col));
        if (strcmp(cells[i].col, "vertex_count") == 0 || strcmp(cells[i].col, "distance") == 0)
            assert_float_equal(strtod(cell, NULL), strtod(cells[i].text, NULL), 0);
        else
            assert_int_equal(strtoull(cell, NULL, 0), strtoull(cells[i].text, NULL, 0));
        free(cell);
        free(now);
    }
    /* the seam's derived cells follow its new word 0x2005: seam 2, position 5 */
    snprintf(p, sizeof p, "%s/geom/seam_stitches.csv", mnt);
    char *seams = text_of(p), *seam = csv_get(seams, 1, csv_col(seams, "seam")),
         *pos = csv_get(seams, 1, csv_col(seams, "position"));
    assert_string_equal(seam, "2");
    assert_string_equal(pos, "5");
    free(seam);
    free(pos);
    free(seams);
    do_umount(mnt);
    /* the other nodes: as before, but the texture parameter that indexes TGI entry 1
     * (a texture's first word is an index into the TGI list: it shows the new instance) */
    const char *changed[] = {"geom/tgis.csv",           "geom/seam_stitches.csv",          "geom/slot_rays.csv",
                             "geom/bones.csv",          "geom/geometry_states.csv",        "geom/material/NormalMap/texture",
                             NULL};
    assert_trees_differ_only(orig, path, changed);
    free(want);
    free(bytes);
}

/* A GEOM's uv_stitches.csv (records of several sizes, geom.md: i32 vertex, u32 k, k pairs
 * of f32 u, v; the fixture's three: vertex 1 with two pairs, vertex 4 with none, vertex 5
 * with one) written whole: a stitch's vertex (on each of its rows), a u and a v change,
 * in place; refusals (a changed pair number, one stitch's rows disagreeing on its vertex,
 * a u that is no number, a row missing, cells on a stitch with no pair) give EINVAL with
 * /info's reason and leave the file as it was. Mounted again the CSV shows the new values,
 * and the rest of the tree is the same. */
static void test_rw_geom_uv_stitches(void **state)
{
    (void)state;
    struct fxgeom_layout lay;
    size_t size;
    char path[256], orig[300], mnt[256], p[512], step;
    uint8_t *bytes = geom_mounted(15, "uvs.geom", &lay, &size, path, mnt);
    snprintf(orig, sizeof orig, "%s/orig-uvs.geom", tmpdir);
    assert_int_equal(fx_write_file(orig, bytes, size), 0);
    assert_int_equal(mode_of(mnt, "geom/uv_stitches.csv"), 0644);
    snprintf(p, sizeof p, "%s/geom/uv_stitches.csv", mnt);
    char *was = text_of(p);
    assert_string_equal(was, "index,vertex,pair,u,v\n0,1,0,0.100000001,0.200000003\n0,1,1,0.300000012,0.400000006\n"
                             "1,4,,,\n2,5,0,0.5,0.75\n");
    static const struct {
        const char *text, *why;
    } bad[] = {
        {"index,vertex,pair,u,v\n0,1,0,0.1,0.2\n0,1,5,0.3,0.4\n1,4,,,\n2,5,0,0.5,0.75\n", "the pair"},
        {"index,vertex,pair,u,v\n0,9,0,0.1,0.2\n0,8,1,0.3,0.4\n1,4,,,\n2,5,0,0.5,0.75\n", "share one vertex"},
        {"index,vertex,pair,u,v\n0,1,0,abc,0.2\n0,1,1,0.3,0.4\n1,4,,,\n2,5,0,0.5,0.75\n", "are numbers (f32)"},
        {"index,vertex,pair,u,v\n0,1,0,0.1,0.2\n0,1,1,0.3,0.4\n1,4,,,\n", "rows for 2 of 3 stitches"},
        {"index,vertex,pair,u,v\n0,1,0,0.1,0.2\n0,1,1,0.3,0.4\n1,4,0,1,1\n2,5,0,0.5,0.75\n", "stitch 1"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(write_text(p, O_WRONLY | O_TRUNC, bad[i].text, &step), EINVAL);
        if (!info_has(mnt, bad[i].why))
            fail_msg("no /info line with '%s'", bad[i].why);
        assert_file_is(path, bytes, size);
    }
    put_value(mnt, "geom/uv_stitches.csv",
              "index,vertex,pair,u,v\n0,9,0,0.100000001,0.200000003\n0,9,1,2.5,0.400000006\n1,7,,,\n2,5,0,0.5,-1\n");
    umount_rw(mnt, path);
    /* the records: stitch 0 at the block's start + 4 (8 + 2·8 bytes), 1 after it (8), 2
     * after that; little-endian */
    uint8_t *want = malloc(size);
    memcpy(want, bytes, size);
    uint64_t s0 = lay.uv_stitches.pos + 4, s1 = s0 + 24, s2 = s1 + 8;
    le32(want + s0, 9);
    le32(want + s0 + 8 + 8, 0x40200000u); /* pair 1's u: 2.5 */
    le32(want + s1, 7);
    le32(want + s2 + 8 + 4, 0xBF800000u); /* pair 0's v: -1 */
    assert_file_is(path, want, size);
    do_mount(path, mnt, NULL);
    char *now = text_of(p);
    assert_string_equal(now, "index,vertex,pair,u,v\n0,9,0,0.100000001,0.200000003\n0,9,1,2.5,0.400000006\n"
                             "1,7,,,\n2,5,0,0.5,-1\n");
    do_umount(mnt);
    const char *changed[] = {"geom/uv_stitches.csv", NULL};
    assert_trees_differ_only(orig, path, changed);
    free(now);
    free(was);
    free(want);
    free(bytes);
}

/* A GEOM inside a package (a nested view), stored uncompressed: its vertices.csv is a
 * table too (the nested view declares it to the mount); one cell written changes the
 * four bytes of that float in the package, nothing else. The GEOM stored compressed
 * beside it stays read-only. */
static void test_rw_geom_in_package(void **state)
{
    (void)state;
    size_t size;
    uint8_t *bytes = fx_kind("package-geom", 0, NULL, &size);
    assert_non_null(bytes);
    char path[256], mnt[256], p[512];
    write_fixture("geoms.package", bytes, size, path, sizeof path);
    make_mountpoint("m-geoms", mnt, sizeof mnt);
    do_mount(path, mnt, "rw");
    const char *rel = "resources/S4_015A1849_00000000_0000000100000040_yfCustom%%+GEOM.simgeom/geom/geom/vertices.csv";
    const char *packed = "resources/S4_015A1849_00000000_0000000100000030_yfBody%%+GEOM.simgeom/geom/geom/vertices.csv";
    assert_int_equal(mode_of(mnt, rel), 0644);
    assert_int_equal(mode_of(mnt, packed), 0444);
    snprintf(p, sizeof p, "%s/%s", mnt, rel);
    char *now;
    int px = csv_col(now = text_of(p), "px");
    char *want_text = csv_set(now, 2, px, "2.5"), cmd[1200];
    /* sed -i: a temporary beside it, renamed over it (row 1 is line 3) */
    snprintf(cmd, sizeof cmd, "sed -i '3s/^\\(\\([^,]*,\\)\\{%d\\}\\)[^,]*/\\12.5/' '%s'", px, p);
    assert_int_equal(sh(cmd), 0);
    char *t = text_of(p);
    assert_string_equal(t, want_text);
    free(t);
    umount_rw(mnt, path);
    size_t n;
    uint8_t *after = slurp(path, &n);
    assert_int_equal(n, size);
    size_t first = SIZE_MAX, diffs = 0;
    for (size_t i = 0; i < n; i++)
        if (after[i] != bytes[i]) {
            first = first == SIZE_MAX ? i : first;
            diffs++;
        }
    /* 2.5 = 0x40200000 little-endian; the old value's bytes differ at least in the last */
    assert_true(diffs >= 1 && diffs <= 4 && first != SIZE_MAX);
    size_t at = first;
    while (at > 0 && rd32(after + at) != 0x40200000u && first - at < 3)
        at--;
    assert_int_equal(rd32(after + at), 0x40200000u);
    for (size_t i = 0; i < n; i++)
        assert_true(after[i] == bytes[i] || (i >= at && i < at + 4));
    free(after);
    do_mount(path, mnt, NULL);
    char *again = text_of(p);
    assert_string_equal(again, want_text);
    free(again);
    do_umount(mnt);
    free(want_text);
    free(now);
    free(bytes);
}

/* Granny table cells: NAME.csv over an array of flat structs in a section stored as is is
 * writable cell by cell (each its member's type); the CRC is recomputed; refusals change
 * nothing. */
static void test_rw_granny_table(void **state)
{
    (void)state;
    struct rig r;
    rig_make(&r, "table.rig");
    do_mount(r.path, r.mnt, "rw");
    const char *rel = "granny/root/Misc/Points.csv";
    char p[512], step;
    snprintf(p, sizeof p, "%s/%s", r.mnt, rel);
    assert_int_equal(mode_of(r.mnt, rel), 0644);
    char *t = text_of(p);
    assert_string_equal(t, "x,y,z\n0,1,2\n3,4,5\n"); /* the builder's points */
    free(t);
    char off[32] = "";
    assert_true(getxattr(p, "user.s3rig.offset", off, sizeof off - 1) > 0);
    size_t at = (size_t)strtoull(off, NULL, 10); /* the elements, in the mounted file */
    assert_int_equal(put_text(r.mnt, rel, "x,y\n0,1\n3,4\n", &step), EINVAL);
    assert_int_equal(put_text(r.mnt, rel, "x,y,z\n0,1,2\n", &step), EINVAL);
    assert_true(info_has(r.mnt, "1 rows for 2 records"));
    assert_int_equal(put_text(r.mnt, rel, "x,y,z\n0,1,2\n3,4,1e40\n", &step), EINVAL);
    assert_true(info_has(r.mnt, "row 2: 1e40 does not fit an f32"));
    assert_file_is(r.path, r.bytes, r.size);
    put_value(r.mnt, rel, "x,y,z\n9.5,1,2\n3,4,-5\n");
    umount_rw(r.mnt, r.path);
    size_t n;
    uint8_t *now = slurp(r.path, &n);
    assert_int_equal(n, r.size);
    assert_gr2_crc_valid(now + r.rl.granny_pos);
    /* 0..5 as binary32 were the points; now 9.5 (0x41180000), 1, 2, 3, 4, -5 (0xc0a00000) */
    uint8_t old[24], neu[24];
    static const uint32_t oldv[6] = {0, 0x3f800000, 0x40000000, 0x40400000, 0x40800000, 0x40a00000};
    for (int i = 0; i < 6; i++)
        le32(old + 4 * i, oldv[i]);
    memcpy(neu, old, 24);
    le32(neu, 0x41180000u);
    le32(neu + 20, 0xc0a00000u);
    assert_memory_equal(r.bytes + at, old, 24);
    assert_memory_equal(now + at, neu, 24);
    size_t diffs = 0;
    for (size_t i = 0; i < n; i++)
        diffs += now[i] != r.bytes[i] && !(i >= at && i < at + 24) &&
                 !(i >= r.rl.granny_pos + 0x28 && i < r.rl.granny_pos + 0x2c);
    assert_int_equal(diffs, 0);
    free(now);
    do_mount(r.path, r.mnt, NULL);
    t = text_of(p);
    assert_string_equal(t, "x,y,z\n9.5,1,2\n3,4,-5\n");
    free(t);
    do_umount(r.mnt);
    rig_free(&r);
}

static bool listed(const char *const *list, const char *path)
{
    for (size_t k = 0; list && list[k]; k++) {
        size_t n = strlen(list[k]);
        if (n && list[k][n - 1] == '/' ? strncmp(list[k], path, n) == 0 : strcmp(list[k], path) == 0)
            return true;
    }
    return false;
}

/* The trees of files a and b, mounted read-only: every node of a is in b, the same (bytes,
 * kind, xattrs) unless `changed` lists it (then it may also be gone); `moved` ones hold
 * the same bytes at another span; b's own nodes are those `added` lists ("dir/" lists a
 * folder's). */
static void assert_trees_same_but(const char *a, const char *b, const char *const *changed,
                                  const char *const *moved, const char *const *added)
{
    char ma[256], mb[256];
    make_mountpoint("m-cmp2-a", ma, sizeof ma);
    make_mountpoint("m-cmp2-b", mb, sizeof mb);
    do_mount(a, ma, NULL);
    do_mount(b, mb, NULL);
    struct snap sa = {0}, sb = {0};
    snap_path(&sa, ma);
    snap_path(&sb, mb);
    size_t bad = 0;
    for (size_t i = 0; i < sa.n; i++) {
        const struct snap_entry *x = &sa.e[i], *y = snap_find(&sb, x->path);
        if (!y && listed(changed, x->path))
            continue; /* a changed part may be shown otherwise (a table stored raw now) */
        if (!y)
            fail_msg("%s is gone", x->path);
        bool bytes = x->kind == y->kind && x->size == y->size && x->dlen == y->dlen &&
                     (x->dlen == 0 || memcmp(x->data, y->data, x->dlen) == 0);
        bool span = strcmp(x->type, y->type) == 0 && strcmp(x->offset, y->offset) == 0 &&
                    strcmp(x->length, y->length) == 0;
        if (!listed(changed, x->path) && !(bytes && (span || listed(moved, x->path)))) {
            print_message("'%s' differs (%s %s %s / %s %s %s)\n", x->path, x->type, x->offset, x->length, y->type,
                          y->offset, y->length);
            bad++;
        }
    }
    for (size_t i = 0; i < sb.n; i++)
        if (!snap_find(&sa, sb.e[i].path) && !listed(added, sb.e[i].path)) {
            print_message("'%s' is new\n", sb.e[i].path);
            bad++;
        }
    assert_int_equal(bad, 0);
    snap_free(&sa);
    snap_free(&sb);
    do_umount(ma);
    do_umount(mb);
}

/* open (truncating), write len bytes, close: as write_file. */
static int write_bytes(const char *path, const void *b, size_t len, char *step)
{
    return write_file(path, O_WRONLY | O_TRUNC, b, len, step);
}

/* The file renamed away from its path (away) or back: while it is away, a commit is
 * refused (EBUSY: the path is no longer the file read) and the edits stay pending; the
 * daemon's reads, through its descriptor, go on. */
static void move_file(const char *path, bool away)
{
    char other[300];
    snprintf(other, sizeof other, "%s.away", path);
    assert_int_equal(away ? rename(path, other) : rename(other, path), 0);
}

/* fsync through a handle of rel: 0 or the errno (what is pending is committed). */
static int fsync_at(const char *mnt, const char *rel)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", mnt, rel);
    int fd = open(p, O_WRONLY);
    assert_true(fd >= 0);
    int rc = fsync(fd) ? errno : 0;
    assert_int_equal(close(fd), 0);
    return rc;
}

/* ---- compressed Granny sections stored raw: what the tests share ---- */

/* The object builder's options the section tests use: Oodle0 (v6), Oodle1 (v6, v7),
 * BitKnit2 (v7, its tables compressed with the section, two marshalling entries). */
static const struct fxg_opts fx_oodle0_v6 = {.sig = "le32-old", .version = 6, .nbones = 5, .oodle0_objects = true};
static const struct fxg_opts fx_oodle1_v6 = {.sig = "le32-old", .version = 6, .nbones = 5, .oodle1_objects = true};
static const struct fxg_opts fx_oodle1_v7 = {.sig = "le32", .version = 7, .nbones = 5, .oodle1_objects = true};
static const struct fxg_opts fx_bk2_v7 = {
    .sig = "le32", .version = 7, .nbones = 5, .bitknit2_objects = true, .nmarshals = 2};

/* A Granny fixture as a file: a .gr2 alone, or (rig) the sample wrapped RIG around it;
 * its copy `orig` (for tree comparisons) and a mount point. */
struct gfix {
    struct fxg_result r;
    struct fx_rig_layout rl; /* rig only: granny_pos 0 for a .gr2 */
    uint8_t *bytes;
    size_t size;
    bool rig;
    char path[256], orig[300], mnt[256];
};

static void gfix_make(struct gfix *f, const struct fxg_opts *o, const char *name, bool rig)
{
    memset(f, 0, sizeof *f);
    f->rig = rig;
    f->bytes = rig ? fxg_sample_rig(o, &f->r, &f->size, &f->rl) : fxg_build(o, &f->size, &f->r);
    write_fixture(name, f->bytes, f->size, f->path, sizeof f->path);
    snprintf(f->orig, sizeof f->orig, "%s/orig-%s", tmpdir, name);
    assert_int_equal(fx_write_file(f->orig, f->bytes, f->size), 0);
    char mname[128];
    snprintf(mname, sizeof mname, "m-%s", name);
    make_mountpoint(mname, f->mnt, sizeof f->mnt);
}

static void gfix_free(struct gfix *f)
{
    free(f->r.section);
    free(f->bytes);
}

/* The section's expanded bytes with bone 1's position (found once: the builder writes
 * floats little-endian) set to `to`, malloc'd. */
static uint8_t *section_with_position(const struct fxg_result *r, const float to[3])
{
    size_t at = find_once(r->section, r->section_size, (const uint8_t *)r->bones[1].position, 12);
    assert_true(at != SIZE_MAX);
    uint8_t *sec = malloc(r->section_size);
    memcpy(sec, r->section, r->section_size);
    memcpy(sec + at, to, 12);
    return sec;
}

/* Section 0 of the Granny data at g stored raw (docs/formats/gr2.md): compression 0, data
 * at the old total_size 4-aligned, data and expanded size the new bytes' (first16bit and
 * first8bit too), those bytes sec, the CRC valid. */
static void assert_section_raw(const uint8_t *g, const struct fxg_result *r, const uint8_t *sec)
{
    const uint8_t *h = g + 0x20 + r->layout.section_array_offset;
    uint32_t data_at = (r->layout.total_size + 3) & ~3u, len = r->section_size;
    assert_int_equal(rd32(h), 0);
    assert_int_equal(rd32(h + 4), data_at);
    assert_int_equal(rd32(h + 8), len);
    assert_int_equal(rd32(h + 12), len);
    assert_int_equal(rd32(h + 20), len);
    assert_int_equal(rd32(h + 24), len);
    assert_memory_equal(g + data_at, sec, len);
    assert_true(rd32(g + 0x24) >= data_at + len);
    assert_gr2_crc_valid(g);
}

/* The file after its Granny data got a new length (now, n bytes): a .gr2 ends with it
 * (total_size); a RIG's blocks after it follow its padding to 4, unchanged, and the
 * header's offsets past it moved by the growth (docs/formats/rig.md). */
static void assert_container_follows(const struct gfix *f, const uint8_t *now, size_t n)
{
    uint64_t g0 = f->rl.granny_pos, ik = f->rl.ik_pos, total = rd32(now + g0 + 0x24);
    if (!f->rig) {
        assert_int_equal(total, n);
        return;
    }
    uint64_t new_ik = (g0 + total + 3) & ~3ull;
    int64_t delta = (int64_t)new_ik - (int64_t)ik;
    assert_int_equal(n, new_ik + (f->size - ik));
    assert_memory_equal(now + new_ik, f->bytes + ik, f->size - ik);
    for (int i = 4; i <= 8; i++)
        if (4 * i + rd32(f->bytes + 4 * i) >= ik)
            assert_int_equal(rd32(now + 4 * i), (uint32_t)((int64_t)rd32(f->bytes + 4 * i) + delta));
        else
            assert_int_equal(rd32(now + 4 * i), rd32(f->bytes + 4 * i));
}

/* The tree of the file against its original: what shows the Granny data's header, the
 * section and `what` (a value file, a table) changed; nodes in the section had its
 * stored bytes as span, now their own (moved); in a RIG the wrapper's header and the
 * blocks after the Granny data too (moved; /unparsed names pieces by offset). */
static void assert_section_tree(const struct gfix *f, const char *what, const char *what2)
{
    const char *changed[] = {"info", "granny.gr2", "granny/header/crc", "granny/header/crc_computed",
                             "granny/header/total_size", "granny/sections/0/", "granny/root/Skeletons/0/skeleton.glb",
                             "granny/skeletons/0/skeleton.glb", "granny/skeletons/0/", "header.bin", "header/",
                             "unparsed/", what, what2, NULL};
    const char *added[] = {"unparsed/", "granny/sections/0/", NULL};
    const char *moved[] = {"", "granny", "granny/", "unparsed", "ik_chains", "ik_chains/", "full_bone_list",
                           "ik_target_slots", "info_nodes", "compress_nodes", NULL};
    const char *gr2_changed[] = {"info", "granny.gr2", "granny/header/crc", "granny/header/crc_computed",
                                 "granny/header/total_size", "granny/sections/0/",
                                 "granny/root/Skeletons/0/skeleton.glb", "granny/skeletons/0/skeleton.glb",
                                 "granny/skeletons/0/", what, what2, NULL};
    const char *gr2_moved[] = {"", "granny", "granny/", "unparsed", NULL};
    assert_trees_same_but(f->orig, f->path, f->rig ? changed : gr2_changed, f->rig ? moved : gr2_moved, added);
}

/* A compressed Granny section written one way (its data.bin replaced whole by cp, or a
 * value in it by printf, a bad value first being EINVAL with the sha256 unchanged), in a
 * .gr2 or a wrapped RIG: stored raw at the Granny data's old end (its tables raw too when
 * they were compressed with it: BitKnit2), total_size and the CRC updated; a .gr2 ends
 * with it, a RIG's blocks follow it (its offsets moved); the fixups and marshalling the
 * section had read the same; mounted again the value reads back and is writable (stored
 * as is now: a field of the file), every other node the same. Twice: two writes before
 * one commit (the commits before refused: the file moved away from its path, so both
 * stay pending): stored raw once, with the second write's bytes, the first write's value
 * in no copy left behind. */
struct section_case {
    const struct fxg_opts *o;
    const char *name;
    bool rig, by_value, twice;
};

/* Writes section bytes sec (their value being text; as printf's format: shell) the
 * case's way: 0 or the errno, as the editor (printf, cp) or, twice, open/write/close
 * report it. */
static int write_section(const struct section_case *c, const struct gfix *f, const uint8_t *sec, const char *text,
                         const char *shell)
{
    char p[512], cmd[1200], step;
    const char *rel = c->by_value ? "granny/root/Skeletons/0/Bones/1/Transform/position" : "granny/sections/0/data.bin";
    snprintf(p, sizeof p, "%s/%s", f->mnt, rel);
    if (c->twice)
        return c->by_value ? write_text(p, O_WRONLY | O_TRUNC, text, &step) : write_bytes(p, sec, f->r.section_size, &step);
    if (c->by_value) {
        snprintf(cmd, sizeof cmd, "printf '%s' > '%s'", shell, p);
    } else {
        char nf[300];
        snprintf(nf, sizeof nf, "%s/section-%s.bin", tmpdir, c->name);
        assert_int_equal(fx_write_file(nf, sec, f->r.section_size), 0);
        snprintf(cmd, sizeof cmd, "cp '%s' '%s'", nf, p);
    }
    return sh(cmd) == 0 ? 0 : EIO;
}

static void section_raw(const struct section_case *c)
{
    struct gfix f;
    gfix_make(&f, c->o, c->name, c->rig);
    char p[512], step, fp[512], mp[512];
    do_mount(f.path, f.mnt, "rw");
    const char *bone = "granny/root/Skeletons/0/Bones/1/Transform/position";
    assert_int_equal(mode_of(f.mnt, "granny/sections/0/data.bin"), 0644);
    assert_int_equal(mode_of(f.mnt, "granny/sections/0/stored.bin"), 0644); /* bytes as stored, same size */
    assert_int_equal(mode_of(f.mnt, bone), 0644);
    snprintf(fp, sizeof fp, "%s/granny/sections/0/fixups", f.mnt);
    snprintf(mp, sizeof mp, "%s/granny/sections/0/marshalling", f.mnt);
    char *fixups = text_of(fp), *marshals = text_of(mp);
    assert_true(strlen(fixups) > 0);
    /* before_it: values no fixture holds */
    static const float to[3] = {1.5f, -2.0f, 0.25f}, before_it[3] = {-123.5f, 456.25f, -789.125f};
    uint8_t *sec = section_with_position(&f.r, to), *sec0 = section_with_position(&f.r, before_it);
    snprintf(p, sizeof p, "%s/%s", f.mnt, bone);
    if (c->by_value) { /* the value file: its bytes are expanded ones, written the same way */
        uint8_t before[SHA256_DIGEST_SIZE], after[SHA256_DIGEST_SIZE];
        sha256_of(f.bytes, f.size, before);
        assert_int_equal(write_text(p, O_WRONLY | O_TRUNC, "1.5\n-2\nx\n", &step), EINVAL);
        size_t n0;
        uint8_t *same = slurp(f.path, &n0);
        sha256_of(same, n0, after);
        assert_memory_equal(before, after, SHA256_DIGEST_SIZE);
        free(same);
    }
    if (c->twice) {
        move_file(f.path, true);
        assert_int_equal(write_section(c, &f, sec0, "-123.5\n456.25\n-789.125\n", NULL), EBUSY);
        assert_int_equal(write_section(c, &f, sec, "1.5\n-2\n0.25\n", NULL), EBUSY);
        assert_true(info_has(f.mnt, "commit refused"));
        move_file(f.path, false); /* the file read is at its path again: the commit goes through */
        assert_int_equal(fsync_at(f.mnt, c->rig ? "header.bin" : "granny.gr2"), 0);
    } else {
        assert_int_equal(write_section(c, &f, sec, "1.5\n-2\n0.25\n", "1.5\\n-2\\n0.25\\n"), 0);
    }
    assert_true(info_has(f.mnt, "section 0 stored raw"));
    assert_true(info_has(f.mnt, "Granny CRC recomputed"));
    umount_rw(f.mnt, f.path);
    size_t n;
    uint8_t *now = slurp(f.path, &n);
    const uint8_t *g = now + f.rl.granny_pos, *old = f.bytes + f.rl.granny_pos;
    assert_section_raw(g, &f.r, sec);
    assert_container_follows(&f, now, n);
    /* the Granny data before its old end unchanged but the header's fields (total_size,
     * CRC) and the section's header */
    uint32_t arr = f.r.layout.section_array_offset, old_total = f.r.layout.total_size;
    assert_memory_equal(g + 0x2c, old + 0x2c, 0x20 + arr - 0x2c);
    assert_memory_equal(g + 0x20 + arr + 44, old + 0x20 + arr + 44, old_total - (0x20 + arr + 44));
    /* a value written before the last: in no copy of the section left behind */
    for (size_t i = 0; i + 12 <= n; i++)
        assert_true(memcmp(now + i, before_it, 12) != 0);
    free(now);
    assert_section_tree(&f, bone, NULL);
    do_mount(f.path, f.mnt, "rw");
    char *t = text_of(p);
    assert_string_equal(t, "1.5\n-2\n0.25\n");
    free(t);
    assert_int_equal(mode_of(f.mnt, bone), 0644); /* stored as is now: a field of the file */
    /* the fixups and marshalling the section had, the same records (raw now) */
    t = text_of(fp);
    assert_string_equal(t, fixups);
    free(t);
    t = text_of(mp);
    assert_string_equal(t, marshals);
    free(t);
    free(fixups);
    free(marshals);
    do_umount(f.mnt);
    wait_unlocked(f.path);
    free(sec0);
    free(sec);
    gfix_free(&f);
}

/* Every codec, both ways, a .gr2 and a wrapped RIG, once or twice before a commit.
 * (Changed behaviour, before: a compressed section in a wrapped RIG was read-only, EROFS;
 * now it is written back through the RIG's whole-Granny replacement.) */
static void test_rw_granny_section_raw(void **state)
{
    (void)state;
    static const struct section_case cases[] = {
        {&fx_oodle0_v6, "oodle0.gr2", false, false, false},
        {&fx_bk2_v7, "bk2.gr2", false, false, false},
        {&fx_oodle1_v7, "oodle1-value.gr2", false, true, false},
        {&fx_bk2_v7, "bk2-value.gr2", false, true, false},
        {&fx_oodle1_v6, "oodle1.rig", true, true, false},
        {&fx_bk2_v7, "bk2.rig", true, false, false},
        {&fx_bk2_v7, "bk2-value.rig", true, true, false},
        {&fx_oodle1_v7, "two-oodle1.gr2", false, false, true},
        {&fx_bk2_v7, "two-bk2.gr2", false, true, true},
        {&fx_oodle1_v6, "two-oodle1.rig", true, false, true},
        {&fx_bk2_v7, "two-bk2.rig", true, true, true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        section_raw(&cases[i]);
}

/* A Granny table in a compressed section (Misc/Points: 6 f32, 0 to 5), of a .gr2 or of
 * the Granny data in a wrapped RIG, written one way: its NAME.csv cell by cell (9.5 and -5
 * in; a cell that is no number first: EINVAL) or its NAME.bin in place with dd
 * conv=notrunc (the second float := 9.5; at its end first: EFBIG), either leaving the file
 * as it was when refused. At the commit the section is stored raw (compression 0, at the
 * Granny data's old end) with exactly the points' bytes changed (one copy of them: they
 * appear more than once), the CRC valid, the container following; mounted again,
 * Points.csv shows the new values and the rest of the tree is the same. */
struct points_case {
    const struct fxg_opts *o;
    const char *name;
    bool rig, by_bin;
};

static void points_in_section(const struct points_case *c)
{
    struct gfix f;
    gfix_make(&f, c->o, c->name, c->rig);
    do_mount(f.path, f.mnt, "rw");
    char p[512], cmd[1200], step;
    const char *csv = "granny/root/Misc/Points.csv", *bin = "granny/root/Misc/Points.bin";
    const char *rel = c->by_bin ? bin : csv;
    assert_int_equal(mode_of(f.mnt, csv), 0644);
    assert_int_equal(mode_of(f.mnt, bin), 0644);
    snprintf(p, sizeof p, "%s/%s", f.mnt, csv);
    char *t = text_of(p);
    assert_string_equal(t, "x,y,z\n0,1,2\n3,4,5\n"); /* the builder's points */
    free(t);
    snprintf(p, sizeof p, "%s/%s", f.mnt, rel);
    if (c->by_bin) {
        snprintf(cmd, sizeof cmd, "printf 'ABCD' | dd of='%s' bs=4 seek=6 conv=notrunc 2>/dev/null", p);
        assert_int_not_equal(sh(cmd), 0); /* at its end (24 bytes): EFBIG */
    } else {
        assert_int_equal(put_text(f.mnt, rel, "x,y,z\n0,1,2\n3,4,five\n", &step), EINVAL);
    }
    assert_file_is(f.path, f.bytes, f.size);
    const char *want_csv = c->by_bin ? "x,y,z\n0,9.5,2\n3,4,5\n" : "x,y,z\n9.5,1,2\n3,4,-5\n";
    if (c->by_bin) { /* 9.5 = 0x41180000, little-endian, at byte 4 */
        snprintf(cmd, sizeof cmd, "printf '\\000\\000\\030\\101' | dd of='%s' bs=1 seek=4 conv=notrunc 2>/dev/null", p);
        assert_int_equal(sh(cmd), 0);
    } else {
        put_value(f.mnt, rel, want_csv);
    }
    assert_true(info_has(f.mnt, "section 0 stored raw"));
    umount_rw(f.mnt, f.path);
    size_t n;
    uint8_t *now = slurp(f.path, &n);
    const uint8_t *g = now + f.rl.granny_pos, *h = g + 0x20 + f.r.layout.section_array_offset;
    uint32_t data_at = (f.r.layout.total_size + 3) & ~3u;
    assert_int_equal(rd32(h), 0); /* stored raw now */
    assert_int_equal(rd32(h + 4), data_at);
    assert_int_equal(rd32(h + 8), f.r.section_size);
    assert_gr2_crc_valid(g);
    assert_container_follows(&f, now, n);
    uint8_t old[24], neu[24];
    static const uint32_t oldv[6] = {0, 0x3f800000, 0x40000000, 0x40400000, 0x40800000, 0x40a00000};
    for (int i = 0; i < 6; i++)
        le32(old + 4 * i, oldv[i]);
    memcpy(neu, old, 24);
    if (c->by_bin) {
        le32(neu + 4, 0x41180000u); /* 9.5 */
    } else {
        le32(neu, 0x41180000u);      /* 9.5 */
        le32(neu + 20, 0xc0a00000u); /* -5 */
    }
    size_t matches = 0;
    for (size_t a = 0; a + 24 <= f.r.section_size; a++) {
        if (memcmp(f.r.section + a, old, 24) != 0 || memcmp(g + data_at + a, neu, 24) != 0)
            continue;
        uint8_t *want = malloc(f.r.section_size);
        memcpy(want, f.r.section, f.r.section_size);
        memcpy(want + a, neu, 24);
        matches += memcmp(g + data_at, want, f.r.section_size) == 0;
        free(want);
    }
    assert_int_equal(matches, 1);
    free(now);
    do_mount(f.path, f.mnt, NULL);
    snprintf(p, sizeof p, "%s/%s", f.mnt, csv);
    t = text_of(p);
    assert_string_equal(t, want_csv);
    free(t);
    do_umount(f.mnt);
    assert_section_tree(&f, csv, bin);
    gfix_free(&f);
}

static void test_rw_granny_table_in_compressed_section(void **state)
{
    (void)state;
    static const struct points_case cases[] = {
        {&fx_oodle1_v7, "table-oodle1.gr2", false, false},
        {&fx_bk2_v7, "table-bk2.rig", true, false},
        {&fx_oodle1_v7, "bin-oodle1.gr2", false, true},
        {&fx_bk2_v7, "bin-bk2.rig", true, true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        points_in_section(&cases[i]);
}

static uint64_t offset_of(const char *mnt, const char *rel)
{
    char p[512], off[32] = "";
    snprintf(p, sizeof p, "%s/%s", mnt, rel);
    assert_true(getxattr(p, "user.s3rig.offset", off, sizeof off - 1) > 0);
    return strtoull(off, NULL, 10);
}

/* t2fs node values: a surface's texture_id (the first u32 of its material node, stored
 * raw, big-endian here) written with printf, a raw leaf's bytes with dd conv=notrunc; a
 * value that does not fit is EINVAL and changes nothing; what lies in an RNC-compressed
 * node is read-only, and /info says why. Mounted again: the value, and nothing else. */
static void test_rw_t2fs_values(void **state)
{
    (void)state;
    struct fxt *root = fxt_sample(1, 3, true, true);
    size_t size;
    uint8_t *bytes = fxt_write(root, true, 0, 0, &size);
    fxt_free(root);
    char path[256], mnt[256], p[512], step, cmd[1024];
    write_fixture("values.t2fs", bytes, size, path, sizeof path);
    make_mountpoint("m-t2fs-values", mnt, sizeof mnt);
    do_mount(path, mnt, "rw");
    const char *tex = "models/0/surfaces/0/0/texture_id";
    assert_int_equal(mode_of(mnt, tex), 0644);
    assert_int_equal(mode_of(mnt, "root/0/0/0/0.bin"), 0444); /* inside a compressed node */
    assert_true(info_has(mnt, "t2fs nodes stored RNC-compressed (N.rnc and what it holds) stay read-only"));
    snprintf(p, sizeof p, "%s/root/0/0/0/0.bin", mnt);
    assert_int_equal(write_text(p, O_WRONLY, "x", &step), EROFS);
    uint64_t tex_at = offset_of(mnt, tex), leaf_at = offset_of(mnt, "root/2.bin");
    snprintf(p, sizeof p, "%s/%s", mnt, tex);
    assert_int_equal(write_text(p, O_WRONLY | O_TRUNC, "4294967296\n", &step), EINVAL);
    assert_file_is(path, bytes, size);
    snprintf(cmd, sizeof cmd, "printf '305419896\\n' > '%s'", p);
    assert_int_equal(sh(cmd), 0);
    snprintf(cmd, sizeof cmd, "printf 'WXYZ' | dd of='%s/root/2.bin' bs=1 seek=3 conv=notrunc 2>/dev/null", mnt);
    assert_int_equal(sh(cmd), 0);
    umount_rw(mnt, path);
    uint8_t *want = malloc(size);
    memcpy(want, bytes, size);
    static const uint8_t be32[4] = {0x12, 0x34, 0x56, 0x78};
    memcpy(want + tex_at, be32, 4);
    memcpy(want + leaf_at + 3, "WXYZ", 4);
    assert_file_is(path, want, size);
    do_mount(path, mnt, NULL);
    char *t = text_of(p);
    assert_string_equal(t, "305419896\n");
    free(t);
    do_umount(mnt);
    free(want);
    free(bytes);
}

/* v as binary32 in byte order be, into out. */
static void f32_bytes(float v, bool be, uint8_t *out)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    for (int i = 0; i < 4; i++)
        out[i] = (uint8_t)(u >> (be ? 24 - 8 * i : 8 * i));
}

/* A Turok 1 object's bounds (6 f32, its bounds struct's first 24 bytes, in the file's
 * byte order: formats/t2fs.md), written as shown ("min X Y Z" / "max X Y Z"), in either
 * byte order: refusals (a value short, one that does not fit, a label changed) are EINVAL
 * with the sha256 unchanged; the new values land where the builder put the old ones, in
 * the file's byte order, and read back after a new mount; the rest of the tree is the
 * same but what shows those bytes. An object whose struct is too short has bounds.error,
 * nothing to write. */
static void test_rw_t1_bounds(void **state)
{
    (void)state;
    static const float was[6] = {-1.5f, -2.0f, -3.0f, 4.0f, 5.25f, 6.0f}, now[6] = {0.5f, -1, 2, 3, 4, 1e-3f};
    const struct {
        const char *text, *why;
    } bad[] = {{"min 1 2\nmax 4 5 6\n", "5 values for 6"},
               {"min 1 2 3\nmax 4 5 1e40\n", "1e40 does not fit an f32"},
               {"lo 1 2 3\nmax 4 5 6\n", "line 1 must start with 'min'"},
               {"min 1 2 3\n", "1 lines for 2"}};
    for (int be = 0; be <= 1; be++) {
        struct fxt *root = fxt_t1_sample(be);
        size_t size;
        uint8_t *bytes = fxt_write(root, be, 0, 0, &size);
        fxt_free(root);
        char name[32], path[256], orig[300], mnt[256], p[512], step;
        snprintf(name, sizeof name, "bounds-%s.t2fs", be ? "be" : "le");
        write_fixture(name, bytes, size, path, sizeof path);
        snprintf(orig, sizeof orig, "%s/orig-%s", tmpdir, name);
        assert_int_equal(fx_write_file(orig, bytes, size), 0);
        make_mountpoint("m-bounds", mnt, sizeof mnt);
        do_mount(path, mnt, "rw");
        assert_int_equal(mode_of(mnt, "models/0/bounds"), 0644);
        snprintf(p, sizeof p, "%s/models/1/bounds.error", mnt);
        assert_int_equal(access(p, F_OK), 0);
        uint8_t old24[24], new24[24], before[SHA256_DIGEST_SIZE], after[SHA256_DIGEST_SIZE];
        for (int k = 0; k < 6; k++) {
            f32_bytes(was[k], be, old24 + 4 * k);
            f32_bytes(now[k], be, new24 + 4 * k);
        }
        size_t at = find_once(bytes, size, old24, 24);
        assert_true(at != SIZE_MAX);
        sha256_of(bytes, size, before);
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            assert_int_equal(put_text(mnt, "models/0/bounds", bad[i].text, &step), EINVAL);
            if (!info_has(mnt, bad[i].why))
                fail_msg("/info does not say '%s'", bad[i].why);
            size_t n;
            uint8_t *same = slurp(path, &n);
            sha256_of(same, n, after);
            assert_memory_equal(before, after, SHA256_DIGEST_SIZE);
            free(same);
        }
        put_value(mnt, "models/0/bounds", "min 0.5 -1 2\nmax 3 4 0.001\n");
        umount_rw(mnt, path);
        uint8_t *want = malloc(size);
        memcpy(want, bytes, size);
        memcpy(want + at, new24, 24);
        assert_file_is(path, want, size);
        do_mount(path, mnt, NULL);
        snprintf(p, sizeof p, "%s/models/0/bounds", mnt);
        char *t = text_of(p);
        assert_string_equal(t, "min 0.5 -1 2\nmax 3 4 0.00100000005\n"); /* 1e-3 as binary32, 9 digits */
        free(t);
        do_umount(mnt);
        /* the bounds leaf: under /root, its /named twin, and /models' two files */
        const char *changed[] = {"models/0/bounds", "models/0/bounds.bin", "root/0/0/0/0.bin",
                                 "named/isGraphicObjects/0/isObjectInfo/bounds.bin", NULL};
        assert_trees_differ_only(orig, path, changed);
        free(want);
        free(bytes);
    }
}

static void test_rw_editors(void **state)
{
    (void)state;
    struct rig r;
    rig_make(&r, "editors.rig");
    do_mount(r.path, r.mnt, "rw");
    uint8_t *want = malloc(r.size);
    memcpy(want, r.bytes, r.size);
    char cmd[1024];
    /* printf > value */
    snprintf(cmd, sizeof cmd, "printf '7\\n' > '%s/header/unused_1'", r.mnt);
    assert_int_equal(sh(cmd), 0);
    le32(want + UNUSED0_POS + 4, 7);
    /* sed -i: a temporary in the same folder, renamed over the value; vim in batch mode
     * (its backup goes elsewhere: no other new file here). Both read back at once. */
    char vp[512];
    snprintf(cmd, sizeof cmd, "cd '%s/header' && sed -i 's/^0$/513/' unused_2", r.mnt);
    assert_int_equal(sh(cmd), 0);
    snprintf(vp, sizeof vp, "%s/header/unused_2", r.mnt);
    char *vt = text_of(vp);
    assert_string_equal(vt, "513\n");
    free(vt);
    snprintf(cmd, sizeof cmd, "HOME='%s' vim -es -c '%%s/^0$/9/' -c wq '%s/header/unused_0' </dev/null", tmpdir,
             r.mnt);
    assert_int_equal(sh(cmd), 0);
    le32(want + UNUSED0_POS, 9);
    snprintf(vp, sizeof vp, "%s/header/unused_0", r.mnt);
    vt = text_of(vp);
    assert_string_equal(vt, "9\n");
    free(vt);
    /* dd conv=notrunc at an offset of a byte range */
    snprintf(cmd, sizeof cmd, "printf 'WXYZ' | dd of='%s/header.bin' bs=1 seek=%d conv=notrunc 2>/dev/null", r.mnt,
             UNUSED0_POS + 8);
    assert_int_equal(sh(cmd), 0);
    memcpy(want + UNUSED0_POS + 8, "WXYZ", 4);
    /* a hex edit: dump, change, write back in place */
    snprintf(cmd, sizeof cmd,
             "cd '%s' && xxd -s %d -l 4 header.bin | sed 's/: [0-9a-f]* *[0-9a-f]*/: 4142 4344/' > '%s/hex.txt' && "
             "xxd -r '%s/hex.txt' header.bin",
             r.mnt, UNUSED0_POS + 12, tmpdir, tmpdir);
    assert_int_equal(sh(cmd), 0);
    memcpy(want + UNUSED0_POS + 12, "ABCD", 4);
    /* cp of a file of the range's size over it */
    char hb[300];
    snprintf(hb, sizeof hb, "%s/header-new.bin", tmpdir);
    uint8_t header[52];
    memcpy(header, want, 52);
    le32(header + UNUSED0_POS + 12, 0x51525354);
    assert_int_equal(fx_write_file(hb, header, 52), 0);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s/header.bin'", hb, r.mnt);
    assert_int_equal(sh(cmd), 0);
    memcpy(want, header, 52);
    umount_rw(r.mnt, r.path);
    assert_file_is(r.path, want, r.size);
    do_mount(r.path, r.mnt, NULL);
    char p[512];
    snprintf(p, sizeof p, "%s/header/unused_1", r.mnt);
    char *t = text_of(p);
    assert_string_equal(t, "7\n");
    free(t);
    do_umount(r.mnt);
    free(want);
    rig_free(&r);
}

static void test_rw_refusals(void **state)
{
    (void)state;
    struct rig r;
    rig_make(&r, "refuse.rig");
    do_mount(r.path, r.mnt, "rw");
    char p[512], step;
    /* text that cannot be the field: EINVAL on the write when a line is complete */
    snprintf(p, sizeof p, "%s/ik_chains/0/pole", r.mnt);
    assert_int_equal(write_text(p, O_WRONLY | O_TRUNC, "2147483648\n", &step), EINVAL);
    assert_int_equal(step, 'w');
    assert_true(info_has(r.mnt, "refused /ik_chains/0/pole: 2147483648 does not fit a i32"));
    snprintf(p, sizeof p, "%s/granny/root/Skeletons/0/Bones/1/Transform/position", r.mnt);
    assert_int_equal(write_text(p, O_WRONLY | O_TRUNC, "abc\n", &step), EINVAL);
    assert_int_equal(step, 'w');
    assert_true(info_has(r.mnt, "'abc' is not a number (f32)"));
    /* ... or at the close, when only the whole text tells */
    assert_int_equal(write_text(p, O_WRONLY | O_TRUNC, "1\n2", &step), EINVAL);
    assert_int_equal(step, 'c');
    assert_true(info_has(r.mnt, "2 lines for 3 values"));
    /* byte ranges have their size */
    snprintf(p, sizeof p, "%s/header.bin", r.mnt);
    int fd = open(p, O_WRONLY);
    assert_true(fd >= 0);
    errno = 0;
    assert_int_equal(pwrite(fd, "xx", 2, 52), -1);
    assert_int_equal(errno, EFBIG);
    assert_int_equal(ftruncate(fd, 10), -1);
    assert_int_equal(errno, EPERM);
    assert_int_equal(ftruncate(fd, 52), 0); /* its own size: nothing to do */
    assert_int_equal(close(fd), 0);
    /* written whole (O_TRUNC, as cp does): only its own size is taken, at the close */
    assert_int_equal(write_text(p, O_WRONLY | O_TRUNC, "x", &step), EPERM);
    assert_int_equal(step, 'c');
    assert_true(info_has(r.mnt, "refused /header.bin: 1 bytes for a range of 52"));
    /* what is not writable, and what cannot be made */
    snprintf(p, sizeof p, "%s/info", r.mnt);
    assert_int_equal(write_text(p, O_WRONLY, "x", &step), EROFS);
    snprintf(p, sizeof p, "%s/ik_target_slots.names", r.mnt);
    assert_int_equal(write_text(p, O_WRONLY, "x", &step), EROFS);
    /* new files: only an editor's temporary beside a writable file, which must become one */
    snprintf(p, sizeof p, "%s/ik_chains/new", r.mnt);
    assert_int_equal(write_text(p, O_WRONLY | O_CREAT, "x", &step), EPERM);
    snprintf(p, sizeof p, "%s/header/new", r.mnt);
    assert_int_equal(write_text(p, O_WRONLY | O_CREAT, "abc\n", &step), 0);
    char target[512];
    snprintf(target, sizeof target, "%s/header/unused_0", r.mnt);
    assert_int_equal(rename(p, target), -1);
    assert_int_equal(errno, EINVAL); /* not a u32 */
    snprintf(target, sizeof target, "%s/ik_target_slots.names", r.mnt);
    assert_int_equal(rename(p, target), -1);
    assert_int_equal(errno, EPERM); /* not writable */
    assert_int_equal(unlink(p), 0);
    assert_int_equal(access(p, F_OK), -1);
    snprintf(p, sizeof p, "%s/header.bin", r.mnt);
    assert_int_equal(unlink(p), -1);
    assert_int_equal(errno, EPERM);
    char q[512];
    snprintf(q, sizeof q, "%s/header.bin2", r.mnt);
    assert_int_equal(rename(p, q), -1);
    assert_int_equal(errno, EPERM);
    assert_file_is(r.path, r.bytes, r.size);
    /* the file changed by someone else: EBUSY at the close, the edit stays pending */
    struct timespec ts[2] = {{1, 0}, {1, 0}};
    assert_int_equal(utimensat(AT_FDCWD, r.path, ts, 0), 0);
    snprintf(p, sizeof p, "%s/header/unused_0", r.mnt);
    assert_int_equal(write_text(p, O_WRONLY | O_TRUNC, "5\n", &step), EBUSY);
    assert_int_equal(step, 'c');
    assert_true(info_has(r.mnt, "commit refused: the file was changed by someone else"));
    assert_true(info_has(r.mnt, "4 bytes of edits stay pending"));
    umount_rw(r.mnt, r.path); /* refused again at unmount: the edit kept apart */
    assert_file_is(r.path, r.bytes, r.size);
    char unsaved[300];
    snprintf(unsaved, sizeof unsaved, "%s.s3rig-unsaved", r.path);
    uint8_t *kept = malloc(r.size);
    memcpy(kept, r.bytes, r.size);
    le32(kept + UNUSED0_POS, 5);
    assert_file_is(unsaved, kept, r.size);
    free(kept);
    char bak[300];
    snprintf(bak, sizeof bak, "%s~", r.path);
    assert_int_equal(access(bak, F_OK), -1);
    rig_free(&r);
}

static void test_rw_backup_off(void **state)
{
    (void)state;
    struct rig r;
    rig_make(&r, "nobak.rig");
    do_mount(r.path, r.mnt, "rw,backup=0");
    put_value(r.mnt, "header/unused_0", "1\n");
    assert_true(info_has(r.mnt, "rw: writable, backup off, 1 commit"));
    umount_rw(r.mnt, r.path);
    char bak[300];
    snprintf(bak, sizeof bak, "%s~", r.path);
    assert_int_equal(access(bak, F_OK), -1);
    rig_free(&r);
}

/* A reader that opened a file before a commit reads the new bytes after it (never bytes
 * of another place). */
static void test_rw_open_handle_after_commit(void **state)
{
    (void)state;
    struct rig r;
    rig_make(&r, "handle.rig");
    do_mount(r.path, r.mnt, "rw");
    char p[512];
    snprintf(p, sizeof p, "%s/header.bin", r.mnt);
    int fd = open(p, O_RDONLY);
    assert_true(fd >= 0);
    uint8_t b[52];
    assert_int_equal(pread(fd, b, 52, 0), 52);
    assert_memory_equal(b, r.bytes, 52);
    put_value(r.mnt, "header/unused_0", "4660\n");
    assert_int_equal(pread(fd, b, 52, 0), 52);
    uint8_t want[52];
    memcpy(want, r.bytes, 52);
    le32(want + UNUSED0_POS, 4660);
    assert_memory_equal(b, want, 52);
    close(fd);
    /* the same path again, through whatever the kernel kept */
    fd = open(p, O_RDONLY);
    assert_true(fd >= 0);
    assert_int_equal(pread(fd, b, 52, 0), 52);
    assert_memory_equal(b, want, 52);
    close(fd);
    umount_rw(r.mnt, r.path);
    rig_free(&r);
}

static uint32_t field_at(const uint8_t *file, const char *mnt, const char *rel, int width)
{
    char p[512], v[32];
    assert_true((size_t)snprintf(p, sizeof p, "%s/%s", mnt, rel) < sizeof p);
    ssize_t n = getxattr(p, "user.s3rig.offset", v, sizeof v - 1);
    assert_true(n > 0);
    v[n] = 0;
    const uint8_t *b = file + strtoull(v, NULL, 10);
    return width == 2 ? (uint32_t)(b[0] | b[1] << 8) : rd32(b);
}

/* A package resource's data.bin replaced whole (cp, then sed -i): stored after the end,
 * zlib as before, its index record pointed at it; read back by the mount and, from the
 * index record's bytes, by zlib itself; every other resource as it was. */
static void test_rw_package_resource(void **state)
{
    (void)state;
    size_t size;
    uint8_t *pkg = fx_kind("package-s4", 0, NULL, &size);
    char path[256], orig[300], mnt[256];
    write_fixture("res.package", pkg, size, path, sizeof path);
    snprintf(orig, sizeof orig, "%s/res-orig.package", tmpdir);
    assert_int_equal(fx_write_file(orig, pkg, size), 0);
    make_mountpoint("m-res", mnt, sizeof mnt);
    do_mount(path, mnt, "rw");
    const char *res = "resources/S4_015A1849_00000000_00000001000000A0%%+GEOM.simgeom";
    char rel[512], p[1100], cmd[1600];
    snprintf(rel, sizeof rel, "%s/compression", res);
    snprintf(p, sizeof p, "%s/%s", mnt, rel);
    char *t = text_of(p);
    assert_string_equal(t, "zlib\n");
    free(t);
    /* new content of another size, through cp */
    char src[300];
    snprintf(src, sizeof src, "%s/new.xml", tmpdir);
    FILE *f = fopen(src, "w");
    for (int i = 0; i < 500; i++)
        fprintf(f, "<T n=\"%d\">tuning</T>\n", i);
    fclose(f);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s/%s/data.bin' && cd '%s/%s' && sed -i 's/n=\"7\"/n=\"seven\"/' data.bin", src,
             mnt, res, mnt, res);
    assert_int_equal(sh(cmd), 0);
    snprintf(cmd, sizeof cmd, "sed 's/n=\"7\"/n=\"seven\"/' '%s' > '%s.want'", src, src);
    assert_int_equal(sh(cmd), 0);
    char wantp[320];
    snprintf(wantp, sizeof wantp, "%s.want", src);
    size_t wlen;
    uint8_t *want = slurp(wantp, &wlen);
    snprintf(p, sizeof p, "%s/%s/data.bin", mnt, res);
    assert_file_is(p, want, wlen);
    umount_rw(mnt, path);
    /* the bytes, from the index record: zlib-compressed, after the old end */
    size_t nlen;
    uint8_t *now = slurp(path, &nlen);
    do_mount(path, mnt, NULL);
    char f_off[600], f_st[600], f_mem[600], f_comp[600];
    snprintf(f_off, sizeof f_off, "%s/offset", res);
    snprintf(f_st, sizeof f_st, "%s/stored_size", res);
    snprintf(f_mem, sizeof f_mem, "%s/memory_size", res);
    snprintf(f_comp, sizeof f_comp, "%s/compression", res);
    uint32_t at = field_at(now, mnt, f_off, 4), stored = field_at(now, mnt, f_st, 4) & 0x7fffffffu;
    assert_int_equal(field_at(now, mnt, f_mem, 4), wlen);
    assert_int_equal(field_at(now, mnt, f_comp, 2), 0x5A42);
    assert_true(at >= size && (uint64_t)at + stored <= nlen);
    uLongf out = wlen + 16;
    uint8_t *inflated = malloc(out);
    assert_int_equal(uncompress(inflated, &out, now + at, stored), Z_OK);
    assert_int_equal(out, wlen);
    assert_memory_equal(inflated, want, wlen);
    assert_file_is(p, want, wlen);
    do_umount(mnt);
    /* the outside reader: the package reads whole, the resource zlib with the new bytes */
    char *lines = outside_read(path), hex[2 * SHA256_DIGEST_SIZE + 1], wline[300];
    sha256_hex(want, wlen, hex);
    snprintf(wline, sizeof wline, "entry 015A1849 00000000 00000001000000A0 comp=zlib stored=%u memory=%zu sha256=%s",
             stored, wlen, hex);
    char *got = entry_line(lines, "015A1849 00000000 00000001000000A0");
    assert_non_null(got);
    assert_string_equal(got, wline);
    free(got);
    free(lines);
    /* every other resource as it was */
    char ma[256], mb[256];
    make_mountpoint("m-res-a", ma, sizeof ma);
    make_mountpoint("m-res-b", mb, sizeof mb);
    do_mount(orig, ma, NULL);
    do_mount(path, mb, NULL);
    struct snap sa = {0}, sb = {0};
    snap_path(&sa, ma);
    snap_path(&sb, mb);
    for (size_t i = 0; i < sa.n; i++) {
        const struct snap_entry *x = &sa.e[i], *y = snap_find(&sb, x->path);
        /* what may differ: the resource itself (and its links by type), the hole its old
         * bytes left (unparsed), its index record, the /info files (sizes, and the cache's
         * counts, which every /info of a mount shows) */
        bool mine = strncmp(x->path, res, strlen(res)) == 0 || strncmp(x->path, "unparsed", 8) == 0 ||
                    strcmp(x->path, "info") == 0 || strcmp(x->path, "index.bin") == 0 ||
                    (strlen(x->path) > 5 && strcmp(x->path + strlen(x->path) - 5, "/info") == 0) ||
                    strncmp(x->path, "by-type", 7) == 0 || strcmp(x->path, "") == 0;
        if (mine)
            continue;
        assert_non_null(y);
        if (x->kind != y->kind || x->size != y->size || x->dlen != y->dlen ||
            (x->dlen && memcmp(x->data, y->data, x->dlen) != 0) || strcmp(x->offset, y->offset) != 0)
            fail_msg("%s differs:\n%.*s\n----\n%.*s", x->path, (int)x->dlen, (const char *)x->data, (int)y->dlen, (const char *)y->data);
    }
    snap_free(&sa);
    snap_free(&sb);
    do_umount(ma);
    do_umount(mb);
    free(inflated);
    free(now);
    free(want);
    free(pkg);
}

/* A wrapped RIG's Granny data replaced by a Granny file of another size: the new RIG is
 * the header with its offsets past the Granny data moved, the new Granny bytes, padding
 * to 4 bytes, then the old IK chains and lists unchanged (docs/formats/rig.md). */
static void test_rw_rig_granny_replaced(void **state)
{
    (void)state;
    struct rig r;
    rig_make(&r, "regranny.rig");
    size_t glen;
    struct fx_gr2_layout gl;
    uint8_t *g = fx_sample_gr2("le32", 7, &glen, &gl);
    char gp[300];
    snprintf(gp, sizeof gp, "%s/new.gr2", tmpdir);
    assert_int_equal(fx_write_file(gp, g, glen), 0);
    do_mount(r.path, r.mnt, "rw");
    char cmd[800];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s/granny.gr2'", gp, r.mnt);
    assert_int_equal(sh(cmd), 0);
    char p[512];
    snprintf(p, sizeof p, "%s/granny.gr2", r.mnt);
    assert_file_is(p, g, glen);
    /* the new Granny data waited for its commit in a file, not in memory: what was in
     * memory at most is the wrapper's offsets (4 bytes each) */
    snprintf(p, sizeof p, "%s/info", r.mnt);
    char *info = text_of(p);
    const char *line = strstr(info, "rw: pending: ");
    unsigned long long pending, in_mem, most;
    assert_non_null(line);
    assert_int_equal(sscanf(line, "rw: pending: %llu bytes, %llu of them in memory; at most %llu in memory at once",
                            &pending, &in_mem, &most),
                     3);
    assert_true(glen > 64 && most <= 6 * 4);
    free(info);
    snprintf(p, sizeof p, "%s/granny.gr2", r.mnt);
    umount_rw(r.mnt, r.path);
    uint64_t g0 = r.rl.granny_pos, ik = r.rl.ik_pos, new_ik = (g0 + glen + 3) & ~3ull;
    int64_t delta = (int64_t)new_ik - (int64_t)ik;
    size_t size = (size_t)(new_ik + (r.size - ik));
    uint8_t *want = calloc(1, size);
    memcpy(want, r.bytes, g0);
    for (int i = 4; i <= 8; i++) /* offsets count from their own field */
        if (4 * i + rd32(r.bytes + 4 * i) >= ik)
            le32(want + 4 * i, (uint32_t)((int64_t)rd32(r.bytes + 4 * i) + delta));
    /* int2_offset follows the Granny size when it held it (exact, or padded) */
    uint32_t int2 = rd32(r.bytes + 8), old_len = rd32(r.bytes + g0 + 0x24);
    if (int2 == old_len)
        le32(want + 8, (uint32_t)glen);
    else if (int2 == ik - g0)
        le32(want + 8, (uint32_t)(new_ik - g0));
    memcpy(want + g0, g, glen);
    memcpy(want + new_ik, r.bytes + ik, r.size - ik);
    size_t n;
    uint8_t *now = slurp(r.path, &n);
    assert_int_equal(n, size);
    assert_memory_equal(now, want, size);
    free(now);
    /* mounted again: the same IK chains and lists as before */
    do_mount(r.path, r.mnt, NULL);
    snprintf(p, sizeof p, "%s/ik_chains/0/pole", r.mnt);
    char *t = text_of(p);
    char want_pole[16];
    snprintf(want_pole, sizeof want_pole, "%d\n", fx_sample_chains[0].pole);
    assert_string_equal(t, want_pole);
    free(t);
    snprintf(p, sizeof p, "%s/full_bone_list", r.mnt);
    t = text_of(p);
    assert_string_equal(t, "0\n1\n2\n3\n4\n5\n");
    free(t);
    do_umount(r.mnt);
    free(want);
    free(g);
    rig_free(&r);
}

/* A RIG's granny.gr2 replaced whole (another Granny file, of another length) and a value
 * in the old Granny data written, both pending at one commit (the commits before refused:
 * the file was moved away from its path), in either order. A value written first is
 * replaced with the rest of the Granny data; a value written after the replacement lies
 * in bytes that are no more: refused (EBUSY, an /info line saying why). Committed, the
 * file is exactly the RIG with the new Granny bytes (the wrapper's offsets moved), whose
 * CRC is valid by the rule (no CRC of the old data's range written over it). */
static void granny_replaced_and_value(bool value_first)
{
    struct rig r;
    rig_make(&r, value_first ? "gv-first.rig" : "gv-after.rig");
    size_t glen;
    struct fx_gr2_layout gl;
    uint8_t *g = fx_sample_gr2("le32", 7, &glen, &gl);
    assert_gr2_crc_valid(g);
    assert_int_not_equal(glen, rd32(r.bytes + r.rl.granny_pos + 0x24)); /* another length */
    char p[512], gpath[512], step;
    const char *bone = "granny/root/Skeletons/0/Bones/1/Transform/position";
    snprintf(p, sizeof p, "%s/%s", r.mnt, bone);
    do_mount(r.path, r.mnt, "rw");
    snprintf(gpath, sizeof gpath, "%s/granny.gr2", r.mnt);
    move_file(r.path, true);
    for (int k = 0; k < 2; k++)
        if ((k == 0) == value_first) {
            assert_int_equal(write_text(p, O_WRONLY | O_TRUNC, "1.5\n-2\n0.25\n", &step), EBUSY);
        } else {
            assert_int_equal(write_bytes(gpath, g, glen, &step), EBUSY);
            assert_int_equal(step, 'c');
        }
    assert_true(info_has(r.mnt, "commit refused"));
    if (!value_first)
        assert_true(info_has(r.mnt, "a whole replacement of the bytes it lies in is pending"));
    move_file(r.path, false);
    assert_int_equal(fsync_at(r.mnt, "header.bin"), 0);
    umount_rw(r.mnt, r.path);
    uint64_t g0 = r.rl.granny_pos, ik = r.rl.ik_pos, new_ik = (g0 + glen + 3) & ~3ull;
    size_t n;
    uint8_t *now = slurp(r.path, &n);
    assert_int_equal(n, new_ik + (r.size - ik));
    assert_memory_equal(now + g0, g, glen);
    assert_gr2_crc_valid(now + g0);
    assert_memory_equal(now + new_ik, r.bytes + ik, r.size - ik);
    free(now);
    free(g);
    rig_free(&r);
}

static void test_rw_granny_replaced_and_value(void **state)
{
    (void)state;
    granny_replaced_and_value(true);
    granny_replaced_and_value(false);
}

/* A reader holding a file whose part is gone after a commit: ESTALE, never other bytes. */
static void test_rw_moved_part_estale(void **state)
{
    (void)state;
    struct rig r;
    rig_make(&r, "stale.rig");
    do_mount(r.path, r.mnt, "rw");
    char p[512];
    snprintf(p, sizeof p, "%s/granny/sections/1/header.bin", r.mnt);
    int fd = open(p, O_RDONLY);
    assert_true(fd >= 0);
    uint8_t b[44];
    assert_int_equal(pread(fd, b, sizeof b, 0), (ssize_t)sizeof b);
    /* one section fewer: granny/sections/1 is no more */
    put_value(r.mnt, "granny/header/section_count", "1\n");
    errno = 0;
    assert_int_equal(pread(fd, b, sizeof b, 0), -1);
    assert_int_equal(errno, ESTALE);
    close(fd);
    assert_int_equal(access(p, F_OK), -1);
    assert_int_equal(errno, ENOENT);
    umount_rw(r.mnt, r.path);
    rig_free(&r);
}

static void sha256_of(const uint8_t *b, size_t n, uint8_t out[SHA256_DIGEST_SIZE])
{
    struct sha256_ctx c;
    sha256_init(&c);
    sha256_update(&c, n, b);
    sha256_digest(&c, SHA256_DIGEST_SIZE, out);
}

static uint64_t now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000u + (uint64_t)t.tv_nsec / 1000u;
}

/* A writer in a child: value k into the file at p; tells the parent through fd `go`
 * just before the close that commits; exits 0 when the close succeeded. */
static pid_t start_commit(const char *p, unsigned k, int go)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        char v[32];
        snprintf(v, sizeof v, "%u\n", k);
        int fd = open(p, O_WRONLY | O_TRUNC);
        bool wrote = fd >= 0 && write(fd, v, strlen(v)) == (ssize_t)strlen(v);
        if (write(go, "x", 1) != 1)
            _exit(2);
        _exit(wrote && close(fd) == 0 ? 0 : 1);
    }
    return pid;
}

/* The daemon killed (SIGKILL) at 200 random moments during commits of a package of a few
 * MB (issue 34, "Crash safety"): each round mounts rw (so a new mount works after the
 * kill before, and removes what that kill left), starts the close that commits one value
 * and kills the daemon a random time after the close began, within about twice what an
 * undisturbed commit takes. After each, the file is the old or the new version (sha256),
 * never anything else. The delays are seeded and the seed printed (S3RIG_KILL_SEED
 * replays a run). */
static void test_rw_sigkill_during_commits(void **state)
{
    (void)state;
    char *mb[] = {"16"}; /* 16 MiB of resource, zlib: a package of about 4 MB */
    size_t size;
    uint8_t *pkg = fx_kind("package-one", 1, mb, &size);
    assert_non_null(pkg);
    char path[256], mnt[256], p[512];
    write_fixture("kill.package", pkg, size, path, sizeof path);
    make_mountpoint("m-kill", mnt, sizeof mnt);
    snprintf(p, sizeof p, "%s/header/user_minor", mnt);
    const char *seed_env = getenv("S3RIG_KILL_SEED");
    unsigned seed = seed_env ? (unsigned)strtoul(seed_env, NULL, 10) : (unsigned)time(NULL);
    printf("kill delays: seed %u (S3RIG_KILL_SEED=%u replays them)\n", seed, seed);
    srand(seed);
    /* where the value lies, and how long a commit takes undisturbed */
    do_mount(path, mnt, "rw");
    char v[32];
    ssize_t n = getxattr(p, "user.s3rig.offset", v, sizeof v - 1);
    assert_true(n > 0);
    v[n] = 0;
    size_t at = (size_t)strtoull(v, NULL, 10);
    assert_true(at + 4 <= size);
    uint64_t t0 = now_us();
    put_value(mnt, "header/user_minor", "1\n");
    uint64_t commit_us = now_us() - t0;
    umount_rw(mnt, path);
    le32(pkg + at, 1);
    enum { ROUNDS = 200 };
    uint8_t *next = malloc(size);
    assert_non_null(next);
    unsigned olds = 0, news = 0, left = 0;
    for (unsigned round = 0; round < ROUNDS; round++) {
        /* pkg: what the file is now; next: the version this round commits */
        unsigned k = round + 2;
        memcpy(next, pkg, size);
        le32(next + at, k);
        uint8_t h_old[SHA256_DIGEST_SIZE], h_new[SHA256_DIGEST_SIZE], h_now[SHA256_DIGEST_SIZE];
        sha256_of(pkg, size, h_old);
        sha256_of(next, size, h_new);
        pid_t daemon = start_mount_fg(path, mnt, "rw");
        int go[2];
        assert_int_equal(pipe(go), 0);
        pid_t writer = start_commit(p, k, go[1]);
        char c;
        assert_int_equal(read(go[0], &c, 1), 1);
        usleep((useconds_t)((uint64_t)rand() % (2 * commit_us + 1)));
        kill(daemon, SIGKILL);
        waitpid(daemon, NULL, 0);
        waitpid(writer, NULL, 0);
        close(go[0]);
        close(go[1]);
        char cmd[400];
        snprintf(cmd, sizeof cmd, "fusermount3 -uz '%s'", mnt);
        sh(cmd);
        size_t len;
        uint8_t *now = slurp(path, &len);
        sha256_of(now, len, h_now);
        bool is_old = memcmp(h_now, h_old, sizeof h_now) == 0, is_new = memcmp(h_now, h_new, sizeof h_now) == 0;
        if (!is_old && !is_new)
            fail_msg("round %u (seed %u): the file is neither the old nor the new version", round, seed);
        olds += is_old;
        news += is_new;
        if (is_new)
            memcpy(pkg, next, size);
        free(now);
        DIR *d = opendir(tmpdir); /* a commit's temporary the kill left (the next mount removes it) */
        for (struct dirent *e; (e = readdir(d));)
            left += e->d_name[0] == '.' && strstr(e->d_name, ".s3rig-") != NULL;
        closedir(d);
    }
    printf("%u kills: %u left the old version, %u the new one, %u a commit's temporary "
           "(undisturbed commit: %llu us)\n",
           ROUNDS, olds, news, left, (unsigned long long)commit_us);
    /* the kills fell before, after and inside commits */
    assert_true(olds > 0 && news > 0);
    /* a new mount works, and takes away what the last kills left */
    do_mount(path, mnt, "rw");
    DIR *d = opendir(tmpdir);
    for (struct dirent *e; (e = readdir(d));)
        assert_false(e->d_name[0] == '.' && strstr(e->d_name, ".s3rig-"));
    closedir(d);
    put_value(mnt, "header/user_minor", "7\n");
    umount_rw(mnt, path);
    le32(pkg + at, 7);
    assert_file_is(path, pkg, size);
    free(next);
    free(pkg);
}

/* A commit that cannot be written (a full disk): ENOSPC on the close, the file and its
 * folder as they were, the edit pending; committed by a later fsync once there is room. */
static void test_rw_disk_full(void **state)
{
    (void)state;
    struct rig r;
    char small[256], file[300], filler[300], mnt[256];
    snprintf(small, sizeof small, "%s/small", tmpdir);
    assert_int_equal(mkdir(small, 0755), 0);
    assert_int_equal(mount("tmpfs", small, "tmpfs", 0, "size=64k"), 0);
    char names[FX_SAMPLE_BONES][32];
    r.bytes = fx_sample_rig(&r.size, &r.rl, &r.gl, names);
    snprintf(file, sizeof file, "%s/full.rig", small);
    assert_int_equal(fx_write_file(file, r.bytes, r.size), 0);
    /* fill the rest: room for less than one more copy of the file */
    snprintf(filler, sizeof filler, "%s/filler", small);
    int fd = open(filler, O_WRONLY | O_CREAT, 0644);
    assert_true(fd >= 0);
    static const uint8_t block[1024];
    while (write(fd, block, sizeof block) == (ssize_t)sizeof block)
        ;
    close(fd);
    make_mountpoint("m-full", mnt, sizeof mnt);
    do_mount(file, mnt, "rw");
    char p[512], step;
    snprintf(p, sizeof p, "%s/header/unused_0", mnt);
    assert_int_equal(write_text(p, O_WRONLY | O_TRUNC, "77\n", &step), ENOSPC);
    assert_int_equal(step, 'c');
    assert_true(info_has(mnt, "commit failed: No space left on device; 4 bytes of edits stay pending"));
    assert_file_is(file, r.bytes, r.size);
    DIR *d = opendir(small);
    unsigned entries = 0;
    for (struct dirent *e; (e = readdir(d));)
        entries += e->d_name[0] != '.' || strstr(e->d_name, ".s3rig-") != NULL;
    closedir(d);
    assert_int_equal(entries, 2); /* full.rig and filler: no temporary, no backup */
    /* room again: an fsync commits what is pending */
    assert_int_equal(unlink(filler), 0);
    snprintf(p, sizeof p, "%s/header.bin", mnt);
    fd = open(p, O_WRONLY);
    assert_true(fd >= 0);
    assert_int_equal(fsync(fd), 0);
    assert_int_equal(close(fd), 0);
    assert_true(info_has(mnt, "rw: writable, backup on, 1 commit"));
    umount_rw(mnt, file);
    uint8_t *want = malloc(r.size);
    memcpy(want, r.bytes, r.size);
    le32(want + UNUSED0_POS, 77);
    assert_file_is(file, want, r.size);
    free(want);
    assert_int_equal(umount(small), 0);
    free(r.bytes);
}

struct reader_arg {
    const char *mnt;
    const uint8_t *orig;
    unsigned reads, stale, bad;
};

/* Reads header.bin whole, again and again: each read is one committed version (the
 * original with unused_1 = some k written), or ESTALE for a handle whose file moved. */
static void *reader(void *p)
{
    struct reader_arg *r = p;
    char path[512];
    snprintf(path, sizeof path, "%s/header.bin", r->mnt);
    for (unsigned i = 0; i < 300; i++) {
        int fd = open(path, O_RDONLY);
        if (fd < 0) {
            r->bad++;
            continue;
        }
        uint8_t b[52];
        ssize_t n = pread(fd, b, 52, 0);
        close(fd);
        if (n < 0 && errno == ESTALE) {
            r->stale++;
            continue;
        }
        if (n != 52) {
            r->bad++;
            continue;
        }
        le32(b + UNUSED0_POS + 4, rd32(r->orig + UNUSED0_POS + 4)); /* unused_1: the one written */
        r->bad += memcmp(b, r->orig, 52) != 0;
        r->reads++;
    }
    return NULL;
}

/* Writers and readers at once on libfuse's multi-threaded loop (-o spin=0; the
 * ThreadSanitizer run, scripts/tsan.sh, runs this too). */
static void test_rw_parallel_readers(void **state)
{
    (void)state;
    struct rig r;
    rig_make(&r, "parallel.rig");
    do_mount(r.path, r.mnt, "rw,spin=0");
    enum { READERS = 4 };
    pthread_t th[READERS];
    struct reader_arg args[READERS];
    for (int i = 0; i < READERS; i++) {
        args[i] = (struct reader_arg){r.mnt, r.bytes, 0, 0, 0};
        assert_int_equal(pthread_create(&th[i], NULL, reader, &args[i]), 0);
    }
    char v[32];
    for (unsigned k = 1; k <= 40; k++) {
        snprintf(v, sizeof v, "%u\n", k);
        put_value(r.mnt, "header/unused_1", v);
    }
    unsigned reads = 0;
    for (int i = 0; i < READERS; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(args[i].bad, 0);
        reads += args[i].reads;
    }
    assert_true(reads > 0);
    assert_true(info_has(r.mnt, "40 commits"));
    umount_rw(r.mnt, r.path);
    uint8_t *want = malloc(r.size);
    memcpy(want, r.bytes, r.size);
    le32(want + UNUSED0_POS + 4, 40);
    assert_file_is(r.path, want, r.size);
    free(want);
    rig_free(&r);
}

/* A syslog of the test's own at /dev/log, when the machine has none: a datagram socket
 * the daemon's syslog(3) writes to. -1 when /dev/log is the machine's. */
static int syslog_listen(void)
{
    struct stat st;
    if (lstat("/dev/log", &st) == 0)
        return -1;
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    strcpy(sa.sun_path, "/dev/log");
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    return fd;
}

/* The messages received that contain needle, each ended by a newline, into out. */
static unsigned syslog_take(int fd, const char *needle, char *out, size_t outlen)
{
    unsigned n = 0;
    out[0] = 0;
    char msg[4096];
    for (ssize_t got; (got = recv(fd, msg, sizeof msg - 1, MSG_DONTWAIT)) > 0;) {
        msg[got] = 0;
        if (!strstr(msg, needle))
            continue;
        n++;
        strncat(out, msg, outlen - strlen(out) - 2);
        strcat(out, "\n");
    }
    close(fd);
    unlink("/dev/log");
    return n;
}

/* A commit that fails at unmount (the file changed by someone else: EBUSY) is not lost in
 * the daemon's stderr: the daemon exits 7, the file is untouched, the new version is
 * FILE.s3rig-unsaved beside it, and one syslog line (LOG_ERR) names the file, why, and
 * where the edits are. */
static void test_rw_unmount_failure_reported(void **state)
{
    (void)state;
    struct rig r;
    rig_make(&r, "unsaved.rig");
    char unsaved[300];
    snprintf(unsaved, sizeof unsaved, "%s.s3rig-unsaved", r.path);
    int logfd = syslog_listen();
    pid_t daemon = start_mount_fg(r.path, r.mnt, "rw");
    struct timespec ts[2] = {{1, 0}, {1, 0}};
    assert_int_equal(utimensat(AT_FDCWD, r.path, ts, 0), 0);
    char p[512], step;
    snprintf(p, sizeof p, "%s/header/unused_0", r.mnt);
    assert_int_equal(write_text(p, O_WRONLY | O_TRUNC, "5\n", &step), EBUSY);
    assert_int_equal(access(unsaved, F_OK), -1); /* pending, not saved apart while mounted */
    do_umount(r.mnt);
    int status;
    assert_int_equal(waitpid(daemon, &status, 0), daemon);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 7);
    assert_file_is(r.path, r.bytes, r.size);
    uint8_t *want = malloc(r.size);
    memcpy(want, r.bytes, r.size);
    le32(want + UNUSED0_POS, 5);
    assert_file_is(unsaved, want, r.size);
    free(want);
    if (logfd < 0) {
        printf("syslog: /dev/log is the machine's own: the line is not checked here\n");
    } else {
        char lines[8192];
        assert_int_equal(syslog_take(logfd, r.path, lines, sizeof lines), 1);
        printf("syslog: %s", lines);
        /* <PRI>: LOG_DAEMON (3) * 8 + LOG_ERR (3) */
        assert_true(strncmp(lines, "<27>", 4) == 0);
        assert_non_null(strstr(lines, "mount.s3rig["));
        assert_non_null(strstr(lines, "could not be committed at unmount"));
        assert_non_null(strstr(lines, "changed by someone else"));
        assert_non_null(strstr(lines, unsaved));
    }
    assert_int_equal(unlink(unsaved), 0);
    rig_free(&r);
}

/* The reader checked against the fixture builder, so that what it says after a commit
 * means something: every index flag variant (constant type, group, instance high: 0 to
 * 7), every storage (raw with and without the extended word, zlib, RefPack, streamable,
 * deleted, null), each entry's key, storage and sha256 of the expanded bytes as built. */
static void test_outside_reader_against_builder(void **state)
{
    (void)state;
    static const enum fxp_comp comps[] = {FXP_STORED, FXP_PLAIN,   FXP_REFPACK, FXP_STREAMABLE,
                                          FXP_ZLIB,   FXP_DELETED, FXP_NULL};
    static const char *const kinds[] = {"raw", "raw", "refpack", "streamable", "zlib", "deleted", "null"};
    enum { N = sizeof comps / sizeof comps[0] };
    uint8_t *data[N];
    struct fxp_res res[N];
    for (size_t i = 0; i < N; i++) {
        data[i] = fxp_pattern(300 + 97 * i, (uint32_t)i + 1);
        res[i] = (struct fxp_res){0x220557DA, 0x80000000, 0x1234567800000000ull | i, data[i], 300 + 97 * i, comps[i]};
    }
    for (uint32_t flags = 0; flags < 8; flags++) {
        struct fxp_opts o = {.game = 4, .index_flags = flags, .legacy_position = flags == 5};
        struct fxp_layout lay;
        size_t size;
        uint8_t *pkg = fxp_build(&o, res, N, &size, &lay);
        char path[256], want[128];
        write_fixture("outside.package", pkg, size, path, sizeof path);
        char *lines = outside_read(path);
        snprintf(want, sizeof want, "header major=2 minor=1 user_major=0 user_minor=0 flags=0 count=%d ", N);
        assert_true(strncmp(lines, want, strlen(want)) == 0);
        snprintf(want, sizeof want, " index_flags=%u\n", flags);
        assert_non_null(strstr(lines, want));
        for (size_t i = 0; i < N; i++) {
            char key[40], hex[2 * SHA256_DIGEST_SIZE + 1], line[300];
            snprintf(key, sizeof key, "220557DA 80000000 %016llX", (unsigned long long)res[i].instance);
            char *got = entry_line(lines, key);
            assert_non_null(got);
            bool none = comps[i] == FXP_DELETED || comps[i] == FXP_NULL;
            sha256_hex(data[i], res[i].len, hex);
            snprintf(line, sizeof line, "entry %s comp=%s stored=%llu memory=%llu sha256=%s", key, kinds[i],
                     (unsigned long long)lay.stored_size[i],
                     comps[i] == FXP_NULL ? 0xFFFFFFFFull : comps[i] == FXP_DELETED ? 0ull : (unsigned long long)res[i].len,
                     none ? "-" : hex);
            assert_string_equal(got, line);
            free(got);
        }
        free(lines);
        free(pkg);
    }
    /* and it complains: a resource cut short */
    struct fxp_opts o = {.game = 4};
    struct fxp_layout lay;
    size_t size;
    uint8_t *pkg = fxp_build(&o, res, N, &size, &lay);
    le32(pkg + lay.record[4] + 20, (uint32_t)size | 0x80000000u); /* zlib entry's stored size: the whole file */
    char path[256], err[512];
    write_fixture("outside-bad.package", pkg, size, path, sizeof path);
    char *argv[] = {"python3", getenv("S3RIG_DBPF_READ"), path, NULL};
    assert_int_equal(run_capture(argv, NULL, 0, err, sizeof err), 1);
    assert_non_null(strstr(err, "past the end"));
    free(pkg);
    for (size_t i = 0; i < N; i++)
        free(data[i]);
}

/* A package written by -o rw, read by the outside reader: a RefPack resource's data.bin
 * replaced (written back raw), an index field and a header field written as values.
 * Every other entry as the reader saw it before; the replaced one raw with the new bytes'
 * sha256; the written fields as written. */
static void test_rw_package_outside_reader(void **state)
{
    (void)state;
    size_t size;
    uint8_t *pkg = fx_kind("package-s3", 0, NULL, &size);
    char path[256], mnt[256];
    write_fixture("outside-rw.package", pkg, size, path, sizeof path);
    make_mountpoint("m-outside", mnt, sizeof mnt);
    char *before = outside_read(path);
    const char *res = "resources/S3_8EAF13DE_00000001_47B84BA0E85F42F4_body_rig%%+_RIG.grannyrig";
    const char *key = "8EAF13DE 00000001 47B84BA0E85F42F4";
    char *old_line = entry_line(before, key);
    assert_non_null(old_line);
    assert_non_null(strstr(old_line, "comp=refpack"));
    do_mount(path, mnt, "rw");
    char p[1024];
    snprintf(p, sizeof p, "%s/%s/data.bin", mnt, res);
    uint8_t *fresh = fxp_pattern(5000, 77);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    assert_int_equal(fwrite(fresh, 1, 5000, f), 5000);
    assert_int_equal(fclose(f), 0);
    put_value(mnt, "header/user_minor", "3\n");
    umount_rw(mnt, path);
    char *after = outside_read(path);
    assert_non_null(strstr(after, "user_minor=3 "));
    char hex[2 * SHA256_DIGEST_SIZE + 1], want[300];
    sha256_hex(fresh, 5000, hex);
    snprintf(want, sizeof want, "entry %s comp=raw stored=5000 memory=5000 sha256=%s", key, hex);
    char *new_line = entry_line(after, key);
    assert_non_null(new_line);
    assert_string_equal(new_line, want);
    /* every other entry line as before, in the same order */
    const char *a = strchr(before, '\n'), *b = strchr(after, '\n');
    unsigned entries = 0;
    while (a && b && a[1] && b[1]) {
        a++, b++;
        size_t la = strcspn(a, "\n"), lb = strcspn(b, "\n");
        if (strncmp(a, "entry ", 6) == 0 && strncmp(a + 6, key, strlen(key)) != 0) {
            assert_int_equal(la, lb);
            assert_memory_equal(a, b, la);
        }
        entries++;
        a = strchr(a, '\n'), b = strchr(b, '\n');
    }
    assert_true(entries >= 10);
    free(new_line);
    free(old_line);
    free(after);
    free(before);
    free(fresh);
    free(pkg);
}

/* The file offset of the field a value file stands for (its user.s3rig.offset). */
static uint64_t xattr_offset(const char *mnt, const char *rel)
{
    char p[1024], v[32];
    assert_true((size_t)snprintf(p, sizeof p, "%s/%s", mnt, rel) < sizeof p);
    ssize_t n = getxattr(p, "user.s3rig.offset", v, sizeof v - 1);
    assert_true(n > 0);
    v[n] = 0;
    return strtoull(v, NULL, 10);
}

/* /info's unparsed_bytes count of the file at path (mounted read-only meanwhile). */
static unsigned long long unparsed_bytes(const char *path, const char *mnt)
{
    char p[512];
    do_mount(path, mnt, NULL);
    snprintf(p, sizeof p, "%s/info", mnt);
    char *t = text_of(p), *at = strstr(t, "\nunparsed_bytes: ");
    assert_non_null(at);
    unsigned long long n = strtoull(at + 17, NULL, 10);
    free(t);
    do_umount(mnt);
    return n;
}

/* A package resource's data.bin replaced twice before one commit (the commits after each
 * write refused: the file moved away from its path), 8,000 bytes then 5,000: the
 * committed file is what an independent writer appending the resource makes: the old
 * bytes, the index record pointing at the new bytes right after the old end (RefPack
 * becomes raw: compression 0, the stored size's flag bit kept), then the 5,000 bytes and
 * nothing else (no copy of the first write left behind, unreferenced). tests/dbpf_read.py
 * reads it; the only bytes no structure claims besides the package's own gap are the old
 * resource's stored bytes. */
static void test_rw_resource_replaced_twice(void **state)
{
    (void)state;
    size_t size;
    uint8_t *pkg = fx_kind("package-s3", 0, NULL, &size);
    char path[256], orig[300], mnt[256], p[1024], step;
    write_fixture("twice.package", pkg, size, path, sizeof path);
    snprintf(orig, sizeof orig, "%s/twice-orig.package", tmpdir);
    assert_int_equal(fx_write_file(orig, pkg, size), 0);
    make_mountpoint("m-twice", mnt, sizeof mnt);
    const char *res = "resources/S3_8EAF13DE_00000001_47B84BA0E85F42F4_body_rig%%+_RIG.grannyrig";
    const char *key = "8EAF13DE 00000001 47B84BA0E85F42F4";
    unsigned long long gap_before = unparsed_bytes(path, mnt);
    do_mount(path, mnt, "rw");
    char rel[600];
    uint64_t pos[4];
    static const char *const fields[4] = {"offset", "stored_size", "memory_size", "compression"};
    for (int i = 0; i < 4; i++) {
        snprintf(rel, sizeof rel, "%s/%s", res, fields[i]);
        pos[i] = xattr_offset(mnt, rel);
    }
    uint32_t old_stored = rd32(pkg + pos[1]);
    assert_int_equal(pkg[pos[3]] | pkg[pos[3] + 1] << 8, 0xFFFF); /* RefPack, dbpf.md */
    uint8_t *first = fxp_pattern(8000, 11), *second = fxp_pattern(5000, 12);
    snprintf(p, sizeof p, "%s/%s/data.bin", mnt, res);
    move_file(path, true);
    assert_int_equal(write_bytes(p, first, 8000, &step), EBUSY);
    assert_int_equal(write_bytes(p, second, 5000, &step), EBUSY);
    assert_true(info_has(mnt, "commit refused"));
    move_file(path, false);
    umount_rw(mnt, path); /* the commit at unmount */
    /* what an independent writer makes (dbpf.md: an index record's offset, stored size
     * with its flag bit, memory size, u16 compression) */
    uint8_t *want = malloc(size + 5000);
    memcpy(want, pkg, size);
    memcpy(want + size, second, 5000);
    le32(want + pos[0], (uint32_t)size);
    le32(want + pos[1], 5000u | (old_stored & 0x80000000u));
    le32(want + pos[2], 5000);
    want[pos[3]] = 0, want[pos[3] + 1] = 0;
    assert_file_is(path, want, size + 5000);
    char *lines = outside_read(path), hex[2 * SHA256_DIGEST_SIZE + 1], wline[300];
    sha256_hex(second, 5000, hex);
    snprintf(wline, sizeof wline, "entry %s comp=raw stored=5000 memory=5000 sha256=%s", key, hex);
    char *got = entry_line(lines, key);
    assert_non_null(got);
    assert_string_equal(got, wline);
    /* unclaimed: the package's own gap and the old resource's bytes, nothing more */
    assert_int_equal(unparsed_bytes(path, mnt), gap_before + (old_stored & 0x7fffffffu));
    free(got);
    free(lines);
    free(want);
    free(first);
    free(second);
    free(pkg);
}

/* A write refused half-way leaves nothing pending: the test hook (S3RIG_TEST_FAIL_EDIT=K,
 * the K-th patch of the pending edits refused for lack of memory) refuses, after the new
 * bytes were appended, the first or the second word of a package resource's index record,
 * or of a compressed Granny section stored raw (its section header, then total_size).
 * The write fails with ENOMEM, /info shows nothing pending, and the unmount commits
 * nothing: the file is as it was (sha256), with no backup made. */
static void refused_half_way(const char *name, bool granny, int k)
{
    char path[256], mnt[256], p[1024], env[16], step, mname[128];
    size_t size;
    uint8_t *bytes;
    struct fxg_result r;
    if (granny)
        bytes = fxg_build(&fx_oodle1_v7, &size, &r);
    else
        bytes = fx_kind("package-s3", 0, NULL, &size);
    write_fixture(name, bytes, size, path, sizeof path);
    snprintf(mname, sizeof mname, "m-%s", name);
    make_mountpoint(mname, mnt, sizeof mnt);
    snprintf(env, sizeof env, "%d", k);
    assert_int_equal(setenv("S3RIG_TEST_FAIL_EDIT", env, 1), 0);
    do_mount(path, mnt, "rw");
    unsetenv("S3RIG_TEST_FAIL_EDIT");
    uint8_t *fresh = fxp_pattern(granny ? r.section_size : 3000, 21);
    snprintf(p, sizeof p, "%s/%s", mnt,
             granny ? "granny/sections/0/data.bin"
                    : "resources/S3_8EAF13DE_00000001_47B84BA0E85F42F4_body_rig%%+_RIG.grannyrig/data.bin");
    assert_int_equal(write_bytes(p, fresh, granny ? r.section_size : 3000, &step), ENOMEM);
    assert_int_equal(step, 'c');
    assert_true(info_has(mnt, "rw: pending: 0 bytes, 0 of them in memory"));
    umount_rw(mnt, path);
    uint8_t a[SHA256_DIGEST_SIZE], b[SHA256_DIGEST_SIZE];
    size_t n;
    uint8_t *now = slurp(path, &n);
    sha256_of(bytes, size, a);
    sha256_of(now, n, b);
    assert_memory_equal(a, b, SHA256_DIGEST_SIZE);
    char backup[300];
    snprintf(backup, sizeof backup, "%s~", path);
    assert_int_equal(access(backup, F_OK), -1); /* no commit ran */
    free(now);
    free(fresh);
    free(bytes);
    if (granny)
        free(r.section);
}

static void test_rw_refused_half_way(void **state)
{
    (void)state;
    refused_half_way("half1.package", false, 1);
    refused_half_way("half2.package", false, 2);
    refused_half_way("half1.gr2", true, 1);
    refused_half_way("half2.gr2", true, 2);
}

/* A Granny file that is a package resource (Sims 4, stored zlib or raw), its object
 * section Oodle1-compressed: a value in the section written (printf; a bad one first is
 * EINVAL with the sha256 unchanged), or the section's data.bin replaced (cp). The section
 * is stored raw in new Granny bytes (at the old total_size, 4-aligned; total_size and the
 * CRC after them), which become the resource's new data through the whole-resource
 * replacement (stored as it was: zlib stays zlib, raw stays raw). tests/dbpf_read.py
 * reads the package: the resource's entry has the new bytes' length and sha256, every
 * other entry is as before; mounted again, the value reads back and the rest of the tree
 * is the same. */
static void gr2_in_package(enum fxp_comp comp, bool by_value, const char *name)
{
    struct fxg_opts o = {.sig = "le32", .version = 7, .nbones = 5, .oodle1_objects = true};
    struct fxg_result r;
    size_t glen, size;
    uint8_t *gr2 = fxg_build(&o, &glen, &r), *other = fxp_pattern(3000, 5);
    struct fxp_res res[2] = {{0x12345678, 0, 0x1111, gr2, glen, comp}, {0x12345679, 0, 0x2222, other, 3000, FXP_ZLIB}};
    struct fxp_opts po = {.game = 4};
    struct fxp_layout lay;
    uint8_t *pkg = fxp_build(&po, res, 2, &size, &lay);
    char path[256], orig[300], mnt[256], dir[200], p[1024], cmd[2400], step;
    write_fixture(name, pkg, size, path, sizeof path);
    snprintf(orig, sizeof orig, "%s/orig-%s", tmpdir, name);
    assert_int_equal(fx_write_file(orig, pkg, size), 0);
    fxp_expected_name(dir, sizeof dir, 4, &res[0], NULL, 0);
    const char *key = "12345678 00000000 0000000000001111";
    char *before = outside_read(path);
    make_mountpoint("m-gr2-pkg", mnt, sizeof mnt);
    do_mount(path, mnt, "rw");
    char secrel[400], bone[400];
    snprintf(secrel, sizeof secrel, "resources/%s/rig/granny/sections/0/data.bin", dir);
    snprintf(bone, sizeof bone, "resources/%s/rig/granny/root/Skeletons/0/Bones/1/Transform/position", dir);
    assert_int_equal(mode_of(mnt, secrel), 0644);
    assert_int_equal(mode_of(mnt, bone), 0644);
    size_t at = find_once(r.section, r.section_size, (const uint8_t *)r.bones[1].position, 12);
    assert_true(at != SIZE_MAX);
    static const float to[3] = {1.5f, -2.0f, 0.25f};
    uint8_t *sec = malloc(r.section_size);
    memcpy(sec, r.section, r.section_size);
    memcpy(sec + at, to, 12); /* the builder writes floats little-endian */
    snprintf(p, sizeof p, "%s/%s", mnt, bone);
    if (by_value) {
        uint8_t h0[SHA256_DIGEST_SIZE], h1[SHA256_DIGEST_SIZE];
        assert_int_equal(write_text(p, O_WRONLY | O_TRUNC, "1.5\n-2\nx\n", &step), EINVAL);
        size_t n0;
        uint8_t *same = slurp(path, &n0);
        sha256_of(pkg, size, h0);
        sha256_of(same, n0, h1);
        assert_memory_equal(h0, h1, SHA256_DIGEST_SIZE);
        free(same);
        snprintf(cmd, sizeof cmd, "printf '1.5\\n-2\\n0.25\\n' > '%s'", p);
    } else {
        char nf[300];
        snprintf(nf, sizeof nf, "%s/section-%s.bin", tmpdir, name);
        assert_int_equal(fx_write_file(nf, sec, r.section_size), 0);
        snprintf(cmd, sizeof cmd, "cp '%s' '%s/%s'", nf, mnt, secrel);
    }
    assert_int_equal(sh(cmd), 0);
    assert_true(info_has(mnt, "stored raw"));
    umount_rw(mnt, path);
    /* the resource's new data, through a read-only mount: the Granny rules hold */
    do_mount(path, mnt, NULL);
    snprintf(p, sizeof p, "%s/resources/%s/data.bin", mnt, dir);
    size_t n;
    uint8_t *g = slurp(p, &n);
    const uint8_t *h = g + 0x20 + r.layout.section_array_offset;
    uint32_t data_at = (r.layout.total_size + 3) & ~3u;
    assert_int_equal(rd32(h), 0);
    assert_int_equal(rd32(h + 4), data_at);
    assert_int_equal(rd32(h + 8), r.section_size);
    assert_int_equal(rd32(g + 0x24), n);
    /* the section's bytes end the data, then zeros up to 4-alignment */
    assert_true(n >= data_at + r.section_size && n - (data_at + r.section_size) < 4);
    for (size_t i = data_at + r.section_size; i < n; i++)
        assert_int_equal(g[i], 0);
    assert_memory_equal(g + data_at, sec, r.section_size);
    assert_memory_equal(g + 0x2c, gr2 + 0x2c, 0x20 + r.layout.section_array_offset - 0x2c);
    assert_gr2_crc_valid(g);
    snprintf(p, sizeof p, "%s/%s", mnt, bone);
    char *t = text_of(p);
    assert_string_equal(t, "1.5\n-2\n0.25\n");
    free(t);
    do_umount(mnt);
    /* the independent reader: that entry new (stored as it was), the others as before */
    char *after = outside_read(path), hex[2 * SHA256_DIGEST_SIZE + 1], want[300];
    sha256_hex(g, n, hex);
    snprintf(want, sizeof want, "entry %s comp=%s stored=", key, comp == FXP_ZLIB ? "zlib" : "raw");
    char *line = entry_line(after, key);
    assert_non_null(line);
    assert_true(strncmp(line, want, strlen(want)) == 0);
    snprintf(want, sizeof want, " memory=%zu sha256=%s", n, hex);
    assert_non_null(strstr(line, want));
    char *other_before = entry_line(before, "12345679 00000000 0000000000002222"),
         *other_after = entry_line(after, "12345679 00000000 0000000000002222");
    assert_string_equal(other_before, other_after);
    /* changed: the resource (its directory's span: stored at the end now; what it holds)
     * and the index (its record's offset and sizes) */
    char changed[2][300];
    snprintf(changed[0], sizeof changed[0], "resources/%s/", dir);
    snprintf(changed[1], sizeof changed[1], "resources/%s", dir);
    const char *changed_list[] = {changed[0], changed[1], "index.bin", "info", NULL};
    const char *moved[] = {"", "unparsed", NULL};
    const char *added[] = {"unparsed/", changed[0], NULL};
    assert_trees_same_but(orig, path, changed_list, moved, added);
    free(line);
    free(other_before);
    free(other_after);
    free(after);
    free(before);
    free(g);
    free(sec);
    free(r.section);
    free(pkg);
    free(other);
    free(gr2);
}

/* A wrapped RIG that is a package resource (zlib), its Granny section compressed, written
 * the ways the rest is: the section's value (printf) or its data.bin (cp) stored raw in
 * new Granny bytes, or granny.gr2 replaced by another Granny file (cp). The new RIG bytes
 * (rig.md: the wrapper's offsets past the Granny data moved, the IK tables after it
 * unchanged) become the resource's new data, stored zlib as before: mounted again, the
 * resource's data.bin is that RIG (its section stored raw, CRC right; or the new Granny
 * bytes), the value reads back, tests/dbpf_read.py reads the entry with the new bytes,
 * and the rest of the tree is the same. */
enum rig_pkg_way { RIG_PKG_VALUE, RIG_PKG_SECTION, RIG_PKG_GRANNY };

static void rig_in_package(enum rig_pkg_way way, const char *name)
{
    struct fxg_opts o = {.sig = "le32-old", .version = 6, .nbones = 5, .oodle1_objects = true};
    struct gfix f;
    memset(&f, 0, sizeof f);
    f.rig = true;
    f.bytes = fxg_sample_rig(&o, &f.r, &f.size, &f.rl);
    struct fxp_res res[2] = {{0x8EAF13DE, 0, 0x3333, f.bytes, f.size, FXP_ZLIB},
                             {0x12345679, 0, 0x2222, NULL, 3000, FXP_ZLIB}};
    uint8_t *other = fxp_pattern(3000, 5);
    res[1].data = other;
    struct fxp_opts po = {.game = 4};
    struct fxp_layout lay;
    size_t size;
    uint8_t *pkg = fxp_build(&po, res, 2, &size, &lay);
    char path[256], orig[300], mnt[256], dir[200], rel[400], p[1024], cmd[2400], step, mname[128];
    write_fixture(name, pkg, size, path, sizeof path);
    snprintf(orig, sizeof orig, "%s/orig-%s", tmpdir, name);
    assert_int_equal(fx_write_file(orig, pkg, size), 0);
    fxp_expected_name(dir, sizeof dir, 4, &res[0], NULL, 0);
    snprintf(mname, sizeof mname, "m-%s", name);
    make_mountpoint(mname, mnt, sizeof mnt);
    do_mount(path, mnt, "rw");
    char secrel[400], bone[400], grel[400];
    snprintf(secrel, sizeof secrel, "resources/%s/rig/granny/sections/0/data.bin", dir);
    snprintf(bone, sizeof bone, "resources/%s/rig/granny/root/Skeletons/0/Bones/1/Transform/position", dir);
    snprintf(grel, sizeof grel, "resources/%s/rig/granny.gr2", dir);
    assert_int_equal(mode_of(mnt, secrel), 0644);
    assert_int_equal(mode_of(mnt, bone), 0644);
    assert_int_equal(mode_of(mnt, grel), 0644);
    static const float to[3] = {1.5f, -2.0f, 0.25f};
    uint8_t *sec = section_with_position(&f.r, to), *newg = NULL;
    size_t newlen = 0;
    char nf[300];
    if (way == RIG_PKG_VALUE) {
        snprintf(p, sizeof p, "%s/%s", mnt, bone);
        assert_int_equal(write_text(p, O_WRONLY | O_TRUNC, "1.5\n-2\nx\n", &step), EINVAL);
        snprintf(cmd, sizeof cmd, "printf '1.5\\n-2\\n0.25\\n' > '%s'", p);
    } else if (way == RIG_PKG_SECTION) {
        snprintf(nf, sizeof nf, "%s/section-%s.bin", tmpdir, name);
        assert_int_equal(fx_write_file(nf, sec, f.r.section_size), 0);
        snprintf(cmd, sizeof cmd, "cp '%s' '%s/%s'", nf, mnt, secrel);
    } else {
        struct fx_gr2_layout gl;
        newg = fx_sample_gr2("le32", 7, &newlen, &gl);
        snprintf(nf, sizeof nf, "%s/granny-%s.gr2", tmpdir, name);
        assert_int_equal(fx_write_file(nf, newg, newlen), 0);
        snprintf(cmd, sizeof cmd, "cp '%s' '%s/%s'", nf, mnt, grel);
    }
    assert_int_equal(sh(cmd), 0);
    assert_true(info_has(mnt, way == RIG_PKG_GRANNY ? "granny.gr2 replaced" : "stored raw"));
    umount_rw(mnt, path);
    /* the resource's new data: the RIG the rules make */
    do_mount(path, mnt, NULL);
    snprintf(p, sizeof p, "%s/resources/%s/data.bin", mnt, dir);
    size_t n;
    uint8_t *now = slurp(p, &n);
    if (way == RIG_PKG_GRANNY)
        assert_memory_equal(now + f.rl.granny_pos, newg, newlen);
    else
        assert_section_raw(now + f.rl.granny_pos, &f.r, sec);
    assert_container_follows(&f, now, n);
    if (way != RIG_PKG_GRANNY) {
        snprintf(p, sizeof p, "%s/%s", mnt, bone);
        char *t = text_of(p);
        assert_string_equal(t, "1.5\n-2\n0.25\n");
        free(t);
    }
    do_umount(mnt);
    char *lines = outside_read(path), hex[2 * SHA256_DIGEST_SIZE + 1], want[300];
    sha256_hex(now, n, hex);
    snprintf(want, sizeof want, "memory=%zu sha256=%s", n, hex);
    char *line = entry_line(lines, "8EAF13DE 00000000 0000000000003333");
    assert_non_null(line);
    assert_non_null(strstr(line, "comp=zlib"));
    assert_non_null(strstr(line, want));
    free(line);
    free(lines);
    /* the rest of the tree: the other resource, the package's header, as before */
    char resdir[400];
    snprintf(rel, sizeof rel, "resources/%s/", dir);
    snprintf(resdir, sizeof resdir, "resources/%s", dir);
    const char *const changed[] = {rel, resdir, "info", "index.bin", "unparsed", "unparsed/", "by-type/", "", NULL};
    assert_trees_same_but(orig, path, changed, NULL, changed);
    free(now);
    free(newg);
    free(sec);
    free(other);
    free(pkg);
    gfix_free(&f);
}

static void test_rw_granny_section_in_package(void **state)
{
    (void)state;
    gr2_in_package(FXP_ZLIB, true, "gr2-zlib-value.package");
    gr2_in_package(FXP_STORED, false, "gr2-raw-cp.package");
    rig_in_package(RIG_PKG_VALUE, "rig-value.package");
    rig_in_package(RIG_PKG_SECTION, "rig-section.package");
    rig_in_package(RIG_PKG_GRANNY, "rig-granny.package");
}

/* A process's peak resident memory (VmHWM), in KiB. */
static unsigned long peak_kib(pid_t pid)
{
    char p[64], line[256];
    snprintf(p, sizeof p, "/proc/%d/status", (int)pid);
    FILE *f = fopen(p, "r");
    assert_non_null(f);
    unsigned long kib = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %lu kB", &kib) == 1)
            break;
    fclose(f);
    return kib;
}

/* A large replacement (64 MiB into a resource's data.bin, through cp) is never held in
 * the daemon's memory (issue 34: pending edits outside memory): the handle's content and
 * the appended resource live in unlinked files beside the package. /info's count of
 * pending bytes in memory stays under 1 MiB at its most, and the daemon's peak RSS grows
 * by less than half the content; the package then reads right through the outside
 * reader. */
static void test_rw_large_replacement_outside_memory(void **state)
{
    (void)state;
    size_t size;
    uint8_t *pkg = fx_kind("package-s4", 0, NULL, &size);
    char path[256], mnt[256], src[300], p[1100], cmd[1600];
    write_fixture("large.package", pkg, size, path, sizeof path);
    make_mountpoint("m-large", mnt, sizeof mnt);
    enum { BIG = 64 << 20 };
    uint8_t *fresh = fxp_pattern(BIG, 5); /* compresses a little: zlib has work to do */
    snprintf(src, sizeof src, "%s/large.bin", tmpdir);
    assert_int_equal(fx_write_file(src, fresh, BIG), 0);
    pid_t daemon = start_mount_fg(path, mnt, "rw");
    const char *res = "resources/S4_015A1849_00000000_00000001000000A0%%+GEOM.simgeom";
    snprintf(p, sizeof p, "%s/%s/data.bin", mnt, res);
    unsigned long before = peak_kib(daemon);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", src, p);
    assert_int_equal(sh(cmd), 0);
    unsigned long after = peak_kib(daemon);
    snprintf(p, sizeof p, "%s/info", mnt);
    char *info = text_of(p);
    const char *line = strstr(info, "rw: pending: ");
    assert_non_null(line);
    unsigned long long pending, in_mem, most;
    assert_int_equal(sscanf(line, "rw: pending: %llu bytes, %llu of them in memory; at most %llu in memory at once",
                            &pending, &in_mem, &most),
                     3);
    printf("pending edits in memory at most %llu bytes; daemon peak RSS %lu -> %lu KiB for %d MiB\n", most,
           before, after, BIG >> 20);
    assert_true(strstr(info, "1 commit") != NULL);
    assert_int_equal(pending, 0); /* committed at the close */
    assert_true(most < (1u << 20));
    assert_true(after - before < (BIG >> 10) / 2);
    free(info);
    do_umount(mnt);
    int status;
    assert_int_equal(waitpid(daemon, &status, 0), daemon);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    char *lines = outside_read(path), hex[2 * SHA256_DIGEST_SIZE + 1];
    sha256_hex(fresh, BIG, hex);
    char *got = entry_line(lines, "015A1849 00000000 00000001000000A0");
    assert_non_null(got);
    assert_non_null(strstr(got, "comp=zlib"));
    assert_non_null(strstr(got, hex));
    free(got);
    free(lines);
    unlink(src);
    free(fresh);
    free(pkg);
}

/* A compressed Granny section's data.bin replaced by 32 MiB (cp): the handle's file is
 * appended to the pending edits' file piece by piece at the close, never read whole into
 * the daemon's memory (its peak RSS grows by less than half the bytes); the section is
 * stored raw with exactly those bytes, the Granny CRC valid. */
static void test_rw_large_section_outside_memory(void **state)
{
    (void)state;
    struct fxg_opts o = {.sig = "le32-old", .version = 6, .nbones = 5, .oodle0_objects = true};
    struct fxg_result r;
    size_t size;
    uint8_t *bytes = fxg_build(&o, &size, &r);
    char path[256], mnt[256], src[300], p[600], cmd[1200];
    write_fixture("big-section.gr2", bytes, size, path, sizeof path);
    make_mountpoint("m-big-section", mnt, sizeof mnt);
    enum { BIG = 32 << 20 };
    uint8_t *fresh = fxp_pattern(BIG, 3);
    snprintf(src, sizeof src, "%s/big-section.bin", tmpdir);
    assert_int_equal(fx_write_file(src, fresh, BIG), 0);
    pid_t daemon = start_mount_fg(path, mnt, "rw");
    snprintf(p, sizeof p, "%s/granny/sections/0/data.bin", mnt);
    unsigned long before = peak_kib(daemon);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", src, p);
    assert_int_equal(sh(cmd), 0);
    unsigned long after = peak_kib(daemon);
    printf("section of %d MiB replaced: daemon peak RSS %lu -> %lu KiB\n", BIG >> 20, before, after);
    assert_true(info_has(mnt, "section 0 stored raw"));
    assert_true(after - before < (BIG >> 10) / 2);
    do_umount(mnt);
    int status;
    assert_int_equal(waitpid(daemon, &status, 0), daemon);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    size_t n;
    uint8_t *now = slurp(path, &n);
    const uint8_t *h = now + 0x20 + r.layout.section_array_offset;
    uint32_t data_at = (r.layout.total_size + 3) & ~3u;
    assert_int_equal(rd32(h), 0); /* compression 0 */
    assert_int_equal(rd32(h + 4), data_at);
    assert_int_equal(rd32(h + 8), BIG);
    assert_int_equal(rd32(h + 12), BIG);
    assert_true((uint64_t)data_at + BIG <= n);
    assert_memory_equal(now + data_at, fresh, BIG);
    assert_gr2_crc_valid(now);
    free(now);
    unlink(src);
    free(fresh);
    free(r.section);
    free(bytes);
}

/* /info's most bytes of content held in memory by writes at once. */
static unsigned long long held_most(const char *mnt)
{
    char p[512];
    snprintf(p, sizeof p, "%s/info", mnt);
    char *t = text_of(p);
    const char *line = strstr(t, "rw: contents held in memory by writes: ");
    assert_non_null(line);
    unsigned long long now, most;
    assert_int_equal(sscanf(line, "rw: contents held in memory by writes: %llu bytes; at most %llu at once", &now,
                            &most),
                     2);
    free(t);
    assert_int_equal(now, 0); /* nothing held once the write is in */
    return most;
}

/* The Granny data g (n bytes) holds section 0 stored raw with the big content: compression
 * 0 at the old total_size 4-aligned, its sizes, the bytes, total_size past them, the CRC
 * right (gr2.md). */
static void assert_big_section(const uint8_t *g, size_t n, const struct fxg_result *r, const uint8_t *big,
                               uint32_t len)
{
    const uint8_t *h = g + 0x20 + r->layout.section_array_offset;
    uint32_t data_at = (r->layout.total_size + 3) & ~3u;
    assert_int_equal(rd32(h), 0);
    assert_int_equal(rd32(h + 4), data_at);
    assert_int_equal(rd32(h + 8), len);
    assert_int_equal(rd32(h + 12), len);
    assert_true((uint64_t)data_at + len <= n && rd32(g + 0x24) >= data_at + len);
    assert_memory_equal(g + data_at, big, len);
    assert_gr2_crc_valid(g);
}

/* A section larger than cache_mb (3 MiB with -o cache_mb=1) stored raw where new Granny
 * bytes are made around it: in a wrapped RIG's granny.gr2 and in a Granny package
 * resource (zlib). The content goes through files, a chunk at a time: /info's count of
 * content held in memory by writes stays within the budget at its most; the committed
 * file holds the section (the RIG's container following, the package's resource read by
 * the outside reader with the new Granny bytes). */
static void test_rw_large_section_streamed(void **state)
{
    (void)state;
    enum { BIG = 3 << 20, BUDGET = 1 << 20 };
    uint8_t *fresh = fxp_pattern(BIG, 9);
    char src[300], p[1200], cmd[2600];
    snprintf(src, sizeof src, "%s/streamed-section.bin", tmpdir);
    assert_int_equal(fx_write_file(src, fresh, BIG), 0);
    /* the wrapped RIG */
    struct gfix f;
    gfix_make(&f, &fx_oodle1_v7, "streamed.rig", true);
    do_mount(f.path, f.mnt, "rw,cache_mb=1");
    snprintf(cmd, sizeof cmd, "cp '%s' '%s/granny/sections/0/data.bin'", src, f.mnt);
    assert_int_equal(sh(cmd), 0);
    assert_true(info_has(f.mnt, "section 0 stored raw"));
    unsigned long long most = held_most(f.mnt);
    printf("wrapped RIG: %d MiB section, at most %llu bytes held\n", BIG >> 20, most);
    assert_true(most > 0 && most <= BUDGET);
    umount_rw(f.mnt, f.path);
    size_t n;
    uint8_t *now = slurp(f.path, &n);
    assert_big_section(now + f.rl.granny_pos, n - f.rl.granny_pos, &f.r, fresh, BIG);
    assert_container_follows(&f, now, n);
    free(now);
    gfix_free(&f);
    /* the package resource */
    struct fxg_opts o = {.sig = "le32", .version = 7, .nbones = 5, .oodle1_objects = true};
    struct fxg_result r;
    size_t glen, size;
    uint8_t *gr2 = fxg_build(&o, &glen, &r), *other = fxp_pattern(3000, 5);
    struct fxp_res res[2] = {{0x12345678, 0, 0x1111, gr2, glen, FXP_ZLIB},
                             {0x12345679, 0, 0x2222, other, 3000, FXP_ZLIB}};
    struct fxp_opts po = {.game = 4};
    struct fxp_layout lay;
    uint8_t *pkg = fxp_build(&po, res, 2, &size, &lay);
    char path[256], mnt[256], dir[200];
    write_fixture("streamed.package", pkg, size, path, sizeof path);
    fxp_expected_name(dir, sizeof dir, 4, &res[0], NULL, 0);
    make_mountpoint("m-streamed-pkg", mnt, sizeof mnt);
    do_mount(path, mnt, "rw,cache_mb=1");
    snprintf(cmd, sizeof cmd, "cp '%s' '%s/resources/%s/rig/granny/sections/0/data.bin'", src, mnt, dir);
    assert_int_equal(sh(cmd), 0);
    assert_true(info_has(mnt, "stored raw"));
    most = held_most(mnt);
    printf("package resource: %d MiB section, at most %llu bytes held\n", BIG >> 20, most);
    assert_true(most > 0 && most <= BUDGET);
    umount_rw(mnt, path);
    do_mount(path, mnt, NULL);
    snprintf(p, sizeof p, "%s/resources/%s/data.bin", mnt, dir);
    uint8_t *g = slurp(p, &n);
    assert_big_section(g, n, &r, fresh, BIG);
    do_umount(mnt);
    char *lines = outside_read(path), hex[2 * SHA256_DIGEST_SIZE + 1], want[300];
    sha256_hex(g, n, hex);
    snprintf(want, sizeof want, "memory=%zu sha256=%s", n, hex);
    char *line = entry_line(lines, "12345678 00000000 0000000000001111");
    assert_non_null(line);
    assert_non_null(strstr(line, "comp=zlib"));
    assert_non_null(strstr(line, want));
    free(line);
    free(lines);
    free(g);
    free(r.section);
    free(gr2);
    free(other);
    free(pkg);
    unlink(src);
    free(fresh);
}

/* /info's count of bytes written into scratch files (section copies, new Granny bytes)
 * and the cache's peak of expanded bytes held. */
static void scratch_and_cache(const char *mnt, unsigned long long *written, unsigned long long *cache_peak)
{
    char p[512];
    snprintf(p, sizeof p, "%s/info", mnt);
    char *t = text_of(p);
    const char *line = strstr(t, "rw: written into scratch files: ");
    assert_non_null(line);
    assert_int_equal(sscanf(line, "rw: written into scratch files: %llu bytes", written), 1);
    line = strstr(t, "bytes held, peak ");
    assert_non_null(line);
    assert_int_equal(sscanf(line, "bytes held, peak %llu", cache_peak), 1);
    free(t);
}

/* A value (Part_1/Index) and bytes of a table (Part_1/Values.bin, its second value) written
 * into a BitKnit2 section of 3 MiB (fxg_build_sections: Magic, Index, the count and
 * pointer of Values, then its 64 UInt32s, at the section's start) under -o cache_mb=4
 * (the object tree lists what lies in a section only when it fits the bound: one larger
 * than cache_mb has no value files), in a .gr2 or a wrapped RIG, in either order, before
 * one commit (the file moved away meanwhile: the commits of the closes are refused, both
 * writes stay pending). The expanded section's copy lives in a scratch file, not in
 * memory: what writes held at most beside the cache's peak (the section expanded once)
 * stays within the budget (two copies of it in memory, as before, passed it), and the
 * bytes written into scratch files are the copy (3 MiB) and the two writes (4 bytes
 * each), plus, in a RIG, the new Granny bytes once per time the section is stored raw
 * (their length: the new total_size, a few header words more), never copied again for
 * the wrapper. Committed: section 1 stored raw (compression
 * 0, at the old total_size 4-aligned, its sizes) with exactly those 8 bytes changed, the
 * CRC valid, a RIG's blocks following; mounted again the values read back and every other
 * node is the same. */
struct big_values_case {
    const char *name;
    bool rig, value_first;
};

static void big_section_values(const struct big_values_case *c)
{
    enum { BIG = 3 << 20, BUDGET = 4 << 20 };
    struct fxg_sections_opts so = {2, BIG};
    struct fxg_sections_result r;
    struct gfix f = {.rig = c->rig};
    size_t glen;
    uint8_t *gr2 = fxg_build_sections(&so, &glen, &r);
    if (c->rig) {
        struct fx_rig_opts ro = fx_sample_rig_opts(gr2, glen);
        f.bytes = fx_build_rig(&ro, &f.size, &f.rl);
    } else {
        f.bytes = malloc(glen);
        memcpy(f.bytes, gr2, glen);
        f.size = glen;
    }
    write_fixture(c->name, f.bytes, f.size, f.path, sizeof f.path);
    snprintf(f.orig, sizeof f.orig, "%s/orig-%s", tmpdir, c->name);
    assert_int_equal(fx_write_file(f.orig, f.bytes, f.size), 0);
    char mname[128], pi[600], pb[600], step;
    snprintf(mname, sizeof mname, "m-%s", c->name);
    make_mountpoint(mname, f.mnt, sizeof f.mnt);
    const char *index = "granny/root/Part_1/Index", *bin = "granny/root/Part_1/Values.bin";
    snprintf(pi, sizeof pi, "%s/%s", f.mnt, index);
    snprintf(pb, sizeof pb, "%s/%s", f.mnt, bin);
    do_mount(f.path, f.mnt, "rw,cache_mb=4");
    assert_int_equal(mode_of(f.mnt, index), 0644);
    assert_int_equal(mode_of(f.mnt, bin), 0644);
    char *t = text_of(pi);
    assert_string_equal(t, "1\n"); /* the builder's index of part 1 */
    free(t);
    uint8_t v1[4];
    le32(v1, 12345678u);
    move_file(f.path, true);
    for (int i = 0; i < 2; i++) {
        if ((i == 0) == c->value_first) {
            assert_int_equal(write_text(pi, O_WRONLY | O_TRUNC, "4242\n", &step), EBUSY);
        } else {
            int fd = open(pb, O_WRONLY);
            assert_true(fd >= 0);
            assert_int_equal(pwrite(fd, v1, 4, 4), 4); /* the second value */
            assert_int_equal(close(fd), -1);
            assert_int_equal(errno, EBUSY);
        }
    }
    assert_true(info_has(f.mnt, "commit refused"));
    assert_true(info_has(f.mnt, "section 1 stored raw"));
    unsigned long long most = held_most(f.mnt), written, cache_peak;
    scratch_and_cache(f.mnt, &written, &cache_peak); /* the tree the writes were made in */
    move_file(f.path, false);
    assert_int_equal(fsync_at(f.mnt, c->rig ? "header.bin" : "granny.gr2"), 0);
    umount_rw(f.mnt, f.path);
    size_t n;
    uint8_t *now = slurp(f.path, &n);
    const uint8_t *g = now + f.rl.granny_pos;
    uint64_t total = rd32(g + 0x24);
    printf("%s: %d MiB section, at most %llu bytes held by writes beside a cache peak of %llu, %llu written into "
           "scratch files (new total_size %llu)\n",
           c->name, BIG >> 20, most, cache_peak, written, (unsigned long long)total);
    assert_true(most > 0 && cache_peak >= BIG && most + cache_peak <= BUDGET);
    if (c->rig) /* stored raw twice (the first write's, then the second's in its place) */
        assert_true(written >= BIG + 8 + 2 * total && written <= BIG + 8 + 2 * (total + 64));
    else /* the section stored raw goes to the pending edits' own file */
        assert_int_equal(written, BIG + 8);
    uint8_t *want = malloc(BIG);
    memcpy(want, r.section[1], BIG);
    le32(want + 4, 4242);
    memcpy(want + 16 + 4, v1, 4);
    const uint8_t *h = g + 0x20 + r.layout.section_array_offset + 44;
    uint32_t data_at = (r.layout.total_size + 3) & ~3u;
    assert_int_equal(rd32(h), 0);
    assert_int_equal(rd32(h + 4), data_at);
    assert_int_equal(rd32(h + 8), BIG);
    assert_int_equal(rd32(h + 12), BIG);
    assert_true((uint64_t)f.rl.granny_pos + data_at + BIG <= n && total >= (uint64_t)data_at + BIG);
    assert_memory_equal(g + data_at, want, BIG);
    assert_gr2_crc_valid(g);
    assert_container_follows(&f, now, n);
    free(now);
    free(want);
    const char *changed[] = {"info", "granny.gr2", "granny/header/crc", "granny/header/crc_computed",
                             "granny/header/total_size", "granny/sections/1/", "header.bin", "header/",
                             "unparsed/", index, bin, "granny/root/Part_1/Values.csv", NULL};
    const char *added[] = {"unparsed/", "granny/sections/1/", NULL};
    const char *moved[] = {"", "granny", "granny/", "unparsed", "ik_chains", "ik_chains/", "full_bone_list",
                           "ik_target_slots", "info_nodes", "compress_nodes", "granny/root/Part_1/", NULL};
    assert_trees_same_but(f.orig, f.path, changed, moved, added);
    do_mount(f.path, f.mnt, NULL);
    t = text_of(pi);
    assert_string_equal(t, "4242\n");
    free(t);
    snprintf(pb, sizeof pb, "%s/granny/root/Part_1/Values.csv", f.mnt);
    t = text_of(pb);
    assert_true(strncmp(t, "v\n1000\n12345678\n1002\n", 21) == 0);
    free(t);
    do_umount(f.mnt);
    fxg_sections_free(&r);
    free(gr2);
    free(f.bytes);
}

static void test_rw_big_section_values_within_budget(void **state)
{
    (void)state;
    static const struct big_values_case cases[] = {
        {"big-values.gr2", false, true},
        {"big-bin-first.gr2", false, false},
        {"big-values.rig", true, true},
        {"big-bin-first.rig", true, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        big_section_values(&cases[i]);
}

/* The same section as a package resource's whole data (a .gr2 resource, zlib): a value
 * written (Part_1/Index := 4242) under -o cache_mb=4, its commit held back (the file moved
 * away) so that /info still shows the tree it was written in: what the write held at most
 * beside the cache's peak stays within the budget, the section copy (3 MiB, and the 4
 * bytes) is all that went into scratch files besides the resource's new Granny bytes
 * (made once: their length, a few header words more). Committed: the resource's new data
 * holds section 1 stored raw with exactly the value changed, the CRC valid, total_size its
 * length; the outside reader reads the entry as zlib with those bytes. */
static void test_rw_big_section_value_in_package(void **state)
{
    (void)state;
    enum { BIG = 3 << 20, BUDGET = 4 << 20 };
    struct fxg_sections_opts so = {2, BIG};
    struct fxg_sections_result r;
    size_t glen, size;
    uint8_t *gr2 = fxg_build_sections(&so, &glen, &r), *other = fxp_pattern(3000, 5);
    struct fxp_res res[2] = {{0x12345678, 0, 0x1111, gr2, glen, FXP_ZLIB},
                             {0x12345679, 0, 0x2222, other, 3000, FXP_ZLIB}};
    struct fxp_opts po = {.game = 4};
    struct fxp_layout lay;
    uint8_t *pkg = fxp_build(&po, res, 2, &size, &lay);
    char path[256], mnt[256], dir[200], p[1024], rel[400], step;
    write_fixture("big-values.package", pkg, size, path, sizeof path);
    fxp_expected_name(dir, sizeof dir, 4, &res[0], NULL, 0);
    make_mountpoint("m-big-values-pkg", mnt, sizeof mnt);
    do_mount(path, mnt, "rw,cache_mb=4");
    snprintf(rel, sizeof rel, "resources/%s/rig/granny/root/Part_1/Index", dir);
    assert_int_equal(mode_of(mnt, rel), 0644);
    snprintf(p, sizeof p, "%s/%s", mnt, rel);
    move_file(path, true);
    assert_int_equal(write_text(p, O_WRONLY | O_TRUNC, "4242\n", &step), EBUSY);
    assert_true(info_has(mnt, "stored raw"));
    unsigned long long most = held_most(mnt), written, cache_peak;
    scratch_and_cache(mnt, &written, &cache_peak);
    move_file(path, false);
    assert_int_equal(fsync_at(mnt, rel), 0);
    umount_rw(mnt, path);
    do_mount(path, mnt, NULL);
    snprintf(p, sizeof p, "%s/resources/%s/data.bin", mnt, dir);
    size_t n;
    uint8_t *g = slurp(p, &n);
    snprintf(p, sizeof p, "%s/%s", mnt, rel);
    char *t = text_of(p);
    assert_string_equal(t, "4242\n");
    free(t);
    do_umount(mnt);
    printf("package resource: %d MiB section, at most %llu bytes held by writes beside a cache peak of %llu, %llu "
           "written into scratch files (new Granny data %zu bytes)\n",
           BIG >> 20, most, cache_peak, written, n);
    assert_true(most > 0 && cache_peak >= BIG && most + cache_peak <= BUDGET);
    assert_true(written >= BIG + 4 + n && written <= BIG + 4 + n + 64);
    uint8_t *want = malloc(BIG);
    memcpy(want, r.section[1], BIG);
    le32(want + 4, 4242);
    const uint8_t *h = g + 0x20 + r.layout.section_array_offset + 44;
    uint32_t data_at = (r.layout.total_size + 3) & ~3u;
    assert_int_equal(rd32(h), 0);
    assert_int_equal(rd32(h + 4), data_at);
    assert_int_equal(rd32(h + 8), BIG);
    assert_int_equal(rd32(h + 12), BIG);
    assert_int_equal(rd32(g + 0x24), n);
    assert_true((uint64_t)data_at + BIG <= n);
    assert_memory_equal(g + data_at, want, BIG);
    assert_gr2_crc_valid(g);
    char *lines = outside_read(path), hex[2 * SHA256_DIGEST_SIZE + 1], line_want[300];
    sha256_hex(g, n, hex);
    snprintf(line_want, sizeof line_want, "memory=%zu sha256=%s", n, hex);
    char *line = entry_line(lines, "12345678 00000000 0000000000001111");
    assert_non_null(line);
    assert_non_null(strstr(line, "comp=zlib"));
    assert_non_null(strstr(line, line_want));
    free(line);
    free(lines);
    free(want);
    free(g);
    fxg_sections_free(&r);
    free(gr2);
    free(other);
    free(pkg);
}

/* /info's count of editors' temporaries: bytes, those in memory, the most in memory. */
static void temps_line(const char *mnt, unsigned long long *bytes, unsigned long long *in_mem,
                       unsigned long long *most)
{
    char p[300];
    snprintf(p, sizeof p, "%s/info", mnt);
    char *info = text_of(p);
    const char *line = strstr(info, "rw: temporaries: ");
    assert_non_null(line);
    assert_int_equal(sscanf(line, "rw: temporaries: %llu bytes, %llu of them in memory; at most %llu in memory at once",
                            bytes, in_mem, most),
                     3);
    free(info);
}

/* An editor's temporary (what sed -i writes beside the file) past 64 KiB lives in an
 * unlinked file beside the source, not in memory: after 8 MiB written, /info counts its
 * bytes, none of them in memory, and never more than 64 KiB in memory at once; it reads
 * back as written, and renamed over a resource's data.bin it becomes its content (read
 * from that file). A small one stays in memory (the count moves with it). */
static void test_rw_large_temporary_outside_memory(void **state)
{
    (void)state;
    size_t size;
    uint8_t *pkg = fx_kind("package-s4", 0, NULL, &size);
    char path[256], mnt[256], dir[1100], tmp[1200], data[1200];
    write_fixture("temps.package", pkg, size, path, sizeof path);
    make_mountpoint("m-temps", mnt, sizeof mnt);
    do_mount(path, mnt, "rw");
    snprintf(dir, sizeof dir, "%s/resources/S4_015A1849_00000000_00000001000000A0%%%%+GEOM.simgeom", mnt);
    unsigned long long bytes, in_mem, most;
    /* a small one: in memory */
    snprintf(tmp, sizeof tmp, "%s/.small.tmp", dir);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0644);
    assert_true(fd >= 0);
    static const char small[1000] = "small";
    assert_int_equal(write(fd, small, sizeof small), (ssize_t)sizeof small);
    assert_int_equal(close(fd), 0);
    temps_line(mnt, &bytes, &in_mem, &most);
    assert_int_equal(bytes, sizeof small);
    assert_true(in_mem >= sizeof small && in_mem <= (64u << 10));
    assert_int_equal(unlink(tmp), 0);
    /* a large one: in a file */
    enum { BIG = 8 << 20, PIECE = 128 << 10 };
    uint8_t *fresh = fxp_pattern(BIG, 9);
    snprintf(tmp, sizeof tmp, "%s/.data.bin.tmp", dir);
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0644);
    assert_true(fd >= 0);
    for (size_t at = 0; at < BIG; at += PIECE)
        assert_int_equal(write(fd, fresh + at, PIECE), PIECE);
    assert_int_equal(close(fd), 0);
    temps_line(mnt, &bytes, &in_mem, &most);
    printf("temporary of %d MiB: %llu bytes counted, %llu in memory, at most %llu in memory\n", BIG >> 20, bytes,
           in_mem, most);
    assert_int_equal(bytes, BIG);
    assert_int_equal(in_mem, 0);
    assert_true(most <= (64u << 10));
    assert_file_is(tmp, fresh, BIG);
    snprintf(data, sizeof data, "%s/data.bin", dir);
    assert_int_equal(rename(tmp, data), 0);
    assert_file_is(data, fresh, BIG);
    temps_line(mnt, &bytes, &in_mem, &most);
    assert_int_equal(bytes, 0);
    assert_int_equal(in_mem, 0);
    umount_rw(mnt, path);
    char *lines = outside_read(path), hex[2 * SHA256_DIGEST_SIZE + 1];
    sha256_hex(fresh, BIG, hex);
    char *got = entry_line(lines, "015A1849 00000000 00000001000000A0");
    assert_non_null(got);
    assert_non_null(strstr(got, hex));
    free(got);
    free(lines);
    free(fresh);
    free(pkg);
}

/* A commit at unmount that fails for a full disk: the unsaved copy cannot go beside the
 * file either (the same full file system), so it goes to $TMPDIR, and the syslog line
 * says where and why not beside it; the file and its folder as they were; exit 7. */
static void test_rw_unmount_disk_full(void **state)
{
    (void)state;
    char small[256], file[300], filler[300], mnt[256], unsaved[300];
    snprintf(small, sizeof small, "%s/small2", tmpdir);
    assert_int_equal(mkdir(small, 0755), 0);
    assert_int_equal(mount("tmpfs", small, "tmpfs", 0, "size=64k"), 0);
    size_t size;
    struct fx_rig_layout rl;
    struct fx_gr2_layout gl;
    char names[FX_SAMPLE_BONES][32];
    uint8_t *bytes = fx_sample_rig(&size, &rl, &gl, names);
    snprintf(file, sizeof file, "%s/full2.rig", small);
    assert_int_equal(fx_write_file(file, bytes, size), 0);
    snprintf(filler, sizeof filler, "%s/filler", small);
    int fd = open(filler, O_WRONLY | O_CREAT, 0644);
    assert_true(fd >= 0);
    static const uint8_t block[1024];
    while (write(fd, block, sizeof block) == (ssize_t)sizeof block)
        ;
    close(fd);
    snprintf(unsaved, sizeof unsaved, "%s/full2.rig.s3rig-unsaved", tmpdir);
    make_mountpoint("m-full2", mnt, sizeof mnt);
    int logfd = syslog_listen();
    setenv("TMPDIR", tmpdir, 1);
    pid_t daemon = start_mount_fg(file, mnt, "rw");
    unsetenv("TMPDIR");
    char p[512], step;
    snprintf(p, sizeof p, "%s/header/unused_0", mnt);
    assert_int_equal(write_text(p, O_WRONLY | O_TRUNC, "78\n", &step), ENOSPC);
    do_umount(mnt);
    int status;
    assert_int_equal(waitpid(daemon, &status, 0), daemon);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 7);
    assert_file_is(file, bytes, size);
    DIR *d = opendir(small);
    unsigned entries = 0;
    for (struct dirent *e; (e = readdir(d));)
        entries += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    assert_int_equal(entries, 2); /* full2.rig and filler: no temporary, no copy */
    le32(bytes + UNUSED0_POS, 78);
    assert_file_is(unsaved, bytes, size);
    if (logfd < 0) {
        printf("syslog: /dev/log is the machine's own: the line is not checked here\n");
    } else {
        char lines[8192];
        assert_int_equal(syslog_take(logfd, file, lines, sizeof lines), 1);
        printf("syslog: %s", lines);
        assert_non_null(strstr(lines, "No space left on device"));
        assert_non_null(strstr(lines, unsaved));
        assert_non_null(strstr(lines, "(not beside it: No space left on device)"));
    }
    assert_int_equal(unlink(unsaved), 0);
    assert_int_equal(umount(small), 0);
    free(bytes);
}

/* "rw: generations: A alive, M at most, F freed" of /info. */
static void gen_counts(const char *mnt, unsigned *alive, unsigned *most, unsigned *freed)
{
    char p[512];
    snprintf(p, sizeof p, "%s/info", mnt);
    char *t = text_of(p);
    const char *line = strstr(t, "rw: generations: ");
    assert_non_null(line);
    assert_int_equal(sscanf(line, "rw: generations: %u alive, %u at most, %u freed", alive, most, freed), 3);
    free(t);
}

struct deep_reader_arg {
    const char *mnt;
    unsigned reads, bad;
};

/* Reads a file deep in the Granny object tree and walks to it again and again, so the
 * kernel keeps lookups of each generation's directories while commits go on. */
static void *deep_reader(void *p)
{
    struct deep_reader_arg *r = p;
    char path[512];
    snprintf(path, sizeof path, "%s/granny/root/Skeletons/0/Bones/1/Transform/position", r->mnt);
    for (unsigned i = 0; i < 200; i++) {
        int fd = open(path, O_RDONLY);
        char b[128];
        ssize_t n = fd >= 0 ? read(fd, b, sizeof b) : -1;
        if (fd >= 0)
            close(fd);
        if (n <= 0 && errno != ESTALE)
            r->bad++;
        r->reads += n > 0;
    }
    return NULL;
}

/* Old generations are freed once nothing holds them (issue 33, "changes while mounted";
 * issue 34): readers holding files and walking paths on libfuse's multi-threaded loop
 * while 40 commits are made; every commit's tree is a generation, and the number alive
 * at once stays bounded by what can hold one (the current one, each reader's open file
 * or walk, the kernel's entries until the notifier's invalidation is forgotten), not by
 * the number of commits. Under ASan and TSan (scripts/tsan.sh) a generation freed while
 * a request still used it is a report. */
static void test_rw_generations_freed(void **state)
{
    (void)state;
    struct rig r;
    rig_make(&r, "gens.rig");
    do_mount(r.path, r.mnt, "rw,spin=0");
    unsigned alive, most, freed;
    gen_counts(r.mnt, &alive, &most, &freed);
    assert_int_equal(alive, 1);
    assert_int_equal(freed, 0);
    enum { READERS = 3, DEEP = 2, COMMITS = 40 };
    pthread_t th[READERS + DEEP];
    struct reader_arg args[READERS];
    struct deep_reader_arg deep[DEEP];
    for (int i = 0; i < READERS; i++) {
        args[i] = (struct reader_arg){r.mnt, r.bytes, 0, 0, 0};
        assert_int_equal(pthread_create(&th[i], NULL, reader, &args[i]), 0);
    }
    for (int i = 0; i < DEEP; i++) {
        deep[i] = (struct deep_reader_arg){r.mnt, 0, 0};
        assert_int_equal(pthread_create(&th[READERS + i], NULL, deep_reader, &deep[i]), 0);
    }
    char v[32];
    unsigned most_seen = 0;
    for (unsigned k = 1; k <= COMMITS; k++) {
        snprintf(v, sizeof v, "%u\n", k);
        put_value(r.mnt, "header/unused_1", v);
        gen_counts(r.mnt, &alive, &most, &freed);
        most_seen = alive > most_seen ? alive : most_seen;
    }
    for (int i = 0; i < READERS + DEEP; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < READERS; i++)
        assert_int_equal(args[i].bad, 0);
    for (int i = 0; i < DEEP; i++)
        assert_int_equal(deep[i].bad, 0);
    gen_counts(r.mnt, &alive, &most, &freed);
    printf("generations: %u alive now, %u at most (%u seen), %u freed of %u\n", alive, most, most_seen, freed,
           COMMITS + 1);
    assert_true(info_has(r.mnt, "40 commits"));
    assert_int_equal(alive + freed, COMMITS + 1);
    assert_true(freed > 0);
    /* bounded: each reader holds one at a time, the writer one, the kernel's entries
     * of the one before the last notification, and the current one */
    assert_true(most <= READERS + DEEP + 3);
    umount_rw(r.mnt, r.path);
    uint8_t *want = malloc(r.size);
    memcpy(want, r.bytes, r.size);
    le32(want + UNUSED0_POS + 4, COMMITS);
    assert_file_is(r.path, want, r.size);
    free(want);
    rig_free(&r);
}

/* ---- every file's mode, from the format rules ---- */

/* A fixture kind and the files its format lets -o rw write (fnmatch patterns, relative to
 * the mount): fixed-size value fields, stored-byte leaves, tables over fixed-size records.
 * Every other file (derived text, variable-length names, exports, /info) is 0444. */
struct mode_rules {
    const char *kind;
    const char *const *writable;
};

/* A clear RIG (docs/formats/rig.md): the version words, each bone's fixed fields and raw
 * record, each IK chain's words and its counted bone list. Names (variable length) and
 * what is derived (children, name_hash_ok, bones.csv, .names, skeleton.glb) are not. */
static const char *const rig_clear_writable[] = {
    "major", "minor", "bones/*/position", "bones/*/orientation", "bones/*/scale", "bones/*/parent",
    "bones/*/opposing_bone", "bones/*/name_hash", "bones/*/flags", "bones/*/raw.bin", "ik_chains/*/bones",
    "ik_chains/*/pole", "ik_chains/*/root", "ik_chains/*/slot_offset", NULL};

/* A GEOM in its RCOL (docs/formats/geom.md): the RCOL's words, header bytes and chunk
 * entries' 32-bit words (the 64-bit instance has no field type: read-only); the GEOM's
 * scalar words, its stored buffers, each material parameter's words and data, and the
 * CSVs over fixed-size records (vertices, bones, TGIs, seam stitches, slot rays), and the
 * UV stitches' CSV (records of several sizes, each kept at its size). Tags, names, type
 * names, texture links, triangles (derived), the vertex format and the exports are not. */
static const char *const geom_writable[] = {
    "rcol/header.bin", "rcol/version", "rcol/public_chunks", "rcol/unused", "rcol/external_count",
    "rcol/chunk_count", "rcol/chunks/*/group", "rcol/chunks/*/length", "rcol/chunks/*/position",
    "rcol/chunks/*/type", "geom/version", "geom/vertex_count", "geom/bytes_per_index", "geom/declaration_count",
    "geom/index_buffer_count", "geom/index_count", "geom/material_size", "geom/merge_group", "geom/shader",
    "geom/sort_order", "geom/tgi_offset", "geom/tgi_size", "geom/material.bin", "geom/indices.bin",
    "geom/vertices.bin", "geom/material/mtnf_data_size", "geom/material/mtnf_parameter_count",
    "geom/material/mtnf_unknown", "geom/material/*/count", "geom/material/*/name_hash",
    "geom/material/*/offset", "geom/material/*/type", "geom/material/*/value", "geom/material/*/tgi_index",
    "geom/material/*/data.bin", "geom/vertices.csv", "geom/bones.csv", "geom/tgis.csv",
    "geom/seam_stitches.csv", "geom/slot_rays.csv", "geom/uv_stitches.csv", NULL};

static const struct mode_rules *walk_rules;
static const char *walk_root;
static int walk_files, walk_writable;

static int check_mode(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)ftw;
    if (flag != FTW_F || !S_ISREG(st->st_mode))
        return 0;
    const char *rel = path + strlen(walk_root) + 1;
    bool writable = false;
    for (const char *const *p = walk_rules->writable; *p && !writable; p++)
        writable = fnmatch(*p, rel, FNM_PATHNAME) == 0;
    mode_t want = writable ? 0644 : 0444, got = st->st_mode & 07777;
    if (got != want)
        fail_msg("%s: %s is %04o, the format rules say %04o", walk_rules->kind, rel, (unsigned)got, (unsigned)want);
    walk_files++;
    walk_writable += writable;
    return 0;
}

/* Every file of each fixture's tree under -o rw has the mode its format's rules give it:
 * 0644 where rw writes (the patterns above), 0444 everywhere else; each pattern list
 * matches at least one file (a rule that matches nothing would prove nothing). */
static void test_rw_modes_by_format_rules(void **state)
{
    (void)state;
    static const struct mode_rules rules[] = {{"rig-clear-3-ts4", rig_clear_writable},
                                              {"geom-figure", geom_writable}};
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
        size_t size;
        uint8_t *bytes = fx_kind(rules[i].kind, 0, NULL, &size);
        assert_non_null(bytes);
        char path[256], mnt[256], name[128];
        snprintf(name, sizeof name, "modes-%s.bin", rules[i].kind);
        write_fixture(name, bytes, size, path, sizeof path);
        snprintf(name, sizeof name, "m-modes-%s", rules[i].kind);
        make_mountpoint(name, mnt, sizeof mnt);
        do_mount(path, mnt, "rw");
        walk_rules = &rules[i], walk_root = mnt, walk_files = walk_writable = 0;
        assert_int_equal(nftw(mnt, check_mode, 16, FTW_PHYS), 0);
        for (const char *const *p = rules[i].writable; *p; p++) {
            char cmd[1024];
            snprintf(cmd, sizeof cmd, "cd '%s' && for f in %s; do test -f \"$f\" && exit 0; done; exit 1", mnt, *p);
            if (sh(cmd) != 0)
                fail_msg("%s: no file matches %s", rules[i].kind, *p);
        }
        printf("%s: %d files, %d writable\n", rules[i].kind, walk_files, walk_writable);
        assert_true(walk_writable > 0 && walk_writable < walk_files);
        umount_rw(mnt, path);
        assert_file_is(path, bytes, size);
        free(bytes);
    }
}

/* A package index entry's size on disk (docs/formats/dbpf.md): the text shows its low
 * 31 bits; bit 31 says the record holds the compression and committed words, so a write
 * keeps it, and a value that sets it is refused (EINVAL, nothing changed). */
static void test_rw_package_stored_size_keeps_flag(void **state)
{
    (void)state;
    size_t size;
    uint8_t *pkg = fx_kind("package-s4", 0, NULL, &size);
    char path[256], mnt[256], p[1100], off[32], step;
    write_fixture("flag.package", pkg, size, path, sizeof path);
    make_mountpoint("m-flag", mnt, sizeof mnt);
    do_mount(path, mnt, "rw");
    const char *res = "resources/S4_015A1849_00000000_00000001000000A0%%+GEOM.simgeom"; /* zlib: extended */
    snprintf(p, sizeof p, "%s/%s/stored_size", mnt, res);
    assert_int_equal(mode_of(mnt, p + strlen(mnt) + 1), 0644);
    assert_true(getxattr(p, "user.s3rig.offset", off, sizeof off - 1) > 0);
    uint64_t at = strtoull(off, NULL, 10);
    char *was = text_of(p);
    uint32_t n = (uint32_t)strtoul(was, NULL, 10);
    free(was);
    uint32_t word = pkg[at] | (uint32_t)pkg[at + 1] << 8 | (uint32_t)pkg[at + 2] << 16 | (uint32_t)pkg[at + 3] << 24;
    assert_true(word & 0x80000000u); /* the fixture's record is extended */
    assert_int_equal(word & 0x7FFFFFFFu, n);
    assert_int_equal(write_text(p, O_WRONLY | O_TRUNC, "2147483649\n", &step), EINVAL);
    assert_true(info_has(mnt, "stored_size"));
    char v[32];
    snprintf(v, sizeof v, "%" PRIu32 "\n", n + 5);
    put_value(mnt, p + strlen(mnt) + 1, v);
    umount_rw(mnt, path);
    uint8_t *want = malloc(size);
    memcpy(want, pkg, size);
    le32(want + at, (n + 5) | 0x80000000u);
    assert_file_is(path, want, size);
    free(want);
    free(pkg);
}

/* ---- every format's modes, from the format rules, across the whole tree ---- */

/* How a file's mode follows from the format: ALWAYS 0644 (a part replaced whole, a
 * table over fixed-size records), NEVER 0444; FIELD: 0644 when it is a fixed-size field
 * of the file as is (a value file whose type is a fixed-size number type, whose text is
 * numbers only and whose span is exactly those numbers' bytes: a name, a text, a flag shown
 * by name, a count kept before a list or a value whose bytes are compressed is none);
 * SCALAR: 0644 for a Granny member of a scalar type or a table over fixed-size records,
 * wherever its section lies (a compressed section is written back stored raw where the
 * Granny data can grow: it ends the mounted file, or is a wrapped RIG's granny.gr2 or a
 * package resource's whole data); STORED: 0644 when its bytes are the mounted file's at its
 * span, as stored (a hex editor's leaf), else 0444; FIELD_OR_STORED: either; NONEMPTY:
 * 0644 when it holds bytes (a Granny section's expanded bytes: an empty section has none
 * to replace); RES_DATA: a package resource's data, replaced whole unless it is stored
 * "streamable" (0xFFFE: rw neither encodes it nor leaves the game's streaming reader a raw
 * copy), where only a same-size write of bytes stored as is is taken. */
enum how { ALWAYS, NEVER, FIELD, SCALAR, STORED, FIELD_OR_STORED, NONEMPTY, RES_DATA };

struct fmt_rule {
    const char *pattern; /* fnmatch without FNM_PATHNAME: '*' spans folders */
    enum how how;
};

/* The value types of fixed-size numbers (the project's value files, Granny's scalar
 * member types: the Normal/Binormal ones are their integers). */
static const char *const number_types[] = {"u8", "i8", "u16", "i16", "u32", "i32", "f32", "gr2.Int8",
                                           "gr2.BinormalInt8", "gr2.UInt8", "gr2.NormalUInt8", "gr2.Int16",
                                           "gr2.BinormalInt16", "gr2.UInt16", "gr2.NormalUInt16", "gr2.Int32",
                                           "gr2.UInt32", "gr2.Real32"};

static unsigned number_size(const char *type)
{
    size_t base = strcspn(type, "[ ");
    for (size_t i = 0; i < sizeof number_types / sizeof number_types[0]; i++)
        if (strlen(number_types[i]) == base && strncmp(number_types[i], type, base) == 0)
            return strstr(type, "8") ? 1 : strstr(type, "16") ? 2 : 4;
    return 0;
}

static bool xattr_text(const char *path, const char *name, char *out, size_t size)
{
    ssize_t n = getxattr(path, name, out, size - 1);
    if (n < 0)
        return false;
    out[n] = 0;
    return true;
}

/* A fixed-size field of the file as is: numbers only, their bytes exactly the span. */
static bool is_field(const char *path)
{
    char type[200], len[32];
    unsigned size;
    if (!xattr_text(path, "user.s3rig.type", type, sizeof type) || !(size = number_size(type)) ||
        !xattr_text(path, "user.s3rig.length", len, sizeof len))
        return false;
    char *text = text_of(path), *save = NULL;
    unsigned long long n = 0;
    bool numbers = true;
    for (char *tok = strtok_r(text, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save), n++) {
        char *end;
        strtod(tok, &end);
        if (*end && (strtoull(tok, &end, 0), *end))
            numbers = false;
    }
    free(text);
    return numbers && n > 0 && n * size == strtoull(len, NULL, 10);
}

static bool is_scalar(const char *path)
{
    char type[200];
    return xattr_text(path, "user.s3rig.type", type, sizeof type) &&
           (number_size(type) || strncmp(type, "gr2.table[", 10) == 0);
}

static const uint8_t *fmt_file; /* the mounted file's bytes */
static size_t fmt_size;
static uint64_t fmt_base; /* where the source of the files walked starts in the mounted file */

/* Bytes as stored: the file's bytes at its span (from fmt_base). */
static bool is_stored(const char *path)
{
    char off[32], len[32];
    if (!xattr_text(path, "user.s3rig.offset", off, sizeof off) || !xattr_text(path, "user.s3rig.length", len, sizeof len))
        return false;
    uint64_t o = fmt_base + strtoull(off, NULL, 10), l = strtoull(len, NULL, 10);
    size_t n;
    uint8_t *b = slurp(path, &n);
    bool same = l > 0 && n == l && o + l <= fmt_size && memcmp(b, fmt_file + o, l) == 0;
    free(b);
    return same;
}

/* A Granny file's tree at prefix P (rules with P prepended are built by the tests). */
#define GRANNY_RULES(P, whole, members)                                                                      \
    {P "granny.gr2", whole}, {P "granny/types/*", NEVER}, {P "granny/header/*", FIELD},                     \
        {P "granny/sections/*/data.bin", NONEMPTY}, {P "granny/sections/*", FIELD_OR_STORED},                 \
        {P "granny/root/*", members}, {P "unparsed/*", STORED}, {P "info", NEVER}

/* A Granny file alone (docs/formats/gr2.md): the header's and section headers' words,
 * the stored bytes, each section's expanded bytes (stored raw when compressed: the Granny
 * data ends the file) and every scalar member, in compressed sections too. */
static const struct fmt_rule granny_rules[] = {GRANNY_RULES("", STORED, SCALAR), {NULL, NEVER}};

/* A wrapped RIG (docs/formats/rig.md): the wrapper's words, each IK chain's words, links
 * and lists, the root lists' indices after their counts (the count stays: ALWAYS), the
 * raw records; its granny.gr2 is replaced whole (the wrapper's offsets follow). */
static const struct fmt_rule rig_rules[] = {
    {"*.names", NEVER},
    {"compress_nodes", ALWAYS},
    {"full_bone_list", ALWAYS},
    {"ik_target_slots", ALWAYS},
    {"info_nodes", ALWAYS},
    {"header.bin", STORED},
    {"header/*", FIELD},
    {"ik_chains/*", FIELD_OR_STORED},
    GRANNY_RULES("", ALWAYS, SCALAR),
    {NULL, NEVER}};

/* Turok 2 t2fs (docs/formats/t2fs.md): every leaf's bytes as stored (N.bin, an
 * RNC-compressed node's N.rnc) and the files of /models that are slices of them; a
 * surface's texture_id, the first u32 of its material. Bytes inside RNC-compressed nodes
 * are not stored as they are shown: read-only. */
static const struct fmt_rule t2fs_rules[] = {
    {"models/*/surfaces/*/texture_id", FIELD}, {"*.bin", STORED}, {"*.rnc", STORED}, {NULL, NEVER}};

/* Turok 1 (t2fs, docs/formats/t2fs.md): the leaves' stored bytes, and each graphic
 * object's bounds (six f32, min and max, each line labelled). */
static const struct fmt_rule t1_rules[] = {
    {"models/*/bounds", ALWAYS}, {"*.bin", STORED}, {"*.rnc", STORED}, {NULL, NEVER}};

/* A package (docs/formats/dbpf.md): every header word, each index entry's fixed-size
 * fields (not the u64 instance, not the compression shown by name), the header's, the
 * index's and each resource's stored bytes, each resource's data replaced whole. What a
 * nested view shows of a resource is walked with its format's rules (fmt_walk_nested). */
static const struct fmt_rule package_rules[] = {
    {"header/*", FIELD},
    {"resources/*/data.bin", RES_DATA},
    {"resources/*/stored.bin", STORED},
    {"resources/*/*/*", NEVER}, /* replaced by the nested rules below */
    {"resources/*", FIELD},
    {"*.bin", STORED},
    {NULL, NEVER}};

struct fmt_kind {
    const char *kind;
    const struct fmt_rule *rules;
    /* values lie in compressed sections: a write stores the section raw, the file grows
     * (test_rw_granny_section_raw), so no value is given its text back */
    bool compressed;
};

static const struct fmt_kind *fmt_now;
static const char *fmt_root;
static int fmt_files, fmt_writable;

static const struct fmt_rule *rule_for(const struct fmt_rule *rules, const char *rel)
{
    for (const struct fmt_rule *r = rules; r->pattern; r++)
        if (fnmatch(r->pattern, rel, 0) == 0)
            return r;
    return NULL;
}

static bool want_writable(const struct fmt_rule *rules, const char *path, const char *rel)
{
    const struct fmt_rule *r = rule_for(rules, rel);
    switch (r ? r->how : NEVER) {
    case ALWAYS:
        return true;
    case FIELD:
        return is_field(path);
    case SCALAR:
        return is_scalar(path);
    case STORED:
        return is_stored(path);
    case FIELD_OR_STORED:
        return is_field(path) || is_stored(path);
    case RES_DATA: {
        char comp[1024];
        snprintf(comp, sizeof comp, "%.*s/compression", (int)(strrchr(path, '/') - path), path);
        char *c = text_of(comp);
        bool streamable = strcmp(c, "streamable\n") == 0;
        free(c);
        return !streamable || is_stored(path);
    }
    case NONEMPTY: {
        struct stat st;
        return stat(path, &st) == 0 && st.st_size > 0;
    }
    default:
        return false;
    }
}

/* What a package resource's nested view shows (resources/R/DIR/...): with its format's
 * rules (a wrapped RIG's, a Granny file's) over the resource's data when it is stored as
 * is (fmt_base: its offset); all read-only when it is stored compressed (only data.bin is
 * replaced whole). */
static bool nested_writable(const char *path, const char *rel)
{
    const char *res = rel + strlen("resources/"), *dir = strchr(res, '/'), *inner = dir ? strchr(dir + 1, '/') : NULL;
    if (!inner)
        return false;
    char p[1024];
    snprintf(p, sizeof p, "%s/%.*s/compression", fmt_root, (int)(dir - rel), rel);
    char *comp = text_of(p);
    bool as_is = strcmp(comp, "stored\n") == 0 || strcmp(comp, "none given\n") == 0;
    bool rewritable = strcmp(comp, "zlib\n") == 0 || strcmp(comp, "refpack\n") == 0;
    free(comp);
    if (!as_is) {
        /* in a zlib or RefPack resource (issue 34: rewritten zlib or raw), a wrapped RIG's
         * granny.gr2 makes the resource's new data whole: writable; the rest is not */
        char hp[1024];
        struct stat st;
        snprintf(hp, sizeof hp, "%s/%.*s/header/granny_offset", fmt_root, (int)(inner - rel), rel);
        return rewritable && strcmp(inner + 1, "granny.gr2") == 0 && stat(hp, &st) == 0;
    }
    snprintf(p, sizeof p, "%s/%.*s/offset", fmt_root, (int)(dir - rel), rel);
    char *off = text_of(p);
    fmt_base = strtoull(off, NULL, 10);
    free(off);
    snprintf(p, sizeof p, "%s/%.*s/granny/header/version", fmt_root, (int)(inner - rel), rel);
    struct stat st;
    /* a wrapped RIG shows header/ with the wrapper's words; a Granny file alone does not */
    char hp[1024];
    snprintf(hp, sizeof hp, "%s/%.*s/header/granny_offset", fmt_root, (int)(inner - rel), rel);
    const struct fmt_rule *rules = stat(hp, &st) == 0 ? rig_rules : granny_rules;
    bool w = want_writable(rules, path, inner + 1);
    fmt_base = 0;
    return w;
}

static int fmt_check(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)ftw;
    if (flag != FTW_F || !S_ISREG(st->st_mode))
        return 0;
    const char *rel = path + strlen(fmt_root) + 1;
    bool writable = fmt_now->rules == package_rules && fnmatch("resources/*/*/*", rel, 0) == 0
                        ? nested_writable(path, rel)
                        : want_writable(fmt_now->rules, path, rel);
    mode_t want = writable ? 0644 : 0444, got = st->st_mode & 07777;
    if (got != want)
        fail_msg("%s: %s is %04o, the format rules say %04o", fmt_now->kind, rel, (unsigned)got, (unsigned)want);
    fmt_files++;
    fmt_writable += writable;
    return 0;
}

static int fmt_rewritten;

/* A writable value file or table (not bytes: .bin, .rnc, granny.gr2) given its own text
 * back: the declared span, kind and byte order encode it to the bytes it was read from,
 * so the mounted file stays byte for byte the same. */
static int fmt_write_back(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)ftw;
    size_t n = strlen(path);
    if (flag != FTW_F || !S_ISREG(st->st_mode) || (st->st_mode & 0200) == 0 ||
        (n > 4 && (strcmp(path + n - 4, ".bin") == 0 || strcmp(path + n - 4, ".rnc") == 0 ||
                   strcmp(path + n - 4, ".gr2") == 0)))
        return 0;
    /* each close commits: a path opened right after is opened in the new tree, never
     * ESTALE (test_rw_fresh counts it with readers at once) */
    char *text = text_of(path), step;
    int e = write_text(path, O_WRONLY | O_TRUNC, text, &step);
    if (e)
        fail_msg("%s: %s given its own text back: %s at %c", fmt_now->kind, path + strlen(fmt_root) + 1,
                 strerror(e), step);
    free(text);
    fmt_rewritten++;
    return 0;
}

/* Every file of each format with writable parts, mounted rw and walked whole, has the
 * mode its format's rules give it (above): a wrapped RIG, Granny files (stored and
 * BitKnit2-compressed sections), packages of both games (resources stored, zlib and
 * RefPack; nested RIGs and Granny files), Turok 2 and Turok 1 t2fs files (both byte
 * orders, RNC-compressed nodes). Then each writable value file and table is given its
 * own text back: the file must come out unchanged (assert_file_is below), which it does
 * only when each declaration's span, kind and byte order are the field's. */
static void test_rw_modes_every_format(void **state)
{
    (void)state;
    static const struct fmt_kind kinds[] = {{"rig", rig_rules, false},
                                            {"gr2obj-le32-v7", granny_rules, false},
                                            {"gr2obj-be64-v6", granny_rules, false},
                                            {"bk2obj-le32-v7", granny_rules, true},
                                            {"gr2anim-le32", granny_rules, false},
                                            {"package-s3", package_rules, false},
                                            {"package-s4", package_rules, false},
                                            {"package-s4-rigs", package_rules, false},
                                            {"t2fs", t2fs_rules, false},
                                            {"t2fs-be", t2fs_rules, false},
                                            {"t2fs-turok1", t1_rules, false},
                                            {"t2fs-turok1-be", t1_rules, false}};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        size_t size;
        uint8_t *bytes = fx_kind(kinds[i].kind, 0, NULL, &size);
        assert_non_null(bytes);
        char path[256], mnt[256], name[128];
        snprintf(name, sizeof name, "every-%s.bin", kinds[i].kind);
        write_fixture(name, bytes, size, path, sizeof path);
        snprintf(name, sizeof name, "m-every-%s", kinds[i].kind);
        make_mountpoint(name, mnt, sizeof mnt);
        do_mount(path, mnt, "rw");
        fmt_now = &kinds[i], fmt_root = mnt, fmt_file = bytes, fmt_size = size, fmt_base = 0;
        fmt_files = fmt_writable = 0;
        assert_int_equal(nftw(mnt, fmt_check, 16, FTW_PHYS), 0);
        fmt_rewritten = 0;
        if (!kinds[i].compressed)
            assert_int_equal(nftw(mnt, fmt_write_back, 16, FTW_PHYS), 0);
        printf("%s: %d files, %d writable, %d values given their text back\n", kinds[i].kind, fmt_files,
               fmt_writable, fmt_rewritten);
        assert_true(fmt_writable > 0 && fmt_writable < fmt_files && (fmt_rewritten > 0 || kinds[i].compressed));
        umount_rw(mnt, path);
        assert_file_is(path, bytes, size);
        free(bytes);
    }
}

/* ---- writes inside a package resource and its whole replacement, pending at one commit
 * (issue 34: no edit silently lost). The commits after each write are refused (the file
 * moved away from its path: EBUSY at the close, the edits stay pending) until the file is
 * back and the unmount commits them all. ---- */

/* A Sims 4 package holding `data` (len bytes) as resource TYPE:0:0x1111 stored `comp`,
 * and 3,000 bytes of another (zlib); its path, mount point and the resource's directory
 * (resources/NAME). */
struct inpkg {
    uint8_t *pkg, *other;
    size_t size;
    char path[256], mnt[256], res[300], key[64];
};

static void inpkg_make(struct inpkg *k, uint32_t type, const uint8_t *data, size_t len, enum fxp_comp comp,
                       const char *name)
{
    memset(k, 0, sizeof *k);
    k->other = fxp_pattern(3000, 5);
    struct fxp_res res[2] = {{type, 0, 0x1111, data, len, comp}, {0x12345679, 0, 0x2222, k->other, 3000, FXP_ZLIB}};
    struct fxp_opts po = {.game = 4};
    struct fxp_layout lay;
    k->pkg = fxp_build(&po, res, 2, &k->size, &lay);
    write_fixture(name, k->pkg, k->size, k->path, sizeof k->path);
    char dir[200], mname[128];
    fxp_expected_name(dir, sizeof dir, 4, &res[0], NULL, 0);
    snprintf(k->res, sizeof k->res, "resources/%s", dir);
    snprintf(k->key, sizeof k->key, "%08X 00000000 0000000000001111", type);
    snprintf(mname, sizeof mname, "m-%s", name);
    make_mountpoint(mname, k->mnt, sizeof k->mnt);
}

static void inpkg_free(struct inpkg *k)
{
    free(k->pkg);
    free(k->other);
}

/* The file offsets of a resource's index record words: offset, stored size, memory size,
 * compression (dbpf.md), from their value files' user.s3rig.offset. */
static void record_words(const char *mnt, const char *res, uint64_t pos[4])
{
    static const char *const fields[4] = {"offset", "stored_size", "memory_size", "compression"};
    char rel[600];
    for (int i = 0; i < 4; i++) {
        snprintf(rel, sizeof rel, "%s/%s", res, fields[i]);
        pos[i] = xattr_offset(mnt, rel);
    }
}

/* open, pwrite len bytes at off, close: the errno of the first failing step (0: none). */
static int patch_at(const char *mnt, const char *rel, uint64_t off, const void *b, size_t len)
{
    char p[1024];
    snprintf(p, sizeof p, "%s/%s", mnt, rel);
    int fd = open(p, O_WRONLY);
    if (fd < 0)
        return errno;
    if (pwrite(fd, b, len, (off_t)off) != (ssize_t)len) {
        int e = errno;
        close(fd);
        return e;
    }
    return close(fd) ? errno : 0;
}

static int value_at(const char *mnt, const char *rel, const char *text)
{
    char p[1024], step;
    snprintf(p, sizeof p, "%s/%s", mnt, rel);
    return write_text(p, O_WRONLY | O_TRUNC, text, &step);
}

static int whole_at(const char *mnt, const char *rel, const uint8_t *b, size_t len)
{
    char p[1024], step;
    snprintf(p, sizeof p, "%s/%s", mnt, rel);
    return write_bytes(p, b, len, &step);
}

/* /info's count of the bytes the last write into a compressed section wrote into files
 * (the section's copy, the pending edits' tail, new Granny or resource bytes). */
static unsigned long long last_section_write(const char *mnt)
{
    char p[512];
    snprintf(p, sizeof p, "%s/info", mnt);
    char *t = text_of(p);
    const char *line = strstr(t, "rw: the last write into a compressed section wrote ");
    assert_non_null(line);
    unsigned long long n;
    assert_int_equal(sscanf(line, "rw: the last write into a compressed section wrote %llu bytes into files", &n), 1);
    free(t);
    return n;
}

/* Issue 34's speed: values written into a BitKnit2 section of 256 KiB (fxg_build_sections:
 * Magic, Index, Values' count and pointer, its 64 UInt32s at the section's start), in a
 * .gr2, a wrapped RIG and a Granny package resource (zlib), the commits of the closes
 * refused (the file moved away) so that they all wait for one commit. The first write
 * costs the section (its copy, and it is stored raw once); each later one, values,
 * Values.csv (64 cells) and bytes of Values.bin, writes its own bytes into files and
 * nothing else (before, each stored the whole section again). Committed: section 1
 * stored raw (compression 0, at the old total_size 4-aligned, its sizes) holding exactly
 * the last bytes written, the CRC valid; a RIG's blocks following, the rest of the tree
 * the same (tree diff); a resource's entry read by the outside reader as zlib with those
 * bytes; mounted again every value reads back. */
enum { SEC_VALUES_SIZE = 256 << 10 };

static void section_values_written(const char *mnt, const char *at)
{
    char rel[700], p[1200], csv[64 * 8 + 8], step;
    snprintf(rel, sizeof rel, "%sgranny/root/Part_1/Index", at);
    assert_int_equal(mode_of(mnt, rel), 0644);
    assert_int_equal(value_at(mnt, rel, "4242\n"), EBUSY); /* the commit refused: pending */
    unsigned long long first = last_section_write(mnt);
    printf("first value: %llu bytes into files (section %d)\n", first, SEC_VALUES_SIZE);
    assert_true(first >= SEC_VALUES_SIZE);
    snprintf(rel, sizeof rel, "%sgranny/root/Part_1/Magic", at);
    assert_int_equal(value_at(mnt, rel, "1234\n"), EBUSY);
    assert_int_equal(last_section_write(mnt), 4);
    snprintf(rel, sizeof rel, "%sgranny/root/Part_1/Index", at);
    assert_int_equal(value_at(mnt, rel, "4243\n"), EBUSY);
    assert_int_equal(last_section_write(mnt), 4);
    size_t n = (size_t)snprintf(csv, sizeof csv, "v\n");
    for (int j = 0; j < FXG_SECTION_VALUES; j++)
        n += (size_t)snprintf(csv + n, sizeof csv - n, "%d\n", 7000 + j);
    snprintf(p, sizeof p, "%s/%sgranny/root/Part_1/Values.csv", mnt, at);
    assert_int_equal(write_text(p, O_WRONLY | O_TRUNC, csv, &step), EBUSY);
    assert_int_equal(last_section_write(mnt), 4 * FXG_SECTION_VALUES);
    uint8_t v[4];
    le32(v, 12345678u);
    snprintf(rel, sizeof rel, "%sgranny/root/Part_1/Values.bin", at);
    assert_int_equal(patch_at(mnt, rel, 8, v, 4), EBUSY); /* the third value */
    assert_int_equal(last_section_write(mnt), 4);
    assert_true(info_has(mnt, "commit refused"));
}

/* The committed Granny data g (n bytes): section 1 stored raw with what
 * section_values_written wrote, the CRC valid. */
static void assert_section_values(const uint8_t *g, size_t n, const struct fxg_sections_result *r)
{
    uint8_t *want = malloc(SEC_VALUES_SIZE);
    memcpy(want, r->section[1], SEC_VALUES_SIZE);
    le32(want, 1234);
    le32(want + 4, 4243);
    for (int j = 0; j < FXG_SECTION_VALUES; j++)
        le32(want + 16 + 4 * j, j == 2 ? 12345678u : 7000u + (uint32_t)j);
    const uint8_t *h = g + 0x20 + r->layout.section_array_offset + 44;
    uint32_t data_at = (r->layout.total_size + 3) & ~3u;
    assert_int_equal(rd32(h), 0);
    assert_int_equal(rd32(h + 4), data_at);
    assert_int_equal(rd32(h + 8), SEC_VALUES_SIZE);
    assert_int_equal(rd32(h + 12), SEC_VALUES_SIZE);
    assert_true((uint64_t)data_at + SEC_VALUES_SIZE <= n && rd32(g + 0x24) >= data_at + SEC_VALUES_SIZE);
    assert_memory_equal(g + data_at, want, SEC_VALUES_SIZE);
    assert_gr2_crc_valid(g);
    free(want);
}

/* Mounted again (read-only): the values read back as written last. */
static void assert_values_read_back(const char *file, const char *mnt, const char *at)
{
    char p[1200];
    do_mount(file, mnt, NULL);
    static const char *const rel[] = {"Magic", "Index"}, *const want[] = {"1234\n", "4243\n"};
    for (int i = 0; i < 2; i++) {
        snprintf(p, sizeof p, "%s/%sgranny/root/Part_1/%s", mnt, at, rel[i]);
        char *t = text_of(p);
        assert_string_equal(t, want[i]);
        free(t);
    }
    snprintf(p, sizeof p, "%s/%sgranny/root/Part_1/Values.csv", mnt, at);
    char *t = text_of(p);
    assert_true(strncmp(t, "v\n7000\n7001\n12345678\n7003\n", 26) == 0);
    free(t);
    do_umount(mnt);
}

static void section_values_in_file(bool rig)
{
    struct fxg_sections_opts so = {2, SEC_VALUES_SIZE};
    struct fxg_sections_result r;
    struct gfix f = {.rig = rig};
    size_t glen;
    uint8_t *gr2 = fxg_build_sections(&so, &glen, &r);
    if (rig) {
        struct fx_rig_opts ro = fx_sample_rig_opts(gr2, glen);
        f.bytes = fx_build_rig(&ro, &f.size, &f.rl);
    } else {
        f.bytes = malloc(glen);
        memcpy(f.bytes, gr2, glen);
        f.size = glen;
    }
    const char *name = rig ? "sec-values.rig" : "sec-values.gr2";
    write_fixture(name, f.bytes, f.size, f.path, sizeof f.path);
    snprintf(f.orig, sizeof f.orig, "%s/orig-%s", tmpdir, name);
    assert_int_equal(fx_write_file(f.orig, f.bytes, f.size), 0);
    make_mountpoint(rig ? "m-sec-values-rig" : "m-sec-values-gr2", f.mnt, sizeof f.mnt);
    do_mount(f.path, f.mnt, "rw");
    move_file(f.path, true);
    section_values_written(f.mnt, "");
    move_file(f.path, false);
    assert_int_equal(fsync_at(f.mnt, rig ? "header.bin" : "granny.gr2"), 0);
    umount_rw(f.mnt, f.path);
    size_t n;
    uint8_t *now = slurp(f.path, &n);
    assert_section_values(now + f.rl.granny_pos, n - f.rl.granny_pos, &r);
    assert_container_follows(&f, now, n);
    free(now);
    const char *changed[] = {"info", "granny.gr2", "granny/header/crc", "granny/header/crc_computed",
                             "granny/header/total_size", "granny/sections/1/", "header.bin", "header/",
                             "unparsed/", "granny/root/Part_1/Magic", "granny/root/Part_1/Index",
                             "granny/root/Part_1/Values.bin", "granny/root/Part_1/Values.csv", NULL};
    const char *added[] = {"unparsed/", "granny/sections/1/", NULL};
    const char *moved[] = {"", "granny", "granny/", "unparsed", "ik_chains", "ik_chains/", "full_bone_list",
                           "ik_target_slots", "info_nodes", "compress_nodes", "granny/root/Part_1/", NULL};
    assert_trees_same_but(f.orig, f.path, changed, moved, added);
    assert_values_read_back(f.path, f.mnt, "");
    fxg_sections_free(&r);
    free(gr2);
    free(f.bytes);
}

static void section_values_in_package(void)
{
    struct fxg_sections_opts so = {2, SEC_VALUES_SIZE};
    struct fxg_sections_result r;
    size_t glen, size;
    uint8_t *gr2 = fxg_build_sections(&so, &glen, &r), *other = fxp_pattern(3000, 5);
    struct fxp_res res[2] = {{0x12345678, 0, 0x1111, gr2, glen, FXP_ZLIB},
                             {0x12345679, 0, 0x2222, other, 3000, FXP_ZLIB}};
    struct fxp_opts po = {.game = 4};
    struct fxp_layout lay;
    uint8_t *pkg = fxp_build(&po, res, 2, &size, &lay);
    char path[256], mnt[256], dir[200], at[300], p[1024];
    write_fixture("sec-values.package", pkg, size, path, sizeof path);
    fxp_expected_name(dir, sizeof dir, 4, &res[0], NULL, 0);
    snprintf(at, sizeof at, "resources/%s/rig/", dir);
    make_mountpoint("m-sec-values-pkg", mnt, sizeof mnt);
    do_mount(path, mnt, "rw");
    move_file(path, true);
    section_values_written(mnt, at);
    move_file(path, false);
    snprintf(p, sizeof p, "%sgranny/root/Part_1/Index", at);
    assert_int_equal(fsync_at(mnt, p), 0);
    umount_rw(mnt, path);
    do_mount(path, mnt, NULL);
    snprintf(p, sizeof p, "%s/resources/%s/data.bin", mnt, dir);
    size_t n;
    uint8_t *g = slurp(p, &n);
    do_umount(mnt);
    assert_section_values(g, n, &r);
    assert_int_equal(rd32(g + 0x24), n);
    char *lines = outside_read(path), hex[2 * SHA256_DIGEST_SIZE + 1], want[300];
    sha256_hex(g, n, hex);
    snprintf(want, sizeof want, "memory=%zu sha256=%s", n, hex);
    char *line = entry_line(lines, "12345678 00000000 0000000000001111");
    assert_non_null(line);
    assert_non_null(strstr(line, "comp=zlib"));
    assert_non_null(strstr(line, want));
    free(line);
    sha256_hex(other, 3000, hex); /* the other resource as it was */
    snprintf(want, sizeof want, "memory=3000 sha256=%s", hex);
    line = entry_line(lines, "12345679 00000000 0000000000002222");
    assert_non_null(line);
    assert_non_null(strstr(line, want));
    free(line);
    free(lines);
    assert_values_read_back(path, mnt, at);
    free(g);
    fxg_sections_free(&r);
    free(gr2);
    free(other);
    free(pkg);
}

static void test_rw_section_value_costs_its_bytes(void **state)
{
    (void)state;
    section_values_in_file(false);
    section_values_in_file(true);
    section_values_in_package();
}

/* The package at path as committed: its first `size` bytes are `old` but the index
 * record's words (pos), which point right after that old end at the resource's only copy
 * (the file ends with it: no copy of before is left), stored as before (zlib: 0x5A42, or
 * raw: 0; the stored size's flag bit kept, dbpf.md), expanding to want; tests/dbpf_read.py
 * reads the package, that entry with want's length and sha256. */
static void assert_one_copy(const char *path, const uint8_t *old, size_t size, const uint64_t pos[4], bool zlib,
                            const uint8_t *want, size_t wlen, const char *key)
{
    size_t n;
    uint8_t *now = slurp(path, &n);
    uint32_t at = rd32(now + pos[0]), stored = rd32(now + pos[1]) & 0x7fffffffu;
    assert_int_equal(at, size);
    assert_int_equal((uint64_t)at + stored, n);
    assert_int_equal(rd32(now + pos[1]) & 0x80000000u, rd32(old + pos[1]) & 0x80000000u);
    assert_int_equal(rd32(now + pos[2]), wlen);
    assert_int_equal(now[pos[3]] | now[pos[3] + 1] << 8, zlib ? 0x5A42 : 0);
    for (size_t i = 0; i < size; i++) {
        bool word = false;
        for (int w = 0; w < 4; w++)
            word |= i >= pos[w] && i < pos[w] + (w == 3 ? 2 : 4);
        if (!word && now[i] != old[i])
            fail_msg("byte %zu of the old package changed: %02x, was %02x", i, now[i], old[i]);
    }
    if (zlib) {
        uLongf out = wlen + 16;
        uint8_t *inflated = malloc(out);
        assert_int_equal(uncompress(inflated, &out, now + at, stored), Z_OK);
        assert_int_equal(out, wlen);
        assert_memory_equal(inflated, want, wlen);
        free(inflated);
    } else {
        assert_int_equal(stored, wlen);
        assert_memory_equal(now + at, want, wlen);
    }
    char *lines = outside_read(path), hex[2 * SHA256_DIGEST_SIZE + 1], wline[300];
    sha256_hex(want, wlen, hex);
    snprintf(wline, sizeof wline, "entry %s comp=%s stored=%u memory=%zu sha256=%s", key, zlib ? "zlib" : "raw",
             stored, wlen, hex);
    char *got = entry_line(lines, key);
    assert_non_null(got);
    assert_string_equal(got, wline);
    free(got);
    free(lines);
    free(now);
}

static const char geom_res[] = "resources/S4_015A1849_00000000_0000000100000040_yfCustom%%+GEOM.simgeom";

/* Case 1, a GEOM stored raw in a package: its data.bin replaced (pending), then a value,
 * a table cell, bytes of vertices.bin and of the resource's stored.bin written: each lies
 * in the bytes the index record no longer points at, so each is refused (EBUSY, an /info
 * line naming it and why) rather than taken and lost. Committed: exactly the package with
 * the new copy appended and its record pointed at it. */
static void inside_after_replace_geom(void)
{
    size_t size;
    uint8_t *pkg = fx_kind("package-geom", 0, NULL, &size);
    char path[256], mnt[256], rel[600], p[1024];
    write_fixture("inside-after-geom.package", pkg, size, path, sizeof path);
    make_mountpoint("m-inside-after-geom", mnt, sizeof mnt);
    do_mount(path, mnt, "rw");
    uint64_t pos[4];
    record_words(mnt, geom_res, pos);
    uint8_t *fresh = fxp_pattern(500, 31);
    move_file(path, true);
    snprintf(rel, sizeof rel, "%s/data.bin", geom_res);
    assert_int_equal(whole_at(mnt, rel, fresh, 500), EBUSY); /* the commit refused: pending */
    assert_true(info_has(mnt, "commit refused"));
    snprintf(rel, sizeof rel, "%s/geom/geom/sort_order", geom_res);
    assert_int_equal(mode_of(mnt, rel), 0644);
    assert_int_equal(value_at(mnt, rel, "7\n"), EBUSY);
    assert_true(info_has(mnt, "geom/geom/sort_order: new content of the package resource it lies in is pending"));
    snprintf(rel, sizeof rel, "%s/geom/geom/vertices.csv", geom_res);
    snprintf(p, sizeof p, "%s/%s", mnt, rel);
    char *csv = text_of(p), *csv2 = csv_set(csv, 2, csv_col(csv, "px"), "2.5");
    assert_int_equal(value_at(mnt, rel, csv2), EBUSY);
    static const uint8_t four[4] = {1, 2, 3, 4};
    snprintf(rel, sizeof rel, "%s/geom/geom/vertices.bin", geom_res);
    assert_int_equal(patch_at(mnt, rel, 4, four, 4), EBUSY);
    snprintf(rel, sizeof rel, "%s/stored.bin", geom_res);
    assert_int_equal(patch_at(mnt, rel, 0, four, 4), EBUSY);
    assert_true(info_has(mnt, "of the file: new content of the package resource it lies in is pending"));
    move_file(path, false);
    umount_rw(mnt, path);
    assert_one_copy(path, pkg, size, pos, false, fresh, 500, "015A1849 00000000 0000000100000040");
    free(csv);
    free(csv2);
    free(fresh);
    free(pkg);
}

/* Case 1, a Granny file stored zlib in a package: its data.bin replaced, then a value in
 * its compressed section and bytes of a table's NAME.bin there: refused (EBUSY, /info),
 * the committed package holds the new content only. */
static void inside_after_replace_granny(void)
{
    struct fxg_result r;
    size_t glen;
    uint8_t *gr2 = fxg_build(&fx_oodle1_v7, &glen, &r);
    struct inpkg k;
    inpkg_make(&k, 0x12345678, gr2, glen, FXP_ZLIB, "inside-after-gr2.package");
    do_mount(k.path, k.mnt, "rw");
    uint64_t pos[4];
    record_words(k.mnt, k.res, pos);
    uint8_t *fresh = fxp_pattern(4000, 32);
    char rel[700];
    move_file(k.path, true);
    snprintf(rel, sizeof rel, "%s/data.bin", k.res);
    assert_int_equal(whole_at(k.mnt, rel, fresh, 4000), EBUSY);
    snprintf(rel, sizeof rel, "%s/rig/granny/root/Skeletons/0/Bones/1/Transform/position", k.res);
    assert_int_equal(value_at(k.mnt, rel, "1.5\n-2\n0.25\n"), EBUSY);
    assert_true(info_has(k.mnt, "a replacement of the package resource holding it is pending"));
    static const uint8_t four[4] = {0, 0, 0x18, 0x41};
    snprintf(rel, sizeof rel, "%s/rig/granny/root/Misc/Points.bin", k.res);
    assert_int_equal(patch_at(k.mnt, rel, 4, four, 4), EBUSY);
    move_file(k.path, false);
    umount_rw(k.mnt, k.path);
    assert_one_copy(k.path, k.pkg, k.size, pos, true, fresh, 4000, k.key);
    free(fresh);
    inpkg_free(&k);
    free(r.section);
    free(gr2);
}

static void test_rw_write_inside_replaced_resource(void **state)
{
    (void)state;
    inside_after_replace_geom();
    inside_after_replace_granny();
}

/* Case 2, the reverse: writes inside a resource pending, then its data.bin replaced whole:
 * the later whole content wins (/info says the writes before are superseded). In a
 * resource stored raw a value's bytes stay where they were written, in the old bytes no
 * record points at any more; from a resource stored compressed nothing of them is left
 * (the copy they made is not written). Never are they laid over the new content. Kinds of
 * writes inside: a GEOM's value (raw), a value in a Granny resource's compressed section
 * (zlib), a RIG resource's granny.gr2 replaced (zlib), bytes of a table's NAME.bin in a
 * compressed section (zlib; stored only at the commit, where they must not block it). */
enum inside_kind { INSIDE_GEOM_VALUE, INSIDE_SECTION_VALUE, INSIDE_RIG_GRANNY, INSIDE_SECTION_BYTES };

static void replace_after_inside(enum inside_kind kind, const char *name)
{
    struct fxg_result r = {0};
    struct fx_rig_layout rl;
    size_t glen = 0, size;
    uint8_t *gr2 = NULL, *pkg = NULL;
    struct inpkg k;
    memset(&k, 0, sizeof k);
    const char *res = k.res, *key = k.key;
    char path[256], mnt[256], rel[700], p[1100];
    if (kind == INSIDE_GEOM_VALUE) {
        pkg = fx_kind("package-geom", 0, NULL, &size);
        write_fixture(name, pkg, size, path, sizeof path);
        make_mountpoint("m-replace-after", mnt, sizeof mnt);
        res = geom_res;
        key = "015A1849 00000000 0000000100000040";
    } else {
        struct fxg_opts o = fx_oodle1_v7;
        if (kind == INSIDE_RIG_GRANNY)
            o.sig = "le32-old", o.version = 6;
        gr2 = kind == INSIDE_RIG_GRANNY ? fxg_sample_rig(&o, &r, &glen, &rl) : fxg_build(&o, &glen, &r);
        inpkg_make(&k, kind == INSIDE_RIG_GRANNY ? 0x8EAF13DE : 0x12345678, gr2, glen, FXP_ZLIB, name);
        snprintf(k.key, sizeof k.key, "%08X 00000000 0000000000001111",
                 kind == INSIDE_RIG_GRANNY ? 0x8EAF13DEu : 0x12345678u);
        pkg = k.pkg, size = k.size;
        memcpy(path, k.path, sizeof path);
        memcpy(mnt, k.mnt, sizeof mnt);
    }
    uint8_t *old = malloc(size);
    memcpy(old, pkg, size);
    do_mount(path, mnt, "rw");
    uint64_t pos[4];
    record_words(mnt, res, pos);
    move_file(path, true);
    if (kind == INSIDE_GEOM_VALUE) {
        /* u32 sort_order at its user.s3rig.offset in the resource's bytes (raw: from the
         * record's offset on); the value file shows what lies there */
        snprintf(rel, sizeof rel, "%s/geom/geom/sort_order", res);
        uint64_t at = rd32(pkg + pos[0]) + xattr_offset(mnt, rel);
        snprintf(p, sizeof p, "%s/%s", mnt, rel);
        char *was = text_of(p);
        assert_int_equal(strtoul(was, NULL, 10), rd32(pkg + at));
        free(was);
        assert_int_equal(value_at(mnt, rel, "7\n"), EBUSY); /* pending */
        le32(old + at, 7);
    } else if (kind == INSIDE_SECTION_VALUE) {
        snprintf(rel, sizeof rel, "%s/rig/granny/root/Skeletons/0/Bones/1/Transform/position", res);
        assert_int_equal(value_at(mnt, rel, "1.5\n-2\n0.25\n"), EBUSY);
        assert_true(info_has(mnt, "stored raw"));
    } else if (kind == INSIDE_RIG_GRANNY) {
        struct fx_gr2_layout gl;
        size_t nlen;
        uint8_t *newg = fx_sample_gr2("le32", 7, &nlen, &gl);
        snprintf(rel, sizeof rel, "%s/rig/granny.gr2", res);
        assert_int_equal(whole_at(mnt, rel, newg, nlen), EBUSY);
        assert_true(info_has(mnt, "granny.gr2 replaced"));
        free(newg);
    } else {
        static const uint8_t four[4] = {0, 0, 0x18, 0x41};
        snprintf(rel, sizeof rel, "%s/rig/granny/root/Misc/Points.bin", res);
        assert_int_equal(patch_at(mnt, rel, 4, four, 4), EBUSY);
    }
    uint8_t *fresh = fxp_pattern(2500, 33);
    snprintf(rel, sizeof rel, "%s/data.bin", res);
    assert_int_equal(whole_at(mnt, rel, fresh, 2500), EBUSY); /* taken; the commit refused */
    assert_true(info_has(mnt, "replaced whole; the writes inside the resource pending before it are superseded"));
    move_file(path, false);
    umount_rw(mnt, path);
    assert_one_copy(path, old, size, pos, kind != INSIDE_GEOM_VALUE, fresh, 2500, key);
    char unsaved[320];
    snprintf(unsaved, sizeof unsaved, "%s.s3rig-unsaved", path);
    assert_int_equal(access(unsaved, F_OK), -1); /* the commit at unmount went through */
    free(fresh);
    free(old);
    if (kind == INSIDE_GEOM_VALUE)
        free(pkg);
    else
        inpkg_free(&k);
    free(r.section);
    free(gr2);
}

/* Case 2 for a RIG resource's granny.gr2 (the RIG stored zlib): a value in its compressed
 * Granny section written (pending), then granny.gr2 replaced by another Granny file: the
 * new Granny bytes win as written (the section's value is not laid over them), in the
 * resource's only copy; mounted again, granny.gr2 is those bytes and the IK chains and
 * lists after it are as they were. */
static void granny_after_section_value(void)
{
    struct fxg_opts o = fx_oodle1_v7;
    o.sig = "le32-old", o.version = 6;
    struct fxg_result r;
    struct fx_rig_layout rl;
    size_t glen, nlen;
    uint8_t *rigb = fxg_sample_rig(&o, &r, &glen, &rl);
    struct inpkg k;
    inpkg_make(&k, 0x8EAF13DE, rigb, glen, FXP_ZLIB, "granny-after-value.package");
    do_mount(k.path, k.mnt, "rw");
    uint64_t pos[4];
    record_words(k.mnt, k.res, pos);
    struct fx_gr2_layout gl;
    uint8_t *newg = fx_sample_gr2("le32", 7, &nlen, &gl);
    char rel[700], p[1100];
    move_file(k.path, true);
    snprintf(rel, sizeof rel, "%s/rig/granny/root/Skeletons/0/Bones/1/Transform/position", k.res);
    assert_int_equal(value_at(k.mnt, rel, "1.5\n-2\n0.25\n"), EBUSY); /* pending */
    snprintf(rel, sizeof rel, "%s/rig/granny.gr2", k.res);
    assert_int_equal(whole_at(k.mnt, rel, newg, nlen), EBUSY);
    assert_true(info_has(k.mnt, "granny.gr2: replaced whole; the writes inside it pending before it are superseded"));
    move_file(k.path, false);
    umount_rw(k.mnt, k.path);
    do_mount(k.path, k.mnt, NULL);
    snprintf(p, sizeof p, "%s/%s/rig/granny.gr2", k.mnt, k.res);
    assert_file_is(p, newg, nlen);
    snprintf(p, sizeof p, "%s/%s/data.bin", k.mnt, k.res);
    size_t n;
    uint8_t *now = slurp(p, &n);
    uint64_t ik = (rl.granny_pos + nlen + 3) & ~3ull; /* rig.md: padded to 4, then the rest */
    assert_int_equal(n, ik + (glen - rl.ik_pos));
    assert_memory_equal(now + ik, rigb + rl.ik_pos, glen - rl.ik_pos);
    do_umount(k.mnt);
    assert_one_copy(k.path, k.pkg, k.size, pos, true, now, n, k.key);
    free(now);
    free(newg);
    inpkg_free(&k);
    free(r.section);
    free(rigb);
}

static void test_rw_resource_replaced_after_writes_inside(void **state)
{
    (void)state;
    granny_after_section_value();
    replace_after_inside(INSIDE_GEOM_VALUE, "after-geom-value.package");
    replace_after_inside(INSIDE_SECTION_VALUE, "after-section-value.package");
    replace_after_inside(INSIDE_RIG_GRANNY, "after-rig-granny.package");
    replace_after_inside(INSIDE_SECTION_BYTES, "after-section-bytes.package");
}

/* The section's expanded bytes with bone b's position (found once) set to `to`, in sec. */
static void set_position(const struct fxg_result *r, uint8_t *sec, int b, const float to[3])
{
    size_t at = find_once(r->section, r->section_size, (const uint8_t *)r->bones[b].position, 12);
    assert_true(at != SIZE_MAX);
    memcpy(sec + at, to, 12);
}

/* A package holding one Granny file (an Oodle1 v7 section; stored zlib) or one wrapped
 * RIG (a v6 Granny file inside; stored raw) as resource `name`, mounted rw; pos: the
 * resource's index record words (record_words). Returns the Granny or RIG bytes (the
 * caller frees them). */
static uint8_t *inpkg_granny_mounted(bool rig, const char *name, struct fxg_result *r, struct fx_rig_layout *rl,
                                     struct inpkg *k, uint64_t pos[4])
{
    struct fxg_opts o = fx_oodle1_v7;
    if (rig)
        o.sig = "le32-old", o.version = 6;
    size_t glen;
    uint8_t *gr2 = rig ? fxg_sample_rig(&o, r, &glen, rl) : fxg_build(&o, &glen, r);
    inpkg_make(k, rig ? 0x8EAF13DE : 0x12345678, gr2, glen, rig ? FXP_STORED : FXP_ZLIB, name);
    do_mount(k->path, k->mnt, "rw");
    record_words(k->mnt, k->res, pos);
    return gr2;
}

/* Case 3: writes inside one package resource, pending at one commit, all kept, the
 * resource made once: two bones' positions in the compressed section of a Granny file
 * stored zlib; a RIG header value (unused_0, in the resource's stored bytes) then two
 * bones' positions in the RIG's compressed Granny section, the RIG stored raw (its
 * section stored raw in new Granny bytes, in new RIG bytes, never spliced into the
 * package in place). A header value written after (the new bytes made without it) is
 * refused, EBUSY, and changes nothing. Committed:
 * the resource's new data holds the section stored raw with both positions (gr2.md), the
 * RIG's value too; its record points at its only copy; mounted again, both read back. */
static void two_inside(bool rig, const char *name)
{
    struct fxg_result r;
    struct fx_rig_layout rl = {0};
    struct inpkg k;
    uint64_t pos[4];
    uint8_t *gr2 = inpkg_granny_mounted(rig, name, &r, &rl, &k, pos);
    uint8_t *old = malloc(k.size), *sec = malloc(r.section_size);
    memcpy(old, k.pkg, k.size);
    memcpy(sec, r.section, r.section_size);
    static const float one[3] = {1.5f, -2.0f, 0.25f}, two[3] = {-4.0f, 0.5f, 8.0f};
    char rel[700], rel2[700], rel3[700], p[1100];
    snprintf(rel, sizeof rel, "%s/rig/granny/root/Skeletons/0/Bones/1/Transform/position", k.res);
    snprintf(rel3, sizeof rel3, "%s/rig/header/unused_0", k.res);
    snprintf(rel2, sizeof rel2, "%s/rig/granny/root/Skeletons/0/Bones/2/Transform/position", k.res);
    move_file(k.path, true);
    if (rig) { /* unused_0: the wrapper's word 9 (rig.md), in the raw resource's bytes */
        assert_int_equal(value_at(k.mnt, rel3, "305419896\n"), EBUSY);
        le32(old + rd32(k.pkg + pos[0]) + UNUSED0_POS, 305419896u); /* stays in the old bytes too */
    }
    assert_int_equal(value_at(k.mnt, rel2, "-4\n0.5\n8\n"), EBUSY);
    set_position(&r, sec, 2, two);
    assert_int_equal(value_at(k.mnt, rel, "1.5\n-2\n0.25\n"), EBUSY); /* the commit refused, not the write */
    set_position(&r, sec, 1, one);
    assert_false(info_has(k.mnt, "refused /"));
    if (rig) { /* the resource's new bytes are made: a value in its old ones would be lost */
        assert_int_equal(value_at(k.mnt, rel3, "7\n"), EBUSY);
        assert_true(info_has(k.mnt, "unused_0: new content of the package resource it lies in is pending"));
    }
    move_file(k.path, false);
    umount_rw(k.mnt, k.path);
    do_mount(k.path, k.mnt, NULL);
    snprintf(p, sizeof p, "%s/%s/data.bin", k.mnt, k.res);
    size_t n;
    uint8_t *now = slurp(p, &n);
    assert_section_raw(now + rl.granny_pos, &r, sec);
    if (rig)
        assert_int_equal(rd32(now + UNUSED0_POS), 305419896u);
    snprintf(p, sizeof p, "%s/%s", k.mnt, rel);
    char *t = text_of(p);
    assert_string_equal(t, "1.5\n-2\n0.25\n");
    free(t);
    snprintf(p, sizeof p, "%s/%s", k.mnt, rel2);
    t = text_of(p);
    assert_string_equal(t, "-4\n0.5\n8\n");
    free(t);
    do_umount(k.mnt);
    assert_one_copy(k.path, old, k.size, pos, !rig, now, n, k.key);
    free(now);
    free(sec);
    free(old);
    inpkg_free(&k);
    free(r.section);
    free(gr2);
}

static void test_rw_two_writes_inside_one_resource(void **state)
{
    (void)state;
    two_inside(false, "two-inside-gr2.package");
    two_inside(true, "two-inside-rig.package");
}

/* ---- a write inside a compressed section whose whole replacement is pending (issue
 * 34: never lose data; mount.s3rig(8): a write inside after a whole replacement is
 * EBUSY, /info names the path and why, nothing changes) ---- */

/* After the data.bin of a compressed Granny section was replaced whole (the close's commit
 * refused: the file moved away, so the new section stays pending), a value in that
 * section (bone 1's position) or bytes of its Points.bin (9.5 at byte 4) are refused,
 * EBUSY, /info naming why: the replacement is not what the tree shows, so the write has
 * no bytes of the section to go on. The reverse (inside_first: the write inside pending,
 * then data.bin replaced): the later whole content wins, the write before superseded.
 * Either way, committed: the section stored raw holds exactly the replacement (gr2.md:
 * compression 0 at the old total_size 4-aligned, the CRC valid), a RIG's blocks follow
 * it, the value written inside is nowhere in the file, and the rest of the tree is the
 * same. In a .gr2 and a wrapped RIG. */
static int write_inside(const struct gfix *f, bool by_bin)
{
    static const uint8_t nine_half[4] = {0, 0, 0x18, 0x41}; /* 9.5, little-endian */
    return by_bin ? patch_at(f->mnt, "granny/root/Misc/Points.bin", 4, nine_half, 4)
                  : value_at(f->mnt, "granny/root/Skeletons/0/Bones/1/Transform/position",
                             "-123.5\n456.25\n-789.125\n");
}

static void inside_after_section_replaced(const struct fxg_opts *o, const char *name, bool rig, bool by_bin,
                                          bool inside_first)
{
    struct gfix f;
    gfix_make(&f, o, name, rig);
    do_mount(f.path, f.mnt, "rw");
    static const float to[3] = {1.5f, -2.0f, 0.25f}, inside[3] = {-123.5f, 456.25f, -789.125f};
    uint8_t *sec = section_with_position(&f.r, to);
    move_file(f.path, true);
    if (inside_first) /* EBUSY: the commit refused, the write pending */
        assert_int_equal(write_inside(&f, by_bin), EBUSY);
    assert_int_equal(whole_at(f.mnt, "granny/sections/0/data.bin", sec, f.r.section_size), EBUSY);
    assert_true(info_has(f.mnt, "commit refused"));
    if (!inside_first) {
        assert_int_equal(write_inside(&f, by_bin), EBUSY); /* refused at the write */
        assert_true(info_has(f.mnt, by_bin ? "refused a write to section 0's bytes: new bytes of the section are pending"
                                           : "Transform/position: new bytes of the section are pending"));
    }
    move_file(f.path, false);
    umount_rw(f.mnt, f.path); /* commits what is pending */
    size_t n;
    uint8_t *now = slurp(f.path, &n);
    assert_section_raw(now + f.rl.granny_pos, &f.r, sec);
    assert_container_follows(&f, now, n);
    for (size_t i = 0; i + 12 <= n; i++)
        assert_true(memcmp(now + i, inside, 12) != 0);
    free(now);
    assert_section_tree(&f, "granny/root/Skeletons/0/Bones/1/Transform/position", NULL);
    free(sec);
    gfix_free(&f);
}

/* The same in a package resource (a Granny file stored zlib, and a wrapped RIG stored
 * raw): its section's data.bin replaced (pending), then a value in that section: refused
 * (EBUSY, /info). Committed, the resource's data holds the section stored raw with
 * exactly the replacement; the record points at its only copy. */
static void inside_after_section_replaced_in_package(bool rig, const char *name)
{
    struct fxg_result r;
    struct fx_rig_layout rl = {0};
    struct inpkg k;
    uint64_t pos[4];
    uint8_t *gr2 = inpkg_granny_mounted(rig, name, &r, &rl, &k, pos);
    static const float to[3] = {1.5f, -2.0f, 0.25f};
    uint8_t *sec = section_with_position(&r, to);
    char rel[700], p[1100];
    move_file(k.path, true);
    snprintf(rel, sizeof rel, "%s/rig/granny/sections/0/data.bin", k.res);
    assert_int_equal(whole_at(k.mnt, rel, sec, r.section_size), EBUSY);
    snprintf(rel, sizeof rel, "%s/rig/granny/root/Skeletons/0/Bones/1/Transform/position", k.res);
    assert_int_equal(value_at(k.mnt, rel, "-123.5\n456.25\n-789.125\n"), EBUSY);
    assert_true(info_has(k.mnt, "Transform/position: "));
    move_file(k.path, false);
    umount_rw(k.mnt, k.path);
    do_mount(k.path, k.mnt, NULL);
    snprintf(p, sizeof p, "%s/%s/data.bin", k.mnt, k.res);
    size_t n;
    uint8_t *now = slurp(p, &n);
    assert_section_raw(now + rl.granny_pos, &r, sec);
    snprintf(p, sizeof p, "%s/%s", k.mnt, rel);
    char *t = text_of(p);
    assert_string_equal(t, "1.5\n-2\n0.25\n");
    free(t);
    do_umount(k.mnt);
    assert_one_copy(k.path, k.pkg, k.size, pos, !rig, now, n, k.key);
    free(now);
    free(sec);
    inpkg_free(&k);
    free(r.section);
    free(gr2);
}

static void test_rw_inside_after_section_replaced(void **state)
{
    (void)state;
    inside_after_section_replaced(&fx_oodle1_v7, "inside-after-sec.gr2", false, false, false);
    inside_after_section_replaced(&fx_oodle1_v7, "inside-after-sec-bin.gr2", false, true, false);
    inside_after_section_replaced(&fx_bk2_v7, "inside-after-sec.rig", true, false, false);
    inside_after_section_replaced(&fx_bk2_v7, "inside-after-sec-bin.rig", true, true, false);
    inside_after_section_replaced(&fx_oodle1_v7, "sec-after-inside.gr2", false, false, true);
    inside_after_section_replaced(&fx_oodle1_v7, "sec-after-inside-bin.gr2", false, true, true);
    inside_after_section_replaced(&fx_bk2_v7, "sec-after-inside.rig", true, false, true);
    inside_after_section_replaced(&fx_bk2_v7, "sec-after-inside-bin.rig", true, true, true);
    inside_after_section_replaced_in_package(false, "inside-after-sec-gr2.package");
    inside_after_section_replaced_in_package(true, "inside-after-sec-rig.package");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        mount_test(test_rw_off_by_default),
        mount_test(test_rw_modes_and_lock),
        mount_test(test_rw_modes_by_format_rules),
        mount_test(test_rw_modes_every_format),
        mount_test(test_rw_package_stored_size_keeps_flag),
        mount_test(test_rw_value_roundtrip),
        mount_test(test_rw_granny_value_crc),
        mount_test(test_rw_multi_value_lines),
        mount_test(test_rw_geom_vertices),
        mount_test(test_rw_geom_in_package),
        mount_test(test_rw_geom_tail_tables),
        mount_test(test_rw_geom_uv_stitches),
        mount_test(test_rw_granny_table),
        mount_test(test_rw_granny_section_raw),
        mount_test(test_rw_granny_table_in_compressed_section),
        mount_test(test_rw_t2fs_values),
        mount_test(test_rw_t1_bounds),
        mount_test(test_rw_editors),
        mount_test(test_rw_refusals),
        mount_test(test_rw_backup_off),
        mount_test(test_rw_open_handle_after_commit),
        mount_test(test_rw_moved_part_estale),
        mount_test(test_rw_package_resource),
        mount_test(test_outside_reader_against_builder),
        mount_test(test_rw_package_outside_reader),
        mount_test(test_rw_resource_replaced_twice),
        mount_test(test_rw_refused_half_way),
        mount_test(test_rw_granny_section_in_package),
        mount_test(test_rw_large_replacement_outside_memory),
        mount_test(test_rw_large_temporary_outside_memory),
        mount_test(test_rw_large_section_outside_memory),
        mount_test(test_rw_large_section_streamed),
        mount_test(test_rw_big_section_values_within_budget),
        mount_test(test_rw_big_section_value_in_package),
        mount_test(test_rw_section_value_costs_its_bytes),
        mount_test(test_rw_rig_granny_replaced),
        mount_test(test_rw_granny_replaced_and_value),
        mount_test(test_rw_sigkill_during_commits),
        mount_test(test_rw_parallel_readers),
        mount_test(test_rw_generations_freed),
        mount_test(test_rw_disk_full),
        mount_test(test_rw_unmount_failure_reported),
        mount_test(test_rw_unmount_disk_full),
        mount_test(test_rw_write_inside_replaced_resource),
        mount_test(test_rw_resource_replaced_after_writes_inside),
        mount_test(test_rw_two_writes_inside_one_resource),
        mount_test(test_rw_inside_after_section_replaced),
        mount_test(test_no_sanitizer_reports),
    };
    return cmocka_run_group_tests_name("rw mounts", tests, mount_group_setup, mount_group_teardown);
}
