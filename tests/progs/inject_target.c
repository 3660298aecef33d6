// SPDX-License-Identifier: MIT
/*
 * inject_target — processes for tests/t_inject.sh to inject into, each of
 * which checks that it went on exactly as if nothing had happened.
 * Output goes to stdout, one write(2) per line.
 *
 *   inject_target sleep COUNT MS   COUNT clock_nanosleep()s of MS ms each;
 *        "tick I" after each; exit 3 if one returned EINTR/an error, 4 if
 *        one ended early (a badly restarted sleep); else "done COUNT", 0
 *   inject_target read             "ready", then read stdin to EOF (SIGUSR1
 *        and SIGUSR2 handlers with SA_RESTART count signals); "got N bytes:
 *        DATA" and "usr1=A usr2=B"; exit 3 if a read failed
 *   inject_target threads          main blocked in read(stdin) as above; two
 *        sleeper threads (nanosleep loops), one condition-variable waiter,
 *        two busy threads (malloc/free and a floating-point sum checked
 *        against a reference each round); at EOF all are stopped and
 *        joined: "threads ok rounds=R" or "threads BAD …" (exit 5)
 *   inject_target busy N           N busy threads and a busy main thread
 *        (same checks; no thread ever blocks) until SIGTERM; "busy ok"
 *   inject_target exit MS          a thread calls exit(0) after MS ms while
 *        the main thread sits in pause()
 *   inject_target ppoll            like read, but waits in ppoll() with a
 *        temporary mask blocking SIGUSR2 (the kernel restores the real mask
 *        after it); also prints "usr2_blocked=0|1" (the mask at the end)
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <poll.h>

static volatile sig_atomic_t usr1, usr2, stop;
static volatile int bad;
static double reference;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static long rounds_total;

static void say(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	buf[n++] = '\n';
	if (write(1, buf, (size_t)n) < 0)
		exit(9);
}

static long long mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void on_sig(int sig)
{
	if (sig == SIGUSR1)
		usr1++;
	else if (sig == SIGUSR2)
		usr2++;
	else
		stop = 1;
}

static void handle(int sig)
{
	struct sigaction sa = { .sa_handler = on_sig, .sa_flags = SA_RESTART };

	sigaction(sig, &sa, NULL);
}

/* Floating-point work kept in registers: a clobbered xmm shows as a mismatch. */
static __attribute__((noinline)) double fp_round(void)
{
	double a = 1.0, b = 0.0, c = 0.5;

	for (int i = 0; i < 200000; i++) {
		a = a * 1.0000001 + 1e-9;
		c = c * 0.9999999 + 1e-7;
		b += a - c;
	}
	return b;
}

static void *busy(void *p)
{
	long rounds = 0;

	while (!stop) {
		char *m = malloc(64 + (size_t)(rounds & 1023));

		if (!m) {
			bad = 1;
			break;
		}
		memset(m, 0x5a, 64);
		free(m);
		if (fp_round() != reference) {
			bad = 2;
			say("fp mismatch in round %ld", rounds);
		}
		rounds++;
	}
	__atomic_add_fetch(&rounds_total, rounds, __ATOMIC_RELAXED);
	return NULL;
}

static void *sleeper(void *p)
{
	while (!stop) {
		struct timespec ts = { 0, 10 * 1000000L };

		if (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL) != 0)
			bad = 3;
	}
	return NULL;
}

static void *waiter(void *p)
{
	pthread_mutex_lock(&mu);
	while (!stop)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	return NULL;
}

static void *exiter(void *p)
{
	usleep((useconds_t)(long)p * 1000);
	exit(0);
}

/* read stdin to EOF; "got N bytes: DATA" */
static int read_all(void)
{
	char buf[4096];
	size_t got = 0;

	for (;;) {
		ssize_t n = read(0, buf + got, sizeof(buf) - 1 - got);

		if (n < 0) {
			say("read failed: %s (errno %d)", strerror(errno), errno);
			return 3;
		}
		if (n == 0)
			break;
		got += (size_t)n;
		if (got == sizeof(buf) - 1)
			break;
	}
	buf[got] = '\0';
	if (got && buf[got - 1] == '\n')
		buf[got - 1] = '\0';
	say("got %zu bytes: %s", got, buf);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	reference = fp_round();
	if (!strcmp(mode, "sleep") && argc == 4) {
		int count = atoi(argv[2]), ms = atoi(argv[3]);

		for (int i = 0; i < count; i++) {
			struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
			long long t0 = mono_ns();
			int r = clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);

			if (r) {
				say("sleep %d returned %d (%s)", i, r, strerror(r));
				return 3;
			}
			if (mono_ns() - t0 < ms * 1000000LL) {
				say("sleep %d ended early: %lld ns < %d ms", i, mono_ns() - t0, ms);
				return 4;
			}
			say("tick %d", i);
		}
		say("done %d", count);
		return 0;
	}
	if (!strcmp(mode, "read")) {
		int rc;

		handle(SIGUSR1);
		handle(SIGUSR2);
		say("ready");
		rc = read_all();
		say("usr1=%d usr2=%d", (int)usr1, (int)usr2);
		return rc;
	}
	if (!strcmp(mode, "ppoll")) {
		sigset_t tmp, cur;
		int rc;

		handle(SIGUSR1);
		handle(SIGUSR2);
		sigemptyset(&tmp);
		sigaddset(&tmp, SIGUSR2);
		say("ready");
		for (;;) {
			struct pollfd pfd = { .fd = 0, .events = POLLIN };
			int r = ppoll(&pfd, 1, NULL, &tmp);

			if (r < 0 && errno == EINTR)
				continue;   /* a handler ran: ppoll is never restarted */
			if (r < 0) {
				say("ppoll failed: %s", strerror(errno));
				return 3;
			}
			break;
		}
		rc = read_all();
		sigprocmask(SIG_BLOCK, NULL, &cur);
		say("usr1=%d usr2=%d", (int)usr1, (int)usr2);
		say("usr2_blocked=%d", sigismember(&cur, SIGUSR2));
		return rc;
	}
	if (!strcmp(mode, "threads")) {
		pthread_t t[5];
		void *(*fn[5])(void *) = { busy, busy, sleeper, sleeper, waiter };
		int rc;

		for (int i = 0; i < 5; i++)
			pthread_create(&t[i], NULL, fn[i], NULL);
		say("ready");
		rc = read_all();
		stop = 1;
		pthread_mutex_lock(&mu);
		pthread_cond_broadcast(&cv);
		pthread_mutex_unlock(&mu);
		for (int i = 0; i < 5; i++)
			pthread_join(t[i], NULL);
		if (rc || bad) {
			say("threads BAD rc=%d bad=%d", rc, bad);
			return 5;
		}
		say("threads ok rounds=%ld", rounds_total);
		return 0;
	}
	if (!strcmp(mode, "busy") && argc == 3) {
		int n = atoi(argv[2]);
		pthread_t t[16];

		if (n < 0 || n > 16)
			return 2;
		handle(SIGTERM);
		for (int i = 0; i < n; i++)
			pthread_create(&t[i], NULL, busy, NULL);
		say("ready");
		busy(NULL);
		for (int i = 0; i < n; i++)
			pthread_join(t[i], NULL);
		if (bad) {
			say("busy BAD bad=%d", bad);
			return 5;
		}
		say("busy ok");
		return 0;
	}
	if (!strcmp(mode, "exit") && argc == 3) {
		pthread_t t;

		pthread_create(&t, NULL, exiter, (void *)(long)atoi(argv[2]));
		say("ready");
		for (;;)
			pause();
	}
	fprintf(stderr, "usage: inject_target sleep COUNT MS | read | ppoll | threads | busy N | exit MS\n");
	return 2;
}
