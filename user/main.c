// SPDX-License-Identifier: MIT
/* main.c — gpuio's command table: `gpuio COMMAND [ARGS]`. */
#include <stdio.h>
#include <string.h>
#include "cmd/commands.h"
#include "lib/units.h"
#include "trace/link_reaper.h"


static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} commands[] = {
	{ "trace",   cmd_trace,   "trace a process tree's file, block (and GPU) I/O" },
	{ "convert", cmd_convert, "re-export a capture (.gpuio) to .json or .pftrace (+ .gz)" },
	{ "info",    cmd_info,    "print a capture's header, record counts and drops" },
	{ "report",  cmd_report,  "the answers first: top files, latencies, GPU idle explained" },
	{ "merge",   cmd_merge,   "several hosts' captures on one timeline (.pftrace/.json)" },
	{ "inject",  cmd_inject,  "load a library into a running process and call it (ptrace)" },
	{ "monitor", cmd_monitor, "node daemon: Prometheus /metrics and a flight recorder" },
	{ "doctor",  cmd_doctor,  "what this node gives gpuio: kernel, attach modes, GPU, CUPTI" },
	{ "mcp",     cmd_mcp,     "a Model Context Protocol server on stdio: captures for agents" },
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gpuio COMMAND [OPTIONS]\n\n"
		"gpuio shows what a process tree did with its files, disks and GPUs on one\n"
		"timeline (Perfetto protobuf / Chrome trace JSON).\n\ncommands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(f, "  %-8s  %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\n`gpuio COMMAND --help` describes a command's options.\n"
		   "examples:\n"
		   "  sudo gpuio trace -o run.json -- fio job.fio\n"
		   "  sudo gpuio trace -p 4242 -d 30s -o run.json\n"
		   "  gpuio convert run.gpuio -o run.json.gz\n"
		   "  gpuio merge node1.gpuio node2.gpuio -o job.pftrace\n");
}

int main(int argc, char **argv)
{
	/* gpuio's own child that closes a finished trace's links (trace/link_reaper.c) */
	if (argc <= 2 && argv[0] && !strcmp(argv[0], LINK_REAPER_ARGV0))
		return link_reaper__main(argc == 2 ? argv[1] : NULL);
	if (argc < 2) {
		usage(stderr);
		return GPUIO_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return GPUIO_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("gpuio %s\n", GPUIO_VERSION);
		return GPUIO_EXIT_OK;
	}
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "gpuio: error: unknown command '%s' (try `gpuio --help`)\n", argv[1]);
	return GPUIO_EXIT_USAGE;
}
