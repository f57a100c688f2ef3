# SPDX-License-Identifier: GPL-2.0
"""What bench/run and bench/interleave share: a tracer's life (start, collecting,
quiet, stop) and the /proc reads around it."""
import os
import signal
import subprocess
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class RunError(Exception):
    pass


def cpu_ns(pid):
    """CPU time of every thread of pid, in ns (schedstat: exact, unlike clock ticks)."""
    total = 0
    try:
        for tid in os.listdir(f'/proc/{pid}/task'):
            with open(f'/proc/{pid}/task/{tid}/schedstat') as f:
                total += int(f.read().split()[0])
    except (FileNotFoundError, ProcessLookupError):
        pass
    return total


def has_events(pid):
    try:
        for fd in os.listdir(f'/proc/{pid}/fd'):
            link = os.readlink(f'/proc/{pid}/fd/{fd}')
            if link in ('anon_inode:[perf_event]', 'anon_inode:bpf_link',
                        'anon_inode:bpf-link'):
                return True
    except OSError:
        pass
    return False


def fsize(path):
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def peer_perf():
    """The peer's perf binary (`perf lock contention -b`, bench/perf-peer): built once into
    the cache, about 5 minutes the first time."""
    r = subprocess.run([os.path.join(TOP, 'bench', 'perf-peer')], capture_output=True,
                       text=True)
    if r.returncode or not r.stdout.strip():
        raise RunError('bench/perf-peer could not build perf lock contention -b: ' +
                       (r.stderr.strip()[-800:] or f'exit {r.returncode}'))
    return r.stdout.strip().splitlines()[-1]


def tail(path, n=6):
    try:
        return ''.join(open(path, errors='replace').readlines()[-n:]).strip()
    except OSError:
        return ''


class Tracer:
    """argv writes out (its log: out.log); mms: it is mmscope record, whose first
    interval, not its open events, says it collects."""

    def __init__(self, label, argv, out, mms, env=None):
        self.label, self.mms, self.out, self.log = label, mms, out, out + '.log'
        self.logf = open(self.log, 'w')
        self.t_launch = time.monotonic()
        # Own session: a Ctrl-C at the terminal reaches the driver only, which stops us.
        self.p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=self.logf,
                                  stderr=subprocess.STDOUT, start_new_session=True,
                                  env=dict(os.environ, **env) if env else None)
        self.rusage, self.rss_kb = None, 0

    def alive(self):
        return self.p.poll() is None

    def started(self):
        """mmscope: the recording has its first interval, so the session loop runs (its
        file is created only once every source is prepared, and on a loaded machine that
        can take seconds after the first events are open).  perf: its events are open."""
        if not has_events(self.p.pid):
            return False
        if not self.mms:
            return True
        size = fsize(self.out)
        if not size:
            return False
        self.first_size = self.first_size or size
        return size > self.first_size

    def wait_ready(self):
        """Collecting, and its start-up work is over (CPU quiet for 200 ms)."""
        self.first_size = 0
        end = time.monotonic() + 60
        while not self.started():
            if not self.alive():
                raise RunError(f'{self.label} exited at start: '
                               f'{tail(self.log)}')
            if time.monotonic() > end:
                raise RunError(f'{self.label}: not collecting after 60 s')
            time.sleep(0.05)
        quiet, prev, end = 0, cpu_ns(self.p.pid), time.monotonic() + 15
        while quiet < 2 and time.monotonic() < end:
            time.sleep(0.1)
            if not self.alive():
                raise RunError(f'{self.label} exited: {tail(self.log)}')
            cur = cpu_ns(self.p.pid)
            quiet = quiet + 1 if cur - prev < 5e6 else 0
            prev = cur

    def hwm_kb(self):
        """Peak RSS of the tracer itself.  Not wait4()'s ru_maxrss: that also holds the
        high-water mark of the mm copied at fork, i.e. of this Python driver."""
        try:
            for line in open(f'/proc/{self.p.pid}/status'):
                if line.startswith('VmHWM:'):
                    self.rss_kb = max(self.rss_kb, int(line.split()[1]))
        except OSError:
            pass
        return self.rss_kb

    def stop(self, timeout=180):
        if self.rusage is not None:
            return
        self.hwm_kb()
        try:
            os.kill(self.p.pid, signal.SIGINT)
        except ProcessLookupError:
            pass
        end = time.monotonic() + timeout
        while True:
            self.hwm_kb()
            pid, status, ru = os.wait4(self.p.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > end:
                os.kill(self.p.pid, signal.SIGKILL)
                pid, status, ru = os.wait4(self.p.pid, 0)
                break
            time.sleep(0.05)
        self.p.returncode = os.waitstatus_to_exitcode(status)
        self.rusage = ru
        self.logf.close()
