/*
 * preadloop — per-call cost workload for `make bench`.
 *
 *   preadloop [--threads N] [--size BYTES] FILE COUNT [SEED]
 *
 * Does COUNT random pread()s of FILE at 4 KiB-aligned offsets (each read is
 * --size bytes, default 4096) and prints one line
 *
 *   ns_per_call=N calls=COUNT bytes=B cpu_per_call_ns=C
 *
 * timed with CLOCK_MONOTONIC around the loop only (open, fstat and thread
 * start-up are outside).  With --threads N, each of N threads does COUNT
 * calls on its own descriptor; ns_per_call is then wall time / total calls
 * (i.e. aggregate throughput), and calls is the total.  cpu_per_call_ns:
 * the process's own CPU time over the same span (CLOCK_PROCESS_CPUTIME_ID),
 * which leaves out other processes (a tracer's own work). FILE should
 * already be in the page cache: this measures syscall overhead, not the disk.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct worker {
	pthread_t tid;
	const char *path;
	uint64_t count, seed, blocks, bytes;
	size_t size;
	int fd, err;
	pthread_barrier_t *start;
};

/* xorshift64*: cheap and good enough to spread offsets over the file. */
static inline uint64_t next_rand(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1DULL;
}

static void *run(void *arg)
{
	struct worker *w = arg;
	char *buf;
	uint64_t s = w->seed ? w->seed : 0x9E3779B97F4A7C15ULL;

	if (posix_memalign((void **)&buf, 4096, w->size)) {
		w->err = ENOMEM;
		return NULL;
	}
	memset(buf, 0, w->size);
	if (w->start)
		pthread_barrier_wait(w->start);
	for (uint64_t i = 0; i < w->count; i++) {
		off_t off = (off_t)(next_rand(&s) % w->blocks) * 4096;
		ssize_t n = pread(w->fd, buf, w->size, off);

		if (n < 0) {
			w->err = errno;
			break;
		}
		w->bytes += (uint64_t)n;
	}
	free(buf);
	return NULL;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void usage(void)
{
	fprintf(stderr, "usage: preadloop [--threads N] [--size BYTES] FILE COUNT [SEED]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int nthreads = 1;
	size_t size = 4096;
	int i = 1;

	for (; i < argc && argv[i][0] == '-' && argv[i][1] == '-'; i++) {
		if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			nthreads = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--size") && i + 1 < argc)
			size = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--")) {
			i++;
			break;
		} else
			usage();
	}
	if (argc - i < 2 || argc - i > 3 || nthreads < 1 || nthreads > 1024 || size < 1)
		usage();

	const char *path = argv[i];
	uint64_t count = strtoull(argv[i + 1], NULL, 0);
	uint64_t seed = argc - i == 3 ? strtoull(argv[i + 2], NULL, 0) : 1;

	int fd = open(path, O_RDONLY);
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0) {
		perror(path);
		return 1;
	}
	uint64_t blocks = (uint64_t)st.st_size / 4096;

	if (blocks == 0) {
		fprintf(stderr, "preadloop: %s is smaller than 4 KiB\n", path);
		return 1;
	}
	/* Keep every read inside the file. */
	if (size > 4096 && blocks > (size + 4095) / 4096)
		blocks -= (size + 4095) / 4096 - 1;

	struct worker *w = calloc(nthreads, sizeof(*w));
	pthread_barrier_t bar;
	uint64_t t0, t1, c0, c1, bytes = 0;

	if (!w)
		return 1;
	for (int t = 0; t < nthreads; t++) {
		w[t] = (struct worker){ .path = path, .count = count, .blocks = blocks,
			.size = size, .seed = seed * 0x100000001B3ULL + (uint64_t)t * 7919 + 1 };
		/* One descriptor per thread so threads don't share an fd refcount line. */
		w[t].fd = t == 0 ? fd : open(path, O_RDONLY);
		if (w[t].fd < 0) {
			perror(path);
			return 1;
		}
	}

	if (nthreads == 1) {
		c0 = cpu_ns();
		t0 = now_ns();
		run(&w[0]);
		t1 = now_ns();
		c1 = cpu_ns();
	} else {
		/* nthreads workers + main wait on the barrier; time from release. */
		pthread_barrier_init(&bar, NULL, nthreads + 1);
		for (int t = 0; t < nthreads; t++) {
			w[t].start = &bar;
			if (pthread_create(&w[t].tid, NULL, run, &w[t])) {
				fprintf(stderr, "preadloop: pthread_create failed\n");
				return 1;
			}
		}
		pthread_barrier_wait(&bar);
		c0 = cpu_ns();
		t0 = now_ns();
		for (int t = 0; t < nthreads; t++)
			pthread_join(w[t].tid, NULL);
		t1 = now_ns();
		c1 = cpu_ns();
	}

	for (int t = 0; t < nthreads; t++) {
		if (w[t].err) {
			fprintf(stderr, "preadloop: pread: %s\n", strerror(w[t].err));
			return 1;
		}
		bytes += w[t].bytes;
	}
	uint64_t calls = count * (uint64_t)nthreads;

	printf("ns_per_call=%llu calls=%llu bytes=%llu cpu_per_call_ns=%llu\n",
	       (unsigned long long)(calls ? (t1 - t0) / calls : 0),
	       (unsigned long long)calls, (unsigned long long)bytes,
	       (unsigned long long)(calls ? (c1 - c0) / calls : 0));
	return 0;
}
