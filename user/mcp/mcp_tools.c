// SPDX-License-Identifier: MIT
/*
 * mcp_tools.c — the tools `gpuio mcp` offers (name, description, input
 * schema), their argument helpers, and list_captures. The report tools are
 * in mcp_report.c, sql_query in mcp_sql.c.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include "lib/kmap.h"
#include "lib/parse.h"
#include "lib/units.h"
#include "mcp/mcp_priv.h"

#define LIST_MAX        500     /* captures listed */
#define LIST_DEPTH      3       /* directory levels below an allowed one */

int mcp_call__fail(struct mcp_call *c, const char *fmt, ...)
{
	va_list ap;

	if (c->failed)
		return -1;      /* the first reason is the one to give */
	c->failed = true;
	va_start(ap, fmt);
	vsnprintf(c->msg, sizeof(c->msg), fmt, ap);
	va_end(ap);
	return -1;
}

static const struct json_node *arg(struct mcp_call *c, const char *name)
{
	return c->args ? json_get(c->d, c->args, name) : NULL;
}

int mcp_arg__str(struct mcp_call *c, const char *name, bool required, const char **s,
		 size_t *len)
{
	const struct json_node *n = arg(c, name);

	if (!n || n->type == JSON_NULL) {
		if (required)
			return mcp_call__fail(c, "missing argument \"%s\" (a string)", name);
		return 0;
	}
	if (n->type != JSON_STRING)
		return mcp_call__fail(c, "argument \"%s\" must be a string", name);
	*s = n->s;
	*len = n->n;
	return 1;
}

int mcp_arg__uint(struct mcp_call *c, const char *name, unsigned def, unsigned lo, unsigned hi,
		  unsigned *v)
{
	const struct json_node *n = arg(c, name);
	int64_t x;

	*v = def;
	if (!n || n->type == JSON_NULL)
		return 0;
	if (n->type != JSON_NUMBER || json_node__int(n, &x) || x < lo || x > hi)
		return mcp_call__fail(c, "argument \"%s\" must be an integer from %u to %u", name,
				      lo, hi);
	*v = (unsigned)x;
	return 0;
}

char *mcp_arg__path(struct mcp_call *c, const char *name)
{
	const char *s = NULL;
	size_t len = 0;
	char err[1536], *r;

	if (mcp_arg__str(c, name, true, &s, &len) != 1)
		return NULL;
	r = mcp_paths__resolve(&c->s->paths, s, len, err, sizeof(err));
	if (!r)
		mcp_call__fail(c, "%s", err);
	return r;
}

/* ---- list_captures ---- */

struct found {
	char *path;
	off_t size;
	struct timespec mtime;
	bool dump;
};

struct finds {
	struct found *a;
	size_t n, cap;
	bool more;
};

/* a capture (NAME.gpuio) or a monitor's dump (gpuio-dump-*); not a dump in the making */
static int kind_of(const char *name)
{
	if (!strncmp(name, ".gpuio-dump-", 12))
		return 0;
	if (!strncmp(name, "gpuio-dump-", 11))
		return 2;
	return strlen(name) > 6 && parse_str_ends_with(name, ".gpuio") ? 1 : 0;
}

static int add_found(struct finds *f, const char *path, const struct stat *sb, bool dump)
{
	if (f->n >= LIST_MAX) {
		f->more = true;
		return 0;
	}
	if (array_grow((void **)&f->a, &f->cap, f->n + 1, sizeof(*f->a)))
		return -ENOMEM;
	f->a[f->n] = (struct found){ .path = strdup(path), .size = sb->st_size,
				     .mtime = sb->st_mtim, .dump = dump };
	if (!f->a[f->n].path)
		return -ENOMEM;
	f->n++;
	return 0;
}

/* dir's captures, and its subdirectories' down to depth (symlinks: files only, inside) */
static int walk(const struct mcp_paths *p, const char *dir, int depth, struct finds *f)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int err = 0;

	if (!d)
		return 0;       /* unreadable: nothing listed from it */
	while (!err && !f->more && (de = readdir(d))) {
		char path[PATH_MAX];
		struct stat sb;
		int kind;

		if (de->d_name[0] == '.' && (!de->d_name[1] || !strcmp(de->d_name, "..")))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= (int)sizeof(path) ||
		    lstat(path, &sb))
			continue;
		if (S_ISDIR(sb.st_mode)) {
			if (depth > 0)
				err = walk(p, path, depth - 1, f);
			continue;
		}
		kind = kind_of(de->d_name);
		if (!kind)
			continue;
		if (S_ISLNK(sb.st_mode)) {
			char *r = realpath(path, NULL);
			bool ok = r && mcp_paths__inside(p, r) && !stat(r, &sb);

			free(r);
			if (!ok)
				continue;
		}
		if (S_ISREG(sb.st_mode))
			err = add_found(f, path, &sb, kind == 2 && !parse_str_ends_with(de->d_name,
										      ".gpuio"));
	}
	closedir(d);
	return err;
}

static int by_path(const void *a, const void *b)
{
	return strcmp(((const struct found *)a)->path, ((const struct found *)b)->path);
}

static void emit_found(struct json_writer *w, const struct found *x)
{
	char utc[32];
	struct tm tm;

	gmtime_r(&x->mtime.tv_sec, &tm);
	strftime(utc, sizeof(utc), "%Y-%m-%dT%H:%M:%SZ", &tm);
	json_writer__puts(w, "{\"path\":");
	json_writer__cstr(w, x->path);
	json_writer__puts(w, ",\"kind\":");
	json_writer__cstr(w, x->dump ? "dump" : "capture");
	json_writer__printf(w, ",\"size_bytes\":%lld,\"mtime\":%lld,\"mtime_utc\":\"%s\"",
			    (long long)x->size, (long long)x->mtime.tv_sec, utc);
	json_writer__printf(w, ",\"report\":%s,\"sql\":true}", x->dump ? "false" : "true");
}

static void emit_list(struct mcp_call *c, const char *dir, const struct finds *f)
{
	const struct mcp_paths *p = &c->s->paths;

	json_writer__puts(c->w, "{\"directories\":[");
	for (size_t i = 0; i < (dir ? 1 : p->n); i++) {
		if (i)
			json_writer__putc(c->w, ',');
		json_writer__cstr(c->w, dir ? dir : p->dirs[i]);
	}
	json_writer__printf(c->w, "],\"count\":%zu,\"captures\":[", f->n);
	for (size_t i = 0; i < f->n; i++) {
		if (i)
			json_writer__putc(c->w, ',');
		emit_found(c->w, &f->a[i]);
	}
	json_writer__puts(c->w, "]");
	if (f->more)
		json_writer__printf(c->w, ",\"truncated\":[\"only the first %d found are listed: "
				    "ask for a subdirectory\"]", LIST_MAX);
	json_writer__puts(c->w, "}");
}

static int tool_list(struct mcp_call *c)
{
	const struct mcp_paths *p = &c->s->paths;
	struct finds f = { 0 };
	char *dir = NULL;
	const char *s = NULL;
	size_t len = 0;
	struct stat sb;
	int err = 0, given = mcp_arg__str(c, "dir", false, &s, &len);

	if (given < 0)
		return -1;
	if (given) {
		dir = mcp_arg__path(c, "dir");
		if (!dir)
			return -1;
		if (stat(dir, &sb) || !S_ISDIR(sb.st_mode)) {
			free(dir);
			return mcp_call__fail(c, "%.*s is not a directory", (int)len, s);
		}
		err = walk(p, dir, LIST_DEPTH, &f);
	}
	for (size_t i = 0; !dir && !err && i < p->n; i++)
		err = walk(p, p->dirs[i], LIST_DEPTH, &f);
	if (!err) {
		if (f.n)
			qsort(f.a, f.n, sizeof(*f.a), by_path);
		emit_list(c, dir, &f);
	}
	for (size_t i = 0; i < f.n; i++)
		free(f.a[i].path);
	free(f.a);
	free(dir);
	return err ? mcp_call__fail(c, "listing: %s", strerror(-err)) : 0;
}

/* ---- the table ---- */

#define PATH_ARG "\"path\":{\"type\":\"string\",\"description\":\"a capture (.gpuio) inside " \
		 "the allowed directories (list_captures names them)\"}"

const struct mcp_tool mcp_tools[] = {
	{ "list_captures", "List captures",
	  "The gpuio captures (*.gpuio, written by `gpuio trace`) and flight-recorder dumps "
	  "(gpuio-dump-*, written by `gpuio monitor`) in the allowed directories and their "
	  "subdirectories, with size and modification time. Start here.",
	  "{\"type\":\"object\",\"properties\":{\"dir\":{\"type\":\"string\",\"description\":"
	  "\"one directory inside the allowed ones (default: all of them)\"}}}",
	  tool_list },
	{ "report_headline", "Report headline",
	  "The verdict of `gpuio report` for one capture: its headlines, why the training loop "
	  "waited (one line), the stragglers among several loops, the recommendations, and "
	  "whether the capture is complete.",
	  "{\"type\":\"object\",\"properties\":{" PATH_ARG "},\"required\":[\"path\"]}",
	  mcp_tool__headline },
	{ "report_loops", "Training loops",
	  "The training loops `gpuio report` found in one capture: each loop's time by thread "
	  "state and cause (on CPU, runnable, waiting for data, file I/O, CUDA sync...), the "
	  "data-iterator call site and stack where it waited, what else it slept in, who woke "
	  "it with data, its producers' read sites and CPU by function, its steps.",
	  "{\"type\":\"object\",\"properties\":{" PATH_ARG ",\"steps\":{\"type\":\"integer\","
	  "\"minimum\":0,\"maximum\":500,\"description\":\"steps shown per loop (default 20)\"}},"
	  "\"required\":[\"path\"]}",
	  mcp_tool__loops },
	{ "report_files", "Files",
	  "The files table of `gpuio report` for one capture: the top files by time, bytes and "
	  "operations, with role (data, code, checkpoint, other), latency, access pattern, "
	  "page-cache hit ratio, block requests and call sites; and the totals per role.",
	  "{\"type\":\"object\",\"properties\":{" PATH_ARG ",\"limit\":{\"type\":\"integer\","
	  "\"minimum\":1,\"maximum\":200,\"description\":\"files per ranking (default 10, as "
	  "`gpuio report --files N`)\"}},\"required\":[\"path\"]}",
	  mcp_tool__files },
	{ "report_gpu_gaps", "GPU idle gaps",
	  "The GPU idle time of one capture: busy and idle time per process and device, the idle "
	  "time split by what the host threads did (file reads, writes/fsync, CUDA syncs, other), "
	  "the largest gaps with the files read during them. Empty, with a note, when the capture "
	  "has no GPU records.",
	  "{\"type\":\"object\",\"properties\":{" PATH_ARG ",\"limit\":{\"type\":\"integer\","
	  "\"minimum\":1,\"maximum\":200,\"description\":\"gaps and files shown (default 20)\"}},"
	  "\"required\":[\"path\"]}",
	  mcp_tool__gpu_gaps },
	{ "hosts_straggler", "Straggler across hosts",
	  "`gpuio report --hosts` over the captures of one job (one per host or rank): which "
	  "loop waited the largest share of its run (the straggler), its cause, and what the "
	  "other hosts' loops did during its waits. Give paths, or dir for every *.gpuio in it.",
	  "{\"type\":\"object\",\"properties\":{\"paths\":{\"type\":\"array\",\"items\":"
	  "{\"type\":\"string\"},\"minItems\":1,\"maxItems\":64,\"description\":\"the captures "
	  "(.gpuio)\"},\"dir\":{\"type\":\"string\",\"description\":\"a directory: the *.gpuio "
	  "captures directly in it\"}}}",
	  mcp_tool__hosts },
	{ "sql_query", "PerfettoSQL query",
	  "Run one PerfettoSQL SELECT on a capture's Perfetto export (made on the fly; a dump's "
	  ".pftrace or .json is read as it is) with trace_processor_shell, gpuio's views loaded "
	  "(gpuio_file_calls, gpuio_block_requests, gpuio_thread_states, gpuio_gpu_gaps, "
	  "gpuio_loop_steps, ...; docs/sql.md). Returns the column names and the rows.",
	  "{\"type\":\"object\",\"properties\":{" PATH_ARG ",\"query\":{\"type\":\"string\","
	  "\"description\":\"one SELECT (or WITH ... SELECT) statement\"},\"max_rows\":{\"type\":"
	  "\"integer\",\"minimum\":1,\"maximum\":1000,\"description\":\"rows returned (default "
	  "100)\"}},\"required\":[\"path\",\"query\"]}",
	  mcp_tool__sql },
};
const size_t mcp_ntools = ARRAY_SIZE(mcp_tools);
