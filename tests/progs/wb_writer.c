// SPDX-License-Identifier: MIT
/*
 * wb_writer — dirty a file in the page cache and wait, for
 * tests/t_writeback.sh.
 *
 *   wb_writer FILE BYTES READY GO
 *
 * Writes BYTES (a multiple of 64 KiB) to FILE with buffered write(2)s (no
 * sync), then creates READY holding its pid, then waits (up to 60 s) until
 * GO exists, and exits 0. Whoever syncs FILE meanwhile writes back pages
 * this process dirtied.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static char buf[65536];
	char tmp[4096], line[32];
	long long bytes, done = 0;
	int fd, n;

	if (argc != 5) {
		fprintf(stderr, "usage: wb_writer FILE BYTES READY GO\n");
		return 2;
	}
	bytes = atoll(argv[2]);
	memset(buf, 'w', sizeof(buf));
	fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		fprintf(stderr, "wb_writer: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	while (done < bytes) {
		ssize_t k = write(fd, buf, sizeof(buf));
		if (k <= 0)
			return 1;
		done += k;
	}
	close(fd);
	snprintf(tmp, sizeof(tmp), "%s.tmp", argv[3]);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	n = snprintf(line, sizeof(line), "%d\n", (int)getpid());
	if (fd < 0 || write(fd, line, (size_t)n) != n || close(fd) != 0 || rename(tmp, argv[3]) != 0)
		return 1;
	for (int i = 0; i < 3000 && access(argv[4], F_OK) != 0; i++)
		usleep(20000);
	return 0;
}
