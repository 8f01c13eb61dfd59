/* s3rig-mkfixture KIND OUT [ARGS]: writes a generated sample file (for the demo,
 * benchmarks and manual testing). KIND:
 *   rig                      a wrapped Sims 3 RIG with an uncompressed GR2 inside
 *   gr2-SIG-vN               a raw GR2 (SIG: le32-old le32 le64 be32 be64 be32-old; N: 6, 7)
 *   gr2obj-SIG-vN            a GR2 with type definitions and a 5-bone skeleton
 *   gr2-big PIXELS VERTS BONES   a texture-like GR2 (le32): a PIXELS-byte pixel array, a
 *                            VERTS-vertex mesh, a BONES-bone skeleton (tables; bench.sh)
 *   gr2-remapped             a small texture-like GR2 whose strings are remapped CRCs
 *   bk2obj-SIG-vN            the same with its sections and tables BitKnit2-compressed
 *   bitknit2-V               a fuzz seed: 3 bytes of output size, a BitKnit2 stream (V 0-3)
 *   gr2model-SIG             a GR2 with a skeleton, three meshes and a model (SIG: le32
 *                            le64 be32 be64; -alt after SIG: LocalTransform/InverseWorld4x4;
 *                            -rough: orientations off unit as real files store them)
 *   rig-clear-4 | rig-clear-3-ts3 | rig-clear-3-ts4   a clear RIG of that variant
 *   t2fs | t2fs-be           a t2fs file with 3 models, some nodes RNC-compressed
 *   t2fs-turok1 | t2fs-turok1-be   a Turok 1 file: 2 graphic objects, sections of both
 *                            stream layouts and broken streams (fxt_t1_sample)
 *   t2fs-big MODELS VERTS MB a large t2fs file: MODELS models, VERTS vertices per mesh,
 *                            plus one raw leaf of MB MiB
 *   gr2-oodle0               a GR2 (le32-old, v6) whose object section is Oodle0-compressed
 *   oodle0 | oodle0-be       an Oodle0 section (a GR2 object section packed by the test encoder,
 *                            three stages) after the oodle0 fuzz target's 8-byte prefix
 *   package-s3 | package-s4 | package-s4-rigs   the sample packages of the tests
 *   package-big N [3|4]      a package of N resources (RefPack, or zlib with 4)
 *   refpack                  the sample rig packed by the test-only RefPack packer */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bitknit2enc.h"
#include "fixture.h"
#include "fixture_rig_clear.h"
#include "fixture_dbpf.h"
#include "fixture_gr2model.h"
#include "fixture_gr2obj.h"
#include "fixture_t2fs.h"
#include "oodle0enc.h"
#include "refpack_pack.h"

int main(int argc, char **argv)
{
    if (argc == 6 && strcmp(argv[1], "t2fs-big") == 0) {
        if (fxt_write_big(argv[2], (uint32_t)atoi(argv[3]), (uint32_t)atoi(argv[4]),
                          (uint64_t)atoll(argv[5]) << 20, false)) {
            perror(argv[2]);
            return 1;
        }
        return 0;
    }
    if (argc == 6 && strcmp(argv[1], "gr2-big") == 0) {
        struct fxg_big_opts o = {.sig = "le32", .npixels = (uint32_t)atoi(argv[3]),
                                 .nvertices = (uint32_t)atoi(argv[4]), .nbones = (uint32_t)atoi(argv[5])};
        o.ntris = o.nvertices;
        struct fxg_big_result r;
        size_t size;
        uint8_t *data = fxg_build_big(&o, &size, &r);
        int rc = fx_write_file(argv[2], data, size);
        free(data);
        free(r.section);
        if (rc)
            perror(argv[2]);
        return rc ? 1 : 0;
    }
    if ((argc == 4 || argc == 5) && strcmp(argv[1], "package-big") == 0) {
        if (fxp_write_big(argv[2], (uint32_t)atoi(argv[3]), argc == 5 ? atoi(argv[4]) : 3)) {
            perror(argv[2]);
            return 1;
        }
        return 0;
    }
    if (argc != 3) {
        fprintf(stderr, "usage: s3rig-mkfixture KIND OUT [ARGS]\n");
        return 1;
    }
    size_t size = 0;
    uint8_t *data = NULL;
    struct fx_gr2_layout glay;
    struct fx_rig_layout rlay;
    if (strcmp(argv[1], "rig") == 0) {
        data = fx_sample_rig(&size, &rlay, &glay, NULL);
    } else if (strncmp(argv[1], "gr2model-", 9) == 0) {
        struct fxm_opts o = {.sig = argv[1] + 9, .alt_names = strstr(argv[1], "-alt") != NULL,
                             .rough_orientations = strstr(argv[1], "-rough") != NULL};
        char sig[8];
        snprintf(sig, sizeof sig, "%.4s", argv[1] + 9);
        o.sig = sig;
        data = fxm_build(&o, &size);
    } else if (strncmp(argv[1], "gr2obj-", 7) == 0 || strncmp(argv[1], "bk2obj-", 7) == 0) {
        char sig[32];
        int version;
        const char *v = strrchr(argv[1], '-');
        if (!v || sscanf(v, "-v%d", &version) != 1 || (size_t)(v - argv[1] - 7) >= sizeof sig) {
            fprintf(stderr, "s3rig-mkfixture: bad kind %s\n", argv[1]);
            return 1;
        }
        snprintf(sig, sizeof sig, "%.*s", (int)(v - argv[1] - 7), argv[1] + 7);
        bool bk2 = argv[1][0] == 'b'; /* sections and tables BitKnit2-compressed */
        struct fxg_opts o = {.sig = sig, .version = version, .nbones = 5, .bitknit2_objects = bk2,
                             .bitknit2_section = bk2, .nmarshals = bk2 ? 2 : 0};
        struct fxg_result r;
        data = fxg_build(&o, &size, &r);
        free(r.section);
    } else if (strcmp(argv[1], "gr2-oodle0") == 0) {
        struct fxg_opts o = {.sig = "le32-old", .version = 6, .nbones = 5, .oodle0_objects = true};
        struct fxg_result r;
        data = fxg_build(&o, &size, &r);
        free(r.section);
    } else if (strcmp(argv[1], "gr2-remapped") == 0) {
        struct fxg_big_opts o = {.sig = "le32", .npixels = 4096, .nvertices = 100, .ntris = 50, .nbones = 20,
                                 .string_table_crc = 0x452bfb41};
        struct fxg_big_result r;
        data = fxg_build_big(&o, &size, &r);
        free(r.section);
    } else if (strncmp(argv[1], "gr2-", 4) == 0) {
        char sig[32];
        int version;
        const char *v = strrchr(argv[1], '-');
        if (!v || sscanf(v, "-v%d", &version) != 1 || (size_t)(v - argv[1] - 4) >= sizeof sig) {
            fprintf(stderr, "s3rig-mkfixture: bad kind %s\n", argv[1]);
            return 1;
        }
        snprintf(sig, sizeof sig, "%.*s", (int)(v - argv[1] - 4), argv[1] + 4);
        data = fx_sample_gr2(sig, version, &size, &glay);
    } else if (strncmp(argv[1], "bitknit2-", 9) == 0) {
        /* a fuzz seed: 3 bytes of output size, then a BitKnit2 stream (variant 0 text,
         * 1 with a stored quantum, 2 three quanta with spills, 3 literals only) */
        int v = atoi(argv[1] + 9);
        size_t n = v == 2 ? 3 * 65536 + 999 : v == 1 ? 70000 : 5000;
        uint8_t *raw = malloc(n);
        for (size_t k = 0; k < n; k++)
            raw[k] = v == 2 ? (uint8_t)(k % 9000 < 100 ? k * 13 : k / 9000)
                            : (uint8_t)("a bit knit, a bit more "[k % 23] + (k % 97 == 0));
        struct bk2enc_opts o = {.stored_mask = v == 1 ? 2 : 0, .literals_only = v == 3};
        size_t len;
        uint8_t *z = bk2enc_encode(raw, n, &o, &len, NULL);
        data = malloc(len + 3);
        data[0] = (uint8_t)n;
        data[1] = (uint8_t)(n >> 8);
        data[2] = (uint8_t)(n >> 16);
        memcpy(data + 3, z, len);
        size = len + 3;
        free(z);
        free(raw);
    } else if (strncmp(argv[1], "rig-clear-", 10) == 0) {
        int v = strcmp(argv[1], "rig-clear-3-ts3") == 0 ? 1 : strcmp(argv[1], "rig-clear-3-ts4") == 0 ? 2 : 0;
        struct fxc_opts o = fxc_variant(v);
        struct fxc_layout lay;
        data = fxc_build(&o, &size, &lay);
    } else if (strcmp(argv[1], "t2fs") == 0 || strcmp(argv[1], "t2fs-be") == 0) {
        bool be = argv[1][4] == '-';
        struct fxt *root = fxt_sample(1, 3, true, be);
        data = fxt_write(root, be, 0, 0, &size);
        fxt_free(root);
    } else if (strcmp(argv[1], "oodle0") == 0 || strcmp(argv[1], "oodle0-be") == 0) {
        bool be = argv[1][6] == '-';
        struct fxg_opts o = {.sig = be ? "be32" : "le32", .version = 7, .nbones = 5};
        struct fxg_result r;
        free(fxg_build(&o, &size, &r));
        uint32_t n = r.section_size, s0 = n / 2, s1 = n / 4 * 3;
        struct o0e_opts eo = {.big_endian = be, .u_extra = 1};
        size_t plen;
        uint8_t *packed = o0e_encode(r.section, n, s0, s1, &eo, &plen, NULL);
        free(r.section);
        size = 8 + plen;
        data = malloc(size);
        uint32_t part[3] = {s0, s1 - s0, n - s1};
        for (int i = 0; i < 3; i++) {
            data[2 * i] = (uint8_t)part[i];
            data[2 * i + 1] = (uint8_t)(part[i] >> 8);
        }
        data[6] = be, data[7] = 0;
        memcpy(data + 8, packed, plen);
        free(packed);
    } else if (strcmp(argv[1], "t2fs-turok1") == 0 || strcmp(argv[1], "t2fs-turok1-be") == 0) {
        bool be = argv[1][11] == '-';
        struct fxt *root = fxt_t1_sample(be);
        data = fxt_write(root, be, 0, 0, &size);
        fxt_free(root);
    } else if (strcmp(argv[1], "refpack") == 0) {
        uint8_t *rig = fx_sample_rig(&size, &rlay, &glay, NULL);
        data = rp_pack(rig, size, NULL, &size, NULL);
        free(rig);
    } else if (strncmp(argv[1], "package-s", 9) == 0) {
        struct fxp_sample s;
        fxp_sample(&s, strcmp(argv[1], "package-s3") == 0 ? 3 : strcmp(argv[1], "package-s4") == 0 ? 4 : 5);
        data = s.file;
        size = s.size;
        s.file = NULL;
        fxp_sample_free(&s);
    } else {
        fprintf(stderr, "s3rig-mkfixture: unknown kind %s\n", argv[1]);
        return 1;
    }
    int rc = fx_write_file(argv[2], data, size);
    free(data);
    if (rc) {
        perror(argv[2]);
        return 1;
    }
    return 0;
}
