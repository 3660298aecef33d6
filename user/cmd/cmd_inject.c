// SPDX-License-Identifier: MIT
/*
 * cmd_inject.c — `gpuio inject -p PID --arg DIR [--lib PATH] [--call SYM]`:
 * load a library into a running process and call one function in it
 * (user/gpu/inject.c). By default: the CUPTI collector, gpuio_cupti_attach(DIR).
 *
 * Long on purpose: cmd_inject() (~110 lines) is one getopt switch, one case
 * per option, then the call.
 */
#include <errno.h>
#include <getopt.h>
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

#define DEFAULT_LIB  "libgpuio-cupti.so"
#define DEFAULT_CALL "gpuio_cupti_attach"

static void usage(FILE *f)
{
	fprintf(f,
"usage: gpuio inject -p PID --arg DIR [--lib PATH] [--call SYM] [--timeout SECS]\n\n"
"Load a shared library into a running process and call a function in it, the\n"
"way a debugger does: one thread of PID is stopped with ptrace (preferably one\n"
"blocked in a system call such as read or nanosleep), calls dlopen(PATH),\n"
"dlsym(SYM) and SYM(ARG), and then gets back its registers, signal mask and\n"
"interrupted system call, which resumes as if nothing happened. The other\n"
"threads keep running. By default this attaches gpuio's CUPTI collector to a\n"
"CUDA process started without it: gpuio_cupti_attach(DIR) starts recording\n"
"its GPU activity into DIR.\n\n"
"options:\n"
"  -p, --pid PID         the process (x86_64, dynamically linked: glibc >= 2.34,\n"
"                        or an older glibc program that links libdl)\n"
"  -a, --arg STR         the function's argument; for gpuio_cupti_attach, the\n"
"                        output directory (required; made absolute). Without\n"
"                        --arg another --call gets NULL\n"
"  -l, --lib PATH        library to load (default: " DEFAULT_LIB " next to the\n"
"                        gpuio executable, else ../lib/gpuio/" DEFAULT_LIB "\n"
"                        relative to it). Loaded once: injecting again calls\n"
"                        the function again in the same copy\n"
"  -c, --call SYM        function to call, `int SYM(const char *arg)`\n"
"                        (default: " DEFAULT_CALL ")\n"
"  -t, --timeout SECS    give up after SECS (default 5): the call is abandoned\n"
"                        and the thread restored\n"
"  -v, --verbose         say which thread was used\n"
"  -h, --help            this text\n\n"
"Needs root (or CAP_SYS_PTRACE); with kernel.yama.ptrace_scope=3 ptrace is off.\n"
"Prints `injected LIB into pid PID; SYM returned N`.\n"
"exit status: 0 the function was called (its return value is printed), 1 the\n"
"injection failed (the process keeps running, as it was), 2 bad usage.\n\n"
"examples:\n"
"  sudo gpuio inject -p 4242 --arg /tmp/gpu-run\n"
"  sudo gpuio inject -p 4242 --lib ./libmine.so --call mine_init --arg hello\n");
}

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
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "lib", required_argument, NULL, 'l' },
		{ "call", required_argument, NULL, 'c' },
		{ "arg", required_argument, NULL, 'a' },
		{ "timeout", required_argument, NULL, 't' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *lib = NULL, *sym = DEFAULT_CALL, *arg = NULL;
	char libbuf[PATH_MAX + 32], argbuf[PATH_MAX + 1], err[512];
	struct gpuio_inject_info info;
	bool verbose = false;
	double timeout = 5.0;
	long pid = 0;
	int c, rc, ret = 0;
	char *end;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":p:l:c:a:t:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			errno = 0;
			pid = strtol(optarg, &end, 10);
			if (errno || *end || pid <= 0 || pid > INT_MAX) {
				pr_err("inject: bad pid '%s'", optarg);
				return GPUIO_EXIT_USAGE;
			}
			break;
		case 'l':
			lib = optarg;
			break;
		case 'c':
			sym = optarg;
			break;
		case 'a':
			arg = optarg;
			break;
		case 't':
			timeout = strtod(optarg, &end);
			if (*end || !(timeout > 0) || timeout > 3600) {
				pr_err("inject: bad --timeout '%s' (seconds, > 0)", optarg);
				return GPUIO_EXIT_USAGE;
			}
			break;
		case 'v':
			verbose = true;
			break;
		case 'h':
			usage(stdout);
			return GPUIO_EXIT_OK;
		case ':':
			pr_err("inject: option '%s' needs a value (try `gpuio inject --help`)",
			       argv[optind - 1]);
			return GPUIO_EXIT_USAGE;
		default:
			pr_err("inject: unknown option '%s' (try `gpuio inject --help`)", argv[optind - 1]);
			return GPUIO_EXIT_USAGE;
		}
	}
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
