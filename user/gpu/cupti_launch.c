// SPDX-License-Identifier: MIT
/*
 * cupti_launch.c — the CUPTI collector's side of `gpuio trace` (cupti_launch.h).
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "gpu/cupti_launch.h"
#include "gpu/gpu_ingest.h"
#include "gpu/inject.h"
#include "lib/log.h"

#define COLLECTOR_SONAME "libgpuio-cupti.so"
#define MAX_INJECTED 1024
/* the collector's flush period (cupti/: GPUIO_GPU_FLUSH_MS default) + slack */
#define FINAL_WAIT_MS 1300

struct cupti_launch {
	char lib[PATH_MAX];
	bool have_lib;
	bool inject;
	char dir[PATH_MAX];
	struct gpu_ingest *ingest;
	pid_t injected[MAX_INJECTED];
	unsigned ninjected;
	unsigned inject_failed;
};

static bool readable(const char *p)
{
	return access(p, R_OK) == 0;
}

int cupti_launch__lib_path(char *buf, size_t len)
{
	char exe[PATH_MAX], *slash;
	const char *env = getenv("GPUIO_CUPTI_LIB");
	ssize_t n;

	if (env && *env) {
		snprintf(buf, len, "%s", env);
		return readable(buf) ? 0 : -ENOENT;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return -ENOENT;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return -ENOENT;
	*slash = '\0';
	snprintf(buf, len, "%s/%s", exe, COLLECTOR_SONAME);
	if (readable(buf))
		return 0;
	snprintf(buf, len, "%s/../lib/gpuio/%s", exe, COLLECTOR_SONAME);
	if (readable(buf)) {
		char real[PATH_MAX];
		if (realpath(buf, real))
			snprintf(buf, len, "%s", real);
		return 0;
	}
	return -ENOENT;
}

int cupti_launch__new(const struct cupti_launch_opts *o, struct cupti_launch **out)
{
	struct cupti_launch *gc = calloc(1, sizeof(*gc));
	int err;

	if (!gc)
		return -ENOMEM;
	gc->inject = o->inject;
	gc->have_lib = cupti_launch__lib_path(gc->lib, sizeof(gc->lib)) == 0;
	if (!gc->have_lib)
		pr_debug("%s not found (built only when CUDA is installed): "
			"GPU activity off, CUDA API uprobes still on", COLLECTOR_SONAME);
	snprintf(gc->dir, sizeof(gc->dir), "%s.gpu", o->capture);
	err = gpu_ingest__open(gc->dir, &gc->ingest);
	if (err) {
		pr_err("cannot create %s for the GPU collectors: %s", gc->dir, strerror(-err));
		free(gc);
		return err;
	}
	*out = gc;
	return 0;
}

bool cupti_launch__have_lib(const struct cupti_launch *gc) { return gc->have_lib; }

void cupti_launch__setenv_for_launch(struct cupti_launch *gc)
{
	const char *prev = getenv("CUDA_INJECTION64_PATH");

	if (!gc->have_lib)
		return;
	/* another tool's injection (Nsight, a profiler) is left in place */
	if (prev && *prev && strcmp(prev, gc->lib)) {
		pr_warn("CUDA_INJECTION64_PATH is already set (%s): "
			"GPU activity comes from that tool, not gpuio", prev);
		return;
	}
	setenv("CUDA_INJECTION64_PATH", gc->lib, 1);
	if (!getenv("NVTX_INJECTION64_PATH"))
		setenv("NVTX_INJECTION64_PATH", gc->lib, 1);
	setenv("GPUIO_GPU_DIR", gc->dir, 1);
}

/*
 * Was pid launched with a CUDA injection (ours from a launch, or another
 * tool's)? The driver loads it at cuInit: don't inject a second one. A
 * collector already mapped is not a reason to skip: it may be the stopped
 * one of an earlier trace, and gpuio_cupti_attach says -EALREADY itself
 * when one is live. (The environment is the process's own memory: it can
 * only opt itself out.)
 */
static bool has_collector(pid_t pid)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/environ", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (getdelim(&line, &cap, '\0', f) > 0)
		if (!strncmp(line, "CUDA_INJECTION64_PATH=", 22) && line[22]) {
			found = true;
			break;
		}
	fclose(f);
	free(line);
	return found;
}

void cupti_launch__on_cuda_process(void *ctx, pid_t pid)
{
	struct cupti_launch *gc = ctx;
	struct gpuio_inject_info info = {0};
	char err[256];
	int ret = 0, rc;

	if (!gc->have_lib || !gc->inject || has_collector(pid))
		return;
	if (gc->ninjected == MAX_INJECTED)
		return;
	rc = gpuio_inject__call_ex(pid, gc->lib, "gpuio_cupti_attach", gc->dir, 0, &info,
				   &ret, err, sizeof(err));
	if (rc) {
		gc->inject_failed++;
		pr_warn("could not inject the GPU collector into pid %d: %s "
			"(CUDA API uprobes still trace it)", pid, err);
		return;
	}
	gc->injected[gc->ninjected++] = pid;
	if (ret == -EALREADY) {
		pr_info("pid %d already runs the GPU collector", pid);
		return;
	}
	pr_info("GPU collector injected into pid %d (thread %d, %s)%s", pid,
		info.tid, info.thread, ret ? "; it reported an error, see the trace info" : "");
}

long cupti_launch__poll(struct cupti_launch *gc, struct gpuio_cap_writer *w)
{
	return gpu_ingest__poll(gc->ingest, w);
}

static bool any_alive(const struct cupti_launch *gc)
{
	for (unsigned i = 0; i < gc->ninjected; i++)
		if (kill(gc->injected[i], 0) == 0 || errno == EPERM)
			return true;
	return false;
}

int cupti_launch__finish(struct cupti_launch *gc, struct gpuio_cap_writer *w)
{
	long n;

	/* injected collectors outlive the trace: let one flush period land */
	if (any_alive(gc)) {
		struct timespec ts = { FINAL_WAIT_MS / 1000, (FINAL_WAIT_MS % 1000) * 1000000L };
		nanosleep(&ts, NULL);
	}
	n = gpu_ingest__poll(gc->ingest, w);
	if (n < 0)
		return (int)n;
	if (gpu_ingest__files(gc->ingest) || gc->ninjected || gc->inject_failed)
		pr_info("GPU: %llu records from %u collector(s); %u injected, %u injection(s) failed",
			gpu_ingest__records(gc->ingest), gpu_ingest__files(gc->ingest),
			gc->ninjected, gc->inject_failed);
	return 0;
}

void cupti_launch__free(struct cupti_launch *gc)
{
	if (!gc)
		return;
	/* unlinking a side file tells a live injected collector to stop */
	gpu_ingest__close(gc->ingest, true);
	free(gc);
}

void cupti_launch__on_state(struct cupti_launch *gc, gpu_ingest_state_fn fn, void *ctx)
{
	if (gc && gc->ingest)
		gpu_ingest__on_state(gc->ingest, fn, ctx);
}
