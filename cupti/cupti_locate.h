/* SPDX-License-Identifier: MIT */
/*
 * cupti_locate.h — which libcupti to use, in order, and why.
 *
 * A PyTorch install runs CUDA 12.x with its own libcupti.so.12 inside the
 * Python environment (site-packages/nvidia/cuda_cupti/lib); a toolkit
 * install has libcupti.so.13 under /usr/local/cuda. The collector must use
 * the one that matches the process, so candidates come in this order:
 *
 *   1. $GPUIO_CUPTI (a path): the user's override, taken as is.
 *   2. A libcupti already loaded in the process (e.g. PyTorch's own copy).
 *   3. libcupti beside the process's loaded CUDA libraries (the nvidia/
 *      cuda_cupti/lib sibling of nvidia/cuda_runtime/lib, or the toolkit's
 *      lib64), of the major the driver supports.
 *   4. libcupti.so.<driver major> by soname (the loader's search path).
 *   5. Known locations: /usr/local/cuda{,-MAJOR.*}/{lib64,extras/CUPTI/lib64,
 *      targets/ARCH-linux/lib} and the path found at build time.
 *
 * Pure logic over a description of the process (no dlopen, no CUPTI headers),
 * so the collector, `gpuio doctor` and the unit tests share it.
 */
#ifndef GPUIO_CUPTI_LOCATE_H
#define GPUIO_CUPTI_LOCATE_H

#include <stddef.h>

#define CUPTI_LOCATE_MAX 24

/* What is known of the process (or, for `gpuio doctor`, of the node). */
struct cupti_locate_in {
	const char *override;        /* $GPUIO_CUPTI, or NULL */
	const char *const *loaded;   /* paths of the process's loaded objects, NULL-terminated, or NULL */
	int driver_major;            /* CUDA version the driver supports (12, 13), 0 = unknown */
	const char *build_path;      /* libcupti found at build time, or NULL */
	const char *root;            /* prefix for the known locations (tests), NULL = "/" */
};

struct cupti_candidate {
	char path[512];              /* a path, or a bare soname for the loader's search */
	int major;                   /* from the name (libcupti.so.12 -> 12), 0 = unknown */
	const char *why;             /* "GPUIO_CUPTI", "already loaded", "beside libcudart", ... */
	int exists;                  /* 1 when path is a file that exists (bare sonames: 0) */
};

/*
 * Fill out[] with up to max candidates, best first, without duplicates
 * (same real path). Returns how many.
 */
int cupti_locate(const struct cupti_locate_in *in, struct cupti_candidate *out, int max);

/* libcupti.so.12.4.127 -> 12; not a libcupti name -> 0. */
int cupti_locate__major(const char *path);

/* The CUDA release a cuptiGetVersion() value stands for: "12.4", "13.0", "11.8" ("?" if unknown). */
void cupti_locate__release(unsigned api_version, char *out, size_t len);

/* The CUDA major a cuDriverGetVersion() value means (12040 -> 12). */
static inline int cupti_locate__driver_major(int driver_version)
{
	return driver_version > 0 ? driver_version / 1000 : 0;
}

#endif /* GPUIO_CUPTI_LOCATE_H */
