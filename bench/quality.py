#!/usr/bin/env python3
"""The quality table: every binarization algorithm over DIBCO 2009-2013 and a synthetic set.

Runs docbin-run (default parameters, one fixed map: every map gives the same image) on every
image, scores the results with docbin-eval against the ground truth, and writes a markdown table
of the mean F-measure, pseudo-F, PSNR and DRD per dataset and algorithm. Everything involved is
deterministic, so re-running the command reproduces the committed numbers.

usage: bench/quality.py [--build build] [--data ../shared/data] [--synthetic 10] [--jobs 2]
                        [--out bench/results/quality.md]
"""
import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile

YEARS = ['2009', '2010', '2011', '2012', '2013']


# Halftoning, not binarization: scored by bench/dbs_quality.py instead.
HALFTONES = ('dbs',)
# Howe's tuned methods have a section of their own (bench/howe_tuning_quality.py), which
# this script keeps, as it keeps every "## " section of the file it rewrites.
SEPARATE = ('howe-auto', 'howe-predict')


def algorithms(docbin_run):
    text = subprocess.run([docbin_run, '--list-algos'], capture_output=True, text=True, check=True).stdout
    return [a for a in re.findall(r'^(\w[\w-]*) \u2014 ', text, flags=re.M) if a not in HALFTONES + SEPARATE]


def binarize(docbin_run, algo, src, dst):
    p = subprocess.run([docbin_run, '--algo', algo, '--map', 'cpu', src, '-o', dst], capture_output=True,
                       text=True)
    if p.returncode != 0:
        raise RuntimeError(f'{algo} {src}: {p.stderr.strip()}')


def evaluate(docbin_eval, gt_dir, bin_dir):
    p = subprocess.run([docbin_eval, '--gt-dir', gt_dir, '--bin-dir', bin_dir, '--json'], capture_output=True,
                       text=True)
    lines = [json.loads(l) for l in p.stdout.splitlines() if l.strip()]
    if p.returncode != 0 or not lines or 'mean' not in lines[-1]:
        raise RuntimeError(f'docbin-eval {gt_dir} {bin_dir}: {p.stderr.strip()}')
    return lines[-1], lines[:-1]


KEYS = ('fmeasure', 'pseudo_fmeasure', 'psnr', 'drd')


def pooled_mean(rows):
    """Mean of each metric over images where it is defined (as docbin-eval's own means)."""
    out = {}
    for k in KEYS:
        vals = [r[k] for r in rows if r.get(k) is not None]
        out[k] = sum(vals) / len(vals) if vals else None
    return out


def fmt(v, digits=2):
    return 'n/a' if v is None else f'{v:.{digits}f}'


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--build', default='build')
    ap.add_argument('--data', default=os.path.join('..', 'shared', 'data'))
    ap.add_argument('--synthetic', type=int, default=10, help='synthetic pages (A4 at 150 dpi)')
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--jobs', type=int, default=os.cpu_count() or 1)
    ap.add_argument('--out', default=os.path.join('bench', 'results', 'quality.md'))
    args = ap.parse_args()
    run = os.path.join(args.build, 'docbin-run')
    ev = os.path.join(args.build, 'docbin-eval')
    synth = os.path.join(args.build, 'docbin-synth')
    algos = algorithms(run)

    with tempfile.TemporaryDirectory() as tmp:
        # datasets: name -> (list of (id, original), gt dir)
        datasets = []
        dibco = os.path.join(args.data, 'dibco')
        if os.path.isdir(dibco):
            for year in YEARS:
                orig = os.path.join(dibco, year, 'Originals')
                if os.path.isdir(orig):
                    files = sorted(f for f in os.listdir(orig) if f.endswith('.png'))
                    datasets.append((f'DIBCO {year}', [(f, os.path.join(orig, f)) for f in files],
                                     os.path.join(dibco, year, 'GT')))
        else:
            print(f'note: {dibco} not found; DIBCO rows are skipped', file=sys.stderr)
        if args.synthetic > 0:
            sdir = os.path.join(tmp, 'synthetic')
            os.makedirs(sdir)
            subprocess.run([synth, '--seed', str(args.seed), '--size', '1240x1754', '--count', str(args.synthetic),
                            '--out-dir', sdir], check=True, capture_output=True)
            gt_dir = os.path.join(tmp, 'synthetic-gt')
            os.makedirs(gt_dir)
            pages = []
            for f in sorted(os.listdir(sdir)):
                if f.endswith('_gt.png'):
                    os.rename(os.path.join(sdir, f), os.path.join(gt_dir, f))
                else:
                    pages.append((f, os.path.join(sdir, f)))
            datasets.append((f'synthetic ({args.synthetic} pages 1240x1754, seed {args.seed})', pages, gt_dir))

        results, per_image = {}, {}
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            for name, images, gt_dir in datasets:
                for algo in algos:
                    out = os.path.join(tmp, 'out', re.sub(r'\W+', '_', name), algo)
                    os.makedirs(out)
                    jobs = [pool.submit(binarize, run, algo, src, os.path.join(out, f)) for f, src in images]
                    for j in jobs:
                        j.result()
                    results[(name, algo)], per_image[(name, algo)] = evaluate(ev, gt_dir, out)
                    m = results[(name, algo)]['mean']
                    print(f'{name:40s} {algo:8s} F {fmt(m.get("fmeasure"))} DRD {fmt(m.get("drd"))}', file=sys.stderr)

    command = ' '.join(['bench/quality.py'] + sys.argv[1:])
    lines = ['# Binarization quality', '',
             'Mean over the images of each dataset, default parameters of every algorithm (`docbin-run '
             '--list-algos`), any map (all maps give the same image). F, pseudo-F and PSNR: higher is better; '
             'DRD: lower is better. Pseudo-F uses weights generated from the ground truth (DIBCO ships none '
             'with these sets). Metric definitions: `docbin-eval --help`. Niblack runs with its Doxa default '
             'k = +0.2, which suits light text on dark ground; dark text wants k < 0 (`--param k=-0.2`).', '',
             f'Made by `{command}` (DIBCO 2009-2013 from the reference data directory, 65 images).', '',
             '| dataset | algorithm | images | F | pseudo-F | PSNR | DRD |', '|---|---|---|---|---|---|---|']
    dibco_sets = [name for name, _, _ in datasets if name.startswith('DIBCO')]
    if len(dibco_sets) > 1:
        total = sum(len(images) for name, images, _ in datasets if name in dibco_sets)
        for algo in algos:
            rows = [r for name in dibco_sets for r in per_image[(name, algo)]]
            results[('all', algo)] = {'mean': pooled_mean(rows), 'images': len(rows)}
        datasets.append((f'DIBCO 2009-2013, all {total} images', [None] * total, None))
        results.update({(datasets[-1][0], a): results[('all', a)] for a in algos})
    for name, images, _ in datasets:
        for algo in algos:
            r = results[(name, algo)]
            m = r['mean']
            lines.append(f'| {name} | {algo} | {r.get("images", len(images))} | {fmt(m.get("fmeasure"))} | '
                         f'{fmt(m.get("pseudo_fmeasure"))} | {fmt(m.get("psnr"))} | {fmt(m.get("drd"), 3)} |')
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    # Sections that other scripts write (## headings, e.g. bench/hbk_rules.py's) stay as they are.
    kept = ''
    if os.path.exists(args.out):
        old = open(args.out, encoding='utf-8').read()
        at = old.find('\n## ')
        kept = '\n' + old[at + 1:] if at >= 0 else ''
    with open(args.out, 'w') as f:
        f.write('\n'.join(lines) + '\n' + kept)
    print(f'wrote {args.out}', file=sys.stderr)


if __name__ == '__main__':
    main()
