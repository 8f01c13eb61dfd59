/* Field encoders and the pending-edits overlay of `-o rw` (edit.h). */
#include "fs/core/edit.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "parse/base/err.h"

/* ---- types ---- */

struct kind_name {
    const char *name;
    enum field_kind kind;
};

/* The value files' own type names (view.c's helpers) and Granny's scalar member types
 * (the Normal/Binormal kinds are shown as their integers). */
static const struct kind_name kinds[] = {
    {"u8", FIELD_U8},           {"i8", FIELD_I8},
    {"u16", FIELD_U16},         {"i16", FIELD_I16},
    {"u32", FIELD_U32},         {"i32", FIELD_I32},
    {"f32", FIELD_F32},         {"gr2.Int8", FIELD_I8},
    {"gr2.BinormalInt8", FIELD_I8}, {"gr2.UInt8", FIELD_U8},
    {"gr2.NormalUInt8", FIELD_U8}, {"gr2.Int16", FIELD_I16},
    {"gr2.BinormalInt16", FIELD_I16}, {"gr2.UInt16", FIELD_U16},
    {"gr2.NormalUInt16", FIELD_U16}, {"gr2.Int32", FIELD_I32},
    {"gr2.UInt32", FIELD_U32},  {"gr2.Real32", FIELD_F32},
};

static uint32_t kind_size(enum field_kind k)
{
    switch (k) {
    case FIELD_U8:
    case FIELD_I8:
        return 1;
    case FIELD_U16:
    case FIELD_I16:
        return 2;
    case FIELD_U64:
        return 8;
    default:
        return 4;
    }
}

enum s3_err field_type_parse(const char *xtype, uint64_t span_len, struct field_type *ft)
{
    if (!xtype)
        return S3_ERR_INVALID;
    size_t base = strcspn(xtype, "[ ");
    const char *rest = xtype + base;
    while (*rest == '[') { /* array shapes: the count comes from the span */
        const char *close = strchr(rest, ']');
        if (!close)
            return S3_ERR_INVALID;
        for (const char *p = rest + 1; p < close; p++)
            if (!isdigit((unsigned char)*p))
                return S3_ERR_INVALID;
        rest = close + 1;
    }
    if (*rest && strncmp(rest, " name=", 6) != 0) /* Granny's original member name */
        return S3_ERR_INVALID;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        if (strlen(kinds[i].name) != base || strncmp(kinds[i].name, xtype, base) != 0)
            continue;
        uint32_t size = kind_size(kinds[i].kind);
        if (span_len == 0 || span_len % size || span_len > FIELD_MAX_BYTES)
            return S3_ERR_INVALID;
        *ft = (struct field_type){kinds[i].kind, size, span_len / size};
        return S3_OK;
    }
    return S3_ERR_INVALID;
}

/* ---- encoding ---- */

static void store(uint8_t *p, uint32_t v, uint32_t size, bool be)
{
    for (uint32_t i = 0; i < size; i++) {
        uint32_t shift = 8 * (be ? size - 1 - i : i);
        p[i] = (uint8_t)(v >> shift);
    }
}

static const char *kind_label(enum field_kind k)
{
    static const char *const label[] = {"u8", "i8", "u16", "i16", "u32", "i32", "f32", "u64"};
    return label[k];
}

/* One element's text (no newline) -> its bits; S3_ERR_INVALID with why. */
static enum s3_err encode_one(enum field_kind k, const char *s, uint32_t *bits, char *why, size_t whylen)
{
    char *end;
    errno = 0;
    if (!*s) {
        snprintf(why, whylen, "an empty line is no %s", kind_label(k));
        return S3_ERR_INVALID;
    }
    if (k == FIELD_F32) {
        float f = strtof(s, &end);
        if (*end || end == s) {
            snprintf(why, whylen, "'%.40s' is not a number (f32)", s);
            return S3_ERR_INVALID;
        }
        if (isinf(f) && errno == ERANGE) {
            snprintf(why, whylen, "%.40s does not fit an f32", s);
            return S3_ERR_INVALID;
        }
        memcpy(bits, &f, 4);
        return S3_OK;
    }
    bool is_signed = k == FIELD_I8 || k == FIELD_I16 || k == FIELD_I32;
    long long lo = k == FIELD_I8 ? INT8_MIN : k == FIELD_I16 ? INT16_MIN : k == FIELD_I32 ? INT32_MIN : 0;
    unsigned long long hi = k == FIELD_U8    ? UINT8_MAX
                            : k == FIELD_I8  ? INT8_MAX
                            : k == FIELD_U16 ? UINT16_MAX
                            : k == FIELD_I16 ? INT16_MAX
                            : k == FIELD_U32 ? UINT32_MAX
                                             : INT32_MAX;
    bool neg = *s == '-';
    if (!isdigit((unsigned char)s[neg || *s == '+']) || (neg && !is_signed && strcmp(s, "-0") != 0)) {
        if (!isdigit((unsigned char)s[neg || *s == '+'])) {
            snprintf(why, whylen, "'%.40s' is not an integer (%s)", s, kind_label(k));
            return S3_ERR_INVALID;
        }
        snprintf(why, whylen, "%.40s does not fit a %s (0 to %llu)", s, kind_label(k), hi);
        return S3_ERR_INVALID;
    }
    const char *digits = s + (neg || *s == '+');
    int base = digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X') ? 16 : 10; /* never octal */
    long long v;
    if (neg) {
        v = strtoll(s, &end, base);
    } else {
        unsigned long long u = strtoull(s, &end, base);
        if (u > hi && !errno)
            errno = ERANGE;
        v = (long long)(u > hi ? hi : u);
    }
    if (*end) {
        snprintf(why, whylen, "'%.40s' is not an integer (%s)", s, kind_label(k));
        return S3_ERR_INVALID;
    }
    if (errno == ERANGE || v < lo || (v > 0 && (unsigned long long)v > hi)) {
        snprintf(why, whylen, "%.40s does not fit a %s (%lld to %llu)", s, kind_label(k), lo, hi);
        return S3_ERR_INVALID;
    }
    *bits = (uint32_t)v;
    return S3_OK;
}

/* The next blank-separated word of line [p, p+n) from *at on, into buf: 1 when one was
 * found, 0 at the line's end, -1 when it is longer than buf. */
static int take_word(const char *p, size_t n, size_t *at, char *buf, size_t buflen)
{
    while (*at < n && (p[*at] == ' ' || p[*at] == '\t' || p[*at] == '\r'))
        (*at)++;
    size_t from = *at;
    while (*at < n && p[*at] != ' ' && p[*at] != '\t' && p[*at] != '\r')
        (*at)++;
    if (*at == from)
        return 0;
    if (*at - from >= buflen)
        return -1;
    memcpy(buf, p + from, *at - from);
    buf[*at - from] = 0;
    return 1;
}

/* What walk_lines counted: values, lines, and whether a line held more than one. */
struct walked {
    uint64_t values, lines;
    bool several;
};

/* Encodes one line's values (one or more, blank-separated) at element w->values on. */
static enum s3_err walk_line(const struct field_type *ft, bool be, const char *line, size_t n, uint8_t *out,
                             struct walked *w, char *why, size_t whylen)
{
    size_t at = 0;
    uint64_t on_line = 0;
    for (;;) {
        char word[128];
        int got = take_word(line, n, &at, word, sizeof word);
        if (got < 0) {
            snprintf(why, whylen, "value %llu is too long for a %s", (unsigned long long)w->values + 1,
                     kind_label(ft->kind));
            return S3_ERR_INVALID;
        }
        if (got == 0)
            break;
        if (w->values >= ft->count) {
            if (w->several || on_line > 0)
                snprintf(why, whylen, "more than %llu values (%s)", (unsigned long long)ft->count,
                         kind_label(ft->kind));
            else
                snprintf(why, whylen, "more than %llu line%s (one %s each)", (unsigned long long)ft->count,
                         ft->count == 1 ? "" : "s", kind_label(ft->kind));
            return S3_ERR_INVALID;
        }
        uint32_t bits = 0;
        enum s3_err rc = encode_one(ft->kind, word, &bits, why, whylen);
        if (rc)
            return rc;
        if (out)
            store(out + w->values * ft->size, bits, ft->size, be);
        w->values++;
        on_line++;
    }
    if (on_line == 0) { /* a blank line is no value: the count would be ambiguous */
        snprintf(why, whylen, "an empty line is no %s", kind_label(ft->kind));
        return S3_ERR_INVALID;
    }
    w->several |= on_line > 1;
    w->lines++;
    return S3_OK;
}

/* Walks the lines of text (complete ones only when `whole` is false): each holds one or
 * more blank-separated values, the field's elements in order (a vector's or a matrix's
 * components). Stores elements in out when not NULL. */
static enum s3_err walk_lines(const struct field_type *ft, bool be, const char *text, size_t len, bool whole,
                              uint8_t *out, struct walked *w, char *why, size_t whylen)
{
    *w = (struct walked){0};
    size_t at = 0;
    while (at < len) {
        const char *nl = memchr(text + at, '\n', len - at);
        size_t n = nl ? (size_t)(nl - (text + at)) : len - at;
        if (!nl && !whole) { /* a line still being written: only a value past the count is sure */
            size_t k = 0;
            char word[2];
            if (w->values >= ft->count && take_word(text + at, n, &k, word, sizeof word) != 0)
                return walk_line(ft, be, text + at, n, out, w, why, whylen);
            break;
        }
        enum s3_err rc = walk_line(ft, be, text + at, n, out, w, why, whylen);
        if (rc)
            return rc;
        at += n + (nl ? 1 : 0);
    }
    return S3_OK;
}

enum s3_err field_encode(const struct field_type *ft, bool be, const char *text, size_t len, uint8_t *out,
                         char *why, size_t whylen)
{
    struct walked w;
    enum s3_err rc = walk_lines(ft, be, text, len, true, out, &w, why, whylen);
    if (!rc && w.values != ft->count) {
        if (w.several)
            snprintf(why, whylen, "%llu values for %llu", (unsigned long long)w.values,
                     (unsigned long long)ft->count);
        else
            snprintf(why, whylen, "%llu line%s for %llu value%s", (unsigned long long)w.lines,
                     w.lines == 1 ? "" : "s", (unsigned long long)ft->count, ft->count == 1 ? "" : "s");
        rc = S3_ERR_INVALID;
    }
    return rc;
}

enum s3_err field_check_prefix(const struct field_type *ft, const char *text, size_t len, char *why, size_t whylen)
{
    struct walked w;
    return walk_lines(ft, false, text, len, false, NULL, &w, why, whylen);
}

/* ---- tables ---- */

uint64_t table_row_cells(const struct table_field *tf)
{
    uint64_t n = tf->numbered;
    for (uint32_t c = 0; c < tf->ncols; c++)
        n += tf->cols[c].raw || tf->cols[c].derive ? 1 : tf->cols[c].count;
    return n;
}

static int hex_digit(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* A raw column's cell: exactly 2·count hex digits. */
static enum s3_err encode_raw(const struct table_col *col, const char *cell, uint8_t *rec, char *why, size_t whylen)
{
    if (strlen(cell) != 2ull * col->count) {
        snprintf(why, whylen, "'%.40s' is not %u bytes as hex", cell, col->count);
        return S3_ERR_INVALID;
    }
    for (uint32_t k = 0; k < col->count; k++) {
        int hi = hex_digit(cell[2 * k]), lo = hex_digit(cell[2 * k + 1]);
        if (hi < 0 || lo < 0) {
            snprintf(why, whylen, "'%.40s' is not %u bytes as hex", cell, col->count);
            return S3_ERR_INVALID;
        }
        rec[col->offset + k] = (uint8_t)(hi << 4 | lo);
    }
    return S3_OK;
}

/* One typed cell into its element; an f32 NaN over a NaN keeps the old bits (the text
 * "nan" does not say which NaN). */
/* A u64 cell (decimal, or hex after 0x) into its 8 bytes. */
static enum s3_err encode_u64(const struct table_field *tf, const char *cell, uint8_t *at, char *why, size_t whylen)
{
    int base = cell[0] == '0' && (cell[1] == 'x' || cell[1] == 'X') ? 16 : 10; /* never octal */
    const char *digits = cell + (base == 16 ? 2 : 0);
    char *end;
    errno = 0;
    unsigned long long v = isxdigit((unsigned char)digits[0]) ? strtoull(digits, &end, base) : 0;
    if (!isxdigit((unsigned char)digits[0]) || *end || (base == 10 && !isdigit((unsigned char)digits[0]))) {
        snprintf(why, whylen, "'%.40s' is not an integer (u64)", cell);
        return S3_ERR_INVALID;
    }
    if (errno == ERANGE) {
        snprintf(why, whylen, "%.40s does not fit a u64", cell);
        return S3_ERR_INVALID;
    }
    for (uint32_t i = 0; i < 8; i++)
        at[i] = (uint8_t)(v >> 8 * (tf->be ? 7 - i : i));
    return S3_OK;
}

static enum s3_err encode_cell(const struct table_field *tf, const struct table_col *col, uint32_t k, const char *cell,
                               uint8_t *rec, char *why, size_t whylen)
{
    if (col->kind == FIELD_U64)
        return encode_u64(tf, cell, rec + col->offset + (size_t)k * 8, why, whylen);
    uint32_t size = kind_size(col->kind), bits;
    enum s3_err rc = encode_one(col->kind, cell, &bits, why, whylen);
    if (rc)
        return rc;
    uint8_t *at = rec + col->offset + (size_t)k * size;
    if (col->kind == FIELD_F32) {
        uint32_t old = 0;
        for (uint32_t i = 0; i < 4; i++)
            old |= (uint32_t)at[i] << 8 * (tf->be ? 3 - i : i);
        float f_old, f_new;
        memcpy(&f_old, &old, 4);
        memcpy(&f_new, &bits, 4);
        if (isnan(f_old) && isnan(f_new))
            return S3_OK;
    }
    store(at, bits, size, tf->be);
    return S3_OK;
}

/* [p, p+n) without surrounding blanks into buf; false when it is longer than buf. */
static bool take_trimmed(const char *p, size_t n, char *buf, size_t buflen)
{
    while (n && (*p == ' ' || *p == '\t'))
        p++, n--;
    while (n && (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '\r'))
        n--;
    if (n >= buflen)
        return false;
    memcpy(buf, p, n);
    buf[n] = 0;
    return true;
}

/* The next cell of a row (blanks around it dropped) into buf; false when it is too long. */
static bool next_cell(const char *row, size_t n, size_t *at, char *buf, size_t buflen)
{
    const char *comma = memchr(row + *at, ',', n - *at);
    size_t end = comma ? (size_t)(comma - row) : n;
    bool ok = take_trimmed(row + *at, end - *at, buf, buflen);
    *at = comma ? end + 1 : n + 1;
    return ok;
}

/* A derived column's cell as written: what the record's old bytes (old) or its new ones
 * (rec) show, else S3_ERR_INVALID. */
static enum s3_err check_derived(const struct table_col *col, uint32_t r, const char *cell, const uint8_t *old,
                                 const uint8_t *rec, char *why, size_t whylen)
{
    char was[128], now[128];
    col->derive(old, col->derive_ctx, was, sizeof was);
    col->derive(rec, col->derive_ctx, now, sizeof now);
    if (strcmp(cell, was) == 0 || strcmp(cell, now) == 0)
        return S3_OK;
    snprintf(why, whylen, "row %" PRIu32 ": %s is not stored but shown from the record's other cells ('%.40s')",
             r + 1, col->name ? col->name : "a derived cell", now);
    return S3_ERR_INVALID;
}

/* One row of record r: its number (when numbered) and every column's cells; `old` holds
 * the record's bytes of before when a column is derived (checked once the rest is in). */
static enum s3_err encode_row(const struct table_field *tf, uint32_t r, const char *row, size_t n, uint8_t *rec,
                              uint8_t *old, char *why, size_t whylen)
{
    size_t at = 0;
    uint64_t cells = table_row_cells(tf), seen = 0;
    char cell[128];
    for (size_t i = 0; i < n; i++)
        seen += row[i] == ',';
    if (seen + 1 != cells) {
        snprintf(why, whylen, "row %" PRIu32 ": %llu cells for %llu", r + 1, (unsigned long long)seen + 1,
                 (unsigned long long)cells);
        return S3_ERR_INVALID;
    }
    if (tf->numbered) {
        char want[16];
        snprintf(want, sizeof want, "%" PRIu32, r);
        if (!next_cell(row, n, &at, cell, sizeof cell) || strcmp(cell, want) != 0) {
            snprintf(why, whylen, "row %" PRIu32 ": its number must stay %s (rows are records, in order)", r + 1,
                     want);
            return S3_ERR_INVALID;
        }
    }
    char derived[8][128];
    uint32_t nderived = 0;
    if (old)
        memcpy(old, rec, tf->stride);
    for (uint32_t c = 0; c < tf->ncols; c++) {
        const struct table_col *col = &tf->cols[c];
        for (uint32_t k = 0; k < (col->raw || col->derive ? 1 : col->count); k++) {
            enum s3_err rc = S3_OK;
            if (!next_cell(row, n, &at, cell, sizeof cell)) {
                snprintf(why, whylen, "row %" PRIu32 ": a cell is too long", r + 1);
                return S3_ERR_INVALID;
            }
            if (col->derive) { /* checked once every stored cell is in */
                if (nderived < sizeof derived / sizeof derived[0])
                    memcpy(derived[nderived++], cell, sizeof cell);
                continue;
            }
            rc = col->raw ? encode_raw(col, cell, rec, why, whylen) : encode_cell(tf, col, k, cell, rec, why, whylen);
            if (rc) {
                char inner[200];
                snprintf(inner, sizeof inner, "%s", why);
                snprintf(why, whylen, "row %" PRIu32 ": %s", r + 1, inner);
                return rc;
            }
        }
    }
    for (uint32_t c = 0, d = 0; c < tf->ncols; c++) {
        if (!tf->cols[c].derive || d >= nderived)
            continue;
        enum s3_err rc = check_derived(&tf->cols[c], r, derived[d++], old, rec, why, whylen);
        if (rc)
            return rc;
    }
    return S3_OK;
}

/* Whether a column of tf is derived (then encode_row needs the record's old bytes). */
static bool has_derived(const struct table_field *tf)
{
    for (uint32_t c = 0; c < tf->ncols; c++)
        if (tf->cols[c].derive)
            return true;
    return false;
}

enum s3_err table_encode(const struct table_field *tf, const char *text, size_t len, uint8_t *recs, char *why,
                         size_t whylen)
{
    if (tf->encode) /* rows of several sizes: the view knows where each lies */
        return tf->encode(tf, text, len, recs, why, whylen);
    size_t at = 0;
    uint64_t rows = 0;
    bool header = true;
    uint8_t *old = has_derived(tf) ? malloc(tf->stride ? tf->stride : 1) : NULL;
    if (has_derived(tf) && !old) {
        snprintf(why, whylen, "out of memory");
        return S3_ERR_NOMEM;
    }
    while (at < len) {
        const char *nl = memchr(text + at, '\n', len - at);
        size_t n = nl ? (size_t)(nl - (text + at)) : len - at;
        const char *line = text + at;
        if (n && line[n - 1] == '\r')
            n--;
        at += (nl ? (size_t)(nl - (text + at)) + 1 : len - at);
        if (header) {
            if (n != strlen(tf->header) || memcmp(line, tf->header, n) != 0) {
                snprintf(why, whylen, "the first line must stay the header (%.60s)", tf->header);
                free(old);
                return S3_ERR_INVALID;
            }
            header = false;
            continue;
        }
        if (rows >= tf->nrec) {
            snprintf(why, whylen, "more than %" PRIu32 " rows (one a record)", tf->nrec);
            free(old);
            return S3_ERR_INVALID;
        }
        enum s3_err rc = encode_row(tf, (uint32_t)rows, line, n, recs + rows * tf->stride, old, why, whylen);
        if (rc) {
            free(old);
            return rc;
        }
        rows++;
    }
    free(old);
    if (header || rows != tf->nrec) {
        snprintf(why, whylen, "%llu rows for %" PRIu32 " records", (unsigned long long)rows, tf->nrec);
        return S3_ERR_INVALID;
    }
    return S3_OK;
}

/* ---- the overlay ---- */

/* The first edit that ends at or after off (touching counts). */
static size_t first_reaching(const struct edits *e, uint64_t off)
{
    size_t lo = 0, hi = e->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (e->e[mid].off + e->e[mid].len < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static uint64_t fail_put_in; /* edits_test_fail_put: puts left before the failing one */

void edits_test_fail_put(uint64_t k)
{
    __atomic_store_n(&fail_put_in, k, __ATOMIC_RELEASE);
}

/* The failure a test asked for: this put is the k-th. */
static bool put_fails(void)
{
    uint64_t k = __atomic_load_n(&fail_put_in, __ATOMIC_ACQUIRE);
    while (k && !__atomic_compare_exchange_n(&fail_put_in, &k, k - 1, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        ;
    return k == 1;
}

enum s3_err edits_put(struct edits *e, uint64_t off, const void *b, size_t len)
{
    if (len == 0)
        return S3_OK;
    if (put_fails())
        return S3_ERR_NOMEM;
    size_t i = first_reaching(e, off), j = i;
    while (j < e->n && e->e[j].off <= off + len)
        j++;
    /* edits i..j-1 overlap or touch [off, off+len): they become one */
    if (i == j) {
        if (grow_array(&e->e, &e->cap, e->n + 1, sizeof *e->e))
            return S3_ERR_NOMEM;
        uint8_t *copy = malloc(len);
        if (!copy)
            return S3_ERR_NOMEM;
        memcpy(copy, b, len);
        memmove(e->e + i + 1, e->e + i, (e->n - i) * sizeof *e->e);
        e->e[i] = (struct edit){off, len, len, copy};
        e->n++;
        return S3_OK;
    }
    struct edit *first = &e->e[i], *last = &e->e[j - 1];
    uint64_t start = first->off < off ? first->off : off;
    uint64_t end = last->off + last->len > off + len ? last->off + last->len : off + len;
    size_t need = (size_t)(end - start);
    uint8_t *buf = first->bytes;
    size_t cap = first->cap;
    if (start != first->off || need > cap) {
        /* grow geometrically so that sequential writes cost amortised linear time */
        size_t ncap = need > 2 * cap ? need : 2 * cap;
        buf = malloc(ncap);
        if (!buf)
            return S3_ERR_NOMEM;
        cap = ncap;
        memcpy(buf + (first->off - start), first->bytes, first->len);
        free(first->bytes);
    }
    for (size_t k = i + 1; k < j; k++) {
        memcpy(buf + (e->e[k].off - start), e->e[k].bytes, e->e[k].len);
        free(e->e[k].bytes);
    }
    memcpy(buf + (off - start), b, len);
    *first = (struct edit){start, need, cap, buf};
    memmove(e->e + i + 1, e->e + j, (e->n - j) * sizeof *e->e);
    e->n -= j - i - 1;
    return S3_OK;
}

void edits_undo_begin(const struct edits *e, struct edits_undo *u)
{
    u->tail_len = e->tail_len;
    u->n = 0;
}

enum s3_err edits_put_undoable(struct edits *e, struct edits_undo *u, uint64_t off, const void *b, size_t len,
                               const uint8_t *file_bytes)
{
    if (u->n == EDITS_UNDO_PUTS || len > EDITS_UNDO_BYTES)
        return S3_ERR_LIMIT;
    struct undo_put *p = &u->put[u->n];
    size_t i = first_reaching(e, off);
    p->fresh = len > 0 && !(i < e->n && e->e[i].off <= off + len);
    p->off = off;
    p->len = (uint32_t)len;
    memcpy(p->was, file_bytes, len);
    edits_overlay(e, off, p->was, len);
    enum s3_err rc = edits_put(e, off, b, len);
    if (rc == S3_OK)
        u->n++;
    return rc;
}

/* Edit i removed (its bytes freed). */
static void remove_edit(struct edits *e, size_t i)
{
    free(e->e[i].bytes);
    memmove(e->e + i, e->e + i + 1, (e->n - i - 1) * sizeof *e->e);
    e->n--;
}

void edits_undo(struct edits *e, const struct edits_undo *u)
{
    for (unsigned k = u->n; k-- > 0;) {
        const struct undo_put *p = &u->put[k];
        size_t i = first_reaching(e, p->off);
        if (p->fresh && i < e->n && e->e[i].off == p->off && e->e[i].len == p->len)
            remove_edit(e, i); /* nothing merged into it since: gone as it came */
        else /* inside one edit now (puts merge what they touch): no allocation */
            (void)edits_put(e, p->off, p->was, p->len);
    }
    edits_cut_tail(e, u->tail_len);
}

bool edits_touch(const struct edits *e, uint64_t off, uint64_t len)
{
    size_t i = first_reaching(e, off + 1);
    return i < e->n && e->e[i].off < off + len && e->e[i].off + e->e[i].len > off;
}

void edits_cut_tail(struct edits *e, size_t len)
{
    if (len < e->tail_len)
        e->tail_len = len;
    while (e->nholes && e->holes[e->nholes - 1].from >= len) /* holes past the end go */
        e->nholes--;
    if (e->nholes && e->holes[e->nholes - 1].to > len)
        e->holes[e->nholes - 1].to = len;
}

enum s3_err edits_tail_hole(struct edits *e, uint64_t from, uint64_t to)
{
    if (to > e->tail_len)
        to = e->tail_len;
    if (from >= to)
        return S3_OK;
    if (grow_array(&e->holes, &e->capholes, e->nholes + 1, sizeof *e->holes))
        return S3_ERR_NOMEM;
    size_t i = 0, hi = e->nholes; /* the first hole reaching from */
    while (i < hi) {
        size_t mid = i + (hi - i) / 2;
        if (e->holes[mid].to < from)
            i = mid + 1;
        else
            hi = mid;
    }
    size_t j = i;
    while (j < e->nholes && e->holes[j].from <= to) { /* overlapping or touching: one */
        from = e->holes[j].from < from ? e->holes[j].from : from;
        to = e->holes[j].to > to ? e->holes[j].to : to;
        j++;
    }
    if (j == i) {
        memmove(e->holes + i + 1, e->holes + i, (e->nholes - i) * sizeof *e->holes);
        e->nholes++;
    } else {
        memmove(e->holes + i + 1, e->holes + j, (e->nholes - j) * sizeof *e->holes);
        e->nholes -= j - i - 1;
    }
    e->holes[i] = (struct tail_hole){from, to};
    return S3_OK;
}

uint64_t edits_tail_written(const struct edits *e, uint64_t pos)
{
    uint64_t gone = 0;
    for (size_t i = 0; i < e->nholes && e->holes[i].to <= pos; i++)
        gone += e->holes[i].to - e->holes[i].from;
    return pos - gone;
}

/* The tail's bytes in holes. */
static uint64_t hole_bytes(const struct edits *e)
{
    return edits_tail_written(e, e->tail_len) <= e->tail_len ? e->tail_len - edits_tail_written(e, e->tail_len) : 0;
}

void edits_spill(struct edits *e, int dirfd)
{
    e->spill_dir = dirfd + 1;
}

/* The reason of the OS call that just failed (errno; ENOSPC stays NOSPACE). */
static enum s3_err os_err(void)
{
    return errno ? s3_err_of_errno(errno) : S3_ERR_IO;
}

enum s3_err edits_scratch(int dirfd, int *fd)
{
    *fd = openat(dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (*fd >= 0)
        return S3_OK;
    if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
        return os_err();
    char name[64];
    for (unsigned k = 0; k < 100; k++) {
        snprintf(name, sizeof name, ".s3rig-spill-%ld-%u", (long)getpid(), k);
        *fd = openat(dirfd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (*fd >= 0) {
            unlinkat(dirfd, name, 0);
            return S3_OK;
        }
        if (errno != EEXIST)
            break;
    }
    return os_err();
}

/* All n bytes of p to fd at offset at (EINTR and short writes retried). */
static enum s3_err write_at(int fd, const uint8_t *p, size_t n, uint64_t at)
{
    while (n) {
        ssize_t w = pwrite(fd, p, n, (off_t)at);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return os_err();
        }
        p += w;
        n -= (size_t)w;
        at += (uint64_t)w;
    }
    return S3_OK;
}

enum s3_err edits_append(struct edits *e, const void *b, size_t len)
{
    if (len > SIZE_MAX / 2 - e->tail_len)
        return S3_ERR_NOMEM;
    if (e->spill_dir) {
        if (!e->tail_fd) {
            int fd;
            enum s3_err rc = edits_scratch(e->spill_dir - 1, &fd);
            if (rc)
                return rc;
            e->tail_fd = fd + 1;
        }
        enum s3_err rc = write_at(e->tail_fd - 1, b, len, e->tail_len);
        if (rc) /* the tail stays as it was: what follows its length is not read */
            return rc;
        e->tail_len += len;
        return S3_OK;
    }
    if (e->tail_len + len > e->tail_cap) {
        size_t cap = e->tail_len + len > 2 * e->tail_cap ? e->tail_len + len : 2 * e->tail_cap;
        uint8_t *n = realloc(e->tail, cap);
        if (!n)
            return S3_ERR_NOMEM;
        e->tail = n;
        e->tail_cap = cap;
    }
    memcpy(e->tail + e->tail_len, b, len);
    e->tail_len += len;
    return S3_OK;
}

enum s3_err edits_splice(struct edits *e, uint64_t from, uint64_t to, uint8_t *b, size_t len)
{
    if (e->splice_to > e->splice_from || to <= from)
        return S3_ERR_BUSY;
    e->splice_from = from;
    e->splice_to = to;
    e->splice = b;
    e->splice_len = len;
    return S3_OK;
}

enum s3_err edits_splice_file(struct edits *e, uint64_t from, uint64_t to, int fd, size_t len)
{
    if (e->splice_to > e->splice_from || to <= from)
        return S3_ERR_BUSY;
    e->splice_from = from;
    e->splice_to = to;
    e->splice_fd = fd + 1;
    e->splice_len = len;
    return S3_OK;
}

uint64_t edits_mem_bytes(const struct edits *e)
{
    uint64_t total = (e->tail_fd ? 0 : e->tail_len) + (e->splice_fd ? 0 : e->splice_len);
    for (size_t i = 0; i < e->n; i++)
        total += e->e[i].len;
    return total;
}

uint64_t edits_bytes(const struct edits *e)
{
    uint64_t total = e->tail_len - hole_bytes(e) + e->splice_len;
    for (size_t i = 0; i < e->n; i++)
        total += e->e[i].len;
    return total;
}

void edits_drop_splice(struct edits *e)
{
    free(e->splice);
    if (e->splice_fd)
        close(e->splice_fd - 1);
    e->splice = NULL;
    e->splice_fd = 0;
    e->splice_from = e->splice_to = 0;
    e->splice_len = 0;
}

void edits_clear(struct edits *e)
{
    for (size_t i = 0; i < e->n; i++)
        free(e->e[i].bytes);
    free(e->e);
    free(e->tail);
    free(e->splice);
    free(e->holes);
    if (e->tail_fd)
        close(e->tail_fd - 1);
    if (e->splice_fd)
        close(e->splice_fd - 1);
    int spill = e->spill_dir;
    memset(e, 0, sizeof *e);
    e->spill_dir = spill;
}

/* ---- writing ---- */

#define CHUNK (1u << 20)

/* Write-back of the new file is started every WRITEBACK_STEP bytes while it is being
 * written, so that the disk works while we copy and the fsync after us waits only for
 * the last piece (measured on ext4: copy + fsync of 100 MB 65 ms at once, 41 ms so). */
#define WRITEBACK_STEP (8u << 20)

/* The new file being written from its start: where the next byte goes, and how far its
 * write-back has been started. */
struct out {
    int fd;
    uint64_t at, started;
};

/* Starts the write-back of what was written since the last time, once that is a step
 * (a hint: a file system without it is only slower, so its failure is no error). */
static void start_writeback(struct out *o)
{
    if (o->at - o->started < WRITEBACK_STEP)
        return;
    (void)sync_file_range(o->fd, (off_t)o->started, (off_t)(o->at - o->started), SYNC_FILE_RANGE_WRITE);
    o->started = o->at;
}

static enum s3_err out_put(struct out *o, const uint8_t *p, size_t n)
{
    enum s3_err rc = write_at(o->fd, p, n, o->at);
    if (!rc) {
        o->at += n;
        start_writeback(o);
    }
    return rc;
}

/* The edits' bytes that fall in [pos, pos+n) laid over buf. */
static void overlay(const struct edits *e, uint64_t pos, uint8_t *buf, size_t n)
{
    for (size_t i = first_reaching(e, pos + 1); i < e->n && e->e[i].off < pos + n; i++) {
        const struct edit *d = &e->e[i];
        uint64_t from = d->off > pos ? d->off : pos;
        uint64_t to = d->off + d->len < pos + n ? d->off + d->len : pos + n;
        if (from < to)
            memcpy(buf + (from - pos), d->bytes + (from - d->off), (size_t)(to - from));
    }
}

void edits_overlay(const struct edits *e, uint64_t pos, uint8_t *buf, size_t n)
{
    overlay(e, pos, buf, n);
}

/* Where the bytes from pos on stop being a plain copy: the next edit or CRC range (pos
 * itself when one covers pos). */
static uint64_t clean_until(const struct edits *e, const struct crc_fix *fix, size_t nfix, uint64_t pos,
                            uint64_t end)
{
    size_t i = first_reaching(e, pos + 1);
    if (i < e->n && e->e[i].off < end)
        end = e->e[i].off > pos ? e->e[i].off : pos;
    for (size_t k = 0; k < nfix; k++) {
        if (fix[k].from <= pos && pos < fix[k].to)
            return pos;
        if (fix[k].from > pos && fix[k].from < end)
            end = fix[k].from;
    }
    return end;
}

/* Copies [pos, to) of in_fd to the new file inside the kernel (no trip through our
 * buffers; a reflink where the file system shares blocks), a write-back step at a time.
 * *cannot: the file systems cannot (nothing copied: the caller copies). */
static enum s3_err copy_in_kernel(int in_fd, uint64_t pos, uint64_t to, struct out *o, bool *cannot)
{
    *cannot = false;
    loff_t from = (loff_t)pos;
    while ((uint64_t)from < to) {
        uint64_t left = to - (uint64_t)from;
        loff_t at = (loff_t)o->at;
        ssize_t n = copy_file_range(in_fd, &from, o->fd, &at, left < WRITEBACK_STEP ? (size_t)left : WRITEBACK_STEP, 0);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if ((errno == EXDEV || errno == ENOSYS || errno == EOPNOTSUPP || errno == EINVAL) &&
                (uint64_t)from == pos) {
                *cannot = true;
                return S3_OK;
            }
            return os_err();
        }
        if (n == 0)
            return S3_ERR_IO; /* the file shrank under its lock */
        o->at += (uint64_t)n;
        start_writeback(o);
    }
    return S3_OK;
}

/* Bytes [from, to) of in_fd, edits applied, to the new file; the CRCs updated. */
static enum s3_err write_range(int in_fd, uint64_t from, uint64_t to, const struct edits *e,
                               const struct crc_fix *fix, size_t nfix, uLong *crc, uint8_t *buf, struct out *o)
{
    enum s3_err rc = S3_OK;
    bool kernel_copy = true;
    for (uint64_t pos = from; !rc && pos < to;) {
        uint64_t clean = kernel_copy ? clean_until(e, fix, nfix, pos, to) : pos;
        if (clean - pos >= CHUNK) { /* a long unchanged stretch: the kernel copies it */
            bool cannot;
            rc = copy_in_kernel(in_fd, pos, clean, o, &cannot);
            if (rc || !cannot) {
                pos = clean;
                continue;
            }
            kernel_copy = false;
        }
        size_t n = to - pos < CHUNK ? (size_t)(to - pos) : CHUNK;
        ssize_t got = pread(in_fd, buf, n, (off_t)pos);
        if (got <= 0)
            return got < 0 ? os_err() : S3_ERR_IO; /* the file shrank under its lock */
        n = (size_t)got;
        overlay(e, pos, buf, n);
        for (size_t k = 0; k < nfix; k++) {
            uint64_t a = fix[k].from > pos ? fix[k].from : pos;
            uint64_t b = fix[k].to < pos + n ? fix[k].to : pos + n;
            if (a < b)
                crc[k] = crc32(crc[k], buf + (a - pos), (uInt)(b - a));
        }
        rc = out_put(o, buf, n);
        pos += n;
    }
    return rc;
}

/* The CRC running over [from, from+len) of the appended bytes (in memory, or read from
 * their file through buf, CHUNK bytes). */
static enum s3_err tail_crc(const struct edits *e, uint64_t from, uint64_t len, uLong *crc, uint8_t *buf)
{
    if (!e->tail_fd) {
        *crc = crc32(*crc, e->tail + from, (uInt)len);
        return S3_OK;
    }
    for (uint64_t pos = from; pos < from + len;) {
        size_t n = from + len - pos < CHUNK ? (size_t)(from + len - pos) : CHUNK;
        ssize_t got = pread(e->tail_fd - 1, buf, n, (off_t)pos);
        if (got <= 0)
            return got < 0 ? os_err() : S3_ERR_IO;
        *crc = crc32(*crc, buf, (uInt)got);
        pos += (uint64_t)got;
    }
    return S3_OK;
}

/* Bytes [from, to) of file fd (the tail's, a splice's) to the new file, as unchanged
 * stretches are copied (buf: CHUNK bytes where the kernel cannot). */
static enum s3_err copy_file_range_out(int fd, uint64_t from, uint64_t to, uint8_t *buf, struct out *o)
{
    bool cannot;
    enum s3_err rc = copy_in_kernel(fd, from, to, o, &cannot);
    for (uint64_t pos = from; cannot && !rc && pos < to;) {
        size_t n = to - pos < CHUNK ? (size_t)(to - pos) : CHUNK;
        ssize_t got = pread(fd, buf, n, (off_t)pos);
        rc = got > 0 ? out_put(o, buf, (size_t)got) : got < 0 ? os_err() : S3_ERR_IO;
        pos += got > 0 ? (uint64_t)got : 0;
    }
    return rc;
}

static enum s3_err copy_file_start(int fd, uint64_t len, uint8_t *buf, struct out *o)
{
    return copy_file_range_out(fd, 0, len, buf, o);
}

/* The tail's live stretches in turn (between its holes): [*from, *to) of the tail, from
 * *k (the next hole) on; false after the last. */
static bool next_live(const struct edits *e, size_t *k, uint64_t *at, uint64_t *from, uint64_t *to)
{
    while (*at < e->tail_len) {
        uint64_t end = *k < e->nholes ? e->holes[*k].from : e->tail_len;
        *from = *at;
        *to = end < e->tail_len ? end : e->tail_len;
        *at = *k < e->nholes ? e->holes[*k].to : e->tail_len;
        (*k)++;
        if (*to > *from)
            return true;
    }
    return false;
}

/* The appended bytes but their holes, to the new file. */
static enum s3_err write_tail(const struct edits *e, uint8_t *buf, struct out *o)
{
    enum s3_err rc = S3_OK;
    size_t k = 0;
    uint64_t at = 0, from, to;
    while (!rc && next_live(e, &k, &at, &from, &to))
        rc = e->tail_fd ? copy_file_range_out(e->tail_fd - 1, from, to, buf, o)
                        : out_put(o, e->tail + from, (size_t)(to - from));
    return rc;
}

/* The CRC running over [a, b) of the tail as written (its holes left out). */
static enum s3_err written_tail_crc(const struct edits *e, uint64_t a, uint64_t b, uLong *crc, uint8_t *buf)
{
    enum s3_err rc = S3_OK;
    size_t k = 0;
    uint64_t at = 0, from, to, out = 0; /* out: where the stretch lands in the written tail */
    while (!rc && out < b && next_live(e, &k, &at, &from, &to)) {
        uint64_t lo = a > out ? a : out, hi = b < out + (to - from) ? b : out + (to - from);
        if (lo < hi)
            rc = tail_crc(e, from + (lo - out), hi - lo, crc, buf);
        out += to - from;
    }
    return rc;
}

enum s3_err edits_write(int in_fd, uint64_t in_size, const struct edits *e, const struct crc_fix *fix, size_t nfix,
                        int out_fd)
{
    uint8_t *buf = malloc(CHUNK);
    uLong *crc = alloc_array(nfix, sizeof *crc);
    enum s3_err rc = buf && crc ? S3_OK : S3_ERR_NOMEM;
    for (size_t k = 0; crc && k < nfix; k++)
        crc[k] = crc32(0, NULL, 0);
    struct out o = {out_fd, 0, 0};
    bool spliced = e->splice_to > e->splice_from && e->splice_to <= in_size;
    if (spliced) {
        /* CRC ranges are in the old file's offsets: a splice moves what follows it */
        nfix = 0;
        if (!rc)
            rc = write_range(in_fd, 0, e->splice_from, e, fix, 0, crc, buf, &o);
        if (!rc)
            rc = e->splice_fd ? copy_file_start(e->splice_fd - 1, e->splice_len, buf, &o)
                              : out_put(&o, e->splice, e->splice_len);
        if (!rc)
            rc = write_range(in_fd, e->splice_to, in_size, e, fix, 0, crc, buf, &o);
    } else if (!rc) {
        rc = write_range(in_fd, 0, in_size, e, fix, nfix, crc, buf, &o);
    }
    if (!rc)
        rc = write_tail(e, buf, &o);
    uint64_t written = e->tail_len - hole_bytes(e);
    for (size_t k = 0; !rc && k < nfix; k++) { /* a CRC range may run on into the appended bytes */
        uint64_t a = fix[k].from > in_size ? fix[k].from : in_size;
        uint64_t b = fix[k].to < in_size + written ? fix[k].to : in_size + written;
        if (a < b)
            rc = written_tail_crc(e, a - in_size, b - in_size, &crc[k], buf);
    }
    for (size_t k = 0; !rc && k < nfix; k++) {
        uint8_t b[4];
        store(b, (uint32_t)crc[k], 4, fix[k].be);
        rc = write_at(out_fd, b, 4, fix[k].field_off);
    }
    free(buf);
    free(crc);
    return rc;
}
