// SPDX-License-Identifier: MIT
/*
 * prefetch_hints — prefetch hints with known ranges, and the page cache's
 * own answer (mincore) before each read that follows them. For each of three
 * 4 MiB files in DIR:
 *   f.dat  posix_fadvise(POSIX_FADV_WILLNEED) on its first 2 MiB
 *   r.dat  readahead() of its first 2 MiB
 *   m.dat  madvise(MADV_WILLNEED) on a mapping of its first 2 MiB
 *   l.dat  posix_fadvise(POSIX_FADV_WILLNEED) as f.dat, then the pages are
 *          dropped again (POSIX_FADV_DONTNEED) before the reads: a hint
 *          wasted, whose reads all go to the device
 * the file is written, synced and dropped from the page cache
 * (POSIX_FADV_DONTNEED, checked with mincore), hinted, the hinted pages
 * waited for (mincore), then read in 256 KiB preads. Before each read
 * mincore says whether all of its pages were cached. POSIX_FADV_RANDOM
 * before the hint keeps the kernel's own readahead out of the reads: a read
 * adds pages to the page cache exactly when its own were not all there.
 *
 * Prints per file:
 *   file=NAME hint=CALL hints=H hinted=BYTES reads_in_range=N cached_in_range=C
 *   read_bytes_in_range=B missing_pages_in_range=P
 *   (H: the fadvise/readahead/madvise calls made; P: pages mincore found
 *   missing before the reads in the range)
 * (exit 3: the kernel kept the pages after DONTNEED, or never read the hinted
 * ones: nothing to compare; the test says so and tries again)
 *
 * usage: prefetch_hints DIR
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SIZE  (4u << 20)
#define HINT  (2u << 20)
#define CHUNK (256u << 10)
#define PAGE  4096u

static void die(const char *what)
{
	perror(what);
	exit(1);
}

/* pages of [off, off+len) of fd that are in the page cache */
static unsigned resident(int fd, unsigned off, unsigned len)
{
	unsigned char vec[SIZE / PAGE];
	unsigned n = 0;
	void *p = mmap(NULL, SIZE, PROT_READ, MAP_SHARED, fd, 0);

	if (p == MAP_FAILED || mincore(p, SIZE, vec))
		die("mincore");
	munmap(p, SIZE);
	for (unsigned i = off / PAGE; i < (off + len) / PAGE; i++)
		n += vec[i] & 1;
	return n;
}

static void pause_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* wait until [off, off+len) is all cached (want 1) or none of it (want 0) */
static int settle(int fd, unsigned off, unsigned len, int want)
{
	for (int i = 0; i < 2000; i++) {
		unsigned n = resident(fd, off, len);

		if (want ? n == len / PAGE : n == 0)
			return 0;
		pause_ms(1);
	}
	return -1;
}

static int one(const char *dir, const char *name, int how)
{
	static const char *const hint[] = { "fadvise64", "readahead", "madvise", "fadvise64" };
	unsigned reads = 0, cached = 0, bytes = 0, missing = 0;
	char path[4096], *buf = malloc(CHUNK);
	void *map = NULL;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || !buf)
		die("open");
	for (unsigned off = 0; off < SIZE; off += CHUNK) {
		memset(buf, (int)(off / CHUNK) + 'a', CHUNK);
		if (pwrite(fd, buf, CHUNK, off) != CHUNK)
			die("pwrite");
	}
	if (fsync(fd) || posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) || settle(fd, 0, SIZE, 0) ||
	    posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM))
		return 3;
	if ((how == 0 || how == 3) && posix_fadvise(fd, 0, HINT, POSIX_FADV_WILLNEED))
		die("fadvise");
	if (how == 1 && syscall(SYS_readahead, fd, 0L, (long)HINT))
		die("readahead");
	if (how == 2) {
		map = mmap(NULL, SIZE, PROT_READ, MAP_SHARED, fd, 0);
		if (map == MAP_FAILED || madvise(map, HINT, MADV_WILLNEED))
			die("madvise");
	}
	if (settle(fd, 0, HINT, 1))
		return 3;
	if (how == 3 && (posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) || settle(fd, 0, SIZE, 0)))
		return 3;
	for (unsigned off = 0; off < SIZE; off += CHUNK) {
		unsigned in = off < HINT, have = in ? resident(fd, off, CHUNK) : 0;
		unsigned all = in && have == CHUNK / PAGE;
		ssize_t r = pread(fd, buf, CHUNK, off);

		if (r != CHUNK)
			die("pread");
		reads += in;
		cached += all;
		missing += in ? CHUNK / PAGE - have : 0;
		bytes += in ? (unsigned)r : 0;
	}
	printf("file=%s hint=%s hints=%d hinted=%u reads_in_range=%u cached_in_range=%u "
	       "read_bytes_in_range=%u missing_pages_in_range=%u\n", name, hint[how],
	       how == 3 ? 4 : 3, HINT, reads, cached, bytes, missing);
	if (map)
		munmap(map, SIZE);
	close(fd);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	int rc;

	if (argc != 2) {
		fprintf(stderr, "usage: prefetch_hints DIR\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if ((rc = one(argv[1], "f.dat", 0)) || (rc = one(argv[1], "r.dat", 1)) ||
	    (rc = one(argv[1], "m.dat", 2)) || (rc = one(argv[1], "l.dat", 3)))
		return rc;
	return 0;
}
