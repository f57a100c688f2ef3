#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `record --openmetrics DIR` for node_exporter's textfile collector, with the real
# collector: a workload whose process name carries a quote, a backslash, an escape sequence
# and a newline (any user can choose its own) contends mmap_lock while mmscope records.
# While it runs, every read of DIR/mmscope.prom is a whole file (it is renamed over, never
# written in place); at the end promtool accepts the file, its counters equal what the
# recording of the same session holds, and Debian's prometheus-node-exporter, serving
# only the textfile collector on 127.0.0.1, exposes the series without a scrape error.
#
#   openmetrics_test.sh MMSCOPE MMAP_CHURN
set -u
mms=$1 churn=$2

[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
for t in prometheus-node-exporter promtool curl; do
	command -v $t >/dev/null || fail "$t is missing (scripts/setup.sh installs it)"
done

d=$(mktemp -d "${TMPDIR:-/tmp}/mmscope-om.XXXXXX") || fail "mktemp"
ne=
cleanup() { [ -n "$ne" ] && kill "$ne" 2>/dev/null; wait 2>/dev/null; rm -rf "$d"; }
trap cleanup EXIT
om=$d/textfile
mkdir "$om"
# comm is the executable's name: this one's holds ", \, ESC [31m and a newline (15 bytes).
name=$'m"\\\e[31mq\nchurn'
cp "$churn" "$d/$name"

# 8 s: the file appears after the first interval, 2-4 s in under the sanitizers at load,
# and each poll below forks five programs; 5 s gave 4 reads once at load 10.
"$mms" record -o "$d/r.mms" --openmetrics "$om" --duration 8 -- "$d/$name" -t 3 -s 8 \
	>"$d/out" 2>"$d/err" &
pid=$!
reads=0 inodes=()
while kill -0 $pid 2>/dev/null; do
	if [ -f "$om/mmscope.prom" ]; then
		# A whole file: ends with a newline after its last family.
		cp "$om/mmscope.prom" "$d/snap" 2>/dev/null || continue
		reads=$((reads + 1))
		[ "$(tail -c 1 "$d/snap" | od -An -c | tr -d ' ')" = '\n' ] ||
			fail "a read of mmscope.prom ended mid-line"
		grep -q '^# TYPE mmscope_lost_events_total counter$' "$d/snap" ||
			fail "a read of mmscope.prom lacks its last family"
		inodes+=("$(stat -c %i "$om/mmscope.prom" 2>/dev/null)")
	fi
	sleep 0.2
done
wait $pid || { cat "$d/err"; fail "record exited $?"; }
[ $reads -ge 5 ] || fail "only $reads reads of mmscope.prom during the run"
n_inodes=$(printf '%s\n' "${inodes[@]}" | sort -u | wc -l)
[ "$n_inodes" -ge 3 ] || fail "mmscope.prom kept its inode ($n_inodes seen): not renamed over"
ls -A "$om" | grep -qv '^mmscope.prom$' && fail "left behind in DIR: $(ls -A "$om")"
[ "$(stat -c %a "$om/mmscope.prom")" = 644 ] || fail "mmscope.prom is not 0644 (node_exporter reads it)"
echo "ok: $reads whole reads during the run, $n_inodes inodes"

promtool check metrics <"$om/mmscope.prom" >"$d/lint" 2>&1 || { cat "$d/lint"; fail "promtool check metrics refused the file"; }
echo "ok: promtool check metrics"
grep -q $'\e' "$om/mmscope.prom" && fail "a raw ESC reached the file"

# The counters against the recording of the same session (the same intervals).
"$mms" report "$d/r.mms" --by lock --json -E 0 >"$d/report.json" || fail "report exited $?"
"$mms" info "$d/r.mms" --json >"$d/info.json" || fail "info exited $?"
python3 - "$om/mmscope.prom" "$d/report.json" "$d/info.json" <<'PY' || exit 1
import json, re, sys
prom, rep, info = sys.argv[1:4]
series = {}
for line in open(prom, encoding="utf-8"):
    if line.startswith("#"):
        continue
    m = re.match(r'^([a-z_]+)(\{.*\})? (\S+)$', line.rstrip("\n"))
    if not m:
        sys.exit(f"FAIL: not a sample line: {line!r}")
    series.setdefault(m.group(1), []).append((m.group(2) or "", float(m.group(3))))
rows = json.load(open(rep))["rows"]
iv = json.load(open(info))["intervals"]
def total(name):
    return sum(v for _, v in series.get(name, []))
if total("mmscope_intervals_total") != iv:
    sys.exit(f"FAIL: mmscope_intervals_total {total('mmscope_intervals_total')}, the recording has {iv}")
want_n = sum(r["contended"] for r in rows)
want_w = sum(r["wait_total_ns"] for r in rows) / 1e9
if total("mmscope_lock_contentions_total") != want_n:
    sys.exit(f"FAIL: contentions {total('mmscope_lock_contentions_total')}, the recording has {want_n}")
if abs(total("mmscope_lock_wait_seconds_total") - want_w) > 1e-6 * max(1, len(rows)):
    sys.exit(f"FAIL: wait {total('mmscope_lock_wait_seconds_total')} s, the recording has {want_w}")
mm = [r for r in rows if r.get("lock_name") == "mmap_lock"]
want_mm = sum(r["contended"] for r in mm)
got_mm = total("mmscope_mmap_lock_waits_total")
if not want_mm or got_mm != want_mm:
    sys.exit(f"FAIL: mmap_lock waits {got_mm}, the recording's mmap_lock rows {want_mm}")
labels = [l for l, _ in series["mmscope_mmap_lock_waits_total"]]
want = r'process="m\"\\?[31mq\nchurn"'
if not any(want in l for l in labels):
    sys.exit(f"FAIL: the workload's name is not escaped as {want}: {labels}")
print(f"ok: {iv} intervals, {want_n} contentions, {want_w:.6f} s waited, {got_mm:.0f} mmap_lock "
      f"waits: equal to the recording; the name escaped as {want}")
PY

# node_exporter, textfile collector only, on a free loopback port.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
prometheus-node-exporter --web.listen-address="127.0.0.1:$port" --collector.disable-defaults \
	--collector.textfile --collector.textfile.directory="$om" >"$d/ne.log" 2>&1 &
ne=$!
for _ in $(seq 50); do
	curl -sf "http://127.0.0.1:$port/metrics" >"$d/scrape" 2>/dev/null && break
	sleep 0.1
done
[ -s "$d/scrape" ] || { cat "$d/ne.log"; fail "node_exporter did not answer on 127.0.0.1:$port"; }
grep -q '^node_textfile_scrape_error 0$' "$d/scrape" ||
	{ grep textfile "$d/scrape" "$d/ne.log"; fail "node_exporter reports a textfile scrape error"; }
grep -q '^mmscope_mmap_lock_waits_total{mode="write",process="m\\"\\\\?\[31mq\\nchurn"} [1-9]' "$d/scrape" ||
	{ grep mmscope_mmap "$d/scrape"; fail "node_exporter does not serve the mmap_lock series"; }
grep -q '^mmscope_lock_wait_seconds_total{lock="mmap_lock",' "$d/scrape" ||
	fail "node_exporter does not serve mmscope_lock_wait_seconds_total"
echo "ok: node_exporter serves $(grep -c '^mmscope_' "$d/scrape") mmscope series, no scrape error"

# A DIR that is not one: said at once, nothing recorded.
touch "$d/file"
"$mms" record -o "$d/r2.mms" --openmetrics "$d/file" --duration 1 >"$d/out" 2>"$d/err" &&
	fail "--openmetrics on a file succeeded"
grep -q -- '--openmetrics' "$d/err" || fail "no message for --openmetrics on a file: $(cat "$d/err")"
[ -e "$d/r2.mms" ] && fail "a recording was left behind after --openmetrics was refused"
echo "openmetrics: all checks passed"
