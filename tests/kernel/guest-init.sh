#!/bin/bash
# PID 1 of the mmscope test guest (kernel/boot.sh passes it as init=).  The
# root is the host's, read-only over 9p: mount what a test needs in memory,
# mount the host's results directory (9p tag "out") read-write at /run/out,
# run /run/out/job.sh with its output in /run/out/guest.log and its exit
# status in /run/out/status, then power off.  Nothing here may wait for a
# console: a hang is only ended by the host's timeout.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/tmp TMPDIR=/tmp LANG=C.UTF-8 TERM=dumb

off() {
	sync
	# Reboot, not power off: the kernel has no ACPI, and qemu runs with -no-reboot.
	echo b >/proc/sysrq-trigger 2>/dev/null
	sleep 30
	# Still running: exiting PID 1 panics, and panic=1 plus qemu -no-reboot ends it.
	exit 1
}

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mountpoint -q /dev || mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm 2>/dev/null
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs tmpfs /run
mount -t tracefs tracefs /sys/kernel/tracing
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t bpf bpf /sys/fs/bpf
mkdir -p /run/out
if ! mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 out /run/out; then
	echo "guest-init: cannot mount the results share (9p tag out)" >&2
	off
fi
ulimit -l unlimited
hostname mmscope-guest 2>/dev/null

echo "guest-init: kernel $(uname -r), $(nproc) cpus, up $(cut -d' ' -f1 /proc/uptime) s" \
	>/run/out/guest.log
if [ -f /run/out/job.sh ]; then
	bash /run/out/job.sh >>/run/out/guest.log 2>&1 </dev/null
	echo $? >/run/out/status.tmp
else
	echo "guest-init: no /run/out/job.sh" >>/run/out/guest.log
	echo 127 >/run/out/status.tmp
fi
mv /run/out/status.tmp /run/out/status
umount /run/out
off
