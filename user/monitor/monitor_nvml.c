// SPDX-License-Identifier: MIT
/* monitor_nvml.c — NVML by dlopen. See monitor_nvml.h. */
#include <dlfcn.h>
#include <pthread.h>
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
/* nvmlProcessInfo_t (v2 layout, what nvmlDeviceGetComputeRunningProcesses_v3 fills) */
typedef struct {
	unsigned int pid;
	unsigned long long usedGpuMemory;
	unsigned int gpuInstanceId, computeInstanceId;
} nvmlProcessInfo_t;
typedef struct {
	unsigned int pid;
	unsigned long long timeStamp;
	unsigned int smUtil, memUtil, encUtil, decUtil;
} nvmlProcessUtilizationSample_t;
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_VALUE_NOT_AVAILABLE_ULL (~0ull)

/* Per-process series, per GPU: the largest users of memory first. */
#define MAX_PROCS 32
struct gpu_proc {
	unsigned pid;
	unsigned long long mem;      /* bytes, NVML_VALUE_NOT_AVAILABLE_ULL: unknown */
	int sm;                      /* percent over the last sample period, -1: no sample */
	char comm[16];
};

struct monitor_nvml {
	void *lib;
	char why[160];
	unsigned ngpus;
	nvmlDevice_t dev[MAX_GPUS];
	char name[MAX_GPUS][64];
	unsigned util[MAX_GPUS], mem_util[MAX_GPUS];
	bool sampled;
	pthread_mutex_t lock;        /* sample (main loop) vs render (HTTP thread) */
	struct gpu_proc procs[MAX_GPUS][MAX_PROCS];
	unsigned nprocs[MAX_GPUS];
	unsigned long long procs_dropped;  /* processes beyond MAX_PROCS on a GPU, cumulative */
	unsigned long long last_seen[MAX_GPUS];  /* newest utilization sample taken */
	nvmlReturn_t (*running)(nvmlDevice_t, unsigned int *, nvmlProcessInfo_t *);
	nvmlReturn_t (*proc_util)(nvmlDevice_t, nvmlProcessUtilizationSample_t *, unsigned int *,
				  unsigned long long);
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
	pthread_mutex_init(&n->lock, NULL);
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
	/* per process (optional: older drivers lack _v3) */
	n->running = dlsym(n->lib, "nvmlDeviceGetComputeRunningProcesses_v3");
	n->proc_util = dlsym(n->lib, "nvmlDeviceGetProcessUtilization");
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
	pr_info("NVML: %u GPU(s); exporting utilisation%s", n->ngpus,
		n->running ? ", per-process memory and SM utilisation" : " (no per-process API)");
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

static int by_mem_desc(const void *a, const void *b)
{
	const struct gpu_proc *x = a, *y = b;

	return x->mem < y->mem ? 1 : x->mem > y->mem ? -1 : (x->pid > y->pid) - (x->pid < y->pid);
}

static void proc_comm(unsigned pid, char *out, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	f = fopen(path, "r");
	out[0] = 0;
	if (f && fgets(out, (int)len, f))
		out[strcspn(out, "\n")] = 0;
	if (f)
		fclose(f);
	if (!out[0])
		snprintf(out, len, "?");
}

/* The processes running on GPU i, their memory and (when sampled) SM use. Caller holds lock. */
static void sample_procs(struct monitor_nvml *n, unsigned i)
{
	nvmlProcessInfo_t info[256];
	nvmlProcessUtilizationSample_t util[256];
	unsigned count = 256, nu = 256, k = 0;

	n->nprocs[i] = 0;
	if (!n->running || n->running(n->dev[i], &count, info) != 0)
		return;
	if (n->proc_util && n->proc_util(n->dev[i], util, &nu, n->last_seen[i]) != 0)
		nu = 0;
	for (unsigned p = 0; p < count && p < 256; p++) {
		struct gpu_proc *g;

		if (k == MAX_PROCS) {
			/* keep the largest: replace the smallest when this one is larger */
			qsort(n->procs[i], k, sizeof(n->procs[i][0]), by_mem_desc);
			n->procs_dropped++;
			if (info[p].usedGpuMemory == NVML_VALUE_NOT_AVAILABLE_ULL ||
			    info[p].usedGpuMemory <= n->procs[i][k - 1].mem)
				continue;
			g = &n->procs[i][k - 1];
		} else {
			g = &n->procs[i][k++];
		}
		g->pid = info[p].pid;
		g->mem = info[p].usedGpuMemory;
		g->sm = -1;
		for (unsigned u = 0; u < nu && u < 256; u++)
			if (util[u].pid == g->pid) {
				g->sm = (int)util[u].smUtil;
				if (util[u].timeStamp > n->last_seen[i])
					n->last_seen[i] = util[u].timeStamp;
			}
		proc_comm(g->pid, g->comm, sizeof(g->comm));
	}
	qsort(n->procs[i], k, sizeof(n->procs[i][0]), by_mem_desc);
	n->nprocs[i] = k;
}

int monitor_nvml__sample(struct monitor_nvml *n, bool *busy)
{
	*busy = false;
	if (!monitor_nvml__available(n))
		return -ENODEV;
	pthread_mutex_lock(&n->lock);
	for (unsigned i = 0; i < n->ngpus; i++) {
		nvmlUtilization_t u = { 0 };

		sample_procs(n, i);
		if (n->utilization(n->dev[i], &u) != 0)
			continue;
		n->util[i] = u.gpu;
		n->mem_util[i] = u.memory;
		*busy |= u.gpu > 0;
	}
	n->sampled = true;
	pthread_mutex_unlock(&n->lock);
	return 0;
}

/* Per-process series: memory always, SM utilisation where NVML had a sample. */
static void proc_metrics(struct mon_buf *b, struct monitor_nvml *n)
{
	mon_buf__printf(b, "# HELP gpuio_gpu_process_memory_bytes GPU memory a process holds (NVML; the %d largest per GPU).\n"
			"# TYPE gpuio_gpu_process_memory_bytes gauge\n", MAX_PROCS);
	for (unsigned i = 0; i < n->ngpus; i++)
		for (unsigned p = 0; p < n->nprocs[i]; p++) {
			const struct gpu_proc *g = &n->procs[i][p];

			if (g->mem == NVML_VALUE_NOT_AVAILABLE_ULL)
				continue;
			mon_buf__printf(b, "gpuio_gpu_process_memory_bytes{gpu=\"%u\",pid=\"%u\",comm=\"", i, g->pid);
			mon_buf__label(b, g->comm);
			mon_buf__printf(b, "\"} %llu\n", g->mem);
		}
	mon_buf__printf(b, "# HELP gpuio_gpu_process_sm_utilization_ratio Fraction of the last sample period the process's kernels ran (NVML).\n"
			"# TYPE gpuio_gpu_process_sm_utilization_ratio gauge\n");
	for (unsigned i = 0; i < n->ngpus; i++)
		for (unsigned p = 0; p < n->nprocs[i]; p++) {
			const struct gpu_proc *g = &n->procs[i][p];

			if (g->sm < 0)
				continue;
			mon_buf__printf(b, "gpuio_gpu_process_sm_utilization_ratio{gpu=\"%u\",pid=\"%u\",comm=\"", i, g->pid);
			mon_buf__label(b, g->comm);
			mon_buf__printf(b, "\"} %.2f\n", g->sm / 100.0);
		}
	mon_buf__printf(b, "# HELP gpuio_gpu_process_series_dropped_total GPU processes left out of the per-process series (more than %d on a GPU).\n"
			"# TYPE gpuio_gpu_process_series_dropped_total counter\n"
			"gpuio_gpu_process_series_dropped_total %llu\n", MAX_PROCS, n->procs_dropped);
}

void monitor_nvml__metrics(struct mon_buf *b, void *ctx)
{
	struct monitor_nvml *n = ctx;

	mon_buf__printf(b, "# HELP gpuio_gpu_nvml_available 1 when NVML answers (GPU utilisation series exist).\n"
			"# TYPE gpuio_gpu_nvml_available gauge\ngpuio_gpu_nvml_available %d\n",
			monitor_nvml__available(n));
	/* gpuio_gpu_cuda_uprobes_available: monitor_cuda__metrics */
	if (!monitor_nvml__available(n))
		return;
	pthread_mutex_lock(&n->lock);
	if (!n->sampled) {
		pthread_mutex_unlock(&n->lock);
		return;
	}
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
	if (n->running)
		proc_metrics(b, n);
	pthread_mutex_unlock(&n->lock);
}

void monitor_nvml__close(struct monitor_nvml *n)
{
	if (!n)
		return;
	if (n->lib) {
		n->shutdown();
		dlclose(n->lib);
	}
	pthread_mutex_destroy(&n->lock);
	free(n);
}
