// SPDX-License-Identifier: GPL-2.0
/*
 * Privileges, in one place: whether this process may run a live session
 * (the commands ask before they open anything), what it gives up once the
 * sources are attached (the session drops it before the first interval), and
 * what a launched command must not inherit.  docs/SECURITY.md says why.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>

#include "mmscope/session.h"

/* The effective and permitted sets as 64-bit masks; 0 or -errno. */
static int read_caps(struct __user_cap_header_struct *hdr, struct __user_cap_data_struct *data)
{
	hdr->version = _LINUX_CAPABILITY_VERSION_3;
	hdr->pid = 0;
	memset(data, 0, 2 * sizeof(*data));
	return syscall(SYS_capget, hdr, data) ? -errno : 0;
}

static uint64_t caps64(uint32_t lo, uint32_t hi)
{
	return lo | (uint64_t)hi << 32;
}

int mms_privileges_check(const char *what, char *errbuf, size_t errlen)
{
	struct __user_cap_header_struct hdr;
	struct __user_cap_data_struct data[2];
	uint64_t eff;
	bool bpf, perfmon, admin;

	if (errlen)
		errbuf[0] = 0;
	if (read_caps(&hdr, data))
		return 0;	/* cannot tell: let the kernel say no */
	eff = caps64(data[0].effective, data[1].effective);
	admin = eff & (1ULL << CAP_SYS_ADMIN);
	bpf = admin || (eff & (1ULL << CAP_BPF));
	perfmon = admin || (eff & (1ULL << CAP_PERFMON));
	if (bpf && perfmon)
		return 0;
	snprintf(errbuf, errlen,
		 "%s needs %s%s%s (or root): BPF programs and kernel tracepoints are "
		 "privileged.\n"
		 "  Run it as root (sudo mmscope ...), or work on a recording without privileges:\n"
		 "  mmscope replay FILE, mmscope report FILE (a demo: examples/demo.mmscope).",
		 what, bpf ? "" : "CAP_BPF", !bpf && !perfmon ? " and " : "",
		 perfmon ? "" : "CAP_PERFMON");
	return -EPERM;
}

/*
 * What a live session still needs once its sources are attached: CAP_CHOWN
 * and CAP_DAC_OVERRIDE for files made later (a recording started in the TUI,
 * `report -o`, in the invoking user's directory and chowned to SUDO_UID), and
 * CAP_KILL to stop a launched command that changed its uid.  Nothing else:
 * BPF maps are read and written through descriptors we hold (since 6.0 only
 * BPF_PROG_LOAD and BPF_MAP_CREATE check CAP_BPF), perf rings are mapped,
 * kallsyms is read, tracefs is not touched again.  docs/SECURITY.md.
 */
#define KEEP_CAPS ((1ULL << CAP_CHOWN) | (1ULL << CAP_DAC_OVERRIDE) | (1ULL << CAP_KILL))

/*
 * Drops every other capability, from the bounding set too, and sets
 * no_new_privs, so a bug in what parses kernel data cannot load programs or
 * modules, trace or ptrace others, mount, or regain anything through exec.
 * The uid stays: the files above and the launched command need it.  A
 * process without these privileges has nothing to drop; any other failure
 * stops the session before the first interval (fails closed): running on
 * with CAP_DAC_OVERRIDE and friends after a failed drop is what the drop is
 * there to prevent.
 */
int mms_privileges_drop(char *errbuf, size_t errlen)
{
	struct __user_cap_header_struct hdr;
	struct __user_cap_data_struct data[2];
	const char *what;
	int err;

	if (read_caps(&hdr, data)) {
		what = "capget";
		goto err;
	}
	if (!(caps64(data[0].permitted, data[1].permitted) & ~KEEP_CAPS))
		return 0;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
		what = "prctl(PR_SET_NO_NEW_PRIVS)";
		goto err;
	}
	/*
	 * Emptying the bounding set needs CAP_SETPCAP.  Root without it (a
	 * reduced bounding set) fails closed below.  A non-root process started
	 * with ambient capabilities never has it, and there the bounding set
	 * only limits what an exec could give, which no_new_privs above already
	 * forbids: it is left as it is.
	 */
	bool root = !getuid() || !geteuid();
	bool setpcap = data[0].effective & (1U << CAP_SETPCAP);

	for (int cap = 0; (root || setpcap) && cap < 64; cap++) {
		int in = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);

		if (in < 0 && errno == EINVAL)
			break;	/* past the last capability this kernel knows */
		/* Only what is there: dropping needs CAP_SETPCAP even for an absent one. */
		if (in > 0 && !(KEEP_CAPS & (1ULL << cap)) && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)) {
			what = "prctl(PR_CAPBSET_DROP)";
			goto err;
		}
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)) {
		what = "prctl(PR_CAP_AMBIENT_CLEAR_ALL)";
		goto err;
	}
	for (int i = 0; i < 2; i++) {
		uint32_t keep = (uint32_t)(KEEP_CAPS >> (32 * i));

		data[i].effective &= keep;
		data[i].permitted &= keep;
		data[i].inheritable = 0;
	}
	if (syscall(SYS_capset, &hdr, data)) {
		what = "capset";
		goto err;
	}
	return 0;
err:
	err = -errno;
	snprintf(errbuf, errlen, "cannot give up privileges after attaching (%s: %s), so "
		 "mmscope stops before collecting anything; it needs CAP_SETPCAP to drop "
		 "capabilities from its bounding set: run it as plain root, not under a reduced "
		 "bounding set or a seccomp filter that refuses these calls", what, strerror(-err));
	return err;
}

void mms_privileges_before_exec(void)
{
	/*
	 * Started with ambient capabilities (not as root), mmscope must not
	 * hand CAP_BPF and CAP_PERFMON on to the workload: it gets what its
	 * uid gives it.
	 */
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
}
