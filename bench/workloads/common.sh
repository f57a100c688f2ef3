# Sourced by the bench/workloads wrappers: where the workload binaries and scratch files are.
#   MMS_BENCH_BUILD  meson build dir with tests/workloads/ (bench/run: build-bench)
#   MMS_BENCH_DIR    scratch directory on a disk filesystem (bench/run makes one in /var/tmp)
#   MMS_BENCH_PROGRESS  MS: also print "progress [TAG] ns=T n=N" lines every MS ms as the
#                    workload runs (bench/interleave); the rate is over each TAG's n,
#                    combined as the final line combines them
# Each wrapper takes SECONDS and prints its workload's own line, NAME_per_sec=N ... last.
set -eu
secs=${1:?usage: $0 SECONDS}
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${MMS_BENCH_BUILD:-$top/build-bench}
dir=${MMS_BENCH_DIR:-/var/tmp}
wl=$build/tests/workloads
prog=()
if [ -n "${MMS_BENCH_PROGRESS:-}" ]; then prog=(-i "$MMS_BENCH_PROGRESS"); fi
[ -x "$wl/mmap_churn" ] ||
	{ echo "$0: no $wl/mmap_churn: build first (bench/run does)" >&2; exit 1; }
