#!/usr/bin/env bash
# Lock owners (--lock-owner, the BPF lock source), against workloads whose
# owner is known (tests/workloads/lock_owner):
#   file: one thread holds a file's inode lock (i_rwsem) asleep, in a write
#         whose user buffer faults into a userfaultfd that answers 20 ms late;
#         three others write to the file (pausing 200 us after each write, as
#         the mappers below do).  At least 90 % of the rwsem:W wait
#         is booked to that thread, under a stack through handle_userfault
#         and generic_perform_write; the same from a recording.
#   mmap: one thread mprotects 64 MiB (mmap_lock held for write for ms), three
#         mmap/munmap a page.  With --mmap-hold (exact and sampled), booked
#         from the write holders at each wait's end, at least 90 % of their
#         mmap_lock wait goes to the holder, under a stack through mprotect.
#         From the owner field at each wait's begin, at least 90 % of the wait
#         booked to a task: a wait that began while the lock was free (<none>)
#         or read-held (<readers>) has no owner to book (5-12 % of it here, as
#         the mprotect()s and munmap()s fall), at most 25 % of it.
# Then the Owners view (9) of the TUI in tmux shows the holder.
# usage: owners_test.sh MMSCOPE LOCK_OWNER
set -u
mms=$1 wl=$2
fail=0
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: needs python3"; exit 77; }
"$mms" check 2>/dev/null | grep -Eq '^lock contention +bpf +available' || { echo "SKIP: no BPF lock source"; exit 77; }
# Not under /tmp: a guest mounts tmpfs there, and the file must be one the test keeps.
tmp=$(mktemp -d "${TMPDIR:-/var/tmp}/mms-owners-XXXXXX")
sock=mms-owners-$$
cleanup() {
	tmux -L "$sock" kill-server 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }

"$wl" -m file -f "$tmp/probe" -s 0.1 >/dev/null 2>&1
[ $? = 2 ] && { echo "SKIP: no userfaultfd here"; exit 77; }

# file: the holder's share of the writers' waits, and its stack.
"$mms" record --lock-owner -Y rwsem:W -o "$tmp/file.mmscope" --duration 5 -- \
	"$wl" -m file -f "$tmp/f" -p 200 -s 2 >"$tmp/file.out" 2>"$tmp/file.err" || {
	bad "record --lock-owner failed"; sed 's/^/    /' "$tmp/file.err"; }
holder=$(sed -n 's/^ready .*holder_tid=\([0-9]*\).*/\1/p' "$tmp/file.out")
[ -n "$holder" ] || bad "the workload did not say its holder"
"$mms" report --lock-owner -Y rwsem:W --json -o "$tmp/file.json" --duration 5 -- \
	"$wl" -m file -f "$tmp/f2" -p 200 -s 2 >"$tmp/file2.out" 2>"$tmp/file2.err" || {
	bad "report --lock-owner failed"; sed 's/^/    /' "$tmp/file2.err"; }
holder2=$(sed -n 's/^ready .*holder_tid=\([0-9]*\).*/\1/p' "$tmp/file2.out")
"$mms" report "$tmp/file.mmscope" --by owner --json -o "$tmp/file-rec.json" 2>"$tmp/rep.err" ||
	{ bad "report FILE --by owner failed"; sed 's/^/    /' "$tmp/rep.err"; }
check_file() {	# JSON HOLDER WHAT
	python3 - "$1" "$2" "$3" <<'PY' || fail=1
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
holder, what = int(sys.argv[2]), sys.argv[3]
total = sum(r["wait_total_ns"] for r in rows)
mine = [r for r in rows if r["owner_tid"] == holder]
share = sum(r["wait_total_ns"] for r in mine) / total if total else 0
path = any("handle_userfault" in " ".join(r["owner_stack"]) and
           "generic_perform_write" in " ".join(r["owner_stack"]) for r in mine)
comm = all(r["owner_comm"] == "holder" for r in mine)
ok = share >= 0.90 and path and comm and mine
print(("ok   " if ok else "FAIL ") + "%s: %.1f %% of %.0f ms of rwsem:W wait booked to the holder "
      "(tid %d), asleep in handle_userfault under generic_perform_write: %s" %
      (what, 100 * share, total / 1e6, holder, path))
if not ok:
    for r in rows[:6]:
        print("    ", r["contended"], r["wait_total_ns"], r["owner_tid"], r["owner_comm"],
              r["owner_stack"][:4])
sys.exit(0 if ok else 1)
PY
}
[ -n "$holder2" ] && check_file "$tmp/file.json" "$holder2" "live report"
[ -n "$holder" ] && check_file "$tmp/file-rec.json" "$holder" "recording"

# The text table names the owner and where it held the lock.
"$mms" report "$tmp/file.mmscope" --lock-owner >"$tmp/file.txt" 2>&1
if grep -Eq "^ .* $holder +holder +handle_userfault" "$tmp/file.txt"; then
	ok "report --lock-owner's table: holder $holder at handle_userfault"
else
	bad "report --lock-owner's table has no holder row"; sed 's/^/    /' "$tmp/file.txt" | head
fi

# mmap: at least 90 % of the mappers' mmap_lock wait is booked to the holder,
# under a stack through mprotect: at the waits' begin (--lock-owner), and from
# the hold programs' write holders at their end (--mmap-hold).  The mappers
# pause 200 us after each munmap: without it, on 2 CPUs, they mostly queue
# behind each other's munmap (which holds the lock as a reader after
# downgrading it), and that wait is theirs, not the holder's.  The holder's own
# waits (--by task) are not the mappers'.
mmap_share() {	# WHAT MMSCOPE-ARGS...
	local what=$1 h
	shift
	rm -f "$tmp/mmap.mmscope"
	MMSCOPE_SELF_COST=1 "$mms" record --lock-owner "$@" -L mmap_lock -o "$tmp/mmap.mmscope" \
		--duration 5 -- "$wl" -m mmap -p 200 -s 2 >"$tmp/mmap.out" 2>"$tmp/mmap.err" || {
		bad "$what: record failed"; sed 's/^/    /' "$tmp/mmap.err"; return; }
	# The lock source's count of waits it booked to a write holder (self-cost's last line).
	if [ $# -gt 0 ] && ! grep -Eq 'self-cost: stack-cache .* holders=[1-9]' "$tmp/mmap.err"; then
		bad "$what: no wait was booked to a write holder"
		grep 'self-cost: stack-cache' "$tmp/mmap.err" | sed 's/^/    /'
	fi
	h=$(sed -n 's/^ready .*holder_tid=\([0-9]*\).*/\1/p' "$tmp/mmap.out")
	h=${h:-0}
	"$mms" report "$tmp/mmap.mmscope" --by owner --json -o "$tmp/mmap-own.json" &&
		"$mms" report "$tmp/mmap.mmscope" --by task --json -o "$tmp/mmap-task.json" ||
		{ bad "$what: report of the recording failed"; return; }
	python3 - "$tmp/mmap-own.json" "$tmp/mmap-task.json" "$h" "$what" ${1:+hold} <<'PY' || fail=1
import json, sys, collections
own = json.load(open(sys.argv[1]))["rows"]
tasks = json.load(open(sys.argv[2]))["rows"]
holder, what = int(sys.argv[3]), sys.argv[4]
total = sum(r["wait_total_ns"] for r in tasks)
others = total - sum(r["wait_total_ns"] for r in tasks if r["pid"] == holder)
mine = [r for r in own if r["owner_tid"] == holder]
booked = sum(r["wait_total_ns"] for r in mine)
through = sum(r["wait_total_ns"] for r in mine if any("mprotect" in f for f in r["owner_stack"]))
by = collections.Counter()
for r in own:
    by[r["owner_tid"] if r["owner_tid"] is not None else r["owner_comm"]] += r["wait_total_ns"]
share = booked / others if others > 0 else 0
unowned = by["<readers>"] + by["<none>"]
named = booked / (others - unowned) if others > unowned else 0
hold = len(sys.argv) >= 6
# With the hold programs the holder's stack is taken where it released each hold it
# made someone wait through: nearly all of its wait has one through mprotect.
ok = holder and through > 0 and (share >= 0.90 and through >= 0.8 * booked if hold else
                                 named >= 0.90 and unowned <= 0.25 * others)
print(("ok   " if ok else "FAIL ") + "mmap, %s: %.1f %% of the mappers' %.0f ms of mmap_lock wait "
      "booked to the holder (tid %d; %.1f %% of what went to a task), %.1f %% of it under a "
      "stack through mprotect; <readers> %.1f %%, <none> %.1f %%" %
      (what, 100 * share, others / 1e6, holder, 100 * named,
       100 * through / booked if booked else 0,
       100 * by["<readers>"] / others if others > 0 else 0,
       100 * by["<none>"] / others if others > 0 else 0))
if not ok:
    for k, v in by.most_common(6):
        print("     owner %s: %.0f ms" % (k, v / 1e6))
sys.exit(0 if ok else 1)
PY
}
mmap_share "at the waits' begin"
mmap_share "booked to the write holder (--mmap-hold)" --mmap-hold
mmap_share "booked to the write holder (--mmap-hold-sample 16)" --mmap-hold-sample 16

# The perf source cannot tell owners: said, not rows of "owner unknown".
"$mms" report --lock-owner --source perf --duration 1 >/dev/null 2>"$tmp/perr"
rc=$?
if [ $rc = 2 ] && grep -q "needs the BPF lock source" "$tmp/perr"; then
	ok "--lock-owner --source perf: exit 2, $(cat "$tmp/perr")"
else
	bad "--lock-owner --source perf: exit $rc"; sed 's/^/    /' "$tmp/perr"
fi

# The Owners view, live: the holder's row with where it sleeps.
if command -v tmux >/dev/null; then
	. "$(dirname "$0")/../tui/tmux_lib.sh"
	tmux -L "$sock" new-session -d -x 140 -y 30 \
		"$mms --lock-owner -- $wl -m file -f $tmp/f3 -s 30; sleep 30"
	wait_for " 9 Owners" 20 || bad "the TUI did not start"
	keys 9
	if wait_for "holder +handle_userfault" 25; then
		ok "Owners view: the holder at handle_userfault"
	else
		bad "Owners view shows no holder row"; cap | sed 's/^/    /'
	fi
	keys q
else
	echo "skip Owners view: no tmux"
fi
exit $fail
