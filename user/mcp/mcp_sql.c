// SPDX-License-Identifier: MIT
/*
 * mcp_sql.c — sql_query: one PerfettoSQL SELECT over a capture's Perfetto
 * export, through trace_processor_shell with gpuio's views (gpuio.sql,
 * docs/sql.md) loaded first.
 *
 * The shell prints results as CSV whose strings are not escaped (a '"' or
 * a newline in a value makes the text ambiguous), so the rows are not read
 * from its CSV. The query becomes a view; a first run reads the view's
 * column names, hex-encoded; a second selects json_array(columns...) per
 * row, one JSON array a line, which json_read parses exactly. A blob (JSON
 * has none) is said by its size. Two loads of the trace: the price of
 * answers that are exact whatever the data holds.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "lib/parse.h"
#include "mcp/mcp_priv.h"

#define TP_NAME   "trace_processor_shell"
#define MAX_QUERY (64u << 10)
#define MAX_COLS  200
#define MAX_TP_OUT (64u << 20)
#define VIEW      "_gpuio_mcp_q"
#define COLS_HEAD "_gpuio_mcp_cols"
#define ROW_HEAD  "_gpuio_mcp_row"

static bool executable(const char *p)
{
	struct stat sb;

	return !stat(p, &sb) && S_ISREG(sb.st_mode) && !access(p, X_OK);
}

/* The source tree this binary was built in (TREE/build/gpuio): TREE, or "" */
static void source_tree(char *tree, size_t len)
{
	char exe[PATH_MAX], probe[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	tree[0] = 0;
	if (n <= 0)
		return;
	exe[n] = 0;
	for (int up = 0; up < 2; up++) {
		slash = strrchr(exe, '/');
		if (!slash)
			return;
		*slash = 0;
	}
	snprintf(probe, sizeof(probe), "%s/user/export/sql/gpuio.sql", exe);
	if (!access(probe, R_OK))
		snprintf(tree, len, "%s", exe[0] ? exe : "/");
}

/* gpuio.sql: installed beside the binary, in the source tree, or in the usual prefixes */
static char *find_views(const char *tree)
{
	char exe[PATH_MAX], p[PATH_MAX + 64];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	if (n > 0) {
		exe[n] = 0;
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = 0;
			snprintf(p, sizeof(p), "%s/../share/gpuio/gpuio.sql", exe);
			if (!access(p, R_OK))
				return realpath(p, NULL);
		}
	}
	if (tree[0]) {
		snprintf(p, sizeof(p), "%s/user/export/sql/gpuio.sql", tree);
		if (!access(p, R_OK))
			return strdup(p);
	}
	for (const char *const *c = (const char *const[]){ "/usr/share/gpuio/gpuio.sql",
			"/usr/local/share/gpuio/gpuio.sql", NULL }; *c; c++)
		if (!access(*c, R_OK))
			return strdup(*c);
	return NULL;
}

void mcp_sql__locate(struct mcp_server *s, const char *given)
{
	char tree[PATH_MAX], p[PATH_MAX + 64];
	const char *path = getenv("PATH");

	source_tree(tree, sizeof(tree));
	s->sql_views = find_views(tree);
	if (given) {
		s->tp = strdup(given);
		return;
	}
	while (path && *path) {
		size_t n = strcspn(path, ":");

		snprintf(p, sizeof(p), "%.*s/%s", (int)(n ? n : 1), n ? path : ".", TP_NAME);
		if (executable(p)) {
			s->tp = strdup(p);
			return;
		}
		path += n + (path[n] == ':');
	}
	if (tree[0]) {
		snprintf(p, sizeof(p), "%s/../shared/tools/%s", tree, TP_NAME);
		if (executable(p)) {
			s->tp = realpath(p, NULL);
			return;
		}
	}
	snprintf(s->tp_why, sizeof(s->tp_why), "%s is not on PATH%s%s%s; start gpuio mcp with "
		 "--trace-processor PATH (Perfetto's trace processor, "
		 "https://perfetto.dev/docs/analysis/trace-processor)", TP_NAME,
		 tree[0] ? " nor at " : "", tree[0] ? tree : "",
		 tree[0] ? "/../shared/tools" : "");
}

/*
 * The query's one statement, without a final ';': its length, or -1 with
 * the reason (several statements, an unterminated string or comment).
 */
static bool blank(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' || ch == '\v';
}

static long one_statement(const char *q, size_t n, const char **why)
{
	long end = -1;

	for (size_t i = 0; i < n; i++) {
		char ch = q[i], close = ch == '[' ? ']' : ch;

		if (ch == '-' && i + 1 < n && q[i + 1] == '-') {
			const char *e = memchr(q + i, '\n', n - i);

			i = e ? (size_t)(e - q) : n;
		} else if (ch == '/' && i + 1 < n && q[i + 1] == '*') {
			const char *e = memmem(q + i + 2, n - i - 2, "*/", 2);

			if (!e)
				return *why = "an unterminated /* comment", -1;
			i = (size_t)(e - q) + 1;
		} else if (end >= 0) {
			if (ch != ';' && !blank(ch))
				return *why = "more than one statement (one SELECT, please)", -1;
		} else if (ch == '\'' || ch == '"' || ch == '`' || ch == '[') {
			const char *e = memchr(q + i + 1, close, n - i - 1);

			if (!e)
				return *why = "an unterminated quoted string or name", -1;
			i = (size_t)(e - q);    /* a doubled quote reads as two strings: same end */
		} else if (ch == ';') {
			end = (long)i;
		}
	}
	if (end < 0)
		end = (long)n;
	for (long i = 0; i < end; i++)
		if (!blank(q[i]))
			return end;
	return *why = "an empty query", -1;
}

/* Perfetto reads these as they are; anything else is a capture to export first */
static bool is_trace(const char *p)
{
	static const char *const ext[] = { ".pftrace", ".pftrace.gz", ".json", ".json.gz" };

	for (size_t i = 0; i < sizeof(ext) / sizeof(ext[0]); i++)
		if (parse_str_ends_with(p, ext[i]))
			return true;
	return false;
}

/* The trace to load for path: itself, or its .pftrace export (the last one kept). */
static const char *trace_for(struct mcp_call *c, const char *path)
{
	struct mcp_server *s = c->s;
	char key[128], file[PATH_MAX], why[512], err[1536];
	char *argv[] = { "gpuio", "convert", "-q", "-o", file, "--", (char *)path, NULL };
	struct mcp_child ch;
	struct stat sb;

	if (is_trace(path))
		return path;
	if (stat(path, &sb)) {
		mcp_call__fail(c, "%s: %s", path, strerror(errno));
		return NULL;
	}
	snprintf(key, sizeof(key), "%llu:%llu:%lld:%lld.%ld", (unsigned long long)sb.st_dev,
		 (unsigned long long)sb.st_ino, (long long)sb.st_size,
		 (long long)sb.st_mtim.tv_sec, sb.st_mtim.tv_nsec);
	if (s->export.key && !strcmp(s->export.key, key) && !access(s->export.file, R_OK))
		return s->export.file;
	snprintf(file, sizeof(file), "%s/export-%u.pftrace", s->tmpdir, ++s->exports);
	if (mcp_child__run("/proc/self/exe", argv, s->timeout_ns, 1 << 20, &ch, why, sizeof(why))) {
		mcp_child__clean_err(ch.err, err, sizeof(err));
		mcp_child__free(&ch);
		unlink(file);
		mcp_call__fail(c, "gpuio convert %s to .pftrace failed (%s)%s%s", path, why,
			       err[0] ? ": " : "", err);
		return NULL;
	}
	mcp_child__free(&ch);
	if (s->export.file)
		unlink(s->export.file);
	free(s->export.key);
	free(s->export.file);
	s->export.key = strdup(key);
	s->export.file = strdup(file);
	if (!s->export.key || !s->export.file) {
		mcp_call__fail(c, "out of memory");
		return NULL;
	}
	return s->export.file;
}

/* gpuio.sql, the query as a view, then tail: the file trace_processor runs */
static int write_sql(struct mcp_call *c, const char *file, const char *q, size_t qlen,
		     const char *tail)
{
	FILE *f = fopen(file, "w");
	FILE *v = c->s->sql_views ? fopen(c->s->sql_views, "r") : NULL;
	char buf[16384];
	size_t n;
	int bad;

	if (!f) {
		if (v)
			fclose(v);
		return mcp_call__fail(c, "cannot write %s: %s", file, strerror(errno));
	}
	while (v && (n = fread(buf, 1, sizeof(buf), v)) > 0)
		fwrite(buf, 1, n, f);
	if (v)
		fclose(v);
	/* the newline first ends a -- comment the query ends with */
	fprintf(f, "\nCREATE PERFETTO VIEW " VIEW " AS\n%.*s\n;\n%s", (int)qlen, q, tail);
	bad = ferror(f);
	if (fclose(f) || bad)
		return mcp_call__fail(c, "cannot write %s", file);
	return 0;
}

/* Run trace_processor_shell -q sql trace: its stdout in ch; -1 failed (said). */
static int run_tp(struct mcp_call *c, const char *sql, const char *trace, struct mcp_child *ch)
{
	char *argv[] = { "trace_processor_shell", "-q", (char *)sql, (char *)trace, NULL };
	char why[512], err[1536];

	if (!mcp_child__run(c->s->tp, argv, c->s->timeout_ns, MAX_TP_OUT, ch, why, sizeof(why)))
		return 0;
	mcp_child__clean_err(ch->err, err, sizeof(err));
	mcp_child__free(ch);
	return mcp_call__fail(c, "the query failed (%s)%s%s", why, err[0] ? ":\n" : "", err);
}

/* The lines after the last line "HEAD" (the result set we asked for), or NULL. */
static char *result_lines(char *out, const char *head)
{
	char want[64], *found = NULL;
	size_t k = (size_t)snprintf(want, sizeof(want), "\"%s\"", head);

	for (char *l = out; l && *l;) {
		char *nl = strchr(l, '\n');
		size_t n = nl ? (size_t)(nl - l) : strlen(l);

		if (n == k && !memcmp(l, want, k))
			found = nl ? nl + 1 : l + n;
		l = nl ? nl + 1 : NULL;
	}
	return found;
}

static int unhex(char ch)
{
	return ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 :
	       ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
}

/* The view's column names from the first run: their count, or -1 failed (said). */
static int columns(struct mcp_call *c, char *out, char **cols)
{
	char *l = result_lines(out, COLS_HEAD);
	int n = 0;

	if (!l)
		return mcp_call__fail(c, "trace_processor_shell printed no column list");
	while (*l == '"' && n < MAX_COLS) {
		char *e = strchr(l + 1, '"'), *name;
		size_t h;

		if (!e || (e - l - 1) % 2)
			return mcp_call__fail(c, "a column list line that is not hex");
		h = (size_t)(e - l - 1) / 2;
		name = cols[n++] = malloc(h + 1);
		if (!name)
			return mcp_call__fail(c, "out of memory");
		for (size_t i = 0; i < h; i++) {
			int hi = unhex(l[1 + 2 * i]), lo = unhex(l[2 + 2 * i]);

			if (hi < 0 || lo < 0)
				return mcp_call__fail(c, "a column list line that is not hex");
			name[i] = (char)(hi << 4 | lo);
		}
		name[h] = 0;
		l = strchr(e, '\n');
		l = l ? l + 1 : e + 1;
	}
	if (n >= MAX_COLS && *l == '"')
		return mcp_call__fail(c, "more than %d columns", MAX_COLS);
	return n;
}

/* A column as an SQL name: "a""b" */
static void put_name(FILE *f, const char *name)
{
	fputc('"', f);
	for (; *name; name++) {
		if (*name == '"')
			fputc('"', f);
		fputc(*name, f);
	}
	fputc('"', f);
}

/* The second run's last statement: one JSON array a row, at most max + 1 rows. */
static char *rows_select(char **cols, int ncols, unsigned max)
{
	char *sel = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&sel, &len);

	if (!f)
		return NULL;
	fputs("SELECT json_array(", f);
	for (int i = 0; i < ncols; i++) {
		fputs(i ? ", CASE WHEN typeof(" : "CASE WHEN typeof(", f);
		put_name(f, cols[i]);
		fputs(") = 'blob' THEN '<blob of ' || length(", f);
		put_name(f, cols[i]);
		fputs(") || ' bytes>' ELSE ", f);
		put_name(f, cols[i]);
		fputs(" END", f);
	}
	fprintf(f, ") AS " ROW_HEAD " FROM " VIEW " LIMIT %u;\n", max + 1);
	if (fclose(f)) {
		free(sel);
		return NULL;
	}
	return sel;
}

/* The rows (one JSON array a line after ROW_HEAD) into the answer: the rows written, or -1. */
static int emit_rows(struct mcp_call *c, struct mcp_emit *e, char *out, unsigned max,
		     bool *more)
{
	char *l = result_lines(out, ROW_HEAD), err[256];
	unsigned n = 0;

	if (!l)
		return mcp_call__fail(c, "trace_processor_shell printed no rows");
	json_writer__putc(c->w, '[');
	for (; *l == '"'; n++) {
		char *nl = strchr(l, '\n');
		size_t len = nl ? (size_t)(nl - l) : strlen(l);
		struct json_doc *d;

		if (n == max) {
			*more = true;
			break;
		}
		/* "[...]": the CSV's quotes around the array, its inner quotes left as they are */
		if (len < 2 || l[len - 1] != '"' ||
		    json_doc__parse(l + 1, len - 2, &d, err, sizeof(err)))
			return mcp_call__fail(c, "row %u is not a JSON array (%s)", n + 1,
					      len < 2 ? "too short" : err);
		if (n)
			json_writer__putc(c->w, ',');
		e->d = d;
		mcp_emit__node(e, json_doc__root(d), "rows", MAX_COLS);
		json_doc__free(d);
		l = nl ? nl + 1 : l + len;
	}
	json_writer__putc(c->w, ']');
	return (int)n;
}

/* The two runs over trace; the answer's columns and rows. */
static int query(struct mcp_call *c, const char *trace, const char *q, size_t qlen, unsigned max)
{
	char sql[PATH_MAX], *cols[MAX_COLS] = { 0 }, *sel = NULL;
	struct mcp_child ch = { 0 };
	struct mcp_emit e = { .w = c->w };
	int ncols = -1, nrows = -1;
	bool first = true, more = false;

	snprintf(sql, sizeof(sql), "%s/query.sql", c->s->tmpdir);
	if (write_sql(c, sql, q, qlen, "SELECT hex(name) AS " COLS_HEAD " FROM pragma_table_info('"
		      VIEW "');\n") || run_tp(c, sql, trace, &ch))
		goto out;
	ncols = columns(c, ch.out, cols);
	mcp_child__free(&ch);
	if (ncols <= 0) {
		if (!ncols)
			mcp_call__fail(c, "the query has no columns");
		goto out;
	}
	sel = rows_select(cols, ncols, max);
	if (!sel || write_sql(c, sql, q, qlen, sel) || run_tp(c, sql, trace, &ch)) {
		mcp_call__fail(c, "out of memory");
		goto out;
	}
	mcp_emit__key(&e, &first, "columns");
	json_writer__putc(c->w, '[');
	for (int i = 0; i < ncols; i++) {
		if (i)
			json_writer__putc(c->w, ',');
		json_writer__cstr(c->w, cols[i]);
	}
	json_writer__putc(c->w, ']');
	mcp_emit__key(&e, &first, "rows");
	nrows = emit_rows(c, &e, ch.out, max, &more);
	if (nrows >= 0) {
		json_writer__printf(c->w, ",\"row_count\":%d,\"more_rows\":%s", nrows,
				    more ? "true" : "false");
		first = false;
		mcp_emit__notes(&e, &first);
	}
out:
	mcp_child__free(&ch);
	unlink(sql);
	free(sel);
	for (int i = 0; i < MAX_COLS; i++)
		free(cols[i]);
	return nrows >= 0 ? 0 : -1;
}

int mcp_tool__sql(struct mcp_call *c)
{
	const char *q, *why = NULL, *trace;
	size_t qlen;
	unsigned max;
	long stmt;
	char *path;
	int ret;

	if (mcp_arg__str(c, "query", true, &q, &qlen) < 0 ||
	    mcp_arg__uint(c, "max_rows", 100, 1, 1000, &max))
		return -1;
	if (!c->s->tp)
		return mcp_call__fail(c, "sql_query is unavailable: %s", c->s->tp_why);
	if (qlen > MAX_QUERY || memchr(q, 0, qlen))
		return mcp_call__fail(c, "the query is %s", qlen > MAX_QUERY ? "longer than 64 KiB" :
				      "holding a NUL byte");
	stmt = one_statement(q, qlen, &why);
	if (stmt < 0)
		return mcp_call__fail(c, "the query: %s", why);
	path = mcp_arg__path(c, "path");
	if (!path)
		return -1;
	trace = trace_for(c, path);
	ret = -1;
	if (trace) {
		json_writer__puts(c->w, "{\"path\":");
		json_writer__cstr(c->w, path);
		json_writer__puts(c->w, ",\"trace\":");
		json_writer__cstr(c->w, trace == path ? path : "(its .pftrace export)");
		json_writer__printf(c->w, ",\"views\":%s,", c->s->sql_views ? "true" : "false");
		ret = query(c, trace, q, (size_t)stmt, max);
		json_writer__putc(c->w, '}');
	}
	free(path);
	return ret;
}
