#!/usr/bin/env bash
# Runs every test suite of mmscope and prints one closing line:
#   N passed, N failed, N skipped
#
# The suites run on a build with AddressSanitizer + UndefinedBehaviorSanitizer
# (build-asan, with the recording fuzzer), and the unit and replay suites run
# once more under valgrind memcheck on the plain build.  Run scripts/setup.sh
# first (the README's test command does both).
#
# Usage: scripts/test.sh [meson test args...]      e.g. --suite unit
# The kernel suite (kernel/: a patched and an unpatched 6.12 kernel under qemu,
# and 6.1's when they are cached) runs last, on the plain build: the guest is
# slow enough without a sanitizer.  Cold it builds two kernels (kernel/README.md
# has the times); they are cached.
# Environment: MMSCOPE_TEST_ASAN=0 tests the plain build only, without valgrind;
# MMSCOPE_TEST_KERNEL=0 leaves the kernel suite out.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
plain=$top/build
asan=$top/build-asan
lp=${MMSCOPE_CACHE:-/var/cache/mmscope}/libperf-6.1/lib/pkgconfig
logs=()
rc=0

[ -f "$plain/build.ninja" ] || { echo "test: no build in $plain (run scripts/setup.sh)" >&2; exit 2; }

run_meson_test() {	# DIR LOGNAME ARGS...
	local dir=$1 name=$2
	shift 2
	meson test -C "$dir" --print-errorlogs --num-processes 1 --logbase "$name" "$@"
	local r=$?
	[ $r -ne 0 ] && rc=1
	# With --wrapper, meson appends the wrapper's name to the log's base name.
	local log
	log=$(ls -t "$dir/meson-logs/$name"*.json 2>/dev/null | head -n 1)
	logs+=("${log:-$dir/meson-logs/$name.json}")
}

if [ "${MMSCOPE_TEST_ASAN:-1}" = 0 ]; then
	ninja -C "$plain" >/dev/null || { ninja -C "$plain"; echo "0 passed, 1 failed"; exit 1; }
	run_meson_test "$plain" testlog "$@"
else
	if [ ! -f "$asan/build.ninja" ]; then
		meson setup "$asan" "$top" -Dpkg_config_path="$lp" -Dbuildtype=debug \
			-Db_sanitize=address,undefined -Db_lundef=false -Dfuzz=true >/dev/null ||
			{ echo "test: meson setup of $asan failed" >&2; echo "0 passed, 1 failed"; exit 1; }
	fi
	for d in "$plain" "$asan"; do
		ninja -C "$d" >/dev/null || { ninja -C "$d"; echo "0 passed, 1 failed"; exit 1; }
	done
	# Sanitizer reports fail the test that triggered them.
	export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
	export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
	if [ $# -eq 0 ]; then
		run_meson_test "$asan" testlog-asan --no-suite kernel
	else
		run_meson_test "$asan" testlog-asan "$@"
	fi
	if [ $# -eq 0 ] && command -v valgrind >/dev/null; then
		# --wrapper runs the unit binaries under memcheck; the replay suite's
		# scripts run mmscope through MMSCOPE_WRAP, so it is mmscope that is checked.
		vg="valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite --quiet"
		MMSCOPE_WRAP=$vg run_meson_test "$plain" testlog-valgrind --suite unit --suite replay \
			--wrapper "$vg" --timeout-multiplier 10
	fi
	if [ $# -eq 0 ] && [ "${MMSCOPE_TEST_KERNEL:-1}" != 0 ]; then
		run_meson_test "$plain" testlog-kernel --suite kernel
	fi
fi

python3 - "${logs[@]}" <<'PY'
import json, os, sys
p = f = s = 0
failed = []
for path in sys.argv[1:]:
    if not os.path.exists(path):
        f += 1
        continue
    for line in open(path):
        line = line.strip()
        if not line:
            continue
        t = json.loads(line)
        r = t.get("result", "")
        if r in ("OK", "EXPECTEDFAIL"):
            p += 1
        elif r == "SKIP":
            s += 1
        else:
            f += 1
            failed.append(t)
# meson prints only the last lines of a failed test's log, which a sanitizer's
# leak report (after a failed assertion) fills: show how each one began.
for t in failed:
    out = (t.get("stdout") or "") + (t.get("stderr") or "")
    lines = [l for l in out.splitlines() if not l.startswith("    #")]
    print(f"--- {t.get('name')}: {t.get('result')}, first lines of its output:")
    print("\n".join(lines[:60]))
print(f"{p} passed, {f} failed" + (f", {s} skipped" if s else ""))
sys.exit(1 if f else 0)
PY
[ $? = 0 ] || rc=1	# a suite that ran nothing (no log) is a failure too
exit $rc
