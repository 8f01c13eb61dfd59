/* A Mods folder on disk (fixture_folder.h). */
#include "fixture_folder.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zip.h>

const struct fxp_res fxf_key[FXF_NKEYS] = {
    [FXF_K1] = {0x0333406C, 0, 0x1111, NULL, 0, FXP_ZLIB},
    [FXF_K2] = {0x0333406C, 0, 0x2222, NULL, 0, FXP_STORED},
    [FXF_K3] = {0x00B2D882, 0, 0x3333, NULL, 0, FXP_ZLIB},
    [FXF_K4] = {0x0333406C, 0, 0x4444, NULL, 0, FXP_ZLIB},
    [FXF_NAMEMAP] = {0x0166038C, 0, 0, NULL, 0, FXP_STORED},
};

/* Each package: the bytes it holds for each key (NULL: not that key); a name map where
 * the row says "map". */
struct pkgdef {
    const char *rel;
    const char *bytes[FXF_NKEYS];
};
static const struct pkgdef pkgs[] = {
    {"a.package", {"a one", "same two", NULL, NULL, "map"}},
    {"b/B.package", {"b one", NULL, "b three", NULL, NULL}},
    {"d1/d2/d3/d4/d5/five.package", {NULL, NULL, NULL, "five four", NULL}},
    {"d1/d2/d3/d4/d5/d6/deep.package", {"deep one", NULL, NULL, NULL, NULL}},
    {"Override/o.package", {"override one", NULL, NULL, NULL, NULL}},
    {"Zx.package", {"zx one", "same two", NULL, NULL, NULL}},
    {"_x.package", {NULL, "same two", NULL, NULL, NULL}},
};

const char *fxf_bytes(const char *rel, int k)
{
    if (strcmp(rel, "copy/a-copy.package") == 0)
        rel = "a.package";
    for (size_t i = 0; i < sizeof pkgs / sizeof pkgs[0]; i++)
        if (strcmp(pkgs[i].rel, rel) == 0)
            return pkgs[i].bytes[k];
    return NULL;
}

static const char game_cfg[] = "Priority 500\r\n"
                               "PackedFile *.package\r\n"
                               "PackedFile */*.package\r\n"
                               "PackedFile */*/*.package\r\n"
                               "PackedFile */*/*/*.package\r\n"
                               "PackedFile */*/*/*/*.package\r\n"
                               "PackedFile */*/*/*/*/*.package\r\n"
                               "Priority 600\r\n"
                               "PackedFile Override/*.package\r\n"
                               "PackedFile Nothing/*.package\r\n"
                               "DirectoryFiles Override autoupdate\r\n";

static int write_file(const char *dir, const char *rel, const void *data, size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    for (char *p = path + strlen(dir) + 1; (p = strchr(p, '/')) != NULL; p++) { /* its folders */
        *p = 0;
        if (mkdir(path, 0755) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    bool ok = fwrite(data, 1, n, f) == n;
    return fclose(f) == 0 && ok ? 0 : -1;
}

static uint8_t *build_package(const struct pkgdef *d, size_t *size)
{
    struct fxp_res res[FXF_NKEYS];
    uint8_t *map = NULL;
    size_t n = 0;
    for (int k = 0; k < FXF_NKEYS; k++) {
        if (!d->bytes[k])
            continue;
        res[n] = fxf_key[k];
        if (k == FXF_NAMEMAP) {
            const uint64_t inst = fxf_key[FXF_K1].instance;
            const char *name = FXF_K1_NAME;
            size_t len;
            map = fxp_namemap(&inst, &name, 1, &len);
            res[n].data = map;
            res[n].len = len;
        } else {
            res[n].data = (const uint8_t *)d->bytes[k];
            res[n].len = strlen(d->bytes[k]);
        }
        n++;
    }
    struct fxp_opts o = {.game = 4};
    struct fxp_layout lay;
    uint8_t *file = fxp_build(&o, res, n, size, &lay);
    free(map);
    return file;
}

/* A zip archive of (name, bytes) pairs; bytes NULL adds a folder entry. */
static int write_zip(const char *dir, const char *rel, const char *const *members, size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    char *slash = strrchr(path, '/');
    *slash = 0;
    mkdir(path, 0755); /* one level is all scripts use */
    *slash = '/';
    int code;
    zip_t *z = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &code);
    if (!z)
        return -1;
    for (size_t i = 0; i < n; i += 2) {
        if (!members[i + 1]) {
            if (zip_dir_add(z, members[i], ZIP_FL_ENC_UTF_8) < 0)
                return zip_discard(z), -1;
            continue;
        }
        zip_source_t *s = zip_source_buffer(z, members[i + 1], strlen(members[i + 1]), 0);
        if (!s || zip_file_add(z, members[i], s, ZIP_FL_ENC_UTF_8) < 0) {
            zip_source_free(s);
            zip_discard(z);
            return -1;
        }
    }
    return zip_close(z) == 0 ? 0 : -1;
}

/* A zip whose central directory's first record is no longer one. */
static int write_broken_zip(const char *dir)
{
    static const char *const m[] = {"mods/x.py", "x"};
    char path[4096];
    if (write_zip(dir, "broken.ts4script", m, 2))
        return -1;
    snprintf(path, sizeof path, "%s/broken.ts4script", dir);
    FILE *f = fopen(path, "r+b");
    if (!f)
        return -1;
    uint8_t buf[4096];
    size_t n = fread(buf, 1, sizeof buf, f);
    int rc = -1;
    for (size_t i = 0; i + 4 <= n; i++)
        if (memcmp(buf + i, "PK\1\2", 4) == 0) {
            fseek(f, (long)i + 3, SEEK_SET);
            fputc(9, f);
            rc = 0;
            break;
        }
    return fclose(f) == 0 ? rc : -1;
}

static int write_scripts(const char *dir)
{
    static const char *const s1[] = {"mods/", NULL, FXF_MODULE, FXF_MODULE_BYTES, "mods/one.py", "one"};
    static const char *const s2[] = {FXF_MODULE, FXF_MODULE_BYTES, "mods/two.py", "two"};
    static const char *const s3[] = {"mods/three.py", "three"};
    if (write_zip(dir, "s1.ts4script", s1, 6) || write_zip(dir, "sub/s2.ts4script", s2, 4))
        return -1;
    char sub[4096];
    snprintf(sub, sizeof sub, "%s/sub/deeper", dir);
    if (mkdir(sub, 0755) != 0 && errno != EEXIST)
        return -1;
    return write_zip(dir, "sub/deeper/s3.ts4script", s3, 2) || write_broken_zip(dir) ? -1 : 0;
}

static int write_junk(const char *dir, const uint8_t *pkg, size_t size)
{
    static const char lfs[] = "version https://git-lfs.github.com/spec/v1\n"
                              "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
                              "size 12345\n";
    static const char text[] = "this is not a package\n";
    char path[4096];
    if (write_file(dir, "empty.package", "", 0) || write_file(dir, "lfs.package", lfs, sizeof lfs - 1) ||
        write_file(dir, "trunc.package", pkg, size - 12) || /* the index ends past the file */
        write_file(dir, "notdbpf.package", text, sizeof text - 1) ||
        write_file(dir, "readme.txt", text, sizeof text - 1) || write_file(dir, "bad\xff.package", pkg, size))
        return -1;
    snprintf(path, sizeof path, "%s/link.package", dir);
    if (symlink("a.package", path))
        return -1;
    snprintf(path, sizeof path, "%s/loop", dir);
    return symlink(".", path);
}

int fxf_build(const char *dir, bool with_cfg)
{
    uint8_t *a = NULL;
    size_t asize = 0;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < sizeof pkgs / sizeof pkgs[0]; i++) {
        size_t size;
        uint8_t *p = build_package(&pkgs[i], &size);
        rc = p ? write_file(dir, pkgs[i].rel, p, size) : -1;
        if (i == 0) {
            a = p;
            asize = size;
        } else {
            free(p);
        }
    }
    if (rc == 0)
        rc = write_file(dir, "copy/a-copy.package", a, asize);
    if (rc == 0 && with_cfg)
        rc = write_file(dir, "Resource.cfg", game_cfg, sizeof game_cfg - 1);
    if (rc == 0)
        rc = write_scripts(dir);
    if (rc == 0)
        rc = write_junk(dir, a, asize);
    free(a);
    return rc;
}

/* A shared key used by 2 to 5 packages: the packages p..p+k-1 (k from the key) take key s
 * at their entry j when the LCG says so; simpler: package p's entry j is shared when
 * j % 10 == 0, and then names key (p / 4) * 10 + j: four neighbouring packages (three at
 * the end of a run of folders) share it, within 2..5. */
int fxf_write_big(const char *dir, uint32_t npkg, uint64_t nres)
{
    return fxf_write_big_from(dir, npkg, nres, 0);
}

int fxf_write_big_from(const char *dir, uint32_t npkg, uint64_t nres, uint32_t first)
{
    uint32_t per = npkg ? (uint32_t)(nres / npkg) : 0;
    struct fxp_res *res = calloc(per ? per : 1, sizeof *res);
    static const uint8_t data[16] = "0123456789abcdef";
    if (!res)
        return -1;
    if (write_file(dir, "Resource.cfg", game_cfg, sizeof game_cfg - 1)) {
        free(res);
        return -1;
    }
    int rc = 0;
    for (uint32_t p = first; rc == 0 && p < first + npkg; p++) {
        for (uint32_t j = 0; j < per; j++) {
            bool shared = j % 10 == 0;
            uint64_t inst = shared ? 0xF000000000000000ull | ((uint64_t)(p / 4) << 20) | j
                                   : ((uint64_t)p << 20) | j;
            res[j] = (struct fxp_res){0x0333406C, 0, inst, data, sizeof data, FXP_STORED};
        }
        struct fxp_opts o = {.game = 4};
        struct fxp_layout lay;
        size_t size;
        uint8_t *file = fxp_build(&o, res, per, &size, &lay);
        char rel[64];
        if (p % 100 == 99)
            snprintf(rel, sizeof rel, "Override/o%06u.package", p);
        else
            snprintf(rel, sizeof rel, "f%03u/p%06u.package", p % 100, p);
        rc = file ? write_file(dir, rel, file, size) : -1;
        free(file);
    }
    free(res);
    return rc;
}
