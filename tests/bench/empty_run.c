/*
 * empty_run — run a command under bench_empty.bpf.c (the BPF floor).
 *
 *   empty_run [-v|-vv] [-f] -- CMD ARGS...   (-vv adds libbpf debug output)
 *
 * -f: the empty program on the fault layer's hook (page_fault_user) instead
 * of the syscall pair.
 * Forks; the child blocks on a pipe while the parent loads and attaches the
 * empty tp_btf/sys_enter + sys_exit programs and puts the child's pid in the
 * TGID map; then the child is released and execs CMD.  Exits with CMD's
 * status (128+signal if it was killed), 1 if the programs could not load.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include "bench_empty.skel.h"

static int verbose;
static int faults;               /* -f: the page-fault hook, not the syscalls */

static int print_libbpf(enum libbpf_print_level lvl, const char *fmt, va_list ap)
{
	if (lvl == LIBBPF_DEBUG && verbose < 2)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

int main(int argc, char **argv)
{
	int i = 1, pfd[2], status;
	struct bench_empty_bpf *skel = NULL;
	pid_t child;
	char go = 1;

	for (; i < argc; i++) {
		if (!strcmp(argv[i], "-v"))
			verbose++;
		else if (!strcmp(argv[i], "-vv"))
			verbose += 2;
		else if (!strcmp(argv[i], "-f"))
			faults = 1;
		else if (!strcmp(argv[i], "--")) {
			i++;
			break;
		} else
			break;
	}
	if (i >= argc) {
		fprintf(stderr, "usage: empty_run [-v] [-f] -- CMD ARGS...\n");
		return 2;
	}
	libbpf_set_print(print_libbpf);

	if (pipe(pfd) < 0) {
		perror("pipe");
		return 1;
	}
	child = fork();
	if (child < 0) {
		perror("fork");
		return 1;
	}
	if (child == 0) {
		close(pfd[1]);
		/* Wait for the parent to attach; EOF without a byte means it failed. */
		if (read(pfd[0], &go, 1) != 1)
			_exit(127);
		close(pfd[0]);
		execvp(argv[i], &argv[i]);
		fprintf(stderr, "empty_run: %s: %s\n", argv[i], strerror(errno));
		_exit(127);
	}
	close(pfd[0]);

	skel = bench_empty_bpf__open();
	if (skel && faults) {
		bpf_program__set_autoload(skel->progs.bench_sys_enter, false);
		bpf_program__set_autoload(skel->progs.bench_sys_exit, false);
		bpf_program__set_autoload(skel->progs.bench_fault, true);
	}
	if (skel && bench_empty_bpf__load(skel)) {
		bench_empty_bpf__destroy(skel);
		skel = NULL;
	}
	if (!skel) {
		fprintf(stderr, "empty_run: cannot load bench_empty: %s\n", strerror(errno));
		goto fail;
	}
	if (bench_empty_bpf__attach(skel)) {
		fprintf(stderr, "empty_run: cannot attach bench_empty: %s\n", strerror(errno));
		goto fail;
	}
	__u32 tgid = (__u32)child;
	__u8 one = 1;

	if (bpf_map__update_elem(skel->maps.traced, &tgid, sizeof(tgid), &one, sizeof(one), BPF_ANY)) {
		fprintf(stderr, "empty_run: map update: %s\n", strerror(errno));
		goto fail;
	}
	if (verbose)
		fprintf(stderr, "empty_run: attached; tracing pid %d\n", child);

	/* The child is ours to wait for; ^C goes to it (same process group). */
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	if (write(pfd[1], &go, 1) != 1) {
		perror("empty_run: release child");
		goto fail;
	}
	close(pfd[1]);
	while (waitpid(child, &status, 0) < 0) {
		if (errno != EINTR) {
			perror("waitpid");
			bench_empty_bpf__destroy(skel);
			return 1;
		}
	}
	bench_empty_bpf__destroy(skel);
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;

fail:
	close(pfd[1]);		/* child reads EOF and exits 127 */
	waitpid(child, &status, 0);
	bench_empty_bpf__destroy(skel);
	return 1;
}
