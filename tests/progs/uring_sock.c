// SPDX-License-Identifier: MIT
/*
 * uring_sock — socket I/O through io_uring only, with known counts: a
 * forked echo server on 127.0.0.1 takes its connection with
 * IORING_OP_ACCEPT and echoes each message back with IORING_OP_RECV /
 * IORING_OP_SEND; the client connects with IORING_OP_CONNECT, then N times
 * sends SIZE bytes (IORING_OP_SEND, or IORING_OP_SENDMSG for the odd ones)
 * and receives the echo (IORING_OP_RECV / IORING_OP_RECVMSG, until SIZE
 * bytes came).
 *
 * Prints: "uring_sock port=P client_sends=N client_send_bytes=B
 * client_recvs=R client_recv_bytes=B server_recvs=R2 server_recv_bytes=B2
 * server_sends=S2 server_send_bytes=B2 connects=1 accepts=1", the calls
 * counted as the completions said (a receive that returned 0 counts).
 *
 * usage: uring_sock N SIZE
 */
#include <arpa/inet.h>
#include <liburing.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

static struct io_uring ring;

static void die(const char *what)
{
	perror(what);
	exit(1);
}

/* Submit the prepared sqe, wait for its completion: its result. */
static int run1(void)
{
	struct io_uring_cqe *cqe;
	int res;

	if (io_uring_submit(&ring) != 1 || io_uring_wait_cqe(&ring, &cqe) < 0)
		die("io_uring");
	res = cqe->res;
	io_uring_cqe_seen(&ring, cqe);
	return res;
}

static int op_recv(int fd, char *buf, unsigned len, int msg)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
	struct iovec iov = { buf, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (msg)
		io_uring_prep_recvmsg(sqe, fd, &mh, 0);
	else
		io_uring_prep_recv(sqe, fd, buf, len, 0);
	return run1();
}

static int op_send(int fd, const char *buf, unsigned len, int msg)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
	struct iovec iov = { (void *)buf, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (msg)
		io_uring_prep_sendmsg(sqe, fd, &mh, 0);
	else
		io_uring_prep_send(sqe, fd, buf, len, 0);
	return run1();
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[1]) : 0, size = argc > 2 ? atol(argv[2]) : 0;
	long sends = 0, sbytes = 0, recvs = 0, rbytes = 0;
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	int l, s, pfd[2], status;
	char *buf;
	pid_t pid;

	if (n < 1 || size < 1 || !(buf = malloc((size_t)size))) {
		fprintf(stderr, "usage: uring_sock N SIZE\n");
		return 2;
	}
	memset(buf, 'u', (size_t)size);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0 || bind(l, (void *)&a, sizeof(a)) || listen(l, 4) ||
	    getsockname(l, (void *)&a, &alen) || pipe(pfd))
		die("listen");
	setvbuf(stdout, NULL, _IOLBF, 0);
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {                 /* the server: accept, echo until EOF */
		long r2 = 0, rb2 = 0, s2 = 0, sb2 = 0;
		char line[256];
		int c, r;

		if (io_uring_queue_init(8, &ring, 0) < 0)
			die("server ring");
		io_uring_prep_accept(io_uring_get_sqe(&ring), l, NULL, NULL, 0);
		if ((c = run1()) < 0)
			die("accept");
		while ((r = op_recv(c, buf, (unsigned)size, 0)) > 0) {
			r2++, rb2 += r;
			if (op_send(c, buf, (unsigned)r, 0) != r)
				die("echo");
			s2++, sb2 += r;
		}
		r2++;                   /* the receive that saw the close */
		snprintf(line, sizeof(line), "server_recvs=%ld server_recv_bytes=%ld server_sends=%ld "
			 "server_send_bytes=%ld", r2, rb2, s2, sb2);
		if (write(pfd[1], line, strlen(line)) < 0)
			die("pipe");
		_exit(0);
	}
	close(l);
	close(pfd[1]);
	if (io_uring_queue_init(8, &ring, 0) < 0)
		die("client ring");
	s = socket(AF_INET, SOCK_STREAM, 0);
	io_uring_prep_connect(io_uring_get_sqe(&ring), s, (void *)&a, sizeof(a));
	if (s < 0 || run1() < 0)
		die("connect");
	for (long i = 0; i < n; i++) {
		int msg = (int)(i & 1), r;
		long got = 0;

		if ((r = op_send(s, buf, (unsigned)size, msg)) != size)
			die("send");
		sends++, sbytes += r;
		while (got < size) {
			if ((r = op_recv(s, buf, (unsigned)(size - got), msg)) <= 0)
				die("recv");
			recvs++, rbytes += r, got += r;
		}
	}
	close(s);
	{
		char line[256] = "";
		ssize_t k = read(pfd[0], line, sizeof(line) - 1);

		if (k <= 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
			die("server");
		printf("uring_sock port=%u client_sends=%ld client_send_bytes=%ld client_recvs=%ld "
		       "client_recv_bytes=%ld %s connects=1 accepts=1\n", ntohs(a.sin_port), sends, sbytes,
		       recvs, rbytes, line);
	}
	io_uring_queue_exit(&ring);
	return 0;
}
