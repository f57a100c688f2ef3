#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Faults of the live TUI, driven in tmux like tui_test.sh: each case checks
# the exit code and message, that the terminal works afterwards, that no BPF
# program, link or map of ours is left, that tracefs is as it was, and that a
# recording running at the time is kept.
#
#   faults_tui.sh MMSCOPE MMAP_CHURN CASE
#
# CASE: exits (q, Ctrl-C, SIGTERM)  hup (tmux kill-session)  kill (SIGKILL,
#       then a fresh start)  target (-p PID exits mid-run)  badtarget (no
#       such PID, command that cannot run)  diskfull (recording in the TUI
#       to a full file system)  srcfail (the lock source broken mid-run)
set -u

mms=$(realpath "$1")
churn=$(realpath "$2")
case_=$3
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../live/faults_lib.sh
. "$here/../live/faults_lib.sh"

sock=mms-ftui-$$-$case_
tmp=$(mktemp -d /tmp/mms-ftui.XXXXXX)
pids=()
cleanup() {
	tmux -L "$sock" kill-server 2>/dev/null
	for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
	wait 2>/dev/null
	umount "$tmp/full" 2>/dev/null
	if [ -n "${KEEP:-}" ]; then echo "kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT

# shellcheck source=tmux_lib.sh
. "$here/tmux_lib.sh"
fail() {
	echo "FAIL ($case_): $*" >&2
	echo "--- screen:" >&2
	cap >&2
	exit 1
}
skip() { echo "SKIP ($case_): $*"; exit 77; }
ok() { echo "ok   $*"; }
[ "$(id -u)" = 0 ] || skip "needs root for live data"
command -v tmux >/dev/null || skip "tmux is not installed"
command -v bpftool >/dev/null || skip "bpftool is not installed"

start_shell() {
	tmux -L "$sock" -f /dev/null new-session -d -s main -x 120 -y 40 \
		"env -u TMUX PS1='tui\$ ' TERM=screen bash --norc --noprofile" || fail "tmux"
	tmux -L "$sock" set -g status off
	wait_for 'tui\$' 5 || fail "no shell prompt"
}
run() {
	tmux -L "$sock" send-keys -l "clear; $* ; echo EXIT=\$?"
	tmux -L "$sock" send-keys Enter
}
mms_pid() {
	pgrep -P "$(tmux -L "$sock" display -p '#{pane_pid}')" -x mmscope | head -1
}
first_frame() {	# the TUI is up and its sources attached; sets $pid
	wait_for '^ 1 Locks' 40 || fail "no first frame"
	pid=$(mms_pid)
	[ -n "$pid" ] || fail "no mmscope process"
	wait_attached "$pid" "${1:-}" || fail "sources not attached"
	wait_started "$pid" || fail "sources not started"
}
# The terminal is usable: the shell reads and echoes a line, nothing of the TUI is left.
sane() {
	run "stty -a | tr ' ;' '\\n\\n' | grep -xE -- '-?(isig|icanon|echo)' | tr '\\n' ' '; echo; echo sane-\$((6 * 7))"
	wait_for '^sane-42' 10 || fail "$1: the terminal does not work"
	cap | grep -q '^isig icanon echo *$' || fail "$1: terminal modes not restored"
	cap | grep -q '^ 1 Locks' && fail "$1: the TUI is still on the screen"
	return 0
}
# After mmscope ended: its BPF objects (in $tmp/held) are gone and tracefs is as in $before.
released() {	# WHAT
	local after

	bpf_gone "$tmp/held" || fail "$1: BPF objects left"
	after=$(tracefs_state)
	[ "$before" = "$after" ] ||
		fail "$1: tracefs changed: $(diff <(echo "$before") <(echo "$after"))"
}
background_churn() {
	"$churn" -t 4 -P 2 -s "${1:-60}" >/dev/null 2>&1 &
	pids+=("$!")
}

t_exits() {
	local how src pid msg

	start_shell
	for how in q C-c TERM; do
		src=bpf
		[ $how = TERM ] && src=perf
		before=$(tracefs_state)
		run "$mms --source $src"
		first_frame $src
		bpf_held "$pid" >"$tmp/held"
		[ -s "$tmp/held" ] || fail "$how: mmscope holds no BPF objects"
		case $how in
		q) keys q; msg= ;;
		C-c) keys C-c; msg='stopped by Interrupt' ;;
		TERM) kill -TERM "$pid"; msg='stopped by Terminated' ;;
		esac
		wait_for '^EXIT=0' 15 || fail "$how: mmscope did not exit with 0"
		[ -z "$msg" ] || cap | grep -q "^mmscope: $msg" || fail "$how: no '$msg'"
		released "$how"
		sane "$how"
		ok "$how ($src): exit 0, $(wc -l <"$tmp/held") BPF objects released, tracefs" \
			"unchanged, terminal restored"
	done
}

# tmux kill-session: the terminal goes away (SIGHUP) while a recording runs.
t_hup() {
	local rc n

	before=$(tracefs_state)
	background_churn 60
	# The wrapper shell outlives the hangup (a trap, not an ignore: mmscope must get
	# SIGHUP) to write down mmscope's exit status.
	tmux -L "$sock" -f /dev/null new-session -d -s hup -x 120 -y 40 \
		"env -u TMUX TERM=screen bash -c 'trap \"echo hup >>$tmp/hup.log\" HUP;
		 $mms --source perf; echo \$? >$tmp/rc'" || fail "tmux"
	tmux -L "$sock" set -g status off
	first_frame perf
	bpf_held "$pid" >"$tmp/held"
	keys R
	wait_for '^Record to file: ' 10 || fail "no file prompt"
	keys C-u
	tmux -L "$sock" send-keys -l "$tmp/hup.mms"
	keys Enter
	wait_for 'REC .*hup.mms' 10 || fail "recording did not start"
	sleep 2.5
	tmux -L "$sock" kill-session -t hup
	for _ in $(seq 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	kill -0 "$pid" 2>/dev/null && fail "mmscope still runs 20 s after its terminal went away"
	for _ in $(seq 50); do [ -s "$tmp/rc" ] && break; sleep 0.1; done
	rc=$(cat "$tmp/rc" 2>/dev/null)
	[ "$rc" = 0 ] || fail "exit status ${rc:-unknown} after SIGHUP"
	released SIGHUP
	"$mms" info --json "$tmp/hup.mms" >"$tmp/info.json" || fail "the recording does not open"
	n=$(python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))
print(r["intervals"] if r["closed"] and not r["damaged"] else -1)' "$tmp/info.json")
	[ "$n" -ge 2 ] || fail "recording not closed cleanly at SIGHUP: $(cat "$tmp/info.json")"
	ok "kill-session: exit 0, recording closed with $n intervals," \
		"$(wc -l <"$tmp/held") BPF objects released, tracefs unchanged"
}

# SIGKILL cannot be handled: the kernel must drop everything, and a fresh start must work.
t_kill() {
	start_shell
	before=$(tracefs_state)
	run "$mms --source perf"
	first_frame perf
	bpf_held "$pid" >"$tmp/held"
	kill -KILL "$pid"
	wait_for '^EXIT=137' 10 || fail "no exit status 137 after SIGKILL"
	released SIGKILL
	# The shell reset its own terminal modes: it reads and echoes again.
	run "echo typed-\$((6 * 7))"
	wait_for '^typed-42' 10 || fail "the shell does not work after SIGKILL"
	run "$mms"
	first_frame
	keys q
	wait_for '^EXIT=0' 15 || fail "the fresh start did not exit with 0"
	sane "fresh start"
	ok "SIGKILL: exit 137, $(wc -l <"$tmp/held") BPF objects released by the kernel," \
		"tracefs unchanged, a fresh start works"
}

# -p PID that exits while the TUI runs: said on screen, the TUI stays, q exits 0.
t_target() {
	local w

	mkfifo "$tmp/go" || fail "mkfifo"
	exec 3<>"$tmp/go"
	"$churn" -w -t 4 -s 2 <&3 >"$tmp/churn.out" 2>&1 &
	w=$!
	pids+=("$w")
	for _ in $(seq 100); do grep -q '^ready' "$tmp/churn.out" && break; sleep 0.1; done
	grep -q "^ready pid=$w" "$tmp/churn.out" || fail "mmap_churn did not start"
	start_shell
	before=$(tracefs_state)
	run "$mms -p $w"
	first_frame
	bpf_held "$pid" >"$tmp/held"
	echo go >&3
	wait_for "mmap_lock \\($w mmap_churn\\)" 15 || fail "no waits of the target"
	wait_for "process $w exited" 15 || fail "no 'process $w exited' note"
	sleep 2
	cap | grep -q '^ 1 Locks' || fail "the TUI did not stay after the target exited"
	keys q
	wait_for '^EXIT=0' 15 || fail "q after the target exited: not 0"
	released "target exit"
	sane "target exit"
	ok "-p PID exited mid-run: said so, stayed, exit 0, everything released"
}

# A source broken mid-run (its drain program's descriptor made a copy of stderr,
# for real, with gdb): the header says which failed and why, the other
# sources and the intervals go on, q still ends it cleanly.
# The newest interval on screen ("range: interval, 0.2 s to #19").
interval_no() { cap | grep -oE 'to #[0-9]+' | head -1 | grep -oE '[0-9]+'; }

t_srcfail() {
	local before_iv after_iv

	command -v gdb >/dev/null || skip "gdb is not installed"
	"$churn" -t 4 -P 2 -s 60 >/dev/null 2>&1 &
	pids+=("$!")
	start_shell
	before=$(tracefs_state)
	run "$mms --source bpf --interval 250"
	first_frame
	bpf_held "$pid" >"$tmp/held"
	wait_for 'lock *bpf' 10 || fail "the header does not show lock bpf"
	break_lock_source "$pid"
	wait_for 'lock *FAILED: lock-bpf: draining CPU [0-9]+ failed' 15 ||
		fail "the header does not say the lock source failed"
	before_iv=$(interval_no)
	sleep 3
	after_iv=$(interval_no)
	[ -n "$before_iv" ] && [ -n "$after_iv" ] && [ "$after_iv" -ge $((before_iv + 6)) ] ||
		fail "intervals stopped: #$before_iv, then #$after_iv 3 s later"
	cap | grep -qE 'vma +inferred' || fail "the vma source is not shown working beside it"
	keys q
	wait_for '^EXIT=0' 15 || fail "q after the source failed: not 0"
	released "source failure"
	sane "source failure"
	ok "lock source failed mid-run: header says why, intervals #$before_iv -> #$after_iv in 3 s"
}

# Targets that cannot be followed: a message, the right status, the terminal untouched.
t_badtarget() {
	local pid=$(($(cat /proc/sys/kernel/pid_max) - 7))

	while kill -0 $pid 2>/dev/null; do pid=$((pid - 1)); done
	start_shell
	run "$mms -p $pid"
	wait_for '^EXIT=1' 40 || fail "-p missing pid: not exit 1"
	cap | grep -q "^mmscope: process $pid does not exist" || fail "missing pid not named"
	sane "-p missing pid"
	run "$mms -- /nonexistent/cmd"
	wait_for '^EXIT=127' 40 || fail "-- missing command: not exit 127"
	cap | grep -q "^mmscope: cannot run '/nonexistent/cmd': No such file or directory" ||
		fail "exec failure not named"
	sane "-- missing command"
	ok "no such pid: exit 1; command not found: exit 127; both named, terminal fine"
}

# Recording from the TUI onto a full file system: said in the header, the TUI goes on,
# the file stays valid.
t_diskfull() {
	local seq1 seq2

	mkdir "$tmp/full"
	mount -t tmpfs -o size=64k mms-full "$tmp/full" || skip "cannot mount a tmpfs"
	background_churn 60
	start_shell
	run "$mms -d 0.2"
	first_frame
	keys R
	wait_for '^Record to file: ' 10 || fail "no file prompt"
	keys C-u
	tmux -L "$sock" send-keys -l "$tmp/full/r.mms"
	keys Enter
	wait_for 'REC FAILED: recording stopped: .*No space left on device' 60 ||
		fail "a full disk was not said in the header"
	seq1=$(cap | grep -oE 'to #[0-9]+$' | head -1 | tr -dc 0-9)
	sleep 1.5
	seq2=$(cap | grep -oE 'to #[0-9]+$' | head -1 | tr -dc 0-9)
	[ "${seq2:-0}" -gt "${seq1:-0}" ] || fail "the TUI stopped collecting with the disk full"
	keys q
	wait_for '^EXIT=0' 15 || fail "q with a failed recording: not 0"
	cap | grep -q "^mmscope: recording stopped: $tmp/full/r.mms: No space left on device" ||
		fail "the failure is not repeated after the TUI ends"
	"$mms" info --json "$tmp/full/r.mms" >"$tmp/info.json" || fail "the file does not open"
	python3 - "$tmp/info.json" "$tmp/full/r.mms" <<'EOF' || fail "the recording is not valid"
import json, os, sys
r = json.load(open(sys.argv[1]))
assert not r["damaged"], r["damage"]
assert r["good_bytes"] == os.path.getsize(sys.argv[2]), r
assert r["intervals"] >= 1, r
EOF
	sane "disk full"
	ok "disk full: said in the header, collection went on (#$seq1 -> #$seq2), file valid"
}

case "$case_" in
exits | hup | kill | target | badtarget | diskfull | srcfail)
	"t_$case_"
	echo "PASS ($case_)"
	;;
*)
	echo "unknown case $case_" >&2
	exit 2
	;;
esac
