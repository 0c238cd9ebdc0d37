#!/usr/bin/env python3
"""docbin-run end to end: good runs, and bad input that must fail cleanly.

Every failure must exit non-zero with the documented code, print exactly one
line on stderr starting with "docbin-run:", and leave no output file (nor a
temporary one) behind. usage: test_cli.py PATH/TO/docbin-run
"""
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import clitest
from clitest import check, failures, png_bytes

DOCBIN = sys.argv[1]
SRC_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')


def run(args, env_extra=None, env_drop=()):
    env = dict(os.environ)
    for k in env_drop:
        env.pop(k, None)
    env.update(env_extra or {})
    p = subprocess.run([DOCBIN] + args, capture_output=True, text=True, env=env, timeout=300)
    return p.returncode, p.stdout, p.stderr




def expect_failure(name, args, code, tmp, out, env_extra=None, env_drop=()):
    rc, _, err = run(args, env_extra, env_drop)
    lines = [l for l in err.splitlines() if l.strip()]
    check(rc == code, f'{name}: exit {rc}, expected {code} (stderr: {err.strip()!r})')
    check(len(lines) == 1 and lines[0].startswith('docbin-run:'), f'{name}: not one error line: {err!r}')
    check(not os.path.exists(out), f'{name}: output file left behind')
    leftovers = [f for f in os.listdir(tmp) if f.startswith('.')]
    check(not leftovers, f'{name}: temporary files left behind: {leftovers}')
    print(f'ok   {name}: exit {rc}: {lines[0] if lines else ""}')


def explain_rows(err, n_stages):
    """The rows of --explain's table: (marked, map) for each line that starts with a map."""
    rows = []
    for line in err.splitlines():
        parts = line[2:].split()
        if len(line) > 2 and line[:2] in ('* ', '  ') and parts:
            roles = parts[0].split(',')
            if len(roles) == n_stages and all(r in ('cpu', 'gpu') for r in roles):
                rows.append((line[0] == '*', parts[0]))
    return rows


def kernel_prelude():
    """The text runtime/program.c puts before every kernel source (its `prelude` literal)."""
    with open(os.path.join(SRC_DIR, 'runtime', 'program.c'), encoding='utf-8') as f:
        src = f.read()
    body = src[src.index('prelude[] ='):]
    body = body[:body.index(';')]
    return ''.join(bytes(s, 'ascii').decode('unicode_escape') for s in re.findall(r'"((?:[^"\\]|\\.)*)"', body))


def kernel_hash(sources, units=()):
    """The kernel hash of a stage (db_stage_kernel_hash): SHA-256 over each source's name, NUL,
    its text as built (prelude + cl/ file), NUL; then the launch revision of runtime/stage.h, NUL;
    then, for a stage whose cost follows its work, the work's words on the cpu and gpu roles, NUL each,
    each followed by 'per unit' and NUL where the whole cost scales with the work, and last 'varied
    pages' and NUL for a stage calibrated on varied pages too."""
    h = hashlib.sha256()
    for name in sources.split():
        with open(os.path.join(SRC_DIR, 'cl', name), encoding='utf-8') as f:
            text = kernel_prelude() + f.read()
        h.update(name.encode() + b'\0' + text.encode() + b'\0')
    with open(os.path.join(SRC_DIR, 'runtime', 'stage.h'), encoding='utf-8') as f:
        h.update(re.search(r'#define DB_LAUNCH_REVISION "([^"]*)"', f.read()).group(1).encode() + b'\0')
    for unit in units:
        h.update(unit.encode() + b'\0')
    return h.hexdigest()


def role_keys(env=None):
    """The device key of each role, and the P:D of the cpu role's device, from --list-devices."""
    _, so, _ = run(['--list-devices'], env)
    keys, cpu_index = {}, None
    for line in so.splitlines():
        m = re.search(r'^\s*(\d+:\d+)\s+role: (\S+).*key: ([0-9a-f]{16})', line)
        if m:
            for role in m.group(2).split(','):
                keys[role] = m.group(3)
                if role == 'cpu':
                    cpu_index = m.group(1)
    return keys, cpu_index


def check_planner(tmp, good):
    """--map auto (uncalibrated and calibrated), DOCBIN_MAP=auto, --explain. The figures below assume
    both roles on the CPU device (copies are free maps), so the gpu role is bound to it here even on a
    machine with a GPU."""
    _, cpu_index = role_keys()
    if not cpu_index:
        print('skip --map auto checks: no device on the cpu role')
        return
    with tempfile.TemporaryDirectory() as perf:
        env = {'DOCBIN_PERF_DIR': perf, 'DOCBIN_GPU_DEVICE': cpu_index}
        ref = os.path.join(tmp, 'plan-gpu.png')
        rc, _, err = run(['--algo', 'sauvola', '--map', 'gpu', good, '-o', ref], env)
        check(rc == 0, f'sauvola --map gpu failed: {err}')
        # Uncalibrated: the default map (every stage on gpu) and one note line
        # (6 stage rows, the host's share on 2 roles, the staging copies and 2 crossings missing).
        for name, args, extra in (('--map auto', ['--map', 'auto'], {}),
                                  ('DOCBIN_MAP=auto', [], {'DOCBIN_MAP': 'auto'})):
            o = os.path.join(tmp, 'plan-auto.png')
            rc, _, err = run(['--algo', 'sauvola'] + args + [good, '-o', o], dict(env, **extra))
            notes = [l for l in err.splitlines() if l.startswith('docbin-run: note: ')]
            check(rc == 0 and os.path.exists(o), f'{name} uncalibrated failed: {err}')
            check(len(notes) == 1 and '11 entries missing' in notes[0] and 'default map gpu,gpu,gpu' in notes[0]
                  and 'not calibrated' in notes[0] and 'docbin-bench --calibrate' in notes[0],
                  f'{name}: note missing or wrong: {err!r}')
            check(os.path.exists(o) and open(o, 'rb').read() == open(ref, 'rb').read(),
                  f'{name}: output differs from --map gpu')
            print(f'ok   {name} uncalibrated: one note, output as --map gpu')

        # --explain with a given map: all 8 maps in --map syntax, that one marked, then the measurement.
        rc, _, err = run(['--algo', 'sauvola', '--map', 'gpu,cpu,gpu', '--explain', good,
                          '-o', os.path.join(tmp, 'plan-e.png')], env)
        rows = explain_rows(err, 3)
        maps = sorted(m for _, m in rows)
        every = sorted(','.join(('cpu', 'gpu')[(i >> (2 - s)) & 1] for s in range(3)) for i in range(8))
        check(rc == 0 and maps == every, f'--explain maps {maps}, expected {every}: {err}')
        check([m for marked, m in rows if marked] == ['gpu,cpu,gpu'], f'--explain marks {rows}')
        check('predicted and measured, map gpu,cpu,gpu' in err and 'latency / wall' in err
              and all(s in err for s in ('stats', 'threshold')), f'--explain measured part missing: {err}')
        print('ok   --explain: 8 maps, gpu,cpu,gpu marked, measured figures')

        # A calibration where cpu,gpu,cpu is fastest (both roles on PoCL share host
        # memory: no copy costs; sauvola is a chain, so latency = the sum):
        # gray cpu 1 / gpu 5, stats cpu 5 / gpu 1, threshold cpu 1 / gpu 5 -> 3 ms.
        keys, _ = role_keys(env)
        if 'cpu' not in keys or 'gpu' not in keys:
            print('skip calibrated --map auto: a role has no device')
            return
        def write_calib(path, stages, transfers):
            """Sauvola's rows, each stage (name, source, cpu ms, gpu ms) a flat line (b = 0); nearly free staging
            and host share, free crossings."""
            algo = hashlib.sha256(b''.join(kernel_hash(src).encode() + b'\0' for _, src, _, _ in stages)).hexdigest()
            with open(path, 'w') as f:
                f.write('docbin-calibration 3\nstaging 0 1000 3 0\n')
                f.write(f'crossing {keys["gpu"]} {keys["cpu"]} cpu 0 3\ncrossing {keys["cpu"]} {keys["gpu"]} gpu 0 3\n')
                for role in ('cpu', 'gpu'):
                    f.write(f'stage {keys[role]} sauvola host {role} sliding {algo} 0 0 3 0\n')
                for stage, src, cpu_ms, gpu_ms in stages:
                    for role, ms in (('cpu', cpu_ms), ('gpu', gpu_ms)):
                        f.write(f'stage {keys[role]} sauvola {stage} {role} sliding {kernel_hash(src)} {ms} 0 3 0\n')
                for key in sorted(set(keys.values())) if transfers else ():
                    for d in ('h2d', 'd2h'):
                        f.write(f'transfer {key} {d} 0.01 10 3 0\n')
            return path

        calib = write_calib(os.path.join(tmp, 'plan.calib'),
                            (('gray', 'gray.cl', 1, 5), ('stats', 'window_stats.cl', 5, 1),
                             ('threshold', 'local_threshold.cl', 1, 5)), True)
        o = os.path.join(tmp, 'plan-cal.png')
        rc, _, err = run(['--algo', 'sauvola', '--map', 'auto', '--calib', calib, '--explain', good, '-o', o], env)
        rows = explain_rows(err, 3)
        check(rc == 0 and [m for marked, m in rows if marked] == ['cpu,gpu,cpu'] and 'note:' not in err,
              f'calibrated --map auto did not run cpu,gpu,cpu: {err}')
        check('best for latency: cpu,gpu,cpu (3.000 ms' in err, f'calibrated prediction missing: {err}')
        check(os.path.exists(o) and open(o, 'rb').read() == open(ref, 'rb').read(),
              'calibrated --map auto: output differs from --map gpu')
        print('ok   calibrated --map auto: cpu,gpu,cpu')
        # Latency and throughput disagree: gray cpu 2 / gpu 3, stats cpu 4 / gpu 4.5,
        # threshold cpu 2 / gpu 3. One image: cpu,cpu,cpu takes 2+4+2 = 8 ms, the
        # least of any map (cpu,gpu,cpu 8.5). A batch: cpu,gpu,cpu keeps the cpu
        # queue 4 ms and the gpu queue 4.5 ms per page, a period of 4.5 ms against
        # 8 for cpu,cpu,cpu and at least 6 for every other map.
        calib2 = write_calib(os.path.join(tmp, 'plan2.calib'),
                             (('gray', 'gray.cl', 2, 3), ('stats', 'window_stats.cl', 4, 4.5),
                              ('threshold', 'local_threshold.cl', 2, 3)), False)
        o = os.path.join(tmp, 'plan-lat.png')
        rc, _, err = run(['--algo', 'sauvola', '--map', 'auto', '--calib', calib2, '--explain', good, '-o', o], env)
        rows = explain_rows(err, 3)
        check(rc == 0 and [m for marked, m in rows if marked] == ['cpu,cpu,cpu'],
              f'one image, --map auto did not run cpu,cpu,cpu: {err}')
        check('best for throughput: cpu,gpu,cpu (4.500 ms' in err, f'throughput choice missing: {err}')
        out_dir = os.path.join(tmp, 'plan-batch')
        good2 = shutil.copy(good, os.path.join(tmp, 'good2.png'))
        rc, log, err = run(['--algo', 'sauvola', '--map', 'auto', '--calib', calib2, good, good2,
                            '--out-dir', out_dir, '--log-json', '-'], env)
        maps = [json.loads(line)['map'] for line in log.splitlines() if line.strip()]
        check(rc == 0 and maps == ['cpu,gpu,cpu', 'cpu,gpu,cpu'], f'a batch with --map auto ran {maps}: {err}')
        check(open(os.path.join(out_dir, 'good.png'), 'rb').read() == open(ref, 'rb').read(),
              'batch --map auto: output differs from --map gpu')
        print('ok   --map auto: cpu,cpu,cpu for one image, cpu,gpu,cpu for a batch')
        check_history(tmp, good, env, calib2, keys, ref)
        check_work(tmp, good, env, keys)
        # A broken calibration file is an error naming it, with no output.
        with open(calib, 'a') as f:
            f.write('stage nonsense\n')
        o = os.path.join(tmp, 'plan-bad.png')
        rc, _, err = run(['--algo', 'sauvola', '--map', 'auto', '--calib', calib, good, '-o', o], env)
        check(rc == 1 and 'plan.calib' in err and not os.path.exists(o), f'bad calibration file: {rc} {err}')
        print(f'ok   bad calibration file: exit {rc}')


def check_work(tmp, good, env, keys):
    """hbk's kmeans costs what its passes over the page cost: a run records its work (local_passes
    over the page's blocks) in the history, and the planner predicts the next page at the median
    of the last runs' work, on either role."""
    calib = os.path.join(tmp, 'hbk.calib')
    # The gpu's passes each pay a fixed cost too (per_unit); with a = 0 the prediction is the same.
    # Its rows are fitted on varied pages too (db_stage_work.varied).
    kmeans = kernel_hash('hbk.cl', ['passes per block', 'passes per block\0per unit', 'varied pages'])
    algo = hashlib.sha256((kmeans + '\0' + kernel_hash('hbk.cl') + '\0').encode()).hexdigest()
    with open(calib, 'w') as f:
        f.write('docbin-calibration 5\nstaging 0 1000 3 0\n')
        f.write(f'crossing {keys["gpu"]} {keys["cpu"]} cpu 0 3\ncrossing {keys["cpu"]} {keys["gpu"]} gpu 0 3\n')
        for role in ('cpu', 'gpu'):
            f.write(f'stage {keys[role]} hbk host {role} - {algo} 0 0 3 0 0\n')
            f.write(f'stage {keys[role]} hbk kmeans {role} - {kmeans} 0 1e-3 3 0 2\n')
            f.write(f'stage {keys[role]} hbk label {role} - {kernel_hash("hbk.cl")} 1 0 3 0 0\n')
    w, h = clitest.png_size(good)
    o = os.path.join(tmp, 'hbk.png')
    rc, _, err = run(['--algo', 'hbk', '--explain', '--map', 'gpu', '--calib', calib, good, '-o', o], env)
    check(rc == 0 and 'work: kmeans predicted at the calibration pages\' 2.00 passes per block' in err,
          f'hbk --explain without history: {err}')
    rc, _, err = run(['--algo', 'hbk', '--map', 'cpu,gpu', '--calib', calib, '--history', '--repeat', '4',
                      '--profile', good, '-o', o], env)
    passes = re.search(r'^local_passes: (\d+)$', err, re.M)
    rows = [l.split() for l in open(calib + '.history') if l.startswith('run ')]
    blocks = ((w + 31) // 32) * ((h + 31) // 32)  # hbk's default block, 32
    work = int(passes.group(1)) / blocks if passes else -1
    check(rc == 0 and passes and len(rows) == 6
          and all(float(r[9]) == (work if r[3] == 'kmeans' else 0) for r in rows),
          f'hbk --history: work {work}, rows {rows}: {err}')
    # Three runs on cpu tell the gpu role's prediction too: the work is the same on every device.
    rc, _, err = run(['--algo', 'hbk', '--explain', '--map', 'gpu', '--calib', calib, good, '-o', o], env)
    check(rc == 0
          and f'work: kmeans predicted at {work:.2f} passes per block, the median of the last 3 runs\' pages' in err
          and re.search(r'^\* gpu,gpu +%.3f ' % (1e-3 * w * h * work / 2), err, re.M)
          and f"kmeans predicted at this page's {work:.2f} passes per block (calibration pages 2.00)" in err,
          f'hbk --explain with history (work {work}): {err}')
    print(f'ok   hbk work: {work:.2f} passes recorded and predicted from the history')


def check_history(tmp, good, env, calib, keys, ref):
    """--history: rows of warm runs beside the calibration file, and auto corrected by them."""
    hist = calib + '.history'
    if os.path.exists(hist):
        os.remove(hist)  # the batch before recorded its warm page
    o = os.path.join(tmp, 'hist.png')
    w, h = clitest.png_size(good)

    def rows():
        return [l.split() for l in open(hist) if l.startswith('run ')] if os.path.exists(hist) else []
    # --repeat 3: runs 2 and 3 are warm, 3 stages each; the first run adds nothing.
    rc, _, err = run(['--algo', 'sauvola', '--map', 'cpu,gpu,cpu', '--calib', calib, '--history', '--repeat', '3',
                      good, '-o', o], env)
    r = rows()
    # stats takes the gray the cpu wrote and threshold the sums the gpu wrote: every stage is beside a crossing.
    # gray reads the page, which is gray: 1 channel; the others read what gray wrote: 0.
    expect = [('gray', 'cpu', 'gray.cl', '1', '1'), ('stats', 'gpu', 'window_stats.cl', '1', '0'),
              ('threshold', 'cpu', 'local_threshold.cl', '1', '0')] * 2
    check(rc == 0 and open(hist).readline() == 'docbin-history 5\n', f'--history: no history file: {err}')
    check([(x[3], x[4]) for x in r] == [(s, role) for s, role, _, _, _ in expect]
          and all(len(x) == 12 and x[1] == keys[x[4]] and x[2] == 'sauvola' and x[5] == 'sliding'
                  and x[6] == kernel_hash(src) and float(x[7]) == w * h and float(x[8]) > 0 and x[9] == '0'
                  and x[10] == crossing and x[11] == channels
                  for x, (_, _, src, crossing, channels) in zip(r, expect)),
          f'--history --repeat 3: rows {r}')
    print(f'ok   --history --repeat 3: {len(r)} rows (2 warm runs x 3 stages)')
    # One run (cold) and --no-history with --map auto add nothing.
    for args in (['--map', 'gpu', '--history'], ['--map', 'auto', '--no-history', '--repeat', '2']):
        rc, _, err = run(['--algo', 'sauvola', '--calib', calib] + args + [good, '-o', o], env)
        check(rc == 0 and len(rows()) == 6, f'{args}: history has {len(rows())} rows: {err}')
    print('ok   a single run and --no-history record nothing')
    # A batch with one page on the devices at a time: every page after the first is warm.
    # With two in flight (the default), pages share the devices: nothing is recorded.
    pages = [shutil.copy(good, os.path.join(tmp, f'hist{i}.png')) for i in range(3)]
    for extra, total in ((['--in-flight', '1'], 12), ([], 12)):
        rc, _, err = run(['--algo', 'sauvola', '--map', 'cpu,gpu,cpu', '--calib', calib, '--history'] + extra
                         + pages + ['--out-dir', os.path.join(tmp, 'hist-batch')], env)
        check(rc == 0 and len(rows()) == total, f'batch --history {extra}: {len(rows())} rows, expected {total}')
    print('ok   batch --history: 2 warm pages x 3 stages with --in-flight 1, none with 2 in flight')
    # History corrects the calibration: gray on cpu measured at 3x its calibrated 2 ms
    # (the median of the last runs) makes it 6 ms, so one image's best map is no longer
    # cpu,cpu,cpu (6+4+2 = 12) but gpu,cpu,cpu (3+4+2 = 9; gpu,gpu,cpu 9.5 is outside the 5% margin).
    # Rows of version 1 (no work, no word of a crossing) tell the work only, and rows of version 3 do not
    # say the page's channels, which gray's cost follows: neither 1000 ms row counts.
    with open(hist, 'w') as f:
        f.write('docbin-history 1\n')
        f.write(f'run {keys["cpu"]} sauvola gray cpu sliding {kernel_hash("gray.cl")} {w * h} 1000\n')
        f.write('docbin-history 3\n')
        f.write(f'run {keys["cpu"]} sauvola gray cpu sliding {kernel_hash("gray.cl")} {w * h} 1000 0 0\n')
        f.write('docbin-history 4\n')
        for ms in (5, 6, 7, 60):  # a run of another kernel version does not count
            f.write(f'run {keys["cpu"]} sauvola gray cpu sliding {kernel_hash("gray.cl")} {w * h} {ms} 0 0 1\n')
        f.write(f'run {keys["cpu"]} sauvola gray cpu sliding {"0" * 64} {w * h} 1000 0 0 1\n')
    rc, _, err = run(['--algo', 'sauvola', '--map', 'auto', '--calib', calib, '--explain', good, '-o', o], env)
    marked = [m for mk, m in explain_rows(err, 3) if mk]
    check(rc == 0 and marked == ['gpu,cpu,cpu'] and 'best for latency: gpu,cpu,cpu (9.000 ms' in err
          and 'history: gray on cpu predicted x3.25 the calibration (median of the last 4 runs)' in err,
          f'--map auto with history ran {marked}: {err}')
    check(open(o, 'rb').read() == open(ref, 'rb').read(), '--map auto with history: output differs')
    print('ok   history corrects the calibration: --map auto runs gpu,cpu,cpu')
    # A malformed history file is a warning naming it; the plan goes on without history
    # (cpu,cpu,cpu, as before any history).
    with open(hist, 'a') as f:
        f.write('run nonsense\n')
    os.remove(o)
    rc, _, err = run(['--algo', 'sauvola', '--map', 'auto', '--calib', calib, '--explain', good, '-o', o], env)
    marked = [m for mk, m in explain_rows(err, 3) if mk]
    check(rc == 0 and '.history:11:' in err and 'delete the file' in err and marked == ['cpu,cpu,cpu']
          and open(o, 'rb').read() == open(ref, 'rb').read(), f'bad history file: {rc} {marked} {err}')
    print('ok   bad history file: a warning, planned without it')
    os.remove(hist)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, 'out.png')
        good = os.path.join(tmp, 'good.png')
        w, h = 64, 48
        rows = [bytes((x * 5 + y * 3) % 256 for x in range(w)) for y in range(h)]
        with open(good, 'wb') as f:
            f.write(png_bytes(w, h, rows))

        # Good runs.
        rc, _, err = run(['--algo', 'sauvola', '--map', 'gpu,cpu,gpu', good, '-o', out])
        check(rc == 0 and os.path.exists(out), f'sauvola run failed: {err}')
        for ext in ('pbm', 'pgm', 'pnm'):
            o = os.path.join(tmp, 'out.' + ext)
            rc, _, err = run(['--algo', 'otsu', '--map', 'cpu', good, '-o', o])
            check(rc == 0 and os.path.getsize(o) > 0, f'otsu -> .{ext} failed: {err}')
        rc, _, err = run(['--algo', 'nick', '--map', 'stats=cpu', '--depth', '8', '--param', 'window=9',
                          '--param', 'k=-0.1', '--variant', 'shared', good, '-o', os.path.join(tmp, 'n.png')])
        check(rc == 0, f'named map, params and variant failed: {err}')
        trace = os.path.join(tmp, 'trace.json')
        rc, _, err = run(['--algo', 'wolf', '--map', 'cpu,gpu,cpu', '--profile', '--trace', trace, good,
                          '-o', os.path.join(tmp, 'w.png')])
        check(rc == 0 and 'threshold' in err and 'wall' in err, f'--profile table missing: {err}')
        try:
            with open(trace) as f:
                events = json.load(f)['traceEvents']
            check(any(e.get('ph') == 'X' and e['name'].startswith('stats') for e in events),
                  'trace has no stats kernel event')
        except (OSError, ValueError, KeyError) as e:
            check(False, f'trace is not valid Chrome trace JSON: {e}')
        rc, _, err = run(['--algo', 'hbk', '--map', 'gpu,cpu', '--profile', good, '-o', os.path.join(tmp, 'h.png')])
        check(rc == 0 and 'outer_iterations' in err and 'converged: 1' in err, f'hbk report missing: {err}')
        rc, _, err = run(['--algo', 'hbk', '--map', 'cpu', '--param', 'global-max=1', good,
                          '-o', os.path.join(tmp, 'h1.png')])
        check(rc == 0 and 'warning' in err and 'global-max' in err, f'hbk cap warning missing: {err}')
        rc, so, _ = run(['--list-algos'])
        check(rc == 0 and 'window' in so and 'global-shared' in so and 'histogram' in so, '--list-algos')
        rc, so, _ = run(['--list-devices'])
        check(rc == 0 and 'Platform #0' in so and 'role' in so, '--list-devices')
        rc, so, _ = run(['--help'])
        check(rc == 0 and 'Exit status' in so, '--help')
        check_planner(tmp, good)
        for f in os.listdir(tmp):
            if f != 'good.png':
                p = os.path.join(tmp, f)
                shutil.rmtree(p) if os.path.isdir(p) else os.remove(p)

        # Bad files.
        def write(name, data):
            return clitest.write(os.path.join(tmp, name), data)
        data = open(good, 'rb').read()
        bad_files = {
            'truncated PNG': write('trunc.png', data[:len(data) // 2]),
            'corrupt PNG': write('corrupt.png', data[:40] + bytes(b ^ 0x5a for b in data[40:60]) + data[60:]),
            'non-image file': write('notes.png', b'this is not an image\n' * 20),
            'empty file': write('empty.png', b''),
            '0x0 image': write('zero.pgm', b'P5\n0 0\n255\n'),
            'huge dimensions': write('huge.pgm', b'P5\n900000 900000\n255\n' + b'\0' * 100),
        }
        for name, path in bad_files.items():
            expect_failure(name, ['--algo', 'otsu', '--map', 'cpu', path, '-o', out], 1, tmp, out)
        expect_failure('missing input', ['--algo', 'otsu', '--map', 'cpu', os.path.join(tmp, 'nope.png'),
                                         '-o', out], 1, tmp, out)
        expect_failure('unwritable output', ['--algo', 'otsu', '--map', 'cpu', good, '-o',
                                             os.path.join(tmp, 'no', 'dir', 'out.png')], 1, tmp, out)

        # Bad requests.
        base = ['--map', 'cpu', good, '-o', out]
        usage = {
            'even window': ['--algo', 'sauvola', '--param', 'window=24'] + base,
            'too-small window': ['--algo', 'sauvola', '--param', 'window=1'] + base,
            'non-numeric parameter': ['--algo', 'sauvola', '--param', 'k=abc'] + base,
            'unknown algorithm': ['--algo', 'nosuch'] + base,
            'unknown parameter': ['--algo', 'sauvola', '--param', 'radius=3'] + base,
            'parameter of a method without any': ['--algo', 'otsu', '--param', 'k=3'] + base,
            'unknown variant': ['--algo', 'sauvola', '--variant', 'magic'] + base,
            'unknown stage name': ['--algo', 'sauvola', '--map', 'canny=gpu', good, '-o', out],
            'map of the wrong length': ['--algo', 'sauvola', '--map', 'gpu,cpu', good, '-o', out],
            'unknown role': ['--algo', 'sauvola', '--map', 'gpu,tpu,cpu', good, '-o', out],
            'missing output': ['--algo', 'otsu', good],
            'unknown option': ['--algo', 'otsu', '--frobnicate'] + base,
            'block size not allowed': ['--algo', 'hbk', '--param', 'block=12'] + base,
            'iteration cap of zero': ['--algo', 'hbk', '--param', 'global-max=0'] + base,
        }
        for name, args in usage.items():
            expect_failure(name, args, 2, tmp, out)
        expect_failure('role bound to no device pattern', ['--algo', 'otsu', '--map', 'gpu', '--gpu-device',
                                                           'no-such-device-anywhere', good, '-o', out], 3, tmp, out)
        # The gpu role with no GPU and no binding: only checkable on a machine without a GPU.
        rc, so, _ = run(['--list-devices'], env_drop=('DOCBIN_GPU_DEVICE',))
        if 'role gpu: unbound' in so:
            expect_failure('role bound to no device', ['--algo', 'otsu', '--map', 'cpu,gpu,cpu', good, '-o', out],
                           3, tmp, out, env_drop=('DOCBIN_GPU_DEVICE',))
        else:
            print('skip role bound to no device: this machine has a GPU')

    if failures:
        print(f'{len(failures)} failure(s)', file=sys.stderr)
        return 1
    print('cli: ok')
    return 0


if __name__ == '__main__':
    sys.exit(main())
