// SPDX-License-Identifier: MIT
/*
 * cmd_report.c — `gpuio report CAPTURE|DIR... [--json | --html FILE]`: the
 * answers first (where the time went, why the GPU idled, what to change),
 * with timestamps that lead to the right spot in the exported timeline.
 *
 * A directory stands for the captures (*.gpuio) directly in it, reported one
 * after the other (text), as a JSON array (--json); --html takes one capture.
 *
 * Options: one table (lib/opts.h).
 */
#include <dirent.h>
#include <glob.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cmd/commands.h"
#include "lib/opts.h"
#include "lib/parse.h"
#include "lib/log.h"
#include "lib/kmap.h"
#include "report/report.h"

static struct rpt_opts ropt;
static const char *html_out;
static bool json_out;
static bool hosts_out;

/* --files / --top: a count, or "all" */
static int on_count(const struct opt *opt, const char *arg, void *ctx)
{
	unsigned long v;

	if (!strcmp(arg, "all")) {
		ropt.top = 0;
		return 0;
	}
	if (parse_ulong(arg, 1, 1000000, &v)) {
		pr_err("report: --%s wants a positive number or 'all', not '%s'", opt->long_name, arg);
		return -1;
	}
	ropt.top = (unsigned)v;
	return 0;
}

static const struct opt report_opts[] = {
	OPT_GROUP("options:"),
	OPT_BOOL('j', "json", &json_out,
		 "the same content as JSON on stdout (an array for several captures)"),
	OPT_STRING(0, "html", &html_out, "FILE",
		   "a self-contained HTML page with charts (no network needed)"),
	OPT_BOOL(0, "hosts", &hosts_out,
		 "the captures are one job's hosts (or its ranks, traced apart):\n"
		 "first which loop waited the largest share of its run (the\n"
		 "straggler), its cause, and what the other hosts' loops did\n"
		 "during its waits; then each capture's report"),
	OPT_CALL(0, "files", "N|all", "files per ranking (time, bytes, ops); default 10", on_count),
	OPT_CALL(0, "top", "N", "same as --files N; also limits the thread table", on_count),
	OPT_END(),
};

static const struct opt_cmd report_page = {
	.name = "report",
	.usage = "usage: gpuio report CAPTURE|DIR... [--json | --html FILE] [--files N|all] [--top N]",
	.about =
"Summarise a capture: page-cache hit ratio, top files with latency and access\n"
"pattern, device latency histograms, per-thread I/O time, GPU idle time explained\n"
"by what the host threads were doing and by the launching thread's state, why\n"
"the training loop waited (thread states: waiting for data, on CPU, runnable, in\n"
"file calls or CUDA syncs; its steps from NVTX ranges or its waits), checkpoints,\n"
"files by role (data, code, checkpoint, other), and recommendations with the\n"
"numbers behind them.\n"
"Timestamps are µs after the capture's monotonic anchor (the ts of the\n"
"JSON/Perfetto exports) and UTC.\n",
	.opts = report_opts,
	.after = "A DIR stands for the *.gpuio captures in it, reported one after the other;\n"
"a quoted pattern for the files it matches (the monitors' dumps of one alert).\n"
"With --hosts, the --json output is an object: across_hosts, then reports[].\n\n"
"examples:\n"
"  gpuio report run.gpuio\n"
"  gpuio report --json run.gpuio | jq .loops[0].loop_us\n"
"  gpuio report --hosts node1.gpuio node2.gpuio\n"
"  gpuio report --hosts 'dumps/gpuio-dump-*-alert-GpuioJobStarvingOnData-slurm_job-42.gpuio'\n",
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A quoted pattern (the dumps of one alert on every node, in one
 * directory: "gpuio-dump-*-alert-NAME-slurm_job-42.gpuio") into its files,
 * sorted (glob's order). */
static int expand_glob(const char *arg, char ***list, size_t *n, size_t *cap)
{
	glob_t g;
	int rc = glob(arg, GLOB_ERR, NULL, &g);

	if (rc == GLOB_NOMATCH) {
		pr_err("report: %s: no such capture (and no file matches it as a pattern)", arg);
		return -ENOENT;
	}
	if (rc) {
		pr_err("report: %s: the pattern could not be expanded", arg);
		return -EIO;
	}
	for (size_t i = 0; i < g.gl_pathc; i++) {
		if (array_grow((void **)list, cap, *n + 1, sizeof(**list)) ||
		    !((*list)[*n] = strdup(g.gl_pathv[i]))) {
			globfree(&g);
			return -ENOMEM;
		}
		(*n)++;
	}
	globfree(&g);
	return 0;
}

/* Expand a directory into its captures (sorted), a pattern into its files;
 * a file is itself. */
static int expand(const char *arg, char ***list, size_t *n, size_t *cap)
{
	struct stat sb;
	struct dirent *de;
	size_t first = *n;
	DIR *d;

	if (stat(arg, &sb) && strpbrk(arg, "*?["))
		return expand_glob(arg, list, n, cap);
	if (stat(arg, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		d = opendir(arg);
		if (!d) {
			pr_err("report: %s: %s", arg, strerror(errno));
			return -errno;
		}
		while ((de = readdir(d))) {
			size_t l = strlen(de->d_name);
			char *p;

			if (l < 7 || strcmp(de->d_name + l - 6, ".gpuio"))
				continue;
			if (asprintf(&p, "%s/%s", arg, de->d_name) < 0 ||
			    array_grow((void **)list, cap, *n + 1, sizeof(**list))) {
				closedir(d);
				return -ENOMEM;
			}
			(*list)[(*n)++] = p;
		}
		closedir(d);
		if (*n == first) {
			pr_err("report: %s is a directory without captures (*.gpuio)", arg);
			return -ENOENT;
		}
		qsort(*list + first, *n - first, sizeof(**list), cmp_str);
		return 0;
	}
	if (array_grow((void **)list, cap, *n + 1, sizeof(**list)))
		return -ENOMEM;
	(*list)[*n] = strdup(arg);
	if (!(*list)[*n])
		return -ENOMEM;
	(*n)++;
	return 0;
}

/* Options that cannot go together: 0 or GPUIO_EXIT_USAGE (said). */
static int check_exclusive(const char *html, bool json)
{
	if (hosts_out && html) {
		pr_err("report: --hosts and --html are exclusive (the page is one capture's)");
		return GPUIO_EXIT_USAGE;
	}
	if (json && html) {
		pr_err("report: --json and --html are exclusive");
		return GPUIO_EXIT_USAGE;
	}
	return GPUIO_EXIT_OK;
}

/* Each capture's report model into models[] (*n of them); one bad capture
 * does not hide the others' reports: GPUIO_EXIT_ERROR, said, and on. */
static int open_models(char *const *caps, size_t ncaps, const struct rpt_opts *opt,
		       struct rpt_model **models, int *n)
{
	int ret = GPUIO_EXIT_OK;

	for (size_t i = 0; i < ncaps; i++) {
		char err[400];
		struct rpt_model *m = rpt_model__open(caps[i], opt, err, sizeof(err));

		if (!m) {
			pr_err("report: %s", err);
			ret = GPUIO_EXIT_ERROR;
			continue;
		}
		models[(*n)++] = m;
	}
	return ret;
}

/* --hosts: the comparison across the captures; *done: nothing follows it (JSON). */
static int report_hosts(struct rpt_model **models, int n, const struct rpt_opts *opt, bool json,
			bool *done)
{
	struct rpt_hosts *h = rpt_hosts__build(models, n);
	int ret = GPUIO_EXIT_OK;

	*done = true;
	if (!h) {
		pr_err("report: out of memory");
		return GPUIO_EXIT_ERROR;
	}
	if (n < 2)
		pr_warn("report: --hosts with one capture: nothing to compare it with");
	if (json ? rpt_json__write_hosts(h, opt) : rpt_text__print_hosts(h)) {
		pr_err("report: cannot write to stdout");
		ret = GPUIO_EXIT_ERROR;
	}
	rpt_hosts__free(h);
	*done = json;
	return ret;
}

/* Each capture's report: one JSON array, one HTML page, or the texts one after the other. */
static int report_each(struct rpt_model **models, int n, const struct rpt_opts *opt,
		       const char *html, bool json)
{
	int ret = GPUIO_EXIT_OK;

	if (json) {
		if (rpt_json__write(models, n, opt)) {
			pr_err("report: cannot write to stdout");
			ret = GPUIO_EXIT_ERROR;
		}
	} else if (html) {
		int rc = rpt_html__write(models[0], opt, html);

		if (rc) {
			pr_err("report: cannot write %s: %s", html, strerror(-rc));
			ret = GPUIO_EXIT_ERROR;
		}
	} else {
		for (int i = 0; i < n; i++) {
			if (i)
				printf("\n\n");
			if (rpt_text__print(models[i], opt))
				ret = GPUIO_EXIT_ERROR;
		}
	}
	return ret;
}

int cmd_report(int argc, char **argv)
{
	struct rpt_opts opt;
	struct rpt_model **models = NULL;
	const char *html;
	char **caps = NULL;
	size_t ncaps = 0, ccaps = 0;
	int nmodels = 0, first, ret = GPUIO_EXIT_OK;
	bool json, done = false;

	ropt = (struct rpt_opts){ .top = 10 };
	html_out = NULL;
	json_out = false;
	hosts_out = false;
	first = opt_parse(&report_page, argc, argv, NULL);
	if (first == OPT_HELP)
		return GPUIO_EXIT_OK;
	if (first == OPT_BAD)
		return GPUIO_EXIT_USAGE;
	opt = ropt;
	html = html_out;
	json = json_out;
	if (first >= argc) {
		pr_err("report: which capture? (usage: gpuio report CAPTURE [--json | --html FILE])");
		return GPUIO_EXIT_USAGE;
	}
	ret = check_exclusive(html, json);
	if (ret)
		return ret;
	for (int i = first; i < argc; i++)
		if (expand(argv[i], &caps, &ncaps, &ccaps)) {
			ret = GPUIO_EXIT_ERROR;
			goto cleanup;
		}
	if (html && ncaps != 1) {
		pr_err("report: --html makes one page from one capture; %zu given", ncaps);
		ret = GPUIO_EXIT_USAGE;
		goto cleanup;
	}
	models = calloc(ncaps, sizeof(*models));
	if (!models) {
		ret = GPUIO_EXIT_ERROR;
		goto cleanup;
	}
	ret = open_models(caps, ncaps, &opt, models, &nmodels);
	if (!nmodels)
		goto cleanup;
	if (hosts_out && report_hosts(models, nmodels, &opt, json, &done))
		ret = GPUIO_EXIT_ERROR;
	if (!done && report_each(models, nmodels, &opt, html, json))
		ret = GPUIO_EXIT_ERROR;
cleanup:
	for (int i = 0; i < nmodels; i++)
		rpt_model__close(models[i]);
	free(models);
	for (size_t i = 0; i < ncaps; i++)
		free(caps[i]);
	free(caps);
	return ret;
}
