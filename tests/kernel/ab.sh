#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The patch-mail A/B, end to end on real kernels: the guest suite ran
# `mmscope record --runs 3 --score-default -- vma_split_file ...` on stock 6.12 and on
# 6.12 with mmscope's tracepoint patches (tests/kernel/guest-tests.sh, "ab"); here
# `mmscope compare` puts the two side by side as a mail would: the benchmark's score
# first (avg, %stdev, min, max, change, verdict), then the lock rows (i_mmap_rwsem, which
# the workload's vma_prepare takes) and the VMA rows.  The text table is printed for
# docs/COMPARE.md.  Exit 77 when the 6.12 guests did not run (the suite skipped them).
#
#   tests/kernel/ab.sh MMSCOPE KERNEL_TEST_DIR
set -u
mmscope=$1 kt=$2
fail() { echo "FAIL: $*"; exit 1; }

a=$kt/out-6.12-unpatched b=$kt/out-6.12-patched
for d in "$a" "$b"; do
	[ -f "$d/status" ] || { echo "SKIP: no 6.12 guest ran ($d)"; exit 77; }
	[ -f "$d/ab/record.out" ] || fail "the guest in $d recorded no A/B runs"
	grep -q '^rc=0$' "$d/ab/record.out" ||
		fail "record --runs in $d failed: $(cat "$d/ab/record.out" "$d/ab/record.err")"
	n=$(ls "$d"/ab/vsf-*.mmscope 2>/dev/null | wc -l)
	[ "$n" = 3 ] || fail "$d/ab has $n runs, not 3: $(cat "$d/ab/record.err")"
done
# shellcheck disable=SC2046 # the runs, in order
"$mmscope" compare --base "6.12" --new "6.12+tp" -E 3 $(ls "$a"/ab/vsf-*.mmscope) -- \
	$(ls "$b"/ab/vsf-*.mmscope) >"$kt/ab.txt" 2>"$kt/ab.err" ||
	fail "compare exited $?: $(cat "$kt/ab.err")"
# shellcheck disable=SC2046
"$mmscope" compare --base "6.12" --new "6.12+tp" -E 3 --json $(ls "$a"/ab/vsf-*.mmscope) -- \
	$(ls "$b"/ab/vsf-*.mmscope) >"$kt/ab.json" 2>>"$kt/ab.err" ||
	fail "compare --json exited $?: $(cat "$kt/ab.err")"
cat "$kt/ab.txt"

python3 - "$kt/ab.json" "$kt/ab.txt" <<'PY' || exit 1
import json, sys
c = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
rows = c["rows"]
if c["runs"] != [3, 3]:
    sys.exit(f"FAIL: runs {c['runs']}, not 3 and 3")
s = rows[0]
if s["group"] != "score":
    sys.exit(f"FAIL: the first row is {s['group']}/{s['name']}, not the score")
for side in ("base", "new"):
    v = s[side]
    if v["n"] != 3 or not all(k in v for k in ("avg", "pct_stdev", "min", "max")):
        sys.exit(f"FAIL: the score's {side} side lacks avg, %stdev, min or max: {v}")
    if not v["min"] <= v["avg"] <= v["max"] or v["min"] <= 0:
        sys.exit(f"FAIL: the score's {side} side is not a set of throughputs: {v}")
if "change_pct" not in s or not s.get("verdict"):
    sys.exit(f"FAIL: the score row has no change or verdict: {s}")
locks = [r for r in rows if r["group"] == "locks"]
if not any("i_mmap_rwsem" in r["name"] for r in locks):
    sys.exit(f"FAIL: no i_mmap_rwsem row: {[r['name'] for r in locks]}")
vma = [r for r in rows if r["group"] == "vma"]
if not vma or not any(r["base"]["n"] == 3 and r["new"]["n"] == 3 for r in vma):
    sys.exit(f"FAIL: no VMA row measured on both kernels: {vma}")
for want in ("avg", "%stdev", "min", "max", "change"):
    if want not in text:
        sys.exit(f"FAIL: the text table has no '{want}'")
print(f"ok: score {s['base']['avg']:.1f} -> {s['new']['avg']:.1f} {s['metric']}, "
      f"{s['change_pct']:+.2f} %, {s['verdict']}; {len(locks)} lock rows, {len(vma)} VMA rows")
PY
echo "1 passed, 0 failed"
