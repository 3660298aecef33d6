/* SPDX-License-Identifier: MIT */
/*
 * thread_time.h — the threads still alive at the end of the trace: their
 * time by state, summed in the kernel (bpf/trace/thread_time.bpf.h), into
 * the capture as THREAD_TIME records, each open interval closed at the end.
 * Threads that exited wrote theirs through the ring at their last switch.
 */
#ifndef GPUIO_THREAD_TIME_H
#define GPUIO_THREAD_TIME_H
#include <stddef.h>
#include <linux/types.h>

/* One record per entry through out, closed at end; the records written, or -errno. */
int thread_time__write(int map_fd, __u64 end, void (*out)(void *ctx, const void *rec, size_t len),
		       void *ctx);

#endif
