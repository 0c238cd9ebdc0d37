#!/usr/bin/env python3
"""What the Python package costs, and what a long-lived context saves.

1. Many pages: N runs of one A4 page in a Python loop over one docbin.Context, against the same
   N runs through the C API (api_bench, one context), so that the binding's share per page shows.
2. One page: a fresh docbin-run process per page, and a fresh Python process that imports docbin
   and binarizes one page, against one page on a warm Context: what binding the devices once saves.

Each figure is the median (min - max) in ms. Runs wherever the devices are: on a GPU machine as is,
on a machine without one with --gpu-device portable (PoCL). Needs numpy and a build with the Python
package (meson setup build; meson compile -C build).

usage: bench/python_bench.py [--build build] [--pages 50] [--size 2480x3508] [--algo sauvola]
                             [--params "window=75 k=0.2"] [--map auto] [--fresh 5]
                             [--cpu-device SPEC] [--gpu-device SPEC] [--json FILE]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def summary(ms):
    return {'median_ms': statistics.median(ms), 'min_ms': min(ms), 'max_ms': max(ms), 'n': len(ms)}


def line(name, s):
    print(f'{name:<58} {s["median_ms"]:9.2f} ({s["min_ms"]:.2f} - {s["max_ms"]:.2f}) ms, n={s["n"]}')


def read_ppm(path, np):
    """A P6 page as written by docbin-run --write-sample (no comments)."""
    data = open(path, 'rb').read()
    magic, w, h, maxval, body = data.split(maxsplit=4)
    assert magic == b'P6' and maxval == b'255', path
    return np.frombuffer(body, np.uint8, int(w) * int(h) * 3).reshape(int(h), int(w), 3)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--build', default='build', help='the meson build directory (default build)')
    ap.add_argument('--pages', type=int, default=50, help='pages of the loops (default 50)')
    ap.add_argument('--size', default='2480x3508', help='page size WxH (default A4 at 300 dpi)')
    ap.add_argument('--algo', default='sauvola')
    ap.add_argument('--params', default='window=75 k=0.2', help='NAME=VALUE words (default "window=75 k=0.2")')
    ap.add_argument('--map', default=None, help='map (default auto)')
    ap.add_argument('--fresh', type=int, default=5, help='fresh processes of each kind (default 5)')
    ap.add_argument('--cpu-device', help='as docbin-run --cpu-device')
    ap.add_argument('--gpu-device', help='as docbin-run --gpu-device (portable: PoCL)')
    ap.add_argument('--json', help='write the figures here too')
    a = ap.parse_args()

    build = os.path.abspath(a.build)
    run_tool, api_bench = os.path.join(build, 'docbin-run'), os.path.join(build, 'api_bench')
    env = dict(os.environ)
    if a.cpu_device:
        env['DOCBIN_CPU_DEVICE'] = a.cpu_device
    if a.gpu_device:
        env['DOCBIN_GPU_DEVICE'] = a.gpu_device
    os.environ.update(env)  # the Context below binds as the subprocesses do
    sys.path.insert(0, os.path.join(build, 'python'))
    import numpy as np
    import docbin

    params = dict(p.split('=', 1) for p in a.params.split())
    results = {'algo': a.algo, 'params': a.params, 'size': a.size, 'pages': a.pages}
    with tempfile.TemporaryDirectory() as tmp:
        ppm, npy = os.path.join(tmp, 'page.ppm'), os.path.join(tmp, 'page.npy')
        subprocess.run([run_tool, '--write-sample', ppm, '--sample-size', a.size], check=True, env=env)
        page = read_ppm(ppm, np)
        np.save(npy, page)

        # 1. Many pages: a Python loop over one Context, and the C API.
        t0 = time.perf_counter()
        ctx = docbin.Context()
        open_ms = (time.perf_counter() - t0) * 1e3
        devices = [f'{d["name"]} ({d["platform"]}): {",".join(d["roles"])}' for d in ctx.devices() if d['roles']]
        _, times = ctx.binarize(page, a.algo, map=a.map, times=True, **params)  # warm-up: kernels built or cached
        out = np.empty(page.shape[:2], np.uint8)
        loop = []
        for _ in range(a.pages):
            t = time.perf_counter()
            ctx.binarize(page, a.algo, map=a.map, out=out, **params)
            loop.append((time.perf_counter() - t) * 1e3)
        c = subprocess.run([api_bench, ppm, str(a.pages), a.algo, a.params] + ([a.map] if a.map else []),
                           check=True, capture_output=True, text=True, env=env)
        capi = json.loads(c.stdout)
        results.update(devices=devices, map=times['map'], chosen_by=times['chosen_by'],
                       python_open_ms=open_ms, python_loop=summary(loop), c_open_ms=capi['open_ms'],
                       c_loop=summary(capi['runs_ms']))

        # 2. One page: fresh processes against the warm Context.
        out_path = os.path.join(tmp, 'out.pbm')
        args = [run_tool, '--algo', a.algo, ppm, '-o', out_path] + sum((['--param', p] for p in a.params.split()), [])
        args += ['--map', a.map] if a.map else []
        fresh_cli, fresh_py, warm = [], [], []
        script = ('import sys, numpy as np; sys.path.insert(0, sys.argv[1]); import docbin; '
                  'docbin.binarize(np.load(sys.argv[2]), sys.argv[3], map=sys.argv[4] or None, '
                  '**dict(p.split("=", 1) for p in sys.argv[5].split()))')
        for _ in range(a.fresh):
            t = time.perf_counter()
            subprocess.run(args, check=True, env=env)
            fresh_cli.append((time.perf_counter() - t) * 1e3)
            t = time.perf_counter()
            subprocess.run([sys.executable, '-c', script, os.path.join(build, 'python'), npy, a.algo, a.map or '',
                            a.params], check=True, env=env)
            fresh_py.append((time.perf_counter() - t) * 1e3)
            t = time.perf_counter()
            ctx.binarize(page, a.algo, map=a.map, **params)
            warm.append((time.perf_counter() - t) * 1e3)
        results.update(fresh_docbin_run=summary(fresh_cli), fresh_python=summary(fresh_py), warm_context=summary(warm))
        ctx.close()

    print(f'{a.algo} "{a.params}" on a {a.size} RGB page, map {results["map"]} ({results["chosen_by"]})')
    for d in devices:
        print(f'  {d}')
    print(f'{"opening a context: Python":<58} {results["python_open_ms"]:9.2f} ms; C {results["c_open_ms"]:.2f} ms')
    line(f'{a.pages} pages, Python loop over one Context', results['python_loop'])
    line(f'{a.pages} pages, C API (db_method_run) over one context', results['c_loop'])
    line('one page, a fresh docbin-run process (read, run, write)', results['fresh_docbin_run'])
    line('one page, a fresh Python process (import, run)', results['fresh_python'])
    line('one page, a warm Context', results['warm_context'])
    if a.json:
        with open(a.json, 'w') as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == '__main__':
    sys.exit(main())
