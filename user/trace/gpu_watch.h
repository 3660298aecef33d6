/* SPDX-License-Identifier: MIT */
/*
 * gpu_watch.h — the GPU side of `gpuio trace`'s main loop: every tick, look
 * at the traced processes for CUDA libraries they loaded since the last
 * look (attach the CUDA API uprobes to new library files), and tell a hook
 * once per process that has the driver (libcuda.so*) mapped — the place for
 * per-process GPU work such as injecting the CUPTI collector.
 */
#ifndef GPUIO_GPU_WATCH_H
#define GPUIO_GPU_WATCH_H
#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>

struct cuda_probes;
struct gpu_watch;

/* Called once per process first seen with libcuda mapped. */
typedef void (*gpu_watch_fn)(void *ctx, pid_t pid);

struct gpu_watch_opts {
	bool trace_all;            /* -a: look at every process, not the traced set */
	int traced_fd;             /* the BPF side's traced set (a map fd), or -1: no BPF,
				    * the roots given by gpu_watch__add_root and their
				    * descendants, as /proc shows them */
	__u64 period_ns;           /* between scans (0: 1 s) */
	gpu_watch_fn on_new_cuda_process;
	gpu_watch_fn on_new_process;  /* without BPF: each process first seen under the roots */
	void *ctx;
};

/* probes may be NULL (uprobes off): the hook still runs. */
int gpu_watch__new(struct cuda_probes *probes, const struct gpu_watch_opts *opts,
		   struct gpu_watch **out);
/* Without BPF (traced_fd -1): watch tgid and its descendants. 0 or -ENOMEM/-ENOSPC. */
int gpu_watch__add_root(struct gpu_watch *gw, pid_t tgid);
/* Without BPF: whether every root has exited (false while none was added). */
bool gpu_watch__roots_gone(struct gpu_watch *gw);
/* Scan now if a period has passed since the last scan (now: CLOCK_MONOTONIC ns). */
void gpu_watch__tick(struct gpu_watch *gw, __u64 now);
/* Scan the traced processes now. */
void gpu_watch__scan(struct gpu_watch *gw);
void gpu_watch__free(struct gpu_watch *gw);

#endif
