#include "parse/t2fs/t2fs_mesh.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/base/err.h"
#include "parse/base/reader.h"

void t2_vcache_init(struct t2_vcache *c, uint64_t nverts)
{
    for (int i = 0; i < T2_CACHE_SLOTS; i++) {
        c->slot[i] = -1;
        c->slot_bone[i] = -1;
    }
    c->bone = -1;
    c->next = 0;
    c->nverts = nverts;
}

static void report(struct t2_stream *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void report(struct t2_stream *s, const char *fmt, ...)
{
    if (s->nerr == T2_MAX_STREAM_ERRORS) {
        s->dropped++;
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&s->err[s->nerr], fmt, ap) >= 0)
        s->nerr++;
    va_end(ap);
}

static void load(struct t2_vcache *c, struct t2_stream *s, size_t w, uint32_t n, uint32_t v0)
{
    for (uint32_t k = 0; k < n; k++) {
        uint32_t slot = v0 + k;
        if (slot >= T2_CACHE_SLOTS) {
            report(s, "word %zu: load %u at %u goes past the %d cache slots", w, n, v0, T2_CACHE_SLOTS);
            break;
        }
        if (c->next + k >= c->nverts) {
            report(s, "word %zu: load %u at %u goes past the %llu vertices of the buffer", w, n, v0,
                   (unsigned long long)c->nverts);
            break;
        }
        c->slot[slot] = (int64_t)(c->next + k);
        c->slot_bone[slot] = c->bone;
        if (s->first < 0)
            s->first = (int64_t)(c->next + k);
        s->last = (int64_t)(c->next + k);
    }
    c->next += n;
}

static enum s3_err triangle(struct t2_vcache *c, struct t2_stream *s, size_t w, const uint32_t slot[3])
{
    struct t2_tri t;
    for (int k = 0; k < 3; k++) {
        if (c->slot[slot[k]] < 0) {
            report(s, "word %zu: triangle %zu uses cache slot %u, which nothing loaded", w, s->ntri, slot[k]);
            return S3_OK; /* reported: decoding goes on */
        }
        t.v[k] = c->slot[slot[k]];
        t.bone[k] = c->slot_bone[slot[k]];
    }
    if (s->ntri == s->captri)
        return S3_ERR_LIMIT; /* never: a triangle word makes one triangle at most */
    s->tri[s->ntri++] = t;
    return S3_OK;
}

enum s3_err t2_decode_stream(const uint8_t *p, size_t len, bool be, struct t2_vcache *c, struct t2_stream *s)
{
    memset(s, 0, sizeof *s);
    s->first = s->last = -1;
    size_t nwords = len / 2;
    while (nwords > 0 && ld_u16(p + 2 * (nwords - 1), be) == 0)
        nwords--; /* padding to the node's 8-byte boundary */
    /* the triangle list's room, once: growing it by one triangle per realloc copied the
     * list at each triangle (the square of their number where realloc cannot grow in place) */
    for (size_t w = 0; w < nwords; w++)
        s->captri += ld_u16(p + 2 * w, be) >> 15;
    s->cmd = alloc_array(nwords, sizeof *s->cmd);
    s->tri = alloc_array(s->captri, sizeof *s->tri);
    if (!s->cmd || !s->tri)
        return S3_ERR_NOMEM;
    for (size_t w = 0; w < nwords; w++) {
        uint16_t word = ld_u16(p + 2 * w, be);
        struct t2_cmd *cmd = &s->cmd[s->ncmd++];
        cmd->word = word;
        if (word & 0x8000) {
            uint32_t slot[3] = {word & 31u, (word >> 5) & 31u, (word >> 10) & 31u};
            *cmd = (struct t2_cmd){T2_CMD_TRI, word, slot[0], slot[1], slot[2]};
            enum s3_err e = triangle(c, s, w, slot);
            if (e != S3_OK)
                return e;
        } else if (word & 0x4000) {
            *cmd = (struct t2_cmd){T2_CMD_BONE, word, word & 0xFFu, 0, 0};
            c->bone = (int32_t)(word & 0xFF);
        } else if (word & 0x2000) {
            *cmd = (struct t2_cmd){T2_CMD_LOAD, word, word & 31u, (word >> 5) & 31u, 0};
            load(c, s, w, word & 31u, (word >> 5) & 31u);
        } else {
            cmd->kind = T2_CMD_UNKNOWN;
            report(s, "word %zu: 0x%04x has no known command bit", w, word);
        }
    }
    return S3_OK;
}

void t2_stream_free(struct t2_stream *s)
{
    free(s->cmd);
    free(s->tri);
    for (size_t i = 0; i < s->nerr; i++)
        free(s->err[i]);
    memset(s, 0, sizeof *s);
}

void t2_deinterleave(const uint8_t *data, uint32_t elem_size, uint32_t count, uint8_t *out)
{
    /* elements outside: the work is elem_size × count, the array's bytes. With the element
     * size outside, an empty array of a huge element size (a file may say 2^32-1 × 0) spun
     * through billions of empty passes: seconds per listing. */
    for (uint32_t i = 0; i < count; i++)
        for (uint32_t k = 0; k < elem_size; k++)
            out[(size_t)i * elem_size + k] = data[(size_t)k * count + i];
}
