#!/usr/bin/env python3
"""The archive formats through independent readers: Pillow and libtiff's tools.

Fixtures are made here with Pillow. docbin's reading (through image_tool, which
calls the document API) must give Pillow's pixels: exactly, for lossy JPEG and
JPEG 2000 too, since both decode with the same libraries' defaults; EXIF
orientation as Pillow's ImageOps.exif_transpose applies it; the resolution
Pillow reports. What docbin writes must read back in Pillow and in tiffinfo and
tiffcp as docbin's PNG output does, with the resolution kept. Bad files fail
with one line on stderr that names the file.

usage: test_formats.py IMAGE_TOOL [TIFFINFO TIFFCP]
"""
import io
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile

from clitest import check, failures

try:
    from PIL import Image, ImageOps, TiffImagePlugin, features
except ImportError:
    print('SKIP: Pillow (Debian: python3-pil) is not installed')
    sys.exit(77)
for feature in ('jpg', 'jpg_2000', 'libtiff'):
    if not features.check(feature):
        print(f'SKIP: this Pillow lacks {feature}')
        sys.exit(77)

TOOL = sys.argv[1]
TIFFINFO = sys.argv[2] if len(sys.argv) > 2 and sys.argv[2] else shutil.which('tiffinfo')
TIFFCP = sys.argv[3] if len(sys.argv) > 3 and sys.argv[3] else shutil.which('tiffcp')
TMP = tempfile.mkdtemp(prefix='test_formats-')


def path(name):
    return os.path.join(TMP, name)


def tool(*args):
    p = subprocess.run([TOOL] + [str(a) for a in args], capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def pnm_pixels(file):
    """Mode and bytes of a P5/P6 file with maxval 255, parsed here."""
    data = open(file, 'rb').read()
    fields, pos = [], 0
    while len(fields) < 4:
        while data[pos:pos + 1].isspace():
            pos += 1
        end = pos
        while not data[end:end + 1].isspace():
            end += 1
        fields.append(data[pos:end])
        pos = end
    magic, w, h, maxval = fields[0], int(fields[1]), int(fields[2]), int(fields[3])
    assert maxval == 255 and magic in (b'P5', b'P6')
    channels = 3 if magic == b'P6' else 1
    return ('RGB' if channels == 3 else 'L'), w, h, data[pos + 1:pos + 1 + w * h * channels]


def docbin_pages(file):
    """[(mode, width, height, pixels, dpi_x, dpi_y)] of every page, as docbin decodes them; None on failure."""
    rc, out, err = tool('dump', file, path('dump'))
    if rc != 0:
        check(False, f'{os.path.basename(file)}: docbin cannot read it: {err.strip()}')
        return None
    pages = []
    for line in out.splitlines():
        head, rest = line.split(':')
        index = int(head.split()[1])
        w, h, c, dpi_x, dpi_y = rest.split()
        mode, pw, ph, pixels = pnm_pixels(path(f'dump-{index}.pnm'))
        assert (pw, ph) == (int(w), int(h)) and (mode == 'L') == (c == '1')
        pages.append((mode, pw, ph, pixels, float(dpi_x), float(dpi_y)))
    return pages


def docbin_page(file):
    pages = docbin_pages(file)
    return pages[0] if pages else None


def over_white(img):
    """An LA/RGBA image composited over white in integers, as docbin does."""
    bands = img.split()
    alpha = bands[-1].tobytes()
    out = []
    for band in bands[:-1]:
        out.append(Image.frombytes('L', img.size, bytes((c * a + 255 * (255 - a) + 127) // 255
                                                        for c, a in zip(band.tobytes(), alpha))))
    return out[0] if len(out) == 1 else Image.merge('RGB', out)


def same_as(file, expected, name):
    """docbin's first page of `file` equals the Pillow image `expected` (L or RGB)."""
    page = docbin_page(file)
    if page is None:
        return
    mode, w, h, pixels, _, _ = page
    ok = (mode, w, h) == (expected.mode, expected.width, expected.height) and pixels == expected.tobytes()
    if not ok and (mode, w, h) == (expected.mode, expected.width, expected.height):
        diff = sum(a != b for a, b in zip(pixels, expected.tobytes()))
        name += f' ({diff} samples differ)'
    check(ok, f'{name}: docbin gives {mode} {w}x{h}, Pillow {expected.mode} {expected.width}x{expected.height}')
    rc, out, err = tool('peek', file)
    check(rc == 0 and out.split() == [str(expected.width), str(expected.height), '3' if mode == 'RGB' else '1'],
          f'{name}: db_image_peek says {out.strip() or err.strip()}')


def expect_failure(file, needle):
    rc, out, err = tool('dump', file, path('dump'))
    lines = err.strip().splitlines()
    name = os.path.basename(file)
    check(rc == 1, f'{name}: exit {rc}, expected 1')
    check(len(lines) == 1 and file in lines[0] and needle in lines[0],
          f'{name}: expected one line naming the file and "{needle}", got {err!r}')


def picture(mode, w, h, seed):
    """A deterministic picture with smooth parts and noise, as scans have."""
    rnd = random.Random(seed)
    bands = []
    for b in range(len(mode)):
        bands.append(bytes((x * 255 // w + y * (b + 1) * 3 + rnd.randrange(40)) % 256
                           for y in range(h) for x in range(w)))
    if len(mode) == 1:
        return Image.frombytes('L', (w, h), bands[0])
    return Image.merge(mode, [Image.frombytes('L', (w, h), b) for b in bands])


def chunks(png):
    """{type: [data]} of a PNG's chunks."""
    out, pos = {}, 8
    while pos < len(png):
        n, tag = struct.unpack('>I4s', png[pos:pos + 8])
        out.setdefault(tag, []).append(png[pos + 8:pos + 8 + n])
        pos += 12 + n
    return out


# ---- JPEG ------------------------------------------------------------------------------

def test_jpeg():
    gray, rgb = picture('L', 61, 43, 1), picture('RGB', 61, 43, 2)
    variants = [
        ('gray.jpg', gray, dict(quality=90)),
        ('gray-progressive.jpg', gray, dict(quality=60, progressive=True)),
        ('rgb-420.jpg', rgb, dict(quality=75, subsampling=2)),
        ('rgb-422.jpg', rgb, dict(quality=80, subsampling=1)),
        ('rgb-444.jpg', rgb, dict(quality=95, subsampling=0)),
        ('rgb-progressive.jpg', rgb, dict(quality=70, progressive=True, optimize=True)),
        ('rgb-odd.jpg', picture('RGB', 17, 9, 3), dict(quality=50)),
    ]
    for name, img, options in variants:
        img.save(path(name), **options)
        same_as(path(name), Image.open(path(name)), name)

    # Resolution: JFIF in inches, JFIF in centimetres, EXIF alone.
    rgb.save(path('dpi.jpg'), dpi=(300, 200))
    page = docbin_page(path('dpi.jpg'))
    check(page and page[4:] == (300.0, 200.0) and Image.open(path('dpi.jpg')).info.get('dpi') == (300, 200),
          f'JFIF dpi: {page and page[4:]}')
    data = bytearray(open(path('dpi.jpg'), 'rb').read())
    assert data[6:11] == b'JFIF\0'
    data[13:18] = struct.pack('>BHH', 2, 118, 40)  # dots per centimetre
    open(path('dpcm.jpg'), 'wb').write(data)
    page = docbin_page(path('dpcm.jpg'))
    # 118 dots/cm (299.72 dpi) is how 300 dpi is stored, and 40 (101.6 dpi) is
    # how 101 and 102 are: the nearest whole dpi that stores as the file says.
    check(page and page[4:] == (300.0, 102.0), f'JFIF dots per cm: {page and page[4:]}')
    exif = Image.Exif()
    exif[0x011A] = TiffImagePlugin.IFDRational(400, 1)
    exif[0x011B] = TiffImagePlugin.IFDRational(400, 1)
    exif[0x0128] = 2
    rgb.save(path('exif-dpi.jpg'), exif=exif.tobytes())
    page = docbin_page(path('exif-dpi.jpg'))
    want = Image.open(path('exif-dpi.jpg')).info.get('dpi')
    check(page and want and page[4:] == tuple(float(v) for v in want), f'EXIF dpi: {page and page[4:]}, Pillow {want}')

    # EXIF orientation, as Pillow turns the image upright.
    src = picture('RGB', 23, 11, 4)
    for orientation in range(1, 9):
        exif = Image.Exif()
        exif[0x0112] = orientation
        exif[0x011A] = TiffImagePlugin.IFDRational(300, 1)
        exif[0x011B] = TiffImagePlugin.IFDRational(150, 1)
        exif[0x0128] = 2
        name = f'orientation-{orientation}.jpg'
        src.save(path(name), exif=exif.tobytes(), quality=92)
        upright = ImageOps.exif_transpose(Image.open(path(name)))
        same_as(path(name), upright, name)
        page = docbin_page(path(name))
        want = (150.0, 300.0) if orientation >= 5 else (300.0, 150.0)
        check(page and page[4:] == want, f'{name}: dpi {page and page[4:]}, expected {want} (sides swapped)')

    # JPEG inside TIFF: YCbCr subsampled (libtiff's JPEG codec) and gray.
    rgb.save(path('jpeg-ycbcr.tif'), compression='jpeg', quality=80)
    same_as(path('jpeg-ycbcr.tif'), Image.open(path('jpeg-ycbcr.tif')).convert('RGB'), 'JPEG-in-TIFF YCbCr')
    gray.save(path('jpeg-gray.tif'), compression='jpeg')
    same_as(path('jpeg-gray.tif'), Image.open(path('jpeg-gray.tif')).convert('L'), 'JPEG-in-TIFF gray')

    # Refused: CMYK, and files cut short.
    Image.new('CMYK', (16, 16), (10, 20, 30, 40)).save(path('cmyk.jpg'))
    expect_failure(path('cmyk.jpg'), 'CMYK')
    for name in ('rgb-420.jpg', 'rgb-progressive.jpg'):
        data = open(path(name), 'rb').read()
        open(path('cut-' + name), 'wb').write(data[:len(data) * 3 // 5])
        expect_failure(path('cut-' + name), 'truncated JPEG')


# ---- JPEG 2000 -------------------------------------------------------------------------

def add_resolution_box(jp2, vr, hr):
    """`jp2` with a capture resolution box (resc) in its header box: vr and hr as
    (numerator, denominator, exponent) of dots per metre."""
    pos = 0
    while pos < len(jp2):
        length, kind = struct.unpack('>I4s', jp2[pos:pos + 8])
        if kind == b'jp2h':
            resc = struct.pack('>I4sHHHHbb', 18, b'resc', vr[0], vr[1], hr[0], hr[1], vr[2], hr[2])
            res = struct.pack('>I4s', 8 + len(resc), b'res ') + resc
            header = struct.pack('>I4s', length + len(res), b'jp2h') + jp2[pos + 8:pos + length] + res
            return jp2[:pos] + header + jp2[pos + length:]
        pos += length
    raise ValueError('no jp2h box')


def test_jpeg2000():
    gray, rgb = picture('L', 45, 31, 5), picture('RGB', 45, 31, 6)
    rgba = picture('RGBA', 45, 31, 7)
    variants = [
        ('gray.jp2', gray, {}),
        ('rgb.jp2', rgb, {}),
        ('rgb-lossy.jp2', rgb, dict(quality_mode='rates', quality_layers=[30], irreversible=True)),
        ('rgb-tiles.jp2', rgb, dict(tile_size=(16, 16))),
        ('rgb.j2k', rgb, {}),
        ('gray-lossy.j2k', gray, dict(quality_mode='dB', quality_layers=[30], irreversible=True)),
        ('rgba.jp2', rgba, {}),
        ('la.jp2', picture('LA', 45, 31, 8), {}),
    ]
    for name, img, options in variants:
        img.save(path(name), **options)
        decoded = Image.open(path(name))
        decoded.load()
        expected = over_white(decoded) if decoded.mode in ('RGBA', 'LA') else decoded
        same_as(path(name), expected, name)

    # 16-bit gray, scaled to 8 bits with rounding.
    wide = Image.frombytes('I;16', (20, 10), bytes(random.Random(9).randrange(256) for _ in range(400)))
    wide.save(path('gray16.jp2'))
    decoded = Image.open(path('gray16.jp2'))
    values = struct.unpack('<200H', decoded.tobytes())
    expected = Image.frombytes('L', (20, 10), bytes((v * 255 + 32767) // 65535 for v in values))
    same_as(path('gray16.jp2'), expected, 'gray16.jp2')

    # The capture resolution: 300 dpi across, 150 down, exactly representable.
    data = add_resolution_box(open(path('rgb.jp2'), 'rb').read(), (15000, 254, 2), (30000, 254, 2))
    open(path('dpi.jp2'), 'wb').write(data)
    page = docbin_page(path('dpi.jp2'))
    want = Image.open(path('dpi.jp2')).info.get('dpi')
    check(page and page[4:] == (300.0, 150.0) and want == (300.0, 150.0),
          f'JPEG 2000 resc: docbin {page and page[4:]}, Pillow {want}')

    # Refused: cut short (strict decoding), garbage after the header.
    data = open(path('rgb.jp2'), 'rb').read()
    open(path('cut.jp2'), 'wb').write(data[:len(data) * 7 // 10])
    expect_failure(path('cut.jp2'), 'JPEG 2000')
    body = data.index(b'jp2c') + 4 + 60
    open(path('noise.jp2'), 'wb').write(data[:body] + bytes(random.Random(3).randrange(256)
                                                            for _ in range(len(data) - body)))
    expect_failure(path('noise.jp2'), 'JPEG 2000')


# ---- TIFF ------------------------------------------------------------------------------

def test_tiff_pages():
    pages = [picture('L', 40, 30, 10), picture('RGB', 25, 50, 11),
             picture('L', 33, 17, 12).point(lambda v: 255 if v >= 128 else 0).convert('1')]
    pages[0].save(path('three.tif'), save_all=True, append_images=pages[1:], compression='tiff_lzw')
    got = docbin_pages(path('three.tif'))
    check(got and len(got) == 3, f'3-page TIFF: {got and len(got)} pages')
    for i, page in enumerate(got or []):
        want = pages[i].convert('L' if pages[i].mode == '1' else pages[i].mode)
        check(page[:4] == (want.mode, want.width, want.height, want.tobytes()), f'3-page TIFF: page {i + 1} differs')
    rc, out, err = tool('pages', path('three.tif'))
    check(rc == 0 and out.splitlines() == ['page 0: 40 30 1', 'page 1: 25 50 3', 'page 2: 33 17 1'],
          f'3-page TIFF peeks: {out!r} {err!r}')
    for name, compression in (('g4.tif', 'group4'), ('g3.tif', 'group3'), ('packbits.tif', 'packbits')):
        pages[2].save(path(name), compression=compression)
        same_as(path(name), pages[2].convert('L'), name)


def tiffinfo(file):
    p = subprocess.run([TIFFINFO, file], capture_output=True, text=True)
    return p.stdout


def test_writers():
    # A page with ink, at 300 dpi.
    page = picture('L', 64, 40, 13)
    page.save(path('page.png'), dpi=(300, 300))
    rc, _, err = tool('write', path('out-g4.tif'), 1, 'default', path('page.png'))
    check(rc == 0, f'write G4: {err}')
    rc, _, err = tool('write', path('out-1.png'), 1, 'default', path('page.png'))
    check(rc == 0, f'write 1-bit PNG: {err}')
    g4 = Image.open(path('out-g4.tif'))
    binary = Image.open(path('out-1.png')).convert('L')
    check(g4.convert('L').tobytes() == binary.tobytes(), 'G4 output read by Pillow differs from the PNG output')
    # Ink is black for every reader: the darkest source pixel is black.
    darkest = min(range(64 * 40), key=lambda i: page.tobytes()[i])
    check(g4.convert('L').tobytes()[darkest] == 0, 'G4 output: ink is not black in Pillow')
    check(g4.info.get('dpi') == (300, 300), f'G4 output dpi in Pillow: {g4.info.get("dpi")}')
    if TIFFINFO and TIFFCP:
        info = tiffinfo(path('out-g4.tif'))
        for want in ('CCITT Group 4', 'min-is-white', 'Resolution: 300, 300 pixels/inch'):
            check(want in info, f'tiffinfo does not say "{want}":\n{info}')
        # libtiff's own decoder, through tiffcp, to an uncompressed copy.
        p = subprocess.run([TIFFCP, '-c', 'none', path('out-g4.tif'), path('plain.tif')], capture_output=True)
        check(p.returncode == 0 and 'None' in tiffinfo(path('plain.tif')), 'tiffcp cannot decompress the G4 output')
        check(Image.open(path('plain.tif')).convert('L').tobytes() == binary.tobytes(),
              'the G4 output, decompressed by tiffcp, differs from the PNG output')

    # 8-bit LZW and Deflate; then the resolution from PNG to TIFF and back.
    for compression in ('lzw', 'deflate', 'none'):
        out = path(f'out-{compression}.tif')
        rc, _, err = tool('write', out, 8, compression, path('page.png'))
        check(rc == 0 and Image.open(out).tobytes() == page.tobytes(), f'8-bit {compression} TIFF: {err}')
        if TIFFINFO:
            name = {'lzw': 'LZW', 'deflate': 'AdobeDeflate', 'none': 'None'}[compression]
            check(f'Compression Scheme: {name}' in tiffinfo(out), f'tiffinfo: not {name}')
    rc, _, err = tool('write', path('back.png'), 8, 'default', path('out-lzw.tif'))
    before = chunks(open(path('page.png'), 'rb').read()).get(b'pHYs')
    after = chunks(open(path('back.png'), 'rb').read()).get(b'pHYs') if rc == 0 else None
    check(before and after == before, f'pHYs after PNG -> TIFF -> PNG: {after}, before {before}')

    # Pages in, pages out, in order.
    inputs = [path('page.png'), path('three.tif')]
    rc, _, err = tool('write', path('multi.tif'), 8, 'deflate', *inputs)
    check(rc == 0, f'multi-page write: {err}')
    multi = Image.open(path('multi.tif'))
    check(multi.n_frames == 4, f'multi-page output has {multi.n_frames} pages, expected 4')
    expected = [page] + [Image.open(path('three.tif')) for _ in range(3)]
    for i in range(1, 4):
        expected[i].seek(i - 1)
    for i in range(min(4, multi.n_frames)):
        multi.seek(i)
        want = expected[i].convert('L' if expected[i].mode in ('1', 'L') else 'RGB')
        check(multi.convert(want.mode).tobytes() == want.tobytes(), f'multi-page output: page {i + 1} differs')


def main():
    try:
        test_jpeg()
        test_jpeg2000()
        test_tiff_pages()
        test_writers()
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
    if failures:
        print(f'test_formats.py: {len(failures)} failures', file=sys.stderr)
        return 1
    print('test_formats.py: ok')
    return 0


if __name__ == '__main__':
    sys.exit(main())
