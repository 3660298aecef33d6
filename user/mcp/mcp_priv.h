/* SPDX-License-Identifier: MIT */
/*
 * mcp_priv.h — what the MCP server's files share: the server's state, a
 * tool call's answer, the allowed-directory check, children with a time
 * and output limit, and the bounded re-serialisation of report JSON.
 */
#ifndef GPUIO_MCP_PRIV_H
#define GPUIO_MCP_PRIV_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/json_read.h"
#include "lib/json_writer.h"

#define MCP_MAX_LINE    (1u << 20)      /* a request line; longer ones are refused */
#define MCP_MAX_ANSWER  (512u << 10)    /* a tool's answer text */
#define MCP_MAX_REPORT  (256u << 20)    /* a child report's JSON */
#define MCP_MAX_STR     (16u << 10)     /* a string copied from a report */
#define MCP_MAX_ITEMS   200u            /* an array copied from a report, unless said */
#define MCP_MAX_NOTES   16

/* a signal asked the server to end (SIGINT, SIGTERM, SIGHUP): children are stopped too */
extern volatile sig_atomic_t mcp_stop;

/* ---- the allowed directories (mcp_paths.c) ---- */

struct mcp_paths {
	char **dirs;                    /* realpath'd, in --allow order */
	size_t n;
};

int mcp_paths__init(struct mcp_paths *p, char *const *dirs, size_t n, char *err, size_t errlen);
void mcp_paths__free(struct mcp_paths *p);
/* real is inside (or is) one of the directories, component-wise */
bool mcp_paths__inside(const struct mcp_paths *p, const char *real);
/*
 * A tool's path argument (s[0..len), not NUL-terminated): its real path,
 * malloc'd, when it exists inside an allowed directory; a relative one is
 * taken in each directory in turn. NULL with the reason in err.
 */
char *mcp_paths__resolve(const struct mcp_paths *p, const char *s, size_t len, char *err,
			 size_t errlen);

/* ---- children (mcp_child.c) ---- */

struct mcp_child {
	char *out;                      /* stdout, NUL-terminated (malloc'd) */
	size_t len;
	char err[2048];                 /* the end of stderr, NUL-terminated */
	int status;                     /* waitpid's */
	bool timed_out, too_big;
};

/*
 * Run prog argv (stdin /dev/null) for at most timeout_ns, keeping at most
 * max_out bytes of stdout (more: killed, too_big). 0 when it ran and exited
 * 0; else -1 with what happened in why. Free with mcp_child__free.
 */
int mcp_child__run(const char *prog, char *const argv[], uint64_t timeout_ns, size_t max_out,
		   struct mcp_child *c, char *why, size_t whylen);
void mcp_child__free(struct mcp_child *c);
/* err, without trace_processor's progress and log lines: the lines that say what failed */
void mcp_child__clean_err(const char *err, char *out, size_t outlen);

/* ---- the server ---- */

struct mcp_server {
	struct mcp_paths paths;
	uint64_t timeout_ns;
	char *tp;                       /* trace_processor_shell, NULL: none */
	char tp_why[512];               /* why there is none */
	char *sql_views;                /* gpuio.sql, NULL: not found */
	char *tmpdir;                   /* sql_query's exports; removed at exit */
	struct { char *key, *text; size_t len; } report;        /* the last report JSON */
	struct { char *key, *file; } export;                    /* the last .pftrace export */
	unsigned exports;
};

/* One tools/call: its arguments and its answer (a JSON object, or an error text). */
struct mcp_call {
	struct mcp_server *s;
	const struct json_doc *d;
	const struct json_node *args;   /* an object, or NULL: none given */
	struct json_writer *w;          /* the answer's JSON (on a memfd) */
	bool failed;
	char msg[4096];                 /* failed: what to tell the agent */
};

/* The answer is an error: isError, with this text. Returns -1. */
int mcp_call__fail(struct mcp_call *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A string argument (required: its absence fails the call); 0 absent, 1 there, -1 failed. */
int mcp_arg__str(struct mcp_call *c, const char *name, bool required, const char **s,
		 size_t *len);
/* An integer argument in [lo, hi], def when absent; 0, or -1 failed. */
int mcp_arg__uint(struct mcp_call *c, const char *name, unsigned def, unsigned lo, unsigned hi,
		  unsigned *v);
/* A path argument resolved inside the allowed directories (malloc'd), NULL failed. */
char *mcp_arg__path(struct mcp_call *c, const char *name);

struct mcp_tool {
	const char *name, *title, *description;
	const char *schema;             /* inputSchema: JSON text */
	int (*fn)(struct mcp_call *c);  /* 0: the answer is in c->w; -1: failed */
};

extern const struct mcp_tool mcp_tools[];
extern const size_t mcp_ntools;

/* the report tools (mcp_report.c) */
int mcp_tool__headline(struct mcp_call *c);
int mcp_tool__loops(struct mcp_call *c);
int mcp_tool__files(struct mcp_call *c);
int mcp_tool__gpu_gaps(struct mcp_call *c);
int mcp_tool__hosts(struct mcp_call *c);
/* sql_query (mcp_sql.c); where trace_processor_shell and gpuio.sql are */
int mcp_tool__sql(struct mcp_call *c);
void mcp_sql__locate(struct mcp_server *s, const char *given);

/* ---- report JSON, re-serialised with bounds (mcp_emit.c) ---- */

/*
 * One member of an answer taken from a report object: the value at path
 * (dotted: "wait.headline"), under the name as (NULL: the path's last
 * part); an array keeps at most max items (0: MCP_MAX_ITEMS), each object
 * item only the members each names (NULL: all); count: the array's length
 * instead of it. A path the report lacks is left out.
 */
struct mcp_pick {
	const char *path, *as;
	unsigned max;
	const struct mcp_pick *each;
	bool count;
};

#define PICK(p)             { .path = (p) }
#define PICK_AS(p, a)       { .path = (p), .as = (a) }
#define PICK_MAX(p, m)      { .path = (p), .max = (m) }
#define PICK_EACH(p, m, e)  { .path = (p), .max = (m), .each = (e) }
#define PICK_COUNT(p, a)    { .path = (p), .as = (a), .count = true }
#define PICK_END()          { .path = NULL }

struct mcp_emit {
	struct json_writer *w;
	const struct json_doc *d;
	unsigned nnotes;
	char notes[MCP_MAX_NOTES][160]; /* what was cut, said in the answer's "truncated" */
};

const struct json_node *mcp_emit__at(const struct json_doc *d, const struct json_node *o,
				     const char *path);
/* a member's key: ,"key": (first: no comma; it is cleared) */
void mcp_emit__key(struct mcp_emit *e, bool *first, const char *key);
/* any value, compact, arrays cut at max items (0: MCP_MAX_ITEMS), strings at MCP_MAX_STR */
void mcp_emit__node(struct mcp_emit *e, const struct json_node *n, const char *name, unsigned max);
/* the picks of o as members (after *first's comma rule) */
void mcp_emit__picks(struct mcp_emit *e, const struct json_node *o, const struct mcp_pick *picks,
		     bool *first);
/* "truncated": [what was cut], when something was */
void mcp_emit__notes(struct mcp_emit *e, bool *first);
void mcp_emit__note(struct mcp_emit *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif /* GPUIO_MCP_PRIV_H */
