#!/usr/bin/env python3
"""Careless and hostile paths and arguments through docbin-run: nothing the user names can destroy an
input, every file to write is checked before any work, every write is checked, no integer wraps,
and file names cannot garble an error line or collide in the JSON log.

Every refusal must be one "docbin-run:" line with the documented exit status, leave no output, and
leave every input byte for byte as it was. usage: test_paths.py PATH/TO/docbin-run
"""
import fcntl
import json
import os
import subprocess
import sys
import tempfile
import time

import clitest
from clitest import check, failures, png_bytes

DOCBIN = sys.argv[1]


def run(args, env_extra=None, timeout=120):
    env = dict(os.environ)
    env.update(env_extra or {})
    p = subprocess.run([DOCBIN] + args, capture_output=True, env=env, timeout=timeout)
    return p.returncode, p.stdout.decode(errors='replace'), p.stderr.decode(errors='replace')


def page(path, seed=1):
    w, h = 40, 30
    rows = [bytes((x * 7 + y * 3 + seed * 11) % 256 for x in range(w)) for y in range(h)]
    return clitest.write(path, png_bytes(w, h, rows))


def refused(name, args, code, keep, gone=(), needle=None, env=None):
    """Runs args, expecting exit `code`, one error line, the files `keep` unchanged and `gone` absent."""
    before = {p: open(p, 'rb').read() for p in keep}
    t0 = time.monotonic()
    rc, _, err = run(args, env)
    lines = [l for l in err.splitlines() if l.strip()]
    check(rc == code, f'{name}: exit {rc}, expected {code}: {err!r}')
    check(len(lines) == 1 and lines[0].startswith('docbin-run:'), f'{name}: not one error line: {err!r}')
    if needle:
        check(needle in err, f'{name}: the message does not name {needle!r}: {err!r}')
    for p, data in before.items():
        check(os.path.exists(p) and open(p, 'rb').read() == data, f'{name}: {p} was changed')
    for p in gone:
        check(not os.path.exists(p), f'{name}: {p} was written')
    print(f'ok   {name}: exit {rc} in {time.monotonic() - t0:.2f} s: {lines[0] if lines else ""}')


def main():
    with tempfile.TemporaryDirectory() as tmp:
        a, b = page(os.path.join(tmp, 'a.png')), page(os.path.join(tmp, 'b.png'), 2)
        out = os.path.join(tmp, 'out')
        base = ['--algo', 'otsu', '--map', 'cpu']
        # Logs and traces that would overwrite an input or an output, and a single output over its input.
        refused('--log-json naming an input', base + ['--out-dir', out, '--log-json', a, a, b], 2, [a, b], [out], a)
        os.makedirs(out)
        refused('--log-json naming an output', base + ['--out-dir', out, '--log-json', os.path.join(out, 'b.png'),
                                                       a, b], 2, [a, b], [os.path.join(out, 'a.png')], 'b.png')
        os.rmdir(out)
        refused('--trace naming the input', base + ['--trace', a, a, '-o', os.path.join(tmp, 'o.png')], 2, [a],
                [os.path.join(tmp, 'o.png')], a)
        refused('-o naming the input', base + [a, '-o', a], 2, [a], [], a)
        link = os.path.join(tmp, 'link.png')
        os.symlink(a, link)
        refused('-o naming the input through a link', base + [a, '-o', link], 2, [a], [], link)
        # Files that cannot be written are refused before any work, not after it.
        refused('-o into a missing directory', ['--algo', 'dbs', '--sample', '--sample-size', '2000x2000', '-o',
                                                os.path.join(tmp, 'no', 'such', 'o.png')], 1, [], [], 'does not exist')
        refused('--trace into a missing directory', base + ['--trace', os.path.join(tmp, 'no', 't.json'), a, '-o',
                                                            os.path.join(tmp, 'o.png')], 1, [a],
                [os.path.join(tmp, 'o.png')], 't.json')
        refused('--log-json into a missing directory', base + ['--out-dir', out, '--log-json',
                                                               os.path.join(tmp, 'no', 'l.jsonl'), a], 1, [a], [out])
        # A log that cannot be written is a failure, not an empty log and exit 0.
        if os.path.exists('/dev/full'):
            rc, _, err = run(base + ['--out-dir', out, '--log-json', '/dev/full', a, b])
            check(rc == 1 and '/dev/full' in err and len(os.listdir(out)) == 2,
                  f'--log-json /dev/full: exit {rc}, outputs {os.listdir(out) if os.path.exists(out) else None}: {err!r}')
            print(f'ok   --log-json /dev/full: exit {rc}: {err.strip()}')
        # Integers that would wrap.
        refused('--shard past 2^32', base + ['--out-dir', out, '--shard', '4294967297/4294967298', a], 2, [a], [],
                '--shard')
        refused('--sample-size past 2^32', base + ['--sample', '--sample-size', '99999999999x1', '-o',
                                                   os.path.join(tmp, 'o.png')], 2, [], [], '--sample-size')
        refused('--in-flight past 2^32', base + ['--out-dir', out, '--in-flight', '4294967297', a], 2, [a], [],
                '--in-flight')
        refused('a device index past 2^32', ['--algo', 'otsu', '--map', 'gpu', a, '-o', os.path.join(tmp, 'o.png')],
                3, [a], [os.path.join(tmp, 'o.png')], '4294967296:0', {'DOCBIN_GPU_DEVICE': '4294967296:0'})
        # Stale temporary files of a killed run (unheld, unwritten for ten minutes) are removed by the
        # next run into that directory; a temporary file a live writer holds, one written a moment ago
        # (by a writer on another node, where locks are node-local) and other hidden files are not.
        os.makedirs(out, exist_ok=True)
        stale = clitest.write(os.path.join(out, '.a.png.Ab12Cd'), b'half a page')
        other = clitest.write(os.path.join(out, '.notes.Ab12Cd'), b'mine')
        held = clitest.write(os.path.join(out, '.b.png.Zz99Yy'), b'being written')
        fresh = clitest.write(os.path.join(out, '.c.png.Qq11Rr'), b'being written elsewhere')
        old = time.time() - 601
        for path in (stale, other, held):
            os.utime(path, (old, old))
        with open(held, 'rb') as h:
            fcntl.flock(h, fcntl.LOCK_EX)  # as a run writing it holds it
            rc, _, err = run(base + ['--out-dir', out, a])
        check(rc == 0 and not os.path.exists(stale) and os.path.exists(other) and os.path.exists(held)
              and os.path.exists(fresh),
              f'stale temporaries: exit {rc}, stale {os.path.exists(stale)}, other {os.path.exists(other)}, '
              f'held {os.path.exists(held)}, fresh {os.path.exists(fresh)}: {err}')
        print('ok   a stale temporary file removed; a held one, a fresh one and a hidden file of another name kept')
        # Control characters in a file name are escaped in error lines; a name that is not UTF-8 keeps
        # its bytes in the JSON log (surrogateescape) and cannot collide with another.
        evil = os.path.join(tmp, 'evil\x1b[2J\rname.png')
        clitest.write(evil, b'not an image')
        rc, _, err = run(base + [evil, '-o', os.path.join(tmp, 'o.png')])
        check(rc == 1 and '\x1b' not in err and '\r' not in err and '\\x1b' in err, f'control bytes: {err!r}')
        print(f'ok   control bytes in a name are escaped: {err.strip()}')
        d = os.path.join(tmp, 'raw').encode()
        os.makedirs(d)
        names = [b'p\xe9.png', b'p\xe8.png']
        for i, n in enumerate(names):
            page(os.path.join(d, n).decode(errors='surrogateescape'), i)
        log = os.path.join(tmp, 'raw.jsonl')
        rc, _, err = run(base + ['--out-dir', os.path.join(tmp, 'raw-out'), '--log-json', log,
                                 d.decode(errors='surrogateescape')])
        inputs = sorted(os.fsencode(json.loads(l)['input']) for l in open(log)) if os.path.exists(log) else []
        check(rc == 0 and inputs == sorted(os.path.join(d, n) for n in names), f'non-UTF-8 names in the log: {inputs}')
        print('ok   non-UTF-8 names round-trip through the JSON log')

    if failures:
        print(f'{len(failures)} failure(s)', file=sys.stderr)
        return 1
    print('paths: ok')
    return 0


if __name__ == '__main__':
    sys.exit(main())
