// SPDX-License-Identifier: MIT
/*
 * inject_threads.c — which thread the injector uses and how it stops it:
 * threads ranked by the system call they are blocked in (restartable first,
 * never one inside libc or ld.so), ptrace seize/interrupt/resume, signals
 * that arrive meanwhile stashed for re-delivery.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/types.h>
#include "gpu/inject.h"
#include <elf.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/ptrace.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include "gpu/inject_priv.h"
#include "lib/units.h"

#if defined(__x86_64__)

/* ---- which thread --------------------------------------------------------- */


enum sc_class inject_syscall_class(long nr)
{
	switch (nr) {
	/* Interrupted by a ptrace stop, these return -ERESTART* and the kernel
	 * restarts them on resume: the application never notices. */
	case SYS_read: case SYS_pread64: case SYS_readv: case SYS_preadv: case SYS_write:
	case SYS_writev: case SYS_pwrite64: case SYS_nanosleep: case SYS_clock_nanosleep:
	case SYS_pause: case SYS_select: case SYS_poll: case SYS_wait4: case SYS_waitid:
	case SYS_accept: case SYS_accept4: case SYS_recvfrom: case SYS_recvmsg:
	case SYS_sendto: case SYS_sendmsg: case SYS_connect: case SYS_flock:
	case SYS_restart_syscall:   /* a sleep/poll/futex wait already restarted once */
		return SC_RESTARTS;
	case SYS_futex:
		return SC_FUTEX;
	/* Temporary signal mask (TIF_RESTORE_SIGMASK): restart fine, but
	 * PTRACE_SETSIGMASK clears that flag, so signals that only the syscall's
	 * mask blocks could interrupt it after detach: the mask is left alone. */
	case SYS_ppoll: case SYS_pselect6: case SYS_rt_sigsuspend: case SYS_epoll_pwait:
#ifdef SYS_epoll_pwait2
	case SYS_epoll_pwait2:
#endif
	case SYS_io_pgetevents: case SYS_io_uring_enter:
		return SC_MASK;
	/* Not restarted: the application sees EINTR. */
	case SYS_epoll_wait: case SYS_rt_sigtimedwait: case SYS_semtimedop: case SYS_semop:
	case SYS_io_getevents: case SYS_msgrcv: case SYS_msgsnd:
		return SC_EINTR;
	}
	return SC_OTHER;
}

static const char *sc_name(long nr)
{
	static const struct {
		long nr;
		const char *name;
	} names[] = {
		{ SYS_read, "read" }, { SYS_pread64, "pread64" }, { SYS_readv, "readv" },
		{ SYS_write, "write" }, { SYS_nanosleep, "nanosleep" },
		{ SYS_clock_nanosleep, "clock_nanosleep" }, { SYS_pause, "pause" },
		{ SYS_poll, "poll" }, { SYS_ppoll, "ppoll" }, { SYS_select, "select" },
		{ SYS_pselect6, "pselect6" }, { SYS_epoll_wait, "epoll_wait" },
		{ SYS_epoll_pwait, "epoll_pwait" }, { SYS_futex, "futex" }, { SYS_wait4, "wait4" },
		{ SYS_waitid, "waitid" }, { SYS_accept, "accept" }, { SYS_accept4, "accept4" },
		{ SYS_recvfrom, "recvfrom" }, { SYS_recvmsg, "recvmsg" },
		{ SYS_rt_sigsuspend, "rt_sigsuspend" }, { SYS_rt_sigtimedwait, "rt_sigtimedwait" },
		{ SYS_restart_syscall, "restart_syscall" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (names[i].nr == nr)
			return names[i].name;
	return NULL;
}

static void describe_syscall(char *buf, size_t len, const char *state, long nr)
{
	const char *n = sc_name(nr);

	if (n)
		snprintf(buf, len, "%s in %s", state, n);
	else
		snprintf(buf, len, "%s in syscall %ld", state, nr);
}

static int cand_cmp(const void *a, const void *b)
{
	const struct inject_cand *x = a, *y = b;

	if (x->score != y->score)
		return y->score - x->score;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

/* Threads of the target, best first (see the top of the file). */
int inject_choose_threads(struct inject_ctx *j, struct inject_cand **out, int *nout)
{
	char path[64];
	struct dirent *de;
	struct inject_cand *c = NULL;
	int n = 0, cap = 0, exited = 0, stopped = 0, in_loader = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", j->pid);
	d = opendir(path);
	if (!d)
		return inject_fail(j, ESRCH, "pid %d: no such process", j->pid);
	while ((de = readdir(d))) {
		char sp[96], buf[256];
		pid_t tid = (pid_t)atoi(de->d_name);
		struct inject_cand k = { .tid = tid };
		unsigned long long pc = 0;
		long nr;
		char st;
		int r;

		if (tid <= 0)
			continue;
		st = inject_proc_state(j->pid, tid, NULL);
		if (st == 'T' || st == 't') {
			stopped++;
			continue;
		}
		if (inject_state_gone(st)) {
			exited++;
			continue;
		}
		snprintf(sp, sizeof(sp), "/proc/%d/task/%d/syscall", j->pid, tid);
		r = inject_read_small(sp, buf, sizeof(buf));
		if (r < 0 && (r == -EACCES || r == -EPERM)) {
			closedir(d);
			free(c);
			return inject_perm_error(j, -r, "cannot inspect");
		}
		if (r <= 0) {
			exited++;       /* it went between the listing and the read */
			continue;
		}
		if (!strncmp(buf, "running", 7)) {
			k.nr = -2;
			k.score = 10;
			snprintf(k.why, sizeof(k.why), "running");
		} else {
			/* "NR arg1..arg6 sp pc", or "-1 sp pc" when blocked outside a syscall */
			char *last = strrchr(buf, ' ');

			nr = strtol(buf, NULL, 10);
			if (last)
				pc = strtoull(last + 1, NULL, 16);
			k.nr = nr;
			if (pc && inject_in_ranges(j->loader, j->nloader, pc)) {
				in_loader++;    /* maybe holding the loader lock */
				continue;
			}
			if (nr < 0) {
				k.score = 20;
				snprintf(k.why, sizeof(k.why), "blocked (state %c)", st);
			} else {
				static const int score[] = { [SC_RESTARTS] = 100, [SC_FUTEX] = 80,
							     [SC_MASK] = 60, [SC_EINTR] = 30,
							     [SC_OTHER] = 40 };

				k.score = score[inject_syscall_class(nr)] - (st == 'D' ? 5 : 0);
				describe_syscall(k.why, sizeof(k.why), "blocked", nr);
			}
		}
		if (tid == j->pid)
			k.score += 1;   /* ties: the main thread, the application's own */
		if (n == cap) {
			struct inject_cand *nc = realloc(c, (size_t)(cap = cap ? cap * 2 : 16) * sizeof(*c));

			if (!nc) {
				closedir(d);
				free(c);
				return inject_fail(j, ENOMEM, "out of memory");
			}
			c = nc;
		}
		c[n++] = k;
	}
	closedir(d);
	if (!n) {
		free(c);
		/* a process on its way out: every thread gone or going, none to wait for */
		if (!stopped && !in_loader)
			return inject_gone(j);
		return inject_fail(j, EAGAIN, "pid %d has no thread to use now: %d stopped, %d inside "
				   "the dynamic loader, %d exited", j->pid, stopped, in_loader, exited);
	}
	qsort(c, (size_t)n, sizeof(*c), cand_cmp);
	*out = c;
	*nout = n;
	return 0;
}

/* ---- ptrace plumbing -------------------------------------------------------- */

/*
 * Wait for the thread's next stop (or its end) until the deadline.
 * 0 with *status; -ETIMEDOUT; -ESRCH when it is gone (status reaped).
 */
int inject_wait_thread(struct inject_ctx *j, const struct timespec *dl, int *status)
{
	long ns = 50000;

	for (;;) {
		siginfo_t si = { 0 };
		pid_t r;

		/* Peek first: the exit of a process that is our own child is its
		 * parent's (our caller's) to collect, not ours. */
		r = waitid(P_PID, (id_t)j->tid, &si, WEXITED | WSTOPPED | WNOHANG | WNOWAIT | __WALL);
		if (r == 0 && si.si_pid == j->tid) {
			bool exited = si.si_code == CLD_EXITED || si.si_code == CLD_KILLED ||
				      si.si_code == CLD_DUMPED;

			if (exited && j->own_child) {
				j->attached = j->stopped = false;
				return -ESRCH;
			}
			r = waitpid(j->tid, status, __WALL | WNOHANG);
			if (r == j->tid && (WIFEXITED(*status) || WIFSIGNALED(*status))) {
				j->attached = j->stopped = false;
				return -ESRCH;
			}
			if (r == j->tid) {
				j->stopped = true;
				j->sigstop = (*status >> 16) == 0;
				return 0;
			}
		}
		if (r < 0 && errno != EINTR) {
			j->attached = j->stopped = false;   /* ECHILD: no longer ours */
			return -ESRCH;
		}
		if (inject_ms_left(dl) <= 0)
			return -ETIMEDOUT;
		nanosleep(&(struct timespec){ 0, ns }, NULL);
		if (ns < 5000000)
			ns *= 2;
	}
}

int inject_gone(struct inject_ctx *j)
{
	return inject_fail(j, ESRCH, "pid %d exited during the injection (%s)", j->pid,
		    j->phase ? j->phase : "before it could be stopped");
}

/* A ptrace request failed: the thread died (reap it) or something else. */
int inject_pt_error(struct inject_ctx *j, const char *what)
{
	int e = errno;
	int status;

	if (e == ESRCH) {
		struct timespec dl;

		/* Killed while stopped: the exit is reported to us shortly. */
		inject_deadline_in(&dl, 1000);
		while (inject_wait_thread(j, &dl, &status) == 0) {
			j->stopped = false;
			if (ptrace(PTRACE_CONT, j->tid, NULL, NULL) < 0 && errno != ESRCH)
				break;
		}
		return inject_gone(j);
	}
	return inject_fail(j, e, "ptrace %s on thread %d of pid %d: %s", what, j->tid, j->pid, strerror(e));
}

static bool stash_signal(struct inject_ctx *j)
{
	siginfo_t si;

	if (ptrace(PTRACE_GETSIGINFO, j->tid, NULL, &si) < 0)
		return false;
	if (j->nstash < MAX_STASH)
		j->stash[j->nstash++] = si;
	else
		j->stash_lost++;
	return true;
}

/*
 * At a signal-delivery-stop during our calls: 1 when the signal is our return
 * trap or a fault of the called code (dropped), 0 when it is someone else's.
 */
static int stop_is_ours(struct inject_ctx *j)
{
	struct user_regs_struct r;
	siginfo_t si;

	if (ptrace(PTRACE_GETSIGINFO, j->tid, NULL, &si) < 0 ||
	    ptrace(PTRACE_GETREGS, j->tid, NULL, &r) < 0)
		return inject_pt_error(j, "GETSIGINFO");
	if (si.si_signo == SIGSEGV && si.si_code > 0 && r.rip == 0 && r.rsp == j->ret_slot + 8)
		return 1;
	return si.si_code > 0 && (SYNC_SIGS & (1ull << (si.si_signo - 1))) ? 1 : 0;
}

/* Resume from the current stop without delivering its signal. */
int inject_resume(struct inject_ctx *j)
{
	if (ptrace(PTRACE_CONT, j->tid, NULL, NULL) < 0)
		return inject_pt_error(j, "CONT");
	j->stopped = j->sigstop = false;
	return 0;
}

/*
 * Stop a seized thread (PTRACE_INTERRUPT) and wait for the interrupt stop.
 * Signals met on the way: delivered (pass_signals, before we touched
 * anything) or kept for detach. 1: the process is in a group stop.
 */
int inject_interrupt_thread(struct inject_ctx *j, const struct timespec *dl, bool pass_signals)
{
	int status, rc;

	if (ptrace(PTRACE_INTERRUPT, j->tid, NULL, NULL) < 0)
		return inject_pt_error(j, "INTERRUPT");
	for (;;) {
		rc = inject_wait_thread(j, dl, &status);
		if (rc == -ESRCH)
			return inject_gone(j);
		if (rc)
			return rc;
		if (!WIFSTOPPED(status))
			continue;
		if ((status >> 16) == PTRACE_EVENT_STOP) {
			int sig = WSTOPSIG(status);

			if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU)
				return 1;
			return 0;   /* SIGTRAP: our interrupt */
		}
		if ((status >> 16) == 0) {
			/* A signal on its way to the thread: not ours to eat. */
			if (pass_signals) {
				if (ptrace(PTRACE_CONT, j->tid, NULL, (void *)(long)WSTOPSIG(status)) < 0)
					return inject_pt_error(j, "CONT");
				j->stopped = j->sigstop = false;
				continue;
			}
			rc = stop_is_ours(j);
			if (rc < 0)
				return rc;
			if (!rc && !stash_signal(j))
				return inject_pt_error(j, "GETSIGINFO");
			/* Any stop will do for restoring: stay here. */
			return 0;
		}
		if ((rc = inject_resume(j)))
			return rc;
	}
}

/* Seize and stop one thread at a point where calling the loader is safe. */
int inject_attach_thread(struct inject_ctx *j, const struct inject_cand *c)
{
	const int max_tries = 200;
	int rc;

	j->tid = c->tid;
	if (ptrace(PTRACE_SEIZE, j->tid, NULL, NULL) < 0) {
		int e = errno;
		long tracer = inject_status_field(j->pid, j->tid, "TracerPid");

		if (e == ESRCH)
			return -ESRCH;   /* that thread just ended: try another */
		if (tracer > 0)
			return inject_fail(j, EBUSY, "pid %d (thread %d) is already traced by pid %ld "
				    "(a debugger, strace, or another gpuio inject)", j->pid, j->tid, tracer);
		if (e == EPERM || e == EACCES)
			return inject_perm_error(j, e, "cannot ptrace");
		return inject_fail(j, e, "ptrace seize of thread %d of pid %d: %s", j->tid, j->pid, strerror(e));
	}
	j->attached = true;
	for (int tries = 0;; tries++) {
		struct user_regs_struct r;
		long nr;

		j->phase = "stopping a thread";
		rc = inject_interrupt_thread(j, &j->deadline, true);
		if (rc == 1)
			return inject_fail(j, EAGAIN, "pid %d is stopped (job control: SIGSTOP/SIGTSTP); "
				    "continue it (kill -CONT %d) and try again", j->pid, j->pid);
		if (rc == -ETIMEDOUT)
			return inject_fail(j, ETIMEDOUT, "thread %d of pid %d did not stop within %.1f s "
				    "(uninterruptible sleep?)", j->tid, j->pid, j->timeout_ms / 1e3);
		if (rc)
			return rc;
		if (ptrace(PTRACE_GETREGS, j->tid, NULL, &r) < 0)
			return inject_pt_error(j, "GETREGS");
		nr = (long)r.orig_rax;
		/* Safe: anywhere outside libc and ld.so (not in malloc, not in the
		 * loader); or in a blocking syscall of the application's (the libc
		 * wrappers hold no lock); or still in the very wait we chose it for. */
		if (!inject_in_ranges(j->unsafe, j->nunsafe, r.rip))
			break;
		if (nr >= 0 && !inject_in_ranges(j->loader, j->nloader, r.rip) &&
		    (inject_syscall_class(nr) == SC_RESTARTS || inject_syscall_class(nr) == SC_MASK ||
		     inject_syscall_class(nr) == SC_EINTR || (tries == 0 && nr == c->nr)))
			break;
		if (tries == max_tries)
			return inject_fail(j, EAGAIN, "thread %d of pid %d kept being inside libc or the "
				    "loader (busy in malloc?); try again", j->tid, j->pid);
		if ((rc = inject_resume(j)))
			return rc;
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
	return 0;
}

#endif /* __x86_64__ */
