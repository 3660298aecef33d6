/*
 * monitor_paced — I/O at a fixed rate, for the monitor's CPU figure.
 *
 *   monitor_paced FILE RATE SECONDS
 *
 * Does random 4 KiB pread()s of FILE at RATE calls per second (paced in
 * 1 ms steps) for SECONDS and prints "calls=N secs=S rate=R".
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	char buf[4096];
	struct stat st;
	uint64_t calls = 0, s = 88172645463325252ull, blocks;
	double rate, secs, t0, t;
	int fd;

	if (argc != 4) {
		fprintf(stderr, "usage: monitor_paced FILE RATE SECONDS\n");
		return 2;
	}
	rate = atof(argv[2]);
	secs = atof(argv[3]);
	fd = open(argv[1], O_RDONLY);
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_size < 4096) {
		perror(argv[1]);
		return 1;
	}
	blocks = (uint64_t)st.st_size / 4096;
	t0 = now();
	while ((t = now() - t0) < secs) {
		uint64_t due = (uint64_t)(t * rate);

		while (calls < due) {
			s ^= s << 13; s ^= s >> 7; s ^= s << 17;
			if (pread(fd, buf, sizeof(buf), (off_t)(s % blocks) * 4096) < 0) {
				perror("pread");
				return 1;
			}
			calls++;
		}
		usleep(1000);
	}
	t = now() - t0;
	printf("calls=%llu secs=%.3f rate=%.0f\n", (unsigned long long)calls, t, calls / t);
	return 0;
}
