// SPDX-License-Identifier: MIT
/*
 * mcp_rpc.c — MCP's stdio transport: JSON-RPC 2.0 messages, one per line
 * on stdin and stdout (never a newline inside one: json_writer escapes
 * every control byte), logs on stderr only. Requests get one reply each,
 * notifications none. Whatever arrives — a line that is not JSON, a line
 * over MCP_MAX_LINE, a method we do not know, arguments of the wrong type —
 * gets an error reply (or nothing, for a notification) and the server
 * reads on; the end of stdin ends it.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include "gpuio.h"
#include "lib/log.h"
#include "lib/units.h"
#include "mcp/mcp.h"
#include "mcp/mcp_priv.h"

#define E_PARSE    (-32700)
#define E_REQUEST  (-32600)
#define E_METHOD   (-32601)
#define E_PARAMS   (-32602)
#define E_INTERNAL (-32603)

#define LATEST_VERSION "2025-11-25"

static const char *const versions[] = { "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05" };

static const char instructions[] =
	"gpuio traces what a training job did with files, disks, CPUs and GPUs; these tools "
	"read its captures (*.gpuio) in the directories this server was allowed. Start with "
	"list_captures, then report_headline for the verdict on one capture; report_loops says "
	"why the training loop waited (thread states, call sites), report_files which files "
	"cost the time, report_gpu_gaps why the GPU idled; hosts_straggler compares one job's "
	"captures from several hosts or ranks; sql_query asks anything else in PerfettoSQL. "
	"Paths must lie inside the allowed directories.";

struct rpc {
	struct mcp_server *s;
	bool broken;                    /* stdout is gone: stop */
};

volatile sig_atomic_t mcp_stop;

/* One message out: `{"jsonrpc":"2.0","id":ID,` then what fill writes, then `}\n`. */
static struct json_writer *begin(struct rpc *r, const struct json_doc *d,
				 const struct json_node *id)
{
	struct json_writer *w;
	const char *t;
	size_t n;

	if (r->broken || json_writer__new(STDOUT_FILENO, false, false, &w)) {
		r->broken = true;
		return NULL;
	}
	json_writer__puts(w, "{\"jsonrpc\":\"2.0\",\"id\":");
	if (!id)
		json_writer__puts(w, "null");
	else if (id->type == JSON_STRING)
		json_writer__str(w, id->s, id->n);
	else {
		t = json_node__text(d, id, &n);
		json_writer__raw(w, t, n);
	}
	json_writer__putc(w, ',');
	return w;
}

static void end(struct rpc *r, struct json_writer *w)
{
	json_writer__puts(w, "}\n");
	if (json_writer__close(w)) {
		pr_err("mcp: cannot write to stdout: the client is gone");
		r->broken = true;
	}
}

static void reply_error(struct rpc *r, const struct json_doc *d, const struct json_node *id,
			int code, const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void reply_error(struct rpc *r, const struct json_doc *d, const struct json_node *id,
			int code, const char *fmt, ...)
{
	struct json_writer *w = begin(r, d, id);
	char msg[1024];
	va_list ap;

	if (!w)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	json_writer__printf(w, "\"error\":{\"code\":%d,\"message\":", code);
	json_writer__cstr(w, msg);
	json_writer__putc(w, '}');
	end(r, w);
}

/* ---- the methods ---- */

static void initialize(struct rpc *r, const struct json_doc *d, const struct json_node *id,
		       const struct json_node *params)
{
	const struct json_node *v = params ? json_get(d, params, "protocolVersion") : NULL;
	const char *version = LATEST_VERSION;
	struct json_writer *w;

	for (size_t i = 0; v && v->type == JSON_STRING && i < ARRAY_SIZE(versions); i++)
		if (!strcmp(v->s, versions[i]) && strlen(versions[i]) == v->n)
			version = versions[i];
	w = begin(r, d, id);
	if (!w)
		return;
	json_writer__printf(w, "\"result\":{\"protocolVersion\":\"%s\",\"capabilities\":"
			    "{\"tools\":{}},\"serverInfo\":{\"name\":\"gpuio\",\"title\":"
			    "\"gpuio\",\"version\":", version);
	json_writer__cstr(w, GPUIO_VERSION);
	json_writer__puts(w, "},\"instructions\":");
	json_writer__cstr(w, instructions);
	json_writer__putc(w, '}');
	end(r, w);
}

static void tools_list(struct rpc *r, const struct json_doc *d, const struct json_node *id)
{
	struct json_writer *w = begin(r, d, id);

	if (!w)
		return;
	json_writer__puts(w, "\"result\":{\"tools\":[");
	for (size_t i = 0; i < mcp_ntools; i++) {
		const struct mcp_tool *t = &mcp_tools[i];

		json_writer__puts(w, i ? ",{\"name\":" : "{\"name\":");
		json_writer__cstr(w, t->name);
		json_writer__puts(w, ",\"title\":");
		json_writer__cstr(w, t->title);
		json_writer__puts(w, ",\"description\":");
		json_writer__cstr(w, t->description);
		json_writer__puts(w, ",\"inputSchema\":");
		json_writer__puts(w, t->schema);
		json_writer__putc(w, '}');
	}
	json_writer__puts(w, "]}");
	end(r, w);
}

/* The tool's answer text from its memfd: malloc'd, NULL with a reason in c->msg. */
static char *answer_text(struct mcp_call *c, int fd, size_t *len)
{
	off_t size = lseek(fd, 0, SEEK_END);
	char *text;

	if (size < 0 || (size_t)size > MCP_MAX_ANSWER) {
		mcp_call__fail(c, "the answer is %lld bytes, more than the %u KiB a tool may return: "
			       "ask for less (a smaller limit, steps or max_rows)", (long long)size,
			       MCP_MAX_ANSWER >> 10);
		return NULL;
	}
	text = malloc((size_t)size + 1);
	if (!text || pread(fd, text, (size_t)size, 0) != size) {
		free(text);
		mcp_call__fail(c, "cannot read the answer back: %s", strerror(errno));
		return NULL;
	}
	text[size] = 0;
	*len = (size_t)size;
	return text;
}

/* result: the text (and, when the tool succeeded, the same JSON as structuredContent) */
static void reply_result(struct rpc *r, const struct json_doc *d, const struct json_node *id,
			 const struct mcp_call *c, const char *text, size_t len)
{
	struct json_writer *w = begin(r, d, id);

	if (!w)
		return;
	json_writer__puts(w, "\"result\":{\"content\":[{\"type\":\"text\",\"text\":");
	if (text)
		json_writer__str(w, text, len);
	else
		json_writer__cstr(w, c->msg[0] ? c->msg : "the tool failed");
	json_writer__puts(w, "}]");
	if (text) {
		json_writer__puts(w, ",\"structuredContent\":");
		json_writer__raw(w, text, len);
	}
	json_writer__printf(w, ",\"isError\":%s}", text ? "false" : "true");
	end(r, w);
}

/* Run the tool into a memfd; its answer checked to be one JSON object before it is sent. */
static void run_tool(struct rpc *r, const struct json_doc *d, const struct json_node *id,
		     const struct mcp_tool *t, const struct json_node *args)
{
	struct mcp_call c = { .s = r->s, .d = d, .args = args };
	int fd = memfd_create("gpuio-mcp-answer", MFD_CLOEXEC), rc = -1, werr;
	struct json_doc *check = NULL;
	char *text = NULL, err[256];
	size_t len = 0;

	if (fd < 0 || json_writer__new(fd, false, false, &c.w)) {
		reply_error(r, d, id, E_INTERNAL, "no memory for the answer");
		if (fd >= 0)
			close(fd);
		return;
	}
	pr_debug("mcp: tools/call %s", t->name);
	rc = t->fn(&c);
	werr = json_writer__close(c.w);
	if (!rc && !c.failed && werr)
		mcp_call__fail(&c, "cannot write the answer: %s", strerror(-werr));
	if (!rc && !c.failed)
		text = answer_text(&c, fd, &len);
	close(fd);
	if (text && (json_doc__parse(text, len, &check, err, sizeof(err)) ||
		     json_doc__root(check)->type != JSON_OBJECT)) {
		reply_error(r, d, id, E_INTERNAL, "%s made an answer that is not a JSON object: %s",
			    t->name, check ? "not an object" : err);
	} else {
		reply_result(r, d, id, &c, text, len);
	}
	json_doc__free(check);
	free(text);
}

static void tools_call(struct rpc *r, const struct json_doc *d, const struct json_node *id,
		       const struct json_node *params)
{
	const struct json_node *name = params ? json_get(d, params, "name") : NULL;
	const struct json_node *args = params ? json_get(d, params, "arguments") : NULL;

	if (!name || name->type != JSON_STRING) {
		reply_error(r, d, id, E_PARAMS, "tools/call needs params.name, a tool's name "
			    "(tools/list)");
		return;
	}
	if (args && args->type == JSON_NULL)
		args = NULL;
	if (args && args->type != JSON_OBJECT) {
		reply_error(r, d, id, E_PARAMS, "tools/call: params.arguments must be an object");
		return;
	}
	for (size_t i = 0; i < mcp_ntools; i++)
		if (strlen(mcp_tools[i].name) == name->n && !strcmp(mcp_tools[i].name, name->s)) {
			run_tool(r, d, id, &mcp_tools[i], args);
			return;
		}
	reply_error(r, d, id, E_PARAMS, "unknown tool '%.100s' (tools/list names them)", name->s);
}

/* A notification: nothing is ever sent back, whatever it says. */
static void notification(struct rpc *r, const struct json_node *method)
{
	if (method && method->type == JSON_STRING)
		pr_debug("mcp: notification %.100s", method->s);
}

/* The parts of a request that JSON-RPC and MCP require, else an error reply (not to
 * a notification): true when it may be dispatched. */
static bool valid(struct rpc *r, const struct json_doc *d, const struct json_node *root,
		  const struct json_node **id, const struct json_node **method,
		  const struct json_node **params)
{
	const struct json_node *ver = json_get(d, root, "jsonrpc");

	*id = json_get(d, root, "id");
	*method = json_get(d, root, "method");
	*params = json_get(d, root, "params");
	if (*id && (*id)->type != JSON_STRING && (*id)->type != JSON_NUMBER) {
		reply_error(r, d, NULL, E_REQUEST, "Invalid Request: id must be a string or a number");
		return false;
	}
	if (!*method && *id && (json_get(d, root, "result") || json_get(d, root, "error")))
		return false;   /* a reply to a request: we send none, nothing to match */
	if (!*method || (*method)->type != JSON_STRING || !ver || ver->type != JSON_STRING ||
	    strcmp(ver->s, "2.0")) {
		if (*id || !*method)
			reply_error(r, d, *id, E_REQUEST, "Invalid Request: a JSON-RPC 2.0 request "
				    "needs \"jsonrpc\":\"2.0\" and a method name");
		return false;
	}
	if (!*id) {
		notification(r, *method);
		return false;
	}
	if (*params && (*params)->type != JSON_OBJECT) {
		reply_error(r, d, *id, E_PARAMS, "Invalid params: params must be an object");
		return false;
	}
	return true;
}

static void dispatch(struct rpc *r, const struct json_doc *d, const struct json_node *id,
		     const char *m, const struct json_node *params)
{
	struct json_writer *w;

	if (!strcmp(m, "initialize")) {
		initialize(r, d, id, params);
	} else if (!strcmp(m, "ping")) {
		w = begin(r, d, id);
		if (w) {
			json_writer__puts(w, "\"result\":{}");
			end(r, w);
		}
	} else if (!strcmp(m, "tools/list")) {
		tools_list(r, d, id);
	} else if (!strcmp(m, "tools/call")) {
		tools_call(r, d, id, params);
	} else {
		reply_error(r, d, id, E_METHOD, "Method not found: %.100s", m);
	}
}

/* One line from the client. */
static void handle(struct rpc *r, const char *line, size_t len)
{
	const struct json_node *root, *id, *method, *params;
	struct json_doc *d;
	char err[256];
	int rc = json_doc__parse(line, len, &d, err, sizeof(err));

	if (rc) {
		reply_error(r, NULL, NULL, rc == -ENOMEM ? E_INTERNAL : E_PARSE, "%s: %s",
			    rc == -ENOMEM ? "Internal error" : "Parse error",
			    rc == -ENOMEM ? "out of memory" : err);
		return;
	}
	root = json_doc__root(d);
	if (root->type == JSON_ARRAY)
		reply_error(r, d, NULL, E_REQUEST, "Invalid Request: batches are not supported "
			    "(MCP has none since 2025-06-18): one message per line");
	else if (root->type != JSON_OBJECT)
		reply_error(r, d, NULL, E_REQUEST, "Invalid Request: a message is a JSON object");
	else if (valid(r, d, root, &id, &method, &params))
		dispatch(r, d, id, method->s, params);
	json_doc__free(d);
}

/* ---- the line loop ---- */

static bool blank_line(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return false;
	return true;
}

static void one_line(struct rpc *r, const char *s, size_t n)
{
	if (n > MCP_MAX_LINE) {
		reply_error(r, NULL, NULL, E_REQUEST, "Invalid Request: a message longer than %u "
			    "bytes; discarded", MCP_MAX_LINE);
		return;
	}
	if (n && s[n - 1] == '\r')
		n--;
	if (!blank_line(s, n))
		handle(r, s, n);
}

/* Read stdin line by line until its end (0), a read error or stdout gone (-1). */
static int loop(struct rpc *r)
{
	size_t cap = MCP_MAX_LINE + 64 * KiB, len = 0, from = 0;
	char *buf = malloc(cap);
	bool discarding = false;
	int ret = 0;

	if (!buf)
		return -1;
	while (!r->broken && !mcp_stop) {
		ssize_t n = read(STDIN_FILENO, buf + len, cap - len);
		size_t start = 0;
		char *nl;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			pr_err("mcp: reading stdin: %s", strerror(errno));
			ret = -1;
			break;
		}
		if (n == 0) {
			if (len && !discarding)
				one_line(r, buf, len);  /* a last line without its newline */
			break;
		}
		len += (size_t)n;
		while ((nl = memchr(buf + from, '\n', len - from))) {
			if (!discarding)
				one_line(r, buf + start, (size_t)(nl - buf) - start);
			discarding = false;
			start = from = (size_t)(nl - buf) + 1;
		}
		memmove(buf, buf + start, len - start);
		len -= start;
		from = len;
		if (!discarding && len > MCP_MAX_LINE) {
			one_line(r, buf, len);          /* says it is too long */
			discarding = true;
		}
		if (discarding)
			len = from = 0;
	}
	free(buf);
	return r->broken ? -1 : ret;
}

static void on_signal(int sig)
{
	mcp_stop = sig;
}

/* The server's state: allowed directories, a private temporary directory, the SQL tool. */
static int setup(struct mcp_server *s, const struct mcp_opts *o)
{
	const char *tmp = getenv("TMPDIR");
	char err[PATH_MAX + 128];

	if (mcp_paths__init(&s->paths, o->allow, o->nallow, err, sizeof(err))) {
		pr_err("mcp: %s", err);
		return GPUIO_EXIT_USAGE;
	}
	if (o->trace_processor && access(o->trace_processor, X_OK)) {
		pr_err("mcp: --trace-processor %s: %s", o->trace_processor, strerror(errno));
		return GPUIO_EXIT_USAGE;
	}
	if (asprintf(&s->tmpdir, "%s/gpuio-mcp.XXXXXX", tmp && *tmp ? tmp : "/tmp") < 0 ||
	    !mkdtemp(s->tmpdir)) {
		pr_err("mcp: cannot make a temporary directory: %s", strerror(errno));
		return GPUIO_EXIT_ERROR;
	}
	s->timeout_ns = o->timeout_ns;
	mcp_sql__locate(s, o->trace_processor);
	return GPUIO_EXIT_OK;
}

static void teardown(struct mcp_server *s)
{
	if (s->export.file)
		unlink(s->export.file);
	if (s->tmpdir && rmdir(s->tmpdir))
		pr_warn("mcp: could not remove %s: %s", s->tmpdir, strerror(errno));
	free(s->tmpdir);
	free(s->export.key);
	free(s->export.file);
	free(s->report.key);
	free(s->report.text);
	free(s->tp);
	free(s->sql_views);
	mcp_paths__free(&s->paths);
}

int mcp_serve(const struct mcp_opts *o)
{
	struct mcp_server s = { 0 };
	struct rpc r = { .s = &s };
	struct sigaction sa = { .sa_handler = on_signal };    /* no SA_RESTART: read returns */
	int ret = setup(&s, o);

	if (ret) {
		teardown(&s);
		return ret;
	}
	signal(SIGPIPE, SIG_IGN);       /* a gone client is a write error, said once */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	pr_info("mcp: serving MCP on stdin/stdout; %zu allowed director%s, first %s; sql_query: %s",
		s.paths.n, s.paths.n == 1 ? "y" : "ies", s.paths.dirs[0],
		s.tp ? s.tp : "unavailable (no trace_processor_shell)");
	ret = loop(&r) ? GPUIO_EXIT_ERROR : GPUIO_EXIT_OK;
	teardown(&s);
	return ret;
}
