/* SPDX-License-Identifier: MIT */
/*
 * collector.h — drains the BPF ring buffer into the capture, adding what
 * only userspace can know (paths of files opened before the trace, thread
 * and disk names) and periodic snapshots of the drop counters.
 */
#ifndef GPUIO_COLLECTOR_H
#define GPUIO_COLLECTOR_H
#include <stdbool.h>
#include <linux/types.h>
#include "capture/capture.h"
#include "trace/loader.h"

struct gpuio_collector;

struct gpuio_collector_totals {
	__u64 records;
	__u64 vfs, block;
	__u64 cuda;             /* CUDA API calls (uprobes) */
	__u64 dropped;          /* ring buffer full + maps full */
	__u64 stats[GPUIO_STAT_MAX];
	__u64 ustats[GPUIO_USTAT_MAX];
};

int gpuio_collector__new(struct gpuio_loader *l, struct gpuio_cap_writer *w,
			 struct gpuio_collector **out);
/* Wait up to timeout_ms for data and store it. Returns 0 or -errno. */
int gpuio_collector__poll(struct gpuio_collector *c, int timeout_ms);
/* Store everything still in the ring buffer. */
int gpuio_collector__drain(struct gpuio_collector *c);
/* Append a STATS record with the current counters. */
int gpuio_collector__write_stats(struct gpuio_collector *c, bool final);
void gpuio_collector__totals(struct gpuio_collector *c, struct gpuio_collector_totals *t);
/* The set of (dev, ino) already named in the capture (for attach-time scans). */
struct keyset *gpuio_collector__named(struct gpuio_collector *c);
/* True when no traced process is left (the BPF side removes the dead). */
bool gpuio_collector__targets_gone(struct gpuio_collector *c);
void gpuio_collector__free(struct gpuio_collector *c);

#endif
