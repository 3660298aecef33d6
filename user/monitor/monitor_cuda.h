/* SPDX-License-Identifier: MIT */
/*
 * monitor_cuda.h — `gpuio monitor`'s CUDA API call counts: loads
 * bpf/monitor/monitor_cuda.bpf.c (uprobe.multi, else classic uprobes), finds the
 * CUDA libraries mapped on the node by scanning /proc/PID/maps (processes
 * new since the previous scan, and known ones again with a growing
 * interval), and attaches the counting program once per library file, to
 * the functions user/trace/cuda_probes.c's tables know. Nothing is attached while
 * no process maps a CUDA library.
 */
#ifndef GPUIO_MONITOR_CUDA_H
#define GPUIO_MONITOR_CUDA_H
#include <linux/types.h>

struct monitor_cuda;
struct mon_buf;

/* Load (no attach yet). stats_fd: monitor.bpf.c's mon_stats, shared.
 * Returns 0 or -errno (reason logged). */
/* cg_ssid: the v1 controller cgroups are keyed by (-1: cgroup v2), as monitor_loader_opts */
int monitor_cuda__open(int stats_fd, __u32 max_entries, int cg_ssid, struct monitor_cuda **out);
/* Scan processes due (see above) and attach new library files; cheap when
 * nothing is due. now: CLOCK_MONOTONIC ns. */
void monitor_cuda__scan(struct monitor_cuda *mc, __u64 now);
int monitor_cuda__map_fd(const struct monitor_cuda *mc);
__u32 monitor_cuda__max_entries(const struct monitor_cuda *mc);
/* Extra /metrics families: availability, libraries and functions probed
 * (ctx NULL: unavailable). */
void monitor_cuda__metrics(struct mon_buf *b, void *ctx);
const char *monitor_cuda__mode(const struct monitor_cuda *mc);
void monitor_cuda__free(struct monitor_cuda *mc);

#endif
