#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Disk full: record into a 64 KiB tmpfs until it is full.  mmscope must stop
# with a clear error ("recording stopped: PATH: No space left on device",
# exit 1) and leave a valid file: every block whole (no damage), the END
# block carrying the reason when it fits, and the independent reader agrees.
# With -- CMD the command is not cut short by the full disk.
#
#   record_diskfull.sh MMSCOPE MMAP_CHURN
set -u

mmscope=$1
churn=$2
here=$(cd "$(dirname "$0")" && pwd)

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || skip "needs root (mount, BPF)"
dir=$(mktemp -d /tmp/mmscope-full.XXXXXX) || fail "mktemp"
mnt=$dir/mnt
mkdir "$mnt"
mount -t tmpfs -o size=64k mmscope-test "$mnt" || skip "cannot mount a tmpfs here"
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	umount "$mnt" 2>/dev/null
	if [ -n "${KEEP:-}" ]; then echo "kept $dir"; else rm -rf "$dir"; fi
}
trap cleanup EXIT

"$churn" -t 4 -p 16 -s 70 >"$dir/churn.out" 2>&1 &
pids+=("$!")

check_file() {	# $1 file, $2 label, $3 intervals it must hold at least
	"$mmscope" info --json "$1" >"$dir/info.json" || fail "$2: info cannot open the file"
	python3 "$here/../replay/mmsrec.py" "$1" >"$dir/indep.json" ||
		fail "$2: the independent reader fails"
	python3 - "$dir/info.json" "$dir/indep.json" "$1" "$3" <<'EOF' || fail "$2: file not valid"
import json, os, sys
info = json.load(open(sys.argv[1]))
ind = json.load(open(sys.argv[2]))
size = os.path.getsize(sys.argv[3])
assert not info["damaged"], info["damage"]
assert not ind["damaged"]
assert info["good_bytes"] == size == info["file_bytes"], (info["good_bytes"], size)
assert info["intervals"] == ind["intervals"] >= int(sys.argv[4]), (info["intervals"], ind["intervals"])
if info["closed"]:
    assert "No space left on device" in info["end_reason"], info["end_reason"]
print("valid: %d intervals, %d bytes, END %s" %
      (info["intervals"], size, "with the reason" if info["closed"] else "did not fit"))
EOF
}

f=$mnt/full.mmscope
start=$(date +%s)
timeout 90 "$mmscope" record -o "$f" --interval 100 --duration 60 2>"$dir/record.err"
rc=$?
cat "$dir/record.err"
grep -q "no lock contention source works" "$dir/record.err" && skip "no lock source"
[ $rc = 1 ] || fail "record exited $rc, want 1"
grep -q "^mmscope: recording stopped: $f: No space left on device" "$dir/record.err" ||
	fail "no clear disk-full error"
[ $(($(date +%s) - start)) -lt 55 ] || fail "record did not stop when the disk filled"
check_file "$f" "system-wide" 1

# -- CMD: the command runs to its end although the disk is full (one page left).
rm -f "$f"
dd if=/dev/zero of="$mnt/filler" bs=1k count=60 status=none ||
	fail "cannot fill the tmpfs"
"$mmscope" record -o "$f" --interval 100 -- "$churn" -t 4 -p 16 -s 3 \
	>"$dir/cmd.out" 2>"$dir/cmd.err"
rc=$?
cat "$dir/cmd.err" "$dir/cmd.out"
grep -q "recording stopped: $f: No space left on device" "$dir/cmd.err" ||
	fail "no clear disk-full error with -- CMD"
grep -q "keeps running" "$dir/cmd.err" || fail "does not say the command keeps running"
grep -q '^ops_per_sec=.* seconds=3' "$dir/cmd.out" || fail "the command was cut short"
[ $rc = 1 ] || fail "record -- CMD exited $rc: a failed recording must not look like success"
# One page may not hold even the first interval (its definitions): valid is what counts.
check_file "$f" "-- CMD" 0
echo "PASS"
