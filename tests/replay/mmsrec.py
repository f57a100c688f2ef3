#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A second, independent reader of docs/FORMAT.md, for the tests.

Walks the blocks of a recording, checks CRCs, decompresses with the zstd
command, decodes interval prefixes, definitions and END, and prints a JSON
summary (or one line per interval with --intervals).  Tests compare it with
`mmscope info --json`, so the C reader and the documented format cannot drift
apart unnoticed.
"""
import json
import struct
import subprocess
import sys
import zlib

MAGIC = b"\x89MMSCOPE"
TYPES = {1: "header", 2: "strings", 3: "stacks", 4: "tasks", 5: "locks", 6: "interval", 7: "end"}


def unzstd(data, raw):
    out = subprocess.run(["zstd", "-d", "-q", "-c"], input=data, stdout=subprocess.PIPE,
                         check=True).stdout
    if len(out) != raw:
        raise ValueError("zstd size mismatch")
    return out


def fields(p):
    off, out = 0, {}
    while off < len(p):
        tag, _, n = struct.unpack_from("<HHI", p, off)
        off += 8
        out.setdefault(tag, []).append(p[off:off + n])
        off += n
    return out


class Varints:
    """LEB128 varints, read one after another (packed interval rows)."""

    def __init__(self, p, off):
        self.p, self.off = p, off

    def get(self):
        v, shift = 0, 0
        while True:
            if self.off >= len(self.p) or shift > 63:
                raise ValueError("malformed varint")
            b = self.p[self.off]
            self.off += 1
            v |= (b & 0x7F) << shift
            if not b & 0x80:
                if v >= 1 << 64:
                    raise ValueError("varint over 64 bits")
                return v
            shift += 7

    def column(self, n, limit=1 << 64):
        col = [self.get() for _ in range(n)]
        if any(v >= limit for v in col):
            raise ValueError("field too large")
        return col


def packed_counts(p, off, n, keys, slots):
    """Decodes n packed rows of `keys` key columns; returns (their counts, next offset)."""
    r = Varints(p, off)
    for _ in range(keys):
        r.column(n, 1 << 32)
    count = r.column(n)
    r.column(n)  # total
    r.column(n)  # min
    r.column(n)  # max - min
    nonempty = r.column(n, slots + 1)
    for i in range(n):
        slot = 0
        for _ in range(nonempty[i]):
            slot += r.get()
            if slot >= slots or r.get() >= 1 << 32:
                raise ValueError("bad histogram slot")
            slot += 1
    return count, r.off


def interval(p, bflags, minor):
    # 1.4: lock rows carry the owner and its stack after flags (24 key bytes, not 16).
    key = 24 if minor >= 4 else 16
    seq, start, dur, flags, n_lost = struct.unpack_from("<QQQII", p, 0)
    off = 32
    lost = list(struct.unpack_from("<%dQ" % n_lost, p, off))
    off += 8 * n_lost
    slots, lock_rs, n_locks, metric_rs, n_metrics = struct.unpack_from("<5I", p, off)
    off += 20
    if bflags & 2:  # packed rows: varint columns
        counts, off = packed_counts(p, off, n_locks, key // 4, slots)
        packed_counts(p, off, n_metrics, 3, slots)
        waits = sum(counts)
    else:
        waits = 0
        for i in range(n_locks):
            waits += struct.unpack_from("<Q", p, off + i * lock_rs + key)[0]
    return {"seq": seq, "start_ns": start, "dur_ns": dur, "flags": flags, "lost": lost,
            "locks": n_locks, "metrics": n_metrics, "waits": waits}


def read(path):
    buf = open(path, "rb").read()
    s = {"file_bytes": len(buf), "intervals": [], "closed": False, "damaged": False,
         "unknown_blocks": 0, "defs": {}, "blocks": 0}
    if buf[:8] != MAGIC:
        raise ValueError("bad magic")
    major, minor, hsize = struct.unpack_from("<HHI", buf, 8)
    s["format"] = "%d.%d" % (major, minor)
    off = hsize
    while off < len(buf):
        if len(buf) - off < 16:
            s["damaged"] = True
            break
        typ, flags, stored, raw, crc = struct.unpack_from("<HHIII", buf, off)
        payload = buf[off + 16:off + 16 + stored]
        if len(payload) < stored or zlib.crc32(buf[off:off + 12] + payload) != crc:
            s["damaged"] = True
            break
        s["blocks"] += 1
        off += 16 + stored
        name = TYPES.get(typ)
        if not name:
            s["unknown_blocks"] += 1
            continue
        p = unzstd(payload, raw) if flags & 1 else payload
        if name == "header":
            f = fields(p)
            s["host"] = f[2][0].decode(errors="replace")
            s["kernel"] = f[3][0].decode(errors="replace")
        elif name == "interval":
            s["intervals"].append(interval(p, flags, minor))
        elif name == "end":
            s["closed"] = True
            f = fields(p)
            s["end_reason"] = f.get(2, [b""])[0].decode(errors="replace")
        else:
            s["defs"][name] = s["defs"].get(name, 0) + struct.unpack_from("<I", p, 0)[0]
    s["good_bytes"] = off if not s["damaged"] else off
    return s


def main():
    s = read(sys.argv[-1])
    if "--intervals" in sys.argv:
        for iv in s["intervals"]:
            print(json.dumps(iv))
        return
    ivs = s.pop("intervals")
    s["intervals"] = len(ivs)
    s["lock_rows"] = sum(i["locks"] for i in ivs)
    s["metric_rows"] = sum(i["metrics"] for i in ivs)
    s["waits"] = sum(i["waits"] for i in ivs)
    s["lost"] = sum(sum(i["lost"]) for i in ivs)
    s["first_ns"] = ivs[0]["start_ns"] if ivs else 0
    s["end_ns"] = ivs[-1]["start_ns"] + ivs[-1]["dur_ns"] if ivs else 0
    print(json.dumps(s, sort_keys=True))


if __name__ == "__main__":
    main()
