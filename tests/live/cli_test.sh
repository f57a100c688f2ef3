#!/usr/bin/env bash
# The command line as users script against it: check tells the truth about
# this kernel, privileges and bad input give clear messages and the
# documented exit codes, and report names the locks it sees.
# usage: cli_test.sh MMSCOPE MPROTECT_TOGGLE
set -u
mms=$1 toggle=$2
fail=0
tmp=$(mktemp -d /tmp/mms-cli-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }

ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }
expect_rc() {	# WANT DESC CMD...
	local want=$1 desc=$2 rc
	shift 2
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" = "$want" ]; then ok "$desc (exit $rc)"; else
		bad "$desc: exit $rc, wanted $want"; sed 's/^/    /' "$tmp/out" "$tmp/err" | head -20
	fi
}
expect_err() {	# PATTERN DESC
	if grep -qE "$1" "$tmp/err"; then ok "$2"; else bad "$2: stderr lacks /$1/"; sed 's/^/    /' "$tmp/err" | head; fi
}
expect_out() {	# PATTERN DESC
	if grep -qE "$1" "$tmp/out"; then ok "$2"; else bad "$2: stdout lacks /$1/"; sed 's/^/    /' "$tmp/out" | head -30; fi
}

expect_rc 0 "--version" "$mms" --version
expect_out '^mmscope [0-9]' "version string"
expect_rc 0 "--help" "$mms" --help
expect_out 'mmscope check' "help lists commands"

# check: what really works here.  Compare each line with what we can see by hand.
expect_rc 0 "check" "$mms" check
expect_out '^lock contention +bpf +available' "check: lock-bpf available"
expect_out '^lock contention +perf +available' "check: lock-perf available"
expect_out '^VMA split/merge +tracepoint +missing .*vma:vma_split not found' "check: patched tracepoint missing"
if [ -d /sys/kernel/tracing/events/vma ]; then bad "this kernel has vma tracepoints: test assumptions wrong"; fi
expect_out '^VMA split/merge +fentry +missing .*EPERM' "check: fentry EPERM"
expect_out '^VMA split/merge +inferred +available' "check: inferred VMA available"
expect_out '^try_to_unmap batches +tracepoint +missing' "check: rmap tracepoint missing"

# Unprivileged: which privilege, what to do instead, exit 77, no crash.
if command -v setpriv >/dev/null; then
	expect_rc 77 "unprivileged report" setpriv --reuid=nobody --regid=nogroup --clear-groups \
		--inh-caps=-all "$mms" report --duration 1
	expect_err 'needs CAP_BPF and CAP_PERFMON' "unprivileged: names the privileges"
	expect_err 'replay' "unprivileged: points to recordings"
	expect_rc 77 "unprivileged check" setpriv --reuid=nobody --regid=nogroup --clear-groups \
		--inh-caps=-all "$mms" check
fi

# Bad input.
expect_rc 2 "unknown option" "$mms" report --bogus
expect_err "unrecognized option" "unknown option named"
expect_rc 2 "bad type filter" "$mms" report -Y nolock
expect_err "unknown lock type 'nolock'" "bad type named"
expect_rc 2 "-p with command" "$mms" report -p 1 -- true
expect_rc 2 "hold sample not a power of two" "$mms" report --mmap-hold-sample 3
expect_err "power of two from 1 to 65536, not '3'" "hold sample named"
expect_rc 2 "record without -o" "$mms" record --duration 1
expect_rc 2 "compare one side" "$mms" compare "$tmp/x"
# A PID that does not exist: clear error before anything starts.
pid=$(( $(cat /proc/sys/kernel/pid_max) - 3 ))
while kill -0 "$pid" 2>/dev/null; do pid=$((pid - 1)); done
expect_rc 1 "-p missing pid" "$mms" report --duration 1 -p "$pid"
expect_err "process $pid does not exist" "missing pid named"
# A command that cannot be executed: 127, says why.
expect_rc 127 "-- missing command" "$mms" report --duration 5 -- /nonexistent/cmd
expect_err "cannot run '/nonexistent/cmd': No such file or directory" "exec failure named"
# -- CMD: the command's exit status comes back.
expect_rc 3 "-- CMD exit status" "$mms" report -- sh -c 'exit 3'

# report on a deterministic workload: the inferred VMA metrics name the syscall,
# and the JSON carries them with exact counts (N toggles = 2N mprotect calls).
expect_rc 0 "report text with metrics" "$mms" report --by process -- "$toggle" -n 200
# ld.so adds a few mprotect calls of its own; the toggles' splits back are exact.
expect_out '^vma\.inferred\.down +mprotect +[0-9]+ +mprotect_toggle +200 .* 400 ' "text report: 200 mprotects of -2"
expect_out '^ +contended +total wait' "text report: perf's header"
expect_rc 0 "report json" "$mms" report --json -o "$tmp/r.json" -- "$toggle" -n 200
python3 - "$tmp/r.json" <<'PY' && ok "json report: sources, metrics, lost" || bad "json report content"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["sources"]["lock"]["backend"] == "bpf", r["sources"]
assert r["sources"]["vma"]["backend"] == "inferred", r["sources"]
assert "why" in r["sources"]["mmap_lock"]
assert set(r["lost"]) >= {"task_slot", "stack", "time", "map_full", "ring_lost"}
m = [x for x in r["metrics"] if x["name"] == "vma.inferred.down" and x["detail"] == "mprotect"
     and x["comm"] == "mprotect_toggle"]
assert m and m[0]["count"] == 200 and m[0]["total"] == 400, m
PY

# Sampled hold mode end to end: the JSON says which source, the acquisition count is
# an estimate (1000 toggles: 2000 write holds, about 250 timed, 5 sigma allowed).
expect_rc 0 "report --mmap-hold-sample" "$mms" report --mmap-hold-sample 8 --by process \
	--json -o "$tmp/s.json" -- "$toggle" -n 1000
python3 - "$tmp/s.json" <<'PY' && ok "sampled holds: estimated, labelled" || bad "sampled holds"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["sources"]["mmap_lock"]["backend"] == "sampled", r["sources"]["mmap_lock"]
m = [x for x in r["metrics"] if x["name"] == "mmap_lock.acquire.write"
     and x["comm"] == "mprotect_toggle"]
assert m and m[0]["count"] % 8 == 0 and 1400 <= m[0]["count"] <= 2600, m
PY

# -p on one of two identical workloads sees only that one (locks, mmap_lock and
# VMA metrics alike).  They outlive the report: start-up under load takes seconds.
churn=$(dirname "$toggle")/mmap_churn
"$churn" -t 2 -s 30 >/dev/null 2>&1 &
a=$!
"$churn" -t 2 -s 30 >/dev/null 2>&1 &
b=$!
expect_rc 0 "-p one of two" "$mms" report -p "$a" --duration 3 --by process --json -o "$tmp/p.json"
kill "$a" "$b" 2>/dev/null
wait "$a" "$b" 2>/dev/null
python3 - "$tmp/p.json" "$a" "$b" <<'PY' && ok "-p: only the followed process" || bad "-p leaked another process"
import json, sys
r = json.load(open(sys.argv[1]))
a, b = int(sys.argv[2]), int(sys.argv[3])
pids = {x["pid"] for x in r["rows"]}
assert pids == {a}, (pids, a, b)
mp = {x["pid"] for x in r["metrics"] if x["pid"]}
assert mp == {a}, (mp, a, b)
PY

# Failed trylocks are counted one by one: each row's count is its total.  mmap_churn's
# faults land on VMAs its other threads are changing; the per-VMA lock gives way and the
# fault's mmap_read_trylock() fails while a writer holds mmap_lock (thousands a second).
expect_rc 0 "report --mmap-hold, failed trylocks" "$mms" report --mmap-hold --by process \
	--json -o "$tmp/t.json" -- "$churn" -t 4 -s 2 -f "$tmp/churn.dat"
python3 - "$tmp/t.json" <<'PY' && ok "failed trylocks counted one by one" || bad "failed trylocks"
import json, sys
r = json.load(open(sys.argv[1]))
m = [x for x in r["metrics"] if x["name"] == "mmap_lock.trylock_fail" and x["comm"] == "mmap_churn"]
assert m and m[0]["count"] >= 100 and m[0]["count"] == m[0]["total"], m
PY

# System-wide, processes that lived less than an interval are one row per name in
# --by task: "<comm>" without a pid (JSON: short_lived, pid 0), not a row per process.
( while :; do "$churn" -t 4 -n 300 >/dev/null 2>&1; sleep 0.05; done ) &
loop=$!
expect_rc 0 "system-wide by task, json" "$mms" report --by task --duration 3 --json -o "$tmp/t.json"
expect_rc 0 "system-wide by task, text" "$mms" report --by task --duration 3 -E 0
kill "$loop" 2>/dev/null
wait "$loop" 2>/dev/null
expect_out '^ +[0-9]+ .* +- +<mmap_churn>$' "text: short-lived mmap_churn as <mmap_churn>, no pid"
python3 - "$tmp/t.json" <<'PY' && ok "json: short-lived processes in one row" || bad "short-lived rows"
import json, sys
r = json.load(open(sys.argv[1]))
churn = [x for x in r["rows"] if x["comm"] == "mmap_churn"]
g = [x for x in churn if x["short_lived"]]
assert len(g) == 1 and g[0]["pid"] == 0 and g[0]["tgid"] == 0 and g[0]["name"] == "<mmap_churn>", churn
# Runs of ~0.1 s each: none lives through a 1 s interval's end to keep rows of its own
# for long; any that did are far fewer than the group's.
assert sum(x["contended"] for x in churn if not x["short_lived"]) < g[0]["contended"], churn
PY

# The lock handler's own-time diagnostic (bench/run --bpf-cost): rwsem write waits
# of two threads, each with a stack walk that took time.
MMSCOPE_SELF_COST=1 expect_rc 0 "MMSCOPE_SELF_COST report" "$mms" report --duration 2 \
	--vma-source off --rmap-source off -- "$churn" -t 2 -s 2
expect_err '^self-cost: contention_begin type=rwsem:W waits=[1-9][0-9]* ns_per_wait=[1-9][0-9]* drain=[0-9]+ stack=[1-9][0-9]{2,} name=[0-9]+ cached=[0-9]+ cached_stack=[0-9]+ wait_lock=1$' \
	"MMSCOPE_SELF_COST: rwsem:W waits with their stack walk's time"
# A report that shows no caller takes no stacks (and still names the lock).
MMSCOPE_SELF_COST=1 expect_rc 0 "report --by lock, no stacks" "$mms" report --duration 2 \
	--by lock --vma-source off --rmap-source off -- "$churn" -t 2 -s 2
expect_err '^self-cost: contention_begin type=rwsem:W waits=[1-9][0-9]* ns_per_wait=[1-9][0-9]* drain=[0-9]+ stack=0 name=[0-9]+ cached=0 cached_stack=0 wait_lock=1$' \
	"report --by lock: rwsem:W waits without a stack walk"
expect_out '^ +[0-9]+ .* rwsem +mmap_lock \([0-9]+ mmap_churn\)' "report --by lock: mmap_lock named"

# The stack cache (lock_bpf.bpf.c, "Stacks without the unwinder"): with every hit
# also walked, the cache must have given the unwinder's own stack id each time.
MMSCOPE_STACK_CHECK=1 MMSCOPE_SELF_COST=1 expect_rc 0 "report, every cached stack checked" \
	"$mms" report --duration 4 --vma-source off --rmap-source off -- "$churn" -t 4 -s 4
expect_err '^self-cost: stack-cache hits=[1-9][0-9]{2,} misses=[0-9]+ no_rule=[0-9]+ no_walk=[0-9]+ checked=[0-9]+ bad=0 samples=[1-9][0-9]* rules=[1-9][0-9]* holders=0$' \
	"stack cache: hundreds of hits, none different from the unwinder's"
if grep -qE '^self-cost: stack-cache hits=([0-9]+) .* checked=\1 bad=0 ' "$tmp/err"; then
	ok "stack cache: every hit was checked"
else
	bad "stack cache: hits and checks differ: $(grep stack-cache "$tmp/err")"
fi
MMSCOPE_STACK_CACHE=0 MMSCOPE_SELF_COST=1 expect_rc 0 "report, stack cache off" \
	"$mms" report --duration 2 --vma-source off --rmap-source off -- "$churn" -t 2 -s 2
expect_err '^self-cost: stack-cache hits=0 .* samples=0 rules=0 \(off\) holders=0$' \
	"MMSCOPE_STACK_CACHE=0: no cache, no samples"

[ $fail = 0 ] && echo "all cli checks passed"
exit $fail
