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

/* The first failure's message (the JSON path and what is wrong) and its reason. */
static enum s3_err fail(struct loader *l, enum s3_err e, const char *path, const char *msg)
{
    if (!l->err[0])
        snprintf(l->err, l->errlen, "%s: %s", path, msg);
    return e;
}

static enum s3_err node_from(struct loader *l, json_t *j, const char *path, int depth, struct t2fs_schema **out);

static enum s3_err list_from(struct loader *l, struct t2fs_schema *s, json_t *a, const char *path, int depth)
{
    if (!json_is_array(a))
        return fail(l, S3_ERR_FORMAT, path, "expected a list of nodes");
    size_t n = json_array_size(a);
    s->child = alloc_array(n, sizeof *s->child);
    if (!s->child)
        return fail(l, S3_ERR_NOMEM, path, "out of memory");
    s->nchild = (uint32_t)n;
    for (size_t i = 0; i < n; i++) {
        json_t *c = json_array_get(a, i);
        if (json_is_null(c))
            continue;
        char p[512];
        snprintf(p, sizeof p, "%s[%zu]", path, i);
        enum s3_err e = node_from(l, c, p, depth + 1, &s->child[i]);
        if (e)
            return e;
    }
    return S3_OK;
}

static enum s3_err data_from(struct loader *l, struct t2fs_schema *s, json_t *d, const char *path)
{
    s->data = T2D_RAW;
    if (!d)
        return S3_OK;
    if (!json_is_object(d))
        return fail(l, S3_ERR_FORMAT, path, "\"data\" must be an object");
    json_t *t = json_object_get(d, "type"), *size = json_object_get(d, "size"),
           *arr = json_object_get(d, "array"), *il = json_object_get(d, "interleaved");
    if ((t && !json_is_string(t)) || (size && !json_is_integer(size)) || (arr && !json_is_integer(arr)) ||
        (il && !json_is_boolean(il)))
        return fail(l, S3_ERR_FORMAT, path,
                    "\"data\" fields: type is a string, size and array integers, interleaved a boolean");
    if ((size && (json_integer_value(size) < 0 || json_integer_value(size) > 0x7FFFFFFF)) ||
        (arr && (json_integer_value(arr) < 0 || json_integer_value(arr) > 0x7FFFFFFF)))
        return fail(l, S3_ERR_FORMAT, path, "size and array must be between 0 and 2^31-1");
    s->type = t ? strdup(json_string_value(t)) : NULL;
    if (t && !s->type)
        return fail(l, S3_ERR_NOMEM, path, "out of memory");
    s->fixed_size = size ? (uint32_t)json_integer_value(size) : 0;
    if (arr) {
        s->data = T2D_ARRAY;
        s->value_size = (uint32_t)json_integer_value(arr);
    }
    s->interleaved = il && json_is_true(il);
    return S3_OK;
}

static enum s3_err node_from(struct loader *l, json_t *j, const char *path, int depth, struct t2fs_schema **out)
{
    *out = NULL;
    if (depth > MAX_DEPTH)
        return fail(l, S3_ERR_LIMIT, path, "nested deeper than 64 levels");
    if (++l->nodes > MAX_NODES)
        return fail(l, S3_ERR_LIMIT, path, "more than 100000 nodes");
    if (!json_is_object(j))
        return fail(l, S3_ERR_FORMAT, path, "expected a node object");
    json_t *name = json_object_get(j, "name"), *type = json_object_get(j, "type");
    if (!json_is_string(name))
        return fail(l, S3_ERR_FORMAT, path, "\"name\" must be a string");
    int kind = -1;
    for (int k = 0; json_is_string(type) && k < 5; k++)
        if (strcmp(json_string_value(type), kind_names[k]) == 0)
            kind = k;
    char p[512];
    if (kind < 0) {
        snprintf(p, sizeof p, "%s.type", path);
        return fail(l, S3_ERR_FORMAT, p, "expected one of data, fixed, variable, repeated, mixed");
    }
    struct t2fs_schema *s = calloc(1, sizeof *s);
    if (!s)
        return fail(l, S3_ERR_NOMEM, path, "out of memory");
    s->kind = (enum t2fs_kind)kind;
    s->name = strdup(json_string_value(name));
    enum s3_err rc = s->name ? S3_OK : fail(l, S3_ERR_NOMEM, path, "out of memory");
    json_t *next = json_object_get(j, "next"), *pre = json_object_get(j, "pre");
    if (rc) {
        /* nothing more to read */
    } else if (s->kind == T2K_DATA) {
        snprintf(p, sizeof p, "%s.data", path);
        rc = data_from(l, s, json_object_get(j, "data"), p);
    } else if (s->kind == T2K_VARIABLE || s->kind == T2K_MIXED) {
        if (s->kind == T2K_MIXED) {
            snprintf(p, sizeof p, "%s.pre", path);
            rc = list_from(l, s, pre, p, depth);
        }
        if (!rc && next && !json_is_null(next)) {
            snprintf(p, sizeof p, "%s.next", path);
            rc = node_from(l, next, p, depth + 1, &s->each);
        }
    } else if (next) {
        snprintf(p, sizeof p, "%s.next", path);
        rc = list_from(l, s, next, p, depth);
    }
    if (rc) {
        t2fs_schema_free(s);
        return rc;
    }
    *out = s;
    return S3_OK;
}

enum s3_err t2fs_schema_from_json(const char *text, size_t len, struct t2fs_schema **out, char *err,
                                  size_t errlen)
{
    struct loader l = {err, errlen, 0};
    err[0] = 0;
    *out = NULL;
    json_error_t je;
    json_t *j = json_loadb(text, len, 0, &je);
    if (!j) /* jansson says no more than where and what: bad text */
        return s3_fail(S3_ERR_FORMAT, err, errlen, "line %d, column %d: %s", je.line, je.column, je.text);
    enum s3_err e = node_from(&l, j, "$", 0, out);
    json_decref(j);
    return e;
}
