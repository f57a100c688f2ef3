#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The TUI, driven for real: mmscope in a tmux pane (a private tmux server),
# keys sent with send-keys, the screen read back with capture-pane.
#
#   tui_test.sh MMSCOPE MMAP_CHURN TEST
#
# TEST is one of: first_frame locks_workload views short_tasks filter pause_step
# quit_clean signals sizes command no_color replay record compare.  Live tests
# need root (CAP_BPF + CAP_PERFMON): without it they exit 77 (skipped); so
# does compare, which records the two sides it compares.
set -u

mmscope=$(realpath "$1")
churn=$(realpath "$2")
test=$3
sock=mms-tui-$$-$test
tmp=$(mktemp -d /tmp/mmscope-tui.XXXXXX)
churn_pid=

cleanup() {
	tmux -L "$sock" kill-server 2>/dev/null
	[ -n "$churn_pid" ] && kill "$churn_pid" 2>/dev/null && wait "$churn_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

fail() {
	echo "FAIL ($test): $*" >&2
	echo "--- screen:" >&2
	cap >&2
	exit 1
}
skip() { echo "SKIP ($test): $*"; exit 77; }
need_root() { [ "$(id -u)" = 0 ] || skip "needs root for live data"; }
command -v tmux >/dev/null || skip "tmux is not installed"

# A pane running a plain shell, so that after mmscope ends its prompt shows.
start_shell() {
	local w=$1 h=$2

	tmux -L "$sock" -f /dev/null new-session -d -x "$w" -y "$h" \
		"env -u TMUX PS1='tui\$ ' TERM=screen bash --norc --noprofile" || fail "tmux"
	tmux -L "$sock" set -g status off
	wait_for 'tui\$' 5 || fail "no shell prompt"
}

# Runs a command line in the pane on a cleared screen, followed by its exit status.
run() {
	tmux -L "$sock" send-keys -l "clear; $* ; echo EXIT=\$?"
	tmux -L "$sock" send-keys Enter
}

# shellcheck source=tmux_lib.sh
. "$(dirname "$0")/tmux_lib.sh"

# The mmscope process in the pane.
mms_pid() {
	local shell

	shell=$(tmux -L "$sock" display -p '#{pane_pid}')
	pgrep -P "$shell" -x mmscope | head -1
}

start_tui() {	# start_tui W H [ARGS...]
	local w=$1 h=$2

	shift 2
	start_shell "$w" "$h"
	run "$mmscope $*"
	wait_for '^ 1 Locks' 10 || fail "no first frame"
}

start_churn() {	# [SECONDS [PROCS]]: contention on the mmap_lock of each process's threads
	"$churn" -t 4 -P "${2:-1}" -s "${1:-30}" >/dev/null 2>&1 &
	churn_pid=$!
}

quit() {
	keys q
	wait_for "^EXIT=${1:-0}" 10 || fail "mmscope did not exit with ${1:-0} after q"
}

t_first_frame() {
	need_root
	start_shell 100 30
	run "MMSCOPE_START_TIMES=$tmp/marks $mmscope"
	wait_for '^ 1 Locks' 10 || fail "no first frame"
	cap | grep -q "^mmscope  host $(hostname)  kernel $(uname -r)  target system" ||
		fail "header line"
	wait_for '^sources lock (bpf|perf)' 5 || fail "sources line"
	wait_for 'contentions [0-9.k]+/s' 5 || fail "rates line"
	cap | tail -1 | grep -q 'F1 Help' || fail "status line"
	quit
	# The first frame is drawn before any source loads; the first interval ends a
	# tenth of a second after collecting begins (the marks of MMSCOPE_START_TIMES).
	local order
	order=$(awk '{ $1 = ""; sub(/^ /, ""); print }' "$tmp/marks" | sed 's/^prepared .*/prepared/;
		s/^started .*/started/' | uniq | tr '\n' '|')
	case $order in
	'main|tui first frame|session open|prepared|sources prepared|started|kernel symbols|collecting|tui views|first interval|tui frame with an interval|') ;;
	*) fail "start steps out of order: $order" ;;
	esac
	awk '$2 == "collecting" { c = $1 } $2 == "first" { f = $1 }
	     END { exit !(f - c >= 0.095 && f - c < 0.9) }' "$tmp/marks" ||
		fail "first interval not a tenth of a second after collecting: $(cat "$tmp/marks")"
}

t_locks_workload() {
	need_root
	start_churn 30
	start_tui 120 40
	# The workload's threads contend on their process's mmap_lock, named with its pid.
	wait_for "mmap_lock \\($churn_pid mmap_churn\\)" 15 || fail "no mmap_lock row for the workload"
	cap | grep -E "mmap_lock \\($churn_pid mmap_churn\\)" | grep -Eq 'rwsem(:[RW])? ' ||
		fail "mmap_lock row without a rwsem type"
	quit
}

t_views() {
	need_root
	start_churn 30
	start_tui 120 40
	local -A marker=(
		[1]='^[0-9]+ locks  range: interval'
		[2]='^(Lock |Thread |Caller |.*no contention in this range)'
		[3]='^[0-9]+ callers  range'
		[4]='^[0-9]+ tasks  range'
		[5]='^waits: '
		[6]='^VMA source'
		[7]='^try_to_unmap source'
		[8]='intervals in the window'
		[9]='^[0-9]+ owners  range'
	)
	for k in 1 2 3 4 5 6 7 8 9; do
		keys "$k"
		wait_for "${marker[$k]}" 5 || fail "view $k: no '${marker[$k]}'"
	done
	keys Tab
	wait_for '^[0-9]+ locks  range' 5 || fail "Tab from the last view does not wrap to Locks"
	# Enter on a lock drills into its detail; Esc comes back.
	wait_for 'mmap_lock \(' 15 || fail "no lock to drill into"
	keys Enter
	wait_for '^Lock ' 5 || fail "Enter did not open Lock detail"
	wait_for 'wait histogram' 5 || fail "no histogram in the detail"
	keys Escape
	wait_for '^[0-9]+ locks  range' 5 || fail "Esc did not come back to Locks"
	keys '?'
	wait_for '^mmscope keys' 5 || fail "no help"
	cap | grep -q 'filter rows by name' || fail "help misses the filter key"
	keys x
	wait_for '^[0-9]+ locks  range' 5 || fail "a key did not close help"
	quit
}

# System-wide, processes that lived less than an interval are one Tasks row per name:
# short runs of mmap_churn, one after another, show as "<mmap_churn>" with no tid or pid.
t_short_tasks() {
	need_root
	( while :; do "$churn" -t 4 -n 300 >/dev/null 2>&1; sleep 0.05; done ) &
	churn_pid=$!
	start_tui 120 40
	keys 4
	wait_for '^[0-9]+ tasks  range' 5 || fail "no Tasks view"
	# (A run alive at an interval's end still has rows of its own in that interval.)
	wait_for '^ +- +- +<mmap_churn> ' 15 || fail "no <mmap_churn> row without a pid"
	quit
}

t_filter() {
	need_root
	# Two processes, two mmap_locks: something to narrow without other load on
	# the machine, for as long as the waits below may take under a sanitizer.
	start_churn 120 2
	start_tui 120 40
	wait_for 'mmap_lock \(' 15 || fail "no mmap_lock row"
	wait_for '^([2-9]|[1-9][0-9]+) locks' 15 || fail "fewer than 2 locks: nothing to narrow"
	keys /
	wait_for '^Filter: ' 5 || fail "no filter prompt"
	tmux -L "$sock" send-keys -l 'mmap_lock'
	wait_for '^Filter: mmap_lock' 5 || fail "typed filter not shown"
	keys Enter
	wait_for 'locks matching /mmap_lock' 5 || fail "filter did not narrow"
	# Every row shown names an mmap_lock.
	local rows
	rows=$(cap | sed -n '/^ *CONT\/s/,/^$/p' | sed '1d;/^$/d')
	[ -n "$rows" ] || fail "no rows under the filter"
	echo "$rows" | grep -v 'mmap_lock' && fail "a row without mmap_lock passed the filter"
	keys '\'
	sleep 0.5
	wait_for '^[0-9]+ locks  range' 5 || fail "backslash did not clear the filter"
	cap | grep -q 'matching' && fail "filter still shown after clearing"
	quit
}

t_pause_step() {
	need_root
	start_tui 100 30
	wait_for 'to #([3-9]|[1-9][0-9]+)$' 10 || fail "no third interval"
	keys Space
	wait_for '^mmscope  PAUSED at #[0-9]+' 5 || fail "space did not pause"
	local n m
	n=$(cap | grep -oE 'PAUSED at #[0-9]+' | grep -oE '[0-9]+$')
	keys t
	m=$((n - 1))
	wait_for "PAUSED at #$m( |$)" 5 || fail "t did not step back to #$m"
	wait_for "to #$m\$" 5 || fail "the table does not show interval #$m"
	sleep 2.5	# collection goes on; the view stays
	cap | grep -Eq "PAUSED at #$m( |$)" || fail "the paused view moved"
	keys T
	wait_for "PAUSED at #$n( |$)" 5 || fail "T did not step forward to #$n"
	keys Space
	wait_for '^mmscope  host.*interval 1s *$' 5 || fail "space did not go live again"
	quit
}

t_quit_clean() {
	need_root
	start_tui 100 30
	local pid ids=() id
	pid=$(mms_pid)
	[ -n "$pid" ] || fail "no mmscope process"
	for f in /proc/"$pid"/fdinfo/*; do
		id=$(awk '/^prog_id:/ {print $2}' "$f" 2>/dev/null)
		[ -n "$id" ] && ids+=("$id")
	done
	[ "${#ids[@]}" -gt 0 ] || fail "mmscope holds no BPF programs while running"
	quit
	wait_for '^tui\$ *$' 5 || fail "no shell prompt after quitting"
	cap | grep -q '^ 1 Locks' && fail "the TUI is still on the screen"
	for id in "${ids[@]}"; do
		# The kernel frees a program from a work item after its last fd closes.
		for _ in $(seq 30); do
			bpftool prog show id "$id" >/dev/null 2>&1 || break
			sleep 0.1
		done
		bpftool prog show id "$id" >/dev/null 2>&1 && fail "BPF program $id still loaded after 3 s"
	done
	return 0
}

t_signals() {
	need_root
	start_tui 100 30
	keys C-c
	wait_for '^EXIT=0' 10 || fail "Ctrl-C did not end mmscope cleanly"
	run "$mmscope"
	wait_for '^ 1 Locks' 10 || fail "no second start"
	kill -TERM "$(mms_pid)"
	wait_for '^EXIT=0.*' 10 || fail "SIGTERM did not end mmscope cleanly"
	# The terminal is sane: the shell echoes what is typed.
	run "echo sane-\$((6 * 7))"
	wait_for '^sane-42' 5 || fail "terminal not restored"
}

t_sizes() {
	need_root
	start_churn 30
	start_tui 40 12
	for k in 1 2 3 4 5 6 7 8 '?' x; do
		keys "$k"
		sleep 0.3
	done
	cap | tail -1 | grep -q 'F1' || fail "40x12: no status line"
	for size in "250 60" "60 15" "80 24"; do
		tmux -L "$sock" resize-window -x "${size% *}" -y "${size#* }"
		sleep 0.5
		for k in 1 2 8; do
			keys "$k"
			sleep 0.3
		done
		wait_for '^ 1 Locks' 5 || fail "no frame at $size"
		[ "$(cap | wc -l)" -eq "${size#* }" ] || fail "frame height at $size"
	done
	pgrep -x mmscope >/dev/null || fail "mmscope died"
	quit
}

t_command() {
	need_root
	start_shell 100 30
	run "$mmscope -- sh -c 'sleep 1; exit 3'"
	wait_for 'target cmd: sh' 10 || fail "no command target in the header"
	wait_for 'process [0-9]+ exited' 10 || fail "no 'process N exited' note"
	sleep 1.5
	cap | grep -q '^ 1 Locks' || fail "the TUI did not stay after the command exited"
	quit 3
}

t_no_color() {
	need_root
	start_shell 100 30
	run "NO_COLOR=1 $mmscope"
	wait_for '^ 1 Locks' 10 || fail "no frame"
	tmux -L "$sock" capture-pane -e -p | grep -Eq $'\e\\[([0-9;]*;)?(3[0-7]|4[0-7]|38;5|48;5)' &&
		fail "colour escapes with NO_COLOR"
	tmux -L "$sock" capture-pane -e -p | grep -q $'\e\\[7m' || fail "no reverse video either"
	quit
	run "$mmscope"
	wait_for '^ 1 Locks' 10 || fail "no frame"
	tmux -L "$sock" capture-pane -e -p | grep -Eq $'\e\\[([0-9;]*;)?(3[0-7]|4[0-7])m' ||
		fail "no colours without NO_COLOR"
	quit
}

t_replay() {
	need_root
	start_churn 30
	"$mmscope" record -o "$tmp/r.mms" --duration 4 2>"$tmp/rec.err" || {
		cat "$tmp/rec.err"
		fail "record failed"
	}
	start_shell 120 40
	run "$mmscope replay $tmp/r.mms"
	wait_for '^mmscope replay  at [0-9:]+ .*host ' 10 || fail "no replay header"
	# A recording whose sources all ran: no family says FAILED (once read uninitialised).
	cap | head -3 | grep -q FAILED && fail "the replay header says FAILED: $(cap | head -3)"
	local n
	n=$(cap | grep -oE ', [0-9]+/[0-9]+\)' | head -1 | grep -oE '/[0-9]+' | tr -d /)
	[ "${n:-0}" -ge 3 ] || fail "recording has ${n:-0} intervals, expected >= 3"
	keys End
	wait_for ", $n/$n\\) " 5 || fail "End did not go to the last interval"
	keys Home
	wait_for ", 1/$n\\) .*paused" 5 || fail "Home did not go to the first interval"
	keys Right
	wait_for ", 2/$n\\)" 5 || fail "Right did not step forward"
	keys t
	wait_for ", 1/$n\\)" 5 || fail "t did not step back"
	keys g
	wait_for '^Go to' 5 || fail "no go-to prompt"
	tmux -L "$sock" send-keys -l '+2.5'
	keys Enter
	wait_for ", 3/$n\\)" 5 || fail "go to +2.5 s did not land in interval 3"
	keys ']'
	wait_for ' 2x ' 5 || fail "] did not speed up"
	keys 3
	wait_for '^[0-9]+ callers' 5 || fail "views do not work in replay"
	quit
}

t_record() {
	need_root
	start_tui 120 40
	keys R
	wait_for '^Record to file: ' 5 || fail "no file prompt"
	keys C-u
	tmux -L "$sock" send-keys -l "$tmp/in-tui.mms"
	keys Enter
	wait_for 'REC .*in-tui.mms' 5 || fail "no REC in the header"
	sleep 2.5
	keys R
	wait_for 'recorded [0-9]+ intervals' 5 || fail "R did not stop recording"
	[ "$(stat -c %a "$tmp/in-tui.mms")" = 600 ] || fail "recording is not mode 0600"
	# An existing file is never overwritten.
	keys R
	wait_for '^Record to file: ' 5 || fail "no file prompt"
	keys C-u
	tmux -L "$sock" send-keys -l "$tmp/in-tui.mms"
	keys Enter
	wait_for '[Ee]xists' 5 || fail "an existing file was not refused"
	quit
	"$mmscope" info "$tmp/in-tui.mms" >/dev/null || fail "the recording does not read back"
}

# The NAME cells of the compare screen's table, top to bottom (the sort marker made one
# character so that the header's columns line up with the rows').
cmp_names() {
	local head from len

	head=$(cap | grep -m1 '^GROUP' | sed 's/[▲▼]/^/')
	from=${head%%NAME*}
	from=${#from}
	len=${head%%METRIC*}
	len=$((${#len} - from))
	cap | sed -n '/^GROUP/,/^$/p' | sed '1d;/^$/d' | while IFS= read -r line; do
		line=${line:$from:$len}
		echo "${line%"${line##*[! ]}"}"
	done
}

# cmp_sorted asc|desc: the names on screen are in that order, ignoring case (as strcasecmp).
cmp_sorted() {
	local prev='' name

	while IFS= read -r name; do
		name=${name,,}
		if [ -n "$prev" ]; then
			if [ "$1" = asc ]; then [[ $prev > $name ]] && return 1; fi
			if [ "$1" = desc ]; then [[ $prev < $name ]] && return 1; fi
		fi
		prev=$name
	done < <(cmp_names)
	return 0
}

# compare --tui: the compare screen in the TUI's loop, on two recordings made here.
t_compare() {
	need_root
	locale -a 2>/dev/null | grep -qix 'c.utf-\?8' || skip "no C.UTF-8 locale"
	export LC_ALL=C.UTF-8	# tmux, the pane and mmscope: the filter is typed in UTF-8
	local side args
	for side in light heavy; do
		args="-t 1 -P 2"
		[ "$side" = heavy ] && args="-t 4 -P 2"
		# shellcheck disable=SC2086
		"$mmscope" record -o "$tmp/$side.mms" --duration 3 -- "$churn" -s 2 $args \
			>"$tmp/$side.out" 2>"$tmp/$side.err" || {
			cat "$tmp/$side.err"
			fail "record $side failed"
		}
	done
	start_shell 160 50
	run "$mmscope compare --tui --base light --new heavy $tmp/light.mms -- $tmp/heavy.mms"
	wait_for '^ mmscope compare +light: 1 run +heavy: 1 run +Welch' 10 || fail "no title line"
	wait_for '^GROUP. +NAME +METRIC +BASE' 5 || fail "no table header"
	local n rows before
	n=$(cap | grep -oE '^[0-9]+ of [0-9]+ rows$' | grep -oE '[0-9]+' | head -1)
	[ "${n:-0}" -ge 10 ] || fail "expected 10 rows or more, got '${n:-}'"
	cap | grep -qE '^totals +all locks +avg wait ' || fail "no 'all locks' row"
	cap | tail -1 | grep -q 'F1 Help  Tab Group' || fail "no compare hints on the status line"

	# Tab: one group at a time; S-Tab back; S-Tab again: all groups.
	keys Tab
	wait_for "^[0-9]+ of $n rows  group: totals$" 5 || fail "Tab did not show the totals group"
	cap | tail -1 | grep -q 'showing totals' || fail "no 'showing totals' message"
	rows=$(cap | sed -n '/^GROUP/,/^$/p' | sed '1d;/^$/d')
	[ -n "$rows" ] || fail "no rows in the totals group"
	echo "$rows" | grep -v '^totals ' && fail "a row of another group under 'totals'"
	keys Tab
	wait_for "^[0-9]+ of $n rows  group: locks$" 5 || fail "a second Tab did not go to locks"
	keys BTab
	wait_for "group: totals$" 5 || fail "S-Tab did not go back to totals"
	keys BTab
	wait_for "^$n of $n rows$" 5 || fail "S-Tab from totals did not show all groups"

	# The filter prompt takes UTF-8: é is one character, and one Backspace takes it away.
	keys /
	wait_for '^Filter: _' 5 || fail "no filter prompt"
	tmux -L "$sock" send-keys -l 'éw'
	wait_for '^Filter: éw_' 5 || fail "the typed 'éw' is not in the prompt"
	wait_for "^0 of $n rows  matching /éw$" 5 || fail "'éw' did not narrow the rows to none"
	keys BSpace
	wait_for '^Filter: é_' 5 || fail "Backspace did not take the w"
	keys BSpace
	wait_for '^Filter: _' 5 || fail "Backspace did not take the whole é"
	wait_for "^$n of $n rows$" 5 || fail "an empty filter did not bring every row back"
	tmux -L "$sock" send-keys -l 'avg'
	wait_for "^[0-9]+ of $n rows  matching /avg$" 5 || fail "'avg' did not narrow live"
	rows=$(cap | sed -n '/^GROUP/,/^$/p' | sed '1d;/^$/d')
	[ -n "$rows" ] || fail "no rows match 'avg'"
	[ "$(echo "$rows" | wc -l)" -lt "$n" ] || fail "'avg' kept every row"
	echo "$rows" | grep -v 'avg wait' && fail "a row without 'avg' passed the filter"
	keys Escape
	wait_for "^$n of $n rows$" 5 || fail "Esc did not drop the filter"
	cap | grep -q matching && fail "a filter is still shown after Esc"
	# Enter keeps a filter; backslash clears it.
	keys /
	tmux -L "$sock" send-keys -l 'wait/s'
	keys Enter
	wait_for 'filter: wait/s' 5 || fail "Enter did not keep the filter"
	cap | grep -qE "^[0-9]+ of $n rows  matching /wait/s$" || fail "kept filter not applied"
	keys '\'
	wait_for "^$n of $n rows$" 5 || fail "backslash did not clear the filter"

	# s sorts by the next column (NAME), I inverts, < goes back to compare's order.  The
	# rows are compared from the first (Home): the selection follows its row through the
	# sorts, so with more rows than the screen holds the view may keep another one in sight.
	keys Home
	sleep 0.3
	before=$(cmp_names)
	keys s
	wait_for 'sorted by NAME' 5 || fail "s did not sort by NAME"
	wait_for '^GROUP +NAME. ' 5 || fail "the NAME column is not marked as the sort"
	[ "$(cmp_names)" != "$before" ] || fail "s did not change the order of the rows"
	cmp_sorted asc || fail "rows not in NAME order: $(cmp_names | head -5)"
	keys I
	sleep 0.5
	cmp_sorted desc || fail "I did not invert the NAME order: $(cmp_names | head -5)"
	keys '<'
	wait_for 'sorted by group, then weight' 5 || fail "< did not go back to the group order"
	keys Home
	sleep 0.3
	[ "$(cmp_names)" = "$before" ] || fail "< did not restore compare's order"

	# ? shows this screen's keys; any key closes them.
	keys '?'
	wait_for '^mmscope compare keys' 5 || fail "? showed no help"
	cap | grep -q 'one group only' || fail "help does not say what Tab does here"
	cap | grep -qE 'pause|interval|[Rr]ecord|drill' && fail "help lists keys of a session"
	keys x
	wait_for "^$n of $n rows$" 5 || fail "a key did not close help"

	# Keys of a session (pause, step, interval, range, record, views, drill-in, replay) do
	# nothing here.
	local k
	for k in Space p t T + - w R 1 8 Enter g '[' ']' Left Right; do
		keys "$k"
	done
	sleep 0.5
	[ -n "$(mms_pid)" ] || fail "mmscope died on a key of a session"
	cap | grep -qE 'PAUSED|Record to file|Go to|interval [0-9]' && fail "a session key acted"
	cap | grep -q "^$n of $n rows$" || fail "a session key changed the table"
	cap | grep -q '^ mmscope compare' || fail "the compare screen is gone"

	# A resize (SIGWINCH) redraws at the new size.
	tmux -L "$sock" resize-window -x 100 -y 30
	sleep 0.5
	wait_for '^ mmscope compare' 5 || fail "no frame after a resize"
	[ "$(cap | wc -l)" -eq 30 ] || fail "frame height after the resize"
	keys q
	wait_for '^EXIT=0' 10 || fail "q did not end compare --tui with status 0"
	# Ctrl-C ends it cleanly too.
	run "$mmscope compare --tui $tmp/light.mms -- $tmp/heavy.mms"
	wait_for '^ mmscope compare' 10 || fail "no second start"
	keys C-c
	wait_for '^EXIT=0' 10 || fail "Ctrl-C did not end compare --tui with status 0"
}

case "$test" in
first_frame | locks_workload | views | short_tasks | filter | pause_step | quit_clean | signals | \
	sizes | command | no_color | replay | record | compare)
	"t_$test"
	echo "PASS ($test)"
	;;
*)
	echo "unknown test $test" >&2
	exit 2
	;;
esac
