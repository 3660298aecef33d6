// SPDX-License-Identifier: MIT
/*
 * aio_rw — known file I/O through Linux native AIO only (io_submit /
 * io_getevents / io_pgetevents, the raw syscalls: no libaio needed):
 *   COUNT writes of BS bytes at i*BS, BATCH iocbs per io_submit, reaped
 *     with io_getevents;
 *   one IOCB_CMD_FDSYNC;
 *   COUNT reads (IOCB_CMD_PREAD) of the same blocks, one per io_submit,
 *     reaped with io_getevents;
 *   COUNT vectored reads (IOCB_CMD_PREADV, two iovecs of BS/2), reaped
 *     with io_pgetevents;
 *   one read into an address the kernel cannot write: its event's res is
 *     -EFAULT (a request that failed at completion).
 * With "direct" the file is opened O_DIRECT (BS a multiple of 4096).
 * With AIO_RW_READY and AIO_RW_GO set (paths), it creates READY once the file
 * is open and its AIO context set up, and starts its I/O when GO exists (a
 * test attaches in between).
 * Prints what it did, so a test can hold a trace against it.
 *
 * usage: aio_rw FILE COUNT BS [BATCH] [direct]
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

static aio_context_t ctx;
static long submits, reaps;

/* Submit n iocbs (in one io_submit), then reap all n; returns the sum of
 * positive results, counts failures into *failed. */
static long run(struct iocb **cbs, long n, int pgetevents, long *failed)
{
	struct io_event ev[64];
	long got = 0, bytes = 0;

	if (syscall(SYS_io_submit, ctx, n, cbs) != n) {
		perror("aio_rw: io_submit");
		exit(1);
	}
	submits++;
	while (got < n) {
		long r = pgetevents ?
			syscall(SYS_io_pgetevents, ctx, 1L, n - got, ev, NULL, NULL) :
			syscall(SYS_io_getevents, ctx, 1L, n - got, ev, NULL);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			perror("aio_rw: io_getevents");
			exit(1);
		}
		reaps++;
		for (long i = 0; i < r; i++) {
			if (ev[i].res > 0)
				bytes += ev[i].res;
			else if (ev[i].res < 0)
				(*failed)++;
		}
		got += r;
	}
	return bytes;
}

static void die_usage(const char *what)
{
	perror(what);
	exit(2);
}

static void prep(struct iocb *cb, int op, int fd, void *buf, size_t len, long long off)
{
	memset(cb, 0, sizeof(*cb));
	cb->aio_lio_opcode = op;
	cb->aio_fildes = fd;
	cb->aio_buf = (unsigned long)buf;
	cb->aio_nbytes = len;
	cb->aio_offset = off;
}

int main(int argc, char **argv)
{
	long count, batch, wbytes = 0, rbytes = 0, vbytes = 0, failed = 0, fails0;
	struct iocb cb[64], *cbs[64];
	struct iovec iov[2];
	int fd, direct;
	unsigned bs;
	char *buf;

	if (argc < 4) {
		fprintf(stderr, "usage: aio_rw FILE COUNT BS [BATCH] [direct]\n");
		return 2;
	}
	count = atol(argv[2]);
	bs = (unsigned)atoi(argv[3]);
	batch = argc > 4 ? atol(argv[4]) : 4;
	direct = argc > 5 && !strcmp(argv[5], "direct");
	if (batch < 1 || batch > 64 || bs < 2 || posix_memalign((void **)&buf, 4096, (size_t)bs * 64)) {
		fprintf(stderr, "aio_rw: bad BS or BATCH\n");
		return 2;
	}
	memset(buf, 'a', (size_t)bs * 64);
	fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC | (direct ? O_DIRECT : 0), 0644);
	if (fd < 0 || syscall(SYS_io_setup, 128, &ctx) < 0) {
		perror("aio_rw: setup");
		return 1;
	}
	if (getenv("AIO_RW_READY") && getenv("AIO_RW_GO")) {
		struct stat st;
		int r = open(getenv("AIO_RW_READY"), O_WRONLY | O_CREAT, 0644);

		if (r < 0)
			die_usage("aio_rw: AIO_RW_READY");
		close(r);
		while (stat(getenv("AIO_RW_GO"), &st))
			usleep(10000);
	}
	for (long i = 0; i < 64; i++)
		cbs[i] = &cb[i];
	for (long i = 0; i < count; i += batch) {
		long n = count - i < batch ? count - i : batch;

		for (long k = 0; k < n; k++)
			prep(&cb[k], IOCB_CMD_PWRITE, fd, buf + k * bs, bs, (i + k) * (long long)bs);
		wbytes += run(cbs, n, 0, &failed);
	}
	prep(&cb[0], IOCB_CMD_FDSYNC, fd, NULL, 0, 0);
	run(cbs, 1, 0, &failed);
	for (long i = 0; i < count; i++) {
		prep(&cb[0], IOCB_CMD_PREAD, fd, buf, bs, i * (long long)bs);
		rbytes += run(cbs, 1, 0, &failed);
	}
	iov[0].iov_base = buf;
	iov[0].iov_len = bs / 2;
	iov[1].iov_base = buf + bs / 2;
	iov[1].iov_len = bs - bs / 2;
	for (long i = 0; i < count; i++) {
		prep(&cb[0], IOCB_CMD_PREADV, fd, iov, 2, i * (long long)bs);
		vbytes += run(cbs, 1, 1, &failed);
	}
	/* a read whose buffer the kernel cannot write: fails at completion */
	fails0 = failed;
	prep(&cb[0], IOCB_CMD_PREAD, fd, (void *)4096, bs, 0);
	run(cbs, 1, 0, &failed);
	printf("aio_rw writes=%ld write_bytes=%ld fdsyncs=1 reads=%ld read_bytes=%ld "
	       "readv=%ld readv_bytes=%ld efault=%ld submits=%ld reaps=%ld\n",
	       count, wbytes, count, rbytes, count, vbytes, failed - fails0, submits, reaps);
	syscall(SYS_io_destroy, ctx);
	close(fd);
	return fails0 == 0 && failed - fails0 == 1 ? 0 : 1;
}
