// SPDX-License-Identifier: MIT
/* doctor_perm.c — who may do what: root, capabilities, sysctls, memlock (see doctor.h). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include "doctor/doctor.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

static int has_cap(const struct __user_cap_data_struct data[2], int cap)
{
	return !!(data[cap / 32].effective & (1u << (cap % 32)));
}

static int sysctl_int(const char *path, int dflt)
{
	FILE *f = fopen(path, "r");
	int v = dflt;

	if (f && fscanf(f, "%d", &v) != 1)
		v = dflt;
	if (f)
		fclose(f);
	return v;
}

void doctor__permissions(struct doctor *d)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2];
	struct doctor_finding *f;
	struct rlimit rl;
	int v;

	f = doctor__add(d, "permissions", "user", d->root ? DOCTOR_OK : DOCTOR_NO, "uid %d", (int)geteuid());
	if (!d->root)
		doctor__detail(f, "gpuio trace and monitor load BPF programs: run them as root (sudo)");
	memset(data, 0, sizeof(data));
	if (syscall(SYS_capget, &hdr, data) == 0) {
		int bpf = has_cap(data, CAP_BPF) || has_cap(data, CAP_SYS_ADMIN);
		int perf = has_cap(data, CAP_PERFMON) || has_cap(data, CAP_SYS_ADMIN);
		int ptrace = has_cap(data, CAP_SYS_PTRACE);

		f = doctor__add(d, "permissions", "capabilities", bpf && perf && ptrace ? DOCTOR_OK :
				bpf && perf ? DOCTOR_WARN : DOCTOR_NO, "CAP_BPF %s, CAP_PERFMON %s, CAP_SYS_PTRACE %s",
				bpf ? "yes" : "no", perf ? "yes" : "no", ptrace ? "yes" : "no");
		if (bpf && perf && !ptrace)
			doctor__detail(f, "without CAP_SYS_PTRACE the CUPTI collector cannot be injected "
				       "into running processes (-p)");
	}
	v = sysctl_int("/proc/sys/kernel/perf_event_paranoid", -99);
	doctor__add(d, "permissions", "perf_event_paranoid", DOCTOR_INFO, "%d", v);
	v = sysctl_int("/proc/sys/kernel/unprivileged_bpf_disabled", -1);
	doctor__add(d, "permissions", "unprivileged_bpf_disabled", DOCTOR_INFO, "%d", v);
	v = sysctl_int("/proc/sys/kernel/yama/ptrace_scope", -1);
	f = doctor__add(d, "permissions", "ptrace_scope", v >= 3 ? DOCTOR_NO : DOCTOR_OK, "%s",
			v < 0 ? "no Yama" : v == 0 ? "0" : v == 1 ? "1" : v == 2 ? "2" : "3");
	if (v >= 3)
		doctor__detail(f, "ptrace is disabled for everyone: the CUPTI collector cannot be "
			       "injected into running processes (launch mode still works)");
	if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0) {
		if (rl.rlim_cur == RLIM_INFINITY)
			doctor__add(d, "permissions", "memlock", DOCTOR_OK, "unlimited");
		else
			doctor__add(d, "permissions", "memlock", DOCTOR_INFO, "%llu KiB",
				    (unsigned long long)rl.rlim_cur / 1024);
	}
}
