#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# A perf.data capture (Debian's perf 6.1: perf lock record -- mmap_churn -t 3
# -n 200, committed in tests/data) read without privileges by info, report,
# compare and replay's reader: the Locks and Tasks tables equal the capture's
# own records paired per thread and lock (tests/data/*.expect.json, made with
# perf script; checked again here with perf script when perf is installed),
# to the wait and the nanosecond; info and report say what a capture lacks.
# Then hostile variants of it (perfdata_hostile.py): bounded memory and CPU.
#
#   perfdata_replay.sh MMSCOPE DATA_DIR
#
# MMSCOPE_WRAP, when set, prefixes every mmscope run (valgrind in scripts/test.sh).
set -u

mmscope=$1
data=$2
here=$(cd "$(dirname "$0")" && pwd)
cap=$data/perf_lock_mmap_churn.data
expect=$data/perf_lock_mmap_churn.expect.json

# shellcheck disable=SC2086 # MMSCOPE_WRAP is a command line
mms() { ${MMSCOPE_WRAP:-} "$mmscope" "$@"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

dir=$(mktemp -d /var/tmp/mmscope-perfdata.XXXXXX) || fail "mktemp"
trap 'rm -rf "$dir"' EXIT

for by in lock task caller; do
	mms report "$cap" --by "$by" --json -E 0 >"$dir/$by.json" 2>"$dir/$by.err" ||
		fail "report --by $by: $(cat "$dir/$by.err")"
done
python3 - "$expect" "$dir" <<'PY' || fail "the tables disagree with the capture's records"
import json, sys
exp, d = json.load(open(sys.argv[1])), sys.argv[2]
load = lambda by: json.load(open(f"{d}/{by}.json"))
def group(doc, key):
    out = {}
    for r in doc["rows"]:
        c, t = out.get(key(r), (0, 0))
        out[key(r)] = (c + r["contended"], t + r["wait_total_ns"])
    return {k: list(v) for k, v in out.items()}
bad = 0
for by, key, want in (("lock", lambda r: hex(int(r["addr"], 16)), exp["locks"]),
                      ("task", lambda r: str(r["pid"]), exp["tasks"])):
    got = group(load(by), key)
    ok = got == want
    bad += not ok
    print(f"{by}: {len(want)} keys, {sum(c for c, _ in want.values())} waits, "
          f"{sum(t for _, t in want.values())} ns: {'exact' if ok else 'DIFFERENT'}")
    if not ok:
        for k in sorted(set(got) | set(want)):
            if got.get(k) != want.get(k):
                print(f"  {k}: capture {want.get(k)}, mmscope {got.get(k)}")
for by in ("lock", "task", "caller"):
    t = load(by)["totals"]
    ok = [t["contended"], t["wait_total_ns"]] == exp["total"]
    bad += not ok
    print(f"total by {by}: {t['contended']} waits {t['wait_total_ns']} ns "
          f"({'exact' if ok else 'DIFFERENT from ' + str(exp['total'])})")
src = load("caller")["sources"]
if src["lock"]["source"] != "perf.data" or "lock waits only" not in src["lock"]["note"]:
    print(f"lock source: {src['lock']}"); bad += 1
sys.exit(1 if bad else 0)
PY

# The oracle itself, where perf is here: the committed figures are the capture's.
if command -v perf >/dev/null; then
	perf script -f -i "$cap" --ns -F tid,cpu,time,event,trace >"$dir/script.txt" 2>"$dir/perf.err" ||
		fail "perf script: $(tail -n 3 "$dir/perf.err")"
	python3 - "$expect" "$dir/script.txt" "$here/../live" <<'PY' || fail "perf script disagrees with $expect"
import json, sys
sys.path.insert(0, sys.argv[3])
import perfdata_oracle as o
exp = json.load(open(sys.argv[1]))
locks, tasks, _, _ = o.script_pairs(sys.argv[2], [])
ok = ({hex(k): list(v) for k, v in locks.items()} == exp["locks"] and
      {str(k): list(v) for k, v in tasks.items()} == exp["tasks"])
print(f"perf script of the capture: {'the same' if ok else 'NOT the same'} figures")
sys.exit(0 if ok else 1)
PY
fi

mms info "$cap" >"$dir/info.txt" 2>&1 || fail "info: $(cat "$dir/info.txt")"
grep -q '^format      perf.data capture, written by perf 6\.1\.[0-9]*, read as a recording' \
	"$dir/info.txt" || fail "info names no perf.data or perf: $(head -3 "$dir/info.txt")"
grep -q 'lock contention: perf.data (perf); a perf lock record capture' "$dir/info.txt" ||
	fail "info does not say where the waits come from"
grep -q 'mmap_lock: none: not in a perf lock record capture' "$dir/info.txt" ||
	fail "info does not say the capture has no mm sources"
grep -Eq "named with this machine's kallsyms|kernel addresses unnamed" "$dir/info.txt" ||
	fail "info does not say whether addresses are named"
grep -q '^command .*perf lock record' "$dir/info.txt" || fail "info lacks perf's command line"
mms info --json "$cap" >"$dir/info.json" || fail "info --json"
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["format"] == "perf.data"' \
	"$dir/info.json" || fail "info --json does not say perf.data"
mms report "$cap" >"$dir/report.txt" 2>&1 || fail "report: $(cat "$dir/report.txt")"
grep -q 'lock contention: perf.data: a perf lock record capture' "$dir/report.txt" ||
	fail "report does not say what the capture is"
grep -q 'VMA split/merge: unavailable: not in a perf lock record capture' "$dir/report.txt" ||
	fail "report does not say the capture has no VMA source"
mms compare "$cap" -- "$cap" >"$dir/compare.txt" 2>&1 || fail "compare: $(cat "$dir/compare.txt")"
grep -q 'rwsem' "$dir/compare.txt" || fail "compare shows no lock: $(head "$dir/compare.txt")"
echo "info, report and compare read the capture"

python3 "$here/perfdata_hostile.py" "$mmscope" "$cap" "$dir" || fail "hostile captures"
echo PASS
