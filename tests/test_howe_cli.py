#!/usr/bin/env python3
"""howe-auto and howe-predict through the tools: what --profile reports, bad model files
(missing, a directory, malformed, another version) and bad training requests, each one
line on stderr with the documented exit status and no output left behind; and a
training run on a few ground-truthed pages whose model howe-predict then reads.

usage: test_howe_cli.py PATH/TO/docbin-run PATH/TO/docbin-bench
"""
import csv
import os
import re
import subprocess
import sys
import tempfile

from clitest import check, failures, png_bytes, write

RUN, BENCH = sys.argv[1], sys.argv[2]


def page(path, w, h, seed, truth=None):
    """A small document-like page (and, with `truth`, its ground truth: the strokes)."""
    rows, gt = [], []
    x = seed
    for y in range(h):
        row, grow = bytearray(), bytearray()
        for k in range(w):
            x = (x * 1103515245 + 12345) & 0x7fffffff
            ink = (k // 3 + y // 4 + seed) % 8 == 0 or (k * 5 + y * 3) % 31 < 2
            row.append(60 + x % 40 if ink else 200 - (k + y) * 40 // (w + h) + x % 15)
            grow.append(0 if ink else 255)
        rows.append(bytes(row))
        gt.append(bytes(grow))
    write(path, png_bytes(w, h, rows))
    if truth:
        write(truth, png_bytes(w, h, gt))


def run(cmd, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    return p.returncode, p.stdout, p.stderr


def expect_error(what, cmd, code, says, out=None, env=None):
    rc, _, err = run(cmd, env)
    lines = [line for line in err.splitlines() if line.strip()]
    check(rc == code, f'{what}: exit {rc}, expected {code}: {err.strip()!r}')
    check(len(lines) == 1, f'{what}: not one error line: {err!r}')
    check(says in err, f'{what}: the message does not say {says!r}: {err!r}')
    if out:
        check(not os.path.exists(out), f'{what}: {out} was written')
    print(f'ok   {what}: exit {rc}: {lines[0] if lines else ""}')


def main():
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, 'page.png')
        page(src, 48, 36, 1)
        out = os.path.join(tmp, 'out.png')
        env = dict(os.environ)
        env.pop('DOCBIN_HOWE_MODEL', None)

        rc, _, err = run([RUN, '--algo', 'howe-auto', '--map', 'cpu', '--profile', src, '-o', out], env)
        report = dict(re.findall(r'^(\w+): (-?\d+)$', err, flags=re.M))
        check(rc == 0 and report.get('cuts') == '99' and report.get('thi_x1000') in ('250', '500')
              and 1 <= int(report.get('c_index', 0)) <= 33, f'howe-auto --profile: {err!r}')
        rc, _, err = run([RUN, '--algo', 'howe-predict', '--map', 'cpu', '--profile', src, '-o', out], env)
        report = dict(re.findall(r'^(\w+): (-?\d+)$', err, flags=re.M))
        check(rc == 0 and 150 <= int(report.get('thi_x1000', 0)) <= 650 and 'homogeneity_x1000' in report,
              f'howe-predict --profile: {err!r}')
        os.remove(out)

        bad = os.path.join(tmp, 'bad-model.txt')
        for what, text, says in [('a malformed model', 'docbin-howe-model 1\nmean 1 2\n', "bad-model.txt:2: 'mean'"),
                                 ('a model of version 9', 'docbin-howe-model 9\n', 'version 9'),
                                 ('not a model', 'hello\n', 'not a docbin Howe model')]:
            write(bad, text.encode())
            expect_error(what, [RUN, '--algo', 'howe-predict', src, '-o', out], 1, says, out,
                         dict(env, DOCBIN_HOWE_MODEL=bad))
        expect_error('a missing model', [RUN, '--algo', 'howe-predict', src, '-o', out], 1, 'DOCBIN_HOWE_MODEL', out,
                     dict(env, DOCBIN_HOWE_MODEL=os.path.join(tmp, 'none.txt')))
        expect_error('a directory as the model', [RUN, '--algo', 'howe-predict', src, '-o', out], 1,
                     'DOCBIN_HOWE_MODEL', out, dict(env, DOCBIN_HOWE_MODEL=tmp))

        # Training: a directory of pages beside their ground truths.
        train = os.path.join(tmp, 'train')
        os.mkdir(train)
        for i in range(3):
            page(os.path.join(train, f'p{i}.png'), 40, 30, 10 + i, os.path.join(train, f'p{i}_gt.png'))
        model = os.path.join(tmp, 'model.txt')
        expect_error('--train-howe without --model', [BENCH, '--train-howe', train], 2, '--model')
        expect_error('--train-howe with --algo', [BENCH, '--train-howe', train, '--model', model, '--algo', 'howe'], 2,
                     '--train-howe')
        expect_error('--train-howe on a missing directory', [BENCH, '--train-howe', os.path.join(tmp, 'nope'),
                                                             '--model', model], 1, 'nope', model)
        lonely = os.path.join(tmp, 'lonely')
        os.mkdir(lonely)
        page(os.path.join(lonely, 'q.png'), 40, 30, 3)
        expect_error('--train-howe, a page without ground truth', [BENCH, '--train-howe', lonely, '--model', model], 1,
                     'q_gt', model)
        expect_error('--grid without --train-howe', [BENCH, '--algo', 'howe', '--grid', os.path.join(tmp, 'g.csv')], 2,
                     '--train-howe')
        grid = os.path.join(tmp, 'grid.csv')
        rc, so, err = run([BENCH, '--train-howe', train, '--model', model, '--grid', grid], env)
        check(rc == 0 and len(so.splitlines()) == 3 and os.path.exists(model), f'training: exit {rc}: {err!r}')
        # The grid: 11 x 33 cells a page, whose best F-measure is the one each page's line reports.
        rows = list(csv.DictReader(open(grid))) if os.path.exists(grid) else []
        check(len(rows) == 3 * 11 * 33 and all(0 <= float(r['f']) <= 100 for r in rows), f'--grid: {len(rows)} rows')
        for line in so.splitlines():
            name, best = line.split()[0], float(line.split()[6])
            cells = [float(r['f']) for r in rows if r['page'] + '.png' == name]
            check(len(cells) == 363 and abs(max(cells) - best) < 1e-3, f'--grid of {name}: best {best}, cells {cells[:3]}')
        rc, _, err = run([RUN, '--algo', 'howe-predict', '--map', 'cpu', '--profile', src, '-o', out],
                         dict(env, DOCBIN_HOWE_MODEL=model))
        check(rc == 0 and os.path.exists(out), f'howe-predict with the trained model: {err!r}')
        print(f'ok   training on 3 pages: {so.splitlines()[0] if so else ""}')
    print('howe_cli: ok' if not failures else f'{len(failures)} failure(s)')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
