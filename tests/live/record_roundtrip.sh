#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Live recording round trip:
#   1. `mmscope record --duration 3 -p PID` of a contending workload: exit 0,
#      one summary line, a 0600 file;
#   2. `mmscope info` (text and --json): complete, >= 3 intervals, lock waits;
#   3. a second, independent reader (tests/replay/mmsrec.py, written from
#      docs/FORMAT.md) agrees with `info --json` on every count;
#   4. record refuses to overwrite without --force, and -- CMD passes the
#      command's exit status through.
#
#   record_roundtrip.sh MMSCOPE MMAP_CHURN
set -u

mmscope=$1
churn=$2
here=$(cd "$(dirname "$0")" && pwd)

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || skip "needs root (BPF, tracepoints)"
dir=$(mktemp -d /tmp/mmscope-rec.XXXXXX) || fail "mktemp"
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	if [ -n "${KEEP:-}" ]; then echo "kept $dir"; else rm -rf "$dir"; fi
}
trap cleanup EXIT

# The workload waits for a byte on stdin: the recorder attaches first, so a slow
# start (BPF loading on a busy machine) cannot eat into the 3 s.
mkfifo "$dir/go" || fail "mkfifo"
exec 3<>"$dir/go"
"$churn" -w -t 4 -p 16 -s 5 <&3 >"$dir/churn.out" 2>&1 &
wpid=$!
pids+=("$wpid")
for _ in $(seq 100); do grep -q '^ready' "$dir/churn.out" && break; sleep 0.1; done
grep -q "^ready pid=$wpid" "$dir/churn.out" || fail "mmap_churn did not start"

f=$dir/a.mmscope
"$mmscope" record -o "$f" --duration 3 -p "$wpid" 2>"$dir/record.err" &
rpid=$!
for _ in $(seq 300); do
	ls -l "/proc/$rpid/fd" 2>/dev/null | grep -q 'anon_inode:bpf[-_]link' && break
	kill -0 $rpid 2>/dev/null || break
	sleep 0.1
done
sleep 0.3
echo go >&3
wait $rpid
rc=$?
cat "$dir/record.err"
grep -q "no lock contention source works" "$dir/record.err" && skip "no lock source: $(cat "$dir/record.err")"
[ $rc = 0 ] || fail "record exited $rc"
[ "$(grep -c '^mmscope: recorded ' "$dir/record.err")" = 1 ] || fail "expected one summary line"
[ "$(stat -c %a "$f")" = 600 ] || fail "mode $(stat -c %a "$f"), want 600"

"$mmscope" info "$f" >"$dir/info.txt" || fail "info failed"
cat "$dir/info.txt"
grep -q '^status      complete' "$dir/info.txt" || fail "recording not complete"
# Recorded without --mmap-hold: mmap_lock waits are still there, from the lock source.
grep -q '^ *mmap_lock: waits from the lock source; hold times switched off' "$dir/info.txt" ||
	fail "info does not say where mmap_lock waits come from"
"$mmscope" info --json "$f" >"$dir/info.json" || fail "info --json failed"
python3 "$here/../replay/mmsrec.py" "$f" >"$dir/indep.json" || fail "independent reader failed"

python3 - "$dir/info.json" "$dir/indep.json" <<'EOF' || fail "info and the independent reader disagree"
import json, sys
info = json.load(open(sys.argv[1]))
ind = json.load(open(sys.argv[2]))
ok = True
def check(what, a, b):
    global ok
    if a != b:
        print("mismatch %s: info %r, independent %r" % (what, a, b))
        ok = False
check("intervals", info["intervals"], ind["intervals"])
check("lock_rows", info["lock_rows"], ind["lock_rows"])
check("metric_rows", info["metric_rows"], ind["metric_rows"])
check("lost", sum(info["lost"].values()), ind["lost"])
check("first_ns", info["first_ns"], ind["first_ns"])
check("end_ns", info["end_ns"], ind["end_ns"])
check("file_bytes", info["file_bytes"], ind["file_bytes"])
check("blocks", info["blocks"], ind["blocks"])
check("closed", info["closed"], ind["closed"])
check("damaged", info["damaged"], ind["damaged"])
for k in ("strings", "stacks", "tasks", "locks"):
    check("defined " + k, info["defined"][k], ind["defs"].get(k, 0))
if info["intervals"] < 3:
    print("only %d intervals in 3 s" % info["intervals"]); ok = False
if 2.5 > info["duration_s"] or info["duration_s"] > 4:
    print("duration %.3f s, want ~3" % info["duration_s"]); ok = False
if not info["lock_rows"] or not ind["waits"]:
    print("no lock waits recorded from a contending workload"); ok = False
if not info["sources"]["lock"]["source"]:
    print("no lock source named in the header"); ok = False
if not info["complete"]:
    print("not complete"); ok = False
print("info == independent reader: %d intervals, %d lock rows, %d waits" %
      (info["intervals"], info["lock_rows"], ind["waits"]))
sys.exit(0 if ok else 1)
EOF

# An existing file is kept unless --force.
"$mmscope" record -o "$f" --duration 1 2>"$dir/again.err" && fail "overwrote without --force"
grep -q "already exists" "$dir/again.err" || fail "no clear refusal: $(cat "$dir/again.err")"

# -- CMD: the command's exit status comes back, its end ends the recording.
"$mmscope" record -o "$dir/cmd.mmscope" -- sh -c 'sleep 1.2; exit 3' 2>"$dir/cmd.err"
rc=$?
cat "$dir/cmd.err"
[ $rc = 3 ] || fail "record -- CMD exited $rc, want the command's 3"
grep -q "process [0-9]* exited" "$dir/cmd.err" || fail "summary does not say the process exited"
"$mmscope" info --json "$dir/cmd.mmscope" | python3 -c '
import json, sys
i = json.load(sys.stdin)
assert i["complete"] and i["target_exited"] == 1 and i["intervals"] >= 1, i
' || fail "the command recording is not complete or lacks the exit flag"
echo "PASS"
