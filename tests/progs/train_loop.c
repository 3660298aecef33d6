// SPDX-License-Identifier: MIT
/*
 * train_loop — a training loop with known I/O, for t_report_train.sh.
 *
 *   train_loop setup DIR NFILES KIB      write DIR/sample-NNN.bin (KIB each),
 *                                        fsync, drop them from the page cache
 *   train_loop run DIR NFILES KIB STEPS STEP_MS CKPT_MIB
 *
 * run, all on the main thread:
 *   1. posix_fadvise(DONTNEED) on every file (not a traced call), so that
 *   2. epoch 1 reads every file (256 KiB reads, exactly the file) from the
 *      device, and
 *   3. epoch 2 reads them again from the page cache;
 *   4. STEPS "training steps" of STEP_MS ms of CPU spin each;
 *   5. a checkpoint: DIR/ckpt.pt, CKPT_MIB writes of 1 MiB, fsync, close.
 * It prints one JSON line: its own measurements (ns) of the time spent in
 * the traced calls (open/read/write/fsync/close), in spinning, and in all.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (256 * 1024)

static uint64_t now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t io_ns;
static char buf[1 << 20];

static void die(const char *what)
{
	perror(what);
	exit(1);
}

/* time one traced call */
#define TIMED(expr) ({ uint64_t t0_ = now(); __typeof__(expr) r_ = (expr); io_ns += now() - t0_; r_; })

static void name(char *out, size_t len, const char *dir, int i)
{
	snprintf(out, len, "%s/sample-%03d.bin", dir, i);
}

static void read_all(const char *dir, int n, size_t size)
{
	char p[4096];

	for (int i = 0; i < n; i++) {
		int fd;

		name(p, sizeof(p), dir, i);
		fd = TIMED(open(p, O_RDONLY));
		if (fd < 0)
			die(p);
		for (size_t off = 0; off < size; off += CHUNK) {
			size_t want = size - off < CHUNK ? size - off : CHUNK;

			if (TIMED(read(fd, buf, want)) != (ssize_t)want)
				die("read");
		}
		TIMED(close(fd));
	}
}

int main(int argc, char **argv)
{
	uint64_t t_start = now(), spin_ns = 0;
	char p[4096];
	size_t size;
	int n;

	if (argc < 5 || (strcmp(argv[1], "setup") && strcmp(argv[1], "run")) ||
	    (!strcmp(argv[1], "run") && argc != 8)) {
		fprintf(stderr, "usage: train_loop setup DIR NFILES KIB\n"
				"       train_loop run DIR NFILES KIB STEPS STEP_MS CKPT_MIB\n");
		return 2;
	}
	n = atoi(argv[3]);
	size = (size_t)atoi(argv[4]) * 1024;
	memset(buf, 0x5a, sizeof(buf));
	if (!strcmp(argv[1], "setup")) {
		for (int i = 0; i < n; i++) {
			int fd;

			name(p, sizeof(p), argv[2], i);
			fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
			if (fd < 0)
				die(p);
			for (size_t off = 0; off < size; off += sizeof(buf)) {
				size_t w = size - off < sizeof(buf) ? size - off : sizeof(buf);

				if (write(fd, buf, w) != (ssize_t)w)
					die("write");
			}
			if (fsync(fd) || posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED))
				die("fsync");
			close(fd);
		}
		return 0;
	}
	{
		int steps = atoi(argv[5]), step_ms = atoi(argv[6]), ckpt_mib = atoi(argv[7]);
		volatile uint64_t sink = 0;
		int fd;

		for (int i = 0; i < n; i++) {
			name(p, sizeof(p), argv[2], i);
			fd = open(p, O_RDONLY);   /* traced, but not part of the loop */
			if (fd < 0 || posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED))
				die(p);
			close(fd);
		}
		io_ns = 0;
		t_start = now();
		read_all(argv[2], n, size);     /* epoch 1: from the device */
		read_all(argv[2], n, size);     /* epoch 2: page cache */
		for (int s = 0; s < steps; s++) {
			uint64_t t0 = now();

			while (now() - t0 < (uint64_t)step_ms * 1000000ull)
				sink += t0;
			spin_ns += now() - t0;
		}
		snprintf(p, sizeof(p), "%s/ckpt.pt", argv[2]);
		fd = TIMED(open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644));
		if (fd < 0)
			die(p);
		for (int i = 0; i < ckpt_mib; i++)
			if (TIMED(write(fd, buf, sizeof(buf))) != (ssize_t)sizeof(buf))
				die("write");
		if (TIMED(fsync(fd)))
			die("fsync");
		TIMED(close(fd));
		printf("{\"io_ns\": %llu, \"spin_ns\": %llu, \"loop_ns\": %llu}\n",
		       (unsigned long long)io_ns, (unsigned long long)spin_ns,
		       (unsigned long long)(now() - t_start));
	}
	return 0;
}
