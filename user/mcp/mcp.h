/* SPDX-License-Identifier: MIT */
/*
 * mcp.h — `gpuio mcp`: a Model Context Protocol server on stdin/stdout
 * (newline-delimited JSON-RPC 2.0, the MCP stdio transport), whose tools
 * answer an agent's questions about captures from the real `gpuio report`
 * and, through Perfetto's trace_processor_shell, in SQL (docs/mcp.md).
 */
#ifndef GPUIO_MCP_H
#define GPUIO_MCP_H

#include <stddef.h>
#include <stdint.h>

struct mcp_opts {
	char *const *allow;             /* the directories tools may read (--allow) */
	size_t nallow;
	const char *trace_processor;    /* --trace-processor; NULL: looked for */
	uint64_t timeout_ns;            /* the limit of one child (report, convert, SQL) */
};

/*
 * Serve until the end of stdin: GPUIO_EXIT_OK; GPUIO_EXIT_USAGE when an
 * --allow directory is unusable, GPUIO_EXIT_ERROR when stdout is gone
 * (both said on stderr).
 */
int mcp_serve(const struct mcp_opts *o);

#endif /* GPUIO_MCP_H */
