#include "fixture_kinds.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bitknit2enc.h"
#include "fixture.h"
#include "fixture_dbpf.h"
#include "fixture_geom.h"
#include "fixture_gr2anim.h"
#include "fixture_gr2model.h"
#include "fixture_gr2obj.h"
#include "fixture_rig_clear.h"
#include "fixture_t2fs.h"
#include "oodle0enc.h"
#include "refpack_pack.h"

/* A kind PREFIX + SIG + "-vN" (gr2-le32-v7, bk2obj-be64-v6): SIG into sig and N into
 * *version; false (with a message) when the kind is not of that shape. */
/* A whole number written in decimal digits alone (no sign, nothing after), into *out. */
static bool whole_number(const char *s, unsigned long *out)
{
    if (!s || *s < '0' || *s > '9')
        return false;
    char *end;
    errno = 0;
    *out = strtoul(s, &end, 10);
    return *end == 0 && errno == 0;
}

static bool sig_and_version(const char *kind, size_t prefix, char *sig, size_t siglen, int *version)
{
    const char *v = strrchr(kind, '-');
    if (!v || sscanf(v, "-v%d", version) != 1 || (size_t)(v - kind) < prefix || (size_t)(v - kind) - prefix >= siglen) {
        fprintf(stderr, "s3rig-mkfixture: bad kind %s\n", kind);
        return false;
    }
    snprintf(sig, siglen, "%.*s", (int)((size_t)(v - kind) - prefix), kind + prefix);
    return true;
}

/* The package fixture's sample `which` (fxp_sample) as a file of *size bytes. */
static uint8_t *package_sample(int which, size_t *size)
{
    struct fxp_sample s;
    fxp_sample(&s, which);
    uint8_t *data = s.file;
    *size = s.size;
    s.file = NULL;
    fxp_sample_free(&s);
    return data;
}

uint8_t *fx_kind(const char *kind, int nargs, char *const *args, size_t *out_size)
{
    size_t size = 0;
    uint8_t *data = NULL;
    struct fx_gr2_layout glay;
    struct fx_rig_layout rlay;
    if (strcmp(kind, "geom-big") == 0) {
        if (nargs != 1 || atoi(args[0]) < 4) {
            fprintf(stderr, "s3rig-mkfixture: geom-big needs VERTS (4 or more)\n");
            return NULL;
        }
        uint32_t n = (uint32_t)atoi(args[0]), cols = 64 < n / 2 ? 64 : n / 2;
        struct fxgeom_opts o = {.version = 14, .grid_cols = cols, .grid_rows = n / cols};
        struct fxgeom_layout lay;
        data = fxgeom_build(&o, &size, &lay);
    } else if (strcmp(kind, "gr2-big") == 0) {
        if (nargs != 3) {
            fprintf(stderr, "s3rig-mkfixture: gr2-big needs PIXELS VERTS BONES\n");
            return NULL;
        }
        struct fxg_big_opts o = {.sig = "le32", .npixels = (uint32_t)atoi(args[0]),
                                 .nvertices = (uint32_t)atoi(args[1]), .nbones = (uint32_t)atoi(args[2])};
        o.ntris = o.nvertices;
        struct fxg_big_result r;
        data = fxg_build_big(&o, &size, &r);
        free(r.section);
    } else if (strcmp(kind, "gr2anim-long") == 0) {
        if (nargs != 3) {
            fprintf(stderr, "s3rig-mkfixture: gr2anim-long needs TRACKS SECONDS KPS\n");
            return NULL;
        }
        struct fxa_long_opts o = {.sig = "le32", .tracks = (uint32_t)atoi(args[0]), .seconds = (float)atof(args[1]),
                                  .knots_per_second = (uint32_t)atoi(args[2])};
        data = fxa_build_long(&o, &size);
    } else if (strcmp(kind, "package-one") == 0) {
        if (nargs != 1) {
            fprintf(stderr, "s3rig-mkfixture: package-one needs MB\n");
            return NULL;
        }
        size_t n = (size_t)atoll(args[0]) << 20;
        uint8_t *bytes = malloc(n ? n : 1);
        if (!bytes)
            return NULL;
        for (size_t i = 0; i < n; i++) /* compressible, not trivially: zlib has work to do */
            bytes[i] = (i & 3) ? (uint8_t)((i * 2654435761u) >> 13) : (uint8_t)"resource"[(i >> 2) & 7];
        struct fxp_res r = {0x00B2D882, 0, 1, bytes, n, FXP_ZLIB};
        struct fxp_opts o = {.game = 4};
        struct fxp_layout lay;
        data = fxp_build(&o, &r, 1, &size, &lay);
        free(bytes);
    } else if (strcmp(kind, "gr2-sections") == 0) {
        /* each section holds its part's head (FXG_SECTION_MIN bytes) and its size fits a
         * u32: MB from 1 to FXG_SECTION_MAX_MB, whole numbers only */
        unsigned long n = 0, mb = 0;
        if (nargs != 2 || !whole_number(args[0], &n) || n < 2 || n > FX_MAX_SECTIONS || !whole_number(args[1], &mb) ||
            mb < 1 || mb > FXG_SECTION_MAX_MB) {
            fprintf(stderr, "s3rig-mkfixture: gr2-sections needs N (2 to %d sections) MB (1 to %d MiB each)\n",
                    FX_MAX_SECTIONS, FXG_SECTION_MAX_MB);
            return NULL;
        }
        struct fxg_sections_opts o = {(uint32_t)n, (uint32_t)mb << 20};
        struct fxg_sections_result r;
        data = fxg_build_sections(&o, &size, &r);
        fxg_sections_free(&r);
    } else if (strcmp(kind, "gr2-members") == 0) {
        if (nargs != 2) {
            fprintf(stderr, "s3rig-mkfixture: gr2-members needs N same|distinct\n");
            return NULL;
        }
        data = fxg_build_members((uint32_t)atoi(args[0]), strcmp(args[1], "same") == 0, &size, &glay);
    } else if (strcmp(kind, "gr2-repeated-string") == 0) {
        /* issue 32: W slots over one L-byte string, a W×L value file */
        data = nargs == 2 ? fxg_build_repeated_string((uint32_t)atoi(args[0]), (uint32_t)atoi(args[1]), 0, &size)
                          : NULL;
        if (!data) {
            fprintf(stderr, "s3rig-mkfixture: gr2-repeated-string needs SLOTS (1 to %d) LEN\n",
                    FXG_MAX_STRING_SLOTS);
            return NULL;
        }
    } else if (strcmp(kind, "package-repeated-names") == 0) {
        /* issue 32: a name map repeating one instance ENTRIES resources have */
        if (nargs != 2) {
            fprintf(stderr, "s3rig-mkfixture: package-repeated-names needs ENTRIES NAMES\n");
            return NULL;
        }
        data = fxp_build_repeated_names((uint32_t)atoi(args[0]), (uint32_t)atoi(args[1]), &size);
    } else if (strcmp(kind, "t2fs-big-mesh") == 0) {
        /* issue 32: one Turok 2 model whose mesh has VERTS vertices (vertices.txt) */
        if (nargs != 1 || atoi(args[0]) < 1) {
            fprintf(stderr, "s3rig-mkfixture: t2fs-big-mesh needs VERTS (1 or more)\n");
            return NULL;
        }
        struct fxt *root = fxt_branch(1, fxt_branch(1, fxt_model_ex(31, 1, 1, false, (uint32_t)atoi(args[0]))));
        data = fxt_write(root, false, 0, 0, &size);
        fxt_free(root);
    } else if (nargs) {
        fprintf(stderr, "s3rig-mkfixture: %s takes no arguments\n", kind);
        return NULL;
    } else if (strcmp(kind, "rig") == 0) {
        data = fx_sample_rig(&size, &rlay, &glay, NULL);
    } else if (strncmp(kind, "gr2model-", 9) == 0) {
        struct fxm_opts o = {.sig = kind + 9, .alt_names = strstr(kind, "-alt") != NULL,
                             .rough_orientations = strstr(kind, "-rough") != NULL,
                             .shear_rest = strstr(kind, "-shear") != NULL};
        char sig[8];
        snprintf(sig, sizeof sig, "%.4s", kind + 9);
        o.sig = sig;
        data = fxm_build(&o, &size);
    } else if (strcmp(kind, "gr2anim-demo") == 0) {
        data = fxa_build_demo(&size);
    } else if (strncmp(kind, "gr2anim-", 8) == 0) {
        char sig[8];
        snprintf(sig, sizeof sig, "%.4s", kind + 8);
        struct fxa_opts o = {.sig = sig, .bitknit2 = strstr(kind, "-bk2") != NULL,
                             .remapped = strstr(kind, "-crc") != NULL, .old_layout = strstr(kind, "-old") != NULL,
                             .shear = strstr(kind, "-shear") != NULL, .no_skeleton = strstr(kind, "-noskel") != NULL,
                             .loose_names = strstr(kind, "-loose") != NULL, .wild = strstr(kind, "-wild") != NULL};
        if (strstr(kind, "-brief")) { /* walk lasts 0.25 s at 8 a second: 3 samples (fault sweeps) */
            o.set_duration = true;
            o.duration = 0.25f;
            o.timestep = 0.125f;
        }
        struct fxa_result r;
        data = fxa_build(&o, &size, &r);
    } else if (strncmp(kind, "gr2obj-", 7) == 0 || strncmp(kind, "bk2obj-", 7) == 0) {
        char sig[32];
        int version;
        if (!sig_and_version(kind, 7, sig, sizeof sig, &version))
            return NULL;
        bool bk2 = kind[0] == 'b'; /* sections and tables BitKnit2-compressed */
        struct fxg_opts o = {.sig = sig, .version = version, .nbones = 5, .bitknit2_objects = bk2,
                             .bitknit2_section = bk2, .nmarshals = bk2 ? 2 : 0};
        struct fxg_result r;
        data = fxg_build(&o, &size, &r);
        free(r.section);
    } else if (strcmp(kind, "gr2-oodle0") == 0) {
        struct fxg_opts o = {.sig = "le32-old", .version = 6, .nbones = 5, .oodle0_objects = true};
        struct fxg_result r;
        data = fxg_build(&o, &size, &r);
        free(r.section);
    } else if (strcmp(kind, "gr2-remapped") == 0) {
        struct fxg_big_opts o = {.sig = "le32", .npixels = 4096, .nvertices = 100, .ntris = 50, .nbones = 20,
                                 .string_table_crc = 0x452bfb41};
        struct fxg_big_result r;
        data = fxg_build_big(&o, &size, &r);
        free(r.section);
    } else if (strncmp(kind, "gr2-", 4) == 0) {
        char sig[32];
        int version;
        if (!sig_and_version(kind, 4, sig, sizeof sig, &version))
            return NULL;
        data = fx_sample_gr2(sig, version, &size, &glay);
    } else if (strncmp(kind, "bitknit2-", 9) == 0) {
        /* a fuzz seed: 3 bytes of output size, then a BitKnit2 stream (variant 0 text,
         * 1 with a stored quantum, 2 three quanta with spills, 3 literals only) */
        int v = atoi(kind + 9);
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
    } else if (strncmp(kind, "rig-clear-", 10) == 0) {
        int v = strcmp(kind, "rig-clear-3-ts3") == 0 ? 1 : strcmp(kind, "rig-clear-3-ts4") == 0 ? 2 : 0;
        struct fxc_opts o = fxc_variant(v);
        struct fxc_layout lay;
        data = fxc_build(&o, &size, &lay);
    } else if (strcmp(kind, "t2fs") == 0 || strcmp(kind, "t2fs-be") == 0) {
        bool be = kind[4] == '-';
        struct fxt *root = fxt_sample(1, 3, true, be);
        data = fxt_write(root, be, 0, 0, &size);
        fxt_free(root);
    } else if (strcmp(kind, "oodle0") == 0 || strcmp(kind, "oodle0-be") == 0) {
        bool be = kind[6] == '-';
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
    } else if (strcmp(kind, "t2fs-turok1") == 0 || strcmp(kind, "t2fs-turok1-be") == 0) {
        bool be = kind[11] == '-';
        struct fxt *root = fxt_t1_sample(be);
        data = fxt_write(root, be, 0, 0, &size);
        fxt_free(root);
    } else if (strcmp(kind, "refpack") == 0) {
        uint8_t *rig = fx_sample_rig(&size, &rlay, &glay, NULL);
        data = rp_pack(rig, size, NULL, &size, NULL);
        free(rig);
    } else if (strcmp(kind, "geom-figure") == 0) { /* for pictures: skinned along a bone chain */
        struct fxgeom_opts o = {.version = 14, .grid_cols = 33, .grid_rows = 48, .figure = true};
        struct fxgeom_layout lay;
        data = fxgeom_build(&o, &size, &lay);
    } else if (strcmp(kind, "geom-traps") == 0) { /* every trap of real files at once */
        struct fxgeom_opts o = {.version = 15, .zero_normal = true, .missing_hash = true, .bad_weight_sum = true,
                                .index_out_of_range = true};
        struct fxgeom_layout lay;
        data = fxgeom_build(&o, &size, &lay);
    } else if (strncmp(kind, "geom-v", 6) == 0) {
        struct fxgeom_opts o = {.version = (uint32_t)atoi(kind + 6)};
        struct fxgeom_layout lay;
        data = fxgeom_build(&o, &size, &lay);
    } else if (strncmp(kind, "package-s", 9) == 0) {
        data = package_sample(strcmp(kind, "package-s3") == 0 ? 3 : strcmp(kind, "package-s4") == 0 ? 4 : 5, &size);
    } else if (strcmp(kind, "package-geom") == 0) {
        data = package_sample(6, &size);
    } else {
        fprintf(stderr, "s3rig-mkfixture: unknown kind %s\n", kind);
        return NULL;
    }
    *out_size = size;
    return data;}
