/* SPDX-License-Identifier: MIT */
/*
 * inject_priv.h — what the injector's files share (x86_64 only): the job
 * state (struct inject_ctx), errors, /proc and ELF lookups (inject_proc.c), thread
 * choice and ptrace stops (inject_threads.c).
 */
#ifndef GPUIO_INJECT_PRIV_H
#define GPUIO_INJECT_PRIV_H
#if defined(__x86_64__)

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>
#include "gpu/inject.h"

#define MAX_STASH       16
#define MAX_UNSAFE      16

/* Fault signals the calls may raise themselves: never blocked (see top). */
#define SYNC_SIGS ((1ull << (SIGSEGV - 1)) | (1ull << (SIGBUS - 1)) | (1ull << (SIGFPE - 1)) | \
		   (1ull << (SIGILL - 1)) | (1ull << (SIGTRAP - 1)) | (1ull << (SIGSYS - 1)))

struct inject_range {
	uint64_t lo, hi;
};

struct inject_ctx {
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
	struct inject_range unsafe[MAX_UNSAFE];   /* text of libc and ld.so */
	int nunsafe;
	struct inject_range loader[MAX_UNSAFE];   /* text of ld.so */
	int nloader;
};

int inject_fail(struct inject_ctx *j, int e, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

int inject_read_small(const char *path, char *buf, size_t len);

char inject_proc_state(pid_t pid, pid_t tid, unsigned long *flags);

bool inject_state_gone(char st);

long inject_status_field(pid_t pid, pid_t tid, const char *key);

bool inject_status_has_word(pid_t pid, const char *key, const char *word);

double inject_ms_left(const struct timespec *dl);

void inject_deadline_in(struct timespec *dl, int ms);

int inject_perm_error(struct inject_ctx *j, int e, const char *what);

int inject_mem_write(struct inject_ctx *j, uint64_t addr, const void *data, size_t len);

int inject_mem_read_str(struct inject_ctx *j, uint64_t addr, char *buf, size_t len);

int inject_resolve_dl(struct inject_ctx *j);

bool inject_in_ranges(const struct inject_range *r, int n, uint64_t pc);

int inject_find_mapping(pid_t pid, uint64_t addr, uint64_t *lo, bool *is_stack);

enum sc_class { SC_RESTARTS, SC_FUTEX, SC_MASK, SC_EINTR, SC_OTHER };
enum sc_class inject_syscall_class(long nr);

struct inject_cand {
	pid_t tid;
	long nr;   /* the syscall it was blocked in; -1 outside one, -2 running */
	int score;
	char why[80];
};

int inject_choose_threads(struct inject_ctx *j, struct inject_cand **out, int *nout);

int inject_wait_thread(struct inject_ctx *j, const struct timespec *dl, int *status);

int inject_gone(struct inject_ctx *j);

int inject_pt_error(struct inject_ctx *j, const char *what);

int inject_resume(struct inject_ctx *j);

int inject_interrupt_thread(struct inject_ctx *j, const struct timespec *dl, bool pass_signals);

int inject_attach_thread(struct inject_ctx *j, const struct inject_cand *c);

int inject_call(struct inject_ctx *j, const char *lib, const char *sym, const char *arg, int *ret_out, struct gpuio_inject_info *info);

#endif /* __x86_64__ */
#endif /* GPUIO_INJECT_PRIV_H */
