// SPDX-License-Identifier: MIT
/*
 * cmd_report.c — `gpuio report CAPTURE|DIR... [--json | --html FILE]`: the
 * answers first (where the time went, why the GPU idled, what to change),
 * with timestamps that lead to the right spot in the exported timeline.
 *
 * A directory stands for the captures (*.gpuio) directly in it, reported one
 * after the other (text), as a JSON array (--json); --html takes one capture.
 *
 * Long on purpose: cmd_report() (~120 lines) is one getopt switch and the
 * loop over captures; split, the options would be read in two places.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cmd/commands.h"
#include "lib/parse.h"
#include "lib/log.h"
#include "report/report_model.h"

static void usage(FILE *f)
{
	fprintf(f,
"usage: gpuio report CAPTURE|DIR... [--json | --html FILE] [--files N|all] [--top N]\n\n"
"Summarise a capture: page-cache hit ratio, top files with latency and access\n"
"pattern, device latency histograms, per-thread I/O time, GPU idle time explained\n"
"by what the host threads were doing and by the launching thread's state, why\n"
"the training loop waited (thread states: waiting for data, on CPU, runnable, in\n"
"file calls or CUDA syncs; its steps from NVTX ranges or its waits), checkpoints,\n"
"files by role (data, code, checkpoint, other), and recommendations with the\n"
"numbers behind them.\n"
"Timestamps are µs after the capture's monotonic anchor (the ts of the\n"
"JSON/Perfetto exports) and UTC.\n\n"
"options:\n"
"  -j, --json        the same content as JSON on stdout (an array for several captures)\n"
"      --html FILE   a self-contained HTML page with charts (no network needed)\n"
"      --files N|all files per ranking (time, bytes, ops); default 10\n"
"      --top N       same as --files N; also limits the thread table\n"
"  -h, --help        this text\n\n"
"A DIR stands for the *.gpuio captures in it, reported one after the other.\n");
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Expand a directory into its captures (sorted); a file is itself. */
static int expand(const char *arg, char ***list, size_t *n, size_t *cap)
{
	struct stat sb;
	struct dirent *de;
	size_t first = *n;
	DIR *d;

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

static int parse_count(const char *s, unsigned *out)
{
	unsigned long v;

	if (!strcmp(s, "all")) {
		*out = 0;
		return 0;
	}
	if (parse_ulong(s, 1, 1000000, &v))
		return -EINVAL;
	*out = (unsigned)v;
	return 0;
}

int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "html", required_argument, NULL, 'H' },
		{ "files", required_argument, NULL, 'f' },
		{ "top", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct rpt_opts opt = { .top = 10 };
	struct rpt_model **models = NULL;
	const char *html = NULL;
	char **caps = NULL;
	size_t ncaps = 0, ccaps = 0;
	int nmodels = 0, c, ret = GPUIO_EXIT_OK;
	bool json = false;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "jh", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'H':
			html = optarg;
			break;
		case 'f':
		case 't':
			if (parse_count(optarg, &opt.top)) {
				pr_err("report: --%s wants a positive number or 'all', not '%s'",
				       c == 'f' ? "files" : "top", optarg);
				return GPUIO_EXIT_USAGE;
			}
			break;
		case 'h':
			usage(stdout);
			return GPUIO_EXIT_OK;
		default:
			pr_err("report: unknown option '%s' (try `gpuio report --help`)",
			       argv[optind - 1]);
			return GPUIO_EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		pr_err("report: which capture? (usage: gpuio report CAPTURE [--json | --html FILE])");
		return GPUIO_EXIT_USAGE;
	}
	if (json && html) {
		pr_err("report: --json and --html are exclusive");
		return GPUIO_EXIT_USAGE;
	}
	for (int i = optind; i < argc; i++)
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
	for (size_t i = 0; i < ncaps; i++) {
		struct rpt_model *m = calloc(1, sizeof(*m));
		int rc;

		if (!m) {
			ret = GPUIO_EXIT_ERROR;
			goto cleanup;
		}
		rc = rpt_model__load(m, caps[i], &opt);
		if (rc) {
			/* one bad capture does not hide the others' reports */
			pr_err("report: %s", m->err[0] ? m->err : strerror(-rc));
			rpt_model__free(m);
			free(m);
			ret = GPUIO_EXIT_ERROR;
			continue;
		}
		models[nmodels++] = m;
	}
	if (!nmodels)
		goto cleanup;
	if (json) {
		if (rpt_json__write(models, nmodels, &opt)) {
			pr_err("report: cannot write to stdout");
			ret = GPUIO_EXIT_ERROR;
		}
	} else if (html) {
		int rc = rpt_html__write(models[0], &opt, html);

		if (rc) {
			pr_err("report: cannot write %s: %s", html, strerror(-rc));
			ret = GPUIO_EXIT_ERROR;
		}
	} else {
		for (int i = 0; i < nmodels; i++) {
			if (i)
				printf("\n\n");
			if (rpt_text__print(models[i], &opt))
				ret = GPUIO_EXIT_ERROR;
		}
	}
cleanup:
	for (int i = 0; i < nmodels; i++) {
		rpt_model__free(models[i]);
		free(models[i]);
	}
	free(models);
	for (size_t i = 0; i < ncaps; i++)
		free(caps[i]);
	free(caps);
	return ret;
}
