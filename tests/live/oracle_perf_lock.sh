#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Live oracle: mmscope's lock contention numbers against perf lock's on the
# very same run of a contention workload.
#
#   oracle_perf_lock.sh MMSCOPE MMAP_CHURN [perf|bpf|auto] [SECONDS]
#
# Identical windows: mmap_churn starts as one thread that prints its pid and
# waits for a byte on stdin.  perf lock record -p PID and two mmscope
# reports -p PID (grouped by type and by caller) attach to it; once all
# three have their events open, the byte goes out and the workload creates
# its threads and processes (both tools follow them: perf by inheritance,
# mmscope by fork records / in-kernel filters).  All three end when the
# workload exits, so each sees the workload's whole life and nothing else
# (waits are charged to the waiting task).
#
# perf is read with --stack-skip=1: its callchain starts in the function
# that fires the tracepoint (a lock slow path), and past that it skips the
# lock primitives (__sched_text / __lock_text) as mmscope does.
set -u

mmscope=$1
churn=$2
src=${3:-auto}
secs=${4:-3}
here=$(cd "$(dirname "$0")" && pwd)

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }

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

# Does process $1 hold perf or BPF descriptors yet (its events are open)?
has_events() {
	ls -l "/proc/$1/fd" 2>/dev/null | grep -qE 'anon_inode:(\[perf_event\]|bpf[-_]link)'
}

mkfifo "$dir/go" || fail "mkfifo"
exec 3<>"$dir/go"
"$churn" -w -t 4 -P 1 -p 32 -S -s "$secs" -f "$dir/file" <&3 >"$dir/churn.out" 2>&1 &
wpid=$!
pids+=("$wpid")
for _ in $(seq 100); do grep -q '^ready' "$dir/churn.out" && break; sleep 0.1; done
grep -q "^ready pid=$wpid" "$dir/churn.out" || fail "mmap_churn did not start: $(cat "$dir/churn.out")"

src_arg=()
[ "$src" = auto ] || src_arg=(--source "$src")
perf lock record -p "$wpid" -o "$dir/perf.data" >"$dir/perf.log" 2>&1 &
perf_pid=$!
pids+=("$perf_pid")
"$mmscope" report "${src_arg[@]}" -p "$wpid" --duration 120 --json --by type -E 0 \
	>"$dir/type.json" 2>"$dir/type.err" &
type_pid=$!
pids+=("$type_pid")
"$mmscope" report "${src_arg[@]}" -p "$wpid" --duration 120 --json --by caller -E 0 \
	>"$dir/caller.json" 2>"$dir/caller.err" &
caller_pid=$!
pids+=("$caller_pid")

for _ in $(seq 200); do
	has_events "$perf_pid" && has_events "$type_pid" && has_events "$caller_pid" && break
	for p in "$perf_pid" "$type_pid" "$caller_pid"; do
		kill -0 "$p" 2>/dev/null || break 2
	done
	sleep 0.1
done
for p in "$perf_pid" "$type_pid" "$caller_pid"; do
	has_events "$p" || fail "a tracer did not start: $(cat "$dir"/perf.log "$dir"/*.err)"
done
sleep 1	# from open to enabled: both tools enable right after opening

echo go >&3
wait "$wpid" || fail "mmap_churn failed: $(cat "$dir/churn.out")"
cat "$dir/churn.out"
for p in "$perf_pid" "$type_pid" "$caller_pid"; do
	for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
	kill -0 "$p" 2>/dev/null && fail "a tracer did not end with the workload"
done
wait "$type_pid" || fail "mmscope report --by type failed: $(cat "$dir/type.err")"
wait "$caller_pid" || fail "mmscope report --by caller failed: $(cat "$dir/caller.err")"
wait "$perf_pid"	# perf record -p exits 0 or by the workload's end: its data is what counts

perf lock contention -i "$dir/perf.data" -a --stack-skip=1 -E 100000 \
	>"$dir/perf.txt" 2>&1 || fail "perf lock contention: $(tail -n 5 "$dir/perf.txt")"
perf script -i "$dir/perf.data" --ns -F tid,time,event,trace >"$dir/script.txt" 2>/dev/null ||
	fail "perf script failed"
echo "source: $src"
python3 "$here/lock_oracle.py" --perf "$dir/perf.txt" --perf-script "$dir/script.txt" \
	--by-type "$dir/type.json" --by-caller "$dir/caller.json"
