#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Live: perf.data captures made here by Debian's perf (6.1), read by mmscope,
# against perf's own reading of the same file (perfdata_oracle.py judges).
# `perf lock record` itself asks for the callchains (--call-graph fp,8), so
# no -g is needed.  Three captures of mmap_churn:
#   cmd:   perf lock record -o F -- mmap_churn -t 4 (threads of one process)
#   procs: perf lock record -o F -- mmap_churn -P 2 -t 2 -f FILE -S (i_mmap_rwsem too)
#   all:   perf lock record -a -o F -- sleep 2, mmap_churn running beside it
# For each: mmscope report F --json --by lock|task|caller against perf script
# (waits paired per thread and lock: exact, per lock, thread and caller) and
# perf lock contention -i F --stack-skip=1 / --threads (counts exact, times
# to its printed rounding).  System-wide, perf lock contention counts more
# waits than it pairs (795 for 789 in one run) and books some waits' time to
# rows of other stacks: its tables are shown there, not judged.
# Then the same capture as if from another kernel (its os release changed):
# addresses unnamed, said so, the waits the same; and replay in tmux.
#
#   perfdata_test.sh MMSCOPE MMAP_CHURN
set -u

mmscope=$1
churn=$2
here=$(cd "$(dirname "$0")" && pwd)

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || skip "needs root (perf lock record, /proc/kallsyms)"
command -v perf >/dev/null || skip "perf is not installed (apt-get install linux-perf)"
[ -d /sys/kernel/tracing/events/lock/contention_begin ] ||
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
[ -d /sys/kernel/tracing/events/lock/contention_begin ] ||
	skip "kernel has no lock:contention_begin tracepoint"

# On a disk filesystem: msync must really write back (rmap walks under i_mmap_rwsem).
dir=$(mktemp -d /var/tmp/mmscope-perfdata.XXXXXX) || fail "mktemp"
bg=
cleanup() {
	[ -n "$bg" ] && kill "$bg" 2>/dev/null
	tmux -L "mms-perfdata-$$" kill-server 2>/dev/null
	wait 2>/dev/null
	if [ -n "${KEEP:-}" ]; then echo "kept $dir"; else rm -rf "$dir"; fi
}
trap cleanup EXIT

judge() {	# NAME [show]: mmscope's tables of $dir/NAME.data against perf's
	local f=$dir/$1.data by
	for by in lock task caller; do
		"$mmscope" report "$f" --by "$by" --json -E 0 >"$dir/$1.$by.json" 2>"$dir/$1.err" ||
			fail "$1: mmscope report --by $by: $(cat "$dir/$1.err")"
	done
	perf script -i "$f" --ns -F tid,cpu,time,event,trace,ip,sym,symoff >"$dir/$1.script" \
		2>/dev/null || fail "$1: perf script failed"
	# perf lock contention prints its table to stderr
	perf lock contention -i "$f" --stack-skip=1 -E 1000000 >"$dir/$1.callers" 2>&1 ||
		fail "$1: perf lock contention: $(tail -n 3 "$dir/$1.callers")"
	perf lock contention -i "$f" --threads -E 1000000 >"$dir/$1.threads" 2>&1 ||
		fail "$1: perf lock contention --threads: $(tail -n 3 "$dir/$1.threads")"
	echo "== $1: $(stat -c %s "$f") bytes"
	python3 "$here/perfdata_oracle.py" --script "$dir/$1.script" --callers "$dir/$1.callers" \
		--threads "$dir/$1.threads" --by-lock "$dir/$1.lock.json" \
		--by-task "$dir/$1.task.json" --by-caller "$dir/$1.caller.json" \
		--perf-tables "${2:-judge}" || fail "$1: mmscope and perf disagree"
}

perf lock record -o "$dir/cmd.data" -- "$churn" -t 4 -s 2 >"$dir/cmd.log" 2>&1 ||
	fail "perf lock record: $(tail -n 3 "$dir/cmd.log")"
judge cmd
perf lock record -o "$dir/procs.data" -- "$churn" -t 2 -P 2 -p 32 -f "$dir/file" -S -s 2 \
	>"$dir/procs.log" 2>&1 || fail "perf lock record: $(tail -n 3 "$dir/procs.log")"
judge procs
"$churn" -t 2 -s 6 >"$dir/bg.log" 2>&1 &
bg=$!
sleep 1
perf lock record -a -o "$dir/all.data" -- sleep 2 >"$dir/all.log" 2>&1 ||
	fail "perf lock record -a: $(tail -n 3 "$dir/all.log")"
wait "$bg"
bg=
judge all show

# What info says about a capture of this kernel: named, and no mm sources.
"$mmscope" info "$dir/cmd.data" >"$dir/info.txt" 2>&1 || fail "info: $(cat "$dir/info.txt")"
grep -q "named with this machine's kallsyms (the same kernel, build id checked)" \
	"$dir/info.txt" || fail "info: symbols not named or not said: $(grep -A1 sources "$dir/info.txt")"
grep -q 'mmap_lock: none: not in a perf lock record capture' "$dir/info.txt" ||
	fail "info does not say the capture has no mm sources"

# The same capture from "another kernel": its os release string changed in place.
python3 - "$dir/cmd.data" "$dir/other.data" "$(uname -r)" <<'PY' || fail "cannot make other.data"
import sys
b = bytearray(open(sys.argv[1], "rb").read())
rel = sys.argv[3].encode()
i = b.rfind(rel + b"\0")
assert i > 0, "no os release in the capture"
b[i:i + len(rel)] = b"9" * len(rel)
open(sys.argv[2], "wb").write(b)
PY
"$mmscope" report "$dir/other.data" --by caller --json -E 0 >"$dir/other.json" 2>&1 ||
	fail "report of other.data: $(cat "$dir/other.json")"
python3 - "$dir/cmd.caller.json" "$dir/other.json" <<'PY' || fail "another kernel's capture"
import json, re, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
note = b["sources"]["lock"]["note"]
assert "kernel addresses unnamed: recorded on Linux 999" in note, note
assert a["totals"]["contended"] == b["totals"]["contended"], "waits differ"
assert a["totals"]["wait_total_ns"] == b["totals"]["wait_total_ns"], "wait time differs"
bad = [r["name"] for r in b["rows"] if not re.fullmatch(r"0x[0-9a-f]+|unknown", r["name"])]
assert not bad, f"named callers from another kernel: {bad[:5]}"
print(f"another kernel: {len(b['rows'])} callers, all unnamed addresses; "
      f"{b['totals']['contended']} waits, {b['totals']['wait_total_ns']} ns, as before")
PY

# replay: the TUI over the capture, its Callers view (key 3) shows the callers.
if command -v tmux >/dev/null; then
	sock=mms-perfdata-$$
	tmux -L "$sock" new-session -d -x 160 -y 40 "$mmscope replay $dir/cmd.data" ||
		fail "tmux"
	seen=
	for _ in $(seq 50); do
		sleep 0.2
		tmux -L "$sock" send-keys 3 2>/dev/null
		if tmux -L "$sock" capture-pane -p 2>/dev/null | grep -q 'do_mprotect_pkey\|lock_mm_and_find_vma\|__vm_munmap\|vm_mmap_pgoff'; then
			seen=1
			break
		fi
	done
	[ -n "$seen" ] || fail "replay shows no caller: $(tmux -L "$sock" capture-pane -p)"
	tmux -L "$sock" send-keys q
	echo "replay shows the capture's callers"
fi
echo PASS
