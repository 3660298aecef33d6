/* SPDX-License-Identifier: MIT */
/*
 * cupti_launch.h — the CUPTI collector's side of `gpuio trace`: find
 * libgpuio-cupti.so, hand it to a launched command through the CUDA
 * injection variables, inject it by ptrace into traced processes that load
 * the driver without it, and bring their side files into the capture
 * (gpu_ingest.c).
 */
#ifndef GPUIO_CUPTI_LAUNCH_H
#define GPUIO_CUPTI_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "capture/capture.h"
#include "gpu/gpu_ingest.h"

struct cupti_launch;

/*
 * Where libgpuio-cupti.so is: $GPUIO_CUPTI_LIB, else beside the gpuio
 * executable, else ../lib/gpuio/ from it. Returns 0 or -ENOENT.
 */
int cupti_launch__lib_path(char *buf, size_t len);

struct cupti_launch_opts {
	const char *capture;    /* side files go to CAPTURE.gpu/ */
	bool inject;            /* ptrace-inject into processes without the collector */
};

/* Returns 0, or -errno when the side-file directory cannot be made. */
int cupti_launch__new(const struct cupti_launch_opts *o, struct cupti_launch **out);
/* True when the collector library was found (else GPU activity is off). */
bool cupti_launch__have_lib(const struct cupti_launch *gc);
/*
 * Before launching a command: export CUDA_INJECTION64_PATH, NVTX_INJECTION64_PATH
 * and GPUIO_GPU_DIR so its CUDA driver loads the collector at cuInit.
 */
void cupti_launch__setenv_for_launch(struct cupti_launch *gc);
/* gpu_watch hook: pid has libcuda mapped; inject unless it has a collector. */
void cupti_launch__on_cuda_process(void *gc, pid_t pid);
/* Tell fn when a collector turns on or off (see gpu_ingest__on_state). */
void cupti_launch__on_state(struct cupti_launch *gc, gpu_ingest_state_fn fn, void *ctx);
/* Append new side-file records. Returns records appended or -errno. */
long cupti_launch__poll(struct cupti_launch *gc, struct gpuio_cap_writer *w);
/*
 * End of trace: give live injected collectors one flush period, take the
 * last records, and stop them (their side file is unlinked: the collector
 * sees that and unsubscribes). Prints a one-line summary.
 */
int cupti_launch__finish(struct cupti_launch *gc, struct gpuio_cap_writer *w);
void cupti_launch__free(struct cupti_launch *gc);

#endif
