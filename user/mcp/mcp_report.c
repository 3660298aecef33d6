// SPDX-License-Identifier: MIT
/*
 * mcp_report.c — the tools that answer from `gpuio report --json`: this
 * same binary runs the report in a child (a time limit, a bounded output,
 * and a report that crashes on a bad capture cannot take the server with
 * it), its JSON is parsed and the parts a tool answers with are written
 * again, bounded. The last report's text is kept: an agent asks several
 * tools about one capture in a row.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "lib/log.h"
#include "lib/units.h"
#include "mcp/mcp_priv.h"

#define SELF "/proc/self/exe"   /* this binary, even if the file was replaced since */
#define MAX_ARGS 80
#define MAX_CAPS 64             /* hosts_straggler's captures */

/* What identifies a report's input: the arguments and each capture's inode, size, mtime. */
static char *cache_key(char *const *argv)
{
	char *key = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&key, &len);
	struct stat sb;

	if (!f)
		return NULL;
	for (; *argv; argv++) {
		fprintf(f, "%zu:%s;", strlen(*argv), *argv);     /* no NUL: keys are C strings */
		if (**argv == '/' && !stat(*argv, &sb))
			fprintf(f, "%llu:%llu:%lld:%lld.%ld;", (unsigned long long)sb.st_dev,
				(unsigned long long)sb.st_ino, (long long)sb.st_size,
				(long long)sb.st_mtim.tv_sec, sb.st_mtim.tv_nsec);
	}
	if (fclose(f)) {
		free(key);
		return NULL;
	}
	return key;
}

/* The report's JSON text for argv (cached): 0, or -1 failed (said in c). */
static int report_text(struct mcp_call *c, char *const *argv, const char **text, size_t *len)
{
	struct mcp_server *s = c->s;
	struct mcp_child ch;
	char why[512], err[1536];
	char *key = cache_key(argv);

	if (key && s->report.key && !strcmp(key, s->report.key)) {
		free(key);
		*text = s->report.text;
		*len = s->report.len;
		return 0;
	}
	pr_debug("mcp: running gpuio %s %s ...", argv[1], argv[2]);
	if (mcp_child__run(SELF, argv, s->timeout_ns, MCP_MAX_REPORT, &ch, why, sizeof(why))) {
		mcp_child__clean_err(ch.err, err, sizeof(err));
		mcp_child__free(&ch);
		free(key);
		return mcp_call__fail(c, "gpuio report failed (%s)%s%s", why, err[0] ? ": " : "",
				      err);
	}
	free(s->report.key);
	free(s->report.text);
	s->report.key = key;
	s->report.text = ch.out;
	s->report.len = ch.len;
	*text = ch.out;
	*len = ch.len;
	return 0;
}

/*
 * `gpuio report --json [opt...] capture...` parsed; its root must be of
 * type root_type. 0, or -1 failed (said in c). Free *doc.
 */
static int report_doc(struct mcp_call *c, char *const *opt, char *const *caps, size_t ncaps,
		      int root_type, struct json_doc **doc)
{
	char *argv[MAX_ARGS + 8];
	const char *text = NULL;
	size_t n = 0, len = 0;
	char err[256];

	argv[n++] = "gpuio";
	argv[n++] = "report";
	argv[n++] = "--json";
	for (; opt && *opt; opt++)
		argv[n++] = *opt;
	argv[n++] = "--";
	for (size_t i = 0; i < ncaps && i < MAX_ARGS; i++)
		argv[n++] = caps[i];
	argv[n] = NULL;
	if (report_text(c, argv, &text, &len))
		return -1;
	if (json_doc__parse(text, len, doc, err, sizeof(err)))
		return mcp_call__fail(c, "gpuio report's JSON does not parse: %s", err);
	if (json_doc__root(*doc)->type != root_type) {
		json_doc__free(*doc);
		*doc = NULL;
		return mcp_call__fail(c, "gpuio report's JSON is not the expected %s",
				      root_type == JSON_OBJECT ? "object" : "array");
	}
	return 0;
}

/* The one capture a tool is about: its real path, a file (malloc'd); NULL failed. */
static char *one_capture(struct mcp_call *c)
{
	char *path = mcp_arg__path(c, "path");
	struct stat sb;

	if (!path)
		return NULL;
	if (stat(path, &sb)) {
		mcp_call__fail(c, "%s: %s", path, strerror(errno));
	} else if (!S_ISREG(sb.st_mode)) {
		mcp_call__fail(c, "%s is not a capture file%s", path, S_ISDIR(sb.st_mode) ?
			       " but a directory (list_captures lists what it holds)" : "");
	} else {
		return path;
	}
	free(path);
	return NULL;
}

/* The answer: picks of the report of one capture (opt: report options), bounded. */
static int answer_one(struct mcp_call *c, char *const *opt, const char *under,
		      const struct mcp_pick *picks, void (*extra)(struct mcp_emit *, bool *))
{
	char *path = one_capture(c);
	struct json_doc *doc = NULL;
	const struct json_node *root, *o;
	struct mcp_emit e = { .w = c->w };
	bool first = true;

	if (!path || report_doc(c, opt, &path, 1, JSON_OBJECT, &doc)) {
		free(path);
		return -1;
	}
	root = json_doc__root(doc);
	o = under ? mcp_emit__at(doc, root, under) : root;
	e.d = doc;
	json_writer__putc(c->w, '{');
	mcp_emit__key(&e, &first, "capture");
	json_writer__cstr(c->w, path);
	if (o && o->type == JSON_OBJECT)
		mcp_emit__picks(&e, o, picks, &first);
	if (extra)
		extra(&e, &first);
	mcp_emit__notes(&e, &first);
	json_writer__putc(c->w, '}');
	json_doc__free(doc);
	free(path);
	return 0;
}

/* ---- report_headline ---- */

static const struct mcp_pick reco_picks[] = {
	PICK("kind"), PICK("text"), PICK("evidence"), PICK_END(),
};
static const struct mcp_pick headline_picks[] = {
	PICK("hostname"), PICK("target"),
	PICK_AS("summary.start_utc", "start_utc"), PICK_AS("summary.duration_us", "duration_us"),
	PICK_AS("summary.complete", "complete"), PICK_AS("summary.lossy", "lossy"),
	PICK_AS("summary.dropped", "dropped"),
	PICK_MAX("headlines", 50), PICK_MAX("warnings", 50),
	PICK_COUNT("loops", "loops_found"), PICK_AS("wait.headline", "loop_headline"),
	PICK_MAX("stragglers", 20), PICK_EACH("recommendations", 20, reco_picks),
	PICK_AS("gpu.present", "gpu_present"), PICK_COUNT("checkpoints", "checkpoints"),
	PICK("files_total"),
	PICK_END(),
};

int mcp_tool__headline(struct mcp_call *c)
{
	return answer_one(c, NULL, NULL, headline_picks, NULL);
}

/* ---- report_loops ---- */

static const struct mcp_pick loop_picks[] = {
	PICK("pid"), PICK("tid"), PICK("thread"), PICK("process"), PICK("headline"), PICK("found_by"),
	PICK("start_us"), PICK("span_us"), PICK("waiting_for_data_us"), PICK("waiting_for_data_pct"),
	PICK("waiting_for_data_from"), PICK("next"), PICK("loop_us"), PICK("data_then_runnable_us"),
	PICK("own_data_reads_us"), PICK_MAX("blocked_in", 10), PICK_MAX("wakers", 10),
	PICK("wakers_meanwhile_us"), PICK("data_files"), PICK("data_files_read"),
	PICK("data_read_bytes"), PICK("data_hit_ratio"), PICK_MAX("files", 10),
	PICK("fetch_sites_bytes_pct"), PICK_MAX("fetch_sites", 10), PICK_MAX("cpu_by_function", 10),
	PICK("steps_from"), PICK("step_range"), PICK_COUNT("steps", "steps_total"),
	PICK_MAX("steps", 20), PICK_MAX("peers", 10), PICK_EACH("recommendations", 10, reco_picks),
	PICK("sched_gaps"),
	PICK_END(),
};

int mcp_tool__loops(struct mcp_call *c)
{
	struct mcp_pick each[ARRAY_SIZE(loop_picks)];
	size_t n = ARRAY_SIZE(loop_picks);
	unsigned steps;

	memcpy(each, loop_picks, sizeof(each));
	if (mcp_arg__uint(c, "steps", 20, 0, 500, &steps))
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(each[i].path ? each[i].path : "", "steps") || each[i].count)
			continue;
		if (steps) {
			each[i].max = steps;
		} else {
			/* none shown (max 0 would be the default): the pick goes */
			memmove(&each[i], &each[i + 1], (n - i - 1) * sizeof(*each));
		}
		break;
	}
	const struct mcp_pick picks[] = {
		PICK_COUNT("loops", "loops_found"), PICK_EACH("loops", 16, each),
		PICK_MAX("stragglers", 20), PICK_END(),
	};
	return answer_one(c, NULL, NULL, picks, NULL);
}

/* ---- report_files ---- */

static const struct mcp_pick file_picks[] = {
	PICK("path"), PICK("role"), PICK("read_bytes"), PICK("write_bytes"), PICK("read_ops"),
	PICK("write_ops"), PICK("opens"), PICK("syncs"), PICK("other_ops"), PICK("failed_ops"),
	PICK("read_time_us"), PICK("write_time_us"), PICK("other_time_us"), PICK("latency_us"),
	PICK("page_cache"), PICK("page_faults"), PICK("pattern"), PICK_MAX("request_sizes", 8),
	PICK("block"), PICK("direct_read_bytes"), PICK("gpu_idle_read_us"), PICK("gpu_idle_miss_pages"),
	PICK_MAX("pids", 8), PICK_MAX("call_sites", 3),
	PICK_END(),
};

int mcp_tool__files(struct mcp_call *c)
{
	char num[16], *opt[] = { "--files", num, NULL };
	unsigned limit;

	if (mcp_arg__uint(c, "limit", 10, 1, 200, &limit))
		return -1;
	snprintf(num, sizeof(num), "%u", limit);
	/* the union of three rankings of `limit` files each */
	const struct mcp_pick picks[] = {
		PICK("files_total"), PICK_COUNT("files", "files_listed"),
		PICK("roles"), PICK("small_files"), PICK_EACH("files", 3 * limit, file_picks), PICK_END(),
	};
	return answer_one(c, opt, NULL, picks, NULL);
}

/* ---- report_gpu_gaps ---- */

static const struct mcp_pick device_picks[] = {
	PICK("pid"), PICK("device"), PICK("first_ts_us"), PICK("first_utc"), PICK("span_us"),
	PICK("busy_us"), PICK("busy_fraction"), PICK("kernels"), PICK("copies"), PICK("memsets"),
	PICK("gaps"), PICK("idle_us"), PICK("idle_by_cause_us"), PICK("launcher"),
	PICK_END(),
};

/* no GPU records: say so, the gap list stays empty */
static void gpu_note(struct mcp_emit *e, bool *first)
{
	const struct json_node *p = mcp_emit__at(e->d, json_doc__root(e->d), "gpu.present");

	if (p && p->type == JSON_BOOL && p->b)
		return;
	mcp_emit__key(e, first, "note");
	json_writer__cstr(e->w, "this capture holds no GPU records (no CUDA work was traced: "
			  "gpuio trace sees a CUDA program's GPU through its uprobes and CUPTI "
			  "collector, docs/gpu.md): there are no GPU idle gaps to show");
}

int mcp_tool__gpu_gaps(struct mcp_call *c)
{
	unsigned limit;

	if (mcp_arg__uint(c, "limit", 20, 1, 200, &limit))
		return -1;
	const struct mcp_pick picks[] = {
		PICK("present"), PICK("busy_us"), PICK("idle_us"), PICK("span_us"), PICK("idle_by_cause_us"),
		PICK("idle_by_launcher_state_us"), PICK("reads_in_flight_during_read_idle"),
		PICK("approximate"), PICK("collector_records"), PICK("cupti_dropped"),
		PICK_EACH("devices", 32, device_picks),
		PICK_COUNT("largest_gaps", "largest_gaps_total"), PICK_MAX("largest_gaps", limit),
		PICK_MAX("idle_reads", limit), PICK_END(),
	};
	return answer_one(c, NULL, "gpu", picks, gpu_note);
}

/* ---- hosts_straggler ---- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * dir's captures (*.gpuio directly in it, sorted by name as `gpuio report DIR`
 * takes them), each resolved and checked: a symlink in it that points out is
 * refused, not read. -1 failed.
 */
static int dir_captures(struct mcp_call *c, const char *dir, char **caps, size_t *n)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char err[1536];
	int ret = 0;

	if (!d)
		return mcp_call__fail(c, "%s: %s", dir, strerror(errno));
	while (!ret && (de = readdir(d))) {
		size_t l = strlen(de->d_name);
		char path[PATH_MAX];

		if (l < 7 || strcmp(de->d_name + l - 6, ".gpuio") || de->d_name[0] == '.')
			continue;
		if (*n == MAX_CAPS) {
			ret = mcp_call__fail(c, "%s holds more than %d captures: give paths", dir,
					     MAX_CAPS);
			break;
		}
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		caps[*n] = mcp_paths__resolve(&c->s->paths, path, strlen(path), err, sizeof(err));
		if (!caps[*n])
			ret = mcp_call__fail(c, "%s", err);
		else
			(*n)++;
	}
	closedir(d);
	if (!ret && !*n)
		ret = mcp_call__fail(c, "%s holds no captures (*.gpuio)", dir);
	if (!ret)
		qsort(caps, *n, sizeof(*caps), cmp_str);
	return ret;
}

/* the captures: paths[] or dir's, each resolved (malloc'd); -1 failed */
static int host_paths(struct mcp_call *c, char **caps, size_t *n)
{
	const struct json_node *a = c->args ? json_get(c->d, c->args, "paths") : NULL;
	const struct json_node *d = c->args ? json_get(c->d, c->args, "dir") : NULL;
	char err[1536], *dir;
	struct stat sb;
	int ret;

	if (!!a == !!d)
		return mcp_call__fail(c, "give either \"paths\" (an array of captures) or \"dir\"");
	if (d) {
		dir = mcp_arg__path(c, "dir");
		if (!dir)
			return -1;
		if (stat(dir, &sb) || !S_ISDIR(sb.st_mode))
			ret = mcp_call__fail(c, "\"dir\": %s is not a directory", dir);
		else
			ret = dir_captures(c, dir, caps, n);
		free(dir);
		return ret;
	}
	if (a->type != JSON_ARRAY || !a->n || a->n > MAX_CAPS)
		return mcp_call__fail(c, "\"paths\" must be an array of 1 to %d capture paths",
				      MAX_CAPS);
	for (const struct json_node *m = json_first(c->d, a); m; m = json_next(c->d, m)) {
		if (m->type != JSON_STRING)
			return mcp_call__fail(c, "\"paths\" must hold strings");
		caps[*n] = mcp_paths__resolve(&c->s->paths, m->s, m->n, err, sizeof(err));
		if (!caps[*n])
			return mcp_call__fail(c, "%s", err);
		(*n)++;
		if (stat(caps[*n - 1], &sb) || !S_ISREG(sb.st_mode))
			return mcp_call__fail(c, "%s is not a capture file", caps[*n - 1]);
	}
	return 0;
}

static const struct mcp_pick host_report_picks[] = {
	PICK("capture"), PICK("hostname"), PICK_MAX("headlines", 20),
	PICK_AS("wait.headline", "loop_headline"),
	PICK_END(),
};
static const struct mcp_pick hosts_picks[] = {
	PICK_AS("across_hosts.straggler", "straggler"), PICK_MAX("across_hosts.hosts", 64),
	PICK_EACH("reports", 64, host_report_picks),
	PICK_END(),
};

int mcp_tool__hosts(struct mcp_call *c)
{
	char *caps[MAX_CAPS] = { 0 }, *opt[] = { "--hosts", NULL };
	struct json_doc *doc = NULL;
	struct mcp_emit e = { .w = c->w };
	const struct json_node *root, *st;
	size_t n = 0;
	bool first = true;
	int ret = -1;

	if (host_paths(c, caps, &n) || report_doc(c, opt, caps, n, JSON_OBJECT, &doc))
		goto out;
	root = json_doc__root(doc);
	e.d = doc;
	json_writer__putc(c->w, '{');
	mcp_emit__key(&e, &first, "captures");
	json_writer__putc(c->w, '[');
	for (size_t i = 0; i < n; i++) {
		if (i)
			json_writer__putc(c->w, ',');
		json_writer__cstr(c->w, caps[i]);
	}
	json_writer__putc(c->w, ']');
	mcp_emit__picks(&e, root, hosts_picks, &first);
	st = mcp_emit__at(doc, root, "across_hosts.straggler");
	if (!st || st->type != JSON_OBJECT) {
		mcp_emit__key(&e, &first, "note");
		json_writer__cstr(c->w, "no straggler: no training loop in any capture (loops are "
				  "found from thread states: was the job traced with --no-sched?)");
	}
	mcp_emit__notes(&e, &first);
	json_writer__putc(c->w, '}');
	ret = 0;
out:
	json_doc__free(doc);
	for (size_t i = 0; i < n; i++)
		free(caps[i]);
	return ret;
}
