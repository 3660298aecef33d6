/* SPDX-License-Identifier: MIT */
/*
 * ringbuf_drain.h — drains the BPF ring buffer into the capture, adding what
 * only userspace can know (paths of files opened before the trace, thread
 * and disk names) and periodic snapshots of the drop counters.
 */
#ifndef GPUIO_RINGBUF_DRAIN_H
#define GPUIO_RINGBUF_DRAIN_H
#include <stdbool.h>
#include <linux/types.h>
#include <sys/types.h>
#include "capture/capture.h"
#include "trace/loader.h"

struct ringbuf_drain;

struct ringbuf_drain_totals {
	__u64 records;
	__u64 vfs, block;
	__u64 cuda;             /* CUDA API calls (uprobes) */
	__u64 sched;            /* context switches and wake-ups */
	__u64 batches, batched; /* VFS records that came in ring batches, and the batches */
	__u64 dropped;          /* events lost: the drop counters' sum */
	struct gpuio_stats_event stats; /* every counter, as a stats record holds them */
};

int ringbuf_drain__new(struct gpuio_loader *l, struct gpuio_cap_writer *w,
			 struct ringbuf_drain **out);
/* Wait up to timeout_ms for data and store it. Returns 0 or -errno. */
int ringbuf_drain__poll(struct ringbuf_drain *c, int timeout_ms);
/* Store everything still in the ring buffer. */
int ringbuf_drain__drain(struct ringbuf_drain *c);
/* Append a STATS record with the current counters. */
int ringbuf_drain__write_stats(struct ringbuf_drain *c, bool final);
void ringbuf_drain__totals(struct ringbuf_drain *c, struct ringbuf_drain_totals *t);
/* A traced process (an attach's target): find its interpreter, when stacks are on. */
void ringbuf_drain__python(struct ringbuf_drain *c, pid_t pid);
/* The set of (dev, ino) already named in the capture (for attach-time scans). */
struct keyset *ringbuf_drain__named(struct ringbuf_drain *c);
/* True when no traced process is left (the BPF side removes the dead). */
bool ringbuf_drain__targets_gone(struct ringbuf_drain *c);
void ringbuf_drain__free(struct ringbuf_drain *c);

#endif
