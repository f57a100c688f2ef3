#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The workloads' -i MS progress lines (progress.h), which bench/interleave reads
window by window: one line about every MS ms, on CLOCK_MONOTONIC, with a count that
grows during the run (not only at its end) and never passes the final count.

    progress_test.py WORKLOAD_DIR SCRATCH_DIR
"""
import os
import re
import statistics
import subprocess
import sys

wl, scratch = sys.argv[1], sys.argv[2]
os.makedirs(scratch, exist_ok=True)
failures = 0


def check(name, args, final_key, ms=100, secs=1.0):
    global failures
    out = subprocess.run([os.path.join(wl, name)] + args + ['-s', str(secs), '-i', str(ms)],
                         capture_output=True, text=True, timeout=60)
    lines = [tuple(map(int, m.groups())) for m in
             re.finditer(r'^progress ns=(\d+) n=(\d+)$', out.stdout, re.M)]
    final = re.search(rf'\b{final_key}=(\d+)', out.stdout)
    err = []
    if out.returncode:
        err.append(f'exit {out.returncode}: {out.stderr.strip()}')
    if not final:
        err.append(f'no {final_key}= line')
    expect = secs * 1000 / ms
    if not expect - 3 <= len(lines) <= expect + 1:
        err.append(f'{len(lines)} progress lines, expected about {expect:.0f}')
    # On the clock's schedule: a late wakeup (a loaded machine) is followed by an early one.
    gaps = [(b[0] - a[0]) / 1e6 for a, b in zip(lines, lines[1:])]
    if gaps and (min(gaps) <= 0 or not 0.8 * ms <= statistics.median(gaps) <= 1.2 * ms):
        err.append(f'line spacing {min(gaps):.0f}-{max(gaps):.0f} ms, not about {ms}: '
                   f'{[round(g, 1) for g in gaps]}')
    counts = [n for _, n in lines]
    if counts != sorted(counts):
        err.append(f'count goes down: {counts}')
    if len(counts) > 4 and counts[len(counts) // 2] == 0:
        err.append(f'nothing counted by mid-run: {counts}')
    if final and counts and counts[-1] > int(final.group(1)):
        err.append(f'last progress {counts[-1]} > final {final.group(1)}')
    print(f'{"FAIL" if err else "ok"}: {name} {" ".join(args)}: {len(lines)} lines, '
          f'counts {counts[:2]}..{counts[-1:]}, final {final.group(1) if final else "?"}')
    for e in err:
        print(f'    {e}')
    failures += bool(err)


check('fork_anon', ['-w', '2'], 'forks')
check('mmap_churn', ['-t', '2', '-P', '2', '-f', os.path.join(scratch, 'progress.churn')], 'ops')
check('execl_loop', [], 'execs')
check('brk_loop', ['-P', '2', '-m', '1'], 'ops')
check('pageout_loop', ['-f', os.path.join(scratch, 'progress.pageout'), '-m', '64'], 'iters')
# A chain of execs has no process to print from: refused, not silently ignored.
rc = subprocess.run([os.path.join(wl, 'execl_loop'), '-c', '-i', '100', '-n', '2'],
                    capture_output=True).returncode
print(f'{"ok" if rc == 2 else "FAIL"}: execl_loop -c -i refused with usage (exit {rc})')
failures += rc != 2
sys.exit(1 if failures else 0)
