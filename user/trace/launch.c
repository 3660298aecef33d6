// SPDX-License-Identifier: MIT
/* launch.c — fork, hold at a gate, drop to the sudo user, exec. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include "trace/launch.h"
#include "lib/log.h"

void gpuio_sudo_ids(uid_t *uid, gid_t *gid)
{
	const char *u = getenv("SUDO_UID"), *g = getenv("SUDO_GID");

	*uid = (uid_t)-1;
	*gid = (gid_t)-1;
	if (getuid() != 0 || !u || !g || !*u || !*g)
		return;
	*uid = (uid_t)strtoul(u, NULL, 10);
	*gid = (gid_t)strtoul(g, NULL, 10);
}

static void drop_privileges(void)
{
	uid_t uid;
	gid_t gid;
	const char *user = getenv("SUDO_USER");

	gpuio_sudo_ids(&uid, &gid);
	if (uid == (uid_t)-1)
		return;
	if ((user && initgroups(user, gid) != 0 && setgroups(0, NULL) != 0) ||
	    setgid(gid) != 0 || setuid(uid) != 0) {
		int e = errno;
		(void)!write(STDERR_FILENO, "gpuio: cannot drop to SUDO_UID\n", 31);
		_exit(e ? 126 : 126);
	}
}

/*
 * Close, now, what exec would close later: gpuio's own descriptors (capture,
 * BPF objects) are close-on-exec, and once the child is traced the VFS hooks
 * would record those closes as the command's first I/O. keep: the exec-error
 * pipe, which must survive until exec.
 */
static void close_cloexec_fds(int keep)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int dfd = d ? dirfd(d) : -1;

	while (d && (de = readdir(d)) != NULL) {
		int fd = atoi(de->d_name);
		int fl;

		if (!isdigit((unsigned char)de->d_name[0]) || fd == dfd || fd == keep)
			continue;
		fl = fcntl(fd, F_GETFD);
		if (fl >= 0 && (fl & FD_CLOEXEC))
			close(fd);
	}
	if (d)
		closedir(d);
}

int gpuio_launch__start(char **argv, struct gpuio_launch *l)
{
	int errp[2], st;
	pid_t pid;

	if (pipe2(errp, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		int e = -errno;
		close(errp[0]);
		close(errp[1]);
		return e;
	}
	if (pid == 0) {
		int e;

		close(errp[0]);
		close_cloexec_fds(errp[1]);
		/* if gpuio dies before releasing us, do not run untraced */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		/* the gate: stopped, not blocked in a read, so no I/O of ours is
		 * traced before the command's own */
		raise(SIGSTOP);
		prctl(PR_SET_PDEATHSIG, 0);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		drop_privileges();
		execvp(argv[0], argv);
		e = errno;
		(void)!write(errp[1], &e, sizeof(e));
		_exit(127);
	}
	close(errp[1]);
	l->pid = pid;
	l->gate_fd = -1;
	l->err_fd = errp[0];
	/* wait until the child sits at the gate */
	if (waitpid(pid, &st, WUNTRACED) != pid || !WIFSTOPPED(st)) {
		close(errp[0]);
		l->pid = -1;
		return -ECHILD;
	}
	return 0;
}

int gpuio_launch__release(struct gpuio_launch *l, const char *cmd)
{
	int e = 0;
	ssize_t n;

	if (kill(l->pid, SIGCONT) < 0) {
		e = errno;
		close(l->err_fd);
		return -e;
	}
	/* the error pipe closes on a successful exec (O_CLOEXEC) */
	n = read(l->err_fd, &e, sizeof(e));
	close(l->err_fd);
	l->err_fd = -1;
	if (n == (ssize_t)sizeof(e)) {
		pr_err("cannot run '%s': %s", cmd, strerror(e));
		waitpid(l->pid, NULL, 0);
		return -e;
	}
	return 0;
}

void gpuio_launch__abort(struct gpuio_launch *l)
{
	if (l->pid > 0) {
		kill(l->pid, SIGKILL);
		waitpid(l->pid, NULL, 0);
	}
	if (l->err_fd >= 0)
		close(l->err_fd);
	l->pid = -1;
}
