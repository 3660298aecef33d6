// SPDX-License-Identifier: MIT
/*
 * attach_reader — a reader with a known, logged sequence of reads, for the
 * attach / signal / timestamp / unrelated-process tests.
 *
 *   attach_reader FILE LOG INTERVAL_US COUNT [cold]
 *
 * Opens FILE *relative to its directory* (chdir + open of the basename, so
 * a tracer that names the file must resolve it, not copy a string), opens
 * LOG, then does COUNT reads (0 = until killed): read number seq is
 * pread(fd, buf, 512, (seq * 512) % size(FILE)), bracketed by
 * CLOCK_MONOTONIC reads, and logged to LOG as one line
 *
 *   seq t_before_ns t_after_ns offset returned
 *
 * then sleeps INTERVAL_US. With "cold", FILE is dropped from the page cache
 * (posix_fadvise DONTNEED) before the first read, so reads go to the disk.
 * The log line is written with one write(2) after the read, so the log has
 * every read that returned, in order.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
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
	char path[PATH_MAX], dir[PATH_MAX], base[PATH_MAX], line[128], buf[512];
	unsigned long long count, seq, t0, t1;
	long interval;
	struct stat st;
	int fd, log;

	if (argc < 5) {
		fprintf(stderr, "usage: attach_reader FILE LOG INTERVAL_US COUNT [cold]\n");
		return 2;
	}
	interval = strtol(argv[3], NULL, 10);
	count = strtoull(argv[4], NULL, 10);
	log = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
	if (log < 0) {
		fprintf(stderr, "attach_reader: %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	snprintf(path, sizeof(path), "%s", argv[1]);
	snprintf(dir, sizeof(dir), "%s", dirname(path));
	snprintf(path, sizeof(path), "%s", argv[1]);
	snprintf(base, sizeof(base), "%s", basename(path));
	if (chdir(dir) < 0 || (fd = open(base, O_RDONLY | O_CLOEXEC)) < 0 || fstat(fd, &st) < 0) {
		fprintf(stderr, "attach_reader: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	if (st.st_size < 512) {
		fprintf(stderr, "attach_reader: %s: smaller than 512 bytes\n", argv[1]);
		return 1;
	}
	if (argc > 5 && !strcmp(argv[5], "cold"))
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	for (seq = 0; !count || seq < count; seq++) {
		off_t off = (off_t)((seq * 512) % (unsigned long long)(st.st_size / 512 * 512));
		ssize_t r;
		int n;

		t0 = mono();
		r = pread(fd, buf, sizeof(buf), off);
		t1 = mono();
		n = snprintf(line, sizeof(line), "%llu %llu %llu %lld %zd\n", seq, t0, t1,
			     (long long)off, r);
		if (write(log, line, (size_t)n) != n)
			return 1;
		if (r != (ssize_t)sizeof(buf))
			return 1;
		if (interval > 0)
			usleep((useconds_t)interval);
	}
	return 0;
}
