/*
 * bench_hooks — run a command under one pair of empty BPF programs
 * (tests/vm/bench_hooks.bpf.c), the floor `make vmbench` compares gpuio with.
 *
 *   bench_hooks [-v] MODE -- CMD [ARGS...]     MODE: fentry kprobe tp_btf raw_tp tp_syscall
 *
 * Forks; the child waits on a pipe while the parent loads and attaches the
 * MODE pair and puts the child's pid in the TGID map; then the child execs
 * CMD.  Prints "bench_hooks: MODE hits=N" (calls the filter let through) on
 * stderr and exits with CMD's status (1 when the programs cannot load).
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bench_hooks.skel.h"

static int verbose;

static int print_libbpf(enum libbpf_print_level lvl, const char *fmt, va_list ap)
{
	if (lvl == LIBBPF_DEBUG && !verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

int main(int argc, char **argv)
{
	struct bench_hooks_bpf *skel = NULL;
	struct bpf_program *p1, *p2;
	const char *mode;
	int i = 1, pfd[2], status = 0;
	pid_t child;
	char go = 1;

	if (i < argc && !strcmp(argv[i], "-v"))
		verbose = 1, i++;
	if (argc - i < 3 || strcmp(argv[i + 1], "--")) {
		fprintf(stderr, "usage: bench_hooks [-v] fentry|kprobe|tp_btf|raw_tp|tp_syscall -- CMD [ARGS...]\n");
		return 2;
	}
	mode = argv[i];
	i += 2;
	libbpf_set_print(print_libbpf);
	skel = bench_hooks_bpf__open();
	if (!skel) {
		fprintf(stderr, "bench_hooks: open: %s\n", strerror(errno));
		return 1;
	}
	if (!strcmp(mode, "fentry"))
		p1 = skel->progs.e_fentry, p2 = skel->progs.e_fexit;
	else if (!strcmp(mode, "kprobe"))
		p1 = skel->progs.e_kprobe, p2 = skel->progs.e_kretprobe;
	else if (!strcmp(mode, "tp_btf"))
		p1 = skel->progs.e_tpbtf_enter, p2 = skel->progs.e_tpbtf_exit;
	else if (!strcmp(mode, "raw_tp"))
		p1 = skel->progs.e_rawtp_enter, p2 = skel->progs.e_rawtp_exit;
	else if (!strcmp(mode, "tp_syscall"))
		p1 = skel->progs.e_tpsc_enter, p2 = skel->progs.e_tpsc_exit;
	else {
		fprintf(stderr, "bench_hooks: unknown mode %s\n", mode);
		return 2;
	}
	bpf_program__set_autoload(p1, true);
	bpf_program__set_autoload(p2, true);

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
		if (read(pfd[0], &go, 1) != 1)
			_exit(127);
		close(pfd[0]);
		execvp(argv[i], &argv[i]);
		fprintf(stderr, "bench_hooks: %s: %s\n", argv[i], strerror(errno));
		_exit(127);
	}
	close(pfd[0]);
	if (bench_hooks_bpf__load(skel) || !bpf_program__attach(p1) || !bpf_program__attach(p2)) {
		fprintf(stderr, "bench_hooks: cannot load/attach %s: %s\n", mode, strerror(errno));
		goto fail;
	}
	{
		__u32 tgid = (__u32)child;
		__u8 one = 1;

		if (bpf_map__update_elem(skel->maps.traced, &tgid, sizeof(tgid), &one, sizeof(one), BPF_ANY)) {
			fprintf(stderr, "bench_hooks: map update: %s\n", strerror(errno));
			goto fail;
		}
	}
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	if (write(pfd[1], &go, 1) != 1) {
		perror("bench_hooks: release child");
		goto fail;
	}
	close(pfd[1]);
	while (waitpid(child, &status, 0) < 0)
		if (errno != EINTR) {
			perror("waitpid");
			return 1;
		}
	fprintf(stderr, "bench_hooks: %s hits=%llu\n", mode, (unsigned long long)skel->bss->hits);
	bench_hooks_bpf__destroy(skel);
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
fail:
	close(pfd[1]);
	waitpid(child, &status, 0);
	bench_hooks_bpf__destroy(skel);
	return 1;
}
