/* SPDX-License-Identifier: MIT */
/*
 * lost_ledger.h — the calls the ring buffer lost, summed in the kernel by
 * (process, file, call) (bpf/trace/ledger.bpf.h), into the capture as
 * LOST_CALLS records once, at the end of the trace (before the final stats
 * snapshot): the report adds them to its totals per file and per process.
 */
#ifndef GPUIO_LOST_LEDGER_H
#define GPUIO_LOST_LEDGER_H
#include <linux/types.h>

/* One record per ledger entry through out; the records written, or -errno. */
int lost_ledger__write(int map_fd, __u64 ts, void (*out)(void *ctx, const void *rec, size_t len),
		       void *ctx);

#endif
