// SPDX-License-Identifier: MIT
/*
 * anon_files.c — files without an ordinary name, each written and read with
 * known sizes: a memfd, an O_TMPFILE file, a file unlinked while open, a
 * pipe and an eventfd. Prints one JSON line per file with the name the
 * kernel gives it in /proc/self/fd (the ground truth t_anon_names.sh checks
 * gpuio's paths against) and the bytes it wrote and read.
 *
 * usage: anon_files DIR
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/mman.h>

static char buf[8192];

static void report(const char *what, int fd, size_t wrote, size_t got)
{
	char link[64], name[4096];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, name, sizeof(name) - 1);
	if (n < 0) {
		perror(link);
		exit(1);
	}
	name[n] = 0;
	/* names here are plain ASCII: printed as a JSON string as they are */
	printf("{\"what\":\"%s\",\"fd\":%d,\"name\":\"%s\",\"wrote\":%zu,\"read\":%zu}\n", what, fd,
	       name, wrote, got);
}

static void check(ssize_t got, size_t want, const char *what)
{
	if (got != (ssize_t)want) {
		fprintf(stderr, "anon_files: %s: %zd of %zu bytes (%s)\n", what, got, want,
			strerror(errno));
		exit(1);
	}
}

/* write w bytes at 0 then pread r bytes at 0 */
static void file_io(const char *what, int fd, size_t w, size_t r)
{
	check(pwrite(fd, buf, w, 0), w, what);
	check(pread(fd, buf, r, 0), r, what);
	report(what, fd, w, r);
}

int main(int argc, char **argv)
{
	char path[4096];
	int fd, p[2];
	uint64_t one = 1;

	if (argc != 2) {
		fprintf(stderr, "usage: anon_files DIR\n");
		return 2;
	}
	memset(buf, 'x', sizeof(buf));
	fd = memfd_create("gpuio-memfd", 0);
	if (fd < 0)
		return perror("memfd_create"), 1;
	file_io("memfd", fd, 4096, 1000);

	fd = open(argv[1], O_TMPFILE | O_RDWR, 0600);
	if (fd < 0)
		return perror("O_TMPFILE"), 1;
	file_io("tmpfile", fd, 3000, 2000);

	snprintf(path, sizeof(path), "%s/unlinked-later.dat", argv[1]);
	fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0600);
	if (fd < 0 || unlink(path))
		return perror(path), 1;
	file_io("unlinked", fd, 5000, 700);

	if (pipe(p))
		return perror("pipe"), 1;
	check(write(p[1], buf, 300), 300, "pipe");
	check(read(p[0], buf, 300), 300, "pipe");
	report("pipe", p[0], 0, 300);
	report("pipe_w", p[1], 300, 0);

	fd = eventfd(0, 0);
	if (fd < 0)
		return perror("eventfd"), 1;
	check(write(fd, &one, 8), 8, "eventfd");
	check(read(fd, &one, 8), 8, "eventfd");
	report("eventfd", fd, 8, 8);
	return 0;
}
