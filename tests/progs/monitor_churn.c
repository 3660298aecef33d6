/*
 * monitor_churn — many short-lived processes doing known I/O (the monitor's
 * soak test).
 *
 *   monitor_churn DIR NPROCS [PARALLEL]
 *
 * Forks NPROCS children, PARALLEL (default 4) at a time; each creates
 * DIR/c.<i % 64>, writes 8 KiB with two write()s, reads them back with one
 * pread() and exits. Prints "procs=N write_bytes=W read_bytes=R" (what the
 * children did, all succeeded) and exits 1 if any child failed.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int child(const char *dir, long i)
{
	char path[4096], buf[8192];
	int fd;

	snprintf(path, sizeof(path), "%s/c.%ld", dir, i % 64);
	memset(buf, (int)(i & 0xff), sizeof(buf));
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return 1;
	if (write(fd, buf, 4096) != 4096 || write(fd, buf + 4096, 4096) != 4096)
		return 1;
	if (pread(fd, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf))
		return 1;
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	long n, par, running = 0, failed = 0;
	int st;

	if (argc < 3) {
		fprintf(stderr, "usage: monitor_churn DIR NPROCS [PARALLEL]\n");
		return 2;
	}
	n = atol(argv[2]);
	par = argc > 3 ? atol(argv[3]) : 4;
	for (long i = 0; i < n; i++) {
		pid_t p;

		if (running == par) {
			if (wait(&st) > 0 && (!WIFEXITED(st) || WEXITSTATUS(st)))
				failed++;
			running--;
		}
		p = fork();
		if (p == 0)
			_exit(child(argv[1], i));
		if (p < 0) {
			perror("fork");
			return 1;
		}
		running++;
	}
	while (running-- > 0)
		if (wait(&st) > 0 && (!WIFEXITED(st) || WEXITSTATUS(st)))
			failed++;
	printf("procs=%ld write_bytes=%ld read_bytes=%ld failed=%ld\n", n, n * 8192, n * 8192, failed);
	return failed ? 1 : 0;
}
