#!/usr/bin/env python3
"""Markdown tables from a bench/device_bench.sh log: kernels beside their peers, start-up,
PNG codec steps, and batch throughput beside OpenCV's.

usage: bench/device_summary.py OUTDIR/bench.log
"""
import re
import statistics
import sys
from collections import defaultdict


def fields(line):
    return dict(kv.split('=', 1) for kv in line.split()[1:] if '=' in kv)


def main():
    kernels, peers, png, startup, batches, opencv = [], {}, {}, [], defaultdict(list), []
    for line in open(sys.argv[1]):
        line = line.strip()
        if line.startswith('bench kernel='):
            kernels.append(fields(line))
        elif line.startswith('peer ') and 'ms=' in line:
            f = fields(line)
            peers[line.split()[1]] = f
        elif line.startswith(('png ', 'g4 ', 'lzw ')):
            png[' '.join(line.split()[:2])] = fields(line)
        elif line.startswith('bench startup '):
            startup.append(fields(line))
        elif line.startswith('bench batch='):
            f = fields(line)
            batches[f['batch'] + (f" ({f['build']})" if 'build' in f else '')].append(f)
        elif line.startswith('bench opencv'):
            opencv.append(fields(line))
    print('## Kernels (median of warm runs; device time per stage, and submission to result)\n')
    print('| page | map | stage | ms (min - max) |\n|---|---|---|---|')
    for k in kernels:
        print(f"| {k['kernel']} | {k['map']} | {k['stage']} | {k['ms']} ({k['range'].replace('-', ' - ')}) |")
    howe = [float(k['ms']) for k in kernels if k['kernel'].startswith('howe-') and k['stage'] == 'total']
    if howe:
        print(f'\nHowe on {len(howe)} DIBCO pages, every stage on the GPU, submission to result: median '
              f'{statistics.median(howe):.2f} ms, worst {max(howe):.2f} ms.')
    print('\n## Peers on the same A4 page, same run\n')
    print('| peer | ms (min - max) |\n|---|---|')
    for name, f in peers.items():
        print(f"| {name} | {f['ms']} ({f['min']} - {f['max']}) |")
    sauvola = {(k['map'], k['stage']): float(k['ms']) for k in kernels if k['kernel'] == 'sauvola-a4'}
    doxa, cu = peers.get('doxa-sauvola-1thread'), peers.get('cucim-sauvola-host')
    if doxa and ('cpu', 'total') in sauvola:
        print(f"\nSauvola on the cpu role against one DoxaPy thread: {float(doxa['ms']) / sauvola[('cpu', 'total')]:.2f}x.")
    if cu and ('gpu', 'total') in sauvola:
        print(f"Sauvola on the gpu role, submission to result, against cuCIM host to host: "
              f"{float(cu['ms']) / sauvola[('gpu', 'total')]:.2f}x.")
    bits = [float(k['ms']) for k in kernels if k['kernel'] == 'sauvola-a4-1bit' and k['stage'] == 'total']
    if cu and bits:
        print(f"The same with the result packed 1 bit a pixel on the GPU: {float(cu['ms']) / bits[0]:.2f}x.")
    if png:
        print('\n## Codecs, one A4 page (Group 4: its Sauvola result)\n\n| step | ms (min - max) |\n|---|---|')
        for name, f in png.items():
            print(f"| {name} | {f['ms']} ({f['min']} - {f['max']}) |")
    if startup:
        one = statistics.median(float(s['one_page_ms']) for s in startup)
        cl = statistics.median(float(s['clinfo_ms']) for s in startup)
        ld = statistics.median(float(s['list_devices_ms']) for s in startup)
        cpu = [float(s['one_page_cpu_ms']) for s in startup if 'one_page_cpu_ms' in s]
        print(f'\n## Start-up (median of {len(startup)}, each min - max)\n\none Sauvola page, process start to file: '
              f'{one:.0f} ms ({min(float(s["one_page_ms"]) for s in startup):.0f} - '
              f'{max(float(s["one_page_ms"]) for s in startup):.0f}); clinfo -l: {cl:.0f} ms ({one / cl:.2f}x); '
              f'docbin-run --list-devices: {ld:.0f} ms' +
              (f'; the same page on PoCL alone (--map cpu): {statistics.median(cpu):.0f} ms.' if cpu else '.'))
    print('\n## Batches (pages/s, each round: process start to end; steady, after the 20th page; '
          'codec threads busy on average; share of the batch some device ran)\n\n'
          '| batch | pages/s | steady pages/s | codec busy | lane busy | pages written |\n|---|---|---|---|---|---|')
    for name, rows in batches.items():
        col = lambda k: ', '.join(r.get(k, '-') for r in rows)
        print(f"| {name} | {col('pages_per_s')} | {col('steady_pages_per_s')} | {col('codec_busy')} | "
              f"{col('lane_busy')} | {rows[0]['pages']} |")
    if opencv:
        print(f"| opencv, {opencv[0].get('pages')} pages | {', '.join(r.get('pages_per_s', '-') for r in opencv)} | "
              f"{', '.join(r.get('steady_pages_per_s', '-') for r in opencv)} | | | |")

if __name__ == '__main__':
    main()
