#!/usr/bin/env python3
"""Every kernel under Oclgrind: no out-of-bounds access, no data race, no API misuse.

Oclgrind is an OpenCL device simulator; run as `oclgrind PROGRAM` it is the only
device the program sees, so both roles bind to it. Each algorithm, variant and
uniform map runs on a small image; any diagnostic on stderr fails the test, and
the image must equal the one PoCL produced (a third device for the determinism
contract). Howe's graph cut runs on the gpu role with both push-relabel kernel
choices (DOCBIN_PUSHRELABEL) without --data-races: its kernels race between
work-groups on purpose (heights read while a neighbour writes them, see
cl/pushrelabel.cl), so only bounds and API misuse are checked there, and the
image must equal the cpu role's Boykov-Kolmogorov cut; so do howe-auto's
push-relabel chains. The Group 4 coding kernels run through test_g4, whose
gpu role is then the simulator: every stream must be the host encoder's.
Skips when oclgrind is not installed. The simulator is slow (Howe's tuning chains
take minutes), so the work is in three parts, each a test of its own: meson runs
them side by side and times each apart.
usage: test_oclgrind.py kernels|howe|howe-auto PATH/TO/docbin-run PATH/TO/test_g4
"""
import os
import shutil
import subprocess
import sys
import tempfile

from clitest import png_bytes, write

PART, DOCBIN, TEST_G4 = sys.argv[1:4]


def write_png(path, w, h):
    rows = [bytes(((x * 7 + y * 13) % 200 + 20) if (x // 4 + y // 3) % 5 else 30 for x in range(w))
            for y in range(h)]
    write(path, png_bytes(w, h, rows))


def simulate(args, out, ref, label, reference, env, timeout=900):
    """Runs oclgrind with `args`, which write `out`: no diagnostic, and `out` equals `ref` (made by
    `reference`). Prints one line; returns 1 on failure."""
    p = subprocess.run(args, capture_output=True, text=True, env=env, timeout=timeout)
    ok = p.returncode == 0 and not p.stderr.strip()
    same = ok and open(out, 'rb').read() == open(ref, 'rb').read()
    print(f'{"ok  " if ok and same else "FAIL"} {label}'
          + ('' if ok else f': exit {p.returncode}\n{p.stderr[:2000]}')
          + ('' if same or not ok else f': image differs from {reference}'))
    return int(not (ok and same))


def kernels(oclgrind, tmp, src, env):
    """Every binarization kernel with both roles on the simulator, then the Group 4 coding kernels."""
    failures = 0
    cases = [('otsu', None)] + [(a, v) for a in ('niblack', 'sauvola', 'nick', 'wolf')
                                for v in ('sliding', 'global', 'global-shared', 'shared')] + [('dbs', None),
                                                                                              ('hbk', None)]
    for algo, variant in cases:
        extra = ['--variant', variant, '--param', 'window=7'] if variant else []
        if algo == 'dbs':  # blocks of 20 so that the 37x29 image has both parities of both groups
            extra = ['--param', 'block=20']
        if algo == 'hbk':  # blocks of 8: partial blocks on both edges of the 37x29 image
            extra = ['--param', 'block=8']
        ref = os.path.join(tmp, 'ref.pgm')
        mixed = 'cpu,gpu' if algo == 'hbk' else 'cpu,gpu,cpu'
        p = subprocess.run([DOCBIN, '--algo', algo, '--map', mixed, '--depth', '8', *extra, src,
                            '-o', ref], capture_output=True, text=True)
        if p.returncode != 0:
            print(f'FAIL {algo} {variant}: reference run failed: {p.stderr.strip()}')
            failures += 1
            continue
        for role in ('cpu', 'gpu'):
            out = os.path.join(tmp, f'{algo}-{role}.pgm')
            failures += simulate([oclgrind, '--data-races', '--check-api', DOCBIN, '--algo', algo, '--map', role,
                                  '--depth', '8', *extra, src, '-o', out], out, ref,
                                 f'{algo} {variant or "-"} map {role}', 'PoCL', env, timeout=600)
    # Group 4 coding on the device: the stream of every page test_g4 makes.
    p = subprocess.run([oclgrind, '--data-races', '--check-api', TEST_G4], capture_output=True, text=True,
                       timeout=900, env=dict(env, DOCBIN_GPU_DEVICE='oclgrind', DOCBIN_CPU_DEVICE='oclgrind'))
    ok = p.returncode == 0 and not p.stderr.strip() and 'coded on Oclgrind' in p.stdout
    print(f'{"ok  " if ok else "FAIL"} g4 coding (test_g4)'
          + ('' if ok else f': exit {p.returncode}\n{p.stdout[-1000:]}{p.stderr[:2000]}'))
    failures += not ok
    return failures


def howe(oclgrind, tmp, src, env):
    """Howe's cut with both push-relabel kernel choices."""
    failures = 0
    # Howe's cut on a page of 3 x 2 push tiles (32 x 32 nodes), so flow crosses tile borders both ways.
    howe_src = os.path.join(tmp, 'howe.png')
    write_png(howe_src, 70, 45)
    ref = os.path.join(tmp, 'howe-ref.pgm')
    p = subprocess.run([DOCBIN, '--algo', 'howe', '--map', 'cpu', '--depth', '8', howe_src, '-o', ref],
                       capture_output=True, text=True)
    if p.returncode != 0:
        print(f'FAIL howe: reference run failed: {p.stderr.strip()}')
        failures += 1
    for kernels in ('global', 'tiles') if p.returncode == 0 else ():
        out = os.path.join(tmp, f'howe-{kernels}.pgm')
        failures += simulate([oclgrind, '--check-api', DOCBIN, '--algo', 'howe', '--map', 'gpu', '--depth', '8',
                              howe_src, '-o', out], out, ref, f'howe {kernels} map gpu', 'the cpu cut',
                             dict(env, DOCBIN_PUSHRELABEL=kernels))
    return failures


def howe_auto(oclgrind, tmp, src, env):
    """Howe's tuning and prediction."""
    failures = 0
    # Howe's tuning and prediction: every kernel but the push-relabel ones under
    # --data-races (the chains and the cut on the cpu role, host code), then
    # howe-auto's push-relabel chains (one chain, search=c) with both kernel choices.
    tuned = [('howe-auto', 'gpu,gpu,cpu,cpu,cpu,gpu', [], ['--data-races'], {}),
             ('howe-predict', 'gpu,gpu,gpu,gpu,gpu,cpu', [], ['--data-races'], {})]
    tuned += [('howe-auto', 'gpu', ['--param', 'search=c'], [], {'DOCBIN_PUSHRELABEL': k})
              for k in ('global', 'tiles')]
    for algo, m, extra, checks, more_env in tuned:
        ref = os.path.join(tmp, f'{algo}-ref.pgm')
        p = subprocess.run([DOCBIN, '--algo', algo, '--map', 'cpu', '--depth', '8', *extra, src, '-o', ref],
                           capture_output=True, text=True)
        if p.returncode != 0:
            print(f'FAIL {algo}: reference run failed: {p.stderr.strip()}')
            failures += 1
            continue
        out = os.path.join(tmp, f'{algo}-out.pgm')
        failures += simulate([oclgrind, *checks, '--check-api', DOCBIN, '--algo', algo, '--map', m, '--depth', '8',
                              *extra, src, '-o', out], out, ref,
                             f'{algo} {" ".join(extra) or "-"} map {m} {more_env.get("DOCBIN_PUSHRELABEL", "")}',
                             'the all-cpu map on PoCL', dict(env, **more_env), timeout=1500)
    return failures


PARTS = {'kernels': kernels, 'howe': howe, 'howe-auto': howe_auto}


def main():
    oclgrind = shutil.which('oclgrind')
    if not oclgrind:
        print('SKIP: oclgrind is not installed (Debian: apt-get install oclgrind)')
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, 'in.png')
        write_png(src, 37, 29)
        env = dict(os.environ, DOCBIN_CACHE_DIR='off')
        env.pop('DOCBIN_GPU_DEVICE', None)
        env.pop('DOCBIN_CPU_DEVICE', None)
        failures = PARTS[PART](oclgrind, tmp, src, env)
    print(f'oclgrind {PART}: ok' if not failures else f'{failures} failure(s)')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
