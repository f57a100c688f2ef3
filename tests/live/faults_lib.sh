# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
#
# Helpers for the fault tests (tests/live/faults_test.sh, tests/tui/faults_tui.sh)
# and the perf oracle: whether mmscope has started, what one mmscope process
# holds in the kernel while it runs, whether all of it is gone once it has
# ended, and tracefs state to compare before and after.
# Sourced, not run.  Objects are followed by id, so BPF programs other people
# load at the same time on this machine cannot make a test pass or fail.

# BPF objects held by process $1, one "prog|map|link ID" per line (fdinfo).
bpf_held() {	# one awk for every descriptor: a process per fd took seconds under load
	local fds=(/proc/"$1"/fdinfo/*)

	[ -e "${fds[0]}" ] || return 0
	awk 'function out() { if (l) print "link " l; else if (m) print "map " m;
			      else if (p) print "prog " p; l = m = p = "" }
	     FNR == 1 && NR > 1 { out() }
	     /^link_id:/ { l = $2 } /^map_id:/ { m = $2 } /^prog_id:/ { p = $2 }
	     END { out() }' "${fds[@]}" 2>/dev/null
}

# How many perf_event descriptors process $1 holds.
perf_fds() {
	ls -l /proc/"$1"/fd 2>/dev/null | grep -c 'anon_inode:\[perf_event\]'
}

# Succeeds when none of the objects listed in file $1 (bpf_held lines) exists
# any more; prints those that do.  The kernel frees links from a work item, so
# this waits up to 3 s before it calls one left over.
bpf_gone() {
	local left tries=30

	while :; do
		left=$({
			bpftool prog show 2>/dev/null | sed -n 's/^\([0-9]*\): .*/prog \1/p'
			bpftool map show 2>/dev/null | sed -n 's/^\([0-9]*\): .*/map \1/p'
			bpftool link show 2>/dev/null | sed -n 's/^\([0-9]*\): .*/link \1/p'
		} | grep -Fxf "$1")
		[ -z "$left" ] && return 0
		tries=$((tries - 1))
		if [ $tries -le 0 ]; then
			echo "still loaded: $(tr '\n' ' ' <<<"$left")"
			return 1
		fi
		sleep 0.1
	done
}

# Everything of tracefs a tracer could leave changed: global switches, the
# event enable files (every system, and each lock / mmap_lock event), filters.
tracefs_state() {	# bash's read, no process per file: those took ~10 s under load
	local t=/sys/kernel/tracing f l v

	[ -d $t/events ] || t=/sys/kernel/debug/tracing
	for f in "$t"/{tracing_on,current_tracer,set_event,set_event_pid,buffer_size_kb} \
		"$t"/{kprobe_events,uprobe_events,dynamic_events} \
		"$t"/events/enable "$t"/events/*/enable "$t"/events/lock/*/enable \
		"$t"/events/lock/*/filter "$t"/events/mmap_lock/*/enable \
		"$t"/events/vmscan/*/enable; do
		[ -e "$f" ] || continue
		v=
		while IFS= read -r l || [ -n "$l" ]; do v+="$l "; done <"$f"
		printf '%s: %s\n' "${f#"$t"/}" "$v"
	done
	printf 'instances: %s\n' "$(ls "$t/instances" 2>/dev/null | tr '\n' ' ')"
}

# Waits (up to 20 s) until process $1 has attached its sources: a BPF link,
# or with "perf" as $2 a perf_event descriptor too.  Fails if it exits first.
wait_attached() {
	local _

	for _ in $(seq 200); do
		kill -0 "$1" 2>/dev/null || return 1
		if ls -l /proc/"$1"/fd 2>/dev/null | grep -q 'anon_inode:bpf[-_]link'; then
			[ "${2:-}" != perf ] || [ "$(perf_fds "$1")" -gt 0 ] && return 0
		fi
		sleep 0.1
	done
	return 1
}

# Waits (up to 60 s) until process $1 has started every source and collects:
# a live session drops its privileges right after the last source started
# (NoNewPrivs set, docs/SECURITY.md), and a sanitizer build may take seconds
# to load the sources after the first link.  Fails if it exits first.
started() {	# PID: has it dropped its privileges (its sources all started)?
	grep -qE '^NoNewPrivs:[[:space:]]+1' /proc/"$1"/status 2>/dev/null
}
wait_started() {
	local _

	for _ in $(seq 600); do
		kill -0 "$1" 2>/dev/null || return 1
		started "$1" && return 0
		sleep 0.1
	done
	return 1
}

# A sanitizer build prints its reports on stderr: none may appear.
no_sanitizer_report() {	# FILE...
	! grep -qE 'Sanitizer|runtime error:' "$@"
}

# ---- breaking a running source for real (live-faults-srcfail, tui-faults-srcfail) ----

bpf_prog_fd() {	# PID NAME: the descriptor of PID's BPF program NAME
	local ids f

	ids=$(bpftool prog show -j | python3 -c 'import json, sys
print("|".join(str(p["id"]) for p in json.load(sys.stdin) if p.get("name") == sys.argv[1]))' "$2")
	[ -n "$ids" ] || return 1
	f=$(grep -lE "^prog_id:[[:space:]]+($ids)\$" /proc/"$1"/fdinfo/* 2>/dev/null | head -1)
	[ -n "$f" ] && echo "${f##*/}"
}
# break_fd PID FD: makes PID's FD a copy of its stderr, as a debugger can:
# from then on the kernel refuses every BPF use of it (EINVAL: not a BPF
# program).  No string is passed: gdb would malloc it in the process, and
# the sanitizer build would report that as a leak of mmscope's.
break_fd() {
	gdb -nx -batch -p "$1" -iex "set debuginfod enabled off" -iex "set auto-load off" \
		-ex "call (int)dup2(2, $2)" >"$tmp/gdb.out" 2>&1 &&
		grep -q "^\\\$1 = $2\$" "$tmp/gdb.out"
}
# Breaks the lock-bpf source of a running PID for real: its drain program's
# descriptor stops being one, so BPF_PROG_TEST_RUN fails in the kernel.
break_lock_source() {	# PID
	local fd

	fd=$(bpf_prog_fd "$1" drain) || fail "no BPF program 'drain' in pid $1 (not lock-bpf?)"
	break_fd "$1" "$fd" || fail "gdb could not replace fd $fd: $(cat "$tmp/gdb.out")"
}
