#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Live oracle: mmscope's lock contention numbers against perf lock's on the
# very same run of a contention workload.
#
#   oracle_perf_lock.sh MMSCOPE MMAP_CHURN [perf|bpf|auto] [threads|procs] [SECONDS]
#
# Identical windows: mmap_churn starts as one thread that prints its pid and
# waits for a byte on stdin.  The tracers attach to that pid; once all have
# their events open, the byte goes out and the workload creates its threads
# (and processes).  All tracers end when the workload exits, so each sees
# the workload's whole life and nothing else (waits are charged to the
# waiting task).
#
#   threads: 4 threads in one process (mmap_lock, some i_mmap_rwsem);
#            `mmscope record -p PID`, then perf lock record -p PID, attach to
#            the running process.
#   procs:   2 processes x 2 threads mapping one file (i_mmap_rwsem too);
#            -p follows one process only, so mmscope launches the workload
#            itself (`mmscope record -- CMD`, which follows its children and
#            starts it only once collecting) and perf lock record -p PID
#            attaches to it.
# The recording is then reported by type and by caller.
#
# perf is read with --stack-skip=1: its callchain starts in the function
# that fires the tracepoint (a lock slow path), and past that it skips the
# lock primitives (__sched_text / __lock_text) as mmscope does.
set -u

mmscope=$1
churn=$2
src=${3:-auto}
mode=${4:-threads}
secs=${5:-3}
here=$(cd "$(dirname "$0")" && pwd)

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
# shellcheck source=faults_lib.sh
. "$here/faults_lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root (perf_event_open, BPF)"
command -v perf >/dev/null || skip "perf is not installed (apt-get install linux-perf)"
[ -d /sys/kernel/tracing/events/lock/contention_begin ] ||
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
[ -d /sys/kernel/tracing/events/lock/contention_begin ] ||
	skip "kernel has no lock:contention_begin tracepoint"

# On a disk filesystem: msync must really write back (rmap walks under i_mmap_rwsem).
dir=$(mktemp -d /var/tmp/mmscope-oracle.XXXXXX) || fail "mktemp"
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	if [ -n "${KEEP:-}" ]; then echo "kept $dir"; else rm -rf "$dir"; fi
}
trap cleanup EXIT

# Is process $1 running (not gone, not a zombie waiting for its parent)?
alive() {
	local st
	st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null) || return 1
	[ -n "$st" ] && [ "${st%% *}" != Z ]
}

# Does process $1 hold perf or BPF descriptors yet (its events are open)?
has_events() {
	ls -l "/proc/$1/fd" 2>/dev/null | grep -qE 'anon_inode:(\[perf_event\]|bpf[-_]link)'
}

mkfifo "$dir/go" || fail "mkfifo"
exec 3<>"$dir/go"
src_arg=()
[ "$src" = auto ] || src_arg=(--source "$src")
tracers=()

# Waits for the workload's "ready pid=N" line; sets wpid.
wait_ready() {
	for _ in $(seq 200); do grep -q '^ready' "$dir/churn.out" && break; sleep 0.1; done
	wpid=$(sed -n 's/^ready pid=\([0-9]*\).*/\1/p' "$dir/churn.out")
	[ -n "$wpid" ] || fail "mmap_churn did not start: $(cat "$dir"/churn.out "$dir"/*.err)"
}

# One mmscope, attached BEFORE perf.  Tracepoint probes run in the order they
# were attached, and each tracer's begin..end interval then holds the handler
# work of the tracers that run before it at begin and not at end: with perf
# first, mmscope's waits would lack perf's begin work (callchain, ring write,
# microseconds) and a spinlock wait is a few microseconds.  mmscope first, its
# begin timestamp is taken when its own handler returns, just before perf's,
# and the two see the same intervals up to mmscope's small end handler.  (That
# holds for the BPF source; the perf source shares perf's probe, see below.)
case $mode in
threads)
	"$churn" -w -t 4 -P 1 -p 32 -S -s "$secs" -f "$dir/file" <&3 >"$dir/churn.out" 2>&1 &
	pids+=($!)
	wait_ready
	"$mmscope" record "${src_arg[@]}" -p "$wpid" -o "$dir/rec.mms" --force \
		>"$dir/record.out" 2>"$dir/record.err" &
	;;
procs)
	"$mmscope" record "${src_arg[@]}" -o "$dir/rec.mms" --force -- \
		"$churn" -w -t 2 -P 2 -p 32 -S -s "$secs" -f "$dir/file" \
		<&3 >"$dir/churn.out" 2>"$dir/record.err" &
	;;
*)
	fail "unknown mode $mode (threads or procs)"
	;;
esac
mms_pid=$!
pids+=("$mms_pid")
tracers+=("$mms_pid")
[ "$mode" = procs ] && wait_ready	# mmscope lets the command run once it collects
# Collecting once it has dropped its privileges, right after its last source
# started (started, faults_lib.sh); a link alone may be the attach test the
# lock source makes while it loads, detached again before the start.
for _ in $(seq 300); do
	alive "$mms_pid" && started "$mms_pid" && break
	sleep 0.1
done
alive "$mms_pid" && started "$mms_pid" && has_events "$mms_pid" ||
	fail "mmscope did not start: $(cat "$dir"/*.err)"
perf lock record -p "$wpid" -o "$dir/perf.data" >"$dir/perf.log" 2>&1 &
perf_pid=$!
pids+=("$perf_pid")
tracers+=("$perf_pid")

for _ in $(seq 200); do
	ready=1
	for p in "${tracers[@]}"; do
		alive "$p" || break 2
		has_events "$p" || ready=0
	done
	[ $ready = 1 ] && break
	sleep 0.1
done
for p in "${tracers[@]}"; do
	has_events "$p" || fail "a tracer did not start: $(cat "$dir"/perf.log "$dir"/*.err)"
done
sleep 1	# from open to enabled: both tools enable right after opening

echo go >&3
for _ in $(seq $((secs * 10 + 300))); do alive "$wpid" || break; sleep 0.1; done
alive "$wpid" && fail "mmap_churn did not end"
cat "$dir/churn.out"
for p in "${tracers[@]}"; do
	for _ in $(seq 100); do alive "$p" || break; sleep 0.1; done
	alive "$p" && fail "a tracer did not end with the workload"
	# perf record -p may exit non-zero when its target ends: its data is what counts.
	wait "$p" || [ "$p" = "$perf_pid" ] || fail "mmscope failed: $(cat "$dir"/*.err)"
done
grep -q '^ops_per_sec=' "$dir/churn.out" || fail "mmap_churn failed: $(cat "$dir/churn.out")"
for by in type caller; do
	"$mmscope" report "$dir/rec.mms" --json --by "$by" -E 0 >"$dir/$by.json" \
		2>"$dir/$by.err" ||
		fail "mmscope report FILE --by $by: $(cat "$dir/$by.err")"
done

perf lock contention -i "$dir/perf.data" -a --stack-skip=1 -E 100000 \
	>"$dir/perf.txt" 2>&1 || fail "perf lock contention: $(tail -n 5 "$dir/perf.txt")"
perf script -i "$dir/perf.data" --ns -F tid,time,event,trace >"$dir/script.txt" 2>/dev/null ||
	fail "perf script failed"
echo "source: $src, mode: $mode"
# mmscope's perf source runs after perf whatever the attach order (lock_oracle.py
# says why): its waits lack perf's begin work, measured 5.7-9.8 us per wait on
# this 2-vCPU VM; a common offset of up to 20 us is taken out.
common=()
[ "$src" = perf ] && common=(--common-max-ns 20000)
python3 "$here/lock_oracle.py" --perf "$dir/perf.txt" --perf-script "$dir/script.txt" \
	--by-type "$dir/type.json" --by-caller "$dir/caller.json" "${common[@]}"
