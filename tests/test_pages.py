#!/usr/bin/env python3
"""docbin-run with archive formats end to end: multi-page TIFFs in and out, --split-pages, batches
mixing formats, the resolution kept and set, lengths in physical units, pipes, and a bad page.

Fixtures are made here with Pillow and checked with Pillow, independently of docbin's codecs.
usage: test_pages.py PATH/TO/docbin-run (run with a Python that has Pillow; else it skips)
"""
import json
import os
import resource
import subprocess
import sys
import tempfile

try:
    from PIL import Image
except ImportError:
    print('SKIP: Pillow is not installed (Debian: python3-pil)')
    sys.exit(77)

import clitest
from clitest import check, failures

DOCBIN = sys.argv[1]


def run(args, stdin=None, timeout=300):
    p = subprocess.run([DOCBIN] + args, input=stdin, capture_output=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr.decode(errors='replace')


def page(w, h, seed):
    """A document-like gray page: strokes on an uneven background, deterministic."""
    img = Image.new('L', (w, h))
    px = img.load()
    for y in range(h):
        for x in range(w):
            v = 200 - (x + y) * 50 // (w + h) + (x * 7 + y * 13 + seed * 31) % 17 - 8
            if (x // 3 + y // 5 + seed) % 9 == 0 or (x * 5 + y * 3 + seed) % 29 < 3:
                v = 40 + (x + y + seed) % 30
            px[x, y] = max(0, min(255, v))
    return img


def pixels(path, n=None):
    """The pages of an image file as (size, bytes) pairs, ink as 0 and paper as 255."""
    img, out = Image.open(path), []
    i = 0
    while True:
        out.append((img.size, img.convert('L').tobytes()))
        i += 1
        if n is not None and i == n:
            break
        try:
            img.seek(i)
        except EOFError:
            break
    return out


def single(tmp, path, extra=()):
    o = os.path.join(tmp, 'single.png')
    rc, _, err = run(['--algo', 'sauvola', '--map', 'cpu', *extra, path, '-o', o])
    check(rc == 0, f'single run of {path}: {err}')
    return pixels(o)[0]


def main():
    with tempfile.TemporaryDirectory() as tmp:
        pages = [page(90, 70, 1), page(60, 80, 2), page(75, 75, 3)]
        tif = os.path.join(tmp, 'book.tif')
        pages[0].save(tif, save_all=True, append_images=pages[1:], compression='tiff_lzw', dpi=(300, 300))
        alone = []
        for i, p in enumerate(pages):
            f = os.path.join(tmp, f'page{i}.png')
            p.save(f, dpi=(300, 300))
            alone.append(single(tmp, f))
        # A 3-page TIFF gives a 3-page Group 4 TIFF, pages in order, each as the page alone gives it.
        out = os.path.join(tmp, 'book-out.tif')
        rc, _, err = run(['--algo', 'sauvola', '--map', 'cpu', tif, '-o', out])
        got = pixels(out) if rc == 0 else []
        check(rc == 0 and got == alone, f'3-page TIFF: exit {rc}, {len(got)} pages: {err}')
        im = Image.open(out) if rc == 0 else None
        check(im is not None and im.info.get('compression') == 'group4' and
              tuple(round(v) for v in im.info.get('dpi', (0, 0))) == (300, 300), f'G4 and 300 dpi: {im and im.info}')
        print('ok   a 3-page TIFF gives a 3-page G4 TIFF at 300 dpi, pages in order')
        # --split-pages names the pages NAME-0001.EXT ...
        rc, _, err = run(['--algo', 'sauvola', '--map', 'cpu', '--split-pages', tif, '-o', os.path.join(tmp, 's.png')])
        names = sorted(f for f in os.listdir(tmp) if f.startswith('s-'))
        check(rc == 0 and names == ['s-0001.png', 's-0002.png', 's-0003.png'] and
              [pixels(os.path.join(tmp, n))[0] for n in names] == alone, f'--split-pages: {names}: {err}')
        print(f'ok   --split-pages: {names}')
        # A PNG output cannot hold three pages: refused before any work, naming the fix.
        rc, _, err = run(['--algo', 'sauvola', tif, '-o', os.path.join(tmp, 'three.png')])
        check(rc == 2 and '--split-pages' in err and not os.path.exists(os.path.join(tmp, 'three.png')),
              f'3 pages into a PNG: exit {rc}: {err}')
        # A batch mixing formats, each output TIFF: one file per input, pages in order.
        mixed = os.path.join(tmp, 'mixed')
        os.makedirs(mixed)
        pages[0].save(os.path.join(mixed, 'a.png'), dpi=(300, 300))
        pages[1].save(os.path.join(mixed, 'b.jpg'), quality=95)
        pages[2].save(os.path.join(mixed, 'c.jp2'))
        os.link(tif, os.path.join(mixed, 'd.tif'))
        log = os.path.join(tmp, 'mixed.jsonl')
        rc, _, err = run(['--algo', 'sauvola', '--map', 'cpu', '--format', 'tif', '--out-dir', os.path.join(tmp, 'mo'),
                          '--log-json', log, mixed])
        outs = sorted(os.listdir(os.path.join(tmp, 'mo'))) if rc == 0 else []
        check(rc == 0 and outs == ['a.tif', 'b.tif', 'c.tif', 'd.tif'], f'mixed batch: {outs}: {err}')
        check(outs and pixels(os.path.join(tmp, 'mo', 'd.tif')) == alone, 'mixed batch: d.tif pages')
        for name, src in (('b.tif', os.path.join(mixed, 'b.jpg')), ('c.tif', os.path.join(mixed, 'c.jp2'))):
            check(outs and pixels(os.path.join(tmp, 'mo', name))[0] == single(tmp, src), f'mixed batch: {name}')
        lines = [json.loads(l) for l in open(log)] if os.path.exists(log) else []
        d_pages = sorted(l.get('page') for l in lines if l['input'].endswith('d.tif'))
        check(d_pages == [1, 2, 3] and all(l['status'] == 'ok' for l in lines) and
              [l.get('dpi') for l in lines if l['input'].endswith('a.png')] == [300], f'mixed batch log: {lines}')
        print('ok   a batch of PNG, JPEG, JPEG 2000 and a 3-page TIFF into TIFFs, logged by page with dpi')
        # The resolution: kept from the input, set by --dpi, used by lengths in units.
        a300 = os.path.join(tmp, 'page0.png')
        for args, want in (([], 300), (['--dpi', '600'], 600)):
            o = os.path.join(tmp, f'dpi{want}.tif')
            rc, _, err = run(['--algo', 'otsu', *args, a300, '-o', o])
            dpi = Image.open(o).info.get('dpi') if rc == 0 else None
            check(dpi and round(dpi[0]) == want, f'dpi {args}: {dpi}: {err}')
            back = os.path.join(tmp, f'dpi{want}.png')
            run(['--algo', 'otsu', o, '-o', back])
            check(os.path.exists(back) and round(Image.open(back).info.get('dpi', (0,))[0]) == want,
                  f'dpi through TIFF back to PNG {args}')
        print('ok   resolution kept PNG -> TIFF -> PNG, and set by --dpi')
        w75 = single(tmp, a300, ['--param', 'window=15'])
        for length in ('0.05in', '1.27mm', '0.127cm', '15px'):
            check(single(tmp, a300, ['--param', 'window=' + length]) == w75, f'window={length} at 300 dpi is not 15')
        check(single(tmp, a300, ['--param', 'window=0.1in', '--dpi', '150']) == w75,
              'window=0.1in at --dpi 150 is not 15')
        nodpi = os.path.join(tmp, 'nodpi.png')
        pages[0].save(nodpi)
        rc, _, err = run(['--algo', 'sauvola', '--param', 'window=0.1in', nodpi, '-o', os.path.join(tmp, 'x.png')])
        check(rc == 2 and '--dpi' in err and 'nodpi.png' in err, f'a length in a unit without a dpi: {rc}: {err}')
        rc, _, err = run(['--algo', 'sauvola', '--param', 'k=0.1in', a300, '-o', os.path.join(tmp, 'x.png')])
        check(rc == 2 and 'k' in err, f'a unit on a parameter that is no length: {rc}: {err}')
        print('ok   window=0.05in, 1.27mm, 0.127cm and 15px at 300 dpi are window 15; no dpi is an error naming --dpi')
        # Pipes: a page on standard input, the result on standard output.
        rc, so, err = run(['--algo', 'sauvola', '--map', 'cpu', '-', '-o', '-', '--format', 'png'],
                          stdin=open(a300, 'rb').read())
        piped = os.path.join(tmp, 'piped.png')
        clitest.write(piped, so)
        check(rc == 0 and pixels(piped)[0] == alone[0], f'- to -: exit {rc}: {err}')
        rc, _, err = run(['--algo', 'sauvola', '-', '-o', '-'], stdin=b'')
        check(rc == 2 and '--format' in err, f'-o - without --format: {rc}: {err}')
        print('ok   a page through standard input and output')
        # A multi-page TIFF with a bad page: that page named, no output, the other inputs done.
        bad = os.path.join(tmp, 'bad')
        os.makedirs(bad)
        data = bytearray(open(tif, 'rb').read())
        img = Image.open(tif)
        img.seek(1)
        off = img.tag_v2[273][0]  # StripOffsets: the second page's first strip
        data[off:off + 40] = b'\xff' * 40
        clitest.write(os.path.join(bad, 'broken.tif'), bytes(data))
        pages[0].save(os.path.join(bad, 'good.png'))
        rc, _, err = run(['--algo', 'sauvola', '--format', 'tif', '--out-dir', os.path.join(tmp, 'bo'), bad])
        check(rc == 1 and len(err.strip().splitlines()) == 1 and 'broken.tif' in err and 'page 2' in err and
              sorted(os.listdir(os.path.join(tmp, 'bo'))) == ['good.tif'], f'a bad page: exit {rc}: {err}')
        print(f'ok   a bad page is named, its file not written: {err.strip().splitlines()[0] if err else ""}')
        # Memory: pages are read as they are needed, so 200 pages take what 10 do.
        def peak(n):
            many = os.path.join(tmp, f'many{n}.tif')
            pages[0].resize((400, 400)).save(many, save_all=True, append_images=[pages[1].resize((400, 400))] * (n - 1),
                                             compression='tiff_lzw')
            code = ('import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True); '
                    'print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)')
            p = subprocess.run([sys.executable, '-c', code, DOCBIN, '--algo', 'otsu', '--map', 'cpu', many, '-o',
                                os.path.join(tmp, f'many{n}-out.tif')], capture_output=True, text=True)
            return int(p.stdout.strip()) if p.returncode == 0 else -1
        if os.environ.get('DOCBIN_TEST_ASAN') != '1':  # ASan's quarantine keeps freed memory
            small, large = peak(10), peak(200)
            check(small > 0 and large > 0 and large - small < 32 * 1024,
                  f'peak memory of 200 pages {large} kB, of 10 {small}')
            print(f'ok   200 pages in {large} kB at most, 10 in {small}')

    if failures:
        print(f'{len(failures)} failure(s)', file=sys.stderr)
        return 1
    print('pages: ok')
    return 0


if __name__ == '__main__':
    sys.exit(main())
