/* SPDX-License-Identifier: MIT */
/*
 * inject.h — load a shared library into a running process and call one
 * function in it, the way debuggers call functions in a tracee (ptrace).
 *
 * One thread of the target is stopped (PTRACE_SEIZE + PTRACE_INTERRUPT), made
 * to call dlopen(lib, RTLD_NOW), dlsym(handle, sym) and sym(arg) on its own
 * stack below the red zone, then gets back its registers, FP/vector state,
 * signal mask and interrupted system call; the other threads keep running.
 * x86_64 targets only (elsewhere the calls return -ENOTSUP).
 */
#ifndef GPUIO_INJECT_H
#define GPUIO_INJECT_H
#include <stddef.h>
#include <sys/types.h>

#define GPUIO_INJECT_TIMEOUT_MS 5000

/* What the injection did, for messages (optional output). */
struct gpuio_inject_info {
	pid_t tid;            /* the thread that made the calls */
	char thread[96];      /* why it was chosen: "blocked in read", "running" */
	int signals_deferred; /* signals that arrived during the calls, re-sent at detach */
};

/*
 * Load lib into pid and call sym(arg) there (arg may be NULL). On success
 * returns 0 and *ret_out = the function's int return; else -errno and a
 * one-line reason in err. Never leaves the process stopped or with altered
 * registers. A library already loaded is not loaded twice (dlopen returns
 * the same handle) but sym is called again.
 */
int gpuio_inject__call(pid_t pid, const char *lib_path, const char *sym, const char *arg,
		       int *ret_out, char *err, size_t errlen);

/* The same with a timeout for the whole injection (ms; <= 0: the default
 * 5 s) and what was done in info (may be NULL). */
int gpuio_inject__call_ex(pid_t pid, const char *lib_path, const char *sym, const char *arg,
			  int timeout_ms, struct gpuio_inject_info *info, int *ret_out,
			  char *err, size_t errlen);

#endif
