/* t2fs schemas as LibT2FS-style JSON, with jansson (a well-kept Debian library; JSON
 * parsing is not something to write by hand). Text in, schema out: the caller reads
 * the file. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/t2fs/t2fs.h"

#include "parse/base/err.h"

#define MAX_DEPTH 64
#define MAX_NODES 100000

static const char *const kind_names[] = {"fixed", "variable", "data", "repeated", "mixed"};

static json_t *node_json(const struct t2fs_schema *s, int depth);

static json_t *list_json(const struct t2fs_schema *s, int depth)
{
    json_t *a = json_array();
    for (uint32_t i = 0; a && i < s->nchild; i++)
        json_array_append_new(a, s->child[i] ? node_json(s->child[i], depth + 1) : json_null());
    return a;
}

static json_t *node_json(const struct t2fs_schema *s, int depth)
{
    json_t *o = json_object();
    if (!o || depth > MAX_DEPTH)
        return o;
    json_object_set_new(o, "name", json_string(s->name ? s->name : ""));
    json_object_set_new(o, "type", json_string(kind_names[s->kind]));
    if (s->kind == T2K_DATA) {
        json_t *d = json_object();
        if (s->type)
            json_object_set_new(d, "type", json_string(s->type));
        if (s->data == T2D_ARRAY)
            json_object_set_new(d, "array", json_integer(s->value_size));
        else if (s->fixed_size)
            json_object_set_new(d, "size", json_integer(s->fixed_size));
        if (s->interleaved)
            json_object_set_new(d, "interleaved", json_true());
        json_object_set_new(o, "data", d);
    } else if (s->kind == T2K_VARIABLE) {
        if (s->each)
            json_object_set_new(o, "next", node_json(s->each, depth + 1));
    } else if (s->kind == T2K_MIXED) {
        json_object_set_new(o, "pre", list_json(s, depth));
        if (s->each)
            json_object_set_new(o, "next", node_json(s->each, depth + 1));
    } else {
        json_object_set_new(o, "next", list_json(s, depth));
    }
    return o;
}

char *t2fs_schema_to_json(const struct t2fs_schema *s)
{
    json_t *j = node_json(s, 0);
    char *text = j ? json_dumps(j, JSON_INDENT(1) | JSON_PRESERVE_ORDER) : NULL;
    json_decref(j);
    return text;
}

struct loader {
    char *err;
    size_t errlen;
    unsigned nodes;
};

static void fail(struct loader *l, const char *path, const char *msg)
{
    if (!l->err[0])
        snprintf(l->err, l->errlen, "%s: %s", path, msg);
}

static struct t2fs_schema *node_from(struct loader *l, json_t *j, const char *path, int depth);

static int list_from(struct loader *l, struct t2fs_schema *s, json_t *a, const char *path, int depth)
{
    if (!json_is_array(a)) {
        fail(l, path, "expected a list of nodes");
        return -1;
    }
    size_t n = json_array_size(a);
    s->child = alloc_array(n, sizeof *s->child);
    if (!s->child)
        return -1;
    s->nchild = (uint32_t)n;
    for (size_t i = 0; i < n; i++) {
        json_t *c = json_array_get(a, i);
        if (json_is_null(c))
            continue;
        char p[512];
        snprintf(p, sizeof p, "%s[%zu]", path, i);
        s->child[i] = node_from(l, c, p, depth + 1);
        if (!s->child[i])
            return -1;
    }
    return 0;
}

static int data_from(struct loader *l, struct t2fs_schema *s, json_t *d, const char *path)
{
    s->data = T2D_RAW;
    if (!d)
        return 0;
    if (!json_is_object(d)) {
        fail(l, path, "\"data\" must be an object");
        return -1;
    }
    json_t *t = json_object_get(d, "type"), *size = json_object_get(d, "size"),
           *arr = json_object_get(d, "array"), *il = json_object_get(d, "interleaved");
    if ((t && !json_is_string(t)) || (size && !json_is_integer(size)) || (arr && !json_is_integer(arr)) ||
        (il && !json_is_boolean(il))) {
        fail(l, path, "\"data\" fields: type is a string, size and array integers, interleaved a boolean");
        return -1;
    }
    if ((size && (json_integer_value(size) < 0 || json_integer_value(size) > 0x7FFFFFFF)) ||
        (arr && (json_integer_value(arr) < 0 || json_integer_value(arr) > 0x7FFFFFFF))) {
        fail(l, path, "size and array must be between 0 and 2^31-1");
        return -1;
    }
    s->type = t ? strdup(json_string_value(t)) : NULL;
    s->fixed_size = size ? (uint32_t)json_integer_value(size) : 0;
    if (arr) {
        s->data = T2D_ARRAY;
        s->value_size = (uint32_t)json_integer_value(arr);
    }
    s->interleaved = il && json_is_true(il);
    return 0;
}

static struct t2fs_schema *node_from(struct loader *l, json_t *j, const char *path, int depth)
{
    if (depth > MAX_DEPTH) {
        fail(l, path, "nested deeper than 64 levels");
        return NULL;
    }
    if (++l->nodes > MAX_NODES) {
        fail(l, path, "more than 100000 nodes");
        return NULL;
    }
    if (!json_is_object(j)) {
        fail(l, path, "expected a node object");
        return NULL;
    }
    json_t *name = json_object_get(j, "name"), *type = json_object_get(j, "type");
    if (!json_is_string(name)) {
        fail(l, path, "\"name\" must be a string");
        return NULL;
    }
    int kind = -1;
    for (int k = 0; json_is_string(type) && k < 5; k++)
        if (strcmp(json_string_value(type), kind_names[k]) == 0)
            kind = k;
    if (kind < 0) {
        char p[512];
        snprintf(p, sizeof p, "%s.type", path);
        fail(l, p, "expected one of data, fixed, variable, repeated, mixed");
        return NULL;
    }
    struct t2fs_schema *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->kind = (enum t2fs_kind)kind;
    s->name = strdup(json_string_value(name));
    char p[512];
    int rc = 0;
    json_t *next = json_object_get(j, "next"), *pre = json_object_get(j, "pre");
    if (s->kind == T2K_DATA) {
        snprintf(p, sizeof p, "%s.data", path);
        rc = data_from(l, s, json_object_get(j, "data"), p);
    } else if (s->kind == T2K_VARIABLE || s->kind == T2K_MIXED) {
        if (s->kind == T2K_MIXED) {
            snprintf(p, sizeof p, "%s.pre", path);
            rc = list_from(l, s, pre, p, depth);
        }
        if (!rc && next && !json_is_null(next)) {
            snprintf(p, sizeof p, "%s.next", path);
            s->each = node_from(l, next, p, depth + 1);
            rc = s->each ? 0 : -1;
        }
    } else if (next) {
        snprintf(p, sizeof p, "%s.next", path);
        rc = list_from(l, s, next, p, depth);
    }
    if (rc || !s->name) {
        t2fs_schema_free(s);
        return NULL;
    }
    return s;
}

struct t2fs_schema *t2fs_schema_from_json(const char *text, size_t len, char *err, size_t errlen)
{
    struct loader l = {err, errlen, 0};
    err[0] = 0;
    json_error_t je;
    json_t *j = json_loadb(text, len, 0, &je);
    if (!j) {
        snprintf(err, errlen, "line %d, column %d: %s", je.line, je.column, je.text);
        return NULL;
    }
    struct t2fs_schema *s = node_from(&l, j, "$", 0);
    json_decref(j);
    if (!s && !err[0])
        snprintf(err, errlen, "$: out of memory");
    return s;
}
