// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for collectors/lock_common: stack trimming past the lock
 * primitives (a synthetic kallsyms file written here), lock naming, the
 * -S / -L / -Y / -p filters, --hide-addrs, and the mmap_lock metrics.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "lock_common.h"
#include "mmscope/ksyms.h"
#include "mmscope/options.h"
#include "mmscope/query.h"
#include "mmscope/store.h"

static const char kallsyms[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81001000 T do_mprotect_pkey\n"
	"ffffffff81001400 T __x64_sys_mprotect\n"
	"ffffffff81001800 t vma_prepare\n"
	"ffffffff81002000 T do_syscall_64\n"
	"ffffffff81003000 t handle_softirqs\n"
	"ffffffff81003400 T asm_sysvec_apic_timer_interrupt\n"
	"ffffffff81003500 T asm_common_interrupt\n"
	"ffffffff82000000 T __sched_text_start\n"
	"ffffffff82000000 T rwsem_down_write_slowpath\n"
	"ffffffff82000400 T down_write\n"
	"ffffffff82000800 T __sched_text_end\n"
	"ffffffff82000800 T __lock_text_start\n"
	"ffffffff82000800 T _raw_spin_lock\n"
	"ffffffff82000900 T __lock_text_end\n"
	"ffffffff84000000 d rcu_state\n"
	"ffffffff84001000 t after_data\n";

#define IP_SLOWPATH 0xffffffff82000123ULL	/* rwsem_down_write_slowpath+0x123 */
#define IP_DOWN_WRITE 0xffffffff82000410ULL	/* down_write+0x10 */
#define IP_SPIN 0xffffffff82000820ULL		/* _raw_spin_lock+0x20 */
#define IP_MPROTECT 0xffffffff81001159ULL	/* do_mprotect_pkey+0x159 */
#define IP_SYS 0xffffffff8100141bULL		/* __x64_sys_mprotect+0x1b */
#define IP_PREPARE 0xffffffff81001840ULL	/* vma_prepare+0x40 */
#define IP_SYSCALL 0xffffffff81002071ULL	/* do_syscall_64+0x71 */
#define IP_SOFTIRQ 0xffffffff810030cdULL	/* handle_softirqs+0xcd */
#define IP_SYSVEC 0xffffffff81003416ULL		/* asm_sysvec_apic_timer_interrupt+0x16 */
#define IP_COMMON 0xffffffff81003516ULL		/* asm_common_interrupt+0x16 */

struct fixture {
	char path[64];
	struct mms_ksyms *ks;
	struct mms_store *st;
	struct mms_options o;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	int fd;

	if (!f)
		return -1;
	snprintf(f->path, sizeof(f->path), "/tmp/mms-lc-ksyms-XXXXXX");
	fd = mkstemp(f->path);
	if (fd < 0 || write(fd, kallsyms, sizeof(kallsyms) - 1) != (ssize_t)sizeof(kallsyms) - 1)
		return -1;
	close(fd);
	if (mms_ksyms_load(f->path, &f->ks) || mms_store_create(NULL, &f->st))
		return -1;
	mms_options_init(&f->o);
	if (!mms_store_begin(f->st, 0))
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	unlink(f->path);
	mms_ksyms_destroy(f->ks);
	mms_store_destroy(f->st);
	free(f);
	return 0;
}

static const char *frame(struct fixture *f, uint32_t stack_id, uint32_t i)
{
	const struct mms_stack *s = mms_store_get_stack(f->st, stack_id);

	return s && i < s->nr ? mms_store_get_str(f->st, s->sym_ids[i]) : NULL;
}

static uint32_t stack_nr(struct fixture *f, uint32_t stack_id)
{
	const struct mms_stack *s = mms_store_get_stack(f->st, stack_id);

	return s ? s->nr : 0;
}

static const uint64_t raw[] = { IP_SLOWPATH, IP_DOWN_WRITE, IP_MPROTECT, IP_SYS, IP_SYSCALL };

static void test_stack_trim(void **state)
{
	struct fixture *f = *state;
	struct mms_lock_common *lc;
	uint32_t id, again;

	assert_int_equal(mms_lock_common_create(&f->o, f->ks, &lc), 0);
	assert_int_equal(mms_lock_common_stack(lc, f->st, raw, 5, &id), 0);
	assert_int_not_equal(id, 0);
	/* Both lock frames dropped: frame 0 is the caller, as MMS_BY_CALLER wants. */
	assert_int_equal(stack_nr(f, id), 3);
	assert_string_equal(frame(f, id, 0), "do_mprotect_pkey+0x159");
	assert_string_equal(frame(f, id, 1), "__x64_sys_mprotect+0x1b");
	assert_string_equal(frame(f, id, 2), "do_syscall_64+0x71");
	assert_int_equal(mms_store_get_stack(f->st, id)->ips[0], IP_MPROTECT);
	/* Same raw stack, same id (from the cache or the store). */
	assert_int_equal(mms_lock_common_stack(lc, f->st, raw, 5, &again), 0);
	assert_int_equal(again, id);
	/* Only lock frames: nothing left, no stack. */
	assert_int_equal(mms_lock_common_stack(lc, f->st, raw, 2, &id), 0);
	assert_int_equal(id, 0);
	mms_lock_common_destroy(lc);
}

static void test_stack_skip_and_max(void **state)
{
	struct fixture *f = *state;
	struct mms_lock_common *lc;
	uint32_t id;

	f->o.stack_skip = 1;
	f->o.max_stack = 1;
	assert_int_equal(mms_lock_common_create(&f->o, f->ks, &lc), 0);
	assert_int_equal(mms_lock_common_stack(lc, f->st, raw, 5, &id), 0);
	assert_int_equal(stack_nr(f, id), 1);
	assert_string_equal(frame(f, id, 0), "__x64_sys_mprotect+0x1b");
	mms_lock_common_destroy(lc);
}

static void test_stack_filter(void **state)
{
	struct fixture *f = *state;
	struct mms_lock_common *lc;
	const uint64_t other[] = { IP_SPIN, IP_PREPARE, IP_SYSCALL };
	uint32_t id;

	f->o.stack_match[0] = "sys_mprotect";
	f->o.nr_stack_match = 1;
	assert_int_equal(mms_lock_common_create(&f->o, f->ks, &lc), 0);
	assert_int_equal(mms_lock_common_stack(lc, f->st, raw, 5, &id), 0);
	assert_int_not_equal(id, 0);
	assert_int_equal(mms_lock_common_stack(lc, f->st, other, 3, &id), MMS_LC_SKIP);
	/* Cached answers keep the verdict. */
	assert_int_equal(mms_lock_common_stack(lc, f->st, other, 3, &id), MMS_LC_SKIP);
	mms_lock_common_destroy(lc);

	/* Only the kept frames count: with max_stack 1, vma_prepare is all there is. */
	f->o.stack_match[0] = "do_syscall";
	f->o.max_stack = 1;
	assert_int_equal(mms_lock_common_create(&f->o, f->ks, &lc), 0);
	assert_int_equal(mms_lock_common_stack(lc, f->st, other, 3, &id), MMS_LC_SKIP);
	mms_lock_common_destroy(lc);
}

/* Thousands of raw stacks: each asked again gets its own id and -S verdict back. */
static void test_stack_many(void **state)
{
	static const uint64_t mid[] = { IP_SYS, IP_SYSCALL, IP_SOFTIRQ };
	struct fixture *f = *state;
	struct mms_lock_common *lc;
	static uint32_t ids[3000];
	uint64_t st[3];
	uint32_t id;

	f->o.stack_match[0] = "vma_prepare";
	f->o.nr_stack_match = 1;
	assert_int_equal(mms_lock_common_create(&f->o, f->ks, &lc), 0);
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = 0; i < 3000; i++) {
			st[0] = 0xffffffff81001000ULL + (i & 1023);
			st[1] = mid[i >> 10];
			st[2] = i & 1 ? IP_PREPARE : IP_SOFTIRQ;
			assert_int_equal(mms_lock_common_stack(lc, f->st, st, 3, &id),
					 i & 1 ? 0 : MMS_LC_SKIP);
			if (!pass)
				ids[i] = id;
			else
				assert_int_equal(id, ids[i]);
			assert_int_equal(id != 0, i & 1);
		}
	}
	/* Distinct stacks, distinct ids. */
	for (uint32_t i = 3; i < 3000; i += 2)
		assert_int_not_equal(ids[i], ids[i - 2]);
	mms_lock_common_destroy(lc);
}

/*
 * A wait inside an interrupt: the frames past the interrupt's entry are what
 * it interrupted, different for every wait.  The stack ends at the entry, so
 * those waits share one stack, and -S sees only what is shown.
 */
static void test_stack_irq(void **state)
{
	struct fixture *f = *state;
	struct mms_lock_common *lc;
	const uint64_t in_mprotect[] = { IP_SPIN, IP_SOFTIRQ, IP_SYSVEC, IP_MPROTECT, IP_SYS };
	const uint64_t in_prepare[] = { IP_SPIN, IP_SOFTIRQ, IP_SYSVEC, IP_PREPARE, IP_SYSCALL };
	const uint64_t device[] = { IP_SPIN, IP_SOFTIRQ, IP_COMMON, IP_PREPARE };
	uint32_t id, id2, id3;

	f->o.max_stack = 8;
	assert_int_equal(mms_lock_common_create(&f->o, f->ks, &lc), 0);
	assert_int_equal(mms_lock_common_stack(lc, f->st, in_mprotect, 5, &id), 0);
	assert_int_equal(stack_nr(f, id), 2);
	assert_string_equal(frame(f, id, 0), "handle_softirqs+0xcd");
	assert_string_equal(frame(f, id, 1), "asm_sysvec_apic_timer_interrupt+0x16");
	assert_int_equal(mms_lock_common_stack(lc, f->st, in_prepare, 5, &id2), 0);
	assert_int_equal(id2, id);
	assert_int_equal(mms_lock_common_stack(lc, f->st, device, 4, &id3), 0);
	assert_int_equal(stack_nr(f, id3), 2);
	assert_string_equal(frame(f, id3, 1), "asm_common_interrupt+0x16");
	/* Outside an interrupt nothing changes. */
	assert_int_equal(mms_lock_common_stack(lc, f->st, raw, 5, &id), 0);
	assert_int_equal(stack_nr(f, id), 3);
	mms_lock_common_destroy(lc);

	f->o.stack_match[0] = "do_mprotect";
	f->o.nr_stack_match = 1;
	assert_int_equal(mms_lock_common_create(&f->o, f->ks, &lc), 0);
	assert_int_equal(mms_lock_common_stack(lc, f->st, in_mprotect, 5, &id), MMS_LC_SKIP);
	assert_int_equal(mms_lock_common_stack(lc, f->st, raw, 5, &id), 0);
	mms_lock_common_destroy(lc);
}

static void label(struct fixture *f, uint32_t lock_id, char *buf, size_t len)
{
	mms_store_lock_label(f->st, lock_id, buf, len);
}

static void test_lock_names(void **state)
{
	struct fixture *f = *state;
	struct mms_lock_common *lc;
	struct mms_lock_hint mm = { .addr = 0xffff888100001000ULL, .kind = MMS_LOCK_MMAP,
				    .owner_tgid = 42, .owner_comm = "stress-ng" };
	struct mms_lock_hint wl = mm;
	struct mms_lock_hint slab = { .addr = 0xffff888100002000ULL, .kind = MMS_LOCK_SLAB,
				      .detail = "task_struct" };
	struct mms_lock_hint file = { .addr = 0xffff888100003000ULL, .kind = MMS_LOCK_I_MMAP,
				      .detail = "/usr/lib/libc.so.6" };
	struct mms_lock_hint stat = { .addr = 0xffffffff84000040ULL };
	struct mms_lock_hint text = { .addr = 0xffffffff81001010ULL };
	struct mms_lock_hint anon = { .addr = 0xffff888100004000ULL, .kind = MMS_LOCK_ANON_VMA };
	char buf[128];
	uint32_t id;

	wl.wait_lock = true;
	wl.addr += 0x18;
	assert_int_equal(mms_lock_common_create(&f->o, f->ks, &lc), 0);
	assert_int_equal(mms_lock_common_lock(lc, f->st, &mm, &id), 0);
	label(f, id, buf, sizeof(buf));
	assert_string_equal(buf, "mmap_lock (42 stress-ng)");
	assert_int_equal(mms_store_get_lock(f->st, id)->addr, mm.addr);
	assert_int_equal(mms_lock_common_lock(lc, f->st, &wl, &id), 0);
	label(f, id, buf, sizeof(buf));
	assert_string_equal(buf, "mmap_lock.wait_lock (42 stress-ng)");
	assert_int_equal(mms_lock_common_lock(lc, f->st, &slab, &id), 0);
	label(f, id, buf, sizeof(buf));
	assert_string_equal(buf, "&task_struct");
	assert_int_equal(mms_lock_common_lock(lc, f->st, &file, &id), 0);
	label(f, id, buf, sizeof(buf));
	assert_string_equal(buf, "i_mmap_rwsem (/usr/lib/libc.so.6)");
	assert_int_equal(mms_lock_common_lock(lc, f->st, &anon, &id), 0);
	label(f, id, buf, sizeof(buf));
	assert_string_equal(buf, "anon_vma");
	/* Static lock: named by the data symbol covering it. */
	assert_int_equal(mms_lock_common_lock(lc, f->st, &stat, &id), 0);
	label(f, id, buf, sizeof(buf));
	assert_string_equal(buf, "rcu_state+0x40");
	assert_int_equal(mms_store_get_lock(f->st, id)->kind, MMS_LOCK_STATIC);
	/* A text symbol says nothing about a lock: no name, the address. */
	assert_int_equal(mms_lock_common_lock(lc, f->st, &text, &id), 0);
	label(f, id, buf, sizeof(buf));
	assert_string_equal(buf, "0xffffffff81001010");
	assert_int_equal(mms_store_get_lock(f->st, id)->kind, MMS_LOCK_UNKNOWN);
	mms_lock_common_destroy(lc);
}

static int lock_verdict(struct fixture *f, struct mms_lock_common *lc,
			const struct mms_lock_hint *h)
{
	uint32_t id;

	return mms_lock_common_lock(lc, f->st, h, &id);
}

static void test_lock_filter(void **state)
{
	struct fixture *f = *state;
	struct mms_lock_common *lc;
	struct mms_lock_hint mm = { .addr = 0xffff888100001000ULL, .kind = MMS_LOCK_MMAP,
				    .owner_tgid = 42, .owner_comm = "x" };
	struct mms_lock_hint slab = { .addr = 0xffff888100002000ULL, .kind = MMS_LOCK_SLAB,
				      .detail = "task_struct" };
	struct mms_lock_hint stat = { .addr = 0xffffffff84000040ULL };
	struct mms_lock_hint rcu = { .addr = 0xffffffff84000000ULL };
	uint64_t addrs[4];

	/* Names only: the kernel cannot filter, user space does. */
	f->o.locks[0] = "mmap_lock";
	f->o.locks[1] = "&task_struct";
	f->o.nr_locks = 2;
	assert_int_equal(mms_lock_common_create(&f->o, f->ks, &lc), 0);
	assert_int_equal(mms_lock_common_filter_addrs(lc, addrs, 4), -ENOENT);
	assert_int_equal(lock_verdict(f, lc, &mm), 0);
	assert_int_equal(lock_verdict(f, lc, &slab), 0);
	assert_int_equal(lock_verdict(f, lc, &stat), MMS_LC_SKIP);
	mms_lock_common_destroy(lc);

	/* An address and a symbol: both resolve, so the kernel can filter. */
	f->o.locks[0] = "0xffff888100002000";
	f->o.locks[1] = "rcu_state";
	assert_int_equal(mms_lock_common_create(&f->o, f->ks, &lc), 0);
	assert_int_equal(mms_lock_common_filter_addrs(lc, addrs, 4), 2);
	assert_int_equal(addrs[0], 0xffff888100002000ULL);
	assert_int_equal(addrs[1], 0xffffffff84000000ULL);
	assert_int_equal(lock_verdict(f, lc, &slab), 0);
	assert_int_equal(lock_verdict(f, lc, &rcu), 0);
	/* rcu_state+0x40 is the same static object, named rcu_state+0x40. */
	assert_int_equal(lock_verdict(f, lc, &stat), 0);
	assert_int_equal(lock_verdict(f, lc, &mm), MMS_LC_SKIP);
	mms_lock_common_destroy(lc);

	f->o.locks[0] = "";
	f->o.nr_locks = 1;
	assert_int_equal(mms_lock_common_create(&f->o, f->ks, &lc), -EINVAL);
	assert_non_null(strstr(mms_lock_common_error(), "-L"));
}

static void test_type_filter(void **state)
{
	struct fixture *f = *state;
	struct mms_lock_common *lc;

	assert_int_equal(mms_lock_common_create(&f->o, f->ks, &lc), 0);
	assert_true(mms_lock_common_type_ok(lc, MMS_LCB_SPIN));
	assert_int_equal(mms_lock_common_type_mask(lc), ~0ULL);
	mms_lock_common_destroy(lc);

	f->o.nr_types = mms_lock_type_parse("rwsem", f->o.types, MMS_MAX_FILTERS);
	assert_true(f->o.nr_types >= 2);
	assert_int_equal(mms_lock_common_create(&f->o, f->ks, &lc), 0);
	assert_true(mms_lock_common_type_ok(lc, MMS_LCB_READ));
	assert_true(mms_lock_common_type_ok(lc, MMS_LCB_WRITE));
	assert_false(mms_lock_common_type_ok(lc, MMS_LCB_SPIN));
	assert_false(mms_lock_common_type_ok(lc, MMS_LCB_MUTEX));
	assert_int_equal(mms_lock_common_type_mask(lc),
			 (1ULL << MMS_LCB_READ) | (1ULL << MMS_LCB_WRITE));
	mms_lock_common_destroy(lc);
}

static void test_task_filter(void **state)
{
	struct fixture *f = *state;
	struct mms_lock_common *lc;
	char *argv[] = { "sleep", NULL };
	uint32_t me = (uint32_t)getpid();
	pid_t child;

	/* --tid: exactly these threads. */
	f->o.tids[0] = 1234;
	f->o.nr_tids = 1;
	assert_int_equal(mms_lock_common_create(&f->o, f->ks, &lc), 0);
	assert_true(mms_lock_common_task_ok(lc, 1234, 1200));
	assert_false(mms_lock_common_task_ok(lc, 1235, 1200));
	mms_lock_common_destroy(lc);
	f->o.nr_tids = 0;

	/* A real child of this process, to check descendants through /proc. */
	child = fork();
	assert_true(child >= 0);
	if (!child) {
		pause();
		_exit(0);
	}
	f->o.pid = (int)me;
	f->o.cmd = argv;
	assert_int_equal(mms_lock_common_create(&f->o, f->ks, &lc), 0);
	assert_true(mms_lock_common_task_ok(lc, me, me));
	assert_true(mms_lock_common_task_ok(lc, (uint32_t)child, (uint32_t)child));
	assert_false(mms_lock_common_task_ok(lc, 1, 1));
	/* Told by a fork event instead. */
	mms_lock_common_follow(lc, 999999);
	assert_true(mms_lock_common_task_ok(lc, 999999, 999999));
	mms_lock_common_destroy(lc);

	f->o.no_inherit = true;
	assert_int_equal(mms_lock_common_create(&f->o, f->ks, &lc), 0);
	assert_false(mms_lock_common_task_ok(lc, (uint32_t)child, (uint32_t)child));
	mms_lock_common_destroy(lc);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
}

static void test_hide_addrs(void **state)
{
	struct fixture *f = *state;
	struct mms_lock_common *lc, *lc2;
	struct mms_lock_hint mm = { .addr = 0xffff888100001000ULL, .kind = MMS_LOCK_MMAP,
				    .owner_tgid = 42, .owner_comm = "x" };
	uint64_t h;
	uint32_t id;

	f->o.hide_addrs = true;
	assert_int_equal(mms_lock_common_create(&f->o, f->ks, &lc), 0);
	assert_int_equal(mms_lock_common_create(&f->o, f->ks, &lc2), 0);
	h = mms_lock_common_hide(lc, mm.addr);
	assert_int_not_equal(h, mm.addr);
	assert_int_not_equal(h, 0);
	assert_int_equal(mms_lock_common_hide(lc, 0), 0);
	/* Stable within a run and for another context on this machine. */
	assert_int_equal(mms_lock_common_hide(lc, mm.addr), h);
	assert_int_equal(mms_lock_common_hide(lc2, mm.addr), h);
	assert_int_not_equal(mms_lock_common_hide(lc, mm.addr + 8), h);

	assert_int_equal(mms_lock_common_lock(lc, f->st, &mm, &id), 0);
	assert_int_equal(mms_store_get_lock(f->st, id)->addr, h);
	assert_int_equal(mms_lock_common_stack(lc, f->st, raw, 5, &id), 0);
	/* Symbols stay (they are no secret), raw addresses go. */
	assert_string_equal(frame(f, id, 0), "do_mprotect_pkey+0x159");
	assert_int_equal(mms_store_get_stack(f->st, id)->ips[0], mms_lock_common_hide(lc,
										  IP_MPROTECT));
	mms_lock_common_destroy(lc);
	mms_lock_common_destroy(lc2);
}

static void test_mmap_metrics(void **state)
{
	struct fixture *f = *state;
	struct mms_lock_common *lc;
	struct mms_lock_hint mm = { .addr = 0xffff888100001000ULL, .kind = MMS_LOCK_MMAP,
				    .owner_tgid = 42, .owner_comm = "stress-ng" };
	struct mms_lock_hint slab = { .addr = 0xffff888100002000ULL, .kind = MMS_LOCK_SLAB,
				      .detail = "task_struct" };
	struct mms_lock_sample s = { 0 };
	const struct mms_interval *iv;
	struct mms_stat out;
	uint32_t mm_id, slab_id;

	assert_int_equal(mms_lock_common_create(&f->o, f->ks, &lc), 0);
	assert_int_equal(mms_lock_common_lock(lc, f->st, &mm, &mm_id), 0);
	assert_int_equal(mms_lock_common_lock(lc, f->st, &slab, &slab_id), 0);
	s.task_id = mms_store_task(f->st, 43, 43, "waiter");

	s.lock_id = mm_id;
	s.flags = MMS_LCB_WRITE;
	mms_stat_init(&s.wait);
	mms_stat_add(&s.wait, 1000);
	mms_stat_add(&s.wait, 3000);
	assert_int_equal(mms_lock_common_add(lc, f->st, &s), 0);
	s.flags = MMS_LCB_READ;
	mms_stat_init(&s.wait);
	mms_stat_add(&s.wait, 500);
	assert_int_equal(mms_lock_common_add(lc, f->st, &s), 0);
	/* The rwsem's wait_lock spinning and other locks add no mmap_lock metric. */
	s.flags = MMS_LCB_SPIN;
	assert_int_equal(mms_lock_common_add(lc, f->st, &s), 0);
	s.lock_id = slab_id;
	s.flags = MMS_LCB_WRITE;
	assert_int_equal(mms_lock_common_add(lc, f->st, &s), 0);
	assert_int_equal(mms_store_commit(f->st, 1000000000ULL, 0), 0);

	iv = mms_store_latest(f->st);
	assert_int_equal(iv->n_locks, 4);
	assert_int_equal(iv->n_metrics, 2);
	assert_int_equal(mms_query_metric(f->st, 0, 0, "mmap_lock.wait.write", -1, 42, &out), 0);
	assert_int_equal(out.count, 2);
	assert_int_equal(out.total, 4000);
	assert_int_equal(out.max, 3000);
	assert_int_equal(mms_query_metric(f->st, 0, 0, "mmap_lock.wait.read", -1, 42, &out), 0);
	assert_int_equal(out.count, 1);
	assert_int_equal(out.total, 500);
	/* By the lock's owner (42), not the waiter (43). */
	assert_int_equal(mms_query_metric(f->st, 0, 0, "mmap_lock.wait.write", -1, 43, &out), 0);
	assert_int_equal(out.count, 0);
	mms_lock_common_destroy(lc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_stack_trim, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stack_skip_and_max, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stack_filter, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stack_many, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stack_irq, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock_filter, setup, teardown),
		cmocka_unit_test_setup_teardown(test_type_filter, setup, teardown),
		cmocka_unit_test_setup_teardown(test_task_filter, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hide_addrs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mmap_metrics, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
