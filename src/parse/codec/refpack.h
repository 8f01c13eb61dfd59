/* RefPack (QFS), the LZ77 codec of Sims 3 packages ("internal compression"). Written
 * from docs/formats/dbpf.md alone. Pure: buffers in, buffer out. */
#ifndef S3_REFPACK_H
#define S3_REFPACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parse/base/err.h"

struct refpack_header {
    uint8_t flags;
    size_t length;          /* bytes of header: 2 + one or two size fields of 3 or 4 bytes */
    bool has_stored_size;   /* flags 0x01 */
    uint32_t stored_size;   /* when has_stored_size */
    uint32_t expanded_size; /* what the stream declares */
};

/* True when the bytes start like a RefPack stream (second byte 0xFB). */
bool refpack_sniff(const uint8_t *p, size_t len);
/* Parses the header: S3_OK, S3_ERR_FORMAT (not RefPack) or S3_ERR_RANGE (cut), with err. */
enum s3_err refpack_parse_header(const uint8_t *p, size_t len, struct refpack_header *h, char *err, size_t errlen);
/* Expands a whole stream (header included) into out, which holds exactly out_len bytes:
 * the stream must produce exactly that many (its header must declare it too). Every
 * copy is checked: no distance before the output's start, no byte past out_len, no
 * input read past `len`. S3_OK, or with err (what, and at which input offset):
 * S3_ERR_RANGE when the input ends early, S3_ERR_FORMAT for any other broken stream. */
enum s3_err refpack_expand(const uint8_t *p, size_t len, uint8_t *out, size_t out_len, char *err, size_t errlen);

#endif
