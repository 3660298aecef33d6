/* SPDX-License-Identifier: MIT */
/*
 * session.h — one `gpuio trace` from start to end: load and attach the BPF
 * programs, launch or attach the targets, drain the ring buffer into the
 * capture, bring in the GPU side the command gives it (trace_gpu_ops), end
 * cleanly on Ctrl-C / SIGTERM / -d / the command's exit / the targets' exit
 * and say what was lost. The export, the live stream and the summary are
 * the command's (cmd/cmd_trace.c).
 */
#ifndef GPUIO_TRACE_SESSION_H
#define GPUIO_TRACE_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>
#include <sys/types.h>
#include <linux/types.h>
#include "bpf/gpuio_abi.h"
#include "capture/capture.h"

/* What `gpuio trace` was asked to trace (cmd/cmd_trace.c fills it from argv). */
struct trace_opts {
	pid_t pids[64];
	int npids;
	bool all;
	bool all_fds;
	bool no_sockets;         /* --no-sockets: socket I/O only with --all-fds */
	const char *capture;     /* the capture to write */
	const char *vfs_mode;
	bool no_cuda_uprobes;
	bool no_sched;          /* --no-sched */
	bool no_faults;         /* --no-faults */
	bool no_batch;          /* --no-batch */
	enum gpuio_stacks stacks; /* where Python stacks are taken */
	unsigned int sample_hz; /* --sample-hz: on-CPU samples a second, 0 none */
	bool no_native;         /* --no-native-frames */
	bool no_bpf;             /* --no-bpf, or BPF refused here: the GPU side alone */
	const char *no_bpf_why;  /* with no_bpf: why, for the user and the capture */
	__u64 duration_ns;
	size_t ringbuf;
	unsigned drain_prio;     /* --drain-priority: SCHED_FIFO while draining, 0: off */
	char **cmd;
	const char *start_at_str; /* --start-at: load, then attach at start_at (start_at.c) */
	struct timespec start_at;
	/* gpuio's own command line, for the capture header */
	int argc;
	char **argv;
};

/*
 * The GPU collector's side of a trace (gpu/cupti_launch.c), given by the
 * command: the session reaches it only through these. Every member but ctx
 * may be NULL.
 */
typedef void (*trace_gpu_state_fn)(void *fn_ctx, pid_t pid, const struct gpuio_gpu_info *info);
struct trace_gpu_ops {
	void *ctx;
	/* the launched command's environment (before its exec) */
	void (*before_launch)(void *ctx);
	/* a traced process has the CUDA driver mapped */
	void (*on_cuda_process)(void *ctx, pid_t pid);
	/* report each collector's state to fn from now on */
	void (*on_state)(void *ctx, trace_gpu_state_fn fn, void *fn_ctx);
	/* new GPU records into the capture (every second; at the end) */
	long (*poll)(void *ctx, struct gpuio_cap_writer *w);
	int (*finish)(void *ctx, struct gpuio_cap_writer *w);
};

/* What the command adds to a trace: the GPU side, and a tick (the live stream). */
struct trace_hooks {
	const struct trace_gpu_ops *gpu;        /* NULL: no CUPTI collector */
	void *ctx;
	/* the capture exists (its header is written): 0, or -errno to give up */
	int (*started)(void *ctx);
	/* every loop turn, the new records flushed to the capture; non-zero:
	 * never called again (the trace goes on) */
	int (*tick)(void *ctx, __u64 now_ns);
};

/* How a trace ended and what it recorded (for the command's summary). */
struct trace_result {
	const char *why_end;    /* "command exited", "interrupted", ... */
	double seconds;
	bool no_bpf;            /* no kernel side: the counts below are not measured */
	__u64 vfs, block, cuda, sched, dropped;
	int exit_code;          /* a launched command's: 0..255, or 128 + its signal; -1 none */
};

/*
 * Trace as o says until the end comes (Ctrl-C, SIGTERM, -d, the command's
 * exit, every target's exit), close the capture, say what was lost. Returns
 * 0, 127 (the command could not run), or GPUIO_EXIT_ERROR (said by one
 * pr_err line); r is filled in every case that wrote a capture.
 */
int trace_session__run(const struct trace_opts *o, const struct trace_hooks *h,
		       struct trace_result *r);

#endif /* GPUIO_TRACE_SESSION_H */
