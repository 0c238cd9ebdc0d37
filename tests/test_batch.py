#!/usr/bin/env python3
"""docbin-run's batch form: many inputs, output names, failures, reruns, shards, logs.

Each batch output is compared with the single-image form's output for the same
input (the single-image form is what the other tests check against plain-C
references), and --codec-only's outputs with a threshold computed here.
usage: test_batch.py PATH/TO/docbin-run
"""
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading

import clitest
from clitest import check, failures, png_bytes, png_decode

DOCBIN = os.path.abspath(sys.argv[1])


def run(args, cwd=None, env_drop=(), timeout=300):
    env = {k: v for k, v in os.environ.items() if k not in env_drop}
    p = subprocess.run([DOCBIN] + args, capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def page(w, h, seed, rgb=False):
    """A small page: light uneven paper, dark strokes; different for every seed."""
    rnd = random.Random(seed)
    strokes = [(rnd.randrange(h), rnd.randrange(w), rnd.randrange(8, 40)) for _ in range(12)]
    rows = []
    for y in range(h):
        row = [min(255, 170 + (x * 3 + y * 2 + seed * 7) % 60 + rnd.randrange(20)) for x in range(w)]
        for sy, sx, length in strokes:
            if sy <= y < sy + 3:
                for x in range(sx, min(w, sx + length)):
                    row[x] = 30 + rnd.randrange(40)
        rows.append(row)
    if rgb:
        return png_bytes(w, h, [bytes(c for v in r for c in (v, max(0, v - 20), min(255, v + 10))) for r in rows],
                         color_type=2), rows
    return png_bytes(w, h, [bytes(r) for r in rows]), rows


def make_inputs(d, names, seed0=0):
    """Writes one distinct page per name (sizes differ too, so a mix-up shows) and returns the paths."""
    os.makedirs(d, exist_ok=True)
    paths = []
    for i, name in enumerate(names):
        w, h = 60 + 7 * ((i + seed0) % 5), 40 + 5 * ((i + seed0) % 3)
        data, _ = page(w, h, seed0 + i, rgb=(i % 3 == 2))
        paths.append(clitest.write(os.path.join(d, name), data))
    return paths


def read(path):
    with open(path, 'rb') as f:
        return f.read()


def log_lines(text, what):
    out = []
    for line in text.splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            check(False, f'{what}: log line is not JSON: {line!r}')
    return out


def temp_files(d):
    return [f for f in os.listdir(d) if f.startswith('.')]


def test_same_as_single(tmp):
    """One output per input, each equal to the single-image form's output."""
    inputs = make_inputs(os.path.join(tmp, 'in'), [f'p{i}.png' for i in range(5)])
    for algo, map_, extra in (('sauvola', 'gpu,cpu,gpu', ['--in-flight', '3', '--threads', '2']),
                              ('howe', 'gpu,gpu,cpu', []),
                              ('nick', 'cpu,gpu,cpu', ['--serial']),
                              ('otsu', 'cpu', ['--format', 'pgm'])):
        out = os.path.join(tmp, 'out-' + algo)
        ext = 'pgm' if '--format' in extra else 'png'
        rc, so, err = run(['--algo', algo, '--map', map_, '--out-dir', out] + extra + inputs)
        check(rc == 0, f'{algo} batch: exit {rc}: {err}')
        check(err == '', f'{algo} batch: stderr is not a terminal, yet it got output: {err!r}')
        want = sorted(f'p{i}.{ext}' for i in range(5))
        check(sorted(os.listdir(out)) == want, f'{algo} batch: outputs {sorted(os.listdir(out))}, want {want}')
        for i, path in enumerate(inputs):
            single = os.path.join(tmp, f'single.{ext}')
            rc, _, err = run(['--algo', algo, '--map', map_, path, '-o', single])
            check(rc == 0, f'{algo} single {path}: {err}')
            got = os.path.join(out, f'p{i}.{ext}')
            check(os.path.exists(got) and read(got) == read(single),
                  f'{algo}: batch output {got} differs from the single-image output')
        print(f'ok   {algo} batch ({map_}) equals the single-image form for {len(inputs)} inputs')


def test_cpu_lane(tmp):
    """--cpu-lane on: a lane running every stage on cpu beside the gpu role's lanes; every page as the
    single-image form gives it, every log line naming the map its page ran under."""
    inputs = make_inputs(os.path.join(tmp, 'in-lane'), [f'q{i}.png' for i in range(8)])
    out, log = os.path.join(tmp, 'out-lane'), os.path.join(tmp, 'lane.jsonl')
    rc, _, err = run(['--algo', 'howe', '--map', 'gpu', '--cpu-lane', 'on', '--out-dir', out, '--log-json', log]
                     + inputs)
    maps = [json.loads(l)['map'] for l in open(log)] if os.path.exists(log) else []
    check(rc == 0 and len(maps) == 8 and set(maps) <= {'gpu,gpu,gpu', 'cpu,cpu,cpu'}, f'--cpu-lane on: {rc} {maps} {err}')
    for i, path in enumerate(inputs):
        single = os.path.join(tmp, 'lane-single.png')
        run(['--algo', 'howe', '--map', 'cpu', path, '-o', single])
        check(read(os.path.join(out, f'q{i}.png')) == read(single), f'--cpu-lane on: page {i} differs')
    rc, _, err = run(['--algo', 'howe', '--cpu-lane', 'sometimes', '--out-dir', out] + inputs)
    check(rc == 2 and '--cpu-lane' in err, f'--cpu-lane sometimes: exit {rc}: {err}')
    print(f'ok   --cpu-lane on: pages by map {sorted(maps.count(m) for m in set(maps))}, outputs as single runs')


def test_codec_only(tmp):
    """--codec-only writes gray >= 128 as white, computed here from the pixels written here."""
    d = os.path.join(tmp, 'codec')
    os.makedirs(d)
    want = {}
    for i in range(3):
        data, rows = page(50 + i, 30 + i, 100 + i, rgb=(i == 1))
        clitest.write(os.path.join(d, f'c{i}.png'), data)
        if i == 1:  # the RGB page: BT.601 gray of (v, v-20, v+10)
            rows = [[(299 * v + 587 * max(0, v - 20) + 114 * min(255, v + 10) + 500) // 1000 for v in r] for r in rows]
        want[f'c{i}.png'] = [[255 if v >= 128 else 0 for v in r] for r in rows]
    out = os.path.join(tmp, 'codec-out')
    rc, _, err = run(['--codec-only', '--out-dir', out, d])
    check(rc == 0, f'--codec-only: exit {rc}: {err}')
    for name, rows in want.items():
        w, h, ch, got = png_decode(read(os.path.join(out, name)))
        check(ch == 1 and (w, h) == (len(rows[0]), len(rows)) and got == rows, f'--codec-only {name}: wrong pixels')
    print('ok   --codec-only thresholds at 128 on the host')
    # 8-bit outputs are thresholded too: only 0 and 255, the same pixels.
    out8 = os.path.join(tmp, 'codec-out8')
    rc, _, err = run(['--codec-only', '--depth', '8', '--out-dir', out8, d])
    check(rc == 0, f'--codec-only --depth 8: exit {rc}: {err}')
    for name, rows in want.items():
        w, h, ch, got = png_decode(read(os.path.join(out8, name)))
        check(ch == 1 and got == rows, f'--codec-only --depth 8 {name}: not the thresholded pixels')
    print('ok   --codec-only --depth 8 writes the same binary pixels')


def test_pipe_input(tmp):
    """A FIFO among the inputs is refused at once with a line naming it, whether or not anything
    writes to it (a FIFO nobody writes to would otherwise hold the batch forever); the other pages
    are done."""
    src = make_inputs(os.path.join(tmp, 'in'), ['a.png', 'b.png'])
    fifo = os.path.join(tmp, 'in', 'piped.png')
    os.mkfifo(fifo)
    out = os.path.join(tmp, 'out')
    try:
        rc, _, err = run(['--algo', 'otsu', '--threads', '2', '--out-dir', out, src[0], fifo, src[1]], timeout=60)
    except subprocess.TimeoutExpired:
        rc, err = None, 'no exit within 60 s'
    lines = [l for l in err.splitlines() if l.strip()]
    check(rc == 1 and len(lines) == 1 and 'piped.png' in lines[0] and 'FIFO' in lines[0],
          f'FIFO input: exit {rc}: {err}')
    check(sorted(os.listdir(out)) == ['a.png', 'b.png'] if os.path.exists(out) else False,
          f'FIFO input: the other pages were not done')
    print(f'ok   a FIFO input is refused at once: {lines[0] if lines else ""}')


def test_corrupt_in_middle(tmp):
    d = os.path.join(tmp, 'mixed')
    make_inputs(d, ['a.png', 'b.png', 'd.png', 'e.png'])
    bad = clitest.write(os.path.join(d, 'c.png'), bytes(random.Random(5).randrange(256) for _ in range(700)))
    out = os.path.join(tmp, 'mixed-out')
    log = os.path.join(tmp, 'mixed.jsonl')
    rc, _, err = run(['--algo', 'sauvola', '--map', 'gpu', '--out-dir', out, '--log-json', log, d])
    check(rc == 1, f'corrupt input: exit {rc}, expected 1 (an unreadable input)')
    lines = [l for l in err.splitlines() if l.strip()]
    check(len(lines) == 1 and lines[0].startswith(f'docbin-run: {bad}') and lines[0].count(bad) == 1,
          f'corrupt input: want one line "docbin-run: {bad}: ...", got {err!r}')
    check(sorted(os.listdir(out)) == ['a.png', 'b.png', 'd.png', 'e.png'],
          f'corrupt input: outputs {sorted(os.listdir(out))}: the others must be written, none for c.png')
    check(not temp_files(out), f'corrupt input: temporary files left: {temp_files(out)}')
    entries = log_lines(read(log).decode(), 'corrupt input')
    by_input = {e.get('input'): e for e in entries}
    check(len(entries) == 5 and set(by_input) == {os.path.join(d, c + '.png') for c in 'abcde'},
          f'corrupt input: log names {sorted(by_input)}')
    e = by_input.get(bad, {})
    check(e.get('status') == 'failed' and 'PNG' in (e.get('error') or ''), f'corrupt input: log entry {e}')
    ok = [x for x in entries if x.get('status') == 'ok']
    check(len(ok) == 4 and all(x.get('error') is None and x.get('map') == 'gpu,gpu,gpu' for x in ok),
          'corrupt input: the other entries are not ok')
    # stats and threshold on one role run fused (db_fusion): one entry for the pair.
    check(all(set(x.get('stages', {})) == {'gray', 'stats+threshold'}
              and all(isinstance(s.get('ms'), (int, float)) and s.get('role') == 'gpu' for s in x['stages'].values())
              and isinstance(x.get('wall_ms'), (int, float)) for x in ok),
          f'corrupt input: stage times missing from {ok[:1]}')
    # Each image a lane ran says when its run began (ms from the batch's start); the failed decode ran on none.
    starts = sorted(x.get('run_start_ms', -1) for x in ok)
    check(all(0 <= t for t in starts) and 'run_start_ms' not in e,
          f'corrupt input: run_start_ms {starts}, failed entry {e}')
    # Every image says when it was taken; an image ran after its decode, and was taken within the batch.
    taken = [(x.get('start_ms', -1), x.get('decode_ms', -1), x.get('run_start_ms')) for x in entries]
    check(all(0 <= t and (r is None or t + d <= r + 0.01) for t, d, r in taken),
          f'corrupt input: start_ms, decode_ms, run_start_ms {taken}')
    print('ok   a corrupt input in the middle fails alone')


def test_skip_existing(tmp):
    d = os.path.join(tmp, 'resume')
    inputs = make_inputs(d, [f'r{i}.png' for i in range(6)], seed0=20)
    ref = os.path.join(tmp, 'resume-ref')
    rc, _, err = run(['--algo', 'wolf', '--map', 'cpu,gpu,cpu', '--out-dir', ref, d])
    check(rc == 0, f'resume reference: {err}')
    # An interrupted run: r0, r2, r3 finished; r4 was being written (its temporary file is left);
    # r1 and r5 never started.
    out = os.path.join(tmp, 'resume-out')
    os.makedirs(out)
    done = ['r0.png', 'r2.png', 'r3.png']
    for n in done:
        shutil.copyfile(os.path.join(ref, n), os.path.join(out, n))
        os.utime(os.path.join(out, n), ns=(10**18, 10**18))
    clitest.write(os.path.join(out, '.r4.png.Ab12Cd'), read(os.path.join(ref, 'r4.png'))[:50])
    before = {n: (os.stat(os.path.join(out, n)).st_ino, os.stat(os.path.join(out, n)).st_mtime_ns) for n in done}
    rc, so, err = run(['--algo', 'wolf', '--map', 'cpu,gpu,cpu', '--out-dir', out, '--skip-existing',
                       '--log-json', '-', d])
    check(rc == 0, f'--skip-existing: exit {rc}: {err}')
    for n in done:
        st = os.stat(os.path.join(out, n))
        check((st.st_ino, st.st_mtime_ns) == before[n], f'--skip-existing rewrote {n}')
    for i in range(6):
        n = f'r{i}.png'
        check(os.path.exists(os.path.join(out, n)) and read(os.path.join(out, n)) == read(os.path.join(ref, n)),
              f'--skip-existing: {n} missing or wrong')
    status = {os.path.basename(e['input']): e['status'] for e in log_lines(so, '--skip-existing')}
    want = {f'r{i}.png': 'skipped' if f'r{i}.png' in done else 'ok' for i in range(6)}
    check(status == want, f'--skip-existing: log statuses {status}, want {want}')
    print('ok   --skip-existing finishes an interrupted batch and leaves finished files alone')


def test_list_and_directory(tmp):
    d = os.path.join(tmp, 'lists')
    make_inputs(d, ['b.png', 'a.pgm.png', 'c.png'], seed0=40)
    # A PGM (P5) input, and files a directory listing must ignore.
    clitest.write(os.path.join(d, 'z.pgm'), b'P5\n5 4\n255\n' + bytes(range(0, 200, 10)))
    # A name JSON must escape (quote, backslash, tab) and one beyond ASCII.
    odd = 'we"ird\\na\tme \u00e9.png'
    shutil.copyfile(os.path.join(d, 'c.png'), os.path.join(d, odd))
    clitest.write(os.path.join(d, 'notes.txt'), b'not an image\n')
    clitest.write(os.path.join(d, '.hidden.png'), b'garbage')
    os.makedirs(os.path.join(d, 'sub.png'))
    rc, so, err = run(['--algo', 'otsu', '--map', 'cpu', '--out-dir', 'dir-out', '--log-json', '-', '--threads', '1',
                       '--in-flight', '1', 'lists'], cwd=tmp)
    check(rc == 0, f'directory input: exit {rc}: {err}')
    got = sorted((e['index'], e['input']) for e in log_lines(so, 'directory input'))
    want = list(enumerate(os.path.join('lists', n) for n in ['a.pgm.png', 'b.png', 'c.png', odd, 'z.pgm']))
    check(got == want, f'directory input: inputs {got}, want {want}')
    check(sorted(os.listdir(os.path.join(tmp, 'dir-out'))) == sorted(['a.pgm.png', 'b.png', 'c.png', odd, 'z.png']),
          f'directory input: outputs {sorted(os.listdir(os.path.join(tmp, "dir-out")))}')
    # A list file: comments, blank lines, CRLF, paths relative to the current directory.
    clitest.write(os.path.join(tmp, 'pages.txt'),
                  b'# pages to do\n\nlists/c.png\r\n   \n#lists/b.png\n' + os.path.join(d, 'z.pgm').encode() + b'\n')
    rc, so, err = run(['--algo', 'otsu', '--map', 'cpu', '--out-dir', 'list-out', '--log-json', '-', '@pages.txt',
                       'lists/b.png'], cwd=tmp)
    check(rc == 0, f'@list input: exit {rc}: {err}')
    got = sorted((e['index'], e['input']) for e in log_lines(so, '@list input'))
    want = [(0, 'lists/c.png'), (1, os.path.join(d, 'z.pgm')), (2, 'lists/b.png')]
    check(got == want, f'@list input: inputs {got}, want {want}')
    for n in ('b.png', 'c.png', 'z.png'):
        check(read(os.path.join(tmp, 'list-out', n)) == read(os.path.join(tmp, 'dir-out', n)),
              f'@list and directory outputs of {n} differ')
    print('ok   @list and directory inputs')


def test_shards(tmp):
    d = os.path.join(tmp, 'shards')
    names = [f's{i:02d}.png' for i in range(7)]
    make_inputs(d, names, seed0=60)
    seen = {}
    for k in (1, 2, 3):
        out = os.path.join(tmp, f'shard-{k}')
        rc, so, err = run(['--algo', 'niblack', '--map', 'cpu', '--out-dir', out, '--shard', f'{k}/3',
                           '--log-json', '-', d])
        check(rc == 0, f'--shard {k}/3: exit {rc}: {err}')
        got = sorted(os.listdir(out))
        want = sorted(n for i, n in enumerate(sorted(names)) if i % 3 == k - 1)
        check(got == want, f'--shard {k}/3: wrote {got}, want {want}')
        idx = sorted(e['index'] for e in log_lines(so, f'--shard {k}/3'))
        check(idx == [i for i in range(7) if i % 3 == k - 1], f'--shard {k}/3: log indices {idx}')
        for n in got:
            check(n not in seen, f'{n} written by shards {seen.get(n)} and {k}')
            seen[n] = k
    check(sorted(seen) == sorted(names), f'shards cover {sorted(seen)}, not every input')
    print('ok   shards 1/3, 2/3, 3/3 are disjoint and cover every input')


def test_failed_runs(tmp):
    """Runs that fail on the device lane (not in decoding): each image reported, none written, no hang;
    a JSON log inside a new --out-dir; no log when the devices cannot be bound; --explain in a batch."""
    inputs = make_inputs(os.path.join(tmp, 'in'), [f'f{i}.png' for i in range(4)])
    out = os.path.join(tmp, 'out')
    log = os.path.join(out, 'log.jsonl')
    env = dict(os.environ, DOCBIN_PUSHRELABEL='bogus')
    p = subprocess.run([DOCBIN, '--algo', 'howe', '--map', 'gpu', '--out-dir', out, '--log-json', log,
                        '--in-flight', '2'] + inputs, capture_output=True, text=True, env=env, timeout=300)
    named = [x for x in inputs if x in p.stderr]
    check(p.returncode == 2 and named == inputs, f'failed runs: exit {p.returncode}, named {named}: {p.stderr}')
    pngs = [f for f in os.listdir(out) if f.endswith('.png')] if os.path.isdir(out) else []
    check(pngs == [] and not temp_files(out), f'failed runs left {os.listdir(out)}')
    entries = [json.loads(l) for l in open(log)] if os.path.exists(log) else []
    check(sorted(e['status'] for e in entries) == ['failed'] * 4, f'log of failed runs: {entries}')
    print('ok   runs failing on the lanes: each reported, none written, the log in the new --out-dir')
    out2, log2 = os.path.join(tmp, 'out2'), os.path.join(tmp, 'l2.jsonl')
    rc, _, err = run(['--algo', 'otsu', '--gpu-device', 'nosuchdevice', '--out-dir', out2, '--log-json', log2]
                     + inputs)
    check(rc == 3 and not os.path.exists(log2) and not os.path.exists(out2),
          f'unbound device: exit {rc}, log {os.path.exists(log2)}, out {os.path.exists(out2)}: {err}')
    # The inputs were being decoded while the lane failed to open: none of them is reported.
    check(len(err.splitlines()) == 1 and 'nosuchdevice' in err, f'unbound device: not one error line: {err!r}')
    rc, _, err = run(['--algo', 'sauvola', '--map', 'gpu,cpu,gpu', '--explain', '--out-dir', out2] + inputs)
    plans = [l for l in err.splitlines() if l.startswith('plan for ')]
    check(rc == 0 and plans and set(plans) == {'plan for sauvola: gpu,cpu,gpu (given)'},
          f'--explain in a batch: exit {rc}: {err}')
    print('ok   --explain in a batch names the given map')


def test_memory_bound(tmp):
    """--max-memory: with room for less than one page the batch holds one image at a time from the
    first page on, however many codec threads (each page is counted from its header before it is
    decoded): the log's [start_ms, start_ms + wall_ms] intervals are disjoint, and the outputs are the
    same; without it, images overlap."""
    inputs = make_inputs(os.path.join(tmp, 'in'), [f'p{i}.png' for i in range(6)])
    spans = {}
    for label, extra in (('default', []), ('1 byte', ['--max-memory', '1']), ('1K', ['--max-memory', '1K'])):
        out = os.path.join(tmp, 'out-' + label.replace(' ', '-'))
        rc, so, err = run(['--algo', 'sauvola', '--map', 'gpu,cpu,gpu', '--in-flight', '3', '--threads', '3',
                           '--out-dir', out, '--log-json', '-'] + extra + inputs)
        check(rc == 0, f'--max-memory {label}: exit {rc}: {err}')
        entries = log_lines(so, f'--max-memory {label}')
        check(len(entries) == 6 and all(e.get('status') == 'ok' for e in entries),
              f'--max-memory {label}: log {entries}')
        spans[label] = sorted((e['start_ms'], e['start_ms'] + e['wall_ms']) for e in entries)
        if label != 'default':
            for i in range(6):
                a, b = os.path.join(tmp, 'out-default', f'p{i}.png'), os.path.join(out, f'p{i}.png')
                check(os.path.exists(b) and read(a) == read(b), f'--max-memory {label}: {b} differs')
    overlaps = {k: sum(1 for (_, e0), (s1, _) in zip(v, v[1:]) if s1 < e0 - 0.01) for k, v in spans.items()}
    check(overlaps['default'] > 0, f'default bound: the images never overlapped: {spans["default"]}')
    check(overlaps['1 byte'] == 0 and overlaps['1K'] == 0,
          f'--max-memory below one page: images overlapped ({overlaps}): {spans}')
    print(f'ok   --max-memory below one page: one image at a time, same outputs (default: {overlaps["default"]} '
          f'overlaps)')


def test_usage_errors(tmp):
    d = os.path.join(tmp, 'dup')
    a = make_inputs(os.path.join(d, 'one'), ['x.png'])[0]
    b = make_inputs(os.path.join(d, 'two'), ['x.png'])[0]
    good = make_inputs(os.path.join(d, 'three'), ['y.png'])[0]
    out = os.path.join(tmp, 'never')
    cases = {
        'duplicate output names': (['--algo', 'otsu', '--out-dir', out, a, good, b], [a, b]),
        'several inputs without --out-dir': (['--algo', 'otsu', a, good], ['--out-dir']),
        'shard 0/3': (['--algo', 'otsu', '--out-dir', out, '--shard', '0/3', a], ['--shard']),
        'shard 4/3': (['--algo', 'otsu', '--out-dir', out, '--shard', '4/3', a], ['--shard']),
        'in-flight 0': (['--algo', 'otsu', '--out-dir', out, '--in-flight', '0', a], ['--in-flight']),
        'max-memory 0': (['--algo', 'otsu', '--out-dir', out, '--max-memory', '0', a], ['--max-memory']),
        'max-memory 3Q': (['--algo', 'otsu', '--out-dir', out, '--max-memory', '3Q', a], ['--max-memory']),
        'max-memory -1G': (['--algo', 'otsu', '--out-dir', out, '--max-memory', '-1G', a], ['--max-memory']),
        'max-memory " -1"': (['--algo', 'otsu', '--out-dir', out, '--max-memory', ' -1', a], ['--max-memory']),
        'serial with threads': (['--algo', 'otsu', '--out-dir', out, '--serial', '--threads', '2', a], ['--serial']),
        '-o with --out-dir': (['--algo', 'otsu', '--out-dir', out, a, '-o', os.path.join(tmp, 'o.png')], ['-o']),
        'batch option without --out-dir': (['--algo', 'otsu', '--skip-existing', a, '-o', os.path.join(tmp, 'o.png')],
                                           ['--out-dir']),
        'bad map before any image': (['--algo', 'sauvola', '--map', 'gpu,tpu,cpu', '--out-dir', out, a], ['tpu']),
        'bad parameter before any image': (['--algo', 'sauvola', '--param', 'window=4', '--out-dir', out, a],
                                           ['window']),
        'unknown format': (['--algo', 'otsu', '--format', 'jpg', '--out-dir', out, a], ['--format']),
        'output over its input': (['--algo', 'otsu', '--out-dir', os.path.dirname(a), a], [a]),
    }
    for name, (args, needles) in cases.items():
        rc, _, err = run(args)
        lines = [l for l in err.splitlines() if l.strip()]
        check(rc == 2, f'{name}: exit {rc}, expected 2 ({err.strip()!r})')
        check(len(lines) == 1 and lines[0].startswith('docbin-run:') and all(n in lines[0] for n in needles),
              f'{name}: want one line naming {needles}, got {err!r}')
        check(not os.path.exists(out) and not os.path.exists(os.path.join(tmp, 'o.png')),
              f'{name}: something was written')
        print(f'ok   {name}: {lines[0] if lines else ""}')
    check(read(a) == read(os.path.join(d, 'one', 'x.png')) and sorted(os.listdir(os.path.dirname(a))) == ['x.png'],
          'output over its input: the input changed')
    rc, _, err = run(['--algo', 'otsu', '--out-dir', out, '@' + os.path.join(tmp, 'no-such-list.txt')])
    check(rc == 1 and 'no-such-list.txt' in err, f'missing list file: exit {rc}, {err!r}')
    # --gpu-device all with no GPU: a clear error, no fallback to the CPU.
    rc, so, _ = run(['--list-devices'], env_drop=('DOCBIN_GPU_DEVICE',))
    if 'type: gpu' in so:
        print('skip --gpu-device all without a GPU: this machine has a GPU')
    else:
        rc, _, err = run(['--algo', 'otsu', '--map', 'cpu', '--gpu-device', 'all', '--out-dir', out, a])
        check(rc == 3 and 'GPU' in err and len(err.strip().splitlines()) == 1,
              f'--gpu-device all without a GPU: exit {rc}, {err!r}')
        check(not os.path.exists(out), '--gpu-device all without a GPU: something was written')
        print(f'ok   --gpu-device all without a GPU: {err.strip()}')


def main():
    with tempfile.TemporaryDirectory() as tmp:
        for test in (test_same_as_single, test_cpu_lane, test_codec_only, test_pipe_input, test_corrupt_in_middle, test_skip_existing,
                     test_list_and_directory, test_shards, test_failed_runs, test_memory_bound, test_usage_errors):
            sub = os.path.join(tmp, test.__name__)
            os.makedirs(sub)
            test(sub)
    if failures:
        print(f'{len(failures)} failure(s)', file=sys.stderr)
        return 1
    print('batch: ok')
    return 0


if __name__ == '__main__':
    sys.exit(main())
