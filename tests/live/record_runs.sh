#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# record --runs N --score: the patch-mail A/B in one tool, on the real binary.
#
#   usage   bad regexes and options: exit 2 and a message, before anything runs
#   score   the command's output reaches stdout byte for byte while it is read;
#           no match, a non-number: exit 1 and what the output held
#   fail    a run whose command fails stops the series: earlier runs kept, its
#           file removed, mmscope exits with the command's status
#   sigint  SIGINT (to mmscope alone: it forwards it) during run 2 of 3: run 1
#           is kept with its score, run 2's file removed, run 3 never starts,
#           exit 130, no process of the run left behind
#   e2e     vma_split_file -S with 1 and with 4 processes, 3 runs each: compare
#           gives the score block first (avg, %stdev, min, max, change,
#           verdict) whose per-run values are the workload's own score lines,
#           then the lock rows (the 4 processes wait on i_mmap_rwsem); report
#           shows each run's score
#
#   record_runs.sh MMSCOPE VMA_SPLIT_FILE [CASE...]
set -u

mmscope=$1
vsf=$2
shift 2
cases=${*:-usage score fail sigint e2e}

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || skip "needs root (BPF, tracepoints)"
# Not under /tmp: a guest mounts tmpfs there.
dir=$(mktemp -d /var/tmp/mmscope-runs.XXXXXX) || fail "mktemp"
trap 'if [ -n "${KEEP:-}" ]; then echo "kept $dir"; else rm -rf "$dir"; fi' EXIT

# expect_usage MESSAGE ARGS...: exit 2, MESSAGE on stderr, no file written.
expect_usage() {
	local msg=$1 rc
	shift
	"$mmscope" "$@" >"$dir/u.out" 2>"$dir/u.err"
	rc=$?
	[ $rc = 2 ] || fail "'$*' exited $rc, not 2: $(cat "$dir/u.err")"
	grep -qF -- "$msg" "$dir/u.err" || fail "'$*' did not say '$msg': $(cat "$dir/u.err")"
	[ -z "$(ls "$dir" | grep -v '^u\.')" ] || fail "'$*' left files: $(ls "$dir")"
}

case_usage() {
	expect_usage "is not a valid extended regular expression" \
		record --score 'x ([0-9]+' -o "$dir/a.mms" -- true
	expect_usage "has 0 capture groups; it needs exactly one" \
		record --score 'x [0-9]+' -o "$dir/a.mms" -- true
	expect_usage "has 2 capture groups" record --score '(x) ([0-9]+)' -o "$dir/a.mms" -- true
	expect_usage "are for record -o FILE ... -- CMD" record --runs 3 -o "$dir/a.mms"
	expect_usage "describe a score" record --score-unit ms -o "$dir/a.mms" -- true
	expect_usage "one score a run" record --score-default --score-file f -o "$dir/a.mms" -- true
	expect_usage "--runs takes 1..1000" record --runs 0 -o "$dir/a.mms" -- true
	expect_usage "--cooldown is the pause between --runs" \
		record --cooldown 3 -o "$dir/a.mms" -- true
	echo "ok: usage errors"
}

# rec NAME ARGS...: record into $dir/NAME; stdout, stderr and rc kept.
rec() {
	local name=$1
	shift
	"$mmscope" record -o "$dir/$name" "$@" >"$dir/$name.out" 2>"$dir/$name.err"
	echo $? >"$dir/$name.rc"
	grep -q "no lock contention source works" "$dir/$name.err" && skip "no lock source"
	return 0
}

case_score() {
	local want
	# Output the way benchmarks write it: partial lines, a long line, no final newline.
	rec s.mms --score 'Throughput ([0-9.]+)' -- sh -c \
		'printf "Execl Throughput 1.5 lps\nExecl Throughput 2"; sleep 0.3;
		 printf "05.25 lps (30 s)\n%04000d\ntail without newline" 7'
	[ "$(cat "$dir/s.mms.rc")" = 0 ] || fail "score run exited $(cat "$dir/s.mms.rc"): $(cat "$dir/s.mms.err")"
	want=$(printf "Execl Throughput 1.5 lps\nExecl Throughput 205.25 lps (30 s)\n%04000d\ntail without newline" 7)
	[ "$(cat "$dir/s.mms.out")" = "$want" ] || fail "the command's output did not reach stdout as it was"
	grep -q "^mmscope: score: 205.25 lps (sh, the last of the lines that matched)" "$dir/s.mms.err" ||
		fail "no score line: $(cat "$dir/s.mms.err")"
	"$mmscope" info "$dir/s.mms" >"$dir/s.info" || fail "info"
	grep -q "^score       205.25 lps (sh, higher is better; the last of the lines that matched)" \
		"$dir/s.info" || fail "info: $(cat "$dir/s.info")"
	"$mmscope" info --json "$dir/s.mms" | grep -q '"score": 205.25, "text": "205.25"' ||
		fail "info --json has no score"

	rec n.mms --score 'Throughput ([0-9.]+)' -- sh -c 'echo nothing to see'
	[ "$(cat "$dir/n.mms.rc")" = 1 ] || fail "no match exited $(cat "$dir/n.mms.rc")"
	grep -q "no score: no line of the command's output matched 'Throughput (\[0-9.\]+)' (1 lines read)" \
		"$dir/n.mms.err" || fail "no match: $(cat "$dir/n.mms.err")"
	[ -f "$dir/n.mms" ] || fail "a run without a score loses its recording"
	"$mmscope" info "$dir/n.mms" | grep -q "^score       none: no line" || fail "info: no score"

	rec x.mms --score-default -- sh -c 'echo "score: 12,5 execs/s"'
	[ "$(cat "$dir/x.mms.rc")" = 1 ] || fail "non-number exited $(cat "$dir/x.mms.rc")"
	grep -q "no score: line 1 (the last of 1 matches): '12,5' is not a number" "$dir/x.mms.err" ||
		fail "non-number: $(cat "$dir/x.mms.err")"

	echo 0 >"$dir/f.score"
	rec f.mms --score-file "$dir/f.score" --score-name elapsed --score-unit s \
		--score-lower-better -- sh -c "sleep 0.2; echo 41.5 > $dir/f.score"
	[ "$(cat "$dir/f.mms.rc")" = 0 ] || fail "score file: $(cat "$dir/f.mms.err")"
	"$mmscope" report "$dir/f.mms" | head -1 | grep -qx "score: 41.5 s (elapsed, lower is better)" ||
		fail "report: $("$mmscope" report "$dir/f.mms" | head -1)"
	# A unit from outside (here the option; a recording's RUN block alike) with a C1 CSI:
	# every text output shows it escaped.
	rec c.mms --score-default --score-unit $'u\xc2\x9b31m' -- sh -c 'echo "score: 12 x"'
	[ "$(cat "$dir/c.mms.rc")" = 0 ] || fail "C1 unit run: $(cat "$dir/c.mms.err")"
	for out in "$("$mmscope" report "$dir/c.mms" | head -1)" "$("$mmscope" info "$dir/c.mms")" \
		   "$(cat "$dir/c.mms.err")"; do
		case $out in *$'\xc2\x9b'*) fail "a raw C1 CSI reached the text: $out" ;; esac
	done
	"$mmscope" report "$dir/c.mms" | head -1 | grep -qF 'score: 12 u\u009b31m' ||
		fail "report: $("$mmscope" report "$dir/c.mms" | head -1)"
	echo "ok: score from output and file; no match and non-numbers said; a C1 unit escaped"
}

case_fail() {
	rm -f "$dir/count"
	rec r.mms --runs 3 --score-default -- sh -c \
		"n=\$(cat $dir/count 2>/dev/null || echo 0); echo \$((n + 1)) > $dir/count;
		 echo \"score: 1\$n.5 u\"; [ \$n = 1 ] && exit 3; exit 0"
	[ "$(cat "$dir/r.mms.rc")" = 3 ] || fail "a failing run: exit $(cat "$dir/r.mms.rc"), not 3"
	[ -f "$dir/r-1.mms" ] || fail "run 1 was not kept"
	[ ! -e "$dir/r-2.mms" ] || fail "the failed run 2 was kept"
	[ ! -e "$dir/r-3.mms" ] || fail "run 3 ran after a failure"
	[ "$(cat "$dir/count")" = 2 ] || fail "the command ran $(cat "$dir/count") times"
	grep -q "run 2/3 does not count: the command exited with status 3" "$dir/r.mms.err" ||
		fail "$(cat "$dir/r.mms.err")"
	grep -q "stopped the series: kept the 1 finished run: $dir/r-1.mms; removed $dir/r-2.mms" \
		"$dir/r.mms.err" || fail "$(cat "$dir/r.mms.err")"
	echo "ok: a failing run stops the series"
}

case_sigint() {
	local pid i rc
	rm -f "$dir/count"
	# Run 1 ends at once; run 2 waits (a benchmark in progress) until interrupted.
	"$mmscope" record --runs 3 --cooldown 1 --score-default -o "$dir/i.mms" -- sh -c \
		"n=\$(cat $dir/count 2>/dev/null || echo 0); echo \$((n + 1)) > $dir/count;
		 echo \"score: 1\$n.5 u\"; [ \$n -ge 1 ] && exec sleep 61.37; exit 0" \
		>"$dir/i.out" 2>"$dir/i.err" &
	pid=$!
	for i in $(seq 600); do
		[ "$(cat "$dir/count" 2>/dev/null)" = 2 ] && break
		kill -0 $pid 2>/dev/null || break
		sleep 0.1
	done
	grep -q "no lock contention source works" "$dir/i.err" && skip "no lock source"
	[ "$(cat "$dir/count" 2>/dev/null)" = 2 ] || fail "run 2 never started: $(cat "$dir/i.err")"
	sleep 1
	kill -INT $pid
	for i in $(seq 300); do
		kill -0 $pid 2>/dev/null || break
		sleep 0.1
	done
	kill -0 $pid 2>/dev/null && { kill -KILL $pid; fail "mmscope did not stop on SIGINT"; }
	wait $pid
	rc=$?
	[ $rc = 130 ] || fail "exit $rc after SIGINT, not 130: $(cat "$dir/i.err")"
	[ -f "$dir/i-1.mms" ] || fail "the finished run 1 was not kept"
	[ ! -e "$dir/i-2.mms" ] || fail "the interrupted run 2 was kept"
	[ ! -e "$dir/i-3.mms" ] || fail "run 3 ran"
	grep -q "stopped by Interrupt during run 2/3: kept the 1 finished run: $dir/i-1.mms; removed the unfinished $dir/i-2.mms" \
		"$dir/i.err" || fail "$(cat "$dir/i.err")"
	pgrep -f 'sleep 61.37' >/dev/null && fail "the interrupted run's command is still running"
	"$mmscope" info "$dir/i-1.mms" >"$dir/i.info" || fail "info i-1"
	grep -q "^run         1 of 3" "$dir/i.info" || fail "info: $(cat "$dir/i.info")"
	grep -q "^score       10.5 u (sh, higher is better; run 1 of 3)" "$dir/i.info" ||
		fail "info: $(cat "$dir/i.info")"
	grep -q "^status      complete" "$dir/i.info" || fail "run 1 is not complete"
	echo "ok: SIGINT during run 2 of 3 keeps run 1"
}

case_e2e() {
	local procs
	for side in a b; do
		procs=1
		[ $side = b ] && procs=4
		rec $side.mms --runs 3 --cooldown 1 --score-default --score-name vma_split_file -- \
			"$vsf" -f "$dir/shared" -P $procs -p 64 -S -s 2
		[ "$(cat "$dir/$side.mms.rc")" = 0 ] ||
			fail "record $side: exit $(cat "$dir/$side.mms.rc"): $(cat "$dir/$side.mms.err")"
		[ "$(grep -c '^score: ' "$dir/$side.mms.out")" = 3 ] ||
			fail "$side: the workload's output did not come through: $(cat "$dir/$side.mms.out")"
		grep -q "^mmscope: 3 of 3 runs recorded: $dir/$side-1.mms .. $dir/$side-3.mms" \
			"$dir/$side.mms.err" || fail "$(cat "$dir/$side.mms.err")"
		grep -q "cooling down" "$dir/$side.mms.err" || fail "no cool-down said"
	done
	"$mmscope" compare --base 1-proc --new 4-procs "$dir"/a-*.mms -- "$dir"/b-*.mms \
		>"$dir/cmp.txt" 2>"$dir/cmp.err" || fail "compare: $(cat "$dir/cmp.err")"
	"$mmscope" compare --json "$dir"/a-*.mms -- "$dir"/b-*.mms >"$dir/cmp.json" ||
		fail "compare --json"
	python3 - "$dir" <<'EOF' || fail "compare says the wrong thing (KEEP=1 keeps $dir)"
import json, re, statistics, sys
d = sys.argv[1]
txt = open(f'{d}/cmp.txt').read()
js = json.load(open(f'{d}/cmp.json'))
# The oracle: the workload's own score lines, as it printed them, run by run.
own = {s: [float(m) for m in re.findall(r'^score: ([0-9.]+) cycles/s$',
                                        open(f'{d}/{s}.mms.out').read(), re.M)] for s in 'ab'}
score = js['rows'][0]
assert score['group'] == 'score' and score['name'] == 'vma_split_file', score
assert score['metric'] == 'cycles/s' and score['higher_is_better'], score
assert score['base']['values'] == own['a'], (score['base']['values'], own['a'])
assert score['new']['values'] == own['b'], (score['new']['values'], own['b'])
for side, k in (('base', 'a'), ('new', 'b')):
    v = own[k]
    assert abs(score[side]['avg'] - statistics.mean(v)) < 1e-6 * statistics.mean(v)
    assert abs(score[side]['pct_stdev'] - statistics.stdev(v) / statistics.mean(v) * 100) < 1e-3
    assert score[side]['min'] == min(v) and score[side]['max'] == max(v)
change = (statistics.mean(own['b']) - statistics.mean(own['a'])) / statistics.mean(own['a']) * 100
assert abs(score['change_pct'] - change) < 1e-3, (score['change_pct'], change)
assert score['verdict'] in ('significant', 'within noise'), score['verdict']
# The text: the score block first, as the mails have it, then the lock rows.
blocks = txt.split('\n\n')
assert blocks[1].startswith('vma_split_file: cycles/s, higher is better\n'), blocks[1]
head, base, new, ch = blocks[1].split('\n')[1:5]
assert head.split() == ['runs', 'avg', '%stdev', 'min', 'max'], head
fmt = lambda x: '%.2f' % x
b = base.split()
assert b[0] == '1-proc' and b[1] == '3' and b[2] == fmt(statistics.mean(own['a'])), base
assert b[4] == fmt(min(own['a'])) and b[5] == fmt(max(own['a'])), base
n = new.split()
assert n[0] == '4-procs' and n[2] == fmt(statistics.mean(own['b'])), new
assert ch.split()[0] == 'change' and ch.split()[1] == '%+.2f%%' % change, ch
assert score['verdict'] in ch, ch
assert any(b.startswith('all i_mmap_rwsem: avg wait') for b in blocks), 'no i_mmap_rwsem row'
# 4 processes splitting under each other's write-back wait on the file's i_mmap_rwsem.
imm = [r for r in js['rows'] if r['name'] == 'all i_mmap_rwsem' and r['metric'] == 'avg wait']
assert imm and imm[0]['new']['present'] >= 2, imm
assert any(b.startswith('all locks: wait/s') for b in blocks), 'no lock rows'
assert txt.index('vma_split_file:') < txt.index('all locks:')
assert max(len(l) for l in txt.split('\n')) <= 80
print(f"score {statistics.mean(own['a']):.1f} -> {statistics.mean(own['b']):.1f} cycles/s "
      f"({change:+.2f}%, {score['verdict']})")
EOF
	"$mmscope" report "$dir/b-2.mms" | head -1 |
		grep -q "^score: [0-9.]* cycles/s (vma_split_file, higher is better; run 2 of 3)$" ||
		fail "report b-2: $("$mmscope" report "$dir/b-2.mms" | head -1)"
	sed -n '/^vma_split_file:/,/^$/p' "$dir/cmp.txt"
	grep -A5 '^all i_mmap_rwsem: avg wait' "$dir/cmp.txt"
	echo "ok: record --runs 3 --score twice, compare: score first, then the lock rows"
}

for c in $cases; do
	"case_$c"
done
