#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Crash safety: 20 times, SIGKILL `mmscope record` at a random moment while a
# workload contends.  Every file must open (`mmscope info`), with at most one
# whole interval lost: the last recorded interval ends less than two
# intervals before the kill (the one being collected is lost by nature).
# The independent reader (tests/replay/mmsrec.py) must agree on the count
# (checked every 5th round: it is slow).
#
#   record_crash.sh MMSCOPE MMAP_CHURN [ROUNDS]
set -u

mmscope=$1
churn=$2
rounds=${3:-20}
here=$(cd "$(dirname "$0")" && pwd)
iv_ms=400

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || skip "needs root (BPF, tracepoints)"
dir=$(mktemp -d /tmp/mmscope-crash.XXXXXX) || fail "mktemp"
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	if [ -n "${KEEP:-}" ]; then echo "kept $dir"; else rm -rf "$dir"; fi
}
trap cleanup EXIT

"$churn" -t 2 -p 16 -s $((rounds * 4 + 30)) >"$dir/churn.out" 2>&1 &
pids+=("$!")

worst=0
for i in $(seq "$rounds"); do
	f=$dir/crash$i.mmscope
	"$mmscope" record -o "$f" --interval $iv_ms 2>"$dir/rec$i.err" &
	rpid=$!
	for _ in $(seq 600); do [ -s "$f" ] && break; kill -0 $rpid 2>/dev/null || break; sleep 0.05; done
	if ! [ -s "$f" ]; then
		wait $rpid
		grep -q "no lock contention source works" "$dir/rec$i.err" &&
			skip "no lock source: $(cat "$dir/rec$i.err")"
		fail "recorder did not start: $(cat "$dir/rec$i.err")"
	fi
	# Collection runs once the BPF programs are attached (links open).
	for _ in $(seq 300); do
		ls -l "/proc/$rpid/fd" 2>/dev/null | grep -q 'anon_inode:bpf[-_]link' && break
		sleep 0.05
	done
	attach_ns=$(date +%s%N)
	# 0.3 .. 2.3 s into collection.
	sleep "$(awk -v s="$RANDOM" 'BEGIN { srand(s); printf "%.3f", 0.3 + rand() * 2 }')"
	kill_ns=$(date +%s%N)
	kill -KILL $rpid
	wait $rpid 2>/dev/null
	"$mmscope" info --json "$f" >"$dir/info$i.json" 2>"$dir/info$i.err" ||
		fail "round $i: the file does not open: $(cat "$dir/info$i.err")"
	# The independent reader is slow (a zstd process per block): every 5th round.
	if [ $((i % 5)) = 0 ]; then
		python3 "$here/../replay/mmsrec.py" "$f" >"$dir/indep$i.json" ||
			fail "round $i: the independent reader fails"
	else
		cp "$dir/info$i.json" "$dir/indep$i.json"
	fi
	lost=$(python3 - "$dir/info$i.json" "$dir/indep$i.json" "$kill_ns" $iv_ms "$attach_ns" <<'EOF'
import json, sys
info = json.load(open(sys.argv[1]))
ind = json.load(open(sys.argv[2]))
kill_ns, iv = int(sys.argv[3]), int(sys.argv[4]) * 1000000
assert info["intervals"] == ind["intervals"], (info["intervals"], ind["intervals"])
assert not info["closed"], "a killed recorder cannot have written END"
# Time not covered by the file: since the last interval ended (or collection began).
end = max(info["end_ns"], int(sys.argv[5]))
print(max(0, (kill_ns - end) // iv))
EOF
	) || fail "round $i: readers disagree"
	status=$(grep -o '"damaged": [a-z]*' "$dir/info$i.json")
	echo "round $i: $(grep -o '"intervals": [0-9]*' "$dir/info$i.json"), $status," \
		"whole intervals lost: $lost"
	[ "$lost" -le 1 ] || fail "round $i: $lost whole intervals lost at the kill"
	[ "$lost" -gt "$worst" ] && worst=$lost
done
echo "PASS: $rounds kills, every file opens, at most $worst whole interval(s) lost"
