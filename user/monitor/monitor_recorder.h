/* SPDX-License-Identifier: MIT */
/*
 * monitor_recorder.h — `gpuio monitor`'s flight recorder: the tracer's full
 * event stream (bpf/trace/gpuio.bpf.c, whole node) kept in a bounded in-memory
 * ring covering the last --window of time, dumped on demand (SIGUSR1,
 * `gpuio monitor dump`) or on a trigger as a trace file through the
 * existing exporters, into a dump directory bounded in count and bytes.
 */
#ifndef GPUIO_MONITOR_RECORDER_H
#define GPUIO_MONITOR_RECORDER_H
#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "bpf/gpuio_abi.h"

struct monitor_recorder;
struct mon_buf;

struct monitor_recorder_opts {
	__u64 window_ns;         /* keep events whose start is this recent */
	size_t max_bytes;        /* memory for the ring (records beyond are evicted early, counted) */
	size_t ringbuf_bytes;    /* BPF ring buffer (power of two) */
	const char *dump_dir;
	const char *format;      /* "pftrace", "pftrace.gz", "json" or "json.gz" */
	unsigned keep;           /* newest dumps kept */
	__u64 dir_max_bytes;     /* bytes of dumps kept */
	const char *cmdline;     /* for the capture header */
	const char *node_name;   /* the header's host name (NULL: gethostname) */
};

/* One dump: why, and which part of the window. */
struct monitor_dump_req {
	const char *reason;      /* in the file name: "manual", "trigger-…", "alert-NAME-JOB" */
	const char *about;       /* the header's target text (NULL: the window) */
	__u64 from_ns, until_ns; /* CLOCK_MONOTONIC; 0: the window's start / now */
	bool keep_capture;       /* also keep the capture (NAME.gpuio) for `gpuio report` */
};

/* Every VFS and block record, as it arrives (triggers watch these). */
typedef void (*monitor_recorder_event_fn)(void *ctx, const struct gpuio_hdr *h);

int monitor_recorder__open(const struct monitor_recorder_opts *o, struct monitor_recorder **out);
void monitor_recorder__on_event(struct monitor_recorder *r, monitor_recorder_event_fn fn, void *ctx);
/* Drain the BPF ring buffer (waiting up to timeout_ms). Returns 0 or -errno. */
int monitor_recorder__poll(struct monitor_recorder *r, int timeout_ms);
/* Write the window (or q's part of it) as a trace; path of the file in out.
 * Returns 0 or -errno. */
int monitor_recorder__dump(struct monitor_recorder *r, const struct monitor_dump_req *q,
			   char *out, size_t outlen);
/* The oldest event the window holds (CLOCK_MONOTONIC; 0: none). */
__u64 monitor_recorder__oldest(const struct monitor_recorder *r);
/* Prometheus families about the recorder. */
void monitor_recorder__metrics(struct mon_buf *b, void *r);
const char *monitor_recorder__modes(const struct monitor_recorder *r);
void monitor_recorder__free(struct monitor_recorder *r);

#endif
