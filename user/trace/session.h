/* SPDX-License-Identifier: MIT */
/*
 * session.h — one `gpuio trace` from start to end: load and attach the BPF
 * programs, launch or attach the targets, drain the ring buffer into the
 * capture (and the live stream), bring in the GPU side, end cleanly on
 * Ctrl-C / SIGTERM / -d / the command's exit / the targets' exit, then
 * export and say what was traced and what was lost.
 */
#ifndef GPUIO_TRACE_SESSION_H
#define GPUIO_TRACE_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>
#include <sys/types.h>
#include <linux/types.h>
#include "export/stream.h"

/* What `gpuio trace` was asked (cmd/cmd_trace.c fills it from argv). */
struct trace_opts {
	pid_t pids[64];
	int npids;
	bool all;
	bool all_fds;
	bool no_export;
	const char *output;      /* set: cmd_trace names one when -o is absent */
	const char *capture;     /* set: beside the output when --capture is absent */
	const char *vfs_mode;
	bool no_cuda_uprobes;
	bool no_sched;          /* --no-sched */
	bool no_gpu_collector;   /* --no-gpu: no CUPTI collector at all */
	bool no_gpu_inject;
	bool no_bpf;             /* --no-bpf, or BPF refused here: the GPU side alone */
	const char *no_bpf_why;  /* with no_bpf: why, for the user and the capture */
	__u64 duration_ns;
	const char *duration_str;
	size_t ringbuf;
	char **cmd;
	/* long runs: --stream, --rotate, --keep, --start-at (stream.c, start_at.c) */
	bool stream;
	struct gpuio_stream_opts so;
	const char *start_at_str;
	struct timespec start_at;
	/* gpuio's own command line, for the capture header */
	int argc;
	char **argv;
};

/*
 * Trace as o says until the end comes; export. Returns the command's exit
 * status for a launch that ended normally, else GPUIO_EXIT_OK or
 * GPUIO_EXIT_ERROR (every failure said by one pr_err line).
 */
int trace_session__run(const struct trace_opts *o);

#endif /* GPUIO_TRACE_SESSION_H */
