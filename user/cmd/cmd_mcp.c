// SPDX-License-Identifier: MIT
/*
 * cmd_mcp.c — `gpuio mcp --allow DIR...`: a Model Context Protocol server on
 * stdin/stdout, so that an agent (Claude, an IDE, any MCP client) can ask
 * about captures: the report's verdict, loops, files, GPU gaps, the
 * straggler across hosts, and PerfettoSQL (user/mcp/, docs/mcp.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd/commands.h"
#include "lib/kmap.h"
#include "lib/log.h"
#include "lib/opts.h"
#include "lib/units.h"
#include "mcp/mcp.h"

static char **mcp_allow;
static size_t mcp_nallow, mcp_callow;
static const char *mcp_tp;
static uint64_t mcp_timeout_ns;
static int mcp_verbose;

/* --allow: repeatable, each one more directory */
static int on_allow(const struct opt *opt, const char *arg, void *ctx)
{
	if (!*arg) {
		pr_err("mcp: --allow wants a directory, not an empty string");
		return -1;
	}
	if (array_grow((void **)&mcp_allow, &mcp_callow, mcp_nallow + 1, sizeof(*mcp_allow))) {
		pr_err("out of memory");
		return -1;
	}
	mcp_allow[mcp_nallow++] = (char *)arg;
	return 0;
}

static const struct opt mcp_opts[] = {
	OPT_GROUP("options:"),
	OPT_CALL('a', "allow", "DIR",
		 "a directory whose captures the tools may read, with its\n"
		 "subdirectories (repeatable; at least one). Paths are\n"
		 "resolved (symlinks, ..) and refused outside them", on_allow),
	OPT_STRING(0, "trace-processor", &mcp_tp, "PATH",
		   "Perfetto's trace_processor_shell, for sql_query\n"
		   "(default: the one on PATH, else ../shared/tools/ beside\n"
		   "the source tree; without one, sql_query says so)"),
	OPT_DURATION(0, "timeout", &mcp_timeout_ns, "DUR", 1,
		     "the longest one report, export or query may run (default 5m)"),
	OPT_INCR('v', "verbose", &mcp_verbose, "log each call on stderr"),
	OPT_END(),
};

static const struct opt_cmd mcp_page = {
	.name = "mcp",
	.usage = "usage: gpuio mcp --allow DIR [--allow DIR]... [--trace-processor PATH]",
	.about =
"Serve the Model Context Protocol (MCP) on stdin and stdout: newline-delimited\n"
"JSON-RPC 2.0, the stdio transport, for an agent to start as a subprocess.\n"
"Logs go to stderr. Its tools answer from `gpuio report --json` on the captures\n"
"in the allowed directories, run by this binary in a child process:\n"
"  list_captures     the captures (*.gpuio) and monitor dumps, size and mtime\n"
"  report_headline   one capture's headlines, loop verdict, recommendations\n"
"  report_loops      the training loops: time by state and cause, call sites\n"
"  report_files      the files table: time, bytes, latency, page cache\n"
"  report_gpu_gaps   GPU busy and idle time, the largest idle gaps and why\n"
"  hosts_straggler   several hosts' captures: the straggler and its cause\n"
"  sql_query         one PerfettoSQL SELECT with gpuio's views (docs/sql.md)\n"
"The server runs until stdin ends. It needs no privileges: only read access\n"
"to the captures.\n",
	.opts = mcp_opts,
	.after =
"A client's configuration (Claude Desktop, Claude Code, an IDE) names the command:\n"
"  {\"mcpServers\": {\"gpuio\": {\"command\": \"gpuio\",\n"
"                            \"args\": [\"mcp\", \"--allow\", \"/data/captures\"]}}}\n\n"
"examples:\n"
"  gpuio mcp --allow /data/captures\n"
"  gpuio mcp --allow runs/ --allow /var/lib/gpuio/dumps \\\n"
"            --trace-processor ~/bin/trace_processor_shell\n",
};

int cmd_mcp(int argc, char **argv)
{
	struct mcp_opts o;
	int first, ret;

	mcp_allow = NULL;
	mcp_nallow = mcp_callow = 0;
	mcp_tp = NULL;
	mcp_timeout_ns = 300 * NSEC_PER_SEC;
	mcp_verbose = 0;
	first = opt_parse(&mcp_page, argc, argv, NULL);
	if (first == OPT_HELP || first == OPT_BAD) {
		free(mcp_allow);
		return first == OPT_HELP ? GPUIO_EXIT_OK : GPUIO_EXIT_USAGE;
	}
	if (first < argc) {
		pr_err("mcp: unexpected argument '%s' (directories go after --allow)", argv[first]);
		free(mcp_allow);
		return GPUIO_EXIT_USAGE;
	}
	if (!mcp_nallow) {
		pr_err("mcp: which captures may the tools read? Give at least one --allow DIR "
		       "(see `gpuio mcp --help`)");
		return GPUIO_EXIT_USAGE;
	}
	if (mcp_verbose)
		gpuio_log_verbosity = GPUIO_LOG_DEBUG;
	o = (struct mcp_opts){ .allow = mcp_allow, .nallow = mcp_nallow,
			       .trace_processor = mcp_tp, .timeout_ns = mcp_timeout_ns };
	ret = mcp_serve(&o);
	free(mcp_allow);
	return ret;
}
