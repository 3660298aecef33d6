// SPDX-License-Identifier: MIT
/*
 * fake_libcuda_calls — drives tests/progs/fake_libcuda.c (a stand-in
 * libcuda.so.1) through dlopen, as frameworks load the driver.
 *
 *   fake_libcuda_calls LIB [--wait FILE] [--linger MS] [--init-first]
 *
 * dlopens LIB; with --wait prints "ready <pid>" and waits until FILE exists
 * (a tracer attaches meanwhile). Then, on the main thread: cuMemAlloc_v2
 * (1 MiB), cuMemcpyHtoD_v2 (4096), cuMemcpyDtoHAsync_v2 (12345, stream
 * 0xabc), cuMemcpy2D_v2 (HtoD, 100 x 7), cuMemsetD32_v2 (1000 elements),
 * cuLaunchKernel (f 0xf00d, stream 0xbeef), cuLaunchKernelEx (f 0xf11d,
 * stream 0xcafe), cuStreamSynchronize (0xabc), cuCtxSynchronize,
 * cuMemFree_v2; then a second thread calls cuMemcpyHtoD_v2 (777). Each call
 * prints "CALL name rc=N tid=T bytes=B stream=S".
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>

typedef int (*fn_t)();
static void *lib;
static char host[16384];

static fn_t sym(const char *name)
{
	fn_t f = (fn_t)dlsym(lib, name);

	if (!f) {
		fprintf(stderr, "fake_libcuda_calls: %s missing\n", name);
		exit(2);
	}
	return f;
}

static void report(const char *name, int rc, unsigned long long bytes, unsigned long long stream)
{
	printf("CALL %s rc=%d tid=%ld bytes=%llu stream=%llu\n", name, rc, (long)syscall(SYS_gettid),
	       bytes, stream);
	fflush(stdout);
}

typedef struct {
	size_t srcXInBytes, srcY;
	int srcMemoryType;
	const void *srcHost;
	uint64_t srcDevice;
	void *srcArray;
	size_t srcPitch;
	size_t dstXInBytes, dstY;
	int dstMemoryType;
	void *dstHost;
	uint64_t dstDevice;
	void *dstArray;
	size_t dstPitch;
	size_t WidthInBytes, Height;
} CUDA_MEMCPY2D;

typedef struct {
	unsigned int gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes;
	void *hStream;
	void *attrs;
	unsigned int numAttrs;
} CUlaunchConfig;

static void *second(void *arg)
{
	report("cuMemcpyHtoD_v2", sym("cuMemcpyHtoD_v2")(0x700000000ull, host, (size_t)777), 777, 0);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *wait_file = NULL;
	int init_first = 0;
	long linger_ms = 0;
	uint64_t dptr = 0;
	CUDA_MEMCPY2D m = { 0 };
	CUlaunchConfig cfg = { 1, 1, 1, 64, 1, 1, 0, (void *)0xcafe, NULL, 0 };
	pthread_t t;
	struct stat st;

	if (argc < 2) {
		fprintf(stderr, "usage: fake_libcuda_calls LIB [--wait FILE] [--linger MS] [--init-first]\n");
		return 2;
	}
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--wait") && i + 1 < argc)
			wait_file = argv[++i];
		else if (!strcmp(argv[i], "--linger") && i + 1 < argc)
			linger_ms = atol(argv[++i]);
		else if (!strcmp(argv[i], "--init-first"))
			init_first = 1;
	}
	lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "fake_libcuda_calls: %s\n", dlerror());
		return 2;
	}
	/* --init-first: the driver (and the CUPTI collector it loads) is up before the wait */
	if (init_first && dlsym(lib, "cuInit"))
		((fn_t)dlsym(lib, "cuInit"))(0u);
	if (wait_file) {
		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		while (stat(wait_file, &st) != 0)
			usleep(10000);
	}
	/* the driver loads CUDA_INJECTION64_PATH here (not a probed call: not reported) */
	if (!init_first && dlsym(lib, "cuInit"))
		((fn_t)dlsym(lib, "cuInit"))(0u);
	report("cuMemAlloc_v2", sym("cuMemAlloc_v2")(&dptr, (size_t)(1 << 20)), 1 << 20, 0);
	report("cuMemcpyHtoD_v2", sym("cuMemcpyHtoD_v2")(dptr, host, (size_t)4096), 4096, 0);
	report("cuMemcpyDtoHAsync_v2", sym("cuMemcpyDtoHAsync_v2")(host, dptr, (size_t)12345,
								     (void *)0xabc), 12345, 0xabc);
	m.srcMemoryType = 1;    /* host */
	m.dstMemoryType = 2;    /* device */
	m.WidthInBytes = 100;
	m.Height = 7;
	report("cuMemcpy2D_v2", sym("cuMemcpy2D_v2")(&m), 700, 0);
	report("cuMemsetD32_v2", sym("cuMemsetD32_v2")(dptr, 0u, (size_t)1000), 4000, 0);
	report("cuLaunchKernel", sym("cuLaunchKernel")((void *)0xf00d, 1u, 1u, 1u, 64u, 1u, 1u, 0u,
						       (void *)0xbeef, (void **)NULL, (void **)NULL),
	       0, 0xbeef);
	report("cuLaunchKernelEx", sym("cuLaunchKernelEx")(&cfg, (void *)0xf11d, (void **)NULL,
							   (void **)NULL), 0, 0xcafe);
	report("cuStreamSynchronize", sym("cuStreamSynchronize")((void *)0xabc), 0, 0xabc);
	report("cuCtxSynchronize", sym("cuCtxSynchronize")(), 0, 0);
	report("cuMemFree_v2", sym("cuMemFree_v2")(dptr), 0, 0);
	if (pthread_create(&t, NULL, second, NULL) == 0)
		pthread_join(t, NULL);
	if (linger_ms)
		usleep((useconds_t)linger_ms * 1000);
	return 0;
}
