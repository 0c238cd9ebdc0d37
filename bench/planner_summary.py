#!/usr/bin/env python3
"""The planner's table from a bench/planner_device.sh log.

usage: bench/planner_summary.py OUTDIR/planner.log [OUTDIR/batch.log]

For each algorithm and page: the map --map measure picked, the fastest map of the separate
docbin-bench timing (medians of its timed runs), the pick's median there over the fastest
median (the pick is good within 5%), and whether --map auto with the wisdom file ran the same
map. Then, from batch.log, pages/s of each batch configuration, per round.
"""
import re
import sys


def blocks(text):
    out, cur = [], None
    for line in text.splitlines():
        m = re.match(r'^== (\S+) (\S+)$', line)
        if m:
            cur = {'algo': m.group(1), 'page': m.group(2).rsplit('/', 1)[-1], 'part': 'measure', 'bench': {}}
            out.append(cur)
            continue
        if cur is None:
            continue
        if line == '-- bench':
            cur['part'] = 'bench'
        elif line == '-- auto':
            cur['part'] = 'auto'
        m = re.match(r'^plan for \S+: (\S+) \((\w+)\)$', line)
        if m and cur['part'] == 'measure':
            cur['picked'] = m.group(1)
        elif m and cur['part'] == 'auto':
            cur['auto'], cur['auto_source'] = m.group(1), m.group(2)
        m = re.match(r'^\S+ \S+ \(\d+x\d+\) map (\S+): median', line)
        if m and cur['part'] == 'bench':
            cur['map'] = m.group(1)
        m = re.match(r'^\s+total\s+-\s+([\d.]+) ms', line)
        if m and cur['part'] == 'bench':
            cur['bench'][cur['map']] = float(m.group(1))
    return out


def main():
    rows, good, same = [], 0, 0
    for b in blocks(open(sys.argv[1]).read()):
        if not b['bench'] or 'picked' not in b:
            rows.append(f"| {b['algo']} | {b['page']} | incomplete | | | | |")
            continue
        fastest = min(b['bench'], key=b['bench'].get)
        ratio = b['bench'].get(b['picked'], float('nan')) / b['bench'][fastest]
        good += ratio <= 1.05
        agree = b.get('auto') == b['picked'] and b.get('auto_source') == 'wisdom'
        same += agree
        rows.append(f"| {b['algo']} | {b['page']} | {b['picked']} | {fastest} ({b['bench'][fastest]:.3f} ms) | "
                    f"{ratio:.3f} | {'yes' if ratio <= 1.05 else 'NO'} | {'yes' if agree else 'NO'} |")
    print('| algorithm | page | measure picked | fastest in the separate timing | picked / fastest | within 5% '
          '| auto ran it from wisdom |')
    print('|---|---|---|---|---|---|---|')
    print('\n'.join(rows))
    print(f'\nwithin 5%: {good} of {len(rows)}; auto took the measured map from wisdom: {same} of {len(rows)}')
    if len(sys.argv) > 2:
        print('\n| round | algorithm | CPU lane | pages/s | pages on the CPU lane |\n|---|---|---|---|---|')
        for line in open(sys.argv[2]):
            f = dict(kv.split('=', 1) for kv in line.split()[1:])
            print(f"| {f['round']} | {f['algo']} | {f['cpu_lane']} | {f['pages_per_s']} | {f['cpu_pages']} |")


if __name__ == '__main__':
    main()
