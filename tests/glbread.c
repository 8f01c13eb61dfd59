#include "glbread.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t u32le(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int bad(const char *why)
{
    fprintf(stderr, "glb: %s\n", why);
    return -1;
}

int glb_read(const uint8_t *f, size_t len, struct glbdoc *d)
{
    memset(d, 0, sizeof *d);
    if (len < 20 || memcmp(f, "glTF", 4) || u32le(f + 4) != 2 || u32le(f + 8) != len)
        return bad("header");
    uint32_t jlen = u32le(f + 12);
    if (jlen % 4 || memcmp(f + 16, "JSON", 4) || jlen > len - 20)
        return bad("JSON chunk");
    size_t at = 20 + jlen;
    if (at < len) {
        if (len - at < 8 || memcmp(f + at + 4, "BIN\0", 4))
            return bad("BIN chunk header");
        uint32_t blen = u32le(f + at);
        if (blen % 4 || blen != len - at - 8)
            return bad("BIN chunk length");
        d->bin = f + at + 8;
        d->binlen = blen;
    }
    json_error_t e;
    d->json = json_loadb((const char *)f + 20, jlen, 0, &e);
    if (!d->json) {
        fprintf(stderr, "glb: JSON: %s at %d\n", e.text, e.position);
        return -1;
    }
    json_t *views = json_object_get(d->json, "bufferViews");
    for (size_t i = 0; i < json_array_size(views); i++) {
        json_t *v = json_array_get(views, i);
        json_int_t off = json_integer_value(json_object_get(v, "byteOffset"));
        json_int_t n = json_integer_value(json_object_get(v, "byteLength"));
        if (off % 4 || off < 0 || n < 0 || (size_t)(off + n) > d->binlen) {
            glb_doc_free(d);
            return bad("buffer view outside BIN or unaligned");
        }
    }
    json_t *buf = json_array_get(json_object_get(d->json, "buffers"), 0);
    if (d->bin && (size_t)json_integer_value(json_object_get(buf, "byteLength")) > d->binlen) {
        glb_doc_free(d);
        return bad("buffer longer than BIN");
    }
    return 0;
}

void glb_doc_free(struct glbdoc *d)
{
    json_decref(d->json);
    memset(d, 0, sizeof *d);
}

static int ncomp_of(const char *type)
{
    if (!type)
        return 0;
    if (!strcmp(type, "SCALAR"))
        return 1;
    if (!strcmp(type, "MAT4"))
        return 16;
    if (!strncmp(type, "VEC", 3))
        return type[3] - '0';
    return 0;
}

static int csize(int ctype)
{
    return ctype == 5121 ? 1 : ctype == 5123 ? 2 : ctype == 5125 || ctype == 5126 ? 4 : 0;
}

const uint8_t *glb_accessor_data(const struct glbdoc *d, size_t i, size_t *count, int *ncomp, int *ctype)
{
    json_t *a = json_array_get(json_object_get(d->json, "accessors"), i);
    if (!a)
        return NULL;
    json_t *v = json_array_get(json_object_get(d->json, "bufferViews"),
                               (size_t)json_integer_value(json_object_get(a, "bufferView")));
    *count = (size_t)json_integer_value(json_object_get(a, "count"));
    *ncomp = ncomp_of(json_string_value(json_object_get(a, "type")));
    *ctype = (int)json_integer_value(json_object_get(a, "componentType"));
    size_t off = (size_t)json_integer_value(json_object_get(v, "byteOffset")) +
                 (size_t)json_integer_value(json_object_get(a, "byteOffset"));
    size_t need = *count * (size_t)*ncomp * (size_t)csize(*ctype);
    size_t vlen = (size_t)json_integer_value(json_object_get(v, "byteLength"));
    if (!v || csize(*ctype) == 0 || off + need > d->binlen ||
        need + (size_t)json_integer_value(json_object_get(a, "byteOffset")) > vlen)
        return NULL;
    return d->bin + off;
}

float *glb_accessor_floats(const struct glbdoc *d, size_t i, size_t *count, int *ncomp)
{
    int ctype;
    const uint8_t *p = glb_accessor_data(d, i, count, ncomp, &ctype);
    if (!p || ctype != 5126)
        return NULL;
    size_t n = *count * (size_t)*ncomp;
    float *f = malloc(n ? n * sizeof *f : 1);
    for (size_t k = 0; f && k < n; k++) {
        uint32_t u = u32le(p + 4 * k);
        memcpy(&f[k], &u, 4);
    }
    return f;
}

uint32_t *glb_accessor_uints(const struct glbdoc *d, size_t i, size_t *count, int *ncomp)
{
    int ctype;
    const uint8_t *p = glb_accessor_data(d, i, count, ncomp, &ctype);
    if (!p || ctype == 5126)
        return NULL;
    size_t n = *count * (size_t)*ncomp;
    uint32_t *u = malloc(n ? n * sizeof *u : 1);
    for (size_t k = 0; u && k < n; k++)
        u[k] = ctype == 5121 ? p[k] : ctype == 5123 ? (uint32_t)(p[2 * k] | p[2 * k + 1] << 8) : u32le(p + 4 * k);
    return u;
}

double glb_num(const json_t *obj, const char *key, size_t i)
{
    json_t *v = json_array_get(json_object_get(obj, key), i);
    return v ? json_number_value(v) : NAN;
}

bool glb_rotation_normalised(const json_t *node, const float q[4], char *why, size_t whylen)
{
    double qlen = sqrt((double)q[0] * q[0] + (double)q[1] * q[1] + (double)q[2] * q[2] + (double)q[3] * q[3]);
    double sum = 0;
    for (size_t k = 0; k < 4; k++) {
        double got = glb_num(node, "rotation", k);
        if (!(fabs(got) <= 1) || fabs(got - q[k] / qlen) > 1e-7) {
            snprintf(why, whylen, "rotation[%zu] = %.9g, expected %.9g", k, got, q[k] / qlen);
            return false;
        }
        sum += got * got;
    }
    if (fabs(sum - 1) >= 1e-6) {
        snprintf(why, whylen, "rotation of length^2 %.9g", sum);
        return false;
    }
    return true;
}

bool glb_has_child(const struct glbdoc *d, size_t parent, size_t child)
{
    json_t *ch = json_object_get(json_array_get(json_object_get(d->json, "nodes"), parent), "children");
    for (size_t k = 0; k < json_array_size(ch); k++)
        if (json_integer_value(json_array_get(ch, k)) == (json_int_t)child)
            return true;
    return false;
}
