#!/usr/bin/env python3
"""Howe's parameter tuning in the quality table: howe against howe-auto and howe-predict.

Runs docbin-run (one fixed map: every map gives the same image) on every DIBCO 2009-2013
page and on the synthetic set, with plain howe (thi 0.4, c 160), howe-auto (Howe's Alg3,
99 cuts), Howe's Alg1 alone with its own defaults (howe-auto --param search=c, thi 0.3,
sigma 0.4), Alg2 (search=alg2, 363 cuts) and howe-predict, scores the images with
docbin-eval, and writes the section "Howe's parameter tuning" of the quality table (the
rest of the file is kept), and every page's F, thi and c to a CSV beside it.

howe-predict's built-in model is trained on DIBCO 2013 (bench/train_howe.sh), so it is
judged on 2009-2012 and the synthetic set only; its 2013 rows are marked as the training set.
Outputs are kept in --work, so an interrupted run picks up where it stopped.

usage: bench/howe_tuning_quality.py [--build build] [--data ../shared/data] [--synthetic 10]
                                    [--jobs 2] [--work DIR] [--skip-alg2]
                                    [--out bench/results/quality.md]
"""
import argparse
import concurrent.futures
import csv
import json
import os
import re
import statistics
import subprocess
import sys

YEARS = ['2009', '2010', '2011', '2012', '2013']
TRAINING = 'DIBCO 2013'
SECTION = "## Howe's parameter tuning"

# name, algorithm, parameters
METHODS = [
    ('howe', 'howe', []),
    ('howe-auto', 'howe-auto', []),
    ('howe-predict', 'howe-predict', []),
    ('Alg1 alone', 'howe-auto', ['search=c', 'thi=0.3', 'sigma=0.4']),
    ('Alg2', 'howe-auto', ['search=alg2']),
]


def binarize(run, algo, params, src, dst):
    """Runs one page unless its output exists; returns (thi, c) as the run reported them."""
    meta = dst + '.json'
    if os.path.exists(dst) and os.path.exists(meta):
        with open(meta) as f:
            return tuple(json.load(f))
    cmd = [run, '--algo', algo, '--map', 'cpu', '--profile', src, '-o', dst]
    for p in params:
        cmd += ['--param', p]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f'{algo} {src}: {p.stderr.strip()}')
    report = dict(re.findall(r'^(\w+): (-?\d+)$', p.stderr, flags=re.M))
    thi = int(report['thi_x1000']) / 1000 if 'thi_x1000' in report else 0.4
    c = int(report['c_x100']) / 100 if 'c_x100' in report else 160.0
    with open(meta, 'w') as f:
        json.dump([thi, c], f)
    return thi, c


def evaluate(docbin_eval, gt_dir, bin_dir):
    p = subprocess.run([docbin_eval, '--gt-dir', gt_dir, '--bin-dir', bin_dir, '--json'], capture_output=True,
                       text=True)
    lines = [json.loads(line) for line in p.stdout.splitlines() if line.strip()]
    if p.returncode != 0 or not lines or 'mean' not in lines[-1]:
        raise RuntimeError(f'docbin-eval {gt_dir} {bin_dir}: {p.stderr.strip()}')
    return lines[:-1]


def page_id(row):
    return os.path.splitext(os.path.basename(row['bin']))[0]


def mean(rows, key):
    vals = [r[key] for r in rows if r.get(key) is not None]
    return sum(vals) / len(vals) if vals else None


def fmt(v, digits=2):
    return 'n/a' if v is None else f'{v:.{digits}f}'


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--build', default='build')
    ap.add_argument('--data', default=os.path.join('..', 'shared', 'data'))
    ap.add_argument('--synthetic', type=int, default=10, help='synthetic pages (A4 at 150 dpi)')
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--jobs', type=int, default=os.cpu_count() or 1)
    ap.add_argument('--work', default=os.path.join('build', 'howe-tuning-quality'))
    ap.add_argument('--skip-alg2', action='store_true', help='leave out Alg2 (363 cuts a page)')
    ap.add_argument('--out', default=os.path.join('bench', 'results', 'quality.md'))
    args = ap.parse_args()
    run = os.path.join(args.build, 'docbin-run')
    ev = os.path.join(args.build, 'docbin-eval')
    synth = os.path.join(args.build, 'docbin-synth')
    methods = [m for m in METHODS if not (args.skip_alg2 and m[0] == 'Alg2')]

    datasets = []  # (name, [(file, path)], gt dir)
    dibco = os.path.join(args.data, 'dibco')
    for year in YEARS:
        orig = os.path.join(dibco, year, 'Originals')
        if os.path.isdir(orig):
            files = sorted(f for f in os.listdir(orig) if f.endswith('.png'))
            datasets.append((f'DIBCO {year}', [(f, os.path.join(orig, f)) for f in files],
                             os.path.join(dibco, year, 'GT')))
    if not datasets:
        print(f'note: {dibco} not found; DIBCO rows are skipped', file=sys.stderr)
    if args.synthetic > 0:
        sdir = os.path.join(args.work, f'synthetic-{args.seed}')
        gt_dir = sdir + '-gt'
        if not os.path.isdir(gt_dir):
            os.makedirs(sdir, exist_ok=True)
            subprocess.run([synth, '--seed', str(args.seed), '--size', '1240x1754', '--count', str(args.synthetic),
                            '--out-dir', sdir], check=True, capture_output=True)
            os.makedirs(gt_dir)
            for f in os.listdir(sdir):
                if f.endswith('_gt.png'):
                    os.rename(os.path.join(sdir, f), os.path.join(gt_dir, f))
        pages = sorted((f, os.path.join(sdir, f)) for f in os.listdir(sdir) if f.endswith('.png'))
        datasets.append((f'synthetic ({args.synthetic} pages 1240x1754, seed {args.seed})', pages, gt_dir))

    rows = {}  # (dataset, method) -> list of per-page dicts
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for label, algo, params in methods:
            for name, images, gt_dir in datasets:
                out = os.path.join(args.work, re.sub(r'\W+', '_', name), re.sub(r'\W+', '_', label))
                os.makedirs(out, exist_ok=True)
                jobs = {f: pool.submit(binarize, run, algo, params, src, os.path.join(out, f)) for f, src in images}
                chosen = {os.path.splitext(f)[0]: j.result() for f, j in jobs.items()}
                per_page = evaluate(ev, gt_dir, out)
                for r in per_page:
                    r['thi'], r['c'] = chosen[page_id(r)]
                rows[(name, label)] = per_page
                print(f'{name:40s} {label:14s} F {fmt(mean(per_page, "fmeasure"))}', file=sys.stderr)

    def pool_rows(label, names):
        return [r for n in names for r in rows.get((n, label), [])]

    dibco_sets = [n for n, _, _ in datasets if n.startswith('DIBCO')]
    synth_sets = [n for n, _, _ in datasets if not n.startswith('DIBCO')]
    held_out = [n for n in dibco_sets if n != TRAINING]
    groups = [(n, [n]) for n, _, _ in datasets]
    if len(dibco_sets) > 1:
        groups.append((f'DIBCO 2009-2013, all {len(pool_rows("howe", dibco_sets))} images', dibco_sets))
        groups.append((f'DIBCO 2009-2012 ({len(pool_rows("howe", held_out))} images, not trained on)', held_out))
    if dibco_sets and synth_sets:
        groups.append(('DIBCO 2009-2013 and synthetic', dibco_sets + synth_sets))

    command = ' '.join(['bench/howe_tuning_quality.py'] + sys.argv[1:])
    lines = [SECTION, '',
             'Plain `howe` (thi 0.4, c 160) against the tuned methods on the same pages: `howe-auto` (Howe\'s '
             'Alg3, 99 warm cuts), Alg1 alone (`howe-auto --param search=c`, Howe\'s defaults for it: thi 0.3, '
             'sigma 0.4), Alg2 (`--param search=alg2`, 363 cuts) and `howe-predict` (features to thi and c, one cut). '
             'Error is 100 - F; "error cut" is the drop of the mean error against plain howe on the same pages. '
             'howe-predict\'s model was trained on DIBCO 2013 (`bench/train_howe.sh`), so its 2013 rows are the '
             'training set (marked) and it is judged on 2009-2012 and the synthetic set. thi and c: medians of '
             'what each page ran with.', '',
             f'Made by `{command}`; per page: `bench/results/howe-tuning-pages.csv`.', '',
             '| dataset | method | images | F | error | error cut | pseudo-F | PSNR | DRD | thi | c |',
             '|---|---|---|---|---|---|---|---|---|---|---|']
    summary = {}
    for gname, names in groups:
        base = pool_rows('howe', names)
        base_err = 100 - mean(base, 'fmeasure') if base else None
        for label, _, _ in methods:
            rs = pool_rows(label, names)
            if not rs:
                continue
            f = mean(rs, 'fmeasure')
            err = 100 - f
            cut = (base_err - err) / base_err if base_err else None
            summary[(gname, label)] = (f, err, cut)
            mark = ' (training set)' if label == 'howe-predict' and TRAINING in names else ''
            lines.append(f'| {gname} | {label}{mark} | {len(rs)} | {fmt(f)} | {fmt(err)} | '
                         f'{"-" if label == "howe" else fmt(100 * cut, 1) + " %"} | {fmt(mean(rs, "pseudo_fmeasure"))} | '
                         f'{fmt(mean(rs, "psnr"))} | {fmt(mean(rs, "drd"), 3)} | '
                         f'{statistics.median(r["thi"] for r in rs):.3g} | {statistics.median(r["c"] for r in rs):.4g} |')
    lines.append('')
    for gname, _ in groups:
        if (gname, 'howe-auto') in summary:
            lines.append(f'- {gname}: howe-auto cuts the error by {100 * summary[(gname, "howe-auto")][2]:.1f} %.')
    for gname, names in groups:
        if TRAINING in names or (gname, 'howe-predict') not in summary:
            continue
        f0, fa, fp = (summary[(gname, m)][0] for m in ('howe', 'howe-auto', 'howe-predict'))
        if fa > f0:
            lines.append(f'- {gname}: howe-predict keeps {100 * (fp - f0) / (fa - f0):.0f} % of howe-auto\'s gain in F '
                         f'({fp - f0:+.2f} against {fa - f0:+.2f}).')
    lines.append('')

    old = open(args.out, encoding='utf-8').read() if os.path.exists(args.out) else '# Binarization quality\n'
    start = old.find(SECTION)
    if start >= 0:
        nxt = old.find('\n## ', start + len(SECTION))
        old = old[:start] + (old[nxt + 1:] if nxt >= 0 else '')
    text = old.rstrip('\n') + '\n\n' + '\n'.join(lines)
    with open(args.out, 'w', encoding='utf-8') as f:
        f.write(text)
    with open(os.path.join(os.path.dirname(args.out), 'howe-tuning-pages.csv'), 'w', newline='') as f:
        w = csv.writer(f)
        w.writerow(['dataset', 'page', 'method', 'fmeasure', 'pseudo_fmeasure', 'psnr', 'drd', 'thi', 'c'])
        for (name, label), rs in rows.items():
            for r in rs:
                w.writerow([name, page_id(r), label] + [r.get(k) for k in ('fmeasure', 'pseudo_fmeasure', 'psnr', 'drd')]
                           + [r['thi'], r['c']])
    print(f'wrote {args.out}', file=sys.stderr)


if __name__ == '__main__':
    main()
