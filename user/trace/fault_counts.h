/* SPDX-License-Identifier: MIT */
/*
 * fault_counts.h — the fault layer's per-(process, file) fault counts (the
 * BPF map fault_counts, bpf/trace/fault.bpf.h) into the capture as
 * FAULT_COUNT records: cumulative, only those that changed since the last
 * time, written with each STATS snapshot.
 */
#ifndef GPUIO_TRACE_FAULT_COUNTS_H
#define GPUIO_TRACE_FAULT_COUNTS_H
#include <stddef.h>
#include <linux/types.h>

struct fault_counts;

/* map_fd: the BPF map (< 0: the fault layer is off, nothing to write). */
struct fault_counts *fault_counts__new(int map_fd);
/*
 * Read the map and hand each count that changed to out (a whole record);
 * ts is the records' time. Returns the records handed out, or -ENOMEM.
 */
int fault_counts__write(struct fault_counts *fc, __u64 ts,
			void (*out)(void *ctx, const void *rec, size_t len), void *ctx);
void fault_counts__free(struct fault_counts *fc);

#endif
