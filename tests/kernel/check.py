#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks what one guest run of tests/kernel/guest-tests.sh left in OUT.

    check.py OUT VARIANT VERSION MMSCOPE N_TOGGLE N_NOOP N_GROW N_PAGES N_THP

Two oracles, both independent of mmscope: the patched tracepoints read
through tracefs (exact counts for the workloads' own windows), and kprobes on
the kernel functions (both kernels).  mmscope's recordings, read back with
`mmscope report FILE --json`, must match them.  Prints one line per check
(ok / FAIL / SKIP) and exits 1 if any failed.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter

LINE = re.compile(r'^\s*(?P<comm>.*)-(?P<pid>\d+)\s+\[\d+\]\s+\S+\s+[\d.]+: (?P<ev>\w+): (?P<rest>.*)$')
THP_PAGES = 512

results = {'ok': 0, 'FAIL': 0, 'SKIP': 0}
# 'names': run.sh's names guest (4 CPUs, no hypervisor bit), which ran the lock names alone.
GUEST_ONLY = os.environ.get('GUEST_ONLY', '')


def report(status, name, detail):
    results[status] += 1
    print(f'{status} - {VERSION} {VARIANT} {name}: {detail}', flush=True)


def check(name, cond, detail):
    report('ok' if cond else 'FAIL', name, detail)
    return cond


def read(path):
    try:
        with open(path, errors='replace') as f:
            return f.read()
    except OSError:
        return None


def events(name, pid=None):
    """Parsed events of OUT/name.trace: (pid, event, fields, flags)."""
    text = read(os.path.join(OUT, name + '.trace'))
    if text is None:
        return None
    out = []
    for line in text.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        fields, flags = {}, set()
        for tok in m['rest'].split():
            if '=' in tok:
                k, v = tok.split('=', 1)
                fields[k] = v
            else:
                flags.add(tok)
        p = int(m['pid'])
        if pid is None or p == pid:
            out.append((p, m['ev'], fields, flags))
    return out


def overruns(name):
    text = read(os.path.join(OUT, name + '.stats')) or ''
    return sum(int(x) for x in re.findall(r'overrun:\s*(\d+)', text))


def out_pid(name):
    """The workload's pid, from its "ready pid=" or "done pid=" line."""
    text = read(os.path.join(OUT, name + '.out')) or ''
    m = re.search(r'(?:ready|done) pid=(\d+)', text)
    return int(m.group(1)) if m else None


def out_rc(name):
    m = re.search(r'^rc=(\d+)', read(os.path.join(OUT, name + '.out')) or '', re.M)
    return int(m.group(1)) if m else None


def out_field(name, key):
    m = re.search(r'\b' + key + r'=(-?\d+)', read(os.path.join(OUT, name + '.out')) or '')
    return int(m.group(1)) if m else None


def num(v):
    return int(v, 0)


def kprobe_merges(ev):
    """Successful merges by the kprobe oracle (guest-tests.sh's kprobe_setup).

    vma_merge() (6.1), vma_merge_new_range() and vma_merge_existing_range()
    return the merged VMA or NULL.  Where the last was folded into vma_modify(),
    its merges are the commit_merge() calls that returned 0 less the
    vma_expand() ones (vma_expand() commits through commit_merge(): for
    vma_merge_new_range(), counted already, and for exec's stack move, no merge).
    """
    ok = Counter(e for _, e, f, _ in ev if e in ('mms_merge', 'mms_mergex') and num(f['ret']) != 0)
    zero = Counter(e for _, e, f, _ in ev if e in ('mms_commit', 'mms_expand')
                   and num(f['ret']) == 0)
    return ok['mms_merge'] + ok['mms_mergex'] + zero['mms_commit'] - zero['mms_expand']


# ---- the tracepoints and kprobes, workload windows only ----

def check_events_present():
    text = read(os.path.join(OUT, 'events.txt'))
    if text is None:
        report('FAIL', 'events', 'no events.txt: the guest job did not run')
        return
    want = 'present' if VARIANT == 'patched' else 'absent'
    for e in ('vma/vma_split', 'vma/vma_merge', 'rmap/try_to_unmap_batch'):
        check('tracepoint ' + e, f'event {e} {want}' in text, f'{want} expected')
    for e in ('lock/contention_begin', 'lock/contention_end'):
        check('tracepoint ' + e, f'event {e} present' in text, 'present expected')
    check('btf', 'btf present' in text, '/sys/kernel/btf/vmlinux expected')
    if VERSION == '6.1':
        fns = ('__split_vma', '__vma_adjust', 'try_to_unmap_one', 'page_remove_rmap')
    else:
        # The hooks of vma_fentry.bpf.c and rmap_fentry.bpf.c for mainline.
        fns = ('__split_vma', 'vma_merge_new_range', 'vma_modify', 'copy_vma', 'vma_expand',
               'vma_shrink', 'try_to_unmap_one', 'folio_remove_rmap_ptes')
    for fn in fns:
        check('ftrace ' + fn, f'ftrace {fn}\n' in text, 'traceable (fentry target)')
    # Two CPUs: spinlock contention needs a second one (kernel/boot.sh's -smp).
    m = re.search(r'^cpus (\d+)$', text, re.M)
    up = re.search(r'smp: Brought up \d+ nodes?, (\d+) CPUs?',
                   read(os.path.join(OUT, 'console.log')) or '')
    # The names guest: 4 CPUs without the hypervisor bit (run.sh, KERNEL_GUEST=names).
    want = '4' if GUEST_ONLY == 'names' else '2'
    check('cpus', m and m.group(1) == want and up and up.group(1) == want,
          f'nproc {m.group(1) if m else "?"}, console: "{up.group(0) if up else "no smp line"}"'
          f'; {want} expected (qemu -smp {want},sockets={want})')
    if GUEST_ONLY == 'names':
        check('cpuflag', re.search(r'^cpuflag no-hypervisor$', text, re.M),
              'no CPUID hypervisor bit expected (qemu -cpu max,-hypervisor)')
    if VERSION != '6.1':
        check('config PER_VMA_LOCK', 'config CONFIG_PER_VMA_LOCK=y' in text,
              'CONFIG_PER_VMA_LOCK=y expected in /proc/config.gz')


def window_ok(name):
    if out_rc(name) != 0:
        report('FAIL', name, f'workload failed (rc={out_rc(name)}): '
               + (read(os.path.join(OUT, name + '.out')) or 'no output').strip()[-300:])
        return False
    if overruns(name):
        report('FAIL', name, f'trace buffer overran by {overruns(name)} events')
        return False
    return True


def check_tp_mprotect():
    name = 'tp-mprotect'
    ev = events(name)
    if ev is None or not window_ok(name):
        if ev is None:
            report('FAIL', name, 'no trace')
        return
    splits = [f for _, e, f, _ in ev if e == 'vma_split']
    merges = [(f, fl) for _, e, f, fl in ev if e == 'vma_merge']
    below = Counter(f['new_below'] for f in splits)
    errs = [f for f in splits if f['error'] != '0']
    check(name + ' splits', len(splits) == 2 * N_TOGGLE and not errs and
          below['1'] == N_TOGGLE and below['0'] == N_TOGGLE,
          f'{len(splits)} vma_split (new_below=1: {below["1"]}, 0: {below["0"]}, '
          f'failed: {len(errs)}), expected {2 * N_TOGGLE} = 2 x {N_TOGGLE} toggles')
    kinds = Counter((f['merge'], f['removed'], f['origin'], 'anon' in fl) for f, fl in merges)
    check(name + ' merges', len(merges) == N_TOGGLE and
          kinds[('both', '2', 'existing', True)] == N_TOGGLE,
          f'{len(merges)} vma_merge {dict(kinds)}, expected {N_TOGGLE} x '
          '(both, removed 2, existing, anon)')


def check_tp_grow():
    name = 'tp-grow'
    ev = events(name)
    if ev is None or not window_ok(name):
        if ev is None:
            report('FAIL', name, 'no trace')
        return
    splits = [f for _, e, f, _ in ev if e == 'vma_split']
    merges = [f for _, e, f, _ in ev if e == 'vma_merge']
    kinds = Counter((f['merge'], f['removed'], f['origin']) for f in merges)
    check(name + ' merges', len(merges) == N_GROW and kinds[('prev', '0', 'new')] == N_GROW
          and not splits,
          f'{len(merges)} vma_merge {dict(kinds)}, {len(splits)} vma_split; expected '
          f'{N_GROW} x (prev, removed 0, new) and no split')


def check_tp_pageout():
    name = 'tp-pageout'
    ev = events(name)
    if ev is None or not window_ok(name):
        if ev is None:
            report('FAIL', name, 'no trace')
        return
    b = [(f, fl) for _, e, f, fl in ev if e == 'try_to_unmap_batch']
    shape = Counter((f['nr_pages'], f['order'], f['folio_nr_pages'],
                     'anon' if 'anon' in fl else 'file') for f, fl in b)
    pfns = len({f['pfn'] for f, _ in b})
    check(name + ' batches', len(b) == N_PAGES and shape[('1', '0', '1', 'file')] == N_PAGES
          and pfns == N_PAGES,
          f'{len(b)} try_to_unmap_batch {dict(shape)} over {pfns} pfns; expected {N_PAGES} '
          'x (nr_pages 1, order 0, file) for MADV_PAGEOUT of that many small file pages')


def check_tp_thp():
    name = 'tp-thp'
    ev = events(name)
    if ev is None or not window_ok(name):
        if ev is None:
            report('FAIL', name, 'no trace')
        return
    huge_kb = out_field(name, 'anon_huge_kb')
    if not check(name + ' setup', huge_kb is not None and huge_kb >= 2048 * N_THP,
                 f'AnonHugePages {huge_kb} kB before MADV_PAGEOUT, at least {2048 * N_THP} '
                 f'expected ({N_THP} PMD-mapped THPs)'):
        return
    b = [(f, fl) for _, e, f, fl in ev if e == 'try_to_unmap_batch']
    shape = Counter((f['nr_pages'], f['order'], f['folio_nr_pages'],
                     'anon' in fl, 'lazyfree' in fl) for f, fl in b)
    pfns = len({f['pfn'] for f, _ in b})
    want = THP_PAGES * N_THP
    # 6.1 and 6.12.117 alike: shrink_folio_list() passes TTU_SPLIT_HUGE_PMD,
    # try_to_unmap_one() splits the PMD and removes one PTE per rmap call
    # (6.12 stable dropped the PMD-level discard of lazyfree THPs;
    # kernel/README.md has the code).
    check(name + ' batches', len(b) == want and
          shape[('1', '9', str(THP_PAGES), True, True)] == want and pfns == want,
          f'{len(b)} try_to_unmap_batch {dict(shape)} over {pfns} pfns; expected {want} = '
          f'{N_THP} THPs x {THP_PAGES} batches of 1 page ({VERSION} splits the PMD first), '
          'order 9, anon, lazyfree')
    check(name + ' dropped', out_field(name, 'resident_after') == 0,
          f'{out_field(name, "resident_after")} pages still resident after MADV_PAGEOUT')


def check_kprobes():
    name = 'kp-mprotect'
    ev = events(name)
    if ev is None:
        report('FAIL', name, 'no trace')
    elif window_ok(name):
        splits = sum(1 for _, e, _, _ in ev if e == 'mms_split')
        merges = kprobe_merges(ev)
        check(name, splits == 2 * N_TOGGLE and merges == N_TOGGLE,
              f'kprobes: {splits} __split_vma calls, {merges} successful merges; '
              f'expected {2 * N_TOGGLE} and {N_TOGGLE}')
    name = 'kp-pageout'
    ev = events(name)
    if ev is None:
        report('FAIL', name, 'no trace')
    elif window_ok(name):
        calls = sum(1 for _, e, _, _ in ev if e == 'mms_unmap')
        check(name, calls == N_PAGES,
              f'kprobe: {calls} try_to_unmap_one calls, expected {N_PAGES}')


# ---- mmscope ----

def mms_report(name):
    path = os.path.join(OUT, name + '.mmscope')
    if not os.path.exists(path):
        err = (read(os.path.join(OUT, name + '.err')) or '').strip()
        report('FAIL', name, f'no recording (mmscope record rc={out_rc(name)}): {err[-400:]}')
        return None
    p = subprocess.run([MMSCOPE, 'report', path, '--json'], capture_output=True, text=True)
    if p.returncode != 0:
        report('FAIL', name, f'mmscope report --json failed ({p.returncode}): '
               f'{p.stderr.strip()[-400:]}')
        return None
    try:
        return json.loads(p.stdout)
    except ValueError as e:
        report('FAIL', name, f'mmscope report --json is not JSON: {e}')
        return None


def metrics(rep, name, pid):
    return [m for m in rep.get('metrics', []) if m['name'] == name and m['pid'] == pid]


def source(rep, fam):
    """The backend that recorded a family ("tracepoint", "fentry", ...), or why none did."""
    s = rep.get('sources', {}).get(fam, {})
    if s.get('source'):
        return s.get('backend') or s['source']
    return 'none: ' + str(s.get('why'))


def note(rep, fam):
    """What the family's source says it cannot measure on this kernel ('' if nothing)."""
    return rep.get('sources', {}).get(fam, {}).get('note') or ''


def expand_traceable():
    """Can vma_expand() take fentry here?  ftrace's own list says (events.txt)."""
    return 'ftrace vma_expand\n' in (read(os.path.join(OUT, 'events.txt')) or '')


def mms_pid(name):
    pid = out_pid(name)
    if pid is None:
        report('FAIL', name, 'no "ready/done pid=" line from the workload: '
               + (read(os.path.join(OUT, name + '.out')) or '').strip()[-200:])
    return pid


def check_check():
    text = read(os.path.join(OUT, 'check.txt'))
    if text is None:
        report('FAIL', 'mmscope check', 'not run')
        return
    # "VMA split/merge        tracepoint  missing    tracepoint vma:vma_split not found ..."
    rows, rest = {}, {}
    fams = (('VMA', 'vma'), ('try_to_unmap', 'rmap'), ('lock contention', 'lock'))
    for line in text.splitlines():
        m = re.match(r'^(.+?)\s+(\S+)\s+(available|missing)\b\s*(.*)$', line)
        if m:
            fam = next((k for pre, k in fams if m.group(1).startswith(pre)), m.group(1))
            rows[(fam, m.group(2))] = m.group(3)
            rest[(fam, m.group(2))] = m.group(4)
    for fam in ('vma', 'rmap'):
        fam_rows = {b: s for (m, b), s in rows.items() if m == fam}
        tp = [s for b, s in fam_rows.items() if 'tracepoint' in b or b == 'tp']
        fe = [s for b, s in fam_rows.items() if 'fentry' in b]
        want_tp = 'available' if VARIANT == 'patched' else 'missing'
        check(f'mmscope check {fam}', tp == [want_tp] and fe == ['available'],
              f'tracepoint {tp or "not listed"} (want {want_tp}), fentry {fe or "not listed"} '
              f'(want available); rows: {fam_rows}')
    lock = {b: s for (m, b), s in rows.items() if m == 'lock'}
    check('mmscope check lock', 'available' in lock.values(), f'lock rows: {lock}')
    # 6.1's vma_expand() is inline, so notrace: the fentry row says what it misses.
    if not expand_traceable():
        said = rest.get(('vma', 'fentry'), '')
        check('mmscope check vma fentry note', 'vma_expand' in said and 'not count' in said,
              f'fentry row {said!r}: should say that merges through vma_expand() are not '
              'counted (vma_expand is not in available_filter_functions)')


def oracle_vma(name, pid):
    """(splits, Counter of (kind, origin)) of pid from the run's oracle trace."""
    ev = events(name, pid)
    if ev is None:
        return None
    if VARIANT == 'patched':
        splits = sum(1 for _, e, _, _ in ev if e == 'vma_split')
        merges = Counter((f['merge'], f['origin']) for _, e, f, _ in ev if e == 'vma_merge')
    else:
        splits = sum(1 for _, e, _, _ in ev if e == 'mms_split')
        merges = Counter({('?', '?'): kprobe_merges(ev)})
    return splits, merges


KIND = {1: 'prev', 2: 'next', 3: 'both'}
ORIGIN = {0: 'new', 1: 'existing', 2: 'copy', 3: 'unknown'}


def merge_counts(rep, pid):
    c = Counter()
    for m in metrics(rep, 'vma.merge', pid):
        c[(KIND.get(m['sub'] & 3, 'none'), ORIGIN[(m['sub'] >> 4) & 3])] += m['count']
    return c


def check_mms_vma(name, want_backend, workload):
    rep = mms_report(name)
    pid = mms_pid(name)
    if rep is None or pid is None:
        return
    backend = source(rep, 'vma')
    check(name + ' source', backend == want_backend, f'VMA source {backend!r}, '
          f'expected {want_backend}')
    splits = sum(m['count'] for m in metrics(rep, 'vma.split', pid))
    merges = merge_counts(rep, pid)
    orc = oracle_vma(name, pid)
    if orc is None:
        report('FAIL', name, 'no oracle trace')
        return
    o_splits, o_merges = orc
    both = sum(v for (k, _), v in merges.items() if k == 'both')
    prev = sum(v for (k, _), v in merges.items() if k == 'prev')
    if workload == 'mprotect':
        check(name + ' splits', splits == o_splits and splits >= 2 * N_TOGGLE,
              f'mmscope {splits} splits of pid {pid}, oracle {o_splits} (>= 2 x {N_TOGGLE} '
              'toggles, plus exec and setup)')
        check(name + ' merges', both == N_TOGGLE,
              f'mmscope {both} merges with both neighbours, expected {N_TOGGLE}; all: '
              f'{dict(merges)}')
        if VARIANT == 'patched':
            check(name + ' merges vs oracle', merges == o_merges or want_backend != 'tracepoint',
                  f'mmscope {dict(merges)}, oracle {dict(o_merges)}')
    elif want_backend == 'fentry' and not expand_traceable():
        # The grow steps merge in vma_expand(), which fentry cannot see here: the
        # recording must say so, and must not pretend to have counted them.
        said = note(rep, 'vma')
        check(name + ' merges', 'vma_expand' in said and prev < N_GROW,
              f'fentry cannot see vma_expand() merges on this kernel: note {said!r}; '
              f'mmscope {prev} merges with prev of pid {pid} (fewer than the {N_GROW} grow '
              f'steps expected); all: {dict(merges)}')
    elif VARIANT == 'patched':
        o_prev = sum(v for (k, o), v in o_merges.items() if k == 'prev')
        check(name + ' merges', prev >= N_GROW and prev == o_prev,
              f'mmscope {prev} merges with prev of pid {pid}, oracle {o_prev}'
              f' (>= {N_GROW} grow steps, plus exec); all: {dict(merges)}')
    else:
        # The kprobe oracle tells merges from no merges, not their kind.
        total, o_total = sum(merges.values()), sum(o_merges.values())
        exact = total == o_total if VERSION != '6.1' else True
        check(name + ' merges', prev >= N_GROW and exact,
              f'mmscope {prev} merges with prev of pid {pid}, {total} in all'
              + (f', kprobe oracle {o_total} in all' if VERSION != '6.1' else '')
              + f' (>= {N_GROW} grow steps, plus exec); all: {dict(merges)}')


def check_mms_inferred(name):
    """The inferred backend on 6.1: exact mprotect ups and downs, every call counted."""
    rep = mms_report(name)
    pid = mms_pid(name)
    if rep is None or pid is None:
        return
    backend = source(rep, 'vma')
    check(name + ' source', backend == 'inferred', f'VMA source {backend!r}, expected inferred')

    def one(metric):
        m = [x for x in metrics(rep, metric, pid) if x.get('detail') == 'mprotect']
        return m[0] if m else {'count': 0, 'total': 0, 'min': 0, 'max': 0}
    calls, up, down = (one('vma.inferred.' + k) for k in ('calls', 'up', 'down'))
    want = 2 * N_TOGGLE + N_NOOP
    # The loader's RELRO mprotects come on top (each +1), so at least, and a few more.
    check(name + ' calls', want <= calls['count'] <= want + 16,
          f'mmscope {calls["count"]} mprotect calls of pid {pid}, expected {want} = 2 x '
          f'{N_TOGGLE} toggles + {N_NOOP} that change nothing (+ the loader\'s few)')
    check(name + ' downs', (down['count'], down['total'], down['min'], down['max']) ==
          (N_TOGGLE, 2 * N_TOGGLE, 2, 2),
          f'mmscope {down["count"]} mprotect downs totalling {down["total"]} (min '
          f'{down["min"]}, max {down["max"]}), expected {N_TOGGLE} of -2')
    check(name + ' ups', up['count'] >= N_TOGGLE and up['max'] == 2,
          f'mmscope {up["count"]} mprotect ups (max {up["max"]}), expected >= {N_TOGGLE} '
          'of +2 (and the loader\'s +1s)')


def check_mms_rmap(name, want_backend, pages, order):
    rep = mms_report(name)
    pid = mms_pid(name)
    if rep is None or pid is None:
        return
    backend = source(rep, 'rmap')
    check(name + ' source', backend == want_backend,
          f'rmap source {backend!r}, expected {want_backend}')
    b = metrics(rep, 'rmap.batch', pid)
    count = sum(m['count'] for m in b)
    total = sum(m['total'] for m in b)
    mx = max([m['max'] for m in b] or [0])
    subs = sorted({m['sub'] for m in b})
    check(name + ' batches', count == pages and total == pages and mx == 1 and subs == [order],
          f'mmscope {count} batches, {total} pages, max {mx}, orders {subs} for pid {pid}; '
          f'expected {pages} batches of 1 page, order {order}')


def check_mms_mmap_hold():
    """--mmap-hold against mmap_lock_acquire_returned of the same run, exactly."""
    name = 'mm-mmap-hold'
    rep = mms_report(name)
    pid = mms_pid(name)
    if rep is None or pid is None:
        return
    ev = events(name, pid)
    if ev is None:
        report('FAIL', name, 'no oracle trace')
        return
    acq = [f for _, e, f, _ in ev if e == 'mmap_lock_acquire_returned']
    # Reads after the workload's exec: mmscope follows the child before it.
    after, seen = [], False
    for _, e, f, _ in ev:
        seen = seen or e == 'sched_process_exec'
        if seen and e == 'mmap_lock_acquire_returned':
            after.append(f)
    o = Counter((f.get('write'), f.get('success')) for f in acq)
    got = {k: sum(m['count'] for m in metrics(rep, 'mmap_lock.' + k, pid))
           for k in ('acquire.write', 'acquire.read', 'trylock_fail')}
    want = {'acquire.write': o[('true', 'true')],
            'trylock_fail': o[('true', 'false')] + o[('false', 'false')]}
    # The forked child takes its copy of mmscope's mm for read before mmscope
    # follows it (2 reads on 6.12, about 30 page faults on 6.1, which has no
    # per-VMA locks): the oracle saw those, so reads lie between those after
    # the exec and all (6.1 hashes the mm pointers early in boot, so exec is
    # the landmark, not the mm).
    reads_all = o[('false', 'true')]
    reads_own = sum(1 for f in after if f.get('write') == 'false' and f.get('success') == 'true')
    check(name + ' source', source(rep, 'mmap_lock') == 'bpf',
          f'mmap_lock source {source(rep, "mmap_lock")!r}, expected bpf')
    exact = {k: got[k] for k in want}
    check(name + ' acquisitions', exact == want and got['acquire.write'] >= 2 * N_TOGGLE and
          reads_own <= got['acquire.read'] <= reads_all,
          f'mmscope {got} for pid {pid}; mmap_lock_acquire_returned: {want}, reads '
          f'{reads_own} after the exec and {reads_all} in all '
          f'(>= {2 * N_TOGGLE} writes: one per mprotect)')


def vmstat_vl(path):
    """vma_lock_* of one /proc/vmstat read (guest-tests.sh's vmstat_vl), or None."""
    text = read(path)
    if text is None:
        return None
    return {k: int(v) for k, v in (l.split() for l in text.splitlines() if l.strip())}


def check_vma_lock_oracle():
    """--vma-lock's per-process rows against the kernel's vma_lock_* of the same window.

    A user-mode fault counts one of success, abort (lock_vma_under_rcu() found
    no VMA it could lock) or retry (VM_FAULT_RETRY under the VMA lock); the
    last two go on to mmap_lock (arch/x86/mm/fault.c).  Only vma_fallback ran
    between the two reads, and bash read them itself, so: its faults = the
    increase of success + abort + retry, its fallbacks = abort + retry, each
    within 1 %.  miss (the VMA was replaced while locking it) is a retry
    inside lock_vma_under_rcu(), not a fault of its own.
    """
    name = 'mm-vma-lock'
    if read(os.path.join(OUT, name + '.none')) is not None:
        if VERSION == '6.12':
            report('FAIL', name, 'no vma_lock_* in the guest\'s /proc/vmstat: the 6.12 kernel '
                   'is built with CONFIG_PER_VMA_LOCK_STATS (kernel/mmscope-6.12.config)')
        else:
            report('SKIP', name, f'{VERSION} has no per-VMA locks')
        return
    before = vmstat_vl(os.path.join(OUT, name + '.before'))
    after = vmstat_vl(os.path.join(OUT, name + '.after'))
    rep = mms_report(name)
    pid = mms_pid(name)
    if rep is None or pid is None:
        return
    if not before or not after:
        report('FAIL', name, 'the /proc/vmstat reads around the workload are missing')
        return
    d = {k[len('vma_lock_'):]: after[k] - before.get(k, 0) for k in after}
    k_faults = d['success'] + d['abort'] + d['retry']
    k_fell = d['abort'] + d['retry']

    def total(metric, p=pid):
        return sum(m['count'] for m in metrics(rep, metric, p))

    faults, fell = total('vma_lock.faults'), total('vma_lock.fallback')
    src = source(rep, 'mmap_lock')
    detail = (f'pid {pid}: mmscope faults {faults}, fell back {fell} '
              f'(further mmap_lock tries {total("vma_lock.mmap_retry")}); kernel '
              f'success {d["success"]} abort {d["abort"]} retry {d["retry"]} miss {d["miss"]}: '
              f'faults {k_faults}, fell back {k_fell}; source {src!r}')
    check(name + ' source', src == 'faults', detail)
    # A workload that does not fall back proves nothing about fallbacks.
    check(name + ' fallbacks happen', k_fell >= 50, detail)
    check(name + ' faults within 1 %', abs(faults - k_faults) <= max(1, k_faults / 100), detail)
    check(name + ' fallbacks within 1 %', abs(fell - k_fell) <= max(1, k_fell / 100), detail)
    # The same counters as mmscope recorded them (vma_lock.kernel, system-wide, sub 0-3:
    # success abort retry miss) over its whole run, which holds the workload's window.
    rec = [sum(m['count'] for m in rep.get('metrics', [])
               if m['name'] == 'vma_lock.kernel' and m['sub'] == k) for k in range(4)]
    r_fell = rec[1] + rec[2]
    check(name + ' kernel counters recorded', rec[0] >= d['success'] and
          k_fell <= r_fell <= k_fell + max(1, k_fell / 100),
          f'recorded success {rec[0]} abort {rec[1]} retry {rec[2]} miss {rec[3]} over the '
          f'session; the workload\'s window: success {d["success"]}, fell back {k_fell}')


def lock_rows(name, *args):
    """`mmscope report NAME.mmscope --by lock --json ARGS` rows, or None."""
    path = os.path.join(OUT, name + '.mmscope')
    p = subprocess.run([MMSCOPE, 'report', path, '--by', 'lock', '--json', *args],
                       capture_output=True, text=True)
    if p.returncode != 0:
        report('FAIL', name, f'mmscope report --by lock {" ".join(args)} failed '
               f'({p.returncode}): {p.stderr.strip()[-300:]}')
        return None
    try:
        return json.loads(p.stdout).get('rows', [])
    except ValueError as e:
        report('FAIL', name, f'report --by lock is not JSON: {e}')
        return None


def check_lock_names():
    name = 'mm-names-file'
    if mms_report(name) is None:
        return
    want = 'i_mmap_rwsem (/run/disk/shared.dat)'
    rows = lock_rows(name)
    if rows is None:
        return
    im = [r for r in rows if r['name'] == want]
    check(name + ' i_mmap_rwsem', im and im[0]['kind'] == 'i_mmap_rwsem'
          and im[0]['contended'] > 0,
          f'{want!r}: {im[:1]}; rows {[r["name"] for r in rows][:8]}')
    # The seeds' own waits: vma_prepare() takes i_mmap_rwsem for write around
    # each split and merge of the shared file's VMAs (6.1: __vma_adjust()).
    fn = '__vma_adjust' if VERSION == '6.1' else 'vma_prepare'
    srows = lock_rows(name, '-S', fn)
    if srows is None:
        return
    sim = [r for r in srows if r['name'] == want]
    check(name + ' -S ' + fn, sim and sim[0]['contended'] > 0 and
          sim[0]['contended'] <= im[0]['contended'] and sim[0]['type'] == 'rwsem:W',
          f'-S {fn}: {sim[:1]} (of {im[0]["contended"] if im else 0} waits on it), '
          f'rows {[r["name"] for r in srows][:8]}')
    name = 'mm-names-anon'
    text = read(os.path.join(OUT, name + '.json'))
    try:
        rows = json.loads(text or '').get('rows', [])
    except ValueError:
        rows = None
    tries = out_field(name, 'tries')
    ok = rows is not None and any(r['name'] == 'anon_vma' and r['kind'] == 'anon_vma' and
                                  r['contended'] > 0 for r in rows)
    check(name + ' anon_vma', ok and all(r['name'] == 'anon_vma' for r in rows),
          f'-L anon_vma rows after {tries} tries of fork_anon: '
          f'{[(r["name"], r["contended"]) for r in rows or []]}')


def spin_traced():
    """(True, '') when this guest's spinlock waits reach contention_begin, else (False, why)."""
    ev = read(os.path.join(OUT, 'events.txt')) or ''
    m = re.search(r'^cpus (\d+)', ev, re.M)
    cpus = int(m.group(1)) if m else 0
    if re.search(r'^cpuflag hypervisor$', ev, re.M):
        return False, ('the guest CPU has the CPUID hypervisor bit, so spinlocks spin in '
                       'virt_spin_lock() and never reach contention_begin (qemu -cpu '
                       'max,-hypervisor clears it)')
    if cpus < 3:
        return False, (f'{cpus} CPUs: the native queued spinlock reaches contention_begin only '
                       'for a third waiter, which irq-safe locks cannot have on 2 CPUs')
    return True, ''


def callers(name, lock, top=3):
    """The callers of one lock's waits (`report --by caller -L LOCK`): [(caller, waits)]."""
    path = os.path.join(OUT, name + '.mmscope')
    p = subprocess.run([MMSCOPE, 'report', path, '--by', 'caller', '-L', lock, '--json'],
                       capture_output=True, text=True)
    try:
        rows = json.loads(p.stdout).get('rows', [])
    except ValueError:
        return []
    return [(r['name'], r['contended']) for r in rows[:top]]


# What each kind lock_kinds contends is named, and by whom its waits are: the name's
# row, and a regex the functions that wait on such a lock match (the first caller past
# the lock primitives).  The callers are the oracle: a lock named zone_lock that
# page faults wait on would be misnamed.
KIND_NAMES = [
    # The scheduler's own functions are skipped as lock primitives are, so whatever
    # called schedule() is a caller: check_rq_oracle() checks the addresses instead.
    ('rq_lock', r'rq_lock \(cpu \d+\)', None),
    ('pi_lock', r'pi_lock \(lock_kinds\)', r'try_to_wake_up|task_rq_lock|wake_up|sched|affinity|'
     r'__set_cpus_allowed|move_queued|migrat|kthread|rt_mutex'),
    ('zone_lock', r'zone_lock \((node \d+ )?\w+\)', r'rmqueue|free_pcppages_bulk|'
     r'free_one_page|__free_pages|free_unref|get_page_from_freelist|drain|free_pcp|'
     r'alloc_pages|__rmqueue|compact'),
    ('lru_lock', r'lru_lock( \(.*\))?', r'lru|folio_lruvec_lock|folio_batch_move_lru|'
     r'folios_put|release_pages|__page_cache_release|isolate|move_folios|mlock|munlock|'
     r'shrink|reclaim|folio_activate|deactivate|lru_add'),
    ('ptlock', r'ptlock', r'pte|pmd|fault|zap|unmap|do_anonymous_page|do_wp_page|'
     r'copy_page_range|change_protection|madvise|page_vma_mapped|try_to_unmap|'
     r'do_set_pte|finish_fault|set_pte_range|filemap_map_pages|mlock'),
    ('siglock', r'siglock \(\d+ lock_kinds\)', r'sig|kill|do_send|group_send|__lock_task_sighand'),
    ('i_pages', r'i_pages \(/run/disk/(kinds|kinds-w|demo-shared)\.dat\)', r'folio|filemap|page_cache|mark_dirty|'
     r'writeback|__xa|xa_|tag_pages|write_cache|mpage|ext4|delete_from|replace_page'),
]


def check_rq_oracle(name, rows):
    """rq_lock (cpu N) rows are the runqueues the kernel locked, of those CPUs (a kprobe)."""
    text = read(os.path.join(OUT, 'mm-names-rq.oracle')) or ''
    rqs = {int(a, 16): int(c) for a, c in re.findall(r'rq=(0x[0-9a-f]+) cpu=(\d+)', text)}
    if not rqs:
        report('FAIL', name + ' rq_lock oracle', f'no runqueue addresses from the kprobe: '
               f'{text.strip()[:200]!r}')
        return
    mine = [r for r in rows if r['kind'] == 'rq_lock']
    bad = [(r['name'], r['addr'], rqs.get(int(r['addr'], 16))) for r in mine
           if rqs.get(int(r['addr'], 16)) is None or
           r['name'] != f'rq_lock (cpu {rqs[int(r["addr"], 16)]})']
    # And no runqueue lock without the name.
    other = [(r['name'], r['addr']) for r in rows if r['kind'] != 'rq_lock' and
             int(r['addr'], 16) in rqs]
    check(name + ' rq_lock oracle', mine and not bad and not other,
          f'{len(mine)} rq_lock rows, the kprobe saw {len(rqs)} runqueues '
          f'{sorted((c, hex(a)) for a, c in rqs.items())}; misnamed {bad}, unnamed {other}')


def check_struct_names():
    """Each spinlock kind lock_kinds contends (mm-names-kinds) is named, as its callers say."""
    name = 'mm-names-kinds'
    ok, why = spin_traced()
    if not ok:
        for kind, _, _ in KIND_NAMES:
            report('SKIP', f'{name} {kind}', why)
        return
    if mms_report(name) is None:
        return
    rows = lock_rows(name)
    if rows is None:
        return
    check_rq_oracle(name, rows)
    # The demo's recording counts too (its shared file's page cache, its kworkers).
    demo = lock_rows('mm-names-demo') or []
    for kind, want, by in KIND_NAMES:
        mine = [r for r in rows + demo if r['kind'] == kind and re.fullmatch(want, r['name'])
                and r['contended'] > 0 and r['type'] == 'spinlock']
        if not mine:
            check(f'{name} {kind}', False, f'no {want!r} row with waits; rows '
                  f'{[(r["name"], r["kind"], r["contended"]) for r in rows][:16]}')
            continue
        # Every row of the kind (not only lock_kinds' locks of it): its callers.
        waits = sum(r['contended'] for r in rows + demo if r['kind'] == kind)
        cs = callers(name, kind, 12) + callers('mm-names-demo', kind, 12)
        fit = sum(n for c, n in cs if by is None or re.search(by, c))
        check(f'{name} {kind}', fit >= 0.9 * sum(n for _, n in cs) and cs,
              f'{len(mine)} rows like {mine[0]["name"]!r} ({mine[0]["addr"]}), '
              f'{sum(r["contended"] for r in mine)} waits; callers of all {waits} '
              f'{kind} waits: {cs[:5]}')
    # Per-CPU variables: whichever the drains contend (cpu_worker_pools, mostly).
    pc = [r for r in rows + demo if r['kind'] == 'percpu' and r['contended'] > 0]
    check(f'{name} percpu', pc and all(re.fullmatch(r'[A-Za-z_][\w.]*(\+0x[0-9a-f]+)? '
                                                     r'\(cpu \d+\)', r['name']) for r in pc),
          f'{[(r["name"], r["contended"]) for r in pc][:6]}')


def check_names_demo():
    """The issue's figure: the share of the demo's lock rows and wait time that is named."""
    name = 'mm-names-demo'
    if mms_report(name) is None:
        return
    rows = lock_rows(name)
    if rows is None:
        return
    unnamed = [r for r in rows if r['kind'] == 'unknown' or r['name'].startswith('0x')]
    total = sum(r['wait_total_ns'] for r in rows)
    left = sum(r['wait_total_ns'] for r in unnamed)
    pr = 100.0 * (len(rows) - len(unnamed)) / len(rows) if rows else 0.0
    pw = 100.0 * (total - left) / total if total else 0.0
    spins = sum(1 for r in rows if r['type'] == 'spinlock')
    what = ', '.join(f'{r["name"]} {r["type"]} x{r["contended"]} by {callers(name, r["addr"], 1)}'
                     for r in unnamed[:8])
    fig = (f'{len(rows) - len(unnamed)} of {len(rows)} rows named ({pr:.1f} %), '
           f'{pw:.2f} % of {total / 1e6:.1f} ms wait named, {spins} spinlock rows; '
           f'unnamed: {what or "none"}')
    # Asserted in every guest: the 2-CPU ones show the sleeping locks' rows (and no
    # spinlock's: spin_traced() says why), the names guest the spinlocks' too.
    ok, why = spin_traced()
    check(name + ' named share', rows and pr >= 90.0 and pw >= 99.9,
          fig + ('' if ok else f' (no spinlock waits here: {why})'))


def rmap_view(name):
    """The rmap view (key 7) of `mmscope replay NAME.mmscope` over the whole window, as text."""
    sock = f'mms-kcheck-{os.getpid()}-{name}'
    path = os.path.join(OUT, name + '.mmscope')
    tm = ['tmux', '-L', sock, '-f', '/dev/null']
    try:
        subprocess.run(tm + ['new-session', '-d', '-x', '120', '-y', '40',
                             f'env TERM=screen {MMSCOPE} replay {path}'], check=True)
        time.sleep(1.5)
        # 7: the rmap view; w twice: tables over the whole window, not one interval.
        for k in ('7', 'w', 'w'):
            subprocess.run(tm + ['send-keys', k], check=True)
            time.sleep(0.4)
        time.sleep(0.6)
        return subprocess.run(tm + ['capture-pane', '-p'], capture_output=True,
                              text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        return f'tmux failed: {e}'
    finally:
        subprocess.run(tm + ['kill-server'], capture_output=True)


def check_rmap_view(name, batches, order):
    """The histogram the rmap view draws: one slot, batches of 1 page, the mean batch."""
    if not shutil.which('tmux'):
        report('SKIP', name + ' rmap view', 'no tmux to drive the TUI')
        return
    if not os.path.exists(os.path.join(OUT, name + '.mmscope')):
        report('FAIL', name + ' rmap view', 'no recording')
        return
    text = rmap_view(name)
    lines = text.splitlines()
    hist = []
    for i, line in enumerate(lines):
        if 'batch size (pages per removal)' in line:
            for row in lines[i + 1:]:
                m = re.match(r'^\s*(\d+)-(\d+)\s+(\d+)\s+\S', row)
                if not m:
                    break
                hist.append(tuple(int(x) for x in m.groups()))
    mean = re.search(r'mean batch ([\d.]+) pages', text)
    folio = re.search(rf'^order {order} \(', text, re.M)
    check(name + ' rmap view', hist == [(0, 2, batches)] and mean and mean.group(1) == '1.00'
          and folio,
          f'histogram {hist} (want one slot 0-2 of {batches}: batches of 1 page), mean batch '
          f'{mean.group(1) if mean else "?"}, order {order} row {"shown" if folio else "missing"}'
          + ('' if hist else f'; screen: {text.strip()[-600:]!r}'))


def check_mms_locks():
    name = 'mm-locks'
    rep = mms_report(name)
    if rep is None:
        return
    backend = source(rep, 'lock')
    ev = events(name) or []
    oracle = sum(1 for _, e, _, _ in ev if e == 'contention_begin')
    rows = rep.get('rows', [])
    waits = rep.get('totals', {}).get('contended', 0)
    # mmscope follows mmap_churn's threads, tracefs saw every task: at most that many.
    check(name, backend == 'bpf' and waits > 0 and waits <= oracle,
          f'lock source {backend!r}: {len(rows)} callers, {waits} contended waits of '
          f'mmap_churn; tracefs saw {oracle} contention_begin system-wide')


def check_mms_owners(name, hold=False):
    # The mappers' mmap_lock wait is booked to the mprotect()ing thread, under a stack
    # through mprotect (tests/live/owners_test.sh has the same on the host): with
    # --mmap-hold, booked at the waits' end, the share of all of it, and the holder's stack
    # is taken where it released the hold; at the begin, the share of the wait booked to a
    # task (a wait begun on a free or read-held lock has no owner to book: at most 25 %).
    path = os.path.join(OUT, name + '.mmscope')
    holder = out_field(name, 'holder_tid')
    rows = {}
    for by in ('owner', 'task'):
        p = subprocess.run([MMSCOPE, 'report', path, '--by', by, '--json'],
                           capture_output=True, text=True)
        try:
            rows[by] = json.loads(p.stdout)['rows'] if p.returncode == 0 else None
        except ValueError:
            rows[by] = None
        if rows[by] is None:
            err = (read(os.path.join(OUT, name + '.err')) or '').strip()
            report('FAIL', name, f'no --by {by} report (record rc={out_rc(name)}, report rc='
                   f'{p.returncode}): {err[-300:]} {p.stderr.strip()[-300:]}')
            return
    total = sum(r['wait_total_ns'] for r in rows['task'])
    others = total - sum(r['wait_total_ns'] for r in rows['task'] if r['pid'] == holder)
    mine = [r for r in rows['owner'] if r['owner_tid'] == holder]
    booked = sum(r['wait_total_ns'] for r in mine)
    through = sum(r['wait_total_ns'] for r in mine
                  if any('mprotect' in f for f in r['owner_stack']))
    share = booked / others if others > 0 else 0
    unowned = sum(r['wait_total_ns'] for r in rows['owner']
                  if r['owner_tid'] is None and r['owner_comm'] in ('<none>', '<readers>'))
    named = booked / (others - unowned) if others > unowned else 0
    # Under TCG on a busy host the guest's shares moved 87-98 % between runs (the host's
    # 96-100 %, where tests/live/owners_test.sh asserts the 90 %): 85 % here, the share printed.
    check(name, holder is not None and through > 0 and
          (share >= 0.85 and through >= 0.7 * booked if hold else
           named >= 0.85 and unowned <= 0.25 * others),
          f'holder {holder}: {100 * share:.1f} % of the mappers\' {others / 1e6:.0f} ms of '
          f'mmap_lock wait ({100 * named:.1f} % of what went to a task, '
          f'{100 * unowned / others if others else 0:.1f} % to none), '
          f'{100 * through / booked if booked else 0:.1f} % of it under a stack through mprotect')


def check_names_guest():
    """The names guest's checks: mmscope check, the structural names, the demo's share."""
    if read(os.path.join(OUT, 'mmscope-missing')) is None:
        check_check()
        check_struct_names()
        check_names_demo()
    else:
        report('FAIL', 'mmscope', 'not run in the guest')


def check_full_guest():
    """The 2-CPU guests' checks: tracepoints, the kprobe oracle, every mmscope source."""
    if VARIANT == 'patched':
        check_tp_mprotect()
        check_tp_grow()
        check_tp_pageout()
        check_tp_thp()
    check_kprobes()
    missing = read(os.path.join(OUT, 'mmscope-missing'))
    if missing is not None:
        report('FAIL', 'mmscope', f'not run in the guest: {missing.strip()} '
               '(build mmscope first)')
    else:
        check_check()
        if VARIANT == 'patched':
            check_mms_vma('mm-vma-tp', 'tracepoint', 'mprotect')
            check_mms_vma('mm-grow-tp', 'tracepoint', 'grow')
            check_mms_rmap('mm-pageout-tp', 'tracepoint', N_PAGES, 0)
            check_mms_rmap('mm-thp-tp', 'tracepoint', THP_PAGES * N_THP, 9)
            check_rmap_view('mm-thp-tp', THP_PAGES * N_THP, 9)
        else:
            check_mms_vma('mm-vma-default', 'fentry', 'mprotect')
            check_mms_inferred('mm-vma-inferred')
        check_mms_vma('mm-vma-fentry', 'fentry', 'mprotect')
        check_mms_vma('mm-grow-fentry', 'fentry', 'grow')
        check_mms_rmap('mm-pageout-fentry', 'fentry', N_PAGES, 0)
        check_mms_rmap('mm-thp-fentry', 'fentry', THP_PAGES * N_THP, 9)
        check_rmap_view('mm-thp-fentry', THP_PAGES * N_THP, 9)
        check_mms_locks()
        check_mms_owners('mm-owners')
        check_mms_owners('mm-owners-hold', hold=True)
        check_mms_mmap_hold()
        check_vma_lock_oracle()
        check_lock_names()
        check_names_demo()


def main():
    global OUT, VARIANT, VERSION, MMSCOPE, N_TOGGLE, N_NOOP, N_GROW, N_PAGES, N_THP
    if len(sys.argv) != 10:
        print(__doc__, file=sys.stderr)
        return 2
    OUT, VARIANT, VERSION, MMSCOPE = sys.argv[1:5]
    N_TOGGLE, N_NOOP, N_GROW, N_PAGES, N_THP = (int(x) for x in sys.argv[5:10])
    check_events_present()
    if GUEST_ONLY == 'names':
        check_names_guest()
    else:
        check_full_guest()
    print(f'{VARIANT}: {results["ok"]} passed, {results["FAIL"]} failed, '
          f'{results["SKIP"]} skipped', flush=True)
    return 1 if results['FAIL'] else 0


if __name__ == '__main__':
    sys.exit(main())
