#!/usr/bin/env python3
"""docbin under a real Slurm: the shipped job scripts as array jobs on a one-node cluster.

The test starts its own munged, slurmctld and slurmd, as the user running it (root or not),
configured entirely under a temporary directory and listening on unprivileged ports of
127.0.0.1; the machine's own Slurm and MUNGE settings are never read or touched. Then:

1. 40 pages (one corrupt) through docbin-submit --cpu --chunk 10 --summary: an array of 4 tasks of
   docbin-array-cpu.sbatch and a summary job after it. The 39 good outputs exist once each and
   equal a single-machine run's, each task took its shard, and docbin-run --summarize (run here,
   and by the summary job) reports 39 ok and the corrupt page failed with its reason.
2. The same pages through docbin-array.sbatch (one GPU a task, the gpu role bound to PoCL and
   the node's GPUs declared as generic resources) into another directory; one task is stopped
   mid-shard, cancelled with scancel and submitted again alone: every output is there, equal to the
   first run's, and none was written twice (each output's "ok" line appears once over all the
   logs, an output that was there before the resubmission is skipped by it with its inode and
   modification time unchanged).

Every daemon it started is stopped at the end, also on failure or interruption.
Skips (exit 77) when the Slurm or MUNGE programs are not installed
(Debian: apt-get install slurm-wlm munge).
usage: test_slurm.py PATH/TO/docbin-run PATH/TO/contrib/slurm
"""
import ctypes
import json
import os
import pwd
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

from clitest import check, failures

DOCBIN = os.path.abspath(sys.argv[1])
SCRIPTS = os.path.abspath(sys.argv[2])
PAGES, TASKS, CORRUPT = 40, 4, 17
WIDTH, HEIGHT = 1000, 1400
PROGRAMS = ['munged', 'slurmctld', 'slurmd', 'sbatch', 'squeue', 'scancel', 'sinfo', 'scontrol']


def find(program):
    return shutil.which(program, path=os.environ.get('PATH', '') + ':/usr/sbin:/sbin:/usr/local/sbin')


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


class Cluster:
    """munged, slurmctld and slurmd of a one-node cluster under `root`, for the user running the test."""

    def __init__(self, root):
        self.root = root
        self.daemons = []
        self.user = pwd.getpwuid(os.getuid()).pw_name
        # Nothing of a surrounding Slurm job or of the user's settings reaches this cluster.
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(('SLURM_', 'SBATCH_', 'SALLOC_', 'SRUN_'))}
        self.env['SLURM_CONF'] = os.path.join(root, 'slurm.conf')

    def path(self, *parts):
        return os.path.join(self.root, *parts)

    def start(self):
        # munged wants its socket's directory reachable by all and its key readable by its user alone.
        os.chmod(self.root, 0o755)
        for d in ('munge', 'state', 'spool', 'log'):
            os.makedirs(self.path(d), mode=0o755)
        with open(self.path('munge', 'munge.key'), 'wb') as f:
            f.write(os.urandom(1024))
        os.chmod(self.path('munge', 'munge.key'), 0o600)
        sock = self.path('munge', 'socket')
        self.spawn('munged', [find('munged'), '--foreground', '--socket', sock,
                              '--key-file', self.path('munge', 'munge.key'),
                              '--log-file', self.path('log', 'munged.log'),
                              '--pid-file', self.path('munge', 'munged.pid'),
                              '--seed-file', self.path('munge', 'seed')])
        self.wait_for(lambda: os.path.exists(sock), 'munged to open its socket', 'munged')
        host = socket.gethostname().split('.')[0]
        cpus = max(1, len(os.sched_getaffinity(0)))
        self.cpus = cpus
        with open(self.path('slurm.conf'), 'w') as f:
            f.write(f"""# A one-node cluster for docbin's test, on loopback ports, every file under {self.root}.
ClusterName=docbintest
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
CommunicationParameters=NoCtldInAddrAny,NoInAddrAny
SlurmUser={self.user}
SlurmdUser={self.user}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={sock}
StateSaveLocation={self.path('state')}
SlurmdSpoolDir={self.path('spool')}
SlurmctldPidFile={self.path('slurmctld.pid')}
SlurmdPidFile={self.path('slurmd.pid')}
SlurmctldLogFile={self.path('log', 'slurmctld.log')}
SlurmdLogFile={self.path('log', 'slurmd.log')}
PlugStackConfig={self.path('plugstack.conf')}
ProctrackType=proctrack/pgid
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
KillWait=5
MinJobAge=3600
InactiveLimit=0
GresTypes=gpu
NodeName=dbnode NodeHostname={host} NodeAddr=127.0.0.1 CPUs={cpus} Gres=gpu:2 State=UNKNOWN
PartitionName=debug Nodes=dbnode Default=YES MaxTime=INFINITE State=UP
""")
        # Two GPUs to allocate, whose device files Slurm insists on are two that nothing opens (with
        # task/none no device is constrained either); the tasks bind the gpu role to PoCL.
        with open(self.path('gres.conf'), 'w') as f:
            f.write('NodeName=dbnode Name=gpu File=/dev/null,/dev/zero\n')
        open(self.path('plugstack.conf'), 'w').close()
        conf = self.path('slurm.conf')
        self.spawn('slurmctld', [find('slurmctld'), '-D', '-f', conf])
        self.spawn('slurmd', [find('slurmd'), '-D', '-f', conf, '-N', 'dbnode'])
        self.wait_for(lambda: self.slurm('sinfo', '-h', '-n', 'dbnode', '-o', '%T', check_rc=False).strip() == 'idle',
                      'the node to register as idle', 'slurmd')

    def spawn(self, name, argv):
        out = open(self.path('log', name + '.out'), 'w')
        p = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=self.env,
                             cwd=self.root)
        out.close()
        self.daemons.append((name, p))

    def wait_for(self, ready, what, daemon, timeout=60):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            for name, p in self.daemons:
                if p.poll() is not None:
                    raise RuntimeError(f'{name} exited with {p.returncode} while waiting for {what}:\n' + self.logs())
            if ready():
                return
            time.sleep(0.1)
        raise RuntimeError(f'timed out waiting for {what} ({daemon}):\n' + self.logs())

    def slurm(self, *argv, env=None, check_rc=True, cwd=None):
        p = subprocess.run([find(argv[0])] + list(argv[1:]), capture_output=True, text=True,
                           env=dict(self.env, **(env or {})), cwd=cwd or self.root, timeout=60)
        if check_rc and p.returncode != 0:
            raise RuntimeError(f'{" ".join(argv)}: exit {p.returncode}: {p.stderr.strip()}')
        return p.stdout

    def jobs(self, job):
        """{task index: (state, exit code)} of every task of array `job`, finished ones included."""
        out = self.slurm('squeue', '-h', '--states=all', '-r', '-j', str(job), '-o', '%K %T', check_rc=False)
        states = {}
        for line in out.splitlines():
            task, state = line.split()
            states[int(task) if task.isdigit() else -1] = state  # -1: a job that is not an array
        return states

    def wait_job(self, job, timeout=240):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            states = self.jobs(job)
            if states and all(s not in ('PENDING', 'RUNNING', 'CONFIGURING', 'COMPLETING', 'SUSPENDED')
                              for s in states.values()):
                return states
            time.sleep(0.2)
        raise RuntimeError(f'job {job} did not finish within {timeout} s: {self.jobs(job)}\n' + self.logs())

    def logs(self):
        text = []
        for name in sorted(os.listdir(self.path('log'))):
            with open(self.path('log', name), errors='replace') as f:
                lines = f.read().splitlines()[-15:]
            text.append(f'--- {name}\n' + '\n'.join(lines))
        return '\n'.join(text)

    def stop(self):
        """Cancels every job, then stops the daemons this test started and any process they left."""
        if any(name == 'slurmctld' and p.poll() is None for name, p in self.daemons):
            subprocess.run([find('scancel'), '--user', self.user], env=self.env, capture_output=True, timeout=30)
            end = time.monotonic() + 30
            while time.monotonic() < end and self.slurm('squeue', '-h', check_rc=False).strip():
                time.sleep(0.2)
        for name, p in reversed(self.daemons):
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        # Job steps (slurmstepd) that outlived slurmd came back to this process (a subreaper).
        for pid in orphans():
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass


def orphans():
    """The children of this process that it did not start through subprocess: orphaned job steps."""
    me, found = os.getpid(), []
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        try:
            with open(f'/proc/{entry}/stat') as f:
                fields = f.read().rsplit(')', 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == me:
            found.append(int(entry))
    return found


def write_pages(d):
    """PAGES gray pages, different from each other; page CORRUPT is a PGM whose pixels are cut short."""
    os.makedirs(d)
    paths = []
    paper = bytes(b % 96 + 150 for b in range(256))  # noisy paper: slow to encode, so tasks take a while
    for i in range(PAGES):
        rnd = random.Random(i)
        px = bytearray(rnd.randbytes(WIDTH * HEIGHT).translate(paper))
        for _ in range(60):
            y, x, n = rnd.randrange(HEIGHT - 3), rnd.randrange(WIDTH), rnd.randrange(20, 300)
            for dy in range(3):
                row = (y + dy) * WIDTH
                px[row + x:row + min(WIDTH, x + n)] = bytes(min(WIDTH, x + n) - x)
        data = b'P5\n%d %d\n255\n' % (WIDTH, HEIGHT) + bytes(px)
        if i == CORRUPT:
            data = data[:len(data) // 3]
        path = os.path.join(d, f'page-{i:03d}.pgm')
        with open(path, 'wb') as f:
            f.write(data)
        paths.append(path)
    return paths


def read(path):
    with open(path, 'rb') as f:
        return f.read()


def log_lines(d):
    """{log file name: [parsed lines]} of the JSON logs in `d`."""
    logs = {}
    for name in sorted(os.listdir(d)):
        if name.endswith('.jsonl'):
            with open(os.path.join(d, name)) as f:
                logs[name] = [json.loads(line) for line in f if line.strip()]
    return logs


def outputs(d):
    return {name: os.stat(os.path.join(d, name)) for name in os.listdir(d) if name.endswith('.png')}


def submit(cluster, script, out, logs, array, extra=()):
    # The gpu role of the GPU script's tasks runs on PoCL, as in every test.
    env = {'DOCBIN_LIST': cluster.path('pages.txt'), 'DOCBIN_OUT': out, 'DOCBIN_SHARDS': str(TASKS),
           'DOCBIN_ALGO': 'sauvola', 'DOCBIN_LOGS': logs, 'DOCBIN_RUN': DOCBIN,
           'DOCBIN_GPU_DEVICE': os.environ.get('DOCBIN_GPU_DEVICE') or 'portable'}
    job = cluster.slurm('sbatch', '--parsable', f'--array={array}', '--cpus-per-task=1',
                        f'--output={cluster.path("log", "job-%A_%a.out")}', *extra, script, env=env)
    return int(job.strip().split(';')[0])


def summarize(logs):
    p = subprocess.run([DOCBIN, '--summarize', logs], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def check_summary(logs, names, corrupt, what, skipped_ok=False):
    rc, text, err = summarize(logs)
    lines = text.splitlines()
    check(rc == 1, f'{what}: --summarize exits {rc}, want 1 (a page failed): {err}')
    head = next((line for line in lines if line.startswith('pages:')), '')
    m = re.search(r'(\d+) ok, (\d+) failed, (\d+) skipped', head)
    counts = dict(zip(('ok', 'failed', 'skipped'), map(int, m.groups()))) if m else {}
    if skipped_ok:
        check(counts.get('ok', 0) + counts.get('skipped', 0) == len(names) and counts.get('failed') == 1,
              f'{what}: summary says {head!r}, want {len(names)} ok or skipped and 1 failed')
    else:
        check(counts == {'ok': len(names), 'failed': 1, 'skipped': 0},
              f'{what}: summary says {head!r}, want {len(names)} ok, 1 failed, 0 skipped')
    failed = lines[lines.index('failed: 1') + 1:] if 'failed: 1' in lines else []
    check(len(failed) >= 1 and corrupt in failed[0], f'{what}: the failed page is not listed with its reason: {text}')
    check(not any(line.startswith('written more than once') for line in lines),
          f'{what}: the summary says an output was written twice: {text}')
    return text


def array_run(cluster, pages, ref):
    """docbin-submit with the CPU job script, 4 tasks of 10 pages and a summary job after them, against
    the single-machine outputs `ref`."""
    out, logs = cluster.path('out1'), cluster.path('out1', 'logs')
    env = {'DOCBIN_RUN': DOCBIN, 'PATH': os.path.dirname(find('sbatch')) + ':' + os.environ.get('PATH', '')}
    p = subprocess.run([os.path.join(SCRIPTS, 'docbin-submit'), '--cpu', '--chunk', str(PAGES // TASKS), '--summary',
                        cluster.path('pages.txt'), out, '--cpus-per-task=1'], capture_output=True, text=True,
                       env=dict(cluster.env, **env), cwd=cluster.root, timeout=60)
    if p.returncode != 0 or len(p.stdout.split()) != 2:
        raise RuntimeError(f'docbin-submit: exit {p.returncode}: {p.stdout} {p.stderr}')
    check(f'{PAGES} pages in {TASKS} tasks' in p.stderr, f'docbin-submit counted: {p.stderr.strip()}')
    job, summary_job = map(int, p.stdout.split())
    states = cluster.wait_job(job)
    # The task holding the corrupt page exits 1 (a page failed); the others succeed.
    want = {t: 'FAILED' if CORRUPT % TASKS == t else 'COMPLETED' for t in range(TASKS)}
    check(states == want, f'array 1: task states {states}, want {want}\n' + cluster.logs())
    got = outputs(out)
    names = sorted(os.path.basename(p)[:-4] + '.png' for i, p in enumerate(pages) if i != CORRUPT)
    check(sorted(got) == names, f'array 1: outputs {sorted(got)}, want the {len(names)} valid pages')
    for name in names:
        if name in got:
            check(read(os.path.join(out, name)) == read(os.path.join(ref, name)),
                  f'array 1: {name} differs from the single-machine run')
    check(not [n for n in os.listdir(out) if n.startswith('.')], f'array 1: temporary files left in {out}')
    per_log = log_lines(logs)
    check(len(per_log) == TASKS, f'array 1: {len(per_log)} logs, want one a task: {sorted(per_log)}')
    ok_lines = {}
    for name, lines in per_log.items():
        task = int(name.split('_')[1].split('.')[0])
        indices = sorted(line['index'] for line in lines)
        check(indices == list(range(task, PAGES, TASKS)), f'array 1: task {task} took pages {indices}')
        for line in lines:
            if line['status'] == 'ok':
                ok_lines[os.path.basename(line['output'])] = ok_lines.get(os.path.basename(line['output']), 0) + 1
    check(sorted(ok_lines) == names and set(ok_lines.values()) == {1},
          f'array 1: "ok" lines per output {ok_lines}, want one for each valid page')
    check_summary(logs, names, pages[CORRUPT], 'array 1')
    # The summary job ran once the tasks had ended, and failed as the account has a failed page.
    check(cluster.wait_job(summary_job) == {-1: 'FAILED'}, f'array 1: summary job {cluster.jobs(summary_job)}')
    summary = open(os.path.join(out, 'summary.txt')).read() if os.path.exists(os.path.join(out, 'summary.txt')) else ''
    check(f'{len(names)} ok, 1 failed, 0 skipped' in summary and pages[CORRUPT] in summary,
          f'array 1: the summary job wrote:\n{summary}')
    print(f'ok   array of {TASKS} tasks over {PAGES} pages: {len(names)} outputs once each, equal to one machine\'s; '
          'the corrupt page reported failed')
    return names


def docbin_writing(log):
    """The pid of the docbin-run writing `log` (it runs on this machine), or None."""
    for pid in filter(str.isdigit, os.listdir('/proc')):
        try:
            with open(f'/proc/{pid}/cmdline', 'rb') as f:
                argv = f.read().split(b'\0')
        except OSError:
            continue
        if argv and os.path.basename(argv[0]) == b'docbin-run' and log.encode() in argv:
            return int(pid)
    return None


def stopped(pid, timeout=2.0):
    """Whether every thread of process `pid` has stopped (a SIGSTOP is delivered asynchronously: a thread
    running on another core goes on until its next entry into the kernel)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            states = []
            for tid in os.listdir(f'/proc/{pid}/task'):
                with open(f'/proc/{pid}/task/{tid}/stat') as f:
                    states.append(f.read().rsplit(')', 1)[1].split()[0])
        except OSError:
            return False
        if states and all(state in ('T', 't') for state in states):
            return True
        time.sleep(0.001)
    return False


def logged(log):
    try:
        with open(log) as f:
            return [line for line in f if line.endswith('\n')]
    except OSError:
        return []


def cancelled_run(cluster, pages, names):
    """The GPU job script, one task cancelled mid-run and submitted again."""
    out, logs = cluster.path('out2'), cluster.path('logs2')
    script = os.path.join(SCRIPTS, 'docbin-array.sbatch')
    job = submit(cluster, script, out, logs, f'0-{TASKS - 1}')
    shard = PAGES // TASKS
    victim = None
    end = time.monotonic() + 240
    # Cancel the first task whose log shows part of its shard done, a page written among it: it is running.
    # It is stopped first, so that it cannot finish its shard while the cancellation travels, and its log
    # is read again once every thread has stopped. At least two pages must be left: Slurm sends SIGCONT
    # just before SIGTERM, and in between the task may write the page it was writing.
    while victim is None and time.monotonic() < end:
        for task in range(TASKS):
            log = os.path.join(logs, f'docbin-{job}_{task}.0.jsonl')
            lines = logged(log)
            if not (1 <= len(lines) <= shard - 2 and any('"status":"ok"' in line for line in lines)):
                continue
            pid = docbin_writing(log)
            if pid is None:
                continue
            try:
                os.kill(pid, signal.SIGSTOP)
            except OSError:
                continue  # it has just ended
            if stopped(pid) and len(logged(log)) <= shard - 2:
                try:
                    cluster.slurm('scancel', f'{job}_{task}')
                    victim = task
                except (RuntimeError, subprocess.SubprocessError):
                    pass  # let go on; another task may still be caught
            if victim is None:
                os.kill(pid, signal.SIGCONT)
            break
        if victim is None and all(os.path.exists(os.path.join(logs, f'docbin-{job}_{t}.0.jsonl'))
                                  for t in range(TASKS)) and not cluster.slurm('squeue', '-h', '-j', str(job)).strip():
            break  # every task ended before one could be caught running
        time.sleep(0.005)
    states = cluster.wait_job(job)
    check(victim is not None and states.get(victim) == 'CANCELLED',
          f'array 2: no task could be cancelled while it ran (states {states})')
    if victim is None:
        return
    partial = log_lines(logs)[f'docbin-{job}_{victim}.0.jsonl']
    check(len(partial) < shard, f'array 2: the cancelled task logged {len(partial)} pages of {shard}')
    written = [os.path.basename(line['output']) for line in partial if line['status'] == 'ok']
    before = outputs(out)
    missing = [n for n in names if n not in before]
    check(missing, 'array 2: the cancelled task left nothing to do')
    check(all(n in before for n in written), 'array 2: a page the cancelled task logged written has no output')
    # The same task again, alone: it takes its own shard (auto/N) and skips what is done.
    again = submit(cluster, script, out, logs, str(victim))
    states = cluster.wait_job(again)
    want = 'FAILED' if CORRUPT % TASKS == victim else 'COMPLETED'
    check(states == {victim: want}, f'array 2: the resubmitted task ended {states}, want {want}')
    after = outputs(out)
    check(sorted(after) == names, f'array 2: outputs {sorted(after)} after the resubmission, want all {len(names)}')
    for name in names:
        if name in after:
            check(read(os.path.join(out, name)) == read(cluster.path('out1', name)),
                  f'array 2: {name} differs from the first array\'s')
    for name, sb in before.items():
        check((after[name].st_ino, after[name].st_mtime_ns) == (sb.st_ino, sb.st_mtime_ns),
              f'array 2: {name} was written again by the resubmitted task')
    # The killed task may have left the temporary file of the page it was writing: hidden, never taken
    # for an output, and removed by a later run once it has gone unwritten for ten minutes.
    for n in os.listdir(out):
        if n.startswith('.'):
            check(re.fullmatch(r'\.(.+\.png)\.\w{6}', n) and n[1:-7] in names,
                  f'array 2: {n} left in {out} is not a temporary file of an output')
    ok_lines, rerun = {}, log_lines(logs)[f'docbin-{again}_{victim}.0.jsonl']
    for lines in log_lines(logs).values():
        for line in lines:
            if line['status'] == 'ok':
                name = os.path.basename(line['output'])
                ok_lines[name] = ok_lines.get(name, 0) + 1
    check(max(ok_lines.values(), default=0) == 1, f'array 2: outputs logged "ok" more than once: {ok_lines}')
    for line in rerun:
        name = os.path.basename(line['output'])
        want = 'skipped' if name in before else 'failed' if line['input'] == pages[CORRUPT] else 'ok'
        check(line['status'] == want, f'array 2: the resubmitted task logged {name} {line["status"]}, want {want}')
    # An output written just before the kill, whose line was not logged, is skipped by the rerun.
    check(all(n in before for n in names if n not in ok_lines), 'array 2: an output was written without a log line')
    check_summary(logs, names, pages[CORRUPT], 'array 2', skipped_ok=True)
    print(f'ok   task {victim} cancelled after {len(partial)} of {shard} pages ({len(written)} written) and submitted '
          'again: every output once, none written twice')


def main():
    missing = [p for p in PROGRAMS if not find(p)]
    if missing:
        print(f'SKIP: {", ".join(missing)} not installed; the Slurm test needs Slurm and MUNGE '
              '(Debian: apt-get install slurm-wlm munge)')
        return 77
    # Job steps whose slurmd is stopped come back to this process, which then ends them.
    ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # a timeout still stops the daemons
    root = tempfile.mkdtemp(prefix='docbin-slurm-')
    cluster = Cluster(root)
    try:
        cluster.start()
        pages = write_pages(cluster.path('pages'))
        with open(cluster.path('pages.txt'), 'w') as f:
            f.write('# the test pages\n' + ''.join(p + '\n' for p in pages))
        # One machine, one process: the outputs every array must reproduce.
        ref = subprocess.run([DOCBIN, '--algo', 'sauvola', '--map', 'cpu', '--out-dir', cluster.path('ref'),
                              '@' + cluster.path('pages.txt')], capture_output=True, text=True, timeout=300)
        check(ref.returncode == 1 and pages[CORRUPT] in ref.stderr,
              f'single machine: exit {ref.returncode}, want 1 for the corrupt page: {ref.stderr}')
        names = array_run(cluster, pages, cluster.path('ref'))
        cancelled_run(cluster, pages, names)
    except RuntimeError as e:
        check(False, str(e))
    finally:
        cluster.stop()
        if os.environ.get('DOCBIN_TEST_KEEP'):
            print(f'kept {root}', file=sys.stderr)
        else:
            shutil.rmtree(root, ignore_errors=True)
    if failures:
        print(f'{len(failures)} failure(s)', file=sys.stderr)
        return 1
    print('slurm: ok')
    return 0


if __name__ == '__main__':
    sys.exit(main())
