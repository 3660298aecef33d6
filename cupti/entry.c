// SPDX-License-Identifier: MIT
/*
 * entry.c — the library's only exported symbols.
 *
 *   InitializeInjection()       launch mode: the CUDA driver calls it from
 *                               cuInit when CUDA_INJECTION64_PATH names us;
 *                               output dir from $GPUIO_GPU_DIR.
 *   gpuio_cupti_attach(dir)     attach mode: the tracer dlopen()s us into a
 *                               running process (ptrace) and calls this on a
 *                               hijacked thread. It only starts a thread and
 *                               returns: the hijacked thread may hold any
 *                               lock, CUDA's included.
 *   InitializeInjectionNvtx2()  NVTX_INJECTION64_PATH may name us too: NVTX
 *                               ranges then reach CUPTI (activity MARKER),
 *                               whose own NVTX injection we forward to.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include "capture/capture.h"
#include "collector.h"
#include "log.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT int InitializeInjection(void)
{
	struct collector_opts o = {
		.dir = getenv("GPUIO_GPU_DIR"),
		.how = GPUIO_GPU_HOW_LAUNCH,
	};

	collector__start(&o);
	return 1;  /* whatever happened, CUDA goes on */
}

static void *attach_thread(void *arg)
{
	struct collector_opts o = { .dir = arg, .how = GPUIO_GPU_HOW_ATTACH };

	prctl(PR_SET_NAME, "gpuio-cupti", 0, 0, 0);
	collector__attach(&o);
	free(arg);
	return NULL;
}

/* 0 when the collector is starting; -EALREADY, -EINVAL or -errno otherwise. */
EXPORT int gpuio_cupti_attach(const char *out_dir)
{
	pthread_attr_t attr;
	sigset_t all, old;
	pthread_t t;
	char *dir;
	int err;

	/* a live session stays; a stale one (its trace over) moves to the new dir */
	if (collector__started() && !collector__stale())
		return -EALREADY;
	if (!out_dir || !*out_dir) {
		cupti_log("gpuio_cupti_attach: no output dir: collector off");
		return -EINVAL;
	}
	dir = strdup(out_dir);
	if (!dir)
		return -ENOMEM;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	/* The application's signals stay with the application's threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&t, &attr, attach_thread, dir);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (err) {
		free(dir);
		return -err;
	}
	return 0;
}

EXPORT int InitializeInjectionNvtx2(const void *get_export_table)
{
	static struct cupti_api api;
	static int loaded = -1;
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	char why[256];

	pthread_mutex_lock(&lock);
	if (loaded < 0)
		loaded = cupti_api__load(&api, why, sizeof(why)) == 0;
	pthread_mutex_unlock(&lock);
	if (!loaded || !api.initializeInjectionNvtx2) {
		cupti_log("NVTX ranges not collected: CUPTI's NVTX injection is unavailable");
		return 0;
	}
	cupti_log("NVTX: handing the NVTX injection to CUPTI");
	return api.initializeInjectionNvtx2(get_export_table);
}
