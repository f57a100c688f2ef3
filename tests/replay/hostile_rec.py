#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Writes hostile recordings: small files, valid checksums, built to cost a reader
memory or CPU out of all proportion to their size, or to put control characters on
a terminal (docs/SECURITY.md, "Reading a recording").

    hostile_rec.py DIR      writes DIR/<shape>.mmscope for every shape below

Each shape is one a review of the reader found (or one next to it):
  zdefs       definition blocks of zstd-compressed zeros: count 0, then 32 MiB of padding
  zstrings    STRINGS blocks of 8,000 strings of 4 KiB each, compressed: well-formed,
              32 MiB each once decompressed, and definitions stay while the file is open
  manydefs    STRINGS blocks declaring 4 million definitions each, compressed to nothing
  rowsize     a packed INTERVAL of 16,384 rows claiming 65,536 bytes per row
  bigrows     packed intervals of a million rows each
  manyrows    packed intervals of 250,000 rows each (each fits the memory budget)
  distinct    packed intervals of 65,536 metric rows of distinct keys: as many as a
              report's store keeps of an interval, none merged
  fixedrows   fixed-layout intervals of 512 rows of 65,536 bytes, compressed zeros
  endbomb     END blocks of 32 MiB of unknown fields, compressed zeros
  leftover    an interval followed by bytes no field accounts for
  names       a whole recording whose host, kernel, lock, task and symbol names hold
              ESC sequences, DEL, C1 controls and invalid UTF-8
  sparse      a valid header, then a 3 GiB hole
"""
import os
import struct
import subprocess
import sys
import zlib

MAGIC = b"\x89MMSCOPE"
HEADER, STRINGS, STACKS, TASKS, LOCKS, INTERVAL, END = range(1, 8)
ZSTD, PACKED = 1, 2
SLOTS = 40
STAT = 32 + 4 * SLOTS
LOCK_RS, METRIC_RS = 16 + STAT, 12 + STAT
EVIL = b"\x1b[2J\x1b]0;pwned\x07\x7f\xc2\x9b31m\x9b\xff"


_zstd_memo = {}


def zstd(raw):
    # Blocks repeat: compress each payload once.
    if raw not in _zstd_memo:
        _zstd_memo[raw] = _zstd(raw)
    return _zstd_memo[raw]


def _zstd(raw):
    return subprocess.run(["zstd", "-q", "-c", "--stream-size=%d" % len(raw)], input=raw, stdout=subprocess.PIPE,
                          check=True).stdout


def block(typ, payload, flags=0):
    raw = len(payload)
    if flags & ZSTD:
        payload = zstd(payload)
    h = struct.pack("<HHII", typ, flags, len(payload), raw)
    return h + struct.pack("<I", zlib.crc32(h + payload)) + payload


def field(tag, value):
    return struct.pack("<HHI", tag, 0, len(value)) + value


def header(host=b"hostile", kernel=b"6.18.0"):
    fam = struct.pack("<I", 0) + b"lock-bpf\0bpf\0\0"
    p = (field(1, b"mmscope 0.1.0") + field(2, host) + field(3, kernel) +
         field(4, struct.pack("<Q", 1700000000 * 10**9)) + field(7, struct.pack("<I", 1000)) +
         field(10, fam))
    return MAGIC + struct.pack("<HHI", 1, 1, 16) + block(HEADER, p)


def iv_prefix(seq, n_locks, n_metrics, lock_rs=LOCK_RS, metric_rs=METRIC_RS):
    return (struct.pack("<QQQII", seq, 1700000000 * 10**9 + seq * 10**9, 10**9, 0, 0) +
            struct.pack("<5I", SLOTS, lock_rs, n_locks, metric_rs, n_metrics))


def packed_zero_rows(seq, n_locks, lock_rs=LOCK_RS):
    # Nine varint columns of zeros per lock row: the smallest a row can be.
    return iv_prefix(seq, n_locks, 0, lock_rs) + bytes(9 * n_locks)


def varint(v):
    out = bytearray()
    while True:
        out.append(v & 0x7F | (0x80 if v >> 7 else 0))
        v >>= 7
        if not v:
            return bytes(out)


def shapes():
    out = {}
    pad = struct.pack("<I", 0) + bytes((32 << 20) - 4)
    out["zdefs"] = header() + b"".join(
        block(t, pad, ZSTD) for t in [STRINGS, STACKS, TASKS, LOCKS] * 10)
    n = 8000
    big = struct.pack("<I", n) + b"".join(struct.pack("<II", i + 1, 4096) + b"x" * 4096
                                          for i in range(n))
    out["zstrings"] = header() + block(STRINGS, big, ZSTD) * 40
    one = struct.pack("<II", 1, 0)  # id 1, an empty string, again and again
    n = (32 << 20) // 8 - 1
    out["manydefs"] = header() + b"".join(
        block(STRINGS, struct.pack("<I", n) + one * n, ZSTD) for _ in range(8))
    out["rowsize"] = header() + block(INTERVAL, packed_zero_rows(0, 16384, 65536),
                                      ZSTD | PACKED)
    out["bigrows"] = header() + b"".join(
        block(INTERVAL, packed_zero_rows(i, 1 << 20), ZSTD | PACKED) for i in range(20))
    out["manyrows"] = header() + b"".join(
        block(INTERVAL, packed_zero_rows(i, 250000), ZSTD | PACKED) for i in range(40))
    n = 65536
    rows = bytes(2 * n) + b"".join(varint(i) for i in range(n)) + bytes(5 * n)
    out["distinct"] = header() + block(INTERVAL, iv_prefix(0, 0, n) + rows, ZSTD | PACKED) * 8
    # One interval again and again (the reader does not check seqs).
    out["fixedrows"] = header() + block(
        INTERVAL, iv_prefix(0, 511, 0, 65536) + bytes(511 * 65536), ZSTD) * 40
    end = field(99, bytes((32 << 20) - 64))
    out["endbomb"] = header() + b"".join(block(END, end, ZSTD) for _ in range(40))
    out["leftover"] = header() + block(INTERVAL, iv_prefix(0, 0, 0) + bytes(4096))
    out["names"] = names()
    return out


def names():
    strs = {1: b"lock" + EVIL, 2: b"comm" + EVIL, 3: b"func" + EVIL + b"+0x10",
            4: b"metric" + EVIL, 5: b"/file" + EVIL}
    s = struct.pack("<I", len(strs)) + b"".join(
        struct.pack("<II", k, len(v)) + v for k, v in strs.items())
    tasks = struct.pack("<II", 1, 16) + struct.pack("<4I", 1, 42, 42, 2)
    locks = struct.pack("<II", 1, 32) + struct.pack("<IIQIIII", 1, 3, 0xffff888012345678, 1, 5,
                                                    42, 2)
    stacks = struct.pack("<I", 1) + struct.pack("<IIQI", 1, 1, 0xffffffff81000010, 3)
    stat = struct.pack("<4Q", 3, 3000, 500, 2000) + struct.pack("<%dI" % SLOTS,
                                                                 *([0] * 9 + [3] + [0] * 30))
    lock_row = struct.pack("<4I", 1, 1, 1, 0) + stat
    metric_row = struct.pack("<3I", 1, 4, 0) + stat
    p = header(b"host" + EVIL, b"kernel" + EVIL)
    for i in range(3):
        p += block(STRINGS, s) + block(TASKS, tasks) + block(LOCKS, locks) + block(STACKS, stacks)
        p += block(INTERVAL, iv_prefix(i, 1, 1) + lock_row + metric_row)
    return p + block(END, field(1, struct.pack("<Q", 3)) + field(2, b"stopped" + EVIL))


def main():
    d = sys.argv[1]
    for name, data in shapes().items():
        with open(os.path.join(d, name + ".mmscope"), "wb") as f:
            f.write(data)
    with open(os.path.join(d, "sparse.mmscope"), "wb") as f:
        f.write(header())
        f.truncate(3 << 30)


if __name__ == "__main__":
    main()
