// SPDX-License-Identifier: MIT
/*
 * mmap_touch — read files only by touching their pages through a mapping,
 * and measure what that did, for tests/t_mmap_faults.sh.
 *
 *   mmap_touch PASSES [random:|seq:]FILE...
 *
 * PASSES times, for each FILE in turn: open it, map it whole (PROT_READ,
 * MAP_SHARED), madvise MADV_RANDOM for "random:" (no readahead: each page
 * its own fault) or leave the default (readahead, fault-around), and read
 * one byte of every page in order. Around each touch loop, and nothing but
 * the loop, the thread's own fault counters (getrusage RUSAGE_THREAD) and
 * CLOCK_MONOTONIC; before and after it, mincore: how many of the file's
 * pages were resident. One JSON object per loop on stdout (printed at the
 * end, so that printing faults nothing inside a loop):
 *
 *   {"pass":0,"file":"/abs/path","mode":"random","size":B,"pages":P,
 *    "resident_before":R0,"resident_after":R1,"majflt":M,"minflt":m,
 *    "t0":NS,"t1":NS,"pid":PID,"tid":TID}
 *
 * Exit 0 when every loop touched every page.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#define MAX_LOOPS 64

struct loop {
	int pass;
	char path[PATH_MAX];
	const char *mode;
	long long size, pages, res0, res1, majflt, minflt;
	unsigned long long t0, t1;
};

static struct loop loops[MAX_LOOPS];
static unsigned char *vec;      /* mincore's vector, touched before any loop */
static size_t vec_len;

/* Pages the kernel reclaimed or dropped, node-wide (/proc/vmstat): a change
 * during the run means mincore's counts may not be this program's doing. */
static long long reclaimed(void)
{
	char name[64];
	long long v, sum = 0;
	FILE *f = fopen("/proc/vmstat", "r");

	if (!f)
		return 0;
	while (fscanf(f, "%63s %lld", name, &v) == 2)
		if (!strncmp(name, "pgsteal_", 8) || !strcmp(name, "drop_pagecache"))
			sum += v;
	fclose(f);
	return sum;
}

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static long long resident(void *m, size_t len, size_t pages)
{
	long long n = 0;

	if (mincore(m, len, vec) != 0) {
		fprintf(stderr, "mmap_touch: mincore: %s\n", strerror(errno));
		exit(1);
	}
	for (size_t i = 0; i < pages; i++)
		n += vec[i] & 1;
	return n;
}

/* The stack the loops will use, faulted in now (an anonymous fault inside a
 * loop would be counted with the file's). */
static void __attribute__((noinline)) prefault_stack(void)
{
	volatile char buf[256 << 10];

	memset((char *)buf, 1, sizeof(buf));
}

static unsigned __attribute__((noinline)) touch(const volatile unsigned char *p, size_t len,
					       long ps)
{
	unsigned sum = 0;

	for (size_t off = 0; off < len; off += (size_t)ps)
		sum += p[off];
	return sum;
}

static void one(struct loop *l, const char *arg, long ps)
{
	const char *path = arg;
	struct rusage r0, r1;
	struct stat st;
	size_t len, pages;
	void *m;
	int fd;

	l->mode = "seq";
	if (!strncmp(arg, "random:", 7)) {
		l->mode = "random";
		path = arg + 7;
	} else if (!strncmp(arg, "seq:", 4)) {
		path = arg + 4;
	}
	if (!realpath(path, l->path)) {
		fprintf(stderr, "mmap_touch: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st) != 0 || st.st_size <= 0) {
		fprintf(stderr, "mmap_touch: %s: cannot open or empty\n", path);
		exit(1);
	}
	len = (size_t)st.st_size;
	pages = (len + (size_t)ps - 1) / (size_t)ps;
	if (pages > vec_len) {
		fprintf(stderr, "mmap_touch: %s: larger than the mincore vector\n", path);
		exit(1);
	}
	m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		fprintf(stderr, "mmap_touch: mmap %s: %s\n", path, strerror(errno));
		exit(1);
	}
	if (!strcmp(l->mode, "random") && madvise(m, len, MADV_RANDOM) != 0) {
		fprintf(stderr, "mmap_touch: madvise: %s\n", strerror(errno));
		exit(1);
	}
	l->size = (long long)len;
	l->pages = (long long)pages;
	l->res0 = resident(m, len, pages);
	getrusage(RUSAGE_THREAD, &r0);
	l->t0 = now_ns();
	touch(m, len, ps);
	l->t1 = now_ns();
	getrusage(RUSAGE_THREAD, &r1);
	l->res1 = resident(m, len, pages);
	l->majflt = r1.ru_majflt - r0.ru_majflt;
	l->minflt = r1.ru_minflt - r0.ru_minflt;
	munmap(m, len);
	close(fd);
}

int main(int argc, char **argv)
{
	long ps = sysconf(_SC_PAGESIZE);
	int passes, n = 0;
	long long rec0;

	if (argc < 3 || (passes = atoi(argv[1])) < 1 || passes * (argc - 2) > MAX_LOOPS) {
		fprintf(stderr, "usage: mmap_touch PASSES [random:|seq:]FILE...\n");
		return 2;
	}
	vec_len = 1 << 20;              /* 4 GiB of pages */
	vec = malloc(vec_len);
	if (!vec)
		return 1;
	memset(vec, 0, vec_len);
	prefault_stack();
	(void)now_ns();                 /* the vDSO's first call, outside the loops */
	rec0 = reclaimed();
	for (int p = 0; p < passes; p++)
		for (int i = 2; i < argc; i++, n++) {
			loops[n].pass = p;
			one(&loops[n], argv[i], ps);
		}
	rec0 = reclaimed() - rec0;
	for (int i = 0; i < n; i++) {
		const struct loop *l = &loops[i];

		printf("{\"pass\":%d,\"file\":\"%s\",\"mode\":\"%s\",\"size\":%lld,\"pages\":%lld,"
		       "\"resident_before\":%lld,\"resident_after\":%lld,\"majflt\":%lld,"
		       "\"minflt\":%lld,\"t0\":%llu,\"t1\":%llu,\"pid\":%d,\"tid\":%ld}\n",
		       l->pass, l->path, l->mode, l->size, l->pages, l->res0, l->res1, l->majflt,
		       l->minflt, l->t0, l->t1, getpid(), (long)syscall(SYS_gettid));
		if (l->res1 != l->pages)
			return 3;       /* a page reclaimed during the run: mincore is no ground truth */
	}
	if (rec0) {
		fprintf(stderr, "mmap_touch: the kernel reclaimed %lld pages during the run\n", rec0);
		return 3;
	}
	return 0;
}
