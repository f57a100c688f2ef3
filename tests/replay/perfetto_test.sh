#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `export --perfetto` on committed recordings: the file follows the Trace Event Format's
# rules as ui.perfetto.dev and chrome://tracing read them (a traceEvents array; every event
# with name, ph, ts in microseconds, pid and tid of the right types; counter args numeric;
# timestamps ordered; metadata naming the track groups), its counters add up to the
# report's own totals, a recording whose target exited has the instant event, and an
# empty recording still gives a valid trace.
#
#   perfetto_test.sh MMSCOPE FIXTURE_DIR
#
# MMSCOPE_WRAP, when set, prefixes every mmscope run (valgrind in scripts/test.sh).
set -u

mmscope=$1
fixtures=$2
here=$(cd "$(dirname "$0")" && pwd)
demo=$here/../../examples/demo.mmscope

# shellcheck disable=SC2086 # MMSCOPE_WRAP is a command line
mms() { ${MMSCOPE_WRAP:-} "$mmscope" "$@"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

dir=$(mktemp -d "${TMPDIR:-/tmp}/mmscope-perfetto.XXXXXX") || fail "mktemp"
trap 'rm -rf "$dir"' EXIT

for f in "$demo" "$fixtures/live-packed.mmscope" "$fixtures/header-only.mmscope"; do
	b=$(basename "$f")
	mms export --perfetto "$dir/$b.json" "$f" || fail "export of $b exited $?"
	mms report "$f" --by lock --json -E 0 >"$dir/$b.report" || fail "report of $b exited $?"
	mms info "$f" --json >"$dir/$b.info" || fail "info of $b exited $?"
done

python3 - "$dir" "$(basename "$demo")" <<'PY' || exit 1
import json, math, sys
d, demo = sys.argv[1], sys.argv[2]

def check(name):
    t = json.load(open(f"{d}/{name}.json"))
    if not isinstance(t, dict) or not isinstance(t.get("traceEvents"), list):
        sys.exit(f"FAIL: {name}: no traceEvents array")
    if t.get("displayTimeUnit") not in (None, "ms", "ns"):
        sys.exit(f"FAIL: {name}: displayTimeUnit {t['displayTimeUnit']!r}")
    last = -1.0
    groups = {}
    for i, e in enumerate(t["traceEvents"]):
        where = f"{name} event {i} {e!r}"
        for k, ty in (("name", str), ("ph", str), ("pid", int), ("tid", int)):
            if not isinstance(e.get(k), ty) or isinstance(e.get(k), bool):
                sys.exit(f"FAIL: {where}: {k} is not {ty.__name__}")
        ts = e.get("ts")
        if not isinstance(ts, (int, float)) or isinstance(ts, bool) or ts < 0 or not math.isfinite(ts):
            sys.exit(f"FAIL: {where}: ts is not a non-negative number")
        ph = e["ph"]
        if ph == "M":
            if e["name"] == "process_name":
                groups[e["pid"]] = e["args"]["name"]
            continue
        if ph not in ("C", "i"):
            sys.exit(f"FAIL: {where}: phase {ph!r} is not one mmscope writes")
        if e["pid"] not in groups:
            sys.exit(f"FAIL: {where}: pid has no process_name metadata before it")
        if ts < last:
            sys.exit(f"FAIL: {where}: ts goes back from {last}")
        last = ts
        if ph == "C":
            a = e.get("args")
            if not isinstance(a, dict) or not a:
                sys.exit(f"FAIL: {where}: a counter without args")
            for k, v in a.items():
                if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v) or v < 0:
                    sys.exit(f"FAIL: {where}: counter arg {k} is not a number")
        if ph == "i" and e.get("s") not in ("g", "p", "t"):
            sys.exit(f"FAIL: {where}: instant scope {e.get('s')!r}")
    return t

def counters(t, pid, name):
    return [(e["ts"], e["args"]) for e in t["traceEvents"]
            if e["ph"] == "C" and e["pid"] == pid and e["name"] == name]

# The demo: the counters, integrated over each interval, give the report's totals.
t = check(demo)
rows = json.load(open(f"{d}/{demo}.report"))["rows"]
info = json.load(open(f"{d}/{demo}.info"))
allc = counters(t, 1, "all locks")
if len(allc) != info["intervals"] + 1:
    sys.exit(f"FAIL: 'all locks' has {len(allc)} events for {info['intervals']} intervals (+1 closing)")
if any(v for v in allc[-1][1].values()):
    sys.exit("FAIL: the closing event of 'all locks' is not zero")
def integral(ev, key):
    return sum(a[key] * (ev[i + 1][0] - ts) / 1e6 for i, (ts, a) in enumerate(ev[:-1]))
want_n = sum(r["contended"] for r in rows)
want_w = sum(r["wait_total_ns"] for r in rows) / 1e6
got_n, got_w = integral(allc, "contentions/s"), integral(allc, "wait ms/s")
# Starts are CLOCK_REALTIME, lengths CLOCK_MONOTONIC: a gap between intervals is a little
# time at a rate it did not have; 1 % covers it.
if abs(got_n - want_n) > 0.01 * want_n or abs(got_w - want_w) > 0.01 * want_w:
    sys.exit(f"FAIL: all locks integrate to {got_n:.0f} contentions and {got_w:.1f} ms, "
             f"the report has {want_n} and {want_w:.1f}")
top = max(rows, key=lambda r: r["wait_total_ns"])
tc = counters(t, 1, top["name"])
if not tc:
    sys.exit(f"FAIL: the top lock {top['name']!r} has no track")
got = integral(tc, "wait ms/s")
if abs(got - top["wait_total_ns"] / 1e6) > 0.01 * top["wait_total_ns"] / 1e6:
    sys.exit(f"FAIL: {top['name']} integrates to {got:.1f} ms, the report has "
             f"{top['wait_total_ns'] / 1e6:.1f}")
mm = [e for e in t["traceEvents"] if e["ph"] == "C" and e["pid"] == 2]
if not mm:
    sys.exit("FAIL: no mmap_lock track in the demo")
for g in (3, 4, 5):
    if not [e for e in t["traceEvents"] if e["ph"] == "C" and e["pid"] == g]:
        sys.exit(f"FAIL: no counter in group {g}")

# A recording whose target exited marks it; a header-only one is a valid, empty trace.
t = check("live-packed.mmscope")
inst = [e for e in t["traceEvents"] if e["ph"] == "i"]
if [e["name"] for e in inst] != ["target exited"]:
    sys.exit(f"FAIL: live-packed.mmscope: instants {inst!r}, want one 'target exited'")
t = check("header-only.mmscope")
if [e for e in t["traceEvents"] if e["ph"] != "M"]:
    sys.exit("FAIL: header-only.mmscope gave events")
print(f"ok: demo {len(allc)} intervals, {got_n:.0f} of {want_n} contentions, "
      f"{got_w:.1f} of {want_w:.1f} ms; target exit marked; empty recording valid")
PY

# Usage errors say what export takes.
out=$(mms export "$demo" 2>&1) && fail "export without --perfetto succeeded"
grep -q -- '--perfetto' <<<"$out" || fail "export without --perfetto did not say how: $out"
out=$(mms report "$demo" --perfetto "$dir/x.json" 2>&1) && fail "report --perfetto succeeded"
echo "perfetto: all checks passed"
