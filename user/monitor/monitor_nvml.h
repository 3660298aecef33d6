/* SPDX-License-Identifier: MIT */
/*
 * monitor_nvml.h — GPU utilisation through NVML, loaded with dlopen
 * (libnvidia-ml.so.1 comes with the driver; gpuio does not link it): per
 * GPU (utilisation, memory bandwidth use) and per process (memory held, SM
 * utilisation), sampled each tick. This is the monitor's default GPU view:
 * it costs the jobs nothing (CUDA call counting by uprobes is opt-in,
 * monitor_cuda.h). With no driver the monitor says so once and exports no
 * GPU series.
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
