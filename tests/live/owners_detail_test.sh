#!/usr/bin/env bash
# A lock's owners in the TUI's Detail page, from a recording replayed in tmux:
#   with --lock-owner: tests/workloads/lock_owner -m file (one thread holds the
#     file's i_rwsem asleep in handle_userfault, three others write to it) is
#     recorded; in `mmscope replay FILE`, Enter on the top lock of Locks opens its
#     Detail, whose owners section has the holder's tid as its top owner, and
#     under it frames of the stack the recording holds for it (report --by owner
#     --json says which), handle_userfault among them;
#   without --lock-owner: the same Detail has no owners section.
# The replays must quit cleanly (exit 0, nothing from a sanitizer on stderr).
# usage: owners_detail_test.sh MMSCOPE LOCK_OWNER
set -u
mms=$1 wl=$2
fail=0
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: needs python3"; exit 77; }
"$mms" check 2>/dev/null | grep -Eq '^lock contention +bpf +available' || { echo "SKIP: no BPF lock source"; exit 77; }
command -v tmux >/dev/null || { echo "SKIP: needs tmux"; exit 77; }
# Not under /tmp: a guest mounts tmpfs there, and the file must be one the test keeps.
tmp=$(mktemp -d "${TMPDIR:-/var/tmp}/mms-owners-detail-XXXXXX")
sock=mms-owners-detail-$$
cleanup() {
	tmux -L "$sock" kill-server 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }
. "$(dirname "$0")/../tui/tmux_lib.sh"

"$wl" -m file -f "$tmp/probe" -s 0.1 >/dev/null 2>&1
[ $? = 2 ] && { echo "SKIP: no userfaultfd here"; exit 77; }

record() {	# NAME [OPTIONS...]: records the workload into $tmp/NAME.mmscope
	local name=$1
	shift
	"$mms" record "$@" -Y rwsem:W -o "$tmp/$name.mmscope" --duration 5 -- \
		"$wl" -m file -f "$tmp/$name.f" -s 2 >"$tmp/$name.out" 2>"$tmp/$name.err" || {
		bad "record $* failed"; sed 's/^/    /' "$tmp/$name.err"; }
}

# detail NAME SECTION: replays $tmp/NAME.mmscope, opens the Detail of the lock
# with the most wait over the whole recording and, once it shows the section
# of that title, saves its screen in $tmp/NAME.screen.
detail() {
	local name=$1 section=$2

	tmux -L "$sock" new-session -d -x 140 -y 70 \
		"$mms replay $tmp/$name.mmscope 2>$tmp/$name.replay-err; echo \$? >$tmp/$name.rc; sleep 30"
	wait_for ' 1 Locks' 20 || { bad "$name: the replay did not start"; cap | sed 's/^/    /'; }
	keys End
	keys w w
	wait_for 'tables now sum over: whole window' 5 || bad "$name: w did not sum the whole recording"
	keys 1
	wait_for '^ *[0-9.]+ +[0-9.]+[mun]?s .*rwsem:W' 10 || bad "$name: Locks has no rwsem:W row"
	keys Enter
	wait_for '^Lock ' 10 || bad "$name: Enter did not open the lock's Detail"
	wait_for "^── $section " 10 || bad "$name: the Detail has no $section section"
	cap >"$tmp/$name.screen"
	keys q
	for _ in $(seq 50); do [ -s "$tmp/$name.rc" ] && break; sleep 0.1; done
	if [ "$(cat "$tmp/$name.rc" 2>/dev/null)" != 0 ] || [ -s "$tmp/$name.replay-err" ]; then
		bad "$name: the replay exited $(cat "$tmp/$name.rc" 2>/dev/null) or said something"
		sed 's/^/    /' "$tmp/$name.replay-err" | head -30
	fi
	tmux -L "$sock" kill-server 2>/dev/null
}

record own --lock-owner
record plain
holder=$(sed -n 's/^ready .*holder_tid=\([0-9]*\).*/\1/p' "$tmp/own.out")
[ -n "$holder" ] || bad "the workload did not say its holder"
"$mms" report "$tmp/own.mmscope" --by owner --json -o "$tmp/own.json" 2>"$tmp/rep.err" ||
	{ bad "report FILE --by owner failed"; sed 's/^/    /' "$tmp/rep.err"; }

detail own owners
# The owners section: its first row, and the frames under its name (column 40).
python3 - "$tmp/own.screen" "$tmp/own.json" "${holder:-0}" <<'PY' || fail=1
import json, re, sys
screen = open(sys.argv[1]).read().splitlines()
rows = json.load(open(sys.argv[2]))["rows"]
holder = int(sys.argv[3])
head = [i for i, l in enumerate(screen) if l.startswith("── owners  (")]
if not head:
    print("FAIL owners: no owners section in the Detail of a --lock-owner recording")
    print("\n".join("    " + l for l in screen))
    sys.exit(1)
top = screen[head[0] + 1].split()
frames = []
for l in screen[head[0] + 2:]:
    if not l.startswith(" " * 39) or not l.strip():
        break
    frames.append(l.strip())
# wait  share  waits  tid  pid  comm
tid = int(top[3]) if len(top) >= 6 and top[3].isdigit() else None
stacks = [r["owner_stack"] for r in rows if r["owner_tid"] == holder]
recorded = any(frames and s[:len(frames)] == frames for s in stacks)
ok = tid == holder and top[5] == "holder" and "handle_userfault" in " ".join(frames) and recorded
print(("ok   " if ok else "FAIL ") + "owners: top owner tid %s (holder %d) %s with %s of the wait, "
      "under it %s; the recorded stack of the holder: %s" %
      (tid, holder, top[5:6], top[1:2], frames[:2], recorded))
if not ok:
    print("\n".join("    " + l for l in screen[head[0]:head[0] + 16]))
    for s in stacks[:3]:
        print("    recorded:", s[:5])
sys.exit(0 if ok else 1)
PY

detail plain tasks
if ! grep -q '^── tasks ' "$tmp/plain.screen"; then
	bad "plain: no Detail page to look at"; sed 's/^/    /' "$tmp/plain.screen"
elif grep -q 'owners  (' "$tmp/plain.screen"; then
	bad "plain: a recording without --lock-owner shows an owners section"
	sed 's/^/    /' "$tmp/plain.screen"
else
	ok "plain: without --lock-owner the Detail has no owners section"
fi
exit $fail
