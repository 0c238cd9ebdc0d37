#!/usr/bin/env python3
"""Generates hostile and careless inputs for docbin's readers: damaged, truncated, lying and
oversized files of every format docbin reads, and paths that are not files at all.

    python3 tests/hostile.py DIR     writes them into DIR and prints one line per file:
                                     NAME <tab> expected exit status (0: a valid edge case)

Used by tests/test_hostile.py; also a corpus for the fuzz targets. Needs Pillow for the TIFF, JPEG
and JPEG 2000 bases, which are damaged here byte by byte, never written by docbin itself.
"""
import io
import os
import struct
import sys
import zlib

from PIL import Image


def chunk(tag, data, crc=None):
    c = zlib.crc32(tag + data) if crc is None else crc
    return struct.pack('>I', len(data)) + tag + data + struct.pack('>I', c & 0xffffffff)


# Adam7: each pass's first column and row, and its steps.
ADAM7 = ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2))


def png(w, h, depth=8, color=0, interlace=0, extra=b'', rows=None, plte=True):
    """A PNG written here (not by docbin): gray or palette pixels, filter 0, Adam7 when interlaced."""
    bpp = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[color] * max(1, depth // 8)
    if rows is None:
        rows = [bytes((x * 7 + y * 3) % 256 for x in range(w * bpp)) for y in range(h)]
    if interlace:
        raw = b''
        for x0, y0, dx, dy in ADAM7:
            for y in range(y0, h, dy):
                px = b''.join(rows[y][x * bpp:(x + 1) * bpp] for x in range(x0, w, dx))
                if px:
                    raw += b'\0' + px
    else:
        raw = b''.join(b'\0' + r for r in rows)
    head = chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, depth, color, 0, 0, interlace))
    pal = chunk(b'PLTE', bytes(range(256)) * 3) if color == 3 and plte else b''
    return b'\x89PNG\r\n\x1a\n' + head + extra + pal + chunk(b'IDAT', zlib.compress(raw)) + chunk(b'IEND', b'')


def pillow(img, fmt, **kw):
    out = io.BytesIO()
    img.save(out, fmt, **kw)
    return out.getvalue()


def cases():
    """(name, bytes or a special, expected exit status) for every case."""
    good = png(64, 48)
    base = Image.frombytes('L', (64, 48), bytes((x * 7 + y * 3) % 256 for y in range(48) for x in range(64)))
    tif = pillow(base, 'TIFF', compression='tiff_lzw')
    jpg = pillow(base, 'JPEG', quality=90)
    jp2 = pillow(base, 'JPEG2000')
    out = []
    # PNG
    for cut in (8, 16, 29, 33, 40, len(good) // 2, len(good) - 13, len(good) - 1):
        out.append((f'png-cut-{cut}.png', good[:cut], 1))
    ihdr = good[8:33]
    out.append(('png-bad-ihdr-crc.png', good[:8] + ihdr[:-4] + b'\0\0\0\0' + good[33:], 1))
    out.append(('png-bad-idat-crc.png', good[:-16] + b'\0\0\0\0' + good[-12:], 1))
    out.append(('png-huge.png', b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', 1000000, 1000000, 8,
                                                                                       0, 0, 0, 0)), 1))
    out.append(('png-zero-width.png', png(1, 1)[:16] + struct.pack('>I', 0) + png(1, 1)[20:], 1))
    out.append(('png-idat-past-end.png', good[:33] + struct.pack('>I', 0x7fffffff) + b'IDAT' + b'\0' * 20, 1))
    out.append(('png-text-bomb.png', bytes.fromhex('89504e470d0a1a0a0000000d4948445200000008000000080800000000e164e157'
                                                   '7fffffff74455874616263'), 1))
    out.append(('png-palette-no-plte.png', png(16, 8, color=3, plte=False), 1))
    out.append(('png-16bit.png', png(20, 10, depth=16), 0))
    out.append(('png-interlaced.png', png(33, 17, interlace=1), 0))
    out.append(('png-garbage.png', b'\x89PNG\r\n\x1a\n' + bytes(range(256)) * 4, 1))
    # PNM
    out.append(('pnm-maxval-65535.pgm', b'P5\n9 7\n65535\n' + bytes(range(126)), 0))
    out.append(('pnm-negative.pgm', b'P5\n-3 4\n255\n' + bytes(12), 1))
    out.append(('pnm-huge.pgm', b'P5\n999999999 999999999\n255\n' + bytes(64), 1))
    out.append(('pnm-past-2-32.pgm', b'P5\n4294967297 1\n255\n' + bytes(64), 1))
    out.append(('pnm-maxval-0.pgm', b'P5\n4 4\n0\n' + bytes(16), 1))
    out.append(('pnm-short.pgm', b'P5\n40 40\n255\n' + bytes(100), 1))
    out.append(('pnm-garbage.pnm', b'P7\nWIDTH 4\n', 1))
    # TIFF
    for cut in (4, 8, 30, len(tif) // 2, len(tif) - 20):
        out.append((f'tiff-cut-{cut}.tif', tif[:cut], 1))
    ifd = struct.unpack('<I', tif[4:8])[0]
    n = struct.unpack('<H', tif[ifd:ifd + 2])[0]
    loop = bytearray(tif)
    loop[ifd + 2 + 12 * n:ifd + 6 + 12 * n] = struct.pack('<I', ifd)  # the next IFD is itself
    out.append(('tiff-ifd-loop.tif', bytes(loop), 1))
    out.append(('tiff-ifd-past-end.tif', tif[:4] + struct.pack('<I', len(tif) + 1000) + tif[8:], 1))
    big = bytearray(tif)
    for i in range(n):  # ImageWidth and ImageLength as 1e6 x 1e6
        e = ifd + 2 + 12 * i
        tag, typ = struct.unpack('<HH', big[e:e + 4])
        if tag in (256, 257):
            big[e + 2:e + 12] = struct.pack('<HII', 4, 1, 1000000)
    out.append(('tiff-huge.tif', bytes(big), 1))
    out.append(('tiff-cmyk.tif', pillow(Image.new('CMYK', (8, 8)), 'TIFF'), 1))
    # JPEG
    for cut in (2, 20, len(jpg) // 2, len(jpg) - 40):
        out.append((f'jpeg-cut-{cut}.jpg', jpg[:cut], 1))
    out.append(('jpeg-garbage.jpg', b'\xff\xd8\xff' + bytes(range(256)) * 2, 1))
    out.append(('jpeg-cmyk.jpg', pillow(Image.new('CMYK', (8, 8)), 'JPEG'), 1))
    # JPEG 2000
    out.append(('jp2-cut.jp2', jp2[:len(jp2) // 2], 1))
    out.append(('jp2-garbage.jp2', jp2[:12] + bytes(range(256)) * 2, 1))
    # Not files
    out.append(('empty.png', b'', 1))
    for special in ('link-loop.png', 'dangling.png', 'directory.png', 'fifo.png', 'zero-device.png'):
        out.append((special, None, 1))
    return out


def write(dir_):
    """Writes every case into dir_; returns [(name, expected exit)]."""
    os.makedirs(dir_, exist_ok=True)
    made = []
    for name, data, code in cases():
        path = os.path.join(dir_, name)
        if data is not None:
            with open(path, 'wb') as f:
                f.write(data)
        elif name == 'link-loop.png':
            os.symlink('link-loop-2.png', path)
            os.symlink('link-loop.png', os.path.join(dir_, 'link-loop-2.png'))
        elif name == 'dangling.png':
            os.symlink('no-such-file.png', path)
        elif name == 'directory.png':
            os.mkdir(path)
        elif name == 'fifo.png':
            os.mkfifo(path)
        elif name == 'zero-device.png':
            os.symlink('/dev/zero', path)
        made.append((name, code))
    return made


if __name__ == '__main__':
    for name, code in write(sys.argv[1]):
        print(f'{name}\t{code}')
