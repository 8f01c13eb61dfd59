#include "parse/detect.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* The detection functions, declared from the table: CODE_detect, defined by the format's
 * parser (src/parse/FAMILY/). */
#define FORMAT(id, name, code, ...) s3_detect_fn code##_detect;
#include S3_FORMATS_DEF
#undef FORMAT

const struct s3_format_info s3_formats[FMT_COUNT] = {
    [FMT_UNKNOWN] = {.name = "unknown", .code = "", .noun = "", .pkg_dir = "", .fuzz_prefix = "", .seeds = "",
                     .usage = ""},
#define FORMAT(id, name_, code_, noun_, pkg_type_, pkg_dir_, cut_, prefix_, seeds_, usage_) \
    [FMT_##id] = {.name = name_, .code = #code_, .noun = noun_, .detect = code_##_detect, .pkg_type = pkg_type_,     \
                  .pkg_dir = pkg_dir_, .fuzz_cut = cut_, .fuzz_prefix = prefix_, .seeds = seeds_, .usage = usage_},
#include S3_FORMATS_DEF
#undef FORMAT
};

const char *format_name(enum s3_format f)
{
    return (unsigned)f < FMT_COUNT ? s3_formats[f].name : "unknown";
}

int format_list(char *out, size_t size, size_t column)
{
    const char *said[FMT_COUNT];
    size_t nsaid = 0;
    for (int f = FMT_UNKNOWN + 1; f < FMT_COUNT; f++) {
        const char *w = *(const char *const *)((const char *)&s3_formats[f] + column);
        bool dup = !w[0];
        for (size_t k = 0; k < nsaid && !dup; k++)
            dup = strcmp(said[k], w) == 0;
        if (!dup)
            said[nsaid++] = w;
    }
    size_t len = 0;
    if (size)
        out[0] = 0;
    for (size_t k = 0; k < nsaid; k++) {
        const char *sep = k == 0 ? "" : k + 1 == nsaid ? " or " : ", ";
        len += (size_t)snprintf(len < size ? out + len : NULL, len < size ? size - len : 0, "%s%s", sep, said[k]);
    }
    return (int)len;
}

enum s3_err detect_format(const struct s3_src *src, struct detect_result *r)
{
    memset(r, 0, sizeof *r);
    uint8_t head[16] = {0};
    size_t n = src->size < 16 ? (size_t)src->size : 16;
    if (src_read(src, 0, head, n) != 0) {
        return s3_fail(S3_ERR_IO, r->why, sizeof r->why, "cannot read the first bytes");
    }
    char refusal[sizeof r->why] = ""; /* the first reason a refusing detection gave */
    for (int f = FMT_UNKNOWN + 1; f < FMT_COUNT; f++) {
        if (s3_formats[f].detect(src, head, n, r)) {
            r->format = (enum s3_format)f;
            return S3_OK;
        }
        if (!refusal[0] && r->why[0])
            memcpy(refusal, r->why, sizeof refusal);
    }
    memset(r, 0, sizeof *r); /* what a refusing detection left behind */
    if (src->size == 0)
        snprintf(r->why, sizeof r->why, "empty file");
    else if (refusal[0])
        memcpy(r->why, refusal, sizeof r->why);
    else { /* the bytes the file has, at most 8: never the zeros head[] starts with */
        char hex[8 * 3] = "", nouns[120];
        for (size_t i = 0, at = 0; i < n && i < 8; i++)
            at += (size_t)snprintf(hex + at, sizeof hex - at, "%s%02x", i ? " " : "", head[i]);
        format_list(nouns, sizeof nouns, offsetof(struct s3_format_info, noun));
        snprintf(r->why, sizeof r->why, "not a %s file (%s %s)", nouns, n < 8 ? "all its bytes:" : "first bytes", hex);
    }
    return S3_ERR_FORMAT;
}
