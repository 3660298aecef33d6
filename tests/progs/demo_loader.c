// SPDX-License-Identifier: MIT
/*
 * demo_loader — a small stand-in for a training job's input pipeline, used
 * by `make demo`: it writes a few dataset shards, forks data-loader workers
 * that read them (cold on the first epoch, cached after), and writes and
 * fsyncs a "checkpoint" after each epoch. Real I/O, known sizes, ~2 s.
 *
 * usage: demo_loader DIR [WORKERS] [EPOCHS]
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#define SHARDS 8
#define SHARD_BYTES (4 << 20)
#define CHUNK (256 << 10)

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
	fprintf(stderr, "demo_loader: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void write_file(const char *path, size_t bytes)
{
	static char buf[CHUNK];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0)
		die(path);
	memset(buf, 'x', sizeof(buf));
	for (size_t done = 0; done < bytes; done += CHUNK)
		if (write(fd, buf, CHUNK) != CHUNK)
			die("write");
	if (fsync(fd) < 0)
		die("fsync");
	close(fd);
}

static void read_shard(const char *path, int cold)
{
	static char buf[CHUNK];
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		die(path);
	/* drop it from the page cache so the reads go to the disk */
	if (cold)
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		usleep(2000);          /* "decode + augment" between reads */
	if (n < 0)
		die("read");
	close(fd);
}

int main(int argc, char **argv)
{
	int workers = argc > 2 ? atoi(argv[2]) : 2;
	int epochs = argc > 3 ? atoi(argv[3]) : 2;
	char path[4096];

	if (argc < 2 || workers < 1 || epochs < 1) {
		fprintf(stderr, "usage: demo_loader DIR [WORKERS] [EPOCHS]\n");
		return 2;
	}
	if (mkdir(argv[1], 0755) < 0 && errno != EEXIST)
		die(argv[1]);
	for (int s = 0; s < SHARDS; s++) {
		snprintf(path, sizeof(path), "%s/shard-%02d.bin", argv[1], s);
		write_file(path, SHARD_BYTES);
	}
	/* the loader's own rate: 256 KiB reads ("samples") per second of the
	 * read phases of the warm epochs (all but the first) */
	double warm_s = 0;
	for (int e = 0; e < epochs; e++) {
		double t0 = now_s();

		for (int w = 0; w < workers; w++) {
			pid_t pid = fork();
			if (pid < 0)
				die("fork");
			if (pid == 0) {
				for (int s = w; s < SHARDS; s += workers) {
					snprintf(path, sizeof(path), "%s/shard-%02d.bin", argv[1], s);
					read_shard(path, e == 0);
				}
				_exit(0);
			}
		}
		while (wait(NULL) > 0)
			;
		if (e > 0)
			warm_s += now_s() - t0;
		snprintf(path, sizeof(path), "%s/checkpoint-%d.pt", argv[1], e);
		write_file(path, 8 << 20);
	}
	printf("demo_loader: %d shards of %d MiB read by %d workers for %d epochs; "
	       "one 8 MiB checkpoint per epoch\n", SHARDS, SHARD_BYTES >> 20, workers, epochs);
	if (epochs > 1)
		printf("demo_loader: warm epochs: %d samples in %.3f s, samples_per_s=%.1f\n",
		       (epochs - 1) * SHARDS * (SHARD_BYTES / CHUNK), warm_s,
		       (epochs - 1) * SHARDS * (SHARD_BYTES / CHUNK) / warm_s);
	return 0;
}
