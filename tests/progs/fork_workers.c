// SPDX-License-Identifier: MIT
/*
 * fork_workers — a DataLoader-like process tree with known reads, for
 * tests/t_children.sh.
 *
 *   fork_workers DIR NWORKERS NTHREADS
 *
 * The parent starts NTHREADS threads; thread i names itself "gw-thread<i>"
 * and preads DIR/t<i> whole in 32 KiB calls. It forks NWORKERS workers;
 * worker i names itself "gw-worker<i>" and reads DIR/w<i> whole with read()
 * in 64 KiB calls. It also runs `sh -c 'cat DIR/x >/dev/null'` (fork +
 * exec). Every reader prints one line on stdout (one write(2) each):
 *
 *   thread PID TID PATH BYTES NAME
 *   worker PID TID PATH BYTES NAME
 *   exec   PID PID PATH -     sh
 *
 * BYTES is what the reader's calls returned in total. The parent waits for
 * all and exits 0 only if every reader read its whole file.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static const char *dir;

struct thr {
	pthread_t t;
	int i;
	int ok;
};

static void say(const char *kind, pid_t tid, const char *path, long long bytes, const char *name)
{
	char line[PATH_MAX + 128];
	int n = snprintf(line, sizeof(line), "%s %d %d %s %lld %s\n", kind, (int)getpid(), (int)tid,
			 path, bytes, name);

	if (write(STDOUT_FILENO, line, (size_t)n) != n)
		_exit(3);
}

static long long size_of(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

static void *thread_main(void *arg)
{
	struct thr *t = arg;
	char path[PATH_MAX], name[32];
	static __thread char buf[32768];
	long long total = 0;
	ssize_t n;
	int fd;

	snprintf(name, sizeof(name), "gw-thread%d", t->i);
	prctl(PR_SET_NAME, name);
	snprintf(path, sizeof(path), "%s/t%d", dir, t->i);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return NULL;
	while ((n = pread(fd, buf, sizeof(buf), total)) > 0)
		total += n;
	close(fd);
	t->ok = n == 0 && total == size_of(path);
	say("thread", (pid_t)syscall(SYS_gettid), path, total, name);
	return NULL;
}

static int worker_main(int i)
{
	char path[PATH_MAX], name[32];
	static char buf[65536];
	long long total = 0;
	ssize_t n;
	int fd;

	snprintf(name, sizeof(name), "gw-worker%d", i);
	prctl(PR_SET_NAME, name);
	snprintf(path, sizeof(path), "%s/w%d", dir, i);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 1;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		total += n;
	close(fd);
	say("worker", getpid(), path, total, name);
	return n == 0 && total == size_of(path) ? 0 : 1;
}

int main(int argc, char **argv)
{
	int nworkers, nthreads, bad = 0, st;
	struct thr *thr;
	char xpath[PATH_MAX];
	pid_t pid;

	if (argc != 4) {
		fprintf(stderr, "usage: fork_workers DIR NWORKERS NTHREADS\n");
		return 2;
	}
	dir = argv[1];
	nworkers = atoi(argv[2]);
	nthreads = atoi(argv[3]);
	thr = calloc((size_t)nthreads + 1, sizeof(*thr));
	for (int i = 0; i < nthreads; i++) {
		thr[i].i = i;
		if (pthread_create(&thr[i].t, NULL, thread_main, &thr[i]) != 0)
			return 1;
	}
	for (int i = 0; i < nworkers; i++) {
		pid = fork();
		if (pid < 0)
			return 1;
		if (pid == 0)
			_exit(worker_main(i));
	}
	snprintf(xpath, sizeof(xpath), "%s/x", dir);
	pid = fork();
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", "cat \"$0\" >/dev/null", xpath, (char *)NULL);
		_exit(127);
	}
	{
		char line[PATH_MAX + 64];
		int n = snprintf(line, sizeof(line), "exec %d %d %s - sh\n", (int)pid, (int)pid, xpath);
		if (write(STDOUT_FILENO, line, (size_t)n) != n)
			return 3;
	}
	for (int i = 0; i < nthreads; i++) {
		pthread_join(thr[i].t, NULL);
		bad |= !thr[i].ok;
	}
	while ((pid = wait(&st)) > 0)
		bad |= !WIFEXITED(st) || WEXITSTATUS(st) != 0;
	return bad;
}
