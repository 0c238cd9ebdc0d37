#!/usr/bin/env python3
"""docbin as a product: `meson install --destdir` into a temporary root, then a small C program
(install_consumer.c) built against that tree with pkg-config's flags alone (no -I into the sources),
linked once to the shared and once to the static library, must give the same image as the installed
docbin-run. Also checks what is installed: the header, libdocbin.so.0 (soname) and libdocbin.a,
docbin.pc with the private dependencies kept private, the tools without docbin-synth, the man pages.

The README's C example is built and run the same way.

usage: test_install.py MESON BUILD_ROOT PREFIX LIBDIR INCLUDEDIR BINDIR MANDIR CONSUMER.c README.md CC...
"""
import os
import random
import shutil
import subprocess
import sys
import tempfile

import clitest
from clitest import check, failures

MESON, BUILD, PREFIX, LIBDIR, INCLUDEDIR, BINDIR, MANDIR, CONSUMER, README = sys.argv[1:10]
CC = sys.argv[10:]


def under(root, path):
    """`path` (absolute, or relative to the prefix) inside the destdir `root`."""
    return os.path.join(root, os.path.join(PREFIX, path).lstrip('/'))


def run(args, env=None, **kw):
    p = subprocess.run(args, capture_output=True, text=True, env=env, timeout=600, **kw)
    if p.returncode != 0:
        print(f'$ {" ".join(args)}\n{p.stdout}{p.stderr}', file=sys.stderr)
    return p


def pgm(path):
    """(width, height, pixels) of a binary PGM (P5, maxval 255), read here rather than by docbin."""
    data = open(path, 'rb').read()
    fields, pos = [], 0
    while len(fields) < 4:
        while data[pos:pos + 1].isspace():
            pos += 1
        if data[pos:pos + 1] == b'#':
            pos = data.index(b'\n', pos)
            continue
        end = pos
        while not data[end:end + 1].isspace():
            end += 1
        fields.append(data[pos:end])
        pos = end
    assert fields[0] == b'P5' and fields[3] == b'255', path
    w, h = int(fields[1]), int(fields[2])
    return w, h, data[pos + 1:pos + 1 + w * h]


def readme_example():
    """The C block of the README's section on the C library."""
    text = open(README).read()
    section = text[text.index('## The C library'):]
    return section[section.index('```c\n') + 5:section.index('\n```', section.index('```c\n'))] + '\n'


def page(path, w=173, h=121):
    """An RGB page of dark strokes on an uneven, tinted background: something for every method."""
    rnd = random.Random(7)
    rows = []
    for y in range(h):
        row = bytearray()
        for x in range(w):
            paper = 200 + (x * 40) // w - (y * 30) // h
            ink = (y % 17 < 3 and (x // 9) % 3 != 0) or (x % 23 < 2 and y % 40 < 30)
            v = max(0, min(255, (60 if ink else paper) + rnd.randint(-20, 20)))
            row += bytes((v, max(0, v - 15), max(0, v - 40)))
        rows.append(bytes(row))
    return clitest.write(path, clitest.png_bytes(w, h, rows, color_type=2))


def main():
    for tool in ('pkg-config',):
        if not shutil.which(tool):
            print(f'SKIP: {tool} not found (Debian: pkgconf)')
            return 77
    with tempfile.TemporaryDirectory() as root:
        p = run([MESON, 'install', '-C', BUILD, '--no-rebuild', '--destdir', root])
        check(p.returncode == 0, 'meson install --destdir failed')
        if p.returncode:
            return 1
        libdir, bindir = under(root, LIBDIR), under(root, BINDIR)
        # What is installed.
        for rel in ('libdocbin.so.0', 'libdocbin.so', 'libdocbin.a', 'pkgconfig/docbin.pc'):
            check(os.path.exists(os.path.join(libdir, rel)), f'{rel} is not installed in {LIBDIR}')
        check(os.path.exists(os.path.join(under(root, INCLUDEDIR), 'docbin.h')), 'docbin.h is not installed')
        check(sorted(os.listdir(under(root, INCLUDEDIR))) == ['docbin.h'], 'more than docbin.h in the include dir')
        for tool in ('docbin-run', 'docbin-eval', 'docbin-bench'):
            check(os.access(os.path.join(bindir, tool), os.X_OK), f'{tool} is not installed')
        check(not os.path.exists(os.path.join(bindir, 'docbin-synth')), 'docbin-synth, a bench tool, is installed')
        for man in ('man1/docbin-run.1', 'man1/docbin-eval.1', 'man1/docbin-bench.1', 'man3/docbin.3'):
            check(os.path.exists(os.path.join(under(root, MANDIR), man)), f'man page {man} is not installed')
        if shutil.which('objdump'):
            dyn = run(['objdump', '-p', os.path.join(libdir, 'libdocbin.so')]).stdout
            check('SONAME               libdocbin.so.0' in dyn, f'the soname is not libdocbin.so.0: {dyn!r}')
        pc = open(os.path.join(libdir, 'pkgconfig', 'docbin.pc')).read()
        check('Requires.private:' in pc and 'OpenCL' in pc.split('Requires.private:')[1].split('\n')[0],
              f'OpenCL is not a private requirement of docbin.pc:\n{pc}')
        check('Libs.private:' in pc, f'docbin.pc has no Libs.private:\n{pc}')

        # pkg-config from the installed tree: the destdir is the sysroot of its paths.
        env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(libdir, 'pkgconfig'), PKG_CONFIG_SYSROOT_DIR=root)
        cflags = run(['pkg-config', '--cflags', 'docbin'], env).stdout.split()
        libs = run(['pkg-config', '--libs', 'docbin'], env).stdout.split()
        static = run(['pkg-config', '--static', '--libs', 'docbin'], env).stdout.split()
        src = os.path.dirname(os.path.abspath(CONSUMER))
        check(not any(src in f or os.path.dirname(src) in f for f in cflags + libs),
              f'pkg-config points into the sources: {cflags + libs}')
        check('-ldocbin' in libs and not any(f in libs for f in ('-lOpenCL', '-lpng16', '-lpng')),
              f'pkg-config --libs leaks private libraries: {libs}')
        work = os.path.join(root, 'work')
        os.makedirs(work)
        shutil.copy(CONSUMER, work)
        consumer = os.path.join(work, os.path.basename(CONSUMER))
        shared_exe, static_exe = os.path.join(work, 'shared'), os.path.join(work, 'static')
        p = run(CC + [consumer, '-o', shared_exe] + cflags + libs, cwd=work)
        check(p.returncode == 0, 'the consumer does not build against the installed shared library')
        static_libs = [f for f in static if f != '-ldocbin']
        p = run(CC + [consumer, '-o', static_exe] + cflags + [os.path.join(libdir, 'libdocbin.a')] + static_libs,
                cwd=work)
        check(p.returncode == 0, 'the consumer does not build against the installed static library')
        if failures:
            return 1

        # The same image as docbin-run, through both builds.
        img = page(os.path.join(work, 'page.png'))
        run_env = dict(os.environ, LD_LIBRARY_PATH=libdir)
        cases = [(shared_exe, 'sauvola', 'window=31 k=0.3', None), (shared_exe, 'howe', 'c=100', 'cpu'),
                 (static_exe, 'otsu', 'gray=qt', 'gpu'), (static_exe, 'nick', 'window=15 k=-0.15', 'gpu,cpu,gpu')]
        for exe, algo, settings, map_ in cases:
            name = f'{os.path.basename(exe)} {algo} "{settings}" map {map_ or "auto"}'
            mine, ref = os.path.join(work, 'mine.pgm'), os.path.join(work, 'ref.pgm')
            p = run([exe, img, mine, algo, settings] + ([map_] if map_ else []), run_env)
            check(p.returncode == 0, f'{name}: the consumer failed: {p.stderr.strip()}')
            args = [os.path.join(bindir, 'docbin-run'), '--algo', algo, img, '-o', ref]
            for s in settings.split():
                key, value = s.split('=')
                args += ['--gray', value] if key == 'gray' else ['--param', s]
            p = run(args + (['--map', map_] if map_ else []), run_env)
            check(p.returncode == 0, f'{name}: the installed docbin-run failed: {p.stderr.strip()}')
            if failures:
                continue
            w, h, a = pgm(mine)
            _, _, b = pgm(ref)
            diff = sum(x != y for x, y in zip(a, b))
            check((w, h) == (173, 121) and len(a) == len(b) == w * h and diff == 0,
                  f'{name}: {diff} pixels differ from docbin-run')
            print(f'ok   {name}: {w}x{h}, {diff} pixels differ from docbin-run')
        # With no GPU bound, the default map (auto) runs on the CPU; an explicit gpu map is refused.
        no_gpu = dict(run_env, DOCBIN_GPU_DEVICE='')
        if 'role gpu: unbound' in run([os.path.join(bindir, 'docbin-run'), '--list-devices'], no_gpu).stdout:
            auto, ref, gpu = (os.path.join(work, f) for f in ('auto.pgm', 'cpu.pgm', 'gpu.pgm'))
            p = run([shared_exe, img, auto, 'sauvola', ''], no_gpu)
            check(p.returncode == 0, f'no GPU: the default map failed: {p.stderr.strip()}')
            run([os.path.join(bindir, 'docbin-run'), '--algo', 'sauvola', '--map', 'cpu', img, '-o', ref], no_gpu)
            check(p.returncode == 0 and pgm(auto) == pgm(ref), 'no GPU: the default map differs from map cpu')
            p = run([shared_exe, img, gpu, 'sauvola', '', 'gpu'], no_gpu)
            check(p.returncode == 1 and 'DOCBIN_GPU_DEVICE' in p.stderr and not os.path.exists(gpu),
                  f'no GPU: map gpu was not refused with the fix: {p.stderr!r}')
            print('ok   no GPU bound: auto runs on cpu, map gpu is refused')
        else:
            print('the gpu role is bound by default here: the no-GPU checks need a machine without a GPU')
        # The README's example, as a reader would build it.
        example = clitest.write(os.path.join(work, 'binarize.c'), readme_example().encode())
        exe = os.path.join(work, 'binarize')
        p = run(CC + [example, '-o', exe] + cflags + libs, cwd=work)
        check(p.returncode == 0, "the README's example does not build")
        if p.returncode == 0:
            mine, ref = os.path.join(work, 'readme.png'), os.path.join(work, 'readme-ref.png')
            p = run([exe, img, mine], run_env)
            check(p.returncode == 0, f"the README's example failed: {p.stderr.strip()}")
            run([os.path.join(bindir, 'docbin-run'), '--algo', 'sauvola', '--param', 'window=75', '--param', 'k=0.2',
                 img, '-o', ref], run_env)
            same = p.returncode == 0 and clitest.png_decode(open(mine, 'rb').read()) == clitest.png_decode(
                open(ref, 'rb').read())
            check(same, "the README's example does not give docbin-run's image")
            p = run([exe], run_env)
            check(p.returncode == 2 and 'usage' in p.stderr, "the README's example without arguments")
            print(f"ok   the README's example: {'the same image as docbin-run' if same else 'FAILED'}")
        # A program linked to the static library runs without the shared one.
        env_none = {k: v for k, v in os.environ.items() if k != 'LD_LIBRARY_PATH'}
        p = run([static_exe, img, os.path.join(work, 'none.pgm'), 'otsu', ''], env_none)
        check(p.returncode == 0, 'the statically linked consumer needs the shared library')
        p = run([shared_exe, img, os.path.join(work, 'bad.pgm'), 'sauvola', 'window=4'], run_env)
        check(p.returncode == 1 and 'odd' in p.stderr, f'a bad parameter is not refused by name: {p.stderr!r}')
    if failures:
        print(f'{len(failures)} failure(s)', file=sys.stderr)
        return 1
    print('install: ok')
    return 0


if __name__ == '__main__':
    sys.exit(main())
