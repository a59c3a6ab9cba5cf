#!/usr/bin/env python3
"""Reads a PNG with the standard library only (zlib, struct) and prints
"WIDTHxHEIGHT COLOURS": its size and how many distinct pixel colours it has.
Used by check_report.sh to tell a rendered page from a blank one.
Handles 8-bit non-interlaced greyscale, RGB, palette, grey+alpha and RGBA,
which is what Chromium writes. Exit status 1 with a message otherwise."""
import struct
import sys
import zlib

CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def decode(path):
    """Returns (width, height, channels, rows), rows being bytearrays of
    unfiltered samples."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG file")
    pos, idat, header = 8, [], None
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
        pos += 12 + length
    if header is None:
        raise ValueError("no IHDR chunk")
    width, height, depth, ctype, _, _, interlace = header
    if depth != 8 or ctype not in CHANNELS or interlace:
        raise ValueError("unsupported PNG (bit depth %d, colour type %d, interlace %d)"
                         % (depth, ctype, interlace))
    ch = CHANNELS[ctype]
    raw = zlib.decompress(b"".join(idat))
    stride = width * ch
    rows, prev, pos = [], bytearray(stride), 0
    for _ in range(height):
        ftype, line = raw[pos], bytearray(raw[pos + 1:pos + 1 + stride])
        pos += 1 + stride
        if ftype == 1:
            for i in range(ch, stride):
                line[i] = (line[i] + line[i - ch]) & 0xFF
        elif ftype == 2:
            for i in range(stride):
                line[i] = (line[i] + prev[i]) & 0xFF
        elif ftype == 3:
            for i in range(stride):
                left = line[i - ch] if i >= ch else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 0xFF
        elif ftype == 4:
            for i in range(stride):
                left = line[i - ch] if i >= ch else 0
                upleft = prev[i - ch] if i >= ch else 0
                line[i] = (line[i] + paeth(left, prev[i], upleft)) & 0xFF
        elif ftype != 0:
            raise ValueError("bad filter type %d" % ftype)
        rows.append(line)
        prev = line
    return width, height, ch, rows


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: png_info.py FILE.png")
    try:
        width, height, ch, rows = decode(sys.argv[1])
    except (OSError, ValueError, zlib.error, struct.error) as e:
        sys.exit("png_info.py: %s: %s" % (sys.argv[1], e))
    colours = set()
    for line in rows:
        for i in range(0, len(line), ch):
            colours.add(bytes(line[i:i + ch]))
        if len(colours) > 256:
            break
    print("%dx%d %d" % (width, height, len(colours)))


if __name__ == "__main__":
    main()
