#include "parse/rnc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- CRC-16/ARC: reflected 0x8005 (0xA001), init 0, no final xor ---- */

/* The table for polynomial 0xA001, from: v = i; 8 times v = v & 1 ? v >> 1 ^ 0xA001 : v >> 1. */
static const uint16_t crc16_table[256] = {
    0x0000, 0xc0c1, 0xc181, 0x0140, 0xc301, 0x03c0, 0x0280, 0xc241,
    0xc601, 0x06c0, 0x0780, 0xc741, 0x0500, 0xc5c1, 0xc481, 0x0440,
    0xcc01, 0x0cc0, 0x0d80, 0xcd41, 0x0f00, 0xcfc1, 0xce81, 0x0e40,
    0x0a00, 0xcac1, 0xcb81, 0x0b40, 0xc901, 0x09c0, 0x0880, 0xc841,
    0xd801, 0x18c0, 0x1980, 0xd941, 0x1b00, 0xdbc1, 0xda81, 0x1a40,
    0x1e00, 0xdec1, 0xdf81, 0x1f40, 0xdd01, 0x1dc0, 0x1c80, 0xdc41,
    0x1400, 0xd4c1, 0xd581, 0x1540, 0xd701, 0x17c0, 0x1680, 0xd641,
    0xd201, 0x12c0, 0x1380, 0xd341, 0x1100, 0xd1c1, 0xd081, 0x1040,
    0xf001, 0x30c0, 0x3180, 0xf141, 0x3300, 0xf3c1, 0xf281, 0x3240,
    0x3600, 0xf6c1, 0xf781, 0x3740, 0xf501, 0x35c0, 0x3480, 0xf441,
    0x3c00, 0xfcc1, 0xfd81, 0x3d40, 0xff01, 0x3fc0, 0x3e80, 0xfe41,
    0xfa01, 0x3ac0, 0x3b80, 0xfb41, 0x3900, 0xf9c1, 0xf881, 0x3840,
    0x2800, 0xe8c1, 0xe981, 0x2940, 0xeb01, 0x2bc0, 0x2a80, 0xea41,
    0xee01, 0x2ec0, 0x2f80, 0xef41, 0x2d00, 0xedc1, 0xec81, 0x2c40,
    0xe401, 0x24c0, 0x2580, 0xe541, 0x2700, 0xe7c1, 0xe681, 0x2640,
    0x2200, 0xe2c1, 0xe381, 0x2340, 0xe101, 0x21c0, 0x2080, 0xe041,
    0xa001, 0x60c0, 0x6180, 0xa141, 0x6300, 0xa3c1, 0xa281, 0x6240,
    0x6600, 0xa6c1, 0xa781, 0x6740, 0xa501, 0x65c0, 0x6480, 0xa441,
    0x6c00, 0xacc1, 0xad81, 0x6d40, 0xaf01, 0x6fc0, 0x6e80, 0xae41,
    0xaa01, 0x6ac0, 0x6b80, 0xab41, 0x6900, 0xa9c1, 0xa881, 0x6840,
    0x7800, 0xb8c1, 0xb981, 0x7940, 0xbb01, 0x7bc0, 0x7a80, 0xba41,
    0xbe01, 0x7ec0, 0x7f80, 0xbf41, 0x7d00, 0xbdc1, 0xbc81, 0x7c40,
    0xb401, 0x74c0, 0x7580, 0xb541, 0x7700, 0xb7c1, 0xb681, 0x7640,
    0x7200, 0xb2c1, 0xb381, 0x7340, 0xb101, 0x71c0, 0x7080, 0xb041,
    0x5000, 0x90c1, 0x9181, 0x5140, 0x9301, 0x53c0, 0x5280, 0x9241,
    0x9601, 0x56c0, 0x5780, 0x9741, 0x5500, 0x95c1, 0x9481, 0x5440,
    0x9c01, 0x5cc0, 0x5d80, 0x9d41, 0x5f00, 0x9fc1, 0x9e81, 0x5e40,
    0x5a00, 0x9ac1, 0x9b81, 0x5b40, 0x9901, 0x59c0, 0x5880, 0x9841,
    0x8801, 0x48c0, 0x4980, 0x8941, 0x4b00, 0x8bc1, 0x8a81, 0x4a40,
    0x4e00, 0x8ec1, 0x8f81, 0x4f40, 0x8d01, 0x4dc0, 0x4c80, 0x8c41,
    0x4400, 0x84c1, 0x8581, 0x4540, 0x8701, 0x47c0, 0x4680, 0x8641,
    0x8201, 0x42c0, 0x4380, 0x8341, 0x4100, 0x81c1, 0x8081, 0x4040,
};

uint16_t rnc_crc16(const uint8_t *p, size_t n)
{
    uint16_t crc = 0;
    for (size_t i = 0; i < n; i++)
        crc = (uint16_t)((crc >> 8) ^ crc16_table[(crc ^ p[i]) & 0xFF]);
    return crc;
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

int rnc_parse_header(const uint8_t *p, size_t avail, struct rnc_header *h, char *err, size_t errlen)
{
    memset(h, 0, sizeof *h);
    if (avail < RNC_HEADER_SIZE) {
        snprintf(err, errlen, "RNC header needs 18 bytes, %zu available", avail);
        return -1;
    }
    h->dots = memcmp(p, "...", 3) == 0;
    if (memcmp(p, "RNC", 3) != 0 && !h->dots) {
        snprintf(err, errlen, "no RNC signature");
        return -1;
    }
    h->method = p[3];
    if (h->method != 1 && h->method != 2) {
        snprintf(err, errlen, "RNC method %u is not supported (only 1 and 2)", p[3]);
        return -1;
    }
    if (h->dots && h->method != 1) {
        snprintf(err, errlen, "'...' signature with method %d (only method 1 exists)", h->method);
        return -1;
    }
    h->unpacked_size = be32(p + 4);
    h->packed_size = be32(p + 8);
    h->unpacked_crc = (uint16_t)(p[12] << 8 | p[13]);
    h->packed_crc = (uint16_t)(p[14] << 8 | p[15]);
    h->leeway = p[16];
    h->chunks = p[17];
    if ((uint64_t)h->packed_size + RNC_HEADER_SIZE > avail) {
        snprintf(err, errlen, "RNC packed size %u runs past the %zu bytes available", h->packed_size,
                 avail - RNC_HEADER_SIZE);
        return -1;
    }
    return 0;
}

/* ---- shared decoder state ---- */

struct rnc_state {
    const uint8_t *in;
    size_t len, pos;     /* payload and cursor */
    size_t overread;     /* bytes fetched past the end (zeros) */
    uint32_t word;       /* method 1: current 16-bit word; method 2: current byte */
    int nbits;
    uint8_t *out;
    size_t out_len, out_pos;
    bool key_on;
    uint16_t key;
    const char *fail;    /* first error */
};

/* Past the payload the stream reads zeros (method 1 legitimately needs one byte); a
 * stream that keeps going is corrupt. */
static uint8_t raw_byte(struct rnc_state *s)
{
    if (s->pos < s->len)
        return s->in[s->pos++];
    s->pos++;
    if (++s->overread > 8 && !s->fail)
        s->fail = "stream runs past the end of the packed data";
    return 0;
}

static void rotate_key(struct rnc_state *s)
{
    s->key = (uint16_t)((s->key >> 1) | ((s->key & 1) << 15));
}

/* Copies n literal bytes from the stream (all with the same key byte). */
static void literals(struct rnc_state *s, size_t n)
{
    if (n > s->out_len - s->out_pos) {
        s->fail = "literal run overruns the output";
        return;
    }
    uint8_t x = s->key_on ? (uint8_t)s->key : 0;
    for (size_t i = 0; i < n; i++)
        s->out[s->out_pos++] = raw_byte(s) ^ x;
    if (s->key_on && n > 0)
        rotate_key(s);
}

static void match(struct rnc_state *s, size_t dist, size_t n)
{
    if (dist == 0 || dist > s->out_pos) {
        s->fail = "match distance reaches before the start of the output";
        return;
    }
    if (n > s->out_len - s->out_pos) {
        s->fail = "match overruns the output";
        return;
    }
    uint8_t *o = s->out + s->out_pos;
    for (size_t i = 0; i < n; i++) /* forward, byte by byte: overlap repeats the pattern */
        o[i] = o[(ptrdiff_t)i - (ptrdiff_t)dist];
    s->out_pos += n;
}

/* ---- method 1: 16-bit LE words, LSB first, canonical Huffman tables ---- */

static unsigned m1_bit(struct rnc_state *s)
{
    if (s->nbits == 0) {
        uint32_t lo = raw_byte(s);
        s->word = lo | (uint32_t)raw_byte(s) << 8;
        s->nbits = 16;
    }
    unsigned b = s->word & 1;
    s->word >>= 1;
    s->nbits--;
    return b;
}

static uint32_t m1_bits(struct rnc_state *s, int n)
{
    uint32_t v = 0;
    for (int i = 0; i < n; i++)
        v |= (uint32_t)m1_bit(s) << i;
    return v;
}

struct huff {
    uint16_t count[16];  /* codes of each length 1..15 */
    uint8_t symbol[16];  /* symbols ordered by (length, index) */
    int nsym;
};

static void read_table(struct rnc_state *s, struct huff *h)
{
    memset(h, 0, sizeof *h);
    unsigned n = m1_bits(s, 5);
    if (n > 16) {
        s->fail = "Huffman table with more than 16 symbols";
        return;
    }
    uint8_t len[16] = {0};
    for (unsigned i = 0; i < n; i++) {
        len[i] = (uint8_t)m1_bits(s, 4);
        h->count[len[i]]++;
    }
    h->count[0] = 0;
    int k = 0;
    for (int l = 1; l < 16; l++)
        for (unsigned i = 0; i < n; i++)
            if (len[i] == l)
                h->symbol[k++] = (uint8_t)i;
    h->nsym = k;
}

/* Canonical decoding, MSB-first in read order. */
static int decode_symbol(struct rnc_state *s, const struct huff *h)
{
    int code = 0, first = 0, index = 0;
    for (int l = 1; l < 16; l++) {
        code |= (int)m1_bit(s);
        int count = h->count[l];
        if (code - first < count)
            return h->symbol[index + code - first];
        index += count;
        first = (first + count) << 1;
        code <<= 1;
    }
    if (!s->fail)
        s->fail = h->nsym ? "Huffman code matches no symbol" : "empty Huffman table used";
    return -1;
}

static uint32_t m1_value(struct rnc_state *s, const struct huff *h)
{
    int sym = decode_symbol(s, h);
    if (sym < 2)
        return sym < 0 ? 0 : (uint32_t)sym;
    return (1u << (sym - 1)) | m1_bits(s, sym - 1);
}

static void unpack_m1(struct rnc_state *s)
{
    (void)m1_bit(s); /* lock flag */
    bool key_flag = m1_bit(s); /* read unconditionally: it is part of the stream */
    s->key_on = s->key_on && key_flag;
    while (!s->fail && s->out_pos < s->out_len) {
        struct huff lit, dist, len;
        read_table(s, &lit);
        read_table(s, &dist);
        read_table(s, &len);
        uint32_t count = m1_bits(s, 16);
        if (count == 0 && !s->fail)
            s->fail = "chunk with zero literal runs";
        for (uint32_t r = 0; r < count && !s->fail; r++) {
            literals(s, m1_value(s, &lit));
            if (r + 1 == count || s->fail)
                break;
            uint32_t d = m1_value(s, &dist) + 1;
            uint32_t l = m1_value(s, &len) + 2;
            if (!s->fail)
                match(s, d, l);
        }
    }
}

/* ---- method 2: bytes, MSB first, fixed prefix codes ---- */

static unsigned m2_bit(struct rnc_state *s)
{
    if (s->nbits == 0) {
        s->word = raw_byte(s);
        s->nbits = 8;
    }
    unsigned b = (s->word >> 7) & 1;
    s->word = (s->word << 1) & 0xFF;
    s->nbits--;
    return b;
}

static size_t m2_distance(struct rnc_state *s)
{
    unsigned hi = 0;
    if (m2_bit(s)) {
        hi = m2_bit(s);
        if (m2_bit(s)) {
            hi = ((hi << 1) | m2_bit(s)) | 4;
            if (!m2_bit(s))
                hi = (hi << 1) | m2_bit(s);
        } else if (hi == 0) {
            hi = m2_bit(s) + 2;
        }
    }
    unsigned lo = raw_byte(s);
    return ((size_t)hi << 8 | lo) + 1;
}

static void unpack_m2(struct rnc_state *s)
{
    (void)m2_bit(s); /* lock flag */
    bool key_flag = m2_bit(s); /* read unconditionally: it is part of the stream */
    s->key_on = s->key_on && key_flag;
    while (!s->fail) {
        if (!m2_bit(s)) {
            literals(s, 1);
        } else if (!m2_bit(s)) {
            unsigned len = 4 + m2_bit(s);
            if (m2_bit(s))
                len = 2 * (len - 1) + m2_bit(s);
            if (len == 9) {
                unsigned k = 0;
                for (int i = 0; i < 4; i++)
                    k = (k << 1) | m2_bit(s);
                literals(s, 4 * (size_t)k + 12);
            } else {
                match(s, m2_distance(s), len);
            }
        } else if (!m2_bit(s)) {
            match(s, (size_t)raw_byte(s) + 1, 2);
        } else if (!m2_bit(s)) {
            match(s, m2_distance(s), 3);
        } else {
            unsigned b = raw_byte(s);
            if (b) {
                match(s, m2_distance(s), (size_t)b + 8);
            } else if (!m2_bit(s)) {
                break; /* end of the last chunk */
            }
        }
    }
}

int rnc_unpack(const uint8_t *item, size_t avail, const struct rnc_options *opt, uint8_t **out, size_t *out_len,
               char *err, size_t errlen)
{
    struct rnc_header h;
    *out = NULL;
    *out_len = 0;
    if (rnc_parse_header(item, avail, &h, err, errlen))
        return -1;
    const uint8_t *payload = item + RNC_HEADER_SIZE;
    uint16_t pcrc = rnc_crc16(payload, h.packed_size);
    if (pcrc != h.packed_crc) {
        snprintf(err, errlen, "RNC%d packed CRC mismatch: stored 0x%04x, computed 0x%04x (corrupt, or the old "
                 "12-byte-header format)", h.method, h.packed_crc, pcrc);
        return -1;
    }
    if (opt && opt->max_unpacked && h.unpacked_size > opt->max_unpacked) {
        snprintf(err, errlen, "RNC%d unpacked size %u exceeds the limit of %llu bytes", h.method, h.unpacked_size,
                 (unsigned long long)opt->max_unpacked);
        return -1;
    }
    struct rnc_state s = {.in = payload, .len = h.packed_size, .out_len = h.unpacked_size,
                          .key_on = opt && opt->has_key, .key = opt ? opt->key : 0};
    s.out = malloc(h.unpacked_size ? h.unpacked_size : 1);
    if (!s.out) {
        snprintf(err, errlen, "RNC: cannot allocate %u bytes", h.unpacked_size);
        return -1;
    }
    /* The key flag is in the stream: peek it (bit 1 of the first byte for method 1,
     * 0x40 for method 2) to report encrypted data clearly when no key is given. */
    bool keyed = h.packed_size > 0 && (h.method == 1 ? (payload[0] & 2) : (payload[0] & 0x40));
    if (keyed && !(opt && opt->has_key)) {
        free(s.out);
        snprintf(err, errlen, "encrypted RNC%d data (key flag set): a key is needed (-o rnc_key=0xNNNN)", h.method);
        return -1;
    }
    if (h.method == 1)
        unpack_m1(&s);
    else
        unpack_m2(&s);
    if (!s.fail && s.out_pos != s.out_len)
        s.fail = "stream ended before the output was full";
    if (!s.fail && rnc_crc16(s.out, s.out_len) != h.unpacked_crc)
        s.fail = keyed ? "unpacked CRC mismatch (wrong key?)" : "unpacked CRC mismatch";
    if (s.fail) {
        snprintf(err, errlen, "RNC%d at output byte %zu of %u: %s", h.method, s.out_pos, h.unpacked_size, s.fail);
        free(s.out);
        return -1;
    }
    *out = s.out;
    *out_len = s.out_len;
    return 0;
}
