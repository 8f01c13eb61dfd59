/* bench_geom GEOM RIG [RUNS]: how long a GEOM takes to be bound to a rig and exported,
 * in-process, best of RUNS (default 30), in milliseconds (scripts/bench.sh geom; not a test):
 *   core     geom_parse + geom_model (binding, traps) + export_model_glb on bytes in memory
 *   open     s3fs_open with -o rig=RIG: the rig file opened and its skeleton read, the GEOM
 *            parsed, bound and its traps counted (what a mount does before serving)
 *   listing  the first listing of the root: /mesh.glb and /mesh.obj built to know their
 *            sizes (export_add), the OBJ text (%.9g per number) being most of it
 *   read     /mesh.glb read whole afterwards (from the cache) */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "fs/export/export.h"
#include "fs/open/open.h"
#include "parse/sims/geom.h"
#include "parse/sims/geom_model.h"

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static uint8_t *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    *size = 0;
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc(n > 0 ? (size_t)n : 1);
    *size = b && n > 0 && fread(b, 1, (size_t)n, f) == (size_t)n ? (size_t)n : 0;
    fclose(f);
    return b;
}

/* The rig's skeleton, through the tree as -o rig= gets it. */
static const struct rig_entry *rig_of(const char *path, struct s3fs **fs)
{
    char err[512];
    if (s3fs_open(fs, path, NULL, err, sizeof err)) {
        fprintf(stderr, "bench_geom: %s\n", err);
        return NULL;
    }
    const struct rig_set *set = view_skeletons(*fs, err, sizeof err);
    return set->n ? &set->r[0] : NULL;
}

static double core_once(const uint8_t *file, size_t size, const struct rig_entry *rig, size_t *glb_len)
{
    double t0 = now_ms();
    struct mem_src_ctx mc;
    struct s3_src src;
    mem_src_init(&src, &mc, file, size);
    struct geom g;
    struct diag d = {0};
    char err[256];
    struct mdl_model m;
    struct geom_report rep;
    uint8_t *out = NULL;
    *glb_len = 0;
    if (geom_parse(&src, 1u << 30, &g, &d, err, sizeof err) == 0) {
        if (geom_model(&g, rig, &m, &rep, err, sizeof err) == 0) {
            if (export_model_glb(&m, &out, glb_len, err, sizeof err))
                fprintf(stderr, "bench_geom: %s\n", err);
            mdl_model_free(&m);
            geom_report_free(&rep);
        }
        geom_free(&g);
    }
    diag_free(&d);
    double dt = now_ms() - t0;
    free(out);
    return dt;
}

/* open, listing and read times of one mount-like use, into t[3] (-1: failed) */
static void mount_once(const uint8_t *file, size_t size, const char *rig, double t[3])
{
    t[0] = t[1] = t[2] = -1;
    double t0 = now_ms();
    struct s3fs_opts o = {0};
    snprintf(o.rig, sizeof o.rig, "%s", rig);
    struct s3fs *fs;
    char err[512];
    if (s3fs_open_mem(&fs, file, size, &o, err, sizeof err)) {
        fprintf(stderr, "bench_geom: %s\n", err);
        return;
    }
    double t1 = now_ms();
    tree_populate(fs->tree, TREE_ROOT);
    double t2 = now_ms();
    uint32_t ino;
    uint8_t *glb = NULL;
    size_t len = 0;
    if (tree_resolve(fs->tree, "/mesh.glb", &ino) == 0 && tree_read_all(fs->tree, ino, &glb, &len) == 0) {
        t[0] = t1 - t0;
        t[1] = t2 - t1;
        t[2] = now_ms() - t2;
    } else {
        fprintf(stderr, "bench_geom: no /mesh.glb\n");
    }
    free(glb);
    s3fs_close(fs);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_geom GEOM RIG [RUNS]\n");
        return 2;
    }
    int runs = argc > 3 ? atoi(argv[3]) : 30;
    size_t size = 0;
    uint8_t *file = slurp(argv[1], &size);
    struct s3fs *rigfs = NULL;
    const struct rig_entry *rig = rig_of(argv[2], &rigfs);
    if (!file || !size || !rig)
        return 1;
    double core = 1e9, best[3] = {1e9, 1e9, 1e9};
    size_t glb = 0;
    for (int i = 0; i < runs; i++) {
        double c = core_once(file, size, rig, &glb), t[3];
        mount_once(file, size, argv[2], t);
        core = c < core ? c : core;
        for (int k = 0; k < 3; k++)
            best[k] = t[k] >= 0 && t[k] < best[k] ? t[k] : best[k];
    }
    printf("geom: %zu bytes bound to %u bones, mesh.glb %zu bytes (best of %d runs, ms):\n"
           "  core (parse, bind, mesh.glb) %.2f   [target: under 10 ms]\n"
           "  mount: open with -o rig= %.2f, first listing of / (mesh.glb and mesh.obj measured for their sizes) %.2f, "
           "read mesh.glb (its build) %.2f\n", size, rig->skel.nbones, glb, runs, core, best[0], best[1], best[2]);
    s3fs_close(rigfs);
    free(file);
    return 0;
}
