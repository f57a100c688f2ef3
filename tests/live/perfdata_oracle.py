#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""mmscope's tables from a perf.data capture against perf's own reading of it.

The same file, read twice: `mmscope report FILE --json --by lock|task|caller`
and perf.  Exact oracles (counts and nanoseconds):
  * `perf script --ns -F tid,cpu,time,event,trace,ip,sym,symoff`: the capture's own
    contention_begin/end records, paired per thread (the idle task per CPU) as
    a thread's waits nest: a begin while the thread already waits for that
    lock is ignored (mutex spin, then sleep); an end closes the innermost wait
    for its lock, and waits begun inside that one are over too: their ends
    were lost (perf drops a tracepoint record that fires while it is writing
    another in the same context), so they count as lost, as does an end
    whose begin came before the capture.  Pairing per thread and lock alone
    would join such a begin with the lock's next end, a wait of milliseconds
    on a spinlock.
    Per lock address, per thread and in total; and per caller, the caller
    found in each begin's callchain (printed with -F ip,sym,symoff) the way
    perf lock contention --stack-skip=1 finds it: past the first frame, the
    first named frame outside the lock text (__sched_text, __lock_text of
    /proc/kallsyms).
  * `perf lock contention -i FILE --stack-skip=1 -E N` (callers) and
    `--threads` (threads): counts per caller and per thread, exact; perf
    prints times rounded to 3 significant digits and a unit, so its times are
    held to that rounding (and the exact totals come from perf script).
Exit status 0 when everything agrees, 1 if not.  Prints the agreement figures.
"""
import argparse
import json
import re
import sys

UNITS = {"ns": 1, "us": 1000, "ms": 1000000, "s": 1000000000}
TIME = r"([\d.]+)\s+(ns|us|ms|s)"
ROW = re.compile(r"^\s*(\d+)\s+" + TIME + r"\s+" + TIME + r"\s+" + TIME + r"\s+(\S+)\s*(.*?)\s*$")
SCRIPT = re.compile(r"^\s*(\d+)\s+\[(\d+)\]\s+(\d+)\.(\d{9}):\s+lock:contention_(begin|end):\s+"
                    r"(0x[0-9a-f]+)")
DEPTH = 8	# nested waits a thread may have (mmscope's too; deeper: the oldest is dropped)
FRAME = re.compile(r"^\s+([0-9a-f]+)\s+(\S+)")


def lock_text(path):
    """The address ranges of the lock primitives, as perf's is_lock_function."""
    at = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            w = line.split()
            if len(w) >= 3 and w[2] in ("__sched_text_start", "__sched_text_end",
                                        "__lock_text_start", "__lock_text_end"):
                at[w[2]] = int(w[0], 16)
    return [(at["__sched_text_start"], at["__sched_text_end"]),
            (at["__lock_text_start"], at["__lock_text_end"])]


def caller_of(frames, ranges):
    for ip, sym in frames[1:]:
        if sym.startswith("[unknown]"):
            continue
        if not any(lo <= ip < hi for lo, hi in ranges):
            return sym
    return "unknown"


def perf_rows(path):
    """(contended, total ns, half a printed unit's last digit, ended, label) per row.

    ended: the waits whose time the row holds (total / avg; perf prints the
    waits begun).  perf 6.1 books a wait's time to the row of its end's
    callchain, so a row can hold fewer ends than begins (and another row the
    rest): the time of such a caller is not the time of its waits.
    """
    rows = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = ROW.match(line)
            if not m:
                continue
            val, unit = m[2], m[3]
            decimals = len(val.split(".")[1]) if "." in val else 0
            slack = UNITS[unit] / 10 ** decimals / 2
            total, avg = float(val) * UNITS[unit], float(m[6]) * UNITS[m[7]]
            ended = round(total / avg) if avg else int(m[1])
            rows.append((int(m[1]), total, slack, ended, m[8], m[9]))
    return rows


def script_pairs(path, ranges):
    """Waits paired per thread, as they nest, from perf's records; and the waits lost."""
    waiting, by_lock, by_tid, by_caller = {}, {}, {}, {}
    records, lost = [], 0
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = SCRIPT.match(line)
            if m:
                records.append([m, []])
                continue
            fm = FRAME.match(line)
            if fm and records:
                records[-1][1].append((int(fm[1], 16), fm[2]))
    for m, frames in records:
        tid, cpu, addr = int(m[1]), int(m[2]), int(m[6], 16)
        t = int(m[3]) * 1000000000 + int(m[4])
        stack = waiting.setdefault(tid if tid else ("idle", cpu), [])
        at = [i for i, w in enumerate(stack) if w[0] == addr]
        if m[5] == "begin":
            if at:
                continue
            if len(stack) == DEPTH:
                del stack[0]
                lost += 1
            stack.append((addr, t, caller_of(frames, ranges)))
            continue
        if not at:
            lost += 1
            continue
        _, t0, caller = stack[at[-1]]
        lost += len(stack) - 1 - at[-1]
        del stack[at[-1]:]
        if t < t0:
            lost += 1
            continue
        for tab, k in ((by_lock, addr), (by_tid, tid), (by_caller, caller)):
            c, s = tab.get(k, (0, 0))
            tab[k] = (c + 1, s + t - t0)
    return by_lock, by_tid, by_caller, lost


def ours(path, key):
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    out = {}
    for r in doc["rows"]:
        k = key(r)
        c, s = out.get(k, (0, 0))
        out[k] = (c + r["contended"], s + r["wait_total_ns"])
    return doc, out


def exact(title, perf, mine):
    keys = sorted(set(perf) | set(mine), key=lambda k: -perf.get(k, (0, 0))[1])
    bad = [k for k in keys if perf.get(k) != mine.get(k)]
    pc = sum(c for c, _ in perf.values())
    pt = sum(t for _, t in perf.values())
    print(f"{title}: {len(keys)} keys, {pc} waits, {pt} ns in perf; "
          f"{len(keys) - len(bad)} agree exactly, {len(bad)} do not")
    for k in bad[:10]:
        print(f"  {k}: perf {perf.get(k)}, mmscope {mine.get(k)}")
    return len(bad)


def rounded(title, rows, label, mine):
    perf = {}
    for c, t, slack, ended, typ, lab in rows:
        k = label(typ, lab)
        pc, pt, ps, pe = perf.get(k, (0, 0.0, 0.0, 0))
        perf[k] = (pc + c, pt + t, ps + slack, pe + ended)
    bad = elsewhere = 0
    for k, (pc, pt, ps, pe) in sorted(perf.items(), key=lambda kv: -kv[1][1]):
        mc, mt = mine.get(k, (0, 0))
        ok = mc == pc and (pe != pc or abs(mt - pt) <= ps + 1e-6)
        elsewhere += pe != pc
        bad += not ok
        if not ok or pe != pc:
            print(f"  {k}: perf {pc} waits {pt:.0f} ns (+-{ps:.0f}) for {pe} ends, "
                  f"mmscope {mc} waits {mt} ns{'' if ok else ': FAIL'}")
    extra = [k for k in mine if k not in perf]
    bad += len(extra)
    for k in extra[:10]:
        print(f"  {k}: only mmscope has it: {mine[k]}")
    n = sum(v[0] for v in perf.values())
    print(f"{title}: {len(perf)} keys, {n} waits; counts exact, and times within perf's "
          f"printed rounding, for {len(perf) - bad} of them ({elsewhere} with ends perf booked "
          f"to another stack's row: counts only), {bad} disagree")
    return bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--script", required=True)
    ap.add_argument("--callers", required=True, help="perf lock contention --stack-skip=1")
    ap.add_argument("--threads", required=True, help="perf lock contention --threads")
    ap.add_argument("--by-lock", required=True)
    ap.add_argument("--by-task", required=True)
    ap.add_argument("--by-caller", required=True)
    ap.add_argument("--kallsyms", default="/proc/kallsyms")
    ap.add_argument("--min-waits", type=int, default=100)
    ap.add_argument("--perf-tables", choices=["judge", "show"], default="judge",
                    help="show: perf lock contention's tables are printed, not judged "
                         "(system-wide captures: perf 6.1 counts more waits than it pairs "
                         "and books some to rows of other stacks)")
    a = ap.parse_args()

    by_lock, by_tid, by_caller, plost = script_pairs(a.script, lock_text(a.kallsyms))
    doc, mlock = ours(a.by_lock, lambda r: int(r["addr"], 16))
    _, mtask = ours(a.by_task, lambda r: r["pid"])
    _, mcaller = ours(a.by_caller, lambda r: r["name"])
    print(f"mmscope source: {doc['sources']['lock']}")
    lost = {k: v for k, v in doc.get("lost", {}).items() if v}
    print(f"mmscope lost: {lost or 'none'}")
    total = (sum(c for c, _ in by_lock.values()), sum(t for _, t in by_lock.values()))
    mine = (doc["totals"]["contended"], doc["totals"]["wait_total_ns"])
    bad = 0
    if total[0] < a.min_waits:
        print(f"FAIL: only {total[0]} waits in the capture (wanted {a.min_waits})")
        return 1
    print(f"total: perf script {total[0]} waits {total[1]} ns; mmscope {mine[0]} waits "
          f"{mine[1]} ns: {'exact' if total == mine else 'DIFFERENT'}")
    bad += total != mine
    # An unpaired end, or a wait whose end never came (the depth's overflow too).
    mlost = doc.get("lost", {}).get("time", 0) + doc.get("lost", {}).get("task_slot", 0)
    print(f"lost: perf script {plost} waits, mmscope {mlost}: "
          f"{'exact' if plost == mlost else 'DIFFERENT'}")
    bad += plost != mlost
    bad += exact("locks (perf script, per address)", by_lock, mlock)
    bad += exact("tasks (perf script, per thread)", by_tid, mtask)
    bad += exact("callers (perf script, caller of each begin)", by_caller, mcaller)
    pb = rounded("tasks (perf lock contention --threads)", perf_rows(a.threads),
                 lambda typ, lab: int(typ), mtask)
    pb += rounded("callers (perf lock contention --stack-skip=1)", perf_rows(a.callers),
                  lambda typ, lab: lab if lab and lab != "Unknown" else "unknown", mcaller)
    if a.perf_tables == "judge":
        bad += pb
    elif pb:
        print("  (perf lock contention's tables shown, not judged: perf script's records are "
              "the oracle here)")
    print("PASS" if not bad else f"FAIL: {bad} disagreement(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
