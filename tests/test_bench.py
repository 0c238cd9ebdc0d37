#!/usr/bin/env python3
"""docbin-bench end to end: the benchmark's CSV, summary and SVG, the progress line,
filling the wisdom file, and bad input that must fail cleanly.

References are independent of the code under test: medians from Python's statistics
module over the CSV rows, maps from `docbin-run --list-algos`.
usage: test_bench.py PATH/TO/docbin-bench PATH/TO/docbin-run
"""
import csv
import math
import os
import pty
import re
import statistics
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

import clitest
from clitest import check, failures, png_bytes

BENCH, RUN = sys.argv[1], sys.argv[2]


def run(args, env_extra=None, stderr=subprocess.PIPE):
    env = dict(os.environ)
    env.update(env_extra or {})
    p = subprocess.run([BENCH] + args, stdout=subprocess.PIPE, stderr=stderr, text=True, env=env, timeout=600)
    return p.returncode, p.stdout, p.stderr or ''


def list_algos():
    """{algo: (stages [(name, roles)], variants or ['-'])} from docbin-run --list-algos."""
    out = subprocess.run([RUN, '--list-algos'], capture_output=True, text=True, check=True).stdout
    algos, cur = {}, None
    for line in out.splitlines():
        m = re.match(r'^(\S+) — ', line)
        if m:
            cur = m.group(1)
            algos[cur] = ([], ['-'])
            continue
        m = re.match(r'^\s+\d+\.\s+(\S+)\s+\[([a-z,]+)\]', line)
        if m and cur:
            algos[cur][0].append((m.group(1), m.group(2).split(',')))
            continue
        m = re.match(r'^\s+variants of stage \S+ \(--variant\):(.*)$', line)
        if m and cur:
            algos[cur] = (algos[cur][0], m.group(1).replace('(default)', '').split())
    return algos


def parse_summary(text):
    """{(image, map, stage): (median, min, max)} from the printed summary."""
    out, cell = {}, None
    for line in text.splitlines():
        m = re.match(r'^\S+ (\S+) \(\d+x\d+\) map (\S+): median', line)
        if m:
            cell = (m.group(1), m.group(2))
            continue
        m = re.match(r'^\s+(\S+)\s+\S+\s+([-\d.]+) ms \(([-\d.]+) - ([-\d.]+)\)$', line)
        if m and cell:
            out[cell + (m.group(1),)] = tuple(float(m.group(i)) for i in (2, 3, 4))
    return out


def expect_failure(name, args, code, tmp, must_name=None):
    csv_path = os.path.join(tmp, 'fail.csv')
    rc, _, err = run(args + ['--csv', csv_path])
    lines = [l for l in err.splitlines() if l.strip()]
    check(rc == code, f'{name}: exit {rc}, expected {code} (stderr: {err.strip()!r})')
    check(len(lines) == 1 and lines[0].startswith('docbin-bench:'), f'{name}: not one error line: {err!r}')
    if must_name:
        check(must_name in err, f'{name}: the message does not name {must_name}: {err!r}')
    check(not os.path.exists(csv_path), f'{name}: CSV left behind')
    leftovers = [f for f in os.listdir(tmp) if f.startswith('.')]
    check(not leftovers, f'{name}: temporary files left behind: {leftovers}')
    print(f'ok   {name}: exit {rc}: {lines[0] if lines else ""}')


def main():
    algos = list_algos()
    with tempfile.TemporaryDirectory() as tmp:
        # Benchmark: every map of otsu x (a PNG file and a sample page) x 2 timed runs.
        w, h = 64, 48
        good = clitest.write(os.path.join(tmp, 'page.png'),
                             png_bytes(w, h, [bytes((x * 7 + y * 3) % 256 for x in range(w)) for y in range(h)]))
        csv_path, svg_path = os.path.join(tmp, 'otsu.csv'), os.path.join(tmp, 'otsu.svg')
        runs = 2
        rc, out, err = run(['--algo', 'otsu', '--runs', str(runs), good, '--sample-size', '80x60',
                            '--csv', csv_path, '--svg', svg_path])
        check(rc == 0, f'bench otsu failed: {err}')
        check(err == '', f'progress written without a terminal: {err!r}')
        stages = [s for s, _ in algos['otsu'][0]]
        n_maps = math.prod(len(roles) for _, roles in algos['otsu'][0])
        with open(csv_path, newline='') as f:
            rows = list(csv.DictReader(f))
        check(len(rows) == n_maps * 2 * (runs + 1) * (len(stages) + 2),
              f'CSV has {len(rows)} rows, expected {n_maps} maps x 2 images x {runs + 1} runs x {len(stages) + 2}')
        check(list(rows[0].keys()) == ['algo', 'image', 'width', 'height', 'map', 'run', 'warmup', 'stage', 'role',
                                       'ms'], f'CSV columns {list(rows[0].keys())}')
        maps = sorted({r['map'] for r in rows})
        check(len(maps) == n_maps, f'CSV has {len(maps)} maps, expected {n_maps}')
        check({r['image'] for r in rows} == {good, 'sample-80x60'}, 'CSV image names')
        for r in rows:
            if r['stage'] in ('copies', 'total'):
                check(r['role'] == '-' and float(r['ms']) >= 0, f'{r["stage"]} row {r}')
            else:
                check(r['role'] == r['map'].split(',')[stages.index(r['stage'])], f'role of {r}')
            check(r['warmup'] == ('1' if r['run'] == '0' else '0'), f'warm-up flag of {r}')
        printed = parse_summary(out)
        cells = {}
        for r in rows:
            if r['warmup'] == '0':
                cells.setdefault((r['image'], r['map'], r['stage']), []).append(float(r['ms']))
        check(len(printed) == len(cells), f'summary has {len(printed)} entries, CSV {len(cells)}')
        for key, values in cells.items():
            check(len(values) == runs, f'{key}: {len(values)} timed runs')
            want = (statistics.median(values), min(values), max(values))
            got = printed.get(key)
            check(got is not None and all(abs(g - x) <= 6e-4 for g, x in zip(got, want)),
                  f'{key}: printed {got}, CSV gives {want}')
        try:
            root = ET.parse(svg_path).getroot()
            ns = '{http://www.w3.org/2000/svg}'
            boxes = [e for e in root.iter(ns + 'rect') if e.get('class') == 'box']
            labels = sorted(e.text for e in root.iter(ns + 'text') if e.get('class') == 'label')
            check(len(boxes) == n_maps, f'SVG has {len(boxes)} boxes, expected {n_maps}')
            check(labels == maps, f'SVG labels {labels}, expected {maps}')
        except (OSError, ET.ParseError) as e:
            check(False, f'SVG does not parse: {e}')
        print('ok   benchmark otsu')

        # Chosen maps, a variant and a parameter; one image, one run.
        csv2, svg2 = os.path.join(tmp, 's.csv'), os.path.join(tmp, 's.svg')
        rc, out, err = run(['--algo', 'sauvola', '--maps', 'gpu,cpu,gpu;cpu', '--variant', 'global', '--param',
                            'window=5', '--runs', '1', good, '--csv', csv2, '--svg', svg2])
        check(rc == 0, f'bench sauvola failed: {err}')
        if rc == 0:
            with open(csv2, newline='') as f:
                rows = list(csv.DictReader(f))
            # 2 maps x 1 image x 2 runs x (3 stages, copies, total)
            check(len(rows) == 2 * 1 * 2 * 5, f'sauvola CSV has {len(rows)} rows, expected 20')
            root = ET.parse(svg2).getroot()
            labels = sorted(e.text for e in root.iter('{http://www.w3.org/2000/svg}text') if e.get('class') == 'label')
            check(labels == ['cpu,cpu,cpu', 'gpu,cpu,gpu'], f'sauvola SVG labels {labels}')

        # The 1-bit result path (packed on the GPU role's device): the same rows.
        csv3 = os.path.join(tmp, 'bits.csv')
        rc, out, err = run(['--algo', 'sauvola', '--maps', 'gpu', '--depth', '1', '--runs', '1', good, '--csv', csv3])
        check(rc == 0, f'bench sauvola --depth 1 failed: {err}')
        if rc == 0:
            with open(csv3, newline='') as f:
                rows = list(csv.DictReader(f))
            # 1 map x 1 image x 2 runs x (3 stages, copies, total)
            check(len(rows) == 2 * 5, f'sauvola --depth 1 CSV has {len(rows)} rows, expected 10')

        # The progress line appears on a terminal, and follows the runs' order: the warm-up of every map,
        # then a round of one timed run of each.
        def progress_lines(extra):
            master, slave = pty.openpty()
            p = subprocess.Popen([BENCH, '--algo', 'otsu', '--maps', 'cpu;gpu,cpu,cpu', '--runs', '1',
                                  '--sample-size', '32x24'] + extra, stdout=subprocess.PIPE, stderr=slave)
            os.close(slave)
            tty = b''
            while True:
                try:
                    chunk = os.read(master, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                tty += chunk
            p.communicate(timeout=300)
            os.close(master)
            return p.returncode, re.findall(rb'\r\[(\d+)/(\d+)\] otsu ([a-z,]+) sample-32x24 run (\d)/2', tty), tty

        a, b = b'cpu,cpu,cpu', b'gpu,cpu,cpu'
        for extra, want in (([], [(a, b'1'), (b, b'1'), (a, b'2'), (b, b'2')]),):
            rc, lines, tty = progress_lines(extra)
            got = [(m, r) for _, _, m, r in lines]
            steps = [(int(i), int(n)) for i, n, _, _ in lines]
            check(rc == 0 and got == want and steps == [(i, 4) for i in range(1, 5)],
                  f'progress {extra}: {got} {steps}, expected {want} in steps 1..4 of 4: {tty!r}')

        # Bad requests.
        usage = {
            'unknown option': ['--algo', 'otsu', '--frobnicate'],
            'runs of zero': ['--algo', 'otsu', '--runs', '0'],
            'runs not a number': ['--algo', 'otsu', '--runs', 'many'],
            'unknown algorithm': ['--algo', 'nosuch'],
            'missing algorithm': [good],
            'two algorithms to bench': ['--algo', 'otsu,sauvola'],
            'bad map': ['--algo', 'otsu', '--maps', 'gpu,tpu,cpu'],
            'map of the wrong length': ['--algo', 'otsu', '--maps', 'gpu;cpu,gpu'],
            'even window': ['--algo', 'sauvola', '--param', 'window=4'],
            'unknown variant': ['--algo', 'sauvola', '--variant', 'magic'],
            'depth of 2': ['--algo', 'sauvola', '--depth', '2'],
            'bad sample size': ['--algo', 'otsu', '--sample-size', '0x5'],
            'maps with --wisdom': ['--algo', 'otsu', '--maps', 'cpu', '--wisdom', os.path.join(tmp, 'w')],
            'unknown algorithm to measure': ['--algo', 'otsu,nosuch', '--wisdom', os.path.join(tmp, 'w')],
        }
        for name, args in usage.items():
            expect_failure(name, args, 2, tmp)
        check(not os.path.exists(os.path.join(tmp, 'w')), 'a refused --wisdom wrote its file')
        missing = os.path.join(tmp, 'nope.png')
        expect_failure('missing image', ['--algo', 'otsu', '--runs', '1', good, missing], 1, tmp, must_name=missing)
        corrupt = clitest.write(os.path.join(tmp, 'corrupt.png'), b'not an image at all\n' * 10)
        expect_failure('corrupt image', ['--algo', 'otsu', '--runs', '1', corrupt], 1, tmp, must_name=corrupt)
        expect_failure('role bound to no device', ['--algo', 'otsu', '--maps', 'gpu', '--gpu-device',
                                                   'no-such-device-anywhere', good], 3, tmp)
        rc, so, _ = run(['--help'])
        check(rc == 0 and 'Exit status' in so and '--wisdom' in so, '--help')

        # --wisdom: every map of each algorithm measured on each page, the winners stored, and
        # docbin-run's auto takes them for pages of that size.
        wisdom = os.path.join(tmp, 'wisdom')
        rc, out, err = run(['--algo', 'otsu,sauvola', '--wisdom', wisdom, '--runs', '1', good])
        lines = open(wisdom).read().splitlines() if os.path.exists(wisdom) else []
        entries = [l.split() for l in lines if l and not l.startswith('#')][1:]
        check(rc == 0 and [e[0] for e in entries] == ['otsu', 'sauvola'], f'--wisdom entries {entries}: {err}')
        for algo in ('otsu', 'sauvola'):
            won = [l for l in out.splitlines() if l.startswith(f'plan for {algo}: ')]
            stored = [e[8] for e in entries if e[0] == algo]
            check(len(won) == 1 and stored and won[0].split()[3] == stored[0], f'{algo}: printed {won}, stored {stored}')
            o = os.path.join(tmp, algo + '.png')
            p = subprocess.run([RUN, '--algo', algo, '--explain', good, '-o', o], capture_output=True, text=True,
                               env=dict(os.environ, DOCBIN_WISDOM=wisdom))
            check(p.returncode == 0 and stored and f'plan for {algo}: {stored[0]} (wisdom)' in p.stderr,
                  f'{algo}: auto with the filled wisdom: {p.stderr}')
        print('ok   --wisdom: otsu and sauvola measured, stored and used by auto')

    if failures:
        print(f'{len(failures)} failure(s)', file=sys.stderr)
        return 1
    print('bench: ok')
    return 0


if __name__ == '__main__':
    sys.exit(main())
