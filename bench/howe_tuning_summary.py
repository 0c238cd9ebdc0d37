#!/usr/bin/env python3
"""Summarises docbin-bench CSVs of howe, howe-predict and howe-auto (bench/howe_tuning_device.sh).

usage: bench/howe_tuning_summary.py CSV [CSV ...]

Per page and map the median wall time of the timed runs (warm-up left out); then per
algorithm and map: pages, the median and the worst page, the pages at or under 250 ms,
and the sum over the pages; then howe-predict over howe on the all-GPU map, page by page
(median and worst ratio), and howe-auto's mixed maps against its all-GPU map.
"""
import csv
import statistics
import sys


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__.strip().split('\n')[2])
    runs = {}
    for path in sys.argv[1:]:
        with open(path, encoding='utf-8') as f:
            for row in csv.DictReader(f):
                if row['stage'] != 'total' or row['warmup'] == '1':
                    continue
                runs.setdefault((row['algo'], row['map']), {}).setdefault(row['image'], []).append(float(row['ms']))
    wall = {key: {page: statistics.median(v) for page, v in pages.items()} for key, pages in runs.items()}
    print('| algorithm | map | pages | median page, ms | worst page, ms | pages <= 250 ms | sum over pages, ms |')
    print('|---|---|---|---|---|---|---|')
    for (algo, m), w in sorted(wall.items(), key=lambda kv: (kv[0][0], statistics.median(kv[1].values()))):
        worst = max(w, key=w.get)
        print(f'| {algo} | {m} | {len(w)} | {statistics.median(w.values()):.1f} | {w[worst]:.1f} ({worst}) | '
              f'{sum(v <= 250 for v in w.values())} | {sum(w.values()):.0f} |')
    howe = wall.get(('howe', 'gpu,gpu,gpu'), {})
    pred = wall.get(('howe-predict', 'gpu,gpu,gpu,gpu,gpu,gpu'), {})
    both = sorted(set(howe) & set(pred))
    if both:
        r = [pred[p] / howe[p] for p in both]
        print(f'\nhowe-predict over howe (all-GPU) on {len(both)} pages: median {statistics.median(r):.2f}x, '
              f'worst {max(r):.2f}x, {sum(pred[p] for p in both) / sum(howe[p] for p in both):.2f}x over the set')
    auto = {m: w for (a, m), w in wall.items() if a == 'howe-auto'}
    gpu = auto.get('gpu,gpu,gpu,gpu,gpu,gpu', {})
    for m, w in sorted(auto.items()):
        common = sorted(set(w) & set(gpu))
        if m == 'gpu,gpu,gpu,gpu,gpu,gpu' or not common:
            continue
        r = [w[p] / gpu[p] for p in common]
        print(f'howe-auto {m} over the all-GPU map on {len(common)} pages: median {statistics.median(r):.2f}x, '
              f'best {min(r):.2f}x, {sum(w[p] for p in common) / sum(gpu[p] for p in common):.2f}x over the set')


if __name__ == '__main__':
    main()
