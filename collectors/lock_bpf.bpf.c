// SPDX-License-Identifier: GPL-2.0
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "lock_bpf.h"

__u64 nr_begin;

SEC("tp_btf/contention_begin")
int BPF_PROG(contention_begin, void *lock, unsigned int flags)
{
	__sync_fetch_and_add(&nr_begin, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
