// SPDX-License-Identifier: MIT
/*
 * fault_bench — page faults in a loop, for tests/bench/faults.sh.
 *
 *   fault_bench file PATH ROUNDS     map PATH (in the page cache), read one
 *                                    byte of every page, unmap; ROUNDS times
 *   fault_bench anon MIB ROUNDS      the same on MIB of anonymous memory
 *                                    (written: each page a new zeroed page)
 *
 * Prints "faults=N ns_per_fault=T": the minor faults the loops took (the
 * thread's own getrusage count) and the loops' wall time over them. With a
 * file, fault-around maps up to 16 pages per fault; the time is per fault.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long ps = sysconf(_SC_PAGESIZE), rounds;
	unsigned long long t0, t = 0;
	volatile unsigned sum = 0;
	struct rusage r0, r1;
	long long faults = 0;
	size_t len;
	int fd = -1;

	if (argc != 4 || (rounds = atol(argv[3])) < 1) {
		fprintf(stderr, "usage: fault_bench file PATH ROUNDS | anon MIB ROUNDS\n");
		return 2;
	}
	if (!strcmp(argv[1], "file")) {
		struct stat st;

		fd = open(argv[2], O_RDONLY);
		if (fd < 0 || fstat(fd, &st) != 0) {
			perror(argv[2]);
			return 1;
		}
		len = (size_t)st.st_size;
	} else {
		len = (size_t)atol(argv[2]) << 20;
	}
	for (long r = 0; r < rounds; r++) {
		unsigned char *p = fd >= 0 ? mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0) :
			mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
		getrusage(RUSAGE_THREAD, &r0);
		t0 = now_ns();
		for (size_t off = 0; off < len; off += (size_t)ps) {
			if (fd >= 0)
				sum += p[off];
			else
				p[off] = 1;
		}
		t += now_ns() - t0;
		getrusage(RUSAGE_THREAD, &r1);
		faults += r1.ru_minflt - r0.ru_minflt + r1.ru_majflt - r0.ru_majflt;
		munmap(p, len);
	}
	printf("faults=%lld ns_per_fault=%llu\n", faults,
	       faults ? t / (unsigned long long)faults : 0);
	return 0;
}
