// SPDX-License-Identifier: MIT
/*
 * sc_all — calls every file syscall gpuio traces, once each, with known
 * arguments, for tests/t_syscalls.sh.
 *
 *   sc_all DIR
 *
 * Creates DIR/a, DIR/b, DIR/c, DIR/d. For every call it makes it prints one
 * JSON object per line on stdout: what it asked for and what the kernel
 * returned (the ground truth the trace is compared with), e.g.
 *
 *   {"call":"pread64","path":"/x/a","fd":3,"bytes":4096,"requested":4096,"offset":12288}
 *
 * Keys: call, path (absolute), fd, bytes (returned), requested, offset,
 * errno (failures), flags (numeric open flags), length (ftruncate/fallocate/
 * sync_file_range), path2/fd2/offset2 (second file of sendfile,
 * copy_file_range, splice), pipe (1 when the call's fd is a pipe: path is not
 * checked then), pipe2 (same for the second fd). Every syscall is made with
 * syscall(2) so that no libc wrapper can turn one call into another.
 * Exits non-zero if any call does not do what it should.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <sys/uio.h>

static char dir[PATH_MAX];
static char buf[1 << 17];

static void die(const char *what)
{
	fprintf(stderr, "sc_all: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void must(long got, long want, const char *what)
{
	if (got != want) {
		fprintf(stderr, "sc_all: %s returned %ld (want %ld): %s\n", what, got, want,
			strerror(errno));
		exit(1);
	}
}

static const char *p(const char *leaf)
{
	static char bufs[4][PATH_MAX];
	static int i;
	char *b = bufs[i++ & 3];

	snprintf(b, PATH_MAX, "%.4000s/%s", dir, leaf);
	return b;
}

/* one expectation line: fmt holds the JSON members after "call" */
static void expect(const char *call, const char *fmt, ...)
{
	va_list ap;

	printf("{\"call\":\"%s\"", call);
	if (fmt && *fmt) {
		putchar(',');
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
	}
	printf("}\n");
	fflush(stdout);
}

int main(int argc, char **argv)
{
	int a, b, c, d, dfd, pfd[2];
	long r;
	loff_t off, off2;
	struct iovec iov[3];
	struct open_how how = { 0 };

	if (argc != 2) {
		fprintf(stderr, "usage: sc_all DIR\n");
		return 2;
	}
	if (!realpath(argv[1], dir))
		die(argv[1]);
	memset(buf, 'x', sizeof(buf));

	/* open(2) itself, not openat */
	a = (int)syscall(SYS_open, p("a"), O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (a < 0)
		die("open a");
	expect("open", "\"path\":\"%s\",\"fd\":%d,\"flags\":%d", p("a"), a,
	       O_RDWR | O_CREAT | O_TRUNC);

	r = syscall(SYS_write, a, buf, 10000);
	must(r, 10000, "write");
	expect("write", "\"path\":\"%s\",\"fd\":%d,\"bytes\":10000,\"requested\":10000,\"offset\":0",
	       p("a"), a);

	r = syscall(SYS_pwrite64, a, buf, 4096, 12288);
	must(r, 4096, "pwrite64");
	expect("pwrite64", "\"path\":\"%s\",\"fd\":%d,\"bytes\":4096,\"requested\":4096,\"offset\":12288",
	       p("a"), a);

	must(lseek(a, 0, SEEK_SET), 0, "lseek");
	/* asks for more than is there at the end: requested != bytes */
	r = syscall(SYS_read, a, buf, 3000);
	must(r, 3000, "read");
	expect("read", "\"path\":\"%s\",\"fd\":%d,\"bytes\":3000,\"requested\":3000,\"offset\":0",
	       p("a"), a);

	r = syscall(SYS_pread64, a, buf, 4096, 12288);
	must(r, 4096, "pread64");
	expect("pread64", "\"path\":\"%s\",\"fd\":%d,\"bytes\":4096,\"requested\":4096,\"offset\":12288",
	       p("a"), a);

	/* short read: file is 16384 bytes, ask 8192 at 12288 */
	r = syscall(SYS_pread64, a, buf, 8192, 12288);
	must(r, 4096, "pread64 short");
	expect("pread64", "\"path\":\"%s\",\"fd\":%d,\"bytes\":4096,\"requested\":8192,\"offset\":12288",
	       p("a"), a);

	/* file position is 3000 */
	iov[0] = (struct iovec){ buf, 1000 };
	iov[1] = (struct iovec){ buf + 1000, 2000 };
	iov[2] = (struct iovec){ buf + 3000, 3000 };
	r = syscall(SYS_writev, a, iov, 3);
	must(r, 6000, "writev");
	expect("writev", "\"path\":\"%s\",\"fd\":%d,\"bytes\":6000,\"requested\":6000,\"offset\":3000",
	       p("a"), a);

	/* position 9000 */
	r = syscall(SYS_readv, a, iov, 2);
	must(r, 3000, "readv");
	expect("readv", "\"path\":\"%s\",\"fd\":%d,\"bytes\":3000,\"requested\":3000,\"offset\":9000",
	       p("a"), a);

	/* preadv/pwritev take the offset split in two longs (lo, hi) */
	r = syscall(SYS_pwritev, a, iov, 2, 20000L, 0L);
	must(r, 3000, "pwritev");
	expect("pwritev", "\"path\":\"%s\",\"fd\":%d,\"bytes\":3000,\"requested\":3000,\"offset\":20000",
	       p("a"), a);

	r = syscall(SYS_preadv, a, iov, 3, 20000L, 0L);
	must(r, 3000, "preadv");     /* file ends at 23000 */
	expect("preadv", "\"path\":\"%s\",\"fd\":%d,\"bytes\":3000,\"requested\":6000,\"offset\":20000",
	       p("a"), a);

	r = syscall(SYS_pwritev2, a, iov, 3, 30000L, 0L, 0);
	must(r, 6000, "pwritev2");
	expect("pwritev2", "\"path\":\"%s\",\"fd\":%d,\"bytes\":6000,\"requested\":6000,\"offset\":30000",
	       p("a"), a);

	r = syscall(SYS_preadv2, a, iov, 2, 31000L, 0L, 0);
	must(r, 3000, "preadv2");
	expect("preadv2", "\"path\":\"%s\",\"fd\":%d,\"bytes\":3000,\"requested\":3000,\"offset\":31000",
	       p("a"), a);

	/* openat relative to a directory fd */
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	if (dfd < 0)
		die("open dir");
	b = (int)syscall(SYS_openat, dfd, "b", O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (b < 0)
		die("openat b");
	expect("openat", "\"path\":\"%s\",\"fd\":%d,\"flags\":%d", p("b"), b,
	       O_WRONLY | O_CREAT | O_TRUNC);

	how.flags = O_RDWR | O_CREAT;
	how.mode = 0644;
	c = (int)syscall(SYS_openat2, AT_FDCWD, p("c"), &how, sizeof(how));
	if (c < 0)
		die("openat2 c");
	expect("openat2", "\"path\":\"%s\",\"fd\":%d,\"flags\":%d", p("c"), c, O_RDWR | O_CREAT);

	d = (int)syscall(SYS_creat, p("d"), 0644);
	if (d < 0)
		die("creat d");
	/* creat(path, mode) is open(path, O_CREAT|O_WRONLY|O_TRUNC, mode) */
	expect("creat", "\"path\":\"%s\",\"fd\":%d,\"flags\":%d", p("d"), d,
	       O_CREAT | O_WRONLY | O_TRUNC);

	must(syscall(SYS_fsync, a), 0, "fsync");
	expect("fsync", "\"path\":\"%s\",\"fd\":%d", p("a"), a);
	must(syscall(SYS_fdatasync, a), 0, "fdatasync");
	expect("fdatasync", "\"path\":\"%s\",\"fd\":%d", p("a"), a);

	must(syscall(SYS_sync_file_range, a, 4096L, 8192L, (long)SYNC_FILE_RANGE_WRITE), 0,
	     "sync_file_range");
	expect("sync_file_range", "\"path\":\"%s\",\"fd\":%d,\"offset\":4096,\"length\":8192",
	       p("a"), a);

	must(syscall(SYS_fallocate, a, 0, 65536L, 131072L), 0, "fallocate");
	expect("fallocate", "\"path\":\"%s\",\"fd\":%d,\"offset\":65536,\"length\":131072",
	       p("a"), a);

	must(syscall(SYS_ftruncate, a, 50000L), 0, "ftruncate");
	expect("ftruncate", "\"path\":\"%s\",\"fd\":%d,\"length\":50000", p("a"), a);

	/* sendfile(out=c, in=a, &off, count): source is a */
	off = 1000;
	r = syscall(SYS_sendfile, c, a, &off, 5000L);
	must(r, 5000, "sendfile");
	expect("sendfile", "\"path\":\"%s\",\"fd\":%d,\"bytes\":5000,\"requested\":5000,"
	       "\"offset\":1000,\"path2\":\"%s\",\"fd2\":%d", p("a"), a, p("c"), c);

	off = 2000;
	off2 = 100;
	r = syscall(SYS_copy_file_range, a, &off, d, &off2, 6000L, 0);
	must(r, 6000, "copy_file_range");
	expect("copy_file_range", "\"path\":\"%s\",\"fd\":%d,\"bytes\":6000,\"requested\":6000,"
	       "\"offset\":2000,\"path2\":\"%s\",\"fd2\":%d,\"offset2\":100", p("a"), a, p("d"), d);

	/* splice file -> pipe, then pipe -> file */
	if (pipe(pfd) < 0)
		die("pipe");
	off = 4096;
	r = syscall(SYS_splice, a, &off, pfd[1], NULL, 8192L, 0);
	must(r, 8192, "splice a->pipe");
	expect("splice", "\"path\":\"%s\",\"fd\":%d,\"bytes\":8192,\"requested\":8192,"
	       "\"offset\":4096,\"fd2\":%d,\"pipe2\":1", p("a"), a, pfd[1]);
	off2 = 0;
	r = syscall(SYS_splice, pfd[0], NULL, b, &off2, 8192L, 0);
	must(r, 8192, "splice pipe->b");
	expect("splice", "\"fd\":%d,\"pipe\":1,\"bytes\":8192,\"requested\":8192,"
	       "\"path2\":\"%s\",\"fd2\":%d,\"offset2\":0", pfd[0], p("b"), b);

	/* a failing read with a file behind it: b is O_WRONLY */
	errno = 0;
	r = syscall(SYS_read, b, buf, 100L);
	if (r != -1 || errno != EBADF) {
		fprintf(stderr, "sc_all: read on O_WRONLY fd gave %ld/%d, want EBADF\n", r, errno);
		return 1;
	}
	expect("read", "\"path\":\"%s\",\"fd\":%d,\"requested\":100,\"offset\":0,"
	       "\"errno\":%d,\"error\":\"EBADF\"", p("b"), b, EBADF);

	/* a pipe read: absent by default, present with --all-fds */
	must(syscall(SYS_write, pfd[1], "hello pipe", 10L), 10, "write pipe");
	expect("write", "\"fd\":%d,\"pipe\":1,\"bytes\":10,\"requested\":10", pfd[1]);
	r = syscall(SYS_read, pfd[0], buf, 64L);
	must(r, 10, "read pipe");
	expect("read", "\"fd\":%d,\"pipe\":1,\"bytes\":10,\"requested\":64", pfd[0]);

	must(syscall(SYS_close, a), 0, "close a");
	expect("close", "\"path\":\"%s\",\"fd\":%d", p("a"), a);
	close(b);
	close(c);
	close(d);
	close(dfd);
	close(pfd[0]);
	close(pfd[1]);
	return 0;
}
