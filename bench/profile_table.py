#!/usr/bin/env python3
"""Turns the --profile tables in a bench/device_check.sh log into one markdown table.

usage: profile_table.py LOG > TABLE.md
Rows: image, algorithm, map (and stats variant), per-stage median device time with
the role that ran it, the summed transfer time, and the median wall time.
"""
import re
import sys


def main():
    text = open(sys.argv[1], encoding='utf-8').read()
    lines = text[text.index('== profile'):].splitlines()
    print('| image | algorithm | map | stats variant | stage times, ms (role) | transfers, ms | wall, ms (min - max) |')
    print('|---|---|---|---|---|---|---|')
    variant, row, image = None, None, None
    for line in lines:
        m = re.match(r'stats variant: (\S+)', line)
        if m:
            variant = m.group(1)
            continue
        m = re.match(r'image (\S+)', line)
        if m:
            image = m.group(1)
            continue
        head = re.match(r'(\w+) (\d+)x(\d+), map ([^,\s]+(?:,[^,\s]+)*)', line)
        if head:
            has_stats = head.group(1) in ('niblack', 'sauvola', 'nick', 'wolf')
            row = {'algo': head.group(1), 'map': head.group(4), 'stages': [], 'transfers': 0.0,
                   'variant': (variant or 'sliding') if has_stats else '-',
                   'image': image or f'{head.group(2)}x{head.group(3)} page'}
            continue
        if row is None:
            continue
        m = re.match(r'(->|<-) (\S+)\s+(cpu|gpu)\s+.*?\s+\d+\s+([\d.]+)', line)
        if m:
            row['transfers'] += float(m.group(4))
            continue
        m = re.match(r'wall\s+\(submission to result\)\s+([\d.]+)\s+\(([\d.]+) - ([\d.]+)\)', line)
        if m:
            print(f"| {row['image']} | {row['algo']} | {row['map']} | {row['variant']} | {', '.join(row['stages'])} | "
                  f"{row['transfers']:.3f} | {m.group(1)} ({m.group(2)} - {m.group(3)}) |")
            row, variant, image = None, None, None
            continue
        m = re.match(r'(\w+)\s+(cpu|gpu)\s+.*?\s+\d+\s+([\d.]+)', line)
        if m and m.group(1) not in ('stage', 'median'):
            row['stages'].append(f'{m.group(1)} {m.group(3)} ({m.group(2)})')


if __name__ == '__main__':
    main()
