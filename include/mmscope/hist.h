/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One statistic for BPF programs and user space: count, total, min, max and
 * a log2 histogram, with its histogram slot, add and merge written once.
 * The BPF collectors keep it as their maps' values, the store and the
 * recordings keep it per sample, so a value read from a map is a struct
 * mms_stat as it is.  BPF programs include this after vmlinux.h (for __u64);
 * user space gets it through mmscope/sample.h.
 */
#ifndef MMSCOPE_HIST_H
#define MMSCOPE_HIST_H

#ifdef __bpf__
#define MMS_HIST_U64 __u64
#define MMS_HIST_U32 __u32
#else
#include <stdint.h>
#define MMS_HIST_U64 uint64_t
#define MMS_HIST_U32 uint32_t
#endif

#define MMS_HIST_INLINE static inline __attribute__((always_inline))

/*
 * Histogram slot i counts values v with floor(log2(v)) == i (v = 0 lands in
 * slot 0); the last slot also takes everything larger.  40 slots cover 1 ns
 * to ~9 minutes.
 */
#define MMS_HIST_SLOTS 40

struct mms_stat {
	MMS_HIST_U64 count;
	MMS_HIST_U64 total;
	MMS_HIST_U64 min;
	MMS_HIST_U64 max;
	MMS_HIST_U32 hist[MMS_HIST_SLOTS];
};

#ifdef __bpf__
/* floor(log2(v)), 0 for 0: BPF has no count-leading-zeros instruction. */
MMS_HIST_INLINE __u32 mms_log2(__u64 v)
{
	__u32 r = 0, s;

	s = (v > 0xffffffffULL) << 5;
	v >>= s;
	r |= s;
	s = (v > 0xffff) << 4;
	v >>= s;
	r |= s;
	s = (v > 0xff) << 3;
	v >>= s;
	r |= s;
	s = (v > 0xf) << 2;
	v >>= s;
	r |= s;
	s = (v > 0x3) << 1;
	v >>= s;
	r |= s;
	r |= (v >> 1);
	return r;
}

/*
 * Clamps a slot to n - 1 in a 64-bit register the verifier has seen
 * compared.  Written in C (`if (slot >= N) slot = N - 1`), clang compares a
 * zero-extended copy of the 32-bit slot and indexes with another, and 6.1's
 * verifier, which does not carry the bound from one copy to the other,
 * rejects the access ("R2 unbounded memory access").  Here the compare and
 * the index are one register.
 */
#define mms_slot_clamp(slot, n)						\
	asm volatile("if %[s] < %[nr] goto +1\n\t"				\
		     "%[s] = %[last]"						\
		     : [s] "+r"(slot)						\
		     : [nr] "i"(n), [last] "i"((n) - 1))

MMS_HIST_INLINE __u64 mms_hist_slot(__u64 v)
{
	__u64 slot = mms_log2(v);

	mms_slot_clamp(slot, MMS_HIST_SLOTS);
	return slot;
}
#else
MMS_HIST_INLINE unsigned int mms_hist_slot(uint64_t v)
{
	unsigned int slot;

	if (v < 2)
		return 0;
	slot = 63 - (unsigned int)__builtin_clzll(v);
	return slot < MMS_HIST_SLOTS ? slot : MMS_HIST_SLOTS - 1;
}
#endif

/* Adds n values of the same size at once (n == 0 adds nothing). */
MMS_HIST_INLINE void mms_stat_add_n(struct mms_stat *s, MMS_HIST_U64 v, MMS_HIST_U64 n)
{
	if (!n)
		return;
	if (!s->count || v < s->min)
		s->min = v;
	if (v > s->max)
		s->max = v;
	s->count += n;
	s->total += v * n;
	s->hist[mms_hist_slot(v)] += (MMS_HIST_U32)n;
}

/* Adds one value (n == 1 folds away: no multiply, no test). */
MMS_HIST_INLINE void mms_stat_add(struct mms_stat *s, MMS_HIST_U64 v)
{
	mms_stat_add_n(s, v, 1);
}

/* Adds what src counted to dst. */
MMS_HIST_INLINE void mms_stat_merge(struct mms_stat *dst, const struct mms_stat *src)
{
	if (!src->count)
		return;
	if (!dst->count || src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
	dst->count += src->count;
	dst->total += src->total;
	for (unsigned int i = 0; i < MMS_HIST_SLOTS; i++)
		dst->hist[i] += src->hist[i];
}

#endif
