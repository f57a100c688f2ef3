#!/usr/bin/env bash
# Runs every test suite of mmscope and prints one closing line:
#   N passed, N failed, N skipped
# Usage: scripts/test.sh [BUILD_DIR] [meson test args...]   (e.g. --suite unit)
# Run scripts/setup.sh first (the README's test command does both).
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build}
[ $# -gt 0 ] && shift

[ -f "$build/build.ninja" ] || { echo "test: no build in $build (run scripts/setup.sh)" >&2; exit 2; }
ninja -C "$build" >/dev/null || { ninja -C "$build"; echo "0 passed, 1 failed"; exit 1; }

meson test -C "$build" --print-errorlogs --num-processes 1 "$@"
rc=$?
log=$build/meson-logs/testlog.json
if [ ! -s "$log" ]; then
	echo "0 passed, 1 failed"
	exit 1
fi
python3 - "$log" <<'PY'
import json, sys
p = f = s = 0
for line in open(sys.argv[1]):
    line = line.strip()
    if not line:
        continue
    r = json.loads(line).get("result", "")
    if r in ("OK", "EXPECTEDFAIL"):
        p += 1
    elif r == "SKIP":
        s += 1
    else:
        f += 1
print(f"{p} passed, {f} failed" + (f", {s} skipped" if s else ""))
PY
exit $rc
