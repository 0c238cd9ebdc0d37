#!/usr/bin/env python3
"""Where a batch's wall time goes, from its --log-json (docbin-run --out-dir ... --log-json LOG).

usage: bench/batch_timeline.py [--brief] LOG.jsonl [LOG.jsonl ...]

Per log: when the first decode ended, when each lane (device) began its first run, how long its first
run took against its median later run, how busy each lane was from its first run to its last (runs of
the images sharing it merged), the gaps where it had nothing to run, and the tail after the last run
(encoding the last images). A profile of the codec threads: how many decodes and encodes were under way,
on average, in each twentieth of the batch (a dip where the lanes have work shows codec threads waiting
for room). Times are ms from the batch's start (start_ms, run_start_ms)."""
import json
import statistics
import sys


def union_ms(intervals):
    """Total length of the union of (start, end) intervals."""
    total, end = 0.0, None
    for s, e in sorted(intervals):
        if end is None or s > end:
            total += e - s
            end = e
        elif e > end:
            total += e - end
            end = e
    return total


def gaps(intervals, lo, hi):
    """(start, length) of the stretches of [lo, hi] that no interval covers."""
    out, at = [], lo
    for s, e in sorted(intervals):
        if s > at:
            out.append((at, s - at))
        at = max(at, e)
    if hi > at:
        out.append((at, hi - at))
    return out


def profile(intervals, end, bins=20):
    """Mean number of intervals under way in each of `bins` equal stretches of [0, end]."""
    width = end / bins
    load = [0.0] * bins
    for s, e in intervals:
        for i in range(max(0, int(s // width)), min(bins, int(e // width) + 1)):
            lo, hi = max(s, i * width), min(e, (i + 1) * width)
            if hi > lo:
                load[i] += (hi - lo) / width
    return load


def steady(ok, skip=20):
    """Pages/s written after the first `skip` outputs, or None for a batch too short."""
    ends = sorted(r['start_ms'] + r['wall_ms'] for r in ok)
    if len(ends) <= skip + 1 or ends[-1] <= ends[skip - 1]:
        return None
    return 1000 * (len(ends) - skip) / (ends[-1] - ends[skip - 1])


def brief(path):
    rows = [json.loads(line) for line in open(path) if line.strip()]
    ok = [r for r in rows if r.get('status') == 'ok']
    if not ok:
        print('steady_pages_per_s=none')
        return
    end = max(r['start_ms'] + r['wall_ms'] for r in rows)
    rate = steady(ok)
    codec = sum(r['decode_ms'] + r['encode_ms'] for r in ok) / end
    runs = [(r['run_start_ms'], r['run_start_ms'] + r['run_ms']) for r in ok if 'run_start_ms' in r]
    print(f"steady_pages_per_s={f'{rate:.2f}' if rate else 'none'} codec_busy={codec:.2f} "
          f"lane_busy={union_ms(runs) / end if runs else 0:.2f} batch_s={end / 1000:.3f}")


def summarize(path):
    rows = [json.loads(line) for line in open(path) if line.strip()]
    ok = [r for r in rows if r.get('status') == 'ok']
    if not ok:
        print(f'{path}: no image ok')
        return
    end = max(r['start_ms'] + r['wall_ms'] for r in rows)
    rate = steady(ok)
    decoded = [r['start_ms'] + r['decode_ms'] for r in ok]
    print(f'{path}: {len(rows)} images, {len(ok)} ok, last output at {end:.0f} ms '
          f'({1000 * len(ok) / end:.2f} pages/s; after the 20th, {f"{rate:.2f}" if rate else "-"} pages/s)')
    decode = statistics.median(r['decode_ms'] for r in ok)
    encode = statistics.median(r['encode_ms'] for r in ok)
    print(f'  decode: first done at {min(decoded):.0f} ms; median decode {decode:.0f} ms, encode {encode:.0f} ms')
    codec = [(r['start_ms'], r['start_ms'] + r['decode_ms']) for r in ok]
    codec += [(r['start_ms'] + r['wall_ms'] - r['encode_ms'], r['start_ms'] + r['wall_ms']) for r in ok]
    print(f'  decodes and encodes at once, per {end / 20:.0f} ms: '
          f'{" ".join(f"{x:.0f}" for x in profile(codec, end))}')
    ran = [r for r in ok if 'run_start_ms' in r]
    if not ran:
        return
    waits = [r['run_start_ms'] - r['start_ms'] - r['decode_ms'] for r in ran]
    print(f'  decoded, waiting for a lane: median {statistics.median(waits):.0f} ms, max {max(waits):.0f} ms')
    last_run = max(r['run_start_ms'] + r['run_ms'] for r in ran)
    for lane in sorted({r['lane'] for r in ran}):
        mine = sorted((r for r in ran if r['lane'] == lane), key=lambda r: r['run_start_ms'])
        iv = [(r['run_start_ms'], r['run_start_ms'] + r['run_ms']) for r in mine]
        first, last = iv[0][0], max(e for _, e in iv)
        busy = union_ms(iv)
        cold = [r['run_ms'] for r in mine if not r.get('warm', True)] or [mine[0]['run_ms']]
        warm = [r['run_ms'] for r in mine if r.get('warm', True)] or [0.0]
        idle = gaps(iv, first, last)
        big = sorted(idle, key=lambda g: -g[1])[:3]
        print(f'  lane {lane}: {len(mine)} images, first run at {first:.0f} ms, last ends {last:.0f} ms; '
              f'first runs {", ".join(f"{c:.0f}" for c in cold)} ms, warm median {statistics.median(warm):.1f} ms; '
              f'busy {100 * busy / (last - first):.0f}% of its span, idle {sum(g for _, g in idle):.0f} ms '
              f'(longest at {", ".join(f"{s:.0f}+{g:.0f}" for s, g in big)})')
    print(f'  after the last run: {end - last_run:.0f} ms')


args = sys.argv[1:]
short = args[:1] == ['--brief']
for p in args[short:]:
    (brief if short else summarize)(p)
