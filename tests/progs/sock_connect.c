// SPDX-License-Identifier: MIT
/*
 * sock_connect — TCP connections with known counts and times: a forked
 * server on 127.0.0.1 accepts N connections (the even ones with accept, the
 * odd with accept4), reading one byte from each; the client connects N
 * times, timing each connect() on CLOCK_MONOTONIC, sends a byte and closes.
 * Then one connect to a port nobody listens on (ECONNREFUSED), and one
 * non-blocking accept with nothing waiting (EAGAIN, not a connection).
 *
 * Prints, one line each:
 *   connect I T0 T1 LPORT    the client's I-th connect: monotonic ns before
 *                            and after, its local port
 *   refused T0 T1            the refused connect
 *   sock_connect port=P connects=N accepts=A accept4=B refused=1 eagain=1
 *
 * usage: sock_connect N
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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

/* A listening socket on 127.0.0.1 and its port. */
static int listener(struct sockaddr_in *a)
{
	socklen_t len = sizeof(*a);
	int l = socket(AF_INET, SOCK_STREAM, 0);

	memset(a, 0, sizeof(*a));
	a->sin_family = AF_INET;
	a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (l < 0 || bind(l, (void *)a, sizeof(*a)) || listen(l, 64) ||
	    getsockname(l, (void *)a, &len))
		die("listen");
	return l;
}

static void serve(int l, int n)
{
	char c;

	for (int i = 0; i < n; i++) {
		int s = i % 2 ? accept4(l, NULL, NULL, SOCK_CLOEXEC) : accept(l, NULL, NULL);

		if (s < 0 || read(s, &c, 1) != 1)
			die("server");
		close(s);
	}
	/* nothing waits now: a non-blocking accept says EAGAIN */
	fcntl(l, F_SETFL, O_NONBLOCK);
	if (accept(l, NULL, NULL) >= 0 || errno != EAGAIN)
		die("accept on an empty queue");
}

int main(int argc, char **argv)
{
	struct sockaddr_in a, none, me;
	int n = argc > 1 ? atoi(argv[1]) : 0, l, closed, status;
	pid_t pid;

	if (n < 1) {
		fprintf(stderr, "usage: sock_connect N\n");
		return 2;
	}
	l = listener(&a);
	setvbuf(stdout, NULL, _IOLBF, 0);
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		serve(l, n);
		_exit(0);
	}
	close(l);
	for (int i = 0; i < n; i++) {
		socklen_t len = sizeof(me);
		unsigned long long t0, t1;
		int s = socket(AF_INET, SOCK_STREAM, 0);

		t0 = now_ns();
		if (s < 0 || connect(s, (void *)&a, sizeof(a)))
			die("connect");
		t1 = now_ns();
		if (getsockname(s, (void *)&me, &len) || write(s, "x", 1) != 1)
			die("client");
		printf("connect %d %llu %llu %u\n", i, t0, t1, ntohs(me.sin_port));
		close(s);
	}
	/* a port that was listening and is closed: refused */
	closed = listener(&none);
	close(closed);
	{
		int s = socket(AF_INET, SOCK_STREAM, 0);
		unsigned long long t0 = now_ns(), t1;
		int r = connect(s, (void *)&none, sizeof(none));

		t1 = now_ns();
		if (r == 0 || errno != ECONNREFUSED)
			die("connect to a closed port");
		printf("refused %llu %llu\n", t0, t1);
		close(s);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		die("server exit");
	printf("sock_connect port=%u connects=%d accepts=%d accept4=%d refused=1 eagain=1\n",
	       ntohs(a.sin_port), n, (n + 1) / 2, n / 2);
	return 0;
}
