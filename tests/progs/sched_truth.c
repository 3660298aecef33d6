// SPDX-License-Identifier: MIT
/*
 * sched_truth — threads that run, sleep, wait for a CPU and block on a pipe,
 * and the kernel's own account of it: ground truth for gpuio's thread states.
 *
 *   sched_truth NTHREADS ROUNDS BUSY_MS SLEEP_MS
 *
 * Each worker does ROUNDS of (BUSY_MS of CPU, SLEEP_MS asleep), with more
 * workers than CPUs so they also wait for one; then it reports done and
 * blocks reading its own pipe. When every worker has reported, the main thread
 * waits 100 ms (they are all off the CPU by then), reads each worker's
 * /proc/self/task/TID/schedstat (on-CPU ns, run-queue wait ns, timeslices:
 * exact for a thread that is not running), prints one JSON object, and
 * releases them:
 *   {"pid":P,"read_mono_ns":T,"threads":[{"tid":..,"run_ns":..,"wait_ns":..,"slices":..},..]}
 * read_mono_ns is CLOCK_MONOTONIC just before the first read: every state a
 * worker had until then is counted in its schedstat.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

static int nthreads, rounds, busy_ms, sleep_ms;
static int go_pipe[64][2];     /* one per worker: only the main thread wakes it */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int ndone;
static pid_t tids[64];

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *worker(void *arg)
{
	int idx = (int)(intptr_t)arg;
	volatile uint64_t x = 0;
	char c;

	tids[idx] = (pid_t)syscall(SYS_gettid);
	for (int r = 0; r < rounds; r++) {
		/* on-CPU time of this thread, not wall time: the same work under contention */
		uint64_t end = now_ns(CLOCK_THREAD_CPUTIME_ID) + (uint64_t)busy_ms * 1000000ull;

		while (now_ns(CLOCK_THREAD_CPUTIME_ID) < end)
			for (int i = 0; i < 1000; i++)
				x += (uint64_t)i * 2654435761u;
		usleep((useconds_t)sleep_ms * 1000);
	}
	pthread_mutex_lock(&mu);
	ndone++;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&mu);
	/* blocked in a pipe read until the main thread has read our schedstat */
	if (read(go_pipe[idx][0], &c, 1) != 1)
		return NULL;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[64];
	uint64_t t;

	if (argc != 5) {
		fprintf(stderr, "usage: %s NTHREADS ROUNDS BUSY_MS SLEEP_MS\n", argv[0]);
		return 2;
	}
	nthreads = atoi(argv[1]);
	rounds = atoi(argv[2]);
	busy_ms = atoi(argv[3]);
	sleep_ms = atoi(argv[4]);
	if (nthreads < 1 || nthreads > 64)
		return 2;
	for (int i = 0; i < nthreads; i++)
		if (pipe(go_pipe[i]))
			return 2;
	for (int i = 0; i < nthreads; i++)
		pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);
	pthread_mutex_lock(&mu);
	while (ndone < nthreads)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	usleep(100000);
	t = now_ns(CLOCK_MONOTONIC);
	printf("{\"pid\":%d,\"read_mono_ns\":%llu,\"threads\":[", (int)getpid(),
	       (unsigned long long)t);
	for (int i = 0; i < nthreads; i++) {
		char path[64];
		unsigned long long run = 0, wait = 0, slices = 0;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", (int)tids[i]);
		f = fopen(path, "r");
		if (!f || fscanf(f, "%llu %llu %llu", &run, &wait, &slices) != 3)
			return 1;
		fclose(f);
		printf("%s{\"tid\":%d,\"run_ns\":%llu,\"wait_ns\":%llu,\"slices\":%llu}", i ? "," : "",
		       (int)tids[i], run, wait, slices);
	}
	printf("]}\n");
	fflush(stdout);
	for (int i = 0; i < nthreads; i++)
		if (write(go_pipe[i][1], "g", 1) != 1)
			return 1;
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	return 0;
}
