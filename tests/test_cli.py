#!/usr/bin/env python3
"""docbin-run end to end: good runs, and bad input that must fail cleanly.

Every failure must exit non-zero with the documented code, print exactly one
line on stderr starting with "docbin-run:", and leave no output file (nor a
temporary one) behind. usage: test_cli.py PATH/TO/docbin-run
"""
import filecmp
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


def explain_maps(err):
    """The (marked, map) rows of --explain's table of measured maps."""
    rows = []
    for line in err.splitlines():
        m = re.match(r'^([* ]) ((?:cpu|gpu)(?:,(?:cpu|gpu))*) +[0-9.]+ ', line)
        if m:
            rows.append((m.group(1) == '*', m.group(2)))
    return rows


def check_planner(tmp, good):
    """The planner through the CLI: auto without a GPU, measure, wisdom, a broken wisdom file."""
    o = os.path.join(tmp, 'plan.png')
    ref = os.path.join(tmp, 'plan-ref.png')
    rc, _, err = run(['--algo', 'sauvola', '--map', 'cpu', good, '-o', ref])
    check(rc == 0, f'reference run failed: {err}')
    # No GPU bound: auto (the default) runs on cpu with a note; an explicit gpu fails, naming the fix.
    rc, _, err = run(['--algo', 'sauvola', '--gpu-device', 'no-such-device-anywhere', good, '-o', o])
    check(rc == 3, f'an explicit --gpu-device that matches nothing must fail: {rc} {err}')
    rc, so, _ = run(['--list-devices'], env_drop=('DOCBIN_GPU_DEVICE',))
    if 'role gpu: unbound' in so:
        rc, _, err = run(['--algo', 'sauvola', good, '-o', o], env_drop=('DOCBIN_GPU_DEVICE',))
        notes = [l for l in err.splitlines() if l.startswith('docbin-run: note:')]
        check(rc == 0 and len(notes) == 1 and 'every stage runs on cpu' in notes[0] and filecmp.cmp(o, ref, False),
              f'no GPU: auto must run on cpu with one note: {rc} {err}')
        os.remove(o)
        expect_failure('--map gpu without a GPU', ['--algo', 'sauvola', '--map', 'gpu', good, '-o', o], 3, tmp, o,
                       env_drop=('DOCBIN_GPU_DEVICE',))
        print('ok   no GPU: auto runs on cpu with a note, --map gpu exits 3')
    else:
        print('skip no-GPU checks: this machine has a GPU')
    # measure: every map timed, the fastest marked and remembered; auto then takes it from the wisdom file.
    wisdom = os.path.join(tmp, 'wisdom')
    env = {'DOCBIN_WISDOM': wisdom}
    rc, _, err = run(['--algo', 'sauvola', '--map', 'measure', '--measure-runs', '1', '--explain', good, '-o', o],
                     env)
    rows = explain_maps(err)
    every = [','.join(('gpu' if i >> (2 - s) & 1 else 'cpu') for s in range(3)) for i in range(8)]
    marked = [m for is_marked, m in rows if is_marked]
    check(rc == 0 and [m for _, m in rows] == every and len(marked) == 1, f'--map measure table: {rows}: {err}')
    check(filecmp.cmp(o, ref, False), '--map measure: output differs from --map cpu')
    lines = open(wisdom).read().splitlines() if os.path.exists(wisdom) else []
    check(len(lines) == 3 and lines[0] == 'docbin-wisdom 1' and lines[2].split()[8:9] == marked[:1],
          f'wisdom file after measure: {lines}')
    rc, _, err = run(['--algo', 'sauvola', '--explain', good, '-o', o], env)
    check(rc == 0 and f'plan for sauvola: {marked[0] if marked else "?"} (wisdom)' in err,
          f'auto did not take the measured map from the wisdom file: {err}')
    print(f'ok   --map measure picked {marked}, auto took it from the wisdom file')
    # A batch with measure: the first page measured, its output kept; the log names the map of every page.
    good2 = os.path.join(tmp, 'good2.png')
    shutil.copy(good, good2)
    log = os.path.join(tmp, 'plan.jsonl')
    rc, _, err = run(['--algo', 'sauvola', '--map', 'measure', '--measure-runs', '1', '--out-dir',
                      os.path.join(tmp, 'plan-out'), '--log-json', log, good, good2], {'DOCBIN_WISDOM': wisdom + '2'})
    maps = [json.loads(l)['map'] for l in open(log)] if os.path.exists(log) else []
    check(rc == 0 and len(maps) == 2 and all(maps) and
          all(filecmp.cmp(os.path.join(tmp, 'plan-out', n), ref, False) for n in ('good.png', 'good2.png')),
          f'batch with --map measure: {rc} {maps} {err}')
    print(f'ok   batch --map measure: maps {maps}')
    # A broken wisdom file is an error naming it and the line, with no output.
    with open(wisdom, 'a') as f:
        f.write('sauvola sliding window=75 garbage\n')
    os.remove(o)
    expect_failure('malformed wisdom file', ['--algo', 'sauvola', good, '-o', o], 1, tmp, o, env)


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
