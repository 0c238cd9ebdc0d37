#!/usr/bin/env python3
"""A warm chain of 33 cuts against 33 cold cuts, per role (howe-auto's chains, docs/howe.md).

For every page: `howe-auto --param search=c --param thi=THI --map M --profile` (one chain
of 33 warm cuts on chain-a's role, with its counting and drawing passes: the `chain-a` row,
or on the all-gpu map the `chains` row, the stacked stage with its one chain) against the sum
over the 33 values of c of howe's graphcut stage at that thi (a cold cut each, graph
building included), both as the median of --repeat runs 2..N. M is all-cpu
(Boykov-Kolmogorov) or all-gpu (push-relabel on the gpu role's device). Prints a markdown
table of the stage times and their ratio.

usage: bench/howe_warm_cold.py [--build build] [--thi 0.375] [--repeat 3] ROLE:PAGE [ROLE:PAGE ...]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile


def stage_ms(out, stage):
    m = re.search(rf'^{stage}\s+\S+\s+.*?\s+\d+\s+([\d.]+)', out, flags=re.M)
    if not m:
        raise RuntimeError(f'no {stage} line in:\n{out}')
    return float(m.group(1))


def profile(run, args):
    with tempfile.TemporaryDirectory() as tmp:
        p = subprocess.run([run, '--profile', '-o', os.path.join(tmp, 'out.pgm')] + args, capture_output=True,
                           text=True)
    if p.returncode != 0:
        raise RuntimeError(f'{" ".join(args)}: {p.stderr.strip()}')
    return p.stderr


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--build', default='build')
    ap.add_argument('--thi', type=float, default=0.375)
    ap.add_argument('--repeat', type=int, default=3)
    ap.add_argument('pages', nargs='+', help='ROLE:PAGE, ROLE cpu or gpu')
    args = ap.parse_args()
    run = f'{args.build}/docbin-run'
    print('| page | role | warm chain, ms | 33 cold cuts, ms | cold / warm |')
    print('|---|---|---|---|---|')
    for item in args.pages:
        role, page = item.split(':', 1)
        rep = ['--repeat', str(args.repeat)]
        warm = stage_ms(profile(run, ['--algo', 'howe-auto', '--map', role, '--param', 'search=c', '--param',
                                      f'thi={args.thi}', page] + rep), 'chains' if role == 'gpu' else 'chain-a')
        cold = 0.0
        for i in range(33):
            c = 20 * 2 ** (i / 4)
            cold += stage_ms(profile(run, ['--algo', 'howe', '--map', role, '--param', f'thi={args.thi}', '--param',
                                           f'c={c!r}', page] + rep), 'graphcut')
        print(f'| {page.split("/")[-1]} | {role} | {warm:.1f} | {cold:.1f} | {cold / warm:.2f} |', flush=True)


if __name__ == '__main__':
    sys.exit(main())
