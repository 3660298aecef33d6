// SPDX-License-Identifier: MIT
/*
 * cmd_inject.c — `gpuio inject -p PID --arg DIR [--lib PATH] [--call SYM]`:
 * load a library into a running process and call one function in it
 * (user/gpu/inject.c). By default: the CUPTI collector, gpuio_cupti_attach(DIR).
 *
 * Options: one table (lib/opts.h).
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cmd/commands.h"
#include "gpu/inject.h"
#include "lib/log.h"
#include "lib/opts.h"

#define DEFAULT_LIB  "libgpuio-cupti.so"
#define DEFAULT_CALL "gpuio_cupti_attach"

static long inj_pid;
static const char *inj_lib, *inj_sym, *inj_arg;
static double inj_timeout;
static bool inj_verbose;

static int on_pid(const struct opt *opt, const char *arg, void *ctx)
{
	char *end;

	errno = 0;
	inj_pid = strtol(arg, &end, 10);
	if (errno || *end || inj_pid <= 0 || inj_pid > INT_MAX) {
		pr_err("inject: bad pid '%s'", arg);
		return -1;
	}
	return 0;
}

/* seconds, fractions allowed: 0.5 */
static int on_timeout(const struct opt *opt, const char *arg, void *ctx)
{
	char *end;

	inj_timeout = strtod(arg, &end);
	if (*end || !(inj_timeout > 0) || inj_timeout > 3600) {
		pr_err("inject: bad --timeout '%s' (seconds, > 0)", arg);
		return -1;
	}
	return 0;
}

static const struct opt inject_opts[] = {
	OPT_GROUP("options:"),
	OPT_CALL('p', "pid", "PID", "the process (x86_64, dynamically linked: glibc >= 2.34,\n"
		 "or an older glibc program that links libdl)", on_pid),
	OPT_STRING('a', "arg", &inj_arg, "STR",
		   "the function's argument; for gpuio_cupti_attach, the\n"
		   "output directory (required; made absolute). Without\n"
		   "--arg another --call gets NULL"),
	OPT_STRING('l', "lib", &inj_lib, "PATH",
		   "library to load (default: " DEFAULT_LIB " next to the\n"
		   "gpuio executable, else ../lib/gpuio/" DEFAULT_LIB "\n"
		   "relative to it). Loaded once: injecting again calls\n"
		   "the function again in the same copy"),
	OPT_STRING('c', "call", &inj_sym, "SYM",
		   "function to call, `int SYM(const char *arg)`\n(default: " DEFAULT_CALL ")"),
	OPT_CALL('t', "timeout", "SECS", "give up after SECS (default 5): the call is abandoned\n"
		 "and the thread restored", on_timeout),
	OPT_BOOL('v', "verbose", &inj_verbose, "say which thread was used"),
	OPT_END(),
};

static const struct opt_cmd inject_page = {
	.name = "inject",
	.usage = "usage: gpuio inject -p PID --arg DIR [--lib PATH] [--call SYM] [--timeout SECS]",
	.about =
"Load a shared library into a running process and call a function in it, the\n"
"way a debugger does: one thread of PID is stopped with ptrace (preferably one\n"
"blocked in a system call such as read or nanosleep), calls dlopen(PATH),\n"
"dlsym(SYM) and SYM(ARG), and then gets back its registers, signal mask and\n"
"interrupted system call, which resumes as if nothing happened. The other\n"
"threads keep running. By default this attaches gpuio's CUPTI collector to a\n"
"CUDA process started without it: gpuio_cupti_attach(DIR) starts recording\n"
"its GPU activity into DIR.\n",
	.opts = inject_opts,
	.after =
"Needs root (or CAP_SYS_PTRACE); with kernel.yama.ptrace_scope=3 ptrace is off.\n"
"Prints `injected LIB into pid PID; SYM returned N`.\n"
"exit status: 0 the function was called (its return value is printed), 1 the\n"
"injection failed (the process keeps running, as it was), 2 bad usage.\n\n"
"examples:\n"
"  sudo gpuio inject -p 4242 --arg /tmp/gpu-run\n"
"  sudo gpuio inject -p 4242 --lib ./libmine.so --call mine_init --arg hello\n",
};

/* libgpuio-cupti.so beside gpuio, else in ../lib/gpuio/ (an installed tree). */
static int default_lib(char *out, size_t len)
{
	char exe[PATH_MAX], *dir;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0) {
		pr_err("inject: cannot find the gpuio executable (/proc/self/exe): %s; pass --lib",
		       n < 0 ? strerror(errno) : "empty");
		return -ENOENT;
	}
	exe[n] = '\0';
	dir = dirname(exe);
	snprintf(out, len, "%s/%s", dir, DEFAULT_LIB);
	if (access(out, R_OK) == 0)
		return 0;
	snprintf(out, len, "%s/../lib/gpuio/%s", dir, DEFAULT_LIB);
	if (access(out, R_OK) == 0)
		return 0;
	pr_err("inject: no %s in %s/ nor in %s/../lib/gpuio/ (build it, or pass --lib PATH)",
	       DEFAULT_LIB, dir, dir);
	return -ENOENT;
}

int cmd_inject(int argc, char **argv)
{
	const char *lib, *sym, *arg;
	char libbuf[PATH_MAX + 32], argbuf[PATH_MAX + 1], err[512];
	struct gpuio_inject_info info;
	bool verbose;
	double timeout;
	long pid;
	int optind, rc, ret = 0;

	inj_pid = 0;
	inj_lib = inj_arg = NULL;
	inj_sym = DEFAULT_CALL;
	inj_timeout = 5.0;
	inj_verbose = false;
	optind = opt_parse(&inject_page, argc, argv, NULL);
	if (optind == OPT_HELP)
		return GPUIO_EXIT_OK;
	if (optind == OPT_BAD)
		return GPUIO_EXIT_USAGE;
	pid = inj_pid, lib = inj_lib, sym = inj_sym, arg = inj_arg;
	timeout = inj_timeout, verbose = inj_verbose;
	if (optind < argc) {
		pr_err("inject: unexpected argument '%s' (the process is given with -p PID)", argv[optind]);
		return GPUIO_EXIT_USAGE;
	}
	if (!pid) {
		pr_err("inject: which process? (-p PID; try `gpuio inject --help`)");
		return GPUIO_EXIT_USAGE;
	}
	if (!*sym) {
		pr_err("inject: --call needs a symbol name");
		return GPUIO_EXIT_USAGE;
	}
	if (!strcmp(sym, DEFAULT_CALL)) {
		if (!arg || !*arg) {
			pr_err("inject: %s needs its output directory: --arg DIR", DEFAULT_CALL);
			return GPUIO_EXIT_USAGE;
		}
		/* The target resolves a relative path against its own cwd, not ours. */
		if (arg[0] != '/') {
			char cwd[PATH_MAX];

			if (!getcwd(cwd, sizeof(cwd)) ||
			    snprintf(argbuf, sizeof(argbuf), "%s/%s", cwd, arg) >= (int)sizeof(argbuf)) {
				pr_err("inject: cannot make '%s' absolute", arg);
				return GPUIO_EXIT_ERROR;
			}
			arg = argbuf;
		}
	}
	if (!lib) {
		if (default_lib(libbuf, sizeof(libbuf)))
			return GPUIO_EXIT_ERROR;
		lib = libbuf;
	}
	rc = gpuio_inject__call_ex((pid_t)pid, lib, sym, arg, (int)(timeout * 1000), &info, &ret,
				   err, sizeof(err));
	if (verbose && info.tid)
		pr_info("inject: used thread %d of pid %ld (%s)%s", info.tid, pid, info.thread,
			info.signals_deferred ? "; signals that came meanwhile were re-sent" : "");
	if (rc) {
		pr_err("%s", err);
		return GPUIO_EXIT_ERROR;
	}
	printf("injected %s into pid %ld; %s returned %d\n", lib, pid, sym, ret);
	fflush(stdout);
	return GPUIO_EXIT_OK;
}
