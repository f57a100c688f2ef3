#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""compare's owners group (-k owners) on recordings whose owners are known.

    compare_owners.py MMSCOPE

Writes recordings of format 1.4 (lock rows with the owner and its stack, as
`record --lock-owner` makes them) and 1.3 (no owners) by hand, 2 intervals of
1 s each, then checks `mmscope compare` against numbers worked out here:

  base  3 runs (--lock-owner): run k books 9 + k waits of 1 ms an interval to
        "holder" (tid 1000 + k: tids differ between runs) asleep at
        handle_userfault+0x1a5+k under generic_perform_write: 9, 10, 11 ms/s;
        2 waits of 1 ms an interval on rwsem readers (2 ms/s); 1 wait of
        500 us on a spinlock (owner unknown, 0.5 ms/s).
  new   3 runs (--lock-owner): 4 + k waits of 1 ms to the holder: 4, 5, 6 ms/s,
        and the readers' 2 ms/s; no spinlock.
  old   2 runs of format 1.3: waits, no owners.
  plain 2 runs of format 1.4 without --lock-owner: waits, every owner 0.
  spin  2 runs of format 1.4 with --lock-owner that only a spinlock contended:
        every owner 0 (unknown), 3 ms/s.
  evil  1 run whose owner stack symbol holds escape sequences.

Checked: handle_userfault's wait/s per run, avg, change -50 % and
"significant"; the unknown owner a measured 0 on new; a side of old or plain
runs n/a (null values), never 0; spin's runs do have owners (unknown 3 ms/s,
handle_userfault a measured 0); old against old has no owners row at all;
text within 80 columns and without raw control characters.

MMSCOPE_WRAP, when set, prefixes every mmscope run (as in info_fixtures.sh).
"""
import csv
import io
import json
import os
import shlex
import struct
import subprocess
import sys
import tempfile
import zlib

MAGIC = b"\x89MMSCOPE"
HEADER, STRINGS, STACKS, TASKS, LOCKS, INTERVAL, END = range(1, 8)
SLOTS = 40
STAT = 32 + 4 * SLOTS
MS = 10**6
T0 = 1700000000 * 10**9


def block(typ, payload):
    h = struct.pack("<HHII", typ, 0, len(payload), len(payload))
    return h + struct.pack("<I", zlib.crc32(h + payload)) + payload


def field(tag, value):
    return struct.pack("<HHI", tag, 0, len(value)) + value


def stat(n, each):
    hist = [0] * SLOTS
    hist[20] = n
    return struct.pack("<4Q", n, n * each, each if n else 0, each) + struct.pack(
        "<%dI" % SLOTS, *hist)


class Rec:
    """One recording: definitions once, then intervals of lock rows."""

    def __init__(self, minor, argv):
        self.minor = minor
        self.argv = argv
        self.strs, self.tasks, self.locks, self.stacks = {}, {}, {}, {}

    def s(self, text):
        b = text.encode() if isinstance(text, str) else text
        return self.strs.setdefault(b, len(self.strs) + 1)

    def task(self, tid, tgid, comm):
        key = (tid, tgid, comm)
        if key not in self.tasks:
            self.tasks[key] = (len(self.tasks) + 1, self.s(comm))
        return self.tasks[key][0]

    def lock(self, kind, addr, name):
        key = (kind, addr, name)
        if key not in self.locks:
            self.locks[key] = (len(self.locks) + 1, self.s(name))
        return self.locks[key][0]

    def stack(self, *frames):
        if frames not in self.stacks:
            self.stacks[frames] = (len(self.stacks) + 1, [self.s(f) for f in frames])
        return self.stacks[frames][0]

    def write(self, path, intervals):
        """intervals: lists of (lock, stack, task, owner, owner_stack, n, each_ns)."""
        fam = struct.pack("<I", 0) + b"lock-bpf\0bpf\0\0"
        argv = b"".join(a.encode() + b"\0" for a in self.argv)
        hp = (field(1, b"mmscope 0.1.0") + field(2, b"testhost") + field(3, b"6.18.0") +
              field(4, struct.pack("<Q", T0)) + field(5, argv) +
              field(7, struct.pack("<I", 1000)) + field(10, fam))
        out = MAGIC + struct.pack("<HHI", 1, self.minor, 16) + block(HEADER, hp)
        out += block(STRINGS, struct.pack("<I", len(self.strs)) + b"".join(
            struct.pack("<II", i, len(b)) + b for b, i in self.strs.items()))
        out += block(TASKS, struct.pack("<II", len(self.tasks), 16) + b"".join(
            struct.pack("<4I", i, k[0], k[1], c) for k, (i, c) in self.tasks.items()))
        out += block(LOCKS, struct.pack("<II", len(self.locks), 32) + b"".join(
            struct.pack("<IIQIIII", i, k[0], k[1], n, 0, 0, 0)
            for k, (i, n) in self.locks.items()))
        st = b""
        for frames, (i, syms) in self.stacks.items():
            st += struct.pack("<II", i, len(frames))
            st += b"".join(struct.pack("<Q", 0xffffffff81000000 + 64 * j + len(f))
                           for j, f in enumerate(frames))
            st += struct.pack("<%dI" % len(syms), *syms)
        out += block(STACKS, struct.pack("<I", len(self.stacks)) + st)
        key = 24 if self.minor >= 4 else 16
        for seq, rows in enumerate(intervals):
            p = struct.pack("<QQQII", seq, T0 + seq * 10**9, 10**9, 0, 0)
            p += struct.pack("<5I", SLOTS, key + STAT, len(rows), 12 + STAT, 0)
            for lk, stk, tk, owner, ostk, n, each in rows:
                p += struct.pack("<4I", lk, stk, tk, 4)  # flags: a write wait (rwsem:W)
                if key == 24:
                    p += struct.pack("<II", owner, ostk)
                p += stat(n, each)
            out += block(INTERVAL, p)
        out += block(END, field(1, struct.pack("<Q", len(intervals))))
        with open(path, "wb") as f:
            f.write(out)


def owner_run(path, k, holder_waits, readers=True, spin=0, minor=4, owners=True,
              holder_sym=None):
    argv = ["mmscope", "record"] + (["--lock-owner"] if owners else []) + [
        "-o", path, "--", "lock_owner", "-m", "file"]
    r = Rec(minor, argv)
    inode = r.lock(1, 0xffff888100000000 + 4096 * k, "&sb->s_type->i_mutex_key")
    spinlock = r.lock(1, 0xffffffff83000000, "rcu_state")
    waiter = r.task(2000 + k, 2000 + k, "writer")
    wstack = r.stack("vfs_write+0x%x" % (0x10 + k), "ksys_write+0x40")
    holder = r.task(1000 + k, 999 + k, "holder")
    hstack = r.stack(holder_sym or "handle_userfault+0x%x" % (0x1a5 + k),
                     "generic_perform_write+0x11c")
    rd = r.task(0, 0, "<readers>")
    rows = []
    if holder_waits:
        rows.append((inode, wstack, waiter, holder if owners else 0,
                     hstack if owners else 0, holder_waits, MS))
    if readers:
        rows.append((inode, wstack, waiter, rd if owners else 0, 0, 2, MS))
    if spin:
        rows.append((spinlock, wstack, waiter, 0, 0, spin, MS // 2))
    r.write(path, [rows, rows])


def main():
    mmscope = sys.argv[1]
    wrap = shlex.split(os.environ.get("MMSCOPE_WRAP", ""))
    d = tempfile.mkdtemp(prefix="mmscope-cmp-owners.")
    ok = True

    def check(cond, what):
        nonlocal ok
        print(("ok   " if cond else "FAIL ") + what)
        ok = ok and bool(cond)

    def compare(a, b, *args):
        p = subprocess.run(wrap + [mmscope, "compare", *args, *a, "--", *b],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if p.returncode:
            print("compare %s: exit %d: %s" % (" ".join(args), p.returncode, p.stderr.decode()))
            sys.exit(1)
        return p.stdout

    def rows_of(out):
        return {(r["name"], r["metric"]): r for r in json.loads(out)["rows"]}

    def files(name, n, **kw):
        out = []
        for k in range(n):
            path = os.path.join(d, "%s%d.mmscope" % (name, k))
            kw2 = dict(kw)
            if callable(kw2.get("holder_waits")):
                kw2["holder_waits"] = kw2["holder_waits"](k)
            owner_run(path, k, **kw2)
            out.append(path)
        return out

    base = files("base", 3, holder_waits=lambda k: 9 + k, spin=1)
    new = files("new", 3, holder_waits=lambda k: 4 + k)
    old = files("old", 2, holder_waits=10, minor=3, owners=False)
    plain = files("plain", 2, holder_waits=10, owners=False)
    spin = files("spin", 2, holder_waits=0, readers=False, spin=6)
    evil = files("evil", 1, holder_waits=3, holder_sym="evil\x1b]0;pwned\x07\x9b31m+0x10")

    # base against new: exact per-run rates of the holder's function.
    js = compare(base, new, "--json", "-k", "owners", "-E", "10")
    rows = rows_of(js)
    names = sorted({n for n, _ in rows})
    check(names == ["<readers>", "handle_userfault", "owner unknown"],
          "owners rows by function and bucket: %s" % names)
    check(all(r["group"] == "owners" for r in rows.values()), "-k owners: the owners group only")
    w = rows.get(("handle_userfault", "wait/s"))
    check(w is not None, "handle_userfault wait/s is compared")
    if w:
        print("     base %s, new %s, change %s, p %s, %s" % (
            w["base"]["values"], w["new"]["values"], w["change_pct"], w.get("p"), w["verdict"]))
        check(w["base"]["values"] == [9e6, 10e6, 11e6], "base: 9, 10, 11 ms/s")
        check(w["new"]["values"] == [4e6, 5e6, 6e6], "new: 4, 5, 6 ms/s")
        check(w["base"]["avg"] == 10e6 and w["new"]["avg"] == 5e6, "avg 10 ms/s and 5 ms/s")
        check(abs(w["change_pct"] + 50) < 1e-9, "change -50 %")
        check(w["verdict"] == "significant" and w["significant"], "significant")
    c = rows.get(("handle_userfault", "contended/s"))
    check(c and c["base"]["avg"] == 10 and c["new"]["avg"] == 5, "contended/s 10 and 5")
    a = rows.get(("handle_userfault", "avg wait"))
    check(a and a["base"]["avg"] == 1e6 and a["verdict"] == "within noise",
          "avg wait 1 ms on both, within noise")
    u = rows.get(("owner unknown", "wait/s"))
    check(u and u["base"]["values"] == [5e5] * 3 and u["new"]["values"] == [0, 0, 0] and
          not u["new"]["na"], "owner unknown: 0.5 ms/s on base, a measured 0 on new")
    r = rows.get(("<readers>", "wait/s"))
    check(r and r["base"]["avg"] == 2e6 and r["new"]["avg"] == 2e6, "<readers>: 2 ms/s on both")
    txt = compare(base, new, "-k", "owners").decode()
    check("\nhandle_userfault: wait/s\n" in txt and
          "  change -50.00%    significant (t=-6.12, df=4.0, p=0.004)\n" in txt,
          "text: the handle_userfault block and its verdict")
    check(all(len(l) <= 80 for l in txt.splitlines()), "text within 80 columns")

    # Runs without owners (format 1.3; 1.4 without --lock-owner): n/a, never 0.
    for other, what in ((old, "format 1.3"), (plain, "1.4 without --lock-owner")):
        rows = rows_of(compare(base, other, "--json", "-k", "owners,callers"))
        w = rows.get(("handle_userfault", "wait/s"))
        check(w and w["new"]["na"] and w["new"]["values"] == [None, None] and
              w["new"]["runs"] == 0 and w["change_pct"] is None and
              w["verdict"] == "n/a on new", "%s: owners n/a on its side, values null" % what)
        check(all(r["new"]["na"] for r in rows.values() if r["group"] == "owners"),
              "%s: every owners row n/a there" % what)
        cl = rows.get(("vfs_write (rwsem:W)", "wait/s"))
        check(cl and not cl["new"]["na"] and cl["new"]["avg"] == 12e6,
              "%s: its waits are there (caller vfs_write (rwsem:W) 12 ms/s)" % what)
        txt = compare(base, other, "-k", "owners").decode()
        check("  new        -  n/a: no lock owners in its runs (--lock-owner)\n" in txt,
              "%s: text says why" % what)

    # --lock-owner, but only a spinlock contended: owners measured, all unknown.
    rows = rows_of(compare(base, spin, "--json", "-k", "owners"))
    u = rows.get(("owner unknown", "wait/s"))
    check(u and u["new"]["values"] == [3e6, 3e6], "spinlock-only --lock-owner run: unknown 3 ms/s")
    w = rows.get(("handle_userfault", "wait/s"))
    check(w and not w["new"]["na"] and w["new"]["values"] == [0, 0],
          "and handle_userfault a measured 0 there, not n/a")

    # No run has owners: no owners row.
    out = compare(old, plain, "--json", "-k", "owners")
    check(json.loads(out)["rows"] == [], "no owners anywhere: no owners row")
    check("no metric to compare" in compare(old, plain, "-k", "owners").decode(),
          "and the text says there is nothing to compare")

    # A recording's symbol reaches the terminal escaped, and JSON stays valid.
    for args in ((), ("--json",)):
        out = compare(base, evil, "-k", "owners", *args)
        bad = [b for b in out if (b < 32 and b not in (9, 10)) or b == 127]
        check(not bad and b"\xc2\x9b" not in out,
              "evil symbol %s: no raw control character" % (args[0] if args else "text"))
    # CSV keeps names as they are, quoted (mms_esc_fput_csv): one field each.
    out = compare(base, evil, "-k", "owners", "--csv").decode()
    lines = list(csv.reader(io.StringIO(out)))
    check(len({len(l) for l in lines}) == 1 and
          sum(l[1].startswith("evil") for l in lines) == 3,
          "evil symbol --csv: quoted, one field, every line as wide as the header")
    names = {n for n, _ in rows_of(compare(base, evil, "--json", "-k", "owners"))}
    ev = sorted(n for n in names if n.startswith("evil"))
    check(len(ev) == 1 and "+0x" not in ev[0],
          "evil symbol a function name of its own, offset dropped: %r" % ev)
    if ok:
        for f in os.listdir(d):
            os.unlink(os.path.join(d, f))
        os.rmdir(d)
    else:
        print("kept " + d)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
