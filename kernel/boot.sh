#!/usr/bin/env bash
# Boots a kernel built by kernel/build.sh under qemu (TCG) with the host's
# root shared read-only over 9p, runs OUT/job.sh inside it as root (through
# tests/kernel/guest-init.sh as init), and returns the job's exit status.
# The guest writes to OUT (a second, writable 9p share): job.sh's output in
# OUT/guest.log, the kernel console in OUT/console.log.
#
#   kernel/boot.sh KERNEL_DIR OUT [TIMEOUT_SECONDS]
#
# OUT/disk.img (created if missing) is the guest's /dev/vda, a scratch disk
# for tests that need a real block-backed filesystem.
# Exit status: the job's; 124 if the guest did not finish in time; 125 if it
# ended without reporting a status (crash, panic); 77 if qemu is missing.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 2 ] || { echo "usage: $0 KERNEL_DIR OUT [TIMEOUT_SECONDS]" >&2; exit 2; }
kdir=$1
out=$(cd "$2" && pwd)
limit=${3:-600}
init=$top/tests/kernel/guest-init.sh

say() { echo "kernel/boot: $*" >&2; }
command -v qemu-system-x86_64 >/dev/null || { say "no qemu-system-x86_64 (apt-get install qemu-system-x86)"; exit 77; }
[ -f "$kdir/bzImage" ] || { say "no $kdir/bzImage (run kernel/build.sh)"; exit 2; }
[ -x "$init" ] || { say "$init is not executable"; exit 2; }
[ -f "$out/job.sh" ] || { say "no $out/job.sh to run"; exit 2; }

rm -f "$out/status" "$out/guest.log" "$out/console.log"
[ -f "$out/disk.img" ] || truncate -s 256M "$out/disk.img"

# /dev/kvm does not work here; TCG with one host thread per vCPU.  Two
# sockets of one core: the guest has no ACPI, so it finds CPUs in SeaBIOS's
# MP table, which lists only the first logical CPU of each package (-smp 2
# alone is one socket of two cores, and the guest booted with one CPU).
# MMS_QEMU_CPU (default max) and MMS_QEMU_SMP (default 2) change the guest's CPU model
# and count: tests/kernel/run.sh's names guest boots max,-hypervisor with 4 CPUs.
cpu=${MMS_QEMU_CPU:-max}
smp=${MMS_QEMU_SMP:-2}
case $smp in [1-9]|1[0-6]) ;; *) say "MMS_QEMU_SMP=$smp: 1 to 16 CPUs"; exit 2 ;; esac
start=$(date +%s.%N)
set +e
timeout -k 5 "$limit" qemu-system-x86_64 \
	-accel tcg,thread=multi -cpu "$cpu" -m 2G -smp "$smp,sockets=$smp,cores=1,threads=1" \
	-nographic -no-reboot -nodefaults -serial "file:$out/console.log" \
	-kernel "$kdir/bzImage" \
	-append "root=root rootfstype=9p rootflags=trans=virtio,version=9p2000.L,msize=262144,cache=loose ro console=ttyS0 panic=1 init=$init" \
	-virtfs local,path=/,mount_tag=root,security_model=none,readonly=on,multidevs=remap \
	-virtfs "local,path=$out,mount_tag=out,security_model=none,multidevs=remap" \
	-drive "file=$out/disk.img,if=virtio,format=raw,cache=unsafe" \
	</dev/null >"$out/qemu.log" 2>&1
rc=$?
set -e
secs=$(echo "$(date +%s.%N) - $start" | bc)
if [ $rc = 124 ] || [ $rc = 137 ]; then
	say "guest did not finish within $limit s (console: $out/console.log)"
	exit 124
fi
if [ ! -f "$out/status" ]; then
	say "guest ended after ${secs%.*} s without a status (qemu exit $rc; console: $out/console.log)"
	tail -n 20 "$out/console.log" >&2 || true
	exit 125
fi
status=$(cat "$out/status")
say "guest ran ${secs%.*} s, job status $status"
exit "$status"
