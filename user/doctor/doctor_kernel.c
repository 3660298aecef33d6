// SPDX-License-Identifier: MIT
/* doctor_kernel.c — kernel release, BTF, tracefs, BPF features (see doctor.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <bpf/libbpf.h>
#include "doctor/doctor.h"

struct doctor_finding *doctor__add(struct doctor *d, const char *section, const char *key,
				   enum doctor_status st, const char *value, ...)
{
	static struct doctor_finding spare;
	struct doctor_finding *f = d->n < DOCTOR_MAX ? &d->f[d->n++] : &spare;
	va_list ap;

	memset(f, 0, sizeof(*f));
	f->section = section;
	f->key = key;
	f->status = st;
	va_start(ap, value);
	vsnprintf(f->value, sizeof(f->value), value, ap);
	va_end(ap);
	return f;
}

void doctor__detail(struct doctor_finding *f, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(f->detail, sizeof(f->detail), fmt, ap);
	va_end(ap);
}

const char *doctor__status_name(enum doctor_status st)
{
	switch (st) {
	case DOCTOR_OK: return "ok";
	case DOCTOR_WARN: return "warn";
	case DOCTOR_NO: return "no";
	default: return "info";
	}
}

/* The mount point of a filesystem type in /proc/self/mounts, or "" */
static void mount_of(const char *type, char *out, size_t len)
{
	char dev[256], dir[512], fstype[64];
	FILE *f = fopen("/proc/self/mounts", "r");

	out[0] = 0;
	while (f && fscanf(f, "%255s %511s %63s %*[^\n]", dev, dir, fstype) == 3)
		if (!strcmp(fstype, type) && !out[0])
			snprintf(out, len, "%s", dir);
	if (f)
		fclose(f);
}

/* First line of a /proc/sys file, or "" when unreadable. */
static void sysctl(const char *path, char *out, size_t len)
{
	FILE *f = fopen(path, "r");

	out[0] = 0;
	if (f && fgets(out, (int)len, f))
		out[strcspn(out, "\n")] = 0;
	if (f)
		fclose(f);
}

void doctor__kernel(struct doctor *d)
{
	struct doctor_finding *f;
	struct utsname u;
	struct stat st;
	char buf[512];

	if (uname(&u) == 0)
		doctor__add(d, "kernel", "release", DOCTOR_INFO, "%s", u.release);
	if (stat("/sys/kernel/btf/vmlinux", &st) == 0) {
		doctor__add(d, "kernel", "btf", DOCTOR_OK, "/sys/kernel/btf/vmlinux (%lld bytes)",
			    (long long)st.st_size);
	} else {
		f = doctor__add(d, "kernel", "btf", DOCTOR_NO, "absent");
		doctor__detail(f, "gpuio needs a kernel built with CONFIG_DEBUG_INFO_BTF=y");
	}
	mount_of("tracefs", buf, sizeof(buf));
	f = doctor__add(d, "kernel", "tracefs", buf[0] ? DOCTOR_OK : DOCTOR_WARN, "%s",
			buf[0] ? buf : "not mounted");
	if (!buf[0])
		doctor__detail(f, "classic uprobes and the tracepoint fallback want it: "
			       "mount -t tracefs nodev /sys/kernel/tracing");
	mount_of("debugfs", buf, sizeof(buf));
	doctor__add(d, "kernel", "debugfs", DOCTOR_INFO, "%s", buf[0] ? buf : "not mounted");
	if (!d->root) {
		doctor__add(d, "kernel", "ringbuf", DOCTOR_INFO, "not probed (needs root)");
	} else if (libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL) == 1) {
		doctor__add(d, "kernel", "ringbuf", DOCTOR_OK, "BPF ring buffer supported");
	} else {
		f = doctor__add(d, "kernel", "ringbuf", DOCTOR_NO, "no BPF ring buffer");
		doctor__detail(f, "gpuio needs BPF_MAP_TYPE_RINGBUF (Linux 5.8+)");
	}
	sysctl("/proc/sys/net/core/bpf_jit_enable", buf, sizeof(buf));
	f = doctor__add(d, "kernel", "bpf_jit", !strcmp(buf, "0") ? DOCTOR_WARN : DOCTOR_OK, "%s",
			buf[0] ? buf : "unknown");
	if (!strcmp(buf, "0"))
		doctor__detail(f, "the BPF JIT is off: every event costs several times more");
	sysctl("/proc/sys/kernel/bpf_stats_enabled", buf, sizeof(buf));
	doctor__add(d, "kernel", "bpf_stats", DOCTOR_INFO, "%s", buf[0] ? buf : "unknown");
}
