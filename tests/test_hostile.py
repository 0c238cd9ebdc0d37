#!/usr/bin/env python3
"""Every hostile input of tests/hostile.py through docbin-run, alone and in one batch, with its
memory limited to 1 GiB: the documented exit status, one error line naming the file, no output and
no temporary file for a bad input, the good pages of the batch done, and no hang.

The limit is RLIMIT_DATA (the writable private memory a process maps, heap and mmap alike), not
RLIMIT_AS: address space reserved and never made accessible (each thread's malloc arena reserves
64 MiB; OpenCL drivers reserve gigabytes) grows with the machine's cores and is no memory used.

usage: test_hostile.py PATH/TO/docbin-run (with Pillow; else it skips)
"""
import os
import resource
import subprocess
import sys
import tempfile

try:
    import hostile
except ImportError as e:  # Pillow missing
    print(f'SKIP: {e} (Debian: python3-pil)')
    sys.exit(77)

import clitest
from clitest import check, failures, png_bytes

DOCBIN = sys.argv[1]
LIMIT = 1 << 30
ASAN = os.environ.get('DOCBIN_TEST_ASAN') == '1'
# Under AddressSanitizer (the sanitizer build) no memory limit can hold (its shadow memory is
# terabytes); ASan itself then refuses any one allocation over the bound, as a failed malloc.
ENV = dict(os.environ, ASAN_OPTIONS=f'max_allocation_size_mb={LIMIT >> 20}:allocator_may_return_null=1:'
           + os.environ.get('ASAN_OPTIONS', '')) if ASAN else dict(os.environ)
# Every run here is --map cpu: the runs see PoCL's ICD alone, and no gpu role, so that only the
# memory docbin and PoCL take is bounded, not a GPU driver's.
VENDORS = '/etc/OpenCL/vendors'
for icd in sorted(os.listdir(VENDORS)) if os.path.isdir(VENDORS) and 'OCL_ICD_VENDORS' not in ENV else []:
    try:
        with open(os.path.join(VENDORS, icd)) as f:
            pocl = icd.endswith('.icd') and 'pocl' in f.read()
    except OSError:
        continue
    if pocl:
        ENV['OCL_ICD_VENDORS'] = os.path.join(VENDORS, icd)
        break
ENV.pop('DOCBIN_GPU_DEVICE', None)


def limited():
    if not ASAN:
        resource.setrlimit(resource.RLIMIT_DATA, (LIMIT, LIMIT))


def run(args, timeout=120):
    try:
        p = subprocess.run([DOCBIN] + args, capture_output=True, preexec_fn=limited, timeout=timeout, env=ENV)
    except subprocess.TimeoutExpired:
        return None, f'no exit within {timeout} s'
    return p.returncode, p.stderr.decode(errors='replace')


def temps(d):
    return [f for f in os.listdir(d) if f.startswith('.')] if os.path.isdir(d) else []


def main():
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, 'in')
        made = hostile.write(src)
        out = os.path.join(tmp, 'out')
        os.makedirs(out)
        for name, code in made:
            o = os.path.join(out, name + '.png')
            rc, err = run(['--algo', 'otsu', '--map', 'cpu', os.path.join(src, name), '-o', o])
            lines = [l for l in err.splitlines() if l.strip()]
            if code == 0:
                check(rc == 0 and os.path.exists(o), f'{name}: a valid edge case failed: {rc}: {err}')
                continue
            check(rc == code, f'{name}: exit {rc}, expected {code}: {err!r}')
            check(len(lines) == 1 and lines[0].startswith('docbin-run:') and name in lines[0],
                  f'{name}: not one line naming the file: {err!r}')
            check(not os.path.exists(o) and not temps(out), f'{name}: output or temporary file left')
        print(f'ok   {len(made)} hostile inputs alone: exit status, one line naming the file, nothing left')

        # One batch: every hostile input beside good pages, and a list naming a device and a FIFO.
        good = []
        for i in range(3):
            good.append(clitest.write(os.path.join(tmp, f'good{i}.png'),
                                      png_bytes(40, 30, [bytes((x * 5 + y * i) % 256 for x in range(40))
                                                         for y in range(30)])))
        listing = clitest.write(os.path.join(tmp, 'list.txt'),
                                f'{os.path.join(src, "zero-device.png")}\n{os.path.join(src, "fifo.png")}\n'.encode())
        bout = os.path.join(tmp, 'bout')
        args = [os.path.join(src, n) for n, _ in made if n not in ('zero-device.png', 'fifo.png')]
        rc, err = run(['--algo', 'otsu', '--map', 'cpu', '--threads', '2', '--out-dir', bout,
                       good[0]] + args[:len(args) // 2] + [good[1], '@' + listing] + args[len(args) // 2:] + [good[2]],
                      timeout=300)
        check(rc == 1, f'batch: exit {rc}, expected 1')
        outs = set(os.listdir(bout)) if os.path.isdir(bout) else set()
        check({'good0.png', 'good1.png', 'good2.png'} <= outs, f'batch: the good pages were not all done: {outs}')
        for name, code in made:
            if name == 'directory.png':
                continue  # a directory among a batch's inputs is a directory of inputs (here none)
            stem = os.path.splitext(name)[0] + '.png'
            said = [l for l in err.splitlines() if name in l]
            if code == 0:
                check(stem in outs, f'batch: valid {name} not done')
            else:
                check(stem not in outs and len(said) == 1, f'batch: {name}: {len(said)} lines, output {stem in outs}')
        check(not temps(bout), f'batch: temporary files left: {temps(bout)}')
        print(f'ok   one batch of {len(made)} hostile inputs and 3 good pages: the good ones done, each bad one named '
              f'once')

    if failures:
        print(f'{len(failures)} failure(s)', file=sys.stderr)
        return 1
    print('hostile: ok')
    return 0


if __name__ == '__main__':
    sys.exit(main())
