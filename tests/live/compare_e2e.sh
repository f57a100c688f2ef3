#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# A/B compare end to end: record a light and a heavy variant of mmap_churn
# (3 runs each, 2 s), compare them, and check what a patch mail would say.
#
#   light: 2 processes of 1 thread: nothing shares an mm, so mmap_lock is
#          never contended and the lock wait is background noise.
#   heavy: 2 processes of 4 threads churning mappings: mmap_lock contends,
#          wait/s of all locks goes from a few ms/s to seconds per second.
#
# Checked: all locks wait/s is higher on heavy and "significant"; i_mmap_rwsem
# (no variant maps a file, so no variant contends it) is a measured 0 on both
# sides, "within noise", not missing and not n/a; the text output keeps to 80
# columns; CSV and JSON agree on the verdicts.
#
#   compare_e2e.sh MMSCOPE MMAP_CHURN
set -u

mmscope=$1
churn=$2
runs=3

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || skip "needs root (BPF, tracepoints)"
dir=$(mktemp -d /tmp/mmscope-compare.XXXXXX) || fail "mktemp"
trap 'if [ -n "${KEEP:-}" ]; then echo "kept $dir"; else rm -rf "$dir"; fi' EXIT

record() {	# record NAME CHURN-ARGS...
	local f=$dir/$1.mmscope
	shift
	"$mmscope" record -o "$f" --duration 5 -- "$churn" -s 2 "$@" \
		>"$f.out" 2>"$f.err"
	local rc=$?
	grep -q "no lock contention source works" "$f.err" && skip "no lock source"
	[ $rc = 0 ] || fail "record exited $rc: $(cat "$f.err")"
	grep -q '^ops_per_sec=' "$f.out" || fail "mmap_churn did not finish: $(cat "$f.out")"
}

for i in $(seq $runs); do
	record "light$i" -t 1 -P 2
	record "heavy$i" -t 4 -P 2
done
light=$(for i in $(seq $runs); do echo "$dir/light$i.mmscope"; done)
heavy=$(for i in $(seq $runs); do echo "$dir/heavy$i.mmscope"; done)

# shellcheck disable=SC2086
"$mmscope" compare --json --base light --new heavy $light -- $heavy >"$dir/cmp.json" \
	2>"$dir/cmp.err" || fail "compare --json: $(cat "$dir/cmp.err")"
# shellcheck disable=SC2086
"$mmscope" compare --csv --base light --new heavy $light -- $heavy >"$dir/cmp.csv" \
	2>"$dir/cmp.err" || fail "compare --csv: $(cat "$dir/cmp.err")"
# shellcheck disable=SC2086
"$mmscope" compare -E 3 --base light --new heavy $light -- $heavy >"$dir/cmp.txt" \
	2>"$dir/cmp.err" || fail "compare: $(cat "$dir/cmp.err")"

python3 - "$dir/cmp.json" "$dir/cmp.csv" "$dir/cmp.txt" "$runs" <<'EOF' || fail "compare says the wrong thing (KEEP=1 keeps $dir)"
import csv, json, sys
cmp = json.load(open(sys.argv[1]))
runs = int(sys.argv[4])
ok = True
def check(cond, what):
    global ok
    print(("ok:   " if cond else "FAIL: ") + what)
    ok = ok and cond
def row(name, metric):
    for r in cmp["rows"]:
        if r["name"] == name and r["metric"] == metric:
            return r
    return None
def show(r):
    return "%s %s: light %s, heavy %s, change %s, p %s, %s" % (
        r["name"], r["metric"], r["base"]["values"], r["new"]["values"],
        r["change_pct"], r.get("p"), r["verdict"])

check(cmp["runs"] == [runs, runs], "%d runs a side" % runs)
w = row("all locks", "wait/s")
check(w is not None, "all locks wait/s is compared")
if w:
    print("      " + show(w))
    check(w["base"]["n"] == runs and w["new"]["n"] == runs, "every run has a value")
    check(w["new"]["avg"] > w["base"]["avg"], "heavy waits more than light")
    check(min(w["new"]["values"]) > max(w["base"]["values"]),
          "every heavy run waits more than every light run")
    check(w["verdict"] == "significant" and w["significant"], "and it is significant")
    # A quiet machine gives the light side no wait at all: the change is then
    # "from 0" (JSON null, docs/COMPARE.md), else more than doubled.
    if w["base"]["avg"] == 0:
        check(w["change_pct"] is None, "from 0: no percentage (null)")
    else:
        check(w["change_pct"] is not None and w["change_pct"] > 100, "by more than +100 %")
# Neither variant maps a file: i_mmap_rwsem is a measured 0, not n/a, not absent.
z = row("all i_mmap_rwsem", "contended/s")
check(z is not None, "i_mmap_rwsem is compared although nobody contended it")
if z:
    print("      " + show(z))
    check(not z["base"]["na"] and not z["new"]["na"], "it is measured on both sides")
    check(z["verdict"] == "within noise" and not z["significant"], "and within noise")
a = row("all i_mmap_rwsem", "avg wait")
check(a is not None, "its avg wait is there too")
if z and a:
    fake = [(s, k) for s in ("base", "new") for k in range(runs)
            if z[s]["values"][k] == 0 and a[s]["values"][k] is not None]
    check(not fake, "a run without waits has no avg wait (null), never a fake 0")
# mmap_lock of the workload, matched by process name across runs and pids.
m = [r for r in cmp["rows"] if r["group"] == "locks" and r["name"].startswith("mmap_lock")]
check(any(r["name"] == "mmap_lock (mmap_churn)" for r in m),
      "mmap_lock (mmap_churn) is one row across runs: %s" % sorted({r["name"] for r in m}))
# CSV says the same.
rows = list(csv.DictReader(open(sys.argv[2])))
c = [r for r in rows if r["name"] == "all locks" and r["metric"] == "wait/s"]
check(len(c) == 1 and c[0]["verdict"] == "significant", "CSV: all locks wait/s significant")
# Text pastes into a mail: never wider than 80 columns.
lines = open(sys.argv[3]).read().splitlines()
wide = [l for l in lines if len(l) > 80]
check(not wide, "text is at most 80 columns (%d lines)" % len(lines))
check(any(l.startswith("all locks: wait/s") for l in lines), "text has the all locks block")
sys.exit(0 if ok else 1)
EOF
echo "PASS"
