#!/usr/bin/env python3
"""What a cluster's tasks share: merged logs, the kernel binary cache and the wisdom file.

- docbin-run --summarize over the logs of the shards of a batch, a rerun with --skip-existing, a
  shard run twice and a log cut short: the totals, the failed pages and the outputs written twice
  are those counted here from the inputs the test made; a malformed line is refused by its line.
- Two processes filling one empty kernel cache at once give the image of an Otsu threshold
  computed here, and leave entries whose header, size and SHA-256 this test checks itself; a
  corrupted, truncated or undecodable entry gives the same image and is rebuilt.
- A wisdom entry measured under one host name serves a run under another (a UTS namespace, where
  the test may make one): the file's keys name devices, not hosts.
usage: test_cluster.py PATH/TO/docbin-run
"""
import hashlib
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

import clitest
from clitest import check, failures, png_bytes, png_decode

DOCBIN = os.path.abspath(sys.argv[1])


def run(args, env=None, cwd=None):
    p = subprocess.run([DOCBIN] + args, capture_output=True, env=dict(os.environ, **(env or {})), cwd=cwd,
                       timeout=300)
    return p.returncode, p.stdout.decode('utf-8', 'surrogateescape'), p.stderr.decode('utf-8', 'surrogateescape')


def gray_page(w, h, seed):
    """Rows of a page: uneven paper and dark strokes, different for every seed."""
    rnd = random.Random(seed)
    rows = [[min(255, 160 + (x + 2 * y + seed) % 70 + rnd.randrange(25)) for x in range(w)] for y in range(h)]
    for _ in range(25):
        y, x, n = rnd.randrange(h - 2), rnd.randrange(w), rnd.randrange(5, 60)
        for dy in range(2):
            for xx in range(x, min(w, x + n)):
                rows[y + dy][xx] = 20 + rnd.randrange(50)
    return rows


def otsu(rows):
    """Otsu's threshold as the published method defines it (the first maximum of the between-class
    variance), applied as docbin documents: gray <= t is ink (0), else paper (255)."""
    hist = [0] * 256
    for row in rows:
        for v in row:
            hist[v] += 1
    n = sum(hist)
    total = sum(i * c for i, c in enumerate(hist))
    q1 = sb = 0
    best, t = 0.0, 0
    for i in range(256):
        q1 += hist[i]
        sb += i * hist[i]
        if q1 == 0:
            continue
        q2 = n - q1
        if q2 == 0:
            break
        d = sb / q1 - (total - sb) / q2
        between = ((d * d) * q1) * q2
        if between > best:
            best, t = between, i
    return [[0 if v <= t else 255 for v in row] for row in rows]


# ---- --summarize ---------------------------------------------------------------------------------

def counts(text):
    m = re.search(r'pages: (\d+): (\d+) ok, (\d+) failed, (\d+) skipped', text)
    return tuple(map(int, m.groups())) if m else None


def test_summarize(tmp):
    pages = os.path.join(tmp, 'in')
    os.makedirs(pages)
    names = [f'p{i:02d}.png' for i in range(10)]
    for i, name in enumerate(names):
        clitest.write(os.path.join(pages, name), png_bytes(40, 30, [bytes(r) for r in gray_page(40, 30, i)]))
    bad = b'bad-\xff-page.png'  # a name that is not UTF-8, and not an image either
    with open(os.path.join(pages.encode(), bad), 'wb') as f:
        f.write(b'not an image at all')
    out, logs = os.path.join(tmp, 'out'), os.path.join(tmp, 'logs')
    os.makedirs(logs)
    base = ['--codec-only', '--threads', '1', '--out-dir', out, pages]
    for k in (1, 2, 3):
        rc, _, err = run(base + ['--shard', f'{k}/3', '--log-json', os.path.join(logs, f'task{k}.jsonl')])
    all_inputs = sorted(os.listdir(pages.encode()))
    bad_shard = all_inputs.index(bad) % 3 + 1
    # The shard with the bad page again, skipping what exists: its good pages are skipped.
    run(base + ['--shard', f'{bad_shard}/3', '--skip-existing', '--log-json', os.path.join(logs, 'task-again.jsonl')])
    rc, text, err = run(['--summarize', logs])
    check(rc == 1, f'--summarize of logs with a failed page: exit {rc}, want 1: {err}')
    check(counts(text) == (11, 10, 1, 0),
          f'--summarize: {counts(text)}, want 11 pages: 10 ok, 1 failed, 0 skipped:\n{text}')
    rows = {line.split()[0]: line.split()[1:4] for line in text.splitlines() if line.startswith(logs)}
    again = rows.get(os.path.join(logs, 'task-again.jsonl'))
    shard_size = sum(1 for i in range(len(all_inputs)) if i % 3 == bad_shard - 1)
    check(again == ['0', '1', str(shard_size - 1)], f'--summarize: the rerun\'s row is {again}, want 0 ok, 1 failed, '
          f'{shard_size - 1} skipped')
    failed = text.split('failed: 1\n', 1)[1].splitlines() if 'failed: 1\n' in text else []
    check(failed and os.fsdecode(bad) in failed[0] and 'not an image' in failed[0],
          f'--summarize: the failed page is not listed with its name and reason:\n{text}')
    check('written more than once' not in text, f'--summarize: outputs reported written twice:\n{text}')

    # A shard run again without --skip-existing writes its outputs twice, and a log cut short is read.
    run(base + ['--shard', '1/3', '--log-json', os.path.join(logs, 'task1-again.jsonl')])
    with open(os.path.join(logs, 'task2.jsonl'), 'a') as f:
        f.write('{"index":4,"input":"cut')
    rc, text, err = run(['--summarize', logs])
    twice = sorted(os.path.basename(line.split(':')[0].strip()) for line in text.split('written more than once', 1)[-1]
                   .splitlines()[1:] if line.strip())
    want = sorted(os.fsdecode(n)[:-4] + '.png' for i, n in enumerate(all_inputs) if i % 3 == 0 and n != bad)
    check(twice == want, f'--summarize: written twice {twice}, want shard 1\'s outputs {want}:\n{text}')
    check('2 times' in text, f'--summarize: the count of writes is missing:\n{text}')
    check(counts(text) == (11, 10, 1, 0), f'--summarize with a cut log: {counts(text)}:\n{text}')
    check(re.search(r'task2\.jsonl .*cut short', text), f'--summarize: the cut log is not marked:\n{text}')

    # Files given one by one give the same totals; a malformed line is refused by its file and line.
    rc, text2, _ = run(['--summarize'] + [os.path.join(logs, n) for n in sorted(os.listdir(logs))])
    check(counts(text2) == counts(text), f'--summarize of the files: {counts(text2)}, of the directory {counts(text)}')
    bad_log = clitest.write(os.path.join(tmp, 'bad.jsonl'), b'{"input":"a","output":"b","status":"ok"}\nnot json\n'
                            b'{"input":"c","output":"d","status":"ok"}\n')
    rc, _, err = run(['--summarize', bad_log])
    check(rc == 1 and f'{bad_log}:2:' in err, f'--summarize of a malformed log: exit {rc}: {err}')
    odd = clitest.write(os.path.join(tmp, 'odd.jsonl'), b'{"input":"a","output":"b","status":"done"}\n')
    rc, _, err = run(['--summarize', odd])
    check(rc == 1 and 'status' in err, f'--summarize of a line with an unknown status: exit {rc}: {err}')
    rc, _, err = run(['--summarize'])
    check(rc == 2, f'--summarize without logs: exit {rc}, want 2: {err}')
    rc, _, err = run(['--summarize', '--algo', 'otsu', bad_log])
    check(rc == 2, f'--summarize with --algo: exit {rc}, want 2: {err}')
    rc, _, err = run(['--summarize', os.path.join(tmp, 'missing.jsonl')])
    check(rc == 1 and 'missing.jsonl' in err, f'--summarize of a missing log: exit {rc}: {err}')
    print('ok   --summarize merges shards and reruns: totals, the failed page and its reason, outputs written twice')


def test_summarize_pages(tmp):
    """Pages of one multi-page file share its output: the account keeps them apart."""
    try:
        from PIL import Image
    except ImportError:
        print('skip multi-page logs: Pillow is not installed (Debian: python3-pil)')
        return
    tif = os.path.join(tmp, 'book.tif')
    pages = [Image.frombytes('L', (40, 30), bytes(v for r in gray_page(40, 30, s) for v in r)) for s in range(3)]
    pages[0].save(tif, save_all=True, append_images=pages[1:])
    logs = os.path.join(tmp, 'logs')
    os.makedirs(logs)
    rc, _, err = run(['--algo', 'otsu', '--map', 'cpu', '--format', 'tif', '--out-dir', os.path.join(tmp, 'out'),
                      '--log-json', os.path.join(logs, 'a.jsonl'), tif])
    check(rc == 0, f'a 3-page TIFF: exit {rc}: {err}')
    rc, text, err = run(['--summarize', logs])
    check(rc == 0 and counts(text) == (3, 3, 0, 0), f'--summarize of a 3-page file: exit {rc}, {counts(text)}:\n{text}')
    print('ok   --summarize counts the pages of a multi-page file apart')


# ---- the kernel binary cache ----------------------------------------------------------------------

def cache_entries(d):
    """{file name: (key, payload)} of the cache directory, each checked against its own header."""
    entries = {}
    for name in sorted(os.listdir(d)):
        check(not name.startswith('.'), f'kernel cache: temporary file {name} left in {d}')
        if name.startswith('.'):
            continue
        data = open(os.path.join(d, name), 'rb').read()
        m = re.match(rb'docbin-clbin 1\nkey ([0-9a-f]{64})\nsha ([0-9a-f]{64})\nsize (\d+)\n', data)
        check(m is not None, f'kernel cache: {name} has no valid header')
        if not m:
            continue
        payload = data[m.end():]
        check(name == m.group(1).decode() + '.clbin', f'kernel cache: {name} holds the key {m.group(1).decode()}')
        check(len(payload) == int(m.group(3)), f'kernel cache: {name}: {len(payload)} bytes, header says {m.group(3)}')
        check(hashlib.sha256(payload).hexdigest() == m.group(2).decode(), f'kernel cache: {name}: checksum differs')
        entries[name] = (m.group(1).decode(), payload, m.end())
    return entries


def test_kernel_cache(tmp):
    page = gray_page(120, 90, 7)
    src = clitest.write(os.path.join(tmp, 'page.png'), png_bytes(120, 90, [bytes(r) for r in page]))
    want = otsu(page)
    cache = os.path.join(tmp, 'cache')
    os.makedirs(cache)
    # An empty PoCL cache too, so that both processes compile and store at the same time; not under
    # AddressSanitizer, which takes what PoCL's compiler keeps until exit for leaks.
    env = dict(os.environ, DOCBIN_CACHE_DIR=cache)
    if not os.environ.get('DOCBIN_TEST_ASAN'):
        env['POCL_CACHE_DIR'] = os.path.join(tmp, 'pocl')

    def image(path):
        return png_decode(open(path, 'rb').read())[3]

    procs = [subprocess.Popen([DOCBIN, '--algo', 'otsu', '--map', 'gpu', src, '-o', os.path.join(tmp, f'out{i}.png')],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for i in range(2)]
    for i, p in enumerate(procs):
        _, err = p.communicate(timeout=300)
        check(p.returncode == 0, f'kernel cache: process {i} exited {p.returncode}: {err.decode()}')
        check(p.returncode != 0 or image(os.path.join(tmp, f'out{i}.png')) == want,
              f'kernel cache: process {i} filling an empty cache gave another image than Otsu\'s')
    entries = cache_entries(cache)
    check(len(entries) >= 1, f'kernel cache: no entry after two runs: {os.listdir(cache)}')

    # Damage every entry a different way: a flipped byte, a cut, a valid checksum over bytes no driver takes.
    ways = ['flip', 'cut', 'garbage']
    damaged = {}
    for n, (name, (key, payload, header)) in enumerate(sorted(entries.items())):
        path = os.path.join(cache, name)
        data = bytearray(open(path, 'rb').read())
        way = ways[n % len(ways)]
        if way == 'flip':
            data[header + len(payload) // 2] ^= 0x40
        elif way == 'cut':
            data = data[:header + len(payload) // 2]
        else:
            junk = bytes(random.Random(n).randrange(256) for _ in range(len(payload)))
            data = (f'docbin-clbin 1\nkey {key}\nsha {hashlib.sha256(junk).hexdigest()}\nsize {len(junk)}\n'.encode()
                    + junk)
        open(path, 'wb').write(bytes(data))
        damaged[name] = (way, bytes(data))
    rc, _, err = run(['--algo', 'otsu', '--map', 'gpu', src, '-o', os.path.join(tmp, 'again.png')], env=env)
    check(rc == 0 and image(os.path.join(tmp, 'again.png')) == want,
          f'kernel cache: with damaged entries: exit {rc}, or another image than Otsu\'s: {err}')
    rebuilt = cache_entries(cache)
    for name, (way, data) in damaged.items():
        check(name in rebuilt and open(os.path.join(cache, name), 'rb').read() != data,
              f'kernel cache: the {way} entry {name} was not rebuilt')
    # A writer killed while it stored an entry leaves its temporary file: the next process removes it
    # once nobody has written it for ten minutes (a writer on another node may be at it before that).
    name = sorted(entries)[0]
    stale = clitest.write(os.path.join(cache, f'.{name}.Ab12Cd'), b'half an entry')
    fresh = clitest.write(os.path.join(cache, f'.{name}.Zz99Yy'), b'being written')
    os.utime(stale, (0, 0))
    rc, _, err = run(['--algo', 'otsu', '--map', 'gpu', src, '-o', os.path.join(tmp, 'third.png')], env=env)
    check(rc == 0 and not os.path.exists(stale) and os.path.exists(fresh),
          f'kernel cache: stale temporary {os.path.exists(stale)}, fresh one {os.path.exists(fresh)}: {err}')
    os.unlink(fresh)
    print(f'ok   kernel cache: two processes filling it at once, {len(entries)} entries valid; damaged entries '
          f'({", ".join(sorted(set(w for w, _ in damaged.values())))}) rebuilt, images equal to Otsu\'s')


# ---- the wisdom file ------------------------------------------------------------------------------

def test_wisdom_hosts(tmp):
    src = clitest.write(os.path.join(tmp, 'page.png'), png_bytes(64, 48, [bytes(r) for r in gray_page(64, 48, 3)]))
    wisdom = os.path.join(tmp, 'wisdom')
    rc, _, err = run(['--algo', 'otsu', '--map', 'measure', '--measure-runs', '1', '--wisdom', wisdom, src,
                      '-o', os.path.join(tmp, 'a.png')])
    check(rc == 0, f'wisdom: measure: exit {rc}: {err}')
    text = open(wisdom).read() if os.path.exists(wisdom) else ''
    host = os.uname().nodename
    check(host not in text, f'wisdom: the file names this host ({host}):\n{text}')
    rc, devices, _ = run(['--list-devices'])
    keys = set(re.findall(r'key: ([0-9a-f]{16})', devices))
    entry = [line.split() for line in text.splitlines() if line.startswith('otsu ')]
    check(len(entry) == 1 and {entry[0][5], entry[0][6]} <= keys,
          f'wisdom: the entry\'s device words {entry} are not the devices\' keys {keys}')
    # The same devices under another host name: a node of the same partition finds the entry.
    unshare = shutil.which('unshare')
    probe = subprocess.run([unshare, '--uts', 'true'], capture_output=True) if unshare else None
    if not probe or probe.returncode != 0:
        print('skip wisdom under another host name: no UTS namespace here (unshare --uts needs root)')
        return
    p = subprocess.run([unshare, '--uts', 'sh', '-c', 'hostname docbin-other-node && exec "$@"', 'sh', DOCBIN,
                        '--algo', 'otsu', '--explain', '--wisdom', wisdom, src, '-o', os.path.join(tmp, 'b.png')],
                       capture_output=True, text=True, timeout=300)
    check(p.returncode == 0 and '(wisdom)' in p.stderr,
          f'wisdom: under host name docbin-other-node the entry was not used: exit {p.returncode}: {p.stderr}')
    print('ok   wisdom: keyed by device keys, no host name; an entry serves a node of another name')


def main():
    with tempfile.TemporaryDirectory() as tmp:
        for test in (test_summarize, test_summarize_pages, test_kernel_cache, test_wisdom_hosts):
            sub = os.path.join(tmp, test.__name__)
            os.makedirs(sub)
            test(sub)
    if failures:
        print(f'{len(failures)} failure(s)', file=sys.stderr)
        return 1
    print('cluster: ok')
    return 0


if __name__ == '__main__':
    sys.exit(main())
