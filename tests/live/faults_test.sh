#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Faults, headless, against the real kernel: each case checks a clear message,
# a sane exit code, that nothing collected is lost, no crash (the sanitizer
# build turns any memory error into a failed exit), no BPF program, link or
# map of ours left behind, and tracefs as it was.  docs/RELIABILITY.md says
# which test covers which fault.
#
#   faults_test.sh MMSCOPE MMAP_CHURN CASE
#
# CASE: exits target unpriv paranoid sources mapfull ringlost files badfiles
#       privdrop escape privfail knobs srcfail
set -u

mms=$(realpath "$1")
churn=$(realpath "$2")
case_=$3
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=faults_lib.sh
. "$here/faults_lib.sh"

tmp=$(mktemp -d /tmp/mms-faults.XXXXXX)
pids=()
restore=()
cleanup() {
	local r

	for r in "${restore[@]}"; do eval "$r"; done
	for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
	wait 2>/dev/null
	if [ -n "${KEEP:-}" ]; then echo "kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT

fail() {
	echo "FAIL ($case_): $*" >&2
	for f in "$tmp"/*.err; do [ -s "$f" ] && { echo "--- $f:"; head -20 "$f"; } >&2; done
	exit 1
}
skip() { echo "SKIP ($case_): $*"; exit 77; }
ok() { echo "ok   $*"; }
[ "$(id -u)" = 0 ] || skip "needs root (BPF, tracefs, mounts)"
command -v bpftool >/dev/null || skip "bpftool is not installed"

# expect RC DESC CMD...: runs CMD (stdout/stderr to $tmp/out, $tmp/cmd.err).
expect() {
	local want=$1 desc=$2 rc

	shift 2
	"$@" >"$tmp/out" 2>"$tmp/cmd.err" </dev/null
	rc=$?
	[ "$rc" = "$want" ] || fail "$desc: exit $rc, want $want"
	no_sanitizer_report "$tmp/cmd.err" || fail "$desc: sanitizer report"
	ok "$desc (exit $rc)"
}
err_has() {	# REGEX DESC
	grep -qE -- "$1" "$tmp/cmd.err" || fail "$2: stderr lacks /$1/"
}
json() {	# FILE PYTHON-EXPR: prints the expression over the parsed file as r
	python3 -c "import json, sys; r = json.load(open(sys.argv[1])); print($2)" "$1"
}

background_churn() {
	"$churn" -t 4 -P 2 -s "${1:-60}" >/dev/null 2>&1 &
	pids+=("$!")
}

# ---- exit by signal: SIGINT, SIGTERM, SIGHUP, SIGKILL; bpf and perf sources ----

# wait_intervals FILE N PID: until the recording being written holds N intervals.
wait_intervals() {
	local n=0 _

	for _ in $(seq 300); do
		kill -0 "$3" 2>/dev/null || fail "mmscope ended early: $(cat "$tmp"/*.err)"
		n=$("$mms" info --json "$1" 2>/dev/null | grep -oE '"intervals": [0-9]+' | grep -oE '[0-9]+')
		[ "${n:-0}" -ge "$2" ] && return 0
		sleep 0.1
	done
	fail "$1: ${n:-no} intervals after 30 s"
}

t_exits() {
	local sig src f pid rc before after n want

	background_churn 300
	# Every signal with the BPF source; the perf source's own teardown with two.
	for src in bpf perf; do
		sigs="INT TERM HUP KILL"
		[ $src = perf ] && sigs="TERM KILL"
		for sig in $sigs; do
			f=$tmp/$sig-$src.mms
			before=$(tracefs_state)
			"$mms" record -o "$f" --interval 250 --source "$src" 2>"$tmp/rec.err" &
			pid=$!
			wait_attached $pid "$src" || fail "$src: record did not attach"
			wait_intervals "$f" 2 $pid
			bpf_held $pid >"$tmp/held"
			[ -s "$tmp/held" ] || fail "$src: holds no BPF objects while recording"
			[ "$src" = bpf ] || [ "$(perf_fds $pid)" -gt 0 ] || fail "no perf fds"
			kill -"$sig" $pid
			wait $pid
			rc=$?
			want=0
			[ $sig = KILL ] && want=137
			[ $rc = $want ] || fail "$src SIG$sig: exit $rc, want $want"
			no_sanitizer_report "$tmp/rec.err" || fail "$src SIG$sig: sanitizer report"
			bpf_gone "$tmp/held" || fail "$src SIG$sig: BPF objects left"
			after=$(tracefs_state)
			[ "$before" = "$after" ] ||
				fail "$src SIG$sig: tracefs changed: $(diff <(echo "$before") <(echo "$after"))"
			"$mms" info --json "$f" >"$tmp/info.json" 2>"$tmp/info.err" ||
				fail "$src SIG$sig: the recording does not open"
			n=$(json "$tmp/info.json" 'r["intervals"]')
			if [ $sig = KILL ]; then
				# Killed between two intervals: all whole ones are there, no END.
				[ "$(json "$tmp/info.json" 'r["closed"]')" = False ] || fail "END after KILL?"
				[ "$n" -ge 2 ] || fail "$src SIGKILL: $n intervals kept"
			else
				grep -qE "^mmscope: recorded $n intervals, .* to $f" "$tmp/rec.err" ||
					fail "$src SIG$sig: no summary line naming $n intervals"
				[ "$(json "$tmp/info.json" 'r["closed"] and not r["damaged"]')" = True ] ||
					fail "$src SIG$sig: recording not closed cleanly"
				# The two seen, and the one open at the signal.
				[ "$n" -ge 3 ] || fail "$src SIG$sig: only $n intervals"
			fi
			ok "record --source $src, SIG$sig: exit $rc, $n intervals kept," \
				"$(wc -l <"$tmp/held") BPF objects released, tracefs unchanged"
		done
	done
	# After a SIGKILL a fresh start works: nothing pinned, nothing half-attached.
	expect 0 "fresh record after SIGKILL" "$mms" record -o "$tmp/fresh.mms" --duration 1
	# report prints what it collected when stopped by a signal.  Contention of its
	# own: the churn above may have run out (the loops take ~5 minutes on a slow VM).
	background_churn 120
	for sig in INT HUP; do
		"$mms" report --json -o "$tmp/r-$sig.json" --interval 250 2>"$tmp/rep.err" &
		pid=$!
		wait_started $pid || fail "report did not start"
		sleep 2
		kill -"$sig" $pid
		wait $pid
		rc=$?
		[ $rc = 0 ] || fail "report SIG$sig: exit $rc"
		[ "$(json "$tmp/r-$sig.json" 'r["intervals"] >= 1 and r["totals"]["contended"] > 0')" = True ] ||
			fail "report SIG$sig: nothing reported"
		ok "report, SIG$sig: exit 0, the report holds what was collected"
	done
	# Stopped while its sources still load (signals blocked, privileges not yet
	# dropped): exit 0, an empty report, and a line saying nothing was collected.
	"$mms" report --json -o "$tmp/r-early.json" 2>"$tmp/early.err" &
	pid=$!
	for _ in $(seq 200); do
		grep -qE '^SigBlk:.*[2367abef]$' /proc/$pid/status 2>/dev/null && break
		sleep 0.01
	done
	grep -qE '^NoNewPrivs:[[:space:]]+0' /proc/$pid/status ||
		skip "report started before the signal (too fast to test the early stop)"
	kill -INT $pid
	wait $pid
	rc=$?
	[ $rc = 0 ] || fail "report SIGINT during start-up: exit $rc"
	grep -q 'stopped by Interrupt before the first interval ended: nothing was collected' \
		"$tmp/early.err" || fail "report SIGINT during start-up: not said: $(cat "$tmp/early.err")"
	[ "$(json "$tmp/r-early.json" 'r["intervals"]')" = 0 ] || fail "early stop: intervals?"
	ok "report, SIGINT during start-up: exit 0, 'nothing was collected' said"
}

# ---- the target: exits mid-run, never existed, cannot be executed ----

# Starts mmap_churn held at its start line (-w) on fd 3; sets $w to its pid.
held_churn() {	# SECONDS
	rm -f "$tmp/go"
	mkfifo "$tmp/go" || fail "mkfifo"
	exec 3<>"$tmp/go"
	"$churn" -w -t 4 -P 1 -s "$1" <&3 >"$tmp/churn.out" 2>&1 &
	w=$!
	pids+=("$w")
	for _ in $(seq 100); do grep -q '^ready' "$tmp/churn.out" && break; sleep 0.1; done
	grep -q "^ready pid=$w" "$tmp/churn.out" || fail "mmap_churn did not start"
}

t_target() {
	local w rc start pid

	# -p PID that exits mid-run: the run ends with it, the report has its data.
	held_churn 2
	"$mms" report --json -o "$tmp/p.json" --interval 250 -p $w 2>"$tmp/cmd.err" &
	pid=$!
	wait_started $pid || fail "report -p did not start"
	echo go >&3
	start=$(date +%s)
	wait $pid
	rc=$?
	[ $rc = 0 ] || fail "report -p PID, PID exits mid-run: exit $rc"
	err_has "process $w exited" "target exit named"
	[ $(($(date +%s) - start)) -le 8 ] || fail "report went on after the target exited"
	[ "$(json "$tmp/p.json" 'r["totals"]["contended"] > 0 and r["intervals"] >= 4')" = True ] ||
		fail "no contention of the target in the report"
	ok "report -p PID, PID exits mid-run: exit 0, its waits reported"
	# The same with record: the last interval is flagged, the file is closed.
	held_churn 2
	"$mms" record -o "$tmp/p.mms" --interval 250 -p $w 2>"$tmp/cmd.err" &
	pid=$!
	wait_started $pid || fail "record -p did not start"
	echo go >&3
	wait $pid || fail "record -p PID, PID exits mid-run: exit $?"
	err_has "process $w exited" "record names the target exit"
	"$mms" info --json "$tmp/p.mms" >"$tmp/p-info.json" || fail "info"
	[ "$(json "$tmp/p-info.json" 'r["closed"] and r["target_exited"] == 1 and r["intervals"] >= 4')" = True ] ||
		fail "record -p: $(cat "$tmp/p-info.json")"
	ok "record -p PID, PID exits mid-run: closed, last interval flagged"
	# Gone (and reaped) while the sources were still loading: ends at once.
	sleep 0.2 &
	w=$!
	expect 0 "report -p PID that exits during start-up" timeout 30 "$mms" report -p $w
	err_has "process $w exited" "early exit named"
	# -- CMD killed by a signal mid-run: its status comes back as a shell gives it.
	expect 143 "-- CMD killed by SIGTERM mid-run" "$mms" record -o "$tmp/k.mms" \
		-- sh -c 'sleep 1; kill -TERM $$'
	"$mms" info --json "$tmp/k.mms" >"$tmp/k-info.json" || fail "info"
	[ "$(json "$tmp/k-info.json" 'r["closed"] and r["target_exited"] == 1')" = True ] ||
		fail "recording of a killed command not closed"
	# A PID that never existed: refused before anything is loaded, no file.
	pid=$(($(cat /proc/sys/kernel/pid_max) - 7))
	while kill -0 $pid 2>/dev/null; do pid=$((pid - 1)); done
	expect 1 "record -p PID that never existed" "$mms" record -o "$tmp/none.mms" -p $pid
	err_has "process $pid does not exist" "missing pid named"
	[ ! -e "$tmp/none.mms" ] || fail "a recording was left for a missing pid"
	# -- CMD that cannot be executed: 127, says why, leaves no file.
	expect 127 "record -- CMD not found" "$mms" record -o "$tmp/nx.mms" -- /nonexistent/cmd
	err_has "cannot run '/nonexistent/cmd': No such file or directory" "exec failure named"
	[ ! -e "$tmp/nx.mms" ] || fail "a recording was left for a command that never ran"
	echo 'echo never run' >"$tmp/notexec"
	chmod 0644 "$tmp/notexec"
	expect 127 "record -- CMD not executable" "$mms" record -o "$tmp/nx.mms" -- "$tmp/notexec"
	err_has "cannot run '$tmp/notexec': Permission denied" "EACCES named"
	[ ! -e "$tmp/nx.mms" ] || fail "a recording was left for a command that never ran"
}

# ---- unprivileged: which privilege, what to do instead, nothing created ----

t_unpriv() {
	local as_nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all)

	command -v setpriv >/dev/null || skip "setpriv is not installed"
	chmod 0777 "$tmp"
	expect 77 "unprivileged record" "${as_nobody[@]}" "$mms" record -o "$tmp/u.mms" --duration 1
	err_has 'record needs CAP_BPF and CAP_PERFMON' "record names the privileges"
	err_has 'mmscope replay FILE' "record points to recordings"
	[ ! -e "$tmp/u.mms" ] || fail "unprivileged record created a file"
	expect 77 "unprivileged live TUI" "${as_nobody[@]}" "$mms" -p 1
	err_has 'the live TUI needs CAP_BPF and CAP_PERFMON' "TUI names the privileges"
	# Recordings: root's are 0600 (a clear refusal); a shared one reads fine.
	"$mms" record -o "$tmp/root.mms" --duration 1 2>/dev/null || fail "record as root"
	expect 1 "unprivileged info of root's 0600 recording" "${as_nobody[@]}" \
		"$mms" info "$tmp/root.mms"
	err_has "cannot open $tmp/root.mms: Permission denied" "unreadable file named"
	chmod 0644 "$tmp/root.mms"
	expect 0 "unprivileged report of a shared recording" "${as_nobody[@]}" \
		"$mms" report "$tmp/root.mms"
	expect 0 "unprivileged info of a shared recording" "${as_nobody[@]}" \
		"$mms" info "$tmp/root.mms"
}

# ---- perf_event_paranoid=3 (Debian's "CAP_SYS_ADMIN only" level) ----

t_paranoid() {
	local p=/proc/sys/kernel/perf_event_paranoid old rc
	# shellcheck disable=SC2054
	local with_caps=(setpriv --reuid=65534 --regid=65534 --clear-groups
			 --inh-caps=+bpf,+perfmon,+dac_read_search
			 --ambient-caps=+bpf,+perfmon,+dac_read_search)

	command -v setpriv >/dev/null || skip "setpriv is not installed"
	old=$(cat $p)
	restore+=("echo $old >$p")
	echo 3 >$p || skip "cannot set perf_event_paranoid"
	[ "$(cat $p)" = 3 ] || fail "perf_event_paranoid did not take 3"
	# Root (CAP_SYS_ADMIN): every lock source still works.
	expect 0 "check as root, paranoid 3" "$mms" check
	grep -qE '^lock contention +perf +available' "$tmp/out" || fail "lock-perf not available"
	grep -qE '^lock contention +bpf +available' "$tmp/out" || fail "lock-bpf not available"
	expect 0 "report --source perf as root, paranoid 3" "$mms" report --json -o \
		"$tmp/root.json" --source perf --duration 1
	# CAP_BPF + CAP_PERFMON without root: upstream lets CAP_PERFMON past any level;
	# Debian's patched kernels want CAP_SYS_ADMIN at 3.  Either it works, or the
	# message names the setting.
	chmod 0777 "$tmp"
	"${with_caps[@]}" "$mms" report --json -o "$tmp/caps.json" --source perf --duration 1 \
		>"$tmp/out" 2>"$tmp/cmd.err" </dev/null
	rc=$?
	no_sanitizer_report "$tmp/cmd.err" || fail "sanitizer report"
	if [ $rc = 0 ]; then
		[ "$(json "$tmp/caps.json" 'r["sources"]["lock"]["source"]')" = lock-perf ] ||
			fail "not lock-perf"
		ok "CAP_BPF+CAP_PERFMON, paranoid 3: lock-perf works (no Debian paranoid patch)"
	else
		[ $rc = 1 ] || fail "CAP_PERFMON at paranoid 3: exit $rc"
		err_has 'perf_event_paranoid=3' "the refusal names perf_event_paranoid=3"
		ok "CAP_BPF+CAP_PERFMON, paranoid 3: refused, naming the setting"
	fi
	# No privileges at all: the same clear refusal as at any level.
	expect 77 "unprivileged, paranoid 3" setpriv --reuid=65534 --regid=65534 \
		--clear-groups --inh-caps=-all "$mms" report --source perf --duration 1
	err_has 'needs CAP_BPF and CAP_PERFMON' "privileges named"
	echo "$old" >$p
	[ "$(cat $p)" = "$old" ] || fail "perf_event_paranoid not restored"
	ok "perf_event_paranoid restored to $old"
}

# ---- sources that cannot work here: missing tracepoints, fentry EPERM ----

t_sources() {
	local pid a b fam

	expect 0 "--vma/rmap-source tracepoint without the patched kernel" "$mms" report --json \
		-o "$tmp/tp.json" --vma-source tracepoint --rmap-source tracepoint --duration 1
	for fam in vma:vma_split rmap:try_to_unmap_batch; do
		[ "$(json "$tmp/tp.json" "r['sources']['${fam%%:*}']['source']")" = None ] ||
			fail "$fam: a source was used"
		json "$tmp/tp.json" "r['sources']['${fam%%:*}']['why']" |
			grep -q "tracepoint $fam not found (needs a kernel with mmscope's patches" ||
			fail "$fam: why not said"
	done
	[ "$(json "$tmp/tp.json" 'r["sources"]["lock"]["source"]')" = lock-bpf ] ||
		fail "lock contention lost with the VMA source"
	expect 0 "--vma/rmap-source fentry (EPERM here)" "$mms" report --json -o "$tmp/fe.json" \
		--vma-source fentry --rmap-source fentry --duration 1
	for fam in vma rmap; do
		json "$tmp/fe.json" "r['sources']['$fam']['why']" | grep -q 'fentry/fexit not permitted.*EPERM' ||
			fail "$fam: EPERM not said"
	done
	# A failed fentry load keeps nothing: the same BPF objects as with both off.
	for fam in fentry off; do
		"$mms" record -o "$tmp/$fam.mms" --vma-source $fam --rmap-source $fam \
			2>"$tmp/$fam.err" &
		pid=$!
		wait_started $pid || fail "record ($fam) did not start"
		bpf_held $pid | awk '{ print $1 }' | sort | uniq -c >"$tmp/held-$fam"
		kill -INT $pid
		wait $pid || fail "record ($fam) failed"
	done
	a=$(cat "$tmp/held-fentry")
	b=$(cat "$tmp/held-off")
	[ "$a" = "$b" ] || fail "a failed fentry load left objects open: [$a] vs [$b]"
	ok "failed fentry loads hold nothing: $(tr '\n' ' ' <<<"$a")"
}

# ---- map full: a tiny aggregation map, the lost counter says so ----

t_mapfull() {
	local cmd=("$churn" -t 4 -P 2 -s 2)

	expect 0 "report --map-nr-entries 4" "$mms" report --json -o "$tmp/small.json" \
		--map-nr-entries 4 -- "${cmd[@]}"
	[ "$(json "$tmp/small.json" 'r["lost"]["map_full"] > 0')" = True ] ||
		fail "no map_full losses with a 4-entry map: $(json "$tmp/small.json" 'r["lost"]')"
	[ "$(json "$tmp/small.json" 'len(r["rows"]) <= 4 * r["intervals"]')" = True ] ||
		fail "more rows than the map can hold"
	expect 0 "text report with a full map" "$mms" report --map-nr-entries 4 -o \
		"$tmp/small.txt" -- "${cmd[@]}"
	grep -qE '^lost events \(not in the table\): .*map_full [1-9]' "$tmp/small.txt" ||
		fail "the text report does not show the map_full losses"
	expect 0 "report with the default map" "$mms" report --json -o "$tmp/big.json" -- "${cmd[@]}"
	[ "$(json "$tmp/big.json" 'r["lost"]["map_full"]')" = 0 ] ||
		fail "map_full losses with the default map"
	ok "map full: $(json "$tmp/small.json" 'r["lost"]["map_full"]') waits counted as lost," \
		"0 with the default size"
}

# ---- perf ring buffer overflow under a burst ----
#
# The ring (1 MiB per CPU) is drained every interval and woken at a quarter
# full, so no workload here fills it while mmscope runs.  It overflows when the
# reader gets no CPU: mmscope is stopped (SIGSTOP) while a fork storm writes
# task records (PERF_RECORD_FORK/EXIT, ~112 bytes a fork) into every ring.
# What the kernel dropped must show up as ring_lost, and collection must go on
# afterwards.  The kernel writes its PERF_RECORD_LOST only with the ring's next
# record, which on a quiet machine may never come after the burst: the count
# is read from the events themselves (docs/RELIABILITY.md).  The same for the
# tracepoint reader of the mm sources (rmap's stock source: vmscan events from
# MADV_PAGEOUT of a 4-page mapping; a ring held ~8,200 of them here).

t_ringlost() {
	local pid before after n

	command -v stress-ng >/dev/null || skip "stress-ng is not installed"
	before=$(tracefs_state)
	"$mms" report --json -o "$tmp/ring.json" --source perf --interval 500 --duration 12 \
		2>"$tmp/ring.err" &
	pid=$!
	wait_attached $pid perf || fail "report did not attach"
	wait_started $pid || fail "report did not start"
	bpf_held $pid >"$tmp/held"
	sleep 1
	kill -STOP $pid
	stress-ng --vfork 2 --timeout 5 -q >/dev/null 2>&1
	kill -CONT $pid
	wait $pid || fail "report exited $? after the overflow"
	no_sanitizer_report "$tmp/ring.err" || fail "sanitizer report"
	n=$(json "$tmp/ring.json" 'r["lost"]["ring_lost"]')
	[ "$n" -gt 0 ] || fail "the ring overflowed but ring_lost is 0"
	# ~2 intervals before the stop, one for the stop, the rest after it.
	[ "$(json "$tmp/ring.json" 'r["intervals"] >= 8')" = True ] ||
		fail "collection did not go on after the overflow"
	bpf_gone "$tmp/held" || fail "BPF objects left"
	after=$(tracefs_state)
	[ "$before" = "$after" ] || fail "tracefs changed"
	ok "perf ring overflow: $n records reported lost, collection went on"

	# How many vmscan events MADV_PAGEOUT raises per second varies by two
	# orders of magnitude with the page cache's state: the burst, pinned to CPU
	# 0 so that one ring (~8,200 of these records) takes it all, goes on 2 s at a time
	# until perf stat has counted 40,000.
	"$mms" report --json -o "$tmp/ring-tp.json" --rmap-source stock --interval 500 \
		--duration 40 2>"$tmp/ring-tp.err" &
	pid=$!
	wait_started $pid || fail "report --rmap-source stock did not start"
	sleep 1
	kill -STOP $pid
	n=0
	for _ in $(seq 10); do
		perf stat -a -x, -e vmscan:mm_vmscan_reclaim_pages -o "$tmp/pstat" -- \
			taskset -c 0 "$(dirname "$churn")/pageout_loop" -f "$tmp/pageout.dat" -m 4 -s 2 \
			>"$tmp/pageout.out" 2>&1 ||
			{ kill -CONT $pid; fail "perf stat pageout_loop: $(cat "$tmp/pageout.out")"; }
		n=$((n + $(awk -F, '/reclaim_pages/ { print $1 + 0 }' "$tmp/pstat")))
		[ $n -ge 40000 ] && break
	done
	kill -CONT $pid
	wait $pid || fail "report --rmap-source stock exited $? after the overflow"
	no_sanitizer_report "$tmp/ring-tp.err" || fail "sanitizer report (stock rmap)"
	# Every event of the burst was either read or counted lost; fewer read
	# than raised means the ring overflowed.
	read -r lost got < <(json "$tmp/ring-tp.json" 'r["lost"]["ring_lost"], sum(m["count"] for m
	      in r["metrics"] if m["name"] == "rmap.stock.reclaim_pages")' | tr -d '(),')
	[ "$got" -lt $n ] || [ "$lost" -gt 0 ] ||
		skip "$n vmscan events in 20 s, all $got read: the tracepoint ring did not overflow"
	[ "$lost" -gt 0 ] || fail "the tracepoint ring overflowed ($n events, $got read) but ring_lost is 0"
	[ $((lost + got)) -ge $n ] ||
		fail "$n events, $got read and $lost counted lost: $((n - lost - got)) unaccounted"
	[ "$(json "$tmp/ring-tp.json" 'r["intervals"] >= 8')" = True ] ||
		fail "stock rmap: collection did not go on after the overflow"
	ok "tracepoint ring overflow (stock rmap): $n events, $got read, $lost records" \
		"reported lost, collection went on"
}

# ---- recording files: unwritable, existing, symlinks ----

t_files() {
	local v=$tmp/victim

	expect 1 "record into a missing directory" "$mms" record -o "$tmp/no/such/x.mms" --duration 1
	err_has "cannot create $tmp/no/such/x.mms: No such file or directory" "ENOENT named"
	mkdir "$tmp/ro"
	mount -t tmpfs -o ro,size=64k mms-ro "$tmp/ro" || skip "cannot mount a tmpfs"
	restore+=("umount '$tmp/ro' 2>/dev/null")
	expect 1 "record onto a read-only file system" "$mms" record -o "$tmp/ro/x.mms" --duration 1
	err_has "cannot create $tmp/ro/x.mms: Read-only file system" "EROFS named"
	umount "$tmp/ro"
	expect 1 "record into a directory" "$mms" record -o "$tmp" --duration 1 --force
	err_has "$tmp is a directory: record into a regular file" "directory refused"
	# An existing file is kept unless --force; --force makes it 0600.
	echo keep >"$tmp/old.mms"
	chmod 0644 "$tmp/old.mms"
	expect 1 "record onto an existing file" "$mms" record -o "$tmp/old.mms" --duration 1
	err_has "$tmp/old.mms already exists: .*--force" "existing file: says --force"
	[ "$(cat "$tmp/old.mms")" = keep ] || fail "an existing file was changed"
	# --force writes a new file and renames it over the old one: a new inode,
	# and a reader that opened the old file goes on reading the old bytes.
	local ino
	ino=$(stat -c %i "$tmp/old.mms")
	exec 3<"$tmp/old.mms"
	expect 0 "record --force onto an existing file" "$mms" record -o "$tmp/old.mms" \
		--duration 1 --force
	[ "$(stat -c %a "$tmp/old.mms")" = 600 ] || fail "overwritten recording is not 0600"
	"$mms" info "$tmp/old.mms" >/dev/null || fail "the overwritten recording does not open"
	[ "$(stat -c %i "$tmp/old.mms")" != "$ino" ] || fail "--force wrote into the old inode"
	[ "$(cat <&3)" = keep ] || fail "a reader of the old file saw the new recording"
	exec 3<&-
	ls -a "$tmp" | grep -q '^\.old\.mms\.' && fail "--force left its temporary file"
	ok "--force: new inode $(stat -c %i "$tmp/old.mms") (was $ino), old reader kept 'keep'"
	# Never a file with other hard links (they would keep the old recording
	# while the user thinks it is gone), never another user's file.
	echo keep >"$tmp/h1.mms"
	ln "$tmp/h1.mms" "$tmp/h2.mms"
	expect 1 "record --force onto a hard-linked file" "$mms" record -o "$tmp/h1.mms" \
		--duration 1 --force
	err_has "$tmp/h1.mms has 2 hard links" "hard link refused"
	[ "$(cat "$tmp/h1.mms")" = keep ] || fail "a hard-linked file was replaced"
	echo keep >"$tmp/other.mms"
	chown nobody "$tmp/other.mms"
	expect 1 "record --force onto another user's file" "$mms" record -o "$tmp/other.mms" \
		--duration 1 --force
	err_has "$tmp/other.mms belongs to nobody \\(uid 65534\\): --force replaces only your own" \
		"other owner refused"
	[ "$(cat "$tmp/other.mms")" = keep ] || fail "another user's file was replaced"
	# ... unless that user is the one who ran sudo: it is theirs again after.
	expect 0 "record --force onto the sudo user's file" env SUDO_UID=65534 SUDO_GID=65534 \
		"$mms" record -o "$tmp/other.mms" --duration 1 --force
	[ "$(stat -c %u "$tmp/other.mms")" = 65534 ] || fail "the sudo user's file changed owner"
	# Symlinks are never written through, with or without --force, dangling or not.
	echo keep >"$v"
	ln -s "$v" "$tmp/link.mms"
	ln -s "$tmp/not-there" "$tmp/dangling.mms"
	for f in link dangling; do
		for force in "" --force; do
			expect 1 "record -o $f symlink $force" "$mms" record -o "$tmp/$f.mms" \
				--duration 1 $force
			err_has "$tmp/$f.mms is a symbolic link: mmscope does not write through one" \
				"symlink named"
		done
	done
	[ "$(cat "$v")" = keep ] || fail "the symlink's target was written"
	[ ! -e "$tmp/not-there" ] || fail "the dangling symlink's target was created"
	# report -o writes a text file: never through a symlink either.
	expect 1 "report -o symlink" "$mms" report -o "$tmp/link.mms" --duration 1
	err_has "$tmp/link.mms is a symbolic link" "report -o: symlink named"
	[ "$(cat "$v")" = keep ] || fail "report -o wrote through a symlink"
}

# ---- hostile names: a process name and a mapped file's path with escape sequences ----

# Any user can name its process (prctl(PR_SET_NAME)) and its files: report's
# text shows them escaped (\x1b), never raw; JSON holds them exactly.
t_escape() {
	local name=$'\e[31mred\e]0;x\a' file="$tmp/evil"$'\e[7m\x01'map f
	local shown='\x1b[31mred\x1b]0;x\x07' fshown="$tmp/evil\\x1b[7m\\x01map"
	local work=("$churn" -N "$name" -t 2 -P 2 -s 3 -f "$file" -S)
	local ctl=$'[\x01-\x08\x0b-\x1f\x7f]'

	expect 0 "live report --by lock, hostile names" "$mms" report --by lock \
		-o "$tmp/lock.txt" -- "${work[@]}"
	expect 0 "record, hostile names" "$mms" record -o "$tmp/esc.mms" -- "${work[@]}"
	"$mms" report --by task "$tmp/esc.mms" >"$tmp/task.txt" || fail "report --by task"
	"$mms" report --by lock --stacks "$tmp/esc.mms" >"$tmp/lock2.txt" || fail "report FILE"
	"$mms" info "$tmp/esc.mms" >"$tmp/info.txt" || fail "info"
	"$mms" report --json --by lock "$tmp/esc.mms" >"$tmp/esc.json" || fail "report --json"
	for f in lock task lock2 info; do
		# No C0 control character but tab and newline, no DEL.
		! LC_ALL=C grep -q "$ctl" "$tmp/$f.txt" ||
			fail "$f.txt holds raw control characters:" \
				"$(LC_ALL=C grep -n "$ctl" "$tmp/$f.txt" | head -3 | cat -v)"
	done
	grep -F "mmap_lock (" "$tmp/lock.txt" | grep -qF " $shown)" ||
		fail "live report: no mmap_lock row named '$shown'"
	grep -qF "$shown" "$tmp/task.txt" || fail "report --by task: '$shown' not shown"
	grep -qF "i_mmap_rwsem ($fshown)" "$tmp/lock.txt" "$tmp/lock2.txt" ||
		fail "no i_mmap_rwsem row with the escaped path '$fshown'"
	# JSON: valid, and the very bytes the process and the file system hold.
	python3 - "$tmp/esc.json" "$name" "$file" <<'EOF' || fail "report --json is not exact"
import json, re, sys
r = json.load(open(sys.argv[1]))
names = [x["name"] for x in r["rows"]]
assert any(re.fullmatch(r"mmap_lock \(\d+ " + re.escape(sys.argv[2]) + r"\)", n)
           for n in names), names[:10]
assert "i_mmap_rwsem (%s)" % sys.argv[3] in names, names[:10]
EOF
	ok "names with escape sequences: escaped in text ($shown), exact in JSON"
}

# ---- the privilege drop fails closed ----

# Under a bounding set without CAP_SETPCAP (setpriv, as a container or a
# service manager may start it), the drop cannot empty the bounding set:
# mmscope stops before the first interval and before the command runs.
t_privfail() {
	command -v setpriv >/dev/null || skip "setpriv is not installed"
	expect 1 "record under a bounding set without CAP_SETPCAP" setpriv --bounding-set -setpcap \
		"$mms" record -o "$tmp/pf.mms" --duration 2
	err_has "cannot give up privileges after attaching \(prctl\(PR_CAPBSET_DROP\): Operation not permitted\), so mmscope stops before collecting anything" \
		"the failed drop named"
	[ ! -e "$tmp/pf.mms" ] || fail "a recording was left behind although the drop failed"
	expect 1 "report -- CMD under a bounding set without CAP_SETPCAP" setpriv \
		--bounding-set -setpcap "$mms" report --duration 2 -- touch "$tmp/ran"
	err_has "cannot give up privileges" "report: the failed drop named"
	[ ! -e "$tmp/ran" ] || fail "the command ran although the drop failed"
	ok "a failed drop stops mmscope before it collects or runs anything"
}

# ---- MMSCOPE_* knobs: strict values, a mark in the recording ----

t_knobs() {
	local v

	for v in yes on 2 -1 1x; do
		expect 2 "MMSCOPE_EMPTY_HANDLERS=$v refused" env MMSCOPE_EMPTY_HANDLERS="$v" \
			"$mms" record -o "$tmp/k.mms" --duration 1
		err_has "MMSCOPE_EMPTY_HANDLERS=$v: takes 0 or 1; unset it for the default" \
			"bad value named"
	done
	for v in 0 x 99999999999; do
		expect 2 "MMSCOPE_STACK_CHECK=$v refused" env MMSCOPE_STACK_CHECK="$v" \
			"$mms" info "$tmp/none.mms"
		err_has "MMSCOPE_STACK_CHECK=$v: takes a count from 1" "bad value named"
	done
	[ ! -e "$tmp/k.mms" ] || fail "a refused knob still recorded"
	background_churn 30
	# =0 is off: collection as by default, and the recording says nothing.
	expect 0 "MMSCOPE_EMPTY_HANDLERS=0 record" env MMSCOPE_EMPTY_HANDLERS=0 "$mms" record \
		-o "$tmp/off.mms" --duration 3
	"$mms" report --json -o "$tmp/off.json" "$tmp/off.mms" || fail "report"
	[ "$(json "$tmp/off.json" 'r["totals"]["contended"] > 0')" = True ] ||
		fail "MMSCOPE_EMPTY_HANDLERS=0 turned collection off"
	"$mms" info "$tmp/off.mms" >"$tmp/off.txt" || fail "info"
	! grep -q '^knobs' "$tmp/off.txt" || fail "a default run says it has knobs"
	# =1: the handlers return at once, and info says the run was not a default one.
	expect 0 "MMSCOPE_EMPTY_HANDLERS=1 record" env MMSCOPE_EMPTY_HANDLERS=1 "$mms" record \
		-o "$tmp/on.mms" --duration 3
	"$mms" info "$tmp/on.mms" >"$tmp/on.txt" || fail "info"
	grep -qE '^knobs +MMSCOPE_EMPTY_HANDLERS=1 \(a diagnostic setting' "$tmp/on.txt" ||
		fail "info does not say MMSCOPE_EMPTY_HANDLERS=1: $(cat "$tmp/on.txt")"
	"$mms" info --json "$tmp/on.mms" >"$tmp/on.json" || fail "info --json"
	[ "$(json "$tmp/on.json" 'r["knobs"] == {"MMSCOPE_EMPTY_HANDLERS": "1"}')" = True ] ||
		fail "info --json knobs: $(json "$tmp/on.json" 'r["knobs"]')"
	"$mms" report --json -o "$tmp/on-r.json" "$tmp/on.mms" || fail "report"
	[ "$(json "$tmp/on-r.json" 'r["totals"]["contended"]')" = 0 ] ||
		fail "MMSCOPE_EMPTY_HANDLERS=1 still collected waits"
	ok "knobs: bad values refused, =0 is off, =1 marked in the recording"
}

# ---- a source that fails mid-run: marked failed, the others go on ----

t_srcfail() {
	local pid n

	command -v gdb >/dev/null || skip "gdb is not installed"
	background_churn 120
	# A recording: the failure is in its END block, intervals go on with the rest.
	"$mms" record -o "$tmp/sf.mms" --interval 250 --source bpf 2>"$tmp/sf.err" &
	pid=$!
	wait_intervals "$tmp/sf.mms" 4 $pid
	break_lock_source $pid
	n=$("$mms" info --json "$tmp/sf.mms" | grep -oE '"intervals": [0-9]+' | grep -oE '[0-9]+')
	wait_intervals "$tmp/sf.mms" $((n + 8)) $pid
	kill -INT $pid
	wait $pid || fail "record exited $? after its lock source failed"
	no_sanitizer_report "$tmp/sf.err" || fail "sanitizer report"
	"$mms" info "$tmp/sf.mms" >"$tmp/sf.txt" || fail "info"
	grep -qE '^ +FAILED during the run, its data stops there: lock-bpf: draining CPU [0-9]+ failed: Invalid argument' \
		"$tmp/sf.txt" || fail "info does not say the lock source failed: $(cat "$tmp/sf.txt")"
	"$mms" report --json -o "$tmp/sf.json" "$tmp/sf.mms" || fail "report FILE"
	json "$tmp/sf.json" 'r["sources"]["lock"]["failed"]' | grep -q "lock-bpf: draining CPU" ||
		fail "report --json FILE: sources.lock.failed is $(json "$tmp/sf.json" 'r["sources"]["lock"]')"
	# Waits in the intervals before the failure, none after; mm metrics in both.
	python3 "$here/../replay/mmsrec.py" --intervals "$tmp/sf.mms" >"$tmp/sf.ivs" ||
		fail "independent reader"
	python3 - "$tmp/sf.ivs" <<'EOF' || fail "intervals around the failure are wrong"
import json, sys
ivs = [json.loads(l) for l in open(sys.argv[1])]
before = [i for i in ivs if i["locks"]]
after = ivs[len(before):]
print("intervals:", len(ivs), "with waits:", len(before), "after the failure:", len(after))
assert before == ivs[:len(before)] and len(before) >= 4, [i["locks"] for i in ivs]
assert len(after) >= 6 and all(i["metrics"] > 0 for i in after), [i["metrics"] for i in after]
EOF
	# A live report: its JSON says it too, and its intervals kept coming.
	"$mms" report --json -o "$tmp/sf-live.json" --interval 250 --duration 6 --source bpf \
		2>"$tmp/sf-live.err" &
	pid=$!
	wait_started $pid || fail "report did not start"
	sleep 1
	break_lock_source $pid
	wait $pid || fail "report exited $? after its lock source failed"
	no_sanitizer_report "$tmp/sf-live.err" || fail "sanitizer report (report)"
	json "$tmp/sf-live.json" 'r["sources"]["lock"]["failed"]' | grep -q "lock-bpf: draining CPU" ||
		fail "live report --json: sources.lock is $(json "$tmp/sf-live.json" 'r["sources"]["lock"]')"
	# 24 at most; the failure comes about 1 s in, so a session that froze
	# there (as it did) has 4 to 6.  gdb's stop costs a few ticks.
	[ "$(json "$tmp/sf-live.json" 'r["intervals"] >= 12')" = True ] ||
		fail "live report: $(json "$tmp/sf-live.json" 'r["intervals"]') intervals in 6 s of 250 ms"
	ok "a lock source broken mid-run: marked failed (info, report JSON), $(json "$tmp/sf-live.json" 'r["intervals"]') intervals in 6 s"
}

# ---- broken recordings: every reader says what is wrong, nothing crashes ----

make_bad_files() {	# GOOD DIR
	python3 - "$1" "$2" <<'EOF'
import os, struct, subprocess, sys, zlib
g = open(sys.argv[1], "rb").read()
d = sys.argv[2]
def w(n, b):
    open(os.path.join(d, n), "wb").write(b)
def block(typ, flags, payload):
    h = struct.pack("<HHII", typ, flags, len(payload), len(payload))
    return h + struct.pack("<I", zlib.crc32(payload, zlib.crc32(h))) + payload
w("empty.mms", b"")
w("garbage.mms", bytes((i * 7919) & 0xff for i in range(4096)))
w("short-header.mms", g[:12])
w("cut-header-block.mms", g[:40])
w("truncated.mms", g[:-7])
b = bytearray(g); b[len(g) * 2 // 3] ^= 0x55; w("corrupt.mms", bytes(b))
b = bytearray(g); struct.pack_into("<I", b, 12, 0xfffffff0); w("huge-file-header.mms", bytes(b))
b = bytearray(g); struct.pack_into("<II", b, 20, 0xfffffff0, 0xfffffff0)
w("huge-header-block.mms", bytes(b))
b = bytearray(g); struct.pack_into("<H", b, 8, 2); w("future-major.mms", bytes(b))
b = bytearray(g); struct.pack_into("<H", b, 10, 9); w("future-minor.mms", bytes(b))
# A valid header of 30 MiB: one unknown field, as a newer minor may add.
typ, flags, stored, raw, crc = struct.unpack_from("<HHIII", g, 16)
p = g[32:32 + stored]
if flags & 1:
    p = subprocess.run(["zstd", "-dcq"], input=p, capture_output=True, check=True).stdout
p += struct.pack("<HHI", 999, 0, 30 << 20) + b"A" * (30 << 20)
w("huge-header.mms", g[:16] + block(1, 0, p) + g[32 + stored:])
# A block type from the future after the header: skipped.
w("future-block.mms", g[:32 + stored] + block(77, 0, b"from the future") + g[32 + stored:])
EOF
}

t_badfiles() {
	local d=$tmp/bad f c ms

	command -v zstd >/dev/null || skip "zstd is not installed"
	"$mms" record -o "$tmp/good.mms" --interval 250 --duration 1.5 2>/dev/null ||
		fail "cannot make a recording"
	mkdir "$d"
	make_bad_files "$tmp/good.mms" "$d" || fail "cannot make the broken files"
	declare -A why=(
		[empty]='is empty, not a recording'
		[garbage]='not an mmscope recording \(it does not start with the mmscope magic'
		[short-header]='cut short inside its file header'
		[cut-header-block]="header block is damaged or missing: block at byte 16: cut short"
		[huge-file-header]='damaged file header \(format 1\.[0-9]+, header size 4294967280\)'
		[huge-header-block]='claims 4294967280 bytes, more than any block holds'
		[future-major]='recording format 2\.[0-9]+ is newer than this mmscope reads \(1.x\): read it with a newer mmscope'
	)
	for f in "${!why[@]}"; do
		for c in info report replay; do
			expect 1 "$c $f" "$mms" $c "$d/$f.mms"
			err_has "$d/$f.mms(:| ).*${why[$f]}" "$c $f: says why"
		done
	done
	# Damaged tails: what is before the damage is read, and the damage is named.
	for f in truncated corrupt; do
		expect 0 "info $f" "$mms" info "$d/$f.mms"
		grep -q 'damaged' "$tmp/out" || fail "info $f: damage not shown"
		expect 0 "report $f" "$mms" report "$d/$f.mms"
		err_has "recording damaged at byte [0-9]+ .*: [0-9]+ intervals recovered" "report $f"
		expect 1 "replay $f (no terminal)" "$mms" replay "$d/$f.mms"
		err_has "is damaged at byte [0-9]+ .*replaying what is before it" "replay $f"
		err_has "needs a terminal" "replay $f: no terminal said after the damage"
	done
	# Newer minor versions, block types and header fields are read past.
	for f in future-minor future-block huge-header; do
		c=$(date +%s%N)
		python3 - "$mms" "$d/$f.mms" "$tmp/rss" <<'EOF' || fail "report $f"
import resource, subprocess, sys
r = subprocess.run([sys.argv[1], "report", "--json", sys.argv[2]], capture_output=True)
sys.stderr.buffer.write(r.stderr)
open(sys.argv[3], "w").write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
sys.exit(r.returncode)
EOF
		ms=$(( ($(date +%s%N) - c) / 1000000 ))
		expect 0 "info $f" "$mms" info "$d/$f.mms"
		# The 30 MiB header is read in one go: bounded time and memory (ASan included).
		[ $ms -lt 20000 ] || fail "report $f took $ms ms"
		[ "$(cat "$tmp/rss")" -lt 400000 ] || fail "report $f used $(cat "$tmp/rss") KiB"
		ok "report $f: $ms ms, max RSS $(cat "$tmp/rss") KiB"
	done
}

# ---- privileges after start: only what later file writes need ----

t_privdrop() {
	local pid caps want=0000000000000023 sleeper

	background_churn 60
	"$mms" record -o "$tmp/priv.mms" --interval 250 2>"$tmp/priv.err" &
	pid=$!
	wait_started $pid || fail "record did not start"
	caps=$(grep -E '^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs):' /proc/$pid/status |
	       tr -s '\t' ' ' | tr '\n' ' ')
	[ "$caps" = "CapInh: 0000000000000000 CapPrm: $want CapEff: $want CapBnd: $want CapAmb: 0000000000000000 NoNewPrivs: 1 " ] ||
		fail "after start: $caps (want CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_KILL only)"
	# Five intervals written, not a second slept: a loaded machine starts late.
	wait_intervals "$tmp/priv.mms" 5 $pid
	kill -INT $pid
	wait $pid || fail "record failed after dropping privileges"
	# Collection went on with the privileges dropped: every interval has data.
	"$mms" report --json -o "$tmp/priv.json" "$tmp/priv.mms" || fail "report"
	[ "$(json "$tmp/priv.json" 'r["intervals"] >= 5 and r["totals"]["contended"] > 0')" = True ] ||
		fail "no data collected after the drop: $(json "$tmp/priv.json" \
			'r["intervals"], r["totals"]["contended"]') (intervals, waits)"
	ok "after start: $caps; data kept flowing"
	# A launched command that changed its uid is still stopped at the end (CAP_KILL).
	expect 0 "record -- a command running as nobody, stopped at --duration" timeout 30 \
		"$mms" record -o "$tmp/nobody.mms" --duration 1 -- setpriv --reuid=65534 --regid=65534 \
		--clear-groups sleep 60
	sleeper=$(pgrep -u 65534 -f '^sleep 60$')
	[ -z "$sleeper" ] || fail "the command (pid $sleeper, uid nobody) outlived mmscope"
	ok "the command running as nobody was stopped"
	# Started with ambient capabilities instead of root: the command gets none of them.
	chmod 0777 "$tmp"
	# shellcheck disable=SC2016,SC2054
	expect 0 "-- CMD of a non-root mmscope with ambient CAP_BPF, CAP_PERFMON" setpriv \
		--reuid=65534 --regid=65534 --clear-groups \
		--inh-caps=+bpf,+perfmon,+dac_read_search \
		--ambient-caps=+bpf,+perfmon,+dac_read_search "$mms" report -o "$tmp/amb.txt" \
		-- sh -c 'grep -E "^Cap(Prm|Eff|Amb):" /proc/self/status >"$0"' "$tmp/cmd-caps"
	caps=$(awk '{ print $2 }' "$tmp/cmd-caps" | sort -u)
	[ "$caps" = 0000000000000000 ] || fail "the command got capabilities: $(cat "$tmp/cmd-caps")"
	ok "the command of a non-root mmscope runs without its capabilities"
}

case "$case_" in
exits | target | unpriv | paranoid | sources | mapfull | ringlost | files | badfiles | privdrop | \
	escape | privfail | knobs | srcfail)
	"t_$case_"
	echo "PASS ($case_)"
	;;
*)
	echo "unknown case $case_" >&2
	exit 2
	;;
esac
