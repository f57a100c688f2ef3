#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Judges one `mmscope report --vma-lock --by caller --json -- vma_fallback ...` run.

Usage: vma_lock_check.py OUT MODE MIB THREADS
OUT is what the command printed (the workload's lines, then the JSON report);
MODE is "mprotect" (the workload ran with -m) or "quiet" (without).

The oracles:
 - faults: every touch is one fault on a page that has none, and the set-up
   populates MIB/2 MiB of small pages, so the process's faults are touches +
   that + what starting a process and its threads faults (a few hundred);
 - fallbacks, quiet: nothing holds mmap_lock for write for long, and B has
   its anon_vma from the set-up, so no fault on it has a reason to fall back;
 - fallbacks, mprotect: a fault falls back only while the mprotect thread
   has B write-locked, and then waits for that mmap_lock until the call ends,
   so at most one per faulter per mprotect() call; and each one that waited
   is a contended read wait the lock source saw, independently (contention_begin
   and its stack), with lock_mm_and_find_vma as the caller (a retry under
   mmap_lock may wait again).
"""
import json
import re
import sys

PAGE = 4096
SETUP_SLACK = 1000	# start-up faults of a process with a few threads (67-70 seen)


def main():
    out, mode, mib, threads = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    text = open(out).read()
    done = re.search(r'^done pid=(\d+) touches=(\d+) mprotects=(\d+)$', text, re.M)
    if not done:
        sys.exit('FAIL: no done line from the workload')
    pid, touches, mprotects = (int(x) for x in done.groups())
    rep = json.loads(text[text.index('\n{') + 1:])
    got = {}
    for m in rep['metrics']:
        if m['pid'] == pid and m['name'].startswith('vma_lock.'):
            got[m['name']] = got.get(m['name'], 0) + m['count']
    faults = got.get('vma_lock.faults', 0)
    fell = got.get('vma_lock.fallback', 0)
    retry = got.get('vma_lock.mmap_retry', 0)
    waits = sum(r['contended'] for r in rep['rows']
                if r['name'].startswith('lock_mm_and_find_vma+') and r['type'] == 'rwsem:R')
    setup = (mib << 20) // 2 // PAGE
    print(f'{mode}: touches {touches}, mprotects {mprotects}, faults {faults} '
          f'(touches + set-up {setup} + {faults - touches - setup}), fell back {fell}, '
          f'retried {retry}, read waits in lock_mm_and_find_vma {waits}')
    src = rep['sources']['mmap_lock']
    if src['source'] != 'vma-lock-bpf' or src['backend'] != 'faults':
        sys.exit(f'FAIL: mmap_lock source {src}')
    if not 0 <= faults - touches - setup <= SETUP_SLACK:
        sys.exit(f'FAIL: faults {faults} not touches {touches} + set-up {setup} '
                 f'+ 0..{SETUP_SLACK}')
    if fell > faults:
        sys.exit('FAIL: more fallbacks than faults')
    if mode == 'quiet':
        # Thread start-up: a new thread's first stack fault may need anon_vma.
        if fell > threads + 2 or waits:
            sys.exit(f'FAIL: {fell} fallbacks, {waits} waits with nothing to fall back for')
        return
    if mprotects < 5:
        sys.exit(f'FAIL: only {mprotects} mprotect calls: the machine is too slow to judge')
    if fell < 5:
        sys.exit(f'FAIL: {fell} fallbacks under {mprotects} mprotect calls')
    if fell > threads * mprotects + threads + 2:
        sys.exit(f'FAIL: {fell} fallbacks: more than one per faulter per mprotect call '
                 f'({threads} x {mprotects})')
    # Only the rwsem:R row: the spins on the rwsem's wait_lock in the same
    # down_read() have the same caller, and a row of their own.
    if fell + retry < waits:
        sys.exit(f'FAIL: {waits} contended reads in lock_mm_and_find_vma but {fell} fallbacks '
                 f'and {retry} retries')


main()
