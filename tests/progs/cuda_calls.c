// SPDX-License-Identifier: MIT
/*
 * cuda_calls — known CUDA runtime calls through the real, dynamically linked
 * libcudart (no GPU or driver needed: the calls fail, the uprobes fire).
 *
 *   cuda_calls [--wait FILE] [--linger MS]
 *
 * With --wait it prints "ready <pid>" once libcudart is loaded and waits
 * until FILE exists (a tracer attaches meanwhile). The main thread calls
 * cudaMalloc(1 MiB), cudaMemcpy(4096, HtoD), cudaLaunchKernel and
 * __cudaLaunchKernel (CUDA 13's <<<>>> path) of the host stub
 * _Z9my_kernelPfi on stream 0x5a5a, cudaMemset(65536), cudaDeviceSynchronize;
 * then a second thread calls cudaMemcpy(8192, DtoH) and
 * cudaStreamSynchronize(0x77). Each call prints one line
 *
 *   CALL name rc=N tid=T
 *
 * --linger keeps the process alive after the calls (the tracer names launch
 * stubs from the live process's maps). Built without libcudart (no CUDA
 * toolkit) it exits 77.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#ifdef NO_CUDART
int main(void)
{
	fprintf(stderr, "cuda_calls: built without libcudart (no CUDA toolkit)\n");
	return 77;
}
#else
/* The few runtime declarations needed (cuda_runtime_api.h is C++-leaning). */
typedef struct { unsigned int x, y, z; } dim3;
typedef void *cudaStream_t;
enum { cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2 };
int cudaMalloc(void **p, size_t size);
int cudaMemcpy(void *dst, const void *src, size_t count, int kind);
int cudaMemset(void *p, int value, size_t count);
int cudaDeviceSynchronize(void);
int cudaStreamSynchronize(cudaStream_t s);
int cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args, size_t shmem,
		     cudaStream_t stream);
int __cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args, size_t shmem,
		       cudaStream_t stream);

/* What nvcc would emit as the host stub of __global__ void my_kernel(float *, int). */
void __attribute__((noinline)) _Z9my_kernelPfi(float *a, int n)
{
	__asm__ volatile("" ::: "memory");
	(void)a;
	(void)n;
}

static void report(const char *name, int rc)
{
	printf("CALL %s rc=%d tid=%ld\n", name, rc, (long)syscall(SYS_gettid));
	fflush(stdout);
}

static char host[8192];

static void *second(void *arg)
{
	void *dev = arg;

	report("cudaMemcpy", cudaMemcpy(host, dev ? dev : (void *)0x10000, 8192, cudaMemcpyDeviceToHost));
	report("cudaStreamSynchronize", cudaStreamSynchronize((cudaStream_t)0x77));
	return NULL;
}

int main(int argc, char **argv)
{
	const char *wait_file = NULL;
	long linger_ms = 0;
	void *dev = NULL, *args[2];
	float *fa = NULL;
	int n = 16;
	dim3 grid = { 2, 1, 1 }, block = { 32, 1, 1 };
	pthread_t t;
	struct stat st;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--wait") && i + 1 < argc)
			wait_file = argv[++i];
		else if (!strcmp(argv[i], "--linger") && i + 1 < argc)
			linger_ms = atol(argv[++i]);
	}
	if (wait_file) {
		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		while (stat(wait_file, &st) != 0)
			usleep(10000);
	}
	args[0] = &fa;
	args[1] = &n;
	report("cudaMalloc", cudaMalloc(&dev, 1 << 20));
	report("cudaMemcpy", cudaMemcpy(dev ? dev : (void *)0x10000, host, 4096, cudaMemcpyHostToDevice));
	report("cudaLaunchKernel", cudaLaunchKernel((const void *)_Z9my_kernelPfi, grid, block, args, 0,
						    (cudaStream_t)0x5a5a));
	report("__cudaLaunchKernel", __cudaLaunchKernel((const void *)_Z9my_kernelPfi, grid, block,
							args, 0, (cudaStream_t)0x5a5a));
	report("cudaMemset", cudaMemset(dev ? dev : (void *)0x10000, 0, 65536));
	report("cudaDeviceSynchronize", cudaDeviceSynchronize());
	if (pthread_create(&t, NULL, second, dev) == 0)
		pthread_join(t, NULL);
	if (linger_ms)
		usleep((useconds_t)linger_ms * 1000);
	return 0;
}
#endif
