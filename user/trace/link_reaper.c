// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * link_reaper.c — closing a tracepoint's BPF link waits for a tasks-trace
 * RCU grace period inside the kernel's bpf_event_mutex (6.x: 80-120 ms each
 * on the development VM), one link after another: the 58 links of the
 * per-syscall VFS mode would hold gpuio's exit for about 5 s. A child takes
 * the links over and closes them; gpuio's own closes then drop references
 * and it exits at once. Until the child is done the programs stay attached
 * (they only act for the traced processes, and what they emit nobody reads).
 * The child is started right after the attach and holds the links until
 * gpuio's end closes a pipe: a gpuio killed with SIGKILL ends at once too,
 * and its links are closed the same way, not by its own exit. The child
 * first sets the programs' "tracing over" flag, which a killed gpuio could
 * not: until the last close they act for no one.
 */
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "trace/link_reaper.h"

#define REAPER_MAX 256


static bool kept(const int *fds, int n, int fd)
{
	for (int i = 0; i < n; i++)
		if (fds[i] == fd)
			return true;
	return false;
}

/* In the child: async-signal-safe calls only (the parent may have threads).
 * wait_fd >= 0: the read end of a pipe whose EOF (gpuio's end, even by
 * SIGKILL) starts the closes; it is kept, and arg (made before the fork:
 * "wN" or "wN:fM:K", link_reaper__main) names it. */
static void reap(const int *fds, int n, int wait_fd, char *arg)
{
	struct rlimit rl;
	int maxfd = wait_fd, last = 1024;
	char *argv[] = { (char *)LINK_REAPER_ARGV0, arg, NULL }, *const envp[] = { NULL };

	/* out of the terminal's process group: a second Ctrl-C is the user's
	 * word to gpuio, not to this */
	setsid();
	for (int i = 0; i < n; i++)
		if (fds[i] > maxfd)
			maxfd = fds[i];
	/* everything else goes now: a pipe held open would keep a reader waiting */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < 1u << 20)
		last = (int)rl.rlim_cur;
	for (int fd = 0; fd <= maxfd; fd++)
		if (!kept(fds, n, fd) && fd != wait_fd)
			close(fd);
#ifdef SYS_close_range
	if (syscall(SYS_close_range, maxfd + 1, ~0U, 0) != 0)
#endif
		for (int fd = maxfd + 1; fd < last; fd++)
			close(fd);
	/* gpuio again, under its own name (ps, pgrep -f: not gpuio's command
	 * line), holding only the links: link_reaper__main() closes them */
	for (int i = 0; i < n; i++)
		fcntl(fds[i], F_SETFD, 0);
	if (wait_fd >= 0)
		fcntl(wait_fd, F_SETFD, 0);
	execve("/proc/self/exe", argv, envp);
	for (int i = 0; i < n; i++)
		close(fds[i]);
	_exit(0);
}

/*
 * Two locks: an attaching gpuio holds the gate, then the attach lock
 * exclusively; the closer passes the gate (waiting while a gpuio holds it)
 * to take the attach lock shared around each close, so an attach waits at
 * most for the close in flight, and the closer needs no pause to let it in.
 * One closer: closes side by side end sooner (2: 4.5 s for the 76 links,
 * 8: 3.4 s, against 7-8.5 s) but the kernel serialises most of each close,
 * so an attach right after waits for all those in flight (+100 ms, +350 ms).
 */
#define LOCK_DIR "/run/lock/"
#define LOCK_DIR2 "/tmp/."

static int lock_open(const char *name)
{
	char p[64];
	int fd;

	snprintf(p, sizeof(p), "%s%s", LOCK_DIR, name);
	fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		snprintf(p, sizeof(p), "%s%s", LOCK_DIR2, name);
		fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	}
	return fd;
}

static void lock_take(int fd, int how)
{
	if (fd >= 0)
		while (flock(fd, how) < 0 && errno == EINTR)
			;
}

static int gate_fd = -1;

int link_reaper__lock(void)
{
	int fd;

	gate_fd = lock_open("gpuio-attach.gate");
	lock_take(gate_fd, LOCK_EX);
	fd = lock_open("gpuio-attach.lock");
	lock_take(fd, LOCK_EX);
	return fd;
}

void link_reaper__unlock(int fd)
{
	if (fd >= 0)
		close(fd);      /* releases the flock */
	if (gate_fd >= 0)
		close(gate_fd);
	gate_fd = -1;
}

/* Close fds one by one, each when no gpuio attaches. */
static void close_all(const int *fds, int n)
{
	int gate = lock_open("gpuio-attach.gate"), lk = lock_open("gpuio-attach.lock");

	for (int i = 0; i < n; i++) {
		lock_take(gate, LOCK_EX);
		lock_take(lk, LOCK_SH);
		lock_take(gate, LOCK_UN);
		close(fds[i]);
		lock_take(lk, LOCK_UN);
	}
	if (gate >= 0)
		close(gate);
	if (lk >= 0)
		close(lk);
}

/* The byte at off of the (mmapable) BPF map behind fd set to 1, fd closed. */
static void flag_set(int fd, unsigned long off)
{
	struct bpf_map_info info;
	__u32 len = sizeof(info);
	size_t size;
	char *p;

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0 && off < info.value_size) {
		size = ((size_t)info.value_size + 4095) & ~(size_t)4095;
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (p != MAP_FAILED) {
			__atomic_store_n(p + off, 1, __ATOMIC_SEQ_CST);
			munmap(p, size);
		}
	}
	close(fd);
}

int link_reaper__main(const char *arg)
{
	static int fds[REAPER_MAX * 2];
	struct rlimit rl;
	int last = 1024, wait_fd = -1, flag_fd = -1, n = 0;
	unsigned long flag_off = 0;
	const char *f;
	char c;

	prctl(PR_SET_NAME, LINK_REAPER_ARGV0, 0, 0, 0);
	if (arg && arg[0] == 'w')
		wait_fd = atoi(arg + 1);
	if (arg && (f = strstr(arg, ":f")) && strchr(f + 2, ':')) {
		flag_fd = atoi(f + 2);
		flag_off = strtoul(strchr(f + 2, ':') + 1, NULL, 10);
	}
	/* armed at the attach: hold the links until gpuio is gone, however it ends */
	if (wait_fd >= 0) {
		for (;;) {
			ssize_t r = read(wait_fd, &c, 1);

			if (r == 0 || (r < 0 && errno != EINTR))
				break;
		}
		close(wait_fd);
	}
	/* first of all, the programs stop acting for anyone (gpuio killed
	 * never set their flag): the closes take seconds */
	if (flag_fd >= 0)
		flag_set(flag_fd, flag_off);
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < 1u << 20)
		last = (int)rl.rlim_cur;
	for (int fd = 3; fd < last && n < (int)(sizeof(fds) / sizeof(fds[0])); fd++) {
		struct stat st;

		if (fstat(fd, &st) == 0)
			fds[n++] = fd;
	}
	close_all(fds, n);
	return 0;
}

/* A tracepoint's perf-event link, the kind whose close waits for a grace
 * period (raw tracepoint and tracing links close at once). */
static bool slow_link(int fd)
{
	struct bpf_link_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	return bpf_obj_get_info_by_fd(fd, &info, &len) == 0 && info.type == BPF_LINK_TYPE_PERF_EVENT;
}

/* The fds of the links to hand over (only the slow ones when slow_only). */
static int pick(struct bpf_link *const *links, int n, bool slow_only, int *fds)
{
	int nfds = 0;

	for (int i = 0; i < n && nfds < REAPER_MAX; i++) {
		int fd = links[i] ? bpf_link__fd(links[i]) : -1;

		if (fd >= 0 && (!slow_only || slow_link(fd)))
			fds[nfds++] = fd;
	}
	return nfds;
}

/* Fork the reaper (twice: no zombie for a parent that lives on, the
 * monitor) with the links' fds, wait_fd and its argument; whether it was
 * started. */
static bool spawn(const int *fds, int nfds, int wait_fd, char *arg)
{
	int st = 0;
	pid_t pid;

	if (!nfds)
		return false;
	pid = fork();
	if (pid < 0)
		return false;
	if (pid == 0) {
		pid_t g = fork();

		if (g == 0)
			reap(fds, nfds, wait_fd, arg);
		_exit(g < 0 ? 1 : 0);
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

bool link_reaper__take(struct bpf_link *const *links, int n)
{
	int fds[REAPER_MAX];

	return spawn(fds, pick(links, n, false, fds), -1, NULL);
}

int link_reaper__arm(struct bpf_link *const *links, int n, int min_slow, int flag_fd,
		     unsigned long flag_off)
{
	int fds[REAPER_MAX + 1], nfds = pick(links, n, true, fds), p[2];
	char arg[64];

	if (nfds < min_slow || pipe2(p, O_CLOEXEC) != 0)
		return -1;
	if (flag_fd >= 0) {
		fds[nfds++] = flag_fd;
		snprintf(arg, sizeof(arg), "w%d:f%d:%lu", p[0], flag_fd, flag_off);
	} else {
		snprintf(arg, sizeof(arg), "w%d", p[0]);
	}
	if (!spawn(fds, nfds, p[0], arg)) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	close(p[0]);
	return p[1];
}
