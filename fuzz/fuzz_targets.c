/* libFuzzer targets: the whole tree walk, one per codec (FUZZ_TARGET selects it) and one
 * per format of the table (FUZZ_FORMAT, its enum value, and FUZZ_CODE_<code>: the row's
 * fuzz_prefix, then the input, opened and walked; a few formats add a parser of their
 * own, below). Built with
 * -Dfuzz=true and clang (scripts/fuzz.sh). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fs/export/export.h"
#include "fs/open/open.h"
#include "parse/sims/dbpf.h"
#include "parse/codec/bitknit2.h"
#include "parse/sims/geom.h"
#include "parse/sims/geom_model.h"
#include "parse/sims/modfolder.h"
#include "parse/gr2/gr2.h"
#include "parse/codec/oodle0.h"
#include "parse/codec/oodle1.h"
#include "parse/codec/refpack.h"
#include "parse/sims/rig.h"
#include "parse/sims/rig_clear.h"
#include "parse/codec/rnc.h"
#include "parse/t2fs/t1_model.h"
#include "parse/t2fs/t1_section.h"
#include "parse/t2fs/t2fs.h"
#include "walk.h"

/* Small limits keep each input fast and bound memory. */
__attribute__((unused)) static const struct s3fs_opts limits = {.max_nodes = 200000, .cache_bytes = 8u << 20, .max_unpacked = 8u << 20};

__attribute__((unused)) static void tree_walk(const uint8_t *data, size_t size)
{
    struct s3fs *fs;
    char err[256];
    if (s3fs_open_mem(&fs, data, size, &limits, err, sizeof err) == 0) {
        walk_all(fs, 20000);
        s3fs_close(fs);
    }
}

/* ---- the folder target: bytes -> a small folder on disk -> the folder view, walked ----
 * The input is up to FOLDER_FILES parts separated by FOLDER_SEP; a part's first line is
 * its relative path (kept when it is a plain path of at most three folders, else
 * "pN.package"), the rest its bytes. So seeds are fixture folders packed this way
 * (scripts/fuzz.sh): packages from the fixture builder, a Resource.cfg, junk; the fuzzer
 * mutates their bytes, paths and globs. */
#define FOLDER_SEP "\n--8<--\n"
#define FOLDER_FILES 12
#include <dirent.h>
#include <ftw.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

__attribute__((unused)) static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    remove(path);
    return 0;
}

/* A relative path the folder may hold: components of [A-Za-z0-9._ -] (and bytes >= 0x80,
 * any names), not "." or "..", at most three folders deep, at most 80 bytes. */
__attribute__((unused)) static bool folder_path_ok(const char *p, size_t n)
{
    if (n == 0 || n > 80 || p[0] == '/' || p[n - 1] == '/')
        return false;
    unsigned depth = 0;
    size_t comp = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i == n || p[i] == '/') {
            if (comp == 0 || (comp == 1 && p[i - 1] == '.') || (comp == 2 && p[i - 1] == '.' && p[i - 2] == '.'))
                return false;
            depth += i < n;
            comp = 0;
            continue;
        }
        unsigned char c = (unsigned char)p[i];
        if (!(c >= 0x80 || c == '.' || c == '_' || c == '-' || c == ' ' || (c >= '0' && c <= '9') ||
              (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')))
            return false;
        comp++;
    }
    return depth <= 3;
}

/* Writes part k (path line, then bytes) under root; folders made as needed. */
__attribute__((unused)) static void folder_put(const char *root, unsigned k, const uint8_t *p, size_t n)
{
    const uint8_t *nl = memchr(p, '\n', n);
    size_t plen = nl ? (size_t)(nl - p) : 0;
    char rel[128], path[512];
    if (nl && folder_path_ok((const char *)p, plen)) {
        memcpy(rel, p, plen);
        rel[plen] = 0;
    } else {
        snprintf(rel, sizeof rel, "p%u.package", k);
    }
    const uint8_t *body = nl ? nl + 1 : p;
    size_t blen = n - (size_t)(body - p);
    snprintf(path, sizeof path, "%s/%s", root, rel);
    for (char *s = path + strlen(root) + 1; (s = strchr(s, '/')) != NULL; s++) {
        *s = 0;
        mkdir(path, 0755);
        *s = '/';
    }
    FILE *f = fopen(path, "wb");
    if (!f)
        return;
    fwrite(body, 1, blen, f);
    fclose(f);
}

__attribute__((unused)) static void folder_walk(const uint8_t *data, size_t size)
{
    static char root[64];
    if (!root[0]) {
        snprintf(root, sizeof root, "/tmp/s3rig-fuzz-folder-XXXXXX");
        if (!mkdtemp(root))
            abort();
    }
    nftw(root, remove_one, 16, FTW_DEPTH | FTW_PHYS); /* the previous input's files */
    mkdir(root, 0755);
    const size_t seplen = sizeof FOLDER_SEP - 1;
    unsigned k = 0;
    for (size_t at = 0; at < size && k < FOLDER_FILES; k++) {
        const uint8_t *end = memmem(data + at, size - at, FOLDER_SEP, seplen);
        size_t n = end ? (size_t)(end - (data + at)) : size - at;
        folder_put(root, k, data + at, n);
        at += n + (end ? seplen : 0);
    }
    struct s3fs *fs;
    char err[256];
    if (s3fs_open(&fs, root, &limits, err, sizeof err) == 0) {
        walk_all(fs, 20000);
        s3fs_close(fs);
    }
}

/* Prefixes the input with a format's first bytes, so the fuzzer starts inside it. */
__attribute__((unused)) static void walk_with_magic(const uint8_t *magic, size_t mlen, const uint8_t *data, size_t size)
{
    uint8_t *b = malloc(mlen + size + 1);
    if (!b)
        return;
    memcpy(b, magic, mlen);
    memcpy(b + mlen, data, size);
    tree_walk(b, mlen + size);
    free(b);
}

/* The Turok 1 model builder and the exporters over a decoded section (taken over): two
 * nodes, node 0's one child chosen by bits 1-2 of sel (itself, node 1, past the nodes),
 * the section in node 0 or 1 (bit 3). Any input: a .glb and .obj, or an error. */
__attribute__((unused)) static void t1_model_exports(struct t1_section *s, uint8_t sel)
{
    struct t1_object o = {0};
    struct t1_obj_section *x = NULL;
    if (t1_object_nodes(&o, 2) == 0 && (o.node[0].children = malloc(sizeof *o.node[0].children)) != NULL) {
        o.node[0].children[0] = (uint32_t)(sel >> 1 & 3);
        o.node[0].nchildren = 1;
        x = t1_object_section(&o, sel >> 3 & 1, 0, 0);
    }
    if (!x) {
        t1_section_free(s);
        t1_object_free(&o);
        return;
    }
    x->s = *s;
    x->ok = true;
    struct mdl_model m;
    char err[256];
    if (t1_object_model(&o, "fuzz", &m, err, sizeof err) == 0) {
        uint8_t *out;
        size_t len;
        if (export_model_glb(&m, &out, &len, err, sizeof err) == 0)
            free(out);
        if (export_model_obj(&m, &out, &len, err, sizeof err) == 0)
            free(out);
        mdl_model_free(&m);
    }
    t1_object_free(&o);
}

#if FUZZ_TARGET == 10
/* refpack_expand_stream's sides over the fuzz input. */
struct rp_fuzz_pieces {
    const uint8_t *in;
    size_t in_len;
    uint8_t *out;
    size_t got, cap;
};

static enum s3_err rp_fuzz_in(void *ctx, uint64_t off, uint8_t *buf, size_t len)
{
    const struct rp_fuzz_pieces *p = ctx;
    if (off > p->in_len || len > p->in_len - off)
        abort();
    memcpy(buf, p->in + off, len);
    return S3_OK;
}

static bool rp_fuzz_out(void *ctx, const uint8_t *b, size_t n)
{
    struct rp_fuzz_pieces *p = ctx;
    if (n > p->cap - p->got)
        abort();
    memcpy(p->out + p->got, b, n);
    p->got += n;
    return true;
}
#endif

#ifdef FUZZ_FORMAT
/* What some formats' targets do besides the walk: their parsers on their own. */
static void format_extra(const uint8_t *data, size_t size)
{
#if defined(FUZZ_CODE_t2fs)
    struct mem_src_ctx mc;
    struct s3_src src;
    mem_src_init(&src, &mc, data, size);
    struct t2fs_branch b;
    char err[T2FS_ERR];
    for (int be = 0; be <= 1; be++)
        if (t2fs_read_branch(&src, 0, size, be, &b, err, sizeof err) == 0)
            t2fs_branch_free(&b);
    /* the Turok 1 section decoder on its own: byte 0-1 the vertex count (at most 4095),
     * byte 2 the byte order, then the vertex planes, then the stream's words */
    if (size >= 3) {
        uint32_t nverts = (uint32_t)(data[0] | data[1] << 8) & 4095;
        size_t planes = 16 * (size_t)nverts, rest = size - 3;
        uint8_t *v = calloc(planes ? planes : 1, 1);
        if (v) {
            memcpy(v, data + 3, rest < planes ? rest : planes);
            size_t skip = rest < planes ? rest : planes;
            struct t1_section s;
            if (t1_section_decode(data + 3 + skip, (rest - skip) / 2, v, nverts, data[2] & 1, &s) == 0)
                t1_model_exports(&s, data[2]);
            free(v);
        }
    }
#elif defined(FUZZ_CODE_dbpf) /* the header and index parsers over the prefixed input */
    uint8_t *b = malloc(size + 8);
    if (b) {
        memcpy(b, s3_formats[FMT_DBPF].fuzz_prefix, 8);
        memcpy(b + 8, data, size);
        struct mem_src_ctx mc;
        struct s3_src src;
        mem_src_init(&src, &mc, b, size + 8);
        struct dbpf d;
        struct diag diag = {0};
        char err[200];
        if (dbpf_parse_header(&src, &d, err, sizeof err) == 0)
            dbpf_parse_index(&src, &d, &diag);
        dbpf_free(&d);
        diag_free(&diag);
        free(b);
    }
#elif defined(FUZZ_CODE_geom) /* the binding and the exports, to a rig having the fixtures' bones */
    static struct rig_set rigs;
    static const char *const names[] = {"b__ROOT__",    "b__Pelvis__", "b__L_Thigh__",
                                        "b__R_Thigh__", "b__Spine0__", "b__Head,\"x\"__"};
    char err[256];
    if (!rigs.n) {
        struct mdl_skeleton s = {.nbones = 6, .bone = calloc(6, sizeof *s.bone)};
        for (int i = 0; s.bone && i < 6; i++) {
            s.bone[i] = (struct mdl_bone){.name = strdup(names[i]), .name_len = strlen(names[i]), .parent = i - 1};
            s.bone[i].t[1] = 0.1f * (float)i;
            s.bone[i].r[3] = s.bone[i].s[0] = s.bone[i].s[1] = s.bone[i].s[2] = 1;
        }
        if (s.bone)
            rig_set_add(&rigs, "fuzz", &s, err, sizeof err);
    }
    const struct s3_format_info *f = &s3_formats[FMT_GEOM];
    uint8_t *b = malloc(f->fuzz_cut + size + 1);
    if (!b || !rigs.n) {
        free(b);
        return;
    }
    memcpy(b, f->fuzz_prefix, f->fuzz_cut);
    memcpy(b + f->fuzz_cut, data, size);
    struct mem_src_ctx mc;
    struct s3_src src;
    mem_src_init(&src, &mc, b, f->fuzz_cut + size);
    struct geom g;
    struct diag d = {0};
    if (geom_parse(&src, 8u << 20, &g, &d, err, sizeof err) == 0) {
        struct mdl_model m;
        struct geom_report rep;
        if (geom_model(&g, &rigs.r[0], &m, &rep, err, sizeof err) == 0) {
            uint8_t *out;
            size_t len;
            if (export_model_glb(&m, &out, &len, err, sizeof err) == 0)
                free(out);
            if (export_mesh_obj(&m.mesh[0], &out, &len, err, sizeof err) == 0)
                free(out);
            mdl_model_free(&m);
            geom_report_free(&rep);
        }
        geom_free(&g);
    }
    diag_free(&d);
    free(b);
#else
    (void)data, (void)size;
#endif
}
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
#if defined(FUZZ_FORMAT)
    const struct s3_format_info *f = &s3_formats[FUZZ_FORMAT];
#if defined(FUZZ_CODE_rig_clear) /* major 3 when the first byte is odd, else the row's major 4 */
    static const uint8_t m3[8] = {3, 0, 0, 0, 1, 0, 0, 0};
    if (size && (data[0] & 1))
        walk_with_magic(m3, 8, data, size);
    else
#endif
    walk_with_magic((const uint8_t *)f->fuzz_prefix, f->fuzz_cut, data, size);
    format_extra(data, size);
#elif FUZZ_TARGET == 1 /* tree: any input, any format */
    tree_walk(data, size);
#elif FUZZ_TARGET == 2 /* rnc */
    struct rnc_options o = {.max_unpacked = 1 << 22};
    uint8_t *out;
    size_t n;
    char err[256];
    if (rnc_unpack(data, size, &o, &out, &n, err, sizeof err) == 0)
        free(out);
#elif FUZZ_TARGET == 3 /* oodle1: the first 8 bytes choose the stops and size */
    if (size < 8)
        return 0;
    uint32_t f16 = (uint32_t)(data[0] | data[1] << 8), f8 = f16 + (uint32_t)(data[2] | data[3] << 8);
    uint32_t total = f8 + (uint32_t)(data[4] | data[5] << 8);
    uint8_t *out;
    char err[256];
    if (oodle1_expand(data + 8, size - 8, data[6] & 1, f16, f8, total, 1 << 22, &out, err, sizeof err) == 0)
        free(out);
#elif FUZZ_TARGET == 8 /* oodle0: the first 8 bytes choose the stops, size and byte order, as for oodle1 */
    if (size < 8)
        return 0;
    uint32_t s0 = (uint32_t)(data[0] | data[1] << 8), s1 = s0 + (uint32_t)(data[2] | data[3] << 8);
    uint32_t total = s1 + (uint32_t)(data[4] | data[5] << 8);
    uint8_t *out;
    char err[256];
    if (oodle0_expand(data + 8, size - 8, data[6] & 1, s0, s1, total, 1 << 22, &out, err, sizeof err) == 0)
        free(out);
#elif FUZZ_TARGET == 11 /* bitknit2: the first 3 bytes give the output size (to 4 MiB) */
    if (size < 3)
        return 0;
    size_t n = (size_t)(data[0] | data[1] << 8 | (data[2] & 0x3F) << 16);
    uint8_t *out = malloc(n ? n : 1); /* exactly n: ASan sees any write past it */
    char err[256];
    struct bitknit2_stats st;
    if (out && bitknit2_decode(data + 3, size - 3, out, n, &st, err, sizeof err) == 0 && st.produced != n)
        abort(); /* success means every byte was produced */
    if (out && st.consumed > size - 3)
        abort();
    free(out);
#elif FUZZ_TARGET == 10 /* refpack: the header's declared size (bounded) is the output */
    struct refpack_header h;
    char err[200];
    if (refpack_parse_header(data, size, &h, err, sizeof err) == 0 && h.expanded_size <= (1u << 22)) {
        uint8_t *out = malloc(h.expanded_size ? h.expanded_size : 1);
        struct rp_fuzz_pieces pc = {data, size, malloc(h.expanded_size ? h.expanded_size : 1), 0, h.expanded_size};
        if (out && pc.out) { /* whole and in pieces: the same result and bytes */
            enum s3_err a = refpack_expand(data, size, out, h.expanded_size, err, sizeof err);
            enum s3_err b = refpack_expand_stream(rp_fuzz_in, &pc, size, rp_fuzz_out, &pc, h.expanded_size, err,
                                                  sizeof err);
            if (a != b || (a == S3_OK && (pc.got != h.expanded_size || memcmp(out, pc.out, pc.got) != 0)))
                abort();
        }
        free(out);
        free(pc.out);
    }
#elif FUZZ_TARGET == 13 /* folder: the input as a small Mods folder, opened and walked whole */
    folder_walk(data, size);
#elif FUZZ_TARGET == 12 /* modfolder: the input as Resource.cfg; its lines as paths, names, globs */
    struct mf_rules r;
    char *text = malloc(size + 1);
    if (!text || mf_rules_parse((const char *)data, size, &r) != S3_OK) {
        free(text);
        return 0;
    }
    memcpy(text, data, size);
    text[size] = 0;
    char *line[16];
    size_t n = 0;
    for (char *p = text, *save = NULL; n < 16 && (p = strtok_r(p, "\n", &save)) != NULL; p = NULL)
        line[n++] = p;
    for (size_t i = 0; i < n; i++) {
        int32_t prio;
        mf_rules_match(&r, line[i], &prio, NULL);
        mf_utf8_valid(line[i], strlen(line[i]));
        for (size_t j = 0; j < n; j++) {
            /* an order: antisymmetric, and equal only for the same bytes */
            int a = mf_name_cmp(line[i], line[j]), b = mf_name_cmp(line[j], line[i]);
            int c = mf_path_cmp(line[i], line[j]), d = mf_path_cmp(line[j], line[i]);
            if ((a > 0) != (b < 0) || (a == 0) != (b == 0) || (c > 0) != (d < 0) || (c == 0) != (d == 0))
                abort();
            if ((a == 0) != (strcmp(line[i], line[j]) == 0))
                abort();
            mf_glob_match(line[i], line[j]);
        }
    }
    mf_rules_max_depth(&r);
    mf_rules_free(&r);
    free(text);
#endif
    return 0;
}
