// SPDX-License-Identifier: MIT
/*
 * pc_read — read a file cold, then warm, and say how much of it was in the
 * page cache each time, for tests/t_pagecache.sh.
 *
 *   pc_read FILE
 *
 * Drops FILE from the page cache (posix_fadvise DONTNEED; the file must be
 * clean, e.g. synced), then reads it whole twice: pass 1 with pread64 in
 * 128 KiB calls, pass 2 with read(2) in 128 KiB calls. Before each pass it
 * counts the file's pages resident in the page cache (mincore on a mapping
 * that is never touched) and prints
 *
 *   pages=P bytes=B resident_before_pass1=R1 resident_before_pass2=R2
 *
 * Exit 0 when both passes read the whole file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>

#define CHUNK (128 << 10)

static long resident(int fd, size_t len)
{
	long ps = sysconf(_SC_PAGESIZE), n = 0;
	size_t pages = (len + (size_t)ps - 1) / (size_t)ps;
	unsigned char *vec = malloc(pages);
	void *m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);

	if (!vec || m == MAP_FAILED || mincore(m, len, vec) != 0) {
		fprintf(stderr, "pc_read: mincore: %s\n", strerror(errno));
		exit(1);
	}
	for (size_t i = 0; i < pages; i++)
		n += vec[i] & 1;
	munmap(m, len);
	free(vec);
	return n;
}

int main(int argc, char **argv)
{
	static char buf[CHUNK];
	long long total1 = 0, total2 = 0;
	long r1, r2, ps = sysconf(_SC_PAGESIZE);
	struct stat st;
	ssize_t n;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: pc_read FILE\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY);
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_size == 0) {
		fprintf(stderr, "pc_read: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	r1 = resident(fd, (size_t)st.st_size);
	while ((n = pread(fd, buf, sizeof(buf), total1)) > 0)
		total1 += n;
	r2 = resident(fd, (size_t)st.st_size);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		total2 += n;
	printf("pages=%lld bytes=%lld resident_before_pass1=%ld resident_before_pass2=%ld\n",
	       (long long)((st.st_size + ps - 1) / ps), (long long)st.st_size, r1, r2);
	return total1 == st.st_size && total2 == st.st_size ? 0 : 1;
}
