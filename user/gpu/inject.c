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
#define MAX_STASH       16
#define MAX_UNSAFE      16
#define RTLD_NOW_       2
#define STOP_GRACE_MS   2000          /* to stop the thread again for restoring */
#define XSTATE_MAX      (64u << 10)

/* Fault signals the calls may raise themselves: never blocked (see top). */
#define SYNC_SIGS ((1ull << (SIGSEGV - 1)) | (1ull << (SIGBUS - 1)) | (1ull << (SIGFPE - 1)) | \
		   (1ull << (SIGILL - 1)) | (1ull << (SIGTRAP - 1)) | (1ull << (SIGSYS - 1)))

struct range {
	uint64_t lo, hi;
};

struct inj {
	pid_t pid, tid;
	bool own_child;               /* we are its real parent: never reap it */
	char *err;
	size_t errlen;
	struct timespec deadline;
	int timeout_ms;
	const char *phase;            /* for the timeout message */

	bool attached;                /* seized */
	bool stopped;                 /* in a ptrace-stop now */
	bool sigstop;                 /* ...and it is a signal-delivery-stop */
	bool timed_out;

	struct user_regs_struct saved;
	bool have_regs;
	void *xstate;
	struct iovec xiov;
	bool have_xstate;
	struct user_fpregs_struct fp;
	bool have_fp;
	uint64_t mask;
	bool mask_changed;

	siginfo_t stash[MAX_STASH];
	int nstash, stash_lost;

	uint64_t ret_slot;            /* where the call's return address (0) lives */
	uint64_t fn_dlopen, fn_dlsym, fn_dlerror, fn_dlclose;
	struct range unsafe[MAX_UNSAFE];   /* text of libc and ld.so */
	int nunsafe;
	struct range loader[MAX_UNSAFE];   /* text of ld.so */
	int nloader;
};

static int fail(struct inj *j, int e, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(struct inj *j, int e, const char *fmt, ...)
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

static int read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0) {
		n = -errno;
		close(fd);
		return (int)n;
	}
	close(fd);
	buf[n] = '\0';
	return (int)n;
}

/* State letter and flags of /proc/PID[/task/TID]/stat; 0 when unreadable. */
static char proc_state(pid_t pid, pid_t tid, unsigned long *flags)
{
	char path[64], buf[1024], *p;
	char st = 0;

	if (tid)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (read_small(path, buf, sizeof(buf)) <= 0)
		return 0;
	p = strrchr(buf, ')');   /* comm may contain spaces and parens */
	if (!p)
		return 0;
	if (flags)
		*flags = 0;
	/* ") S ppid pgrp session tty tpgid flags" */
	if (sscanf(p + 1, " %c %*d %*d %*d %*d %*d %lu", &st, flags ? flags : &(unsigned long){0}) < 1)
		return 0;
	return st;
}

static long status_field(pid_t pid, pid_t tid, const char *key)
{
	char path[64], buf[4096], *p;
	size_t kl = strlen(key);

	if (tid)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (read_small(path, buf, sizeof(buf)) <= 0)
		return -1;
	for (p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, key, kl) && p[kl] == ':')
			return strtol(p + kl + 1, NULL, 10);
	return -1;
}

/* The "KEY:" line of /proc/PID/status contains WORD. */
static bool status_has_word(pid_t pid, const char *key, const char *word)
{
	char path[64], buf[4096], *p, *e;
	size_t kl = strlen(key), wl = strlen(word);

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (read_small(path, buf, sizeof(buf)) <= 0)
		return false;
	for (p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, key, kl) || p[kl] != ':')
			continue;
		e = strchr(p, '\n');
		if (e)
			*e = '\0';
		for (p += kl + 1; (p = strstr(p, word)); p += wl)
			if ((p[-1] == ' ' || p[-1] == '\t') && (p[wl] == ' ' || !p[wl]))
				return true;
		return false;
	}
	return false;
}

static double ms_left(const struct timespec *dl)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(dl->tv_sec - now.tv_sec) * 1e3 + (double)(dl->tv_nsec - now.tv_nsec) / 1e6;
}

static void deadline_in(struct timespec *dl, int ms)
{
	clock_gettime(CLOCK_MONOTONIC, dl);
	dl->tv_sec += ms / 1000;
	dl->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (dl->tv_nsec >= 1000000000L) {
		dl->tv_sec++;
		dl->tv_nsec -= 1000000000L;
	}
}

/* Why ptrace is refused, in one line a user can act on. */
static int perm_error(struct inj *j, int e, const char *what)
{
	char buf[16];
	int scope = -1;

	if (read_small("/proc/sys/kernel/yama/ptrace_scope", buf, sizeof(buf)) > 0)
		scope = atoi(buf);
	if (scope == 3)
		return fail(j, e, "%s pid %d: ptrace is disabled on this machine "
			    "(kernel.yama.ptrace_scope=3, needs a reboot to lower)", what, j->pid);
	if (geteuid() != 0)
		return fail(j, e, "%s pid %d: permission denied: run as root (or with CAP_SYS_PTRACE)%s",
			    what, j->pid,
			    scope == 1 ? "; kernel.yama.ptrace_scope=1 lets non-root users trace only "
					 "their own descendants" :
			    scope == 2 ? "; kernel.yama.ptrace_scope=2 requires CAP_SYS_PTRACE" : "");
	return fail(j, e, "%s pid %d: %s even as root (a security module, or the process is "
		    "being set up/torn down)", what, j->pid, strerror(e));
}

/* ---- the target's memory ------------------------------------------------ */

static int mem_write(struct inj *j, uint64_t addr, const void *data, size_t len)
{
	struct iovec local = { (void *)data, len }, remote = { (void *)addr, len };
	const unsigned char *d = data;
	size_t off = 0;

	if (process_vm_writev(j->tid, &local, 1, &remote, 1, 0) == (ssize_t)len)
		return 0;
	/* Fallback: word by word through ptrace (works on any mapping ptrace can write). */
	while (off < len) {
		size_t n = len - off < 8 ? len - off : 8;
		long word = 0;

		if (n < 8) {
			errno = 0;
			word = ptrace(PTRACE_PEEKDATA, j->tid, (void *)(addr + off), NULL);
			if (errno)
				return -errno;
		}
		memcpy(&word, d + off, n);
		if (ptrace(PTRACE_POKEDATA, j->tid, (void *)(addr + off), (void *)word) < 0)
			return -errno;
		off += n;
	}
	return 0;
}

/* A NUL-terminated string at addr (at most len - 1 bytes). */
static int mem_read_str(struct inj *j, uint64_t addr, char *buf, size_t len)
{
	size_t got = 0;

	buf[0] = '\0';
	while (got < len - 1) {
		/* Stay within one page: a string may end just before an unmapped one. */
		size_t n = 4096 - ((addr + got) & 4095);
		struct iovec local, remote;
		ssize_t r;

		if (n > len - 1 - got)
			n = len - 1 - got;
		local = (struct iovec){ buf + got, n };
		remote = (struct iovec){ (void *)(addr + got), n };
		r = process_vm_readv(j->tid, &local, 1, &remote, 1, 0);
		if (r <= 0) {
			long word;

			errno = 0;
			word = ptrace(PTRACE_PEEKDATA, j->tid, (void *)(addr + got), NULL);
			if (errno)
				break;
			r = len - 1 - got < 8 ? (ssize_t)(len - 1 - got) : 8;
			memcpy(buf + got, &word, (size_t)r);
		}
		if (memchr(buf + got, '\0', (size_t)r))
			return 0;
		got += (size_t)r;
	}
	buf[got] = '\0';
	return got ? 0 : -EFAULT;
}

/* ---- /proc/PID/maps and the loader's symbols ------------------------------ */

struct mapping {
	uint64_t lo, hi, off;
	unsigned long ino;
	unsigned int maj, min;
	char perms[5];
	const char *path;   /* into the line buffer; "" when anonymous */
};

static bool parse_map_line(char *line, struct mapping *m)
{
	int n = 0;

	memset(m, 0, sizeof(*m));
	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %x:%x %lu %n", &m->lo, &m->hi,
		   m->perms, &m->off, &m->maj, &m->min, &m->ino, &n) < 7)
		return false;
	m->path = line + n;
	line[strcspn(line, "\n")] = '\0';
	return true;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/* The C library proper or libdl (glibc < 2.34 keeps dlopen there), musl's libc. */
static bool is_dl_provider(const char *b)
{
	return !strncmp(b, "libc.so", 7) || !strncmp(b, "libc-2.", 7) || !strncmp(b, "libdl.so", 8) ||
	       !strncmp(b, "libdl-", 6) || !strncmp(b, "ld-musl-", 8) || !strncmp(b, "libc.musl-", 10);
}

static bool is_loader(const char *b)
{
	return !strncmp(b, "ld-linux", 8) || !strncmp(b, "ld-2.", 5) || !strncmp(b, "ld-musl-", 8) ||
	       !strcmp(b, "ld.so");
}

/*
 * Look names up in the .dynsym of an ELF file; vals[i] = st_value (0: not
 * found). Prefer the default version (dlopen@@GLIBC_2.34 over the compat
 * dlopen@GLIBC_2.2.5; in glibc 2.36 they are the same address anyway).
 * *vaddr0 = the page-aligned p_vaddr of the segment at file offset 0.
 */
static int elf_lookup(int fd, const char *const *names, uint64_t *vals, int n, uint64_t *vaddr0)
{
	bool hidden[8] = { 0 };
	Elf_Scn *scn = NULL, *versym = NULL, *dynsym = NULL;
	GElf_Shdr sh, dsh;
	Elf_Data *data, *vdata = NULL;
	GElf_Ehdr eh;
	size_t nph;
	bool have0 = false;
	Elf *e;
	int rc = -ENOEXEC;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e)
		return -ENOEXEC;
	if (!gelf_getehdr(e, &eh) || eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64 ||
	    elf_getphdrnum(e, &nph))
		goto out;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_offset == 0) {
			*vaddr0 = ph.p_vaddr & ~4095ull;
			have0 = true;
			break;
		}
	}
	if (!have0)
		goto out;
	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_DYNSYM)
			dynsym = scn;
		else if (sh.sh_type == SHT_GNU_versym)
			versym = scn;
	}
	if (!dynsym || !gelf_getshdr(dynsym, &dsh) || !(data = elf_getdata(dynsym, NULL)))
		goto out;
	if (versym)
		vdata = elf_getdata(versym, NULL);
	for (size_t i = 0; i < dsh.sh_size / (dsh.sh_entsize ? dsh.sh_entsize : 1); i++) {
		GElf_Sym s;
		const char *nm;
		bool hid = false;

		if (!gelf_getsym(data, (int)i, &s) || s.st_shndx == SHN_UNDEF ||
		    GELF_ST_TYPE(s.st_info) != STT_FUNC || !s.st_value)
			continue;
		nm = elf_strptr(e, dsh.sh_link, s.st_name);
		if (!nm)
			continue;
		if (vdata && (i + 1) * sizeof(GElf_Versym) <= vdata->d_size)
			hid = ((const GElf_Versym *)vdata->d_buf)[i] & 0x8000;
		for (int k = 0; k < n; k++)
			if (!strcmp(nm, names[k]) && (!vals[k] || (hidden[k] && !hid))) {
				vals[k] = s.st_value;
				hidden[k] = hid;
			}
	}
	rc = 0;
out:
	elf_end(e);
	return rc;
}

/* Open the file behind a mapping as the target sees it, checked by inode. */
static int open_mapped(pid_t pid, const struct mapping *m)
{
	char path[PATH_MAX + 64];
	struct stat st;
	int fd;

	/* map_files is the mapped inode itself (root only), even if deleted. */
	snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, pid, m->lo, m->hi);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	for (int i = 0; i < 2; i++) {
		if (i == 0)
			snprintf(path, sizeof(path), "/proc/%d/root%s", pid, m->path);
		else
			snprintf(path, sizeof(path), "%s", m->path);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) == 0 && st.st_ino == m->ino)
			return fd;
		close(fd);
	}
	return -ENOENT;
}

/* dlopen/dlsym/dlerror/dlclose addresses in the target; unsafe text ranges. */
static int resolve_dl(struct inj *j)
{
	static const char *const names[] = { "dlopen", "dlsym", "dlerror", "dlclose" };
	uint64_t found[4] = { 0 };
	char path[64], line[PATH_MAX + 128];
	bool any_lib = false, dyn = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", j->pid);
	f = fopen(path, "re");
	if (!f) {
		if (errno == EACCES || errno == EPERM)
			return perm_error(j, errno, "cannot read the memory map of");
		return fail(j, ESRCH, "pid %d: no such process", j->pid);
	}
	while (fgets(line, sizeof(line), f)) {
		struct mapping m;
		const char *b;

		if (!parse_map_line(line, &m))
			continue;
		if (m.lo == 0) {
			fclose(f);
			/* Our return address 0 would execute code instead of faulting. */
			return fail(j, ENOTSUP, "pid %d maps page 0 (vm.mmap_min_addr=0?): "
				    "cannot call functions in it safely", j->pid);
		}
		if (m.path[0] != '/')
			continue;
		b = base_name(m.path);
		if ((is_dl_provider(b) || is_loader(b)) && strchr(m.perms, 'x') &&
		    j->nunsafe < MAX_UNSAFE)
			j->unsafe[j->nunsafe++] = (struct range){ m.lo, m.hi };
		if (is_loader(b)) {
			dyn = true;
			if (strchr(m.perms, 'x') && j->nloader < MAX_UNSAFE)
				j->loader[j->nloader++] = (struct range){ m.lo, m.hi };
		}
		if (!is_dl_provider(b) || m.off != 0)
			continue;
		any_lib = true;
		{
			uint64_t vals[4] = { 0 }, vaddr0 = 0;
			int fd = open_mapped(j->pid, &m);

			if (fd < 0)
				continue;
			if (elf_lookup(fd, names, vals, 4, &vaddr0) == 0)
				for (int k = 0; k < 4; k++)
					if (vals[k] && !found[k])
						found[k] = m.lo - vaddr0 + vals[k];
			close(fd);
		}
	}
	fclose(f);
	j->fn_dlopen = found[0];
	j->fn_dlsym = found[1];
	j->fn_dlerror = found[2];
	j->fn_dlclose = found[3];
	if (j->fn_dlopen && j->fn_dlsym)
		return 0;
	if (!dyn && !any_lib)
		return fail(j, ENOTSUP, "pid %d has no dynamic loader or C library mapped "
			    "(statically linked?): cannot dlopen in it", j->pid);
	return fail(j, ENOTSUP, "pid %d: no dlopen/dlsym in its C library%s (glibc < 2.34 "
		    "programs that do not link libdl are not supported)", j->pid,
		    any_lib ? "" : " (could not read it)");
}

static bool in_ranges(const struct range *r, int n, uint64_t pc)
{
	for (int i = 0; i < n; i++)
		if (pc >= r[i].lo && pc < r[i].hi)
			return true;
	return false;
}

/* The mapping containing addr: its start and whether it is the main [stack]. */
static int find_mapping(pid_t pid, uint64_t addr, uint64_t *lo, bool *is_stack)
{
	char path[64], line[PATH_MAX + 128];
	int rc = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		struct mapping m;

		if (parse_map_line(line, &m) && addr >= m.lo && addr < m.hi) {
			*lo = m.lo;
			*is_stack = !strcmp(m.path, "[stack]");
			rc = 0;
			break;
		}
	}
	fclose(f);
	return rc;
}

/* ---- which thread --------------------------------------------------------- */

enum sc_class { SC_RESTARTS, SC_FUTEX, SC_MASK, SC_EINTR, SC_OTHER };

static enum sc_class syscall_class(long nr)
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

struct cand {
	pid_t tid;
	long nr;   /* the syscall it was blocked in; -1 outside one, -2 running */
	int score;
	char why[80];
};

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

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
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
	const struct cand *x = a, *y = b;

	if (x->score != y->score)
		return y->score - x->score;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

/* Threads of the target, best first (see the top of the file). */
static int choose_threads(struct inj *j, struct cand **out, int *nout)
{
	char path[64];
	struct dirent *de;
	struct cand *c = NULL;
	int n = 0, cap = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", j->pid);
	d = opendir(path);
	if (!d)
		return fail(j, ESRCH, "pid %d: no such process", j->pid);
	while ((de = readdir(d))) {
		char sp[96], buf[256];
		pid_t tid = (pid_t)atoi(de->d_name);
		struct cand k = { .tid = tid };
		unsigned long long pc = 0;
		long nr;
		char st;
		int r;

		if (tid <= 0)
			continue;
		st = proc_state(j->pid, tid, NULL);
		if (!st || st == 'Z' || st == 'X' || st == 'x' || st == 'T' || st == 't')
			continue;
		snprintf(sp, sizeof(sp), "/proc/%d/task/%d/syscall", j->pid, tid);
		r = read_small(sp, buf, sizeof(buf));
		if (r < 0 && (r == -EACCES || r == -EPERM)) {
			closedir(d);
			free(c);
			return perm_error(j, -r, "cannot inspect");
		}
		if (r <= 0)
			continue;
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
			if (pc && in_ranges(j->loader, j->nloader, pc))
				continue;   /* maybe holding the loader lock */
			if (nr < 0) {
				k.score = 20;
				snprintf(k.why, sizeof(k.why), "blocked (state %c)", st);
			} else {
				static const int score[] = { [SC_RESTARTS] = 100, [SC_FUTEX] = 80,
							     [SC_MASK] = 60, [SC_EINTR] = 30,
							     [SC_OTHER] = 40 };

				k.score = score[syscall_class(nr)] - (st == 'D' ? 5 : 0);
				describe_syscall(k.why, sizeof(k.why), "blocked", nr);
			}
		}
		if (tid == j->pid)
			k.score += 1;   /* ties: the main thread, the application's own */
		if (n == cap) {
			struct cand *nc = realloc(c, (size_t)(cap = cap ? cap * 2 : 16) * sizeof(*c));

			if (!nc) {
				closedir(d);
				free(c);
				return fail(j, ENOMEM, "out of memory");
			}
			c = nc;
		}
		c[n++] = k;
	}
	closedir(d);
	if (!n) {
		free(c);
		return fail(j, ESRCH, "pid %d has no thread to use (all exited, stopped, or inside the dynamic loader)", j->pid);
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
static int wait_thread(struct inj *j, const struct timespec *dl, int *status)
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
		if (ms_left(dl) <= 0)
			return -ETIMEDOUT;
		nanosleep(&(struct timespec){ 0, ns }, NULL);
		if (ns < 5000000)
			ns *= 2;
	}
}

static int gone(struct inj *j)
{
	return fail(j, ESRCH, "pid %d exited during the injection (%s)", j->pid,
		    j->phase ? j->phase : "before it could be stopped");
}

/* A ptrace request failed: the thread died (reap it) or something else. */
static int pt_error(struct inj *j, const char *what)
{
	int e = errno;
	int status;

	if (e == ESRCH) {
		struct timespec dl;

		/* Killed while stopped: the exit is reported to us shortly. */
		deadline_in(&dl, 1000);
		while (wait_thread(j, &dl, &status) == 0) {
			j->stopped = false;
			if (ptrace(PTRACE_CONT, j->tid, NULL, NULL) < 0 && errno != ESRCH)
				break;
		}
		return gone(j);
	}
	return fail(j, e, "ptrace %s on thread %d of pid %d: %s", what, j->tid, j->pid, strerror(e));
}

static bool stash_signal(struct inj *j)
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
static int stop_is_ours(struct inj *j)
{
	struct user_regs_struct r;
	siginfo_t si;

	if (ptrace(PTRACE_GETSIGINFO, j->tid, NULL, &si) < 0 ||
	    ptrace(PTRACE_GETREGS, j->tid, NULL, &r) < 0)
		return pt_error(j, "GETSIGINFO");
	if (si.si_signo == SIGSEGV && si.si_code > 0 && r.rip == 0 && r.rsp == j->ret_slot + 8)
		return 1;
	return si.si_code > 0 && (SYNC_SIGS & (1ull << (si.si_signo - 1))) ? 1 : 0;
}

/* Resume from the current stop without delivering its signal. */
static int resume(struct inj *j)
{
	if (ptrace(PTRACE_CONT, j->tid, NULL, NULL) < 0)
		return pt_error(j, "CONT");
	j->stopped = j->sigstop = false;
	return 0;
}

/*
 * Stop a seized thread (PTRACE_INTERRUPT) and wait for the interrupt stop.
 * Signals met on the way: delivered (pass_signals, before we touched
 * anything) or kept for detach. 1: the process is in a group stop.
 */
static int interrupt_thread(struct inj *j, const struct timespec *dl, bool pass_signals)
{
	int status, rc;

	if (ptrace(PTRACE_INTERRUPT, j->tid, NULL, NULL) < 0)
		return pt_error(j, "INTERRUPT");
	for (;;) {
		rc = wait_thread(j, dl, &status);
		if (rc == -ESRCH)
			return gone(j);
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
					return pt_error(j, "CONT");
				j->stopped = j->sigstop = false;
				continue;
			}
			rc = stop_is_ours(j);
			if (rc < 0)
				return rc;
			if (!rc && !stash_signal(j))
				return pt_error(j, "GETSIGINFO");
			/* Any stop will do for restoring: stay here. */
			return 0;
		}
		if ((rc = resume(j)))
			return rc;
	}
}

/* ---- one remote call ------------------------------------------------------- */

/*
 * fn(a0, a1) in the stopped thread; *ret = rax. -EFAULT when the called code
 * faults (message says where), -ETIMEDOUT at the deadline (the thread is
 * stopped again before returning), -ESRCH when the process is gone.
 */
static int remote_call(struct inj *j, const char *name, uint64_t fn, uint64_t a0, uint64_t a1,
		       uint64_t *ret)
{
	struct user_regs_struct r = j->saved;
	uint64_t zero = 0;
	int status, rc;

	j->phase = name;
	rc = mem_write(j, j->ret_slot, &zero, sizeof(zero));
	if (rc)
		return fail(j, -rc, "cannot write to the stack of thread %d: %s", j->tid, strerror(-rc));
	r.rip = fn;
	r.rsp = j->ret_slot;
	r.rdi = a0;
	r.rsi = a1;
	r.rax = 0;
	r.orig_rax = (uint64_t)-1;         /* no syscall restart on this resume */
	r.eflags &= ~(0x400ull | 0x100ull);  /* DF clear (ABI), no single-step */
	if (ptrace(PTRACE_SETREGS, j->tid, NULL, &r) < 0)
		return pt_error(j, "SETREGS");
	if ((rc = resume(j)))
		return rc;
	for (;;) {
		siginfo_t si;

		rc = wait_thread(j, &j->deadline, &status);
		if (rc == -ESRCH)
			return gone(j);
		if (rc == -ETIMEDOUT) {
			struct timespec dl;

			j->timed_out = true;
			deadline_in(&dl, STOP_GRACE_MS);
			rc = interrupt_thread(j, &dl, false);
			if (rc == -ETIMEDOUT)
				return fail(j, ETIMEDOUT, "%s did not return within %.1f s in pid %d "
					    "(thread %d), and the thread cannot be stopped to restore it",
					    name, j->timeout_ms / 1e3, j->pid, j->tid);
			if (rc < 0)
				return rc;
			return fail(j, ETIMEDOUT, "%s did not return within %.1f s in pid %d "
				    "(thread %d); interrupted it and restored the thread",
				    name, j->timeout_ms / 1e3, j->pid, j->tid);
		}
		if (!WIFSTOPPED(status))
			continue;
		if ((status >> 16) != 0) {
			/* Group stop (job control) or another event: finish our call
			 * first; detach puts the thread back into the group stop. */
			if ((rc = resume(j)))
				return rc;
			continue;
		}
		if (ptrace(PTRACE_GETSIGINFO, j->tid, NULL, &si) < 0)
			return pt_error(j, "GETSIGINFO");
		if (si.si_signo == SIGSEGV && si.si_code > 0) {
			if (ptrace(PTRACE_GETREGS, j->tid, NULL, &r) < 0)
				return pt_error(j, "GETREGS");
			if (r.rip == 0 && r.rsp == j->ret_slot + 8) {
				*ret = r.rax;   /* our return trap; the SIGSEGV is dropped */
				return 0;
			}
		}
		if (si.si_code > 0 && (SYNC_SIGS & (1ull << (si.si_signo - 1)))) {
			/* The called code faulted: abandon it, restore the thread. */
			if (ptrace(PTRACE_GETREGS, j->tid, NULL, &r) < 0)
				return pt_error(j, "GETREGS");
			return fail(j, EFAULT, "%s crashed in pid %d (signal %d, %s, at pc 0x%llx, "
				    "address %p); the thread was restored and the signal dropped",
				    name, j->pid, si.si_signo, strsignal(si.si_signo),
				    (unsigned long long)r.rip, si.si_addr);
		}
		/* Someone else's signal: keep it for detach, go on with the call. */
		if (j->nstash < MAX_STASH)
			j->stash[j->nstash++] = si;
		else
			j->stash_lost++;
		if ((rc = resume(j)))
			return rc;
	}
}

/* The loader's last error in the target, for messages. */
static void remote_dlerror(struct inj *j, char *buf, size_t len)
{
	uint64_t p = 0;

	snprintf(buf, len, "(no dlerror text)");
	if (!j->fn_dlerror || remote_call(j, "dlerror", j->fn_dlerror, 0, 0, &p) || !p)
		return;
	if (mem_read_str(j, p, buf, len))
		snprintf(buf, len, "(dlerror text unreadable)");
}

/* ---- attach, save, restore --------------------------------------------------- */

/* Put everything back and let the thread go. Safe to call in any state. */
static void release(struct inj *j)
{
	struct timespec dl;
	int sig = 0, first = 0;

	if (!j->attached)
		return;
	if (!j->stopped) {
		deadline_in(&dl, STOP_GRACE_MS);
		if (interrupt_thread(j, &dl, !j->have_regs) < 0 || !j->stopped) {
			if (j->attached)
				fail(j, EIO, "thread %d of pid %d could not be stopped to restore it",
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

		deadline_in(&dl, 1000);
		if (wait_thread(j, &dl, &status) == -ESRCH)
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

/* Seize and stop one thread at a point where calling the loader is safe. */
static int attach_thread(struct inj *j, const struct cand *c)
{
	const int max_tries = 200;
	int rc;

	j->tid = c->tid;
	if (ptrace(PTRACE_SEIZE, j->tid, NULL, NULL) < 0) {
		int e = errno;
		long tracer = status_field(j->pid, j->tid, "TracerPid");

		if (e == ESRCH)
			return -ESRCH;   /* that thread just ended: try another */
		if (tracer > 0)
			return fail(j, EBUSY, "pid %d (thread %d) is already traced by pid %ld "
				    "(a debugger, strace, or another gpuio inject)", j->pid, j->tid, tracer);
		if (e == EPERM || e == EACCES)
			return perm_error(j, e, "cannot ptrace");
		return fail(j, e, "ptrace seize of thread %d of pid %d: %s", j->tid, j->pid, strerror(e));
	}
	j->attached = true;
	for (int tries = 0;; tries++) {
		struct user_regs_struct r;
		long nr;

		j->phase = "stopping a thread";
		rc = interrupt_thread(j, &j->deadline, true);
		if (rc == 1)
			return fail(j, EAGAIN, "pid %d is stopped (job control: SIGSTOP/SIGTSTP); "
				    "continue it (kill -CONT %d) and try again", j->pid, j->pid);
		if (rc == -ETIMEDOUT)
			return fail(j, ETIMEDOUT, "thread %d of pid %d did not stop within %.1f s "
				    "(uninterruptible sleep?)", j->tid, j->pid, j->timeout_ms / 1e3);
		if (rc)
			return rc;
		if (ptrace(PTRACE_GETREGS, j->tid, NULL, &r) < 0)
			return pt_error(j, "GETREGS");
		nr = (long)r.orig_rax;
		/* Safe: anywhere outside libc and ld.so (not in malloc, not in the
		 * loader); or in a blocking syscall of the application's (the libc
		 * wrappers hold no lock); or still in the very wait we chose it for. */
		if (!in_ranges(j->unsafe, j->nunsafe, r.rip))
			break;
		if (nr >= 0 && !in_ranges(j->loader, j->nloader, r.rip) &&
		    (syscall_class(nr) == SC_RESTARTS || syscall_class(nr) == SC_MASK ||
		     syscall_class(nr) == SC_EINTR || (tries == 0 && nr == c->nr)))
			break;
		if (tries == max_tries)
			return fail(j, EAGAIN, "thread %d of pid %d kept being inside libc or the "
				    "loader (busy in malloc?); try again", j->tid, j->pid);
		if ((rc = resume(j)))
			return rc;
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
	return 0;
}

static int save_state(struct inj *j)
{
	uint64_t lo = 0, block;
	bool is_stack = false;
	long nr;

	if (ptrace(PTRACE_GETREGS, j->tid, NULL, &j->saved) < 0)
		return pt_error(j, "GETREGS");
	j->have_regs = true;
	if (j->saved.cs != 0x33)   /* 64-bit user code segment */
		return fail(j, ENOTSUP, "thread %d of pid %d runs 32-bit code: not supported",
			    j->tid, j->pid);
	j->xstate = calloc(1, XSTATE_MAX);
	if (!j->xstate)
		return fail(j, ENOMEM, "out of memory");
	j->xiov = (struct iovec){ j->xstate, XSTATE_MAX };
	if (ptrace(PTRACE_GETREGSET, j->tid, (void *)NT_X86_XSTATE, &j->xiov) == 0)
		j->have_xstate = true;   /* iov_len is now the real size */
	else if (ptrace(PTRACE_GETFPREGS, j->tid, NULL, &j->fp) == 0)
		j->have_fp = true;
	else
		return pt_error(j, "GETFPREGS");
	nr = (long)j->saved.orig_rax;
	if (nr < 0 || syscall_class(nr) != SC_MASK) {
		if (ptrace(PTRACE_GETSIGMASK, j->tid, (void *)sizeof(j->mask), &j->mask) < 0)
			return pt_error(j, "GETSIGMASK");
		block = ~SYNC_SIGS;
		if (ptrace(PTRACE_SETSIGMASK, j->tid, (void *)sizeof(block), &block) < 0)
			return pt_error(j, "SETSIGMASK");
		j->mask_changed = true;
	}
	/* dlopen needs real stack: refuse a thread with little room left (a
	 * small thread stack, or a signal handler on a sigaltstack). */
	if (find_mapping(j->pid, j->saved.rsp, &lo, &is_stack) == 0 && !is_stack &&
	    j->saved.rsp - lo < MIN_STACK_ROOM)
		return fail(j, ENOSPC, "thread %d of pid %d has only %llu bytes of stack left",
			    j->tid, j->pid, (unsigned long long)(j->saved.rsp - lo));
	return 0;
}

/* Copy strings below the red zone; their addresses; the return slot below. */
static int place_strings(struct inj *j, const char *const *s, uint64_t *addr, int n)
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
		return fail(j, ENOMEM, "out of memory");
	for (int i = 0; i < n; i++) {
		addr[i] = 0;
		if (!s[i])
			continue;
		addr[i] = base + off;
		memcpy(buf + off, s[i], strlen(s[i]) + 1);
		off += strlen(s[i]) + 1;
	}
	rc = total ? mem_write(j, base, buf, total) : 0;
	free(buf);
	if (rc)
		return fail(j, -rc, "cannot write to the stack of thread %d of pid %d: %s",
			    j->tid, j->pid, strerror(-rc));
	/* rsp % 16 == 8 at function entry, as after a `call` from aligned code. */
	j->ret_slot = base - 8;
	return 0;
}

/* ---- the whole thing ---------------------------------------------------------- */

static int inject(struct inj *j, const char *lib, const char *sym, const char *arg, int *ret_out,
		  struct gpuio_inject_info *info)
{
	const char *strs[3] = { lib, sym, arg };
	uint64_t a[3], handle = 0, fn = 0, ret = 0;
	char derr[512];
	struct cand *c = NULL;
	int nc = 0, rc, i;

	rc = resolve_dl(j);
	if (rc)
		return rc;
	rc = choose_threads(j, &c, &nc);
	if (rc)
		return rc;
	for (i = 0, rc = -ESRCH; i < nc; i++) {
		rc = attach_thread(j, &c[i]);
		/* -ESRCH without a message: that thread ended before we seized it */
		if (rc != -ESRCH || j->err[0] || !proc_state(j->pid, 0, NULL))
			break;
	}
	if (rc) {
		free(c);
		return rc == -ESRCH ? gone(j) : rc;
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
		return fail(j, ENOEXEC, "dlopen in pid %d failed: %s", j->pid, derr);
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
		return fail(j, ENOENT, "%s: no symbol %s in it (dlsym in pid %d: %s)",
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
	struct inj j = { .pid = pid, .err = err, .errlen = errlen };
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
		return fail(&j, EINVAL, "inject: need a pid, a library and a symbol");
	if (strlen(lib_path) >= MAX_STR || strlen(sym) >= MAX_STR || (arg && strlen(arg) >= MAX_STR))
		return fail(&j, ENAMETOOLONG, "inject: library, symbol or argument longer than %d bytes",
			    MAX_STR - 1);
	if (pid == getpid())
		return fail(&j, EINVAL, "inject: cannot inject into gpuio itself");
	j.timeout_ms = timeout_ms > 0 ? timeout_ms : GPUIO_INJECT_TIMEOUT_MS;

	st = proc_state(pid, 0, &flags);
	if (!st || st == 'Z' || st == 'X' || st == 'x')
		return fail(&j, ESRCH, "pid %d: no such process%s", pid, st ? " (zombie: it exited)" : "");
	if (flags & 0x00200000)   /* PF_KTHREAD */
		return fail(&j, EINVAL, "pid %d is a kernel thread", pid);
	if (st == 'T')
		return fail(&j, EAGAIN, "pid %d is stopped (job control: SIGSTOP/SIGTSTP); "
			    "continue it (kill -CONT %d) and try again", pid, pid);
	tracer = status_field(pid, 0, "TracerPid");
	if (tracer > 0)
		return fail(&j, EBUSY, "pid %d is already traced by pid %ld "
			    "(a debugger, strace, or another gpuio inject)", pid, tracer);
	if (status_field(pid, 0, "Tgid") != pid)
		return fail(&j, EINVAL, "%d is a thread id, not a process id (its process is %ld)",
			    pid, status_field(pid, 0, "Tgid"));
	j.own_child = status_field(pid, 0, "PPid") == getpid();
	if (status_has_word(pid, "x86_Thread_features", "shstk"))
		/* The fake return address would trip the shadow stack (#CP). */
		return fail(&j, ENOTSUP, "pid %d uses the x86 shadow stack (CET): calling functions "
			    "in it this way is not supported", pid);

	/* The library is opened by the target: an absolute path it can see. */
	if (strchr(lib_path, '/')) {
		if (!realpath(lib_path, lib))
			return fail(&j, errno, "%s: %s", lib_path, strerror(errno));
		snprintf(probe, sizeof(probe), "/proc/%d/root%s", pid, lib);
		if (access(probe, R_OK) < 0 && errno == ENOENT)
			return fail(&j, ENOENT, "%s: not visible from pid %d (another mount namespace?)",
				    lib, pid);
	} else {
		snprintf(lib, sizeof(lib), "%s", lib_path);   /* the target's search path */
	}
	deadline_in(&j.deadline, j.timeout_ms);
	rc = inject(&j, lib, sym, arg, ret_out, info);
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

#endif /* __x86_64__ */

int gpuio_inject__call(pid_t pid, const char *lib_path, const char *sym, const char *arg,
		       int *ret_out, char *err, size_t errlen)
{
	return gpuio_inject__call_ex(pid, lib_path, sym, arg, 0, NULL, ret_out, err, errlen);
}
