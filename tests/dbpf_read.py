#!/usr/bin/env python3
"""An independent DBPF 2.x package reader for the tests (Python's struct and zlib only).

Written from docs/formats/dbpf.md alone, sharing nothing with the project's parser, so a
package the project wrote (-o rw) is checked by a second reading. Prints the header, then
one line per index entry:

    header major=2 minor=1 user_major=0 user_minor=0 flags=0 count=N index_pos=P index_size=S index_flags=F
    entry TTTTTTTT GGGGGGGG IIIIIIIIIIIIIIII comp=KIND stored=X memory=Y sha256=HEX

KIND is raw, zlib, refpack, streamable (decoded as RefPack), deleted, null or nodata;
sha256 is over the expanded bytes ("-" when there are none). Any inconsistency (a bad
magic or version, an index or a resource outside the file, an expansion of another size
than the index says, a broken stream) is one line on stderr and exit status 1.
"""
import hashlib
import struct
import sys
import zlib


class Broken(Exception):
    pass


def u32(b, at):
    if at < 0 or at + 4 > len(b):
        raise Broken("u32 at 0x%x: past the end (%d bytes)" % (at, len(b)))
    return struct.unpack_from("<I", b, at)[0]


def u16(b, at):
    if at < 0 or at + 2 > len(b):
        raise Broken("u16 at 0x%x: past the end (%d bytes)" % (at, len(b)))
    return struct.unpack_from("<H", b, at)[0]


def refpack(src, want):
    """RefPack (QFS) as dbpf.md's table says: literals, then a copy from behind."""
    if len(src) < 2 or src[1] != 0xFB:
        raise Broken("RefPack: no 0xFB signature")
    flags, at = src[0], 2
    width = 4 if flags & 0x80 else 3
    if flags & 0x01:
        at += width  # the compressed size, not needed
    if at + width > len(src):
        raise Broken("RefPack: header cut short")
    size = int.from_bytes(src[at:at + width], "big")
    at += width
    if size != want:
        raise Broken("RefPack: header says %d bytes, the index %d" % (size, want))
    out = bytearray()

    def take(n):
        nonlocal at
        if at + n > len(src):
            raise Broken("RefPack: input cut short")
        piece = src[at:at + n]
        at += n
        return piece

    while len(out) < size:
        b0 = take(1)[0]
        if b0 < 0x80:
            b1 = take(1)[0]
            lit, n, d = b0 & 3, ((b0 >> 2) & 7) + 3, ((b0 & 0x60) << 3) + b1 + 1
        elif b0 < 0xC0:
            b1, b2 = take(2)
            lit, n, d = b1 >> 6, (b0 & 0x3F) + 4, ((b1 & 0x3F) << 8) + b2 + 1
        elif b0 < 0xE0:
            b1, b2, b3 = take(3)
            lit, n, d = b0 & 3, ((b0 & 0x0C) << 6) + b3 + 5, ((b0 & 0x10) << 12) + (b1 << 8) + b2 + 1
        elif b0 < 0xFC:
            lit, n, d = ((b0 & 0x1F) + 1) * 4, 0, 0
        else:
            out += take(b0 & 3)
            break
        out += take(lit)
        if n:
            if d > len(out):
                raise Broken("RefPack: a copy from before the start")
            for _ in range(n):  # byte by byte: an overlap repeats a pattern
                out.append(out[-d])
        if len(out) > size:
            raise Broken("RefPack: more bytes than declared")
    if len(out) != size:
        raise Broken("RefPack: %d bytes of %d" % (len(out), size))
    return bytes(out)


COMP = {0x0000: "raw", 0x5A42: "zlib", 0xFFFF: "refpack", 0xFFFE: "streamable", 0xFFE0: "deleted"}


def expand(kind, data, memory):
    if kind == "raw":
        out = data
    elif kind == "zlib":
        try:
            d = zlib.decompressobj()
            out = d.decompress(data) + d.flush()
        except zlib.error as e:
            raise Broken("zlib: %s" % e)
        if not d.eof:
            raise Broken("zlib: the stream does not end")
    else:
        out = refpack(data, memory)
    if len(out) != memory:
        raise Broken("%s: %d bytes expanded, the index says %d" % (kind, len(out), memory))
    return out


def read(b):
    lines = []
    if len(b) < 96 or b[0:4] != b"DBPF":
        raise Broken("no DBPF header")
    major, minor, umaj, umin, flags = (u32(b, o) for o in (0x04, 0x08, 0x0C, 0x10, 0x14))
    if major != 2:
        raise Broken("major version %d, not 2" % major)
    count, legacy, isize, iver, ipos = (u32(b, o) for o in (0x24, 0x28, 0x2C, 0x3C, 0x40))
    if ipos == 0:
        ipos = legacy
    if ipos + isize > len(b):
        raise Broken("index [0x%x, +%d) past the end (%d bytes)" % (ipos, isize, len(b)))
    index = b[ipos:ipos + isize]
    iflags = u32(index, 0)
    at = 4
    const = {}
    for bit, name in ((0x1, "type"), (0x2, "group"), (0x4, "ihigh")):
        if iflags & bit:
            const[name] = u32(index, at)
            at += 4
    lines.append("header major=%d minor=%d user_major=%d user_minor=%d flags=%d count=%d index_pos=%d "
                 "index_size=%d index_flags=%d" % (major, minor, umaj, umin, flags, count, ipos, isize, iflags))
    for k in range(count):
        rec = {}
        for name in ("type", "group", "ihigh", "ilow", "offset", "stored", "memory"):
            if name in const:
                rec[name] = const[name]
            else:
                rec[name] = u32(index, at)
                at += 4
        extended = rec["stored"] & 0x80000000
        stored = rec["stored"] & 0x7FFFFFFF
        comp = None
        if extended:
            comp = u16(index, at)
            u16(index, at + 2)  # "committed"
            at += 4
        key = "%08X %08X %016X" % (rec["type"], rec["group"], rec["ihigh"] << 32 | rec["ilow"])
        memory = rec["memory"]
        if comp == 0xFFE0:
            kind, data = "deleted", None
        elif stored == 1 and memory == 0xFFFFFFFF:
            kind, data = "null", None
        elif rec["offset"] == 0xFFFFFFFF:
            kind, data = "nodata", None
        else:
            if rec["offset"] + stored > len(b):
                raise Broken("entry %d (%s): [0x%x, +%d) past the end" % (k, key, rec["offset"], stored))
            data = b[rec["offset"]:rec["offset"] + stored]
            if comp is None:  # no word: sniff, as dbpf.md says
                kind = "raw" if stored == memory else "zlib" if data[:1] == b"\x78" else "refpack"
            elif comp in COMP:
                kind = COMP[comp]
            else:
                raise Broken("entry %d (%s): unknown compression 0x%04x" % (k, key, comp))
            try:
                data = expand(kind, data, memory)
            except Broken as e:
                raise Broken("entry %d (%s): %s" % (k, key, e))
        digest = hashlib.sha256(data).hexdigest() if data is not None else "-"
        lines.append("entry %s comp=%s stored=%d memory=%d sha256=%s" % (key, kind, stored, memory, digest))
    if at > isize:
        raise Broken("index: %d entries need %d bytes, the header says %d" % (count, at, isize))
    return lines


def main():
    if len(sys.argv) != 2:
        print("usage: dbpf_read.py FILE", file=sys.stderr)
        return 2
    with open(sys.argv[1], "rb") as f:
        b = f.read()
    try:
        lines = read(b)
    except Broken as e:
        print("dbpf_read: %s: %s" % (sys.argv[1], e), file=sys.stderr)
        return 1
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
