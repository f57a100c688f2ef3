#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# What was shown is what was recorded: one live session prints its report
# (`mmscope report --json -o FILE`, the recorder tapping the same session) and
# `mmscope report FILE --json` must print the very same numbers: every row
# (by caller and by lock), the totals, the lost counters and the metrics.
# Only what describes the run rather than the data may differ (sources: the
# file says "replay"; per-second rates use the recorded time).
#
#   record_report.sh MMSCOPE MMAP_CHURN
set -u

mmscope=$1
churn=$2

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || skip "needs root (BPF, tracepoints)"
dir=$(mktemp -d /tmp/mmscope-recrep.XXXXXX) || fail "mktemp"
trap 'if [ -n "${KEEP:-}" ]; then echo "kept $dir"; else rm -rf "$dir"; fi' EXIT

f=$dir/live.mmscope
"$mmscope" report --json --by caller -E 0 -o "$f" -- "$churn" -t 4 -p 16 -s 3 \
	>"$dir/live.json" 2>"$dir/live.err"
rc=$?
grep -q "no lock contention source works" "$dir/live.err" && skip "no lock source"
[ $rc = 0 ] || fail "live report exited $rc: $(cat "$dir/live.err")"
[ -s "$f" ] || skip "report -o FILE does not record yet (cmd/cmd_report.c)"
"$mmscope" report "$f" --json --by caller -E 0 >"$dir/file.json" 2>"$dir/file.err"
rc=$?
grep -q "not available" "$dir/file.err" && skip "report FILE is not available yet"
[ $rc = 0 ] || fail "report FILE exited $rc: $(cat "$dir/file.err")"

python3 - "$dir/live.json" "$dir/file.json" <<'EOF' || fail "report FILE differs from the live report"
import json, sys
live = json.load(open(sys.argv[1]))
rec = json.load(open(sys.argv[2]))
ok = True
def same(what, a, b):
    global ok
    if a != b:
        print("differs: %s\n  live: %r\n  file: %r" % (what, a, b))
        ok = False
rows = lambda r: sorted(json.dumps(x, sort_keys=True) for x in r["rows"])
same("rows", rows(live), rows(rec))
same("totals", live["totals"], rec["totals"])
same("lost", live["lost"], rec["lost"])
same("intervals", live["intervals"], rec["intervals"])
strip = lambda r: sorted(json.dumps({k: v for k, v in m.items() if k != "per_sec"},
                                    sort_keys=True) for m in r["metrics"])
same("metrics", strip(live), strip(rec))
if not live["totals"]["contended"]:
    print("no contention seen: nothing was compared"); ok = False
print("%d rows, %d contentions, %d metrics: identical" %
      (len(live["rows"]), live["totals"]["contended"], len(live["metrics"])))
sys.exit(0 if ok else 1)
EOF
echo "PASS"
