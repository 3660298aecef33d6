// SPDX-License-Identifier: MIT
/*
 * uring_rw — known file I/O through io_uring only: COUNT writes of BS bytes
 * (IORING_OP_WRITE) at offsets i*BS, then COUNT reads (IORING_OP_READ) and
 * COUNT vectored reads (IORING_OP_READV) of the same blocks. Prints what it
 * did, so a test can hold a trace against it.
 *
 * usage: uring_rw FILE COUNT BS
 */
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/uio.h>

static int run(struct io_uring *ring, int op, int fd, char *buf, unsigned bs, long off)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct io_uring_cqe *cqe;
	struct iovec iov = { buf, bs };
	int res;

	if (op == 0)
		io_uring_prep_write(sqe, fd, buf, bs, off);
	else if (op == 1)
		io_uring_prep_read(sqe, fd, buf, bs, off);
	else
		io_uring_prep_readv(sqe, fd, &iov, 1, off);
	if (io_uring_submit(ring) != 1 || io_uring_wait_cqe(ring, &cqe) < 0)
		return -1;
	res = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return res;
}

int main(int argc, char **argv)
{
	struct io_uring ring;
	long count, wbytes = 0, rbytes = 0, vbytes = 0;
	unsigned bs;
	char *buf;
	int fd, r;

	if (argc != 4) {
		fprintf(stderr, "usage: uring_rw FILE COUNT BS\n");
		return 2;
	}
	count = atol(argv[2]);
	bs = (unsigned)atoi(argv[3]);
	buf = malloc(bs);
	memset(buf, 'u', bs);
	fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || (r = io_uring_queue_init(8, &ring, 0)) < 0) {
		fprintf(stderr, "uring_rw: setup failed\n");
		return 1;
	}
	for (long i = 0; i < count; i++)
		if ((r = run(&ring, 0, fd, buf, bs, i * bs)) > 0)
			wbytes += r;
	for (long i = 0; i < count; i++)
		if ((r = run(&ring, 1, fd, buf, bs, i * bs)) > 0)
			rbytes += r;
	for (long i = 0; i < count; i++)
		if ((r = run(&ring, 2, fd, buf, bs, i * bs)) > 0)
			vbytes += r;
	printf("uring_rw writes=%ld write_bytes=%ld reads=%ld read_bytes=%ld readv=%ld readv_bytes=%ld\n",
	       count, wbytes, count, rbytes, count, vbytes);
	io_uring_queue_exit(&ring);
	close(fd);
	return 0;
}
