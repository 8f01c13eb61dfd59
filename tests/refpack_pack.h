/* A RefPack (QFS) packer for tests only, never in the product: written from the opcode
 * table in shared/formats/dbpf.md, independent of src/parse/codec/refpack.c. Greedy matching
 * over a 128 KiB window, so every opcode kind appears in ordinary data. */
#ifndef S3_REFPACK_PACK_H
#define S3_REFPACK_PACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rp_pack_opts {
    bool four_byte_sizes; /* flags 0x80 */
    bool stored_size;     /* flags 0x01: the compressed size first */
    bool no_end_code;     /* stop when the output is complete, without 0xFC..0xFF */
};

/* How often each opcode kind was written (short, medium, long, literal run, end). */
struct rp_pack_stats {
    size_t op2, op3, op4, lit, end;
};

/* Returns a malloc'd stream (header included). */
uint8_t *rp_pack(const uint8_t *in, size_t n, const struct rp_pack_opts *o, size_t *out_len,
                 struct rp_pack_stats *stats);

#endif
