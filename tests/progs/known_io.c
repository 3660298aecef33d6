// SPDX-License-Identifier: MIT
/*
 * known_io — file I/O of exactly known shape, for holding a gpuio capture
 * against (the VM suite, tests/vm/guest-tests.sh).  Silent unless it fails:
 * it must not write to its own stdout/stderr, which may be regular files.
 *
 *   known_io [-w FIFO] DIR
 *
 * -w FIFO: after opening w.dat for writing (before any write), block until a
 * byte can be read from FIFO -- time for a tracer to attach (`gpuio trace -p`)
 * while w.dat is already open.
 *
 * DIR/w.dat (buffered, then O_DIRECT):
 *   openat(O_WRONLY|O_CREAT|O_TRUNC); 16 x write(4096); fsync; close
 *   openat(O_RDONLY); fadvise(DONTNEED) (drops the clean pages, so the
 *     reads below miss the page cache: 16 pages); 32 x read(2048); close
 *   openat(O_RDONLY|O_DIRECT); 8 x pread64(4096) at i*4096; close
 *   => reads 40 ops / 98304 B, writes 16 / 65536 B, 3 opens, 3 closes,
 *      1 fsync, 16 page-cache misses, 8 O_DIRECT block reads of 4096 B
 * DIR/v.dat (the other read/write calls):
 *   openat(O_RDWR|O_CREAT|O_TRUNC); 4 x pwrite64(4096) at i*4096;
 *   2 x writev({1000, 3000}) from position 0; 2 x preadv({2048, 2048}) at
 *   0 and 4096; readv({100, 200}) from position 8000; preadv2({4096}) at
 *   8192, flags 0; pread64(4096) at 12288; close
 *   => reads 5 ops / 16684 B, writes 6 / 24384 B, 1 open, 1 close
 *
 * With KNOWN_IO_SWITCHES=FILE in the environment, FILE gets, after the
 * reads, one line per O_DIRECT pread64: its offset and the thread's
 * voluntary context switches inside it (getrusage's ru_nvcsw): 0 when the
 * device answered before the thread went to sleep, which a fast virtual
 * disk does now and then.
 *
 * Exit 0, or 1 with the failing step on stderr.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <unistd.h>

static const char *step;

static void die(void)
{
	fprintf(stderr, "known_io: %s: %s\n", step, errno ? strerror(errno) : "short transfer");
	exit(1);
}

#define DO(what, expr, want) do { step = (what); errno = 0; \
	if ((long)(expr) != (long)(want)) die(); } while (0)

int main(int argc, char **argv)
{
	static char buf[4096], wpath[4096], vpath[4096];
	const char *fifo = NULL, *sw;
	long nvcsw[8];
	char *dbuf;
	int fd, i;

	if (argc == 4 && !strcmp(argv[1], "-w")) {
		fifo = argv[2];
		argv += 2;
		argc -= 2;
	}
	if (argc != 2) {
		fprintf(stderr, "usage: known_io [-w FIFO] DIR\n");
		return 2;
	}
	snprintf(wpath, sizeof(wpath), "%s/w.dat", argv[1]);
	snprintf(vpath, sizeof(vpath), "%s/v.dat", argv[1]);
	memset(buf, 'k', sizeof(buf));
	if (posix_memalign((void **)&dbuf, 4096, 4096))
		return 1;
	memset(dbuf, 0, 4096);   /* fault the O_DIRECT buffer in before the reads */

	/* ---- w.dat ---- */
	step = "open w.dat for writing";
	fd = open(wpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		die();
	if (fifo) {
		int ff;
		char c;

		step = "wait on the fifo";
		ff = open(fifo, O_RDONLY);
		if (ff < 0 || read(ff, &c, 1) != 1)
			die();
		close(ff);
	}
	for (i = 0; i < 16; i++)
		DO("write", write(fd, buf, 4096), 4096);
	DO("fsync", fsync(fd), 0);
	DO("close", close(fd), 0);

	step = "open w.dat for reading";
	fd = open(wpath, O_RDONLY);
	if (fd < 0)
		die();
	step = "posix_fadvise";
	if ((errno = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)) != 0)
		die();
	for (i = 0; i < 32; i++)
		DO("read", read(fd, buf, 2048), 2048);
	DO("close", close(fd), 0);

	step = "open w.dat O_DIRECT";
	fd = open(wpath, O_RDONLY | O_DIRECT);
	if (fd < 0)
		die();
	for (i = 0; i < 8; i++) {
		struct rusage r0, r1;

		getrusage(RUSAGE_THREAD, &r0);
		DO("O_DIRECT pread", pread(fd, dbuf, 4096, (off_t)i * 4096), 4096);
		getrusage(RUSAGE_THREAD, &r1);
		nvcsw[i] = r1.ru_nvcsw - r0.ru_nvcsw;
	}
	DO("close", close(fd), 0);
	if ((sw = getenv("KNOWN_IO_SWITCHES"))) {
		FILE *f = fopen(sw, "w");

		step = "write KNOWN_IO_SWITCHES";
		if (!f)
			die();
		for (i = 0; i < 8; i++)
			fprintf(f, "%d %ld\n", i * 4096, nvcsw[i]);
		if (fclose(f))
			die();
	}

	/* ---- v.dat ---- */
	step = "open v.dat";
	fd = open(vpath, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		die();
	for (i = 0; i < 4; i++)
		DO("pwrite64", pwrite(fd, buf, 4096, (off_t)i * 4096), 4096);
	{
		struct iovec w2[2] = { { buf, 1000 }, { buf, 3000 } };
		struct iovec r2[2] = { { buf, 2048 }, { buf + 2048, 2048 } };
		struct iovec rv[2] = { { buf, 100 }, { buf + 100, 200 } };
		struct iovec r1[1] = { { buf, 4096 } };

		DO("writev", writev(fd, w2, 2), 4000);
		DO("writev", writev(fd, w2, 2), 4000);
		DO("preadv", preadv(fd, r2, 2, 0), 4096);
		DO("preadv", preadv(fd, r2, 2, 4096), 4096);
		DO("readv", readv(fd, rv, 2), 300);
		DO("preadv2", preadv2(fd, r1, 1, 8192, 0), 4096);
	}
	DO("pread64", pread(fd, buf, 4096, 12288), 4096);
	DO("close", close(fd), 0);
	return 0;
}
