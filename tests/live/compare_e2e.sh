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
# Owners (-k owners): 2 runs a side of `record --lock-owner -Y rwsem:W --
# lock_owner -m file` (a "holder" thread sleeps in handle_userfault holding a
# file's inode lock while 3 writers wait for it), the holder sleeping 20 ms a
# write on one side and 5 ms on the other: the heaviest owners row on both is
# the holder's function (handle_userfault, or the write path it sleeps under),
# waited on in every run; against the mmap_churn runs (no --lock-owner) the
# owners rows are n/a on that side, never 0.  Skipped (with a note) where the
# BPF lock source or userfaultfd is not available.
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

# Owners: lock_owner beside mmap_churn in the build's workloads.
owner_wl=$(dirname "$churn")/lock_owner
probe=1
if [ ! -x "$owner_wl" ]; then
	echo "note: no $owner_wl: owners compare not checked"
elif ! "$mmscope" check 2>/dev/null | grep -Eq '^lock contention +bpf +available'; then
	echo "note: no BPF lock source: owners compare not checked"
else
	"$owner_wl" -m file -f "$dir/probe" -s 0.1 >/dev/null 2>&1
	probe=$?
	[ $probe = 2 ] && echo "note: no userfaultfd here: owners compare not checked"
	[ $probe = 0 ] || [ $probe = 2 ] || fail "lock_owner -m file exited $probe"
fi
if [ $probe = 0 ]; then
	for side in slow fast; do
		delay=20
		[ $side = fast ] && delay=5
		for i in 1 2; do
			f=$dir/own-$side$i.mmscope
			"$mmscope" record --lock-owner -Y rwsem:W -o "$f" --duration 5 -- \
				"$owner_wl" -m file -f "$dir/own-$side$i.dat" -d $delay -s 1.5 \
				>"$f.out" 2>"$f.err" || fail "record --lock-owner: $(cat "$f.err")"
		done
	done
	"$mmscope" compare --json -k owners --base slow --new fast "$dir"/own-slow?.mmscope -- \
		"$dir"/own-fast?.mmscope >"$dir/own.json" 2>"$dir/cmp.err" ||
		fail "compare -k owners: $(cat "$dir/cmp.err")"
	# shellcheck disable=SC2086
	"$mmscope" compare --json -k owners --base owners --new plain "$dir"/own-slow?.mmscope -- \
		$light >"$dir/own-na.json" 2>"$dir/cmp.err" ||
		fail "compare -k owners against plain runs: $(cat "$dir/cmp.err")"
	"$mmscope" compare -k owners --base slow --new fast "$dir"/own-slow?.mmscope -- \
		"$dir"/own-fast?.mmscope >"$dir/own.txt" 2>"$dir/cmp.err" ||
		fail "compare -k owners (text): $(cat "$dir/cmp.err")"
	python3 - "$dir/own.json" "$dir/own-na.json" "$dir/own.txt" <<'EOF' || fail "compare -k owners says the wrong thing (KEEP=1 keeps $dir)"
import json, sys
cmp = json.load(open(sys.argv[1]))
na = json.load(open(sys.argv[2]))
ok = True
def check(cond, what):
    global ok
    print(("ok:   " if cond else "FAIL: ") + what)
    ok = ok and bool(cond)
def holder_fn(name):
    return name == "handle_userfault" or "write" in name
rows = [r for r in cmp["rows"] if r["metric"] == "wait/s"]
check(rows and all(r["group"] == "owners" for r in cmp["rows"]), "-k owners: owners rows only")
for r in rows[:4]:
    print("      %s: slow %s, fast %s, %s" % (r["name"], r["base"]["values"], r["new"]["values"],
                                            r["verdict"]))
for side in ("base", "new"):
    top = max(rows, key=lambda r: r[side]["avg"] if r[side]["n"] else -1, default=None)
    check(top is not None and holder_fn(top["name"]),
          "%s: the heaviest owner function is the holder's: %s" %
          (cmp[side], top["name"] if top else None))
    if top:
        check(not top[side]["na"] and all(v and v > 0 for v in top[side]["values"]),
              "%s: and it waited in every run" % cmp[side])
nr = [r for r in na["rows"] if r["group"] == "owners"]
check(nr and all(r["new"]["na"] and all(v is None for v in r["new"]["values"]) for r in nr),
      "against runs without --lock-owner: every owners row n/a on their side (%d rows)" % len(nr))
check(any(holder_fn(r["name"]) and r["base"]["n"] == 2 for r in nr),
      "and the holder's function still has its 2 runs on the owners side")
txt = open(sys.argv[3]).read().splitlines()
check(any(l.endswith(": wait/s") and holder_fn(l.rsplit(":", 1)[0]) for l in txt),
      "text names the holder's function")
check(all(len(l) <= 80 for l in txt), "owners text within 80 columns")
sys.exit(0 if ok else 1)
EOF
fi
echo "PASS"
