"""Helpers shared by the command-line tests: failure bookkeeping and tiny image files.

The PNG writer is independent of docbin's own codecs, so that the tests never
check the library's reader against files written by the library itself.
"""
import struct
import sys
import zlib

failures = []


def check(cond, what):
    """Records a failure (the test goes on, so one run shows every failure)."""
    if not cond:
        failures.append(what)
        print('FAIL:', what, file=sys.stderr)


def png_bytes(w, h, rows, color_type=0, depth=8):
    """A minimal PNG (one IDAT, filter 0) of `rows`, each a bytes object of one row."""
    def chunk(tag, data):
        return struct.pack('>I', len(data)) + tag + data + struct.pack('>I', zlib.crc32(tag + data))
    raw = b''.join(b'\0' + r for r in rows)
    return (b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, depth, color_type, 0, 0, 0))
            + chunk(b'IDAT', zlib.compress(raw)) + chunk(b'IEND', b''))


def write(path, data):
    """Writes bytes to `path` and returns the path."""
    with open(path, 'wb') as f:
        f.write(data)
    return path


def png_size(path):
    """Width and height from a PNG file's IHDR chunk."""
    with open(path, 'rb') as f:
        head = f.read(24)
    return int.from_bytes(head[16:20], 'big'), int.from_bytes(head[20:24], 'big')


def png_decode(data):
    """(width, height, channels, pixels) of a non-interlaced 8-bit gray/RGB or 1-bit gray PNG, decoded
    here rather than by docbin: pixels is a list of rows, each a list of 8-bit gray levels (1-bit: 0/255)
    or of (r, g, b) tuples."""
    assert data[:8] == b'\x89PNG\r\n\x1a\n', 'not a PNG'
    pos, idat, ihdr = 8, b'', None
    while pos < len(data):
        n, tag = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if tag == b'IHDR':
            ihdr = struct.unpack('>IIBBBBB', body)
        elif tag == b'IDAT':
            idat += body
        pos += 12 + n
    w, h, depth, color_type, _, _, interlace = ihdr
    assert interlace == 0 and color_type in (0, 2) and depth in ((1, 8) if color_type == 0 else (8,))
    channels = 3 if color_type == 2 else 1
    bpp = max(1, depth * channels // 8)
    stride = (w * depth * channels + 7) // 8
    raw = zlib.decompress(idat)
    prev, rows = bytearray(stride), []
    for y in range(h):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        prev = line
        if depth == 1:
            rows.append([255 if line[x >> 3] >> (7 - (x & 7)) & 1 else 0 for x in range(w)])
        elif channels == 3:
            rows.append([tuple(line[3 * x:3 * x + 3]) for x in range(w)])
        else:
            rows.append(list(line))
    return w, h, channels, rows
