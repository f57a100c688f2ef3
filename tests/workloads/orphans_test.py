#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The multi-process workloads die with their first process: a test that kills
the process it started (SIGKILL, as the fault tests' cleanups do) must not leave
the others running for the rest of the suite, contending its locks.

    orphans_test.py WORKLOAD_DIR SCRATCH_DIR
"""
import os
import signal
import subprocess
import sys
import time

wl, scratch = sys.argv[1], sys.argv[2]
os.makedirs(scratch, exist_ok=True)
failures = 0


def children(pid):
    kids = set()
    for tid in os.listdir(f'/proc/{pid}/task'):
        with open(f'/proc/{pid}/task/{tid}/children') as f:
            kids |= {int(x) for x in f.read().split()}
    return kids


def alive(pid):
    try:
        with open(f'/proc/{pid}/stat') as f:
            return f.read().rsplit(')', 1)[1].split()[0] != 'Z'
    except FileNotFoundError:
        return False


def check(name, args, want):
    global failures
    p = subprocess.Popen([os.path.join(wl, name)] + args, stdout=subprocess.DEVNULL)
    kids = set()
    for _ in range(100):
        time.sleep(0.05)
        kids = children(p.pid)
        if len(kids) >= want:
            break
    p.send_signal(signal.SIGKILL)
    p.wait()
    left = kids
    for _ in range(40):
        left = {k for k in kids if alive(k)}
        if not left:
            break
        time.sleep(0.05)
    for k in left:
        os.kill(k, signal.SIGKILL)
    if len(kids) < want:
        print(f'FAIL {name}: {len(kids)} other processes seen, expected {want}')
        failures += 1
    elif left:
        print(f'FAIL {name}: {len(left)} of {len(kids)} processes still running 2 s after '
              'the first was killed')
        failures += 1
    else:
        print(f'ok   {name}: its {len(kids)} other processes went with the first')


check('mmap_churn', ['-t', '1', '-P', '3', '-s', '30', '-f',
                     os.path.join(scratch, 'orphans.dat')], 2)
check('fork_anon', ['-w', '2', '-s', '30'], 2)
check('brk_loop', ['-P', '2', '-s', '30'], 2)
sys.exit(1 if failures else 0)
