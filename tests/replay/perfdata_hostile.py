#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Hostile perf.data files made from a real capture, each read by mmscope.

Every variant (truncated anywhere, sizes and counts past the file, offsets
outside it, a 3 GiB sparse data section, records that lie about their
sizes, control characters in thread names, random byte flips) goes through
`mmscope info` and `mmscope report --by task`.  Each run must end by itself
(exit 0 or 1, no signal), within --cpu seconds of CPU and --rss MiB of
memory, and print no control character but newline and tab.

    perfdata_hostile.py MMSCOPE CAPTURE WORKDIR
"""
import argparse
import os
import random
import resource
import struct
import subprocess
import sys

HDR = struct.Struct("<8sQQQQQQQQ")  # magic, size, attr_size, attrs, data, event_types


def fields(b):
    magic, size, attr_size, ao, asz, do, dsz, eo, esz = HDR.unpack_from(b)
    return {"attr_size": attr_size, "attrs": (ao, asz), "data": (do, dsz)}


def put64(b, off, v):
    b[off:off + 8] = struct.pack("<Q", v & (2**64 - 1))


def records(b):
    """(offset, type, size) of each record of the data section."""
    f = fields(b)
    off, end = f["data"][0], f["data"][0] + f["data"][1]
    while off + 8 <= end:
        typ, misc, size = struct.unpack_from("<IHH", b, off)
        if size < 8:
            break
        yield off, typ, size
        off += size


def features(b):
    f = fields(b)
    bits = struct.unpack_from("<4Q", b, 72)
    at = f["data"][0] + f["data"][1]
    out, k = {}, 0
    for bit in range(256):
        if bits[bit // 64] >> (bit % 64) & 1:
            out[bit] = at + 16 * k
            k += 1
    return out


def variants(orig, rnd):
    f = fields(orig)
    size = len(orig)
    do, dsz = f["data"]
    ao, asz = f["attrs"]
    for cut in (8, 16, 60, 104, ao + asz // 2, do, do + 7, do + dsz // 3, do + dsz - 1,
                do + dsz + 20, size - 1):
        yield f"cut-{cut}", bytes(orig[:cut]), None
    for name, off, v in (("attr-size-huge", 16, 2**63), ("attr-size-odd", 16, 137),
                         ("attrs-off-huge", 24, 2**62), ("attrs-size-huge", 32, 2**62),
                         ("attrs-size-big", 32, 1 << 30), ("data-off-huge", 40, 2**63 + 8),
                         ("data-size-huge", 48, 2**63), ("data-size-zero", 48, 0),
                         ("header-size-pipe", 8, 16), ("header-size-huge", 8, 2**40)):
        b = bytearray(orig)
        put64(b, off, v)
        yield name, bytes(b), None
    b = bytearray(orig)
    b[72:104] = b"\xff" * 32  # every feature claimed: sections read from the data
    yield "all-features", bytes(b), None
    for bit, at in features(orig).items():
        for what, off, v in (("off", 0, 2**63), ("size", 8, 2**62), ("size1", 8, 1)):
            b = bytearray(orig)
            put64(b, at + off, v)
            yield f"feat{bit}-{what}", bytes(b), None
    # attribute 0's ids section, then its sample_type with fields mmscope does not read
    attr_size = f["attr_size"]
    b = bytearray(orig)
    put64(b, ao + attr_size - 8, 2**62)
    yield "ids-size-huge", bytes(b), None
    b = bytearray(orig)
    put64(b, ao + 24, 2**64 - 1)
    yield "sample-type-all", bytes(b), None
    # records that lie
    recs = list(records(orig))
    samples = [r for r in recs if r[1] == 9]
    comms = [r for r in recs if r[1] == 3]
    if samples:
        off, _, sz = samples[0]
        for name, at, val, n in (("rec-size-0", off + 6, 0, 2), ("rec-size-8", off + 6, 8, 2),
                                 ("rec-size-max", off + 6, 0xfff8, 2),
                                 ("rec-size-odd", off + 6, sz + 3, 2)):
            b = bytearray(orig)
            b[at:at + n] = val.to_bytes(n, "little")
            yield name, bytes(b), "readable"
        # callchain nr and raw size: every u64 of the sample in turn set huge
        for k in range(1, sz // 8):
            b = bytearray(orig)
            put64(b, off + 8 * k, 2**63 + 5)
            yield f"sample-word{k}-huge", bytes(b), "readable"
            b = bytearray(orig)
            b[off + 8 * k:off + 8 * k + 4] = struct.pack("<I", 0xffffffff)
            yield f"sample-word{k}-u32", bytes(b), "readable"
    for off, _, sz in comms[:3]:
        b = bytearray(orig)
        b[off + 16:off + 16 + 8] = b"\x1b[2J\x07\x1b]0"  # terminal escapes as a comm
        yield f"comm-escape-{off}", bytes(b), "readable"
    # the data section, sparse, past 3 GiB: nothing may read it whole
    yield "sparse-3g", bytes(orig), "sparse"
    for i in range(40):
        b = bytearray(orig)
        for _ in range(rnd.randint(1, 16)):
            b[rnd.randrange(len(b))] = rnd.randrange(256)
        yield f"flip-{i}", bytes(b), None


def bad_chars(out):
    return [c for c in out if c < 0x20 and c not in (9, 10)] + [c for c in out if c == 0x7f]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mmscope")
    ap.add_argument("capture")
    ap.add_argument("workdir")
    ap.add_argument("--cpu", type=float, default=5.0)
    ap.add_argument("--rss", type=float, default=256.0, help="MiB")
    a = ap.parse_args()
    wrap = os.environ.get("MMSCOPE_WRAP", "").split()
    with open(a.capture, "rb") as f:
        orig = f.read()
    rnd = random.Random(26)
    readable = 0
    path = os.path.join(a.workdir, "hostile.data")
    bad, n, worst_rss, worst_cpu = 0, 0, 0, 0.0
    todo = [("original", orig, "readable")] + list(variants(orig, rnd))
    if wrap:
        # under valgrind a run takes 3-4 s: 24 variants, from all over the list
        todo = todo[::max(1, len(todo) // 24)][:24]
    for name, data, kind in todo:
        with open(path, "wb") as f:
            f.write(data)
        if kind == "sparse":
            with open(path, "r+b") as f:
                do = fields(data)["data"][0]
                f.truncate(3 << 30)
                f.seek(48)
                f.write(struct.pack("<Q", (3 << 30) - do))
        for args in (["info", path], ["report", path, "--by", "task"]):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            try:
                p = subprocess.run(wrap + [a.mmscope] + args, capture_output=True,
                                   timeout=60 if not wrap else 600)
            except subprocess.TimeoutExpired:
                print(f"FAIL {name}: {' '.join(args[:1])} did not end in 60 s")
                bad += 1
                continue
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            rss = after.ru_maxrss / 1024.0  # the largest child so far, in MiB
            worst_rss, worst_cpu = max(worst_rss, rss), max(worst_cpu, cpu)
            n += 1
            why = []
            if kind == "readable" and p.returncode:
                why.append("not read (the damage is in the records: what came before "
                           "them must be)")
            readable += kind == "readable" and not p.returncode
            if p.returncode not in (0, 1):
                why.append(f"exit {p.returncode}")
            if not wrap and cpu > a.cpu:
                why.append(f"{cpu:.2f} s of CPU")
            if not wrap and rss > a.rss:
                why.append(f"{rss:.0f} MiB")
            if bad_chars(p.stdout) or bad_chars(p.stderr):
                why.append("control characters in its output")
            if p.returncode == 1 and not p.stderr.strip():
                why.append("failed without saying why")
            if why:
                bad += 1
                print(f"FAIL {name}: mmscope {args[0]}: {', '.join(why)}: "
                      f"{p.stderr.decode(errors='replace')[-300:]}")
    os.unlink(path)
    print(f"{n} runs on hostile captures ({readable} of damaged records, read up to the "
          f"damage); largest RSS {worst_rss:.1f} MiB, most CPU "
          f"{worst_cpu:.2f} s (limits {a.rss:g} MiB, {a.cpu:g} s); {bad} failed")
    if not readable:
        bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
