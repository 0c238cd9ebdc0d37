#!/usr/bin/env python3
"""docbin-bench end to end: calibration file contents and merging, the benchmark's
CSV, summary and SVG, the progress line, and bad input that must fail cleanly.

References are independent of the code under test: expected calibration rows come
from `docbin-run --list-algos`, kernel hashes from the cl/ sources (SHA-256 of each
listed file's name and text as built, NUL-separated, as planner/calib.h documents), medians
from Python's statistics module over the CSV rows.
usage: test_bench.py PATH/TO/docbin-bench PATH/TO/docbin-run PATH/TO/cl
"""
import csv
import hashlib
import math
import os
import pty
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

import clitest
from clitest import check, failures, png_bytes

BENCH, RUN, CL_DIR = sys.argv[1], sys.argv[2], sys.argv[3]

# The OpenCL sources each stage's kernels come from, as the algorithm files declare them.
SOURCES = {
    ('otsu', 'gray'): ['gray.cl'], ('otsu', 'histogram'): ['histogram.cl'], ('otsu', 'binarize'): ['otsu.cl'],
    ('sauvola', 'gray'): ['gray.cl'], ('sauvola', 'stats'): ['window_stats.cl'],
    ('sauvola', 'threshold'): ['local_threshold.cl'],
    ('hbk', 'kmeans'): ['hbk.cl'], ('hbk', 'label'): ['hbk.cl'],
}
# Programs are built from each source with this prelude in front (runtime/program.c),
# and the kernel hash covers the text as built.
# A stage whose cost follows its work has its work's words per role (cpu, gpu) in the hash too,
# each followed by 'per unit' where the whole cost scales with the work (db_stage_work.per_unit).
UNITS = {('hbk', 'kmeans'): ['passes per block', 'passes per block\0per unit'],
         ('dbs', 'search'): ['changes per pixel', 'changes per pixel'],
         ('howe', 'graphcut'): ['search steps per pixel\0per unit', 'commands\0per unit']}
# A stage whose work follows content the sample pages barely vary (db_stage_work.varied) is
# calibrated on varied pages too: 'varied pages' after its words, and its rows fitted to up to twice
# the sizes where the work scales them (not per unit).
VARIED = {('hbk', 'kmeans'), ('howe', 'graphcut')}
# The stages that read the page (the algorithm's input), which calibration times on RGB and on
# gray pages, a row for each (channels 3 and 1); every other row serves any page (channels 0).
READS_PAGE = {('otsu', 'gray'), ('sauvola', 'gray'), ('hbk', 'kmeans'), ('hbk', 'label')}
PAGES = {'0': 'any', '1': 'gray', '3': 'RGB'}
PRELUDE = b'#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n#pragma OPENCL FP_CONTRACT OFF\n#line 1\n'
TINY = ['--sizes', '64x48,96x64,128x96', '--runs', '2']


def run(args, env_extra=None, stderr=subprocess.PIPE):
    env = dict(os.environ)
    env.update(env_extra or {})
    p = subprocess.run([BENCH] + args, stdout=subprocess.PIPE, stderr=stderr, text=True, env=env, timeout=600)
    return p.returncode, p.stdout, p.stderr or ''


def launch_revision():
    """DB_LAUNCH_REVISION of runtime/stage.h, NUL-terminated, as the kernel hash takes it."""
    with open(os.path.join(CL_DIR, '..', 'runtime', 'stage.h'), encoding='utf-8') as f:
        return re.search(r'#define DB_LAUNCH_REVISION "([^"]*)"', f.read()).group(1).encode() + b'\0'


def kernel_hash(names, units=()):
    h = hashlib.sha256()
    for name in names:
        with open(os.path.join(CL_DIR, name), 'rb') as f:
            text = f.read()
        h.update(name.encode() + b'\0' + PRELUDE + text + b'\0')
    h.update(launch_revision())
    for unit in units:
        h.update(unit.encode() + b'\0')
    return h.hexdigest()


def stage_hash(algo, stage):
    varied = ['varied pages'] if (algo, stage) in VARIED else []
    return kernel_hash(SOURCES[(algo, stage)], UNITS.get((algo, stage), []) + varied)


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


def read_calib(path):
    """(header, stage rows, transfer rows) of a calibration file, rows as lists of fields."""
    with open(path) as f:
        lines = f.read().splitlines()
    rows = [l.split() for l in lines[1:] if l.strip() and not l.startswith('#')]
    return lines[0], [r for r in rows if r[0] == 'stage'], [r for r in rows if r[0] == 'transfer']


def algo_hash(algo, algos):
    """The kernel hash of an algorithm's host rows (db_algo_kernel_hash): SHA-256 over its stages'
    kernel hashes in order, each as 64 hex digits and a NUL."""
    h = hashlib.sha256()
    for stage, _ in algos[algo][0]:
        h.update(stage_hash(algo, stage).encode() + b'\0')
    return h.hexdigest()


def check_stage_rows(rows, algos, names, device_keys, what):
    """Every stage x role x variant of `names` appears once, with the right hash and 3 sizes, and
    the host's share of runs (stage 'host', gray and RGB pages) on each role that runs every stage."""
    expected = set()
    for a in names:
        stages, variants = algos[a]
        for stage, roles in stages:
            for role in roles:
                for v in variants:
                    for channels in ('1', '3') if (a, stage) in READS_PAGE else ('0',):
                        expected.add((a, stage, role, v, channels))
        for role in ('cpu', 'gpu'):
            if all(role in roles for _, roles in stages):
                for v in variants:
                    expected.update((a, 'host', role, v, ch) for ch in ('1', '3'))
    got = [(r[2], r[3], r[4], r[5], r[13] if len(r) > 13 else '') for r in rows if r[2] in names]
    check(len(got) == len(set(got)), f'{what}: duplicate rows')
    check(set(got) == expected, f'{what}: rows {sorted(set(got) ^ expected)} missing or unexpected')
    for r in rows:
        if r[2] not in names:
            continue
        check(len(r) == 14, f'{what}: row has {len(r)} fields: {r}')
        check(r[1] in device_keys, f'{what}: device {r[1]} is not a bound device ({device_keys})')
        want = algo_hash(r[2], algos) if r[3] == 'host' else stage_hash(r[2], r[3])
        check(r[6] == want, f'{what}: kernel hash of {r[2]}/{r[3]} is {r[6]}')
        per_unit = (r[2], r[3], r[4]) in (('howe', 'graphcut', 'gpu'), ('howe', 'graphcut', 'cpu'),
                                          ('hbk', 'kmeans', 'gpu'))
        sizes = ('3', '4', '5', '6') if (r[2], r[3]) in VARIED and not per_unit else ('3',)
        check(r[9] in sizes, f'{what}: {r[2]}/{r[3]} on {r[4]} fitted {r[9]} sizes, not {" to ".join(sizes[::3])}')
        a, b, spread = float(r[7]), float(r[8]), float(r[10])
        check(math.isfinite(a) and math.isfinite(b) and spread >= 0, f'{what}: bad fit {r}')
        # Work: hbk's kmeans makes at least one pass over every block per outer iteration, dbs's
        # search changes some pixels of a page with text on it; every other stage's cost follows
        # the size alone.
        work = float(r[11])
        check(work >= 1 if (r[2], r[3]) == ('hbk', 'kmeans') else work > 0 if (r[2], r[3]) == ('dbs', 'search')
              else work == 0, f'{what}: work of {r}')
        # c: only a stage whose work scales its whole cost has a part that its work does not scale.
        check(float(r[12]) == 0 if not per_unit else float(r[12]) >= 0,
              f'{what}: c of {r}')
    return len(expected)


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
    rc, _, err = run(args + ['--csv', csv_path] if '--calibrate' not in args else args)
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
    # The checks below take both roles as sharing host memory (no copies to time or to predict), as on
    # PoCL: on a machine with a GPU the gpu role is bound to the cpu role's device for them.
    devices = subprocess.run([RUN, '--list-devices'], capture_output=True, text=True).stdout
    cpu_index = re.search(r'^\s*(\d+:\d+)\s+role: \S*cpu', devices, re.M)
    if cpu_index:
        os.environ['DOCBIN_GPU_DEVICE'] = cpu_index.group(1)
        devices = subprocess.run([RUN, '--list-devices'], capture_output=True, text=True).stdout
    with tempfile.TemporaryDirectory() as tmp:
        # Calibration into the default path ($DOCBIN_PERF_DIR/<host>.calib).
        perf = os.path.join(tmp, 'perf')
        path = os.path.join(perf, socket.gethostname() + '.calib')
        rc, out, err = run(['--calibrate', '--algo', 'otsu,sauvola'] + TINY, {'DOCBIN_PERF_DIR': perf})
        check(rc == 0, f'calibrate otsu,sauvola failed: {err}')
        # Without a terminal no progress line; the warnings of a host that was not steady during the
        # calibration (a loaded test machine: its copies, a kernel on PoCL, the hypervisor taking CPU
        # time) are the lines allowed.
        other = [l for l in err.splitlines()
                 if not (l.startswith('docbin: warning: ') and 'calibrate again when it is steady' in l)]
        check(other == [], f'calibration wrote to stderr without a terminal: {err!r}')
        check(os.path.exists(path), f'no calibration file at {path}')
        if os.path.exists(path):
            header, stages, transfers = read_calib(path)
            check(header == 'docbin-calibration 7', f'header {header!r}')
            keys = set(re.findall(r'\b[0-9a-f]{16}\b', devices))
            n = check_stage_rows(stages, algos, ['otsu', 'sauvola'], keys, 'first calibration')
            check(len(stages) == n, f'first calibration: {len(stages)} rows, expected {n}')
            check(str(n) + ' stage rows' in out, f'summary does not count {n} rows: {out}')
            check(out.count('\notsu ') + out.count('\nsauvola ') == n, 'summary table lacks rows')
            # Each printed row: the pages it serves, then a, b in ms per megapixel, spread and c in ms
            # per megapixel, as in the file.
            printed = {tuple(l.split()[:5]): l.split()[6:] for l in out.splitlines()
                       if l.split()[:1] in (['otsu'], ['sauvola'])}
            keyed = {(r[2], r[3], r[4], r[5], PAGES.get(r[13], '?')): r for r in stages}
            check('c (ms/Mpx)' in out and len(printed) == n and set(printed) == set(keyed) and all(
                abs(float(printed[k][0]) - float(r[7])) <= 6e-5 and
                abs(float(printed[k][1]) - float(r[8]) * 1e6) <= 6e-5 and
                abs(float(printed[k][3]) - float(r[12]) * 1e6) <= 6e-5
                for k, r in keyed.items() if k in printed), f'summary table against the file: {out}')
            # Both roles are on PoCL, which shares host memory: no copies to time.
            check(not transfers and 'no transfer rows' in out, f'transfer rows for shared memory: {transfers}')
            staging = [l.split() for l in open(path) if l.startswith('staging ')]
            check(len(staging) == 1 and len(staging[0]) == 5 and float(staging[0][2]) > 0 and int(staging[0][3]) >= 3,
                  f'staging row {staging}')
            # Both roles are bound (to one device, two contexts): a crossing row into each, at least 0 ms,
            # measured on the smallest page (sizes 1).
            crossings = [l.split() for l in open(path) if l.startswith('crossing ')]
            check(sorted(c[3] for c in crossings) == ['cpu', 'gpu'] and
                  all(len(c) == 6 and c[1] in keys and c[2] in keys and float(c[4]) >= 0 and int(c[5]) == 1
                      for c in crossings) and out.count('crossing into the ') == 2,
                  f'crossing rows {crossings}')
            first = {' '.join(r) for r in stages}

            # A second algorithm merges into the same file; the first rows stay as they were.
            rc, out, err = run(['--calibrate', '--algo', 'hbk', '--calib', path] + TINY)
            check(rc == 0, f'calibrate hbk failed: {err}')
            header, stages, _ = read_calib(path)
            check(header == 'docbin-calibration 7', f'header after merge {header!r}')
            check(first <= {' '.join(r) for r in stages}, 'merge lost or changed rows of the first calibration')
            n_hbk = check_stage_rows(stages, algos, ['hbk'], keys, 'merged calibration')
            check(len(stages) == n + n_hbk, f'merged file has {len(stages)} rows, expected {n + n_hbk}')
            # --variant: only that variant's rows for algorithms that have variants.
            one = os.path.join(tmp, 'one-variant.calib')
            rc, out, err = run(['--calibrate', '--algo', 'otsu,sauvola', '--variant', 'global', '--calib', one] + TINY)
            check(rc == 0, f'calibrate --variant global failed: {err}')
            _, rows, _ = read_calib(one)
            got = sorted({(r[2], r[5]) for r in rows})
            check(got == [('otsu', '-'), ('sauvola', 'global')], f'--variant global calibrated {got}')
            rc, _, err = run(['--calibrate', '--algo', 'sauvola', '--variant', 'magic', '--calib', one] + TINY)
            check(rc == 2 and 'magic' in err, f'--calibrate --variant magic: exit {rc}: {err}')
        print('ok   calibration')

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

        # --predict: otsu is a chain (histogram needs gray, binarize needs both) and
        # both roles share host memory here, so every map's predicted latency is the
        # sum of its stages' fitted times, max(0, a + b * pixels), from the file,
        # plus the staging copies of the gray page and of the result, each
        # max(0, latency + bytes / (bandwidth * 1e6)) for w * h bytes, plus the
        # host's share of a run ending on the last stage's role, max(0, a + b * pixels), plus a
        # crossing into a stage's role wherever it differs from the stage before (binarize also
        # reads gray, which is on its role already when histogram's is).
        #
        # The column after it predicts each map from the same fits scaled by the history factor that
        # the timed runs of the other maps give (planner/history.h): per stage and role, the median of
        # measured / fitted over those runs (three or more of them here: runs of one map each) where
        # the stage was not beside a crossing: gray is read by histogram and binarize, histogram by
        # binarize, and binarize finds gray on its role whenever histogram's role is its own.
        pcsv = os.path.join(tmp, 'predict.csv')
        rc, out, err = run(['--algo', 'otsu', '--runs', '1', good, '--predict', '--calib', path, '--csv', pcsv])
        check(rc == 0, f'bench --predict failed: {err}')
        _, calib_rows, _ = read_calib(path)
        # The page is gray: the rows of gray pages, and those that serve any page.
        fit = {(r[3], r[4]): (float(r[7]), float(r[8])) for r in calib_rows if r[2] == 'otsu' and r[13] != '3'}
        pct = r' +[-+][0-9.]+%'
        num = r' +([0-9.]+)'
        table = re.findall(r'^  ([a-z,]+)' + num + num + pct + num + pct + num + num + '$', out, re.M)
        check(len(table) == n_maps, f'--predict lists {len(table)} maps, expected {n_maps}: {out}')
        lat, bw = [float(l.split()[1]) for l in open(path) if l.startswith('staging ')][0], \
            [float(l.split()[2]) for l in open(path) if l.startswith('staging ')][0]
        copy_ms = 2 * max(0.0, lat + w * h / (bw * 1e6))
        crossing = {l.split()[3]: float(l.split()[4]) for l in open(path) if l.startswith('crossing ')}
        with open(pcsv, newline='') as f:
            runs_csv = [r for r in csv.DictReader(f) if r['warmup'] == '0' and r['stage'] not in ('copies', 'total')]

        def beside_crossing(roles, i):
            gray, histogram, binarize = roles
            return [gray != histogram or gray != binarize, gray != histogram or histogram != binarize,
                    histogram != binarize][i]

        def fitted(s, r):
            return max(0.0, fit[(s, r)][0] + fit[(s, r)][1] * w * h)

        with open(pcsv, newline='') as f:
            copies_csv = {r['map']: float(r['ms']) for r in csv.DictReader(f)
                          if r['warmup'] == '0' and r['stage'] == 'copies' and r['image'] == good}
        for m, predicted, _, after, copies_predicted, copies_measured in table:
            # Both roles share host memory: no copy is predicted, and the measured column is the run's
            # copies row of the CSV (one timed run).
            check(float(copies_predicted) == 0 and abs(float(copies_measured) - copies_csv[m]) <= 6e-4,
                  f'--predict {m}: copies {copies_predicted} predicted, {copies_measured} measured, '
                  f'CSV {copies_csv[m]}')
            roles = m.split(',')
            want = copy_ms + sum(fitted(s, r) for s, r in zip(stages + ['host'], roles + roles[-1:]))
            want += sum(crossing[b] for a, b in zip(roles, roles[1:]) if a != b)
            check(abs(float(predicted) - want) <= 1.5e-3, f'--predict {m}: {predicted} ms, the fits give {want:.4f}')
            scaled = want
            for s, r in zip(stages, roles):
                ratios = [float(x['ms']) / fitted(s, r) for x in runs_csv
                          if x['map'] != m and x['stage'] == s and x['role'] == r and fitted(s, r) > 0 and
                          not beside_crossing(x['map'].split(','), stages.index(s))]
                if len(ratios) >= 3:
                    scaled += fitted(s, r) * (statistics.median(ratios) - 1)
            check(abs(float(after) - scaled) <= 1.5e-3 * max(1.0, scaled),
                  f'--predict {m} after the other maps: {after} ms, their runs give {scaled:.4f}')
        check(re.search(r'auto picks [a-z,]+: measured', out), f'--predict does not say what auto picks: {out}')
        print('ok   benchmark --predict')

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

        # The progress line appears on a terminal, and follows the runs' order: by default the warm-up of
        # every map, then a round of one timed run of each; --order grouped runs each map's runs together.
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
        for extra, want in (([], [(a, b'1'), (b, b'1'), (a, b'2'), (b, b'2')]),
                            (['--order', 'grouped'], [(a, b'1'), (a, b'2'), (b, b'1'), (b, b'2')]),
                            (['--order', 'interleaved'], [(a, b'1'), (b, b'1'), (a, b'2'), (b, b'2')])):
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
            'unknown order': ['--algo', 'otsu', '--order', 'random'],
            'unknown algorithm': ['--algo', 'nosuch'],
            'missing algorithm': [good],
            'two algorithms to bench': ['--algo', 'otsu,sauvola'],
            'bad map': ['--algo', 'otsu', '--maps', 'gpu,tpu,cpu'],
            'map of the wrong length': ['--algo', 'otsu', '--maps', 'gpu;cpu,gpu'],
            'even window': ['--algo', 'sauvola', '--param', 'window=4'],
            'unknown variant': ['--algo', 'sauvola', '--variant', 'magic'],
            'bad sample size': ['--algo', 'otsu', '--sample-size', '0x5'],
            'two calibration sizes': ['--calibrate', '--algo', 'otsu', '--sizes', '64x48,96x64',
                                      '--calib', os.path.join(tmp, 'bad.calib')],
            'malformed calibration size': ['--calibrate', '--algo', 'otsu', '--sizes', '64x48,big,96x64',
                                           '--calib', os.path.join(tmp, 'bad.calib')],
            'image with --calibrate': ['--calibrate', '--algo', 'otsu', good, '--calib', os.path.join(tmp, 'bad.calib')],
            'order with --calibrate': ['--calibrate', '--algo', 'otsu', '--order', 'grouped',
                                       '--calib', os.path.join(tmp, 'bad.calib')],
            'unknown algorithm to calibrate': ['--calibrate', '--algo', 'otsu,nosuch',
                                               '--calib', os.path.join(tmp, 'bad.calib')],
        }
        for name, args in usage.items():
            expect_failure(name, args, 2, tmp)
        check(not os.path.exists(os.path.join(tmp, 'bad.calib')), 'a failed calibration wrote its file')
        missing = os.path.join(tmp, 'nope.png')
        expect_failure('missing image', ['--algo', 'otsu', '--runs', '1', good, missing], 1, tmp, must_name=missing)
        corrupt = clitest.write(os.path.join(tmp, 'corrupt.png'), b'not an image at all\n' * 10)
        expect_failure('corrupt image', ['--algo', 'otsu', '--runs', '1', corrupt], 1, tmp, must_name=corrupt)
        expect_failure('role bound to no device', ['--algo', 'otsu', '--maps', 'gpu', '--gpu-device',
                                                   'no-such-device-anywhere', good], 3, tmp)
        rc, so, _ = run(['--help'])
        check(rc == 0 and 'Exit status' in so and '--calibrate' in so, '--help')

    if failures:
        print(f'{len(failures)} failure(s)', file=sys.stderr)
        return 1
    print('bench: ok')
    return 0


if __name__ == '__main__':
    sys.exit(main())
