#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `report --folded` on the shipped demo recording and on a perf lock record capture
# (tests/data): every line is what flamegraph.pl,
# inferno and speedscope read ("frame;frame VALUE", no control characters), and the
# values add up to the report's own totals: the wait of every lock (ns) by default,
# the contentions with -k contended, and per lock with --by lock, whose root frame is
# the lock's name.
#
#   folded_test.sh MMSCOPE
#
# MMSCOPE_WRAP, when set, prefixes every mmscope run (valgrind in scripts/test.sh).
set -u

mmscope=$1
here=$(cd "$(dirname "$0")" && pwd)
demo=$here/../../examples/demo.mmscope

# shellcheck disable=SC2086 # MMSCOPE_WRAP is a command line
mms() { ${MMSCOPE_WRAP:-} "$mmscope" "$@"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

dir=$(mktemp -d "${TMPDIR:-/tmp}/mmscope-folded.XXXXXX") || fail "mktemp"
trap 'rm -rf "$dir"' EXIT

for f in "$demo" "$here/../data/perf_lock_mmap_churn.data"; do
d=$dir/$(basename "$f")
mkdir -p "$d"
mms report "$f" --folded >"$d/wait" || fail "report --folded of $f exited $?"
mms report "$f" --folded -k contended >"$d/count" || fail "report --folded -k contended exited $?"
mms report "$f" --folded --by lock >"$d/lock" || fail "report --folded --by lock exited $?"
mms report "$f" --by lock --json -E 0 >"$d/json" || fail "report --by lock --json exited $?"

python3 - "$d" <<'PY' || exit 1
import json, re, sys
d = sys.argv[1]
# flamegraph.pl's own line rule: the value is the last space-separated field.
line_re = re.compile(r'^(\S.*) ([0-9]+)$')

def read(name):
    out = []
    for n, line in enumerate(open(f"{d}/{name}", encoding="utf-8"), 1):
        line = line.rstrip("\n")
        m = line_re.match(line)
        if not m:
            sys.exit(f"FAIL: {name} line {n} is not 'frames VALUE': {line!r}")
        if any(ord(c) < 0x20 or ord(c) == 0x7f for c in line):
            sys.exit(f"FAIL: {name} line {n} has a control character: {line!r}")
        frames = m.group(1).split(";")
        if any(not f for f in frames):
            sys.exit(f"FAIL: {name} line {n} has an empty frame: {line!r}")
        out.append((frames, int(m.group(2))))
    if not out:
        sys.exit(f"FAIL: {name} is empty")
    return out

rows = json.load(open(f"{d}/json"))["rows"]
wait, count, lock = read("wait"), read("count"), read("lock")
want_wait = sum(r["wait_total_ns"] for r in rows)
want_count = sum(r["contended"] for r in rows)
got_wait, got_count = sum(v for _, v in wait), sum(v for _, v in count)
if got_wait != want_wait:
    sys.exit(f"FAIL: folded waits add up to {got_wait} ns, the report's locks to {want_wait}")
if got_count != want_count:
    sys.exit(f"FAIL: folded counts add up to {got_count}, the report's locks to {want_count}")
if len({";".join(f) for f, _ in wait}) != len(wait):
    sys.exit("FAIL: a stack is printed twice")
# No offsets: frames are functions, so one function's call sites share a box.
if any("+0x" in f for fr, _ in wait for f in fr):
    sys.exit("FAIL: a frame kept its +0x offset")
# The report's rows cut a label at 95 bytes; the root frame keeps it whole.
per_lock = {}
for fr, v in lock:
    per_lock[fr[0][:95]] = per_lock.get(fr[0][:95], 0) + v
by_name = {}
for r in rows:
    name = r["name"].replace(";", ":")[:95]
    by_name[name] = by_name.get(name, 0) + r["wait_total_ns"]
if per_lock != {k: v for k, v in by_name.items() if v}:
    bad = sorted(set(per_lock.items()) ^ set(by_name.items()))[:5]
    sys.exit(f"FAIL: --by lock root frames and waits differ from the report's locks: {bad}")
if sum(per_lock.values()) != want_wait:
    sys.exit("FAIL: --by lock waits do not add up")
print(f"ok: {d}: {len(wait)} stacks, {got_wait} ns and {got_count} contentions as in the report; "
      f"{len(per_lock)} locks as root frames")
PY

done

# Not a table format elsewhere: compare and info say so rather than print text.
for c in "info $demo" "compare $demo -- $demo"; do
	# shellcheck disable=SC2086 # the command line is split on purpose
	if out=$(mms $c --folded 2>&1); then
		fail "'$c --folded' succeeded: $out"
	fi
	grep -q -- '--folded' <<<"$out" || fail "'$c --folded' did not say why: $out"
done
echo "folded: all checks passed"
