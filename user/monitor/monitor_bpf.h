/* SPDX-License-Identifier: MIT */
/*
 * monitor_bpf.h — load and attach bpf/monitor/monitor.bpf.c (the always-on
 * aggregation), tp_btf first, then raw_tp; map sizes from the options.
 */
#ifndef GPUIO_MONITOR_BPF_H
#define GPUIO_MONITOR_BPF_H
#include <stdbool.h>
#include <linux/types.h>

struct monitor_bpf;      /* the skeleton (monitor.skel.h) */
struct bpf_link;

struct monitor_loader_opts {
	__u32 max_cgroups;       /* (cgroup, device) entries */
	__u32 max_procs;         /* process entries */
	__u32 max_devs;
	__u32 max_rqs;           /* block requests in flight */
	int cg_ssid;             /* series by this v1 controller's cgroups; -1: cgroup v2 */
	bool no_thread_time;     /* leave sched_switch/sched_waking out (no thread-time series) */
	bool no_latency;         /* no clock reads per call: no VFS latency histograms */
};

struct monitor_loader {
	struct monitor_bpf *skel;
	struct bpf_link *links[24];
	struct bpf_link *iter;   /* mon_iter_task (tp_btf), run by monitor_loader__flush */
	int nlinks;
	char mode[16];           /* "tp_btf" or "raw_tp" */
	char detail[256];        /* why tp_btf was refused, if it was */
	int fd_cg, fd_proc, fd_dev, fd_exited, fd_stats;
	int fd_sched;            /* mon_sched_proc (thread time); -1: --no-thread-time */
	bool no_latency;         /* --no-latency: the VFS latency histograms are not kept */
	bool irq_known;          /* interrupts' wake-ups told apart (lib/percpu_btf.h) */
	__u32 max_cgroups, max_procs, max_devs, max_rqs, max_exited;
};

/* Returns 0 or -errno with the reason printed. */
int monitor_loader__open(const struct monitor_loader_opts *o, struct monitor_loader **out);
/* Fold the threads' pending counts into the maps: before reading them. */
void monitor_loader__flush(struct monitor_loader *m);
/* Detach every program and free the maps. */
void monitor_loader__destroy(struct monitor_loader *m);

#endif
