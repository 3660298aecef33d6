// SPDX-License-Identifier: MIT
/*
 * cuda_uprobe_bench — the cost of one uprobed CUDA driver call: N calls of
 * cuStreamSynchronize(NULL) into the stand-in libcuda.so.1
 * (tests/progs/fake_libcuda.c, a few ns of work), timed with
 * CLOCK_MONOTONIC.
 *
 *   cuda_uprobe_bench LIB N [--wait FILE]
 *
 * dlopens LIB; with --wait prints "ready <pid>" and waits until FILE exists
 * (so a tracer can attach to the library first). Prints "ns_per_call X".
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	int (*sync)(void *);
	long n;
	double t0, t1;
	struct stat st;
	void *lib;
	int rc = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: cuda_uprobe_bench LIB N [--wait FILE]\n");
		return 2;
	}
	n = atol(argv[2]);
	lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	sync = lib ? (int (*)(void *))dlsym(lib, "cuStreamSynchronize") : NULL;
	if (!sync || n <= 0) {
		fprintf(stderr, "cuda_uprobe_bench: %s\n", lib ? "no cuStreamSynchronize" : dlerror());
		return 2;
	}
	if (argc > 4 && !strcmp(argv[3], "--wait")) {
		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		while (stat(argv[4], &st) != 0)
			usleep(10000);
	}
	t0 = mono();
	for (long i = 0; i < n; i++)
		rc |= sync(NULL);
	t1 = mono();
	printf("ns_per_call %.1f\n", (t1 - t0) / n);
	return rc;
}
