#!/usr/bin/env python3
"""Where a run's time went, from a `docbin-run --trace FILE.json` timeline.

usage: bench/trace_summary.py TRACE.json [--run N]

Per kernel (stage: kernel name): launches, device time summed, and the
median launch; per queue: the span from its first command's start to its last
command's end, the device time inside it and the idle rest (launch gaps and
host round trips). With --repeat, the trace holds every run: --run N (from 0) picks one,
default the last.
"""
import argparse
import json
import statistics
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('trace')
    ap.add_argument('--run', type=int, default=-1, help='which run to summarise (from 0; default the last)')
    args = ap.parse_args()
    try:
        with open(args.trace) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f'trace_summary: cannot read {args.trace}: {e}')
    names = {e['tid']: e['args']['name'] for e in doc['traceEvents'] if e.get('ph') == 'M'}
    events = sorted((e for e in doc['traceEvents'] if e.get('ph') == 'X'), key=lambda e: e['ts'])
    if events:
        runs = sorted({e['args'].get('run', 0) for e in events})
        pick = runs[args.run] if -len(runs) <= args.run < len(runs) else None
        if pick is None:
            sys.exit(f'trace_summary: {args.trace} holds runs 0..{len(runs) - 1}, not {args.run}')
        events = [e for e in events if e['args'].get('run', 0) == pick]
    if not events:
        sys.exit(f'trace_summary: {args.trace} holds no commands')
    kernels = {}
    for e in events:
        kernels.setdefault((e['tid'], e['name']), []).append(e['dur'])
    print(f'{"queue / command":58} {"count":>6} {"total ms":>9} {"median us":>10}')
    for (tid, name), durs in sorted(kernels.items(), key=lambda kv: -sum(kv[1])):
        print(f'{name[:58]:58} {len(durs):6d} {sum(durs) / 1e3:9.3f} {statistics.median(durs):10.1f}')
    t0 = min(e['ts'] for e in events)
    t1 = max(e['ts'] + e['dur'] for e in events)
    print(f'\nrun span {((t1 - t0) / 1e3):.3f} ms')
    for tid in sorted({e['tid'] for e in events}):
        q = [e for e in events if e['tid'] == tid]
        a = min(e['ts'] for e in q)
        b = max(e['ts'] + e['dur'] for e in q)
        busy = sum(e['dur'] for e in q)
        print(f'{names.get(tid, tid)[:58]:58} span {(b - a) / 1e3:9.3f} ms, busy {busy / 1e3:9.3f} ms, '
              f'idle {(b - a - busy) / 1e3:9.3f} ms, {len(q)} commands')


if __name__ == '__main__':
    main()
