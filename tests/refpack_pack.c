#include "refpack_pack.h"

#include <stdlib.h>
#include <string.h>

#include "fixture.h"

#define WINDOW 131072
#define MAX_LEN 1028
#define HASH_BITS 15

struct packer {
    struct fxbuf out;
    const uint8_t *in;
    struct rp_pack_stats *st;
};

/* Literal runs of 4..112 bytes (multiples of 4), leaving 0..3 for the next opcode. */
static void flush_runs(struct packer *p, size_t *lit_at, size_t upto)
{
    while (upto - *lit_at >= 4) {
        size_t n = (upto - *lit_at) & ~(size_t)3;
        if (n > 112)
            n = 112;
        fx_u8(&p->out, (uint8_t)(0xE0 | (n / 4 - 1)));
        fx_put(&p->out, p->in + *lit_at, n);
        *lit_at += n;
        p->st->lit++;
    }
}

static void emit_match(struct packer *p, size_t *lit_at, size_t pos, size_t len, size_t dist)
{
    flush_runs(p, lit_at, pos);
    size_t l = pos - *lit_at, d = dist - 1;
    if (len <= 10 && dist <= 1024) {
        fx_u8(&p->out, (uint8_t)(((d >> 3) & 0x60) | ((len - 3) << 2) | l));
        fx_u8(&p->out, (uint8_t)(d & 0xFF));
        p->st->op2++;
    } else if (len <= 67 && dist <= 16384) {
        fx_u8(&p->out, (uint8_t)(0x80 | (len - 4)));
        fx_u8(&p->out, (uint8_t)((l << 6) | (d >> 8)));
        fx_u8(&p->out, (uint8_t)(d & 0xFF));
        p->st->op3++;
    } else {
        fx_u8(&p->out, (uint8_t)(0xC0 | ((d >> 16) << 4) | (((len - 5) >> 8) << 2) | l));
        fx_u8(&p->out, (uint8_t)((d >> 8) & 0xFF));
        fx_u8(&p->out, (uint8_t)(d & 0xFF));
        fx_u8(&p->out, (uint8_t)((len - 5) & 0xFF));
        p->st->op4++;
    }
    fx_put(&p->out, p->in + *lit_at, l);
    *lit_at = pos + len;
}

static uint32_t hash3(const uint8_t *p)
{
    return ((uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2]) * 2654435761u >> (32 - HASH_BITS);
}

/* Whether a match of len at dist can be written by some opcode. */
static bool encodable(size_t len, size_t dist)
{
    return (len >= 3 && len <= 10 && dist <= 1024) || (len >= 4 && len <= 67 && dist <= 16384) ||
           (len >= 5 && len <= MAX_LEN && dist <= WINDOW);
}

uint8_t *rp_pack(const uint8_t *in, size_t n, const struct rp_pack_opts *o, size_t *out_len,
                 struct rp_pack_stats *stats)
{
    struct rp_pack_stats dummy;
    struct packer p = {.in = in, .st = stats ? stats : &dummy};
    memset(p.st, 0, sizeof *p.st);
    size_t width = o && o->four_byte_sizes ? 4 : 3;
    bool two = o && o->stored_size;
    fx_u8(&p.out, (uint8_t)((width == 4 ? 0x80 : 0) | (two ? 0x01 : 0) | 0x10));
    fx_u8(&p.out, 0xFB);
    size_t csize_at = p.out.len;
    for (int f = 0; f < (two ? 2 : 1); f++)
        for (size_t i = width; i-- > 0;)
            fx_u8(&p.out, (uint8_t)(n >> (8 * i)));
    long *head = malloc(sizeof(long) << HASH_BITS);
    for (size_t i = 0; i < (1u << HASH_BITS); i++)
        head[i] = -1;
    size_t pos = 0, lit_at = 0;
    while (pos + 3 <= n) {
        uint32_t h = hash3(in + pos);
        long cand = head[h];
        head[h] = (long)pos;
        size_t len = 0, dist = 0;
        if (cand >= 0 && pos - (size_t)cand <= WINDOW) {
            dist = pos - (size_t)cand;
            while (len < MAX_LEN && pos + len < n && in[(size_t)cand + len] == in[pos + len])
                len++;
        }
        if (len >= 3 && encodable(len, dist)) {
            emit_match(&p, &lit_at, pos, len, dist);
            for (size_t k = 1; k < len && pos + k + 3 <= n; k++)
                head[hash3(in + pos + k)] = (long)(pos + k);
            pos += len;
        } else {
            pos++;
        }
    }
    free(head);
    flush_runs(&p, &lit_at, n);
    if (!(o && o->no_end_code) || lit_at < n) {
        fx_u8(&p.out, (uint8_t)(0xFC | (n - lit_at)));
        fx_put(&p.out, in + lit_at, n - lit_at);
        p.st->end++;
    }
    if (two) {
        size_t c = p.out.len;
        for (size_t i = 0; i < width; i++)
            p.out.p[csize_at + i] = (uint8_t)(c >> (8 * (width - 1 - i)));
    }
    *out_len = p.out.len;
    return p.out.p;
}
