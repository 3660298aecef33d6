// SPDX-License-Identifier: MIT
/*
 * doctor_gpu.c — the GPU side of a node: CUDA driver, GPUs, which libcupti
 * the collector would use (cupti/cupti_locate.c, the collector's own order),
 * the collector library, NVML. Libraries are dlopen()ed, never linked.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cupti/cupti_locate.h"
#include "doctor/doctor.h"
#include "gpu/cupti_launch.h"

/* cuDriverGetVersion of libcuda.so.1, 0 when there is no driver (why says). */
static int driver_version(char *why, size_t len)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	int (*get)(int *);
	int v = 0;

	if (!h) {
		snprintf(why, len, "%s", dlerror());
		return 0;
	}
	get = (int (*)(int *))dlsym(h, "cuDriverGetVersion");
	if (!get || get(&v) != 0 || v <= 0) {
		snprintf(why, len, "libcuda.so.1 loaded but cuDriverGetVersion failed");
		v = 0;
	}
	dlclose(h);
	return v;
}

static int count_gpus(void)
{
	DIR *dir = opendir("/dev");
	struct dirent *e;
	int n = 0;

	while (dir && (e = readdir(dir)))
		if (!strncmp(e->d_name, "nvidia", 6) && e->d_name[6] >= '0' && e->d_name[6] <= '9')
			n++;
	if (dir)
		closedir(dir);
	return n;
}

/* cuptiGetVersion of a libcupti file (dlopen'd and closed), 0 when it does not load. */
static unsigned cupti_version(const char *path)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	int (*get)(unsigned *);
	unsigned v = 0;

	if (!h)
		return 0;
	get = (int (*)(unsigned *))dlsym(h, "cuptiGetVersion");
	if (!get || get(&v) != 0)
		v = 0;
	dlclose(h);
	return v;
}

static void cupti(struct doctor *d, int driver_major)
{
	struct cupti_candidate c[CUPTI_LOCATE_MAX];
	struct cupti_locate_in in = { .override = getenv("GPUIO_CUPTI"), .driver_major = driver_major };
	struct doctor_finding *f;
	char rel[32], list[512] = "";
	int n, chosen = -1;
	size_t used = 0;

#ifdef GPUIO_CUPTI_PATH
	in.build_path = GPUIO_CUPTI_PATH;
#endif
	n = cupti_locate(&in, c, CUPTI_LOCATE_MAX);
	for (int i = 0; i < n; i++) {
		unsigned v = cupti_version(c[i].path);

		if (!v)
			continue;
		cupti_locate__release(v, rel, sizeof(rel));
		used += (size_t)snprintf(list + used, used < sizeof(list) ? sizeof(list) - used : 0,
					 "%s%s (CUDA %s, %s)", used ? "; " : "", c[i].path, rel, c[i].why);
		if (chosen < 0)
			chosen = i;
	}
	if (chosen < 0) {
		f = doctor__add(d, "gpu", "cupti", DOCTOR_NO, "no libcupti found");
		doctor__detail(f, "%d places looked at; a CUDA toolkit or PyTorch's nvidia-cuda-cupti "
			       "package provides one; GPUIO_CUPTI=/path/libcupti.so.N overrides", n);
		return;
	}
	cupti_locate__release(cupti_version(c[chosen].path), rel, sizeof(rel));
	f = doctor__add(d, "gpu", "cupti", DOCTOR_OK, "%s (CUDA %s)", c[chosen].path, rel);
	doctor__detail(f, "would be used for a process that has none loaded (%s); found: %s",
		       c[chosen].why, list);
}

static void nvml(struct doctor *d)
{
	void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	int (*init)(void), (*shutdown)(void), (*count)(unsigned *), (*version)(char *, unsigned);
	struct doctor_finding *f;
	unsigned n = 0;
	char ver[96] = "?";

	if (!h) {
		f = doctor__add(d, "gpu", "nvml", DOCTOR_NO, "absent");
		doctor__detail(f, "%s: the monitor exports no GPU utilisation", dlerror());
		return;
	}
	init = (int (*)(void))dlsym(h, "nvmlInit_v2");
	shutdown = (int (*)(void))dlsym(h, "nvmlShutdown");
	count = (int (*)(unsigned *))dlsym(h, "nvmlDeviceGetCount_v2");
	version = (int (*)(char *, unsigned))dlsym(h, "nvmlSystemGetDriverVersion");
	if (!init || !count || init() != 0) {
		f = doctor__add(d, "gpu", "nvml", DOCTOR_NO, "libnvidia-ml.so.1 present, nvmlInit failed");
		doctor__detail(f, "no NVIDIA driver loaded?");
		dlclose(h);
		return;
	}
	count(&n);
	if (version)
		version(ver, sizeof(ver));
	doctor__add(d, "gpu", "nvml", n ? DOCTOR_OK : DOCTOR_WARN, "%u GPU(s), driver %s", n, ver);
	if (shutdown)
		shutdown();
	dlclose(h);
}

void doctor__gpu(struct doctor *d)
{
	struct doctor_finding *f;
	char why[512] = "", lib[4096];
	int v = driver_version(why, sizeof(why)), gpus = count_gpus();

	if (v) {
		doctor__add(d, "gpu", "cuda_driver", DOCTOR_OK, "CUDA %d.%d (cuDriverGetVersion %d)",
			    v / 1000, v % 1000 / 10, v);
	} else {
		f = doctor__add(d, "gpu", "cuda_driver", DOCTOR_NO, "no CUDA driver");
		doctor__detail(f, "%s", why);
	}
	f = doctor__add(d, "gpu", "devices", gpus ? DOCTOR_OK : DOCTOR_NO, "%d /dev/nvidiaN", gpus);
	if (!gpus)
		doctor__detail(f, "no GPU: gpuio traces files and disks; GPU timelines need one");
	cupti(d, cupti_locate__driver_major(v));
	if (cupti_launch__lib_path(lib, sizeof(lib)) == 0) {
		doctor__add(d, "gpu", "collector", DOCTOR_OK, "%s", lib);
	} else {
		f = doctor__add(d, "gpu", "collector", DOCTOR_NO, "libgpuio-cupti.so not found");
		doctor__detail(f, "looked beside the gpuio binary and in ../lib/gpuio; built only "
			       "where CUDA's CUPTI headers were found; GPUIO_CUPTI_LIB overrides");
	}
	nvml(d);
}
