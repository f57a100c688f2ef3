#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# --vma-lock on this kernel: vma_fallback's faults counted exactly, its
# fallbacks to mmap_lock seen while another thread mprotect()s the region
# the faults land in, and none without it (vma_lock_check.py says why each
# bound holds).  Then the same with --mmap-hold: the hold source counts them too.
#
#   vma_lock_test.sh MMSCOPE VMA_FALLBACK
set -u

mmscope=$1
wl=$2
here=$(dirname "$0")

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || skip "needs root (BPF, tracepoints)"
grep -qw lock_mm_and_find_vma /proc/kallsyms || skip "no lock_mm_and_find_vma (kernel before 6.5)"
dir=$(mktemp -d /tmp/mmscope-vmalock.XXXXXX) || fail "mktemp"
trap 'rm -rf "$dir"' EXIT

run() {	# MODE OUT MMSCOPE-OPTIONS... -- WORKLOAD-OPTIONS...
	local mode=$1 out=$2
	shift 2
	timeout 120 "$mmscope" report --json --by caller --vma-source off --rmap-source off "$@" \
		>"$out" 2>"$out.err" || { cat "$out.err" >&2; fail "$mode: mmscope failed"; }
}

run quiet "$dir/quiet" --vma-lock -- "$wl" -s 3 -t 2 -M 64
python3 "$here/vma_lock_check.py" "$dir/quiet" quiet 64 2 || exit 1
run mprotect "$dir/mp" --vma-lock -- "$wl" -s 3 -t 2 -M 64 -m
python3 "$here/vma_lock_check.py" "$dir/mp" mprotect 64 2 || exit 1

# With hold mode the hold source runs the same counting.
run hold "$dir/hold" --vma-lock --mmap-hold -- "$wl" -s 2 -t 2 -M 64 -m
python3 - "$dir/hold" <<'PY' || exit 1
import json, sys
t = open(sys.argv[1]).read()
rep = json.loads(t[t.index('\n{') + 1:])
names = {m['name'] for m in rep['metrics']}
src = rep['sources']['mmap_lock']['source']
if src != 'mmap-hold-bpf' or not {'vma_lock.faults', 'mmap_lock.hold.read'} <= names:
    sys.exit(f'FAIL: --mmap-hold --vma-lock: source {src}, metrics {sorted(names)}')
print('hold: faults and hold times from', src)
PY
echo "PASS"
