#!/bin/bash
# Runs inside the test guest (job.sh from tests/kernel/run.sh execs it):
# deterministic workloads traced through tracefs (the oracle), then the same
# workloads under `mmscope record`.  It only collects: every trace, workload
# output, recording and `mmscope check` lands in $OUT, and run.sh checks
# the numbers on the host.
#
# Environment (from job.sh): OUT (results dir), MMSCOPE (binary), WL (the
# build's tests/workloads), KT (the build's tests/kernel), VARIANT
# (patched|unpatched), KVERSION (6.12|6.1), N_TOGGLE, N_NOOP, N_GROW,
# N_PAGES, N_THP.  Everything it runs is in $OUT/bin (run.sh copies it):
# the guest's /tmp is its own tmpfs, so nothing may come from the host's.
set -u
T=/sys/kernel/tracing
# With the guest's uptime: under TCG on a busy host, where the time goes.
log() { echo "guest: [$(cut -d' ' -f1 /proc/uptime)] $*"; }

# The scratch disk: MADV_PAGEOUT wants a file on a real block-backed filesystem.
setup_disk() {
	mkfs.ext4 -q -F /dev/vda >/dev/null 2>&1 || { log "mkfs.ext4 /dev/vda failed"; return 1; }
	mkdir -p /run/disk
	mount -t ext4 /dev/vda /run/disk || { log "mount /dev/vda failed"; return 1; }
}

trace_reset() {
	echo 0 >$T/tracing_on
	echo >$T/set_event
	echo >$T/set_event_pid
	echo >$T/trace
	echo 16384 >$T/buffer_size_kb
}

# trace_window NAME "EVENTS" CMD...: CMD prints "ready pid=N ..." and waits
# for a byte on stdin (-w).  Only events of that pid between the byte and
# CMD's exit are traced: NAME.trace, CMD's output in NAME.out.
trace_window() {
	local name=$1 events=$2 ready pid wpid rc e rfd wfd
	shift 2
	trace_reset
	coproc WLP { "$@" 2>&1; }
	wpid=$WLP_PID
	# Our own copies: bash closes the coproc's fds once it reaps the process.
	exec {rfd}<&"${WLP[0]}" {wfd}>&"${WLP[1]}"
	if ! read -r -t 120 -u "$rfd" ready; then
		log "$name: no ready line from $*"
		kill "$wpid" 2>/dev/null
		exec {rfd}<&- {wfd}>&-
		return 1
	fi
	echo "$ready" >"$OUT/$name.out"
	pid=${ready#*pid=}
	pid=${pid%% *}
	echo "$pid" >$T/set_event_pid
	for e in $events; do echo "$e" >>$T/set_event || log "$name: cannot enable $e"; done
	echo 1 >$T/tracing_on
	echo go >&"$wfd"
	cat <&"$rfd" >>"$OUT/$name.out"
	wait "$wpid"
	rc=$?
	exec {rfd}<&- {wfd}>&-
	echo 0 >$T/tracing_on
	cat $T/trace >"$OUT/$name.trace"
	grep -h overrun $T/per_cpu/cpu*/stats >"$OUT/$name.stats"
	echo "rc=$rc" >>"$OUT/$name.out"
	trace_reset
	log "$name: rc=$rc, $(grep -vc '^#' "$OUT/$name.trace") trace lines"
}

# mms_run NAME "EVENTS" MMSCOPE-ARGS... -- CMD...: `mmscope record` of CMD,
# with EVENTS traced system-wide meanwhile (the oracle; run.sh picks CMD's
# pid from its "ready" or "done" line).  Empty EVENTS: no oracle.
mms_run() {
	local name=$1 events=$2 rc e
	shift 2
	trace_reset
	for e in $events; do echo "$e" >>$T/set_event || log "$name: cannot enable $e"; done
	[ -n "$events" ] && echo 1 >$T/tracing_on
	timeout 300 "$MMSCOPE" record -o "$OUT/$name.mmscope" --force "$@" \
		>"$OUT/$name.out" 2>"$OUT/$name.err"
	rc=$?
	echo 0 >$T/tracing_on
	if [ -n "$events" ]; then
		cat $T/trace >"$OUT/$name.trace"
		grep -h overrun $T/per_cpu/cpu*/stats >"$OUT/$name.stats"
	fi
	echo "rc=$rc" >>"$OUT/$name.out"
	trace_reset
	log "$name: mmscope record rc=$rc"
}

# Kprobes on the functions the fentry sources hook: an oracle that does not
# need the patch.  The merge functions' return value tells whether they
# merged: 6.1's vma_merge(); 6.12's vma_merge_new_range() for new ranges and
# vma_merge_existing_range() for changed ones or, where the compiler folded
# that into its only caller, commit_merge() returning 0 less vma_expand()
# returning 0 (vma_expand() commits through commit_merge() too).
# mms_start NAME ARGS...: `mmscope record ARGS` system-wide into OUT/NAME.mmscope in the
# background (pid in mms_pid, stderr in OUT/NAME.err), back once it collects (its start
# takes seconds under TCG) or has died.  The caller stops it with SIGTERM.
mms_start() {
	local name=$1
	shift
	MMSCOPE_START_TIMES=$OUT/$name.marks timeout 600 "$MMSCOPE" record \
		-o "$OUT/$name.mmscope" --force "$@" --duration 500 \
		>"$OUT/$name.rec.out" 2>"$OUT/$name.err" &
	mms_pid=$!
	for _ in $(seq 600); do
		grep -q ' collecting$' "$OUT/$name.marks" 2>/dev/null && break
		kill -0 $mms_pid 2>/dev/null || break
		sleep 0.5
	done
}
kprobe_setup() {
	echo >$T/kprobe_events
	echo 'p:mms_split __split_vma' >>$T/kprobe_events || return 1
	if [ "$KVERSION" = 6.1 ]; then
		echo 'r:mms_merge vma_merge ret=$retval' >>$T/kprobe_events || return 1
	else
		echo 'r:mms_merge vma_merge_new_range ret=$retval' >>$T/kprobe_events || return 1
		if grep -qx vma_merge_existing_range $T/available_filter_functions; then
			echo 'r:mms_mergex vma_merge_existing_range ret=$retval' >>$T/kprobe_events
		else
			echo 'r:mms_commit commit_merge ret=$retval' >>$T/kprobe_events &&
			echo 'r:mms_expand vma_expand ret=$retval' >>$T/kprobe_events
		fi || return 1
	fi
	echo 'p:mms_unmap try_to_unmap_one' >>$T/kprobe_events
}

ev_vma="vma:vma_split vma:vma_merge"
ev_rmap="rmap:try_to_unmap_batch"
ev_kp=

log "variant $VARIANT, kernel $(uname -r)"
{
	for e in vma/vma_split vma/vma_merge rmap/try_to_unmap_batch lock/contention_begin \
		 lock/contention_end mmap_lock/mmap_lock_start_locking; do
		[ -d $T/events/$e ] && echo "event $e present" || echo "event $e absent"
	done
	for e in vma/vma_split vma/vma_merge rmap/try_to_unmap_batch; do
		[ -f $T/events/$e/format ] && { echo "format $e"; cat $T/events/$e/format; }
	done
	[ -f /sys/kernel/btf/vmlinux ] && echo "btf present" || echo "btf absent"
	grep -E '^(__split_vma|vma_merge|__vma_adjust|vma_expand|mmap_region|copy_vma|try_to_unmap_one|page_remove_rmap|vma_merge_new_range|vma_merge_existing_range|vma_modify|commit_merge|vma_shrink|vma_prepare|folio_remove_rmap_ptes|folio_remove_rmap_pmd)$' \
		$T/available_filter_functions | sed 's/^/ftrace /'
	cat /sys/kernel/mm/transparent_hugepage/enabled | sed 's/^/thp /'
	echo "cpus $(nproc)"
	# virt_spin_lock(): with this CPUID bit spinlocks never reach contention_begin.
	grep -qw hypervisor /proc/cpuinfo && echo "cpuflag hypervisor" || echo "cpuflag no-hypervisor"
	dmesg 2>/dev/null | grep -E 'smpboot: Allowing|smp: Brought up' | sed 's/^/dmesg /'
	[ -f /proc/config.gz ] && zcat /proc/config.gz | grep -E '^CONFIG_PER_VMA_LOCK' |
		sed 's/^/config /'
} >"$OUT/events.txt" 2>&1

setup_disk
kprobe_setup || log "kprobe events unavailable"
# The probes kprobe_setup made: "p:kprobes/mms_split __split_vma", "r16:kprobes/...".
ev_kp=$(sed -n 's|^[pr][0-9]*:kprobes/\([a-z_]*\) .*|kprobes:\1|p' $T/kprobe_events | tr '\n' ' ')
log "kprobes: $ev_kp"

# GUEST_ONLY=names (run.sh's names guest: 4 CPUs, no CPUID hypervisor bit) runs the
# lock names' part alone.
if [ "${GUEST_ONLY:-}" != names ]; then
# Part 1: the tracepoints themselves (patched kernel) and the kprobe oracle.
if [ "$VARIANT" = patched ]; then
	trace_window tp-mprotect "$ev_vma" "$WL/mprotect_toggle" -n "$N_TOGGLE" -w
	trace_window tp-grow "$ev_vma" "$KT/vma_grow" -n "$N_GROW" -w
	trace_window tp-pageout "$ev_rmap" taskset -c 0 "$WL/pageout_loop" \
		-f /run/disk/pageout.dat -m "$N_PAGES" -n 1 -w
	trace_window tp-thp "$ev_rmap" "$KT/thp_pageout" -n "$N_THP" -w
fi
trace_window kp-mprotect "$ev_kp" "$WL/mprotect_toggle" -n "$N_TOGGLE" -w
trace_window kp-pageout "$ev_kp" taskset -c 0 "$WL/pageout_loop" \
	-f /run/disk/pageout.dat -m "$N_PAGES" -n 1 -w
fi

# Part 2: mmscope.  Skipped with a reason when the binary is not there yet.
if [ ! -x "$MMSCOPE" ]; then
	log "no mmscope binary at $MMSCOPE: mmscope checks not run"
	echo "missing $MMSCOPE" >"$OUT/mmscope-missing"
	exit 0
fi
"$MMSCOPE" check >"$OUT/check.txt" 2>&1
echo "rc=$?" >>"$OUT/check.txt"
log "mmscope check done"

if [ "${GUEST_ONLY:-}" != names ]; then

if [ "$VARIANT" = patched ]; then
	oracle_vma=$ev_vma
	oracle_rmap=$ev_rmap
	mms_run mm-vma-tp "$oracle_vma" --vma-source tracepoint --rmap-source off \
		-- "$WL/mprotect_toggle" -n "$N_TOGGLE"
	mms_run mm-grow-tp "$oracle_vma" --vma-source tracepoint --rmap-source off \
		-- "$KT/vma_grow" -n "$N_GROW"
	mms_run mm-pageout-tp "$oracle_rmap" --vma-source off --rmap-source tracepoint \
		-- taskset -c 0 "$WL/pageout_loop" -f /run/disk/pageout.dat -m "$N_PAGES" -n 1
	mms_run mm-thp-tp "$oracle_rmap" --vma-source off --rmap-source tracepoint \
		-- "$KT/thp_pageout" -n "$N_THP"
else
	oracle_vma=$ev_kp
	oracle_rmap=$ev_kp
	# No --vma-source: the default must fall back to fentry on this kernel.
	mms_run mm-vma-default "$oracle_vma" --rmap-source off \
		-- "$WL/mprotect_toggle" -n "$N_TOGGLE"
	# The last VMA fallback: task storage, the task iterator, exit flush.
	mms_run mm-vma-inferred "" --vma-source inferred --rmap-source off \
		-- "$WL/mprotect_toggle" -n "$N_TOGGLE" -r "$N_NOOP"
fi
mms_run mm-vma-fentry "$oracle_vma" --vma-source fentry --rmap-source off \
	-- "$WL/mprotect_toggle" -n "$N_TOGGLE"
mms_run mm-grow-fentry "$oracle_vma" --vma-source fentry --rmap-source off \
	-- "$KT/vma_grow" -n "$N_GROW"
mms_run mm-pageout-fentry "$oracle_rmap" --vma-source off --rmap-source fentry \
	-- taskset -c 0 "$WL/pageout_loop" -f /run/disk/pageout.dat -m "$N_PAGES" -n 1
mms_run mm-thp-fentry "$oracle_rmap" --vma-source off --rmap-source fentry \
	-- "$KT/thp_pageout" -n "$N_THP"
# Locks: two threads of one process fighting over mmap_lock for 3 s.
mms_run mm-locks "lock:contention_begin" --vma-source off --rmap-source off --duration 3 \
	-- "$WL/mmap_churn" -t 2 -s 2
# Owners (--lock-owner): one thread mprotect()s 64 MiB while three mmap/munmap a page
# (pausing 200 us after each munmap), booked at the waits' begin and, with
# --mmap-hold, to the write holders at their end.
mms_run mm-owners "" --lock-owner -L mmap_lock --vma-source off --rmap-source off \
	--duration 4 -- "$WL/lock_owner" -m mmap -p 200 -s 2
mms_run mm-owners-hold "" --lock-owner --mmap-hold -L mmap_lock --vma-source off \
	--rmap-source off --duration 4 -- "$WL/lock_owner" -m mmap -p 200 -s 2
# The mmap_lock source (--mmap-hold) against mmap_lock's own tracepoints.
mms_run mm-mmap-hold "mmap_lock:mmap_lock_acquire_returned sched:sched_process_exec" \
	--mmap-hold --vma-source off \
	--rmap-source off -- "$WL/mprotect_toggle" -n "$N_TOGGLE"
# Per-VMA lock rows against the kernel's own counters (CONFIG_PER_VMA_LOCK_STATS, in
# kernel/mmscope-6.12.config): mmscope records system-wide; once it is collecting,
# /proc/vmstat's vma_lock_* are read (by bash itself: no process of its own faults
# between the reads), vma_fallback faults on a region another of its threads
# mprotect()s (its faults fall back), and they are read again; then mmscope stops.
# Only the workload runs meanwhile, so the deltas are its faults (check.py).
vmstat_vl() {
	local k v
	while read -r k v; do
		case $k in vma_lock_*) echo "$k $v" ;; esac
	done </proc/vmstat
}
if grep -q '^vma_lock_success ' /proc/vmstat; then
	log "vma-lock: record with the kernel's counters"
	mms_start mm-vma-lock --vma-lock --vma-source off --rmap-source off
	vl_mms=$mms_pid
	vmstat_vl >"$OUT/mm-vma-lock.before"
	"$WL/vma_fallback" -s 6 -t 2 -M 64 -m >"$OUT/mm-vma-lock.out" 2>&1
	echo "workload_rc=$?" >>"$OUT/mm-vma-lock.out"
	vmstat_vl >"$OUT/mm-vma-lock.after"
	kill -TERM $vl_mms 2>/dev/null
	wait $vl_mms
	echo "rc=$?" >>"$OUT/mm-vma-lock.out"
	log "vma-lock: done"
else
	echo "no vma_lock_* in /proc/vmstat" >"$OUT/mm-vma-lock.none"
fi
# Lock names: two processes of two threads on one shared file contend its
# i_mmap_rwsem (msync walks the rmap under it; the splits and merges of the
# mprotects take it for write in vma_prepare()).
mms_run mm-names-file "" --vma-source off --rmap-source off \
	-- "$WL/mmap_churn" -t 2 -P 2 -s 4 -f /run/disk/shared.dat -S
# anon_vma: workers forking off one anon_vma root.  Waits are rare, so up to
# three tries; the guest asks mmscope itself whether one was named.
for try in 1 2 3; do
	mms_run mm-names-anon "" --vma-source off --rmap-source off -- "$WL/fork_anon" -w 8 -s 6
	"$MMSCOPE" report "$OUT/mm-names-anon.mmscope" --by lock -L anon_vma --json \
		>"$OUT/mm-names-anon.json" 2>>"$OUT/mm-names-anon.err"
	grep -q '"name": *"anon_vma"' "$OUT/mm-names-anon.json" && break
done
echo "tries=$try" >>"$OUT/mm-names-anon.out"
fi
if [ "${GUEST_ONLY:-}" = names ]; then
# Locks named by the structure they live in (spinlocks: rq_lock, pi_lock, zone_lock,
# lru_lock, ptlock, siglock of another process, i_pages, per-CPU variables), each
# contended by one lock_kinds mode, all at once.  Only a guest without the CPUID
# hypervisor bit (else virt_spin_lock() spins without contention_begin) and with 3 CPUs
# or more (the native queued spinlock reaches it only for a third waiter) shows them:
# run.sh's names guest (GUEST_ONLY=names) is such a guest; the others skip this.
# The oracle of rq_lock's names: the runqueues the kernel locks, each with its CPU,
# from a kprobe on raw_spin_rq_lock_nested(rq, subclass) (rq->cpu at its offset in
# the kernel's BTF), for a second of thread wake-ups.
rq_oracle() {
	local off
	off=$(bpftool btf dump file /sys/kernel/btf/vmlinux format raw 2>/dev/null | awk '
		/^\[[0-9]+\] STRUCT .rq. / { f = 1; next }
		f && /^\[/ { f = 0 }
		f && /^\t.cpu. / { sub(/.*bits_offset=/, ""); print $1 / 8; exit }')
	[ -n "$off" ] || { echo "no offset of rq.cpu (bpftool)" >"$OUT/mm-names-rq.oracle"; return; }
	trace_reset
	echo "p:mms_rq raw_spin_rq_lock_nested rq=%di:x64 cpu=+$off(%di):s32" >>$T/kprobe_events ||
		{ echo "kprobe refused" >"$OUT/mm-names-rq.oracle"; return; }
	echo 1 >$T/events/kprobes/mms_rq/enable
	echo 1 >$T/tracing_on
	"$WL/lock_kinds" -m wake -t 2 -s 1 >/dev/null
	echo 0 >$T/tracing_on
	echo 0 >$T/events/kprobes/mms_rq/enable
	grep -o 'rq=0x[0-9a-f]* cpu=[0-9]*' $T/trace | sort | uniq -c >"$OUT/mm-names-rq.oracle"
	echo '-:mms_rq' >>$T/kprobe_events
	trace_reset
}
rq_oracle
# 64 KiB anonymous THPs meanwhile (order 4: above the per-CPU lists' orders), so that
# -m page allocates and frees under zone->lock itself.
mthp=/sys/kernel/mm/transparent_hugepage/hugepages-64kB/enabled
mthp_was=$(sed -n 's/.*\[\(.*\)\].*/\1/p' $mthp 2>/dev/null)
[ -n "$mthp_was" ] && echo always >$mthp
# -m page runs alone first: zone->lock is held briefly, and only a third waiter shows.
# -m pi has 6 threads: with 3, a run saw 7-12 pi_lock waits, close enough to none.
mms_run mm-names-kinds "" --vma-source off --rmap-source off -- bash -c "
	\"$WL/lock_kinds\" -m page -t 8 -s 3
	for m in wake signal; do \"$WL/lock_kinds\" -m \$m -t 3 -s 5 & done
	\"$WL/lock_kinds\" -m pi -t 6 -s 5 &
	\"$WL/lock_kinds\" -m page -t 4 -s 5 &
	\"$WL/lock_kinds\" -m ptl -t 5 -s 5 &
	\"$WL/lock_kinds\" -m drain -t 8 -s 5 &
	\"$WL/lock_kinds\" -m write -t 3 -s 5 -f /run/disk/kinds-w.dat &
	\"$WL/lock_kinds\" -m mwrite -t 6 -s 5 -f /run/disk/kinds.dat &
	wait"
[ -n "$mthp_was" ] && echo "$mthp_was" >$mthp
fi
# The demo's workloads (examples/demo.mmscope): two processes' mmap churn on a shared
# file, a MADV_PAGEOUT loop, a fork+exec loop and mprotect toggles, recorded
# system-wide: how many of the rows and how much of the wait time have a name.  The
# programs run from the guest's tmpfs: exec'ing them from the 9p root would add the
# 9p channel's locks, which are this harness's, not the demo's.
mkdir -p /run/demo
cp "$WL/mmap_churn" "$WL/pageout_loop" "$WL/execl_loop" "$WL/mprotect_toggle" /run/demo/
demo_load() {
	local end=$((SECONDS + $1)) d=/run/demo
	"$d/mmap_churn" -t 2 -P 2 -s "$1" -f /run/disk/demo-shared.dat -S >/dev/null 2>&1 &
	"$d/pageout_loop" -f /run/disk/demo-po.dat -m 256 -s "$1" >/dev/null 2>&1 &
	"$d/execl_loop" -s "$1" >/dev/null 2>&1 &
	while [ $SECONDS -lt $end ]; do "$d/mprotect_toggle" -n 2000 >/dev/null 2>&1; done &
	wait
}
# The workloads start once mmscope collects (its start takes seconds under TCG).
log "names-demo: record system-wide while the demo's workloads run"
mms_start mm-names-demo --vma-source off --rmap-source off
nd_mms=$mms_pid
# In a subshell: its wait must not wait for mmscope.
(demo_load 10)
kill -TERM $nd_mms 2>/dev/null
wait $nd_mms
echo "rc=$?" >>"$OUT/mm-names-demo.rec.out"
log "names-demo: done"
# The patch-mail A/B (tests/kernel/ab.sh compares the two 6.12 kernels on the host): the
# seeds' vma_prepare workload, four processes splitting and shrinking VMAs of one shared
# file, three runs with its own score.  The same sources on both kernels (fentry for the
# VMA rows, which both allow), so that the kernels are what differs, not the tracer.
if [ "$KVERSION" = 6.12 ] && [ "${GUEST_ONLY:-}" != names ]; then
	mkdir -p "$OUT/ab"
	log "ab: record --runs 3 of vma_split_file"
	"$MMSCOPE" record --runs 3 --cooldown 1 --score-default --vma-source fentry \
		--rmap-source off \
		-o "$OUT/ab/vsf.mmscope" -- "$WL/vma_split_file" -f /run/disk/vsf.dat -P 4 -S -s 2 \
		>"$OUT/ab/record.out" 2>"$OUT/ab/record.err"
	echo "rc=$?" >>"$OUT/ab/record.out"
	log "ab: done"
fi
exit 0
