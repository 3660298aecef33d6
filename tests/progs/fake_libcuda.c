// SPDX-License-Identifier: MIT
/*
 * fake_libcuda — a stand-in libcuda.so.1 (built as a shared library with
 * that soname, see tests/tests.mk) exporting a few driver API functions with
 * the real signatures and known results, so the driver-side uprobes can be
 * checked exactly without a GPU. cuMemcpyHtoD_v2 calls cuMemcpy inside the
 * library, as a real driver calls its own entry points: gpuio must record
 * only the outer call.
 */
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

typedef int CUresult;
typedef uint64_t CUdeviceptr;
typedef struct CUstream_st *CUstream;
typedef struct CUfunc_st *CUfunction;

/* Same layout as cuda.h's CUDA_MEMCPY2D (128 bytes). */
typedef struct {
	size_t srcXInBytes, srcY;
	int srcMemoryType;
	const void *srcHost;
	CUdeviceptr srcDevice;
	void *srcArray;
	size_t srcPitch;
	size_t dstXInBytes, dstY;
	int dstMemoryType;
	void *dstHost;
	CUdeviceptr dstDevice;
	void *dstArray;
	size_t dstPitch;
	size_t WidthInBytes, Height;
} CUDA_MEMCPY2D;

/* Same layout as cuda.h's CUlaunchConfig (hStream at 32). */
typedef struct {
	unsigned int gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes;
	CUstream hStream;
	void *attrs;
	unsigned int numAttrs;
} CUlaunchConfig;

static volatile uint64_t sink;

/* noinline + a side effect: each call is a real call with a body */
#define BODY(x) do { sink += (uint64_t)(x); __asm__ volatile("" ::: "memory"); } while (0)

__attribute__((noinline)) CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t bytes)
{
	BODY(dst + src + bytes);
	return 0;
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t bytes)
{
	CUresult rc = cuMemcpy(dst, (CUdeviceptr)(uintptr_t)src, bytes);

	BODY(rc);
	return rc;
}

CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t bytes, CUstream s)
{
	BODY((uintptr_t)dst + src + bytes + (uintptr_t)s);
	return 2;       /* CUDA_ERROR_OUT_OF_MEMORY */
}

CUresult cuMemcpy2D_v2(const CUDA_MEMCPY2D *p)
{
	BODY(p->WidthInBytes * p->Height);
	return 1;       /* CUDA_ERROR_INVALID_VALUE */
}

CUresult cuMemsetD32_v2(CUdeviceptr dst, unsigned int v, size_t n)
{
	BODY(dst + v + n);
	return 0;
}

CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes)
{
	*p = 0x700000000ull;
	BODY(bytes);
	return 0;
}

CUresult cuMemFree_v2(CUdeviceptr p)
{
	BODY(p);
	return 0;
}

CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
			unsigned int bx, unsigned int by, unsigned int bz, unsigned int shmem,
			CUstream s, void **params, void **extra)
{
	BODY((uintptr_t)f + gx + gy + gz + bx + by + bz + shmem + (uintptr_t)s +
	     (uintptr_t)params + (uintptr_t)extra);
	return 0;
}

CUresult cuLaunchKernelEx(const CUlaunchConfig *cfg, CUfunction f, void **params, void **extra)
{
	BODY((uintptr_t)cfg->hStream + (uintptr_t)f + (uintptr_t)params + (uintptr_t)extra);
	return 0;
}

CUresult cuStreamSynchronize(CUstream s)
{
	BODY((uintptr_t)s);
	return s ? 600 : 0;     /* CUDA_ERROR_NOT_READY for a non-default stream */
}

CUresult cuCtxSynchronize(void)
{
	BODY(1);
	return 999;     /* CUDA_ERROR_UNKNOWN */
}

/*
 * cuInit as the real driver does it for tools: when CUDA_INJECTION64_PATH
 * names a library, load it and call its InitializeInjection() once. That
 * is how `gpuio trace -- cmd` gets its collector into cmd (t_gpu_trace.sh).
 */
CUresult cuInit(unsigned int flags)
{
	static int done;
	const char *inj = getenv("CUDA_INJECTION64_PATH");
	void *h;
	int (*init)(void);

	(void)flags;
	if (done++ || !inj || !*inj)
		return 0;
	h = dlopen(inj, RTLD_NOW);
	init = h ? (int (*)(void))dlsym(h, "InitializeInjection") : NULL;
	if (init)
		init();
	return 0;
}

/* The CUDA version this "driver" supports: FAKE_CUDA_DRIVER_VERSION, else 13.0 (the toolkit here). */
CUresult cuDriverGetVersion(int *version)
{
	const char *v = getenv("FAKE_CUDA_DRIVER_VERSION");

	if (!version)
		return 1;  /* CUDA_ERROR_INVALID_VALUE */
	*version = v && *v ? atoi(v) : 13000;
	return 0;
}
