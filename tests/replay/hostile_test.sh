#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Hostile recordings (hostile_rec.py: tiny files built to cost gigabytes or
# seconds, a 3 GiB sparse file, names full of escape sequences) through `info`,
# `report` and `compare`: each run must stay under 256 MiB of peak RSS and 5 s of
# CPU (measured by /usr/bin/time on the real process, not a ulimit), end within
# 60 s, exit 0 or 1 without a signal, say what is wrong, and print no raw control
# character (C0 other than \n and \t, DEL, C1) in its text output.  The files
# the budget cuts short must say "damaged" with the limit named.  Prints a
# table of what each run cost.
#
#   hostile_test.sh MMSCOPE
#
# MMSCOPE_WRAP, when set, prefixes every mmscope run (as in info_fixtures.sh);
# the RSS and CPU measured are then the wrapper's (valgrind's), so they are
# printed but not held to the limits.
set -u

mmscope=$1
here=$(cd "$(dirname "$0")" && pwd)
max_kb=$((256 * 1024))
max_cpu=5.0

dir=$(mktemp -d /tmp/mmscope-hostile.XXXXXX) || { echo "FAIL: mktemp" >&2; exit 1; }
trap 'rm -rf "$dir"' EXIT
python3 "$here/hostile_rec.py" "$dir" || { echo "FAIL: hostile_rec.py" >&2; exit 1; }

# ASan keeps freed memory in a 256 MiB quarantine by default, which is the
# sanitizer's RSS, not the reader's: keep it small so the limit measures mmscope.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=16

failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# run NAME ARGS...: runs mmscope, checks its cost and its text.
run() {
	local name=$1 rc rss cpu
	shift
	# shellcheck disable=SC2086 # MMSCOPE_WRAP is a command line
	timeout 60 /usr/bin/time -f '%M %U %S' -o "$dir/time" ${MMSCOPE_WRAP:-} "$mmscope" "$@" \
		>"$dir/out" 2>"$dir/err"
	rc=$?
	if [ $rc -gt 1 ]; then
		fail "$name: mmscope $* exited $rc: $(head -c 400 "$dir/err")"
	fi
	# The last line: time puts "Command exited with non-zero status" before it.
	read -r rss u s < <(tail -n 1 "$dir/time") 2>/dev/null || { rss=0 u=0 s=0; fail "$name: no timing"; }
	cpu=$(echo "$u + $s" | bc)
	printf '%-10s %-22s %8s KB %6s s  exit %s\n' "${name%.mmscope}" "$*" "$rss" "$cpu" "$rc" |
		sed "s|$dir/||g"
	if [ -z "${MMSCOPE_WRAP:-}" ]; then
		[ "$rss" -le $max_kb ] 2>/dev/null || fail "$name: $* took $rss KB of RSS (limit $max_kb)"
		[ "$(echo "$cpu <= $max_cpu" | bc)" = 1 ] || fail "$name: $* took $cpu s of CPU"
	fi
	if [ "${check_text:-1}" = 1 ]; then
		python3 - "$dir/out" "$dir/err" <<-'EOF' ||
		import re, sys
		bad = re.compile(rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]")
		for f in sys.argv[1:]:
		    m = bad.search(open(f, "rb").read())
		    if m:
		        sys.exit("raw control character %r in %s" % (m.group(), f.rsplit("/", 1)[1]))
		EOF
			fail "$name: mmscope $* printed a raw control character (escaping, issue 21 item 2)"
	fi
}

for f in "$dir"/*.mmscope; do
	name=$(basename "$f")
	run "$name" info "$f"
	case $name in
	zstrings.* | manydefs.* | endbomb.* | bigrows.* | manyrows.* | fixedrows.*)
		grep -q "budget" "$dir/out" || fail "$name: info does not name the budget: $(cat "$dir/out")" ;;
	zdefs.* | rowsize.* | leftover.* | sparse.*)
		grep -q '^status      damaged' "$dir/out" || fail "$name: info does not say damaged" ;;
	esac
	check_text=0 run "$name" info --json "$f"
	python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$dir/out" 2>/dev/null ||
		[ ! -s "$dir/out" ] || fail "$name: info --json is not JSON (escaping, issue 21 item 2)"
	run "$name" report "$f"
	check_text=0 run "$name" report --json "$f"
	run "$name" compare "$f" -- "$f"
done
[ $failures = 0 ] || { echo "$failures failures" >&2; exit 1; }
