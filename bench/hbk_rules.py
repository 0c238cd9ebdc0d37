#!/usr/bin/env python3
"""HBK's final labelling rules compared: DIBCO 2009-2013, colour synthetic pages, blank pages.

Runs bench/hbk_rules.c (the plain-C reference of HBK, every candidate rule under both global
loops) at block sizes 8, 16 and 32, Otsu and the library's HBK (docbin-run, --map cpu, default
parameters), scores everything with docbin-eval against the ground truth, checks that the
library gives the reference's image of docbin's rule on every page, and writes the section
"## HBK's final labelling rule" of the quality table (the rest of the file is left as it is)
and one JSON line per page, rule and block size to the log. Everything is deterministic, so
re-running the command reproduces the committed numbers. docs/hbk.md explains the rules.

usage: bench/hbk_rules.py [--build build] [--data ../shared/data] [--jobs 2]
                          [--out bench/results/quality.md] [--log bench/results/hbk-rules.log]
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile

YEARS = ['2009', '2010', '2011', '2012', '2013']
BLOCKS = [8, 16, 32]
DEFAULT_BLOCK = 32
# (directory written by hbk_rules, column title); docbin's rule last.
RULES = [
    ('plain-local', 'local (the old rule)'),
    ('plain-paper-block', 'paper block'),
    ('plain-both', 'both'),
    ('plain-separation', 'separation'),
    ('flat-local', 'local'),
    ('flat-paper-block', 'paper block'),
    ('flat-both', 'both'),
    ('flat-separation', 'separation'),
    ('flat-docbin', 'separation or one mode (docbin)'),
]
SYNTH = ['--seed', '1', '--size', '1240x1754', '--count', '10']
# Blank aged paper: no text (the margins cover the page), every degradation at its default.
BLANK = ['--seed', '1', '--size', '1240x1754', '--count', '10', '--margin', '877', '--paper', '180']
HEADING = "## HBK's final labelling rule"


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f'{" ".join(cmd)}: {p.stderr.strip()}')
    return p.stdout


def evaluate(ev, gt_dir, bin_dir):
    """Per-image rows of docbin-eval (F, counts), keyed by image id."""
    lines = [json.loads(l) for l in run([ev, '--gt-dir', gt_dir, '--bin-dir', bin_dir, '--json',
                                         '--no-pseudo']).splitlines() if l.strip()]
    if not lines or lines[-1].get('failed'):
        sys.exit(f'docbin-eval {gt_dir} {bin_dir}: some pairs failed')
    rows = {}
    for r in lines[:-1]:
        rows[os.path.basename(r['gt']).replace('_gt', '').rsplit('.', 1)[0]] = r
    return rows


def synthetic(synth, args, tmp, name):
    """Writes docbin-synth pages, splitting pages and ground truth into two directories."""
    pages, gt = os.path.join(tmp, name, 'pages'), os.path.join(tmp, name, 'gt')
    os.makedirs(gt)
    run([synth] + args + ['--out-dir', pages])
    for f in sorted(os.listdir(pages)):
        if f.endswith('_gt.png'):
            os.rename(os.path.join(pages, f), os.path.join(gt, f))
    return pages, gt


def mean(values):
    return sum(values) / len(values)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--build', default='build')
    ap.add_argument('--data', default=os.path.join('..', 'shared', 'data'))
    ap.add_argument('--jobs', type=int, default=os.cpu_count() or 1)
    ap.add_argument('--out', default=os.path.join('bench', 'results', 'quality.md'))
    ap.add_argument('--log', default=os.path.join('bench', 'results', 'hbk-rules.log'))
    args = ap.parse_args()
    rules_exe = os.path.join(args.build, 'hbk_rules')
    docbin_run = os.path.join(args.build, 'docbin-run')
    ev = os.path.join(args.build, 'docbin-eval')
    synth = os.path.join(args.build, 'docbin-synth')
    dibco = os.path.join(args.data, 'dibco')
    if not os.path.isdir(dibco):
        sys.exit(f'{dibco} not found: pass --data, the directory that holds dibco/')

    with tempfile.TemporaryDirectory() as tmp:
        datasets = [(f'DIBCO {y}', os.path.join(dibco, y, 'Originals'), os.path.join(dibco, y, 'GT'))
                    for y in YEARS]
        datasets.append(('synthetic',) + synthetic(synth, SYNTH, tmp, 'synthetic'))
        datasets.append(('blank',) + synthetic(synth, BLANK, tmp, 'blank'))

        def inputs(src):
            return [os.path.join(src, f) for f in sorted(os.listdir(src)) if f.endswith('.png')]

        # Every page at every block size: one hbk_rules process per page (the reference is serial).
        jobs = []
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            for name, src, _ in datasets:
                for block in BLOCKS:
                    out = os.path.join(tmp, 'out', name, str(block))
                    os.makedirs(out)
                    for page in inputs(src):
                        jobs.append(pool.submit(run, [rules_exe, '--block', str(block), '--out-dir', out, page]))
                for algo in ('otsu', 'hbk'):
                    out = os.path.join(tmp, 'out', name, algo)
                    jobs.append(pool.submit(run, [docbin_run, '--algo', algo, '--map', 'cpu', '--out-dir', out, src]))
            for j in jobs:
                j.result()

        # scores[(dataset, block or algo, rule or None)] = {image: row}
        scores = {}
        for name, _, gt in datasets:
            for block in BLOCKS:
                for rule, _ in RULES:
                    scores[(name, block, rule)] = evaluate(ev, gt, os.path.join(tmp, 'out', name, str(block), rule))
            for algo in ('otsu', 'hbk'):
                scores[(name, algo, None)] = evaluate(ev, gt, os.path.join(tmp, 'out', name, algo))

    # The library's HBK must be the reference's docbin rule at the default block size, page by page.
    for name, _, _ in datasets:
        lib, ref = scores[(name, 'hbk', None)], scores[(name, DEFAULT_BLOCK, 'flat-docbin')]
        for image, row in lib.items():
            if any(row[k] != ref[image][k] for k in ('tp', 'fp', 'fn', 'tn')):
                sys.exit(f'{name} {image}: the library and the reference disagree')

    with open(args.log, 'w') as log:
        for (name, block, rule), rows in sorted(scores.items(), key=str):
            for image, r in sorted(rows.items()):
                log.write(json.dumps({'dataset': name, 'block': block, 'rule': rule, 'image': image,
                                      'fmeasure': r['fmeasure'], 'tp': r['tp'], 'fp': r['fp'], 'fn': r['fn'],
                                      'tn': r['tn']}) + '\n')

    dibco_sets = [f'DIBCO {y}' for y in YEARS]

    def f_of(name, key, rule):
        return [r['fmeasure'] or 0.0 for r in scores[(name, key, rule)].values()]

    def pooled(names, key, rule):
        return [v for n in names for v in f_of(n, key, rule)]

    def ink_percent(key, rule):
        return [100.0 * r['fp'] / (r['tp'] + r['tn'] + r['fp'] + r['fn'])
                for r in scores[('blank', key, rule)].values()]

    command = ' '.join(['bench/hbk_rules.py'] + sys.argv[1:])
    lines = [HEADING, '',
             f'Made by `{command}` (raw per-page scores: `{args.log}`). HBK\'s images come from the plain-C '
             'reference (`bench/hbk_rules.c` on `tests/reference_hbk.c`); the script checks that the library '
             f'(`docbin-run --algo hbk`, block {DEFAULT_BLOCK}) gives the image of the last column on every page. '
             '"plain": the first global loop, every block adds both its clusters to the global centroids; '
             '"flat": flat blocks give all their pixels to paper. The rules are explained in `docs/hbk.md`.', '',
             f'Mean F-measure, block {DEFAULT_BLOCK}:', '',
             '| dataset | Otsu | ' + ' | '.join(('plain: ' if r.startswith('plain') else 'flat: ') + t
                                               for r, t in RULES) + ' |',
             '|---|' + '---|' * (len(RULES) + 1)]

    def row(title, names):
        cells = [mean(pooled(names, 'otsu', None))] + [mean(pooled(names, DEFAULT_BLOCK, r)) for r, _ in RULES]
        return f'| {title} | ' + ' | '.join(f'{c:.2f}' for c in cells) + ' |'

    for n in dibco_sets:
        lines.append(row(n, [n]))
    total = len(pooled(dibco_sets, 'otsu', None))
    lines.append(row(f'DIBCO 2009-2013, all {total}', dibco_sets))
    low = [sum(v < 50 for v in pooled(dibco_sets, 'otsu', None))] + \
          [sum(v < 50 for v in pooled(dibco_sets, DEFAULT_BLOCK, r)) for r, _ in RULES]
    lines.append('| DIBCO pages with F < 50 | ' + ' | '.join(str(c) for c in low) + ' |')
    lines.append(row('synthetic colour pages (10, as above)', ['synthetic']))
    blank = [ink_percent('otsu', None)] + [ink_percent(DEFAULT_BLOCK, r) for r, _ in RULES]
    lines.append('| blank aged pages: % marked ink, mean (max) | ' +
                 ' | '.join(f'{mean(v):.2f} ({max(v):.2f})' for v in blank) + ' |')
    lines += ['', 'Blank aged pages: `docbin-synth ' + ' '.join(BLANK) + '`: no text, paper at 180 rather than '
              '226, the default illumination, texture, stains and noise. Ink on them is all false.', '',
              'By block size, mean F-measure (old rule / docbin\'s rule):', '',
              '| dataset | ' + ' | '.join(f'block {b}' for b in BLOCKS) + ' |', '|---|' + '---|' * len(BLOCKS)]
    for title, names in [(n, [n]) for n in dibco_sets] + [(f'DIBCO 2009-2013, all {total}', dibco_sets),
                                                          ('synthetic colour pages', ['synthetic'])]:
        lines.append(f'| {title} | ' + ' | '.join(
            f'{mean(pooled(names, b, "plain-local")):.2f} / {mean(pooled(names, b, "flat-docbin")):.2f}'
            for b in BLOCKS) + ' |')
    lines.append('| blank aged pages: % marked ink, mean | ' + ' | '.join(
        f'{mean(ink_percent(b, "plain-local")):.2f} / {mean(ink_percent(b, "flat-docbin")):.2f}'
        for b in BLOCKS) + ' |')

    text = open(args.out).read() if os.path.exists(args.out) else '# Binarization quality\n'
    start = text.find(HEADING)
    if start >= 0:
        end = text.find('\n## ', start + len(HEADING))
        text = text[:start].rstrip('\n') + ('\n\n' + text[end + 1:] if end >= 0 else '')
    text = text.rstrip('\n') + '\n\n' + '\n'.join(lines) + '\n'
    with open(args.out, 'w') as f:
        f.write(text)
    print(f'wrote {args.out} and {args.log}', file=sys.stderr)


if __name__ == '__main__':
    main()
