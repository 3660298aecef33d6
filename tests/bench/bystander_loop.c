// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * bystander_loop N — N getppid() syscalls (no file call: a process gpuio does
 * not trace, doing what every process does), then "ns_per_call=X" on stdout.
 * tests/bench/bystander.sh runs it with the tracer off and on another pid.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 2000000;
	struct timespec a, b;

	if (n <= 0) {
		fprintf(stderr, "usage: bystander_loop N\n");
		return 2;
	}
	syscall(SYS_getppid);   /* the first call's page faults, outside the timing */
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("ns_per_call=%.1f\n", ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / (double)n);
	return 0;
}
