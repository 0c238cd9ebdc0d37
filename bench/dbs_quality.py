#!/usr/bin/env python3
"""DBS halftone quality: the parallel block search against the sequential raster search.

Makes three test pictures (the 2048x512 ramp with one gray level per 8 columns, a
photograph-like picture from docbin-synth --photo and a gray document page from
docbin-synth), halftones each with `--algo dbs` in both search orders, scores them with
docbin-eval --halftone (HVS-filtered error and HPSNR, docs/evaluation.md), counts the ramp's
levels without minority dots, and writes a markdown table. Everything is deterministic, so
re-running the command reproduces the committed numbers.

usage: bench/dbs_quality.py [--build build] [--out bench/results/dbs-quality.md]
                            [--photo 1024x768] [--page 1240x1754]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f'{" ".join(cmd)}: {p.stderr.strip()}')
    return p.stdout + p.stderr


def write_ramp(path):
    """2048x512, gray = column / 8: each band of 8 columns is one level (4096 pixels)."""
    w, h = 2048, 512
    row = bytes(x // 8 for x in range(w))
    with open(path, 'wb') as f:
        f.write(b'P5\n%d %d\n255\n' % (w, h))
        f.write(row * h)


def read_pgm(path):
    data = open(path, 'rb').read()
    m = re.match(rb'P5\s+(\d+)\s+(\d+)\s+255\s', data)
    w, h = int(m.group(1)), int(m.group(2))
    return w, h, data[m.end():]


def clipped_levels(path):
    """Levels 1..254 of the ramp whose band has no minority dot."""
    w, h, px = read_pgm(path)
    missing = 0
    for level in range(1, 255):
        white = sum(px[y * w + x] == 255 for y in range(h) for x in range(level * 8, level * 8 + 8))
        minority = white if level < 128 else 8 * h - white
        missing += minority == 0
    return missing


def halftone(docbin_run, src, dst, order):
    """One run of the order's own map (raster runs on the cpu role); returns the report and the wall time."""
    mapping = 'gpu' if order == 'blocks' else 'cpu'
    t0 = time.monotonic()
    out = run([docbin_run, '--algo', 'dbs', '--map', mapping, '--param', f'order={order}', '--depth', '8',
               '--profile', src, '-o', dst])
    wall = time.monotonic() - t0
    report = dict(re.findall(r'^(rounds|converged|toggles|swaps): (\d+)', out, flags=re.M))
    return report, wall


def score(docbin_eval, src, dst):
    out = run([docbin_eval, '--halftone', src, dst])
    err = float(re.search(r'HVS error\s+([0-9.eE+-]+)', out).group(1))
    hpsnr = float(re.search(r'HPSNR\s+([0-9.eE+-]+)', out).group(1))
    return err, hpsnr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--build', default='build')
    ap.add_argument('--out', default=os.path.join('bench', 'results', 'dbs-quality.md'))
    ap.add_argument('--photo', default='1024x768')
    ap.add_argument('--page', default='1240x1754')
    args = ap.parse_args()
    docbin_run = os.path.join(args.build, 'docbin-run')
    docbin_eval = os.path.join(args.build, 'docbin-eval')
    synth = os.path.join(args.build, 'docbin-synth')
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        pictures = [('ramp 2048x512 (level = column / 8)', os.path.join(tmp, 'ramp.pgm')),
                    (f'photo-like {args.photo} (docbin-synth --photo)', os.path.join(tmp, 'photo.pgm')),
                    (f'document page {args.page} (docbin-synth --gray)', os.path.join(tmp, 'page.pgm'))]
        write_ramp(pictures[0][1])
        run([synth, '--photo', '--size', args.photo, '-o', pictures[1][1]])
        run([synth, '--gray', '--size', args.page, '-o', pictures[2][1]])
        for name, src in pictures:
            result = {}
            for order in ('blocks', 'raster'):
                dst = os.path.join(tmp, f'{order}.pgm')
                report, wall = halftone(docbin_run, src, dst, order)
                err, hpsnr = score(docbin_eval, src, dst)
                clipped = clipped_levels(dst) if src.endswith('ramp.pgm') else None
                result[order] = (err, hpsnr, report, wall, clipped)
                print(f'{name:45s} {order:7s} HVS error {err:.8f} HPSNR {hpsnr:.3f} dB rounds {report["rounds"]}'
                      f' {wall:.1f} s', file=sys.stderr)
            rows.append((name, result))
    lines = [
        '# DBS halftone quality: parallel block search vs sequential raster search',
        '',
        'Default parameters (sigma 1.2, 9x9, D = 9, seed 1, 32x32 blocks). HVS error = mean (a - v*b)^2 and HPSNR '
        'as `docbin-eval --halftone` (docs/evaluation.md, "Halftones"); lower error and higher HPSNR are better. '
        'The block search runs on the gpu role, the raster search on the cpu role (host code); rounds are block '
        'rounds or raster passes, the last one changing nothing. "clipped levels": ramp levels 1..254 without a '
        'single minority dot.',
        '',
        f'Made by `bench/dbs_quality.py --build {args.build} --photo {args.photo} --page {args.page}`.',
        '',
        '| picture | search | HVS error | HPSNR dB | rounds | toggles | swaps | clipped levels | blocks vs raster |',
        '|---|---|---|---|---|---|---|---|---|',
    ]
    for name, result in rows:
        raster_err = result['raster'][0]
        for order in ('blocks', 'raster'):
            err, hpsnr, report, _, clipped = result[order]
            rel = f'{100.0 * (err - raster_err) / raster_err:+.2f}% error' if order == 'blocks' else ''
            lines.append(f'| {name} | {order} | {err:.8f} | {hpsnr:.3f} | {report["rounds"]} | {report["toggles"]} '
                         f'| {report["swaps"]} | {"" if clipped is None else clipped} | {rel} |')
    lines.append('')
    with open(args.out, 'w') as f:
        f.write('\n'.join(lines))
    print(f'wrote {args.out}', file=sys.stderr)


if __name__ == '__main__':
    main()
