/* SPDX-License-Identifier: MIT */
/*
 * monitor_daemon.h — the `gpuio monitor` daemon: what cmd/cmd_monitor.c
 * parses from argv, and the run.
 */
#ifndef GPUIO_MONITOR_DAEMON_H
#define GPUIO_MONITOR_DAEMON_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "monitor/monitor_trigger.h"

struct monitor_opts {
	const char *listen;
	const char *run_dir;
	const char *dump_dir;
	const char *dump_format;
	const char *log_file;
	__u64 window_ns;
	size_t window_bytes;
	size_t ringbuf;
	unsigned drain_prio;      /* --drain-priority: the recorder drains at SCHED_FIFO N (0: off) */
	unsigned dump_keep;
	__u64 dump_max_bytes;
	unsigned top_procs, top_cgroups;
	unsigned max_cgroups, max_procs;
	bool cuda_uprobes;        /* --cuda-uprobes: count CUDA calls (opt-in) */
	const char *cgroups;      /* --cgroups: NULL/"v2", or a v1 controller ("memory") */
	bool no_thread_time;      /* --no-thread-time: no sched_switch/sched_waking programs */
	bool no_latency;          /* --no-latency: no VFS latency histograms (no clock reads) */
	bool pseudo_fs;           /* --pseudo-fs: keep proc, sysfs... in the VFS series */
	struct monitor_triggers trig;
	const char *node_name;    /* --node-name: the host name dumps carry */
	/* Alertmanager's webhook (alert_webhook.h), off without alert_listen */
	const char *alert_listen;
	const char *alert_token_file;
	const char *alert_tls_cert, *alert_tls_key;
	size_t alert_max_body;
	unsigned alert_rate;
	__u64 alert_span_ns;
	__u64 alert_trace_ns;     /* then trace the job's process this long (0: no) */
};


/* Run until SIGTERM/SIGINT (GPUIO_EXIT_OK) or a failure (said; GPUIO_EXIT_ERROR). */
int monitor_daemon__run(struct monitor_opts *o, int argc, char **argv);
/* The last dump request's sequence number and outcome ("error: ...", or the file). */
unsigned monitor_daemon__read_status(const char *run_dir, char *what, size_t len);

#endif /* GPUIO_MONITOR_DAEMON_H */
