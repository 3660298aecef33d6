/* SPDX-License-Identifier: MIT */
/*
 * monitor_nvml.h — GPU utilisation through NVML, loaded with dlopen
 * (libnvidia-ml.so.1 comes with the driver; gpuio does not link it). With
 * no driver the monitor says so once and exports no GPU series.
 *
 * CUDA API call counts per process (uprobes, bpf/trace/cuda.bpf.h) are another
 * engineer's work in progress: monitor_nvml__cuda_hook() is where their
 * per-process counts will be rendered; for now it exports the state only.
 */
#ifndef GPUIO_MONITOR_NVML_H
#define GPUIO_MONITOR_NVML_H
#include <stdbool.h>

struct mon_buf;
struct monitor_nvml;

/* Never fails: an absent NVML is a state, reported once. */
struct monitor_nvml *monitor_nvml__open(void);
bool monitor_nvml__available(const struct monitor_nvml *n);
/* Sample every GPU; *busy = some GPU utilisation > 0. Returns 0 or -ENODEV. */
int monitor_nvml__sample(struct monitor_nvml *n, bool *busy);
void monitor_nvml__metrics(struct mon_buf *b, void *ctx);
void monitor_nvml__close(struct monitor_nvml *n);

#endif
