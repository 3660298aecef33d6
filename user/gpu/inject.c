// SPDX-License-Identifier: MIT
/*
 * inject.c — call dlopen + dlsym + one function inside a running process.
 *
 * How (x86_64):
 *  1. Pick a thread (choose_threads): one blocked in a system call that the
 *     kernel restarts transparently (read, nanosleep, poll, wait4…) is best:
 *     its user code is a libc syscall wrapper that holds no lock. Then futex
 *     waits (the thread may hold *another* lock), then syscalls that return
 *     EINTR to the application when stopped (epoll_wait…), then running
 *     threads. A thread whose pc is inside ld.so is never used (it may hold
 *     the loader lock, and dlopen would deadlock on it). A running thread is
 *     stopped again until its pc is outside libc and ld.so (not inside malloc
 *     with an arena lock held, not in the loader).
 *  2. PTRACE_SEIZE + PTRACE_INTERRUPT that one thread; the others keep
 *     running, so locks they hold get released. Save the general registers,
 *     the xsave area (vector/x87 state: the calls clobber it) and the signal
 *     mask; block every asynchronous signal in the thread for the calls (they
 *     stay pending and are delivered after detach, in order, nothing lost).
 *     Synchronous fault signals stay unblocked: the kernel resets the
 *     handler of a blocked fault signal to SIG_DFL, which would damage the
 *     application's SIGSEGV handler.
 *  3. Each call: strings written below the stack's red zone, rsp 16-byte
 *     aligned at the call with a return address of 0; rip = the function,
 *     orig_rax = -1 (so the kernel does not "restart" our call as if it were
 *     the interrupted syscall); continue; the return faults at rip 0 (a
 *     SIGSEGV signal-delivery-stop we recognise by rip == 0 and rsp == the
 *     slot + 8, and suppress); rax is the result.
 *  4. Restore: the saved registers go back *including* orig_rax and the
 *     -ERESTART* value in rax; on resume the kernel's own restart logic
 *     (arch_do_signal_or_restart) rewinds rip by 2 and reloads rax, exactly
 *     as after any ptrace stop, so the application's read/sleep continues
 *     (a nanosleep keeps its absolute end through its restart_block).
 *     Signals that did reach the thread during the calls (only unblockable
 *     or fault-class ones can) are re-sent at detach with their siginfo.
 *
 * Failure handling: the process exiting at any point is -ESRCH (the exit is
 * reaped from ptrace so nothing is left stopped); a fault inside the called
 * code is -EFAULT and the thread is restored as if nothing happened (the
 * library stays loaded); a call still running at the deadline is interrupted
 * and the thread restored (-ETIMEDOUT; locks the abandoned call took stay
 * taken — the one unavoidable risk of timing out).
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
#include "gpu/inject_priv.h"

#if defined(__x86_64__)
#include <elf.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/ptrace.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include "lib/units.h"
#endif

static void seterr(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}


#if !defined(__x86_64__)

int gpuio_inject__call_ex(pid_t pid, const char *lib_path, const char *sym, const char *arg,
			  int timeout_ms, struct gpuio_inject_info *info, int *ret_out,
			  char *err, size_t errlen)
{
	seterr(err, errlen, "injecting into a process is implemented for x86_64 only");
	return -ENOTSUP;
}

#else /* __x86_64__ */

#define RED_ZONE        128
#define MIN_STACK_ROOM  (32u << 10)   /* below rsp on a non-growing stack */
#define MAX_STR         4096
#define RTLD_NOW_       2
#define STOP_GRACE_MS   2000          /* to stop the thread again for restoring */
#define XSTATE_MAX      (64u << 10)

int inject_fail(struct inject_ctx *j, int e, const char *fmt, ...)
{
	va_list ap;

	/* The first reason is the one that matters; later ones are fallout. */
	if (j->err && j->errlen && !j->err[0]) {
		va_start(ap, fmt);
		vsnprintf(j->err, j->errlen, fmt, ap);
		va_end(ap);
	}
	return -e;
}

double inject_ms_left(const struct timespec *dl)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(dl->tv_sec - now.tv_sec) * 1e3 + (double)(dl->tv_nsec - now.tv_nsec) / 1e6;
}

void inject_deadline_in(struct timespec *dl, int ms)
{
	clock_gettime(CLOCK_MONOTONIC, dl);
	dl->tv_sec += ms / 1000;
	dl->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (dl->tv_nsec >= (long)NSEC_PER_SEC) {
		dl->tv_sec++;
		dl->tv_nsec -= (long)NSEC_PER_SEC;
	}
}

/* Why ptrace is refused, in one line a user can act on. */
int inject_perm_error(struct inject_ctx *j, int e, const char *what)
{
	char buf[16];
	int scope = -1;

	if (inject_read_small("/proc/sys/kernel/yama/ptrace_scope", buf, sizeof(buf)) > 0)
		scope = atoi(buf);
	if (scope == 3)
		return inject_fail(j, e, "%s pid %d: ptrace is disabled on this machine "
			    "(kernel.yama.ptrace_scope=3, needs a reboot to lower)", what, j->pid);
	if (geteuid() != 0)
		return inject_fail(j, e, "%s pid %d: permission denied: run as root (or with CAP_SYS_PTRACE)%s",
			    what, j->pid,
			    scope == 1 ? "; kernel.yama.ptrace_scope=1 lets non-root users trace only "
					 "their own descendants" :
			    scope == 2 ? "; kernel.yama.ptrace_scope=2 requires CAP_SYS_PTRACE" : "");
	return inject_fail(j, e, "%s pid %d: %s even as root (a security module, or the process is "
		    "being set up/torn down)", what, j->pid, strerror(e));
}

/* ---- one remote call ------------------------------------------------------- */

/*
 * fn(a0, a1) in the stopped thread; *ret = rax. -EFAULT when the called code
 * faults (message says where), -ETIMEDOUT at the deadline (the thread is
 * stopped again before returning), -ESRCH when the process is gone.
 */
static int remote_call(struct inject_ctx *j, const char *name, uint64_t fn, uint64_t a0, uint64_t a1,
		       uint64_t *ret)
{
	struct user_regs_struct r = j->saved;
	uint64_t zero = 0;
	int status, rc;

	j->phase = name;
	rc = inject_mem_write(j, j->ret_slot, &zero, sizeof(zero));
	if (rc)
		return inject_fail(j, -rc, "cannot write to the stack of thread %d: %s", j->tid, strerror(-rc));
	r.rip = fn;
	r.rsp = j->ret_slot;
	r.rdi = a0;
	r.rsi = a1;
	r.rax = 0;
	r.orig_rax = (uint64_t)-1;         /* no syscall restart on this resume */
	r.eflags &= ~(0x400ull | 0x100ull);  /* DF clear (ABI), no single-step */
	if (ptrace(PTRACE_SETREGS, j->tid, NULL, &r) < 0)
		return inject_pt_error(j, "SETREGS");
	if ((rc = inject_resume(j)))
		return rc;
	for (;;) {
		siginfo_t si;

		rc = inject_wait_thread(j, &j->deadline, &status);
		if (rc == -ESRCH)
			return inject_gone(j);
		if (rc == -ETIMEDOUT) {
			struct timespec dl;

			j->timed_out = true;
			inject_deadline_in(&dl, STOP_GRACE_MS);
			rc = inject_interrupt_thread(j, &dl, false);
			if (rc == -ETIMEDOUT)
				return inject_fail(j, ETIMEDOUT, "%s did not return within %.1f s in pid %d "
					    "(thread %d), and the thread cannot be stopped to restore it",
					    name, j->timeout_ms / 1e3, j->pid, j->tid);
			if (rc < 0)
				return rc;
			return inject_fail(j, ETIMEDOUT, "%s did not return within %.1f s in pid %d "
				    "(thread %d); interrupted it and restored the thread",
				    name, j->timeout_ms / 1e3, j->pid, j->tid);
		}
		if (!WIFSTOPPED(status))
			continue;
		if ((status >> 16) != 0) {
			/* Group stop (job control) or another event: finish our call
			 * first; detach puts the thread back into the group stop. */
			if ((rc = inject_resume(j)))
				return rc;
			continue;
		}
		if (ptrace(PTRACE_GETSIGINFO, j->tid, NULL, &si) < 0)
			return inject_pt_error(j, "GETSIGINFO");
		if (si.si_signo == SIGSEGV && si.si_code > 0) {
			if (ptrace(PTRACE_GETREGS, j->tid, NULL, &r) < 0)
				return inject_pt_error(j, "GETREGS");
			if (r.rip == 0 && r.rsp == j->ret_slot + 8) {
				*ret = r.rax;   /* our return trap; the SIGSEGV is dropped */
				return 0;
			}
		}
		if (si.si_code > 0 && (SYNC_SIGS & (1ull << (si.si_signo - 1)))) {
			/* The called code faulted: abandon it, restore the thread. */
			if (ptrace(PTRACE_GETREGS, j->tid, NULL, &r) < 0)
				return inject_pt_error(j, "GETREGS");
			return inject_fail(j, EFAULT, "%s crashed in pid %d (signal %d, %s, at pc 0x%llx, "
				    "address %p); the thread was restored and the signal dropped",
				    name, j->pid, si.si_signo, strsignal(si.si_signo),
				    (unsigned long long)r.rip, si.si_addr);
		}
		/* Someone else's signal: keep it for detach, go on with the call. */
		if (j->nstash < MAX_STASH)
			j->stash[j->nstash++] = si;
		else
			j->stash_lost++;
		if ((rc = inject_resume(j)))
			return rc;
	}
}

/* The loader's last error in the target, for messages. */
static void remote_dlerror(struct inject_ctx *j, char *buf, size_t len)
{
	uint64_t p = 0;

	snprintf(buf, len, "(no dlerror text)");
	if (!j->fn_dlerror || remote_call(j, "dlerror", j->fn_dlerror, 0, 0, &p) || !p)
		return;
	if (inject_mem_read_str(j, p, buf, len))
		snprintf(buf, len, "(dlerror text unreadable)");
}

/* ---- attach, save, restore --------------------------------------------------- */

/* Put everything back and let the thread go. Safe to call in any state. */
static void release(struct inject_ctx *j)
{
	struct timespec dl;
	int sig = 0, first = 0;

	if (!j->attached)
		return;
	if (!j->stopped) {
		inject_deadline_in(&dl, STOP_GRACE_MS);
		if (inject_interrupt_thread(j, &dl, !j->have_regs) < 0 || !j->stopped) {
			if (j->attached)
				inject_fail(j, EIO, "thread %d of pid %d could not be stopped to restore it",
				     j->tid, j->pid);
			/* Still seized: it is detached when this process exits. */
			return;
		}
	}
	if (j->have_xstate)
		ptrace(PTRACE_SETREGSET, j->tid, (void *)NT_X86_XSTATE, &j->xiov);
	else if (j->have_fp)
		ptrace(PTRACE_SETFPREGS, j->tid, NULL, &j->fp);
	if (j->mask_changed)
		ptrace(PTRACE_SETSIGMASK, j->tid, (void *)sizeof(j->mask), &j->mask);
	if (j->have_regs) {
		struct user_regs_struct r = j->saved;

		/* An abandoned call may have replaced the thread's restart_block
		 * (an interrupted sleep of its own): report the original sleep as
		 * interrupted rather than restart someone else's. */
		if (j->timed_out && (long)r.rax == -516 /* ERESTART_RESTARTBLOCK */) {
			r.rax = (uint64_t)-EINTR;
			r.orig_rax = (uint64_t)-1;
		}
		ptrace(PTRACE_SETREGS, j->tid, NULL, &r);
	}
	/* Deferred signals: the first rides on the detach with its siginfo
	 * (possible from a signal-delivery-stop), the rest are sent again. */
	if (j->nstash && j->sigstop &&
	    ptrace(PTRACE_SETSIGINFO, j->tid, NULL, &j->stash[0]) == 0) {
		sig = j->stash[0].si_signo;
		first = 1;
	}
	if (ptrace(PTRACE_DETACH, j->tid, NULL, (void *)(long)sig) < 0 && errno == ESRCH) {
		int status;

		inject_deadline_in(&dl, 1000);
		if (inject_wait_thread(j, &dl, &status) == -ESRCH)
			return;
	}
	j->attached = j->stopped = false;
	for (int i = first; i < j->nstash; i++) {
		siginfo_t *si = &j->stash[i];

		if (si->si_code == SI_TKILL || si->si_code > 0)
			syscall(SYS_tgkill, j->pid, j->tid, si->si_signo);
		else if (si->si_code == SI_USER)
			kill(j->pid, si->si_signo);
		else   /* sigqueue & co keep their value */
			syscall(SYS_rt_sigqueueinfo, j->pid, si->si_signo, si);
	}
}

static int save_state(struct inject_ctx *j)
{
	uint64_t lo = 0, block;
	bool is_stack = false;
	long nr;

	if (ptrace(PTRACE_GETREGS, j->tid, NULL, &j->saved) < 0)
		return inject_pt_error(j, "GETREGS");
	j->have_regs = true;
	if (j->saved.cs != 0x33)   /* 64-bit user code segment */
		return inject_fail(j, ENOTSUP, "thread %d of pid %d runs 32-bit code: not supported",
			    j->tid, j->pid);
	j->xstate = calloc(1, XSTATE_MAX);
	if (!j->xstate)
		return inject_fail(j, ENOMEM, "out of memory");
	j->xiov = (struct iovec){ j->xstate, XSTATE_MAX };
	if (ptrace(PTRACE_GETREGSET, j->tid, (void *)NT_X86_XSTATE, &j->xiov) == 0)
		j->have_xstate = true;   /* iov_len is now the real size */
	else if (ptrace(PTRACE_GETFPREGS, j->tid, NULL, &j->fp) == 0)
		j->have_fp = true;
	else
		return inject_pt_error(j, "GETFPREGS");
	nr = (long)j->saved.orig_rax;
	if (nr < 0 || inject_syscall_class(nr) != SC_MASK) {
		if (ptrace(PTRACE_GETSIGMASK, j->tid, (void *)sizeof(j->mask), &j->mask) < 0)
			return inject_pt_error(j, "GETSIGMASK");
		block = ~SYNC_SIGS;
		if (ptrace(PTRACE_SETSIGMASK, j->tid, (void *)sizeof(block), &block) < 0)
			return inject_pt_error(j, "SETSIGMASK");
		j->mask_changed = true;
	}
	/* dlopen needs real stack: refuse a thread with little room left (a
	 * small thread stack, or a signal handler on a sigaltstack). */
	if (inject_find_mapping(j->pid, j->saved.rsp, &lo, &is_stack) == 0 && !is_stack &&
	    j->saved.rsp - lo < MIN_STACK_ROOM)
		return inject_fail(j, ENOSPC, "thread %d of pid %d has only %llu bytes of stack left",
			    j->tid, j->pid, (unsigned long long)(j->saved.rsp - lo));
	return 0;
}

/* Copy strings below the red zone; their addresses; the return slot below. */
static int place_strings(struct inject_ctx *j, const char *const *s, uint64_t *addr, int n)
{
	size_t total = 0, off = 0;
	uint64_t base;
	char *buf;
	int rc;

	for (int i = 0; i < n; i++)
		total += s[i] ? strlen(s[i]) + 1 : 0;
	base = (j->saved.rsp - RED_ZONE - total) & ~15ull;
	buf = malloc(total ? total : 1);
	if (!buf)
		return inject_fail(j, ENOMEM, "out of memory");
	for (int i = 0; i < n; i++) {
		addr[i] = 0;
		if (!s[i])
			continue;
		addr[i] = base + off;
		memcpy(buf + off, s[i], strlen(s[i]) + 1);
		off += strlen(s[i]) + 1;
	}
	rc = total ? inject_mem_write(j, base, buf, total) : 0;
	free(buf);
	if (rc)
		return inject_fail(j, -rc, "cannot write to the stack of thread %d of pid %d: %s",
			    j->tid, j->pid, strerror(-rc));
	/* rsp % 16 == 8 at function entry, as after a `call` from aligned code. */
	j->ret_slot = base - 8;
	return 0;
}

/* ---- the whole thing ---------------------------------------------------------- */

int inject_call(struct inject_ctx *j, const char *lib, const char *sym, const char *arg, int *ret_out,
		  struct gpuio_inject_info *info)
{
	const char *strs[3] = { lib, sym, arg };
	uint64_t a[3], handle = 0, fn = 0, ret = 0;
	char derr[512];
	struct inject_cand *c = NULL;
	int nc = 0, rc, i;

	rc = inject_resolve_dl(j);
	if (rc)
		return rc;
	rc = inject_choose_threads(j, &c, &nc);
	if (rc)
		return rc;
	for (i = 0, rc = -ESRCH; i < nc; i++) {
		rc = inject_attach_thread(j, &c[i]);
		/* -ESRCH without a message: that thread ended before we seized it */
		if (rc != -ESRCH || j->err[0] || !inject_proc_state(j->pid, 0, NULL))
			break;
	}
	if (rc) {
		free(c);
		return rc == -ESRCH ? inject_gone(j) : rc;
	}
	if (info) {
		info->tid = j->tid;
		snprintf(info->thread, sizeof(info->thread), "%s", c[i].why);
	}
	free(c);
	rc = save_state(j);
	if (rc)
		return rc;
	rc = place_strings(j, strs, a, 3);
	if (rc)
		return rc;

	rc = remote_call(j, "dlopen", j->fn_dlopen, a[0], RTLD_NOW_, &handle);
	if (rc)
		return rc;
	if (!handle) {
		remote_dlerror(j, derr, sizeof(derr));
		return inject_fail(j, ENOEXEC, "dlopen in pid %d failed: %s", j->pid, derr);
	}
	rc = remote_call(j, "dlsym", j->fn_dlsym, handle, a[1], &fn);
	if (rc)
		return rc;
	if (!fn) {
		uint64_t ignored;

		remote_dlerror(j, derr, sizeof(derr));
		/* Undo our reference; the library unloads unless already in use. */
		if (j->fn_dlclose)
			remote_call(j, "dlclose", j->fn_dlclose, handle, 0, &ignored);
		return inject_fail(j, ENOENT, "%s: no symbol %s in it (dlsym in pid %d: %s)",
			    lib, sym, j->pid, derr);
	}
	rc = remote_call(j, sym, fn, a[2], 0, &ret);
	if (rc)
		return rc;
	*ret_out = (int)(uint32_t)ret;
	return 0;
}

int gpuio_inject__call_ex(pid_t pid, const char *lib_path, const char *sym, const char *arg,
			  int timeout_ms, struct gpuio_inject_info *info, int *ret_out,
			  char *err, size_t errlen)
{
	struct inject_ctx j = { .pid = pid, .err = err, .errlen = errlen };
	char lib[PATH_MAX], probe[PATH_MAX + 32], ebuf[256];
	unsigned long flags = 0;
	int rc, dummy;
	long tracer;
	char st;

	if (!err || !errlen) {
		j.err = err = ebuf;
		j.errlen = errlen = sizeof(ebuf);
	}
	err[0] = '\0';
	if (info)
		memset(info, 0, sizeof(*info));
	if (!ret_out)
		ret_out = &dummy;
	if (pid <= 0 || !lib_path || !*lib_path || !sym || !*sym)
		return inject_fail(&j, EINVAL, "inject: need a pid, a library and a symbol");
	if (strlen(lib_path) >= MAX_STR || strlen(sym) >= MAX_STR || (arg && strlen(arg) >= MAX_STR))
		return inject_fail(&j, ENAMETOOLONG, "inject: library, symbol or argument longer than %d bytes",
			    MAX_STR - 1);
	if (pid == getpid())
		return inject_fail(&j, EINVAL, "inject: cannot inject into gpuio itself");
	j.timeout_ms = timeout_ms > 0 ? timeout_ms : GPUIO_INJECT_TIMEOUT_MS;

	st = inject_proc_state(pid, 0, &flags);
	if (inject_state_gone(st))
		return inject_fail(&j, ESRCH, "pid %d: no such process%s", pid, st ? " (zombie: it exited)" : "");
	if (flags & 0x00200000)   /* PF_KTHREAD */
		return inject_fail(&j, EINVAL, "pid %d is a kernel thread", pid);
	if (st == 'T')
		return inject_fail(&j, EAGAIN, "pid %d is stopped (job control: SIGSTOP/SIGTSTP); "
			    "continue it (kill -CONT %d) and try again", pid, pid);
	tracer = inject_status_field(pid, 0, "TracerPid");
	if (tracer > 0)
		return inject_fail(&j, EBUSY, "pid %d is already traced by pid %ld "
			    "(a debugger, strace, or another gpuio inject)", pid, tracer);
	if (inject_status_field(pid, 0, "Tgid") != pid)
		return inject_fail(&j, EINVAL, "%d is a thread id, not a process id (its process is %ld)",
			    pid, inject_status_field(pid, 0, "Tgid"));
	j.own_child = inject_status_field(pid, 0, "PPid") == getpid();
	if (inject_status_has_word(pid, "x86_Thread_features", "shstk"))
		/* The fake return address would trip the shadow stack (#CP). */
		return inject_fail(&j, ENOTSUP, "pid %d uses the x86 shadow stack (CET): calling functions "
			    "in it this way is not supported", pid);

	/* The library is opened by the target: an absolute path it can see. */
	if (strchr(lib_path, '/')) {
		if (!realpath(lib_path, lib))
			return inject_fail(&j, errno, "%s: %s", lib_path, strerror(errno));
		snprintf(probe, sizeof(probe), "/proc/%d/root%s", pid, lib);
		if (access(probe, R_OK) < 0 && errno == ENOENT) {
			/* an exiting process has no root any more: that is not a namespace */
			char root[64];

			snprintf(root, sizeof(root), "/proc/%d/root/", pid);
			st = inject_proc_state(pid, 0, NULL);
			if (inject_state_gone(st) || access(root, F_OK) < 0)
				return inject_fail(&j, ESRCH, "pid %d: no such process (it exited)", pid);
			return inject_fail(&j, ENOENT, "%s: not visible from pid %d (another mount namespace?)",
				    lib, pid);
		}
	} else {
		snprintf(lib, sizeof(lib), "%s", lib_path);   /* the target's search path */
	}
	inject_deadline_in(&j.deadline, j.timeout_ms);
	rc = inject_call(&j, lib, sym, arg, ret_out, info);
	release(&j);
	if (info)
		info->signals_deferred = j.nstash + j.stash_lost;
	free(j.xstate);
	if (rc && !err[0])
		seterr(err, errlen, "injection into pid %d failed: %s", pid, strerror(-rc));
	if (!rc && err[0])
		rc = -EIO;   /* restoring failed after a good call */
	return rc;
}



int gpuio_inject__call(pid_t pid, const char *lib_path, const char *sym, const char *arg,
		       int *ret_out, char *err, size_t errlen)
{
	return gpuio_inject__call_ex(pid, lib_path, sym, arg, 0, NULL, ret_out, err, errlen);
}

#endif /* __x86_64__ */
