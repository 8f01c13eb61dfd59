/* Turok 1 geometry sections as the engine draws them (docs/formats/t2fs.md, "Turok 1
 * sections: vertices and the polygon stream"). A section is {section, usPStream (u16
 * words), usVertices (16-byte vertices stored as byte planes)}. The engine loads the
 * section's vertices into a cache of C slots in steps and, after each load, draws one run
 * of triangles whose words name slots:
 *   - load 0 puts min(count, C) vertices into slots 0..; every later load puts
 *     min(remaining, C/2) into slot 0.. (odd loads) or slot C/2.. (even loads);
 *   - a word holds three slot fields (lowest bits first) and a last-in-run flag; a
 *     flagged word is drawn alone and ends the run, an unflagged one is paired with the
 *     next word, and the pair ends the run when that word carries the flag;
 *   - every word and every vertex is used exactly when the last load's run ends.
 * Two layouts exist (16 slots, 4-bit fields, flag bit 12; 32 slots, 5-bit fields, flag
 * bit 15): the one under which the stream is consumed exactly is the section's. */
#include "parse/t2fs/t1_section.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/base/err.h"
#include "parse/base/reader.h"

const struct t1_layout t1_layouts[T1_NLAYOUTS] = {
    {16, 4, 12, "16", "16 slots, 4-bit fields, flag bit 12"},
    {32, 5, 15, "32", "32 slots, 5-bit fields, flag bit 15"},
};

uint32_t t1_load_count(uint64_t count, unsigned slots)
{
    if (count == 0)
        return 0;
    if (count <= slots)
        return 1;
    uint64_t half = slots / 2;
    return (uint32_t)(1 + (count - slots + half - 1) / half);
}

void t1_vertices(const uint8_t *planes, uint32_t count, bool be, uint8_t *records, struct t1_vertex *out)
{
    for (uint32_t j = 0; j < T1_VERTEX_SIZE; j++)
        for (uint32_t i = 0; i < count; i++)
            records[(size_t)i * T1_VERTEX_SIZE + j] = planes[(size_t)j * count + i];
    if (!out)
        return;
    for (uint32_t i = 0; i < count; i++) {
        const uint8_t *r = records + (size_t)i * T1_VERTEX_SIZE;
        out[i] = (struct t1_vertex){(int16_t)ld_u16(r, be),     (int16_t)ld_u16(r + 2, be),
                                    (int16_t)ld_u16(r + 4, be), ld_u16(r + 6, be),
                                    (int16_t)ld_u16(r + 8, be), (int16_t)ld_u16(r + 10, be),
                                    {r[12], r[13], r[14], r[15]}};
    }
}

void t1_stream_free(struct t1_stream *s)
{
    free(s->cmd);
    free(s->tri);
    memset(s, 0, sizeof *s);
}

/* The decoder's state: the cache, where it is in the stream and in the vertices. */
struct t1_run {
    const uint8_t *p;
    size_t nwords, w;
    bool be;
    const struct t1_layout *L;
    int64_t slot[32]; /* section vertex in each slot, -1 = never loaded */
    struct t1_stream *out;
};

/* One triangle word: its slots must hold vertices. 0, or 1 with err. */
static int draw(struct t1_run *r, bool *flag, char *err, size_t errlen)
{
    uint16_t word = ld_u16(r->p + 2 * r->w, r->be);
    unsigned mask = (1u << r->L->field_bits) - 1;
    struct t1_cmd c = {.kind = T1_CMD_TRI, .word = (uint32_t)r->w};
    uint32_t *t = r->out->tri[r->out->ntri];
    for (int k = 0; k < 3; k++) {
        c.s[k] = (uint8_t)(word >> (k * r->L->field_bits) & mask);
        if (r->slot[c.s[k]] < 0) {
            snprintf(err, errlen, "word %zu (0x%04x): slot %u used before any vertex was loaded into it", r->w,
                     word, c.s[k]);
            return 1;
        }
        t[k] = (uint32_t)r->slot[c.s[k]];
    }
    *flag = (word >> r->L->flag_bit & 1) != 0;
    c.run_end = *flag;
    r->out->cmd[r->out->ncmd++] = c;
    r->out->ntri++;
    r->w++;
    return 0;
}

/* The run after load `load`: single flagged words, or pairs. 0, or 1 with err. */
static int run(struct t1_run *r, uint32_t load, char *err, size_t errlen)
{
    for (;;) {
        bool flag;
        if (r->w >= r->nwords) {
            snprintf(err, errlen, "word %zu: the stream ends inside the run of load %u (it has %zu words)", r->w,
                     load, r->nwords);
            return 1;
        }
        if (draw(r, &flag, err, errlen))
            return 1;
        if (flag)
            return 0;
        if (r->w >= r->nwords) {
            snprintf(err, errlen, "word %zu: the stream ends inside a pair of triangles (it has %zu words)", r->w,
                     r->nwords);
            return 1;
        }
        if (draw(r, &flag, err, errlen))
            return 1;
        if (flag)
            return 0;
    }
}

enum s3_err t1_decode_stream(const uint8_t *p, size_t nwords, bool be, uint32_t nverts, const struct t1_layout *L,
                             struct t1_stream *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    uint32_t loads = t1_load_count(nverts, L->slots);
    /* Each load needs at least one word of its run: more loads than words cannot fit,
     * and the bound keeps the command list proportional to the stream. */
    size_t maxcmd = nwords + (loads < nwords + 1 ? loads : nwords + 1);
    out->cmd = alloc_array(maxcmd, sizeof *out->cmd);
    out->tri = alloc_array(nwords, sizeof *out->tri);
    if (!out->cmd || !out->tri) {
        t1_stream_free(out);
        return s3_fail(S3_ERR_NOMEM, err, errlen, "out of memory");
    }
    struct t1_run r = {p, nwords, 0, be, L, {0}, out};
    for (unsigned k = 0; k < 32; k++)
        r.slot[k] = -1;
    uint32_t loaded = 0, half = L->slots / 2;
    int rc = 0;
    for (uint32_t l = 0; l < loads && rc == 0; l++) {
        if (r.w >= nwords) {
            snprintf(err, errlen,
                     "word %zu: the stream ends before load %u (%u vertices need %u loads, each followed by a run)",
                     r.w, l, nverts, loads);
            rc = 1;
            break;
        }
        uint32_t n = l == 0 ? (nverts < L->slots ? nverts : L->slots)
                            : (nverts - loaded < half ? nverts - loaded : half);
        uint32_t at = l == 0 || l % 2 == 1 ? 0 : half;
        for (uint32_t k = 0; k < n; k++)
            r.slot[at + k] = loaded + k;
        out->cmd[out->ncmd++] = (struct t1_cmd){.kind = T1_CMD_LOAD, .first = loaded, .count = n, .slot = at};
        loaded += n;
        out->loads++;
        rc = run(&r, l, err, errlen);
    }
    if (rc == 0 && r.w < nwords) {
        if (nverts == 0)
            snprintf(err, errlen, "word 0: the section has 0 vertices (no load), yet the stream has %zu words",
                     nwords);
        else
            snprintf(err, errlen, "word %zu: the stream goes on after the last run (%zu more words; %u vertices, %u loads)",
                     r.w, nwords - r.w, nverts, loads);
        rc = 1;
    }
    if (rc)
        t1_stream_free(out);
    return rc ? S3_ERR_FORMAT : S3_OK;
}

enum s3_err t1_section_decode(const uint8_t *words, size_t nwords, const uint8_t *vplanes, uint32_t nverts, bool be,
                              struct t1_section *s)
{
    memset(s, 0, sizeof *s);
    s->layout = -1;
    s->nvert = nverts;
    s->records = alloc_array(nverts, T1_VERTEX_SIZE);
    s->vert = alloc_array(nverts, sizeof *s->vert);
    if (!s->records || !s->vert) {
        t1_section_free(s);
        return S3_ERR_NOMEM;
    }
    t1_vertices(vplanes, nverts, be, s->records, s->vert);
    char why[T1_NLAYOUTS][T1_ERR / 2];
    bool fits[T1_NLAYOUTS];
    struct t1_stream st[T1_NLAYOUTS];
    for (int k = 0; k < T1_NLAYOUTS; k++) {
        enum s3_err e = t1_decode_stream(words, nwords, be, nverts, &t1_layouts[k], &st[k], why[k], sizeof why[k]);
        if (e == S3_ERR_NOMEM) {
            for (int j = 0; j < k; j++)
                t1_stream_free(&st[j]);
            t1_section_free(s);
            return e;
        }
        fits[k] = e == S3_OK;
    }
    for (int k = 0; k < T1_NLAYOUTS; k++) {
        if (fits[k] && s->layout < 0) {
            s->layout = k;
            s->st = st[k];
        } else {
            if (fits[k])
                s->ambiguous = true;
            t1_stream_free(&st[k]);
        }
    }
    if (s->layout < 0) {
        size_t len = 0;
        for (int k = 0; k < T1_NLAYOUTS && len < sizeof s->err; k++)
            len += (size_t)snprintf(s->err + len, sizeof s->err - len, "%s: %s\n", t1_layouts[k].text, why[k]);
    }
    return S3_OK;
}

void t1_section_free(struct t1_section *s)
{
    free(s->vert);
    free(s->records);
    t1_stream_free(&s->st);
    s->vert = NULL;
    s->records = NULL;
}
