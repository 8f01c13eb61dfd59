#include "fs/open/options.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum opt_kind {
    KIND_DECIMAL, /* an unsigned decimal number */
    KIND_OCTAL,   /* an unsigned octal number (umask) */
    KIND_NUMBER,  /* decimal, or hexadecimal with 0x */
    KIND_TEXT,    /* a non-empty string */
    KIND_FLAG,    /* a bare word, no value */
};

enum opt_field { F_MAX_NODES, F_CACHE, F_MAX_UNPACKED, F_RNC_KEY, F_SCHEMA, F_UID, F_GID, F_UMASK, F_SPIN, F_SKELETON, F_RIG, F_RW, F_BACKUP, F_WATCH, F_NOWATCH };

struct opt_spec {
    const char *name; /* without the '=' */
    enum opt_kind kind;
    uint64_t min, max; /* in the unit the user writes */
    uint64_t scale;    /* what one unit is worth in the field (MiB options: 1 << 20) */
    enum opt_field field;
    unsigned scope;
    const char *arg;  /* the value's name in help */
    const char *help; /* one line */
};

/* The one list of our options. Ranges are what the code can honour: max_nodes must fit
 * an inode number, the MiB limits a size_t, rnc_key 16 bits, uid/gid exclude -1 (which
 * chown(2) reads as "unchanged"). */
static const struct opt_spec specs[] = {
    {"max_nodes", KIND_DECIMAL, 1, UINT32_MAX - 1, 1, F_MAX_NODES, OPT_SHARED, "N",
     "stop the tree at N nodes (default 50 million)"},
    {"cache_mb", KIND_DECIMAL, 1, 1ull << 40, 1ull << 20, F_CACHE, OPT_SHARED, "N",
     "MiB of expanded data held at once, by all requests and open files (default 256)"},
    {"max_unpacked_mb", KIND_DECIMAL, 1, 1ull << 40, 1ull << 20, F_MAX_UNPACKED, OPT_SHARED, "N",
     "largest expanded node or section, MiB (default 1024)"},
    {"rnc_key", KIND_NUMBER, 0, 0xFFFF, 1, F_RNC_KEY, OPT_SHARED, "0xNNNN", "key of encrypted RNC data"},
    {"schema", KIND_TEXT, 1, sizeof(((struct s3fs_opts *)0)->schema) - 1, 1, F_SCHEMA, OPT_SHARED,
     "NAME|FILE", "t2fs schema: turok1, turok2 or a LibT2FS JSON file"},
    {"skeleton", KIND_TEXT, 1, sizeof(((struct s3fs_opts *)0)->skeleton) - 1, 1, F_SKELETON, OPT_SHARED, "FILE",
     "Granny animations without a skeleton play on FILE's (a Granny file, RIG or package)"},
    {"rig", KIND_TEXT, 1, sizeof(((struct s3fs_opts *)0)->rig) - 1, 1, F_RIG, OPT_SHARED, "FILE",
     "bind meshes (GEOM) to the rig in FILE (a RIG, Granny file or package)"},
    {"uid", KIND_DECIMAL, 0, UINT_MAX - 1, 1, F_UID, OPT_MOUNT, "N", "owner of every node (default: yours)"},
    {"gid", KIND_DECIMAL, 0, UINT_MAX - 1, 1, F_GID, OPT_MOUNT, "N", "group of every node (default: yours)"},
    {"umask", KIND_OCTAL, 0, 0777, 1, F_UMASK, OPT_MOUNT, "OCTAL", "permission bits taken away (default 0)"},
    {"spin", KIND_DECIMAL, 0, 1000000, 1, F_SPIN, OPT_MOUNT, "US",
     "microseconds to poll before sleeping (default 50)"},
    {"rw", KIND_FLAG, 0, 0, 1, F_RW, OPT_MOUNT, "", "edits write into FILE (see mount.s3rig(8)); default read-only"},
    {"writable", KIND_FLAG, 0, 0, 1, F_RW, OPT_MOUNT, "", "the same as rw (also through mount(8), which always passes rw)"},
    {"backup", KIND_DECIMAL, 0, 1, 1, F_BACKUP, OPT_MOUNT, "0|1", "with rw: keep FILE~ at each commit (default 1)"},
    {"watch", KIND_FLAG, 0, 0, 1, F_WATCH, OPT_MOUNT, "",
     "a folder mount follows the folder's changes (the default)"},
    {"nowatch", KIND_FLAG, 0, 0, 1, F_NOWATCH, OPT_MOUNT, "",
     "a folder mount keeps the folder as mounted (the default)"},
};

#define NSPECS (sizeof specs / sizeof specs[0])

static const struct opt_spec *find_spec(const char *item, const char **value)
{
    for (size_t i = 0; i < NSPECS; i++) {
        size_t n = strlen(specs[i].name);
        if (specs[i].kind == KIND_FLAG) {
            if (strcmp(item, specs[i].name) == 0) {
                *value = item + n;
                return &specs[i];
            }
            continue;
        }
        if (strncmp(item, specs[i].name, n) == 0 && item[n] == '=') {
            *value = item + n + 1;
            return &specs[i];
        }
    }
    return NULL;
}

static int parse_unsigned(const char *s, int base, uint64_t *out)
{
    if (!(s[0] >= '0' && s[0] <= '9')) /* strtoull would take "-1", " 1" and "+1" */
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, base);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

static void say_range(const struct opt_spec *sp, const char *item, char *err, size_t errlen)
{
    switch (sp->kind) {
    case KIND_OCTAL:
        snprintf(err, errlen, "bad value in option '%s' (octal, %llo to %llo)", item,
                 (unsigned long long)sp->min, (unsigned long long)sp->max);
        break;
    case KIND_TEXT:
        snprintf(err, errlen, "bad value in option '%s' (%s, 1 to %llu characters)", item, sp->arg,
                 (unsigned long long)sp->max);
        break;
    case KIND_NUMBER:
        snprintf(err, errlen, "bad value in option '%s' (0x%llx to 0x%llx)", item, (unsigned long long)sp->min,
                 (unsigned long long)sp->max);
        break;
    default:
        snprintf(err, errlen, "bad value in option '%s' (%llu to %llu)", item, (unsigned long long)sp->min,
                 (unsigned long long)sp->max);
    }
}

static void store(struct s3_options *o, enum opt_field f, uint64_t v, const char *text)
{
    switch (f) {
    case F_MAX_NODES:
        o->fs.max_nodes = v;
        break;
    case F_CACHE:
        o->fs.cache_bytes = v;
        break;
    case F_MAX_UNPACKED:
        o->fs.max_unpacked = v;
        break;
    case F_RNC_KEY:
        o->fs.has_rnc_key = true;
        o->fs.rnc_key = (uint16_t)v;
        break;
    case F_SCHEMA:
        snprintf(o->fs.schema, sizeof o->fs.schema, "%s", text);
        break;
    case F_SKELETON:
        snprintf(o->fs.skeleton, sizeof o->fs.skeleton, "%s", text);
        break;
    case F_UID:
        o->uid = (uid_t)v;
        break;
    case F_GID:
        o->gid = (gid_t)v;
        break;
    case F_UMASK:
        o->umask = (mode_t)v;
        break;
    case F_SPIN:
        o->spin_us = (unsigned)v;
        break;
    case F_RIG:
        snprintf(o->fs.rig, sizeof o->fs.rig, "%s", text);
        break;
    case F_RW:
        o->rw = true;
        break;
    case F_BACKUP:
        o->no_backup = v == 0;
        break;
    case F_WATCH:
        o->no_watch = false;
        break;
    case F_NOWATCH:
        o->no_watch = true;
        break;
    }
}

int s3_option_take(struct s3_options *o, unsigned scopes, const char *item, char *err, size_t errlen)
{
    const char *value;
    const struct opt_spec *sp = find_spec(item, &value);
    if (!sp)
        return 0;
    if (!(sp->scope & scopes)) {
        snprintf(err, errlen, "option '%s' is for mount.s3rig only", item);
        return -1;
    }
    uint64_t v = 0;
    bool ok;
    if (sp->kind == KIND_FLAG) {
        ok = true;
    } else if (sp->kind == KIND_TEXT) {
        size_t len = strlen(value);
        ok = len >= sp->min && len <= sp->max;
    } else {
        int base = sp->kind == KIND_OCTAL ? 8 : sp->kind == KIND_NUMBER ? 0 : 10;
        ok = parse_unsigned(value, base, &v) == 0 && v >= sp->min && v <= sp->max;
    }
    if (!ok) {
        say_range(sp, item, err, errlen);
        return -1;
    }
    store(o, sp->field, v * sp->scale, value);
    return 1;
}

int s3_options_take_list(struct s3_options *o, unsigned scopes, const char *list,
                         int (*other)(const char *item, void *ctx), void *ctx, char *err, size_t errlen)
{
    char *copy = strdup(list), *save = NULL;
    if (!copy) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = 0;
    err[0] = 0;
    for (char *it = strtok_r(copy, ",", &save); it && !rc; it = strtok_r(NULL, ",", &save)) {
        int taken = s3_option_take(o, scopes, it, err, errlen);
        if (taken < 0)
            rc = -1;
        else if (!taken)
            rc = other(it, ctx) ? -1 : 0;
    }
    free(copy);
    return rc;
}

void s3_options_help(FILE *f, unsigned scopes, const char *indent)
{
    for (size_t i = 0; i < NSPECS; i++) {
        if (!(specs[i].scope & scopes))
            continue;
        char head[64];
        snprintf(head, sizeof head, "%s%s%s", specs[i].name, specs[i].kind == KIND_FLAG ? "" : "=", specs[i].arg);
        fprintf(f, "%s%-18s %s\n", indent, head, specs[i].help);
    }
}
