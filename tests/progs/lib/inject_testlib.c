// SPDX-License-Identifier: MIT
/*
 * inject_testlib — the library tests/t_inject.sh injects (built to
 * build/tests/libinject_test.so). Each function leaves ground truth:
 *
 *   inject_test_mark(PATH)   appends "call N loads L pid P tid T" to PATH and
 *                            returns 42 (N counts calls, L constructor runs:
 *                            a second injection must reuse the loaded copy);
 *                            clobbers every xmm register on the way, so a
 *                            tracer that does not restore them is caught
 *   inject_test_null(ARG)    7 when ARG is NULL, else 8
 *   inject_test_sleep(SPEC)  SPEC = "SECONDS[:PATH]": appends "sleep start"
 *                            to PATH, sleeps, returns 5
 *   inject_test_crash(ARG)   writes to address 16 (SIGSEGV)
 *   inject_test_thread(PATH) starts a thread (as a collector does) that
 *                            appends "thread ran" to PATH; returns 0
 */
#include <pthread.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

static int loads, calls;

__attribute__((constructor)) static void testlib_init(void)
{
	loads++;
}

static void append(const char *path, const char *line)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);

	if (fd < 0)
		return;
	if (write(fd, line, strlen(line)) < 0) {
		/* nothing to do: the test sees the line missing */
	}
	close(fd);
}

int inject_test_mark(const char *path)
{
	char line[160];

	if (!path)
		return -1;
	calls++;
	snprintf(line, sizeof(line), "call %d loads %d pid %d tid %ld\n", calls, loads,
		 (int)getpid(), (long)syscall(SYS_gettid));
	append(path, line);
	__asm__ volatile("pcmpeqd %%xmm0, %%xmm0\n\tpcmpeqd %%xmm1, %%xmm1\n\t"
			 "pcmpeqd %%xmm2, %%xmm2\n\tpcmpeqd %%xmm3, %%xmm3\n\t"
			 "pcmpeqd %%xmm4, %%xmm4\n\tpcmpeqd %%xmm5, %%xmm5\n\t"
			 "pcmpeqd %%xmm6, %%xmm6\n\tpcmpeqd %%xmm7, %%xmm7\n\t"
			 "pcmpeqd %%xmm8, %%xmm8\n\tpcmpeqd %%xmm9, %%xmm9\n\t"
			 "pcmpeqd %%xmm10, %%xmm10\n\tpcmpeqd %%xmm11, %%xmm11\n\t"
			 "pcmpeqd %%xmm12, %%xmm12\n\tpcmpeqd %%xmm13, %%xmm13\n\t"
			 "pcmpeqd %%xmm14, %%xmm14\n\tpcmpeqd %%xmm15, %%xmm15"
			 ::: "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8",
			 "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
	return 42;
}

int inject_test_null(const char *arg)
{
	return arg ? 8 : 7;
}

int inject_test_sleep(const char *spec)
{
	double s = spec ? atof(spec) : 0;
	const char *path = spec ? strchr(spec, ':') : NULL;
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };

	if (path)
		append(path + 1, "sleep start\n");
	while (nanosleep(&ts, &ts) != 0)
		;
	return 5;
}

static void *thread_main(void *path)
{
	usleep(100000);
	append(path, "thread ran\n");
	free(path);
	return NULL;
}

int inject_test_thread(const char *path)
{
	pthread_t t;
	char *p = path ? strdup(path) : NULL;

	if (!p || pthread_create(&t, NULL, thread_main, p)) {
		free(p);
		return -1;
	}
	pthread_detach(t);
	return 0;
}

int inject_test_crash(const char *arg)
{
	int *volatile p = (int *)16;

	*p = 1;
	return 0;
}
