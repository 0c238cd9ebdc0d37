#!/usr/bin/env python3
"""How well each role's work count tells the time of Howe's graph cut, page by page.

Reads a `bench/howe_device.sh OUT dibco DIR` log run with maps whose cut is on the
CPU and on the GPU (MAPS="gpu,gpu,cpu gpu,gpu,gpu"): per page and map the
graphcut's median time, the page's pixels P and the report's cut_steps S (CPU)
or cut_commands C (GPU). Fits each model to the pages by least squares on the
relative residuals and prints how many pages it predicts within 20% and 10%:

  CPU: a + b P (the pixels alone), a + b S (the planner's: steps per pixel times P)
  GPU: a + b P, a + b P C (the planner's: commands times a pass over the page),
       C (c + d P) (a fixed cost per command besides its pass)

usage: cut_work.py LOG
"""
import re
import sys


def solve(rows, t):
    """Least squares of t ~ rows . x weighting each page by 1 / t (relative residuals)."""
    n = len(rows[0])
    a = [[0.0] * n for _ in range(n)]
    v = [0.0] * n
    for r, y in zip(rows, t):
        w = 1.0 / (y * y)
        for i in range(n):
            v[i] += w * r[i] * y
            for j in range(n):
                a[i][j] += w * r[i] * r[j]
    for i in range(n):  # Gauss-Jordan with partial pivoting
        p = max(range(i, n), key=lambda k: abs(a[k][i]))
        a[i], a[p], v[i], v[p] = a[p], a[i], v[p], v[i]
        for k in range(n):
            if k != i:
                f = a[k][i] / a[i][i]
                a[k] = [x - f * y for x, y in zip(a[k], a[i])]
                v[k] -= f * v[i]
    return [v[i] / a[i][i] for i in range(n)]


def report(name, rows, t):
    x = solve(rows, t)
    err = [sum(c * r for c, r in zip(x, row)) / y - 1 for row, y in zip(rows, t)]
    within = lambda lim: sum(abs(e) <= lim for e in err)
    print(f'| {name} | {", ".join(f"{c:.4g}" for c in x)} | {within(0.2)} of {len(t)} | {within(0.1)} of {len(t)} '
          f'| {100 * max(abs(e) for e in err):.1f}% |')


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip().split('\n')[-1])
    pages = {'cpu': [], 'gpu': []}
    head = re.compile(r'^howe (\d+)x(\d+), map \S+,(cpu|gpu)$')
    block = None
    for line in open(sys.argv[1]):
        line = line.rstrip('\n')
        m = head.match(line)
        if m:
            block = {'role': m.group(3), 'px': int(m.group(1)) * int(m.group(2)) / 1e6}
            continue
        if block is None:
            continue
        m = re.match(r'^graphcut\s+(cpu|gpu)\s+.*?\s+\d+\s+([0-9.]+)\s', line)
        if m and m.group(1) == block['role']:
            block['ms'] = float(m.group(2))
        for key in ('cut_steps', 'cut_commands'):
            if line.startswith(key + ': '):
                block[key] = int(line.split(': ')[1])
        if 'ms' in block and 'cut_steps' in block and 'cut_commands' in block:
            pages[block['role']].append(block)
            block = None
    print('| role, model | coefficients (ms, Mpx) | within 20% | within 10% | largest error |')
    print('|---|---|---|---|---|')
    cpu, gpu = pages['cpu'], pages['gpu']
    if cpu:
        t = [p['ms'] for p in cpu]
        report('cpu, a + b P', [(1, p['px']) for p in cpu], t)
        report('cpu, a + b S', [(1, p['cut_steps'] / 1e6) for p in cpu], t)
    if gpu:
        t = [p['ms'] for p in gpu]
        report('gpu, a + b P', [(1, p['px']) for p in gpu], t)
        report('gpu, a + b P C', [(1, p['px'] * p['cut_commands']) for p in gpu], t)
        report('gpu, C (c + d P)', [(p['cut_commands'], p['px'] * p['cut_commands']) for p in gpu], t)


if __name__ == '__main__':
    main()
