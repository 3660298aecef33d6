// SPDX-License-Identifier: MIT
/* monitor_nvml.c — NVML by dlopen. See monitor_nvml.h. */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/log.h"
#include "monitor/monitor_agg.h"
#include "monitor/monitor_nvml.h"

#define MAX_GPUS 16

/* The few NVML entry points used, with NVML's own ABI types. */
typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct { unsigned int gpu, memory; } nvmlUtilization_t;

struct monitor_nvml {
	void *lib;
	char why[160];
	unsigned ngpus;
	nvmlDevice_t dev[MAX_GPUS];
	char name[MAX_GPUS][64];
	unsigned util[MAX_GPUS], mem_util[MAX_GPUS];
	bool sampled;
	nvmlReturn_t (*init)(void);
	nvmlReturn_t (*shutdown)(void);
	nvmlReturn_t (*count)(unsigned int *);
	nvmlReturn_t (*by_index)(unsigned int, nvmlDevice_t *);
	nvmlReturn_t (*get_name)(nvmlDevice_t, char *, unsigned int);
	nvmlReturn_t (*utilization)(nvmlDevice_t, nvmlUtilization_t *);
};

struct monitor_nvml *monitor_nvml__open(void)
{
	struct monitor_nvml *n = calloc(1, sizeof(*n));
	unsigned count = 0;

	if (!n)
		return NULL;
	n->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!n->lib) {
		snprintf(n->why, sizeof(n->why), "%s", dlerror());
		goto absent;
	}
	n->init = dlsym(n->lib, "nvmlInit_v2");
	n->shutdown = dlsym(n->lib, "nvmlShutdown");
	n->count = dlsym(n->lib, "nvmlDeviceGetCount_v2");
	n->by_index = dlsym(n->lib, "nvmlDeviceGetHandleByIndex_v2");
	n->get_name = dlsym(n->lib, "nvmlDeviceGetName");
	n->utilization = dlsym(n->lib, "nvmlDeviceGetUtilizationRates");
	if (!n->init || !n->shutdown || !n->count || !n->by_index || !n->utilization) {
		snprintf(n->why, sizeof(n->why), "libnvidia-ml.so.1 lacks the NVML v2 entry points");
		goto absent_close;
	}
	if (n->init() != 0) {
		snprintf(n->why, sizeof(n->why), "nvmlInit failed (no NVIDIA driver loaded?)");
		goto absent_close;
	}
	if (n->count(&count) != 0 || !count) {
		snprintf(n->why, sizeof(n->why), "NVML sees no GPU");
		n->shutdown();
		goto absent_close;
	}
	for (unsigned i = 0; i < count && n->ngpus < MAX_GPUS; i++) {
		if (n->by_index(i, &n->dev[n->ngpus]) != 0)
			continue;
		if (!n->get_name || n->get_name(n->dev[n->ngpus], n->name[n->ngpus], 64) != 0)
			snprintf(n->name[n->ngpus], 64, "gpu%u", i);
		n->ngpus++;
	}
	pr_info("NVML: %u GPU(s); exporting utilisation", n->ngpus);
	return n;
absent_close:
	dlclose(n->lib);
	n->lib = NULL;
absent:
	pr_info("NVML not available: %s; no GPU utilisation series are exported", n->why);
	return n;
}

bool monitor_nvml__available(const struct monitor_nvml *n)
{
	return n && n->lib;
}

int monitor_nvml__sample(struct monitor_nvml *n, bool *busy)
{
	*busy = false;
	if (!monitor_nvml__available(n))
		return -ENODEV;
	for (unsigned i = 0; i < n->ngpus; i++) {
		nvmlUtilization_t u = { 0 };

		if (n->utilization(n->dev[i], &u) != 0)
			continue;
		n->util[i] = u.gpu;
		n->mem_util[i] = u.memory;
		*busy |= u.gpu > 0;
	}
	n->sampled = true;
	return 0;
}

void monitor_nvml__metrics(struct mon_buf *b, void *ctx)
{
	struct monitor_nvml *n = ctx;

	mon_buf__printf(b, "# HELP gpuio_gpu_nvml_available 1 when NVML answers (GPU utilisation series exist).\n"
			"# TYPE gpuio_gpu_nvml_available gauge\ngpuio_gpu_nvml_available %d\n",
			monitor_nvml__available(n));
	/* gpuio_gpu_cuda_uprobes_available: monitor_cuda__metrics */
	if (!monitor_nvml__available(n) || !n->sampled)
		return;
	mon_buf__printf(b, "# HELP gpuio_gpu_utilization_ratio Fraction of the last sample period a kernel ran (NVML).\n"
			"# TYPE gpuio_gpu_utilization_ratio gauge\n");
	for (unsigned i = 0; i < n->ngpus; i++) {
		mon_buf__printf(b, "gpuio_gpu_utilization_ratio{gpu=\"%u\",name=\"", i);
		mon_buf__label(b, n->name[i]);
		mon_buf__printf(b, "\"} %.2f\n", n->util[i] / 100.0);
	}
	mon_buf__printf(b, "# HELP gpuio_gpu_memory_utilization_ratio Fraction of the period device memory was read or written (NVML).\n"
			"# TYPE gpuio_gpu_memory_utilization_ratio gauge\n");
	for (unsigned i = 0; i < n->ngpus; i++) {
		mon_buf__printf(b, "gpuio_gpu_memory_utilization_ratio{gpu=\"%u\",name=\"", i);
		mon_buf__label(b, n->name[i]);
		mon_buf__printf(b, "\"} %.2f\n", n->mem_util[i] / 100.0);
	}
}

void monitor_nvml__close(struct monitor_nvml *n)
{
	if (!n)
		return;
	if (n->lib) {
		n->shutdown();
		dlclose(n->lib);
	}
	free(n);
}
