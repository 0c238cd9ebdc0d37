#!/usr/bin/env python3
"""Summarises Howe's per-page table (bench/profile_table.py output) per map.

usage: bench/howe_summary.py TABLE.md [TABLE.md ...]

For every map: pages, median wall per page, wall summed over the pages, pages at
or under 50 ms, and the slowest page; then the all-GPU map against the all-CPU
map, page by page (median and minimum ratio) and over the whole set. A page
measured twice for one map keeps its last row.
"""
import statistics
import sys


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__.strip().split('\n')[2])
    wall = {}
    for path in sys.argv[1:]:
        for line in open(path, encoding='utf-8'):
            cells = [c.strip() for c in line.strip().strip('|').split('|')]
            if len(cells) != 7 or cells[1] != 'howe':
                continue
            wall.setdefault(cells[2], {})[cells[0]] = float(cells[6].split()[0])
    order = sorted(wall, key=lambda m: statistics.median(wall[m].values()))
    print('| map | pages | median wall, ms | sum over pages, ms | pages <= 50 ms | slowest page, ms |')
    print('|---|---|---|---|---|---|')
    for m in order:
        w = wall[m]
        slow = max(w, key=w.get)
        print(f'| {m} | {len(w)} | {statistics.median(w.values()):.1f} | {sum(w.values()):.0f} | '
              f'{sum(v <= 50 for v in w.values())} | {slow} {w[slow]:.1f} |')
    gpu, cpu = wall.get('gpu,gpu,gpu', {}), wall.get('cpu,cpu,cpu', {})
    both = sorted(set(gpu) & set(cpu))
    if both:
        ratios = [cpu[p] / gpu[p] for p in both]
        print(f'\nall-GPU over all-CPU on {len(both)} pages: median {statistics.median(ratios):.1f}x per page '
              f'(min {min(ratios):.1f}x), {sum(cpu[p] for p in both) / sum(gpu[p] for p in both):.1f}x over the set')


if __name__ == '__main__':
    main()
