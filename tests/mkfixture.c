/* s3rig-mkfixture KIND OUT [ARGS]: writes a generated sample file (for the demo,
 * benchmarks and manual testing). KIND:
 *   rig                      a wrapped Sims 3 RIG with an uncompressed GR2 inside
 *   gr2-SIG-vN               a raw GR2 (SIG: le32-old le32 le64 be32 be64 be32-old; N: 6, 7)
 *   gr2obj-SIG-vN            a GR2 with type definitions and a 5-bone skeleton
 *   gr2model-SIG             a GR2 with a skeleton, three meshes and a model (SIG: le32
 *                            le64 be32 be64; -alt after SIG: LocalTransform/InverseWorld4x4)
 *   clear-rig-4 | clear-rig-3-ts3 | clear-rig-3-ts4   a clear RIG of that variant
 *   t2fs | t2fs-be           a t2fs file with 3 models, some nodes RNC-compressed
 *   t2fs-big MODELS VERTS MB a large t2fs file: MODELS models, VERTS vertices per mesh,
 *                            plus one raw leaf of MB MiB */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "fixture_crig.h"
#include "fixture_gr2model.h"
#include "fixture_gr2obj.h"
#include "fixture_t2fs.h"

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
        struct fxm_opts o = {.sig = argv[1] + 9, .alt_names = strstr(argv[1], "-alt") != NULL};
        char sig[8];
        snprintf(sig, sizeof sig, "%.4s", argv[1] + 9);
        o.sig = sig;
        data = fxm_build(&o, &size);
    } else if (strncmp(argv[1], "gr2obj-", 7) == 0) {
        char sig[32];
        int version;
        const char *v = strrchr(argv[1], '-');
        if (!v || sscanf(v, "-v%d", &version) != 1 || (size_t)(v - argv[1] - 7) >= sizeof sig) {
            fprintf(stderr, "s3rig-mkfixture: bad kind %s\n", argv[1]);
            return 1;
        }
        snprintf(sig, sizeof sig, "%.*s", (int)(v - argv[1] - 7), argv[1] + 7);
        struct fxg_opts o = {.sig = sig, .version = version, .nbones = 5};
        struct fxg_result r;
        data = fxg_build(&o, &size, &r);
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
    } else if (strncmp(argv[1], "clear-rig-", 10) == 0) {
        int v = strcmp(argv[1], "clear-rig-3-ts3") == 0 ? 1 : strcmp(argv[1], "clear-rig-3-ts4") == 0 ? 2 : 0;
        struct fxc_opts o = fxc_variant(v);
        struct fxc_layout lay;
        data = fxc_build(&o, &size, &lay);
    } else if (strcmp(argv[1], "t2fs") == 0 || strcmp(argv[1], "t2fs-be") == 0) {
        bool be = argv[1][4] == '-';
        struct fxt *root = fxt_sample(1, 3, true, be);
        data = fxt_write(root, be, 0, 0, &size);
        fxt_free(root);
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
