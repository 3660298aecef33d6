// SPDX-License-Identifier: MIT
/*
 * fake_nvml — a stand-in libnvidia-ml.so.1 (built as a shared library with
 * that soname, see tests/tests.mk) answering the NVML calls the monitor
 * makes, with the NVML ABI, from a text file the test writes and may change
 * while the monitor runs ($FAKE_NVML_FILE, read at every call):
 *
 *   gpus N                          N devices (default 1)
 *   util GPU GPU_PCT MEM_PCT        device utilisation
 *   proc GPU PID MEM_BYTES SM_PCT   a process on GPU (SM_PCT -1: no sample)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct { unsigned int gpu, memory; } nvmlUtilization_t;
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
#define NVML_SUCCESS 0
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_NOT_FOUND 6
#define NVML_ERROR_INSUFFICIENT_SIZE 7

struct proc { unsigned gpu, pid; unsigned long long mem; int sm; };
static struct proc procs[256];
static unsigned nprocs, ngpus, util[16][2];
static unsigned long long stamp;

static void load(void)
{
	const char *path = getenv("FAKE_NVML_FILE");
	char line[256];
	FILE *f = path ? fopen(path, "r") : NULL;

	nprocs = 0;
	ngpus = 1;
	memset(util, 0, sizeof(util));
	while (f && fgets(line, sizeof(line), f)) {
		struct proc p;
		unsigned g, a, b;

		if (sscanf(line, "gpus %u", &g) == 1 && g <= 16)
			ngpus = g;
		else if (sscanf(line, "util %u %u %u", &g, &a, &b) == 3 && g < 16)
			util[g][0] = a, util[g][1] = b;
		else if (sscanf(line, "proc %u %u %llu %d", &p.gpu, &p.pid, &p.mem, &p.sm) == 4 &&
			 nprocs < 256)
			procs[nprocs++] = p;
	}
	if (f)
		fclose(f);
}

static unsigned idx(nvmlDevice_t d) { return (unsigned)((unsigned long)d - 1); }

nvmlReturn_t nvmlInit_v2(void) { load(); return NVML_SUCCESS; }
nvmlReturn_t nvmlShutdown(void) { return NVML_SUCCESS; }
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *n) { load(); *n = ngpus; return NVML_SUCCESS; }

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d)
{
	if (i >= ngpus)
		return NVML_ERROR_INVALID_ARGUMENT;
	*d = (nvmlDevice_t)(unsigned long)(i + 1);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *name, unsigned int len)
{
	snprintf(name, len, "Stand-in GPU %u", idx(d));
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *v, unsigned int len)
{
	snprintf(v, len, "999.99-standin");
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u)
{
	load();
	u->gpu = util[idx(d)][0];
	u->memory = util[idx(d)][1];
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned int *count,
						     nvmlProcessInfo_t *out)
{
	unsigned n = 0;

	load();
	for (unsigned i = 0; i < nprocs; i++)
		if (procs[i].gpu == idx(d)) {
			if (n < *count && out)
				out[n] = (nvmlProcessInfo_t){ procs[i].pid, procs[i].mem, ~0u, ~0u };
			n++;
		}
	if (n > *count) {
		*count = n;
		return NVML_ERROR_INSUFFICIENT_SIZE;
	}
	*count = n;
	return NVML_SUCCESS;
}

/* Samples newer than last: each call is a new period (timestamps count up). */
nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t d, nvmlProcessUtilizationSample_t *out,
					     unsigned int *count, unsigned long long last)
{
	unsigned n = 0;

	load();
	stamp++;
	for (unsigned i = 0; i < nprocs; i++)
		if (procs[i].gpu == idx(d) && procs[i].sm >= 0) {
			if (n < *count && out)
				out[n] = (nvmlProcessUtilizationSample_t){ procs[i].pid, stamp,
									   (unsigned)procs[i].sm, 0, 0, 0 };
			n++;
		}
	if (!n)
		return NVML_ERROR_NOT_FOUND;
	if (n > *count) {
		*count = n;
		return NVML_ERROR_INSUFFICIENT_SIZE;
	}
	*count = n;
	return NVML_SUCCESS;
}
