#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Soak: the live TUI in tmux for a long time under the heaviest workload mix,
# every source on (--mmap-hold too), views cycled all along.  Samples mmscope's
# RSS, CPU time, descriptors and BPF objects at a fixed period and checks that
# it lives to the end, that RSS stays flat once the history window is full,
# and that q then exits 0 leaving nothing loaded.  Not part of CI: the
# procedure is in docs/RELIABILITY.md, its runs in docs/history/RELIABILITY-RUNS.md.
#
#   sudo bench/soak.sh [-m MINUTES] [-s SAMPLE_SECS] [-w WINDOW] [-b BUILD] [-o CSV]
#                      [-W WORKLOADS]
#
#   -m  how long (default 60)
#   -s  seconds between samples (default 60)
#   -w  intervals of history (--window; default 600, i.e. 10 min at 1 s)
#   -b  meson build directory with mmscope and tests/workloads (default build)
#   -o  write the samples there as CSV (default: a temporary file, printed)
#   -W  comma-separated subset of churn,fork,pageout,execl (default: all four)
#
# Flat means: of the samples taken once the window has filled (intervals
# evicted), the later half peaks no more than max(2 MiB, 5 %) above the
# earlier half, for RSS less the memory the history holds (the Timeline
# view's figure; RSS itself is printed beside it).  Exit 0 when
# every check holds, 1 when one fails, 77 without root or tmux.
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
minutes=60 period=60 window=600 build=$top/build csv= mix=churn,fork,pageout,execl
while getopts m:s:w:b:o:W: o; do
	case $o in
	m) minutes=$OPTARG ;;
	s) period=$OPTARG ;;
	w) window=$OPTARG ;;
	b) build=$(realpath "$OPTARG") ;;
	o) csv=$OPTARG ;;
	W) mix=$OPTARG ;;
	*) sed -n '/^#   sudo/,/^#   -o/p' "$0" >&2; exit 2 ;;
	esac
done
mms=$build/mmscope
wl=$build/tests/workloads

[ "$(id -u)" = 0 ] || { echo "soak: needs root (live data)"; exit 77; }
command -v tmux >/dev/null || { echo "soak: needs tmux"; exit 77; }
[ -x "$mms" ] && [ -x "$wl/mmap_churn" ] || { echo "soak: no $mms or $wl: build first" >&2; exit 2; }

. "$top/tests/live/faults_lib.sh"

tmp=$(mktemp -d /var/tmp/mms-soak.XXXXXX)
[ -n "$csv" ] || csv=$tmp/samples.csv
sock=mms-soak-$$
loops=()
cleanup() {
	for p in "${loops[@]}"; do kill -- -"$p" 2>/dev/null; done
	tmux -L "$sock" kill-server 2>/dev/null
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

cap() { tmux -L "$sock" capture-pane -p 2>/dev/null; }
verdict=0
bad() { echo "soak: FAIL: $*"; verdict=1; }

# The heaviest mix we have, each in a loop of its own process group for the whole run:
# mmap_lock and i_mmap_rwsem contention (file churn), fork + COW + rmap (fork_anon),
# pageout batches (pageout_loop, on disk), exec (execl_loop).
forever() {	# CMD...: run CMD again and again, in a new process group
	setsid bash -c 'while :; do "$@" >/dev/null 2>&1 || sleep 1; done' forever "$@" &
	loops+=("$!")
}
case ",$mix," in *,churn,*) forever "$wl/mmap_churn" -t 4 -P 2 -p 8 -s 30 -f "$tmp/churn.file" ;; esac
case ",$mix," in *,fork,*) forever "$wl/fork_anon" -w 2 -s 30 ;; esac
case ",$mix," in *,pageout,*) forever "$wl/pageout_loop" -f "$tmp/pageout.file" -m 512 -s 30 ;; esac
case ",$mix," in *,execl,*) forever "$wl/execl_loop" -s 30 ;; esac

tmux -L "$sock" -f /dev/null new-session -d -x 160 -y 50 \
	"env -u TMUX TERM=screen $mms --mmap-hold --window $window; echo EXIT=\$?; sleep 600" ||
	{ echo "soak: tmux failed" >&2; exit 1; }
for _ in $(seq 300); do cap | grep -q '^ 1 Locks' && break; sleep 0.1; done
pid=$(pgrep -P "$(tmux -L "$sock" display -p '#{pane_pid}')" -x mmscope | head -1)
[ -n "$pid" ] || { cap; echo "soak: mmscope did not start" >&2; exit 1; }
wait_attached "$pid" || { echo "soak: sources not attached" >&2; exit 1; }
bpf_held "$pid" >"$tmp/held"
hz=$(getconf CLK_TCK)
start=$(date +%s)
end=$((start + minutes * 60))
echo "t_s,rss_kib,hwm_kib,cpu_s,fds,bpf_objects,intervals,evicted,held_mib" >"$csv"
echo "soak: mmscope pid $pid, $minutes min, window $window, workloads $mix, samples every $period s -> $csv"

sample() {
	local st rss hwm cpu fds nb win

	st=$(cat /proc/"$pid"/status 2>/dev/null) || return 1
	rss=$(awk '/^VmRSS:/ { print $2 }' <<<"$st")
	hwm=$(awk '/^VmHWM:/ { print $2 }' <<<"$st")
	cpu=$(awk -v hz="$hz" '{ sub(/.*\) /, ""); printf "%.1f", ($12 + $13) / hz }' \
	      /proc/"$pid"/stat)
	fds=$(ls /proc/"$pid"/fd | wc -l)
	nb=$(bpf_held "$pid" | wc -l)
	# The Timeline view's window line: intervals held, evicted, MiB held.
	tmux -L "$sock" send-keys 8
	sleep 1
	win=$(cap | sed -nE 's/^([0-9]+) intervals in the window \(([0-9]+) evicted, ([0-9.]+) MiB held\).*/\1,\2,\3/p' | head -1)
	echo "$(($(date +%s) - start)),$rss,$hwm,$cpu,$fds,$nb,${win:-?,?,?}" >>"$csv"
	tail -1 "$csv"
}

keys=(1 2 3 4 5 6 7 8 1 Enter Escape 3 Enter Escape w w w Space Space)
k=0 next=$start
while [ "$(date +%s)" -lt $end ]; do
	kill -0 "$pid" 2>/dev/null || { bad "mmscope died at $(($(date +%s) - start)) s"; cap; break; }
	if [ "$(date +%s)" -ge $next ]; then
		sample || bad "cannot sample"
		next=$((next + period))
	fi
	tmux -L "$sock" send-keys "${keys[k % ${#keys[@]}]}"
	k=$((k + 1))
	sleep 3
done

if kill -0 "$pid" 2>/dev/null; then
	sample
	tmux -L "$sock" send-keys q
	for _ in $(seq 100); do cap | grep -q '^EXIT=' && break; sleep 0.1; done
	cap | grep -q '^EXIT=0' || bad "q did not exit 0: $(cap | grep -E '^(EXIT|mmscope:)')"
	bpf_gone "$tmp/held" || bad "BPF objects left after q"
fi

python3 - "$csv" <<'EOF' || verdict=1
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
t = lambda r: int(r["t_s"])
rss = lambda r: int(r["rss_kib"])
held = lambda r: int(float(r["held_mib"]) * 1024)
print("samples %d, RSS %d .. %d KiB, CPU %.1f s in %d s (%.2f %% of one CPU)" %
      (len(rows), min(map(rss, rows)), max(map(rss, rows)), float(rows[-1]["cpu_s"]),
       t(rows[-1]), 100 * float(rows[-1]["cpu_s"]) / max(1, t(rows[-1]))))
# The window is full once intervals fall out of it (the Timeline view says
# how many); time is no guide, a loaded machine stretches intervals.
after = [r for r in rows if r["evicted"] not in ("?", "0")]
if len(after) < 4:
    print("soak: too short to judge flatness: %d samples after the window filled" % len(after))
    sys.exit(1)
# Flat: the later half of the samples taken once the window is full never goes
# above the earlier half's peak by more than max(2 MiB, 5 %).  What the history
# holds follows the workloads (rows per interval), inside the byte budget, so
# RSS moves inside a band with it; a leak is memory outside the history that
# climbs: RSS less what the history holds.
half = len(after) // 2
ok = True
for what, f in (("RSS", rss), ("RSS less the history held", lambda r: rss(r) - held(r))):
    early, late = max(map(f, after[:half])), max(map(f, after[half:]))
    limit = max(2048, early // 20)
    print("%s after the window filled (t >= %d s): peak %d KiB in the first half, %d KiB in "
          "the second (%+d, limit +%d)" % (what, t(after[0]), early, late, late - early, limit))
    if what != "RSS" and late - early > limit:
        print("soak: FAIL: memory outside the history keeps growing after the window is full")
        ok = False
print("history held: %d .. %d KiB after the window filled" % (min(map(held, after)),
                                                             max(map(held, after))))
fds = sorted({r["fds"] for r in after})
print("fds %s" % "/".join(fds))
if len(fds) > 1:
    print("soak: FAIL: the number of descriptors changes")
    ok = False
sys.exit(0 if ok else 1)
EOF
[ -z "${csv##"$tmp"/*}" ] && cat "$csv"
[ $verdict = 0 ] && echo "soak: PASS" || echo "soak: FAIL"
exit $verdict
