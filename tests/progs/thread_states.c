// SPDX-License-Identifier: MIT
/*
 * thread_states — threads that spend known time on a CPU, waiting for one,
 * and asleep in known kinds, then stay alive so that the kernel's own
 * per-thread accounting (/proc/PID/task/TID/schedstat: on-CPU ns, run-queue
 * delay ns) can be read next to `gpuio monitor`'s thread-time series
 * (tests/t_monitor_threads.sh).
 *
 * usage: thread_states ROUNDS SPIN_MS SLEEP_MS
 *
 * Three worker threads (more runnable threads than the 2 CPUs of the test
 * machines: they wait for a CPU too), each ROUNDS times: spin SPIN_MS ms of
 * CPU, then sleep SLEEP_MS ms in its kind: thread 0 in nanosleep (other
 * sleep), thread 1 in recv() on a Unix socketpair that the main thread
 * writes SLEEP_MS ms after the thread says it is about to block (network),
 * thread 2 in read() on a pipe that a feeder thread writes likewise (other
 * sleep: a pipe); two feeder threads answer threads 1 and 2. Each blocking
 * call is timed with CLOCK_MONOTONIC. Then every thread blocks, alive,
 * until the process is killed (SIGTERM), and the program prints one JSON line (pid, tids, ns slept per
 * kind as measured around the calls) followed by "ready".
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/syscall.h>

static long rounds, spin_ms, sleep_ms;
static int sv[2], pp[2], park[2];
static sem_t want[2];                   /* thread 1, 2: about to block */
static sem_t done;                      /* a thread finished its rounds */
static unsigned long long slept[3];
static pid_t tids[3];

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void spin(long ms)
{
	struct timespec t0, t;
	volatile unsigned long x = 0;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do {
		for (int i = 0; i < 10000; i++)
			x += i;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

/* done: say so, then sleep until main closes park (alive: schedstat readable) */
static void *parked(void)
{
	char c;

	sem_post(&done);
	while (read(park[0], &c, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

static void *worker(void *arg)
{
	long k = (long)arg;
	char c;

	tids[k] = (pid_t)syscall(SYS_gettid);
	for (long r = 0; r < rounds; r++) {
		unsigned long long t0;

		spin(spin_ms);
		if (k == 0) {
			struct timespec ts = { sleep_ms / 1000, (sleep_ms % 1000) * 1000000 };

			t0 = now_ns();
			nanosleep(&ts, NULL);
		} else {
			sem_post(&want[k - 1]);
			t0 = now_ns();
			if ((k == 1 ? recv(sv[1], &c, 1, 0) : read(pp[0], &c, 1)) != 1) {
				perror("thread_states: recv/read");
				exit(1);
			}
		}
		slept[k] += now_ns() - t0;
	}
	return parked();
}

/* main: answer threads 1 and 2, SLEEP_MS after each says it blocks */
static void *feeder(void *arg)
{
	long k = (long)arg;
	struct timespec ts = { sleep_ms / 1000, (sleep_ms % 1000) * 1000000 };

	for (long r = 0; r < rounds; r++) {
		while (sem_wait(&want[k - 1]) && errno == EINTR)
			;
		nanosleep(&ts, NULL);
		if ((k == 1 ? send(sv[0], "x", 1, 0) : write(pp[1], "x", 1)) != 1) {
			perror("thread_states: send/write");
			exit(1);
		}
	}
	return parked();
}

int main(int argc, char **argv)
{
	pthread_t w[3], f[2];
	if (argc != 4) {
		fprintf(stderr, "usage: thread_states ROUNDS SPIN_MS SLEEP_MS\n");
		return 2;
	}
	rounds = atol(argv[1]);
	spin_ms = atol(argv[2]);
	sleep_ms = atol(argv[3]);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) || pipe(pp) || pipe(park)) {
		perror("thread_states");
		return 1;
	}
	sem_init(&want[0], 0, 0);
	sem_init(&want[1], 0, 0);
	sem_init(&done, 0, 0);
	for (long k = 0; k < 3; k++)
		pthread_create(&w[k], NULL, worker, (void *)k);
	for (long k = 1; k < 3; k++)
		pthread_create(&f[k - 1], NULL, feeder, (void *)k);
	for (int k = 0; k < 5; k++)
		while (sem_wait(&done) && errno == EINTR)
			;
	/* every thread alive and asleep: its schedstat is final */
	printf("{\"pid\": %d, \"tids\": [%d, %d, %d], \"nanosleep_ns\": %llu, \"socket_ns\": %llu, "
	       "\"pipe_ns\": %llu, \"rounds\": %ld, \"spin_ms\": %ld, \"sleep_ms\": %ld}\nready\n",
	       (int)getpid(), tids[0], tids[1], tids[2], slept[0], slept[1], slept[2], rounds, spin_ms,
	       sleep_ms);
	fflush(stdout);
	for (;;)         /* until killed (SIGTERM) */
		pause();
}
