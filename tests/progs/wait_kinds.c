// SPDX-License-Identifier: MIT
/*
 * wait_kinds — a thread that sleeps in each kind of wait gpuio names, for a
 * known time, measured by itself: ground truth for the report's "what a
 * sleeping thread was in" (tests/t_wait_kinds.sh).
 *
 * usage: wait_kinds MS
 *
 * The main thread spins MS*2 ms on its CPU (so that it is the busiest
 * thread), then, one after the other, sleeps in: nanosleep (MS ms); a
 * futex (pthread_cond_wait, signalled by a helper thread MS ms later);
 * poll on a pipe (the helper writes MS ms later); read on a pipe; recv on
 * a Unix socketpair; wait4 on a child that exits MS ms after its fork.
 * Each phase is timed with CLOCK_MONOTONIC around the blocking call; the
 * helper starts its delay when main posts a semaphore right before the
 * call. Prints one JSON object: pid, tid, and per kind the ns measured.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

enum { PH_FUTEX, PH_POLL, PH_PIPE, PH_SOCKET, PH_N };

static sem_t go;
static long delay_ms;
static int pfd[2], rfd[2], sv[2];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int signalled;

static unsigned long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec;
}

static void sleep_ms(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&t, &t) && errno == EINTR)
		;
}

static void die(const char *what)
{
	fprintf(stderr, "wait_kinds: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* For each phase: wait for main's go, the delay, then end main's wait. */
static void *helper(void *arg)
{
	char c = 'x';

	(void)arg;
	for (int ph = 0; ph < PH_N; ph++) {
		while (sem_wait(&go) && errno == EINTR)
			;
		sleep_ms(delay_ms);
		switch (ph) {
		case PH_FUTEX:
			pthread_mutex_lock(&mu);
			signalled = 1;
			pthread_cond_signal(&cv);
			pthread_mutex_unlock(&mu);
			break;
		case PH_POLL:
			if (write(pfd[1], &c, 1) != 1)
				die("write poll pipe");
			break;
		case PH_PIPE:
			if (write(rfd[1], &c, 1) != 1)
				die("write read pipe");
			break;
		case PH_SOCKET:
			if (send(sv[1], &c, 1, 0) != 1)
				die("send");
			break;
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long long t0, ns[PH_N + 2];
	volatile unsigned long long spin = 0;
	struct pollfd p;
	pthread_t th;
	pid_t child;
	char c;

	if (argc != 2 || (delay_ms = atol(argv[1])) <= 0) {
		fprintf(stderr, "usage: wait_kinds MS\n");
		return 2;
	}
	if (pipe(pfd) || pipe(rfd) || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) || sem_init(&go, 0, 0))
		die("setup");
	if (pthread_create(&th, NULL, helper, NULL))
		die("pthread_create");
	t0 = now_ns();
	while (now_ns() - t0 < (unsigned long long)delay_ms * 2000000ull)
		spin++;
	/* a timed sleep */
	t0 = now_ns();
	sleep_ms(delay_ms);
	ns[PH_N] = now_ns() - t0;
	/* a futex: the condition the helper signals */
	pthread_mutex_lock(&mu);
	sem_post(&go);
	t0 = now_ns();
	while (!signalled)
		pthread_cond_wait(&cv, &mu);
	ns[PH_FUTEX] = now_ns() - t0;
	pthread_mutex_unlock(&mu);
	/* poll on a pipe */
	p = (struct pollfd){ .fd = pfd[0], .events = POLLIN };
	sem_post(&go);
	t0 = now_ns();
	if (poll(&p, 1, -1) != 1)
		die("poll");
	ns[PH_POLL] = now_ns() - t0;
	/* read on a pipe */
	sem_post(&go);
	t0 = now_ns();
	if (read(rfd[0], &c, 1) != 1)
		die("read");
	ns[PH_PIPE] = now_ns() - t0;
	/* recv on a socket */
	sem_post(&go);
	t0 = now_ns();
	if (recv(sv[0], &c, 1, 0) != 1)
		die("recv");
	ns[PH_SOCKET] = now_ns() - t0;
	pthread_join(th, NULL);
	/* wait4 on a child */
	child = fork();
	if (child < 0)
		die("fork");
	if (!child) {
		sleep_ms(delay_ms);
		_exit(0);
	}
	t0 = now_ns();
	if (waitpid(child, NULL, 0) != child)
		die("waitpid");
	ns[PH_N + 1] = now_ns() - t0;
	printf("{\"pid\":%d,\"tid\":%ld,\"child\":%d,\"ns\":{\"sleep\":%llu,\"futex\":%llu,"
	       "\"poll\":%llu,\"pipe\":%llu,\"socket\":%llu,\"child\":%llu}}\n", getpid(),
	       (long)syscall(SYS_gettid), child, ns[PH_N], ns[PH_FUTEX], ns[PH_POLL], ns[PH_PIPE],
	       ns[PH_SOCKET], ns[PH_N + 1]);
	return 0;
}
