#!/usr/bin/env bash
# The `kernel` suite: builds the patched and the unpatched guest kernel of one
# version (kernel/build.sh, cached), boots each under qemu with the host root
# over 9p, runs tests/kernel/guest-tests.sh inside, and checks what it
# collected with tests/kernel/check.py on the host.
#
#   tests/kernel/run.sh MMSCOPE WORKLOAD_DIR KERNEL_TEST_DIR
#
# MMSCOPE is the build's binary; WORKLOAD_DIR holds tests/workloads'
# programs, KERNEL_TEST_DIR this directory's (and receives the results:
# out-VERSION-VARIANT/).  What the guest runs is copied into the results
# directory, which the guest mounts at /run/out: the guest has a tmpfs of its
# own on /tmp, so a clone or build under the host's /tmp is not visible there.
# Exit 77 only when this machine cannot build or boot the kernel at all.
# KERNEL_VERSION (default 6.12) and KERNEL_VARIANTS (default "patched
# unpatched") pick the kernels.  6.1 is a second tier: it runs only when its
# kernel is already cached (a cold 6.1 build would double the suite's cold
# time), unless MMSCOPE_KERNEL_BUILD_61=1 asks for the build.
# KERNEL_GUEST=names boots the first variant's kernel as the names guest instead: 4
# CPUs without the CPUID hypervisor bit, where spinlock waits reach contention_begin
# (guest-tests.sh runs the lock names' part alone there; results in out-VERSION-names/).
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
[ $# = 3 ] || { echo "usage: $0 MMSCOPE WORKLOAD_DIR KERNEL_TEST_DIR" >&2; exit 2; }
mmscope=$(realpath -m "$1")
wl=$(realpath "$2")
kt=$(realpath "$3")
version=${KERNEL_VERSION:-6.12}
variants=${KERNEL_VARIANTS:-patched unpatched}
guest=${KERNEL_GUEST:-}
case $guest in
'') qemu_env=() ;;
names) variants=${variants%% *} qemu_env=(MMS_QEMU_CPU=max,-hypervisor MMS_QEMU_SMP=4) ;;
*) echo "KERNEL_GUEST=$guest: only names" >&2; exit 2 ;;
esac
# Sizes: big enough that a miscount cannot hide, small enough for TCG.
n_toggle=200 n_noop=333 n_grow=100 n_pages=256 n_thp=4

say() { echo "kernel-suite: $*"; }
t0=$(date +%s)

if [ "$(id -u)" != 0 ]; then
	say "SKIP: needs root (the kernel cache in /var/cache, packages; run the suite as root)"
	exit 77
fi
command -v qemu-system-x86_64 >/dev/null || "$top/kernel/build.sh" --deps-only || exit 77
payload=("$mmscope" "$wl/mprotect_toggle" "$wl/pageout_loop" "$wl/mmap_churn" "$wl/fork_anon"
	 "$wl/vma_split_file" "$wl/vma_fallback" "$wl/lock_owner" "$wl/lock_kinds" "$wl/execl_loop"
	 "$kt/vma_grow" "$kt/thp_pageout")
for p in "${payload[@]}"; do
	[ -x "$p" ] || { say "FAIL: $p is not built"; exit 1; }
done

failed=0 passed=0
for v in $variants; do
	tb=$(date +%s)
	cached_only=()
	[ "$version" = 6.1 ] && [ "${MMSCOPE_KERNEL_BUILD_61:-0}" != 1 ] && cached_only=(--cached-only)
	kdir=$("$top/kernel/build.sh" --version "$version" --$v "${cached_only[@]}")
	rc=$?
	if [ $rc = 77 ] && [ ${#cached_only[@]} = 1 ]; then
		say "SKIP: the $version $v kernel is not cached; this tier runs only when it is" \
			"(MMSCOPE_KERNEL_BUILD_61=1 builds it, about 13 min cold)"
		exit 77
	fi
	if [ $rc = 77 ]; then
		say "SKIP: the $version $v kernel cannot be built on this machine (see above)"
		exit 77
	fi
	if [ $rc != 0 ]; then
		say "FAIL: building the $version $v kernel failed"
		failed=$((failed + 1))
		continue
	fi
	say "$version $v kernel: $kdir ($(( $(date +%s) - tb )) s, $(cat "$kdir/done"))"

	out=$kt/out-$version-${guest:-$v}
	rm -rf "$out"
	mkdir -p "$out/bin"
	cp "${payload[@]}" "$top/tests/kernel/guest-tests.sh" "$out/bin/" ||
		{ say "FAIL: cannot copy the guest's programs into $out/bin"; exit 1; }
	cat >"$out/job.sh" <<EOF
export OUT=/run/out VARIANT=$v KVERSION=$version MMSCOPE=/run/out/bin/mmscope GUEST_ONLY=$guest
export WL=/run/out/bin KT=/run/out/bin
export N_TOGGLE=$n_toggle N_NOOP=$n_noop N_GROW=$n_grow N_PAGES=$n_pages N_THP=$n_thp
exec bash /run/out/bin/guest-tests.sh
EOF
	tb=$(date +%s)
	# A hang guard, not a budget: on the shared 2-core machine at load 20+ the
	# unpatched guest took 717 s and the patched one (more steps) over 900.
	env "${qemu_env[@]}" "$top/kernel/boot.sh" "$kdir" "$out" 1500
	rc=$?
	say "$version $v${guest:+ $guest} guest: exit $rc after $(( $(date +%s) - tb )) s; log $out/guest.log"
	[ -f "$out/guest.log" ] && sed 's/^/  | /' "$out/guest.log"
	if [ $rc = 77 ]; then
		say "SKIP: qemu cannot run here"
		exit 77
	fi
	if [ $rc != 0 ]; then
		say "FAIL: the $version $v guest did not complete (exit $rc; console $out/console.log)"
		failed=$((failed + 1))
		continue
	fi
	GUEST_ONLY=$guest python3 "$top/tests/kernel/check.py" "$out" "$v" "$version" "$mmscope" \
		$n_toggle $n_noop $n_grow $n_pages $n_thp | tee "$out/check.log"
	p=$(sed -n 's/^[a-z]*: \([0-9]*\) passed, \([0-9]*\) failed.*/\1 \2/p' "$out/check.log" |
		tail -n1)
	if [ -z "$p" ]; then
		say "FAIL: check.py did not finish for the $version $v kernel"
		failed=$((failed + 1))
		continue
	fi
	passed=$((passed + ${p% *}))
	failed=$((failed + ${p#* }))
done
say "total $(( $(date +%s) - t0 )) s"
echo "$passed passed, $failed failed"
[ $failed = 0 ]
