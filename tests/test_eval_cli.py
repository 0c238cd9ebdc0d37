#!/usr/bin/env python3
"""docbin-eval end to end: one pair, many pairs, halftones, and bad input.

Every failure of a single evaluation must exit with the documented code and
print exactly one line on stderr starting with "docbin-eval:".
usage: test_eval_cli.py PATH/TO/docbin-eval [DOXA_PAGE_DIR]
The Doxa page checks are skipped when the data directory is absent.
"""
import json
import math
import os
import subprocess
import sys
import tempfile

from clitest import check, failures, png_bytes, write

EVAL = sys.argv[1]
DATA = sys.argv[2] if len(sys.argv) > 2 else ''


def run(args):
    p = subprocess.run([EVAL] + args, capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def write_png(path, ink):
    """ink: list of rows of 0/1 (1 = ink = black); written as 8-bit gray 0/255."""
    rows = [bytes(0 if v else 255 for v in r) for r in ink]
    return write(path, png_bytes(len(ink[0]), len(ink), rows))


def write_pbm(path, ink):
    text = 'P1\n%d %d\n' % (len(ink[0]), len(ink)) + '\n'.join(' '.join(str(v) for v in r) for r in ink) + '\n'
    return write(path, text.encode())


def write_pgm(path, values):
    return write(path, b'P5\n%d %d\n255\n' % (len(values[0]), len(values)) + b''.join(bytes(r) for r in values))


def pattern(w, h, seed):
    """A small page: a few strokes, with `seed` moving them."""
    return [[1 if (y % 6 in (2, 3) and (x + seed) % 9 < 6) or (x == (y * seed) % w) else 0 for x in range(w)]
            for y in range(h)]


def flip(ink, every):
    return [[v ^ (1 if (x * 7 + y * 3) % every == 0 else 0) for x, v in enumerate(r)] for y, r in enumerate(ink)]


def counts(gt, bn):
    c = {'tp': 0, 'tn': 0, 'fp': 0, 'fn': 0}
    for gr, br in zip(gt, bn):
        for g, b in zip(gr, br):
            c['tp' if g and b else 'fn' if g else 'fp' if b else 'tn'] += 1
    return c


def expect_failure(name, args, code, *needles):
    rc, out, err = run(args)
    lines = [l for l in err.splitlines() if l.strip()]
    check(rc == code, f'{name}: exit {rc}, expected {code} (stderr: {err.strip()!r})')
    check(len(lines) == 1 and lines[0].startswith('docbin-eval:'), f'{name}: not one error line: {err!r}')
    for n in needles:
        check(n in err, f'{name}: {n!r} not in the message {err.strip()!r}')
    check(out == '', f'{name}: output on stdout: {out!r}')
    print(f'ok   {name}: exit {rc}: {lines[0] if lines else ""}')


def near(got, want, tol):
    return got is not None and abs(got - want) <= tol


def test_pair(tmp):
    w, h = 24, 20
    gt_ink = pattern(w, h, 1)
    bin_ink = flip(gt_ink, 11)
    gt = write_png(os.path.join(tmp, 'page_gt.png'), gt_ink)
    bn = write_pbm(os.path.join(tmp, 'page.pbm'), bin_ink)
    c = counts(gt_ink, bin_ink)
    p = c['tp'] / (c['tp'] + c['fp'])
    r = c['tp'] / (c['tp'] + c['fn'])

    rc, out, err = run([gt, bn, '--json'])
    check(rc == 0, f'pair --json: exit {rc}: {err}')
    lines = out.splitlines()
    check(len(lines) == 1, f'pair --json: {len(lines)} lines')
    try:
        o = json.loads(lines[0])
        for k in ('fmeasure', 'precision', 'recall', 'pseudo_fmeasure', 'pseudo_precision', 'pseudo_recall',
                  'psnr', 'drd', 'nrm', 'mcc', 'accuracy', 'tp', 'tn', 'fp', 'fn', 'nubn', 'drd_sum', 'gt', 'bin'):
            check(k in o, f'pair --json: key {k} missing')
        check(all(o[k] == c[k] for k in c), f'pair --json: counts {o} vs {c}')
        check(near(o['fmeasure'], 100 * 2 * p * r / (p + r), 1e-9), f'pair F {o["fmeasure"]}')
        check(near(o['psnr'], 10 * math.log10(w * h / (c['fp'] + c['fn'])), 1e-9), f'pair PSNR {o["psnr"]}')
        check(o['weights'] == 'generated' and isinstance(o['pseudo_fmeasure'], float),
              f'pair: pseudo-metrics from generated weights: {o.get("weights")} {o.get("pseudo_fmeasure")}')
    except (ValueError, KeyError, IndexError) as e:
        check(False, f'pair --json: not one JSON object: {e}: {out!r}')

    rc, out, err = run([gt, bn])
    check(rc == 0 and 'F-measure' in out and 'DRD' in out and 'pseudo-F' in out and 'NUBN' in out,
          f'pair table: exit {rc}: {out!r} {err!r}')

    rc, out, _ = run([gt, bn, '--no-pseudo', '--json'])
    o = json.loads(out) if rc == 0 else {}
    check(rc == 0 and o.get('pseudo_fmeasure', 0) is None and o.get('weights') == 'none',
          f'--no-pseudo: pseudo values not null: {out!r}')

    # Weight files: P (stored PW - 1) all 0 and R = 1 on the ink make the pseudo
    # metrics equal to the plain ones.
    pw = write(os.path.join(tmp, 'page_gt_PWeights.dat'), ''.join('%f ' % 0 for r in gt_ink for v in r).encode())
    rw = write(os.path.join(tmp, 'page_gt_RWeights.dat'),
               ''.join('%f ' % v for r in gt_ink for v in r).encode())
    rc, out, err = run([gt, bn, '--pweights', pw, '--rweights', rw, '--json'])
    o = json.loads(out) if rc == 0 else {}
    check(rc == 0 and o.get('weights') == 'files' and near(o.get('pseudo_precision'), o['precision'], 1e-9)
          and near(o.get('pseudo_recall'), o['recall'], 1e-9), f'weight files: {out!r} {err!r}')

    # Perfect result: PSNR is inf in the table and null in JSON.
    rc, out, _ = run([gt, gt, '--json', '--no-pseudo'])
    o = json.loads(out) if rc == 0 else {}
    check(rc == 0 and o.get('psnr', 0) is None and o.get('fmeasure') == 100, f'perfect result: {out!r}')
    rc, out, _ = run([gt, gt, '--no-pseudo'])
    check(rc == 0 and any(l.startswith('PSNR') and 'inf' in l for l in out.splitlines()), f'perfect table: {out!r}')

    # Bad input.
    gray = write_pgm(os.path.join(tmp, 'gray.pgm'), [[255] * w for _ in range(h)])
    with open(gray, 'r+b') as f:
        f.seek(-(w * h) + 3 * w + 5, os.SEEK_END)
        f.write(bytes([128]))
    expect_failure('non-binary BIN', [gt, gray], 1, 'gray.pgm', '(5, 3)', '128')
    expect_failure('non-binary GT', [gray, bn], 1, 'gray.pgm', '(5, 3)')
    small = write_pbm(os.path.join(tmp, 'small.pbm'), pattern(w - 1, h, 1))
    expect_failure('mismatched sizes', [gt, small], 1, 'page_gt.png', 'small.pbm', f'{w}x{h}', f'{w - 1}x{h}')
    expect_failure('missing file', [gt, os.path.join(tmp, 'nope.png')], 1, 'nope.png')
    expect_failure('not an image', [gt, write(os.path.join(tmp, 'notes.png'), b'hello\n' * 10)], 1, 'notes.png')
    short = write(os.path.join(tmp, 'short.dat'), b'0.000000 ' * (w * h - 1))
    expect_failure('wrong weight count', [gt, bn, '--pweights', short, '--rweights', rw], 1, 'short.dat',
                   f'{w * h - 1} values, expected {w * h}')
    comma = write(os.path.join(tmp, 'comma.dat'), b'0,500000 ' * (w * h))
    expect_failure('comma decimals', [gt, bn, '--pweights', pw, '--rweights', comma], 1, 'comma.dat', 'comma')
    expect_failure('--pweights without --rweights', [gt, bn, '--pweights', pw], 2, '--rweights')
    expect_failure('--rweights without --pweights', [gt, bn, '--rweights', rw], 2, '--pweights')
    expect_failure('--no-pseudo with weights', [gt, bn, '--no-pseudo', '--pweights', pw, '--rweights', rw], 2)
    expect_failure('no arguments', [], 2)
    expect_failure('one argument', [gt], 2)
    expect_failure('three arguments', [gt, bn, bn], 2)
    expect_failure('unknown option', [gt, bn, '--frobnicate'], 2, '--frobnicate')
    expect_failure('option without value', [gt, bn, '--pweights'], 2)
    expect_failure('--gt-dir without --bin-dir', ['--gt-dir', tmp], 2)
    expect_failure('--gt-dir with GT BIN', ['--gt-dir', tmp, '--bin-dir', tmp, gt, bn], 2)

    rc, out, _ = run(['--help'])
    check(rc == 0 and 'Exit status' in out and 'black (0)' in out and 'generated' in out and '--gt-dir' in out
          and '--halftone' in out, '--help does not document everything')


def test_dirs(tmp):
    gd, bd = os.path.join(tmp, 'gt'), os.path.join(tmp, 'bin')
    os.mkdir(gd)
    os.mkdir(bd)
    w, h = 20, 16
    pairs = {}
    # DIBCO naming, PNG -> PNG; PBM ground truth -> PNG result; same name in both.
    for name, gt_name, bin_name, seed in (('a', 'a_gt.png', 'a.png', 1), ('b', 'b_gt.pbm', 'b.png', 2),
                                          ('c', 'c.png', 'c.png', 3)):
        g, b = pattern(w, h, seed), flip(pattern(w, h, seed), 5 + seed)
        (write_png if gt_name.endswith('png') else write_pbm)(os.path.join(gd, gt_name), g)
        write_png(os.path.join(bd, bin_name), b)
        pairs[gt_name] = counts(g, b)
    write_png(os.path.join(gd, 'd_gt.png'), pattern(w, h, 4))          # no result
    write_png(os.path.join(gd, 'e_gt.png'), pattern(w, h, 5))          # result of another size
    write_png(os.path.join(bd, 'e.png'), pattern(w + 2, h, 5))
    write(os.path.join(gd, 'README.txt'), b'not an image\n')            # ignored
    write(os.path.join(bd, 'z.png'), png_bytes(1, 1, [b'\0']))         # a result without GT: ignored
    # RGB images are never a ground truth or a result: an original beside them is no candidate.
    write(os.path.join(gd, 'a.ppm'), b'P6\n1 1\n255\n\0\0\0')
    write(os.path.join(bd, 'a.ppm'), b'P6\n1 1\n255\n\0\0\0')
    os.symlink('missing.png', os.path.join(gd, 'f_gt.png'))            # dangling: a failed pair, named

    rc, out, err = run(['--gt-dir', gd, '--bin-dir', bd, '--json'])
    check(rc == 1, f'dirs --json: exit {rc}, expected 1 (a pair failed)')
    try:
        objs = [json.loads(l) for l in out.splitlines()]
    except ValueError as e:
        objs = []
        check(False, f'dirs --json: a line is not JSON: {e}: {out!r}')
    if objs:
        per_image = {os.path.basename(o['gt']): o for o in objs[:-1]}
        check(sorted(per_image) == ['a_gt.png', 'b_gt.pbm', 'c.png', 'd_gt.png', 'e_gt.png', 'f_gt.png'],
              f'dirs: images {sorted(per_image)}')
        for name, c in pairs.items():
            o = per_image.get(name, {})
            check(all(o.get(k) == v for k, v in c.items()), f'dirs: {name}: counts {o} vs {c}')
        check('error' in per_image.get('d_gt.png', {}) and per_image['d_gt.png'].get('bin') is None,
              'dirs: missing result not reported as an error line')
        check('e.png' in per_image.get('e_gt.png', {}).get('error', ''), 'dirs: size mismatch not reported')
        last = objs[-1]
        good = [per_image[n] for n in pairs]
        mean_f = sum(o['fmeasure'] for o in good) / len(good)
        check(last.get('images') == 3 and last.get('failed') == 3 and near(last['mean']['fmeasure'], mean_f, 1e-9),
              f'dirs: final line {last}')
        check(all(k in last['mean'] for k in ('fmeasure', 'pseudo_fmeasure', 'psnr', 'drd', 'nrm', 'mcc')),
              f'dirs: mean keys {sorted(last["mean"])}')
    err_lines = [l for l in err.splitlines() if l.strip()]
    check(any('d_gt.png' in l and 'no result' in l for l in err_lines), f'dirs: missing result: {err!r}')
    check(any('e_gt.png' in l and 'e.png' in l and f'{w}x{h}' in l for l in err_lines),
          f'dirs: size mismatch: {err!r}')
    check(any('f_gt.png' in l for l in err_lines), f'dirs: dangling ground truth not named: {err!r}')
    check(all(l.startswith('docbin-eval:') for l in err_lines), f'dirs: stderr lines {err_lines}')

    rc, out, err = run(['--gt-dir', gd, '--bin-dir', bd])
    rows = out.splitlines()
    check(rc == 1 and any(r.startswith('a_gt.png') for r in rows) and any(r.startswith('mean') for r in rows)
          and 'means over 3 images' in out, f'dirs table: exit {rc}: {out!r}')

    # Every pair good: exit 0.
    os.remove(os.path.join(gd, 'd_gt.png'))
    os.remove(os.path.join(gd, 'e_gt.png'))
    os.remove(os.path.join(gd, 'f_gt.png'))
    rc, out, err = run(['--gt-dir', gd, '--bin-dir', bd, '--no-pseudo', '--json'])
    last = json.loads(out.splitlines()[-1]) if rc == 0 else {}
    check(rc == 0 and last.get('images') == 3 and last.get('mean', {}).get('pseudo_fmeasure', 0) is None,
          f'dirs all good: exit {rc}: {out!r} {err!r}')
    expect_failure('--gt-dir missing', ['--gt-dir', os.path.join(tmp, 'none'), '--bin-dir', bd], 1, 'none')
    empty = os.path.join(tmp, 'empty')
    os.mkdir(empty)
    expect_failure('--gt-dir without images', ['--gt-dir', empty, '--bin-dir', bd], 1, 'empty')


def test_halftone(tmp):
    w, h = 16, 12
    orig = write_pgm(os.path.join(tmp, 'orig.pgm'), [[255] * w for _ in range(h)])
    white = write_pbm(os.path.join(tmp, 'white.pbm'), [[0] * w for _ in range(h)])
    rc, out, err = run(['--halftone', orig, white, '--json'])
    o = json.loads(out) if rc == 0 else {}
    check(rc == 0 and 'hpsnr' in o and o['hpsnr'] is None and isinstance(o.get('hvs_error'), float),
          f'halftone white/white: HPSNR must be null (inf): {out!r} {err!r}')
    dots = write_pbm(os.path.join(tmp, 'dots.pbm'), [[1 if (x + y) % 4 == 0 else 0 for x in range(w)]
                                                     for y in range(h)])
    rgb = write(os.path.join(tmp, 'orig.png'), png_bytes(w, h, [bytes([200, 100, 50] * w)] * h, color_type=2))
    rc, out, err = run(['--halftone', rgb, dots])
    check(rc == 0 and 'HVS error' in out and 'HPSNR' in out, f'halftone table: {out!r} {err!r}')
    gray = write_pgm(os.path.join(tmp, 'ht-gray.pgm'), [[128] * w for _ in range(h)])
    expect_failure('non-binary halftone', ['--halftone', orig, gray], 1, 'ht-gray.pgm')
    expect_failure('halftone size mismatch', ['--halftone', orig, write_pbm(os.path.join(tmp, 'ht-small.pbm'),
                                                                            [[0] * 3] * 3)], 1, '3x3')
    expect_failure('halftone with weights', ['--halftone', orig, white, '--no-pseudo'], 2)
    expect_failure('halftone with one file', ['--halftone', orig], 2)


def test_doxa(data):
    gt = os.path.join(data, '2JohnC1V3-GroundTruth.pbm')
    bn = os.path.join(data, '2JohnC1V3-Sauvola.pbm')
    pw = os.path.join(data, '2JohnC1V3-GroundTruth_PWeights.dat')
    rw = os.path.join(data, '2JohnC1V3-GroundTruth_RWeights.dat')
    rc, out, err = run([gt, bn, '--pweights', pw, '--rweights', rw, '--json'])
    o = json.loads(out) if rc == 0 else {}
    check(rc == 0, f'Doxa page --json: exit {rc}: {err}')
    check(near(o.get('fmeasure'), 93.204, 0.001), f'Doxa page F {o.get("fmeasure")}, expected 93.204')
    check(near(o.get('drd'), 1.9519, 0.0001), f'Doxa page DRD {o.get("drd")}, expected 1.9519')
    check(near(o.get('pseudo_fmeasure'), 93.393, 0.001), f'Doxa page pseudo-F {o.get("pseudo_fmeasure")}')
    check(o.get('drd_sum') == 4122339441 and o.get('nubn') == 2112, f'Doxa page DRD sum/NUBN {o}')
    rc, out, err = run([gt, bn, '--pweights', pw, '--rweights', rw])
    f_line = [l for l in out.splitlines() if l.startswith('F-measure')]
    drd_line = [l for l in out.splitlines() if l.startswith('DRD')]
    check(rc == 0 and f_line and near(float(f_line[0].split()[1]), 93.204, 0.001)
          and drd_line and near(float(drd_line[0].split()[1]), 1.9519, 0.0001), f'Doxa page table: {out!r}')
    # Generated weights (no .dat given): reported; their exactness is the generator's own test.
    rc, out, err = run([gt, bn, '--json'])
    o = json.loads(out) if rc == 0 else {}
    check(rc == 0 and o.get('weights') == 'generated' and isinstance(o.get('pseudo_fmeasure'), float),
          f'Doxa page with generated weights: {out!r} {err!r}')
    if rc == 0:
        print(f'note: pseudo-F with generated weights {o.get("pseudo_fmeasure"):.4f} (with the .dat files 93.393)')


def main():
    with tempfile.TemporaryDirectory() as tmp:
        test_pair(tmp)
        test_dirs(tmp)
        test_halftone(tmp)
    if DATA and os.path.isdir(DATA):
        test_doxa(DATA)
    else:
        print(f'skip: no Doxa page data directory ({DATA or "none given"}); the page checks did not run')
    if failures:
        print(f'{len(failures)} failure(s)', file=sys.stderr)
        return 1
    print('eval cli: ok')
    return 0


if __name__ == '__main__':
    sys.exit(main())
