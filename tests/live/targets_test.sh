#!/usr/bin/env bash
# Targets, as perf lock contention has them: two cgroup v2 groups made here
# (-G keeps only one's waits, --lock-cgroup and --by task put each row in its
# group; the same from a recording, from compare and from both lock sources),
# one CPU (-C keeps only the waits begun there: one workload pinned to each
# CPU with taskset), -F columns, and the usage errors.  Real tracepoints, the
# real binary; the cgroups are removed on exit.
# usage: targets_test.sh MMSCOPE MMAP_CHURN
set -u
mms=$1 churn=$2
fail=0
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: needs python3"; exit 77; }
root=
for r in /sys/fs/cgroup /sys/fs/cgroup/unified; do
	[ "$(stat -f -c %T "$r" 2>/dev/null)" = cgroup2fs ] && { root=$r; break; }
done
[ -n "$root" ] || { echo "SKIP: no cgroup2 mount"; exit 77; }
tmp=$(mktemp -d /tmp/mms-targets-XXXXXX)
grp=mms-t$$	# short: the Tasks view's CGROUP column shows it whole
cleanup() {
	for g in a b; do
		[ -d "$root/$grp/$g" ] || continue
		# Anything left inside goes back to the root, then the groups can go.
		while read -r p; do echo "$p" >"$root/cgroup.procs" 2>/dev/null; done \
			<"$root/$grp/$g/cgroup.procs"
		rmdir "$root/$grp/$g"
	done
	[ -d "$root/$grp" ] && rmdir "$root/$grp"
	rm -rf "$tmp"
}
trap cleanup EXIT
mkdir -p "$root/$grp/a" "$root/$grp/b" || { echo "FAIL: cannot make cgroups"; exit 1; }
A=/$grp/a B=/$grp/b

ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }

# Two workloads, each moving itself into its group before it becomes mmap_churn.
two_groups='sh -c "echo \$\$ >'$root$A'/cgroup.procs && exec '$churn' -t 4 -s 3 -N churnA" &
sh -c "echo \$\$ >'$root$B'/cgroup.procs && exec '$churn' -t 4 -s 3 -N churnB" & wait'

# Checks a --json report: every row's (first) task is where its name says.
check_json() {	# FILE DESC WANT_A WANT_B (1: rows of that workload wanted, 0: none)
	python3 - "$@" "$A" "$B" <<'PY'
import json, sys
f, desc, want_a, want_b, A, B = sys.argv[1:7]
rep = json.load(open(f))
rows = rep["rows"]
# The perf source names a thread by its latest comm, so a main thread's waits
# from before it moved itself and exec'd (in the test's own cgroup) carry the
# workload's name: such a row is no error, one in the other group is.
def wrong(r, mine, other):
    return r["cgroup"] == other or (r["cgroup"] != mine and r["pid"] != r["tgid"])
bad = [r for r in rows if r["comm"] == "churnA" and wrong(r, A, B)] + \
      [r for r in rows if r["comm"] == "churnB" and wrong(r, B, A)]
na = sum(r["contended"] for r in rows if r["comm"] == "churnA")
nb = sum(r["contended"] for r in rows if r["comm"] == "churnB")
ok = not bad and (na > 0) == (want_a == "1") and (nb > 0) == (want_b == "1")
print(("ok   " if ok else "FAIL ") + "%s: churnA %d waits, churnB %d waits, %d rows in the "
      "wrong cgroup %s" % (desc, na, nb, len(bad), [(r["pid"], r["comm"], r["cgroup"],
      r["contended"]) for r in bad]))
sys.exit(0 if ok else 1)
PY
}

for src in bpf perf; do
	# Both groups recorded; the cgroup is kept in the recording.
	rec=$tmp/two-$src.mmscope
	if "$mms" record --source "$src" -o "$rec" -- sh -c "$two_groups" >/dev/null 2>"$tmp/err"; then
		ok "$src: record of two cgroups"
	else
		bad "$src: record failed"; sed 's/^/    /' "$tmp/err"; continue
	fi
	"$mms" report "$rec" --by task --json >"$tmp/task.json" &&
		check_json "$tmp/task.json" "$src: recording --by task" 1 1 || fail=1
	# --lock-cgroup: each group's row holds exactly the waits of its tasks.
	"$mms" report "$rec" --lock-cgroup --json >"$tmp/cg.json"
	python3 - "$tmp/task.json" "$tmp/cg.json" "$A" "$B" "$src" <<'PY' || fail=1
import json, sys
tasks, cg, A, B, src = sys.argv[1:6]
t = json.load(open(tasks))["rows"]
c = {r["name"]: r for r in json.load(open(cg))["rows"]}
ok = True
for g in (A, B):
    want = sum(r["contended"] for r in t if r["cgroup"] == g)
    wt = sum(r["wait_total_ns"] for r in t if r["cgroup"] == g)
    got = c.get(g, {}).get("contended", 0)
    gt = c.get(g, {}).get("wait_total_ns", 0)
    good = want > 0 and got == want and gt == wt and c[g]["cgroup"] == g
    ok &= good
    print(("ok   " if good else "FAIL ") + "%s: --lock-cgroup %s: %d waits %d ns, its tasks %d waits %d ns"
          % (src, g, got, gt, want, wt))
sys.exit(0 if ok else 1)
PY
	# -G on the recording narrows it at report time.
	"$mms" report "$rec" -G "$A" --by task --json >"$tmp/ga.json" &&
		check_json "$tmp/ga.json" "$src: recording -G $A" 1 0 || fail=1
	# Live -G: only group b's waits are collected.
	"$mms" report --source "$src" -G "${B#/}" --by task --json -o "$tmp/live.json" \
		-- sh -c "$two_groups" >/dev/null 2>"$tmp/err" &&
		check_json "$tmp/live.json" "$src: live -G $B" 0 1 || { fail=1; sed 's/^/    /' "$tmp/err"; }
	python3 -c '
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
sys.exit(0 if rows and all(r["cgroup"] == sys.argv[2] for r in rows) else 1)' \
		"$tmp/live.json" "$B" && ok "$src: live -G: every row is in $B" ||
		bad "$src: live -G kept rows of other cgroups"
done

# The Tasks view of the recording shows each thread's cgroup (replay in tmux).
if command -v tmux >/dev/null; then
	sock=mms-targets-$$
	# shellcheck source=../tui/tmux_lib.sh
	. "$(dirname "$0")/../tui/tmux_lib.sh"
	tmux -L "$sock" -f /dev/null new-session -d -x 140 -y 40 \
		"env TERM=screen $mms replay $tmp/two-bpf.mmscope"
	tmux -L "$sock" set -g status off
	if wait_for 'Locks' 20; then
		keys 4
		if wait_for "churnA +$A " 10 && wait_for "churnB +$B " 5 &&
		   wait_for ' CGROUP ' 1; then
			ok "Tasks view: CGROUP column, churnA in $A, churnB in $B"
		else
			bad "Tasks view lacks the cgroups"; cap | sed 's/^/    /' | head -20
		fi
	else
		bad "replay did not start"; cap | sed 's/^/    /' | head
	fi
	tmux -L "$sock" kill-server 2>/dev/null
else
	echo "skip Tasks view: no tmux"
fi

# compare reads recordings with cgroups (and old ones without: the replay suite).
if "$mms" compare "$tmp/two-bpf.mmscope" -- "$tmp/two-perf.mmscope" >"$tmp/cmp" 2>&1 &&
   grep -q mmap_lock "$tmp/cmp"; then ok "compare of recordings with cgroups"; else
	bad "compare failed"; sed 's/^/    /' "$tmp/cmp" | head; fi

# -C: one workload pinned to each CPU; -C 0 keeps only CPU 0's.
if [ "$(nproc)" -ge 2 ]; then
	pinned="taskset -c 0 $churn -t 4 -s 3 -N churnA & taskset -c 1 $churn -t 4 -s 3 -N churnB & wait"
	for src in bpf perf; do
		"$mms" report --source "$src" -C 0 --by task --json -o "$tmp/cpu.json" \
			-- sh -c "$pinned" >/dev/null 2>"$tmp/err"
		python3 - "$tmp/cpu.json" "$src" <<'PY' || fail=1
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
a = sum(r["contended"] for r in rows if r["comm"] == "churnA")
b = sum(r["contended"] for r in rows if r["comm"] == "churnB")
ok = a > 0 and b == 0
print(("ok   " if ok else "FAIL ") + "%s: -C 0: CPU 0's workload %d waits, CPU 1's %d" % (sys.argv[2], a, b))
sys.exit(0 if ok else 1)
PY
	done
else
	echo "skip -C: one CPU"
fi

# -F: the text table's columns, in the order given.
"$mms" report "$tmp/two-bpf.mmscope" -F wait_min,contended --by task >"$tmp/f.txt"
if head -1 "$tmp/f.txt" | grep -qE '^ +min wait +contended +pid +comm$'; then ok "-F columns"; else
	bad "-F columns: $(head -1 "$tmp/f.txt")"; fi
"$mms" report "$tmp/two-bpf.mmscope" -F avg_wait -x ';' >"$tmp/f.csv"
if head -1 "$tmp/f.csv" | grep -qx 'avg_wait_ns;type;name'; then ok "-F with CSV"; else
	bad "-F CSV: $(head -1 "$tmp/f.csv")"; fi

# Usage errors: exit 2 and a sentence naming the value.
err() {	# PATTERN ARGS...
	local pat=$1 rc
	shift
	"$mms" "$@" >/dev/null 2>"$tmp/err"
	rc=$?
	if [ "$rc" = 2 ] && grep -qE -- "$pat" "$tmp/err"; then ok "error: $*"; else
		bad "error: $* (exit $rc): $(cat "$tmp/err")"; fi
}
err "no cgroup '/$grp/none'" report --duration 1 -G "/$grp/none"
err "invalid CPU list 'x'" report --duration 1 -C x
err "CPU 4096 in -C|invalid CPU list '4096'" report --duration 1 -C 4096
err "CPU 9999 in -C|invalid CPU list" report --duration 1 -C 0,9999
err "invalid CPU list '3-1'" report --duration 1 -C 3-1
err "-C is for live data" report "$tmp/two-bpf.mmscope" -C 0
err "unknown or repeated field 'bogus'" report "$tmp/two-bpf.mmscope" -F contended,bogus
err "unknown or repeated field 'contended'" report "$tmp/two-bpf.mmscope" -F contended,contended
err "-F picks the columns" report "$tmp/two-bpf.mmscope" -F contended --json
err "-a \(every CPU" report -a -p 1
err "printable characters" report --duration 1 -G "$(printf 'a\033b')"
err "-G needs a cgroup path" report --duration 1 -G ,
exit $fail
