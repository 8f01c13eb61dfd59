/* Granny object trees on real files (../shared/vectors/gr2, read in place) and on a
 * generated texture-like file: every link resolves to a directory, the four signatures
 * of one model give the same tree, arrays of plain elements are tables whose NAME.bin
 * are exact slices, remapped strings show their CRCs. */
#include <dirent.h>
#include <errno.h>
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
#include "fs/core/sbuf.h"
#include "testutil.h"
#include "walk.h"

/* Walks everything, then resolves every link: each must name a directory (the Granny
 * tree links only objects and arrays), never itself, never through a loop. */
static size_t check_all_links(struct s3fs *fs, size_t *nodes)
{
    size_t links;
    char why[300];
    *nodes = walk_all(fs, 1000000);
    assert_false(tree_full(fs->tree));
    if (check_links(fs->tree, true, &links, why, sizeof why))
        fail_msg("%s", why);
    return links;
}

static void expect_link(struct s3fs *fs, const char *path, const char *want)
{
    uint32_t ino;
    if (tree_resolve(fs->tree, path, &ino))
        fail_msg("%s: missing", path);
    assert_int_equal(tree_kind(fs->tree, ino), NODE_LINK);
    const char *target = tree_link_target(fs->tree, ino);
    if (strcmp(target, want) != 0)
        fail_msg("%s -> %s, expected %s", path, target, want);
}

static uint64_t xattr_u64(struct s3fs *fs, const char *path, const char *name)
{
    uint32_t ino;
    assert_int_equal(tree_resolve(fs->tree, path, &ino), 0);
    char v[64] = {0};
    assert_int_equal(tree_getxattr_str(fs->tree, ino, name, v, sizeof v), S3_OK);
    assert_true(v[0] != 0);
    return strtoull(v, NULL, 10);
}

/* ---- the real files ---- */

static struct s3fs *open_vector(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/gr2/%s", dir, name);
    struct s3fs *fs;
    char err[256];
    if (s3fs_open(&fs, path, NULL, err, sizeof err) != S3_OK)
        fail_msg("%s: %s", path, err);
    return fs;
}

static void test_vectors_links(void **state)
{
    (void)state;
    const char *d = vectors_or_skip();
    char path[4096];
    snprintf(path, sizeof path, "%s/gr2", d);
    DIR *dir = opendir(path);
    assert_non_null(dir);
    int files = 0;
    for (struct dirent *e; (e = readdir(dir));) {
        size_t n = strlen(e->d_name);
        if (n < 4 || strcmp(e->d_name + n - 4, ".gr2") != 0)
            continue;
        struct s3fs *fs = open_vector(d, e->d_name);
        size_t nodes, links = check_all_links(fs, &nodes);
        /* the model's links: mesh -> vertex data, topology; material binding -> material;
         * model -> skeleton; mesh binding -> mesh; track group; /granny/skeletons */
        if (links < 7)
            fail_msg("%s: %zu links", e->d_name, links);
        if (nodes > 2000)
            fail_msg("%s: %zu nodes", e->d_name, nodes);
        expect_link(fs, "/granny/root/Meshes/0/PrimaryVertexData", "../../VertexDatas/0");
        expect_link(fs, "/granny/root/Meshes/0/PrimaryTopology", "../../TriTopologies/0");
        expect_link(fs, "/granny/root/Models/0/Skeleton", "../../Skeletons/0");
        expect_link(fs, "/granny/skeletons", "root/Skeletons");
        expect_has(fs, "/info", "gr2_crc: ok");
        expect_has(fs, "/info", "unparsed_bytes: 0 in 0 ranges");
        s3fs_close(fs);
        files++;
    }
    closedir(dir);
    assert_true(files >= 5);
}

/* Every node below /granny/root (and the convenience link) as "path kind content"
 * lines; tables' bytes differ with the byte order, so .bin files give their size. */
static void dump_tree(struct s3fs *fs, uint32_t dir, const char *path, struct sbuf *out)
{
    assert_int_equal(tree_populate(fs->tree, dir), 0);
    for (uint32_t i = 0; i < tree_child_count(fs->tree, dir); i++) {
        uint32_t c = tree_child(fs->tree, dir, i);
        const char *name = tree_name(fs->tree, c);
        int kind = tree_kind(fs->tree, c);
        char *p = NULL;
        assert_true(asprintf(&p, "%s/%s", path, name) > 0);
        if (kind == NODE_LINK) {
            sb_printf(out, "%s -> %s\n", p, tree_link_target(fs->tree, c));
        } else if (kind == NODE_DIR) {
            sb_printf(out, "%s/\n", p);
            dump_tree(fs, c, p, out);
        } else {
            size_t nl = strlen(name);
            if (nl > 4 && strcmp(name + nl - 4, ".bin") == 0) {
                sb_printf(out, "%s %llu bytes\n", p, (unsigned long long)tree_size(fs->tree, c));
            } else {
                uint8_t *buf;
                size_t len;
                assert_int_equal(tree_read_all(fs->tree, c, &buf, &len), 0);
                sb_printf(out, "%s = ", p);
                sb_put(out, buf, len);
                free(buf);
            }
        }
        free(p);
    }
}

static void test_vectors_same_tree(void **state)
{
    (void)state;
    const char *d = vectors_or_skip();
    static const char *const files[] = {"suzanne_le.gr2", "suzanne_be.gr2", "suzanne_le64.gr2", "suzanne_be64.gr2"};
    char *first = NULL;
    size_t first_len = 0;
    for (int i = 0; i < 4; i++) {
        struct s3fs *fs = open_vector(d, files[i]);
        uint32_t root;
        assert_int_equal(tree_resolve(fs->tree, "/granny/root", &root), 0);
        struct sbuf out = {0};
        expect_link(fs, "/granny/skeletons", "root/Skeletons");
        dump_tree(fs, root, "", &out);
        size_t len;
        char *text = sb_take(&out, &len);
        assert_true(len > 10000);
        if (!first) {
            first = text;
            first_len = len;
            s3fs_close(fs);
            continue;
        }
        if (len != first_len || memcmp(text, first, len) != 0) {
            size_t k = 0;
            while (k < len && k < first_len && text[k] == first[k])
                k++;
            fail_msg("%s differs from %s at byte %zu: '%.80s' vs '%.80s'", files[i], files[0], k, text + k,
                     first + k);
        }
        free(text);
        s3fs_close(fs);
    }
    free(first);
}

/* Tables of the real model: the bytes are the file's own, the rows count the elements. */
static void test_vectors_tables(void **state)
{
    (void)state;
    const char *d = vectors_or_skip();
    char path[4096];
    snprintf(path, sizeof path, "%s/gr2/suzanne_le.gr2", d);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static uint8_t file[1 << 20];
    size_t fsize = fread(file, 1, sizeof file, f);
    fclose(f);
    struct s3fs *fs = open_vector(d, "suzanne_le.gr2");
    static const char *const bins[] = {"/granny/root/VertexDatas/0/Vertices.bin",
                                       "/granny/root/TriTopologies/0/Indices.bin",
                                       "/granny/root/TriTopologies/0/Groups.bin"};
    for (int i = 0; i < 3; i++) {
        size_t len;
        char *bin = read_path(fs, bins[i], &len);
        uint64_t off = xattr_u64(fs, bins[i], "user.s3rig.offset");
        assert_int_equal(xattr_u64(fs, bins[i], "user.s3rig.length"), len);
        assert_true(off + len <= fsize);
        assert_memory_equal(bin, file + off, len);
        free(bin);
    }
    size_t len;
    char *csv = read_path(fs, "/granny/root/VertexDatas/0/Vertices.csv", &len);
    size_t lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += csv[i] == '\n';
    /* 32-byte vertices: one header row, then one row per vertex */
    assert_int_equal(lines, 1 + xattr_u64(fs, "/granny/root/VertexDatas/0/Vertices.bin", "user.s3rig.length") / 32);
    assert_true(strncmp(csv, "Position[0],Position[1],Position[2],Normal[0]", 45) == 0);
    free(csv);
    expect_text(fs, "/granny/root/TriTopologies/0/Groups.csv", "MaterialIndex,TriFirst,TriCount\n0,0,968\n");
    s3fs_close(fs);
}

/* ---- the generated texture-like file ---- */

static void check_slice(struct s3fs *fs, const char *path, const uint8_t *want, size_t n)
{
    size_t len;
    char *bin = read_path(fs, path, &len);
    assert_int_equal(len, n);
    assert_memory_equal(bin, want, n);
    free(bin);
}

static void check_big(const char *sig, bool oodle1, uint32_t npixels, uint32_t nverts, uint32_t nbones)
{
    struct fxg_big_opts o = {.sig = sig, .npixels = npixels, .nvertices = nverts, .ntris = nverts / 2,
                             .nbones = nbones, .oodle1 = oodle1};
    struct fxg_big_result r;
    size_t size;
    uint8_t *f = fxg_build_big(&o, &size, &r);
    struct s3fs *fs = open_mem(f, size, NULL, sig);
    size_t nodes, links = check_all_links(fs, &nodes);
    if (nodes >= 5000)
        fail_msg("%s: %zu nodes", sig, nodes);
    assert_true(links >= 4); /* PrimaryVertexData, PrimaryTopology, Skeleton, /granny/skeletons */
    expect_link(fs, "/granny/root/Models/0/Skeleton", "../../Skeletons/0");
    expect_link(fs, "/granny/root/Meshes/0/PrimaryVertexData", "../../VertexDatas/0");
    /* the tables' bytes: exact slices of the expanded section */
    check_slice(fs, "/granny/root/Textures/0/PixelBytes.bin", r.section + r.pixels_at, npixels);
    check_slice(fs, "/granny/root/VertexDatas/0/Vertices.bin", r.section + r.vertices_at,
                (size_t)nverts * r.vertex_size);
    check_slice(fs, "/granny/root/TriTopologies/0/Indices16.bin", r.section + r.indices_at, (size_t)nverts / 2 * 6);
    if (!oodle1) { /* and of the mounted file, where the offset xattr says */
        uint64_t off = xattr_u64(fs, "/granny/root/Textures/0/PixelBytes.bin", "user.s3rig.offset");
        assert_int_equal(off, r.layout.data_offset[0] + r.pixels_at);
    }
    uint32_t ino;
    assert_int_equal(tree_resolve(fs->tree, "/granny/root/VertexDatas/0/Vertices.bin", &ino), 0);
    char ty[128] = {0};
    assert_int_equal(tree_getxattr_str(fs->tree, ino, "user.s3rig.type", ty, sizeof ty), S3_OK);
    char want[64];
    snprintf(want, sizeof want, "gr2.table[%u]x40 type=0_0x", nverts);
    assert_true(strncmp(ty, want, strlen(want)) == 0);
    /* the CSV: a header row, then rows computed from the builder's formula */
    size_t len;
    char *csv = read_path(fs, "/granny/root/VertexDatas/0/Vertices.csv", &len);
    const char *hdr = "Position[0],Position[1],Position[2],Normal[0],Normal[1],Normal[2],TextureCoordinates0[0],"
                      "TextureCoordinates0[1],BoneIndices[0],BoneIndices[1],BoneIndices[2],BoneIndices[3],"
                      "BoneWeights[0],BoneWeights[1],BoneWeights[2],BoneWeights[3]\n";
    assert_true(strncmp(csv, hdr, strlen(hdr)) == 0);
    size_t lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += csv[i] == '\n';
    assert_int_equal(lines, 1 + nverts);
    uint32_t last = nverts - 1;
    struct sbuf row = {0};
    sb_printf(&row, "\n");
    for (int k = 0; k < 8; k++)
        sb_printf(&row, "%.9g,", (double)((float)last * 0.25f + (float)k));
    sb_printf(&row, "%u,%u,%u,%u,255,0,0,0\n", last % nbones, (last + 1) % nbones, (last + 2) % nbones,
              (last + 3) % nbones);
    size_t rl;
    char *want_row = sb_take(&row, &rl);
    assert_true(len > rl);
    if (memcmp(csv + len - rl, want_row, rl) != 0)
        fail_msg("last row '%s', expected '%s'", csv + len - rl, want_row + 1);
    free(want_row);
    /* reading the CSV at odd offsets gives the same bytes as reading it whole */
    assert_int_equal(tree_resolve(fs->tree, "/granny/root/VertexDatas/0/Vertices.csv", &ino), 0);
    assert_int_equal(tree_size(fs->tree, ino), len);
    for (uint64_t off = 0; off < len; off += len / 13 + 1) {
        char piece[777];
        ssize_t k = (ssize_t)tree_read_ok(fs->tree, ino, off, piece, sizeof piece);
        size_t want_n = len - off < sizeof piece ? len - off : sizeof piece;
        assert_int_equal(k, (ssize_t)want_n);
        assert_memory_equal(piece, csv + off, want_n);
    }
    free(csv);
    /* a scalar array: one column */
    csv = read_path(fs, "/granny/root/TriTopologies/0/Indices16.csv", &len);
    assert_true(strncmp(csv, "Int16\n0\n1\n2\n", 12) == 0);
    free(csv);
    /* bones hold names: still one directory each */
    snprintf(want, sizeof want, "/granny/root/Skeletons/0/Bones/%u/Name", nbones - 1);
    char name[32];
    snprintf(name, sizeof name, "bone_%03u\n", nbones - 1);
    expect_text(fs, want, name);
    assert_false(path_exists(fs, "/granny/root/Animations")); /* empty: absent */
    s3fs_close(fs);
    free(f);
    free(r.section);
}

static void test_big_tables(void **state)
{
    (void)state;
    check_big("le32", false, 512 * 1024, 10000, 200);
    check_big("be64", false, 512 * 1024, 10000, 200);
    check_big("le64", true, 4096, 300, 20); /* tables read from an expanded Oodle1 section */
}

/* /granny/skeletons only where the root's Skeletons array holds something. */
static void test_no_dangling_skeletons(void **state)
{
    (void)state;
    struct fxg_big_opts o = {.sig = "le32", .npixels = 64, .nvertices = 4, .ntris = 1, .nbones = 3,
                             .no_skeleton = true};
    struct fxg_big_result r;
    size_t size;
    uint8_t *f = fxg_build_big(&o, &size, &r);
    struct s3fs *fs = open_mem(f, size, NULL, NULL);
    size_t nodes;
    check_all_links(fs, &nodes);
    assert_true(path_exists(fs, "/granny/root"));
    assert_false(path_exists(fs, "/granny/skeletons"));
    assert_false(path_exists(fs, "/granny/root/Skeletons"));
    s3fs_close(fs);
    free(f);
    free(r.section);
}

static void test_remapped_strings(void **state)
{
    (void)state;
    for (int s = 0; s < 3; s++) {
        const char *sig = s == 0 ? "le32" : s == 1 ? "be32" : "be64";
        struct fxg_big_opts o = {.sig = sig, .npixels = 256, .nvertices = 10, .ntris = 3, .nbones = 5,
                                 .string_table_crc = 0x452bfb41};
        struct fxg_big_result r;
        size_t size;
        uint8_t *f = fxg_build_big(&o, &size, &r);
        struct s3fs *fs = open_mem(f, size, NULL, NULL);
        char want[64];
        snprintf(want, sizeof want, "crc:0x%08x\n", r.texture_name_crc);
        expect_text(fs, "/granny/root/Textures/0/FromFileName", want);
        snprintf(want, sizeof want, "crc:0x%08x\n", r.bone0_name_crc);
        expect_text(fs, "/granny/root/Skeletons/0/Bones/0/Name", want);
        assert_int_equal(r.bone0_name_crc, 0x5EED0002u); /* the third string written: texture, mesh, bone 0 */
        /* member names stay what the file gives */
        assert_true(path_exists(fs, "/granny/root/Textures/0/Width"));
        size_t nodes;
        check_all_links(fs, &nodes);
        size_t len;
        char *info = read_path(fs, "/info", &len);
        const char *w = strstr(info, "strings are remapped to an external string table (string_table_crc 0x452bfb41)");
        assert_non_null(w);
        assert_null(strstr(w + 1, "strings are remapped")); /* once */
        free(info);
        s3fs_close(fs);
        free(f);
        free(r.section);
    }
}

/* The big Granny file of o (its bytes and size into *granny, *gsize) and a wrapped RIG
 * around it, the sample rig's chains and lists (returned, its size into *size). */
static uint8_t *big_in_rig(const struct fxg_big_opts *o, struct fxg_big_result *r, uint8_t **granny, size_t *gsize,
                           size_t *size)
{
    *granny = fxg_build_big(o, gsize, r);
    struct fx_rig_opts ro = fx_sample_rig_opts(*granny, *gsize);
    struct fx_rig_layout rl;
    return fx_build_rig(&ro, size, &rl);
}

/* A header string_table_crc with ordinary strings (every slot a pointer with a fixup, as
 * real files have): names are their text, and /info has no remapping warning even with
 * everything parsed; a wrapped RIG around it names its bones. Mixed (the texture and mesh
 * names text, the rest CRCs): each member as it is, and the warning once. */
static void test_string_table_crc_with_text(void **state)
{
    (void)state;
    static const char *const sigs[] = {"le32", "be64"};
    for (int s = 0; s < 2; s++) {
        for (int mixed = 0; mixed <= 1; mixed++) {
            struct fxg_big_opts o = {.sig = sigs[s], .npixels = 64, .nvertices = 4, .ntris = 1, .nbones = 16,
                                     .string_table_crc = 0x452bfb41, .crc_from = mixed ? 2 : UINT32_MAX};
            struct fxg_big_result r;
            size_t gsize, size;
            uint8_t *g, *f = big_in_rig(&o, &r, &g, &gsize, &size);
            for (int rig = 0; rig <= 1; rig++) {
                struct s3fs *fs = open_mem(rig ? f : g, rig ? size : gsize, NULL, NULL);
                expect_text(fs, "/granny/header/string_table_crc", "0x452bfb41\n");
                expect_text(fs, "/granny/root/Textures/0/FromFileName", "C:\\fixture\\skin.tga\n");
                expect_text(fs, "/granny/root/Meshes/0/Name", "Body\n");
                expect_text(fs, "/granny/root/Skeletons/0/Bones/0/Name", mixed ? "crc:0x5eed0002\n" : "bone_000\n");
                if (rig) {
                    size_t len;
                    char *names = read_path(fs, "/compress_nodes.names", &len);
                    assert_true(len > 0);
                    assert_int_equal(names[0] == '?', mixed);
                    free(names);
                }
                assert_int_equal(tree_populate_all(fs->tree), 0);
                size_t len;
                char *info = read_path(fs, "/info", &len);
                const char *w = strstr(info, "strings are remapped to an external string table (string_table_crc "
                                             "0x452bfb41)");
                if (!mixed && (w || strstr(info, "names unavailable")))
                    fail_msg("%s%s: a warning for ordinary strings:\n%s", sigs[s], rig ? " in a RIG" : "", info);
                if (mixed && (!w || strstr(w + 1, "strings are remapped")))
                    fail_msg("%s%s: the remapping warning not there once:\n%s", sigs[s], rig ? " in a RIG" : "", info);
                free(info);
                s3fs_close(fs);
            }
            free(f);
            free(g);
            free(r.section);
        }
    }
}

/* A wrapped RIG around a remapped-strings Granny file: the .bone links still resolve
 * (indices need no names), the .names files show "?", and /info says why. */
static void test_rig_remapped_names(void **state)
{
    (void)state;
    struct fxg_big_opts o = {.sig = "le32", .npixels = 64, .nvertices = 4, .ntris = 1, .nbones = 16,
                             .string_table_crc = 0x452bfb41};
    struct fxg_big_result r;
    size_t gsize, size;
    uint8_t *g, *f = big_in_rig(&o, &r, &g, &gsize, &size);
    struct s3fs *fs = open_mem(f, size, NULL, NULL);
    size_t nodes;
    assert_true(check_all_links(fs, &nodes) > 10);
    size_t len;
    char *names = read_path(fs, "/compress_nodes.names", &len);
    assert_true(len > 0 && names[0] == '?');
    free(names);
    expect_has(fs, "/info", "bone names unavailable: they are CRCs into an external string table "
                            "(string_table_crc 0x452bfb41)");
    char want[32];
    snprintf(want, sizeof want, "crc:0x%08x\n", r.bone0_name_crc);
    expect_text(fs, "/granny/root/Skeletons/0/Bones/0/Name", want);
    s3fs_close(fs);
    free(f);
    free(g);
    free(r.section);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vectors_links),      cmocka_unit_test(test_vectors_same_tree),
        cmocka_unit_test(test_vectors_tables),     cmocka_unit_test(test_big_tables),
        cmocka_unit_test(test_no_dangling_skeletons), cmocka_unit_test(test_remapped_strings),
        cmocka_unit_test(test_rig_remapped_names),
        cmocka_unit_test(test_string_table_crc_with_text),
    };
    return cmocka_run_group_tests_name("gr2tables", tests, NULL, NULL);
}
