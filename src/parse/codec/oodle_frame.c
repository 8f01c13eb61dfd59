#include "parse/codec/oodle_frame.h"

#include <stdio.h>
#include <string.h>

#include "parse/base/reader.h"

void oodle_read_blocks(const uint8_t *p, bool be, struct oodle_block out[3])
{
    for (int k = 0; k < 3; k++) {
        const uint8_t *b = p + 12 * k;
        out[k].a = ld_u32(b, be);
        out[k].b = ld_u32(b + 4, be);
        memcpy(out[k].c, b + 8, 4);
    }
}

void oodle_stage_ends(uint32_t stop0, uint32_t stop1, uint32_t expanded, uint32_t end[3])
{
    end[0] = stop0 < expanded ? stop0 : expanded;
    end[1] = stop1 < expanded ? stop1 : expanded;
    if (end[1] < end[0])
        end[1] = end[0];
    end[2] = expanded;
}

const char oodle_out_of_memory[] = "out of memory";

enum s3_err oodle_fail_reason(const char *fail)
{
    return fail == oodle_out_of_memory ? S3_ERR_NOMEM : S3_ERR_FORMAT;
}

enum s3_err oodle_check_frame(const char *codec, size_t in_len, uint32_t expanded, uint64_t max_expanded, char *err,
                              size_t errlen)
{
    if (max_expanded && expanded > max_expanded)
        return s3_fail(S3_ERR_LIMIT, err, errlen, "%s: expanded size %u exceeds the limit of %llu bytes", codec,
                       expanded, (unsigned long long)max_expanded);
    if (expanded > 0 && in_len < OODLE_PARAMS_SIZE)
        return s3_fail(S3_ERR_RANGE, err, errlen, "%s: %zu bytes, too short for the 36-byte parameter blocks", codec,
                       in_len);
    return S3_OK;
}
