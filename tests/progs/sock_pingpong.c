// SPDX-License-Identifier: MIT
/*
 * sock_pingpong — socket round trips with known calls and bytes: `make bench`'s
 * socket workload (tests/bench/sockets.sh) and the VM suite's (tests/vm/).
 *
 *   sock_pingpong self N SIZE        one thread, a unix socketpair: N times
 *                                    send SIZE bytes into one end and
 *                                    recv them from the other (2 calls an
 *                                    op, no context switch: the calls' own
 *                                    cost, as preadloop measures pread's)
 *   sock_pingpong tcp|unix N SIZE    N round trips of SIZE bytes each way
 *   sock_pingpong fetch N SIZE       N requests (16 bytes) answered with SIZE
 *                                    bytes: a loopback object fetch loop
 *
 * For tcp, unix and fetch a forked server process answers (TCP over
 * 127.0.0.1, or a unix socketpair for "unix"); both processes are gpuio's
 * when it launches this.
 * Every call is send()/recv() (sendto/recvfrom). Prints "ns_per_op=N
 * calls=M" (M: the socket calls both processes made, for events per op).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static unsigned long long calls;

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void send_all(int fd, const char *b, size_t n)
{
	while (n) {
		ssize_t k = send(fd, b, n, 0);

		calls++;
		if (k < 0) {
			if (errno == EINTR)
				continue;
			die("send");
		}
		b += k;
		n -= (size_t)k;
	}
}

/* n bytes, or 0 at the peer's close */
static size_t recv_all(int fd, char *b, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t k = recv(fd, b + got, n - got, 0);

		calls++;
		if (k < 0) {
			if (errno == EINTR)
				continue;
			die("recv");
		}
		if (!k)
			return 0;
		got += (size_t)k;
	}
	return got;
}

/* the child: answer every request of req bytes with ans bytes until closed */
static void serve(int fd, size_t req, size_t ans, char *buf)
{
	while (recv_all(fd, buf, req))
		send_all(fd, buf, ans);
	printf("server_calls=%llu\n", calls);
	exit(0);
}

static int self_loop(unsigned long long n, size_t size, char *buf)
{
	unsigned long long t0, t1;
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		die("socketpair");
	t0 = now_ns();
	for (unsigned long long i = 0; i < n; i++) {
		send_all(sv[0], buf, size);
		recv_all(sv[1], buf, size);
	}
	t1 = now_ns();
	printf("ns_per_op=%llu client_calls=%llu server_calls=0\n", n ? (t1 - t0) / n : 0, calls);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long long n, t0, t1;
	size_t size, req, ans;
	int sv[2], one = 1, st;
	char *buf;
	pid_t pid;

	if (argc != 4 || (strcmp(argv[1], "tcp") && strcmp(argv[1], "unix") &&
			  strcmp(argv[1], "fetch") && strcmp(argv[1], "self"))) {
		fprintf(stderr, "usage: sock_pingpong self|tcp|unix|fetch N SIZE\n");
		return 2;
	}
	n = strtoull(argv[2], NULL, 0);
	size = strtoull(argv[3], NULL, 0);
	req = strcmp(argv[1], "fetch") ? size : 16;
	ans = size;
	buf = calloc(1, size > 16 ? size : 16);
	if (!buf || !size)
		die("size");
	if (!strcmp(argv[1], "self"))
		return self_loop(n, size, buf);
	if (!strcmp(argv[1], "unix")) {
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
			die("socketpair");
	} else {
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		socklen_t al = sizeof(a);
		int l = socket(AF_INET, SOCK_STREAM, 0);

		if (l < 0 || bind(l, (void *)&a, sizeof(a)) || listen(l, 1) ||
		    getsockname(l, (void *)&a, &al))
			die("listen");
		sv[0] = socket(AF_INET, SOCK_STREAM, 0);
		if (sv[0] < 0 || connect(sv[0], (void *)&a, sizeof(a)))
			die("connect");
		sv[1] = accept(l, NULL, NULL);
		if (sv[1] < 0)
			die("accept");
		close(l);
		setsockopt(sv[0], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		setsockopt(sv[1], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	}
	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		close(sv[0]);
		serve(sv[1], req, ans, buf);
	}
	close(sv[1]);
	t0 = now_ns();
	for (unsigned long long i = 0; i < n; i++) {
		send_all(sv[0], buf, req);
		if (recv_all(sv[0], buf, ans) != ans) {
			fprintf(stderr, "sock_pingpong: the server went away\n");
			return 1;
		}
	}
	t1 = now_ns();
	close(sv[0]);
	fflush(stdout);
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
		die("server");
	printf("ns_per_op=%llu client_calls=%llu mib_per_s=%.1f\n", n ? (t1 - t0) / n : 0, calls,
	       t1 > t0 ? (double)n * (double)(req + ans) / 1048576.0 / ((double)(t1 - t0) / 1e9) : 0);
	return 0;
}
