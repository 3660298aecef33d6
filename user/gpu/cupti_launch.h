/* SPDX-License-Identifier: MIT */
/*
 * gpu_collect.h — the CUPTI collector's side of `gpuio trace`: find
 * libgpuio-cupti.so, hand it to a launched command through the CUDA
 * injection variables, inject it by ptrace into traced processes that load
 * the driver without it, and bring their side files into the capture
 * (gpu_ingest.c).
 */
#ifndef GPUIO_GPU_COLLECT_H
#define GPUIO_GPU_COLLECT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "capture/capture.h"

struct gpu_collect;

/*
 * Where libgpuio-cupti.so is: $GPUIO_CUPTI_LIB, else beside the gpuio
 * executable, else ../lib/gpuio/ from it. Returns 0 or -ENOENT.
 */
int gpu_collect__lib_path(char *buf, size_t len);

struct gpu_collect_opts {
	const char *capture;    /* side files go to CAPTURE.gpu/ */
	bool inject;            /* ptrace-inject into processes without the collector */
};

/* Returns 0, or -errno when the side-file directory cannot be made. */
int gpu_collect__new(const struct gpu_collect_opts *o, struct gpu_collect **out);
/* True when the collector library was found (else GPU activity is off). */
bool gpu_collect__have_lib(const struct gpu_collect *gc);
/*
 * Before launching a command: export CUDA_INJECTION64_PATH, NVTX_INJECTION64_PATH
 * and GPUIO_GPU_DIR so its CUDA driver loads the collector at cuInit.
 */
void gpu_collect__setenv_for_launch(struct gpu_collect *gc);
/* gpu_watch hook: pid has libcuda mapped; inject unless it has a collector. */
void gpu_collect__on_cuda_process(void *gc, pid_t pid);
/* Append new side-file records. Returns records appended or -errno. */
long gpu_collect__poll(struct gpu_collect *gc, struct gpuio_cap_writer *w);
/*
 * End of trace: give live injected collectors one flush period, take the
 * last records, and stop them (their side file is unlinked: the collector
 * sees that and unsubscribes). Prints a one-line summary.
 */
int gpu_collect__finish(struct gpu_collect *gc, struct gpuio_cap_writer *w);
void gpu_collect__free(struct gpu_collect *gc);

#endif
