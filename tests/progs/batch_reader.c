// SPDX-License-Identifier: MIT
/*
 * batch_reader — a known run of file calls, then a thread that holds still,
 * for the batched-records test (t_batch).
 *
 *   batch_reader FILE LOG N HOLD_MS sleep|spin|spin-rt
 *
 * Opens FILE and LOG, then waits for SIGUSR1 (so a tracer can attach
 * first). Then: N preads of 4 KiB, read i at offset (i % B) * 4096 where B
 * is the number of whole 4 KiB blocks of FILE, and
 * one write(2) to LOG of the line
 *
 *   done N t_first_ns t_last_ns
 *
 * (CLOCK_MONOTONIC before the first pread, after the last). Then it holds
 * for HOLD_MS: "sleep" blocks in one nanosleep, "spin" stays on its CPU
 * with no system call at all (clock_gettime is the vDSO's), then exits
 * without another file call. So the traced file calls are exactly N preads
 * of FILE and one write of LOG. "spin-rt" is "spin" at SCHED_FIFO priority
 * 10 on the last CPU from the start: no other task of the node takes that
 * CPU from it (until the kernel's RT throttling, after 950 ms of a second),
 * so it does not leave its CPU between its calls and the end of HOLD_MS.
 */
#include <sched.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

static unsigned long long mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	unsigned long long n, hold_ms, t0, t1, end;
	char buf[4096], line[128];
	struct stat st;
	sigset_t set;
	int fd, log, sig, len;

	if (argc != 6 || (strcmp(argv[5], "sleep") && strcmp(argv[5], "spin") &&
			  strcmp(argv[5], "spin-rt"))) {
		fprintf(stderr, "usage: batch_reader FILE LOG N HOLD_MS sleep|spin|spin-rt\n");
		return 2;
	}
	if (!strcmp(argv[5], "spin-rt")) {
		struct sched_param sp = { .sched_priority = 10 };
		cpu_set_t cpus;

		CPU_ZERO(&cpus);
		CPU_SET(sysconf(_SC_NPROCESSORS_ONLN) - 1, &cpus);
		if (sched_setaffinity(0, sizeof(cpus), &cpus) != 0 ||
		    sched_setscheduler(0, SCHED_FIFO, &sp) != 0) {
			fprintf(stderr, "batch_reader: SCHED_FIFO on the last CPU: %s\n",
				strerror(errno));
			return 1;
		}
	}
	n = strtoull(argv[3], NULL, 10);
	hold_ms = strtoull(argv[4], NULL, 10);
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	log = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0 || log < 0 || fstat(fd, &st) != 0 || st.st_size < (off_t)sizeof(buf)) {
		fprintf(stderr, "batch_reader: %s or %s: %s\n", argv[1], argv[2],
			fd >= 0 && log >= 0 ? "file smaller than 4 KiB" : strerror(errno));
		return 1;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (sigwait(&set, &sig) != 0)
		return 1;
	t0 = mono();
	for (unsigned long long i = 0; i < n; i++) {
		off_t off = (off_t)((i % ((unsigned long long)st.st_size / sizeof(buf))) * sizeof(buf));

		if (pread(fd, buf, sizeof(buf), off) < 0) {
			fprintf(stderr, "batch_reader: pread: %s\n", strerror(errno));
			return 1;
		}
	}
	t1 = mono();
	len = snprintf(line, sizeof(line), "done %llu %llu %llu\n", n, t0, t1);
	if (write(log, line, (size_t)len) != len)
		return 1;
	end = mono() + hold_ms * 1000000ull;
	if (!strcmp(argv[5], "sleep")) {
		struct timespec ts = { (time_t)(hold_ms / 1000), (long)(hold_ms % 1000) * 1000000L };

		nanosleep(&ts, NULL);
	} else {
		while (mono() < end)
			;
	}
	return 0;
}
