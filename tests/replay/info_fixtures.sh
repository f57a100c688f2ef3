#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `mmscope info` on committed recordings (real ones from `mmscope record`, a
# truncated one, a header-only one), no privileges needed: text and --json,
# cross-checked with the independent reader (mmsrec.py, from docs/FORMAT.md);
# `mmscope report` (text, --json, by caller) on each of them and on the shipped
# demo; then the errors users meet: not a recording, a newer format, a missing
# file.
#
#   info_fixtures.sh MMSCOPE FIXTURE_DIR
#
# MMSCOPE_WRAP, when set, prefixes every mmscope run (scripts/test.sh sets it to
# valgrind memcheck, so the reader and report paths run under it).
set -u

mmscope=$1
fixtures=$2
here=$(cd "$(dirname "$0")" && pwd)
demo=$here/../../examples/demo.mmscope

# shellcheck disable=SC2086 # MMSCOPE_WRAP is a command line
mms() { ${MMSCOPE_WRAP:-} "$mmscope" "$@"; }

fail() { echo "FAIL: $*" >&2; exit 1; }

dir=$(mktemp -d /tmp/mmscope-info.XXXXXX) || fail "mktemp"
trap 'rm -rf "$dir"' EXIT

n=0
for f in "$fixtures"/*.mmscope; do
	name=$(basename "$f")
	mms info "$f" >"$dir/info.txt" 2>&1 || fail "$name: info failed: $(cat "$dir/info.txt")"
	mms info --json "$f" >"$dir/info.json" || fail "$name: info --json failed"
	python3 "$here/mmsrec.py" "$f" >"$dir/indep.json" || fail "$name: independent reader"
	python3 - "$dir/info.json" "$dir/indep.json" "$name" <<'EOF' || fail "$name: readers disagree"
import json, sys
info, ind, name = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
for k in ("intervals", "lock_rows", "metric_rows", "first_ns", "end_ns", "file_bytes",
          "blocks", "closed", "damaged", "good_bytes"):
    assert info[k] == ind[k], (k, info[k], ind[k])
assert sum(info["lost"].values()) == ind["lost"]
for k in ("strings", "stacks", "tasks", "locks"):
    assert info["defined"][k] == ind["defs"].get(k, 0), k
assert info["host"] == ind["host"] and info["kernel"] == ind["kernel"]
if name.startswith("live-"):
    assert info["complete"] and info["intervals"] >= 5 and info["sources"]["lock"]["source"]
if name == "truncated.mmscope":
    assert info["damaged"] and "cut short" in info["damage"] and info["intervals"] >= 1
if name == "header-only.mmscope":
    assert not info["closed"] and not info["damaged"] and info["intervals"] == 0
EOF
	case $name in
	truncated.*) grep -q '^status      damaged: block at byte [0-9]*: cut short' "$dir/info.txt" ||
			fail "$name: text does not say damaged" ;;
	header-only.*) grep -q '^status      unfinished' "$dir/info.txt" ||
			fail "$name: text does not say unfinished" ;;
	*) grep -q '^status      complete' "$dir/info.txt" || fail "$name: not complete" ;;
	esac
	grep -q '^sources     lock contention: ' "$dir/info.txt" || fail "$name: no sources"
	mms report "$f" >"$dir/report.txt" 2>&1 || fail "$name: report failed: $(cat "$dir/report.txt")"
	mms report --json --by caller "$f" >"$dir/report.json" 2>"$dir/err" ||
		fail "$name: report --json failed: $(cat "$dir/err")"
	python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$dir/report.json" ||
		fail "$name: report --json is not JSON"
	n=$((n + 1))
done
[ $n -ge 3 ] || fail "only $n fixtures in $fixtures"

# Errors users meet, each saying what is wrong.
echo "hello" >"$dir/text.mmscope"
mms info "$dir/text.mmscope" 2>"$dir/err" && fail "a text file was accepted"
grep -q "not an mmscope recording" "$dir/err" || fail "unclear: $(cat "$dir/err")"
python3 - "$fixtures/live-cmd.mmscope" "$dir/newer.mmscope" <<'EOF'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
b[8] = 2
open(sys.argv[2], "wb").write(b)
EOF
mms info "$dir/newer.mmscope" 2>"$dir/err" && fail "a newer major version was accepted"
grep -q "recording format 2.0 is newer than this mmscope reads" "$dir/err" ||
	fail "unclear: $(cat "$dir/err")"
mms info "$dir/missing.mmscope" 2>"$dir/err" && fail "a missing file was accepted"
grep -q "cannot open $dir/missing.mmscope: No such file or directory" "$dir/err" ||
	fail "unclear: $(cat "$dir/err")"
mms report --by lock --percentiles --stacks "$demo" >"$dir/report.txt" 2>&1 ||
	fail "demo: report failed: $(cat "$dir/report.txt")"
grep -Eq "rwsem +mmap_lock \([0-9]+ mmap_churn\)" "$dir/report.txt" || fail "demo: no mm lock in the report"
# Without a terminal, replay says what to run instead, for this file.
mms replay "$demo" </dev/null >"$dir/replay.out" 2>&1 && fail "replay without a terminal exited 0"
grep -q "replay needs a terminal.*mmscope report $demo" "$dir/replay.out" ||
	fail "replay without a terminal: $(cat "$dir/replay.out")"
echo "PASS: $n fixtures and the demo"
